"""The command line's contract without solving: typed errors, exit codes, help, time budget, progress.

Regressions of issue 12 ("No false solved"): each test names the defect it guards against.
"""

from __future__ import annotations

import importlib
import io
import json
import math
import os
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pyomo.environ as pyo
import pytest

import mcpkit
from mcpkit.command import cli
from mcpkit.errors import MCPInputError, ProblemFileError, SolverNotAvailableError
from mcpkit.formats.io import check_solution_path, json_ready, parse_once, read_json, save_lcp_json
from mcpkit.solving.options import SolveOptions, progress_trace
from mcpkit.solving.result import HomotopyStep
from mcpkit.sweep import solve_file

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _no_solve(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any solve fail loudly, so a test proves it was refused before one."""

    def boom(*_: Any, **__: Any) -> None:
        raise AssertionError("a solver was built")

    monkeypatch.setattr(importlib.import_module("mcpkit.frontends.solve").Solver, "__init__", boom)


# ------------------------------------------------------------------ options: typed, not coerced
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"tol": "1e-6"}, r"tol must be a real number, got str '1e-6' \(a string: write tol=1e-6"),
        ({"time_limit": "30"}, "time_limit must be a real number or None"),
        ({"tol": True}, "tol must be a real number, got bool"),
        ({"max_outer": 3.5}, "max_outer must be an integer"),
        ({"max_inner_iter": "10"}, "max_inner_iter must be an integer"),
        ({"verbose": "yes"}, "verbose must be True or False"),
        ({"progress": 3}, "progress must be True, False, .always., None or a callable"),
    ],
)
def test_options_of_the_wrong_type_are_typed_errors(kwargs: dict[str, Any], match: str) -> None:
    """Regression: ``tol="1e-6"`` raised a raw TypeError from a comparison inside SolveOptions."""
    with pytest.raises(MCPInputError, match=match):
        SolveOptions.from_kwargs(**kwargs)
    with pytest.raises(MCPInputError, match=match):
        mcpkit.Solver(mcpkit.MCP.lcp(np.eye(1), [-1.0]), method="newton", **kwargs)


def test_numeric_types_that_are_numbers_are_accepted() -> None:
    o = SolveOptions.from_kwargs(tol=np.float32(1e-6), max_outer=np.int64(5), time_limit=2, verbose=1)
    assert float(o.tol) == pytest.approx(1e-6) and int(o.max_outer) == 5 and o.time_limit == 2


def test_progress_trace_reports_each_appended_step() -> None:
    seen: list[HomotopyStep] = []
    assert type(progress_trace(SolveOptions())) is list
    trace = progress_trace(SolveOptions(progress=seen.append))
    steps = [HomotopyStep(k, 0.1 * k, 10.0**-k, "ok", 1, 0.0) for k in range(3)]
    for s in steps:
        trace.append(s)
    assert seen == steps == list(trace)


# ------------------------------------------------------------------------- files and loaders
def test_mpcc_json_with_null_pair_function_is_a_problem_file_error(tmp_path: Path) -> None:
    """Regression: ``"G_fun": null`` raised AssertionError in the MPCC JSON loader."""
    doc = json.loads((EXAMPLES / "mpcc.json").read_text())
    for key in ("G_fun", "H_fun"):
        p = tmp_path / f"{key}.json"
        p.write_text(json.dumps(doc | {key: None}))
        with pytest.raises(
            ProblemFileError, match=f"{key} must be a CasADi-serialized function string, got null"
        ):
            mcpkit.load_mpcc_json(p)


def test_mpcc_bound_error_names_the_file_once(tmp_path: Path) -> None:
    """Regression: the lbG length error read ``FILE: FILE: lbG has ...``."""
    doc = json.loads((EXAMPLES / "mpcc.json").read_text())
    p = tmp_path / "m.json"
    p.write_text(json.dumps(doc | {"lbG": [0.0, 0.0]}))
    with pytest.raises(ProblemFileError) as err:
        mcpkit.load_mpcc_json(p)
    assert str(err.value).count(str(p)) == 1 and "lbG has 2 entries, expected 1" in str(err.value)


def test_corrupt_npy_header_is_a_problem_file_error(tmp_path: Path) -> None:
    """Regression: a corrupted header inside an NPZ raised tokenize.TokenError."""
    import zipfile

    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.eye(2))
    raw = buf.getvalue()
    cut = raw.index(b"}")
    p = tmp_path / "c.npz"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("M.npy", raw[:cut] + b" " + raw[cut + 1 :])
    with pytest.raises(ProblemFileError, match="cannot read"):
        mcpkit.formats.io.load_mcp(p)


def test_parse_once_reads_a_json_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Kind detection and loading parsed a large LCP JSON four times (seconds each)."""
    p = save_lcp_json(tmp_path / "a.json", np.eye(2), [1.0, -1.0])
    calls = []
    real = json.loads
    monkeypatch.setattr("mcpkit.formats.io.json.loads", lambda text: calls.append(1) or real(text))
    with parse_once():
        mcpkit.formats.io.load_mcp(p)
        first = read_json(p)
        first["M"] = None  # a caller's change does not reach the next reader
        assert read_json(p)["M"] == [[1.0, 0.0], [0.0, 1.0]]
    assert len(calls) == 1
    read_json(p)
    assert len(calls) == 2  # outside the block every read parses


def test_json_ready_is_strict_json() -> None:
    obj = {"a": np.array([1.0, math.inf, -math.inf, math.nan]), "b": np.int64(3), "c": (np.bool_(True),)}
    text = json.dumps(json_ready(obj), allow_nan=False)
    assert json.loads(text) == {"a": [1.0, "inf", "-inf", None], "b": 3, "c": [True]}


# ------------------------------------------------------------------------ Pyomo constant rows
@pytest.mark.parametrize(
    ("q", "lb", "ub", "feasible"),
    [
        (0.0, -math.inf, math.inf, True),  # 0 = 0: any z
        (1.0, -math.inf, math.inf, False),  # 1 = 0: none
        (1.0, 0.0, math.inf, True),  # z = 0
        (-1.0, 0.0, math.inf, False),  # needs z = +inf
        (-1.0, 0.0, 2.0, True),  # z = 2
        (1.0, -math.inf, 0.0, False),  # needs z = -inf
    ],
)
def test_pyomo_constant_rows_are_decided(q: float, lb: float, ub: float, feasible: bool) -> None:
    """Regression: a free z with constant F crashed the Pyomo backend (InvalidConstraintError,
    "Complementarity condition ... must have exactly two finite bounds"). A constant row is
    either satisfiable (stated by its solution set) or a typed error saying there is no solution."""
    from mcpkit.lowering.pyomo import to_pyomo

    mcp = mcpkit.MCP.lcp(np.array([[0.0]]), np.array([q]), lb=lb, ub=ub, name="const")
    if not feasible:
        with pytest.raises(MCPInputError, match="constant function F = .*no solution"):
            to_pyomo(mcp)
        return
    model, _ = to_pyomo(mcp)
    if q == 0.0:
        assert 0 not in model.cc_z  # 0 = 0 holds for every z: no condition
    else:  # the pair pins z at the bound the sign of F names: its second side is z - bound
        bound = lb if q > 0 else ub
        side = model.cc_z[0]._args[1]
        for z, zero in ((bound, True), (bound + 0.5, False)):
            model.z[0].set_value(z)
            assert (abs(pyo.value(side.args[0] - side.args[1])) < 1e-12) is zero
    pyo.TransformationFactory("mpec.nl").apply_to(model)  # what the pathampl route does


# ------------------------------------------------------------------------------- CLI contract
def test_help_states_exit_codes_and_default_tolerances(capsys: pytest.CaptureFixture[str]) -> None:
    from mcpkit.models.fclib import DEFAULT_TOL as FCLIB_TOL

    for argv in (["--help"], ["solve", "--help"], ["demo", "--help"]):
        with pytest.raises(SystemExit):
            cli.main(argv)
        text = capsys.readouterr().out
        assert "0  solved" in text and "1  ran but not solved" in text and "2  bad input" in text
    with pytest.raises(SystemExit):
        cli.main(["solve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"MPCC JSON {1e-6:g}" in text and f"FCLIB .hdf5 {FCLIB_TOL:g}" in text and "1e-08" in text
    assert "--out" in text and "--with-solution" in text and "--no-progress" in text


def test_exit_code_comes_from_the_verdict() -> None:
    assert cli.exit_code(SimpleNamespace(solved=True)) == 0
    assert cli.exit_code(SimpleNamespace(solved=False)) == 1


def test_demo_out_that_is_a_file_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression: ``mcpkit demo NAME --out EXISTING_FILE`` printed a FileExistsError traceback."""
    monkeypatch.setitem(cli.DEMOS, "plate", lambda out, progress, fmt: pytest.fail("the demo ran"))
    target = tmp_path / "existing"
    target.write_text("x")
    assert cli.main(["demo", "plate", "--out", str(target)]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    assert target.read_text() == "x"


@pytest.mark.parametrize(
    ("out", "match"),
    [
        ("x.h5", "an MCP solution is written as .json, .npz"),
        ("x.csv", "an MCP solution is written as"),
        ("missing/x.json", "does not exist"),
    ],
)
def test_bad_out_paths_are_refused_before_solving(
    out: str, match: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _no_solve(monkeypatch)
    assert cli.main(["solve", str(EXAMPLES / "lcp.json"), "--out", str(tmp_path / out)]) == 2
    assert match in capsys.readouterr().err


def test_out_cannot_overwrite_the_problem_file(tmp_path: Path) -> None:
    p = save_lcp_json(tmp_path / "a.json", np.eye(1), [1.0])
    with pytest.raises(MCPInputError, match="problem file itself"):
        check_solution_path(p, "mcp", source=p)
    assert check_solution_path(tmp_path / "f.h5", "fclib") == tmp_path / "f.h5"


def test_with_solution_needs_json() -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["solve", str(EXAMPLES / "lcp.json"), "--with-solution"])
    assert exc.value.code == 2


@pytest.mark.parametrize("value", ["0", "-1", "nan"])
def test_bad_time_limit_exits_2(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_solve(monkeypatch)
    assert cli.main(["solve", str(EXAMPLES / "lcp.json"), "--time-limit", value]) == 2


# ------------------------------------------------------------------------------ time budget
def test_time_spent_loading_is_taken_from_the_solver(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression: ``--time-limit`` bounded only the solve (n=2000 LCP: 45 s for 30). Loading
    that uses the whole budget leaves no solve and a time-limit verdict (exit 1)."""
    import mcpkit.formats.mcp_file as mcp_file

    real = mcp_file.load_any_mcp

    def slow_load(path: Any) -> Any:
        time.sleep(0.6)
        return real(path)

    monkeypatch.setattr(mcp_file, "load_any_mcp", slow_load)
    _no_solve(monkeypatch)
    assert cli.main(["solve", str(EXAMPLES / "lcp.json"), "--time-limit", "0.5", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "time_limit" and out["solved"] is False and "loading" in out["message"]


def test_budget_gives_the_solver_what_is_left() -> None:
    b = cli.CommandBudget(10.0, time.perf_counter() - 4.0)
    left = b.solve_limit()
    assert left is not None and 5.0 < left < 6.0  # 10 - 4 - reserve max(0.25, 0.3)
    assert cli.CommandBudget(None, time.perf_counter()).solve_limit() is None
    with pytest.raises(solve_file.OutOfTime):
        cli.CommandBudget(1.0, time.perf_counter() - 2.0).check("mcp", "loading")


def test_watchdog_interrupts_python_code_that_ignores_its_limit() -> None:
    b = cli.CommandBudget(0.1, time.perf_counter() - 0.5)  # fires at 1.05 * 0.1 + 0.5 s: at once
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt), b.watchdog():
        while time.perf_counter() - t0 < 10:
            pass
    assert b.fired.is_set() and time.perf_counter() - t0 < 2


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the hard bound forks (POSIX only)")
def test_hard_bound_stops_native_code(capsys: pytest.CaptureFixture[str]) -> None:
    """Code that never returns to Python (a CasADi NL import of a huge model) cannot be
    interrupted; the program runs the command in a child and stops it at 1.1 limit + 1 s."""

    def stuck(args: Any) -> int:
        import ctypes

        ctypes.CDLL(None).sleep(60)  # C code that holds the process and checks no signal
        return 0

    limit = 0.5
    args = SimpleNamespace(
        func=stuck, budget=cli.CommandBudget(limit, time.perf_counter()), json=True, file="x.npz"
    )
    t0 = time.perf_counter()
    code = cli._run_bounded(args)
    wall = time.perf_counter() - t0
    assert code == 1 and wall <= 1.1 * limit + 2
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "time_limit" and "stopped from outside" in out["message"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the hard bound forks (POSIX only)")
def test_hard_bound_passes_the_childs_output_and_status_through(capsys: pytest.CaptureFixture[str]) -> None:
    def quick(args: Any) -> int:
        print("hello from the child")
        return 2

    args = SimpleNamespace(
        func=quick, budget=cli.CommandBudget(30.0, time.perf_counter()), json=False, file="x"
    )
    assert cli._run_bounded(args) == 2
    assert capsys.readouterr().out == "hello from the child\n"


# -------------------------------------------------------------------------------- progress
def test_progress_line_draws_and_erases() -> None:
    stream = io.StringIO()
    line = cli.ProgressLine(stream, "f.json", interval=0.0)
    line(HomotopyStep(0, 1e-2, 3.5e-4, "ok", 2, 0.0, "newton"))
    line(HomotopyStep(1, 1e-3, 1.0e-9, "ok", 2, 0.0, "newton"))
    text = stream.getvalue()
    assert "f.json: newton step 2, residual 1.00e-09, parameter 1.0e-03" in text
    line.close()
    assert stream.getvalue().endswith("\r") and line.width == 0


def test_progress_only_on_a_terminal() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert cli._progress_wanted(SimpleNamespace(no_progress=False), Tty())
    assert not cli._progress_wanted(SimpleNamespace(no_progress=True), Tty())
    assert not cli._progress_wanted(SimpleNamespace(no_progress=False), io.StringIO())


# ------------------------------------------------------------------------------ PATH licence
def test_refused_path_licence_gives_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    """An expired or size-limited GAMSPy licence reads as "PATH unavailable" with the probe's
    words, for method='path' on backend 'auto' too (its error lacked the reason)."""
    from mcpkit.solving import availability

    monkeypatch.setattr(availability, "pathampl_executable", lambda: None)
    monkeypatch.setattr(availability, "_gamspy_path", lambda: (False, "", "licence expired on 2026-11-26"))
    assert availability.path_unavailable_reason() is not None
    assert "licence expired" in str(availability.path_unavailable_reason())
    with pytest.raises(SolverNotAvailableError, match="licence expired on 2026-11-26"):
        availability.require_path()


# ---------------------------------------------------------------------------------- wording
def test_explain_uses_singular_for_one_pair_and_one_block() -> None:
    text = mcpkit.MCP.lcp(np.array([[2.0]]), np.array([-1.0])).explain()
    assert "has 1 pair (z_i, F_i) in 1 block." in text and "1 nonzero)" in text
    text = mcpkit.MCP.lcp(np.eye(2), np.array([-1.0, 1.0])).explain()
    assert "has 2 pairs (z_i, F_i) in 1 block." in text


@pytest.mark.parametrize(
    "argv, says",
    [
        (["pile", "--bodies", "0"], "--bodies must be at least 1"),
        (["pile", "--steps", "-2"], "--steps must be at least 1"),
        (["pile", "--seed", "-1"], "--seed must be >= 0"),  # NumPy's traceback before
        (["pile", "--steps", "5", "--dump-fclib", "5"], "--dump-fclib must be a step"),
        (["block", "--bodies", "3"], "demo block takes no --bodies"),
    ],
)
def test_bad_demo_options_exit_2_before_the_demo(
    argv: list[str],
    says: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    def never(*_: Any, **__: Any) -> Any:  # pragma: no cover - reached only if a check is missing
        raise AssertionError("the demo ran")

    monkeypatch.setattr(cli, "DEMOS", dict.fromkeys(cli.DEMOS, never))
    assert cli.main(["demo", *argv, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
