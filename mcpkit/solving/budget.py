r"""The limits of one solve call, passed down the call chain as an argument.

A :class:`Budget` holds the call's time limit :math:`T` and its start :math:`t_0`
(:func:`time.perf_counter`): its deadline is :math:`t_0 + T`, and at time :math:`t` what is left
is :math:`T - (t - t_0)`. The :class:`~mcpkit.Solver` makes one per call (its ``time_limit`` or
the options') and hands it to the route's ``solve``; a chain of methods hands each later
attempt the same budget, so every attempt ends by the call's deadline. No route's or solver's
options change during a solve: options hold what a solver *is*, the budget what one call may
spend.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

__all__ = ["SPENT_SECONDS", "Budget", "call_budget"]

#: The least time limit a route hands on from a spent budget: the solver it calls still runs and
#: stops before its first iteration, so the start point is returned, judged.
SPENT_SECONDS = 1e-9


@dataclass(frozen=True)
class Budget:
    """The time budget of one solve call: ``time_limit`` seconds from ``start``."""

    time_limit: float | None = None
    """Seconds this call may take (``None``: no limit)."""
    start: float = field(default_factory=time.perf_counter)
    """When the call started (a :func:`time.perf_counter` value)."""

    @property
    def deadline(self) -> float | None:
        """``start + time_limit`` (``None``: no limit)."""
        return None if self.time_limit is None else self.start + self.time_limit

    def remaining(self, floor: float | None = None) -> float | None:
        """Seconds left now (``None``: no limit), at least ``floor`` if given (may be ``<= 0``
        otherwise)."""
        if self.time_limit is None:
            return None
        left = self.time_limit - (time.perf_counter() - self.start)
        return left if floor is None else max(left, floor)

    def spent(self) -> bool:
        """Whether the deadline has passed."""
        deadline = self.deadline
        return deadline is not None and time.perf_counter() > deadline


def call_budget(budget: Budget | None, time_limit: float | None) -> Budget:
    """``budget``, or when ``None`` one of ``time_limit`` seconds starting now (a route solved
    directly, without a :class:`~mcpkit.Solver`, spends its options' ``time_limit``)."""
    return Budget(time_limit) if budget is None else budget
