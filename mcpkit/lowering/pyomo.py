r"""Lowering of an :class:`~mcpkit.problems.mcp.MCP` to Pyomo, and Pyomo MCP models back to mcpkit.

:class:`ToPyomo` writes the box MCP :math:`l \le z \le u \perp F(z; p)` (PATH's form, the
operand order *variable first*) as ``pyomo.mpec`` complementarity conditions, one per pair
:math:`i`, by the pair's :class:`~mcpkit.lowering.slack.BoxCase` (the case split of
:class:`~mcpkit.lowering.slack.SlackForm`, the one every lowering takes):

* ``BOX`` (:math:`l_i < u_i` both finite): ``complements(inequality(l_i, z_i, u_i), F_i)``;
* ``LOWER``: ``complements(z_i >= l_i, F_i >= 0)``;
* ``UPPER``: ``complements(z_i <= u_i, F_i <= 0)``;
* ``FREE``: ``complements(F_i == 0, z_i)`` (the equation :math:`F_i = 0`, :math:`z_i` free);
* ``FIXED`` (:math:`l_i = u_i`): :math:`z_i` is fixed and :math:`F_i` unrestricted (no condition).

The pairs are stated whole, not in slack form: ``complements`` is the box pair itself, so
Pyomo's MPEC transformations, GAMS/AMPL and :func:`from_pyomo` read each one back as one pair.

Each variable block becomes one indexed ``Var`` (bounds :math:`l, u`; initial values from the
declaration's start), each parameter block one mutable ``Param`` (so values change without
rebuilding), each function block one indexed ``Complementarity``. Symbolic blocks are
lambdified from sympy into Pyomo expressions; block functions (:class:`PyomoBlocks`) become sparse
linear sums per row where a matrix meets a vector and row-wise expressions otherwise; affine
blocks :math:`F_B = M z_S + q(p)` become
linear sums built directly from the rows of :math:`M` (no sympy expansion): the nonzeros of
each row of a dense :math:`M`, or the stored entries of each CSR row of a sparse one (no dense
scan: time :math:`O(\mathrm{nnz} + n)`). A numeric :math:`q` enters as plain floats.

:func:`from_pyomo` goes the other way: a user's Pyomo model with ``Complementarity``
components becomes a backend-neutral MCP, with the map needed to write a solution back
(:func:`write_back`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import reduce
from typing import Any

import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sps
import sympy as sp
from pyomo.core.base.var import VarData
from pyomo.core.expr.relational_expr import EqualityExpression
from pyomo.core.expr.sympy_tools import sympyify_expression
from pyomo.core.expr.visitor import (
    identify_mutable_parameters,
    identify_variables,
    replace_expressions,
)
from pyomo.mpec import Complementarity, complements
from pyomo.repn import generate_standard_repn

from mcpkit.errors import MCPInputError
from mcpkit.lowering.base import Lowering
from mcpkit.lowering.slack import BoxCase, SlackForm
from mcpkit.problems import blocks as bx
from mcpkit.problems.functions import AffineFunction, BlockFunction, SymbolicFunction
from mcpkit.problems.mcp import MCP


def _pmax(a: Any, b: Any) -> Any:
    return pyo.Expr_if(IF=a >= b, THEN=a, ELSE=b)


def _pmin(a: Any, b: Any) -> Any:
    return pyo.Expr_if(IF=a <= b, THEN=a, ELSE=b)


def _psign(a: Any) -> Any:
    return pyo.Expr_if(IF=a > 0, THEN=1.0, ELSE=pyo.Expr_if(IF=a < 0, THEN=-1.0, ELSE=0.0))


def _unsupported(name: str) -> Callable[..., Any]:
    def fn(*_: Any) -> Any:
        raise MCPInputError(f"ToPyomo: the function {name!r} has no Pyomo counterpart")

    return fn


#: sympy function name -> Pyomo implementation, used when lambdifying into Pyomo expressions.
PYOMO_FUNCTIONS: dict[str, object] = {
    "sin": pyo.sin, "cos": pyo.cos, "tan": pyo.tan, "asin": pyo.asin, "acos": pyo.acos,
    "atan": pyo.atan, "sinh": pyo.sinh, "cosh": pyo.cosh, "tanh": pyo.tanh, "exp": pyo.exp,
    "log": pyo.log, "sqrt": pyo.sqrt, "Abs": abs, "sign": _psign,
    "Max": lambda *a: reduce(_pmax, a), "Min": lambda *a: reduce(_pmin, a),
    "atan2": _unsupported("atan2"), "floor": pyo.floor, "ceiling": pyo.ceil,
    "pi": math.pi, "E": math.e,
}  # fmt: skip


def _ppiecewise(*args: Any) -> Any:
    """``Piecewise((e1, c1), ..., (en, cn))`` as nested ``Expr_if`` (``args = c1, e1, ..., cn, en``)."""
    out: Any = math.nan
    for k in range(len(args) - 2, -1, -2):
        cond, expr = args[k], args[k + 1]
        out = expr if cond is True else pyo.Expr_if(IF=cond, THEN=expr, ELSE=out)
    return out


_PYOMO_PIECEWISE = sp.Function("pyomo_piecewise")
PYOMO_FUNCTIONS["pyomo_piecewise"] = _ppiecewise


def _pyomo_calls(e: Any) -> Any:
    """``Piecewise`` in ``e`` as calls of :func:`_ppiecewise` (Pyomo's ``Expr_if``).

    Its conditions must be comparisons (``Expr_if`` takes one inequality or equation);
    ``And``, ``Or``, ``Not`` and ``!=`` raise :class:`~mcpkit.errors.MCPInputError`.
    """
    if not isinstance(e, sp.Basic) or not e.has(sp.Piecewise):
        return e
    if e.has(sp.And, sp.Or, sp.Not, sp.Ne):
        raise MCPInputError(
            "ToPyomo: a piecewise row with a logical condition (and, or, not, !=) has no Pyomo "
            "counterpart; use backend='casadi'"
        )
    return e.replace(
        lambda x: isinstance(x, sp.Piecewise),
        lambda x: _PYOMO_PIECEWISE(*[a for pair in x.args for a in (pair.cond, pair.expr)]),
    )


def sympy_to_pyomo(
    exprs: Sequence[sp.Expr], symbols: Sequence[sp.Symbol], values: Sequence[Any]
) -> list[Any]:
    """Evaluate sympy expressions with Pyomo components substituted for ``symbols``.

    ``Piecewise`` rows (comparisons and ``if_else`` of a CasADi function) become ``Expr_if``.
    """
    if not exprs:
        return []
    exprs = [_pyomo_calls(e) for e in exprs]
    fn = sp.lambdify([list(symbols)], list(exprs), modules=[PYOMO_FUNCTIONS, "math"], cse=True)
    return list(fn(list(values)))


class PyomoBlocks(bx.RowsBackend):
    r"""Block expressions as lists of Pyomo expressions, one per row.

    A matrix leaf applied to a vector is one sparse linear sum per row over its stored entries
    (coefficients: the matrix parameter's mutable ``Param`` (or ``Var``) data, or floats), time
    :math:`O(\mathrm{nnz})`; elementwise operations act row by row.
    """

    def __init__(self, problem: MCP, zdata: list[Any], pdata: list[Any]) -> None:
        super().__init__()
        self.zdata, self.pdata = zdata, pdata

    def var(self, block: Any) -> list[Any]:
        return self.zdata[block.slice]

    def param(self, block: Any) -> list[Any]:
        return self.pdata[block.slice]

    def coefficients(self, leaf: bx.Param | bx.Const) -> Sequence[Any]:
        if isinstance(leaf, bx.Param):
            return self.pdata[leaf.block.slice]
        data = leaf.value.data if sps.issparse(leaf.value) else np.asarray(leaf.value).reshape(-1)
        return data.tolist()

    def quicksum(self, terms: list[Any]) -> Any:
        return pyo.quicksum(terms) if len(terms) > 1 else terms[0]

    def func(self, name: str, a: list[Any]) -> list[Any]:
        f = PYOMO_FUNCTIONS[name]
        return [f(x) for x in a]  # type: ignore[operator]


def _component_name(block: pyo.Block, name: str, suffix: str) -> str:
    """``name`` if it is free on ``block`` (and not a Block attribute), else ``name + suffix``."""
    if not hasattr(block, name):
        return name
    cand = f"{name}{suffix}"
    k = 2
    while hasattr(block, cand):
        cand = f"{name}{suffix}{k}"
        k += 1
    return cand


@dataclass
class PyomoMap:
    """Inverse data of :class:`ToPyomo`: which Pyomo components hold each block."""

    n: int
    var_names: dict[str, str]
    """Variable block -> name of its indexed ``Var`` on the Pyomo block."""
    param_names: dict[str, str]
    """Parameter block -> name of its mutable ``Param`` (or ``Var`` with ``params_as_vars``)."""
    cc_names: dict[str, str]
    """Variable block -> name of its indexed ``Complementarity`` (if built)."""
    slices: dict[str, slice]
    """Variable block -> slice into the stacked ``z``."""
    pslices: dict[str, slice]
    """Parameter block -> slice into the stacked ``p``."""
    F: list[Any] = field(default_factory=list, repr=False)
    """The Pyomo expressions :math:`F_i`, stacked like ``z``."""

    def variables(self, block: pyo.Block) -> list[Any]:
        """The Pyomo ``VarData`` of every :math:`z_i`, in declaration order."""
        out: list[Any] = []
        for name, comp in self.var_names.items():
            v = block.component(comp)
            out.extend(v[k] for k in range(self.slices[name].stop - self.slices[name].start))
        return out

    def parameters(self, block: pyo.Block) -> list[Any]:
        """The Pyomo ``ParamData`` (or ``VarData``) of every :math:`p_j`, in declaration order."""
        out: list[Any] = []
        for name, comp in self.param_names.items():
            c = block.component(comp)
            out.extend(c[k] for k in range(self.pslices[name].stop - self.pslices[name].start))
        return out

    def set_parameters(self, block: pyo.Block, p: np.ndarray) -> None:
        """Write the stacked parameter vector ``p`` into the block (mutable Params or fixed Vars)."""
        for data, val in zip(self.parameters(block), np.asarray(p, dtype=float).reshape(-1), strict=True):
            if isinstance(data, VarData):
                data.setlb(float(val))
                data.setub(float(val))
                data.set_value(float(val), skip_validation=True)
            else:
                data.set_value(float(val))

    def set_values(self, block: pyo.Block, z: np.ndarray) -> None:
        """Write the stacked ``z`` into the block's variables (for warm starts)."""
        for data, val in zip(self.variables(block), np.asarray(z, dtype=float).reshape(-1), strict=True):
            data.set_value(float(val), skip_validation=True)


class ToPyomo(Lowering):
    r"""Declaration -> Pyomo block with ``pyomo.mpec`` complementarities (module docstring).

    Parameters
    ----------
    complementarity
        Build the ``Complementarity`` components (default). ``False`` builds only the
        variables, parameters and the expressions :math:`F_i` (kept in the inverse data),
        for routes that state the pairs themselves.
    params_as_vars
        Make each parameter a ``Var`` with bounds :math:`p_j \le x \le p_j` instead of a
        mutable ``Param``, so an NL file written once keeps the parameters as columns.
    """

    def __init__(self, complementarity: bool = True, params_as_vars: bool = False) -> None:
        self.complementarity = complementarity
        self.params_as_vars = params_as_vars

    def apply(self, problem: MCP) -> tuple[pyo.ConcreteModel, PyomoMap]:
        problem.validate()
        m = pyo.ConcreteModel(name=problem.name)
        lb, ub, z0, p0 = problem.lb, problem.ub, problem.start, problem.parameter_values
        var_names: dict[str, str] = {}
        param_names: dict[str, str] = {}
        zdata: list[Any] = []
        pdata: list[Any] = []
        for pb in problem.parameter_blocks:
            nm = _component_name(m, pb.name, "_param")
            vals = p0[pb.slice]
            if self.params_as_vars:
                comp = pyo.Var(
                    range(pb.size),
                    bounds=lambda _m, k, v=vals: (float(v[k]), float(v[k])),
                    initialize=lambda _m, k, v=vals: float(v[k]),
                )
            else:
                comp = pyo.Param(range(pb.size), mutable=True, initialize=lambda _m, k, v=vals: float(v[k]))
            m.add_component(nm, comp)
            param_names[pb.name] = nm
            pdata.extend(comp[k] for k in range(pb.size))
        for vb in problem.blocks:
            nm = _component_name(m, vb.name, "_var")
            sl = vb.slice
            lo, hi, st = lb[sl], ub[sl], z0[sl]

            def bounds(_m: Any, k: int, lo: np.ndarray = lo, hi: np.ndarray = hi) -> tuple[Any, Any]:
                return (
                    float(lo[k]) if np.isfinite(lo[k]) else None,
                    float(hi[k]) if np.isfinite(hi[k]) else None,
                )

            comp = pyo.Var(range(vb.size), bounds=bounds, initialize=lambda _m, k, st=st: float(st[k]))
            m.add_component(nm, comp)
            for k in range(vb.size):
                if lo[k] == hi[k]:
                    comp[k].fix(float(lo[k]))
            var_names[vb.name] = nm
            zdata.extend(comp[k] for k in range(vb.size))
        syms: list[sp.Symbol] | None = None  # every symbol, built only for symbolic blocks
        vals = zdata + pdata
        slices = {b.name: b.slice for b in problem.blocks}
        F: list[Any] = []
        blocks = bx.Evaluator(PyomoBlocks(problem, zdata, pdata))
        for vb in problem.blocks:
            fb = problem.function_block(vb.name)
            if isinstance(fb, BlockFunction):
                F.extend(blocks.value(fb.expr))
            elif isinstance(fb, SymbolicFunction):
                if syms is None:
                    syms = list(problem.variables) + list(problem.parameters)
                F.extend(sympy_to_pyomo(fb.exprs, syms, vals))
            elif isinstance(fb, AffineFunction):
                cols = [d for nmb in fb.over for d in zdata[slices[nmb]]]
                qnum = fb.q_values
                q = (
                    qnum.tolist()
                    if qnum is not None
                    else sympy_to_pyomo(fb.q, list(problem.parameters), pdata)
                )
                F.extend(_affine_rows(fb.M, cols, q))
            else:  # pragma: no cover - closed union
                raise TypeError(f"unknown function block type {type(fb).__name__}")
        form = SlackForm.from_bounds(lb, ub)
        _check_constant_rows(problem, F, form)
        cc_names: dict[str, str] = {}
        if self.complementarity:
            for vb in problem.blocks:
                nm = _component_name(m, f"cc_{vb.name}", "_")
                comp = m.component(var_names[vb.name])
                s = vb.start
                m.add_component(
                    nm,
                    Complementarity(
                        range(vb.size),
                        rule=lambda _m, k, comp=comp, s=s: _pair(comp[k], F[s + k], form, s + k),
                    ),
                )
                cc_names[vb.name] = nm
        info = PyomoMap(
            n=problem.n,
            var_names=var_names,
            param_names=param_names,
            cc_names=cc_names,
            slices=slices,
            pslices={b.name: b.slice for b in problem.parameter_blocks},
            F=F,
        )
        return m, info

    def invert(self, solution: pyo.Block, inverse_data: PyomoMap) -> np.ndarray:
        """The stacked ``z`` (declaration order) from the Pyomo variables' current values."""
        vals = [v.value for v in inverse_data.variables(solution)]
        return np.array([np.nan if v is None else float(v) for v in vals], dtype=float)


def _affine_rows(M: Any, cols: Sequence[Any], q: Sequence[Any]) -> list[Any]:
    r"""Pyomo expressions :math:`\sum_j M_{rj}\, x_j + q_r`, one per row, over the nonzeros of ``M``.

    ``M`` is dense (each row scanned once for its nonzeros) or a CSR matrix (its stored entries
    read from ``indptr``/``indices``/``data``; no dense row is formed). A row with no nonzero
    is its constant :math:`q_r`.
    """
    out: list[Any] = []
    if sps.issparse(M):
        ptr, idx, val = M.indptr.tolist(), M.indices.tolist(), M.data.tolist()
        for r in range(M.shape[0]):
            lo, hi = ptr[r], ptr[r + 1]
            out.append(
                pyo.quicksum((val[k] * cols[idx[k]] for k in range(lo, hi)), start=q[r]) if hi > lo else q[r]
            )
        return out
    for r in range(M.shape[0]):
        row = M[r]
        nz = np.flatnonzero(row)
        out.append(pyo.quicksum((float(row[j]) * cols[j] for j in nz), start=q[r]) if nz.size else q[r])
    return out


def _constant(F: Any) -> float | None:
    """The value of a row :math:`F_i` that depends on no variable and no mutable parameter, else None."""
    if isinstance(F, bool) or not pyo.is_constant(F):
        return None
    return float(pyo.value(F))


def _check_constant_rows(problem: MCP, F: Sequence[Any], form: SlackForm) -> None:
    r"""Refuse a pair :math:`l_i \le z_i \le u_i \perp c` with a constant :math:`c` that no :math:`z_i` meets.

    With :math:`F_i \equiv c` the pair holds at :math:`z_i = l_i` if :math:`c > 0`, at
    :math:`z_i = u_i` if :math:`c < 0` and anywhere in the box if :math:`c = 0`; so it has no
    solution when that bound is infinite (a free :math:`z_i` with :math:`c \ne 0`, :math:`c < 0`
    without an upper bound, :math:`c > 0` without a lower one). Raises
    :class:`~mcpkit.errors.MCPInputError` naming the pair, before any solver runs.
    """
    for i, row in enumerate(F):
        c = _constant(row)
        if c is None or form.case(i) is BoxCase.FIXED:
            continue
        if math.isnan(c) or (c > 0 and form.lb[i] == -math.inf) or (c < 0 and form.ub[i] == math.inf):
            block, k = problem.block_of(i)
            where = "z = lb, and lb = -inf" if c > 0 else "z = ub, and ub = inf" if c < 0 else "no z (NaN)"
            raise MCPInputError(
                f"MCP {problem.name!r}: pair {block}[{k}] has the constant function F = {c:g}, so it "
                f"holds only at {where}: the MCP has no solution"
            )


def _pair(z: Any, F: Any, form: SlackForm, i: int) -> Any:
    """Pair ``i`` of ``form`` as one ``complements(...)`` (or ``Skip``), by its :class:`BoxCase`.

    A constant :math:`F_i = c` (checked solvable by :func:`_check_constant_rows`) is stated by its
    solution set, since Pyomo refuses a complementarity with a constant side: no condition if
    :math:`c = 0`, else :math:`z_i` at the bound it pins, as ``complements(z >= l, z - l >= 0)``
    (:math:`c > 0`) or ``complements(z <= u, z - u <= 0)`` (:math:`c < 0`).
    """
    lo, hi, case = float(form.lb[i]), float(form.ub[i]), form.case(i)
    c = _constant(F)
    if case is BoxCase.FIXED or c == 0:
        return Complementarity.Skip
    if c is not None:
        return complements(z >= lo, z - lo >= 0) if c > 0 else complements(z <= hi, z - hi <= 0)
    if case is BoxCase.BOX:
        return complements(pyo.inequality(lo, z, hi), F)
    if case is BoxCase.LOWER:
        return complements(z >= lo, F >= 0)
    if case is BoxCase.UPPER:
        return complements(z <= hi, F <= 0)
    return complements(F == 0, z)


def to_pyomo(mcp: MCP, **kwargs: Any) -> tuple[pyo.ConcreteModel, Callable[[pyo.Block], np.ndarray]]:
    """``(block, inverse)``: the Pyomo model of ``mcp`` and ``inverse(block) -> z``."""
    lowering = ToPyomo(**kwargs)
    block, info = lowering.apply(mcp)
    return block, lambda b: lowering.invert(b, info)


# ---------------------------------------------------------------------------- from_pyomo
@dataclass
class PyomoSource:
    """Where each MCP variable of :func:`from_pyomo` lives in the user's Pyomo model."""

    model: Any
    """The Pyomo model the MCP was read from."""
    vars: list[Any]
    """One Pyomo ``VarData`` per MCP variable, or ``None`` for auxiliary variables."""
    params: list[Any]
    """One Pyomo mutable ``ParamData`` per MCP parameter."""


def _bound(b: Any) -> float | None:
    """A numeric bound from a canonical-expression entry (``None`` / ``±inf`` mean absent)."""
    if b is None:
        return None
    try:
        v = float(pyo.value(b))
    except (TypeError, ValueError) as exc:  # pragma: no cover - defensive
        raise MCPInputError(f"from_pyomo: a complementarity bound is not a number: {b}") from exc
    return v if math.isfinite(v) else None


def _single_var(expr: Any) -> tuple[Any, float, float] | None:
    """``(x, a, b)`` when ``expr = a*x + b`` with one non-fixed variable and numeric a != 0, b."""
    repn = generate_standard_repn(expr, compute_values=True, quadratic=False)
    if repn.nonlinear_expr is not None or len(repn.linear_vars) != 1:
        return None
    a = float(pyo.value(repn.linear_coefs[0]))
    if a == 0.0:
        return None
    return repn.linear_vars[0], a, float(pyo.value(repn.constant))


def from_pyomo(model: Any, name: str | None = None, *, relax_integrality: bool = False) -> MCP:
    r"""A backend-neutral MCP from a Pyomo model with ``pyomo.mpec`` ``Complementarity`` parts.

    Each condition ``complements(a, b)`` is read in Pyomo's canonical form
    :math:`l_1 \le e_1 \le u_1 \perp l_2 \le e_2 \le u_2`:

    * one side an equality :math:`e = c`: the equation :math:`e - c = 0`;
    * one side unbounded, the other with bounds: :math:`l \le e_1 \le u \perp F = e_2`;
    * both sides one-sided: :math:`e_1 \ge l_1 \perp e_2 - l_2 \ge 0` (signs for ``<=`` sides
      flipped so the pair reads in MCP box form).

    The bounded side must be :math:`a x + b` for a single variable :math:`x` (bounds and
    :math:`F` are rescaled by :math:`a`); otherwise an auxiliary variable :math:`s` with the
    side's bounds is added and the equation :math:`s - e_1 = 0` joins the equations. Equations
    (from equality sides, auxiliary definitions and active equality ``Constraint``\ s) are
    paired with the remaining *free* variables (any bijection gives the same MCP: a free
    variable's function must vanish). Mutable ``Param``\ s become MCP parameters; fixed
    variables are constants. The map back to the model is kept on the MCP
    (``mcp.pyomo_source``) for :func:`write_back`.

    Non-fixed integer or binary variables are refused unless ``relax_integrality=True`` reads
    them as continuous (:func:`mcpkit.lowering.from_pyomo.check_continuous`).

    Raises
    ------
    MCPInputError
        When the model is not a square MCP: no complementarities, a non-constant objective,
        inequality constraints outside complementarities, a bounded variable that is not the
        variable side of any pair, or a count mismatch of variables and equations; or it has
        integer variables (above).
    """
    ccs = _complementarities(model)
    cc_blocks = {id(c) for c in ccs}
    read = _Pairs()
    for cc in ccs:
        read.add(cc)
    for con in model.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        parent = con.parent_block()
        if parent is not None and id(parent) in cc_blocks:
            continue
        if not con.equality:
            raise MCPInputError(
                f"from_pyomo: constraint {con.name!r} is an inequality outside any Complementarity; "
                "an MCP states every inequality as a pair (use complements(z >= 0, expr >= 0))"
            )
        read.equations.append(con.body - con.upper)
        read.eq_src.append(_source_name(con))
    free = read.free_variables()
    if not relax_integrality:
        from mcpkit.lowering.from_pyomo import check_continuous

        check_continuous([x for x, *_ in read.pairs if x is not None] + free, "from_pyomo")
    if name is None:  # Pyomo names an unnamed model "unknown"
        name = model.name if model.name and model.name != "unknown" else "pyomo"
    pairs, aux, eqs = read.pairs, read.aux_defs, read.equations
    return _build_mcp(model, name, pairs, aux, eqs, free, read.pair_src, read.eq_src)


def _complementarities(model: Any) -> list[Any]:
    """The active ``Complementarity`` parts of a Pyomo model or block with no objective that
    depends on variables (else an :class:`MCPInputError`)."""
    from pyomo.core.base.block import BlockData

    if not isinstance(model, BlockData):
        raise MCPInputError(f"from_pyomo expects a Pyomo model or block, got {type(model).__name__}")
    ccs = list(model.component_data_objects(Complementarity, active=True, descend_into=True))
    if not ccs:
        raise MCPInputError(
            "from_pyomo: the model has no active Complementarity components "
            "(declare pairs with pyomo.mpec.Complementarity and complements(...))"
        )
    for obj in model.component_data_objects(pyo.Objective, active=True, descend_into=True):
        if not obj.expr.is_fixed() and list(identify_variables(obj.expr, include_fixed=False)):
            raise MCPInputError(
                f"from_pyomo: objective {obj.name!r} depends on variables; an MCP has no objective "
                "(an optimisation model with complementarity constraints is an MPCC: use mcpkit.MPCC)"
            )
    return ccs


class _Pairs:
    """The pairs and equations :func:`from_pyomo` reads, complementarity by complementarity."""

    def __init__(self) -> None:
        self.pairs: list[tuple[Any, float | None, float | None, Any]] = []  # (var or None, lo, hi, F)
        self.aux_defs: list[tuple[int, Any]] = []  # (pair index, e1): s_pair - e1 = 0
        self.equations: list[Any] = []
        self.pair_src: list[str] = []  # the Complementarity component of each pair
        self.eq_src: list[str] = []  # the component (Complementarity or Constraint) of each equation
        self.z_side: set[int] = set()  # ids of the variables that are a pair's variable side

    def add(self, cc: Any) -> None:
        """Read ``complements(a, b)`` in canonical form (the cases of :func:`from_pyomo`)."""
        e1 = cc._canonical_expression(cc._args[0])
        e2 = cc._canonical_expression(cc._args[1])
        if len(e1) == 2 or len(e2) == 2:
            eq = e1 if len(e1) == 2 else e2
            self.equations.append(eq[1] - eq[0])
            self.eq_src.append(_source_name(cc))
            return
        l1, u1, l2, u2 = _bound(e1[0]), _bound(e1[2]), _bound(e2[0]), _bound(e2[2])
        n1 = (l1 is not None) + (u1 is not None)
        n2 = (l2 is not None) + (u2 is not None)
        if n1 == 0 and n2 == 0:
            raise MCPInputError(f"from_pyomo: {cc.name} has no bound on either side (not a complementarity)")
        if n1 + n2 > 2 or (n1 == 2 and n2 != 0) or (n2 == 2 and n1 != 0):
            raise MCPInputError(
                f"from_pyomo: {cc.name} has {n1 + n2} finite bounds; a box pair needs "
                "l <= z <= u on one side and a plain expression on the other, or one bound on each side"
            )
        sides = [(l1, e1[1], u1), (l2, e2[1], u2)]
        if n1 == 1 and n2 == 1:
            (lz, ez, uz), F = self._one_bound_each(sides)
        else:
            (lz, ez, uz), (_, F, _) = (sides[0], sides[1]) if n1 else (sides[1], sides[0])
        sv1 = _single_var(ez)
        if sv1 is not None and id(sv1[0]) not in self.z_side and not sv1[0].fixed:
            x, a, b = sv1
            lo = None if lz is None else (lz - b) / a
            hi = None if uz is None else (uz - b) / a
            if a < 0:
                lo, hi, F = hi, lo, -F
            _check_own_bounds(x, lo, hi, cc.name)
            self.z_side.add(id(x))
            self.pairs.append((x, lo, hi, F))
        else:
            self.aux_defs.append((len(self.pairs), ez))
            self.pairs.append((None, lz, uz, F))
        self.pair_src.append(_source_name(cc))

    def _one_bound_each(self, sides: list[tuple[Any, Any, Any]]) -> tuple[tuple[Any, Any, Any], Any]:
        r"""Both sides one-sided: the variable side (a single variable not yet used, the first
        preferred) and :math:`F`, the other side as :math:`g \ge 0`, signed for the box form."""
        order = [0, 1]
        sv = [_single_var(s[1]) for s in sides]
        if not (sv[0] is not None and id(sv[0][0]) not in self.z_side) and (
            sv[1] is not None and id(sv[1][0]) not in self.z_side
        ):
            order = [1, 0]
        (lz, ez, uz), (lf, ef, uf) = sides[order[0]], sides[order[1]]
        g = ef - lf if lf is not None else uf - ef  # g >= 0 on the function side
        return (lz, ez, uz), g if lz is not None else -g

    def free_variables(self) -> list[Any]:
        """The variables outside the pairs, each to be paired with an equation; an
        :class:`MCPInputError` when one has bounds or their count is not the equations'."""
        seen: dict[int, Any] = {}
        exprs = [F for *_, F in self.pairs] + [e for _, e in self.aux_defs] + self.equations
        for e in exprs:
            for v in identify_variables(e, include_fixed=False):
                seen.setdefault(id(v), v)
        free = [v for k, v in seen.items() if k not in self.z_side]
        bounded = [v.name for v in free if v.has_lb() or v.has_ub()]
        if bounded:
            raise MCPInputError(
                f"from_pyomo: variables {bounded[:8]} have bounds but are not the variable side of any "
                "complementarity; a bounded variable needs its own pair"
            )
        n_pairs, n_eq = len(self.pairs), len(self.equations) + len(self.aux_defs)
        if len(free) != n_eq:
            raise MCPInputError(
                f"from_pyomo: not square: {n_pairs + len(free)} variables "
                f"({n_pairs} in complementarity pairs, {len(free)} free) but {n_pairs} pairs and "
                f"{n_eq} equations"
            )
        return free


def _check_own_bounds(x: Any, lo: float | None, hi: float | None, where: str) -> None:
    """The variable's declared bounds must not be tighter than the pair's (else not an MCP)."""
    xl = x.lb if x.has_lb() else None
    xu = x.ub if x.has_ub() else None
    if (xl is not None and (lo is None or xl > lo + 1e-14)) or (
        xu is not None and (hi is None or xu < hi - 1e-14)
    ):
        raise MCPInputError(
            f"from_pyomo: variable {x.name!r} has declared bounds [{xl}, {xu}] tighter than its "
            f"complementarity bounds [{lo}, {hi}] in {where}; drop the Var bounds or state them in "
            "the complementarity"
        )


def _source_name(obj: Any) -> str:
    """The Pyomo component ``obj`` belongs to, as a block-safe name (``m.b.x[1]`` -> ``b_x``)."""
    return _safe_name(obj.parent_component().getname(fully_qualified=True))


def _unique(base: str, used: set[str], suffix: str) -> str:
    """``base`` if free, else ``base_suffix``, ``base_suffix2``, ...; recorded in ``used``."""
    name = base if base.isidentifier() else f"c_{base}"
    if name in used:
        name = f"{name}_{suffix}"
        k = 2
        while f"{name}{k}" in used or name in used:
            name = f"{name.rstrip('0123456789')}{k}"
            k += 1
    used.add(name)
    return name


def _build_mcp(
    model: Any,
    name: str,
    pairs: list[tuple[Any, float | None, float | None, Any]],
    aux_defs: list[tuple[int, Any]],
    equations: list[Any],
    free: list[Any],
    pair_src: list[str],
    eq_src: list[str],
) -> MCP:
    """Assemble the MCP with the model's names.

    Variable blocks: the pairs grouped by their ``Var`` component and ``Complementarity``
    component, each block named after the ``Var`` (``x``; ``x_c`` when several Complementarity
    components pair parts of ``x``; ``s_c`` for the auxiliary variables of ``c``), then the free
    variables grouped by ``Var`` component; parameter blocks: one per ``Param`` component. The
    Pyomo components that give each block's functions are kept in
    ``mcp.function_sources`` (block -> names), which the printer shows.
    """
    groups: dict[tuple[str, str], list[int]] = {}
    for k, ((x, *_), cc) in enumerate(zip(pairs, pair_src, strict=True)):
        groups.setdefault((_source_name(x) if x is not None else "", cc), []).append(k)
    order = [k for ks in groups.values() for k in ks]
    pos = {k: i for i, k in enumerate(order)}
    pairs = [pairs[k] for k in order]
    pair_src = [pair_src[k] for k in order]
    aux_defs = [(pos[k], e) for k, e in aux_defs]
    free_groups: dict[str, list[Any]] = {}
    for v in free:
        free_groups.setdefault(_source_name(v), []).append(v)
    free = [v for vs in free_groups.values() for v in vs]
    # rows in z order: the pairs' F, then the free variables' equations (auxiliary definitions first)
    row_src = pair_src + [pair_src[k] for k, _ in aux_defs] + eq_src
    used: set[str] = set()
    var_groups: dict[str, int] = {}
    for var, _ in groups:
        var_groups[var] = var_groups.get(var, 0) + 1
    specs: list[tuple[str, int]] = []
    for (var, cc), ks in groups.items():
        base = (var if var_groups[var] == 1 else f"{var}_{cc}") if var else f"s_{cc}"
        specs.append((_unique(base, used, "pair"), len(ks)))
    for var, vs in free_groups.items():
        specs.append((_unique(var, used, "free"), len(vs)))

    F_all = [F for *_, F in pairs]
    zvars = [x for x, *_ in pairs] + free
    lb = np.array([-math.inf if lo is None else lo for _, lo, _, _ in pairs] + [-math.inf] * len(free))
    ub = np.array([math.inf if hi is None else hi for _, _, hi, _ in pairs] + [math.inf] * len(free))
    start = np.array([0.0 if x is None or x.value is None else float(x.value) for x in zvars], dtype=float)
    start = np.clip(np.where(np.isfinite(start), start, 0.0), lb, ub)
    mcp = MCP(_safe_name(name))
    # parameters: every mutable Param used anywhere, one block per Param component
    params: dict[int, Any] = {}
    all_exprs = F_all + [e for _, e in aux_defs] + equations
    for e in all_exprs:
        for prm in identify_mutable_parameters(e):
            params.setdefault(id(prm), prm)
    pgroups: dict[str, list[Any]] = {}
    for prm in params.values():
        pgroups.setdefault(_source_name(prm), []).append(prm)
    plist = [q for qs in pgroups.values() for q in qs]
    psyms: list[sp.Symbol] = []
    for pname, qs in pgroups.items():
        values = [float(pyo.value(q)) for q in qs]
        psyms += list(mcp.add_parameters(_unique(pname, used, "param"), len(qs), value=values))
    zsyms: list[sp.Symbol] = []
    slices: list[slice] = []
    for bname, size in specs:
        sl = slice(len(zsyms), len(zsyms) + size)
        zsyms += list(mcp.add_variables(bname, size, lb=lb[sl], ub=ub[sl], start=start[sl]))
        slices.append(sl)
    var_sym = {id(x): s for x, s in zip(zvars, zsyms, strict=True) if x is not None}
    par_sym = {id(q): s for q, s in zip(plist, psyms, strict=True)}
    affine = _try_affine(F_all, aux_defs, equations, zvars, var_sym, par_sym)
    names = [b for b, _ in specs]
    if affine is not None:
        M, q = affine
        for bname, sl in zip(names, slices, strict=True):
            mcp.add_affine(bname, M[sl], q[sl], over=names)
    else:
        rows = [_to_sympy(F, var_sym, par_sym) for F in F_all]
        rows += [zsyms[k] - _to_sympy(e, var_sym, par_sym) for k, e in aux_defs]
        rows += [_to_sympy(e, var_sym, par_sym) for e in equations]
        for bname, sl in zip(names, slices, strict=True):
            mcp.add_functions(bname, rows[sl])
    mcp.__dict__["pyomo_source"] = PyomoSource(model=model, vars=zvars, params=plist)
    mcp.__dict__["function_sources"] = {
        bname: ", ".join(dict.fromkeys(row_src[sl])) for bname, sl in zip(names, slices, strict=True)
    }
    return mcp


def _safe_name(name: str) -> str:
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in str(name))
    return out or "pyomo"


def _to_sympy(expr: Any, var_sym: dict[int, sp.Symbol], par_sym: dict[int, sp.Symbol]) -> sp.Expr:
    """Pyomo expression -> sympy in the MCP's symbols (fixed variables become numbers)."""
    if isinstance(expr, (int, float)):
        return sp.Float(expr)
    if isinstance(expr, EqualityExpression):  # pragma: no cover - callers pass bodies
        expr = expr.arg(0) - expr.arg(1)
    if par_sym:
        # Pyomo's keep_mutable_parameters fails on indexed ParamData (no ``.mutable``), so
        # mutable parameters are swapped for stand-in variables first.
        stand = _stand_ins(par_sym)
        expr = replace_expressions(
            expr, substitution_map={k: v for k, (v, _) in stand.items()}, remove_named_expressions=True
        )
        var_sym = {**var_sym, **{id(v): s for v, s in stand.values()}}
    try:
        omap, sexpr = sympyify_expression(expr)
    except Exception as exc:
        raise MCPInputError(f"from_pyomo: cannot convert expression {expr} to sympy ({exc})") from exc
    subs: dict[sp.Symbol, Any] = {}
    for s in omap.sympyVars():
        obj = omap.getPyomoSymbol(s)
        k = id(obj)
        if k in var_sym:
            subs[s] = var_sym[k]
        elif k in par_sym:
            subs[s] = par_sym[k]
        elif getattr(obj, "fixed", False) or not hasattr(obj, "fixed"):
            subs[s] = sp.Float(float(pyo.value(obj)))
        else:  # pragma: no cover - every free variable was collected before
            raise MCPInputError(f"from_pyomo: variable {obj.name} is not part of the MCP")
    return sp.sympify(sexpr).xreplace(subs)


_STAND_INS: dict[tuple[int, ...], dict[int, tuple[Any, sp.Symbol]]] = {}


def _stand_ins(par_sym: dict[int, sp.Symbol]) -> dict[int, tuple[Any, sp.Symbol]]:
    """One scratch Pyomo ``Var`` per parameter (cached per parameter set)."""
    key = tuple(sorted(par_sym))
    if key not in _STAND_INS:
        scratch = pyo.ConcreteModel()
        scratch.pv = pyo.Var(range(len(key)))
        _STAND_INS.clear()  # keep only the latest set alive
        _STAND_INS[key] = {k: (scratch.pv[j], par_sym[k]) for j, k in enumerate(key)}
        _STAND_INS[key][-1] = (scratch, sp.Symbol("_scratch"))  # keep the model referenced
    return {k: v for k, v in _STAND_INS[key].items() if k != -1}


def _try_affine(
    F_all: list[Any],
    aux_defs: list[tuple[int, Any]],
    equations: list[Any],
    zvars: list[Any],
    var_sym: dict[int, sp.Symbol],
    par_sym: dict[int, sp.Symbol],
) -> tuple[np.ndarray, list[sp.Expr]] | None:
    """``(M, q)`` when every row is affine in ``z`` with numeric coefficients (q may use p).

    Rows are read with Pyomo's standard representation (no sympy), so large LCPs stay fast.
    """
    n = len(zvars)
    if n * n > 4_000_000:
        return None
    col = {id(x): j for j, x in enumerate(zvars) if x is not None}
    rows: list[tuple[Any, int | None, float]] = [(F, None, 1.0) for F in F_all]
    rows += [(e, k, -1.0) for k, e in aux_defs]  # s_k - e_k
    rows += [(e, None, 1.0) for e in equations]
    M = np.zeros((n, n))
    q: list[sp.Expr] = []
    for r, (e, aux, sign) in enumerate(rows):
        if isinstance(e, (int, float)):
            q.append(sp.Float(sign * e))
            if aux is not None:
                M[r, aux] += 1.0
            continue
        repn = generate_standard_repn(e, compute_values=False, quadratic=False)
        if repn.nonlinear_expr is not None:
            return None
        for c, v in zip(repn.linear_coefs, repn.linear_vars, strict=True):
            if not isinstance(c, (int, float)):
                if list(identify_mutable_parameters(c)):
                    return None
                c = pyo.value(c)
            M[r, col[id(v)]] += sign * float(c)
        if aux is not None:
            M[r, aux] += 1.0
        const = repn.constant
        q.append(
            sign
            * (
                sp.Float(float(const))
                if isinstance(const, (int, float))
                else _to_sympy(const, var_sym, par_sym)
            )
        )
    return M, q


def write_back(mcp_or_model: Any, result: Any) -> None:
    """Write a solution of :func:`from_pyomo`'s MCP into the Pyomo model's variables.

    Parameters
    ----------
    mcp_or_model
        The MCP returned by :func:`from_pyomo` (it carries the map to the model).
    result
        An :class:`~mcpkit.solving.result.MCPResult` or a stacked ``z`` vector.
    """
    src = getattr(mcp_or_model, "pyomo_source", None) or mcp_or_model.__dict__.get("pyomo_source")
    if not isinstance(src, PyomoSource):
        raise MCPInputError("write_back: pass the MCP returned by from_pyomo (it carries the variable map)")
    z = np.asarray(getattr(result, "z", result), dtype=float).reshape(-1)
    if z.shape != (len(src.vars),):
        raise MCPInputError(f"write_back: expected {len(src.vars)} values, got shape {z.shape}")
    for v, val in zip(src.vars, z, strict=True):
        if v is not None and np.isfinite(val):
            v.set_value(float(val), skip_validation=True)
