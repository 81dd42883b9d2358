"""Solver interfaces and reformulations: one file each.

* :mod:`~mcpkit.solvers.scholtes`, :mod:`~mcpkit.solvers.fischer_burmeister`,
  :mod:`~mcpkit.solvers.penalty`: IPOPT reformulations of complementarity;
* :mod:`~mcpkit.solvers.homotopy`: their shared outer loop and the active-set polish;
* :mod:`~mcpkit.solvers.ipopt`: IPOPT through CasADi;
* :mod:`~mcpkit.solvers.casadi_route`, :mod:`~mcpkit.solvers.pyomo_route`,
  :mod:`~mcpkit.solvers.path`: the routes :func:`mcpkit.solve` dispatches to.
"""
