"""HiGHS on LPEC branch LPs (mcpkit.stationarity.lpec): fixed variables are substituted out first.

tests/data/highs_presolve_crash_lp.npz is the branch LP (min c^T d, A_ub d <= 0, A_eq d = 0,
lo <= d <= hi) on which HiGHS's presolve (SciPy 1.17.1) corrupted the heap and ended the process
during the refinement of the pushing horizon at N = 100; it has twelve fixed variables."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import linprog

from mcpkit.stationarity.lpec import _linprog_fixed_out

pytestmark = pytest.mark.solver

DATA = Path(__file__).resolve().parents[1] / "data" / "highs_presolve_crash_lp.npz"


def _load() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    z = np.load(DATA)
    eq = np.zeros(tuple(z["eq_shape"]))
    eq[z["eq_row"], z["eq_col"]] = z["eq_val"]
    ub = np.zeros(tuple(z["ub_shape"]))
    ub[z["ub_row"], z["ub_col"]] = z["ub_val"]
    return z["c"], ub, eq, z["lo"], z["hi"]


def test_the_lp_that_crashed_highs_is_solved_in_a_separate_process() -> None:
    """Run in a child process, so that a crash fails this test instead of ending the test run;
    the optimum equals HiGHS's without presolve on the full LP (which does not crash)."""
    here = str(Path(__file__).parent)
    code = (
        f"import sys; sys.path.insert(0, {here!r}); from test_lpec_highs import _load; "
        "from mcpkit.stationarity.lpec import _linprog_fixed_out; "
        "s, m, d, f = _linprog_fixed_out(*_load()); print(s, repr(f))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, (out.returncode, out.stderr[-500:])
    status, fun = out.stdout.split()
    c, ub, eq, lo, hi = _load()
    ref = linprog(c, A_ub=ub, b_ub=np.zeros(ub.shape[0]), A_eq=eq, b_eq=np.zeros(eq.shape[0]),
                  bounds=np.column_stack([lo, hi]), method="highs", options={"presolve": False})  # fmt: skip
    assert int(status) == 0 and ref.status == 0
    np.testing.assert_allclose(float(fun), ref.fun, rtol=1e-7, atol=1e-10)


def test_fixed_variables_out_gives_the_same_optimum_and_a_feasible_point() -> None:
    """Random small LPs with some fixed components: the same optimal value as HiGHS on the whole
    LP, the fixed components at their values, the rows met; all-fixed boxes are left to HiGHS."""
    rng = np.random.default_rng(3)
    for trial in range(20):
        n, m_eq, m_ub = 12, 4, 5
        eq, ub = rng.normal(size=(m_eq, n)), rng.normal(size=(m_ub, n))
        c = rng.normal(size=n)
        lo, hi = -np.ones(n), np.ones(n)
        fix = rng.random(n) < 0.3
        lo[fix] = hi[fix] = 0.0 if trial % 2 else rng.uniform(-0.2, 0.2, fix.sum())
        s, _, d, f = _linprog_fixed_out(c, ub, eq, lo, hi)
        ref = linprog(c, A_ub=ub, b_ub=np.zeros(m_ub), A_eq=eq, b_eq=np.zeros(m_eq),
                      bounds=np.column_stack([lo, hi]), method="highs")  # fmt: skip
        assert s == ref.status
        if s == 0:
            assert d is not None
            np.testing.assert_allclose(f, ref.fun, rtol=1e-9, atol=1e-9)
            np.testing.assert_array_equal(d[fix], lo[fix])
            assert np.abs(eq @ d).max() <= 1e-8 and (ub @ d).max() <= 1e-8
    s, _, d, f = _linprog_fixed_out(np.ones(3), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(3), np.zeros(3))
    assert s == 0 and d is not None and f == 0.0
