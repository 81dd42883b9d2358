"""The sparse Newton matrix with identity rows: H = D_a + D_b J where (d_b)_i = 0 on a set A.

Those rows are H_i = (d_a)_i e_i^T. :class:`~mcpkit.engines.newton_linalg.NewtonSystem` eliminates
them (x_A = b_A / (d_a)_A) and gives SuperLU only the block H_KK of the other rows K, whose
ordering it inherits from the first block it ordered. Checked here against the full matrix
(SuperLU with its explicit zeros, and NumPy), over sequences of sets that reuse blocks and
orderings, on empty and full K, zero rows, and the Levenberg-Marquardt system with identity rows.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sps
import scipy.sparse.linalg as spla
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.engines.newton_linalg import NewtonSystem


def _jacobian(n: int, seed: int, symmetric: bool = False) -> sps.csc_matrix:
    """A random sparse J with a dominant diagonal (three entries a row), CSC with sorted indices."""
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n), 2)
    cols = (rows + rng.integers(1, n, rows.size)) % n
    R = sps.csr_matrix((rng.uniform(-1.0, 1.0, rows.size), (rows, cols)), shape=(n, n))
    if symmetric:
        R = R + R.T
    J = (R + sps.diags(1.0 + np.asarray(abs(R).sum(axis=1)).reshape(-1))).tocsc()
    J.sort_indices()
    return J


def _system(J: sps.csc_matrix) -> NewtonSystem:
    system = NewtonSystem(J.shape[0], J.indptr, J.indices, dense=False)
    system.set_jacobian(J.data)
    return system


def _weights(n: int, ident: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """d_a, d_b of the semismooth Newton matrix: both <= 0, d_b = 0 exactly on ``ident``."""
    da = rng.uniform(-1.0, 0.0, n)
    db = np.where(ident, 0.0, rng.uniform(-1.0, -0.1, n))
    da[ident] = rng.uniform(-2.0, -0.5, int(ident.sum()))
    return da, db


def _check_solves(system: NewtonSystem, da: np.ndarray, db: np.ndarray, rng: np.random.Generator) -> None:
    """factor + solve equal SuperLU of the full H (explicit zeros stored) and NumPy to 1e-12."""
    n = system.n
    H = system.matrix(da, db)  # the full pattern, identity rows storing J's entries as zeros
    assert system.factor(da, db)
    b = rng.standard_normal(n)
    x = system.solve(b)
    full = spla.splu(H.tocsc(), permc_spec="COLAMD").solve(b)
    scale = np.abs(full).max()
    np.testing.assert_allclose(x, full, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(x, np.linalg.solve(H.toarray(), b), rtol=0, atol=1e-12 * scale)
    assert system.factored_order == n - int((db == 0).sum())


@pytest.mark.parametrize("symmetric", [False, True])
@pytest.mark.parametrize("fraction", [0.0, 0.1, 0.5, 0.9])
def test_reduced_factorisation_equals_the_full_one(fraction: float, symmetric: bool) -> None:
    """Random patterns (COLAMD, or MMD on A + A^T when symmetric), identity rows at random."""
    rng = np.random.default_rng(int(fraction * 10) + 100 * symmetric)
    n = 200
    system = _system(_jacobian(n, 3, symmetric))
    for _ in range(3):  # new sets: the first is ordered afresh, the others inherit or reorder
        ident = rng.random(n) < fraction
        _check_solves(system, *_weights(n, ident, rng), rng)


def test_sets_reuse_blocks_and_orderings() -> None:
    """A sequence of sets, with repeats (cached blocks), small changes (inherited ordering), a
    large change (a new ordering), no identity rows at all (K = all rows) and only identity rows
    (nothing for SuperLU): every solve exact."""
    rng = np.random.default_rng(7)
    n = 300
    system = _system(_jacobian(n, 11))
    base = rng.random(n) < 0.5
    flip = base.copy()
    flip[rng.choice(n, 5, replace=False)] ^= True  # a few rows change side
    other = rng.random(n) < 0.2  # most of K is new: reordered
    none = np.zeros(n, dtype=bool)
    every = np.ones(n, dtype=bool)
    for ident in (base, base, flip, base, other, none, none, every, flip, other):
        _check_solves(system, *_weights(n, ident, rng), rng)
    assert system.factorizations == 10


def test_only_identity_rows_need_no_superlu() -> None:
    rng = np.random.default_rng(2)
    n = 50
    system = _system(_jacobian(n, 5))
    da, db = _weights(n, np.ones(n, dtype=bool), rng)
    assert system.factor(da, db)
    assert system.factored_order == 0
    b = rng.standard_normal(n)
    np.testing.assert_allclose(system.solve(b), b / da, rtol=1e-15)


@given(seed=st.integers(0, 2**32 - 1), fraction=st.floats(0.0, 1.0))
@settings(max_examples=25, deadline=None)
def test_reduced_solve_property(seed: int, fraction: float) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    system = _system(_jacobian(n, seed % 1000))
    for _ in range(2):
        _check_solves(system, *_weights(n, rng.random(n) < fraction, rng), rng)


def test_zero_row_is_singular_and_a_later_factor_recovers() -> None:
    """d_a = d_b = 0 in a row: H has a zero row, reported like SuperLU's "exactly singular"."""
    rng = np.random.default_rng(4)
    n = 40
    system = _system(_jacobian(n, 9))
    ident = rng.random(n) < 0.3
    da, db = _weights(n, ident, rng)
    bad = da.copy()
    bad[np.flatnonzero(ident)[0]] = 0.0
    assert not system.factor(bad, db)
    assert system.factored_order == 0
    _check_solves(system, da, db, rng)


def test_singular_kept_block_is_reported() -> None:
    """H_KK singular (two equal kept rows of J, d_a = 0 there) although H's identity rows are fine."""
    J = sps.csc_matrix(np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.5, 0.0, 3.0]]))
    J.sort_indices()
    system = _system(J)
    assert not system.factor(np.array([0.0, 0.0, -1.0]), np.array([-1.0, -1.0, 0.0]))
    assert system.factor(np.array([-1.0, 0.0, -1.0]), np.array([-1.0, -1.0, 0.0]))


def test_levenberg_marquardt_with_identity_rows() -> None:
    """The sparse augmented system with the identity rows' zeros dropped solves the normal equations."""
    rng = np.random.default_rng(5)
    n = 120
    system = _system(_jacobian(n, 13))
    da, db = _weights(n, rng.random(n) < 0.5, rng)
    Phi = rng.standard_normal(n)
    out = system.levenberg_marquardt(da, db, Phi, 1e-3, 1e-12)
    assert out is not None
    d, mu = out
    H = system.matrix(da, db).toarray()
    expected = -np.linalg.solve(H.T @ H + mu * np.eye(n), H.T @ Phi)
    np.testing.assert_allclose(d, expected, rtol=0, atol=1e-10 * np.abs(expected).max())


def test_dense_row_outside_the_ordered_set_goes_last() -> None:
    """An arrow matrix (variable 0 coupled to all): ordered while row 0 is an identity row, then
    factorised with row 0 kept in the inherited order. Row 0 (high degree) is placed last, so
    SuperLU's storage stays O(n); eliminated first it would join all rows (O(n^2))."""
    rng = np.random.default_rng(8)
    n = 400
    A = sps.lil_matrix((n, n))
    A[0, :] = rng.uniform(-1.0, 1.0, n)
    A[:, 0] = rng.uniform(-1.0, 1.0, (n, 1))
    idx = np.arange(1, n - 1)
    A[idx, idx + 1] = -1.0
    A[idx + 1, idx] = -1.0
    A.setdiag(4.0 + np.abs(A).sum(axis=1).A.ravel())
    J = A.tocsc()
    J.sort_indices()
    system = _system(J)
    first = np.zeros(n, dtype=bool)
    first[0] = True
    _check_solves(system, *_weights(n, first, rng), rng)  # ordered without row 0
    _check_solves(system, *_weights(n, np.zeros(n, dtype=bool), rng), rng)  # inherits: 1 new row of n
    assert system._splu is not None and system._splu.nnz < 20 * n


def test_an_inherited_order_that_fills_in_is_renewed(monkeypatch: pytest.MonkeyPatch) -> None:
    """With REORDER_FILL = 0 every inherited factor counts as filling in: the next new set is
    ordered afresh (and solves stay exact); a repeated set reuses its block either way."""
    import mcpkit.engines.newton_linalg as nl

    monkeypatch.setattr(nl, "REORDER_FILL", 0.0)
    calls: list[int] = []
    reorder = nl.NewtonSystem._reorder

    def counted(self: NewtonSystem, keep: np.ndarray, data: np.ndarray):  # type: ignore[no-untyped-def]
        calls.append(int(keep.sum()))
        return reorder(self, keep, data)

    monkeypatch.setattr(nl.NewtonSystem, "_reorder", counted)
    rng = np.random.default_rng(12)
    n = 200
    system = _system(_jacobian(n, 21))
    base = rng.random(n) < 0.5
    sub = base | (rng.random(n) < 0.2)  # K shrinks: inherited without the monitor
    for ident in (base, sub, base, sub):
        _check_solves(system, *_weights(n, ident, rng), rng)
    assert len(calls) == 1  # base ordered; sub inherited (then flagged); both cached afterwards
    third = sub | (rng.random(n) < 0.1)
    _check_solves(system, *_weights(n, third, rng), rng)
    assert len(calls) == 2  # a new set after the flag: ordered afresh
