"""One MPCC solver for every backend, on a sample of MPECLib problems with published optima."""

from __future__ import annotations

import json

import casadi as ca
import numpy as np
import pytest

import mcpkit
from mcpkit.command.cli import main
from mcpkit.errors import MCPInputError, UnknownOptionError
from mcpkit.mpcc import MPCC, MPCCSolver, ToStandardMPCC, load_mpcc_json, solve_mpcc
from mcpkit.solving.result import SUMMARY_KEYS, MPCCResult
from tests.conftest import SHARED_DATA

pytestmark = pytest.mark.solver

MPECLIB = SHARED_DATA / "mpeclib"
needs_data = pytest.mark.skipif(not MPECLIB.is_dir(), reason="shared/data/mpeclib not present")

# objective values published in the MacMPEC collection for these problems
KNOWN = {"bard1": 17.0, "desilva": -1.0, "qvi": 0.0}
ATOL_F = 1e-4


def _toy() -> MPCC:
    r"""min (x1 - 2)^2 + (x2 - 1)^2  s.t.  x1 + x2 = 1,  0 <= x1 ⟂ x2 >= 0, from x = (5, 5).

    Branch x2 = 0: x1 = 1, f = 2; branch x1 = 0: x2 = 1, f = 4.
    """
    x = ca.SX.sym("x", 2)
    return MPCC.from_casadi(
        x, x[0], x[1], f=(x[0] - 2) ** 2 + (x[1] - 1) ** 2, g=x[0] + x[1], lbg=1.0, ubg=1.0, x0=[5.0, 5.0]
    )


@needs_data
@pytest.mark.parametrize("name", sorted(KNOWN))
def test_sample_problems_reach_published_optimum(name: str) -> None:
    res = mcpkit.solve(load_mpcc_json(MPECLIB / f"{name}.nl.json"), stationarity=True)
    assert isinstance(res, MPCCResult) and res.solved, res.message
    assert res.comp_residual <= 1e-6 and res.constraint_violation <= 1e-6
    assert res.tol == 1e-6  # the MPCC default of DEFAULT_TOL
    assert res.f == pytest.approx(KNOWN[name], abs=ATOL_F)
    # at these published optima the multipliers of the biactive pairs are nonnegative
    assert res.stationarity == "S"


@needs_data
def test_cli_json_summary_for_mpcc_file(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["solve", str(MPECLIB / "bard1.nl.json"), "--json", "--time-limit", "60"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["solved"] and out["kind"] == "mpcc"
    assert list(out)[: len(SUMMARY_KEYS)] == list(SUMMARY_KEYS)
    assert out["stationarity"] == "S"


@needs_data
def test_cli_backend_and_method_for_mpcc_file(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["solve", str(MPECLIB / "bard1.nl.json"), "--json", "--backend", "pyomo", "--method", "elastic"]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["solved"]
    assert out["backend"] == "pyomo" and out["method"] == "elastic"
    assert main(["solve", str(MPECLIB / "bard1.nl.json"), "--backend", "gamspy"]) == 2
    assert "does not take MPCCs" in capsys.readouterr().err
    assert main(["solve", str(MPECLIB / "bard1.nl.json"), "--backend", "gurobi"]) == 2
    assert "registered" in capsys.readouterr().err


def test_backend_is_honoured_or_refused() -> None:
    """Regression: ``mcpkit.solve(mpcc, backend="pyomo")`` ran CasADi and said so; "gurobi" passed."""
    mpcc = _toy()
    res = mcpkit.solve(mpcc, backend="pyomo", tol=1e-8)
    assert res.backend == "pyomo" and res.solved, res.message
    np.testing.assert_allclose(res.x, [1.0, 0.0], atol=1e-6)
    assert mcpkit.solve(mpcc, backend="casadi", tol=1e-8).backend == "casadi"
    with pytest.raises(UnknownOptionError, match="registered"):
        mcpkit.solve(mpcc, backend="gurobi")
    with pytest.raises(UnknownOptionError, match="registered"):
        mcpkit.solve(mpcc, method="newtonn")
    with pytest.raises(MCPInputError, match="does not take MPCCs"):
        mcpkit.solve(mpcc, backend="gamspy")
    with pytest.raises(MCPInputError, match="does not solve MPCCs"):
        mcpkit.solve(mpcc, method="path")
    with pytest.raises(MCPInputError, match="ipopt="):
        MPCCSolver(mpcc, backend="casadi", ipopt="mcpkit_ipopt")


@needs_data
def test_solve_takes_a_loaded_file() -> None:
    """Regression: ``mcpkit.solve(load_mpcc_json(f))`` raised."""
    res = mcpkit.solve(load_mpcc_json(MPECLIB / "bard1.nl.json"))
    assert res.solved and res.f == pytest.approx(KNOWN["bard1"], abs=ATOL_F)


@needs_data
def test_standard_lowering_runs_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: ``ToStandardMPCC`` ran twice per solve (solver and stationarity check)."""
    calls = []
    apply = ToStandardMPCC.apply

    def counting(self: ToStandardMPCC, problem: MPCC) -> object:
        calls.append(problem.name)
        return apply(self, problem)

    monkeypatch.setattr(ToStandardMPCC, "apply", counting)
    prob = load_mpcc_json(MPECLIB / "bartruss3_0.nl.json")
    assert not prob.is_standard()
    res = MPCCSolver(prob, stationarity=True).solve()
    assert res.solved and res.stationarity not in (None, "not checked")
    assert calls == [prob.name]


@needs_data
@pytest.mark.parametrize("fallbacks", [(), ("scholtes_eq", "fb", "penalty")])
def test_recovery_retries_another_reformulation(fallbacks: tuple[str, ...]) -> None:
    """nappi_b with the Scholtes homotopy cut to one subproblem and no polish: it fails alone;
    with fallbacks the next reformulation solves it, and its steps are marked in the trace.
    (Until 2026-11-26 nappi_b failed on its own: its points, clipped into the bounds of x after
    IPOPT's bound relaxation, missed the tolerance; the solver's ``PointAssessor`` now judges them as
    given too, and the Scholtes homotopy solves nappi_b alone.)"""
    from dataclasses import replace

    solver = MPCCSolver(load_mpcc_json(MPECLIB / "nappi_b.nl.json"), "scholtes", fallback_methods=fallbacks)
    primary = solver.homotopy.primary
    primary.options = replace(primary.options, max_outer=1, polish=False)
    res = solver.solve()
    if not fallbacks:
        assert not res.solved and res.termination.value != "converged"
    else:
        assert res.solved, res.message
        assert any(s.phase.startswith("retry:") for s in res.trace)


@needs_data
@pytest.mark.parametrize("ipopt", ["casadi", "mcpkit_ipopt"])
@pytest.mark.parametrize("name", sorted(KNOWN))
def test_pyomo_backend_reaches_published_optimum(name: str, ipopt: str) -> None:
    """The relaxations on Pyomo with CasADi's nlpsol and with a Pyomo solver per subproblem
    (``mcpkit_ipopt``, the executable route's code)."""
    res = solve_mpcc(load_mpcc_json(MPECLIB / f"{name}.nl.json"), backend="pyomo", ipopt=ipopt)
    assert res.solved, res.message
    assert res.backend == "pyomo" and res.extra["ipopt"]
    assert res.comp_residual <= 1e-6 and res.constraint_violation <= 1e-6
    assert res.f == pytest.approx(KNOWN[name], abs=ATOL_F)


@needs_data
def test_pyomo_backend_solves_general_bounds_pairs() -> None:
    """bartruss3_0 has pairs with finite upper bounds on H (the box-MCP reading); both backends
    solve it, judged on the original pairs, and the points agree in objective."""
    prob = load_mpcc_json(MPECLIB / "bartruss3_0.nl.json")
    assert not prob.is_standard()
    cas = solve_mpcc(prob)
    pyo_nl = solve_mpcc(prob, backend="pyomo")
    pyo_side = solve_mpcc(prob, backend="pyomo", ipopt="mcpkit_ipopt")
    for r in (cas, pyo_nl, pyo_side):
        assert r.solved, r.message
    assert pyo_nl.f == pytest.approx(cas.f, abs=1e-5)
    assert pyo_side.f == pytest.approx(cas.f, abs=1e-5)


@needs_data
@pytest.mark.parametrize("backend", ["casadi", "pyomo"])
@pytest.mark.parametrize("name", sorted(KNOWN))
def test_elastic_mode_reaches_published_optimum(name: str, backend: str) -> None:
    extra = {"ipopt": "mcpkit_ipopt"} if backend == "pyomo" else {}
    res = solve_mpcc(load_mpcc_json(MPECLIB / f"{name}.nl.json"), "elastic", backend, **extra)
    assert res.solved, res.message
    assert res.method == "elastic" and res.backend == backend
    assert res.f == pytest.approx(KNOWN[name], abs=ATOL_F)


@pytest.mark.parametrize("backend", ["casadi", "pyomo"])
def test_elastic_mode_starts_from_an_infeasible_guess(backend: str) -> None:
    """The start violates the equality by 9; every elastic subproblem is feasible and the
    homotopy ends on the better branch (see :func:`_toy`)."""
    res = solve_mpcc(_toy(), "elastic", backend, tol=1e-8, fallback_methods=())
    assert res.solved, res.message
    np.testing.assert_allclose(res.x, [1.0, 0.0], atol=1e-6)
    assert res.f == pytest.approx(2.0, abs=1e-6)
    assert res.trace and all(step.parameter > 0 for step in res.trace if step.phase == "relax")


@needs_data
def test_time_limit_stops_inside_a_subproblem() -> None:
    """tollmpec's first Scholtes subproblem alone needs about 45 s; with a 5 s limit the deadline
    callback stops IPOPT inside it. Checked by status, not by timing: the only subproblem ends with
    IPOPT's ``User_Requested_Stop`` (the whole limit goes to the requested method:
    ``primary_iterations=None, first_step_iterations=None``). 5 s, not 1 s: under load, building
    the NLP could use up 1 s before any subproblem started (an empty trace; seen on a loaded
    2-core machine)."""
    prob = load_mpcc_json(MPECLIB / "tollmpec.nl.json")
    res = solve_mpcc(prob, time_limit=5.0, primary_iterations=None, first_step_iterations=None)
    assert res.termination.value == "time_limit"
    assert not res.solved
    assert [s.inner_status for s in res.trace] == ["User_Requested_Stop"]


def test_an_exhausted_time_limit_skips_the_classification() -> None:
    """The limit bounds the whole call: an unsolved point found at the limit is not classified
    afterwards (on MPECLib's frictionalblock_6 that classification took 7 s past a 60 s limit)."""
    x = ca.SX.sym("x", 2)
    m = MPCC.from_casadi(x, x[0], x[1], f=(x[0] - 1) ** 2 + (x[1] - 1) ** 2, lbx=0.0, ubx=3.0, x0=[2.0, 2.0])
    res = MPCCSolver(m, time_limit=1e-9).solve()
    assert not res.solved
    assert res.stationarity == "not checked"
    assert "time limit" in res.extra["refinement"].reason
    assert res.wall_time_s < 5.0
