"""Issue 29 item 5: the friction coefficient of the seed-000 slider identified from a simulated
trajectory by Gauss-Newton on the squared pose error (the tutorial's computation)."""

from __future__ import annotations

import numpy as np
import pytest

from mcpkit.models.ecp import make_model, paper_slider
from mcpkit.models.stepping import simulate
from mcpkit.models.stepping_gradient import simulate_with_gradient

pytestmark = pytest.mark.solver


def test_gauss_newton_identifies_mu_of_the_seed_000_slider() -> None:
    """Observed poses from the published slider (mu = 0.31) over 0.2 s; from mu = 0.2 the chain-rule
    gradient of the loss equals central finite differences to 1e-7 relative, and Gauss-Newton
    reaches the true mu to 1e-9 within 8 iterations, the loss falling monotonically."""
    P = paper_slider()
    x0 = np.array([0.0, 0.0, 0.0, 0.7, 0.9, 10.0])
    N = 20
    model = make_model("complementarity", P)
    model.set_start(x0)
    observed = simulate(model, x0, N, tol=1e-12).states[:, :3]

    def loss_and_jacobian(mu: float) -> tuple[float, np.ndarray, np.ndarray]:
        run = simulate_with_gradient(model.with_constants(mu=mu), x0, N, wrt=["mu"], tol=1e-12)
        assert run.sim.solved
        r = (run.states[:, :3] - observed).reshape(-1)
        return 0.5 * float(r @ r), r, run.d_states[:, :3, 0].reshape(-1)

    mu = 0.2
    L, r, J = loss_and_jacobian(mu)
    eps = 1e-6
    fd = (loss_and_jacobian(mu + eps)[0] - loss_and_jacobian(mu - eps)[0]) / (2 * eps)
    assert abs(r @ J - fd) <= 1e-7 * abs(fd)
    losses = [L]
    for _ in range(8):
        mu -= float(J @ r) / float(J @ J)
        L, r, J = loss_and_jacobian(mu)
        losses.append(L)
        if abs(r @ J) < 1e-12:
            break
    assert abs(mu - P.mu) <= 1e-9
    assert all(b < a for a, b in zip(losses, losses[1:], strict=False) if a > 1e-24)
