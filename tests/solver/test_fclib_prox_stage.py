"""The ``prox`` stage of the staged FCLIB solve (``mcpkit.models.fclib.solve_equations``) on pile
steps (``tests/data/pile``): it is what solves a resting step the other stages miss, it keeps to
the caller's time limit and iteration budget (Siconos error recomputed here)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from mcpkit.engines.prox_contact import prox_point
from mcpkit.errors import MCPInputError
from mcpkit.formats.fclib_hdf5 import read_fclib_local
from mcpkit.models.fclib import friction_residual, load_fclib, solve_fclib, solve_fclib_file

pytestmark = pytest.mark.solver

DATA = Path(__file__).resolve().parents[1] / "data" / "pile"
TOL = 1e-8


@pytest.mark.slow
def test_prox_stage_is_what_solves_a_resting_step() -> None:
    path = DATA / "rest-N20-seed0-step79.hdf5"
    res = solve_fclib_file(path, time_limit=120.0)
    names = [st.name for st in res.stages]
    assert res.solved and names[-1] == "prox" and res.stages[-1].solved
    # no stage before it met both measures (that is why it ran)
    assert not any(st.solved and (st.friction_residual or 1.0) <= TOL for st in res.stages[:-1])
    d = read_fclib_local(path)
    assert res.reactions is not None
    assert friction_residual(d.W, d.q, d.mu, res.reactions) <= TOL
    assert res.solve.natural_residual <= TOL
    assert sum(st.iterations for st in res.stages) <= 3000  # SolveOptions.max_inner_iter's default


@pytest.mark.slow
def test_prox_stage_solves_the_settling_603_contact_step() -> None:
    # every stage before it stops between 4e-5 and 1e-4 on this step (tests/data/pile/README.md)
    prob = load_fclib(DATA / "hard-N200-seed0-staged-step37-603c.hdf5")
    res = solve_fclib(prob, time_limit=120.0)
    assert res.solved and res.stages[-1].name == "prox" and res.stages[-1].solved
    assert res.reactions is not None
    assert friction_residual(prob.W, prob.q, prob.mu, res.reactions) <= TOL


def test_staged_solve_keeps_the_time_limit_on_a_hard_step() -> None:
    prob = load_fclib(DATA / "hard-N200-seed0-staged-step37-603c.hdf5")
    limit = 3.0
    t0 = time.perf_counter()
    res = solve_fclib(prob, time_limit=limit)
    wall = time.perf_counter() - t0
    assert wall <= 1.1 * limit + 2.0
    # a fast machine may finish this step within 3 s; then it must be solved for real
    if res.solved:
        assert friction_residual(prob.W, prob.q, prob.mu, res.reactions) <= TOL
    else:
        assert res.termination.value == "time_limit"


@pytest.mark.slow
def test_prox_stage_keeps_the_time_limit() -> None:
    # 15 s: plain (a quarter) and the continuation stop early, the prox stage is cut by the deadline
    prob = load_fclib(DATA / "hard-N200-seed0-staged-step37-603c.hdf5")
    limit = 15.0
    t0 = time.perf_counter()
    res = solve_fclib(prob, time_limit=limit)
    wall = time.perf_counter() - t0
    assert wall <= 1.1 * limit + 2.0
    assert "prox" in [st.name for st in res.stages]
    if not res.solved:
        assert res.termination.value == "time_limit"


def test_prox_point_keeps_its_newton_budget() -> None:
    d = read_fclib_local(DATA / "rest-N20-seed0-step77.hdf5")
    px = prox_point(d.W, d.q, d.mu, tol=TOL, max_newton=40)
    assert px.outer >= 1 and px.newton_steps <= 40
    assert friction_residual(d.W, d.q, d.mu, px.result.r) == pytest.approx(px.result.siconos_error, rel=1e-6)
    with pytest.raises(MCPInputError, match="max_newton"):
        prox_point(d.W, d.q, d.mu, max_newton=-1)


def test_staged_solve_keeps_the_iteration_budget() -> None:
    prob = load_fclib(DATA / "rest-N20-seed0-step77.hdf5")
    res = solve_fclib(prob, max_inner_iter=150, time_limit=60.0)
    assert sum(st.iterations for st in res.stages) <= 150
