"""The second opinion of :class:`~mcpkit.homotopy.recovery.RecoveringHomotopy` and
``method="auto"`` on LPECs (Fischer-Burmeister first, Scholtes as the second opinion).

The rule: after a converged run, one run of the second reformulation within an iteration budget
(``max(SECOND_OPINION_MIN_ITER, SECOND_OPINION_ITER_FACTOR * iterations so far)``), bounded by the
clock only through the caller's time limit; its point is kept only when it meets the tolerance and
lowers the objective.
"""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

from mcpkit.homotopy.loop import Assessment, HomotopyOutcome
from mcpkit.homotopy.recovery import (
    SECOND_OPINION_ITER_FACTOR,
    SECOND_OPINION_MIN_ITER,
    RecoveringHomotopy,
)
from mcpkit.mpcc import MPCC, MPCCSolver, load_mpcc_json, solve_mpcc
from mcpkit.orchestration.planner import SECOND_OPINION_MAX_VARS, recovery_plan
from mcpkit.solving.options import SolveOptions
from mcpkit.solving.result import HomotopyStep, Termination
from tests.conftest import SHARED_DATA

pytestmark = pytest.mark.solver

BILIN = SHARED_DATA / "macmpec-dev" / "bilin.nl.json"


def _mpcc() -> MPCC:
    """min x0 + 2 x1 s.t. x0 + x1 = 1, 0 <= x0 _|_ x1 >= 0 (an LPEC): (1, 0) with f = 1 and
    (0, 1) with f = 2 are its two local minimisers."""
    x = ca.SX.sym("x", 2)
    return MPCC.from_casadi(
        x, x[0], x[1], f=x[0] + 2 * x[1], g=x[0] + x[1], lbg=1.0, ubg=1.0, lbx=0.0, ubx=5.0, x0=[0.5, 0.5]
    )


def _assess(x: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, Assessment]:
    return x, Assessment(float(abs(min(x[0], x[1]))), float(abs(x[0] + x[1] - 1)))


class _Fake:
    """A run that returns a given point and records the budget it was given."""

    def __init__(self, real: object, x: list[float] | None, termination: Termination, name: str) -> None:
        self.template = real.template  # type: ignore[attr-defined]
        self.x = None if x is None else np.array(x, dtype=float)
        self.termination = termination
        self.name = name
        self.limits: list[float | None] = []
        self.budgets: list[int | None] = []
        self.iterations = 1

    def run(
        self, x0: np.ndarray, p: np.ndarray, assess, *, time_limit=None, max_iterations=None, **_: object
    ) -> HomotopyOutcome:
        self.limits.append(time_limit)
        self.budgets.append(max_iterations)
        a = Assessment(np.inf, np.inf) if self.x is None else assess(self.x, p)[1]
        step = HomotopyStep(0, 1.0, a.residual, "fake", 1, 0.0)
        return HomotopyOutcome(
            self.x, a, self.termination, "fake", self.iterations, [step], reformulation=self.name
        )


def _homotopy(first: _Fake | None = None, second: _Fake | None = None, **opts: object) -> RecoveringHomotopy:
    options = SolveOptions(tol=1e-8, **opts)
    plan = recovery_plan("fb", 2, options, "scholtes")
    h = RecoveringHomotopy(
        _mpcc(), "fb", options, second_opinion=plan.second_opinion, fallbacks=plan.fallbacks
    )
    if first is not None:
        h.primary = first  # type: ignore[assignment]
    if second is not None:
        h._fallbacks["scholtes"] = second  # type: ignore[assignment]
    return h


def _fakes(
    x1: list[float] | None, t1: Termination, x2: list[float] | None, t2: Termination
) -> tuple[_Fake, _Fake]:
    h = RecoveringHomotopy(_mpcc(), "fb", SolveOptions(), second_opinion="scholtes")
    return _Fake(h.primary, x1, t1, "fb"), _Fake(h._fallback("scholtes"), x2, t2, "scholtes")


def test_a_lower_second_opinion_replaces_the_first_point() -> None:
    first, second = _fakes([0.0, 1.0], Termination.CONVERGED, [1.0, 0.0], Termination.CONVERGED)
    out = _homotopy(first, second).run(np.array([0.5, 0.5]), np.zeros(0), _assess)
    np.testing.assert_array_equal(out.x, [1.0, 0.0])
    assert out.reformulation == "scholtes" and out.termination is Termination.CONVERGED
    assert [s.phase for s in out.trace] == ["relax", "second:scholtes"]
    assert out.iterations == 2


@pytest.mark.parametrize(
    ("x2", "t2"),
    [
        ([0.0, 1.0], Termination.CONVERGED),  # the same objective: no change
        ([1.0, 0.0], Termination.TIME_LIMIT),  # lower but not converged
        ([1.5, 0.0], Termination.CONVERGED),  # "converged" but misses the tolerance (x0 + x1 = 1.5)
        (None, Termination.LOCALLY_INFEASIBLE),
    ],
)
def test_the_first_point_stays_unless_the_second_is_a_lower_solution(
    x2: list[float] | None, t2: Termination
) -> None:
    first, second = _fakes([0.0, 1.0], Termination.CONVERGED, x2, t2)
    out = _homotopy(first, second).run(np.array([0.5, 0.5]), np.zeros(0), _assess)
    np.testing.assert_array_equal(out.x, [0.0, 1.0])
    assert out.reformulation == "fb"
    assert [s.phase for s in out.trace] == ["relax", "second:scholtes"]


def test_no_second_opinion_after_a_warm_start() -> None:
    first, second = _fakes([0.0, 1.0], Termination.CONVERGED, [1.0, 0.0], Termination.CONVERGED)
    out = _homotopy(first, second).run(np.array([0.0, 1.0]), np.zeros(0), _assess, warm_start=True)
    assert second.limits == [] and out.reformulation == "fb"


def test_no_second_opinion_after_a_failed_run() -> None:
    first, second = _fakes([0.2, 0.2], Termination.LOCALLY_INFEASIBLE, [1.0, 0.0], Termination.CONVERGED)
    h = _homotopy(first, second, fallback_methods=())
    out = h.run(np.array([0.5, 0.5]), np.zeros(0), _assess)
    assert second.limits == [] and out.termination is Termination.LOCALLY_INFEASIBLE


def test_no_second_opinion_when_its_reformulation_ran_as_a_fallback() -> None:
    """The primary fails, the fallback ``scholtes`` solves from the same start: running
    ``scholtes`` again as the second opinion would repeat that run."""
    first, second = _fakes([0.2, 0.2], Termination.LOCALLY_INFEASIBLE, [1.0, 0.0], Termination.CONVERGED)
    h = _homotopy(first, second, fallback_methods=("scholtes",))
    out = h.run(np.array([0.5, 0.5]), np.zeros(0), _assess)
    assert len(second.limits) == 1  # once, as the fallback
    assert out.termination is Termination.CONVERGED and out.reformulation == "scholtes"
    assert not any(s.phase.startswith("second:") for s in out.trace)


def test_the_second_opinion_budget() -> None:
    """An iteration budget (machine-independent); a time limit bounds it only by the time left."""
    first, second = _fakes([0.0, 1.0], Termination.CONVERGED, [1.0, 0.0], Termination.CONVERGED)
    _homotopy(first, second).run(np.array([0.5, 0.5]), np.zeros(0), _assess)
    assert second.limits[0] is None and second.budgets[0] == SECOND_OPINION_MIN_ITER
    first, second = _fakes([0.0, 1.0], Termination.CONVERGED, [1.0, 0.0], Termination.CONVERGED)
    first.iterations = 1000  # a long first run: the budget grows with it
    _homotopy(first, second).run(np.array([0.5, 0.5]), np.zeros(0), _assess)
    assert second.budgets[0] == SECOND_OPINION_ITER_FACTOR * 1000
    first, second = _fakes([0.0, 1.0], Termination.CONVERGED, [1.0, 0.0], Termination.CONVERGED)
    _homotopy(first, second).run(np.array([0.5, 0.5]), np.zeros(0), _assess, time_limit=2.0)
    assert 0 < second.limits[0] <= 2.0  # the time left of the caller's limit, no share of it
    assert second.budgets[0] == SECOND_OPINION_MIN_ITER  # the same budget with a time limit


def test_an_iteration_budget_stops_a_homotopy_between_subproblems() -> None:
    """max_iterations: no subproblem starts once the budget is spent (ITERATION_LIMIT, and it says so)."""
    from mcpkit.homotopy.recovery import make_homotopy

    x = ca.SX.sym("x", 2)  # min (x0-1)^2 + (x1-1)^2, 0 <= x0 _|_ x1 >= 0: sigma must go down
    m = MPCC.from_casadi(x, x[0], x[1], f=(x[0] - 1) ** 2 + (x[1] - 1) ** 2, x0=[0.5, 0.5])
    h = make_homotopy(m, "scholtes", SolveOptions(tol=1e-10, polish=False))

    def assess(x: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, Assessment]:
        return x, Assessment(*m.residuals(x, p)[:2])

    full = h.primary.run(m.x0, m.p0, assess)
    assert len(full.trace) >= 2
    cut = h.primary.run(m.x0, m.p0, assess, max_iterations=1)
    assert cut.termination is Termination.ITERATION_LIMIT and "iteration budget" in cut.raw_status
    assert len(cut.trace) == 1 and cut.iterations == full.trace[0].inner_iterations


def test_registry_auto_on_an_lpec_and_explicit_methods() -> None:
    from mcpkit.orchestration.planner import resolve

    r = resolve("mpcc", "auto", "auto", lpec=True)
    assert (r.method, r.second_opinion) == ("fb", "scholtes") and "LPEC" in r.note
    r = resolve("mpcc", "auto", "auto")
    assert (r.method, r.second_opinion) == ("scholtes", "fb") and "LPEC" not in r.note
    explicit = resolve("mpcc", "scholtes", "auto", lpec=True)
    assert (explicit.method, explicit.second_opinion, explicit.note) == ("scholtes", None, "")


@pytest.mark.parametrize("backend", ["casadi", "pyomo"])
def test_auto_on_an_lpec_runs_fb_then_the_second_opinion(backend: str) -> None:
    solver = MPCCSolver(_mpcc(), "auto", backend, tol=1e-8)
    assert solver.method == "fb" and solver.route.second_opinion == "scholtes"
    res = solver.solve()
    assert res.solved
    assert any(s.phase == "second:scholtes" for s in res.trace)
    assert "second opinion" in res.message
    # whichever run found it, the kept point is at least as good as each run alone
    alone = [solve_mpcc(_mpcc(), m, backend, tol=1e-8, refine=False).f for m in ("fb", "scholtes")]
    assert res.f <= min(alone) + 1e-8


def test_explicit_methods_get_no_second_opinion() -> None:
    res = MPCCSolver(_mpcc(), "scholtes", "casadi", tol=1e-8).solve()
    assert not any(s.phase.startswith("second:") for s in res.trace)
    solver = MPCCSolver(MPCC.from_casadi(*_nonlinear()), "auto")
    assert (solver.method, solver.route.second_opinion) == ("scholtes", "fb")


def _nonlinear() -> tuple[ca.SX, ca.SX, ca.SX]:
    x = ca.SX.sym("x", 2)
    return x, x[0] ** 2, x[1]


@pytest.mark.skipif(not BILIN.is_file(), reason="macmpec-dev set not present")
def test_macmpec_bilin_keeps_the_lower_of_the_two_pieces() -> None:
    """MacMPEC bilin: fb alone ends at f = -16, Scholtes at -18.4 (the collection's best known);
    auto runs fb and keeps Scholtes's point."""
    prob = load_mpcc_json(BILIN)
    opts = {"time_limit": 60.0, "tol": 1e-6}
    alone = {m: solve_mpcc(prob, m, "casadi", **opts) for m in ("fb", "scholtes")}
    auto = solve_mpcc(prob, "auto", "casadi", **opts)
    assert auto.solved and all(r.solved for r in alone.values())
    assert auto.f <= min(r.f for r in alone.values()) + 1e-6 * max(1.0, abs(auto.f))
    assert auto.f == pytest.approx(-18.4, abs=1e-5)


FINDC10S = SHARED_DATA / "mpeclib" / "findc10s.nl.json"


@pytest.mark.skipif(not FINDC10S.is_file(), reason="mpeclib set not present")
def test_mpeclib_findc10s_keeps_the_fit_of_the_second_opinion() -> None:
    """MPECLib findc10s (not an LPEC): Scholtes alone ends at f = 0.298, Fischer-Burmeister at
    f ~ 1e-7; auto runs Scholtes, then fb as the second opinion, and keeps fb's point.

    No time limit: with one, the second opinion runs in a share of it and on a loaded machine
    did not finish there (auto kept f = 0.339); without one the outcome depends on iteration
    caps only, not on the machine's speed."""
    prob = load_mpcc_json(FINDC10S)
    opts = {"tol": 1e-6}
    alone = {m: solve_mpcc(prob, m, "casadi", **opts) for m in ("scholtes", "fb")}
    auto = solve_mpcc(prob, "auto", "casadi", **opts)
    assert auto.solved and all(r.solved for r in alone.values())
    lower = min(alone, key=lambda m: alone[m].f)
    assert auto.f <= alone[lower].f + 1e-6 * max(1.0, abs(alone[lower].f))
    assert any(s.phase == "second:fb" for s in auto.trace)
    if alone["fb"].f < alone["scholtes"].f - 1e-6:
        assert auto.extra["reformulation"] == "fb"


def test_the_planner_skips_the_second_opinion_of_a_feasibility_problem() -> None:
    """A constant objective (every feasible point is as good as any other) gets no second opinion,
    and the result says why; a non-constant one of the same size gets it."""
    x = ca.SX.sym("x", 2)
    feas = MPCC.from_casadi(x, x[0], x[1], f=ca.SX(0), g=x[0] + x[1], lbg=1.0, ubg=1.0, lbx=0.0, ubx=5.0)
    solver = MPCCSolver(feas, "auto")
    assert solver.recovery.second_opinion is None
    assert "objective is constant" in solver.recovery.skipped
    res = solver.solve()
    assert res.solved and "objective is constant" in res.message
    assert not any(step.phase.startswith("second:") for step in res.trace)
    assert MPCCSolver(_mpcc(), "auto").recovery.second_opinion is not None


def test_recovery_plan_rules() -> None:
    opts = SolveOptions(fallback_methods=("scholtes_eq", "fb", "penalty"))
    assert recovery_plan("fb", 10, opts, "scholtes").fallbacks == ("scholtes_eq", "penalty")
    assert recovery_plan("fb", 10, opts, "scholtes").second_opinion == "scholtes"
    assert recovery_plan("fb", 10, opts, "fb").second_opinion is None
    big = recovery_plan("fb", SECOND_OPINION_MAX_VARS + 1, opts, "scholtes")
    assert big.second_opinion is None and str(SECOND_OPINION_MAX_VARS) in big.skipped
    assert recovery_plan("fb", 10, opts, "scholtes", constant_objective=True).second_opinion is None
