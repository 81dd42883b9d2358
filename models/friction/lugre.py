"""Distributed planar LuGre friction model (Arslan Waltersson and Karayiannidis, Section IV).

Each cell ``i`` of an N x N grid carries a 2-D bristle ``z_i`` with (eq 10)

    z_i' = v_i - beta_i z_i sigma0 |v_i| / g(|v_i|),          v_i = v + omega e_z x rho_i,

where ``beta_i = 1`` for the plain LuGre model and ``beta_i = eps(z^_i, v^_i) beta_bar(z_i)``
for the planar Elasto-Plastic extension (eqs 15-18, with ``eps = (v^.z^ + 1)/2`` and
``beta_bar`` the sinusoidal break-away blend of eq 6 in ``|z_i|``, ``z_max = g/sigma0``,
``z_ba = s_ba z_max``).  The wrench at the centre of pressure (CoP) is the discretised
integral of eqs (21)-(22):

    [f_x, f_y] = -sum_i (sigma0 z_i + sigma1 z_i' + sigma2 v_i) w_i f_N,
    tau        = -sum_i rho_i x (sigma0 z_i + sigma1 z_i' + sigma2 v_i) w_i f_N,

with ``w_i = p(x_i, y_i) A / f_N`` the fraction of the normal force carried by cell ``i``.
The steady state (eqs 11-12) replaces ``z_i`` by ``z_i* = g v^_i / sigma0`` and drops the
damping term; Section IV-D's bilinear steady-state approximation (eq 23) interpolates the
steady-state wrenches of rotations about the four grid corners of the cell that holds the
centre of rotation (CoR).

Conventions: a twist is ``(v_x, v_y, omega)`` of the moving body relative to the surface,
expressed at the CoP; a wrench is ``(f_x, f_y, tau)`` acting on that body, torque about the CoP.
The state vector is the bristle field interleaved per cell, ``[z_x0, z_y0, z_x1, z_y1, ...]``,
so the Jacobian of the bristle dynamics is banded (``lband = uband = 1``), which LSODA exploits.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import casadi as ca
import numpy as np
from scipy.integrate import solve_ivp

from mcpkit.errors import BoundsError, MCPInputError, NonFiniteError, ShapeError
from mcpkit.models.friction.lugre_params import (
    LUGRE_P1,
    TABLE_III,
    Integrator,
    LuGreParams,
    SimulationSettings,
)
from mcpkit.solving.tables import compact_repr

__all__ = [
    "PatchArrays",
    "patch_arrays",
    "DistributedLuGre",
    "LuGreModel",
    "LuGreTrajectory",
    "simulate_twist_profile",
    "twist_at_point",
    "wrench_about_point",
    "normalised_rmse",
    "flush_tiny",
    "casadi_euler_rollout",
    "REG",
]


# ----------------------------------------------------------------------------------------------
# contact patch arrays
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PatchArrays:
    """Cell data of a contact patch, positions relative to the centre of pressure.

    ``rho_i = (x_i - x_cop, y_i - y_cop)``; ``w_i >= 0`` with ``sum w_i = 1``.
    """

    x: np.ndarray
    """Cell-centre x relative to the CoP [m], shape (n,)."""
    y: np.ndarray
    """Cell-centre y relative to the CoP [m], shape (n,)."""
    w: np.ndarray
    """Fraction of the normal force per cell, shape (n,), sums to 1."""
    cell_size: tuple[float, float]
    """Cell side lengths (dx, dy) [m]; one may be zero for a line patch."""
    cop: np.ndarray
    """Centre of pressure in the patch's own frame [m], shape (2,)."""

    @property
    def n(self) -> int:
        """Number of cells carrying load."""
        return int(self.x.size)


def _finite_array(name: str, value: Any, ndim: int = 1) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if arr.ndim != ndim:
        raise ShapeError(f"{name} must be {ndim}-D, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise NonFiniteError(f"{name} contains NaN or inf")
    return arr


def patch_arrays(patch: Any, *, drop_empty: bool = True) -> PatchArrays:
    """Extract ``x, y, weights, cell_size`` from a ``ContactPatch`` (or any object with them).

    The weights are renormalised to sum to one and cells with zero weight are dropped
    (they carry no friction, eqs 21-22).  Positions are shifted to the CoP,
    ``x_cop = sum w_i x_i``.
    """
    for attr in ("x", "y", "weights", "cell_size"):
        if not hasattr(patch, attr):
            raise MCPInputError(f"contact patch has no attribute {attr!r}")
    x = _finite_array("patch.x", patch.x).ravel()
    y = _finite_array("patch.y", patch.y).ravel()
    w = _finite_array("patch.weights", patch.weights).ravel()
    if not (x.shape == y.shape == w.shape):
        raise ShapeError(f"patch x, y, weights shapes differ: {x.shape}, {y.shape}, {w.shape}")
    if x.size == 0:
        raise ShapeError("contact patch has no cells")
    if np.any(w < 0):
        raise BoundsError("patch weights must be >= 0")
    total = float(w.sum())
    if total <= 0:
        raise BoundsError("patch weights must not all be zero")
    cs = np.asarray(patch.cell_size, dtype=float).ravel()
    if cs.size == 1:
        cs = np.repeat(cs, 2)
    if cs.size != 2 or not np.all(np.isfinite(cs)) or np.any(cs < 0) or np.all(cs == 0):
        raise BoundsError(
            "cell_size must be two finite numbers >= 0, not both zero (a zero "
            f"side is a line patch), got {patch.cell_size!r}"
        )
    w = w / total
    if drop_empty:
        keep = w > 0
        x, y, w = x[keep], y[keep], w[keep]
    cop = np.array([np.dot(w, x), np.dot(w, y)])
    return PatchArrays(x=x - cop[0], y=y - cop[1], w=w, cell_size=(float(cs[0]), float(cs[1])), cop=cop)


# ----------------------------------------------------------------------------------------------
# twist / wrench transport
# ----------------------------------------------------------------------------------------------
def twist_at_point(twist: np.ndarray, point: np.ndarray) -> np.ndarray:
    """Move a planar twist to ``point``: ``v_p = v + omega e_z x p`` (rigid-body kinematics)."""
    vx, vy, w = np.asarray(twist, dtype=float)
    px, py = np.asarray(point, dtype=float)
    return np.array([vx - w * py, vy + w * px, w])


def wrench_about_point(wrench: np.ndarray, point: np.ndarray) -> np.ndarray:
    """Move a planar wrench applied at the origin to moments about ``point``.

    ``tau_p = tau + (0 - p) x f = tau - (p_x f_y - p_y f_x)``.
    """
    fx, fy, tau = np.asarray(wrench, dtype=float)
    px, py = np.asarray(point, dtype=float)
    return np.array([fx, fy, tau - (px * fy - py * fx)])


def _check_twist(twist: Any) -> np.ndarray:
    arr = np.asarray(twist, dtype=float)
    if arr.shape != (3,):
        raise ShapeError(f"twist must have shape (3,), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise NonFiniteError("twist contains NaN or inf")
    return arr


def _check_normal_force(fn: Any) -> float:
    value = float(fn)
    if not math.isfinite(value):
        raise NonFiniteError(f"normal force must be finite, got {fn!r}")
    if value < 0:
        raise BoundsError(f"normal force must be >= 0, got {value}")
    return value


# ----------------------------------------------------------------------------------------------
# Elasto-Plastic blend (eqs 5-6, 17-18)
# ----------------------------------------------------------------------------------------------
def beta_bar(z_norm: np.ndarray, z_max: np.ndarray, s_ba: float) -> np.ndarray:
    """Break-away blend ``beta_bar(|z|)`` of eq (18) with the sinusoid ``alpha`` of eq (6).

    0 for ``|z| <= z_ba = s_ba z_max``, ``sin(pi (|z| - (z_max + z_ba)/2) / (z_max - z_ba))/2
    + 1/2`` in between, and 1 for ``|z| >= z_max``.
    """
    z_norm = np.asarray(z_norm, dtype=float)
    z_max = np.asarray(z_max, dtype=float)
    z_ba = s_ba * z_max
    arg = np.pi * (z_norm - 0.5 * (z_max + z_ba)) / np.maximum(z_max - z_ba, 1e-300)
    mid = 0.5 * np.sin(arg) + 0.5
    return np.where(z_norm <= z_ba, 0.0, np.where(z_norm >= z_max, 1.0, mid))


REG = 1e-100
"""Regularisation of norms in the CasADi expressions, ``|a| = sqrt(a.a + REG^2)``."""


def _casadi_g(p: LuGreParams, vn2: Any, vn: Any) -> Any:
    """Symbolic ``g(|v|)`` of eq (2) given ``|v|^2`` and ``|v|`` (exp of ``-|v|^2/v_s^2`` for
    gamma = 2)."""
    if p.gamma == 2.0:
        return p.mu_c + (p.mu_s - p.mu_c) * ca.exp(vn2 * (-1.0 / p.v_s**2))
    return p.mu_c + (p.mu_s - p.mu_c) * ca.exp(-((vn / p.v_s) ** p.gamma))


def _casadi_beta_bar(zn: Any, z_max: Any, s_ba: float) -> Any:
    """Symbolic ``beta_bar(|z|)`` of eq (18) (same branches as :func:`beta_bar`)."""
    z_ba = s_ba * z_max
    mid = 0.5 * ca.sin(np.pi * (zn - 0.5 * (z_max + z_ba)) / (z_max - z_ba)) + 0.5
    return ca.if_else(zn <= z_ba, 0.0, ca.if_else(zn >= z_max, 1.0, mid))


def casadi_euler_rollout(
    model: LuGreModel, dt: float, n_steps: int, *, unroll: int = 50, sym: type = ca.SX
) -> ca.Function:
    """Fixed-step explicit Euler of ``model`` as one CasADi function (CasADi's virtual machine,
    no generated C code): ``(z0, U) -> (Z, W)`` with ``U`` of shape (4, n_steps) holding
    ``(v_x, v_y, omega, f_N)`` per step, ``Z`` the states after every ``unroll`` steps and ``W``
    (3, n_steps) the wrenches at the start of every step.

    ``unroll`` Euler steps are written out in one SX function (causal: step ``k`` uses only
    ``z_k`` and ``U[:, k]``) which ``Function.mapaccum`` repeats ``n_steps / unroll`` times;
    this removes the per-call overhead that would otherwise dominate a small model.
    """
    if n_steps < 1 or unroll < 1 or n_steps % unroll:
        raise BoundsError(f"n_steps ({n_steps}) must be a positive multiple of unroll ({unroll})")
    if not dt > 0:
        raise BoundsError(f"dt must be > 0, got {dt}")
    step = model.casadi_function(sym)
    z = sym.sym("z", model.n_states)
    u = sym.sym("u", 4, unroll)
    zk = z
    wrenches = []
    for j in range(unroll):
        dz, wr = step(zk, u[0:3, j], u[3, j])
        wrenches.append(wr)
        zk = zk + dt * dz
    opts = {"cse": True} if sym is ca.SX else {}
    block = ca.Function("euler_block", [z, u], [zk, ca.horzcat(*wrenches)], opts)
    return block.mapaccum("euler_rollout", n_steps // unroll)


# ----------------------------------------------------------------------------------------------
# distributed model
# ----------------------------------------------------------------------------------------------
class LuGreModel(Protocol):
    """Interface shared by the distributed and reduced planar LuGre models."""

    n_states: int
    band: int | None

    def derivative_and_wrench(
        self, z: np.ndarray, twist: np.ndarray, normal_force: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """Return ``(z', wrench)`` for bristle state ``z`` and twist at the CoP."""
        ...

    def casadi_function(self, sym: type = ca.SX) -> ca.Function:
        """CasADi function ``(z, twist, f_N) -> (z', wrench)`` of the same model (SX or MX)."""
        ...


def _cached_bristle_function(model: Any, sym: type, name: str) -> ca.Function:
    """``(z, twist, f_N) -> (z', wrench)`` of a LuGre model's ``casadi_derivative_and_wrench``,
    built once per symbol type ``sym`` (SX or MX) and cached on the model."""
    cache = model.__dict__.setdefault("_ca_funs", {})
    if sym not in cache:
        z = sym.sym("z", model.n_states)
        tw = sym.sym("twist", 3)
        fn = sym.sym("fN")
        dz, wr = model.casadi_derivative_and_wrench(z, tw, fn)
        opts = {"cse": True} if sym is ca.SX else {}
        cache[sym] = ca.Function(name, [z, tw, fn], [dz, wr], ["z", "twist", "fN"], ["dz", "wrench"], opts)
    return cache[sym]


class DistributedLuGre:
    """Distributed planar LuGre model on the cells of a contact patch (eqs 9-22).

    Parameters
    ----------
    patch
        A ``ContactPatch`` (only ``x, y, weights, cell_size`` are used).
    params
        Table I parameters (default ``p = 1``).
    elasto_plastic
        Use the planar Elasto-Plastic bristle rate of eq (15) instead of eq (10).
    """

    band: int | None = 1

    def __init__(self, patch: Any, params: LuGreParams = LUGRE_P1, *, elasto_plastic: bool = False) -> None:
        if not isinstance(params, LuGreParams):
            raise MCPInputError("params must be a LuGreParams instance")
        self.patch = patch_arrays(patch)
        self.params = params
        self.elasto_plastic = bool(elasto_plastic)
        self.n_cells = self.patch.n
        self.n_states = 2 * self.n_cells
        self._x = self.patch.x
        self._y = self.patch.y
        self._w = self.patch.w
        self._g_quadratic = params.gamma == 2.0

    # -- helpers --------------------------------------------------------------------------------
    def _g(self, vn: np.ndarray) -> np.ndarray:
        p = self.params
        s = vn * (1.0 / p.v_s)
        s = s * s if self._g_quadratic else s**p.gamma
        return p.mu_c + (p.mu_s - p.mu_c) * np.exp(-s)

    def cell_velocities(self, twist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Cell velocities ``v_i = v + omega e_z x rho_i`` (Fig. 3)."""
        vx, vy, w = twist
        return vx - w * self._y, vy + w * self._x

    def _wrench(self, lx: np.ndarray, ly: np.ndarray, fn: float) -> np.ndarray:
        # eqs (21)-(22): l already multiplied by the weights
        fx = -fn * lx.sum()
        fy = -fn * ly.sum()
        tau = -fn * (np.dot(self._x, ly) - np.dot(self._y, lx))
        return np.array([fx, fy, tau])

    # -- dynamics -------------------------------------------------------------------------------
    def derivative_and_wrench(
        self, z: np.ndarray, twist: np.ndarray, normal_force: float = 1.0
    ) -> tuple[np.ndarray, np.ndarray]:
        """Bristle rate (eq 10 or 15) and CoP wrench (eqs 21-22) for the interleaved state ``z``.

        No input validation (this is the ODE right-hand side); use :meth:`derivative` for a
        checked call.
        """
        p = self.params
        zz = z.reshape(-1, 2)
        zx = zz[:, 0]
        zy = zz[:, 1]
        vx, vy, w = twist
        cvx = vx - w * self._y
        cvy = vy + w * self._x
        vn = np.sqrt(cvx * cvx + cvy * cvy)
        g = self._g(vn)
        k = p.sigma0 * vn / g
        if self.elasto_plastic:
            zn = np.sqrt(zx * zx + zy * zy)
            z_max = g / p.sigma0
            bb = beta_bar(zn, z_max, p.s_ba)
            vs = np.where(vn > 0, vn, 1.0)
            zs = np.where(zn > 0, zn, 1.0)
            eps = 0.5 * ((cvx / vs) * (zx / zs) + (cvy / vs) * (zy / zs) + 1.0)
            k = k * eps * bb
        dzx = cvx - k * zx
        dzy = cvy - k * zy
        lx = (p.sigma0 * zx + p.sigma1 * dzx + p.sigma2 * cvx) * self._w
        ly = (p.sigma0 * zy + p.sigma1 * dzy + p.sigma2 * cvy) * self._w
        dz = np.empty_like(zz)
        dz[:, 0] = dzx
        dz[:, 1] = dzy
        return dz.reshape(-1), self._wrench(lx, ly, normal_force)

    def casadi_derivative_and_wrench(self, z: Any, twist: Any, normal_force: Any) -> tuple[Any, Any]:
        """Symbolic (CasADi SX or MX) bristle rate and CoP wrench, the same equations as
        :meth:`derivative_and_wrench`: ``z_i' = v_i - beta_i k_i z_i``, ``k_i = sigma0 |v_i| /
        g(|v_i|)``, wrench of eqs (21)-(22).

        Norms are regularised as ``sqrt(. + REG^2)`` (``REG = 1e-100``) so that the analytic
        Jacobian is finite at zero velocity or zero deflection; the change is below 1e-94.
        """
        p = self.params
        x, y, wt = (ca.DM(a) for a in (self._x, self._y, self._w))
        zx, zy = z[0::2], z[1::2]
        vx, vy, w = twist[0], twist[1], twist[2]
        cvx = vx - w * y
        cvy = vy + w * x
        vn2 = cvx * cvx + cvy * cvy
        vn = ca.sqrt(vn2 + REG * REG)
        g = _casadi_g(p, vn2, vn)
        k = (p.sigma0 * vn) / g
        if self.elasto_plastic:
            zn = ca.sqrt(zx * zx + zy * zy + REG * REG)
            z_max = g / p.sigma0
            eps = 0.5 * ((cvx * zx + cvy * zy) / (vn * zn) + 1.0)
            k = k * eps * _casadi_beta_bar(zn, z_max, p.s_ba)
        dzx = cvx - k * zx
        dzy = cvy - k * zy
        lx = (p.sigma0 * zx + p.sigma1 * dzx + p.sigma2 * cvx) * wt
        ly = (p.sigma0 * zy + p.sigma1 * dzy + p.sigma2 * cvy) * wt
        wrench = -normal_force * ca.vertcat(ca.sum1(lx), ca.sum1(ly), ca.dot(x, ly) - ca.dot(y, lx))
        dz = ca.reshape(ca.horzcat(dzx, dzy).T, self.n_states, 1)
        return dz, wrench

    def casadi_function(self, sym: type = ca.SX) -> ca.Function:
        """CasADi function ``(z, twist, f_N) -> (z', wrench)`` (built once per ``sym``, cached).

        ``sym=ca.SX`` gives a scalar expression graph (one instruction per cell operation);
        ``sym=ca.MX`` keeps the cell arrays as vectors, so each operation is one node that loops
        over the cells in CasADi's C++ runtime (faster to evaluate for many cells)."""
        return _cached_bristle_function(self, sym, "distributed_lugre")

    def euler_rollout(
        self, z0: np.ndarray, twists: np.ndarray, normal_forces: np.ndarray, dt: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """Fixed-step explicit Euler, ``z_{k+1} = z_k + dt z'(z_k, v_k, f_N,k)``, vectorised NumPy.

        ``twists`` has shape (K, 3), ``normal_forces`` shape (K,).  Returns the final state and
        the wrenches (K, 3) at the start of every step.  Same equations as
        :meth:`derivative_and_wrench` (plain LuGre and Elasto-Plastic), written with the
        cell pairs as rows of an (n, 2) array and without temporaries that can be avoided; this
        is the fastest distributed implementation in ``benchmarks/bench_lugre.py``.
        """
        p = self.params
        twists = np.asarray(twists, dtype=float)
        fns = np.asarray(normal_forces, dtype=float)
        if twists.ndim != 2 or twists.shape[1] != 3 or fns.shape != (twists.shape[0],):
            raise ShapeError(f"twists must be (K, 3) and normal_forces (K,), got {twists.shape}, {fns.shape}")
        z = np.array(self._check_state(z0).reshape(-1, 2))
        x, y, wt = self._x, self._y, self._w
        wx, wy = x * wt, y * wt
        s0, s1, s2 = p.sigma0, p.sigma1, p.sigma2
        dmu, inv_vs2 = p.mu_s - p.mu_c, -1.0 / p.v_s**2
        quad = self._g_quadratic
        cv = np.empty_like(z)
        out = np.empty((twists.shape[0], 3))
        for j in range(twists.shape[0]):
            vx, vy, w = twists[j]
            np.multiply(y, -w, out=cv[:, 0])
            cv[:, 0] += vx
            np.multiply(x, w, out=cv[:, 1])
            cv[:, 1] += vy
            vn2 = np.einsum("ij,ij->i", cv, cv)
            vn = np.sqrt(vn2)
            if quad:
                g = p.mu_c + dmu * np.exp(vn2 * inv_vs2)
            else:
                g = self._g(vn)
            k = (s0 * vn) / g
            if self.elasto_plastic:
                zn = np.sqrt(np.einsum("ij,ij->i", z, z))
                bb = beta_bar(zn, g / s0, p.s_ba)
                vs = np.where(vn > 0, vn, 1.0)
                zs = np.where(zn > 0, zn, 1.0)
                k = k * bb * 0.5 * (np.einsum("ij,ij->i", cv, z) / (vs * zs) + 1.0)
            dz = cv - k[:, None] * z
            lf = s0 * z + s1 * dz + s2 * cv
            fn = fns[j]
            out[j, 0] = -fn * (wt @ lf[:, 0])
            out[j, 1] = -fn * (wt @ lf[:, 1])
            out[j, 2] = -fn * (wx @ lf[:, 1] - wy @ lf[:, 0])
            dz *= dt
            z += dz
        return z.reshape(-1), out

    def derivative(self, z: np.ndarray, twist: np.ndarray, normal_force: float = 1.0) -> np.ndarray:
        """Checked bristle rate ``z'`` (eq 10, or eq 15 with the Elasto-Plastic extension)."""
        z = self._check_state(z)
        return self.derivative_and_wrench(z, _check_twist(twist), _check_normal_force(normal_force))[0]

    def wrench(self, z: np.ndarray, twist: np.ndarray, normal_force: float = 1.0) -> np.ndarray:
        """Checked CoP wrench ``(f_x, f_y, tau)`` of eqs (21)-(22) for the state ``z``."""
        z = self._check_state(z)
        return self.derivative_and_wrench(z, _check_twist(twist), _check_normal_force(normal_force))[1]

    def initial_state(self) -> np.ndarray:
        """Relaxed bristles, ``z = 0``."""
        return np.zeros(self.n_states)

    def _check_state(self, z: Any) -> np.ndarray:
        arr = np.asarray(z, dtype=float)
        if arr.shape != (self.n_states,):
            raise ShapeError(f"state must have shape ({self.n_states},), got {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise NonFiniteError("state contains NaN or inf")
        return arr

    # -- steady state ---------------------------------------------------------------------------
    def steady_state_state(self, twist: np.ndarray) -> np.ndarray:
        """Steady-state bristles ``z_i* = g(|v_i|) v_i / (sigma0 |v_i|)`` (eq 11), interleaved."""
        twist = _check_twist(twist)
        cvx, cvy = self.cell_velocities(twist)
        vn = np.hypot(cvx, cvy)
        scale = np.where(vn > 0, self._g(vn) / (self.params.sigma0 * np.where(vn > 0, vn, 1.0)), 0.0)
        return np.column_stack([cvx * scale, cvy * scale]).reshape(-1)

    def _steady_batch(self, twists: np.ndarray) -> np.ndarray:
        """Steady-state wrenches (eqs 11-14 discretised) for twists of shape (m, 3), fN = 1."""
        p = self.params
        vx, vy, w = twists[:, 0:1], twists[:, 1:2], twists[:, 2:3]
        cvx = vx - w * self._y[None, :]
        cvy = vy + w * self._x[None, :]
        vn = np.sqrt(cvx * cvx + cvy * cvy)
        safe = np.where(vn > 0, vn, 1.0)
        gs = np.where(vn > 0, self._g(vn) / safe, 0.0)  # sigma0 z* = g v^
        lx = (gs + p.sigma2) * cvx * self._w
        ly = (gs + p.sigma2) * cvy * self._w
        fx = -lx.sum(axis=1)
        fy = -ly.sum(axis=1)
        tau = -(ly @ self._x - lx @ self._y)
        return np.column_stack([fx, fy, tau])

    def steady_state_wrench(
        self, twist: np.ndarray, normal_force: float = 1.0, *, bilinear: bool = False
    ) -> np.ndarray:
        """Steady-state CoP wrench (eqs 11-14); ``bilinear=True`` applies eq (23) (Sec. IV-D)."""
        twist = _check_twist(twist)
        fn = _check_normal_force(normal_force)
        return fn * self.steady_state_wrenches(twist[None, :], bilinear=bilinear)[0]

    def steady_state_wrenches(self, twists: np.ndarray, *, bilinear: bool = False) -> np.ndarray:
        """Vectorised steady-state wrenches for twists of shape (m, 3) at unit normal force.

        With ``bilinear=True`` every twist whose CoR ``(-v_y/omega, v_x/omega)`` lies inside the
        grid's bounding box is replaced by the bilinear interpolation (eq 23) of the wrenches of
        rotations with the same ``omega`` about the four corners of the grid cell holding the CoR.
        """
        twists = np.asarray(twists, dtype=float)
        if twists.ndim != 2 or twists.shape[1] != 3:
            raise ShapeError(f"twists must have shape (m, 3), got {twists.shape}")
        if not np.all(np.isfinite(twists)):
            raise NonFiniteError("twists contain NaN or inf")
        out = self._steady_batch(twists)
        if not bilinear:
            return out
        w = twists[:, 2]
        rot = w != 0
        if not np.any(rot):
            return out
        dx, dy = self.patch.cell_size
        # a line patch (one zero side) is treated as one row of square cells (Fig. 11)
        dx, dy = (dx if dx > 0 else dy), (dy if dy > 0 else dx)
        # the grid lattice of cell corners, in CoP coordinates
        x0 = float(np.min(self._x)) - 0.5 * dx
        y0 = float(np.min(self._y)) - 0.5 * dy
        x1 = float(np.max(self._x)) + 0.5 * dx
        y1 = float(np.max(self._y)) + 0.5 * dy
        idx = np.flatnonzero(rot)
        cor_x = -twists[idx, 1] / w[idx]
        cor_y = twists[idx, 0] / w[idx]
        inside = (cor_x >= x0) & (cor_x < x1) & (cor_y >= y0) & (cor_y < y1)
        idx, cor_x, cor_y = idx[inside], cor_x[inside], cor_y[inside]
        if idx.size == 0:
            return out
        sx = (cor_x - x0) / dx
        sy = (cor_y - y0) / dy
        ix = np.floor(sx)
        iy = np.floor(sy)
        ddx = sx - ix
        ddy = sy - iy
        result = np.zeros((idx.size, 3))
        wi = w[idx]
        for ox, oy, coeff in (
            (0, 0, (1 - ddx) * (1 - ddy)),
            (0, 1, (1 - ddx) * ddy),
            (1, 0, ddx * (1 - ddy)),
            (1, 1, ddx * ddy),
        ):
            cx = x0 + (ix + ox) * dx
            cy = y0 + (iy + oy) * dy
            # rotation with rate w about (cx, cy): v(0) = w e_z x (0 - c) = (w c_y, -w c_x)
            tw = np.column_stack([wi * cy, -wi * cx, wi])
            result += coeff[:, None] * self._steady_batch(tw)
        out[idx] = result
        return out


# ----------------------------------------------------------------------------------------------
# simulation with a prescribed twist
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LuGreTrajectory:
    """Result of :func:`simulate_twist_profile`."""

    t: np.ndarray
    """Output times [s], shape (m,)."""
    twist: np.ndarray
    """Prescribed twist at the CoP, shape (m, 3)."""
    wrench: np.ndarray
    """Friction wrench at the CoP, shape (m, 3)."""
    z_final: np.ndarray
    """Bristle state at the final time."""
    n_rhs: int
    """Number of right-hand-side evaluations (or fixed steps) used."""

    def __repr__(self) -> str:
        """A few lines: key fields, arrays by shape (:func:`~mcpkit.solving.tables.compact_repr`)."""
        return compact_repr(self)


TINY = 1e-100
"""Magnitude below which states and rates are flushed to zero inside ODE right-hand sides.

Bristles that relax exponentially underflow into subnormal numbers, and LSODA's finite-difference
Jacobian then produces NaN; a deflection of 1e-100 m is physically zero."""


def flush_tiny(a: np.ndarray) -> np.ndarray:
    """Return ``a`` with entries of magnitude below :data:`TINY` set to zero."""
    return np.where(np.abs(a) < TINY, 0.0, a)


def _as_callable(value: float | Callable[[float], float]) -> Callable[[float], float]:
    if callable(value):
        return value
    const = _check_normal_force(value)
    return lambda _t: const


def simulate_twist_profile(
    model: LuGreModel,
    twist_fn: Callable[[float], np.ndarray],
    t_end: float,
    *,
    normal_force: float | Callable[[float], float] = 1.0,
    integrator: Integrator | str = Integrator.LSODA,
    settings: SimulationSettings = TABLE_III,
    output_dt: float | None = None,
    dt: float | None = None,
) -> LuGreTrajectory:
    """Integrate the bristle dynamics for a prescribed CoP twist ``twist_fn(t)`` (Fig. 5 setup).

    ``integrator="LSODA"`` calls ``solve_ivp(method="LSODA")`` over the whole horizon with the
    Table III tolerances and ``max_step``; the distributed model passes ``lband = uband = 1``
    (finite-difference banded Jacobian).  ``"BDF"`` and ``"Radau"`` receive the analytic,
    sparse Jacobian ``dz'/dz`` of the model's CasADi expressions.
    ``integrator="euler"`` takes fixed explicit-Euler steps of ``dt`` (default 1e-5 s).
    Forces are evaluated at the output times from the integrated state.
    """
    t_end = float(t_end)
    if not math.isfinite(t_end) or t_end <= 0:
        raise BoundsError(f"t_end must be positive and finite, got {t_end}")
    integrator = Integrator.parse(integrator)
    out_dt = settings.output_dt if output_dt is None else float(output_dt)
    if not out_dt > 0:
        raise BoundsError("output_dt must be > 0")
    fn_fun = _as_callable(normal_force)
    n_out = int(round(t_end / out_dt)) + 1
    t_out = np.linspace(0.0, out_dt * (n_out - 1), n_out)
    z0 = np.zeros(model.n_states)
    counter = [0]

    if integrator.is_solve_ivp:

        def rhs(t: float, z: np.ndarray) -> np.ndarray:
            counter[0] += 1
            dz = model.derivative_and_wrench(flush_tiny(z), np.asarray(twist_fn(t), dtype=float), fn_fun(t))[
                0
            ]
            return flush_tiny(dz)

        kwargs: dict[str, Any] = {}
        method = settings.solver
        if integrator is Integrator.LSODA:
            if model.band is not None:
                kwargs.update(lband=model.band, uband=model.band)
        else:
            method = integrator.value
            fun = model.casadi_function()
            zs = ca.SX.sym("z", model.n_states)
            tw = ca.SX.sym("twist", 3)
            fs = ca.SX.sym("fN")
            jac_fun = ca.Function("bristle_jacobian", [zs, tw, fs], [ca.jacobian(fun(zs, tw, fs)[0], zs)])

            def jac(t: float, z: np.ndarray) -> Any:
                return jac_fun(z, np.asarray(twist_fn(t), dtype=float), fn_fun(t)).sparse()

            kwargs["jac"] = jac
        sol = solve_ivp(
            rhs,
            (0.0, t_out[-1]),
            z0,
            method=method,
            t_eval=t_out,
            atol=settings.atol,
            rtol=settings.rtol,
            max_step=settings.max_step,
            **kwargs,
        )
        if not sol.success:
            raise RuntimeError(f"solve_ivp failed: {sol.message}")
        states = sol.y.T
    else:
        step = settings.fixed_dt if dt is None else float(dt)
        if not step > 0:
            raise BoundsError("dt must be > 0")
        per_out = max(1, int(round(out_dt / step)))
        states = np.empty((n_out, model.n_states))
        z = z0.copy()
        states[0] = z
        t = 0.0
        for k in range(1, n_out):
            for _ in range(per_out):
                dz = model.derivative_and_wrench(z, np.asarray(twist_fn(t), dtype=float), fn_fun(t))[0]
                z = z + step * dz
                t += step
                counter[0] += 1
            states[k] = z
    twists = np.array([np.asarray(twist_fn(t), dtype=float) for t in t_out])
    wrenches = np.array(
        [model.derivative_and_wrench(states[k], twists[k], fn_fun(t_out[k]))[1] for k in range(n_out)]
    )
    return LuGreTrajectory(
        t=t_out, twist=twists, wrench=wrenches, z_final=states[-1].copy(), n_rhs=counter[0]
    )


def normalised_rmse(estimate: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """RMSE normalised by the maximum reference force (Figs. 9, 36, 37).

    For wrench histories of shape (m, 3): the tangential error uses both force components,
    ``sqrt(mean(|f_est - f_ref|^2)) / max|f_ref|``, and the torque error is
    ``sqrt(mean((tau_est - tau_ref)^2)) / max|tau_ref|``.  Returns ``[e_tangential, e_torque]``.
    """
    est = np.asarray(estimate, dtype=float)
    ref = np.asarray(reference, dtype=float)
    if est.shape != ref.shape or est.ndim != 2 or est.shape[1] != 3:
        raise ShapeError(f"estimate and reference must both be (m, 3), got {est.shape}, {ref.shape}")
    d = est - ref
    e_t = math.sqrt(float(np.mean(d[:, 0] ** 2 + d[:, 1] ** 2)))
    f_max = float(np.max(np.hypot(ref[:, 0], ref[:, 1])))
    e_tau = math.sqrt(float(np.mean(d[:, 2] ** 2)))
    tau_max = float(np.max(np.abs(ref[:, 2])))
    return np.array([e_t / f_max if f_max > 0 else np.inf, e_tau / tau_max if tau_max > 0 else np.inf])
