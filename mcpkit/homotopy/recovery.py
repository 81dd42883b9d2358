r"""The fallbacks and the second opinion around the one homotopy loop.

:class:`RecoveringHomotopy` runs the requested reformulation's :class:`~mcpkit.homotopy.loop.HomotopySolver`
and, when it ends without meeting the tolerance, the fallback reformulations in turn within the
time left; after a converged run it may run a second reformulation and keep the lower objective.
The objective of a point is :math:`f(x, p)` of the MPCC; a point wins on
:meth:`~mcpkit.homotopy.loop.Assessment.key` (feasible first, then the smaller residual).
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import casadi as ca
import numpy as np

from mcpkit.homotopy.inner import InnerFactory
from mcpkit.homotopy.ipopt import CasadiInner
from mcpkit.homotopy.loop import Assessor, HomotopyOutcome, HomotopySolver, Polisher, equality_count
from mcpkit.homotopy.reformulation import Reformulation, reformulation_for
from mcpkit.problems.mpcc import MPCC
from mcpkit.solving.options import SolveOptions
from mcpkit.solving.result import HomotopyStep, Termination

#: The number of pairs at which ``SolveOptions.primary_iterations`` and
#: ``first_step_iterations`` apply as given; :func:`iteration_budget` scales them to others.
BUDGET_REFERENCE_PAIRS = 1000
#: The least iteration budget :func:`iteration_budget` gives, however many pairs.
BUDGET_FLOOR_ITERATIONS = 50


def iteration_budget(iterations: int | None, pairs: int) -> int | None:
    r"""``iterations`` (given for :data:`BUDGET_REFERENCE_PAIRS` pairs) for an MPCC of ``pairs``
    pairs: :math:`\max(n_{\rm floor}, \lfloor n \cdot 1000 / \max(p, 1) \rfloor)`.

    An IPOPT iteration on a relaxed MPCC costs more the more pair rows it has (MPECLib's
    ``tollmpec``, 2,300 pairs: 62 ms; ``aampec_2``, 69 pairs: well under 1 ms), so one count for
    all sizes either cuts small problems' long but cheap first subproblems or lets a large
    problem's stalled one take the whole limit. Scaled by the pairs it stays a count: the same
    on any machine and under any load. ``None`` stays ``None`` (no budget).
    """
    if iterations is None:
        return None
    return max(BUDGET_FLOOR_ITERATIONS, iterations * BUDGET_REFERENCE_PAIRS // max(pairs, 1))


#: A second opinion (:class:`RecoveringHomotopy`, ``second_opinion``) has an iteration budget,
#: so that its outcome does not depend on the machine's speed or load: this many IPOPT
#: iterations at least, or :data:`SECOND_OPINION_ITER_FACTOR` times those of the first
#: converged run if more; the clock bounds it only by the caller's time limit.
SECOND_OPINION_MIN_ITER = 300
SECOND_OPINION_ITER_FACTOR = 2
#: A second opinion's point replaces the first only when its objective is lower by more than
#: this times ``max(1, |f|)`` (two reformulations ending on one point differ in the last digits).
SECOND_OPINION_RTOL = 1e-8


class RecoveringHomotopy:
    r"""The requested homotopy, then the fallback reformulations when it fails.

    Subproblems that fail in one reformulation (restoration failure, "infeasible" relaxations
    near degenerate points) often solve in another: the Scholtes equality form keeps iterates
    away from the corner :math:`G = H = 0`, and Fischer-Burmeister turns the pairs into
    equations. When the primary run ends without meeting the tolerance, each method of
    ``fallbacks`` runs in turn from the original start, within the remaining
    time; the best point wins. With a time limit, the primary (and each fallback but the last)
    has budgets in IPOPT iterations, never in seconds, so that which reformulation gets its turn
    does not depend on the machine's speed or load; the clock decides only the caller's limit,
    which bounds every run:

    * ``options.primary_iterations`` (scaled to the MPCC's pairs, :func:`iteration_budget`)
      while it is not on track (``off_track_iterations`` of
      :meth:`HomotopySolver.run`): a homotopy that stalls leaves the others their turn, while
      one on track (its last subproblem solved and lowered the residual) goes on;
    * ``options.first_step_iterations`` (scaled the same way) for its first subproblem: a
      homotopy needs further subproblems after the first, so one whose first subproblem alone takes that many
      iterations hands over to the next reformulation (on MPECLib's ``tollmpec`` the Scholtes
      relaxation at sigma = 1 needs 826 iterations and 45 s, while the penalty form solves the
      problem in a few seconds).

    Their steps appear in the trace with phase ``"retry:<method>"``.

    **Second opinion.** With ``second_opinion`` (a reformulation name), a run that converged is
    followed by one run of that reformulation from the original start, within an iteration
    budget (:data:`SECOND_OPINION_MIN_ITER` IPOPT iterations, or
    :data:`SECOND_OPINION_ITER_FACTOR` times the first run's if more: the same outcome on any
    machine), within the time left of the caller's limit. Its
    point replaces the first when it also meets the tolerance and its objective is lower by more than
    :data:`SECOND_OPINION_RTOL` :math:`\cdot\max(1, |f|)`: two local methods that end on
    different pieces of an MPCC give different objectives, and the lower one is the better plan.
    Its steps appear in the trace with phase ``"second:<method>"``, and
    :attr:`HomotopyOutcome.reformulation` names the run whose point was kept. A warm-started
    run gets no second opinion (it follows a known branch), nor one whose fallbacks already ran
    that reformulation from the same start.

    This class runs what it is given and chooses nothing: the fallbacks and the second opinion
    are the planner's choice (:func:`mcpkit.orchestration.planner.recovery_plan`: the options'
    ``fallback_methods`` but the method itself; ``method="auto"``'s second opinion up to
    :data:`~mcpkit.orchestration.planner.SECOND_OPINION_MAX_VARS` variables). Without ``fallbacks`` a
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
        return self.mpcc.is_lpec()

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
        the whole call (``None``: ``options.time_limit``; ``math.inf``: no limit, whatever the
        options say).
        """
        t0 = time.perf_counter()
        limit = self.options.time_limit if time_limit is None else time_limit
        if limit is not None and math.isinf(limit):
            limit = None
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
        budgets = self._budgets(limit)
        deadline = None if limit is None else t0 + limit
        best = self.primary.run(x0, p, assess, time_limit=limit, **budgets, **start)
        best = self._polish_stopped(best, p, assess, deadline)
        if best.termination in (Termination.CONVERGED, Termination.INTERRUPTED, Termination.TIME_LIMIT):
            return best  # a time limit ends the whole call: it is the caller's
        trace, iterations, path = list(best.trace), best.iterations, list(best.path)
        for i, name in enumerate(self.fallback_names):
            solver = self._fallback(name)
            t = solver.template
            if equality_count(t.lbg, t.ubg) > t.x.numel():
                continue  # more equalities than variables: IPOPT would refuse it outright
            remaining = None if limit is None else limit - (time.perf_counter() - t0)
            if remaining is not None and remaining <= 0:
                break
            last = i == len(self.fallback_names) - 1
            out = solver.run(x0, p, assess, time_limit=remaining, **({} if last else budgets))
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

    def _budgets(self, limit: float | None) -> dict[str, int | None]:
        """The iteration budgets of a run that has reformulations after it (class docstring):
        with a time limit and fallbacks, ``options.primary_iterations`` off track and
        ``options.first_step_iterations`` for the first subproblem, scaled to the MPCC's pairs
        (:func:`iteration_budget`); none otherwise (the run then has all the time there is)."""
        if limit is None or not self.fallback_names:
            return {}
        opts, pairs = self.options, self.mpcc.n_pairs
        return {
            "off_track_iterations": iteration_budget(opts.primary_iterations, pairs),
            "first_step_iterations": iteration_budget(opts.first_step_iterations, pairs),
        }

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
        # iterations, not seconds: the same outcome on any machine and under any load; the
        # caller's time limit is the only bound the clock sets
        budget = max(SECOND_OPINION_MIN_ITER, SECOND_OPINION_ITER_FACTOR * best.iterations)
        left = None if limit is None else limit - (time.perf_counter() - t0)
        solver = self._fallback(name)
        t = solver.template
        if (left is not None and left <= 0) or equality_count(t.lbg, t.ubg) > t.x.numel():
            return best
        out = solver.run(x0, p, assess, time_limit=left, max_iterations=budget)
        out = self._polish_stopped(out, p, assess, None if limit is None else t0 + limit)
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
        """An LPEC's run that its iteration budget stopped: the polish from its best point.

        A run stopped by its budget (:attr:`HomotopyOutcome.budget_spent`) ends without the
        polish its last point would have had. On an LPEC the polish is an LP, or a MILP over the
        doubtful pairs (:meth:`Polisher.polish`), and is bounded by the time left of the whole
        call; other problems' polishes are IPOPT runs and wait for the next reformulation.
        """
        opts = self.options
        if (
            not out.budget_spent
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
    :func:`~mcpkit.orchestration.planner.select_inner` for the ``ipopt=`` choices of backend ``pyomo``);
    ``second_opinion`` names the reformulation run after a converged one and ``fallbacks`` those
    run after a failed one (the class docstring; both chosen by
    :func:`mcpkit.orchestration.planner.recovery_plan`).
    """
    return RecoveringHomotopy(mpcc, method, options, inner, second_opinion, fallbacks)
