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

from mcpkit.homotopy.inner import CasadiInner, InnerFactory
from mcpkit.homotopy.loop import Assessor, HomotopyOutcome, HomotopySolver, Polisher, equality_count
from mcpkit.homotopy.lp_inner import affine_in
from mcpkit.homotopy.reformulation import Reformulation, reformulation_for
from mcpkit.problems.mpcc import MPCC
from mcpkit.solving.options import SolveOptions
from mcpkit.solving.result import HomotopyStep, Termination

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
        m = self.mpcc
        return affine_in(m.x, m.f, m.g, m.G, m.H)

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
    :func:`mcpkit.orchestration.planner.recovery_plan`).
    """
    return RecoveringHomotopy(mpcc, method, options, inner, second_opinion, fallbacks)
