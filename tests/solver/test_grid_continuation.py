"""Grid continuation on the block: a coarse plan mapped to the fine grid is (nearly) a plan of the
fine grid, and the continuation solve ends at the cold solve's plan."""

from __future__ import annotations

import numpy as np
import pytest

from mcpkit.mpec.examples.block import BlockTask, block_horizon, sliding_qp_plan, solve_block
from mcpkit.mpec.grid_continuation import ControlMap, GridContinuation, map_controls

pytestmark = pytest.mark.solver


@pytest.fixture(scope="module")
def coarse50() -> object:
    res, _ = solve_block(BlockTask(n_steps=50))
    assert res.solved, res.message
    return res


@pytest.mark.parametrize(("how", "atol"), [(ControlMap.HOLD, 1e-6), (ControlMap.LINEAR, 5e-3)])
def test_mapped_coarse_plan_is_nearly_feasible_on_the_fine_grid(coarse50: object, how: ControlMap,
                                                               atol: float) -> None:  # fmt: skip
    """The 50-step plan's force mapped to 100 steps and simulated: every step's pairs complementary
    (the fine MPCC's residual at the initial guess), and the terminal state (5 m, at rest) missed
    by at most ``atol``: 1e-6 for the held force (per coarse step the fine velocity increments
    add to the coarse one, and the position defect (H^2/4) sum_j a_j vanishes with the velocity
    change), the interpolation error of the linear map otherwise."""
    fine = block_horizon(BlockTask(n_steps=100))
    U = map_controls(coarse50.controls, 100, how)
    assert U.shape == (100, 1)
    sim = fine.simulate(U)
    assert np.isfinite(sim.states).all()
    np.testing.assert_allclose(sim.states[-1], [5.0, 0, 0, 0, 0, 0], rtol=0, atol=atol)
    x0 = fine.initial_guess(U)
    parts = fine.unpack(x0)
    np.testing.assert_allclose(parts["controls"], U, rtol=0, atol=0)
    G = np.asarray(fine.mpcc.function("G")(x0, fine.mpcc.p0)).reshape(-1)
    H = np.asarray(fine.mpcc.function("H")(x0, fine.mpcc.p0)).reshape(-1)
    assert np.max(np.abs(np.minimum(G, H))) <= 1e-6


def test_continuation_solve_ends_at_the_cold_plan() -> None:
    """N = 100 from a 50-step plan: solved and certified, the closed form's cost within 1e-6
    (relative; the cold plan's too), the coarse plan recorded and its iterations counted."""
    task = BlockTask(n_steps=100)
    _, cost = sliding_qp_plan(task)
    res, hz = solve_block(task, continuation=GridContinuation(min_steps=50))
    cold, _ = solve_block(task, continuation=False)
    assert res.solved, res.message
    assert cold.solved, cold.message
    assert res.mpcc.stationarity == "S"
    assert [len(c.t) - 1 for c in res.coarse] == [50]
    assert res.total_iterations == res.mpcc.iterations + res.coarse[0].mpcc.iterations
    assert res.objective == pytest.approx(cost, rel=1e-6, abs=0)
    assert res.objective == pytest.approx(cold.objective, rel=1e-6, abs=0)
    np.testing.assert_allclose(res.states[-1], [5.0, 0, 0, 0, 0, 0], rtol=0, atol=1e-6)
    assert res.max_deviation <= 1e-4
    assert hz.N == 100 and not cold.coarse
