r"""Numerical studies of Berard et al. §3: the Vose plate (§3.1), step size (§3.2), friction-cone
linearisation (§3.3) and solve time (§3.4).

**Reference for §3.1.** For a particle at plate coordinate :math:`x` on a plate rotating by
:math:`\phi(t)` about an axis a distance :math:`d` below its surface (2-D, plate tangent
:math:`e_t=(\cos\phi,\sin\phi)`, normal :math:`e_n=(-\sin\phi,\cos\phi)`), the position
:math:`P = x e_t + d e_n` has tangential and normal accelerations
:math:`a_t = \ddot x - \ddot\phi d - \dot\phi^2 x` and
:math:`a_n = 2\dot x\dot\phi + \ddot\phi x - \dot\phi^2 d`. With contact maintained and sliding
(Vose et al.'s assumptions) Coulomb friction gives

.. math::
    \ddot x = \ddot\phi d + \dot\phi^2 x - g\sin\phi
              - \mu\,(a_n + g\cos\phi)\,\mathrm{sign}(\dot x),\qquad N = m(a_n + g\cos\phi) > 0 .

Freezing :math:`x = r` in the coefficients, the periodic solution of this ODE for
:math:`\dot x` has a mean :math:`v_{ss}(r)` over one period: the asymptotic velocity of eq (17),
:math:`v_{ss} = br + cr^3`. It is computed here with an adaptive ODE integrator with event
location at the slip reversals, independent of the complementarity time stepper, and
:math:`b, c` are fitted by least squares. The plate of :class:`~.plate.VosePlate` rotates about
:math:`+y`, which is :math:`\phi = -\theta`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.integrate import solve_ivp

from mcpkit.errors import MCPInputError
from mcpkit.models.stepping import SimulationResult, simulate
from mcpkit.models.stewart_trinkle.bodies import GRAVITY_CGS, UNIT_NAMES, Particle
from mcpkit.models.stewart_trinkle.contact import Contact, PlaneSurface
from mcpkit.models.stewart_trinkle.lcp import LCPStep
from mcpkit.models.stewart_trinkle.ncp import NCPStep
from mcpkit.models.stewart_trinkle.plate import PlateMotion, VoseParameters, VosePlate, scaled_circle_plate
from mcpkit.solving.options import Choice
from mcpkit.solving.result import OnePart

UNITS = "cgs"
"""Unit system of every study here (cm, g, s; g = 980.665 cm/s²), as the paper states its examples:
the bodies are built with :meth:`~.bodies.Particle.cgs` and the summaries say ``units: cgs``."""

DEFAULT_METHOD = "penalty"
"""IPOPT route used by the studies: in our runs the penalty homotopy solved every step of
these problems to ``tol=1e-8`` and was the fastest of scholtes/fb/penalty (see the docs)."""

STUDY_TOL = 1e-12
r"""Natural-residual tolerance of the step MCPs in the studies (:func:`run_vose`, the Circle-plate
studies), which are judged on the Coulomb residual too (:meth:`~.step.StewartTrinkleStep.judge`,
at :data:`STUDY_FRICTION_TOL`). The NCP's cone row :math:`\mu^2\beta_n^2 - \|\beta_f\|^2` is
quadratic in :math:`\beta`: a residual :math:`\tau` there is a friction-impulse error of about
:math:`\tau/(2\mu\beta_n)`, a relative Coulomb residual of about :math:`\tau/(2\mu\beta_n s)`,
and both :math:`\beta_n` and the step scale :math:`s` grow like :math:`gh`, so the tolerance
that keeps :math:`\hat e \le 10^{-8}` shrinks like :math:`h^2`. Measured on the Circle plate
(penalty route, :math:`t_\mathrm{end} = 0.3`): :math:`\min_k 2\mu\beta_n s` over the steps is
``5.7e-3`` at ``h = 1e-4`` and ``1.4e-3`` at ``h = 5e-5``, so ``tol = 1e-10`` allows
:math:`\hat e` up to ``1.7e-8`` and ``7e-8``; it reached ``1.02e-8`` at step 2034 of
``h = 1e-4`` (natural residual ``7.2e-11``, all seven pairs free, slip reversal), the failure of
:func:`step_size_study` since this tolerance was introduced. At ``1e-12`` the bound is
``7e-10`` there and the largest :math:`\hat e` over ``h = 1e-3 .. 5e-5`` was ``8.6e-11``,
every step solved, in the same wall time (10-20 % more inner iterations);
:func:`friction_directions_study`, whose NCP run is the same ``h = 1e-4`` run, went from unsolved
to solved too, with the same errors in 26 s either way. (At ``1e-8`` the penalty route had left
:math:`\hat e` up to ``1.1e-7`` on the Vose plate.)"""

STUDY_FRICTION_TOL = 1e-8
r"""Tolerance of the relative Coulomb residual :math:`\max_i \hat e_i` of every study step."""


# --------------------------------------------------------------------------- §3.1 reference
def _vose_rhs(params: VoseParameters, mu: float, g: float, r_frozen: float | None):
    plate = VosePlate.__new__(VosePlate)  # closed forms only, no RK4 cache needed
    plate.params = params

    def rhs(t: float, y: np.ndarray, s: float) -> np.ndarray:
        x = y[0] if r_frozen is None else r_frozen
        u = y[1]
        phi = -float(plate.theta(t))
        dphi = -float(plate.theta_dot(t))
        ddphi = -float(plate.theta_ddot(t))
        d = params.depth
        an = 2 * u * dphi + ddphi * x - dphi**2 * d
        acc = ddphi * d + dphi**2 * x - g * math.sin(phi) - mu * (an + g * math.cos(phi)) * s
        return np.array([u, acc])

    return rhs


def _slip_direction(rhs: Any, t: float, y: np.ndarray) -> float:
    """Direction of slip leaving :math:`\\dot x = 0`: the sign whose acceleration agrees."""
    if rhs(t, y, 1.0)[1] > 0:
        return 1.0
    if rhs(t, y, -1.0)[1] < 0:
        return -1.0
    raise MCPInputError(f"the particle would stick at t={t:.6g}; the sliding ODE does not apply")


def vose_sliding_ode(
    x0: float,
    u0: float,
    t_end: float,
    params: VoseParameters | None = None,
    mu: float = 0.3,
    g: float = GRAVITY_CGS,
    r_frozen: float | None = None,
    t_eval: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Integrate the sliding ODE of the module docstring from plate coordinates
    :math:`(x_0, \dot x_0)`; the sign of :math:`\dot x` is switched at each zero crossing
    (located as an event, restart with the new sign; the ODE is only valid while the particle
    slips through zero instantaneously). Returns ``(t, y)`` with ``y[:, 0] = x``, ``y[:, 1] = xdot``.
    """
    params = params or VoseParameters()
    rhs = _vose_rhs(params, mu, g, r_frozen)
    T = params.period
    # piecewise-smooth in t too: restart at every half period
    breaks = np.arange(0.0, t_end + T / 2, T / 2)
    breaks = np.unique(np.clip(np.append(breaks, t_end), 0, t_end))
    ts: list[np.ndarray] = []
    ys: list[np.ndarray] = []
    y = np.array([x0, u0], dtype=float)
    t = 0.0
    s = 1.0 if u0 > 0 else -1.0
    if u0 == 0.0:
        s = _slip_direction(rhs, 0.0, y)
        y[1] = s * 1e-12
    for tb in breaks[1:]:
        while t < tb - 1e-15:
            ev = lambda tt, yy, ss: yy[1]  # noqa: E731
            ev.terminal = True  # type: ignore[attr-defined]
            sol = solve_ivp(rhs, (t, tb), y, args=(s,), rtol=1e-11, atol=1e-12, events=ev, max_step=T / 400)
            if np.asarray(sol.t).size:
                ts.append(np.asarray(sol.t))
                ys.append(np.asarray(sol.y).T)
            if sol.status == 1 and sol.t_events[0].size:
                t = float(sol.t_events[0][0])
                y = sol.y_events[0][0].copy()
                y[1] = 0.0
                # new direction of slip: the sign of the acceleration at u = 0 for either sign
                s = _slip_direction(rhs, t, y)
                y[1] = s * 1e-12
            else:
                t = tb
                y = sol.y[:, -1].copy()
    tt, yy = np.concatenate(ts), np.vstack(ys)
    if t_eval is None:
        return tt, yy
    te = np.asarray(t_eval, dtype=float)
    return te, np.column_stack([np.interp(te, tt, yy[:, 0]), np.interp(te, tt, yy[:, 1])])


def vose_asymptotic_velocity(
    r: float,
    params: VoseParameters | None = None,
    mu: float = 0.3,
    g: float = GRAVITY_CGS,
    periods: int = 30,
) -> float:
    r""":math:`v_{ss}(r)`: mean of :math:`\dot x` over one period of the periodic solution of the
    frozen-:math:`r` sliding ODE (module docstring), reached by integrating ``periods`` periods."""
    params = params or VoseParameters()
    T = params.period
    t_eval = np.linspace((periods - 1) * T, periods * T, 2001)
    t, y = vose_sliding_ode(r, 0.0, periods * T, params, mu, g, r_frozen=r, t_eval=t_eval)
    # the first component integrates xdot exactly (x itself is frozen in the coefficients)
    return float((y[-1, 0] - y[0, 0]) / T)


def vose_fit(
    radii: np.ndarray | None = None,
    params: VoseParameters | None = None,
    mu: float = 0.3,
    g: float = GRAVITY_CGS,
) -> dict[str, Any]:
    r"""Least-squares fit :math:`v_{ss}(r) = br + cr^3` (eq 17) of :func:`vose_asymptotic_velocity`."""
    radii = np.linspace(0.5, 5.0, 10) if radii is None else np.asarray(radii, dtype=float)
    v = np.array([vose_asymptotic_velocity(float(r), params, mu, g) for r in radii])
    A = np.column_stack([radii, radii**3])
    (b, c), *_ = np.linalg.lstsq(A, v, rcond=None)
    return {
        "radii": radii,
        "v_ss": v,
        "b": float(b),
        "c": float(c),
        "fit_max_error": float(np.abs(A @ np.array([b, c]) - v).max()),
    }


# --------------------------------------------------------------------------- §3.1 simulation
@dataclass(repr=False)
class VoseRun(OnePart):
    """Result of :func:`run_vose` (an :class:`~mcpkit.solving.result.Outcome` through its simulation)."""

    sim: SimulationResult
    plate: VosePlate
    r: np.ndarray
    """Plate coordinate of the particle per step, shape ``(N+1,)``."""
    gap: np.ndarray
    """Distance particle-plate per step (``psi`` at the step's end)."""
    slip: np.ndarray
    """Slip speed :math:`\\sigma` per step."""
    normal_force: np.ndarray
    """:math:`\\lambda_n` per step [dyn]."""
    period_t: np.ndarray
    """Mid-times of the complete periods."""
    period_r: np.ndarray
    """Average plate coordinate per period."""
    period_v: np.ndarray
    """Average velocity per period, :math:`(r(t+T) - r(t))/T`."""

    @property
    def part(self) -> SimulationResult:
        """The verdict's one part: the simulation (solved when every step was)."""
        return self.sim

    def summary(self) -> dict[str, Any]:
        """The simulation's summary (:data:`~mcpkit.solving.result.RESULT_KEYS` first), kind ``vose_run``."""
        out = self.sim.summary()
        out["kind"] = "vose_run"
        out["units"] = UNIT_NAMES[UNITS]
        return out


class StepFormulation(str, Choice, option="formulation"):
    """The contact step of the studies (the argument ``formulation``)."""

    NCP = "ncp"
    """Stewart-Trinkle's NCP with the quadratic friction cone (eq 9, :class:`NCPStep`)."""
    LCP = "lcp"
    """The LCP with the cone as a polyhedron of ``n_d`` directions (eq 15, :class:`LCPStep`)."""


def vose_step_model(
    params: VoseParameters | None = None,
    mass: float = 1.0,
    mu: float = 0.3,
    h: float = 1e-4,
    formulation: StepFormulation | str = "ncp",
    n_d: int = 16,
) -> tuple[NCPStep | LCPStep, VosePlate]:
    """Particle on the Vose plate as an NCP (eq 9) or LCP (eq 15) step model."""
    plate = VosePlate(params)
    surf = PlaneSurface(point=[0.0, 0.0, plate.params.depth], motion=plate)
    contacts = [Contact(surf, mu)]
    body = Particle.cgs(mass=mass)
    if StepFormulation.parse(formulation) is StepFormulation.NCP:
        return NCPStep(body, contacts, h), plate
    return LCPStep(body, contacts, h, n_d=n_d), plate


def run_vose(
    t_end: float = 0.6,
    r0: float = 4.0,
    params: VoseParameters | None = None,
    h: float = 1e-4,
    mu: float = 0.3,
    mass: float = 1.0,
    formulation: StepFormulation | str = "ncp",
    n_d: int = 16,
    method: str = DEFAULT_METHOD,
    progress: bool = False,
) -> VoseRun:
    """Simulate the §3.1 particle from plate coordinate ``r0`` (resting on the plate, moving
    with the plate's surface point) for ``t_end`` seconds."""
    if not (t_end > 0 and h > 0):
        raise MCPInputError("t_end and h must be positive")
    model, plate = vose_step_model(params, mass, mu, h, formulation, n_d)
    x = np.array([r0, 0.0, plate.params.depth])
    x0 = model.initial_state(x, plate.point_velocity(0.0, x))
    n = int(round(t_end / h))
    solver = model.make_solver(method, "casadi", tol=STUDY_TOL, friction_tol=STUDY_FRICTION_TOL)
    sim = simulate(model, x0, n, progress=progress, solver=solver)
    T = plate.params.period
    pos = sim.states[:, :3]
    r = np.array([plate.rotation(float(t))[:, 0] @ p for t, p in zip(sim.t, pos, strict=True)])
    gap = np.array(
        [plate.rotation(float(t))[:, 2] @ p - plate.params.depth for t, p in zip(sim.t, pos, strict=True)]
    )
    spp = int(round(T / h))
    nper = (len(r) - 1) // spp
    idx = np.arange(nper + 1) * spp
    period_v = np.diff(r[idx]) / T
    period_r = np.array([r[idx[k] : idx[k + 1] + 1].mean() for k in range(nper)])
    return VoseRun(
        sim=sim,
        plate=plate,
        r=r,
        gap=gap,
        slip=sim.block("sigma")[:, 0],
        normal_force=sim.block("lam_n")[:, 0] * mass / h,
        period_t=(idx[:-1] + spp / 2) * h,
        period_r=period_r,
        period_v=period_v,
    )


# --------------------------------------------------------------------------- §3.2–3.4
def circle_step_model(
    h: float,
    formulation: StepFormulation | str = "ncp",
    n_d: int = 16,
    mu: float = 0.3,
    plate: PlateMotion | None = None,
) -> tuple[NCPStep | LCPStep, PlateMotion]:
    """Particle on the scaled *Circle* plate (eqs 18–19), plate surface through the plate origin."""
    plate = plate or scaled_circle_plate()
    surf = PlaneSurface(point=[0.0, 0.0, 0.0], motion=plate)
    body = Particle.cgs(mass=1.0)
    if StepFormulation.parse(formulation) is StepFormulation.NCP:
        return NCPStep(body, [Contact(surf, mu)], h), plate
    return LCPStep(body, [Contact(surf, mu)], h, n_d=n_d), plate


def _run_circle(
    h: float,
    t_end: float,
    formulation: str,
    n_d: int,
    method: str,
    plate: PlateMotion | None = None,
    judge: bool = True,
) -> tuple[SimulationResult, PlateMotion]:
    """Particle from plate coordinate (4, 0) on the Circle plate. ``judge``: every step is judged on
    the Coulomb residual too (MCP at :data:`STUDY_TOL`); ``False``: the plain MCP solve at the default
    tolerance (the timing study times the MCP solve alone)."""
    model, plate = circle_step_model(h, formulation, n_d, plate=plate)
    x = np.array([4.0, 0.0, 0.0])
    x = plate.position(0.0) + plate.rotation(0.0) @ x
    x0 = model.initial_state(x, plate.point_velocity(0.0, x))
    n = int(round(t_end / h))
    if not judge:
        return simulate(model, x0, n, method=method, backend="casadi", progress=False), plate
    solver = model.make_solver(method, "casadi", tol=STUDY_TOL, friction_tol=STUDY_FRICTION_TOL)
    return simulate(model, x0, n, progress=False, solver=solver), plate


def step_size_study(
    steps: tuple[float, ...] = (1e-3, 5e-4, 2e-4, 1e-4),
    h_ref: float = 5e-5,
    t_end: float = 0.3,
    method: str = DEFAULT_METHOD,
) -> dict[str, Any]:
    r"""§3.2: trajectory error :math:`\max_t\|x_h(t) - x_{h_\mathrm{ref}}(t)\|` against :math:`h`
    (NCP, scaled Circle plate, particle from (4, 0)); also the log–log slopes between successive
    step sizes and the least-squares slope over all of them (``fit_slope``). Every ``h`` must be
    a multiple of ``h_ref``."""
    ref, plate = _run_circle(h_ref, t_end, "ncp", 0, method)
    errors, solved = [], ref.solved
    trajs = {}
    for h in steps:
        ratio = round(h / h_ref)
        if abs(ratio * h_ref - h) > 1e-12:
            raise MCPInputError(f"step {h} is not a multiple of h_ref={h_ref}")
        sim, _ = _run_circle(h, t_end, "ncp", 0, method, plate)
        solved &= sim.solved
        xr = ref.states[::ratio, :3][: sim.states.shape[0]]
        err = np.linalg.norm(sim.states[:, :3] - xr, axis=1)
        errors.append(float(np.nanmax(err)))
        trajs[h] = sim.states[:, :3]
    e = np.array(errors)
    hs = np.array(steps)
    slopes = np.diff(np.log(e)) / np.diff(np.log(hs))
    return {
        "h": hs,
        "error": e,
        "slopes": slopes,
        "fit_slope": float(np.polyfit(np.log(hs), np.log(e), 1)[0]),
        "h_ref": h_ref,
        "t_end": t_end,
        "reference": ref.states[:, :3],
        "trajectories": trajs,
        "solved": bool(solved),
    }


def friction_directions_study(
    directions: tuple[int, ...] = (4, 8, 16, 32, 64),
    h: float = 1e-4,
    t_end: float = 0.3,
    method: str = DEFAULT_METHOD,
) -> dict[str, Any]:
    r"""§3.3: error :math:`\max_t\|x_\mathrm{LCP}(t) - x_\mathrm{NCP}(t)\|` of the polyhedral
    cone with ``n_d`` directions against the quadratic cone (scaled Circle plate)."""
    ncp, plate = _run_circle(h, t_end, "ncp", 0, method)
    errors, times, solved = [], [], ncp.solved
    trajs = {}
    for nd in directions:
        sim, _ = _run_circle(h, t_end, "lcp", nd, method, plate)
        solved &= sim.solved
        errors.append(float(np.nanmax(np.linalg.norm(sim.states[:, :3] - ncp.states[:, :3], axis=1))))
        times.append(float(np.median(sim.step_time_s)))
        trajs[nd] = sim.states[:, :3]
    return {
        "n_d": np.array(directions),
        "error": np.array(errors),
        "ncp": ncp.states[:, :3],
        "trajectories": trajs,
        "lcp_step_time_s": np.array(times),
        "ncp_step_time_s": float(np.median(ncp.step_time_s)),
        "solved": bool(solved),
    }


def timing_study(
    directions: tuple[int, ...] = (4, 8, 16, 32, 64),
    n_steps: int = 200,
    h: float = 1e-4,
    method: str = DEFAULT_METHOD,
) -> dict[str, Any]:
    """§3.4: median wall time per step (warm parametric re-solve) of the NCP and of the LCP with
    ``n_d`` directions, particle on the scaled Circle plate; plus the MCP sizes."""
    out_t, sizes = [], []
    t0 = time.perf_counter()
    sim, plate = _run_circle(h, n_steps * h, "ncp", 0, method, judge=False)
    ncp_t = float(np.median(sim.step_time_s))
    ncp_n = circle_step_model(h, "ncp")[0].mcp.n
    for nd in directions:
        s, _ = _run_circle(h, n_steps * h, "lcp", nd, method, plate, judge=False)
        out_t.append(float(np.median(s.step_time_s)))
        sizes.append(circle_step_model(h, "lcp", nd)[0].mcp.n)
    return {
        "n_d": np.array(directions),
        "lcp_step_time_s": np.array(out_t),
        "lcp_size": np.array(sizes),
        "ncp_step_time_s": ncp_t,
        "ncp_size": ncp_n,
        "wall_s": time.perf_counter() - t0,
    }
