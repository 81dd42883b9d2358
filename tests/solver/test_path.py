"""The PATH route (pathampl through Pyomo, or GAMSPy). Skips with the reason when PATH is absent."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mcpkit
import mcpkit.engines.path as path_mod
import mcpkit.solving.availability as avail
from mcpkit.errors import SolverNotAvailableError
from mcpkit.problems.mcp import MCP


def _need_path() -> None:
    if (why := avail.path_unavailable_reason()) is not None:
        pytest.skip(f"PATH not available: {why}")


@pytest.mark.path
def test_path_lcp_2x2() -> None:
    """M = [[2,1],[1,2]], q = (-1,-1): z = (1/3, 1/3)."""
    _need_path()
    res = mcpkit.solve(MCP.lcp([[2.0, 1.0], [1.0, 2.0]], [-1.0, -1.0]), method="path")
    assert res.solved, res.message
    assert "path" in res.extra
    np.testing.assert_allclose(res.z, [1 / 3, 1 / 3], atol=1e-8)


@pytest.mark.path
def test_path_mixed_parametric() -> None:
    """x0 in [1,3] ⟂ x0 - a; x1 <= 2 ⟂ x1^3 + 1; y >= 0 ⟂ (x0 + y0 + a - 5, y1 - 1).

    Closed form: x0 = clip(a, 1, 3), x1 = -1, y1 = 1, y0 = max(5 - a - x0, 0).
    """
    _need_path()
    mcp = MCP("mixed")
    a = mcp.add_parameters("a", 1, value=2.0)
    x = mcp.add_variables("x", 2, lb=[1.0, -math.inf], ub=[3.0, 2.0])
    mcp.add_variables("y", 2, lb=0.0)
    mcp.add_functions("x", [x[0] - a[0], x[1] ** 3 + 1])
    mcp.add_affine("y", [[1.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]], [a[0] - 5, -1.0])
    solver = mcpkit.Solver(mcp, method="path")
    for av in (2.0, 5.0, 0.0):
        res = solver.solve(p=[av])
        assert res.solved, res.message
        x0 = min(max(av, 1.0), 3.0)
        np.testing.assert_allclose(res.z, [x0, -1.0, max(5 - av - x0, 0.0), 1.0], atol=1e-8)


@pytest.mark.path
def test_path_p_matrix_lcp_200() -> None:
    """Positive definite M (a P-matrix): unique solution; agree with the CasADi route."""
    _need_path()
    rng = np.random.default_rng(3)
    n = 200
    A = rng.standard_normal((n, n))
    M = A @ A.T / n + np.eye(n)
    q = rng.standard_normal(n)
    mcp = MCP.lcp(M, q)
    res = mcpkit.solve(mcp, method="path")
    assert res.solved, res.message
    ref = mcpkit.solve(mcp, backend="casadi", method="scholtes")
    np.testing.assert_allclose(res.z, ref.z, atol=1e-6)


def _no_path(monkeypatch: pytest.MonkeyPatch) -> None:
    for mod in (avail, path_mod):
        monkeypatch.setattr(mod, "pathampl_executable", lambda: None)
        monkeypatch.setattr(mod, "_gamspy_path", lambda: (False, "", "gamspy not installed"))


@pytest.mark.parametrize("backend", ["auto", "pyomo", "gamspy"])
def test_missing_path_raises_with_howto(monkeypatch: pytest.MonkeyPatch, backend: str) -> None:
    _no_path(monkeypatch)
    with pytest.raises(SolverNotAvailableError) as info:
        path_mod.PathRoute(MCP.lcp([[1.0]], [-1.0]), backend, mcpkit.SolveOptions())
    assert "pip install gamspy" in str(info.value) and "pathampl" in str(info.value)


def test_missing_path_raises_at_solver_construction(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_path(monkeypatch)
    with pytest.raises(SolverNotAvailableError, match="PATH is not available"):
        mcpkit.Solver(MCP.lcp([[1.0]], [-1.0]), method="path")


def test_bad_backend_name() -> None:
    with pytest.raises(mcpkit.errors.MCPInputError, match="backend must be"):
        path_mod._which_interface("cplex")
