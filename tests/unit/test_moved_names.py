"""Names moved by issue 27 still import from their old paths (for one release), as the same objects."""

from __future__ import annotations

import importlib

import pytest

#: ``(old module, new module, names)``.
MOVED = [
    ("mcpkit.mpcc.problem", "mcpkit.problems.mpcc", ["MPCC", "MPCCBlocks", "Segment", "Formula"]),
    ("mcpkit.mpcc.problem", "mcpkit.problems.names", ["casadi_name"]),
    ("mcpkit.mpcc", "mcpkit.problems.names", ["casadi_name"]),
    ("mcpkit.mpcc", "mcpkit.problems.mpcc", ["MPCC"]),
    ("mcpkit.mpcc", "mcpkit.lowering.standard", ["ToStandardMPCC"]),
    ("mcpkit.mpcc.standard", "mcpkit.lowering.standard", ["ToStandardMPCC", "shiftable", "split_pairs"]),
    ("mcpkit.mpcc.loader", "mcpkit.formats.mpcc_json", ["load_mpcc_json", "name_segments", "BIG"]),
    ("mcpkit.mpcc", "mcpkit.formats.mpcc_json", ["load_mpcc_json"]),
    (
        "mcpkit.mpcc.from_pyomo",
        "mcpkit.lowering.from_pyomo",
        ["mpcc_from_pyomo", "pyomo_source", "structure_fingerprint", "check_continuous", "active_objectives"],
    ),
]


@pytest.mark.parametrize(("old", "new", "names"), MOVED, ids=[f"{o}->{n}" for o, n, _ in MOVED])
def test_old_path_gives_the_same_object(old: str, new: str, names: list[str]) -> None:
    before, after = importlib.import_module(old), importlib.import_module(new)
    for name in names:
        assert getattr(before, name) is getattr(after, name), f"{old}.{name}"


def test_public_api_unchanged() -> None:
    import mcpkit

    for name in ("solve", "Solver", "MCP", "MPCC", "solve_mcp", "load_mpcc_json", "MPCCSolver", "solve_mpcc"):
        assert hasattr(mcpkit, name), name
    assert callable(mcpkit.sweep)
