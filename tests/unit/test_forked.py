"""The forked run with a hard deadline (:mod:`mcpkit.frontends.forked`), with tiny Python children."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from mcpkit.frontends.forked import OnInterrupt, can_fork, run_forked

pytestmark = pytest.mark.skipif(not can_fork(), reason="forking is POSIX only")


def _write(fd: int, data: bytes) -> None:
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def test_answer_and_exit_status_come_back() -> None:
    def child(fd: int) -> int:
        _write(fd, b"x" * 200_000)  # more than one pipe buffer
        return 3

    run = run_forked(child, time.perf_counter() + 10)
    assert not run.stopped and run.data == b"x" * 200_000
    assert run.exit_code == 3 and run.death() == "exit status 3"


def test_deadline_kills_the_child_and_its_group() -> None:
    def child(fd: int) -> int:
        # a grandchild in the same process group, which must die with it
        proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        os.write(fd, str(proc.pid).encode() + b"\n")  # a partial answer: the pipe stays open
        time.sleep(30)
        return 0

    t0 = time.perf_counter()
    run = run_forked(child, t0 + 0.8)
    assert run.stopped and time.perf_counter() - t0 < 3
    grandchild = int(run.data.split()[0])
    time.sleep(0.2)
    with pytest.raises(ProcessLookupError):  # gone (or a zombie of the killed child: reaped by init)
        for _ in range(20):
            os.kill(grandchild, 0)
            with open(f"/proc/{grandchild}/stat") as f:
                if f.read().split()[2] == "Z":
                    raise ProcessLookupError
            time.sleep(0.1)


def test_child_that_closes_the_pipe_but_lingers_is_killed_at_the_deadline() -> None:
    def child(fd: int) -> int:
        _write(fd, b"done")
        time.sleep(30)
        return 0

    t0 = time.perf_counter()
    run = run_forked(child, t0 + 0.8)
    assert not run.stopped and run.data == b"done" and time.perf_counter() - t0 < 3


def test_exception_in_the_child_is_exit_status_one() -> None:
    def child(fd: int) -> int:
        raise RuntimeError("boom")

    run = run_forked(child, time.perf_counter() + 10)
    assert not run.stopped and run.data == b"" and run.exit_code == 1


def test_child_dying_without_an_answer() -> None:
    def child(fd: int) -> int:
        os.kill(os.getpid(), signal.SIGKILL)
        return 0

    run = run_forked(child, time.perf_counter() + 10)
    assert not run.stopped and run.data == b""
    assert run.death() == f"killed by signal {int(signal.SIGKILL)}"


def test_grandchild_holding_the_pipe_does_not_block_the_wait() -> None:
    def child(fd: int) -> int:
        os.write(fd, b"answer")
        if os.fork() == 0:  # inherits the pipe and keeps it open long after the child is gone
            time.sleep(20)
            os._exit(0)
        return 0

    t0 = time.perf_counter()
    run = run_forked(child, t0 + 15)
    assert not run.stopped and run.data == b"answer" and run.exit_code == 0
    assert time.perf_counter() - t0 < 5


def test_ctrl_c_raise_kills_the_child(monkeypatch: pytest.MonkeyPatch) -> None:
    import mcpkit.frontends.forked as forked

    calls = {"n": 0}
    real = forked.select.select

    def interrupted(*a, **k):  # the first wait is interrupted by Ctrl-C
        calls["n"] += 1
        if calls["n"] == 1:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(forked.select, "select", interrupted)

    def child(fd: int) -> int:
        time.sleep(30)
        return 0

    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        run_forked(child, t0 + 20, on_interrupt=OnInterrupt.RAISE)
    assert time.perf_counter() - t0 < 3


def test_ctrl_c_forward_lets_the_child_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    import mcpkit.frontends.forked as forked

    state = {"ready": False, "sent": False}
    real = forked.select.select

    def interrupted(*a, **k):  # Ctrl-C on the first wait after the child said it is ready
        if state["ready"] and not state["sent"]:
            state["sent"] = True
            raise KeyboardInterrupt
        out = real(*a, **k)
        state["ready"] = state["ready"] or bool(out[0])
        return out

    monkeypatch.setattr(forked.select, "select", interrupted)

    def child(fd: int) -> int:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # whatever earlier tests set
        try:
            os.write(fd, b"ready;")
            time.sleep(30)
        except KeyboardInterrupt:
            _write(fd, b"partial")
            return 5
        return 0

    run = run_forked(child, time.perf_counter() + 20, on_interrupt=OnInterrupt.FORWARD)
    assert not run.stopped and run.data == b"ready;partial" and run.exit_code == 5
