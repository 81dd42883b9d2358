"""How candidate points are ranked (``Assessment.key``), by hand."""

from __future__ import annotations

import math

from mcpkit.solvers.homotopy import Assessment

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
