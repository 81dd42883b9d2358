"""Affinity decided on the expression graph, and the declaration's F equal to the user's F.

Differential test over CasADi's operations: for each one, ``F(z; p)`` built with it is declared
with :meth:`mcpkit.MCP.from_casadi`; the declaration either states the same function (its
lowered ``F`` equals the user's at random points, on both sides of every jump) or is refused
with a typed error. Never a different ``F``: a constant-Jacobian test once declared
``if_else(z >= 1, 5, 0) + z - 2`` as ``z - 2``.
"""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

import mcpkit
from mcpkit.errors import MCPInputError
from mcpkit.lowering.from_casadi import affine_parts
from mcpkit.lowering.sx_replay import AFFINE, CONSTANT, NONLINEAR, PARAMETER, affinity, is_affine_in

z = ca.SX.sym("z", 2)
p = ca.SX.sym("p", 1)

#: (name, expression in z and p, affine in z with constant coefficients?)
CASES = [
    ("add", z[0] + 2 * z[1] - 3, True),
    ("neg_div_const", -z[0] / 4 + z[1], True),
    ("twice", 2 * z[0] + p[0], True),
    ("param_offset", z[0] + ca.sin(p[0]) + ca.floor(p[0]), True),
    ("param_coef", p[0] * z[0] + z[1], False),
    ("div_param", z[0] / (1 + p[0] ** 2) + z[1], False),
    ("if_else", ca.if_else(z[0] >= 1, 5, 0) + z[0] - 2, False),
    ("floor", z[0] + ca.floor(z[1]) - 2.5, False),
    ("ceil", ca.ceil(z[0]) + z[1], False),
    ("sign", ca.sign(z[0]) + z[1], False),
    ("fabs", ca.fabs(z[0]) + z[1], False),
    ("fmod", ca.fmod(z[0], 1.5) + z[1], False),
    ("fmin", ca.fmin(z[0], z[1]), False),
    ("fmax", ca.fmax(z[0], 0.5) + z[1], False),
    ("lt", (z[0] < 0.3) * 4 + z[1], False),
    ("le", (z[0] <= 0.3) + z[1], False),
    ("eq", (z[0] == 0.0) + z[1], False),
    ("ne", (z[0] != 0.0) + z[1], False),
    ("and", ca.logic_and(z[0] > 0, z[1] > 0) + z[0], False),
    ("or", ca.logic_or(z[0] > 0, z[1] > 0) + z[0], False),
    ("not", ca.logic_not(z[0] > 0) + z[1], False),
    ("sq", z[0] ** 2 + z[1], False),
    ("mul", z[0] * z[1], False),
    ("sin", ca.sin(z[0]) + z[1], False),
    ("exp", ca.exp(z[0] / 3) - z[1], False),
    ("atan2", ca.atan2(z[0], 2 + z[1] ** 2), False),
    ("sqrt", ca.sqrt(1 + z[0] ** 2) + z[1], False),
    ("copysign", ca.copysign(z[0], z[1]) + z[1], False),
    ("cancelling", (z[0] + 1) ** 2 - z[0] ** 2 + z[1], False),  # structural: called nonlinear (safe)
]


@pytest.mark.parametrize(("name", "expr", "affine"), CASES, ids=[c[0] for c in CASES])
def test_affinity_is_structural(name: str, expr: ca.SX, affine: bool) -> None:
    fun = ca.Function(name, [z, p], [ca.vertcat(expr, z[1] - z[0])])
    assert is_affine_in(fun, [AFFINE, PARAMETER]) is affine
    assert (affine_parts(fun) is not None) is affine


@pytest.mark.parametrize(("name", "expr", "affine"), CASES, ids=[c[0] for c in CASES])
def test_declared_F_is_the_users_F(name: str, expr: ca.SX, affine: bool) -> None:
    fun = ca.Function(name, [z, p], [ca.vertcat(expr, z[1] - z[0])])
    try:
        mcp = mcpkit.MCP.from_casadi(fun, [-np.inf, 0.0], [np.inf, np.inf], p0=[0.7])
    except MCPInputError as exc:  # refused, with a typed error that names the operation
        assert "OP_" in str(exc) or "cannot" in str(exc)
        return
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    pts = [rng.uniform(-3, 3, 2) for _ in range(20)]
    pts += [np.array([1.0, 0.0]), np.array([1.0 - 1e-9, 1.0]), np.array([0.0, 0.0]), np.array([0.3, 2.5])]
    for pt in pts:
        want = np.asarray(fun(pt, [0.7])).ravel()
        np.testing.assert_allclose(mcp.evaluate(pt), want, rtol=1e-12, atol=1e-12)


def test_affinity_classes() -> None:
    """Per entry: constants, parameters only, affine, nonlinear."""
    fun = ca.Function("F", [z, p], [ca.vertcat(3.0, ca.floor(p[0]), 2 * z[0] - p[0], ca.sign(z[0]))])
    assert affinity(fun, [AFFINE, PARAMETER]) == [[CONSTANT, PARAMETER, AFFINE, NONLINEAR]]
    assert affinity(fun, [AFFINE, CONSTANT]) == [[CONSTANT, CONSTANT, AFFINE, NONLINEAR]]
