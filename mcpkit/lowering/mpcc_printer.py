"""Old import path of the MPCC printer, kept for one release (issue 27).

The MPCC printer and its parts moved to the concept folder :mod:`mcpkit.printing`
(:mod:`mcpkit.printing.mpcc` and the ``mcpkit.printing.mpcc_*`` modules). Import from there; this
module re-exports the same objects and will be removed in the next release.
"""

from __future__ import annotations

from mcpkit.printing.mpcc import (
    MAX_OPERATIONS,
    StepBlock,
    casadi_formulas,
    declaration_parts,
    explain,
    slack_form_blocks,
    slack_segments,
    step_latex,
    to_latex,
    to_text,
)

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
