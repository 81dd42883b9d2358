"""The iteration caps of :mod:`mcpkit.homotopy.loop` on large problems, and the time-limit note.

No IPOPT runs: a scripted :class:`~mcpkit.homotopy.inner.InnerSolver` stands in for it, so the
iteration counts, statuses and the clock are the test's. The toy MPCC is

.. math::

    \\min (x_1 - 2)^2 + (x_2 - 1)^2 \\quad\\text{s.t.}\\quad x_1 + x_2 = 1,\\ 0 \\le x_1 \\perp x_2 \\ge 0,

solved at :math:`x = (1, 0)`, :math:`f = 2`. The scripted relaxation at :math:`\\sigma` returns
the path point :math:`(1 - \\sigma/2, \\sigma/2)` (complementarity residual :math:`\\sigma/2`);
:data:`~mcpkit.homotopy.loop.POLISH_CAP_ABOVE_VARS` is set to 0 so that the caps of large
problems apply to it.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import casadi as ca
import numpy as np
import pytest

from mcpkit.homotopy import loop, recovery
from mcpkit.homotopy.inner import InnerCall, InnerResult, InnerSettings, InnerSolver
from mcpkit.homotopy.loop import Assessment, HomotopyOutcome, HomotopySolver
from mcpkit.homotopy.reformulation import NLPTemplate, reformulation_for
from mcpkit.mpcc import MPCC, solve_mpcc
from mcpkit.solving.options import SolveOptions
from mcpkit.solving.result import Termination

COLD_ITERATIONS = 10
"""Iterations of the cold subproblem at sigma0 = 1."""
FIRST_WARM_ITERATIONS = 500
"""Iterations of a warm subproblem started from the sigma0 point: 50x the cold one, more than
``RELAX_ITER_GROWTH`` (10x) times it, as the first warm step of a long horizon can need."""
WARM_ITERATIONS = 20
"""Iterations of every later warm subproblem."""


def _toy() -> MPCC:
    x = ca.SX.sym("x", 2)
    return MPCC.from_casadi(
        x, x[0], x[1], f=(x[0] - 2) ** 2 + (x[1] - 1) ** 2, g=x[0] + x[1], lbg=1.0, ubg=1.0, x0=[5.0, 5.0]
    )


def _on_path(sigma: float) -> np.ndarray:
    return np.array([1.0 - sigma / 2, sigma / 2])


def _assess(x: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, Assessment]:
    x = np.asarray(x, dtype=float)[:2]
    return x, Assessment(float(abs(min(x[0], x[1]))), float(abs(x[0] + x[1] - 1.0)))


class _Scripted(InnerSolver):
    """A relaxation or polish "solved" by script; each call is logged as ``(kind, sigma, cap, status)``.

    A call whose scripted iterations exceed its cap stops as the CasADi inner solver does at its
    cap: status ``Maximum_Iterations_Exceeded`` and, as IPOPT reports after restoration
    iterations, an iteration count *below* the cap.
    """

    def __init__(self, nlp: NLPTemplate, settings: InnerSettings, world: SimpleNamespace) -> None:
        self.nx, self.ng = int(nlp.x.numel()), int(nlp.g.numel())
        self.polish = settings.name.endswith("_polish")
        self.warm = settings.warm
        self.world = world

    def _needed(self, call: InnerCall, sigma: float) -> tuple[int, np.ndarray]:
        w = self.world
        if self.polish:
            # capped: the polish would stop at the feasible, complementary point (0, 1), f = 4
            return (w.polish_iterations, np.array([1.0, 0.0])) if call.max_iter is None else (
                10**6, np.array([0.0, 1.0])
            )  # fmt: skip
        if not self.warm:
            return COLD_ITERATIONS, _on_path(sigma)
        if any(math.isclose(sigma, r) for r in w.runaway):
            return 10**6, _on_path(sigma)
        from_cold = np.allclose(call.x0[:2], _on_path(1.0))
        return (FIRST_WARM_ITERATIONS if from_cold else WARM_ITERATIONS), _on_path(sigma)

    def _run(self, call: InnerCall) -> InnerResult:
        sigma = float(call.q[-1])
        need, x = self._needed(call, sigma)
        self.world.clock += 1.0  # one "second" per call (the loop's clock is the world's)
        status, its = "Solve_Succeeded", need
        if self.polish and call.deadline is not None and self.world.clock > call.deadline:
            # stopped by its deadline at a feasible, complementary point that is no branch solution
            status, its, x = "User_Requested_Stop", 3, np.array([0.0, 1.0])
        elif call.max_iter is not None and need > call.max_iter:
            status, its = "Maximum_Iterations_Exceeded", call.max_iter - 1
            if not self.polish:
                x = 0.5 * (np.asarray(call.x0[:2]) + x)  # a mid-iterate
        self.world.log.append(("polish" if self.polish else "relax", sigma, call.max_iter, status))
        f = float((x[0] - 2) ** 2 + (x[1] - 1) ** 2)
        return InnerResult(np.asarray(x, float), np.zeros(self.nx), np.zeros(self.ng), f, status, its, 0.0)


def _solver(monkeypatch: pytest.MonkeyPatch, **world: Any) -> tuple[HomotopySolver, SimpleNamespace]:
    w = SimpleNamespace(log=[], clock=0.0, runaway=set(), polish_iterations=5)
    vars(w).update(world)

    def factory(nlp: NLPTemplate, settings: InnerSettings) -> _Scripted:
        return _Scripted(nlp, settings, w)

    factory.description = "scripted"  # type: ignore[attr-defined]
    monkeypatch.setattr(loop, "POLISH_CAP_ABOVE_VARS", 0)
    monkeypatch.setattr(loop, "time", SimpleNamespace(perf_counter=lambda: w.clock))
    opts = SolveOptions(tol=1e-6, fallback_methods=(), polish=bool(world.get("polish", False)))
    return HomotopySolver(_toy(), reformulation_for("scholtes"), opts, factory), w


def _run(solver: HomotopySolver, **kw: Any) -> HomotopyOutcome:
    return solver.run(np.array([5.0, 5.0]), np.zeros(0), _assess, **kw)


def test_a_first_warm_step_far_above_the_growth_cap_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first warm subproblem may take many times the cold one's iterations (the long step
    from sigma0); it is not capped, so the homotopy keeps it and reaches the tolerance. Capped at
    ``RELAX_ITER_GROWTH`` times the cold step, it failed, and every retry from the cold point
    failed the same way (the run ended unsolved)."""
    solver, w = _solver(monkeypatch)
    out = _run(solver)
    relax = [s for s in out.trace if s.phase == "relax"]
    assert out.termination is Termination.CONVERGED and out.assessment.meets(1e-6)
    first = [COLD_ITERATIONS, FIRST_WARM_ITERATIONS, WARM_ITERATIONS]
    assert [s.inner_iterations for s in relax[:3]] == first
    assert all(s.inner_status == "Solve_Succeeded" for s in relax)
    caps = [cap for kind, _, cap, _ in w.log if kind == "relax"]
    growth = loop.RELAX_ITER_GROWTH
    # cold and first warm uncapped; then the growth rule on the last warm step
    assert caps[:2] == [None, None]
    assert caps[2] == max(loop.RELAX_MIN_ITER, growth * FIRST_WARM_ITERATIONS)
    assert all(c == max(loop.RELAX_MIN_ITER, growth * WARM_ITERATIONS) for c in caps[3:])
    assert out.last_parameter == relax[-1].parameter


def test_a_late_runaway_is_still_capped_and_the_homotopy_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """A warm subproblem that runs away after short warm steps (the block horizon's 3,000
    iterations at sigma = 1e-7 after steps of 10) stops at its cap, counts as a failed step with
    status ``Maximum_Iterations_Exceeded``, and the homotopy goes on from its last good point."""
    solver, w = _solver(monkeypatch, runaway={1e-3})
    out = _run(solver)
    capped = [s for s in out.trace if s.inner_status == "Maximum_Iterations_Exceeded"]
    assert [s.parameter for s in capped] == [pytest.approx(1e-3)]
    cap = max(loop.RELAX_MIN_ITER, loop.RELAX_ITER_GROWTH * WARM_ITERATIONS)
    assert capped[0].inner_iterations == cap - 1
    assert out.termination is Termination.CONVERGED and out.assessment.meets(1e-6)


def test_a_polish_stopped_at_its_cap_is_not_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """A polish the cap stopped reports ``Maximum_Iterations_Exceeded`` with an iteration count
    that may end below the cap; its point (here feasible and complementary, f = 4) is not taken,
    and the run ends at the homotopy's point, f = 2. Judged by ``iterations >= cap`` it was
    taken as a solution."""
    solver, w = _solver(monkeypatch, polish=True)
    out = _run(solver)
    polishes = [entry for entry in w.log if entry[0] == "polish"]
    assert polishes and polishes[0][2] is not None and polishes[0][3] == "Maximum_Iterations_Exceeded"
    assert out.termination is Termination.CONVERGED and out.x is not None
    assert out.x[0] == pytest.approx(1.0, abs=1e-5) and out.x[1] == pytest.approx(0.0, abs=1e-5)


def test_a_capped_polish_point_is_returned_only_when_the_time_limit_cuts_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The capped polish's feasible, complementary point (0, 1) is not taken while the homotopy
    goes on; when the time limit cuts the run (after one more subproblem) before any point meets
    the tolerance, it is returned, with ``TIME_LIMIT`` and a note naming sigma = 0.001."""
    solver, w = _solver(monkeypatch, polish=True)
    out = _run(solver, time_limit=4.5)  # k = 0, 1, 2, the capped polish, k = 3, then the limit
    assert [e[3] for e in w.log if e[0] == "polish"] == ["Maximum_Iterations_Exceeded"]
    assert out.termination is Termination.TIME_LIMIT and out.x is not None
    np.testing.assert_allclose(out.x, [0.0, 1.0])
    assert out.assessment.meets(1e-6)
    assert "cut at sigma = 0.001" in out.cut_note(solved=True)


def test_a_run_cut_by_the_time_limit_names_its_last_sigma(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the (scripted) clock past the limit after four subproblems, the run ends with
    ``TIME_LIMIT``; the outcome names the last sigma and the target, and its note says that the
    point is not a converged plan."""
    solver, _ = _solver(monkeypatch)
    out = _run(solver, time_limit=3.5)
    relax = [s for s in out.trace if s.phase == "relax"]
    assert out.termination is Termination.TIME_LIMIT
    assert [s.parameter for s in relax] == pytest.approx([1.0, 0.1, 0.01, 1e-3])
    assert out.last_parameter == pytest.approx(1e-3)
    assert out.target_parameter == solver.options.sigma_min
    note = out.cut_note(solved=False)
    assert note.startswith("time limit: the homotopy was cut at sigma = 0.001 before its target 1e-14")
    assert note.endswith("the point is the best found, not a converged plan")
    assert "feasible and complementary but not a converged plan" in out.cut_note(solved=True)
    # a run that finished says nothing
    done, _ = _solver(monkeypatch)
    assert _run(done).cut_note(solved=True) == ""


def test_a_polish_stopped_by_the_deadline_is_no_converged_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    """A polish that the deadline stops at a feasible, complementary point (f = 4, not the
    branch's solution) may leave that point as the best so far, but the run ends with
    ``TIME_LIMIT``, not ``CONVERGED``, and its note says the plan was cut short at sigma = 0.01.
    Ending "converged" there returned such points as solved plans."""
    solver, w = _solver(monkeypatch, polish=True)
    out = _run(solver, time_limit=3.5)  # three subproblems, then the polish passes the deadline
    polishes = [entry for entry in w.log if entry[0] == "polish"]
    assert [entry[3] for entry in polishes] == ["User_Requested_Stop"]
    assert out.termination is Termination.TIME_LIMIT
    assert out.assessment.meets(1e-6)  # the point is feasible and complementary ...
    assert out.last_parameter == pytest.approx(0.01)
    note = out.cut_note(solved=True)  # ... and the note says it is not a converged plan
    assert "cut at sigma = 0.01 before its target 1e-14" in note and "not a converged plan" in note


@pytest.mark.parametrize(
    ("termination", "last", "target", "says"),
    [
        (Termination.TIME_LIMIT, 1e-3, 1e-8, True),
        (Termination.TIME_LIMIT, 1e-8, 1e-8, False),  # the target was reached
        (Termination.TIME_LIMIT, math.nan, 1e-8, False),  # no subproblem ran
        (Termination.TIME_LIMIT, 100.0, None, True),  # a penalty: no target, still cut
        (Termination.ITERATION_LIMIT, 1e-3, 1e-8, False),
        (Termination.CONVERGED, 1e-3, 1e-8, False),
    ],
)
def test_cut_note_only_for_a_homotopy_cut_short_by_the_time_limit(
    termination: Termination, last: float, target: float | None, says: bool
) -> None:
    out = HomotopyOutcome(
        np.zeros(2), Assessment(0.0, 0.0), termination, "", 0, last_parameter=last, target_parameter=target
    )
    assert bool(out.cut_note(solved=True)) is says


def test_the_mpcc_result_message_carries_the_note(monkeypatch: pytest.MonkeyPatch) -> None:
    """:func:`mcpkit.mpcc.solve_mpcc` adds the note to the message; the termination stays
    ``time_limit`` and ``solved`` is the residual check's (here the point is the solution)."""

    def cut(self: Any, x0: np.ndarray, p: np.ndarray, assess: Any, **_: Any) -> HomotopyOutcome:
        x, a = assess(np.array([1.0, 0.0]), p)
        return HomotopyOutcome(
            x, a, Termination.TIME_LIMIT, "", 7, reformulation="scholtes",
            last_parameter=1e-3, target_parameter=1e-8,
        )  # fmt: skip

    monkeypatch.setattr(recovery.RecoveringHomotopy, "run", cut)
    res = solve_mpcc(_toy(), "scholtes", "casadi", refine=False, stationarity=False, time_limit=10.0)
    assert res.termination is Termination.TIME_LIMIT and res.solved
    assert (
        "time limit: the homotopy was cut at sigma = 0.001 before its target 1e-08; "
        "the point is feasible and complementary but not a converged plan"
    ) in res.message


def test_a_converged_fallback_beats_a_cut_primary_of_lower_residual() -> None:
    """A primary cut by its iteration budget may hold a feasible, complementary point (a capped
    polish's) of lower residual than a fallback's converged one; the converged run is kept."""
    from mcpkit.homotopy.recovery import RecoveringHomotopy

    class _Fixed:
        def __init__(self, termination: Termination, residual: float, name: str) -> None:
            self.termination, self.residual, self.name = termination, residual, name

        def run(self, x0: np.ndarray, p: np.ndarray, assess: Any, **_: Any) -> HomotopyOutcome:
            a = Assessment(self.residual, 0.0)
            return HomotopyOutcome(np.asarray(x0, float), a, self.termination, "", 0, reformulation=self.name)

    opts = SolveOptions(tol=1e-6, time_limit=1e6, fallback_methods=("fb",))
    rec = RecoveringHomotopy(_toy(), "scholtes", opts, fallbacks=("fb",))
    template = rec.primary.template
    rec.primary = _Fixed(Termination.ITERATION_LIMIT, 1e-9, "scholtes")  # type: ignore[assignment]
    rec._fallbacks = {"fb": _Fixed(Termination.CONVERGED, 1e-7, "fb")}  # type: ignore[dict-item]
    for r in (rec.primary, rec._fallbacks["fb"]):
        r.template = template  # type: ignore[union-attr]
    out = rec.run(np.zeros(2), np.zeros(0), _assess)
    assert out.termination is Termination.CONVERGED and out.reformulation == "fb"
