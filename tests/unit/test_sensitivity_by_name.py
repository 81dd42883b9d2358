"""``MCPResult.sensitivity("mu")``: dz/dp labelled by block, checked against the unlabelled array.

Results are built by hand at exact solutions (as in ``test_sensitivity.py``); no solver runs.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sps

from mcpkit import MCP
from mcpkit.errors import MCPInputError, UnknownOptionError
from mcpkit.stationarity.sensitivity import Sensitivity
from tests.unit.test_sensitivity import exact_result


def two_block_mcp() -> tuple[MCP, np.ndarray, np.ndarray]:
    """``(v, w) >= 0 ⟂ M (v, w) + (a, b, c)`` with blocks v (2), w (1) and parameters a (1), b (2)."""
    M = np.array([[3.0, 1.0, 0.5], [1.0, 4.0, 1.0], [0.5, 1.0, 2.0]])
    m = MCP("two")
    m.add_variables("v", 2, lb=0.0)
    m.add_variables("w", 1, lb=0.0)
    a = m.add_parameters("a", 1)
    b = m.add_parameters("b", 2)
    q = [a[0] + 2 * b[1], b[0], b[1] - a[0]]
    m.add_affine("v", M[:2], q[:2], over=["v", "w"])
    m.add_affine("w", M[2:], q[2:], over=["v", "w"])
    p = np.array([1.0, -4.0, -3.0])  # a, b0, b1
    qv = np.array([p[0] + 2 * p[2], p[1], p[2] - p[0]])
    z = -np.linalg.solve(M, qv)
    assert (z > 0).all()
    return m, z, p


def test_by_name_matches_the_columns_of_the_whole_jacobian() -> None:
    m, z, p = two_block_mcp()
    res = exact_result(m, z, p)
    full = res.sensitivity()
    assert full.shape == (3, 3)
    s = res.sensitivity("b")
    assert isinstance(s, Sensitivity) and list(s) == ["b"]
    np.testing.assert_allclose(s["b"], full[:, 1:3], rtol=1e-13, atol=1e-15)
    both = res.sensitivity(["b", "a"])
    assert list(both) == ["b", "a"]
    np.testing.assert_allclose(both["a"], full[:, 0:1], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(both.block("w", "b"), full[2:3, 1:3], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(both.block("v", "a"), full[0:2, 0:1], rtol=1e-13, atol=1e-15)
    assert set(both.by_block) == {("v", "b"), ("w", "b"), ("v", "a"), ("w", "a")}
    np.testing.assert_allclose(both.by_block[("v", "b")], full[0:2, 1:3], rtol=1e-13, atol=1e-15)


def test_by_name_sparse_and_repr() -> None:
    m, z, p = two_block_mcp()
    res = exact_result(m, z, p)
    s = res.sensitivity(["a", "b"], sparse=True)
    assert sps.issparse(s["b"])
    np.testing.assert_allclose(s["b"].toarray(), res.sensitivity()[:, 1:3], rtol=0, atol=1e-15)
    text = repr(s)
    assert text.startswith("Sensitivity(") and "a: 3x1" in text and "b: 3x2" in text and "v[2]" in text
    assert len(text) < 200


def test_unknown_names_say_what_is_declared() -> None:
    m, z, p = two_block_mcp()
    res = exact_result(m, z, p)
    with pytest.raises(UnknownOptionError, match=r"unknown parameter block 'bb'.*Did you mean 'b'"):
        res.sensitivity("bb")
    with pytest.raises(UnknownOptionError, match=r"unknown parameter block 'v'"):
        res.sensitivity(["a", "v"])
    s = res.sensitivity("a")
    with pytest.raises(UnknownOptionError, match=r"unknown parameter block 'b'"):
        s["b"]
    with pytest.raises(UnknownOptionError, match=r"unknown variable block 'vv'.*Did you mean 'v'"):
        s.block("vv", "a")
    with pytest.raises(MCPInputError, match="distinct"):
        res.sensitivity(["a", "a"])
    with pytest.raises(MCPInputError, match="not both"):
        res.sensitivity("a", direction=[1.0, 0.0, 0.0])


def test_a_vector_in_first_place_is_still_the_direction() -> None:
    m, z, p = two_block_mcp()
    res = exact_result(m, z, p)
    dp = np.array([1.0, -0.5, 0.25])
    np.testing.assert_allclose(res.sensitivity(dp), res.sensitivity() @ dp, rtol=1e-13, atol=1e-15)
