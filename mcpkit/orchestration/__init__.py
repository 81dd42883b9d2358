r"""From a declaration to a judged result: the planner, the routes and :class:`MPCCSolver`.

The layer above the solvers (:mod:`mcpkit.engines`, :mod:`mcpkit.homotopy`,
:mod:`mcpkit.stationarity`), which it chooses and runs; it speaks their vocabulary
(:mod:`mcpkit.solving`).

* :mod:`~mcpkit.orchestration.planner`: every choice: :func:`~mcpkit.orchestration.planner.resolve`
  (``"auto"`` method and backend, the PATH probe, fallbacks, second opinions) and the route
  object for a resolved choice, with its fallbacks;
* the routes :mod:`~mcpkit.orchestration.casadi_route` and :mod:`~mcpkit.orchestration.pyomo_route`
  (sharing :mod:`~mcpkit.orchestration.slack_route`) all return the
  :class:`~mcpkit.solving.route.RouteOutcome` that is judged on the declaration;
* :mod:`~mcpkit.orchestration.mpcc_solver`: :class:`~mcpkit.orchestration.mpcc_solver.MPCCSolver`
  (lower once, the homotopy, the stationarity refinement, the verdict).
"""
