"""Old import path of :mod:`mcpkit.problems.mpcc` (the MPCC class moved there in issue 27).

Kept for one release: import from :mod:`mcpkit.problems.mpcc` (or ``from mcpkit.mpcc import MPCC``).
"""

from mcpkit.problems.mpcc import MPCC, Formula, MPCCBlocks, Segment, SegmentKind
from mcpkit.problems.names import casadi_name

__all__ = ["MPCC", "Formula", "MPCCBlocks", "Segment", "SegmentKind", "casadi_name"]
