r"""Goyal et al.'s example limit surface: a bar on two identical point supports (Figs 5-7).

Supports at :math:`r_1 = (0, L)`, :math:`r_2 = (0, -L)`, each carrying :math:`N/2` with
isotropic Coulomb friction, friction-disc radius :math:`c = \mu N/2`. Support *i* contributes
:math:`(f_x, f_y, x_i f_y - y_i f_x)` with :math:`\lVert f\rVert\le c`, a flat elliptical disc
in load space; the limit set is the Minkowski sum of the two discs. Writing
:math:`f_{1x} = (F_x - M/L)/2`, :math:`f_{2x} = (F_x + M/L)/2`, a load is feasible iff

.. math::  |f_{1x}|\le c,\quad |f_{2x}|\le c,\quad
   |F_y| \le \sqrt{c^2 - f_{1x}^2} + \sqrt{c^2 - f_{2x}^2},

so the :math:`[F_x, M]` section is the square :math:`|F_x| + |M|/L \le \mu N` and the
:math:`[F_y, M]` section is the circle :math:`F_y^2 + (M/L)^2 \le (\mu N)^2`. Rotation about a
support gives a flat elliptical facet (4 facets: 2 supports x 2 senses) and the LS has 4
vertices :math:`(\pm\mu N, 0, 0)`, :math:`(0, 0, \pm\mu N L)` (Goyal et al., "Example Limit
Surface").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mcpkit.errors import ShapeError
from mcpkit.models.friction.limit_surface import PointContacts
from mcpkit.models.friction.patch import _check_scalar

__all__ = ["BarFacet", "bar_facets", "bar_gauge", "bar_vertices", "two_point_bar"]


def two_point_bar(half_length: float = 1.0) -> PointContacts:
    """The bar of Goyal et al. Fig. 5: two equal point supports at ``(0, +-half_length)``."""
    L = _check_scalar("half_length", half_length, positive=True)
    return PointContacts([0.0, 0.0], [L, -L], [0.5, 0.5])


@dataclass
class BarFacet:
    r"""One flat elliptical facet: rotation with sense ``sense`` about support ``stuck``.

    Attributes
    ----------
    stuck
        Index (0: :math:`(0, L)`, 1: :math:`(0, -L)`) of the support at the CoR.
    sense
        +1 counter-clockwise, -1 clockwise.
    centre
        (3,) load with the stuck support's force zero.
    axes
        (3, 2) columns: the load directions spanned by the stuck support's force
        :math:`(c, 0, -y_j c)` and :math:`(0, c, 0)`.
    twist
        (3,) the motion (unit angular rate) normal to the facet.
    """

    stuck: int
    sense: int
    centre: np.ndarray
    axes: np.ndarray
    twist: np.ndarray

    def boundary(self, n: int = 64) -> np.ndarray:
        """(n, 3) points of the facet's elliptical rim."""
        t = np.linspace(0.0, 2 * np.pi, n)
        return self.centre + np.stack([np.cos(t), np.sin(t)], axis=1) @ self.axes.T


def bar_facets(mu: float, normal_force: float, half_length: float = 1.0) -> list[BarFacet]:
    """The four flat facets of the two-point bar's limit surface (load convention of Goyal et al.)."""
    mu_v = _check_scalar("mu", mu)
    N = _check_scalar("normal_force", normal_force)
    L = _check_scalar("half_length", half_length, positive=True)
    c = mu_v * N / 2
    ys = (L, -L)
    out = []
    for j in (0, 1):
        i = 1 - j
        for s in (1, -1):
            # support i moves with velocity s * z x (r_i - r_j) = s (-(y_i - y_j), 0)
            fx = c * np.sign(-(ys[i] - ys[j])) * s
            centre = np.array([fx, 0.0, -ys[i] * fx])
            axes = np.array([[c, 0.0], [0.0, c], [-ys[j] * c, 0.0]])
            twist = np.array([s * ys[j], 0.0, float(s)])  # v_O = s z x (0 - r_j)
            out.append(BarFacet(j, s, centre, axes, twist))
    return out


def bar_vertices(mu: float, normal_force: float, half_length: float = 1.0) -> np.ndarray:
    r"""(4, 3) vertices :math:`(\pm\mu N, 0, 0)` and :math:`(0, 0, \pm\mu N L)`."""
    mu_v = _check_scalar("mu", mu)
    N = _check_scalar("normal_force", normal_force)
    L = _check_scalar("half_length", half_length, positive=True)
    m = mu_v * N
    return np.array([[m, 0, 0], [-m, 0, 0], [0, 0, m * L], [0, 0, -m * L]], dtype=float)


def bar_gauge(loads: np.ndarray, mu: float, normal_force: float, half_length: float = 1.0) -> np.ndarray:
    r"""Gauge :math:`g(P) = \min\{t > 0: P/t \text{ feasible}\}` of the bar's limit set
    (:math:`g = 1` on the limit surface, :math:`< 1` inside), by bisection on the closed-form
    feasibility test in the module docstring."""
    P = np.atleast_2d(np.asarray(loads, dtype=float))
    if P.shape[-1] != 3:
        raise ShapeError(f"loads must have shape (3,) or (K, 3), got {np.shape(loads)}")
    mu_v = _check_scalar("mu", mu, positive=True)
    N = _check_scalar("normal_force", normal_force, positive=True)
    L = _check_scalar("half_length", half_length, positive=True)
    c = mu_v * N / 2

    def feasible(Q: np.ndarray) -> np.ndarray:
        f1 = (Q[:, 0] - Q[:, 2] / L) / 2
        f2 = (Q[:, 0] + Q[:, 2] / L) / 2
        ok = (np.abs(f1) <= c) & (np.abs(f2) <= c)
        cap = np.sqrt(np.clip(c * c - f1 * f1, 0, None)) + np.sqrt(np.clip(c * c - f2 * f2, 0, None))
        return ok & (np.abs(Q[:, 1]) <= cap)

    lo = np.zeros(len(P))
    hi = np.full(len(P), 1.0)
    while not np.all(feasible(P / hi[:, None])):
        hi = np.where(feasible(P / hi[:, None]), hi, 2 * hi)
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        ok = feasible(P / np.where(mid > 0, mid, 1e-300)[:, None])
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid)
    g = hi
    return g[0] if np.ndim(loads) == 1 else g
