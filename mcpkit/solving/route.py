"""The contract between :class:`mcpkit.Solver` and a solve route.

A route is built once for one MCP declaration (structure fixed) and solved many times for
different parameter values. It returns a point in the declaration's variables ``z``; the
:class:`~mcpkit.Solver` then measures residuals on the declaration itself, so no route can
report success on its own say-so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from mcpkit.solving.options import Budget, SolveOptions
from mcpkit.solving.result import HomotopyStep, JudgedPoint, Termination


@dataclass
class RouteOutcome:
    """A route's answer, before mcpkit's residual check."""

    z: np.ndarray | None
    """Point in the declaration's variables (None if the solver produced none)."""
    termination: Termination
    """Why the route stopped (CONVERGED only if the route's own stopping test held)."""
    raw_status: str
    """The underlying solver's last raw status."""
    iterations: int
    """Inner iterations."""
    trace: list[HomotopyStep] = field(default_factory=list)
    """Outer-iteration records (homotopy routes)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Documented route-specific extras (e.g. which PATH was used)."""
    F: np.ndarray | None = None
    """``F(z; p)`` when the route already evaluated it at exactly ``z`` (saves one evaluation)."""
    method: str | None = None
    """The method that produced ``z`` when a route chains several (``None``: the route's own)."""
    backend: str | None = None
    """The backend of that method (``None``: the route's own)."""
    judged: JudgedPoint | None = None
    """The verdict a chain already reached on exactly :attr:`z` with the same declaration and
    tolerance (the ``auto`` chain judges each attempt to decide whether to go on); the
    :class:`~mcpkit.Solver` then reuses it instead of judging the point a second time."""
    warnings: tuple[str, ...] = ()
    """What went wrong on the way, in words, for :attr:`~mcpkit.solving.result.SolveResult.warnings`
    (a non-finite evaluation that ended a fast path, ...); never printed by the route."""


class RouteRunner(Protocol):
    """A built solve route for one MCP structure: what runs a :class:`~mcpkit.orchestration.planner.Route`."""

    backend: str
    method: str
    options: SolveOptions
    """What the route is (tolerance, iteration limits, ...); never changed by a solve. The time
    limit of one call travels as its ``budget``."""

    def solve(self, p: np.ndarray, z0: np.ndarray, warm: bool, budget: Budget | None = None) -> RouteOutcome:
        """Solve at parameters ``p`` from ``z0``; ``warm`` means ``z0`` is a nearby solution;
        ``budget`` bounds this call (``None``: the options' ``time_limit`` from now,
        :func:`~mcpkit.solving.options.call_budget`)."""
        ...
