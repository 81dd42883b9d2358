r"""What a solution point is: MPCC stationarity (certificate, LPEC, refinement) and sensitivities.

* :mod:`~mcpkit.stationarity.certificate`: weak, C, M, S and B stationarity of a point from the
  NLP multipliers, with sparse linear algebra on large problems;
* :mod:`~mcpkit.stationarity.lpec`: the LPEC over the biactive pairs (enumeration or MILP);
* :mod:`~mcpkit.stationarity.refine`: the refinement every MPCC solve runs
  (:class:`~mcpkit.stationarity.refine.RefineOptions`);
* :mod:`~mcpkit.stationarity.sensitivity` (an MCP solution's :math:`dz^*/dp`),
  :mod:`~mcpkit.stationarity.mpcc_sensitivity` and :mod:`~mcpkit.stationarity.value_gradient`
  (an MPCC solution's :math:`dx^*/dp` and :math:`\nabla_p f^*`).
"""
