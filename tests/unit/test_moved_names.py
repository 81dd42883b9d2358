"""Names moved by issue 27 still import from their old paths (for one release), as the same objects."""

from __future__ import annotations

import importlib

import pytest

#: ``(old module, new module, names)``.
MOVED = [
    ("mcpkit.mpcc.problem", "mcpkit.problems.mpcc", ["MPCC"]),
    ("mcpkit.mpcc.problem", "mcpkit.problems.segments", ["MPCCBlocks", "Segment", "Formula", "SegmentKind"]),
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
    ("mcpkit.problem", "mcpkit.problems.mcp", ["MCP"]),
    (
        "mcpkit.problem",
        "mcpkit.problems.functions",
        ["AffineFunction", "BlockFunction", "SymbolicFunction", "NumericRows", "FunctionBlock"],
    ),
    (
        "mcpkit.problem",
        "mcpkit.problems.variables",
        ["VariableBlock", "ParameterBlock", "MatrixParameterBlock", "SymbolRange"],
    ),
    ("mcpkit.problem", "mcpkit.problems.arrays", ["ArrayLike", "as_float_vector", "as_affine_matrix"]),
    ("mcpkit.lowering.from_casadi", "mcpkit.lowering.casadi_sympy", ["casadi_to_sympy"]),
    (
        "mcpkit.lowering.printer",
        "mcpkit.printing.expressions",
        ["expr_text", "expr_latex", "space", "sym_shape"],
    ),
    (
        "mcpkit.lowering.printer",
        "mcpkit.printing.mcp",
        ["ToLatex", "ToText", "NameMap", "to_latex", "to_text", "explain"],
    ),
    (
        "mcpkit.lowering.mpcc_printer",
        "mcpkit.printing.mpcc",
        ["to_text", "to_latex", "explain", "slack_form_blocks", "step_latex", "casadi_formulas", "StepBlock"],
    ),
    (
        "mcpkit.engines.lemke",
        "mcpkit.engines.lemke_pivoting",
        [
            "LEMKE_STATUSES",
            "LemkeResult",
            "copositive_plus",
            "farkas_check",
            "lemke_lcp",
            "principal_pivot",
            "solve_principal",
        ],
    ),
    ("mcpkit.engines.lemke", "mcpkit.engines.box_lcp", ["BoxLCPReduction", "box_natural_residual"]),
]


@pytest.mark.filterwarnings("ignore:.*moved to.*:DeprecationWarning")  # tested below, per module
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


@pytest.mark.parametrize("old", sorted(__import__("mcpkit._moved", fromlist=["MOVED"]).MOVED))
def test_moved_module_paths_are_the_same_modules(old: str) -> None:
    """Every module moved into a concept folder still imports at its old path, warning, as itself."""
    import sys
    import warnings

    from mcpkit._moved import MOVED

    sys.modules.pop(old, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    assert module is importlib.import_module(MOVED[old])
    assert any(issubclass(w.category, DeprecationWarning) and MOVED[old] in str(w.message) for w in caught)


def test_moved_targets_are_files_and_old_paths_are_not() -> None:
    """The table is true: each new path is a module file, and no file is left at an old path."""
    from pathlib import Path

    from mcpkit._moved import MOVED

    root = Path(__file__).resolve().parents[2]
    for old, new in MOVED.items():
        assert (root / Path(*new.split("."))).with_suffix(".py").is_file(), new
        assert not (root / Path(*old.split("."))).with_suffix(".py").exists(), old


def test_old_paths_leave_the_public_names_alone() -> None:
    """Importing every old path (which binds each module on its parent package) keeps
    ``mcpkit.solve`` the function and ``mcpkit.sweep`` the callable module."""
    import mcpkit
    from mcpkit._moved import MOVED

    for old in MOVED:
        importlib.import_module(old)
    assert callable(mcpkit.solve) and not isinstance(mcpkit.solve, type(importlib))
    assert mcpkit.solve is importlib.import_module("mcpkit.frontends.solve").solve
    assert callable(mcpkit.sweep)
