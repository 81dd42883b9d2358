r"""Stewart–Trinkle velocity-level time stepping (Berard et al., Berard et al.).

* :class:`NCPStep`: quadratic friction cone, eq (9);
* :class:`LCPStep`: polyhedral cone with ``n_d`` directions, eq (15);
* bodies (:class:`Particle`, :class:`PlanarBody`, :class:`RigidBody3D`), surfaces and
  kinematic plates (:class:`VosePlate`, :class:`SinusoidalPlate`, Appendix A RK4 orientation).

Both step models follow :class:`mcpkit.models.stepping.StepModel`; run them with
:func:`mcpkit.models.stepping.simulate`. A step is solved when its MCP met its natural residual
and the per-contact Coulomb residual of :mod:`mcpkit.models.stewart_trinkle.step` met its tolerance: pass
``solver=step.make_solver(method, backend)`` (a :class:`StepSolver`, whose results are
:class:`StepResult`) so that every step is judged on both.
"""

from mcpkit.models.stewart_trinkle.bodies import Particle, PlanarBody, RigidBody3D
from mcpkit.models.stewart_trinkle.contact import Contact, LineSurface2D, PlaneSurface
from mcpkit.models.stewart_trinkle.lcp import LCPStep
from mcpkit.models.stewart_trinkle.ncp import NCPStep
from mcpkit.models.stewart_trinkle.plate import (
    SinusoidalPlate,
    VoseParameters,
    VosePlate,
    centrifuge_plate,
    scaled_circle_plate,
)
from mcpkit.models.stewart_trinkle.step import StepResult, StepSolver

__all__ = [
    "Contact",
    "LCPStep",
    "LineSurface2D",
    "NCPStep",
    "Particle",
    "PlaneSurface",
    "PlanarBody",
    "RigidBody3D",
    "SinusoidalPlate",
    "StepResult",
    "StepSolver",
    "VoseParameters",
    "VosePlate",
    "centrifuge_plate",
    "scaled_circle_plate",
]
