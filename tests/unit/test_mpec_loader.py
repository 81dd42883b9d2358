"""CasADi MPCC JSON loader and the general-to-standard lowering (no solver runs)."""

from __future__ import annotations

import json
from pathlib import Path

import casadi as ca
import numpy as np
import pytest

from mcpkit.errors import ProblemFileError
from mcpkit.formats.mpcc_json import load_mpcc_json
from mcpkit.mpcc import MPCC, ToStandardMPCC
from tests.conftest import SHARED_DATA

DATA = SHARED_DATA


def _write(tmp_path: Path, **over: object) -> Path:
    w = ca.SX.sym("w", 2)
    data = {
        "w": w.serialize(),
        "w0": [0.5, 0.5],
        "lbw": [0, 0],
        "ubw": [1e20, 1e20],
        "f_fun": ca.Function("f", [w], [(w[0] - 1) ** 2 + w[1] ** 2]).serialize(),
        "G_fun": ca.Function("G", [w], [w[0]]).serialize(),
        "H_fun": ca.Function("H", [w], [w[1]]).serialize(),
    }
    data.update(over)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(data))
    return path


def test_minimal_file_defaults_to_standard_pairs(tmp_path: Path) -> None:
    prob = load_mpcc_json(_write(tmp_path))
    assert prob.n_pairs == 1 and prob.is_standard()
    assert prob.ubx[0] == np.inf  # AMPL's 1e20 is infinity
    comp, viol, vals = prob.residuals(np.array([1.0, 0.0]), np.zeros(0))
    assert comp == 0.0 and viol == 0.0 and vals["f"][0] == 0.0


@pytest.mark.parametrize(
    ("over", "match"),
    [
        ({"w": "garbage"}, "deserialize w"),
        ({"G_fun": 3}, "serialized function"),
        ({"w0": [1, 2, 3]}, "w0 has 3 entries"),
        ({"lbH": ["a"]}, "list of numbers"),
        ({"lbG": [1.0], "ubG": [0.0]}, "lower > upper"),
    ],
)
def test_bad_files_raise_typed_errors(tmp_path: Path, over: dict, match: str) -> None:
    with pytest.raises(ProblemFileError, match=match):
        load_mpcc_json(_write(tmp_path, **over))


def test_missing_keys(tmp_path: Path) -> None:
    p = tmp_path / "x.json"
    p.write_text(json.dumps({"w": 1}))
    with pytest.raises(ProblemFileError, match="missing keys"):
        load_mpcc_json(p)


def _general(lbG: float, lbH: float, ubH: float) -> MPCC:
    x = ca.SX.sym("x", 2)
    return MPCC(
        x=x, p=ca.SX(0, 1), f=ca.SX(0), g=ca.SX(0, 1), lbg=np.zeros(0), ubg=np.zeros(0),
        lbx=np.full(2, -np.inf), ubx=np.full(2, np.inf), x0=np.zeros(2), p0=np.zeros(0),
        G=x[0:1], H=x[1:2], lbG=np.array([lbG]), ubG=np.array([np.inf]),
        lbH=np.array([lbH]), ubH=np.array([ubH]),
    )  # fmt: skip


def test_box_pair_residual_follows_box_mcp_semantics() -> None:
    prob = _general(-np.inf, -1.0, 2.0)  # -1 <= H <= 2 ⟂ G
    for G, H, ok in [
        (3.0, -1.0, True),
        (0.0, 0.5, True),
        (-2.0, 2.0, True),
        (1.0, 0.5, False),
        (1.0, 2.0, False),
    ]:
        comp, viol, _ = prob.residuals(np.array([G, H]), np.zeros(0))
        assert (comp == 0.0) is ok and viol == 0.0


def test_lowering_shifts_standard_pairs_and_splits_box_pairs() -> None:
    std, _ = ToStandardMPCC().apply(_general(0.0, 2.0, np.inf))
    assert std.x.numel() == 2 and std.n_pairs == 1  # shifted: G ⟂ H - 2
    box, inv = ToStandardMPCC().apply(_general(-np.inf, -1.0, 2.0))
    assert box.x.numel() == 4 and box.n_pairs == 2  # slacks w, v and two pairs
    assert box.g.numel() == 1  # G - w + v = 0
    np.testing.assert_array_equal(ToStandardMPCC().invert(np.arange(4.0), inv), [0.0, 1.0])


@pytest.mark.skipif(not (DATA / "mpeclib").is_dir(), reason="shared/data/mpeclib not present")
def test_every_mpeclib_file_loads() -> None:
    files = sorted((DATA / "mpeclib").glob("*.json"))
    assert len(files) == 86
    for f in files:
        prob = load_mpcc_json(f)
        assert prob.n_pairs > 0
