"""The ``mcpkit`` command line.

* ``mcpkit info`` lists backends and solvers, their versions and where each was found.
* ``mcpkit solve FILE [--method M] [--backend B] [--tol T] [--time-limit S] [--out OUT] [--json
  [--with-solution]] [--no-progress]`` solves a problem file (see :mod:`mcpkit.formats.io` for the
  formats; MCP files in the ``mcpkit-mcp`` format and MCPLIB ports, MPCC JSON with
  ``mcplib_meta``, are read as MCPs by :mod:`mcpkit.formats.mcp_file`, and ``known_solution_distance``
  is reported when the file's metadata has known solutions). ``--out`` writes the solution and
  the verdict (:func:`mcpkit.formats.io.write_solution`: ``.json``, ``.npz``; FCLIB files also ``.h5``);
  the text output prints the summary once, as an aligned table (:mod:`mcpkit.solving.tables`),
  and solutions of at most :data:`SMALL` unknowns. ``--out`` is checked
  before anything is solved (suffix, folder, name length, a probe file, a FIFO or device refused,
  an empty name refused); the verdict is written
  whatever it is (a stopped or failed solve replaces an older file too); should the write still
  fail after the solve, the solution is printed on stdout instead and the exit status is 2.
  ``--time-limit`` bounds the whole call: loading, lowering, solving and checking (the solver
  gets what loading and lowering left, less a small reserve; a watchdog interrupts it if it
  overruns); ``inf`` or more than :data:`NO_LIMIT_ABOVE` s means no limit. With ``--json``,
  stdout is one JSON object: what solvers print while solving (HiGHS, IPOPT write to file
  descriptor 1 from C) goes to stderr. On a terminal a live line on stderr shows each Newton or
  homotopy step and its residual (``--no-progress`` turns it off).
* ``mcpkit print FILE [--latex]`` prints the problem in a file as mathematics: an MCP (LCP and
  MCP files), an MPCC (MPCC JSON) or the contact MCP of an FCLIB file
  (:func:`mcpkit.models.fclib.fclib_mcp`).
* ``mcpkit sweep FILES_OR_GLOBS [--method M] [--backend B] [--tol T] [--time-limit S] [--out
  results.parquet] [--workers N] [--scheduler ADDRESS] [--plot FILE] [--no-resume] [--json]``
  solves many problem files on Dask (:mod:`mcpkit.sweep`; ``--time-limit`` is per file), streams
  one row per file to the Parquet folder ``--out``, resumes what a previous run left, and prints
  a summary (solved / not solved / errors, time quantiles); ``--plot`` draws the solved-vs-time
  profile. Exit status 0 when every file is solved. Ctrl-C (status 130) or SIGTERM (143) stops
  it with one line on stderr; the rows written are kept (the Dask workers ignore Ctrl-C: the
  sweep stops them).
* ``mcpkit demo NAME [--out DIR] [--format png|pdf|svg] [--json]`` runs a demo and writes its
  figures in that format (:mod:`mcpkit.formats.figures`; PNG at 200 dpi by default; the summary
  prints as an aligned table, :mod:`mcpkit.solving.tables`): ``quickstart`` (one contact step,
  printed and solved by every route), ``sliding``, ``pushed-slider``, ``plate`` (time stepping),
  ``block``, ``pushing``, ``plate-design`` (MPEC planning over a horizon; ``plate-design`` also
  runs the seed's Nelder–Mead comparison over three radii, about 5 min), ``pile`` (``--bodies N
  --steps K [--seed S] [--dump-fclib STEP] [--engine direct|staged]``: spheres dropped into a
  box, each step an FCLIB local problem solved to a Siconos error of 1e-8;
  :mod:`mcpkit.models.pile.demo`).

Exit status (:data:`EXIT_CODES`), the same for every command: 0 when the result is solved (the
``solved`` of the ``Outcome`` protocol of :mod:`mcpkit.solving.result`, mcpkit's own residual check; for
demos and file sets every part), 1 when the solver ran but the result is not solved (tolerance
not met, a time or iteration limit, no solution), 2 for bad input (file, option, output path) or
a requested solver that is not available (any :class:`~mcpkit.errors.MCPKitError`; argparse's
usage errors are 2 as well). ``--method`` and ``--backend`` accept the names in
:mod:`mcpkit.solving.registry` (``mcpkit info`` lists them).

Signals and pipes (``mcpkit solve``): Ctrl-C (SIGINT) while loading, lowering or solving stops
within about a second (:data:`INTERRUPT_GRACE`) with exit status 130 (while the program is
still importing its modules, from ``mcpkit/__init__.py`` on, :mod:`mcpkit.command.entry` ends it
with the same line and status), printing the best point so
far when the solver returned one (every IPOPT solver built by the command carries the iteration
monitor of :mod:`mcpkit.solving.stop`, so a homotopy subproblem stops at its next iteration and the
homotopy reports its best point; engines with a step hook stop at their next step); SIGTERM to a
``--time-limit`` run (which solves in a forked child, :mod:`mcpkit.frontends.forked`) kills the child with
it, status 143; a reader that leaves early (``| head``) ends the output quietly, status 141. Run as
a program, ``solve``, ``print`` and ``info`` leave right after their output (no interpreter
teardown of the imported solver libraries, which took up to half a second; ``atexit`` handlers
still run).
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from mcpkit.command.entry import release
from mcpkit.errors import MCPInputError, MCPKitError
from mcpkit.formats.figures import DEFAULT_DPI, FigureFormat
from mcpkit.formats.io import guess_family
from mcpkit.solving import stop
from mcpkit.solving.options import DEFAULT_TOL, Backend, Method
from mcpkit.sweep.solve_file import (  # the file solve and its budget, shared with mcpkit.sweep
    NO_LIMIT_ABOVE,
    CommandBudget,
    InterruptedOutcome,
    TimeLimitOutcome,
    solve_within,
)

#: Exit status of every command.
EXIT_SOLVED, EXIT_NOT_SOLVED, EXIT_BAD_INPUT = 0, 1, 2

#: The exit codes as ``--help`` and the README state them.
EXIT_CODES = """exit status (every command):
  0  solved: mcpkit's own check of the result met the tolerance (demos: every part)
  1  ran but not solved: tolerance not met, time or iteration limit, no solution
  2  bad input (file, option, output path) or a requested solver not available"""

#: Exit status after Ctrl-C (128 + SIGINT), after SIGTERM (128 + SIGTERM) and when the reader
#: of stdout left early (128 + SIGPIPE), as a shell reports a process ended by the signal.
EXIT_INTERRUPTED, EXIT_TERMINATED, EXIT_BROKEN_PIPE = 130, 143, 141

#: The text output of ``mcpkit solve`` prints solutions with at most this many unknowns.
SMALL = 20

#: Seconds Ctrl-C gives the solver to stop and return its best point; after that the command
#: leaves anyway (native code that never looks at signals cannot hold it).
INTERRUPT_GRACE = 1.0


def exit_code(outcome: Any) -> int:
    """:data:`EXIT_SOLVED` when ``outcome.solved`` (mcpkit's verdict), else :data:`EXIT_NOT_SOLVED`."""
    return EXIT_SOLVED if outcome.solved else EXIT_NOT_SOLVED


def _print_json(obj: Any) -> None:
    from mcpkit.formats.io import json_ready

    print(json.dumps(json_ready(obj), allow_nan=False))


def cmd_info(args: argparse.Namespace) -> int:
    from importlib.metadata import version

    __version__ = version("mcpkit")  # the installed package's (mcpkit.__version__ is the same)
    from mcpkit.solving.availability import components
    from mcpkit.solving.registry import describe

    comps = components()
    routes = describe()
    if args.json:
        _print_json({"mcpkit": __version__, "components": [c.__dict__ for c in comps], "registry": routes})
        return EXIT_SOLVED
    print(f"mcpkit {__version__} (Python {sys.version.split()[0]})")
    width = max(len(c.name) for c in comps)
    for c in comps:
        mark = "yes" if c.available else "no "
        ver = f" {c.version}" if c.version else ""
        print(f"  {c.name:<{width}}  {mark}{ver}  -- {c.location}")
    print("registry (backend=, method=):")
    width = max(len(r["name"]) for r in routes)
    for r in routes:
        mark = "yes" if r["available"] else "no "
        where = f" on {', '.join(r['backends'])}" if "backends" in r else ""
        print(f"  {r['kind']:<13} {r['name']:<{width}}  {mark}  {'/'.join(r['problems'])}{where}")
    return EXIT_SOLVED


# --------------------------------------------------------------------------- time budget
def _process_age() -> float:
    """Seconds since this process started (Linux ``/proc``; 0 where unknown)."""
    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        return max(0.0, uptime - float(fields[19]) / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


# ----------------------------------------------------------------------------- progress
class ProgressLine:
    """A live line on ``stream``: the step, phase, residual and parameter of each engine step.

    Called with each :class:`~mcpkit.solving.result.HomotopyStep` (``SolveOptions.progress``); redraws
    at most every ``interval`` seconds; :meth:`close` erases it.
    """

    def __init__(self, stream: TextIO, label: str, interval: float = 0.1) -> None:
        self.stream = stream
        self.label = label
        self.interval = interval
        self.t0 = time.perf_counter()
        self.last = -float("inf")
        self.width = 0
        self.steps = 0

    def text(self, step: Any) -> str:
        return (
            f"{self.label}: {step.phase} step {self.steps}, residual {step.residual:.2e}, "
            f"parameter {step.parameter:.1e}, {time.perf_counter() - self.t0:.1f} s"
        )

    def __call__(self, step: Any) -> None:
        self.steps += 1
        now = time.perf_counter()
        if now - self.last < self.interval:
            return
        self.last = now
        line = self.text(step)
        self.stream.write("\r" + line.ljust(self.width))
        self.stream.flush()
        self.width = max(self.width, len(line))

    def close(self) -> None:
        if self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0


def _progress_wanted(args: argparse.Namespace, stream: TextIO) -> bool:
    """Progress on ``stream`` unless ``--no-progress`` or ``stream`` is not a terminal (the rule
    ``progress=True`` of :func:`mcpkit.solve` follows too: :func:`mcpkit.solving.progress.shows_on`)."""
    from mcpkit.solving.progress import shows_on

    return shows_on(stream, not args.no_progress)


# ------------------------------------------------------------------- signals and streams
def _flush_c_stdio() -> None:
    """Flush the C library's ``stdout`` buffers (what native solvers ``printf``)."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None).fflush(None)


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Send what is written to stdout meanwhile to stderr: Python's ``print`` and, at the level
    of file descriptor 1, native code (HiGHS, IPOPT), which ``redirect_stdout`` cannot catch."""
    sys.stdout.flush()
    _flush_c_stdio()
    python_stdout = sys.stdout
    try:
        saved = os.dup(1)
    except OSError:  # no stdout at all: nothing to keep clean
        try:
            sys.stdout = sys.stderr
            yield
        finally:
            sys.stdout = python_stdout
        return
    try:
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        yield
    finally:
        # a Ctrl-C (KeyboardInterrupt) landing in the restore would leave stdout on stderr, and
        # the JSON result printed after it there: the restore is repeated until it completes
        # (every step can be repeated), and the interrupt raised afterwards
        interrupt: KeyboardInterrupt | None = None
        while True:
            try:
                sys.stdout = python_stdout
                _flush_c_stdio()
                os.dup2(saved, 1)
                break
            except KeyboardInterrupt as exc:
                interrupt = exc
        os.close(saved)
        if interrupt is not None:
            raise interrupt


class _Interrupts:
    """Watch for Ctrl-C while a command runs, and make it prompt (a context manager).

    The C-level signal handler writes each signal's number to a wakeup file descriptor
    (:func:`signal.set_wakeup_fd`) even while the main thread is inside native code; a daemon
    thread reads it. On SIGINT it sets :attr:`seen` and gives the command :data:`INTERRUPT_GRACE`
    seconds to reach :attr:`done` (the solvers turn ``KeyboardInterrupt`` into an ``interrupted``
    result with their best point); if it does not, the process leaves with
    :data:`EXIT_INTERRUPTED` and one line on stderr. Inactive outside the main thread.
    """

    def __init__(self, grace: float | None = None) -> None:
        self.grace = INTERRUPT_GRACE if grace is None else grace
        self.seen = threading.Event()
        self.done = threading.Event()
        self._fds: tuple[int, int] | None = None
        self._previous = -1

    def __enter__(self) -> _Interrupts:
        if threading.current_thread() is not threading.main_thread():
            return self
        read_fd, write_fd = os.pipe()
        os.set_blocking(write_fd, False)
        try:
            self._previous = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
        except ValueError:
            os.close(read_fd)
            os.close(write_fd)
            return self
        self._fds = (read_fd, write_fd)
        threading.Thread(target=self._watch, args=(read_fd,), name="mcpkit-interrupts", daemon=True).start()
        return self

    def __exit__(self, *_: Any) -> None:
        self.done.set()
        if self._fds is not None:
            signal.set_wakeup_fd(self._previous)
            os.close(self._fds[1])  # the watcher reads end-of-file and closes its end
            self._fds = None

    def _watch(self, read_fd: int) -> None:
        try:
            while data := os.read(read_fd, 64):
                if signal.SIGINT in data and not self.seen.is_set():
                    self.seen.set()
                    stop.request()  # monitored IPOPT runs stop at their next iteration
                    if not self.done.wait(self.grace):
                        os.write(
                            2,
                            f"\nmcpkit: interrupted; the solver did not stop within {self.grace:g} s, "
                            f"no result\n".encode(),
                        )
                        os._exit(EXIT_INTERRUPTED)
        finally:
            os.close(read_fd)


# -------------------------------------------------------------------------------- solve
def _format_vector(v: Any) -> str:
    import numpy as np

    if np.ndim(v) == 0:
        return f"{float(v):.10g}"
    return np.array2string(np.asarray(v, dtype=float), precision=8, separator=", ", max_line_width=100)


def _print_solution(arrays: dict[str, Any]) -> None:
    from mcpkit.formats.io import solution_size

    n = solution_size(arrays)
    if n > SMALL:
        print(f"solution: {n} unknowns, not printed (write them with --out FILE or --json --with-solution)")
        return
    print("solution:")
    for key, value in arrays.items():
        if isinstance(value, dict):
            for name, v in value.items():
                print(f"  {key}[{name}] = {_format_vector(v)}")
        else:
            print(f"  {key} = {_format_vector(value)}")


def cmd_solve(args: argparse.Namespace) -> int:
    """``mcpkit solve``: load, solve, write ``--out`` and print; the exit status.

    Ctrl-C stops the solver at its next step (the step hook raises ``KeyboardInterrupt``, which
    the engines turn into an ``interrupted`` result with the best point they have), or the
    process after :data:`INTERRUPT_GRACE` (:class:`_Interrupts`); either way the status is
    :data:`EXIT_INTERRUPTED`. With ``--json`` what the solvers print goes to stderr.
    """
    budget: CommandBudget = args.budget
    progress = ProgressLine(sys.stderr, Path(args.file).name) if _progress_wanted(args, sys.stderr) else None
    interrupted = False
    # every IPOPT solver built in this command carries the iteration monitor, so that Ctrl-C
    # stops a subproblem within one iteration instead of at its end (mcpkit.solving.stop)
    with _Interrupts() as interrupts, stop.watching():

        def step(s: Any) -> None:  # each engine step: stop there once Ctrl-C was seen
            if interrupts.seen.is_set():
                raise KeyboardInterrupt  # (CasADi turns the signal itself into a failed IPOPT run)
            if progress is not None:
                progress(s)

        try:
            with _stdout_to_stderr() if args.json else contextlib.nullcontext():
                try:
                    result, extra, arrays = solve_within(args, budget, step)
                finally:
                    interrupts.done.set()
                    if progress is not None:
                        progress.close()
        except BaseException as exc:  # Ctrl-C, or what a native call hit by it raised
            if not (interrupts.seen.is_set() or isinstance(exc, KeyboardInterrupt)):
                raise
            interrupted = True
            result = InterruptedOutcome(getattr(args, "family", guess_family(args.file)), budget.elapsed())
            extra, arrays = {}, None
        # the solver may report the interrupt (Python's own SIGINT handler raised in it) before
        # the watcher thread has read the signal
        interrupted = interrupted or interrupts.seen.is_set() or _says_interrupted(result)
    if not interrupted:
        return _report_solve(args, result, extra, arrays, exit_code(result))
    code = _report_solve(args, result, extra, arrays, EXIT_INTERRUPTED)
    if code == EXIT_INTERRUPTED:
        print("mcpkit: interrupted (Ctrl-C)", file=sys.stderr)
    return code


def _says_interrupted(result: Any) -> bool:
    """Whether a solve's result is labelled ``interrupted``."""
    termination = getattr(result, "termination", None)
    return getattr(termination, "value", termination) == "interrupted"


def _report_solve(
    args: argparse.Namespace, result: Any, extra: dict[str, Any], arrays: dict[str, Any] | None, code: int
) -> int:
    """Write ``--out`` and print the result of ``mcpkit solve``; the exit status.

    The verdict goes to ``--out`` whatever it is (a result without a point writes the verdict
    alone), so that an older file is never left looking current. A write that fails after the
    solve prints the solution on stdout instead (in the JSON object under ``"solution"``, or as
    one JSON line in the text output) and ends with one ``mcpkit: error:`` line and status 2.
    """
    from mcpkit.formats.io import json_ready

    out = getattr(args, "out", None)
    summary = result.summary() | extra
    failure = None if out is None else _write_out(out, args.file, result, summary, arrays)
    if args.json:
        if getattr(args, "with_solution", False) or (failure is not None and arrays is not None):
            summary["solution"] = arrays
        _print_json(summary)
    else:
        from mcpkit.solving.tables import format_summary

        print(format_summary(summary))
        if arrays is not None:
            _print_solution(arrays)
        if failure is not None:
            if arrays is not None:
                print("solution (--out could not be written), in full:")
                print(json.dumps(json_ready(arrays), allow_nan=False))
        elif out is not None:
            print(f"written: {out}" if arrays is not None else f"written (the verdict, no solution): {out}")
    if failure is not None:
        sys.stdout.flush()
        print(f"mcpkit: error: {failure}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return code


def _write_out(
    out: str, source: str, result: Any, summary: dict[str, Any], arrays: dict[str, Any] | None
) -> str | None:
    """Write ``result`` to ``out`` (``--out``); ``None``, or what went wrong in words (an older
    file at ``out`` is then removed, so that it does not look like this run's result)."""
    from mcpkit.formats.io import write_solution

    try:
        write_solution(out, result, source=source, summary=summary, arrays={} if arrays is None else arrays)
        return None
    except (OSError, MCPKitError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        why = why.removeprefix(f"--out {out}: ")
    stale = ""
    with contextlib.suppress(OSError):
        if os.path.isfile(out):
            os.unlink(os.path.realpath(out))
            stale = "; the older file there was removed"
    if arrays is None:
        return f"--out {out}: the verdict could not be written ({why}){stale}"
    return f"--out {out}: the solution could not be written ({why}); it is printed on stdout instead{stale}"


class _SweepTerminated(KeyboardInterrupt):
    """SIGTERM during ``mcpkit sweep``: stopped as Ctrl-C stops it (the cluster closed, the rows
    written kept), then status :data:`EXIT_TERMINATED`."""


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """In the block, SIGTERM raises :class:`_SweepTerminated` (once: a second one ends the process)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_term(signum: int, frame: Any) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        raise _SweepTerminated

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def cmd_sweep(args: argparse.Namespace) -> int:
    from mcpkit.sweep.api import expand_files, sweep
    from mcpkit.sweep.report import format_summary, plot_profile, summarize
    from mcpkit.sweep.sink import read_results
    from mcpkit.sweep.tasks import ERROR_STATUS

    files = expand_files(args.files)
    if args.plot is not None and not Path(args.plot).resolve().parent.is_dir():
        raise MCPInputError(f"--plot {args.plot}: its folder does not exist")
    options: dict[str, Any] = {"method": args.method, "backend": args.backend}
    if args.tol is not None:
        options["tol"] = args.tol
    try:
        with _sigterm_interrupts():
            df = sweep(
                "solve-file",
                files,
                time_limit=args.time_limit,
                out=args.out,
                workers=args.workers,
                scheduler=args.scheduler,
                resume=not args.no_resume,
                progress=not args.no_progress and not args.json,
                **options,
            )
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (_SweepTerminated): the rows written stay
        have = read_results(args.out)
        how = "terminated (SIGTERM)" if isinstance(exc, _SweepTerminated) else "interrupted"
        print(
            f"{how}: {len(have)} rows kept in {args.out}; run the same command again to resume",
            file=sys.stderr,
        )
        return EXIT_TERMINATED if isinstance(exc, _SweepTerminated) else EXIT_INTERRUPTED
    summary = summarize(df)
    if args.plot is not None:
        limit = "no time limit" if args.time_limit is None else f"time limit {args.time_limit:g} s per file"
        plot_profile(df, args.plot, title=f"{len(df)} files, method {args.method}, {limit}")
    if args.json:
        _print_json(summary | {"out": args.out, "plot": args.plot, "sweep": df.attrs.get("sweep", {})})
    else:
        print(format_summary(summary, df.attrs.get("sweep")))
        unsolved = ~df["solved"].fillna(False).astype(bool)
        errored = df["status"].astype(object) == ERROR_STATUS
        parts = (("error", df[errored], "error_message"), ("not solved", df[unsolved & ~errored], "message"))
        for label, part, col in parts:  # errors (the task raised) apart from verdicts "not solved"
            for _, row in part.head(20).iterrows():
                why = row.get(col) if isinstance(row.get(col), str) else row.get("message", "")
                kind = row.get("error_type") if label == "error" else None
                kind = f"{kind}: " if isinstance(kind, str) else ""
                status = "" if label == "error" else f"{row['status']}: "
                print(f"  {label}: {row['name']}: {status}{kind}{str(why)[:100]}")
            if len(part) > 20:
                more = f"  ... and {len(part) - 20} more {label} rows"
                print(f"{more} (read {args.out} with mcpkit.sweep.read_results)")
        print(f"results: {args.out}" + (f", profile: {args.plot}" if args.plot else ""))
    return EXIT_SOLVED if summary["solved"] == summary["rows"] else EXIT_NOT_SOLVED


#: ``mcpkit print --form`` choices (FCLIB files): the cone complementarity problem, or a formulation.
PRINT_FORMS: tuple[str, ...] = ("cone", "alart-curnier", "fb-soc", "ncp")
PRINT_FORM_HELP = (
    "FCLIB files: the cone complementarity problem (cone, the default) or the equations mcpkit "
    "solves (alart-curnier, fb-soc, ncp)"
)


def cmd_print(args: argparse.Namespace) -> int:
    """``mcpkit print FILE``: the problem in the file as mathematics (MCP, MPCC or FCLIB contact MCP).

    Loading evaluates the file's functions at its start point (a NaN there is refused), and a
    function may embed a solver (a CasADi ``nlpsol``) that prints its banner from native code:
    loading and rendering run with stdout sent to stderr, so stdout holds the mathematics only.
    """
    from mcpkit.sweep.solve_file import load_declaration

    with _stdout_to_stderr():
        problem = load_declaration(args.file)
        form: dict[str, str] = {}
        if args.form is not None:
            if type(problem).__name__ != "FCLIBProblem":
                raise MCPInputError(f"--form applies to FCLIB files only; {args.file} is not one")
            form["formulation"] = args.form.replace("-", "_")
        kw = {**form, "max_rows": args.max_rows}
        text = problem.to_latex(**kw) if args.latex else problem.to_text(**kw)
        if not args.latex:
            text += "\n\n" + problem.explain(**form)
    print(text)
    return EXIT_SOLVED


def _demo_from(module: str, func: str) -> Callable[..., Any]:
    def run(out: Path, progress: bool, fmt: str, **options: Any) -> Any:
        import importlib

        try:
            mod = importlib.import_module(module)
        except ImportError as exc:
            raise MCPKitError(f"demo unavailable: {module} could not be imported ({exc})") from None
        return getattr(mod, func)(out, progress=progress, fmt=fmt, **options)

    run.target = (module, func)  # type: ignore[attr-defined]  # where the demo lives (tests read it)
    return run


#: Demo name -> ``(out_dir, progress, figure format, **options) -> result`` (each result follows
#: ``mcpkit.solving.result.Outcome``; every demo takes ``fmt``, see :mod:`mcpkit.formats.figures`);
#: options only for the demos in :data:`DEMO_OPTIONS`.
DEMOS: dict[str, Callable[..., Any]] = {
    "quickstart": _demo_from("mcpkit.frontends.demo", "quickstart"),
    "sliding": _demo_from("mcpkit.models.ecp.demos", "demo_sliding"),
    "pushed-slider": _demo_from("mcpkit.models.ecp.demos", "demo_pushed_slider"),
    "plate": _demo_from("mcpkit.models.stewart_trinkle.demos", "demo_plate"),
    "block": _demo_from("mcpkit.mpec.examples", "demo_block"),
    "pushing": _demo_from("mcpkit.mpec.examples", "demo_pushing"),
    "plate-design": _demo_from("mcpkit.mpec.examples.plate_design", "demo_plate_design"),
    "pile": _demo_from("mcpkit.models.pile.demo", "demo_pile"),
}

#: Demo-specific flags: demo name -> {argparse dest: keyword of the demo function}.
DEMO_OPTIONS: dict[str, dict[str, str]] = {
    "pile": {
        "bodies": "bodies",
        "steps": "steps",
        "seed": "seed",
        "dump_fclib": "dump_fclib",
        "engine": "engine",
    },  # fmt: skip
}


def demo_folder(out: str | Path) -> Path:
    """``out`` as the demo's figure folder, created if missing; a typed error if it is a file."""
    d = Path(out)
    if d.exists() and not d.is_dir():
        raise MCPInputError(f"--out {d} is a file, not a folder; the demo writes its figures into a folder")
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a parent that is a file, no permission, ...
        raise MCPInputError(f"--out {d}: cannot create the folder ({exc.strerror or exc})") from None
    return d


def _demo_options(args: argparse.Namespace) -> dict[str, Any]:
    """The demo-specific flags given (:data:`DEMO_OPTIONS`), checked before the demo runs."""
    known = DEMO_OPTIONS.get(args.name, {})
    every = {dest for names in DEMO_OPTIONS.values() for dest in names}
    given = {dest for dest in every if getattr(args, dest, None) is not None}
    wrong = sorted(given - set(known))
    if wrong:
        flags = ", ".join("--" + d.replace("_", "-") for d in wrong)
        owners = ", ".join(sorted(DEMO_OPTIONS))
        raise MCPInputError(f"demo {args.name} takes no {flags} (options of demo {owners})")
    options = {kw: getattr(args, dest) for dest, kw in known.items() if getattr(args, dest) is not None}
    for key in ("bodies", "steps"):
        if key in options and options[key] < 1:
            raise MCPInputError(f"--{key} must be at least 1, got {options[key]}")
    if "seed" in options and options["seed"] < 0:  # NumPy's seeds are >= 0 (a traceback before)
        raise MCPInputError(f"--seed must be >= 0, got {options['seed']}")
    if "dump_fclib" in options and not 0 <= options["dump_fclib"] < options.get("steps", 50):
        raise MCPInputError(f"--dump-fclib must be a step in [0, steps - 1], got {options['dump_fclib']}")
    return options


def cmd_demo(args: argparse.Namespace) -> int:
    options = _demo_options(args)
    out = demo_folder(args.out)
    result = DEMOS[args.name](out, not args.no_progress and not args.json, args.format, **options)
    summary = result.summary()
    if args.json:
        _print_json(summary)
    elif hasattr(result, "table"):  # demos with many steps print an aligned table
        print(result.table())
    else:
        from mcpkit.solving.tables import format_summary

        print(format_summary(summary))
    return exit_code(result)


def _tol_help() -> str:
    from mcpkit.models.fclib import DEFAULT_TOL as FCLIB_TOL

    return (
        f"tolerance of mcpkit's verdict; default by problem kind: MCP files (LCP .json/.npz/.mtx, "
        f"mcpkit-mcp, MCPLIB ports) {DEFAULT_TOL['mcp']:g} on the natural residual, MPCC JSON "
        f"{DEFAULT_TOL['mpcc']:g} on the complementarity residual and constraint violation, FCLIB "
        f".hdf5 {FCLIB_TOL:g} on the posed MCP and the Siconos friction error"
    )


def _add_info(sub: Any) -> None:
    """``mcpkit info``: backends and solvers."""
    p_info = sub.add_parser("info", help="list backends and solvers with versions and locations")
    p_info.add_argument("--json", action="store_true", help="one JSON object")
    p_info.set_defaults(func=cmd_info)


def _add_solve(sub: Any) -> None:
    """``mcpkit solve FILE``: one problem file, the exit status the verdict."""
    raw = argparse.RawDescriptionHelpFormatter
    p_solve = sub.add_parser(
        "solve",
        help="solve a problem file (.json LCP, mcpkit-mcp or CasADi MPCC, .npz/.mtx LCP, .hdf5 FCLIB)",
        description="Solve a problem file; the exit status is mcpkit's verdict on the result.",
        epilog=EXIT_CODES,
        formatter_class=raw,
    )
    p_solve.add_argument("file", help="problem file")
    p_solve.add_argument(
        "--method",
        default="auto",
        help=f"{', '.join(m.value for m in Method)} (default auto; see `mcpkit info`)",
    )
    p_solve.add_argument(
        "--backend", default="auto", help=f"{', '.join(b.value for b in Backend)} (default auto)"
    )
    p_solve.add_argument("--tol", type=float, default=None, help=_tol_help())
    p_solve.add_argument(
        "--time-limit",
        type=float,
        default=None,
        help="wall-clock limit in seconds for the whole call: loading, lowering, solving, checking; "
        f"inf (or more than {NO_LIMIT_ABOVE:g} s) means no limit, as without the option",
    )
    p_solve.add_argument(
        "--out",
        default=None,
        metavar="FILE",
        help="write the solution and the verdict: .json or .npz (z by block and F; x, G, H for "
        "MPCCs; r and u for FCLIB), or .h5/.hdf5 for FCLIB (the problem with a 'solution' group); "
        "checked before solving; a not-solved verdict is written too; if the write fails after the "
        "solve, the solution is printed on stdout and the exit status is 2",
    )
    p_solve.add_argument(
        "--json",
        action="store_true",
        help="print one JSON summary object (what solvers print meanwhile goes to stderr)",
    )
    p_solve.add_argument(
        "--with-solution", action="store_true", help="with --json: add the solution under 'solution'"
    )
    p_solve.add_argument(
        "--no-progress", action="store_true", help="no live progress line on stderr (off when not a terminal)"
    )
    p_solve.set_defaults(func=cmd_solve)


def _add_sweep(sub: Any) -> None:
    """``mcpkit sweep FILES``: many files on Dask, rows to Parquet."""
    raw = argparse.RawDescriptionHelpFormatter
    p_sweep = sub.add_parser(
        "sweep",
        help="solve many problem files on Dask; one Parquet row per file, resumable",
        description="Solve problem files (paths, folders, globs) on a Dask cluster (a local one by default); "
        "rows stream to the Parquet folder --out; the exit status is 0 when every file is solved.",
        epilog=EXIT_CODES,
        formatter_class=raw,
    )
    p_sweep.add_argument("files", nargs="+", metavar="FILES_OR_GLOBS", help="problem files, folders or globs")
    p_sweep.add_argument("--method", default="auto", help="as for `mcpkit solve` (default auto)")
    p_sweep.add_argument("--backend", default="auto", help="as for `mcpkit solve` (default auto)")
    p_sweep.add_argument("--tol", type=float, default=None, help="as for `mcpkit solve`")
    p_sweep.add_argument(
        "--time-limit",
        type=float,
        default=None,
        help="seconds per file (the solver's limit, and a hard stop)",
    )
    p_sweep.add_argument("--out", default="results.parquet", help="results folder (default results.parquet)")
    p_sweep.add_argument("--workers", type=int, default=None, help="local worker processes (default: cores)")
    p_sweep.add_argument(
        "--scheduler", default=None, metavar="ADDRESS", help="existing Dask scheduler (tcp://...)"
    )
    p_sweep.add_argument(
        "--plot", default=None, metavar="FILE", help="save the solved-vs-time profile (PNG, SVG)"
    )
    p_sweep.add_argument("--no-resume", action="store_true", help="start --out afresh instead of resuming")
    p_sweep.add_argument("--no-progress", action="store_true", help="no progress bar")
    p_sweep.add_argument("--json", action="store_true", help="print one JSON summary object")
    p_sweep.set_defaults(func=cmd_sweep)


def _add_print(sub: Any) -> None:
    """``mcpkit print FILE``: the problem as mathematics."""
    p_print = sub.add_parser("print", help="print the problem in a file (MCP, MPCC or FCLIB) as mathematics")
    p_print.add_argument("file")
    p_print.add_argument("--latex", action="store_true", help="LaTeX instead of plain text")
    p_print.add_argument("--max-rows", type=int, default=8, help="rows shown per block")
    p_print.add_argument("--form", choices=PRINT_FORMS, help=PRINT_FORM_HELP)
    p_print.set_defaults(func=cmd_print)


def _add_demo(sub: Any) -> None:
    """``mcpkit demo NAME``: a demo and its figures."""
    raw = argparse.RawDescriptionHelpFormatter
    p_demo = sub.add_parser(
        "demo", help="run a demo and write its figures", epilog=EXIT_CODES, formatter_class=raw
    )
    p_demo.add_argument("name", choices=sorted(DEMOS))
    p_demo.add_argument("--out", default="mcpkit-demo", help="folder for figures (default ./mcpkit-demo)")
    p_demo.add_argument("--json", action="store_true", help="print one JSON summary object")
    p_demo.add_argument(
        "--format",
        choices=[f.value for f in FigureFormat],
        default=FigureFormat.PNG.value,
        help=f"figure file format (default png at {DEFAULT_DPI} dpi; pdf and svg are vector graphics)",
    )
    p_demo.add_argument("--no-progress", action="store_true", help="no progress bar")
    pile = p_demo.add_argument_group("pile", "options of `mcpkit demo pile`")
    pile.add_argument("--bodies", type=int, default=None, help="spheres dropped into the box (default 50)")
    pile.add_argument("--steps", type=int, default=None, help="time steps of 0.01 s (default 50)")
    pile.add_argument("--seed", type=int, default=None, help="seed of the radii and the start (default 0)")
    pile.add_argument(
        "--dump-fclib", type=int, default=None, metavar="STEP",
        help="write step STEP (0-based) as an FCLIB HDF5 file with its solution into --out",
    )  # fmt: skip
    pile.add_argument(
        "--engine", default=None, choices=("direct", "staged"),
        help="what each step tries first: the dense contact Newton warm-started (direct, default) or "
        "the staged FCLIB solve (staged: sparse engine above 170 contacts)",
    )  # fmt: skip
    p_demo.set_defaults(func=cmd_demo)


def build_parser() -> argparse.ArgumentParser:
    """The ``mcpkit`` command's parser: one sub-command each (``info``, ``solve``, ``sweep``,
    ``print``, ``demo``)."""
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="mcpkit",
        description="Complementarity modelling for contact mechanics.",
        epilog=EXIT_CODES,
        formatter_class=raw,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (_add_info, _add_solve, _add_sweep, _add_print, _add_demo):
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mcpkit`` command; returns the exit status (:data:`EXIT_CODES`).

    Run as the program (``argv`` None) the time budget of ``--time-limit`` counts from the
    process start (imports included); called with ``argv`` from the call. As the program,
    ``solve``, ``print`` and ``info`` leave the process right after their output
    (:func:`_leave`) instead of returning.
    """
    start = time.perf_counter() - (_process_age() if argv is None else 0.0)
    parser = build_parser()
    args = parser.parse_args(argv)
    args.budget = CommandBudget(getattr(args, "time_limit", None), start)
    if getattr(args, "with_solution", False) and not args.json:
        parser.error("--with-solution needs --json")
    limit = args.budget.limit
    if limit is not None and not limit > 0:
        print(
            f"mcpkit: error: --time-limit must be a positive number of seconds, got {limit}", file=sys.stderr
        )
        return EXIT_BAD_INPUT
    release()  # Ctrl-C is KeyboardInterrupt again, which the command handles (mcpkit.command.entry)
    if argv is None and limit is not None and hasattr(os, "fork") and args.command == "solve":
        try:
            code = _run_bounded(args)  # the program: a hard bound even on native code
        except KeyboardInterrupt:  # outside the wait that forwards it (the child is killed)
            print("\nmcpkit: interrupted", file=sys.stderr)
            code = EXIT_INTERRUPTED
        except BrokenPipeError:
            _quiet_stdout()
            code = EXIT_BROKEN_PIPE
    else:
        code = _run(args)
    if argv is None and args.command in ("solve", "print", "info"):
        _leave(code)
    return code


def _leave(code: int) -> None:
    """Flush the output, run the ``atexit`` handlers and end the process with ``code`` at once.

    The interpreter's teardown of the imported solver libraries (CasADi, SciPy, Pyomo, about
    1200 modules) took up to half a second after the verdict was printed; nothing in it is
    needed. A reader that has left (``| head``) makes the status :data:`EXIT_BROKEN_PIPE`.
    """
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        code = EXIT_BROKEN_PIPE
    except (OSError, ValueError):
        pass
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    with contextlib.suppress(Exception):
        atexit._run_exitfuncs()
    _flush_c_stdio()
    os._exit(code)


def _run(args: argparse.Namespace) -> int:
    """Run the command; :class:`~mcpkit.errors.MCPKitError` is exit status 2 with its message,
    Ctrl-C is :data:`EXIT_INTERRUPTED` and a reader that left early :data:`EXIT_BROKEN_PIPE`
    (one line on stderr at most, never a traceback)."""
    try:
        return int(args.func(args))
    except MCPKitError as exc:
        print(f"mcpkit: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("\nmcpkit: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_BROKEN_PIPE


def _quiet_stdout() -> None:
    """Point stdout at ``/dev/null`` after its reader left, so later flushes do not fail."""
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _run_bounded(args: argparse.Namespace) -> int:
    r"""Run the command in a forked child and stop it at :math:`1.1\,\mathrm{limit} + 1` s.

    The child keeps its own budget (the solver's limit, the watchdog of :class:`CommandBudget`); this
    bound holds even when native code (a CasADi NL import, a factorization) ignores interrupts
    (:func:`mcpkit.frontends.forked.run_forked`). The child's stdout comes back through the pipe and is
    printed only when it finishes, so a stopped child leaves no half output: the parent prints a
    :class:`TimeLimitOutcome`, writes its verdict to ``--out`` and returns
    :data:`EXIT_NOT_SOLVED`. The child runs in its own process group (PATH's GAMS processes are
    stopped with it); Ctrl-C is passed on to it, which then has :data:`INTERRUPT_GRACE` (and a
    second for its report) before it is killed (:data:`EXIT_INTERRUPTED`); SIGTERM kills it and
    ends the parent with :data:`EXIT_TERMINATED`.
    """
    from mcpkit.frontends.forked import OnInterrupt, Terminated, run_forked

    budget: CommandBudget = args.budget
    assert budget.limit is not None

    def child(fd: int) -> int:
        with os.fdopen(fd, "w") as out, contextlib.redirect_stdout(out):
            return _run(args)

    try:
        run = run_forked(
            child,
            budget.start + 1.1 * budget.limit + 1.0,
            on_interrupt=OnInterrupt.FORWARD,
            interrupt_grace=INTERRUPT_GRACE + 1.0,
        )
    except Terminated:
        print("mcpkit: terminated (SIGTERM); the solve was stopped", file=sys.stderr)
        return EXIT_TERMINATED
    if run.stopped and run.interrupted:
        print("\nmcpkit: interrupted; the solver did not stop in time, no result", file=sys.stderr)
        return EXIT_INTERRUPTED
    if run.stopped:
        outcome = TimeLimitOutcome(
            guess_family(args.file), "running (stopped from outside)", budget.limit, budget.elapsed()
        )
        return _report_solve(args, outcome, {}, None, exit_code(outcome))
    sys.stdout.write(run.data.decode(errors="replace"))
    sys.stdout.flush()
    code = run.exit_code
    if code is None:
        return EXIT_INTERRUPTED if run.interrupted else EXIT_NOT_SOLVED
    return code


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
