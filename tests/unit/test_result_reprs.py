"""Every result object prints in a few lines: ``repr`` states the verdict and sizes, not the data.

``print(simulate(...))`` printed 37 KB of arrays and ``HorizonResult`` the same. Results are built
by hand with large arrays here (no solver runs); a structural check covers the classes whose
instances need a whole model to build.
"""

from __future__ import annotations

import dataclasses
import importlib

import numpy as np
import pytest

from mcpkit.engines.lemke_pivoting import lemke_lcp
from mcpkit.models.stepping import SimulationResult
from mcpkit.solving.result import (
    CompositeResult,
    MPCCResult,
    SolutionStatus,
    Termination,
    ToleranceCheck,
)
from mpec.resimulation import HorizonResult

#: A short repr: at most this many characters.
SHORT = 800

#: User-facing result classes (module, class): none may keep the dataclass-generated repr.
RESULT_CLASSES = [
    ("mcpkit.models.stepping", "SimulationResult"),
    ("mpec.resimulation", "HorizonResult"),
    ("mpec.examples.pushing", "PushingPlan"),
    ("mpec.examples.pushing", "PushAttempt"),
    ("mpec.examples.plate_design", "MultiDesignResult"),
    ("mcpkit.models.fclib", "FCLIBResult"),
    ("mcpkit.models.stewart_trinkle.step", "StepResult"),
    ("mcpkit.models.stewart_trinkle.studies", "VoseRun"),
    ("mcpkit.models.ecp.simulation", "ECPRun"),
    ("mcpkit.models.pile.demo", "PileDemoResult"),
    ("mcpkit.models.pile.step", "PileRun"),
    ("mcpkit.models.friction.cspace_cone", "ReactionResult"),
    ("mcpkit.models.friction.lugre", "LuGreTrajectory"),
    ("mcpkit.models.friction.lugre_experiments", "VelocityProfileResult"),
    ("mcpkit.models.friction.lugre_experiments", "DriftResult"),
    ("mcpkit.models.friction.lugre_experiments", "SlipStickResult"),
    ("mcpkit.models.friction.lugre_experiments", "EllipsoidErrorResult"),
    ("mcpkit.solving.result", "CompositeResult"),
    ("mcpkit.solving.result", "MCPResult"),
    ("mcpkit.solving.result", "MPCCResult"),
    ("mcpkit.engines.nsgs", "NSGSResult"),
    ("mcpkit.engines.prox_contact", "ProxResult"),
    ("mcpkit.engines.lemke_pivoting", "LemkeResult"),
    ("mcpkit.engines.newton_contact", "ContactNewtonResult"),
]


@pytest.mark.parametrize(("module", "name"), RESULT_CLASSES)
def test_no_result_keeps_the_generated_repr(module: str, name: str) -> None:
    cls = getattr(importlib.import_module(module), name)
    assert cls.__repr__.__code__.co_filename != dataclasses.__file__, f"{name} prints every field"


def simulation(n_steps: int = 500, n: int = 40) -> SimulationResult:
    rng = np.random.default_rng(0)
    solved = np.ones(n_steps, dtype=bool)
    solved[7] = False
    terms = [Termination.STALLED if k == 7 else Termination.CONVERGED for k in range(n_steps)]
    return SimulationResult(
        t=np.linspace(0.0, 1.0, n_steps + 1), states=rng.normal(size=(n_steps + 1, 6)),
        z=rng.normal(size=(n_steps, n)), step_solved=solved, natural_residual=np.full(n_steps, 1e-11),
        step_termination=terms,
        iterations=np.ones(n_steps, dtype=int), step_time_s=np.full(n_steps, 1e-4),
        method="newton", backend="casadi", wall_time_s=0.07,
    )  # fmt: skip


def test_simulation_repr_is_short_and_states_the_verdict() -> None:
    sim = simulation()
    text = repr(sim)
    assert len(text) < SHORT and text.count("\n") <= 4
    assert text.startswith("SimulationResult(solved=False, termination=stalled")
    assert "steps=500" in text and "solved_steps=499" in text and "z 500x40" in text
    assert "first failure at step 7" in text
    assert str(sim) == text  # print() shows the same few lines


def mpcc_result(n: int = 3000) -> MPCCResult:
    x = np.linspace(0.0, 1.0, n)
    return MPCCResult(
        termination=Termination.CONVERGED, solution_status=SolutionStatus.SOLUTION, tol=1e-8, iterations=12,
        wall_time_s=0.5, backend="casadi", method="scholtes", x=x, f=0.25, g=np.zeros(n), G=x, H=1 - x,
        comp_residual=1e-9, constraint_violation=0.0,
    )  # fmt: skip


def test_horizon_repr_is_short() -> None:
    N, n = 400, 30
    h = HorizonResult(
        t=np.linspace(0, 1, N + 1), states=np.zeros((N + 1, 6)), controls=np.zeros((N, 2)),
        design=np.zeros(3), z=np.zeros((N, n)), objective=0.6187, mpcc=mpcc_result(),
        resim_states=np.zeros((N + 1, 6)), resim=ToleranceCheck("re-simulation deviation", 1e-9, 1e-6),
        solve_time_s=2.0,
    )  # fmt: skip
    text = repr(h)
    assert len(text) < SHORT
    assert text.startswith("HorizonResult(solved=True, termination=converged")
    assert "objective=0.6187" in text and "controls 400x2" in text
    assert "MPCCResult(" in repr(h.mpcc) and len(repr(h.mpcc)) < SHORT


def test_composite_and_engine_reprs_are_short() -> None:
    parts = [simulation(50), simulation(60)]
    comp = CompositeResult(kind="demo:test", parts=parts, what="run", details={"rows": list(range(100))})
    text = repr(comp)
    assert len(text) < SHORT and text.startswith("CompositeResult(solved=False, termination=stalled")
    n = 300
    rng = np.random.default_rng(1)
    A = rng.normal(size=(n, n))
    lem = lemke_lcp(A @ A.T + n * np.eye(n), rng.normal(size=n))
    text = repr(lem)
    assert len(text) < SHORT and text.startswith(f"LemkeResult(status='{lem.status}'")
    assert f"z=<float64 array {n}>" in text
