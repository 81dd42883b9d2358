"""Reduced planar LuGre model: three bristles and a limit surface (the LuGre paper, Section V).

With the CoP twist ``v = (v_x, v_y, omega)``, the scaling ``S = diag(1, 1, r)`` and
``v_S = S v = (v_x, v_y, r omega)``, the three bristles ``z = (z_x, z_y, z_tau)`` obey

    z' = [S h^(v) - beta z sigma0 / g(|v_S|)] |v_S|,                         (eqs 27, 33, 34)
    f_r = -(sigma0 z + sigma1 z' + sigma2 U v) f_N,   U = diag(1, 1, u),      (eq 28)

where the steady-state direction ``h^`` is

* ``h^ = v_S / |v_S|`` for the ellipsoid approximation of the limit surface (eqs 24-27), and
* ``h^ = -h(r, v)`` for the pre-computed, normalised Coulomb limit surface (eqs 31-33),
  ``h = (f_x^ls / max f_x^ls, f_y^ls / max f_y^ls, tau^ls / max tau^ls)``, tabulated on the
  velocity sphere ``v = (r' cos(theta) sin(phi), r' sin(theta) sin(phi), cos(phi))`` (eq 35)
  with ``4 N_ls + 1`` nodes in ``theta`` and ``N_ls + 1`` in ``phi`` and read back with the
  bilinear interpolation of eqs (36)-(44).

``beta = 1`` for LuGre; the Elasto-Plastic variant uses ``beta(S^-1 z, h^ |v_S|)`` of eq (17)
with ``z_max = |S^-1 z*| = g |h^| / sigma0``.  The ellipsoid variables are (eqs 25, 29)

    r = sum_i |rho_i| w_i,        u = sum_i |rho_i|^2 w_i,

the discrete forms of the integrals for a pure rotation about the CoP (``rho_i x v^_i = |rho_i|``).

Notes on the paper's text (the LuGre paper): ``S`` is printed as ``diag(1, 0, r)``; it must be
``diag(1, 1, r)`` for the y bristle to exist.  Eq (33) is printed with ``+ z sigma0|v_S|/g``;
the sign must be negative (as in eq 34) for ``z*`` of eq (32) to be its equilibrium.  Eq (38)
defines ``phi = atan2(r|omega|, |v_t|)`` which is the complement of the sampling angle of
eq (35); this module uses the angle consistent with eq (35), ``phi = atan2(|v_t|, r|omega|)``
(``phi = 0`` is pure rotation, ``phi = pi/2`` pure translation).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import casadi as ca
import numpy as np

from mcpkit.errors import BoundsError, MCPInputError, NonFiniteError, ShapeError
from mcpkit.models.friction.lugre import (
    REG,
    DistributedLuGre,
    PatchArrays,
    _cached_bristle_function,
    _casadi_g,
    _check_normal_force,
    _check_twist,
    patch_arrays,
)
from mcpkit.models.friction.lugre_params import LUGRE_P0, LUGRE_P1, LuGreParams
from mcpkit.solving.options import Choice

__all__ = [
    "EllipsoidVariables",
    "ellipsoid_variables",
    "LimitSurfaceTable",
    "precompute_limit_surface",
    "ReducedMode",
    "ReducedLuGre",
]


# ----------------------------------------------------------------------------------------------
# pre-computed quantities
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EllipsoidVariables:
    """Ellipsoid variables of a contact patch: ``r`` (eq 25) and ``u`` (eq 29)."""

    r: float
    """Radius of the equivalent circular rim, ``r = sum |rho_i| w_i`` [m]."""
    u: float
    """Viscous torque scale, ``u = sum |rho_i|^2 w_i`` [m^2]."""
    cop: np.ndarray
    """Centre of pressure in the patch frame [m]."""


def _ellipsoid_from_arrays(pa: PatchArrays) -> EllipsoidVariables:
    rho = np.hypot(pa.x, pa.y)
    return EllipsoidVariables(r=float(np.dot(rho, pa.w)), u=float(np.dot(rho * rho, pa.w)), cop=pa.cop.copy())


def ellipsoid_variables(patch: Any) -> EllipsoidVariables:
    """Compute ``r = |sum rho_i x v^pr_i w_i| = sum |rho_i| w_i`` (eq 25) and ``u`` (eq 29).

    For a pure rotation about the CoP the unit velocity at ``rho_i`` is ``e_z x rho^_i``, so
    ``rho_i x v^pr_i = |rho_i|``.
    """
    return _ellipsoid_from_arrays(patch_arrays(patch))


@dataclass
class LimitSurfaceTable:
    """Normalised limit surface ``h(r, v)`` sampled on the velocity sphere (Sec. V-C/D).

    ``values[j, k]`` is ``h`` at ``theta_j = j pi / (2 N_ls)`` (``j = 0..4 N_ls``) and
    ``phi_k = k pi / (2 N_ls)`` (``k = 0..N_ls``).
    """

    n_ls: int
    """Resolution N_ls: cells between 0 and pi/2."""
    r_pre: float
    """Radius r' of the surface used for the pre-computation [m] (eq 35)."""
    values: np.ndarray
    """Normalised wrenches, shape (4 N_ls + 1, N_ls + 1, 3)."""
    scale: np.ndarray
    """Normalisers ``(max |f_x|, max |f_y|, max |tau|)`` per unit normal force and unit mu."""
    precompute_seconds: float = 0.0
    """Wall-clock time spent in the pre-computation [s]."""
    _flat: list[tuple[float, float, float]] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        n1 = self.n_ls + 1
        self._n1 = n1
        self._flat = [
            tuple(float(c) for c in self.values[j, k]) for j in range(4 * self.n_ls + 1) for k in range(n1)
        ]

    def lookup(self, vx: float, vy: float, w: float, r: float) -> tuple[float, float, float]:
        """Bilinear read-back of ``h(r, v)`` (eqs 37-44); zero for a zero twist."""
        vt = math.hypot(vx, vy)
        if vt == 0.0 and w == 0.0:
            return (0.0, 0.0, 0.0)
        if w >= 0.0:
            sign = 1.0
            theta = math.atan2(vy, vx)
        else:
            sign = -1.0
            theta = math.atan2(vy, vx) + math.pi
        two_pi = 2.0 * math.pi
        theta %= two_pi
        phi = math.atan2(vt, r * abs(w))
        n = self.n_ls
        a = 2.0 * theta * n / math.pi
        b = 2.0 * phi * n / math.pi
        it = min(int(a), 4 * n - 1)
        ip = min(int(b), n - 1)
        dt = a - it
        dp = b - ip
        n1 = self._n1
        base = it * n1 + ip
        f1 = self._flat[base]
        f2 = self._flat[base + n1]
        f3 = self._flat[base + 1]
        f4 = self._flat[base + n1 + 1]
        c1 = (1.0 - dt) * (1.0 - dp)
        c2 = dt * (1.0 - dp)
        c3 = (1.0 - dt) * dp
        c4 = dt * dp
        return (
            sign * (c1 * f1[0] + c2 * f2[0] + c3 * f3[0] + c4 * f4[0]),
            sign * (c1 * f1[1] + c2 * f2[1] + c3 * f3[1] + c4 * f4[1]),
            sign * (c1 * f1[2] + c2 * f2[2] + c3 * f3[2] + c4 * f4[2]),
        )

    def casadi_interpolant(self) -> ca.Function:
        """CasADi ``linear`` interpolant of the table over ``(theta', phi)`` (built once).

        ``theta' = atan2(s v_y, s v_x)`` in ``[-pi, pi]`` with ``s = sgn_p(omega)`` is eq (37)'s
        angle shifted by a multiple of 2 pi, so the table is stored rolled by half a turn
        (node ``theta' = -pi + j pi/(2 N_ls)`` holds ``values[(j + 2 N_ls) mod 4 N_ls]``) and no
        ``fmod`` is needed.  Both grids are uniform (``lookup_mode="exact"``).
        """
        if getattr(self, "_ca_interp", None) is None:
            n = self.n_ls
            rolled = np.concatenate([self.values[2 * n : 4 * n], self.values[0 : 2 * n + 1]], axis=0)
            theta = -np.pi + np.arange(4 * n + 1) * (np.pi / (2 * n))
            phi = np.arange(n + 1) * (np.pi / (2 * n))
            # CasADi layout: output index fastest, then the first grid dimension
            data = np.transpose(rolled, (1, 0, 2)).ravel()
            self._ca_interp = ca.interpolant(
                "limit_surface_h", "linear", [theta, phi], data, {"lookup_mode": ["exact", "exact"]}
            )
        return self._ca_interp

    def h(self, twist: np.ndarray, r: float | None = None) -> np.ndarray:
        """Checked ``h(r, v)`` for a CoP twist (default ``r = r'``)."""
        t = _check_twist(twist)
        rr = self.r_pre if r is None else float(r)
        if not (math.isfinite(rr) and rr > 0):
            raise BoundsError(f"r must be positive and finite, got {r!r}")
        return np.array(self.lookup(float(t[0]), float(t[1]), float(t[2]), rr))


def sphere_twists(n_ls: int, r_pre: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sampling nodes of eq (35): ``theta`` (4 N_ls + 1), ``phi`` (N_ls + 1), twists (.., 3)."""
    theta = np.arange(4 * n_ls + 1) * (np.pi / (2 * n_ls))
    phi = np.arange(n_ls + 1) * (np.pi / (2 * n_ls))
    th, ph = np.meshgrid(theta, phi, indexing="ij")
    twists = np.stack([r_pre * np.cos(th) * np.sin(ph), r_pre * np.sin(th) * np.sin(ph), np.cos(ph)], axis=-1)
    return theta, phi, twists


def precompute_limit_surface(
    patch: Any, n_ls: int = 20, *, bilinear: bool = True, r_pre: float | None = None
) -> LimitSurfaceTable:
    """Pre-compute the normalised Coulomb limit surface of a patch (Sec. V-D).

    The steady-state wrenches of the distributed model with Table I ``p = 0`` (Coulomb
    friction, ``g = 1``, no viscous term) are evaluated with the bilinear steady-state
    approximation (eq 23) at the sphere nodes of eq (35) and divided by their maxima (eq 31).
    The wall-clock time is stored in ``precompute_seconds`` (it includes eqs 25 and 29).
    """
    if isinstance(n_ls, bool) or not isinstance(n_ls, int | np.integer):
        raise MCPInputError(f"n_ls must be an integer, got {n_ls!r}")
    if n_ls < 1:
        raise BoundsError(f"n_ls must be >= 1, got {n_ls}")
    t0 = time.perf_counter()
    model = DistributedLuGre(patch, LUGRE_P0)
    ev = _ellipsoid_from_arrays(model.patch)
    rp = ev.r if r_pre is None else float(r_pre)
    if not (math.isfinite(rp) and rp > 0):
        raise BoundsError(f"r_pre must be positive and finite, got {r_pre!r}")
    _, _, twists = sphere_twists(n_ls, rp)
    flat = twists.reshape(-1, 3)
    wr = model.steady_state_wrenches(flat, bilinear=bilinear)
    scale = np.max(np.abs(wr), axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    values = (wr / scale).reshape(twists.shape)
    elapsed = time.perf_counter() - t0
    return LimitSurfaceTable(n_ls=int(n_ls), r_pre=rp, values=values, scale=scale, precompute_seconds=elapsed)


# ----------------------------------------------------------------------------------------------
# reduced model
# ----------------------------------------------------------------------------------------------
class ReducedMode(Choice):
    """Which steady-state direction the reduced model uses."""

    ELLIPSOID = "ellipsoid"
    """Ellipsoid approximation of the limit surface, ``h^ = v_S/|v_S|`` (eqs 24-27)."""
    LIMIT_SURFACE = "limit_surface"
    """Pre-computed limit surface with bilinear interpolation, ``h^ = -h(r, v)`` (eqs 31-44)."""


class ReducedLuGre:
    """Three-bristle planar LuGre model (eqs 24-34), state ``z = (z_x, z_y, z_tau)``.

    Parameters
    ----------
    patch
        ``ContactPatch`` (``x, y, weights, cell_size``) used for ``r``, ``u`` and the table.
    params
        Table I parameters (default ``p = 1``).
    mode
        ``"limit_surface"`` (default) or ``"ellipsoid"``.
    elasto_plastic
        Use the Elasto-Plastic rate of eq (34).
    n_ls
        Resolution of the pre-computed limit surface (Table III: 20).
    table
        Re-use a pre-computed :class:`LimitSurfaceTable` (it scales with ``r``, eq 38).
    """

    band: int | None = None
    n_states: int = 3

    def __init__(
        self,
        patch: Any,
        params: LuGreParams = LUGRE_P1,
        *,
        mode: ReducedMode | str = ReducedMode.LIMIT_SURFACE,
        elasto_plastic: bool = False,
        n_ls: int = 20,
        table: LimitSurfaceTable | None = None,
    ) -> None:
        if not isinstance(params, LuGreParams):
            raise MCPInputError("params must be a LuGreParams instance")
        self.mode = ReducedMode.parse(mode)
        self.params = params
        self.elasto_plastic = bool(elasto_plastic)
        t0 = time.perf_counter()
        self.ellipsoid = ellipsoid_variables(patch)
        self.r = self.ellipsoid.r
        self.u = self.ellipsoid.u
        if self.r <= 0:
            raise BoundsError(
                "the patch has zero radius r (a single loaded cell); the reduced "
                "model needs a patch with extent"
            )
        self.table: LimitSurfaceTable | None = None
        if self.mode is ReducedMode.LIMIT_SURFACE:
            if table is not None:
                if not isinstance(table, LimitSurfaceTable):
                    raise MCPInputError("table must be a LimitSurfaceTable")
                self.table = table
            else:
                self.table = precompute_limit_surface(patch, n_ls)
        self.precompute_seconds = time.perf_counter() - t0
        self._p = (
            params.sigma0,
            params.sigma1,
            params.sigma2,
            params.mu_c,
            params.mu_s,
            params.gamma,
            params.v_s,
            params.s_ba,
        )

    def initial_state(self) -> np.ndarray:
        """Relaxed bristles ``z = 0``."""
        return np.zeros(3)

    def direction(self, twist: np.ndarray) -> np.ndarray:
        """Steady-state direction ``h^`` (ellipsoid ``v_S/|v_S|`` or table ``-h(r, v)``)."""
        t = _check_twist(twist)
        return np.array(self._direction(float(t[0]), float(t[1]), float(t[2]))[0])

    def _direction(self, vx: float, vy: float, w: float) -> tuple[tuple[float, float, float], float]:
        r = self.r
        vsz = r * w
        nv = math.sqrt(vx * vx + vy * vy + vsz * vsz)
        if nv == 0.0:
            return (0.0, 0.0, 0.0), 0.0
        if self.table is None:
            return (vx / nv, vy / nv, vsz / nv), nv
        hx, hy, ht = self.table.lookup(vx, vy, w, r)
        return (-hx, -hy, -ht), nv

    def steady_state_wrench(self, twist: np.ndarray, normal_force: float = 1.0) -> np.ndarray:
        """Steady state of eq (28): ``-(g(|v_S|) S h^ + sigma2 U v) f_N``."""
        t = _check_twist(twist)
        fn = _check_normal_force(normal_force)
        (hx, hy, ht), nv = self._direction(float(t[0]), float(t[1]), float(t[2]))
        g = float(self.params.g(nv))
        s2 = self.params.sigma2
        return -fn * np.array([g * hx + s2 * t[0], g * hy + s2 * t[1], g * self.r * ht + s2 * self.u * t[2]])

    def derivative_and_wrench(
        self, z: np.ndarray, twist: np.ndarray, normal_force: float = 1.0
    ) -> tuple[np.ndarray, np.ndarray]:
        """Bristle rate (eq 27/33/34) and CoP wrench (eq 28); unchecked ODE right-hand side."""
        s0, s1, s2, mu_c, mu_s, gam, v_s, s_ba = self._p
        vx, vy, w = float(twist[0]), float(twist[1]), float(twist[2])
        zx, zy, zt = float(z[0]), float(z[1]), float(z[2])
        r = self.r
        (hx, hy, ht), nv = self._direction(vx, vy, w)
        if nv == 0.0:
            dzx = dzy = dzt = 0.0
        else:
            q = nv / v_s
            g = mu_c + (mu_s - mu_c) * math.exp(-(q * q if gam == 2.0 else q**gam))
            k = s0 * nv / g
            if self.elasto_plastic:
                zst = zt / r
                zn = math.sqrt(zx * zx + zy * zy + zst * zst)
                hn = math.sqrt(hx * hx + hy * hy + ht * ht)
                z_max = g * hn / s0
                z_ba = s_ba * z_max
                if zn <= z_ba:
                    k = 0.0
                else:
                    if zn >= z_max:
                        bb = 1.0
                    else:
                        bb = 0.5 * math.sin(math.pi * (zn - 0.5 * (z_max + z_ba)) / (z_max - z_ba)) + 0.5
                    eps = 0.5 * ((hx * zx + hy * zy + ht * zst) / (hn * zn) + 1.0)
                    k *= eps * bb
            dzx = hx * nv - k * zx
            dzy = hy * nv - k * zy
            dzt = r * ht * nv - k * zt
        fn = normal_force
        wrench = np.array(
            [
                -(s0 * zx + s1 * dzx + s2 * vx) * fn,
                -(s0 * zy + s1 * dzy + s2 * vy) * fn,
                -(s0 * zt + s1 * dzt + s2 * self.u * w) * fn,
            ]
        )
        return np.array([dzx, dzy, dzt]), wrench

    def casadi_derivative_and_wrench(self, z: Any, twist: Any, normal_force: Any) -> tuple[Any, Any]:
        """Symbolic (CasADi SX or MX) bristle rate (eqs 27/33/34) and wrench (eq 28), the equations of
        :meth:`derivative_and_wrench`; the table is read with :meth:`LimitSurfaceTable.
        casadi_interpolant` (bilinear, eqs 39-43).  Norms are regularised by ``REG`` so the
        analytic Jacobian stays finite at zero twist or zero deflection."""
        s0, s1, s2 = self.params.sigma0, self.params.sigma1, self.params.sigma2
        r = self.r
        zx, zy, zt = z[0], z[1], z[2]
        vx, vy, w = twist[0], twist[1], twist[2]
        vt2 = vx * vx + vy * vy
        nv2 = vt2 + (r * w) * (r * w)
        nv = ca.sqrt(nv2 + REG * REG)
        if self.table is None:
            hx, hy, ht = vx / nv, vy / nv, (r * w) / nv
        else:
            sgn = ca.if_else(w >= 0, 1.0, -1.0)
            # REG keeps d(atan2)/dv finite at v_t = 0 (atan2(0, REG) = atan2(0, 0) = 0)
            theta = ca.atan2(sgn * vy, sgn * vx + REG)
            phi = ca.atan2(ca.sqrt(vt2 + REG * REG), r * ca.fabs(w))
            h = self.table.casadi_interpolant()(ca.vertcat(theta, phi))
            hx, hy, ht = -sgn * h[0], -sgn * h[1], -sgn * h[2]
        g = _casadi_g(self.params, nv2, nv)
        k = (s0 * nv) / g
        if self.elasto_plastic:
            zst = zt / r
            zn = ca.sqrt(zx * zx + zy * zy + zst * zst + REG * REG)
            hn = ca.sqrt(hx * hx + hy * hy + ht * ht + REG * REG)
            z_max = g * hn / s0
            z_ba = self.params.s_ba * z_max
            bb = ca.if_else(
                zn >= z_max, 1.0, 0.5 * ca.sin(np.pi * (zn - 0.5 * (z_max + z_ba)) / (z_max - z_ba)) + 0.5
            )
            eps = 0.5 * ((hx * zx + hy * zy + ht * zst) / (hn * zn) + 1.0)
            k = ca.if_else(zn <= z_ba, 0.0, k * eps * bb)
        dz = ca.vertcat(hx * nv - k * zx, hy * nv - k * zy, r * ht * nv - k * zt)
        wrench = -(s0 * z + s1 * dz + s2 * ca.vertcat(vx, vy, self.u * w)) * normal_force
        return dz, wrench

    def casadi_function(self, sym: type = ca.SX) -> ca.Function:
        """CasADi function ``(z, twist, f_N) -> (z', wrench)`` (built once per ``sym``, cached)."""
        return _cached_bristle_function(self, sym, "reduced_lugre")

    def derivative(self, z: np.ndarray, twist: np.ndarray, normal_force: float = 1.0) -> np.ndarray:
        """Checked bristle rate."""
        return self.derivative_and_wrench(
            self._check_state(z), _check_twist(twist), _check_normal_force(normal_force)
        )[0]

    def wrench(self, z: np.ndarray, twist: np.ndarray, normal_force: float = 1.0) -> np.ndarray:
        """Checked CoP wrench of eq (28)."""
        return self.derivative_and_wrench(
            self._check_state(z), _check_twist(twist), _check_normal_force(normal_force)
        )[1]

    @staticmethod
    def _check_state(z: Any) -> np.ndarray:
        arr = np.asarray(z, dtype=float)
        if arr.shape != (3,):
            raise ShapeError(f"reduced state must have shape (3,), got {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise NonFiniteError("state contains NaN or inf")
        return arr
