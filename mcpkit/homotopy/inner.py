r"""The inner solver of the homotopy: one smooth NLP per call, and which IPOPT solves it.

Every subproblem of :mod:`mcpkit.homotopy.loop` (a relaxed NLP of a reformulation, or the
active-set polish) is

.. math::

    \min_x f(x; q) \quad\text{s.t.}\quad g_l \le g(x; q) \le g_u,\quad x_l \le x \le x_u,

an :class:`~mcpkit.homotopy.reformulation.NLPTemplate` whose parameter vector :math:`q` holds the
problem's parameters and the homotopy parameter. An :class:`InnerSolver`
(the base class states the call) is built once per template by an :class:`InnerFactory` and
solves it for many :math:`(x_0, q)`, warm-started from multipliers
:math:`(\lambda_{x,0}, \lambda_{g,0})` when given, stopping at a deadline. Two
implementations, with the same IPOPT options (:func:`~mcpkit.homotopy.ipopt.ipopt_option_dict`:
``tol = inner_tol_factor * tol`` and the warm-start settings):

* :class:`~mcpkit.homotopy.ipopt.CasadiInner`: CasADi's ``nlpsol`` IPOPT on the template's
  graph (:class:`~mcpkit.homotopy.ipopt.IpoptNLP`), built once, no files;
* :class:`~mcpkit.homotopy.pyomo_inner.PyomoInner`: the template replayed as a Pyomo model and
  solved by a Pyomo NLP solver object, an ``ipopt`` executable or ``mcpkit_ipopt``
  (:mod:`mcpkit.homotopy.pyomo_inner`).

This file is the contract every implementation follows: the call (:class:`InnerSolver`,
:class:`InnerCall`), what it returns (:class:`InnerResult`, with IPOPT's status names, which the
LP inner solver of :mod:`mcpkit.homotopy.lp_inner` reports too), the settings and the factory.
Each implementation is one file with its factory: :mod:`mcpkit.homotopy.ipopt`,
:mod:`mcpkit.homotopy.pyomo_inner`, :mod:`mcpkit.homotopy.lp_inner`. The planner maps the user's
``ipopt=`` choice to a factory (:func:`mcpkit.orchestration.planner.select_inner`).
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from mcpkit.solving.options import WarmStart
from mcpkit.solving.result import Termination

if TYPE_CHECKING:
    from mcpkit.homotopy.reformulation import NLPTemplate

#: IPOPT ``return_status`` strings (as CasADi reports them) -> mcpkit termination.
#: "Solved" statuses map to CONVERGED only for the *subproblem*; mcpkit's own residual
#: test decides whether the MCP/MPCC is solved.
IPOPT_STATUS: dict[str, Termination] = {
    "Solve_Succeeded": Termination.CONVERGED,
    "Solved_To_Acceptable_Level": Termination.CONVERGED,
    "Feasible_Point_Found": Termination.CONVERGED,
    "Infeasible_Problem_Detected": Termination.LOCALLY_INFEASIBLE,
    "Search_Direction_Becomes_Too_Small": Termination.STALLED,
    "Diverging_Iterates": Termination.NUMERICAL_ERROR,
    "User_Requested_Stop": Termination.INTERRUPTED,
    "Maximum_Iterations_Exceeded": Termination.ITERATION_LIMIT,
    "Maximum_CpuTime_Exceeded": Termination.TIME_LIMIT,
    "Maximum_WallTime_Exceeded": Termination.TIME_LIMIT,
    "Restoration_Failed": Termination.STALLED,
    "Error_In_Step_Computation": Termination.NUMERICAL_ERROR,
    "Not_Enough_Degrees_Of_Freedom": Termination.SOLVER_ERROR,
    "Invalid_Problem_Definition": Termination.SOLVER_ERROR,
    "Invalid_Option": Termination.SOLVER_ERROR,
    "Invalid_Number_Detected": Termination.NUMERICAL_ERROR,
    "Unrecoverable_Exception": Termination.SOLVER_ERROR,
    "NonIpopt_Exception_Thrown": Termination.SOLVER_ERROR,
    "Insufficient_Memory": Termination.SOLVER_ERROR,
    "Internal_Error": Termination.SOLVER_ERROR,
    # the LP inner solver of affine subproblems (mcpkit.homotopy.lp_inner: HiGHS)
    "LP_Optimal": Termination.CONVERGED,
    "LP_Infeasible": Termination.LOCALLY_INFEASIBLE,
    "LP_Unbounded": Termination.NUMERICAL_ERROR,
    "LP_Limit_Reached": Termination.TIME_LIMIT,
    "LP_Numerical_Difficulties": Termination.NUMERICAL_ERROR,
    # the MILP's point of an LPEC polish whose branch LP HiGHS could not solve (lpec_polish)
    "LP_MILP_Point": Termination.CONVERGED,
}


def ipopt_termination(status: str) -> Termination:
    """Map a raw IPOPT status to :class:`~mcpkit.solving.result.Termination` (unknown -> SOLVER_ERROR)."""
    return IPOPT_STATUS.get(status, Termination.SOLVER_ERROR)


#: IPOPT statuses returned before the first iteration (checks of the problem and the options).
#: CasADi's ``iter_count`` is then whatever its buffer held: 1,701,667,187 and -7,892,976 on
#: NOSBENCH's DAOBCLS with ``scholtes_eq`` (more equality rows than variables). Not here:
#: ``Insufficient_Memory``, which IPOPT also returns in the middle of a run.
NO_ITERATION_STATUSES = frozenset({
    "Not_Enough_Degrees_Of_Freedom", "Invalid_Problem_Definition", "Invalid_Option",
})  # fmt: skip


@dataclass(frozen=True)
class InnerResult:
    """One IPOPT call."""

    x: np.ndarray
    lam_x: np.ndarray
    lam_g: np.ndarray
    f: float
    status: str
    iterations: int
    wall_time_s: float

    @property
    def ok(self) -> bool:
        """IPOPT's own verdict that the subproblem converged (not mcpkit's verdict)."""
        return ipopt_termination(self.status) is Termination.CONVERGED

    @classmethod
    def failure(cls, nx: int, ng: int, exc: BaseException, wall_time_s: float) -> InnerResult:
        """A call that raised ``exc`` (an evaluation error, a crashed executable): no point."""
        text = str(exc).strip()
        why = text.splitlines()[-1][:200] if text else type(exc).__name__
        return cls(
            x=np.full(nx, np.nan),
            lam_x=np.zeros(nx),
            lam_g=np.zeros(ng),
            f=float("nan"),
            status=f"exception: {why}",
            iterations=0,
            wall_time_s=wall_time_s,
        )


@dataclass(frozen=True)
class InnerCall:
    """The arguments of one :meth:`InnerSolver.solve` call, and its start time."""

    x0: np.ndarray
    q: np.ndarray
    lbx: np.ndarray
    ubx: np.ndarray
    lbg: np.ndarray
    ubg: np.ndarray
    lam_x0: np.ndarray | None
    lam_g0: np.ndarray | None
    deadline: float | None
    t0: float
    max_iter: int | None = None


class InnerSolver(ABC):
    r"""A built solver for one NLP structure: :math:`\min_x f(x; q)` s.t. :math:`g_l \le g(x; q)
    \le g_u`, :math:`x_l \le x \le x_u`, solved for many :math:`(x_0, q)` (see
    :mod:`mcpkit.homotopy.inner`). Subclasses implement :meth:`_run`; an exception of
    :attr:`errors` becomes a failed :class:`InnerResult` with no point.
    """

    nx: int
    """Number of variables."""
    ng: int
    """Number of rows."""
    errors: tuple[type[BaseException], ...] = (RuntimeError,)
    """Exceptions that mean "this call failed" rather than a bug."""

    def solve(
        self,
        x0: np.ndarray,
        q: np.ndarray,
        lbx: np.ndarray,
        ubx: np.ndarray,
        lbg: np.ndarray,
        ubg: np.ndarray,
        lam_x0: np.ndarray | None = None,
        lam_g0: np.ndarray | None = None,
        deadline: float | None = None,
        max_iter: int | None = None,
    ) -> InnerResult:
        r"""Solve from ``x0`` (and multipliers, when given) at parameters ``q``.

        ``deadline`` (a :func:`time.perf_counter` value) stops the solve at the first iteration
        after it; ``max_iter`` caps this call's iterations below the solver's own ``max_iter``
        (both need a solver built with ``deadlines``; others ignore the cap). A call the cap
        ended reports ``Maximum_Iterations_Exceeded``, as IPOPT's own ``max_iter`` would (and as
        an ``ipopt`` executable given the cap as ``max_iter`` does). Returns the point,
        CasADi-convention multipliers (:math:`\lambda_x = z_U - z_L`, :math:`\lambda_g` as
        IPOPT's), IPOPT's status name and its iteration count.
        """
        t0 = time.perf_counter()
        try:
            return self._run(InnerCall(x0, q, lbx, ubx, lbg, ubg, lam_x0, lam_g0, deadline, t0, max_iter))
        except self.errors as exc:
            return InnerResult.failure(self.nx, self.ng, exc, time.perf_counter() - t0)

    @abstractmethod
    def _run(self, call: InnerCall) -> InnerResult:
        """One solve (see :meth:`solve`)."""


@dataclass(frozen=True)
class InnerSettings:
    """How one inner solver runs IPOPT (shared by every implementation)."""

    tol: float
    """IPOPT ``tol`` (also ``constr_viol_tol`` and ``compl_inf_tol``)."""
    max_iter: int = 3000
    """IPOPT ``max_iter``."""
    warm: bool = False
    """Warm-start settings: start from the given point and multipliers."""
    verbose: bool = False
    """Show IPOPT's log."""
    options: dict[str, Any] = field(default_factory=dict)
    """The user's IPOPT options by IPOPT name (validated when the solver is built)."""
    deadlines: bool = False
    """Calls may pass a ``deadline`` (the solve has a time limit)."""
    name: str = "nlp"
    """Label of the solver (CasADi function name, Pyomo model name)."""
    warm_start: WarmStart = WarmStart.STANDARD
    """The IPOPT settings of a ``warm`` solver (:class:`~mcpkit.solving.options.WarmStart`)."""

    def with_warm(self, warm: bool, name: str) -> InnerSettings:
        """The same settings with ``warm`` and ``name`` replaced."""
        return replace(self, warm=warm, name=name)


class InnerFactory(Protocol):
    """Builds an :class:`InnerSolver` for a template."""

    description: str
    """Which IPOPT runs, for results (``extra["ipopt"]``)."""

    def __call__(self, nlp: NLPTemplate, settings: InnerSettings) -> InnerSolver:
        """The inner solver of ``nlp``."""
        ...
