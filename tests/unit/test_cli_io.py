"""CLI and problem files: formats, typed errors and exit codes (no long solves)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from mcpkit.errors import ProblemFileError
from mcpkit.formats.io import file_kind, load_mcp, save_lcp_json
from mcpkit.frontends.cli import main


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
    from mcpkit.frontends import cli
    from mcpkit.solving.result import CompositeResult, ToleranceCheck

    def fake(out: Path, progress: bool) -> CompositeResult:
        part = ToleranceCheck("closed-form error", value, 1e-6)
        return CompositeResult(kind="demo:plate", parts=[part], what="run", details={"steps": 3})

    monkeypatch.setitem(cli.DEMOS, "plate", fake)
    assert main(["demo", "plate", "--out", str(tmp_path), "--json"]) == code
    out = json.loads(capsys.readouterr().out)
    assert out["solved"] is (code == 0) and out["kind"] == "demo:plate" and out["steps"] == 3
