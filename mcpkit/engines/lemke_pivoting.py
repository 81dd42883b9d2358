r"""Lemke's complementary pivoting method on a standard LCP (the core of ``method="lemke"``).

The problem
-----------
The standard linear complementarity problem LCP(:math:`q, M`): find :math:`z \in \mathbb{R}^N` with

.. math::

    z \ge 0, \qquad w = Mz + q \ge 0, \qquad z^\top w = 0 .

Lemke's method (Lemke 1965; Cottle, Pang & Stone 1992, §4.4) adds an artificial variable
:math:`z_0 \ge 0` with a covering vector :math:`d > 0` (default :math:`d = \mathbf 1`) and follows
the path of *almost complementary* basic solutions of

.. math::

    w = q + Mz + d\,z_0, \qquad w, z, z_0 \ge 0, \qquad w_i z_i = 0\ (i = 1..N).

It starts at :math:`z = 0`, :math:`z_0 = \max_i(-q_i/d_i)` (one :math:`w_r` leaves the basis),
and then alternates: the complement of the variable that just left enters, and a minimum ratio
test picks the variable that leaves. It stops when

* :math:`z_0` leaves the basis: the basis is complementary and :math:`(z, w)` solves the LCP
  (``Termination.CONVERGED``); or
* the entering column has no blocking row, a *secondary ray* (an unbounded edge of almost
  complementary solutions). When :math:`M` is copositive-plus this proves the LCP infeasible
  (CPS Thm 4.4.13): the :math:`z`-part :math:`y` of the ray then satisfies :math:`y \ge 0`,
  :math:`M^\top y \le 0`, :math:`q^\top y < 0`, a Farkas certificate that no :math:`z \ge 0` has
  :math:`Mz + q \ge 0`. The route (:class:`~mcpkit.engines.lemke.LemkeRoute`) reports
  ``Termination.LOCALLY_INFEASIBLE`` when such a certificate is *verified numerically* (whatever
  class :math:`M` is in), and
  ``Termination.STALLED`` otherwise (a ray on a matrix outside the classes Lemke is known to
  process says nothing about solvability). ``RouteOutcome.extra`` holds
  ``{"lemke": "secondary ray", "certificate": {...}}`` and, when proven,
  ``"infeasibility_certificate"``;
* the pivot limit (``SolveOptions.max_inner_iter`` pivots; raise it for LCPs with more than a
  couple of thousand variables, which need about as many pivots as the solution has positive
  components) gives ``ITERATION_LIMIT``; ``SolveOptions.time_limit`` (checked between pivots)
  gives ``TIME_LIMIT``; a singular basis gives ``NUMERICAL_ERROR``.

Lemke's method processes (ends at a solution, or at a ray that proves infeasibility) every LCP
whose :math:`M` is a P-matrix (unique solution for every :math:`q`), copositive-plus (this
includes positive semidefinite :math:`M`), or strictly semi-monotone (Eaves' class L).

Degeneracy: the lexicographic rule
----------------------------------
Ties in the minimum ratio test are broken by the *lexicographic minimum ratio test*: among the
rows :math:`i` attaining :math:`\min_i \bar q_i / \bar a_i` (:math:`\bar a = B^{-1} a_e` the
entering column, :math:`\bar q = B^{-1} q`), choose the lexicographic minimum of
:math:`(\bar q_i, (B^{-1})_{i\cdot}) / \bar a_i`. This is the simplex method on the perturbed
:math:`q + (\varepsilon, \varepsilon^2, \ldots, \varepsilon^N)` for infinitesimal
:math:`\varepsilon > 0`, which is nondegenerate; every basis is then visited at most once and the
method is finite. The first pivot (``z0`` enters) takes the lexicographic minimum of
:math:`(q_i, e_i)/d_i`: the largest index among the most negative :math:`q_i/d_i`. If
:math:`z_0` is among the tied rows it leaves at once (the tie makes the basis complementary).
Ties are decided with a tolerance on the value each tied basic variable would take after the
step that follows the rounding noise of the basic values (see :func:`lemke_lcp`).

Numerics
--------
No tableau is stored. A basis holds :math:`w_i` for :math:`i \in W`, and :math:`z_j` for
:math:`j \in Z` (with :math:`z_0` as column :math:`d`); the rows :math:`R = W^c` where
:math:`w` is nonbasic have :math:`|R| = |Z|`. With :math:`\tilde M = [M\ d]`,
:math:`C = -\tilde M_{RZ}` is the only part of the basis that needs an inverse:
:math:`z_Z = C^{-1} q_R` and :math:`w_W = q_W + \tilde M_{WZ} z_Z`. :math:`C^{-1}` is kept
explicitly and updated per pivot by a bordering (a :math:`z` enters, a :math:`w` leaves), a
rank-one column or row exchange, or a Schur-complement deletion (a :math:`w` enters, a :math:`z`
leaves), each :math:`O(k^2)` for :math:`k = |Z|`; the entering column costs
:math:`O(k^2 + Nk)`. Every ``check_every`` pivots the basic values are recomputed from
:math:`C^{-1}`, and :math:`C^{-1}` is refactorised (LU, :math:`O(k^3)`) when a probe
:math:`\|C C^{-1} e - e\|_\infty` exceeds ``refactor_tol``. At a solution the complementary
basis :math:`J` is solved once more directly (:math:`M_{JJ} z_J = -q_J`, LU), and the more
accurate of the two points is kept.

References
----------
C. E. Lemke, "Bimatrix equilibrium points and mathematical programming", Management Science
11 (1965) 681-689. R. W. Cottle, J.-S. Pang, R. E. Stone, *The Linear Complementarity Problem*,
Academic Press 1992 (SIAM Classics 2009), §4.4 (Lemke's method, lexicographic rule, Thm 4.4.13).
"""

from __future__ import annotations

import functools
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg as sla

from mcpkit.errors import MCPInputError, ShapeError
from mcpkit.solving.tables import compact_repr

#: Statuses of :class:`LemkeResult`.
LEMKE_STATUSES: tuple[str, ...] = (
    "solution", "secondary_ray", "pivot_limit", "time_limit", "numerical_error",
)  # fmt: skip


@dataclass
class LemkeResult:
    r"""The outcome of :func:`lemke_lcp` on LCP(:math:`q, M`).

    ``z`` is the current basic point (nonbasic components 0), ``w = Mz + q + d z_0`` and
    ``z0`` the artificial variable's value (0 at a solution).
    """

    status: str
    """One of :data:`LEMKE_STATUSES`."""
    z: np.ndarray
    """The :math:`z` part of the last basic point."""
    w: np.ndarray
    r""":math:`Mz + q + d z_0` at that point."""
    z0: float
    """Value of the artificial variable (0 at a solution)."""
    pivots: int
    """Number of pivots (the first, ``z0`` entering, included)."""
    wall_time_s: float
    """Wall time of the pivoting."""
    basis: np.ndarray | None = None
    """At a solution: the sorted indices :math:`J` of the basic :math:`z_j` (for warm starts)."""
    ray: dict[str, Any] | None = None
    r"""At a secondary ray: ``{"z": dz, "z0": dz0, "entering": name}``, the ray's direction
    (:math:`z + t\,dz`, :math:`z_0 + t\,dz_0`, :math:`t \ge 0`, stays almost complementary)."""
    refactorizations: int = 0
    """How many times :math:`C^{-1}` was recomputed from an LU factorisation."""
    message: str = ""
    """One line on how it ended."""
    d: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    """The covering vector used."""

    @property
    def natural_residual(self) -> float:
        r""":math:`\|\min(z, Mz + q)\|_\infty` of the point (meaningful when ``z0 == 0``)."""
        wq = self.w - self.d * self.z0 if self.z0 else self.w
        return float(np.abs(np.minimum(self.z, wq)).max(initial=0.0))

    def __repr__(self) -> str:
        """A few lines: key fields, arrays by shape (:func:`~mcpkit.solving.tables.compact_repr`)."""
        return compact_repr(
            self, ("status", "pivots", "refactorizations", "wall_time_s", "message", "z", "w", "ray")
        )


def _as_lcp(M: Any, q: Any, d: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    Mx = np.asarray(M, dtype=float)
    qx = np.asarray(q, dtype=float).reshape(-1)
    N = qx.size
    if Mx.shape != (N, N):
        raise ShapeError(f"lemke_lcp: M must have shape ({N}, {N}) to match q, got {Mx.shape}")
    if not (np.isfinite(Mx).all() and np.isfinite(qx).all()):
        raise MCPInputError("lemke_lcp: M and q must be finite")
    dx = np.ones(N) if d is None else np.asarray(d, dtype=float).reshape(-1)
    if dx.shape != (N,) or not np.isfinite(dx).all() or (N and dx.min() <= 0.0):
        raise MCPInputError(f"lemke_lcp: the covering vector d must hold {N} finite positive numbers")
    return Mx, qx, dx


def lu_or_none(A: np.ndarray, rel: float = 1e-14) -> Any:
    """``scipy.linalg.lu_factor(A)``, or None when ``A`` is numerically singular.

    Singular means a pivot of ``U`` at most ``rel`` times the largest one (or not finite).
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", sla.LinAlgWarning)
            lu = sla.lu_factor(A, check_finite=False)
    except (ValueError, np.linalg.LinAlgError):
        return None
    diag = np.abs(np.diag(lu[0]))
    if not np.all(np.isfinite(lu[0])) or diag.size == 0 or diag.min() <= rel * max(diag.max(), 1e-300):
        return None
    return lu


class _Basis:
    r"""The basis of Lemke's method through :math:`C^{-1} = (-\tilde M_{RZ})^{-1}` (module docstring).

    Columns ``j < N`` are :math:`z_j` (column :math:`M_{:j}`), column ``N`` is :math:`z_0`
    (column :math:`d`). ``Z[:k]`` lists the basic columns in the row order of ``Cinv``; ``R[:k]``
    lists the rows with nonbasic :math:`w` in the column order of ``Cinv``.
    """

    def __init__(self, M: np.ndarray, q: np.ndarray, d: np.ndarray) -> None:
        N = q.size
        self.N = N
        self.M = np.asfortranarray(M)  # columns contiguous
        self.q = q
        self.d = d
        self.k = 0
        self.Cbuf = np.zeros((N + 1, N + 1))
        self.Mz = np.zeros((N, N + 1), order="F")  # columns of [M d] for Z, in Z order
        self.Z = np.full(N + 1, -1, dtype=np.intp)
        self.R = np.full(N + 1, -1, dtype=np.intp)
        self.posZ = np.full(N + 1, -1, dtype=np.intp)
        self.posR = np.full(N, -1, dtype=np.intp)
        self.xZ = np.zeros(N + 1)
        self.w = q.copy()  # values of basic w_i (rows in R: unused, kept 0)
        self.refactorizations = 0
        self.gmax = 1.0  # upper bound on max |Cinv| (exact after each check or refactorisation)

    # ------------------------------------------------------------------ views
    @property
    def Cinv(self) -> np.ndarray:
        return self.Cbuf[: self.k, : self.k]

    def col(self, j: int) -> np.ndarray:
        """Column ``j`` of :math:`[M\\ d]`."""
        return self.d if j == self.N else self.M[:, j]

    def inW(self) -> np.ndarray:
        return self.posR < 0

    # ------------------------------------------------------------- directions
    def direction(self, entering: tuple[str, int]) -> tuple[np.ndarray, np.ndarray]:
        r"""``(aZ, aW)``: basic variables move as ``x_B - t a`` when the entering variable is ``t``."""
        kind, j = entering
        k = self.k
        Mz = self.Mz[:, :k]
        if kind == "x":
            col = self.col(j)
            aZ = self.Cinv @ (-col[self.R[:k]])
            aW = Mz @ aZ - col
        else:
            aZ = self.Cinv[:, self.posR[j]].copy()
            aW = Mz @ aZ
        return aZ, aW

    def binv_rows(self, rows: list[tuple[str, int]]) -> np.ndarray:
        r"""Rows of :math:`B^{-1}` (columns in constraint-row order) of the given basic variables."""
        k = self.k
        R = self.R[:k]
        out = np.zeros((len(rows), self.N))
        for t, (kind, i) in enumerate(rows):
            if kind == "x":
                out[t, R] = self.Cinv[i, :]
            else:
                out[t, R] = self.Mz[i, :k] @ self.Cinv
                out[t, i] += 1.0
        return out

    # ----------------------------------------------------------------- pivots
    def pivot(
        self,
        entering: tuple[str, int],
        leaving: tuple[str, int],
        theta: float,
        aZ: np.ndarray,
        aW: np.ndarray,
    ) -> None:
        """Move ``theta`` along the direction, then exchange ``leaving`` for ``entering``.

        ``leaving`` is ``("x", position in Z)`` or ``("w", row)``.
        """
        k = self.k
        self.xZ[:k] -= theta * aZ
        self.w -= theta * aW
        self.w[self.R[:k]] = 0.0
        ekind, j = entering
        lkind, ell = leaving
        C = self.Cinv
        if ekind == "x" and lkind == "w":  # bordering: C grows by row r = ell, column j
            r = ell
            s = aW[r]
            b = -self.Mz[r, :k]
            v = b @ C
            if k:
                C -= np.multiply.outer(aZ, v / (-s))  # C + u v^T / s
            self.gmax = max(
                self.gmax + _amax(aZ) * _amax(v) / abs(s), (_amax(aZ) + 1.0) / abs(s), _amax(v) / abs(s)
            )
            self.Cbuf[:k, k] = -aZ / s
            self.Cbuf[k, :k] = -v / s
            self.Cbuf[k, k] = 1.0 / s
            self.Z[k], self.R[k] = j, r
            self.posZ[j], self.posR[r] = k, k
            self.Mz[:, k] = self.col(j)
            self.xZ[k] = theta
            self.w[r] = 0.0
            self.k = k + 1
        elif ekind == "x":  # column exchange at position a
            a = ell
            row = C[a, :] / aZ[a]
            u = aZ.copy()
            u[a] -= 1.0
            C -= np.multiply.outer(u, row)
            self.gmax += _amax(u) * _amax(row)
            old = self.Z[a]
            self.posZ[old] = -1
            self.Z[a], self.posZ[j] = j, a
            self.Mz[:, a] = self.col(j)
            self.xZ[a] = theta
        elif lkind == "w":  # w_j enters, w_r leaves: row exchange at position p
            p, r = self.posR[j], ell
            b = -self.Mz[r, :k]
            v = b @ C
            den = v[p]
            v[p] -= 1.0
            C -= np.multiply.outer(aZ / den, v)
            self.gmax += _amax(aZ) * _amax(v) / abs(den)
            self.R[p], self.posR[r], self.posR[j] = r, p, -1
            self.w[j] = theta
            self.w[r] = 0.0
        else:  # w_j enters, z at position a leaves: delete row a and column p
            p, a = self.posR[j], ell
            g = C[a, p]
            self.gmax += _amax(C[:, p]) * _amax(C[a, :]) / abs(g)
            C -= np.multiply.outer(C[:, p], C[a, :] / g)
            last = k - 1
            buf = self.Cbuf
            buf[[a, last], :k] = buf[[last, a], :k]
            buf[:k, [p, last]] = buf[:k, [last, p]]
            old = self.Z[a]
            self.posZ[old] = -1
            self.Z[a] = self.Z[last]
            if a != last:
                self.posZ[self.Z[a]] = a
                self.Mz[:, a] = self.Mz[:, last]
                self.xZ[a] = self.xZ[last]
            self.posR[j] = -1
            self.R[p] = self.R[last]
            if p != last:
                self.posR[self.R[p]] = p
            self.Z[last] = self.R[last] = -1
            self.k = last
            self.w[j] = theta

    # ------------------------------------------------------------- stability
    def C(self) -> np.ndarray:
        k = self.k
        return -self.Mz[self.R[:k], :k]

    def refresh_values(self) -> None:
        """Recompute the basic values from ``Cinv`` (resets drift in the values) and ``gmax``."""
        k = self.k
        self.gmax = max(1.0, _amax(self.Cinv))
        self.xZ[:k] = self.Cinv @ self.q[self.R[:k]]
        self.w = self.q + self.Mz[:, :k] @ self.xZ[:k]
        self.w[self.R[:k]] = 0.0

    def drift(self) -> float:
        r""":math:`\|C C^{-1} e - e\|_\infty` for :math:`e = (1, -1, 1, \ldots)`."""
        k = self.k
        if k == 0:
            return 0.0
        e = np.where(np.arange(k) % 2 == 0, 1.0, -1.0)
        return float(np.abs(self.C() @ (self.Cinv @ e) - e).max())

    def refactor(self) -> bool:
        """``Cinv`` from an LU factorisation of ``C``; False when ``C`` is singular."""
        k = self.k
        self.refactorizations += 1
        if k == 0:
            return True
        lu = lu_or_none(self.C())
        if lu is None:
            return False
        self.Cbuf[:k, :k] = sla.lu_solve(lu, np.eye(k), check_finite=False)
        self.refresh_values()
        return True

    def point(self) -> tuple[np.ndarray, float]:
        """``(z, z0)`` of the current basic solution."""
        z = np.zeros(self.N + 1)
        k = self.k
        z[self.Z[:k]] = self.xZ[:k]
        return z[: self.N], float(z[self.N])


def _amax(a: np.ndarray) -> float:
    return float(np.abs(a).max(initial=0.0))


def solve_principal(M: np.ndarray, q: np.ndarray, J: np.ndarray) -> np.ndarray | None:
    r"""The complementary basic point of :math:`J`: :math:`M_{JJ} z_J = -q_J`, :math:`z_{J^c} = 0`.

    Returns None when :math:`M_{JJ}` is numerically singular. One step of iterative refinement.
    """
    z = np.zeros(q.size)
    if J.size == 0:
        return z
    A = M[np.ix_(J, J)]
    lu = lu_or_none(A)
    if lu is None:
        return None
    zJ = sla.lu_solve(lu, -q[J], check_finite=False)
    zJ += sla.lu_solve(lu, -q[J] - A @ zJ, check_finite=False)
    z[J] = zJ
    return z


def lcp_residual(z: np.ndarray, w: np.ndarray) -> float:
    r""":math:`\|\min(z, w)\|_\infty`, the natural residual of an LCP point with :math:`w = Mz + q`."""
    return float(np.abs(np.minimum(z, w)).max(initial=0.0))


def lemke_lcp(
    M: Any,
    q: Any,
    d: Any = None,
    *,
    max_pivots: int | None = None,
    time_limit: float | None = None,
    pivot_tol: float = 1e-11,
    zero_tol: float = 1e-14,
    check_every: int = 50,
    refactor_tol: float = 1e-9,
    start: Any = None,
    lexicographic: bool = True,
) -> LemkeResult:
    r"""Solve LCP(:math:`q, M`): :math:`0 \le z \perp Mz + q \ge 0` by Lemke's method.

    Parameters
    ----------
    M, q
        The LCP data (dense, finite).
    d
        Covering vector (positive; default all ones).
    max_pivots
        Pivot limit (default :math:`50N + 1000`).
    time_limit
        Wall-clock limit in seconds, checked between pivots.
    pivot_tol
        Entries of the entering column at most ``pivot_tol * max(1, ||a||_inf)`` do not block.
    zero_tol
        Basic values within ``zero_tol * max(1, ||q||_inf) * max(1, g)`` of zero after the step
        are tied in the ratio test (then broken lexicographically); :math:`g` bounds
        :math:`\max|C^{-1}|`, so the tolerance follows the rounding noise of the basic values.
    check_every, refactor_tol
        Every ``check_every`` pivots the basic values are recomputed and :math:`C^{-1}` is
        refactorised if the drift probe exceeds ``refactor_tol``.
    start
        Indices :math:`J` of a complementary starting basis (:math:`z_J` basic, :math:`w_J`
        nonbasic) instead of :math:`J = \emptyset`. Lemke then runs on the principal pivot
        transform of LCP(:math:`q, M`) on :math:`J` (formed explicitly, :math:`O(N^3)`; needs
        :math:`M_{JJ}` nonsingular, else ``numerical_error``), whose solutions are those of the
        original with :math:`z_J` and :math:`w_J` exchanged; if the basis of :math:`J` is
        already feasible, that is the solution (0 pivots). P-matrices and positive
        semidefinite matrices stay so under the transform; copositive-plus ones need not.
    lexicographic
        Break ties in the ratio test by the lexicographic rule (default). ``False`` breaks them
        by the smallest subscript instead (a leaving :math:`z_j` with the smallest :math:`j`
        before a leaving :math:`w_i` with the smallest :math:`i`), which can cycle on degenerate
        problems; it exists to show that the lexicographic rule is what makes the method finite.

    Returns
    -------
    LemkeResult
        ``status == "solution"`` exactly when :math:`z_0` left the basis (the point is then
        polished by one direct solve of the complementary basis).
    """
    t0 = time.perf_counter()
    Mx, qx, dx = _as_lcp(M, q, d)
    N = qx.size
    limit = 50 * N + 1000 if max_pivots is None else int(max_pivots)
    if start is not None and np.asarray(start).size:
        J = np.unique(np.asarray(start, dtype=np.intp).reshape(-1))
        if J.min() < 0 or J.max() >= N:
            raise MCPInputError(f"lemke_lcp: start indices must lie in [0, {N}), got {J.tolist()[:10]}")
        opts = dict(
            max_pivots=limit, time_limit=time_limit, pivot_tol=pivot_tol, zero_tol=zero_tol,
            check_every=check_every, refactor_tol=refactor_tol, lexicographic=lexicographic,
        )  # fmt: skip
        return _lemke_from(Mx, qx, dx, J, t0, opts)
    ztol = zero_tol * max(1.0, float(np.abs(qx).max(initial=0.0)))
    result = functools.partial(_result, Mx, qx, dx, t0)
    if N == 0 or qx.min() >= 0.0:
        return result("solution", None, 0, "q >= 0: z = 0 solves the LCP", basis=np.zeros(0, dtype=np.intp))

    st = _Basis(Mx, qx, dx)
    entering = _first_pivot(st, qx, dx, ztol)
    pivots = 1
    since_check = 0
    while True:
        if pivots >= limit:
            return result("pivot_limit", st, pivots, f"pivot limit {limit} reached")
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            return result("time_limit", st, pivots, f"time limit {time_limit:g} s reached")
        if since_check >= check_every:
            since_check = 0
            if st.drift() > refactor_tol:
                if not st.refactor():
                    return result("numerical_error", st, pivots, "basis matrix became singular")
            else:
                st.refresh_values()
        aZ, aW = st.direction(entering)
        candZ, candW = _blocking(st, aZ, aW, pivot_tol)
        if not candZ.any() and not candW.any():
            if since_check > 0:
                # confirm on a fresh factorisation before declaring a ray
                since_check = 0
                if not st.refactor():
                    return result("numerical_error", st, pivots, "basis matrix became singular")
                continue
            z0pos = st.posZ[N]
            if z0pos >= 0 and st.xZ[z0pos] <= ztol * max(1.0, st.gmax):
                # z0 is basic at 0 (degenerate): the current point already solves the LCP
                return _finish(st, Mx, qx, pivots, result)
            ray = _ray(st, entering, aZ)
            return result("secondary_ray", st, pivots, f"secondary ray ({ray['entering']} entering)", ray=ray)
        theta, leaving = _ratio_test(st, candZ, candW, aZ, aW, ztol, zero_tol, lexicographic)
        left_col = int(st.Z[leaving[1]]) if leaving[0] == "x" else -1
        st.pivot(entering, leaving, theta, aZ, aW)
        pivots += 1
        since_check += 1
        # the complement of the variable that left enters
        if leaving[0] == "w":
            entering = ("x", leaving[1])
        elif left_col == N:
            return _finish(st, Mx, qx, pivots, result)
        else:
            entering = ("w", left_col)


def _result(
    M: np.ndarray,
    q: np.ndarray,
    d: np.ndarray,
    t0: float,
    status: str,
    st: _Basis | None,
    pivots: int,
    msg: str,
    **kw: Any,
) -> LemkeResult:
    """The :class:`LemkeResult` of basis ``st`` (``None``: :math:`z = 0`) after ``pivots``,
    with :math:`w = Mz + q + d z_0` and the time since ``t0``."""
    z, z0 = (np.zeros(q.size), 0.0) if st is None else st.point()
    w = M @ z + q + d * z0
    res = LemkeResult(
        status, z, w, z0, pivots, time.perf_counter() - t0, message=msg,
        refactorizations=0 if st is None else st.refactorizations, **kw,
    )  # fmt: skip
    res.d = d
    return res


def _first_pivot(st: _Basis, q: np.ndarray, d: np.ndarray, ztol: float) -> tuple[str, int]:
    r"""The first pivot: :math:`z_0` enters at :math:`-\min_i q_i / d_i`, and of the tied rows
    (lexicographic minimum of :math:`(q_i, e_i)/d_i`) the largest index leaves; returns the
    next entering variable, the complement of the one that left."""
    N = q.size
    rmin = float((q / d).min())
    r = int(np.flatnonzero(q - rmin * d <= ztol).max())
    entering: tuple[str, int] = ("x", N)
    aZ, aW = st.direction(entering)  # aZ empty, aW = -d
    st.pivot(entering, ("w", r), -rmin, aZ, aW)
    return ("x", r)


def _blocking(st: _Basis, aZ: np.ndarray, aW: np.ndarray, pivot_tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Masks of the basic variables (:math:`z` slots, then :math:`w` rows) that block the
    entering column: entries above ``pivot_tol * max(1, ||a||_inf)``."""
    inW = st.inW()
    amax = max(float(np.abs(aZ).max(initial=0.0)), float(np.abs(aW[inW]).max(initial=0.0)))
    ptol = pivot_tol * max(1.0, amax)
    return aZ > ptol, inW & (aW > ptol)


def _ray(st: _Basis, entering: tuple[str, int], aZ: np.ndarray) -> dict[str, Any]:
    """The secondary ray along the entering column: the direction of :math:`z` and
    :math:`z_0`, and the entering variable's name."""
    N = st.N
    dz = np.zeros(N + 1)
    dz[st.Z[: st.k]] = -aZ
    if entering[0] == "x":
        dz[entering[1]] = 1.0
    return {"z": dz[:N].copy(), "z0": float(dz[N]), "entering": _name(entering, N)}


def _ratio_test(
    st: _Basis,
    candZ: np.ndarray,
    candW: np.ndarray,
    aZ: np.ndarray,
    aW: np.ndarray,
    ztol: float,
    zero_tol: float,
    lexicographic: bool,
) -> tuple[float, tuple[str, int]]:
    r"""The step :math:`\theta = \min` of basic value over column entry on the blocking
    variables, and the variable that leaves: :math:`z_0` when it ties, else the one tie, else
    the lexicographic minimum (or the smallest subscript without ``lexicographic``)."""
    k, N = st.k, st.N
    xZ = st.xZ[:k]
    thZ = np.full(k, np.inf)
    thZ[candZ] = np.maximum(xZ[candZ], 0.0) / aZ[candZ]
    thW = np.full(N, np.inf)
    thW[candW] = np.maximum(st.w[candW], 0.0) / aW[candW]
    theta = float(min(thZ.min(initial=np.inf), thW.min(initial=np.inf)))
    ztol_k = ztol * max(1.0, st.gmax)
    tieZ = np.flatnonzero(candZ & (xZ - theta * aZ <= ztol_k))
    tieW = np.flatnonzero(candW & (st.w - theta * aW <= ztol_k))
    z0pos = st.posZ[N]
    if z0pos >= 0 and z0pos in tieZ:
        return theta, ("x", int(z0pos))
    ties = [("x", int(a)) for a in tieZ] + [("w", int(i)) for i in tieW]
    if len(ties) == 1:
        return theta, ties[0]
    if lexicographic:
        return theta, _lexmin(st, ties, aZ, aW, max(1e-9, zero_tol * st.gmax))
    return theta, min(ties, key=lambda v: (v[0] != "x", st.Z[v[1]] if v[0] == "x" else v[1]))


def _finish(st: _Basis, M: np.ndarray, q: np.ndarray, pivots: int, result: Any) -> LemkeResult:
    """z0 left: the complementary basis; polish it with one direct solve and keep the better point."""
    res = result("solution", st, pivots, "z0 left the basis: complementary solution")
    J = np.sort(st.Z[: st.k])
    if J.size and J[-1] == st.N:  # z0 still basic at value 0 (ray from a degenerate point)
        J = J[:-1]
        res.z0 = 0.0
        res.w = M @ res.z + q
        res.message = "z0 = 0 at a secondary ray: the point is complementary"
    res.basis = J
    zp = solve_principal(M, q, J)
    if zp is not None:
        wp = M @ zp + q
        if lcp_residual(zp, wp) <= lcp_residual(res.z, res.w):
            res.z, res.w = zp, wp
    return res


def principal_pivot(M: np.ndarray, q: np.ndarray, J: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    r"""The principal pivot transform of LCP(:math:`q, M`) on :math:`J` (None if :math:`M_{JJ}` is singular).

    With :math:`K = J^c` and :math:`A = M_{JJ}^{-1}`, exchanging :math:`z_J` and :math:`w_J` gives
    :math:`\bar M_{JJ} = A`, :math:`\bar M_{JK} = -A M_{JK}`, :math:`\bar M_{KJ} = M_{KJ} A`,
    :math:`\bar M_{KK} = M_{KK} - M_{KJ} A M_{JK}`, :math:`\bar q_J = -A q_J`,
    :math:`\bar q_K = q_K - M_{KJ} A q_J`.
    """
    N = q.size
    K = np.setdiff1d(np.arange(N), J)
    lu = lu_or_none(M[np.ix_(J, J)], rel=1e-13)
    if lu is None:
        return None
    A = sla.lu_solve(lu, np.eye(J.size), check_finite=False)
    AMJK = A @ M[np.ix_(J, K)]
    MKJA = M[np.ix_(K, J)] @ A
    Mb = np.empty_like(M)
    Mb[np.ix_(J, J)] = A
    Mb[np.ix_(J, K)] = -AMJK
    Mb[np.ix_(K, J)] = MKJA
    Mb[np.ix_(K, K)] = M[np.ix_(K, K)] - M[np.ix_(K, J)] @ AMJK
    qb = np.empty_like(q)
    qb[J] = -(A @ q[J])
    qb[K] = q[K] - MKJA @ q[J]
    return Mb, qb


def _lemke_from(
    M: np.ndarray, q: np.ndarray, d: np.ndarray, J: np.ndarray, t0: float, opts: dict[str, Any]
) -> LemkeResult:
    """Lemke from the complementary basis ``J`` through the principal pivot transform."""
    N = q.size
    ppt = principal_pivot(M, q, J)
    if ppt is None:
        res = LemkeResult(
            "numerical_error", np.zeros(N), q.copy(), 0.0, 0, time.perf_counter() - t0,
            message=f"start basis: M_JJ is singular (|J| = {J.size})",
        )  # fmt: skip
        res.d = d
        return res
    Mb, qb = ppt
    if opts["time_limit"] is not None:
        opts = dict(opts, time_limit=max(opts["time_limit"] - (time.perf_counter() - t0), 0.0))
    rb = lemke_lcp(Mb, qb, d, **opts)
    # exchange back: z_J = w^b_J, w_J = z^b_J
    wb_plain = Mb @ rb.z + qb
    z = rb.z.copy()
    z[J] = wb_plain[J]
    w = M @ z + q + d * rb.z0
    res = LemkeResult(
        rb.status, z, w, rb.z0, rb.pivots, time.perf_counter() - t0,
        message=rb.message + " (from a start basis)", refactorizations=rb.refactorizations,
    )  # fmt: skip
    res.d = d
    if rb.ray is not None:
        dz = rb.ray["z"].copy()
        dz[J] = (Mb @ rb.ray["z"] + d * rb.ray["z0"])[J]
        res.ray = dict(rb.ray, z=dz)
    if rb.status == "solution" and rb.basis is not None:
        mask = np.zeros(N, dtype=bool)
        mask[rb.basis] = True
        mask[J] = ~mask[J]
        res.basis = np.flatnonzero(mask)
        zp = solve_principal(M, q, res.basis)
        if zp is not None:
            wp = M @ zp + q
            if lcp_residual(zp, wp) <= lcp_residual(res.z, res.w):
                res.z, res.w = zp, wp
    return res


def _name(var: tuple[str, int], N: int) -> str:
    kind, j = var
    if kind == "x":
        return "z0" if j == N else f"z[{j}]"
    return f"w[{j}]"


def _lexmin(
    st: _Basis, ties: list[tuple[str, int]], aZ: np.ndarray, aW: np.ndarray, tol: float
) -> tuple[str, int]:
    """Lexicographic minimum of the rows ``(B^{-1})_i / a_i`` over the tied basic variables.

    Entries within ``tol * max(1, |min|)`` of a column's minimum count as equal.
    """
    rows = st.binv_rows(ties)
    piv = np.array([aZ[i] if kind == "x" else aW[i] for kind, i in ties])
    L = rows / piv[:, None]
    idx = np.arange(len(ties))
    for c in np.flatnonzero(np.any(L != 0.0, axis=0)):
        col = L[idx, c]
        m = float(col.min())
        idx = idx[col <= m + tol * max(1.0, abs(m))]
        if idx.size == 1:
            break
    if idx.size > 1:  # numerically inseparable: the most stable pivot
        idx = idx[[int(np.argmax(piv[idx]))]]
    return ties[int(idx[0])]


# ------------------------------------------------------------------------------ copositivity
def copositive_plus(M: np.ndarray) -> bool | None:
    r"""True when a cheap sufficient test shows :math:`M` is copositive-plus, else None (unknown).

    Tests: the symmetric part :math:`(M + M^\top)/2` is positive semidefinite (smallest
    eigenvalue :math:`\ge -10^{-12}\,\|M\|`), or :math:`M \ge 0` elementwise with a positive
    diagonal (then strictly copositive).
    """
    if M.size == 0:
        return True
    if (M >= 0.0).all() and (np.diag(M) > 0.0).all():
        return True
    S = 0.5 * (M + M.T)
    scale = max(1.0, float(np.abs(M).max()))
    if float(np.linalg.eigvalsh(S).min()) >= -1e-12 * scale:
        return True
    return None


def farkas_check(M: np.ndarray, q: np.ndarray, y: np.ndarray) -> dict[str, Any] | None:
    r"""Verify :math:`y \ge 0`, :math:`M^\top y \le 0`, :math:`q^\top y < 0` (to rounding).

    Then no :math:`z \ge 0` has :math:`Mz + q \ge 0`, since
    :math:`0 \le y^\top(Mz + q) = (M^\top y)^\top z + q^\top y < 0`. Returns the measured
    quantities (for ``y`` scaled to :math:`\|y\|_\infty = 1`) when the check passes, else None.
    """
    ymax = float(np.abs(y).max(initial=0.0))
    if ymax == 0.0 or y.min() < -1e-9 * ymax:
        return None
    yn = np.maximum(y, 0.0) / ymax
    Mty = M.T @ yn
    qy = float(q @ yn)
    tol = 1e-9 * max(1.0, float(np.abs(M).max(initial=0.0)))
    if float(Mty.max(initial=0.0)) <= tol and qy < -1e-9 * max(1.0, float(np.abs(q).max(initial=0.0))):
        return {"y": yn, "max_MTy": float(Mty.max(initial=0.0)), "q_dot_y": qy}
    return None
