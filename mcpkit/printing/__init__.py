"""Printed mathematics (text, LaTeX and prose) of expressions and problems, for teaching.

* :mod:`~mcpkit.printing.expressions`: block expressions (:mod:`mcpkit.problems.blocks`) as written, and
  their shapes (what ``Expr.__str__`` calls);
* :mod:`~mcpkit.printing.mcp`: an MCP declaration, block by block or entrywise
  (``MCP.to_text``, ``MCP.to_latex``, ``MCP.explain``);
* :mod:`~mcpkit.printing.mpcc`: an MPCC (``MPCC.to_text``, ``MPCC.to_latex``, ``MPCC.explain``),
  the public face of its parts ``mpcc_common``, ``mpcc_casadi_rows``, ``mpcc_render``,
  ``mpcc_explain`` and ``mpcc_blocks``;
* :mod:`~mcpkit.printing.fclib`: an FCLIB local problem as its cone complementarity problem
  (``FCLIBProblem.to_text``, ``mcpkit print``).

The printers read a problem through its read side (:mod:`mcpkit.problems.views`) and never import
the problem classes, whose methods call them. This package's ``__init__`` imports nothing, so
importing one of its modules runs only that module.
"""
