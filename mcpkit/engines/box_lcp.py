r"""The box LCP :math:`l \le z \le u \perp Mz + q` reduced exactly to one standard LCP.

Lemke's method (:mod:`mcpkit.engines.lemke_pivoting`) runs on the standard LCP
:math:`0 \le x \perp M_{std} x + q_{std} \ge 0`; :class:`BoxLCPReduction` builds it from the
bounds, once per :math:`M`, case by case:

* fixed :math:`l_i = u_i`: :math:`z_i = l_i`, the row is dropped;
* free :math:`-\infty = l_i,\ u_i = \infty` (the equations of an MLCP): eliminated by the Schur
  complement :math:`S = M_{BB} - M_{BF} M_{FF}^{-1} M_{FB}` when :math:`M_{FF}` is nonsingular
  (a P-matrix stays a P-matrix, a positive semidefinite one stays so); otherwise each free
  variable is split, :math:`z_f = x^+_f - x^-_f` with :math:`x^+_f \perp F_f`,
  :math:`x^-_f \perp -F_f` (the reduced matrix is :math:`T^\top M T`, still positive
  semidefinite when :math:`M` is, but never a P-matrix: Lemke may then end on a ray);
* lower bound only: :math:`z_i = l_i + x_i`; upper bound only: :math:`z_i = u_i - x_i`, with
  row and column :math:`i` negated (:math:`D S D`, :math:`D = \pm 1` diagonal: P-matrices and
  semidefiniteness are kept);
* both finite, :math:`l_i < u_i`: :math:`z_i = l_i + x_i`, :math:`F_i = w_i - v_i`, and the
  standard LCP in :math:`(x, v)` with

  .. math::

      \begin{pmatrix} w \\ y \end{pmatrix} =
      \begin{pmatrix} DSD & E \\ -E^\top & 0 \end{pmatrix}
      \begin{pmatrix} x \\ v \end{pmatrix} + \begin{pmatrix} \tilde q \\ u_B - l_B \end{pmatrix},

  :math:`x \perp w`, :math:`v \perp y` (:math:`E` selects the boxed rows). For
  :math:`u_B - l_B > 0` this LCP has no secondary ray for any :math:`M` (a ray would need
  :math:`v_i \to \infty` with :math:`x_i = u_i - l_i` and :math:`w_i \to \infty`), so Lemke
  always ends at a solution of a finitely boxed LCP.

"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from mcpkit.engines.lemke_pivoting import lu_or_none


class BoxLCPReduction:
    r"""The box LCP :math:`l \le z \le u \perp Mz + q` as one standard LCP (module docstring).

    Built once per :math:`M` and bounds; :meth:`q_std` maps each :math:`q`, :meth:`expand` maps a
    standard-LCP point back to :math:`z`. Every reduced variable :math:`x_t` is a signed copy of
    one original variable: :math:`z_{\mathrm{idx}_t} \mathrel{+}= \mathrm{sign}_t\, x_t` on top of
    the offsets, so the reduced matrix is :math:`T^\top M T` with :math:`T` a signed selection
    (after the Schur elimination of the free variables when :math:`M_{FF}` is nonsingular).

    Attributes
    ----------
    M_std
        The standard LCP's matrix, of size :attr:`N`.
    idx, sign
        Original index and sign of each reduced variable :math:`x_t` (the boxed ones' :math:`v`
        come after them).
    bounded
        Original indices of the variables with at least one finite bound (not fixed): the
        first ``len(bounded)`` reduced variables, with ``sign`` :math:`+1` for
        :math:`z = l + x`, :math:`-1` for :math:`z = u - x`.
    boxed
        Positions in ``bounded`` of the variables with both bounds finite (one :math:`v` each).
    free, fixed
        Original indices of the free and of the fixed variables.
    free_mode
        ``"schur"`` (free variables eliminated through a nonsingular :math:`M_{FF}`), ``"split"``
        (:math:`M_{FF}` singular: :math:`z_f = x^+_f - x^-_f`, two reduced variables each, paired
        with :math:`F_f` and :math:`-F_f`), or ``"none"``.
    """

    def __init__(self, M: np.ndarray, lb: np.ndarray, ub: np.ndarray) -> None:
        n = lb.size
        self.n = n
        self.M = M
        self.lb, self.ub = lb, ub
        fin_l, fin_u = np.isfinite(lb), np.isfinite(ub)
        fixed = fin_l & fin_u & (lb == ub)
        self.fixed = np.flatnonzero(fixed)
        self.free = np.flatnonzero(~fin_l & ~fin_u)
        self.bounded = np.flatnonzero((fin_l | fin_u) & ~fixed)
        B, F = self.bounded, self.free
        nb = B.size
        self.nb = nb
        sgnB = np.where(fin_l[B], 1.0, -1.0)
        self.offset = np.where(fin_l[B], lb[B], ub[B])
        self.boxed = np.flatnonzero(fin_l[B] & fin_u[B])
        self.width = (ub[B] - lb[B])[self.boxed]
        self.lu_FF: Any = None
        self.free_mode = "none"
        if F.size:
            self.lu_FF = lu_or_none(M[np.ix_(F, F)])
            self.free_mode = "schur" if self.lu_FF is not None else "split"
        if self.free_mode == "split":
            self.idx = np.concatenate([B, F, F])
            self.sign = np.concatenate([sgnB, np.ones(F.size), -np.ones(F.size)])
        else:
            self.idx, self.sign = B, sgnB
        ix = self.idx
        if self.free_mode == "schur":
            S = M[np.ix_(ix, ix)] - M[np.ix_(ix, F)] @ sla.lu_solve(self.lu_FF, M[np.ix_(F, ix)])
        elif ix.size == n and np.array_equal(ix, np.arange(n)):
            S = M
        else:
            S = M[np.ix_(ix, ix)]
        Mr = S if (self.sign > 0).all() else S * np.multiply.outer(self.sign, self.sign)
        nx, m = self.boxed.size, ix.size
        if nx:
            Ms = np.zeros((m + nx, m + nx))
            Ms[:m, :m] = Mr
            Ms[self.boxed, m + np.arange(nx)] = 1.0
            Ms[m + np.arange(nx), self.boxed] = -1.0
            self.M_std = Ms
        else:
            self.M_std = Mr
        self.N = m + nx

    @property
    def is_standard(self) -> bool:
        """The box LCP already is a standard LCP (every bound is ``l = 0, u = inf``)."""
        return self.bounded.size == self.n and bool((self.sign > 0).all()) and not self.offset.any()

    def _base(self) -> np.ndarray:
        """``z`` with the bounded variables at their offsets, fixed ones at their value, free at 0."""
        z = np.zeros(self.n)
        z[self.fixed] = self.lb[self.fixed]
        z[self.bounded] = self.offset
        return z

    def q_std(self, q: np.ndarray) -> np.ndarray:
        r"""The standard LCP's :math:`q` for the box LCP's :math:`q`."""
        ix, F = self.idx, self.free
        zb = self._base()
        qt = q + self.M @ zb if zb.any() else q
        qI = qt[ix]
        if self.free_mode == "schur":
            qI = qI - self.M[np.ix_(ix, F)] @ sla.lu_solve(self.lu_FF, qt[F])
        return np.concatenate([self.sign * qI, self.width])

    def expand(self, x: np.ndarray, q: np.ndarray) -> np.ndarray:
        r""":math:`z` of the box LCP from a standard-LCP point ``x`` (free variables solved for)."""
        B, F, nb = self.bounded, self.free, self.nb
        z = self._base()
        z[B] = self.offset + self.sign[:nb] * x[:nb]
        if self.free_mode == "split":
            nf = F.size
            z[F] = x[nb : nb + nf] - x[nb + nf : nb + 2 * nf]
        elif self.free_mode == "schur":
            rest = np.setdiff1d(np.arange(self.n), F)
            z[F] = -sla.lu_solve(self.lu_FF, q[F] + self.M[np.ix_(F, rest)] @ z[rest])
        return np.clip(z, self.lb, self.ub)

    def polish(self, basis: np.ndarray, q: np.ndarray, z_from: np.ndarray) -> np.ndarray | None:
        r"""Refine ``z_from`` on the active set of a complementary ``basis``, in the original :math:`z`.

        Bounded variables whose :math:`x_t` is nonbasic sit at their bound (:math:`l` or, for
        :math:`z = u - x`, :math:`u`), boxed ones with :math:`x_t` and :math:`v_t` basic at
        :math:`u`; on the free and the remaining variables :math:`S`, three steps of iterative
        refinement of :math:`F_S(z) = 0` starting from ``z_from``, with residuals in the original
        :math:`M` and corrections solved by blocks (:math:`M_{FF}` and its Schur complement, or
        one LU of :math:`M_{SS}` when the free variables were split). None when the matrix to
        factorise is singular.
        """
        B, nb, m = self.bounded, self.nb, self.idx.size
        xb = np.zeros(nb, dtype=bool)
        vb = np.zeros(self.boxed.size, dtype=bool)
        xb[basis[basis < nb]] = True
        vb[basis[basis >= m] - m] = True
        z = self._base()
        upper = np.zeros(nb, dtype=bool)
        upper[self.boxed] = vb & xb[self.boxed]
        z[B[upper]] = self.ub[B[upper]]
        F, Jb = self.free, B[xb & ~upper]
        S = np.concatenate([F, Jb])
        if not S.size:
            return np.clip(z, self.lb, self.ub)
        z[S] = z_from[S]
        rest = np.setdiff1d(np.arange(self.n), S)
        A = self.M[np.ix_(S, S)]
        rhs = -(q[S] + self.M[np.ix_(S, rest)] @ z[rest])
        if self.free_mode == "schur":
            solve = self._block_solver(Jb)
        else:
            lu = lu_or_none(A)
            solve = None if lu is None else (lambda r: sla.lu_solve(lu, r, check_finite=False))
        if solve is None:
            return None
        for _ in range(3):
            z[S] += solve(rhs - A @ z[S])
        return np.clip(z, self.lb, self.ub)

    def _block_solver(self, Jb: np.ndarray) -> Any:
        """Solver of ``[[M_FF, M_FJ], [M_JF, M_JJ]] x = r`` through ``M_FF`` and its Schur complement."""
        F, M, luF = self.free, self.M, self.lu_FF
        nf = F.size
        MJF, MFJ = M[np.ix_(Jb, F)], M[np.ix_(F, Jb)]
        lu_S = None
        if Jb.size:
            lu_S = lu_or_none(M[np.ix_(Jb, Jb)] - MJF @ sla.lu_solve(luF, MFJ))
            if lu_S is None:
                return None

        def solve(r: np.ndarray) -> np.ndarray:
            rF, rJ = r[:nf], r[nf:]
            out = np.empty_like(r)
            yF = sla.lu_solve(luF, rF, check_finite=False)
            if Jb.size:
                out[nf:] = sla.lu_solve(lu_S, rJ - MJF @ yF, check_finite=False)
                out[:nf] = sla.lu_solve(luF, rF - MFJ @ out[nf:], check_finite=False)
            else:
                out[:nf] = yF
            return out

        return solve


def box_natural_residual(
    M: np.ndarray, q: np.ndarray, lb: np.ndarray, ub: np.ndarray, z: np.ndarray
) -> float:
    r""":math:`\|z - \Pi_{[l,u]}(z - Mz - q)\|_\infty`."""
    return float(np.abs(z - np.clip(z - (M @ z + q), lb, ub)).max(initial=0.0))
