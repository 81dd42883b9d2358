r"""Lowering of an MPCC (:class:`~mcpkit.mpcc.MPCC`, general pair bounds) to Pyomo.

:class:`ToPyomoMPCC` turns the CasADi expressions :math:`f, g, G, H` into Pyomo expressions by
replaying the CasADi SX algorithm instruction by instruction (:func:`casadi_to_pyomo`), so the
Pyomo model computes exactly what the CasADi functions compute. It states

.. math::

    \min_x f(x; p)\ \text{s.t.}\ g_l \le g(x; p) \le g_u,\ x_l \le x \le x_u,\
    H_l \le H(x; p) \le H_u \perp G(x; p),\ G_l \le G(x; p) \le G_u

with one ``pyomo.mpec`` ``complements(H_l <= H_j <= H_u, G_j)`` per pair: Pyomo's box semantics
are those of :mod:`mcpkit.problems.mpcc` (:math:`H_j` at its lower bound :math:`\Rightarrow
G_j \ge 0`, strictly inside :math:`\Rightarrow G_j = 0`, at its upper bound :math:`\Rightarrow
G_j \le 0`). The model can be handed to Pyomo's own MPEC tools (``mpec_nlp``,
``TransformationFactory("mpec.simple_nonlinear")``) or to
:class:`~mcpkit.mpcc.MPCCSolver` (``backend="pyomo"``). :meth:`ToPyomoMPCC.invert` reads :math:`x`
back from the model's variables.

Shared sub-expressions of the CasADi graph (values read more than once) become named Pyomo
``Expression`` components, which the NL writer emits once as defined variables; without them a
deep DAG would be written as an exponentially large tree.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import casadi as ca
import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.relational_expr import InequalityExpression
from pyomo.mpec import Complementarity, complements

from mcpkit.errors import MCPInputError
from mcpkit.lowering.base import Lowering
from mcpkit.lowering.standard import shiftable
from mcpkit.lowering.sx_replay import ARITHMETIC_BINARY, ARITHMETIC_UNARY, elementary, replay_sx
from mcpkit.problems.mpcc import MPCC


def _if(c: Any, a: Any, b: Any) -> Any:
    if isinstance(c, bool | np.bool_):
        return a if c else b
    return pyo.Expr_if(IF=c, THEN=a, ELSE=b)


def _sign(a: Any) -> Any:
    if isinstance(a, int | float):
        return float(np.sign(a))
    return pyo.Expr_if(IF=a >= 0, THEN=pyo.Expr_if(IF=a <= 0, THEN=0.0, ELSE=1.0), ELSE=-1.0)


def _le(a: Any, b: Any, strict: bool = False) -> Any:
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a < b if strict else a <= b
    return InequalityExpression((a, b), strict)


def _not(c: Any) -> Any:
    if isinstance(c, bool | np.bool_):
        return not c
    if isinstance(c, InequalityExpression) and c.nargs() == 2:
        return _le(c.args[1], c.args[0], strict=not c.strict)  # not(a <= b) is b < a
    raise MCPInputError(f"casadi_to_pyomo: cannot negate {c!r}")


_UNARY: dict[int, Callable[[Any], Any]] = {
    **ARITHMETIC_UNARY,
    ca.OP_NOT: _not,
    ca.OP_TWICE: lambda a: 2.0 * a,
    ca.OP_INV: lambda a: 1.0 / a,
    **elementary(pyo),
    ca.OP_ASINH: pyo.asinh,
    ca.OP_ACOSH: pyo.acosh,
    ca.OP_ATANH: pyo.atanh,
    ca.OP_FABS: abs,
    ca.OP_FLOOR: pyo.floor,
    ca.OP_CEIL: pyo.ceil,
    ca.OP_SIGN: _sign,
    ca.OP_LOG1P: lambda a: pyo.log(1.0 + a),
    ca.OP_EXPM1: lambda a: pyo.exp(a) - 1.0,
}
_BINARY: dict[int, Callable[[Any, Any], Any]] = {
    **ARITHMETIC_BINARY,
    ca.OP_FMIN: lambda a, b: _if(_le(a, b), a, b),
    ca.OP_FMAX: lambda a, b: _if(_le(b, a), a, b),
    ca.OP_LE: _le,
    ca.OP_LT: lambda a, b: _le(a, b, strict=True),
    ca.OP_IF_ELSE_ZERO: lambda c, a: _if(c, a, 0.0),
    ca.OP_HYPOT: lambda a, b: pyo.sqrt(a * a + b * b),
    ca.OP_COPYSIGN: lambda a, b: abs(a) * _sign(b),
}


def casadi_to_pyomo(
    fun: ca.Function, inputs: Sequence[Sequence[Any]], block: pyo.Block | None = None
) -> list[list[Any]]:
    """The outputs of ``fun`` as Pyomo expressions (:func:`~mcpkit.lowering.sx_replay.replay_sx`).

    ``inputs`` are Pyomo variables, parameters or numbers, one per element of each input; with a
    ``block``, values read more than once become named ``Expression`` components of it (``None``:
    inlined). Returns one dense list per output (structural zeros as ``0.0``). An input of the
    wrong length or an operation with no Pyomo counterpart (named in the message) raises
    :class:`~mcpkit.errors.MCPInputError`.
    """
    names = itertools.count()

    def named(val: Any) -> Any:  # a shared sub-expression becomes one named Expression
        if isinstance(val, int | float | bool):
            return val
        k = next(names)
        block.cse[k] = val
        return block.cse[k]

    if block is not None:
        block.cse = pyo.Expression(pyo.Any)
    return replay_sx(
        fun,
        inputs,
        _UNARY,
        _BINARY,
        share=None if block is None else named,
        what="casadi_to_pyomo",
        hint="; use backend='casadi'",
    )


@dataclass(frozen=True)
class PyomoMPCCMap:
    """Inverse data of :class:`ToPyomoMPCC`: the model and its expression lists."""

    model: pyo.ConcreteModel
    f: Any
    g: list[Any]
    G: list[Any]
    H: list[Any]
    free_rows: tuple[int, ...]
    """Rows of ``g`` with both bounds infinite (no constraint written; listed, not dropped)."""

    def x_values(self) -> np.ndarray:
        """The model's current ``x`` as an array (NaN where unset)."""
        return np.array([np.nan if v.value is None else float(v.value) for v in self.model.x.values()])


def _opt(v: float) -> float | None:
    return float(v) if np.isfinite(v) else None


def _model(
    name: str, x0: np.ndarray, lbx: np.ndarray, ubx: np.ndarray, p0: np.ndarray, params_as_vars: bool = False
) -> pyo.ConcreteModel:
    m = pyo.ConcreteModel(name=name)
    m.x = pyo.Var(range(x0.size), initialize=lambda _m, i: float(x0[i]))
    for i, v in m.x.items():
        v.setlb(_opt(lbx[i]))
        v.setub(_opt(ubx[i]))
    if params_as_vars:  # columns with p <= x <= p: an NL file written once serves every p
        m.p = pyo.Var(range(p0.size), initialize=lambda _m, j: float(p0[j]))
        for j, v in m.p.items():
            v.setlb(float(p0[j]))
            v.setub(float(p0[j]))
    else:
        m.p = pyo.Param(range(p0.size), mutable=True, initialize=lambda _m, j: float(p0[j]))
    return m


def _expressions(m: pyo.ConcreteModel, x: Any, p: Any, exprs: Sequence[Any]) -> list[list[Any]]:
    fun = ca.Function("to_pyomo", [x, p], list(exprs))
    return casadi_to_pyomo(fun, [list(m.x.values()), list(m.p.values())], block=m)


def _rows(
    m: pyo.ConcreteModel, name: str, exprs: list[Any], lo: np.ndarray, hi: np.ndarray
) -> tuple[int, ...]:
    """Add ``lo <= exprs <= hi`` as Constraint ``name``; returns the rows not written.

    Rows without a finite bound and constant rows that hold are not written (they constrain
    nothing); a constant row that fails raises :class:`~mcpkit.errors.MCPInputError`.
    """
    keep = []
    for i, e in enumerate(exprs):
        if not (np.isfinite(lo[i]) or np.isfinite(hi[i])):
            continue
        if isinstance(e, int | float):
            if not lo[i] - 1e-12 <= e <= hi[i] + 1e-12:
                raise MCPInputError(f"{m.name}: constant row {name}[{i}] = {e} violates [{lo[i]}, {hi[i]}]")
            continue
        keep.append(i)

    def rule(_m: Any, k: int) -> Any:
        i = keep[k]
        if lo[i] == hi[i]:
            return exprs[i] == float(lo[i])
        return pyo.inequality(_opt(lo[i]), exprs[i], _opt(hi[i]))

    m.add_component(name, pyo.Constraint(range(len(keep)), rule=rule))
    return tuple(i for i in range(len(exprs)) if i not in set(keep))


class ToPyomoMPCC(Lowering):
    """:class:`~mcpkit.mpcc.MPCC` -> Pyomo model with ``pyomo.mpec`` complementarity (module docstring)."""

    def apply(self, problem: MPCC) -> tuple[pyo.ConcreteModel, PyomoMPCCMap]:
        m = _model(problem.name, problem.x0, problem.lbx, problem.ubx, problem.p0)
        f, g, G, H = _expressions(m, problem.x, problem.p, [problem.f, problem.g, problem.G, problem.H])
        m.obj = pyo.Objective(expr=f[0])
        free = _rows(m, "g", g, problem.lbg, problem.ubg)
        # plain bounds on G, except the G >= 0 that a standard pair's complements() states
        std = shiftable(problem)
        _rows(m, "G_bounds", G, np.where(std, -np.inf, problem.lbG), problem.ubG)

        free_H = np.flatnonzero(np.isinf(problem.lbH) & np.isinf(problem.ubH))
        # H_j unbounded both ways: the pair says G_j = 0, a plain equation
        _rows(m, "G_zero", [G[j] for j in free_H], np.zeros(free_H.size), np.zeros(free_H.size))

        def pair(_m: Any, j: int) -> Any:
            lo, hi = _opt(problem.lbH[j]), _opt(problem.ubH[j])
            if lo is None and hi is None:
                return Complementarity.Skip  # stated in G_zero above
            if hi is None:
                return complements(H[j] >= lo, G[j] >= 0)
            if lo is None:
                return complements(H[j] <= hi, G[j] <= 0)
            return complements(pyo.inequality(lo, H[j], hi), G[j])

        m.pairs = Complementarity(range(problem.n_pairs), rule=pair)
        return m, PyomoMPCCMap(m, f[0], g, G, H, free)

    def invert(self, solution: Any, inverse_data: PyomoMPCCMap) -> np.ndarray:
        """``x`` from the model (``solution=None``) or from a sequence of values."""
        if solution is None:
            return inverse_data.x_values()
        return np.asarray(solution, dtype=float).reshape(-1)


def standard_pyomo_model(
    mpcc: MPCC, p: np.ndarray, params_as_vars: bool = False
) -> tuple[pyo.ConcreteModel, PyomoMPCCMap]:
    r"""A standard-form MPCC as a Pyomo NLP without complementarity.

    Rows ``g`` (:math:`g_l \le g \le g_u`), ``mpcc_G`` (:math:`G \ge 0`) and ``mpcc_H``
    (:math:`H \ge 0`), objective ``obj``; the map keeps the Pyomo expressions of :math:`G_j` and
    :math:`H_j` for Pyomo-side use. With
    ``params_as_vars`` the parameters are variables bounded by their values (for an NL export
    that must not bake them in).
    """
    m = _model(mpcc.name, mpcc.x0, mpcc.lbx, mpcc.ubx, np.asarray(p, dtype=float), params_as_vars)
    f, g, G, H = _expressions(m, mpcc.x, mpcc.p, [mpcc.f, mpcc.g, mpcc.G, mpcc.H])
    m.obj = pyo.Objective(expr=f[0])
    free = _rows(m, "g", g, mpcc.lbg, mpcc.ubg)
    nc = len(G)
    zeros, infs = np.zeros(nc), np.full(nc, np.inf)
    _rows(m, "mpcc_G", G, zeros, infs)
    _rows(m, "mpcc_H", H, zeros, infs)
    return m, PyomoMPCCMap(m, f[0], g, G, H, free)
