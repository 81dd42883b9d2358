r"""The entry points: what users call, and the only core modules that import ``mcpkit.models``/``mpec``.

* :mod:`~mcpkit.frontends.solve`: :func:`mcpkit.solve` and :class:`mcpkit.Solver`;
* :mod:`~mcpkit.frontends.functional`: :func:`mcpkit.solve_mcp` (NumPy callables);
* :mod:`~mcpkit.frontends.pyomo_plugin`: ``SolverFactory("mcpkit")``;
* :mod:`~mcpkit.frontends.solve_file`: one problem file under a budget (CLI and sweeps);
* :mod:`~mcpkit.frontends.cli`, :mod:`~mcpkit.frontends.demo`: the ``mcpkit`` command;
  :mod:`~mcpkit.frontends.forked`: hard deadlines in a child process.

Sweeps (:mod:`mcpkit.sweep`) are a front end too; they keep their public package name.
"""
