"""The choice of :func:`mcpkit.orchestration.second_start.better` and the child process's failure paths.

No IPOPT runs: the outcomes are made here, and the child runs a plain function.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from mcpkit.homotopy.loop import Assessment, HomotopyOutcome
from mcpkit.orchestration import second_start
from mcpkit.solving.result import Termination

TOL = 1e-6


def _out(f: float, residual: float, violation: float = 0.0) -> HomotopyOutcome:
    """An outcome at the point ``x = [f]`` (the objective below reads ``f`` from it)."""
    term = Termination.CONVERGED if residual <= TOL and violation <= TOL else Termination.STALLED
    return HomotopyOutcome(np.array([f]), Assessment(residual, violation), term, "", 10)


def objective(x: np.ndarray) -> float:
    return float(x[0])


def test_lower_objective_wins_when_both_meet_the_tolerance() -> None:
    s, a = _out(14.0, 1e-8), _out(13.3, 1e-9)
    assert second_start.better(s, a, objective, TOL) == (a, "adaptive")
    assert second_start.better(a, s, objective, TOL)[1] == "standard"  # the first is "standard"


def test_ties_keep_the_standard_point() -> None:
    s, a = _out(95.2355, 1e-8), _out(95.2355 * (1 - 1e-10), 1e-8)
    assert second_start.better(s, a, objective, TOL) == (s, "standard")


def test_a_solved_point_beats_an_unsolved_one_whatever_its_objective() -> None:
    s, a = _out(1.0, 1e-2), _out(500.0, 1e-8)
    assert second_start.better(s, a, objective, TOL) == (a, "adaptive")
    assert second_start.better(a, s, objective, TOL) == (a, "standard")


def test_unsolved_points_rank_by_the_assessment_key() -> None:
    s, a = _out(1.0, 1e-2), _out(2.0, 1e-4)
    assert second_start.better(s, a, objective, TOL) == (a, "adaptive")
    s, a = _out(1.0, 1e-3, violation=0.0), _out(2.0, 1e-4, violation=1.0)  # infeasible ranks last
    assert second_start.better(s, a, objective, TOL) == (s, "standard")


def test_no_second_point_keeps_the_first() -> None:
    s = _out(1.0, 1e-8)
    assert second_start.better(s, None, objective, TOL) == (s, "standard")
    none = HomotopyOutcome(None, Assessment(np.inf, np.inf), Termination.NUMERICAL_ERROR, "", 0)
    assert second_start.better(s, none, objective, TOL) == (s, "standard")


needs_fork = pytest.mark.skipif(not second_start.available(), reason="needs fork and two cores")


@needs_fork
def test_the_child_sends_its_outcome_back() -> None:
    got = second_start.SecondStart(lambda: _out(3.0, 1e-9)).start().collect(time.perf_counter() + 30)
    assert got is not None and got.x is not None and got.x[0] == 3.0


@needs_fork
def test_a_failing_child_gives_none_and_says_why() -> None:
    def boom() -> HomotopyOutcome:
        raise RuntimeError("no IPOPT here")

    second = second_start.SecondStart(boom).start()
    assert second.collect(time.perf_counter() + 30) is None
    assert "no IPOPT here" in second.note


@needs_fork
def test_a_late_child_is_ended_at_the_deadline() -> None:
    def slow() -> HomotopyOutcome:
        time.sleep(60)
        return _out(1.0, 0.0)

    second = second_start.SecondStart(slow).start()
    process = second.process
    assert second.collect(time.perf_counter()) is None
    assert "did not finish" in second.note
    assert process is not None and not process.is_alive()


def test_the_child_ends_before_the_caller_limit() -> None:
    assert second_start.child_limit(None) is None and second_start.wait_until(0.0, None) is None
    for limit in (0.5, 2.0, 60.0, 600.0):
        child = second_start.child_limit(limit)
        wait = second_start.wait_until(100.0, limit)
        assert child is not None and wait is not None
        assert child < limit and 100.0 + child <= wait <= 100.0 + limit


@needs_fork
def test_stop_ends_a_running_child() -> None:
    second = second_start.SecondStart(lambda: (time.sleep(60), _out(1.0, 0.0))[1]).start()
    process = second.process
    second.stop()
    assert process is not None and not process.is_alive() and second.process is None
