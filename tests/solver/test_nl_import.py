"""Pyomo models through the NL writer into CasADi, and the ``mcpkit_ipopt`` Pyomo solver."""

from __future__ import annotations

import casadi as ca
import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.mpec import Complementarity, complements

from mcpkit.homotopy.ipopt_plugin import register
from mcpkit.lowering.nl_import import import_pyomo_nl

pytestmark = pytest.mark.solver


def test_import_keeps_variable_and_row_order() -> None:
    m = pyo.ConcreteModel()
    m.a = pyo.Var(bounds=(0, 2), initialize=1.5)
    m.b = pyo.Var(initialize=-1.0)
    m.c1 = pyo.Constraint(expr=m.a + 2 * m.b <= 3)
    m.c2 = pyo.Constraint(expr=m.a * m.b == 1)
    m.o = pyo.Objective(expr=(m.a - 1) ** 2 + m.b**2)
    nlp = import_pyomo_nl(m)
    assert sorted(v.name for v in nlp.variables) == ["a", "b"]
    order = {v.name: k for k, v in enumerate(nlp.variables)}
    x = np.zeros(2)
    x[order["a"]], x[order["b"]] = 1.5, -1.0
    f, g = ca.Function("t", [nlp.x], [nlp.f, nlp.g])(x)
    assert float(f) == pytest.approx(0.25 + 1.0)
    rows = {c.name: k for k, c in enumerate(nlp.constraints)}
    assert float(g[rows["c2"]]) == pytest.approx(-1.5)
    assert nlp.lbx[order["a"]] == 0 and nlp.ubx[order["a"]] == 2


def test_mcpkit_ipopt_solves_min_and_max() -> None:
    register()
    m = pyo.ConcreteModel()
    m.y = pyo.Var(bounds=(0, 2), initialize=0.2)
    m.o = pyo.Objective(expr=-((m.y - 1) ** 2), sense=pyo.maximize)
    res = pyo.SolverFactory("mcpkit_ipopt").solve(m)
    assert str(res.solver.termination_condition) == "optimal"
    assert m.y.value == pytest.approx(1.0, abs=1e-7)


def test_pyomo_mpec_nlp_runs_on_mcpkit_ipopt() -> None:
    register()
    m = pyo.ConcreteModel()
    m.x = pyo.Var([0, 1], bounds=(0, None), initialize=1)
    M = np.array([[2.0, 1.0], [1.0, 2.0]])
    m.c = Complementarity(
        [0, 1], rule=lambda m, i: complements(m.x[i] >= 0, sum(M[i, j] * m.x[j] for j in range(2)) - 1 >= 0)
    )
    m.o = pyo.Objective(expr=0.0)
    opt = pyo.SolverFactory("mpec_nlp")
    opt.options.solver = "mcpkit_ipopt"
    opt.solve(m)
    np.testing.assert_allclose([m.x[0].value, m.x[1].value], [1 / 3, 1 / 3], atol=1e-6)
