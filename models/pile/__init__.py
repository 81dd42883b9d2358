r"""A pile of rigid spheres in an open box, stepped as Stewart–Trinkle NCPs (issue 28).

* :mod:`.geometry`: the box, contact detection (k-d tree broad phase, analytic narrow phase for
  spheres), contact frames and the contact Jacobian :math:`H`;
* :mod:`.step`: the velocity-level step, its local problem :math:`u = Wr + q` with
  :math:`W = H^TM^{-1}H` (declared as Berard et al.'s quadratic-cone NCP through
  :func:`mcpkit.models.fclib.fclib_mcp`), solved by the FCLIB-class contact Newton with warm
  starts, and :func:`~.step.simulate_pile`;
* :mod:`.demo`, :mod:`.plots`: ``mcpkit demo pile`` (summary table or JSON, 3-D snapshots,
  per-step residual and cost figure, FCLIB dump of a step with its solution).
"""

from mcpkit.models.pile.geometry import (
    PLANES,
    Box,
    Contacts,
    contact_frames,
    contact_jacobian,
    detect_contacts,
)
from mcpkit.models.pile.step import (
    LocalProblem,
    Pile,
    PileParams,
    PileRun,
    PileStepRecord,
    StepEngine,
    carry_reactions,
    make_pile,
    simulate_pile,
    solve_local,
)

__all__ = [
    "PLANES",
    "Box",
    "Contacts",
    "LocalProblem",
    "Pile",
    "PileParams",
    "PileRun",
    "PileStepRecord",
    "StepEngine",
    "carry_reactions",
    "contact_frames",
    "contact_jacobian",
    "detect_contacts",
    "make_pile",
    "simulate_pile",
    "solve_local",
]
