"""The Levenberg-Marquardt stage of ``method="newton"`` on rank-deficient problems.

:math:`(H^T H + \\mu I) d = -H^T\\Phi` with :math:`\\mu = 10^{-2}\\|\\Phi\\|^2` is tried when the Newton
matrix :math:`H` cannot be factorised and the first proximal perturbation fails the descent test,
or when :math:`H` factorises but even the largest proximal perturbation gives a descent direction
too long for the test (stages b and d in the module docstring of :mod:`mcpkit.engines.newton`).
Checked here: the linear algebra against the normal equations solved by NumPy (dense and sparse
paths), and problems whose Jacobian is singular on the whole solution set, solved with the last
steps taken by the new stage (phase ``"lm"``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sps

import mcpkit
from mcpkit import MCP
from mcpkit.engines.newton import LM_MIN_REL
from mcpkit.engines.newton_linalg import NewtonSystem
from tests.conftest import SHARED_DATA

pytestmark = pytest.mark.solver


def _phases(res: mcpkit.MCPResult) -> list[str]:
    return [s.phase for s in res.trace]


def _check_lm_trace(res: mcpkit.MCPResult) -> None:
    """The trace records the stage: phase ``"lm"`` with its mu > 0, counted in ``extra``."""
    lm = [s for s in res.trace if s.phase == "lm"]
    assert lm, _phases(res)
    assert res.extra["lm_steps"] == len(lm)
    assert all(s.parameter > 0 for s in lm)
    assert res.extra["perturbed_steps"] >= len(lm)


# ------------------------------------------------------------------ linear algebra
@pytest.mark.parametrize("dense", [True, False])
@pytest.mark.parametrize("mu", [1e-1, 1e-8, 0.0])
def test_lm_system_solves_the_normal_equations(dense: bool, mu: float) -> None:
    """``levenberg_marquardt`` returns d = -(H^T H + mu I)^{-1} H^T Phi, with mu raised to the floor
    ``rel_floor * max_j |H e_j|^2``, on a singular H (a third of the columns of J_F are zero)."""
    rng = np.random.default_rng(3)
    n = 30
    J = sps.random(n, n, density=0.3, random_state=3, format="csc")
    J = sps.csc_matrix(J @ sps.diags((np.arange(n) % 3 != 0).astype(float)))
    J.sort_indices()
    system = NewtonSystem(n, J.indptr, J.indices, dense=dense)
    system.set_jacobian(J.data)
    da = np.where(rng.random(n) < 0.3, rng.uniform(-1.0, 0.0, n), 0.0)
    db = rng.uniform(-1.0, -0.1, n)
    Phi = rng.standard_normal(n)
    H = system.matrix(da, db).toarray()
    assert np.linalg.matrix_rank(H) < n
    out = system.levenberg_marquardt(da, db, Phi, mu, 1e-10)
    assert out is not None
    d, used = out
    floor = 1e-10 * float((H * H).sum(axis=0).max())
    assert used == pytest.approx(max(mu, floor), rel=1e-12)
    expected = -np.linalg.solve(H.T @ H + used * np.eye(n), H.T @ Phi)
    np.testing.assert_allclose(d, expected, rtol=0, atol=1e-9 * np.abs(expected).max())


@pytest.mark.parametrize("dense", [True, False])
def test_lm_system_reports_non_finite_data(dense: bool) -> None:
    J = sps.identity(4, format="csc")
    system = NewtonSystem(4, J.indptr, J.indices, dense=dense)
    system.set_jacobian(J.data)
    Phi = np.array([1.0, math.nan, 0.0, 0.0])
    assert system.levenberg_marquardt(np.zeros(4), -np.ones(4), Phi, 1e-2, LM_MIN_REL) is None


# ------------------------------------------------------------------ a singular affine free MCP
def shift_blocks(n: int, block: int, rng: np.random.Generator) -> sps.csr_matrix:
    r"""Block-diagonal :math:`D_1 N D_2`, :math:`N` the nilpotent shift in each block of ``block`` rows.

    Rank :math:`n - n/\text{block}` and no eigenvalue but 0 in each block: :math:`(N + \mu I)^{-1}`
    has entries up to :math:`\mu^{-\text{block}}`, so the proximal steps are long and fail the
    descent test, while the Levenberg-Marquardt step stays in :math:`\mathrm{range}(H^T)`.
    """
    sup = np.ones(n - 1)
    sup[block - 1 :: block] = 0.0
    N = sps.diags(sup, 1, shape=(n, n))
    D1 = sps.diags(rng.uniform(0.5, 2.0, n))
    D2 = sps.diags(rng.uniform(0.5, 2.0, n))
    return sps.csr_matrix(D1 @ N @ D2)


@pytest.mark.parametrize(("n", "solver"), [(40, "dense LAPACK getrf"), (600, "SuperLU splu")])
def test_free_affine_mcp_with_singular_matrix(n: int, solver: str) -> None:
    """F(z) = A z - b, all z free, A singular (nilpotent blocks), b = A z* in range(A): a whole
    affine set of solutions, H = -S A singular everywhere. The dense and the sparse (augmented
    system) paths both converge, and the last step is a Levenberg-Marquardt step."""
    rng = np.random.default_rng(11)
    A = shift_blocks(n, 4, rng)
    b = A @ rng.uniform(-2.0, 2.0, n)
    M = A.toarray() if n <= 300 else A
    mcp = MCP.lcp(M, -b, lb=np.full(n, -math.inf), ub=np.full(n, math.inf))
    res = mcpkit.solve(mcp, method="newton", tol=1e-10)
    assert res.solved, res.message
    assert res.extra["linear_solver"] == solver
    assert np.abs(A @ res.z - b).max() <= 1e-10
    _check_lm_trace(res)
    assert _phases(res)[-1] == "lm"


# ------------------------------------------------------------------ nonlinear, singular at the solutions
def chain_mcp(n: int, start: list[float], z1_free: bool) -> MCP:
    r""":math:`0 \le z \perp F(z) \ge 0` (or :math:`z_1` free), with

    .. math::

        F_i = g(z_{i+1} - 2)\ (i < n),\quad g(t) = t + t^2/4, \qquad
        F_n = \textstyle\sum_{i \ge 2} (z_i - 2)^2 .

    Solutions: :math:`z_1 \ge 0` (any :math:`z_1` when free), :math:`z_i = 2` for :math:`i \ge 2`
    (:math:`z_i = 0` would need :math:`F_{i-1} = g(-2) = -1 \ge 0`). :math:`J_F` has a zero first
    column everywhere and is nilpotent at every solution; rows :math:`1..n-1` still bound the
    distance to the solution set by the residual (the local error bound of Yamashita-Fukushima).
    With :math:`z_1 > 0` the Newton matrix is singular (stage b of the module docstring); at
    :math:`z_1 = 0` the pair is degenerate and its element makes :math:`H` nonsingular but
    ill-conditioned (stage d).
    """
    m = MCP("chain")
    lb = [-math.inf if z1_free else 0.0] + [0.0] * (n - 1)
    z = m.add_variables("z", n, lb=lb, start=start)
    F = [(z[i + 1] - 2) + (z[i + 1] - 2) ** 2 / 4 for i in range(n - 1)]
    F.append(sum((z[i] - 2) ** 2 for i in range(1, n)))
    m.add_functions("z", F)
    return m


@pytest.mark.parametrize("z1_free", [False, True])
@pytest.mark.parametrize("n", [3, 6])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_ncp_with_singular_jacobian_at_the_solutions(n: int, seed: int, z1_free: bool) -> None:
    """The proximal steps converge linearly (the quadratic row F_n halves the residual per step);
    then Levenberg-Marquardt steps finish the solve, superlinearly where the local error bound
    holds, as Yamashita-Fukushima predict. (Without the stage, starts that reach z_1 = 0 can end
    at the iteration limit after thousands of gradient steps: seed 1, n = 6 here.)"""
    start = (2.0 + np.random.default_rng(seed).uniform(-1.0, 1.0, n)).tolist()
    res = mcpkit.solve(chain_mcp(n, start, z1_free), method="newton", tol=1e-10)
    assert res.solved, res.message
    # at z_1 = 0 only the quadratic row F_n pins z_2: |z_2 - 2| <= sqrt(tol) is all the tolerance says
    np.testing.assert_allclose(res.z[1:], 2.0, rtol=0, atol=1e-4)
    assert z1_free or res.z[0] >= 0.0
    _check_lm_trace(res)
    phases = _phases(res)
    first = phases.index("lm")
    assert set(phases[first:]) == {"lm"}  # once it starts, the stage finishes the solve
    if res.z[0] > 1e-3:  # off the degenerate pair z_1 = 0 the error bound holds: superlinear steps
        r = [s.residual for s in res.trace]
        for k in range(max(first, 1), len(r)):  # r_{k+1} <= r_k^1.5 (quadratic in theory)
            assert r[k] <= r[k - 1] ** 1.5, (k, r)


# ------------------------------------------------------------------ the real case: an FCLIB box stack
FCLIB = SHARED_DATA / "fclib" / "local_problem_test.hdf5"


@pytest.mark.skipif(not FCLIB.is_file(), reason="shared FCLIB file not present")
def test_fclib_box_stack_plain_alart_curnier_solve() -> None:
    """48 contacts, W of rank 72/144: the Alart-Curnier equations have a singular Newton matrix
    (smallest singular value ~1e-18). The unregularised solve from r = 0 used to creep at 1 % per
    iteration with the proximal perturbation and stall near 4e-7; it now converges."""
    from mcpkit.models.fclib import friction_residual, load_fclib
    from mcpkit.models.fclib_equations import ContactEquations, ContactLaw

    prob = load_fclib(FCLIB)
    eq = ContactEquations(prob.W, prob.q, prob.mu, ContactLaw("alart_curnier"))
    res = mcpkit.solve_mcp(
        eq.F, eq.J, -np.inf, np.inf, np.zeros(eq.n), method="newton", convergence_tolerance=1e-8,
        major_iteration_limit=60, jacobian_structure=eq.pattern,
    )  # fmt: skip
    assert res.solved, res.message
    _check_lm_trace(res)
    assert friction_residual(prob.W, prob.q, prob.mu, eq.reactions(res.z)) <= 1e-8
