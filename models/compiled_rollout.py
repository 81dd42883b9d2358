r"""Whole trajectories of a declared step model in one compiled CasADi call (issue 46).

A :class:`~mcpkit.models.stepping.DeclaredStep` takes, per step :math:`k`,

.. math::
    p_k = P(x_k, u_k, \theta, t_k; c),\qquad
    l \le z_k \le u \perp F(z_k; p_k),\qquad
    x_{k+1} = \Phi(x_k, z_k, u_k, \theta, t_k; c),

with the model's physical constants :math:`c` (:meth:`~mcpkit.models.stepping.DeclaredStep.constants`,
e.g. the friction coefficient :math:`\mu`). :class:`CompiledRollout` evaluates the model's step
map once on CasADi symbols (:class:`~mcpkit.models.stepping_gradient.StepJacobians`, the code
:func:`~mcpkit.models.stepping.simulate` runs on NumPy) and the step MCP through its CasADi
lowering, and compiles **the step's solver** into the graph:

* the box Fischer–Burmeister function :math:`\Phi_{\rm FB}(z) = 0`, per component
  :math:`F_i` (free), :math:`\phi(z_i - l_i, F_i)` (lower bound),
  :math:`-\phi(u_i - z_i, -F_i)` (upper bound),
  :math:`\phi(z_i - l_i, -\phi(u_i - z_i, -F_i))` (both), with
  :math:`\phi(a, b) = a + b - \sqrt{a^2 + b^2 + \eta^2}` (:math:`\eta` =
  :attr:`RolloutOptions.fb_smoothing`, so that the derivative exists at :math:`a = b = 0`,
  where it takes the element :math:`(1, 1)` of the generalised Jacobian);
* semismooth Newton steps :math:`(J + \lambda I)\,\delta = -\Phi_{\rm FB}` with
  :math:`J = \partial\Phi_{\rm FB}/\partial z` (CasADi's Jacobian of the FB function,
  :math:`\lambda` = :attr:`RolloutOptions.jacobian_shift`, tiny), taken whole when the Armijo
  test on :math:`\tfrac12\lVert\Phi_{\rm FB}\rVert^2` accepts it; only when it does not (a
  conditional call, ``casadi.Function.if_else``) are the lengths
  :math:`\alpha \in \{\tfrac12, \dots, 2^{-L}\}` tried, then the Levenberg–Marquardt direction
  :math:`(J^\top J + \lVert\Phi_{\rm FB}\rVert I)\,\delta = -J^\top\Phi_{\rm FB}` (a singular
  :math:`J`); all trial points of that branch are evaluated and the first acceptable one chosen
  with ``if_else`` (no step when none is: the point stays);
* in blocks of :attr:`RolloutOptions.iterations_per_block` iterations: the first block always
  runs, each further block (up to :attr:`RolloutOptions.blocks`) only while the natural residual
  is above ``tol`` (a conditional call, ``casadi.Function.if_else``, so a converged step costs
  one block); then one full Newton step, kept when it does not raise the merit (it makes the
  derivative that of the implicit function, see below);
* the step's natural residual :math:`\max_i|\max(z_i - u_i, \min(z_i - l_i, F_i))|`
  (:func:`~mcpkit.solving.residuals.natural_residual_vector`), returned with every step.

The solve is warm-started from the previous step's :math:`z`; a converged point is a fixed point
of the iteration (:math:`\Phi_{\rm FB} = 0 \Rightarrow \delta = 0`), so iterations after
convergence change nothing. The K-step rollout is ``step.mapaccum(K)`` and a batch of B rollouts
``rollout.map(B, "thread", threads)``.

**Honest results.** A step whose natural residual exceeds ``tol`` (or is not finite) is not
taken from the compiled call: :func:`rollout` re-solves it with the per-step route of
:func:`~mcpkit.models.stepping.simulate` (the model's ``make_solver`` or :class:`mcpkit.Solver`),
records that it did, and continues the compiled rollout from the re-solved state. A model with
a physical verdict (the Stewart–Trinkle steps' Coulomb residual) is judged on it as well
(:attr:`RolloutOptions.model_check`). :attr:`RolloutResult.solved` is true only when every step
met its tolerance, by either route.

**Derivatives.** The rollout is a CasADi function of :math:`(x_0, U, \theta, c)`; its forward
and reverse derivatives come from CasADi's AD through the fixed iterations
(:meth:`CompiledRollout.jacobian`). At a converged, non-degenerate step the last Newton steps
are full Newton steps (:math:`\alpha = 1`), whose derivative at the
fixed point is the implicit function's, :math:`-J^{-1}\partial_p\Phi_{\rm FB}`, whatever the
derivative of the iterate before. At a stick–slip switch (a degenerate pair,
:math:`z_i - l_i = F_i = 0`) the step's solution map has a kink and the derivative returned is
that of the :math:`(1, 1)` element of the generalised Jacobian, one one-sided derivative.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Any

import casadi as ca
import numpy as np

from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError
from mcpkit.frontends.solve import Solver
from mcpkit.lowering.casadi import lower_to_casadi
from mcpkit.models.stepping import DeclaredStep, control_table
from mcpkit.models.stepping_gradient import StepJacobians
from mcpkit.problems.arrays import as_count, as_real, refuse_text

__all__ = ["CompiledRollout", "RolloutJacobian", "RolloutOptions", "RolloutResult", "rollout"]


@dataclass(frozen=True)
class RolloutOptions:
    """How the step's solver is compiled and how its steps are judged."""

    iterations_per_block: int = 3
    """Damped semismooth Newton iterations per block (fixed: a block has no early exit)."""
    blocks: int = 10
    """Most blocks per step: block 2, 3 ... runs only while the natural residual is above ``tol``
    (a conditional call in the graph), so at most ``blocks * iterations_per_block`` iterations,
    then one full Newton step (kept when it does not raise the merit)."""
    line_search_halvings: int = 4
    """Backtracking step lengths tried after the full step: :math:`2^{-1}, \\dots, 2^{-L}`."""
    tol: float = 1e-10
    """A step counts as solved when its natural residual is at most this."""
    fb_smoothing: float = 1e-20
    r""":math:`\eta` of :math:`\phi(a, b) = a + b - \sqrt{a^2 + b^2 + \eta^2}` (module docstring)."""
    jacobian_shift: float = 1e-14
    r""":math:`\lambda` of the Newton matrix :math:`J + \lambda I` (a singular :math:`J` gives a
    non-finite step, which the line search rejects; this only breaks exact ties)."""
    threads: int = 2
    """Threads of a batch's ``map`` (``"thread"`` parallelisation; 1: serial)."""
    resolve_failed: bool = True
    """Re-solve a step that missed ``tol`` with the per-step route (else only flag it)."""
    model_check: bool = True
    """Also judge every step on the model's physical verdict when it has one
    (``friction_residual``: the Stewart–Trinkle Coulomb residual, in NumPy after the call)."""
    method: str = "auto"
    """Method of the per-step route that re-solves failed steps (:class:`mcpkit.Solver`)."""
    backend: str = "auto"
    """Backend of that route."""

    def __post_init__(self) -> None:
        for name in ("iterations_per_block", "blocks"):
            object.__setattr__(self, name, as_count(getattr(self, name), name))
        object.__setattr__(
            self,
            "line_search_halvings",
            as_count(self.line_search_halvings, "line_search_halvings", minimum=0),
        )
        object.__setattr__(self, "threads", as_count(self.threads, "threads"))
        for name in ("tol", "fb_smoothing", "jacobian_shift"):
            v = as_real(getattr(self, name), name)
            if not (v >= 0 and math.isfinite(v)) or (name == "tol" and v == 0):
                raise MCPInputError(
                    f"RolloutOptions.{name} must be a finite number >= 0 (tol > 0), got {v!r}"
                )
            object.__setattr__(self, name, v)
        for name in ("resolve_failed", "model_check"):
            if not isinstance(getattr(self, name), bool):
                raise MCPInputError(f"RolloutOptions.{name} must be True or False")


@dataclass(repr=False)
class RolloutResult:
    """Trajectories of :func:`rollout`: states, step solutions, residuals and verdicts.

    Arrays carry a leading batch axis ``B`` (1 for a single rollout; :meth:`squeeze` drops it).

    Attributes
    ----------
    t
        Times, shape ``(K+1,)``.
    states
        States, shape ``(B, K+1, n_state)`` (NaN after a step without a finite point).
    z
        Step solutions, shape ``(B, K, n)``.
    residual
        Natural residual of every step, shape ``(B, K)``.
    step_solved
        Every step's verdict (residual within ``tol``, and the model's own check when it has one).
    resolved
        Steps the per-step route re-solved after the compiled call missed ``tol``.
    tol
        The residual tolerance.
    wall_time_s
        Wall time of the whole call (compiled evaluation plus any re-solves).
    compiled_time_s
        Wall time of the compiled evaluations alone.
    """

    t: np.ndarray
    states: np.ndarray
    z: np.ndarray
    residual: np.ndarray
    step_solved: np.ndarray
    resolved: np.ndarray
    tol: float
    blocks: dict[str, slice] = field(default_factory=dict)
    wall_time_s: float = 0.0
    compiled_time_s: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def solved(self) -> bool:
        """Every step of every rollout met its tolerance."""
        return bool(self.step_solved.all())

    @property
    def failed_steps(self) -> np.ndarray:
        """``(rollout, step)`` index pairs of the steps that did not, shape ``(m, 2)``."""
        return np.argwhere(~self.step_solved)

    @property
    def max_residual(self) -> float:
        """Largest step residual (``inf`` when any is not finite)."""
        r = self.residual
        return float(np.inf if not np.isfinite(r).all() else r.max(initial=0.0))

    @property
    def final_states(self) -> np.ndarray:
        """``(B, n_state)``: the last state of every rollout."""
        return self.states[:, -1]

    def block(self, name: str) -> np.ndarray:
        """One variable block of every step, shape ``(B, K, size)``."""
        return self.z[:, :, self.blocks[name]]

    def __repr__(self) -> str:
        B, K = self.residual.shape
        return (
            f"RolloutResult(solved={self.solved}, rollouts={B}, steps={K}, "
            f"max_residual={self.max_residual:.2e} (tol {self.tol:.0e}), "
            f"failed={int((~self.step_solved).sum())}, resolved={int(self.resolved.sum())}, "
            f"wall={self.wall_time_s:.3g}s)"
        )


def _fb(a: ca.SX, b: ca.SX, eta2: float) -> ca.SX:
    r""":math:`\phi(a, b) = a + b - \sqrt{a^2 + b^2 + \eta^2}`."""
    return a + b - ca.sqrt(a * a + b * b + eta2)


def box_fb(z: ca.SX, F: ca.SX, lb: np.ndarray, ub: np.ndarray, eta: float) -> ca.SX:
    r"""The box Fischer–Burmeister function of the module docstring (zero exactly at solutions
    of :math:`l \le z \le u \perp F`, up to the smoothing :math:`\eta`)."""
    e2 = eta * eta
    rows = []
    for i in range(z.numel()):
        lo, hi = math.isfinite(lb[i]), math.isfinite(ub[i])
        if lo and hi:
            rows.append(_fb(z[i] - lb[i], -_fb(ub[i] - z[i], -F[i], e2), e2))
        elif lo:
            rows.append(_fb(z[i] - lb[i], F[i], e2))
        elif hi:
            rows.append(-_fb(ub[i] - z[i], -F[i], e2))
        else:
            rows.append(F[i])
    return ca.vertcat(*rows)


def natural_residual_sx(z: ca.SX, F: ca.SX, lb: np.ndarray, ub: np.ndarray) -> ca.SX:
    r""":math:`\max_i|\max(z_i - u_i, \min(z_i - l_i, F_i))|` on symbols (infinite bounds dropped)."""
    terms = []
    for i in range(z.numel()):
        r = F[i]
        if math.isfinite(lb[i]):
            r = ca.fmin(z[i] - lb[i], r)
        if math.isfinite(ub[i]):
            r = ca.fmax(z[i] - ub[i], r)
        terms.append(ca.fabs(r))
    out = terms[0]
    for r in terms[1:]:
        out = ca.fmax(out, r)
    return out


@dataclass
class NewtonParts:
    """The SX functions of the compiled step solver (:func:`newton_parts`), all ``(z, p) -> ...``."""

    block: ca.Function
    """``iterations_per_block`` damped Newton iterations (line search in the graph)."""
    keep: ca.Function
    """The identity on ``z`` (the skipped branch of a block)."""
    polish: ca.Function
    """One full Newton step, kept when it does not raise the merit; then the natural residual."""
    residual: ca.Function
    """The natural residual."""


def newton_parts(F_fun: ca.Function, lb: np.ndarray, ub: np.ndarray, opt: RolloutOptions) -> NewtonParts:
    r"""The damped semismooth Newton iteration :math:`z \mapsto z + \alpha\delta` on the FB
    function (module docstring) and the pieces a step is assembled from, as SX functions."""
    n, n_p = F_fun.size1_in(0), F_fun.size1_in(1)
    z = ca.SX.sym("z", n)
    p = ca.SX.sym("p", n_p)

    def phi(zz: ca.SX) -> ca.SX:
        return box_fb(zz, F_fun(zz, p), lb, ub, opt.fb_smoothing)

    def merit(zz: ca.SX) -> ca.SX:
        r = phi(zz)
        return 0.5 * ca.dot(r, r)

    r = phi(z)
    J = ca.jacobian(r, z)
    m0 = 0.5 * ca.dot(r, r)
    delta = -ca.solve(J + opt.jacobian_shift * ca.SX.eye(n), r)
    g = ca.mtimes(J.T, r)  # the gradient of the merit
    delta_lm = -ca.solve(ca.mtimes(J.T, J) + ca.sqrt(2.0 * m0) * ca.SX.eye(n), g)
    floor = 0.5 * (1e-3 * opt.tol) ** 2  # a trial point this close to a root is always taken
    alphas = [2.0**-j for j in range(opt.line_search_halvings + 1)]

    def armijo(d: ca.SX, trials: list[float]) -> ca.SX:
        """The first accepted step length along ``d`` (0: none)."""
        slope = ca.dot(g, d)
        step = ca.SX(0.0)
        for a in reversed(trials):
            ma = merit(z + a * d)
            step = ca.if_else(ca.logic_or(ma <= m0 + 1e-4 * a * slope, ma <= floor), a, step)
        return step

    a_n, a_lm = armijo(delta, alphas[1:]), armijo(delta_lm, alphas[::2])
    z_damped = ca.if_else(a_n > 0, z + a_n * delta, ca.if_else(a_lm > 0, z + a_lm * delta_lm, z))
    zn = z + delta
    mn = merit(zn)
    full_ok = ca.logic_or(mn <= m0 + 1e-4 * ca.dot(g, delta), mn <= floor)
    full = ca.Function("fb_newton_full", [z, p], [zn, full_ok])
    zt = ca.SX.sym("z_trial", n)
    take = ca.Function("fb_newton_take", [zt, z, p], [zt])
    damped = ca.Function("fb_newton_damped", [zt, z, p], [z_damped])
    step = ca.Function.if_else("fb_newton_step", take, damped)  # the line search only when needed
    zm, pm = ca.MX.sym("z", n), ca.MX.sym("p", n_p)
    zb = zm
    for _ in range(opt.iterations_per_block):
        z_full, ok = full(zb, pm)
        zb = step(ok, z_full, zb, pm)
    block = ca.Function("fb_newton_block", [zm, pm], [zb], ["z", "p"], ["z_out"])
    keep = ca.Function("fb_newton_keep", [z, p], [z], ["z", "p"], ["z_out"])
    zf = ca.if_else(mn <= ca.fmax(m0, floor), zn, z)
    res = natural_residual_sx(zf, F_fun(zf, p), lb, ub)
    polish = ca.Function("fb_newton_polish", [z, p], [zf, res], ["z", "p"], ["z_out", "residual"])
    residual = ca.Function("natural_residual", [z, p], [natural_residual_sx(z, F_fun(z, p), lb, ub)])
    return NewtonParts(block, keep, polish, residual)


class CompiledRollout:
    r"""A declared step model's step solver, K-step rollouts and batches as CasADi functions.

    Parameters
    ----------
    model
        A :class:`~mcpkit.models.stepping.DeclaredStep` (ECP slider, Stewart–Trinkle step ...).
    options
        :class:`RolloutOptions`.

    Attributes
    ----------
    step
        ``(x, z_prev, u, t, theta, c) -> (x_next, z, residual)``: one step, its solver compiled.
    constant_names, constant_slices
        The model's constants in the order of the input :math:`c`, and their slices.
    """

    def __init__(self, model: DeclaredStep, options: RolloutOptions | None = None) -> None:
        if not isinstance(model, DeclaredStep):
            raise MCPInputError(
                f"rollout needs a declared step model (mcpkit.models.stepping.DeclaredStep), "
                f"got {type(model).__name__}"
            )
        opt = RolloutOptions() if options is None else options
        if not isinstance(opt, RolloutOptions):
            raise MCPInputError(f"options must be RolloutOptions, got {type(opt).__name__}")
        self.model, self.options = model, opt
        mcp = model.mcp
        self.n, self.nx, self.nu, self.nth = mcp.n, model.n_state, model.n_control, model.n_design
        self.constant_names = list(model.constants())
        maps = StepJacobians(model, self.constant_names)
        sizes = [int(np.size(model.constants()[nm])) for nm in self.constant_names]
        ends = np.cumsum([0, *sizes])
        self.constant_slices = {
            nm: slice(int(a), int(b))
            for nm, a, b in zip(self.constant_names, ends[:-1], ends[1:], strict=True)
        }
        self.nc = int(ends[-1])
        cas = lower_to_casadi(mcp)
        F_fun = cas.F_fun if isinstance(cas.F, ca.SX) else ca.Function("F", [cas.z, cas.p], [cas.F]).expand()
        self.lb, self.ub = np.asarray(mcp.lb, float), np.asarray(mcp.ub, float)
        parts = newton_parts(F_fun, self.lb, self.ub, opt)
        more = ca.Function.if_else("fb_newton_more", parts.block, parts.keep)
        x, zp = ca.MX.sym("x", self.nx), ca.MX.sym("z_prev", self.n)
        u, th, t, c = (
            ca.MX.sym("u", self.nu),
            ca.MX.sym("theta", self.nth),
            ca.MX.sym("t"),
            ca.MX.sym("c", self.nc),
        )
        p = maps.P(x, u, th, t, c)[0]
        z = parts.block(zp, p)
        for _ in range(opt.blocks - 1):  # the next block runs only while the residual is above tol
            z = more(parts.residual(z, p) > opt.tol, z, p)
        z, res = parts.polish(z, p)
        xn = maps.Phi(x, z, u, th, t, c)[0]
        self.step = ca.Function(
            "compiled_step", [x, zp, u, t, th, c], [xn, z, res],
            ["x", "z_prev", "u", "t", "theta", "c"], ["x_next", "z", "residual"],
        )  # fmt: skip
        self.F_fun = F_fun
        self.P_fun: ca.Function = maps.P
        """``(x, u, theta, t, c) -> (p, ...)``: the step's parameter map :math:`P` (first output)."""
        self._rollouts: dict[int, ca.Function] = {}
        self._batches: dict[tuple[int, int, bool], ca.Function] = {}

    # -- the compiled functions ---------------------------------------------------------------
    def rollout_function(self, steps: int) -> ca.Function:
        """``(x0, z0, U, T, theta, c) -> (X, Z, R)``: ``steps`` steps as ``mapaccum`` of :attr:`step`
        (``U``: ``n_control x K``, ``T``: ``1 x K`` start times; ``X``: states 1..K as columns)."""
        K = as_count(steps, "steps")
        f = self._rollouts.get(K)
        if f is None:
            f = self.step.mapaccum("compiled_rollout", K, [0, 1], [0, 1])
            self._rollouts[K] = f
        return f

    def batch_function(self, steps: int, batch: int, shared_controls: bool) -> ca.Function:
        """:meth:`rollout_function` mapped over ``batch`` rollouts (``"thread"`` parallelisation).

        Inputs as :meth:`rollout_function` with ``B`` columns of ``x0`` and ``z0`` (and of ``U``
        unless ``shared_controls``); ``T``, ``theta`` and ``c`` are shared."""
        key = (as_count(steps, "steps"), as_count(batch, "batch"), bool(shared_controls))
        f = self._batches.get(key)
        if f is None:
            base = self.rollout_function(key[0])
            shared = [3, 4, 5] + ([2] if shared_controls else [])
            par = "thread" if self.options.threads > 1 and key[1] > 1 else "serial"
            if par == "thread":
                f = base.map(
                    "compiled_batch", par, key[1], shared, [], {"max_num_threads": self.options.threads}
                )
            else:
                f = base.map("compiled_batch", par, key[1], shared, [])
            self._batches[key] = f
        return f

    # -- inputs -------------------------------------------------------------------------------
    def constant_vector(self, constants: dict[str, Any] | None) -> np.ndarray:
        """The input :math:`c`: the model's constants, overridden by ``constants`` (by name)."""
        values = {nm: self.model.constant(nm) for nm in self.constant_names}
        for nm, v in (constants or {}).items():
            if nm not in values:
                raise MCPInputError(
                    f"{type(self.model).__name__} has no constant {nm!r}; it has {self.constant_names}"
                )
            refuse_text(v, f"constant {nm}")
            a = np.atleast_1d(np.asarray(v, dtype=float)).reshape(-1)
            want = self.constant_slices[nm].stop - self.constant_slices[nm].start
            if a.size == 1 and want > 1:
                a = np.full(want, float(a[0]))
            if a.size != want:
                raise ShapeError(f"constant {nm!r} has {want} values, got {a.size}")
            if not np.isfinite(a).all():
                raise NonFiniteError(f"constant {nm!r} contains NaN or inf")
            values[nm] = a
        parts = [np.atleast_1d(np.asarray(values[nm], dtype=float)).reshape(-1) for nm in self.constant_names]
        return np.concatenate(parts) if parts else np.zeros(0)

    def start(
        self, x0: np.ndarray, t0: float, controls: np.ndarray | None = None, design: np.ndarray | None = None
    ) -> np.ndarray:
        """The first step's starting point: the model's ``set_start`` guess when it has one (at the
        given inputs; the model's stored start is restored), else the MCP's start."""
        mcp = self.model.mcp
        set_start = getattr(self.model, "set_start", None)
        if not callable(set_start):
            return mcp.start.copy()
        if self.nu or self.nth:
            set_start = self.model.with_inputs(
                controls if self.nu else None, design if self.nth else None
            ).set_start
        saved = mcp.start.copy()
        try:
            set_start(x0, t0)
            return mcp.start.copy()
        finally:
            mcp.set_start(**{b.name: saved[b.slice] for b in mcp.blocks})

    def jax_rollout(self, steps: int, x_guess: Any, *, t0: float = 0.0) -> Any:
        r"""The K-step rollout as a JAX function (:func:`mcpkit.jax.casadi_function`):
        ``f(x0, controls, design, c) -> (states, residual)``.

        ``x0`` ``(n_state,)``, ``controls`` ``(K, n_control)``, ``design`` ``(n_design,)``, ``c``
        the constants stacked (:attr:`constant_slices`); ``states`` ``(K+1, n_state)`` and every
        step's natural residual ``(1, K)``, to be checked against ``tol`` by the caller (no
        fallback inside JAX). Reverse-mode derivatives come from CasADi's AD of the compiled
        rollout. The first step starts from the model's guess at ``x_guess`` (fixed when the
        function is made: it is computed in NumPy, not traced)."""
        from mcpkit.jax import casadi_function

        K = as_count(steps, "steps")
        x_ref = self.model.check_state(x_guess)
        t0 = as_real(t0, "t0")
        z0 = self.start(x_ref, t0, np.zeros((1, self.nu)), np.zeros(self.nth))
        T = (t0 + self.model.h * np.arange(K)).reshape(1, -1)
        x0, U = ca.MX.sym("x0", self.nx), ca.MX.sym("controls", K, self.nu)
        th, c = ca.MX.sym("design", self.nth), ca.MX.sym("c", self.nc)
        X, _, R = self.rollout_function(K)(x0, z0, U.T, T, th, c)
        names = (["x0", "controls", "design", "c"], ["states", "residual"])
        g = ca.Function("jax_rollout", [x0, U, th, c], [ca.horzcat(x0, X).T, R], *names)
        return casadi_function(g)

    def jacobian(
        self, x0: Any, controls: Any = None, steps: int | None = None, *, wrt: tuple[str, ...] = ("x0",),
        design: Any = None, constants: dict[str, Any] | None = None, t0: float = 0.0,
    ) -> RolloutJacobian:  # fmt: skip
        r""":math:`dx_K/dw` by CasADi's AD through the compiled rollout, ``w`` = ``wrt`` stacked
        (``"x0"``, ``"design"`` or constant names), with the steps where it is one-sided.

        Forward or reverse mode is CasADi's choice (``casadi.jacobian`` of the rollout's graph).
        No fallback here: the derivative is that of the compiled solver's trajectory, so check
        :attr:`RolloutJacobian.solved` (every step's residual within ``tol``)."""
        args = _inputs(self, x0, controls, steps, design, constants, t0)
        K = args["K"]
        names = (wrt,) if isinstance(wrt, str) else tuple(wrt)
        valid = ["x0", "design", *self.constant_names]
        bad = [nm for nm in names if nm not in valid]
        if bad or not names or len(set(names)) != len(names):
            raise MCPInputError(f"wrt: {list(names)} (unknown {bad}, or empty, or repeated); valid: {valid}")
        sizes = {"x0": self.nx, "design": self.nth}
        sizes.update({nm: sl.stop - sl.start for nm, sl in self.constant_slices.items()})
        syms = {nm: ca.MX.sym(nm, sizes[nm]) for nm in names}
        x0v = syms.get("x0", ca.MX(ca.DM(args["x0"])))
        thv = syms.get("design", ca.MX(ca.DM(args["theta"])))
        cv = ca.vertcat(*[
            syms[nm] if nm in syms else ca.MX(ca.DM(args["c"][sl])) for nm, sl in self.constant_slices.items()
        ]) if self.nc else ca.MX(0, 1)  # fmt: skip
        X, Z, R = self.rollout_function(K)(x0v, args["z0"], args["U"], args["T"], thv, cv)
        xK = X[:, K - 1]
        w = [syms[nm] for nm in names]
        jf = ca.Function("rollout_jacobian", w, [xK, ca.jacobian(xK, ca.vertcat(*w)), X, Z, R])
        values = [args["x0"] if nm == "x0" else args["theta"] if nm == "design" else args["c"][
            self.constant_slices[nm]] for nm in names]  # fmt: skip
        xk, Jk, Xv, Zv, Rv = (np.asarray(v, dtype=float) for v in jf(*values))
        states = np.c_[args["x0"], Xv].T
        P = np.asarray(self.P_fun.map(K)(states[:K].T, args["U"], args["theta"], args["T"], args["c"])[0])
        F = np.asarray(self.F_fun.map(K)(Zv, P), dtype=float).T
        tau = 10.0 * self.options.tol  # as mcpkit.solving.residuals.classify_pairs
        with np.errstate(invalid="ignore"):
            at_bound = (np.abs(Zv.T - self.lb) <= tau) | (np.abs(self.ub - Zv.T) <= tau)
            degenerate = at_bound & (np.abs(F) <= tau)
        blocks = {b.name: b.slice for b in self.model.mcp.blocks}
        pairs = {
            int(k): [f"{nm}[{i - sl.start}]" for nm, sl in blocks.items() for i in range(sl.start, sl.stop)
                     if degenerate[k, i]]
            for k in np.flatnonzero(degenerate.any(axis=1))
        }  # fmt: skip
        res = Rv.reshape(-1)
        return RolloutJacobian(
            xk.reshape(-1), Jk, tuple(names), states, res, bool((res <= self.options.tol).all()), pairs
        )


@dataclass(repr=False)
class RolloutJacobian:
    r""":math:`dx_K/dw` of a compiled rollout (:meth:`CompiledRollout.jacobian`).

    Attributes
    ----------
    x_final
        :math:`x_K`.
    jacobian
        :math:`dx_K/dw`, shape ``(n_state, n_w)``, ``w`` the blocks of :attr:`wrt` stacked.
    wrt
        What ``w`` is made of, in order.
    states, residual
        The trajectory (``(K+1, n_state)``) and every step's natural residual.
    solved
        Every step's residual within ``tol`` (else the derivative is that of an inexact trajectory).
    degenerate_steps
        Step -> its degenerate pairs (:math:`z_i` at a bound and :math:`F_i = 0` within
        :math:`10\,\mathrm{tol}`): stick–slip switches, where the trajectory has a kink and
        :attr:`jacobian` is one one-sided derivative (that of the element :math:`(1, 1)` of the
        FB function's generalised Jacobian), not a derivative. Empty: differentiable.
    """

    x_final: np.ndarray
    jacobian: np.ndarray
    wrt: tuple[str, ...]
    states: np.ndarray
    residual: np.ndarray
    solved: bool
    degenerate_steps: dict[int, list[str]] = field(default_factory=dict)

    @property
    def note(self) -> str:
        """One line: differentiable, or which steps are stick–slip switches."""
        if not self.degenerate_steps:
            return "no degenerate pair on the trajectory: the Jacobian is the derivative"
        k, pairs = next(iter(self.degenerate_steps.items()))
        return (
            f"degenerate pairs at steps {list(self.degenerate_steps)[:10]} (first: step {k}, {pairs}): "
            "a stick-slip switch, where the trajectory has a kink; the Jacobian is one one-sided derivative"
        )

    def __repr__(self) -> str:
        return (
            f"RolloutJacobian(wrt={list(self.wrt)}, shape={self.jacobian.shape}, solved={self.solved}, "
            f"degenerate_steps={list(self.degenerate_steps)[:10]})"
        )


def _inputs(
    cr: CompiledRollout, x0: Any, controls: Any, steps: int | None, design: Any,
    constants: dict[str, Any] | None, t0: float,
) -> dict[str, Any]:  # fmt: skip
    """Checked numeric inputs of one rollout (typed errors before anything runs)."""
    x = cr.model.check_state(x0)
    t0 = as_real(t0, "t0")
    nu = cr.nu
    if controls is None:
        if nu:
            raise MCPInputError(f"{type(cr.model).__name__} takes {nu} controls per step; pass controls")
        if steps is None:
            raise MCPInputError("pass steps (the model takes no controls to count them from)")
        K = as_count(steps, "steps")
        U = np.zeros((0, K))
    else:
        Ua = control_table(controls, nu, "K")
        K = Ua.shape[0] if steps is None else as_count(steps, "steps")
        if Ua.shape[0] < K:
            raise ShapeError(f"{K} steps need {K} rows of controls; {Ua.shape[0]} were given")
        U = Ua[:K].T
    if design is None:
        if cr.nth:
            raise MCPInputError(f"{type(cr.model).__name__} takes a design of {cr.nth} values; pass design")
        th = np.zeros(0)
    else:
        refuse_text(design, "design")
        th = np.asarray(design, dtype=float).reshape(-1)
        if th.shape != (cr.nth,):
            raise ShapeError(f"design must have {cr.nth} values, got shape {th.shape}")
        if not np.isfinite(th).all():
            raise NonFiniteError("design contains NaN or inf")
    c = cr.constant_vector(constants)
    T = t0 + cr.model.h * np.arange(K)
    return {"x0": x, "K": K, "U": U, "T": T.reshape(1, -1), "theta": th, "c": c, "t0": t0,
            "z0": cr.start(x, t0, U.T[:1], th)}  # fmt: skip


def _cached(model: DeclaredStep, options: RolloutOptions) -> CompiledRollout:
    """The model's :class:`CompiledRollout` for ``options``, built once per model object."""
    cache = model.__dict__.setdefault("_compiled_rollouts", {})
    key = (id(model.mcp), model.mcp.version, options)
    cr = cache.get(key)
    if cr is None:
        cr = cache[key] = CompiledRollout(model, options)
    return cr


def _batch_x0(model: DeclaredStep, x0: Any, batch: Any) -> np.ndarray:
    """``(B, n_state)`` initial states: ``batch`` when given, else ``x0`` as one row."""
    if batch is None:
        return model.check_state(x0).reshape(1, -1)
    refuse_text(batch, "batch")
    try:
        X = np.asarray(batch, dtype=float)
    except (TypeError, ValueError) as exc:
        raise MCPInputError(f"batch: not numbers ({exc})") from None
    nx = model.n_state
    if X.ndim != 2 or X.shape[1] != nx or X.shape[0] < 1:
        raise ShapeError(f"batch must have shape (B, {nx}) with B >= 1, got {X.shape}")
    if not np.isfinite(X).all():
        raise NonFiniteError("batch contains NaN or inf")
    return X


def rollout(
    model: DeclaredStep,
    x0: Any = None,
    controls: Any = None,
    steps: int | None = None,
    *,
    batch: Any = None,
    design: Any = None,
    constants: dict[str, Any] | None = None,
    t0: float = 0.0,
    options: RolloutOptions | None = None,
    **option_values: Any,
) -> RolloutResult:
    r"""Roll ``model`` out for ``steps`` steps in one compiled call (module docstring).

    .. math::
        z_k = z^*(P(x_k, u_k, \theta, t_k; c)),\quad x_{k+1} = \Phi(x_k, z_k, u_k, \theta, t_k; c),
        \quad k = 0, \dots, K-1,

    each :math:`z_k` by the compiled semismooth Newton solver, warm-started from :math:`z_{k-1}`.

    Parameters
    ----------
    model
        A declared step model (:class:`~mcpkit.models.stepping.DeclaredStep`).
    x0
        Initial state (``n_state``); or pass ``batch``.
    controls
        ``(K, n_control)`` controls, one row per step (shared by a batch), or ``(B, K, n_control)``
        with ``batch``; ``None`` for a model without controls.
    steps
        :math:`K` (default: the rows of ``controls``).
    batch
        ``(B, n_state)`` initial states: B rollouts in one call (``map`` with ``"thread"``
        parallelisation, :attr:`RolloutOptions.threads`).
    design, constants
        The model's design :math:`\theta` and values of its constants by name (default: the
        model's own, :meth:`~mcpkit.models.stepping.DeclaredStep.constants`).
    t0
        Initial time.
    options, **option_values
        :class:`RolloutOptions`, or its fields by name.

    Returns
    -------
    RolloutResult
        States, step solutions, every step's natural residual and verdict. Steps the compiled
        solver did not solve to ``tol`` were re-solved by the per-step route and marked
        :attr:`~RolloutResult.resolved` (when :attr:`RolloutOptions.resolve_failed`).
    """
    opt = RolloutOptions() if options is None else options
    if not isinstance(opt, RolloutOptions):
        raise MCPInputError(f"options must be RolloutOptions, got {type(opt).__name__}")
    if option_values:
        known = set(RolloutOptions.__dataclass_fields__)
        bad = sorted(set(option_values) - known)
        if bad:
            from mcpkit.errors import UnknownOptionError

            raise UnknownOptionError(f"unknown rollout options {bad}; valid: {sorted(known)}")
        opt = replace(opt, **option_values)
    if x0 is None and batch is None:
        raise MCPInputError("pass x0 (one rollout) or batch (B initial states)")
    if x0 is not None and batch is not None:
        raise MCPInputError("pass x0 or batch, not both")
    if not isinstance(model, DeclaredStep):
        raise MCPInputError(f"rollout needs a declared step model, got {type(model).__name__}")
    X0 = _batch_x0(model, x0, batch)
    if controls is None and model.control_rows is not None:  # controls bound with with_inputs
        controls = model._controls
    if design is None and model.n_design and model._design is not None:
        design = model._design
    cr = _cached(model, opt)
    per_rollout = controls is not None and np.ndim(controls) == 3
    if per_rollout and batch is None:
        raise ShapeError("controls of shape (B, K, n_control) need batch")
    first = np.asarray(controls, dtype=float)[0] if per_rollout else controls
    args = _inputs(cr, X0[0], first, steps, design, constants, t0)
    K, B = args["K"], X0.shape[0]
    if per_rollout:
        Ub = np.asarray(controls, dtype=float)
        if Ub.shape[0] != B or Ub.shape[1] < K or Ub.shape[2] != cr.nu:
            raise ShapeError(f"controls must have shape ({B}, {K}, {cr.nu}), got {Ub.shape}")
        if not np.isfinite(Ub).all():
            raise NonFiniteError("controls contain NaN or inf")
        U_all = Ub[:, :K, :]
    else:
        U_all = np.broadcast_to(args["U"].T, (B, K, cr.nu))
    t_run = time.perf_counter()
    Z0 = (
        np.stack([cr.start(x, args["t0"], U_all[b, :1], args["theta"]) for b, x in enumerate(X0)])
        if B > 1
        else args["z0"].reshape(1, -1)
    )
    t_c = time.perf_counter()
    if B == 1:
        X, Z, R = cr.rollout_function(K)(X0[0], Z0[0], args["U"], args["T"], args["theta"], args["c"])
    else:
        f = cr.batch_function(K, B, not per_rollout)
        U_in = args["U"] if not per_rollout else np.concatenate([u.T for u in U_all], axis=1)
        X, Z, R = f(X0.T, Z0.T, U_in, args["T"], args["theta"], args["c"])
    compiled = time.perf_counter() - t_c
    states = np.empty((B, K + 1, cr.nx))
    states[:, 0] = X0
    states[:, 1:] = np.asarray(X, dtype=float).T.reshape(B, K, cr.nx)
    z = np.asarray(Z, dtype=float).T.reshape(B, K, cr.n)
    res = np.asarray(R, dtype=float).reshape(B, K)
    ok = np.isfinite(res) & (res <= opt.tol)
    resolved = np.zeros((B, K), dtype=bool)
    notes: list[str] = []
    out = RolloutResult(
        t=args["t0"] + model.h * np.arange(K + 1), states=states, z=z, residual=res, step_solved=ok,
        resolved=resolved, tol=opt.tol, blocks={b.name: b.slice for b in model.mcp.blocks}, notes=notes,
    )  # fmt: skip
    compiled += _repair(cr, out, U_all, Z0, args, opt)
    if opt.model_check:
        _model_check(cr, out, U_all, args)
    out.compiled_time_s = compiled
    out.wall_time_s = time.perf_counter() - t_run
    return out


def _bound_model(cr: CompiledRollout, U: np.ndarray, args: dict[str, Any]) -> DeclaredStep:
    """The model bound to one rollout's controls, the design and the constants of the call (NumPy)."""
    model = cr.model
    m = model.with_inputs(U if cr.nu else None, args["theta"] if cr.nth else None)
    if cr.constant_names:
        c = args["c"]
        own = model.constants()
        vals = {
            nm: (c[sl].copy() if np.ndim(own[nm]) > 0 else float(c[sl][0]))
            for nm, sl in cr.constant_slices.items()
        }
        m = m.with_constants(**vals)
    return m


def _per_step_solver(model: DeclaredStep, opt: RolloutOptions) -> Solver:
    """The per-step route of :func:`~mcpkit.models.stepping.simulate` for ``model``."""
    make = getattr(model, "make_solver", None)
    if callable(make):
        return make(opt.method, opt.backend, tol=opt.tol)
    return Solver(model.mcp, backend=opt.backend, method=opt.method, tol=opt.tol)


def _repair(
    cr: CompiledRollout,
    out: RolloutResult,
    U_all: np.ndarray,
    Z0: np.ndarray,
    args: dict[str, Any],
    opt: RolloutOptions,
) -> float:
    """Re-solve, rollout by rollout, the first step the compiled solver missed with the per-step
    route, then continue the compiled rollout from its state; returns the compiled time spent."""
    if not opt.resolve_failed or out.step_solved.all():
        return 0.0
    B, K = out.residual.shape
    spent = 0.0
    solver: Solver | None = None
    for b in range(B):
        model_b: DeclaredStep | None = None
        k = 0
        while True:
            bad = np.flatnonzero(~out.step_solved[b, k:])
            if not bad.size:
                break
            k += int(bad[0])
            x = out.states[b, k]
            if not np.isfinite(x).all():
                break
            if solver is None:
                solver = _per_step_solver(cr.model, opt)
            model_b = _bound_model(cr, U_all[b], args) if model_b is None else model_b
            tk = float(out.t[k])
            warm = out.z[b, k - 1] if k > 0 else Z0[b]  # the compiled step's own start
            warm = warm if np.isfinite(warm).all() else None
            res = solver.solve(p=model_b.parameters(k, tk, x), z0=warm, warm_start=False)
            out.z[b, k], out.residual[b, k] = res.z, res.natural_residual
            out.step_solved[b, k], out.resolved[b, k] = bool(res.solved), True
            if not res.solved:
                out.notes.append(f"rollout {b} step {k}: the per-step route did not solve it: {res.message}")
            if not np.isfinite(res.z).all():
                out.states[b, k + 1 :] = np.nan
                break
            out.states[b, k + 1] = model_b.advance(k, tk, x, res)
            k += 1
            if k == K:
                break
            t_c = time.perf_counter()
            X, Z, R = cr.rollout_function(K - k)(
                out.states[b, k], res.z, U_all[b, k:].T, args["T"][:, k:], args["theta"], args["c"]
            )
            spent += time.perf_counter() - t_c
            out.states[b, k + 1 :] = np.asarray(X, dtype=float).T
            out.z[b, k:] = np.asarray(Z, dtype=float).T
            out.residual[b, k:] = np.asarray(R, dtype=float).reshape(-1)
            out.step_solved[b, k:] = np.isfinite(out.residual[b, k:]) & (out.residual[b, k:] <= opt.tol)
    return spent


def _model_check(cr: CompiledRollout, out: RolloutResult, U_all: np.ndarray, args: dict[str, Any]) -> None:
    """Judge every step the residual passed on the model's physical verdict too, when it has one
    (``friction_residual_values(P, Z)``: the Stewart–Trinkle Coulomb residual, in NumPy over all
    steps at once, with the parameters from the compiled :math:`P`)."""
    check = getattr(cr.model, "friction_residual_values", None)
    if not callable(check):
        return
    B, K = out.residual.shape
    X = out.states[:, :K].reshape(B * K, -1).T
    T = np.tile(out.t[:K], B).reshape(1, -1)
    U = U_all.reshape(B * K, -1).T
    P = np.asarray(cr.P_fun.map(B * K)(X, U, args["theta"], T, args["c"])[0], dtype=float).T
    todo = (out.step_solved & ~out.resolved).reshape(-1)
    values = np.full(B * K, np.nan)
    if todo.any():
        values[todo] = check(P[todo], out.z.reshape(B * K, -1)[todo])
    for j in np.flatnonzero(todo & ~(values <= out.tol)):
        b, k = divmod(int(j), K)
        out.step_solved[b, k] = False
        out.notes.append(
            f"rollout {b} step {k}: relative Coulomb residual {values[j]:.2e} > {out.tol:.0e} "
            "although the MCP met its natural residual"
        )
