r"""Replay of a CasADi SX algorithm on other objects, instruction by instruction.

A CasADi ``SXFunction`` is a straight-line program: each instruction reads one or two work
slots, applies one operation (``OP_ADD``, ``OP_SIN``, ...) and writes one slot. Running that
program with the inputs replaced by objects of another algebra (Pyomo variables, sympy symbols)
and each operation by its counterpart there computes exactly what CasADi computes,

.. math::

    y = f(x) \quad\Longrightarrow\quad \tilde y = \tilde f(\tilde x),

with :math:`\tilde f` built from the same operations in the same order. :func:`replay_sx` is the
shared walker; :func:`mcpkit.lowering.casadi_pyomo.casadi_to_pyomo` (Pyomo expressions) and
:func:`mcpkit.lowering.casadi_sympy.casadi_to_sympy` (sympy expressions) supply the operation
tables, both starting from :data:`ARITHMETIC_UNARY` and :data:`ARITHMETIC_BINARY`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import casadi as ca

from mcpkit.errors import MCPInputError

#: CasADi operation code -> name (``OP_SIN``), for messages.
OP_NAMES = {getattr(ca, n): n for n in dir(ca) if n.startswith("OP_")}
#: Values never handed to ``share``: leaves and logical (non-numeric) results.
NOT_SHARED = frozenset({ca.OP_CONST, ca.OP_INPUT, ca.OP_LE, ca.OP_LT, ca.OP_NOT})

#: Unary operations of every target with Python's arithmetic operators (Pyomo, sympy, floats).
ARITHMETIC_UNARY: dict[int, Callable[[Any], Any]] = {
    ca.OP_ASSIGN: lambda a: a,
    ca.OP_NEG: lambda a: -a,
    ca.OP_SQ: lambda a: a * a,
}
#: Elementary functions that CasADi, Pyomo and sympy all name alike (``OP_SIN`` -> ``module.sin``).
ELEMENTARY = ("sqrt", "exp", "log", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh")


def elementary(module: Any) -> dict[int, Callable[[Any], Any]]:
    """:data:`ELEMENTARY` operations implemented by ``module`` (``pyomo.environ``, ``sympy``)."""
    return {getattr(ca, f"OP_{name.upper()}"): getattr(module, name) for name in ELEMENTARY}


#: Binary operations of every target with Python's arithmetic operators.
ARITHMETIC_BINARY: dict[int, Callable[[Any, Any], Any]] = {
    ca.OP_ADD: lambda a, b: a + b,
    ca.OP_SUB: lambda a, b: a - b,
    ca.OP_MUL: lambda a, b: a * b,
    ca.OP_DIV: lambda a, b: a / b,
    ca.OP_POW: lambda a, b: a**b,
    ca.OP_CONSTPOW: lambda a, b: a**b,
}


def as_sx_function(fun: ca.Function, what: str) -> ca.Function:
    """``fun`` itself if it is an SX function, else its SX expansion (typed error if impossible)."""
    if fun.is_a("SXFunction"):
        return fun
    try:
        return fun.expand()
    except RuntimeError as exc:
        raise MCPInputError(
            f"{what}: cannot expand {fun.name()!r} into scalar (SX) operations: {str(exc).splitlines()[-1]}"
        ) from None


def replay_sx(
    fun: ca.Function,
    inputs: Sequence[Sequence[Any]],
    unary: Mapping[int, Callable[[Any], Any]],
    binary: Mapping[int, Callable[[Any, Any], Any]],
    *,
    constant: Callable[[float], Any] = float,
    share: Callable[[Any], Any] | None = None,
    what: str = "replay_sx",
    hint: str = "",
) -> list[list[Any]]:
    """Evaluate the SX algorithm of ``fun`` with the operations of ``unary`` and ``binary``.

    Parameters
    ----------
    fun
        A CasADi function (MX functions are expanded to SX first).
    inputs
        One sequence per input of ``fun``: one object per element (dense, column-major).
    unary, binary
        CasADi operation code -> implementation on the target objects.
    constant
        Turns a CasADi constant (a float) into a target object; also used for structural zeros
        of the outputs.
    share
        Called on every value that is read two or more times (except leaves and logical
        values, :data:`NOT_SHARED`); its result replaces the value (e.g. a named Pyomo
        ``Expression``). ``None``: values are used as they are.
    what, hint
        Name of the caller and advice for the message of an unsupported operation.

    Returns
    -------
    list of list
        One dense list per output.

    Raises
    ------
    MCPInputError
        When an input has the wrong length, ``fun`` cannot be expanded to SX, or the graph uses
        an operation missing from the tables (named in the message).
    """
    fun = as_sx_function(fun, what)
    for k, vals in enumerate(inputs):
        if len(vals) != fun.numel_in(k):
            raise MCPInputError(f"{what}: input {k} needs {fun.numel_in(k)} entries, got {len(vals)}")
    n = fun.n_instructions()
    ops = [fun.instruction_id(k) for k in range(n)]
    ins = [fun.instruction_input(k) for k in range(n)]
    outs = [fun.instruction_output(k) for k in range(n)]
    reads = [0] * n
    if share is not None:  # reads of each instruction's value (work slots are reused: count by producer)
        producer: dict[int, int] = {}
        for k in range(n):
            if ops[k] != ca.OP_INPUT:
                for w in ins[k]:
                    if w in producer:
                        reads[producer[w]] += 1
            if ops[k] != ca.OP_OUTPUT:
                producer[outs[k][0]] = k
    nz_to_el = [fun.sparsity_in(k).find() for k in range(fun.n_in())]  # nonzero -> element
    zero = constant(0.0)
    result = [[zero] * fun.numel_out(k) for k in range(fun.n_out())]
    rows_out = [fun.sparsity_out(k).find() for k in range(fun.n_out())]
    work: dict[int, Any] = {}
    for k in range(n):
        op, i, o = ops[k], ins[k], outs[k]
        if op == ca.OP_CONST:
            val: Any = constant(float(fun.instruction_constant(k)))
        elif op == ca.OP_INPUT:
            val = inputs[i[0]][nz_to_el[i[0]][i[1]]]
        elif op == ca.OP_OUTPUT:
            result[o[0]][rows_out[o[0]][o[1]]] = work[i[0]]
            continue
        elif op in binary:
            val = binary[op](work[i[0]], work[i[1]])
        elif op in unary:
            val = unary[op](work[i[0]])
        else:
            raise MCPInputError(
                f"{what}: operation {OP_NAMES.get(op, op)} has no counterpart (in {fun.name()}){hint}"
            )
        if share is not None and reads[k] >= 2 and op not in NOT_SHARED:
            val = share(val)
        work[o[0]] = val
    return result


#: Affinity classes of a value of an SX program (:func:`affinity`), ordered by generality.
CONSTANT, PARAMETER, AFFINE, NONLINEAR = 0, 1, 2, 3
_LINEAR_OPS = frozenset({ca.OP_ADD, ca.OP_SUB})
_SAME_OPS = frozenset({ca.OP_ASSIGN, ca.OP_NEG, ca.OP_TWICE})


def affinity(fun: ca.Function, roles: Sequence[int]) -> list[list[int]]:
    r"""Per output entry of ``fun``, how it depends on inputs of the given ``roles``, from its graph.

    ``roles`` gives each input's class: :data:`AFFINE` for the variables :math:`z`,
    :data:`PARAMETER` for parameters :math:`p`. An entry is :data:`AFFINE` when it is
    :math:`a^\top z + c(p)` with a constant :math:`a`: built from :math:`z` by ``+``, ``-``,
    negation, and multiplication or division by values that depend on nothing
    (:data:`CONSTANT`); :data:`PARAMETER` when it depends on :math:`p` only (in any way);
    :data:`NONLINEAR` otherwise. Any other operation on a value that depends on :math:`z` is
    nonlinear, whatever its derivative: ``floor``, ``sign``, ``if_else``, comparisons, ``fmod``
    and the logic operations have a zero or constant Jacobian but are not affine, and a test of
    Jacobian constancy calls ``if_else(z >= 1, 5, 0) + z - 2`` the affine ``z - 2``. The answer
    is structural: an expression that happens to be affine after cancellation
    (``(z + 1)**2 - z**2``) is called nonlinear, which is always safe.
    """
    fun = as_sx_function(fun, "affinity")
    if len(roles) != fun.n_in():
        raise MCPInputError(f"affinity: {fun.n_in()} inputs but {len(roles)} roles")
    out = [[CONSTANT] * fun.numel_out(k) for k in range(fun.n_out())]
    rows_out = [fun.sparsity_out(k).find() for k in range(fun.n_out())]
    work: dict[int, int] = {}
    for k in range(fun.n_instructions()):
        op, i, o = fun.instruction_id(k), fun.instruction_input(k), fun.instruction_output(k)
        if op == ca.OP_CONST:
            c = CONSTANT
        elif op == ca.OP_INPUT:
            c = roles[i[0]]
        elif op == ca.OP_OUTPUT:
            out[o[0]][rows_out[o[0]][o[1]]] = work[i[0]]
            continue
        else:
            args = [work[j] for j in i]
            top = max(args)
            if op in _SAME_OPS or (op in _LINEAR_OPS and top <= AFFINE):
                c = top
            elif op == ca.OP_MUL and top == AFFINE:
                # a p-dependent coefficient is no constant coefficient
                c = AFFINE if min(args) == CONSTANT else NONLINEAR
            elif op == ca.OP_DIV and top == AFFINE:
                c = AFFINE if args[0] == AFFINE and args[1] == CONSTANT else NONLINEAR
            elif top <= PARAMETER:
                c = top  # any operation on constants and parameters only
            else:
                c = NONLINEAR
        work[o[0]] = c
    return out


def is_affine_in(fun: ca.Function, roles: Sequence[int]) -> bool:
    """Every output entry of ``fun`` is at most :data:`AFFINE` (:func:`affinity`)."""
    return all(c <= AFFINE for row in affinity(fun, roles) for c in row)
