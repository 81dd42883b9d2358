r"""One result type for every solve route.

Following Pyomo's ``contrib.solver`` results, *why the solver stopped* (:class:`Termination`)
is kept apart from *what the returned point is* (:class:`SolutionStatus`). The latter is
decided by mcpkit from residuals measured on the original pairs, never taken from a solver's
word: a solve is :attr:`MCPResult.solved` exactly when the natural residual and the bound
violation both met the tolerance.

:class:`MCPResult` reads like :class:`scipy.optimize.OptimizeResult` (``x``, ``success``,
``message``, ``nit``) and adds the complementarity-specific fields.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mcpkit.errors import SolveFailedError
from mcpkit.residuals import PairState


class Termination(enum.Enum):
    """Why the solve stopped."""

    CONVERGED = "converged"
    """The stopping test on the original pairs (natural residual <= tol) was met."""
    ITERATION_LIMIT = "iteration_limit"
    """The outer (homotopy) or inner (IPOPT/PATH) iteration limit was reached first."""
    TIME_LIMIT = "time_limit"
    """The wall-clock limit was reached first."""
    STALLED = "stalled"
    """No further progress: tiny steps, restoration failure, or a relaxation parameter at its
    floor without meeting the tolerance. Never counted as success."""
    LOCALLY_INFEASIBLE = "locally_infeasible"
    """A subproblem was reported (locally) infeasible and recovery failed."""
    NUMERICAL_ERROR = "numerical_error"
    """NaN/inf in evaluations or a linear-algebra failure."""
    SOLVER_ERROR = "solver_error"
    """The external solver crashed, was missing, or returned an unreadable answer."""
    INTERRUPTED = "interrupted"
    """Stopped by the user (KeyboardInterrupt) or a callback."""


class SolutionStatus(enum.Enum):
    """What the returned point is, judged by mcpkit's own residual check."""

    SOLUTION = "solution"
    """Natural residual and bound violation are both <= tol."""
    INACCURATE = "inaccurate"
    """Within the bounds (<= tol) but the natural residual exceeds tol."""
    INFEASIBLE_POINT = "infeasible_point"
    """The point violates its bounds by more than tol."""
    NO_SOLUTION = "no_solution"
    """No point is available (the solver failed before producing one)."""


#: Keys every ``mcpkit solve --json`` summary carries (routes may add more).
SUMMARY_KEYS: tuple[str, ...] = (
    "status", "solved", "objective", "comp_residual", "constraint_violation",
    "wall_time_s", "iterations", "method", "backend",
)  # fmt: skip


@dataclass(frozen=True)
class HomotopyStep:
    """One outer iteration of a relaxation/smoothing homotopy."""

    k: int
    """Outer iteration index (0-based)."""
    parameter: float
    """Relaxation/smoothing parameter (Scholtes sigma, FB epsilon, penalty rho)."""
    residual: float
    """Natural residual of the original MCP at the subproblem's solution."""
    inner_status: str
    """The inner solver's raw status (e.g. IPOPT ``return_status``)."""
    inner_iterations: int
    """Inner iterations spent on this subproblem."""
    wall_time_s: float
    """Wall time of this subproblem."""
    phase: str = "relax"
    """``"relax"`` for a homotopy step, ``"polish"`` for an active-set polish, ``"retry"``
    for a recovery attempt."""


@dataclass
class MCPResult:
    r"""Outcome of solving :math:`l \le z \le u \perp F(z; p)`.

    Attributes
    ----------
    z
        The returned point (NaN-filled when :attr:`solution_status` is ``NO_SOLUTION``).
    F
        :math:`F(z; p)` evaluated on the declaration (not on a reformulation).
    termination
        Why the solve stopped.
    solution_status
        What the point is, from mcpkit's residual check.
    natural_residual
        :math:`\|z - \Pi_{[l,u]}(z - F)\|_\infty`.
    complementarity_violation
        Largest per-pair complementarity violation (see :mod:`mcpkit.residuals`).
    bound_violation
        Largest bound violation.
    pair_states
        One :class:`~mcpkit.residuals.PairState` per pair.
    tol
        The tolerance the residuals were judged against.
    iterations
        Total inner iterations (IPOPT iterations summed over subproblems, or PATH's count).
    wall_time_s
        Wall time of the whole solve.
    backend, method
        The route actually used (after ``"auto"`` was resolved).
    trace
        Per outer iteration :class:`HomotopyStep` records (empty for PATH).
    raw_status
        The last raw status string of the underlying solver.
    message
        Human-readable one-line summary, including why ``auto`` chose its route.
    blocks
        Block name -> slice into ``z`` (use :meth:`block`).
    objective
        Objective value for MPCCs; ``None`` for a pure MCP.
    extra
        Route-specific documented extras (for example ``{"path_major_iterations": 3}``).
    """

    z: np.ndarray
    F: np.ndarray
    termination: Termination
    solution_status: SolutionStatus
    natural_residual: float
    complementarity_violation: float
    bound_violation: float
    pair_states: list[PairState]
    tol: float
    iterations: int
    wall_time_s: float
    backend: str
    method: str
    trace: list[HomotopyStep] = field(default_factory=list)
    raw_status: str = ""
    message: str = ""
    blocks: dict[str, slice] = field(default_factory=dict)
    objective: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    # -- scipy.optimize.OptimizeResult-style aliases ---------------------------------
    @property
    def solved(self) -> bool:
        """True exactly when the natural residual and bound violation met :attr:`tol`."""
        return self.solution_status is SolutionStatus.SOLUTION

    @property
    def success(self) -> bool:
        """Alias of :attr:`solved` (``scipy.optimize`` spelling)."""
        return self.solved

    @property
    def x(self) -> np.ndarray:
        """Alias of :attr:`z` (``scipy.optimize`` spelling)."""
        return self.z

    @property
    def nit(self) -> int:
        """Alias of :attr:`iterations` (``scipy.optimize`` spelling)."""
        return self.iterations

    @property
    def status(self) -> str:
        """Short status word: the termination value, e.g. ``"converged"``."""
        return self.termination.value

    def block(self, name: str) -> np.ndarray:
        """The part of :attr:`z` belonging to variable block ``name``."""
        if name not in self.blocks:
            raise KeyError(f"no block {name!r}; blocks: {list(self.blocks)}")
        return self.z[self.blocks[name]]

    def block_F(self, name: str) -> np.ndarray:
        """The part of :attr:`F` paired with variable block ``name``."""
        if name not in self.blocks:
            raise KeyError(f"no block {name!r}; blocks: {list(self.blocks)}")
        return self.F[self.blocks[name]]

    def pair_counts(self) -> dict[str, int]:
        """How many pairs are in each :class:`PairState`."""
        counts: dict[str, int] = {}
        for s in self.pair_states:
            counts[s.value] = counts.get(s.value, 0) + 1
        return counts

    def raise_if_failed(self) -> MCPResult:
        """Return ``self`` when :attr:`solved`, else raise :class:`~mcpkit.errors.SolveFailedError`."""
        if not self.solved:
            raise SolveFailedError(
                f"{self.method}/{self.backend} did not solve the problem: "
                f"termination={self.termination.value}, status={self.solution_status.value}, "
                f"natural residual={self.natural_residual:.3e} (tol {self.tol:.1e}), "
                f"bound violation={self.bound_violation:.3e}; raw solver status: {self.raw_status!r}",
                result=self,
            )
        return self

    def summary(self) -> dict[str, Any]:
        """The machine-readable summary used by ``mcpkit solve --json``."""
        return {
            "status": self.termination.value,
            "solution_status": self.solution_status.value,
            "solved": self.solved,
            "objective": self.objective,
            "comp_residual": _finite_or_none(self.natural_residual),
            "constraint_violation": _finite_or_none(self.bound_violation),
            "wall_time_s": self.wall_time_s,
            "iterations": self.iterations,
            "method": self.method,
            "backend": self.backend,
            "raw_status": self.raw_status,
            "message": self.message,
        }

    def to_json(self) -> str:
        """:meth:`summary` as one JSON object."""
        return json.dumps(self.summary())

    def __repr__(self) -> str:
        counts = ", ".join(f"{k}={v}" for k, v in self.pair_counts().items())
        return (
            f"MCPResult(solved={self.solved}, termination={self.termination.value}, "
            f"status={self.solution_status.value}, natural_residual={self.natural_residual:.2e}, "
            f"bound_violation={self.bound_violation:.2e}, tol={self.tol:.0e}, n={self.z.size}, "
            f"pairs: {counts or 'none'}, iterations={self.iterations}, "
            f"wall_time_s={self.wall_time_s:.3f}, route={self.method}/{self.backend}, "
            f"raw_status={self.raw_status!r})"
        )


def _finite_or_none(v: float) -> float | None:
    return float(v) if np.isfinite(v) else None


def judge(natural: float, bounds: float, tol: float, have_point: bool) -> SolutionStatus:
    """mcpkit's verdict on a point from its residuals (never from a solver's word)."""
    if not have_point:
        return SolutionStatus.NO_SOLUTION
    if not np.isfinite(bounds) or bounds > tol:
        return SolutionStatus.INFEASIBLE_POINT
    if natural <= tol:
        return SolutionStatus.SOLUTION
    return SolutionStatus.INACCURATE
