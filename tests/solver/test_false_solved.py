"""Issue 12, "Wrong answers": no route may call a point solved that is not, nor "infeasible" without proof.

* The three LCPs without solution of the issue, on every registered MCP method and backend (and
  ``auto``): never solved. Before the fix ``elastic`` returned ``z ~ 3e17`` with ``F = -1`` and
  was judged solved, because ``z - clip(z - F)`` cancels in float64.
* An ill-conditioned P-matrix LCP (cond ~ 9e8; it has a unique solution) on which IPOPT says
  ``Infeasible_Problem_Detected`` inside a homotopy: reported ``stalled``, never
  ``locally_infeasible`` (that needs a certificate, e.g. Lemke's).
* MPCCs: the same cancellation in the pair residual (elastic mode on a general pair); local
  infeasibility kept when the point violates the MPCC's constraints.
* Seed 004's per-step NCP (quadratic friction cone) with small :math:`\\mu\\beta_n`: the natural
  residual passes while the Coulomb law is violated (sigma running away).
"""

from __future__ import annotations

import logging

import casadi as ca
import numpy as np
import pytest

import mcpkit
from mcpkit.errors import MCPInputError, SolverNotAvailableError
from mcpkit.mpcc import MPCC
from mcpkit.orchestration.mpcc_solver import MPCCSolver
from mcpkit.solving.registry import METHODS
from mcpkit.solving.result import Termination

pytestmark = pytest.mark.solver

#: The LCPs ``0 <= z _|_ Mz + q >= 0`` of issue 12 that have no solution.
NO_SOLUTION = {
    "zero_row": ([[0.0]], [-1.0]),  # F = -1 whatever z is
    "rank_one": ([[1.0, -1.0], [-1.0, 1.0]], [-1.0, -1.0]),  # F1 + F2 = -2 whatever z is
    "skew": ([[0.0, 1.0], [-1.0, 0.0]], [-1.0, -1.0]),  # z^T (Mz + q) = -(z1 + z2) < 0 unless z = 0
}

#: Every registered MCP method on every backend it runs on, plus ``auto``.
ROUTES = [(m, b) for m, e in METHODS.items() if "mcp" in e.problems for b in e.backends] + [
    ("auto", "casadi"),
    ("auto", "pyomo"),
]


def _our_residual(M: np.ndarray, q: np.ndarray, z: np.ndarray) -> float:
    """max_i |min(z_i, (Mz + q)_i)| computed here, independently of mcpkit."""
    w = M @ z + q
    return float(np.max(np.abs(np.minimum(z, w))))


def _solver(mcp: mcpkit.MCP, method: str, backend: str, **kw: object) -> mcpkit.Solver:
    try:
        return mcpkit.Solver(mcp, backend=backend, method=method, **kw)
    except SolverNotAvailableError as exc:
        pytest.skip(f"{method}/{backend} not available: {exc}")


@pytest.mark.parametrize(("method", "backend"), ROUTES, ids=[f"{m}-{b}" for m, b in ROUTES])
@pytest.mark.parametrize("case", sorted(NO_SOLUTION))
def test_lcp_without_solution_is_never_solved(case: str, method: str, backend: str) -> None:
    M, q = (np.array(a, dtype=float) for a in NO_SOLUTION[case])
    logging.disable(logging.CRITICAL)
    try:
        try:
            solver = _solver(mcpkit.MCP.lcp(M, q), method, backend, time_limit=60.0)
        except MCPInputError as exc:  # a typed refusal before solving (a constant row decided)
            assert "no solution" in str(exc)
            return
        res = solver.solve()
    finally:
        logging.disable(logging.NOTSET)
    assert not res.solved, res
    assert res.termination is not Termination.CONVERGED
    assert res.message.startswith("NOT solved")
    if np.isfinite(res.z).all():
        # the reported measures are honest: at least one exceeds tol, and ours agrees
        assert max(res.natural_residual, res.complementarity_violation) > res.tol
        rounding = 1e-13 * (1.0 + np.abs(M) @ np.abs(res.z) + np.abs(q)).max()
        assert res.natural_residual == pytest.approx(_our_residual(M, q, res.z), rel=1e-12, abs=rounding)
    if res.termination is Termination.LOCALLY_INFEASIBLE:
        assert "infeasibility_certificate" in res.extra


#: An upper-triangular P-matrix (all principal minors 1) with cond ~ 9e8; for q = (-1, -1) the
#: unique solution is z = (0, 1), F = (3e4 - 1, 0).
ILL_M = np.array([[1.0, 3.0e4], [0.0, 1.0]])
ILL_SOL = np.array([0.0, 1.0])


@pytest.mark.parametrize("backend", ["casadi", "pyomo"])
@pytest.mark.parametrize("method", ["scholtes_eq", "fb"])
def test_ill_conditioned_p_matrix_is_not_called_infeasible(method: str, backend: str) -> None:
    assert 5e8 < np.linalg.cond(ILL_M) < 2e9
    q = -np.ones(2)
    assert _our_residual(ILL_M, q, ILL_SOL) == 0.0  # it has a solution
    res = _solver(mcpkit.MCP.lcp(ILL_M, q), method, backend).solve()
    assert res.termination is not Termination.LOCALLY_INFEASIBLE, res
    if res.solved:
        np.testing.assert_allclose(res.z, ILL_SOL, atol=1e-6)
    else:
        assert res.termination in (
            Termination.STALLED,
            Termination.NUMERICAL_ERROR,
            Termination.ITERATION_LIMIT,
        )


def test_lemke_certificate_still_says_infeasible() -> None:
    """The one MCP route with a proof keeps LOCALLY_INFEASIBLE, with the certificate attached."""
    M, q = (np.array(a, dtype=float) for a in NO_SOLUTION["rank_one"])
    res = mcpkit.solve(mcpkit.MCP.lcp(M, q), method="lemke", backend="casadi")
    assert not res.solved and res.termination is Termination.LOCALLY_INFEASIBLE
    y = np.asarray(res.extra["infeasibility_certificate"]["y"], dtype=float)
    assert (y >= 0).all() and (M.T @ y <= 1e-12).all() and q @ y < 0  # Farkas, checked here


@pytest.mark.parametrize("backend", ["casadi", "pyomo"])
def test_mpcc_general_pair_without_solution_is_not_solved(backend: str) -> None:
    """H = x0 in [0, inf) _|_ G = -(1 + x1^2) free: no feasible point. Elastic mode ran x0 to
    ~1e19 and the projected pair residual cancelled to 0 (solved=True before the fix)."""
    x = ca.SX.sym("x", 2)
    mp = MPCC.from_casadi(x, -(1 + x[1] ** 2), x[0], f=x[1] ** 2, lbG=-np.inf, x0=[0.0, 0.0])
    res = MPCCSolver(mp, "elastic", backend).solve()
    assert not res.solved, res
    assert res.comp_residual >= 1.0 - 1e-12  # |min(H, G)| >= |G| >= 1 wherever H >= 0
    assert res.termination is not Termination.CONVERGED


@pytest.mark.parametrize("method", ["scholtes", "fb"])
def test_mpcc_infeasible_constraints_stay_locally_infeasible(method: str) -> None:
    """0 <= x0 _|_ x1 >= 0 with x0 + x1 = -1: IPOPT's local infeasibility is a legitimate MPCC
    statement when the returned point violates the MPCC's own constraints (documented rule)."""
    x = ca.SX.sym("x", 2)
    mp = MPCC.from_casadi(x, x[0], x[1], f=x[1] ** 2, g=x[0] + x[1] + 1, x0=[0.0, 0.0])
    res = MPCCSolver(mp, method, "casadi").solve()
    assert not res.solved
    assert res.termination is Termination.LOCALLY_INFEASIBLE
    assert res.constraint_violation > res.tol


# --------------------------------------------------------------------------------------------
# seed 004: the per-step NCP with the quadratic friction cone and small mu * beta_n
# --------------------------------------------------------------------------------------------


def _cone_projection(w: np.ndarray, mu: float) -> np.ndarray:
    """Projection onto K = {(r_n, r_f): |r_f| <= mu r_n}."""
    wn, wf = w[0], w[1:]
    nf = float(np.linalg.norm(wf))
    if nf <= mu * wn:
        return w.copy()
    if mu * nf <= -wn:
        return np.zeros_like(w)
    a = (wn + mu * nf) / (1.0 + mu * mu)
    return np.concatenate([[a], mu * a * wf / nf])


def _coulomb_residual(step: object, p: dict[str, np.ndarray], z: np.ndarray) -> float:
    """De Saxce/Siconos residual |r - P_K(r - (u + mu|u_f| e_n))| of a one-contact step, in the
    step's velocity units (impulses beta and velocities share them). It contains no sigma."""
    assert step.nc == 1  # type: ignore[attr-defined]  # W's layout then is one row of nv values
    bl = {b.name: b.slice for b in step.mcp.blocks}  # type: ignore[attr-defined]
    v = z[bl["v"]]
    Wn, Wt, Wo = (np.reshape(p[k], -1) for k in ("Wn", "Wt", "Wo"))
    un = float(np.reshape(p["psi_h"], -1)[0] + Wn @ v)
    ut = float(Wt @ v - np.reshape(p["ut"], -1)[0])
    uo = float(Wo @ v - np.reshape(p["uo"], -1)[0])
    mu = float(np.reshape(p["mu"], -1)[0])
    r = np.array([z[bl["lam_n"]][0], z[bl["lam_t"]][0], z[bl["lam_o"]][0]])
    u = np.array([un + mu * np.hypot(ut, uo), ut, uo])
    return float(np.linalg.norm(r - _cone_projection(r - u, mu)))


# Measured with the natural residual of eq (9) alone: fb, elastic and kanzow_schwartz ended at
# sigma = 1e5 with beta_t ~ -2e-9 (no friction on a contact sliding at 4.9), scholtes, scholtes_eq
# and auto at |beta_t| = 1.65 mu beta_n (outside the cone), all "solved": the cone row
# (mu beta_n)^2 - beta_t^2 is O(1e-9) either way, under tol. The step's verdict (StepResult of
# NCPStep.make_solver) also judges the per-contact Coulomb residual, so these are not solved.


@pytest.mark.parametrize(
    "method", ["auto", "newton", "scholtes", "scholtes_eq", "fb", "penalty", "elastic", "kanzow_schwartz"]
)
def test_seed004_step_with_small_mu_beta_n_obeys_coulomb(method: str) -> None:
    """A particle sliding at 4.9 cm/s on a table, mu = 0.04, h = 1e-6 s: the exact step has
    beta_n = g h, beta_t = -mu g h, sigma = |v_t| = 4.9 - mu g h. Solved must mean the Coulomb
    residual (independent of sigma) is below 0.1 % of the friction impulse mu g h = 3.9e-5; a step
    whose MCP met its residual while the law is violated says so and names the contact."""
    from mcpkit.models.stewart_trinkle import Contact, NCPStep, Particle, PlaneSurface
    from mcpkit.models.stewart_trinkle.bodies import GRAVITY_CGS

    mu, h = 0.04, 1e-6
    step = NCPStep(Particle.cgs(mass=1.0), [Contact(PlaneSurface(), mu)], h)
    p = step.parameters(0, 0.0, step.initial_state([0, 0, 0], [4.9, 0.0, 0.0]))
    res = step.make_solver(method=method, backend="casadi").solve(p=p, warm_start=False)
    friction = mu * GRAVITY_CGS * h
    exact = np.zeros(step.mcp.n)
    bl = {b.name: b.slice for b in step.mcp.blocks}
    exact[bl["v"]] = [4.9 - friction, 0.0, 0.0]
    exact[bl["lam_n"]], exact[bl["lam_t"]], exact[bl["sigma"]] = GRAVITY_CGS * h, -friction, 4.9 - friction
    assert _coulomb_residual(step, p, exact) <= 1e-12  # the check accepts the exact step
    assert not res.solved or _coulomb_residual(step, p, res.z) <= 1e-3 * friction, (
        f"solved with Coulomb residual {_coulomb_residual(step, p, res.z):.2e} "
        f"(friction impulse {friction:.2e}); sigma = {res.z[bl['sigma']]}, beta_t = {res.z[bl['lam_t']]}"
    )
    if res.solve.solved and not res.solved:  # the two verdicts disagree: the message says why
        assert res.termination is Termination.STALLED
        assert "contact 0" in res.message and "friction law is violated" in res.message, res.message
