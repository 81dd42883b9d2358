r"""The sweep driver: one task over many inputs on a Dask cluster, rows streamed to Parquet.

For inputs :math:`x_1, \dots, x_n` and options :math:`o`, :func:`sweep` computes the key
:math:`k_i = \mathrm{key}(\text{task}, x_i, o)` (:mod:`mcpkit.sweep.keys`), skips the keys already
in ``out`` (resume), submits the rest to Dask workers, and writes each finished row
(:func:`mcpkit.sweep.tasks.run_row`) to the results folder (:mod:`mcpkit.sweep.sink`) as it
arrives. Inputs go to Dask in chunks (:class:`Chunker`: one input per task for solves of seconds,
batches for inputs of milliseconds), and at most a window of :math:`\max(32, 8 \cdot
\text{threads})` tasks is in flight, so a sweep of :math:`10^6` inputs does not flood the
scheduler and Ctrl-C has little to cancel.

Faults: a worker that dies mid-task has its task re-run on another worker by the scheduler
(Dask's ``allowed-failures``, ``retries`` on the cluster :func:`sweep` starts); a task that
still cannot finish is an error row (``KilledWorker``). Futures lost to other Dask-level
errors are submitted again, up to ``retries`` times. The driver writes each key once, so no
row is lost or duplicated. Ctrl-C flushes what has finished, cancels the rest and re-raises
:class:`KeyboardInterrupt`; the folder is valid and the next call with ``resume=True`` runs only
what is missing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import glob
import logging
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import CancelledError
from pathlib import Path
from typing import Any

from mcpkit.errors import MCPInputError, ProblemFileError
from mcpkit.problems.arrays import as_count
from mcpkit.solving.options import time_limit_seconds
from mcpkit.solving.progress import shows_on
from mcpkit.sweep.keys import row_key
from mcpkit.sweep.progress import SweepProgress
from mcpkit.sweep.sink import CORE_SCHEMA, ParquetSink, read_results
from mcpkit.sweep.tasks import (
    TASKS,
    TaskSpec,
    check_options,
    error_columns,
    input_columns,
    resolve_task,
    run_rows,
)

#: Suffixes of problem files picked up from a folder given to :func:`expand_files`.
PROBLEM_SUFFIXES = (".json", ".npz", ".mtx", ".hdf5", ".h5")

#: Default number of Dask-level resubmissions / worker deaths tolerated per input.
DEFAULT_RETRIES = 3


def expand_files(patterns: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Problem files from paths, folders and globs (``*``, ``?``, ``[...]``, ``**``), in order, once each.

    A folder gives its files with a problem suffix (:data:`PROBLEM_SUFFIXES`; Matrix Market
    companions ``NAME_q.mtx`` ... excluded). A pattern that matches nothing or a path that does
    not exist is a :class:`~mcpkit.errors.ProblemFileError`.
    """
    out: list[Path] = []
    seen: set[Path] = set()

    def add(p: Path) -> None:
        r = p.resolve()
        if r not in seen:
            seen.add(r)
            out.append(p)

    for pat in patterns:
        s = os.fspath(pat)
        if glob.has_magic(s):
            hits = sorted(glob.glob(s, recursive=True))
            if not hits:
                raise ProblemFileError(f"no file matches {s!r}")
            for h in hits:
                if Path(h).is_file():
                    add(Path(h))
        elif Path(s).is_dir():
            for h in sorted(Path(s).iterdir()):
                if h.is_file() and h.suffix.lower() in PROBLEM_SUFFIXES and not _is_companion(h):
                    add(h)
        elif Path(s).exists():
            add(Path(s))
        else:
            raise ProblemFileError(f"no such file: {s}")
    return out


def _is_companion(p: Path) -> bool:
    stem = p.stem
    if p.suffix.lower() == ".mtx":
        return any(stem.endswith(s) for s in ("_q", "_b", "_lb", "_ub"))
    return p.name.endswith((".q.npy", ".lb.npy", ".ub.npy"))


def _row(key: str, spec: TaskSpec, inp: Any, result: Mapping[str, Any]) -> dict[str, Any]:
    """The row: key, task, input columns (renamed ``input_<name>`` where they clash), results."""
    row: dict[str, Any] = {"key": key, "task": spec.name}
    reserved = set(CORE_SCHEMA.names) | set(result)
    for name, value in input_columns(spec, inp).items():
        row[f"input_{name}" if name in reserved else name] = value
    row.update(result)
    return row


def _local_client(workers: int | None, retries: int) -> tuple[Any, Any]:
    """A :class:`distributed.LocalCluster` of single-threaded worker processes and its client.

    The worker processes are started with SIGINT ignored (they inherit it): a Ctrl-C at a
    terminal reaches the whole process group, and the workers would each print Dask's tracebacks
    of a broken connection; the sweep itself (this process) stops them when it stops.
    """
    import dask
    from distributed import Client, LocalCluster

    n = workers or os.cpu_count() or 1
    with dask.config.set({"distributed.scheduler.allowed-failures": retries}), _sigint_ignored():
        cluster = LocalCluster(
            n_workers=n,
            threads_per_worker=1,  # IPOPT (and MUMPS inside it) is not thread-safe
            processes=True,
            dashboard_address=None,
            # a task's error is its row's; what the workers log at ERROR is their own plumbing
            # (a heartbeat to a scheduler already stopped by Ctrl-C or SIGTERM) and not the user's
            silence_logs=logging.CRITICAL,
            preload=["mcpkit.sweep.tasks"],  # import mcpkit once per worker, at start
        )
    return cluster, Client(cluster)


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored in the block (in the main thread; elsewhere nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _connect(address: str) -> Any:
    """A client of the scheduler at ``address``; a typed error when it cannot be reached."""
    from distributed import Client

    try:
        return Client(address, timeout=30)
    except (OSError, TimeoutError, ValueError) as exc:
        raise MCPInputError(f"cannot reach the Dask scheduler {address!r}: {exc}") from None


def sweep(
    task: str | Callable[..., Any],
    inputs: Iterable[Any],
    *,
    client: Any = None,
    workers: int | None = None,
    scheduler: str | None = None,
    time_limit: float | None = None,
    out: str | os.PathLike[str] = "results.parquet",
    resume: bool = True,
    progress: bool | str = True,
    retries: int = DEFAULT_RETRIES,
    chunk: int | None = None,
    hard_limit: bool = True,
    batch_rows: int = 256,
    **options: Any,
) -> Any:
    r"""Run ``task`` on every input on a Dask cluster; one row per input, streamed to Parquet.

    .. math::
        \text{row}_i = (k_i,\ x_i,\ \text{summary}(\text{task}(x_i; o)))\quad\text{or}\quad
        (k_i,\ x_i,\ \text{error}),\qquad k_i = \mathrm{key}(\text{task}, x_i, o)

    Parameters
    ----------
    task
        A registered name (``"solve-file"``, ``"simulate"``, ``"plan"``;
        :data:`mcpkit.sweep.tasks.TASKS`) or a picklable function returning an mcpkit result
        (anything with ``summary()``), optionally with a mapping of extra columns as a pair, or
        a mapping of columns. A mapping input is passed as keywords (``task(**x, **options)``),
        any other input as the first argument (``task(x, **options)``).
    inputs
        The inputs (for ``"solve-file"``: paths, folders or glob patterns). Inputs with equal
        keys run once.
    client, scheduler
        An existing :class:`distributed.Client`, or a scheduler address
        (``"tcp://host:8786"``) to connect to. Default: a :class:`distributed.LocalCluster` with
        ``workers`` single-threaded worker processes (default one per core), closed at the end.
    time_limit
        Seconds per input: the task's own ``time_limit`` (when it takes one), and a hard stop
        of the input's forked process at :math:`1.1\,T + 1` s; such rows have
        ``status="time_limit"``. ``None``: no limit, the task runs in the worker's thread.
    out
        The results folder (a Parquet dataset of part files; :func:`mcpkit.sweep.read_results`).
    resume
        Skip inputs whose key is already in ``out`` (``False``: start ``out`` afresh).
    progress
        A progress bar on stderr (solved, not solved, errors, running, rate) when stderr is a
        terminal or a notebook (:func:`mcpkit.solving.progress.shows_on`); ``"always"`` forces it.
    retries
        Worker deaths tolerated per input on the cluster this call starts (Dask's
        ``allowed-failures``), and resubmissions after other Dask-level failures.
    chunk
        Inputs per Dask task: ``None`` (default) adapts to the measured time per input
        (:class:`Chunker`: short inputs are batched, solves of seconds run one per task), an
        integer fixes it.
    hard_limit
        With ``time_limit``: also stop each input from outside (a forked child per input,
        some milliseconds each). ``False``: only the task's own ``time_limit`` (no fork; a task
        that does not take one then has no limit).
    batch_rows
        Rows per part file (also flushed every 2 s).
    **options
        The task's options (``method="scholtes"``, ``tol=1e-6`` ...), part of every key.

    Returns
    -------
    pandas.DataFrame
        One row per distinct input, in input order: ``key``, ``task``, the input's columns,
        then :data:`~mcpkit.sweep.tasks.RESULT_COLUMNS` and the summary's own fields.
        ``df.attrs["sweep"]`` holds ``submitted`` (inputs run now), ``skipped`` (found in
        ``out``: done by an earlier run), ``resubmitted`` (inputs submitted again after their
        task was lost to the cluster), ``workers_lost`` (workers that left the cluster during
        the run), ``wall_time_s`` and ``out``.

    Raises
    ------
    MCPInputError
        (before anything runs) an unknown task or option, no inputs, an input the task cannot
        take, a missing file, bad ``time_limit``/``workers``/``retries``, ``client`` and
        ``scheduler`` both given, or an ``out`` that is a file.
    KeyboardInterrupt
        After Ctrl-C, once the finished rows are written.
    """
    t_start = time.perf_counter()
    spec = resolve_task(task)
    check_options(spec, options)
    time_limit = time_limit_seconds(time_limit)
    _check_cluster_arguments(client, scheduler, workers, retries, chunk)
    order, by_key = _distinct_inputs(spec, inputs, dict(options) | {"time_limit": time_limit})
    sink = ParquetSink(out, resume=resume, batch_rows=batch_rows)
    have = sink.keys() if resume else set()
    todo = [k for k in order if k not in have]
    bar = SweepProgress(len(order), len(order) - len(todo), enabled=shows_on(sys.stderr, progress))
    ref: Any = spec.name if TASKS.get(spec.name) is spec else spec.fn
    cluster = own_client = None
    faults = DriveFaults()
    try:
        if todo:
            if client is None:
                cluster, own_client = _open_client(scheduler, workers, retries)
                client = own_client
            _drive(
                client, ref, spec, todo, by_key, options, time_limit, hard_limit, retries, chunk, sink, bar,
                faults,
            )  # fmt: skip
    finally:
        for opened in (bar, sink, own_client, cluster):  # what this call opened, in that order
            if opened is not None:
                opened.close()
    df = _ordered_rows(sink.path, spec, order, by_key)
    df.attrs["sweep"] = {
        "submitted": len(todo),
        "skipped": len(order) - len(todo),
        "resubmitted": faults.resubmitted,
        "workers_lost": len(faults.workers_lost),
        "wall_time_s": time.perf_counter() - t_start,
        "out": str(sink.path),
    }
    return df


def _check_cluster_arguments(
    client: Any, scheduler: Any, workers: int | None, retries: int, chunk: int | None
) -> None:
    """The checks of :func:`sweep`'s cluster arguments (an :class:`MCPInputError` each)."""
    if workers is not None:
        as_count(workers, "workers")
    as_count(retries, "retries", 0)
    if chunk is not None:
        as_count(chunk, "chunk")
    if client is not None and scheduler is not None:
        raise MCPInputError("give client= or scheduler=, not both")
    if scheduler is not None and not isinstance(scheduler, str):
        raise MCPInputError(f"scheduler must be an address such as 'tcp://host:8786', got {scheduler!r}")


def _distinct_inputs(
    spec: TaskSpec, inputs: Iterable[Any], key_options: dict[str, Any]
) -> tuple[list[str], dict[str, Any]]:
    """``(keys in input order, input of each key)``: the inputs (files of folders and patterns
    for ``"solve-file"``) checked by the task, one per key :math:`k_i`."""
    if isinstance(inputs, (str, os.PathLike)) or isinstance(inputs, Mapping):
        inputs = [inputs]
    items = list(inputs)
    if spec.name == "solve-file":
        items = (
            expand_files(items) if items and all(isinstance(x, (str, os.PathLike)) for x in items) else items
        )
    if not items:
        raise MCPInputError("sweep() got no inputs")
    if spec.check_input is not None:
        for x in items:
            spec.check_input(x)
    order: list[str] = []
    by_key: dict[str, Any] = {}
    for x in items:
        k = row_key(spec.name, spec.content(x), key_options)
        if k not in by_key:
            by_key[k] = x
            order.append(k)
    return order, by_key


def _open_client(scheduler: str | None, workers: int | None, retries: int) -> tuple[Any, Any]:
    """``(cluster or None, client)``: connected to ``scheduler``, else a local cluster's."""
    if scheduler is not None:
        return None, _connect(scheduler)
    return _local_client(workers, retries)


def _ordered_rows(path: Path, spec: TaskSpec, order: list[str], by_key: dict[str, Any]) -> Any:
    """The rows of ``order``'s keys from the results at ``path``, in that order: ``key``,
    ``task``, the input's columns, then the rest."""
    df = read_results(path)
    df = df[df["key"].isin(by_key)].set_index("key").loc[order].reset_index()
    names = {n for x in by_key.values() for n in input_columns(spec, x)}
    first = [c for c in df.columns if c in names or (c.startswith("input_") and c[6:] in names)]
    return df[["key", "task", *first, *(c for c in df.columns if c not in {"key", "task", *first})]]


@dataclasses.dataclass
class DriveFaults:
    """What the cluster did to a sweep's tasks (:func:`_drive` fills it; ``df.attrs["sweep"]``)."""

    #: Inputs submitted again because their Dask task was lost (not failed by the task itself).
    resubmitted: int = 0
    #: Addresses of workers seen during the run and gone at a later look.
    workers_lost: set[str] = dataclasses.field(default_factory=set)
    #: Workers seen so far (asked at most every :data:`WORKER_POLL_SECONDS`).
    seen: set[str] = dataclasses.field(default_factory=set)
    last_look: float = -math.inf

    def look(self, client: Any, force: bool = False) -> None:
        """Note the workers now in the cluster; any seen before and absent now is lost."""
        now = time.monotonic()
        if not force and now - self.last_look < WORKER_POLL_SECONDS:
            return
        self.last_look = now
        try:
            current = set(client.nthreads())
        except Exception:  # a scheduler that does not answer: look again later
            return
        self.workers_lost |= self.seen - current
        self.seen |= current


#: How often the driver asks the scheduler which workers it has (seconds).
WORKER_POLL_SECONDS = 1.0


class Chunker:
    r"""How many inputs go into one Dask task.

    Fixed (``chunk`` an integer), or adaptive (``chunk=None``): one input per task until rows
    report their times, then :math:`c = \operatorname{clip}(\lfloor T / \bar t \rfloor, 1, C)` with
    :math:`\bar t` the running mean time per input, :math:`T` = :data:`CHUNK_TARGET_S` and
    :math:`C` = :data:`CHUNK_MAX`: inputs of a few milliseconds are batched so Dask's own cost per
    task (about a millisecond) is shared, solves of seconds run one per task. Never more than
    :math:`\lceil r / (2\,w) \rceil` of the :math:`r` remaining inputs for :math:`w` worker threads,
    so the tail still spreads over all workers.
    """

    def __init__(self, chunk: int | None, threads: int) -> None:
        self.fixed = chunk
        self.threads = max(1, threads)
        self.total_s = 0.0
        self.count = 0

    def record(self, rows: list[dict[str, Any]]) -> None:
        """Add finished rows' ``task_time_s`` to the running mean."""
        for r in rows:
            t = r.get("task_time_s")
            if isinstance(t, (int, float)) and math.isfinite(t):
                self.total_s += float(t)
                self.count += 1

    def size(self, remaining: int) -> int:
        """Inputs for the next task."""
        if self.fixed is not None:
            return self.fixed
        if self.count == 0:
            return 1
        mean = max(self.total_s / self.count, 1e-6)
        c = int(min(CHUNK_MAX, max(1, CHUNK_TARGET_S // mean)))
        return max(1, min(c, math.ceil(remaining / (2 * self.threads))))


#: Adaptive chunks aim at this many seconds of work per Dask task.
CHUNK_TARGET_S = 0.2

#: Largest adaptive chunk.
CHUNK_MAX = 256


def _drive(
    client: Any,
    ref: Any,
    spec: TaskSpec,
    todo: list[str],
    by_key: dict[str, Any],
    options: Mapping[str, Any],
    time_limit: float | None,
    hard: bool,
    retries: int,
    chunk: int | None,
    sink: ParquetSink,
    bar: SweepProgress,
    faults: DriveFaults | None = None,
) -> None:
    """Submit ``todo`` in chunks through a window of futures; write each row once as it finishes.

    ``faults`` counts resubmitted inputs and workers lost on the way.
    """
    from distributed import as_completed

    try:
        from distributed.scheduler import KilledWorker
    except ImportError:  # pragma: no cover
        KilledWorker = RuntimeError  # noqa: N806

    faults = DriveFaults() if faults is None else faults
    faults.look(client, force=True)
    threads = sum(client.nthreads().values()) or 1
    window = max(32, 8 * threads)
    queue = list(reversed(todo))
    attempts: dict[str, int] = {}
    meta: dict[str, list[str]] = {}  # future key -> row keys
    written: set[str] = set()
    sizer = Chunker(chunk, threads)

    def submit(n: int) -> list[Any]:
        futs = []
        while queue and len(futs) < n:
            ks = [queue.pop() for _ in range(min(sizer.size(len(queue)), len(queue)))]
            a = max(attempts.get(k, 0) for k in ks)
            fut = client.submit(
                run_rows, ref, [by_key[k] for k in ks], dict(options), time_limit, hard,
                key=f"mcpkit-sweep-{ks[0]}-{len(ks)}-{a}", pure=False,
            )  # fmt: skip
            meta[fut.key] = ks
            futs.append(fut)
        return futs

    def write(k: str, result: dict[str, Any]) -> None:
        if k in written:  # never two rows for one key
            return
        written.add(k)
        row = _row(k, spec, by_key[k], result)
        sink.add(row)
        bar.row(row)

    ac = as_completed(submit(window), with_results=False)
    try:
        while not ac.is_empty():
            if not ac.has_ready():
                with ac.thread_condition:
                    ac.thread_condition.wait(timeout=0.1)
                sink.tick()
                bar.poll(client)
                faults.look(client)
                continue
            batch = ac.next_batch(block=False)
            done = [f for f in batch if f.status == "finished"]
            for fut, rows in zip(done, client.gather(done) if done else [], strict=True):
                ks = meta.pop(fut.key)
                if not isinstance(rows, list) or len(rows) != len(ks):
                    err = error_columns(TypeError(f"the worker returned {type(rows).__name__}, not rows"))
                    rows = [err] * len(ks)
                sizer.record(rows)
                for k, r in zip(ks, rows, strict=True):
                    write(k, r)
            for fut in batch:
                if fut.status == "finished":
                    continue
                ks = meta.pop(fut.key)
                exc: BaseException
                try:
                    exc = fut.exception() if fut.status == "error" else CancelledError(f"task {fut.status}")
                except BaseException as e:  # a cancelled future raises here
                    exc = e
                for k in ks:
                    attempts[k] = attempts.get(k, 0) + 1
                if not isinstance(exc, KilledWorker) and max(attempts[k] for k in ks) <= retries:
                    queue.extend(reversed(ks))  # lost to the cluster, not to the task: run again
                    faults.resubmitted += len(ks)
                    faults.look(client, force=True)
                    continue
                if isinstance(exc, KilledWorker):
                    faults.look(client, force=True)
                for k in ks:
                    write(k, error_columns(exc))
            for fut in batch:
                fut.release()
            for fut in submit(window - ac.count()):
                ac.add(fut)
            bar.poll(client)
        faults.look(client, force=True)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            # distributed's sync() interrupted before its future exists logs a NameError from its
            # cancel callback on the IO loop's thread (a distributed bug, timing-dependent): the
            # caller stopped the sweep and hears one line from it, not that traceback
            logging.getLogger("tornado.application").setLevel(logging.CRITICAL)
        futs = list(getattr(ac, "futures", ()))
        if futs:
            try:
                client.cancel(futs)
            except Exception:  # a client already gone: nothing to cancel
                logging.getLogger(__name__).debug("could not cancel the sweep's futures", exc_info=True)
        raise
