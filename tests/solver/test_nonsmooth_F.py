"""Solving nonsmooth F given as CasADi functions (if_else, comparisons, fmod): the verdict is the
natural residual of the user's own F, so a discontinuous F without a solution is never "solved"."""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

import mcpkit
from mcpkit.errors import MCPInputError

pytestmark = pytest.mark.solver

TOL = 1e-8
x = ca.SX.sym("x")
#: The control case: on [0, 3] its solutions are z = 0 (F = 4 >= 0) and z = 3 (F = -8 <= 0).
CONTROL = ca.Function("control", [x], [-x + 4 + ca.if_else(x > 2, -9, 0)])
#: 0 <= z _|_ if_else(z > 1, 5, 0) + z - 2: F jumps from -1 to +4 at z = 1, no solution.
NO_SOLUTION = ca.Function("jump", [x], [ca.if_else(x > 1, 5, 0) + x - 2])


def _natural(F: ca.Function, z: float, lb: float, ub: float) -> float:
    f = float(F(z))
    return abs(z - min(max(z - f, lb), ub))


@pytest.mark.parametrize("method", ["newton", "scholtes", "fb"])
def test_control_case_is_solved_at_zero_from_below_the_switch(method: str) -> None:
    for z0 in (0.0, 1.0, 1.9):
        res = mcpkit.solve_mcp(CONTROL, None, [0.0], [3.0], [z0], method=method, convergence_tolerance=TOL)
        assert res.solved, res.message
        np.testing.assert_allclose(res.z, [0.0], rtol=0, atol=1e-8)


@pytest.mark.parametrize("method", ["newton", "scholtes", "fb", "auto"])
def test_every_solved_answer_is_a_solution_of_the_original_F(method: str) -> None:
    """From starts on both sides of the switch the answer is 0 or 3, and honest either way."""
    for z0 in np.linspace(0.0, 3.0, 7):
        res = mcpkit.solve_mcp(CONTROL, None, [0.0], [3.0], [z0], method=method, convergence_tolerance=TOL)
        nat = _natural(CONTROL, float(res.z[0]), 0.0, 3.0)
        assert res.solved == (nat <= TOL), (z0, res.message)
        if res.solved:
            assert min(abs(res.z[0]), abs(res.z[0] - 3.0)) <= 1e-8


@pytest.mark.parametrize("method", ["auto", "newton", "scholtes", "fb"])
def test_a_jump_without_solution_is_never_solved(method: str) -> None:
    """IPOPT's subproblems on the jump run to their iteration limit (3000 each by default: about a
    minute for the homotopies), so the limit here is 100."""
    res = mcpkit.solve_mcp(
        NO_SOLUTION, None, [0.0], [np.inf], [2.0], method=method, convergence_tolerance=TOL,
        major_iteration_limit=100,
    )  # fmt: skip
    assert not res.solved
    assert res.natural_residual == pytest.approx(
        _natural(NO_SOLUTION, float(res.z[0]), 0.0, np.inf), abs=1e-12
    )
    assert res.natural_residual >= 0.5  # the jump's gap: |F| >= 1 near z = 1, z >= 1 elsewhere


def test_an_undeclarable_function_runs_on_newton_and_other_methods_say_so() -> None:
    z = ca.SX.sym("z", 2)
    F = ca.Function("F", [z], [ca.vertcat(ca.fmod(z[0], 10) - 1, ca.erf(z[1]) - 0.5)])
    res = mcpkit.solve_mcp(F, None, [0.0, 0.0], [np.inf, np.inf], [2.0, 2.0], convergence_tolerance=TOL)
    assert res.solved and "cannot become a declaration" in res.message
    np.testing.assert_allclose(res.z, [1.0, 0.4769362762044699], rtol=0, atol=1e-8)
    with pytest.raises(MCPInputError, match="method='newton' solves it on the CasADi function itself"):
        mcpkit.solve_mcp(F, None, [0.0, 0.0], [np.inf, np.inf], [2.0, 2.0], method="scholtes")


def test_an_mcp_file_with_if_else_is_solved(tmp_path: object) -> None:
    from pathlib import Path

    from mcpkit.formats.mcp_file import load_any_mcp, save_mcp_file

    path = save_mcp_file(Path(str(tmp_path)) / "c.json", CONTROL, 0.0, 3.0, z0=[0.5])
    mcp, _ = load_any_mcp(path)
    res = mcpkit.solve(mcp, method="newton", tol=TOL)
    assert res.solved
    np.testing.assert_allclose(res.z, [0.0], rtol=0, atol=1e-8)
