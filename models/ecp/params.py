r"""Parameters of the equivalent-contact-point (ECP) slider (Xie and Chakraborty, Xie & Chakraborty).

A rigid slider of mass :math:`m` and yaw inertia :math:`I_z` rests on a horizontal plane on a
convex patch; its centre of mass (CM) is :math:`q_z` above the plane. Friction follows the
ellipsoid model (Xie and Chakraborty eq 13)

.. math::

    (\lambda_t/e_t)^2 + (\lambda_o/e_o)^2 + (\lambda_r/e_r)^2 \le \mu^2 \lambda_n^2 ,

and the normal force balances gravity, :math:`\lambda_n = m g` (eq 8), so the normal impulse
per step is :math:`p_n = m g h`.

The state vector used by every ECP model is
:math:`x = (q_x, q_y, \theta_z, v_x, v_y, w_z)` (world frame, CM position and velocity).

Applied loads are horizontal with a moment about the normal axis only
(:math:`\lambda_{x\tau} = \lambda_{y\tau} = 0`, as assumed below Xie and Chakraborty eq 10).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError
from mcpkit.models.arrays import NUMPY, ArrayNamespace
from mcpkit.problems.arrays import as_real

__all__ = [
    "STATE_NAMES",
    "AppliedLoad",
    "EdgePusher",
    "Load",
    "PushForce",
    "SliderParams",
    "paper_push",
    "paper_slider",
    "square_patch",
]

STATE_NAMES: tuple[str, ...] = ("q_x", "q_y", "theta_z", "v_x", "v_y", "w_z")
"""Names of the six state components, in order."""

AppliedLoad = Callable[[float, np.ndarray], np.ndarray]
r"""``load(t, state) -> (lambda_x, lambda_y, lambda_ztau)``: applied force [N] (world frame)
and moment about the normal axis through the CM [N m] at time ``t`` (NumPy only: a model with
such a load simulates but cannot be a horizon step; see :class:`Load`)."""


@runtime_checkable
class Load(Protocol):
    r"""An applied load written once against an array namespace, with optional inputs.

    :meth:`wrench` returns the world-frame :math:`(\lambda_x, \lambda_y, \lambda_{z\tau})` at
    time ``t``, state ``state``, the step's controls ``u`` (``n_control`` values) and the design
    ``theta`` (``n_design`` values), using only ``xp`` operations, so the same load serves a
    simulation (NumPy) and a horizon (CasADi).
    """

    n_control: int
    n_design: int

    def wrench(self, xp: ArrayNamespace, t: Any, state: Any, u: Any, theta: Any) -> Any:
        """World-frame force and yaw moment."""
        ...


def _finite(name: str, value: float, *, positive: bool = False, nonneg: bool = False) -> float:
    v = as_real(value, name)  # not a bool, a string, NaN or inf
    if positive and v <= 0:
        raise MCPInputError(f"{name} must be > 0, got {v}")
    if nonneg and v < 0:
        raise MCPInputError(f"{name} must be >= 0, got {v}")
    return v


def square_patch(length: float, width: float | None = None) -> np.ndarray:
    """Vertices (counter-clockwise, body frame, centred on the CM) of a ``length x width`` patch.

    Parameters
    ----------
    length, width
        Side lengths [m] along the body x and y axes (``width`` defaults to ``length``).

    Returns
    -------
    numpy.ndarray
        Shape ``(4, 2)``.
    """
    L = _finite("patch length", length, positive=True)
    W = L if width is None else _finite("patch width", width, positive=True)
    return np.array([[-L / 2, -W / 2], [L / 2, -W / 2], [L / 2, W / 2], [-L / 2, W / 2]])


def _check_patch(vertices: np.ndarray) -> np.ndarray:
    V = np.asarray(vertices, dtype=float)
    if V.ndim != 2 or V.shape[1] != 2 or V.shape[0] < 3:
        raise ShapeError(f"patch vertices must have shape (k>=3, 2), got {V.shape}")
    if not np.isfinite(V).all():
        raise NonFiniteError("patch vertices contain NaN or inf")
    E = np.roll(V, -1, axis=0) - V
    cross = E[:, 0] * np.roll(E, -1, axis=0)[:, 1] - E[:, 1] * np.roll(E, -1, axis=0)[:, 0]
    if not (cross > 0).all():
        raise MCPInputError("patch vertices must describe a strictly convex polygon listed counter-clockwise")
    if _polygon_distance(V, np.zeros(2)) > 0:
        raise MCPInputError("the CM's projection (body origin) must lie inside the patch")
    return V


def _polygon_distance(V: np.ndarray, pts: np.ndarray) -> np.ndarray | float:
    """Largest signed edge distance of ``pts`` (shape ``(..., 2)``): > 0 outside, <= 0 inside."""
    E = np.roll(V, -1, axis=0) - V
    nrm = np.stack([E[:, 1], -E[:, 0]], axis=1) / np.linalg.norm(E, axis=1)[:, None]
    P = np.asarray(pts, dtype=float)
    d = (P[..., None, :] - V) @ np.eye(2)
    s = np.einsum("...kj,kj->...k", d, nrm)
    return s.max(axis=-1)


@dataclass(frozen=True)
class SliderParams:
    r"""Physical and numerical parameters of the ECP slider (Xie and Chakraborty §3, §6).

    Attributes
    ----------
    m
        Mass [kg], ``> 0``.
    I_z
        Moment of inertia about the normal axis through the CM [kg m^2], ``> 0``.
    mu
        Coefficient of friction, ``>= 0``.
    e_t, e_o
        Friction-ellipsoid semi-axes for the tangential forces (dimensionless), ``> 0``.
    e_r
        Friction-ellipsoid semi-axis for the frictional moment [m], ``> 0``.
    q_z
        Height of the CM above the support plane [m], ``>= 0``.
    g
        Gravitational acceleration [m/s^2], ``> 0``.
    h
        Time step [s], ``> 0``.
    patch
        Convex contact patch, vertices ``(k, 2)`` in the body frame (CM at the origin),
        counter-clockwise.
    """

    m: float = 0.5
    I_z: float = 0.5 * (0.05**2 + 0.05**2) / 12.0
    mu: float = 0.31
    e_t: float = 1.0
    e_o: float = 1.0
    e_r: float = 0.01
    q_z: float = 0.08
    g: float = 9.8
    h: float = 0.01
    patch: np.ndarray = field(default_factory=lambda: square_patch(0.05))

    def __post_init__(self) -> None:
        for name in ("m", "I_z", "e_t", "e_o", "e_r", "g", "h"):
            object.__setattr__(self, name, _finite(name, getattr(self, name), positive=True))
        for name in ("mu", "q_z"):
            object.__setattr__(self, name, _finite(name, getattr(self, name), nonneg=True))
        object.__setattr__(self, "patch", _check_patch(self.patch))

    @property
    def p_n(self) -> float:
        r"""Normal impulse per step :math:`p_n = m g h` (Xie and Chakraborty eq 8 times :math:`h`)."""
        return self.m * self.g * self.h

    def patch_distance(self, offset_body: np.ndarray) -> np.ndarray | float:
        """Signed distance-like measure of body-frame points to the patch (> 0: outside) [m]."""
        return _polygon_distance(self.patch, offset_body)

    def check_state(self, state: np.ndarray) -> np.ndarray:
        """Validate a state vector ``(q_x, q_y, theta_z, v_x, v_y, w_z)``; return it as floats."""
        x = np.asarray(state, dtype=float).reshape(-1)
        if x.shape != (6,):
            raise ShapeError(f"state must have 6 entries {STATE_NAMES}, got shape {x.shape}")
        if not np.isfinite(x).all():
            raise NonFiniteError(f"state contains NaN or inf: {x}")
        return x


@dataclass(frozen=True)
class PushForce:
    r"""A pusher force of magnitude :math:`F(t) = a + b\cos(2\pi t/T)` fixed to the body.

    The force acts at ``point`` (body frame) along the unit body-frame ``direction``; in the
    world frame it is :math:`R(\theta_z)\,F(t)\,d` with moment
    :math:`\lambda_{z\tau} = (R\rho)\times(R F d) = F\,(\rho \times d)` about the CM.

    Attributes
    ----------
    a, b
        Mean and amplitude of the force magnitude [N].
    period
        Period :math:`T` [s], ``> 0``.
    point
        Point of application in the body frame [m].
    direction
        Direction in the body frame (normalised on construction).
    """

    a: float = 2.2
    b: float = 2.0
    period: float = 0.1
    point: tuple[float, float] = (-0.025, -0.0025)
    direction: tuple[float, float] = (1.0, 0.0)

    def __post_init__(self) -> None:
        _finite("push mean a", self.a)
        _finite("push amplitude b", self.b)
        _finite("push period", self.period, positive=True)
        pt = np.asarray(self.point, dtype=float)
        d = np.asarray(self.direction, dtype=float)
        if pt.shape != (2,) or d.shape != (2,):
            raise ShapeError("push point and direction must each have 2 entries")
        if not (np.isfinite(pt).all() and np.isfinite(d).all()):
            raise NonFiniteError("push point/direction contain NaN or inf")
        nd = float(np.hypot(*d))
        if nd == 0:
            raise MCPInputError("push direction must be non-zero")
        object.__setattr__(self, "point", (float(pt[0]), float(pt[1])))
        object.__setattr__(self, "direction", (float(d[0] / nd), float(d[1] / nd)))

    n_control = 0
    n_design = 0

    def magnitude(self, t: float | np.ndarray) -> float | np.ndarray:
        """:math:`F(t) = a + b\\cos(2\\pi t / T)` [N]."""
        return self.a + self.b * np.cos(2.0 * np.pi * np.asarray(t) / self.period)

    def wrench(self, xp: ArrayNamespace, t: Any, state: Any, u: Any = None, theta: Any = None) -> Any:
        """World-frame ``(lambda_x, lambda_y, lambda_ztau)`` at time ``t`` and ``state`` (:class:`Load`)."""
        F = self.a + self.b * xp.cos(2.0 * np.pi * t / self.period)
        c, s = xp.cos(state[2]), xp.sin(state[2])
        dx, dy = self.direction
        rx, ry = self.point
        return xp.vector([F * (c * dx - s * dy), F * (s * dx + c * dy), F * (rx * dy - ry * dx)])

    def __call__(self, t: float, state: np.ndarray) -> np.ndarray:
        """World-frame ``(lambda_x, lambda_y, lambda_ztau)`` at time ``t`` and ``state``."""
        return self.wrench(NUMPY, float(t), np.asarray(state, dtype=float))


@dataclass(frozen=True)
class EdgePusher:
    r"""A point pusher on the edge :math:`x_b = x_e` with a body-frame force as the control.

    Controls :math:`u = (f_n, f_t)` [N] (normal into the edge, along :math:`+x_b`, and
    tangential, along :math:`+y_b`), design :math:`\theta = (\theta_c)`: the contact height on
    the edge [m], so the pusher touches the body point :math:`\rho = (x_e, \theta_c)`. World
    force :math:`R(\theta_z)(f_n, f_t)` and moment :math:`\rho \times (f_n, f_t) = x_e f_t -
    \theta_c f_n`.

    Attributes
    ----------
    edge_x
        :math:`x_e`, body-frame x of the pushed edge [m].
    """

    edge_x: float

    n_control = 2
    n_design = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "edge_x", _finite("edge_x", self.edge_x))

    def wrench(self, xp: ArrayNamespace, t: Any, state: Any, u: Any, theta: Any) -> Any:
        """World-frame force and yaw moment of the push (:class:`Load`)."""
        c, s = xp.cos(state[2]), xp.sin(state[2])
        fn, ft = u[0], u[1]
        return xp.vector([c * fn - s * ft, s * fn + c * ft, self.edge_x * ft - theta[0] * fn])


def paper_slider(h: float = 0.01) -> SliderParams:
    r"""The slider of Xie and Chakraborty §6.1: :math:`m=0.5` kg, :math:`\mu=0.31`, :math:`e_t=e_o=1`,
    :math:`e_r=0.01` m, :math:`q_z=0.08` m, :math:`g=9.8`, square patch of side 0.05 m.

    The paper does not state :math:`I_z`; we take the uniform prism over the patch,
    :math:`I_z = m(L^2+W^2)/12 = 2.083\times10^{-4}` kg m².
    """
    return SliderParams(h=h)


def paper_push() -> PushForce:
    r"""The pusher of Xie and Chakraborty §6.2: :math:`F = 2.2 + 2\cos(2\pi t/0.1)` N, perpendicular to
    the left edge (pointing into the body, :math:`+x_s`), 2.5 mm below the edge's middle."""
    return PushForce()
