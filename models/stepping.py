r"""Time stepping with one MCP per step, and step maps declared once.

A :class:`StepModel` owns a parametric MCP :math:`l \le z \le u \perp F(z; p_k)` whose
parameters :math:`p_k` carry the state at step :math:`k` (positions, velocities, applied
forces, time). :func:`simulate` builds one :class:`mcpkit.Solver` and, for
:math:`k = 0, \dots, N-1`,

1. sets :math:`p_k` from the state :math:`x_k` (:meth:`StepModel.parameters`),
2. solves the MCP warm-started from step :math:`k-1`,
3. advances the state :math:`x_{k+1}` from the solution (:meth:`StepModel.advance`).

Every step's verdict, termination and residual are recorded; a failed step is reported by its
index and is never silently skipped. What happens after a failed step is one rule,
:class:`OnFailure` (``"continue"``, the default, or ``"stop"``), shared with the horizon
simulator :func:`mcpkit.mpec.resimulation.forward_simulate`, which runs through :func:`simulate`.

**Declared once.** A :class:`DeclaredStep` writes its step map a single time, against an array
namespace ``xp`` (:mod:`mcpkit.models.arrays`), with controls :math:`u` and a design
:math:`\theta`:

.. math::
    p = P(x, u, \theta, t) \quad(\text{step\_parameters}),\qquad
    x^+ = \Phi(x, z, u, \theta, t) \quad(\text{step\_update}).

:func:`simulate` evaluates it on NumPy arrays (controls from :meth:`DeclaredStep.with_inputs`);
:meth:`mcpkit.mpec.step.StepSpec.from_model` evaluates the same code once on CasADi symbols
to build a horizon, so no example re-derives a model's dynamics.
"""

from __future__ import annotations

import copy
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np
from tqdm.auto import tqdm

from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError, SolveFailedError
from mcpkit.frontends.solve import Solver
from mcpkit.models.arrays import NUMPY, ArrayNamespace
from mcpkit.problems.arrays import as_count, as_real, refuse_text
from mcpkit.problems.mcp import MCP
from mcpkit.solving.options import Choice
from mcpkit.solving.progress import shows_on
from mcpkit.solving.result import FromParts, MCPResult, Termination, summary_head

__all__ = [
    "DeclaredStep",
    "OnFailure",
    "SimulationResult",
    "StepMap",
    "StepModel",
    "StepOutcome",
    "simulate",
]


class OnFailure(Choice):
    """What a simulator does after a step whose MCP was not solved to tolerance.

    In both modes the failure is recorded (verdict, termination, residual), and a step that
    returns no finite point ends the run (there is no state to advance from).
    """

    CONTINUE = "continue"
    """Advance from the point the solver returned and keep going (the default)."""
    STOP = "stop"
    """End the run at the first failed step; the remaining rows are NaN."""


class StepModel(Protocol):
    """What :func:`simulate` needs from a time-stepping contact model."""

    mcp: MCP
    """The per-step MCP (parameters carry the state)."""
    h: float
    """Time step [s]."""

    def parameters(self, k: int, t: float, state: np.ndarray) -> dict[str, np.ndarray]:
        """Parameter values (by block name) of step ``k`` at time ``t`` from ``state``."""
        ...

    def advance(self, k: int, t: float, state: np.ndarray, result: MCPResult) -> np.ndarray:
        """The state at ``t + h`` from the step's solution."""
        ...


@runtime_checkable
class StepMap(Protocol):
    r"""A step map written once against an array namespace (see the module docstring).

    ``x`` is the state (``n_state``), ``u`` the step's controls (``n_control``), ``theta`` the
    design (``n_design``), ``t`` the step's start time and ``z`` the step MCP's solution; all
    are vectors of the namespace ``xp`` (NumPy arrays or CasADi ``SX``).
    """

    mcp: MCP
    h: float
    n_state: int
    n_control: int
    n_design: int

    def step_parameters(self, xp: ArrayNamespace, x: Any, u: Any, theta: Any, t: Any) -> dict[str, Any]:
        """:math:`P(x, u, \\theta, t)`: values of the MCP's parameter blocks (by name)."""
        ...

    def step_update(self, xp: ArrayNamespace, x: Any, z: Any, u: Any, theta: Any, t: Any) -> Any:
        r""":math:`\Phi(x, z, u, \theta, t)`: the state after the step."""
        ...


_D = TypeVar("_D", bound="DeclaredStep")

StepHook = Callable[[int, float, np.ndarray, Any, Any], None]
"""``on_step(k, t_k, x_k, p_k, result)`` of :func:`simulate` (see there)."""


class DeclaredStep:
    r"""Base of the step models whose map is declared once (:class:`StepMap`), as a :class:`StepModel`.

    Subclasses set :attr:`mcp`, :attr:`h`, :attr:`n_state` (and :attr:`n_control`,
    :attr:`n_design` when they take inputs) and write :meth:`step_parameters` and
    :meth:`step_update` with ``xp`` operations only. :meth:`parameters` and :meth:`advance`
    evaluate them with :data:`~mcpkit.models.arrays.NUMPY` at the controls of step :math:`k`
    (:meth:`with_inputs`), so simulation and horizons share one definition.
    """

    mcp: MCP
    h: float
    n_state: int = 0
    n_control: int = 0
    n_design: int = 0
    _controls: np.ndarray | None = None
    _design: np.ndarray | None = None
    _constant_values: dict[str, Any] | None = None

    # -- named physical constants (for gradients through horizons) ---------------------------
    def constants(self) -> dict[str, Any]:
        r"""The model's physical constants :math:`c` by name (numbers or arrays), default none.

        A model lists here the constants its step map reads through :meth:`constant` (in
        :meth:`step_parameters` *and* :meth:`step_update`), so that
        :func:`~mcpkit.models.stepping_gradient.simulate_with_gradient` can differentiate a whole
        simulation by them (the ECP slider: ``mu``, ``m``, ``I_z`` ...; Stewart–Trinkle: ``mu``).
        """
        return {}

    def constant(self, name: str) -> Any:
        """The value the step map uses for constant ``name``: set by :meth:`with_constants`, else
        :meth:`constants`."""
        if self._constant_values is not None and name in self._constant_values:
            return self._constant_values[name]
        return self.constants()[name]

    def with_constants(self: _D, **values: Any) -> _D:
        """A copy of this model whose step map reads ``values`` for the named constants.

        The values are numbers (a model with another friction coefficient, sharing the step MCP
        and its solver) or CasADi symbols (how the gradients evaluate the step map's Jacobians).
        """
        known = self.constants()
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise MCPInputError(
                f"{type(self).__name__} has no constants {unknown}; it declares {sorted(known)}"
            )
        out = copy.copy(self)
        out._constant_values = {**(self._constant_values or {}), **values}
        return out

    # -- the map (subclasses) --------------------------------------------------------------
    def step_parameters(self, xp: ArrayNamespace, x: Any, u: Any, theta: Any, t: Any) -> dict[str, Any]:
        """:math:`P(x, u, \\theta, t)` (see :class:`StepMap`)."""
        raise NotImplementedError

    def step_update(self, xp: ArrayNamespace, x: Any, z: Any, u: Any, theta: Any, t: Any) -> Any:
        r""":math:`\Phi(x, z, u, \theta, t)` (see :class:`StepMap`)."""
        raise NotImplementedError

    def check_state(self, state: np.ndarray) -> np.ndarray:
        """The state as ``n_state`` finite floats (typed errors otherwise)."""
        x = np.asarray(state, dtype=float).reshape(-1)
        if x.shape != (self.n_state,):
            raise ShapeError(f"state must have {self.n_state} entries, got shape {x.shape}")
        if not np.isfinite(x).all():
            raise NonFiniteError(f"state contains NaN or inf: {x}")
        return x

    # -- inputs ------------------------------------------------------------------------------
    def with_inputs(self: _D, controls: Any = None, design: Any = None) -> _D:
        """A copy of this model that applies ``controls[k]`` in step ``k`` and the design ``design``.

        ``controls`` has shape ``(N, n_control)`` (one row per step, piecewise constant; a 1-D
        array when ``n_control == 1``), ``design`` shape ``(n_design,)``. The copy shares the
        step MCP (one :class:`mcpkit.Solver` serves both).
        """
        out = copy.copy(self)
        nu, nth = self.n_control, self.n_design
        if controls is None:
            if nu:
                raise MCPInputError(f"{type(self).__name__} takes {nu} controls per step; pass controls")
            out._controls = None
        else:
            out._controls = control_table(controls, nu, "N")
        if design is None:
            if nth:
                raise MCPInputError(f"{type(self).__name__} takes a design of {nth} values; pass design")
            out._design = None
        else:
            refuse_text(design, "design")
            th = np.asarray(design, dtype=float).reshape(-1)
            if th.shape != (nth,):
                raise ShapeError(f"design must have {nth} values, got shape {th.shape}")
            if not np.isfinite(th).all():
                raise NonFiniteError("design contains NaN or inf")
            out._design = th.copy()
        return out

    @property
    def control_rows(self) -> int | None:
        """Steps the bound controls cover (``None``: no controls, or none bound yet)."""
        if self.n_control == 0 or getattr(self, "_controls", None) is None:
            return None
        return int(self._controls.shape[0])

    def inputs(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``(u_k, theta)`` of step ``k`` (empty arrays for a model without inputs)."""
        if self.n_control == 0:
            u = np.zeros(0)
        elif self._controls is None:
            raise MCPInputError(
                f"{type(self).__name__} takes {self.n_control} controls per step; bind them with "
                "with_inputs(controls, design)"
            )
        elif not 0 <= k < self._controls.shape[0]:
            raise ShapeError(f"no control for step {k}: {self._controls.shape[0]} rows were given")
        else:
            u = self._controls[k]
        if self.n_design == 0:
            th = np.zeros(0)
        elif self._design is None:
            raise MCPInputError(
                f"{type(self).__name__} takes a design of {self.n_design} values; bind it with with_inputs"
            )
        else:
            th = self._design
        return u, th

    # -- StepModel ---------------------------------------------------------------------------
    def parameters(self, k: int, t: float, state: np.ndarray) -> dict[str, Any]:
        """:meth:`step_parameters` on NumPy at step ``k``'s inputs."""
        x = self.check_state(state)
        u, th = self.inputs(k)
        return self.step_parameters(NUMPY, x, u, th, t)

    def advance(self, k: int, t: float, state: np.ndarray, result: MCPResult) -> np.ndarray:
        """:meth:`step_update` on NumPy at the step's solution."""
        x = self.check_state(state)
        u, th = self.inputs(k)
        z = np.asarray(result.z, dtype=float)
        return np.asarray(self.step_update(NUMPY, x, z, u, th, t), dtype=float).reshape(-1)


@dataclass(frozen=True)
class StepOutcome:
    """The verdict of one step of a simulation (a part of :class:`SimulationResult`)."""

    k: int
    """Step index."""
    t: float
    """Start time of the step."""
    solved: bool
    """The step's MCP met its tolerance."""
    termination: Termination
    """Why the step's solve stopped (``INTERRUPTED`` when the run ended before the step)."""
    natural_residual: float
    """The step's natural residual (NaN when not run)."""
    ran: bool = True
    """False for a step after the run ended."""
    note: str = ""
    """Which measure failed and by how much, from the step result's ``failure_note`` when it has
    one (a Stewart–Trinkle step whose MCP met its residual but whose Coulomb residual did not)."""

    @property
    def message(self) -> str:
        """One line: time, termination and residual, and the failed measure when known."""
        if not self.ran:
            return f"t={self.t:.6g}: not run (the simulation ended before this step)"
        return (
            f"t={self.t:.6g}: termination {self.termination.value}, natural residual "
            f"{self.natural_residual:.3e}" + (f"; {self.note}" if self.note else "")
        )

    def summary(self) -> dict[str, Any]:
        """:data:`~mcpkit.solving.result.RESULT_KEYS`, then the step index, time and residual."""
        out = summary_head("step", self, 0.0)
        out.update(k=self.k, t=self.t, natural_residual=_finite_or_none(self.natural_residual))
        return out


@dataclass(repr=False)
class SimulationResult(FromParts):
    """Arrays of a simulation, one row per step, with per-step verdicts (an ``Outcome``).

    ``solved``, ``termination`` and ``message`` come from the per-step verdicts
    (:class:`~mcpkit.solving.result.FromParts` over :attr:`steps`): solved when every step
    was; the termination and message name the first failed step.

    Attributes
    ----------
    t
        Times, shape ``(N+1,)``.
    states
        States, shape ``(N+1, n_state)``; rows after the run ended are NaN.
    z
        MCP solutions, shape ``(N, n)``.
    step_solved
        Per-step verdict (natural residual met the tolerance).
    natural_residual
        Per-step natural residual.
    step_termination
        Per-step :class:`~mcpkit.solving.result.Termination` (``None`` for steps not run).
    iterations, step_time_s
        Per-step inner iterations and wall time of the MCP solve (the model's own work of
        setting up parameters and advancing the state is not included).
    blocks
        Block name -> slice into a row of :attr:`z`.
    method, backend
        The per-step solver's route.
    on_failure
        The failure rule the run used.
    wall_time_s
        Wall time of the whole run.
    """

    t: np.ndarray
    states: np.ndarray
    z: np.ndarray
    step_solved: np.ndarray
    natural_residual: np.ndarray
    step_termination: list[Termination | None]
    iterations: np.ndarray
    step_time_s: np.ndarray
    blocks: dict[str, slice] = field(default_factory=dict)
    method: str = ""
    backend: str = ""
    on_failure: OnFailure = OnFailure.CONTINUE
    wall_time_s: float = 0.0
    step_notes: list[str] = field(default_factory=list)
    """Per-step :attr:`StepOutcome.note` (empty, or ``""`` for a step without one)."""

    kind = "simulation"
    part_name = "step"

    @property
    def parts(self) -> list[StepOutcome]:
        """The verdict's parts: :attr:`steps`."""
        return self.steps

    @property
    def steps(self) -> list[StepOutcome]:
        """One :class:`StepOutcome` per step (the parts of the verdict)."""
        out = []
        for k in range(self.step_solved.size):
            term = self.step_termination[k]
            out.append(
                StepOutcome(
                    k, float(self.t[k]), bool(self.step_solved[k]),
                    Termination.INTERRUPTED if term is None else term,
                    float(self.natural_residual[k]), ran=term is not None,
                    note=self.step_notes[k] if k < len(self.step_notes) else "",
                )
            )  # fmt: skip
        return out

    @property
    def failed_steps(self) -> np.ndarray:
        """Indices of the steps whose MCP was not solved to tolerance (including steps not run)."""
        return np.flatnonzero(~self.step_solved)

    def block(self, name: str) -> np.ndarray:
        """Per-step values of one variable block, shape ``(N, size)``."""
        return self.z[:, self.blocks[name]]

    def raise_if_failed(self) -> SimulationResult:
        """Raise :class:`~mcpkit.errors.SolveFailedError` naming the failed steps, if any."""
        bad = self.failed_steps
        if bad.size:
            raise SolveFailedError(f"{self.message}; failed steps: {bad[:20].tolist()}", result=self)
        return self

    def summary(self) -> dict[str, Any]:
        """:data:`~mcpkit.solving.result.RESULT_KEYS`, then step counts, residuals, times and the route."""
        out = summary_head(self.kind, self, self.wall_time_s)
        out.update(
            {
                "steps": int(self.step_solved.size),
                "solved_steps": int(self.step_solved.sum()),
                "failed_steps": self.failed_steps[:50].tolist(),
                "max_natural_residual": float(np.nanmax(self.natural_residual, initial=0.0)),
                "mean_step_time_s": float(np.mean(self.step_time_s)) if self.step_time_s.size else 0.0,
                "total_time_s": float(np.sum(self.step_time_s)),
                "method": self.method,
                "backend": self.backend,
                "on_failure": self.on_failure.value,
            }
        )
        return out


def control_table(controls: Any, nu: int, rows: str = "N") -> np.ndarray:
    """``controls`` as a finite ``(rows, nu)`` array (a vector when ``nu == 1``), or a typed error:
    :class:`~mcpkit.errors.MCPInputError` for text, :class:`~mcpkit.errors.ShapeError`,
    :class:`~mcpkit.errors.NonFiniteError`."""
    refuse_text(controls, "controls")
    U = np.array(controls, dtype=float)
    if U.ndim == 1 and nu == 1:
        U = U.reshape(-1, 1)
    if U.ndim != 2 or U.shape[1] != nu:
        raise ShapeError(f"controls must have shape ({rows}, {nu}), got {U.shape}")
    if not np.isfinite(U).all():
        raise NonFiniteError("controls contain NaN or inf")
    return U


def _finite_or_none(v: float) -> float | None:
    return float(v) if math.isfinite(v) else None


def simulate(
    model: StepModel,
    x0: np.ndarray,
    n_steps: int,
    *,
    t0: float = 0.0,
    method: str = "auto",
    backend: str = "auto",
    progress: bool | str | None = None,
    on_failure: str | OnFailure = "continue",
    solver: Solver | None = None,
    deadline: float | None = None,
    on_step: StepHook | None = None,
    **options: Any,
) -> SimulationResult:
    """Run ``n_steps`` steps of ``model`` from state ``x0``.

    Parameters
    ----------
    model
        A :class:`StepModel` (for example a :class:`DeclaredStep`, bound to its controls with
        :meth:`DeclaredStep.with_inputs` when it takes any).
    x0
        Initial state.
    n_steps
        Number of steps (``>= 1``).
    t0
        Initial time.
    method, backend, **options
        Passed to :class:`mcpkit.Solver` (built once for the whole run), or to the model's own
        ``make_solver`` when it has one (Stewart–Trinkle steps: each step is then judged on its
        Coulomb residual too, see :class:`~mcpkit.models.stewart_trinkle.step.StepSolver`).
    progress
        A ``tqdm`` bar on stderr: ``True`` draws it when stderr is a terminal or a notebook (the
        rule of :func:`mcpkit.solving.progress.shows_on`, as for solves), ``"always"`` draws it
        anyway, ``False`` never; ``None`` (default) is ``True`` for more than 200 steps.
    on_failure
        :class:`OnFailure`: ``"continue"`` (default) advances from the point the solver returned
        after a failed step; ``"stop"`` ends the run there (remaining rows NaN). Failures are
        recorded either way, and a step without a finite point always ends the run.
    solver
        A pre-built solver for ``model.mcp`` (for re-use across runs).
    deadline
        ``time.perf_counter()`` value after which no further step starts (``None``: none): the
        remaining rows stay NaN and the first step not run is noted ``"time limit"``.
    on_step
        ``on_step(k, t_k, x_k, p_k, result)``, called after each step's solve, before the state
        advances (``p_k`` as given to the solver); gradients through the run
        (:func:`~mcpkit.models.stepping_gradient.simulate_with_gradient`) use it. An exception it
        raises ends the run and propagates.
    """
    rule = OnFailure.parse(on_failure)
    x, t0 = _checked_start(model, x0, n_steps, t0, deadline)
    t_run = time.perf_counter()
    if solver is None:
        make = getattr(model, "make_solver", None)  # a model with its own physical verdict
        solver = (
            make(method, backend, **options)
            if callable(make)
            else Solver(model.mcp, backend=backend, method=method, **options)
        )
    N = int(n_steps)
    run = _Rows(N, model.mcp.n, x, t0 + model.h * np.arange(N + 1))
    show = shows_on(sys.stderr, (N > 200) if progress is None else progress)
    bar = tqdm(range(N), disable=not show, desc=type(model).__name__, unit="step", leave=False)
    for k in bar:
        if deadline is not None and time.perf_counter() >= deadline:
            run.notes[k] = "time limit"
            break
        tk = float(run.t[k])
        pk = model.parameters(k, tk, run.states[k])
        t_start = time.perf_counter()
        res = solver.solve(p=pk)
        run.record(k, res, time.perf_counter() - t_start)
        if not res.solved:
            bar.set_postfix(failed=int((~run.solved[: k + 1]).sum()))
            if rule is OnFailure.STOP or not np.isfinite(res.z).all():
                break
        if on_step is not None:
            on_step(k, tk, run.states[k], pk, res)
        run.states[k + 1] = model.advance(k, tk, run.states[k], res)
    bar.close()
    return run.result(model, rule, time.perf_counter() - t_run)


def _checked_start(
    model: StepModel, x0: Any, n_steps: int, t0: float, deadline: float | None
) -> tuple[np.ndarray, float]:
    """``(x0, t0)`` of :func:`simulate`, checked with ``n_steps``, ``deadline`` and the model's
    rows of controls (a typed error each)."""
    as_count(n_steps, "n_steps")
    refuse_text(x0, "x0")
    x = np.asarray(x0, dtype=float).reshape(-1)
    if not np.isfinite(x).all():
        raise MCPInputError("initial state x0 contains NaN or inf")
    t0 = as_real(t0, "t0")
    if deadline is not None and (
        isinstance(deadline, bool)
        or not isinstance(deadline, (int, float, np.integer, np.floating))
        or math.isnan(deadline)
    ):
        raise MCPInputError(f"deadline must be a time.perf_counter() value or None, got {deadline!r}")
    rows = getattr(model, "control_rows", None)
    if isinstance(rows, int) and rows < n_steps:
        raise ShapeError(f"{n_steps} steps need {n_steps} rows of controls; {rows} were given")
    return x, t0


class _Rows:
    r"""The rows of a :func:`simulate` run (NaN until a step fills them): states
    :math:`x_0, \dots, x_N` at times ``t``, and per step its point, verdict and cost."""

    def __init__(self, N: int, n: int, x0: np.ndarray, t: np.ndarray) -> None:
        self.t = t
        self.states = np.full((N + 1, x0.size), np.nan)
        self.states[0] = x0
        self.Z = np.full((N, n), np.nan)
        self.solved = np.zeros(N, dtype=bool)
        self.resid = np.full(N, np.nan)
        self.term: list[Termination | None] = [None] * N
        self.iters = np.zeros(N, dtype=int)
        self.times = np.zeros(N)
        self.notes = [""] * N
        self.route = ("", "")

    def record(self, k: int, res: Any, seconds: float) -> None:
        """Step ``k``'s result, solved in ``seconds``."""
        self.times[k] = seconds
        self.route = (res.method, res.backend)
        self.Z[k] = res.z
        self.solved[k] = res.solved
        self.resid[k] = res.natural_residual
        self.term[k] = res.termination
        self.iters[k] = res.iterations
        if not res.solved:
            self.notes[k] = str(getattr(res, "failure_note", "") or "")

    def result(self, model: StepModel, rule: OnFailure, wall: float) -> SimulationResult:
        """The :class:`SimulationResult` of these rows."""
        return SimulationResult(
            t=self.t,
            states=self.states,
            z=self.Z,
            step_solved=self.solved,
            natural_residual=self.resid,
            step_termination=self.term,
            iterations=self.iters,
            step_time_s=self.times,
            blocks={b.name: b.slice for b in model.mcp.blocks},
            method=self.route[0],
            backend=self.route[1],
            on_failure=rule,
            wall_time_s=wall,
            step_notes=self.notes,
        )
