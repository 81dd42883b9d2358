r"""Grid continuation: plan a long horizon from the plan of the same task on a coarser grid.

A horizon of :math:`N` steps of length :math:`h = T/N` (:class:`~mcpkit.mpec.horizon.Horizon`)
is planned on the grids :math:`N_0 < N_1 < \dots < N_L = N` with :math:`N_{i+1} = 2N_i` (from the
top: :math:`N` halved, rounded up, until it is at most :attr:`GridContinuation.min_steps`,
:func:`coarse_steps`). The coarsest grid is solved cold by the planner's usual route; each finer
one starts from the plan of the grid below:

* **controls** :math:`u_k` (forces, accelerations: quantities that do not scale with :math:`h`)
  are mapped in time. Coarse step :math:`j` acts on :math:`[jH, (j+1)H)`, fine step :math:`k` on
  :math:`[kh, (k+1)h)`; :attr:`ControlMap.LINEAR` interpolates the coarse values, placed at the
  coarse step midpoints :math:`(j+\tfrac12)H`, linearly at the fine midpoints
  :math:`(k+\tfrac12)h` (constant beyond the first and last midpoint, so a plan's end values
  are kept), :attr:`ControlMap.HOLD` keeps :math:`u_k = U_{\lfloor kh/H \rfloor}`,
  :attr:`ControlMap.FIRST` keeps the first row and sets the others to zero (a start impulse
  such as the plate's start jump); the design :math:`\theta` is kept;
* **states and step variables** are not interpolated: the fine grid's initial guess is the
  forward simulation of the mapped controls (:meth:`Horizon.initial_guess
  <mcpkit.mpec.horizon.Horizon.initial_guess>`), so every fine step's pairs are complementary
  to the per-step tolerance, the dynamics hold exactly, and impulses come out at the fine
  step's scale (an impulse over one step is :math:`h` times a force; a coarse impulse would be
  :math:`2\times` too large). Only the plan's own conditions (terminal box, path constraints)
  are missed, by the interpolation error of the controls, :math:`O(H^2)` for smooth controls;
* the fine MPCC is then solved **warm** (``Horizon.solve(warm=True)``): the active-set polish on
  the modes that guess predicts first (one smooth NLP: a few IPOPT iterations when the modes are
  right), then, if it does not meet the tolerance, the homotopy from :attr:`GridContinuation.sigma0`
  with the warm-start IPOPT settings; if that fails too and time is left, the planner's cold
  solve of the fine grid (:attr:`GridContinuation.fallback_cold`).

The plan returned is the fine grid's: judged on the fine MPCC's own pairs and re-simulated by
the planner's simulator as any other plan; :attr:`HorizonResult.coarse
<mcpkit.mpec.resimulation.HorizonResult.coarse>` keeps the coarse plans and
:attr:`~mcpkit.mpec.resimulation.HorizonResult.total_iterations` counts all their iterations. A
``time_limit`` covers the whole call, the coarse solves included.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from mcpkit.errors import MCPInputError, ShapeError
from mcpkit.mpec.horizon import Horizon
from mcpkit.mpec.resimulation import HorizonResult
from mcpkit.problems.arrays import as_count
from mcpkit.solving.options import Budget, Choice

#: Seconds a solve is given at least, once the limit is spent: it then returns its ``time_limit``
#: status at once.
MIN_SECONDS = 1e-3

__all__ = [
    "ControlMap",
    "GridContinuation",
    "as_continuation",
    "coarse_steps",
    "map_controls",
    "solve_by_grid_continuation",
]


class ControlMap(str, Choice, option="GridContinuation.controls"):
    """How a coarse plan's controls become the fine grid's initial controls."""

    LINEAR = "linear"
    """Linear interpolation between the coarse step midpoints, evaluated at the fine step
    midpoints, constant beyond the first and last (forces, accelerations)."""
    HOLD = "hold"
    """Each fine step takes the control of the coarse step that contains it (piecewise constant)."""
    FIRST = "first"
    """The first row is kept, the others are zero (a start impulse, as the plate's start jump)."""


@dataclass(frozen=True)
class GridContinuation:
    r"""Settings of grid continuation (module docstring).

    Attributes
    ----------
    min_steps
        The coarsest grid: :math:`N` is halved (rounded up) until it is at most this many steps.
        A horizon of at most ``min_steps`` steps is solved cold, without continuation.
    controls
        The :class:`ControlMap` of the controls.
    sigma0
        First relaxation parameter of the fine grid's warm homotopy, if the polish on the
        predicted modes does not solve it.
    inner_tol_factor
        IPOPT's ``tol`` on a fine grid as a fraction of the plan's tolerance. The warm polish
        stops after a few iterations; at IPOPT's usual :math:`0.1\,\mathrm{tol}` it ended the
        800-step block 1.2e-6 (relative) above the cold plan, at :math:`10^{-5}` within 1e-8.
    fallback_cold
        When the warm solve of a grid fails (or a coarse grid is not solved), solve the fine grid
        cold with the time that is left.
    """

    min_steps: int = 200
    controls: ControlMap | str = ControlMap.LINEAR
    sigma0: float = 1e-4
    inner_tol_factor: float = 1e-5
    fallback_cold: bool = True

    def __post_init__(self) -> None:
        as_count(self.min_steps, "GridContinuation.min_steps", minimum=1)
        object.__setattr__(self, "controls", ControlMap.parse(self.controls))
        for name in ("sigma0", "inner_tol_factor"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 < v < math.inf):
                raise MCPInputError(f"GridContinuation.{name} must be a positive finite number, got {v!r}")
        if not isinstance(self.fallback_cold, bool):
            raise MCPInputError(f"GridContinuation.fallback_cold must be a bool, got {self.fallback_cold!r}")

    def solve_options(self) -> dict[str, Any]:
        """The options of a fine grid's warm solve (``Horizon.solve(**...)``)."""
        return {"warm": True, "sigma0": self.sigma0, "inner_tol_factor": self.inner_tol_factor}


def as_continuation(value: GridContinuation | bool | None) -> GridContinuation | None:
    """The settings a planner's ``continuation=`` asks for: ``True`` and ``None`` (the planners'
    default) :class:`GridContinuation`'s defaults, ``False`` none; anything else but a
    :class:`GridContinuation` is an error."""
    if value is False:
        return None
    if value is None or value is True:
        return GridContinuation()
    if not isinstance(value, GridContinuation):
        raise MCPInputError(f"continuation= takes a GridContinuation or a bool, got {type(value).__name__}")
    return value


def coarse_steps(n_steps: int, min_steps: int) -> list[int]:
    r"""The coarser grids, coarsest first: :math:`N_{i-1} = \lceil N_i/2 \rceil` until
    :math:`N_0 \le` ``min_steps`` (empty when ``n_steps <= min_steps``)."""
    n = as_count(n_steps, "n_steps", minimum=1)
    lo = as_count(min_steps, "min_steps", minimum=1)
    out: list[int] = []
    while n > lo:
        n = (n + 1) // 2
        out.append(n)
    return out[::-1]


def map_controls(controls: Any, n_fine: int, how: ControlMap | str = ControlMap.LINEAR) -> np.ndarray:
    r"""Controls ``(n_coarse, n_control)`` of a plan over :math:`[0, T]` mapped onto ``n_fine``
    equal steps of the same interval (:class:`ControlMap`; module docstring)."""
    U = np.asarray(controls, dtype=float)
    if U.ndim != 2 or U.shape[0] < 1:
        raise ShapeError(f"controls must have shape (n_steps, n_control), got {U.shape}")
    nf = as_count(n_fine, "n_fine", minimum=1)
    nc = U.shape[0]
    how = ControlMap.parse(how)
    if how is ControlMap.FIRST:
        out = np.zeros((nf, U.shape[1]))
        out[0] = U[0]
        return out
    tf = (np.arange(nf) + 0.5) / nf  # fine midpoints, as fractions of T
    if how is ControlMap.HOLD:
        return U[np.minimum((tf * nc).astype(int), nc - 1)].copy()
    tc = (np.arange(nc) + 0.5) / nc
    return np.column_stack([np.interp(tf, tc, U[:, i]) for i in range(U.shape[1])]).reshape(nf, U.shape[1])


ColdSolve = Callable[[int, "float | None"], tuple[HorizonResult, Horizon]]
"""``cold(n_steps, time_limit) -> (result, horizon)``: the planner's own solve on ``n_steps``."""

WarmSolve = Callable[
    [int, np.ndarray, np.ndarray, "float | None", dict[str, Any]], tuple[HorizonResult, Horizon]
]
"""``warm(n_steps, controls0, design0, time_limit, options) -> (result, horizon)``: the planner's
horizon on ``n_steps`` solved by ``Horizon.solve(controls0, design0, **planner_options, **options)``."""


def solve_by_grid_continuation(
    n_steps: int,
    cold: ColdSolve,
    warm: WarmSolve,
    settings: GridContinuation,
    time_limit: float | None = None,
) -> tuple[HorizonResult, Horizon]:
    r"""Plan ``n_steps`` steps by grid continuation (module docstring).

    ``cold`` solves a grid from the planner's usual start, ``warm`` from mapped controls and a
    design; ``time_limit`` (seconds, ``None``: none) bounds the whole call, each solve getting
    what is left. Returns the finest grid's ``(result, horizon)``, its ``result.coarse`` holding
    the coarser plans (coarsest first).
    """
    clock = Budget(time_limit)
    levels = coarse_steps(n_steps, settings.min_steps)
    if not levels:
        return cold(n_steps, clock.remaining(MIN_SECONDS))
    done: list[HorizonResult] = []
    res, hz = cold(levels[0], clock.remaining(MIN_SECONDS))
    for m in [*levels[1:], n_steps]:
        done.append(res)
        if not res.solved and settings.fallback_cold:  # nothing reliable to map: the finest grid, cold
            res, hz = cold(n_steps, clock.remaining(MIN_SECONDS))
            break
        if m < n_steps and not clock.fits(_set_up_seconds(hz, m) + _set_up_seconds(hz, n_steps)):
            m = n_steps  # no time for this grid and the finest one's build after it: the finest now
        U = map_controls(res.controls, m, settings.controls)
        res, hz = warm(m, U, res.design, clock.remaining(MIN_SECONDS), settings.solve_options())
        # the cold fallback builds the finest grid again: only when that build fits with 1 s to solve
        if not res.solved and settings.fallback_cold and m == n_steps and clock.fits(hz.build_time_s + 1.0):
            done.append(res)
            res, hz = cold(m, clock.remaining(MIN_SECONDS))
        if m == n_steps:
            break
    return replace(res, coarse=tuple(done)), hz


def _set_up_seconds(hz: Horizon, n_steps: int) -> float:
    r"""A lower estimate of building a horizon of ``n_steps`` steps (the work that cannot be
    stopped before a grid's solve): ``hz``'s build time scaled by :math:`N / N_{hz}` (the build
    is one pass over the steps, at least linear in :math:`N`)."""
    return hz.build_time_s * n_steps / hz.N
