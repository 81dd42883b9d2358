"""Printed mathematics (text, LaTeX and prose), one module per concept: expressions, MCP, MPCC, FCLIB.

* :mod:`~mcpkit.printing.expressions`: block expressions (:mod:`mcpkit.problems.blocks`) as written, and
  their shapes (what ``Expr.__str__`` calls);
* :mod:`~mcpkit.printing.mcp`: an MCP declaration, block by block or entrywise
  (``MCP.to_text``, ``MCP.to_latex``, ``MCP.explain``);
* :mod:`~mcpkit.printing.mpcc`: an MPCC (``MPCC.to_text``, ``MPCC.to_latex``, ``MPCC.explain``),
  a package: the box cases (``cases``), CasADi rows as formulas (``casadi_rows``), text and LaTeX
  (``render``), prose (``explain``) and block structures (``blocks``);
* :mod:`~mcpkit.printing.fclib`: an FCLIB local problem as its cone complementarity problem
  (``FCLIBProblem.to_text``, ``mcpkit print``).

The printers read a problem through its read side (:mod:`mcpkit.problems.views`) and never import
the problem classes, whose methods call them. This package's ``__init__`` imports nothing, so
importing one of its modules runs only that module.
"""
