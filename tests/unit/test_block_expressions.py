"""Block expressions (:mod:`mcpkit.problems.blocks`): one declaration, four evaluations that must agree.

A block function is evaluated by NumPy (:func:`mcpkit.problems.blocks.evaluate`), lowered to CasADi (SX
and MX, one product per matrix), lowered to Pyomo (row sums) and expanded to sympy rows; the
values are compared with each other and with a dense hand computation. Matrix parameters are
checked for their documented flat layout (row-major; CSR order when sparse) and bad input for
its typed error.
"""

from __future__ import annotations

import math

import casadi as ca
import numpy as np
import pyomo.environ as pyo
import pytest
import scipy.sparse as sps
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit import MCP
from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError
from mcpkit.lowering.casadi import ToCasadi, lower_to_casadi
from mcpkit.lowering.pyomo import ToPyomo
from mcpkit.problems import blocks
from mcpkit.problems.functions import BlockFunction
from mcpkit.problems.variables import MatrixParameterBlock


def _all_values(mcp: MCP, z: np.ndarray, p: np.ndarray) -> dict[str, np.ndarray]:
    """F(z; p) by NumPy, CasADi SX, CasADi MX, Pyomo and the sympy expansion."""
    out = {
        "numpy": np.concatenate([blocks.evaluate(mcp.function_block(b.name).expr, z, p) for b in mcp.blocks])
    }
    for sym in ("SX", "MX"):
        cm, _ = ToCasadi(sym).apply(mcp)
        out[sym] = np.asarray(cm.F_fun(z, p)).reshape(-1)
    model, info = ToPyomo().apply(mcp)
    info.set_values(model, z)
    info.set_parameters(model, p)
    out["pyomo"] = np.array([pyo.value(f) for f in info.F], dtype=float)
    subs = dict(zip(mcp.variables, z, strict=True)) | dict(zip(mcp.parameters, p, strict=True))
    out["sympy"] = np.array([float(e.xreplace(subs)) for e in mcp.function_exprs()])
    return out


def _random_problem(rng: np.random.Generator, n: int, m: int, density: float, sparse: bool) -> MCP:
    mcp = MCP("random")
    x = mcp.add_variable_block("x", n, lb=-math.inf, dim="n")
    y = mcp.add_variable_block("y", m, lb=0.0, dim="m")
    A0 = sps.random(m, n, density=density, random_state=rng, format="lil")
    A0[0, 0] = 1.0  # a pattern is never empty (an empty one is a ShapeError)
    A0 = sps.csr_array(A0)
    A0.data[:] = rng.normal(size=A0.nnz)
    A = mcp.add_parameter_block("A", (m, n), A0 if sparse else A0.toarray(), latex="A", dim=("m", "n"))
    q = mcp.add_parameter_block("q", n, rng.normal(size=n), dim="n")
    s = mcp.add_parameter_block("s", 1, 0.7)
    C = blocks.const(rng.normal(size=(n, m)), name="C")
    t = blocks.named("t", A.T @ y - q)
    mcp.add_functions(
        "x",
        blocks.diag(q) @ x
        + s * t * blocks.sin(x)
        + (A.T @ A) @ x / (1.0 + q**2)
        - C @ y
        + blocks.total(x * x),
    )
    mcp.add_functions("y", (A @ A.T).T @ y + 2.0 * (s * A) @ blocks.exp(0.1 * x) - abs(A @ x) + (x.T @ x) * y)
    return mcp


@settings(max_examples=15, deadline=None)
@given(
    n=st.integers(1, 6),
    m=st.integers(1, 6),
    density=st.floats(0.2, 1.0),
    sparse=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_every_lowering_computes_the_same_function(
    n: int, m: int, density: float, sparse: bool, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    mcp = _random_problem(rng, n, m, density, sparse)
    z, p = rng.normal(size=mcp.n), mcp.parameter_values
    vals = _all_values(mcp, z, p)
    x, y = z[:n], z[n:]
    blk = mcp._params["A"]
    assert isinstance(blk, MatrixParameterBlock)
    A = blk.matrix(p[blk.slice])
    A = A.toarray() if sps.issparse(A) else A
    q, s = p[mcp._params["q"].slice], p[mcp._params["s"].slice][0]
    C = None
    for leaf in blocks.walk(mcp.function_block("x").expr):
        if isinstance(leaf, blocks.Const) and leaf.name == "C":
            C = np.asarray(leaf.value)
    assert C is not None
    Fx = q * x + s * (A.T @ y - q) * np.sin(x) + (A.T @ (A @ x)) / (1 + q**2) - C @ y + x @ x
    Fy = A @ (A.T @ y) + 2.0 * s * A @ np.exp(0.1 * x) - np.abs(A @ x) + (x @ x) * y
    expect = np.concatenate([Fx, Fy])
    for name, val in vals.items():
        np.testing.assert_allclose(val, expect, rtol=1e-12, atol=1e-12, err_msg=name)


def test_matrix_parameter_layout_is_row_major_and_csr() -> None:
    mcp = MCP("layout")
    W0 = np.arange(6.0).reshape(2, 3) + 1.0
    W = mcp.add_parameter_block("W", (2, 3), W0)
    P = sps.csr_array(np.array([[0.0, 2.0, 0.0], [3.0, 0.0, 4.0]]))
    S = mcp.add_parameter_block("S", (2, 3), P)
    np.testing.assert_array_equal(mcp.parameter_values, [*W0.reshape(-1), 2.0, 3.0, 4.0])
    # the same layout through every way of setting values
    new = -W0
    np.testing.assert_array_equal(mcp.parameter_vector({"W": new})[:6], new.reshape(-1))
    np.testing.assert_array_equal(mcp.parameter_vector({"W": new.reshape(-1)})[:6], new.reshape(-1))
    np.testing.assert_array_equal(mcp.parameter_vector({"S": 2 * P})[6:], [4.0, 6.0, 8.0])
    np.testing.assert_array_equal(mcp.parameter_vector({"S": 2 * P.toarray()})[6:], [4.0, 6.0, 8.0])
    mcp.set_parameters(S=sps.csr_array(np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 5.0]])))
    np.testing.assert_array_equal(mcp.parameter_values[6:], [1.0, 0.0, 5.0])
    x = mcp.add_variable_block("x", 3, lb=-math.inf)
    mcp.add_functions("x", W.T @ (S @ x))
    z = np.array([1.0, -2.0, 0.5])
    Sd = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 5.0]])
    np.testing.assert_allclose(mcp.evaluate(z), W0.T @ (Sd @ z), rtol=1e-14)
    J = lower_to_casadi(mcp).jacobian_function()(z, mcp.parameter_values)
    assert ca.DM(J).nnz() == 9  # the pattern of S (3 entries, one stored as 0) reaches every column
    np.testing.assert_allclose(np.asarray(ca.DM(J)), W0.T @ Sd, rtol=1e-14)


def test_matrix_parameter_bad_values_raise_typed_errors() -> None:
    mcp = MCP("bad")
    mcp.add_parameter_block("S", (2, 2), sps.eye_array(2, format="csr"))
    with pytest.raises(ShapeError, match="outside the declared sparsity pattern"):
        mcp.set_parameters(S=np.ones((2, 2)))
    with pytest.raises(ShapeError):
        mcp.set_parameters(S=np.ones(3))
    with pytest.raises(NonFiniteError):
        mcp.parameter_vector({"S": np.array([[np.nan, 0.0], [0.0, 1.0]])})
    with pytest.raises(ShapeError):
        mcp.add_parameter_block("T", (2, 2), pattern=np.ones((3, 2)))
    with pytest.raises(ShapeError):
        mcp.add_parameter_block("U", (2, 0))


def test_shapes_and_mixing_raise_typed_errors() -> None:
    mcp = MCP("errs")
    x = mcp.add_variable_block("x", 3, lb=-math.inf, dim="n")
    A = mcp.add_parameter_block("A", (2, 3))
    other = MCP("other").add_variable_block("x", 3)
    with pytest.raises(ShapeError):
        _ = A @ A
    with pytest.raises(ShapeError):
        _ = A * A
    with pytest.raises(ShapeError):
        _ = x + A @ x
    with pytest.raises(ShapeError):
        _ = x @ x
    with pytest.raises(MCPInputError):
        _ = x ** mcp.ref("x")
    with pytest.raises(MCPInputError):
        _ = x + sp.Symbol("a")
    with pytest.raises(NonFiniteError):
        blocks.const([1.0, np.inf])
    with pytest.raises(ShapeError):
        mcp.add_functions("x", A @ x)
    with pytest.raises(ShapeError):
        mcp.add_functions("x", A.T)
    with pytest.raises(MCPInputError, match="another MCP"):
        mcp.add_functions("x", other)
    with pytest.raises(ShapeError, match="size label 'n'"):
        mcp.add_parameter_block("q", 4, dim="n")
    with pytest.raises(MCPInputError):
        mcp.ref("nope")
    with pytest.raises(MCPInputError):
        bool(x)


def test_sympy_consumers_read_expanded_rows() -> None:
    """function_exprs and BlockFunction.expand give rows in the blocks' symbols; affinity is detected."""
    mcp = MCP("rows")
    v = mcp.add_variable_block("v", 2, lb=-math.inf)
    lam = mcp.add_variable_block("lam", 1)
    W = mcp.add_parameter_block("W", (2, 1), [[1.0], [2.0]])
    mcp.add_functions("v", v - W @ lam)
    mcp.add_functions("lam", W.T @ v + lam * lam)
    fb = mcp.function_block("v")
    assert isinstance(fb, BlockFunction) and fb.is_affine and fb.variables == ["v", "lam"]
    assert not mcp.function_block("lam").is_affine  # type: ignore[union-attr]
    v0, v1, l0 = sp.symbols("v_0 v_1 lam_0", real=True)
    w0, w1 = sp.symbols("W_0 W_1", real=True)
    assert mcp.function_exprs() == [v0 - w0 * l0, v1 - w1 * l0, w0 * v0 + w1 * v1 + l0**2]


def test_lemke_reads_a_block_lcp_and_names_nonlinear_blocks() -> None:
    from mcpkit.engines.lemke import AffineData

    mcp = MCP("blcp")
    z = mcp.add_variable_block("z", 2)
    M = mcp.add_parameter_block("M", (2, 2), [[2.0, 1.0], [1.0, 2.0]])
    mcp.add_functions("z", M @ z + blocks.const([-1.0, 1.0]))
    data = AffineData(mcp)
    assert data.parametric_M
    np.testing.assert_array_equal(data.M(np.array([1.0, 0.0, 0.0, 3.0])), [[1.0, 0.0], [0.0, 3.0]])
    np.testing.assert_array_equal(data.q(mcp.parameter_values), [-1.0, 1.0])
    bad = MCP("bad")
    w = bad.add_variable_block("w", 2)
    bad.add_functions("w", w * w - 1.0)
    with pytest.raises(MCPInputError, match=r"\['w'\]"):
        AffineData(bad)


def test_large_block_functions_lower_to_one_product_per_matrix() -> None:
    """Above the dense limit the lowering is MX with one mtimes per matrix leaf (no per-entry graph)."""
    n = 3000
    mcp = MCP("big")
    x = mcp.add_variable_block("x", n, lb=-math.inf)
    pattern = sps.diags_array(
        [np.ones(n - 1), 2 * np.ones(n), np.ones(n - 1)], offsets=[-1, 0, 1], format="csr"
    )
    L = mcp.add_parameter_block("L", (n, n), pattern)
    mcp.add_functions("x", L @ x + L.T @ x - 1.0)
    cm = lower_to_casadi(mcp)
    assert isinstance(cm.z, ca.MX)
    ops = [cm.F_fun.instruction_id(k) for k in range(cm.F_fun.n_instructions())]
    assert ops.count(ca.OP_MTIMES) == 2
    z = np.linspace(-1, 1, n)
    np.testing.assert_allclose(np.asarray(cm.F_fun(z, mcp.parameter_values)).reshape(-1),
                               2 * (pattern @ z) - 1.0, rtol=1e-13, atol=1e-13)  # fmt: skip
