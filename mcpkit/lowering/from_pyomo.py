r"""A Pyomo model with an objective and ``pyomo.mpec`` complementarities -> :class:`~mcpkit.mpcc.MPCC`.

.. math::

    \min_x\ s\,f(x; p) \quad\text{s.t.}\quad g_l \le g(x; p) \le g_u,\quad x_l \le x \le x_u,\quad
    H_l \le H(x; p) \le H_u \perp G(x; p),\quad G_l \le G(x; p) \le G_u,

with :math:`s = +1` for a minimised and :math:`s = -1` for a maximised objective (the MPCC
always minimises; :attr:`PyomoMPCCSource.sense` keeps :math:`s`).

**What becomes what.** :math:`x`: every non-fixed variable that occurs in the active objective,
an active constraint or an active complementarity (in the model's variable order), with its
bounds (domain bounds included) read as numbers at import and its value as the start (0
clipped to the bounds when unset). :math:`p`: every mutable ``Param`` that occurs, then every
*fixed* variable that occurs; their values are read at each solve
(:meth:`PyomoMPCCSource.parameter_values`), so one import serves many parameter values and
fixings of the same variables. Immutable ``Param`` values are numbers (Pyomo substitutes them
when expressions are built). ``Constraint`` rows: ``lower <= body <= upper`` becomes one row of
:math:`g` with numeric bounds; a bound that depends on a mutable parameter (or a fixed
variable) moves into the row (:math:`\mathrm{body} - \mathrm{lower} \ge 0`), a ranged row with
two such bounds becomes two rows. Named ``Expression`` components are converted once.

**Complementarity semantics** (Pyomo's, as ``ComplementarityData._canonical_expression`` and
``to_standard_form`` in ``pyomo/mpec/complementarity.py`` define them). Each side of
``complements(a, b)`` is put in the canonical form :math:`l \le e \le u` (a plain expression
has no bounds; ``e1 >= e2`` with variables on both sides is :math:`0 \le e_1 - e_2`). Then:

* **one side an equality** :math:`e = c`: the condition is the equation :math:`e - c = 0` (a row
  of :math:`g`); Pyomo ignores the other side. mcpkit refuses the condition when that other
  side carries a bound, because Pyomo would drop that bound without a word
  (:class:`~mcpkit.errors.MCPInputError` naming it; state the bound as a ``Var`` bound or a
  ``Constraint``);
* otherwise **exactly two finite bounds** in total (Pyomo raises otherwise; so does mcpkit):

  - one bound on each side, :math:`e_1 \ge l_1 \perp e_2 \ge l_2` (either side may be
    :math:`\le u` instead): both hold and at least one is active. The pair is standard,
    :math:`H = e_1 - l_1` (or :math:`u_1 - e_1`), :math:`G = e_2 - l_2` (or :math:`u_2 - e_2`),
    :math:`0 \le G \perp H \ge 0`;
  - both bounds on one side, :math:`l \le e_1 \le u \perp e_2` with :math:`e_2` free: the box
    pair :math:`e_1 = l \Rightarrow e_2 \ge 0`, :math:`l < e_1 < u \Rightarrow e_2 = 0`,
    :math:`e_1 = u \Rightarrow e_2 \le 0`; :math:`H = e_1` with :math:`[H_l, H_u] = [l, u]`
    (numbers: Pyomo requires constant bounds here too) and :math:`G = e_2` unbounded. Either
    operand order is accepted.

This is the box-MCP convention of :mod:`mcpkit.problems.mpcc` (and PATH's, AMPL's, GAMS's), so
the residual of a pair is :math:`|H_j - \Pi_{[H_l, H_u]}(H_j - G_j)|`.

**Refused, with a typed error naming the component** (nothing is dropped silently): integer or
binary variables that are not fixed (unless ``relax_integrality=True`` asks to read them as
continuous within their bounds, which is what an NLP solver given such a model does unasked);
external functions; more than one active objective; active components of other types
(``SOSConstraint``, ``LogicalConstraint``, GDP ``Disjunct``, network ``Port``/``Arc``, ...); a
complementarity without exactly two finite bounds, with an ignored bounded side, or with a non-
constant box bound; expressions with operations CasADi lacks.
Deactivated components are skipped, as every Pyomo solver skips them.

Expressions are converted by walking Pyomo's expression trees once
(:class:`PyomoToCasadi`) into CasADi SX over the symbols :math:`x, p`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import casadi as ca
import numpy as np

from mcpkit.errors import MCPInputError
from mcpkit.problems.hooks import Hook, provide
from mcpkit.problems.mpcc import MPCC

#: Component types an imported model may contain (active), by ``ctype.__name__``: data-carrying
#: or structural types whose content is read (or that hold nothing to solve).
ALLOWED_CTYPES = frozenset(
    {
        "Var", "Param", "Set", "RangeSet", "SetOf", "Constraint", "Objective", "Expression",
        "Complementarity", "Block", "Suffix", "ExternalFunction", "BuildAction", "BuildCheck",
        "ContinuousSet", "DerivativeVar", "Integral", "Reference",
    }
)  # fmt: skip

_UNARY = {
    "sin": ca.sin, "cos": ca.cos, "tan": ca.tan, "asin": ca.asin, "acos": ca.acos, "atan": ca.atan,
    "sinh": ca.sinh, "cosh": ca.cosh, "tanh": ca.tanh, "asinh": ca.asinh, "acosh": ca.acosh,
    "atanh": ca.atanh, "exp": ca.exp, "log": ca.log, "log10": ca.log10, "sqrt": ca.sqrt,
    "ceil": ca.ceil, "floor": ca.floor, "abs": ca.fabs,
}  # fmt: skip


class PyomoToCasadi:
    """Pyomo expressions -> CasADi SX over given symbols for variables and mutable parameters.

    Parameters
    ----------
    symbols
        ``id(VarData or ParamData) -> SX`` for every non-constant leaf that may occur.
    """

    def __init__(self, symbols: dict[int, ca.SX]) -> None:
        from pyomo.core.expr.visitor import StreamBasedExpressionVisitor

        self.symbols = symbols
        self._named: dict[int, ca.SX] = {}
        self._where = ""
        self._visitor = StreamBasedExpressionVisitor(beforeChild=self._before_child, exitNode=self._exit_node)

    def convert(self, expr: Any, where: str) -> ca.SX:
        """The SX of ``expr`` (``where`` names the component, for error messages)."""
        self._where = where
        done, val = self._leaf(expr)
        out = val if done else self._visitor.walk_expression(expr)
        return out if isinstance(out, ca.SX) else ca.SX(out)

    def _leaf(self, node: Any) -> tuple[bool, Any]:
        """``(True, value)`` for a leaf (number, variable, parameter, constant), else ``(False, None)``."""
        from pyomo.core.expr.numvalue import native_types, value

        if type(node) in native_types:
            if isinstance(node, bool | int | float):
                return True, float(node)
            raise MCPInputError(f"{self._where}: non-numeric constant {node!r} in an expression")
        if node.is_expression_type():
            if node.is_named_expression_type() and id(node) in self._named:
                return True, self._named[id(node)]
            return False, None
        sym = self.symbols.get(id(node))
        if sym is not None:
            return True, sym
        if node.is_variable_type() or node.is_parameter_type():
            if node.is_fixed() and not node.is_variable_type():
                return True, float(value(node))
            raise MCPInputError(f"{self._where}: {node.name} is not among the imported symbols")
        if node.is_fixed():  # NumericConstant, units
            return True, float(value(node))
        raise MCPInputError(f"{self._where}: cannot convert {type(node).__name__} {node}")

    def _before_child(self, node: Any, child: Any, idx: int) -> tuple[bool, Any]:
        done, val = self._leaf(child)
        return (False, val) if done else (True, None)

    def _exit_node(self, node: Any, data: list[Any]) -> Any:
        import pyomo.core.expr as E

        if isinstance(node, E.ExternalFunctionExpression):
            fname = getattr(node._fcn, "name", str(node._fcn))
            lib = getattr(node._fcn, "_function", None)
            what = f"{fname!r}" + (f" ({lib!r} in {getattr(node._fcn, '_library', '?')!r})" if lib else "")
            raise MCPInputError(
                f"{self._where}: external function {what} cannot be imported (mcpkit needs "
                "the expression graph; write the function with Pyomo operators)"
            )
        if isinstance(node, E.UnaryFunctionExpression):
            fn = _UNARY.get(node.getname())
            if fn is None:
                raise MCPInputError(f"{self._where}: function {node.getname()!r} has no CasADi counterpart")
            out = fn(data[0])
        elif isinstance(node, E.Expr_ifExpression):
            out = ca.if_else(data[0], data[1], data[2])
        elif isinstance(node, E.MaxExpression):
            out = data[0]
            for d in data[1:]:
                out = ca.fmax(out, d)
        elif isinstance(node, E.MinExpression):
            out = data[0]
            for d in data[1:]:
                out = ca.fmin(out, d)
        elif isinstance(node, E.EqualityExpression):
            out = data[0] == data[1]
        elif isinstance(node, E.InequalityExpression):
            out = data[0] < data[1] if node.strict else data[0] <= data[1]
        elif isinstance(node, E.RangedExpression):
            s0, s1 = node.strict
            lo = data[0] < data[1] if s0 else data[0] <= data[1]
            hi = data[1] < data[2] if s1 else data[1] <= data[2]
            out = ca.logic_and(lo, hi)
        elif isinstance(node, E.SumExpression | E.LinearExpression) and len(data) > 2:
            out = ca.sum1(ca.vertcat(*data))  # one CasADi call instead of a chain of Python additions
        elif isinstance(
            node,
            E.SumExpression
            | E.LinearExpression
            | E.ProductExpression
            | E.MonomialTermExpression
            | E.DivisionExpression
            | E.PowExpression
            | E.NegationExpression,
        ):
            out = node._apply_operation(data)
        elif node.is_named_expression_type():
            out = data[0]
            self._named[id(node)] = out
        else:
            raise MCPInputError(
                f"{self._where}: expression type {type(node).__name__} ({node}) is not supported"
            )
        return out


@dataclass
class PyomoMPCCSource:
    """The map between an imported MPCC and its Pyomo model (``mpcc.pyomo_source``).

    Attributes
    ----------
    model
        The Pyomo model.
    variables
        ``VarData`` of :math:`x`, in order.
    params
        ``ParamData`` (mutable) and fixed ``VarData`` of :math:`p`, in order.
    objective
        The active ``ObjectiveData`` (``None``: no objective, :math:`f = 0`).
    sense
        ``+1`` minimise, ``-1`` maximise (the MPCC's :math:`f` is ``sense * objective``).
    """

    model: Any
    variables: list[Any]
    params: list[Any]
    objective: Any | None
    sense: int
    fingerprint: tuple[Any, ...] = field(default=(), repr=False)

    def parameter_values(self) -> np.ndarray:
        """The current values of :math:`p` (mutable parameters, fixed variables)."""
        from pyomo.environ import value

        out = np.array([_num(value(q, exception=False)) for q in self.params], dtype=float)
        bad = [q.name for q, v in zip(self.params, out, strict=True) if not np.isfinite(v)]
        if bad:
            raise MCPInputError(
                f"Pyomo model: parameters or fixed variables without a finite value: {bad[:8]}"
            )
        return out

    def start(self, lbx: np.ndarray, ubx: np.ndarray) -> np.ndarray:
        """The current variable values (unset: 0), clipped to the bounds."""
        x = np.array([_num(v.value) for v in self.variables], dtype=float)
        return np.clip(np.where(np.isfinite(x), x, 0.0), lbx, ubx)

    def write_back(self, x: np.ndarray) -> None:
        """Set the model's variables to ``x`` (finite entries only)."""
        for v, val in zip(self.variables, np.asarray(x, dtype=float).reshape(-1), strict=True):
            if np.isfinite(val):
                v.set_value(float(val), skip_validation=True)

    def objective_value(self) -> float:
        """The Pyomo objective at the model's current values (``nan`` without an objective)."""
        from pyomo.environ import value

        if self.objective is None:
            return math.nan
        return _num(value(self.objective.expr, exception=False))


def _num(v: Any) -> float:
    try:
        return float(v) if v is not None else math.nan
    except (TypeError, ValueError):
        return math.nan


def active_objectives(model: Any) -> list[Any]:
    """The active ``ObjectiveData`` of ``model`` (descending into sub-blocks)."""
    import pyomo.environ as pyo

    return list(model.component_data_objects(pyo.Objective, active=True, descend_into=True))


def _check_components(model: Any) -> None:
    """Refuse active components of types the import cannot represent (named in the error)."""
    for comp in model.component_objects(active=True, descend_into=True):
        ctype = comp.ctype
        cname = getattr(ctype, "__name__", str(ctype))
        if cname not in ALLOWED_CTYPES:
            raise MCPInputError(
                f"MPCC.from_pyomo: component {comp.name!r} of type {cname} cannot be represented "
                f"(supported: {', '.join(sorted(ALLOWED_CTYPES))}); deactivate it or transform the model "
                "first"
            )


def _is_const(e: Any) -> bool:
    from pyomo.core.expr.numvalue import native_numeric_types

    return e is None or type(e) in native_numeric_types or e.is_constant()


def _bound(e: Any) -> Any:
    """A canonical-form bound: ``None`` for absent or infinite, else the number or expression."""
    from pyomo.environ import value

    if e is None:
        return None
    if _is_const(e):
        v = float(value(e))
        return None if math.isinf(v) else v
    return e


def _complementarity_rows(cc: Any) -> tuple[str, tuple[Any, ...]]:
    """``("eq", (expr,))`` or ``("pair", (H, lbH, ubH, G, lbG, ubG))`` for one condition
    (Pyomo expressions; numeric bounds, ``None`` unbounded). See the module docstring."""
    e1 = cc._canonical_expression(cc._args[0])
    e2 = cc._canonical_expression(cc._args[1])
    for eq, other in ((e1, e2), (e2, e1)):
        if len(eq) == 2:
            if len(other) == 3 and (_bound(other[0]) is not None or _bound(other[2]) is not None):
                raise MCPInputError(
                    f"MPCC.from_pyomo: {cc.name}: one side is an equality, so Pyomo reads the condition as "
                    "that equation alone and ignores the bound on the other side; state that bound as a "
                    "Var bound or a Constraint (or make the other side a plain expression)"
                )
            return "eq", (eq[1] - eq[0],)
    b = [_bound(e1[0]), _bound(e1[2]), _bound(e2[0]), _bound(e2[2])]
    n1 = (b[0] is not None) + (b[1] is not None)
    n2 = (b[2] is not None) + (b[3] is not None)
    if n1 + n2 != 2:
        raise MCPInputError(
            f"MPCC.from_pyomo: {cc.name} has {n1 + n2} finite bounds; a complementarity condition needs "
            "exactly two (one on each side, or l <= e1 <= u on one side and a plain expression on the other)"
        )
    if n1 == 1 and n2 == 1:

        def geq0(lo: Any, body: Any, hi: Any) -> Any:
            return body - lo if lo is not None else hi - body

        return "pair", (geq0(b[0], e1[1], b[1]), 0.0, None, geq0(b[2], e2[1], b[3]), 0.0, None)
    (lo, body, hi), free = ((b[0], e1[1], b[1]), e2[1]) if n1 == 2 else ((b[2], e2[1], b[3]), e1[1])
    if not (isinstance(lo, float) and isinstance(hi, float)):
        raise MCPInputError(
            f"MPCC.from_pyomo: {cc.name}: the bounds of l <= e <= u in a complementarity must be constants "
            "(as in Pyomo); a mutable Param or fixed Var there cannot be represented"
        )
    return "pair", (body, lo, hi, free, None, None)


def _constraint_rows(con: Any) -> list[tuple[Any, float, float]]:
    """Rows ``(expr, lb, ub)`` of one ``ConstraintData`` (see the module docstring)."""
    body, lo, hi = con.body, con.lower, con.upper
    lo_c, hi_c = _is_const(lo), _is_const(hi)
    if con.equality:
        if hi_c:
            v = _bound(hi)
            return [(body, v, v)]
        return [(body - hi, 0.0, 0.0)]
    rows: list[tuple[Any, float, float]] = []
    if lo_c and hi_c:
        lv, hv = _bound(lo), _bound(hi)
        return [(body, -math.inf if lv is None else lv, math.inf if hv is None else hv)]
    if lo is not None:
        rows.append((body, _bound(lo), math.inf) if lo_c else (body - lo, 0.0, math.inf))
    if hi is not None:
        rows.append((body, -math.inf, _bound(hi)) if hi_c else (hi - body, 0.0, math.inf))
    return [(e, -math.inf if a is None else a, math.inf if b is None else b) for e, a, b in rows]


def _ordered(found: dict[int, Any], order: Iterable[Any]) -> list[Any]:
    """``found``'s values in the order of ``order`` first, the rest in discovery order."""
    out, seen = [], set()
    for v in order:
        if id(v) in found and id(v) not in seen:
            out.append(v)
            seen.add(id(v))
    out += [v for k, v in found.items() if k not in seen]
    return out


def structure_fingerprint(model: Any) -> tuple[Any, ...]:
    """What an import depends on besides parameter values: the active components, their
    expressions (by identity), the variables' bounds, fixings and domains.

    Two calls give equal fingerprints exactly when a cached import of the model is still valid
    (mutable ``Param`` values and fixed variables' values may differ: they are parameters).
    """
    import pyomo.environ as pyo
    from pyomo.mpec import Complementarity

    parts: list[Any] = []
    for obj in model.component_data_objects(pyo.Objective, active=True, descend_into=True):
        parts.append(("o", id(obj), id(obj.expr), obj.sense))
    for con in model.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        parts.append(("c", id(con), id(con.expr)))
    for cc in model.component_data_objects(Complementarity, active=True, descend_into=True):
        parts.append(("cc", id(cc), id(cc._args[0]), id(cc._args[1])))
    for v in model.component_data_objects(pyo.Var, descend_into=True):
        parts.append(("v", id(v), v.fixed, v.lb, v.ub, v.is_continuous()))
    return tuple(parts)


def check_continuous(variables: Iterable[Any], where: str) -> None:
    """Refuse non-fixed integer or binary variables, naming the first few (module docstring)."""
    bad = [v for v in variables if not v.fixed and not v.is_continuous()]
    if bad:
        names = ", ".join(f"{v.name!r} ({v.domain})" for v in bad[:5])
        raise MCPInputError(
            f"{where}: variable {names} is integer (an integer domain); mcpkit solves continuous problems "
            "only: fix it, change its domain, or pass relax_integrality=True to treat it as continuous "
            "within its bounds"
        )


def mpcc_from_pyomo(model: Any, name: str | None = None, *, relax_integrality: bool = False) -> MPCC:
    """The :class:`~mcpkit.mpcc.MPCC` of a Pyomo model (module docstring); the map back to the model
    is ``mpcc.pyomo_source`` (a :class:`PyomoMPCCSource`). ``relax_integrality=True`` reads integer
    and binary variables as continuous within their bounds (domain bounds included) instead of
    refusing them.

    Raises
    ------
    MCPInputError
        For anything the import cannot represent, naming the component (module docstring).
    """
    import pyomo.environ as pyo
    from pyomo.core.base.block import BlockData
    from pyomo.core.expr.visitor import identify_mutable_parameters, identify_variables
    from pyomo.mpec import Complementarity

    if not isinstance(model, BlockData):
        raise MCPInputError(f"MPCC.from_pyomo expects a Pyomo model or block, got {type(model).__name__}")
    _check_components(model)
    objs = active_objectives(model)
    if len(objs) > 1:
        raise MCPInputError(
            f"MPCC.from_pyomo: {len(objs)} active objectives ({[o.name for o in objs][:5]}); an MPCC has one"
        )
    obj = objs[0] if objs else None
    # --- rows as Pyomo expressions: (expr, lb, ub, where)
    g_rows: list[tuple[Any, float, float, str]] = []
    pairs: list[tuple[Any, Any, Any, Any, Any, Any, str]] = []
    for con in model.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        for e, lo, hi in _constraint_rows(con):
            g_rows.append((e, lo, hi, f"constraint {con.name!r}"))
    for cc in model.component_data_objects(Complementarity, active=True, descend_into=True):
        kind, data = _complementarity_rows(cc)
        if kind == "eq":
            g_rows.append((data[0], 0.0, 0.0, f"complementarity {cc.name!r}"))
        else:
            pairs.append((*data, f"complementarity {cc.name!r}"))
    exprs: list[Any] = [e for e, *_ in g_rows] + [p[0] for p in pairs] + [p[3] for p in pairs]
    if obj is not None:
        exprs.append(obj.expr)
    # --- symbols: free variables -> x; mutable params, then fixed variables -> p
    free: dict[int, Any] = {}
    fixed: dict[int, Any] = {}
    params: dict[int, Any] = {}
    for e in exprs:
        if type(e) in (int, float):
            continue
        for v in identify_variables(e, include_fixed=True):
            (fixed if v.fixed else free).setdefault(id(v), v)
        for q in identify_mutable_parameters(e):
            params.setdefault(id(q), q)
    var_order = list(model.component_data_objects(pyo.Var, descend_into=True))
    xs = _ordered(free, var_order)
    if not relax_integrality:
        check_continuous(xs, "MPCC.from_pyomo")
    if not xs:
        raise MCPInputError(
            f"MPCC.from_pyomo: model {model.name!r} has no free variable in any active objective, constraint "
            "or complementarity (nothing to solve; are its index sets empty?)"
        )
    plist = _ordered(params, model.component_data_objects(pyo.Param, descend_into=True))
    plist += _ordered(fixed, var_order)
    x = ca.SX.sym("x", len(xs))
    p = ca.SX.sym("p", len(plist))
    symbols = dict(zip(map(id, xs), ca.vertsplit(x), strict=True))
    symbols.update(zip(map(id, plist), ca.vertsplit(p), strict=True))
    conv = PyomoToCasadi(symbols)

    def stack(items: list[Any]) -> ca.SX:
        return ca.vertcat(*items) if items else ca.SX(0, 1)

    g = stack([conv.convert(e, where) for e, _, _, where in g_rows])
    H = stack([conv.convert(pr[0], pr[6]) for pr in pairs])
    G = stack([conv.convert(pr[3], pr[6]) for pr in pairs])
    sense = 1
    f = ca.SX(0.0)
    if obj is not None:
        sense = 1 if obj.is_minimizing() else -1
        f = sense * conv.convert(obj.expr, f"objective {obj.name!r}")

    def arr(vals: Iterable[Any], default: float) -> np.ndarray:
        return np.array([default if v is None else float(v) for v in vals], dtype=float)

    lbx = arr((v.lb for v in xs), -math.inf)
    ubx = arr((v.ub for v in xs), math.inf)
    src = PyomoMPCCSource(model=model, variables=xs, params=plist, objective=obj, sense=sense)
    mpcc = MPCC(
        x=x,
        p=p,
        f=f,
        g=g,
        lbg=arr((r[1] for r in g_rows), -math.inf),
        ubg=arr((r[2] for r in g_rows), math.inf),
        lbx=lbx,
        ubx=ubx,
        G=G,
        H=H,
        x0=src.start(lbx, ubx),
        p0=src.parameter_values(),
        lbG=arr((pr[4] for pr in pairs), -math.inf),
        ubG=arr((pr[5] for pr in pairs), math.inf),
        lbH=arr((pr[1] for pr in pairs), -math.inf),
        ubH=arr((pr[2] for pr in pairs), math.inf),
        name=_safe_name(name or model.name or "pyomo"),
    )
    src.fingerprint = structure_fingerprint(model)
    mpcc.pyomo_source = src  # type: ignore[attr-defined]
    return mpcc


def pyomo_source(mpcc: MPCC) -> PyomoMPCCSource:
    """The :class:`PyomoMPCCSource` of an MPCC built by :func:`mpcc_from_pyomo`."""
    src = getattr(mpcc, "pyomo_source", None)
    if not isinstance(src, PyomoMPCCSource):
        raise MCPInputError("this MPCC was not built by MPCC.from_pyomo (it has no map to a Pyomo model)")
    return src


def _safe_name(name: str) -> str:
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in str(name))
    return out or "pyomo"


provide(Hook.MPCC_FROM_PYOMO, mpcc_from_pyomo)
