r"""One result vocabulary for every solve route.

Following Pyomo's ``contrib.solver`` results, *why the solver stopped* (:class:`Termination`)
is kept apart from *what the returned point is* (:class:`SolutionStatus`). The latter is
decided by mcpkit from residuals measured on the original pairs, never taken from a solver's
word: a solve is :attr:`MCPResult.solved` exactly when every measure it reports (natural
residual, complementarity violation, bound violation; :mod:`mcpkit.solving.residuals`) met the tolerance
(:func:`judge`).

:class:`MCPResult` (an MCP) and :class:`MPCCResult` (an MPCC) share :class:`SolveResult`
and read like :class:`scipy.optimize.OptimizeResult` (``x``, ``success``, ``message``, ``nit``).
Composite results (a simulation, a horizon, a plan, an FCLIB set) take their verdict from
their parts with :func:`verdict_of`. All of them follow the small :class:`Outcome` protocol
(``solved``, ``termination``, ``message``, ``summary()`` starting with :data:`RESULT_KEYS`).
"""

from __future__ import annotations

import enum
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, TypeVar, runtime_checkable

import numpy as np

from mcpkit.errors import MCPInputError, SolveFailedError
from mcpkit.problems.hooks import Hook, implementation
from mcpkit.solving.residuals import (
    PairState,
    Residuals,
    certified_residual,
    compute_residuals,
    finite_in_box,
)
from mcpkit.solving.tables import format_summary, format_value, outcome_repr

EPS = float(np.finfo(float).eps)
r"""Machine epsilon :math:`2^{-52}`: the default rounding bound :math:`\varepsilon |F_i|` of judge_point."""


def _is_names(wrt: Any) -> bool:
    """Whether ``wrt`` is a block name or a non-empty sequence of them (not a direction vector)."""
    if isinstance(wrt, str):
        return True
    if isinstance(wrt, (list, tuple)):
        return len(wrt) > 0 and all(isinstance(w, str) for w in wrt)
    return False


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
    """The problem was shown to have no solution, or (MPCC) no feasible point near the one returned.

    For an MCP only with a certificate in ``extra["infeasibility_certificate"]`` (Lemke's
    secondary ray with a verified Farkas vector, or on a copositive-plus :math:`M`); a solver's
    own "infeasible" without one (IPOPT's ``Infeasible_Problem_Detected`` on a reformulation,
    PATH's "infeasible") is reported as :attr:`STALLED`, its words kept in ``raw_status``. For an
    MPCC: IPOPT found the NLP locally infeasible *and* the returned point violates the MPCC's
    own constraints by more than ``tol`` (a point that meets them shows the relaxation, not the
    MPCC, was infeasible: :attr:`STALLED`)."""
    NUMERICAL_ERROR = "numerical_error"
    """NaN/inf in evaluations or a linear-algebra failure."""
    SOLVER_ERROR = "solver_error"
    """The external solver crashed, was missing, or returned an unreadable answer."""
    INTERRUPTED = "interrupted"
    """Stopped by the user (KeyboardInterrupt) or a callback."""


class SolutionStatus(enum.Enum):
    """What the returned point is, judged by mcpkit's own residual check."""

    SOLUTION = "solution"
    """Every reported measure is finite and <= tol (MCP: natural residual, complementarity
    violation, bound violation; MPCC: complementarity residual, constraint violation)."""
    INACCURATE = "inaccurate"
    """Within the bounds (<= tol) but a residual on the pairs exceeds tol (or is not finite)."""
    UNCERTIFIED = "uncertified"
    """Every measure is <= tol as computed, but the rounding error of evaluating :math:`F` (its
    floor, :func:`~mcpkit.solving.residuals.certified_residual`) exceeds tol: the check cannot
    certify the point at this tolerance (data of very different magnitudes, e.g. :math:`q \\sim
    10^{14}`). Never counted as success; a looser tol or rescaled data can be certified."""
    INFEASIBLE_POINT = "infeasible_point"
    """The point violates its bounds by more than tol."""
    NO_SOLUTION = "no_solution"
    """No point is available (the solver failed before producing one)."""


#: Keys every result's :meth:`summary` starts with, in this order: single solves, MPCCs and
#: composite results (simulations, horizons, plans, FCLIB sets) alike.
RESULT_KEYS: tuple[str, ...] = ("kind", "solved", "status", "message", "wall_time_s")

#: Keys every single-solve summary (``mcpkit solve --json`` on an MCP or an MPCC) carries:
#: :data:`RESULT_KEYS` and the residuals, counts and route.
SUMMARY_KEYS: tuple[str, ...] = RESULT_KEYS + (
    "solution_status", "objective", "comp_residual", "constraint_violation",
    "iterations", "outer_iterations", "method", "backend", "raw_status",
)  # fmt: skip


@runtime_checkable
class Outcome(Protocol):
    """What every mcpkit result shares: a verdict, why it stopped, a message and a summary.

    ``solved`` is always mcpkit's own verdict from residuals on the user's problem (for a
    composite result: every part solved); ``termination`` says why the (first failing) solve
    stopped; :meth:`summary` returns a JSON-ready dict whose first keys are
    :data:`RESULT_KEYS`. Every CLI command takes its exit code from ``solved``.
    """

    @property
    def solved(self) -> bool:
        """mcpkit's verdict."""
        ...

    @property
    def termination(self) -> Termination:
        """Why the solve (or the first failing part) stopped."""
        ...

    @property
    def message(self) -> str:
        """One human-readable line."""
        ...

    def summary(self) -> dict[str, Any]:
        """JSON-ready summary starting with :data:`RESULT_KEYS`."""
        ...


def verdict_of(parts: Sequence[Outcome], what: str = "step") -> tuple[bool, Termination, str]:
    """``(solved, termination, message)`` of a composite result built from per-part verdicts.

    Solved exactly when there is at least one part and every part is solved. The termination
    is ``CONVERGED`` then, else that of the first part that is not solved (a part claiming
    ``CONVERGED`` without being solved is reported ``STALLED``; no parts at all is
    ``SOLVER_ERROR``).
    """
    n = len(parts)
    failed = [i for i, r in enumerate(parts) if not r.solved]
    if n == 0:
        return False, Termination.SOLVER_ERROR, f"no {what}s were solved (none ran)"
    if not failed:
        return True, Termination.CONVERGED, f"all {n} {what}s solved"
    first = parts[failed[0]]
    term = first.termination
    if term is Termination.CONVERGED:
        term = Termination.STALLED
    return (
        False,
        term,
        (f"{n - len(failed)} of {n} {what}s solved; first failure at {what} {failed[0]}: {first.message}"),
    )


def summary_head(kind: str, outcome: Outcome, wall_time_s: float) -> dict[str, Any]:
    """The :data:`RESULT_KEYS` part of a summary, in order."""
    return {
        "kind": kind,
        "solved": bool(outcome.solved),
        "status": outcome.termination.value,
        "message": outcome.message,
        "wall_time_s": float(wall_time_s),
    }


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
    """``"relax"`` for a homotopy step, ``"polish"`` for an active-set polish,
    ``"retry:<method>"`` for a step of a fallback reformulation's run, ``"second:<method>"`` for
    a step of a second opinion's run (:class:`~mcpkit.homotopy.recovery.RecoveringHomotopy`)."""


_R = TypeVar("_R", bound="SolveResult")


@dataclass(kw_only=True)
class SolveResult:
    """Fields and verdict shared by :class:`MCPResult` and :class:`MPCCResult` (one solve).

    Attributes
    ----------
    termination
        Why the solve stopped.
    solution_status
        What the point is, from mcpkit's residual check on the user's problem.
    tol
        The tolerance the residuals were judged against.
    iterations
        Inner iterations summed over the whole solve, the same meaning on every route: IPOPT
        iterations of every subproblem (relaxation, polish, retries), Newton iterations of the
        active-set and semismooth Newton steps, or PATH's major iterations.
    wall_time_s
        Wall time of the whole solve.
    backend, method
        The route actually used (after ``"auto"`` was resolved).
    trace
        One :class:`HomotopyStep` per subproblem (empty for PATH).
    raw_status
        The last raw status string of the underlying solver.
    message
        Human-readable one-line summary, including why ``auto`` chose its route.
    pair_states
        One :class:`~mcpkit.solving.residuals.PairState` per complementarity pair (a list, or a
        :class:`~mcpkit.solving.residuals.PairStates` that labels the pairs when first read).
    extra
        Route-specific documented extras (for example ``{"ipopt": "casadi"}``).
    warnings
        What went wrong on the way, one sentence each (a non-finite evaluation that ended a fast
        path, ...). Solver libraries' own warnings are never printed during a solve; the ones
        that matter are recorded here, and ``verbose=True`` prints them.
    """

    termination: Termination
    solution_status: SolutionStatus
    tol: float
    iterations: int
    wall_time_s: float
    backend: str
    method: str
    trace: list[HomotopyStep] = field(default_factory=list)
    raw_status: str = ""
    message: str = ""
    pair_states: Sequence[PairState] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    kind: ClassVar[str] = "solve"

    # -- the verdict and scipy.optimize.OptimizeResult-style aliases -----------------
    @property
    def solved(self) -> bool:
        """True exactly when mcpkit's residual check met :attr:`tol` (:attr:`solution_status`)."""
        return self.solution_status is SolutionStatus.SOLUTION

    @property
    def success(self) -> bool:
        """Alias of :attr:`solved` (``scipy.optimize`` spelling)."""
        return self.solved

    @property
    def nit(self) -> int:
        """Alias of :attr:`iterations` (``scipy.optimize`` spelling)."""
        return self.iterations

    @property
    def outer_iterations(self) -> int:
        """Subproblems solved (homotopy steps, polishes, retries): ``len(trace)``."""
        return len(self.trace)

    @property
    def status(self) -> str:
        """Short status word: the termination value, e.g. ``"converged"``."""
        return self.termination.value

    def pair_counts(self) -> dict[str, int]:
        """How many pairs are in each :class:`PairState`."""
        counts: dict[str, int] = {}
        for s in self.pair_states:
            counts[s.value] = counts.get(s.value, 0) + 1
        return counts

    def _residual_fields(self) -> dict[str, float | None]:
        raise NotImplementedError

    def _objective(self) -> float | None:
        return None

    def summary(self) -> dict[str, Any]:
        """The machine-readable summary (``mcpkit solve --json``): :data:`SUMMARY_KEYS` first."""
        out = summary_head(self.kind, self, self.wall_time_s)
        res = self._residual_fields()
        out.update(
            solution_status=self.solution_status.value,
            objective=self._objective(),
            comp_residual=res["comp_residual"],
            constraint_violation=res["constraint_violation"],
            iterations=self.iterations,
            outer_iterations=self.outer_iterations,
            method=self.method,
            backend=self.backend,
            raw_status=self.raw_status,
        )
        return out

    def to_json(self) -> str:
        """:meth:`summary` as one JSON object."""
        return json.dumps(self.summary())

    def raise_if_failed(self: _R) -> _R:
        """Return ``self`` when :attr:`solved`, else raise :class:`~mcpkit.errors.SolveFailedError`."""
        if not self.solved:
            res = self._residual_fields()
            raise SolveFailedError(
                f"{self.method}/{self.backend} did not solve the problem: "
                f"termination={self.termination.value}, solution_status={self.solution_status.value}, "
                f"residual={_fmt(res['comp_residual'])} (tol {self.tol:.1e}), "
                f"violation={_fmt(res['constraint_violation'])}; raw solver status: {self.raw_status!r}",
                result=self,
            )
        return self


#: How a result's repr counts the pairs in each :class:`~mcpkit.solving.residuals.PairState`.
PAIR_WORDS: dict[str, str] = {
    "at_lower": "at the lower bound (F > 0)",
    "between": "strictly between bounds (F = 0)",
    "at_upper": "at the upper bound (F < 0)",
    "degenerate": "at a bound with F = 0 (degenerate)",
    "fixed": "fixed (l = u, F free)",
    "violated": "violating complementarity",
}

#: A result's repr shows its point when it has at most this many unknowns.
SHOW_POINT = 20


def pair_words(counts: dict[str, int]) -> str:
    """Pair counts (:meth:`SolveResult.pair_counts`) in words: ``"2 strictly between bounds (F = 0)"``."""
    return ", ".join(f"{n} {PAIR_WORDS.get(k, k)}" for k, n in counts.items()) or "none"


def _warnings_text(warnings: Sequence[str]) -> str:
    """``", warnings=2 (see .warnings)"`` when there are any, else ``""``."""
    return f", warnings={len(warnings)} (see .warnings)" if warnings else ""


def _point_text(name: str, v: np.ndarray) -> str:
    """``", z=[...]"`` (4 significant digits) if at most :data:`SHOW_POINT` entries, else ``""``."""
    v = np.asarray(v, dtype=float).reshape(-1)
    if v.size > SHOW_POINT:
        return ""
    entries = ", ".join(format_value(x) for x in v.tolist())
    return f", {name}=[{entries}]"


@dataclass(kw_only=True)
class MCPResult(SolveResult):
    r"""Outcome of solving :math:`l \le z \le u \perp F(z; p)` (fields of :class:`SolveResult` too).

    Attributes
    ----------
    z
        The returned point (NaN-filled when :attr:`solution_status` is ``NO_SOLUTION``).
    F
        :math:`F(z; p)` evaluated on the declaration (not on a reformulation).
    natural_residual
        :math:`\max_i |\operatorname{mid}(z_i - l_i, z_i - u_i, F_i)|`, the natural residual
        :math:`\|z - \Pi_{[l,u]}(z - F)\|_\infty` computed without cancellation
        (:mod:`mcpkit.solving.residuals`).
    complementarity_violation
        Largest per-pair complementarity violation (see :mod:`mcpkit.solving.residuals`).
    bound_violation
        Largest bound violation. ``solved`` means all three are at most :attr:`tol`
        (:func:`judge`).
    blocks
        Block name -> slice into ``z`` (use :meth:`block`).
    problem, p
        The :class:`~mcpkit.MCP` solved and the stacked parameter values it was solved at (set by
        :class:`mcpkit.Solver`; ``None`` for results of other front ends), for :meth:`sensitivity`.
    """

    z: np.ndarray
    F: np.ndarray
    natural_residual: float
    complementarity_violation: float
    bound_violation: float
    blocks: dict[str, slice] = field(default_factory=dict)
    problem: Any = field(default=None, repr=False, compare=False)
    p: np.ndarray | None = field(default=None, repr=False, compare=False)

    kind: ClassVar[str] = "mcp"

    @property
    def x(self) -> np.ndarray:
        """Alias of :attr:`z` (``scipy.optimize`` spelling)."""
        return self.z

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

    def sensitivity(
        self,
        wrt: str | Sequence[str] | None = None,
        *,
        direction: Any = None,
        tol: float | None = None,
        sparse: bool | None = False,
    ) -> Any:
        r""":math:`dz/dp` at this solution, :math:`-J_{II}^{-1}\,\partial F_I/\partial p` on the free pairs.

        Implicit differentiation of the box MCP at its active set (:mod:`mcpkit.stationarity.sensitivity`):
        free pairs :math:`I` follow :math:`dz_I = -(\partial F_I/\partial z_I)^{-1}\,\partial F_I/\partial p`,
        strongly active ones stay at their bound (:math:`dz_A = 0`). :math:`J` and :math:`J_p`
        come from the declaration whatever route or backend solved it.

        Parameters
        ----------
        wrt
            A parameter block name (``"mu"``) or a list of them (``["mu", "v0"]``): a
            :class:`~mcpkit.stationarity.sensitivity.Sensitivity` labelled by block, ``s["mu"]`` being
            :math:`dz/d\mu` (``(n, n_\mu)``) and ``s.block("v", "mu")`` :math:`dv/d\mu`; only
            those columns are computed. An unknown name raises
            :class:`~mcpkit.errors.UnknownOptionError` naming the declared blocks.
            ``None``: the whole unlabelled :math:`dz/dp` (every block, stacked in declaration
            order). A numeric vector here is taken as ``direction`` (the earlier signature).
        direction
            ``None``: the full Jacobian. An array of shape ``(n_p,)``: the directional derivative
            :math:`dz` in that direction, which exists also at degenerate pairs (:math:`z_i` at a
            bound with :math:`F_i = 0`), where it solves a small LCP on those pairs.
        tol
            Activity threshold is ``10 * tol`` (default: the solve's :attr:`tol`).
        sparse
            For the full Jacobian only: ``False`` (default) a dense array, ``True`` a
            ``scipy.sparse.csc_array`` (built a chunk of columns at a time, so an
            :math:`n \times n_p` dense array is never held), ``None`` sparse when
            :math:`n\,n_p` exceeds :data:`~mcpkit.stationarity.sensitivity.SPARSE_AUTO_ENTRIES`.
            Ignored with ``direction`` (a directional derivative is a dense vector).

        Returns
        -------
        Sensitivity, numpy.ndarray or scipy.sparse.csc_array
            With ``wrt``: a :class:`~mcpkit.stationarity.sensitivity.Sensitivity`. Otherwise shape
            ``(n, n_p)`` without ``direction`` (dense unless ``sparse``), ``(n,)`` with it.

        Raises
        ------
        NotDifferentiableError
            Degenerate pairs without ``direction`` (named in the message and in ``.pairs``), or
            :math:`\partial F_I/\partial z_I` singular, or a directional derivative that is not unique.
        SolveFailedError
            The result is not solved.
        MCPInputError
            The MCP has no parameters, the result does not know its MCP, or ``direction`` has the
            wrong shape (:class:`~mcpkit.errors.ShapeError`) or is not finite.
        """
        if wrt is not None and not _is_names(wrt):  # sensitivity(dp): the direction, as before
            if direction is not None:
                raise MCPInputError("give parameter block names or direction=, not both")
            wrt, direction = None, wrt
        return implementation(Hook.MCP_SENSITIVITY)(self, direction, tol, sparse=sparse, wrt=wrt)

    def _residual_fields(self) -> dict[str, float | None]:
        return {
            "comp_residual": _finite_or_none(self.natural_residual),
            "constraint_violation": _finite_or_none(self.bound_violation),
        }

    def __repr__(self) -> str:
        return (
            f"MCPResult(solved={self.solved}, termination={self.termination.value}, "
            f"solution_status={self.solution_status.value}, natural_residual={self.natural_residual:.2e}, "
            f"bound_violation={self.bound_violation:.2e}, tol={self.tol:.0e}, n={self.z.size}, "
            f"pairs: {pair_words(self.pair_counts())}, iterations={self.iterations}, "
            f"wall_time_s={self.wall_time_s:.3f}, route={self.method}/{self.backend}, "
            f"raw_status={self.raw_status!r}{_warnings_text(self.warnings)}{_point_text('z', self.z)})"
        )


@dataclass(kw_only=True)
class MPCCResult(SolveResult):
    r"""Outcome of an MPCC solve (see :mod:`mcpkit.mpcc`), judged on the user's pairs.

    Attributes
    ----------
    x
        The returned point in the user's variables (NaN-filled without a point).
    f
        Objective :math:`f(x; p)` (``nan`` without a point).
    g, G, H
        Constraint and pair function values at :attr:`x`.
    comp_residual
        :math:`\max_j |H_j - \Pi_{[H_{l,j}, H_{u,j}]}(H_j - G_j)|`, which is
        :math:`\max_j |\min(G_j, H_j)|` for standard pairs.
    constraint_violation
        Largest violation of :math:`g`, the bounds on :math:`x` and the bounds on :math:`G, H`.
        ``solved`` means both are at most :attr:`tol`.
    stationarity
        The point's stationarity class (``S``, ``B``, ``M``, ``C``, ``weak``,
        ``not_stationary``, ``not_feasible``), ``"not checked"`` when skipped, ``None`` when
        not asked for; reported beside the verdict, never folded into it.
    """

    x: np.ndarray
    f: float
    g: np.ndarray
    G: np.ndarray
    H: np.ndarray
    comp_residual: float
    constraint_violation: float
    stationarity: str | None = None

    kind: ClassVar[str] = "mpcc"

    @property
    def objective(self) -> float:
        """Alias of :attr:`f`."""
        return self.f

    @property
    def fun(self) -> float:
        """Alias of :attr:`f` (``scipy.optimize`` spelling)."""
        return self.f

    def _objective(self) -> float | None:
        return _finite_or_none(self.f)

    def value_gradient(self, *, tol: float | None = None) -> np.ndarray:
        r""":math:`df^*/dp = \nabla_p \mathcal L` at this solution, from its (unique) multipliers.

        The envelope theorem for the MPCC-Lagrangian
        :math:`\mathcal L = f + \lambda_g^\top g + \lambda_x^\top x - \nu^\top G - \xi^\top H`
        (:mod:`mcpkit.stationarity.value_gradient`): the multipliers are computed at the point
        and must be unique (MPCC-LICQ) with strong-stationarity signs; ``tol`` (default the
        solve's) is the activity and residual tolerance. Shape ``(n_p,)``.

        Raises
        ------
        NotDifferentiableError
            MPCC-LICQ fails, the point is not stationary, or not strongly stationary (says which).
        SolveFailedError
            The result is not solved.
        """
        return implementation(Hook.MPCC_VALUE_GRADIENT)(self, tol)

    def sensitivity(self, direction: Any = None, *, tol: float | None = None) -> np.ndarray:
        r""":math:`dx^*/dp` at this solution by the implicit function theorem on its branch NLP.

        The KKT system of the branch NLP (active constraints and each pair's active side as
        equalities) is differentiated at the point (:mod:`mcpkit.stationarity.mpcc_sensitivity`),
        with the multipliers of :meth:`value_gradient`. Shape ``(n_x, n_p)``, or ``(n_x,)``
        with ``direction`` (``(dx^*/dp)\,dp``); ``tol`` (default the solve's) is the activity
        and residual tolerance.

        Raises
        ------
        NotDifferentiableError
            The point is not strongly stable, saying which condition failed: MPCC-LICQ (smallest
            singular value), strong stationarity, strict complementarity on the branch (biactive
            pairs, zero multipliers of active inequalities, named), or second-order sufficiency
            (smallest eigenvalue of the reduced Hessian).
        SolveFailedError
            The result is not solved.
        MCPInputError
            The MPCC has no parameters, the result does not know its MPCC, or ``direction`` has
            the wrong shape (:class:`~mcpkit.errors.ShapeError`) or is not finite.
        """
        return implementation(Hook.MPCC_SENSITIVITY)(self, direction, tol)

    def _residual_fields(self) -> dict[str, float | None]:
        return {
            "comp_residual": _finite_or_none(self.comp_residual),
            "constraint_violation": _finite_or_none(self.constraint_violation),
        }

    def summary(self) -> dict[str, Any]:
        out = super().summary()
        out["stationarity"] = self.stationarity
        return out

    def __repr__(self) -> str:
        return (
            f"MPCCResult(solved={self.solved}, termination={self.termination.value}, "
            f"solution_status={self.solution_status.value}, f={self.f:.6g}, "
            f"comp_residual={self.comp_residual:.2e}, constraint_violation="
            f"{self.constraint_violation:.2e}, tol={self.tol:.0e}, n={self.x.size}, "
            f"pairs={self.G.size}, stationarity={self.stationarity}, iterations={self.iterations}, "
            f"wall_time_s={self.wall_time_s:.3f}, route={self.method}/{self.backend}"
            f"{_warnings_text(self.warnings)}{_point_text('x', self.x)})"
        )


@dataclass(frozen=True)
class AtParameter:
    r""":math:`z \mapsto \phi(z, p)`: a map of ``(z, p)`` at fixed parameter values ``p``.

    What :func:`judge_point` evaluates (``F_at``, ``F_err``): the caller hands down data, a map of
    a lower layer and its parameters, not a closure of its own that the check would call back.
    """

    fn: Callable[[np.ndarray, np.ndarray], np.ndarray]
    r"""The map :math:`\phi(z, p)`."""
    p: np.ndarray
    """The parameter values."""

    def __call__(self, z: np.ndarray) -> np.ndarray:
        r""":math:`\phi(z, p)`."""
        return self.fn(z, self.p)


@dataclass(frozen=True)
class JudgedPoint:
    """A route's point judged on the original pairs (:func:`judge_point`)."""

    z: np.ndarray
    """The point clipped to :math:`[l, u]` (NaN when there is none)."""
    F: np.ndarray
    """:math:`F(z)` at exactly that point (NaN when there is none)."""
    residuals: Residuals
    """:func:`~mcpkit.solving.residuals.compute_residuals` of ``(z, F)``."""
    status: SolutionStatus
    """:func:`judge` of those residuals."""
    have_point: bool
    """A finite point was given."""
    floor: float = 0.0
    """The natural residual bounded above through the rounding error of :math:`F`
    (:func:`~mcpkit.solving.residuals.certified_residual`; 0 without a point)."""


def judge_point(
    z: np.ndarray | None,
    F_at: Callable[[np.ndarray], np.ndarray],
    lb: np.ndarray,
    ub: np.ndarray,
    tol: float,
    F: np.ndarray | None = None,
    F_err: Callable[[np.ndarray], np.ndarray] | None = None,
) -> JudgedPoint:
    r"""The one verdict on an MCP point: clip, evaluate, measure, :func:`judge`.

    :math:`z \leftarrow \Pi_{[l,u]}(z)`; :math:`F = F(z)`, taken from ``F`` when it was evaluated at
    exactly that point (a route's own evaluation) and from ``F_at`` otherwise; then
    :func:`~mcpkit.solving.residuals.compute_residuals` and :func:`judge` with every measure. ``z`` that
    is ``None`` or not finite is no point: NaN arrays, ``NO_SOLUTION``. Used by
    :class:`mcpkit.Solver`, :func:`mcpkit.solve_mcp` and the ``auto`` chain alike.

    The check knows its own rounding floor: ``F_err(z)`` bounds :math:`|\mathrm{fl}(F_i) - F_i|`
    (:meth:`MCP.rounding_floor_function <mcpkit.problems.mcp.MCP.rounding_floor_function>`:
    :math:`\varepsilon(\sum_j |M_{ij} z_j| + |q_i|)` for an affine :math:`F`, the same on the
    Jacobian otherwise); without it :math:`\varepsilon |F_i|`, the rounding of the last operation
    only (what can be had for any :math:`F` at no cost). A point that passes
    every measure but whose :func:`~mcpkit.solving.residuals.certified_residual` exceeds ``tol`` is
    ``UNCERTIFIED``.
    """
    if isinstance(z, np.ndarray) and F is not None and finite_in_box(z, lb, ub):  # the route's F at z
        zz, FF, have = np.array(z, dtype=float), F, True
    else:
        have = z is not None and bool(np.isfinite(z).all())
        if have:
            assert z is not None
            zz = np.minimum(np.maximum(np.asarray(z, dtype=float), lb), ub)
            same = F is not None and np.array_equal(zz, z)
            FF = F if same else np.asarray(F_at(zz), dtype=float).reshape(-1)
        else:
            zz, FF = np.full(lb.size, np.nan), np.full(lb.size, np.nan)
    r = compute_residuals(zz, FF, lb, ub)
    status = judge(r.natural, r.bounds, tol, have, r.complementarity)
    floor = 0.0
    if status is SolutionStatus.SOLUTION:
        err = np.abs(FF) * EPS if F_err is None else np.asarray(F_err(zz), dtype=float)
        floor = certified_residual(zz, FF, lb, ub, err)
        if not floor <= tol:
            status = SolutionStatus.UNCERTIFIED
    return JudgedPoint(zz, FF, r, status, have, floor)


def _fmt(v: float | None) -> str:
    return "nan" if v is None else f"{v:.3e}"


def _finite_or_none(v: float) -> float | None:
    return float(v) if np.isfinite(v) else None


def judge(
    natural: float,
    bounds: float,
    tol: float,
    have_point: bool,
    complementarity: float | None = None,
) -> SolutionStatus:
    r"""mcpkit's verdict on a point from its residuals (never from a solver's word).

    .. math::
        \text{SOLUTION} \iff \text{a point} \wedge r_{\mathrm{bnd}} \le \text{tol} \wedge
        r_{\mathrm{nat}} \le \text{tol} \wedge r_{\mathrm{comp}} \le \text{tol},

    every measure finite (NaN or :math:`\infty` never passes). Otherwise ``NO_SOLUTION``
    without a point, ``INFEASIBLE_POINT`` when :math:`r_{\mathrm{bnd}}` fails, else
    ``INACCURATE``. ``complementarity`` is :math:`r_{\mathrm{comp}}` of
    :func:`~mcpkit.solving.residuals.compute_residuals` (every caller in mcpkit passes it); ``None``
    judges without it, which for a point inside the bounds is the same verdict.
    """
    if not have_point:
        return SolutionStatus.NO_SOLUTION
    if not bounds <= tol:
        return SolutionStatus.INFEASIBLE_POINT
    if natural <= tol and (complementarity is None or complementarity <= tol):
        return SolutionStatus.SOLUTION
    return SolutionStatus.INACCURATE


def reported_termination(term: Termination, status: SolutionStatus, infeasibility_shown: bool) -> Termination:
    """The one rule for the termination a result reports, MCP or MPCC: the route's ``term`` checked.

    * ``CONVERGED`` that mcpkit's ``status`` (:func:`judge`) does not confirm is ``STALLED``;
    * ``LOCALLY_INFEASIBLE`` stands only when ``infeasibility_shown``: for an MCP a verified
      certificate that it has no solution (Lemke's ray, :func:`mcp_termination`); for an MPCC a
      returned point that violates the constraints by more than ``tol``
      (:func:`~mcpkit.orchestration.mpcc_solver.mpcc_result`). A solver's word alone (IPOPT's
      ``Infeasible_Problem_Detected`` on a relaxed subproblem, PATH's "infeasible") is ``STALLED``.
    """
    if term is Termination.CONVERGED and status is not SolutionStatus.SOLUTION:
        return Termination.STALLED
    if term is Termination.LOCALLY_INFEASIBLE and not infeasibility_shown:
        return Termination.STALLED
    return term


def note_overrun(result: SolveResult, limit: float | None, wall: float) -> SolveResult:
    r"""The one rule for "the time ran out": a call (or a staged solve) that ended after its time
    limit says so. :math:`\text{wall} > \text{limit}` makes the termination
    :attr:`Termination.TIME_LIMIT` (in the message too: an earlier ``termination X`` is replaced,
    and both times are stated), whatever the point is; the verdict ``solved`` stays the
    residual check's. Returns ``result``, changed in place.

    A phase that cannot be interrupted (reading a Pyomo model, building the solver, a native
    factorization) can overrun the limit; the call then does not claim to have finished in time.
    And a staged solve stopped by its deadline may keep the point of an earlier stage that ended at
    its own iteration cap: it reports the time limit, not that stage's ``iteration_limit`` (an
    FCLIB RockPile file stopped at 20 s said ``iteration_limit``). :func:`mcpkit.solve`, the FCLIB
    stages (:func:`mcpkit.models.fclib.solve_equations`) and ``SolverFactory("mcpkit")``
    (``maxTimeLimit``) apply this rule.
    """
    if limit is None or not wall > limit:
        return result
    old = result.termination
    result.termination = Termination.TIME_LIMIT
    if old is not Termination.TIME_LIMIT:
        new = f"termination {Termination.TIME_LIMIT.value}"
        result.message = result.message.replace(f"termination {old.value}", new)
    if f"time limit {limit:g} s exceeded" not in result.message:
        result.message += f"; time limit {limit:g} s exceeded: the call took {wall:.2f} s"
    return result


def mcp_termination(term: Termination, status: SolutionStatus, extra: dict[str, Any]) -> Termination:
    """:func:`reported_termination` of an MCP, shown infeasible by ``extra["infeasibility_certificate"]``."""
    return reported_termination(term, status, "infeasibility_certificate" in extra)


def verdict_message(
    who: str,
    status: SolutionStatus,
    natural: float,
    complementarity: float,
    bounds: float,
    tol: float,
    termination: Termination,
    floor: float = 0.0,
) -> str:
    """``"solved <who>: natural residual ... (tol ...), termination ..."``, naming every failed measure.

    An ``UNCERTIFIED`` status says ``cannot certify at this tolerance`` with ``floor``, the natural
    residual the rounding of :math:`F` may hide (:attr:`JudgedPoint.floor`).
    """
    verdict = "solved" if status is SolutionStatus.SOLUTION else "NOT solved"
    msg = f"{verdict} {who}: natural residual {natural:.2e} (tol {tol:.0e})"
    failed = [
        f"{name} {value:.2e}"
        for name, value in (("complementarity violation", complementarity), ("bound violation", bounds))
        if not value <= tol
    ]
    if failed and status is not SolutionStatus.NO_SOLUTION:
        msg += ", " + ", ".join(failed)
    if status is SolutionStatus.UNCERTIFIED:
        msg += (
            f", cannot certify at this tolerance: the rounding error of evaluating F allows a natural "
            f"residual up to {floor:.2e} (rounding floor above tol; loosen tol or rescale the data)"
        )
    return f"{msg}, termination {termination.value}"


class FromParts:
    """Mixin: ``solved``, ``termination`` and ``message`` of a composite result from :attr:`parts`.

    Solved when there is at least one part and every part is solved; the termination is the
    first failing part's (:func:`verdict_of`). Subclasses provide ``parts`` (a sequence of
    :class:`Outcome`, as an attribute or a property) and may override :attr:`message`.
    """

    parts: Sequence[Outcome]
    part_name: ClassVar[str] = "part"
    """What one part is called in messages (``"step"``, ``"check"``, ``"attempt"``)."""
    repr_keys: ClassVar[tuple[str, ...] | None] = None
    """Summary figures the repr shows (``None``: those after :data:`RESULT_KEYS`, the first
    :data:`~mcpkit.solving.tables.REPR_FIELDS`)."""

    def summary(self) -> dict[str, Any]:
        """JSON-ready summary starting with :data:`RESULT_KEYS` (each result defines it)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        """A few lines: the verdict, the summary's key figures, array sizes and the message
        (:func:`~mcpkit.solving.tables.outcome_repr`); the data stay in the attributes."""
        return outcome_repr(type(self).__name__, self, self.summary(), self.repr_keys)

    @property
    def solved(self) -> bool:
        """Every part solved (and there is at least one)."""
        return verdict_of(self.parts, self.part_name)[0]

    @property
    def termination(self) -> Termination:
        """``CONVERGED`` when solved, else the first failing part's termination."""
        return verdict_of(self.parts, self.part_name)[1]

    @property
    def message(self) -> str:
        """How many parts were solved and the first failure's message (one part: its message)."""
        parts = self.parts
        if len(parts) == 1:
            return parts[0].message
        return verdict_of(parts, self.part_name)[2]

    def failures(self) -> str:
        """``"FAILED: "`` and the reason of every failed part, in order (MPCC solves prefixed)."""
        why = [
            f"MPCC not solved: {p.message}" if isinstance(p, MPCCResult) else p.message
            for p in self.parts
            if not p.solved
        ]
        return "FAILED: " + "; ".join(why)


class OnePart(FromParts):
    """Mixin: a result that wraps one part (a run around its simulation): its verdict and message."""

    @property
    def part(self) -> Outcome:
        """The wrapped part."""
        raise NotImplementedError

    @property
    def parts(self) -> list[Outcome]:
        """``[part]``."""
        return [self.part]


@dataclass(frozen=True)
class ToleranceCheck:
    r"""A measured value judged against a tolerance (an :class:`Outcome` part).

    .. math::
        \text{solved} \iff v \text{ finite and } v \le \text{tol}.

    For parts that are not solves: a re-simulation deviation, a physical residual, an error
    against a closed form. ``termination`` is ``CONVERGED`` when solved, ``STALLED`` when the
    value is finite but above the tolerance, ``NUMERICAL_ERROR`` when there is no finite value.
    """

    quantity: str
    """What is measured, as messages name it (e.g. ``"re-simulation deviation"``)."""
    value: float | None
    """The measured value (``None`` or non-finite: nothing to measure)."""
    tol: float
    """The tolerance."""
    kind: str = "check"
    """The summary's ``kind``."""
    wall_time_s: float = 0.0
    """Wall time of the measurement (e.g. the re-simulation)."""
    not_checked: str = ""
    """Why the value was not measured (e.g. ``"time limit"``): the check is then not solved and
    its termination is ``TIME_LIMIT`` when that is the reason, else ``NUMERICAL_ERROR``."""

    @property
    def finite(self) -> bool:
        """A finite value was measured."""
        return self.value is not None and math.isfinite(self.value)

    @property
    def solved(self) -> bool:
        """The value was measured, is finite and at most :attr:`tol`."""
        return not self.not_checked and self.finite and self.value <= self.tol  # type: ignore[operator]

    @property
    def termination(self) -> Termination:
        """``CONVERGED``, ``STALLED`` (above tol) or ``NUMERICAL_ERROR`` (no finite value)."""
        if self.not_checked:
            return Termination.TIME_LIMIT if "time limit" in self.not_checked else Termination.NUMERICAL_ERROR
        if self.solved:
            return Termination.CONVERGED
        return Termination.STALLED if self.finite else Termination.NUMERICAL_ERROR

    @property
    def message(self) -> str:
        """``"<quantity> <value> <= <tol>"`` (or ``>``), or that there was no finite value."""
        if self.not_checked:
            return f"{self.quantity}: not checked ({self.not_checked})"
        if not self.finite:
            return f"{self.quantity}: no finite value"
        return f"{self.quantity} {self.value:.2e} {'<=' if self.solved else '>'} {self.tol:.0e}"

    def summary(self) -> dict[str, Any]:
        """:data:`RESULT_KEYS`, then the quantity, its value and the tolerance."""
        out = summary_head(self.kind, self, self.wall_time_s)
        out.update(quantity=self.quantity, value=float(self.value) if self.finite else None, tol=self.tol)
        return out


@dataclass(kw_only=True, repr=False)
class CompositeResult(FromParts):
    """A result made of parts (runs of a demo, problems of a file set), judged part by part.

    ``solved``, ``termination`` and ``message`` come from :class:`FromParts` over the parts;
    :meth:`summary` is :data:`RESULT_KEYS` followed by :attr:`details`.
    """

    kind: str
    """What it is (``"demo:sliding"``, ``"fclib"`` ...), the summary's ``kind``."""
    parts: list[Outcome]
    """The per-part results, each following :class:`Outcome`."""
    what: str = "part"
    """What one part is called in messages (``"step"``, ``"run"``, ``"problem"``)."""
    wall_time_s: float = 0.0
    """Wall time of the whole job."""
    details: dict[str, Any] = field(default_factory=dict)
    """JSON-ready figures appended to the summary after :data:`RESULT_KEYS`."""

    @property
    def part_name(self) -> str:  # type: ignore[override]
        """:attr:`what`."""
        return self.what

    def summary(self) -> dict[str, Any]:
        """:data:`RESULT_KEYS`, then :attr:`details`."""
        out = summary_head(self.kind, self, self.wall_time_s)
        out.update(self.details)
        return out

    def __str__(self) -> str:
        """:meth:`summary` as an aligned table, 4 significant digits (what ``mcpkit demo`` prints)."""
        return format_summary(self.summary())
