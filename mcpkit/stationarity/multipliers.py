r"""The multiplier problems of the stationarity certificate (:mod:`mcpkit.stationarity.certificate`).

Unknowns :math:`u = (\lambda_g[A_g], \lambda_x[A_x], \nu[I_G], \xi[I_H])` of the MPCC-Lagrangian
gradient equations :math:`A u = -\nabla f` with sign bounds :math:`l \le u \le h` (one *piece*
of signs per biactive pair). :class:`_Multipliers` answers "do multipliers within the pieces
bring :math:`\|A u + \nabla f\|_\infty` under a threshold?": a cheap candidate first (dense
gelsy/BVLS for a small system, a sparse regularised least squares above
:data:`SPARSE_CERTIFICATE_MIN` entries), then, when the candidate misses, the exact max-norm LP
(:func:`_linf_lp`, HiGHS). A "yes" rests on a point whose recomputed residual meets the threshold,
a "no" on an LP optimum.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse as sps
import scipy.sparse.linalg as spla
from scipy.optimize import lsq_linear

from mcpkit.engines import highs
from mcpkit.problems.mpcc import MPCC

_NULL_ROW_TOL = 1e-8
"""A multiplier is 'determined' when its row of the null-space basis is below this norm."""

SPARSE_CERTIFICATE_MIN = 250_000
"""From this many entries of the multiplier matrix ``A`` (rows x columns) on, the cheap candidate
of a multiplier test is the sparse least squares of :func:`_sparse_certificate` instead of the
dense gelsy/BVLS (on MPECLib's ``tollmpec`` ``A`` is 2380 x 3481 with 9,331 nonzeros: dense BVLS
25-35 s; on NOSBENCH's MFTOPT 1410 x 1675: 20 s). Either way the decision, when the candidate
misses the threshold, is the exact LP of :func:`_linf_lp`."""

_CERTIFICATE_ROUNDS = 8
"""Rounds of :func:`_sparse_certificate` (each clamps the multipliers that broke their signs)."""

NULL_SPACE_MAX_ENTRIES = 1_000_000
"""Largest multiplier matrix ``A`` (rows x columns) whose null space is computed by a dense SVD
for the M/C searches (about 1000 x 1000: under a second; 2000 x 2000 took seconds, more than the
homotopy itself on large optimal-control MPCCs); above it the searches try the suggested sign
pattern only and say that they were truncated."""

TIKHONOV_REFINE = 8
"""Iterated-Tikhonov corrections of the first (unconstrained) least-squares solve of
:func:`_sparse_certificate`: they shrink the regularisation's share of its residual
(:func:`_regularised_lstsq`)."""


@dataclass
class _Local:
    """Values and Jacobians at the point; the Jacobians are dense arrays, or CSR matrices above
    :data:`~mcpkit.stationarity.certificate.DENSE_JACOBIAN_MAX_VARS` variables."""

    f: float
    g: np.ndarray
    G: np.ndarray
    H: np.ndarray
    df: np.ndarray
    Jg: np.ndarray | sps.csr_matrix
    JG: np.ndarray | sps.csr_matrix
    JH: np.ndarray | sps.csr_matrix


def rows_as_dense(J: np.ndarray | sps.csr_matrix, rows: np.ndarray) -> np.ndarray:
    """``J[rows]`` as a dense array, for a dense or a sparse ``J``."""
    part = J[rows]
    return part.toarray() if sps.issparse(part) else np.asarray(part)


def _active(values: np.ndarray, lo: np.ndarray, hi: np.ndarray, tol: float) -> tuple[np.ndarray, ...]:
    """Active rows and their multiplier bounds (>= 0 at the upper, <= 0 at the lower bound)."""
    at_hi = np.isfinite(hi) & (values >= hi - tol)
    at_lo = np.isfinite(lo) & (values <= lo + tol)
    idx = np.flatnonzero(at_hi | at_lo)
    mlo = np.where(at_lo[idx], -np.inf, 0.0)
    mhi = np.where(at_hi[idx], np.inf, 0.0)
    return idx, mlo, mhi, at_lo, at_hi


# --------------------------------------------------------------------------------------------
# the multiplier least-squares problems
# --------------------------------------------------------------------------------------------


class _Multipliers:
    r"""Unknowns ``u = (lam_g[A_g], lam_x[A_x], nu[I_G], xi[I_H])`` of ``A u = -grad f``.

    ``A = [J_g[A_g]^T, E[:, A_x], -J_G[I_G]^T, -J_H[I_H]^T]``. A *piece* per biactive pair fixes
    the sign set of ``(nu_j, xi_j)``: ``free``, ``nonneg``, ``nonpos``, ``nu0`` (``nu_j = 0``,
    ``xi_j`` free) or ``xi0``.
    """

    def __init__(self, mpcc: MPCC, loc: _Local, x: np.ndarray, tol: float) -> None:
        nx = x.size
        self.gi, glo, ghi, _, _ = _active(loc.g, mpcc.lbg, mpcc.ubg, tol)
        self.xi_idx, xlo, xhi, _, _ = _active(x, mpcc.lbx, mpcc.ubx, tol)
        self.IG = np.flatnonzero(loc.G <= tol)
        self.IH = np.flatnonzero(loc.H <= tol)
        self.biactive = np.intersect1d(self.IG, self.IH)
        n_cols = self.gi.size + self.xi_idx.size + self.IG.size + self.IH.size
        self.A: np.ndarray | sps.csc_matrix
        if nx * n_cols >= SPARSE_CERTIFICATE_MIN:
            # built sparse: the dense blocks, np.eye(nx) and their hstack took 0.8 s of a 1.3-s
            # certificate on NOSBENCH's SMOCP_001_037 (2,851 variables)
            self.A = sps.hstack(
                [
                    sps.csr_matrix(loc.Jg[self.gi]).T,
                    sps.identity(nx, format="csc")[:, self.xi_idx],
                    -sps.csr_matrix(loc.JG[self.IG]).T,
                    -sps.csr_matrix(loc.JH[self.IH]).T,
                ],
                format="csc",
            )
        else:
            eye = np.eye(nx)
            self.A = np.hstack([
                rows_as_dense(loc.Jg, self.gi).T, eye[:, self.xi_idx],
                -rows_as_dense(loc.JG, self.IG).T, -rows_as_dense(loc.JH, self.IH).T,
            ])  # fmt: skip
        self.b = -loc.df
        ng, nb = self.gi.size, self.xi_idx.size
        self.lo = np.concatenate([glo, xlo, np.full(self.IG.size + self.IH.size, -np.inf)])
        self.hi = np.concatenate([ghi, xhi, np.full(self.IG.size + self.IH.size, np.inf)])
        self.off_nu = ng + nb
        self.off_xi = ng + nb + self.IG.size
        self.pos_nu = {int(j): self.off_nu + k for k, j in enumerate(self.IG)}
        self.pos_xi = {int(j): self.off_xi + k for k, j in enumerate(self.IH)}
        self.n_g, self.n_x, self.n_pairs = loc.g.size, nx, loc.G.size
        self.undecided: list[str] = []
        """Why a multiplier test could not be decided (the LP of :func:`_linf_lp` failed)."""

    def solve(
        self,
        pieces: dict[int, str] | None = None,
        threshold: float | None = None,
        deadline: float | None = None,
    ) -> tuple[np.ndarray, float]:
        r"""Multipliers within the pieces minimising :math:`\|A u - b\|_\infty`; ``(u, residual)``.

        The residual is the max-norm :math:`\|\nabla_x \mathcal{L}\|_\infty` at the returned
        ``u``. A cheap candidate comes first: the dense bound-constrained least squares (gelsy,
        else BVLS) while ``A`` has fewer than :data:`SPARSE_CERTIFICATE_MIN` entries, the sparse
        certificate (:func:`_sparse_certificate`) above. It is returned when its residual meets
        ``threshold``, and also, for the dense candidate (the exact Euclidean minimum), when
        :math:`\|r\|_2/\sqrt{m}`, a lower bound of every max-norm residual, exceeds it (a
        certain "no"); otherwise (or without a ``threshold``) the exact minimum comes from one
        sparse LP (:func:`_linf_lp`, HiGHS), so that a residual above the threshold means that no
        multipliers of the pieces do better. When that LP cannot be solved (``deadline`` reached,
        numerical failure) the residual is ``inf`` and :attr:`undecided` says why: the caller
        must not read it as "no multipliers".
        """
        lo, hi = self.lo.copy(), self.hi.copy()
        keep = np.ones(lo.size, dtype=bool)
        for j, piece in (pieces or {}).items():
            a, c = self.pos_nu[j], self.pos_xi[j]
            if piece == "nonneg":
                lo[[a, c]] = 0.0
            elif piece == "nonpos":
                hi[[a, c]] = 0.0
            elif piece == "nu0":
                keep[a] = False
            elif piece == "xi0":
                keep[c] = False
            elif piece != "free":  # pragma: no cover - internal
                raise ValueError(piece)
        u = np.zeros(lo.size)
        cols = np.flatnonzero(keep)
        if cols.size == 0:
            return u, _max_abs(self.b)
        A, lo_c, hi_c = self.A[:, cols], lo[cols], hi[cols]
        if sps.issparse(A) or A.size >= SPARSE_CERTIFICATE_MIN:
            As = sps.csc_matrix(A)
            v = _sparse_certificate(As, self.b, lo_c, hi_c, np.inf if threshold is None else threshold)[0]
        else:
            As, v = None, _dense_bounded_lstsq(A, self.b, lo_c, hi_c)
        r = np.inf
        if v is not None:
            u[cols] = v
            res = self.A @ u - self.b
            r = _max_abs(res)
            if threshold is not None and r <= threshold:
                return u, r
            # a small dense system's candidate is the exact Euclidean minimum (BVLS), and
            # ||.||_inf >= ||.||_2 / sqrt(m): when that bound already exceeds the threshold the
            # answer is "no" without the LP (the residual returned is the candidate's, also above)
            if As is None and threshold is not None and np.linalg.norm(res) / np.sqrt(res.size) > threshold:
                return u, r
        w, why = _linf_lp(
            sps.csc_matrix(A) if As is None else As, self.b, lo_c, hi_c, deadline, witness=threshold
        )
        if w is None:
            self.undecided.append(why)
            return u, np.inf
        uw = np.zeros(lo.size)
        uw[cols] = w
        rw = _max_abs(self.A @ uw - self.b)
        # the max-norm minimiser is seldom unique: the least-squares candidate, when it attains
        # the minimum too, gives the tidier multipliers (no entry moved that need not move)
        if r <= rw * (1.0 + 1e-9) + 1e-15:
            return u, r
        return uw, rw

    def undetermined(self) -> np.ndarray | None:
        """Biactive pairs whose ``(nu_j, xi_j)`` move along the null space of ``A``; ``None``
        when ``A`` has more than :data:`NULL_SPACE_MAX_ENTRIES` entries (its dense SVD is not
        computed)."""
        if self.biactive.size == 0 or self.A.shape[1] == 0:
            return np.zeros(0, dtype=int)
        if self.A.shape[0] * self.A.shape[1] > NULL_SPACE_MAX_ENTRIES:
            return None
        _, s, vt = np.linalg.svd(self.A.toarray() if sps.issparse(self.A) else self.A)
        rank = int(np.sum(s > 1e-10 * max(1.0, s[0] if s.size else 0.0)))
        null = vt[rank:].T
        if null.shape[1] == 0:
            return np.zeros(0, dtype=int)
        free = [
            j for j in self.biactive
            if np.linalg.norm(null[[self.pos_nu[int(j)], self.pos_xi[int(j)]]]) > _NULL_ROW_TOL
        ]  # fmt: skip
        return np.asarray(free, dtype=int)

    def split(self, u: np.ndarray) -> dict[str, np.ndarray]:
        """Full-length ``lam_g, lam_x, nu_G, xi_H`` from the unknown vector."""
        lam_g, lam_x = np.zeros(self.n_g), np.zeros(self.n_x)
        nu, xi = np.zeros(self.n_pairs), np.zeros(self.n_pairs)
        k = self.gi.size
        lam_g[self.gi] = u[:k]
        lam_x[self.xi_idx] = u[k : self.off_nu]
        nu[self.IG] = u[self.off_nu : self.off_xi]
        xi[self.IH] = u[self.off_xi :]
        return {"lam_g": lam_g, "lam_x": lam_x, "nu_G": nu, "xi_H": xi}

    def pair(self, u: np.ndarray, j: int) -> tuple[float, float]:
        return float(u[self.pos_nu[j]]), float(u[self.pos_xi[j]])


def _max_abs(v: np.ndarray) -> float:
    """:math:`\\|v\\|_\\infty` with NaN counted as infinite."""
    v = np.asarray(v, dtype=float)
    if v.size == 0:
        return 0.0
    m = float(np.max(np.abs(v)))
    return np.inf if np.isnan(m) else m


def _dense_bounded_lstsq(A: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The least-squares multipliers within ``[lo, hi]`` of a small dense system (a candidate).

    Fast path: the unconstrained minimum-norm solution (gelsy, rank decided at 1e-12 of the
    largest singular value) when it respects the signs and really is a least-squares minimum;
    BVLS otherwise. The max-norm test and, failing it, the exact LP follow in
    :meth:`_Multipliers.solve`.
    """
    v = scipy.linalg.lstsq(A, b, cond=1e-12, lapack_driver="gelsy", check_finite=False)[0]
    slack = 1e-12 * max(1.0, float(np.max(np.abs(v), initial=0.0)))
    amax = max(1.0, float(np.abs(A).max(initial=0.0)))
    grad = float(np.linalg.norm(A.T @ (A @ v - b)))
    minimum = grad <= 1e-9 * amax**2 * max(1.0, float(np.linalg.norm(b)))
    if not (minimum and np.all(v >= lo - slack) and np.all(v <= hi + slack)):
        v = lsq_linear(A, b, bounds=(lo, hi), method="bvls").x
    return np.clip(v, lo, hi)


def _linf_lp(
    A: sps.csc_matrix,
    b: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    deadline: float | None = None,
    witness: float | None = None,
) -> tuple[np.ndarray | None, str]:
    r"""``(v, "")`` minimising :math:`\|A v - b\|_\infty` over :math:`l \le v \le h`, or ``(None, why)``.

    One sparse LP in :math:`(v, s)`, solved by HiGHS (:func:`scipy.optimize.linprog`):

    .. math::

        \min_{v, s}\ s \quad\text{s.t.}\quad -s \mathbf{1} \le A v - b \le s \mathbf{1},\
        l \le v \le h,\ s \ge 0.

    Its optimum is the exact smallest max-norm residual (up to HiGHS's feasibility tolerances,
    1e-10; when HiGHS's presolve gives up, the simplex without it or the interior-point method), so
    "no multipliers within the threshold" rests on an LP optimum, not on a heuristic. Cost: one LP
    with ``2 m`` rows and ``nnz(A)`` twice; 0.3 s for the 1410 x 1675 system of NOSBENCH's MFTOPT,
    where the dense BVLS took 20 s. ``deadline`` (``time.perf_counter()`` value) becomes HiGHS's
    time limit.

    ``witness``: a point of an attempt whose *recomputed* residual :math:`\|A v - b\|_\infty`
    (``v`` clipped to the bounds) is at most ``witness`` is returned even when it is not the
    LP's optimum: it proves "multipliers within the threshold exist" by itself, whatever HiGHS's
    tolerances did. Only a "no" needs the optimum. On NOSBENCH's DISCM_001_033 (STEP_3) the
    multipliers reach 1.3e5, HiGHS reports an optimum of 7e-7 whose point recomputes to 1.6e-4
    (feasibility tolerance times the size of ``v``), and the threshold is 6.9e-3: the point was
    refused as inaccurate, every attempt in turn (1.4 s), and the pair test left undecided.
    """
    m, n = A.shape
    col = sps.csc_matrix(np.ones((m, 1)))
    A_ub = sps.vstack([sps.hstack([A, -col]), sps.hstack([-A, -col])], format="csc")
    c = np.zeros(n + 1)
    c[-1] = 1.0
    bounds = np.column_stack([np.append(lo, 0.0), np.append(hi, np.inf)])
    why = ""
    # HiGHS's defaults first, then its interior-point method, tight tolerances and the simplex
    # without presolve; HiGHS sometimes gives up on one of them (status "Not Set" on NOSBENCH's
    # DSCOB, DSCSP and DISCM points). A point is taken only when its recomputed residual is the
    # LP's optimal value (or meets ``witness``), so the order changes the time, not the answer.
    # Measured on NOSBENCH's certificate LPs (s): DSCSP_001_031 defaults 0.41, tight 1.08, no
    # presolve 0.96, IPM 2.17; DISCM_001_033 defaults and tight give up (0.22 each), IPM 0.14,
    # no presolve 0.79; MFTOPT_001_027 0.23-0.28 for all four. Tight tolerances came first
    # until 2026-11-27.
    tight = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
    attempts: tuple[tuple[str, dict[str, Any]], ...] = (
        ("highs", {}), ("highs-ipm", {}), ("highs", tight), ("highs", {"presolve": False}),
    )  # fmt: skip
    slack = 1e-6 * max(1.0, _max_abs(b))
    for method, given in attempts:
        opts: dict[str, Any] = dict(given)
        if deadline is not None:
            left = deadline - time.perf_counter()
            if left <= 0:
                return None, why or "time limit reached before the multiplier LP"
            opts["time_limit"] = left
        try:
            res = highs.linprog(
                c, A_ub=A_ub, b_ub=np.concatenate([b, -b]), bounds=bounds, method=method, options=opts
            )
        except ValueError as exc:  # HiGHS refuses the data (e.g. overflowing entries)
            return None, f"multiplier LP refused: {exc}"
        if res.status == 0 and res.x is not None and np.isfinite(res.x).all():
            v = np.clip(np.asarray(res.x[:n], dtype=float), lo, hi)
            # an "optimal" point whose recomputed residual is not its objective is no optimum
            # (HiGHS without presolve returned 0.09 for an optimum of 1.3e-4 on DSCOB_001_031)
            r = _max_abs(A @ v - b)
            if r <= float(res.fun) + slack or (witness is not None and r <= witness):
                return v, ""
            why = f"multiplier LP ({method}, {given or 'defaults'}) inaccurate"
            continue
        why = f"multiplier LP not solved: {res.message}"
        if res.status == 1:  # time limit: no further attempt
            break
    return None, why


def _regularised_lstsq(A: sps.csc_matrix, b: np.ndarray, refine: int = 0) -> np.ndarray:
    r"""``argmin ||A v - b||^2 + delta ||v||^2`` by one sparse LU of the augmented system.

    .. math::

        \begin{pmatrix} I & A \\ A^T & -\delta I \end{pmatrix}
        \begin{pmatrix} r \\ v \end{pmatrix} = \begin{pmatrix} b \\ 0 \end{pmatrix},
        \qquad \delta = 10^{-12} \max(1, \max_{ij} |A_{ij}|)^2,

    quasi-definite, hence nonsingular for any ``A`` (rank-deficient included); its ``v`` is the
    regularised least-squares solution (``r = b - A v``). Cost O(fill) instead of the dense
    O(m n^2). With ``refine`` > 0, that many iterated-Tikhonov corrections
    :math:`v \leftarrow v + (A^TA + \delta I)^{-1} A^T (b - Av)` follow, each one solve with the
    same factors: the error along a singular value :math:`\sigma` shrinks by
    :math:`\delta/(\sigma^2 + \delta)` per correction, so ``v`` tends to the minimum-norm
    least-squares solution on every direction with :math:`\sigma^2 \gg \delta`, and the residual
    to the least-squares minimum.
    """
    m, n = A.shape
    amax = float(abs(A).max()) if A.nnz else 1.0
    delta = 1e-12 * max(1.0, amax) ** 2
    K = sps.bmat([[sps.identity(m), A], [A.T, -delta * sps.identity(n)]], format="csc")
    lu = spla.splu(K)
    v = lu.solve(np.concatenate([b, np.zeros(n)]))[m:]
    for _ in range(refine):
        v = v + lu.solve(np.concatenate([b - A @ v, np.zeros(n)]))[m:]
    return v


def _column_norms(A: sps.csc_matrix) -> np.ndarray:
    """Euclidean norms of the columns of ``A`` (1 for an empty column)."""
    c = np.sqrt(np.asarray(A.multiply(A).sum(axis=0), dtype=float).reshape(-1))
    return np.where(c > 0, c, 1.0)


def _sparse_certificate(
    A: sps.csc_matrix, b: np.ndarray, lo: np.ndarray, hi: np.ndarray, threshold: float
) -> tuple[np.ndarray | None, float, np.ndarray | None]:
    r"""``(v, r0, v0)``: some :math:`v \in [l, h]` with :math:`\|A v - b\|_\infty \le` ``threshold``
    (or ``None``), the unconstrained least-squares solution :math:`v_0` (``None`` if not finite)
    and its residual :math:`r_0`.

    The columns are equilibrated first, :math:`A = \hat A C` with :math:`C = \mathrm{diag}`
    of the column norms, :math:`v = C^{-1} w`, bounds :math:`C l \le w \le C h` (multiplier
    columns differ by up to :math:`10^5` in norm on the plate-design MPCC; the regularisation of
    :func:`_regularised_lstsq`, relative to the largest entry, then swamped the small columns and
    left a residual of 0.07 where the least-squares minimum is 1.6e-5). Then repeatedly: the
    regularised least-squares solution over the free columns; entries outside the box are clamped
    to the nearest bound and held there, the rest re-solved; at most
    :data:`_CERTIFICATE_ROUNDS` rounds. The returned ``v`` lies in the box and its residual,
    computed here exactly on the unscaled ``A``, meets ``threshold``, so it is a certificate;
    ``None`` only means this heuristic found none (the exact LP of :func:`_linf_lp` decides
    then). :math:`r_0` is the least-squares minimum up to the regularisation, reduced by
    :data:`TIKHONOV_REFINE` corrections of the first solve.
    """
    n = A.shape[1]
    c = _column_norms(A)
    Ah = (A @ sps.diags(1.0 / c)).tocsc()
    lo_w, hi_w = lo * c, hi * c
    w = np.zeros(n)
    held = np.zeros(n, dtype=bool)
    r0, v0 = np.inf, None
    for k in range(_CERTIFICATE_ROUNDS):
        act = np.flatnonzero(~held)
        if act.size == 0:
            break
        rhs = b - Ah[:, held] @ w[held] if held.any() else b
        wa = _regularised_lstsq(Ah[:, act], rhs, refine=TIKHONOV_REFINE if k == 0 else 0)
        if not np.isfinite(wa).all():
            return None, r0, v0
        w[act] = wa
        if k == 0:
            r0, v0 = float(np.linalg.norm(Ah @ w - b)), w / c
        bad = (wa < lo_w[act]) | (wa > hi_w[act])
        if not bad.any():
            break
        idx = act[bad]
        w[idx] = np.clip(wa[bad], lo_w[idx], hi_w[idx])
        held[idx] = True
    v = np.clip(w / c, lo, hi)
    return (v if _max_abs(A @ v - b) <= threshold else None), r0, v0
