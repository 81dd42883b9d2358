"""The verdict of issue 12: a residual that cannot cancel, every measure judged, honest terminations.

No solver runs here: residuals of given points, :func:`mcpkit.solving.result.judge`,
:func:`mcpkit.solving.result.mcp_termination` and the MPCC verdict
:func:`mcpkit.orchestration.mpcc_solver.mpcc_result`.
"""

from __future__ import annotations

import math
from fractions import Fraction

import casadi as ca
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.mpcc import MPCC
from mcpkit.orchestration.mpcc_solver import mpcc_result
from mcpkit.solving.residuals import compute_residuals, natural_residual_vector
from mcpkit.solving.result import SolutionStatus, Termination, judge, mcp_termination, reported_termination

INF = math.inf


def _exact_natural(z: float, F: float, lo: float, hi: float) -> Fraction:
    """|z - clip(z - F, lo, hi)| in exact rational arithmetic (infinite bounds do not clip)."""
    zq, Fq = Fraction(z), Fraction(F)
    w = zq - Fq
    if math.isfinite(lo):
        w = max(w, Fraction(lo))
    if math.isfinite(hi):
        w = min(w, Fraction(hi))
    return abs(zq - w)


@pytest.mark.parametrize(
    ("z", "F"),
    [(2.9703e17, -1.0), (3.04e17, -1.0), (2.96e18, -1.0), (1e300, -1e-300)],
)
def test_huge_z_does_not_swallow_F(z: float, F: float) -> None:
    """The elastic points of issue 12: the projected form gives 0, the min-map |F|."""
    lb, ub = np.array([0.0]), np.array([INF])
    assert abs(z - np.clip(z - F, 0.0, INF)) == 0.0  # the cancellation this guards against
    r = compute_residuals(np.array([z]), np.array([F]), lb, ub)
    assert r.natural == abs(F)
    assert r.complementarity == abs(F)


def test_elastic_points_of_the_issue_are_not_solutions() -> None:
    """M = [[1,-1],[-1,1]], q = [-1,-1] at z = (3e17, 3e17): F1 + F2 = -2 whatever z is."""
    M, q = np.array([[1.0, -1.0], [-1.0, 1.0]]), np.array([-1.0, -1.0])
    z = np.array([3.04e17, 3.04e17])
    r = compute_residuals(z, M @ z + q, np.zeros(2), np.full(2, INF))
    assert r.natural == pytest.approx(1.0, rel=1e-12)
    assert judge(r.natural, r.bounds, 1e-8, True, r.complementarity) is SolutionStatus.INACCURATE


BOUND = st.one_of(st.just(-INF), st.just(INF), st.floats(-1e12, 1e12, allow_nan=False))
MAG = st.floats(-1e300, 1e300, allow_nan=False, allow_infinity=False)


@settings(max_examples=400, deadline=None)
@given(z=MAG, F=MAG, a=BOUND, b=BOUND)
def test_min_map_equals_the_exact_natural_residual(z: float, F: float, a: float, b: float) -> None:
    """For every finite z, F and bounds l <= u: the computed min-map is the exact
    |z - Pi(z - F)| up to one rounding (relative 2^-52), however different the magnitudes."""
    lo, hi = min(a, b), max(a, b)
    if lo == INF or hi == -INF:
        return
    exact = _exact_natural(z, F, lo, hi)
    got = natural_residual_vector(np.array([z]), np.array([F]), np.array([lo]), np.array([hi]))[0]
    if math.isinf(got):  # z - l overflowed: only when the exact value is beyond the float range
        assert exact > Fraction(np.finfo(float).max) * Fraction(1, 2)
        return
    assert abs(Fraction(got) - exact) <= exact * Fraction(1, 2**52)


def test_non_finite_F_is_an_infinite_residual() -> None:
    lb, ub = np.zeros(3), np.array([INF, INF, 0.0])
    z, F = np.zeros(3), np.array([INF, np.nan, -INF])
    r = compute_residuals(z, F, lb, ub)
    assert np.isinf(r.per_pair).all() and r.natural == INF and r.complementarity == INF


def test_judge_requires_every_measure() -> None:
    tol = 1e-8
    assert judge(1e-10, 0.0, tol, True, 1e-10) is SolutionStatus.SOLUTION
    assert judge(1e-10, 0.0, tol, True, 1.0) is SolutionStatus.INACCURATE
    assert judge(1e-10, 0.0, tol, True, math.nan) is SolutionStatus.INACCURATE
    assert judge(math.nan, 0.0, tol, True, 0.0) is SolutionStatus.INACCURATE
    assert judge(0.0, math.nan, tol, True, 0.0) is SolutionStatus.INFEASIBLE_POINT
    assert judge(0.0, 2 * tol, tol, True, 0.0) is SolutionStatus.INFEASIBLE_POINT
    assert judge(0.0, 0.0, tol, False, 0.0) is SolutionStatus.NO_SOLUTION


def test_mcp_termination_needs_a_certificate_for_infeasible() -> None:
    sol, inacc = SolutionStatus.SOLUTION, SolutionStatus.INACCURATE
    LI = Termination.LOCALLY_INFEASIBLE
    assert mcp_termination(LI, inacc, {}) is Termination.STALLED
    assert mcp_termination(LI, inacc, {"certificate": {}}) is Termination.STALLED  # a ray, unverified
    assert mcp_termination(LI, inacc, {"infeasibility_certificate": {"y": [1.0]}}) is LI
    assert mcp_termination(Termination.CONVERGED, inacc, {}) is Termination.STALLED
    assert mcp_termination(Termination.CONVERGED, sol, {}) is Termination.CONVERGED
    assert mcp_termination(Termination.ITERATION_LIMIT, inacc, {}) is Termination.ITERATION_LIMIT


def _common() -> dict[str, object]:
    return {"iterations": 3, "wall_time_s": 0.0, "backend": "casadi", "method": "scholtes"}


def test_mpcc_locally_infeasible_only_when_the_point_violates_the_constraints() -> None:
    x = ca.SX.sym("x", 2)
    # 0 <= x0 _|_ x1 >= 0 with x0 + x1 = -1: no feasible point at all
    bad = MPCC.from_casadi(x, x[0], x[1], f=x[1] ** 2, g=x[0] + x[1] + 1, x0=[0.0, 0.0])
    LI = Termination.LOCALLY_INFEASIBLE
    res = mpcc_result(bad, np.zeros(2), np.zeros(0), LI, 1e-6, **_common())
    assert res.constraint_violation == pytest.approx(1.0) and res.termination is LI
    # a feasible MPCC (x0 + x1 = 1) and a point meeting its constraints but not the pair: the
    # relaxation was infeasible, not the MPCC
    ok = MPCC.from_casadi(x, x[0], x[1], f=x[1] ** 2, g=x[0] + x[1] - 1, x0=[0.0, 0.0])
    res = mpcc_result(ok, np.array([0.5, 0.5]), np.zeros(0), LI, 1e-6, **_common())
    assert res.constraint_violation <= 1e-12 and res.comp_residual == pytest.approx(0.5)
    assert not res.solved and res.termination is Termination.STALLED


@pytest.mark.parametrize("term", list(Termination))
@pytest.mark.parametrize("complementary", [True, False])
@pytest.mark.parametrize("viol", [0.0, 1.0])
def test_one_verdict_for_mcps_and_mpccs(term: Termination, complementary: bool, viol: float) -> None:
    """An MPCC result's status and termination are the MCP rules (judge, reported_termination)
    with the complementarity residual as the natural residual and the violation as the bounds'."""
    x = ca.SX.sym("x", 2)
    m = MPCC.from_casadi(x, x[0], x[1], f=x[1] ** 2, g=x[0] + x[1] - 1 - viol, x0=[0.0, 0.0])
    point = np.array([1.0, 0.0]) if complementary else np.array([0.5, 0.5])  # pair residual 0 or 0.5
    res = mpcc_result(m, point, np.zeros(0), term, 1e-6, **_common())
    status = judge(res.comp_residual, res.constraint_violation, 1e-6, True)
    assert res.solution_status is status
    assert res.termination is reported_termination(term, status, not res.constraint_violation <= 1e-6)
    assert mcp_termination(term, status, {}) is reported_termination(term, status, False)


def test_mpcc_pair_residual_does_not_cancel() -> None:
    """H = x0 >= 0 _|_ G = -(1 + x1^2) free: infeasible; at x0 = 1e19 the projected form cancels."""
    x = ca.SX.sym("x", 2)
    mp = MPCC.from_casadi(x, -(1 + x[1] ** 2), x[0], lbG=-INF, x0=[0.0, 0.0])
    xp = np.array([1.47694953e19, 0.0])
    assert mp.residuals(xp, np.zeros(0))[0] == 0.0  # MPCC.residuals' projected form
    res = mpcc_result(mp, xp, np.zeros(0), Termination.CONVERGED, 1e-6, **_common())
    assert res.comp_residual == pytest.approx(1.0) and not res.solved
    assert res.termination is Termination.STALLED
