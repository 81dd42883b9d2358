"""Nonsmooth F of a CasADi function (if_else, comparisons, logic, fmin, fmax, fabs): the sympy
declaration computes what CasADi computes, lowers back to CasADi and Pyomo with the same values
and CasADi's branchwise derivatives, is never an affine block, and prints as a piecewise row."""

from __future__ import annotations

from pathlib import Path

import casadi as ca
import numpy as np
import pyomo.environ as pyo
import pytest
import sympy as sp

from mcpkit.errors import MCPInputError
from mcpkit.formats.mcp_file import load_any_mcp, save_mcp_file
from mcpkit.lowering.casadi import sympy_to_casadi
from mcpkit.lowering.casadi_sympy import casadi_to_sympy, undeclarable
from mcpkit.lowering.from_casadi import mcp_from_casadi
from mcpkit.lowering.pyomo import sympy_to_pyomo
from mcpkit.problems.functions import AffineFunction

z = ca.SX.sym("z", 2)
#: Rows with every nonsmooth operation; points on both sides of each switch and exactly on it.
ROWS = ca.vertcat(
    -z[0] + 4 + ca.if_else(z[0] > 2, -9, 0),
    ca.if_else(ca.logic_and(z[0] >= 1, z[1] < 3), z[0] * z[1], ca.fmin(z[0], z[1])),
    ca.fmax(z[1] - 1, 0) + ca.fabs(z[0] - z[1]) + (z[0] == z[1]) - ca.if_else(ca.logic_not(z[1] <= 0), 1, 2),
    ca.if_else(ca.logic_or(z[0] != 1, z[1] > 5), z[0] ** 2, -z[1]),
)
FUN = ca.Function("F", [z], [ROWS])
POINTS = [(a, b) for a in (-1.0, 0.5, 1.0, 2.0, 2.5, 3.0) for b in (-0.5, 0.0, 1.0, 2.0, 3.0, 6.0)]


def _sympy_rows() -> tuple[list[sp.Expr], list[sp.Symbol]]:
    syms = list(sp.symbols("z0 z1"))
    (rows,) = casadi_to_sympy(FUN, [syms])
    return rows, syms


def test_the_sympy_rows_compute_what_casadi_computes() -> None:
    rows, syms = _sympy_rows()
    assert all(r.has(sp.Piecewise, sp.Min, sp.Max, sp.Abs) for r in rows)
    for pt in POINTS:
        want = np.asarray(FUN(pt), dtype=float).reshape(-1)
        got = [float(r.subs(dict(zip(syms, pt, strict=True)))) for r in rows]
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-14, err_msg=str(pt))


def test_lowered_back_to_casadi_values_and_branchwise_jacobian_agree() -> None:
    rows, syms = _sympy_rows()
    x = ca.SX.sym("x", 2)
    back = ca.vertcat(*sympy_to_casadi(rows, syms, [x[0], x[1]]))
    G = ca.Function("G", [x], [back, ca.jacobian(back, x)])
    J = ca.Function("J", [z], [ca.jacobian(ROWS, z)])
    for pt in POINTS:
        g, jg = G(pt)
        np.testing.assert_allclose(np.asarray(g).reshape(-1), np.asarray(FUN(pt)).reshape(-1), atol=1e-14)
        np.testing.assert_allclose(np.asarray(jg), np.asarray(J(pt)), atol=1e-14, err_msg=str(pt))


def test_pyomo_expr_if_agrees_and_logic_is_refused_with_a_typed_error() -> None:
    rows, syms = _sympy_rows()
    m = pyo.ConcreteModel()
    m.z = pyo.Var([0, 1])
    (first,) = sympy_to_pyomo([rows[0]], syms, [m.z[0], m.z[1]])
    for pt in POINTS:
        m.z[0].value, m.z[1].value = pt
        assert pyo.value(first) == pytest.approx(float(FUN(pt)[0]), abs=1e-14)
    with pytest.raises(MCPInputError, match="logical condition"):
        sympy_to_pyomo([rows[1]], syms, [m.z[0], m.z[1]])


def test_a_nonsmooth_function_is_a_symbolic_block_never_an_affine_one() -> None:
    """if_else(z > 2, -9, 0) - z + 4 has the constant Jacobian -1 almost everywhere: structurally
    it is not affine, so it is not declared as -z + 4."""
    x = ca.SX.sym("x")
    mcp = mcp_from_casadi(ca.Function("c", [x], [-x + 4 + ca.if_else(x > 2, -9, 0)]), 0, 3)
    fb = mcp.function_block("z")
    assert not isinstance(fb, AffineFunction)
    (row,) = fb.exprs
    zz = list(mcp.variables)[0]
    assert row == sp.Piecewise((-zz - 5, zz > 2), (4 - zz, True))  # folded into one piecewise row
    assert mcp.evaluate([2.5]).tolist() == [-7.5] and mcp.evaluate([2.0]).tolist() == [2.0]


def test_undeclarable_names_the_operation_and_passes_the_nonsmooth_ones() -> None:
    x = ca.SX.sym("x")
    assert undeclarable(FUN) is None
    why = undeclarable(ca.Function("f", [x], [ca.fmod(x, 2.0) + ca.erf(x)]))
    assert why is not None and "OP_FMOD" in why


def test_print_shows_the_piecewise_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from mcpkit.command import cli

    x = ca.SX.sym("x")
    path = save_mcp_file(
        tmp_path / "c.json", ca.Function("c", [x], [-x + 4 + ca.if_else(x > 2, -9, 0)]), 0, 3
    )
    assert load_any_mcp(path)[0].n == 1
    assert cli.main(["print", str(path)]) in (0, None)
    out = capsys.readouterr().out
    assert "Piecewise((-z - 5, z > 2), (4 - z, True))" in out, out
