"""Solver-running checks of the fuzz corpus of 2026-11-28 (issue 43, part A).

Each test names its ``MANIFEST.txt`` line. Tests that read ``../shared/data/fuzz-2026-11-28`` skip
when it is absent; the behaviour is also tested on data made here, so it holds without the corpus.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mcpkit
from mcpkit import MCP, SolutionStatus
from tests.conftest import SHARED_DATA
from tests.unit.test_rounding_floor import M14, Q14, exact_residual

FUZZ = SHARED_DATA / "fuzz-2026-11-28"
ROOT = Path(__file__).resolve().parents[2]
needs_corpus = pytest.mark.skipif(
    not FUZZ.is_dir(), reason=f"{FUZZ} not present (the fuzz corpus of issue 43, see ../shared/README.md)"
)
pytestmark = pytest.mark.solver


def cli(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """``mcpkit ARGS`` of this checkout, captured."""
    return subprocess.run(
        [sys.executable, "-m", "mcpkit.frontends.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
    )


# ------------------------------------------------ lcp_free_q1e14_rounding.json: the rounding floor
@pytest.mark.parametrize("method", ["auto", "newton", "fb", "scholtes"])
def test_q1e14_lcp_is_not_called_solved(method: str) -> None:
    mcp = MCP.lcp(M14, Q14, lb=-np.inf, ub=np.inf)
    res = mcpkit.solve(mcp, method=method, tol=1e-8)
    exact = exact_residual(M14, Q14, res.z)
    assert exact > 1e-8  # the premise: no double z is a solution to 1e-8 here
    assert not res.solved
    if res.solution_status is SolutionStatus.UNCERTIFIED:
        assert "cannot certify at this tolerance" in res.message
        floor = float(res.message.split("residual up to ")[1].split(" ")[0])
        assert floor >= exact


def test_ordinary_lcp_still_solves() -> None:
    M = np.array([[2.0, 1.0], [1.0, 2.0]])
    res = mcpkit.solve(MCP.lcp(M, [-1.0, -1.0]), tol=1e-10)
    assert res.solved
    np.testing.assert_allclose(res.z, [1 / 3, 1 / 3], atol=1e-9, rtol=0)


@needs_corpus
@pytest.mark.parametrize("method", ["auto", "fb"])
def test_corpus_q1e14_exits_1_with_the_floor(method: str) -> None:
    run = cli("solve", str(FUZZ / "lcp_free_q1e14_rounding.json"), "--json", "--method", method)
    assert run.returncode == 1, run.stderr[-2000:]
    out = json.loads(run.stdout)
    assert out["solved"] is False
    assert out["solution_status"] == "uncertified"
    assert "rounding floor" in out["message"]
