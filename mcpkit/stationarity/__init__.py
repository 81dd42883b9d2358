r"""Stationarity of an MPCC point: the certificate, the LPEC and the B-stationarity refinement.

* :mod:`~mcpkit.stationarity.certificate`: weak, C, M, S and B stationarity of a point from the
  NLP multipliers, with sparse linear algebra on large problems;
* :mod:`~mcpkit.stationarity.lpec`: the LPEC over the biactive pairs (enumeration or MILP);
* :mod:`~mcpkit.stationarity.refine`: the refinement every MPCC solve runs
  (:class:`~mcpkit.stationarity.refine.RefineOptions`).
"""
