r"""Planar pushing of the ECP slider (seed 000) from pose A to pose B as one horizon MPCC.

Each step is the complementarity ECP model of :mod:`mcpkit.models.ecp.complementarity`
(:math:`0 \le \sigma \perp` ellipsoid slack :math:`\ge 0`, seed 000 eqs 17-20 with the
substituted eqs 29-31), so the plan may stick (:math:`\sigma = 0`) or slide. A point pusher acts
on the left edge at the body point :math:`\rho = (-L/2, \theta_c)`, where the contact height
:math:`\theta_c` is a **design parameter** shared by the whole horizon, with the body-frame force
:math:`u_k = (f_n, f_t)`, :math:`0 \le f_n \le F_{\max}`, inside the pusher's friction cone
:math:`|f_t| \le \mu_p f_n` (two linear path constraints). The pusher is the model's load
(:class:`~mcpkit.models.ecp.params.EdgePusher`, controls :math:`(f_n, f_t)`, design
:math:`\theta_c`) and the horizon step is the model's own step map
(:meth:`StepSpec.from_model <mcpkit.mpec.step.StepSpec.from_model>`, nothing re-derived
here): applied impulses

.. math::
    (p_x, p_y) = h R(\theta_z)(f_n, f_t),\qquad p_{z\tau} = h(\rho_x f_t - \theta_c f_n),

and the linear update of eqs 26-28: :math:`\nu_{k+1} = \nu_k + (p + p_{\rm app})/m`
(resp. :math:`/I_z` for the yaw rate), :math:`q_{k+1} = q_k + h\nu_{k+1}`.
The plan starts at rest at pose A, must end at rest at pose B and minimises
:math:`\sum_k h\|u_k\|^2`. Since the pusher cannot pull, the slider must be braked by table
friction, so the plan slides and then sticks.

The MPCC is non-convex (bilinear friction rows) and its local solutions depend on the initial
guess. :func:`plan_pushing` therefore runs a small deterministic **multi-start**: each
:class:`PushStart` is a forward simulation of a push profile; a start whose solve fails (MPCC
tolerance or re-simulation) is **re-seeded** up to ``restarts`` times from the forward simulation
of its own (failed) planned controls, i.e. from a point that satisfies every step's
complementarity exactly. The best plan that is solved *and* reproduced by re-simulation wins;
every attempt is recorded (:class:`PushAttempt`) with its status and residuals.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import casadi as ca
import numpy as np

from mcpkit.errors import MCPInputError, ShapeError
from mcpkit.models.ecp.complementarity import ComplementarityECPStep
from mcpkit.models.ecp.params import EdgePusher, SliderParams, paper_slider
from mcpkit.models.ecp.simulation import run_ecp
from mcpkit.mpec.horizon import TIGHT_SIGMA0, Horizon
from mcpkit.mpec.resimulation import HorizonResult, limit_seconds, spent_building
from mcpkit.mpec.step import PathConstraint, StepSpec
from mcpkit.problems.arrays import as_count, as_real
from mcpkit.solving.options import time_limit_seconds
from mcpkit.solving.result import FromParts, OnePart, Termination, summary_head
from mcpkit.stationarity.refine import RefineOptions

__all__ = [
    "CONTINUATION_STEPS",
    "DEFAULT_STARTS",
    "PUSHING_REFINE",
    "PushAttempt",
    "PushStart",
    "PushTask",
    "PushingPlan",
    "contact_modes",
    "ecp_simulator",
    "plan_pushing",
    "pushing_horizon",
    "pushing_model",
    "pushing_step_spec",
    "solve_pushing",
]


@dataclass(frozen=True)
class PushTask:
    """The pose-to-pose pushing task.

    Attributes
    ----------
    params
        The slider (default: seed 000 §6.1, ``h = 0.01`` s).
    start, goal
        Poses :math:`(q_x, q_y, \\theta_z)` [m, m, rad]; both at rest.
    n_steps
        Horizon length :math:`N`.
    force_max
        :math:`F_{\\max}` [N].
    mu_pusher
        Pusher friction coefficient :math:`\\mu_p`.
    contact_range
        Bounds on the design contact height :math:`\\theta_c` on the left edge [m].
    """

    params: SliderParams = field(default_factory=paper_slider)
    start: tuple[float, float, float] = (0.0, 0.0, 0.0)
    goal: tuple[float, float, float] = (0.04, 0.01, 0.15)
    n_steps: int = 30
    force_max: float = 10.0
    mu_pusher: float = 0.3
    contact_range: tuple[float, float] = (-0.02, 0.02)

    def __post_init__(self) -> None:
        as_count(self.n_steps, "PushTask.n_steps")
        for name in ("start", "goal"):
            pose = getattr(self, name)
            if np.ndim(pose) != 1 or len(pose) != 3:
                raise ShapeError(f"PushTask.{name} must be a pose (q_x, q_y, theta_z), got {pose!r}")
            for i, v in enumerate(pose):
                as_real(v, f"PushTask.{name}[{i}]")
        for name in ("force_max", "mu_pusher"):
            if as_real(getattr(self, name), f"PushTask.{name}") < 0:
                raise MCPInputError(f"PushTask.{name} must be >= 0, got {getattr(self, name)!r}")
        if np.ndim(self.contact_range) != 1 or len(self.contact_range) != 2:
            raise ShapeError(f"PushTask.contact_range must be (low, high), got {self.contact_range!r}")
        lo, hi = (as_real(v, "PushTask.contact_range") for v in self.contact_range)
        W = float(np.max(self.params.patch[:, 1]) - np.min(self.params.patch[:, 1]))
        if not (-W / 2 <= lo <= hi <= W / 2):
            raise MCPInputError(f"PushTask.contact_range must lie on the edge [-{W / 2}, {W / 2}]")

    @property
    def edge_x(self) -> float:
        """Body-frame x of the left edge."""
        return float(np.min(self.params.patch[:, 0]))


def pushing_model(task: PushTask) -> ComplementarityECPStep:
    r"""The complementarity ECP step pushed by an :class:`~mcpkit.models.ecp.params.EdgePusher` on
    the left edge: controls :math:`(f_n, f_t)`, design :math:`\theta_c`."""
    return ComplementarityECPStep(task.params, EdgePusher(task.edge_x))


def pushing_step_spec(task: PushTask) -> StepSpec:
    """The :class:`StepSpec`: state ``(q_x, q_y, theta_z, v_x, v_y, w_z)``, control ``(f_n, f_t)``,
    design ``theta_c`` (contact height on the left edge); :meth:`StepSpec.from_model` of
    :func:`pushing_model`."""
    return StepSpec.from_model(pushing_model(task))


def pushing_horizon(task: PushTask, spec: StepSpec | None = None) -> Horizon:
    r"""Rest at A to rest at B, :math:`0 \le f_n \le F_{\max}`, :math:`|f_t| \le \mu_p f_n`,
    objective :math:`\sum_k h\|u_k\|^2`, over ``spec`` (default :func:`pushing_step_spec`).

    The MPCC keeps the layout blocked by kind (``Horizon(stage_order=False)``): in stage order
    (measured 2026-11-28, IPOPT's defaults) the second-target multi-start plan of the tests ended
    at f = 0.389 instead of 0.339 with a sticking step at speed 1.9e-6, and with continuation
    N = 200 ended at f = 0.8758851 against 0.8758763 (N = 100: 0.8758774 against 0.8758802)."""
    spec = pushing_step_spec(task) if spec is None else spec
    h, mp = task.params.h, task.mu_pusher
    x0 = np.concatenate([task.start, np.zeros(3)])
    xT = np.concatenate([task.goal, np.zeros(3)])
    cone = PathConstraint(lambda x, u, th: ca.vertcat(u[1] - mp * u[0], -u[1] - mp * u[0]), -math.inf, 0.0)
    return Horizon(
        spec, task.n_steps, x0,
        control_bounds=([0.0, -task.force_max], [task.force_max, task.force_max]),
        design_bounds=task.contact_range,
        terminal_bounds=(xT, xT),
        stage_cost=lambda x, u, th, z, k: h * (u[0] ** 2 + u[1] ** 2),
        path=[cone], stage_order=False,  # see the docstring
    )  # fmt: skip


def ecp_simulator(task: PushTask) -> Any:
    """``simulate(U, theta) -> states`` with the model's own step map and per-step MCP solves:
    :func:`pushing_model` bound to the planned controls and design (``with_inputs``) and run by
    :func:`run_ecp`. With ``deadline`` (a ``time.perf_counter()`` value, given by
    :meth:`~mcpkit.mpec.Horizon.solve` under a time limit) no step starts after it; the rows not
    simulated stay NaN, which the planner reports as a re-simulation that did not fit."""
    x0 = np.concatenate([task.start, np.zeros(3)])

    def run(U: np.ndarray, theta: np.ndarray, deadline: float | None = None) -> np.ndarray:
        model = pushing_model(task).with_inputs(U, theta)
        return run_ecp(model, x0, task.n_steps * task.params.h, tol=1e-10, deadline=deadline).states

    return run


@dataclass(frozen=True)
class PushStart:
    r"""One initial guess: push straight (:math:`f_n = c\,\mu m g`, :math:`f_t = 0`) at contact
    height :math:`\theta_c^0` for the first fraction :math:`a` of the horizon, nothing afterwards.

    Attributes
    ----------
    fraction
        :math:`a \in (0, 1]` (``1``: a constant push over the whole horizon).
    magnitude
        :math:`c \ge 0` in multiples of the table friction :math:`\mu m g` (``0``: no push, the
        guess is the slider at rest).
    contact
        Initial design :math:`\theta_c^0` [m] (clipped to the task's contact range).
    """

    fraction: float = 1.0
    magnitude: float = 1.5
    contact: float = 0.0

    def __post_init__(self) -> None:
        try:
            a, c, th = float(self.fraction), float(self.magnitude), float(self.contact)
        except (TypeError, ValueError):
            raise MCPInputError(f"PushStart needs real numbers, got {self!r}") from None
        if not (0 < a <= 1) or not math.isfinite(c) or c < 0 or not math.isfinite(th):
            raise MCPInputError(
                f"PushStart needs fraction in (0, 1], magnitude >= 0 and a finite contact, got {self!r}"
            )

    @property
    def label(self) -> str:
        """Short name, e.g. ``"1.5 μmg, first 25%, θc0 = 0 mm"``."""
        return f"{self.magnitude:g} μmg, first {self.fraction:.0%}, θc0 = {1000 * self.contact:g} mm"

    def controls(self, task: PushTask) -> np.ndarray:
        """The guess controls ``(N, 2)``."""
        P = task.params
        U = np.zeros((task.n_steps, 2))
        U[: max(1, int(task.n_steps * self.fraction)), 0] = self.magnitude * P.mu * P.m * P.g
        return U

    def design(self, task: PushTask) -> np.ndarray:
        """The guess design :math:`(\\theta_c^0)`, clipped to ``task.contact_range``."""
        lo, hi = task.contact_range
        return np.array([min(max(float(self.contact), lo), hi)])


DEFAULT_STARTS: tuple[PushStart, ...] = (
    PushStart(1.0, 0.0),
    PushStart(1.0, 1.0),
    PushStart(1.0, 1.5),
    PushStart(0.25, 1.5),
    PushStart(1 / 3, 2.0),
    PushStart(0.5, 1.2),
)
"""The deterministic starts of :func:`plan_pushing`: at rest, constant pushes at 1 and 1.5
:math:`\\mu m g`, and three push-then-coast pulses (the guesses measured in
``docs/mpec_planning.md``)."""


def contact_modes(res: HorizonResult, tol: float = 1e-6) -> np.ndarray:
    r"""Sliding flags of the plan's steps: :math:`\sigma_k > \text{tol}` (slip speed of the ECP).

    With :math:`\sigma_k = 0` the complementarity step forces the velocity after the step to zero
    (stick or rest), so every step that ends in motion slides, and a plan from rest at A to rest at
    B :math:`\ne A` has at least one sliding step and (its last) at least one sticking step.
    """
    tol = float(tol)
    if not math.isfinite(tol) or tol < 0:
        raise MCPInputError(f"tol must be finite and >= 0, got {tol!r}")
    return res.block("sigma")[:, 0] > tol


@dataclass(repr=False)
class PushAttempt(OnePart):
    """One horizon solve of :func:`plan_pushing` (an :class:`~mcpkit.solving.result.Outcome` through its
    :class:`HorizonResult`).

    Attributes
    ----------
    start_index, start
        Which :class:`PushStart` the attempt descends from.
    restart
        ``0``: from the start's forward simulation; ``r >= 1``: the r-th re-seed from the forward
        simulation of the previous attempt's planned controls.
    result
        The attempt's :class:`HorizonResult` (MPCC solve and re-simulation check).
    wall_s
        Wall time of the attempt (guess simulation, solve, re-simulation).
    n_slide, n_stick
        Contact modes of the planned steps (:func:`contact_modes`).
    """

    start_index: int
    start: PushStart
    restart: int
    result: HorizonResult
    wall_s: float
    n_slide: int
    n_stick: int

    @property
    def part(self) -> HorizonResult:
        """The verdict's one part: the horizon (solved and reproduced by re-simulation)."""
        return self.result

    @property
    def objective(self) -> float:
        """Planned objective :math:`\\sum_k h\\|u_k\\|^2`."""
        return float(self.result.objective)

    @property
    def complementarity(self) -> float:
        """Complementarity residual of the MPCC solve."""
        return float(self.result.mpcc.comp_residual)

    @property
    def violation(self) -> float:
        """Constraint violation of the MPCC solve."""
        return float(self.result.mpcc.constraint_violation)

    @property
    def max_deviation(self) -> float:
        """Re-simulation deviation."""
        return float(self.result.max_deviation)

    def summary(self) -> dict[str, Any]:
        """:data:`~mcpkit.solving.result.RESULT_KEYS`, then the start, residuals, deviation and modes."""
        out = summary_head("push_attempt", self, self.wall_s)
        out.update({
            "start_index": self.start_index, "start": self.start.label, "restart": self.restart,
            "objective": _num(self.objective), "comp_residual": _num(self.complementarity),
            "constraint_violation": _num(self.violation), "mpcc_status": self.result.mpcc.termination.value,
            "max_resim_deviation": _num(self.max_deviation), "n_slide": self.n_slide, "n_stick": self.n_stick,
        })  # fmt: skip
        return out


def _num(v: float) -> float | None:
    return float(v) if math.isfinite(v) else None


@dataclass(repr=False)
class PushingPlan(FromParts):
    """Result of :func:`plan_pushing`: the best reproduced plan and every attempt (an
    :class:`~mcpkit.solving.result.Outcome`).

    Its verdict is the winning attempt's (:func:`~mcpkit.solving.result.verdict_of`); with no winner,
    every attempt is a failed part, so the plan is not solved and the message names the first
    attempt's reason.

    Attributes
    ----------
    task, horizon
        The task and its (once-built) :class:`Horizon`.
    best
        The :class:`HorizonResult` with the lowest objective among the attempts that are solved
        and reproduced by re-simulation; ``None`` when no attempt is.
    best_attempt
        Index of that attempt in :attr:`attempts` (``-1`` when none).
    attempts
        All attempts in the order they ran.
    wall_s
        Total wall time.
    time_ran_out
        ``time_limit`` ended the plan before an attempt that was due could start.
    """

    task: PushTask
    horizon: Horizon
    best: HorizonResult | None
    best_attempt: int
    attempts: list[PushAttempt]
    wall_s: float
    time_ran_out: bool = False

    part_name = "attempt"

    @property
    def termination(self) -> Termination:
        """``TIME_LIMIT`` when the time limit ran out before any attempt; else from the parts."""
        if not self.attempts and self.time_ran_out:
            return Termination.TIME_LIMIT
        return super().termination

    @property
    def parts(self) -> list[PushAttempt]:
        """The winning attempt, or every attempt when none won."""
        return [self.attempts[self.best_attempt]] if self.best_attempt >= 0 else list(self.attempts)

    @property
    def message(self) -> str:
        """The winner (attempt, start, objective and its message), or why no attempt won."""
        if not self.attempts and self.time_ran_out:
            return (
                f"no attempt ran: the time limit ran out first ({self.wall_s:.3g} s); termination time_limit"
            )
        if not self.solved:
            return super().message
        a = self.attempts[self.best_attempt]
        return (
            f"best of {len(self.attempts)} attempts: attempt {self.best_attempt} (start {a.start.label}, "
            f"re-seed {a.restart}), objective {a.objective:.6g}: {a.message}"
        )

    def failed_starts(self) -> list[PushAttempt]:
        """The last attempt of every start that never produced a solved plan (why it failed)."""
        last: dict[int, PushAttempt] = {}
        good = {a.start_index for a in self.attempts if a.solved}
        for a in self.attempts:
            if a.start_index not in good:
                last[a.start_index] = a
        return list(last.values())

    def summary(self) -> dict[str, Any]:
        """:data:`~mcpkit.solving.result.RESULT_KEYS`, best objective and design, per-attempt records."""
        b = self.best
        out = summary_head("pushing_plan", self, self.wall_s)
        out.update({
            "goal": list(self.task.goal),
            "n_steps": self.task.n_steps,
            "objective": float(b.objective) if b is not None else math.nan,
            "theta_c_m": float(b.design[0]) if b is not None else math.nan,
            "max_resim_deviation": float(b.max_deviation) if b is not None else math.nan,
            "best_attempt": self.best_attempt,
            "n_attempts": len(self.attempts),
            "n_starts_solved": len({a.start_index for a in self.attempts if a.solved}),
            "attempts": [a.summary() for a in self.attempts],
        })  # fmt: skip
        return out


def plan_pushing(
    task: PushTask | None = None,
    starts: Sequence[PushStart] = DEFAULT_STARTS,
    *,
    restarts: int = 2,
    deviation_tol: float = 1e-5,
    time_limit: float | None = None,
    attempt_time_limit: float | None = 20.0,
    total_time_limit: float | None = None,
    **options: Any,
) -> PushingPlan:
    r"""Deterministic multi-start with re-seeding; the best plan that the simulator reproduces.

    For every start :math:`s` in ``starts``: solve the horizon from the forward simulation of
    :meth:`PushStart.controls` (:meth:`Horizon.solve`, re-simulated with :func:`ecp_simulator`);
    while the attempt is not solved and fewer than ``restarts`` re-seeds were made, solve again
    from the forward simulation of that attempt's planned controls and design (a point where every
    step's complementarity holds exactly, so the homotopy restarts from a physical trajectory near
    the failed plan). The winner is the solved attempt of lowest objective
    :math:`\sum_k h\|u_k\|^2`; a plan whose re-simulation deviates by more than ``deviation_tol``
    is never a winner.

    Parameters
    ----------
    task
        The task (default :class:`PushTask`).
    starts
        The starts, tried in order (default :data:`DEFAULT_STARTS`).
    restarts
        Re-seeds per failed start (``>= 0``).
    deviation_tol
        Re-simulation tolerance on :math:`\max_{k,j}|x^{\rm sim}_{k,j} - x^{\rm plan}_{k,j}|`.
    time_limit
        Wall-clock limit of the whole plan [s], as for every planner (``None``: none beyond the
        attempts'): no attempt starts after it, and each gets at most what is left of it.
    attempt_time_limit
        Wall-clock limit of each attempt (MPCC solve and re-simulation) [s] (``None``: none
        beyond ``time_limit``). Both limits are checked by
        :func:`~mcpkit.solving.options.time_limit_seconds` before anything is built.
    total_time_limit
        The former name of ``time_limit`` (in earlier versions ``time_limit`` was each attempt's
        limit, so ``time_limit=4`` could run for minutes over the starts); give one of the two.
    **options
        :class:`~mcpkit.mpcc.MPCCSolver` options; by default ``fallback_methods=()``: a
        failed Scholtes homotopy is re-seeded instead of re-run with other reformulations, which
        is cheaper (measured in ``docs/mpec_planning.md``).
    """
    task = PushTask() if task is None else task
    starts = list(starts)
    if not starts or not all(isinstance(s, PushStart) for s in starts):
        raise MCPInputError("starts must be a non-empty sequence of PushStart")
    as_count(restarts, "restarts", 0)
    if time_limit is not None and total_time_limit is not None:
        raise MCPInputError(
            "give time_limit (the whole plan's limit) or its former name, total_time_limit; not both"
        )
    whole = time_limit_seconds(time_limit if total_time_limit is None else total_time_limit)
    each = time_limit_seconds(attempt_time_limit, "attempt_time_limit")
    t_all = time.perf_counter()
    hz = pushing_horizon(task)
    sim = ecp_simulator(task)
    options.setdefault("fallback_methods", ())
    end = None if whole is None else t_all + whole
    attempts: list[PushAttempt] = []
    ran_out = False
    for i, st in enumerate(starts):
        U0, th0 = st.controls(task), st.design(task)
        for r in range(restarts + 1):
            t = time.perf_counter()
            left = each if end is None else (end - t if each is None else min(each, end - t))
            if left is not None and left <= 0:
                ran_out = True
                break
            options["time_limit"] = left
            res = hz.solve(U0, th0, simulator=sim, deviation_tol=deviation_tol, **options)
            slide = contact_modes(res)
            attempts.append(
                PushAttempt(i, st, r, res, time.perf_counter() - t, int(slide.sum()), int((~slide).sum()))
            )
            if res.solved:
                break
            U0 = np.clip(res.controls, [0.0, -task.force_max], task.force_max)
            th0 = np.clip(res.design, *task.contact_range)
    good = [k for k, a in enumerate(attempts) if a.solved]
    best = min(good, key=lambda k: attempts[k].objective) if good else -1
    return PushingPlan(
        task, hz, attempts[best].result if good else None, best, attempts, time.perf_counter() - t_all,
        time_ran_out=ran_out,
    )  # fmt: skip


#: The short horizon :math:`N_s` of :func:`solve_pushing`'s continuation. Measured 2026-11-27
#: (``bench_horizon_length.py --family pushing``, whole call, 90 s): with :math:`N_s = 25`,
#: N = 50 / 100 / 200 / 400 took 11.2 / 16.4 / 20.7 / 16.6 s (without the continuation 20.9 /
#: 29.7 / 21.7 s / not solved); with :math:`N_s = 30` 48.1 / 27.0 / 75.5 s at N = 100 / 200 /
#: 400: the long solve's time depends on which short plan it starts from.
CONTINUATION_STEPS = 25


PUSHING_REFINE = RefineOptions(iteration_factor=6.0, large_iteration_factor=3.0)
"""The B-stationarity refinement of :func:`solve_pushing`'s plans (``refine=`` of the caller
wins): three times the default budgets relative to the homotopy's IPOPT iterations. With the defaults the
refinement walked down through pieces (each LPEC step switched one pair and lowered f by
0.002-0.017) and was stopped by its budget in a piece NLP, leaving the plans at N = 50 and 200
``not_stationary``. Measured 2026-11-27 (whole calls, 90 s, one run each), N = 25 /
50 / 100 / 200 / 400: all five plans certified S, f = 0.910038 / 0.875878 / 0.875880 / 0.875876
/ 0.875894, 3.6 / 10.6 / 14.4 / 24.0 / 26.8 s; with the defaults (same day, horizon
benchmark) N = 50 and 200 ended ``not_stationary`` at f = 0.875932 / 0.875886, in 10.6 / 25.2 s,
and the others took 4.5 / 15.6 / 27.6 s."""


def solve_pushing(
    task: PushTask | None = None, guess: tuple[float, float] = (1 / 3, 2.0), **options: Any
) -> tuple[HorizonResult, Horizon]:
    """Build and solve the pushing horizon; re-simulate with :func:`run_ecp`.

    Initial guess: push straight (:math:`f_n = c\\,\\mu m g`, :math:`f_t = 0`) at the edge centre
    for the first fraction ``a`` of the horizon, nothing afterwards; ``guess = (a, c)``. The
    MPCC is non-convex (bilinear friction rows) and the homotopy is sensitive to this guess:
    a failed plan is reported (``solved = False``), never hidden. One start only; for several starts
    with re-seeding and the best reproduced plan use :func:`plan_pushing`.

    **Continuation** for long horizons (:math:`N \\ge 2\\,N_s`, :math:`N_s` =
    :data:`CONTINUATION_STEPS`): the task is first planned over :math:`N_s` steps from the guess
    (within a third of ``time_limit``, if given); a plan that reaches B is extended by
    :math:`N - N_s` steps of rest (:math:`u = 0`: the slider stays at rest at B), which is
    complementary at every step and meets the boundary conditions, and the long horizon is
    solved from it with :math:`\\sigma_0` = :data:`~mcpkit.mpec.horizon.TIGHT_SIGMA0` (unless
    ``sigma0`` is given). If the short plan fails, the long horizon starts from the guess.
    The plan's refinement gets :data:`PUSHING_REFINE` unless ``refine`` is given.
    """
    task = PushTask() if task is None else task
    limit_seconds(options)  # a bad limit is a typed error before the build
    t0 = time.perf_counter()
    hz = pushing_horizon(task)
    spent_building(options, t0)
    frac, mag = guess
    try:
        start = PushStart(frac, mag)
    except MCPInputError:
        raise MCPInputError(f"guess must be (fraction in (0, 1], magnitude >= 0), got {guess!r}") from None
    U0, design0 = start.controls(task), np.zeros(1)
    options.setdefault("deviation_tol", 1e-5)
    options.setdefault("refine", PUSHING_REFINE)
    if task.n_steps >= 2 * CONTINUATION_STEPS:
        t1 = time.perf_counter()
        short_options = dict(options)
        limit = limit_seconds(options)
        if limit is not None:
            short_options["time_limit"] = limit / 3
        short, _ = solve_pushing(replace(task, n_steps=CONTINUATION_STEPS), guess, **short_options)
        spent_building(options, t1)  # the short plan's time comes off the long one's limit
        if short.solved:
            rest = np.zeros((task.n_steps - CONTINUATION_STEPS, short.controls.shape[1]))
            U0, design0 = np.vstack([short.controls, rest]), short.design
            options.setdefault("sigma0", TIGHT_SIGMA0)
    res = hz.solve(U0, design0, simulator=ecp_simulator(task), **options)
    return res, hz
