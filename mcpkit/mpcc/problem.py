"""Old import path of :mod:`mcpkit.problems.mpcc` (the MPCC class moved there in issue 27).

Kept for one release: import :class:`~mcpkit.problems.mpcc.MPCC` from :mod:`mcpkit.problems.mpcc` (or
``from mcpkit.mpcc import MPCC``) and its printed block structure from :mod:`mcpkit.problems.segments`.
"""

from mcpkit.problems.mpcc import MPCC
from mcpkit.problems.names import casadi_name
from mcpkit.problems.segments import Formula, MPCCBlocks, Segment, SegmentKind

__all__ = ["MPCC", "Formula", "MPCCBlocks", "Segment", "SegmentKind", "casadi_name"]
