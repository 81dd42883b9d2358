r"""Lowering of an MPCC (:class:`~mcpkit.mpcc.MPCC`, general pair bounds) to Pyomo.

:class:`ToPyomoMPCC` turns the CasADi expressions :math:`f, g, G, H` into Pyomo expressions by
replaying the CasADi SX algorithm instruction by instruction (:func:`casadi_to_pyomo`), so the
Pyomo model computes exactly what the CasADi functions compute. It states

.. math::

    \min_x f(x; p)\ \text{s.t.}\ g_l \le g(x; p) \le g_u,\ x_l \le x \le x_u,\
    H_l \le H(x; p) \le H_u \perp G(x; p),\ G_l \le G(x; p) \le G_u

with one ``pyomo.mpec`` ``complements(H_l <= H_j <= H_u, G_j)`` per pair: Pyomo's box semantics
are those of :mod:`mcpkit.mpcc.problem` (:math:`H_j` at its lower bound :math:`\Rightarrow
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
from mcpkit.mpcc.problem import MPCC
from mcpkit.mpcc.standard import shiftable


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
    ca.OP_NOT: _not,
    ca.OP_ASSIGN: lambda a: a,
    ca.OP_NEG: lambda a: -a,
    ca.OP_SQ: lambda a: a * a,
    ca.OP_TWICE: lambda a: 2.0 * a,
    ca.OP_INV: lambda a: 1.0 / a,
    ca.OP_SQRT: pyo.sqrt,
    ca.OP_EXP: pyo.exp,
    ca.OP_LOG: pyo.log,
    ca.OP_SIN: pyo.sin,
    ca.OP_COS: pyo.cos,
    ca.OP_TAN: pyo.tan,
    ca.OP_ASIN: pyo.asin,
    ca.OP_ACOS: pyo.acos,
    ca.OP_ATAN: pyo.atan,
    ca.OP_SINH: pyo.sinh,
    ca.OP_COSH: pyo.cosh,
    ca.OP_TANH: pyo.tanh,
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
    ca.OP_ADD: lambda a, b: a + b,
    ca.OP_SUB: lambda a, b: a - b,
    ca.OP_MUL: lambda a, b: a * b,
    ca.OP_DIV: lambda a, b: a / b,
    ca.OP_POW: lambda a, b: a**b,
    ca.OP_CONSTPOW: lambda a, b: a**b,
    ca.OP_FMIN: lambda a, b: _if(_le(a, b), a, b),
    ca.OP_FMAX: lambda a, b: _if(_le(b, a), a, b),
    ca.OP_LE: _le,
    ca.OP_LT: lambda a, b: _le(a, b, strict=True),
    ca.OP_IF_ELSE_ZERO: lambda c, a: _if(c, a, 0.0),
    ca.OP_HYPOT: lambda a, b: pyo.sqrt(a * a + b * b),
    ca.OP_COPYSIGN: lambda a, b: abs(a) * _sign(b),
}
_NAMES = {getattr(ca, n): n for n in dir(ca) if n.startswith("OP_")}
#: Values never wrapped in a named Expression: leaves and logical (non-numeric) results.
_NOT_NAMED = {ca.OP_CONST, ca.OP_INPUT, ca.OP_LE, ca.OP_LT, ca.OP_NOT}


def casadi_to_pyomo(
    fun: ca.Function, inputs: Sequence[Sequence[Any]], block: pyo.Block | None = None
) -> list[list[Any]]:
    """Evaluate the SX algorithm of ``fun`` on Pyomo objects.

    Parameters
    ----------
    fun
        A CasADi function (MX functions are expanded to SX first).
    inputs
        One sequence per input of ``fun``: Pyomo variables, parameters or numbers, one per
        element (dense, column-major).
    block
        Where to put named ``Expression`` components for shared sub-expressions
        (``None``: inline them).

    Returns
    -------
    list of list
        One dense list per output (structural zeros as ``0.0``).

    Raises
    ------
    MCPInputError
        When an input has the wrong length or the graph uses an operation with no Pyomo
        counterpart (named in the message).
    """
    if not fun.is_a("SXFunction"):
        fun = fun.expand()
    for k, vals in enumerate(inputs):
        if len(vals) != fun.numel_in(k):
            raise MCPInputError(
                f"casadi_to_pyomo: input {k} needs {fun.numel_in(k)} entries, got {len(vals)}"
            )
    n = fun.n_instructions()
    ops = [fun.instruction_id(k) for k in range(n)]
    ins = [fun.instruction_input(k) for k in range(n)]
    outs = [fun.instruction_output(k) for k in range(n)]
    # reads of each instruction's value (work slots are reused, so count by producer)
    producer: dict[int, int] = {}
    reads = [0] * n
    for k in range(n):
        if ops[k] != ca.OP_INPUT:
            for w in ins[k]:
                if w in producer:
                    reads[producer[w]] += 1
        if ops[k] != ca.OP_OUTPUT:
            producer[outs[k][0]] = k
    if block is not None:
        block.cse = pyo.Expression(pyo.Any)
    nz_to_el = [fun.sparsity_in(k).find() for k in range(fun.n_in())]  # nonzero -> element
    result = [[0.0] * fun.numel_out(k) for k in range(fun.n_out())]
    rows_out = [fun.sparsity_out(k).find() for k in range(fun.n_out())]
    work: dict[int, Any] = {}
    n_cse = 0
    for k in range(n):
        op, i, o = ops[k], ins[k], outs[k]
        if op == ca.OP_CONST:
            val: Any = float(fun.instruction_constant(k))
        elif op == ca.OP_INPUT:
            val = inputs[i[0]][nz_to_el[i[0]][i[1]]]
        elif op == ca.OP_OUTPUT:
            result[o[0]][rows_out[o[0]][o[1]]] = work[i[0]]
            continue
        elif op in _BINARY:
            val = _BINARY[op](work[i[0]], work[i[1]])
        elif op in _UNARY:
            val = _UNARY[op](work[i[0]])
        else:
            raise MCPInputError(
                f"casadi_to_pyomo: operation {_NAMES.get(op, op)} has no Pyomo counterpart "
                f"(in {fun.name()}); use backend='casadi'"
            )
        if block is not None and reads[k] >= 2 and op not in _NOT_NAMED:
            if not isinstance(val, int | float | bool):
                block.cse[n_cse] = val
                val = block.cse[n_cse]
                n_cse += 1
        work[o[0]] = val
    return result


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
