"""Horizon MPCCs solved with IPOPT homotopies, checked against closed forms and re-simulation;
steps built from the models' own step maps; one failure rule for both simulators."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from mcpkit.errors import UnknownOptionError
from mcpkit.models.arrays import ArrayNamespace
from mcpkit.models.stepping import DeclaredStep, OnFailure, simulate
from mcpkit.mpec.examples.block import (
    BlockTask,
    block_horizon,
    block_step_spec,
    friction_force,
    model_simulator,
    sliding_qp_plan,
    solve_block,
    stick_slide,
)
from mcpkit.mpec.horizon import TIGHT_SIGMA0, Horizon
from mcpkit.mpec.resimulation import forward_simulate
from mcpkit.mpec.step import StepSpec
from mcpkit.problems.mcp import MCP
from mcpkit.solving.result import Termination
from tests.reference_steps import block_reference_spec, pushing_reference_spec

pytestmark = pytest.mark.solver


def _projection_spec() -> StepSpec:
    """Step ``a >= 0 ⟂ a - (x + u) >= 0``, i.e. ``x_next = max(0, x + u)``."""
    m = MCP("proj")
    a = m.add_variables("a", 1, lb=0.0)[0]
    xu = m.add_parameters("xu", 1)[0]
    m.add_functions("a", [a - xu])
    return StepSpec(m, 1, 1, 0, lambda x, u, th, t: {"xu": x[0] + u[0]}, lambda x, z, u, th: z[0], h=1.0)


def test_projection_horizon_finds_the_kink() -> None:
    r"""min u0^2 + u1^2, x0 = -1, x_{k+1} = max(0, x_k + u_k), x2 = 1.

    Derivation: if x1 > 0 then u0 > 1 and u0 + u1 = 2, cost > 2; if x1 = 0 then u0 <= 1, u1 = 1,
    cost u0^2 + 1, minimal at u0 = 0. So the optimum is u = (0, 1), cost 1, x = (-1, 0, 1), reached
    only through the nonsmooth branch; the default re-simulation (per-step Solver) must agree.
    """
    hz = Horizon(_projection_spec(), 2, [-1.0], terminal_bounds=(1.0, 1.0),
                 stage_cost=lambda x, u, th, z, k: u[0] ** 2)  # fmt: skip
    res = hz.solve(np.full((2, 1), 0.5))
    assert res.solved, res.message
    assert res.termination is Termination.CONVERGED
    assert res.objective == pytest.approx(1.0, abs=1e-6)
    np.testing.assert_allclose(res.controls[:, 0], [0.0, 1.0], rtol=0, atol=1e-4)
    np.testing.assert_allclose(res.states[:, 0], [-1.0, 0.0, 1.0], rtol=0, atol=1e-6)
    assert res.max_deviation <= 1e-6


@pytest.mark.parametrize("ipopt", ["casadi", "mcpkit_ipopt"])
def test_projection_horizon_on_pyomo(ipopt: str) -> None:
    """The same kink found with the relaxations on Pyomo (NL import, or homotopy in Pyomo)."""
    hz = Horizon(_projection_spec(), 2, [-1.0], terminal_bounds=(1.0, 1.0),
                 stage_cost=lambda x, u, th, z, k: u[0] ** 2)  # fmt: skip
    res = hz.solve(np.full((2, 1), 0.5), backend="pyomo", ipopt=ipopt)
    assert res.solved, res.message
    assert res.mpcc.backend == "pyomo"
    assert res.objective == pytest.approx(1.0, abs=1e-6)
    np.testing.assert_allclose(res.controls[:, 0], [0.0, 1.0], rtol=0, atol=1e-4)


@pytest.fixture(scope="module")
def block10() -> tuple[BlockTask, object]:
    task = BlockTask(n_steps=10)
    res, _ = solve_block(task)
    return task, res


def test_block_short_horizon_matches_closed_form(block10: tuple[BlockTask, object]) -> None:
    r"""N = 10 (h = 0.1): the discrete minimum-norm plan of :func:`sliding_qp_plan`.

    While the block slides forward, :math:`v_{k+1} = v_k + h(u_k - \mu g)`, so the terminal
    conditions are linear in u and the optimum of :math:`h\|u\|^2` is :math:`A^T(AA^T)^{-1}b`
    (assumption checked: every intermediate velocity of the closed form is > 0).
    """
    task, res = block10
    assert res.solved, res.message
    assert res.mpcc.trace[0].parameter == TIGHT_SIGMA0  # the planner starts tight (forward-simulated guess)
    assert res.mpcc.extra["reformulation"] == "scholtes_eq"  # in the equality form (solve_block)
    u_qp, cost = sliding_qp_plan(task)
    v_qp = task.h * np.cumsum(u_qp - task.mu * task.g)
    assert (v_qp[:-1] > 0).all()
    assert res.objective == pytest.approx(cost, rel=1e-6)
    np.testing.assert_allclose(res.controls[:, 0], u_qp, rtol=0, atol=1e-4)
    np.testing.assert_allclose(res.states[-1], [5.0, 0, 0, 0, 0, 0], rtol=0, atol=1e-6)


def test_block_friction_and_impulse_balance(block10: tuple[BlockTask, object]) -> None:
    r"""Friction is :math:`-\mu m g = -4.905` N in every step (the block moves forward; the last step
    ends exactly at rest with friction on the cone boundary), and the impulse balance
    :math:`h\sum u_k - \mu m g\,T_{\rm fric} = m\Delta v = 0` holds with :math:`T_{\rm fric} = 1` s."""
    task, res = block10
    fr = friction_force(task, res)
    np.testing.assert_allclose(fr, -task.mu * task.mass * task.g, rtol=0, atol=1e-5)
    slide = stick_slide(res)
    assert slide[:-1].all()  # sliding speed > 0 until the final rest
    assert res.block("sigma")[-1, 0] == pytest.approx(0.0, abs=1e-6)
    t_fric = task.h * task.n_steps
    assert task.h * res.controls[:, 0].sum() - task.mu * task.mass * task.g * t_fric == pytest.approx(
        0.0, abs=1e-5
    )


def test_block_resimulation_and_failure_detection(block10: tuple[BlockTask, object]) -> None:
    """The model's own LCPStep simulation reproduces the plan; a mismatched simulator (mu = 0.4
    instead of 0.5) does not, and the horizon then reports solved = False with the deviation."""
    task, res = block10
    assert res.max_deviation <= 1e-6
    X = model_simulator(task)(res.controls, res.design)
    np.testing.assert_allclose(X, res.states, rtol=0, atol=1e-6)
    bad = block_horizon(task).solve(res.controls, simulator=model_simulator(task, mu=0.4))
    assert bad.mpcc.solved
    assert not bad.solved
    assert bad.termination is Termination.STALLED
    assert bad.max_deviation > 1e-2
    assert "re-simulation deviation" in bad.message and bad.message.endswith("> 1e-04")
    assert bad.summary()["solved"] is False


@pytest.mark.slow
def test_block_full_horizon() -> None:
    """N = 100 steps (101 grid points, h = 0.01): closed form and re-simulation, from the tight
    start in the equality form (about 3 s), in the inequality form, and from the solver's
    sigma0 = 1 (about 20 s): the same plan."""
    task = BlockTask()
    u_qp, cost = sliding_qp_plan(task)
    for options in ({}, {"method": "scholtes"}, {"sigma0": 1.0}):
        res, _ = solve_block(task, **options)
        assert res.solved, (options, res.message)
        assert res.objective == pytest.approx(cost, rel=1e-6)
        np.testing.assert_allclose(res.controls[:, 0], u_qp, rtol=0, atol=1e-4)


@pytest.mark.slow
def test_block_long_horizon() -> None:
    r"""N = 800 steps (h = 1/800): solved to the tolerance, at the closed form's discrete optimum
    (:func:`sliding_qp_plan`; the block slides in every step), reproduced by the model's own
    simulation and certified S. By default the planner gets there by grid continuation (200 and
    400 steps first, :mod:`mcpkit.mpec.grid_continuation`); the cold solve's homotopy settings
    (``HORIZON_SOLVE_OPTIONS``: warm multipliers scaled with sigma, polish from 1e-4) solve it too,
    in a minute or two."""
    task = BlockTask(n_steps=800)
    res, hz = solve_block(task)
    assert hz.mpcc.x.numel() > 17_000
    assert res.solved, res.message
    assert res.mpcc.comp_residual <= 1e-6
    assert res.mpcc.constraint_violation <= 1e-6
    assert res.mpcc.stationarity == "S"
    u_qp, cost = sliding_qp_plan(task)
    assert (task.h * np.cumsum(u_qp - task.mu * task.g))[:-1].min() > 0
    assert res.objective == pytest.approx(cost, rel=1e-6)
    np.testing.assert_allclose(res.controls[:, 0], u_qp, rtol=0, atol=1e-3)
    np.testing.assert_allclose(res.states[-1], [5.0, 0, 0, 0, 0, 0], rtol=0, atol=1e-6)
    assert res.max_deviation <= 1e-6


def _check_pushing(task: object, res: object) -> None:
    """Physics of a pushing plan: terminal pose at rest, p_n = m g h (eq 8), wrench on the ellipsoid
    while sliding (eq 20 with sigma > 0), velocities zero while stuck, pusher cone, design range."""
    P = task.params
    assert res.solved, res.message
    np.testing.assert_allclose(res.states[-1], [*task.goal, 0, 0, 0], rtol=0, atol=1e-6)
    np.testing.assert_allclose(res.block("p_n")[:, 0], P.p_n, rtol=1e-6, atol=0)
    sig = res.block("sigma")[:, 0]
    slide = sig > 1e-6
    assert slide.any() and (~slide).any()  # both regimes occur
    pt, po, pr, pn = (res.block(n)[:, 0] for n in ("p_t", "p_o", "p_r", "p_n"))
    ell = (pt / P.e_t) ** 2 + (po / P.e_o) ** 2 + (pr / P.e_r) ** 2
    np.testing.assert_allclose(ell[slide], (P.mu * pn[slide]) ** 2, rtol=1e-5, atol=0)
    assert np.all(ell <= (P.mu * pn) ** 2 * (1 + 1e-6))
    np.testing.assert_allclose(res.states[1:][~slide, 3:], 0.0, rtol=0, atol=1e-6)
    fn, ft = res.controls[:, 0], res.controls[:, 1]
    assert np.all(fn >= -1e-8) and np.all(np.abs(ft) <= task.mu_pusher * fn + 1e-6)
    lo, hi = task.contact_range
    assert lo - 1e-9 <= res.design[0] <= hi + 1e-9
    assert res.max_deviation <= 1e-5


def test_pushing_short_horizon() -> None:
    """N = 20 steps to (2 cm, 0.5 cm, 0.08 rad); initial guess: 1.5 mu m g for the first quarter."""
    from mcpkit.mpec.examples.pushing import PushTask, solve_pushing

    task = PushTask(n_steps=20, goal=(0.02, 0.005, 0.08))
    res, hz = solve_pushing(task, guess=(0.25, 1.5))
    _check_pushing(task, res)
    # the same point solves the hand-derived MPCC, with the same objective and residuals
    from mcpkit.mpec.examples.pushing import pushing_horizon

    ref = pushing_horizon(task, pushing_reference_spec(task)).mpcc
    x = res.mpcc.x
    c_new, v_new, val_new = hz.mpcc.residuals(x, np.zeros(0))
    c_ref, v_ref, val_ref = ref.residuals(x, np.zeros(0))
    assert val_ref["f"][0] == pytest.approx(res.objective, rel=1e-12)
    assert c_ref <= 1e-6 and v_ref <= 1e-6
    np.testing.assert_allclose(val_ref["g"], val_new["g"], rtol=0, atol=1e-12)


def test_pushing_long_horizon_by_continuation(monkeypatch: pytest.MonkeyPatch) -> None:
    """N = 2 CONTINUATION_STEPS: the short plan extended by rest steps starts the long horizon;
    the plan is solved and reproduced and ends at rest at B; the short solve runs once."""
    import mcpkit.mpec.examples.pushing as pushing_module
    from mcpkit.mpec.examples.pushing import CONTINUATION_STEPS, PushTask

    calls: list[int] = []
    original = pushing_module.solve_pushing

    def counted(task: PushTask, *args: Any, **kwargs: Any) -> Any:
        calls.append(task.n_steps)
        return original(task, *args, **kwargs)

    monkeypatch.setattr(pushing_module, "solve_pushing", counted)
    task = PushTask(n_steps=2 * CONTINUATION_STEPS)
    res, _ = counted(task)  # no time limit: a time share must not decide a test
    assert calls == [task.n_steps, CONTINUATION_STEPS]
    assert res.solved, res.message
    np.testing.assert_allclose(res.states[-1], [*task.goal, 0, 0, 0], atol=1e-6)
    assert res.objective < 1.0


@pytest.mark.slow
def test_pushing_demo_task() -> None:
    """The demo task (N = 30, to (4 cm, 1 cm, 0.15 rad)); about 15 s."""
    from mcpkit.mpec.examples.pushing import PushTask, solve_pushing

    task = PushTask()
    res, _ = solve_pushing(task)
    _check_pushing(task, res)


# --------------------------------------------------------------------------- step models declared once
def test_block_horizon_from_model_solves_like_the_hand_derived_one() -> None:
    """N = 10: the horizon built from the LCPStep's own map and the one from the hand-derived map
    (the examples' code before ``StepSpec.from_model``) reach the same plan and objective."""
    task = BlockTask(n_steps=10)
    U0 = np.full((task.n_steps, 1), 2 * task.mu * task.mass * task.g)
    new = block_horizon(task).solve(U0)
    ref = block_horizon(task, block_reference_spec(task)).solve(U0)
    assert new.solved and ref.solved, (new.message, ref.message)
    assert new.objective == pytest.approx(ref.objective, rel=1e-9)
    np.testing.assert_allclose(new.controls, ref.controls, rtol=0, atol=1e-7)
    np.testing.assert_allclose(new.states, ref.states, rtol=0, atol=1e-9)
    assert new.mpcc.outer_iterations == ref.mpcc.outer_iterations


def test_model_simulation_equals_forward_simulation_of_its_spec() -> None:
    """Simulating the model (NumPy map, ``simulate``) equals forward-simulating the StepSpec built
    from it (CasADi map, ``forward_simulate``): block with a force profile, pushing with a push."""
    from mcpkit.mpec.examples.pushing import PushStart, PushTask, ecp_simulator, pushing_step_spec

    task = BlockTask(n_steps=12)
    U = np.linspace(12.0, -8.0, task.n_steps).reshape(-1, 1)
    X_model = model_simulator(task)(U, np.zeros(0))
    sim = forward_simulate(block_step_spec(task), np.zeros(6), U, np.zeros(0))
    assert sim.solved, sim.message
    np.testing.assert_allclose(sim.states, X_model, rtol=0, atol=1e-9)

    ptask = PushTask(n_steps=15)
    Up, th = PushStart(0.5, 2.0).controls(ptask), np.array([-0.01])
    X_ecp = ecp_simulator(ptask)(Up, th)
    x0 = np.concatenate([ptask.start, np.zeros(3)])
    psim = forward_simulate(pushing_step_spec(ptask), x0, Up, th)
    assert psim.solved, psim.message
    assert np.ptp(X_ecp[:, 0]) > 1e-3  # the slider moved
    np.testing.assert_allclose(psim.states, X_ecp, rtol=0, atol=1e-9)


# --------------------------------------------------------------------------- one failure rule
class _FailAtOne(DeclaredStep):
    r"""``z`` free, :math:`F = a z + b z^2 + p`: :math:`z = x` (``a = 1, b = 0, p = -x``) except in the
    step where the control is 1, where :math:`F = z^2 + 1` has no root (IPOPT returns a finite,
    infeasible point). :math:`x^+ = z + 1`."""

    n_state = 1
    n_control = 1

    def __init__(self) -> None:
        m = MCP("fail_at_one")
        z = m.add_variables("z", 1, lb=-math.inf, ub=math.inf)[0]
        a, b, p = (m.add_parameters(n, 1)[0] for n in ("a", "b", "p"))
        m.add_functions("z", [a * z + b * z**2 + p])
        self.mcp, self.h = m, 1.0

    def step_parameters(self, xp: ArrayNamespace, x: Any, u: Any, theta: Any, t: Any) -> dict[str, Any]:
        return {"a": 1 - u[0], "b": u[0], "p": u[0] - (1 - u[0]) * x[0]}

    def step_update(self, xp: ArrayNamespace, x: Any, z: Any, u: Any, theta: Any, t: Any) -> Any:
        return xp.vector([z[0] + 1.0])


@pytest.mark.parametrize("rule", ["continue", "stop"])
def test_one_failure_rule_for_both_simulators(rule: str) -> None:
    """Step 1 fails (finite point). ``continue``: recorded, the run goes on from the returned point;
    ``stop``: the run ends there (later rows NaN, steps not run). ``simulate`` and
    ``forward_simulate`` follow the same rule."""
    U = np.array([[0.0], [1.0], [0.0], [0.0]])
    model = _FailAtOne().with_inputs(U)
    opts = {"backend": "casadi", "method": "scholtes", "tol": 1e-10}
    sims = [
        simulate(model, [2.0], 4, on_failure=rule, **opts),
        forward_simulate(StepSpec.from_model(_FailAtOne()), [2.0], U, np.zeros(0), on_failure=rule),
    ]
    for sim in sims:
        assert sim.on_failure is OnFailure(rule)
        assert not sim.solved and sim.termination not in (Termination.CONVERGED, Termination.INTERRUPTED)
        assert sim.message.startswith(("1 of 4", "3 of 4")) and "first failure at step 1" in sim.message
        assert sim.step_solved[0] and not sim.step_solved[1]
        np.testing.assert_allclose(sim.states[:2, 0], [2.0, 3.0], rtol=0, atol=1e-8)
        if rule == "continue":
            assert sim.step_solved[2:].all() and np.isfinite(sim.states).all()
            z1 = sim.z[1, 0]
            np.testing.assert_allclose(sim.states[2:, 0], [z1 + 1, z1 + 2, z1 + 3], rtol=0, atol=1e-8)
        else:
            assert not sim.step_solved[2:].any() and np.isnan(sim.states[2:]).all()
            assert sim.step_termination[2:] == [None, None] and not sim.steps[3].ran
    with pytest.raises(UnknownOptionError, match="on_failure"):
        simulate(model, [2.0], 4, on_failure="retry", **opts)
