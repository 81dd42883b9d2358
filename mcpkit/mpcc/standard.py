"""Old import path of :mod:`mcpkit.lowering.standard` (moved there in issue 27).

Kept for one release: import from :mod:`mcpkit.lowering.standard` (or
``from mcpkit.mpcc import ToStandardMPCC``).
"""

from mcpkit.lowering.standard import PairMap, ToStandardMPCC, shiftable, split_pairs

__all__ = ["PairMap", "ToStandardMPCC", "shiftable", "split_pairs"]
