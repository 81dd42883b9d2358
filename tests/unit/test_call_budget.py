"""A solve's time limit travels as its :class:`~mcpkit.solving.options.Budget`, an argument; no
solve changes the options of the :class:`mcpkit.Solver`, its route, or the routes of a chain
(mcpkit's own engines only: no IPOPT, no PATH)."""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import pytest

import mcpkit
from mcpkit.orchestration.planner import FallbackRoute
from mcpkit.solving.options import Budget, call_budget
from mcpkit.solving.route import RouteOutcome

#: 0 <= z perp M z + q >= 0 with M positive definite: Newton and Lemke both solve it.
M = np.array([[2.0, 1.0], [1.0, 2.0]])
Q = np.array([-1.0, -1.0])


def _spy(route: Any, seen: list[tuple[float | None, object]]) -> None:
    """Record, during each call of ``route.solve``, the budget's limit and the route's options."""
    real = route.solve

    def solve(p: np.ndarray, z0: np.ndarray, warm: bool, budget: Budget | None = None) -> RouteOutcome:
        assert budget is not None  # the Solver always hands one down
        seen.append((budget.time_limit, route.options))
        return real(p, z0, warm, budget)

    route.solve = solve


@pytest.mark.parametrize("method", ["newton", "lemke"])
def test_solves_with_different_limits_leave_every_options_object_unchanged(method: str) -> None:
    """Three solves on one Solver (5 s, no limit this call, the options' 30 s): the route sees
    each limit in its budget, and the options it reads are the very object built, 30 s."""
    solver = mcpkit.Solver(mcpkit.MCP.lcp(M, Q), method=method, time_limit=30.0)
    options, route_options = solver.options, solver.route.options
    seen: list[tuple[float | None, object]] = []
    _spy(solver.route, seen)
    for limit in (5.0, math.inf, None):
        assert solver.solve(time_limit=limit, warm_start=False).solved
    assert [t for t, _ in seen] == [5.0, None, 30.0]
    assert all(o is route_options for _, o in seen)
    assert solver.options is options and solver.route.options is route_options
    assert options.time_limit == 30.0 and route_options.time_limit == 30.0


def test_a_chain_hands_its_one_budget_to_each_attempt() -> None:
    """The auto chain (``newton`` then ``lemke``): the attempt's route gets the call's budget
    itself, and neither the chain's options nor the attempt's change."""
    solver = mcpkit.Solver(mcpkit.MCP.lcp(M, Q), method="newton", time_limit=30.0)
    chain = FallbackRoute(solver.problem, [solver.resolved, solver.resolved], solver.options)
    first = chain._route(0)
    assert not isinstance(first, str)
    kept, first_options = chain.options, first.options
    seen: list[tuple[float | None, object]] = []
    _spy(first, seen)
    budget = Budget(2.0)
    out = chain.solve(np.zeros(0), np.zeros(2), False, budget)
    assert out.z is not None and seen == [(2.0, first_options)]
    assert chain.options is kept and first.options is first_options and kept.time_limit == 30.0


def test_a_budget_counts_from_its_start() -> None:
    """``remaining`` is the limit less the time since ``start``; no limit stays ``None``."""
    b = Budget(10.0, time.perf_counter() - 4.0)
    left = b.remaining()
    assert left is not None and left <= 6.0 and not b.spent()
    assert Budget(1.0, time.perf_counter() - 2.0).spent()
    assert Budget(1.0, time.perf_counter() - 2.0).remaining(0.0) == 0.0
    assert Budget().remaining() is None and Budget().deadline is None and not Budget().spent()
    assert call_budget(None, 3.0).time_limit == 3.0 and call_budget(b, 3.0) is b
