"""Solver interfaces and reformulations: one file each.

* :mod:`~mcpkit.solvers.scholtes`, :mod:`~mcpkit.solvers.fischer_burmeister`,
  :mod:`~mcpkit.solvers.penalty`: IPOPT reformulations of complementarity, on the shared
  interface and parameter controllers of :mod:`~mcpkit.solvers.reformulation`;
* :mod:`~mcpkit.solvers.homotopy`: their outer loop, the recovery with other reformulations and
  the active-set polish;
* :mod:`~mcpkit.solvers.active_set`: the active-set Newton step of warm re-solves;
* :mod:`~mcpkit.solvers.ipopt`: IPOPT through CasADi;
* :mod:`~mcpkit.solvers.nl_import`: Pyomo models into CasADi through the NL writer, and the
  ``mcpkit_ipopt`` Pyomo solver;
* :mod:`~mcpkit.solvers.casadi_route`, :mod:`~mcpkit.solvers.pyomo_route`,
  :mod:`~mcpkit.solvers.path`: the routes :class:`mcpkit.Solver` dispatches to, all returning the
  :class:`~mcpkit.solvers.route.RouteOutcome` that the solver judges on the declaration.
"""
