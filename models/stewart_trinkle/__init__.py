r"""Stewart–Trinkle velocity-level time stepping (seed 004, Berard et al.).

* :class:`NCPStep`: quadratic friction cone, eq (9);
* :class:`LCPStep`: polyhedral cone with ``n_d`` directions, eq (15);
* bodies (:class:`Particle`, :class:`PlanarBody`, :class:`RigidBody3D`), surfaces and
  kinematic plates (:class:`VosePlate`, :class:`SinusoidalPlate`, Appendix A RK4 orientation).

Both step models follow :class:`mcpkit.models.stepping.StepModel`; run them with
:func:`mcpkit.models.stepping.simulate`.
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
    "VoseParameters",
    "VosePlate",
    "centrifuge_plate",
    "scaled_circle_plate",
]
