r"""What one sweep row runs: the task registry and the per-input runner (executed on a worker).

A task is a function :math:`t(\text{input}, \text{options}) \to` an mcpkit result (anything with
``summary()``, the :class:`~mcpkit.solving.result.Outcome` protocol), optionally paired with a mapping of
extra columns, or a plain mapping of columns. Inputs that are mappings are spread into keyword
arguments (``t(**input, **options)``, what :func:`mcpkit.sweep.grid` makes); any other input is
the first positional argument (``t(input, **options)``).

Registered tasks (:data:`TASKS`, :func:`register_task`):

* ``"solve-file"``: one problem file, solved exactly as ``mcpkit solve FILE`` does
  (:func:`solve_file`); its key hashes the file's name and bytes;
* ``"simulate"``: :func:`mcpkit.models.stepping.simulate` of a (picklable) step model;
* ``"plan"``: :meth:`mcpkit.mpec.horizon.Horizon.solve` of a horizon built on the worker by a
  factory (horizons hold CasADi expressions, which do not pickle).

:func:`run_row` turns one call into the row's result columns, never raising: an exception is
an error row (``status="error"``, ``error_type``, ``error_message``). With a time limit the call
runs in a forked child of the worker process (:func:`run_bounded`), stopped at
:math:`1.1\,T + 1` s: the task's own ``time_limit`` (when it takes one) ends it cleanly first,
the hard stop is for native code that does not listen; either way the row's ``status`` is
``time_limit``. A child that crashes (a segfault in native code) is an error row, and the worker
survives.
"""

from __future__ import annotations

import contextlib
import faulthandler
import functools
import inspect
import json
import os
import pickle
import signal
import time
import traceback
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpkit.errors import MCPInputError, UnknownOptionError

#: Result columns every row has, with their Arrow types (:mod:`mcpkit.sweep.sink`). The first
#: five are :data:`mcpkit.solving.result.RESULT_KEYS`; residuals, counts and the route follow
#: :data:`mcpkit.solving.result.SUMMARY_KEYS`; then the stationarity (MPCCs), the error of a task that
#: raised, and the runner's own measurements.
RESULT_COLUMNS: dict[str, str] = {
    "kind": "string", "solved": "bool", "status": "string", "message": "string", "wall_time_s": "float64",
    "solution_status": "string", "objective": "float64", "comp_residual": "float64",
    "constraint_violation": "float64", "iterations": "int64", "outer_iterations": "int64",
    "method": "string", "backend": "string", "raw_status": "string", "stationarity": "string",
    "error_type": "string", "error_message": "string", "error_traceback": "string",
    "task_time_s": "float64", "worker": "string", "finished_at": "float64",
}  # fmt: skip

#: ``status`` of a row whose task raised (the others are :class:`mcpkit.solving.result.Termination` values).
ERROR_STATUS = "error"

#: ``status`` of a row stopped by its time limit (:attr:`mcpkit.solving.result.Termination.TIME_LIMIT`).
TIME_LIMIT_STATUS = "time_limit"


def hard_deadline(limit: float) -> float:
    r"""Seconds after which a task with limit :math:`T` is stopped from outside: :math:`1.1\,T + 1`."""
    return 1.1 * limit + 1.0


# ------------------------------------------------------------------------------- registry
@dataclass(frozen=True)
class TaskSpec:
    """One registered task.

    Attributes
    ----------
    name
        The name given to :func:`mcpkit.sweep` (``"solve-file"``).
    fn
        The module-level function run per input (picklable by reference).
    doc
        One line for listings.
    content
        ``input -> what its key hashes`` (default: the input itself).
    columns
        ``input -> {column: scalar}`` put in the row (default: a mapping input's items).
    check_input
        ``input -> None``, raising :class:`~mcpkit.errors.MCPInputError` for an input that cannot
        be run (checked before anything runs); ``None``: no check.
    soft_limit
        The task takes ``time_limit=`` and stops itself there.
    warm
        Called once per worker process before its first forked input: imports and native
        plugins loaded here are inherited by every child instead of loaded again in each.
    """

    name: str
    fn: Callable[..., Any]
    doc: str
    content: Callable[[Any], Any] = field(default=lambda x: x)
    columns: Callable[[Any], dict[str, Any]] | None = None
    check_input: Callable[[Any], None] | None = None
    soft_limit: bool = True
    warm: Callable[[], None] | None = None

    def option_names(self) -> tuple[str, ...] | None:
        """The keyword options :attr:`fn` accepts (``None``: any, it takes ``**kwargs``)."""
        return accepted_options(self.fn)


#: Registered tasks by name.
TASKS: dict[str, TaskSpec] = {}


def register_task(spec: TaskSpec) -> TaskSpec:
    """Add a task under ``spec.name`` (replacing one of that name) and return it."""
    TASKS[spec.name] = spec
    return spec


def accepted_options(fn: Callable[..., Any]) -> tuple[str, ...] | None:
    """Keyword parameter names of ``fn`` (``None`` when it takes ``**kwargs`` or has no signature)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values()):
        return None
    return tuple(n for n, p in sig.parameters.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def function_task(fn: Callable[..., Any]) -> TaskSpec:
    """A :class:`TaskSpec` for a user's function (its key names the function by module and name)."""
    name = f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', type(fn).__name__)}"
    return TaskSpec(name, fn, fn.__doc__ or "", soft_limit="time_limit" in (accepted_options(fn) or ()))


def resolve_task(task: str | Callable[..., Any]) -> TaskSpec:
    """The :class:`TaskSpec` of a registered name or of a callable; a typed error otherwise."""
    if isinstance(task, TaskSpec):
        return task
    if isinstance(task, str):
        if task not in TASKS:
            import difflib

            hint = difflib.get_close_matches(task, list(TASKS), n=1)
            extra = f" Did you mean {hint[0]!r}?" if hint else ""
            raise UnknownOptionError(f"unknown sweep task {task!r}; registered: {sorted(TASKS)}.{extra}")
        return TASKS[task]
    if callable(task):
        return function_task(task)
    raise MCPInputError(f"a sweep task is a registered name or a function, got {type(task).__name__}")


def check_options(spec: TaskSpec, options: Mapping[str, Any]) -> None:
    """:class:`~mcpkit.errors.UnknownOptionError` for an option ``spec.fn`` does not take; method and
    backend names are checked against :mod:`mcpkit.solving.registry` when given."""
    names = spec.option_names()
    if names is not None:
        bad = sorted(set(options) - set(names))
        if bad:
            raise UnknownOptionError(
                f"task {spec.name!r} does not take option(s) {bad}; it takes {list(names)}"
            )
    if "time_limit" in options:
        raise MCPInputError("give the time limit as sweep(..., time_limit=S), not as a task option")
    from mcpkit.solving.options import Backend, Method

    if "method" in options and isinstance(options["method"], str):
        Method.parse(options["method"])
    if "backend" in options and isinstance(options["backend"], str):
        Backend.parse(options["backend"])


# ------------------------------------------------------------------------ warming up
_WARMED: set[str] = set()


def warm_solvers() -> None:
    """Import the solve layer and the CasADi-backed methods, and load CasADi's IPOPT plugin.

    Run in the worker process before its first forked input (:attr:`TaskSpec.warm`): a child
    then starts with them, which cuts a small solve from ~0.2-0.8 s to ~0.02 s.
    """
    import importlib

    mods = ("mcpkit.command.cli", "mcpkit.frontends.solve", "mcpkit.formats.mcp_file",
            "mcpkit.orchestration.mpcc_solver", "mcpkit.lowering.casadi",
            "mcpkit.models.stepping")  # fmt: skip
    for mod in mods:
        with contextlib.suppress(Exception):
            importlib.import_module(mod)
    from mcpkit.solving import registry

    for entry in registry.METHODS.values():
        if "casadi" in entry.backends:
            with contextlib.suppress(Exception):
                entry.load()
    with contextlib.suppress(Exception):
        import casadi as ca

        x = ca.SX.sym("x")
        opts = {"print_time": False, "ipopt.print_level": 0, "ipopt.sb": "yes"}
        ca.nlpsol("mcpkit_sweep_warm", "ipopt", {"x": x, "f": x * x}, opts)


# ------------------------------------------------------------------------ solve-file
def solve_file(
    path: str | os.PathLike[str],
    *,
    method: str = "auto",
    backend: str = "auto",
    tol: float | None = None,
    time_limit: float | None = None,
) -> tuple[Any, dict[str, Any]]:
    """Solve one problem file as ``mcpkit solve FILE`` does: the result and its extra columns.

    MCP files (LCP JSON/NPZ/MTX, ``mcpkit-mcp``, MCPLIB ports) with :class:`mcpkit.Solver`, MPCC
    JSON with :func:`mcpkit.solve` and ``stationarity=True``, FCLIB files with
    :func:`mcpkit.models.fclib.solve_fclib_file`; ``time_limit`` bounds the whole call (loading
    included, :class:`mcpkit.sweep.solve_file.CommandBudget`). Extra columns: ``family`` and, when the file
    knows its solutions, ``known_solution_distance``.
    """
    from mcpkit.sweep.solve_file import solve_path

    result, extra = solve_path(path, method=method, backend=backend, tol=tol, time_limit=time_limit)
    return result, extra


def _file_columns(path: Any) -> dict[str, Any]:
    p = Path(path)
    return {"path": str(p), "name": p.name}


def _file_content(path: Any) -> Any:
    return Path(path)


def _check_file(path: Any) -> None:
    if not isinstance(path, (str, os.PathLike)):
        raise MCPInputError(f"solve-file inputs are file paths, got {type(path).__name__}: {path!r}")


# -------------------------------------------------------------------------- simulate
def simulate_task(model: Any, x0: Any, n_steps: int, **options: Any) -> Any:
    """:func:`mcpkit.models.stepping.simulate` ``(model, x0, n_steps, **options)`` without a progress bar."""
    from mcpkit.models.stepping import simulate

    options.setdefault("progress", False)
    return simulate(model, x0, n_steps, **options)


def _check_simulate(inp: Any) -> None:
    if not isinstance(inp, Mapping) or not {"model", "x0", "n_steps"} <= set(inp):
        raise MCPInputError("simulate inputs are mappings with keys model, x0, n_steps (and options)")


# ------------------------------------------------------------------------------ plan
_HORIZONS: dict[str, Any] = {}


def plan_task(horizon: Callable[[], Any], controls0: Any, design0: Any = (), **options: Any) -> Any:
    """:meth:`Horizon.solve` ``(controls0, design0, **options)`` on ``horizon()``.

    ``horizon`` is a picklable factory (a module-level function or :func:`functools.partial`)
    returning a :class:`mcpkit.mpec.horizon.Horizon` (or a ``(Horizon, ...)`` tuple); the
    horizon is built once per worker process and factory, then reused (multi-start planning).
    """
    from mcpkit.sweep.keys import canonical

    token = json.dumps(canonical(horizon), sort_keys=True)
    if token not in _HORIZONS:
        built = horizon()
        if len(_HORIZONS) >= 4:
            _HORIZONS.pop(next(iter(_HORIZONS)))
        _HORIZONS[token] = built[0] if isinstance(built, tuple) else built
    return _HORIZONS[token].solve(controls0, design0, **options)


def _check_plan(inp: Any) -> None:
    if not isinstance(inp, Mapping) or not {"horizon", "controls0"} <= set(inp):
        raise MCPInputError("plan inputs are mappings with keys horizon (a factory), controls0 (and design0)")
    if not callable(inp["horizon"]):
        raise MCPInputError(
            "a plan input's 'horizon' must be a picklable factory returning a Horizon "
            "(e.g. functools.partial(block_horizon, task)); Horizon objects hold CasADi expressions "
            "and cannot be sent to a worker"
        )


register_task(TaskSpec("solve-file", solve_file, "solve a problem file as `mcpkit solve FILE` does",
                       content=_file_content, columns=_file_columns, check_input=_check_file,
                       warm=warm_solvers))  # fmt: skip
register_task(TaskSpec("simulate", simulate_task, "time-step a step model (mcpkit.models.stepping.simulate)",
                       check_input=_check_simulate, soft_limit=False, warm=warm_solvers))  # fmt: skip
register_task(TaskSpec("plan", plan_task, "plan over a horizon (mcpkit.mpec.horizon.Horizon.solve)",
                       check_input=_check_plan, warm=warm_solvers))  # fmt: skip


# ---------------------------------------------------------------------------- runner
def input_columns(spec: TaskSpec, inp: Any) -> dict[str, Any]:
    """The columns an input contributes to its row (scalars as they are, the rest as JSON text)."""
    if spec.columns is not None:
        cols = spec.columns(inp)
    elif isinstance(inp, Mapping):
        cols = dict(inp)
    else:
        cols = {"input": inp}
    return {str(k): scalar(v) for k, v in cols.items()}


def scalar(v: Any) -> Any:
    """A value as a Parquet cell: numbers, strings, bools and None as they are, the rest as JSON text."""
    import numpy as np

    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, (int, float)):
        return v
    if isinstance(v, os.PathLike):
        return str(v)
    if callable(v) and hasattr(v, "__qualname__"):
        return f"{getattr(v, '__module__', '?')}:{v.__qualname__}"
    from mcpkit.formats.io import json_ready

    try:
        return json.dumps(json_ready(v), allow_nan=True)
    except (TypeError, ValueError):
        return repr(v)[:2000]


def call_task(spec: TaskSpec, inp: Any, options: Mapping[str, Any], time_limit: float | None) -> Any:
    """Call the task on one input (mappings spread into keywords)."""
    kw = dict(options)
    if time_limit is not None and spec.soft_limit:
        kw["time_limit"] = time_limit
    if isinstance(inp, Mapping) and spec.columns is None:
        return spec.fn(**inp, **kw)
    return spec.fn(inp, **kw)


def outcome_columns(out: Any) -> dict[str, Any]:
    """The result columns of a task's return value (see the module docstring)."""
    extra: Mapping[str, Any] = {}
    if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], Mapping):
        out, extra = out
    if isinstance(out, Mapping):
        summary = dict(out)
    elif callable(getattr(out, "summary", None)):
        summary = dict(out.summary())
    else:
        raise TypeError(
            "a sweep task must return an mcpkit result (with summary()) or a mapping, "
            f"got {type(out).__name__}"
        )
    summary.update(extra)
    if "solved" in summary:
        summary["solved"] = bool(summary["solved"])
    return {str(k): scalar(v) for k, v in summary.items()}


def error_columns(exc: BaseException) -> dict[str, Any]:
    """The row of a task that raised ``exc``: not solved, ``status="error"``, the error's type and message."""
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return {
        "solved": False,
        "status": ERROR_STATUS,
        "message": f"{type(exc).__name__}: {exc}"[:500],
        "error_type": type(exc).__name__,
        "error_message": str(exc)[:4000],
        "error_traceback": tb[-4000:],
    }


def time_limit_columns(limit: float, elapsed: float) -> dict[str, Any]:
    """The row of a task stopped from outside at :func:`hard_deadline`."""
    return {
        "solved": False,
        "status": TIME_LIMIT_STATUS,
        "message": f"NOT solved: stopped from outside after {elapsed:.1f} s (time limit {limit:g} s)",
        "wall_time_s": elapsed,
    }


def _unbounded(
    spec: TaskSpec, inp: Any, options: Mapping[str, Any], time_limit: float | None
) -> dict[str, Any]:
    try:
        return outcome_columns(call_task(spec, inp, options, time_limit))
    except Exception as exc:  # the task's failure is its row
        return error_columns(exc)


def run_row(
    spec: TaskSpec | str | Callable[..., Any],
    inp: Any,
    options: Mapping[str, Any],
    time_limit: float | None = None,
    hard: bool = True,
) -> dict[str, Any]:
    """Run one input and return its result columns (:data:`RESULT_COLUMNS` and the summary's own).

    Never raises for a failing task. Without ``time_limit`` (or with ``hard=False``: the task's
    own limit only) the task runs in this thread; with one, in a forked child stopped at
    :func:`hard_deadline` (:func:`run_bounded`).
    """
    t0 = time.perf_counter()
    spec = resolve_task(spec)
    if time_limit is None or not hard or not hasattr(os, "fork"):
        cols = _unbounded(spec, inp, options, time_limit)
    else:
        if spec.warm is not None and spec.name not in _WARMED:
            _WARMED.add(spec.name)
            spec.warm()
        cols = run_bounded(functools.partial(_unbounded, spec, inp, options, time_limit), time_limit)
    cols["task_time_s"] = time.perf_counter() - t0
    cols["worker"] = _worker_name()
    cols["finished_at"] = time.time()
    return cols


def run_rows(
    spec: TaskSpec | str | Callable[..., Any],
    inputs: list[Any],
    options: Mapping[str, Any],
    time_limit: float | None = None,
    hard: bool = True,
) -> list[dict[str, Any]]:
    """:func:`run_row` on each of ``inputs`` in turn (one Dask task for a chunk of short inputs)."""
    spec = resolve_task(spec)
    return [run_row(spec, x, options, time_limit, hard) for x in inputs]


def _worker_name() -> str:
    try:
        from distributed import get_worker

        return f"{get_worker().address} pid {os.getpid()}"
    except (ImportError, ValueError):
        return f"pid {os.getpid()}"


_LIBC: Any = None


def _libc() -> Any:
    """The C library (loaded once, in the worker, so that children do not load it each)."""
    global _LIBC
    if _LIBC is None:
        try:
            import ctypes

            _LIBC = ctypes.CDLL("libc.so.6", use_errno=True)
        except OSError:
            _LIBC = False
    return _LIBC


def _die_with_parent(libc: Any) -> None:
    """Linux: the child gets SIGKILL when the worker process dies (no orphaned solves)."""
    if libc:
        with contextlib.suppress(Exception):
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def run_bounded(call: Callable[[], dict[str, Any]], limit: float) -> dict[str, Any]:
    r"""``call()`` in a forked child, stopped (with its process group) at :func:`hard_deadline`.

    The child returns the row pickled through the pipe (:func:`mcpkit.frontends.forked.run_forked`).
    Stopped: :func:`time_limit_columns`; a child that died without answering (a crash in native
    code): an error row naming the signal or exit status. Ctrl-C kills the child and stops the
    sweep.
    """
    from mcpkit.frontends.forked import OnInterrupt, run_forked

    libc = _libc()
    t0 = time.perf_counter()

    def child(fd: int) -> int:
        _die_with_parent(libc)
        faulthandler.disable()  # a crash is reported in the row, not as a traceback dump
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        data = pickle.dumps(call())
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return 0

    with warnings.catch_warnings():  # fork in a threaded process: the child runs only `call`
        warnings.simplefilter("ignore", DeprecationWarning)
        run = run_forked(child, t0 + hard_deadline(limit), on_interrupt=OnInterrupt.RAISE, wait=False)
    elapsed = time.perf_counter() - t0
    if run.stopped:
        return time_limit_columns(limit, elapsed)
    if run.data:
        try:
            return pickle.loads(run.data)
        except Exception as exc:  # a truncated answer
            return error_columns(exc)
    return error_columns(ChildProcessError(f"the task's process died without an answer ({run.death()})"))
