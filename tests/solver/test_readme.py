"""The README's Python examples run as written (one namespace, in order)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.mark.solver
def test_readme_python_blocks_run(capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 2
    namespace: dict[str, object] = {"__name__": "readme"}
    for i, code in enumerate(blocks):
        exec(compile(code, f"README.md python block {i}", "exec"), namespace)
    out = capsys.readouterr().out
    assert "optimal" in out  # the Pyomo block's termination condition
    # no negative zeros printed (np.round of -0.0 prints "-0."; the examples add 0.0)
    assert re.search(r"-0\.(?!\d*[1-9])", out) is None, out
    # the output the README shows in its comments is what the code prints
    lines = out.splitlines()
    for shown in ("-1.0 [0.]", "0.5 [0.5]", "-2.0 [0.]", "[2. 0.] 1.0 S"):
        assert shown in lines, (shown, out)
