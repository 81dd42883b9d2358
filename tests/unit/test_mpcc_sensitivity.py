"""mpcc_sensitivity at exact points, without a solver: each failed strong-stability condition is named.

The points are exact strongly stationary solutions in closed form, so only the checks and the
linear algebra of :mod:`mcpkit.stationarity.mpcc_sensitivity` are under test.
"""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

import mcpkit
from mcpkit.errors import NotDifferentiableError
from mcpkit.stationarity.mpcc_sensitivity import mpcc_sensitivity
from mcpkit.stationarity.value_gradient import value_gradient


def test_nonlinear_branch_with_parameter_in_the_constraint() -> None:
    # min (x1 - 2)^2 + (x3 - 2)^2 + x2^2 + x2 s.t. x1^2 + x3^2 <= p^2, 0 <= x2 ⟂ x1 >= 0 at p = 1:
    # G = x2 active (x2 = 0, nu = 1), H = x1 > 0, the disc active: x1 = x3 = p / sqrt 2, so
    # dx/dp = (1/sqrt 2, 0, 1/sqrt 2) (a nonlinear constraint with p in it: W and L_xp both enter)
    x = ca.SX.sym("x", 3)
    p = ca.SX.sym("p", 1)
    f = (x[0] - 2) ** 2 + (x[2] - 2) ** 2 + x[1] ** 2 + x[1]
    m = mcpkit.MPCC.from_casadi(
        x, x[1], x[0], f=f, g=x[0] ** 2 + x[2] ** 2 - p[0] ** 2, lbg=-np.inf, ubg=0.0, p=p, p0=[1.0]
    )
    r = 1.0 / np.sqrt(2.0)
    S = mpcc_sensitivity(m, np.array([r, 0.0, r]), np.array([1.0]), 1e-10)
    np.testing.assert_allclose(S[:, 0], [r, 0.0, r], atol=1e-10)


def test_zero_multiplier_of_an_active_inequality_is_named() -> None:
    # min (x1 - p)^2 + (x2 - 1)^2 + x3 s.t. x1 <= p (g), 0 <= x3 ⟂ x2 >= 0: at x1 = p the row g is
    # active with multiplier 0, so x1 may leave it: strict complementarity fails on the branch
    x = ca.SX.sym("x", 3)
    p = ca.SX.sym("p", 1)
    m = mcpkit.MPCC.from_casadi(
        x, x[2], x[1], f=(x[0] - p[0]) ** 2 + (x[1] - 1) ** 2 + x[2], g=x[0] - p[0], lbg=-np.inf, ubg=0.0,
        p=p, p0=[0.5],
    )  # fmt: skip
    with pytest.raises(NotDifferentiableError, match=r"zero multiplier.*g\[0\]"):
        mpcc_sensitivity(m, np.array([0.5, 1.0, 0.0]), np.array([0.5]), 1e-10)


def test_second_order_sufficiency_failure_reports_the_eigenvalue() -> None:
    # min (x1 - p)^4 + (x2 + 1)^2 + (x3 - 1)^2, 0 <= x2 ⟂ x3 >= 0: x = (p, 0, 1), nu = 2; the
    # Hessian vanishes along x1 (12 (x1 - p)^2 = 0), so the reduced Hessian is singular
    x = ca.SX.sym("x", 3)
    p = ca.SX.sym("p", 1)
    m = mcpkit.MPCC.from_casadi(
        x, x[1], x[2], f=(x[0] - p[0]) ** 4 + (x[1] + 1) ** 2 + (x[2] - 1) ** 2, p=p, p0=[0.3]
    )
    with pytest.raises(NotDifferentiableError, match="second-order sufficiency fails.*smallest eigenvalue"):
        mpcc_sensitivity(m, np.array([0.3, 0.0, 1.0]), np.array([0.3]), 1e-10)
    # the same point with a quadratic in x1 is strongly stable: dx/dp = (1, 0, 0)
    m2 = mcpkit.MPCC.from_casadi(
        x, x[1], x[2], f=(x[0] - p[0]) ** 2 + (x[1] + 1) ** 2 + (x[2] - 1) ** 2, p=p, p0=[0.3]
    )
    S = mpcc_sensitivity(m2, np.array([0.3, 0.0, 1.0]), np.array([0.3]), 1e-10)
    np.testing.assert_allclose(S[:, 0], [1.0, 0.0, 0.0], atol=1e-12)


def test_general_bounds_pair_is_lowered_and_slacks_dropped() -> None:
    # min (x1 - p)^2 + (x2 - 0.5)^2 with the box pair 0 <= x1 <= 1 ⟂ x2 (H = x1 in a box, G = x2):
    # lowered with slacks; the answer has the two original variables only. At p = 0.4 the local
    # solution x = (p, 0) (x1 inside its box, G = 0) moves with p; x = (0, 0.5) (x1 at its lower
    # bound, G > 0) does not
    x = ca.SX.sym("x", 2)
    p = ca.SX.sym("p", 1)
    m = mcpkit.MPCC.from_casadi(
        x, x[1], x[0], f=(x[0] - p[0]) ** 2 + (x[1] - 0.5) ** 2, p=p, p0=[0.4], lbG=-np.inf, ubH=1.0
    )
    assert not m.is_standard()
    S = mpcc_sensitivity(m, np.array([0.4, 0.0]), np.array([0.4]), 1e-10)
    assert S.shape == (2, 1)
    np.testing.assert_allclose(S[:, 0], [1.0, 0.0], atol=1e-12)
    S0 = mpcc_sensitivity(m, np.array([0.0, 0.5]), np.array([0.4]), 1e-10)
    np.testing.assert_allclose(S0[:, 0], [0.0, 0.0], atol=1e-12)
    # value_gradient on the same lowered problem (the slacks' own bounds are not counted as rows, so
    # MPCC-LICQ holds): f* = p^2 on the branch x1 = 0, f* = 0 on x1 = p
    pv = np.array([0.4])
    np.testing.assert_allclose(value_gradient(m, np.array([0.0, 0.5]), pv, 1e-10), [0.8], atol=1e-12)
    np.testing.assert_allclose(value_gradient(m, np.array([0.4, 0.0]), pv, 1e-10), [0.0], atol=1e-12)
