r"""Run a function in a forked child process, with a hard deadline enforced from outside.

Both ``mcpkit solve --time-limit T`` and ``mcpkit.sweep(..., time_limit=T)`` promise that a
solve ends by :math:`1.1\,T + 1` s even when native code (an IPOPT factorisation, a CasADi NL
import, a GAMS process) ignores every interrupt. The only bound that holds then is a separate
process that can be killed, so both run the work in a forked child and wait here:

1. a pipe is opened and the process forks; the child moves into its own process group (so that
   its own children, e.g. PATH's GAMS processes, are stopped with it), asks the kernel (Linux:
   ``prctl(PR_SET_PDEATHSIG)``) to kill it when the parent dies, even by SIGKILL, runs
   ``child(write_fd)`` and leaves with :func:`os._exit` and the status that returns (1 if it
   raised), without interpreter teardown;
2. the parent reads the pipe until end-of-file, waking at least every :data:`POLL` seconds;
   a child that has exited while something else (a grandchild it left behind) still holds the
   pipe open ends the wait too, with whatever it wrote;
3. at the deadline the whole process group gets SIGKILL; so does it when the parent is left by
   an exception, and when the child closed the pipe but has not exited by then (its answer
   stands);
4. Ctrl-C in the parent (``KeyboardInterrupt``) is either *forwarded* (SIGINT to the child's
   group, which then has ``interrupt_grace`` seconds to report what it has before its group is
   killed; the command line does this) or *raised* after the group is killed (sweeps do this,
   so that the run stops);
5. SIGTERM to the parent while it waits in the main thread kills the child's group and raises
   :class:`Terminated` (a ``SystemExit`` with status 143), so that a terminated parent never
   leaves its child running past its deadline (holding the caller's pipe open).

The outcome is a :class:`ForkedRun`: the bytes the child wrote, whether it was stopped, and its
wait status. What the bytes mean (printed output, a pickled row) is the caller's business.
Where :func:`os.fork` does not exist the callers run in-process (see :func:`can_fork`).
"""

from __future__ import annotations

import contextlib
import enum
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

__all__ = ["POLL", "ForkedRun", "OnInterrupt", "Terminated", "can_fork", "run_forked"]

POLL = 0.5
"""Longest wait between two looks at the pipe and the child (seconds)."""

#: Children that were killed or answered but were still exiting (tearing down a copy of the
#: parent's address space takes milliseconds); reaped without blocking by later calls.
_EXITING: set[int] = set()


class Terminated(SystemExit):
    """SIGTERM reached the parent while it waited; the child's group was killed.

    A ``SystemExit`` whose code is the shell's status of a process ended by SIGTERM (143), so
    a caller that does not catch it leaves quietly with that status.
    """


class OnInterrupt(enum.Enum):
    """What a ``KeyboardInterrupt`` in the waiting parent does."""

    FORWARD = "forward"
    """Send SIGINT to the child's process group and keep waiting for its answer."""
    RAISE = "raise"
    """Kill the child's process group and re-raise the ``KeyboardInterrupt``."""


@dataclass(frozen=True)
class ForkedRun:
    """What came back from :func:`run_forked`."""

    data: bytes
    """Everything the child wrote to its pipe (complete unless :attr:`stopped`)."""
    stopped: bool
    """The deadline passed before the answer was complete, and the child's group was killed."""
    status: int | None
    """The child's wait status (:func:`os.waitpid`), or ``None`` when it was left to be reaped
    later (``wait=False`` and the child had not exited yet)."""
    interrupted: bool = False
    """Ctrl-C reached the parent and was forwarded to the child (:attr:`OnInterrupt.FORWARD`);
    with :attr:`stopped`, the child did not answer within the grace period."""

    @property
    def exit_code(self) -> int | None:
        """The exit status when the child exited normally, else ``None``."""
        if self.status is None or not os.WIFEXITED(self.status):
            return None
        return os.WEXITSTATUS(self.status)

    def death(self) -> str:
        """How the child ended, in words (``"killed by signal 9"``, ``"exit status 1"``)."""
        if self.stopped:
            return "stopped after Ctrl-C" if self.interrupted else "stopped at the deadline"
        if self.status is None:
            return "still exiting"
        if os.WIFSIGNALED(self.status):
            return f"killed by signal {os.WTERMSIG(self.status)}"
        return f"exit status {os.WEXITSTATUS(self.status)}"


def can_fork() -> bool:
    """Whether this platform can run :func:`run_forked` (POSIX ``fork``)."""
    return hasattr(os, "fork")


def _reap_exiting() -> None:
    """Collect the earlier children of :data:`_EXITING` that have exited by now."""
    for other in list(_EXITING):
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(other, os.WNOHANG)[0] == 0:
                continue
        _EXITING.discard(other)


def _poll(pid: int) -> int | None:
    """``pid``'s wait status if it has exited (collecting it), else ``None``."""
    done, status = os.waitpid(pid, os.WNOHANG)
    return status if done == pid else None


def _kill_group(pid: int, sig: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(pid, sig)


#: ``prctl`` option: the signal the kernel sends this process when its parent dies.
_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """In the child (Linux): be killed by the kernel when ``parent`` dies, however it dies."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):  # no libc prctl: the parent's own handlers still apply
        return
    if os.getppid() != parent:  # the parent died before the request was in place
        os._exit(1)


def _on_sigterm(signum: int, _frame: Any) -> None:
    raise Terminated(128 + signum)


def _catch_sigterm() -> Any:
    """Install :func:`_on_sigterm` when called in the main thread; the previous handler, or
    ``False`` when nothing was installed."""
    if threading.current_thread() is not threading.main_thread():
        return False
    try:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except (ValueError, OSError):
        return False
    return signal.SIG_DFL if previous is None else previous


def _child_main(child: Callable[[int], int], read_fd: int, write_fd: int, parent: int) -> NoReturn:
    """In the forked child: its own process group, die with ``parent``, run ``child(write_fd)``
    and leave with its exit status (1 on an exception, whose traceback goes to stderr) without
    interpreter teardown."""
    code = 1
    try:
        os.close(read_fd)
        os.setpgid(0, 0)
        _die_with_parent(parent)
        code = int(child(write_fd))
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _await_exit(pid: int, wait: bool, deadline: float) -> int | None:
    """The wait status of a child whose answer is complete (end of file): with ``wait``, given
    until ``deadline`` to exit, then killed; ``None`` when it has not exited (then collected by a
    later call)."""
    status = _poll(pid)
    while status is None and wait and time.perf_counter() < deadline:
        time.sleep(0.005)
        status = _poll(pid)
    if status is None:
        if wait:
            _kill_group(pid, signal.SIGKILL)  # it closed the pipe but lingers past the deadline
        _EXITING.add(pid)
    return status


def run_forked(
    child: Callable[[int], int],
    deadline: float,
    *,
    on_interrupt: OnInterrupt = OnInterrupt.FORWARD,
    wait: bool = True,
    interrupt_grace: float = 2.0,
) -> ForkedRun:
    """Run ``child(write_fd)`` in a forked child process and stop it at ``deadline``.

    Parameters
    ----------
    child
        Runs in the child with the pipe's write end; writes its answer there (closing it or not)
        and returns the exit status. An exception gives exit status 1 (its traceback goes to
        the child's stderr).
    deadline
        :func:`time.perf_counter` value at which the child's process group is killed.
    on_interrupt
        What Ctrl-C in the parent does (:class:`OnInterrupt`).
    wait
        Wait (until ``deadline`` at most, then kill it) for the child's exit status after its
        answer. ``False``: collect it if it has already exited, otherwise reap it on a later
        call, as for a killed child. A child that closed the pipe without writing is always
        waited for, since its status is then the only answer.
    interrupt_grace
        With :attr:`OnInterrupt.FORWARD`: seconds the child has after a forwarded Ctrl-C to
        answer before its group is killed (the deadline moves closer, never further).

    Returns
    -------
    ForkedRun
        The bytes written, whether the child was stopped or interrupted, and its wait status.

    Raises
    ------
    Terminated
        SIGTERM reached the parent (waiting in the main thread); the child's group was killed.
    """
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: run, answer, leave without interpreter teardown
        _child_main(child, read_fd, write_fd, parent)
    previous_sigterm = _catch_sigterm()
    os.close(write_fd)
    with contextlib.suppress(OSError):
        os.setpgid(pid, pid)  # also from this side, so killpg never races the child's setpgid
    chunks: list[bytes] = []
    stopped = interrupted = False
    status: int | None = None
    collected = False
    try:
        try:
            while True:
                left = deadline - time.perf_counter()
                if left <= 0:
                    stopped = True
                    break
                try:
                    ready, _, _ = select.select([read_fd], [], [], min(left, POLL))
                except KeyboardInterrupt:
                    if on_interrupt is OnInterrupt.RAISE:
                        raise
                    _kill_group(pid, signal.SIGINT)  # the child reports what it has
                    interrupted = True
                    deadline = min(deadline, time.perf_counter() + interrupt_grace)
                    continue
                if ready:
                    data = os.read(read_fd, 1 << 16)
                    if not data:
                        break
                    chunks.append(data)
                    continue
                done, code = os.waitpid(pid, os.WNOHANG)
                if done == pid:  # gone, though something else holds the pipe: take what it wrote
                    status, collected = code, True
                    while select.select([read_fd], [], [], 0)[0] and (data := os.read(read_fd, 1 << 16)):
                        chunks.append(data)
                    break
        except BaseException:  # never leave the child running
            stopped = True
            raise
        finally:
            os.close(read_fd)
            if stopped:
                _kill_group(pid, signal.SIGKILL)
                if not collected:
                    _EXITING.add(pid)  # killed: collected by a later call, never waited for
            _reap_exiting()
        if not stopped and not collected:
            status = _await_exit(pid, wait or not chunks, deadline)
    except Terminated:  # raised while waiting for the exit: the child must not outlive us either
        _kill_group(pid, signal.SIGKILL)
        _EXITING.add(pid)
        raise
    finally:
        if previous_sigterm is not False:
            signal.signal(signal.SIGTERM, previous_sigterm)
    return ForkedRun(b"".join(chunks), stopped, status, interrupted)
