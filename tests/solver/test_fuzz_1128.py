"""Solver-running checks of the fuzz corpus of 2026-11-28 (issue 43, part A).

Each test names its ``MANIFEST.txt`` line. Tests that read ``../shared/data/fuzz-2026-11-28`` skip
when it is absent; the behaviour is also tested on data made here, so it holds without the corpus.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mcpkit
from mcpkit import MCP, SolutionStatus
from tests.conftest import SHARED_DATA
from tests.unit.test_rounding_floor import M14, Q14, exact_residual

FUZZ = SHARED_DATA / "fuzz-2026-11-28"
ROOT = Path(__file__).resolve().parents[2]
needs_corpus = pytest.mark.skipif(
    not FUZZ.is_dir(), reason=f"{FUZZ} not present (the fuzz corpus of issue 43, see ../shared/README.md)"
)
pytestmark = pytest.mark.solver


def cli(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """``mcpkit ARGS`` of this checkout, captured."""
    return subprocess.run(
        [sys.executable, "-m", "mcpkit.command.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
    )


# ------------------------------------------------ lcp_free_q1e14_rounding.json: the rounding floor
@pytest.mark.parametrize("method", ["auto", "newton", "fb", "scholtes"])
def test_q1e14_lcp_is_not_called_solved(method: str) -> None:
    mcp = MCP.lcp(M14, Q14, lb=-np.inf, ub=np.inf)
    res = mcpkit.solve(mcp, method=method, tol=1e-8)
    exact = exact_residual(M14, Q14, res.z)
    assert exact > 1e-8  # the premise: no double z is a solution to 1e-8 here
    assert not res.solved
    if res.solution_status is SolutionStatus.UNCERTIFIED:
        assert "cannot certify at this tolerance" in res.message
        floor = float(res.message.split("residual up to ")[1].split(" ")[0])
        assert floor >= exact


def test_ordinary_lcp_still_solves() -> None:
    M = np.array([[2.0, 1.0], [1.0, 2.0]])
    res = mcpkit.solve(MCP.lcp(M, [-1.0, -1.0]), tol=1e-10)
    assert res.solved
    np.testing.assert_allclose(res.z, [1 / 3, 1 / 3], atol=1e-9, rtol=0)


@needs_corpus
@pytest.mark.parametrize("method", ["auto", "fb"])
def test_corpus_q1e14_exits_1_with_the_floor(method: str) -> None:
    run = cli("solve", str(FUZZ / "lcp_free_q1e14_rounding.json"), "--json", "--method", method)
    assert run.returncode == 1, run.stderr[-2000:]
    out = json.loads(run.stdout)
    assert out["solved"] is False
    assert out["solution_status"] == "uncertified"
    assert "rounding floor" in out["message"]


# ------------------------------------------------------------ fclib_hugeq_hides_contact.hdf5
@pytest.mark.parametrize("method", ["auto", "fb"])
def test_huge_q_contact_does_not_hide_an_interpenetrating_one(method: str) -> None:
    from mcpkit.models.fclib import FCLIBProblem, solve_fclib
    from tests.unit.test_fuzz_corpus_1128 import HUGE_MU, HUGE_Q

    res = solve_fclib(FCLIBProblem(np.eye(6), HUGE_Q, HUGE_MU), method=method)
    s = res.summary()
    assert s["contact_residual"] is not None and s["friction_residual"] is not None
    if res.solved:  # only with the interpenetration gone: r_2n = 1
        np.testing.assert_allclose(res.reactions[3], 1.0, atol=1e-6, rtol=0)
        assert s["contact_residual"] <= 1e-8
    else:
        assert s["contact_residual"] > 1e-8
        assert "worst contact error" in res.message


@needs_corpus
def test_corpus_huge_q_is_not_solved_and_reports_both_errors() -> None:
    run = cli("solve", str(FUZZ / "fclib_hugeq_hides_contact.hdf5"), "--json")
    out = json.loads(run.stdout)
    assert run.returncode == (0 if out["solved"] else 1)
    assert out["friction_residual"] <= 1e-8  # the normalised error alone passes
    assert out["solved"] is (out["contact_residual"] <= 1e-8)


# ------------------------------------------------------------------- fclib_solution_inf.hdf5
@needs_corpus
def test_corpus_reference_inf_solves_without_warnings() -> None:
    run = cli("solve", str(FUZZ / "fclib_solution_inf.hdf5"), "--json")
    assert run.returncode == 0 and run.stderr == "", run.stderr[-2000:]
    out = json.loads(run.stdout)
    assert out["reference_friction_residual"] is None and out["reference_consistency"] is None


# ------------------------------------------------ fclib_zero_contacts / pile_dump_zero_contacts
@needs_corpus
@pytest.mark.parametrize("name", ["fclib_zero_contacts.hdf5", "pile_dump_zero_contacts.hdf5"])
def test_corpus_zero_contacts_exit_2_with_one_line(name: str) -> None:
    run = cli("solve", str(FUZZ / name))
    lines = run.stderr.splitlines()
    assert run.returncode == 2 and len(lines) == 1 and lines[0].startswith("mcpkit: error: "), run.stderr
    assert "0 contacts" in lines[0]


def test_pile_dump_of_a_step_without_contacts_writes_nothing(tmp_path: Path) -> None:
    seed = "99999999999999999999999"  # two spheres that never touch in two steps
    run = cli("demo", "pile", "--bodies", "2", "--steps", "2", "--seed", seed, "--dump-fclib", "0",
              "--out", str(tmp_path))  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    assert "step 0 has no contacts: no FCLIB file written" in run.stdout
    assert not list(tmp_path.glob("*.hdf5"))


# ------------------------------------------------------------------- mpcc_G_structural_zero.json
def test_structural_zero_G_solves() -> None:
    import casadi as ca

    from mcpkit.mpcc import MPCC

    x = ca.SX.sym("x", 2)
    m = MPCC.from_casadi(x, ca.SX(1, 1), x[1], f=(x[0] - 1) ** 2 + (x[1] - 2) ** 2)
    res = mcpkit.solve(m)
    assert res.solved, res.message
    np.testing.assert_allclose(res.x, [1.0, 2.0], atol=1e-5, rtol=0)  # G = 0: H is free to be 2


@needs_corpus
def test_corpus_structural_zero_G_solves() -> None:
    from mcpkit.mpcc import load_mpcc_json

    res = mcpkit.solve(load_mpcc_json(FUZZ / "mpcc_G_structural_zero.json"))
    assert res.solved, res.message
    assert res.comp_residual <= 1e-6 and res.constraint_violation <= 1e-6


# ------------------------------------------------------------------- progress_always_no_stderr.py
@pytest.mark.parametrize("stderr", ["none", "closed"])
@pytest.mark.parametrize("kind", ["mcp", "mpcc"])
def test_progress_always_without_a_stderr_returns_the_result(
    monkeypatch: pytest.MonkeyPatch, stderr: str, kind: str
) -> None:
    import io

    import casadi as ca

    if kind == "mcp":
        problem = MCP.lcp(np.array([[2.0, 1], [1, 2]]), np.array([-1.0, -1]))
    else:
        x = ca.SX.sym("x", 2)
        problem = mcpkit.MPCC.from_casadi(x, x[0], x[1], f=(x[0] - 1) ** 2 + (x[1] - 1) ** 2)
    closed = io.StringIO()
    closed.close()
    monkeypatch.setattr(sys, "stderr", None if stderr == "none" else closed)
    res = mcpkit.solve(problem, progress="always")
    assert res.solved, res.message


# ----------------------------------------------------------- minor (d): sensitivity direction shape
def test_two_dimensional_direction_is_a_shape_error() -> None:
    import casadi as ca

    from mcpkit.errors import ShapeError

    m = MCP("scalar")
    z = m.add_variables("z", 1, lb=0.0)
    (p,) = m.add_parameters("p", 1, value=[1.0])
    m.add_functions("z", [z[0] - p])
    res = mcpkit.solve(m)
    assert res.solved
    np.testing.assert_allclose(res.sensitivity(direction=[1.0]), [1.0], atol=1e-10, rtol=0)
    for bad in ([[1.0]], np.ones((1, 1))):
        with pytest.raises(ShapeError, match=r"shape \(1,\)"):
            res.sensitivity(direction=bad)
    x, q = ca.SX.sym("x", 2), ca.SX.sym("q", 1)
    mp = mcpkit.MPCC.from_casadi(x, x[0], x[1], f=(x[0] - q[0]) ** 2 + (x[1] + 1) ** 2, p=q, p0=[1.0])
    rm = mcpkit.solve(mp)
    assert rm.solved, rm.message
    for bad in ([[1.0]], np.ones((1, 1))):
        with pytest.raises(ShapeError, match=r"shape \(1,\)"):
            rm.sensitivity(direction=bad)


# ------------------------------------------------------------------- mpcc_G_nlpsol_print.json
@needs_corpus
def test_print_keeps_an_embedded_solver_off_stdout() -> None:
    run = cli("print", str(FUZZ / "mpcc_G_nlpsol_print.json"))
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.startswith("MPCC 'mpcc_G_nlpsol_print'"), run.stdout[:500]
    assert "Ipopt" not in run.stdout and "Ipopt" in run.stderr


# ------------------------------------------------------------ minor (b): plan_pushing out of time
def test_plan_pushing_out_of_time_says_time_limit() -> None:
    from mcpkit.mpec.examples.pushing import plan_pushing
    from mcpkit.solving.result import Termination

    plan = plan_pushing(time_limit=1e-9)
    assert not plan.solved and plan.attempts == []
    assert plan.termination is Termination.TIME_LIMIT
    assert "time limit" in plan.message and plan.summary()["status"] == "time_limit"


# --------------------------------------------- minor (e): a homotopy not started says why in its message
@pytest.mark.parametrize("method", ["scholtes", "fb"])
def test_not_started_homotopy_says_why(method: str) -> None:
    import casadi as ca

    from mcpkit.solving.result import Termination

    res = mcpkit.Solver(MCP.lcp(np.array([[2.0, 1], [1, 2]]), [-1.0, -1]), method=method).solve(time_limit=0)
    assert res.termination is Termination.TIME_LIMIT and res.raw_status.startswith("not started")
    assert f"({res.raw_status})" in res.message
    x = ca.SX.sym("x", 2)
    m = mcpkit.MPCC.from_casadi(x, x[0], x[1], f=(x[0] - 1) ** 2 + (x[1] - 1) ** 2)
    rm = mcpkit.MPCCSolver(m, method="scholtes").solve(time_limit=0)
    assert rm.termination is Termination.TIME_LIMIT and rm.raw_status.startswith("not started")
    assert f"({rm.raw_status})" in rm.message


# ------------------------------------------------------------ minor (a): mcpkit sweep and signals
@pytest.mark.parametrize(
    ("name", "code", "word"), [("SIGINT", 130, "interrupted"), ("SIGTERM", 143, "terminated")]
)
def test_sweep_stopped_by_a_signal_says_one_line_and_keeps_rows(
    tmp_path: Path, name: str, code: int, word: str
) -> None:
    import signal
    import time

    rng = np.random.default_rng(0)
    for k in range(40):  # enough work that the signal comes while solving
        A = rng.normal(size=(120, 120))
        M = A @ A.T / 120 + np.eye(120)
        (tmp_path / f"lcp{k:02d}.json").write_text(
            json.dumps({"M": M.tolist(), "q": rng.normal(size=120).tolist()})
        )
    out = tmp_path / "res.parquet"
    args = [sys.executable, "-m", "mcpkit.command.cli", "sweep", str(tmp_path / "lcp*.json"), "--method",
            "scholtes", "--out", str(out), "--workers", "2", "--no-progress"]  # fmt: skip
    env = os.environ | {"PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, env=env
    )
    while proc.poll() is None and not (
        out.is_dir() and any(p.name.startswith("part-") for p in out.iterdir())
    ):
        time.sleep(0.05)  # polling for the first written rows, not a time assertion
    if name == "SIGINT":
        os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C reaches the whole group
    else:
        os.kill(proc.pid, signal.SIGTERM)
    _, err = proc.communicate(timeout=300)
    if proc.returncode == 0:
        pytest.skip("the sweep finished before the signal arrived")
    lines = err.decode().splitlines()
    assert proc.returncode == code, err.decode()[-3000:]
    assert len(lines) == 1 and lines[0].startswith(word) and "rows kept" in lines[0], err.decode()[-3000:]
    from mcpkit.sweep import read_results

    assert len(read_results(out)) >= 1


def test_q1e14_as_a_parameter_is_not_called_solved() -> None:
    from tests.unit.test_rounding_floor import Q14 as q14

    m = MCP("lcp")
    m.add_variables("z", 3, lb=-np.inf, ub=np.inf)
    q = m.add_parameters("q", 3, value=q14)
    m.add_affine("z", M14, list(q))
    res = mcpkit.solve(m, tol=1e-8)
    assert exact_residual(M14, q14, res.z) > 1e-8
    assert not res.solved
