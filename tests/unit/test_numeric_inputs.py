"""Numbers at the boundary: text is refused where ``np.asarray(value, dtype=float)`` would have
read it as numbers, and derivative tolerances are checked before anything is evaluated.

Before, ``Solver.solve(p={"q": ["1", 2]})``, ``add_parameters(value=["1", 1])`` and
``MCP.lcp([["1", 0], [0, 1]], ...)`` were accepted. (The derivatives' ``tol`` check is in
tests/solver/test_sensitivity.py: it needs a solved result.)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sps

import mcpkit
from mcpkit.errors import MCPInputError
from mcpkit.problems.arrays import as_affine_matrix, as_float_vector, refuse_text


@pytest.mark.parametrize("value", ["1", b"1", ["1", 2], np.array(["1.0", "2"]), [[1, "2"]], ("a",)])
def test_text_is_refused(value: Any) -> None:
    with pytest.raises(MCPInputError, match="numbers expected, got text"):
        refuse_text(value, "v")


@pytest.mark.parametrize(
    "value", [1, 2.5, [1, 2], np.arange(3.0), np.array([True, False]), sps.eye(2), [[1, 2], [3]], None]
)
def test_numbers_pass(value: Any) -> None:
    refuse_text(value, "v")  # a ragged list or None is left to the caller's own conversion error


def test_the_boundary_functions_refuse_text() -> None:
    with pytest.raises(MCPInputError, match="x: numbers expected"):
        as_float_vector(["1", "2"], 2, "x", allow_inf=False)
    with pytest.raises(MCPInputError, match="M: numbers expected"):
        as_affine_matrix([["1", "0"], ["0", "1"]], (2, 2), "M")
    with pytest.raises(MCPInputError, match="lcp: M"):
        mcpkit.MCP.lcp([["1", 0], [0, 1]], [1.0, 1.0])
    with pytest.raises(MCPInputError, match="lcp: q"):
        mcpkit.MCP.lcp(np.eye(2), ["1", 1.0])
    m = mcpkit.MCP("m")
    with pytest.raises(MCPInputError, match="numbers expected"):
        m.add_parameters("a", 2, value=["1", 1])
    np.testing.assert_array_equal(as_float_vector([1, 2], 2, "x", allow_inf=False), [1.0, 2.0])
