"""Stewart–Trinkle steps judged on the Coulomb residual too (issue 12), with solvers.

* In a simulation (``solver=step.make_solver(...)``) of the seed-004 case (mu beta_n = 3.9e-5,
  sliding at 4.9): every step the run calls solved obeys Coulomb's law, checked independently
  (``fb`` and ``scholtes`` met the natural residual of eq (9) at points that do not: see
  test_false_solved); ``penalty`` solves every step, as the closed form says.
* The polyhedral cone (eq 15) on the same step: its rows are linear, and every method's "solved"
  point obeys the polygon-cone Coulomb law, checked here with an NNLS projection independent of
  mcpkit's.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import nnls

from mcpkit.models.stepping import simulate
from mcpkit.models.stewart_trinkle import Contact, LCPStep, NCPStep, Particle, PlaneSurface
from mcpkit.models.stewart_trinkle.bodies import GRAVITY_CGS as G
from mcpkit.solving.result import Termination

pytestmark = pytest.mark.solver
MU, H, V0 = 0.04, 1e-6, 4.9


def _disc_residual(step: NCPStep, p: dict, z: np.ndarray) -> float:
    """|r - P_K(r - u_hat)| for the disc cone of one contact (closed-form projection, written here)."""
    bl = {b.name: b.slice for b in step.mcp.blocks}
    v = z[bl["v"]]
    Wn, Wt, Wo = (np.reshape(p[k], -1) for k in ("Wn", "Wt", "Wo"))
    uf = np.array([Wt @ v - p["ut"][0], Wo @ v - p["uo"][0]])
    r = np.array([z[bl["lam_n"]][0], z[bl["lam_t"]][0], z[bl["lam_o"]][0]])
    w = r - np.concatenate([[p["psi_h"][0] + Wn @ v + MU * np.linalg.norm(uf)], uf])
    nf = np.linalg.norm(w[1:])
    if nf <= MU * w[0]:
        proj = w
    elif MU * nf <= -w[0]:
        proj = np.zeros(3)
    else:
        a = (w[0] + MU * nf) / (1 + MU**2)
        proj = np.concatenate([[a], MU * a * w[1:] / nf])
    return float(np.linalg.norm(r - proj))


@pytest.mark.parametrize("method", ["fb", "penalty", "scholtes"])
def test_simulation_steps_are_judged_on_coulomb(method: str) -> None:
    """Every step the run calls solved obeys Coulomb's law (to 0.1 % of mu g h), whatever the
    method's MCP verdict; penalty solves the run and matches the closed form |v_k| = v0 - mu g t_k."""
    st = NCPStep(Particle.cgs(), [Contact(PlaneSurface(), MU)], H)
    solver = st.make_solver(method, "casadi")
    sim = simulate(st, st.initial_state([0, 0, 0], [V0, 0, 0]), 5, progress=False, solver=solver)
    friction = MU * G * H
    for k in np.flatnonzero(sim.step_solved):
        p = st.parameters(int(k), float(sim.t[k]), sim.states[k])
        assert _disc_residual(st, p, sim.z[k]) <= 1e-3 * friction, (method, k)
    for k in sim.failed_steps:
        assert sim.step_termination[k] is not Termination.CONVERGED
    if method == "penalty":
        assert sim.solved
        np.testing.assert_allclose(sim.states[:, 3], V0 - friction * np.arange(6), rtol=0, atol=1e-12)


def _polygon_residual(step: LCPStep, p: dict, z: np.ndarray) -> float:
    """|r - P_K(r - u_hat)| for the polygon cone, P_K by NNLS on the generators (one contact)."""
    bl = {b.name: b.slice for b in step.mcp.blocks}
    v = z[bl["v"]]
    Wn, Wt, Wo = (np.reshape(p[k], -1) for k in ("Wn", "Wt", "Wo"))
    un = float(p["psi_h"][0] + Wn @ v)
    uf = np.array([Wt @ v - p["ut"][0], Wo @ v - p["uo"][0]])
    d = np.column_stack([np.cos(step.angles), np.sin(step.angles)])
    bf = z[bl["lam_f"]]
    r = np.concatenate([z[bl["lam_n"]], d.T @ bf])
    u_hat = np.concatenate([[un + MU * np.max(d @ -uf)], uf])
    g = np.column_stack([np.ones(step.n_d), MU * d])
    c, _ = nnls(g.T, r - u_hat)
    return float(np.linalg.norm(r - g.T @ c))


@pytest.mark.parametrize(
    "method", ["auto", "newton", "scholtes", "fb", "penalty", "elastic", "kanzow_schwartz"]
)
def test_polygon_cone_step_with_small_mu_beta_n_obeys_coulomb(method: str) -> None:
    """The eq (15) analogue of test_false_solved's seed-004 step (n_d = 8, v0 along d_0): solved
    means the polygon Coulomb residual is below 0.1 % of the friction impulse mu g h."""
    step = LCPStep(Particle.cgs(), [Contact(PlaneSurface(), MU)], H, n_d=8)
    p = step.parameters(0, 0.0, step.initial_state([0, 0, 0], [V0, 0.0, 0.0]))
    res = step.make_solver(method, "casadi").solve(p=p, warm_start=False)
    friction = MU * G * H
    assert not res.solved or _polygon_residual(step, p, res.z) <= 1e-3 * friction, res
    if res.solved:
        assert res.friction_residual <= res.friction.tol
