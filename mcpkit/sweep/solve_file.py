r"""Solving one problem file by its kind, within a wall-clock budget: what ``mcpkit solve FILE`` runs.

The command line (:mod:`mcpkit.command.cli`) and the ``"solve-file"`` task of :mod:`mcpkit.sweep` share
it. A file is read by its kind (:func:`mcpkit.formats.io.file_kind`): MCP files (LCP JSON/NPZ/MTX,
``mcpkit-mcp``, MCPLIB ports; :mod:`mcpkit.formats.mcp_file`) are solved with :class:`mcpkit.Solver`,
MPCC JSON with :func:`mcpkit.solve` and ``stationarity=True``, FCLIB files with
:func:`mcpkit.models.fclib.solve_fclib_file`. :class:`CommandBudget` is the time limit of the whole call
(loading, lowering, solving and checking) and its watchdog; a limit that runs out before the
solver returns a point is a :class:`TimeLimitOutcome`, Ctrl-C before then an
:class:`InterruptedOutcome` (both ``Outcome``\ s of :mod:`mcpkit.solving.result`, never solved).
"""

from __future__ import annotations

import _thread
import argparse
import contextlib
import dataclasses
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from mcpkit.solving.options import Budget

#: ``--time-limit`` values above this many seconds (about 32 years; ``inf`` among them) mean no
#: limit: no timer can wait that long (a watchdog of ``1e300`` s overflowed).
NO_LIMIT_ABOVE = 1e9


class OutOfTime(Exception):
    """The time limit ran out before the solver could start."""


class _NoPointOutcome:
    """An ``Outcome`` of a call that ended before the solver returned a point: never solved;
    the subclasses say why (``termination``, ``message``)."""

    kind: str
    wall_time_s: float
    solved = False

    def summary(self) -> dict[str, Any]:
        from mcpkit.solving.result import summary_head

        return summary_head(self.kind, self, self.wall_time_s)


@dataclasses.dataclass
class TimeLimitOutcome(_NoPointOutcome):
    """The result of a call whose time limit ran out before or outside the solve (an ``Outcome``)."""

    kind: str
    stage: str
    limit: float
    wall_time_s: float

    @property
    def termination(self) -> Any:
        from mcpkit.solving.result import Termination

        return Termination.TIME_LIMIT

    @property
    def message(self) -> str:
        return f"NOT solved: the time limit of {self.limit:g} s ran out while {self.stage}"


@dataclasses.dataclass
class InterruptedOutcome(_NoPointOutcome):
    """The result of a call stopped by Ctrl-C before the solver returned a point (an ``Outcome``)."""

    kind: str
    wall_time_s: float

    @property
    def termination(self) -> Any:
        from mcpkit.solving.result import Termination

        return Termination.INTERRUPTED

    @property
    def message(self) -> str:
        return "NOT solved: interrupted (Ctrl-C) before the solver returned a point"


class CommandBudget:
    r"""The wall-clock budget of one command: ``limit`` seconds from ``start`` (a ``perf_counter``),
    the call's :class:`~mcpkit.solving.options.Budget` with a reserve and a watchdog.

    The solver is given :meth:`solve_limit`, what is left less a reserve of
    :math:`\max(0.25, 0.03\,\mathrm{limit})` s for the residual check and the output; a watchdog
    (:meth:`watchdog`) interrupts the main thread at :math:`1.05\,\mathrm{limit} + 0.5` s, inside the
    promised :math:`1.1\,\mathrm{limit} + 2` s, if a solver overruns its own limit. A limit above
    :data:`NO_LIMIT_ABOVE` (``inf``) is no limit (``limit`` is ``None``).
    """

    def __init__(self, limit: float | None, start: float) -> None:
        if limit is not None and limit > NO_LIMIT_ABOVE:  # inf, 1e300: no limit (NaN stays, refused)
            limit = None
        self.call = Budget(limit, start)
        self.fired = threading.Event()

    @property
    def limit(self) -> float | None:
        """Seconds the command may take (``None``: no limit)."""
        return self.call.time_limit

    @property
    def start(self) -> float:
        """When the command started (a :func:`time.perf_counter` value)."""
        return self.call.start

    def elapsed(self) -> float:
        """Seconds since :attr:`start`."""
        return time.perf_counter() - self.start

    def solve_limit(self) -> float | None:
        """Seconds the solver may take now (``None`` without a limit)."""
        left = self.call.remaining()
        return None if left is None else left - max(0.25, 0.03 * float(self.limit or 0))

    def check(self, kind: str, stage: str) -> None:
        """Raise :class:`OutOfTime` when nothing is left for the solver after ``stage``."""
        left = self.solve_limit()
        if left is not None and left <= 0:
            raise OutOfTime(TimeLimitOutcome(kind, stage, float(self.limit or 0), self.elapsed()))

    @contextlib.contextmanager
    def watchdog(self) -> Iterator[None]:
        """Raise :class:`TimeLimitInterrupt` in the main thread if the call overruns the limit.

        The interrupt is delivered as a private signal (``SIGUSR2``) with its own handler, not as
        SIGINT, whose handler a library may have replaced (GAMSPy installs one that kills its
        GAMS process). Without ``SIGUSR2`` (Windows) there is no watchdog.
        """
        signum = getattr(signal, "SIGUSR2", None)
        if self.limit is None or signum is None or threading.current_thread() is not threading.main_thread():
            yield
            return
        delay = max(0.0, 1.05 * self.limit + 0.5 - self.elapsed())

        def handler(*_: Any) -> None:
            raise TimeLimitInterrupt(f"time limit of {self.limit:g} s")

        def fire() -> None:
            self.fired.set()
            _thread.interrupt_main(signum)

        previous = signal.signal(signum, handler)
        timer = threading.Timer(delay, fire)
        timer.daemon = True
        timer.start()
        try:
            yield
        finally:
            timer.cancel()
            timer.join()
            try:
                if self.fired.is_set():
                    time.sleep(0.01)  # a pending interrupt surfaces here, inside the caller's handler
            finally:
                signal.signal(signum, previous)


class TimeLimitInterrupt(KeyboardInterrupt):
    """Raised by :meth:`CommandBudget.watchdog` (a ``KeyboardInterrupt``, so solvers stop as on Ctrl-C)."""


def _solve_options(args: argparse.Namespace) -> dict[str, Any]:
    opts: dict[str, Any] = {}
    if args.tol is not None:
        opts["tol"] = args.tol
    return opts


def load_file(path: str | Path, family: str) -> tuple[Any, dict[str, Any]]:
    """The problem a file of ``family`` (:func:`~mcpkit.formats.io.file_family`) states, and its
    metadata: an :class:`~mcpkit.MCP` with the file's metadata for ``"mcp"``
    (:func:`~mcpkit.formats.mcp_file.load_any_mcp`), an :class:`~mcpkit.MPCC` for ``"mpcc"``
    (:func:`~mcpkit.formats.mpcc_json.load_mpcc_json`), an
    :class:`~mcpkit.models.fclib.FCLIBProblem` for ``"fclib"`` (:func:`mcpkit.models.fclib.load_fclib`).
    The one dispatch from a family to its loader (``mcpkit print`` and ``mcpkit solve``)."""
    if family == "fclib":
        from mcpkit.models.fclib import load_fclib

        return load_fclib(path), {}
    if family == "mpcc":
        from mcpkit.formats.mpcc_json import load_mpcc_json

        return load_mpcc_json(path), {}
    from mcpkit.formats.mcp_file import load_any_mcp

    return load_any_mcp(path)


def load_declaration(path: str | Path) -> Any:
    """The problem a file states, as a declaration that prints (``mcpkit print FILE``).

    By the file's family (:func:`~mcpkit.formats.io.file_family` of
    :func:`~mcpkit.formats.io.file_kind`, through :func:`load_file` as :func:`_load_and_solve`): an
    :class:`~mcpkit.MCP` for MCP files
    (:func:`~mcpkit.formats.mcp_file.load_any_mcp`), an :class:`~mcpkit.MPCC` for MPCC JSON
    (:func:`~mcpkit.formats.mpcc_json.load_mpcc_json`), and for an FCLIB file its
    :class:`~mcpkit.models.fclib.FCLIBProblem`, which prints the cone complementarity problem or,
    given a formulation, the contact MCP declared at block level (:func:`mcpkit.models.fclib.fclib_mcp`).
    Each has ``to_text``, ``to_latex`` and ``explain``.
    """
    from mcpkit.formats.io import file_family, file_kind, parse_once

    with parse_once():  # kind detection and loading parse a JSON file once
        return load_file(path, file_family(file_kind(path)))[0]


def _solve_file(
    args: argparse.Namespace, budget: CommandBudget, progress: Callable[[Any], None] | None
) -> tuple[Any, dict[str, Any], dict[str, Any] | None]:
    """Load ``args.file`` by its kind and solve it within ``budget``.

    Returns the result (an ``Outcome``), extra summary fields, and the solution arrays
    (:func:`mcpkit.formats.io.solution_arrays`; ``None`` for a :class:`TimeLimitOutcome`).
    """
    from mcpkit.formats.io import parse_once

    with parse_once():  # kind detection and loading parse a JSON file once
        return _load_and_solve(args, budget, progress)


def _load_and_solve(
    args: argparse.Namespace, budget: CommandBudget, progress: Callable[[Any], None] | None
) -> tuple[Any, dict[str, Any], dict[str, Any] | None]:
    from mcpkit.formats.io import check_solution_path, file_family, file_kind, solution_arrays
    from mcpkit.frontends.solve import Solver, solve

    family = args.family = file_family(file_kind(args.file))
    if args.out is not None:
        check_solution_path(args.out, family, args.file)  # before anything is solved
    opts = _solve_options(args)
    if progress is not None:
        opts["progress"] = progress
    if family == "fclib":
        from mcpkit.models.fclib import solve_fclib_file

        budget.check("fclib", "starting")
        res = solve_fclib_file(
            args.file, method=args.method, backend=args.backend, time_limit=budget.solve_limit(), **opts
        )
        prob = load_file(args.file, family)[0]
        return res, {}, solution_arrays(res, delassus=(prob.W, prob.q))
    if family == "mpcc":
        problem = load_file(args.file, family)[0]
        budget.check("mpcc", "loading the file")
        res = solve(
            problem,
            backend=args.backend,
            method=args.method,
            stationarity=True,
            time_limit=budget.solve_limit(),
            **opts,
        )
        return res, {}, solution_arrays(res)
    from mcpkit.formats.mcp_file import known_solution_distance

    mcp, meta = load_file(args.file, family)  # LCP files, mcpkit-mcp files, MCPLIB ports
    budget.check("mcp", "loading the file")
    solver = Solver(mcp, backend=args.backend, method=args.method, time_limit=budget.solve_limit(), **opts)
    budget.check("mcp", "lowering the problem")
    result = solver.solve(warm_start=False, time_limit=budget.solve_limit())  # what lowering left
    distance = known_solution_distance(meta, result.z)
    extra = {} if distance is None else {"known_solution_distance": distance}
    return result, extra, solution_arrays(result)


def solve_within(
    args: argparse.Namespace, budget: CommandBudget, progress: Callable[[Any], None] | None
) -> tuple[Any, dict[str, Any], dict[str, Any] | None]:
    """:func:`_solve_file` under ``budget``'s watchdog; a limit that runs out is a
    :class:`TimeLimitOutcome`."""
    try:
        with budget.watchdog():
            try:
                return _solve_file(args, budget, progress)
            except OutOfTime as exc:
                return exc.args[0], {}, None
    except BaseException:  # TimeLimitInterrupt, a native solver's own after it, or the SystemError
        # of a C function that the interrupt hit while it returned a result
        if not budget.fired.is_set():
            raise
        stage = "running (interrupted at the limit)"
        result = TimeLimitOutcome(
            getattr(args, "family", "mcp"), stage, float(budget.limit or 0), budget.elapsed()
        )
        return result, {}, None


def solve_path(
    file: str | os.PathLike[str],
    *,
    method: str = "auto",
    backend: str = "auto",
    tol: float | None = None,
    time_limit: float | None = None,
) -> tuple[Any, dict[str, Any]]:
    """Solve a problem file as ``mcpkit solve FILE`` does (no output): the result and extra fields.

    ``time_limit`` bounds the whole call from now (:class:`CommandBudget`); the extra fields are
    ``family`` (``"mcp"``, ``"mpcc"`` or ``"fclib"``; absent when the file could not be read) and
    ``known_solution_distance`` (when the file knows its solutions). Used by the
    ``"solve-file"`` task of :mod:`mcpkit.sweep`.
    """
    from mcpkit.solving.options import time_limit_seconds

    time_limit = time_limit_seconds(time_limit)  # typed errors before the file is read
    args = argparse.Namespace(file=str(file), method=method, backend=backend, tol=tol, out=None)
    result, extra, _ = solve_within(args, CommandBudget(time_limit, time.perf_counter()), None)
    family = getattr(args, "family", None)
    return result, ({} if family is None else {"family": family}) | extra
