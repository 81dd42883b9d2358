r"""The outer loop shared by every IPOPT reformulation, and the active-set polish.

For parameters :math:`t_0, t_1, \dots` from the reformulation's schedule:

1. solve the NLP at :math:`t_k` with IPOPT, warm-started from :math:`(x_{k-1}, \lambda_{k-1})`;
2. measure the residual **of the original problem** at the new point (natural residual of the
   MCP, or :math:`\max_j |\min(G_j, H_j)|` and the constraint violation for an MPCC);
3. stop when it meets ``tol``;
4. once the residual is below ``polish_trigger`` (and, after a polish that did not meet the
   tolerance, below :data:`POLISH_BACKOFF` times the residual it was tried at), *polish*: with
   :math:`\mathcal{A} = \{j : G_j \le H_j\}` solve

   .. math::

       \min_x f \quad\text{s.t.}\quad g_l \le g \le g_u,\ x_l \le x \le x_u,\
       G_{\mathcal{A}} = 0,\ H_{\mathcal{A}} \ge 0,\ H_{\bar{\mathcal{A}}} = 0,\ G_{\bar{\mathcal{A}}} \ge 0,

   a smooth NLP (for an MCP a square system) whose solution, when it exists, solves the original
   problem to IPOPT's accuracy. When :math:`f, g, G, H` are all affine in :math:`x` (an LPEC)
   that problem is an LP, solved exactly by HiGHS (:mod:`mcpkit.homotopy.lp_inner`).

Every subproblem is solved by an inner solver built from the reformulation's template by an
:class:`~mcpkit.homotopy.inner.InnerFactory` (default: CasADi's ``nlpsol`` IPOPT; on backend
``pyomo`` an ``ipopt`` executable or ``mcpkit_ipopt`` through Pyomo), so this one loop (adaptive
parameter, retries, fallbacks, polish, time limit) serves every backend.

A failed subproblem does not end the run: the next parameter is tried from the last good point,
up to ``max_retries`` failures in a row; after that
:class:`~mcpkit.homotopy.recovery.RecoveringHomotopy` retries with the other reformulations.
A subproblem IPOPT calls "solved" is never taken as success by itself; only the residual test
decides.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import casadi as ca
import numpy as np

from mcpkit.homotopy.inner import (
    NO_ITERATION_STATUSES,
    InnerFactory,
    InnerResult,
    InnerSettings,
    InnerSolver,
    ipopt_termination,
)
from mcpkit.homotopy.ipopt import CasadiInner, wall_build_seconds
from mcpkit.homotopy.lp_inner import LinearInner
from mcpkit.homotopy.lpec_polish import AffinePairs, identify_and_solve, pair_functions
from mcpkit.homotopy.reformulation import NLPTemplate, Reformulation, sign_constraints
from mcpkit.lowering.base import Lowering
from mcpkit.lowering.casadi import CasadiMCP
from mcpkit.problems.derivatives import CACHE_KEY
from mcpkit.problems.mpcc import MPCC
from mcpkit.solving import stop
from mcpkit.solving.options import SolveOptions, progress_trace
from mcpkit.solving.residuals import compute_residuals, judged_residuals
from mcpkit.solving.result import HomotopyStep, Termination

#: After a polish that does not meet the tolerance, the next one (within the same run) waits until
#: the residual has fallen below this factor times the residual the failed one started from. A
#: polish that fails says the active set identified at that accuracy is wrong; identification
#: improves only as the residual shrinks, while each polish is a cold NLP that costs many warm
#: homotopy steps (on MPECLib's ``frictionalblock_6``, eight failed polishes cost 35 s of a 53 s
#: run). Homotopy steps shrink the residual by about ``sqrt(sigma_factor)`` each, so the polish is
#: retried about every fourth step instead of every step; the last polish from the best point
#: before giving up is unaffected.
POLISH_BACKOFF = 1e-2

#: On problems of more than :data:`POLISH_CAP_ABOVE_VARS` variables a polish tried inside the loop
#: stops after ``max(POLISH_MIN_ITER, iterations of this run so far)`` IPOPT iterations and the
#: homotopy goes on; the point of a polish stopped there is not taken (it may be feasible and
#: complementary without being a stationary point of the branch, and would then rank above the
#: homotopy's later, better points). A polish from a wrongly identified active set is not a short
#: Newton run but a new, often degenerate NLP that IPOPT may wander in for thousands of
#: iterations at 10-30 ms each on these sizes (NOSBENCH-large ``DSCSP_001_031_..._STEP_7``: 3,000
#: iterations and 40 s of a 60 s budget after 1,608 homotopy iterations, where the next four
#: homotopy steps, 300 iterations, were enough). Small problems are not capped: a polish of 3,000
#: iterations costs them about a second, and long polishes there do succeed (MPECLib
#: ``bartruss3_5``: 1,270 iterations; with a cap of 1,000 the run ended at f = 10166.6 instead of
#: 3.6e-7). The cap counts iterations, not seconds, so the outcome does not depend on the machine.
#: The warm-start polish (before any step) and the last polish before giving up are not capped.
#: A polish stopped there is recognised by its status, ``Maximum_Iterations_Exceeded`` (the inner
#: solver's report of its cap), not by comparing IPOPT's iteration count with the cap: that count
#: can end below the cap (NOSBENCH 3CPTF_002_020: 1,431 at a cap of 1,432, 299 at 300), and the
#: stopped polish's point was then taken like a converged one, "solved" when it happened to be
#: feasible and complementary (NOSBENCH-large DSCOB_003_031: a polish stopped at 1,690 of a cap
#: of 1,790 ended the run at f = 692.45; recognised, the homotopy goes on to f = 638.49). Such a
#: point that meets the tolerance is still returned when the time limit cuts the run before a
#: better one, with termination ``time_limit`` and the result's note that it is no converged plan.
POLISH_MIN_ITER = 1000
POLISH_CAP_ABOVE_VARS = 1000

#: On problems of more than :data:`POLISH_CAP_ABOVE_VARS` variables a warm-started subproblem
#: stops after ``max(RELAX_MIN_ITER, RELAX_ITER_GROWTH * n)`` IPOPT iterations, ``n`` those of the
#: last *warm-started* subproblem that succeeded, and counts as a failed step (its point is still
#: measured, and may be polished). Late in the homotopy a warm start needs a few dozen
#: iterations; a subproblem that runs away from it does not come back: the block-pushing
#: horizon of ``mcpkit.mpec`` at N = 100 (2,206 variables) took 3,000 iterations and 14 s at
#: sigma = 1e-7 after steps of 10-11 iterations, where the polish from the point before solved it.
#: The first warm subproblem is not capped: it is measured against a cold one, not a warm one,
#: and the step from sigma0 is the longest of the path; its legitimate growth over the cold one
#: already comes near the factor (6.4x on NOSBENCH 3CPTF_002_020, 166 then 1,055 iterations;
#: 6.5x on 3CPTF_001_030, 146 then 952), and nothing bounds it on other problems. A cap there
#: discards the run's largest piece of work for a restart from the cold point: with the factor
#: at 5, 3CPTF_002_020 lost three capped steps and ended unsolved at f = 22.5 (95.24 uncapped).
RELAX_MIN_ITER = 200
RELAX_ITER_GROWTH = 10


T = TypeVar("T")


@dataclass(frozen=True)
class Assessment:
    """Residuals of a candidate point, measured on the original problem."""

    residual: float
    """Natural residual (MCP) or complementarity residual (MPCC)."""
    violation: float
    """Bound violation (MCP) or constraint violation (MPCC)."""

    def meets(self, tol: float) -> bool:
        """Both measures are finite and at most ``tol``."""
        return bool(self.residual <= tol and self.violation <= tol)

    def key(self, tol: float) -> tuple[bool, float, float]:
        """Sort key: feasible points (violation ``<= tol``) first, by residual; then the others
        by the larger of residual and violation, the one nearest to meeting the tolerance (NaN
        counts as infinite). Ranking those by residual alone kept a start point with violation
        13 and residual 0 over homotopy points with violation 1.4e-6 (MacMPEC ``water-net``)."""
        r = math.inf if math.isnan(self.residual) else self.residual
        v = math.inf if math.isnan(self.violation) else self.violation
        feasible = v <= tol
        return (not feasible, r if feasible else max(r, v), v)


def clipped_or_given(
    x: np.ndarray,
    lb: np.ndarray,
    ub: np.ndarray,
    judge: Callable[[np.ndarray], tuple[T, Assessment]],
    tol: float,
) -> tuple[np.ndarray, T, Assessment]:
    """``(point, judge's value, assessment)`` of ``x`` clipped into ``[lb, ub]``; when that
    point misses ``tol``, of ``x`` as given if its :meth:`Assessment.key` is smaller.

    IPOPT relaxes bounds slightly (``bound_relax_factor``) and returns points up to
    ``constr_viol_tol`` outside them; clipping such a point moves the constraints by that times
    their coefficients (7e-6 on MacMPEC ``bar-truss-3``), while the point as given violates a
    bound by at most that, which the verdict counts.
    """
    xc = np.clip(x, lb, ub)
    value, a = judge(xc)
    if a.meets(tol) or np.array_equal(xc, x):
        return xc, value, a
    value_r, a_r = judge(x)
    if a_r.key(tol) < a.key(tol):
        return np.asarray(x, dtype=float), value_r, a_r
    return xc, value, a


def assess_mcp_point(
    cmcp: CasadiMCP, z: np.ndarray, p: np.ndarray
) -> tuple[np.ndarray, np.ndarray, Assessment]:
    """``(z clipped into [l, u], F there, its Assessment)`` on the MCP declaration itself.

    The one place every MCP route measures a candidate: natural residual and bound violation of
    the original pairs, with ``F`` evaluated from the declaration, not from a reformulation.
    """
    zc = np.clip(z, cmcp.lb, cmcp.ub)
    F = np.asarray(cmcp.F_fun(zc, p), dtype=float).reshape(-1)
    r = compute_residuals(zc, F, cmcp.lb, cmcp.ub)
    return zc, F, Assessment(r.natural, r.bounds)


Assessor = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, Assessment]]
"""``(x, p) -> (x_reported, assessment)``; may project ``x`` (e.g. clip to bounds)."""


class MCPPointAssessor:
    r"""A slack-form point :math:`x = (z, w)` of an MCP judged on the MCP declaration: the
    homotopy's :data:`Assessor` of the MCP routes through the homotopy.

    :math:`z` is clipped into :math:`[l, u]` and judged by :func:`assess_mcp_point` (natural
    residual and bound violation of the original pairs, :math:`F(z)` from the declaration); the
    last :math:`(z, F(z))` is kept (:meth:`F_at`), so the route reports ``F`` at its point
    without evaluating it again. Built by the route and handed down, so the loop calls no route
    back.
    """

    def __init__(self, cmcp: CasadiMCP) -> None:
        self.cmcp = cmcp
        self.last: tuple[np.ndarray, np.ndarray] | None = None
        """The last assessed ``(z, F(z))`` (``None``: none yet)."""

    def __call__(self, x: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, Assessment]:
        """``(x with z clipped, assessment)``; the slack variables after ``z`` are kept."""
        n = self.cmcp.n
        x = x.copy()
        x[:n], F, a = assess_mcp_point(self.cmcp, x[:n], p)
        self.last = (x[:n].copy(), F)
        return x, a

    def F_at(self, z: np.ndarray) -> np.ndarray | None:
        """``F`` of the last assessment if it was evaluated at exactly ``z``."""
        last = self.last
        if last is not None and np.array_equal(last[0], z):
            return last[1]
        return None


class PointAssessor:
    r"""A point of a lowered MPCC judged on the user's MPCC: every MPCC candidate's measure.

    For a point :math:`x` of ``lowered`` (the standard form, its lifted pairs, its Pyomo/NL round
    trip) the user's point is :math:`u = L^{-1}(x)`, the inverse map of the ``lowering`` chain
    (``lowering.invert(x, inverse)``: the user's variables, leading in :math:`x`), and

    .. math::

        (r, v) = \bigl(\max_j |\operatorname{mid}(H_j(u) - H_{l,j},\ H_j(u) - H_{u,j},\
        G_j(u))|,\ \text{constraint violation at } u\bigr)

    on the user's **original** pairs (:func:`~mcpkit.solving.residuals.judged_residuals`), never
    on the reformulated NLP. Built once per solver from data (the problems, the lowering chain,
    its inverse data, ``tol``) and handed down: :meth:`__call__` is the homotopy's
    :data:`Assessor`, :meth:`measure` and :meth:`clipped_or_given` the refinement's
    (:class:`~mcpkit.stationarity.refine.Refiner`), so neither calls back into the solver
    that built it.
    """

    def __init__(self, problem: MPCC, lowered: MPCC, lowering: Lowering, inverse: Any, tol: float) -> None:
        self.problem = problem
        """The user's MPCC, on whose pairs every point is judged."""
        self.lowered = lowered
        """The MPCC whose points are assessed (its bounds clip them)."""
        self.lowering = lowering
        self.inverse = inverse
        self.tol = tol

    def user_point(self, x: np.ndarray) -> np.ndarray:
        """:math:`u = L^{-1}(x)`: a point of :attr:`lowered` in the user's variables."""
        return self.lowering.invert(x, self.inverse)

    def measure(self, x: np.ndarray, p: np.ndarray) -> tuple[float, Assessment]:
        """``(f, assessment)`` of ``x`` as given: the user's objective and residuals at :math:`u`."""
        comp, viol, vals = judged_residuals(self.problem, self.user_point(x), p)
        return float(vals["f"][0]), Assessment(comp, viol)

    def clipped_or_given(self, x: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, float, Assessment]:
        """``(point, f, assessment)`` of ``x`` clipped into :attr:`lowered`'s bounds, or of ``x``
        as given when that is the better (:func:`clipped_or_given`)."""
        lowered = self.lowered
        return clipped_or_given(x, lowered.lbx, lowered.ubx, lambda xs: self.measure(xs, p), self.tol)

    def __call__(self, x: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, Assessment]:
        """The homotopy's :data:`Assessor`: :meth:`clipped_or_given` without ``f``."""
        xs, _, a = self.clipped_or_given(x, p)
        return xs, a


@dataclass
class HomotopyOutcome:
    """What the outer loop found; turned into an :class:`~mcpkit.solving.result.MCPResult` by the caller."""

    x: np.ndarray | None
    assessment: Assessment
    termination: Termination
    raw_status: str
    iterations: int
    trace: list[HomotopyStep] = field(default_factory=list)
    lam_x: np.ndarray | None = None
    lam_g: np.ndarray | None = None
    reformulation: str = ""
    """The reformulation whose run produced :attr:`x` (differs from the requested one after a
    recovery)."""
    path: list[np.ndarray] = field(default_factory=list)
    """The finite points of the relaxed subproblems, in order (the homotopy path, in the MPCC's
    variables); the B-stationarity refinement restarts from them (:mod:`mcpkit.stationarity.refine`)."""
    last_parameter: float = math.nan
    """The parameter of the last relaxed subproblem this run solved or tried (NaN: none)."""
    target_parameter: float | None = None
    """The parameter value the run was to reach (``sigma_min``; ``None`` for a penalty, whose
    weight has no target)."""
    parameter_name: str = "sigma"
    """The reformulation's name of its parameter (``sigma``, ``epsilon``, ``rho``, ...)."""
    budget_spent: bool = False
    """Whether a budget of :class:`RunBudget` (first subproblem, off track, ``max_iterations``)
    ended the run (``termination`` then ``ITERATION_LIMIT``), before its last parameter."""

    def cut_note(self, solved: bool) -> str:
        """``""``, or, when the time limit cut the homotopy before its parameter reached its
        target, a clause that says so, naming the last parameter and the target: a point
        returned there is not a converged plan, whatever its residuals."""
        last, target = self.last_parameter, self.target_parameter
        if self.termination is not Termination.TIME_LIMIT or math.isnan(last):
            return ""
        if target is not None and last <= target * (1 + 1e-9):
            return ""
        name = self.parameter_name
        aim = f"its target {target:.3g}" if target is not None else "the pairs met the tolerance"
        point = "feasible and complementary but" if solved else "the best found,"
        return (
            f"time limit: the homotopy was cut at {name} = {last:.3g} before {aim}; "
            f"the point is {point} not a converged plan"
        )


def inner_settings(options: SolveOptions, tol: float, warm: bool, name: str) -> InnerSettings:
    """Inner-solver settings of every subproblem: IPOPT ``tol``, ``max_inner_iter``, the user's
    IPOPT options, and deadlines when the solve has a time limit (each call then stops when the
    time left runs out, not after a fresh ``max_wall_time``)."""
    return InnerSettings(
        tol=tol,
        max_iter=options.max_inner_iter,
        warm=warm,
        verbose=options.verbose,
        options=dict(options.ipopt_options),
        deadlines=options.time_limit is not None,
        name=name,
        warm_start=options.warm_start,  # the IPOPT settings of the warm subproblems (issue 42)
    )


def equality_count(lbg: np.ndarray, ubg: np.ndarray) -> int:
    """Number of equality rows (``lbg == ubg``)."""
    return int(np.count_nonzero(np.asarray(lbg) == np.asarray(ubg)))


class Polisher:
    r"""The active-set NLP of the module docstring, built once with the mask as a parameter."""

    def __init__(
        self, mpcc: MPCC, options: SolveOptions, inner: InnerFactory | None = None, *, capped: bool = False
    ) -> None:
        """``capped``: with the iteration monitor whatever the size, so that every :meth:`solve`
        can take a ``max_iter`` cap (the refinement's budgets in iterations)."""
        self.mpcc = mpcc
        nc = mpcc.n_pairs
        mask = mpcc.sym("mask", nc)
        rows, lo, hi = sign_constraints(mpcc)
        rows.append(mask * mpcc.G + (1 - mask) * mpcc.H)
        # the fixed side as an equality; when that would leave more equalities than variables
        # (IPOPT refuses such problems) as "<= 0", which with the sign condition >= 0 says the same
        self.equality = equality_count(mpcc.lbg, mpcc.ubg) + nc <= mpcc.x.numel()
        lo.append(np.zeros(nc) if self.equality else np.full(nc, -np.inf))
        hi.append(np.zeros(nc))
        self.template = NLPTemplate(
            x=mpcc.x,
            p=ca.vertcat(mpcc.p, mask),
            f=mpcc.f,
            g=ca.vertcat(mpcc.g, *rows),
            lbg=np.concatenate([mpcc.lbg, *lo]),
            ubg=np.concatenate([mpcc.ubg, *hi]),
            base=mpcc,
            extra_rows=ca.vertcat(*rows),
        )
        self.lbg, self.ubg = self.template.lbg, self.template.ubg
        self.capped = True  # an LP (HiGHS) or an IPOPT with the iteration monitor (set below)
        """Whether :meth:`solve` honours a ``max_iter`` cap."""
        tol = options.inner_tol_factor * options.tol
        # an LPEC's branch problem is an LP: HiGHS solves it exactly and proves a wrong branch
        # infeasible at once (mcpkit.homotopy.lp_inner); anything else goes to IPOPT
        self.linear = self.template.is_affine()
        if self.linear:
            self.nlp: InnerSolver = LinearInner(self.template, tol)
            self._pairs = pair_functions(mpcc.x, mpcc.p, mpcc.G, mpcc.H)
        else:
            settings = inner_settings(options, tol, True, f"{mpcc.name}_polish")
            self.capped = capped or mpcc.x.numel() > POLISH_CAP_ABOVE_VARS
            if self.capped:
                # the iteration monitor, for the cap of POLISH_MIN_ITER (about 45 us per
                # iteration: nothing against 10-30 ms there, but a tenth of a small time step's)
                settings = replace(settings, deadlines=True)
            self.nlp = (inner or CasadiInner())(self.template, settings)

    def active_mask(self, x: np.ndarray, p: np.ndarray) -> np.ndarray:
        """1 where :math:`G_j \\le H_j` (fix :math:`G_j = 0`), else 0 (fix :math:`H_j = 0`)."""
        Gv = np.asarray(self.mpcc.function("G")(x, p)).reshape(-1)
        Hv = np.asarray(self.mpcc.function("H")(x, p)).reshape(-1)
        return (Gv <= Hv).astype(float)

    def solve(
        self,
        x: np.ndarray,
        p: np.ndarray,
        mask: np.ndarray,
        deadline: float | None = None,
        max_iter: int | None = None,
    ) -> InnerResult:
        """Solve the branch NLP for ``mask`` from ``x`` (stopping at ``deadline``, if given, or
        after ``max_iter`` IPOPT iterations)."""
        return self.nlp.solve(
            x,
            np.concatenate([p, mask]),
            self.mpcc.lbx,
            self.mpcc.ubx,
            self.lbg,
            self.ubg,
            deadline=deadline,
            max_iter=max_iter,
        )

    def polish(
        self,
        x: np.ndarray,
        p: np.ndarray,
        mask: np.ndarray,
        deadline: float | None = None,
        max_iter: int | None = None,
    ) -> InnerResult:
        """:meth:`solve`; for an LPEC whose branch LP is infeasible (or too degenerate for HiGHS),
        then the branch identification of :func:`~mcpkit.homotopy.lpec_polish.identify_and_solve`
        from ``x`` (its point, if found)."""
        res = self.solve(x, p, mask, deadline, max_iter)
        if not (self.linear and res.status in ("LP_Infeasible", "LP_Numerical_Difficulties")):
            return res
        mp = self.mpcc
        assert isinstance(self.nlp, LinearInner)
        pairs = AffinePairs.build(self._pairs, mp.x.numel(), p)
        found = identify_and_solve(
            self.nlp, pairs, x, p, mp.lbx, mp.ubx, self.lbg, self.ubg, self.equality, deadline
        )
        if found is None:
            return res
        return replace(
            found,
            wall_time_s=found.wall_time_s + res.wall_time_s,
            iterations=found.iterations + res.iterations,
        )


class HomotopySolver:
    """An MPCC with one reformulation, inner solvers built once; :meth:`run` many times.

    ``inner`` builds the inner solvers from the reformulation's template (default
    :class:`~mcpkit.homotopy.ipopt.CasadiInner`: CasADi's ``nlpsol`` IPOPT).
    """

    def __init__(
        self,
        mpcc: MPCC,
        reformulation: Reformulation,
        options: SolveOptions,
        inner: InnerFactory | None = None,
    ) -> None:
        self.mpcc = mpcc
        self.reformulation = reformulation
        self.options = options
        self.inner: InnerFactory = inner or CasadiInner()
        self.template = reformulation.build(mpcc)
        self._solvers: dict[bool, InnerSolver] = {}
        self._polisher: Polisher | None = None
        self._build_seconds: dict[bool, float] = {}

    def _nlp(self, warm: bool) -> InnerSolver:
        if warm not in self._solvers:
            name = f"{self.mpcc.name}_{self.reformulation.name}{'_warm' if warm else ''}"
            tol = self.reformulation.inner_tol(0.0, self.options)
            settings = inner_settings(self.options, tol, warm, name)
            extra = self.reformulation.warm_start_options
            if warm and extra:
                settings = replace(settings, options={**extra, **settings.options})
            if warm and self.mpcc.x.numel() > POLISH_CAP_ABOVE_VARS:
                settings = replace(settings, deadlines=True)  # the monitor, for RELAX_ITER_GROWTH
            self._solvers[warm] = self.inner(self.template, settings)
        return self._solvers[warm]

    @property
    def build_seconds(self) -> float:
        r""":func:`~mcpkit.homotopy.ipopt.wall_build_seconds` of the MPCC's rows and both
        sides of its pairs, :math:`(g, G, H)`: every reformulation's NLP and the polisher's hold
        these rows (plus one row per pair, whose gradient adds the nonzeros of
        :math:`\nabla G_j` and :math:`\nabla H_j`), so it is a lower estimate for each of them.
        Once the rows' derivatives are computed and shared
        (:mod:`mcpkit.problems.derivatives`), only the graph's own term remains."""
        mp = self.mpcc
        shared = CACHE_KEY in mp._derived
        if shared not in self._build_seconds:
            rows = ca.vertcat(mp.g, mp.G, mp.H)
            self._build_seconds[shared] = wall_build_seconds(mp.x, mp.p, rows, derivatives=not shared)
        return self._build_seconds[shared]

    def fits(self, built: bool, deadline: float | None) -> bool:
        """Whether a solver is ``built``, or building it (:attr:`build_seconds`, a lower
        estimate) ends before ``deadline``. A dense 3000 x 3000 LCP's Scholtes NLP takes 41 s to
        build: with a time limit of 5 s it is better not started."""
        return built or deadline is None or time.perf_counter() + self.build_seconds <= deadline

    def build(self) -> HomotopySolver:
        """Build every inner solver now (otherwise built on first use)."""
        self._nlp(False)
        self._nlp(True)
        if self.options.polish and self.mpcc.n_pairs:
            self.polisher()
        return self

    def polisher(self) -> Polisher:
        """The active-set polisher (built on first use)."""
        if self._polisher is None:
            self._polisher = Polisher(self.mpcc, self.options, self.inner)
        return self._polisher

    def run(
        self,
        x0: np.ndarray,
        p: np.ndarray,
        assess: Assessor,
        *,
        warm_start: bool = False,
        lam_x0: np.ndarray | None = None,
        lam_g0: np.ndarray | None = None,
        time_limit: float | None = None,
        first_step_iterations: int | None = None,
        off_track_iterations: int | None = None,
        max_iterations: int | None = None,
    ) -> HomotopyOutcome:
        """Run the homotopy from ``x0`` at parameter value ``p``.

        Parameters
        ----------
        x0
            Starting point in the MPCC's variables.
        p
            Parameter values of the MPCC.
        assess
            Measures a candidate on the original problem (see :data:`Assessor`).
        warm_start
            Treat ``x0`` (and the multipliers) as a nearby solution: first try the polish on
            the active set predicted from ``x0``, then, if that does not meet the tolerance, run
            the homotopy with the warm-start IPOPT settings.
        lam_x0, lam_g0
            Multipliers of a previous solve of the same structure.
        time_limit
            Wall-clock limit of this call (default ``options.time_limit``): the caller's hard
            limit, the only decision the clock takes. A run that reaches it ends with
            ``TIME_LIMIT`` and its best point.
        first_step_iterations
            IPOPT iteration cap of the first subproblem alone (``None``: none). A first
            subproblem that reaches it ends the run with ``ITERATION_LIMIT``
            (:class:`~mcpkit.homotopy.recovery.RecoveringHomotopy` sets it so that a
            reformulation stuck in its first subproblem yields to the others).
        off_track_iterations
            Iteration budget of a run *not on track* (``None``: none): once this many IPOPT
            iterations were taken, the run ends with ``ITERATION_LIMIT`` unless its last
            subproblem was solved and lowered the residual; a subproblem started off track stops
            there. A run on track goes on (bounded by ``max_iterations`` and ``time_limit``):
            :class:`~mcpkit.homotopy.recovery.RecoveringHomotopy` gives its primary such a
            budget so that a stalled run leaves the fallbacks their turn, while one that is
            converging is not cut off (large optimal-control MPCCs need thousands of iterations).
        max_iterations
            Iteration budget of this call: no subproblem starts once this many IPOPT iterations
            were taken (the run ends with ``ITERATION_LIMIT``); one that has started finishes,
            bounded by ``options.max_inner_iter``. Unlike a time budget it gives the same
            outcome on any machine and under any load.
        """
        limit = self.options.time_limit if time_limit is None else time_limit
        budget = RunBudget.starting_now(limit, first_step_iterations, off_track_iterations, max_iterations)
        state = HomotopyRun(self, x0, p, assess, budget, warm_start, lam_x0, lam_g0)
        try:
            start = state.warm_outcome()
            if start is not None:
                return start
            ctrl = self.reformulation.controller(self.options)
            t: float | None = ctrl.first()
            k = -1
            while t is not None:
                k += 1
                res = state.relax(k, t)
                if res is None or state.accept(k, t, res):
                    break
                t = ctrl.next(state.step_succeeded, res.iterations)
        except (KeyboardInterrupt, RuntimeError) as exc:
            # Ctrl-C (raised by Python's handler, or by a progress hook once mcpkit.solving.stop was
            # requested): the best point so far, labelled as interrupted. CasADi hands an
            # interrupt that lands in its own code (building the warm solver, a callback) back
            # as a RuntimeError naming it
            if isinstance(exc, RuntimeError) and not stop.is_interrupt(exc):
                raise
            state.termination = Termination.INTERRUPTED
        return state.finish()


@dataclass(frozen=True)
class RunBudget:
    r"""The budget of one :meth:`HomotopySolver.run` (its arguments ``time_limit``,
    ``first_step_iterations``, ``off_track_iterations`` and ``max_iterations``).

    Every internal decision counts IPOPT iterations :math:`n` (the same outcome on any machine
    and under any load): subproblem :math:`k` may take at most
    :math:`\min(n_1, n_{\rm off} - n, n_{\max} - n)` of them, where :math:`n_1` applies to
    :math:`k = 0` only and :math:`n_{\rm off}` only while the run is not on track. The clock
    decides only ``deadline = start + time_limit``, the caller's hard limit.
    """

    start: float
    """When the run started (a :func:`time.perf_counter` value)."""
    deadline: float | None
    """The caller's hard limit (a :func:`time.perf_counter` value; ``None``: no time limit)."""
    first_step_iterations: int | None
    """IPOPT iteration cap of the first subproblem (``None``: none)."""
    off_track_iterations: int | None
    """Iteration budget of a run not on track (``None``: none)."""
    max_iterations: int | None
    """No subproblem starts once this many IPOPT iterations were taken (``None``: no budget)."""

    @classmethod
    def starting_now(
        cls,
        time_limit: float | None,
        first_step_iterations: int | None,
        off_track_iterations: int | None,
        max_iterations: int | None,
    ) -> RunBudget:
        """The budget of a run that starts now."""
        start = time.perf_counter()
        deadline = None if time_limit is None else start + time_limit
        return cls(start, deadline, first_step_iterations, off_track_iterations, max_iterations)

    def spent(self, iterations: int, on_track: bool) -> str | None:
        """Why no further subproblem may start after ``iterations`` (``None``: one may)."""
        if self.max_iterations is not None and iterations >= self.max_iterations:
            return f"iteration budget of {self.max_iterations} spent"
        off = self.off_track_iterations
        if off is not None and not on_track and iterations >= off:
            return f"iteration budget of {off} spent off track"
        return None

    def step_cap(self, k: int, iterations: int, on_track: bool) -> int | None:
        """The iteration cap this budget sets subproblem ``k`` after ``iterations`` (``None``:
        none; at least 1)."""
        caps = [self.max_iterations, None if on_track else self.off_track_iterations]
        found = [max(c - iterations, 1) for c in caps if c is not None]
        if k == 0 and self.first_step_iterations is not None:
            found.append(self.first_step_iterations)
        return min(found) if found else None


def passed(deadline: float | None) -> bool:
    """Whether ``deadline`` (a :func:`time.perf_counter` value, ``None``: none) has passed."""
    return deadline is not None and time.perf_counter() > deadline


class HomotopyRun:
    """The state of one :meth:`HomotopySolver.run`, which its steps change.

    :meth:`relax` solves the relaxed subproblem at the next parameter, :meth:`accept` measures
    its point and decides whether the run goes on (keeping the best point, counting failures,
    moving the iterate, polishing), :meth:`polish` tries the active-set NLP of the module
    docstring, and :meth:`finish` turns the state into a :class:`HomotopyOutcome`.
    """

    def __init__(
        self,
        solver: HomotopySolver,
        x0: np.ndarray,
        p: np.ndarray,
        assess: Assessor,
        budget: RunBudget,
        warm_start: bool,
        lam_x0: np.ndarray | None,
        lam_g0: np.ndarray | None,
    ) -> None:
        self.solver = solver
        self.opts = solver.options
        self.mpcc = mp = solver.mpcc
        self.p = p
        self.assess = assess
        self.budget = budget
        self.warm_start = warm_start
        self.deadline = budget.deadline
        """The caller's hard limit (:attr:`RunBudget.deadline`): every subproblem's and polish's."""
        self.budget_cap: int | None = None
        """The cap :meth:`RunBudget.step_cap` set the current subproblem when it was the binding
        one (below ``options.max_inner_iter`` and any growth cap), else ``None``."""
        self.cap_reason = ""
        self.budget_spent = False
        """Whether the budget ended the run (:attr:`HomotopyOutcome.budget_spent`)."""
        """What set :attr:`budget_cap` (``"first subproblem"`` or ``"off track"``)."""
        self.on_track = False
        self.last_residual = np.inf
        self.trace: list[HomotopyStep] = progress_trace(self.opts)  # reports each step to opts.progress
        self.iterations = 0
        x = np.clip(np.asarray(x0, dtype=float), mp.lbx, mp.ubx)
        self.best_x: np.ndarray | None
        self.best_x, self.best_a = assess(x, p)
        self.nx = x.size
        self.x, self.lam_x, self.lam_g = self._extended(x, lam_x0, lam_g0)
        self.lam_t = math.nan  # the parameter of lam_g's subproblem (scale_warm_multipliers)
        self.raw = "not started"
        self.termination: Termination | None = None
        self.failures = 0
        """Failed subproblems in a row."""
        self.last_param = math.nan
        """The parameter of the last subproblem tried (or stopped before it started)."""
        self.step_warm = warm_start
        self.step_succeeded = False
        """Whether the last subproblem was solved with a finite point (the controller's input)."""
        self.last_ok_iterations: int | None = None
        """Iterations of the last warm subproblem that succeeded (RELAX_ITER_GROWTH)."""
        self.path: list[np.ndarray] = []
        self.large = mp.x.numel() > POLISH_CAP_ABOVE_VARS
        self.polished_masks: set[bytes] = set()
        self.polish_below = self.opts.polish_trigger
        """Residual below which a polish is tried; lowered by POLISH_BACKOFF after a failed one."""
        # a capped polish's point that met the tolerance: not taken (POLISH_MIN_ITER), but returned
        # when the time limit cuts the run before a better one (the result's cut_note says so)
        self.stopped_x: np.ndarray | None = None
        self.stopped_a: Assessment | None = None

    def _extended(
        self, x: np.ndarray, lam_x: np.ndarray | None, lam_g: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """``x`` with the variables the reformulation appends (elastic mode) at their natural
        values, and the bounds :attr:`lbx`, :attr:`ubx` of the extended NLP."""
        tpl, mp = self.solver.template, self.mpcc
        self.lbx, self.ubx = mp.lbx, mp.ubx
        if not tpl.n_extra:
            return x, lam_x, lam_g
        extra = np.zeros(tpl.n_extra) if tpl.extra_start is None else tpl.extra_start(x, self.p)
        x = np.concatenate([x, extra])
        self.lbx = np.concatenate([self.lbx, np.zeros(tpl.n_extra)])
        self.ubx = np.concatenate([self.ubx, np.full(tpl.n_extra, np.inf)])
        if lam_x is not None and np.size(lam_x) != x.size:
            lam_x = lam_g = None  # multipliers of another reformulation do not fit
        return x, lam_x, lam_g

    def _outcome(self, termination: Termination, raw: str, reformulation: str) -> HomotopyOutcome:
        return HomotopyOutcome(
            self.best_x,
            self.best_a,
            termination,
            raw,
            self.iterations,
            self.trace,
            reformulation=reformulation,
        )

    def warm_outcome(self) -> HomotopyOutcome | None:
        """For a warm start, the outcome without any homotopy step: the start point when it
        meets the tolerance, else the polish on the active set it predicts (when it has not
        changed, the common case in time stepping, one polish solves it); otherwise ``None``."""
        if self.best_a.meets(self.opts.tol) and self.warm_start:
            return self._outcome(Termination.CONVERGED, "start point", "start")
        if self.warm_start and self.polish(self.x, -1):
            return self._outcome(Termination.CONVERGED, self.raw, "polish")
        return None

    def polish(self, xc: np.ndarray, k: int, capped: bool = False) -> bool:
        """Polish from ``xc`` (trace index ``k``) on its active set, unless that set was tried;
        keep its point if best. True when it meets the tolerance on a solved branch NLP.
        ``capped``: stop it after ``max(POLISH_MIN_ITER, iterations so far)`` on a large problem."""
        opts, mp, solver = self.opts, self.mpcc, self.solver
        if not (opts.polish and mp.n_pairs) or not solver.fits(solver._polisher is not None, self.deadline):
            return False
        polisher = solver.polisher()
        # start inside the bounds of x: a candidate may be kept as IPOPT returned it, up to
        # constr_viol_tol outside a bound (clipped_or_given), and a polish started there can
        # cost many times the iterations (NOSBENCH 3CPTF_002_020: 2400+ instead of 426)
        xc = np.clip(xc, mp.lbx, mp.ubx)
        mask = polisher.active_mask(xc, self.p)
        key = mask.tobytes()
        if key in self.polished_masks:
            return False
        self.polished_masks.add(key)
        cap = None
        if capped and mp.x.numel() > POLISH_CAP_ABOVE_VARS:
            cap = max(POLISH_MIN_ITER, self.iterations)
        res = polisher.polish(xc, self.p, mask, self.deadline, cap)
        self.iterations += res.iterations
        if not np.isfinite(res.x).all():
            self.trace.append(
                HomotopyStep(k, 0.0, np.inf, res.status, res.iterations, res.wall_time_s, "polish")
            )
            return False
        xr, a = self.assess(res.x, self.p)
        self.trace.append(
            HomotopyStep(k, 0.0, a.residual, res.status, res.iterations, res.wall_time_s, "polish")
        )
        if cap is not None and res.status == "Maximum_Iterations_Exceeded":
            # not taken (POLISH_MIN_ITER); kept aside for a run cut by the time limit
            if a.meets(opts.tol) and (
                self.stopped_a is None or a.key(opts.tol) < self.stopped_a.key(opts.tol)
            ):
                self.stopped_x, self.stopped_a = xr, a
            return False
        if a.key(opts.tol) < self.best_a.key(opts.tol):
            self.best_x, self.best_a, self.raw = xr, a, res.status
        # a polish the deadline (or a stop request) ended did not solve its branch NLP: its
        # point may be the best so far, even feasible and complementary, but the run does not
        # end "converged" on it; the loop ends at the deadline with TIME_LIMIT and the result
        # says the plan was cut short (HomotopyOutcome.cut_note)
        stopped = ipopt_termination(res.status) in (Termination.TIME_LIMIT, Termination.INTERRUPTED)
        return a.meets(opts.tol) and not stopped

    def _inner(self, warm: bool) -> InnerSolver | None:
        """The inner solver of the next subproblem, or ``None`` (and :attr:`termination` set)
        when the budget leaves no room to start it."""
        if passed(self.deadline):
            self.termination = Termination.TIME_LIMIT
            return None
        spent = self.budget.spent(self.iterations, self.on_track)
        if spent is not None:
            self.termination = Termination.ITERATION_LIMIT
            self.raw, self.budget_spent = spent, True
            return None
        solver = self.solver
        if not solver.fits(warm in solver._solvers, self.deadline):
            self.termination = Termination.TIME_LIMIT
            self.raw = (
                f"not started: building the NLP takes at least {solver.build_seconds:.1f} s,"
                " more than the time limit leaves"
            )
            return None
        nlp = solver._nlp(warm)
        if passed(self.deadline):
            # an IPOPT run stops at its first iteration at the soonest, after a
            # factorization that can take many seconds on a large problem
            self.termination = Termination.TIME_LIMIT
            self.raw = "not started: building the NLP used up the time limit"
            return None
        return nlp

    def relax(self, k: int, t: float) -> InnerResult | None:
        """Solve subproblem ``k``, the relaxed NLP at parameter ``t``, from the current iterate
        (warm-started after the first); ``None`` when the budget ended the run before it."""
        self.last_param = t
        warm = self.step_warm = self.warm_start or k > 0
        nlp = self._inner(warm)
        if nlp is None:
            return None
        cap = None
        if warm and self.last_ok_iterations is not None and self.large:
            cap = max(RELAX_MIN_ITER, RELAX_ITER_GROWTH * self.last_ok_iterations)
        # the budget's cap (first subproblem, off track): when it binds, its end ends the run
        own = self.budget.step_cap(k, self.iterations, self.on_track)
        binding = own is not None and own < self.opts.max_inner_iter and (cap is None or own <= cap)
        self.budget_cap = own if binding else None
        first = k == 0 and own == self.budget.first_step_iterations
        self.cap_reason = "first subproblem" if first else "off track"
        if own is not None:
            cap = own if cap is None else min(cap, own)
        tpl = self.solver.template
        res = nlp.solve(
            self.x,
            np.concatenate([self.p, [t]]),
            self.lbx,
            self.ubx,
            tpl.lbg,
            tpl.ubg,
            self.lam_x if warm else None,
            self.solver.reformulation.warm_lam_g(self.lam_g, self.mpcc.n_pairs, self.lam_t, t, self.opts)
            if warm
            else None,
            deadline=self.deadline,
            max_iter=cap,
        )
        self.iterations += res.iterations
        self.raw = res.status
        return res

    def _measure(self, k: int, t: float, res: InnerResult) -> tuple[np.ndarray, Assessment] | None:
        """Trace subproblem ``k``; its measured point (``None``: not finite), kept if best."""
        if not np.isfinite(res.x).all():
            self.trace.append(HomotopyStep(k, t, np.inf, res.status, res.iterations, res.wall_time_s))
            return None
        xr, a = self.assess(res.x[: self.nx], self.p)
        self.path.append(xr)
        self.trace.append(HomotopyStep(k, t, a.residual, res.status, res.iterations, res.wall_time_s))
        if a.key(self.opts.tol) < self.best_a.key(self.opts.tol):
            self.best_x, self.best_a = xr, a
        return xr, a

    def _cut(self, res: InnerResult) -> bool:
        """Whether the deadline, a stop request or IPOPT's refusal ended subproblem ``res``
        and with it the run (:attr:`termination` set)."""
        if passed(self.deadline):
            self.termination = Termination.TIME_LIMIT  # IPOPT was stopped by the deadline callback
        elif stop.requested():  # IPOPT was stopped by the monitor (mcpkit.solving.stop)
            self.termination = Termination.INTERRUPTED
        elif self.budget_cap is not None and res.status == "Maximum_Iterations_Exceeded":
            # the budget's cap, not IPOPT's own max_iter, ended it (RunBudget.step_cap)
            self.termination = Termination.ITERATION_LIMIT
            self.budget_spent = True
            self.raw = f"iteration budget spent ({self.cap_reason}: cap of {self.budget_cap} iterations)"
        elif res.status in NO_ITERATION_STATUSES:
            # IPOPT refused the subproblem before iterating (e.g. more equality rows than
            # variables): its structure does not change with the parameter, so no retry
            self.termination = ipopt_termination(res.status)
            self.raw = f"IPOPT refused the subproblem: {res.status}"
        return self.termination is not None

    def accept(self, k: int, t: float, res: InnerResult) -> bool:
        """Take subproblem ``k``'s result ``res`` at parameter ``t``: measure and keep its point,
        move the iterate on success or count a failure (the controller backs the parameter
        off), polish below the trigger. True when the run ends (:attr:`termination` set)."""
        point = self._measure(k, t, res)
        if point is not None and point[1].meets(self.opts.tol):
            self.termination = Termination.CONVERGED
            return True
        if self._cut(res):
            return True
        ok = self.step_succeeded = bool(point is not None and res.ok)
        self.on_track = bool(ok and point is not None and point[1].residual < self.last_residual)
        if point is not None:
            self.last_residual = min(self.last_residual, point[1].residual)
        if ok:
            self.failures = 0
            if self.step_warm:  # the cap's baseline: warm steps only (RELAX_ITER_GROWTH)
                self.last_ok_iterations = res.iterations
            self.x, self.lam_x, self.lam_g, self.lam_t = res.x, res.lam_x, res.lam_g, t
        else:
            # recovery: keep the last good point; the controller backs the parameter off
            self.failures += 1
            if self.failures > self.opts.max_retries:
                self.termination = ipopt_termination(res.status)
                if self.termination is Termination.CONVERGED:  # pragma: no cover - defensive
                    self.termination = (
                        Termination.STALLED if point is not None else Termination.NUMERICAL_ERROR
                    )
                return True
        if point is not None and point[1].residual <= self.polish_below:
            tried = len(self.polished_masks)
            if self.polish(point[0], k, capped=True):
                self.termination = Termination.CONVERGED
                return True
            if len(self.polished_masks) > tried:  # a polish ran and failed: back off
                self.polish_below = POLISH_BACKOFF * point[1].residual
        return False

    def finish(self) -> HomotopyOutcome:
        """The outcome: a run that ran out of parameters gets a last polish from its best point;
        one the time limit cut returns a capped polish's point if nothing better met the
        tolerance."""
        opts, tol = self.opts, self.opts.tol
        reformulation = self.solver.reformulation
        if self.termination is None:
            floor = reformulation.parameter_name != "rho" and self.last_param <= opts.sigma_min
            self.termination = Termination.STALLED if floor else Termination.ITERATION_LIMIT
            # a last polish from the best point before giving up
            if self.best_x is not None and self.polish(self.best_x, len(self.trace)):
                self.termination = Termination.CONVERGED
        if (
            self.termination is Termination.TIME_LIMIT
            and self.stopped_a is not None
            and not self.best_a.meets(tol)
        ):
            self.best_x, self.best_a = (
                self.stopped_x,
                self.stopped_a,
            )  # feasible and complementary, not converged
        if self.termination is Termination.CONVERGED and not self.best_a.meets(tol):  # pragma: no cover
            self.termination = Termination.STALLED
        lam_x, lam_g = self.lam_x, self.lam_g
        if self.solver.template.n_extra:  # multipliers of the extended NLP do not fit the MPCC's variables
            lam_x = lam_g = None
        name = reformulation.parameter_name
        tried = [s.parameter for s in self.trace if s.phase == "relax"]  # the cut_note of the outcome
        return HomotopyOutcome(
            self.best_x, self.best_a, self.termination, self.raw, self.iterations, self.trace, lam_x, lam_g,
            reformulation.name, self.path,
            last_parameter=tried[-1] if tried else math.nan,
            target_parameter=None if name == "rho" else opts.sigma_min,
            parameter_name=name, budget_spent=self.budget_spent,
        )  # fmt: skip
