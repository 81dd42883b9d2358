"""The corpus of bad problem files in ``tests/data/bad``, run through ``mcpkit solve``.

``expected.json`` maps each file to the exit status it must give (2: bad input, refused before
any solver runs, one ``mcpkit: error:`` line naming the problem; 1: the solver ran and the
verdict is not solved) and a fragment of the error. Files whose status is 2 need no solver;
the others carry ``solver``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpkit.command.cli import EXIT_BAD_INPUT, main

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"
EXPECTED: dict[str, Any] = {
    k: v for k, v in json.loads((BAD / "expected.json").read_text()).items() if not k.startswith("_")
}


def _cases() -> list[Any]:
    out = []
    for name, case in sorted(EXPECTED.items()):
        marks = [pytest.mark.solver] if case.get("solver") else []
        out.append(pytest.param(name, case, id=name, marks=marks))
    return out


def test_every_file_has_an_expected_exit_status() -> None:
    files = {p.name for p in BAD.iterdir() if p.name != "expected.json"}
    assert files == set(EXPECTED)
    assert all(case["exit"] in (0, 1, 2) for case in EXPECTED.values())
    assert all(case.get("solver") for case in EXPECTED.values() if case["exit"] != EXIT_BAD_INPUT)


@pytest.mark.parametrize(("name", "case"), _cases())
def test_bad_file_exit_status_and_message(
    name: str, case: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["solve", str(BAD / name), "--no-progress", *case.get("args", [])])
    out, err = capsys.readouterr()
    assert code == case["exit"], (out, err)
    if code == EXIT_BAD_INPUT:
        lines = err.strip().splitlines()
        assert lines and lines[0].startswith("mcpkit: error: "), err
        assert case["error"] in err, err
        # a file's own defect names the file, once; a refusal of the options given may not
        times = err.count(name)
        assert (times == 1) if not case.get("args") else (times <= 1), err
        assert "Traceback" not in err and out == ""
