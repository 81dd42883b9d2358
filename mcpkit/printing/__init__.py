"""Printed mathematics (text and LaTeX) of expressions and problems, for teaching.

* :mod:`~mcpkit.printing.expressions`: block expressions (:mod:`mcpkit.blocks`) as written, and
  their shapes.

This package's ``__init__`` imports nothing, so importing one of its modules runs only that module.
"""
