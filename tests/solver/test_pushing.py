"""Planar pushing: multi-start planning, re-simulation and stick/slide switching."""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pytest

from mcpkit.errors import MCPInputError
from mcpkit.mpec.examples.pushing import (
    DEFAULT_STARTS,
    PushStart,
    PushTask,
    contact_modes,
    ecp_simulator,
    plan_pushing,
)
from mcpkit.mpec.resimulation import HorizonResult
from mcpkit.solving.result import RESULT_KEYS, Outcome, Termination

pytestmark = pytest.mark.solver

DEV_TOL = 1e-5
"""Re-simulation tolerance on max |x_sim - x_plan| (m, rad, m/s, rad/s)."""

SECOND_TARGET = PushTask(goal=(0.01, -0.005, 0.4), n_steps=20)
"""Rotation-heavy (1 cm, -0.5 cm, 0.4 rad) in 0.2 s, different from the demo (4 cm, 1 cm, 0.15 rad)
and the N = 20 target of ``test_horizon.py`` (2 cm, 0.5 cm, 0.08 rad)."""


def _check_plan(task: PushTask, res: HorizonResult) -> np.ndarray:
    """Physics of a reproduced plan (checked on the plan, independent of its values); returns the
    sliding flags.

    * terminal pose at rest, ``p_n = m g h`` (seed 000 eq 8);
    * friction wrench on the ellipsoid ``mu^2 p_n^2`` while sliding, inside it while stuck;
    * a step sticks (sigma = 0) exactly when the slider is at rest after it;
    * pusher cone, force and design bounds;
    * an independent re-simulation (``ComplementarityECPStep`` + ``run_ecp``) within DEV_TOL.
    """
    P = task.params
    assert res.solved, res.message
    np.testing.assert_allclose(res.states[-1], [*task.goal, 0, 0, 0], rtol=0, atol=1e-6)
    np.testing.assert_allclose(res.block("p_n")[:, 0], P.p_n, rtol=1e-6, atol=0)
    slide = contact_modes(res)
    pt, po, pr, pn = (res.block(n)[:, 0] for n in ("p_t", "p_o", "p_r", "p_n"))
    ell = (pt / P.e_t) ** 2 + (po / P.e_o) ** 2 + (pr / P.e_r) ** 2
    np.testing.assert_allclose(ell[slide], (P.mu * pn[slide]) ** 2, rtol=1e-5, atol=0)
    assert np.all(ell <= (P.mu * pn) ** 2 * (1 + 1e-6))
    speed = np.max(np.abs(res.states[1:, 3:]), axis=1)
    np.testing.assert_allclose(speed[~slide], 0.0, rtol=0, atol=1e-6)
    assert np.all(speed[slide] > 1e-8)
    fn, ft = res.controls[:, 0], res.controls[:, 1]
    assert np.all(fn >= -1e-8) and np.all(fn <= task.force_max + 1e-8)
    assert np.all(np.abs(ft) <= task.mu_pusher * fn + 1e-6)
    lo, hi = task.contact_range
    assert lo - 1e-9 <= res.design[0] <= hi + 1e-9
    assert res.max_deviation <= DEV_TOL
    X = ecp_simulator(task)(res.controls, res.design)
    np.testing.assert_allclose(X, res.states, rtol=0, atol=DEV_TOL)
    # a deadline already passed: no step starts, only the initial state is known
    late = ecp_simulator(task)(res.controls, res.design, deadline=time.perf_counter())
    np.testing.assert_array_equal(late[0], X[0])
    assert np.isnan(late[1:]).all()
    return slide


def test_second_target_plan_sticks_and_slides() -> None:
    """The rotation-heavy target from one start (constant push 1.5 mu m g), one re-seed allowed.

    Physically the plan must slide (the slider moves) and stick (it ends at rest, and the pusher
    cannot pull): checked with :func:`contact_modes`, whose sticking steps must be exactly the
    steps after which the slider is at rest. The last step sticks.
    """
    task = SECOND_TARGET
    plan = plan_pushing(task, [PushStart(1.0, 1.5)], restarts=1)
    assert plan.solved, [a.message for a in plan.attempts]
    assert isinstance(plan, Outcome) and plan.termination is Termination.CONVERGED
    res = plan.best
    slide = _check_plan(task, res)
    assert slide.any() and (~slide).any()
    assert not slide[-1]
    solved = [a for a in plan.attempts if a.solved]
    assert plan.attempts[plan.best_attempt].objective == min(a.objective for a in solved)
    assert res.objective == pytest.approx(plan.attempts[plan.best_attempt].objective, rel=1e-12)
    s = plan.summary()
    assert tuple(s)[: len(RESULT_KEYS)] == RESULT_KEYS and s["solved"] is True
    assert s["n_starts_solved"] >= 1 and f"attempt {plan.best_attempt}" in s["message"]
    json.dumps(s)


def test_unreachable_goal_is_reported_failed() -> None:
    r"""With :math:`F_{\max} = 1` N below the table friction :math:`\mu m g = 1.52` N the slider
    cannot move, so no plan to a different pose exists: every attempt is recorded as failed with
    its status and residuals, and no plan is returned."""
    task = PushTask(goal=(0.01, 0.0, 0.0), n_steps=10, force_max=1.0)
    assert task.force_max < task.params.mu * task.params.m * task.params.g
    plan = plan_pushing(task, [PushStart(1.0, 0.5)], restarts=1, attempt_time_limit=10.0)
    assert not plan.solved and plan.best is None and plan.best_attempt == -1
    assert len(plan.attempts) == 2
    failed = plan.failed_starts()
    assert len(failed) == 1 and failed[0].message.startswith("FAILED")
    assert all(not a.solved for a in plan.attempts)
    assert all(math.isfinite(a.violation) for a in plan.attempts)
    assert plan.termination is plan.attempts[0].termination is not Termination.CONVERGED
    assert plan.message.startswith("0 of 2 attempts solved; first failure at attempt 0: FAILED")
    s = plan.summary()
    assert s["solved"] is False and math.isnan(s["objective"]) and len(s["attempts"]) == 2
    assert all(a["solved"] is False for a in s["attempts"])


def test_push_start_validation() -> None:
    task = PushTask(n_steps=8)
    U = PushStart(0.25, 2.0).controls(task)
    P = task.params
    np.testing.assert_allclose(U[:2, 0], 2.0 * P.mu * P.m * P.g, rtol=1e-15, atol=0)
    np.testing.assert_allclose(U[2:], 0.0, rtol=0, atol=0)
    np.testing.assert_allclose(PushStart(contact=0.5).design(task), [task.contact_range[1]], rtol=0, atol=0)
    for bad in (
        {"fraction": 0.0},
        {"fraction": 1.5},
        {"magnitude": -1.0},
        {"contact": math.nan},
        {"fraction": "a"},
    ):
        with pytest.raises(MCPInputError):
            PushStart(**bad)
    with pytest.raises(MCPInputError):
        plan_pushing(task, [])
    with pytest.raises(MCPInputError):
        plan_pushing(task, [PushStart()], restarts=-1)
    for bad_limit in ({"time_limit": -1}, {"time_limit": True}, {"time_limit": math.nan},
                      {"attempt_time_limit": 0}, {"total_time_limit": "5"},
                      {"time_limit": 5, "total_time_limit": 5}):  # fmt: skip
        with pytest.raises(MCPInputError):
            plan_pushing(task, [PushStart()], **bad_limit)


@pytest.mark.parametrize("limit", [1.0, 4.0])
def test_plan_pushing_time_limit_bounds_the_whole_plan(limit: float) -> None:
    """``time_limit`` bounds the whole multi-start (six starts, two re-seeds each), within
    1.1 S + 2 s; the attempts that ran are recorded, none after the limit."""
    task = PushTask(n_steps=20)
    for name in ("time_limit", "total_time_limit"):  # the latter: the former name
        t = time.perf_counter()
        plan = plan_pushing(task, DEFAULT_STARTS, **{name: limit})
        wall = time.perf_counter() - t
        assert wall <= 1.1 * limit + 2.0, (name, wall)
        # the attempts run one after another, so the last one started at least the others'
        # time after the call began: none started after the limit
        assert plan.attempts and sum(a.wall_s for a in plan.attempts[:-1]) < limit, (name, plan.attempts)


@pytest.mark.slow
@pytest.mark.parametrize(
    "goal, n_steps",
    [
        ((0.02, 0.005, 0.08), 20),
        ((0.03, 0.0, 0.0), 20),
        ((0.03, 0.01, 0.2), 30),
        ((0.01, -0.005, 0.4), 20),
        ((0.04, 0.01, 0.15), 30),
    ],
)
def test_default_multistart_sweep(goal: tuple[float, float, float], n_steps: int) -> None:
    """All default starts (about 15-60 s per target): a reproduced winner of lowest objective."""
    task = PushTask(goal=goal, n_steps=n_steps)
    plan = plan_pushing(task, DEFAULT_STARTS)
    assert plan.solved, [a.message for a in plan.failed_starts()]
    slide = _check_plan(task, plan.best)
    assert slide.any() and (~slide).any()
    assert plan.best.objective <= min(a.objective for a in plan.attempts if a.solved) + 1e-12


def test_solve_pushing_hands_its_refinement_budget_unless_given(monkeypatch: pytest.MonkeyPatch) -> None:
    """solve_pushing's plans get PUSHING_REFINE; the caller's ``refine`` (options or False) wins."""
    from mcpkit.mpec.examples.pushing import PUSHING_REFINE, solve_pushing
    from mcpkit.mpec.horizon import Horizon
    from mcpkit.stationarity.refine import RefineOptions

    seen: list[dict] = []
    monkeypatch.setattr(Horizon, "solve", lambda self, *a, **kw: seen.append(kw))
    task = PushTask(n_steps=20)
    solve_pushing(task)
    assert seen[-1]["refine"] is PUSHING_REFINE
    mine = RefineOptions(iteration_factor=1.0)
    solve_pushing(task, refine=mine)
    assert seen[-1]["refine"] is mine
    solve_pushing(task, refine=False)
    assert seen[-1]["refine"] is False
