"""The element-by-element residual path and the lazy pair labels give exactly the vector results."""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mcpkit.solving.residuals import (
    SMALL,
    PairState,
    PairStates,
    _labels,
    _small_residuals,
    _vector_residuals,
    classify_pairs,
    compute_residuals,
    finite_in_box,
    natural_residual,
)
from mcpkit.solving.result import SolutionStatus, judge_point

INF = math.inf
VAL = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1e-300, -1e-300, 1.0, -1.0]),
    st.floats(-1e300, 1e300, allow_nan=False, allow_infinity=False),
)
BOUND = st.one_of(VAL, st.sampled_from([-INF, INF]))


@st.composite
def points(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    n = draw(st.integers(0, SMALL))
    z = np.array(draw(st.lists(VAL, min_size=n, max_size=n)), dtype=float)
    F = np.array(draw(st.lists(VAL, min_size=n, max_size=n)), dtype=float)
    a = draw(st.lists(BOUND, min_size=n, max_size=n))
    b = draw(st.lists(BOUND, min_size=n, max_size=n))
    lb = np.array([min(x, y) if min(x, y) < INF else -INF for x, y in zip(a, b, strict=True)], dtype=float)
    ub = np.array([max(x, y) if max(x, y) > -INF else INF for x, y in zip(a, b, strict=True)], dtype=float)
    if draw(st.booleans()):  # often a point inside the box
        z = np.minimum(np.maximum(z, lb), ub)
    return z, F, lb, ub


def _same(x: float, y: float) -> bool:
    return x == y and math.copysign(1.0, x) == math.copysign(1.0, y)


@settings(max_examples=200, deadline=None)
@given(points())
@example((np.array([-0.0]), np.array([-0.0]), np.array([0.0]), np.array([INF])))
@example((np.array([3e17]), np.array([-1.0]), np.array([0.0]), np.array([INF])))
def test_small_path_is_bit_identical_to_the_vector_path(
    pt: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
) -> None:
    z, F, lb, ub = pt
    small = _small_residuals(z, F, lb, ub)
    vec = _vector_residuals(z, F, lb, ub)
    assert small is not None
    assert _same(small.natural, vec.natural)
    assert _same(small.complementarity, vec.complementarity)
    assert _same(small.bounds, vec.bounds)
    np.testing.assert_array_equal(small.per_pair, vec.per_pair)
    assert _same(natural_residual(z, F, lb, ub), vec.natural)
    inside = bool(np.isfinite(z).all() and (z >= lb).all() and (z <= ub).all())
    assert finite_in_box(z, lb, ub) is inside


@pytest.mark.parametrize("bad", [np.nan, INF, -INF])
def test_non_finite_entries_take_the_vector_path(bad: float) -> None:
    lb, ub = np.zeros(3), np.full(3, INF)
    z, F = np.array([1.0, 0.0, 2.0]), np.array([0.0, 1.0, 0.0])
    for zz, FF in ((np.array([1.0, bad, 2.0]), F), (z, np.array([0.0, bad, 0.0]))):
        assert _small_residuals(zz, FF, lb, ub) is None
        r = compute_residuals(zz, FF, lb, ub)
        assert r.natural == INF and natural_residual(zz, FF, lb, ub) == INF
        assert not finite_in_box(zz, lb, ub) or np.isfinite(zz).all()


def test_labels_are_computed_when_read_and_from_a_copy() -> None:
    lb, ub = np.array([0.0, 0.0, -INF]), np.array([INF, 1.0, INF])
    z, F = np.array([0.0, 1.0, 3.0]), np.array([2.0, -1.0, 0.0])
    states = classify_pairs(z, F, lb, ub, 1e-9)
    assert isinstance(states, PairStates) and len(states) == 3
    z[0], F[0] = 5.0, 5.0  # the caller's arrays change after the result was made
    want = [PairState.AT_LOWER, PairState.AT_UPPER, PairState.BETWEEN]
    assert states == want and list(states) == want and states[1] is PairState.AT_UPPER
    assert states != [PairState.BETWEEN] * 3
    assert pickle.loads(pickle.dumps(states)) == want and copy.deepcopy(states) == want
    z0, F0 = np.array([0.0, 1.0, 3.0]), np.array([2.0, -1.0, 0.0])
    assert _labels(z0, F0, lb, ub, 1e-9, None) == want


def test_judge_point_uses_the_routes_F_only_inside_the_box() -> None:
    lb, ub = np.zeros(2), np.full(2, INF)
    calls: list[np.ndarray] = []

    def F_at(z: np.ndarray) -> np.ndarray:
        calls.append(z.copy())
        return z - 1.0

    inside = judge_point(np.array([1.0, 1.0]), F_at, lb, ub, 1e-8, np.zeros(2))
    assert inside.status is SolutionStatus.SOLUTION and not calls
    outside = judge_point(np.array([-1.0, 1.0]), F_at, lb, ub, 1e-8, np.zeros(2))
    assert calls and outside.z[0] == 0.0 and outside.status is SolutionStatus.INACCURATE
