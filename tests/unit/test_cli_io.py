"""CLI and problem files: formats, typed errors and exit codes (no long solves)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from mcpkit.command.cli import main
from mcpkit.errors import ProblemFileError
from mcpkit.formats.io import file_kind, load_mcp, save_lcp_json


def test_save_and_load_lcp_json_round_trip(tmp_path: Path) -> None:
    p = save_lcp_json(tmp_path / "a.json", np.eye(2), [1, -1], lb=[0, -math.inf], ub=[math.inf, 3])
    mcp = load_mcp(p)
    np.testing.assert_array_equal(mcp.lb, [0, -math.inf])
    np.testing.assert_array_equal(mcp.ub, [math.inf, 3])
    assert file_kind(p) == "lcp-json"


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        ('{"M": [[1]]}', "neither an LCP"),
        ('{"M": [[1, 2]], "q": [1]}', "square"),
        ('{"M": [[1]], "q": [1], "lb": 2, "ub": 1}', "lb > ub"),
        ('{"M": [[1]], "q": ["x"]}', "numeric"),
        ('{"M": [[NaN]], "q": [1]}', "NaN"),
    ],
)
def test_bad_files_raise_problem_file_errors(tmp_path: Path, content: str, match: str) -> None:
    p = tmp_path / "bad.json"
    p.write_text(content)
    with pytest.raises(ProblemFileError, match=match):
        load_mcp(p)


def test_missing_and_unknown_files(tmp_path: Path) -> None:
    with pytest.raises(ProblemFileError, match="no such file"):
        file_kind(tmp_path / "nope.json")
    other = tmp_path / "x.txt"
    other.write_text("1")
    with pytest.raises(ProblemFileError, match="unknown problem file type"):
        file_kind(other)


def test_cli_errors_exit_2_with_a_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", str(tmp_path / "missing.json")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_cli_info_lists_ipopt(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    names = {c["name"]: c for c in info["components"]}
    assert names["ipopt-casadi"]["available"] is True
    assert {"ipopt-exe", "path-ampl", "path-gamspy", "pyomo"} <= set(names)


def test_cli_print(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = save_lcp_json(tmp_path / "a.json", [[2, 1], [1, 2]], [-1, -1])
    assert main(["print", str(p)]) == 0
    out = capsys.readouterr().out
    assert "0 <= z[0] ⟂" in out and "lower bound only" in out


@pytest.mark.parametrize(("value", "code"), [(1e-9, 0), (1.0, 1), (math.nan, 1)])
def test_demo_exit_code_is_the_results_verdict(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    value: float,
    code: int,
) -> None:
    """Regression: ``mcpkit demo plate`` exited 1 with every step solved because its summary
    lacked a ``solved`` key. The exit code now comes from the result's ``solved`` alone."""
    from mcpkit.command import cli
    from mcpkit.solving.result import CompositeResult, ToleranceCheck

    def fake(out: Path, progress: bool, fmt: str) -> CompositeResult:
        part = ToleranceCheck("closed-form error", value, 1e-6)
        return CompositeResult(kind="demo:plate", parts=[part], what="run", details={"steps": 3})

    monkeypatch.setitem(cli.DEMOS, "plate", fake)
    assert main(["demo", "plate", "--out", str(tmp_path), "--json"]) == code
    out = json.loads(capsys.readouterr().out)
    assert out["solved"] is (code == 0) and out["kind"] == "demo:plate" and out["steps"] == 3


def test_solve_prints_each_fact_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = save_lcp_json(tmp_path / "a.json", [[2, 1], [1, 2]], [-1, -1])
    assert main(["solve", str(p), "--method", "lemke", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "MCPResult(" not in out
    keys = [line.split()[0] for line in out.splitlines() if line and not line.startswith(" ")]
    assert len(keys) == len(set(keys))
    assert {"solved", "status", "solution_status", "comp_residual"} <= set(keys)
    assert "status                converged" in out  # aligned, the attribute's value


def test_demo_text_is_an_aligned_table_with_four_digits(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mcpkit.command import cli
    from mcpkit.solving.result import CompositeResult, ToleranceCheck

    def fake(out: Path, progress: bool, fmt: str) -> CompositeResult:
        details = {"max_error": 0.12345678901234567, "radii": list(np.linspace(0.0, 1.0, 30))}
        return CompositeResult(kind="demo:plate", parts=[ToleranceCheck("error", 0.0, 1e-6)], details=details)

    monkeypatch.setitem(cli.DEMOS, "plate", fake)
    assert main(["demo", "plate", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "max_error    0.1235" in out
    assert "radii        [0, 0.03448, 0.06897, …, 0.9655, 1] (30 values)" in out
    assert "0.12345678" not in out and "{" not in out


# ------------------------------------------------------------------ mcpkit print: MPCC and FCLIB files
def _tiny_mpcc_json(path: Path) -> Path:
    """min (x0 - 1)^2 + (x1 - 2)^2 s.t. x0 + x1 <= 3, 0 <= x0 ⟂ x1 >= 0, as CasADi MPCC JSON."""
    import casadi as ca

    w = ca.SX.sym("w", 2)

    def fun(name: str, expr: ca.SX) -> str:
        return ca.Function(name, [w], [expr]).serialize()

    doc = {
        "w": w.serialize(), "w0": [1.0, 0.5], "lbw": [0.0, 0.0], "ubw": [10.0, 10.0],
        "f_fun": fun("f", (w[0] - 1) ** 2 + (w[1] - 2) ** 2), "g_fun": fun("g", w[0] + w[1]),
        "lbg": [-1e20], "ubg": [3.0], "G_fun": fun("G", w[0]), "H_fun": fun("H", w[1]),
    }  # fmt: skip
    path.write_text(json.dumps(doc))
    return path


def _tiny_fclib(path: Path) -> Path:
    """One contact, W = 2 I, q = (-1, 0.5, 0), mu = 0.3, in FCLIB's triplet form."""
    import h5py

    W = 2.0 * np.eye(3)
    i, j = np.nonzero(W)
    with h5py.File(path, "w") as f:
        f["fclib_local/W/i"] = i.astype(np.int32)
        f["fclib_local/W/p"] = j.astype(np.int32)
        f["fclib_local/W/x"] = W[i, j]
        f["fclib_local/W/m"] = np.array([3], np.int32)
        f["fclib_local/W/n"] = np.array([3], np.int32)
        f["fclib_local/W/nz"] = np.array([i.size], np.int32)
        f["fclib_local/vectors/q"] = np.array([-1.0, 0.5, 0.0])
        f["fclib_local/vectors/mu"] = np.array([0.3])
        f["fclib_local/spacedim"] = np.array([3], np.int32)
    return path


def test_print_mpcc_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = _tiny_mpcc_json(tmp_path / "tiny.json")
    assert file_kind(p) == "mpcc-json"
    assert main(["print", str(p)]) == 0
    out = capsys.readouterr().out
    assert "MPCC 'tiny'" in out and "minimize (w_0 - 1)**2 + (w_1 - 2)**2" in out
    assert "0 <= w_0 ⟂ w_1 >= 0    pair 0" in out and "Constraints: 1 inequality" in out
    assert main(["print", str(p), "--latex"]) == 0
    assert r"\perp" in capsys.readouterr().out


def test_print_fclib_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = _tiny_fclib(tmp_path / "tiny.hdf5")
    assert main(["print", str(p)]) == 0  # the cone complementarity problem by default
    out = capsys.readouterr().out
    assert "K* ∋ û ⟂ r ∈ K" in out and "sizes: n_c = 1" in out and "MCP" not in out
    assert main(["print", str(p), "--latex"]) == 0
    assert r"K^* \ni \hat u \perp r \in K" in capsys.readouterr().out
    assert main(["print", str(p), "--form", "alart-curnier"]) == 0
    out = capsys.readouterr().out
    assert "MCP 'fclib_alart_curnier'" in out and "r_n - p_n = 0   (r_n free)" in out
    assert "sizes: n_c = 1" in out and "3 pairs (z_i, F_i) in 3 blocks" in out
    assert main(["print", str(p), "--form", "alart-curnier", "--latex"]) == 0
    assert r"\mathbb{R}^{n_c}" in capsys.readouterr().out


def test_print_form_is_for_fclib_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = _tiny_mpcc_json(tmp_path / "tiny.json")
    assert main(["print", str(p), "--form", "cone"]) == 2
    assert "--form applies to FCLIB files only" in capsys.readouterr().err


SHARED = Path("/work/shared/data")


@pytest.mark.skipif(not (SHARED / "macmpec-dev" / "bard1m.nl.json").is_file(), reason="MacMPEC data absent")
def test_print_macmpec_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["print", str(SHARED / "macmpec-dev" / "bard1m.nl.json")]) == 0
    out = capsys.readouterr().out
    assert "MPCC 'bard1m'" in out and "3 complementarity pairs" in out


@pytest.mark.skipif(not (SHARED / "fclib" / "local_problem_test.hdf5").is_file(), reason="FCLIB data absent")
def test_print_fclib_data_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["print", str(SHARED / "fclib" / "local_problem_test.hdf5"), "--form", "alart-curnier"]) == 0
    out = capsys.readouterr().out
    assert "sizes: n_c = 48" in out and "144 pairs" in out
