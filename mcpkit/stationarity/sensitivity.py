r"""Sensitivity of an MCP solution to its parameters: :math:`dz/dp` by implicit differentiation.

At a solution :math:`z^*` of the parametric box MCP :math:`l \le z \le u \perp F(z; p)` the pairs
split, with :math:`\tau = 10\,\mathrm{tol}` (the rule of :func:`~mcpkit.solving.residuals.classify_pairs`):

* **free** :math:`I`: :math:`l_i + \tau < z_i < u_i - \tau` (so :math:`F_i = 0`);
* **strongly active** :math:`A`: :math:`z_i` within :math:`\tau` of :math:`l_i` with
  :math:`F_i > \tau`, or of :math:`u_i` with :math:`F_i < -\tau`, or :math:`l_i = u_i`;
* **degenerate** :math:`D` (biactive): :math:`z_i` within :math:`\tau` of a bound and
  :math:`|F_i| \le \tau`.

Without degenerate pairs the normal map is smooth near :math:`(z^*, p)` and, when
:math:`J_{II} = \partial F_I/\partial z_I` is nonsingular, the implicit function theorem gives

.. math::

    \frac{dz_I}{dp} = -J_{II}^{-1}\,\frac{\partial F_I}{\partial p},\qquad
    \frac{dz_A}{dp} = 0 .

With degenerate pairs the solution map is in general only directionally differentiable
(Robinson 1980; Ralph & Dempe 1995): the derivative :math:`dz` in a direction :math:`dp` solves
the mixed LCP

.. math::

    (J\,dz + J_p\,dp)_I = 0,\qquad dz_A = 0,\qquad
    0 \le dz_i \perp (J\,dz + J_p\,dp)_i \ge 0 \ (i \in D \text{ at } l_i),\qquad
    0 \ge dz_i \perp (J\,dz + J_p\,dp)_i \le 0 \ (i \in D \text{ at } u_i),

which is solved by eliminating the free rows (Schur complement
:math:`S = J_{DD} - J_{DI} J_{II}^{-1} J_{ID}`) and running Lemke's method
(:func:`~mcpkit.engines.lemke_pivoting.lemke_lcp`) on the sign-flipped LCP in :math:`dz_D`. The
directional derivative exists and is unique when :math:`S` is a P-matrix (then the solution
map is strongly regular); this is verified (principal minors for :math:`|D| \le 12`, a positive
definite symmetric part beyond), and :class:`~mcpkit.errors.NotDifferentiableError` is raised when
it cannot be.

:math:`J = \partial F/\partial z` and :math:`J_p = \partial F/\partial p` always come from the
declaration (the CasADi lowering, with the matrices of affine blocks read directly), whatever
route or backend found :math:`z^*`; the CasADi functions are built once per MCP structure and
cached on the MCP together with everything else that depends only on the structure (bounds,
sparsity patterns, constant Jacobians). :math:`J_{II}` is factorised by dense LAPACK when the MCP
has at most :data:`DENSE_LIMIT` pairs and :math:`J`'s pattern is at least :data:`DENSE_DENSITY`
full, else by LAPACK's banded LU when its band is at most :data:`BAND_LIMIT` diagonals wide, in
the declaration's order or in the reverse Cuthill-McKee order of :math:`J`'s pattern (computed
once per structure, :meth:`Derivatives.band_order`), else by dense LAPACK again when
:math:`|I| \le` :data:`DENSE_LIMIT`, else by SuperLU (``scipy.sparse.linalg.splu``). None of
these runs when the result carries the Newton engine's own LU of exactly :math:`J_{II}` (up to
a row scaling), which it does after a cold solve of an MCP whose Jacobian does not depend on
:math:`z` (an LCP) that ended with a crash step: the engine's last system then is
:math:`\mathrm{diag}(d_b)_I J_{II}` with every other row an identity row.
``_kept_solver`` states the conditions under which it is used; the factorisation is held
weakly (by the :class:`~mcpkit.Solver` that solved), so it is used only while that solver
lives and has not factorised again.
:math:`dz/dp` is a dense :math:`n \times n_p` array by default, or a ``scipy.sparse.csc_array``
with ``sparse=True`` (automatic with ``sparse=None`` above :data:`SPARSE_AUTO_ENTRIES` entries):
its columns are dense on the coupled components of :math:`J_{II}` that the parameter touches and
zero elsewhere; a directional derivative or a vector-Jacobian product is a vector.

References
----------
S. M. Robinson, "Strongly regular generalized equations", Math. Oper. Res. 5 (1980) 43-62.
D. Ralph, S. Dempe, "Directional derivatives of the solution of a parametric nonlinear program",
Math. Programming 70 (1995) 159-172.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import casadi as ca
import numpy as np
import scipy.sparse as sps
import scipy.sparse.linalg as spla
from scipy.linalg import lapack

from mcpkit.engines.lemke_pivoting import lemke_lcp
from mcpkit.engines.newton_linalg import KeptFactor
from mcpkit.errors import MCPInputError, NonFiniteError, NotDifferentiableError, ShapeError, SolveFailedError
from mcpkit.lowering.casadi import lower_to_casadi
from mcpkit.problems.arrays import as_real
from mcpkit.problems.functions import AffineFunction
from mcpkit.problems.hooks import Hook, provide
from mcpkit.problems.mcp import MCP
from mcpkit.problems.names import casadi_name
from mcpkit.solving.registry import unknown_name

#: Pairs up to which :math:`J` is held and :math:`J_{II}` factorised densely (LAPACK), when
#: :math:`J`'s pattern fills at least :data:`DENSE_DENSITY` of the matrix; sparse otherwise.
DENSE_LIMIT = 200

#: Pattern density (stored entries of :math:`J` over :math:`n^2`) from which a problem of at most
#: :data:`DENSE_LIMIT` pairs is treated densely; a sparser :math:`J` goes to the banded LU or SuperLU
#: (for a tridiagonal :math:`J` at :math:`n = 100` the banded LU is several times faster than dense).
DENSE_DENSITY = 0.1

#: Entries (:math:`n \times n_p`) above which ``sensitivity(sparse=None)`` returns a sparse matrix.
SPARSE_AUTO_ENTRIES = 10_000_000

#: Entries of one dense chunk of right-hand sides when :math:`dz/dp` is assembled sparse.
SPARSE_CHUNK_ENTRIES = 2_000_000

#: Degenerate pairs up to which the P-matrix property of the Schur complement is checked by
#: all principal minors (:math:`2^{|D|}` determinants); above, a positive definite symmetric part.
MINOR_LIMIT = 12

#: Widest band (diagonals :math:`k_l + k_u + 1`) factorised by LAPACK's banded LU; SuperLU beyond.
BAND_LIMIT = 32

#: Relative pivot size below which :math:`J_{II}` counts as singular.
SINGULAR_RTOL = 1e-13


class _CasadiJacobian:
    """One CasADi Jacobian output as SciPy CSC or dense: the pattern cached, the value too when constant."""

    def __init__(
        self, name: str, z: Any, p: Any, expr: Any, shape: tuple[int, int], rows: np.ndarray
    ) -> None:
        self.fun = ca.Function(casadi_name(name), [z, p], [expr])
        sp = self.fun.sparsity_out(0)
        self.shape = shape
        self.row = rows[np.asarray(sp.row(), dtype=np.int64)]
        self.colind = np.asarray(sp.colind(), dtype=np.int64)
        self.constant = sp.nnz() == 0 or not (ca.depends_on(expr, z) or ca.depends_on(expr, p))
        self._cached: dict[bool, Any] = {}

    def value(self, z: np.ndarray, p: np.ndarray, dense: bool) -> Any:
        """The Jacobian at ``(z, p)``: a dense array when ``dense``, else CSC."""
        hit = self._cached.get(dense)
        if hit is not None:
            return hit
        data = np.asarray(self.fun(z, p).nonzeros(), dtype=float) if self.row.size else np.zeros(0)
        out: Any = sps.csc_array((data, self.row, self.colind), shape=self.shape)
        if dense:
            out = out.toarray()
        if self.constant:
            self._cached[dense] = out
        return out


class Derivatives:
    r""":math:`J = \partial F/\partial z` and :math:`J_p = \partial F/\partial p` of an MCP, built once.

    Rows of affine blocks :math:`F_B = M z_S + q(p)` take :math:`\partial F_B/\partial z` from the
    declaration's :math:`M` (CasADi's MX ``jacobian`` of a dense block costs seconds at
    :math:`n = 1000`); the other rows, and all of :math:`J_p`, are differentiated by CasADi.
    Parts that depend on neither :math:`z` nor :math:`p` (an LCP's :math:`M`, an affine
    :math:`q(p)`'s :math:`J_p`) are evaluated once. Use :func:`derivatives` (cached on the MCP)
    rather than this constructor.
    """

    def __init__(self, problem: MCP) -> None:
        cas = lower_to_casadi(problem)
        self.n, self.n_params = problem.n, problem.n_params
        self.F_fun = cas.F_fun
        rows: list[np.ndarray] = []
        rr: list[np.ndarray] = []
        cc: list[np.ndarray] = []
        vv: list[np.ndarray] = []
        starts = {b.name: b.slice for b in problem.blocks}
        for b in problem.blocks:
            fb = problem.function_block(b.name)
            if not isinstance(fb, AffineFunction):
                continue
            cols = np.concatenate([np.arange(starts[nm].start, starts[nm].stop) for nm in fb.over])
            coo = sps.coo_array(fb.M)
            rows.append(np.arange(b.start, b.start + b.size))
            rr.append(b.start + coo.row.astype(np.int64))
            cc.append(cols[coo.col])
            vv.append(np.asarray(coo.data, dtype=float))
        n = self.n
        const_rows = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
        self._const = sps.csc_array(
            (np.concatenate(vv), (np.concatenate(rr), np.concatenate(cc))) if rows else ([], ([], [])),
            shape=(n, n),
        )
        self._const_dense: np.ndarray | None = None
        self._const_sum: sps.csc_array | None = None
        sym_rows = np.setdiff1d(np.arange(n), const_rows)
        self._Jz: _CasadiJacobian | None = None
        if sym_rows.size:
            Fs = cas.F if sym_rows.size == n else cas.F[sym_rows.tolist()]
            Jexpr = ca.jacobian(Fs, cas.z)
            self._Jz = _CasadiJacobian(f"{cas.name}_sens_Jz", cas.z, cas.p, Jexpr, (n, n), sym_rows)
        Jp = ca.jacobian(cas.F, cas.p)
        self._Jp = _CasadiJacobian(f"{cas.name}_sens_Jp", cas.z, cas.p, Jp, (n, self.n_params), np.arange(n))
        # per-structure constants of linearize (bounds change only with the structure)
        self.lb = np.asarray(problem.lb, dtype=float)
        self.ub = np.asarray(problem.ub, dtype=float)
        self.fixed = self.lb == self.ub
        nnz = self._const.nnz + (0 if self._Jz is None else self._Jz.row.size)
        self.dense = n <= DENSE_LIMIT and nnz >= DENSE_DENSITY * n * n
        """Whether :math:`J` is held dense (small and dense enough, :data:`DENSE_DENSITY`)."""
        self._band_order: tuple[np.ndarray | None] | None = None

    def pattern(self) -> tuple[np.ndarray, np.ndarray]:
        r"""``(row, col)`` of every entry :math:`J` can hold (declared matrices and CasADi's sparsity)."""
        r0, c0, _ = _entries(self._const)
        if self._Jz is None:
            return r0, c0
        c1 = np.repeat(np.arange(self.n, dtype=np.int64), np.diff(self._Jz.colind))
        return np.concatenate([r0, self._Jz.row]), np.concatenate([c0, c1])

    def band_order(self) -> np.ndarray | None:
        r"""A symmetric ordering of the pairs that makes :math:`J` banded, or ``None`` (built once).

        The reverse Cuthill-McKee ordering of the pattern of :math:`J + J^\top`
        (``scipy.sparse.csgraph.reverse_cuthill_mckee``), kept when it brings :math:`J` within
        :data:`BAND_LIMIT` diagonals; ``None`` when :math:`J` already is within them in the
        declaration's order (no reordering needed), when it is not within them in the new order
        either, or when :math:`J` is held dense. Every principal block :math:`J_{II}` taken in the
        induced order is then banded too (its band is at most :math:`J`'s), which is what
        :meth:`Linearization._factor` uses: a band hidden by the order of declaration (blocks of
        a horizon declared variable by variable, a permuted chain) costs a banded LU, not SuperLU.
        """
        if self._band_order is None:
            self._band_order = (None if self.dense else _rcm_band_order(*self.pattern(), self.n),)
        return self._band_order[0]

    def F(self, z: np.ndarray, p: np.ndarray) -> np.ndarray:
        """:math:`F(z; p)`."""
        return np.asarray(self.F_fun(z, p), dtype=float).reshape(-1)

    def Jz(self, z: np.ndarray, p: np.ndarray, dense: bool = False) -> Any:
        r""":math:`\partial F/\partial z` at :math:`(z, p)`, :math:`n \times n`: CSC, or a dense array."""
        if dense:
            if self._const_dense is None:
                self._const_dense = self._const.toarray()
            J = self._const_dense
            return J if self._Jz is None else J + self._Jz.value(z, p, True)
        if self._Jz is None:
            return self._const
        if self._const_sum is not None:
            return self._const_sum
        sym = self._Jz.value(z, p, False)
        out = sym if not self._const.nnz else (self._const + sym).tocsc()
        if self._Jz.constant:  # kept, so its entries (cached on it) are reused too
            self._const_sum = out
        return out

    def Jp(self, z: np.ndarray, p: np.ndarray, dense: bool = False) -> Any:
        r""":math:`\partial F/\partial p` at :math:`(z, p)`, :math:`n \times n_p`: CSC, or a dense array."""
        return self._Jp.value(z, p, dense)


def derivatives(problem: MCP) -> Derivatives:
    """The :class:`Derivatives` of ``problem``, cached on it (rebuilt when its structure changes)."""
    cache = problem.__dict__.get("_sensitivity_cache")
    if cache is not None and cache[0] == problem.version:
        return cache[1]  # type: ignore[no-any-return]
    d = Derivatives(problem)
    problem.__dict__["_sensitivity_cache"] = (problem.version, d)
    return d


def _pair_name(problem: MCP, i: int) -> str:
    name, k = problem.block_of(int(i))
    return f"{name}[{k}]"


def is_p_matrix(S: np.ndarray) -> bool | None:
    r"""Whether :math:`S` is a P-matrix: True, False, or None when not decided.

    Every principal minor positive (checked for at most :data:`MINOR_LIMIT` rows); beyond, True
    when the symmetric part is positive definite (sufficient), else None.
    """
    m = S.shape[0]
    if m == 0:
        return True
    if m <= MINOR_LIMIT:
        scale = max(float(np.abs(S).max()), 1e-300)
        for k in range(1, m + 1):
            for idx in itertools.combinations(range(m), k):
                if np.linalg.det(S[np.ix_(idx, idx)] / scale) <= 1e-12:
                    return False
        return True
    sym = 0.5 * (S + S.T)
    return True if np.linalg.eigvalsh(sym).min() > 1e-12 * max(float(np.abs(sym).max()), 1e-300) else None


def _entries(A: sps.csc_array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(row, col, value)`` of the stored entries of a CSC matrix, cached on it (constants are reused)."""
    hit = A.__dict__.get("_mcpkit_entries")
    if hit is None:
        col = np.repeat(np.arange(A.shape[1], dtype=np.int64), np.diff(A.indptr))
        hit = (A.indices.astype(np.int64), col, np.asarray(A.data, dtype=float))
        A.__dict__["_mcpkit_entries"] = hit
    return hit  # type: ignore[no-any-return]


def _band(r: np.ndarray, c: np.ndarray) -> tuple[int, int]:
    """``(kl, ku)``: sub- and super-diagonals holding the entries ``(r, c)``."""
    d = r - c
    return int(max(d.max(initial=0), 0)), int(max((-d).max(initial=0), 0))


def _rcm_band_order(r: np.ndarray, c: np.ndarray, n: int) -> np.ndarray | None:
    """The reverse Cuthill-McKee order of the pattern ``(r, c)`` when it narrows it to :data:`BAND_LIMIT`."""
    kl, ku = _band(r, c)
    if kl + ku + 1 <= BAND_LIMIT or n < 2:
        return None  # banded as declared
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    P = sps.csr_matrix((np.ones(r.size, dtype=np.int8), (r, c)), shape=(n, n))
    order = np.asarray(reverse_cuthill_mckee((P + P.T).tocsr(), symmetric_mode=True), dtype=np.int64)
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    kl, ku = _band(pos[r], pos[c])
    return order if kl + ku + 1 <= BAND_LIMIT else None


def _sparse_block(
    A: sps.csc_array, rows: np.ndarray, cols: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, int]]:
    """``A[rows][:, cols]`` of a CSC matrix as entries ``(r, c, v, shape)`` (``cols=None``: all)."""
    row, col, val = _entries(A)
    rmap = np.full(A.shape[0], -1, dtype=np.int64)
    rmap[rows] = np.arange(rows.size)
    r = rmap[row]
    if cols is None:
        keep = r >= 0
        return r[keep], col[keep], val[keep], (rows.size, A.shape[1])
    if cols is rows and A.shape[0] == A.shape[1]:  # a principal block: one map serves both
        c = rmap[col]
    else:
        cmap = np.full(A.shape[1], -1, dtype=np.int64)
        cmap[cols] = np.arange(cols.size)
        c = cmap[col]
    keep = (r >= 0) & (c >= 0)
    return r[keep], c[keep], val[keep], (rows.size, cols.size)


def _dense(entries: tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, int]]) -> np.ndarray:
    r, c, v, shape = entries
    out = np.zeros(shape)
    out[r, c] = v  # CSC entries are unique (SciPy sums duplicates when it builds them)
    return out


class LUSolve:
    r"""``solve(b, trans=False)`` = :math:`A^{-1} b` (``trans``: :math:`A^{-\top} b`) by a stored LU.

    ``method`` names the factorisation: ``"dense LU"``, ``"banded LU"``, ``"banded LU (reordered)"``
    or ``"SuperLU"``.
    """

    __slots__ = ("_fn", "method")

    def __init__(self, fn: Any, method: str) -> None:
        self._fn = fn
        self.method = method

    def __call__(self, rhs: np.ndarray, trans: bool = False) -> np.ndarray:
        return self._fn(rhs, trans)  # type: ignore[no-any-return]


def _pivots_ok(d: np.ndarray) -> bool:
    """Every pivot finite and above :data:`SINGULAR_RTOL` times the largest."""
    d = np.abs(d)
    return bool(np.isfinite(d).all()) and d.min() > SINGULAR_RTOL * max(float(d.max()), 1e-300)


def _dense_lu_solver(A: np.ndarray) -> tuple[Any, str]:
    """``(solve(rhs, trans), "")`` by LAPACK ``dgetrf``/``dgetrs`` (``A`` is overwritten); ``(None, why)``."""
    lu, piv, info = lapack.dgetrf(A, overwrite_a=True)
    if info != 0 or not _pivots_ok(np.diagonal(lu)):
        return None, "is singular"

    def dense(rhs: np.ndarray, trans: bool = False) -> np.ndarray:
        x, _info = lapack.dgetrs(lu, piv, np.asarray(rhs, dtype=float), trans=1 if trans else 0)
        return np.asarray(x)

    return LUSolve(dense, "dense LU"), ""


def sparse_lu_solver(entries: tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, int]]) -> tuple[Any, str]:
    r"""``(solve(rhs, trans), "")`` for a sparse square :math:`A` given by its entries ``(r, c, v, shape)``.

    ``(None, why)`` when :math:`A` is singular.

    A matrix whose band (:math:`k_l + k_u + 1` diagonals) is at most :data:`BAND_LIMIT` wide is
    factorised by LAPACK's banded LU (``dgbtrf``: :math:`O(n k_l (k_l + k_u))`, chains and
    horizons), any other of at most :data:`DENSE_LIMIT` rows by dense LAPACK (``dgetrf``: for
    such sizes SuperLU's set-up costs more than the dense LU), any larger one by SuperLU
    (``scipy.sparse.linalg.splu``, COLAMD ordering). Stored entries that are exactly zero at the
    point (a structural nonzero of CasADi's pattern, such as :math:`\partial(p_k z_j)/\partial z_j` at
    :math:`p_k = 0`) are dropped first: they can only widen the band, and SuperLU orders and
    factorises the stored pattern (a random sparse :math:`4000 \times 4000` matrix with half its
    rows reduced to the identity took 245 ms with those zeros stored, 2.6 ms without).
    """
    r, c, v, (m, _) = entries
    if v.size and not (nz := v != 0.0).all():
        r, c, v = r[nz], c[nz], v[nz]
    kl, ku = _band(r, c)
    if kl + ku + 1 <= BAND_LIMIT:
        ab = np.zeros((2 * kl + ku + 1, m))
        ab[kl + ku + r - c, c] = v
        lub, piv, info = lapack.dgbtrf(ab, kl, ku)
        if info == 0 and _pivots_ok(lub[kl + ku]):

            def banded(rhs: np.ndarray, trans: bool = False) -> np.ndarray:
                x, _info = lapack.dgbtrs(
                    lub, kl, ku, np.asarray(rhs, dtype=float), piv, trans=1 if trans else 0
                )
                return np.asarray(x)

            return LUSolve(banded, "banded LU"), ""
        return None, "is singular (banded LU)"
    if m <= DENSE_LIMIT:
        return _dense_lu_solver(_dense(entries))
    if c.size and bool((np.diff(c) >= 0).all()):  # column-ordered (as _sparse_block gives): CSC directly
        indptr = np.zeros(m + 1, dtype=np.int32)
        np.cumsum(np.bincount(c, minlength=m), out=indptr[1:])
        A = sps.csc_matrix((v, r.astype(np.int32), indptr), shape=(m, m))
        A.sort_indices()
    else:  # COO -> CSC (sums duplicates, sorts)
        A = sps.csc_matrix((v, (r, c)), shape=(m, m))
    try:
        slu = spla.splu(A)
    except RuntimeError as exc:
        return None, f"is singular (SuperLU: {exc})"
    if not _pivots_ok(slu.U.diagonal()):
        return None, "is singular (SuperLU)"

    def superlu(rhs: np.ndarray, trans: bool = False) -> np.ndarray:
        return np.asarray(slu.solve(np.asarray(rhs, dtype=float), trans="T" if trans else "N"))

    return LUSolve(superlu, "SuperLU"), ""


def _reordered_lu_solver(J: sps.csc_array, fr: np.ndarray, order: np.ndarray) -> tuple[Any, str]:
    r"""``(solve, "")`` for :math:`J_{II}` (``I = fr``, ascending) factorised in the induced ``order``.

    With :math:`I_o = I[q]` the free pairs in ``order``, :math:`B = J_{I_o I_o} = P J_{II} P^\top`
    is factorised (banded when ``order`` narrows :math:`J`, :meth:`Derivatives.band_order`), and
    :math:`J_{II} x = b \iff B\,x[q] = b[q]` (likewise transposed).
    """
    mask = np.zeros(J.shape[0], dtype=bool)
    mask[fr] = True
    fro = order[mask[order]]  # the free pairs in the band order
    q = (np.cumsum(mask) - 1)[fro]  # their places in fr: fro = fr[q]
    inner, why = sparse_lu_solver(_sparse_block(J, fro, fro))
    if inner is None:
        return None, why

    def reordered(rhs: np.ndarray, trans: bool = False) -> np.ndarray:
        rhs = np.asarray(rhs, dtype=float)
        x = np.empty_like(rhs)
        x[q] = inner(rhs[q], trans)
        return x

    return LUSolve(reordered, f"{inner.method} (reordered)"), ""


def _kept_solver(kept: KeptFactor, fr: np.ndarray, n: int, own: Any) -> LUSolve | None:
    r"""``solve(rhs, trans)`` for :math:`J_{II}` (``I = fr``, ascending) by the Newton engine's LU, or None.

    The engine's factorisation (:class:`~mcpkit.engines.newton_linalg.KeptFactor`) is of
    :math:`\mathrm{diag}(d_b)_K J_{KK}` with :math:`J` its :math:`J_F` when it factorised. It is
    used only when all of this holds, so that it is a factorisation of exactly :math:`J_{II}` up to
    row scaling: it is still the engine's current factorisation (nothing factorised since), its
    rows :math:`K` are exactly :math:`I`, and its pivots pass the test of the other LUs
    (:data:`SINGULAR_RTOL` relative; on :math:`H_{KK}`, rows scaled by the engine). That
    :math:`J_F` was :math:`\partial F/\partial z` of the declaration at this :math:`(z^*, p)` is
    the engine's part: it hands the factor on only from a converged solve on backend ``casadi``
    whose :math:`J_F` does not depend on :math:`z` (so it is the same at every iterate) and that
    factorised at this :math:`p`. Otherwise ``None`` (the caller factorises :math:`J_{II}` itself).
    Each solve checks again that the factor is current; when it is not (the engine solved again
    while this linearisation was held), ``own()`` factorises :math:`J_{II}` and that LU is used.
    """
    rows = kept.rows()
    if rows is None or rows.size != fr.size:
        return None
    mask = np.zeros(n, dtype=bool)
    mask[fr] = True
    if not mask[rows].all():  # |K| = |I| and K within I: K = I
        return None
    piv = kept.pivots()
    if piv is None or not _pivots_ok(piv):
        return None
    pos = (np.cumsum(mask) - 1)[rows]  # where each row of K sits in fr
    fallback: list[Any] = []

    def reused(rhs: np.ndarray, trans: bool = False) -> np.ndarray:
        rhs = np.asarray(rhs, dtype=float)
        if not fallback:
            xk = kept.solve(rhs[pos], trans)
            if xk is not None:
                x = np.empty_like(rhs)
                x[pos] = xk
                return x
            fallback.append(own())  # the engine factorised again since: J_II's own LU
        return fallback[0](rhs, trans)  # type: ignore[no-any-return]

    return LUSolve(reused, kept.method)


def _block(A: Any, rows: np.ndarray, cols: np.ndarray | None) -> np.ndarray:
    """``A[rows][:, cols]`` as a dense array, ``A`` dense or sparse (``cols=None``: all columns)."""
    if isinstance(A, np.ndarray):
        return A[rows] if cols is None else A[np.ix_(rows, cols)]
    return _dense(_sparse_block(A, rows, cols))


@dataclass
class Linearization:
    r"""The linearised solution map at :math:`(z^*, p)`: the pairs' split, :math:`J`, :math:`J_p`.

    Built by :func:`linearize`. :meth:`jacobian`, :meth:`jvp` and :meth:`vjp` give
    :math:`dz/dp`, :math:`(dz/dp)\,dp` and :math:`w^\top dz/dp` (module docstring).
    """

    problem: MCP
    z: np.ndarray
    p: np.ndarray
    F: np.ndarray
    J: Any
    r""":math:`\partial F/\partial z` at the point (dense when :attr:`Derivatives.dense`, else CSC)."""
    Jp: Any
    r""":math:`\partial F/\partial p` at the point (dense or CSC like :attr:`J`)."""
    free: np.ndarray
    """Indices :math:`I` of the free pairs."""
    active: np.ndarray
    """Indices :math:`A` of the strongly active (and fixed) pairs: :math:`dz_A = 0`."""
    degenerate: np.ndarray
    """Indices :math:`D` of the degenerate pairs."""
    degenerate_sign: np.ndarray
    r""":math:`+1` for a degenerate pair at its lower bound, :math:`-1` at its upper bound."""
    tau: float
    """The activity threshold used (``10 * tol``)."""
    derivs: Derivatives | None = None
    """The :class:`Derivatives` that gave :attr:`J` and :attr:`Jp` (their dense forms are cached there)."""
    kept: KeptFactor | None = None
    r"""The Newton engine's last factorisation at this point (``result.extra["newton_factor"]``), used
    for :math:`J_{II}` when it is still current and its rows are exactly :math:`I` (:func:`_kept_solver`)."""

    def __post_init__(self) -> None:
        self._solve: Any = None

    # ------------------------------------------------------------------ pieces
    def degenerate_pairs(self) -> list[str]:
        """``"block[k] at lower (z=..., F=...)"`` for each degenerate pair."""
        return [
            f"{_pair_name(self.problem, i)} at {'lower' if s > 0 else 'upper'} bound "
            f"(z={self.z[i]:.3g}, F={self.F[i]:.2e})"
            for i, s in zip(self.degenerate.tolist(), self.degenerate_sign.tolist(), strict=True)
        ]

    def _factor(self) -> Any:
        r"""``solve(rhs, trans)`` by :math:`J_{II}` (``trans=True``: :math:`J_{II}^\top`), factorised once."""
        if self._solve is not None:
            return self._solve
        fr = self.free
        if fr.size == 0:
            self._solve = LUSolve(lambda r, trans=False: np.zeros_like(r, dtype=float), "none")
            return self._solve
        if self.kept is not None:
            solve = _kept_solver(self.kept, fr, self.z.size, self._own_factor)
            if solve is not None:
                self._solve = solve
                return self._solve
        self._solve = self._own_factor()
        return self._solve

    def _own_factor(self) -> LUSolve:
        r"""``solve(rhs, trans)`` by a new LU of :math:`J_{II}` (dense, banded or SuperLU)."""
        fr = self.free
        order = None if self.derivs is None or isinstance(self.J, np.ndarray) else self.derivs.band_order()
        if isinstance(self.J, np.ndarray):
            solve, why = _dense_lu_solver(self.J[np.ix_(fr, fr)])
        elif order is None:
            solve, why = sparse_lu_solver(_sparse_block(self.J, fr, fr))
        else:
            solve, why = _reordered_lu_solver(self.J, fr, order)
        if solve is not None:
            return solve  # type: ignore[no-any-return]
        names = [_pair_name(self.problem, i) for i in fr[:5].tolist()]
        raise NotDifferentiableError(
            f"dF/dz restricted to the {fr.size} free pairs ({', '.join(names)}"
            f"{', ...' if fr.size > 5 else ''}) {why}: the solution is not strongly regular, so dz/dp is "
            "not defined by the implicit function theorem",
            pairs=[],
        )

    @property
    def factorization(self) -> str:
        r"""How :math:`J_{II}` is factorised (:attr:`LUSolve.method`; factorises it when not yet done)."""
        return str(self._factor().method)

    def _require_nondegenerate(self, what: str) -> None:
        if self.degenerate.size:
            pairs = self.degenerate_pairs()
            raise NotDifferentiableError(
                f"{what} does not exist: {len(pairs)} degenerate pair(s) (z at a bound with F = 0 within "
                f"{self.tau:.0e}): {'; '.join(pairs[:10])}{'; ...' if len(pairs) > 10 else ''}. The "
                "solution is only directionally differentiable there: pass direction=dp for the "
                "derivative in direction dp",
                pairs=[_pair_name(self.problem, i) for i in self.degenerate.tolist()],
            )

    def _jp_dense(self) -> np.ndarray:
        r""":math:`J_p` as a dense array (cached by :class:`Derivatives` when it is constant)."""
        if isinstance(self.Jp, np.ndarray):
            return self.Jp
        if self.derivs is not None:
            return self.derivs.Jp(self.z, self.p, True)  # type: ignore[no-any-return]
        return np.asarray(self.Jp.toarray())

    # ------------------------------------------------------------------ products
    def jacobian(self, cols: np.ndarray | None = None) -> np.ndarray:
        r""":math:`dz/dp`, a dense :math:`n \times n_p` array (no degenerate pairs allowed).

        ``cols`` (indices into :math:`p`) restricts it to those columns, :math:`dz/dp_{\mathrm{cols}}`.
        """
        self._require_nondegenerate("dz/dp")
        n_p = self.p.size if cols is None else cols.size
        out = np.zeros((self.z.size, n_p))
        fr = self.free
        if fr.size and n_p:
            JpI = self._jp_dense()[fr]
            out[fr] = -self._factor()(JpI if cols is None else JpI[:, cols])
        return out

    def jacobian_sparse(self, cols: np.ndarray | None = None) -> sps.csc_array:
        r""":math:`dz/dp` as a ``scipy.sparse.csc_array`` (no degenerate pairs allowed); ``cols``
        restricts it to those columns of :math:`p`, as :meth:`jacobian`.

        Only the columns of :math:`J_{p,I}` with a stored entry are solved for, in chunks of at
        most :data:`SPARSE_CHUNK_ENTRIES` dense entries; exact zeros of the solves (rows outside
        the coupled components a parameter touches, and :math:`dz_A = 0`) are not stored.
        """
        self._require_nondegenerate("dz/dp")
        n, fr = self.z.size, self.free
        n_p = self.p.size if cols is None else cols.size
        if not (fr.size and n_p):
            return sps.csc_array((n, n_p))
        if isinstance(self.Jp, np.ndarray):
            JpI = sps.csc_array(self.Jp[fr] if cols is None else self.Jp[fr][:, cols])
        else:
            r, c, v, shape = _sparse_block(self.Jp, fr, None)
            JpI = sps.csc_array((v, (r, c)), shape=shape)
            if cols is not None:
                JpI = sps.csc_array(JpI[:, cols])
        JpI.eliminate_zeros()
        touched = np.flatnonzero(np.diff(JpI.indptr))
        solve = self._factor()
        step = max(1, SPARSE_CHUNK_ENTRIES // fr.size)
        rr: list[np.ndarray] = []
        cc: list[np.ndarray] = []
        vv: list[np.ndarray] = []
        for k in range(0, touched.size, step):
            chunk = touched[k : k + step]
            X = -np.asarray(solve(JpI[:, chunk].toarray())).reshape(fr.size, chunk.size)
            i, j = np.nonzero(X)
            rr.append(fr[i])
            cc.append(chunk[j])
            vv.append(X[i, j])
        if not rr:
            return sps.csc_array((n, n_p))
        return sps.csc_array((np.concatenate(vv), (np.concatenate(rr), np.concatenate(cc))), shape=(n, n_p))

    def vjp(self, w: np.ndarray) -> np.ndarray:
        r""":math:`w^\top dz/dp = -(J_{II}^{-\top} w_I)^\top J_{p,I}`, shape :math:`(n_p,)` (one solve)."""
        self._require_nondegenerate("dz/dp")
        fr = self.free
        if not fr.size:
            return np.zeros(self.p.size)
        y = self._factor()(np.asarray(w, dtype=float)[fr], True)
        if isinstance(self.Jp, np.ndarray):
            return -np.asarray(self.Jp[fr].T @ y).reshape(-1)
        r, c, v, _ = _sparse_block(self.Jp, fr, None)
        return -np.bincount(c, weights=v * y[r], minlength=self.p.size)

    def jvp(self, dp: np.ndarray) -> np.ndarray:
        r"""The (directional) derivative :math:`dz` of the solution in direction ``dp``, shape :math:`(n,)`.

        Without degenerate pairs :math:`dz = (dz/dp)\,dp`; with them the mixed LCP of the module
        docstring, solved by Lemke's method on the Schur complement.
        """
        b = np.asarray(self.Jp @ np.asarray(dp, dtype=float)).reshape(-1)
        fr, dg, sig = self.free, self.degenerate, self.degenerate_sign
        dz = np.zeros(self.z.size)
        solve = self._factor()
        y = solve(b[fr]) if fr.size else np.zeros(0)
        if not dg.size:
            dz[fr] = -y
            return dz
        J = self.J
        JID = _block(J, fr, dg)
        JDI = _block(J, dg, fr)
        X = solve(JID) if fr.size else np.zeros((0, dg.size))
        S = _block(J, dg, dg) - JDI @ X
        r = b[dg] - JDI @ y
        Ms = S * np.multiply.outer(sig, sig)
        qs = sig * r
        pm = is_p_matrix(Ms)
        if pm is not True:
            raise NotDifferentiableError(
                "the directional derivative is not unique or not verified: the Schur complement on the "
                f"{dg.size} degenerate pair(s) is "
                f"{'not a P-matrix' if pm is False else 'not verified to be a P-matrix'} "
                f"({'; '.join(self.degenerate_pairs()[:10])})",
                pairs=[_pair_name(self.problem, i) for i in dg.tolist()],
            )
        lem = lemke_lcp(Ms, qs)
        if lem.status != "solution":
            raise NotDifferentiableError(
                "Lemke's method did not solve the directional-derivative LCP on the degenerate pairs "
                f"({lem.message})",
                pairs=[_pair_name(self.problem, i) for i in dg.tolist()],
            )
        w = np.maximum(lem.z, 0.0)
        dz[dg] = sig * w
        if fr.size:
            dz[fr] = -(y + X @ dz[dg])
        return dz


def linearize(
    problem: MCP,
    z: np.ndarray,
    p: np.ndarray,
    tol: float,
    F: np.ndarray | None = None,
    kept: KeptFactor | None = None,
) -> Linearization:
    r"""Split the pairs at the solution ``z`` of ``problem`` at ``p`` and evaluate :math:`J, J_p`.

    ``tol`` is the solve tolerance; a bound counts as active within :math:`\tau = 10\,\mathrm{tol}`
    and :math:`F_i` as zero within :math:`\tau` (module docstring). ``F`` is :math:`F(z; p)` when
    known (evaluated otherwise). ``kept`` is the Newton engine's factorisation of
    :math:`\partial F/\partial z` of ``problem`` at ``p`` restricted to its kept rows
    (``extra["newton_factor"]`` of the result at ``z``), reused for :math:`J_{II}` when it fits.
    """
    d = derivatives(problem)
    z = np.asarray(z, dtype=float).reshape(-1)
    p = np.asarray(p, dtype=float).reshape(-1)
    Fv = d.F(z, p) if F is None else np.asarray(F, dtype=float).reshape(-1)
    lb, ub = d.lb, d.ub
    tau = 10.0 * float(tol)
    dl, du = z - lb, ub - z  # inf - inf cannot occur: z is finite
    at_l = dl <= tau
    at_u = du <= tau
    strong = d.fixed | (at_l & (Fv > tau)) | (at_u & (Fv < -tau))
    bound = (at_l | at_u) & ~strong
    deg = bound & (np.abs(Fv) <= tau)
    free = ~(strong | deg)
    deg_idx = np.flatnonzero(deg)
    # a degenerate pair at both bounds (a box thinner than tau) is taken at the nearer one
    sign = np.where(dl[deg_idx] <= du[deg_idx], 1.0, -1.0) if deg_idx.size else np.zeros(0)
    return Linearization(
        problem=problem, z=z, p=p, F=Fv, J=d.Jz(z, p, d.dense), Jp=d.Jp(z, p, d.dense),
        free=np.flatnonzero(free), active=np.flatnonzero(strong), degenerate=deg_idx,
        degenerate_sign=sign, tau=tau, derivs=d, kept=kept,
    )  # fmt: skip


def check_tol(tol: Any, default: float) -> float:
    """The activity tolerance of a derivative: ``default`` (the solve's) for ``None``, else a
    positive finite real number (typed errors otherwise, before anything is evaluated)."""
    if tol is None:
        return float(default)
    t = as_real(tol, "tol")
    if t <= 0:
        raise MCPInputError(f"tol must be > 0, got {tol!r}")
    return t


def check_direction(direction: Any, n_params: int) -> np.ndarray:
    """``direction`` as a finite float vector of length ``n_params`` (typed errors otherwise; a 2-D
    array is a wrong shape even with ``n_params`` entries, as for any other vector input)."""
    try:
        dp = np.asarray(direction, dtype=float)
    except (TypeError, ValueError) as exc:
        raise MCPInputError(f"direction must be numeric, got {direction!r}") from exc
    if dp.shape != (n_params,):
        raise ShapeError(f"direction must have shape ({n_params},) (one entry per parameter), got {dp.shape}")
    if not np.isfinite(dp).all():
        raise NonFiniteError("direction contains NaN or inf")
    return dp


def result_linearization(result: Any, tol: float | None = None) -> Linearization:
    """:func:`linearize` at a solved :class:`~mcpkit.solving.result.MCPResult` (checks it can be done)."""
    problem, p = getattr(result, "problem", None), getattr(result, "p", None)
    if problem is None or p is None:
        raise MCPInputError(
            "this result does not know its MCP and parameter values (only results of mcpkit.Solver / "
            "mcpkit.solve on an mcpkit.MCP do); sensitivity() needs them"
        )
    if problem.n_params == 0:
        raise MCPInputError(
            f"MCP {problem.name!r} has no parameters, so there is no dz/dp; declare them with add_parameters"
        )
    if problem.n != result.z.size or p.size != problem.n_params:
        raise MCPInputError("the MCP's structure changed after this result was computed; solve it again")
    if not result.solved:
        raise SolveFailedError(
            f"sensitivity() needs a solved result (dz/dp at a point that is not a solution means nothing): "
            f"{result.message}",
            result,
        )
    kept = getattr(result, "extra", {}).get("newton_factor")
    if not isinstance(kept, KeptFactor) or kept.version != problem.version:
        kept = None  # not the engine's, or made before the declaration changed
    return linearize(problem, result.z, p, check_tol(tol, result.tol), result.F, kept)


@dataclass(frozen=True, repr=False)
class Sensitivity(Mapping[str, Any]):
    r""":math:`dz^*/dp` by name: one :math:`n \times n_B` array per parameter block :math:`p_B` asked for.

    ``s["mu"]`` is :math:`dz^*/d\mu` (rows: all of :math:`z`, stacked in block order; columns: the
    entries of :math:`\mu`, always two-dimensional), ``s.block("v", "mu")`` its rows of variable
    block ``v``, :math:`dv^*/d\mu`, and :attr:`by_block` every such piece keyed by
    ``(variable block, parameter block)``. It is a read-only mapping from parameter block names to
    arrays (``list(s)``, ``s.items()``). Made by
    :meth:`MCPResult.sensitivity("mu") <mcpkit.solving.result.MCPResult.sensitivity>`.
    """

    columns: dict[str, Any]
    """Parameter block name -> :math:`dz^*/dp_B`, dense ``(n, n_B)`` or ``scipy.sparse.csc_array``."""
    rows: dict[str, slice]
    """Variable block name -> its rows of :math:`z` (declaration order)."""

    def __getitem__(self, name: str) -> Any:
        if name not in self.columns:
            unknown_name("parameter block", name, list(self.columns))
        return self.columns[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.columns)

    def __len__(self) -> int:
        return len(self.columns)

    def block(self, variable: str, parameter: str) -> Any:
        r""":math:`dz_V^*/dp_B`: rows of variable block ``variable`` of :math:`dz^*/dp_B` (``parameter``)."""
        cols = self[parameter]
        if variable not in self.rows:
            unknown_name("variable block", variable, list(self.rows))
        return cols[self.rows[variable]]

    @property
    def by_block(self) -> dict[tuple[str, str], Any]:
        r"""Every :math:`dz_V^*/dp_B`, keyed by ``(variable block, parameter block)``."""
        return {(v, b): self.block(v, b) for b in self.columns for v in self.rows}

    def __repr__(self) -> str:
        n = sum(sl.stop - sl.start for sl in self.rows.values())
        cols = ", ".join(f"{b}: {a.shape[0]}x{a.shape[1]}" for b, a in self.columns.items())
        shown = list(self.rows.items())[:8]
        var = ", ".join(f"{v}[{sl.stop - sl.start}]" for v, sl in shown)
        more = f", ... ({len(self.rows)} blocks)" if len(self.rows) > len(shown) else ""
        return f"Sensitivity(dz/dp by parameter block; {cols}; z = ({var}{more}), n={n})"


def sensitivity_names(wrt: Any, problem: MCP) -> list[str]:
    """``wrt`` (one parameter block name or a sequence of them) as a list of declared block names.

    An unknown name raises :class:`~mcpkit.errors.UnknownOptionError` naming the declared blocks
    and the closest one; an empty list or a name given twice is an
    :class:`~mcpkit.errors.MCPInputError`.
    """
    names = [wrt] if isinstance(wrt, str) else list(wrt)
    declared = [b.name for b in problem.parameter_blocks]
    for name in names:
        if not isinstance(name, str):
            raise MCPInputError(f"parameter block names must be strings, got {name!r}")
        if name not in declared:
            unknown_name("parameter block", name, declared)
    if not names or len(set(names)) != len(names):
        raise MCPInputError(f"give one or more distinct parameter block names, got {wrt!r}")
    return names


def result_sensitivity(
    result: Any,
    direction: Any = None,
    tol: float | None = None,
    sparse: bool | None = False,
    wrt: Any = None,
) -> Any:
    """:meth:`MCPResult.sensitivity <mcpkit.solving.result.MCPResult.sensitivity>` (see there)."""
    if sparse is not None and not isinstance(sparse, bool | np.bool_):
        raise MCPInputError(f"sparse must be True, False or None, got {sparse!r}")
    problem = getattr(result, "problem", None)
    check_tol(tol, 1.0)  # a bad tol is refused before the linearisation is built
    if wrt is not None and direction is not None:
        raise MCPInputError("give parameter block names or direction=, not both")
    names = None if wrt is None or problem is None else sensitivity_names(wrt, problem)
    dp = None
    if direction is not None and problem is not None:
        dp = check_direction(direction, problem.n_params)  # before anything is evaluated
    lin = result_linearization(result, tol)
    if dp is not None:
        return lin.jvp(dp)
    if sparse is None:
        sparse = lin.z.size * lin.p.size > SPARSE_AUTO_ENTRIES
    if names is None:
        return lin.jacobian_sparse() if sparse else lin.jacobian()
    assert problem is not None
    blocks = {b.name: b for b in problem.parameter_blocks}
    columns: dict[str, Any] = {}
    for name in names:
        idx = np.arange(blocks[name].start, blocks[name].start + blocks[name].size)
        columns[name] = lin.jacobian_sparse(idx) if sparse else lin.jacobian(idx)
    return Sensitivity(columns, {b.name: b.slice for b in problem.blocks})


provide(Hook.MCP_SENSITIVITY, result_sensitivity)
