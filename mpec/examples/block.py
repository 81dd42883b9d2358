r"""Move a block 5 m in 1 s and stop it: a horizon MPCC over Stewart–Trinkle particle steps.

A 1 kg block (a :class:`~mcpkit.models.stewart_trinkle.Particle`, gravity :math:`g = 9.81`) rests
on the static table :math:`z = 0` with Coulomb friction :math:`\mu = 0.5`; a horizontal force
:math:`u_k \in [-U, U]` along :math:`+x` acts during step :math:`k`. Each step is the mixed LCP of
seed 004 eq (15) (:class:`~mcpkit.models.stewart_trinkle.LCPStep`, :math:`n_d = 4` directions
:math:`\pm\hat t, \pm\hat o`, so the polygonal cone is exact for motion along :math:`x`).
The force enters the step model as a control (``input_matrix`` :math:`B = \hat x`), and the
horizon step is the model's own step map (:meth:`StepSpec.from_model
<mcpkit.mpec.step.StepSpec.from_model>`, nothing re-derived here): with the state
:math:`x = (q, \nu)`,

.. math::
    \hat M = I,\quad b = \nu_k + h(m g + u_k\hat x)/m,\quad \psi/h = \hat n\cdot q_k / h,

and the update is eq (9)'s :math:`\nu_{k+1} = \nu^{\ell+1}`, :math:`q_{k+1} = q_k + h\nu_{k+1}`.
The plan minimises :math:`\sum_k h u_k^2` with :math:`q_x(1) = 5`, :math:`\nu(1) = 0`.

Closed form for checking (discrete, derived in :func:`sliding_qp_plan`): while the block slides
forward every step, :math:`v_{k+1} = v_k + h(u_k - \mu g)` and :math:`q_{k+1} = q_k + h v_{k+1}`,
so the two terminal conditions are linear in :math:`u` and the minimiser of :math:`h\|u\|^2`
is the minimum-norm solution. In continuous time it is :math:`u(t) = 30 - 60t + \mu g` with cost
:math:`300 + (\mu g)^2 = 324.06`; the friction force is :math:`\mu m g = 4.905` N throughout and
:math:`\int u\,dt = \mu m g\,T_{\rm slide}` (momentum balance, :math:`\Delta v = 0`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from mcpkit.errors import MCPInputError
from mcpkit.models.stepping import simulate
from mcpkit.models.stewart_trinkle import Contact, LCPStep, Particle, PlaneSurface
from mcpkit.mpec.grid_continuation import (
    GridContinuation,
    as_continuation,
    coarse_steps,
    solve_by_grid_continuation,
)
from mcpkit.mpec.horizon import TIGHT_SIGMA0, Horizon, with_horizon_ipopt_options
from mcpkit.mpec.resimulation import HorizonResult, limit_seconds, spent_building
from mcpkit.mpec.step import StepSpec
from mcpkit.problems.arrays import as_count, as_real

__all__ = [
    "BlockTask",
    "block_horizon",
    "block_step_spec",
    "friction_force",
    "make_step",
    "model_simulator",
    "sliding_qp_plan",
    "solve_block",
    "stick_slide",
]


@dataclass(frozen=True)
class BlockTask:
    """The block-to-target task.

    Attributes
    ----------
    mass, mu, g
        Block mass [kg], friction coefficient, gravity [m/s^2].
    distance, duration
        Target displacement [m] along x and the time to reach it at rest [s].
    n_steps
        Number of steps :math:`N` (``h = duration / n_steps``; 100 steps = 101 grid points).
    force_bound
        :math:`U`: the force satisfies :math:`|u_k| \\le U` [N].
    """

    mass: float = 1.0
    mu: float = 0.5
    g: float = 9.81
    distance: float = 5.0
    duration: float = 1.0
    n_steps: int = 100
    force_bound: float = 40.0

    def __post_init__(self) -> None:
        for name in ("mass", "g", "duration", "force_bound"):
            if as_real(getattr(self, name), f"BlockTask.{name}") <= 0:
                raise MCPInputError(f"BlockTask.{name} must be > 0, got {getattr(self, name)!r}")
        if as_real(self.mu, "BlockTask.mu") < 0:
            raise MCPInputError(f"BlockTask.mu must be >= 0, got {self.mu!r}")
        as_real(self.distance, "BlockTask.distance")
        as_count(self.n_steps, "BlockTask.n_steps")

    @property
    def h(self) -> float:
        """Step length [s]."""
        return self.duration / self.n_steps


def make_step(task: BlockTask, mu: float | None = None) -> LCPStep:
    r"""The Stewart–Trinkle LCP step (eq 15, ``n_d = 4``) of the block on the table ``z = 0``.

    The horizontal force :math:`u_k` [N] along :math:`+x` is the step's control
    (``input_matrix`` :math:`\hat x`); ``mu`` overrides the task's friction coefficient.
    """
    body = Particle(mass=task.mass, gravity=np.array([0.0, 0.0, -task.g]))
    contact = Contact(PlaneSurface(), task.mu if mu is None else mu)
    return LCPStep(body, [contact], task.h, n_d=4, input_matrix=np.array([[1.0], [0.0], [0.0]]))


def block_step_spec(task: BlockTask, step: LCPStep | None = None) -> StepSpec:
    r"""The :class:`StepSpec` of one block step: state :math:`(q, \nu)`, control :math:`u` (N along x).

    Built from the step model itself (:meth:`StepSpec.from_model`): the parameter map and the
    update are :class:`~mcpkit.models.stewart_trinkle.step.StewartTrinkleStep`'s, evaluated on
    CasADi symbols.
    """
    return StepSpec.from_model(make_step(task) if step is None else step)


def block_horizon(task: BlockTask, spec: StepSpec | None = None) -> Horizon:
    r"""The horizon: :math:`x_0 = 0`, :math:`q_x(T) = d`, :math:`\nu(T) = 0`, :math:`|u| \le U`,
    objective :math:`\sum_k h u_k^2`, over ``spec`` (default :func:`block_step_spec`)."""
    spec = block_step_spec(task) if spec is None else spec
    inf = math.inf
    lo = np.array([task.distance, -inf, -inf, 0.0, 0.0, 0.0])
    hi = np.array([task.distance, inf, inf, 0.0, 0.0, 0.0])
    h = task.h
    return Horizon(
        spec, task.n_steps, np.zeros(6),
        control_bounds=(-task.force_bound, task.force_bound),
        terminal_bounds=(lo, hi),
        stage_cost=lambda x, u, th, z, k: h * u[0] ** 2,
    )  # fmt: skip


def model_simulator(task: BlockTask, mu: float | None = None) -> Any:
    """``simulate(U, theta, deadline=None) -> states`` through the model's own :func:`simulate`
    (per-step MCP solves of :class:`LCPStep` with the planned forces bound by ``with_inputs``; no
    step starts after ``deadline``, a ``time.perf_counter()`` value); ``mu`` overrides the
    friction coefficient (a mismatched simulator, for tests)."""

    def run(U: np.ndarray, theta: np.ndarray, deadline: float | None = None) -> np.ndarray:
        st = make_step(task, mu).with_inputs(np.asarray(U, dtype=float)[:, :1])
        sim = simulate(st, np.zeros(6), task.n_steps, backend="casadi", method="scholtes", tol=1e-10,
                       progress=False, deadline=deadline)  # fmt: skip
        return sim.states

    return run


def sliding_qp_plan(task: BlockTask) -> tuple[np.ndarray, float]:
    r"""Discrete optimum assuming the block slides forward in every step (closed form).

    With :math:`a = \mu g`, :math:`v_k = h\sum_{j<k}(u_j - a)` and
    :math:`q_N = h\sum_{k=1}^N v_k = h^2\sum_{j}(N-j)(u_j - a)`, the conditions
    :math:`v_N = 0`, :math:`q_N = d` read :math:`Au = b` with rows :math:`h\mathbf 1^T`,
    :math:`h^2 (N-j)_j` and :math:`b = (hNa,\ d + h^2 a\sum_j (N-j))`; the minimiser of
    :math:`h\|u\|^2` is :math:`u = A^T(AA^T)^{-1}b` (valid if all :math:`v_k > 0`, checked by the
    caller). Returns ``(u, cost)``.
    """
    N, h, a = task.n_steps, task.h, task.mu * task.g
    j = np.arange(N)
    A = np.vstack([h * np.ones(N), h * h * (N - j)])
    b = np.array([h * N * a, task.distance + h * h * a * np.sum(N - j)])
    u = A.T @ np.linalg.solve(A @ A.T, b / task.mass * task.mass)
    return u, float(h * u @ u)


def friction_force(task: BlockTask, res: HorizonResult) -> np.ndarray:
    r"""Friction force along x per step, :math:`m\,(D\beta_f)_x/h` [N] (impulses are in velocity units)."""
    st = make_step(task)
    D = np.array([math.cos(a) for a in st.angles])  # x-components of the directions (Wt = x-hat)
    return task.mass * (res.block("lam_f") @ D) / task.h


def stick_slide(res: HorizonResult, threshold: float = 1e-6) -> np.ndarray:
    r"""Per step: ``True`` when sliding (:math:`\sigma_k > ` threshold, the slip speed of eq 14)."""
    return res.block("sigma")[:, 0] > threshold


def solve_block(
    task: BlockTask | None = None, continuation: GridContinuation | bool | None = None, **options: Any
) -> tuple[HorizonResult, Horizon]:
    """Build and solve the block horizon; re-simulate with the model's own :func:`simulate`.

    Initial guess: forward simulation of the constant force :math:`u_k = 2\\mu m g` (accelerates
    throughout; the guess misses the terminal conditions). The homotopy starts at
    ``sigma0=``\\ :data:`~mcpkit.mpec.horizon.TIGHT_SIGMA0` (that guess is complementary) with
    the equality form of the Scholtes relaxation, ``method="scholtes_eq"``
    (:math:`G_j H_j = \\sigma`), and IPOPT gets :data:`~mcpkit.mpec.horizon.HORIZON_IPOPT_OPTIONS`,
    unless ``options`` say otherwise.

    ``continuation``: a :class:`~mcpkit.mpec.grid_continuation.GridContinuation` (``None``, the
    default, or ``True``: its defaults) plans a task of more than ``min_steps`` = 200 steps on
    coarser grids first and starts each finer one from the plan below
    (:mod:`mcpkit.mpec.grid_continuation`; the force is mapped in time, ``ControlMap.LINEAR``);
    ``False``: the cold solve above at every N. A ``time_limit`` covers the coarse solves too.

    Why the equality form: from the tight start, IPOPT declares the inequality form's
    subproblems (:math:`G_j H_j \\le \\sigma`) locally infeasible after each decrease of
    :math:`\\sigma` from N = 200 steps on (its restoration fails on the thin set near the corner
    :math:`G_j = H_j = 0`), and the homotopy reached its ``scholtes_eq`` fallback only after
    those failures. Measured 2026-11-27 (one process each, whole call, 90 s limit), inequality
    against equality form: N = 25 / 50 / 100 / 200 / 400 took 1.3 / 1.5 / 1.2 / 15.3 / 50 s
    (80 / 92 / 161 / 1,811 / 2,115 IPOPT iterations) against 1.3 / 1.6 / 2.3 / 6.8 / 5.5 s
    (52 / 125 / 404 / 708 / 216), every plan solved at the same objective (within 1.4e-8
    relative).
    """
    task = BlockTask() if task is None else task
    limit = limit_seconds(options)  # a bad limit is a typed error before the build
    settings = as_continuation(continuation)
    if settings is None or not coarse_steps(task.n_steps, settings.min_steps):
        return _solve_block_grid(task, None, **options)

    def cold(n: int, left: float | None) -> tuple[HorizonResult, Horizon]:
        return _solve_block_grid(replace(task, n_steps=n), None, **{**options, "time_limit": left})

    def warm(n: int, U: np.ndarray, th: np.ndarray, left: float | None,
             extra: dict[str, Any]) -> tuple[HorizonResult, Horizon]:  # fmt: skip
        return _solve_block_grid(replace(task, n_steps=n), U, **{**options, **extra, "time_limit": left})

    return solve_by_grid_continuation(task.n_steps, cold, warm, settings, limit)


def _solve_block_grid(
    task: BlockTask, controls0: np.ndarray | None, **options: Any
) -> tuple[HorizonResult, Horizon]:
    """:func:`solve_block` on ``task``'s grid, from a forward simulation of ``controls0``
    (``None``: the constant force :math:`2\\mu m g`), without continuation."""
    t0 = time.perf_counter()
    hz = block_horizon(task)
    spent_building(options, t0)
    options.setdefault("deviation_tol", 1e-4)
    options.setdefault("sigma0", TIGHT_SIGMA0)  # the forward simulation is complementary
    options.setdefault("method", "scholtes_eq")  # see the docstring: N >= 200 from the tight start
    options = with_horizon_ipopt_options(options)  # MUMPS's pivot tolerance (measured there)
    if controls0 is None:
        controls0 = np.full((task.n_steps, 1), 2 * task.mu * task.mass * task.g)
    res = hz.solve(controls0, simulator=model_simulator(task), **options)
    return res, hz
