"""HiGHS with fixed variables substituted out (mcpkit.engines.highs): linprog and milp.

tests/data/highs_presolve_crash_lp.npz is an LPEC branch LP (min c^T d, A_ub d <= 0, A_eq d = 0,
lo <= d <= hi) on which HiGHS's presolve (SciPy 1.17.1) corrupted the heap and ended the process
during the refinement of the pushing horizon at N = 100; it has twelve fixed variables."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sps
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

from mcpkit.engines import highs

pytestmark = pytest.mark.solver

DATA = Path(__file__).resolve().parents[1] / "data" / "highs_presolve_crash_lp.npz"


def _load() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    z = np.load(DATA)
    eq = np.zeros(tuple(z["eq_shape"]))
    eq[z["eq_row"], z["eq_col"]] = z["eq_val"]
    ub = np.zeros(tuple(z["ub_shape"]))
    ub[z["ub_row"], z["ub_col"]] = z["ub_val"]
    return z["c"], ub, eq, z["lo"], z["hi"]


def _crash_lp_wrapped() -> tuple[int, float]:
    c, ub, eq, lo, hi = _load()
    res = highs.linprog(c, A_ub=ub, b_ub=np.zeros(ub.shape[0]), A_eq=eq, b_eq=np.zeros(eq.shape[0]),
                        bounds=np.column_stack([lo, hi]))  # fmt: skip
    return int(res.status), float(res.fun)


def test_the_lp_that_crashed_highs_is_solved_in_a_separate_process() -> None:
    """Run in a child process, so that a crash fails this test instead of ending the test run;
    the optimum equals HiGHS's without presolve on the full LP (which does not crash)."""
    here = str(Path(__file__).parent)
    code = (
        f"import sys; sys.path.insert(0, {here!r}); from test_highs import _crash_lp_wrapped; "
        "s, f = _crash_lp_wrapped(); print(s, repr(f))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, (out.returncode, out.stderr[-500:])
    status, fun = out.stdout.split()
    c, ub, eq, lo, hi = _load()
    ref = linprog(c, A_ub=ub, b_ub=np.zeros(ub.shape[0]), A_eq=eq, b_eq=np.zeros(eq.shape[0]),
                  bounds=np.column_stack([lo, hi]), method="highs", options={"presolve": False})  # fmt: skip
    assert int(status) == 0 and ref.status == 0
    np.testing.assert_allclose(float(fun), ref.fun, rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("sparse", [False, True])
def test_linprog_with_fixed_components_matches_highs_on_the_whole_lp(sparse: bool) -> None:
    """Random LPs with fixed components and nonzero right-hand sides: HiGHS's optimal value on
    the whole LP, the fixed components at their values, the rows met, and the expanded
    multipliers satisfy the whole LP's stationarity c - A_ub^T y_ub - A_eq^T y_eq - z = 0."""
    rng = np.random.default_rng(3)
    n, m_eq, m_ub = 12, 4, 5
    for trial in range(30):
        eq, ub = rng.normal(size=(m_eq, n)), rng.normal(size=(m_ub, n))
        lo, hi = -np.ones(n), np.ones(n)
        fix = rng.random(n) < 0.3
        lo[fix] = hi[fix] = 0.0 if trial % 2 else rng.uniform(-0.2, 0.2, fix.sum())
        x_in = rng.uniform(-0.5, 0.5, n)
        x_in[fix] = lo[fix]
        b_eq, b_ub = eq @ x_in, ub @ x_in + rng.uniform(0, 1, m_ub)  # feasible at x_in
        c = rng.normal(size=n)
        A_ub, A_eq = (sps.csr_matrix(ub), sps.csr_matrix(eq)) if sparse else (ub, eq)
        res = highs.linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=np.column_stack([lo, hi]))
        box = np.column_stack([lo, hi])
        ref = linprog(c, A_ub=ub, b_ub=b_ub, A_eq=eq, b_eq=b_eq, bounds=box, method="highs")
        assert res.status == ref.status == 0
        x = res.x
        np.testing.assert_allclose(res.fun, ref.fun, rtol=1e-9, atol=1e-9)
        np.testing.assert_array_equal(x[fix], lo[fix])
        assert np.abs(eq @ x - b_eq).max() <= 1e-8 and (ub @ x - b_ub).max() <= 1e-8
        assert np.all(x >= lo - 1e-9) and np.all(x <= hi + 1e-9)
        z = res.lower.marginals + res.upper.marginals
        grad = c - ub.T @ res.ineqlin.marginals - eq.T @ res.eqlin.marginals - z
        assert np.abs(grad).max() <= 1e-8, trial
        assert res.lower.marginals.shape == (n,) and res.upper.marginals.shape == (n,)
        assert np.all(res.lower.marginals >= -1e-12) and np.all(res.upper.marginals <= 1e-12)


def test_linprog_leaves_lps_without_fixed_or_all_fixed_components_to_highs() -> None:
    res = highs.linprog(np.ones(3), bounds=np.zeros((3, 2)))
    assert res.status == 0 and res.fun == 0.0 and res.x.shape == (3,)
    res = highs.linprog(np.array([1.0, -1.0]), A_ub=np.array([[1.0, 1.0]]), b_ub=np.array([1.0]),
                        bounds=np.array([[0.0, 2.0], [0.0, 2.0]]))  # fmt: skip
    assert res.status == 0 and res.fun == pytest.approx(-1.0)
    bad = highs.linprog(np.ones(2), A_eq=np.array([[1.0, 1.0]]), b_eq=np.array([5.0]),
                        bounds=np.array([[1.0, 1.0], [0.0, 1.0]]))  # fmt: skip
    assert bad.status == 2 and bad.x is None  # infeasible once x_0 = 1 is substituted


def test_milp_with_fixed_components_matches_highs_on_the_whole_milp() -> None:
    """Random small MILPs (some integer, some fixed components): HiGHS's optimum on the whole
    MILP, the fixed components at their values, the rows met and the dual bound shifted back."""
    rng = np.random.default_rng(5)
    n, m = 10, 6
    for trial in range(20):
        A = rng.normal(size=(m, n))
        lo, hi = np.zeros(n), np.full(n, 3.0)
        fix = rng.random(n) < 0.3
        lo[fix] = hi[fix] = rng.integers(0, 3, fix.sum()).astype(float)
        x_in = rng.integers(0, 3, n).astype(float)
        x_in[fix] = lo[fix]
        lb, ub = A @ x_in - rng.uniform(0, 2, m), A @ x_in + rng.uniform(0, 2, m)
        integ = (rng.random(n) < 0.5).astype(int)
        c = rng.normal(size=n)
        cons = LinearConstraint(sps.csr_matrix(A) if trial % 2 else A, lb, ub)
        res = highs.milp(c, constraints=cons, integrality=integ, bounds=Bounds(lo, hi))
        ref = milp(c, constraints=LinearConstraint(A, lb, ub), integrality=integ, bounds=Bounds(lo, hi))
        assert res.status == ref.status == 0
        np.testing.assert_allclose(res.fun, ref.fun, rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(res.x[fix], lo[fix])
        r = A @ res.x
        assert np.all(r >= lb - 1e-6) and np.all(r <= ub + 1e-6)
        assert np.allclose(res.x[integ == 1], np.round(res.x[integ == 1]), atol=1e-6)
        assert res.mip_dual_bound <= res.fun + 1e-6 and res.mip_dual_bound >= ref.mip_dual_bound - 1e-5
