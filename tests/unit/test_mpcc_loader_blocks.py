"""Blocks of MPCCs loaded from JSON: named from the file's own symbol names, never invented (no solver)."""

from __future__ import annotations

import json
from pathlib import Path

import casadi as ca
import numpy as np
import pytest

from mcpkit.formats.mpcc_json import load_mpcc_json, name_segments
from tests.conftest import SHARED_DATA


def _write(tmp_path: Path, w: ca.SX, p: ca.SX | None = None) -> Path:
    """A feasibility MPCC over ``w`` with one pair (w[-2], w[-1]) and one row sum(w) = 1."""
    args = [w] if p is None else [w, p]
    data = {
        "w": w.serialize(),
        "lbw": [0.0] * w.numel(),
        "g_fun": ca.Function("g", args, [ca.sum1(w)]).serialize(),
        "lbg": [1.0],
        "ubg": [1.0],
        "G_fun": ca.Function("G", args, [w[-2]]).serialize(),
        "H_fun": ca.Function("H", args, [w[-1]]).serialize(),
    }
    if p is not None:
        data.update(p=p.serialize(), p0=[0.0] * p.numel())
    path = tmp_path / "named.json"
    path.write_text(json.dumps(data))
    return path


def test_vector_symbols_become_named_segments(tmp_path: Path) -> None:
    """nosnoc-style names: each run stem_0, stem_1, ... is one segment; entries print by it."""
    w = ca.vertcat(ca.SX.sym("X_0", 3), ca.SX.sym("h_0"), ca.SX.sym("lambda_n_0_1", 2))
    m = load_mpcc_json(_write(tmp_path, w))
    blocks = m.block_structure()
    assert blocks is not None
    segs = [(s.kind, s.name, s.at.start, s.at.stop) for s in blocks.segments]
    # SX.sym("h_0") is the scalar "h_0": a run of one entry with stem "h"
    assert segs == [("x", "X_0", 0, 3), ("x", "h", 3, 4), ("x", "lambda_n_0_1", 4, 6)]
    text = m.to_text()
    assert "X_0 ∈ R^3" in text and "lambda_n_0_1 ∈ R^2" in text
    assert "lambda_n_0_1[0]" in text and "w_" not in text


def test_parameters_are_named_too(tmp_path: Path) -> None:
    w = ca.vertcat(ca.SX.sym("x", 2), ca.SX.sym("y", 2))
    p = ca.vertcat(ca.SX.sym("rho_p"), ca.SX.sym("x0", 2))
    blocks = load_mpcc_json(_write(tmp_path, w, p)).block_structure()
    assert [(s.kind, s.name) for s in blocks.of_kind("p")] == [("p", "rho_p"), ("p", "x0")]


@pytest.mark.parametrize(
    ("w", "vector"),
    [
        (ca.SX.sym("w", 5), "w"),  # MacMPEC / MPECLib: w_0 ... w_4, one generic run
        (ca.vertcat(ca.SX.sym("a", 2), ca.SX.sym("a", 2)), "w"),  # a_0, a_1 twice: saved as the file's w
    ],
)
def test_uninformative_names_attach_nothing(tmp_path: Path, w: ca.SX, vector: str) -> None:
    m = load_mpcc_json(_write(tmp_path, w))
    assert m.block_structure() is None
    assert f"find {vector} ∈ R^" in m.to_text()


def test_name_segments_of_non_symbols_is_none() -> None:
    x = ca.SX.sym("x", 2)
    assert name_segments(ca.vertcat(x, 2 * x[0]), "x") is None


@pytest.mark.parametrize("folder", ["nosbench-dev", "macmpec-dev"])
def test_shared_files(folder: str) -> None:
    files = sorted((SHARED_DATA / folder).glob("*.json"))
    if not files:
        pytest.skip(f"no shared {folder} files")
    m = load_mpcc_json(files[0])
    blocks = m.block_structure()
    if folder == "macmpec-dev":
        assert blocks is None
        return
    assert blocks is not None and blocks.of_kind("x")[0].name == "X0"
    covered = np.zeros(m.x.numel(), int)
    for s in blocks.of_kind("x"):
        covered[s.at] += 1
    assert np.all(covered == 1)  # the segments tile x exactly once


def test_docs_show_the_generated_nosbench_head() -> None:
    """docs/printing.md quotes the head of the first NOSBENCH file's printout: it must be today's."""
    files = sorted((SHARED_DATA / "nosbench-dev").glob("*.json"))
    if not files:
        pytest.skip("no shared NOSBENCH files")
    head = "\n".join(load_mpcc_json(files[0]).to_text().splitlines()[:12])
    doc = (Path(__file__).resolve().parents[2] / "docs" / "printing.md").read_text()
    assert head in doc
