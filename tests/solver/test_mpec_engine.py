"""The MPCC engine on a sample of MPECLib problems with known optimal values (MacMPEC list)."""

from __future__ import annotations

import json

import pytest

from mcpkit.cli import main
from mcpkit.mpec.engine import solve_mpcc_file
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
    for key in (
        "status",
        "solved",
        "objective",
        "comp_residual",
        "constraint_violation",
        "wall_time_s",
        "iterations",
        "method",
        "backend",
    ):
        assert key in out
