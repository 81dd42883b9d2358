"""Problem statements: what is solved, declared once, importing nothing above it.

* :mod:`~mcpkit.problems.names`: names shared by every layer (:func:`casadi_name`);
* :mod:`~mcpkit.problems.mpcc`: the one :class:`~mcpkit.problems.mpcc.MPCC` class and the blocks
  it prints by;
* :mod:`~mcpkit.problems.bounds`: the cases of a variable's box (free, lower, upper, both, fixed).

This package's ``__init__`` imports nothing, so importing one of its modules runs only that
module (the MPCC solver lives in :mod:`mcpkit.mpcc`, whose ``__init__`` pulls it in).
"""
