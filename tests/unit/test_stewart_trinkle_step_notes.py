"""A simulation's step message names a Coulomb-residual failure and its size.

The runaway-sigma point of issue 12 (``test_stewart_trinkle_coulomb``): the eq (9) natural
residual is below 1e-8 while contact 1 misses its friction. Judged by ``NCPStep.judge`` and fed
through :func:`mcpkit.models.stepping.simulate` by a stand-in solver, the step's
``StepOutcome.message`` (and so the simulation's) must say that the Coulomb residual failed,
its value, the tolerance and the factor, and that the MCP residual passed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mcpkit.models.stepping import simulate
from mcpkit.models.stewart_trinkle import Contact, NCPStep, Particle, PlaneSurface
from mcpkit.models.stewart_trinkle.bodies import GRAVITY_CGS as G
from mcpkit.solving.result import Termination
from tests.unit.test_stewart_trinkle_coulomb import _fake_result

MU, H = 0.04, 1e-6


def _step() -> tuple[NCPStep, np.ndarray]:
    far = PlaneSurface(point=[0.0, 0.0, -5.0])
    step = NCPStep(Particle.cgs(), [Contact(far, MU), Contact(PlaneSurface(), MU)], H)
    return step, step.initial_state([0, 0, 0], [4.9, 0, 0])


def _runaway(step: NCPStep) -> np.ndarray:
    bl = {b.name: b.slice for b in step.mcp.blocks}
    z = np.zeros(step.mcp.n)
    z[bl["lam_n"]] = [0.0, G * H]
    z[bl["v"]] = [4.9, 0.0, 0.0]
    z[bl["sigma"]] = [0.0, 1e5]
    z[bl["lam_t"]] = [0.0, -MU * G * H * 4.9 / 1e5]
    return z


class _HandSolver:
    """Returns the judged runaway point at every step (``simulate`` only calls ``solve(p=...)``)."""

    def __init__(self, step: NCPStep, tol: float) -> None:
        self.step, self.tol = step, tol

    def solve(self, p: Any = None) -> Any:
        return self.step.judge(p, _fake_result(self.step, p, _runaway(self.step)), friction_tol=self.tol)


@pytest.mark.parametrize("tol", [1e-8, 1e-6])
def test_coulomb_failure_is_named_with_its_size(tol: float) -> None:
    step, x0 = _step()
    out = _HandSolver(step, tol).solve(step.parameters(0, 0.0, x0))
    assert out.solve.solved and not out.friction.solved
    ratio = float(out.friction.value) / tol
    assert ratio > 1.0
    note = out.failure_note
    assert note.startswith(f"relative Coulomb residual of contact 1 {out.friction.value:.2e} > {tol:.0e}")
    assert f"({ratio:.3g} x the tolerance" in note
    assert f"although the MCP natural residual {out.natural_residual:.2e} <= 1e-08" in note

    sim = simulate(step, x0, 2, solver=_HandSolver(step, tol), on_failure="stop", progress=False)
    first = sim.steps[0]
    assert not first.solved and first.termination is Termination.STALLED
    assert first.note == note and note in first.message
    assert "natural residual" in first.message and "Coulomb residual of contact 1" in sim.message
    assert not sim.steps[1].ran and sim.steps[1].note == ""
    assert sim.step_notes == [note, ""]


def test_solved_step_has_no_note() -> None:
    step, x0 = _step()
    p = step.parameters(0, 0.0, x0)
    bl = {b.name: b.slice for b in step.mcp.blocks}
    z = _runaway(step)
    z[bl["v"]] = [4.9 - MU * G * H, 0.0, 0.0]
    z[bl["sigma"]] = [0.0, 4.9 - MU * G * H]
    z[bl["lam_t"]] = [0.0, -MU * G * H]
    good = step.judge(p, _fake_result(step, p, z))
    assert good.solved and good.failure_note == ""
