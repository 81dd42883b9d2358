"""Solves that end solved print nothing: CasADi's evaluation warnings are not shown (only with
``verbose=True``); what matters is recorded in ``result.warnings``.

The compiled warm step of the Newton engine (a CasADi ``rootfinder`` on the Fischer-Burmeister
map) meets a NaN in the map's Jacobian at a degenerate pair (:math:`z_i = F_i = 0`, where
:math:`\\partial\\sqrt{a^2+b^2}` is 0/0); CasADi printed ``...warm_newton:jac_g_x failed: NaN
detected`` to stderr from C++, which only a file-descriptor capture sees.
"""

from __future__ import annotations

import pytest

import mcpkit
from mcpkit import MCP


def degenerate_mcp() -> MCP:
    """``z >= 0 ⟂ (z_0 - p, z_1)``: the second pair is degenerate at every solution (``z_1 = F_1 = 0``)."""
    m = MCP("degenerate")
    z = m.add_variables("z", 2, lb=0.0)
    p = m.add_parameters("p", 1, value=1.0)
    m.add_functions("z", [z[0] - p[0], z[1]])
    return m


def test_warm_newton_nan_is_silent_and_recorded(capfd: pytest.CaptureFixture[str]) -> None:
    solver = mcpkit.Solver(degenerate_mcp(), method="newton")
    first = solver.solve(p=[1.0])
    warm = solver.solve(p=[2.0])
    out, err = capfd.readouterr()
    assert first.solved and warm.solved
    assert abs(warm.z[0] - 2.0) <= warm.tol and abs(warm.z[1]) <= warm.tol
    assert err == "" and out == ""
    assert any("NaN" in w for w in warm.warnings)
    assert "warnings=1" in repr(warm)


def test_verbose_shows_the_warnings(capfd: pytest.CaptureFixture[str]) -> None:
    solver = mcpkit.Solver(degenerate_mcp(), method="newton", verbose=True)
    solver.solve(p=[1.0])
    warm = solver.solve(p=[2.0])
    out, err = capfd.readouterr()
    assert warm.solved and warm.warnings
    assert "mcpkit warning: compiled warm step" in out
    assert "NaN detected" in err  # CasADi's own line, shown with verbose only
