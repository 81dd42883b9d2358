"""The MPCC engine on a sample of MPECLib problems with known optimal values (MacMPEC list)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mcpkit.cli import main
from mcpkit.mpec.engine import solve_mpcc_file
from mcpkit.result import SUMMARY_KEYS
from tests.conftest import SHARED_DATA

pytestmark = pytest.mark.solver

MPECLIB = SHARED_DATA / "mpeclib"
needs_data = pytest.mark.skipif(not MPECLIB.is_dir(), reason="shared/data/mpeclib not present")

# objective values published in the MacMPEC collection for these problems
KNOWN = {"bard1": 17.0, "desilva": -1.0, "qvi": 0.0}


@needs_data
@pytest.mark.parametrize("name", sorted(KNOWN))
def test_sample_problems_reach_published_optimum(name: str) -> None:
    s = solve_mpcc_file(MPECLIB / f"{name}.nl.json")
    assert s["solved"], s
    assert s["comp_residual"] <= 1e-6 and s["constraint_violation"] <= 1e-6
    assert s["objective"] == pytest.approx(KNOWN[name], abs=1e-4)
    # at these published optima the multipliers of the biactive pairs are nonnegative
    assert s["stationarity"] == "S"


@needs_data
def test_cli_json_summary_for_mpcc_file(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["solve", str(MPECLIB / "bard1.nl.json"), "--json", "--time-limit", "60"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    for key in SUMMARY_KEYS:
        assert key in out


@needs_data
def test_cli_backend_and_method_for_mpcc_file(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["solve", str(MPECLIB / "bard1.nl.json"), "--json", "--backend", "pyomo", "--method", "elastic"]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["solved"]
    assert out["backend"] == "pyomo" and out["method"] == "elastic"
    assert main(["solve", str(MPECLIB / "bard1.nl.json"), "--backend", "gamspy"]) == 2
    assert "casadi' or 'pyomo'" in capsys.readouterr().err


@needs_data
def test_recovery_retries_another_reformulation() -> None:
    """nappi_b: the Scholtes inequality homotopy stalls (residual ~1.6e-6 > 1e-6); the recovery's
    Scholtes equality form solves it, and its steps are marked in the trace."""
    from mcpkit.mpec.engine import solve_general
    from mcpkit.mpec.loader import load_mpcc_json

    prob = load_mpcc_json(MPECLIB / "nappi_b.nl.json")
    without = solve_general(prob, stationarity=False, fallback_methods=())
    assert not without.solved and without.termination.value != "converged"
    with_recovery = solve_general(prob, stationarity=False)
    assert with_recovery.solved
    assert any(s.phase.startswith("retry:") for s in with_recovery.trace)


@needs_data
@pytest.mark.parametrize("ipopt", ["casadi", "mcpkit_ipopt"])
@pytest.mark.parametrize("name", sorted(KNOWN))
def test_pyomo_backend_reaches_published_optimum(name: str, ipopt: str) -> None:
    """The relaxations on Pyomo: via the NL import (``casadi``) and stated in Pyomo with a
    Pyomo solver per subproblem (``mcpkit_ipopt``, the executable route's code)."""
    s = solve_mpcc_file(MPECLIB / f"{name}.nl.json", backend="pyomo", ipopt=ipopt)
    assert s["solved"], s
    assert s["backend"] == "pyomo"
    assert s["comp_residual"] <= 1e-6 and s["constraint_violation"] <= 1e-6
    assert s["objective"] == pytest.approx(KNOWN[name], abs=1e-4)


@needs_data
def test_pyomo_backend_solves_general_bounds_pairs() -> None:
    """bartruss3_0 has pairs with finite upper bounds on H (the box-MCP reading); both backends
    solve it, judged on the original pairs, and the points agree in objective."""
    from mcpkit.mpec.engine import solve_general
    from mcpkit.mpec.loader import load_mpcc_json

    prob = load_mpcc_json(MPECLIB / "bartruss3_0.nl.json")
    assert not prob.is_standard().all()
    cas = solve_general(prob, stationarity=False)
    pyo_nl = solve_general(prob, stationarity=False, backend="pyomo")
    pyo_side = solve_general(prob, stationarity=False, backend="pyomo", ipopt="mcpkit_ipopt")
    for r in (cas, pyo_nl, pyo_side):
        assert r.solved, r.message
    assert pyo_nl.objective == pytest.approx(cas.objective, abs=1e-5)
    assert pyo_side.objective == pytest.approx(cas.objective, abs=1e-5)


@needs_data
@pytest.mark.parametrize("backend", ["casadi", "pyomo"])
@pytest.mark.parametrize("name", sorted(KNOWN))
def test_elastic_mode_reaches_published_optimum(name: str, backend: str) -> None:
    """The elastic mode on CasADi, and stated in Pyomo (elastic rows and variables in the model)."""
    extra = {"ipopt": "mcpkit_ipopt"} if backend == "pyomo" else {}
    s = solve_mpcc_file(MPECLIB / f"{name}.nl.json", method="elastic", backend=backend, **extra)
    assert s["solved"], s
    assert s["method"] == "elastic" and s["backend"] == backend
    assert s["objective"] == pytest.approx(KNOWN[name], abs=1e-4)


def test_elastic_mode_starts_from_an_infeasible_guess() -> None:
    r"""min (x1 - 2)^2 + (x2 - 1)^2  s.t.  x1 + x2 = 1,  0 <= x1 ⟂ x2 >= 0, from x = (5, 5).

    Branch x2 = 0: x1 = 1, f = 2; branch x1 = 0: x2 = 1, f = 4. The start violates the equality
    by 9; every elastic subproblem is feasible and the homotopy ends on the better branch.
    """
    import casadi as ca

    from mcpkit.mpcc import MPCC
    from mcpkit.mpcc_solve import solve_mpcc

    x = ca.SX.sym("x", 2)
    mpcc = MPCC.from_casadi(
        x, x[0], x[1], f=(x[0] - 2) ** 2 + (x[1] - 1) ** 2, g=x[0] + x[1], lbg=1.0, ubg=1.0, x0=[5.0, 5.0]
    )
    res = solve_mpcc(mpcc, method="elastic", tol=1e-8, fallback_methods=())
    assert res.solved, res.message
    np.testing.assert_allclose(res.z, [1.0, 0.0], atol=1e-6)
    assert res.objective == pytest.approx(2.0, abs=1e-6)
    assert res.trace and all(step.parameter > 0 for step in res.trace if step.phase == "relax")
    # the same elastic homotopy stated in Pyomo
    from mcpkit.mpec.pyomo_solve import PyomoMPCCSolver

    res_p = PyomoMPCCSolver(mpcc, "elastic", ipopt="mcpkit_ipopt", tol=1e-8).solve()
    assert res_p.solved, res_p.message
    np.testing.assert_allclose(res_p.z, [1.0, 0.0], atol=1e-6)


@needs_data
def test_time_limit_stops_inside_a_subproblem() -> None:
    """tollmpec needs about a minute; with a 1 s limit the deadline callback stops IPOPT inside
    its first subproblem (before, each IPOPT call could run for the whole limit again). Checked
    by status, not by timing: the only subproblem ends with IPOPT's ``User_Requested_Stop``."""
    from mcpkit.mpec.engine import solve_general
    from mcpkit.mpec.loader import load_mpcc_json

    res = solve_general(load_mpcc_json(MPECLIB / "tollmpec.nl.json"), stationarity=False, time_limit=1.0)
    assert res.termination.value == "time_limit"
    assert not res.solved
    assert [s.inner_status for s in res.trace] == ["User_Requested_Stop"]
