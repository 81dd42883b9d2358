r"""Re-simulating a horizon's plan, and the horizon's verdict.

The planned controls :math:`u_k` and design :math:`\theta` are fed to the per-step MCP solver
(:func:`forward_simulate`, or a user :data:`Simulator`), and the largest state deviation
:math:`\max_{k,j}|x^{\rm sim}_{k,j} - x^{\rm plan}_{k,j}|` is compared with a stated tolerance
(:func:`resimulation_check`). :class:`HorizonResult` follows :class:`mcpkit.solving.result.Outcome`: its
verdict comes from its parts (the MPCC solve and the re-simulation check), so a plan the simulator
does not reproduce is reported as a failure.
"""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mcpkit.errors import MCPInputError
from mcpkit.frontends.solve import Solver
from mcpkit.models.stepping import OnFailure, SimulationResult, simulate
from mcpkit.mpec.step import StepSpec
from mcpkit.solving.options import time_limit_seconds
from mcpkit.solving.result import FromParts, MCPResult, MPCCResult, ToleranceCheck, summary_head

Simulator = Callable[..., np.ndarray]
"""``simulate(U, theta) -> states`` of shape ``(N+1, n_state)`` (NaN rows for failed steps). A
simulator that also takes a keyword ``deadline`` (a ``time.perf_counter()`` value after which no
step starts) is given the planner's deadline (:func:`run_simulator`)."""


def run_simulator(
    simulator: Simulator, controls: np.ndarray, design: np.ndarray, deadline: float | None
) -> np.ndarray:
    """``simulator(controls, design)``, with ``deadline=`` when there is one and the simulator's
    signature takes it (a ``deadline`` parameter or ``**kwargs``)."""
    if deadline is not None:
        try:
            params = inspect.signature(simulator).parameters.values()
        except (TypeError, ValueError):  # builtins and some callables have no signature
            params = []
        if any(p.name == "deadline" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
            return np.asarray(simulator(controls, design, deadline=deadline), dtype=float)
    return np.asarray(simulator(controls, design), dtype=float)


def resimulation_check(
    simulated: np.ndarray, planned: np.ndarray, deviation_tol: float, *, label: str = "re-simulation",
    wall_time_s: float = 0.0,
) -> ToleranceCheck:  # fmt: skip
    r"""Whether a simulation reproduces a plan: :math:`\max_{k,j}|x^{\rm sim}_{k,j} - x^{\rm plan}_{k,j}|
    \le` ``deviation_tol`` (a part of :class:`HorizonResult`'s verdict; no finite value when the
    simulation produced NaN rows)."""
    sim = np.asarray(simulated, dtype=float)
    dev = float(np.max(np.abs(sim - planned))) if np.isfinite(sim).all() else math.inf
    return ToleranceCheck(f"{label} deviation", dev, float(deviation_tol), kind="resimulation",
                          wall_time_s=wall_time_s)  # fmt: skip


@dataclass(repr=False)
class HorizonResult(FromParts):
    """A solved (or failed) horizon and its re-simulation check (an :class:`~mcpkit.solving.result.Outcome`).

    Its parts are the MPCC solve (:attr:`mpcc`) and, when the plan was re-simulated, the
    re-simulation check (:attr:`resim`, :func:`resimulation_check`); ``solved`` and
    ``termination`` come from them (:class:`~mcpkit.solving.result.FromParts`): solved when the
    MPCC met its tolerance AND the re-simulation reproduced the plan.

    Attributes
    ----------
    t
        Times, shape ``(N+1,)``.
    states, controls, design, z
        Planned :math:`x` ``(N+1, n_state)``, :math:`u` ``(N, n_control)``, :math:`\\theta`
        ``(n_design,)`` and step solutions ``(N, n_z)``.
    objective
        Planned objective value.
    mpcc
        The :class:`~mcpkit.solving.result.MPCCResult` of :class:`~mcpkit.mpcc.MPCCSolver`.
    resim_states
        States of the re-simulation of the planned controls, ``(N+1, n_state)``.
    resim
        The re-simulation :class:`~mcpkit.solving.result.ToleranceCheck` (``None``: not
        re-simulated).
    solve_time_s, build_time_s, guess_time_s, resim_time_s
        Wall times of the MPCC solve, the MPCC build, the initial forward simulation and the
        re-simulation.
    coarse
        The plans on coarser grids this one was started from, coarsest first (grid
        continuation, :mod:`mcpkit.mpec.grid_continuation`; empty otherwise).
    """

    t: np.ndarray
    states: np.ndarray
    controls: np.ndarray
    design: np.ndarray
    z: np.ndarray
    objective: float
    mpcc: MPCCResult
    resim_states: np.ndarray
    resim: ToleranceCheck | None
    solve_time_s: float = 0.0
    build_time_s: float = 0.0
    guess_time_s: float = 0.0
    resim_time_s: float = 0.0
    blocks: dict[str, slice] = field(default_factory=dict)
    coarse: tuple[HorizonResult, ...] = ()

    kind = "horizon"
    part_name = "check"

    @property
    def parts(self) -> list[Any]:
        """The verdict's parts: the MPCC solve, then the re-simulation check (when run)."""
        return [self.mpcc] if self.resim is None else [self.mpcc, self.resim]

    @property
    def message(self) -> str:
        """The verdict: residuals and deviation when solved, every failed part's reason otherwise."""
        if not self.solved:
            return self.failures()
        msg = (
            f"plan solved (complementarity {self.mpcc.comp_residual:.1e}, violation "
            f"{self.mpcc.constraint_violation:.1e})"
        )
        if self.resim is not None:
            msg += f" and reproduced ({self.resim.message})"
        return msg

    @property
    def total_iterations(self) -> int:
        """IPOPT iterations of this plan's MPCC solve and of every coarse plan it started from."""
        return int(self.mpcc.iterations) + sum(c.total_iterations for c in self.coarse)

    @property
    def max_deviation(self) -> float:
        """Re-simulation deviation (``nan`` when not re-simulated, ``inf`` when it failed)."""
        if self.resim is None:
            return math.nan
        return float(self.resim.value) if self.resim.value is not None else math.inf

    @property
    def deviation_tol(self) -> float:
        """Re-simulation tolerance (``nan`` when not re-simulated)."""
        return math.nan if self.resim is None else self.resim.tol

    @property
    def wall_time_s(self) -> float:
        """Initial forward simulation, MPCC solve and re-simulation (the build is separate)."""
        return self.guess_time_s + self.solve_time_s + self.resim_time_s

    def block(self, name: str) -> np.ndarray:
        """Per-step values of one step-MCP variable block, shape ``(N, size)``."""
        if name not in self.blocks:
            raise MCPInputError(f"unknown block {name!r}; blocks: {list(self.blocks)}")
        return self.z[:, self.blocks[name]]

    def summary(self) -> dict[str, Any]:
        """:data:`~mcpkit.solving.result.RESULT_KEYS`, then objective, residuals, deviation and times."""
        m = self.mpcc
        out = summary_head(self.kind, self, self.wall_time_s)
        out.update(
            {
                "objective": _num(self.objective),
                "comp_residual": _num(m.comp_residual),
                "constraint_violation": _num(m.constraint_violation),
                "mpcc_status": m.termination.value,
                "max_resim_deviation": _num(self.max_deviation),
                "deviation_tol": _num(self.deviation_tol),
                "solve_time_s": float(self.solve_time_s),
                "build_time_s": float(self.build_time_s),
                "guess_time_s": float(self.guess_time_s),
                "resim_time_s": float(self.resim_time_s),
                "iterations": int(m.iterations),
                "homotopy_steps": int(m.outer_iterations),
                "method": m.method,
                "backend": m.backend,
            }
        )
        return out


def _num(v: float) -> float | None:
    """JSON-ready float (``None`` for NaN and inf)."""
    return float(v) if math.isfinite(v) else None


class _SpecSteps:
    """A :class:`~mcpkit.models.stepping.StepModel` running a :class:`StepSpec` at fixed controls."""

    def __init__(self, spec: StepSpec, controls: np.ndarray, design: np.ndarray) -> None:
        self.spec, self.mcp, self.h = spec, spec.mcp, spec.h
        self.U, self.theta = controls, design

    def parameters(self, k: int, t: float, state: np.ndarray) -> np.ndarray:
        return self.spec.p_value(state, self.U[k], self.theta, t)

    def advance(self, k: int, t: float, state: np.ndarray, result: MCPResult) -> np.ndarray:
        return self.spec.x_next(state, result.z, self.U[k], self.theta, t)


def limit_seconds(options: dict[str, Any]) -> float | None:
    """``options["time_limit"]`` in seconds, ``None`` without a limit (absent, ``None`` or
    ``inf``), checked by :func:`~mcpkit.solving.options.time_limit_seconds`: a planner calls it
    before it builds anything, so that a bool, a string, NaN or a number ``<= 0`` is an
    :class:`~mcpkit.errors.MCPInputError` at once (never turned into a valid limit)."""
    return time_limit_seconds(options.get("time_limit"))


def spent_building(options: dict[str, Any], t0: float) -> None:
    """Take the time since ``t0`` (building a horizon) off ``options["time_limit"]``, if any, so
    that a planner's limit bounds its whole call (at least 1 ms is left for the solve's own
    bookkeeping; a limit that ran out gives a ``time_limit`` result, not an error)."""
    value = limit_seconds(options)
    if value is not None:
        options["time_limit"] = max(value - (time.perf_counter() - t0), 1e-3)


def forward_simulate(
    spec: StepSpec,
    x0: np.ndarray,
    controls: np.ndarray,
    design: np.ndarray,
    *,
    t0: float = 0.0,
    solver: Solver | None = None,
    progress: bool = False,
    on_failure: str | OnFailure = "continue",
    deadline: float | None = None,
    **options: Any,
) -> SimulationResult:
    r"""Simulate :math:`x_{k+1} = \Phi(x_k, z_k, u_k, \theta, t_k)` with one MCP solve per step.

    Runs :func:`mcpkit.models.stepping.simulate` on the spec (one loop and one failure rule for
    every simulator): ``on_failure`` is ``"continue"`` (default) or ``"stop"``; a step without a
    finite point always ends the run (remaining rows NaN). ``options`` go to
    :class:`mcpkit.Solver` (default: CasADi, Scholtes, ``tol=1e-10``); no step starts after
    ``deadline`` (a ``time.perf_counter()`` value). Returns the
    :class:`~mcpkit.models.stepping.SimulationResult` (``states`` ``(N+1, n_state)``, ``z``,
    per-step verdicts).
    """
    nu = spec.n_control
    if nu:
        U = np.asarray(controls, dtype=float).reshape(-1, nu)
    else:
        U = np.zeros((int(np.asarray(controls).shape[0]), 0))
    th = np.asarray(design, dtype=float).reshape(-1)
    opts = {"backend": "casadi", "method": "scholtes", "tol": 1e-10}
    opts.update(options)
    method, backend = opts.pop("method"), opts.pop("backend")
    return simulate(
        _SpecSteps(spec, U, th), x0, U.shape[0], t0=t0, method=method, backend=backend,
        progress=progress, on_failure=on_failure, solver=solver, deadline=deadline, **opts,
    )  # fmt: skip
