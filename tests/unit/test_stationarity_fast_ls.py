"""The multiplier least squares of :mod:`mcpkit.mpcc.stationarity`: fast path vs plain BVLS."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sps
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import lsq_linear

from mcpkit.mpcc.stationarity import (
    SPARSE_CERTIFICATE_MIN,
    _Multipliers,
    _regularised_lstsq,
    _sparse_certificate,
)


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


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    m=st.integers(1, 12),
    n=st.integers(1, 14),
    rank=st.integers(1, 12),
    scale=st.sampled_from([0.5, 1.0, 2.0, 10.0]),
)
def test_sparse_certificate_decides_like_bvls(seed: int, m: int, n: int, rank: int, scale: float) -> None:
    """A certificate is in the box and meets the threshold; then BVLS meets it too (never a flip)."""
    mult = _instance(seed, m, n, min(rank, m, n))
    ref = lsq_linear(mult.A, mult.b, bounds=(mult.lo, mult.hi), method="bvls")
    r_ref = float(np.linalg.norm(mult.A @ ref.x - mult.b))
    threshold = scale * r_ref + 1e-9
    v = _sparse_certificate(sps.csc_matrix(mult.A), mult.b, mult.lo, mult.hi, threshold)
    if v is not None:
        assert np.all(v >= mult.lo) and np.all(v <= mult.hi)
        assert float(np.linalg.norm(mult.A @ v - mult.b)) <= threshold
        assert r_ref <= threshold + 1e-9
    if threshold < r_ref - 1e-9:  # below the bound-constrained minimum no certificate can exist
        assert v is None


def test_sparse_certificate_on_a_large_structured_system() -> None:
    """Bound multipliers duplicated by free ones (as when ``H_j = x_j`` sits at its bound): the
    unsigned minimum-norm solution breaks the signs, the certificate is found sparsely, and
    :meth:`_Multipliers.solve` returns it when a threshold is given."""
    rng = np.random.default_rng(3)
    m, k = 700, 400
    J = sps.random(m, m - k, density=0.004, random_state=4, format="csc") + sps.eye(m, m - k, format="csc")
    E = sps.eye(m, format="csc")[:, :k]  # bound multipliers, lam >= 0 ...
    A = sps.hstack([J, E, -E], format="csc")  # ... duplicated by free pair multipliers
    u_true = np.concatenate([rng.standard_normal(m - k), np.zeros(k), rng.standard_normal(k)])
    b = A @ u_true
    lo = np.concatenate([np.full(m - k, -np.inf), np.zeros(k), np.full(k, -np.inf)])
    hi = np.full(lo.size, np.inf)
    v = _sparse_certificate(A, b, lo, hi, 1e-8 * max(1.0, float(np.linalg.norm(b))))
    assert v is not None and np.all(v[m - k : m] >= 0.0)
    assert float(np.linalg.norm(A @ v - b)) <= 1e-8 * max(1.0, float(np.linalg.norm(b)))
    mult = _Multipliers.__new__(_Multipliers)
    mult.A, mult.b, mult.lo, mult.hi = A.toarray(), b, lo, hi
    assert mult.A.size >= SPARSE_CERTIFICATE_MIN
    u, r = mult.solve(threshold=1e-6)
    assert r <= 1e-6 and np.all(u >= lo)


def test_regularised_lstsq_matches_dense_lstsq_on_full_rank() -> None:
    rng = np.random.default_rng(0)
    A = rng.standard_normal((30, 12))
    b = rng.standard_normal(30)
    v = _regularised_lstsq(sps.csc_matrix(A), b)
    ref = np.linalg.lstsq(A, b, rcond=None)[0]
    np.testing.assert_allclose(v, ref, rtol=1e-7, atol=1e-9)
