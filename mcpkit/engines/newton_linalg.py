r"""Linear algebra of the semismooth Newton engine: :math:`H = D_a + D_b J_F` with a fixed pattern.

Every Newton matrix of :mod:`mcpkit.engines.newton` has the form

.. math::

    H = \operatorname{diag}(d_a) + \operatorname{diag}(d_b)\, J_F(z; p),

so its sparsity pattern is that of :math:`J_F` (as CasADi reports it) merged with the diagonal,
the same for every iterate, every parameter value and every re-solve. :class:`NewtonSystem`
builds that pattern **once** and then only writes numbers:

* **dense** (few variables or a dense pattern): :math:`J_F` lives in a preallocated
  :math:`n \times n` array filled through precomputed flat indices; :math:`H` is formed in a
  second preallocated array and factorised in place by LAPACK ``getrf``
  (:func:`scipy.linalg.lu_factor` with ``overwrite_a=True, check_finite=False``);
* **sparse**: :math:`H` is a CSC matrix whose ``indptr``/``indices`` are computed once, with a
  scatter map from the nonzeros of :math:`J_F` and from the diagonal into its ``data``; SuperLU
  (:func:`scipy.sparse.linalg.splu`) factorises the block of it that is left once the
  **identity rows** are eliminated (below).

**Identity rows.** Where :math:`(d_b)_i = 0` the row is :math:`H_i = (d_a)_i e_i^T`: the crash
phase fixes every active variable this way (:math:`d_a, d_b \in \{0, 1\}`), and the
Fischer-Burmeister element does it for every pair exactly at a bound. With :math:`A` those rows
and :math:`K` the others,

.. math::

    \begin{pmatrix} D_{AA} & 0 \\ H_{KA} & H_{KK} \end{pmatrix}
    \begin{pmatrix} x_A \\ x_K \end{pmatrix} = \begin{pmatrix} b_A \\ b_K \end{pmatrix}
    \quad\Longrightarrow\quad
    x_A = b_A / (d_a)_A,\qquad H_{KK}\, x_K = b_K - (D_b)_K J_{KA}\, x_A ,

so only :math:`H_{KK}` is factorised (:math:`H` is singular exactly when :math:`H_{KK}` is or
some :math:`(d_a)_i = 0` on :math:`A`). Giving SuperLU the whole fixed pattern instead, with
the identity rows' entries of :math:`J_F` stored as zeros, costs the fill of the *whole* pattern:
SuperLU's symbolic factorisation and its supernodal kernels (``dpanel_bmod``, ``dgemv``) work on
the stored structure, zeros included. Measured on a random sparse LCP (three entries a row, half
the pairs active) at :math:`n = 4000`: 136 ms per factorisation, as much as ``splu`` of
:math:`J_F` itself (615k structural entries in :math:`L + U`), for factors with 14k nonzeros;
:math:`H_{KK}` alone takes 1-2 ms, and the engine's cold solve went from 0.30 s to 4.4 ms
(medians of 7; 8.5 ms in a noisier run), and from 4.4 s to 11-14 ms at :math:`n = 10^4`
(``docs/benchmarks.md``, MCP scaling).

What SciPy lets us reuse across factorisations (and what it does not):

* reused: the CSC structure of :math:`H` and the scatter maps; for each of the last
  :data:`KEPT_BLOCKS` sets :math:`K` (fewer when their patterns would hold more than
  :data:`KEPT_ENTRIES` times the entries of :math:`H`), the pattern of :math:`H_{KK}` and its
  gather map (a cold re-solve meets the same sets again); and a **fill-reducing ordering**.
  The first factorisation orders the columns of its :math:`H_{KK}` (``MMD_AT_PLUS_A`` for a
  structurally symmetric pattern, ``COLAMD`` otherwise); that order, extended to all variables
  (the rows outside :math:`K` of low degree first, since eliminating one joins only its few
  neighbours, those of high degree last), becomes the global order. Every later :math:`K` takes the order
  it induces: its block is gathered, already permuted, from :math:`P H P^T` and factorised with
  ``permc_spec="NATURAL"``. A fresh ordering is computed only when more than
  :data:`REORDER_NEW_ROWS` of :math:`K` lies outside the set the order was made for, or when an
  inherited order's factor needs more than :data:`REORDER_FILL` times the storage per entry of
  the factor it was made with (SuperLU's ``nnz``). On the obstacle problem of
  ``bench_mcp_scaling`` (:math:`n = 4 \cdot 10^4`) the inherited order fills *less* than a fresh
  ``MMD_AT_PLUS_A`` of each reduced set (6.9 against 12.2 stored entries per entry of
  :math:`H_{KK}` on the last set) and the cold solve takes 0.78 s instead of 1.7 s;
* not reusable: SuperLU's symbolic factorisation (elimination tree, supernode partition,
  ``Fact=SamePattern``). SciPy's ``splu`` always runs SuperLU with ``Fact=DOFACT`` and exposes
  neither the elimination tree nor the row permutation as inputs, and LAPACK has no symbolic
  phase to keep. Each factorisation therefore redoes the symbolic and numeric work.

The dense path factorises the whole of :math:`H` (identity rows included) as before.

Singular or ill-conditioned matrices are reported by :meth:`NewtonSystem.factor` returning
``False`` (SuperLU's "exactly singular", a LAPACK pivot ratio below :data:`PIVOT_RATIO`, or a
non-finite entry), so the caller can perturb or fall back.

**Levenberg-Marquardt systems** :math:`(H^T H + \mu I)\, d = -H^T \Phi`
(:meth:`NewtonSystem.levenberg_marquardt`) have a solution for every :math:`\mu > 0`, whatever
the rank of :math:`H`. :math:`\mu` is first raised to :math:`\mu_{\min} = `
``rel_floor`` :math:`\cdot \max_j \|H e_j\|_2^2` (a floor relative to the scale of :math:`H`):

* **dense**: the normal equations. :math:`H^T H` by BLAS ``dsyrk`` (:math:`n^3` flops), then
  Cholesky ``dpotrf``/``dpotrs`` (:math:`n^3/3`): about two LU factorisations. Their condition
  number is at most :math:`(\sigma_{\max}^2 + \mu)/\mu \le 1 + 1/\text{rel\_floor}`, so the
  floor bounds the error Cholesky's backward error (:math:`\sim \epsilon \|H\|^2`) can cause;
  a QR factorisation of :math:`[H; \sqrt\mu I]` would avoid squaring the condition number but
  costs about five LU factorisations;
* **sparse**: :math:`H^T H` is not formed (one dense row of :math:`H` makes it dense, and a
  5-point stencil becomes a 13-point one). The equivalent augmented system

  .. math::

      \begin{pmatrix} \sqrt\mu\, I & H \\ H^T & -\sqrt\mu\, I \end{pmatrix}
      \begin{pmatrix} y \\ d \end{pmatrix} = \begin{pmatrix} -\Phi \\ 0 \end{pmatrix}

  (:math:`d = H^T y / \sqrt\mu = -H^T (H H^T + \mu I)^{-1} \Phi = -(H^T H + \mu I)^{-1} H^T \Phi`)
  keeps the pattern of :math:`H` and :math:`H^T`; its eigenvalues are
  :math:`\pm\sqrt{\sigma_i^2 + \mu}`, so its condition number is
  :math:`\sqrt{(\sigma_{\max}^2 + \mu)/\mu}`, the square root of the normal equations'. It is
  factorised by SuperLU (``MMD_AT_PLUS_A``: the pattern is symmetric) with a fresh ordering each
  time (these systems are a fallback, not the common case), the identity rows' stored zeros
  dropped first. LSQR with damping
  :math:`\sqrt\mu` would need no factorisation, but its iteration count grows with that same
  condition number, which is large exactly when :math:`\mu` is small near a solution.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sps
import scipy.sparse.linalg as spla

from mcpkit.engines.factor_budget import (
    DENSE_SECONDS_PER_FLOP,
    GUARD_MIN_ORDER,
    FactorBudget,
    FactorRefused,
    dense_cost,
    guarded,
    sparse_cost,
)

#: Dense LAPACK for at most this many variables, whatever the pattern.
DENSE_MAX_N = 300
#: Dense LAPACK when the pattern of :math:`H` fills at least this fraction of the matrix ...
DENSE_MIN_DENSITY = 0.05
#: ... and the dense arrays (two of :math:`n^2` doubles) stay below this many variables.
DENSE_LIMIT_N = 12000
#: A set of kept rows :math:`K` gets a fresh fill-reducing ordering when more than this fraction of
#: it lies outside the set the current ordering was computed for (else it inherits that ordering).
REORDER_NEW_ROWS = 0.1
#: An inherited ordering whose factor needs more than this many times the storage per entry of
#: :math:`H_{KK}` (SuperLU's ``nnz``) than the factor it was computed with is renewed on the next set.
REORDER_FILL = 2.0
#: Patterns and gather maps of this many blocks :math:`H_{KK}` (the last sets :math:`K` met) are kept.
KEPT_BLOCKS = 8
#: ... as long as their patterns hold at most this many times the entries of :math:`H` in all.
KEPT_ENTRIES = 2
#: A dense factor whose smallest/largest :math:`|U_{ii}|` falls below this counts as singular.
PIVOT_RATIO = 1e-14


class NewtonSystem:
    r"""Factorise and solve :math:`H = \mathrm{diag}(d_a) + \mathrm{diag}(d_b) J` for one fixed pattern.

    Parameters
    ----------
    n
        Number of variables.
    colind, row
        CSC pattern of :math:`J_F` (CasADi's ``Sparsity.colind()`` and ``row()``), rows sorted
        within each column.
    dense
        Force dense (``True``) or sparse (``False``) factorisation; ``None`` chooses by size
        and density (:data:`DENSE_MAX_N`, :data:`DENSE_MIN_DENSITY`).
    """

    def __init__(self, n: int, colind: np.ndarray, row: np.ndarray, dense: bool | None = None) -> None:
        self.n = n
        colind = np.asarray(colind, dtype=np.int64)
        row = np.asarray(row, dtype=np.int64)
        col = np.repeat(np.arange(n, dtype=np.int64), np.diff(colind))
        self.j_nnz = int(row.size)
        self.j_rows = row
        # J's keys col * n + row are sorted (CSC); the diagonal entries J lacks are added to H
        jkeys = col * n + row
        dkeys = np.arange(n, dtype=np.int64) * (n + 1)
        at = np.searchsorted(jkeys, dkeys)
        hit = jkeys[np.minimum(at, jkeys.size - 1)] == dkeys if jkeys.size else np.zeros(n, dtype=bool)
        self._missing = ~((at < jkeys.size) & hit)
        self._jkeys, self._dkeys, self._at = jkeys, dkeys, at
        density = (jkeys.size + int(self._missing.sum())) / max(n * n, 1)
        if dense is None:
            dense = n <= DENSE_MAX_N or (density >= DENSE_MIN_DENSITY and n <= DENSE_LIMIT_N)
        self.dense = bool(dense)
        self.kind = "dense LAPACK getrf" if self.dense else "SuperLU splu"
        self.factorizations = 0
        self.budget: FactorBudget | None = None
        """The caller's limit for the next factorisations (:mod:`mcpkit.engines.factor_budget`); a refused
        one makes :meth:`factor` and :meth:`levenberg_marquardt` fail and sets ``budget.refusal``."""
        self._factor_id = 0  # the value of factorizations after the current factor (0: none)
        self._j_finite = True
        self.jacobian = np.zeros(self.j_nnz)
        """Current nonzeros of :math:`J_F` (CSC order); write with :meth:`set_jacobian`."""
        self._h_pattern: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        if self.dense:
            self._flat = row * n + col
            self._Jd = np.zeros((n, n))
            self._Hd = np.empty((n, n))
            self._diag = np.arange(n) * (n + 1)
            self._lu: tuple[np.ndarray, np.ndarray] | None = None
            self._lu_dadb = (np.zeros(0), np.zeros(0))  # (d_a, d_b) of the current LU
        else:
            self._J = sps.csc_matrix(
                (self.jacobian, row.astype(np.int32), colind.astype(np.int32)), shape=(n, n)
            )
            self.h_indices, self.h_indptr, self.j_pos, self.d_pos = self._pattern()
            self._h_data = np.zeros(self.h_indices.size)
            self._symmetric = self._structurally_symmetric()
            self._h_cols = np.repeat(np.arange(n, dtype=np.int32), np.diff(self.h_indptr))
            # the fill-reducing order of all variables (order[k]: the variable at position k),
            # the CSC pattern of P H P^T in it with its gather map from H's data, and the kept
            # rows (ref) the order was computed for
            self._ordered = False
            self._order = np.arange(n)
            self._p_gather = self._p_rows = self._p_cols = np.zeros(0, dtype=np.int32)
            self._ref = np.zeros(n, dtype=bool)
            self._ref_fill = 1.0  # SuperLU's storage (lu.nnz) per entry of H_KK for the ref set
            # entries off the diagonal in each row and column of H, and a "low" degree
            off = self.h_indices != self._h_cols
            self._degree = np.bincount(self.h_indices[off], minlength=n) + np.bincount(
                self._h_cols[off], minlength=n
            )
            self._low_degree = 2.0 * float(np.median(self._degree)) if n else 0.0
            # blocks of the last few identity-row sets (a cold re-solve meets the same sequence)
            self._blocks: OrderedDict[bytes, _PrincipalBlock] = OrderedDict()
            self._kept_entries = 0  # entries of H_KK over the cached blocks
            self._splu: spla.SuperLU | None = None
            self._rows = np.zeros(0, dtype=np.int64)  # the last factor's rows K, in its order ...
            self._ident = np.zeros(0, dtype=np.int64)  # ... its identity rows A ...
            self._ident_da = np.zeros(0)  # ... their diagonal (d_a)_A ...
            self._rows_db = np.zeros(0)  # ... and (d_b)_K
            self._rows_pure = False  # ... and whether (d_a)_K = 0

    # ------------------------------------------------------------------ J_F and its products
    def set_jacobian(self, values: np.ndarray) -> None:
        """Store the nonzeros of :math:`J_F` (CSC order of the pattern)."""
        self.jacobian[:] = values
        self._j_finite = bool(np.isfinite(self.jacobian).all())
        if self.dense:
            self._Jd.flat[self._flat] = self.jacobian
        elif self._J.data is not self.jacobian:  # SciPy copied the data array at construction
            self._J.data[:] = self.jacobian

    def jv(self, v: np.ndarray) -> np.ndarray:
        r""":math:`J_F v`."""
        return self._Jd @ v if self.dense else self._J @ v

    def jtv(self, v: np.ndarray) -> np.ndarray:
        r""":math:`J_F^T v`."""
        return self._Jd.T @ v if self.dense else self._J.T @ v

    def row_norms(self) -> np.ndarray:
        r""":math:`\max_j |J_{ij}|` for every row :math:`i` of :math:`J_F`."""
        if self.dense:
            return np.abs(self._Jd).max(axis=1, initial=0.0)
        return np.asarray(abs(self._J).max(axis=1).todense()).reshape(-1)

    def htv(self, da: np.ndarray, db: np.ndarray, v: np.ndarray) -> np.ndarray:
        r""":math:`H^T v = d_a \circ v + J_F^T (d_b \circ v)` (the merit gradient for :math:`v = \Phi`)."""
        return da * v + self.jtv(db * v)

    def hv(self, da: np.ndarray, db: np.ndarray, v: np.ndarray) -> np.ndarray:
        r""":math:`H v = d_a \circ v + d_b \circ (J_F v)`."""
        return da * v + db * self.jv(v)

    def _pattern(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """CSC ``(indices, indptr)`` of :math:`H` and where J's entries and the diagonal sit in it."""
        if self._h_pattern is None:
            n, jkeys, dkeys, miss = self.n, self._jkeys, self._dkeys, self._missing
            keys = np.insert(jkeys, self._at[miss], dkeys[miss])
            h_col, h_row = np.divmod(keys, n)
            indptr = np.searchsorted(h_col, np.arange(n + 1)).astype(np.int32)
            j_pos = np.arange(jkeys.size) + np.searchsorted(dkeys[miss], jkeys, side="right")
            self._h_pattern = (h_row.astype(np.int32), indptr, j_pos, np.searchsorted(keys, dkeys))
        return self._h_pattern

    def matrix(self, da: np.ndarray, db: np.ndarray) -> sps.csc_matrix:
        """:math:`H` as a CSC matrix (for tests and diagnostics)."""
        indices, indptr, j_pos, d_pos = self._pattern()
        data = np.zeros(indices.size)
        data[j_pos] = db[self.j_rows] * self.jacobian
        data[d_pos] += da
        # copies of the pattern: a caller may edit the matrix (eliminate_zeros, sort_indices)
        return sps.csc_matrix((data, indices.copy(), indptr.copy()), shape=(self.n, self.n))

    @property
    def factored_order(self) -> int:
        r"""Order of the matrix the last :meth:`factor` gave to LAPACK or SuperLU.

        :math:`n` when dense or when :math:`H` has no identity rows; else :math:`|K|`, the rows
        kept after the identity rows (:math:`(d_b)_i = 0`) are eliminated (0 after a failure).
        """
        return self.n if self.dense else int(self._rows.size)

    # ------------------------------------------------------------------ factorisation
    def factor(self, da: np.ndarray, db: np.ndarray) -> bool:
        """Factorise :math:`H`; ``False`` when it is singular, ill-conditioned or not finite."""
        self.factorizations += 1
        self._factor_id = 0
        ok = self._factor_dense(da, db) if self.dense else self._factor_sparse(da, db)
        if ok:
            self._factor_id = self.factorizations
        return ok

    def kept_factor(self) -> KeptFactor | None:
        r"""A weak handle on the current factorisation when it is one of :math:`J_{KK}` up to row scaling.

        That is when the last :meth:`factor` succeeded with :math:`(d_a)_K = 0` on the rows
        :math:`K` where :math:`(d_b)_K \ne 0` (a crash step, or a Fischer-Burmeister element
        with :math:`F_i = 0` exactly on the kept rows): then :math:`H_{KK} = \mathrm{diag}(d_b)_K
        J_{KK}`, the rows outside :math:`K` are identity rows, and :class:`KeptFactor` solves with
        :math:`J_{KK}` (of the :math:`J_F` stored at that :meth:`factor`). ``None`` otherwise.
        """
        if not self._factor_id:
            return None
        if self.dense:
            da, db = self._lu_dadb
            if da[db != 0.0].any():
                return None
        elif not self._rows_pure:
            return None
        return KeptFactor(self, self._factor_id)

    def _kept(self, fid: int) -> bool:
        """Whether the factorisation numbered ``fid`` is still the current one."""
        return fid == self._factor_id and (self._lu is not None if self.dense else self._splu is not None)

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        """Solve :math:`H x = \\text{rhs}` with the last successful factorisation."""
        if self.dense:
            assert self._lu is not None
            x, _ = sla.lapack.dgetrs(self._lu[0], self._lu[1], rhs)
            return x
        # x_A = b_A / (d_a)_A, then H_KK x_K = b_K - (D_b)_K J_KA x_A
        rows, ident = self._rows, self._ident
        if not ident.size:
            assert self._splu is not None
            x = np.empty(self.n)
            x[rows] = self._splu.solve(rhs[rows])
            return x
        x = np.zeros(self.n)
        x[ident] = rhs[ident] / self._ident_da
        if rows.size:
            assert self._splu is not None
            x[rows] = self._splu.solve(rhs[rows] - self._rows_db * (self._J @ x)[rows])
        return x

    def levenberg_marquardt(
        self, da: np.ndarray, db: np.ndarray, Phi: np.ndarray, mu: float, rel_floor: float
    ) -> tuple[np.ndarray, float] | None:
        r""":math:`d = -(H^T H + \bar\mu I)^{-1} H^T \Phi`, :math:`\bar\mu = \max(\mu, f \max_j \|He_j\|^2)`.

        :math:`f` is ``rel_floor``.

        Returns ``(d, mu_used)``, or ``None`` when :math:`H` or :math:`\Phi` is not finite, the
        factorisation fails or :math:`d` is not finite (module docstring: normal equations and
        Cholesky when dense, the augmented system and SuperLU when sparse). A dense call
        overwrites the LU factors of :meth:`factor`.
        """
        self.factorizations += 1
        finite = np.isfinite(da).all() and np.isfinite(db).all() and np.isfinite(Phi).all()
        if not (self._j_finite and finite):
            return None
        if self.dense:
            return self._lm_dense(da, db, Phi, mu, rel_floor)
        return self._lm_sparse(da, db, Phi, mu, rel_floor)

    def _lm_dense(
        self, da: np.ndarray, db: np.ndarray, Phi: np.ndarray, mu: float, rel_floor: float
    ) -> tuple[np.ndarray, float] | None:
        H = self._Hd
        self._lu = None  # H's buffer holds the LU factors of factor(); they are overwritten
        self._factor_id = 0
        np.multiply(self._Jd, db[:, None], out=H)
        H.flat[self._diag] += da
        g = H.T @ Phi
        # H is C-ordered, so H.T is Fortran-ordered: dsyrk(H.T, trans=0) = H^T H without a copy
        A = sla.blas.dsyrk(1.0, H.T, trans=0, lower=0)
        diag = np.diagonal(A).copy()
        mu = max(mu, rel_floor * float(diag.max(initial=0.0)))
        if not mu > 0:
            return None
        A.flat[:: self.n + 1] = diag + mu
        c, info = sla.lapack.dpotrf(A, lower=0, clean=0, overwrite_a=1)
        if info != 0:
            return None
        d, info = sla.lapack.dpotrs(c, -g, lower=0)
        if info != 0 or not np.isfinite(d).all():
            return None
        return d, mu

    def _lm_sparse(
        self, da: np.ndarray, db: np.ndarray, Phi: np.ndarray, mu: float, rel_floor: float
    ) -> tuple[np.ndarray, float] | None:
        H = self.matrix(da, db)
        if not db.all():  # identity rows store J's pattern as zeros, which SuperLU would fill in
            H.eliminate_zeros()
        col2 = np.asarray(H.multiply(H).sum(axis=0)).reshape(-1)
        mu = max(mu, rel_floor * float(col2.max(initial=0.0)))
        if not mu > 0:
            return None
        s = np.sqrt(mu)
        eye = sps.identity(self.n, format="csc")
        K = sps.bmat([[s * eye, H], [H.T, -s * eye]], format="csc")
        try:
            lu = guarded(
                self.budget, "the sparse Levenberg-Marquardt system", K.shape[0],
                lambda: sparse_cost(K.indices, K.indptr, K.shape[0], True),
                lambda: spla.splu(K, permc_spec="MMD_AT_PLUS_A"),
            )  # fmt: skip
        except (RuntimeError, FactorRefused):  # "Factor is exactly singular", or the caller's limit
            return None
        d = lu.solve(np.concatenate([-Phi, np.zeros(self.n)]))[self.n :]
        if not np.isfinite(d).all():
            return None
        return d, mu

    def _factor_dense(self, da: np.ndarray, db: np.ndarray) -> bool:
        if not (self._j_finite and np.isfinite(da).all() and np.isfinite(db).all()):
            return False
        if self.budget is not None and self.n >= GUARD_MIN_ORDER:
            try:
                self.budget.check("a dense LU", self.n, dense_cost(self.n), DENSE_SECONDS_PER_FLOP)
            except FactorRefused:
                self._lu = None
                return False
        H = self._Hd
        np.multiply(self._Jd, db[:, None], out=H)
        H.flat[self._diag] += da
        lu, piv, info = sla.lapack.dgetrf(H, overwrite_a=True)
        if info < 0:  # pragma: no cover - an illegal argument is a bug
            raise RuntimeError(f"LAPACK dgetrf: illegal argument {-info}")
        u = np.abs(np.diagonal(lu))
        big = u.max(initial=0.0)
        if info > 0 or big == 0.0 or u.min() <= PIVOT_RATIO * big:
            self._lu = None
            return False
        self._lu = (lu, piv)
        self._lu_dadb = (da.copy(), db.copy())  # for kept_factor (n each; H itself is n^2)
        return True

    def _structurally_symmetric(self) -> bool:
        P = sps.csc_matrix(
            (np.ones(self.h_indices.size), self.h_indices, self.h_indptr), shape=(self.n, self.n)
        )
        return (P - P.T).count_nonzero() == 0

    def _factor_sparse(self, da: np.ndarray, db: np.ndarray) -> bool:
        r"""SuperLU of :math:`H_{KK}`, :math:`K` the rows that are not identity rows (module docstring)."""
        self._failed()  # the last factor is freed before SuperLU allocates the next (peak memory)
        if not (self._j_finite and np.isfinite(da).all() and np.isfinite(db).all()):
            return False
        data = self._h_data
        data[:] = 0.0
        data[self.j_pos] = db[self.j_rows] * self.jacobian
        data[self.d_pos] += da
        ident = db == 0.0  # rows H_i = (d_a)_i e_i^T: eliminated, not factorised
        if not da[ident].all():  # a zero row
            return self._failed()
        key = np.packbits(ident).tobytes()
        block = self._blocks.get(key)
        try:
            if block is not None:
                self._blocks.move_to_end(key)
                rows, lu = block.rows, block.splu(data, self.budget)
            else:
                keep = ~ident
                m = int(keep.sum())
                if m and (not self._ordered or (keep & ~self._ref).sum() > REORDER_NEW_ROWS * m):
                    block, rows, lu = self._reorder(keep, data)
                else:
                    block = self._block(keep)
                    rows, lu = block.rows, block.splu(data, self.budget)
                    if lu is not None and lu.nnz > REORDER_FILL * self._ref_fill * block.gather.size:
                        self._ordered = False  # the inherited order fills in: the next new set reorders
                self._keep_block(key, block)
        except (RuntimeError, FactorRefused):  # "Factor is exactly singular", or the caller's limit
            return self._failed()
        self._splu, self._rows = lu, rows
        self._ident = block.ident
        self._ident_da = da[self._ident]
        self._rows_db = db[rows]
        self._rows_pure = not da[rows].any()
        return True

    def _keep_block(self, key: bytes, block: _PrincipalBlock) -> None:
        """Cache the block; the oldest go beyond :data:`KEPT_BLOCKS` or :data:`KEPT_ENTRIES` entries."""
        blocks = self._blocks
        blocks[key] = block
        self._kept_entries += block.gather.size
        limit = KEPT_ENTRIES * self.h_indices.size
        while len(blocks) > 1 and (len(blocks) > KEPT_BLOCKS or self._kept_entries > limit):
            self._kept_entries -= blocks.popitem(last=False)[1].gather.size

    def _failed(self) -> bool:
        self._splu, self._rows = None, np.zeros(0, dtype=np.int64)
        return False

    def _reorder(
        self, keep: np.ndarray, data: np.ndarray
    ) -> tuple[_PrincipalBlock, np.ndarray, spla.SuperLU]:
        r"""SuperLU of :math:`H_{KK}` with a fresh fill-reducing ordering, which becomes the global one.

        ``MMD_AT_PLUS_A`` for a structurally symmetric pattern, ``COLAMD`` otherwise. In the new
        order the rows outside :math:`K` of degree at most twice the median come before
        :math:`K`'s, the others after them (each group in natural order). Returns the block of
        :math:`K` in the new order (for the next factorisations), the rows of this factor
        (:math:`K`, natural order) and the factor.
        """
        n = self.n
        sel, indices, indptr = _principal(keep, self.h_indices, self._h_cols)
        rows = np.flatnonzero(keep)
        A = sps.csc_matrix((data[sel], indices, indptr), shape=(rows.size, rows.size))
        spec = "MMD_AT_PLUS_A" if self._symmetric else "COLAMD"
        lu = guarded(
            self.budget, "a sparse LU (fresh ordering)", rows.size,
            lambda: sparse_cost(indices, indptr, rows.size, True), lambda: spla.splu(A, permc_spec=spec),
        )  # fmt: skip
        # rows outside K: those of low degree first (eliminating one joins only its few
        # neighbours), the others last (a dense row eliminated early would fill everything)
        out = np.flatnonzero(~keep)
        low = self._degree[out] <= self._low_degree
        order = np.concatenate([out[low], rows[np.argsort(lu.perm_c)], out[~low]])
        self._ref_fill = lu.nnz / max(sel.size, 1)
        rank = np.empty(n, dtype=np.int32)
        rank[order] = np.arange(n, dtype=np.int32)
        pr, pc = rank[self.h_indices], rank[self._h_cols]
        gather = np.lexsort((pr, pc)).astype(np.int32)
        self._p_gather, self._p_rows, self._p_cols = gather, pr[gather], pc[gather]
        del pr, pc
        self._ordered, self._order, self._ref = True, order, keep.copy()
        return self._block(keep), rows, lu

    def _block(self, keep: np.ndarray) -> _PrincipalBlock:
        r""":math:`H_{KK}` in the global order (the order induced on :math:`K`): pattern and gather map."""
        kp = keep[self._order]
        sel, indices, indptr = _principal(kp, self._p_rows, self._p_cols)
        return _PrincipalBlock(self._order[kp], np.flatnonzero(~keep), self._p_gather[sel], indices, indptr)


def _principal(
    keep: np.ndarray, rows: np.ndarray, cols: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(entries, indices, indptr)`` of the principal submatrix ``keep`` of a sorted CSC pattern.

    ``rows``/``cols`` hold the pattern's row and column of every entry in CSC order; the kept
    entries stay in CSC order, so no sort is needed.
    """
    sel = np.flatnonzero(keep[rows] & keep[cols])
    new = np.cumsum(keep, dtype=np.int32) - 1
    m = int(new[-1]) + 1 if new.size else 0
    indptr = np.zeros(m + 1, dtype=np.int32)
    np.cumsum(np.bincount(new[cols[sel]], minlength=m), out=indptr[1:])
    return sel, new[rows[sel]].astype(np.int32), indptr


class _PrincipalBlock:
    r"""A principal block :math:`H_{KK}` of :math:`H`, in the order induced by the global ordering.

    ``rows`` are the variables of :math:`K` in that order, ``ident`` the others (the identity
    rows), ``gather`` takes the block's CSC ``data`` from :math:`H`'s, ``indices``/``indptr`` are
    its pattern.
    """

    def __init__(
        self, rows: np.ndarray, ident: np.ndarray, gather: np.ndarray, indices: np.ndarray, indptr: np.ndarray
    ) -> None:
        self.rows, self.ident = rows, ident
        self.size = int(rows.size)
        self.gather, self.indices, self.indptr = gather, indices, indptr
        self._units: float | None = None  # the cost estimate of its factorisation, once computed

    def splu(self, data: np.ndarray, budget: FactorBudget | None = None) -> spla.SuperLU | None:
        """SuperLU of the block with :math:`H`'s values ``data``, in the block's (fill-reducing) order.

        Under a caller's ``budget`` it is estimated (once per block), refused or run stoppably
        (:func:`~mcpkit.engines.factor_budget.guarded`).
        """
        m = self.size
        if not m:
            return None
        A = sps.csc_matrix((data[self.gather], self.indices, self.indptr), shape=(m, m))
        what = "a sparse LU (inherited ordering)"
        return guarded(budget, what, m, self.units, lambda: spla.splu(A, permc_spec="NATURAL"))

    def units(self) -> float:
        """The cost estimate of factorising the block in its order (computed once)."""
        if self._units is None:
            self._units = sparse_cost(self.indices, self.indptr, self.size, False)
        return self._units


def _stale_factor() -> KeptFactor:
    """A :class:`KeptFactor` of no system (what a pickled one becomes)."""
    return KeptFactor(None, 0)


class KeptFactor:
    r"""A weak handle on a :class:`NewtonSystem`'s LU of :math:`H_{KK} = \mathrm{diag}(d_b)_K J_{KK}`.

    Made by :meth:`NewtonSystem.kept_factor`. It holds a weak reference to the system and the
    number of the factorisation, nothing else: while that factorisation is the system's current
    one (no later :meth:`~NewtonSystem.factor`, no dense Levenberg-Marquardt system, the system
    alive), :meth:`rows` gives :math:`K` and :meth:`solve` solves with :math:`J_{KK}` (the
    :math:`J_F` stored when it was factorised) or its transpose; afterwards they return ``None``.
    Copies share the handle; a pickled one comes back stale.
    """

    __slots__ = ("_ref", "_id", "version")

    def __init__(self, system: NewtonSystem | None, fid: int) -> None:
        self._ref = None if system is None else weakref.ref(system)
        self._id = fid
        self.version: int | None = None
        """The structure version of the declaration it was made for (set by the route), if any."""

    def _system(self) -> NewtonSystem | None:
        s = None if self._ref is None else self._ref()
        return s if s is not None and s._kept(self._id) else None

    @property
    def current(self) -> bool:
        """Whether the factorisation is still the system's current one."""
        return self._system() is not None

    @property
    def method(self) -> str:
        """``"dense LU (Newton engine)"`` or ``"SuperLU (Newton engine)"``."""
        s = None if self._ref is None else self._ref()
        return f"{'dense LU' if s is not None and s.dense else 'SuperLU'} (Newton engine)"

    def rows(self) -> np.ndarray | None:
        """:math:`K`, in the order :meth:`solve` takes and returns its rows (``None`` when stale)."""
        s = self._system()
        if s is None:
            return None
        return np.flatnonzero(s._lu_dadb[1]) if s.dense else s._rows

    def pivots(self) -> np.ndarray | None:
        r"""The diagonal of the factor :math:`U` (of all of :math:`H` when dense; ``None`` when stale)."""
        s = self._system()
        if s is None:
            return None
        if s.dense:
            assert s._lu is not None
            return np.diagonal(s._lu[0])
        assert s._splu is not None
        return np.asarray(s._splu.U.diagonal())

    def solve(self, rhs: np.ndarray, trans: bool = False) -> np.ndarray | None:
        r""":math:`J_{KK}^{-1} b` (``trans``: :math:`J_{KK}^{-\top} b`), b = ``rhs`` (rows as :meth:`rows`).

        ``rhs`` has :math:`|K|` rows (one or more columns). With :math:`H_{KK} = D J_{KK}`,
        :math:`D = \mathrm{diag}(d_b)_K`: :math:`J_{KK} x = b \iff H_{KK} x = D b` and
        :math:`J_{KK}^\top y = w \iff y = D v,\ H_{KK}^\top v = w`. Dense, :math:`H` is solved
        whole with zeros on the identity rows (whose :math:`x` is then 0, and whose :math:`v`
        does not enter :math:`y`). ``None`` when stale.
        """
        s = self._system()
        if s is None:
            return None
        rhs = np.asarray(rhs, dtype=float)
        if s.dense:
            assert s._lu is not None
            rows = np.flatnonzero(s._lu_dadb[1])
            d = s._lu_dadb[1][rows]
            d = d if rhs.ndim == 1 else d[:, None]
            full = np.zeros((s.n,) + rhs.shape[1:])
            full[rows] = rhs if trans else d * rhs
            x, _ = sla.lapack.dgetrs(s._lu[0], s._lu[1], full, trans=1 if trans else 0)
            return d * x[rows] if trans else np.asarray(x[rows])
        assert s._splu is not None
        d = s._rows_db if rhs.ndim == 1 else s._rows_db[:, None]
        if trans:
            return d * s._splu.solve(rhs, trans="T")
        return np.asarray(s._splu.solve(d * rhs))

    def __copy__(self) -> KeptFactor:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> KeptFactor:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (_stale_factor, ())

    def __repr__(self) -> str:
        return f"KeptFactor({self.method}, {'current' if self.current else 'stale'})"
