"""The time share of :class:`~mcpkit.homotopy.recovery.RecoveringHomotopy` (no solver runs).

With ``time_limit = T`` and fallbacks, the requested homotopy gets ``share * T``; when it stops
for lack of that time, the fallbacks run in the rest, each but the last with ``share`` of what
is left, and each but the last may spend ``FIRST_STEP_SHARE`` of its budget in its first
subproblem. The homotopies are replaced by recorders, so only the budgeting is tested.
"""

from __future__ import annotations

from typing import Any

import casadi as ca
import numpy as np
import pytest

from mcpkit.errors import MCPInputError
from mcpkit.homotopy.loop import Assessment, HomotopyOutcome
from mcpkit.homotopy.recovery import FIRST_STEP_SHARE, RecoveringHomotopy
from mcpkit.mpcc import MPCC
from mcpkit.orchestration.planner import recovery_plan
from mcpkit.solving.options import SolveOptions
from mcpkit.solving.result import Termination


def _toy() -> MPCC:
    x = ca.SX.sym("x", 2)
    return MPCC.from_casadi(x, x[0], x[1], f=(x[0] - 2) ** 2, g=x[0] + x[1], lbg=1.0, ubg=1.0, x0=[5.0, 5.0])


class _Recorder:
    """Stands in for a :class:`HomotopySolver`: records ``time_limit``, returns ``termination``."""

    def __init__(self, termination: Termination, calls: list[tuple[str, float | None]], name: str) -> None:
        self.termination, self.calls, self.name = termination, calls, name
        self.first_step_limits: list[float | None] = []

    def run(
        self,
        x0: np.ndarray,
        p: np.ndarray,
        assess: Any,
        *,
        time_limit: float | None = None,
        first_step_limit: float | None = None,
        **_: Any,
    ):
        self.calls.append((self.name, time_limit))
        self.first_step_limits.append(first_step_limit)
        ok = self.termination is Termination.CONVERGED
        a = Assessment(0.0 if ok else 1.0, 0.0)
        return HomotopyOutcome(np.asarray(x0, float), a, self.termination, "", 0, reformulation=self.name)


def _recovering(options: SolveOptions, primary: Termination, fallbacks: dict[str, Termination]):
    calls: list[tuple[str, float | None]] = []
    fb = recovery_plan("scholtes", 2, options).fallbacks  # the planner's choice: the options' list
    rec = RecoveringHomotopy(_toy(), "scholtes", options, fallbacks=fb)
    template = rec.primary.template
    rec.primary = _Recorder(primary, calls, "scholtes")  # type: ignore[assignment]
    rec._fallbacks = {n: _Recorder(t, calls, n) for n, t in fallbacks.items()}  # type: ignore[misc]
    for r in (rec.primary, *rec._fallbacks.values()):
        r.template = template  # type: ignore[attr-defined]
    return rec, calls


def _assess(x: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, Assessment]:
    return x, Assessment(1.0, 0.0)


def test_primary_gets_its_share_then_fallbacks_split_the_rest() -> None:
    opts = SolveOptions(time_limit=40.0, primary_time_share=0.5, fallback_methods=("scholtes_eq", "penalty"))
    rec, calls = _recovering(
        opts,
        Termination.TIME_LIMIT,
        {"scholtes_eq": Termination.TIME_LIMIT, "penalty": Termination.CONVERGED},
    )
    out = rec.run(np.zeros(2), np.zeros(0), _assess)
    assert [c[0] for c in calls] == ["scholtes", "scholtes_eq", "penalty"]
    assert calls[0][1] == pytest.approx(20.0)
    # the recorders take no time: the first fallback gets half of ~40 s, the last all that is left
    assert calls[1][1] == pytest.approx(20.0, rel=1e-2)
    assert calls[2][1] == pytest.approx(40.0, rel=1e-2)
    assert out.termination is Termination.CONVERGED and out.reformulation == "penalty"
    # each but the last may spend FIRST_STEP_SHARE of its own budget in its first subproblem
    assert rec.primary.first_step_limits == [pytest.approx(FIRST_STEP_SHARE * 20.0)]
    second = rec._fallbacks["scholtes_eq"].first_step_limits
    assert second == [pytest.approx(FIRST_STEP_SHARE * 20.0, rel=1e-2)]
    assert rec._fallbacks["penalty"].first_step_limits == [None]


def test_full_share_or_no_fallbacks_keep_the_whole_limit() -> None:
    for opts in (
        SolveOptions(time_limit=10.0, primary_time_share=1.0, fallback_methods=("penalty",)),
        SolveOptions(time_limit=10.0, fallback_methods=()),
    ):
        rec, calls = _recovering(opts, Termination.TIME_LIMIT, {"penalty": Termination.CONVERGED})
        out = rec.run(np.zeros(2), np.zeros(0), _assess)
        assert calls == [("scholtes", 10.0)]
        assert rec.primary.first_step_limits == [None]  # nothing to yield to: no first-step cap
        assert out.termination is Termination.TIME_LIMIT


def test_no_time_limit_no_share() -> None:
    rec, calls = _recovering(
        SolveOptions(),
        Termination.STALLED,
        {n: Termination.STALLED for n in ("scholtes_eq", "fb", "penalty")},
    )
    rec.run(np.zeros(2), np.zeros(0), _assess)
    assert calls == [("scholtes", None), ("scholtes_eq", None), ("fb", None), ("penalty", None)]


@pytest.mark.parametrize("share", [0.0, -0.1, 1.5])
def test_bad_share_is_rejected(share: float) -> None:
    with pytest.raises(MCPInputError, match="primary_time_share"):
        SolveOptions(primary_time_share=share)


class _Clock:
    """A fake ``time.perf_counter``: each stub subproblem takes ``step`` seconds."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def _on_track_run(monkeypatch: pytest.MonkeyPatch, extend_to: float | None, fail_at: int | None = None):
    """A homotopy whose subproblems take 10 s each (fake clock) and cut the residual tenfold,
    0.1, 0.01, ... (at tol 1e-6 by the 6th), run with a 15 s share."""
    import mcpkit.homotopy.loop as hom
    from mcpkit.homotopy.ipopt import InnerResult
    from mcpkit.homotopy.loop import HomotopySolver
    from mcpkit.homotopy.reformulation import reformulation_for

    clock = _Clock()
    monkeypatch.setattr(hom.time, "perf_counter", clock)
    calls = [0]

    class _NLP:
        def solve(self, x: np.ndarray, *args: Any, **kwargs: Any) -> InnerResult:
            clock.t += 10.0
            calls[0] += 1
            status = "Infeasible_Problem_Detected" if calls[0] == fail_at else "Solve_Succeeded"
            return InnerResult(np.asarray(x, float), np.zeros(x.size), np.zeros(1), 0.0, status, 5, 10.0)

    opts = SolveOptions(tol=1e-6, polish=False, sigma_min=1e-30)
    solver = HomotopySolver(_toy(), reformulation_for("scholtes"), opts)
    monkeypatch.setattr(solver, "_nlp", lambda warm: _NLP())

    def assess(x: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, Assessment]:
        return x, Assessment(10.0 ** (-calls[0]), 0.0)

    return solver.run(np.zeros(2), np.zeros(0), assess, time_limit=15.0, extend_to=extend_to), calls[0]


def test_a_primary_on_track_runs_past_its_share(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cut at its 15 s share after two subproblems without ``extend_to``; with it, a run whose
    every subproblem is solved and lowers the residual goes on and converges (60 s of 80)."""
    out, n = _on_track_run(monkeypatch, None)
    assert out.termination is Termination.TIME_LIMIT and n == 2
    out, n = _on_track_run(monkeypatch, 80.0)
    assert out.termination is Termination.CONVERGED and n == 6


def test_a_primary_off_track_stops_at_its_share(monkeypatch: pytest.MonkeyPatch) -> None:
    """A failed subproblem after the share ends the run there (the fallbacks get the rest)."""
    out, n = _on_track_run(monkeypatch, 80.0, fail_at=3)
    assert out.termination is Termination.TIME_LIMIT and n == 3
