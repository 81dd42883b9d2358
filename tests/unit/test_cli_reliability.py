"""The command line as a careless or hostile user meets it (issue 26, items 3 and 4, CLI part).

Limits that mean nothing (``--time-limit inf``), ``--out`` paths that cannot be written, noise
from native solvers in ``--json`` output, file modes and symbolic links, a prompt exit, SIGTERM,
Ctrl-C and a reader that leaves early. Each test names the defect it guards against. The
subprocess tests use small problems and generous bounds (seconds, not milliseconds).
"""

from __future__ import annotations

import errno
import importlib
import json
import math
import os
import pty
import resource
import select
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import h5py
import numpy as np
import pytest

from mcpkit.command import cli
from mcpkit.command.cli import EXIT_BAD_INPUT, EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, EXIT_TERMINATED, main
from mcpkit.formats.io import save_lcp_json, save_lcp_npz, write_solution

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
LCP = str(EXAMPLES / "lcp.json")
ENV = os.environ | {"PYTHONPATH": str(ROOT)}

posix_only = pytest.mark.skipif(not hasattr(os, "fork"), reason="signals and forking are POSIX only")


def _no_solve(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any solve fail loudly, so a test proves it was refused before one."""

    def boom(*_: Any, **__: Any) -> None:
        raise AssertionError("a solver was built")

    monkeypatch.setattr(importlib.import_module("mcpkit.frontends.solve").Solver, "__init__", boom)


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mcpkit: error: "), err
    return lines[0]


def _hard_lcp(path: Path, n: int = 300) -> Path:
    """A dense random LCP that ``--method scholtes`` works on for tens of seconds (first step ~2 s)."""
    rng = np.random.default_rng(3)
    return save_lcp_npz(path, rng.standard_normal((n, n)), rng.standard_normal(n))


def _mcpkit(*args: str) -> list[str]:
    return [sys.executable, "-m", "mcpkit.command.cli", *args]


def _children(pid: int) -> list[int]:
    """Process ids whose parent is ``pid`` (Linux ``/proc``)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


def _alive(pid: int) -> bool:
    try:
        return (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]) != "Z"
    except OSError:
        return False


def _wait_for(predicate: Any, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return bool(predicate())


@pytest.fixture
def umask() -> Iterator[None]:
    old = os.umask(0o027)
    try:
        yield
    finally:
        os.umask(old)


# ------------------------------------------------------------------------------ 1. time limit
@pytest.mark.parametrize("limit", ["inf", "1e300", "1e10"])
def test_time_limit_inf_is_no_limit(limit: str, capfd: pytest.CaptureFixture[str]) -> None:
    """Regression: ``--time-limit inf`` and ``1e300`` crashed the watchdog thread (``OverflowError:
    timestamp out of range``), and ``inf`` then failed as 'time_limit must be > 0'."""
    code = main(["solve", LCP, "--time-limit", limit, "--json"])
    out, err = capfd.readouterr()
    assert code == 0, err
    assert "Traceback" not in err and "Error" not in err, err
    assert json.loads(out)["solved"] is True
    assert cli.CommandBudget(float(limit), 0.0).limit is None


def test_help_says_inf_is_no_limit(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["solve", "--help"])
    assert "inf" in capsys.readouterr().out


# ---------------------------------------------------------------------- 2. --out that fails
@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc")
def test_out_in_proc_is_refused_before_solving(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression: ``--out /proc/sol.json`` solved, then lost the solution in a traceback."""
    _no_solve(monkeypatch)
    assert main(["solve", LCP, "--out", "/proc/sol.json"]) == EXIT_BAD_INPUT
    line = _one_error_line(capsys.readouterr().err)
    assert "cannot create a file in the folder /proc" in line


def test_out_name_too_long_is_refused_before_solving(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _no_solve(monkeypatch)
    name_max = os.pathconf(tmp_path, "PC_NAME_MAX")
    out = tmp_path / ("s" * (name_max - 4) + ".json")
    assert main(["solve", LCP, "--out", str(out)]) == EXIT_BAD_INPUT
    assert f"the file system allows at most {name_max}" in _one_error_line(capsys.readouterr().err)


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root may write anywhere")
def test_out_in_read_only_folder_is_refused_before_solving(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _no_solve(monkeypatch)
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        assert main(["solve", LCP, "--out", str(folder / "sol.json")]) == EXIT_BAD_INPUT
    finally:
        folder.chmod(0o700)
    assert "cannot create a file in the folder" in _one_error_line(capsys.readouterr().err)


def test_long_name_the_file_system_accepts_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression: a 251-character name failed after the solve, for its temporary sibling
    ``.{name}.XXXXXXXX.json`` (266 characters)."""
    out = tmp_path / ("s" * 246 + ".json")
    assert main(["solve", LCP, "--out", str(out)]) == 0
    assert json.loads(out.read_text())["solved"] is True
    assert [p.name for p in tmp_path.iterdir()] == [out.name]  # no temporary file left


@pytest.mark.parametrize("as_json", [True, False])
def test_write_that_fails_after_the_solve_prints_the_solution(
    as_json: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression: a write failing after the solve (a file size limit, a full disk) ended in a
    traceback and the solution was lost."""

    def full(*_: Any) -> None:
        raise OSError(errno.EFBIG, "File too large")

    monkeypatch.setattr(importlib.import_module("mcpkit.formats.io"), "_atomic_write", full)
    out = tmp_path / "sol.json"
    out.write_text('{"solved": true}')  # an older result, which must not look current
    code = main(["solve", LCP, "--out", str(out), *(["--json"] if as_json else [])])
    cap = capsys.readouterr()
    assert code == EXIT_BAD_INPUT
    line = _one_error_line(cap.err)
    assert "could not be written (File too large)" in line and "printed on stdout" in line
    assert "older file there was removed" in line and not out.exists()
    if as_json:
        z = json.loads(cap.out)["solution"]["z"]["z"]
    else:
        z = json.loads(cap.out.strip().splitlines()[-1])["z"]["z"]
    np.testing.assert_allclose(z, [1 / 3, 1 / 3], atol=1e-8)


@posix_only
@pytest.mark.parametrize("limit", [[], ["--time-limit", "30"]])
def test_file_size_limit_after_the_solve(limit: list[str], tmp_path: Path) -> None:
    """Regression: under ``ulimit -f 1`` the written file exceeded the limit after the solve."""
    n = 40  # the solution file is above 1 KiB
    lcp = save_lcp_json(tmp_path / "lcp.json", np.eye(n), -np.ones(n))
    out = tmp_path / "sol.json"

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))

    run = subprocess.run(
        _mcpkit("solve", str(lcp), "--out", str(out), "--json", *limit),
        capture_output=True,
        text=True,
        timeout=120,
        env=ENV,
        preexec_fn=small_files,
    )
    assert run.returncode == EXIT_BAD_INPUT, run.stderr
    assert "(File too large)" in _one_error_line(run.stderr)
    np.testing.assert_allclose(json.loads(run.stdout)["solution"]["z"]["z"], np.ones(n), atol=1e-8)
    assert not out.exists()


# -------------------------------------------------------------------- 3. --json is one object
NOISY = """
import importlib, os, sys
solve_module = importlib.import_module("mcpkit.frontends.solve")
original = solve_module.Solver.solve
def noisy(self, *args, **kwargs):
    os.write(1, b"Running HiGHS 1.7.0 (a native library writing to file descriptor 1)\\n")
    print("and Python's print")
    return original(self, *args, **kwargs)
solve_module.Solver.solve = noisy
"""


def test_json_stdout_is_one_object_when_solvers_print(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """Regression: ``--method fb --json`` printed 15 HiGHS lines (written by C to fd 1, past
    ``redirect_stdout``) before the JSON object."""
    namespace: dict[str, Any] = {}
    exec(NOISY, namespace)  # patches mcpkit.frontends.solve.Solver.solve in this process
    try:
        code = main(["solve", LCP, "--json"])
    finally:
        solve_module = importlib.import_module("mcpkit.frontends.solve")
        solve_module.Solver.solve = namespace["original"]
    out, err = capfd.readouterr()
    assert code == 0
    assert json.loads(out)["solved"] is True and len(out.strip().splitlines()) == 1
    assert "Running HiGHS" in err and "and Python's print" in err  # kept, on stderr


@posix_only
def test_json_stdout_is_one_object_in_the_forked_run(tmp_path: Path) -> None:
    script = NOISY + "from mcpkit.command.cli import main\nraise SystemExit(main())\n"
    run = subprocess.run(
        [sys.executable, "-c", script, "solve", LCP, "--json", "--time-limit", "30"],
        capture_output=True,
        text=True,
        timeout=120,
        env=ENV,
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["solved"] is True
    assert "Running HiGHS" in run.stderr


# ----------------------------------------------------- 4. modes, links, stale files
def test_out_file_gets_the_umask(tmp_path: Path, umask: None, capsys: pytest.CaptureFixture[str]) -> None:
    """Regression: solution files were 0600 (``tempfile.mkstemp``'s mode), whatever the umask."""
    for name in ("sol.json", "sol.npz"):
        assert main(["solve", LCP, "--out", str(tmp_path / name)]) == 0
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o640, name


def test_symlinked_out_is_written_through(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Regression: ``os.replace`` put a regular file in place of a symbolic link ``--out``."""
    (tmp_path / "results").mkdir()
    target = tmp_path / "results" / "sol.json"
    target.write_text("{}")
    link = tmp_path / "latest.json"
    link.symlink_to(target)
    assert main(["solve", LCP, "--out", str(link)]) == 0
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert json.loads(target.read_text())["solved"] is True
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "results" / "new.json")
    assert main(["solve", LCP, "--out", str(dangling)]) == 0
    assert dangling.is_symlink() and json.loads((tmp_path / "results" / "new.json").read_text())["solved"]


@pytest.mark.parametrize("suffix", [".json", ".npz"])
def test_time_limit_stop_replaces_an_older_out_file(
    suffix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression: after a time-limit stop the older ``--out`` file stayed, looking current."""
    out = tmp_path / f"sol{suffix}"
    assert main(["solve", LCP, "--out", str(out)]) == 0
    assert main(["solve", LCP, "--out", str(out), "--time-limit", "1e-9"]) == 1
    assert "written (the verdict, no solution)" in capsys.readouterr().out
    if suffix == ".json":
        doc = json.loads(out.read_text())
        assert doc["solved"] is False and doc["summary"]["status"] == "time_limit" and "z" not in doc
    else:
        with np.load(out) as npz:
            assert not bool(npz["solved"]) and "z.z" not in npz.files


@posix_only
def test_hard_stop_from_outside_replaces_an_older_out_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The forked run stopped at its hard bound writes the time-limit verdict to ``--out``."""

    def stuck(args: Any) -> int:
        import ctypes

        ctypes.CDLL(None).sleep(60)  # native code that checks no signal
        return 0

    out = tmp_path / "sol.json"
    out.write_text('{"solved": true}')
    args = SimpleNamespace(
        func=stuck, budget=cli.CommandBudget(0.3, time.perf_counter()), json=True, file=LCP, out=str(out)
    )
    assert cli._run_bounded(args) == 1
    assert json.loads(capsys.readouterr().out)["status"] == "time_limit"
    doc = json.loads(out.read_text())
    assert doc["solved"] is False and doc["summary"]["status"] == "time_limit"


def test_fclib_verdict_without_a_point(tmp_path: Path) -> None:
    outcome = cli.TimeLimitOutcome("fclib", "loading the file", 1.0, 1.2)
    out = write_solution(tmp_path / "sol.h5", outcome, source=EXAMPLES / "fclib_2contacts.hdf5", arrays={})
    with h5py.File(out, "r") as f:
        assert "solution" not in f and "fclib_local" in f and not bool(f["mcpkit"].attrs["solved"])


# ------------------------------------------------------------------------------ 5. prompt exit
EXIT_PROBE = """
import atexit, os, sys, time
class Teardown:
    def __del__(self):
        os.write(2, b"interpreter teardown ran\\n")
keep = Teardown()
atexit.register(lambda: os.write(2, b"atexit ran\\n"))
from mcpkit.command.cli import main
main()
"""


@posix_only
@pytest.mark.parametrize("limit", [[], ["--time-limit", "30"]])
def test_program_exits_right_after_the_verdict(limit: list[str]) -> None:
    """Regression: the process ended 0.3-0.5 s after printing its verdict, tearing down the
    solver libraries' modules. ``atexit`` handlers still run."""
    proc = subprocess.Popen(
        [sys.executable, "-c", EXIT_PROBE, "solve", LCP, *limit],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    assert proc.stdout is not None and proc.stderr is not None
    last = time.monotonic()
    for _ in proc.stdout:
        last = time.monotonic()
    proc.wait(timeout=120)
    gap = time.monotonic() - last
    err = proc.stderr.read().decode()
    assert proc.returncode == 0, err
    assert "atexit ran" in err and "interpreter teardown ran" not in err
    assert gap < 1.0, gap


# ----------------------------------------------------------------------------- 6. SIGTERM
def _start_forked_solve(tmp_path: Path) -> tuple[subprocess.Popen[bytes], int]:
    lcp = _hard_lcp(tmp_path / "hard.npz")
    proc = subprocess.Popen(
        _mcpkit("solve", str(lcp), "--method", "scholtes", "--time-limit", "40", "--json"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    assert _wait_for(lambda: bool(_children(proc.pid)), 60), "the forked child never started"
    (child,) = _children(proc.pid)
    time.sleep(1.0)  # loading or solving by now
    return proc, child


@posix_only
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_sigterm_takes_the_forked_child_with_it(tmp_path: Path) -> None:
    """Regression: SIGTERM to ``mcpkit solve ... --time-limit 40`` left its forked child
    running to its deadline, holding the caller's pipe open."""
    proc, child = _start_forked_solve(tmp_path)
    try:
        proc.send_signal(signal.SIGTERM)
        t0 = time.monotonic()
        out, err = proc.communicate(timeout=10)  # end of file: nobody holds the pipe any more
        assert time.monotonic() - t0 < 5
        assert proc.returncode == EXIT_TERMINATED and out == b""
        assert err.decode().strip() == "mcpkit: terminated (SIGTERM); the solve was stopped"
        assert _wait_for(lambda: not _alive(child), 5)
    finally:
        proc.kill()
        if _alive(child):
            os.kill(child, signal.SIGKILL)


@posix_only
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux only")
def test_sigkill_of_the_parent_takes_the_forked_child_with_it(tmp_path: Path) -> None:
    proc, child = _start_forked_solve(tmp_path)
    try:
        proc.kill()
        proc.communicate(timeout=10)
        assert _wait_for(lambda: not _alive(child), 5)
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)


# ------------------------------------------------------------------------------ 7. Ctrl-C
def test_ctrl_c_while_loading_is_exit_130_without_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression: Ctrl-C while loading or lowering ended in a KeyboardInterrupt traceback."""

    def interrupted(*_: Any, **__: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(importlib.import_module("mcpkit.formats.mcp_file"), "load_any_mcp", interrupted)
    out = tmp_path / "sol.json"
    out.write_text('{"solved": true}')
    assert main(["solve", LCP, "--out", str(out)]) == EXIT_INTERRUPTED
    cap = capsys.readouterr()
    assert cap.err.strip() == "mcpkit: interrupted (Ctrl-C)"
    doc = json.loads(out.read_text())  # the older file no longer looks current
    assert doc["solved"] is False and doc["summary"]["status"] == "interrupted"


def sigint_as_at_a_terminal() -> None:
    """In a child before ``exec``: SIGINT back to its default disposition (see the caller)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _run_until_progress(cmd: list[str], sig: int) -> tuple[int, float, str, str]:
    """Run ``cmd`` with stderr on a terminal (so it draws its progress line); at the first
    engine step send ``sig``; the exit status, seconds from the signal to the exit, stdout and
    stderr."""
    master, slave = pty.openpty()
    # Ctrl-C as at a terminal: a shell starts a background job (``pytest &``, CI runners) with
    # SIGINT ignored, and an ignored SIGINT is inherited, so the child would never see it
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=slave, env=ENV, preexec_fn=sigint_as_at_a_terminal
    )
    os.close(slave)
    err = b""
    try:
        end = time.monotonic() + 60
        while b"step" not in err and time.monotonic() < end and proc.poll() is None:
            if select.select([master], [], [], 0.1)[0]:
                err += os.read(master, 4096)
        assert b"step" in err, err.decode(errors="replace")
        proc.send_signal(sig)
        t0 = time.monotonic()
        out, _ = proc.communicate(timeout=15)
        took = time.monotonic() - t0
        while select.select([master], [], [], 0.2)[0]:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            err += chunk
    finally:
        proc.kill()
        os.close(master)
    return proc.returncode, took, out.decode(), err.decode(errors="replace")


@posix_only
@pytest.mark.parametrize("limit", [[], ["--time-limit", "40"]])
def test_ctrl_c_while_solving_stops_promptly(limit: list[str], tmp_path: Path) -> None:
    """Regression: Ctrl-C while IPOPT ran was swallowed (CasADi turned it into a failed IPOPT
    run and the homotopy went on), or ended in a traceback; now exit 130 within about a
    second, with the (interrupted) result."""
    lcp = _hard_lcp(tmp_path / "hard.npz")
    code, took, out, err = _run_until_progress(
        _mcpkit("solve", str(lcp), "--method", "scholtes", "--json", *limit), signal.SIGINT
    )
    assert code == EXIT_INTERRUPTED, err
    assert took < 5, took
    assert "Traceback" not in err and "mcpkit: interrupted" in err
    doc = json.loads(out)
    assert doc["status"] == "interrupted"
    # the best point so far, not an empty result: the IPOPT monitor stopped the subproblem
    # (mcpkit.solving.stop) and the homotopy returned its best point
    assert doc["solution_status"] != "no_solution", doc
    assert math.isfinite(doc["comp_residual"]), doc


STUBBORN = """
import importlib, os, time
solve_module = importlib.import_module("mcpkit.frontends.solve")
def stubborn(self, *args, **kwargs):  # a solver that swallows every interrupt
    announced = False
    while True:
        try:
            if not announced:
                announced = True
                os.write(2, b"solving step\\n")
            time.sleep(60)
        except KeyboardInterrupt:
            pass
solve_module.Solver.solve = stubborn
from mcpkit.command.cli import main
raise SystemExit(main())
"""


@posix_only
@pytest.mark.parametrize("limit", [[], ["--time-limit", "40"]])
def test_ctrl_c_leaves_even_when_the_solver_ignores_it(limit: list[str]) -> None:
    code, took, out, err = _run_until_progress(
        [sys.executable, "-c", STUBBORN, "solve", LCP, *limit], signal.SIGINT
    )
    assert code == EXIT_INTERRUPTED, err
    assert took < 1.0 + 4, took
    assert "Traceback" not in err and "did not stop" in err and out == ""


# ---------------------------------------------------------------------------- 8. broken pipe
@posix_only
@pytest.mark.parametrize(
    "argv",
    [
        ["solve", LCP, "--json", "--with-solution"],
        ["solve", LCP, "--json", "--with-solution", "--time-limit", "30"],
        ["info"],  # `mcpkit info | head -1`
    ],
)
def test_reader_that_leaves_early_is_no_traceback(argv: list[str]) -> None:
    """Regression: ``mcpkit solve ... | head -1`` could end in a BrokenPipeError traceback."""
    proc = subprocess.Popen(
        _mcpkit(*argv),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    assert proc.stdout is not None
    proc.stdout.close()  # the reader is gone before anything is written
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == EXIT_BROKEN_PIPE and err == b"", err.decode()
