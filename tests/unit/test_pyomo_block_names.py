"""``from_pyomo`` names the MCP's blocks after the model's components.

Variables are grouped into blocks by their ``Var`` component, parameters by their ``Param``
component, and each block records the ``Complementarity`` (or ``Constraint``) components its
functions come from, so ``to_text()`` and ``explain()`` read in the user's names. The stacked
order still maps back to the model (``write_back``) and the functions are unchanged (checked
against the Pyomo expressions evaluated at the same point).
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.mpec import Complementarity, complements

from mcpkit.lowering.pyomo import from_pyomo, write_back


def _model() -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.I = pyo.Set(initialize=[1, 2])
    m.price = pyo.Var(m.I, initialize=0.5)
    m.level = pyo.Var(initialize=0.1)
    m.demand = pyo.Param(m.I, initialize={1: 1.0, 2: 2.0}, mutable=True)
    m.market = Complementarity(
        m.I, rule=lambda m, i: complements(m.price[i] >= 0, m.price[i] ** 2 - m.demand[i] + m.level >= 0)
    )
    m.balance = pyo.Constraint(expr=m.level == m.price[1] + 0.5)
    return m


def test_blocks_carry_the_component_names() -> None:
    m = _model()
    mcp = from_pyomo(m)
    assert mcp.name == "pyomo"  # Pyomo's default "unknown" is not a name
    assert [(b.name, b.size) for b in mcp.blocks] == [("price", 2), ("level", 1)]
    assert [pb.name for pb in mcp.parameter_blocks] == ["demand"]
    assert mcp.function_sources == {"price": "market", "level": "balance"}
    text = mcp.to_text()
    assert text.startswith("MCP 'pyomo': given parameters (demand), find z = (price, level) such that")
    assert "# price: F from market" in text and "# level: F from balance" in text
    assert "0 <= price[0] ⟂" in text and "(level free)" in text
    assert "unknown" not in text and " z[" not in text and "p[" not in text
    assert "(from market)" in mcp.explain()
    assert from_pyomo(m, name="eq").name == "eq"


def test_functions_and_write_back_follow_the_new_order() -> None:
    m = _model()
    mcp = from_pyomo(m)
    z = np.array([0.3, 1.7, -0.2])
    F = mcp.evaluate(z, mcp.parameter_values)
    write_back(mcp, z)
    assert [pyo.value(m.price[1]), pyo.value(m.price[2]), pyo.value(m.level)] == pytest.approx(z)
    expected = [pyo.value(m.price[i] ** 2 - m.demand[i] + m.level) for i in (1, 2)]
    np.testing.assert_allclose(F[:2], expected, rtol=0, atol=1e-12)
    # the free variable's equation: level - price[1] - 0.5 up to sign
    assert abs(F[2]) == pytest.approx(abs(-0.2 - 0.3 - 0.5), abs=1e-12)


def test_a_var_split_over_two_complementarities_and_nested_blocks() -> None:
    m = pyo.ConcreteModel(name="two")
    m.b = pyo.Block()
    m.b.x = pyo.Var([0, 1, 2])
    m.lo = Complementarity(expr=complements(m.b.x[0] >= 0, m.b.x[0] - 1 >= 0))
    m.hi = Complementarity([1, 2], rule=lambda m, i: complements(m.b.x[i] >= 0, m.b.x[i] + i >= 0))
    m.w = pyo.Var()  # free: takes the auxiliary definition s - (x[0] + x[1]) = 0
    m.sq = Complementarity(expr=complements(m.b.x[0] + m.b.x[1] >= 0, m.b.x[2] - 3 + m.w >= 0))
    mcp = from_pyomo(m)
    names = [b.name for b in mcp.blocks]
    assert mcp.name == "two"
    # x is split between two Complementarity components; sq pairs an expression (auxiliary s)
    assert names == ["b_x_lo", "b_x_hi", "s_sq", "w"] and mcp.n == 5
    assert mcp.function_sources == {"b_x_lo": "lo", "b_x_hi": "hi", "s_sq": "sq", "w": "sq"}
    src = mcp.pyomo_source.vars
    assert src[0] is m.b.x[0] and src[1] is m.b.x[1] and src[2] is m.b.x[2]
    assert src[3] is None and src[4] is m.w
