"""Pyomo conventions of ``SolverFactory("mcpkit")`` and progress/options of ``mcpkit.solve`` (issue 30).

``tee=True`` streams one line per step as it is taken, ``timelimit`` bounds the whole call (an
overrun ends as ``maxTimeLimit`` with the point loaded, as ``mcpkit.solve`` says ``time_limit``),
``print(results)`` counts constraints and complementarities and uses the model's names;
``progress=`` reaches the MCP and the MPCC routes; ``solve_mcp(output=True)`` prints a header.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

import mcpkit
from mcpkit.errors import UnknownOptionError
from mcpkit.solving.result import Termination

pyo = pytest.importorskip("pyomo.environ")
from pyomo.mpec import Complementarity, complements  # noqa: E402
from pyomo.opt import TerminationCondition  # noqa: E402

pytestmark = pytest.mark.solver


def _small() -> object:
    m = pyo.ConcreteModel(name="tiny")
    m.x = pyo.Var([1, 2], bounds=(0, None), initialize=0.5)
    m.c1 = pyo.Constraint(expr=m.x[1] + m.x[2] >= 1)
    m.f = pyo.Objective(expr=(m.x[1] - 1) ** 2 + (m.x[2] - 1) ** 2)
    m.cc = Complementarity(expr=complements(m.x[1] >= 0, m.x[2] >= 0))
    return m


def _coupled(n: int) -> object:
    """n pairs 0 <= x_i _|_ y_i + 0.01 sum_j x_j - 1 >= 0: every pair sees every x (a dense
    Jacobian), so the Pyomo import alone takes a noticeable share of a 0.3 s limit."""
    m = pyo.ConcreteModel(name=f"coupled{n}")
    m.I = pyo.RangeSet(0, n - 1)
    m.x = pyo.Var(m.I, bounds=(0, None), initialize=1.0)
    m.y = pyo.Var(m.I, bounds=(0, None), initialize=1.0)
    total = sum(m.x[j] for j in m.I)
    m.cc = Complementarity(m.I, rule=lambda m, i: complements(m.x[i] >= 0, m.y[i] + 0.01 * total - 1 >= 0))
    m.obj = pyo.Objective(expr=sum((m.x[i] - 0.5) ** 2 + (m.y[i] - 0.2) ** 2 for i in m.I))
    return m


def test_tee_streams_one_line_per_step_between_header_and_verdict(capfd: pytest.CaptureFixture[str]) -> None:
    res = pyo.SolverFactory("mcpkit").solve(_small(), tee=True)
    out = capfd.readouterr().out.splitlines()
    assert res.solver.termination_condition is TerminationCondition.optimal
    assert out[0].startswith("mcpkit: tiny as an MPCC: 2 variables, 2 constraints (1 complementarity)")
    steps = [k for k, line in enumerate(out) if " residual " in line and "parameter" in line]
    verdict = next(k for k, line in enumerate(out) if line.startswith("mcpkit (mpcc"))
    assert len(steps) >= 2 and 0 < steps[0] and steps[-1] < verdict  # streamed before the verdict
    assert out[-1].startswith("mcpkit: Pyomo termination optimal")


def test_print_results_names_and_counts(capsys: pytest.CaptureFixture[str]) -> None:
    m = _small()
    res = pyo.SolverFactory("mcpkit").solve(m, load_solutions=False)
    print(res)
    text = capsys.readouterr().out
    assert "Name: tiny" in text
    assert "Number of constraints: 2" in text and "Number of complementarities: 1" in text
    assert "Status: optimal" in text  # the solution's status
    # the model's names (Pyomo leaves out the variable at zero: one of the two is listed)
    assert ("x[1]:" in text or "x[2]:" in text) and "x0:" not in text and "x1:" not in text
    assert "f:\n      Value: 1" in text  # the objective at the returned point, under its name
    assert "Upper bound: 1" in text
    m.solutions.load_from(res)  # the solution loads by those names
    assert math.isclose(pyo.value(m.f), 1.0, abs_tol=1e-5)
    assert sorted(round(pyo.value(v), 6) for v in m.x.values()) == [0.0, 1.0]


def test_timelimit_on_a_200_pair_mpcc_says_max_time_limit() -> None:
    """The documented contract. Reading and lowering the model count against the limit but cannot
    be interrupted (about 0.8 s of CPU here, more on a loaded machine, so the call's wall time is
    not asserted): the call says maxTimeLimit with the best point loaded and the limit in its
    message, however long the reading took. mcpkit.solve says time_limit on the same model."""
    m = _coupled(200)
    solver = pyo.SolverFactory("mcpkit")
    res = solver.solve(m, timelimit=0.3)
    assert res.solver.termination_condition is TerminationCondition.maxTimeLimit
    assert "time limit" in solver.last_result.message, solver.last_result.message
    x = np.array([pyo.value(m.x[i]) for i in m.I])
    assert np.isfinite(x).all()  # the best point is loaded
    direct = mcpkit.solve(_coupled(200), time_limit=0.3)
    assert direct.termination is Termination.TIME_LIMIT  # the two front ends agree


def test_timelimit_bounds_the_solve_of_a_model_already_read() -> None:
    """The caller's hard limit where nothing uninterruptible is left: a second call on the same
    model keeps the route (nothing is read again) and ends within 1.1 limit + 2 s. The NLP's
    symbolic derivatives (seconds for this dense MPCC) are not started when their lower estimate
    does not fit (``estimated_build_seconds``)."""
    m = _coupled(200)
    solver = pyo.SolverFactory("mcpkit")
    solver.solve(m, timelimit=0.3)  # reads the model (its time is not asserted)
    t = time.perf_counter()
    res = solver.solve(m, timelimit=0.3)
    wall = time.perf_counter() - t
    assert res.solver.termination_condition is TerminationCondition.maxTimeLimit
    assert wall <= 1.1 * 0.3 + 2.0, wall


def test_progress_reaches_mcp_and_mpcc_routes(capsys: pytest.CaptureFixture[str]) -> None:
    import casadi as ca

    mcp = mcpkit.MCP.lcp(np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([-1.0, -1.0]))
    x = ca.SX.sym("x", 2)
    mpcc = mcpkit.MPCC.from_casadi(x, G=x[0], H=x[1], f=(x[0] - 2) ** 2 + (x[1] - 1) ** 2)
    for problem, label in ((mcp, "lcp"), (mpcc, "mpcc")):
        res = mcpkit.solve(problem, progress=True)  # stderr is captured, not a terminal: no bar
        assert res.solved and label not in capsys.readouterr().err
        res = mcpkit.solve(problem, progress="always")
        assert res.solved and f"{label}:" in capsys.readouterr().err
        heard: list[object] = []
        assert mcpkit.solve(problem, progress=heard.append).solved and heard
    a = np.array([-1.0, 0.5, 2.0])  # solve_mcp with Python callables (its own Newton call)
    res = mcpkit.solve_mcp(lambda z: z - a, lambda z: np.eye(3), np.zeros(3), np.ones(3), progress="always")
    assert res.solved and "solve_mcp:" in capsys.readouterr().err


def test_unknown_option_of_solve_suggests_the_name() -> None:
    mcp = mcpkit.MCP.lcp(np.eye(2), -np.ones(2))
    with pytest.raises(UnknownOptionError, match="Did you mean 'tol'"):
        mcpkit.solve(mcp, tolerance=1e-8)
    with pytest.raises(UnknownOptionError, match="Did you mean 'convergence_tolerance'"):
        mcpkit.solve_mcp(np.eye(2), -np.ones(2), 0.0, np.inf, np.zeros(2), tolerance=1e-8)


def test_solve_mcp_output_prints_a_header_before_the_iterations(capfd: pytest.CaptureFixture[str]) -> None:
    a = np.array([-1.0, 0.5, 2.0])
    res = mcpkit.solve_mcp(lambda z: z - a, lambda z: np.eye(3), np.zeros(3), np.ones(3), output=True)
    out = capfd.readouterr().out.splitlines()
    assert res.solved
    assert out[0].startswith("solve_mcp: box MCP") and "n = 3" in out[0] and "newton" in out[0]
    assert "convergence_tolerance 1e-08" in out[0]
    assert len(out) >= 2 and all(" residual " in line for line in out[1:])
