"""Problem file formats: readers and writers (issue 27 gathers every one of them here).

* :mod:`~mcpkit.formats.mpcc_json`: the CasADi MPCC JSON format (nosnoc, MPECLib, MacMPEC,
  NOSBENCH), :func:`~mcpkit.formats.mpcc_json.load_mpcc_json`;
* :mod:`~mcpkit.formats.fclib_hdf5`: FCLIB local friction-contact problems in HDF5,
  :func:`~mcpkit.formats.fclib_hdf5.read_fclib_local` (the contact model on them is
  :mod:`mcpkit.models.fclib`).

LCP files and file-kind detection are in :mod:`mcpkit.formats.io`, the ``mcpkit-mcp`` format and MCPLIB
ports in :mod:`mcpkit.formats.mcp_file`. This package's ``__init__`` imports nothing.
"""
