"""Live progress (mcpkit.solving.progress), Pyomo result pieces and option hints: no solver runs.

The terminal rule of ``progress=True`` is the command line's (a display only on a terminal or in
a notebook, unless ``"always"``); every listener hears each step through the one trace hook
(:func:`mcpkit.solving.options.progress_trace`).
"""

from __future__ import annotations

import io
from types import SimpleNamespace

import pytest

from mcpkit.errors import MCPInputError, UnknownOptionError
from mcpkit.solving import progress
from mcpkit.solving.options import SolveOptions, did_you_mean, progress_trace, suggestion
from mcpkit.solving.result import HomotopyStep, SolutionStatus, Termination, note_overrun


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def _step(k: int = 0, residual: float = 0.25) -> HomotopyStep:
    return HomotopyStep(k, 0.1, residual, "Solve_Succeeded", 7, 0.01, "relax")


def test_terminal_rule_is_the_command_lines() -> None:
    assert progress.shows_on(_Stream(True), True)
    assert not progress.shows_on(_Stream(False), True)  # a pipe or a file: no bar
    assert progress.shows_on(_Stream(False), "always")  # forced
    assert not progress.shows_on(_Stream(True), False)
    assert not progress.shows_on(_Stream(True), None)


def test_progress_option_values() -> None:
    for ok in (None, True, False, "always", print):
        SolveOptions(progress=ok)
    for bad in (3, "yes", 1.5):
        with pytest.raises(MCPInputError, match="progress"):
            SolveOptions(progress=bad)


def test_trace_hands_each_step_to_every_listener(capsys: pytest.CaptureFixture[str]) -> None:
    assert type(progress_trace(SolveOptions())) is list  # nobody listens: a plain list
    heard: list[HomotopyStep] = []
    trace = progress_trace(SolveOptions(progress=heard.append, verbose=True))
    trace.append(_step(0, 0.5))
    trace.append(_step(1, 0.125))
    assert [s.residual for s in heard] == [0.5, 0.125] and len(trace) == 2
    lines = capsys.readouterr().out.splitlines()  # verbose: one log line per step
    assert len(lines) == 2 and "residual 5.000e-01" in lines[0] and "residual 1.250e-01" in lines[1]
    assert "relax" in lines[0] and "parameter 1.00e-01" in lines[0]


def test_a_reporting_trace_pickles_as_its_steps() -> None:
    import pickle

    with progress.display("always", "bar"):  # a tqdm bar listens; it must not be pickled
        trace = progress_trace(SolveOptions(progress="always"))
        trace.append(_step())
    back = pickle.loads(pickle.dumps(trace))
    assert type(back) is list and back == [_step()]


def test_reporting_reaches_traces_built_inside_the_block() -> None:
    heard: list[HomotopyStep] = []
    with progress.reporting(heard.append):
        progress_trace(SolveOptions()).append(_step())
    progress_trace(SolveOptions()).append(_step())  # outside: not heard
    assert len(heard) == 1


def test_display_draws_a_bar_only_when_the_rule_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    with progress.display(True, "lcp"):  # stderr is captured, not a terminal
        progress_trace(SolveOptions(progress=True)).append(_step())
    assert "lcp" not in capsys.readouterr().err
    with progress.display("always", "lcp"):
        with progress.display("always", "inner"):  # nested: one bar only
            progress_trace(SolveOptions(progress="always")).append(_step())
    err = capsys.readouterr().err
    assert "lcp" in err and "inner" not in err


def test_unknown_option_hints_are_shared() -> None:
    assert suggestion("tolerance", SolveOptions.names()) == "tol"
    assert suggestion("timelimit", SolveOptions.names()) == "time_limit"
    assert suggestion("zzz", SolveOptions.names()) is None
    assert did_you_mean("tolerance", SolveOptions.names()) == " Did you mean 'tol'?"
    with pytest.raises(UnknownOptionError, match="Did you mean 'tol'"):
        SolveOptions.from_kwargs(tolerance=1e-8)


def _result(solved: bool, termination: Termination) -> SimpleNamespace:
    status = SolutionStatus.SOLUTION if solved else SolutionStatus.NO_SOLUTION
    return SimpleNamespace(
        solved=solved, termination=termination, solution_status=status, message="m", stationarity="S"
    )


def test_a_call_past_its_limit_says_time_limit() -> None:
    r = note_overrun(_result(True, Termination.CONVERGED), 0.3, 0.31)  # type: ignore[arg-type]
    assert r.termination is Termination.TIME_LIMIT and "time limit 0.3 s exceeded" in r.message
    assert r.solved  # the verdict stays the residual check's
    r = note_overrun(_result(True, Termination.CONVERGED), 0.3, 0.29)  # type: ignore[arg-type]
    assert r.termination is Termination.CONVERGED and r.message == "m"
    r = note_overrun(_result(True, Termination.CONVERGED), None, 99.0)  # type: ignore[arg-type]
    assert r.termination is Termination.CONVERGED


def test_pyomo_status_of_a_time_limit_is_max_time_limit_solved_or_not() -> None:
    pytest.importorskip("pyomo.opt")
    from pyomo.opt import SolutionStatus as PyomoSolution
    from pyomo.opt import TerminationCondition

    from mcpkit.frontends.pyomo_plugin import pyomo_status, solution_status

    for solved in (True, False):
        tc, _, note = pyomo_status(_result(solved, Termination.TIME_LIMIT), True)  # type: ignore[arg-type]
        assert tc is TerminationCondition.maxTimeLimit and "time limit" in note
        assert solution_status(tc) is PyomoSolution.stoppedByLimit
    tc, _, _ = pyomo_status(_result(True, Termination.CONVERGED), True)  # type: ignore[arg-type]
    assert tc is TerminationCondition.optimal and solution_status(tc) is PyomoSolution.optimal


def test_pyomo_model_counts() -> None:
    pyo = pytest.importorskip("pyomo.environ")
    from pyomo.mpec import Complementarity, complements

    from mcpkit.frontends.pyomo_plugin import model_counts

    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, 2)
    m.x = pyo.Var(m.I, bounds=(0, None))
    m.y = pyo.Var(m.I, bounds=(0, None))
    m.c = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] + m.y[i] >= 1)
    m.off = pyo.Constraint(expr=m.x[0] <= 5)
    m.off.deactivate()
    m.cc = Complementarity(m.I, rule=lambda m, i: complements(m.x[i] >= 0, m.y[i] >= 0))
    m.f = pyo.Objective(expr=sum(m.x[i] for i in m.I))
    assert model_counts(m) == {"constraints": 3, "complementarities": 3, "objectives": 1}
