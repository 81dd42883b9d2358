r"""Whole horizons of complementarity time steps as one MPCC (a boundary-value problem).

A time-stepping contact model takes one MCP per step (seed 004 eqs 9, 15; seed 000 eqs 17-32):
state :math:`x_k`, controls :math:`u_k`, design parameters :math:`\theta` (shared by all steps),
time :math:`t_k = t_0 + kh` and

.. math::

    l \le z_k \le u \ \perp\ F(z_k;\ P(x_k, u_k, \theta, t_k)),\qquad
    x_{k+1} = \Phi(x_k, z_k, u_k, \theta, t_k),

where :math:`P` maps state, control, design and time onto the MCP's parameter blocks. A model
whose step map is declared once (:class:`mcpkit.models.stepping.StepMap`, e.g. the ECP and
Stewart–Trinkle steps) gives its :class:`StepSpec` through :meth:`StepSpec.from_model`: the same
code that the simulator runs on NumPy is evaluated here on CasADi symbols. Instead of
simulating forward and searching over controls without gradients (the Nelder–Mead loop of
seed 004 §4), :class:`Horizon` stacks the :math:`N` steps into the single MPCC

.. math::

    \min_{X}\ &\sum_{k=0}^{N-1} \ell(x_k, u_k, \theta, z_k) + \ell_N(x_N, \theta) \\
    \text{s.t.}\ & x_0 = \bar x_0,\quad x^{\rm T}_{\rm lo} \le x_N \le x^{\rm T}_{\rm up},\quad
        u_{\rm lo} \le u_k \le u_{\rm up},\quad \theta_{\rm lo} \le \theta \le \theta_{\rm up}, \\
    & x_{k+1} - \Phi(x_k, z_k, u_k, \theta, t_k) = 0, \quad
      c_{\rm lo} \le c(x_k, u_k, \theta) \le c_{\rm up},\\
    & F_i(z_k; P_k) - w_{k,i} + v_{k,i} = 0,\quad
      0 \le z_{k,i} - l_i \perp w_{k,i} \ge 0,\quad 0 \le u_i - z_{k,i} \perp v_{k,i} \ge 0,

over :math:`X`, stacked **stage by stage**: :math:`(x_k, u_k, [\theta_k], z_k, w_k, v_k)` for
:math:`k = 0..N-1`, then :math:`x_N`, then a single :math:`\theta` last; the rows likewise, per step
the step MCP's rows, the path rows and the dynamics (the only rows that reach the next stage).
IPOPT's KKT matrix is then block-banded in the order it is given (:attr:`Horizon.layout`,
:attr:`Horizon.rows` give the positions). (From
:data:`LIFT_DESIGN_MIN_STEPS` steps on each step has its own copy :math:`\theta_k`, with
:math:`\theta_{k+1} = \theta_k`: the same problem with a banded KKT matrix; see ``lift_design``.)
The last line is the
slack form of :class:`mcpkit.lowering.casadi.MCPToMPCC`, applied once to the lowered step MCP and
re-used for every step (the step MPCC is wrapped in a ``casadi.Function`` and called on each
step's variables and :math:`P_k`).

The plan is then **re-simulated**: the planned controls and design are fed to the per-step MCP
solver (:func:`forward_simulate`, or a user simulator such as the model's own
:func:`mcpkit.models.stepping.simulate`), and the largest state deviation
:math:`\max_{k,j}|x^{\rm sim}_{k,j} - x^{\rm plan}_{k,j}|` is compared with a stated tolerance.
:class:`HorizonResult` follows :class:`mcpkit.solving.result.Outcome`: its verdict comes from its parts
(the MPCC solve and the re-simulation check), so a plan the simulator does not reproduce
is reported as a failure (:attr:`HorizonResult.solved`).

:class:`Horizon` (the stacked MPCC and its printed blocks) is defined here; the step
(:class:`~mcpkit.mpec.step.StepSpec`, :class:`~mcpkit.mpec.step.PathConstraint`) lives in
:mod:`mcpkit.mpec.step` and the re-simulation and verdict
(:func:`~mcpkit.mpec.resimulation.forward_simulate`,
:func:`~mcpkit.mpec.resimulation.resimulation_check`,
:class:`~mcpkit.mpec.resimulation.HorizonResult`) in :mod:`mcpkit.mpec.resimulation`; the package
:mod:`mcpkit.mpec` exports all of them.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import casadi as ca
import numpy as np

from mcpkit.errors import BoundsError, MCPInputError, NonFiniteError, ShapeError
from mcpkit.lowering.casadi import CasadiMCP, MCPToMPCC, SlackMap, lower_to_casadi
from mcpkit.models.stepping import SimulationResult
from mcpkit.mpcc import MPCC, MPCCSolver
from mcpkit.mpec.horizon_printing import horizon_blocks
from mcpkit.mpec.resimulation import (
    HorizonResult,
    Simulator,
    forward_simulate,
    resimulation_check,
    run_simulator,
)
from mcpkit.mpec.step import PathConstraint, StepSpec, as_box, as_column, as_scalar
from mcpkit.problems.arrays import as_count, as_float_vector, as_positive
from mcpkit.solving.progress import display

__all__ = [
    "HORIZON_IPOPT_OPTIONS",
    "HORIZON_SOLVE_OPTIONS",
    "Horizon",
    "LIFT_DESIGN_MIN_STEPS",
    "TIGHT_SIGMA0",
    "with_horizon_ipopt_options",
]


TIGHT_SIGMA0 = 1e-2
r"""A first relaxation parameter :math:`\sigma_0` for horizons started from a forward simulation.

:meth:`Horizon.solve`'s initial guess is a forward simulation, so every step's pairs are
complementary there (to the per-step tolerance) and only the plan's own conditions (targets,
costs) are missed. The MPCC solver's default first relaxation :math:`G_j H_j \le \sigma_0 = 1`
(made for starting points with no such structure) lets the first subproblem leave that point
for a relaxed optimum far from complementarity, and the next ones spend hundreds of IPOPT
iterations (or are declared locally infeasible) coming back. A tight start is faster but
explores less, so it is the planner's choice, by measurement (2026-11-27, whole call, one
process each, ``benchmarks/bench_horizon_length.py``, :math:`\sigma_0 = 1` against
:math:`10^{-2}`):

* the block (:func:`~mcpkit.mpec.examples.block.solve_block`) uses it: N = 100 / 200 / 400
  took 18 s / not solved in 90 s / not solved, and take 1.6 / 18.5 / 51 s, at the closed
  form's optimum (2.3 / 6.8 / 5.5 s since it also uses the equality form, ``scholtes_eq``);
* the plate design keeps :math:`\sigma_0 = 1`: N = 50 / 100 / 200 took 11 / 28 / 95 s against
  6.6 / 21 / 13 s, but the three-radius design ended at :math:`J = 2.5 \cdot 10^{-3}` against
  :math:`4.2 \cdot 10^{-6}`;
* pushing keeps :math:`\sigma_0 = 1`: its default tasks were faster (N = 50 / 100: 27 / 73 s
  against 6.9 / 24 s), but its ECP relaxations are fragile at every :math:`\sigma` (IPOPT's
  step computation fails), and the tight start lost the N = 20 test task (solved with
  :math:`\sigma_0 = 1` by the final polish) and the stuck-phase check of one multi-start goal.
  From N = 50 on, :func:`~mcpkit.mpec.examples.pushing.solve_pushing` plans by continuation:
  a 25-step plan extended by rest steps is complementary, and the long horizon starts from it
  with this :math:`\sigma_0`.
"""

HORIZON_IPOPT_OPTIONS: dict[str, Any] = {"mumps_pivtol": 1e-8}
r"""IPOPT settings of the block planner (:func:`with_horizon_ipopt_options`; the caller's
``ipopt_options`` win); the plate design and pushing keep IPOPT's defaults and the layout blocked
by kind (below: their plans were worse in stage order).

MUMPS's relative pivot threshold ``mumps_pivtol`` (IPOPT's default :math:`10^{-6}`) lowered to
:math:`10^{-8}`: fewer delayed pivots, so less fill and fewer factorisations per iteration, and a
different (here shorter) path. Measured 2026-11-28 on the stage-ordered horizons, whole planner
calls, one process each, IPOPT iterations (all subproblems and the polish), CPU seconds of the
process and plan objective, against the blocked layout with IPOPT's defaults (``old``); wall
times were 5-15x the CPU times on the shared machine and are not compared:

* block (:func:`~mcpkit.mpec.examples.block.solve_block`), N = 10 / 200 / 400: 37 / 365 / 219
  iterations against 3,029 / 708 / 216, 6.1 / 6.3 s CPU against 8.6 / 7.2 s at N = 200 / 400,
  the same objectives (324.066523 at N = 200, 324.060898 at N = 400; 327.089 at N = 10);
* plate (:func:`~mcpkit.mpec.examples.plate_design.solve_plate_design`, one period), N = 200:
  201 / 261 iterations against 251 / 343, 9.0 / 20.0 s CPU against 10.2 / 22.4 s, but
  J = 4.22e-6 / 4.74e-6 against 4.00e-6 / 4.31e-6 (5 % and 10 % worse; the stage order with
  IPOPT's defaults: N = 200 not solved in 120 s, N = 400 J = 4.69e-6): the plate keeps the
  blocked layout and IPOPT's defaults;
* pushing without continuation, N = 20 (the test task) / 50: 6,880 / 5,085 iterations against
  9,811 / 4,908, f = 0.686510 / 0.875878 against 0.730826 / 0.875877, 33.0 s CPU against 23.6 s
  at N = 50: mixed, so pushing (which plans N >= 50 by continuation) keeps IPOPT's defaults.

The stage order alone (IPOPT's defaults) was worse: block N = 10 ended at a worse local minimum
(f = 438.3), block and plate N = 200 were not solved within 120 s. Not in the settings,
``mu_strategy=adaptive`` (also with ``mu_oracle=quality-function``): 3-4x fewer iterations for
pushing at N = 50 / 100 (1,160 / 1,531 against 4,908 / 5,496 for ``old``, the same f to 2e-6),
but the N = 20 pushing task was no longer solved, block N = 400 took 821 iterations instead of
219, plate N = 100 346-405 instead of 120 and plate N = 400 was not solved (1,018 iterations, J =
0.067). MUMPS orderings that CasADi's IPOPT accepts (``mumps_pivot_order``): 0 AMD, 2 AMF, 5
METIS, 6 QAMD and 7 automatic; 3 (SCOTCH) and 4 (PORD) fall back to the default, 1 fails.

**Where the long block horizons spent their time** (2026-11-28, ``result.mpcc.trace`` of
``solve_block(BlockTask(n_steps=800))``, IPOPT's own log): 2,161 IPOPT iterations and 142 s of
CPU. The cold first subproblem (:math:`\sigma = 10^{-2}`) took 61 iterations but about 33 s of
CPU, 0.55 s each: IPOPT's inertia correction raised the Hessian regularisation up to
:math:`10^{20}` and MUMPS reallocated its memory, so an iteration factorised the KKT matrix many
times (a well-conditioned iteration of the same matrix costs about 50 ms). The first warm
subproblem (:math:`\sigma = 10^{-3}`) took 1,724 iterations, 1,700 of them in IPOPT's
restoration phase: it started at a dual infeasibility of 812, because the multipliers of the rows
:math:`G_j H_j/\sigma - 1` were passed on unchanged while :math:`\sigma` fell tenfold (each row ten
times steeper). With those multipliers scaled (:data:`HORIZON_SOLVE_OPTIONS`) that subproblem
starts at 2e-8 and takes 127 iterations; the whole call 335 iterations and 53 s of CPU, at the
same plan (f = 324.0594914, S). Most of what is left is the cold first subproblem. Tried on it
at N = 800 and not adopted: :math:`\sigma_0 = 1.25 \cdot 10^{-3}` or :math:`10^{-4}` (the cold
subproblem got harder; cut by the first-step budget), ``bound_push = bound_frac = 1e-8`` (2
iterations in 138 s of wall time), the cold start with the warm-start settings, ``mu_init =
1e-3`` and ``mu_strategy = adaptive`` (none finished within 70-130 s of CPU), ``mumps_pivot_order
= 5`` (METIS; 732 iterations, 57 s of CPU), and at N = 400 a start from the 100-step plan's
controls (25.9 s of CPU against 5.4 s, f higher by 2e-4).
"""


HORIZON_SOLVE_OPTIONS: dict[str, Any] = {"scale_warm_multipliers": True, "polish_trigger": 1e-4}
r"""Homotopy settings of the block planner (:func:`with_horizon_ipopt_options`; the caller's
options win), measured with :data:`HORIZON_IPOPT_OPTIONS`:

* ``scale_warm_multipliers``: each warm-started Scholtes subproblem starts from the previous
  multipliers of the rows :math:`G_j H_j/\sigma - 1` times :math:`\sigma_{\rm new}/\sigma_{\rm
  old}` (:class:`~mcpkit.solving.options.SolveOptions`). Unscaled, the first warm subproblem of
  the 800-step block started at a dual infeasibility of 812 (ten times the multipliers of the
  products) and spent 1,724 of the call's 2,161 IPOPT iterations, most in IPOPT's restoration
  phase; scaled, it starts at 2e-8 and takes 127;
* ``polish_trigger`` :math:`10^{-4}` (the engine's default :math:`10^{-2}`): the active-set
  polish tried at a residual of a few :math:`10^{-3}` (at :math:`\sigma = 10^{-4}`) failed at
  every N measured (the active set is not settled there: locally infeasible after 206 / 70 / 23
  iterations at N = 200 / 400 / 800); the polish after the last relaxation solves the plan.

Same objectives at every N measured. Not solved by them: at N = 1,000 the cold call took 5,170
iterations (380 s of CPU; 2,361 with :data:`HORIZON_IPOPT_OPTIONS` alone, measured apart), and
N = 1,600 was not solved (``docs/mpec_planning.md``). Above 200 steps the block planner now starts
from coarser grids instead (:mod:`mcpkit.mpec.grid_continuation`), which skips that cold first
subproblem on the long grid.
"""


def with_horizon_ipopt_options(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` over :data:`HORIZON_SOLVE_OPTIONS`, with ``ipopt_options`` =
    :data:`HORIZON_IPOPT_OPTIONS` under the caller's ``ipopt_options``; a whole ``SolveOptions``
    passed as ``options=`` is taken as it is (as the plate planner's penalty defaults are)."""
    if options.get("options") is not None:
        return dict(options)
    out = {**HORIZON_SOLVE_OPTIONS, **options}
    out["ipopt_options"] = {**HORIZON_IPOPT_OPTIONS, **(options.get("ipopt_options") or {})}
    return out


#: From this many steps on, :class:`Horizon` gives every step its own copy of the design
#: (``lift_design=None``). Pushing's mean cost of an IPOPT iteration with one :math:`\theta`
#: against the copies: 3.6 / 3.1 ms at N = 50, 32 / 5.0 ms at N = 100, up to 300 / 10-15 ms at
#: N = 200 (2026-11-27). Below N = 100 the gain is small, and the homotopy's path on the short
#: pushing and plate tasks moves with the formulation (with copies the N = 20 pushing task was no
#: longer solved from its default start, and N = 25 took 22 s instead of 4.6 s).
LIFT_DESIGN_MIN_STEPS = 100


class Horizon:
    r"""The stacked horizon MPCC of the module docstring, built once.

    Parameters
    ----------
    spec
        The symbolic step.
    n_steps
        :math:`N \ge 1` steps (states :math:`x_0..x_N`).
    x_initial
        :math:`\bar x_0` (fixed, finite).
    control_bounds
        ``(lo, hi)``: scalars, ``n_control`` values, or ``(N, n_control)`` arrays.
    design_bounds
        ``(lo, hi)`` for :math:`\theta` (``n_design`` values or scalars).
    terminal_bounds
        ``(lo, hi)`` box on :math:`x_N` (equal entries = terminal equality; ``None`` = free).
    state_bounds
        ``(lo, hi)`` box on every :math:`x_k`, :math:`k \ge 1` (``None`` = free).
    stage_cost
        ``l(x_k, u_k, theta, z_k, k) -> scalar`` (CasADi); default 0.
    terminal_cost
        ``l_N(x_N, theta) -> scalar``; default 0.
    path
        Path constraints applied at every step.
    t0
        Initial time.
    lift_design
        ``True``: every step has its own copy :math:`\theta_k` of the design, tied by
        :math:`\theta_{k+1} = \theta_k`; ``False``: one :math:`\theta`; ``None`` (default):
        copies from :data:`LIFT_DESIGN_MIN_STEPS` steps on. The MPCC is the same either way,
        but a single :math:`\theta` enters every step's rows: a dense column of the constraint
        Jacobian and a dense row and column of IPOPT's KKT matrix, whose factors MUMPS's
        pivoting then fills. Pushing at N = 200 took up to 300 ms per IPOPT iteration with one
        :math:`\theta` and 10-15 ms with the copies (a banded KKT matrix).

    stage_order
        ``True`` (default): variables and rows stage by stage (module docstring); ``False``: blocked
        by kind (all states, all controls, the design, all step variables; all step rows, all
        dynamics, all path rows, the copy rows), the layout before the stage order, kept for the
        pushing planner (:func:`~mcpkit.mpec.examples.pushing.pushing_horizon`).

    Attributes
    ----------
    layout, rows
        Positions (integer arrays) of the variable blocks ``x, u, theta, theta_copies, s`` and the
        row blocks ``step, dynamics, path, design`` in the stage-ordered decision vector and rows
        (:meth:`_stage_order`), each block's entries step-major, as :meth:`unpack` reads them.
    """

    def __init__(
        self,
        spec: StepSpec,
        n_steps: int,
        x_initial: Any,
        *,
        control_bounds: tuple[Any, Any] = (-math.inf, math.inf),
        design_bounds: tuple[Any, Any] = (-math.inf, math.inf),
        terminal_bounds: tuple[Any, Any] | None = None,
        state_bounds: tuple[Any, Any] | None = None,
        stage_cost: Callable[..., Any] | None = None,
        terminal_cost: Callable[..., Any] | None = None,
        path: list[PathConstraint] | None = None,
        t0: float = 0.0,
        lift_design: bool | None = None,
        stage_order: bool = True,
    ) -> None:
        if not isinstance(spec, StepSpec):
            raise MCPInputError(f"Horizon needs a StepSpec, got {type(spec).__name__}")
        self.spec = spec
        self.N = N = as_count(n_steps, "n_steps", minimum=1)
        nx, nth = spec.n_state, spec.n_design
        self.x_initial = as_float_vector(x_initial, nx, "x_initial", allow_inf=False)
        self.u_lo, self.u_hi = self._control_box(control_bounds)
        self.th_lo, self.th_hi = as_box(*self._pair(design_bounds, "design_bounds"), nth, "design_bounds")
        tb = (-math.inf, math.inf) if terminal_bounds is None else terminal_bounds
        self.xT_lo, self.xT_hi = as_box(*self._pair(tb, "terminal_bounds"), nx, "terminal_bounds")
        sb = (-math.inf, math.inf) if state_bounds is None else state_bounds
        self.x_lo, self.x_hi = as_box(*self._pair(sb, "state_bounds"), nx, "state_bounds")
        for fn, what in ((stage_cost, "stage_cost"), (terminal_cost, "terminal_cost")):
            if fn is not None and not callable(fn):
                raise MCPInputError(f"{what} must be callable or None")
        self.stage_cost = stage_cost
        self.terminal_cost = terminal_cost
        self.path = list(path or [])
        for pc in self.path:
            if not isinstance(pc, PathConstraint) or not callable(pc.fn):
                raise MCPInputError("path must be a list of PathConstraint with a callable fn")
        try:
            self.t0 = float(t0)
        except (TypeError, ValueError):
            raise MCPInputError(f"t0 must be a number, got {t0!r}") from None
        if not math.isfinite(self.t0):
            raise NonFiniteError("t0 must be finite")
        if lift_design is not None and not isinstance(lift_design, bool):
            raise MCPInputError(f"lift_design must be True, False or None, got {lift_design!r}")
        if lift_design is None:
            lift_design = N >= LIFT_DESIGN_MIN_STEPS
        if not isinstance(stage_order, bool):
            raise MCPInputError(f"stage_order must be True or False, got {stage_order!r}")
        self.stage_order = stage_order
        #: copies of the design in the decision vector: N when lifted (and there is a design), else 1
        self.n_design_copies = N if (lift_design and nth and N > 1) else 1
        self.t = self.t0 + spec.h * np.arange(N + 1)
        t_build = time.perf_counter()
        self._build()
        self.build_time_s = time.perf_counter() - t_build

    # ---------------------------------------------------------------- helpers
    @staticmethod
    def _pair(value: Any, what: str) -> tuple[Any, Any]:
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            raise MCPInputError(f"{what} must be a pair (lo, hi), got {value!r}")
        return value[0], value[1]

    def _control_box(self, bounds: tuple[Any, Any]) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = self._pair(bounds, "control_bounds")
        N, nu = self.N, self.spec.n_control
        out = []
        for v, what in ((lo, "lower"), (hi, "upper")):
            a = np.asarray(v, dtype=float)
            if a.ndim == 2:
                if a.shape != (N, nu):
                    raise ShapeError(f"control_bounds {what}: expected shape ({N}, {nu}), got {a.shape}")
                out.append(a.reshape(-1))
            else:
                out.append(np.tile(as_float_vector(a, nu, f"control_bounds {what}", allow_inf=True), N))
        return as_box(out[0], out[1], N * nu, "control_bounds")

    # ---------------------------------------------------------------- build
    def _build(self) -> None:
        spec, N = self.spec, self.N
        nx, nu, nth = spec.n_state, spec.n_control, spec.n_design
        cm: CasadiMCP = lower_to_casadi(spec.mcp)
        step, smap = MCPToMPCC().apply(cm)
        self.casadi_mcp, self.step_mpcc = cm, step
        self.slack_map: SlackMap = smap
        nxs = int(step.x.numel())
        fstep = ca.Function("horizon_step", [step.x, step.p], [step.g, step.G, step.H])
        nz = cm.n
        self.n_step_vars = nxs
        X = ca.SX.sym("x", nx, N + 1)
        U = ca.SX.sym("u", nu, N)
        nlift = self.n_design_copies
        THL = ca.SX.sym("theta", nth, nlift)  # column k: the design copy of step k (one column unlifted)
        XS = ca.SX.sym("s", nxs, N)
        dec = ca.vertcat(ca.vec(X), ca.vec(U), ca.vec(THL), ca.vec(XS))  # blocked; permuted below
        o_u = nx * (N + 1)
        o_th = o_u + nu * N
        o_s = o_th + nth * nlift
        lbx = np.concatenate(
            [
                self.x_initial, np.tile(self.x_lo, N - 1), self.xT_lo if N else [],
                self.u_lo, np.tile(self.th_lo, nlift), np.tile(step.lbx, N),
            ]
        )  # fmt: skip
        ubx = np.concatenate(
            [
                self.x_initial, np.tile(self.x_hi, N - 1), self.xT_hi if N else [],
                self.u_hi, np.tile(self.th_hi, nlift), np.tile(step.ubx, N),
            ]
        )  # fmt: skip
        # terminal box intersected with the state box
        sl = slice(nx * N, nx * (N + 1))
        lbx[sl] = np.maximum(lbx[sl], self.x_lo)
        ubx[sl] = np.minimum(ubx[sl], self.x_hi)
        if np.any(lbx > ubx):
            raise BoundsError("terminal_bounds and state_bounds do not intersect")
        g_path: list[ca.SX] = []
        lbg_path, ubg_path = [], []
        f = ca.SX(0.0)
        # the step's functions on all N stages at once (one call each, not 3 N), stage k in column k
        Xc, Uc, Sc, Tc = (ca.horzsplit(M) for M in (X, U, XS, THL))
        TH = ca.horzcat(*[Tc[min(k, nlift - 1)] for k in range(N)])  # step k's design copy
        tk = ca.DM(np.asarray(self.t[:N], dtype=float)).T
        P = spec.param_fun.map(N)(X[:, :N], U, TH, tk)
        gm, Gm, Hm = fstep.map(N)(XS, P)
        Phi = spec.update_fun.map(N)(X[:, :N], XS[:nz, :], U, TH, tk)
        g_step, G, H, g_dyn = [ca.vec(gm)], [ca.vec(Gm)], [ca.vec(Hm)], [ca.vec(X[:, 1:] - Phi)]
        for k in range(N):
            xk, uk, sk = Xc[k], Uc[k], Sc[k]
            thk = Tc[min(k, nlift - 1)]
            for j, pc in enumerate(self.path):
                c = as_column(pc.fn(xk, uk, thk), f"path constraint {j}")
                g_path.append(c)
                lbg_path.append(as_float_vector(pc.lb, c.numel(), f"path constraint {j} lb", allow_inf=True))
                ubg_path.append(as_float_vector(pc.ub, c.numel(), f"path constraint {j} ub", allow_inf=True))
                if np.any(lbg_path[-1] > ubg_path[-1]):
                    raise BoundsError(f"path constraint {j}: lb > ub")
            if self.stage_cost is not None:
                f = f + as_scalar(self.stage_cost(xk, uk, thk, sk[:nz], k), "stage_cost")
        if self.terminal_cost is not None:
            f = f + as_scalar(self.terminal_cost(X[:, N], THL[:, nlift - 1]), "terminal_cost")  # last copy
        m_step = int(step.g.numel())
        self.rows = {
            "step": slice(0, m_step * N),
            "dynamics": slice(m_step * N, m_step * N + nx * N),
        }
        self.rows["path"] = slice(
            self.rows["dynamics"].stop, self.rows["dynamics"].stop + sum(int(c.numel()) for c in g_path)
        )
        g_lift = [ca.vec(THL[:, 1:] - THL[:, :-1])] if nlift > 1 else []  # one design (lift_design)
        nl = nth * (nlift - 1)
        self.rows["design"] = slice(self.rows["path"].stop, self.rows["path"].stop + nl)
        g = ca.vertcat(*g_step, *g_dyn, *g_path, *g_lift)
        lbg = np.concatenate([np.tile(step.lbg, N), np.zeros(nx * N), *lbg_path, np.zeros(nl)])
        ubg = np.concatenate([np.tile(step.ubg, N), np.zeros(nx * N), *ubg_path, np.zeros(nl)])
        # stage order: the blocks above were stacked kind by kind; permute them stage by stage
        order, rorder = self._stage_order(nxs, m_step, sum(int(c.numel()) for c in g_path) // N)
        if not self.stage_order:  # blocked by kind, as stacked above
            order, rorder = np.sort(order), np.sort(rorder)
        inv, rinv = np.argsort(order), np.argsort(rorder)
        self.layout = {
            "x": inv[:o_u], "u": inv[o_u:o_th], "theta": inv[o_th : o_th + nth],
            "theta_copies": inv[o_th:o_s], "s": inv[o_s:],
        }  # fmt: skip
        self.rows = {name: rinv[sl] for name, sl in self.rows.items()}
        self._order = order
        dec, lbx, ubx = dec[order.tolist()], lbx[order], ubx[order]
        g, lbg, ubg = g[rorder.tolist()], lbg[rorder], ubg[rorder]
        x0 = np.clip(np.zeros(dec.numel()), lbx, ubx)
        self.mpcc = MPCC(
            x=dec, p=ca.SX(0, 1), f=f, g=g, lbg=lbg, ubg=ubg, lbx=lbx, ubx=ubx,
            G=ca.vertcat(*G), H=ca.vertcat(*H), x0=x0, p0=np.zeros(0),
            G_implied_by_bounds=step.G_implied_by_bounds, H_implied_by_bounds=step.H_implied_by_bounds,
            name=f"horizon_{spec.mcp.name}_N{N}", blocks=lambda: horizon_blocks(self),
        )  # fmt: skip

    def _stage_order(self, nxs: int, m_step: int, n_path: int) -> tuple[np.ndarray, np.ndarray]:
        r"""Stage order of the decision vector and the rows, as positions in the blocked stacking.

        Variables :math:`(x_k, u_k, \theta_k, s_k)_{k<N}`, then :math:`x_N`, then a single
        :math:`\theta` (only when the design is not copied per step); rows, per step
        :math:`k`: the step MPCC's rows, the path rows, the dynamics
        :math:`x_{k+1} - \Phi(x_k, \dots) = 0` and (copies, :math:`k < N-1`) the copy row
        :math:`\theta_{k+1} - \theta_k = 0`. The blocked stacking is
        :math:`(X, U, \Theta, S)` and (step rows, dynamics, path, copy rows), each step-major.
        The dynamics (and the copy rows) are then the only rows that reach past a stage, so
        the KKT matrix is block-banded in this order.
        """
        N, nx, nu, nth = self.N, self.spec.n_state, self.spec.n_control, self.spec.n_design
        nlift = self.n_design_copies
        o_u = nx * (N + 1)
        o_th = o_u + nu * N
        o_s = o_th + nth * nlift
        k = np.arange(N)[:, None]
        cols = [k * nx + np.arange(nx), o_u + k * nu + np.arange(nu)]
        if nlift > 1:
            cols.append(o_th + k * nth + np.arange(nth))
        cols.append(o_s + k * nxs + np.arange(nxs))
        tail = [N * nx + np.arange(nx)] + ([o_th + np.arange(nth)] if nlift == 1 else [])
        order = np.concatenate([np.hstack(cols).reshape(-1), *tail])
        r_dyn = m_step * N
        r_path = r_dyn + nx * N
        r_des = r_path + n_path * N
        body = np.hstack([k * m_step + np.arange(m_step), r_path + k * n_path + np.arange(n_path),
                          r_dyn + k * nx + np.arange(nx)])  # fmt: skip
        rows: list[np.ndarray] = []
        for j in range(N):
            rows.append(body[j])
            if nlift > 1 and j < N - 1:
                rows.append(r_des + j * nth + np.arange(nth))
        rorder = np.concatenate(rows) if rows else np.zeros(0, dtype=int)
        return order.astype(int), rorder.astype(int)

    # ---------------------------------------------------------------- printing
    def to_text(self, **kwargs: Any) -> str:
        """The horizon MPCC as text: one step's blocks "for k = 0, …, N-1", the boundary conditions
        and the objective (:meth:`mcpkit.mpcc.MPCC.to_text`); as many lines for any :math:`N`."""
        return self.mpcc.to_text(**kwargs)

    def to_latex(self, **kwargs: Any) -> str:
        """LaTeX of :meth:`to_text`."""
        return self.mpcc.to_latex(**kwargs)

    def _repr_latex_(self) -> str:
        return f"$${self.to_latex()}$$"

    def explain(self, **kwargs: Any) -> str:
        """Prose explanation of the horizon MPCC (:meth:`mcpkit.mpcc.MPCC.explain`)."""
        return self.mpcc.explain(**kwargs)

    # ---------------------------------------------------------------- pack / unpack
    def unpack(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """Split a decision vector into ``states, controls, design, s`` (``s``: step (z, w, v))."""
        spec, N = self.spec, self.N
        xv = np.asarray(x, dtype=float).reshape(-1)
        if xv.shape != (int(self.mpcc.x.numel()),):
            raise ShapeError(f"decision vector must have {int(self.mpcc.x.numel())} entries, got {xv.shape}")
        L = self.layout
        return {
            "states": xv[L["x"]].reshape(N + 1, spec.n_state),
            "controls": xv[L["u"]].reshape(N, spec.n_control),
            "design": xv[L["theta"]].copy(),
            "s": xv[L["s"]].reshape(N, self.n_step_vars),
        }

    def pack(self, states: np.ndarray, controls: np.ndarray, design: np.ndarray, s: np.ndarray) -> np.ndarray:
        """Inverse of :meth:`unpack`: the decision vector in stage order (:attr:`layout`)."""
        blocked = np.concatenate(
            [
                np.asarray(states, dtype=float).reshape(-1),
                np.asarray(controls, dtype=float).reshape(-1),
                np.tile(np.asarray(design, dtype=float).reshape(-1), self.n_design_copies),
                np.asarray(s, dtype=float).reshape(-1),
            ]
        )
        return blocked[self._order]

    def _controls(self, U: Any, what: str) -> np.ndarray:
        N, nu = self.N, self.spec.n_control
        a = np.asarray(U, dtype=float)
        if a.ndim <= 1 and a.size in (1, nu) and nu > 0:
            a = np.tile(a.reshape(-1) if a.size == nu else np.full(nu, float(a.reshape(-1)[0])), (N, 1))
        if nu == 0:
            a = np.zeros((N, 0))
        if a.shape != (N, nu):
            raise ShapeError(f"{what}: expected shape ({N}, {nu}), got {a.shape}")
        if not np.isfinite(a).all():
            raise NonFiniteError(f"{what}: contains NaN or inf")
        return a

    def simulate(self, controls: Any, design: Any = (), **options: Any) -> SimulationResult:
        """Per-step simulation of ``controls`` ``(N, n_control)`` (see :func:`forward_simulate`)."""
        U = self._controls(controls, "controls")
        th = as_float_vector(design if np.size(design) else np.zeros(self.spec.n_design), self.spec.n_design,
                     "design", allow_inf=False)  # fmt: skip
        return forward_simulate(self.spec, self.x_initial, U, th, t0=self.t0, **options)

    def initial_guess(
        self, controls: Any, design: Any = (), *, deadline: float | None = None, **options: Any
    ) -> np.ndarray:
        """Decision vector from a forward simulation of ``controls`` (slacks lifted from ``F``;
        rows not simulated by ``deadline`` repeat the last simulated one).

        When ``deadline`` (a ``time.perf_counter()`` value) has passed before the call, nothing
        is simulated: every state is :math:`\bar x_0` and every step's variables are the first
        step's lift at the MCP's start point (one evaluation of ``F`` instead of a step solver's
        build and one per step), so a call whose time limit the build used up returns at once."""
        U = self._controls(controls, "initial controls")
        th = as_float_vector(design if np.size(design) else np.zeros(self.spec.n_design), self.spec.n_design,
                     "initial design", allow_inf=False)  # fmt: skip
        if deadline is not None and time.perf_counter() >= deadline:
            return self._unsimulated_guess(U, th)
        sim = forward_simulate(self.spec, self.x_initial, U, th, t0=self.t0, deadline=deadline, **options)
        X, Z = sim.states, sim.z
        last = X[np.isfinite(X).all(axis=1)][-1]
        X = np.where(np.isfinite(X), X, last)
        zlast = Z[np.isfinite(Z).all(axis=1)]
        zfill = zlast[-1] if zlast.size else self.casadi_mcp.z0
        Z = np.where(np.isfinite(Z), Z, zfill)
        S = np.zeros((self.N, self.n_step_vars))
        for k in range(self.N):
            p = self.spec.p_value(X[k], U[k], th, float(self.t[k]))
            F = np.asarray(self.casadi_mcp.F_fun(Z[k], p), dtype=float).reshape(-1)
            S[k] = MCPToMPCC.lift(Z[k], F, self.slack_map)
        x0 = self.pack(X, U, th, S)
        return np.clip(x0, self.mpcc.lbx, self.mpcc.ubx)

    def _unsimulated_guess(self, U: np.ndarray, th: np.ndarray) -> np.ndarray:
        r"""The guess without a simulation: :math:`x_k = \bar x_0`, every step's variables the
        lift of step 0 at the MCP's start point :math:`z^0` (clipped to the bounds)."""
        X = np.tile(self.x_initial, (self.N + 1, 1))
        z0 = np.asarray(self.casadi_mcp.z0, dtype=float).reshape(-1)
        p = self.spec.p_value(X[0], U[0], th, float(self.t[0]))
        F = np.asarray(self.casadi_mcp.F_fun(z0, p), dtype=float).reshape(-1)
        S = np.tile(MCPToMPCC.lift(z0, F, self.slack_map), (self.N, 1))
        return np.clip(self.pack(X, U, th, S), self.mpcc.lbx, self.mpcc.ubx)

    # ---------------------------------------------------------------- solve
    def solve(
        self,
        controls0: Any,
        design0: Any = (),
        *,
        method: str = "scholtes",
        tol: float = 1e-6,
        deviation_tol: float = 1e-4,
        simulator: Simulator | None = None,
        step_options: dict[str, Any] | None = None,
        backend: str = "casadi",
        warm: bool = False,
        **options: Any,
    ) -> HorizonResult:
        r"""Plan from a forward simulation of ``controls0``, solve the MPCC, re-simulate the plan.

        Parameters
        ----------
        controls0, design0
            Initial controls ``(N, n_control)`` (or one row) and design for the initial guess.
        method, backend, tol, **options
            :class:`~mcpkit.mpcc.MPCCSolver` method, backend (``"casadi"``, default, or
            ``"pyomo"``; pass ``ipopt=`` to choose the Pyomo backend's IPOPT) and options
            (``sigma0=``\ :data:`TIGHT_SIGMA0` starts the relaxation near the complementary
            initial guess; recovery and polish on by default; so is the B-stationarity refinement of
            :mod:`mcpkit.stationarity.refine`, ``refine=False`` or a
            :class:`~mcpkit.stationarity.refine.RefineOptions` to change it; the plan's class is
            ``result.mpcc.stationarity``). The block and plate planners pass
            :data:`HORIZON_IPOPT_OPTIONS` (:func:`with_horizon_ipopt_options`).
        deviation_tol
            The plan passes the re-simulation check when
            :math:`\max|x^{\rm sim} - x^{\rm plan}| \le` ``deviation_tol`` (state units).
        simulator
            ``simulate(U, theta) -> states`` used for the re-simulation; default: the per-step
            :class:`mcpkit.Solver` on this :class:`StepSpec` (:meth:`simulate`).
        step_options
            Options of the per-step solver (initial guess and default re-simulation).
        warm
            ``True`` when ``controls0``, ``design0`` come from a plan of the same task (for
            example one mapped from a coarser grid, :mod:`mcpkit.mpec.grid_continuation`): the
            MPCC solve first polishes on the active set the initial guess predicts, then runs
            the homotopy with the warm-start IPOPT settings (``MPCCSolver.solve(warm=True)``).

        A ``time_limit`` in ``options`` bounds the whole call: the initial simulation stops at
        it (rows not simulated repeat the last one), the MPCC solve gets what is left (its checks
        included), and a re-simulation that does not fit is recorded as not checked
        (``result.resim.not_checked``; the plan is then not called solved).
        """
        dtol = as_positive(deviation_tol, "deviation_tol")
        t_call = time.perf_counter()
        solver = MPCCSolver(self.mpcc, method, backend=backend, tol=tol, **options)
        # the time limit bounds the whole plan: initial simulation, MPCC solve and re-simulation
        limit = solver.options.time_limit
        deadline = None if limit is None else t_call + limit
        sopts = dict(step_options or {})
        # progress=True: one line over the whole plan (guess, MPCC solve, re-simulation)
        with display(solver.options.progress, self.mpcc.name):
            t_guess = time.perf_counter()
            x0 = self.initial_guess(controls0, design0, deadline=deadline, **sopts)
            guess_time = time.perf_counter() - t_guess
            left = None if deadline is None else max(deadline - time.perf_counter(), 0.0)
            res = solver.solve(x0=x0, time_limit=left, warm=warm)
            Xs, late, resim_time, Xp, Up, th, Zp = self._resimulate(res, x0, simulator, deadline, sopts)
        check = resimulation_check(Xs, Xp, dtol, wall_time_s=resim_time)
        if late or (deadline is not None and not np.isfinite(Xs).all() and time.perf_counter() >= deadline):
            check = replace(check, not_checked="time limit: the plan was not re-simulated in full")
        return HorizonResult(
            t=self.t.copy(), states=Xp.copy(), controls=Up.copy(), design=th.copy(), z=Zp.copy(),
            objective=float(res.f), mpcc=res, resim_states=Xs, resim=check,
            solve_time_s=float(res.wall_time_s), build_time_s=self.build_time_s,
            guess_time_s=guess_time, resim_time_s=resim_time, blocks=self.spec.blocks,
        )  # fmt: skip

    def _resimulate(
        self,
        res: Any,
        x0: np.ndarray,
        simulator: Simulator | None,
        deadline: float | None,
        sopts: dict[str, Any],
    ) -> tuple[np.ndarray, bool, float, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The plan's parts and its re-simulation (NaN rows when the deadline has passed):
        ``(Xs, late, resim_time, states, controls, design, z)``."""
        parts = self.unpack(res.x if np.isfinite(res.x).all() else x0)
        Xp, Up, th = parts["states"], parts["controls"], parts["design"]
        Zp = parts["s"][:, : self.casadi_mcp.n]
        t_sim = time.perf_counter()
        late = deadline is not None and t_sim >= deadline
        if late:
            Xs = np.full_like(Xp, np.nan)
        elif simulator is None:
            Xs = self.simulate(Up, th, deadline=deadline, **sopts).states
        else:
            Xs = run_simulator(simulator, Up, th, deadline)
            if Xs.shape != Xp.shape:
                raise ShapeError(f"simulator returned shape {Xs.shape}, expected {Xp.shape}")
        resim_time = time.perf_counter() - t_sim
        return Xs, late, resim_time, Xp, Up, th, Zp
