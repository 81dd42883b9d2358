r"""Run an ECP step model with :func:`mcpkit.models.stepping.simulate` and post-process it.

For each step :math:`u \to u+1` the run records the impulses, the slip speed
:math:`\sigma^{u+1}`, the ECP :math:`a^{u+1} = q^{u+1} - (p_t, p_o) q_z / p_n` (Xie and Chakraborty
eqs 11-12) and whether it lies in the patch (:class:`ECPPatchViolation` records), and, for
the quadratic model, the steps where :math:`\sigma^{u+1} \le 0` (the model left its domain
of validity: it overshoots through zero velocity).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mcpkit.errors import MCPInputError
from mcpkit.frontends.solve import Solver
from mcpkit.models.ecp.complementarity import (
    ComplementarityECPStep,
    ECPOutsidePatchError,
    ECPPatchViolation,
    check_ecp_in_patch,
)
from mcpkit.models.ecp.params import AppliedLoad, SliderParams
from mcpkit.models.ecp.quadratic import QuadraticECPStep, ecp_offset
from mcpkit.models.stepping import SimulationResult, simulate
from mcpkit.solving.options import Choice
from mcpkit.solving.result import OnePart

__all__ = ["ECPModelKind", "ECPRun", "make_model", "run_ecp"]

ECPModel = QuadraticECPStep | ComplementarityECPStep


class ECPModelKind(str, Choice, option="ECP model"):
    """Which ECP step model :func:`make_model` builds (the argument ``kind``)."""

    QUADRATIC = "quadratic"
    """The quadratic limit-surface model of eqs 29-32
    (:class:`~mcpkit.models.ecp.quadratic.QuadraticECPStep`)."""
    COMPLEMENTARITY = "complementarity"
    """The complementarity form (:class:`~mcpkit.models.ecp.complementarity.ComplementarityECPStep`)."""


@dataclass(repr=False)
class ECPRun(OnePart):
    """Result of :func:`run_ecp`: the raw simulation plus the ECP quantities per step.

    Follows :class:`mcpkit.solving.result.Outcome` through its simulation (``solved`` when every step was).

    Attributes
    ----------
    kind
        ``"quadratic"`` or ``"complementarity"``.
    sim
        The :class:`~mcpkit.models.stepping.SimulationResult` (states, per-step status).
    impulses
        ``(N, 4)``: :math:`p_t, p_o, p_r, p_n` of each step.
    sigma
        ``(N,)``: slip speed :math:`\\sigma^{u+1}`.
    ecp
        ``(N+1, 2)``: world-frame ECP; row 0 is the CM projection (no impulse yet).
    ecp_offset_body
        ``(N+1, 2)``: ECP minus CM in the body frame.
    violations
        Steps whose ECP left the patch.
    overshoot_steps
        Quadratic model only: steps with :math:`\\sigma^{u+1} \\le 0` (outside its validity).
    applied
        ``(N, 3)``: applied impulses :math:`p_x, p_y, p_{z\\tau}` of each step.
    """

    kind: str
    params: SliderParams
    sim: SimulationResult
    impulses: np.ndarray
    sigma: np.ndarray
    ecp: np.ndarray
    ecp_offset_body: np.ndarray
    violations: list[ECPPatchViolation] = field(default_factory=list)
    overshoot_steps: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    applied: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))

    @property
    def t(self) -> np.ndarray:
        """Times, shape ``(N+1,)``."""
        return self.sim.t

    @property
    def part(self) -> SimulationResult:
        """The verdict's one part: the simulation (solved when every step was)."""
        return self.sim

    @property
    def states(self) -> np.ndarray:
        """States ``(q_x, q_y, theta_z, v_x, v_y, w_z)``, shape ``(N+1, 6)``."""
        return self.sim.states

    def summary(self) -> dict[str, Any]:
        """:data:`~mcpkit.solving.result.RESULT_KEYS` (kind ``ecp_run``), per-step counts and key numbers."""
        s = self.sim.summary()
        s["kind"] = "ecp_run"
        off = np.linalg.norm(self.ecp_offset_body[1:], axis=1)
        s.update(
            {
                "model": self.kind,
                "ecp_violations": len(self.violations),
                "first_violation_step": self.violations[0].step if self.violations else None,
                "overshoot_steps": self.overshoot_steps[:50].tolist(),
                "max_ecp_offset_m": float(np.nanmax(off)) if off.size else 0.0,
                "final_state": [float(v) for v in self.states[-1]],
            }
        )
        return s


def make_model(kind: ECPModelKind | str, params: SliderParams, load: AppliedLoad | None = None) -> ECPModel:
    """A step model by name: ``"quadratic"`` (eqs 29-32) or ``"complementarity"``."""
    if ECPModelKind.parse(kind) is ECPModelKind.QUADRATIC:
        return QuadraticECPStep(params, load)
    return ComplementarityECPStep(params, load)


def run_ecp(
    model: ECPModel,
    x0: Any,
    duration: float,
    *,
    progress: bool = False,
    strict_patch: bool = False,
    solver: Solver | None = None,
    backend: str = "casadi",
    method: str = "scholtes",
    tol: float = 1e-10,
    **options: Any,
) -> ECPRun:
    r"""Simulate ``model`` from ``x0`` for ``duration`` seconds (``round(duration/h)`` steps).

    Parameters
    ----------
    model
        A :class:`QuadraticECPStep` or :class:`ComplementarityECPStep` (bound to its controls
        with ``with_inputs`` when its load takes any).
    x0
        Initial state :math:`(q_x, q_y, \theta_z, v_x, v_y, w_z)`.
    duration
        Simulated time [s], ``>= h``.
    progress
        Progress bar from :func:`~mcpkit.models.stepping.simulate`.
    strict_patch
        Raise :class:`ECPOutsidePatchError` for the first ECP outside the patch instead of
        only recording it.
    solver
        A pre-built :class:`mcpkit.Solver` for ``model.mcp`` (re-use / benchmarking).
    backend, method, tol, **options
        Passed to :func:`~mcpkit.models.stepping.simulate` (``on_failure``, ``deadline``) and
        :class:`mcpkit.Solver` (IPOPT through CasADi by default).
    """
    if not isinstance(model, (QuadraticECPStep, ComplementarityECPStep)):
        raise MCPInputError(f"run_ecp expects an ECP step model, got {type(model).__name__}")
    P = model.params
    x = P.check_state(x0)
    try:
        dur = float(duration)
    except (TypeError, ValueError):
        raise MCPInputError(f"duration must be a number, got {duration!r}") from None
    if not math.isfinite(dur) or dur < P.h * (1 - 1e-9):
        raise MCPInputError(f"duration must be finite and >= h = {P.h}, got {duration!r}")
    n_steps = max(1, round(dur / P.h))
    model.set_start(x)
    sim = simulate(
        model, x, n_steps, progress=progress, solver=solver, backend=backend, method=method,
        tol=tol, **options,
    )  # fmt: skip
    N = n_steps
    imp = np.full((N, 4), np.nan)
    names = ("p_t", "p_o", "p_r")
    for j, nm in enumerate(names):
        imp[:, j] = sim.block(nm)[:, 0]
    imp[:, 3] = sim.block("p_n")[:, 0] if "p_n" in sim.blocks else P.p_n
    sig = sim.block("sigma")[:, 0]
    applied = np.full((N, 3), np.nan)
    for k in range(N):
        if np.isfinite(sim.states[k]).all():
            applied[k] = model.applied(float(sim.t[k]), sim.states[k], k)
    off_w = np.zeros((N + 1, 2))
    off_w[1:] = ecp_offset(P, imp[:, 0], imp[:, 1], imp[:, 3])
    th = sim.states[:, 2]
    c, s = np.cos(th), np.sin(th)
    off_b = np.stack([c * off_w[:, 0] + s * off_w[:, 1], -s * off_w[:, 0] + c * off_w[:, 1]], axis=1)
    ecp = sim.states[:, :2] + off_w
    ran = np.isfinite(sim.states[1:]).all(axis=1)
    viol = check_ecp_in_patch(P, th[1:][ran], off_w[1:][ran], sim.t[1:][ran])
    idx = np.flatnonzero(ran)
    viol = [ECPPatchViolation(int(idx[v.step]), v.t, v.offset_body, v.excess) for v in viol]
    if strict_patch and viol:
        v = viol[0]
        raise ECPOutsidePatchError(
            f"ECP left the patch at step {v.step} (t={v.t:.4g} s): body offset {v.offset_body}, "
            f"{v.excess:.3g} m outside",
            v,
        )
    over = np.flatnonzero(sig <= 0) if model.kind == "quadratic" else np.zeros(0, dtype=int)
    return ECPRun(model.kind, P, sim, imp, sig, ecp, off_b, viol, over, applied)
