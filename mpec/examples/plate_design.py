r"""Seed 004 §5.1 plate-motion design as a periodic boundary-value MPEC, against Nelder–Mead.

The plate of :class:`~mcpkit.models.stewart_trinkle.plate.SinusoidalPlate` is driven at 33 Hz
(:math:`B = 66\pi`) by the three design parameters of seed 004 §5.1,
:math:`\theta = (A_6, A_3, C_3)`:

.. math::
    \alpha_z = A_6\sin(Bt),\qquad \ddot p_z = A_3\sin(Bt + C_3)

(the other nine amplitudes/phases of §5 fixed at 0). With the zero-mean antiderivatives of
:mod:`~mcpkit.models.stewart_trinkle.plate` the plate turns about :math:`z` by
:math:`\phi(t) = -A_6\sin(Bt)/B^2` and its origin sits at height :math:`c_z(t) = -A_3\sin(Bt+C_3)/B^2`,
so the particle step of seed 004 eq (9) (:class:`~mcpkit.models.stewart_trinkle.ncp.NCPStep`,
:math:`m = 1`) has the closed-form data :math:`\psi = q_z - c_z(t_{\ell+1})`, :math:`W_n = \hat z`,
:math:`W_t = (\cos\phi, \sin\phi, 0)`, :math:`W_o = (-\sin\phi, \cos\phi, 0)`,
:math:`u_S = \dot c + \omega\times(q - c)` (eq 8), all at :math:`t_{\ell+1}`.

**Objective** (the "asymptotic velocity" of §5.1 made a per-period average): over an interval
of whole periods :math:`[t_a, t_b]` the particle's mean planar velocity should equal the
circle field :math:`f(q) = \kappa(-q_y, q_x)`, :math:`\kappa = 0.15` s⁻¹ (cm, s), at the mid
point:

.. math::
    J = \frac{\| (q_{xy}(t_b) - q_{xy}(t_a))/(t_b - t_a) - f(\tfrac12(q_{xy}(t_a)+q_{xy}(t_b)))\|^2}
             {(\kappa R)^2}.

A radial drift counts as error, as the radial error of §5.1 does.

**Boundary-value MPEC.** The particle starts at :math:`(R, 0)` in the plane; its start height
and velocity are free (one "start jump" control :math:`u_0 = (\Delta q_z, \Delta v)`, all later
controls fixed at 0). Over :math:`P` plate periods (:math:`N = Pn` steps, :math:`h = T/n`) the
state relative to the rotationally symmetric field must be periodic: the height and the
(radial, tangential, vertical) velocity at :math:`t_N` equal those at :math:`t_0`. The state is
:math:`x = (q, v, m, e)` with the memory :math:`m` of the start (height, velocity) and the
periodicity defect :math:`e = (q_z - m_z, v_r - m_{v_x}, v_\theta - m_{v_y}, v_z - m_{v_z})`,
and :math:`e_N = 0` is a terminal box. Minimising :math:`J` over :math:`[t_0, t_N]` of the
periodic orbit is therefore the steady-state objective, with no transient to simulate away.

**Several radii, one design** (:func:`solve_plate_design_multi`): one periodic horizon per
start radius :math:`R \in \{4, 6, 8\}` cm (:data:`DEFAULT_RADII`), stacked into a single MPCC in
which every horizon's :math:`\theta` is the same variable; objective :math:`\sum_R J_R`. Only
the radius matters (the plate turns about the :math:`z` axis through the origin and moves
vertically as a whole, so other polar angles are rotated copies). Each radius is re-simulated
with the model's :func:`~mcpkit.models.stepping.simulate` and its deviation reported.

**Nelder–Mead reference** (seed 004 §4–5): the same :math:`J` (or :math:`\sum_R J_R`), each
measured over the last ``avg_periods`` of a full simulation of ``sim_periods`` periods from the
particle resting on the plate at :math:`(R, 0)` (moving with its surface point), with
:func:`mcpkit.models.stepping.simulate` and the same step model and :math:`h`.

**Design box.** :math:`A_3` up to 2000 cm/s² (about 2g): above g the plate outruns the particle,
which flies and lands (the seed's "without a contact maintenance requirement" case). The seed's
printed :math:`A_3` values (:data:`SEED_DESIGNS`) make physical sense only in m/s²
(:func:`seed_design_objectives` scores them with ``a3_scale=100``).
"""

from __future__ import annotations

import functools
import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import casadi as ca
import numpy as np
from scipy.optimize import minimize

from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError
from mcpkit.formats.figures import figure_format, save_figure
from mcpkit.models.stepping import SimulationResult, simulate
from mcpkit.models.stewart_trinkle.bodies import GRAVITY_CGS, UNIT_NAMES, Particle
from mcpkit.models.stewart_trinkle.contact import Contact, PlaneSurface
from mcpkit.models.stewart_trinkle.ncp import NCPStep
from mcpkit.models.stewart_trinkle.plate import SinusoidalPlate
from mcpkit.mpcc import MPCC, MPCCSolver
from mcpkit.mpec import grid_continuation as gc
from mcpkit.mpec.horizon import Horizon
from mcpkit.mpec.resimulation import HorizonResult, limit_seconds, resimulation_check, spent_building
from mcpkit.mpec.step import StepSpec
from mcpkit.problems.arrays import as_count, as_positive, as_real
from mcpkit.solving.result import CompositeResult, FromParts, MPCCResult, summary_head

__all__ = [
    "DEFAULT_RADII",
    "SEED_DESIGNS",
    "MultiDesignResult",
    "PENALTY_FROM_STEPS",
    "PENALTY_IPOPT_OPTIONS",
    "PENALTY_BUDGETS",
    "PENALTY_RHO0",
    "PlateDesignTask",
    "demo_plate_design",
    "design_objective",
    "field_objective",
    "nelder_mead_design",
    "plate_design_horizon",
    "plate_design_step_spec",
    "plate_step_model",
    "run_comparison",
    "scenario_tasks",
    "seed_design_objectives",
    "simulate_design",
    "simulated_objective",
    "solve_plate_design",
    "solve_plate_design_multi",
    "time_to_reach",
]

N_STATE = 14
"""State size: ``q`` (3), ``v`` (3), start memory ``m`` (4), periodicity defect ``e`` (4)."""

PENALTY_FROM_STEPS = 100
"""From this many steps on :func:`solve_plate_design` uses the ``penalty`` reformulation instead of
``scholtes``. Measured 2026-11-27 (one radius, one plate period in N steps, whole call, one
process each): N = 75: scholtes 8.8 s at J = 9.4e-8, penalty 3.7 s at J = 3.8e-6 (so the short
horizons keep scholtes); N = 100: 17.5 s at J = 5.10e-6 against 4.9 s at 5.35e-6; N = 150: not
solved in 55 s against 16.1 s at 1.05e-5; N = 200: 86 s (reached through the penalty fallback
after 41 s in one Scholtes subproblem) against 6.0 s at J = 4.40e-6."""

PENALTY_IPOPT_OPTIONS: dict[str, Any] = {"perturb_dec_fact": 0.9}
r"""IPOPT options of the ``penalty`` runs of :func:`solve_plate_design` (the user's
``ipopt_options`` win). The penalty objective :math:`J + \rho\sum_j G_j H_j` has an indefinite
Hessian at almost every iterate, so IPOPT adds :math:`\delta_w I` at almost every iteration; it
starts each iteration's search from the last :math:`\delta_w` times ``perturb_dec_fact`` (default
1/3), which is then usually too small and costs more factorisations, and makes the regularisation
jump from one iteration to the next. With 0.9 (measured 2026-11-27, one radius, one
plate period in N = 400 steps, 90 s, one process each) radii 4 / 5 / 6 / 7 / 8 cm were solved in
22.0 / 25.3 / 34.9 / 22.4 / 21.0 s (444 / 528 / 848 / 461 / 402 IPOPT iterations in the first
subproblem, about 31 ms each) against 13.2 s / not solved / not solved / not solved / 26.4 s with
IPOPT's default (R = 6 without a time limit: 2,091 iterations at 38 ms); N = 300 11.0 s against
19.5 s, N = 100 and 200 5.4 and 6.9 s against 5.7 and 6.0 s. Not a default of the ``penalty``
reformulation itself: on NOSBENCH's large files (with Scholtes) it made DSCOB_001, DSCSP_..._3
and CPWF_002 3-4x slower."""

PENALTY_BUDGETS: dict[str, int | None] = {"primary_iterations": None, "first_step_iterations": None}
"""The iteration budgets of the ``penalty`` runs of :func:`solve_plate_design` (the user's wins):
none, so the penalty run may use the whole limit. Its first subproblem is the whole solve (848
IPOPT iterations for R = 6 cm, N = 400), and no fallback solved an N = 400 plate in any run
above (wall-clock shares of the limit stopped that run after 701 of its 848 iterations)."""

PENALTY_RHO0 = 100.0
r"""First penalty weight :math:`\rho_0` (``SolveOptions.rho0``) of the ``penalty`` runs of
:func:`solve_plate_design` (the user's wins; the default of the reformulation is 1). With
:math:`\rho_0 = 1` the first subproblem crawls: at N = 400, R = 6 cm IPOPT took a full step of
length 80 at iteration 17, the dual infeasibility rose to 4.5e8, :math:`\delta_w` to 1e4, and
about a hundred full steps of length 1e-3 followed while :math:`\delta_w` decayed (848 iterations
in all). Measured 2026-11-27 (one radius, one plate period, whole call, 90 s, two
processes at once, with :data:`PENALTY_IPOPT_OPTIONS`), whole call and plan :math:`J`, for
:math:`\rho_0 = 1` against :math:`\rho_0 = 100`:

* N = 400, R = 4 / 5 / 6 / 7 / 8 cm: 22.0 / 25.3 / 34.3 / 22.4 / 21.0 s against
  13.6 / 11.6 / 15.3 / 16.9 / 16.5 s; J = 5.8 / 7.5 / 11.7 / 8.4 / 4.6 against
  6.8 / 5.5 / 4.8 / 4.0 / 3.4 (1e-6) (:math:`\rho_0 = 1`: R = 6 re-run a day later than the others);
* N = 300, R = 6: 10.8 s, J = 6.7e-6 against 10.3 s, 4.5e-6;
* N = 200, R = 4 / 6 / 8: 9.6 / 6.5 / 5.8 s against 6.2 / 7.1 / 6.9 s; J = 11.8 / 5.3 / 4.0
  against 6.2 / 4.0 / 5.8 (1e-6);
* N = 100, R = 4 / 6 / 8: 7.3 / 7.4 / 4.8 s against 4.6 / 4.2 / 4.5 s; J = 9.7 / 8.9 / 6.7
  against 5.2 / 6.4 / 4.6 (1e-6).

Around it: :math:`\rho_0 = 10` solved N = 400 in 11.6-19.2 s (J 4.3-6.1); 1000 ended R = 5 at
J = 5.7e-4 and took 34.5 s for R = 8; 0.1 did not solve R = 7 in 90 s. Without
:data:`PENALTY_IPOPT_OPTIONS`, :math:`\rho_0 = 100` did not solve four of the five N = 400 radii."""

UNITS = "cgs"
"""Unit system of the design task (cm, g, s; g = 980.665 cm/s²), as the vibrating-plate paper states
it: the particle is :meth:`~mcpkit.models.stewart_trinkle.Particle.cgs` and summaries say so."""

DEFAULT_RADII: tuple[float, ...] = (4.0, 6.0, 8.0)
"""Start radii [cm] of the multi-scenario design (seed 004 §5.1: "a radius of 4-8cm")."""

SEED_DESIGNS: dict[str, tuple[float, float, float]] = {
    "seed initial (eqs 23-24)": (100.0, 8.0, 1.5 * math.pi),
    "seed, contact kept (eqs 25-26)": (62.913, 9.81585, 6.33218),
    "seed, separation allowed (eqs 27-28)": (40.8332, 15.3654, 6.5374),
    "seed, separation allowed (text)": (40.7791, 16.3305, 6.91229),
}
"""Designs :math:`(A_6, A_3, C_3)` as printed in seed 004 §5.1 (``A_3`` as printed, see the docs for
its unit)."""


@dataclass(frozen=True)
class PlateDesignTask:
    """The §5.1 circle-field design task (units cm, s, rad).

    Attributes
    ----------
    radius
        Start radius :math:`R` of the particle [cm] (seed: 4–8 cm).
    field_rate
        :math:`\\kappa` of the field :math:`\\kappa(-y, x)` [1/s] (seed: 0.15).
    mu
        Friction coefficient.
    omega
        Plate angular frequency :math:`B` [rad/s] (seed: :math:`66\\pi`, 33 Hz).
    steps_per_period
        :math:`n`, so :math:`h = 2\\pi/(Bn)`.
    periods
        :math:`P`, periods in the periodic horizon.
    sim_periods, avg_periods
        Length of the Nelder–Mead full simulation and the trailing window of :math:`J`.
    theta0
        Initial design :math:`(A_6, A_3, C_3)`.
    theta_lo, theta_hi
        Design box.
    jump_bound
        Bounds of the start jump :math:`(|\\Delta q_z|, |\\Delta v_i|)` [cm, cm/s].
    """

    radius: float = 6.0
    field_rate: float = 0.15
    mu: float = 0.3
    omega: float = 66 * math.pi
    steps_per_period: int = 20
    periods: int = 2
    sim_periods: int = 20
    avg_periods: int = 2
    theta0: tuple[float, float, float] = (200.0, 300.0, 1.5 * math.pi)
    theta_lo: tuple[float, float, float] = (0.0, 0.0, -math.pi)
    theta_hi: tuple[float, float, float] = (600.0, 2000.0, 3 * math.pi)
    jump_bound: tuple[float, float] = (0.05, 50.0)

    def __post_init__(self) -> None:
        for name in ("radius", "field_rate", "mu", "omega"):
            as_real(getattr(self, name), f"PlateDesignTask.{name}")  # not a bool, a string, NaN or inf
        if self.radius <= 0 or self.field_rate <= 0 or self.omega <= 0 or self.mu < 0:
            raise MCPInputError("PlateDesignTask: radius, field_rate, omega must be > 0 and mu >= 0")
        for name in ("steps_per_period", "periods", "sim_periods", "avg_periods"):
            as_count(getattr(self, name), f"PlateDesignTask.{name}")
        if self.avg_periods > self.sim_periods:
            raise MCPInputError("PlateDesignTask.avg_periods must be <= sim_periods")
        for name in ("theta0", "theta_lo", "theta_hi"):
            a = np.asarray(getattr(self, name), dtype=float)
            if a.shape != (3,):
                raise ShapeError(f"PlateDesignTask.{name} must have 3 entries (A6, A3, C3), got {a.shape}")
            if not np.isfinite(a).all():
                raise NonFiniteError(f"PlateDesignTask.{name} contains NaN or inf")
        lo, hi, t0 = (np.asarray(v, dtype=float) for v in (self.theta_lo, self.theta_hi, self.theta0))
        if np.any(lo > hi) or np.any(t0 < lo) or np.any(t0 > hi):
            raise MCPInputError("PlateDesignTask: need theta_lo <= theta0 <= theta_hi")
        if len(self.jump_bound) != 2 or not all(math.isfinite(b) and b > 0 for b in self.jump_bound):
            raise MCPInputError("PlateDesignTask.jump_bound must be two positive finite numbers")

    @property
    def period(self) -> float:
        """Plate period :math:`T = 2\\pi/B` [s]."""
        return 2 * math.pi / self.omega

    @property
    def h(self) -> float:
        """Step :math:`h = T/n` [s]."""
        return self.period / self.steps_per_period

    @property
    def n_steps(self) -> int:
        """Horizon length :math:`N = Pn`."""
        return self.periods * self.steps_per_period


def _theta(theta: Any) -> np.ndarray:
    a = np.asarray(theta, dtype=float).reshape(-1)
    if a.shape != (3,):
        raise ShapeError(f"design must be (A6, A3, C3), got shape {a.shape}")
    if not np.isfinite(a).all():
        raise NonFiniteError(f"design contains NaN or inf: {a}")
    return a


def field_objective(q_a: np.ndarray, q_b: np.ndarray, duration: float, rate: float, radius: float) -> float:
    r""":math:`J` of the module docstring from the planar positions at :math:`t_a, t_b`."""
    qa, qb = np.asarray(q_a, dtype=float)[:2], np.asarray(q_b, dtype=float)[:2]
    vbar = (qb - qa) / duration
    mid = 0.5 * (qa + qb)
    f = rate * np.array([-mid[1], mid[0]])
    return float(np.sum((vbar - f) ** 2) / (rate * radius) ** 2)


def plate_step_model(task: PlateDesignTask, theta: Any) -> tuple[NCPStep, SinusoidalPlate]:
    """The model's own step (``NCPStep``, particle of unit mass) on the plate of design ``theta``
    (the plate object is shared by every model of that design and frequency, :func:`_plate`)."""
    A6, A3, C3 = (float(v) for v in _theta(theta))
    plate = _plate(A6, A3, C3, float(task.omega), threading.get_ident())
    surf = PlaneSurface(point=[0.0, 0.0, 0.0], motion=plate)
    return NCPStep(Particle.cgs(mass=1.0), [Contact(surf, task.mu)], task.h), plate


@functools.lru_cache(maxsize=4)
def _plate(A6: float, A3: float, C3: float, omega: float, thread: int) -> SinusoidalPlate:
    """The :class:`~mcpkit.models.stewart_trinkle.plate.SinusoidalPlate` of one design, built once
    per thread (a plate extends its orientation grid as it is queried, which two threads must not
    do at once).

    Setting a plate up integrates its orientation over a period three times for the symmetric
    initial quaternion (0.4 s), and each simulation then integrates it on a grid of 2,000 RK4
    substeps per period (ten periods of settling: 1-2 s), which the plate keeps. A planning call
    builds a model of its start design two or three times (horizon, settling simulation; per radius
    for several radii) and Nelder-Mead simulates every design once per radius, so they share one
    plate. The grid is the same whatever order it is filled in, so a shared plate gives the same
    numbers as a new one.
    """
    return SinusoidalPlate(
        lin_amp=(0.0, 0.0, A3), lin_phase=(0.0, 0.0, C3), ang_amp=(0.0, 0.0, A6), omega=omega
    )


def simulate_design(
    task: PlateDesignTask,
    theta: Any,
    n_steps: int | None = None,
    x0: np.ndarray | None = None,
    deadline: float | None = None,
) -> tuple[SimulationResult, SinusoidalPlate]:
    """Full simulation with :func:`mcpkit.models.stepping.simulate` (penalty route, tol 1e-10);
    default start: at rest on the plate at :math:`(R, 0)` with the plate's point velocity. No step
    starts after ``deadline`` (a ``time.perf_counter()`` value; the rows not run are NaN)."""
    model, plate = plate_step_model(task, theta)
    if x0 is None:
        x = plate.position(0.0) + plate.rotation(0.0) @ np.array([task.radius, 0.0, 0.0])
        x0 = model.initial_state(x, plate.point_velocity(0.0, x))
    n = task.sim_periods * task.steps_per_period if n_steps is None else n_steps
    sim = simulate(model, x0, n, method="penalty", backend="casadi", progress=False, tol=1e-10,
                   deadline=deadline)  # fmt: skip
    return sim, plate


def simulated_objective(task: PlateDesignTask, theta: Any) -> float:
    """:math:`J` over the last ``avg_periods`` of the full simulation (the Nelder–Mead objective;
    ``inf`` when a step failed to produce finite numbers)."""
    sim, _ = simulate_design(task, theta)
    q = sim.states[:, :3]
    n = task.steps_per_period
    a, b = (task.sim_periods - task.avg_periods) * n, task.sim_periods * n
    if not np.isfinite(q[[a, b]]).all():
        return math.inf
    return field_objective(q[a], q[b], task.avg_periods * task.period, task.field_rate, task.radius)


# --------------------------------------------------------------------------- the horizon
def plate_design_step_spec(task: PlateDesignTask) -> tuple[StepSpec, NCPStep]:
    """:class:`StepSpec` of the periodic design horizon (state ``(q, v, m, e)``, control the start
    jump ``(dq_z, dv)``, design ``(A6, A3, C3)``), on the MCP of the model's ``NCPStep``."""
    model, _ = plate_step_model(task, task.theta0)
    B, h, g = task.omega, task.h, GRAVITY_CGS

    def effective(x: ca.SX, u: ca.SX) -> tuple[ca.SX, ca.SX]:
        return x[0:3] + ca.vertcat(0, 0, u[0]), x[3:6] + u[1:4]

    def params(x: ca.SX, u: ca.SX, th: ca.SX, t: ca.SX) -> dict[str, Any]:
        q, v = effective(x, u)
        tn = t + h
        phi = -th[0] / B**2 * ca.sin(B * tn)
        wz = -th[0] / B * ca.cos(B * tn)
        cz = -th[1] / B**2 * ca.sin(B * tn + th[2])
        cz_dot = -th[1] / B * ca.cos(B * tn + th[2])
        cp, sp = ca.cos(phi), ca.sin(phi)
        us = ca.vertcat(-wz * q[1], wz * q[0], cz_dot)
        tt = ca.vertcat(cp, sp, 0)
        to = ca.vertcat(-sp, cp, 0)
        return {
            "b": v + ca.vertcat(0, 0, -h * g),
            "psi_h": (q[2] - cz) / h,
            "Wn": [0.0, 0.0, 1.0],
            "Wt": tt,
            "Wo": to,
            "ut": ca.dot(tt, us),
            "uo": ca.dot(to, us),
        }

    vs = {b.name: b.slice for b in model.mcp.blocks}["v"]

    def update(x: ca.SX, z: ca.SX, u: ca.SX, th: ca.SX) -> ca.SX:
        q, _ = effective(x, u)
        v1 = z[vs.start : vs.stop]
        q1 = q + h * v1
        m1 = x[6:10] + u
        return ca.vertcat(q1, v1, m1, _defect(q1, v1, m1))

    spec = StepSpec(model.mcp, n_state=N_STATE, n_control=4, n_design=3, parameters=params,
                    update=update, h=h)  # fmt: skip
    return spec, model


def _defect(q: Any, v: Any, m: Any) -> Any:
    """Periodicity defect ``(q_z - m_z, v_r - m_vx, v_theta - m_vy, v_z - m_vz)`` (SX or numbers)."""
    sqrt = ca.sqrt if isinstance(q, (ca.SX, ca.MX)) else np.sqrt
    rho = sqrt(q[0] ** 2 + q[1] ** 2)
    vr = (q[0] * v[0] + q[1] * v[1]) / rho
    vt = (q[0] * v[1] - q[1] * v[0]) / rho
    parts = [q[2] - m[0], vr - m[1], vt - m[2], v[2] - m[3]]
    return ca.vertcat(*parts) if isinstance(q, (ca.SX, ca.MX)) else np.array(parts, dtype=float)


def _x_initial(task: PlateDesignTask) -> np.ndarray:
    """Fixed grid state at :math:`t_0`: particle at :math:`(R, 0, 0)` at rest (the start jump
    :math:`u_0` supplies the actual start height and velocity), memory 0, defect 0."""
    x = np.zeros(N_STATE)
    x[0] = task.radius
    return x


def plate_design_horizon(task: PlateDesignTask, lift_design: bool | None = None) -> tuple[Horizon, NCPStep]:
    """The periodic BVP-MPEC: terminal box :math:`e_N = 0`, terminal cost :math:`J(q_0, q_N)`
    (``lift_design``: see :class:`~mcpkit.mpec.horizon.Horizon`)."""
    spec, model = plate_design_step_spec(task)
    N, x0 = task.n_steps, _x_initial(task)
    dz, dv = task.jump_bound
    ulo, uhi = np.zeros((N, 4)), np.zeros((N, 4))
    ulo[0], uhi[0] = [-dz, -dv, -dv, -dv], [dz, dv, dv, dv]
    xT_lo = np.full(N_STATE, -math.inf)
    xT_hi = np.full(N_STATE, math.inf)
    xT_lo[10:], xT_hi[10:] = 0.0, 0.0
    dur, k, R = N * task.h, task.field_rate, task.radius

    def terminal(x: ca.SX, th: ca.SX) -> ca.SX:
        vbar = (x[0:2] - ca.DM(x0[0:2])) / dur
        mid = 0.5 * (x[0:2] + ca.DM(x0[0:2]))
        f = k * ca.vertcat(-mid[1], mid[0])
        return ca.sumsqr(vbar - f) / (k * R) ** 2

    hz = Horizon(
        spec, N, x0, control_bounds=(ulo, uhi), design_bounds=(task.theta_lo, task.theta_hi),
        terminal_bounds=(xT_lo, xT_hi), terminal_cost=terminal, lift_design=lift_design,
        stage_order=False,  # blocked by kind: in stage order its plans were 5-11 % worse (mpec_planning.md)
    )  # fmt: skip
    return hz, model


def _augment(task: PlateDesignTask, states6: np.ndarray, jump: np.ndarray) -> np.ndarray:
    """Grid states ``(q, v, m, e)`` from a simulated ``(q, v)`` trajectory started with ``jump``."""
    X = np.full((states6.shape[0], N_STATE), np.nan)
    X[0] = _x_initial(task)
    m = X[0, 6:10] + jump
    for k in range(1, states6.shape[0]):
        q, v = states6[k, :3], states6[k, 3:6]
        X[k] = np.concatenate([q, v, m, _defect(q, v, m)])
    return X


def design_simulator(task: PlateDesignTask) -> Any:
    """``simulate(U, theta, deadline=None) -> states`` for the re-simulation: the model's own
    ``NCPStep`` and :func:`~mcpkit.models.stepping.simulate` from the start jump ``U[0]`` (no step
    starts after ``deadline``, a ``time.perf_counter()`` value)."""

    def run(U: np.ndarray, theta: np.ndarray, deadline: float | None = None) -> np.ndarray:
        if deadline is not None and time.perf_counter() >= deadline:
            return np.full((task.n_steps + 1, N_STATE), np.nan)  # no time: not even the model's build
        jump = np.asarray(U[0], dtype=float)
        x0 = _x_initial(task)[:6] + np.concatenate([[0.0, 0.0, jump[0]], jump[1:4]])
        sim, _ = simulate_design(task, theta, n_steps=task.n_steps, x0=x0, deadline=deadline)
        return _augment(task, sim.states, jump)

    return run


def periodic_start_guess(
    task: PlateDesignTask, theta: Any, settle_periods: int = 10, deadline: float | None = None
) -> np.ndarray:
    """Start jump ``(dq_z, dv)`` from a settling simulation: height and polar velocity of the
    particle after ``settle_periods`` periods (a phase-0 instant), rotated to :math:`(R, 0)`.

    With a ``deadline`` (a ``time.perf_counter()`` value) the settling stops there and the last
    whole period it simulated gives the jump (the start itself when none fit; the zero jump when
    the deadline has passed before it starts): at N = 400 steps per period the ten periods are
    4,000 steps, about 5 s, and building the step model about 0.4 s."""
    if deadline is not None and time.perf_counter() >= deadline:
        return np.zeros(4)
    n = task.steps_per_period
    sim, _ = simulate_design(task, theta, n_steps=settle_periods * n, deadline=deadline)
    done = np.isfinite(sim.states).all(axis=1)
    k = sim.states.shape[0] - 1
    if not done[k]:
        if deadline is None or time.perf_counter() < deadline:
            raise MCPInputError("the settling simulation failed; choose another initial design")
        k = n * ((int(np.argmin(done)) - 1) // n)  # the last phase-0 row before the first not run
    q, v = sim.states[k, :3], sim.states[k, 3:6]
    d = _defect(q, v, np.zeros(4))
    return np.clip(d, -np.array([task.jump_bound[0]] + [task.jump_bound[1]] * 3),
                   np.array([task.jump_bound[0]] + [task.jump_bound[1]] * 3))  # fmt: skip


def solve_plate_design(
    task: PlateDesignTask | None = None,
    deviation_tol: float = 1e-4,
    continuation: gc.GridContinuation | bool | None = None,
    **options: Any,
) -> tuple[HorizonResult, Horizon, float]:
    """Build and solve the periodic design MPEC; re-simulate with the model's ``simulate``.

    Returns ``(result, horizon, wall_s)`` where ``wall_s`` covers everything: settling
    simulation for the guess, build, initial forward simulation, MPCC solve and re-simulation.
    The reformulation is ``scholtes`` below :data:`PENALTY_FROM_STEPS` steps and ``penalty`` from
    there on (``method=`` overrides it); a ``penalty`` run gets :data:`PENALTY_IPOPT_OPTIONS`,
    :data:`PENALTY_BUDGETS` and :data:`PENALTY_RHO0` unless ``ipopt_options`` /
    ``primary_iterations`` / ``first_step_iterations`` / ``rho0`` (or a whole
    ``options=SolveOptions(...)``) say otherwise. The plate keeps IPOPT's other defaults and the
    layout blocked by kind: the block's :data:`~mcpkit.mpec.horizon.HORIZON_IPOPT_OPTIONS` in stage
    order ended its plans 5-11 % higher at N = 50, 200 and 400 (``docs/mpec_planning.md``).

    ``continuation``: a :class:`~mcpkit.mpec.grid_continuation.GridContinuation` (``None``/``True``:
    its defaults; ``min_steps`` counts steps per period) starts each grid from the plan below (its
    design and start jump); ``False``: cold. A ``time_limit`` covers the coarse solves too.
    """
    task, t0, limit = PlateDesignTask() if task is None else task, time.perf_counter(), limit_seconds(options)
    settings = gc.as_continuation(continuation)
    if settings is None or not gc.coarse_steps(task.steps_per_period, settings.min_steps):
        res, hz = _solve_plate_grid(task, None, None, deviation_tol, options)
        return res, hz, time.perf_counter() - t0

    def cold(n: int, left: float | None) -> tuple[HorizonResult, Horizon]:  # n steps per period
        return _solve_plate_grid(replace(task, steps_per_period=n), None, None, deviation_tol,
                                 {**options, "time_limit": left})  # fmt: skip

    def warm(n: int, U: np.ndarray, th: np.ndarray, left: float | None,
             extra: dict[str, Any]) -> tuple[HorizonResult, Horizon]:  # fmt: skip
        fine = replace(task, steps_per_period=n)
        jump = np.vstack([U[:1], np.zeros((fine.n_steps - 1, 4))])  # the only control: the start jump
        return _solve_plate_grid(fine, jump, th, deviation_tol, {**options, **extra, "time_limit": left})

    res, hz = gc.solve_by_grid_continuation(task.steps_per_period, cold, warm, settings, limit)
    return res, hz, time.perf_counter() - t0


def _solve_plate_grid(
    task: PlateDesignTask,
    controls0: np.ndarray | None,
    design0: np.ndarray | None,
    deviation_tol: float,
    options: dict[str, Any],
) -> tuple[HorizonResult, Horizon]:
    """:func:`solve_plate_design` on ``task``'s grid from ``controls0``, ``design0`` (``None``: the
    settling simulation's start jump, ``task.theta0``), without continuation."""
    options, t0 = dict(options), time.perf_counter()
    deadline = _deadline(options, t0)
    hz, _ = plate_design_horizon(task)
    if controls0 is None:
        controls0 = np.zeros((task.n_steps, 4))
        controls0[0] = periodic_start_guess(task, task.theta0, deadline=deadline)
    design0 = list(task.theta0) if design0 is None else list(design0)
    spent_building(options, t0)  # the build and the settling simulation come off the limit
    options.setdefault("method", "penalty" if task.n_steps >= PENALTY_FROM_STEPS else "scholtes")
    if options["method"] == "penalty" and options.get("options") is None:
        # defaults of the penalty runs; a SolveOptions object passed as options= is taken as is
        for name, value in PENALTY_BUDGETS.items():
            options.setdefault(name, value)
        options.setdefault("rho0", PENALTY_RHO0)
        options["ipopt_options"] = {**PENALTY_IPOPT_OPTIONS, **(options.get("ipopt_options") or {})}
    res = hz.solve(controls0, design0, deviation_tol=deviation_tol, simulator=design_simulator(task),
                   step_options={"method": "penalty", "tol": 1e-10}, **options)  # fmt: skip
    return res, hz


def _deadline(options: dict[str, Any], t0: float) -> float | None:
    """``t0 + options["time_limit"]`` (:func:`~mcpkit.mpec.resimulation.limit_seconds`), or ``None``."""
    limit = limit_seconds(options)
    return None if limit is None else t0 + limit


# --------------------------------------------------------------------------- several radii
def scenario_tasks(task: PlateDesignTask, radii: Sequence[float]) -> list[PlateDesignTask]:
    """One copy of ``task`` per start radius (everything else shared)."""
    try:
        rs = [float(r) for r in radii]
    except (TypeError, ValueError):
        raise MCPInputError(f"radii must be a sequence of numbers, got {radii!r}") from None
    if not rs:
        raise MCPInputError("radii must not be empty")
    return [replace(task, radius=r) for r in rs]


def design_objective(task: PlateDesignTask, radii: Sequence[float], theta: Any) -> tuple[float, np.ndarray]:
    r"""Multi-scenario full-simulation objective :math:`\sum_s J_s(\theta)`: one
    :func:`simulated_objective` per start radius. Returns ``(sum, per-radius values)``."""
    per = np.array([simulated_objective(t, theta) for t in scenario_tasks(task, radii)])
    return float(per.sum()), per


@dataclass(repr=False)
class MultiDesignResult(FromParts):
    r"""Multi-scenario periodic design: one horizon per radius, one shared :math:`\theta`
    (an :class:`~mcpkit.solving.result.Outcome`).

    Its parts are the stacked MPCC solve and one re-simulation check per radius
    (:func:`~mcpkit.mpec.resimulation.resimulation_check`); ``solved`` and ``termination`` come
    from them (:class:`~mcpkit.solving.result.FromParts`).

    Attributes
    ----------
    radii
        Start radii [cm].
    design
        Shared :math:`\theta = (A_6, A_3, C_3)`.
    objective
        Planned :math:`\sum_s J_s` (periodic orbits).
    scenarios
        One :class:`~mcpkit.mpec.resimulation.HorizonResult` per radius (plan, re-simulation with the
        model's ``simulate`` and its ``max_deviation``); each ``objective`` is that radius's
        :math:`J_s`.
    mpcc
        :class:`~mcpkit.solving.result.MPCCResult` of :class:`~mcpkit.mpcc.MPCCSolver` on the stacked MPCC.
    wall_s, solve_time_s
        Total wall time (settling guesses, build, forward simulations, solve, re-simulations)
        and the MPCC solve alone.
    n_x, n_pairs
        Size of the stacked MPCC.
    """

    radii: np.ndarray
    design: np.ndarray
    objective: float
    scenarios: list[HorizonResult]
    mpcc: MPCCResult
    wall_s: float
    solve_time_s: float
    n_x: int
    n_pairs: int

    kind = "plate_design"
    part_name = "check"

    @property
    def parts(self) -> list[Any]:
        """The MPCC solve, then each radius's re-simulation check."""
        return [self.mpcc] + [sc.resim for sc in self.scenarios if sc.resim is not None]

    @property
    def message(self) -> str:
        """Residuals and deviations when solved, every failed part's reason otherwise."""
        if not self.solved:
            return self.failures()
        return (
            f"{len(self.radii)} radii solved (complementarity {self.mpcc.comp_residual:.1e}, violation "
            f"{self.mpcc.constraint_violation:.1e}); re-simulation max deviation "
            f"{self.max_deviations.max():.2e} <= {self.scenarios[0].deviation_tol:.0e}"
        )

    def summary(self) -> dict[str, Any]:
        """:data:`~mcpkit.solving.result.RESULT_KEYS`, then design, objective, residuals and deviations."""
        out = summary_head(self.kind, self, self.wall_s)
        out.update({
            "units": UNIT_NAMES[UNITS],
            "radii": self.radii.tolist(), "design": self.design.tolist(), "objective": self.objective,
            "comp_residual": float(self.mpcc.comp_residual),
            "constraint_violation": float(self.mpcc.constraint_violation),
            "resim_max_deviation_per_radius": self.max_deviations.tolist(),
            "solve_time_s": self.solve_time_s, "n_x": self.n_x, "n_pairs": self.n_pairs,
        })  # fmt: skip
        return out

    @property
    def max_deviations(self) -> np.ndarray:
        """Per-radius re-simulation deviation :math:`\\max_{k,j}|x^{\\rm sim} - x^{\\rm plan}|`."""
        return np.array([r.max_deviation for r in self.scenarios])


def _stack_shared_design(horizons: list[Horizon]) -> tuple[MPCC, list[np.ndarray]]:
    r"""One MPCC from several horizon MPCCs whose design slices are identified.

    The stacked decision vector is ``(X_1, X_2 \ theta_2, ..., X_S \ theta_S)``: every horizon's
    own :math:`\theta` symbols (all its per-step copies, ``Horizon(lift_design=True)``) are
    substituted by those of the first one, whose rows :math:`\theta_{k+1} = \theta_k` are the
    only ones kept (the others would repeat them); the objective is the sum. Returns the MPCC and,
    per horizon, the indices of its decision vector in the stacked one.
    """
    th_sl = horizons[0].layout["theta_copies"]
    th0 = horizons[0].mpcc.x[th_sl.tolist()]  # positions (stage order, Horizon.layout)
    if any(hz.n_design_copies != horizons[0].n_design_copies for hz in horizons):
        raise MCPInputError("the horizons sharing a design need the same number of design copies (same N)")
    xs, fs, gs, Gs, Hs = [], [], [], [], []
    lbx, ubx, lbg, ubg, idx = [], [], [], [], []
    offset = 0
    for s, hz in enumerate(horizons):
        mp, sl = hz.mpcc, hz.layout["theta_copies"]
        n = int(mp.x.numel())
        keep = np.ones(n, dtype=bool)
        if s > 0:
            keep[sl] = False
        local = np.flatnonzero(keep)
        xs.append(mp.x[local.tolist()])
        lbx.append(mp.lbx[keep])
        ubx.append(mp.ubx[keep])
        where = np.empty(n, dtype=int)
        where[keep] = offset + np.arange(local.size)
        if s > 0:
            where[sl] = th_sl  # the first horizon's copies (it keeps all its variables, at offset 0)
            lbx[0][th_sl] = np.maximum(lbx[0][th_sl], mp.lbx[sl])
            ubx[0][th_sl] = np.minimum(ubx[0][th_sl], mp.ubx[sl])
            f, g, G, H = ca.substitute([mp.f, mp.g, mp.G, mp.H], [mp.x[sl.tolist()]], [th0])
        else:
            f, g, G, H = mp.f, mp.g, mp.G, mp.H
        offset += local.size
        idx.append(where)
        rows = np.ones(int(mp.g.numel()), dtype=bool)
        if s > 0:
            rows[hz.rows["design"]] = False  # the first horizon's copy rows tie the shared copies
        fs.append(f)
        gs.append(g[np.flatnonzero(rows).tolist()])
        Gs.append(G)
        Hs.append(H)
        lbg.append(mp.lbg[rows])
        ubg.append(mp.ubg[rows])
    first = horizons[0].mpcc
    lo, hi = np.concatenate(lbx), np.concatenate(ubx)
    stacked = MPCC(
        x=ca.vertcat(*xs), p=ca.SX(0, 1), f=ca.sum1(ca.vertcat(*fs)), g=ca.vertcat(*gs),
        lbg=np.concatenate(lbg), ubg=np.concatenate(ubg), lbx=lo, ubx=hi,
        G=ca.vertcat(*Gs), H=ca.vertcat(*Hs), x0=np.clip(np.zeros(lo.size), lo, hi), p0=np.zeros(0),
        G_implied_by_bounds=first.G_implied_by_bounds, H_implied_by_bounds=first.H_implied_by_bounds,
        name=f"plate_design_{len(horizons)}_radii",
    )  # fmt: skip
    return stacked, idx


def solve_plate_design_multi(
    task: PlateDesignTask | None = None,
    radii: Sequence[float] = DEFAULT_RADII,
    deviation_tol: float = 1e-4,
    method: str = "scholtes",
    tol: float = 1e-6,
    **options: Any,
) -> MultiDesignResult:
    r"""Several periodic design horizons (one per start radius) sharing :math:`\theta`, solved as
    one MPCC with objective :math:`\sum_s J_s`; each radius re-simulated with the model's
    :func:`~mcpkit.models.stepping.simulate`.

    The initial guess of radius :math:`s` is the forward simulation of its settled start jump
    (:func:`periodic_start_guess`) at ``task.theta0``; the wall time includes everything.
    """
    task = PlateDesignTask() if task is None else task
    dtol = as_positive(deviation_tol, "deviation_tol")
    tasks = scenario_tasks(task, radii)
    t0 = time.perf_counter()
    deadline = _deadline(options, t0)
    sopts = {"method": "penalty", "tol": 1e-10}
    horizons = [plate_design_horizon(t)[0] for t in tasks]
    mp, idx = _stack_shared_design(horizons)
    x0 = np.zeros(int(mp.x.numel()))
    th0 = np.asarray(task.theta0, dtype=float)
    for t, hz, where in zip(tasks, horizons, idx, strict=True):
        U0 = np.zeros((t.n_steps, 4))
        U0[0] = periodic_start_guess(t, th0, deadline=deadline)
        x0[where] = hz.initial_guess(U0, th0, deadline=deadline, **sopts)
    x0 = np.clip(x0, mp.lbx, mp.ubx)
    spent_building(options, t0)  # builds, settling and initial simulations come off the limit
    res = MPCCSolver(mp, method, tol=tol, **options).solve(x0=x0)
    xsol = res.x if np.isfinite(res.x).all() else x0
    scen: list[HorizonResult] = []
    for t, hz, where in zip(tasks, horizons, idx, strict=True):
        parts = hz.unpack(xsol[where])
        Xp, Up, th = parts["states"], parts["controls"], parts["design"]
        ts = time.perf_counter()
        Xs = design_simulator(t)(Up, th, deadline=deadline)
        check = resimulation_check(Xs, Xp, dtol, label=f"R = {t.radius:g} re-simulation",
                                   wall_time_s=time.perf_counter() - ts)  # fmt: skip
        if deadline is not None and not np.isfinite(Xs).all() and time.perf_counter() >= deadline:
            check = replace(check, not_checked="time limit: the plan was not re-simulated in full")
        J = field_objective(Xp[0, :3], Xp[-1, :3], t.n_steps * t.h, t.field_rate, t.radius)
        scen.append(HorizonResult(
            t=hz.t.copy(), states=Xp, controls=Up, design=th, z=parts["s"][:, : hz.casadi_mcp.n],
            objective=J, mpcc=res, resim_states=Xs, resim=check, build_time_s=hz.build_time_s,
            resim_time_s=check.wall_time_s, blocks=hz.spec.blocks,
        ))  # fmt: skip
    return MultiDesignResult(
        radii=np.array([t.radius for t in tasks]), design=scen[0].design.copy(),
        objective=float(res.f), scenarios=scen, mpcc=res, wall_s=time.perf_counter() - t0,
        solve_time_s=float(res.wall_time_s), n_x=int(mp.x.numel()), n_pairs=int(mp.n_pairs),
    )  # fmt: skip


# --------------------------------------------------------------------------- Nelder–Mead
def nelder_mead_design(
    task: PlateDesignTask | None = None,
    max_evals: int = 120,
    theta0: Any = None,
    radii: Sequence[float] | None = None,
) -> dict[str, Any]:
    """Seed 004 §4: ``scipy.optimize.minimize(method="Nelder-Mead")`` over full simulations.

    The objective is :func:`simulated_objective` at ``task.radius`` or, with ``radii``, the
    multi-scenario sum :func:`design_objective` (one full simulation per radius per evaluation);
    the design is clipped to the task's box. Returns the best design, its objective, the wall
    time and the history ``(elapsed_s, J)`` of every evaluation."""
    task = PlateDesignTask() if task is None else task
    if not isinstance(max_evals, int) or isinstance(max_evals, bool) or max_evals < 1:
        raise MCPInputError(f"max_evals must be a positive integer, got {max_evals!r}")
    rs = [task.radius] if radii is None else [t.radius for t in scenario_tasks(task, radii)]
    th0 = _theta(task.theta0 if theta0 is None else theta0)
    lo, hi = np.asarray(task.theta_lo), np.asarray(task.theta_hi)
    hist: list[tuple[float, float]] = []
    t0 = time.perf_counter()

    def fun(th: np.ndarray) -> float:
        J = design_objective(task, rs, np.clip(th, lo, hi))[0]
        hist.append((time.perf_counter() - t0, J))
        return J

    out = minimize(fun, th0, method="Nelder-Mead",
                   options={"maxfev": max_evals, "xatol": 1e-3, "fatol": 1e-6})  # fmt: skip
    return {
        "design": np.clip(out.x, lo, hi),
        "objective": float(out.fun),
        "wall_s": time.perf_counter() - t0,
        "n_evals": len(hist),
        "history": np.array(hist),
        "radii": rs,
        "message": str(out.message),
    }


def time_to_reach(history: np.ndarray, target: float) -> float:
    """First elapsed time at which the running best of ``history`` is ``<= target`` (inf if never)."""
    if history.size == 0:
        return math.inf
    best = np.minimum.accumulate(history[:, 1])
    hit = np.flatnonzero(best <= target)
    return float(history[hit[0], 0]) if hit.size else math.inf


# --------------------------------------------------------------------------- demo
def _polar(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Polar angle (unwrapped) and tangential velocity of states ``(q, v, ...)``."""
    ang = np.unwrap(np.arctan2(X[:, 1], X[:, 0]))
    vt = (X[:, 0] * X[:, 4] - X[:, 1] * X[:, 3]) / np.hypot(X[:, 0], X[:, 1])
    return ang, vt


def plot_plate_design(
    task: PlateDesignTask,
    res: MultiDesignResult,
    nm: dict[str, Any] | None,
    sims: dict[str, list[SimulationResult]],
    mpec_objective_sim: float | None = None,
) -> Any:
    r"""Three panels: (a) planned periodic orbits vs re-simulation, tangential velocity over
    :math:`\kappa R` per radius; (b) polar angle of full simulations from rest for each design and
    radius against the field :math:`\kappa t`; (c) Nelder–Mead's best objective vs wall time with
    the MPEC's objective and wall time."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(13, 3.9), dpi=100)
    ax = fig.subplots(1, 3)
    for i, (R, sc) in enumerate(zip(res.radii, res.scenarios, strict=True)):
        c = f"C{i}"
        k = task.field_rate * R
        # widths shrink with i so that radii whose scaled orbits coincide stay visible
        ax[0].plot(sc.t[1:] * 1e3, _polar(sc.states)[1][1:] / k, "-", color=c, lw=max(3.0 - i, 0.8),
                   label=f"plan R = {R:g} cm")  # fmt: skip
        ax[0].plot(sc.t[1:] * 1e3, _polar(sc.resim_states)[1][1:] / k, "o", ms=2.5, color=c, mfc="none")
    ax[0].axhline(1.0, color="k", lw=0.8, ls=":")
    ax[0].set(xlabel="t [ms]", ylabel=r"$v_\theta / (\kappa R)$",
              title="periodic orbits: plan (line), re-simulation (o)")  # fmt: skip
    ax[0].legend(fontsize=7)
    styles = {0: "-", 1: "--", 2: "-."}
    for j, runs in enumerate(sims.values()):
        for i, sim in enumerate(runs):
            ang = np.degrees(_polar(sim.states)[0])
            ax[1].plot(sim.t, ang, styles.get(j, ":"), color=f"C{i}", lw=max(2.4 - 0.7 * i, 0.8))
    tt = np.linspace(0, task.sim_periods * task.period, 50)
    ax[1].plot(tt, np.degrees(task.field_rate * tt), "k:", lw=1.5)
    # the legend says what carries meaning: colour = radius, line style = design
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=f"C{i}", lw=2, label=f"R = {R:g} cm") for i, R in enumerate(res.radii)]
    handles += [
        Line2D([], [], color="0.3", ls=styles.get(j, ":"), lw=1.2, label=name) for j, name in enumerate(sims)
    ]
    handles.append(Line2D([], [], color="k", ls=":", lw=1.5, label=r"field $\kappa t$"))
    ax[1].set(xlabel="t [s]", ylabel="polar angle [deg]",
              title="full simulation from rest (colour: radius, line: design)")  # fmt: skip
    ax[1].legend(handles=handles, fontsize=7, ncol=2)
    if nm is not None and nm["history"].size:
        hst = nm["history"]
        ax[2].semilogy(hst[:, 0], np.minimum.accumulate(hst[:, 1]), color="C0", label="Nelder–Mead best")
    if nm is None:  # nothing to compare against: say so instead of an empty axis
        mpec = "" if mpec_objective_sim is None else f"\nMPEC design: objective {mpec_objective_sim:.3g}"
        ax[2].text(0.5, 0.5, f"Nelder–Mead not run{mpec}\n(MPEC wall time {res.wall_s:.1f} s)",
                   transform=ax[2].transAxes, ha="center", va="center", fontsize=9)  # fmt: skip
        ax[2].set(xticks=[], yticks=[], title="objective vs wall time")
    else:
        if mpec_objective_sim is not None:
            ax[2].axhline(mpec_objective_sim, color="C1", ls="--", label=f"MPEC design ({res.wall_s:.1f} s)")
            ax[2].axvline(res.wall_s, color="C1", ls=":", lw=0.8)
        ax[2].set(xlabel="wall time [s]", ylabel=r"$\sum_R J_R$ (full simulations)",
                  title="objective vs wall time")  # fmt: skip
        ax[2].legend(fontsize=7)
    fig.tight_layout()
    return fig


def seed_design_objectives(task: PlateDesignTask, radii: Sequence[float],
                           a3_scale: float = 100.0) -> dict[str, dict[str, Any]]:  # fmt: skip
    r"""Full-simulation objectives of the seed's printed designs (:data:`SEED_DESIGNS`) with
    :math:`A_3` multiplied by ``a3_scale`` (100: the printed :math:`A_3` read in m/s²)."""
    out = {}
    for name, th in SEED_DESIGNS.items():
        d = np.array([th[0], th[1] * a3_scale, th[2]])
        total, per = design_objective(task, radii, d)
        out[name] = {"design": d.tolist(), "objective_sim": total, "per_radius": per.tolist()}
    return out


def run_comparison(
    task: PlateDesignTask | None = None,
    radii: Sequence[float] = DEFAULT_RADII,
    max_evals: int = 40,
    nelder_mead: bool = True,
    progress: bool = False,
) -> tuple[dict[str, Any], MultiDesignResult, dict[str, Any] | None]:
    r"""Multi-radius MPEC and Nelder–Mead on :math:`\sum_R J_R`, side by side in this process.

    Both designs are scored with the same full simulations (:func:`design_objective`). Returns the
    JSON-serialisable summary, the MPEC result and the Nelder–Mead output."""
    task = PlateDesignTask() if task is None else task
    rs = [t.radius for t in scenario_tasks(task, radii)]
    if progress:
        print(f"plate design: periodic MPEC, radii {rs} cm, N = {task.n_steps} steps each ...", flush=True)
    res = solve_plate_design_multi(task, rs)
    if progress:
        print(res.message, f"({res.wall_s:.1f} s)", flush=True)
    J0, J0_per = design_objective(task, rs, task.theta0)
    J1, J1_per = design_objective(task, rs, res.design)
    s: dict[str, Any] = {
        "units": UNIT_NAMES[UNITS],
        "radii": rs, "n_steps_per_radius": task.n_steps, "h": task.h,
        "n_x": res.n_x, "n_pairs": res.n_pairs,
        "theta0": list(task.theta0), "theta_lo": list(task.theta_lo), "theta_hi": list(task.theta_hi),
        "design": [float(v) for v in res.design],
        "objective_plan": res.objective,
        "objective_plan_per_radius": [float(sc.objective) for sc in res.scenarios],
        "objective_sim_initial": J0, "objective_sim_initial_per_radius": J0_per.tolist(),
        "objective_sim_mpec": J1, "objective_sim_mpec_per_radius": J1_per.tolist(),
        "comp_residual": float(res.mpcc.comp_residual),
        "constraint_violation": float(res.mpcc.constraint_violation),
        "resim_max_deviation_per_radius": res.max_deviations.tolist(),
        "start_jump_per_radius": [[float(v) for v in sc.controls[0]] for sc in res.scenarios],
        "mpec_wall_s": res.wall_s, "mpec_solve_s": res.solve_time_s,
    }  # fmt: skip
    nm = None
    if nelder_mead:
        if progress:
            print(f"plate design: Nelder-Mead, {max_evals} evaluations x {len(rs)} full simulations ...",
                  flush=True)  # fmt: skip
        nm = nelder_mead_design(task, max_evals=max_evals, radii=rs)
        t_reach = time_to_reach(nm["history"], J1)
        _, nm_per = design_objective(task, rs, nm["design"])
        s.update({
            "nm_design": [float(v) for v in nm["design"]],
            "nm_objective_sim": float(nm["objective"]),
            "nm_objective_sim_per_radius": nm_per.tolist(),
            "nm_wall_s": float(nm["wall_s"]), "nm_evals": int(nm["n_evals"]),
            "nm_reached_mpec_objective": bool(math.isfinite(t_reach)),
            "nm_time_to_mpec_objective_s": t_reach if math.isfinite(t_reach) else None,
            "wall_ratio_nm_over_mpec": float(nm["wall_s"] / res.wall_s),
            "objective_ratio_nm_over_mpec": float(nm["objective"] / J1) if J1 > 0 else math.inf,
        })  # fmt: skip
    return s, res, nm


def demo_plate_design(
    out_dir: Path | str,
    progress: bool = True,
    nelder_mead: bool = True,
    max_evals: int = 40,
    radii: Sequence[float] = DEFAULT_RADII,
    fmt: str = "png",
) -> CompositeResult:
    """Multi-radius periodic MPEC and (optionally) Nelder–Mead on the same objective
    (:func:`run_comparison`); writes ``mpec_plate_design.<fmt>`` (``fmt``: ``png``, ``pdf`` or
    ``svg``, :func:`mcpkit.formats.figures.save_figure`).

    Returns a :class:`~mcpkit.solving.result.CompositeResult` whose one part is the
    :class:`MultiDesignResult`: ``solved`` only if the MPCC met tolerance and every radius's
    re-simulation reproduced the plan; the comparison's numbers and the figure are its ``details``.
    """
    t0 = time.perf_counter()
    try:
        d = Path(out_dir)
    except TypeError:
        raise MCPInputError(f"out_dir must be a path, got {out_dir!r}") from None
    d.mkdir(parents=True, exist_ok=True)
    fmt = figure_format(fmt).value  # checked before minutes of solving
    task = PlateDesignTask()
    s, res, nm = run_comparison(task, radii, max_evals=max_evals, nelder_mead=nelder_mead, progress=progress)
    tasks = scenario_tasks(task, res.radii)
    sims = {"MPEC design": [simulate_design(t, res.design)[0] for t in tasks]}
    if nm is not None:
        sims["Nelder–Mead design"] = [simulate_design(t, nm["design"])[0] for t in tasks]
    sims["initial design"] = [simulate_design(t, task.theta0)[0] for t in tasks]
    fig = plot_plate_design(task, res, nm, sims, mpec_objective_sim=s["objective_sim_mpec"])
    s["figure"] = save_figure(fig, d, "mpec_plate_design", fmt)
    return CompositeResult(kind="demo:plate-design", parts=[res], what="run",
                           wall_time_s=time.perf_counter() - t0, details=s)  # fmt: skip
