"""Horizon planning over time-stepping models (installed as ``mcpkit.mpec``).

MPCCs themselves (the problem class, the lowering to the standard form, the solver, the JSON
loader and the stationarity check) live in :mod:`mcpkit.mpcc`; this package keeps only

* :mod:`~mcpkit.mpec.horizon`: whole horizons of per-step MCPs as one MPCC, with re-simulation
  (:class:`~mcpkit.mpec.step.StepSpec.from_model` builds a step from a model's declared step
  map); its parts :mod:`~mcpkit.mpec.step` (one step) and :mod:`~mcpkit.mpec.resimulation` (the
  re-simulation check and the horizon's verdict);
* :mod:`~mcpkit.mpec.examples`: block to a target, planar pushing, plate-motion design.

The horizon's names are exported here: ``from mcpkit.mpec import Horizon, StepSpec``.
"""

from mcpkit.mpec.horizon import Horizon
from mcpkit.mpec.resimulation import HorizonResult, forward_simulate, resimulation_check
from mcpkit.mpec.step import PathConstraint, StepSpec

__all__ = ["Horizon", "HorizonResult", "PathConstraint", "StepSpec", "forward_simulate", "resimulation_check"]
