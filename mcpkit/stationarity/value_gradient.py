r"""The gradient of an MPCC's optimal value by its parameters, from the multipliers.

At a local solution :math:`x^*(p)` of :math:`\min_x f(x; p)` s.t. :math:`l_g \le g(x; p) \le u_g`,
:math:`l_x \le x \le u_x`, :math:`0 \le G(x; p) \perp H(x; p) \ge 0` (the standard form; a
general MPCC is lowered by :class:`~mcpkit.lowering.standard.ToStandardMPCC` first) the
MPCC-Lagrangian is

.. math::

    \mathcal L(x, p) = f + \lambda_g^\top g + \lambda_x^\top x - \nu^\top G - \xi^\top H,

with :math:`\nabla_x \mathcal L = 0` (Scheel & Scholtes 2000). When the point is
**strongly stationary** and **MPCC-LICQ** holds (the gradients of the active constraints, with
both :math:`\nabla G_j` and :math:`\nabla H_j` of every biactive pair, are linearly
independent), these multipliers are unique, and the optimal value :math:`f^*(p) = f(x^*(p); p)`
of a solution that moves continuously with :math:`p` has the envelope-theorem derivative

.. math::

    \frac{df^*}{dp} = \nabla_p \mathcal L
    = \nabla_p f + J_{g,p}^\top \lambda_g - J_{G,p}^\top \nu - J_{H,p}^\top \xi

(the bounds :math:`l_g, u_g, l_x, u_x` do not depend on :math:`p`). :func:`value_gradient`
computes the multipliers itself from the active set at the point (least squares on the active
gradients), checks MPCC-LICQ (smallest singular value), the stationarity residual and the
S-signs (:math:`\nu_j, \xi_j \ge 0` on biactive pairs, :math:`\lambda` signs at the bounds),
and raises :class:`~mcpkit.errors.NotDifferentiableError` saying which failed. That the local
solution persists (second-order sufficiency on the branch) is not checked here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import casadi as ca
import numpy as np

from mcpkit.errors import MCPInputError, NotDifferentiableError, SolveFailedError
from mcpkit.lowering.standard import ToStandardMPCC
from mcpkit.problems.hooks import Hook, provide
from mcpkit.problems.mpcc import MPCC
from mcpkit.problems.names import casadi_name

__all__ = ["ActiveMultipliers", "active_multipliers", "value_gradient"]

#: Smallest singular value of the active gradients, relative to the largest, for MPCC-LICQ.
LICQ_RTOL = 1e-9


def _functions(mpcc: MPCC) -> ca.Function:
    """Cached ``(x, p) -> (f, g, G, H, grad_x f, J_g, J_G, J_H, grad_p f, J_{g,p}, J_{G,p}, J_{H,p})``."""
    key = "value_gradient_derivatives"
    if key not in mpcc._funs:
        outs = [mpcc.f, mpcc.g, mpcc.G, mpcc.H]
        outs += [ca.jacobian(e, mpcc.x) for e in outs] + [ca.jacobian(e, mpcc.p) for e in outs]
        mpcc._funs[key] = ca.Function(casadi_name(f"{mpcc.name}_value_gradient"), [mpcc.x, mpcc.p], outs)
    return mpcc._funs[key]


@dataclass
class ActiveMultipliers:
    r"""The active set and the unique MPCC multipliers at a strongly stationary point (standard form).

    Built by :func:`active_multipliers`; :func:`value_gradient` and
    :func:`mcpkit.stationarity.mpcc_sensitivity.mpcc_sensitivity` share it.
    """

    mpcc: MPCC
    """The standard-form MPCC the point lives in (the problem itself when it was standard)."""
    x: np.ndarray
    """The point in ``mpcc``'s variables (slacks appended when the problem was lowered)."""
    p: np.ndarray
    values: list[np.ndarray]
    """The outputs of ``_functions(mpcc)`` at the point (values, x-Jacobians, p-Jacobians)."""
    ig: np.ndarray
    """Active rows of :math:`g` (at either bound)."""
    ix: np.ndarray
    """Active variable bounds."""
    iG: np.ndarray
    """Pairs with :math:`G_j` active."""
    iH: np.ndarray
    """Pairs with :math:`H_j` active."""
    A: np.ndarray
    r"""Active gradients as rows, with their signs in :math:`\mathcal L`.

    :math:`\nabla g_i`, :math:`e_i`, :math:`-\nabla G_j`, :math:`-\nabla H_j`."""
    names: list[str]
    """One name per row of :attr:`A`."""
    mult: np.ndarray
    r"""The multipliers of the rows of :attr:`A` (:math:`\nabla f + A^\top \text{mult} = 0`)."""
    lam_g: np.ndarray
    lam_x: np.ndarray
    nu: np.ndarray
    xi: np.ndarray
    smallest_singular_value: float
    """Of :attr:`A` (``inf`` when nothing is active)."""
    threshold: float
    r"""``tol * max(1, |grad f|_inf)``: the stationarity residual bound and sign slack."""
    inequality: np.ndarray
    """Per row of :attr:`A`: an inequality (a bound of a non-fixed range), not an equality."""


def active_multipliers(mpcc: MPCC, x: np.ndarray, p: np.ndarray, tol: float) -> ActiveMultipliers:
    r"""Active set and unique multipliers at ``x``; raises unless MPCC-LICQ and strong stationarity hold.

    See :func:`value_gradient` for the checks and the errors.
    """
    n_orig = int(mpcc.x.numel())
    if not mpcc.is_standard():
        std = ToStandardMPCC().apply(mpcc)[0]
        x = ToStandardMPCC.lift(mpcc, np.asarray(x, dtype=float), p)
        mpcc = std
    x = np.asarray(x, dtype=float).reshape(-1)
    p = np.asarray(p, dtype=float).reshape(-1)
    nx = x.size
    out = [np.asarray(ca.DM(o).full(), dtype=float) for o in _functions(mpcc)(x, p)]
    # the lowering's slacks (x[n_orig:]) are each one side of a pair, so their bounds w >= 0 are
    # implied by the pairs and left out (as rows they would duplicate the pair rows and break LICQ)
    own_bound = np.arange(nx) < n_orig
    g, G, H = (o.reshape(-1) for o in out[1:4])
    df = out[4].reshape(nx)
    Jg, JG, JH = (o.reshape(-1, nx) for o in out[5:8])
    g_hi = np.isfinite(mpcc.ubg) & (g >= mpcc.ubg - tol)
    g_lo = np.isfinite(mpcc.lbg) & (g <= mpcc.lbg + tol)
    x_hi = own_bound & np.isfinite(mpcc.ubx) & (x >= mpcc.ubx - tol)
    x_lo = own_bound & np.isfinite(mpcc.lbx) & (x <= mpcc.lbx + tol)
    aG, aH = G <= tol, H <= tol
    ig, ix = np.flatnonzero(g_hi | g_lo), np.flatnonzero(x_hi | x_lo)
    iG, iH = np.flatnonzero(aG), np.flatnonzero(aH)
    # rows of the active gradients, each with its multiplier's sign in L: +g, +x, -G, -H
    A = np.vstack([Jg[ig], np.eye(nx)[ix], -JG[iG], -JH[iH]])
    names = (
        [f"g[{i}]" for i in ig] + [f"x[{i}]" for i in ix] + [f"G[{j}]" for j in iG] + [f"H[{j}]" for j in iH]
    )
    smin = np.inf
    if A.shape[0]:
        sv = np.linalg.svd(A, compute_uv=False)
        smin = float(sv.min()) if A.shape[0] <= nx else 0.0
        if A.shape[0] > nx or sv.min() <= LICQ_RTOL * max(float(sv.max()), 1e-300):
            raise NotDifferentiableError(
                f"MPCC-LICQ fails at the point: the {A.shape[0]} active constraint gradients "
                f"({', '.join(names[:12])}{', ...' if len(names) > 12 else ''}) are linearly dependent "
                f"(smallest singular value {smin:.2e} of {nx} variables), so "
                "the multipliers are not unique and the solution need not be differentiable",
                pairs=[n for n in names if n[0] in "GH"],
            )
        mult, *_ = np.linalg.lstsq(A.T, -df, rcond=None)
    else:
        mult = np.zeros(0)
    resid = float(np.abs(df + A.T @ mult).max(initial=0.0))
    threshold = tol * max(1.0, float(np.abs(df).max(initial=0.0)))
    if not resid <= threshold:
        raise NotDifferentiableError(
            f"the point is not stationary: the MPCC-Lagrangian gradient is {resid:.2e} at the (unique) "
            f"multipliers, above {threshold:.1e}; a strongly stationary solution is needed"
        )
    n1, n2, n3 = ig.size, ig.size + ix.size, ig.size + ix.size + iG.size
    lam_g = np.zeros(g.size)
    lam_g[ig] = mult[:n1]
    lam_x = mult[n1:n2]
    nu = np.zeros(G.size)
    nu[iG] = mult[n2:n3]
    xi = np.zeros(H.size)
    xi[iH] = mult[n3:]
    slack = threshold
    wrong = [
        f"g[{i}]"
        for i in np.flatnonzero((g_hi & ~g_lo & (lam_g < -slack)) | (g_lo & ~g_hi & (lam_g > slack)))
    ]
    xs = np.zeros(nx)
    xs[ix] = lam_x
    wrong += [
        f"x[{i}]" for i in np.flatnonzero((x_hi & ~x_lo & (xs < -slack)) | (x_lo & ~x_hi & (xs > slack)))
    ]
    bi = aG & aH
    wrong += [f"pair {j} (biactive)" for j in np.flatnonzero(bi & ((nu < -slack) | (xi < -slack)))]
    if wrong:
        raise NotDifferentiableError(
            f"the point is not strongly stationary: multipliers of the wrong sign at {', '.join(wrong[:10])}",
            pairs=[w for w in wrong if w.startswith("pair")],
        )
    inequality = np.concatenate(
        [(g_hi ^ g_lo)[ig], (x_hi ^ x_lo)[ix], np.zeros(iG.size + iH.size, dtype=bool)]
    )
    return ActiveMultipliers(
        mpcc=mpcc, x=x, p=p, values=out, ig=ig, ix=ix, iG=iG, iH=iH, A=A, names=names, mult=mult,
        lam_g=lam_g, lam_x=lam_x, nu=nu, xi=xi, smallest_singular_value=smin, threshold=threshold,
        inequality=inequality,
    )  # fmt: skip


def value_gradient(mpcc: MPCC, x: np.ndarray, p: np.ndarray, tol: float) -> np.ndarray:
    r""":math:`df^*/dp = \nabla_p \mathcal L(x, p)` at a solution ``x`` of ``mpcc`` at ``p``.

    See the module docstring for the conditions checked.

    ``tol`` is the activity and residual tolerance (a constraint within ``tol`` of its bound is
    active; the stationarity residual must be at most ``tol * max(1, |grad f|_inf)``).

    Raises
    ------
    NotDifferentiableError
        MPCC-LICQ fails (multipliers not unique), the point is not stationary, or it is not
        strongly stationary (a biactive pair's multiplier is negative); the message says which.
    """
    am = active_multipliers(mpcc, x, p, tol)
    npar = am.p.size
    dfp = am.values[8].reshape(npar)
    Jgp, JGp, JHp = (o.reshape(-1, npar) for o in am.values[9:12])
    return dfp + Jgp.T @ am.lam_g - JGp.T @ am.nu - JHp.T @ am.xi


def result_value_gradient(result: Any, tol: float | None = None) -> np.ndarray:
    """:meth:`MPCCResult.value_gradient <mcpkit.solving.result.MPCCResult.value_gradient>` (see there)."""
    from mcpkit.stationarity.sensitivity import check_tol

    problem, p = getattr(result, "problem", None), getattr(result, "p", None)
    if not isinstance(problem, MPCC) or p is None:
        raise MCPInputError(
            "this result does not know its MPCC and parameter values (results of mcpkit.MPCCSolver "
            "and mcpkit.solve on an MPCC do); value_gradient() needs them"
        )
    if int(problem.p.numel()) == 0:
        raise MCPInputError(f"MPCC {problem.name!r} has no parameters, so there is no df*/dp")
    if not getattr(result, "solved", False):
        raise SolveFailedError(
            f"value_gradient() needs a solved result: {getattr(result, 'message', '')}", result
        )
    t = check_tol(tol, result.tol)
    return value_gradient(problem, np.asarray(result.x, dtype=float), np.asarray(p), t)


provide(Hook.MPCC_VALUE_GRADIENT, result_value_gradient)
