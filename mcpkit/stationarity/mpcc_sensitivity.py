r"""Sensitivity :math:`dx^*/dp` of an MPCC solution at a strongly stable point.

At a strongly stationary local solution :math:`x^*(p)` of the standard-form MPCC (see
:mod:`mcpkit.stationarity.value_gradient` for the form, the Lagrangian
:math:`\mathcal L = f + \lambda_g^\top g + \lambda_x^\top x - \nu^\top G - \xi^\top H` and the
multipliers) without biactive pairs, every pair has one active side, and near :math:`p` the
solution is that of the **branch NLP**: the active constraints :math:`c(x; p) = 0` (active rows of
:math:`g`, active bounds, :math:`G_j = 0` or :math:`H_j = 0` of each pair's active side) as
equalities, the rest dropped. When the branch NLP is strongly stable at :math:`x^*`,

* **LICQ**: the active gradients :math:`A = \partial c/\partial x` have full row rank (smallest
  singular value above :data:`~mcpkit.stationarity.value_gradient.LICQ_RTOL` times the largest);
* **strict complementarity on the branch**: no biactive pair, and every active *inequality*
  (a bound of a non-degenerate range of :math:`g` or :math:`x`) has a nonzero multiplier;
* **second-order sufficiency**: the Hessian :math:`W = \nabla^2_{xx}\mathcal L` is positive
  definite on the null space :math:`Z` of :math:`A` (smallest eigenvalue of :math:`Z^\top W Z`
  above :data:`SOSC_RTOL` times :math:`\max(1, \|W\|)`),

the implicit function theorem applied to the KKT system
:math:`\nabla_x \mathcal L = 0,\ c = 0` gives

.. math::

    \begin{pmatrix} W & A^\top \\ A & 0 \end{pmatrix}
    \begin{pmatrix} dx/dp \\ d\mu/dp \end{pmatrix}
    = -\begin{pmatrix} \nabla^2_{xp} \mathcal L \\ \partial c/\partial p \end{pmatrix},

and the active set does not change for small :math:`dp`, so this is the derivative of the MPCC's
solution map (Fiacco 1976; Scheel & Scholtes 2000 for MPCCs). Each failed condition raises
:class:`~mcpkit.errors.NotDifferentiableError` saying which and where. A general-bounds MPCC is
lowered by :class:`~mcpkit.lowering.standard.ToStandardMPCC` first (pairs are then named by
their index in the standard form) and the slacks' rows are dropped from the answer.

References
----------
A. V. Fiacco, "Sensitivity analysis for nonlinear programming using penalty methods",
Math. Programming 10 (1976) 287-311.
H. Scheel, S. Scholtes, "Mathematical programs with complementarity constraints: stationarity,
optimality, and sensitivity", Math. Oper. Res. 25 (2000) 1-22.
"""

from __future__ import annotations

from typing import Any

import casadi as ca
import numpy as np

from mcpkit.errors import MCPInputError, NotDifferentiableError, SolveFailedError
from mcpkit.problems.hooks import Hook, provide
from mcpkit.problems.mpcc import MPCC
from mcpkit.problems.names import casadi_name
from mcpkit.stationarity.value_gradient import active_multipliers

__all__ = ["mpcc_sensitivity"]

#: Smallest eigenvalue of the reduced Hessian, relative to :math:`\max(1, \|W\|_{\max})`, for SOSC.
SOSC_RTOL = 1e-9

#: An active inequality's multiplier counts as zero below this many times the residual threshold
#: (``tol * max(1, |grad f|_inf)``), and strict complementarity then fails.
MULTIPLIER_ZERO = 10.0


def _hessians(mpcc: MPCC) -> ca.Function:
    r"""Cached ``(x, p, lam_g, nu, xi) -> (W, L_xp)``, the x-x and x-p Hessians of the Lagrangian."""
    key = "sensitivity_hessians"
    if key not in mpcc._funs:
        sym = type(mpcc.x)
        lam = sym.sym("lam_g", mpcc.g.numel())
        nu = sym.sym("nu", mpcc.G.numel())
        xi = sym.sym("xi", mpcc.H.numel())
        L = mpcc.f
        for mult, expr in ((lam, mpcc.g), (-nu, mpcc.G), (-xi, mpcc.H)):
            if expr.numel():
                L = L + ca.dot(mult, expr)
        gx = ca.gradient(L, mpcc.x)
        W = ca.jacobian(gx, mpcc.x)
        Lxp = ca.jacobian(gx, mpcc.p)
        mpcc._funs[key] = ca.Function(
            casadi_name(f"{mpcc.name}_sensitivity"), [mpcc.x, mpcc.p, lam, nu, xi], [W, Lxp]
        )
    return mpcc._funs[key]


def mpcc_sensitivity(mpcc: MPCC, x: np.ndarray, p: np.ndarray, tol: float) -> np.ndarray:
    r""":math:`dx^*/dp` (shape :math:`n_x \times n_p`) at a solution ``x`` of ``mpcc`` at ``p``.

    ``tol`` is the activity and residual tolerance, as in
    :func:`~mcpkit.stationarity.value_gradient.value_gradient`. The module docstring states the
    conditions checked.

    Raises
    ------
    NotDifferentiableError
        MPCC-LICQ fails (with the smallest singular value), the point is not strongly stationary,
        a pair is biactive or an active inequality has a zero multiplier (named), or second-order
        sufficiency fails on the branch (with the smallest eigenvalue of the reduced Hessian).
    """
    nx0 = int(mpcc.x.numel())
    am = active_multipliers(mpcc, x, p, tol)
    std, xs, pv = am.mpcc, am.x, am.p
    nx, npar = xs.size, pv.size
    G, H = am.values[2].reshape(-1), am.values[3].reshape(-1)
    bi = np.intersect1d(am.iG, am.iH)
    if bi.size:
        where = [f"pair {j} (G={G[j]:.1e}, H={H[j]:.1e})" for j in bi[:10].tolist()]
        raise NotDifferentiableError(
            f"strict complementarity fails on the branch: {bi.size} biactive pair(s) "
            f"({'; '.join(where)}{'; ...' if bi.size > 10 else ''}); the solution map has a kink there "
            "(the active side of a pair may switch), so dx/dp need not exist",
            pairs=[f"pair {j}" for j in bi.tolist()],
        )
    weak = np.flatnonzero(am.inequality & (np.abs(am.mult) <= MULTIPLIER_ZERO * am.threshold))
    if weak.size:
        where = [f"{am.names[k]} (multiplier {am.mult[k]:.1e})" for k in weak[:10].tolist()]
        raise NotDifferentiableError(
            "strict complementarity fails on the branch: active inequalities with a zero multiplier "
            f"(at most {MULTIPLIER_ZERO * am.threshold:.1e}): {', '.join(where)}"
            f"{', ...' if weak.size > 10 else ''}; the constraint may become inactive, so dx/dp need "
            "not exist"
        )
    Wv, Lv = _hessians(std)(xs, pv, am.lam_g, am.nu, am.xi)
    W = np.asarray(ca.DM(Wv).full(), dtype=float).reshape(nx, nx)
    Lxp = np.asarray(ca.DM(Lv).full(), dtype=float).reshape(nx, npar)
    A = am.A
    m = A.shape[0]
    if m:
        _, _, Vt = np.linalg.svd(A)
        Z = Vt[m:].T  # LICQ holds: rank m
    else:
        Z = np.eye(nx)
    if Z.shape[1]:
        R = Z.T @ W @ Z
        emin = float(np.linalg.eigvalsh(0.5 * (R + R.T)).min())
        scale = max(1.0, float(np.abs(W).max(initial=0.0)))
        if not emin > SOSC_RTOL * scale:
            raise NotDifferentiableError(
                "second-order sufficiency fails on the branch: the Hessian of the Lagrangian on the "
                f"null space of the {m} active gradients ({Z.shape[1]} directions) has smallest "
                f"eigenvalue {emin:.2e} (needs > {SOSC_RTOL * scale:.1e}); the solution need not be "
                "isolated or move smoothly with p"
            )
    Jgp, JGp, JHp = (o.reshape(-1, npar) for o in am.values[9:12])
    Cp = np.vstack([Jgp[am.ig], np.zeros((am.ix.size, npar)), -JGp[am.iG], -JHp[am.iH]])
    K = np.block([[W, A.T], [A, np.zeros((m, m))]])
    sol = np.linalg.solve(K, -np.vstack([Lxp, Cp]))
    return np.asarray(sol[:nx0])


def result_mpcc_sensitivity(result: Any, direction: Any = None, tol: float | None = None) -> np.ndarray:
    """:meth:`MPCCResult.sensitivity <mcpkit.solving.result.MPCCResult.sensitivity>` (see there)."""
    from mcpkit.stationarity.sensitivity import check_direction, check_tol

    problem, p = getattr(result, "problem", None), getattr(result, "p", None)
    if not isinstance(problem, MPCC) or p is None:
        raise MCPInputError(
            "this result does not know its MPCC and parameter values (results of mcpkit.MPCCSolver "
            "and mcpkit.solve on an MPCC do); sensitivity() needs them"
        )
    n_p = int(problem.p.numel())
    if n_p == 0:
        raise MCPInputError(f"MPCC {problem.name!r} has no parameters, so there is no dx*/dp")
    dp = None if direction is None else check_direction(direction, n_p)
    if not getattr(result, "solved", False):
        msg = getattr(result, "message", "")
        raise SolveFailedError(f"sensitivity() needs a solved result: {msg}", result)
    t = check_tol(tol, result.tol)
    S = mpcc_sensitivity(problem, np.asarray(result.x, dtype=float), np.asarray(p), t)
    return S if dp is None else S @ dp


provide(Hook.MPCC_SENSITIVITY, result_mpcc_sensitivity)
