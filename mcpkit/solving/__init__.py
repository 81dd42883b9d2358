r"""From a declaration to a judged result: the registry, the planner, the routes and the verdict.

* :mod:`~mcpkit.solving.registry`: the one table of methods and backends (what exists; no
  decisions);
* :mod:`~mcpkit.solving.planner`: every choice: :func:`~mcpkit.solving.planner.resolve`
  (``"auto"`` method and backend, the PATH probe, fallbacks, second opinions) and the route
  object for a resolved choice, with its fallbacks; the routes :mod:`~mcpkit.solving.casadi_route`,
  :mod:`~mcpkit.solving.pyomo_route` (sharing :mod:`~mcpkit.solving.slack_route`) all return the
  :class:`~mcpkit.solving.route.RouteOutcome` that is judged on the declaration;
* :mod:`~mcpkit.solving.mpcc_solver`: :class:`~mcpkit.solving.mpcc_solver.MPCCSolver`;
* :mod:`~mcpkit.solving.options`, :mod:`~mcpkit.solving.result`, :mod:`~mcpkit.solving.residuals`:
  the options, the result vocabulary and the verdict, the residuals on the original pairs;
* :mod:`~mcpkit.solving.availability` (run-time detection of PATH and IPOPT) and
  :mod:`~mcpkit.solving.stop` (interrupts).
"""
