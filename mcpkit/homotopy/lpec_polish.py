r"""The polish of an LPEC when the branch read off the point is wrong: identify, then decide by MILP.

For an MPCC whose :math:`f, g, G, H` are all affine in :math:`x` (an LPEC), the homotopy's polish
(:class:`~mcpkit.homotopy.loop.Polisher`) fixes each pair on the side that is smaller at the
homotopy point :math:`\hat x`, :math:`G_j = 0` where :math:`G_j \le H_j`, else :math:`H_j = 0`,
and solves that branch as an LP (:mod:`mcpkit.homotopy.lp_inner`). One misread pair makes the
branch infeasible, and on degenerate problems the smoothed homotopies leave many pairs with
both sides small: on MPECLib's ``frictionalblock_6`` (1380 pairs, nearly as many equations as
variables) the branch LP is infeasible at every homotopy point down to a residual of 1e-6.
:func:`identify_and_solve` then decides the doubtful pairs instead of guessing them. With
:math:`r = \max_j \min(G_j, H_j)` at :math:`\hat x` and :math:`\theta` from
:data:`CONFIDENCE`:

1. **Fix what is clear.** Pairs with :math:`\min(G_j, H_j) \le \theta r` are fixed on their
   smaller side; the others are *free* (only :math:`G_j, H_j \ge 0`).
2. **Let the LP fix more.** Solve the LP over the fixed pairs; every free pair that the LP's
   solution puts at zero on one side (within the LP tolerance) is fixed there; repeat while
   pairs get fixed. No free pair left in violation: that LP point is the answer.
3. **Decide the rest by MILP.** When at most :data:`MAX_MILP_PAIRS` free pairs still violate
   complementarity, each gets a binary :math:`z_j` and

   .. math::

       0 \le G_j(x) \le M^G z_j,\qquad 0 \le H_j(x) \le M^H (1 - z_j),

   with :math:`M^G = \max \sum_{j \in D} G_j(x)` and :math:`M^H = \max \sum_{j \in D} H_j(x)`
   over the LP's feasible set (:math:`D` the doubtful pairs; two LPs). Every :math:`G_j, H_j`
   is nonnegative there, so each is bounded by its sum: the bounds are derived, not guessed,
   and cut off no point of the LPEC piece (an unbounded LP ends the attempt; one LP per pair
   would give tighter constants at :math:`2|D|` LPs' cost).
   :func:`scipy.optimize.milp` (HiGHS) minimises :math:`f` over all their
   branches at once; the branch it picks is solved once more as an LP, for an exact vertex and
   its multipliers. When HiGHS cannot solve that LP (too degenerate for its simplex), the
   MILP's own point is returned, with status ``LP_MILP_Point``.

The result is a point of the LPEC (both sides complementary to the LP tolerance), optimal over
the branches step 3 could choose among; whether it is B-stationary is the refinement's
business. On ``frictionalblock_6`` from the ``fb`` homotopy point with residual 9.2e-6: the
plain branch LP infeasible, then the clear pairs at :math:`\theta = 10^{-2}`, four LP rounds,
21 pairs by MILP and a last LP: an exact point in 2.4 s. From residuals of 1e-4 and above the
clear pairs themselves were wrong (the first LP of each :math:`\theta` is infeasible, and the
polish reports the plain branch's infeasibility).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import casadi as ca
import numpy as np
import scipy.sparse as sps
from scipy.optimize import Bounds, LinearConstraint

from mcpkit.engines import highs
from mcpkit.homotopy.inner import InnerResult
from mcpkit.homotopy.lp_inner import LinearInner

__all__ = ["CONFIDENCE", "MAX_MILP_PAIRS", "AffinePairs", "identify_and_solve", "pair_functions"]

#: Fractions :math:`\theta` of the residual below which a pair counts as clear (tried in order).
CONFIDENCE = (0.1, 0.01)
#: At most this many doubtful pairs are decided by the MILP (one binary variable each).
MAX_MILP_PAIRS = 40


@dataclass(frozen=True)
class AffinePairs:
    r"""The affine maps :math:`G(x) = J_G x + G_0`, :math:`H(x) = J_H x + H_0` at parameters ``p``."""

    JG: sps.csr_matrix
    G0: np.ndarray
    JH: sps.csr_matrix
    H0: np.ndarray

    @classmethod
    def build(cls, fun: ca.Function, nx: int, p: np.ndarray) -> AffinePairs:
        """From ``fun(x, p) -> (dG/dx, G, dH/dx, H)`` evaluated at ``x = 0``."""
        JG, G0, JH, H0 = fun(np.zeros(nx), p)
        return cls(
            sps.csr_matrix(JG.sparse()),
            np.asarray(G0, dtype=float).reshape(-1),
            sps.csr_matrix(JH.sparse()),
            np.asarray(H0, dtype=float).reshape(-1),
        )

    def values(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:math:`(G(x), H(x))`."""
        return self.JG @ x + self.G0, self.JH @ x + self.H0


def pair_functions(x: ca.SX | ca.MX, p: ca.SX | ca.MX, G: ca.SX | ca.MX, H: ca.SX | ca.MX) -> ca.Function:
    """``(x, p) -> (dG/dx, G, dH/dx, H)`` for :meth:`AffinePairs.build`."""
    return ca.Function("lpec_pairs", [x, p], [ca.jacobian(G, x), G, ca.jacobian(H, x), H])


def identify_and_solve(
    lp: LinearInner,
    pairs: AffinePairs,
    x_hat: np.ndarray,
    p: np.ndarray,
    lbx: np.ndarray,
    ubx: np.ndarray,
    lbg: np.ndarray,
    ubg: np.ndarray,
    equality: bool,
    deadline: float | None,
) -> InnerResult | None:
    """The procedure of the module docstring on the polish LP ``lp``; ``None`` when it finds no point.

    ``lp`` is the polish template's LP with parameters ``(p, mask)`` and the pair rows
    :math:`\\text{mask}_j G_j + (1 - \\text{mask}_j) H_j` last (bounds ``[0, 0]``, or
    ``[-inf, 0]`` when ``equality`` is false); ``lbg``, ``ubg`` are its row bounds.
    """
    t0 = time.perf_counter()
    G, H = pairs.values(x_hat)
    small = np.minimum(G, H)
    r = float(small.max(initial=0.0))
    if not r > 0:
        return None
    zero = lp.tol  # the LP's own feasibility tolerance
    iterations = 0
    for theta in CONFIDENCE:
        if deadline is not None and time.perf_counter() > deadline:
            return None
        fix_g = (small <= theta * r) & (G <= H)
        fix_h = (small <= theta * r) & ~fix_g
        while True:
            res, rows_lb, rows_ub = _branch_lp(lp, p, fix_g, fix_h, lbx, ubx, lbg, ubg, equality, deadline)
            iterations += res.iterations
            if not np.isfinite(res.x).all():
                break  # the fixed pairs themselves are wrong: trust fewer of them
            Gk, Hk = pairs.values(res.x)
            free = ~(fix_g | fix_h)
            new_g = free & (Gk <= zero) & (Gk <= Hk)
            new_h = free & (Hk <= zero) & ~new_g
            doubtful = free & (np.minimum(Gk, Hk) > zero)
            if not doubtful.any():
                return _done(res, iterations, t0)
            if not (new_g.any() or new_h.any()):
                out = _milp(lp, pairs, p, fix_g, doubtful, lbx, ubx, rows_lb, rows_ub, deadline)
                if out is None:
                    break
                z_g, its, x_milp = out
                iterations += its
                fix_g, fix_h = fix_g | (doubtful & z_g), fix_h | (doubtful & ~z_g)
                res, _, _ = _branch_lp(lp, p, fix_g, fix_h, lbx, ubx, lbg, ubg, equality, deadline)
                iterations += res.iterations
                if np.isfinite(res.x).all():
                    return _done(res, iterations, t0)
                # the LP of the chosen branch can be too degenerate for HiGHS's simplex: the
                # MILP's own point lies on that branch to the MILP's feasibility tolerance
                c, f0, _, _ = lp.coefficients(np.concatenate([p, fix_g.astype(float)]))
                return InnerResult(
                    x=x_milp, lam_x=np.zeros(lp.nx), lam_g=np.zeros(lp.ng), f=float(c @ x_milp + f0),
                    status="LP_MILP_Point", iterations=iterations, wall_time_s=time.perf_counter() - t0,
                )  # fmt: skip
            fix_g, fix_h = fix_g | new_g, fix_h | new_h
    return None


def _done(res: InnerResult, iterations: int, t0: float) -> InnerResult:
    return InnerResult(
        x=res.x, lam_x=res.lam_x, lam_g=res.lam_g, f=res.f, status=res.status, iterations=iterations,
        wall_time_s=time.perf_counter() - t0,
    )  # fmt: skip


def _branch_lp(
    lp: LinearInner,
    p: np.ndarray,
    fix_g: np.ndarray,
    fix_h: np.ndarray,
    lbx: np.ndarray,
    ubx: np.ndarray,
    lbg: np.ndarray,
    ubg: np.ndarray,
    equality: bool,
    deadline: float | None,
) -> tuple[InnerResult, np.ndarray, np.ndarray]:
    """The polish LP with ``fix_g`` pairs at :math:`G_j = 0`, ``fix_h`` at :math:`H_j = 0`, the rest free."""
    nc = fix_g.size
    lo, hi = np.array(lbg, dtype=float), np.array(ubg, dtype=float)
    fixed = fix_g | fix_h
    lo[-nc:] = np.where(fixed, 0.0 if equality else -np.inf, -np.inf)
    hi[-nc:] = np.where(fixed, 0.0, np.inf)
    mask = fix_g.astype(float)
    res = lp.solve(np.zeros(lp.nx), np.concatenate([p, mask]), lbx, ubx, lo, hi, deadline=deadline)
    return res, lo, hi


def _milp(
    lp: LinearInner,
    pairs: AffinePairs,
    p: np.ndarray,
    fix_g: np.ndarray,
    doubtful: np.ndarray,
    lbx: np.ndarray,
    ubx: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    deadline: float | None,
) -> tuple[np.ndarray, int, np.ndarray] | None:
    """Step 3: ``(z_G over all pairs, LP iterations, the MILP's x)``; :math:`z_j` true for :math:`G_j = 0`."""
    idx = np.flatnonzero(doubtful)
    k = idx.size
    if k > MAX_MILP_PAIRS:
        return None
    c, _, A, b = lp.coefficients(np.concatenate([p, fix_g.astype(float)]))
    rows = lp.rows(A, b, lo, hi)
    JG, JH = pairs.JG[idx], pairs.JH[idx]
    iterations = 0
    bounds: list[np.ndarray] = []
    for J, v0 in ((JG, pairs.G0[idx]), (JH, pairs.H0[idx])):
        # every G_j >= 0 on the LP's feasible set, so max sum_j G_j bounds each G_j: one LP
        res = lp.linprog(-np.asarray(J.sum(axis=0)).reshape(-1), rows, lbx, ubx, deadline)
        iterations += int(getattr(res, "nit", 0) or 0)
        if res.status != 0:
            return None  # unbounded (or out of time): no exact big-M
        bounds.append(np.full(k, max(-float(res.fun) + float(v0.sum()), 0.0)))
    MG, MH = bounds
    n = lp.nx
    pad_ub = sps.csr_matrix((rows.A_ub.shape[0], k))
    pad_eq = sps.csr_matrix((rows.A_eq.shape[0], k))
    blocks = [
        sps.hstack([rows.A_eq, pad_eq]),
        sps.hstack([rows.A_ub, pad_ub]),
        sps.hstack([JG, -sps.diags(MG)]),  # G_j - M^G z_j <= -G0_j
        sps.hstack([JH, sps.diags(MH)]),  # H_j + M^H z_j <= M^H - H0_j
    ]
    A_all = sps.vstack(blocks, format="csr")
    lower = np.concatenate([rows.b_eq, np.full(rows.A_ub.shape[0] + 2 * k, -np.inf)])
    upper = np.concatenate([rows.b_eq, rows.b_ub, -pairs.G0[idx], MH - pairs.H0[idx]])
    options: dict[str, float] = {}
    if deadline is not None:
        options["time_limit"] = max(deadline - time.perf_counter(), 1e-3)
    res = highs.milp(
        np.concatenate([c, np.zeros(k)]),
        constraints=LinearConstraint(A_all, lower, upper),
        integrality=np.concatenate([np.zeros(n), np.ones(k)]),
        bounds=Bounds(np.concatenate([lbx, np.zeros(k)]), np.concatenate([ubx, np.ones(k)])),
        options=options,
    )
    if res.x is None:
        return None
    z_g = np.zeros(doubtful.size, dtype=bool)
    z_g[idx] = res.x[n:] < 0.5  # z_j = 0 forces G_j = 0
    return z_g, iterations, np.asarray(res.x[:n], dtype=float)
