"""Every registered reformulation on every backend and inner solver, against independent answers.

A reformulation registered in :mod:`mcpkit.solving.registry` is picked up here automatically: it must
solve a box MCP (checked against enumeration of its 3^n active patterns) and a small MPCC (checked
against its two branches) through the CasADi backend, the Pyomo backend with CasADi's IPOPT, and
the Pyomo backend with a Pyomo solver per subproblem (``mcpkit_ipopt``, the code path of an
``ipopt`` executable).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import casadi as ca
import numpy as np
import pytest

import mcpkit
from mcpkit.command.cli import main
from mcpkit.formats.io import save_lcp_json
from mcpkit.solving.options import REFORMULATIONS
from tests.conftest import enumerate_box_lcp

pytestmark = pytest.mark.solver

ROUTES = [("casadi", "auto"), ("pyomo", "casadi"), ("pyomo", "mcpkit_ipopt")]
ATOL = 1e-7


@pytest.mark.parametrize(("backend", "ipopt"), ROUTES)
@pytest.mark.parametrize("method", REFORMULATIONS)
def test_box_mcp_matches_enumeration(method: str, backend: str, ipopt: str) -> None:
    M = np.array([[4.0, 1.0, 0.5], [-1.0, 3.0, 0.2], [0.3, 0.0, 2.0]])
    q = np.array([-1.0, 8.0, -20.0])
    lb, ub = np.array([1.0, -math.inf, 0.0]), np.array([3.0, 2.0, math.inf])
    exact = enumerate_box_lcp(M, q, lb, ub)
    assert len(exact) == 1  # a P-matrix: one solution
    extra = {"ipopt": ipopt} if backend == "pyomo" else {}
    res = mcpkit.solve(mcpkit.MCP.lcp(M, q, lb=lb, ub=ub), backend=backend, method=method, tol=1e-9, **extra)
    assert res.solved, res.message
    assert (res.method, res.backend) == (method, backend)
    np.testing.assert_allclose(res.z, exact[0], atol=ATOL, rtol=0)
    assert res.outer_iterations == len(res.trace) >= 1
    assert res.iterations == sum(s.inner_iterations for s in res.trace)


@pytest.mark.parametrize(("backend", "ipopt"), ROUTES)
@pytest.mark.parametrize("method", REFORMULATIONS)
def test_mpcc_reaches_the_better_branch(method: str, backend: str, ipopt: str) -> None:
    r"""min (x1 - 2)^2 + (x2 - 1)^2 s.t. x1 + x2 >= 1, 0 <= x1 ⟂ x2 >= 0, from (0.5, 0.5).

    Branch x2 = 0: x1 = 2, f = 1; branch x1 = 0: x2 = 1, f = 4 (both local minimisers).
    """
    x = ca.SX.sym("x", 2)
    mpcc = mcpkit.MPCC.from_casadi(
        x, x[0], x[1], f=(x[0] - 2) ** 2 + (x[1] - 1) ** 2, g=x[0] + x[1], lbg=1.0, ubg=np.inf,
        x0=[0.5, 0.5],
    )  # fmt: skip
    extra = {"ipopt": ipopt} if backend == "pyomo" else {}
    res = mcpkit.solve(mpcc, backend=backend, method=method, tol=1e-8, **extra)
    assert res.solved, res.message
    assert (res.method, res.backend) == (method, backend)
    branches = {(2.0, 0.0): 1.0, (0.0, 1.0): 4.0}
    near = min(branches, key=lambda b: float(np.abs(res.x - b).max()))
    np.testing.assert_allclose(res.x, near, atol=1e-6, rtol=0)
    assert res.f == pytest.approx(branches[near], abs=1e-6)


def test_solve_exit_code_is_the_results_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An LCP without a solution (0 <= z ⟂ -1 >= 0) runs but is not solved: exit 1; solvable: 0."""
    bad = save_lcp_json(tmp_path / "bad.json", [[0.0]], [-1.0])
    good = save_lcp_json(tmp_path / "good.json", [[2.0]], [-1.0])
    assert main(["solve", str(good), "--backend", "casadi", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["solved"] is True
    assert main(["solve", str(bad), "--backend", "casadi", "--method", "scholtes", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["solved"] is False
