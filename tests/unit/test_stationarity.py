"""MPCC stationarity classification (weak/C/M/S multipliers and the B-stationarity LPEC).

Every expected level and multiplier below is derived by hand from the definitions
(Scheel & Scholtes 2000; Ye 2005) in the test's docstring, with the convention

    grad f + J_g^T lam_g + lam_x - J_G^T nu - J_H^T xi = 0,

lam >= 0 at an active upper bound, lam <= 0 at an active lower bound. No IPOPT runs.
"""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError
from mcpkit.mpcc import MPCC
from mcpkit.solving.result import MPCCResult, SolutionStatus, Termination
from mcpkit.stationarity.certificate import (
    Stationarity,
    StationarityReport,
    attach_stationarity,
    check_b_stationarity,
    classify_stationarity,
)

ATOL = 1e-8
NOP = np.zeros(0)


def _pair2(f_of: object, kind: type = ca.SX, **kw: object) -> MPCC:
    """MPCC in x in R^2 with the pair 0 <= x1 ⟂ x2 >= 0 and objective f_of(x)."""
    x = kind.sym("x", 2)
    return MPCC.from_casadi(x, x[0], x[1], f=f_of(x), **kw)  # type: ignore[operator]


def _quad(x: ca.SX) -> ca.SX:
    return (x[0] - 1) ** 2 + (x[1] - 1) ** 2


def _lagrangian_gradient(m: MPCC, x: np.ndarray, rep: StationarityReport) -> np.ndarray:
    """grad_x L recomputed independently with finite differences of f, g, G, H."""
    h = 1e-6
    n = x.size
    cols = []
    for i in range(n):
        e = np.zeros(n)
        e[i] = h
        vp, vm = m.evaluate(x + e, NOP), m.evaluate(x - e, NOP)
        cols.append(
            (vp["f"][0] - vm["f"][0]) / (2 * h)
            + rep.lam_g @ (vp["g"] - vm["g"]) / (2 * h)
            - rep.nu_G @ (vp["G"] - vm["G"]) / (2 * h)
            - rep.xi_H @ (vp["H"] - vm["H"]) / (2 * h)
        )
    return np.asarray(cols) + rep.lam_x


# --------------------------------------------------------------------------------------------
# the classic example min (x1-1)^2 + (x2-1)^2, 0 <= x1 ⟂ x2 >= 0
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", [ca.SX, ca.MX])
def test_classic_minimisers_are_s_and_b(kind: type) -> None:
    """At (1, 0): grad f = (0, -2); G = x1 = 1 inactive so nu = 0, H = x2 active, xi free:
    (0, -2) - xi (0, 1) = 0 gives xi = -2 (free, since the pair is not biactive). No biactive
    pair, so weak = S (and B). By symmetry (0, 1) has nu = -2, xi = 0."""
    m = _pair2(_quad, kind)
    rep = classify_stationarity(m, np.array([1.0, 0.0]), NOP)
    assert rep.level is Stationarity.S and rep.b_stationary is True and rep.feasible
    np.testing.assert_allclose(rep.nu_G, [0.0], atol=ATOL)
    np.testing.assert_allclose(rep.xi_H, [-2.0], atol=ATOL)
    assert rep.biactive.size == 0 and rep.stationarity_residual <= 1e-10
    rep = classify_stationarity(m, np.array([0.0, 1.0]), NOP)
    assert rep.level is Stationarity.S and rep.b_stationary is True
    np.testing.assert_allclose([rep.nu_G[0], rep.xi_H[0]], [-2.0, 0.0], atol=ATOL)


@pytest.mark.parametrize("kind", [ca.SX, ca.MX])
def test_classic_origin_is_c_not_m(kind: type) -> None:
    """At (0, 0): biactive; grad f = (-2, -2) = nu (1, 0) + xi (0, 1) so nu = xi = -2 (unique,
    MPCC-LICQ holds). nu xi = 4 >= 0: C; neither is zero and both are negative: not M, not S.
    The LPEC branch d2 = 0, d1 >= 0 gives grad f . d = -2 at d = (1, 0): not B."""
    m = _pair2(_quad, kind)
    rep = classify_stationarity(m, np.zeros(2), NOP)
    assert rep.level is Stationarity.C
    np.testing.assert_array_equal(rep.biactive, [0])
    np.testing.assert_allclose([rep.nu_G[0], rep.xi_H[0]], [-2.0, -2.0], atol=ATOL)
    assert rep.b_stationary is False
    d = rep.descent_direction
    assert d is not None
    assert min(d) >= -1e-9 and abs(d[0] * d[1]) <= 1e-9  # d in the complementarity cone
    assert -2 * d[0] - 2 * d[1] < -1.0  # the LP optimum is -2


def test_classic_parameterised_objective() -> None:
    """f = (x1 - p1)^2 + (x2 - p2)^2 at (0, 0): grad f = (-2 p1, -2 p2) = (nu, xi).
    p = (1, 1): C as above; p = (-1, -1): nu = xi = 2 >= 0, S (the origin is the minimiser)."""
    x, p = ca.SX.sym("x", 2), ca.SX.sym("p", 2)
    m = MPCC.from_casadi(x, x[0], x[1], f=(x[0] - p[0]) ** 2 + (x[1] - p[1]) ** 2, p=p, p0=[1, 1])
    assert classify_stationarity(m, np.zeros(2), np.array([1.0, 1.0])).level is Stationarity.C
    rep = classify_stationarity(m, np.zeros(2), np.array([-1.0, -1.0]))
    assert rep.level is Stationarity.S and rep.b_stationary is True
    np.testing.assert_allclose([rep.nu_G[0], rep.xi_H[0]], [2.0, 2.0], atol=ATOL)
    assert classify_stationarity(m, np.zeros(2)).level is Stationarity.C  # p=None -> p0


# --------------------------------------------------------------------------------------------
# linear objectives at the origin: S, M, C, weak
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("f_of", "nu", "xi", "level", "b"),
    [
        # grad f = (1, 1): nu = xi = 1 >= 0 -> S; f >= 0 = f(0) on the feasible set -> B.
        (lambda x: x[0] + x[1], 1.0, 1.0, Stationarity.S, True),
        # grad f = (-1, 0): nu = -1, xi = 0 -> nu xi = 0: M, not S (nu < 0). Along d = (1, 0)
        # f decreases: not B.
        (lambda x: -x[0] + x[1] ** 2, -1.0, 0.0, Stationarity.M, False),
        # grad f = (-1, -1): nu = xi = -1, product 1 > 0: C, not M.
        (lambda x: -x[0] - x[1], -1.0, -1.0, Stationarity.C, False),
        # grad f = (1, -1): nu = 1, xi = -1, product -1 < 0: only weak.
        (lambda x: x[0] - x[1], 1.0, -1.0, Stationarity.WEAK, False),
    ],
)
def test_linear_objectives_at_origin(
    f_of: object, nu: float, xi: float, level: Stationarity, b: bool
) -> None:
    """Unique multipliers (grad G = e1, grad H = e2): (nu, xi) = grad f at the origin."""
    rep = classify_stationarity(_pair2(f_of), np.zeros(2), NOP)
    assert rep.level is level
    assert rep.b_stationary is b
    np.testing.assert_allclose([rep.nu_G[0], rep.xi_H[0]], [nu, xi], atol=ATOL)
    assert rep.stationarity_residual <= 1e-10


_coef = st.floats(min_value=1e-3, max_value=10.0) | st.floats(min_value=-10.0, max_value=-1e-3)


@settings(max_examples=40, deadline=None)
@given(c1=_coef, c2=_coef, c3=st.floats(0.0, 5.0) | st.floats(-5.0, -1e-3))
def test_random_linear_objectives_follow_the_sign_table(c1: float, c2: float, c3: float) -> None:
    """f = c1 x1 + c2 x2 + c3 x3, pair 0 <= x1 ⟂ x2 >= 0, x3 in [0, 1], at x = (0, 0, 0):
    MPCC-LICQ holds, (nu, xi) = (c1, c2) and lam_x3 = -c3 (lower bound active, needs c3 >= 0).
    c3 < 0: the x3 row cannot vanish -> NOT_STATIONARY. Otherwise (c1, c2 nonzero): both > 0 S
    (and B); both < 0 C; opposite signs weak; B iff S (LICQ)."""
    x = ca.SX.sym("x", 3)
    m = MPCC.from_casadi(x, x[0], x[1], f=c1 * x[0] + c2 * x[1] + c3 * x[2],
                         lbx=[-np.inf, -np.inf, 0.0], ubx=[np.inf, np.inf, 1.0])  # fmt: skip
    rep = classify_stationarity(m, np.zeros(3), NOP)
    if c3 < 0:
        assert rep.level is Stationarity.NOT_STATIONARY
        assert rep.stationarity_residual == pytest.approx(-c3, rel=1e-9)
        return
    expected = Stationarity.C if c1 * c2 > 0 else Stationarity.WEAK
    if c1 > 0 and c2 > 0:
        expected = Stationarity.S
    assert rep.level is expected
    assert rep.b_stationary is (expected is Stationarity.S)
    np.testing.assert_allclose([rep.nu_G[0], rep.xi_H[0]], [c1, c2], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(rep.lam_x[2], -c3, atol=1e-12)


def test_feasible_non_stationary_points() -> None:
    """Quadratic at (2, 0): grad f = (2, -2), only H active; the x1 row reads 2 = 0, so the
    least-squares residual is exactly 2 (xi = -2 kills the second row).
    f = x1 + x2 at (0, 1): only G active; x2 row reads 1 = 0: residual 1."""
    rep = classify_stationarity(_pair2(_quad), np.array([2.0, 0.0]), NOP)
    assert rep.level is Stationarity.NOT_STATIONARY and rep.feasible
    assert rep.stationarity_residual == pytest.approx(2.0, abs=1e-9)
    assert rep.xi_H[0] == pytest.approx(-2.0, abs=1e-9) and rep.b_stationary is False
    rep = classify_stationarity(_pair2(lambda x: x[0] + x[1]), np.array([0.0, 1.0]), NOP)
    assert rep.level is Stationarity.NOT_STATIONARY
    assert rep.stationarity_residual == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("point", [[1.0, 1.0], [-0.1, 0.0], [0.0, -1e-3], [1e-5, 1e-5]])
def test_infeasible_points(point: list[float]) -> None:
    """min(G, H) != 0 or G < 0 or H < 0 beyond tol = 1e-6 -> NOT_FEASIBLE, no verdicts."""
    rep = classify_stationarity(_pair2(_quad), np.array(point), NOP)
    assert rep.level is Stationarity.NOT_FEASIBLE and not rep.feasible
    assert rep.b_stationary is None and rep.stationarity_residual == np.inf


def test_tolerance_governs_feasibility_and_activity() -> None:
    """(1e-5, 1e-5) is infeasible at tol 1e-6 but, at tol 1e-4, feasible and biactive:
    grad f there is (-2 + 2e-5)(1, 1) -> C like the origin."""
    rep = classify_stationarity(_pair2(_quad), np.array([1e-5, 1e-5]), NOP, tol=1e-4)
    assert rep.level is Stationarity.C
    np.testing.assert_array_equal(rep.biactive, [0])


def test_residual_tol_loosens_only_the_multiplier_test() -> None:
    """Quadratic at (1 + 1e-5, 0): feasible, only H active, grad f = (2e-5, -2): the x1 row
    leaves exactly 2e-5. Threshold tol * |grad f|_inf = 2e-6 < 2e-5: not stationary; with
    residual_tol = 1e-4 the threshold is 2e-4: S (no biactive pair)."""
    m = _pair2(_quad)
    pt = np.array([1.0 + 1e-5, 0.0])
    rep = classify_stationarity(m, pt, NOP)
    assert rep.level is Stationarity.NOT_STATIONARY
    assert rep.stationarity_residual == pytest.approx(2e-5, rel=1e-6)
    rep = classify_stationarity(m, pt, NOP, residual_tol=1e-4)
    assert rep.level is Stationarity.S
    assert rep.residual_threshold == pytest.approx(1e-4 * 2.0, rel=1e-12)  # max-norm of grad f
    with pytest.raises(MCPInputError):
        classify_stationarity(m, pt, NOP, residual_tol=-1.0)


# --------------------------------------------------------------------------------------------
# general constraints and bounds
# --------------------------------------------------------------------------------------------


def test_active_inequality_constraint() -> None:
    """min -x1 - x2 s.t. x1 + x2 <= 1, 0 <= x1 ⟂ x2 >= 0.
    At (1, 0): g at its upper bound (lam >= 0), H active: (-1, -1) + lam (1, 1) - xi (0, 1) = 0
    gives lam = 1, xi = 0; no biactive pair -> S.
    At (0.5, 0): g inactive: (-1, -1) - xi (0, 1) leaves -1 in the x1 row: residual 1."""
    x = ca.SX.sym("x", 2)
    m = MPCC.from_casadi(x, x[0], x[1], f=-x[0] - x[1], g=x[0] + x[1], lbg=-np.inf, ubg=1.0)
    rep = classify_stationarity(m, np.array([1.0, 0.0]), NOP)
    assert rep.level is Stationarity.S
    np.testing.assert_allclose([rep.lam_g[0], rep.xi_H[0]], [1.0, 0.0], atol=ATOL)
    rep = classify_stationarity(m, np.array([0.5, 0.0]), NOP)
    assert rep.level is Stationarity.NOT_STATIONARY
    assert rep.stationarity_residual == pytest.approx(1.0, abs=1e-9)
    assert rep.lam_g[0] == 0.0  # inactive row


def test_lower_bound_multiplier_sign_keeps_origin_c() -> None:
    """Quadratic with x1 + x2 >= 0 (active at the origin, lam <= 0):
    nu = xi = -2 + lam <= -2 for every admissible lam, so C but not M or S (with the wrong
    sign lam = 4 would give nu = xi = 2, S). Multipliers are not unique (3 gradients in R^2)."""
    x = ca.SX.sym("x", 2)
    m = MPCC.from_casadi(x, x[0], x[1], f=_quad(x), g=x[0] + x[1], lbg=0.0, ubg=np.inf)
    rep = classify_stationarity(m, np.zeros(2), NOP)
    assert rep.level is Stationarity.C and rep.b_stationary is False
    assert rep.lam_g[0] <= 1e-12
    assert rep.nu_G[0] <= -2 + 1e-9 and rep.xi_H[0] <= -2 + 1e-9
    np.testing.assert_allclose(_lagrangian_gradient(m, np.zeros(2), rep), 0.0, atol=1e-6)


@pytest.mark.parametrize(("lbg", "ubg"), [(-np.inf, 0.0), (0.0, 0.0)])
def test_degenerate_multipliers_s_exists(lbg: float, ubg: float) -> None:
    """Quadratic with x1 + x2 <= 0 (or = 0): the feasible set is {0}, so 0 is a minimiser.
    Multipliers: nu = xi = -2 + lam with lam >= 0 (or free): a whole ray of them, and the S ones
    are lam >= 2. The classifier must find one (nu, xi >= 0) and call it S (and B)."""
    x = ca.SX.sym("x", 2)
    m = MPCC.from_casadi(x, x[0], x[1], f=_quad(x), g=x[0] + x[1], lbg=lbg, ubg=ubg)
    rep = classify_stationarity(m, np.zeros(2), NOP)
    assert rep.level is Stationarity.S and rep.b_stationary is True
    assert rep.nu_G[0] >= -1e-12 and rep.xi_H[0] >= -1e-12
    assert rep.lam_g[0] >= 2 - 1e-9
    np.testing.assert_allclose(rep.nu_G[0], rep.lam_g[0] - 2, atol=1e-9)
    np.testing.assert_allclose(_lagrangian_gradient(m, np.zeros(2), rep), 0.0, atol=1e-6)
    verdict, d = check_b_stationarity(m, np.zeros(2), NOP)  # the LPEC agrees (S => B)
    assert verdict is True and d is None


def test_b_stationary_but_not_s() -> None:
    """min -x1 s.t. x1 - x2 <= 0, 0 <= x1 ⟂ x2 >= 0 at (0, 0). Feasible set: x1 = 0, x2 >= 0
    where f = 0: a minimiser. MPCC-LICQ fails (3 active gradients in R^2). Multipliers:
    (-1, 0) + lam (1, -1) - nu (1, 0) - xi (0, 1) = 0, lam >= 0 -> nu = lam - 1, xi = -lam.
    S needs lam >= 1 and lam <= 0: impossible. M: lam = 0 (nu = -1, xi = 0) or lam = 1.
    LPEC: branch d1 = 0 -> value 0; branch d2 = 0 -> d1 <= d2 = 0 and d1 >= 0 -> value 0: B."""
    x = ca.SX.sym("x", 2)
    m = MPCC.from_casadi(x, x[0], x[1], f=-x[0], g=x[0] - x[1], lbg=-np.inf, ubg=0.0)
    rep = classify_stationarity(m, np.zeros(2), NOP)
    assert rep.level is Stationarity.B and rep.b_stationary is True
    nu, xi, lam = rep.nu_G[0], rep.xi_H[0], rep.lam_g[0]
    assert lam >= -1e-12
    np.testing.assert_allclose([nu, xi], [lam - 1, -lam], atol=1e-9)
    assert abs(nu * xi) <= 1e-9  # the reported multipliers are M-multipliers
    assert Stationarity.S.strength > Stationarity.B.strength > Stationarity.M.strength


def test_m_stationarity_depends_on_duplicated_pairs() -> None:
    """f = -x1 - 2 x2 with the pair written twice: G = (x1, x1), H = (x2, x2). At 0:
    nu1 + nu2 = -1, xi1 + xi2 = -2 (non-unique). The single-pair problem is only C
    (nu = -1, xi = -2), but here (nu, xi) = (0, -2) for pair 1 and (-1, 0) for pair 2 satisfy M.
    The minimum-norm weak multipliers (-1/2, -1) per pair suggest nu = 0 for both pairs, which
    is infeasible (nu1 + nu2 = -1), so the sign-piece enumeration must find the mixed pattern.
    Not B (d = (1, 0) is still a descent direction)."""
    x = ca.SX.sym("x", 2)
    G, H = ca.vertcat(x[0], x[0]), ca.vertcat(x[1], x[1])
    m = MPCC.from_casadi(x, G, H, f=-x[0] - 2 * x[1])
    rep = classify_stationarity(m, np.zeros(2), NOP)
    assert rep.level is Stationarity.M and rep.b_stationary is False
    np.testing.assert_allclose(rep.nu_G.sum(), -1.0, atol=1e-9)
    np.testing.assert_allclose(rep.xi_H.sum(), -2.0, atol=1e-9)
    prods = rep.nu_G * rep.xi_H
    assert np.all((np.abs(prods) <= 1e-9) | ((rep.nu_G > 0) & (rep.xi_H > 0)))
    single = MPCC.from_casadi(x, x[0], x[1], f=-x[0] - 2 * x[1])
    assert classify_stationarity(single, np.zeros(2), NOP).level is Stationarity.C


def test_bounds_on_x_as_in_mcp_lowering() -> None:
    """lbx = 0 on both variables duplicates G = x1 >= 0, H = x2 >= 0 (lam_x <= 0 at a lower
    bound). Quadratic at 0: nu = -2 + lam_x1 <= -2, xi likewise: still C, not M.
    f = x1 + x2: nu = 1 + lam_x1 can be made >= 0: S."""
    x = ca.SX.sym("x", 2)
    m = MPCC.from_casadi(x, x[0], x[1], f=_quad(x), lbx=0.0)
    rep = classify_stationarity(m, np.zeros(2), NOP)
    assert rep.level is Stationarity.C
    assert np.all(rep.lam_x <= 1e-12)
    np.testing.assert_allclose(_lagrangian_gradient(m, np.zeros(2), rep), 0.0, atol=1e-6)
    m = MPCC.from_casadi(x, x[0], x[1], f=x[0] + x[1], lbx=0.0)
    assert classify_stationarity(m, np.zeros(2), NOP).level is Stationarity.S


def test_mx_with_constraints_and_bounds() -> None:
    """The S example of test_active_inequality_constraint built with MX and an upper bound
    x1 <= 1 also active: (-1, -1) + lam_g (1, 1) + lam_x (1, 0) - xi (0, 1) = 0 with
    lam_g, lam_x >= 0: lam_g + lam_x = 1, xi = lam_g - 1 (free: the pair is not biactive),
    so the point is S with non-unique multipliers."""
    x = ca.MX.sym("x", 2)
    m = MPCC.from_casadi(x, x[0], x[1], f=-x[0] - x[1], g=x[0] + x[1], lbg=-np.inf, ubg=1.0,
                         ubx=[1.0, np.inf])  # fmt: skip
    rep = classify_stationarity(m, np.array([1.0, 0.0]), NOP)
    assert rep.level is Stationarity.S
    assert rep.lam_g[0] >= -1e-12 and rep.lam_x[0] >= -1e-12
    np.testing.assert_allclose(rep.lam_g[0] + rep.lam_x[0], 1.0, atol=1e-9)
    np.testing.assert_allclose(rep.xi_H[0], rep.lam_g[0] - 1.0, atol=1e-9)


def test_pure_feasibility_problem_mx() -> None:
    """f = 0 (MX): grad f = 0, so all multipliers 0 work and every feasible point is S (and B,
    every LPEC value is 0), including the biactive origin."""
    x = ca.MX.sym("x", 2)
    m = MPCC.from_casadi(x, x[0], x[1])
    for pt in ([0.0, 0.0], [3.0, 0.0]):
        rep = classify_stationarity(m, np.array(pt), NOP)
        assert rep.level is Stationarity.S and rep.b_stationary is True
        np.testing.assert_allclose(np.concatenate([rep.nu_G, rep.xi_H]), 0.0, atol=ATOL)
    assert check_b_stationarity(m, np.zeros(2), NOP) == (True, None)


# --------------------------------------------------------------------------------------------
# LPEC controls
# --------------------------------------------------------------------------------------------


def test_lpec_skipped_above_max_biactive() -> None:
    """With lpec_max_biactive = 0 the biactive origin gets b_stationary None; the multiplier
    levels are unaffected (quadratic: C; f = x1 + x2: S, which implies B without the LPEC)."""
    rep = classify_stationarity(_pair2(_quad), np.zeros(2), NOP, lpec_max_biactive=0)
    assert rep.level is Stationarity.C and rep.b_stationary is None
    m = _pair2(lambda x: x[0] + x[1])
    rep = classify_stationarity(m, np.zeros(2), NOP, lpec_max_biactive=0)
    assert rep.level is Stationarity.S and rep.b_stationary is True


def test_check_b_stationarity_many_pairs() -> None:
    """n = 4 pairs 0 <= x_i ⟂ y_i >= 0 at 0 with f = sum(x) + sum(y): every branch LP has
    value 0 (d >= 0 on the cone): B after 2^4 LPs. With f = sum(x) - y_4: the branch
    grad G_4 d = 0, d_{y4} = 1 gives -1: not B, and d is such a direction."""
    z = ca.SX.sym("z", 8)
    xs, ys = z[:4], z[4:]
    m = MPCC.from_casadi(z, xs, ys, f=ca.sum1(xs) + ca.sum1(ys))
    verdict, d = check_b_stationarity(m, np.zeros(8), NOP)
    assert verdict is True and d is None
    m = MPCC.from_casadi(z, xs, ys, f=ca.sum1(xs) - ys[3])
    verdict, d = check_b_stationarity(m, np.zeros(8), NOP)
    assert verdict is False and d is not None
    assert np.sum(d[:4]) - d[7] < -0.5 and np.all(np.abs(d[:4] * d[4:]) <= 1e-9)
    assert check_b_stationarity(m, np.zeros(8), NOP, max_biactive=3) == (None, None)
    with pytest.raises(MCPInputError, match="not feasible"):
        check_b_stationarity(m, np.ones(8), NOP)


# --------------------------------------------------------------------------------------------
# general-bounds MPCC (lowered with slacks)
# --------------------------------------------------------------------------------------------


def _general() -> MPCC:
    """0 <= H = x2 <= 1 ⟂ G = x1 (box-MCP pair), f = (x1 + 1)^2 + (x2 - 2)^2."""
    x = ca.SX.sym("x", 2)
    inf = np.array([np.inf])
    return MPCC(
        x=x, p=ca.SX(0, 1), f=(x[0] + 1) ** 2 + (x[1] - 2) ** 2, g=ca.SX(0, 1),
        lbg=NOP, ubg=NOP, lbx=-np.inf * np.ones(2), ubx=np.inf * np.ones(2), x0=np.zeros(2),
        p0=NOP, G=x[0], H=x[1], lbG=-inf, ubG=inf, lbH=np.zeros(1), ubH=np.ones(1),
    )  # fmt: skip


def test_general_mpcc_is_lifted() -> None:
    """Lowered: x2 ⟂ w, 1 - x2 ⟂ v, x1 - w + v = 0 (lam free), slacks w = max(G, 0),
    v = max(-G, 0). At (-1, 1) (x2 at its upper bound, G = -1 <= 0): w = 0, v = 1; rows
    x1: lam = 0, x2: -2 + nu2 = 0, w: -lam - xi1 = 0, v: lam = 0 -> residual 0, no biactive: S.
    At (0, 0.5): w = v = 0, both H's active, the x2 row reads -3 = 0: residual 3."""
    prob = _general()
    rep = classify_stationarity(prob, np.array([-1.0, 1.0]), NOP)
    assert rep.level is Stationarity.S and rep.nu_G.size == 2
    np.testing.assert_allclose(rep.nu_G, [0.0, 2.0], atol=ATOL)
    rep = classify_stationarity(prob, np.array([0.0, 0.5]), NOP)
    assert rep.level is Stationarity.NOT_STATIONARY
    assert rep.stationarity_residual == pytest.approx(3.0, abs=1e-9)


# --------------------------------------------------------------------------------------------
# attach_stationarity and errors
# --------------------------------------------------------------------------------------------


def _result(x: np.ndarray) -> MPCCResult:
    nan = np.full(1, np.nan)
    return MPCCResult(
        x=x, f=np.nan, g=np.zeros(0), G=nan, H=nan, comp_residual=0.0, constraint_violation=0.0,
        termination=Termination.CONVERGED, solution_status=SolutionStatus.SOLUTION, tol=1e-6,
        iterations=0, wall_time_s=0.0, backend="casadi", method="scholtes",
    )  # fmt: skip


def test_attach_stationarity() -> None:
    """(1, 0) of the classic example is S (see above); a NaN point is recorded as not feasible."""
    m = _pair2(_quad)
    res = attach_stationarity(_result(np.array([1.0, 0.0])), m, NOP)
    assert res.stationarity == "S" and res.summary()["stationarity"] == "S"
    assert isinstance(res.extra["stationarity_report"], StationarityReport)
    assert res.extra["stationarity_report"].level is Stationarity.S
    res = attach_stationarity(_result(np.zeros(2)), m)
    assert res.stationarity == "C"
    res = attach_stationarity(_result(np.full(2, np.nan)), m)
    assert res.stationarity == "not_feasible"
    assert res.extra["stationarity_report"].b_stationary is None


def test_bad_input_raises_typed_errors() -> None:
    m = _pair2(_quad)
    with pytest.raises(ShapeError):
        classify_stationarity(m, np.zeros(3), NOP)
    with pytest.raises(ShapeError):
        classify_stationarity(m, np.zeros((2, 1)), NOP)
    with pytest.raises(ShapeError):
        classify_stationarity(m, np.zeros(2), np.zeros(1))
    with pytest.raises(NonFiniteError):
        classify_stationarity(m, np.array([np.nan, 0.0]), NOP)
    with pytest.raises(NonFiniteError):
        classify_stationarity(m, np.array([np.inf, 0.0]), NOP)
    for bad_tol in (0.0, -1e-6, np.nan, "1e-6"):
        with pytest.raises(MCPInputError):
            classify_stationarity(m, np.zeros(2), NOP, tol=bad_tol)  # type: ignore[arg-type]
    with pytest.raises(MCPInputError):
        classify_stationarity(m, np.zeros(2), NOP, lpec_max_biactive=-1)
    with pytest.raises(MCPInputError):
        classify_stationarity("not an mpcc", np.zeros(2), NOP)  # type: ignore[arg-type]


def test_non_finite_function_values_raise() -> None:
    """f = log(x1 + x2) is -inf at the origin: NonFiniteError, not a bogus verdict."""
    m = _pair2(lambda x: ca.log(x[0] + x[1]))
    with pytest.raises(NonFiniteError):
        classify_stationarity(m, np.zeros(2), NOP)


def test_max_norm_threshold_does_not_grow_with_the_dimension() -> None:
    """f = sum_i eps * x_i over n free variables with no constraints: every row of the
    Lagrangian gradient leaves eps. The max-norm residual is eps whatever n, so with
    eps = 0.5 * tol the point is stationary at n = 4 and at n = 4000 alike (a Euclidean
    residual, eps * sqrt(n), called the large one not stationary)."""
    tol, eps = 1e-4, 5e-5
    for n in (4, 4000):
        x = ca.SX.sym("x", n + 2)
        m = MPCC.from_casadi(x, x[n], x[n + 1], f=eps * ca.sum1(x[:n]))
        pt = np.zeros(n + 2)
        pt[n] = 1.0  # G = 1 > 0, H = 0: not biactive
        rep = classify_stationarity(m, pt, None, tol)
        assert rep.level is Stationarity.S, (n, rep.message)
        assert rep.stationarity_residual == pytest.approx(eps, rel=1e-9)


def test_a_passed_deadline_gives_not_checked() -> None:
    """The check never runs past its deadline: already past, nothing is verified and the
    level says so (not a verdict on the point)."""
    import time

    rep = classify_stationarity(_pair2(_quad), np.array([2.0, 0.0]), NOP, deadline=time.perf_counter() - 1)
    assert rep.level is Stationarity.NOT_CHECKED and "time limit" in rep.message


def test_s_point_needs_one_multiplier_solve(monkeypatch: pytest.MonkeyPatch) -> None:
    """f = x1 + x2 at the biactive origin: (nu, xi) = (1, 1) >= 0, so S. S multipliers are weak
    ones, so the S test runs first and the weak test is not needed (one multiplier solve); a C
    point (f = -x1 - x2) still runs both and gets its level."""
    import mcpkit.stationarity.multipliers as cert

    calls: list[object] = []
    solve = cert._Multipliers.solve

    def counted(self: object, *a: object, **k: object) -> object:
        calls.append(a[0] if a else k.get("pieces"))
        return solve(self, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(cert._Multipliers, "solve", counted)
    rep = classify_stationarity(_pair2(lambda x: x[0] + x[1]), np.zeros(2), NOP)
    assert rep.level is Stationarity.S and rep.b_stationary is True
    np.testing.assert_allclose([rep.nu_G[0], rep.xi_H[0]], [1.0, 1.0], atol=ATOL)
    assert calls == [{0: "nonneg"}]
    calls.clear()
    rep = classify_stationarity(_pair2(lambda x: -x[0] - x[1]), np.zeros(2), NOP)
    assert rep.level is Stationarity.C
    assert calls[:2] == [{0: "nonneg"}, None]


def test_multiplier_lp_point_is_a_witness_when_its_residual_meets_the_threshold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HiGHS can call a point optimal whose recomputed residual exceeds its objective (large
    multipliers times its feasibility tolerance; NOSBENCH's DISCM_001_033). Such a point is not
    an optimum, so without a threshold every attempt refuses it; but when its recomputed residual
    meets the threshold it proves that multipliers within it exist, and is returned."""
    from types import SimpleNamespace

    import mcpkit.stationarity.multipliers as cert

    A = cert.sps.csc_matrix(np.array([[1.0, 0.0], [0.0, 1.0]]))
    b = np.array([1.0, 1.0])
    lo, hi = np.full(2, -np.inf), np.full(2, np.inf)
    v = np.array([1.0 + 1e-3, 1.0])  # residual 1e-3, reported as 1e-12 below

    def fake(c: np.ndarray, **kw: object) -> SimpleNamespace:
        return SimpleNamespace(status=0, x=np.append(v, 1e-12), fun=1e-12, message="")

    monkeypatch.setattr(cert.highs, "linprog", fake)
    w, why = cert._linf_lp(A, b, lo, hi)
    assert w is None and "inaccurate" in why
    w, why = cert._linf_lp(A, b, lo, hi, witness=1e-4)
    assert w is None
    w, why = cert._linf_lp(A, b, lo, hi, witness=2e-3)
    assert why == "" and w is not None
    np.testing.assert_allclose(w, v)


@pytest.mark.parametrize(
    "f_of",
    [lambda x: x[0] + x[1] + x[2], lambda x: -x[0] - x[1] + x[2], lambda x: x[0] - x[1] - x[2]],
)
def test_sparse_multiplier_matrix_gives_the_dense_verdict(
    monkeypatch: pytest.MonkeyPatch, f_of: object
) -> None:
    """Large multiplier systems are built sparse (no dense identity or hstack); with the switch
    moved down to every system, the levels and the residuals are those of the dense build."""
    import mcpkit.stationarity.multipliers as cert

    x = ca.SX.sym("x", 3)
    f = f_of(x)  # type: ignore[operator]
    m = MPCC.from_casadi(x, x[0], x[1], f=f, lbx=[-np.inf, -np.inf, 0.0], ubx=[np.inf, np.inf, 1.0])
    dense = classify_stationarity(m, np.zeros(3), NOP)
    built: list[bool] = []
    init = cert._Multipliers.__init__

    def spy(self: object, *a: object) -> None:
        init(self, *a)  # type: ignore[arg-type]
        built.append(cert.sps.issparse(self.A))  # type: ignore[attr-defined]

    monkeypatch.setattr(cert, "SPARSE_CERTIFICATE_MIN", 1)
    monkeypatch.setattr(cert._Multipliers, "__init__", spy)
    sparse = classify_stationarity(m, np.zeros(3), NOP)
    assert built == [True]
    assert sparse.level is dense.level and sparse.b_stationary is dense.b_stationary
    assert sparse.stationarity_residual == pytest.approx(dense.stationarity_residual, abs=1e-12)


def _sparse_jacobian_cases() -> list[tuple[MPCC, np.ndarray]]:
    """MPCCs and points covering S, C and non-B verdicts, active rows, bounds, general pairs,
    the enumerated LPEC (4 biactive pairs) and its MILP (6 pairs)."""
    cases: list[tuple[MPCC, np.ndarray]] = [
        (_pair2(_quad), np.zeros(2)),
        (_pair2(lambda x: x[0] + x[1]), np.zeros(2)),
        (_pair2(lambda x: -x[0] - x[1]), np.zeros(2)),
        (_general(), np.zeros(_general().x.numel())),
    ]
    x = ca.SX.sym("x", 3)
    cases.append((MPCC.from_casadi(x, x[0], x[1], f=x[0] - x[1] - x[2], g=x[0] + x[1] + x[2], ubg=1.0,
                                   lbg=-np.inf, lbx=[-np.inf, -np.inf, 0.0], ubx=[np.inf, np.inf, 1.0]),
                  np.array([0.0, 0.0, 1.0])))  # fmt: skip
    for k in (4, 6):
        z = ca.SX.sym("z", 2 * k)
        cases.append((MPCC.from_casadi(z, z[:k], z[k:], f=ca.sum1(z[:k]) - z[2 * k - 1]), np.zeros(2 * k)))
        cases.append((MPCC.from_casadi(z, z[:k], z[k:], f=ca.sum1(z)), np.zeros(2 * k)))
    return cases


def test_sparse_jacobians_give_the_dense_verdicts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above DENSE_JACOBIAN_MAX_VARS variables the Jacobians at the point and the LPEC's rows are
    sparse; with the switch moved down to every problem, every level, B verdict and residual is
    the dense one (and the sparse path was taken)."""
    import mcpkit.stationarity.certificate as certificate

    dense = [classify_stationarity(m, x, NOP) for m, x in _sparse_jacobian_cases()]
    seen: list[bool] = []
    evaluate = certificate._evaluate

    def spy(*a: object) -> object:
        loc = evaluate(*a)  # type: ignore[arg-type]
        seen.append(certificate.sps.issparse(loc.Jg) and certificate.sps.issparse(loc.JG))
        return loc

    monkeypatch.setattr(certificate, "DENSE_JACOBIAN_MAX_VARS", 0)
    monkeypatch.setattr(certificate, "_evaluate", spy)
    sparse = [classify_stationarity(m, x, NOP) for m, x in _sparse_jacobian_cases()]
    assert seen and all(seen)
    levels = {d.level for d in dense}
    assert {Stationarity.S, Stationarity.C} <= levels and any(d.b_stationary is False for d in dense)
    methods = {d.lpec.method for d in dense if d.lpec is not None}
    assert {"enumerate", "milp"} <= methods
    for d, s in zip(dense, sparse, strict=True):
        assert s.level is d.level and s.b_stationary is d.b_stationary
        assert s.stationarity_residual == pytest.approx(d.stationarity_residual, abs=1e-12)
        assert (s.lpec is None) == (d.lpec is None)
        if d.lpec is not None:
            assert s.lpec.method == d.lpec.method and s.lpec.verdict == d.lpec.verdict
            assert s.lpec.value == pytest.approx(d.lpec.value, abs=1e-12, nan_ok=True)


def test_the_check_at_stationarity_max_vars() -> None:
    r"""The sparse check at :data:`~mcpkit.orchestration.mpcc_solver.STATIONARITY_MAX_VARS` variables
    (the largest problem the solver checks; no horizon of mcpkit.mpec reaches it), against the
    closed form: :math:`\min \sum_j (x_j - a_j)^2 + (y_j - b_j)^2` s.t. :math:`0 \le x \perp y \ge 0`,
    :math:`x_j + x_{j+1} \le 3` (inactive). Each pair's minimiser is :math:`(a_j, 0)` or
    :math:`(0, b_j)`, whichever is nearer, and :math:`(0, 0)` (biactive, multipliers
    :math:`-2a_j, -2b_j > 0`) when both are negative, so the point is S-stationary; moving one
    free :math:`y_j` off :math:`b_j` makes it not stationary. (Measured: 0.4 s and 1.0 s for the
    two checks on 2026-11-27; the dense Jacobians would need 10 GB.)"""
    from mcpkit.orchestration.mpcc_solver import STATIONARITY_MAX_VARS

    m = STATIONARITY_MAX_VARS // 2
    rng = np.random.default_rng(0)
    a, b = rng.choice([-1.0, 0.5, 1.0], size=m), rng.choice([-1.0, 1.0], size=m)
    x, y = ca.SX.sym("x", m), ca.SX.sym("y", m)
    mp = MPCC.from_casadi(
        ca.vertcat(x, y), x, y, f=ca.sumsqr(x - a) + ca.sumsqr(y - b), g=x[:-1] + x[1:], lbg=-np.inf, ubg=3.0
    )
    take_x = (a > 0) & ~((b > 0) & (b > a))
    xs, ys = np.where(take_x, a, 0.0), np.where((b > 0) & ~take_x, b, 0.0)
    point = np.concatenate([xs, ys])
    biactive = int(((xs == 0) & (ys == 0)).sum())
    assert biactive > 1000
    rep = classify_stationarity(mp, point, None, 1e-8)
    assert rep.level is Stationarity.S and rep.stationarity_residual <= 1e-8
    moved = point.copy()
    moved[m + np.flatnonzero(ys > 0)[0]] += 0.1
    assert classify_stationarity(mp, moved, None, 1e-8).level is Stationarity.NOT_STATIONARY
