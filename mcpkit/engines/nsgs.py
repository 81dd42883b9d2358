r"""Nonsmooth Gauss–Seidel (NSGS) for 3-D frictional contact, each contact's problem solved exactly.

For a local friction-contact problem (FCLIB: :math:`u = Wr + q`, Coulomb's law with
Signorini's condition per contact, friction coefficients :math:`\mu_i`), a sweep visits the
contacts in order; with the other reactions fixed, contact :math:`i` has the :math:`3\times 3`
problem

.. math::
    u_i = W_{ii} r_i + b_i,\qquad b_i = q_i + \sum_{j\ne i} W_{ij} r_j,

solved exactly (:func:`solve_one_contact`), and :math:`r_i \leftarrow \omega r_i^{new} +
(1-\omega) r_i` (over-relaxation; a convex combination stays in the cone for
:math:`\omega \le 1`, and is projected on it otherwise). This is Siconos's default solver
(``SICONOS_FRICTION_3D_NSGS``); each sweep costs about one product with :math:`W`, it does not
factorise :math:`W` (singular on piles) and it converges linearly at best, so
:func:`solve_nsgs` is a robust starting point for the superlinear
:func:`~mcpkit.engines.newton_contact.solve_alart_curnier` (a polish), not a replacement.

**One contact** (:math:`W_{ii}` positive definite): *take-off* :math:`r = 0` when
:math:`b_n \ge 0`; else *sticking* :math:`r = -W_{ii}^{-1}b` when it lies in the cone; else
*sliding*: :math:`r = r_n(1, -\mu\cos\theta, -\mu\sin\theta)` with :math:`u_n = 0` gives
:math:`r_n(\theta) = -b_n/(W_{ii}v(\theta))_n` and the tangential velocity
:math:`t(\theta) = r_n (W_{ii}v)_T + b_T` must be a positive multiple of
:math:`(\cos\theta, \sin\theta)`: a root of :math:`g(\theta) = t_1\sin\theta - t_2\cos\theta`
with :math:`r_n > 0` and :math:`t\cdot(\cos\theta,\sin\theta) \ge 0`, bracketed on a grid of
:data:`ANGLES` angles and refined by Brent's method; among several roots the one nearest the
current slip direction. With :math:`\mu = 0`, :math:`r = (\max(0, -b_n/W_{nn}), 0, 0)`.

**Verdict.** Every sweep ends with the Siconos error (:func:`~mcpkit.engines.newton_contact.siconos_error`)
at :math:`u = Wr + q` recomputed; the run stops at ``tol`` and returns the best point met.

References
----------
* M. Jean, "The non-smooth contact dynamics method", Comput. Methods Appl. Mech. Engrg. 177
  (1999) 235-257.
* V. Acary, M. Brémond, O. Huber, "On solving contact problems with Coulomb friction:
  formulations and numerical comparisons", in Advanced Topics in Nonsmooth Dynamics (2018).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sps
from scipy.optimize import brentq

from mcpkit.engines.newton_contact import contact_inputs, project_cones, siconos_error
from mcpkit.errors import MCPInputError
from mcpkit.solving.tables import compact_repr

ANGLES = 72
"""Grid of slip angles on which the sliding case of :func:`solve_one_contact` brackets its roots."""


@dataclass(frozen=True)
class NSGSResult:
    """What :func:`solve_nsgs` returns (the best point met, by Siconos error)."""

    r: np.ndarray
    """Reactions (FCLIB order, flat)."""
    u: np.ndarray
    """:math:`Wr + q` at :attr:`r`."""
    siconos_error: float
    """Siconos error at :attr:`r`."""
    solved: bool
    """``siconos_error <= tol``."""
    sweeps: int
    """Sweeps made."""
    wall_time_s: float
    message: str
    """``converged``, ``sweep limit`` or ``time limit``."""

    def __repr__(self) -> str:
        """A few lines: key fields, arrays by shape (:func:`~mcpkit.solving.tables.compact_repr`)."""
        return compact_repr(self, ("solved", "siconos_error", "sweeps", "wall_time_s", "message", "r", "u"))


def _sliding(Wi: np.ndarray, b: np.ndarray, mu: float, r_old: np.ndarray) -> np.ndarray | None:
    """The sliding case of :func:`solve_one_contact` (``None`` when no root is found)."""
    th = np.linspace(0.0, 2.0 * math.pi, ANGLES + 1)
    c, s = np.cos(th), np.sin(th)
    a = Wi[:, 0:1] - mu * (Wi[:, 1:2] * c + Wi[:, 2:3] * s)  # W v(theta), (3, K)
    with np.errstate(divide="ignore", invalid="ignore"):
        rn = -b[0] / a[0]
    t1, t2 = rn * a[1] + b[1], rn * a[2] + b[2]
    g = t1 * s - t2 * c
    ok = (a[0] > 0) & np.isfinite(g)

    def gfun(x: float) -> float:
        cx, sx = math.cos(x), math.sin(x)
        an = Wi[0, 0] - mu * (Wi[0, 1] * cx + Wi[0, 2] * sx)
        rnx = -b[0] / an
        u1 = rnx * (Wi[1, 0] - mu * (Wi[1, 1] * cx + Wi[1, 2] * sx)) + b[1]
        u2 = rnx * (Wi[2, 0] - mu * (Wi[2, 1] * cx + Wi[2, 2] * sx)) + b[2]
        return u1 * sx - u2 * cx

    nt = math.hypot(r_old[1], r_old[2])
    prefer = math.atan2(-r_old[2], -r_old[1]) if nt > 0 else None
    best: tuple[float, np.ndarray] | None = None
    for k in range(ANGLES):
        if not (ok[k] and ok[k + 1]) or g[k] * g[k + 1] > 0:
            continue
        if g[k] == 0 or g[k + 1] == 0:
            x = float(th[k] if g[k] == 0 else th[k + 1])
        else:
            x = float(brentq(gfun, th[k], th[k + 1], xtol=1e-15))
        cx, sx = math.cos(x), math.sin(x)
        v = np.array([1.0, -mu * cx, -mu * sx])
        av = Wi @ v
        if av[0] <= 0:
            continue
        rnx = -b[0] / av[0]
        ut = rnx * av[1:] + b[1:]
        if rnx <= 0 or ut[0] * cx + ut[1] * sx < 0:
            continue
        d = 0.0 if prefer is None else abs(math.remainder(x - prefer, 2.0 * math.pi))
        if best is None or d < best[0]:
            best = (d, rnx * v)
    return None if best is None else best[1]


def solve_one_contact(
    Wi: np.ndarray, b: np.ndarray, mu: float, r_old: np.ndarray | None = None
) -> np.ndarray:
    r"""Exact reaction of one contact: :math:`u = W_i r + b`, Coulomb's law with Signorini's condition.

    Cases as in the module docstring (take-off, sticking, sliding); ``r_old`` (the current
    reaction) picks among several sliding solutions. ``Wi`` must be positive definite; when the
    sliding case finds no root (it should not), the result of 50 projected fixed-point steps
    :math:`r \leftarrow \Pi_K(r - \rho(u + \mu\|u_T\|e_n))`, :math:`\rho = 1/\lambda_{\max}(W_i)`.
    """
    r_old = np.zeros(3) if r_old is None else r_old
    if b[0] >= 0:
        return np.zeros(3)
    if mu == 0.0:
        return np.array([-b[0] / Wi[0, 0], 0.0, 0.0])
    try:
        stick = np.linalg.solve(Wi, -b)
    except np.linalg.LinAlgError:
        stick = None
    if stick is not None and stick[0] >= 0 and math.hypot(stick[1], stick[2]) <= mu * stick[0]:
        return stick
    slide = _sliding(Wi, b, mu, r_old)
    if slide is not None:
        return slide
    rho = 1.0 / float(np.linalg.eigvalsh(0.5 * (Wi + Wi.T)).max())
    r = r_old.copy()
    mus = np.array([mu])
    for _ in range(50):
        u = Wi @ r + b
        u[0] += mu * math.hypot(u[1], u[2])
        r = project_cones(r - rho * u, mus)
    return r


def solve_nsgs(
    W: np.ndarray | sps.spmatrix,
    q: np.ndarray,
    mu: np.ndarray,
    r0: np.ndarray | None = None,
    tol: float = 1e-8,
    max_sweeps: int = 1000,
    time_limit: float | None = None,
    omega: float = 1.0,
) -> NSGSResult:
    r"""Nonsmooth Gauss–Seidel on a 3-D friction-contact problem (module docstring).

    Parameters
    ----------
    W, q, mu
        Delassus matrix (:math:`3n_c \times 3n_c`, dense or sparse; made dense), free velocity
        and friction coefficients (:math:`n_c`, non-negative).
    r0
        Starting reactions (default zero).
    tol
        The run stops once the Siconos error is at most ``tol``.
    max_sweeps
        Sweeps over the contacts at most.
    time_limit
        Wall-time limit in seconds (``None``: none), checked after every sweep.
    omega
        Relaxation factor in :math:`(0, 2)`.

    Returns
    -------
    NSGSResult
        The point with the smallest Siconos error met (measured at it).

    Raises
    ------
    MCPInputError
        Shapes that do not fit, non-finite data, a negative friction coefficient, a diagonal
        block :math:`W_{ii}` that is not positive definite or ``omega`` outside :math:`(0, 2)`.
    """
    t0 = time.perf_counter()
    Wd, q, mu, r = contact_inputs(W, q, mu, r0)
    nc = mu.size
    if not 0.0 < omega < 2.0:
        raise MCPInputError(f"omega must be in (0, 2), got {omega}")
    if max_sweeps < 0:
        raise MCPInputError(f"max_sweeps must be non-negative, got {max_sweeps}")
    blocks = [np.ascontiguousarray(Wd[3 * i : 3 * i + 3, 3 * i : 3 * i + 3]) for i in range(nc)]
    for i, Wi in enumerate(blocks):
        if np.linalg.eigvalsh(0.5 * (Wi + Wi.T)).min() <= 0:
            raise MCPInputError(f"the diagonal block of contact {i} of W is not positive definite")
    Wc = np.asfortranarray(Wd)  # columns of W: the update of u after a contact changes
    deadline = math.inf if time_limit is None else t0 + time_limit
    mus = mu.tolist()
    u = Wd @ r + q
    best_r, best_err = r.copy(), siconos_error(q, mu, r, u)
    sweeps, message = 0, "converged" if best_err <= tol else "sweep limit"
    while best_err > tol and sweeps < max_sweeps:
        for i in range(nc):
            k = 3 * i
            ri = r[k : k + 3]
            b = u[k : k + 3] - blocks[i] @ ri
            new = solve_one_contact(blocks[i], b, mus[i], ri)
            if omega != 1.0:
                new = omega * new + (1.0 - omega) * ri
                if omega > 1.0:
                    new = project_cones(new, mu[i : i + 1])
            dr = new - ri
            if dr.any():
                u += Wc[:, k : k + 3] @ dr
                r[k : k + 3] = new
        sweeps += 1
        u = Wd @ r + q  # no drift from the updates
        err = siconos_error(q, mu, r, u)
        if err < best_err:
            best_r, best_err = r.copy(), err
        if best_err <= tol:
            message = "converged"
            break
        if time.perf_counter() >= deadline:
            message = "time limit"
            break
    u_best = Wd @ best_r + q
    return NSGSResult(
        r=best_r, u=u_best, siconos_error=float(best_err), solved=bool(best_err <= tol), sweeps=sweeps,
        wall_time_s=time.perf_counter() - t0, message=message,
    )  # fmt: skip
