"""The fuzz corpus of 2026-11-28 (issue 43, part A): the checks that need no solver.

Each test names its ``MANIFEST.txt`` line in ``../shared/data/fuzz-2026-11-28``. Tests that read the
corpus skip when it is absent; every behaviour is also tested on data made here.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from mcpkit.engines.newton_contact import contact_errors, siconos_error
from mcpkit.errors import MCPInputError, ProblemFileError
from mcpkit.formats.fclib_hdf5 import read_fclib_local, write_fclib_local
from mcpkit.formats.io import _atomic_write, check_solution_path
from mcpkit.models.fclib import FCLIBProblem, _reference, friction_residual, worst_contact_error
from tests.conftest import SHARED_DATA

FUZZ = SHARED_DATA / "fuzz-2026-11-28"
needs_corpus = pytest.mark.skipif(
    not FUZZ.is_dir(), reason=f"{FUZZ} not present (the fuzz corpus of issue 43, see ../shared/README.md)"
)

#: fclib_hugeq_hides_contact.hdf5: two decoupled contacts, W = I.
HUGE_Q = np.array([1e12, 0.0, 0.0, -1.0, 0.0, 0.0])
HUGE_MU = np.array([0.5, 0.5])


# ------------------------------------------------------------ fclib_hugeq_hides_contact.hdf5
def test_per_contact_error_sees_what_the_normalised_error_hides() -> None:
    r = np.zeros(6)  # what the default route returned: contact 2 interpenetrates (u_n = -1)
    u = r + HUGE_Q
    assert siconos_error(HUGE_Q, HUGE_MU, r, u) <= 1e-11  # the normalised error is blind
    e = contact_errors(HUGE_Q, HUGE_MU, r, u)
    assert e[0] == 0.0 and e[1] == pytest.approx(1.0, rel=1e-12)
    r_fb = np.array([0.0, 0, 0, 12.051676214711309, 0, 0])  # --method fb: r_n = 12.05, u_n = 11.05
    assert worst_contact_error(np.eye(6), HUGE_Q, HUGE_MU, r_fb) > 0.5
    r_ok = np.array([0.0, 0, 0, 1.0, 0, 0])  # the solution: r_2n = 1, u_2n = 0
    assert worst_contact_error(np.eye(6), HUGE_Q, HUGE_MU, r_ok) == 0.0


def test_contact_errors_are_scale_free_and_nan_is_infinite() -> None:
    rng = np.random.default_rng(3)
    q, mu, r = rng.normal(size=9), rng.uniform(0.1, 1, 3), rng.normal(size=9)
    W = np.eye(9) + 0.1 * rng.normal(size=(9, 9))
    W = W @ W.T
    u = W @ r + q
    np.testing.assert_allclose(contact_errors(1e6 * q, mu, 1e6 * r, 1e6 * u), contact_errors(q, mu, r, u))
    r[4] = np.nan
    assert np.isinf(contact_errors(q, mu, r, W @ np.nan_to_num(r) + q)[1])


def test_one_siconos_error_implementation() -> None:
    """``friction_residual`` (models) is the engines' ``siconos_error``."""
    rng = np.random.default_rng(7)
    for nc in (1, 4, 40):  # both the per-contact and the vectorised path of siconos_error
        W = rng.normal(size=(3 * nc, 3 * nc))
        W = W @ W.T + np.eye(3 * nc)
        q, mu, r = rng.normal(size=3 * nc), rng.uniform(0, 1, nc), rng.normal(size=3 * nc)
        assert friction_residual(W, q, mu, r) == siconos_error(q, mu, r, W @ r + q)


# ------------------------------------------------ fclib_zero_contacts / pile_dump_zero_contacts
@needs_corpus
@pytest.mark.parametrize("name", ["fclib_zero_contacts.hdf5", "pile_dump_zero_contacts.hdf5"])
def test_zero_contact_corpus_files_are_refused(name: str) -> None:
    with pytest.raises(ProblemFileError, match="0 contacts") as info:
        read_fclib_local(FUZZ / name)
    assert "\n" not in str(info.value) and str(info.value).count(name) == 1


def test_zero_contact_file_is_neither_written_nor_read(tmp_path: Path) -> None:
    path = tmp_path / "empty.hdf5"
    with pytest.raises(ProblemFileError, match="0 contacts"):
        write_fclib_local(path, np.zeros((0, 0)), np.zeros(0), np.zeros(0))
    assert not path.exists()
    import h5py

    write_fclib_local(path, np.eye(3), np.array([-1.0, 0, 0]), np.array([0.3]))
    with h5py.File(path, "r+") as f:  # the corpus file's shape: W 0x0, q and mu empty
        g = f["fclib_local"]
        for key, value in (("W/m", 0), ("W/n", 0)):
            g[key][...] = value
        for key in ("vectors/q", "vectors/mu", "W/x", "W/i"):
            del g[key]
            g[key] = np.zeros(0, dtype=float if key != "W/i" else np.int32)
        del g["W/p"]
        g["W/p"] = np.zeros(1, dtype=np.int32)
    with pytest.raises(ProblemFileError, match="0 contacts"):
        read_fclib_local(path)


# ------------------------------------------------------------------- fclib_solution_inf.hdf5
@pytest.mark.parametrize("bad", ["r", "u"])
def test_non_finite_reference_is_reported_as_null_without_warnings(bad: str) -> None:
    W, q, mu = np.eye(3), np.array([-1.0, 0, 0]), np.array([0.3])
    r, u = np.array([1.0, 0, 0]), np.zeros(3)
    if bad == "r":
        r = np.full(3, np.inf)
    else:
        u = np.array([np.nan, 0, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ref, stored, consistency = _reference(FCLIBProblem(W, q, mu, r, u))
    assert stored is None and consistency is None
    assert (ref is None) == (bad == "r")
    assert _reference(FCLIBProblem(W, q, mu, np.array([1.0, 0, 0]), np.zeros(3))) == (0.0, 0.0, 0.0)


@needs_corpus
def test_corpus_reference_inf_loads() -> None:
    d = read_fclib_local(FUZZ / "fclib_solution_inf.hdf5")
    assert d.r_ref is not None and not np.isfinite(d.r_ref).all()


# ------------------------------------------------------------------ out_replaces_special_file.sh
ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit.command.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
    )


@pytest.mark.parametrize("through_link", [False, True])
def test_out_onto_a_fifo_is_refused_and_the_fifo_stays(tmp_path: Path, through_link: bool) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    out = fifo
    if through_link:
        out = tmp_path / "link.json"
        out.symlink_to(fifo)
    with pytest.raises(MCPInputError, match="is a FIFO"):
        check_solution_path(out, "mcp")
    run = _cli("solve", str(ROOT / "examples" / "lcp.json"), "--out", str(out), "--no-progress")
    lines = run.stderr.splitlines()
    assert run.returncode == 2 and len(lines) == 1 and lines[0].startswith("mcpkit: error: "), run.stderr
    assert "FIFO" in lines[0] and run.stdout == ""
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # never renamed over


def test_write_refuses_a_fifo_made_after_the_check(tmp_path: Path) -> None:
    fifo = tmp_path / "late.json"
    os.mkfifo(fifo)
    with pytest.raises(MCPInputError, match="nothing was written"):
        _atomic_write(fifo, lambda t: t.write_text("{}"))
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["late.json"]  # no temporary file left


def test_empty_out_is_refused_not_read_as_dot() -> None:
    with pytest.raises(MCPInputError, match="--out is empty"):
        check_solution_path("", "mcp")
    run = _cli("solve", str(ROOT / "examples" / "lcp.json"), "--out", "", "--no-progress")
    assert run.returncode == 2 and run.stderr.strip() == "mcpkit: error: --out is empty; give a file name"


# ------------------------------------------------------------------- mpcc_G_structural_zero.json
def test_structural_zero_pair_functions_are_stored_densely() -> None:
    import casadi as ca

    from mcpkit.mpcc import MPCC

    x = ca.SX.sym("x", 2)
    m = MPCC.from_casadi(x, ca.SX(1, 1), x[1], f=(x[0] - 1) ** 2, g=ca.SX(2, 1), lbg=0, ubg=0)
    for expr in (m.G, m.H, m.g, m.f):
        assert expr.is_dense()
    assert float(ca.evalf(ca.substitute(m.G, x, ca.DM([3, 4])))) == 0.0


@needs_corpus
def test_corpus_structural_zero_loads_dense() -> None:
    from mcpkit.mpcc import load_mpcc_json

    m = load_mpcc_json(FUZZ / "mpcc_G_structural_zero.json")
    assert m.G.is_dense() and m.g.is_dense()


# ---------------------------------------------------------------------------- mcp_F_nan_at_z0.json
def test_F_nan_at_the_start_is_refused_before_solving(tmp_path: Path) -> None:
    import casadi as ca

    from mcpkit.formats.mcp_file import load_any_mcp, save_mcp_file

    z, p = ca.SX.sym("z", 2), ca.SX.sym("p", 0)
    F = ca.Function("F", [z, p], [ca.vertcat(ca.sqrt(z[0]) - 1, z[1] - 0.5)])
    path = save_mcp_file(tmp_path / "nan.json", F, -np.inf, np.inf, z0=[-1.0, 0.0])
    with pytest.raises(ProblemFileError, match=r"F is NaN at the start point z0 \(entries \[0\]\)"):
        load_any_mcp(path)
    ok = save_mcp_file(tmp_path / "ok.json", F, -np.inf, np.inf, z0=[4.0, 0.0])
    assert load_any_mcp(ok)[0].n == 2


@needs_corpus
def test_corpus_F_nan_at_z0_exits_2_with_one_line() -> None:
    run = _cli("solve", str(FUZZ / "mcp_F_nan_at_z0.json"))
    lines = run.stderr.splitlines()
    assert run.returncode == 2 and len(lines) == 1, run.stderr[-2000:]
    assert lines[0].startswith("mcpkit: error: ") and "F is NaN at the start point z0" in lines[0]


def test_no_display_on_a_missing_or_closed_stream() -> None:
    import io

    from mcpkit.solving.progress import shows_on

    closed = io.StringIO()
    closed.close()
    assert not shows_on(None, "always") and not shows_on(closed, "always") and not shows_on(closed, True)
    assert shows_on(io.StringIO(), "always")


# ------------------------------------------------------------------- sweep_truncated_part.parquet
def _bad_part(folder: Path, kind: str) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from mcpkit.sweep.sink import write_rows

    write_rows(folder, [{"key": "a", "task": "t", "solved": True}])  # one good part
    good = next(folder.glob("part-*.parquet"))
    bad = folder / "part-zz-bad.parquet"
    if kind == "truncated":
        data = good.read_bytes()
        bad.write_bytes(data[: len(data) // 2])
    elif kind == "empty":
        bad.write_bytes(b"")
    elif kind == "text":
        bad.write_text("not parquet\n")
    else:  # an integer key column
        pq.write_table(pa.table({"key": pa.array([1, 2]), "task": pa.array(["t", "t"])}), bad)
    return bad


@pytest.mark.parametrize("kind", ["truncated", "empty", "text", "int_key"])
def test_bad_sweep_part_is_a_typed_error_naming_it(tmp_path: Path, kind: str) -> None:
    from mcpkit.sweep import read_results
    from mcpkit.sweep.sink import ParquetSink

    folder = tmp_path / "results.parquet"
    bad = _bad_part(folder, kind)
    with pytest.raises(ProblemFileError, match="part-zz-bad.parquet") as info:
        read_results(folder)
    assert "\n" not in str(info.value)
    with pytest.raises(ProblemFileError, match="part-zz-bad.parquet"):
        ParquetSink(folder)  # before any solve of a resumed sweep
    ParquetSink(folder, resume=False)  # starting afresh removes it
    assert not bad.exists()


@pytest.mark.parametrize("kind", ["truncated", "int_key"])
def test_cli_sweep_refuses_a_bad_part_in_one_line(tmp_path: Path, kind: str) -> None:
    folder = tmp_path / "results.parquet"
    _bad_part(folder, kind)
    run = _cli("sweep", str(ROOT / "examples" / "lcp.json"), "--out", str(folder), "--workers", "1")
    lines = run.stderr.splitlines()
    assert run.returncode == 2, run.stderr[-2000:]
    assert len(lines) == 1 and lines[0].startswith("mcpkit: error: ") and "part-zz-bad.parquet" in lines[0]


@needs_corpus
def test_corpus_truncated_part_is_refused(tmp_path: Path) -> None:
    import shutil

    from mcpkit.sweep import read_results

    folder = tmp_path / "sweep_truncated_part.parquet"
    shutil.copytree(FUZZ / "sweep_truncated_part.parquet", folder)
    with pytest.raises(ProblemFileError, match="merged.parquet is not a readable Parquet file"):
        read_results(folder)


# --------------------------------------------------------------------- sigint_during_import.py
#: A program run as the ``mcpkit`` command that sends itself SIGINT while SciPy is being imported
#: (inside ``import mcpkit``), then runs the command: the deterministic form of a Ctrl-C 0.3-1 s
#: after ``mcpkit solve`` starts.
SIGINT_IN_IMPORT = """
import importlib.abc, os, signal, sys
class Kick(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "scipy":
            os.kill(os.getpid(), signal.SIGINT)
        return None
sys.meta_path.insert(0, Kick())
sys.argv = ["mcpkit", "solve", sys.argv[1]]
from mcpkit.command.entry import main
sys.exit(main())
"""


def _sigint_as_at_a_terminal() -> None:
    """In a child before ``exec``: SIGINT back to its default disposition. A shell starts a
    background job (``pytest &``, CI runners) with SIGINT ignored, an ignored SIGINT is
    inherited, and Python then installs no handler of its own: these tests would see the
    runner's disposition instead of what ``import mcpkit`` does."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_sigint_while_importing_is_one_line_and_130() -> None:
    run = subprocess.run(
        [sys.executable, "-c", SIGINT_IN_IMPORT, str(ROOT / "examples" / "lcp.json")],
        capture_output=True, text=True, timeout=120, env=os.environ | {"PYTHONPATH": str(ROOT)},
        preexec_fn=_sigint_as_at_a_terminal,
    )  # fmt: skip
    assert run.returncode == 130, run.stderr[-2000:]
    assert [line for line in run.stderr.splitlines() if line] == ["mcpkit: interrupted"], run.stderr[-2000:]
    assert run.stdout == ""


def test_library_import_keeps_pythons_sigint_handler() -> None:
    code = "import signal, mcpkit; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
        env=os.environ | {"PYTHONPATH": str(ROOT)}, preexec_fn=_sigint_as_at_a_terminal,
    )  # fmt: skip
    assert run.stdout.strip() == "True", run.stderr[-2000:]


def test_program_detection() -> None:
    from mcpkit.command.entry import is_program

    assert is_program(["/venv/bin/mcpkit", "solve"], [])
    assert is_program(["-m"], ["python", "-m", "mcpkit.command.cli", "solve"])
    assert not is_program(["-c"], ["python", "-c", "import mcpkit"])
    assert not is_program(["script.py"], ["python", "script.py"])
    assert not is_program(["-m"], ["python", "-m", "pytest"])
