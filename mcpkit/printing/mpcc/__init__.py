r"""Lowering of an MPCC to printed mathematics (plain text, LaTeX, prose), for teaching.

An :class:`~mcpkit.mpcc.MPCC` prints in the form its module states,

.. math::

    \min_x f(x; p)\quad\text{s.t.}\quad g_l \le g(x; p) \le g_u,\quad x_l \le x \le x_u,\quad
    H_l \le H(x; p) \le H_u \perp G(x; p),\quad G_l \le G(x; p) \le G_u ,

one line per row and per pair: a standard pair as :math:`0 \le G_j \perp H_j \ge 0`, any other
pair in its box case with :math:`H_j` in the variable's role (``l <= H ⟂ G >= 0``,
``G = 0   (H free)``, ``l <= H <= u ⟂ G``, ...) and its plain bounds on :math:`G` when the case
does not imply them; then the pair cases in words and the sizes.

**Plain MPCCs** (built from CasADi): the expressions are CasADi's own, replayed into sympy
(:func:`~mcpkit.lowering.casadi_sympy.casadi_to_sympy`) only for the rows shown, so a row prints
as a formula (``(x_0 - 5)**2 + (2*x_1 + 1)**2`` where CasADi's ``str`` gives
``sq((x_0-5))+...``). A vector with more than ``max_rows`` entries prints a summary (its size,
the nonzeros of its Jacobian, whether it is affine in :math:`x`) and its first rows; a row of
more than :data:`MAX_OPERATIONS` operations prints by name. Nothing is replayed for rows not
shown, so printing a large MPCC costs its Jacobian sparsity and a few rows.

**With blocks** (:class:`~mcpkit.problems.mpcc.MPCCBlocks`, carried from a declaration): one line
per named segment, with the formula as declared and its size (``g_lam_n ∈ R^n_c``), variable
bounds per block, then "where", "given" and the sizes; entries inside a named variable segment
print by that name (``w_x[0]``) wherever CasADi expressions are printed. A horizon's per-step
segments print once under "for k = 0, …, N-1" and the first and last states' bounds as boundary
conditions, so a horizon of 50 steps prints the lines of one of 5. :func:`slack_form_blocks`
gives the blocks of the slack form (:class:`~mcpkit.lowering.casadi.MCPToMPCC`) of an MCP.

The MPCC printer is this package; its ``__init__`` is the public face (what ``MPCC.to_text``,
``MPCC.to_latex`` and ``MPCC.explain`` call, registered in :mod:`mcpkit.problems.hooks`) over:
:mod:`~mcpkit.printing.mpcc.cases` (names, numbers, the printed box cases),
:mod:`~mcpkit.printing.mpcc.casadi_rows` (CasADi rows as formulas and summaries),
:mod:`~mcpkit.printing.mpcc.render` (:func:`to_text`, :func:`to_latex`),
:mod:`~mcpkit.printing.mpcc.explain` (:func:`explain`) and :mod:`~mcpkit.printing.mpcc.blocks`
(the blocks of a slack form and of a horizon's step).
"""

from __future__ import annotations

from mcpkit.printing.mpcc.blocks import StepBlock, declaration_parts, slack_form_blocks, slack_segments
from mcpkit.printing.mpcc.casadi_rows import casadi_formulas
from mcpkit.printing.mpcc.cases import MAX_OPERATIONS, step_latex
from mcpkit.printing.mpcc.explain import explain
from mcpkit.printing.mpcc.render import to_latex, to_text
from mcpkit.problems.hooks import Hook, provide

__all__ = [
    "MAX_OPERATIONS",
    "StepBlock",
    "casadi_formulas",
    "declaration_parts",
    "explain",
    "slack_form_blocks",
    "slack_segments",
    "step_latex",
    "to_latex",
    "to_text",
]


provide(Hook.MPCC_TEXT, to_text)
provide(Hook.MPCC_LATEX, to_latex)
provide(Hook.MPCC_EXPLAIN, explain)
provide(Hook.SLACK_FORM_BLOCKS, slack_form_blocks)
