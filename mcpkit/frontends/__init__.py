r"""The entry points users call, above the orchestration and below the contact models.

* :mod:`~mcpkit.frontends.solve`: :func:`mcpkit.solve` and :class:`mcpkit.Solver`;
* :mod:`~mcpkit.frontends.functional`: :func:`mcpkit.solve_mcp` (NumPy callables);
* :mod:`~mcpkit.frontends.pyomo_plugin`: ``SolverFactory("mcpkit")``;
* :mod:`~mcpkit.frontends.demo`: the core demos of ``mcpkit demo``;
  :mod:`~mcpkit.frontends.forked`: hard deadlines in a child process.

The contact models (:mod:`mcpkit.models`) and horizons (:mod:`mcpkit.mpec`) are built on these;
problem files (:mod:`mcpkit.sweep.solve_file`, one or many, :mod:`mcpkit.sweep`) and the ``mcpkit``
program (:mod:`mcpkit.command`) sit above them.
"""
