"""Lemke's method (``mcpkit.engines.lemke``) on hand-made LCPs: the pivoting core, the box
reduction, rays and their certificates, degeneracy, and the typed errors.

References for each expected value are in the comments (worked by hand or from the definition).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

import mcpkit
from mcpkit import MCP
from mcpkit.engines.box_lcp import BoxLCPReduction
from mcpkit.engines.lemke import LemkeRoute
from mcpkit.engines.lemke_pivoting import copositive_plus, farkas_check, lemke_lcp, principal_pivot
from mcpkit.errors import MCPInputError, ShapeError
from mcpkit.solving.options import SolveOptions
from mcpkit.solving.result import Termination
from tests.conftest import enumerate_box_lcp, random_p_matrix

INF = math.inf


def _is_lcp_solution(M: np.ndarray, q: np.ndarray, z: np.ndarray, tol: float = 1e-12) -> bool:
    w = M @ z + q
    return bool(z.min() >= -tol and w.min() >= -tol and np.abs(np.minimum(z, w)).max() <= tol)


# ----------------------------------------------------------------------------- pivoting core
def test_2x2_hand_example() -> None:
    # M = [[2, 1], [1, 2]], q = (-1, -1): both positive, 2z1 + z2 = 1 = z1 + 2z2 -> z = (1/3, 1/3)
    M = np.array([[2.0, 1.0], [1.0, 2.0]])
    q = np.array([-1.0, -1.0])
    res = lemke_lcp(M, q)
    assert res.status == "solution"
    np.testing.assert_allclose(res.z, [1 / 3, 1 / 3], atol=1e-14, rtol=0)
    assert res.z0 == 0.0
    assert res.pivots == 3  # z0 in, z2 in (w2 out), z1 in (z0 out)
    np.testing.assert_array_equal(res.basis, [0, 1])


def test_2x2_hand_example_one_active() -> None:
    # q = (-1, 1): z2 = 0 gives z1 = 1/2 and w2 = 1/2 + 1 > 0
    res = lemke_lcp(np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([-1.0, 1.0]))
    assert res.status == "solution"
    np.testing.assert_allclose(res.z, [0.5, 0.0], atol=1e-14, rtol=0)
    np.testing.assert_allclose(res.w, [0.0, 1.5], atol=1e-14, rtol=0)


def test_3x3_hand_example() -> None:
    # tridiagonal M, q = (-1, 3, -3). With J = {1, 3}: 2 z1 = 1, 2 z3 = 3 -> z = (1/2, 0, 3/2),
    # w2 = -z1 + 3 - z3 = 1 > 0: a complementary solution (and the only one: M is positive definite)
    M = np.array([[2.0, -1.0, 0.0], [-1.0, 2.0, -1.0], [0.0, -1.0, 2.0]])
    q = np.array([-1.0, 3.0, -3.0])
    res = lemke_lcp(M, q)
    assert res.status == "solution"
    np.testing.assert_allclose(res.z, [0.5, 0.0, 1.5], atol=1e-14, rtol=0)
    np.testing.assert_allclose(M @ res.z + q, [0.0, 1.0, 0.0], atol=1e-14, rtol=0)


def test_nonnegative_q_needs_no_pivot() -> None:
    res = lemke_lcp(np.array([[1.0, 5.0], [-3.0, 1.0]]), np.array([0.0, 2.0]))
    assert res.status == "solution" and res.pivots == 0
    np.testing.assert_array_equal(res.z, [0.0, 0.0])


def test_empty_lcp() -> None:
    res = lemke_lcp(np.zeros((0, 0)), np.zeros(0))
    assert res.status == "solution" and res.z.shape == (0,)


@pytest.mark.parametrize("seed", range(40))
def test_random_p_matrices_against_enumeration(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 8))
    M = random_p_matrix(rng, n, skew=float(rng.uniform(0, 2)))
    q = 3 * rng.standard_normal(n)
    (exact,) = enumerate_box_lcp(M, q, np.zeros(n), np.full(n, INF))
    res = lemke_lcp(M, q)
    assert res.status == "solution"
    np.testing.assert_allclose(res.z, exact, atol=1e-10, rtol=0)


def test_covering_vector_changes_path_not_answer() -> None:
    rng = np.random.default_rng(3)
    M = random_p_matrix(rng, 6)
    q = rng.standard_normal(6)
    a = lemke_lcp(M, q)
    b = lemke_lcp(M, q, d=np.arange(1.0, 7.0))
    assert a.status == b.status == "solution"
    np.testing.assert_allclose(a.z, b.z, atol=1e-12, rtol=0)


def test_bad_covering_vector_and_shapes_are_typed_errors() -> None:
    with pytest.raises(MCPInputError, match="covering vector"):
        lemke_lcp(np.eye(2), [-1.0, 0.0], d=[1.0, 0.0])
    with pytest.raises(ShapeError):
        lemke_lcp(np.eye(3), [-1.0, 0.0])
    with pytest.raises(MCPInputError, match="finite"):
        lemke_lcp(np.eye(2), [-1.0, math.nan])


# --------------------------------------------------------------------------------- degeneracy
#: All q_i = -1 tie at the first pivot and later ratio tests tie at 0. With the smallest-subscript
#: rule the method returns to the same three bases forever; the lexicographic rule ends at the
#: unique solution z = (7/8, 3/4, 11/8) (check: Mz + q = 0 and z > 0).
CYCLING_M = np.array([[1.0, 2.0, -1.0], [-2.0, 0.0, 2.0], [2.0, -1.0, 0.0]])
CYCLING_Q = np.array([-1.0, -1.0, -1.0])


def test_degenerate_example_cycles_without_the_lexicographic_rule() -> None:
    res = lemke_lcp(CYCLING_M, CYCLING_Q, lexicographic=False, max_pivots=200)
    assert res.status == "pivot_limit"


def test_degenerate_example_terminates_with_the_lexicographic_rule() -> None:
    res = lemke_lcp(CYCLING_M, CYCLING_Q)
    assert res.status == "solution"
    assert res.pivots <= 10
    np.testing.assert_allclose(res.z, [7 / 8, 3 / 4, 11 / 8], atol=1e-14, rtol=0)
    np.testing.assert_allclose(CYCLING_M @ res.z + CYCLING_Q, 0.0, atol=1e-14)


def test_highly_degenerate_q_zero_rows() -> None:
    # q has zeros (degenerate from the first pivot); M positive definite: unique solution
    rng = np.random.default_rng(11)
    M = random_p_matrix(rng, 7)
    q = np.array([-1.0, 0.0, 0.0, -1.0, 0.0, -1.0, 0.0])
    (exact,) = enumerate_box_lcp(M, q, np.zeros(7), np.full(7, INF))
    res = lemke_lcp(M, q)
    assert res.status == "solution"
    np.testing.assert_allclose(res.z, exact, atol=1e-10, rtol=0)


# --------------------------------------------------------------------------- rays, certificates
def test_secondary_ray_on_zero_matrix_is_certified() -> None:
    # 0 <= z, 0 z - 1 >= 0 is infeasible; M = [[0]] is positive semidefinite (copositive-plus)
    M, q = np.zeros((1, 1)), np.array([-1.0])
    res = lemke_lcp(M, q)
    assert res.status == "secondary_ray"
    assert copositive_plus(M) is True
    cert = farkas_check(M, q, res.ray["z"])
    assert cert is not None and cert["q_dot_y"] < 0


def test_secondary_ray_reported_not_solved_with_certificate() -> None:
    # M = [[1, -1], [-1, 1]] is PSD; z1 - z2 >= 1 and z2 - z1 >= 1 cannot both hold
    mcp = MCP.lcp(np.array([[1.0, -1.0], [-1.0, 1.0]]), np.array([-1.0, -1.0]))
    res = mcpkit.solve(mcp, method="lemke")
    assert not res.solved
    assert res.termination is Termination.LOCALLY_INFEASIBLE
    assert res.extra["lemke"] == "secondary ray"
    cert = res.extra["infeasibility_certificate"]
    y = cert["y"]
    assert y.min() >= 0 and y.max() == 1.0
    M = np.array([[1.0, -1.0], [-1.0, 1.0]])
    assert (M.T @ y).max() <= 1e-12 and float(np.array([-1.0, -1.0]) @ y) < 0
    assert "copositive-plus" in cert["statement"]
    assert res.extra["certificate"]["copositive_plus"] is True


def test_certified_ray_without_copositivity() -> None:
    # M = [[-1]], q = [-1]: -z - 1 >= 0 has no z >= 0. M is not copositive, but the ray's
    # y = 1 has M^T y = -1 <= 0 and q^T y = -1 < 0: a Farkas certificate all the same
    res = mcpkit.solve(MCP.lcp(np.array([[-1.0]]), np.array([-1.0])), method="lemke")
    assert not res.solved and res.termination is Termination.LOCALLY_INFEASIBLE
    assert res.extra["certificate"]["copositive_plus"] is None
    assert "Farkas certificate verified" in res.extra["infeasibility_certificate"]["statement"]


def test_uncertified_ray_is_stalled() -> None:
    # M = [[-2, 1], [0, 1]], q = (-2, 0) is feasible (z = (0, 2) gives w = (0, 2)) but has no
    # solution (z2 w2 = z2^2 = 0 forces z2 = 0, then w1 = -2 z1 - 2 < 0): no certificate exists,
    # restarts fail too, and the honest verdict is "stalled"
    M = np.array([[-2.0, 1.0], [0.0, 1.0]])
    q = np.array([-2.0, 0.0])
    assert enumerate_box_lcp(M, q, np.zeros(2), np.full(2, INF)) == []
    res = mcpkit.solve(MCP.lcp(M, q), method="lemke")
    assert not res.solved and res.termination is Termination.STALLED
    assert res.extra["lemke"] == "secondary ray"
    assert "infeasibility_certificate" not in res.extra
    assert "direction" in res.extra["certificate"]


def test_crash_restart_after_an_uncertified_ray() -> None:
    # M = [[-1, 2], [2, -1]], q = (-1, -1) is solvable (z = (1, 1): w = 0) but Lemke from z = 0
    # ends on a ray; the crash restart from J = {i : q_i < 0} solves it
    M = np.array([[-1.0, 2.0], [2.0, -1.0]])
    q = np.array([-1.0, -1.0])
    assert lemke_lcp(M, q).status == "secondary_ray"
    res = mcpkit.solve(MCP.lcp(M, q), method="lemke")
    assert res.solved
    assert "restart" in res.extra and "certificate" not in res.extra
    assert [s.phase for s in res.trace] == ["pivot", "restart"]
    np.testing.assert_allclose(res.z, [1.0, 1.0], atol=1e-14)


def test_copositive_plus_checks() -> None:
    assert copositive_plus(np.array([[2.0, -1.0], [1.0, 0.5]])) is True  # PSD symmetric part
    assert copositive_plus(np.array([[1.0, 3.0], [0.0, 2.0]])) is True  # >= 0, positive diagonal
    assert copositive_plus(np.array([[0.0, 1.0], [0.0, 0.0]])) is None  # unknown (not PSD)


# ------------------------------------------------------------------------------- box reduction
def test_reduction_of_a_standard_lcp_is_the_identity() -> None:
    M = np.array([[2.0, 1.0], [1.0, 2.0]])
    red = BoxLCPReduction(M, np.zeros(2), np.full(2, INF))
    assert red.is_standard and red.N == 2 and red.M_std is M
    np.testing.assert_array_equal(red.q_std(np.array([-1.0, 3.0])), [-1.0, 3.0])


@pytest.mark.parametrize(
    ("lb", "ub"),
    [
        ([-1.0, 0.5, -INF], [INF, 2.0, 0.25]),  # shifted lower, box, upper only
        ([-INF, -INF, 0.0], [INF, INF, 1.0]),  # two free (Schur), a box
        ([0.3, -INF, -2.0], [0.3, INF, -1.0]),  # fixed, free, box
        ([-INF, -INF, -INF], [INF, INF, INF]),  # all free: a linear system
    ],
)
def test_reduction_solutions_match_enumeration(lb: list[float], ub: list[float]) -> None:
    rng = np.random.default_rng(5)
    M = random_p_matrix(rng, 3)
    q = 2 * rng.standard_normal(3)
    lo, hi = np.array(lb), np.array(ub)
    (exact,) = enumerate_box_lcp(M, q, lo, hi)
    red = BoxLCPReduction(M, lo, hi)
    res = lemke_lcp(red.M_std, red.q_std(q))
    assert res.status == "solution"
    np.testing.assert_allclose(red.expand(res.z, q), exact, atol=1e-10, rtol=0)


def test_singular_free_block_is_split() -> None:
    # M_FF = [[0]] for the free z1; M PSD (skew + diag), so the split LCP stays PSD
    M = np.array([[0.0, 1.0], [-1.0, 1.0]])
    q = np.array([-2.0, 1.0])  # F1 = z2 - 2 = 0 -> z2 = 2; F2 = -z1 + z2 + 1 = 0 -> z1 = 3
    lo, hi = np.array([-INF, 0.0]), np.array([INF, INF])
    red = BoxLCPReduction(M, lo, hi)
    assert red.free_mode == "split" and red.N == 3
    res = lemke_lcp(red.M_std, red.q_std(q))
    assert res.status == "solution"
    np.testing.assert_allclose(red.expand(res.z, q), [3.0, 2.0], atol=1e-12, rtol=0)


def test_principal_pivot_transform_exchanges_z_and_w() -> None:
    rng = np.random.default_rng(8)
    M = random_p_matrix(rng, 5)
    q = rng.standard_normal(5)
    J = np.array([1, 3])
    Mb, qb = principal_pivot(M, q, J)
    z = rng.uniform(0, 1, 5)
    w = M @ z + q
    zb, wb = z.copy(), w.copy()
    zb[J], wb[J] = w[J], z[J]
    np.testing.assert_allclose(Mb @ zb + qb, wb, atol=1e-12)
    res = lemke_lcp(M, q, start=J)
    assert res.status == "solution"
    assert _is_lcp_solution(M, q, res.z, 1e-12)


# -------------------------------------------------------------------------------- the route
def test_nonlinear_mcp_is_a_typed_error_at_construction() -> None:
    mcp = MCP.ncp(2, lambda z: [z[0] ** 2 - 1, z[0] + z[1] - 2])
    with pytest.raises(MCPInputError, match="not affine"):
        mcpkit.Solver(mcp, method="lemke")
    with pytest.raises(MCPInputError, match=r"\['z'\]"):
        LemkeRoute(mcp, "casadi", SolveOptions())


def test_nonsmooth_mcp_is_a_typed_error() -> None:
    mcp = MCP.ncp(1, lambda z: [sp.Max(z[0], 1) - 2])
    with pytest.raises(MCPInputError, match="not affine"):
        LemkeRoute(mcp, "casadi", SolveOptions())


def test_route_refuses_other_backends_and_bad_covering() -> None:
    mcp = MCP.lcp(np.eye(2), [-1.0, -1.0])
    with pytest.raises(MCPInputError, match="backend"):
        LemkeRoute(mcp, "gamspy", SolveOptions())
    with pytest.raises(MCPInputError, match="covering vector"):
        LemkeRoute(mcp, "casadi", SolveOptions(), covering=np.ones(3))
    with pytest.raises(MCPInputError):
        mcpkit.Solver(mcp, method="lemke", backend="gamspy")


def test_symbolic_linear_blocks_and_parametric_q() -> None:
    # F = (2 z1 + z2 - p, z1 + 2 z2 - 1) with p a parameter, declared symbolically
    mcp = MCP("sym")
    z = mcp.add_variables("z", 2, lb=0.0)
    p = mcp.add_parameters("p", 1, value=1.0)
    mcp.add_functions("z", [2 * z[0] + z[1] - p[0], z[0] + 2 * z[1] - 1])
    solver = mcpkit.Solver(mcp, method="lemke")
    assert solver.route.data.source == "casadi jacobian"
    M = np.array([[2.0, 1.0], [1.0, 2.0]])
    for pv in (1.0, 4.0, -1.0):
        res = solver.solve(p={"p": pv}, warm_start=False)
        (exact,) = enumerate_box_lcp(M, np.array([-pv, -1.0]), np.zeros(2), np.full(2, INF))
        assert res.solved
        np.testing.assert_allclose(res.z, exact, atol=1e-12, rtol=0)


def test_parametric_matrix_is_reevaluated() -> None:
    # F = h z - 1 on z >= 0: z = 1/h for h > 0
    mcp = MCP("hz")
    z = mcp.add_variables("z", 1, lb=0.0)
    h = mcp.add_parameters("h", 1, value=2.0)
    mcp.add_functions("z", [h[0] * z[0] - 1])
    solver = mcpkit.Solver(mcp, method="lemke")
    assert solver.route.data.parametric_M
    for hv in (2.0, 0.5, 10.0):
        res = solver.solve(p={"h": hv})
        assert res.solved
        np.testing.assert_allclose(res.z, [1.0 / hv], rtol=1e-14)


def test_warm_start_reuses_the_basis() -> None:
    rng = np.random.default_rng(2)
    n = 6
    M = random_p_matrix(rng, n)
    q0 = rng.standard_normal(n)
    mcp = MCP("warm")
    mcp.add_variables("z", n, lb=0.0)
    mcp.add_parameters("q", n, value=q0)
    mcp.add_affine("z", M, list(mcp.parameters))
    solver = mcpkit.Solver(mcp, method="lemke")
    first = solver.solve()
    assert first.solved and first.iterations > 0
    again = solver.solve(p={"q": q0 + 1e-6})  # same active set
    assert again.solved and again.iterations == 0 and again.extra["warm"] == "basis reused"
    far = -np.abs(q0) - 1.0  # every component becomes positive: a different basis
    moved = solver.solve(p={"q": far})
    (exact,) = enumerate_box_lcp(M, far, np.zeros(n), np.full(n, INF))
    assert moved.solved
    np.testing.assert_allclose(moved.z, exact, atol=1e-10, rtol=0)


def test_pivot_and_time_limits() -> None:
    rng = np.random.default_rng(4)
    M = random_p_matrix(rng, 30)
    q = -np.abs(rng.standard_normal(30)) - 1
    res = mcpkit.solve(MCP.lcp(M, q), method="lemke", max_inner_iter=3)
    assert not res.solved and res.termination is Termination.ITERATION_LIMIT
    assert res.iterations == 3 and "max_inner_iter" in res.extra["hint"]
    direct = lemke_lcp(M, q, time_limit=0.0)
    assert direct.status == "time_limit"


def test_trace_records_the_pivot_phase() -> None:
    res = mcpkit.solve(MCP.lcp(np.array([[2.0, 1.0], [1.0, 2.0]]), [-1.0, -1.0]), method="lemke")
    assert res.solved and res.method == "lemke" and res.backend == "casadi"
    (step,) = res.trace
    assert step.phase == "pivot" and step.inner_iterations == res.iterations == 3
    assert step.parameter == 0.0 and step.inner_status == "solution"
