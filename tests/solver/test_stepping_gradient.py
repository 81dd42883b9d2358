"""Gradients through horizons (issue 29 item 4): simulate_with_gradient against finite
differences of whole simulations, and its honesty at a stick-slip transition."""

from __future__ import annotations

import numpy as np
import pytest

from mcpkit.errors import NotDifferentiableError
from mcpkit.models.ecp import make_model, paper_slider
from mcpkit.models.stepping import simulate
from mcpkit.models.stepping_gradient import simulate_with_gradient
from mcpkit.models.stewart_trinkle import Contact, NCPStep, Particle, PlaneSurface
from tests.finite_differences import assert_columns_close, central_fd

pytestmark = pytest.mark.solver

TOL = 1e-12  # solve tolerance: finite differences of the runs need solutions far below their step
X0_SLIDE = np.array([0.0, 0.0, 0.0, 0.7, 0.9, 10.0])  # seed 000 §6.1


@pytest.mark.parametrize("kind", ["quadratic", "complementarity"])
def test_ecp_sliding_gradient_matches_finite_differences(kind: str) -> None:
    """Seed-000 slider sliding for 0.3 s (no stick-slip transition): d x_N / d(mu, m, I_z, x0)
    from the steps' sensitivities equals central differences of whole simulations to 1e-6."""
    P = paper_slider()
    N = 30
    model = make_model(kind, P)
    model.set_start(X0_SLIDE)
    g = simulate_with_gradient(model, X0_SLIDE, N, wrt=["mu", "m", "I_z", "x0"], tol=TOL)
    assert g.sim.solved and (g.sim.block("sigma") > 1e-3).all()  # slides throughout
    assert g.jacobian.shape == (6, 9) and g.d_states.shape == (N + 1, 6, 9)
    np.testing.assert_allclose(g.theta[:3], [P.mu, P.m, P.I_z])

    def final_state(theta: np.ndarray) -> np.ndarray:
        m = make_model(kind, P).with_constants(mu=theta[0], m=theta[1], I_z=theta[2])
        m.set_start(theta[3:])
        return simulate(m, theta[3:], N, tol=TOL).states[-1]

    assert_columns_close(g.jacobian, central_fd(final_state, g.theta), 1e-6)
    # the whole trajectory's derivative too (a middle state)
    k = N // 2

    def middle_state(theta: np.ndarray) -> np.ndarray:
        m = make_model(kind, P).with_constants(mu=theta[0])
        m.set_start(X0_SLIDE)
        return simulate(m, X0_SLIDE, k, tol=TOL).states[-1]

    fd = central_fd(middle_state, g.theta[:1])
    assert_columns_close(g.wrt_block("mu")[k], fd, 1e-6)


def test_stewart_trinkle_particle_gradient_matches_finite_differences() -> None:
    """A particle sliding on a plane (Stewart-Trinkle NCP, quadratic cone), before it stops:
    d x_N / d(mu, x0) equals central differences of whole simulations to 1e-6."""
    st = NCPStep(Particle.cgs(mass=1.0), [Contact(PlaneSurface(), 0.3)], 1e-3)
    x0 = st.initial_state([0, 0, 0], [6.0, 3.0, 0.0])
    N = 15
    g = simulate_with_gradient(st, x0, N, wrt=["mu", "x0"], tol=TOL)
    assert g.sim.solved

    def final_state(theta: np.ndarray) -> np.ndarray:
        return simulate(st.with_constants(mu=theta[:1]), theta[1:], N, tol=TOL).states[-1]

    J_fd = central_fd(final_state, g.theta)
    moving = [0, 1, 2, 4, 5]  # mu, and x0's x, y, v_x, v_y: the columns that move x_N in the plane
    # x0's z and v_z columns: the particle is pressed onto the plane; check them absolutely
    assert_columns_close(g.jacobian[:, moving], J_fd[:, moving], 1e-6)
    np.testing.assert_allclose(g.jacobian, J_fd, rtol=0, atol=1e-6)


def _exact_stop_slider() -> tuple[object, np.ndarray, float]:
    """Pure translation whose speed is exactly 5 mu g h: the slider stops at the end of step 4
    with its friction wrench on the ellipsoid (sigma = 0 and slack = 0: a degenerate pair)."""
    P = paper_slider()
    dv = P.mu * P.g * P.h
    x0 = np.array([0.0, 0.0, 0.0, 0.6 * 5 * dv, 0.8 * 5 * dv, 0.0])
    return P, x0, dv


def test_stick_slip_transition_raises_and_directional_matches_one_sided_fd() -> None:
    """At the stick-slip step the Jacobian does not exist: NotDifferentiableError names step 4 and
    sigma[0]. With a direction, the derivative equals one-sided differences (eps = 1e-7, error
    O(eps)), and the two one-sided derivatives differ (the kink is real)."""
    P, x0, _ = _exact_stop_slider()
    N = 8
    model = make_model("complementarity", P)
    model.set_start(x0)
    with pytest.raises(NotDifferentiableError, match="step 4") as info:
        simulate_with_gradient(model, x0, N, wrt=["mu", "x0"], tol=TOL)
    assert info.value.pairs == ["sigma[0]"] and info.value.step == 4  # type: ignore[attr-defined]

    theta = np.concatenate([[P.mu], x0])

    def final_state(th: np.ndarray) -> np.ndarray:
        m = make_model("complementarity", P).with_constants(mu=th[0])
        m.set_start(th[1:])
        return simulate(m, th[1:], N, tol=TOL).states[-1]

    base = final_state(theta)
    eps = 1e-7
    derivs = {}
    for name, d in {
        "+mu": np.r_[1.0, np.zeros(6)],
        "-mu": np.r_[-1.0, np.zeros(6)],
        "+v_x": np.r_[0, 0, 0, 0, 1.0, 0, 0],
        "-v_x": np.r_[0, 0, 0, 0, -1.0, 0, 0],
    }.items():
        g = simulate_with_gradient(model, x0, N, wrt=["mu", "x0"], direction=d, tol=TOL)
        assert g.degenerate_steps == [4]
        fd = (final_state(theta + eps * d) - base) / eps
        np.testing.assert_allclose(g.jacobian, fd, rtol=0, atol=1e-6 * np.abs(fd).max())
        derivs[name] = g.jacobian
    # not differentiable: the derivative in -d is not minus the derivative in d
    assert np.abs(derivs["+mu"] + derivs["-mu"]).max() > 1e-3
    assert np.abs(derivs["+v_x"] + derivs["-v_x"]).max() > 1e-3
