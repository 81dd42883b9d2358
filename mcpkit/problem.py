"""Old import path of the MCP declaration, kept for one release (issue 27).

The declaration moved by concept into :mod:`mcpkit.problems`: :mod:`~mcpkit.problems.mcp` (the
:class:`~mcpkit.problems.mcp.MCP` class), :mod:`~mcpkit.problems.functions` (function blocks),
:mod:`~mcpkit.problems.variables` (variable and parameter blocks) and
:mod:`~mcpkit.problems.arrays` (numeric input checks). Import from there; this module re-exports
the same objects and will be removed in the next release.
"""

from __future__ import annotations

from mcpkit.problems.arrays import ArrayLike, as_affine_matrix, as_float_vector
from mcpkit.problems.functions import (
    AffineFunction,
    BlockFunction,
    FunctionBlock,
    NumericRows,
    SymbolicFunction,
)
from mcpkit.problems.mcp import MCP
from mcpkit.problems.variables import MatrixParameterBlock, ParameterBlock, SymbolRange, VariableBlock

__all__ = [
    "MCP",
    "AffineFunction",
    "ArrayLike",
    "BlockFunction",
    "FunctionBlock",
    "MatrixParameterBlock",
    "NumericRows",
    "ParameterBlock",
    "SymbolRange",
    "SymbolicFunction",
    "VariableBlock",
    "as_affine_matrix",
    "as_float_vector",
]
