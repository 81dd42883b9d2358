"""A cooperative, process-wide request to stop the running IPOPT solves (Ctrl-C in the CLI).

CasADi runs IPOPT in native code; a ``KeyboardInterrupt`` reaches Python only between calls,
and CasADi itself turns a pending SIGINT into a failed IPOPT run that a homotopy then treats as
one failed step and goes on. The command line instead *requests* a stop: the IPOPT iteration
monitor (:class:`mcpkit.homotopy.ipopt.IpoptNLP` built with a monitor) sees :func:`requested`
at the next iteration and IPOPT returns ``User_Requested_Stop``; the engine's step hook then
raises ``KeyboardInterrupt`` and the engine reports its best point as ``interrupted``.

The monitor costs about 45 microseconds per IPOPT iteration (about 15 % of an iteration of a
ten-variable NLP), so solvers get one only when a solve has a time limit, for the polish, or
while :func:`watching` is on (the command line turns it on for the whole command).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

__all__ = ["clear", "is_interrupt", "request", "requested", "watching", "watched"]

_REQUEST = threading.Event()
_WATCHING = 0


def request() -> None:
    """Ask every monitored IPOPT run to stop at its next iteration (thread- and signal-safe)."""
    _REQUEST.set()


def requested() -> bool:
    """Whether a stop was requested (and not cleared)."""
    return _REQUEST.is_set()


def is_interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` means "interrupted": a ``KeyboardInterrupt``, or the ``RuntimeError`` CasADi
    raises when one lands inside its own code (its message names ``KeyboardInterrupt``)."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    return isinstance(exc, RuntimeError) and "KeyboardInterrupt" in str(exc)


def clear() -> None:
    """Forget a request (a new command starts)."""
    _REQUEST.clear()


def watched() -> bool:
    """Whether solvers built now should carry the iteration monitor (inside :func:`watching`)."""
    return _WATCHING > 0


@contextlib.contextmanager
def watching() -> Iterator[None]:
    """Within the block every IPOPT solver built gets the iteration monitor, so :func:`request`
    stops it within one iteration; on entry and exit earlier requests are cleared."""
    global _WATCHING
    clear()
    _WATCHING += 1
    try:
        yield
    finally:
        _WATCHING -= 1
        clear()
