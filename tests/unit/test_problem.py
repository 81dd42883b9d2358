"""Declaration layer: structure, conveniences and typed errors (no solver runs)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

import mcpkit
from mcpkit import MCP
from mcpkit.errors import BoundsError, MCPInputError, NonFiniteError, ShapeError, UnknownOptionError
from mcpkit.problems.functions import AffineFunction, SymbolicFunction


def test_blocks_stack_in_order_with_bounds_and_start() -> None:
    mcp = MCP("t")
    a = mcp.add_variables("a", 2, lb=0.0)
    b = mcp.add_variables("b", 3, lb=[-1, -2, -math.inf], ub=[1, math.inf, 4], start=[0.5, 9, 9])
    assert a.shape == (2, 1) and b.shape == (3, 1)
    assert mcp.n == 5
    assert [blk.name for blk in mcp.blocks] == ["a", "b"]
    assert mcp.blocks[1].slice == slice(2, 5)
    np.testing.assert_array_equal(mcp.lb, [0, 0, -1, -2, -math.inf])
    np.testing.assert_array_equal(mcp.ub, [math.inf, math.inf, 1, math.inf, 4])
    # start is clipped into the box
    np.testing.assert_array_equal(mcp.start, [0, 0, 0.5, 9, 4])


def test_lcp_convenience_keeps_matrix_and_q() -> None:
    M = np.array([[2.0, 1.0], [1.0, 2.0]])
    mcp = MCP.lcp(M, [-1, -1])
    fb = mcp.function_block("z")
    assert isinstance(fb, AffineFunction)
    np.testing.assert_array_equal(fb.M, M)
    assert [float(q) for q in fb.q] == [-1.0, -1.0]
    np.testing.assert_array_equal(mcp.lb, [0, 0])
    assert np.all(np.isinf(mcp.ub))


def test_ncp_and_equations_conveniences() -> None:
    mcp = MCP.ncp(2, lambda z: [z[0] ** 2 - 1, z[0] + z[1]])
    assert isinstance(mcp.function_block("z"), SymbolicFunction)
    x = mcp.add_equations("x", 1, lambda x: [x[0] - 3])
    assert mcp.n == 3 and x.shape == (1, 1)
    assert mcp.lb[2] == -math.inf and mcp.ub[2] == math.inf


def test_evaluate_matches_hand_computation() -> None:
    mcp = MCP("e")
    z = mcp.add_variables("z", 2)
    p = mcp.add_parameters("p", 1, value=2.0)
    mcp.add_functions("z", [z[0] * p[0] - 1, sp.sin(z[1]) + z[0]])
    F = mcp.evaluate([1.5, 0.3])
    np.testing.assert_allclose(F, [1.5 * 2 - 1, math.sin(0.3) + 1.5], rtol=0, atol=1e-15)
    F2 = mcp.evaluate([1.5, 0.3], p={"p": [3.0]})
    assert F2[0] == pytest.approx(3.5, abs=1e-15)


def test_set_parameters_changes_values_not_structure() -> None:
    mcp = MCP("p")
    z = mcp.add_variables("z", 1)
    p = mcp.add_parameters("p", 1, value=1.0)
    mcp.add_functions("z", [z[0] - p[0]])
    v = mcp.version
    mcp.set_parameters(p=[4.0])
    assert mcp.version == v
    np.testing.assert_array_equal(mcp.parameter_values, [4.0])


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"lb": 1.0, "ub": 0.0}, BoundsError),
        ({"lb": math.inf}, BoundsError),
        ({"ub": -math.inf, "lb": -math.inf}, BoundsError),
        ({"lb": [0.0, 1.0, 2.0]}, ShapeError),
        ({"lb": float("nan")}, NonFiniteError),
        ({"start": [0.0, float("inf")]}, NonFiniteError),
    ],
)
def test_bad_variable_declarations_raise_typed_errors(kwargs: dict, error: type) -> None:
    with pytest.raises(error):
        MCP("bad").add_variables("z", 2, **kwargs)


def test_bounds_error_names_components() -> None:
    with pytest.raises(BoundsError, match=r"components \[1\]"):
        MCP().add_variables("z", 2, lb=[0, 5], ub=[1, 4])


def test_function_shape_mismatch_and_stray_symbols() -> None:
    mcp = MCP()
    z = mcp.add_variables("z", 2)
    with pytest.raises(ShapeError, match="variable block .z. has 2"):
        mcp.add_functions("z", [z[0]])
    with pytest.raises(MCPInputError, match="not variables or parameters"):
        mcp.add_functions("z", [z[0], sp.Symbol("alien")])
    with pytest.raises(NonFiniteError):
        mcp.add_functions("z", [z[0], sp.nan])
    with pytest.raises(MCPInputError, match="no variable block"):
        mcp.add_functions("w", [z[0]])


def test_unpaired_block_is_a_shape_error_before_solving() -> None:
    mcp = MCP()
    z = mcp.add_variables("z", 1)
    mcp.add_variables("w", 2)
    mcp.add_functions("z", [z[0]])
    with pytest.raises(ShapeError, match="len\\(F\\) = 1 != len\\(z\\) = 3"):
        mcp.validate()
    with pytest.raises(ShapeError):
        mcpkit.solve(mcp)


@pytest.mark.parametrize(
    ("M", "q", "error"),
    [
        (np.ones((2, 3)), np.ones(2), ShapeError),
        (np.eye(2), np.ones(3), ShapeError),
        (np.array([[1.0, np.nan], [0, 1]]), np.ones(2), NonFiniteError),
        (np.eye(2), np.array([1.0, np.inf]), NonFiniteError),
        ([["a", "b"], ["c", "d"]], [1, 2], MCPInputError),
    ],
)
def test_lcp_rejects_bad_data(M: object, q: object, error: type) -> None:
    with pytest.raises(error):
        MCP.lcp(M, q)


def test_lcp_rejects_l_greater_than_u() -> None:
    with pytest.raises(BoundsError):
        MCP.lcp(np.eye(2), np.ones(2), lb=[0, 3], ub=[1, 2])


def test_unknown_option_method_backend_raise_before_solving() -> None:
    mcp = MCP.lcp(np.eye(2), [-1, 1])
    with pytest.raises(UnknownOptionError, match="Did you mean 'tol'"):
        mcpkit.solve(mcp, tool=1e-8)
    with pytest.raises(UnknownOptionError, match="registered"):
        mcpkit.solve(mcp, method="newtonn")
    with pytest.raises(UnknownOptionError, match="registered"):
        mcpkit.solve(mcp, backend="gurobi")
    with pytest.raises(MCPInputError):
        mcpkit.solve(mcp, tol=-1.0)
    with pytest.raises(MCPInputError):
        mcpkit.solve(mcp, method="path", backend="casadi")


def test_duplicate_names_and_bad_sizes() -> None:
    mcp = MCP()
    mcp.add_variables("z", 1)
    with pytest.raises(MCPInputError, match="already declared"):
        mcp.add_variables("z", 1)
    with pytest.raises(MCPInputError, match="already used"):
        mcp.add_parameters("z", 1)
    with pytest.raises(ShapeError):
        mcp.add_variables("w", 0)
    with pytest.raises(MCPInputError):
        mcp.add_variables("not an identifier", 1)


def test_parameter_vector_forms_and_errors() -> None:
    mcp = MCP()
    z = mcp.add_variables("z", 1)
    p = mcp.add_parameters("a", 2, value=[1, 2])
    mcp.add_parameters("b", 1, value=3)
    mcp.add_functions("z", [z[0] - p[0]])
    np.testing.assert_array_equal(mcp.parameter_vector({"b": [7]}), [1, 2, 7])
    np.testing.assert_array_equal(mcp.parameter_vector([4, 5, 6]), [4, 5, 6])
    with pytest.raises(ShapeError):
        mcp.parameter_vector([1, 2])
    with pytest.raises(NonFiniteError):
        mcp.parameter_vector([1, 2, np.nan])
    with pytest.raises(MCPInputError, match="unknown parameter block"):
        mcp.set_parameters(c=[1])
