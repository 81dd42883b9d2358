"""Compiled rollouts (issue 46) against the per-step route (IPOPT through mcpkit.Solver).

Gravity is passed explicitly (SI) so that nothing depends on a model's default units.
"""

from __future__ import annotations

import numpy as np
import pytest

from mcpkit.models import CompiledRollout, rollout
from mcpkit.models.ecp import make_model, run_ecp
from mcpkit.models.ecp.params import SliderParams
from mcpkit.models.stepping import simulate
from mcpkit.models.stepping_gradient import simulate_with_gradient
from mcpkit.models.stewart_trinkle import Contact, LCPStep, NCPStep, Particle, PlaneSurface

pytestmark = pytest.mark.solver

X0_SLIDE = np.array([0.0, 0.0, 0.0, 0.7, 0.9, 10.0])  # seed 000 §6.1
G_SI = np.array([0.0, 0.0, -9.81])
TOL = 1e-10


def _particle(cls: type) -> tuple[object, np.ndarray]:
    st = cls(Particle(mass=1.0, gravity=G_SI), [Contact(PlaneSurface(), 0.3)], 1e-2)
    return st, st.initial_state([0.0, 0.0, 0.0], [1.0, 0.5, 0.0])


@pytest.mark.parametrize("kind", ["quadratic", "complementarity"])
def test_slider_trajectory_equals_the_per_step_route(kind: str) -> None:
    """§6.1, 45 steps: states and step solutions equal run_ecp's (IPOPT, tol 1e-10) to 1e-8,
    every compiled step within 1e-10 and none re-solved."""
    model = make_model(kind, SliderParams(g=9.8))
    ref = run_ecp(model, X0_SLIDE, 0.45, tol=TOL)
    assert ref.sim.solved
    res = rollout(model, X0_SLIDE, steps=45, tol=TOL)
    assert res.solved and not res.resolved.any() and res.max_residual <= TOL
    np.testing.assert_allclose(res.states[0], ref.states, rtol=0, atol=1e-8)
    np.testing.assert_allclose(res.z[0], ref.sim.z, rtol=0, atol=1e-8)


@pytest.mark.parametrize("cls", [NCPStep, LCPStep])
def test_particle_slide_then_stick_equals_the_per_step_route(cls: type) -> None:
    """A particle on a plane slides and stops (about step 38), 60 steps: the trajectory equals
    simulate's to 1e-8 and every step passes its MCP residual and its Coulomb check."""
    st, x0 = _particle(cls)
    ref = simulate(st, x0, 60, tol=TOL)
    assert ref.solved
    res = rollout(st, x0, steps=60, tol=TOL)
    assert res.solved, res.notes
    np.testing.assert_allclose(res.states[0], ref.states, rtol=0, atol=1e-8)
    speed = np.hypot(res.states[0, :, 3], res.states[0, :, 4])
    assert speed[20] > 0.1 and speed[-1] < 1e-9


def test_failed_steps_are_resolved_by_the_per_step_route() -> None:
    """A compiled solver cut to one undamped iteration misses tol at some steps; each is re-solved
    by the per-step route (marked resolved), the compiled rollout continues from there, and the
    whole trajectory equals the per-step route's to 1e-8 and is solved."""
    model = make_model("complementarity", SliderParams(g=9.8))
    ref = run_ecp(model, X0_SLIDE, 0.45, tol=TOL)
    res = rollout(
        model, X0_SLIDE, steps=45, tol=TOL, iterations_per_block=1, blocks=1, line_search_halvings=0
    )
    assert res.resolved.any() and res.solved
    assert (res.residual[0][res.resolved[0]] <= TOL).all()
    np.testing.assert_allclose(res.states[0], ref.states, rtol=0, atol=1e-8)
    flagged = rollout(
        model, X0_SLIDE, steps=45, tol=TOL, iterations_per_block=1, blocks=1, line_search_halvings=0,
        resolve_failed=False,
    )  # fmt: skip
    assert not flagged.solved
    np.testing.assert_array_equal(np.argwhere(~flagged.step_solved)[0], np.argwhere(res.resolved)[0])


def test_batch_with_resolved_rows_equals_single_runs() -> None:
    """Repairs run row by row in a batch: each row equals its own per-step run to 1e-8."""
    model = make_model("quadratic", SliderParams(g=9.8))
    X0 = np.stack([X0_SLIDE, X0_SLIDE + [0, 0, 0, 0.05, -0.05, 1.0]])
    res = rollout(model, batch=X0, steps=30, tol=TOL, iterations_per_block=1, blocks=2)
    assert res.solved
    for b in range(2):
        ref = run_ecp(model, X0[b], 0.30, tol=TOL)
        np.testing.assert_allclose(res.states[b], ref.states, rtol=0, atol=1e-8)


def test_gradient_equals_the_per_step_sensitivities() -> None:
    """Sliding (non-degenerate) slider: the compiled rollout's d x_K / d(mu, x0) equals
    simulate_with_gradient's chain of per-step sensitivities to 1e-6 (relative per column)."""
    model = make_model("complementarity", SliderParams(g=9.8))
    model.set_start(X0_SLIDE)
    per_step = simulate_with_gradient(model, X0_SLIDE, 30, wrt=["mu", "x0"], tol=1e-12)
    g = CompiledRollout(model).jacobian(X0_SLIDE, steps=30, wrt=("mu", "x0"))
    assert g.solved and not g.degenerate_steps
    for j in range(g.jacobian.shape[1]):
        scale = max(np.abs(per_step.jacobian[:, j]).max(), 1e-300)
        assert np.abs(g.jacobian[:, j] - per_step.jacobian[:, j]).max() <= 1e-6 * scale
