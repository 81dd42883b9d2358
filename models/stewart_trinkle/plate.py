r"""Kinematically driven plates (Berard et al. §2–3 and Appendix A).

A plate motion :math:`g(t)` gives the pose of the plate frame: origin :math:`c(t)` and
orientation :math:`\epsilon(t)` (unit quaternion), with linear velocity :math:`\dot c(t)` and
world-frame angular velocity :math:`\omega(t)`. The velocity of the plate's material point at
world position :math:`x` is :math:`\dot c + \omega\times(x - c)` (the kinematic term of eq 8).

Plate controllers are *acceleration* profiles (Appendix A). For sinusoidal controllers
:math:`\ddot p_i = A_i\sin(Bt + C_i)` and :math:`\alpha_i = a_i\sin(b t + c_i)`:

.. math::
    \dot p_i = -\frac{A_i}{B}\cos(Bt+C_i),\quad p_i = -\frac{A_i}{B^2}\sin(Bt+C_i),\quad
    \omega_i = -\frac{a_i}{b}\cos(bt+c_i)

(the zero-mean antiderivatives), and the orientation solves eq (2),
:math:`\dot\epsilon = J(\epsilon)\,\omega(t)`, by classical fourth-order Runge–Kutta with the
initial quaternion :math:`\epsilon(0)` chosen, as in Appendix A, so that every Euler angle is
symmetric about zero over one period.

:class:`VosePlate` is the rotating plate of §3.1, eq (16): rotation about the world
:math:`y` axis by :math:`\theta(t)` (piecewise quadratic, angular acceleration :math:`\pm\alpha`),
with the plate surface a distance :math:`d` above the axis.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError
from mcpkit.models.stewart_trinkle.bodies import quat_mul, quat_rate_matrix, quat_to_rot


def rot_to_euler(R: np.ndarray) -> np.ndarray:
    r"""Fixed-axis angles :math:`(\phi_x, \phi_y, \phi_z)` with :math:`R = R_z R_y R_x`."""
    return np.array(
        [
            math.atan2(R[2, 1], R[2, 2]),
            -math.asin(max(-1.0, min(1.0, R[2, 0]))),
            math.atan2(R[1, 0], R[0, 0]),
        ]
    )


def euler_to_quat(angles: np.ndarray) -> np.ndarray:
    r"""Unit quaternion of :math:`R_z(\phi_z) R_y(\phi_y) R_x(\phi_x)`."""
    ax, ay, az = np.asarray(angles, dtype=float) / 2.0
    qx = np.array([math.cos(ax), math.sin(ax), 0.0, 0.0])
    qy = np.array([math.cos(ay), 0.0, math.sin(ay), 0.0])
    qz = np.array([math.cos(az), 0.0, 0.0, math.sin(az)])
    return quat_mul(qz, quat_mul(qy, qx))


def rk4_quaternion(
    omega: object, e0: np.ndarray, t0: float, t1: float, n_steps: int
) -> tuple[np.ndarray, np.ndarray]:
    r"""Integrate :math:`\dot\epsilon = J(\epsilon)\omega(t)` (eq 2) by classical RK4.

    Parameters
    ----------
    omega
        Callable ``t -> (3,)`` world-frame angular velocity.
    e0
        Initial quaternion.
    t0, t1, n_steps
        Time span and number of equal steps.

    Returns
    -------
    (t, E)
        Times ``(n_steps+1,)`` and quaternions ``(n_steps+1, 4)``, renormalised after each step.
    """
    if n_steps < 1:
        raise MCPInputError("rk4_quaternion: n_steps must be >= 1")
    ts = np.linspace(t0, t1, n_steps + 1)
    E = np.empty((n_steps + 1, 4))
    e = np.asarray(e0, dtype=float) / np.linalg.norm(e0)
    E[0] = e
    for k in range(n_steps):
        e = _rk4_step(omega, e, ts[k], ts[k + 1] - ts[k])
        E[k + 1] = e
    return ts, E


def _rk4_step(omega: object, e: np.ndarray, t: float, dt: float) -> np.ndarray:
    f = lambda tt, ee: quat_rate_matrix(ee) @ omega(tt)  # noqa: E731
    k1 = f(t, e)
    k2 = f(t + dt / 2, e + dt / 2 * k1)
    k3 = f(t + dt / 2, e + dt / 2 * k2)
    k4 = f(t + dt, e + dt * k3)
    out = e + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return out / np.linalg.norm(out)


class PlateMotion:
    r"""Base class: pose and velocity of a kinematic plate frame :math:`g(t)`.

    Subclasses provide :meth:`position`, :meth:`linear_velocity` and
    :meth:`angular_velocity`; the orientation is integrated here by RK4 (Appendix A) on a
    grid of ``substeps`` steps per ``period`` (cached), from the symmetric initial quaternion
    of :meth:`symmetric_initial_quaternion` unless ``e0`` is given.
    """

    period: float = 1.0
    substeps: int = 2000

    def __init__(self, e0: np.ndarray | None = None, symmetric: bool = True) -> None:
        self._dt = self.period / self.substeps
        if e0 is not None:
            e = np.asarray(e0, dtype=float).reshape(-1)
            if e.shape != (4,) or not np.isfinite(e).all() or np.linalg.norm(e) == 0:
                raise ShapeError("e0 must be 4 finite numbers, not all zero")
            self.e0 = e / np.linalg.norm(e)
        elif symmetric:
            self.e0 = self.symmetric_initial_quaternion()
        else:
            self.e0 = np.array([1.0, 0.0, 0.0, 0.0])
        self._nodes = [self.e0.copy()]
        self._qcache: dict[float, np.ndarray] = {}

    # -- to be provided by subclasses -------------------------------------------------
    def position(self, t: float) -> np.ndarray:
        """Origin :math:`c(t)` of the plate frame."""
        raise NotImplementedError

    def linear_velocity(self, t: float) -> np.ndarray:
        r""":math:`\dot c(t)`."""
        raise NotImplementedError

    def angular_velocity(self, t: float) -> np.ndarray:
        r"""World-frame :math:`\omega(t)`."""
        raise NotImplementedError

    # -- orientation -------------------------------------------------------------------
    def symmetric_initial_quaternion(self, iterations: int = 3) -> np.ndarray:
        r"""Appendix A: :math:`\epsilon(0)` making each Euler angle symmetric about zero.

        Integrate one period from :math:`\epsilon(0)`, take the fixed-axis angles, compute the
        offsets :math:`-(\max+\min)/2`, and pre-multiply :math:`\epsilon(0)` by the offset
        quaternion; repeated ``iterations`` times (the first pass is the paper's procedure,
        the next ones remove the small coupling between axes).
        """
        e0 = np.array([1.0, 0.0, 0.0, 0.0])
        for _ in range(iterations):
            _, E = rk4_quaternion(self.angular_velocity, e0, 0.0, self.period, self.substeps)
            ang = np.array([rot_to_euler(quat_to_rot(e)) for e in E])
            offset = -(ang.max(axis=0) + ang.min(axis=0)) / 2.0
            e0 = quat_mul(euler_to_quat(offset), e0)
            e0 /= np.linalg.norm(e0)
        return e0

    def quaternion(self, t: float) -> np.ndarray:
        r""":math:`\epsilon(t)` by RK4 from the cached grid node below ``t``."""
        if t < 0:
            raise MCPInputError(f"plate time must be >= 0, got {t}")
        k = int(t // self._dt)
        while len(self._nodes) <= k:
            j = len(self._nodes) - 1
            self._nodes.append(_rk4_step(self.angular_velocity, self._nodes[j], j * self._dt, self._dt))
        if t in self._qcache:
            return self._qcache[t]
        tau = t - k * self._dt
        e = self._nodes[k]
        out = e if tau <= 1e-15 else _rk4_step(self.angular_velocity, e, k * self._dt, tau)
        if len(self._qcache) > 64:
            self._qcache.clear()
        self._qcache[t] = out
        return out

    def rotation(self, t: float) -> np.ndarray:
        """Plate -> world rotation :math:`R(\\epsilon(t))`."""
        return quat_to_rot(self.quaternion(t))

    def euler_angles(self, t: np.ndarray) -> np.ndarray:
        """Fixed-axis angles of the plate at the times ``t``, shape ``(len(t), 3)``."""
        return np.array([rot_to_euler(self.rotation(float(tt))) for tt in np.atleast_1d(t)])

    def point_velocity(self, t: float, x: np.ndarray) -> np.ndarray:
        r"""Velocity of the plate's material point at world :math:`x`: :math:`\dot c+\omega\times(x-c)`."""
        return self.linear_velocity(t) + np.cross(self.angular_velocity(t), x - self.position(t))


def _vec3(v: object, what: str) -> np.ndarray:
    a = np.asarray(v, dtype=float).reshape(-1)
    if a.shape != (3,):
        raise ShapeError(f"{what}: expected 3 values, got shape {a.shape}")
    if not np.isfinite(a).all():
        raise NonFiniteError(f"{what}: contains NaN or inf")
    return a


class SinusoidalPlate(PlateMotion):
    r"""Plate driven by :math:`\ddot p = A\sin(Bt + C)` and :math:`\alpha = a\sin(Bt + c)` (§5).

    Parameters
    ----------
    lin_amp, lin_phase
        :math:`A` (cm/s²) and :math:`C` per world axis.
    ang_amp, ang_phase
        :math:`a` (rad/s²) and :math:`c` per world axis.
    omega
        Common angular frequency :math:`B` (default :math:`66\pi` rad/s, the 33 Hz of Berard et al.).
    """

    def __init__(
        self,
        lin_amp: object = (0.0, 0.0, 0.0),
        lin_phase: object = (0.0, 0.0, 0.0),
        ang_amp: object = (0.0, 0.0, 0.0),
        ang_phase: object = (0.0, 0.0, 0.0),
        omega: float = 66 * math.pi,
        e0: np.ndarray | None = None,
        symmetric: bool = True,
    ) -> None:
        self.A = _vec3(lin_amp, "lin_amp")
        self.C = _vec3(lin_phase, "lin_phase")
        self.a = _vec3(ang_amp, "ang_amp")
        self.c = _vec3(ang_phase, "ang_phase")
        if not (math.isfinite(omega) and omega > 0):
            raise MCPInputError(f"omega must be positive and finite, got {omega}")
        self.B = float(omega)
        self.period = 2 * math.pi / self.B
        super().__init__(e0=e0, symmetric=symmetric)

    def position(self, t: float) -> np.ndarray:
        return -self.A / self.B**2 * np.sin(self.B * t + self.C)

    def linear_velocity(self, t: float) -> np.ndarray:
        return -self.A / self.B * np.cos(self.B * t + self.C)

    def linear_acceleration(self, t: float) -> np.ndarray:
        r""":math:`\ddot p(t)`."""
        return self.A * np.sin(self.B * t + self.C)

    def angular_velocity(self, t: float) -> np.ndarray:
        return -self.a / self.B * np.cos(self.B * t + self.c)

    def angular_acceleration(self, t: float) -> np.ndarray:
        r""":math:`\alpha(t)`."""
        return self.a * np.sin(self.B * t + self.c)


def centrifuge_plate(**kwargs: object) -> SinusoidalPlate:
    r"""The *Centrifuge* controller of Appendix A: :math:`\alpha_x=100\sin(66\pi t+\pi/2)`,
    :math:`\alpha_y=100\sin(66\pi t+\pi)`. The translational part of the field in Vose et al.
    [24] is not printed in Berard et al.; ``lin_amp``/``lin_phase`` may be passed."""
    return SinusoidalPlate(ang_amp=(100.0, 100.0, 0.0), ang_phase=(math.pi / 2, math.pi, 0.0), **kwargs)


def scaled_circle_plate(**kwargs: object) -> SinusoidalPlate:
    r"""The scaled *Circle* controller, eqs (18)–(19): :math:`\alpha_z = 500\sin(66\pi t)`,
    :math:`\ddot p_z = 8\sin(66\pi t + 3\pi/2)`."""
    return SinusoidalPlate(
        lin_amp=(0.0, 0.0, 8.0), lin_phase=(0.0, 0.0, 1.5 * math.pi), ang_amp=(0.0, 0.0, 500.0), **kwargs
    )


@dataclass
class VoseParameters:
    """Parameters of the rotating plate of Berard et al. §3.1 (defaults: the paper's values)."""

    alpha: float = 180.0
    """Angular acceleration magnitude α [rad/s²]."""
    period: float = 0.03
    """Period T [s]."""
    depth: float = 5.0
    """Distance d of the rotation axis below the plate surface [cm]."""

    def __post_init__(self) -> None:
        for name in ("alpha", "period", "depth"):
            v = getattr(self, name)
            if not math.isfinite(v):
                raise NonFiniteError(f"VoseParameters.{name} must be finite")
            if v <= 0:
                raise MCPInputError(f"VoseParameters.{name} must be positive, got {v}")


class VosePlate(PlateMotion):
    r"""Rotation about the world :math:`y` axis by :math:`\theta(t)` of eq (16).

    .. math::
        \theta(t) = \begin{cases}\tfrac12\alpha t^2 - \tfrac14\alpha T t, & 0\le t<T/2\\
        -\tfrac12\alpha t^2 + \tfrac34\alpha T t - \tfrac14\alpha T^2, & T/2\le t<T\end{cases}

    (periodic), so :math:`\ddot\theta = \pm\alpha`, :math:`\dot\theta(0) = -\alpha T/4` and
    :math:`|\theta|\le\alpha T^2/32`. The world frame is centred on the axis; the plate surface
    is the plane :math:`z_\mathrm{plate} = d`. With the right-handed rotation about :math:`+y`
    the plate's :math:`x` axis is :math:`(\cos\theta, 0, -\sin\theta)`.
    The orientation is integrated by RK4 like any plate; :meth:`theta` gives the closed form
    (eq 35) for checks.
    """

    def __init__(self, params: VoseParameters | None = None, e0: np.ndarray | None = None) -> None:
        self.params = params or VoseParameters()
        self.period = self.params.period
        super().__init__(e0=e0, symmetric=e0 is None)

    def theta(self, t: float | np.ndarray) -> np.ndarray:
        """Plate angle of eq (16)."""
        a, T = self.params.alpha, self.params.period
        s = np.mod(t, T)
        return np.where(
            s < T / 2, 0.5 * a * s**2 - 0.25 * a * T * s, -0.5 * a * s**2 + 0.75 * a * T * s - 0.25 * a * T**2
        )

    def theta_dot(self, t: float | np.ndarray) -> np.ndarray:
        r""":math:`\dot\theta(t)`."""
        a, T = self.params.alpha, self.params.period
        s = np.mod(t, T)
        return np.where(s < T / 2, a * s - 0.25 * a * T, -a * s + 0.75 * a * T)

    def theta_ddot(self, t: float | np.ndarray) -> np.ndarray:
        r""":math:`\ddot\theta(t) = \pm\alpha` (the acceleration profile)."""
        s = np.mod(t, self.params.period)
        return np.where(s < self.params.period / 2, self.params.alpha, -self.params.alpha)

    def position(self, t: float) -> np.ndarray:
        return np.zeros(3)

    def linear_velocity(self, t: float) -> np.ndarray:
        return np.zeros(3)

    def angular_velocity(self, t: float) -> np.ndarray:
        a, T = self.params.alpha, self.params.period
        s = math.fmod(t, T) if t >= 0 else float(np.mod(t, T))
        return np.array([0.0, a * s - 0.25 * a * T if s < T / 2 else -a * s + 0.75 * a * T, 0.0])


@dataclass
class StaticFrame:
    """A motionless frame (identity pose) for static surfaces."""

    origin: np.ndarray = field(default_factory=lambda: np.zeros(3))

    def position(self, t: float) -> np.ndarray:
        return self.origin

    def rotation(self, t: float) -> np.ndarray:
        return np.eye(3)

    def point_velocity(self, t: float, x: np.ndarray) -> np.ndarray:
        return np.zeros(3)
