"""Old import path of :mod:`mcpkit.lowering.from_pyomo` (moved there in issue 27).

Kept for one release: import from :mod:`mcpkit.lowering.from_pyomo` (or use
:meth:`mcpkit.MPCC.from_pyomo`).
"""

from mcpkit.lowering.from_pyomo import (
    ALLOWED_CTYPES,
    PyomoMPCCSource,
    PyomoToCasadi,
    active_objectives,
    check_continuous,
    mpcc_from_pyomo,
    pyomo_source,
    structure_fingerprint,
)

__all__ = [
    "ALLOWED_CTYPES", "PyomoMPCCSource", "PyomoToCasadi", "active_objectives", "check_continuous",
    "mpcc_from_pyomo", "pyomo_source", "structure_fingerprint",
]  # fmt: skip
