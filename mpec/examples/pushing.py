r"""Planar pushing of the ECP slider (seed 000) from pose A to pose B as one horizon MPCC.

Each step is the complementarity ECP model of :mod:`mcpkit.models.ecp.complementarity`
(:math:`0 \le \sigma \perp` ellipsoid slack :math:`\ge 0`, seed 000 eqs 17-20 with the
substituted eqs 29-31), so the plan may stick (:math:`\sigma = 0`) or slide. A point pusher acts
on the left edge at the body point :math:`\rho = (-L/2, \theta_c)`, where the contact height
:math:`\theta_c` is a **design parameter** shared by the whole horizon, with the body-frame force
:math:`u_k = (f_n, f_t)`, :math:`0 \le f_n \le F_{\max}`, inside the pusher's friction cone
:math:`|f_t| \le \mu_p f_n` (two linear path constraints). The parameter map is that of
:meth:`~mcpkit.models.ecp.complementarity.ComplementarityECPStep.parameters`
with the applied impulses

.. math::
    (p_x, p_y) = h R(\theta_z)(f_n, f_t),\qquad p_{z\tau} = h(\rho_x f_t - \rho_y f_n),

and the update is the linear one of eqs 26-28: :math:`\nu_{k+1} = \nu_k + (p + p_{\rm app})/m`
(resp. :math:`/I_z` for the yaw rate), :math:`q_{k+1} = q_k + h\nu_{k+1}`.
The plan starts at rest at pose A, must end at rest at pose B and minimises
:math:`\sum_k h\|u_k\|^2`. Since the pusher cannot pull, the slider must be braked by table
friction, so the plan slides and then sticks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import casadi as ca
import numpy as np

from mcpkit.errors import MCPInputError
from mcpkit.models.ecp.complementarity import ComplementarityECPStep, build_complementarity_mcp
from mcpkit.models.ecp.params import SliderParams, paper_slider
from mcpkit.models.ecp.simulation import run_ecp
from mcpkit.mpec.horizon import Horizon, HorizonResult, PathConstraint, StepSpec

__all__ = ["PushTask", "pushing_horizon", "pushing_step_spec", "ecp_simulator", "solve_pushing"]


@dataclass(frozen=True)
class PushTask:
    """The pose-to-pose pushing task.

    Attributes
    ----------
    params
        The slider (default: seed 000 §6.1, ``h = 0.01`` s).
    start, goal
        Poses :math:`(q_x, q_y, \\theta_z)` [m, m, rad]; both at rest.
    n_steps
        Horizon length :math:`N`.
    force_max
        :math:`F_{\\max}` [N].
    mu_pusher
        Pusher friction coefficient :math:`\\mu_p`.
    contact_range
        Bounds on the design contact height :math:`\\theta_c` on the left edge [m].
    """

    params: SliderParams = field(default_factory=paper_slider)
    start: tuple[float, float, float] = (0.0, 0.0, 0.0)
    goal: tuple[float, float, float] = (0.04, 0.01, 0.15)
    n_steps: int = 30
    force_max: float = 10.0
    mu_pusher: float = 0.3
    contact_range: tuple[float, float] = (-0.02, 0.02)

    def __post_init__(self) -> None:
        if not isinstance(self.n_steps, int) or self.n_steps < 1:
            raise MCPInputError(f"PushTask.n_steps must be a positive integer, got {self.n_steps!r}")
        for name in ("force_max", "mu_pusher"):
            v = float(getattr(self, name))
            if not math.isfinite(v) or v < 0:
                raise MCPInputError(f"PushTask.{name} must be finite and >= 0, got {v!r}")
        lo, hi = self.contact_range
        W = float(np.max(self.params.patch[:, 1]) - np.min(self.params.patch[:, 1]))
        if not (-W / 2 <= lo <= hi <= W / 2):
            raise MCPInputError(f"PushTask.contact_range must lie on the edge [-{W / 2}, {W / 2}]")

    @property
    def edge_x(self) -> float:
        """Body-frame x of the left edge."""
        return float(np.min(self.params.patch[:, 0]))


def pushing_step_spec(task: PushTask) -> StepSpec:
    """The :class:`StepSpec`: state ``(q_x, q_y, theta_z, v_x, v_y, w_z)``, control ``(f_n, f_t)``,
    design ``theta_c`` (contact height on the left edge)."""
    P = task.params
    mcp = build_complementarity_mcp(P)
    h, rx = P.h, task.edge_x

    def applied(x: ca.SX, u: ca.SX, th: ca.SX) -> tuple[ca.SX, ca.SX, ca.SX]:
        c, s = ca.cos(x[2]), ca.sin(x[2])
        fn, ft = u[0], u[1]
        return h * (c * fn - s * ft), h * (s * fn + c * ft), h * (rx * ft - th[0] * fn)

    def params(x: ca.SX, u: ca.SX, th: ca.SX, t: ca.SX) -> dict[str, Any]:
        px, py, pz = applied(x, u, th)
        return {"v_x": x[3], "v_y": x[4], "w_z": x[5], "p_x": px, "p_y": py, "p_ztau": pz}

    sl = {b.name: b.slice.start for b in mcp.blocks}

    def update(x: ca.SX, z: ca.SX, u: ca.SX, th: ca.SX) -> ca.SX:
        px, py, pz = applied(x, u, th)
        v = ca.vertcat(
            x[3] + (z[sl["p_t"]] + px) / P.m,
            x[4] + (z[sl["p_o"]] + py) / P.m,
            x[5] + (z[sl["p_r"]] + pz) / P.I_z,
        )
        return ca.vertcat(x[:3] + h * v, v)

    return StepSpec(mcp, n_state=6, n_control=2, n_design=1, parameters=params, update=update, h=h)


def pushing_horizon(task: PushTask) -> Horizon:
    r"""Rest at A to rest at B, :math:`0 \le f_n \le F_{\max}`, :math:`|f_t| \le \mu_p f_n`,
    objective :math:`\sum_k h\|u_k\|^2`."""
    spec = pushing_step_spec(task)
    h, mp = task.params.h, task.mu_pusher
    x0 = np.concatenate([task.start, np.zeros(3)])
    xT = np.concatenate([task.goal, np.zeros(3)])
    cone = PathConstraint(lambda x, u, th: ca.vertcat(u[1] - mp * u[0], -u[1] - mp * u[0]), -math.inf, 0.0)
    return Horizon(
        spec, task.n_steps, x0,
        control_bounds=([0.0, -task.force_max], [task.force_max, task.force_max]),
        design_bounds=task.contact_range,
        terminal_bounds=(xT, xT),
        stage_cost=lambda x, u, th, z, k: h * (u[0] ** 2 + u[1] ** 2),
        path=[cone],
    )  # fmt: skip


def ecp_simulator(task: PushTask) -> Any:
    """``simulate(U, theta) -> states`` with :class:`ComplementarityECPStep` and :func:`run_ecp`
    (the model's own parameters/advance), the pusher given as a load ``(t, state) -> wrench``."""
    P, rx = task.params, task.edge_x

    def run(U: np.ndarray, theta: np.ndarray) -> np.ndarray:
        def load(t: float, state: np.ndarray) -> np.ndarray:
            k = min(int(round(t / P.h)), U.shape[0] - 1)
            fn, ft = U[k]
            c, s = math.cos(state[2]), math.sin(state[2])
            return np.array([c * fn - s * ft, s * fn + c * ft, rx * ft - theta[0] * fn])

        model = ComplementarityECPStep(P, load)
        x0 = np.concatenate([task.start, np.zeros(3)])
        return run_ecp(model, x0, task.n_steps * P.h, tol=1e-10).states

    return run


def solve_pushing(
    task: PushTask | None = None, guess: tuple[float, float] = (1 / 3, 2.0), **options: Any
) -> tuple[HorizonResult, Horizon]:
    """Build and solve the pushing horizon; re-simulate with :func:`run_ecp`.

    Initial guess: push straight (:math:`f_n = c\\,\\mu m g`, :math:`f_t = 0`) at the edge centre
    for the first fraction ``a`` of the horizon, nothing afterwards; ``guess = (a, c)``. The
    MPCC is non-convex (bilinear friction rows) and the homotopy is sensitive to this guess:
    a failed plan is reported (``ok = False``), never hidden.
    """
    task = PushTask() if task is None else task
    hz = pushing_horizon(task)
    P = task.params
    U0 = np.zeros((task.n_steps, 2))
    frac, mag = guess
    if not (0 < frac <= 1) or not math.isfinite(mag) or mag < 0:
        raise MCPInputError(f"guess must be (fraction in (0, 1], magnitude >= 0), got {guess!r}")
    U0[: max(1, int(task.n_steps * frac)), 0] = mag * P.mu * P.m * P.g
    options.setdefault("deviation_tol", 1e-5)
    res = hz.solve(U0, [0.0], simulator=ecp_simulator(task), **options)
    return res, hz
