r"""Time stepping with one MCP per step.

A :class:`StepModel` owns a parametric MCP :math:`l \le z \le u \perp F(z; p_k)` whose
parameters :math:`p_k` carry the state at step :math:`k` (positions, velocities, applied
forces, time). :func:`simulate` builds one :class:`mcpkit.Solver` and, for
:math:`k = 0, \dots, N-1`,

1. sets :math:`p_k` from the state :math:`x_k` (:meth:`StepModel.parameters`),
2. solves the MCP warm-started from step :math:`k-1`,
3. advances the state :math:`x_{k+1}` from the solution (:meth:`StepModel.advance`).

Every step's status and residual are recorded; a failed step is reported by its index and is
never silently skipped.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from tqdm.auto import tqdm

from mcpkit.errors import MCPInputError, SolveFailedError
from mcpkit.problem import MCP
from mcpkit.result import MCPResult
from mcpkit.solve import Solver


class StepModel(Protocol):
    """What :func:`simulate` needs from a time-stepping contact model."""

    mcp: MCP
    """The per-step MCP (parameters carry the state)."""
    h: float
    """Time step [s]."""

    def parameters(self, k: int, t: float, state: np.ndarray) -> dict[str, np.ndarray]:
        """Parameter values (by block name) of step ``k`` at time ``t`` from ``state``."""
        ...

    def advance(self, k: int, t: float, state: np.ndarray, result: MCPResult) -> np.ndarray:
        """The state at ``t + h`` from the step's solution."""
        ...


@dataclass
class SimulationResult:
    """Arrays of a simulation, one row per step, with per-step solve status.

    Attributes
    ----------
    t
        Times, shape ``(N+1,)``.
    states
        States, shape ``(N+1, n_state)``; rows after a stopping failure are NaN.
    z
        MCP solutions, shape ``(N, n)``.
    solved
        Per-step verdict (natural residual met the tolerance).
    natural_residual
        Per-step natural residual.
    termination
        Per-step termination word.
    iterations, step_time_s
        Per-step inner iterations and wall time of the MCP solve (the model's own work of
        setting up parameters and advancing the state is not included).
    blocks
        Block name -> slice into a row of :attr:`z`.
    """

    t: np.ndarray
    states: np.ndarray
    z: np.ndarray
    solved: np.ndarray
    natural_residual: np.ndarray
    termination: list[str]
    iterations: np.ndarray
    step_time_s: np.ndarray
    blocks: dict[str, slice] = field(default_factory=dict)
    method: str = ""
    backend: str = ""

    @property
    def failed_steps(self) -> np.ndarray:
        """Indices of the steps whose MCP was not solved to tolerance."""
        return np.flatnonzero(~self.solved)

    @property
    def all_solved(self) -> bool:
        """True when every step was solved to tolerance."""
        return bool(self.solved.all())

    def block(self, name: str) -> np.ndarray:
        """Per-step values of one variable block, shape ``(N, size)``."""
        return self.z[:, self.blocks[name]]

    def raise_if_failed(self) -> SimulationResult:
        """Raise :class:`~mcpkit.errors.SolveFailedError` naming the failed steps, if any."""
        bad = self.failed_steps
        if bad.size:
            k = int(bad[0])
            raise SolveFailedError(
                f"{bad.size} of {self.solved.size} steps failed; first at step {k} "
                f"(t={self.t[k]:.6g}): termination {self.termination[k]}, natural residual "
                f"{self.natural_residual[k]:.3e}; failed steps: {bad[:20].tolist()}"
            )
        return self

    def summary(self) -> dict[str, Any]:
        """Machine-readable summary."""
        return {
            "steps": int(self.solved.size),
            "solved_steps": int(self.solved.sum()),
            "failed_steps": self.failed_steps[:50].tolist(),
            "max_natural_residual": float(np.nanmax(self.natural_residual, initial=0.0)),
            "mean_step_time_s": float(np.mean(self.step_time_s)) if self.step_time_s.size else 0.0,
            "total_time_s": float(np.sum(self.step_time_s)),
            "method": self.method,
            "backend": self.backend,
        }


def simulate(
    model: StepModel,
    x0: np.ndarray,
    n_steps: int,
    *,
    t0: float = 0.0,
    method: str = "auto",
    backend: str = "auto",
    progress: bool | None = None,
    stop_on_failure: bool = False,
    solver: Solver | None = None,
    **options: Any,
) -> SimulationResult:
    """Run ``n_steps`` steps of ``model`` from state ``x0``.

    Parameters
    ----------
    model
        A :class:`StepModel`.
    x0
        Initial state.
    n_steps
        Number of steps (``>= 1``).
    t0
        Initial time.
    method, backend, **options
        Passed to :class:`mcpkit.Solver` (built once for the whole run).
    progress
        Show a progress bar (default: when more than 200 steps).
    stop_on_failure
        Stop at the first failed step (remaining rows NaN). Otherwise continue from the
        best point the solver returned; failures stay recorded either way.
    solver
        A pre-built solver for ``model.mcp`` (for re-use across runs).
    """
    if not isinstance(n_steps, (int, np.integer)) or n_steps < 1:
        raise MCPInputError(f"n_steps must be a positive integer, got {n_steps!r}")
    x = np.asarray(x0, dtype=float).reshape(-1)
    if not np.isfinite(x).all():
        raise MCPInputError("initial state x0 contains NaN or inf")
    if solver is None:
        solver = Solver(model.mcp, backend=backend, method=method, **options)
    n = model.mcp.n
    N = int(n_steps)
    t = t0 + model.h * np.arange(N + 1)
    states = np.full((N + 1, x.size), np.nan)
    states[0] = x
    Z = np.full((N, n), np.nan)
    solved = np.zeros(N, dtype=bool)
    resid = np.full(N, np.nan)
    term = ["not run"] * N
    iters = np.zeros(N, dtype=int)
    times = np.zeros(N)
    show = (N > 200) if progress is None else progress
    bar = tqdm(range(N), disable=not show, desc=type(model).__name__, unit="step", leave=False)
    for k in bar:
        tk = float(t[k])
        pk = model.parameters(k, tk, states[k])
        t_start = time.perf_counter()
        res = solver.solve(p=pk)
        times[k] = time.perf_counter() - t_start
        Z[k] = res.z
        solved[k] = res.solved
        resid[k] = res.natural_residual
        term[k] = res.termination.value
        iters[k] = res.iterations
        if not res.solved:
            bar.set_postfix(failed=int((~solved[: k + 1]).sum()))
            if stop_on_failure or not np.isfinite(res.z).all():
                break
        states[k + 1] = model.advance(k, tk, states[k], res)
    bar.close()
    return SimulationResult(
        t=t,
        states=states,
        z=Z,
        solved=solved,
        natural_residual=resid,
        termination=term,
        iterations=iters,
        step_time_s=times,
        blocks={b.name: b.slice for b in model.mcp.blocks},
        method=solver.method.value,
        backend=solver.route.backend,
    )
