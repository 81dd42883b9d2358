"""Old import path of :mod:`mcpkit.formats.mpcc_json` (moved there in issue 27).

Kept for one release: import from :mod:`mcpkit.formats.mpcc_json` (or
``from mcpkit.mpcc import load_mpcc_json``, ``mcpkit.load_mpcc_json``).
"""

from mcpkit.formats.mpcc_json import BIG, load_mpcc_json, name_segments

__all__ = ["BIG", "load_mpcc_json", "name_segments"]
