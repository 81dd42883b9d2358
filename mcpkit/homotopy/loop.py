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
up to ``max_retries`` failures in a row; after that :class:`RecoveringHomotopy` retries with the
other reformulations. A subproblem IPOPT calls "solved" is never taken as success by itself;
only the residual test decides.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import casadi as ca
import numpy as np

from mcpkit.homotopy.inner import CasadiInner, InnerFactory, InnerSettings, InnerSolver
from mcpkit.homotopy.ipopt import (
    NO_ITERATION_STATUSES,
    InnerResult,
    estimated_build_seconds,
    ipopt_termination,
)
from mcpkit.homotopy.lp_inner import LinearInner, is_affine
from mcpkit.homotopy.lpec_polish import AffinePairs, identify_and_solve, is_lpec, pair_functions
from mcpkit.homotopy.reformulation import NLPTemplate, Reformulation, sign_constraints
from mcpkit.lowering.casadi import CasadiMCP
from mcpkit.problems.derivatives import CACHE_KEY
from mcpkit.problems.mpcc import MPCC
from mcpkit.solving import stop
from mcpkit.solving.options import SolveOptions, progress_trace
from mcpkit.solving.registry import reformulation_for
from mcpkit.solving.residuals import compute_residuals
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

#: With a time limit and fallbacks, the share of a reformulation's own budget its first
#: subproblem may use (the last fallback is not limited); see :class:`RecoveringHomotopy`.
FIRST_STEP_SHARE = 0.5

#: A second opinion (:class:`RecoveringHomotopy`, ``second_opinion``) has an iteration budget,
#: so that its outcome does not depend on the machine's speed or load: this many IPOPT
#: iterations at least, or :data:`SECOND_OPINION_ITER_FACTOR` times those of the first
#: converged run if more ...
SECOND_OPINION_MIN_ITER = 300
SECOND_OPINION_ITER_FACTOR = 2
#: ... and, with a time limit, at most this share of the time left of the call.
SECOND_OPINION_SHARE = 0.25
#: A second opinion's point replaces the first only when its objective is lower by more than
#: this times ``max(1, |f|)`` (two reformulations ending on one point differ in the last digits).
SECOND_OPINION_RTOL = 1e-8


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
        self.linear = is_affine(self.template)
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
    :class:`~mcpkit.homotopy.inner.CasadiInner`: CasADi's ``nlpsol`` IPOPT).
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
        r""":func:`~mcpkit.homotopy.ipopt.estimated_build_seconds` of the MPCC's rows and both
        sides of its pairs, :math:`(g, G, H)`: every reformulation's NLP and the polisher's hold
        these rows (plus one row per pair, whose gradient adds the nonzeros of
        :math:`\nabla G_j` and :math:`\nabla H_j`), so it is a lower estimate for each of them.
        Once the rows' derivatives are computed and shared
        (:mod:`mcpkit.problems.derivatives`), only the graph's own term remains."""
        mp = self.mpcc
        shared = CACHE_KEY in mp._derived
        if shared not in self._build_seconds:
            rows = ca.vertcat(mp.g, mp.G, mp.H)
            self._build_seconds[shared] = estimated_build_seconds(mp.x, mp.p, rows, derivatives=not shared)
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
        first_step_limit: float | None = None,
        extend_to: float | None = None,
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
            Wall-clock budget of this call (default ``options.time_limit``).
        first_step_limit
            Wall-clock budget of the first subproblem alone (``None``: only ``time_limit``),
            counted from the start of this call, so building the solvers (1-2 s on a problem of
            3000 variables) is part of it. When it runs out the run ends with ``TIME_LIMIT``
            (see :class:`RecoveringHomotopy`, which
            sets it so that a reformulation stuck in its first subproblem yields to the others).
        extend_to
            A longer budget (seconds from the start of this call) that a run *on track* may use
            past ``time_limit``: one whose last subproblem was solved and lowered the residual
            (:class:`RecoveringHomotopy` gives its primary a share of the limit so that a stalled
            run leaves the fallbacks their turn; a run that is converging keeps going instead of
            being cut off at its share, which under load cut off large optimal-control MPCCs
            two subproblems before the end).
        max_iterations
            Iteration budget of this call: no subproblem starts once this many IPOPT iterations
            were taken (the run ends with ``ITERATION_LIMIT``); one that has started finishes,
            bounded by ``options.max_inner_iter``. Unlike a time budget it gives the same
            outcome on any machine and under any load.
        """
        opts = self.options
        limit = opts.time_limit if time_limit is None else time_limit
        t_start = time.perf_counter()
        soft = None if limit is None else t_start + limit
        hard = soft if extend_to is None or soft is None else max(soft, t_start + extend_to)
        deadline = soft  # the deadline in force: the hard one while the run is on track
        on_track = False
        last_residual = np.inf
        mp = self.mpcc
        trace: list[HomotopyStep] = progress_trace(opts)  # reports each step to opts.progress
        iterations = 0
        x = np.clip(np.asarray(x0, dtype=float), mp.lbx, mp.ubx)
        best_x, best_a = assess(x, p)
        # variables the reformulation appends (elastic mode), started at their natural values
        tpl = self.template
        nx = x.size
        lbx, ubx = mp.lbx, mp.ubx
        if tpl.n_extra:
            extra = np.zeros(tpl.n_extra) if tpl.extra_start is None else tpl.extra_start(x, p)
            x = np.concatenate([x, extra])
            lbx = np.concatenate([lbx, np.zeros(tpl.n_extra)])
            ubx = np.concatenate([ubx, np.full(tpl.n_extra, np.inf)])
            if lam_x0 is not None and np.size(lam_x0) != x.size:
                lam_x0 = lam_g0 = None  # multipliers of another reformulation do not fit
        lam_x, lam_g = lam_x0, lam_g0
        lam_t = math.nan  # the parameter of lam_g's subproblem (scale_warm_multipliers)
        raw = "not started"
        termination: Termination | None = None
        failures = 0
        last_param = float("nan")
        polished_masks: set[bytes] = set()
        polish_below = opts.polish_trigger  # lowered by POLISH_BACKOFF after each failed polish
        nc = mp.n_pairs
        path: list[np.ndarray] = []
        large = mp.x.numel() > POLISH_CAP_ABOVE_VARS
        last_ok_iterations: int | None = None  # of the last warm subproblem that succeeded (RELAX_*)
        # a capped polish's point that met the tolerance: not taken (POLISH_MIN_ITER), but returned
        # when the time limit cuts the run before a better one (the result's cut_note says so)
        stopped_x: np.ndarray | None = None
        stopped_a: Assessment | None = None

        def try_polish(xc: np.ndarray, k: int, capped: bool = False) -> bool:
            nonlocal best_x, best_a, iterations, raw, stopped_x, stopped_a
            if not (opts.polish and nc) or not self.fits(self._polisher is not None, deadline):
                return False
            polisher = self.polisher()
            # start inside the bounds of x: a candidate may be kept as IPOPT returned it, up to
            # constr_viol_tol outside a bound (clipped_or_given), and a polish started there can
            # cost many times the iterations (NOSBENCH 3CPTF_002_020: 2400+ instead of 426)
            xc = np.clip(xc, mp.lbx, mp.ubx)
            mask = polisher.active_mask(xc, p)
            key = mask.tobytes()
            if key in polished_masks:
                return False
            polished_masks.add(key)
            cap = None
            if capped and mp.x.numel() > POLISH_CAP_ABOVE_VARS:
                cap = max(POLISH_MIN_ITER, iterations)
            res = polisher.polish(xc, p, mask, deadline, cap)
            iterations += res.iterations
            at_cap = cap is not None and res.status == "Maximum_Iterations_Exceeded"
            if not np.isfinite(res.x).all():
                trace.append(
                    HomotopyStep(k, 0.0, np.inf, res.status, res.iterations, res.wall_time_s, "polish")
                )
                return False
            xr, a = assess(res.x, p)
            trace.append(
                HomotopyStep(k, 0.0, a.residual, res.status, res.iterations, res.wall_time_s, "polish")
            )
            if at_cap:  # not taken (POLISH_MIN_ITER); kept aside for a run cut by the time limit
                if a.meets(opts.tol) and (stopped_a is None or a.key(opts.tol) < stopped_a.key(opts.tol)):
                    stopped_x, stopped_a = xr, a
                return False
            if a.key(opts.tol) < best_a.key(opts.tol):
                best_x, best_a, raw = xr, a, res.status
            # a polish the deadline (or a stop request) ended did not solve its branch NLP: its
            # point may be the best so far, even feasible and complementary, but the run does not
            # end "converged" on it; the loop ends at the deadline with TIME_LIMIT and the result
            # says the plan was cut short (HomotopyOutcome.cut_note)
            stopped = ipopt_termination(res.status) in (Termination.TIME_LIMIT, Termination.INTERRUPTED)
            return a.meets(opts.tol) and not stopped

        try:
            if best_a.meets(opts.tol) and warm_start:
                return HomotopyOutcome(
                    best_x, best_a, Termination.CONVERGED, "start point", 0, trace, reformulation="start"
                )
            # a warm start predicts the active set of the new solution from the previous one:
            # when it has not changed (the common case in time stepping) one polish solves it
            if warm_start and try_polish(x, -1):
                return HomotopyOutcome(
                    best_x, best_a, Termination.CONVERGED, raw, iterations, trace, reformulation="polish"
                )

            ctrl = self.reformulation.controller(opts)
            t: float | None = ctrl.first()
            k = -1
            while t is not None:
                k += 1
                last_param = t
                deadline = hard if on_track else soft
                if deadline is not None and time.perf_counter() > deadline:
                    termination = Termination.TIME_LIMIT
                    break
                if max_iterations is not None and iterations >= max_iterations:
                    termination = Termination.ITERATION_LIMIT
                    raw = f"iteration budget of {max_iterations} spent"
                    break
                warm = warm_start or k > 0
                step_deadline = deadline
                if k == 0 and first_step_limit is not None:
                    cap = t_start + first_step_limit
                    step_deadline = cap if deadline is None else min(deadline, cap)
                if step_deadline is not None and time.perf_counter() > step_deadline:
                    termination = Termination.TIME_LIMIT
                    raw = "not started: the time limit left no time"
                    break
                if not self.fits(warm in self._solvers, step_deadline):
                    termination = Termination.TIME_LIMIT
                    raw = f"not started: building the NLP takes at least {self.build_seconds:.1f} s"
                    raw += ", more than the time limit leaves"
                    break
                solver = self._nlp(warm)
                if step_deadline is not None and time.perf_counter() > step_deadline:
                    # an IPOPT run stops at its first iteration at the soonest, after a
                    # factorization that can take many seconds on a large problem
                    termination = Termination.TIME_LIMIT
                    raw = "not started: building the NLP used up the time limit"
                    break
                cap = None
                if warm and last_ok_iterations is not None and large:
                    cap = max(RELAX_MIN_ITER, RELAX_ITER_GROWTH * last_ok_iterations)
                res = solver.solve(
                    x,
                    np.concatenate([p, [t]]),
                    lbx,
                    ubx,
                    tpl.lbg,
                    tpl.ubg,
                    lam_x if warm else None,
                    self.reformulation.warm_lam_g(lam_g, nc, lam_t, t, opts) if warm else None,
                    deadline=step_deadline,
                    max_iter=cap,
                )
                iterations += res.iterations
                raw = res.status
                finite = bool(np.isfinite(res.x).all())
                if finite:
                    xr, a = assess(res.x[:nx], p)
                    path.append(xr)
                    trace.append(HomotopyStep(k, t, a.residual, res.status, res.iterations, res.wall_time_s))
                    if a.key(opts.tol) < best_a.key(opts.tol):
                        best_x, best_a = xr, a
                    if a.meets(opts.tol):
                        termination = Termination.CONVERGED
                        break
                else:
                    trace.append(HomotopyStep(k, t, np.inf, res.status, res.iterations, res.wall_time_s))
                if step_deadline is not None and time.perf_counter() > step_deadline:
                    termination = Termination.TIME_LIMIT  # IPOPT was stopped by the deadline callback
                    break
                if stop.requested():  # IPOPT was stopped by the monitor (mcpkit.solving.stop)
                    termination = Termination.INTERRUPTED
                    break
                if res.status in NO_ITERATION_STATUSES:
                    # IPOPT refused the subproblem before iterating (e.g. more equality rows than
                    # variables): its structure does not change with the parameter, so no retry
                    termination = ipopt_termination(res.status)
                    raw = f"IPOPT refused the subproblem: {res.status}"
                    break
                on_track = bool(finite and res.ok and a.residual < last_residual)
                if finite:
                    last_residual = min(last_residual, a.residual)
                deadline = hard if on_track else soft  # also the polish's, just below
                if finite and res.ok:
                    failures = 0
                    if warm:  # the cap's baseline: warm steps only (RELAX_ITER_GROWTH)
                        last_ok_iterations = res.iterations
                    x, lam_x, lam_g, lam_t = res.x, res.lam_x, res.lam_g, t
                else:
                    # recovery: keep the last good point; the controller backs the parameter off
                    failures += 1
                    if failures > opts.max_retries:
                        termination = ipopt_termination(res.status)
                        if termination is Termination.CONVERGED:  # pragma: no cover - defensive
                            termination = Termination.STALLED if finite else Termination.NUMERICAL_ERROR
                        break
                if finite and a.residual <= polish_below:
                    tried = len(polished_masks)
                    if try_polish(xr, k, capped=True):
                        termination = Termination.CONVERGED
                        break
                    if len(polished_masks) > tried:  # a polish ran and failed: back off
                        polish_below = POLISH_BACKOFF * a.residual
                t = ctrl.next(finite and res.ok, res.iterations)

        except (KeyboardInterrupt, RuntimeError) as exc:
            # Ctrl-C (raised by Python's handler, or by a progress hook once mcpkit.solving.stop was
            # requested): the best point so far, labelled as interrupted. CasADi hands an
            # interrupt that lands in its own code (building the warm solver, a callback) back
            # as a RuntimeError naming it
            if isinstance(exc, RuntimeError) and not stop.is_interrupt(exc):
                raise
            termination = Termination.INTERRUPTED

        if termination is None:
            floor = self.reformulation.parameter_name != "rho" and last_param <= opts.sigma_min
            termination = Termination.STALLED if floor else Termination.ITERATION_LIMIT
            # a last polish from the best point before giving up
            if best_x is not None and try_polish(best_x, len(trace)):
                termination = Termination.CONVERGED
        if termination is Termination.TIME_LIMIT and stopped_a is not None and not best_a.meets(opts.tol):
            best_x, best_a = stopped_x, stopped_a  # feasible and complementary, not converged
        if termination is Termination.CONVERGED and not best_a.meets(opts.tol):  # pragma: no cover
            termination = Termination.STALLED
        if tpl.n_extra:  # multipliers of the extended NLP do not fit the MPCC's variables
            lam_x = lam_g = None
        name = self.reformulation.parameter_name
        tried = [s.parameter for s in trace if s.phase == "relax"]  # the cut_note of the outcome
        return HomotopyOutcome(
            best_x, best_a, termination, raw, iterations, trace, lam_x, lam_g, self.reformulation.name, path,
            last_parameter=tried[-1] if tried else math.nan,
            target_parameter=None if name == "rho" else opts.sigma_min,
            parameter_name=name,
        )  # fmt: skip


class RecoveringHomotopy:
    r"""The requested homotopy, then the fallback reformulations when it fails.

    Subproblems that fail in one reformulation (restoration failure, "infeasible" relaxations
    near degenerate points) often solve in another: the Scholtes equality form keeps iterates
    away from the corner :math:`G = H = 0`, and Fischer-Burmeister turns the pairs into
    equations. When the primary run ends without meeting the tolerance, each method of
    ``fallbacks`` runs in turn from the original start, within the remaining
    time; the best point wins. With a time limit the primary gets the share
    ``options.primary_time_share`` of it (and each fallback but the last that share of what is
    left), so a homotopy that stalls in one slow subproblem leaves the others their turn; a
    primary that is on track when its share ends (its last subproblem solved and lowered the
    residual) may go on to the whole limit (``extend_to`` of :meth:`HomotopySolver.run`). Each
    of them but the last may spend at most :data:`FIRST_STEP_SHARE` of its own share in its
    first subproblem: a homotopy needs further subproblems after the first, so one whose first
    subproblem alone overruns that has no prospect of finishing within its share, and stopping
    it there hands the time to the next reformulation (on MPECLib's ``tollmpec`` the Scholtes
    relaxation at sigma = 1 needs 45 s, while the penalty form solves the problem in
    4 s). Their steps appear in the trace with phase ``"retry:<method>"``.

    **Second opinion.** With ``second_opinion`` (a reformulation name), a run that converged is
    followed by one run of that reformulation from the original start, within an iteration
    budget (:data:`SECOND_OPINION_MIN_ITER` IPOPT iterations, or
    :data:`SECOND_OPINION_ITER_FACTOR` times the first run's if more: the same outcome on any
    machine) and, with a time limit, at most :data:`SECOND_OPINION_SHARE` of the time left. Its
    point replaces the first when it also meets the tolerance and its objective is lower by more than
    :data:`SECOND_OPINION_RTOL` :math:`\cdot\max(1, |f|)`: two local methods that end on
    different pieces of an MPCC give different objectives, and the lower one is the better plan.
    Its steps appear in the trace with phase ``"second:<method>"``, and
    :attr:`HomotopyOutcome.reformulation` names the run whose point was kept. A warm-started
    run gets no second opinion (it follows a known branch), nor one whose fallbacks already ran
    that reformulation from the same start.

    This class runs what it is given and chooses nothing: the fallbacks and the second opinion
    are the planner's choice (:func:`mcpkit.solving.planner.recovery_plan`: the options'
    ``fallback_methods`` but the method itself; ``method="auto"``'s second opinion up to
    :data:`~mcpkit.solving.planner.SECOND_OPINION_MAX_VARS` variables). Without ``fallbacks`` a
    failed run is not retried.
    """

    def __init__(
        self,
        mpcc: MPCC,
        method: str,
        options: SolveOptions,
        inner: InnerFactory | None = None,
        second_opinion: str | None = None,
        fallbacks: Sequence[str] = (),
    ) -> None:
        self.mpcc = mpcc
        self.options = options
        self.inner: InnerFactory = inner or CasadiInner()
        self.primary = HomotopySolver(mpcc, reformulation_for(method), options, self.inner)
        self.fallback_names = list(fallbacks)
        for name in self.fallback_names:
            reformulation_for(name)  # an unknown name fails here, before any solve
        self._fallbacks: dict[str, HomotopySolver] = {}
        if second_opinion is not None:
            reformulation_for(second_opinion)  # an unknown name fails here, before any solve
        self.second_opinion = second_opinion if second_opinion != method else None

    @property
    def reformulation(self) -> Reformulation:
        """The requested reformulation."""
        return self.primary.reformulation

    def build(self) -> RecoveringHomotopy:
        """Build the primary solvers now (fallbacks are built only if ever needed)."""
        self.primary.build()
        return self

    def polisher(self) -> Polisher:
        """The shared active-set polisher."""
        return self.primary.polisher()

    @functools.cached_property
    def is_lpec(self) -> bool:
        """Whether the MPCC is an LPEC (its polish an LP; checked without building the polisher)."""
        m = self.mpcc
        return is_lpec(m.f, m.g, m.G, m.H, m.x)

    def _fallback(self, name: str) -> HomotopySolver:
        if name not in self._fallbacks:
            solver = HomotopySolver(self.mpcc, reformulation_for(name), self.options, self.inner)
            solver._polisher = self.primary._polisher  # share the built polisher
            self._fallbacks[name] = solver
        return self._fallbacks[name]

    def run(
        self,
        x0: np.ndarray,
        p: np.ndarray,
        assess: Assessor,
        *,
        time_limit: float | None = None,
        **start: Any,
    ) -> HomotopyOutcome:
        """Run the requested homotopy, then the fallbacks if needed (see the class docstring).

        ``start`` holds :meth:`HomotopySolver.run`'s ``warm_start``, ``lam_x0`` and ``lam_g0``
        for the requested homotopy; the fallbacks start cold from ``x0``. ``time_limit`` bounds
        the whole call (default ``options.time_limit``).
        """
        t0 = time.perf_counter()
        limit = self.options.time_limit if time_limit is None else time_limit
        ran: list[str] = []
        best = self._run_recovering(x0, p, assess, t0, limit, ran, **start)
        # not after a warm start: that follows a known branch (time stepping, parametric sweeps),
        # which a second opinion from the cold start could leave; nor when that reformulation
        # already ran from this start as a fallback (the same run again)
        cold = not start.get("warm_start", False)
        second = self.second_opinion
        if (
            second is not None and cold and second not in ran
            and best.termination is Termination.CONVERGED
        ):  # fmt: skip
            best = self._second(best, x0, p, assess, t0, limit)
        return best

    def _run_recovering(
        self,
        x0: np.ndarray,
        p: np.ndarray,
        assess: Assessor,
        t0: float,
        limit: float | None,
        ran: list[str],
        **start: Any,
    ) -> HomotopyOutcome:
        """The primary, then the fallbacks (the class docstring), within ``limit`` from ``t0``;
        the names of the fallbacks that ran are appended to ``ran``."""
        share = limit
        if limit is not None and self.fallback_names:
            share = self.options.primary_time_share * limit
        first = None if share is None or limit is None or share >= limit else FIRST_STEP_SHARE * share
        deadline = None if limit is None else t0 + limit
        # on track, the primary may run past its share up to the whole limit
        best = self.primary.run(
            x0, p, assess, time_limit=share, first_step_limit=first, extend_to=limit, **start
        )
        best = self._polish_stopped(best, p, assess, deadline)
        if best.termination in (Termination.CONVERGED, Termination.INTERRUPTED):
            return best
        if best.termination is Termination.TIME_LIMIT and (
            limit is None or share is None or share >= limit or time.perf_counter() - t0 >= limit
        ):
            return best  # the whole budget is spent (a share of it leaves the fallbacks the rest)
        trace, iterations, path = list(best.trace), best.iterations, list(best.path)
        for i, name in enumerate(self.fallback_names):
            solver = self._fallback(name)
            t = solver.template
            if equality_count(t.lbg, t.ubg) > t.x.numel():
                continue  # more equalities than variables: IPOPT would refuse it outright
            remaining = None if limit is None else limit - (time.perf_counter() - t0)
            if remaining is not None and remaining <= 0:
                break
            first = None
            if remaining is not None and i < len(self.fallback_names) - 1:
                remaining *= self.options.primary_time_share  # leave the later fallbacks their turn
                first = FIRST_STEP_SHARE * remaining
            out = solver.run(x0, p, assess, time_limit=remaining, first_step_limit=first)
            ran.append(name)
            out = self._polish_stopped(out, p, assess, deadline)
            iterations += out.iterations
            path.extend(out.path)
            trace.extend(
                replace(s, phase=f"retry:{name}" if s.phase == "relax" else s.phase) for s in out.trace
            )
            tol = self.options.tol
            # a converged run beats the unconverged ones before it (one the time limit cut may
            # hold a feasible, complementary point of lower residual that is no converged plan)
            converged = out.termination is Termination.CONVERGED
            if out.x is not None and (
                best.x is None or converged or out.assessment.key(tol) < best.assessment.key(tol)
            ):
                best = out
            if best.termination is Termination.CONVERGED:
                break
        best.trace, best.iterations, best.path = trace, iterations, path
        return best

    @functools.cached_property
    def _objective(self) -> ca.Function:
        m = self.mpcc
        return ca.Function("objective", [m.x, m.p], [m.f])

    def _f(self, x: np.ndarray, p: np.ndarray) -> float:
        return float(self._objective(x, p))

    def _second(
        self,
        best: HomotopyOutcome,
        x0: np.ndarray,
        p: np.ndarray,
        assess: Assessor,
        t0: float,
        limit: float | None,
    ) -> HomotopyOutcome:
        """The second opinion of the class docstring, after ``best`` converged."""
        name = self.second_opinion
        assert name is not None and best.x is not None
        now = time.perf_counter()
        # iterations, not seconds: the same outcome on any machine and under any load; a time
        # limit only adds its share of the time left as a bound
        budget = max(SECOND_OPINION_MIN_ITER, SECOND_OPINION_ITER_FACTOR * best.iterations)
        cap = None if limit is None else SECOND_OPINION_SHARE * (limit - (now - t0))
        solver = self._fallback(name)
        t = solver.template
        if (cap is not None and cap <= 0) or equality_count(t.lbg, t.ubg) > t.x.numel():
            return best
        out = solver.run(x0, p, assess, time_limit=cap, first_step_limit=None, max_iterations=budget)
        out = self._polish_stopped(out, p, assess, None if cap is None else now + cap)
        best.trace.extend(
            replace(s, phase=f"second:{name}" if s.phase == "relax" else s.phase) for s in out.trace
        )
        best.iterations += out.iterations
        tol = self.options.tol
        if out.x is None or out.termination is not Termination.CONVERGED or not out.assessment.meets(tol):
            return best
        f_best, f_out = self._f(best.x, p), self._f(out.x, p)
        if not f_out < f_best - SECOND_OPINION_RTOL * max(1.0, abs(f_best)):
            return best
        out.trace, out.iterations = best.trace, best.iterations
        out.path = [*best.path, *out.path]
        return out

    def _polish_stopped(
        self, out: HomotopyOutcome, p: np.ndarray, assess: Assessor, deadline: float | None
    ) -> HomotopyOutcome:
        """An LPEC's run that its share of the time stopped: the polish from its best point.

        A run stopped by its share ends without the polish its last point would have had. On
        an LPEC the polish is an LP, or a MILP over the doubtful pairs
        (:meth:`Polisher.polish`), and is bounded by the time left of the whole call, not of the
        share; other problems' polishes are IPOPT runs and wait for the next reformulation.
        """
        opts = self.options
        if (
            out.termination is not Termination.TIME_LIMIT
            or out.x is None
            or not out.path  # no subproblem finished: its best point is the start
            or not (opts.polish and self.mpcc.n_pairs)
            or not out.assessment.residual <= opts.polish_trigger
            or (deadline is not None and time.perf_counter() >= deadline)
            or not self.is_lpec
        ):
            return out
        polisher = self.polisher()
        res = polisher.polish(out.x, p, polisher.active_mask(out.x, p), deadline)
        finite = bool(np.isfinite(res.x).all())
        xr, a = assess(res.x, p) if finite else (None, None)
        k = len(out.trace)
        out.trace.append(
            HomotopyStep(
                k, 0.0, a.residual if a else np.inf, res.status, res.iterations, res.wall_time_s, "polish"
            )
        )
        out.iterations += res.iterations
        if a is None or not a.meets(opts.tol):
            return out
        return HomotopyOutcome(
            xr, a, Termination.CONVERGED, res.status, out.iterations, out.trace, None, None,
            out.reformulation, out.path,
        )  # fmt: skip


def make_homotopy(
    mpcc: MPCC,
    method: str,
    options: SolveOptions,
    inner: InnerFactory | None = None,
    second_opinion: str | None = None,
    fallbacks: Sequence[str] = (),
) -> RecoveringHomotopy:
    """The homotopy for ``method`` with the recovery of :class:`RecoveringHomotopy`.

    ``inner`` builds the inner solvers (default: CasADi's ``nlpsol`` IPOPT; see
    :func:`~mcpkit.homotopy.inner.select_inner` for the ``ipopt=`` choices of backend ``pyomo``);
    ``second_opinion`` names the reformulation run after a converged one and ``fallbacks`` those
    run after a failed one (the class docstring; both chosen by
    :func:`mcpkit.solving.planner.recovery_plan`).
    """
    return RecoveringHomotopy(mpcc, method, options, inner, second_opinion, fallbacks)
