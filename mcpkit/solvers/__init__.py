"""Solver interfaces and reformulations: one file each.

* :mod:`~mcpkit.solvers.scholtes`, :mod:`~mcpkit.solvers.fischer_burmeister`,
  :mod:`~mcpkit.solvers.penalty`, :mod:`~mcpkit.solvers.elastic`,
  :mod:`~mcpkit.solvers.kanzow_schwartz`: IPOPT reformulations of complementarity, each one
  CasADi template (:mod:`~mcpkit.solvers.reformulation`) that runs on every backend;
* :mod:`~mcpkit.solvers.homotopy`: the one outer loop (adaptive parameter, retries, fallback
  reformulations, active-set polish, time limit), on any inner solver;
* :mod:`~mcpkit.solvers.inner`: the inner-solver interface and the ``ipopt=`` choice;
  :mod:`~mcpkit.solvers.ipopt` (CasADi's ``nlpsol`` IPOPT) and :mod:`~mcpkit.solvers.pyomo_inner`
  (the template replayed in Pyomo, solved by an ``ipopt`` executable or ``mcpkit_ipopt``);
* :mod:`~mcpkit.solvers.active_set`: the active-set Newton step of warm re-solves;
* :mod:`~mcpkit.solvers.nl_import`: Pyomo models into CasADi through the NL writer, and the
  ``mcpkit_ipopt`` Pyomo solver;
* :mod:`~mcpkit.solvers.slack_route` (shared by :mod:`~mcpkit.solvers.casadi_route` and
  :mod:`~mcpkit.solvers.pyomo_route`) and :mod:`~mcpkit.solvers.path`: the routes
  :class:`mcpkit.Solver` dispatches to, all returning the
  :class:`~mcpkit.solvers.route.RouteOutcome` that the solver judges on the declaration.
"""
