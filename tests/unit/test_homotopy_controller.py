"""The homotopy parameter controllers (no solver runs)."""

from __future__ import annotations

import pytest

from mcpkit.homotopy.reformulation import AdaptiveDecrease, ScheduleController, geometric


def test_adaptive_decrease_moves_faster_on_easy_steps_only() -> None:
    c = AdaptiveDecrease(1.0, 0.1, 1e-8, max_outer=50, fast_iterations=5)
    assert c.first() == 1.0
    assert c.next(True, 20) == pytest.approx(0.1)  # ordinary step: x kappa
    assert c.next(True, 3) == pytest.approx(1e-3)  # easy step: x kappa^2
    assert c.next(False, 3) == pytest.approx(1e-4)  # a failure never takes the fast step
    assert c.next(True, 20) == pytest.approx(1e-5)


def test_adaptive_decrease_stops_at_the_floor_and_after_max_outer() -> None:
    c = AdaptiveDecrease(1.0, 0.1, 1e-3, max_outer=50)
    values = [c.first()]
    while (t := c.next(True, 20)) is not None:
        values.append(t)
    assert values == pytest.approx([1.0, 0.1, 1e-2, 1e-3])
    c = AdaptiveDecrease(1.0, 0.5, 1e-12, max_outer=3)
    assert c.next(True, 20) is not None and c.next(True, 20) is not None and c.next(True, 20) is None


def test_failure_at_the_floor_does_not_end_the_homotopy() -> None:
    c = AdaptiveDecrease(1e-3, 0.1, 1e-3, max_outer=10)
    assert c.next(False, 10) == pytest.approx(1e-3)  # retried at the floor
    assert c.next(True, 10) is None


def test_schedule_controller_ignores_feedback() -> None:
    c = ScheduleController(geometric(1.0, 0.5, 0.1, 10))
    assert c.first() == 1.0
    assert [c.next(False, 0), c.next(True, 0)] == pytest.approx([0.5, 0.25])


@pytest.mark.parametrize(
    ("stats", "expected"),
    [
        ({"return_status": "Solve_Succeeded", "iter_count": 17}, 17),
        ({"return_status": "Maximum_Iterations_Exceeded", "iter_count": 3000}, 3000),
        ({"return_status": "Not_Enough_Degrees_Of_Freedom", "iter_count": 1701667187}, 0),
        ({"return_status": "Invalid_Option", "iter_count": 5}, 0),
        ({"return_status": "Infeasible_Problem_Detected", "iter_count": -7892976}, 0),
        ({"return_status": "Solve_Succeeded"}, 0),
        ({"return_status": "Solve_Succeeded", "iter_count": None}, 0),
    ],
)
def test_ipopt_iterations_ignores_counts_ipopt_never_set(stats: dict, expected: int) -> None:
    from mcpkit.homotopy.ipopt import ipopt_iterations

    assert ipopt_iterations(stats) == expected
