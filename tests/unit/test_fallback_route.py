"""The auto chain's logic on stand-in routes (no solver runs): order, verdict, time, reporting."""

from __future__ import annotations

import numpy as np
import pytest

from mcpkit import MCP
from mcpkit.errors import MCPInputError, SolverNotAvailableError
from mcpkit.orchestration import planner
from mcpkit.orchestration.planner import FallbackRoute
from mcpkit.solving.options import Budget, SolveOptions
from mcpkit.solving.result import HomotopyStep, Termination
from mcpkit.solving.route import RouteOutcome

#: 0 <= z perp F = z - 1: the solution is z = 1.
PROBLEM = MCP.lcp([[1.0]], [-1.0])


class Stub:
    """A route that returns a fixed point and records the budgets and options it saw."""

    def __init__(self, method: str, z: float | None, term: Termination, claim_F: float | None = None) -> None:
        self.method, self.backend, self.z, self.term, self.claim_F = method, "casadi", z, term, claim_F
        self.options = SolveOptions()
        self.seen: list[Budget | None] = []
        self.seen_options: list[SolveOptions] = []

    def solve(self, p: np.ndarray, z0: np.ndarray, warm: bool, budget: Budget | None = None) -> RouteOutcome:
        self.seen.append(budget)
        self.seen_options.append(self.options)
        z = None if self.z is None else np.array([self.z])
        F = None if self.claim_F is None else np.array([self.claim_F])
        step = HomotopyStep(0, 0.0, 0.0, "stub", 2, 0.0, self.method)
        return RouteOutcome(z, self.term, f"{self.method} says {self.term.value}", 2, [step], {}, F)


def chain(monkeypatch: pytest.MonkeyPatch, stubs: dict[str, object], options: SolveOptions) -> FallbackRoute:
    def build(problem: MCP, route: planner.Route, opts: SolveOptions, ipopt: str = "auto") -> object:
        made = stubs[route.method]
        if isinstance(made, Exception):
            raise made
        return made

    monkeypatch.setattr(planner, "build_mcp_route", build)
    routes = [planner.Route("mcp", m, "casadi") for m in stubs]
    return FallbackRoute(PROBLEM, routes, options)


def test_a_claimed_convergence_is_checked_on_the_declaration(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first route says CONVERGED at z = 0.5 (residual 0.5): not accepted; the next one is."""
    stubs = {
        "newton": Stub("newton", 0.5, Termination.CONVERGED),
        "scholtes": Stub("scholtes", 1.0, Termination.CONVERGED),
    }
    out = chain(monkeypatch, stubs, SolveOptions()).solve(np.zeros(0), np.zeros(1), False)
    assert out.method == "scholtes" and out.termination is Termination.CONVERGED
    assert [a["natural_residual"] for a in out.extra["attempts"]] == [0.5, 0.0]
    assert out.iterations == 4 and [s.phase for s in out.trace] == ["newton", "scholtes"]


def test_a_wrong_F_from_a_route_is_not_trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    """A route's F is used only at exactly its z; the point is clipped to the box first."""
    stubs = {"newton": Stub("newton", -1.0, Termination.CONVERGED, claim_F=0.0)}
    route = chain(
        monkeypatch, {**stubs, "lemke": Stub("lemke", None, Termination.NUMERICAL_ERROR)}, SolveOptions()
    )
    out = route.solve(np.zeros(0), np.zeros(1), False)
    # z = -1 clipped to 0, F(0) = -1 evaluated from the declaration: residual 1, not accepted
    assert out.extra["attempts"][0]["natural_residual"] == 1.0
    assert (
        out.method == "newton" and out.termination is Termination.NUMERICAL_ERROR
    )  # why it stopped: the last


def test_best_point_and_last_termination_when_all_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    stubs = {
        "newton": Stub("newton", 0.9, Termination.STALLED),
        "lemke": MCPInputError("not affine"),
        "scholtes": Stub("scholtes", 3.0, Termination.LOCALLY_INFEASIBLE),
    }
    out = chain(monkeypatch, stubs, SolveOptions()).solve(np.zeros(0), np.zeros(1), False)
    assert out.method == "newton" and out.z is not None and out.z[0] == 0.9
    assert out.termination is Termination.LOCALLY_INFEASIBLE
    assert out.extra["attempts"][1] == {"method": "lemke", "skipped": "MCPInputError: not affine"}


def test_later_routes_get_what_is_left_of_the_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every attempt gets the chain's one budget (the options' 50 s from the start of the call),
    and no route's options change."""
    first, later = Stub("newton", 0.0, Termination.STALLED), Stub("scholtes", 1.0, Termination.CONVERGED)
    kept = later.options
    chain(monkeypatch, {"newton": first, "scholtes": later}, SolveOptions(time_limit=50.0)).solve(
        np.zeros(0), np.zeros(1), False
    )
    budget = later.seen[0]
    assert budget is not None and budget is first.seen[0] and budget.time_limit == 50.0
    left = budget.remaining()
    assert left is not None and 0 < left <= 50.0
    assert later.seen_options == [kept] and later.options is kept and kept.time_limit is None


def test_time_limit_and_unavailable_solvers(monkeypatch: pytest.MonkeyPatch) -> None:
    stubs = {
        "newton": Stub("newton", 0.0, Termination.TIME_LIMIT),
        "scholtes": Stub("scholtes", 1.0, Termination.CONVERGED),
    }
    out = chain(monkeypatch, stubs, SolveOptions()).solve(np.zeros(0), np.zeros(1), False)
    assert out.termination is Termination.TIME_LIMIT and len(out.extra["attempts"]) == 1

    class Refusing(Stub):
        def solve(
            self, p: np.ndarray, z0: np.ndarray, warm: bool, budget: Budget | None = None
        ) -> RouteOutcome:
            raise SolverNotAvailableError("demo licence: too large")

    stubs = {
        "path": Refusing("path", None, Termination.SOLVER_ERROR),
        "newton": Stub("newton", 1.0, Termination.CONVERGED),
    }
    out = chain(monkeypatch, stubs, SolveOptions()).solve(np.zeros(0), np.zeros(1), False)
    assert out.method == "newton" and "too large" in out.extra["attempts"][0]["skipped"]
    stubs = {"path": SolverNotAvailableError("expired"), "newton": SolverNotAvailableError("x")}
    out = chain(monkeypatch, stubs, SolveOptions()).solve(np.zeros(0), np.zeros(1), False)
    assert out.z is None and out.termination is Termination.SOLVER_ERROR and "expired" in out.raw_status


def test_the_first_routes_input_error_is_raised_later_ones_are_skipped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A typed input error of the first method is the user's to see (as for that method by name);
    the same error from a later method only means that method does not apply."""
    stubs = {
        "newton": MCPInputError("constant row with no solution"),
        "scholtes": Stub("scholtes", 1.0, Termination.CONVERGED),
    }
    with pytest.raises(MCPInputError, match="constant row"):
        chain(monkeypatch, stubs, SolveOptions())
    stubs = {
        "path": MCPInputError("GAMSPy cannot state erf"),
        "newton": Stub("newton", 1.0, Termination.CONVERGED),
    }
    out = chain(monkeypatch, stubs, SolveOptions()).solve(np.zeros(0), np.zeros(1), False)
    assert out.method == "newton" and "erf" in out.extra["attempts"][0]["skipped"]  # PATH's own limits
    stubs = {"newton": Stub("newton", 0.5, Termination.STALLED), "lemke": MCPInputError("not affine")}
    out = chain(monkeypatch, stubs, SolveOptions()).solve(np.zeros(0), np.zeros(1), False)
    assert out.extra["attempts"][1]["skipped"] == "MCPInputError: not affine"


def test_an_interrupt_keeps_the_attempts_so_far(monkeypatch: pytest.MonkeyPatch) -> None:
    class Interrupted(Stub):
        def solve(
            self, p: np.ndarray, z0: np.ndarray, warm: bool, budget: Budget | None = None
        ) -> RouteOutcome:
            raise KeyboardInterrupt

    stubs = {
        "newton": Stub("newton", 0.9, Termination.STALLED),
        "scholtes": Interrupted("scholtes", None, Termination.CONVERGED),
    }
    out = chain(monkeypatch, stubs, SolveOptions()).solve(np.zeros(0), np.zeros(1), False)
    assert out.termination is Termination.INTERRUPTED and out.method == "newton" and out.z is not None
    assert [a["method"] for a in out.extra["attempts"]] == ["newton", "scholtes"]
    stubs = {"newton": Interrupted("newton", None, Termination.CONVERGED)}
    out = chain(monkeypatch, stubs, SolveOptions()).solve(np.zeros(0), np.zeros(1), False)
    assert out.termination is Termination.INTERRUPTED and out.z is None


def test_path_failing_in_its_own_code_means_path_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    """A PATH whose licence expires while the process runs raises its own error type (GAMSPy's
    FatalError) at build or at solve time: auto records 'PATH unavailable' and goes on to newton,
    and does not try PATH again on the next solve. Another engine's own exception still raises."""

    class FatalError(Exception):  # stands in for gamspy.exceptions.FatalError
        pass

    class Expiring(Stub):
        def solve(
            self, p: np.ndarray, z0: np.ndarray, warm: bool, budget: Budget | None = None
        ) -> RouteOutcome:
            raise FatalError("Licence expired: 2026-11-26\nmore lines")

    expiring = Expiring("path", None, Termination.SOLVER_ERROR)
    stubs = {"path": expiring, "newton": Stub("newton", 1.0, Termination.CONVERGED)}
    route = chain(monkeypatch, stubs, SolveOptions())
    for _ in range(2):
        out = route.solve(np.zeros(0), np.zeros(1), False)
        assert out.method == "newton" and out.termination is Termination.CONVERGED
        skipped = out.extra["attempts"][0]["skipped"]
        assert skipped.startswith("PATH unavailable: FatalError") and "more lines" not in skipped
    stubs = {"path": FatalError("expired at build"), "newton": Stub("newton", 1.0, Termination.CONVERGED)}
    out = chain(monkeypatch, stubs, SolveOptions()).solve(np.zeros(0), np.zeros(1), False)
    assert out.method == "newton" and "PATH unavailable" in out.extra["attempts"][0]["skipped"]

    class Broken(Stub):
        def solve(
            self, p: np.ndarray, z0: np.ndarray, warm: bool, budget: Budget | None = None
        ) -> RouteOutcome:
            raise ZeroDivisionError("a bug of our own")

    stubs = {"newton": Broken("newton", None, Termination.SOLVER_ERROR), "scholtes": Stub("scholtes", 1.0,
             Termination.CONVERGED)}  # fmt: skip
    with pytest.raises(ZeroDivisionError):
        chain(monkeypatch, stubs, SolveOptions()).solve(np.zeros(0), np.zeros(1), False)
