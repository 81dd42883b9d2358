r"""Point contacts against static or kinematically driven planar surfaces (Berard et al. eqs 7–8).

For contact :math:`i` between the body point :math:`r_{b,i}` and a surface with world frame
:math:`(p_S, \hat n, \hat t, \hat o)` at time :math:`t_{\ell+1}`:

* gap :math:`\psi_{in}(q^\ell, t_{\ell+1}) = \hat n\cdot(x_i(q^\ell) - p_S(t_{\ell+1}))` (the part
  at :math:`t_\ell`, the plate at :math:`t_{\ell+1}`, as in §2.2.1);
* wrenches :math:`W_{in} = J_i^T\hat n`, :math:`W_{it} = J_i^T\hat t`, :math:`W_{io} = J_i^T\hat o`
  with :math:`J_i` the point Jacobian (eq 7);
* surface velocity components :math:`u_{it} = \hat t\cdot u_S`, :math:`u_{io} = \hat o\cdot u_S`
  where :math:`u_S` is the velocity of the surface's material point at :math:`x_i` (the kinematic
  term of eq 8), so the sliding velocity is :math:`v_{it} = W_{it}^T\nu - u_{it}`.

In two dimensions (:class:`LineSurface2D`, :class:`~.bodies.PlanarBody`) there is one tangent
:math:`\hat t` and :math:`W_{io} = 0`, :math:`u_{io} = 0`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError
from mcpkit.models.arrays import NUMPY, ArrayNamespace
from mcpkit.models.stewart_trinkle.bodies import Body


class Surface(Protocol):
    """A planar surface whose frame may move with time."""

    dim: int

    def frame(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """World point, unit normal and tangent rows ``(dim-1, dim)`` at time ``t``."""
        ...

    def velocity(self, t: float, x: np.ndarray) -> np.ndarray:
        """Velocity of the surface's material point at world position ``x``."""
        ...


def _unit(v: object, n: int, what: str) -> np.ndarray:
    a = np.asarray(v, dtype=float).reshape(-1)
    if a.shape != (n,):
        raise ShapeError(f"{what}: expected {n} values, got shape {a.shape}")
    if not np.isfinite(a).all():
        raise NonFiniteError(f"{what}: contains NaN or inf")
    nrm = np.linalg.norm(a)
    if nrm == 0:
        raise MCPInputError(f"{what}: zero vector")
    return a / nrm


def tangent_basis(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Orthonormal :math:`(\hat t, \hat o)` with :math:`\hat t\times\hat o = \hat n`."""
    a = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    t = a - (a @ n) * n
    t /= np.linalg.norm(t)
    return t, np.cross(n, t)


@dataclass
class PlaneSurface:
    r"""The plane :math:`\{x: \hat n_\mathrm{loc}\cdot(x - p_\mathrm{loc}) = 0\}` of a moving frame.

    Parameters
    ----------
    point, normal
        A point and the outward unit normal in the frame's coordinates.
    motion
        An object with ``position(t)``, ``rotation(t)`` and ``point_velocity(t, x)`` (a
        :class:`~.plate.PlateMotion` or :class:`~.plate.StaticFrame`); ``None`` = static.
    """

    point: np.ndarray = field(default_factory=lambda: np.zeros(3))
    normal: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    motion: object | None = None
    dim: int = 3

    def __post_init__(self) -> None:
        p = np.asarray(self.point, dtype=float).reshape(-1)
        if p.shape != (3,) or not np.isfinite(p).all():
            raise ShapeError("PlaneSurface.point must be 3 finite numbers")
        self.point = p
        self.normal = _unit(self.normal, 3, "PlaneSurface.normal")
        self._t, self._o = tangent_basis(self.normal)

    def frame(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self.motion is None:
            return self.point, self.normal, np.vstack([self._t, self._o])
        R = self.motion.rotation(t)  # type: ignore[attr-defined]
        c = self.motion.position(t)  # type: ignore[attr-defined]
        return c + R @ self.point, R @ self.normal, np.vstack([R @ self._t, R @ self._o])

    def velocity(self, t: float, x: np.ndarray) -> np.ndarray:
        if self.motion is None:
            return np.zeros(3)
        return self.motion.point_velocity(t, x)  # type: ignore[attr-defined]


@dataclass
class LineSurface2D:
    r"""A static line :math:`\{x\in\mathbb{R}^2: \hat n\cdot(x-p) = 0\}` moving with constant velocity
    ``velocity`` along itself (a conveyor), for planar bodies."""

    point: np.ndarray = field(default_factory=lambda: np.zeros(2))
    normal: np.ndarray = field(default_factory=lambda: np.array([0.0, 1.0]))
    belt_speed: float = 0.0
    dim: int = 2

    def __post_init__(self) -> None:
        p = np.asarray(self.point, dtype=float).reshape(-1)
        if p.shape != (2,) or not np.isfinite(p).all():
            raise ShapeError("LineSurface2D.point must be 2 finite numbers")
        self.point = p
        self.normal = _unit(self.normal, 2, "LineSurface2D.normal")
        if not math.isfinite(self.belt_speed):
            raise NonFiniteError("LineSurface2D.belt_speed must be finite")
        self._t = np.array([self.normal[1], -self.normal[0]])

    def frame(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.point, self.normal, self._t[None, :]

    def velocity(self, t: float, x: np.ndarray) -> np.ndarray:
        return self.belt_speed * self._t


@dataclass
class Contact:
    """A body point in potential contact with a surface, with friction coefficient ``mu``."""

    surface: Surface
    mu: float
    body_point: np.ndarray | None = None

    def __post_init__(self) -> None:
        mu = float(self.mu)
        if not math.isfinite(mu):
            raise NonFiniteError(f"Contact.mu must be finite, got {self.mu!r}")
        if mu < 0:
            raise MCPInputError(f"Contact.mu must be >= 0, got {self.mu!r}")
        self.mu = mu
        d = self.surface.dim
        if self.body_point is None:
            self.body_point = np.zeros(d)
        bp = np.asarray(self.body_point, dtype=float).reshape(-1)
        if bp.shape != (d,) or not np.isfinite(bp).all():
            raise ShapeError(f"Contact.body_point must be {d} finite numbers for a {d}-D surface")
        self.body_point = bp


@dataclass
class ContactGeometry:
    """Per-contact data of one step (shapes: ``nc`` or ``(nc, nv)``; NumPy arrays, or CasADi
    expressions when built with the CasADi namespace)."""

    psi: Any
    Wn: Any
    Wt: Any
    Wo: Any
    ut: Any
    uo: Any
    mu: np.ndarray


def contact_geometry(
    body: Body, q: Any, contacts: list[Contact], t_next: Any, xp: ArrayNamespace = NUMPY
) -> ContactGeometry:
    """Gaps, wrenches and surface velocities of every contact (module docstring).

    Written against the array namespace ``xp`` (NumPy by default; CasADi for horizons, where
    ``q`` is symbolic and only surfaces without a prescribed motion are supported, since a
    plate's motion is evaluated numerically).
    """
    nv = body.nv
    psi, Wn, Wt, Wo, ut, uo = [], [], [], [], [], []
    for i, c in enumerate(contacts):
        if not xp.numeric and getattr(c.surface, "motion", None) is not None:
            raise MCPInputError(
                f"contact {i}: the surface moves with a numeric motion ({type(c.surface.motion).__name__}); "
                "a symbolic (horizon) step supports static surfaces only"
            )
        x = body.point_world(q, c.body_point, xp)
        J = body.point_jacobian(q, c.body_point, xp)
        p, n, T = c.surface.frame(t_next)
        us = c.surface.velocity(t_next, x)
        psi.append(xp.dot(n, x - p))
        Wn.append(xp.matmul(J.T, n))
        Wt.append(xp.matmul(J.T, T[0]))
        ut.append(xp.dot(T[0], us))
        if T.shape[0] > 1:
            Wo.append(xp.matmul(J.T, T[1]))
            uo.append(xp.dot(T[1], us))
        else:
            Wo.append(np.zeros(nv))
            uo.append(0.0)
    mu = np.array([c.mu for c in contacts])
    return ContactGeometry(
        xp.vector(psi), xp.stack_rows(Wn), xp.stack_rows(Wt), xp.stack_rows(Wo),
        xp.vector(ut), xp.vector(uo), mu,
    )  # fmt: skip
