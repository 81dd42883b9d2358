"""Experiments of Arslan Waltersson and Karayiannidis with the planar LuGre models.

* :func:`velocity_profile_experiment` - the prescribed CoP twist of Fig. 5 applied to the
  distributed model and to the reduced model with the limit-surface table (Fig. 17) and with
  the ellipsoid approximation (Fig. 13); error is the RMSE normalised by the maximum force
  (Figs. 9, 22, 36).
* :func:`drift_experiment` - a 1 kg disc under oscillating tangential loads (Figs. 6, 23) or
  an oscillating normal load (Figs. 24, 25), plain LuGre against the Elasto-Plastic extension.
* :func:`slip_stick_experiment` - a 0.15 x 0.08 m, 0.2 kg object held by a parallel gripper
  whose grip force varies (Figs. 26-32); distributed against reduced model.
* :func:`ellipsoid_error_experiment` - the ellipsoid approximation against the pre-computed
  limit surface over the velocity sphere (Section V-B).

The prescribed velocity profile and the load profiles are not printed in the paper; they are
taken from the authors' public code (github.com/Gabrieleenx/FrictionModelling:
``tests/velocity_profiles.py::vel_num_cells``, ``test_ode_solver/2dLuGreDriftTest_solver.py``,
``test_ode_solver/planar_slip_stick_solver.py``) and re-implemented here.

Every function returns NumPy arrays and a matplotlib ``Figure`` (never shown).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import casadi as ca
import numpy as np
from matplotlib.figure import Figure
from scipy.integrate import solve_ivp

from mcpkit.errors import BoundsError, NonFiniteError, UnknownOptionError
from mcpkit.models.friction.lugre import (
    DistributedLuGre,
    LuGreModel,
    normalised_rmse,
    patch_arrays,
    simulate_twist_profile,
    twist_at_point,
)
from mcpkit.models.friction.lugre_params import (
    LUGRE_P1,
    TABLE_III,
    Integrator,
    LuGreParams,
    SimulationSettings,
)
from mcpkit.models.friction.lugre_reduced import (
    ReducedLuGre,
    ReducedMode,
    ellipsoid_variables,
    precompute_limit_surface,
    sphere_twists,
)
from mcpkit.models.friction.patch import ContactPatch
from mcpkit.solving.options import Choice
from mcpkit.solving.tables import compact_repr

__all__ = [
    "paper_velocity_profile",
    "make_patch",
    "VelocityProfileResult",
    "velocity_profile_experiment",
    "DriftResult",
    "drift_experiment",
    "SlipStickResult",
    "slip_stick_experiment",
    "EllipsoidErrorResult",
    "ellipsoid_error_experiment",
]

GRAVITY = 9.81


# ----------------------------------------------------------------------------------------------
# patches
# ----------------------------------------------------------------------------------------------
class PatchKind(str, Choice, option="patch kind"):
    """The contact patches of the experiments (:func:`make_patch`; Fig. 8 of Arslan Waltersson
    and Karayiannidis), on a grid spanning ``size``."""

    CIRCLE = "circle"
    """A disc of diameter ``size``."""
    SQUARE = "square"
    """A square of side ``size``."""
    LINE = "line"
    """A uniform line of length ``size``."""
    LINE_GRAD = "line_grad"
    """A line of length ``size`` along x, pressure falling linearly from ``x = -size/2`` to zero
    at ``x = +size/2`` (the authors' gradient line)."""
    NONCONVEX_A = "nonconvex_a"
    """Fig. 8's first non-convex shape (:meth:`~mcpkit.models.friction.patch.ContactPatch.nonconvex_a`)."""
    NONCONVEX_B = "nonconvex_b"
    """Fig. 8's second non-convex shape (:meth:`~mcpkit.models.friction.patch.ContactPatch.nonconvex_b`)."""


class LuGreModelKind(str, Choice, option="model"):
    """Which LuGre friction model an experiment simulates (the argument ``model``)."""

    DISTRIBUTED = "distributed"
    """The distributed model: one bristle state per cell of the patch
    (:class:`~mcpkit.models.friction.lugre.DistributedLuGre`)."""
    REDUCED = "reduced"
    """The reduced model on the limit surface's ellipsoid
    (:class:`~mcpkit.models.friction.lugre_reduced.ReducedLuGre`)."""


class DriftLoad(str, Choice, option="load"):
    """The oscillating load of :func:`drift_experiment` (Figs. 6, 23-25)."""

    TANGENTIAL = "tangential"
    """``f_x = 1 + 0.4 sin(6 pi t)`` from 1 s, torque ``0.03 + 0.01 sin`` from 3 s."""
    NORMAL = "normal"
    """``f_x = 1``, ``tau = 0.03``, ``f_N = m g + sin(6 pi t)`` from 1 s."""


def make_patch(kind: PatchKind | str, size: float = 0.02, n: int = 21) -> ContactPatch:
    """Contact patch of the paper's experiments on an n x n grid spanning ``size``.

    ``circle`` (diameter ``size``), ``square`` (side ``size``), ``line`` (uniform, length
    ``size``), ``line_grad`` (length ``size`` along x, pressure falling linearly from
    ``x = -size/2`` to zero at ``x = +size/2``, the authors' gradient line), ``nonconvex_a`` /
    ``nonconvex_b`` (the LuGre paper Fig. 8's non-convex shapes, see ``ContactPatch.nonconvex_a``).
    """
    kind = PatchKind.parse(kind).value
    if not (math.isfinite(size) and size > 0):
        raise BoundsError(f"size must be positive, got {size}")
    if kind == "circle":
        return ContactPatch.circle(size / 2, n)
    if kind == "square":
        return ContactPatch.rectangle(size, size, n)
    if kind == "line":
        return ContactPatch.line(size, n)
    if kind == "line_grad":
        return ContactPatch.linear_gradient(size, 0.0, n, ratio=0.0)
    if kind == "nonconvex_a":
        return ContactPatch.nonconvex_a(size, n)
    return ContactPatch.nonconvex_b(size, n)


# ----------------------------------------------------------------------------------------------
# Fig. 5 velocity profile
# ----------------------------------------------------------------------------------------------
_T = (0.6, 0.8, 1.4, 1.6, 2.2, 2.4, 3.0, 3.2, 3.8, 4.0, 4.6)


def paper_velocity_profile(t: float, v_max: float = 0.015) -> np.ndarray:
    """CoP twist ``(v_x, v_y, omega)`` of Fig. 5 at time ``t`` (piecewise linear, 5 s).

    Spin-up to 1 rad/s, then a ramp of ``v_x`` to ``v_max`` and back (the CoR crosses the
    patch), then ``v_y`` ramps up, spin stops, ``v_y`` ramps down.
    """
    t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11 = _T
    c = v_max
    if t < t1:
        return np.array([0.0, 0.0, t / t1])
    if t < t2:
        return np.array([0.0, 0.0, 1.0])
    if t < t3:
        return np.array([c * (t - t2) / (t3 - t2), 0.0, 1.0])
    if t < t4:
        return np.array([c, 0.0, 1.0])
    if t < t5:
        return np.array([c * (t5 - t) / (t5 - t4), 0.0, 1.0])
    if t < t6:
        return np.array([0.0, 0.0, 1.0])
    if t < t7:
        return np.array([0.0, c * (t - t6) / (t7 - t6), 1.0])
    if t < t8:
        return np.array([0.0, c, 1.0])
    if t < t9:
        return np.array([0.0, c, (t9 - t) / (t9 - t8)])
    if t < t10:
        return np.array([0.0, c, 0.0])
    if t < t11:
        return np.array([0.0, c * (t11 - t) / (t11 - t10), 0.0])
    return np.zeros(3)


@dataclass
class VelocityProfileResult:
    """Arrays of :func:`velocity_profile_experiment`."""

    t: np.ndarray
    twist: np.ndarray
    wrench_distributed: np.ndarray
    wrench_reduced: np.ndarray
    wrench_ellipsoid: np.ndarray
    rmse_reduced: np.ndarray
    """Normalised RMSE [tangential, torque] of the limit-surface reduced model."""
    rmse_ellipsoid: np.ndarray
    """Normalised RMSE [tangential, torque] of the ellipsoid reduced model."""
    precompute_seconds: float
    figure: Figure = field(repr=False)

    def __repr__(self) -> str:
        """A few lines: key fields, arrays by shape (:func:`~mcpkit.solving.tables.compact_repr`)."""
        return compact_repr(self)


def _wrench_axes(fig: Figure, n: int) -> list[Any]:
    return [fig.add_subplot(n, 1, k + 1) for k in range(n)]


def velocity_profile_experiment(
    shape: str = "circle",
    *,
    patch: Any | None = None,
    params: LuGreParams = LUGRE_P1,
    settings: SimulationSettings = TABLE_III,
    integrator: Integrator | str = Integrator.LSODA,
    t_end: float = 5.0,
    normal_force: float = 1.0,
    elasto_plastic: bool = False,
) -> VelocityProfileResult:
    """Run the Fig. 5 twist profile on the distributed and both reduced models (Figs. 13, 17).

    Default: circle of radius 10 mm on a 21 x 21 grid over 0.02 x 0.02 m, ``f_N = 1`` N,
    Table I ``p = 1``, LSODA with Table III tolerances.
    """
    if patch is None:
        patch = make_patch(shape, settings.contact_size[0], settings.n_cells)
    dist = DistributedLuGre(patch, params, elasto_plastic=elasto_plastic)
    t0 = time.perf_counter()
    red = ReducedLuGre(
        patch, params, mode=ReducedMode.LIMIT_SURFACE, elasto_plastic=elasto_plastic, n_ls=settings.n_ls
    )
    pre = time.perf_counter() - t0
    ell = ReducedLuGre(patch, params, mode=ReducedMode.ELLIPSOID, elasto_plastic=elasto_plastic)
    runs = {}
    for name, model in (("d", dist), ("r", red), ("e", ell)):
        runs[name] = simulate_twist_profile(
            model,
            paper_velocity_profile,
            t_end,
            normal_force=normal_force,
            integrator=integrator,
            settings=settings,
        )
    t = runs["d"].t
    wd, wr, we = runs["d"].wrench, runs["r"].wrench, runs["e"].wrench
    fig = Figure(figsize=(7, 6), dpi=100)
    ax = _wrench_axes(fig, 4)
    for k, lab in ((0, "x"), (1, "y")):
        ax[0].plot(t, wd[:, k], label=f"$f_{{d,{lab}}}$")
        ax[0].plot(t, wr[:, k], "--", label=f"$f_{{r,{lab}}}$ (LS)")
        ax[0].plot(t, we[:, k], ":", label=f"$f_{{e,{lab}}}$ (ellipsoid)")
    ax[1].plot(t, wd[:, 2], label=r"$\tau_d$")
    ax[1].plot(t, wr[:, 2], "--", label=r"$\tau_r$ (LS)")
    ax[1].plot(t, we[:, 2], ":", label=r"$\tau_e$ (ellipsoid)")
    ax[2].plot(t, runs["d"].twist[:, 0], label="$v_x$")
    ax[2].plot(t, runs["d"].twist[:, 1], label="$v_y$")
    ax[3].plot(t, runs["d"].twist[:, 2], label=r"$\omega$")
    for a, lab in zip(ax, ("force [N]", "torque [Nm]", "velocity [m/s]", "omega [rad/s]"), strict=True):
        a.set_ylabel(lab, fontsize=8)
        a.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        a.tick_params(labelsize=7)
    ax[3].set_xlabel("time [s]")
    e_r = normalised_rmse(wr, wd)
    e_e = normalised_rmse(we, wd)
    ax[0].set_title(
        f"{shape}: normalised RMSE LS (f, tau) = ({e_r[0]:.3f}, {e_r[1]:.3f}), "
        f"ellipsoid = ({e_e[0]:.3f}, {e_e[1]:.3f})",
        fontsize=8,
    )
    fig.tight_layout()
    return VelocityProfileResult(
        t=t,
        twist=runs["d"].twist,
        wrench_distributed=wd,
        wrench_reduced=wr,
        wrench_ellipsoid=we,
        rmse_reduced=e_r,
        rmse_ellipsoid=e_e,
        precompute_seconds=pre,
        figure=fig,
    )


# ----------------------------------------------------------------------------------------------
# coupled body simulation
# ----------------------------------------------------------------------------------------------
class _Body:
    """Planar rigid body with state ``(v_x, v_y, omega, x, y, theta)`` of its CoM."""

    def __init__(
        self, mass: float, inertia: float, contact_cop: np.ndarray, n_contacts: int, gravity_y: float
    ) -> None:
        self.mass = mass
        self.inertia = inertia
        self.cop = np.asarray(contact_cop, dtype=float)
        self.n_contacts = n_contacts
        self.gravity_y = gravity_y

    def contact_twist(self, body: np.ndarray) -> np.ndarray:
        # the contact frame origin is fixed at the world origin; twist of the body there
        vx, vy, w, px, py, _ = body
        v0 = np.array([vx + w * py, vy - w * px, w])
        return twist_at_point(v0, self.cop)

    def accelerations(self, body: np.ndarray, wrench_cop: np.ndarray, load: np.ndarray) -> np.ndarray:
        vx, vy, w, px, py, _ = body
        f = self.n_contacts * wrench_cop
        # torque about the CoM: tau + (cop - p) x f
        rx, ry = self.cop[0] - px, self.cop[1] - py
        tau = f[2] + rx * f[1] - ry * f[0]
        ax = (f[0] + load[0]) / self.mass
        ay = (f[1] + load[1]) / self.mass + self.gravity_y
        aw = (tau + load[2]) / self.inertia
        return np.array([ax, ay, aw, vx, vy, w])

    def casadi_rhs(self, body: Any, wrench_cop: Any, load: Any) -> Any:
        """Symbolic twin of :meth:`accelerations` (CasADi SX)."""
        vx, vy, w = body[0], body[1], body[2]
        f = self.n_contacts * wrench_cop
        rx, ry = self.cop[0] - body[3], self.cop[1] - body[4]
        tau = f[2] + rx * f[1] - ry * f[0]
        return ca.vertcat(
            (f[0] + load[0]) / self.mass,
            (f[1] + load[1]) / self.mass + self.gravity_y,
            (tau + load[2]) / self.inertia,
            vx,
            vy,
            w,
        )

    def casadi_contact_twist(self, body: Any) -> Any:
        """Symbolic twin of :meth:`contact_twist`."""
        vx, vy, w, px, py = body[0], body[1], body[2], body[3], body[4]
        return ca.vertcat(vx + w * py - w * self.cop[1], vy - w * px + w * self.cop[0], w)


MAX_RHS_PER_HOLD = 5000
"""Right-hand-side evaluations allowed per hold interval before the next method is tried (a
regular 10 ms interval takes 20-200)."""


class _StepBudgetExceeded(Exception):
    """Raised inside ``solve_ivp`` when a hold interval exceeds :data:`MAX_RHS_PER_HOLD`."""


@dataclass
class _CoupledSystem:
    """CasADi right-hand side and sparse Jacobian of ``y = (z, body)`` with parameters
    ``(load (3), f_N)``."""

    rhs: ca.Function
    jac: ca.Function


def _coupled_system(model: LuGreModel, body: _Body) -> _CoupledSystem:
    """Build (once per model and body, cached on the model) the CasADi system functions."""
    key = (body.mass, body.inertia, tuple(body.cop), body.n_contacts, body.gravity_y)
    cache = model.__dict__.setdefault("_coupled_cache", {})
    if key not in cache:
        cache[key] = _build_coupled_system(model, body)
    return cache[key]


def _build_coupled_system(model: LuGreModel, body: _Body) -> _CoupledSystem:
    nz = model.n_states
    y = ca.SX.sym("y", nz + 6)
    load = ca.SX.sym("load", 3)
    fn = ca.SX.sym("fN")
    b = y[nz:]
    dz, wr = model.casadi_function()(y[:nz], body.casadi_contact_twist(b), fn)
    ydot = ca.vertcat(dz, body.casadi_rhs(b, wr, load))
    return _CoupledSystem(
        rhs=ca.Function("coupled_rhs", [y, load, fn], [ydot]),
        jac=ca.Function("coupled_jac", [y, load, fn], [ca.jacobian(ydot, y)]),
    )


def _simulate_body(
    model: LuGreModel,
    body: _Body,
    y_body0: np.ndarray,
    load_fn: Callable[[float], tuple[np.ndarray, float]],
    t_end: float,
    hold: float,
    integrator: Integrator,
    settings: SimulationSettings,
    stats: dict[str, Any] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Integrate friction state + body with loads held constant over ``hold`` intervals.

    ``solve_ivp`` integrators (LSODA, BDF, Radau) restart at every hold interval and receive the
    analytic Jacobian of the CasADi expressions of the model and the body: dense for LSODA
    (SciPy's LSODA takes no sparse matrix), ``scipy.sparse`` CSC for BDF and Radau (the
    distributed model's Jacobian is an arrow: 2 x 2 blocks per cell plus the body rows and
    columns).  A hold interval on which the method fails, or needs more than
    :data:`MAX_RHS_PER_HOLD` right-hand sides, is retried with Radau, then LSODA;
    ``stats["fallbacks"]`` counts the retries.  ``Integrator.EULER`` takes fixed steps of
    ``settings.fixed_dt``.
    """
    nz = model.n_states
    y = np.concatenate([np.zeros(nz), np.asarray(y_body0, dtype=float)])
    n_int = int(round(t_end / hold))
    t_out = np.arange(n_int + 1) * hold
    states = np.empty((n_int + 1, 6))
    wrenches = np.zeros((n_int + 1, 3))
    states[0] = y[nz:]
    count = [0]

    def rhs_np(yy: np.ndarray, load: np.ndarray, fn: float) -> np.ndarray:
        count[0] += 1
        b = yy[nz:]
        dz, wr = model.derivative_and_wrench(yy[:nz], body.contact_twist(b), fn)
        return np.concatenate([dz, body.accelerations(b, wr, load)])

    system = _coupled_system(model, body) if integrator.is_solve_ivp else None
    sparse = integrator in (Integrator.BDF, Integrator.RADAU)
    method = settings.solver if integrator is Integrator.LSODA else integrator.value

    for k in range(n_int):
        load, fn = load_fn(k * hold)
        if system is not None:
            par = (np.asarray(load, dtype=float), float(fn))

            sol = None
            message = ""
            for meth in dict.fromkeys((method, "Radau", "LSODA")):
                use_sparse = sparse and meth != "LSODA"
                n_eval = [0]

                def rhs(_t: float, yy: np.ndarray, par: tuple = par, n_eval: list = n_eval) -> np.ndarray:
                    count[0] += 1
                    n_eval[0] += 1
                    if n_eval[0] > MAX_RHS_PER_HOLD:
                        raise _StepBudgetExceeded
                    return system.rhs(yy, *par).full().ravel()

                def jac(_t: float, yy: np.ndarray, par: tuple = par, sp: bool = use_sparse) -> Any:
                    jm = system.jac(yy, *par)
                    return jm.sparse() if sp else jm.full()

                try:
                    sol = solve_ivp(
                        rhs,
                        (0.0, hold),
                        y,
                        method=meth,
                        t_eval=[hold],
                        jac=jac,
                        atol=settings.atol,
                        rtol=settings.rtol,
                        max_step=settings.max_step,
                    )
                    message = sol.message
                except _StepBudgetExceeded:
                    sol = None
                    message = f"more than {MAX_RHS_PER_HOLD} right-hand-side evaluations"
                if sol is not None and sol.success:
                    break
                # rare breakdowns of BDF while the object sticks (step size below the spacing of
                # floats, or a crawl of tiny steps): retry the hold interval with the next method
                if stats is not None:
                    stats["fallbacks"] = stats.get("fallbacks", 0) + 1
                    stats.setdefault("failures", []).append((round(k * hold, 6), meth, message))
            if sol is None or not sol.success:
                raise RuntimeError(f"solve_ivp failed at t={k * hold}: {message}")
            y = sol.y[:, -1]
        else:
            step = settings.fixed_dt
            for _ in range(max(1, int(round(hold / step)))):
                y = y + step * rhs_np(y, load, fn)
        if not np.all(np.isfinite(y)):
            raise NonFiniteError(
                f"{integrator.value} integration diverged (NaN/inf) at t = {(k + 1) * hold:.2f} s"
            )
        states[k + 1] = y[nz:]
        wrenches[k + 1] = model.derivative_and_wrench(y[:nz], body.contact_twist(y[nz:]), fn)[1]
    return t_out, states, wrenches, count[0]


# ----------------------------------------------------------------------------------------------
# drift
# ----------------------------------------------------------------------------------------------
@dataclass
class DriftResult:
    """Arrays of :func:`drift_experiment` (pose of the disc centre)."""

    t: np.ndarray
    pose_lugre: np.ndarray
    """(m, 3) x, y, theta with the plain LuGre model."""
    pose_elasto_plastic: np.ndarray
    """(m, 3) x, y, theta with the Elasto-Plastic extension."""
    loads: np.ndarray
    """(m, 4) applied f_x, f_y, tau, f_N."""
    figure: Figure = field(repr=False)

    def __repr__(self) -> str:
        """A few lines: key fields, arrays by shape (:func:`~mcpkit.solving.tables.compact_repr`)."""
        return compact_repr(self)


def _drift_loads(load: DriftLoad, fn0: float) -> Callable[[float], tuple[np.ndarray, float]]:
    def tangential(t: float) -> tuple[np.ndarray, float]:
        s = math.sin(3 * 2 * math.pi * t)
        if t < 1:
            fx = t / 0.2 if t < 0.2 else 1.0
            return np.array([fx, 0.0, 0.0]), fn0
        if t < 3:
            tau = 0.03 * (t - 2.8) / 0.2 if t > 2.8 else 0.0
            return np.array([1.0 + 0.4 * s, 0.0, tau]), fn0
        return np.array([1.0 + 0.4 * s, 0.0, 0.03 + 0.01 * s]), fn0

    def normal(t: float) -> tuple[np.ndarray, float]:
        ramp = min(t / 0.2, 1.0)
        fn = fn0 + math.sin(3 * 2 * math.pi * t) if t > 1 else fn0
        return np.array([1.0 * ramp, 0.0, 0.03 * ramp]), fn

    return tangential if load is DriftLoad.TANGENTIAL else normal


def drift_experiment(
    model: LuGreModelKind | str = "distributed",
    load: DriftLoad | str = "tangential",
    *,
    t_end: float = 5.0,
    params: LuGreParams = LUGRE_P1,
    settings: SimulationSettings = TABLE_III,
    integrator: Integrator | str = Integrator.LSODA,
    n_cells: int = 21,
) -> DriftResult:
    """Disc of 1 kg under loads below the slip threshold (Figs. 6, 23-25).

    The disc (radius 0.05 m, inertia ``m R^2 / 2``) rests with ``f_N = m g`` on a circular
    contact of 0.025 m radius on a 21 x 21 grid of 0.05 m (the authors' code; with this patch
    the paper's "1/12 of the slip force" and "1/6 of the slip torque" hold: 1 N vs
    ``mu_S m g = 11.8`` N and 0.03 Nm vs ``(2/3) 0.025 mu_S m g = 0.196`` Nm).
    ``load="tangential"``: ``f_x = 1 + 0.4 sin(6 pi t)`` from 1 s, torque ``0.03 + 0.01 sin``
    from 3 s.  ``load="normal"``: ``f_x = 1``, ``tau = 0.03``, ``f_N = m g + sin(6 pi t)``
    from 1 s.  Loads are held constant over 0.01 s (100 Hz).
    """
    load_kind = DriftLoad.parse(load)
    model, load = LuGreModelKind.parse(model).value, load_kind.value
    integ = Integrator.parse(integrator)
    mass, radius = 1.0, 0.05
    patch = make_patch("circle", 0.05, n_cells)
    loads_fn = _drift_loads(load_kind, mass * GRAVITY)
    poses = []
    for ep in (False, True):
        if model == "distributed":
            fm: LuGreModel = DistributedLuGre(patch, params, elasto_plastic=ep)
        else:
            fm = ReducedLuGre(patch, params, elasto_plastic=ep, n_ls=settings.n_ls)
        body = _Body(mass, 0.5 * mass * radius**2, np.zeros(2), 1, 0.0)
        t, st, _, _ = _simulate_body(fm, body, np.zeros(6), loads_fn, t_end, 0.01, integ, settings)
        poses.append(st[:, 3:6])
    loads = np.array([np.concatenate([loads_fn(tt)[0], [loads_fn(tt)[1]]]) for tt in t])
    fig = Figure(figsize=(7, 5), dpi=100)
    ax = _wrench_axes(fig, 3)
    for k, lab in ((0, "x"), (1, "y")):
        ax[0].plot(t, poses[0][:, k], "--", label=f"${lab}$ LuGre")
        ax[0].plot(t, poses[1][:, k], label=f"${lab}$ e-p")
    ax[1].plot(t, poses[0][:, 2], "--", label=r"$\theta$ LuGre")
    ax[1].plot(t, poses[1][:, 2], label=r"$\theta$ e-p")
    if load == "tangential":
        ax[2].plot(t, loads[:, 0], label="$f_x$ [N]")
        ax[2].plot(t, 10 * loads[:, 2], label=r"$10\,\tau$ [Nm]")
    else:
        ax[2].plot(t, loads[:, 3], label="$f_N$ [N]")
    for a, lab in zip(ax, ("position [m]", "orientation [rad]", "load"), strict=True):
        a.set_ylabel(lab, fontsize=8)
        a.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        a.tick_params(labelsize=7)
    ax[0].set_title(f"{model} model, oscillating {load} load", fontsize=9)
    ax[2].set_xlabel("time [s]")
    fig.tight_layout()
    return DriftResult(t=t, pose_lugre=poses[0], pose_elasto_plastic=poses[1], loads=loads, figure=fig)


# ----------------------------------------------------------------------------------------------
# in-hand slip-stick
# ----------------------------------------------------------------------------------------------
@dataclass
class SlipStickResult:
    """Arrays of :func:`slip_stick_experiment`; keys ``'d1', 'r1', 'd2', 'r2'`` (model, profile)."""

    t: np.ndarray
    pose: dict[str, np.ndarray]
    """CoM pose (m, 3) per run."""
    wrench: dict[str, np.ndarray]
    """Friction wrench of one finger at the CoP (m, 3) per run."""
    normal_force: dict[str, np.ndarray]
    """Grip force profile per run."""
    wall_seconds: dict[str, float]
    """Wall-clock simulation time per run [s]."""
    figure: Figure = field(repr=False)
    solver_stats: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per run: ``fallbacks`` (hold intervals retried with another method) and ``failures``."""

    def __repr__(self) -> str:
        """A few lines: key fields, arrays by shape (:func:`~mcpkit.solving.tables.compact_repr`)."""
        return compact_repr(self)


def grip_force(profile: int, t: float) -> float:
    """Grip-force profiles of Figs. 27/29: ``f_N,1 = 1.73 + 0.91 sin(4 pi t)``;
    ``f_N,2 = 2`` except 0.84 N for ``0.325 < t < 0.5`` s."""
    if profile == 1:
        return 1.73 + 0.91 * math.sin(2 * math.pi * 2 * t)
    if profile == 2:
        return 0.84 if 0.325 < t < 0.5 else 2.0
    raise UnknownOptionError(f"grip-force profile must be 1 or 2, got {profile!r}")


def slip_stick_experiment(
    case: int = 2,
    shape: str = "circle",
    *,
    t_end: float = 2.0,
    params: LuGreParams = LUGRE_P1,
    settings: SimulationSettings = TABLE_III,
    integrator: Integrator | str = Integrator.LSODA,
    distributed_integrator: Integrator | str = Integrator.BDF,
    models: tuple[str, ...] = ("distributed", "reduced"),
    profiles: tuple[int, ...] = (1, 2),
    elasto_plastic: bool = True,
) -> SlipStickResult:
    """In-hand slip-stick (Figs. 26-32): an object held between two identical finger patches.

    Object 0.15 x 0.08 m, 0.2 kg, ``I = m (0.15^2 + 0.08^2) / 12``; gravity along -y; the CoM
    starts 25 mm (case 1) or 2 mm (case 2) from the centre of the contact along x; both fingers
    apply the same friction wrench; the grip force (:func:`grip_force`) is held at 100 Hz.
    Patches: circle (0.01 m radius), square (0.02 m) or gradient line (0.02 m).
    The authors' code uses the Elasto-Plastic models here (``elasto_plastic=True``).

    ``integrator`` is used for the reduced model (default LSODA, as in the paper) and
    ``distributed_integrator`` for the distributed one (default BDF with the sparse analytic
    Jacobian: SciPy's LSODA takes only dense or banded Jacobians, and the coupled system's
    Jacobian is an arrow, so LSODA would factorise a dense 888 x 888 matrix; explicit Euler at
    1e-5 s diverges in case 1 once the slip speed exceeds ~0.2 m/s, where
    ``sigma0 |v| / g * dt > 2``).
    """
    if case not in (1, 2):
        raise UnknownOptionError(f"case must be 1 or 2, got {case!r}")
    integ = Integrator.parse(integrator)
    integ_d = Integrator.parse(distributed_integrator)
    patch = make_patch(shape, 0.02, settings.n_cells)
    cop = patch_arrays(patch).cop
    mass, width, height = 0.2, 0.15, 0.08
    inertia = mass / 12 * (width**2 + height**2)
    y0 = np.array([0.0, 0.0, 0.0, 0.025 if case == 1 else 0.002, 0.0, 0.0])
    poses: dict[str, np.ndarray] = {}
    wrenches: dict[str, np.ndarray] = {}
    fns: dict[str, np.ndarray] = {}
    walls: dict[str, float] = {}
    stats: dict[str, dict[str, Any]] = {}
    t = np.zeros(1)
    for mname in [LuGreModelKind.parse(m).value for m in models]:  # every name checked first
        if mname == "distributed":
            fm: LuGreModel = DistributedLuGre(patch, params, elasto_plastic=elasto_plastic)
        else:
            fm = ReducedLuGre(patch, params, elasto_plastic=elasto_plastic, n_ls=settings.n_ls)
        for prof in profiles:
            body = _Body(mass, inertia, cop, 2, -GRAVITY)

            def load_fn(tt: float, prof: int = prof) -> tuple[np.ndarray, float]:
                return np.zeros(3), grip_force(prof, tt)

            t0 = time.perf_counter()
            key = f"{mname[0]}{prof}"
            stats[key] = {"fallbacks": 0}
            t, st, wr, _ = _simulate_body(
                fm,
                body,
                y0,
                load_fn,
                t_end,
                0.01,
                integ_d if mname == "distributed" else integ,
                settings,
                stats[key],
            )
            walls[key] = time.perf_counter() - t0
            poses[key] = st[:, 3:6]
            wrenches[key] = wr
            fns[key] = np.array([grip_force(prof, tt) for tt in t])
    fig = Figure(figsize=(7, 6), dpi=100)
    ax = _wrench_axes(fig, 4)
    styles = {"d": "-", "r": "--"}
    for key, pose in poses.items():
        lab = f"{key[0]},{key[1]}"
        for k in range(3):
            ax[k].plot(t, pose[:, k], styles[key[0]], label=f"{'xyθ'[k]}$_{{{lab}}}$", alpha=0.8)
    for prof in profiles:
        ax[3].plot(t, [grip_force(prof, tt) for tt in t], label=f"$f_{{N,{prof}}}$")
    for a, lab in zip(ax, ("x [m]", "y [m]", "θ [rad]", "grip force [N]"), strict=True):
        a.set_ylabel(lab, fontsize=8)
        a.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        a.tick_params(labelsize=7)
    ax[0].set_title(
        f"in-hand slip-stick, case {case}, {shape} contact (d: distributed, r: reduced)", fontsize=9
    )
    ax[3].set_xlabel("time [s]")
    fig.tight_layout()
    return SlipStickResult(
        t=t, pose=poses, wrench=wrenches, normal_force=fns, wall_seconds=walls, figure=fig, solver_stats=stats
    )


# ----------------------------------------------------------------------------------------------
# ellipsoid approximation against the pre-computed limit surface
# ----------------------------------------------------------------------------------------------
@dataclass
class EllipsoidErrorResult:
    """Arrays of :func:`ellipsoid_error_experiment`."""

    shapes: tuple[str, ...]
    max_error: np.ndarray
    """Max over the sphere of |h_ellipsoid - h_table| (normalised wrench), per shape."""
    rms_error: np.ndarray
    """RMS over the sphere nodes of |h_ellipsoid - h_table|, per shape."""
    precompute_seconds: np.ndarray
    """Table pre-computation time per shape [s]."""
    figure: Figure = field(repr=False)

    def __repr__(self) -> str:
        """A few lines: key fields, arrays by shape (:func:`~mcpkit.solving.tables.compact_repr`)."""
        return compact_repr(self)


def ellipsoid_error_experiment(
    shapes: tuple[str, ...] = ("circle", "square", "line_grad"),
    n_ls: int = 20,
    n_cells: int = 21,
    size: float = 0.02,
) -> EllipsoidErrorResult:
    """Measure how far the ellipsoid direction ``v_S/|v_S|`` is from the tabulated ``-h``.

    Both are normalised wrenches (unit translation force ``mu f_N`` and unit pure-rotation
    torque ``r mu f_N``), compared at the same velocity (Section V-B: the location on the
    limit surface matters, not only its shape).  The figure shows the torque-force curve
    for twists ``v = (r' sin(phi), 0, cos(phi))``.
    """
    max_err, rms_err, pre = [], [], []
    fig = Figure(figsize=(6, 4), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    phi_line = np.linspace(0, np.pi / 2, 200)
    for shape in shapes:
        patch = make_patch(shape, size, n_cells)
        table = precompute_limit_surface(patch, n_ls)
        pre.append(table.precompute_seconds)
        r = ellipsoid_variables(patch).r
        _, _, tw = sphere_twists(n_ls, r)
        flat = tw.reshape(-1, 3)
        vs = flat * np.array([1.0, 1.0, r])
        ell = vs / np.linalg.norm(vs, axis=1, keepdims=True)
        tab = -table.values.reshape(-1, 3)
        err = np.linalg.norm(ell - tab, axis=1)
        max_err.append(float(err.max()))
        rms_err.append(float(np.sqrt(np.mean(err**2))))
        hs = np.array([table.h(np.array([r * math.sin(p), 0.0, math.cos(p)]), r) for p in phi_line])
        ax.plot(-hs[:, 0], -hs[:, 2], label=f"table: {shape}")
    ax.plot(np.sin(phi_line), np.cos(phi_line), "k--", label="ellipsoid (any shape)")
    ax.set_xlabel(r"$f_x / (\mu f_N)$")
    ax.set_ylabel(r"$\tau / \max\tau$")
    ax.set_title("normalised limit curve for v = (r sin φ, 0, cos φ)", fontsize=9)
    ax.legend(fontsize=7)
    ax.set_aspect("equal")
    fig.tight_layout()
    return EllipsoidErrorResult(
        shapes=tuple(shapes),
        max_error=np.array(max_err),
        rms_error=np.array(rms_err),
        precompute_seconds=np.array(pre),
        figure=fig,
    )


def save_docs_figures(outdir: str = "docs/figures", *, quick: bool = False) -> dict[str, Any]:
    """Run the experiments and save the ``lugre_*.png`` figures used by ``docs/lugre.md``.

    Drift: the distributed model takes fixed Euler steps of 1e-5 s, the reduced one LSODA.
    Slip-stick: the distributed model is integrated with BDF and the sparse analytic CasADi
    Jacobian (explicit Euler diverges in case 1), the reduced one with LSODA and the dense
    analytic Jacobian.  Returns the measured numbers.  ``quick`` shortens the runs.
    """
    from pathlib import Path

    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    numbers: dict[str, Any] = {}
    for shape in ("circle", "line_grad", "nonconvex_a"):
        res = velocity_profile_experiment(shape)
        res.figure.savefig(out / f"lugre_velocity_profile_{shape}.png", dpi=100)
        numbers[f"rmse_{shape}"] = {
            "limit_surface": res.rmse_reduced.tolist(),
            "ellipsoid": res.rmse_ellipsoid.tolist(),
        }
    t_end = 2.0 if quick else 5.0
    for model, integ in (("reduced", Integrator.LSODA), ("distributed", Integrator.EULER)):
        for load in ("tangential", "normal"):
            res_d = drift_experiment(model, load, t_end=t_end, integrator=integ)
            res_d.figure.savefig(out / f"lugre_drift_{model}_{load}.png", dpi=100)
            numbers[f"drift_{model}_{load}"] = {
                "final_x_lugre": float(res_d.pose_lugre[-1, 0]),
                "final_x_ep": float(res_d.pose_elasto_plastic[-1, 0]),
                "final_theta_lugre": float(res_d.pose_lugre[-1, 2]),
                "final_theta_ep": float(res_d.pose_elasto_plastic[-1, 2]),
            }
    for case, shape in ((1, "circle"), (2, "circle"), (2, "line_grad")):
        res_s = slip_stick_experiment(case, shape, t_end=1.0 if quick else 2.0)
        res_s.figure.savefig(out / f"lugre_slip_stick_case{case}_{shape}.png", dpi=100)
        numbers[f"slip_stick_case{case}_{shape}"] = {
            "max_pose_diff_d_vs_r": {
                p: np.max(np.abs(res_s.pose[f"d{p}"] - res_s.pose[f"r{p}"]), axis=0).tolist() for p in (1, 2)
            },
            "final_pose": {k: v[-1].tolist() for k, v in res_s.pose.items()},
            "wall_seconds": res_s.wall_seconds,
            "solver_fallbacks": {k: v["fallbacks"] for k, v in res_s.solver_stats.items()},
        }
    res_e = ellipsoid_error_experiment(("circle", "square", "line_grad", "nonconvex_a"))
    res_e.figure.savefig(out / "lugre_ellipsoid_vs_table.png", dpi=100)
    numbers["ellipsoid_vs_table"] = {
        "shapes": list(res_e.shapes),
        "max": res_e.max_error.tolist(),
        "rms": res_e.rms_error.tolist(),
        "precompute_s": res_e.precompute_seconds.tolist(),
    }
    return numbers


if __name__ == "__main__":  # pragma: no cover - demo entry point
    import json
    import sys

    print(json.dumps(save_docs_figures(quick="--quick" in sys.argv), indent=1))
