"""The multiplier tests of :mod:`mcpkit.stationarity.multipliers`: the smallest max-norm residual
(cheap least-squares candidate, else the exact LP) against independent references."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sps
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog, lsq_linear

from mcpkit.stationarity.multipliers import (
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
    mult.undecided = []
    return mult


def _linf_reference(A: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> float:
    """The smallest max-norm residual over the box, from a dense LP written out here."""
    m, n = A.shape
    c = np.r_[np.zeros(n), 1.0]
    A_ub = np.block([[A, -np.ones((m, 1))], [-A, -np.ones((m, 1))]])
    bounds = list(zip(np.r_[lo, 0.0], np.r_[hi, np.inf], strict=True))
    res = linprog(c, A_ub=A_ub, b_ub=np.r_[b, -b], bounds=bounds, method="highs")
    assert res.status == 0
    return float(res.fun)


def _assume_sound(x: np.ndarray) -> None:
    """Skip instances where the reference BVLS point is numerically meaningless: on an exactly
    rank-deficient A (product of thin random factors) BVLS can walk along singular values of
    1e-15 to entries of 1e13 and lower the residual by rounding noise (seed 801, m 8, n 5,
    rank 2: 1.2680 against the least-squares minimum 1.2714 that gelsy's rank-2 solution,
    gradient 4e-16, attains). No multiplier of that size is a stationarity certificate."""
    assume(float(np.abs(x).max(initial=0.0)) <= 1e8)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    m=st.integers(1, 8),
    n=st.integers(1, 8),
    rank=st.integers(1, 8),
)
def test_solve_is_the_max_norm_minimum(seed: int, m: int, n: int, rank: int) -> None:
    """solve() returns multipliers in the box whose max-norm residual is the LP minimum: never
    above BVLS's point's (a candidate it could have kept), never below an independent LP's."""
    mult = _instance(seed, m, n, min(rank, m, n))
    u, r = mult.solve()
    ref = lsq_linear(mult.A, mult.b, bounds=(mult.lo, mult.hi), method="bvls")
    _assume_sound(ref.x)
    scale = max(1.0, float(np.abs(mult.b).max()))
    assert np.all(u >= mult.lo) and np.all(u <= mult.hi)
    assert abs(r - float(np.abs(mult.A @ u - mult.b).max())) <= 1e-12 * max(1.0, r)
    assert r <= float(np.abs(mult.A @ ref.x - mult.b).max()) + 1e-8 * scale
    best = _linf_reference(mult.A, mult.b, mult.lo, mult.hi)
    assert abs(r - best) <= 1e-7 * scale
    for threshold in (0.5 * best, best + 1e-6, 2.0 * best + 1e-3):  # decides as the reference
        assert (r <= threshold) == (best <= threshold) or abs(r - best) <= 1e-7 * scale


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    m=st.integers(1, 12),
    n=st.integers(1, 14),
    rank=st.integers(1, 12),
    scale=st.sampled_from([0.5, 1.0, 2.0, 10.0]),
)
def test_sparse_certificate_decides_like_the_lp(seed: int, m: int, n: int, rank: int, scale: float) -> None:
    """A certificate is in the box and meets the (max-norm) threshold, so the exact minimum
    meets it too (never a flip); below that minimum no certificate can exist."""
    mult = _instance(seed, m, n, min(rank, m, n))
    ref = lsq_linear(mult.A, mult.b, bounds=(mult.lo, mult.hi), method="bvls")
    _assume_sound(ref.x)
    r_ref = float(np.linalg.norm(mult.A @ ref.x - mult.b))
    best = _linf_reference(mult.A, mult.b, mult.lo, mult.hi)
    threshold = scale * best + 1e-9
    v, r0, _ = _sparse_certificate(sps.csc_matrix(mult.A), mult.b, mult.lo, mult.hi, threshold)
    # the unconstrained least-squares residual is a lower bound of the bound-constrained one
    assert r0 <= r_ref * (1 + 1e-6) + 1e-7 * max(1.0, float(np.linalg.norm(mult.b)))
    if v is not None:
        assert np.all(v >= mult.lo) and np.all(v <= mult.hi)
        assert float(np.abs(mult.A @ v - mult.b).max()) <= threshold
        assert best <= threshold + 1e-9
    if threshold < best - 1e-9:
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
    v, _, _ = _sparse_certificate(A, b, lo, hi, 1e-8 * max(1.0, float(np.linalg.norm(b))))
    assert v is not None and np.all(v[m - k : m] >= 0.0)
    assert float(np.linalg.norm(A @ v - b)) <= 1e-8 * max(1.0, float(np.linalg.norm(b)))
    mult = _Multipliers.__new__(_Multipliers)
    mult.A, mult.b, mult.lo, mult.hi, mult.undecided = A.toarray(), b, lo, hi, []
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


def _scaled_system(seed: int) -> tuple[sps.csc_matrix, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A sparse multiplier system whose columns differ by 1e5 in norm (as on the plate-design
    MPCC, where bound rows of size 1e5 sit beside dynamics rows of size 0.2), a planted
    sign-respecting solution and its right-hand side."""
    rng = np.random.default_rng(seed)
    m, n = 600, 640
    A = sps.random(m, n, density=0.005, random_state=seed, format="csc") + sps.eye(m, n, format="csc")
    col = np.where(rng.random(n) < 0.1, 1e5, 0.2)
    A = (A @ sps.diags(col)).tocsc()
    lo = np.where(rng.random(n) < 0.3, 0.0, -np.inf)
    u_true = rng.standard_normal(n) / col
    u_true[lo == 0.0] = np.abs(u_true[lo == 0.0])
    return A, A @ u_true, lo, np.full(n, np.inf), u_true


def test_badly_scaled_columns_still_give_a_certificate() -> None:
    """Without the column equilibration the regularisation (relative to the largest entry,
    1e5) swamps the 0.2-sized columns and no certificate is found; with it one is."""
    A, b, lo, hi, _ = _scaled_system(5)
    threshold = 1e-8 * max(1.0, float(np.linalg.norm(b)))
    v, r0, _ = _sparse_certificate(A, b, lo, hi, threshold)
    assert v is not None and np.all(v >= lo)
    assert float(np.linalg.norm(A @ v - b)) <= threshold and r0 <= threshold


def test_no_multipliers_is_decided_by_the_lp() -> None:
    """A right-hand side off the range of A (five rows of nothing with b = 1): no multipliers
    come within 1 in the max-norm; the sparse candidate fails and the exact LP says so."""
    A, b, lo, hi, _ = _scaled_system(6)
    rng = np.random.default_rng(7)
    b = b + 1e-2 * rng.standard_normal(b.size)  # rank(A) = 600 = m here: add rows of nothing
    A = sps.vstack([A, sps.csc_matrix((5, A.shape[1]))], format="csc")
    b = np.concatenate([b, np.ones(5)])  # ||residual|| >= sqrt(5) whatever the multipliers
    mult = _Multipliers.__new__(_Multipliers)
    mult.A, mult.b, mult.lo, mult.hi, mult.undecided = A.toarray(), b, lo, hi, []
    assert mult.A.size >= SPARSE_CERTIFICATE_MIN
    u, r = mult.solve(threshold=1e-6)
    assert r >= 1.0 - 1e-9 and np.all(u >= lo) and not mult.undecided
    assert abs(r - float(np.abs(mult.A @ u - b).max())) <= 1e-9 * r


def test_an_lp_out_of_time_is_undecided_not_no() -> None:
    """With its deadline already gone the LP does not run: the residual is inf and the reason
    is recorded, so classify_stationarity reports 'not checked' instead of 'not_stationary'."""
    import time

    A, b, lo, hi, _ = _scaled_system(8)
    b = b + 1e-2  # no cheap certificate at this threshold
    mult = _Multipliers.__new__(_Multipliers)
    mult.A, mult.b, mult.lo, mult.hi, mult.undecided = A.toarray(), b, lo, hi, []
    u, r = mult.solve(threshold=1e-12, deadline=time.perf_counter() - 1.0)
    assert r == np.inf and mult.undecided and "time limit" in mult.undecided[0]


def test_a_search_without_the_null_space_is_never_called_exhaustive(monkeypatch) -> None:
    """Above NULL_SPACE_MAX_ENTRIES the SVD is skipped: the M/C search tries the suggested
    pattern only and reports that it was not exhaustive, whatever it found."""
    import mcpkit.stationarity.certificate as stat
    import mcpkit.stationarity.multipliers as mult_mod

    rng = np.random.default_rng(1)
    mult = _Multipliers.__new__(_Multipliers)
    # weak multipliers (nu_0, xi_0) = (1, -1) for the one biactive pair: no S multipliers
    mult.A = np.hstack([rng.standard_normal((6, 3)), np.eye(6)[:, :2]])
    mult.b = mult.A @ np.array([0.3, -0.2, 0.5, 1.0, -1.0])
    mult.lo, mult.hi = np.full(5, -np.inf), np.full(5, np.inf)
    mult.biactive = np.array([0])
    mult.pos_nu, mult.pos_xi = {0: 3}, {0: 4}
    mult.undecided = []
    u_weak, _ = mult.solve()
    suggest = lambda a, c: "nonneg" if a + c >= 0 else "nonpos"  # noqa: E731
    _, _, full = stat._search(mult, u_weak, ("nonneg", "nonpos"), suggest, 1e-9)
    assert full  # with the null space (here trivial) the search is exhaustive
    monkeypatch.setattr(mult_mod, "NULL_SPACE_MAX_ENTRIES", 10)
    assert mult.undetermined() is None
    _, _, full = stat._search(mult, u_weak, ("nonneg", "nonpos"), suggest, 1e-9)
    assert not full


def test_tikhonov_corrections_reach_the_least_squares_minimum() -> None:
    """A rank-deficient, badly conditioned A whose min-norm solution is large: one regularised
    solve leaves a residual well above the least-squares minimum (0); the corrections of
    _regularised_lstsq(refine=8) bring it down to it."""
    rng = np.random.default_rng(2)
    m, n, k = 80, 60, 40
    U, _ = np.linalg.qr(rng.standard_normal((m, k)))
    V, _ = np.linalg.qr(rng.standard_normal((n, k)))
    s = np.logspace(0, -5, k)  # sigma down to 1e-5: sigma^2 = 1e-10 >> delta = 1e-12
    A = sps.csc_matrix(U @ np.diag(s) @ V.T)
    b = A @ (V @ (1e3 * rng.standard_normal(k)))  # consistent: minimum residual 0
    one = float(np.linalg.norm(A @ _regularised_lstsq(A, b) - b))
    refined = float(np.linalg.norm(A @ _regularised_lstsq(A, b, refine=8) - b))
    assert one > 1e-6 and refined < 1e-3 * one
