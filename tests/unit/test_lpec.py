"""The LPEC of B-stationarity (enumeration and MILP) and the refinement's result fields.

No NLP solver runs: LPs and MILPs go through SciPy's HiGHS. The expected values are derived by
hand in each docstring, or by solving every branch LP independently (the property test).
"""

from __future__ import annotations

import itertools

import casadi as ca
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog, milp

from mcpkit.errors import MCPInputError
from mcpkit.mpcc import MPCC
from mcpkit.stationarity.certificate import Stationarity, classify_stationarity
from mcpkit.stationarity.lpec import LPEC, big_m, milp_arrays, solve_lpec
from mcpkit.stationarity.refine import RefinementReport, RefineOptions, RefineStep, piece_mask

NOP = np.zeros(0)


def _pairs_lpec(c: np.ndarray, k: int) -> LPEC:
    """k pairs 0 <= d_i ⟂ d_{k+i} >= 0 in the unit box, objective c . d, no other rows."""
    n = 2 * k
    eye = np.eye(n)
    return LPEC(
        c=np.asarray(c, dtype=float), A_eq=np.zeros((0, n)), A_ub=np.zeros((0, n)),
        JG=eye[:k], JH=eye[k:], lo=-np.ones(n), hi=np.ones(n),
    )  # fmt: skip


def _branch_min(lpec: LPEC) -> float:
    """Smallest branch-LP value, every branch solved independently with linprog."""
    k = lpec.n_biactive
    best = np.inf
    for bits in itertools.product((0, 1), repeat=k):
        eq, ub = [lpec.A_eq], [lpec.A_ub]
        for j, b in enumerate(bits):
            eq.append((lpec.JG if b == 0 else lpec.JH)[j : j + 1])
            ub.append(-(lpec.JH if b == 0 else lpec.JG)[j : j + 1])
        A_eq, A_ub = np.vstack(eq), np.vstack(ub)
        res = linprog(
            lpec.c, A_ub=A_ub if A_ub.size else None, b_ub=np.zeros(A_ub.shape[0]) if A_ub.size else None,
            A_eq=A_eq if A_eq.size else None, b_eq=np.zeros(A_eq.shape[0]) if A_eq.size else None,
            bounds=np.column_stack([lpec.lo, lpec.hi]), method="highs",
        )  # fmt: skip
        assert res.status == 0
        best = min(best, float(res.fun))
    return best


def test_big_m_is_the_box_maximum() -> None:
    """J = [[1, -2], [0, 3]], box [-1, 2] x [0, 1]: row maxima 2 + 0 = 2 and 3; a zero row: 0."""
    J = np.array([[1.0, -2.0], [0.0, 3.0], [0.0, 0.0]])
    np.testing.assert_allclose(big_m(J, np.array([-1.0, 0.0]), np.array([2.0, 1.0])), [2.0, 3.0, 0.0])
    with pytest.raises(ValueError, match="bounded"):
        big_m(J, np.array([-np.inf, 0.0]), np.array([2.0, 1.0]))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-3, 3), min_size=6, max_size=6),
    st.lists(st.floats(0, 2), min_size=2, max_size=2),
)
def test_big_m_bounds_every_box_vertex(entries: list[float], widths: list[float]) -> None:
    """The big-M of each row equals the largest value over the box's vertices (so it is exact)."""
    J = np.array(entries).reshape(3, 2)
    lo, hi = -np.array(widths), np.array(widths) * 0.5
    vertices = np.array(list(itertools.product(*zip(lo, hi, strict=True))))
    np.testing.assert_allclose(big_m(J, lo, hi), (J @ vertices.T).max(axis=1), atol=1e-12)


def test_milp_arrays_shape_and_rows() -> None:
    """2 pairs, 4 directions: variables (d, z) = 6, integrality on z only, rows 4k = 8;
    the big-M columns are -M_G on the G rows and +M_H on the H rows (M = 1 in the unit box)."""
    c, cons, bounds, integ = milp_arrays(_pairs_lpec(np.ones(4), 2))
    assert c.shape == (6,) and np.array_equal(integ, [0, 0, 0, 0, 1, 1])
    A = cons.A.toarray()
    assert A.shape == (8, 6)
    np.testing.assert_allclose(A[4:6, 4:], -np.eye(2))
    np.testing.assert_allclose(A[6:8, 4:], np.eye(2))
    np.testing.assert_allclose(cons.ub[6:8], [1.0, 1.0])
    np.testing.assert_allclose(bounds.lb[4:], 0.0)
    np.testing.assert_allclose(bounds.ub[4:], 1.0)


#: a row coefficient: 0, or at least 1e-3 in size. A coefficient below HiGHS's primal feasibility
#: tolerance (1e-7) makes a . d <= 0 hold "within tolerance" for d = 1 in one solve and not in
#: another (5.96e-8 once gave -1 against 0): the solvers' rounding floor, not the MILP's model
_ROW_ENTRY = st.floats(-1, 1).map(lambda v: 0.0 if abs(v) < 1e-3 else v)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-2, 2), min_size=7, max_size=7), st.lists(_ROW_ENTRY, min_size=7, max_size=7))
def test_milp_value_equals_branch_enumeration(c: list[float], row: list[float]) -> None:
    """Three pairs plus one extra inequality row a . d <= 0 in the unit box: the MILP's optimal
    value equals the smallest value over all 2^3 branch LPs solved one by one (up to HiGHS's
    integrality tolerance)."""
    k, n = 3, 7
    rng_J = np.eye(n)
    lpec = LPEC(
        c=np.array(c), A_eq=np.zeros((0, n)), A_ub=np.array(row).reshape(1, n),
        JG=rng_J[:k] + 0.3 * rng_J[6], JH=rng_J[k : 2 * k] - 0.2 * rng_J[6], lo=-np.ones(n), hi=np.ones(n),
    )  # fmt: skip
    cc, cons, bounds, integ = milp_arrays(lpec)
    res = milp(cc, constraints=cons, bounds=bounds, integrality=integ, options={"mip_rel_gap": 1e-9})
    assert res.status == 0
    # HiGHS accepts z within its integrality tolerance (1e-6), which relaxes a big-M row by
    # about 1e-6 * M (M <= 2 here): agreement to 1e-5
    assert res.fun == pytest.approx(_branch_min(lpec), abs=1e-5)


def test_solve_lpec_enumerates_few_and_milp_many() -> None:
    """f = sum of all d: on the cone d_G, d_H >= 0, so every branch has value 0: B, for both
    methods. With the last coefficient -1: the branch d_{G,last} = 0 takes d_{H,last} = 1 and
    all other d = 0, value -1: a descent direction, complementary."""
    for k, method in ((2, "enumerate"), (6, "milp")):
        sol = solve_lpec(_pairs_lpec(np.ones(2 * k), k), 1e-9)
        assert sol.verdict is True and sol.method == method and sol.d is None
        c = np.ones(2 * k)
        c[-1] = -1.0  # d_{H,last} = 1 with d_{G,last} = 0: value -1
        sol = solve_lpec(_pairs_lpec(c, k), 1e-9)
        assert sol.verdict is False and sol.method == method
        assert sol.value == pytest.approx(-1.0, abs=1e-9)
        assert c @ sol.d == pytest.approx(-1.0, abs=1e-9)
        assert np.all(np.abs(sol.d[:k] * sol.d[k:]) <= 1e-9)  # complementary direction
    skipped = solve_lpec(_pairs_lpec(np.ones(12), 6), 1e-9, max_biactive=5)
    assert skipped.verdict is None and "too large" in skipped.reason


def test_classify_uses_milp_above_enumeration_limit() -> None:
    """6 pairs 0 <= x_i ⟂ y_i >= 0 at 0 with f = sum_{i<6}(x_i + y_i) - y_6: the multipliers
    are (nu_i, xi_i) = (1, 1) for i < 6 and (0, -1) for pair 6, so M (one of them zero) but not
    S; 6 biactive pairs > the enumeration limit, and the MILP finds the descent d = e_{y6}
    (value -1): not B, and the report carries the MILP's outcome."""
    z = ca.SX.sym("z", 12)
    xs, ys = z[:6], z[6:]
    m = MPCC.from_casadi(z, xs, ys, f=ca.sum1(xs[:5]) + ca.sum1(ys[:5]) - ys[5])
    rep = classify_stationarity(m, np.zeros(12), NOP, 1e-6, 50)
    assert rep.b_stationary is False and rep.lpec is not None and rep.lpec.method == "milp"
    assert rep.level is Stationarity.M
    assert rep.descent_direction is not None and rep.descent_direction[11] > 0.5


def test_piece_mask_follows_the_direction() -> None:
    """Pairs (G, H) = (0, 0), (0, 0), (0, 2), (3, 0) with d moving G_1 and H_2: pair 1 gets H = 0
    (G grows), pair 2 G = 0, pair 3 keeps G = 0, pair 4 keeps H = 0."""
    G, H = np.array([0.0, 0.0, 0.0, 3.0]), np.array([0.0, 0.0, 2.0, 0.0])
    JG, JH = np.eye(4)[:, :4], np.eye(4)[::-1]
    d = np.array([1.0, 0.0, 0.0, 0.0])  # grad G_1 d = 1 > grad H_1 d = 0
    d[2] = 1.0  # grad H_2 d = d[2] = 1 (JH row 2 is e_2) > grad G_2 d = 0
    mask, switched = piece_mask(G, H, JG, JH, d, 1e-9)
    np.testing.assert_array_equal(mask, [0.0, 1.0, 1.0, 0.0])
    assert switched == ((0, "H=0"), (1, "G=0"))
    mask0, none = piece_mask(G, H, JG, JH, None, 1e-9)
    np.testing.assert_array_equal(mask0, [1.0, 1.0, 1.0, 0.0])
    assert none == ()


def test_refine_options_validation_and_report_fields() -> None:
    assert RefineOptions().enabled is True and RefineOptions(enabled=False).enabled is False
    for bad in ({"max_steps": -1}, {"multistart": 1.5}, {"enabled": 1}, {"lpec_time_limit": 0.0}):
        with pytest.raises(MCPInputError):
            RefineOptions(**bad)  # type: ignore[arg-type]
    step = RefineStep("homotopy", -1.5, "enumerate", ((0, "G=0"),), 1, 2.0, 1.0, "Solve_Succeeded", True)
    assert step.decrease == pytest.approx(1.0)
    rep = RefinementReport("S", "certified", "homotopy", 2.0, 1.0, [step])
    assert "certified S" in rep.summary() and "1 branch step" in rep.summary()
    rep = RefinementReport(None, "LPEC too large", "homotopy", 2.0, 2.0)
    assert "uncertified (LPEC too large)" in rep.summary()
