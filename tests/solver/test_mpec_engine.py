"""The MPCC engine on a sample of MPECLib problems with known optimal values (MacMPEC list)."""

from __future__ import annotations

import json

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
