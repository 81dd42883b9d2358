"""``method="newton"`` against independent answers: enumeration, planted solutions, MCPLIB, no-solution cases.

Every solve goes through ``mcpkit.solve``/``mcpkit.Solver`` (the verdict is mcpkit's own residual
check on the declaration), on both backends: ``casadi`` (the declaration lowered to CasADi) and
``pyomo`` (the Pyomo model read back through its NL import).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mcpkit
from mcpkit import MCP, Termination
from mcpkit.formats.io import load_mcp
from mcpkit.formats.mcp_file import load_any_mcp
from tests.conftest import SHARED_DATA, enumerate_box_lcp, random_p_matrix

pytestmark = pytest.mark.solver

BACKENDS = ["casadi", "pyomo"]
MCPLIB = SHARED_DATA / "mcplib"
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def newton(problem: MCP, backend: str = "casadi", **kwargs: object) -> mcpkit.MCPResult:
    kwargs.setdefault("tol", 1e-10)
    res = mcpkit.solve(problem, method="newton", backend=backend, **kwargs)
    assert res.method == "newton" and res.backend == backend
    return res


# ------------------------------------------------------------------ LCPs and box MCPs
@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 8), backend=st.sampled_from(BACKENDS))
def test_random_p_matrix_lcp_matches_enumeration(seed: int, n: int, backend: str) -> None:
    rng = np.random.default_rng(seed)
    M = random_p_matrix(rng, n, skew=rng.uniform(0, 2))
    q = rng.standard_normal(n) * 3
    exact = enumerate_box_lcp(M, q, np.zeros(n), np.full(n, math.inf))
    assert len(exact) == 1  # P-matrix: one solution
    res = newton(MCP.lcp(M, q), backend)
    assert res.solved and res.termination is Termination.CONVERGED, res.message
    np.testing.assert_allclose(res.z, exact[0], atol=1e-7, rtol=0)


@st.composite
def planted_box_mcp(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(M, q, lb, ub, z*)``: a P-matrix box LCP whose unique solution ``z*`` is planted.

    Each component gets a bound type (free, lower, upper, box, fixed) and a state at the
    solution (at a bound with F strictly signed or zero, or strictly between with F = 0);
    ``q = F* - M z*``.
    """
    n = draw(st.integers(1, 8))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    M = random_p_matrix(rng, n, skew=rng.uniform(0, 2))
    lb, ub, z, F = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    for i in range(n):
        kind = draw(st.sampled_from(["free", "lower", "upper", "box", "fixed"]))
        lo = rng.uniform(-3, 3)
        hi = lo + rng.uniform(0.5, 4)
        lb[i], ub[i] = {
            "free": (-math.inf, math.inf), "lower": (lo, math.inf), "upper": (-math.inf, hi),
            "box": (lo, hi), "fixed": (lo, lo),
        }[kind]  # fmt: skip
        states = {"free": ["between"], "lower": ["lower", "between"], "upper": ["upper", "between"],
                  "box": ["lower", "upper", "between"], "fixed": ["fixed"]}[kind]  # fmt: skip
        state = draw(st.sampled_from(states))
        slope = 0.0 if draw(st.integers(0, 4)) == 0 else rng.uniform(0.1, 3)  # sometimes degenerate
        if state == "lower":
            z[i], F[i] = lb[i], slope
        elif state == "upper":
            z[i], F[i] = ub[i], -slope
        elif state == "fixed":
            z[i], F[i] = lb[i], rng.uniform(-3, 3)
        else:
            a = lb[i] if math.isfinite(lb[i]) else -5.0
            b = ub[i] if math.isfinite(ub[i]) else 5.0
            z[i], F[i] = a + (b - a) * rng.uniform(0.1, 0.9), 0.0
    return M, F - M @ z, lb, ub, z


@SETTINGS
@given(data=planted_box_mcp(), backend=st.sampled_from(BACKENDS))
def test_box_mcp_with_planted_solution(
    data: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray], backend: str
) -> None:
    M, q, lb, ub, planted = data
    res = newton(MCP.lcp(M, q, lb=lb, ub=ub), backend)
    assert res.solved, res.message
    np.testing.assert_allclose(res.z, planted, atol=1e-7, rtol=0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_box_mcps_match_enumeration_on_every_bound_pattern(backend: str) -> None:
    M = np.array([[4.0, 1.0, 0.5], [-1.0, 3.0, 0.2], [0.3, 0.0, 2.0]])
    for lb, ub in (
        ([1.0, 1.0, 1.0], [3.0, 3.0, 3.0]),
        ([-math.inf] * 3, [2.0, 2.0, 2.0]),
        ([1.0, -math.inf, 0.0], [3.0, 2.0, math.inf]),
        ([1.0, -math.inf, 0.5], [1.0, math.inf, 0.5]),  # fixed and free components
    ):
        for q in ([-1.0, 8.0, -20.0], [-10.0, 2.0, 3.0], [5.0, -12.0, 0.0]):
            exact = enumerate_box_lcp(M, np.array(q), np.array(lb), np.array(ub))
            assert len(exact) == 1
            res = newton(MCP.lcp(M, q, lb=lb, ub=ub), backend)
            assert res.solved, res.message
            np.testing.assert_allclose(res.z, exact[0], atol=1e-8, rtol=0)


# ------------------------------------------------------------------ nonlinear
def kojima_shindo(x: sp.Matrix) -> list[sp.Expr]:
    return [
        3 * x[0] ** 2 + 2 * x[0] * x[1] + 2 * x[1] ** 2 + x[2] + 3 * x[3] - 6,
        2 * x[0] ** 2 + x[0] + x[1] ** 2 + 3 * x[2] + 2 * x[3] - 2,
        3 * x[0] ** 2 + x[0] * x[1] + 2 * x[1] ** 2 + 2 * x[2] + 3 * x[3] - 1,
        x[0] ** 2 + 3 * x[1] ** 2 + 2 * x[2] + 3 * x[3] - 3,
    ]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("start", [[1, 1, 1, 1], [0, 0, 0, 0], [100, 100, 100, 100], [1, 0, 3, 0]])
def test_nonlinear_ncp_known_solutions(backend: str, start: list[float]) -> None:
    # Kojima-Shindo: solutions (sqrt(6)/2, 0, 0, 1/2) (degenerate) and (1, 0, 3, 0)
    res = newton(MCP.ncp(4, kojima_shindo, start=start), backend)
    assert res.solved, res.message
    known = [np.array([math.sqrt(6) / 2, 0.0, 0.0, 0.5]), np.array([1.0, 0.0, 3.0, 0.0])]
    assert min(np.abs(res.z - k).max() for k in known) < 1e-8
    assert all(s.phase in ("crash", "newton", "gradient") for s in res.trace)
    assert res.iterations == len(res.trace)


# ------------------------------------------------------------------ MCPLIB
def mcplib_mcp(path: Path) -> tuple[MCP, dict]:
    """An MCPLIB port (zero-objective CasADi MPCC JSON, see ``SOURCE.md``) as an MCP, with its meta."""
    return load_any_mcp(path)


MCPLIB_FILES = sorted(p.name for p in MCPLIB.glob("*.json") if not p.name.endswith(".lcp.json"))


@pytest.mark.skipif(not MCPLIB.is_dir(), reason=f"{MCPLIB} not present (see ../shared/README.md)")
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", MCPLIB_FILES or ["none"])
def test_mcplib_from_its_start(name: str, backend: str) -> None:
    mcp, meta = mcplib_mcp(MCPLIB / name)
    res = newton(mcp, backend)
    assert res.solved and res.termination is Termination.CONVERGED, res.message
    F = np.asarray(mcp.evaluate(res.z), dtype=float)  # independent of the route's F
    assert np.abs(res.z - np.clip(res.z - F, mcp.lb, mcp.ub)).max() <= 1e-10
    if "known_solutions" in meta:
        assert min(np.abs(res.z - np.array(k)).max() for k in meta["known_solutions"]) < 1e-8


@pytest.mark.skipif(not MCPLIB.is_dir(), reason=f"{MCPLIB} not present")
def test_billups_merit_trap_at_zero_is_reported_stalled() -> None:
    """From z = 0 the FB merit function has a stationary point that is not a solution (Billups
    1995): the engine must say so, not claim convergence. From z = 1 it finds 1 + sqrt(1.01)."""
    mcp, meta = mcplib_mcp(MCPLIB / "billups.json")
    trapped = newton(mcp, z0=[0.0])
    assert not trapped.solved and trapped.termination is Termination.STALLED
    assert "stationary point" in trapped.raw_status
    assert trapped.extra["gradient_steps"] > 0 and trapped.extra["merit"] > 1e-6  # the fallbacks ran
    res = newton(mcp, z0=[1.0])
    assert res.solved
    np.testing.assert_allclose(res.z, meta["known_solutions"][0], atol=1e-9)


@pytest.mark.skipif(not MCPLIB.is_dir(), reason=f"{MCPLIB} not present")
@pytest.mark.parametrize("name", ["munson1.lcp.json", "munson1b.lcp.json", "obstacle_10x10.lcp.json"])
def test_mcplib_lcp_files(name: str) -> None:
    mcp = load_mcp(MCPLIB / name)
    data = json.loads((MCPLIB / name).read_text())
    M, q = np.array(data["M"], dtype=float), np.array(data["q"], dtype=float)
    res = newton(mcp)
    assert res.solved, res.message
    w = M @ res.z + q
    assert np.abs(res.z - np.clip(res.z - w, mcp.lb, mcp.ub)).max() <= 1e-10
    if mcp.n <= 8:
        exact = enumerate_box_lcp(M, q, mcp.lb, mcp.ub)
        assert min(np.abs(res.z - e).max() for e in exact) < 1e-9


SICONOS = SHARED_DATA / "lcp-siconos"
SICONOS_FILES = sorted(p.name for p in SICONOS.glob("*.json"))


@pytest.mark.skipif(not SICONOS.is_dir(), reason=f"{SICONOS} not present (see ../shared/README.md)")
@pytest.mark.parametrize("name", SICONOS_FILES or ["none"])
def test_siconos_lcp_set(name: str) -> None:
    mcp = load_mcp(SICONOS / name)
    data = json.loads((SICONOS / name).read_text())
    M, q = np.array(data["M"], dtype=float), np.array(data["q"], dtype=float)
    res = newton(mcp)
    assert res.solved, res.message
    w = M @ res.z + q  # checked on the file's data, not on the route's F
    assert np.abs(res.z - np.clip(res.z - w, mcp.lb, mcp.ub)).max() <= 1e-9 * max(1.0, np.abs(q).max())


# ------------------------------------------------------------------ failures
@pytest.mark.parametrize("backend", BACKENDS)
def test_problems_without_solution_are_not_solved(backend: str) -> None:
    # F_1 = -z_1 - 1 < 0 on z_1 >= 0; and an NCP with F = -(1 + z^2) < 0 everywhere
    lcp = MCP.lcp([[-1.0, 0.0], [0.0, 1.0]], [-1.0, 1.0])
    ncp = MCP.ncp(1, lambda z: [-(1 + z[0] ** 2)])
    for problem in (lcp, ncp):
        res = newton(problem, backend, max_inner_iter=200)
        assert not res.solved
        assert res.termination is not Termination.CONVERGED
        assert res.termination in (Termination.STALLED, Termination.ITERATION_LIMIT)


@pytest.mark.parametrize("backend", BACKENDS)
def test_singular_jacobian_is_handled_by_the_proximal_perturbation(backend: str) -> None:
    # free variables with F = (s - 2, 2 (s - 2)), s = z_1 + z_2: J_F singular everywhere, a line of solutions
    mcp = MCP("singular")
    z = mcp.add_variables("z", 2, lb=-math.inf, start=[5.0, -1.0])
    mcp.add_functions("z", [z[0] + z[1] - 2, 2 * (z[0] + z[1]) - 4])
    res = newton(mcp, backend)
    assert res.solved, res.message
    assert res.z.sum() == pytest.approx(2.0, abs=1e-10)
    assert res.extra["perturbed_steps"] > 0 and all(s.parameter > 0 for s in res.trace)


def test_iteration_and_time_limits_are_reported() -> None:
    mcp = MCP.ncp(4, kojima_shindo, start=[0, 0, 0, 0])
    res = newton(mcp, max_inner_iter=1)
    assert not res.solved and res.termination is Termination.ITERATION_LIMIT and res.iterations == 1
    # a limit passed before the first iteration: no iteration, the start point judged (whatever the
    # machine's load; mcpkit.solve no longer raises it to 1 ms)
    res = newton(mcp, time_limit=1e-9)
    assert not res.solved and res.termination is Termination.TIME_LIMIT and res.iterations == 0
    np.testing.assert_array_equal(res.z, np.zeros(4))
    # ... and a start point that is a solution is reported solved under it (nothing was left to do)
    solved_at_start = MCP.lcp(np.eye(2), -np.ones(2))
    solved_at_start.set_start(z=[1.0, 1.0])
    res = newton(solved_at_start, time_limit=1e-9)
    assert res.solved and res.iterations == 0


# ------------------------------------------------------------------ parametric and sparse
def test_warm_parametric_resolves_skip_the_crash_and_reuse_the_route() -> None:
    rng = np.random.default_rng(0)
    n = 10
    A = rng.standard_normal((n, n))
    M = A @ A.T / n + 0.5 * np.eye(n)
    mcp = MCP("ncp_q")
    z = mcp.add_variables("z", n, lb=0.0)
    q = mcp.add_parameters("q", n, value=rng.standard_normal(n))
    mcp.add_functions("z", [sum(M[i, j] * z[j] for j in range(n)) + q[i] + 0.1 * z[i] ** 3 for i in range(n)])
    solver = mcpkit.Solver(mcp, backend="casadi", method="newton", tol=1e-10)
    route = solver.route
    cold = solver.solve(warm_start=False)
    assert cold.solved
    for k in range(1, 15):
        qk = mcp.parameter_values + 0.3 * np.sin(0.15 * k + np.arange(n))
        res = solver.solve(p={"q": qk})
        assert solver.route is route and res.solved, res.message
        assert all(s.phase != "crash" for s in res.trace)
        F = np.asarray(mcp.evaluate(res.z, p={"q": qk}), dtype=float)
        assert res.z.min() >= 0 and F.min() >= -1e-9 and abs(res.z @ F) <= 1e-8


@pytest.mark.parametrize("backend", BACKENDS)
def test_mixed_affine_and_symbolic_blocks(backend: str) -> None:
    """Affine rows (Jacobian from the declaration's matrices, over several or one block) and
    symbolic rows (Jacobian from CasADi) in one MCP; checked on the declaration itself."""
    mcp = MCP("mixed")
    x = mcp.add_variables("x", 2, lb=0.0)
    y = mcp.add_variables("y", 1, lb=-math.inf)
    w = mcp.add_variables("w", 2, lb=0.0, ub=1.0)
    c = mcp.add_parameters("c", 1, value=1.0)
    A = np.array([[3.0, 1.0, 0.5, 0.0, 1.0], [-1.0, 4.0, 0.0, 1.0, 0.0]])
    mcp.add_affine("x", A, [-2.0, c[0]], over=("x", "y", "w"))
    mcp.add_functions("y", [y[0] ** 3 + y[0] - x[0] + w[1] - c[0]])
    mcp.add_affine("w", np.array([[1.0], [-2.0]]), [0.5, -0.25], over=("y",))
    solver = mcpkit.Solver(mcp, backend=backend, method="newton", tol=1e-10)
    for cv in (1.0, -3.0, 2.5):
        res = solver.solve(p={"c": [cv]})
        assert res.solved, res.message
        F = np.asarray(mcp.evaluate(res.z, p={"c": [cv]}), dtype=float)
        assert np.abs(res.z - np.clip(res.z - F, mcp.lb, mcp.ub)).max() <= 1e-10


def test_jacobian_that_depends_on_parameters_is_refreshed() -> None:
    # F = c z - 1 on z >= 0: J = c changes with the parameter only; z* = 1/c
    mcp = MCP("scaled")
    z = mcp.add_variables("z", 1, lb=0.0)
    c = mcp.add_parameters("c", 1, value=1.0)
    mcp.add_functions("z", [c[0] * z[0] - 1])
    solver = mcpkit.Solver(mcp, backend="casadi", method="newton", tol=1e-12)
    for cv in (1.0, 2.0, 4.0, 0.5):
        res = solver.solve(p={"c": [cv]})
        assert res.solved
        assert res.z[0] == pytest.approx(1 / cv, abs=1e-12 / cv)  # |F| <= tol means |z - 1/c| <= tol/c


def test_function_not_finite_at_the_start_is_a_numerical_error() -> None:
    res = newton(MCP.ncp(1, lambda z: [sp.log(z[0]) - 1]), z0=[0.0])  # F(0) = -inf
    assert not res.solved and res.termination is Termination.NUMERICAL_ERROR


@pytest.mark.parametrize("backend", BACKENDS)
def test_sparse_lcp_uses_superlu_and_resolves_with_new_parameters(backend: str) -> None:
    n = 400
    M = 2.2 * np.eye(n) - np.eye(n, k=1) - np.eye(n, k=-1)  # a tridiagonal M-matrix
    mcp = MCP("tridiag")
    mcp.add_variables("z", n, lb=0.0, ub=np.where(np.arange(n) % 7 == 0, 0.5, math.inf))
    q = mcp.add_parameters("q", n)
    mcp.add_affine("z", M, list(q))
    solver = mcpkit.Solver(mcp, backend=backend, method="newton", tol=1e-10)
    rng = np.random.default_rng(1)
    for _ in range(3):
        qv = rng.standard_normal(n)
        res = solver.solve(p={"q": qv}, warm_start=False)
        assert res.solved, res.message
        assert res.extra["linear_solver"].startswith("SuperLU")
        w = M @ res.z + qv
        assert np.abs(res.z - np.clip(res.z - w, mcp.lb, mcp.ub)).max() <= 1e-10
