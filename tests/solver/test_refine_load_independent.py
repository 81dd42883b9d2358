"""The refinement's budgets count IPOPT iterations: a refinement that runs slowly (a machine that
got busy after the homotopy) reaches the same plan."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from mcpkit.mpcc import load_mpcc_json, solve_mpcc
from mcpkit.stationarity.refine import Refiner

pytestmark = pytest.mark.solver

BILEVEL1M = Path(__file__).resolve().parents[3] / "shared" / "data" / "macmpec-dev" / "bilevel1m.nl.json"


@pytest.mark.skipif(not BILEVEL1M.is_file(), reason="macmpec-dev set not present (../shared/data)")
def test_refined_point_does_not_depend_on_the_refinements_speed(monkeypatch: pytest.MonkeyPatch) -> None:
    """MacMPEC bilevel1m: with the flip search's budget in seconds (a share of the homotopy's
    time) it ended at f = 0 or f = 5 depending on the load; with budgets in iterations every
    branch NLP taking 0.2 s longer changes neither the steps nor the point."""
    prob = load_mpcc_json(BILEVEL1M)
    normal = solve_mpcc(prob, "auto", "casadi", tol=1e-6)
    original = Refiner._branch_nlp

    def slow(self: Refiner, *args: Any, **kwargs: Any) -> Any:
        time.sleep(0.2)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Refiner, "_branch_nlp", slow)
    late = solve_mpcc(prob, "auto", "casadi", tol=1e-6)
    assert normal.solved and late.solved
    a, b = normal.extra["refinement"], late.extra["refinement"]
    assert len(a.steps) >= 2  # the refinement does work here (branch NLPs and flips)
    assert [(s.lpec_method, s.f_after, s.accepted) for s in a.steps] == [
        (s.lpec_method, s.f_after, s.accepted) for s in b.steps
    ]
    assert late.f == pytest.approx(normal.f, abs=1e-12) and late.stationarity == normal.stationarity


@pytest.mark.skipif(not BILEVEL1M.is_file(), reason="macmpec-dev set not present (../shared/data)")
def test_progress_covers_the_refinement() -> None:
    """A progress listener hears the refinement's branch NLPs (phase "refine") after the
    homotopy's steps; the result's trace keeps the homotopy's steps only."""
    heard: list[Any] = []
    res = solve_mpcc(load_mpcc_json(BILEVEL1M), "auto", "casadi", tol=1e-6, progress=heard.append)
    phases = [s.phase for s in heard]
    assert "refine" in phases and phases.index("refine") > phases.index("relax")
    assert len([p for p in phases if p == "refine"]) == len(res.extra["refinement"].steps)
    assert "refine" not in {s.phase for s in res.trace}
