"""Lowering structure: CasADi image, slack MPCC box cases, printer, Chain inversion."""

from __future__ import annotations

import math

import casadi as ca
import numpy as np
import pytest

from mcpkit import MCP
from mcpkit.lowering.base import Chain
from mcpkit.lowering.casadi import MCPToMPCC, ToCasadi, lower_to_casadi
from mcpkit.printing.mcp import ToLatex, to_latex, to_text


def _box_mcp() -> MCP:
    # one pair of each box case: lower only, upper only, both, free, fixed
    lb = [0.0, -math.inf, 1.0, -math.inf, 2.0]
    ub = [math.inf, 2.0, 3.0, math.inf, 2.0]
    return MCP.lcp(np.eye(5) * 2 + 0.1, np.arange(5.0), lb=lb, ub=ub)


def test_slack_mpcc_has_one_slack_per_finite_bound_and_no_condition_for_fixed() -> None:
    mcp = _box_mcp()
    mpcc, data = MCPToMPCC().apply(lower_to_casadi(mcp))
    np.testing.assert_array_equal(data.lower_idx, [0, 2])
    np.testing.assert_array_equal(data.upper_idx, [1, 2])
    assert mpcc.x.numel() == 5 + 2 + 2
    assert mpcc.g.numel() == 4  # every non-fixed component has F_i - w_i + v_i = 0
    assert mpcc.n_pairs == 4
    assert mpcc.G_implied_by_bounds and mpcc.H_implied_by_bounds
    # G = z - l for lower-bounded, u - z for upper-bounded components
    x = np.array([0.5, 1.5, 2.0, 7.0, 2.0, 0.1, 0.2, 0.3, 0.4])
    G = np.asarray(mpcc.function("G")(x, [])).ravel()
    H = np.asarray(mpcc.function("H")(x, [])).ravel()
    np.testing.assert_allclose(G, [0.5 - 0, 2.0 - 1.0, 2.0 - 1.5, 3.0 - 2.0])
    np.testing.assert_allclose(H, [0.1, 0.2, 0.3, 0.4])
    g = np.asarray(mpcc.function("g")(x, [])).ravel()
    F = mcp.evaluate(x[:5])
    np.testing.assert_allclose(g, [F[0] - 0.1, F[1] + 0.3, F[2] - 0.2 + 0.4, F[3]])


def test_chain_inverts_back_to_declaration_variables() -> None:
    mcp = _box_mcp()
    chain = Chain([ToCasadi(), MCPToMPCC()])
    mpcc, inverse = chain.apply(mcp)
    x = np.arange(mpcc.x.numel(), dtype=float)
    np.testing.assert_array_equal(chain.invert(x, inverse), np.arange(5.0))
    assert "ToCasadi -> MCPToMPCC" in repr(chain)


def test_dense_affine_blocks_use_matrix_graphs() -> None:
    big = MCP.lcp(np.eye(80), np.ones(80))
    small = MCP.lcp(np.eye(3), np.ones(3))
    assert isinstance(lower_to_casadi(big).z, ca.MX)
    assert isinstance(lower_to_casadi(small).z, ca.SX)
    # both evaluate the same function
    np.testing.assert_allclose(big.evaluate(np.arange(80.0)), np.arange(80.0) + 1)


def test_lowering_cache_is_invalidated_by_structure_changes() -> None:
    mcp = MCP()
    z = mcp.add_variables("z", 1)
    mcp.add_functions("z", [z[0] - 1])
    first = lower_to_casadi(mcp)
    assert lower_to_casadi(mcp) is first
    w = mcp.add_variables("w", 1)
    mcp.add_functions("w", [w[0] + z[0]])
    assert lower_to_casadi(mcp) is not first
    assert lower_to_casadi(mcp).n == 2


def test_printer_states_each_box_case() -> None:
    text = to_text(_box_mcp(), max_rows=10)
    lines = text.splitlines()[1:]
    assert lines[0].strip().startswith("0 <= z[0] ⟂") and lines[0].endswith(">= 0")
    assert lines[1].strip().startswith("z[1] <= 2 ⟂") and lines[1].endswith("<= 0")
    assert lines[2].strip().startswith("1 <= z[2] <= 3 ⟂")
    assert "= 0   (z[3] free)" in lines[3]
    assert lines[4].strip() == "z[4] = 2   (F free)"


def test_latex_and_name_map_round_trip() -> None:
    mcp = MCP("c")
    lam = mcp.add_variables("lambda_n", 2)
    mcp.add_functions("lambda_n", [lam[0] + 1, lam[1] * lam[0]])
    tex, names = ToLatex().apply(mcp)
    assert r"\lambda_{\mathrm{n},0}" in tex and r"\perp" in tex and r"\begin{aligned}" in tex
    z = ToLatex().invert({r"\lambda_{\mathrm{n},1}": 3.0, r"\lambda_{\mathrm{n},0}": 1.0}, names)
    np.testing.assert_array_equal(z, [1.0, 3.0])


def test_large_affine_block_prints_in_matrix_form() -> None:
    tex = to_latex(MCP.lcp(np.eye(50), np.ones(50)))
    assert "M_{" in tex and "50\\times50" in tex
    assert tex.count(r"\perp") == 1


def test_printer_requires_complete_declaration() -> None:
    mcp = MCP()
    mcp.add_variables("z", 1)
    with pytest.raises(ValueError):
        to_text(mcp)
