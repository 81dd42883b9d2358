"""Issue 29 item 2: MPCCResult.value_gradient() = df*/dp from the multipliers (envelope theorem),
against finite differences of re-solves, and its refusal where the multipliers are not unique."""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

import mcpkit
from mcpkit.errors import NotDifferentiableError

pytestmark = pytest.mark.solver


def _mpcc(p0: list[float]) -> mcpkit.MPCC:
    r"""min (x1-p1)^2 + (x2-p2)^2 + (x3-1)^2  s.t.  x1 + x3 - p3 <= 0,  0 <= x1 ⟂ x2 >= 0."""
    x = ca.SX.sym("x", 3)
    p = ca.SX.sym("p", 3)
    f = (x[0] - p[0]) ** 2 + (x[1] - p[1]) ** 2 + (x[2] - 1) ** 2
    return mcpkit.MPCC.from_casadi(
        x, x[0], x[1], f=f, g=x[0] + x[2] - p[2], lbg=-np.inf, ubg=0.0, p=p, p0=p0, x0=[0.5, 0.5, 0.5]
    )


def test_value_gradient_matches_closed_form_and_resolves() -> None:
    """At p = (1, -0.5, 1.5) the solution x = (0.75, 0, 0.75) is unique and strongly stable (g active
    with lambda = 0.5, H active with xi = 1, G inactive): df*/dp = (0.5, -1, -0.5) in closed form,
    and central differences of re-solves agree to 1e-6."""
    p0 = np.array([1.0, -0.5, 1.5])
    solver = mcpkit.MPCCSolver(_mpcc(list(p0)), tol=1e-10)
    res = solver.solve(p0)
    assert res.solved
    np.testing.assert_allclose(res.x, [0.75, 0.0, 0.75], atol=1e-7)
    grad = res.value_gradient()
    np.testing.assert_allclose(grad, [0.5, -1.0, -0.5], rtol=0, atol=1e-7)
    fd = np.zeros(3)
    for j in range(3):
        e = np.zeros(3)
        e[j] = 1e-5
        fd[j] = (solver.solve(p0 + e).f - solver.solve(p0 - e).f) / 2e-5
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-8)


def test_value_gradient_refuses_when_licq_fails() -> None:
    """Where MPCC-LICQ fails (the multipliers are not unique) value_gradient raises and says so."""
    x = ca.SX.sym("x", 2)
    p = ca.SX.sym("p", 1)
    # min (x1 - p)^2 + (x2 + 1)^2  s.t.  x1 <= 0 (g), 0 <= x1 ⟂ x2 >= 0: at p = 1, x = (0, 0) with the
    # rows g = x1 and G = x1 both active: their gradients coincide, the multipliers are not unique
    m = mcpkit.MPCC.from_casadi(
        x, x[0], x[1], f=(x[0] - p[0]) ** 2 + (x[1] + 1) ** 2, g=x[0], lbg=-np.inf, ubg=0.0, p=p, p0=[1.0]
    )
    res = mcpkit.MPCCSolver(m, tol=1e-10).solve()
    assert res.solved
    with pytest.raises(NotDifferentiableError, match="MPCC-LICQ fails"):
        res.value_gradient()


def test_sensitivity_matches_closed_form_and_resolves() -> None:
    """Issue 29 item 2, MPCCResult.sensitivity: at p = (1, -0.5, 1.5) the branch NLP is
    min (x1-p1)^2 + (x3-1)^2 s.t. x1 + x3 = p3, x2 = 0, so x1 = (p1 - 1 + p3)/2,
    x3 = (1 - p1 + p3)/2: dx/dp = [[.5, 0, .5], [0, 0, 0], [-.5, 0, .5]]; central differences of
    re-solves agree to 1e-6, and a direction gives the matching column combination."""
    p0 = np.array([1.0, -0.5, 1.5])
    solver = mcpkit.MPCCSolver(_mpcc(list(p0)), tol=1e-10)
    res = solver.solve(p0)
    assert res.solved
    S = res.sensitivity()
    assert S.shape == (3, 3)
    np.testing.assert_allclose(S, [[0.5, 0, 0.5], [0, 0, 0], [-0.5, 0, 0.5]], rtol=0, atol=1e-7)
    fd = np.zeros((3, 3))
    h = 1e-5
    for j in range(3):
        e = np.zeros(3)
        e[j] = h
        plus, minus = solver.solve(p0 + e), solver.solve(p0 - e)
        assert plus.solved and minus.solved
        fd[:, j] = (plus.x - minus.x) / (2 * h)
    np.testing.assert_allclose(S, fd, rtol=1e-6, atol=1e-6)
    dp = np.array([1.0, 2.0, -1.0])
    np.testing.assert_allclose(res.sensitivity(direction=dp), S @ dp, atol=1e-12)


def test_sensitivity_refuses_a_biactive_point() -> None:
    """min (x1 - p)^2 + (x2 - p)^2 s.t. 0 <= x1 ⟂ x2 >= 0 at p = -1: x = (0, 0) is biactive
    (strongly stationary, nu = xi = 2, MPCC-LICQ holds), so the branch is not determined."""
    x = ca.SX.sym("x", 2)
    p = ca.SX.sym("p", 1)
    m = mcpkit.MPCC.from_casadi(
        x, x[0], x[1], f=(x[0] - p[0]) ** 2 + (x[1] - p[0]) ** 2, p=p, p0=[-1.0], x0=[0.5, 0.5]
    )
    res = mcpkit.MPCCSolver(m, tol=1e-10).solve()
    assert res.solved
    np.testing.assert_allclose(res.x, [0.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(res.value_gradient(), [-4.0], atol=1e-6)  # f* = 2 p^2: multipliers exist
    with pytest.raises(NotDifferentiableError, match="biactive") as info:
        res.sensitivity()
    assert info.value.pairs == ["pair 0"]
