r"""Gradients through horizons: :math:`dx_k/d\theta` of a whole simulation by the chain rule.

A :class:`~mcpkit.models.stepping.DeclaredStep` runs, for :math:`k = 0, \dots, N-1`,

.. math::

    p_k = P(x_k, u_k, \theta, t_k),\qquad
    z_k = z^*(p_k)\ \ (l \le z \le u \perp F(z; p_k)),\qquad
    x_{k+1} = \Phi(x_k, z_k, u_k, \theta, t_k),

where :math:`\theta` collects what the run is differentiated by (``wrt``): the initial state
``"x0"``, the model's design ``"design"`` and any of its named physical constants
(:meth:`~mcpkit.models.stepping.DeclaredStep.constants`: the ECP slider's ``mu``, ``m``,
``I_z`` ...; the Stewart–Trinkle contacts' ``mu``). :math:`P` and :math:`\Phi` are written once
against an array namespace, so their Jacobians :math:`P_x, P_\theta, \Phi_x, \Phi_z, \Phi_\theta`
come from CasADi by evaluating the same code on SX symbols (as
:meth:`mcpkit.mpec.step.StepSpec.from_model` does). With :math:`S_k = dz/dp` at step
:math:`k` (:meth:`MCPResult.sensitivity <mcpkit.solving.result.MCPResult.sensitivity>`,
implicit differentiation at the step's active set) the forward chain rule is

.. math::

    X_0 = \frac{dx_0}{d\theta},\qquad
    Z_k = S_k\,(P_x X_k + P_\theta),\qquad
    X_{k+1} = \Phi_x X_k + \Phi_z Z_k + \Phi_\theta ,

with :math:`X_k = dx_k/d\theta` (:math:`n_x \times n_\theta`) and :math:`X_0 = [I\ 0]` when
``"x0"`` is among ``wrt`` (else 0). One sensitivity per step, no re-simulation.

**Degenerate steps.** At a stick–slip transition a step's pair can be degenerate (:math:`\sigma`
and the friction-cone slack both zero); there the step's solution map, and with it
:math:`x_N(\theta)`, has a kink and no Jacobian. :func:`simulate_with_gradient` then raises
:class:`~mcpkit.errors.NotDifferentiableError` naming the step and its pairs, unless a
``direction`` :math:`d\theta` is given: the run's directional derivative exists (a composition of
Lipschitz, directionally differentiable maps) and follows the same recursion on vectors,

.. math::

    dx_0 = \frac{dx_0}{d\theta}\,d\theta,\qquad
    dz_k = z^{*\prime}(p_k;\ P_x\,dx_k + P_\theta\,d\theta),\qquad
    dx_{k+1} = \Phi_x\,dx_k + \Phi_z\,dz_k + \Phi_\theta\,d\theta,

where :math:`z^{*\prime}(p; dp)` is the step's directional derivative
(``sensitivity(direction=dp)``, which solves a small LCP on the degenerate pairs). It equals the
one-sided limit :math:`\lim_{\varepsilon\downarrow 0}(x_N(\theta + \varepsilon\,d\theta) -
x_N(\theta))/\varepsilon`.

The NumPy map the simulator ran and the CasADi map differentiated here are checked to agree
at every step (parameters and next state); a model whose step map reads something that is not
declared would fail that check rather than return a wrong gradient.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import casadi as ca
import numpy as np

from mcpkit.errors import MCPInputError, NonFiniteError, NotDifferentiableError, ShapeError, SolveFailedError
from mcpkit.frontends.solve import Solver
from mcpkit.models.arrays import CASADI
from mcpkit.models.stepping import DeclaredStep, SimulationResult, simulate
from mcpkit.solving.result import MCPResult
from mcpkit.stationarity.sensitivity import result_linearization

__all__ = ["SimulationGradient", "StepJacobians", "simulate_with_gradient"]

#: Relative disagreement above which the NumPy and CasADi step maps count as different.
MAP_AGREEMENT_RTOL = 1e-9


def _check_wrt(model: DeclaredStep, wrt: Any) -> tuple[str, ...]:
    names = (wrt,) if isinstance(wrt, str) else tuple(wrt)
    if not names:
        raise MCPInputError("wrt is empty: name what to differentiate by ('x0', 'design' or a constant)")
    consts = model.constants()
    valid = ["x0"] + (["design"] if model.n_design else []) + sorted(consts)
    bad = [n for n in names if not isinstance(n, str) or n not in valid]
    if bad:
        raise MCPInputError(
            f"cannot differentiate {type(model).__name__} by {bad}; valid: {valid} ('x0' the initial "
            "state, 'design' the model's design, the others its constants())"
        )
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise MCPInputError(f"wrt names {dup} more than once")
    return names


class StepJacobians:
    r"""The step map :math:`P, \Phi` of a declared model and its Jacobians, as CasADi functions.

    Built by evaluating ``model.step_parameters`` and ``model.step_update`` once on SX symbols,
    with the constants among ``wrt`` replaced by symbols (:meth:`DeclaredStep.with_constants`).
    :math:`\theta` here is the part of ``wrt`` the map depends on (``"design"`` and the
    constants, in the order of ``wrt``); ``"x0"`` enters only through :math:`X_0`.
    """

    def __init__(self, model: DeclaredStep, wrt: Sequence[str]) -> None:
        mcp = model.mcp
        self.names = [w for w in wrt if w != "x0"]
        x = ca.SX.sym("x", model.n_state)
        u = ca.SX.sym("u", model.n_control)
        th = ca.SX.sym("theta", model.n_design)
        t = ca.SX.sym("t")
        z = ca.SX.sym("z", mcp.n)
        consts = model.constants()
        syms: dict[str, ca.SX] = {}
        for name in self.names:
            if name != "design":
                syms[name] = ca.SX.sym(name, int(np.size(consts[name])))
        sym_model = model.with_constants(**syms) if syms else model
        given = sym_model.step_parameters(CASADI, x, u, th, t)
        stored = mcp.parameter_values
        parts = []
        for b in mcp.parameter_blocks:
            if b.name in given:
                col = CASADI.concat([given[b.name]])
                if col.numel() != b.size:
                    raise ShapeError(f"parameter block {b.name!r} has {b.size} entries, P gave {col.numel()}")
                parts.append(col)
            else:
                parts.append(ca.SX(ca.DM(stored[b.slice])))
        p = ca.vertcat(*parts) if parts else ca.SX(0, 1)
        xn = ca.vec(CASADI.concat([sym_model.step_update(CASADI, x, z, u, th, t)]))
        if xn.numel() != model.n_state:
            raise ShapeError(f"step_update returns {xn.numel()} values, the state has {model.n_state}")
        cols = [th if nm == "design" else syms[nm] for nm in self.names]
        Th = ca.vertcat(*cols) if cols else ca.SX(0, 1)
        self.n_theta_map = int(Th.numel())
        C = ca.vertcat(*syms.values()) if syms else ca.SX(0, 1)
        args = [x, u, th, t, C]
        self.P = ca.Function("grad_P", args, [p, ca.jacobian(p, x), ca.jacobian(p, Th)])
        self.Phi = ca.Function(
            "grad_Phi", [x, z, *args[1:]], [xn, ca.jacobian(xn, x), ca.jacobian(xn, z), ca.jacobian(xn, Th)]
        )
        self.const_values = np.concatenate(
            [np.atleast_1d(np.asarray(model.constant(nm), dtype=float)).reshape(-1) for nm in syms]
        ) if syms else np.zeros(0)  # fmt: skip

    def parameters(
        self, x: np.ndarray, u: np.ndarray, th: np.ndarray, t: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        r""":math:`(p, P_x, P_\theta)` at a step (dense)."""
        p, Px, Pt = self.P(x, u, th, t, self.const_values)
        return np.asarray(p, dtype=float).reshape(-1), np.asarray(Px), np.asarray(Pt)

    def update(
        self, x: np.ndarray, z: np.ndarray, u: np.ndarray, th: np.ndarray, t: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        r""":math:`(x^+, \Phi_x, \Phi_z, \Phi_\theta)` at a step (dense)."""
        xn, Ux, Uz, Ut = self.Phi(x, z, u, th, t, self.const_values)
        return np.asarray(xn, dtype=float).reshape(-1), np.asarray(Ux), np.asarray(Uz), np.asarray(Ut)


@dataclass
class SimulationGradient:
    r"""A simulation and its derivative by :math:`\theta` (:func:`simulate_with_gradient`).

    Attributes
    ----------
    sim
        The :class:`~mcpkit.models.stepping.SimulationResult` (states, per-step verdicts).
    wrt
        What :math:`\theta` is made of, in order.
    slices
        Name in :attr:`wrt` -> slice of :math:`\theta`.
    theta
        The value of :math:`\theta` the run was made at.
    d_states
        :math:`dx_k/d\theta`, shape ``(N+1, n_state, n_theta)``; with a :attr:`direction`, the
        directional derivatives :math:`dx_k`, shape ``(N+1, n_state)``.
    direction
        :math:`d\theta`, or ``None`` for the full Jacobian.
    degenerate_steps
        Steps whose solution had degenerate pairs (only with a direction; without one such a
        step raises).
    """

    sim: SimulationResult
    wrt: tuple[str, ...]
    slices: dict[str, slice]
    theta: np.ndarray
    d_states: np.ndarray
    direction: np.ndarray | None = None
    degenerate_steps: list[int] = field(default_factory=list)

    @property
    def states(self) -> np.ndarray:
        """The simulated states, shape ``(N+1, n_state)``."""
        return self.sim.states

    @property
    def jacobian(self) -> np.ndarray:
        r""":math:`dx_N/d\theta` (``(n_state, n_theta)``), or :math:`dx_N` in the :attr:`direction`."""
        return self.d_states[-1]

    def wrt_block(self, name: str) -> np.ndarray:
        r""":math:`dx_k/d\theta_{\rm name}` for all :math:`k`, shape ``(N+1, n_state, size)``
        (full Jacobian only)."""
        if self.direction is not None:
            raise MCPInputError("this run computed a directional derivative, not the Jacobian by each part")
        if name not in self.slices:
            raise MCPInputError(f"{name!r} is not among wrt {list(self.wrt)}")
        return self.d_states[:, :, self.slices[name]]


def simulate_with_gradient(
    model: DeclaredStep,
    x0: Any,
    n_steps: int,
    wrt: str | Sequence[str] = ("x0",),
    *,
    direction: Any = None,
    t0: float = 0.0,
    method: str = "auto",
    backend: str = "auto",
    solver: Solver | None = None,
    **options: Any,
) -> SimulationGradient:
    r"""Simulate ``model`` (:func:`~mcpkit.models.stepping.simulate`) and differentiate the states.

    The recursion of the module docstring, run alongside the simulation:
    :math:`X_{k+1} = \Phi_x X_k + \Phi_z S_k (P_x X_k + P_\theta) + \Phi_\theta` with
    :math:`S_k` the step's :math:`dz/dp`, or, given ``direction`` :math:`d\theta`, the
    directional derivative :math:`dx_{k+1} = \Phi_x\,dx_k + \Phi_z\,z^{*\prime}(p_k; P_x\,dx_k +
    P_\theta\,d\theta) + \Phi_\theta\,d\theta`, which exists also through degenerate
    (stick–slip) steps.

    Parameters
    ----------
    model
        A :class:`~mcpkit.models.stepping.DeclaredStep` (bound to its controls and design with
        ``with_inputs`` when it takes any; controls are held fixed).
    x0, n_steps, t0, method, backend, solver, **options
        As for :func:`~mcpkit.models.stepping.simulate` (``tol`` sets the solves' tolerance and,
        times ten, the threshold at which a pair counts as degenerate).
    wrt
        What :math:`\theta` is made of, in order: ``"x0"`` (the initial state), ``"design"``,
        and names of ``model.constants()`` (e.g. ``"mu"``).
    direction
        ``None`` for the full Jacobian; else :math:`d\theta`, shape ``(n_theta,)``.

    Returns
    -------
    SimulationGradient
        ``jacobian`` is :math:`dx_N/d\theta`; ``d_states`` holds every :math:`dx_k/d\theta`.

    Raises
    ------
    NotDifferentiableError
        Without ``direction``, at the first step whose solution has degenerate pairs (or a
        singular :math:`\partial F_I/\partial z_I`); the message names the step, its time and
        the pairs (``.pairs``; ``.step`` is the step index).
    SolveFailedError
        A step's MCP was not solved (the gradient of an unsolved step means nothing); ``.step``
        is its index.
    MCPInputError
        Unknown ``wrt`` names, a bad ``direction``, or a step map whose NumPy and CasADi
        evaluations disagree.
    """
    if not isinstance(model, DeclaredStep):
        raise MCPInputError(
            "simulate_with_gradient needs a DeclaredStep (a step map written once), got "
            f"{type(model).__name__}"
        )
    names = _check_wrt(model, wrt)
    x_init = model.check_state(x0)
    slices, theta = _theta(model, names, x_init)
    dth = _direction(direction, theta.size, names)
    N = int(n_steps) if isinstance(n_steps, (int, np.integer)) and not isinstance(n_steps, bool) else 0
    if N < 1:
        raise MCPInputError(f"n_steps must be a positive integer, got {n_steps!r}")
    tangent = _Tangent(model, names, slices, N, dth)
    sim = simulate(
        model, x_init, N, t0=t0, method=method, backend=backend, solver=solver, on_failure="stop",
        on_step=tangent.step, **options,
    )  # fmt: skip
    ran = np.isfinite(sim.states[1:]).all(axis=1)
    gap = np.abs(tangent.predicted[1:][ran] - sim.states[1:][ran])
    off = (gap > MAP_AGREEMENT_RTOL * (1.0 + np.abs(sim.states[1:][ran]))).any(axis=1)
    if off.any():
        k = int(np.flatnonzero(off)[0])
        raise MCPInputError(
            f"step {k}: the step update on CasADi and the simulator's disagree by {gap[k].max():.3e}; "
            "the update reads something that is not an input or a declared constant"
        )
    return SimulationGradient(sim, names, slices, theta, tangent.D, dth, tangent.degenerate)


def _theta(
    model: DeclaredStep, names: tuple[str, ...], x_init: np.ndarray
) -> tuple[dict[str, slice], np.ndarray]:
    r"""``(slice of each name, its values)``: :math:`\theta` stacked from ``names``."""
    consts = model.constants()
    sizes = {"x0": model.n_state, "design": model.n_design}
    slices: dict[str, slice] = {}
    values: list[np.ndarray] = []
    start = 0
    for nm in names:
        if nm == "x0":
            val = x_init
        elif nm == "design":
            val = model.inputs(0)[1]
        else:
            val = np.atleast_1d(np.asarray(model.constant(nm), dtype=float)).reshape(-1)
            sizes[nm] = int(np.size(consts[nm]))
        slices[nm] = slice(start, start + sizes[nm])
        start += sizes[nm]
        values.append(np.asarray(val, dtype=float).reshape(-1))
    return slices, np.concatenate(values)


def _direction(direction: Any, n_theta: int, names: tuple[str, ...]) -> np.ndarray | None:
    r"""The direction :math:`d\theta` checked (``None``: the full Jacobian)."""
    if direction is None:
        return None
    try:
        dth = np.asarray(direction, dtype=float).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise MCPInputError(f"direction must be numeric, got {direction!r}") from exc
    if dth.shape != (n_theta,):
        raise ShapeError(f"direction must have {n_theta} entries (theta = {list(names)}), got {dth.shape}")
    if not np.isfinite(dth).all():
        raise NonFiniteError("direction contains NaN or inf")
    return dth


def _stepped(err: Exception, k: int) -> Exception:
    """``err`` with the step index ``k`` (``err.step``)."""
    err.step = k  # type: ignore[attr-defined]
    return err


class _Tangent:
    r"""The recursion of :func:`simulate_with_gradient` run alongside the simulation: :attr:`D`
    holds :math:`X_k = dx_k/d\theta` (or :math:`dx_k` along ``dth``), filled by :meth:`step`
    after each step's solve; :attr:`predicted` the CasADi map's :math:`x_{k+1}` to check
    against the simulator's."""

    def __init__(
        self,
        model: DeclaredStep,
        names: tuple[str, ...],
        slices: dict[str, slice],
        N: int,
        dth: np.ndarray | None,
    ) -> None:
        self.model = model
        self.jac = StepJacobians(model, names)
        n_theta = sum(sl.stop - sl.start for sl in slices.values())
        # theta's columns that the map sees (all but x0), and the initial X_0
        self.map_cols = np.concatenate(
            [np.arange(slices[nm].start, slices[nm].stop) for nm in names if nm != "x0"]
        ) if self.jac.names else np.zeros(0, dtype=int)  # fmt: skip
        X0 = np.zeros((model.n_state, n_theta))
        if "x0" in slices:
            X0[:, slices["x0"]] = np.eye(model.n_state)
        self.full = dth is None
        self.D = np.full((N + 1, model.n_state, n_theta) if self.full else (N + 1, model.n_state), np.nan)
        self.D[0] = X0 if dth is None else X0 @ dth
        self.dmap = dth[self.map_cols] if dth is not None else None
        self.predicted = np.full((N + 1, model.n_state), np.nan)
        self.degenerate: list[int] = []

    def step(self, k: int, t: float, x: np.ndarray, pk: Any, res: Any) -> None:
        """The ``on_step`` hook of :func:`~mcpkit.models.stepping.simulate`: :math:`X_{k+1}`
        from step ``k``'s solution ``res`` at state ``x`` and time ``t``."""
        mres: MCPResult = res.solve if isinstance(getattr(res, "solve", None), MCPResult) else res
        where = f"step {k} (t={t:.6g})"
        if not res.solved:
            raise _stepped(
                SolveFailedError(f"{where} was not solved, so the run has no derivative: {res.message}", res),
                k,
            )
        u, th = self.model.inputs(k)
        p, Px, Pt = self.jac.parameters(x, u, th, t)
        if not np.allclose(p, mres.p, rtol=MAP_AGREEMENT_RTOL, atol=MAP_AGREEMENT_RTOL):
            i = int(np.argmax(np.abs(p - mres.p)))
            raise MCPInputError(
                f"{where}: the step map on CasADi gives parameter {i} = {p[i]!r}, the simulation used "
                f"{mres.p[i]!r}; the step map reads something that is not an input or a declared constant"
            )
        xn, Ux, Uz, Ut = self.jac.update(x, mres.z, u, th, t)
        self.predicted[k + 1] = xn
        if self.full:
            self.D[k + 1] = self._jacobian_step(k, where, mres, Px, Pt, Ux, Uz, Ut)
        else:
            self.D[k + 1] = self._directional_step(k, where, mres, Px, Pt, Ux, Uz, Ut)

    def _jacobian_step(
        self, k: int, where: str, mres: MCPResult, Px: Any, Pt: Any, Ux: Any, Uz: Any, Ut: Any
    ) -> np.ndarray:
        r""":math:`X_{k+1} = \Phi_x X_k + \Phi_z S_k (P_x X_k + P_\theta) + \Phi_\theta`."""
        Xk, cols = self.D[k], self.map_cols
        dP = Px @ Xk
        if cols.size:
            dP[:, cols] += Pt
        try:
            Zk = mres.sensitivity() @ dP
        except NotDifferentiableError as exc:
            err = NotDifferentiableError(
                f"the run has no derivative at {where}: {exc}. Pass direction=dtheta to "
                f"simulate_with_gradient for the one-sided derivative in direction dtheta",
                pairs=exc.pairs,
            )
            raise _stepped(err, k) from exc
        Xn = Ux @ Xk + Uz @ Zk
        if cols.size:
            Xn[:, cols] += Ut
        return Xn

    def _directional_step(
        self, k: int, where: str, mres: MCPResult, Px: Any, Pt: Any, Ux: Any, Uz: Any, Ut: Any
    ) -> np.ndarray:
        r""":math:`dx_{k+1} = \Phi_x\,dx_k + \Phi_z\,z^{*\prime}(p_k; P_x\,dx_k +
        P_\theta\,d\theta) + \Phi_\theta\,d\theta`."""
        Xk, cols = self.D[k], self.map_cols
        dp = Px @ Xk + (Pt @ self.dmap if cols.size else 0.0)
        lin = result_linearization(mres)
        if lin.degenerate.size:
            self.degenerate.append(k)
        try:
            dz = lin.jvp(np.asarray(dp, dtype=float).reshape(-1))
        except NotDifferentiableError as exc:
            raise _stepped(NotDifferentiableError(f"{where}: {exc}", pairs=exc.pairs), k) from exc
        return Ux @ Xk + Uz @ dz + (Ut @ self.dmap if cols.size else 0.0)
