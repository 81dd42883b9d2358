"""Every entry point that takes a time limit refuses the same bad values, with a typed error,
before it solves (or, for the planners, builds) anything; ``None`` and ``inf`` mean no limit.

The check is :func:`mcpkit.solving.options.time_limit_seconds`; before it, ``solve_path``
took ``True`` as one second and raised a bare ``TypeError`` for ``"5"``, the plate designer
turned ``"5"`` into a valid five seconds, and ``plan_pushing`` refused ``inf``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import mcpkit
from mcpkit.errors import MCPInputError
from mcpkit.solving.options import time_limit_seconds

BAD = [True, False, "5", math.nan, -math.inf, -1.0, 0, 0.0, [5], np.array([5.0])]


@pytest.mark.parametrize("value", BAD)
def test_time_limit_seconds_refuses(value: Any) -> None:
    with pytest.raises(MCPInputError, match="limit_x must be a number of seconds"):
        time_limit_seconds(value, "limit_x")


def test_time_limit_seconds_accepts() -> None:
    assert time_limit_seconds(None) is None
    assert time_limit_seconds(math.inf) is None
    assert time_limit_seconds(np.float64(2.5)) == 2.5 and type(time_limit_seconds(np.int64(3))) is float
    assert time_limit_seconds(0, zero_ok=True) == 0.0
    with pytest.raises(MCPInputError, match=">= 0"):
        time_limit_seconds(-1e-9, zero_ok=True)
    with pytest.raises(MCPInputError, match="write t=5, not t='5'"):
        time_limit_seconds("5", "t")


def _lcp_file(tmp_path: Path) -> Path:
    from mcpkit.formats.io import save_lcp_json

    return Path(save_lcp_json(tmp_path / "lcp.json", np.eye(2), [1.0, -1.0]))


def _never(*_: Any, **__: Any) -> Any:  # pragma: no cover - reached only if a check is missing
    raise AssertionError("a solver or builder ran before the time limit was checked")


ENTRY_POINTS = [
    "solve_path", "sweep", "solve_block", "solve_pushing", "plan_pushing", "plan_pushing attempt",
    "solve_plate_design",
]  # fmt: skip


@pytest.mark.parametrize("value", [True, "5", math.nan, -1.0, 0.0])
@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_entry_points_refuse_a_bad_limit_before_running(
    entry: str, value: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpkit.mpec.examples import block, plate_design, pushing
    from mcpkit.sweep import solve_file

    # the file would be read, and the horizons built, by these: none may run
    monkeypatch.setattr(solve_file, "solve_within", _never)
    monkeypatch.setattr(block, "block_horizon", _never)
    monkeypatch.setattr(pushing, "pushing_horizon", _never)
    monkeypatch.setattr(plate_design, "plate_design_horizon", _never)
    monkeypatch.setattr(plate_design, "periodic_start_guess", _never)
    calls = {
        "solve_path": lambda: solve_file.solve_path(_lcp_file(tmp_path), time_limit=value),
        "sweep": lambda: mcpkit.sweep("solve-file", [str(tmp_path)], time_limit=value, out=tmp_path / "o"),
        "solve_block": lambda: block.solve_block(time_limit=value),
        "solve_pushing": lambda: pushing.solve_pushing(time_limit=value),
        "plan_pushing": lambda: pushing.plan_pushing(time_limit=value),
        "plan_pushing attempt": lambda: pushing.plan_pushing(attempt_time_limit=value),
        "solve_plate_design": lambda: plate_design.solve_plate_design(time_limit=value),
    }
    with pytest.raises(MCPInputError, match="must be a number of seconds"):
        calls[entry]()


@pytest.mark.parametrize("value", [True, "5", math.nan, -1.0])
def test_mpcc_solver_solve_refuses_a_bad_limit(value: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """``MPCCSolver.solve(time_limit=0)`` is allowed (the homotopy stops at once); the rest not."""
    import casadi as ca

    x = ca.SX.sym("x", 2)
    solver = mcpkit.MPCCSolver(mcpkit.MPCC.from_casadi(x, x[0], x[1], f=ca.sumsqr(x - 1)))
    monkeypatch.setattr(solver.homotopy, "run", _never)
    with pytest.raises(MCPInputError, match="time_limit must be a number of seconds >= 0"):
        solver.solve(time_limit=value)


@pytest.mark.parametrize("value", [True, "abc", math.nan, -1.0, 0.0])
@pytest.mark.parametrize("how", ["timelimit", "options timelimit", "options time_limit"])
def test_pyomo_plugin_refuses_a_bad_limit_before_reading_the_model(
    how: str, value: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pyomo's spelling and mcpkit's alike; a numeric string (Pyomo's option dictionaries) is
    taken as its number."""
    pyo = pytest.importorskip("pyomo.environ")
    from mcpkit.frontends import pyomo_plugin

    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.o = pyo.Objective(expr=m.x)
    solver = pyo.SolverFactory("mcpkit")
    monkeypatch.setattr(type(solver), "_route_for", _never)
    kw: dict[str, Any] = {"timelimit": value} if how == "timelimit" else {"options": {how.split()[1]: value}}
    with pytest.raises(MCPInputError, match="must be a number of seconds"):
        solver.solve(m, **kw)
    assert pyomo_plugin._pyomo_seconds("5", "timelimit") == 5.0
    assert pyomo_plugin._pyomo_seconds("inf", "timelimit") is None


@pytest.mark.parametrize("value", [True, "5", math.nan, -1.0])
def test_solver_solve_refuses_a_bad_limit(value: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """``mcpkit.Solver.solve`` ran with ``time_limit=True``, ``"5"`` or ``-1`` (as 1 ms); ``0``
    and ``inf`` are allowed, and ``warm_start`` must be a bool."""
    solver = mcpkit.Solver(mcpkit.MCP.lcp(np.eye(2), [1.0, -1.0]), method="newton")
    monkeypatch.setattr(solver.route, "solve", _never)
    with pytest.raises(MCPInputError, match="time_limit must be a number of seconds >= 0"):
        solver.solve(time_limit=value)
    with pytest.raises(MCPInputError, match="warm_start must be True or False"):
        solver.solve(warm_start="yes")


@pytest.mark.parametrize(
    "option, value, says",
    [
        ("time_limit", "a", "solve_mcp: time_limit must be a number of seconds"),
        ("time_limit", True, "solve_mcp: time_limit must be a number of seconds"),
        ("convergence_tolerance", "x", "convergence_tolerance must be a real number"),
        ("convergence_tolerance", -1.0, "convergence_tolerance must be > 0"),
    ],
)
def test_solve_mcp_checks_its_path_named_options(option: str, value: Any, says: str) -> None:
    """``time_limit="a"`` and ``convergence_tolerance="x"`` raised a bare ``ValueError`` and
    ``time_limit=True`` ran with one second."""
    with pytest.raises(MCPInputError, match=says):
        mcpkit.solve_mcp(lambda z: z, lambda z: np.eye(2), np.zeros(2), np.full(2, np.inf), **{option: value})
