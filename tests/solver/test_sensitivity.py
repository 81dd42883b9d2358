"""MCPResult.sensitivity against central finite differences of re-solves (issue 29's checks).

The finite differences are computed with the solver alone (two re-solves per parameter), so they
do not share code with the implicit differentiation; the property tests keep only strictly
complementary solutions (a margin on every pair), where the active set is locally constant and
the central difference is exact for LCPs up to the solve tolerance.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

import mcpkit
from mcpkit import MCP, NotDifferentiableError
from tests.conftest import random_p_matrix

pytestmark = pytest.mark.solver

SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def parametric_lcp(
    M: np.ndarray, q0: np.ndarray, lb: float | np.ndarray = 0.0, ub: float | np.ndarray = math.inf
) -> MCP:
    """``lb <= z <= ub ⟂ Mz + q`` with ``q`` the parameter block (value ``q0``)."""
    m = MCP("plcp")
    m.add_variables("z", q0.size, lb=lb, ub=ub)
    q = m.add_parameters("q", q0.size, value=q0)
    m.add_affine("z", M, list(q))
    return m


def central_differences(solver: mcpkit.Solver, p0: np.ndarray, h: float) -> np.ndarray:
    """``(z(p0 + h e_j) - z(p0 - h e_j)) / 2h`` column by column, every re-solve checked solved."""
    cols = []
    for e in np.eye(p0.size):
        plus, minus = solver.solve(p=p0 + h * e), solver.solve(p=p0 - h * e)
        assert plus.solved and minus.solved, (plus, minus)
        cols.append((plus.z - minus.z) / (2 * h))
    return np.column_stack(cols)


def margin(res: mcpkit.MCPResult, lb: np.ndarray, ub: np.ndarray) -> float:
    """Smallest distance from degeneracy: |F_i| at an active bound, distance to the bounds when free."""
    z, F = res.z, res.F
    d_l, d_u = z - lb, ub - z
    active = (d_l <= 1e-8) | (d_u <= 1e-8)
    gaps = np.where(active, np.abs(F), np.minimum(d_l, d_u))
    return float(gaps.min())


def test_random_40x40_p_matrix_lcp_matches_central_differences() -> None:
    rng = np.random.default_rng(2029)
    n = 40
    M = random_p_matrix(rng, n)
    q0 = rng.standard_normal(n) * 3
    solver = mcpkit.Solver(parametric_lcp(M, q0), method="lemke", tol=1e-12)
    res = solver.solve()
    assert res.solved
    counts = res.pair_counts()
    assert counts.get("at_lower", 0) >= 5 and counts.get("between", 0) >= 5, counts  # both kinds present
    S = res.sensitivity()
    assert S.shape == (n, n)
    fd = central_differences(solver, q0, 1e-6)
    assert np.abs(S - fd).max() <= 1e-6 * np.abs(fd).max()


def test_degenerate_scalar_through_a_solver() -> None:
    # 0 <= z ⟂ z - p >= 0 at p = 0 (issue 29)
    m = MCP("kink")
    z = m.add_variables("z", 1, lb=0.0)
    (p,) = m.add_parameters("p", 1, value=0.0)
    m.add_functions("z", [z[0] - p])
    res = mcpkit.solve(m, tol=1e-10)
    assert res.solved and abs(res.z[0]) <= 1e-9
    with pytest.raises(NotDifferentiableError, match=r"z\[0\]"):
        res.sensitivity()
    np.testing.assert_allclose(res.sensitivity(direction=[1]), [1.0], atol=1e-12)
    np.testing.assert_allclose(res.sensitivity(direction=[-1]), [0.0], atol=1e-12)


def nonlinear_box_mcp(
    rng: np.random.Generator, lb: np.ndarray, ub: np.ndarray, n_p: int
) -> tuple[MCP, np.ndarray]:
    r"""``lb <= z <= ub ⟂ Mz + 0.2 z^3 + q0 + B p + 0.3 p_0 sin(z)`` with a P-matrix ``M``."""
    n = lb.size
    M = random_p_matrix(rng, n, shift=0.5)
    q0 = rng.standard_normal(n) * 2
    B = rng.standard_normal((n, n_p))
    m = MCP("box")
    z = m.add_variables("z", n, lb=lb, ub=ub)
    p = m.add_parameters("p", n_p, value=rng.uniform(-0.5, 0.5, n_p))
    rows = [
        sum(float(M[i, j]) * z[j] for j in range(n))
        + sp.Rational(1, 5) * z[i] ** 3
        + float(q0[i])
        + sum(float(B[i, k]) * p[k] for k in range(n_p))
        + sp.Rational(3, 10) * p[0] * sp.sin(z[i])
        for i in range(n)
    ]
    m.add_functions("z", rows)
    return m, m.parameter_values


@pytest.mark.parametrize("backend", ["casadi", "pyomo"])
def test_nonlinear_box_mcp_both_backends(backend: str) -> None:
    rng = np.random.default_rng(7)
    lb = np.array([-1.0, 0.0, -math.inf, -2.0, 0.0])
    ub = np.array([1.0, math.inf, math.inf, 0.5, 0.2])
    m, p0 = nonlinear_box_mcp(rng, lb, ub, 2)
    solver = mcpkit.Solver(m, backend=backend, method="newton", tol=1e-12)
    res = solver.solve()
    assert res.solved and res.backend == backend
    assert margin(res, lb, ub) > 1e-3
    fd = central_differences(solver, p0, 1e-5)
    np.testing.assert_allclose(res.sensitivity(), fd, rtol=1e-5, atol=1e-6)


@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 8))
def test_property_strictly_complementary_lcp(seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    M = random_p_matrix(rng, n, skew=rng.uniform(0, 2))
    q0 = rng.standard_normal(n) * 3
    solver = mcpkit.Solver(parametric_lcp(M, q0), method="lemke", tol=1e-12)
    res = solver.solve()
    assert res.solved
    assume(margin(res, np.zeros(n), np.full(n, math.inf)) > 1e-4)
    fd = central_differences(solver, q0, 1e-7)
    np.testing.assert_allclose(res.sensitivity(), fd, rtol=1e-6, atol=1e-6 * max(1.0, np.abs(fd).max()))


#: one component's bounds: lower only, upper only, a box, or free
bounds = st.one_of(
    st.tuples(st.floats(-2, 2), st.just(math.inf)),
    st.tuples(st.just(-math.inf), st.floats(-2, 2)),
    st.tuples(st.floats(-2, 1), st.floats(0.1, 3)).map(lambda t: (t[0], t[0] + t[1])),
    st.just((-math.inf, math.inf)),
)


@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), box=st.lists(bounds, min_size=1, max_size=8))
def test_property_box_lcp_through_the_newton_factor(seed: int, box: list[tuple[float, float]]) -> None:
    # lb <= z <= ub ⟂ M z + q with q the parameters, solved by Newton: sensitivity() right after
    # the solve may take the engine's LU of the free rows (result.extra["newton_factor"]); either
    # way it equals -inv(M_II) on the free rows (to rounding), and central differences of
    # re-solves (taken after it, so they cannot affect it; Newton's re-solves stop at tol = 1e-12,
    # which over 2h = 2e-7 limits the differences to about 1e-5)
    from mcpkit.stationarity.sensitivity import result_linearization

    rng = np.random.default_rng(seed)
    n = len(box)
    lb = np.array([b[0] for b in box])
    ub = np.array([b[1] for b in box])
    M = random_p_matrix(rng, n, skew=rng.uniform(0, 2))
    q0 = rng.standard_normal(n) * 3
    solver = mcpkit.Solver(parametric_lcp(M, q0, lb, ub), backend="casadi", method="newton", tol=1e-12)
    res = solver.solve(warm_start=False)
    assume(res.solved and margin(res, lb, ub) > 1e-4)
    lin = result_linearization(res)
    reused = "Newton engine" in lin.factorization
    S = res.sensitivity()
    exact = np.zeros((n, n))
    fr = lin.free
    exact[np.ix_(fr, fr)] = -np.linalg.inv(M[np.ix_(fr, fr)])
    np.testing.assert_allclose(S, exact, rtol=0, atol=1e-10 * max(1.0, np.abs(exact).max()))
    fd = central_differences(solver, q0, 1e-7)
    np.testing.assert_allclose(S, fd, rtol=1e-4, atol=1e-5 * max(1.0, np.abs(fd).max()))
    event(f"engine's factor reused: {reused}")


@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), box=st.lists(bounds, min_size=1, max_size=5), n_p=st.integers(1, 3))
def test_property_strictly_complementary_box_mcp(seed: int, box: list[tuple[float, float]], n_p: int) -> None:
    rng = np.random.default_rng(seed)
    lb = np.array([b[0] for b in box])
    ub = np.array([b[1] for b in box])
    m, p0 = nonlinear_box_mcp(rng, lb, ub, n_p)
    solver = mcpkit.Solver(m, backend="casadi", method="newton", tol=1e-12)
    res = solver.solve()
    assume(res.solved)  # the property is about the derivative, not about Newton's reach
    assume(margin(res, lb, ub) > 1e-3)
    fd = central_differences(solver, p0, 1e-5)
    np.testing.assert_allclose(res.sensitivity(), fd, rtol=1e-5, atol=1e-6 * max(1.0, np.abs(fd).max()))
    dp = rng.standard_normal(n_p)
    np.testing.assert_allclose(res.sensitivity(direction=dp), res.sensitivity() @ dp, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    ("matrix", "n", "method"),
    [("permuted", 400, "banded LU (reordered)"), ("grid", 400, "SuperLU"), ("random", 600, "SuperLU")],
)
def test_benchmark_lcps_match_tight_central_differences(matrix: str, n: int, method: str) -> None:
    # the LCPs of benchmarks/bench_sensitivity.py (one parameter t): dz/dt against central
    # differences of re-solves at tol = 1e-13 (at the benchmark's tol = 1e-10 the re-solve error
    # over 2h limits the differences to ~1e-5, the benchmark's docstring); each through the LU
    # its pattern selects (grid 20 x 20: band 41 > BAND_LIMIT in every order RCM finds), and
    # through the Newton engine's own LU of the free rows, which sensitivity() takes while the
    # solver is alive and has not factorised again
    from dataclasses import replace

    from mcpkit.stationarity.sensitivity import result_linearization
    from tests.conftest import load_benchmark

    mcp, t0 = load_benchmark("bench_sensitivity").build(n, matrix=matrix)
    p = np.array([t0])
    solver = mcpkit.Solver(mcp, backend="casadi", method="newton", tol=1e-10)
    res = solver.solve(p=p, warm_start=False)
    assert res.solved
    counts = res.pair_counts()
    assert counts.get("at_lower", 0) >= n // 5 and counts.get("between", 0) >= n // 5, counts
    lin = result_linearization(res)
    own = replace(lin, kept=None)
    assert lin.factorization == "SuperLU (Newton engine)" and own.factorization == method
    S = res.sensitivity()[:, 0]
    S_own = own.jacobian()[:, 0]
    fine = mcpkit.Solver(mcp, backend="casadi", method="newton", tol=1e-13)
    fd = central_differences_from(fine, res.z, p, 1e-6)
    assert np.abs(S - fd).max() <= 1e-7 * np.abs(fd).max()
    assert np.abs(S_own - fd).max() <= 1e-7 * np.abs(fd).max()


def central_differences_from(solver: mcpkit.Solver, z0: np.ndarray, p0: np.ndarray, h: float) -> np.ndarray:
    """``(z(p0 + h) - z(p0 - h)) / 2h`` for one parameter, both re-solves started at ``z0``."""
    plus, minus = solver.solve(p=p0 + h, z0=z0), solver.solve(p=p0 - h, z0=z0)
    assert plus.solved and minus.solved, (plus, minus)
    return (plus.z - minus.z) / (2 * h)


def _solved_parametric() -> MCP:
    m = mcpkit.MCP("c")
    lam = m.add_variables("lam", 2, lb=0.0)
    q = m.add_parameters("q", 2, value=[-1.0, 1.0])
    m.add_functions("lam", [2 * lam[0] + q[0], 2 * lam[1] + q[1]])
    return m


@pytest.mark.parametrize("tol", [-1.0, 0.0, math.nan, "a", True])
def test_sensitivity_tol_is_checked(tol: object) -> None:
    """``sensitivity(tol=-1)`` ran with a negative activity threshold and ``tol="a"`` raised a
    bare ``ValueError``; the parameters' text was read as numbers."""
    m = _solved_parametric()
    res = mcpkit.Solver(m, method="newton").solve()
    assert res.solved
    with pytest.raises(mcpkit.MCPInputError, match="tol must be"):
        res.sensitivity(tol=tol)
    with pytest.raises(mcpkit.MCPInputError, match="tol must be"):
        res.sensitivity(np.ones(2), tol=tol)
    with pytest.raises(mcpkit.MCPInputError, match="numbers expected"):
        mcpkit.Solver(m, method="newton").solve(p={"q": ["1", 2]})


@pytest.mark.solver
def test_per_call_tol_on_a_homotopy_route_and_sensitivity_by_name() -> None:
    # Scholtes/IPOPT reads its tolerance when built: a per-call tol builds (and keeps) a route with it
    m = mcpkit.MCP("cubic")
    z = m.add_variables("z", 2, lb=0.0)
    q = m.add_parameters("q", 2, value=[2.0, 3.0])
    m.add_functions("z", [z[0] ** 3 + z[0] - q[0], z[1] ** 3 + 2 * z[1] - q[1]])
    solver = mcpkit.Solver(m, method="scholtes", tol=1e-4)
    loose = solver.solve()
    tight = solver.solve(tol=1e-12)
    assert loose.solved and tight.solved and tight.tol == 1e-12 and solver.solve().tol == 1e-4
    assert tight.natural_residual <= 1e-12
    s = tight.sensitivity("q")
    # dz_i/dq_i = 1 / (3 z_i^2 + c_i) on the diagonal, 0 off it
    expect = np.diag(1.0 / (3.0 * tight.z**2 + np.array([1.0, 2.0])))
    np.testing.assert_allclose(s["q"], expect, rtol=1e-9, atol=1e-12)
