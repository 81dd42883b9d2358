r"""The inner solver of affine subproblems: one LP by HiGHS instead of an IPOPT run.

When the objective and the rows of an :class:`~mcpkit.homotopy.reformulation.NLPTemplate` are
affine in :math:`x` for every parameter value :math:`q`
(:meth:`~mcpkit.homotopy.reformulation.NLPTemplate.is_affine`), the subproblem

.. math::

    \min_x\ c(q)^\top x + c_0(q) \quad\text{s.t.}\quad g_l \le A(q)\,x + b(q) \le g_u,\quad
    x_l \le x \le x_u

is a linear program, with :math:`c = \nabla_x f`, :math:`A = \partial g / \partial x` (sparse)
and :math:`b = g(0; q)`, :math:`c_0 = f(0; q)`, all evaluated by CasADi from the template's
own graph (exact: the Jacobian of an affine map does not depend on the point). :class:`LinearInner`
solves it with :func:`scipy.optimize.linprog` (HiGHS). That is what the homotopy's active-set
polish and the refinement's branch problems are on an LPEC (an MPCC whose :math:`f, g, G, H`
are all affine, e.g. MPECLib's ``frictionalblock`` family): with the branch of every pair
fixed, an LP. HiGHS answers it exactly, from any start, and *proves* a wrong branch
infeasible in a fraction of a second, where IPOPT spends seconds before it reports local
infeasibility (on ``frictionalblock_6``, 2855 variables: 0.1–0.2 s against 3–7 s per polish).

Results use the vocabulary of the IPOPT inner solvers, so the homotopy and the refinement
treat both alike: the status is one of :data:`LP_STATUS` (mapped to a
:class:`~mcpkit.solving.result.Termination` by :func:`~mcpkit.homotopy.inner.ipopt_termination`), and
the multipliers follow CasADi's convention (:math:`\nabla f + A^\top\lambda_g + \lambda_x = 0`,
:math:`\lambda_g \ge 0` on an active upper bound) from HiGHS's marginals. ``iterations`` counts
HiGHS's simplex or IPM iterations. The LP's primal and dual feasibility tolerances are
:math:`\min(10^{-7}, \mathtt{tol})` (HiGHS's default and the inner tolerance); the outer loop
judges the point on the original problem in any case.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import casadi as ca
import numpy as np
import scipy.sparse as sps

from mcpkit.engines import highs
from mcpkit.homotopy.inner import InnerCall, InnerResult, InnerSolver
from mcpkit.homotopy.reformulation import NLPTemplate

__all__ = ["HIGHS_MIN_TOL", "LP_STATUS", "LinearInner", "LinearRows"]

#: The smallest primal/dual feasibility tolerance HiGHS accepts (a smaller one is ignored).
HIGHS_MIN_TOL = 1e-10

#: Status names of :class:`LinearInner` by :func:`scipy.optimize.linprog` status code.
LP_STATUS: dict[int, str] = {
    0: "LP_Optimal",
    1: "LP_Limit_Reached",
    2: "LP_Infeasible",
    3: "LP_Unbounded",
    4: "LP_Numerical_Difficulties",
}


@dataclass(frozen=True)
class LinearRows:
    r"""Two-sided rows :math:`g_l \le Ax + b \le g_u` split for :func:`scipy.optimize.linprog`."""

    A_ub: sps.csr_matrix
    b_ub: np.ndarray
    A_eq: sps.csr_matrix
    b_eq: np.ndarray
    eq: np.ndarray
    """Rows with :math:`g_l = g_u` (in ``A_eq``)."""
    up: np.ndarray
    """Other rows with a finite upper bound (first in ``A_ub``)."""
    dn: np.ndarray
    """Other rows with a finite lower bound (negated, after them in ``A_ub``)."""


class LinearInner(InnerSolver):
    """HiGHS on an affine :class:`~mcpkit.homotopy.reformulation.NLPTemplate` (module docstring).

    Parameters
    ----------
    nlp
        The template; :meth:`~mcpkit.homotopy.reformulation.NLPTemplate.is_affine` must hold
        (else :class:`ValueError`).
    tol
        The inner tolerance: HiGHS's feasibility tolerances are ``min(1e-7, tol)``, at least
        :data:`HIGHS_MIN_TOL`.
    """

    errors = (RuntimeError, ValueError)

    def __init__(self, nlp: NLPTemplate, tol: float) -> None:
        if not nlp.is_affine():
            raise ValueError("LinearInner needs an objective and rows affine in x")
        x, q = nlp.x, nlp.p
        self.nx, self.ng = int(x.numel()), int(nlp.g.numel())
        # at x = 0 the rows and the objective are b(q) and c0(q); the Jacobians do not depend on x
        self._coef = ca.Function(
            "lp_coefficients", [x, q], [ca.jacobian(nlp.f, x), nlp.f, ca.jacobian(nlp.g, x), nlp.g]
        )
        # HiGHS accepts feasibility tolerances of at least 1e-10 and silently keeps its default
        # (1e-7) for smaller values, with only an OptimizeWarning: clamp to [1e-10, 1e-7]
        self._tol = min(1e-7, max(HIGHS_MIN_TOL, float(tol)))

    @property
    def tol(self) -> float:
        """HiGHS's primal and dual feasibility tolerance of these LPs."""
        return self._tol

    def coefficients(self, q: np.ndarray) -> tuple[np.ndarray, float, sps.csr_matrix, np.ndarray]:
        r"""``(c, c0, A, b)`` at parameters ``q``: :math:`f = c^\top x + c_0`, :math:`g = Ax + b`.

        Raises :class:`ValueError` when a coefficient is not finite.
        """
        c, f0, A, b = self._coef(np.zeros(self.nx), q)
        cv = np.asarray(ca.densify(c), dtype=float).reshape(-1)
        As = sps.csr_matrix(A.sparse())
        bv = np.asarray(b, dtype=float).reshape(-1)
        if not (np.isfinite(cv).all() and np.isfinite(bv).all() and np.isfinite(As.data).all()):
            raise ValueError("LP coefficients are not finite at these parameters")
        return cv, float(f0), As, bv

    def rows(self, A: sps.csr_matrix, b: np.ndarray, lbg: np.ndarray, ubg: np.ndarray) -> LinearRows:
        r""":math:`g_l \le Ax + b \le g_u` as ``A_ub x <= b_ub`` and ``A_eq x = b_eq`` (rows with
        both bounds infinite are left out)."""
        lo, hi = np.asarray(lbg, dtype=float), np.asarray(ubg, dtype=float)
        eq = lo == hi
        up = ~eq & np.isfinite(hi)
        dn = ~eq & np.isfinite(lo)
        return LinearRows(
            A_ub=sps.vstack([A[up], -A[dn]], format="csr"),
            b_ub=np.concatenate([hi[up] - b[up], b[dn] - lo[dn]]),
            A_eq=sps.csr_matrix(A[eq]),
            b_eq=lo[eq] - b[eq],
            eq=eq,
            up=up,
            dn=dn,
        )

    def linprog(
        self, c: np.ndarray, rows: LinearRows, lbx: np.ndarray, ubx: np.ndarray, deadline: float | None
    ) -> Any:
        r""":func:`scipy.optimize.linprog` (HiGHS) of :math:`\min c^\top x` over ``rows`` and the bounds."""
        options: dict[str, Any] = {
            "primal_feasibility_tolerance": self._tol,
            "dual_feasibility_tolerance": self._tol,
        }
        if deadline is not None:
            options["time_limit"] = max(deadline - time.perf_counter(), 1e-3)
        some_ub, some_eq = rows.A_ub.shape[0] > 0, rows.A_eq.shape[0] > 0
        return highs.linprog(
            c,
            A_ub=rows.A_ub if some_ub else None,
            b_ub=rows.b_ub if some_ub else None,
            A_eq=rows.A_eq if some_eq else None,
            b_eq=rows.b_eq if some_eq else None,
            bounds=np.column_stack([lbx, ubx]),
            method="highs",
            options=options,
        )

    def _run(self, call: InnerCall) -> InnerResult:
        c, f0, A, b = self.coefficients(call.q)
        rows = self.rows(A, b, call.lbg, call.ubg)
        res = self.linprog(c, rows, call.lbx, call.ubx, call.deadline)
        status = LP_STATUS.get(int(res.status), "LP_Numerical_Difficulties")
        iterations = int(getattr(res, "nit", 0) or 0)
        wall = time.perf_counter() - call.t0
        if res.x is None:
            return InnerResult(
                x=np.full(self.nx, np.nan), lam_x=np.zeros(self.nx), lam_g=np.zeros(self.ng),
                f=float("nan"), status=status, iterations=iterations, wall_time_s=wall,
            )  # fmt: skip
        lam_g = np.zeros(self.ng)
        if rows.A_ub.shape[0]:
            m = np.asarray(res.ineqlin.marginals, dtype=float)  # d(obj)/d(b_ub) <= 0
            n_up = int(rows.up.sum())
            lam_g[rows.up] = -m[:n_up]
            lam_g[rows.dn] += m[n_up:]
        if rows.A_eq.shape[0]:
            lam_g[rows.eq] = -np.asarray(res.eqlin.marginals, dtype=float)
        lam_x = -(np.asarray(res.lower.marginals, dtype=float) + np.asarray(res.upper.marginals, dtype=float))
        x = np.asarray(res.x, dtype=float)
        return InnerResult(
            x=x, lam_x=lam_x, lam_g=lam_g, f=float(c @ x + f0), status=status, iterations=iterations,
            wall_time_s=wall,
        )  # fmt: skip
