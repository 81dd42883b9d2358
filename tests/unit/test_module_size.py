"""No module of mcpkit (``mcpkit/``, ``models/``, ``mpec/``) is over 1,000 lines (issue 27).

A module that grows past the bound is split by concept (one file per concept, the old module kept as
the public face or as a re-export for one release), not cut at an arbitrary line.
"""

from __future__ import annotations

from tests.unit.test_import_graph import module_files

#: The most lines a module may have.
MAX_LINES = 1000


def test_no_module_over_1000_lines() -> None:
    modules = module_files()
    assert len(modules) > 100, "the module list lost most of the package"
    long = {
        name: n
        for name, path in modules.items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines (split them by concept): {long}"
