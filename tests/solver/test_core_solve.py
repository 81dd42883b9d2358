"""Core solves through the CasADi route: LCPs, box MCPs, NCPs, parametric re-solve, failures."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

import mcpkit
from mcpkit import MCP, PairState, SolutionStatus, Termination
from tests.conftest import enumerate_box_lcp, random_p_matrix

pytestmark = pytest.mark.solver


def solve(problem: object, **kwargs: object) -> mcpkit.MCPResult:
    """The CasADi route explicitly (``auto`` would pick PATH where it is installed)."""
    kwargs.setdefault("backend", "casadi")
    return mcpkit.solve(problem, **kwargs)


METHODS = ["scholtes", "scholtes_eq", "fb", "penalty", "elastic"]


@pytest.mark.parametrize("method", METHODS)
def test_2x2_lcp_matches_hand_solution(method: str) -> None:
    # z = (1/3, 1/3) solves 2z1 + z2 = 1, z1 + 2z2 = 1 with z > 0
    res = solve(MCP.lcp([[2, 1], [1, 2]], [-1, -1]), method=method, tol=1e-10)
    assert res.solved and res.termination is Termination.CONVERGED
    np.testing.assert_allclose(res.z, [1 / 3, 1 / 3], atol=1e-9, rtol=0)
    assert res.natural_residual <= 1e-10
    assert res.pair_states == [PairState.BETWEEN, PairState.BETWEEN]
    assert res.backend == "casadi" and res.method == method and res.trace


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(
    ("lb", "ub"),
    [
        ([1.0, 1.0, 1.0], [3.0, 3.0, 3.0]),
        ([-math.inf] * 3, [2.0, 2.0, 2.0]),
        ([1.0, -math.inf, 0.0], [3.0, 2.0, math.inf]),
    ],
)
def test_box_mcps_match_enumeration(method: str, lb: list[float], ub: list[float]) -> None:
    M = np.array([[4.0, 1.0, 0.5], [-1.0, 3.0, 0.2], [0.3, 0.0, 2.0]])
    for q in ([-1.0, 8.0, -20.0], [-10.0, 2.0, 3.0], [5.0, -12.0, 0.0]):
        q = np.array(q)
        exact = enumerate_box_lcp(M, q, np.array(lb), np.array(ub))
        assert len(exact) == 1  # M is a P-matrix: unique solution
        res = solve(MCP.lcp(M, q, lb=lb, ub=ub), method=method, tol=1e-9)
        assert res.solved, res
        np.testing.assert_allclose(res.z, exact[0], atol=1e-7, rtol=0)


def test_box_solution_hits_both_bounds_and_labels_them() -> None:
    # F = z - c with c outside [1, 3] on both sides and inside once
    res = solve(MCP.lcp(np.eye(3), [-0.0, -2.0, -5.0], lb=1.0, ub=3.0), tol=1e-10)
    assert res.solved
    np.testing.assert_allclose(res.z, [1.0, 2.0, 3.0], atol=1e-9)
    assert res.pair_states == [PairState.AT_LOWER, PairState.BETWEEN, PairState.AT_UPPER]


def test_nonlinear_ncp_known_solution() -> None:
    # Kojima-Shindo NCP has two solutions; the start selects (1, 0, 3, 0) or (sqrt(6)/2, 0, 0, 1/2)
    def F(x: sp.Matrix) -> list[sp.Expr]:
        return [
            3 * x[0] ** 2 + 2 * x[0] * x[1] + 2 * x[1] ** 2 + x[2] + 3 * x[3] - 6,
            2 * x[0] ** 2 + x[0] + x[1] ** 2 + 3 * x[2] + 2 * x[3] - 2,
            3 * x[0] ** 2 + x[0] * x[1] + 2 * x[1] ** 2 + 2 * x[2] + 3 * x[3] - 1,
            x[0] ** 2 + 3 * x[1] ** 2 + 2 * x[2] + 3 * x[3] - 3,
        ]

    mcp = MCP.ncp(4, F, start=[1, 1, 1, 1])
    known = [np.array([1.0, 0.0, 3.0, 0.0]), np.array([math.sqrt(6) / 2, 0.0, 0.0, 0.5])]
    for method in METHODS:
        res = solve(mcp, method=method, tol=1e-9)
        assert res.solved, (method, res)
        assert min(np.abs(res.z - k).max() for k in known) < 1e-7


def test_parametric_resolve_reuses_the_built_solver() -> None:
    mcp = MCP("proj")
    z = mcp.add_variables("z", 2, lb=0.0, ub=1.0)
    c = mcp.add_parameters("c", 2)
    mcp.add_functions("z", [z[0] - c[0], z[1] - c[1]])  # solution: clip(c, 0, 1)
    solver = mcpkit.Solver(mcp, backend="casadi", method="scholtes", tol=1e-10)
    route = solver.route
    rng = np.random.default_rng(1)
    for _ in range(10):
        cv = rng.uniform(-1, 2, size=2)
        res = solver.solve(p={"c": cv})
        assert solver.route is route
        assert res.solved
        np.testing.assert_allclose(res.z, np.clip(cv, 0, 1), atol=1e-9)


def test_warm_start_from_previous_solution_costs_fewer_iterations() -> None:
    rng = np.random.default_rng(3)
    M = random_p_matrix(rng, 30)
    q = rng.standard_normal(30)
    mcp = MCP("warm")
    mcp.add_variables("z", 30)
    qq = mcp.add_parameters("q", 30, value=q)
    mcp.add_affine("z", M, list(qq))
    solver = mcpkit.Solver(mcp, backend="casadi", method="scholtes", tol=1e-9)
    cold = solver.solve(warm_start=False)
    warm = solver.solve(p={"q": q + 1e-4 * rng.standard_normal(30)})
    assert cold.solved and warm.solved
    assert warm.iterations < cold.iterations


def test_lcp_without_solution_is_reported_not_solved() -> None:
    # 0 <= z ⟂ -z - 1 >= 0 has no solution (F < 0 wherever z >= 0)
    res = solve(MCP.lcp([[-1.0]], [-1.0]), max_outer=8)
    assert not res.solved
    assert res.solution_status in (
        SolutionStatus.INACCURATE,
        SolutionStatus.INFEASIBLE_POINT,
        SolutionStatus.NO_SOLUTION,
    )
    assert res.termination is not Termination.CONVERGED
    with pytest.raises(mcpkit.SolveFailedError):
        res.raise_if_failed()


def test_time_limit_is_respected_and_reported() -> None:
    res = solve(MCP.lcp([[-1.0]], [-1.0]), time_limit=1e-6)
    assert not res.solved
    assert res.termination in (Termination.TIME_LIMIT, Termination.STALLED, Termination.ITERATION_LIMIT)


def test_unknown_ipopt_option_is_a_typed_error() -> None:
    with pytest.raises(mcpkit.UnknownOptionError, match="no_such_option"):
        solve(MCP.lcp(np.eye(2), [1, 1]), ipopt_options={"no_such_option": 1})


def test_random_p_matrix_lcp_n200() -> None:
    rng = np.random.default_rng(2026)
    n = 200
    M = random_p_matrix(rng, n)
    q = rng.standard_normal(n)
    res = solve(MCP.lcp(M, q), tol=1e-8)
    assert res.solved and res.natural_residual <= 1e-8
    w = M @ res.z + q  # independent check of complementarity
    assert res.z.min() >= 0 and w.min() >= -1e-8 and abs(res.z @ w) <= 1e-6


def test_user_casadi_mpcc_is_accepted() -> None:
    import casadi as ca

    x = ca.SX.sym("x", 2)
    # from the symmetric start (0, 0) Scholtes converges to the spurious C-stationary point (0, 0);
    # an asymmetric start finds a global minimiser
    mpcc = mcpkit.MPCC.from_casadi(
        x, G=x[0], H=x[1], f=(x[0] - 1) ** 2 + (x[1] - 1) ** 2, lbx=0.0, x0=[0.6, 0.2]
    )
    res = mcpkit.solve(mpcc)
    assert res.solved
    # two global minimisers (1, 0) and (0, 1), objective 1
    assert res.f == pytest.approx(1.0, abs=1e-6)
    assert min(abs(res.x[0] - 1) + abs(res.x[1]), abs(res.x[0]) + abs(res.x[1] - 1)) < 1e-6


def test_a_per_call_time_limit_reaches_the_route_and_does_not_persist() -> None:
    """Solver.solve(time_limit=T): the route gets T as that call's budget; its options do not
    change (front ends no longer reach into route.options themselves)."""
    import numpy as np

    import mcpkit

    solver = mcpkit.Solver(mcpkit.MCP.lcp(np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([-1.0, -1.0])))
    seen: list[tuple[float | None, object]] = []
    real = solver.route.solve
    kept = solver.route.options

    def spy(p, z0, warm, budget=None):  # noqa: ANN001, ANN202
        seen.append((budget.time_limit, solver.route.options))
        return real(p, z0, warm, budget)

    solver.route.solve = spy  # type: ignore[method-assign]
    assert solver.solve(time_limit=7.5).solved
    assert solver.solve().solved
    assert [t for t, _ in seen] == [7.5, None] and all(o is kept for _, o in seen)
    assert solver.route.options is kept and kept.time_limit is None
