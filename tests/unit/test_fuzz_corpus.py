"""The fuzz corpus of 2026-11-26 (issue 26 item 2, "no crash on any file").

Every file in ``../shared/data/fuzz-2026-11-26`` (its ``MANIFEST.txt`` says how each broke
mcpkit) goes through the loading steps ``mcpkit solve`` takes (kind, then the reader of the
kind's family) and must raise a typed :class:`~mcpkit.errors.ProblemFileError` naming the file
once, before any solver runs; ``floor_nosol.json`` loads (its ``F`` has the solution 1.5, the
manifest is wrong there). A few representative files also run through the command itself, which
must exit with status 2 and print exactly one ``mcpkit: error:`` line on stderr. The checks the
corpus found missing are also tested on small files made here, so they hold without the corpus.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import casadi as ca
import numpy as np
import pytest

from mcpkit.errors import ProblemFileError
from mcpkit.formats.io import file_family, file_kind, load_mcp, parse_once
from mcpkit.formats.mcp_file import MAX_DECLARATION_DEPTH, load_any_mcp, save_mcp_file
from tests.conftest import SHARED_DATA

FUZZ = SHARED_DATA / "fuzz-2026-11-26"
ROOT = Path(__file__).resolve().parents[2]
SUFFIXES = (".json", ".npz", ".hdf5", ".mtx")

#: Each file of the corpus and a fragment of its error (``None``: the file loads).
EXPECTED: dict[str, str | None] = {
    "c_F_big_graph.json": "nests more than",
    "c_F_disc.json": None,  # if_else and comparisons: a piecewise declaration
    "c_F_empty.json": "serialization is empty",
    "c_F_flip.json": "cannot deserialize F",
    "c_F_rootfinder.json": "OP_CALL",
    "c_known_bad.json": "known_solutions[0] must be a list of 2 numbers",
    "c_known_emptyinner.json": "known_solutions[0] has 0 values",
    "c_known_nested.json": "known_solutions must be a list",
    "c_known_wronglen.json": "known_solutions[0] has 3 values",
    "c_z0_bigint.json": "z0 holds an integer beyond the range of a float",
    "floor_nosol.json": None,
    "ifelse_nosol.json": None,
    "j_bigint_digits.json": "M[0][0] is an integer with 5000 digits",
    "j_bigint_lb.json": "lb holds an integer beyond",
    "j_bigint_lb_list.json": "lb holds an integer beyond",
    "j_bigint_overflow.json": "M holds an integer beyond",
    "j_bigint_q.json": "q holds an integer beyond",
    "j_deepnest.json": "nested too deeply",
    "p_G_nan.json": "G is NaN at the start point",
    "p_f_nan.json": "f (the objective) is NaN at the start point",
    "p_lbG_inf.json": "lbG is +inf",
    "p_w0_bigint.json": "w0 holds an integer beyond",
    "n_M_complex.npz": "complex",
    "s_badindices.npz": "indices must lie in [0, 2)",
    "s_badindptr.npz": "indptr must start at 0, never decrease",
    "s_negindices.npz": "indices must lie in [0, 2)",
    "m_int.mtx": "Integer out of range",
    "h_Wm_empty.hdf5": "W/m is empty",
    "h_Wnz_str.hdf5": "W/nz must hold integers, got text",
    "h_Wx_str.hdf5": "W/x must hold real numbers, got text",
    "h_ext_link.hdf5": "external link",
    "h_fclib_local_ds.hdf5": "fclib_local is a dataset",
    "h_huge.hdf5": "150000x150000",
    "h_mu_str.hdf5": "vectors/mu must hold real numbers, got text",
    "h_soft_loop.hdf5": "soft link",
    "h_sol_str.hdf5": "solution/r must hold real numbers",
    "h_spacedim_empty.hdf5": "spacedim is empty",
    "h_spacedim_str.hdf5": "spacedim must hold integers",
}

needs_corpus = pytest.mark.skipif(
    not FUZZ.is_dir(), reason=f"{FUZZ} not present (the fuzz corpus of issue 26, see ../shared/README.md)"
)


def load_as_cli(path: Path) -> Any:
    """Load ``path`` as ``mcpkit solve`` does before solving: its kind, then the family's reader."""
    with parse_once():
        family = file_family(file_kind(path))
        if family == "fclib":
            from mcpkit.models.fclib import load_fclib

            return load_fclib(path)
        if family == "mpcc":
            from mcpkit.mpcc import load_mpcc_json

            return load_mpcc_json(path)
        return load_any_mcp(path)


@needs_corpus
def test_every_corpus_file_has_an_expectation() -> None:
    files = {p.name for p in FUZZ.iterdir() if p.suffix in SUFFIXES}
    assert files == set(EXPECTED)


@needs_corpus
@pytest.mark.parametrize(("name", "fragment"), sorted(EXPECTED.items()), ids=sorted(EXPECTED))
def test_corpus_file_is_refused_with_a_typed_error(name: str, fragment: str | None) -> None:
    if fragment is None:
        load_as_cli(FUZZ / name)  # loads cleanly: the solver decides
        return
    with pytest.raises(ProblemFileError) as info:
        load_as_cli(FUZZ / name)
    message = str(info.value)
    assert fragment in message, message
    assert message.count(name) == 1, message
    assert "\n" not in message


@needs_corpus
@pytest.mark.parametrize(
    "name", ["s_badindptr.npz", "h_huge.hdf5", "p_G_nan.json", "c_known_bad.json", "j_deepnest.json"]
)
def test_cli_refuses_with_one_line(name: str) -> None:
    """The program (forked under ``--time-limit``): exit status 2, one stderr line, nothing else
    (no traceback, no CasADi warnings, no native abort)."""
    run = subprocess.run(
        [sys.executable, "-m", "mcpkit.command.cli", "solve", str(FUZZ / name), "--time-limit", "20"],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
    )
    lines = run.stderr.splitlines()
    assert run.returncode == 2, run.stderr[-2000:]
    assert len(lines) == 1 and lines[0].startswith("mcpkit: error: "), run.stderr[-2000:]
    assert EXPECTED[name] in lines[0] and run.stdout == ""


# ------------------------------------------------------------ the same checks on small files
def _sparse_npz(path: Path, **arrays: Any) -> Path:
    base = {
        "format": np.array(b"csr"),
        "shape": np.array([2, 2]),
        "data": np.array([1.0, 2.0]),
        "indices": np.array([0, 1]),
        "indptr": np.array([0, 1, 2]),
        "q": np.array([-1.0, -1.0]),
    }
    np.savez(path, **(base | arrays))
    return path


@pytest.mark.parametrize(
    ("arrays", "fragment"),
    [
        ({"indices": np.array([0, 2])}, "indices must lie in [0, 2)"),
        ({"indices": np.array([-3, 1])}, "indices must lie in [0, 2)"),
        ({"indptr": np.array([0, 3, 2])}, "indptr must start at 0"),
        ({"indptr": np.array([1, 1, 2])}, "indptr must start at 0"),
        ({"indptr": np.array([0, 2])}, "indptr must have 3 entries"),
        ({"data": np.array([1.0 + 1j, 2.0])}, "complex"),
        ({"indices": np.array([0.0, 1.0])}, "must hold integers"),
        ({"shape": np.array([2, -2])}, "shape must be two sizes"),
        ({"format": np.array(b"lil")}, "unknown sparse format"),
        ({"format": np.array(b"coo"), "row": np.array([0, 5]), "col": np.array([0, 1])}, "row must lie"),
    ],
)
def test_sparse_npz_index_arrays_are_checked_before_scipy(
    tmp_path: Path, arrays: dict[str, Any], fragment: str
) -> None:
    path = _sparse_npz(tmp_path / "m.npz", **arrays)
    with pytest.raises(ProblemFileError) as info:
        load_mcp(path)
    assert fragment in str(info.value)


def test_valid_sparse_npz_still_loads(tmp_path: Path) -> None:
    mcp = load_mcp(_sparse_npz(tmp_path / "m.npz"))
    assert mcp.n == 2


def test_complex_dense_npz_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.npz"
    np.savez(path, M=np.array([[1.0 + 2j]]), q=np.array([-1.0]))
    with pytest.raises(ProblemFileError, match="complex"):
        load_mcp(path)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('{"M": ' + "[" * 5000 + "]" * 5000 + ', "q": [1]}', "nested too deeply"),
        ('{"M": [[1]], "q": [1' + "0" * 5000 + "]}", "q[0] is an integer with 5001 digits"),
        ('{"M": [[1]], "q": [1' + "0" * 400 + "]}", "q holds an integer beyond"),
        ('{"M": [[1]], "q": [1], "ub": [1' + "0" * 400 + "]}", "ub holds an integer beyond"),
    ],
)
def test_json_limits_are_typed_errors(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "lcp.json"
    path.write_text(text)
    with pytest.raises(ProblemFileError) as info:
        load_mcp(path)
    assert fragment in str(info.value)


def _mcp_file(tmp_path: Path, F: ca.Function, **meta: Any) -> Path:
    return save_mcp_file(tmp_path / "f.json", F, [-10.0, -10.0], [10.0, 10.0], [0.0, 0.0], meta=meta)


@pytest.mark.parametrize(
    ("known", "fragment"),
    [
        ([["a", "b"]], "known_solutions[0] must be a list of 2 numbers"),
        ([[]], "known_solutions[0] has 0 values"),
        (5, "known_solutions must be a list"),
        ([[1.0, 2.0, 3.0]], "known_solutions[0] has 3 values"),
    ],
)
def test_known_solutions_are_checked_at_load(tmp_path: Path, known: Any, fragment: str) -> None:
    z = ca.SX.sym("z", 2)
    F = ca.Function("F", [z], [z - 1])
    with pytest.raises(ProblemFileError) as info:
        load_any_mcp(_mcp_file(tmp_path, F, known_solutions=known))
    assert fragment in str(info.value)
    _, meta = load_any_mcp(_mcp_file(tmp_path, F, known_solutions=[[1.0, 1.0]]))
    assert meta["known_solutions"] == [[1.0, 1.0]]


def test_graphs_too_deep_for_the_declaration_are_refused_quickly(tmp_path: Path) -> None:
    z = ca.SX.sym("z", 2)
    x = z[0]
    for _ in range(MAX_DECLARATION_DEPTH):  # three nested operations per round
        x = ca.sin(x) * 0.5 + z[1]
    F = ca.Function("F", [z], [ca.vertcat(x - z[0], z[1] - 1)])
    with pytest.raises(ProblemFileError, match="nests more than"):
        load_any_mcp(_mcp_file(tmp_path, F))
    wide = ca.Function("F", [z], [ca.vertcat(sum(ca.sin(k * z[0]) for k in range(1, 500)) - z[0], z[1])])
    load_any_mcp(_mcp_file(tmp_path, wide))  # long sums are flat for SymPy: accepted


def test_calls_of_other_casadi_functions_are_refused(tmp_path: Path) -> None:
    z, x = ca.MX.sym("z", 2), ca.MX.sym("x")
    root = ca.rootfinder("root", "newton", ca.Function("G", [x, z], [x**3 - z[0]]))  # x = z_0^(1/3)
    F = ca.Function("F", [z], [ca.vertcat(root(1.0, z) + z[0] - 2, z[1] - 1)])
    with pytest.raises(ProblemFileError, match="OP_CALL"):
        load_any_mcp(_mcp_file(tmp_path, F))


def test_mpcc_start_point_and_bounds_are_checked(tmp_path: Path) -> None:
    from mcpkit.mpcc import load_mpcc_json

    w = ca.SX.sym("w", 2)

    def write(G: Any, f: Any, **extra: Any) -> Path:
        doc = {
            "w": w.serialize(),
            "w0": [1.0, 0.5],
            "f_fun": ca.Function("f", [w], [f]).serialize(),
            "G_fun": ca.Function("G", [w], [G]).serialize(),
            "H_fun": ca.Function("H", [w], [w[1]]).serialize(),
        }
        path = tmp_path / "p.json"
        path.write_text(json.dumps(doc | extra))
        return path

    with pytest.raises(ProblemFileError, match="G is NaN at the start point"):
        load_mpcc_json(write(np.nan * w[0], w[0] ** 2))
    with pytest.raises(ProblemFileError, match="objective"):
        load_mpcc_json(write(w[0], np.nan * w[0]))
    with pytest.raises(ProblemFileError, match=r"lbG is \+inf"):
        load_mpcc_json(write(w[0], w[0] ** 2, lbG=["inf"]))
    with pytest.raises(ProblemFileError, match="ubH is -inf"):
        load_mpcc_json(write(w[0], w[0] ** 2, ubH=["-inf"]))
    assert load_mpcc_json(write(w[0], w[0] ** 2)).x0.tolist() == [1.0, 0.5]
