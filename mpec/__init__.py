"""MPCCs and MPEC planning (installed as ``mcpkit.mpec``).

* :mod:`~mcpkit.mpec.problem`: MPCCs with general pair bounds and their lowering to the standard
  form;
* :mod:`~mcpkit.mpec.loader`: the CasADi MPCC JSON format (nosnoc, MPECLib, NOSBENCH);
* :mod:`~mcpkit.mpec.engine`: solve them with the IPOPT homotopies (``mcpkit solve FILE.json``);
* :mod:`~mcpkit.mpec.stationarity`: weak, C, M, S and B stationarity of the returned point;
* :mod:`~mcpkit.mpec.horizon`: whole horizons of per-step MCPs as one MPCC, with re-simulation;
* :mod:`~mcpkit.mpec.examples`: block to a target, planar pushing, plate-motion design.
"""
