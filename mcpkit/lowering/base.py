"""Composable, reversible lowerings (in the spirit of cvxpy's ``Reduction``/``Chain``).

A :class:`Lowering` turns a problem into a target representation with :meth:`Lowering.apply`,
which also returns the *inverse data* needed to carry a target solution back with
:meth:`Lowering.invert`. Lowerings compose with :class:`Chain`, which applies them in order
and inverts them in reverse order, so a solution always comes back in the declaration's terms.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any


class Lowering(ABC):
    """One step ``source -> target`` with its inverse ``target solution -> source solution``."""

    @abstractmethod
    def apply(self, problem: Any) -> tuple[Any, Any]:
        """Lower ``problem``; return ``(lowered, inverse_data)``."""

    @abstractmethod
    def invert(self, solution: Any, inverse_data: Any) -> Any:
        """Map a solution of the lowered problem back to the source problem."""


class Chain(Lowering):
    """Apply lowerings in order; invert them in reverse order."""

    def __init__(self, lowerings: Sequence[Lowering]) -> None:
        self.lowerings = list(lowerings)

    def apply(self, problem: Any) -> tuple[Any, list[Any]]:
        inverse: list[Any] = []
        for lowering in self.lowerings:
            problem, data = lowering.apply(problem)
            inverse.append(data)
        return problem, inverse

    def invert(self, solution: Any, inverse_data: list[Any]) -> Any:
        for lowering, data in zip(reversed(self.lowerings), reversed(inverse_data), strict=True):
            solution = lowering.invert(solution, data)
        return solution

    def __repr__(self) -> str:
        return "Chain(" + " -> ".join(type(r).__name__ for r in self.lowerings) + ")"
