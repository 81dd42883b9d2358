r"""One MPCC solver with a backend switch: lower once, run the homotopy, judge on the user's pairs.

:class:`MPCCSolver` takes any :class:`~mcpkit.mpcc.MPCC` (general pair bounds allowed) and

1. lowers it **once** to the standard form :math:`0 \le G \perp H \ge 0` with
   :class:`~mcpkit.lowering.standard.ToStandardMPCC` (the identity for a standard problem);
2. on ``backend="pyomo"`` lowers that on through Pyomo (:class:`~mcpkit.lowering.pyomo_nl.ThroughPyomoNL`:
   the CasADi graph replayed as a Pyomo model, written by Pyomo's NL writer and read back), so
   every function IPOPT evaluates comes from the Pyomo model;
3. runs the one homotopy of :mod:`mcpkit.homotopy.loop` (reformulation from the registry,
   adaptive parameter, retries, fallback reformulations, polish, time limit; IPOPT's tolerance
   tied to ``tol``);
4. judges every candidate on the **original** problem
   (:func:`~mcpkit.solving.residuals.judged_residuals`, through a
   :class:`~mcpkit.homotopy.loop.PointAssessor` handed down to the homotopy and the refinement): constraint
   violation from :meth:`MPCC.residuals <mcpkit.problems.mpcc.MPCC.residuals>` and the
   complementarity residual :math:`\max_j |\operatorname{mid}(H_j - H_{l,j}, H_j - H_{u,j}, G_j)|`
   computed without cancellation (:func:`mcpkit.solving.residuals.natural_residual_vector`); ``solved``
   means both are :math:`\le` ``tol`` (``tol`` defaults to
   :data:`~mcpkit.solving.options.DEFAULT_TOL` ``["mpcc"]`` = 1e-6);
5. refines a solved point to a certified B-stationary one (:mod:`mcpkit.stationarity.refine`: LPEC over
   the biactive pairs, branch NLP along its descent direction, repeat; then a bounded multistart
   from the homotopy path when the point stays uncertified) and classifies it (S, B, M, C, weak;
   :mod:`mcpkit.stationarity.certificate`) on the standard form built in step 1, beside the verdict,
   never folded into it. ``result.stationarity`` is always set: ``"B"`` only with an LPEC
   certificate, ``"S"`` with multipliers; ``result.extra["refinement"]`` says why an uncertified
   point stayed so. ``refine=False`` (or ``RefineOptions(enabled=False)``) only classifies.
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import replace
from typing import Any

import casadi as ca
import numpy as np

from mcpkit.errors import MCPInputError, NonFiniteError
from mcpkit.homotopy.ipopt import wall_build_seconds
from mcpkit.homotopy.loop import HomotopyOutcome, PointAssessor, Polisher
from mcpkit.homotopy.recovery import make_homotopy
from mcpkit.orchestration import second_start
from mcpkit.orchestration.planner import plan_mpcc
from mcpkit.orchestration.second_start import SecondStart
from mcpkit.problems.arrays import as_float_vector
from mcpkit.problems.derivatives import CACHE_KEY
from mcpkit.problems.mpcc import MPCC
from mcpkit.solving.options import SolveOptions, WarmStart, progress_trace, time_limit_seconds
from mcpkit.solving.progress import BAR_SETTINGS, display
from mcpkit.solving.residuals import classify_pairs, judged_residuals
from mcpkit.solving.result import MPCCResult, SolutionStatus, Termination, judge, reported_termination
from mcpkit.stationarity.refine import IterationBudget, RefinementReport, RefineOptions, Refiner

#: Activity / multiplier-residual tolerance of the stationarity check after a solve: homotopy
#: points carry errors around 1e-6 in G and H, so a tighter tolerance misreads activity.
STATIONARITY_TOL = 1e-4
#: Above this many variables the stationarity check and the refinement are skipped, with a note.
#: Earlier versions had 5,000: the Jacobians at the point were dense (1 GB for the plate
#: design's 12,014-variable horizon at N = 400); above
#: :data:`~mcpkit.stationarity.certificate.DENSE_JACOBIAN_MAX_VARS` they are sparse now, and the
#: horizons of up to 12,014 variables were classified within their time limits (docs/mpec_planning.md).
STATIONARITY_MAX_VARS = 50_000


class MPCCSolver:
    """An MPCC with one method on one backend, built once; :meth:`solve` for many parameter values.

    Parameters
    ----------
    problem
        The :class:`~mcpkit.mpcc.MPCC` (standard or general pair bounds).
    method
        A reformulation registered for MPCCs (``scholtes``, ``scholtes_eq``, ``fb``,
        ``penalty``, ``elastic``). ``auto`` is ``scholtes`` with ``fb`` as a second opinion from
        the same cold start, the lower objective kept; on an LPEC (f, g, G, H affine in x) the
        other way round (:func:`mcpkit.orchestration.planner.resolve`). A method named explicitly runs alone.
        See ``mcpkit info``.
    backend
        ``"casadi"`` (``auto``) or ``"pyomo"``; anything else raises
        :class:`~mcpkit.errors.UnknownOptionError` or :class:`~mcpkit.errors.MCPInputError`.
    options, **kwargs
        :class:`~mcpkit.solving.options.SolveOptions` and/or its fields.
    ipopt
        Backend ``pyomo`` only: which IPOPT solves the subproblems (``"auto"``: an ``ipopt``
        executable when one is found, else CasADi's; ``"executable"``, ``"casadi"``,
        ``"mcpkit_ipopt"``).
    stationarity
        Classify each returned point (``result.stationarity``; default ``True``). ``False``
        with refinement off leaves ``"not checked"``.
    refine
        :class:`~mcpkit.stationarity.refine.RefineOptions`, or ``True`` (the defaults: on) / ``False``
        (off). Refinement classifies the point whatever ``stationarity`` says.
    """

    def __init__(
        self,
        problem: MPCC,
        method: str = "auto",
        backend: str = "auto",
        options: SolveOptions | None = None,
        *,
        ipopt: str = "auto",
        stationarity: bool = True,
        refine: RefineOptions | bool = True,
        **kwargs: Any,
    ) -> None:
        if not isinstance(problem, MPCC):
            raise MCPInputError(f"MPCCSolver expects an mcpkit.MPCC, got {type(problem).__name__}")
        self.options = SolveOptions.for_problem("mpcc", options, **kwargs)
        if isinstance(refine, bool):
            refine = RefineOptions(enabled=refine)
        if not isinstance(refine, RefineOptions):
            raise MCPInputError(f"refine= takes a bool or RefineOptions, got {type(refine).__name__}")
        self.problem = problem
        self.check_stationarity = bool(stationarity)
        self.refine_options = refine
        self._refiner: Refiner | None = None
        plan = plan_mpcc(problem, method, backend, self.options, ipopt)  # typed errors first
        self.route = plan.route
        self.method = plan.route.method
        self.backend = plan.route.backend
        self.standard = plan.standard  # the stationarity check reuses the one lowering
        self.lifted = plan.lifted  # what the homotopy and the refinement solve
        self.plan = plan
        self.chain = plan.chain
        self.mpcc = plan.target
        self.ipopt_used = plan.ipopt_used
        self.homotopy = plan.homotopy
        self.recovery = plan.recovery
        # the homotopy's candidates judged on the user's pairs: data handed down, no callback up
        self.assessor: PointAssessor = plan.assessor(self.options.tol)

    def solve(
        self, p: Any = None, x0: Any = None, *, time_limit: float | None = None, warm: bool = False
    ) -> MPCCResult:
        """Solve at parameter values ``p`` from ``x0`` (defaults: the problem's ``p0``, ``x0``).

        ``time_limit`` (seconds, ``None``: the options') bounds this call: the homotopy, the
        refinement and the stationarity check all end within it (a check that does not fit
        leaves ``stationarity="not checked"`` and says why in the message). ``warm=True`` takes
        ``x0`` for a nearby solution (a plan mapped from a coarser grid, the previous step of a
        sweep): the polish on the active set that ``x0`` predicts is tried first, then the
        homotopy runs with the warm-start IPOPT settings
        (:meth:`~mcpkit.homotopy.loop.HomotopySolver.run`); the fallbacks still start cold.
        """
        mp, orig = self.mpcc, self.problem
        pv = orig.p0 if p is None else as_float_vector(p, mp.p.numel(), "p", allow_inf=False)
        if x0 is None:
            xs = mp.x0 if p is None else self.plan.lift(orig.x0, pv)
        else:
            xo = as_float_vector(x0, orig.x0.size, "x0", allow_inf=False)
            xs = self.plan.lift(xo, pv)
        t0 = time.perf_counter()
        limit = self.options.time_limit
        if time_limit is not None:  # this call's limit (0: the homotopy stops at once)
            limit = time_limit_seconds(time_limit, zero_ok=True)
        if limit is not None and not np.isfinite(limit):
            limit = None
        hard = None if limit is None else t0 + limit  # every check after the homotopy ends by then
        second = self._second_start(xs, pv, limit)  # warm_start="best_of_two": the adaptive run
        # progress=True: one tqdm line over the whole call (homotopy, refinement, classification);
        # otherwise nothing to enter (progress.py is not called), as in mcpkit.Solver
        bar = (
            display(self.options.progress, orig.name)
            if self.options.progress in BAR_SETTINGS
            else contextlib.nullcontext()
        )
        with bar:
            try:
                budget = math.inf if limit is None else limit
                out = self.homotopy.run(xs, pv, self.assessor, time_limit=budget, warm_start=bool(warm))
            except BaseException:
                if second is not None:  # no orphan child after an error or Ctrl-C here
                    second.stop()
                raise
            out, kept, note = self._keep_better(out, second, pv, t0, limit)
            result = self._finish(out, pv, t0, hard)
        if kept:
            result.extra["warm_start"] = kept
            result.message += f"; best of two warm starts: {note}"
        result.wall_time_s = time.perf_counter() - t0
        return result

    def _second_start(self, xs: np.ndarray, pv: np.ndarray, limit: float | None) -> SecondStart | None:
        """With ``warm_start="best_of_two"`` and a second core, a forked child running this
        homotopy with the adaptive warm-start profile (:mod:`mcpkit.orchestration.second_start`)."""
        if self.options.warm_start is not WarmStart.BEST_OF_TWO or not second_start.available():
            return None
        opts = replace(self.options, warm_start=WarmStart.ADAPTIVE, progress=None, verbose=False)
        rec, mp = self.recovery, self.mpcc

        def run() -> HomotopyOutcome:
            hom = make_homotopy(mp, self.method, opts, self.homotopy.inner, rec.second_opinion, rec.fallbacks)
            child = second_start.child_limit(limit)
            return hom.run(xs, pv, self.assessor, time_limit=math.inf if child is None else child)

        return SecondStart(run).start()

    def _keep_better(
        self, out: HomotopyOutcome, second: SecondStart | None, pv: np.ndarray, t0: float, limit: float | None
    ) -> tuple[HomotopyOutcome, str, str]:
        """``(outcome, which, note)``: :func:`~mcpkit.orchestration.second_start.better` of this run's
        and the second start's outcomes, waiting for the latter as long as
        :func:`~mcpkit.orchestration.second_start.wait_until` says for a call started at ``t0``
        with time limit ``limit`` (``which`` empty unless ``warm_start="best_of_two"``)."""
        if self.options.warm_start is not WarmStart.BEST_OF_TWO:
            return out, "", ""
        if second is None:
            return out, "standard", "no second start (it needs fork and two cores)"
        other = second.collect(second_start.wait_until(t0, limit))
        fun = self.mpcc.function("f")

        def objective(x: np.ndarray) -> float:
            return float(np.asarray(fun(x, pv)).reshape(-1)[0])

        kept, which = second_start.better(out, other, objective, self.options.tol)
        if other is None:
            return kept, which, f"standard point kept ({second.note})"
        if other.x is not None and out.x is not None:
            fs, fa = objective(out.x), objective(other.x)
            return kept, which, f"{which} point kept (f = {fs:.6g} standard, {fa:.6g} adaptive)"
        return kept, which, f"{which} point kept"

    def _finish(self, out: HomotopyOutcome, pv: np.ndarray, t0: float, hard: float | None) -> MPCCResult:
        """The result of a homotopy's outcome: refined, judged on the user's problem, classified
        (every check ends by ``hard``, the call's time limit)."""
        orig = self.problem
        x = None if out.x is None else self.assessor.user_point(out.x)
        refinement: RefinementReport | None = None
        stat_rep = None
        refine = self.refine_options.enabled and x is not None and out.assessment.meets(self.options.tol)
        if refine and self.problem.x.numel() <= STATIONARITY_MAX_VARS:
            try:
                x, stat_rep, refinement = self._refine(x, pv, out, t0, hard)
            except NonFiniteError as exc:  # NaN/inf derivatives at a point: keep the homotopy's
                f = float(self.problem.evaluate(x, pv)["f"][0])
                refinement = RefinementReport(None, f"refinement stopped: {exc}", "homotopy", f, f)
        result = mpcc_result(
            orig, x, pv, out.termination, self.options.tol,
            iterations=out.iterations, wall_time_s=time.perf_counter() - t0, backend=self.backend,
            method=self.method, trace=out.trace, raw_status=out.raw_status,
            extra={"ipopt": self.ipopt_used, "reformulation": out.reformulation},
        )  # fmt: skip
        result.problem, result.p = orig, pv  # for value_gradient()
        lift_map = self.plan.lift_map
        result.extra["lifted_pair_sides"] = 0 if lift_map is None else lift_map.n_new
        if out.termination is Termination.TIME_LIMIT and out.raw_status.startswith("not started"):
            result.message += f" ({out.raw_status})"  # why no step ran
        if note := out.cut_note(result.solved):  # the time limit cut the homotopy before its target
            result.message += f"; {note}"
        if self.route.note:
            result.message += f"; {self.route.note} (point from {out.reformulation})"
            if self.recovery.skipped:
                result.message += f"; {self.recovery.skipped}"
        if refinement is not None and stat_rep is not None:
            result.stationarity = stat_rep.level.value
            result.extra["stationarity_report"] = stat_rep
            result.extra["refinement"] = refinement
            result.message += f"; {refinement.summary()}"
            if stat_rep.level.value == "not checked":
                result.message += f"; stationarity {stat_rep.message}"
        elif refinement is not None:
            result.extra["refinement"] = refinement
            try:
                self._attach_stationarity(result, pv, hard)
            except NonFiniteError:
                result.stationarity = "not checked"
        elif self.check_stationarity or self.refine_options.enabled:
            out_of_time = hard is not None and time.perf_counter() >= hard
            if out_of_time:  # the limit bounds the whole call, the classification included
                result.stationarity = "not checked"
                result.message += "; stationarity not checked: time limit reached"
            else:
                self._attach_stationarity(result, pv, hard)
            if self.refine_options.enabled and "refinement" not in result.extra:
                why = "not solved" if not result.solved else "too many variables"
                if out_of_time:
                    why += "; not classified: time limit reached"
                f = float(result.f)
                result.extra["refinement"] = RefinementReport(None, why, "homotopy", f, f)
        else:
            result.stationarity = "not checked"
        return result

    def refiner(self) -> Refiner:
        """The :class:`~mcpkit.stationarity.refine.Refiner` on the standard form (built on first use)."""
        if self._refiner is None:
            # a polisher with the iteration monitor, so that a flip's branch NLP stops at the flip
            # search's iteration budget: the homotopy's when it has one (above 1,000 variables),
            # else its own (a few ms to build: the derivatives are shared); on backend pyomo the
            # branch NLPs run on the lifted form with CasADi's IPOPT
            polisher = self.homotopy.polisher() if self.backend != "pyomo" else None
            if polisher is None or not polisher.capped:
                polisher = Polisher(self.lifted, self.options, capped=True)

            def scaled(scale: float) -> Polisher:
                io = {**self.options.ipopt_options, "obj_scaling_factor": scale}
                return Polisher(self.lifted, replace(self.options, ipopt_options=io), capped=True)

            ro = self.refine_options
            if self.standard.x.numel() > ro.keep_certified_above:  # no objective search after a certificate
                ro = replace(ro, flip_pairs=0, near_biactive_tol=0.0)
            self._refiner = Refiner(
                self.lifted, polisher, self.plan.assessor(self.options.tol, lifted=True), self.options.tol,
                STATIONARITY_TOL, ro,
                scaled_polisher=scaled,
            )  # fmt: skip
        return self._refiner

    def _refine(
        self, x: np.ndarray, p: np.ndarray, out: HomotopyOutcome, t0: float, hard: float | None
    ) -> tuple[np.ndarray, Any, RefinementReport]:
        """Refinement and escape (:mod:`mcpkit.stationarity.refine`) of the user's point ``x``; every
        classification ends by ``hard`` (the solve's time limit)."""
        refiner = self.refiner()
        refiner.check_deadline = hard
        reported = progress_trace(self.options)  # the live display's, not the result's trace
        refiner.on_step = None if type(reported) is list else reported.append
        ro = self.refine_options
        large = self.standard.x.numel() > ro.large_vars
        factor = ro.large_iteration_factor if large else ro.iteration_factor
        # budgets in IPOPT iterations (the same plan under any load); the clock only for the
        # user's refinement time_limit and the solve's own limit
        flip_factor = min(ro.flip_iteration_factor, factor) if large else ro.flip_iteration_factor
        refiner.budget = IterationBudget(
            max(ro.min_iterations, int(factor * out.iterations)), int(flip_factor * out.iterations)
        )
        limits = [ro.time_limit]
        if hard is not None:
            # a large point's refinement (branch NLPs as costly as the homotopy's subproblems) takes
            # at most half of what the limit leaves: the call returns before its limit, not at it
            # (NOSBENCH's DSCOB_003 and DSCSP_..._7 ended at 60.1 s of 60 in an unfinished branch NLP)
            left = hard - time.perf_counter()
            limits.append(0.5 * left if large else left)
        finite = [v for v in limits if v is not None]
        deadline = time.perf_counter() + max(min(finite), 0.0) if finite else None
        lift = self.plan.lift
        # flips only lower f further: under a limit they never take more than half of what it leaves
        budget = None if hard is None else 0.5 * max(hard - time.perf_counter(), 0.0)
        best = refiner.run(lift(x, p), p, deadline, flip_budget=budget)
        if not best[2].certified and self.refine_options.multistart and out.path:
            path = [lift(self.assessor.user_point(pt), p) for pt in out.path]
            best = refiner.escape(best, path, p, deadline)
        xs, rep, report = best
        return xs[: self.problem.x.numel()], rep, report

    def _attach_stationarity(self, result: MPCCResult, p: np.ndarray, deadline: float | None = None) -> None:
        from mcpkit.stationarity.certificate import attach_stationarity

        if self.problem.x.numel() > STATIONARITY_MAX_VARS:
            result.stationarity = "not checked"
            result.message += f"; stationarity not checked: more than {STATIONARITY_MAX_VARS} variables"
            return
        lifted = self.lifted
        if deadline is not None and "stationarity_derivatives" not in lifted._funs:
            # its derivatives are one symbolic Jacobian that cannot be stopped: not started
            # when even a lower estimate of it does not fit the time left
            derived = CACHE_KEY in lifted._derived
            rows = ca.vertcat(lifted.g, lifted.G, lifted.H)
            need = wall_build_seconds(lifted.x, lifted.p, rows, derivatives=not derived)
            if time.perf_counter() + need > deadline:
                result.stationarity = "not checked"
                result.message += (
                    f"; stationarity not checked: its derivatives take at least {need:.1f} s, "
                    "more than the time left"
                )
                return
        attach_stationarity(
            result, self.problem, p, tol=STATIONARITY_TOL, lowered=lifted, deadline=deadline,
            lift=self.plan.lift,
        )  # fmt: skip
        rep = result.extra.get("stationarity_report")
        if rep is not None and result.stationarity == "not checked":
            result.message += f"; stationarity {rep.message}"


def mpcc_result(
    orig: MPCC,
    x: np.ndarray | None,
    p: np.ndarray,
    termination: Termination,
    tol: float,
    **common: Any,
) -> MPCCResult:
    """The :class:`~mcpkit.solving.result.MPCCResult` of a solve, judged on the problem ``orig`` at ``x``.

    The status is :func:`~mcpkit.solving.result.judge` of the complementarity residual and the
    constraint violation (:func:`~mcpkit.solving.residuals.judged_residuals`): ``SOLUTION`` needs
    both finite and <= ``tol``.
    The termination is :func:`~mcpkit.solving.result.reported_termination`: a solver that claims
    convergence without that is reported ``STALLED``; ``LOCALLY_INFEASIBLE`` (IPOPT found the
    NLP locally infeasible) stands only when the returned point violates the MPCC's constraints
    by more than ``tol``, otherwise it is ``STALLED`` (that point shows the MPCC is feasible there;
    what IPOPT found infeasible was a relaxed subproblem). ``common`` holds the
    :class:`~mcpkit.solving.result.SolveResult` fields every route fills.
    """
    nc = orig.n_pairs
    if x is None or not np.isfinite(x).all():
        nan = np.full
        return MPCCResult(
            x=nan(orig.x0.size, np.nan), f=np.nan, g=nan(int(orig.g.numel()), np.nan),
            G=nan(nc, np.nan), H=nan(nc, np.nan), comp_residual=np.inf, constraint_violation=np.inf,
            termination=termination, solution_status=SolutionStatus.NO_SOLUTION,
            message=f"NOT solved {orig.name}: no point produced ({termination.value})", tol=tol, **common,
        )  # fmt: skip
    comp, viol, vals = judged_residuals(orig, x, p)
    # the one verdict (as for MCPs): the complementarity residual in the natural residual's role
    status = judge(comp, viol, tol, True)
    termination = reported_termination(termination, status, infeasibility_shown=not viol <= tol)
    verdict = "solved" if status is SolutionStatus.SOLUTION else "NOT solved"
    return MPCCResult(
        x=np.asarray(x, dtype=float),
        f=float(vals["f"][0]),
        g=vals["g"],
        G=vals["G"],
        H=vals["H"],
        comp_residual=comp,
        constraint_violation=viol,
        termination=termination,
        solution_status=status,
        # pair states of the box pairs H_l <= H ⟂ G (H in the variable's role)
        pair_states=classify_pairs(vals["H"], vals["G"], orig.lbH, orig.ubH, tol),
        message=(
            f"{verdict} {orig.name}: complementarity residual {comp:.2e}, constraint violation "
            f"{viol:.2e} (tol {tol:.0e}), termination {termination.value}"
        ),
        tol=tol,
        **common,
    )


def solve_mpcc(
    mpcc: MPCC,
    method: str = "auto",
    backend: str = "auto",
    options: SolveOptions | None = None,
    p: Any = None,
    x0: Any = None,
    **kwargs: Any,
) -> MPCCResult:
    """Solve ``mpcc`` once (see :class:`MPCCSolver`; ``ipopt=``, ``stationarity=``, ``refine=`` pass on)."""
    return MPCCSolver(mpcc, method, backend, options, **kwargs).solve(p=p, x0=x0)
