r"""Whole horizons of complementarity time steps as one MPCC (a boundary-value problem).

A time-stepping contact model takes one MCP per step (seed 004 eqs 9, 15; seed 000 eqs 17-32):
state :math:`x_k`, controls :math:`u_k`, design parameters :math:`\theta` (shared by all steps),
time :math:`t_k = t_0 + kh` and

.. math::

    l \le z_k \le u \ \perp\ F(z_k;\ P(x_k, u_k, \theta, t_k)),\qquad
    x_{k+1} = \Phi(x_k, z_k, u_k, \theta, t_k),

where :math:`P` maps state, control, design and time onto the MCP's parameter blocks. A model
whose step map is declared once (:class:`mcpkit.models.stepping.StepMap`, e.g. the ECP and
Stewart–Trinkle steps) gives its :class:`StepSpec` through :meth:`StepSpec.from_model`: the same
code that the simulator runs on NumPy is evaluated here on CasADi symbols. Instead of
simulating forward and searching over controls without gradients (the Nelder–Mead loop of
seed 004 §4), :class:`Horizon` stacks the :math:`N` steps into the single MPCC

.. math::

    \min_{X}\ &\sum_{k=0}^{N-1} \ell(x_k, u_k, \theta, z_k) + \ell_N(x_N, \theta) \\
    \text{s.t.}\ & x_0 = \bar x_0,\quad x^{\rm T}_{\rm lo} \le x_N \le x^{\rm T}_{\rm up},\quad
        u_{\rm lo} \le u_k \le u_{\rm up},\quad \theta_{\rm lo} \le \theta \le \theta_{\rm up}, \\
    & x_{k+1} - \Phi(x_k, z_k, u_k, \theta, t_k) = 0, \quad
      c_{\rm lo} \le c(x_k, u_k, \theta) \le c_{\rm up},\\
    & F_i(z_k; P_k) - w_{k,i} + v_{k,i} = 0,\quad
      0 \le z_{k,i} - l_i \perp w_{k,i} \ge 0,\quad 0 \le u_i - z_{k,i} \perp v_{k,i} \ge 0,

over :math:`X = (x_0..x_N, u_0..u_{N-1}, \theta, (z_k, w_k, v_k)_{k<N})`. The last line is the
slack form of :class:`mcpkit.lowering.casadi.MCPToMPCC`, applied once to the lowered step MCP and
re-used for every step (the step MPCC is wrapped in a ``casadi.Function`` and called on each
step's variables and :math:`P_k`).

The plan is then **re-simulated**: the planned controls and design are fed to the per-step MCP
solver (:func:`forward_simulate`, or a user simulator such as the model's own
:func:`mcpkit.models.stepping.simulate`), and the largest state deviation
:math:`\max_{k,j}|x^{\rm sim}_{k,j} - x^{\rm plan}_{k,j}|` is compared with a stated tolerance.
:class:`HorizonResult` follows :class:`mcpkit.result.Outcome`: its verdict comes from its parts
(the MPCC solve and the re-simulation check), so a plan the simulator does not reproduce
is reported as a failure (:attr:`HorizonResult.solved`).
"""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import casadi as ca
import numpy as np

from mcpkit import blocks as bx
from mcpkit.errors import BoundsError, MCPInputError, NonFiniteError, ShapeError
from mcpkit.lowering.casadi import CasadiMCP, MCPToMPCC, SlackMap, lower_to_casadi
from mcpkit.models.arrays import CASADI
from mcpkit.models.stepping import OnFailure, SimulationResult, StepMap, simulate
from mcpkit.mpcc import MPCC, MPCCSolver
from mcpkit.printing.expressions import space, sym_shape
from mcpkit.printing.mpcc import casadi_formulas, declaration_parts, slack_segments, step_latex
from mcpkit.problems.arrays import as_float_vector
from mcpkit.problems.mcp import MCP
from mcpkit.problems.segments import Formula, MPCCBlocks, Segment
from mcpkit.result import FromParts, MCPResult, MPCCResult, ToleranceCheck, summary_head
from mcpkit.solve import Solver

__all__ = [
    "Horizon",
    "HorizonResult",
    "PathConstraint",
    "StepSpec",
    "forward_simulate",
    "resimulation_check",
]

ParameterMap = Callable[[ca.SX, ca.SX, ca.SX, ca.SX], dict[str, Any]]
r"""``P(x, u, theta, t) -> {block name: CasADi expression or numbers}`` (missing blocks keep the
MCP's current values)."""

UpdateMap = Callable[..., Any]
r"""``Phi(x, z, u, theta) -> x_next`` or ``Phi(x, z, u, theta, t) -> x_next`` (CasADi expressions)."""

Simulator = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""``simulate(U, theta) -> states`` of shape ``(N+1, n_state)`` (NaN rows for failed steps)."""


def _count(value: Any, what: str, *, minimum: int) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < minimum:
        raise ShapeError(f"{what} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _vector(value: Any, n: int, what: str, *, allow_inf: bool) -> np.ndarray:
    """``value`` broadcast to ``n`` floats; NaN (and inf unless allowed) rejected."""
    return as_float_vector(value, n, what, allow_inf=allow_inf)


def _box(lo: Any, hi: Any, n: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    a = _vector(lo, n, f"{what} lower bound", allow_inf=True)
    b = _vector(hi, n, f"{what} upper bound", allow_inf=True)
    bad = np.flatnonzero(a > b)
    if bad.size:
        raise BoundsError(f"{what}: lower > upper bound at components {bad.tolist()}")
    if np.any(a == math.inf) or np.any(b == -math.inf):
        raise BoundsError(f"{what}: lower bound +inf or upper bound -inf leaves no feasible value")
    return a, b


def _column(expr: Any, what: str) -> ca.SX:
    """A CasADi column from an SX/DM/number/sequence of those."""
    if isinstance(expr, (ca.SX, ca.DM)):
        return ca.vec(ca.SX(expr))
    if isinstance(expr, ca.MX):
        raise MCPInputError(f"{what}: build it from the SX symbols passed in, not MX")
    if isinstance(expr, (int, float, np.integer, np.floating)):
        return ca.SX(float(expr))
    try:
        items = list(np.asarray(expr, dtype=object).reshape(-1))
    except TypeError as exc:
        raise MCPInputError(f"{what}: not a CasADi expression or sequence ({exc})") from exc
    if not items:
        return ca.SX(0, 1)
    return ca.vertcat(*[ca.SX(it) if not isinstance(it, ca.SX) else it for it in items])


@dataclass
class StepSpec:
    r"""One symbolic step: the MCP, its parameter map :math:`P` and the state update :math:`\Phi`.

    Parameters
    ----------
    mcp
        The step MCP :math:`l \le z \le u \perp F(z; p)` (any :class:`mcpkit.MCP`).
    n_state, n_control, n_design
        Sizes of :math:`x_k`, :math:`u_k` and :math:`\theta` (``n_control, n_design >= 0``).
    parameters
        ``P(x, u, theta, t) -> {parameter block name: expression}`` with CasADi SX column
        symbols as arguments. Blocks left out keep the MCP's current (constant) values; unknown
        names raise :class:`~mcpkit.errors.MCPInputError`, wrong sizes
        :class:`~mcpkit.errors.ShapeError`.
    update
        :math:`\Phi(x, z, u, \theta) \to x_{k+1}`, or :math:`\Phi(x, z, u, \theta, t)` for an
        update that depends on the step's start time: a Python callable on SX symbols or a
        ``casadi.Function`` with those four (five) inputs.
    h
        Step length [s] (times are :math:`t_k = t_0 + kh`).
    model
        The step model the spec was built from (:meth:`from_model`), else ``None``.

    Notes
    -----
    A model whose step map is written once against an array namespace gives its spec through
    :meth:`from_model`; the examples build no map by hand.
    """

    mcp: MCP
    n_state: int
    n_control: int
    n_design: int
    parameters: ParameterMap
    update: UpdateMap | ca.Function
    h: float
    model: StepMap | None = field(default=None, repr=False)
    param_fun: ca.Function = field(init=False, repr=False)
    update_fun: ca.Function = field(init=False, repr=False)

    @classmethod
    def from_model(cls, model: StepMap) -> StepSpec:
        r"""The step of a model whose map is declared once (:class:`~mcpkit.models.stepping.StepMap`).

        :math:`P(x, u, \theta, t)` is ``model.step_parameters(CASADI, x, u, theta, t)`` and
        :math:`\Phi(x, z, u, \theta, t)` is ``model.step_update(CASADI, x, z, u, theta, t)``,
        evaluated once on SX symbols: the code :func:`~mcpkit.models.stepping.simulate` runs on
        NumPy, so a horizon and a simulation of the model share one definition. Sizes and ``h``
        come from the model.
        """
        need = ("mcp", "h", "n_state", "n_control", "n_design", "step_parameters", "step_update")
        missing = [a for a in need if not hasattr(model, a)]
        if missing:
            raise MCPInputError(
                f"StepSpec.from_model needs a step model with a declared step map "
                f"(mcpkit.models.stepping.StepMap); {type(model).__name__} lacks {missing}"
            )

        def parameters(x: ca.SX, u: ca.SX, th: ca.SX, t: ca.SX) -> dict[str, Any]:
            return model.step_parameters(CASADI, x, u, th, t)

        def update(x: ca.SX, z: ca.SX, u: ca.SX, th: ca.SX, t: ca.SX) -> Any:
            return model.step_update(CASADI, x, z, u, th, t)

        return cls(
            model.mcp, n_state=model.n_state, n_control=model.n_control, n_design=model.n_design,
            parameters=parameters, update=update, h=model.h, model=model,
        )  # fmt: skip

    def __post_init__(self) -> None:
        if not isinstance(self.mcp, MCP):
            raise MCPInputError(f"StepSpec.mcp must be an mcpkit.MCP, got {type(self.mcp).__name__}")
        self.mcp.validate()
        self.n_state = _count(self.n_state, "n_state", minimum=1)
        self.n_control = _count(self.n_control, "n_control", minimum=0)
        self.n_design = _count(self.n_design, "n_design", minimum=0)
        try:
            h = float(self.h)
        except (TypeError, ValueError):
            raise MCPInputError(f"StepSpec.h must be a number, got {self.h!r}") from None
        if not math.isfinite(h):
            raise NonFiniteError(f"StepSpec.h must be finite, got {self.h!r}")
        if h <= 0:
            raise MCPInputError(f"StepSpec.h must be positive, got {self.h!r}")
        self.h = h
        if not callable(self.parameters):
            raise MCPInputError("StepSpec.parameters must be callable P(x, u, theta, t) -> dict")
        x = ca.SX.sym("x", self.n_state)
        u = ca.SX.sym("u", self.n_control)
        th = ca.SX.sym("theta", self.n_design)
        t = ca.SX.sym("t")
        z = ca.SX.sym("z", self.mcp.n)
        given = self.parameters(x, u, th, t)
        if not isinstance(given, dict):
            raise MCPInputError(f"StepSpec.parameters must return a dict by block name, got {type(given)}")
        blocks = {b.name: b for b in self.mcp.parameter_blocks}
        unknown = sorted(set(given) - set(blocks))
        if unknown:
            raise MCPInputError(
                f"StepSpec.parameters: unknown parameter blocks {unknown}; the MCP declares {list(blocks)}"
            )
        values = self.mcp.parameter_values
        parts = []
        for name, b in blocks.items():
            if name in given:
                col = _column(given[name], f"parameter block {name!r}")
                if col.numel() != b.size:
                    raise ShapeError(f"parameter block {name!r} has {b.size} entries, P gave {col.numel()}")
                parts.append(col)
            else:
                parts.append(ca.SX(ca.DM(values[b.slice])))
        p = ca.vertcat(*parts) if parts else ca.SX(0, 1)
        self.param_fun = ca.Function("horizon_P", [x, u, th, t], [p], ["x", "u", "theta", "t"], ["p"])
        if isinstance(self.update, ca.Function):
            f = self.update
            want = [self.n_state, self.mcp.n, self.n_control, self.n_design, 1]
            if f.n_in() not in (4, 5) or f.n_out() != 1:
                raise MCPInputError(
                    "StepSpec.update as a casadi.Function needs inputs (x, z, u, theta[, t]), 1 output"
                )
            got = [f.size1_in(i) * f.size2_in(i) for i in range(f.n_in())]
            if got != want[: f.n_in()]:
                raise ShapeError(
                    f"StepSpec.update: input sizes {got}, expected (x, z, u, theta[, t]) = {want[: f.n_in()]}"
                )
            xn = f(x, z, u, th, t) if f.n_in() == 5 else f(x, z, u, th)
        elif callable(self.update):
            args = (x, z, u, th, t) if _takes_time(self.update) else (x, z, u, th)
            xn = _column(self.update(*args), "StepSpec.update")
        else:
            raise MCPInputError("StepSpec.update must be callable or a casadi.Function")
        if xn.numel() != self.n_state:
            raise ShapeError(f"StepSpec.update returns {xn.numel()} values, the state has {self.n_state}")
        self.update_fun = ca.Function(
            "horizon_Phi", [x, z, u, th, t], [ca.vec(xn)], ["x", "z", "u", "theta", "t"], ["x_next"]
        )

    @property
    def blocks(self) -> dict[str, slice]:
        """Variable block name -> slice of the step's :math:`z`."""
        return {b.name: b.slice for b in self.mcp.blocks}

    def p_value(self, x: np.ndarray, u: np.ndarray, theta: np.ndarray, t: float) -> np.ndarray:
        """Numeric :math:`P(x, u, \\theta, t)`, the stacked parameter vector of the MCP."""
        return np.asarray(self.param_fun(x, u, theta, t), dtype=float).reshape(-1)

    def x_next(
        self, x: np.ndarray, z: np.ndarray, u: np.ndarray, theta: np.ndarray, t: float = 0.0
    ) -> np.ndarray:
        r"""Numeric :math:`\Phi(x, z, u, \theta, t)` (``t`` is ignored by a time-free update)."""
        return np.asarray(self.update_fun(x, z, u, theta, t), dtype=float).reshape(-1)


def _takes_time(fn: Callable[..., Any]) -> bool:
    """Whether a Python update accepts a fifth positional argument ``t``."""
    try:
        inspect.signature(fn).bind(None, None, None, None, None)
    except TypeError:
        return False
    except ValueError:  # no signature available (builtins)
        return False
    return True


@dataclass
class PathConstraint:
    r"""Path constraints :math:`c_{\rm lo} \le c(x_k, u_k, \theta) \le c_{\rm up}` at every step.

    ``fn(x, u, theta)`` returns CasADi expressions of the SX symbols it receives; ``lb``/``ub`` are
    scalars or one value per row (``±inf`` allowed).
    """

    fn: Callable[[ca.SX, ca.SX, ca.SX], Any]
    lb: Any = -math.inf
    ub: Any = 0.0


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


@dataclass
class HorizonResult(FromParts):
    """A solved (or failed) horizon and its re-simulation check (an :class:`~mcpkit.result.Outcome`).

    Its parts are the MPCC solve (:attr:`mpcc`) and, when the plan was re-simulated, the
    re-simulation check (:attr:`resim`, :func:`resimulation_check`); ``solved`` and
    ``termination`` come from them (:class:`~mcpkit.result.FromParts`): solved when the
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
        The :class:`~mcpkit.result.MPCCResult` of :class:`~mcpkit.mpcc.MPCCSolver`.
    resim_states
        States of the re-simulation of the planned controls, ``(N+1, n_state)``.
    resim
        The re-simulation :class:`~mcpkit.result.ToleranceCheck` (``None``: not
        re-simulated).
    solve_time_s, build_time_s, guess_time_s, resim_time_s
        Wall times of the MPCC solve, the MPCC build, the initial forward simulation and the
        re-simulation.
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
        """:data:`~mcpkit.result.RESULT_KEYS`, then objective, residuals, deviation and times."""
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


def spent_building(options: dict[str, Any], t0: float) -> None:
    """Take the time since ``t0`` (building a horizon) off ``options["time_limit"]``, if any, so
    that a planner's limit bounds its whole call (at least 1 ms is left for the solve's own
    bookkeeping; a limit that ran out gives a ``time_limit`` result, not an error)."""
    limit = options.get("time_limit")
    if limit is not None and math.isfinite(float(limit)):
        options["time_limit"] = max(float(limit) - (time.perf_counter() - t0), 1e-3)


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


class Horizon:
    r"""The stacked horizon MPCC of the module docstring, built once.

    Parameters
    ----------
    spec
        The symbolic step.
    n_steps
        :math:`N \ge 1` steps (states :math:`x_0..x_N`).
    x_initial
        :math:`\bar x_0` (fixed, finite).
    control_bounds
        ``(lo, hi)``: scalars, ``n_control`` values, or ``(N, n_control)`` arrays.
    design_bounds
        ``(lo, hi)`` for :math:`\theta` (``n_design`` values or scalars).
    terminal_bounds
        ``(lo, hi)`` box on :math:`x_N` (equal entries = terminal equality; ``None`` = free).
    state_bounds
        ``(lo, hi)`` box on every :math:`x_k`, :math:`k \ge 1` (``None`` = free).
    stage_cost
        ``l(x_k, u_k, theta, z_k, k) -> scalar`` (CasADi); default 0.
    terminal_cost
        ``l_N(x_N, theta) -> scalar``; default 0.
    path
        Path constraints applied at every step.
    t0
        Initial time.
    """

    def __init__(
        self,
        spec: StepSpec,
        n_steps: int,
        x_initial: Any,
        *,
        control_bounds: tuple[Any, Any] = (-math.inf, math.inf),
        design_bounds: tuple[Any, Any] = (-math.inf, math.inf),
        terminal_bounds: tuple[Any, Any] | None = None,
        state_bounds: tuple[Any, Any] | None = None,
        stage_cost: Callable[..., Any] | None = None,
        terminal_cost: Callable[..., Any] | None = None,
        path: list[PathConstraint] | None = None,
        t0: float = 0.0,
    ) -> None:
        if not isinstance(spec, StepSpec):
            raise MCPInputError(f"Horizon needs a StepSpec, got {type(spec).__name__}")
        self.spec = spec
        self.N = N = _count(n_steps, "n_steps", minimum=1)
        nx, nth = spec.n_state, spec.n_design
        self.x_initial = _vector(x_initial, nx, "x_initial", allow_inf=False)
        self.u_lo, self.u_hi = self._control_box(control_bounds)
        self.th_lo, self.th_hi = _box(*self._pair(design_bounds, "design_bounds"), nth, "design_bounds")
        tb = (-math.inf, math.inf) if terminal_bounds is None else terminal_bounds
        self.xT_lo, self.xT_hi = _box(*self._pair(tb, "terminal_bounds"), nx, "terminal_bounds")
        sb = (-math.inf, math.inf) if state_bounds is None else state_bounds
        self.x_lo, self.x_hi = _box(*self._pair(sb, "state_bounds"), nx, "state_bounds")
        for fn, what in ((stage_cost, "stage_cost"), (terminal_cost, "terminal_cost")):
            if fn is not None and not callable(fn):
                raise MCPInputError(f"{what} must be callable or None")
        self.stage_cost = stage_cost
        self.terminal_cost = terminal_cost
        self.path = list(path or [])
        for pc in self.path:
            if not isinstance(pc, PathConstraint) or not callable(pc.fn):
                raise MCPInputError("path must be a list of PathConstraint with a callable fn")
        try:
            self.t0 = float(t0)
        except (TypeError, ValueError):
            raise MCPInputError(f"t0 must be a number, got {t0!r}") from None
        if not math.isfinite(self.t0):
            raise NonFiniteError("t0 must be finite")
        self.t = self.t0 + spec.h * np.arange(N + 1)
        t_build = time.perf_counter()
        self._build()
        self.build_time_s = time.perf_counter() - t_build

    # ---------------------------------------------------------------- helpers
    @staticmethod
    def _pair(value: Any, what: str) -> tuple[Any, Any]:
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            raise MCPInputError(f"{what} must be a pair (lo, hi), got {value!r}")
        return value[0], value[1]

    def _control_box(self, bounds: tuple[Any, Any]) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = self._pair(bounds, "control_bounds")
        N, nu = self.N, self.spec.n_control
        out = []
        for v, what in ((lo, "lower"), (hi, "upper")):
            a = np.asarray(v, dtype=float)
            if a.ndim == 2:
                if a.shape != (N, nu):
                    raise ShapeError(f"control_bounds {what}: expected shape ({N}, {nu}), got {a.shape}")
                out.append(a.reshape(-1))
            else:
                out.append(np.tile(_vector(a, nu, f"control_bounds {what}", allow_inf=True), N))
        return _box(out[0], out[1], N * nu, "control_bounds")

    # ---------------------------------------------------------------- build
    def _build(self) -> None:
        spec, N = self.spec, self.N
        nx, nu, nth = spec.n_state, spec.n_control, spec.n_design
        cm: CasadiMCP = lower_to_casadi(spec.mcp)
        step, smap = MCPToMPCC().apply(cm)
        self.casadi_mcp, self.step_mpcc = cm, step
        self.slack_map: SlackMap = smap
        nxs = int(step.x.numel())
        fstep = ca.Function("horizon_step", [step.x, step.p], [step.g, step.G, step.H])
        nz = cm.n
        self.n_step_vars = nxs
        X = ca.SX.sym("x", nx, N + 1)
        U = ca.SX.sym("u", nu, N)
        TH = ca.SX.sym("theta", nth)
        XS = ca.SX.sym("s", nxs, N)
        dec = ca.vertcat(ca.vec(X), ca.vec(U), TH, ca.vec(XS))
        o_u = nx * (N + 1)
        o_th = o_u + nu * N
        o_s = o_th + nth
        self.layout = {
            "x": slice(0, o_u), "u": slice(o_u, o_th), "theta": slice(o_th, o_s),
            "s": slice(o_s, o_s + nxs * N),
        }  # fmt: skip
        lbx = np.concatenate(
            [
                self.x_initial, np.tile(self.x_lo, N - 1), self.xT_lo if N else [],
                self.u_lo, self.th_lo, np.tile(step.lbx, N),
            ]
        )  # fmt: skip
        ubx = np.concatenate(
            [
                self.x_initial, np.tile(self.x_hi, N - 1), self.xT_hi if N else [],
                self.u_hi, self.th_hi, np.tile(step.ubx, N),
            ]
        )  # fmt: skip
        # terminal box intersected with the state box
        sl = slice(nx * N, nx * (N + 1))
        lbx[sl] = np.maximum(lbx[sl], self.x_lo)
        ubx[sl] = np.minimum(ubx[sl], self.x_hi)
        if np.any(lbx > ubx):
            raise BoundsError("terminal_bounds and state_bounds do not intersect")
        g_step, G, H, g_dyn, g_path = [], [], [], [], []
        lbg_path, ubg_path = [], []
        f = ca.SX(0.0)
        for k in range(N):
            xk, uk, sk = X[:, k], U[:, k], XS[:, k]
            pk = spec.param_fun(xk, uk, TH, float(self.t[k]))
            gk, Gk, Hk = fstep(sk, pk)
            g_step.append(gk)
            G.append(Gk)
            H.append(Hk)
            g_dyn.append(X[:, k + 1] - spec.update_fun(xk, sk[:nz], uk, TH, float(self.t[k])))
            for j, pc in enumerate(self.path):
                c = _column(pc.fn(xk, uk, TH), f"path constraint {j}")
                g_path.append(c)
                lbg_path.append(_vector(pc.lb, c.numel(), f"path constraint {j} lb", allow_inf=True))
                ubg_path.append(_vector(pc.ub, c.numel(), f"path constraint {j} ub", allow_inf=True))
                if np.any(lbg_path[-1] > ubg_path[-1]):
                    raise BoundsError(f"path constraint {j}: lb > ub")
            if self.stage_cost is not None:
                f = f + _scalar(self.stage_cost(xk, uk, TH, sk[:nz], k), "stage_cost")
        if self.terminal_cost is not None:
            f = f + _scalar(self.terminal_cost(X[:, N], TH), "terminal_cost")
        m_step = int(step.g.numel())
        self.rows = {
            "step": slice(0, m_step * N),
            "dynamics": slice(m_step * N, m_step * N + nx * N),
        }
        self.rows["path"] = slice(
            self.rows["dynamics"].stop, self.rows["dynamics"].stop + sum(int(c.numel()) for c in g_path)
        )
        g = ca.vertcat(*g_step, *g_dyn, *g_path)
        lbg = np.concatenate([np.tile(step.lbg, N), np.zeros(nx * N), *lbg_path])
        ubg = np.concatenate([np.tile(step.ubg, N), np.zeros(nx * N), *ubg_path])
        x0 = np.clip(np.zeros(dec.numel()), lbx, ubx)
        self.mpcc = MPCC(
            x=dec, p=ca.SX(0, 1), f=f, g=g, lbg=lbg, ubg=ubg, lbx=lbx, ubx=ubx,
            G=ca.vertcat(*G), H=ca.vertcat(*H), x0=x0, p0=np.zeros(0),
            G_implied_by_bounds=step.G_implied_by_bounds, H_implied_by_bounds=step.H_implied_by_bounds,
            name=f"horizon_{spec.mcp.name}_N{N}", blocks=lambda: _horizon_blocks(self),
        )  # fmt: skip

    # ---------------------------------------------------------------- printing
    def to_text(self, **kwargs: Any) -> str:
        """The horizon MPCC as text: one step's blocks "for k = 0, …, N-1", the boundary conditions
        and the objective (:meth:`mcpkit.mpcc.MPCC.to_text`); as many lines for any :math:`N`."""
        return self.mpcc.to_text(**kwargs)

    def to_latex(self, **kwargs: Any) -> str:
        """LaTeX of :meth:`to_text`."""
        return self.mpcc.to_latex(**kwargs)

    def _repr_latex_(self) -> str:
        return f"$${self.to_latex()}$$"

    def explain(self, **kwargs: Any) -> str:
        """Prose explanation of the horizon MPCC (:meth:`mcpkit.mpcc.MPCC.explain`)."""
        return self.mpcc.explain(**kwargs)

    # ---------------------------------------------------------------- pack / unpack
    def unpack(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """Split a decision vector into ``states, controls, design, s`` (``s``: step (z, w, v))."""
        spec, N = self.spec, self.N
        xv = np.asarray(x, dtype=float).reshape(-1)
        if xv.shape != (int(self.mpcc.x.numel()),):
            raise ShapeError(f"decision vector must have {int(self.mpcc.x.numel())} entries, got {xv.shape}")
        L = self.layout
        return {
            "states": xv[L["x"]].reshape(N + 1, spec.n_state),
            "controls": xv[L["u"]].reshape(N, spec.n_control),
            "design": xv[L["theta"]].copy(),
            "s": xv[L["s"]].reshape(N, self.n_step_vars),
        }

    def pack(self, states: np.ndarray, controls: np.ndarray, design: np.ndarray, s: np.ndarray) -> np.ndarray:
        """Inverse of :meth:`unpack` (column-major stacking of the CasADi matrices)."""
        return np.concatenate(
            [
                np.asarray(states, dtype=float).reshape(-1),
                np.asarray(controls, dtype=float).reshape(-1),
                np.asarray(design, dtype=float).reshape(-1),
                np.asarray(s, dtype=float).reshape(-1),
            ]
        )

    def _controls(self, U: Any, what: str) -> np.ndarray:
        N, nu = self.N, self.spec.n_control
        a = np.asarray(U, dtype=float)
        if a.ndim <= 1 and a.size in (1, nu) and nu > 0:
            a = np.tile(a.reshape(-1) if a.size == nu else np.full(nu, float(a.reshape(-1)[0])), (N, 1))
        if nu == 0:
            a = np.zeros((N, 0))
        if a.shape != (N, nu):
            raise ShapeError(f"{what}: expected shape ({N}, {nu}), got {a.shape}")
        if not np.isfinite(a).all():
            raise NonFiniteError(f"{what}: contains NaN or inf")
        return a

    def simulate(self, controls: Any, design: Any = (), **options: Any) -> SimulationResult:
        """Per-step simulation of ``controls`` ``(N, n_control)`` (see :func:`forward_simulate`)."""
        U = self._controls(controls, "controls")
        th = _vector(design if np.size(design) else np.zeros(self.spec.n_design), self.spec.n_design,
                     "design", allow_inf=False)  # fmt: skip
        return forward_simulate(self.spec, self.x_initial, U, th, t0=self.t0, **options)

    def initial_guess(
        self, controls: Any, design: Any = (), *, deadline: float | None = None, **options: Any
    ) -> np.ndarray:
        """Decision vector from a forward simulation of ``controls`` (slacks lifted from ``F``;
        rows not simulated by ``deadline`` repeat the last simulated one)."""
        U = self._controls(controls, "initial controls")
        th = _vector(design if np.size(design) else np.zeros(self.spec.n_design), self.spec.n_design,
                     "initial design", allow_inf=False)  # fmt: skip
        sim = forward_simulate(self.spec, self.x_initial, U, th, t0=self.t0, deadline=deadline, **options)
        X, Z = sim.states, sim.z
        last = X[np.isfinite(X).all(axis=1)][-1]
        X = np.where(np.isfinite(X), X, last)
        zlast = Z[np.isfinite(Z).all(axis=1)]
        zfill = zlast[-1] if zlast.size else self.casadi_mcp.z0
        Z = np.where(np.isfinite(Z), Z, zfill)
        S = np.zeros((self.N, self.n_step_vars))
        for k in range(self.N):
            p = self.spec.p_value(X[k], U[k], th, float(self.t[k]))
            F = np.asarray(self.casadi_mcp.F_fun(Z[k], p), dtype=float).reshape(-1)
            S[k] = MCPToMPCC.lift(Z[k], F, self.slack_map)
        x0 = self.pack(X, U, th, S)
        return np.clip(x0, self.mpcc.lbx, self.mpcc.ubx)

    # ---------------------------------------------------------------- solve
    def solve(
        self,
        controls0: Any,
        design0: Any = (),
        *,
        method: str = "scholtes",
        tol: float = 1e-6,
        deviation_tol: float = 1e-4,
        simulator: Simulator | None = None,
        step_options: dict[str, Any] | None = None,
        backend: str = "casadi",
        **options: Any,
    ) -> HorizonResult:
        r"""Plan from a forward simulation of ``controls0``, solve the MPCC, re-simulate the plan.

        Parameters
        ----------
        controls0, design0
            Initial controls ``(N, n_control)`` (or one row) and design for the initial guess.
        method, backend, tol, **options
            :class:`~mcpkit.mpcc.MPCCSolver` method, backend (``"casadi"``, default, or
            ``"pyomo"``; pass ``ipopt=`` to choose the Pyomo backend's IPOPT) and options
            (recovery and polish on by default; so is the B-stationarity refinement of
            :mod:`mcpkit.mpcc.refine`, ``refine=False`` or a
            :class:`~mcpkit.mpcc.refine.RefineOptions` to change it; the plan's class is
            ``result.mpcc.stationarity``).
        deviation_tol
            The plan passes the re-simulation check when
            :math:`\max|x^{\rm sim} - x^{\rm plan}| \le` ``deviation_tol`` (state units).
        simulator
            ``simulate(U, theta) -> states`` used for the re-simulation; default: the per-step
            :class:`mcpkit.Solver` on this :class:`StepSpec` (:meth:`simulate`).
        step_options
            Options of the per-step solver (initial guess and default re-simulation).

        A ``time_limit`` in ``options`` bounds the whole call: the initial simulation stops at
        it (rows not simulated repeat the last one), the MPCC solve gets what is left (its checks
        included), and a re-simulation that does not fit is recorded as not checked
        (``result.resim.not_checked``; the plan is then not called solved).
        """
        dtol = float(deviation_tol)
        if not math.isfinite(dtol) or dtol <= 0:
            raise MCPInputError(f"deviation_tol must be a positive number, got {deviation_tol!r}")
        t_call = time.perf_counter()
        solver = MPCCSolver(self.mpcc, method, backend=backend, tol=tol, **options)
        # the time limit bounds the whole plan: initial simulation, MPCC solve and re-simulation
        limit = solver.options.time_limit
        deadline = None if limit is None else t_call + limit
        sopts = dict(step_options or {})
        t_guess = time.perf_counter()
        x0 = self.initial_guess(controls0, design0, deadline=deadline, **sopts)
        guess_time = time.perf_counter() - t_guess
        left = None if deadline is None else max(deadline - time.perf_counter(), 0.0)
        res = solver.solve(x0=x0, time_limit=left)
        parts = self.unpack(res.x if np.isfinite(res.x).all() else x0)
        Xp, Up, th = parts["states"], parts["controls"], parts["design"]
        Zp = parts["s"][:, : self.casadi_mcp.n]
        t_sim = time.perf_counter()
        late = deadline is not None and t_sim >= deadline
        if late:
            Xs = np.full_like(Xp, np.nan)
        elif simulator is None:
            Xs = self.simulate(Up, th, deadline=deadline, **sopts).states
        else:
            Xs = np.asarray(simulator(Up, th), dtype=float)
            if Xs.shape != Xp.shape:
                raise ShapeError(f"simulator returned shape {Xs.shape}, expected {Xp.shape}")
        resim_time = time.perf_counter() - t_sim
        check = resimulation_check(Xs, Xp, dtol, wall_time_s=resim_time)
        if late or (deadline is not None and not np.isfinite(Xs).all() and time.perf_counter() >= deadline):
            check = replace(check, not_checked="time limit: the plan was not re-simulated in full")
        return HorizonResult(
            t=self.t.copy(), states=Xp.copy(), controls=Up.copy(), design=th.copy(), z=Zp.copy(),
            objective=float(res.f), mpcc=res, resim_states=Xs, resim=check,
            solve_time_s=float(res.wall_time_s), build_time_s=self.build_time_s,
            guess_time_s=guess_time, resim_time_s=resim_time, blocks=self.spec.blocks,
        )  # fmt: skip


def _named_column(name: str, tex: str, n: int) -> tuple[ca.SX, list[tuple[ca.SX, Formula]]]:
    """SX symbols of one printed vector and their names (``x_k[0], ...``; a scalar prints as ``u_k``)."""
    col = ca.SX.sym(name, n)
    names = [(name, tex)] if n == 1 else [(f"{name}[{j}]", step_latex(tex, j)) for j in range(n)]
    return col, [(col[j], names[j]) for j in range(n)]


def _args(expr: ca.SX, columns: list[tuple[Formula, ca.SX]]) -> Formula:
    """``(x_k, v_k)``: the printed arguments that ``expr`` depends on."""
    used = [nm for nm, col in columns if col.numel() and ca.depends_on(expr, col)]
    return ", ".join(n[0] for n in used), ", ".join(n[1] for n in used)


def _horizon_blocks(hz: Horizon) -> MPCCBlocks:
    r"""The printing blocks of a horizon MPCC: one step's segments for every :math:`k`.

    Per step: the step MCP's blocks in slack form with the names suffixed ``_k`` (parameters
    that :math:`P` sets per step too), the dynamics :math:`x_{k+1} = \Phi(\dots)` and the path
    constraints; :math:`P`, :math:`\Phi` and the costs are printed from CasADi on named symbols
    (or by their arguments when too large). Nothing depends on :math:`N` but the slices.
    """
    spec, N, k = hz.spec, hz.N, "k"
    mcp = spec.mcp
    nx, nu, nth = spec.n_state, spec.n_control, spec.n_design
    xs, xn = _named_column("x_k", "x_{k}", nx)
    us, un = _named_column("u_k", "u_{k}", nu)
    ths, thn = _named_column("theta", r"\theta", nth)
    t = ca.SX.sym("t_k")
    zcols: list[tuple[Formula, ca.SX]] = []
    zn: list[tuple[ca.SX, Formula]] = []
    for b in mcp.blocks:
        col, names = _named_column(f"{b.name}_k", step_latex(b.latex, k), b.size)
        zcols.append(((f"{b.name}_k", step_latex(b.latex, k)), col))
        zn += names
    zs = ca.vertcat(*[c for _, c in zcols])
    symbols = xn + un + thn + [(t, ("t_k", "t_{k}"))] + zn
    columns = [(("x_k", "x_{k}"), xs), *zcols, (("u_k", "u_{k}"), us), (("theta", r"\theta"), ths),
               (("t_k", "t_{k}"), t)]  # fmt: skip
    p = spec.param_fun(xs, us, ths, t)
    inputs = ca.vertcat(xs, us, ths, t)
    per_step = {pb.name for pb in mcp.parameter_blocks if ca.depends_on(p[pb.slice], inputs)}
    memo: dict[int, bool] = {}

    def is_step(leaf: bx.Expr) -> bool:
        if isinstance(leaf, bx.Var):
            return True
        if isinstance(leaf, bx.Param):
            return leaf.block.name in per_step
        if isinstance(leaf, bx.Named):
            if id(leaf) not in memo:
                memo[id(leaf)] = any(
                    is_step(x) for x in bx.walk(leaf.expr) if isinstance(x, (bx.Var, bx.Param))
                )
            return memo[id(leaf)]
        return False

    def rename(leaf: bx.Expr, name: str, latex: bool) -> str:
        if not is_step(leaf):
            return name
        return step_latex(name, k) if latex else f"{name}_{k}"

    sblocks, defs, given = declaration_parts(mcp, rename, per_step, index=k)

    def per(offset: int, stride: int) -> Callable[[slice], tuple[slice, ...]]:
        return lambda sl: tuple(
            slice(offset + i * stride + sl.start, offset + i * stride + sl.stop) for i in range(N)
        )

    nxs, L = hz.n_step_vars, hz.layout
    m_step, nc = int(hz.step_mpcc.g.numel()), int(hz.step_mpcc.G.numel())
    variables, cons, bounds = slack_segments(
        sblocks, hz.slack_map, x_at=per(L["s"].start, nxs), g_at=per(0, m_step), pair_at=per(0, nc), index=k
    )
    where: list[tuple[Formula, Formula]] = []
    uses_t = False
    for pb in mcp.parameter_blocks:  # P: the parameters set per step
        if pb.name not in per_step:
            continue
        e = p[pb.slice]
        uses_t = uses_t or bool(ca.depends_on(e, t))
        shape = sym_shape(bx.Param(pb))
        nm = (f"{pb.name}_k", step_latex(pb.latex, k))
        f = casadi_formulas(e, symbols)
        if f is None:
            args = _args(e, columns)
            f = (f"P_{pb.name}({args[0]})", rf"P_{{\mathrm{{{pb.name}}}}}({args[1]})")
        note = (f"{nm[0]} ∈ {space(shape, False)}", rf"{nm[1]} \in {space(shape, True)}")
        where.append(((f"{nm[0]} = {f[0]}", f"{nm[1]} = {f[1]}"), note))
    where += defs
    phi = spec.update_fun(xs, zs, us, ths, t)
    uses_t = uses_t or bool(ca.depends_on(phi, t))
    args = _args(phi, columns)
    d0 = hz.rows["dynamics"].start
    dyn = Segment(
        "g",
        "dynamics",
        tuple(slice(d0 + i * nx, d0 + (i + 1) * nx) for i in range(N)),
        latex=r"\mathrm{dynamics}",
        statement=(f"x_{{k+1}} = Phi({args[0]})", rf"x_{{k+1}} = \Phi({args[1]})"),
    )
    f = casadi_formulas(phi, symbols)
    if f is not None:
        where.append(((f"Phi({args[0]}) = {f[0]}", rf"\Phi({args[1]}) = {f[1]}"), ("", "")))
    path: list[Segment] = []
    if hz.path:
        cols = [_column(pc.fn(xs, us, ths), f"path constraint {j}") for j, pc in enumerate(hz.path)]
        sizes = [int(c.numel()) for c in cols]
        stride, off = sum(sizes), hz.rows["path"].start
        for j, (c, n) in enumerate(zip(cols, sizes, strict=True)):
            f = casadi_formulas(c, symbols)
            if f is None:
                a = _args(c, columns)
                f = (f"c_{j}({a[0]})", f"c_{{{j}}}({a[1]})")
            at = tuple(slice(off + i * stride, off + i * stride + n) for i in range(N))
            path.append(Segment("g", f"c{j}", at, latex=f"c_{{{j}}}", body=f))
            off += n
    obj_t, obj_l = [], []
    if hz.stage_cost is not None:
        l0 = _scalar(hz.stage_cost(xs, us, ths, zs, 0), "stage_cost")
        l1 = _scalar(hz.stage_cost(xs, us, ths, zs, 1), "stage_cost")
        f = casadi_formulas(l0, symbols) or (
            "stage_cost(x_k, u_k, theta, z_k, k)",
            r"\ell(x_k, u_k, \theta, z_k, k)",
        )
        varies = " (at k = 0; it changes with k)" if str(l0) != str(l1) else ""
        where.append(
            ((f"l_k = {f[0]}{varies}", rf"\ell_k = {f[1]}" + (r"\ (k = 0)" if varies else "")), ("", ""))
        )
        obj_t.append("sum_{k=0}^{N-1} l_k")
        obj_l.append(r"\sum_{k=0}^{N-1} \ell_k")
    if hz.terminal_cost is not None:
        xN, xNn = _named_column("x_N", "x_{N}", nx)
        lN = _scalar(hz.terminal_cost(xN, ths), "terminal_cost")
        f = casadi_formulas(lN, xNn + thn) or ("terminal_cost(x_N, theta)", r"\ell_N(x_N, \theta)")
        where.append(((f"l_N = {f[0]}", rf"\ell_N = {f[1]}"), ("", "")))
        obj_t.append("l_N")
        obj_l.append(r"\ell_N")
    if uses_t:
        t0 = f"{hz.t0:g} + " if hz.t0 else ""
        where.insert(0, ((f"t_k = {t0}{spec.h:g}*k", rf"t_k = {t0}{spec.h:g}\,k"), ("", "")))
    o_u, o_th = L["u"].start, L["theta"].start
    head = [Segment("x", "x", tuple(slice(i * nx, (i + 1) * nx) for i in range(N + 1)))]
    if nu:
        head.append(Segment("x", "u", tuple(slice(o_u + i * nu, o_u + (i + 1) * nu) for i in range(N))))
    tail = [Segment("x", "theta", slice(o_th, o_th + nth), latex=r"\theta")] if nth else []
    return MPCCBlocks(
        segments=tuple(cons + [dyn] + path + head + variables + tail),
        objective=(" + ".join(obj_t) or "0", " + ".join(obj_l) or "0"),
        where=tuple(where),
        given=tuple(given + bounds),
        sizes=(("N", N), *sorted(mcp.dims.items())),
        source=f"horizon of MCP {mcp.name!r}: N steps of h = {spec.h:g}, each in slack form",
        steps=N,
    )


def _scalar(expr: Any, what: str) -> ca.SX:
    col = _column(expr, what)
    if col.numel() != 1:
        raise ShapeError(f"{what} must be a scalar expression, got {col.numel()} entries")
    return col
