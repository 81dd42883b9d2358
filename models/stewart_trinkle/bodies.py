r"""Rigid bodies for Stewart–Trinkle time stepping (Berard, Nguyen, Trinkle and Anderson,
"Sources of error in a simulation of rigid parts on a vibrating rigid plate", §2.1, eqs 1–2).

Every body has a configuration :math:`q` (size ``nq``), a generalised velocity :math:`\nu`
(size ``nv``), a mass matrix :math:`M(q)` and the applied generalised force
:math:`\lambda_\mathrm{app}(q,t) + \lambda_\mathrm{vp}(q,\nu)` of eq (1). A body-fixed point
:math:`r_b` has world velocity :math:`J(q, r_b)\,\nu`; the contact wrenches of eq (7) are
:math:`W_{in} = J^T\hat n_i`, :math:`W_{it} = J^T\hat t_i`, :math:`W_{io} = J^T\hat o_i`.

* :class:`Particle`: :math:`q = x \in \mathbb{R}^3`, :math:`\nu = \dot x`, :math:`M = mI_3`.
* :class:`PlanarBody`: :math:`q = (x, y, \theta)`, :math:`\nu = (\dot x, \dot y, \omega)`,
  :math:`M = \mathrm{diag}(m, m, I)`, in the vertical :math:`(x, y)` plane (gravity along
  :math:`-y`).
* :class:`RigidBody3D`: :math:`q = (x, e_s, e_x, e_y, e_z)` (unit quaternion),
  :math:`\nu = (v, \omega)` in the world frame, :math:`M = \mathrm{diag}(mI_3, R\,{}^bI R^T)`,
  :math:`\lambda_\mathrm{vp} = (0, -\omega\times I\omega)` and the kinematic map
  :math:`\dot q = G(q)\nu` with the :math:`4\times 3` block :math:`J(q)` of §2.1.

Units are SI by default (m, kg, s; gravity :math:`g_0 = 9.80665` m/s²). A body built with
``units="cgs"`` or its named constructor ``.cgs(...)`` (e.g. :meth:`Particle.cgs`) works in cm, g
and s with :math:`g_0 = 980.665` cm/s², as the vibrating-plate paper states its examples.

The position update of eq (9) is :math:`q^{\ell+1} = q^\ell + hG(q^\ell)\nu^{\ell+1}`; the
quaternion is renormalised after the update (the Euler step leaves the unit sphere by
:math:`O(h^2)`).

Every state-dependent method takes an array namespace ``xp`` (:mod:`mcpkit.models.arrays`,
default NumPy), so the step map of :class:`~.step.StewartTrinkleStep` is written once for
simulation and for horizons (CasADi symbols).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError
from mcpkit.models.arrays import NUMPY, ArrayNamespace
from mcpkit.problems.arrays import as_real

GRAVITY_SI = 9.80665
"""Standard gravity :math:`g_0` in m/s² (the default of every body)."""

GRAVITY_CGS = 980.665
"""Standard gravity in cm/s², for models stated in centimetre-gram-second units (Berard, Nguyen,
Trinkle and Anderson's vibrating plate uses g = 980.665 cm/s²)."""

Units = Literal["SI", "cgs"]
"""Unit system of a body: ``"SI"`` (m, kg, s; the default) or ``"cgs"`` (cm, g, s)."""

UNIT_NAMES = {"SI": "SI (m, kg, s)", "cgs": "cgs (cm, g, s)"}
"""Printable name of each unit system, as summaries state it."""


def standard_gravity(units: str = "SI") -> float:
    r"""Standard gravity :math:`g_0` in ``units``: 9.80665 m/s² (``"SI"``) or 980.665 cm/s² (``"cgs"``)."""
    if units == "SI":
        return GRAVITY_SI
    if units == "cgs":
        return GRAVITY_CGS
    raise MCPInputError(f"units must be 'SI' or 'cgs', got {units!r}")


def _gravity_vector(gravity: object, units: str, n: int, what: str) -> np.ndarray:
    r"""``gravity`` checked as ``n`` finite values, or :math:`(0, \dots, -g_0)` in ``units`` when None."""
    g0 = standard_gravity(units)
    if gravity is None:
        return np.array([0.0] * (n - 1) + [-g0])
    return _vec(gravity, n, what)


def _positive(value: float, what: str) -> float:
    v = as_real(value, what)  # not a bool, a string, NaN or inf
    if v <= 0.0:
        raise MCPInputError(f"{what} must be positive, got {value!r}")
    return v


def _vec(value: object, n: int, what: str) -> np.ndarray:
    try:
        a = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise MCPInputError(f"{what}: not numeric ({exc})") from exc
    if a.shape != (n,):
        raise ShapeError(f"{what}: expected {n} values, got shape {a.shape}")
    if not np.isfinite(a).all():
        raise NonFiniteError(f"{what}: contains NaN or inf")
    return a


def skew(a: Any, xp: ArrayNamespace = NUMPY) -> Any:
    r"""The cross-product matrix :math:`[a]_\times` with :math:`[a]_\times b = a\times b`."""
    return xp.matrix([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def quat_to_rot(e: Any, xp: ArrayNamespace = NUMPY) -> Any:
    r"""Rotation matrix of the unit quaternion :math:`(e_s, e_x, e_y, e_z)` (body -> world)."""
    en = xp.copy(e) / xp.norm(e)
    s, x, y, z = en[0], en[1], en[2], en[3]
    return xp.matrix(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - s * z), 2 * (x * z + s * y)],
            [2 * (x * y + s * z), 1 - 2 * (x * x + z * z), 2 * (y * z - s * x)],
            [2 * (x * z - s * y), 2 * (y * z + s * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def quat_rate_matrix(e: Any, xp: ArrayNamespace = NUMPY) -> Any:
    r"""The :math:`4\times3` map :math:`J(q)` of §2.1: :math:`\dot\epsilon = J\omega`.

    .. math::
        J = \tfrac12\begin{bmatrix}-e_x&-e_y&-e_z\\ e_s&e_z&-e_y\\ -e_z&e_s&e_x\\ e_y&-e_x&e_s
        \end{bmatrix}

    with :math:`\omega` in the world frame.
    """
    s, x, y, z = e[0], e[1], e[2], e[3]
    return 0.5 * xp.matrix([[-x, -y, -z], [s, z, -y], [-z, s, x], [y, -x, s]])


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product :math:`a\\,b` of quaternions stored as ``(s, x, y, z)``."""
    s1, v1 = a[0], np.asarray(a[1:])
    s2, v2 = b[0], np.asarray(b[1:])
    return np.concatenate([[s1 * s2 - v1 @ v2], s1 * v2 + s2 * v1 + np.cross(v1, v2)])


@dataclass
class Particle:
    r"""A point mass: :math:`q=x\in\mathbb{R}^3`, :math:`M=mI_3`, gravity :math:`-mg\hat z`.

    Parameters
    ----------
    mass
        :math:`m > 0` [kg, or g in cgs].
    gravity
        Gravity vector; default :math:`(0, 0, -g_0)` with :math:`g_0` the standard gravity in
        ``units`` (:math:`9.80665` m/s², or :math:`980.665` cm/s² in cgs).
    units
        ``"SI"`` (default) or ``"cgs"``; :meth:`cgs` is the named constructor for the latter.
    """

    mass: float = 1.0
    gravity: np.ndarray | None = None
    units: Units = "SI"
    nq: int = 3
    nv: int = 3
    dim: int = 3

    def __post_init__(self) -> None:
        self.mass = _positive(self.mass, "Particle.mass")
        self.gravity = _gravity_vector(self.gravity, self.units, 3, "Particle.gravity")

    @classmethod
    def cgs(cls, mass: float = 1.0, gravity: object = None) -> Particle:
        """A particle in centimetre-gram-second units (mass in g, gravity 980.665 cm/s² by default)."""
        return cls(mass=mass, gravity=gravity, units="cgs")  # type: ignore[arg-type]

    def mass_matrix(self, q: Any, xp: ArrayNamespace = NUMPY) -> Any:
        """:math:`M = mI_3`."""
        return self.mass * np.eye(3)

    def forces(self, q: Any, v: Any, t: Any, xp: ArrayNamespace = NUMPY) -> Any:
        r""":math:`\lambda_\mathrm{app} = m\,g`; no velocity-product term for a particle."""
        return self.mass * self.gravity

    def point_world(self, q: Any, r_body: np.ndarray, xp: ArrayNamespace = NUMPY) -> Any:
        """World position of a body point (a particle has only its own position)."""
        return xp.copy(q[:3])

    def point_jacobian(self, q: Any, r_body: np.ndarray, xp: ArrayNamespace = NUMPY) -> Any:
        r""":math:`J = I_3` (the point velocity is :math:`\nu`)."""
        return np.eye(3)

    def integrate(self, q: Any, v: Any, h: float, xp: ArrayNamespace = NUMPY) -> Any:
        r""":math:`q^{\ell+1} = q^\ell + h\nu^{\ell+1}` (eq 9, second line)."""
        return q + h * v


@dataclass
class PlanarBody:
    r"""A rigid body in the vertical plane: :math:`q=(x,y,\theta)`, :math:`M=\mathrm{diag}(m,m,I)`.

    Contact points are given in the body frame; gravity :math:`g` acts along :math:`-y`. The
    default :math:`g` is the standard gravity in ``units`` (9.80665 m/s² in ``"SI"``, the default;
    980.665 cm/s² in ``"cgs"``, see :meth:`cgs`).
    """

    mass: float = 1.0
    inertia: float = 1.0
    gravity: float | None = None
    units: Units = "SI"
    nq: int = 3
    nv: int = 3
    dim: int = 2

    def __post_init__(self) -> None:
        self.mass = _positive(self.mass, "PlanarBody.mass")
        self.inertia = _positive(self.inertia, "PlanarBody.inertia")
        g0 = standard_gravity(self.units)
        g = g0 if self.gravity is None else float(self.gravity)
        if not np.isfinite(g):
            raise NonFiniteError("PlanarBody.gravity must be finite")
        self.gravity = g

    @classmethod
    def cgs(cls, mass: float = 1.0, inertia: float = 1.0, gravity: float | None = None) -> PlanarBody:
        """A planar body in centimetre-gram-second units (g, g cm², 980.665 cm/s² by default)."""
        return cls(mass=mass, inertia=inertia, gravity=gravity, units="cgs")

    def mass_matrix(self, q: Any, xp: ArrayNamespace = NUMPY) -> Any:
        r""":math:`M = \mathrm{diag}(m, m, I)`."""
        return np.diag([self.mass, self.mass, self.inertia])

    def forces(self, q: Any, v: Any, t: Any, xp: ArrayNamespace = NUMPY) -> Any:
        """Gravity :math:`(0, -mg, 0)`; no velocity product in the plane."""
        return np.array([0.0, -self.mass * self.gravity, 0.0])

    @staticmethod
    def _rot(theta: Any, xp: ArrayNamespace = NUMPY) -> Any:
        c, s = xp.cos(theta), xp.sin(theta)
        return xp.matrix([[c, -s], [s, c]])

    def point_world(self, q: Any, r_body: np.ndarray, xp: ArrayNamespace = NUMPY) -> Any:
        r""":math:`x + R(\theta)r_b`."""
        return q[:2] + xp.matmul(self._rot(q[2], xp), np.asarray(r_body, dtype=float))

    def point_jacobian(self, q: Any, r_body: np.ndarray, xp: ArrayNamespace = NUMPY) -> Any:
        r""":math:`J = [I_2,\ R(\theta)\,(-r_{b,y}, r_{b,x})^T]` (velocity :math:`v+\omega\times r`)."""
        r = xp.matmul(self._rot(q[2], xp), np.asarray(r_body, dtype=float))
        return xp.matrix([[1.0, 0.0, -r[1]], [0.0, 1.0, r[0]]])

    def integrate(self, q: Any, v: Any, h: float, xp: ArrayNamespace = NUMPY) -> Any:
        r""":math:`q^{\ell+1} = q^\ell + h\nu^{\ell+1}`."""
        return q + h * v


@dataclass
class RigidBody3D:
    r"""A 3-D rigid body with unit-quaternion orientation (§2.1).

    Parameters
    ----------
    mass
        :math:`m > 0`.
    inertia_body
        Body-frame inertia tensor :math:`{}^bI` (3x3 symmetric positive definite, or 3
        principal moments).
    gravity
        Gravity vector; default :math:`(0, 0, -g_0)` with :math:`g_0` the standard gravity in
        ``units`` (9.80665 m/s², or 980.665 cm/s² in cgs).
    units
        ``"SI"`` (default) or ``"cgs"``; :meth:`cgs` is the named constructor for the latter.
    """

    mass: float = 1.0
    inertia_body: np.ndarray = field(default_factory=lambda: np.eye(3))
    gravity: np.ndarray | None = None
    units: Units = "SI"
    nq: int = 7
    nv: int = 6
    dim: int = 3

    def __post_init__(self) -> None:
        self.mass = _positive(self.mass, "RigidBody3D.mass")
        inertia = np.asarray(self.inertia_body, dtype=float)
        if inertia.shape == (3,):
            inertia = np.diag(inertia)
        if inertia.shape != (3, 3):
            raise ShapeError(f"RigidBody3D.inertia_body must be 3 or 3x3, got {inertia.shape}")
        if not np.isfinite(inertia).all():
            raise NonFiniteError("RigidBody3D.inertia_body contains NaN or inf")
        if not np.allclose(inertia, inertia.T, rtol=0, atol=1e-12 * np.abs(inertia).max()) or (
            np.linalg.eigvalsh(inertia).min() <= 0
        ):
            raise MCPInputError("RigidBody3D.inertia_body must be symmetric positive definite")
        self.inertia_body = inertia
        self.gravity = _gravity_vector(self.gravity, self.units, 3, "RigidBody3D.gravity")

    @classmethod
    def cgs(cls, mass: float = 1.0, inertia_body: object = None, gravity: object = None) -> RigidBody3D:
        """A rigid body in centimetre-gram-second units (g, g cm², 980.665 cm/s² by default)."""
        inertia = np.eye(3) if inertia_body is None else inertia_body
        return cls(mass=mass, inertia_body=inertia, gravity=gravity, units="cgs")  # type: ignore[arg-type]

    def rotation(self, q: Any, xp: ArrayNamespace = NUMPY) -> Any:
        """Body -> world rotation :math:`R(q)` from the quaternion part of ``q``."""
        return quat_to_rot(q[3:7], xp)

    def inertia_world(self, q: Any, xp: ArrayNamespace = NUMPY) -> Any:
        r""":math:`I = R\,{}^bI\,R^T`."""
        R = self.rotation(q, xp)
        return xp.matmul(xp.matmul(R, self.inertia_body), R.T)

    def mass_matrix(self, q: Any, xp: ArrayNamespace = NUMPY) -> Any:
        r""":math:`M(q) = \mathrm{diag}(mI_3, R\,{}^bI R^T)`."""
        Z = np.zeros((3, 3))
        return xp.block([[self.mass * np.eye(3), Z], [Z, self.inertia_world(q, xp)]])

    def forces(self, q: Any, v: Any, t: Any, xp: ArrayNamespace = NUMPY) -> Any:
        r""":math:`\lambda_\mathrm{app} + \lambda_\mathrm{vp} = (mg,\ -\omega\times I\omega)`."""
        w = xp.copy(v[3:6])
        return xp.concat([self.mass * self.gravity, -xp.cross(w, xp.matmul(self.inertia_world(q, xp), w))])

    def point_world(self, q: Any, r_body: np.ndarray, xp: ArrayNamespace = NUMPY) -> Any:
        r""":math:`x + R(q)\,r_b`."""
        return q[:3] + xp.matmul(self.rotation(q, xp), np.asarray(r_body, dtype=float))

    def point_jacobian(self, q: Any, r_body: np.ndarray, xp: ArrayNamespace = NUMPY) -> Any:
        r""":math:`J = [I_3,\ -[R r_b]_\times]` so that :math:`J\nu = v + \omega\times Rr_b`."""
        r = xp.matmul(self.rotation(q, xp), np.asarray(r_body, dtype=float))
        return xp.block([[np.eye(3), -skew(r, xp)]])

    def G(self, q: Any, xp: ArrayNamespace = NUMPY) -> Any:
        r"""Kinematic map :math:`G(q) = \mathrm{diag}(I_3, J(q))` of eq (2), shape (7, 6)."""
        return xp.block([[np.eye(3), np.zeros((3, 3))], [np.zeros((4, 3)), quat_rate_matrix(q[3:7], xp)]])

    def integrate(self, q: Any, v: Any, h: float, xp: ArrayNamespace = NUMPY) -> Any:
        r""":math:`q^{\ell+1} = q^\ell + hG(q^\ell)\nu^{\ell+1}`, then renormalise the quaternion."""
        qn = q + xp.matmul(h * self.G(q, xp), v)
        return xp.concat([qn[:3], qn[3:7] / xp.norm(qn[3:7])])


Body = Particle | PlanarBody | RigidBody3D
