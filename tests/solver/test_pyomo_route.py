"""The Pyomo route: the declaration's Pyomo model, read back through its NL import, on the one homotopy.

The subproblems run on CasADi's nlpsol (``ipopt="casadi"``, the default without an executable) or
on the Pyomo branch: the template replayed in Pyomo and solved by a Pyomo solver object
(``ipopt="mcpkit_ipopt"`` takes the code path of an ``ipopt`` executable in CI).
"""

from __future__ import annotations

import math

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.mpec import Complementarity, complements

import mcpkit
from mcpkit.lowering.pyomo import from_pyomo, write_back
from mcpkit.problems.mcp import MCP
from mcpkit.solving.options import REFORMULATIONS
from tests.conftest import enumerate_box_lcp

pytestmark = pytest.mark.solver

IPOPTS = ["casadi", "mcpkit_ipopt"]


@pytest.mark.parametrize("ipopt", IPOPTS)
@pytest.mark.parametrize("method", REFORMULATIONS)
def test_every_reformulation_solves_an_lcp_and_a_box_mcp(method: str, ipopt: str) -> None:
    """Against enumeration of the 3^n active patterns (M is a P-matrix: one solution each).

    LCP: M = [[2,1],[1,2]], q = (-1,-1) (z = (1/3, 1/3)); box MCPs on mixed bounds.
    """
    M2, q2 = np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([-1.0, -1.0])
    res = mcpkit.solve(MCP.lcp(M2, q2), backend="pyomo", method=method, ipopt=ipopt, tol=1e-9)
    assert res.solved, res.message
    assert res.backend == "pyomo" and res.extra["ipopt"].startswith(ipopt)
    exact = enumerate_box_lcp(M2, q2, np.zeros(2), np.full(2, np.inf))
    np.testing.assert_allclose(res.z, exact[0], atol=1e-8, rtol=0)
    M = np.array([[4.0, 1.0, 0.5], [-1.0, 3.0, 0.2], [0.3, 0.0, 2.0]])
    lb, ub = np.array([1.0, -np.inf, 0.0]), np.array([3.0, 2.0, np.inf])
    for q in ([-1.0, 8.0, -20.0], [5.0, -12.0, 0.0]):
        exact = enumerate_box_lcp(M, np.array(q), lb, ub)
        assert len(exact) == 1
        res = mcpkit.solve(MCP.lcp(M, q, lb=lb, ub=ub), backend="pyomo", method=method, ipopt=ipopt, tol=1e-9)
        assert res.solved, res.message
        np.testing.assert_allclose(res.z, exact[0], atol=1e-7, rtol=0)


def test_both_inner_solvers_take_the_same_iterations_on_an_lcp() -> None:
    """The LCP on which the NL-import route took 41 iterations and the mcpkit_ipopt route 5."""
    mcp = MCP.lcp([[2.0, 1.0], [1.0, 2.0]], [-1.0, -1.0])
    runs = [mcpkit.solve(mcp, backend="pyomo", method="scholtes", ipopt=ipopt) for ipopt in IPOPTS]
    assert all(r.solved for r in runs)
    assert runs[0].iterations == runs[1].iterations
    assert runs[0].outer_iterations == runs[1].outer_iterations == len(runs[0].trace)
    assert [s.inner_iterations for s in runs[0].trace] == [s.inner_iterations for s in runs[1].trace]


def test_box_bounds_1_3() -> None:
    """F = z - (5, 2, -4) on [1,3]: z = clip((5, 2, -4), 1, 3) = (3, 2, 1)."""
    mcp = MCP.lcp(np.eye(3), [-5.0, -2.0, 4.0], lb=1.0, ub=3.0)
    res = mcpkit.solve(mcp, backend="pyomo", method="scholtes")
    assert res.solved, res.message
    np.testing.assert_allclose(res.z, [3.0, 2.0, 1.0], atol=1e-7)


def test_one_sided_upper() -> None:
    """z <= 2 ⟂ F = z - c: z = min(c, 2) for c = (5, -1)."""
    mcp = MCP.lcp(np.eye(2), [-5.0, 1.0], lb=-math.inf, ub=2.0)
    res = mcpkit.solve(mcp, backend="pyomo", method="scholtes")
    assert res.solved, res.message
    np.testing.assert_allclose(res.z, [2.0, -1.0], atol=1e-7)


def test_small_ncp() -> None:
    """0 <= z ⟂ F(z) >= 0 with F1 = z1^2 + z2 - 2, F2 = z2 - 1 + z1/4... closed form below.

    F2 = z2 - 0.5 makes z2 = 0.5 (interior). Then F1 = z1^2 - 1.5 is negative at z1 = 0, so
    z1 > 0 and z1 = sqrt(1.5).
    """
    mcp = MCP.ncp(2, lambda z: [z[0] ** 2 + z[1] - 2, z[1] - 0.5], start=[1.0, 1.0])
    res = mcpkit.solve(mcp, backend="pyomo", method="scholtes")
    assert res.solved, res.message
    np.testing.assert_allclose(res.z, [math.sqrt(1.5), 0.5], atol=1e-7)


def test_parametric_resolve_nonlinear() -> None:
    """x in [1,3] ⟂ x - a (x = clip(a,1,3)); free w with w^3 + 1 = 0 (w = -1); one NL build."""
    mcp = MCP("par")
    a = mcp.add_parameters("a", 1, value=2.0)
    x = mcp.add_variables("x", 1, lb=1.0, ub=3.0)
    w = mcp.add_variables("w", 1, lb=-math.inf, ub=math.inf, start=1.0)  # w = 0 is singular
    mcp.add_functions("x", [x[0] - a[0]])
    mcp.add_functions("w", [w[0] ** 3 + 1])
    solver = mcpkit.Solver(mcp, backend="pyomo", method="scholtes")
    for av, expected in ((2.0, 2.0), (5.0, 3.0), (0.0, 1.0), (2.5, 2.5)):
        res = solver.solve(p={"a": av})
        assert res.solved, res.message
        np.testing.assert_allclose(res.z, [expected, -1.0], atol=1e-7)


def test_random_p_matrix_lcp_200_matches_casadi() -> None:
    """M = A A^T/n + I + (B - B^T)/sqrt(n) is positive definite (a P-matrix): unique solution."""
    rng = np.random.default_rng(7)
    n = 200
    A = rng.standard_normal((n, n))
    B = rng.standard_normal((n, n))
    M = A @ A.T / n + np.eye(n) + (B - B.T) / np.sqrt(n)
    q = rng.standard_normal(n)
    mcp = MCP.lcp(M, q)
    res = mcpkit.solve(mcp, backend="pyomo", method="scholtes")
    assert res.solved, res.message
    assert res.natural_residual <= 1e-8
    ref = mcpkit.solve(mcp, backend="casadi", method="scholtes")
    assert ref.solved
    np.testing.assert_allclose(res.z, ref.z, atol=1e-6)


def test_user_pyomo_model_through_solve() -> None:
    """x >= 0 ⟂ x + y - 3 >= 0, x + y <= 4 ⟂ s^2 - 1 >= 0, y = 2 s, s free.

    Try s = 1 (F_aux = 0, so x + y may lie below 4): y = 2, and x >= 0 ⟂ x - 1 >= 0 gives
    x = 1, x + y = 3 <= 4. Check: all pairs hold, so (x, y, s) = (1, 2, 1) is a solution
    (s = -1 gives y = -2, x = 5, x + y = 3 as well; start at s = 1 to select the first).
    """
    m = pyo.ConcreteModel()
    m.x = pyo.Var(initialize=1.0)
    m.y = pyo.Var(initialize=2.0)
    m.s = pyo.Var(initialize=1.0)
    m.p = pyo.Param(mutable=True, initialize=3.0)
    m.c1 = Complementarity(expr=complements(m.x >= 0, m.x + m.y - m.p >= 0))
    m.c2 = Complementarity(expr=complements(m.x + m.y <= 4, m.s**2 - 1 >= 0))
    m.e = pyo.Constraint(expr=m.y == 2 * m.s)
    res = mcpkit.solve(m, backend="pyomo", method="scholtes")
    assert res.solved, res.message
    mcp = from_pyomo(m)
    write_back(mcp, res)
    assert abs(pyo.value(m.x + m.y) - 3.0) <= 1e-7
    assert abs(m.y.value - 2 * m.s.value) <= 1e-7
    assert abs(abs(m.s.value) - 1.0) <= 1e-7


def test_pyomo_route_reports_which_ipopt() -> None:
    from mcpkit.solving.availability import ipopt_executable

    res = mcpkit.solve(MCP.lcp([[1.0]], [-2.0]), backend="pyomo", method="scholtes")
    assert res.solved
    np.testing.assert_allclose(res.z, [2.0], atol=1e-8)
    if ipopt_executable() is None:
        assert res.extra["ipopt"] == "casadi"
    else:
        assert res.extra["ipopt"].startswith("executable ")


def test_unknown_method_rejected() -> None:
    from mcpkit.orchestration.pyomo_route import PyomoRoute
    from mcpkit.solving.options import SolveOptions

    with pytest.raises(mcpkit.errors.MCPInputError, match="unknown method"):
        PyomoRoute(MCP.lcp([[1.0]], [1.0]), "newton", SolveOptions())


def test_fallback_reformulations_run_on_the_pyomo_branch() -> None:
    """A failing primary hands over to the fallbacks, on the Pyomo branch as on CasADi.

    0 <= z ⟂ -z - 1 >= 0 has no solution: the primary and both fallbacks (scholtes_eq, fb) run,
    the trace records the retries, and the route reports no convergence.
    """
    from mcpkit.orchestration.pyomo_route import PyomoRoute
    from mcpkit.solving.options import SolveOptions

    mcp = MCP.lcp([[-1.0]], [-1.0])
    route = PyomoRoute(mcp, "scholtes", SolveOptions(max_outer=4), ipopt="mcpkit_ipopt")
    out = route.solve(mcp.parameter_values, mcp.start, warm=False)
    assert out.termination is not mcpkit.Termination.CONVERGED
    phases = {s.phase for s in out.trace}
    assert {"relax", "retry:scholtes_eq", "retry:fb"} <= phases, phases
    assert out.iterations == sum(s.inner_iterations for s in out.trace) > 0
