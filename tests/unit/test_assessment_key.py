"""How candidate points are ranked (``Assessment.key``), by hand."""

from __future__ import annotations

import math

import pytest

from mcpkit.homotopy.loop import Assessment

TOL = 1e-6


def _best(*cands: Assessment) -> Assessment:
    return min(cands, key=lambda a: a.key(TOL))


def test_feasible_points_come_first_and_rank_by_residual() -> None:
    a, b = Assessment(1e-3, 0.0), Assessment(1e-9, 5e-7)
    assert _best(a, b) is b
    assert _best(Assessment(0.0, 2e-6), a) is a  # a feasible point beats an infeasible one


def test_infeasible_points_rank_by_the_larger_measure() -> None:
    # MacMPEC water-net: the start point (violation 13, residual 0) against homotopy points
    start, path = Assessment(0.0, 13.33), Assessment(9.8e-9, 1.36e-6)
    assert _best(start, path) is path
    assert _best(Assessment(1e-2, 1e-5), Assessment(1e-4, 1e-4)).residual == 1e-4


def test_nan_counts_as_infinite() -> None:
    nan_v, finite = Assessment(0.0, math.nan), Assessment(1.0, 1.0)
    assert _best(nan_v, finite) is finite
    assert _best(Assessment(math.nan, 0.0), Assessment(1e-3, 0.0)).residual == 1e-3


def test_a_candidate_is_judged_as_given_when_clipping_it_breaks_a_row() -> None:
    """IPOPT may return a = -1e-8 (inside its relaxed bound a >= 0) with 1e6 (a - b) = 0; clipped
    to a = 0 the row is off by 1e-2, as given it violates the bound by 1e-8 only."""
    import casadi as ca
    import numpy as np

    from mcpkit.mpcc import MPCC, MPCCSolver

    x = ca.SX.sym("x", 3)
    prob = MPCC.from_casadi(
        x, x[2], 1 + x[1], f=x[0], g=1e6 * (x[0] - x[1]), lbx=[0.0, -1.0, 0.0], ubx=[1.0, 1.0, 1.0]
    )
    solver = MPCCSolver(prob, "scholtes", "casadi", tol=1e-6)
    given = np.array([-1e-8, -1e-8, 0.0])
    # the assessor takes points of the problem the homotopy solves (H = 1 + x_1 lifted into a variable)
    xs, a = solver.assessor(solver.plan.lift(given, prob.p0), prob.p0)
    np.testing.assert_array_equal(xs[:3], given)
    assert a.meets(1e-6) and a.violation == pytest.approx(1e-8)
    # a point that clipping does not harm is returned clipped
    xs, a = solver.assessor(solver.plan.lift(np.array([-1e-8, 0.5, 0.0]), prob.p0), prob.p0)
    assert xs[0] == 0.0 and a.violation == pytest.approx(1e6 * 0.5)
