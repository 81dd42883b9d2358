r"""One step of a horizon: the step MCP, its parameter map :math:`P` and its state update :math:`\Phi`.

A time-stepping model takes one MCP per step,

.. math::

    l \le z_k \le u \ \perp\ F(z_k;\ P(x_k, u_k, \theta, t_k)),\qquad
    x_{k+1} = \Phi(x_k, z_k, u_k, \theta, t_k),

with state :math:`x_k`, controls :math:`u_k`, design :math:`\theta` and time :math:`t_k = t_0 + kh`.
:class:`StepSpec` holds one such step on CasADi symbols (:meth:`StepSpec.from_model` builds it from a
model's declared step map); :class:`PathConstraint` states
:math:`c_{\rm lo} \le c(x_k, u_k, \theta) \le c_{\rm up}` at every step. The checks of a horizon's
inputs (:func:`as_box`, :func:`as_column`, :func:`as_scalar`) live here with them; counts and
numbers go through :mod:`mcpkit.problems.arrays` (:func:`~mcpkit.problems.arrays.as_count`).
:class:`~mcpkit.mpec.horizon.Horizon` stacks the steps into one MPCC.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import casadi as ca
import numpy as np

from mcpkit.errors import BoundsError, MCPInputError, NonFiniteError, ShapeError
from mcpkit.models.arrays import CASADI
from mcpkit.models.stepping import StepMap
from mcpkit.problems.arrays import as_count, as_float_vector
from mcpkit.problems.mcp import MCP

ParameterMap = Callable[[ca.SX, ca.SX, ca.SX, ca.SX], dict[str, Any]]
r"""``P(x, u, theta, t) -> {block name: CasADi expression or numbers}`` (missing blocks keep the
MCP's current values)."""

UpdateMap = Callable[..., Any]
r"""``Phi(x, z, u, theta) -> x_next`` or ``Phi(x, z, u, theta, t) -> x_next`` (CasADi expressions)."""


def as_box(lo: Any, hi: Any, n: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    r"""Bounds :math:`l \le u` of ``n`` components (scalars broadcast, :math:`\pm\infty` allowed)."""
    a = as_float_vector(lo, n, f"{what} lower bound", allow_inf=True)
    b = as_float_vector(hi, n, f"{what} upper bound", allow_inf=True)
    bad = np.flatnonzero(a > b)
    if bad.size:
        raise BoundsError(f"{what}: lower > upper bound at components {bad.tolist()}")
    if np.any(a == math.inf) or np.any(b == -math.inf):
        raise BoundsError(f"{what}: lower bound +inf or upper bound -inf leaves no feasible value")
    return a, b


def as_column(expr: Any, what: str) -> ca.SX:
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


def as_scalar(expr: Any, what: str) -> ca.SX:
    """A scalar CasADi expression (:func:`as_column` of one entry)."""
    col = as_column(expr, what)
    if col.numel() != 1:
        raise ShapeError(f"{what} must be a scalar expression, got {col.numel()} entries")
    return col


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
        self.n_state = as_count(self.n_state, "n_state", minimum=1)
        self.n_control = as_count(self.n_control, "n_control", minimum=0)
        self.n_design = as_count(self.n_design, "n_design", minimum=0)
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
                col = as_column(given[name], f"parameter block {name!r}")
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
            xn = as_column(self.update(*args), "StepSpec.update")
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
