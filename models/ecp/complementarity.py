r"""ECP step model with complementarity: correct when the slider sticks or comes to rest.

The quadratic model (Xie and Chakraborty eqs 29-32) replaces the complementarity (20) by the equality
(21), i.e. it assumes :math:`\sigma > 0`; when the slider should stop it overshoots through
zero velocity (or fails). Here the friction law keeps its complementarity form (eqs 17-20)
and the normal impulse is a complementarity variable too. Unknowns
:math:`(p_n, \sigma, p_t, p_o, p_r)`; with :math:`v^{u+1}, w_z^{u+1}` from eqs 26-28 and
:math:`v_z^{u+1} = v_z^u + (p_n + p_z^u)/m - g h`,

.. math::

    0 \le p_n &\perp v_z^{u+1} + \delta/h \ge 0 \quad\text{(normal contact)}, \\
    0 \le \sigma &\perp \mu^2 p_n^2 - (p_t/e_t)^2 - (p_o/e_o)^2 - (p_r/e_r)^2 \ge 0
        \quad\text{(eq 20)}, \\
    0 &= \mu e_t^2 (p_n v_x^{u+1} + q_z p_o w_z^{u+1}) + p_t\sigma \quad\text{(eq 29)}, \\
    0 &= \mu e_o^2 (p_n v_y^{u+1} - q_z p_t w_z^{u+1}) + p_o\sigma , \\
    0 &= \mu e_r^2 p_n w_z^{u+1} + p_r\sigma .

The last three are eqs 29-31 with the ECP of eqs 11-12 substituted and multiplied by
:math:`p_n`, so they stay polynomial when :math:`p_n` is a variable. When the slider rests on
the plane (gap :math:`\delta = 0`, :math:`v_z^u = 0`, no vertical load) the normal row gives
:math:`p_n = m g h` (eq 8), and while it slides the solution coincides with the quadratic
model's. With :math:`\sigma = 0` the rows force :math:`v^{u+1} = 0, w^{u+1} = 0` (stick)
with the wrench inside the ellipsoid.

After each step the ECP offset :math:`a - q = -(p_t, p_o) q_z/p_n` is checked against the
convex patch; a point outside means the pressure distribution needed does not exist (the
slider would tip). Violations are returned as typed records (:class:`ECPPatchViolation`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mcpkit.errors import MCPInputError, MCPKitError
from mcpkit.models.ecp.params import SliderParams
from mcpkit.models.ecp.quadratic import (
    SliderStep,
    StepImpulses,
    declare_slider_parameters,
    ellipsoid_slack,
    friction_guess,
    friction_rows,
)
from mcpkit.problems.blocks import named
from mcpkit.problems.mcp import MCP
from mcpkit.solving.result import MCPResult

__all__ = [
    "ComplementarityECPStep",
    "ECPOutsidePatchError",
    "ECPPatchViolation",
    "build_complementarity_mcp",
    "check_ecp_in_patch",
]


class ECPOutsidePatchError(MCPKitError, RuntimeError):
    """The equivalent contact point left the convex contact patch (raised in strict mode)."""

    def __init__(self, message: str, violation: ECPPatchViolation) -> None:
        super().__init__(message)
        self.violation = violation


@dataclass(frozen=True)
class ECPPatchViolation:
    """One step whose ECP lies outside the contact patch.

    Attributes
    ----------
    step
        Step index :math:`u` (the ECP is that of the impulses of step :math:`u \\to u+1`).
    t
        Time at the end of the step [s].
    offset_body
        ECP minus CM projection, in the body frame [m].
    excess
        How far outside the patch (largest signed edge distance) [m], ``> tol``.
    """

    step: int
    t: float
    offset_body: tuple[float, float]
    excess: float


def check_ecp_in_patch(
    params: SliderParams,
    theta: np.ndarray,
    offset_world: np.ndarray,
    t: np.ndarray,
    tol: float = 1e-12,
) -> list[ECPPatchViolation]:
    r"""Violations of :math:`R(\theta)^T (a - q) \in` patch, one record per offending step.

    Parameters
    ----------
    theta
        Orientation after each step, shape ``(N,)``.
    offset_world
        :math:`a - q` per step, shape ``(N, 2)``.
    t
        Time after each step, shape ``(N,)``.
    tol
        Allowed excess [m].
    """
    th = np.asarray(theta, dtype=float).reshape(-1)
    off = np.asarray(offset_world, dtype=float).reshape(-1, 2)
    c, s = np.cos(th), np.sin(th)
    body = np.stack([c * off[:, 0] + s * off[:, 1], -s * off[:, 0] + c * off[:, 1]], axis=1)
    dist = np.asarray(params.patch_distance(body))
    bad = np.flatnonzero(~(dist <= tol))  # NaN counts as a violation
    return [
        ECPPatchViolation(int(k), float(t[k]), (float(body[k, 0]), float(body[k, 1])), float(dist[k]))
        for k in bad
    ]


def build_complementarity_mcp(params: SliderParams) -> MCP:
    r"""Declare the complementarity ECP step (module docstring) as an MCP.

    Blocks: ``p_n`` (:math:`\ge 0`), ``sigma`` (:math:`\ge 0`), ``p_t, p_o, p_r`` (free).
    Extra parameters over the quadratic model: ``v_z`` (vertical velocity), ``p_z`` (applied
    vertical impulse), ``gap`` (:math:`\delta`), ``g`` and ``h``.
    """
    if not isinstance(params, SliderParams):
        raise MCPInputError(f"expected SliderParams, got {type(params).__name__}")
    if params.mu == 0:
        raise MCPInputError("the ECP models need mu > 0 (mu = 0 is frictionless free motion)")
    mcp = MCP("ecp_complementarity")
    pn = mcp.add_variable_block("p_n", 1, lb=0.0, start=params.p_n, latex=r"p_{n}")
    sig = mcp.add_variable_block("sigma", 1, lb=0.0, start=1.0, latex=r"\sigma")
    free = {"lb": -math.inf, "ub": math.inf}
    pt = mcp.add_variable_block("p_t", 1, latex=r"p_{t}", **free)
    po = mcp.add_variable_block("p_o", 1, latex=r"p_{o}", **free)
    pr = mcp.add_variable_block("p_r", 1, latex=r"p_{r}", **free)
    s = declare_slider_parameters(mcp, params)
    vz = mcp.add_parameter_block("v_z", 1, 0.0, latex=r"v^{u}_{z}")
    pz = mcp.add_parameter_block("p_z", 1, 0.0, latex=r"p^{u}_{z}")
    gap = mcp.add_parameter_block("gap", 1, 0.0, latex=r"\delta")
    g = mcp.add_parameter_block("g", 1, params.g, latex="g")
    h = mcp.add_parameter_block("h", 1, params.h, latex="h")
    # normal-contact row, in m/s: the vertical velocity after the step plus the gap rate
    vz1 = named("v_z_next", vz + (pn + pz) / s["m"] - g * h, r"v^{u+1}_{z}")
    mcp.add_functions("p_n", vz1 + gap / h)
    mcp.add_functions("sigma", ellipsoid_slack(s, pt, po, pr, pn))
    for name, row in zip(("p_t", "p_o", "p_r"), friction_rows(s, pt, po, pr, sig, pn), strict=True):
        mcp.add_functions(name, row)
    return mcp


class ComplementarityECPStep(SliderStep):
    r""":class:`~mcpkit.models.stepping.StepModel` of the complementarity ECP model.

    Same state and load convention as
    :class:`~mcpkit.models.ecp.quadratic.QuadraticECPStep`. The vertical motion is not
    integrated (the slider is taken to stay on the plane); if a step returns :math:`p_n = 0`
    (lift-off) it shows in the result's ``p_n`` block.

    See :class:`~mcpkit.models.ecp.quadratic.SliderStep` for the state, the load and the step
    map (the state update does not use :math:`p_n`).
    """

    kind = "complementarity"
    build = staticmethod(build_complementarity_mcp)

    def set_start(self, state: np.ndarray, t: float = 0.0) -> None:
        """Starting point of the first step from :func:`friction_guess` and :math:`p_n = mgh`."""
        g = friction_guess(self.params, state, self.applied(t, state))
        self.mcp.set_start(p_n=self.params.p_n, p_t=g[0], p_o=g[1], p_r=g[2], sigma=g[3])

    def impulses(self, result: MCPResult) -> StepImpulses:
        """The step's impulses read from a solve result."""
        return StepImpulses(
            float(result.block("p_t")[0]),
            float(result.block("p_o")[0]),
            float(result.block("p_r")[0]),
            float(result.block("p_n")[0]),
        )

    def sigma(self, result: MCPResult) -> float:
        r"""Slip speed :math:`\sigma^{u+1}` (0 when sticking)."""
        return float(result.block("sigma")[0])
