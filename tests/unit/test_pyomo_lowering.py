"""Unit tests of the Pyomo lowering (no solver runs)."""

from __future__ import annotations

import math

import numpy as np
import pyomo.environ as pyo
import pytest
import sympy as sp
from pyomo.mpec import Complementarity, complements

from mcpkit.errors import MCPInputError
from mcpkit.lowering.pyomo import ToPyomo, from_pyomo, to_pyomo, write_back
from mcpkit.problems.mcp import MCP


def _mixed() -> MCP:
    """Box [1,3], upper-only, lower-only (affine), free and fixed pairs, one parameter."""
    mcp = MCP("mixed")
    a = mcp.add_parameters("a", 1, value=2.0)
    x = mcp.add_variables("x", 2, lb=[1.0, -math.inf], ub=[3.0, 2.0], start=[1.5, 0.5])
    y = mcp.add_variables("y", 1, lb=0.0)
    w = mcp.add_variables("w", 1, lb=-math.inf, ub=math.inf)
    f = mcp.add_variables("f", 1, lb=5.0, ub=5.0)
    mcp.add_functions("x", [sp.exp(x[0]) - a[0] * y[0], x[1] ** 2 - 1])
    mcp.add_affine("y", [[1.0, 2.0, 3.0, 0.0, 0.0]], [a[0] - 1])
    mcp.add_functions("w", [w[0] - sp.sin(x[0])])
    mcp.add_functions("f", [x[0] + f[0]])
    return mcp


def test_structure_components_and_bounds() -> None:
    m, info = ToPyomo().apply(_mixed())
    vars_ = list(m.component_objects(pyo.Var))
    assert [v.name for v in vars_] == ["x", "y", "w", "f"]
    assert m.x[0].bounds == (1.0, 3.0) and m.x[1].bounds == (None, 2.0)
    assert m.y[0].bounds == (0.0, None) and m.w[0].bounds == (None, None)
    assert m.f[0].fixed and m.f[0].value == 5.0
    assert m.x[0].value == 1.5 and m.x[1].value == 0.5
    params = list(m.component_objects(pyo.Param))
    assert len(params) == 1 and params[0].mutable
    ccs = {c.name: len(c) for c in m.component_objects(Complementarity)}
    assert ccs == {"cc_x": 2, "cc_y": 1, "cc_w": 1, "cc_f": 0}  # the fixed pair has no condition
    assert info.var_names == {"x": "x", "y": "y", "w": "w", "f": "f"}


def test_box_cases_state_the_right_pairs() -> None:
    """Each complementarity's canonical form matches the box case of its pair."""
    m, _ = ToPyomo().apply(_mixed())
    c0 = m.cc_x[0]
    lo, e, hi = c0._canonical_expression(c0._args[0])
    assert (pyo.value(lo), e is m.x[0], pyo.value(hi)) == (1.0, True, 3.0)
    assert c0._canonical_expression(c0._args[1])[0] is None  # plain expression side
    c1 = m.cc_x[1]
    lo1, e1, hi1 = c1._canonical_expression(c1._args[0])
    assert lo1 is None and e1 is m.x[1] and pyo.value(hi1) == 2.0
    assert c1._canonical_expression(c1._args[1])[0] is None  # F <= 0 side: upper bound only
    cw = m.cc_w[0]
    assert len(cw._canonical_expression(cw._args[0])) == 2  # equality F == 0


def test_expressions_match_declaration_and_params_are_mutable() -> None:
    """F in Pyomo equals the CasADi evaluation of the declaration, before and after a p change."""
    mcp = _mixed()
    m, info = ToPyomo().apply(mcp)
    rng = np.random.default_rng(1)
    z = np.array([1.7, -0.3, 0.8, 0.4, 5.0]) + 0.1 * rng.standard_normal(5)
    z[4] = 5.0
    info.set_values(m, z)
    for pv in (2.0, -1.5):
        info.set_parameters(m, np.array([pv]))
        got = np.array([pyo.value(e) for e in info.F])
        ref = mcp.evaluate(z, [pv])
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    # closed form for the affine row: y-row = x0 + 2 x1 + 3 y0 + a - 1
    assert pyo.value(info.F[2]) == pytest.approx(z[0] + 2 * z[1] + 3 * z[2] - 1.5 - 1, abs=1e-12)


def test_invert_order_and_to_pyomo() -> None:
    m, inv = to_pyomo(_mixed())
    m.x[0].set_value(2.0)
    m.x[1].set_value(-1.0)
    m.y[0].set_value(0.25)
    m.w[0].set_value(7.0)
    np.testing.assert_array_equal(inv(m), [2.0, -1.0, 0.25, 7.0, 5.0])


def test_embeddable_in_user_model() -> None:
    m, _ = to_pyomo(MCP.lcp([[2.0, 1.0], [1.0, 2.0]], [-1.0, -1.0]))
    outer = pyo.ConcreteModel()
    outer.sub = m
    assert len(list(outer.component_data_objects(Complementarity, descend_into=True))) == 2


def test_params_as_vars_and_no_complementarity() -> None:
    m, info = ToPyomo(complementarity=False, params_as_vars=True).apply(_mixed())
    assert not list(m.component_objects(Complementarity))
    pvar = info.parameters(m)[0]
    assert pvar.is_variable_type()
    assert pvar.bounds == (2.0, 2.0)
    info.set_parameters(m, np.array([4.0]))
    assert pvar.bounds == (4.0, 4.0)


def test_large_affine_lowering_values() -> None:
    """A dense 200x200 LCP lowers row by row to Mz + q exactly."""
    rng = np.random.default_rng(0)
    M = rng.standard_normal((200, 200))
    q = rng.standard_normal(200)
    m, info = ToPyomo().apply(MCP.lcp(M, q))
    z = rng.standard_normal(200)
    info.set_values(m, z)
    got = np.array([pyo.value(e) for e in info.F])
    np.testing.assert_allclose(got, M @ z + q, rtol=1e-12, atol=1e-10)


def test_from_pyomo_round_trip() -> None:
    """to_pyomo -> from_pyomo keeps bounds and F (fixed pairs become constants)."""
    mcp = _mixed()
    m, _ = to_pyomo(mcp)
    back = from_pyomo(m)
    assert back.n == 4  # x0, x1, y0, w0; f is fixed
    np.testing.assert_array_equal(back.lb, [1.0, -math.inf, 0.0, -math.inf])
    np.testing.assert_array_equal(back.ub, [3.0, 2.0, math.inf, math.inf])
    assert back.n_params == 1 and back.parameter_values[0] == 2.0
    z = np.array([1.3, -0.4, 0.7, 0.2])
    full = np.concatenate([z, [5.0]])
    for pv in (2.0, 0.5):
        np.testing.assert_allclose(back.evaluate(z, [pv]), mcp.evaluate(full, [pv])[:4], atol=1e-12)


def test_from_pyomo_lcp_is_affine() -> None:
    M = np.array([[2.0, 1.0], [1.0, 3.0]])
    m, _ = to_pyomo(MCP.lcp(M, [-1.0, 2.0]))
    back = from_pyomo(m)
    fb = back.function_block("z")
    np.testing.assert_array_equal(fb.M, M)
    assert [float(v) for v in fb.q] == [-1.0, 2.0]


def _user_model() -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(initialize=1.0)
    m.y = pyo.Var()
    m.s = pyo.Var()
    m.p = pyo.Param(mutable=True, initialize=3.0)
    m.c1 = Complementarity(expr=complements(m.x >= 0, m.x + m.y - m.p >= 0))
    m.c2 = Complementarity(expr=complements(m.x + m.y <= 4, m.s**2 - 1 >= 0))  # expression side
    m.e = pyo.Constraint(expr=m.y == 2 * m.s)
    return m


def test_from_pyomo_user_model_standard_form() -> None:
    """x paired directly; x + y <= 4 gets an auxiliary variable; two free vars take 2 equations.

    Expected: z = (x, a) with x >= 0, a <= 4 (a stands for x + y) and F_a = -(s^2 - 1) (an
    upper-bounded side), then the free variables (y, s) with equations a - (x + y) = 0 and
    y - 2 s = 0.
    """
    m = _user_model()
    mcp = from_pyomo(m)
    assert mcp.n == 4
    np.testing.assert_array_equal(mcp.lb, [0.0, -math.inf, -math.inf, -math.inf])
    np.testing.assert_array_equal(mcp.ub, [math.inf, 4.0, math.inf, math.inf])
    x, a, y, s = 0.5, 1.5, 1.0, 0.7
    F = mcp.evaluate([x, a, y, s])
    np.testing.assert_allclose(F, [x + y - 3.0, -(s**2 - 1), a - (x + y), y - 2 * s], atol=1e-12)
    src = mcp.pyomo_source
    assert src.vars[0] is m.x and src.vars[1] is None
    write_back(mcp, np.array([1.0, 2.0, 3.0, 4.0]))
    assert (m.x.value, m.y.value, m.s.value) == (1.0, 3.0, 4.0)


def test_from_pyomo_errors() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    with pytest.raises(MCPInputError, match="no active Complementarity"):
        from_pyomo(m)
    m = _user_model()
    m.obj = pyo.Objective(expr=m.x**2)
    with pytest.raises(MCPInputError, match="objective"):
        from_pyomo(m)
    m = _user_model()
    m.ineq = pyo.Constraint(expr=m.y >= -1)
    with pytest.raises(MCPInputError, match="inequality outside"):
        from_pyomo(m)
    m = _user_model()
    m.extra = pyo.Constraint(expr=m.y + m.s == 1)
    with pytest.raises(MCPInputError, match="not square"):
        from_pyomo(m)
    m = _user_model()
    m.s.setlb(0.0)
    with pytest.raises(MCPInputError, match="have bounds but are not"):
        from_pyomo(m)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.c = Complementarity(expr=complements(m.x >= 0, m.x - 1 >= 0))
    with pytest.raises(MCPInputError, match="tighter"):
        from_pyomo(m)
    with pytest.raises(MCPInputError, match="expects a Pyomo model"):
        from_pyomo("not a model")
    with pytest.raises(MCPInputError, match="from_pyomo"):
        write_back(MCP.lcp([[1.0]], [1.0]), np.zeros(1))
