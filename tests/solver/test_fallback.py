"""``method="auto"`` without PATH: newton, then lemke (LCPs), then the Scholtes homotopy.

Real problems where the first engine fails show the chain at work; every attempt is reported.
"""

from __future__ import annotations

import numpy as np
import pytest

import mcpkit
from mcpkit import MCP
from mcpkit.solving.result import Termination
from tests.conftest import enumerate_box_lcp
from tests.solver.test_newton import MCPLIB, mcplib_mcp

pytestmark = pytest.mark.solver


def methods(res: mcpkit.MCPResult) -> list[tuple[str, str]]:
    return [(a["method"], a.get("termination", "skipped")) for a in res.extra["attempts"]]


@pytest.mark.parametrize("backend", ["casadi", "pyomo"])
def test_lemke_takes_over_where_newton_stalls(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 2x2 LCP (M not a P-matrix) whose Fischer-Burmeister merit function has a stationary
    point that is not a solution: Newton stalls there; Lemke's method then solves it."""
    from mcpkit.solving import availability

    monkeypatch.setattr(availability, "pathampl_executable", lambda: None)
    M, q = np.array([[-1.0, 2.0], [-1.0, 2.0]]), np.array([-1.0, -2.0])
    mcp = MCP.lcp(M, q)
    res = mcpkit.solve(mcp, backend=backend, tol=1e-9)
    assert res.solved and res.termination is Termination.CONVERGED, res.message
    assert methods(res) == [("newton", "stalled"), ("lemke", "converged")]
    assert res.method == "lemke" and res.backend == backend
    phases = {s.phase for s in res.trace}
    assert "pivot" in phases and phases & {"newton", "crash", "gradient"}
    assert res.iterations == sum(a["iterations"] for a in res.extra["attempts"])
    exact = enumerate_box_lcp(M, q, np.zeros(2), np.full(2, np.inf))
    assert min(np.abs(res.z - e).max() for e in exact) <= 1e-9


def test_a_proof_of_no_solution_ends_the_chain() -> None:
    """F_1 = -z_1 - 1 < 0 on z_1 >= 0: Newton stalls, Lemke proves infeasibility, IPOPT is not tried."""
    res = mcpkit.solve(MCP.lcp([[-1.0, 0.0], [0.0, 1.0]], [-1.0, 1.0]), backend="casadi")
    assert not res.solved and res.termination is Termination.LOCALLY_INFEASIBLE
    assert methods(res) == [("newton", "stalled"), ("lemke", "locally_infeasible")]
    assert "no solution" in res.extra["infeasibility_certificate"]["statement"]


@pytest.mark.skipif(not MCPLIB.is_dir(), reason="MCPLIB ports not present")
def test_nonlinear_failure_runs_every_method_and_says_so() -> None:
    """MCPLIB ``billups`` from z = 0 (a merit trap): Newton stalls, Lemke does not apply (F is
    nonlinear: skipped with the reason), the Scholtes homotopy runs and fails too; not solved."""
    mcp, _ = mcplib_mcp(MCPLIB / "billups.json")
    res = mcpkit.solve(mcp, backend="casadi", z0=[0.0])
    assert not res.solved
    att = res.extra["attempts"]
    assert [a["method"] for a in att] == ["newton", "lemke", "scholtes"]
    assert "not affine" in att[1]["skipped"] and att[0]["termination"] == "stalled"
    assert res.natural_residual == pytest.approx(
        min(a["natural_residual"] for a in att if "skipped" not in a)
    )
    assert {"newton", "relax"} <= {s.phase for s in res.trace}


@pytest.mark.skipif(not MCPLIB.is_dir(), reason="MCPLIB ports not present")
def test_the_time_limit_bounds_the_whole_chain() -> None:
    mcp, _ = mcplib_mcp(MCPLIB / "billups.json")
    res = mcpkit.solve(mcp, backend="casadi", z0=[0.0], time_limit=1e-6)
    assert res.termination is Termination.TIME_LIMIT and not res.solved
    assert methods(res) == [("newton", "time_limit")]


def test_newton_success_builds_nothing_else() -> None:
    solver = mcpkit.Solver(MCP.lcp([[2.0, 1.0], [1.0, 2.0]], [-1.0, -1.0]), backend="casadi")
    res = solver.solve()
    assert res.solved and res.method == "newton" and methods(res) == [("newton", "converged")]
    assert list(solver.route._routes) == [0]  # lemke and IPOPT were never built
