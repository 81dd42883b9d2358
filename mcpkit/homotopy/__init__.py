r"""Complementarity as a sequence of NLPs: the reformulations, the one homotopy loop, the inner solvers.

* :mod:`~mcpkit.homotopy.scholtes`, :mod:`~mcpkit.homotopy.kanzow_schwartz`,
  :mod:`~mcpkit.homotopy.fischer_burmeister`, :mod:`~mcpkit.homotopy.penalty`,
  :mod:`~mcpkit.homotopy.elastic`: IPOPT reformulations of complementarity, each one CasADi
  template (:mod:`~mcpkit.homotopy.reformulation`) that runs on every backend;
* :mod:`~mcpkit.homotopy.loop`: the one outer loop (adaptive parameter, retries, active-set
  polish, time limit), on any inner solver; the fallback reformulations and the second opinion
  around it in :mod:`~mcpkit.homotopy.recovery`; the LPEC polish in
  :mod:`~mcpkit.homotopy.lpec_polish`;
* :mod:`~mcpkit.homotopy.inner`: the inner-solver interface and the ``ipopt=`` choice;
  :mod:`~mcpkit.homotopy.ipopt` (CasADi's ``nlpsol`` IPOPT), :mod:`~mcpkit.homotopy.pyomo_inner`
  (the template replayed in Pyomo) and :mod:`~mcpkit.homotopy.lp_inner` (HiGHS for affine
  subproblems); :mod:`~mcpkit.homotopy.ipopt_plugin`: CasADi's IPOPT as the Pyomo solver
  ``"mcpkit_ipopt"``.
"""
