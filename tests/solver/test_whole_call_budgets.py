"""Time limits bound whole calls: MPCCSolver.solve (homotopy, refinement, stationarity check)
and Horizon.solve (initial simulation, MPCC solve, re-simulation), within 1.1 S + 2 s.

The limits here are far below what the solves need, so the assertions test the bound itself;
no assertion depends on how fast the machine is beyond that generous slack."""

from __future__ import annotations

import time

import casadi as ca
import numpy as np
import pytest

from mcpkit.mpcc import MPCC, MPCCSolver
from mcpkit.mpec.examples.block import BlockTask, solve_block
from mcpkit.mpec.examples.plate_design import PlateDesignTask, solve_plate_design, solve_plate_design_multi

pytestmark = pytest.mark.solver


def _chain(n: int) -> MPCC:
    """A long chain of coupled pairs: min sum (x_i - 1)^2 + (y_i - 1)^2 + coupling, 0 <= x_i _|_ y_i >= 0."""
    x, y = ca.SX.sym("x", n), ca.SX.sym("y", n)
    f = ca.sumsqr(x - 1) + ca.sumsqr(y - 1) + ca.sumsqr(x[1:] - y[:-1])
    w = ca.vertcat(x, y)
    return MPCC.from_casadi(w, x, y, f=f, x0=np.full(2 * n, 0.5))


def test_mpcc_solver_time_limit_bounds_the_whole_call() -> None:
    solver = MPCCSolver(_chain(400), "scholtes", time_limit=0.5)
    t = time.perf_counter()
    res = solver.solve()
    wall = time.perf_counter() - t
    assert wall <= 1.1 * 0.5 + 2.0, wall
    assert res.stationarity in ("not checked", "S", "B", "M", "C", "weak", "not_stationary", "not_feasible")
    # a call-level override bounds it too
    t = time.perf_counter()
    solver.solve(time_limit=0.2)
    assert time.perf_counter() - t <= 1.1 * 0.2 + 2.0


def test_horizon_solve_time_limit_bounds_plan_and_resimulation() -> None:
    t = time.perf_counter()
    res, _ = solve_block(BlockTask(n_steps=400), time_limit=0.5)
    wall = time.perf_counter() - t
    assert wall <= 1.1 * 0.5 + 2.0, (wall, res.build_time_s)  # the build counts too
    if res.resim is not None and res.resim.not_checked:
        assert not res.solved and "not checked" in res.resim.message


@pytest.mark.parametrize("continuation", [False, True])
def test_block_limit_used_up_by_the_build_returns_at_once(
    continuation: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """N = 800 steps: building the horizon (about 0.25 s of CPU) takes longer than the 0.05 s
    limit. What follows the build is not started: no initial simulation of the 800 steps and,
    with continuation, no grid between the coarsest and the 800 steps; the call returns within
    1.1 S + 2 s with the time-limit status, the plan's arrays shaped for the 800 steps."""
    import mcpkit.mpec.examples.block as block
    import mcpkit.mpec.horizon as horizon

    built: list[int] = []
    simulated: list[int] = []
    build, simulate = block.block_horizon, horizon.forward_simulate

    def build_spy(task: BlockTask, *a: object, **k: object) -> horizon.Horizon:
        built.append(task.n_steps)
        return build(task, *a, **k)

    def simulate_spy(spec: object, x0: object, controls: np.ndarray, *a: object, **k: object) -> object:
        simulated.append(len(controls))
        return simulate(spec, x0, controls, *a, **k)

    monkeypatch.setattr(block, "block_horizon", build_spy)
    monkeypatch.setattr(horizon, "forward_simulate", simulate_spy)
    t = time.perf_counter()
    res, hz = solve_block(BlockTask(n_steps=800), continuation=continuation, time_limit=0.05)
    wall = time.perf_counter() - t
    assert wall <= 1.1 * 0.05 + 2.0, (wall, res.build_time_s, res.guess_time_s)
    assert built == ([200, 800] if continuation else [800]) and 800 not in simulated
    assert hz.N == 800 and res.states.shape == (801, hz.spec.n_state)
    assert res.mpcc.status == "time_limit" and not res.solved
    assert "time limit" in res.mpcc.message and res.resim.not_checked


def test_plate_design_time_limit_bounds_the_settling_simulation() -> None:
    """The plate planners' settling simulation (ten plate periods: 2,000 steps here, seconds) and,
    for several radii, the builds, guesses and re-simulations are inside the limit; a limit of
    the wrong sign or type is still rejected by SolveOptions, not turned into a valid one (by any
    planner: the block's shares the helper)."""
    from mcpkit.errors import MCPInputError

    task = PlateDesignTask(periods=1, steps_per_period=200)
    t = time.perf_counter()
    res, _, _ = solve_plate_design(task, time_limit=0.5)
    wall = time.perf_counter() - t
    assert wall <= 1.1 * 0.5 + 2.0, wall
    assert not res.solved
    t = time.perf_counter()
    multi = solve_plate_design_multi(PlateDesignTask(periods=1, steps_per_period=100), time_limit=0.5)
    wall = time.perf_counter() - t
    assert wall <= 1.1 * 0.5 + 2.0, wall
    assert not multi.solved and any(s.resim.not_checked for s in multi.scenarios)
    for bad in (-1.0, True):
        with pytest.raises(MCPInputError):
            solve_plate_design(PlateDesignTask(periods=1, steps_per_period=12), time_limit=bad)
        with pytest.raises(MCPInputError):
            solve_block(BlockTask(n_steps=10), time_limit=bad)


def test_time_limit_is_validated() -> None:
    from mcpkit.errors import MCPInputError

    solver = MPCCSolver(_chain(2), "scholtes")
    with pytest.raises(MCPInputError):
        solver.solve(time_limit=-1.0)
    with pytest.raises(MCPInputError):
        solver.solve(time_limit=float("nan"))


def test_pyomo_plugin_timelimit_bounds_the_call_and_says_so() -> None:
    """A 200-pair Pyomo MPCC with Pyomo's timelimit=0.3: the call (reading and lowering the model
    included) returns within 1.1 * 0.3 + 2 s with maxTimeLimit, not 'optimal' after seconds."""
    pyo = pytest.importorskip("pyomo.environ")
    from pyomo.mpec import Complementarity, complements
    from pyomo.opt import TerminationCondition

    n = 200
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, n - 1)
    m.x = pyo.Var(m.I, bounds=(0, None), initialize=0.5)
    m.y = pyo.Var(m.I, bounds=(0, None), initialize=0.5)
    m.obj = pyo.Objective(
        expr=sum((m.x[i] - 1) ** 2 + (m.y[i] - 1) ** 2 for i in m.I)
        + sum((m.x[i] - m.y[i - 1]) ** 2 for i in m.I if i > 0)
    )
    m.c = Complementarity(m.I, rule=lambda m, i: complements(m.x[i] >= 0, m.y[i] >= 0))
    t = time.perf_counter()
    res = pyo.SolverFactory("mcpkit").solve(m, timelimit=0.01)
    assert time.perf_counter() - t <= 1.1 * 0.01 + 2.0
    assert res.solver.termination_condition is TerminationCondition.maxTimeLimit
    res = pyo.SolverFactory("mcpkit").solve(m)  # without a limit it solves
    assert res.solver.termination_condition is TerminationCondition.optimal
