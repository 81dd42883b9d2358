r"""A direct semismooth Newton method for 3-D frictional contact in the Alart–Curnier form.

For a local friction-contact problem (FCLIB): :math:`n_c` contacts, Delassus matrix :math:`W`
(:math:`3n_c \times 3n_c`), :math:`q`, friction coefficients :math:`\mu_i`, find reactions
:math:`r` with :math:`u = Wr + q` satisfying Coulomb's law with Signorini's condition. Per contact,
with :math:`\rho_n, \rho_t > 0` (:func:`delassus_rho`),

.. math::
    x_n = r_n - \rho_n u_n,\quad R = \mu\max(0, x_n),\quad x_T = r_T - \rho_t u_T,

    \phi_n = r_n - \max(0, x_n),\qquad
    \phi_T = r_T - \Pi_{D(R)}(x_T),\qquad \Pi_{D(R)}(x) = x\,\frac{R}{\max(R, \|x\|)}

(Alart & Curnier 1991; the same law as ``ContactLaw.ALART_CURNIER`` of
``mcpkit.models.fclib_equations``). The system :math:`F(\hat r) = 0` is scaled as there:
:math:`r = s_r\hat r` with :math:`s_r = \|q\|_2 / \overline{\mathrm{diag}\,W}` and
:math:`F_i = \omega_i\,\phi_i / \|q\|_2`, :math:`\omega_i = \max(1, 1/\min(\rho_{n,i}, \rho_{t,i}))`.

One element of the generalised Jacobian is :math:`J = A + BW` with the per-contact
:math:`3\times 3` blocks :math:`A = \partial\phi/\partial r`, :math:`B = \partial\phi/\partial u`
written out (:func:`alart_curnier`): with :math:`a = [x_n > 0]`, :math:`o = [\|x_T\| > R]`,
:math:`\hat x = x_T/\|x_T\|`, :math:`P = I - o\,\hat x\hat x^\top` and
:math:`f = R/\|x_T\|` if :math:`o` else 1,

.. math::
    A_{nn} = 1 - a,\ B_{nn} = a\rho_n,\quad
    A_{Tn} = -o\,a\,\mu\hat x,\ B_{Tn} = o\,a\,\mu\rho_n\hat x,\quad
    A_{TT} = I - fP,\ B_{TT} = \rho_t fP .

The iteration (:func:`solve_alart_curnier`) takes the proximally perturbed Newton step
:math:`(J + \mu I) d = -F`, :math:`\mu = \min(\max(0.1\|F\|_2, 10^{-10}), 1)` (Billups'
proximal perturbation, as the Newton engine's first fallback; :math:`\mu \to 0` with
:math:`F`, so the local rate stays superlinear), with a dense LU (LAPACK ``gesv``) and a
non-monotone Armijo search on :math:`\theta = \tfrac12\|F\|^2` (reference: the largest of the
last :data:`MEMORY` values; slope :math:`F^\top J d`; backtracking by a quadratic model). On
statically indeterminate stacks :math:`J` is singular at the solutions (sticking rows are
:math:`\rho W`); there the plain Newton step (:math:`\mu = 0`) ran along nearly null directions
and stalled (BoxesStack1, the 48-contact ``local_problem_test``), and the perturbed step with a
memory of 10 converges in 15-20 steps (measured with both changes: with either alone the runs
still stalled). A watchdog returns to the best point met after :data:`WATCHDOG` steps without a
new smallest merit and restarts the history (the Newton engine's watchdog; on the periodic LMGC
box the iteration had come within 2e-8 and then wandered off under the large reference); a run
that stops unsolved returns the best point it met, not its last.
A Levenberg–Marquardt direction :math:`(J^\top J + \lambda I)d = -J^\top F`,
:math:`\lambda = 10^{-2}\|F\|^2` (Yamashita–Fukushima) is taken when that system is singular or
the step fails the search, first after a step cut below :data:`SHORT` of its
length (far from the solution, e.g. from :math:`r = 0` with a nearly singular :math:`W`), and
alone after :data:`CYCLE` steps without a new smallest merit (the Newton steps can cycle among
active sets). The merit has local minima that are not solutions, so a run from :math:`r = 0`
that stops without one is followed by a second from the sticking reactions :math:`-W^{-1}q`
projected on the cones. Up to :data:`SMALL_NC` contacts the per-contact formulas run on Python
floats, above that vectorised; either way an iteration costs one factorisation and a few
dozen interpreter-level operations: it is the fast path for problems whose LU takes
microseconds, where the general engine's set-up dominates.

**Verdict.** The point is *solved* when both the scaled equations meet the tolerance,
:math:`\|F\|_\infty \le` ``tol`` (the natural residual of this free MCP), and the Siconos error
(:func:`siconos_error`, Siconos ``fc3d_compute_error``: the De Saxcé natural map with
:math:`\rho = 1` divided by :math:`\|q\|_2`) is at most ``tol``. Both are measured at the
returned reactions with :math:`u = Wr + q` recomputed; nothing is taken from the iteration.

References
----------
* P. Alart, A. Curnier, Comput. Methods Appl. Mech. Engrg. 92 (1991) 353-375.
* N. Yamashita, M. Fukushima, "On the rate of convergence of the Levenberg-Marquardt method",
  Computing Suppl. 15 (2001) 239-249.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import scipy.sparse as sps
from scipy.linalg.lapack import dgesv

from mcpkit.engines.blas import small_blas
from mcpkit.engines.factor_budget import (
    DENSE_SECONDS_PER_FLOP,
    GUARD_MIN_ORDER,
    FactorBudget,
    FactorRefused,
    dense_cost,
)
from mcpkit.errors import MCPInputError
from mcpkit.solving.tables import compact_repr

SIGMA = 1e-4
"""Armijo constant of the line search."""
SMALL_NC = 32
"""Largest number of contacts evaluated contact by contact in Python floats (:class:`_System`)."""
MEMORY = 10
"""Merit values the non-monotone search compares against (Grippo-Lampariello-Lucidi; 10 as
the Newton engine's ``NONMONOTONE_MEMORY``)."""
PROX_FACTOR = 0.1
r"""The proximal perturbation is :math:`\mu = ` ``PROX_FACTOR`` :math:`\cdot\|F\|_2`, ..."""
PROX_MIN, PROX_MAX = 1e-10, 1.0
"""... clipped to ``[PROX_MIN, PROX_MAX]`` (the Newton engine's bounds)."""
RESTART_STALL = 30
"""With ``restart``, the first run stops when the merit fell less than tenfold in this many steps."""
SHORT = 1e-3
"""A Newton step cut to less than this fraction makes the next iteration try LM first."""
CYCLE = 8
"""Steps without a new smallest merit (by 1 %) after which a Levenberg–Marquardt step is taken."""
MAX_BACKTRACK = 12
"""Step reductions before the direction is given up."""
WATCHDOG = 5
"""Steps without a new smallest merit after which the iteration returns to the best point met
and restarts its non-monotone history (0: never)."""


@dataclass(frozen=True)
class ContactNewtonResult:
    """The outcome of :func:`solve_alart_curnier` (module docstring)."""

    r: np.ndarray
    """Reactions in FCLIB's order :math:`(r_n, r_t, r_o)_i`."""
    u: np.ndarray
    """Velocities :math:`Wr + q`."""
    siconos_error: float
    """:func:`siconos_error` at :attr:`r`."""
    natural_residual: float
    r""":math:`\|F(\hat r)\|_\infty` of the scaled Alart–Curnier equations."""
    F: np.ndarray
    r"""The scaled equations :math:`F(\hat r)` at :attr:`r` (module docstring), for a caller's verdict."""
    s_r: float
    r"""The scale of the unknowns: :math:`\hat r = r / s_r` is the point :attr:`F` belongs to."""
    tol: float
    solved: bool
    """Both measures at most :attr:`tol`."""
    iterations: int
    """Newton (or Levenberg–Marquardt) steps taken."""
    lm_steps: int
    """How many of them were Levenberg–Marquardt steps."""
    wall_time_s: float
    message: str

    def __repr__(self) -> str:
        """A few lines: key fields, arrays by shape (:func:`~mcpkit.solving.tables.compact_repr`)."""
        names = ("solved", "siconos_error", "natural_residual", "tol", "iterations", "lm_steps")
        return compact_repr(self, (*names, "wall_time_s", "message", "r", "u"))


def delassus_rho(W: np.ndarray | sps.spmatrix, nc: int) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`\rho_n = 1/W_{nn}`, :math:`\rho_t = 1/\lambda_{\max}(\mathrm{sym}\,W_{TT})` per contact.

    :math:`W_{nn}` and :math:`W_{TT}` are the normal entry and the tangential :math:`2\times 2`
    block of the contact's diagonal block of the Delassus matrix, so that :math:`\rho u` has the
    units and the size of :math:`r` (the "split spectral norm" choice of Siconos' nonsmooth Newton
    solvers). The :math:`2\times 2` eigenvalue in closed form,
    :math:`\tfrac{a+d}2 + \sqrt{(\tfrac{a-d}2)^2 + b^2}`. A non-positive value falls back to
    the inverse mean of the positive diagonal entries of :math:`W` (1 if none). A sparse ``W`` is
    read entry by entry, never made dense.
    """
    if sps.issparse(W):
        Ws = sps.csr_matrix(W, dtype=float)
        diag = Ws.diagonal()
        i = 3 * np.arange(nc)
        upper = np.asarray(Ws[i + 1, i + 2], dtype=float).reshape(-1)
        lower = np.asarray(Ws[i + 2, i + 1], dtype=float).reshape(-1)
    else:
        W = np.asarray(W, dtype=float)
        diag = np.diag(W)
        if nc <= SMALL_NC:
            return _delassus_rho_small(W, diag.tolist(), nc)
        i = 3 * np.arange(nc)
        upper, lower = W[i + 1, i + 2], W[i + 2, i + 1]
    pos = diag[diag > 0]
    fallback = 1.0 / float(pos.mean()) if pos.size else 1.0
    wnn, a, d = diag[i], diag[i + 1], diag[i + 2]
    b = 0.5 * (upper + lower)
    lam = 0.5 * (a + d) + np.hypot(0.5 * (a - d), b)
    rho_n = np.where(wnn > 0, 1.0 / np.where(wnn > 0, wnn, 1.0), fallback)
    rho_t = np.where(lam > 0, 1.0 / np.where(lam > 0, lam, 1.0), fallback)
    return rho_n, rho_t


def _delassus_rho_small(W: np.ndarray, diag: list[float], nc: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`delassus_rho` contact by contact on Python floats (the same formulas)."""
    pos = [x for x in diag if x > 0]
    fallback = 1.0 / (sum(pos) / len(pos)) if pos else 1.0
    off = W.diagonal(1).tolist()  # W[k, k + 1]
    low = W.diagonal(-1).tolist()  # W[k + 1, k]
    rho_n, rho_t = [], []
    for c in range(nc):
        k = 3 * c
        wnn, a, d = diag[k], diag[k + 1], diag[k + 2]
        b = 0.5 * (off[k + 1] + low[k + 1])
        lam = 0.5 * (a + d) + math.hypot(0.5 * (a - d), b)
        rho_n.append(1.0 / wnn if wnn > 0 else fallback)
        rho_t.append(1.0 / lam if lam > 0 else fallback)
    return np.array(rho_n), np.array(rho_t)


def alart_curnier(
    r: np.ndarray, u: np.ndarray, mu: np.ndarray, rho_n: np.ndarray, rho_t: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r""":math:`\phi` (``(nc, 3)``) and the blocks :math:`A, B` (``(nc, 3, 3)``) at ``r, u`` (``(nc, 3)``).

    ``rho_t`` has shape ``(nc, 1)``.
    """
    xn = r[:, 0] - rho_n * u[:, 0]
    act = xn > 0.0
    R = mu * np.where(act, xn, 0.0)
    xT = r[:, 1:] - rho_t * u[:, 1:]
    s = np.hypot(xT[:, 0], xT[:, 1])
    out = s > R
    s1 = np.where(out, s, 1.0)
    fac = np.where(out, R / s1, 1.0)
    phi = np.empty_like(r)
    phi[:, 0] = np.where(act, rho_n * u[:, 0], r[:, 0])  # r_n - max(0, x_n)
    phi[:, 1:] = r[:, 1:] - fac[:, None] * xT
    nc = r.shape[0]
    xh = (out / s1)[:, None] * xT  # zero unless o
    fP = fac[:, None, None] * (_EYE2 - xh[:, :, None] * xh[:, None, :])
    A = np.zeros((nc, 3, 3))
    B = np.zeros((nc, 3, 3))
    A[:, 0, 0] = ~act
    B[:, 0, 0] = act * rho_n
    g = (act * mu)[:, None] * xh  # zero unless o and a
    A[:, 1:, 0] = -g
    B[:, 1:, 0] = g * rho_n[:, None]
    A[:, 1:, 1:] = _EYE2 - fP
    B[:, 1:, 1:] = rho_t[:, :, None] * fP
    return phi, A, B


def alart_curnier_phi(
    r: np.ndarray, u: np.ndarray, mu: np.ndarray, rho_n: np.ndarray, rho_t: np.ndarray
) -> np.ndarray:
    r""":math:`\phi` alone (``(nc, 3)``), as :func:`alart_curnier` computes it, in fewer operations.

    :math:`\Pi_{D(R)}(x) = x R/\max(R, \|x\|)` with :math:`0/0` read as 1: then
    :math:`x_T = 0` and the factor does not matter.
    """
    xn = r[:, 0] - rho_n * u[:, 0]
    pn = np.maximum(xn, 0.0)
    R = mu * pn
    xT = r[:, 1:] - rho_t * u[:, 1:]
    m = np.maximum(np.hypot(xT[:, 0], xT[:, 1]), R)
    phi = np.empty_like(r)
    phi[:, 0] = r[:, 0] - pn
    with np.errstate(invalid="ignore", divide="ignore"):
        phi[:, 1:] = r[:, 1:] - (R / np.where(m > 0.0, m, 1.0))[:, None] * xT
    return phi


_EYE2 = np.eye(2)


def siconos_error(q: np.ndarray, mu: np.ndarray, r: np.ndarray, u: np.ndarray) -> float:
    r"""Siconos ``fc3d_compute_error``: :math:`\|r - \Pi_K(r - \hat u)\|_2 / \|q\|_2`.

    :math:`\hat u_i = u_i + \mu_i\|u_{T,i}\|e_n`; :math:`\Pi_K` the projection on the friction
    cones; the division is skipped when :math:`\|q\|_2` is below machine epsilon. ``r``, ``u``
    in FCLIB's order (flat).
    """
    nq = float(np.linalg.norm(q))
    if mu.size <= SMALL_NC:
        e = _siconos_error_small(mu.tolist(), r.tolist(), u.tolist())
    else:
        e = _siconos_error_vector(mu, r, u)
    e = e / nq if nq > np.finfo(float).eps else e
    return e if e == e else math.inf


def _siconos_error_small(mu: list[float], r: list[float], u: list[float]) -> float:
    """The numerator of :func:`siconos_error`, contact by contact on Python floats."""
    hypot = math.hypot
    d2 = 0.0
    k = 0
    for m in mu:
        rn, rt, ro = r[k], r[k + 1], r[k + 2]
        ut, uo = u[k + 1], u[k + 2]
        zn = rn - (u[k] + m * hypot(ut, uo))
        zt, zo = rt - ut, ro - uo
        k += 3
        nt = hypot(zt, zo)
        if nt <= m * zn:  # in K: the projection is the point, the distance is r - (r - u_hat)
            pn, pt, po = zn, zt, zo
        elif m * nt <= -zn:  # in the polar cone
            pn = pt = po = 0.0
        else:
            a = (m * nt + zn) / (m * m + 1.0)
            pn, pt, po = a, m * a * zt / nt, m * a * zo / nt
        d2 += (rn - pn) ** 2 + (rt - pt) ** 2 + (ro - po) ** 2
    return math.sqrt(d2)


def contact_errors(
    q: np.ndarray, mu: np.ndarray, r: np.ndarray, u: np.ndarray, terms: np.ndarray | None = None
) -> np.ndarray:
    r"""Per-contact Siconos error :math:`e_i = \|r_i - \Pi_{K_i}(r_i - \hat u_i)\|_2 / s_i`.

    The numerator is contact :math:`i`'s term of :func:`siconos_error`; the scale is the size of
    what enters the contact's own map, :math:`s_i = \max(\|q_i\|_2, \|t_i\|_2, \|r_i\|_2)` with
    ``terms`` :math:`t = |W|\,|r|` (the size of the products summed into :math:`u = Wr + q`;
    default :math:`|u - q|`), and the division is skipped when :math:`s_i` is below machine
    epsilon. Unlike the global error, normalised by :math:`\|q\|_2`, one contact with a huge
    :math:`q_i` cannot hide another that interpenetrates (``docs/fclib.md``); and a contact whose
    :math:`u_i` is a small difference of large terms is judged relative to those terms, the
    precision its evaluation has. A NaN gives :math:`+\infty`. ``r``, ``u``, ``q``, ``terms`` in
    FCLIB's order (flat).
    """
    r3, u3, q3 = (np.asarray(x, dtype=float).reshape(-1, 3) for x in (r, u, q))
    t3 = np.abs(u3 - q3) if terms is None else np.asarray(terms, dtype=float).reshape(-1, 3)
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.sqrt(_siconos_terms(np.asarray(mu, dtype=float), r3, u3))
        s = np.maximum.reduce([np.linalg.norm(a, axis=1) for a in (q3, t3, r3)])
        e = np.where(s > np.finfo(float).eps, d / np.where(s > 0.0, s, 1.0), d)
    return np.where(np.isnan(e), np.inf, e)


def _siconos_error_vector(mu: np.ndarray, r: np.ndarray, u: np.ndarray) -> float:
    """The numerator of :func:`siconos_error`, vectorised over the contacts."""
    return math.sqrt(float(_siconos_terms(mu, r.reshape(-1, 3), u.reshape(-1, 3)).sum()))


def _siconos_terms(mu: np.ndarray, r3: np.ndarray, u3: np.ndarray) -> np.ndarray:
    r"""Squared per-contact terms :math:`\|r_i - \Pi_{K_i}(r_i - \hat u_i)\|_2^2` (rows of ``r3``, ``u3``)."""
    zn = r3[:, 0] - (u3[:, 0] + mu * np.hypot(u3[:, 1], u3[:, 2]))
    zT = r3[:, 1:] - u3[:, 1:]
    nt = np.hypot(zT[:, 0], zT[:, 1])
    inside = nt <= mu * zn
    polar = ~inside & (mu * nt <= -zn)
    a = (mu * nt + zn) / (mu * mu + 1.0)
    pn = np.where(inside, zn, np.where(polar, 0.0, a))
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(inside, 1.0, np.where(polar, 0.0, mu * a / nt))
    return (r3[:, 0] - pn) ** 2 + ((r3[:, 1:] - t[:, None] * zT) ** 2).sum(axis=1)


@lru_cache(maxsize=32)
def _block_positions(nc: int) -> np.ndarray:
    """Flat positions in :math:`J` of the diagonal blocks' entries, in (contact, row, column) order."""
    n = 3 * nc
    i = np.arange(n)
    rows = np.repeat(i.reshape(nc, 3, 1), 3, axis=2).reshape(-1)  # (c, a, b) -> 3c + a
    cols = np.repeat(i.reshape(nc, 1, 3), 3, axis=1).reshape(-1)  # (c, a, b) -> 3c + b
    return rows * n + cols


class _System:
    """The scaled equations :math:`F(\\hat r)` and their Jacobian for one problem (module docstring).

    Up to :data:`SMALL_NC` contacts the per-contact formulas run on Python floats, contact by
    contact (a few dozen NumPy calls on arrays of a few entries cost more than the arithmetic);
    above, vectorised (:func:`alart_curnier`, :func:`alart_curnier_phi`). The two agree to
    rounding (tested).
    """

    def __init__(self, W: np.ndarray, q: np.ndarray, mu: np.ndarray) -> None:
        nc = mu.size
        self.nc, self.n = nc, 3 * nc
        self.W, self.q, self.mu = W, q, mu
        self.Wb = W.reshape(nc, 3, self.n)
        dm = float(np.abs(W.diagonal()).mean()) if nc else 1.0
        self.q_norm = math.sqrt(float(q @ q)) or 1.0
        self.s_r = self.q_norm / (dm if dm > 0 else 1.0)
        self.rho_n, rho_t = delassus_rho(W, nc)
        self.rho_t = rho_t[:, None]
        w = np.maximum(1.0, 1.0 / np.minimum(self.rho_n, rho_t)) / self.q_norm
        self.row_w = w[:, None]
        self.jac_scale = (w * self.s_r)[:, None, None]
        self.diag_pos = _block_positions(nc)
        self.small = nc <= SMALL_NC
        if self.small:
            self._par = list(zip(mu.tolist(), self.rho_n.tolist(), rho_t.tolist(), w.tolist(), strict=True))

    def F(self, r: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Scaled :math:`F` at reactions ``r`` and velocities ``u`` (flat)."""
        if self.small:
            return np.array(self._small(r, u, False)[0])
        phi = alart_curnier_phi(r.reshape(-1, 3), u.reshape(-1, 3), self.mu, self.rho_n, self.rho_t)
        return (self.row_w * phi).reshape(-1)

    def F_J(self, r: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Scaled :math:`F` and :math:`J = \\mathrm{diag}(w)(A + BW)s_r` (dense)."""
        n = self.n
        if self.small:
            F, A, B = self._small(r, u, True)
            J = np.matmul(np.array(B).reshape(-1, 3, 3), self.Wb).reshape(n, n)
            J.reshape(-1)[self.diag_pos] += A
            return np.array(F), J
        phi, Ab, Bb = alart_curnier(r.reshape(-1, 3), u.reshape(-1, 3), self.mu, self.rho_n, self.rho_t)
        J = np.matmul(Bb * self.jac_scale, self.Wb).reshape(n, n)
        J.reshape(-1)[self.diag_pos] += (Ab * self.jac_scale).reshape(-1)
        return (self.row_w * phi).reshape(-1), J

    def _small(
        self, r: np.ndarray, u: np.ndarray, blocks: bool
    ) -> tuple[list[float], list[float], list[float]]:
        """Scaled :math:`F` and, with ``blocks``, the scaled blocks :math:`A, B` (flat, (c, a, b) order)."""
        rl, ul = r.tolist(), u.tolist()
        s_r = self.s_r
        F: list[float] = []
        A: list[float] = []
        B: list[float] = []
        k = 0
        for mu, rho_n, rho_t, w in self._par:
            rn, rt, ro = rl[k], rl[k + 1], rl[k + 2]
            un, ut, uo = ul[k], ul[k + 1], ul[k + 2]
            k += 3
            xn = rn - rho_n * un
            act = xn > 0.0
            R = mu * xn if act else 0.0
            xt = rt - rho_t * ut
            xo = ro - rho_t * uo
            s = math.hypot(xt, xo)
            out = s > R
            f = R / s if out else 1.0
            F += (w * (rho_n * un if act else rn), w * (rt - f * xt), w * (ro - f * xo))
            if not blocks:
                continue
            ws = w * s_r
            if out:
                ht, ho = xt / s, xo / s
                ptt, pto, poo = f * (1.0 - ht * ht), -f * ht * ho, f * (1.0 - ho * ho)
                gt, go = (mu * ht, mu * ho) if act else (0.0, 0.0)
            else:
                ptt, pto, poo, gt, go = f, 0.0, f, 0.0, 0.0
            A += (
                0.0 if act else ws, 0.0, 0.0,
                -ws * gt, ws * (1.0 - ptt), -ws * pto,
                -ws * go, -ws * pto, ws * (1.0 - poo),
            )  # fmt: skip
            wr = ws * rho_t
            B += (
                ws * rho_n if act else 0.0, 0.0, 0.0,
                ws * rho_n * gt, wr * ptt, wr * pto,
                ws * rho_n * go, wr * pto, wr * poo,
            )  # fmt: skip
        return F, A, B


def _newton_direction(J: np.ndarray, F: np.ndarray) -> np.ndarray | None:
    r""":math:`-(J + \mu I)^{-1}F`, :math:`\mu = \min(\max(` :data:`PROX_FACTOR`
    :math:`\|F\|_2,` :data:`PROX_MIN` :math:`),` :data:`PROX_MAX` :math:`)`, by LAPACK ``gesv``;
    None when that matrix is singular or the step not finite."""
    mu = min(max(PROX_FACTOR * math.sqrt(float(F @ F)), PROX_MIN), PROX_MAX)
    Jp = J.copy()
    Jp.reshape(-1)[:: J.shape[0] + 1] += mu
    _, _, d, info = dgesv(Jp, -F, overwrite_a=1)
    return d if info == 0 and np.isfinite(d).all() else None


def _lm_direction(J: np.ndarray, F: np.ndarray, theta: float) -> np.ndarray | None:
    """The Levenberg–Marquardt step :math:`-(J^\\top J + 10^{-2}\\|F\\|^2 I)^{-1} J^\\top F`."""
    G = J.T @ J
    G.reshape(-1)[:: G.shape[0] + 1] += 2e-2 * theta  # the diagonal: + 1e-2 ||F||^2
    _, _, d, info = dgesv(G, -(J.T @ F))
    return d if info == 0 and np.isfinite(d).all() else None


def _search(
    sys_: _System,
    r: np.ndarray,
    F: np.ndarray,
    J: np.ndarray,
    theta: float,
    ref: float,
    d: np.ndarray,
    used_lm: bool,
) -> tuple[np.ndarray, np.ndarray, float, bool, float] | None:
    r"""Non-monotone Armijo search on :math:`\theta` along ``d``: ``(r, u, theta, used_lm, t)`` or None.

    Accepts :math:`\theta(t) \le \theta_{\mathrm{ref}} + \sigma t\,\theta'(0)`; backtracks to the
    minimiser of the quadratic model of :math:`\theta` through :math:`\theta(0)`,
    :math:`\theta'(0)` and :math:`\theta(t)`, kept within :math:`[0.1t, 0.5t]`.
    """
    slope = float(F @ (J @ d))  # the perturbed Newton step has J d != -F: measure it
    if not slope < 0.0:
        return None
    Wc, q = sys_.W, sys_.q
    dr = sys_.s_r * d  # the step in the reactions
    t = 1.0
    for _ in range(MAX_BACKTRACK):
        rt = r + t * dr
        ut = Wc @ rt + q
        Ft = sys_.F(rt, ut)
        th = 0.5 * float(Ft @ Ft)
        if th <= ref + SIGMA * t * slope:
            return rt, ut, th, used_lm, t
        curv = (th - theta - slope * t) / (t * t)
        t_new = -slope / (2.0 * curv) if curv > 0.0 else 0.5 * t
        t = min(0.5 * t, max(0.1 * t, t_new)) if t_new == t_new else 0.5 * t
    return None


@dataclass
class _ContactRun:
    """Where one run of :func:`_iterate` ended (``F``, ``u`` and, if ``err_here``, ``err`` at ``r``)."""

    r: np.ndarray
    u: np.ndarray
    F: np.ndarray
    err: float
    err_here: bool
    its: int
    lm_steps: int
    message: str


def _iterate(
    sys_: _System,
    r: np.ndarray,
    tol: float,
    max_iter: int,
    deadline: float,
    allow_lm: bool,
    stall_window: int,
) -> _ContactRun:
    """The Newton iteration of :func:`solve_alart_curnier` from reactions ``r`` (module docstring)."""
    Wc, q, mu = sys_.W, sys_.q, sys_.mu
    u = Wc @ r + q
    F, J = sys_.F_J(r, u)
    theta = 0.5 * float(F @ F)
    recent = [theta]
    history = [theta]
    best_theta, best_its = theta, 0
    best_state = (r, u, F, J, theta)
    wd_its = 0
    t_last = 1.0
    its = lm_steps = 0
    err = math.inf
    err_here = False
    message = f"iteration limit {max_iter}"
    try:
        while True:
            if float(np.abs(F).max(initial=0.0)) <= tol:
                err, err_here = siconos_error(q, mu, r, u), True
                if err <= tol:
                    message = "converged"
                    break
            if its >= max_iter:
                break
            if time.perf_counter() > deadline:
                message = "time limit"
                break
            if stall_window and its >= stall_window and theta > 0.1 * history[its - stall_window]:
                message = f"slow progress: merit fell less than 10x in {stall_window} steps"
                break
            if WATCHDOG and its - max(best_its, wd_its) >= WATCHDOG and theta > best_theta:
                # no new smallest merit in WATCHDOG steps: back to the best point, history reset
                r, u, F, J, theta = best_state
                recent = [theta]
                wd_its = its
            ref = max(recent)
            step = None
            # no new best merit in CYCLE steps (the Newton steps may cycle among active sets): LM only;
            # after a Newton step cut to under SHORT of its length: LM first, then Newton
            stuck = allow_lm and its - best_its >= CYCLE
            lm_first = allow_lm and not stuck and t_last < SHORT
            order = (
                (True,) if stuck else (True, False) if lm_first else (False, True) if allow_lm else (False,)
            )
            for lm in order:
                if lm:
                    d = _lm_direction(J, F, theta)
                    step = None if d is None else _search(sys_, r, F, J, theta, ref, d, True)
                else:
                    d = _newton_direction(J, F)
                    step = None if d is None else _search(sys_, r, F, J, theta, ref, d, False)
                if step is not None:
                    break
            if step is None:
                message = "no descent direction (line search failed)" if allow_lm else "no Newton step"
                break
            r, u, theta, used_lm, t = step
            t_last = 1.0 if used_lm else t
            err_here = False
            lm_steps += int(used_lm)
            its += 1
            F, J = sys_.F_J(r, u)
            recent.append(theta)
            history.append(theta)
            if theta < 0.99 * best_theta:  # a new smallest merit, by more than rounding-sized steps
                best_theta, best_its = theta, its
                best_state = (r, u, F, J, theta)
            if len(recent) > MEMORY:
                del recent[0]
    except KeyboardInterrupt:  # Ctrl-C: the best point so far (a step may have been cut short)
        message = "interrupted"
        r, u, F, _, theta = best_state
        err_here = False
    if message != "converged" and best_theta < theta:  # unsolved: the best point met, not the last
        r, u, F, _, theta = best_state
        err_here = False
    return _ContactRun(r, u, F, err, err_here, its, lm_steps, message)


def project_cones(r: np.ndarray, mu: np.ndarray) -> np.ndarray:
    r"""Per contact, the Euclidean projection of :math:`r_i` on :math:`K_i = \{\|r_T\| \le \mu_i r_n\}`."""
    r3 = r.reshape(-1, 3)
    zn, nt = r3[:, 0], np.hypot(r3[:, 1], r3[:, 2])
    inside = nt <= mu * zn
    polar = ~inside & (mu * nt <= -zn)
    a = np.where(inside | polar, 0.0, (mu * nt + zn) / (mu * mu + 1.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(inside, 1.0, np.where(polar, 0.0, mu * a / nt))
    out = np.empty_like(r3)
    out[:, 0] = np.where(inside, zn, a)
    out[:, 1:] = t[:, None] * r3[:, 1:]
    return out.reshape(-1)


def solve_alart_curnier(
    W: np.ndarray | sps.spmatrix,
    q: np.ndarray,
    mu: np.ndarray,
    tol: float = 1e-8,
    max_iter: int = 100,
    r0: np.ndarray | None = None,
    time_limit: float | None = None,
    allow_lm: bool = True,
    stall_window: int = 0,
    restart: bool = True,
) -> ContactNewtonResult:
    r"""Solve a 3-D friction-contact problem by semismooth Newton on the Alart–Curnier equations.

    Parameters
    ----------
    W, q, mu
        Delassus matrix (:math:`3n_c \times 3n_c`, dense or sparse; made dense), free velocity
        and friction coefficients (:math:`n_c`, non-negative).
    tol
        Tolerance of both measures of the verdict (module docstring).
    max_iter
        Newton steps at most.
    r0
        Starting reactions (default zero).
    time_limit
        Wall-time limit in seconds (``None``: none).
    allow_lm
        Take Levenberg–Marquardt steps when Newton's fails; ``False`` stops there instead (for a
        caller that hands hard problems to a more careful method).
    stall_window
        When positive, stop once the merit :math:`\theta` fell less than tenfold over that many
        steps (same purpose).
    restart
        From the default start only: when the first run stops without a solution (or on slow
        progress, :data:`RESTART_STALL` steps when ``stall_window`` is 0), run again
        (with the iterations left) from the sticking reactions :math:`-W^{-1}q` projected on the
        cones, and keep the better end point.

    Returns
    -------
    ContactNewtonResult
        ``solved`` from the two measures at the returned reactions.

    Raises
    ------
    MCPInputError
        Shapes that do not fit, non-finite data or a negative friction coefficient.
    """
    t0 = time.perf_counter()
    Wd, q, mu, r = contact_inputs(W, q, mu, r0)
    n = q.size
    with small_blas(n):  # small systems factorise on one BLAS thread (mcpkit.engines.blas)
        restart = restart and r0 is None
        return _solve(Wd, q, mu, r, tol, max_iter, restart, time_limit, allow_lm, stall_window, t0)


def contact_inputs(
    W: np.ndarray | sps.spmatrix, q: np.ndarray, mu: np.ndarray, r0: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(W, q, mu, r)`` of a local contact problem as dense float arrays, checked; ``r`` is a copy
    of ``r0`` (zero when ``None``).

    Raises
    ------
    MCPInputError
        Shapes that do not fit :math:`n_c` contacts (``mu``'s length), non-finite data or a
        negative friction coefficient.
    """
    mu = np.asarray(mu, dtype=float).reshape(-1)
    q = np.asarray(q, dtype=float).reshape(-1)
    Wd = W.toarray() if sps.issparse(W) else np.asarray(W, dtype=float)
    n = 3 * mu.size
    if q.shape != (n,) or Wd.shape != (n, n):
        raise MCPInputError(f"W must be {n}x{n} and q of length {n} for {mu.size} contacts")
    if not (np.isfinite(Wd).all() and np.isfinite(q).all() and np.isfinite(mu).all()) or (mu < 0).any():
        raise MCPInputError("W, q and mu must be finite, mu non-negative")
    r = np.zeros(n) if r0 is None else np.asarray(r0, dtype=float).reshape(-1).copy()
    if r.shape != (n,) or not np.isfinite(r).all():
        raise MCPInputError(f"r0 must be a finite vector of length {n}")
    return Wd, q, mu, r


def _not_started(sys_: _System, r: np.ndarray, tol: float, message: str, t0: float) -> ContactNewtonResult:
    """A solve stopped before its first step (no iterations, or the caller's limit): the start, judged
    without forming :math:`J` (``message`` unless the start is a solution: then ``"converged"``)."""
    u = sys_.W @ r + sys_.q
    F = sys_.F(r, u)
    nat = float(np.abs(F).max(initial=0.0))
    nat = nat if nat == nat else math.inf
    err = siconos_error(sys_.q, sys_.mu, r, u)
    solved = nat <= tol and err <= tol
    return ContactNewtonResult(
        r=r, u=u, siconos_error=err, natural_residual=nat, F=F, s_r=sys_.s_r, tol=tol, solved=bool(solved),
        iterations=0, lm_steps=0, wall_time_s=time.perf_counter() - t0,
        message="converged" if solved else message,
    )  # fmt: skip


def _solve(
    Wd: np.ndarray,
    q: np.ndarray,
    mu: np.ndarray,
    r: np.ndarray,
    tol: float,
    max_iter: int,
    restart: bool,
    time_limit: float | None,
    allow_lm: bool,
    stall_window: int,
    t0: float,
) -> ContactNewtonResult:
    """The body of :func:`solve_alart_curnier` on checked data (``restart`` only from the default start)."""
    sys_ = _System(np.ascontiguousarray(Wd), q, mu)
    deadline = math.inf if time_limit is None else t0 + time_limit
    if max_iter <= 0:  # the start judged only (the dense J is not formed)
        return _not_started(sys_, r, float(tol), f"iteration limit {max_iter}", t0)
    if time_limit is not None and sys_.n >= GUARD_MIN_ORDER:
        try:  # each step forms the dense J and factorises it: refused when one cannot fit the limit
            FactorBudget(deadline).check(
                "a dense Newton step", sys_.n, dense_cost(sys_.n), DENSE_SECONDS_PER_FLOP
            )
        except FactorRefused as exc:
            return _not_started(sys_, r, float(tol), str(exc), t0)
    # with a second start to come, the first run also stops on slow progress
    run = _iterate(
        sys_, r, tol, max_iter, deadline, allow_lm, stall_window or (RESTART_STALL if restart else 0)
    )
    its, lm_steps = run.its, run.lm_steps
    if restart and run.message != "converged" and its < max_iter:
        # a second start: the sticking reactions -W^{-1} q projected on the cones (the merit of
        # the Alart-Curnier equations has local minima that are not solutions)
        _, _, r_stick, info = dgesv(sys_.W, -q)
        if info == 0 and np.isfinite(r_stick).all():
            again = _iterate(
                sys_, project_cones(r_stick, mu), tol, max_iter - its, deadline, allow_lm, stall_window
            )
            its, lm_steps = its + again.its, lm_steps + again.lm_steps
            if again.message == "converged" or float(again.F @ again.F) < float(run.F @ run.F):
                run = again
    r, u, F, err, err_here, message = run.r, run.u, run.F, run.err, run.err_here, run.message
    # F and u = Wr + q are those of the returned r; err too when it was measured there
    nat = float(np.abs(F).max(initial=0.0))
    nat = nat if nat == nat else math.inf
    if not err_here:
        err = siconos_error(q, mu, r, u)
    solved = nat <= tol and err <= tol
    if not solved and message == "converged":
        message = "stalled"
    return ContactNewtonResult(
        r=r, u=u, siconos_error=err, natural_residual=nat, F=F, s_r=sys_.s_r, tol=float(tol),
        solved=bool(solved), iterations=its, lm_steps=lm_steps, wall_time_s=time.perf_counter() - t0,
        message=message,
    )  # fmt: skip
