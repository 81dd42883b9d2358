"""The registry and the planner's resolve: choices derived from the registry, refused when unknown on every
entry point (no solver runs)."""

from __future__ import annotations

import ast
import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mcpkit
from mcpkit.command.cli import build_parser, main
from mcpkit.errors import MCPInputError, UnknownOptionError
from mcpkit.homotopy.reformulation import reformulation_for
from mcpkit.orchestration.planner import resolve
from mcpkit.solving import registry
from mcpkit.solving.options import REFORMULATIONS, Backend, Method
from mcpkit.solving.registry import Availability, MethodEntry

ROOT = Path(__file__).resolve().parents[2]


def test_choices_are_derived_from_the_registry() -> None:
    assert [m.value for m in Method] == ["auto", *registry.METHODS]
    assert [b.value for b in Backend] == ["auto", *registry.BACKENDS]
    assert REFORMULATIONS == tuple(n for n, e in registry.METHODS.items() if e.kind == "reformulation")
    for name, entry in registry.METHODS.items():
        assert Method.parse(name).__doc__ == entry.doc
    help_text = build_parser()._subparsers._group_actions[0].choices["solve"].format_help()  # type: ignore[union-attr]
    for name in registry.METHODS:
        assert name in help_text


def test_every_reformulation_is_importable_and_named() -> None:
    for name in REFORMULATIONS:
        ref = reformulation_for(name)
        assert ref.name == name
    with pytest.raises(UnknownOptionError, match="registered"):
        registry.reformulation_entry("path")
    with pytest.raises(UnknownOptionError, match="registered"):
        reformulation_for("path")


@pytest.mark.parametrize(
    ("kind", "method", "backend", "route"),
    [
        ("mcp", "scholtes", "auto", ("scholtes", "casadi")),
        ("mcp", "fb", "pyomo", ("fb", "pyomo")),
        ("mcp", "auto", "casadi", ("newton", "casadi")),
        ("mpcc", "auto", "auto", ("scholtes", "casadi")),
        ("mpcc", "elastic", "pyomo", ("elastic", "pyomo")),
        ("mcp", Method.PENALTY, Backend.CASADI, ("penalty", "casadi")),
    ],
)
def test_resolve(kind: str, method: object, backend: object, route: tuple[str, str]) -> None:
    r = resolve(kind, method, backend)
    assert (r.method, r.backend) == route


@pytest.mark.parametrize(
    ("kind", "method", "backend", "error", "match"),
    [
        ("mcp", "scholtes", "gurobi", UnknownOptionError, "registered: \\['auto', 'casadi'"),
        ("mcp", "scholtez", "casadi", UnknownOptionError, "Did you mean 'scholtes'"),
        ("mpcc", "path", "auto", MCPInputError, "does not solve MPCCs"),
        ("mpcc", "scholtes", "gamspy", MCPInputError, "does not take MPCCs"),
        ("mcp", "path", "casadi", MCPInputError, "runs on backends"),
        ("mcp", "scholtes", "gamspy", MCPInputError, "runs on backends"),
        ("lcp", "scholtes", "casadi", UnknownOptionError, "problem kind"),
    ],
)
def test_resolve_refuses(kind: str, method: str, backend: str, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        resolve(kind, method, backend)


def test_unknown_choices_raise_on_every_entry_point(capsys: pytest.CaptureFixture[str]) -> None:
    mcp = mcpkit.MCP.lcp(np.eye(2), -np.ones(2))
    for call in (
        lambda: mcpkit.solve(mcp, backend="gurobi"),
        lambda: mcpkit.Solver(mcp, method="newtonn"),
        lambda: mcpkit.MPCCSolver(_tiny_mpcc(), backend="gurobi"),
        lambda: mcpkit.solve(_tiny_mpcc(), method="lemke2"),
    ):
        with pytest.raises(UnknownOptionError, match="registered"):
            call()


def test_cli_unknown_backend_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from mcpkit.formats.io import save_lcp_json

    f = save_lcp_json(tmp_path / "l.json", np.eye(2), -np.ones(2))
    assert main(["solve", str(f), "--backend", "gurobi"]) == 2
    assert "registered" in capsys.readouterr().err


def _tiny_mpcc() -> mcpkit.MPCC:
    import casadi as ca

    x = ca.SX.sym("x", 2)
    return mcpkit.MPCC.from_casadi(x, x[0], x[1], f=ca.sumsqr(x - 1))


def test_availability_is_true_only_when_usable() -> None:
    assert Availability.AVAILABLE and Availability.LIMITED
    assert not Availability.NOT_FOUND and not Availability.BAD_LICENSE and not Availability.BAD_VERSION
    rows = registry.describe()
    names = {(r["kind"], r["name"]) for r in rows}
    assert ("backend", "casadi") in names and ("reformulation", "scholtes") in names
    casadi = next(r for r in rows if r["name"] == "casadi")
    assert casadi["available"] and casadi["availability"] == "AVAILABLE"


def test_register_method_checks_its_entry() -> None:
    with pytest.raises(MCPInputError, match="already registered"):
        registry.register_method(MethodEntry("scholtes", "", frozenset({"mcp"}), ("casadi",), "x:y"))
    with pytest.raises(MCPInputError, match="unknown backends"):
        registry.register_method(MethodEntry("new", "", frozenset({"mcp"}), ("gurobi",), "x:y"))
    with pytest.raises(MCPInputError, match="subset"):
        registry.register_method(MethodEntry("new", "", frozenset({"qp"}), ("casadi",), "x:y"))
    assert "new" not in registry.METHODS


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_core_never_imports_mpec_or_models() -> None:
    """Regression: the package cycle cli -> mpec -> core -> mpec. Only the entry points at the top,
    the CLI (demos), the file solve it shares with the sweeps (FCLIB files) and the sweep's task
    registry (its ``simulate`` and ``plan`` tasks), may reach into ``mcpkit.mpec`` and
    ``mcpkit.models``, and only inside functions (``test_import_mcpkit_loads_neither_models_nor_mpec``;
    every import counted: ``tests/unit/test_import_graph.py``)."""
    tops = {"mcpkit/command/cli.py", "mcpkit/sweep/solve_file.py", "mcpkit/sweep/tasks.py"}
    offenders = []
    for path in sorted((ROOT / "mcpkit").rglob("*.py")):
        if path.relative_to(ROOT).as_posix() in tops:
            continue
        bad = [m for m in _imports(path) if m.startswith(("mcpkit.mpec", "mcpkit.models"))]
        if bad:
            offenders.append((path.relative_to(ROOT).as_posix(), bad))
    assert offenders == []


def test_import_mcpkit_loads_neither_models_nor_mpec() -> None:
    """``import mcpkit`` (with its CLI and sweep modules) leaves ``mcpkit.models`` and
    ``mcpkit.mpec`` unloaded, and Dask too: the top-level entry points import them when used."""
    code = (
        "import sys, mcpkit, mcpkit.command.cli, mcpkit.sweep.tasks; "
        "print(sorted(m for m in sys.modules "
        "if m.startswith(('mcpkit.models', 'mcpkit.mpec', 'distributed'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_expired_gamspy_licence_reads_as_path_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    """GAMSPy's demo licence expires: a refused probe solve means "PATH unavailable", never a crash."""
    from mcpkit.errors import SolverNotAvailableError
    from mcpkit.solving import availability

    if availability._module_version("gamspy") is None:
        pytest.skip("gamspy not installed: nothing to probe (pip install gamspy)")
    monkeypatch.setattr(availability, "_gamspy_probe", lambda: "licence expired")
    monkeypatch.setattr(availability, "pathampl_executable", lambda: None)
    availability._gamspy_path.cache_clear()
    try:
        assert not availability.path_available()
        assert not registry.METHODS["path"].available()
        r = resolve("mcp", "auto", "auto")
        assert r.method == "newton" and "PATH not available" in r.note
        assert [(f.method, f.backend) for f in r.fallbacks] == [("lemke", "casadi"), ("scholtes", "casadi")]
        with pytest.raises(SolverNotAvailableError, match="licence expired"):
            mcpkit.Solver(mcpkit.MCP.lcp(np.eye(1), [-1.0]), method="path", backend="gamspy")
    finally:
        availability._gamspy_path.cache_clear()


@pytest.mark.parametrize("backend", ["casadi", "pyomo"])
def test_auto_chain_without_path(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without PATH, auto is newton, then lemke, then scholtes, each on the chosen backend."""
    from mcpkit.solving import availability

    monkeypatch.setattr(availability, "pathampl_executable", lambda: None)
    r = resolve("mcp", "auto", backend)
    chain = [(x.method, x.backend) for x in (r, *r.fallbacks)]
    assert chain == [("newton", backend), ("lemke", backend), ("scholtes", backend)]
    assert all(not f.fallbacks for f in r.fallbacks)


def test_auto_chain_with_path_and_explicit_methods(monkeypatch: pytest.MonkeyPatch) -> None:
    """PATH first when present (engines after it on their own backends); no chain for an explicit
    method, for backend gamspy (PATH only) or for MPCCs."""
    path = dataclasses.replace(
        registry.METHODS["path"], check=lambda: (registry.Availability.LIMITED, "probe ok")
    )
    monkeypatch.setitem(registry.METHODS, "path", path)
    from mcpkit.solving import availability

    monkeypatch.setattr(availability, "pathampl_executable", lambda: None)
    r = resolve("mcp", "auto", "auto")
    assert r.method == "path" and r.backend == "gamspy"
    assert [(f.method, f.backend) for f in r.fallbacks] == [
        ("newton", "casadi"), ("lemke", "casadi"), ("scholtes", "casadi")
    ]  # fmt: skip
    assert resolve("mcp", "newton", "casadi").fallbacks == ()
    assert resolve("mcp", "auto", "gamspy").fallbacks == ()
    assert resolve("mpcc", "auto", "auto").fallbacks == ()


def test_the_registry_makes_no_choice() -> None:
    """Every choice is the planner's: the registry defines none of its names."""
    from mcpkit.orchestration import planner

    for name in ("Route", "resolve", "require_available", "path_first", "AUTO_MCP_FALLBACKS"):
        assert name not in vars(registry) and hasattr(planner, name), name


def test_a_target_is_imported_once_and_kept_on_its_entry() -> None:
    entry = registry.METHODS["lemke"]
    first = entry.implementation
    assert entry.load() is first and entry.__dict__["implementation"] is first
    assert first.__name__ == "LemkeRoute"
    fresh = dataclasses.replace(entry, target="mcpkit.engines.newton:NewtonRoute")
    assert "implementation" not in fresh.__dict__ and fresh.implementation.__name__ == "NewtonRoute"
    with pytest.raises(MCPInputError, match="runs no reformulation"):
        _ = registry.BACKENDS["gamspy"].mcp_route_class


def test_unknown_name_says_what_is_registered_and_the_closest() -> None:
    with pytest.raises(UnknownOptionError) as err:
        registry.unknown_name("method", "scholtez", ["auto", "scholtes"])
    assert str(err.value) == (
        "unknown method 'scholtez'; registered: ['auto', 'scholtes']. Did you mean 'scholtes'?"
    )
