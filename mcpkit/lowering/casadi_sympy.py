r"""CasADi SX expressions as sympy expressions, operation for operation.

:func:`casadi_to_sympy` replays a function's SX algorithm (the walker of
:mod:`mcpkit.lowering.sx_replay`) with sympy's counterpart of every operation, so
:math:`y = f(x)` becomes the sympy expression :math:`\tilde y = \tilde f(\tilde x)` in the given
symbols, computing what CasADi computes (sympy may fold constants and merge equal terms). Used by
the CasADi importer (:mod:`mcpkit.lowering.from_casadi`) and by the MPCC printer, which prints
short rows as formulas. The Pyomo counterpart is :mod:`mcpkit.lowering.casadi_pyomo`.

Nonsmooth operations have exact counterparts: ``fabs``, ``fmin``, ``fmax`` are ``Abs``, ``Min``,
``Max``; a comparison or logic value (0 or 1 in CasADi) is the indicator
``Piecewise((1, cond), (0, True))``, and CasADi's ``if_else_zero(c, x)`` (an SX ``if_else(c, a, b)``
is ``if_else_zero(c, a) + if_else_zero(!c, b)``) is ``Piecewise((x, cond), (0, True))``, so
that ``if_else(z > 2, -9, 0)`` reads ``Piecewise((-9, z > 2), (0, True))``.
:func:`mcpkit.lowering.casadi.sympy_to_casadi` lowers them back to ``if_else`` and CasADi's
comparisons, whose derivatives CasADi takes branch by branch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import casadi as ca
import sympy as sp

from mcpkit.lowering.sx_replay import ARITHMETIC_BINARY, ARITHMETIC_UNARY, OP_NAMES, elementary, replay_sx

#: What works for a function the declaration cannot state (appended to the refusals).
SOLVE_IT_DIRECTLY = (
    "mcpkit.solve_mcp(F, None, lb, ub, z0, method='newton') solves it on the CasADi function itself"
)


def _number(v: float) -> sp.Expr:
    """A CasADi constant as a sympy number (integers stay integers, so ``x**2`` stays a square)."""
    return sp.Integer(int(v)) if v.is_integer() and abs(v) < 2.0**53 else sp.Float(v)


def indicator(condition: Any) -> sp.Expr:
    r"""A CasADi comparison or logic value as sympy: :math:`1` where ``condition`` holds, else :math:`0`."""
    return sp.Piecewise((sp.Integer(1), condition), (sp.Integer(0), True))


def condition_of(value: Any) -> Any:
    r"""The sympy condition a CasADi value stands for in ``if_else`` and logic: :math:`v \ne 0`.

    An :func:`indicator` gives back its own condition (so ``if_else(z > 2, a, b)`` reads
    ``z > 2``, not ``Piecewise(...) != 0``).
    """
    if isinstance(value, sp.Piecewise) and len(value.args) == 2:
        (one, cond), (zero, rest) = value.args
        if one == 1 and zero == 0 and rest == sp.true:
            return cond
    if value in (0, 1):  # a constant condition (sympy folded it)
        return sp.true if value else sp.false
    return sp.Ne(value, 0)


def _if_else_zero(c: Any, x: Any) -> sp.Expr:
    """CasADi's ``if_else_zero(c, x)``: ``x`` where ``c`` holds, else 0 (``if_else`` is two of them)."""
    return sp.Piecewise((x, condition_of(c)), (sp.Integer(0), True))


_UNARY: dict[int, Callable[[Any], Any]] = {
    **ARITHMETIC_UNARY,
    ca.OP_TWICE: lambda a: 2 * a,
    ca.OP_INV: lambda a: 1 / a,
    **elementary(sp),
    # the lowerings (CasADi, GAMSPy) know no inverse hyperbolic functions: their log forms
    ca.OP_ASINH: lambda a: sp.log(a + sp.sqrt(a**2 + 1)),
    ca.OP_ACOSH: lambda a: sp.log(a + sp.sqrt(a**2 - 1)),
    ca.OP_ATANH: lambda a: (sp.log(1 + a) - sp.log(1 - a)) / 2,
    ca.OP_FABS: sp.Abs,
    ca.OP_FLOOR: sp.floor,
    ca.OP_CEIL: sp.ceiling,
    ca.OP_SIGN: sp.sign,
    ca.OP_LOG1P: lambda a: sp.log(1 + a),
    ca.OP_EXPM1: lambda a: sp.exp(a) - 1,
    ca.OP_NOT: lambda a: indicator(sp.Not(condition_of(a))),
}
_BINARY: dict[int, Callable[[Any, Any], Any]] = {
    **ARITHMETIC_BINARY,
    ca.OP_FMIN: sp.Min,
    ca.OP_FMAX: sp.Max,
    ca.OP_ATAN2: sp.atan2,
    ca.OP_HYPOT: lambda a, b: sp.sqrt(a**2 + b**2),
    # comparisons and logic are 0/1 values in CasADi: indicators here; if_else is piecewise
    ca.OP_LT: lambda a, b: indicator(sp.Lt(a, b)),
    ca.OP_LE: lambda a, b: indicator(sp.Le(a, b)),
    ca.OP_EQ: lambda a, b: indicator(sp.Eq(a, b)),
    ca.OP_NE: lambda a, b: indicator(sp.Ne(a, b)),
    ca.OP_AND: lambda a, b: indicator(sp.And(condition_of(a), condition_of(b))),
    ca.OP_OR: lambda a, b: indicator(sp.Or(condition_of(a), condition_of(b))),
    ca.OP_IF_ELSE_ZERO: _if_else_zero,
}


def casadi_to_sympy(fun: ca.Function, inputs: Sequence[Sequence[Any]]) -> list[list[sp.Expr]]:
    """The outputs of ``fun`` as sympy expressions in ``inputs`` (one sequence per input, dense).

    Raises
    ------
    MCPInputError
        An input of the wrong length, an MX function that cannot be expanded to SX, or an
        operation with no sympy counterpart (named in the message).
    """
    return replay_sx(
        fun,
        inputs,
        _UNARY,
        _BINARY,
        constant=_number,
        what="casadi_to_sympy",
        hint=f"; the declaration cannot state it ({SOLVE_IT_DIRECTLY})",
    )


def undeclarable(fun: ca.Function) -> str | None:
    """Why :func:`casadi_to_sympy` cannot replay ``fun`` (``None`` when it can).

    An MX function that does not expand into SX operations (a call of a rootfinder, an
    integrator or an external function), or an SX operation without a sympy counterpart.
    """
    if not fun.is_a("SXFunction"):
        try:
            fun = fun.expand()
        except RuntimeError as exc:
            last = (str(exc).strip().splitlines() or ["RuntimeError"])[-1]
            return f"it cannot be expanded into scalar (SX) operations: {last}"
    known = {ca.OP_CONST, ca.OP_INPUT, ca.OP_OUTPUT, *_UNARY, *_BINARY}
    for k in range(fun.n_instructions()):
        op = fun.instruction_id(k)
        if op not in known:
            return f"operation {OP_NAMES.get(op, op)} has no counterpart in the declaration"
    return None
