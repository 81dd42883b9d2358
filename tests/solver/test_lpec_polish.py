"""The LP inner solver of affine subproblems and the branch identification of LPEC polishes.

Small LPECs whose answers are known by hand: the polish of a point that misreads a pair is an
infeasible branch LP; the identification decides the pair from the LP, or by MILP when the LP
leaves it in violation. A property test plants a solution in random LPECs.
"""

from __future__ import annotations

import itertools
import time
import warnings
from dataclasses import replace

import casadi as ca
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.homotopy.inner import ipopt_termination
from mcpkit.homotopy.ipopt import IpoptNLP
from mcpkit.homotopy.loop import Assessment, HomotopyOutcome, Polisher
from mcpkit.homotopy.lp_inner import HIGHS_MIN_TOL, LinearInner
from mcpkit.homotopy.recovery import make_homotopy
from mcpkit.homotopy.reformulation import NLPTemplate
from mcpkit.lowering.standard import ToStandardMPCC
from mcpkit.mpcc import MPCC
from mcpkit.solving.options import SolveOptions
from mcpkit.solving.residuals import judged_residuals
from mcpkit.solving.result import Termination

pytestmark = pytest.mark.solver

ATOL = 1e-7


def _polisher(m: MPCC) -> tuple[Polisher, MPCC]:
    std, _ = ToStandardMPCC().apply(m)
    return Polisher(std, SolveOptions(tol=1e-6)), std


def _ring() -> MPCC:
    r"""min c^T x over x1 + y1 = 1, x2 + y2 = 1, x1 + y2 = 1, 0 <= x_j ⟂ y_j >= 0 (variables x1, y1, x2, y2).

    Exactly two points are feasible: A = (0, 1, 0, 1) and B = (1, 0, 1, 0); on the segment
    between them no pair is complementary except at its ends.
    """
    v = ca.SX.sym("v", 4)
    x1, y1, x2, y2 = v[0], v[1], v[2], v[3]
    g = ca.vertcat(x1 + y1 - 1, x2 + y2 - 1, x1 + y2 - 1)
    return MPCC.from_casadi(
        v, ca.vertcat(x1, x2), ca.vertcat(y1, y2), f=x1 + x2, g=g, lbx=0.0, ubx=10.0, name="ring"
    )


def test_linear_inner_solves_an_lp_with_kkt_multipliers() -> None:
    x = ca.SX.sym("x", 3)
    q = ca.SX.sym("q", 1)
    g = ca.vertcat(x[0] + x[1] + x[2], x[0] - x[1])
    f = q[0] * x[0] - x[1] + 2 * x[2]
    nlp = NLPTemplate(x=x, p=q, f=f, g=g, lbg=np.array([1.0, -np.inf]), ubg=np.array([1.0, 0.5]))
    assert nlp.is_affine()
    lp = LinearInner(nlp, 1e-7)
    res = lp.solve(np.zeros(3), np.array([1.0]), np.zeros(3), np.full(3, 5.0), nlp.lbg, nlp.ubg)
    assert ipopt_termination(res.status) is Termination.CONVERGED
    # min x0 - x1 + 2 x2 on the simplex, x0 - x1 <= 0.5: x = (0, 1, 0), f = -1
    np.testing.assert_allclose(res.x, [0.0, 1.0, 0.0], atol=ATOL)
    assert res.f == pytest.approx(-1.0, abs=ATOL)
    # CasADi's convention: grad f + A^T lam_g + lam_x = 0
    A = np.array([[1.0, 1.0, 1.0], [1.0, -1.0, 0.0]])
    np.testing.assert_allclose(np.array([1.0, -1.0, 2.0]) + A.T @ res.lam_g + res.lam_x, 0.0, atol=1e-9)


def test_linear_inner_reports_an_infeasible_lp() -> None:
    x = ca.SX.sym("x", 2)
    nlp = NLPTemplate(
        x=x, p=ca.SX.sym("q", 0), f=x[0], g=x[0] + x[1], lbg=np.array([3.0]), ubg=np.array([3.0])
    )
    res = LinearInner(nlp, 1e-7).solve(np.zeros(2), np.zeros(0), np.zeros(2), np.ones(2), nlp.lbg, nlp.ubg)
    assert res.status == "LP_Infeasible"
    assert ipopt_termination(res.status) is Termination.LOCALLY_INFEASIBLE
    assert not np.isfinite(res.x).any()


def test_tiny_tolerances_are_clamped_to_what_highs_accepts() -> None:
    """HiGHS ignores feasibility tolerances below 1e-10 (with an OptimizeWarning) and keeps 1e-7:
    a tighter outer tolerance must give 1e-10, and the LP runs without that warning."""
    x = ca.SX.sym("x", 2)
    nlp = NLPTemplate(
        x=x, p=ca.SX.sym("q", 0), f=x[0] - x[1], g=x[0] + x[1], lbg=np.array([1.0]), ubg=np.array([1.0])
    )
    assert LinearInner(nlp, 1e-3).tol == 1e-7
    assert LinearInner(nlp, 1e-9).tol == 1e-9
    lp = LinearInner(nlp, 1e-14)
    assert lp.tol == HIGHS_MIN_TOL
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = lp.solve(np.zeros(2), np.zeros(0), np.zeros(2), np.ones(2), nlp.lbg, nlp.ubg)
    np.testing.assert_allclose(res.x, [0.0, 1.0], atol=ATOL)


def test_nonlinear_templates_are_not_affine() -> None:
    x = ca.SX.sym("x", 2)
    nlp = NLPTemplate(x=x, p=ca.SX.sym("q", 0), f=x[0] * x[1], g=x[0], lbg=np.zeros(1), ubg=np.zeros(1))
    assert not nlp.is_affine()
    with pytest.raises(ValueError, match="affine"):
        LinearInner(nlp, 1e-7)


def test_polisher_of_a_nonlinear_mpcc_stays_on_ipopt() -> None:
    x = ca.SX.sym("x", 2)
    m = MPCC.from_casadi(x, x[0], x[1], f=(x[0] - 1) ** 2 + (x[1] - 1) ** 2, lbx=0.0, ubx=3.0)
    pol, _ = _polisher(m)
    assert not pol.linear
    assert isinstance(pol.nlp, IpoptNLP)


@pytest.mark.parametrize(("sign", "want", "f_want"), [(1.0, [0, 1, 0, 1], 0.0), (-1.0, [1, 0, 1, 0], -2.0)])
def test_misread_pairs_are_identified(sign: float, want: list[float], f_want: float) -> None:
    """The point (0.1, 0.9, 0.9, 0.1) reads x1 = 0 and y2 = 0: with x1 + y2 = 1 that branch is
    infeasible. Identified from the LP over the ring, the answer is A (min x1 + x2) or B (max)."""
    m = _ring()
    v = m.x
    m = MPCC.from_casadi(v, m.G, m.H, f=sign * (v[0] + v[2]), g=m.g, lbx=0.0, ubx=10.0, name="ring")
    pol, std = _polisher(m)
    assert pol.linear
    xh = np.array([0.1, 0.9, 0.9, 0.1])
    mask = pol.active_mask(xh, np.zeros(0))
    plain = pol.solve(xh, np.zeros(0), mask)
    assert plain.status == "LP_Infeasible"
    res = pol.polish(xh, np.zeros(0), mask)
    assert res.status == "LP_Optimal"
    np.testing.assert_allclose(res.x, want, atol=ATOL)
    assert res.f == pytest.approx(f_want, abs=ATOL)


def test_a_pair_the_lp_leaves_violated_is_decided_by_milp() -> None:
    r"""min -(x + y) s.t. 0.1 <= x <= 0.6, y <= 0.6, 0 <= x ⟂ y >= 0, read at (0.3, 0.35).

    The plain branch x = 0 is infeasible; with the pair free the LP stops at (0.6, 0.6), where
    neither side is zero, so the MILP decides it: y = 0, x = 0.6, f = -0.6."""
    v = ca.SX.sym("v", 2)
    m = MPCC.from_casadi(v, v[0], v[1], f=-(v[0] + v[1]), g=v, lbg=[0.1, -np.inf], ubg=[0.6, 0.6],
                         lbx=0.0, ubx=10.0)  # fmt: skip
    pol, _ = _polisher(m)
    xh = np.array([0.3, 0.35])
    mask = pol.active_mask(xh, np.zeros(0))
    assert pol.solve(xh, np.zeros(0), mask).status == "LP_Infeasible"
    res = pol.polish(xh, np.zeros(0), mask)
    np.testing.assert_allclose(res.x, [0.6, 0.0], atol=ATOL)
    assert res.f == pytest.approx(-0.6, abs=ATOL)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(2, 5), doubt=st.integers(0, 3))
def test_identification_returns_lpec_points(seed: int, m: int, doubt: int) -> None:
    """Random LPECs with a planted point, ``doubt`` of its pairs blurred in the polished point:
    whatever the polish returns is a feasible, complementary LPEC point, so its objective is no
    lower than the best of all :math:`2^m` branch LPs."""
    rng = np.random.default_rng(seed)
    n = 2 * m + 1
    v = ca.SX.sym("v", n)
    xs, ys = v[:m], v[m : 2 * m]
    side = rng.integers(0, 2, m).astype(bool)  # True: x_j = 0 at the planted point
    star = np.zeros(n)
    star[:m] = np.where(side, 0.0, rng.uniform(0.5, 2.0, m))
    star[m : 2 * m] = np.where(side, rng.uniform(0.5, 2.0, m), 0.0)
    star[-1] = rng.uniform(-1, 1)
    E = rng.standard_normal((m, n))
    b = E @ star
    c = rng.standard_normal(n)
    mp = MPCC.from_casadi(v, xs, ys, f=ca.dot(ca.DM(c), v), g=ca.mtimes(ca.DM(E), v) - ca.DM(b),
                          lbx=np.r_[np.zeros(2 * m), -5.0], ubx=np.full(n, 5.0))  # fmt: skip
    pol, _ = _polisher(mp)
    xh = star.copy()
    idx = rng.choice(m, size=min(doubt, m), replace=False)
    xh[idx] += 0.3  # both sides of these pairs positive: the point misreads or doubts them
    xh[m + idx] += 0.3
    mask = pol.active_mask(xh, np.zeros(0))
    res = pol.polish(xh, np.zeros(0), mask)
    if not np.isfinite(res.x).all():
        return  # nothing found is allowed (and reported by the status); a wrong point is not
    x = res.x
    assert np.abs(E @ x - b).max() <= 1e-6
    assert np.minimum(x[:m], x[m : 2 * m]).max() <= 1e-6
    assert x[: 2 * m].min() >= -1e-7
    # it is an LPEC point: no better than the best branch of all 2^m
    best = np.inf
    for bits in itertools.product([0, 1], repeat=m):
        fix = np.array(bits, dtype=float)
        r = pol.solve(xh, np.zeros(0), fix)
        if np.isfinite(r.x).all():
            best = min(best, r.f)
    assert res.f >= best - 1e-6


def _stopped(x: np.ndarray, residual: float) -> HomotopyOutcome:
    """A run its iteration budget stopped (``budget_spent``), as RunBudget ends one."""
    return HomotopyOutcome(
        x, Assessment(residual, 0.0), Termination.ITERATION_LIMIT, "iteration budget spent", 5, [],
        path=[x], budget_spent=True,
    )  # fmt: skip


def test_a_run_stopped_by_its_budget_hands_its_point_to_the_lp_polish() -> None:
    """The ring's misread point, as a run that ran out of its iteration budget: the polish
    identifies the branch within what is left of the whole call, and the outcome is converged;
    a run that ended otherwise (here the caller's time limit) gets no such polish."""
    std, _ = ToStandardMPCC().apply(_ring())
    rh = make_homotopy(std, "scholtes", SolveOptions(tol=1e-6, time_limit=30.0))
    assert rh.is_lpec

    def assess(x: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, Assessment]:
        comp, viol, _ = judged_residuals(std, x, p)
        return x, Assessment(comp, viol)

    xh = np.array([0.005, 0.995, 0.995, 0.005])  # residual 5e-3, below polish_trigger
    out = rh._polish_stopped(_stopped(xh, 0.005), np.zeros(0), assess, time.perf_counter() + 30.0)
    assert out.termination is Termination.CONVERGED
    np.testing.assert_allclose(out.x, [0.0, 1.0, 0.0, 1.0], atol=ATOL)
    assert out.trace[-1].phase == "polish"
    # past the call's deadline nothing runs
    late = rh._polish_stopped(_stopped(xh, 0.005), np.zeros(0), assess, time.perf_counter() - 1.0)
    assert late.termination is Termination.ITERATION_LIMIT and not late.trace
    cut = replace(_stopped(xh, 0.005), termination=Termination.TIME_LIMIT, budget_spent=False)
    assert rh._polish_stopped(cut, np.zeros(0), assess, time.perf_counter() + 30.0) is cut


def test_a_nonlinear_run_stopped_by_its_budget_is_left_alone() -> None:
    x = ca.SX.sym("x", 2)
    m = MPCC.from_casadi(x, x[0], x[1], f=(x[0] - 1) ** 2 + (x[1] - 1) ** 2, lbx=0.0, ubx=3.0)
    std, _ = ToStandardMPCC().apply(m)
    rh = make_homotopy(std, "scholtes", SolveOptions(tol=1e-6, time_limit=30.0))
    assert not rh.is_lpec
    out = _stopped(np.array([0.5, 0.5]), 0.01)
    same = rh._polish_stopped(out, np.zeros(0), lambda z, p: (z, Assessment(0.0, 0.0)), None)
    assert same is out and not out.trace
    assert rh.primary._polisher is None  # an IPOPT polisher is not built just to find that out
