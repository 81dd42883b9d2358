"""The Pyomo route (IPOPT executable, or CasADi's IPOPT through an NL import)."""

from __future__ import annotations

import math

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.mpec import Complementarity, complements

import mcpkit
from mcpkit.lowering.pyomo import from_pyomo, write_back
from mcpkit.problem import MCP

pytestmark = pytest.mark.solver


@pytest.mark.parametrize("method", ["scholtes", "scholtes_eq", "fb", "penalty", "elastic"])
def test_lcp_2x2(method: str) -> None:
    """M = [[2,1],[1,2]], q = (-1,-1): both components interior, 2z1+z2 = 1 = z1+2z2 -> 1/3."""
    res = mcpkit.solve(MCP.lcp([[2.0, 1.0], [1.0, 2.0]], [-1.0, -1.0]), backend="pyomo", method=method)
    assert res.solved, res.message
    assert res.backend == "pyomo"
    assert "ipopt" in res.extra
    np.testing.assert_allclose(res.z, [1 / 3, 1 / 3], atol=1e-7)


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
    from mcpkit.availability import ipopt_executable

    res = mcpkit.solve(MCP.lcp([[1.0]], [-2.0]), backend="pyomo", method="scholtes")
    assert res.solved
    np.testing.assert_allclose(res.z, [2.0], atol=1e-8)
    if ipopt_executable() is None:
        assert res.extra["ipopt"] == "casadi (via NL import of the Pyomo model)"
    else:
        assert res.extra["ipopt"].startswith("executable ")


def test_unknown_method_rejected() -> None:
    from mcpkit.options import SolveOptions
    from mcpkit.solvers.pyomo_route import PyomoRoute

    with pytest.raises(mcpkit.errors.MCPInputError, match="unknown method"):
        PyomoRoute(MCP.lcp([[1.0]], [1.0]), "newton", SolveOptions())


@pytest.mark.parametrize("method", ["scholtes", "scholtes_eq", "fb", "penalty", "elastic"])
def test_homotopy_stated_in_pyomo(method: str) -> None:
    """The Pyomo-side homotopy (the executable route's code) run with the in-process solver.

    Box MCP on [1, 3] with F = z - (5, 2, -4): z = clip((5, 2, -4), 1, 3) = (3, 2, 1).
    """
    from mcpkit.solvers.pyomo_route import PyomoRoute

    mcp = MCP.lcp(np.eye(3), [-5.0, -2.0, 4.0], lb=1.0, ub=3.0)
    opts = mcpkit.SolveOptions(tol=1e-8)
    route = PyomoRoute(mcp, method, opts, ipopt="mcpkit_ipopt")
    assert "homotopy in Pyomo" in route.ipopt_used
    out = route.solve(mcp.parameter_values, mcp.start, warm=False)
    assert out.termination is mcpkit.Termination.CONVERGED, out.trace
    np.testing.assert_allclose(out.z, [3.0, 2.0, 1.0], atol=1e-7)
    assert all(step.wall_time_s >= 0 for step in out.trace)


def test_pyomo_side_rejects_unknown_method() -> None:
    from mcpkit.solvers.pyomo_homotopy import PyomoHomotopy

    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    with pytest.raises(mcpkit.MCPInputError, match="not 'lcp'"):
        PyomoHomotopy(m, [m.x], [m.x], 0.0, "lcp", mcpkit.SolveOptions(), None)
