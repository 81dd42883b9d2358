"""Old import path of the MCP printer, kept for one release (issue 27).

The printers moved to the concept folder :mod:`mcpkit.printing`: the MCP printer to
:mod:`mcpkit.printing.mcp`, the block-expression printer to :mod:`mcpkit.printing.expressions`.
Import from there; this module re-exports the same objects and will be removed in the next release.
"""

from __future__ import annotations

from mcpkit.printing.expressions import expr_latex, expr_text, space, sym_shape
from mcpkit.printing.mcp import NameMap, ToLatex, ToText, explain, to_latex, to_text

__all__ = [
    "NameMap",
    "ToLatex",
    "ToText",
    "explain",
    "expr_latex",
    "expr_text",
    "space",
    "sym_shape",
    "to_latex",
    "to_text",
]
