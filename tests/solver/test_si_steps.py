"""Stewart–Trinkle steps in SI, the default units, are solved with the default tolerances.

The step MCP's residual is absolute (velocity and velocity² rows), so its default tolerance is
one physical tolerance in the body's units (1e-8 cm²/s² = 1e-12 m²/s²); the Coulomb check stays
relative (1e-8). With the cgs tolerance applied to SI numbers (tol = 1e-8) the particle runs
failed steps on the Coulomb check.
"""

from __future__ import annotations

import numpy as np
import pytest

from mcpkit.models.stepping import simulate
from mcpkit.models.stewart_trinkle import Contact, NCPStep, Particle, PlaneSurface
from mcpkit.models.stewart_trinkle.step import DEFAULT_FRICTION_TOL, DEFAULT_STEP_TOL

G, MU, H = 9.80665, 0.3, 1e-3


@pytest.mark.solver
@pytest.mark.parametrize("v0", [[0.0, 0.0, 0.0], [0.05, 0.0, 0.0], [0.06, 0.03, 0.0]])
def test_si_particle_steps_solve_and_match_coulomb(v0: list[float]) -> None:
    """At rest or sliding: every step solved, |v_k| = max(|v0| - mu g t_k, 0) to 1e-9 m/s."""
    st = NCPStep(Particle(mass=2.0), [Contact(PlaneSurface(), MU)], H)
    solver = st.make_solver()
    assert solver.options.tol == DEFAULT_STEP_TOL["SI"] and solver.friction_tol == DEFAULT_FRICTION_TOL
    sim = simulate(st, st.initial_state([0, 0, 0], v0), 30, progress=False)
    assert sim.solved, sim.message
    speed = np.linalg.norm(sim.states[:, 3:5], axis=1)
    np.testing.assert_allclose(speed, np.maximum(np.linalg.norm(v0) - MU * G * sim.t, 0.0), atol=1e-9)


@pytest.mark.solver
def test_si_and_cgs_runs_are_the_same_motion() -> None:
    """The same particle in SI (m, kg) and in cgs (cm, g) with the default tolerances: the cgs
    trajectory is the SI one times 100, every step solved in both."""
    v0 = np.array([0.06, 0.03, 0.0])
    runs = []
    for body, scale in ((Particle(mass=1.0), 1.0), (Particle.cgs(mass=1000.0), 100.0)):
        st = NCPStep(body, [Contact(PlaneSurface(), MU)], H)
        sim = simulate(st, st.initial_state([0, 0, 0], scale * v0), 30, progress=False)
        assert sim.solved, sim.message
        runs.append(sim.states / scale)
    np.testing.assert_allclose(runs[0], runs[1], rtol=0, atol=1e-9)
