"""The multiplier least squares of :mod:`mcpkit.mpcc.stationarity`: fast path vs plain BVLS."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import lsq_linear

from mcpkit.mpcc.stationarity import _Multipliers


def _instance(seed: int, m: int, n: int, rank: int) -> _Multipliers:
    """A ``_Multipliers`` with random (possibly rank-deficient) ``A`` and mixed sign bounds."""
    rng = np.random.default_rng(seed)
    mult = _Multipliers.__new__(_Multipliers)
    mult.A = rng.standard_normal((m, rank)) @ rng.standard_normal((rank, n))
    mult.b = rng.standard_normal(m)
    kind = rng.integers(0, 3, n)
    mult.lo = np.where(kind == 1, 0.0, -np.inf)
    mult.hi = np.where(kind == 2, 0.0, np.inf)
    mult.pos_nu, mult.pos_xi = {}, {}
    mult.biactive = np.zeros(0, dtype=int)
    return mult


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    m=st.integers(1, 8),
    n=st.integers(1, 8),
    rank=st.integers(1, 8),
)
def test_solve_matches_bvls_class(seed: int, m: int, n: int, rank: int) -> None:
    mult = _instance(seed, m, n, min(rank, m, n))
    u, r = mult.solve()
    ref = lsq_linear(mult.A, mult.b, bounds=(mult.lo, mult.hi), method="bvls")
    r_ref = float(np.linalg.norm(mult.A @ ref.x - mult.b))
    # the returned multipliers are feasible and as good as BVLS's, so any threshold decides alike
    assert np.all(u >= mult.lo) and np.all(u <= mult.hi)
    assert abs(r - float(np.linalg.norm(mult.A @ u - mult.b))) <= 1e-12 * max(1.0, r)
    assert r <= r_ref + 1e-8 * max(1.0, float(np.linalg.norm(mult.b)))
    for threshold in (0.5 * r_ref, r_ref + 1e-6, 2.0 * r_ref + 1e-3):
        assert (r <= threshold) == (r_ref <= threshold) or abs(r - r_ref) <= 1e-8
