"""``Solver.solve(tol=...)``: a per-call tolerance, and a typed error for options that are the solver's."""

from __future__ import annotations

import numpy as np
import pytest

import mcpkit
from mcpkit import MCP
from mcpkit.errors import MCPInputError, UnknownOptionError


def nonlinear_mcp() -> MCP:
    """``z >= 0 ⟂ z^3 + z - q``: one free pair, solved by Newton iterations (not in one step)."""
    m = MCP("cubic")
    z = m.add_variables("z", 2, lb=0.0)
    q = m.add_parameters("q", 2, value=[2.0, 3.0])
    m.add_functions("z", [z[0] ** 3 + z[0] - q[0], z[1] ** 3 + 2 * z[1] - q[1]])
    return m


def test_per_call_tol_is_used_and_judged_then_forgotten() -> None:
    m = nonlinear_mcp()
    solver = mcpkit.Solver(m, method="newton", tol=1e-4)
    loose = solver.solve(warm_start=False)
    tight = solver.solve(tol=1e-13, warm_start=False)
    again = solver.solve(warm_start=False)
    assert loose.solved and tight.solved and again.solved
    assert loose.tol == 1e-4 and tight.tol == 1e-13 and again.tol == 1e-4
    assert tight.natural_residual <= 1e-13
    # the tight call iterated further: its point is the root to machine precision
    np.testing.assert_allclose(tight.z[0] ** 3 + tight.z[0], 2.0, rtol=0, atol=1e-12)
    assert tight.iterations >= loose.iterations


def test_a_bad_tol_is_refused() -> None:
    solver = mcpkit.Solver(nonlinear_mcp(), method="newton")
    with pytest.raises(MCPInputError, match="tol must be a positive finite number"):
        solver.solve(tol=-1.0)


def test_solver_options_are_named_as_the_solvers() -> None:
    solver = mcpkit.Solver(nonlinear_mcp(), method="newton")
    with pytest.raises(UnknownOptionError, match=r"'max_outer' is an option of the solver.*Solver\(problem"):
        solver.solve(max_outer=3)
    with pytest.raises(UnknownOptionError, match=r"unknown option 'tolerance'.*Did you mean 'tol'"):
        solver.solve(tolerance=1e-9)
