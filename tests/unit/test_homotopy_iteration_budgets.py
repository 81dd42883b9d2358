"""The iteration budgets of :class:`~mcpkit.homotopy.recovery.RecoveringHomotopy` (no solver runs).

With a time limit and fallbacks, the requested homotopy and each fallback but the last run with
``off_track_iterations = options.primary_iterations`` and ``first_step_iterations =
options.first_step_iterations``; the last fallback has no budget; every run has the caller's whole
limit as its time limit (the clock decides nothing else). The homotopies are replaced by
recorders, so only the budgeting is tested; a stub NLP tests :class:`~mcpkit.homotopy.loop.RunBudget`.
"""

from __future__ import annotations

from typing import Any

import casadi as ca
import numpy as np
import pytest

from mcpkit.errors import MCPInputError
from mcpkit.homotopy.loop import Assessment, HomotopyOutcome, RunBudget
from mcpkit.homotopy.recovery import BUDGET_FLOOR_ITERATIONS, RecoveringHomotopy, iteration_budget
from mcpkit.mpcc import MPCC
from mcpkit.orchestration.planner import recovery_plan
from mcpkit.solving.options import SolveOptions
from mcpkit.solving.result import Termination


def _toy() -> MPCC:
    x = ca.SX.sym("x", 2)
    return MPCC.from_casadi(x, x[0], x[1], f=(x[0] - 2) ** 2, g=x[0] + x[1], lbg=1.0, ubg=1.0, x0=[5.0, 5.0])


class _Recorder:
    """Stands in for a :class:`HomotopySolver`: records its arguments, returns ``termination``."""

    def __init__(self, termination: Termination, calls: list[tuple[str, dict[str, Any]]], name: str) -> None:
        self.termination, self.calls, self.name = termination, calls, name

    def run(self, x0: np.ndarray, p: np.ndarray, assess: Any, **kwargs: Any) -> HomotopyOutcome:
        self.calls.append((self.name, kwargs))
        ok = self.termination is Termination.CONVERGED
        a = Assessment(0.0 if ok else 1.0, 0.0)
        return HomotopyOutcome(np.asarray(x0, float), a, self.termination, "", 0, reformulation=self.name)


def _recovering(options: SolveOptions, primary: Termination, fallbacks: dict[str, Termination]):
    calls: list[tuple[str, dict[str, Any]]] = []
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


def test_each_run_but_the_last_gets_the_iteration_budgets() -> None:
    opts = SolveOptions(
        time_limit=40.0, primary_iterations=700, first_step_iterations=90,
        fallback_methods=("scholtes_eq", "penalty"),
    )  # fmt: skip
    rec, calls = _recovering(
        opts,
        Termination.ITERATION_LIMIT,
        {"scholtes_eq": Termination.ITERATION_LIMIT, "penalty": Termination.CONVERGED},
    )
    out = rec.run(np.zeros(2), np.zeros(0), _assess)
    assert [c[0] for c in calls] == ["scholtes", "scholtes_eq", "penalty"]
    pairs = rec.mpcc.n_pairs  # one: the budgets scale by 1000 / pairs (iteration_budget)
    budgets = {"off_track_iterations": 700 * 1000 // pairs, "first_step_iterations": 90 * 1000 // pairs}
    for _, kwargs in calls[:2]:
        assert {k: kwargs.get(k) for k in budgets} == budgets
    assert "off_track_iterations" not in calls[2][1] and "first_step_iterations" not in calls[2][1]
    # no share of the limit: the primary has all of it, each fallback all that is left
    assert calls[0][1]["time_limit"] == 40.0
    assert 39.0 < calls[1][1]["time_limit"] <= 40.0 and 39.0 < calls[2][1]["time_limit"] <= 40.0
    assert out.termination is Termination.CONVERGED and out.reformulation == "penalty"


def test_a_primary_that_hits_the_time_limit_ends_the_call() -> None:
    """The time limit is the caller's hard limit: no fallback runs after it."""
    opts = SolveOptions(time_limit=10.0, fallback_methods=("penalty",))
    rec, calls = _recovering(opts, Termination.TIME_LIMIT, {"penalty": Termination.CONVERGED})
    out = rec.run(np.zeros(2), np.zeros(0), _assess)
    assert [c[0] for c in calls] == ["scholtes"] and out.termination is Termination.TIME_LIMIT


def test_no_fallbacks_or_no_time_limit_no_budgets() -> None:
    for opts, limit in (
        (SolveOptions(time_limit=10.0, fallback_methods=()), 10.0),
        (SolveOptions(time_limit=10.0, primary_iterations=None, first_step_iterations=None), 10.0),
        (SolveOptions(), None),
    ):
        rec, calls = _recovering(
            opts, Termination.STALLED, {n: Termination.STALLED for n in ("scholtes_eq", "fb", "penalty")}
        )
        rec.run(np.zeros(2), np.zeros(0), _assess)
        assert calls[0][1]["time_limit"] == limit
        assert calls[0][1].get("off_track_iterations") is None
        assert calls[0][1].get("first_step_iterations") is None


@pytest.mark.parametrize(
    "bad", [{"primary_iterations": 0}, {"first_step_iterations": -1}, {"primary_iterations": 2.5},
            {"first_step_iterations": True}, {"primary_iterations": "100"}],
)  # fmt: skip
def test_bad_budgets_are_rejected(bad: dict[str, Any]) -> None:
    with pytest.raises(MCPInputError, match=next(iter(bad))):
        SolveOptions(**bad)


def test_budgets_scale_with_the_pairs() -> None:
    """Given for 1,000 pairs; in proportion to 1000 / pairs otherwise, never below the floor."""
    assert iteration_budget(320, 1000) == 320
    assert iteration_budget(320, 2300) == 139  # tollmpec
    assert iteration_budget(320, 69) == 4637  # aampec_2
    assert iteration_budget(320, 10**6) == BUDGET_FLOOR_ITERATIONS
    assert iteration_budget(320, 0) == 320000 and iteration_budget(None, 10) is None


def test_run_budget_caps() -> None:
    """The cap of subproblem k: the first-step cap at k = 0, the off-track budget only off track."""
    b = RunBudget.starting_now(None, 50, 300, 1000)
    assert b.deadline is None
    assert b.step_cap(0, 0, on_track=False) == 50
    assert b.step_cap(1, 280, on_track=False) == 20
    assert b.step_cap(1, 280, on_track=True) == 720
    assert b.spent(300, on_track=False) is not None and b.spent(300, on_track=True) is None
    assert b.spent(1000, on_track=True) is not None
    assert RunBudget.starting_now(None, None, None, None).step_cap(0, 10, False) is None


def _stub_run(off_track: int | None, fail_at: int | None = None) -> tuple[HomotopyOutcome, int]:
    """A homotopy whose subproblems take 5 IPOPT iterations each and cut the residual tenfold,
    0.1, 0.01, ... (tol 1e-6 by the 6th), with an off-track budget of ``off_track``; subproblem
    ``fail_at`` fails."""
    from mcpkit.homotopy.inner import InnerResult
    from mcpkit.homotopy.loop import HomotopySolver
    from mcpkit.homotopy.reformulation import reformulation_for

    calls = [0]

    class _NLP:
        def solve(self, x: np.ndarray, *args: Any, **kwargs: Any) -> InnerResult:
            calls[0] += 1
            status = "Infeasible_Problem_Detected" if calls[0] == fail_at else "Solve_Succeeded"
            return InnerResult(np.asarray(x, float), np.zeros(x.size), np.zeros(1), 0.0, status, 5, 0.0)

    opts = SolveOptions(tol=1e-6, polish=False, sigma_min=1e-30)
    solver = HomotopySolver(_toy(), reformulation_for("scholtes"), opts)
    solver._nlp = lambda warm: _NLP()  # type: ignore[method-assign]

    def assess(x: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, Assessment]:
        return x, Assessment(10.0 ** (-calls[0]), 0.0)

    out = solver.run(np.zeros(2), np.zeros(0), assess, time_limit=100.0, off_track_iterations=off_track)
    return out, calls[0]


def test_a_run_on_track_goes_past_its_off_track_budget() -> None:
    """Every subproblem solved and lowering the residual: the run converges (30 iterations)
    although its off-track budget is 8."""
    out, n = _stub_run(8)
    assert out.termination is Termination.CONVERGED and n == 6 and out.iterations == 30


def test_a_run_off_track_stops_at_its_budget() -> None:
    """A failed subproblem after the budget is spent ends the run there (the fallbacks get
    their turn); without a budget the run retries and goes on."""
    out, n = _stub_run(8, fail_at=3)
    assert out.termination is Termination.ITERATION_LIMIT and n == 3 and out.budget_spent
    assert "off track" in out.raw_status
    free, m = _stub_run(None, fail_at=3)
    assert m > 3 and not free.budget_spent
