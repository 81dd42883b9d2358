"""A newcomer's first steps run as written: the README's Python blocks and the code cells of
tutorial 01, each file in one namespace and in order, print what their comments say.

A comment ``# → A / B`` after a statement (or on its own line below it) states lines the code
prints, in that order; a note in parentheses after two spaces is not part of them. Every stated
line must appear, whole, in the output, in the stated order.
"""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib
import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
TUTORIAL_01 = ROOT / "docs" / "tutorials" / "01_complementarity_in_ten_minutes.md"

ARROW = re.compile(r"#\s*→\s?(.*)$")
NOTE = re.compile(r"\s{2,}\(.*\)\s*$")


def python_blocks(text: str, fence: str) -> list[str]:
    """The code of every block opened by ``fence`` (```python, or ```{code-cell} ipython3)."""
    return re.findall(re.escape(fence) + r"[^\n]*\n(.*?)```", text, flags=re.S)


def stated_lines(code: str) -> list[str]:
    """The output lines the ``# →`` comments of ``code`` state, in order."""
    out: list[str] = []
    for line in code.splitlines():
        if m := ARROW.search(line):
            out += [part.rstrip() for part in NOTE.sub("", m.group(1)).split(" / ")]
    return out


def assert_printed_in_order(stated: list[str], printed: str) -> None:
    lines = [line.rstrip() for line in printed.splitlines()]
    at = 0
    for want in stated:
        assert want in lines[at:], f"stated output {want!r} not printed (after line {at}):\n{printed}"
        at = lines.index(want, at) + 1


def test_stated_lines_parser() -> None:
    """The parser reads inline and own-line arrows, splits on ' / ' and drops notes: it can fail."""
    code = "print(1)  # → 1 / 2  (a note)\nx = 1  # not stated\n# → a =  -1.0   z\n"
    assert stated_lines(code) == ["1", "2", "a =  -1.0   z"]
    with pytest.raises(AssertionError, match="not printed"):
        assert_printed_in_order(["2", "1"], "1\n2\n")


def _run(blocks: list[str], name: str, capsys: pytest.CaptureFixture[str]) -> str:
    namespace: dict[str, object] = {"__name__": name}
    for i, code in enumerate(blocks):
        exec(compile(code, f"{name} block {i}", "exec"), namespace)
    return capsys.readouterr().out


@pytest.mark.solver
def test_readme_python_blocks_run_and_print_what_they_state(capsys: pytest.CaptureFixture[str]) -> None:
    blocks = python_blocks(README.read_text(), "```python")
    assert len(blocks) >= 2
    out = _run(blocks, "readme", capsys)
    stated = [line for code in blocks for line in stated_lines(code)]
    assert len(stated) >= 5, stated  # the README states its outputs; this test checks them
    assert_printed_in_order(stated, out)
    # no negative zeros printed (np.round of -0.0 prints "-0."; the examples add 0.0)
    assert re.search(r"-0\.(?!\d*[1-9])", out) is None, out


@pytest.mark.solver
def test_tutorial_01_cells_run_and_print_what_they_state(capsys: pytest.CaptureFixture[str]) -> None:
    matplotlib.use("Agg")  # the tutorial draws one figure
    blocks = python_blocks(TUTORIAL_01.read_text(), "```{code-cell}")
    assert len(blocks) >= 8
    out = _run(blocks, "tutorial_01", capsys)
    stated = [line for code in blocks for line in stated_lines(code)]
    assert len(stated) >= 8, stated
    assert_printed_in_order(stated, out)
    # the enumeration by hand finds the one solution the text names, z = (1/3, 1/3)
    assert [line for line in out.splitlines() if line.endswith("SOLUTION")] == [
        "basic=[0, 1]   z=[0.33333333 0.33333333]  w=[0. 0.]  SOLUTION"
    ]
