r"""Live progress of a solve, from the one source of progress events: the engines' step records.

Every engine that iterates (the semismooth Newton method, the homotopy loop of the IPOPT
reformulations, their polish and fallbacks) records each step :math:`k` as a
:class:`~mcpkit.solving.result.HomotopyStep` — the phase, the parameter :math:`t_k` (or
:math:`\mu_k`) and the residual :math:`r_k` measured on the original problem — in a trace built
by :func:`mcpkit.solving.options.progress_trace`. That trace hands each step to

* :attr:`SolveOptions.progress <mcpkit.solving.options.SolveOptions.progress>` when it is a
  callable (``mcpkit solve`` draws its live line this way);
* a :class:`StepLog` on ``stdout`` when ``verbose`` is on (one line per step; Pyomo's ``tee=True``
  opens the same log with :func:`reporting`);
* the displays opened around the running solve by :func:`display` (a :class:`StepBar`, the
  ``tqdm`` line of ``progress=True``) or :func:`reporting`.

**The terminal rule** (:func:`shows_on`), the same as the command line's live line: a display is
drawn on ``stderr`` only when it is a terminal (or the code runs in a Jupyter kernel, where
``tqdm.auto`` draws a widget), unless forced with ``progress="always"``.
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from mcpkit.solving.result import HomotopyStep

#: Values of :attr:`SolveOptions.progress <mcpkit.solving.options.SolveOptions.progress>` that ask
#: for the ``tqdm`` line: ``True`` (on a terminal or in a notebook) and ``"always"`` (forced).
BAR_SETTINGS = (True, "always")

Reporter = Callable[["HomotopyStep"], None]

#: The reporters of the displays open around the running code (:func:`reporting`, :func:`display`).
AMBIENT: contextvars.ContextVar[tuple[Reporter, ...]] = contextvars.ContextVar("mcpkit_progress", default=())
_BAR_OPEN: contextvars.ContextVar[bool] = contextvars.ContextVar("mcpkit_progress_bar", default=False)


def step_line(step: HomotopyStep) -> str:
    """One step as a log line: phase, step index, residual on the original problem, parameter,
    the inner solver's status and iterations, wall time."""
    return (
        f"{step.phase:<8s} {step.k:4d}  residual {step.residual:9.3e}  parameter {step.parameter:8.2e}  "
        f"{step.inner_status} ({step.inner_iterations} it, {step.wall_time_s:.3f} s)"
    )


def in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (``tqdm.auto`` then draws a widget)."""
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    return type(shell).__name__ == "ZMQInteractiveShell"


def shows_on(stream: Any, setting: Any) -> bool:
    """The terminal rule: a display for ``setting`` is drawn on ``stream`` when forced
    (``"always"``), or when asked for (``True``) and ``stream`` is a terminal or a notebook's.
    Never on a stream that is ``None`` (``sys.stderr`` under ``pythonw`` or some daemons) or
    closed: there is nowhere to draw, and the solve goes on without a display."""
    if stream is None or getattr(stream, "closed", False):
        return False
    if setting == "always":
        return True
    if setting is not True:
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        tty = callable(isatty) and bool(isatty())
    except (OSError, ValueError):  # a closed stream
        tty = False
    return tty or in_notebook()


class StepLog:
    """Writes :func:`step_line` of each step to ``stream`` (``None``: the current ``sys.stdout``),
    after flushing the C library's buffers so that a native solver's own output stays in order."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream

    def __call__(self, step: HomotopyStep) -> None:
        out = self.stream if self.stream is not None else sys.stdout
        _flush_c_stdio()
        out.write(step_line(step) + "\n")
        out.flush()


class StepBar:
    """A ``tqdm.auto`` line (a widget in notebooks) on ``stderr``: steps done, the phase, the
    residual and the parameter of the last step, the elapsed time."""

    def __init__(self, label: str, stream: TextIO | None = None) -> None:
        from tqdm.auto import tqdm

        self.t0 = time.perf_counter()
        self.bar = tqdm(
            total=None, desc=label, unit="step", file=stream or sys.stderr, dynamic_ncols=True, leave=False
        )

    def __call__(self, step: HomotopyStep) -> None:
        self.bar.set_postfix_str(
            f"{step.phase}, residual {step.residual:.2e}, parameter {step.parameter:.1e}", refresh=False
        )
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()


def reporters(options: Any) -> tuple[Reporter, ...]:
    """Who hears each step of a solve with ``options``: ``options.progress`` if a callable, a
    :class:`StepLog` if ``options.verbose``, and the displays open around the running solve."""
    found: list[Reporter] = []
    report = getattr(options, "progress", None)
    if callable(report):
        found.append(report)
    if getattr(options, "verbose", False):
        found.append(StepLog())
    return (*found, *AMBIENT.get())


@contextlib.contextmanager
def reporting(*extra: Reporter) -> Iterator[None]:
    """Within the block every step recorded in this context also goes to ``extra``."""
    token = AMBIENT.set((*AMBIENT.get(), *extra))
    try:
        yield
    finally:
        AMBIENT.reset(token)


#: The context of a block without a bar (reusable: it does nothing on entry or exit).
_NO_BAR = contextlib.nullcontext()


def display(setting: Any, label: str) -> contextlib.AbstractContextManager[None]:
    """A :class:`StepBar` for the block when ``setting`` (``SolveOptions.progress``) asks for one
    and :func:`shows_on` says it is drawn; nothing inside a block that already has a bar.

    Without a bar it returns one shared do-nothing context: a time step's solve (a few hundred
    microseconds) does not pay for a generator-based context manager it does not use.
    """
    if setting not in BAR_SETTINGS or _BAR_OPEN.get() or not shows_on(sys.stderr, setting):
        return _NO_BAR
    return _bar(label)


@contextlib.contextmanager
def _bar(label: str) -> Iterator[None]:
    """The :class:`StepBar` of :func:`display`, open for the block."""
    bar = StepBar(label)
    token = _BAR_OPEN.set(True)
    try:
        with reporting(bar):
            yield
    finally:
        _BAR_OPEN.reset(token)
        bar.close()


def _flush_c_stdio() -> None:
    """Flush the C library's ``stdout`` buffers (what native solvers ``printf``)."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None).fflush(None)
