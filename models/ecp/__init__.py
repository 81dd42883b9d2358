r"""Equivalent-contact-point (ECP) planar sliding (Xie and Chakraborty, Xie & Chakraborty).

* :mod:`~mcpkit.models.ecp.params` - slider, patch and pusher parameters (§6 values).
* :mod:`~mcpkit.models.ecp.quadratic` - the 4-unknown quadratic step (eqs 29-32) and the
  linear updates of state and ECP (eqs 11-12, 26-28).
* :mod:`~mcpkit.models.ecp.complementarity` - the step with
  :math:`0 \le \sigma \perp` ellipsoid slack :math:`\ge 0` and normal contact, valid through
  stick and rest, with the ECP-in-patch check.
* :mod:`~mcpkit.models.ecp.closed_form` - quasi-static (38-40) and pure translation (46-49).
* :mod:`~mcpkit.models.ecp.simulation` - :func:`run_ecp` on :func:`mcpkit.models.stepping.simulate`.
* :mod:`~mcpkit.models.ecp.demos`, :mod:`~mcpkit.models.ecp.plots` - §6.1/§6.2 figures.
"""

from mcpkit.models.ecp.closed_form import (
    PureTranslation,
    pure_translation_step,
    pure_translation_trajectory,
    quasi_static_velocity,
)
from mcpkit.models.ecp.complementarity import (
    ComplementarityECPStep,
    ECPOutsidePatchError,
    ECPPatchViolation,
    build_complementarity_mcp,
    check_ecp_in_patch,
)
from mcpkit.models.ecp.params import (
    EdgePusher,
    Load,
    PushForce,
    SliderParams,
    paper_push,
    paper_slider,
    square_patch,
)
from mcpkit.models.ecp.quadratic import (
    QuadraticECPStep,
    build_quadratic_mcp,
    ecp_offset,
    linear_update,
)
from mcpkit.models.ecp.simulation import ECPRun, make_model, run_ecp

__all__ = [
    "ComplementarityECPStep",
    "ECPOutsidePatchError",
    "ECPPatchViolation",
    "ECPRun",
    "EdgePusher",
    "Load",
    "PureTranslation",
    "PushForce",
    "QuadraticECPStep",
    "SliderParams",
    "build_complementarity_mcp",
    "build_quadratic_mcp",
    "check_ecp_in_patch",
    "ecp_offset",
    "linear_update",
    "make_model",
    "paper_push",
    "paper_slider",
    "pure_translation_step",
    "pure_translation_trajectory",
    "quasi_static_velocity",
    "run_ecp",
    "square_patch",
]
