"""The same input gets the same verdict and exit status on both backends (issue 26, item 7).

MCP files whose ``F`` uses ``floor`` (or ``ceil``) were refused on ``backend="pyomo"`` (exit 2,
"no Pyomo counterpart") and solved on ``casadi``; Pyomo has both functions and the NL writer
carries them, so both backends now solve them.
"""

from __future__ import annotations

import json

import pytest

from mcpkit.command.cli import main
from tests.conftest import SHARED_DATA

pytestmark = pytest.mark.solver

FUZZ = SHARED_DATA / "fuzz-2026-11-26"


@pytest.mark.skipif(not (FUZZ / "floor_nosol.json").is_file(), reason="fuzz corpus not present")
def test_floor_file_same_exit_status_and_point_on_both_backends(capsys: pytest.CaptureFixture[str]) -> None:
    out = {}
    for backend in ("casadi", "pyomo"):
        args = ["solve", str(FUZZ / "floor_nosol.json"), "--backend", backend, "--json", "--with-solution"]
        code = main(args)
        out[backend] = (code, json.loads(capsys.readouterr().out))
    assert out["casadi"][0] == out["pyomo"][0] == 0
    for _, doc in out.values():
        assert doc["solved"] is True
        assert doc["solution"]["z"]["z"] == pytest.approx([1.5], abs=1e-6)  # block "z"


def test_floor_and_ceil_lower_to_pyomo() -> None:
    """``floor`` and ``ceiling`` of a declaration have Pyomo counterparts (no typed refusal)."""
    import pyomo.environ as pyo
    import sympy as sp

    from mcpkit.lowering.pyomo import sympy_to_pyomo

    m = pyo.ConcreteModel()
    m.z = pyo.Var(initialize=1.5)
    z = sp.Symbol("z")
    fl, ce = sympy_to_pyomo([sp.floor(z), sp.ceiling(z)], [z], [m.z])
    assert pyo.value(fl) == 1.0 and pyo.value(ce) == 2.0
