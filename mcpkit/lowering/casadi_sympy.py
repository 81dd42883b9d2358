r"""CasADi SX expressions as sympy expressions, operation for operation.

:func:`casadi_to_sympy` replays a function's SX algorithm (the walker of
:mod:`mcpkit.lowering.sx_replay`) with sympy's counterpart of every operation, so
:math:`y = f(x)` becomes the sympy expression :math:`\tilde y = \tilde f(\tilde x)` in the given
symbols, computing what CasADi computes (sympy may fold constants and merge equal terms). Used by
the CasADi importer (:mod:`mcpkit.lowering.from_casadi`) and by the MPCC printer, which prints
short rows as formulas. The Pyomo counterpart is :mod:`mcpkit.lowering.casadi_pyomo`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import casadi as ca
import sympy as sp

from mcpkit.lowering.sx_replay import ARITHMETIC_BINARY, ARITHMETIC_UNARY, elementary, replay_sx


def _number(v: float) -> sp.Expr:
    """A CasADi constant as a sympy number (integers stay integers, so ``x**2`` stays a square)."""
    return sp.Integer(int(v)) if v.is_integer() and abs(v) < 2.0**53 else sp.Float(v)


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
}
_BINARY: dict[int, Callable[[Any, Any], Any]] = {
    **ARITHMETIC_BINARY,
    ca.OP_FMIN: sp.Min,
    ca.OP_FMAX: sp.Max,
    ca.OP_ATAN2: sp.atan2,
    ca.OP_HYPOT: lambda a, b: sp.sqrt(a**2 + b**2),
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
        hint="; the declaration cannot state it (pass F to mcpkit.solve_mcp instead)",
    )
