r"""Limit surfaces and the moment function of planar sliding (Goyal et al.; the LuGre paper §III-D).

Load convention (Goyal et al.): :math:`P = (F_x, F_y, M)` is the load the slider exerts on the
support, i.e. the applied load needed to keep it sliding, :math:`P = -`
:meth:`ContactPatch.friction_load`, with :math:`M` about the centre of pressure (CoP, the
reference point *O*). For a motion :math:`Q = (v_x, v_y, \omega)` of *O*,

.. math::  P(Q) = \mu\int_A p\,\hat v\,dA,\quad M = \mu\int_A p\,(\rho\times\hat v)\,dA
   \qquad\text{(Goyal et al. eq 1)},

and the set of all :math:`P` is bounded by the convex limit surface (LS); the load-motion
inequality :math:`(P - P^*)\cdot q \ge 0` (Goyal et al. eq 5) makes :math:`q` an outward normal.
Twists are made dimensionally homogeneous with a characteristic length :math:`L` (default:
the radius of gyration of the pressure): :math:`q \propto (v_x, v_y, L\omega)`, and loads
are normalised as :math:`(F_x, F_y, M/L)/(\mu N)`.

The moment function (Goyal et al. eq 2, Zhukovskii) is the friction moment about the centre of
rotation :math:`C = (x_c, y_c)` for counter-clockwise rotation,
:math:`M_c = \mu\int_A p\,\lVert\rho - r_c\rVert\,dA` (a sum of upward cones), and
(Goyal et al. eq 6) :math:`F_x = \partial M_c/\partial y_c`, :math:`F_y = -\partial M_c/\partial
x_c`, :math:`M = M_c + r_c\times F` (we find ``+``; the printed ``-`` holds only if the
cross product is read as :math:`F\times r_c`; see ``docs/friction_geometry.md``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

import numpy as np
from scipy.optimize import brentq, least_squares
from scipy.spatial import ConvexHull

from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError
from mcpkit.models.friction.patch import ContactPatch, LoadMethod, _check_scalar
from mcpkit.solving.options import Choice

__all__ = [
    "EigenDirection",
    "EllipsoidFit",
    "FrictionLoadModel",
    "LimitSurfaceSamples",
    "MotionKind",
    "PointContacts",
    "SurfaceFeatures",
    "TwistSampling",
    "applied_load",
    "detect_features",
    "eigen_directions",
    "fit_ellipsoid",
    "limit_surface_section",
    "load_from_moment_function",
    "moment_function",
    "moment_function_gradient",
    "sample_limit_surface",
    "unit_twists",
]


class FrictionLoadModel(Protocol):
    """Anything with a pressure distribution and a Coulomb friction load (patch or points)."""

    x: np.ndarray
    y: np.ndarray
    weights: np.ndarray

    @property
    def centre_of_pressure(self) -> np.ndarray: ...

    @property
    def radius_of_gyration(self) -> float: ...

    def friction_load(self, twist: np.ndarray, mu: float, normal_force: float) -> np.ndarray: ...

    def distance_means(
        self, xc: np.ndarray, yc: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...


class PointContacts:
    r"""Isolated point supports (delta-function pressure), e.g. Goyal et al.'s two-point bar.

    Point *i* at :math:`(x_i, y_i)` carries :math:`w_i N`. A point at the centre of rotation
    does not slide; its friction force is then anywhere in its friction disc (the flat
    facets of Goyal et al.). :meth:`friction_load` returns the load with that force set to zero
    (the centre of the facet).
    """

    def __init__(self, x: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None) -> None:
        x = np.asarray(x, dtype=float).ravel()
        y = np.asarray(y, dtype=float).ravel()
        w = np.ones_like(x) if weights is None else np.asarray(weights, dtype=float).ravel()
        if not (x.shape == y.shape == w.shape) or x.size == 0:
            raise ShapeError("x, y, weights must be non-empty and of equal length")
        if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y)) and np.all(np.isfinite(w))):
            raise NonFiniteError("point positions or weights contain NaN or inf")
        if np.any(w < 0) or w.sum() <= 0:
            raise MCPInputError("weights must be >= 0 with a positive sum")
        self.x, self.y, self.weights = x, y, w / w.sum()

    @property
    def centre_of_pressure(self) -> np.ndarray:
        """(2,) weighted mean position."""
        return np.array([self.weights @ self.x, self.weights @ self.y])

    @property
    def radius_of_gyration(self) -> float:
        """RMS distance of the supports from the CoP (weighted)."""
        c = self.centre_of_pressure
        return float(np.sqrt(self.weights @ ((self.x - c[0]) ** 2 + (self.y - c[1]) ** 2)))

    def _rel(self) -> tuple[np.ndarray, np.ndarray]:
        c = self.centre_of_pressure
        return self.x - c[0], self.y - c[1]

    def distance_means(
        self, xc: np.ndarray, yc: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(X/r, Y/r, r, 0) at each point about (xc, yc) (0/0 := 0); see ContactPatch."""
        xc = np.atleast_1d(np.asarray(xc, dtype=float))
        yc = np.atleast_1d(np.asarray(yc, dtype=float))
        rx, ry = self._rel()
        X = rx[None, :] - xc[:, None]
        Y = ry[None, :] - yc[:, None]
        r = np.hypot(X, Y)
        inv = np.where(r > 0, 1.0 / np.where(r > 0, r, 1.0), 0.0)
        return X * inv, Y * inv, r, np.zeros_like(r)

    def friction_load(
        self, twist: np.ndarray, mu: float, normal_force: float, method: object = None
    ) -> np.ndarray:
        """Load on the body, ``-mu N sum_i w_i v_hat_i`` and its moment about the CoP."""
        t = np.asarray(twist, dtype=float)
        if t.shape[-1:] != (3,) or t.ndim not in (1, 2):
            raise ShapeError(f"twist must have shape (3,) or (K, 3), got {t.shape}")
        if not np.all(np.isfinite(t)):
            raise NonFiniteError("twist contains NaN or inf")
        mu_v = _check_scalar("mu", mu)
        N = _check_scalar("normal_force", normal_force)
        T = np.atleast_2d(t)
        rx, ry = self._rel()
        vx = T[:, 0:1] - T[:, 2:3] * ry[None, :]
        vy = T[:, 1:2] + T[:, 2:3] * rx[None, :]
        nv = np.hypot(vx, vy)
        scale = (
            np.abs(T[:, 0:1]) + np.abs(T[:, 1:2]) + np.abs(T[:, 2:3]) * (np.abs(rx).max() + np.abs(ry).max())
        )
        ok = nv > 1e-13 * scale
        inv = np.where(ok, 1.0 / np.where(ok, nv, 1.0), 0.0)
        ux, uy = vx * inv, vy * inv
        w = self.weights
        out = -mu_v * N * np.stack([ux @ w, uy @ w, (rx * uy - ry * ux) @ w], axis=1)
        return out[0] if t.ndim == 1 else out


class TwistSampling(str, Choice):
    """How :func:`unit_twists` covers the sphere of motion directions."""

    FIBONACCI = "fibonacci"
    """Near-uniform Fibonacci lattice on the sphere (good for fits and plots)."""
    GRID = "grid"
    """Longitude-latitude grid (contains the exact planes v_x = 0, v_y = 0, omega = 0 when the
    counts are multiples of 4; used to detect vertices)."""


class MotionKind(str, Enum):
    """Classification of an eigen-direction of free sliding."""

    TRANSLATION = "translation"
    """omega = 0 (centre of rotation at infinity)."""
    ROTATION = "rotation"
    """Pure rotation about the CoP (v = 0)."""
    MIXED = "mixed"
    """Rotation about a point other than the CoP."""


def _check_model(model: object) -> None:
    if not hasattr(model, "friction_load") or not hasattr(model, "distance_means"):
        raise MCPInputError(f"model must be a ContactPatch or PointContacts, got {type(model).__name__}")


def _char_length(model: FrictionLoadModel, char_length: float | None) -> float:
    if char_length is None:
        return float(model.radius_of_gyration)
    return _check_scalar("char_length", char_length, positive=True)


def unit_twists(
    n: int, char_length: float = 1.0, kind: TwistSampling | str = TwistSampling.FIBONACCI
) -> np.ndarray:
    r"""Twists :math:`(v_x, v_y, \omega)` whose normalised direction :math:`(v_x, v_y, L\omega)`
    is a unit vector, covering the sphere.

    ``kind="fibonacci"`` gives ``n`` points; ``kind="grid"`` gives ``n`` longitudes times
    ``n // 2 + 1`` latitudes (poles included once).
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 4:
        raise MCPInputError(f"n must be an integer >= 4, got {n!r}")
    L = _check_scalar("char_length", char_length, positive=True)
    kind = TwistSampling.parse(kind)
    if kind is TwistSampling.FIBONACCI:
        i = np.arange(n) + 0.5
        z = 1.0 - 2.0 * i / n
        phi = np.pi * (1.0 + np.sqrt(5.0)) * i
        s = np.sqrt(1.0 - z * z)
        q = np.stack([s * np.cos(phi), s * np.sin(phi), z], axis=1)
    else:
        th = np.linspace(-np.pi, np.pi, n, endpoint=False)
        ph = np.linspace(-np.pi / 2, np.pi / 2, n // 2 + 1)[1:-1]
        TH, PH = np.meshgrid(th, ph, indexing="ij")
        q = np.stack([np.cos(PH) * np.cos(TH), np.cos(PH) * np.sin(TH), np.sin(PH)], axis=-1).reshape(-1, 3)
        q = np.vstack([q, [[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]]])
    return q * np.array([1.0, 1.0, 1.0 / L])


def applied_load(
    model: FrictionLoadModel,
    twist: np.ndarray,
    mu: float,
    normal_force: float,
    method: LoadMethod | str = LoadMethod.EXACT,
) -> np.ndarray:
    r"""Goyal et al.'s load :math:`P = -` friction load: the load that sustains the motion."""
    _check_model(model)
    if isinstance(model, ContactPatch):
        return -model.friction_load(twist, mu, normal_force, method=method)
    return -model.friction_load(twist, mu, normal_force)


@dataclass
class LimitSurfaceSamples:
    """Sampled limit surface: unit motion directions and their loads.

    Attributes
    ----------
    directions
        (K, 3) unit normalised motion directions ``q ~ (v_x, v_y, L omega)``.
    twists
        (K, 3) the same motions in physical units ``(v_x, v_y, omega)``.
    loads
        (K, 3) ``P = (F_x, F_y, M)`` [N, N, N m].
    char_length, mu, normal_force
        Normalisation data.
    """

    directions: np.ndarray
    twists: np.ndarray
    loads: np.ndarray
    char_length: float
    mu: float
    normal_force: float

    @property
    def normalised_loads(self) -> np.ndarray:
        """(K, 3) ``(F_x, F_y, M / L) / (mu N)``."""
        return self.loads / (self.mu * self.normal_force) * np.array([1, 1, 1 / self.char_length])


def sample_limit_surface(
    model: FrictionLoadModel,
    mu: float,
    normal_force: float,
    n: int = 2000,
    char_length: float | None = None,
    kind: TwistSampling | str = TwistSampling.FIBONACCI,
    method: LoadMethod | str = LoadMethod.EXACT,
) -> LimitSurfaceSamples:
    r"""Sample :math:`P(q)` over unit motion directions :math:`q` (Goyal et al. eq 1, the LuGre paper
    eqs 7-8); ``mu * normal_force`` must be positive."""
    _check_model(model)
    mu_v = _check_scalar("mu", mu, positive=True)
    N = _check_scalar("normal_force", normal_force, positive=True)
    L = _char_length(model, char_length)
    T = unit_twists(n, L, kind)
    P = applied_load(model, T, mu_v, N, method)
    return LimitSurfaceSamples(T * np.array([1, 1, L]), T, P, L, mu_v, N)


def _rc(xc: np.ndarray, yc: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    X = np.asarray(xc, dtype=float)
    Y = np.asarray(yc, dtype=float)
    if X.shape != Y.shape:
        raise ShapeError(f"xc and yc must have the same shape, got {X.shape} and {Y.shape}")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(Y))):
        raise NonFiniteError("xc, yc contain NaN or inf")
    return X.ravel(), Y.ravel(), X.shape


def moment_function(
    model: FrictionLoadModel, xc: np.ndarray, yc: np.ndarray, mu: float, normal_force: float
) -> np.ndarray:
    r"""Zhukovskii's moment function (Goyal et al. eq 2) for counter-clockwise rotation about
    :math:`C`: :math:`M_c(x_c, y_c) = \mu N\sum_i w_i\langle\lVert\rho - r_c\rVert\rangle_i`,
    with :math:`(x_c, y_c)` measured from the CoP. Exact cell means (closed form)."""
    _check_model(model)
    mu_v = _check_scalar("mu", mu)
    N = _check_scalar("normal_force", normal_force)
    X, Y, shape = _rc(xc, yc)
    _, _, mR, _ = model.distance_means(X, Y)
    return (mu_v * N * (mR @ model.weights)).reshape(shape)


def moment_function_gradient(
    model: FrictionLoadModel, xc: np.ndarray, yc: np.ndarray, mu: float, normal_force: float
) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`\nabla M_c = -\mu N\sum_i w_i\langle(\rho - r_c)/\lVert\rho - r_c\rVert\rangle_i`
    (derivative of the cone sum; undefined at point supports, where we return the value with
    that support's term dropped)."""
    _check_model(model)
    mu_v = _check_scalar("mu", mu)
    N = _check_scalar("normal_force", normal_force)
    X, Y, shape = _rc(xc, yc)
    mX, mY, _, _ = model.distance_means(X, Y)
    w = model.weights
    return (-mu_v * N * (mX @ w)).reshape(shape), (-mu_v * N * (mY @ w)).reshape(shape)


def load_from_moment_function(
    model: FrictionLoadModel, xc: np.ndarray, yc: np.ndarray, mu: float, normal_force: float
) -> np.ndarray:
    r"""Load of CCW rotation about :math:`C` from the moment function (Goyal et al. eq 6):
    :math:`F_x = \partial_{y_c}M_c`, :math:`F_y = -\partial_{x_c}M_c`,
    :math:`M = M_c + r_c\times F` (2-D cross product :math:`a_x b_y - a_y b_x`). Returns
    ``(..., 3)``."""
    gx, gy = moment_function_gradient(model, xc, yc, mu, normal_force)
    Mc = moment_function(model, xc, yc, mu, normal_force)
    Fx, Fy = gy, -gx
    xc_a = np.asarray(xc, dtype=float)
    yc_a = np.asarray(yc, dtype=float)
    return np.stack([Fx, Fy, Mc + xc_a * Fy - yc_a * Fx], axis=-1)


class LoadPlane(str, Choice, option="plane"):
    """A coordinate plane of load space :math:`(F_x, F_y, M)` (:func:`limit_surface_section`)."""

    FXM = "FxM"
    """:math:`F_y = 0`."""
    FYM = "FyM"
    """:math:`F_x = 0`."""
    FXFY = "FxFy"
    """:math:`M = 0`."""


def limit_surface_section(
    model: FrictionLoadModel,
    mu: float,
    normal_force: float,
    plane: LoadPlane | str = "FxM",
    n: int = 181,
    char_length: float | None = None,
    method: LoadMethod | str = LoadMethod.EXACT,
) -> np.ndarray:
    r"""Points of the limit surface on a coordinate plane of load space.

    ``plane`` is ``"FxM"`` (:math:`F_y = 0`), ``"FyM"`` (:math:`F_x = 0`) or ``"FxFy"``
    (:math:`M = 0`). For each of ``n`` directions :math:`\psi` in the plane's two motion
    components, the third motion component :math:`\tan s` is found by Brent's method so that
    the off-plane load component vanishes (it changes sign between :math:`s = \pm\pi/2`).
    Returns (n, 3) loads :math:`P`.
    """
    _check_model(model)
    idx = {"FxM": (0, 2, 1), "FyM": (1, 2, 0), "FxFy": (0, 1, 2)}
    plane = LoadPlane.parse(plane).value
    mu_v = _check_scalar("mu", mu, positive=True)
    N = _check_scalar("normal_force", normal_force, positive=True)
    L = _char_length(model, char_length)
    a, b, c = idx[plane]
    scale = np.array([1.0, 1.0, 1.0 / L])

    def twist(psi: float, s: float) -> np.ndarray:
        q = np.zeros(3)
        q[a] = np.cos(s) * np.cos(psi)
        q[b] = np.cos(s) * np.sin(psi)
        q[c] = np.sin(s)
        return q * scale

    out = np.empty((n, 3))
    for k, psi in enumerate(np.linspace(0.0, 2 * np.pi, n)):

        def g(s: float, psi: float = psi) -> float:
            return float(applied_load(model, twist(psi, s), mu_v, N, method)[c])

        lo, hi = -np.pi / 2 + 1e-12, np.pi / 2 - 1e-12
        glo, ghi = g(lo), g(hi)
        if glo == 0.0:
            s = lo
        elif ghi == 0.0 or np.sign(glo) == np.sign(ghi):
            s = hi
        else:
            s = brentq(g, lo, hi, xtol=1e-13)
        out[k] = applied_load(model, twist(psi, s), mu_v, N, method)
    return out


# ---------------------------------------------------------------------- ellipsoid fit
@dataclass
class EllipsoidFit:
    r"""Least-squares ellipsoid :math:`\bar P^T A \bar P = 1` in normalised load space
    :math:`\bar P = (F_x, F_y, M/L)/(\mu N)`.

    Attributes
    ----------
    A
        (3, 3) symmetric positive-definite matrix.
    char_length, mu, normal_force
        Normalisation.
    rms_radial_error, max_radial_error
        Relative radial errors :math:`\lVert\bar P\rVert\sqrt{u^TAu} - 1` of the fitted
        samples (:math:`u = \bar P/\lVert\bar P\rVert`).
    rms_load_error, max_load_error
        Errors of the load predicted by the ellipsoid for the sampled motion directions
        (normality: :math:`\bar P \propto A^{-1}q`), in units of :math:`\mu N`
        (moment part divided by :math:`L`).
    """

    A: np.ndarray
    char_length: float
    mu: float
    normal_force: float
    rms_radial_error: float = 0.0
    max_radial_error: float = 0.0
    rms_load_error: float = 0.0
    max_load_error: float = 0.0

    @property
    def semi_axes(self) -> tuple[np.ndarray, np.ndarray]:
        """(lengths (3,), directions (3, 3) as columns) of the ellipsoid, normalised units."""
        ev, V = np.linalg.eigh(self.A)
        return 1.0 / np.sqrt(ev), V

    def radial_error(self, loads: np.ndarray) -> np.ndarray:
        """Relative radial error of (K, 3) physical loads against the ellipsoid."""
        Pn = np.atleast_2d(loads) / (self.mu * self.normal_force) * np.array([1, 1, 1 / self.char_length])
        return np.sqrt(np.einsum("ki,ij,kj->k", Pn, self.A, Pn)) - 1.0

    def predict(self, twist: np.ndarray) -> np.ndarray:
        r"""Load for a motion by normality to the ellipsoid: :math:`\bar P = A^{-1}q /
        \sqrt{q^TA^{-1}q}` with :math:`q = (v_x, v_y, L\omega)`. Physical units."""
        T = np.atleast_2d(np.asarray(twist, dtype=float))
        q = T * np.array([1, 1, self.char_length])
        Ai = np.linalg.inv(self.A)
        Pq = q @ Ai
        Pn = Pq / np.sqrt(np.einsum("ki,ki->k", Pq, q))[:, None]
        P = Pn * self.mu * self.normal_force * np.array([1, 1, self.char_length])
        return P[0] if np.ndim(twist) == 1 else P


def fit_ellipsoid(samples: LimitSurfaceSamples, diagonal: bool = False) -> EllipsoidFit:
    r"""Fit :math:`\bar P^TA\bar P = 1` by linear least squares on the 6 (or 3 with
    ``diagonal=True``, the axis-aligned ellipsoid of the LuGre paper §V) entries of :math:`A`,
    minimising :math:`\sum_k(\bar P_k^TA\bar P_k - 1)^2`, and report the fit errors."""
    Pn = samples.normalised_loads
    x, y, m = Pn.T
    if diagonal:
        D = np.stack([x * x, y * y, m * m], axis=1)
    else:
        D = np.stack([x * x, y * y, m * m, 2 * x * y, 2 * x * m, 2 * y * m], axis=1)
    coef, *_ = np.linalg.lstsq(D, np.ones(len(Pn)), rcond=None)
    if diagonal:
        A = np.diag(coef)
    else:
        A = np.array([[coef[0], coef[3], coef[4]], [coef[3], coef[1], coef[5]], [coef[4], coef[5], coef[2]]])
    if np.any(np.linalg.eigvalsh(A) <= 0):
        raise MCPInputError("least-squares ellipsoid is not positive definite; sample more")
    fit = EllipsoidFit(A, samples.char_length, samples.mu, samples.normal_force)
    rad = fit.radial_error(samples.loads)
    pred = fit.predict(samples.twists)
    err = np.linalg.norm(
        (pred - samples.loads)
        / (samples.mu * samples.normal_force)
        * np.array([1, 1, 1 / samples.char_length]),
        axis=1,
    )
    fit.rms_radial_error = float(np.sqrt(np.mean(rad**2)))
    fit.max_radial_error = float(np.max(np.abs(rad)))
    fit.rms_load_error = float(np.sqrt(np.mean(err**2)))
    fit.max_load_error = float(np.max(err))
    return fit


# ---------------------------------------------------------------------- eigen-directions
@dataclass
class EigenDirection:
    r"""A motion direction :math:`q` whose load is parallel to it (Goyal et al., "Dynamics of
    free slip"): :math:`\bar P(q) = \lVert\bar P\rVert q` in normalised coordinates.

    Attributes
    ----------
    direction
        (3,) unit normalised direction :math:`q`, sign chosen with the first non-zero
        component of :math:`(q_\omega, q_x, q_y)` positive.
    load
        (3,) physical load :math:`P(q)`.
    misalignment
        :math:`\lVert\hat P - q\rVert` at the solution.
    kind
        :class:`MotionKind`.
    centre_of_rotation
        (2,) CoR relative to the CoP (``nan`` for translations).
    """

    direction: np.ndarray
    load: np.ndarray
    misalignment: float
    kind: MotionKind
    centre_of_rotation: np.ndarray = field(default_factory=lambda: np.full(2, np.nan))


def _canonical(q: np.ndarray) -> np.ndarray:
    for i in (2, 0, 1):
        if abs(q[i]) > 1e-9:
            return q if q[i] > 0 else -q
    return q


def eigen_directions(
    model: FrictionLoadModel,
    mu: float = 1.0,
    normal_force: float = 1.0,
    char_length: float | None = None,
    n_start: int = 60,
    tol: float = 1e-8,
    method: LoadMethod | str = LoadMethod.EXACT,
) -> list[EigenDirection]:
    r"""Eigen-directions of free sliding: solve :math:`\hat P(q) - q = 0` on the unit sphere.

    Levenberg-Marquardt (``scipy.optimize.least_squares``) from ``n_start`` Fibonacci starting
    directions; converged solutions (misalignment < ``sqrt(tol)``) are made canonical and
    de-duplicated (``|q_i . q_j| > 1 - 1e-6``). Pure translations are always eigen-directions
    with :math:`O` = CoP (:math:`M = 0`, :math:`F \parallel v`); for a disc every translation
    is one, so many translational solutions may be returned.
    """
    _check_model(model)
    mu_v = _check_scalar("mu", mu, positive=True)
    N = _check_scalar("normal_force", normal_force, positive=True)
    L = _char_length(model, char_length)
    sc = np.array([1.0, 1.0, 1.0 / L])

    def Pn(q: np.ndarray) -> np.ndarray:
        P = applied_load(model, q * sc, mu_v, N, method)
        return P * sc / (mu_v * N)

    def res(u: np.ndarray) -> np.ndarray:
        q = u / np.linalg.norm(u)
        P = Pn(q)
        return P / np.linalg.norm(P) - q

    found: list[EigenDirection] = []
    for q0 in unit_twists(n_start, 1.0):
        sol = least_squares(res, q0, xtol=tol, ftol=tol, gtol=tol, method="lm")
        q = sol.x / np.linalg.norm(sol.x)
        mis = float(np.linalg.norm(res(q)))
        if mis > np.sqrt(tol):
            continue
        q = _canonical(q)
        if any(abs(q @ e.direction) > 1 - 1e-6 for e in found):
            continue
        P = applied_load(model, q * sc, mu_v, N, method)
        if abs(q[2]) < 1e-7:
            kind, cor = MotionKind.TRANSLATION, np.full(2, np.nan)
        else:
            om = q[2] / L
            cor = np.array([-q[1] / om, q[0] / om])
            kind = MotionKind.ROTATION if np.hypot(*q[:2]) < 1e-7 else MotionKind.MIXED
        found.append(EigenDirection(q, P, mis, kind, cor))
    return found


# ---------------------------------------------------------------------- facets and vertices
@dataclass
class SurfaceFeatures:
    """Flat facets and vertices detected on a sampled limit surface.

    Attributes
    ----------
    facet_normals
        (F, 3) outward unit normals (normalised load space) of planar regions.
    facet_areas
        (F,) their areas as a fraction of the hull's surface area.
    vertices
        (V, 3) physical loads reached by a spread of motion directions.
    vertex_spread
        (V,) largest angle [rad] between two motion directions mapped to each vertex.
    """

    facet_normals: np.ndarray
    facet_areas: np.ndarray
    vertices: np.ndarray
    vertex_spread: np.ndarray


def detect_features(
    samples: LimitSurfaceSamples,
    facet_angle_tol: float = 0.02,
    min_facet_area: float = 0.01,
    vertex_tol: float = 1e-9,
    min_vertex_spread: float = 0.1,
) -> SurfaceFeatures:
    r"""Find flat facets and vertices of a sampled limit surface.

    Facets: hull triangles of the normalised loads are grouped around the largest remaining
    triangle (normals within ``facet_angle_tol`` rad, coplanar within the same tolerance);
    groups with area > ``min_facet_area`` of the hull area are facets. Vertices: loads (to
    ``vertex_tol`` relative) produced by motion directions spread over more than
    ``min_vertex_spread`` rad (a vertex has a 2-D cone of normals, Goyal et al.). Use
    ``TwistSampling.GRID`` samples so that the families of motions that map to a vertex are
    actually sampled.
    """
    Pn = samples.normalised_loads
    hull = ConvexHull(Pn)
    eq = hull.equations
    tri = Pn[hull.simplices]
    areas = 0.5 * np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)
    total = areas.sum()
    left = np.ones(len(eq), dtype=bool)
    normals, fa = [], []
    for k in np.argsort(-areas):
        if not left[k]:
            continue
        nrm, off = eq[k, :3], eq[k, 3]
        grp = left & (eq[:, :3] @ nrm > np.cos(facet_angle_tol)) & (np.abs(eq[:, 3] - off) < facet_angle_tol)
        left &= ~grp
        a = areas[grp].sum() / total
        if a > min_facet_area:
            normals.append(nrm)
            fa.append(a)
    # vertices: identical loads from well-separated directions
    key = np.round(Pn / vertex_tol**0.5, 0)  # coarse bucket, refined below
    _, inv = np.unique(key, axis=0, return_inverse=True)
    verts, spread = [], []
    for g in np.unique(inv):
        members = np.nonzero(inv == g)[0]
        if members.size < 3:
            continue
        Pg = Pn[members]
        if np.max(np.linalg.norm(Pg - Pg[0], axis=1)) > vertex_tol**0.5:
            continue
        q = samples.directions[members]
        ang = np.arccos(np.clip(q @ q.T, -1.0, 1.0)).max()
        if ang > min_vertex_spread:
            verts.append(samples.loads[members[0]])
            spread.append(ang)
    return SurfaceFeatures(
        np.array(normals).reshape(-1, 3),
        np.array(fa),
        np.array(verts).reshape(-1, 3),
        np.array(spread),
    )
