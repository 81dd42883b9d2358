"""MPCC.from_pyomo: structure, semantics of every complements form, typed errors; plugin plumbing.

No solver runs here. Values are cross-checked against Pyomo's own evaluation of the expressions.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyomo.environ as pyo
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyomo.mpec import Complementarity, complements

from mcpkit import MPCC, MCPInputError
from mcpkit.frontends.pyomo_plugin import pyomo_kind, pyomo_status
from mcpkit.lowering.from_pyomo import pyomo_source, structure_fingerprint
from mcpkit.solving.result import MPCCResult, SolutionStatus, Termination
from tests.pyomo_mpec_models import EXAMPLES, bard1, df, linear1


def _eval_pyomo(m: pyo.ConcreteModel, exprs: list) -> np.ndarray:
    return np.array([float(pyo.value(e)) for e in exprs])


def test_bard1_structure_and_values() -> None:
    m = bard1()
    mp = MPCC.from_pyomo(m)
    src = pyomo_source(mp)
    assert [v.name for v in src.variables] == ["x", "y", "lam[1]", "lam[2]", "lam[3]"]
    assert mp.n_pairs == 3 and mp.g.numel() == 1 and mp.p.numel() == 0
    np.testing.assert_array_equal(mp.lbx, [0, 0, -np.inf, -np.inf, -np.inf])
    assert mp.is_standard()
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = rng.normal(size=5)
        src.write_back(x)
        v = mp.evaluate(x, mp.p0)
        assert v["f"][0] == pytest.approx(pyo.value(m.obj), abs=1e-12)
        # H_i = row_i (the first side, 0 <= row), G_i = lam_i
        np.testing.assert_allclose(v["H"], _eval_pyomo(m, [m.row[i] for i in m.I]), atol=1e-12)
        np.testing.assert_allclose(v["G"], x[2:], atol=1e-12)
        assert v["g"][0] == pytest.approx(pyo.value(m.stat.body), abs=1e-12)


def test_every_complements_form() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(6), initialize=0.5)
    m.p = pyo.Param(initialize=2.0, mutable=True)
    m.a = Complementarity(expr=complements(pyo.inequality(-1, m.x[0], 3), m.x[1] ** 2 - 1))  # ranged first
    m.b = Complementarity(expr=complements(m.x[2] + 1, pyo.inequality(0, 2 * m.x[1], 4)))  # ranged second
    m.c = Complementarity(expr=complements(m.x[3] <= m.p, m.x[4] >= m.x[5]))  # param bound, vars both sides
    m.d = Complementarity(expr=complements(m.x[5] - 1 == m.p, m.x[0]))  # equality side: an equation
    mp = MPCC.from_pyomo(m)
    np.testing.assert_array_equal(mp.lbH, [-1, 0, 0])
    np.testing.assert_array_equal(mp.ubH, [3, 4, np.inf])
    np.testing.assert_array_equal(mp.lbG, [-np.inf, -np.inf, 0])
    assert mp.g.numel() == 1 and mp.lbg[0] == 0 and mp.ubg[0] == 0
    x = np.arange(6) * 0.3 - 0.4
    pyomo_source(mp).write_back(x)
    v = mp.evaluate(x, mp.p0)
    np.testing.assert_allclose(v["H"], [x[0], 2 * x[1], 2.0 - x[3]], atol=1e-14)
    np.testing.assert_allclose(v["G"], [x[1] ** 2 - 1, x[2] + 1, x[4] - x[5]], atol=1e-14)
    assert v["g"][0] == pytest.approx(x[5] - 1 - 2.0)
    # the parameter is symbolic: a new value needs no new import
    v3 = mp.evaluate(x, np.array([3.0]))
    assert v3["H"][2] == pytest.approx(3.0 - x[3]) and v3["g"][0] == pytest.approx(x[5] - 4.0)


def test_indexed_skip_and_deactivated() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4))
    m.cc = Complementarity(
        range(4),
        rule=lambda m, i: Complementarity.Skip if i == 3 else complements(m.x[i] >= 0, m.x[i + 1] >= 0),
    )
    m.cc[1].deactivate()
    m.off = Complementarity(expr=complements(m.x[0] >= 1, m.x[3] >= 1))
    m.off.deactivate()
    m.con = pyo.Constraint(expr=m.x[0] + m.x[3] <= 5)
    m.con.deactivate()
    mp = MPCC.from_pyomo(m)
    assert mp.n_pairs == 2 and mp.g.numel() == 0
    names = [v.name for v in pyomo_source(mp).variables]
    assert names == ["x[0]", "x[1]", "x[2]", "x[3]"]


def test_constraints_bounds_params_fixed_and_sense() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2], bounds=(-5, 5), initialize=1.0)
    m.y = pyo.Var(domain=pyo.NonNegativeReals)
    m.z = pyo.Var(initialize=4.0)
    m.z.fix()
    m.lo = pyo.Param(initialize=1.0, mutable=True)
    m.k = pyo.Param(initialize=7.0)  # immutable: a number
    m.r1 = pyo.Constraint(expr=pyo.inequality(-1, m.x[1] + m.x[2], 2))  # ranged, constant bounds
    m.r2 = pyo.Constraint(expr=pyo.inequality(m.lo, m.x[1] * m.x[2], m.lo + 3))  # ranged, param bounds
    m.r3 = pyo.Constraint(expr=m.x[1] + m.z == m.k)
    m.obj = pyo.Objective(expr=m.x[1] ** 2 + m.y - m.z, sense=pyo.maximize)
    m.cc = Complementarity(expr=complements(m.y >= 0, m.x[2] <= 4))
    mp = MPCC.from_pyomo(m)
    src = pyomo_source(mp)
    assert src.sense == -1
    assert [q.name for q in src.params] == ["lo", "z"]
    np.testing.assert_array_equal(mp.p0, [1.0, 4.0])
    assert mp.g.numel() == 4  # r1, r2 as two rows, r3
    np.testing.assert_array_equal(mp.lbg, [-1, 0, 0, 7])
    np.testing.assert_array_equal(mp.ubg, [2, np.inf, np.inf, 7])
    np.testing.assert_array_equal(mp.lbx, [-5, -5, 0])
    x = np.array([0.7, -0.2, 0.3])
    v = mp.evaluate(x, mp.p0)
    assert v["f"][0] == pytest.approx(-(0.49 + 0.3 - 4.0))  # minimises -objective
    assert v["g"][1] == pytest.approx(0.7 * -0.2 - 1.0) and v["g"][2] == pytest.approx(4.0 - 0.7 * -0.2)
    assert v["g"][3] == pytest.approx(0.7 + 4.0)
    assert v["H"][0] == pytest.approx(0.3) and v["G"][0] == pytest.approx(4 + 0.2)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-3, 3), min_size=2, max_size=2))
def test_df_values_match_pyomo(xy: list[float]) -> None:
    m = df()
    mp = MPCC.from_pyomo(m)
    x = np.array(xy)
    pyomo_source(mp).write_back(x)
    v = mp.evaluate(x, mp.p0)
    assert v["f"][0] == pytest.approx(pyo.value(m.obj), abs=1e-12)
    np.testing.assert_allclose(v["g"], _eval_pyomo(m, [c.body for c in m.cons.values()]), atol=1e-12)
    assert v["H"][0] == pytest.approx(x[1]) and v["G"][0] == pytest.approx(x[1] + 1 - x[0] ** 2)


def test_functions_and_named_expressions() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var([0, 1], initialize=0.3)
    m.e = pyo.Expression(expr=pyo.exp(m.x[0]) + pyo.log(1 + m.x[1] ** 2) + abs(m.x[1]))
    m.obj = pyo.Objective(
        expr=m.e + pyo.sin(m.x[0]) * pyo.sqrt(2 + m.x[1]) + pyo.Expr_if(IF=m.x[0] >= 0, THEN=m.x[0], ELSE=0)
    )
    m.cc = Complementarity(expr=complements(m.x[0] >= 0, m.e >= 0))
    mp = MPCC.from_pyomo(m)
    for x in ([0.3, -0.7], [-0.4, 1.1]):
        pyomo_source(mp).write_back(np.array(x))
        v = mp.evaluate(np.array(x), mp.p0)
        assert v["f"][0] == pytest.approx(pyo.value(m.obj), rel=1e-12)
        assert v["G"][0] == pytest.approx(pyo.value(m.e), rel=1e-12)


# ------------------------------------------------------------------------- typed errors
def _base() -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var([0, 1])
    m.obj = pyo.Objective(expr=m.x[0] ** 2)
    return m


def test_integer_variable_named() -> None:
    m = _base()
    m.n = pyo.Var(domain=pyo.Integers)
    m.c = pyo.Constraint(expr=m.n + m.x[0] >= 1)
    with pytest.raises(MCPInputError, match=r"'n' \(Integers\) is integer"):
        MPCC.from_pyomo(m)
    m.n.fix(2)  # a fixed integer is a parameter
    assert MPCC.from_pyomo(m).p.numel() == 1


def test_external_function_named() -> None:
    m = _base()
    m.ext = pyo.ExternalFunction(library="nolib.so", function="myfun")
    m.c = pyo.Constraint(expr=m.ext(m.x[0]) >= 0)
    with pytest.raises(MCPInputError, match=r"constraint 'c': external function 'ext' \('myfun'"):
        MPCC.from_pyomo(m)


def test_unsupported_component_named() -> None:
    m = _base()
    m.sos = pyo.SOSConstraint(var=m.x, sos=1)
    with pytest.raises(MCPInputError, match=r"'sos'.*SOSConstraint"):
        MPCC.from_pyomo(m)
    m.sos.deactivate()
    MPCC.from_pyomo(m)


def test_two_objectives() -> None:
    m = _base()
    m.obj2 = pyo.Objective(expr=m.x[1])
    with pytest.raises(MCPInputError, match="2 active objectives"):
        MPCC.from_pyomo(m)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda m: complements(m.x[0] >= 0, m.x[1] - 1 == 0), r"cc.*equality.*ignores the bound"),
        (lambda m: complements(m.x[0], m.x[1]), r"cc has 0 finite bounds"),
        (lambda m: complements(pyo.inequality(0, m.x[0], 1), m.x[1] >= 0), r"cc has 3 finite bounds"),
        (lambda m: complements(pyo.inequality(0, m.x[0], m.q), m.x[1]), r"cc.*must be constants"),
    ],
)
def test_bad_complementarity_named(make: object, match: str) -> None:
    m = _base()
    m.q = pyo.Param(initialize=1.0, mutable=True)
    m.cc = Complementarity(expr=make(m))
    with pytest.raises(MCPInputError, match=match):
        MPCC.from_pyomo(m)


def test_not_a_model() -> None:
    with pytest.raises(MCPInputError, match="Pyomo model"):
        MPCC.from_pyomo(object())


# ------------------------------------------------------------------------- dispatch, plugin
@pytest.mark.parametrize("name", list(EXAMPLES))
def test_kind(name: str) -> None:
    build, optimum = EXAMPLES[name]
    assert pyomo_kind(build()) == ("mcp" if optimum is None else "mpcc")


def test_constant_objective_is_mcp_and_fingerprint() -> None:
    m = EXAMPLES["munson1"][0]()
    m.obj = pyo.Objective(expr=0.0)
    assert pyomo_kind(m) == "mcp"
    m2 = linear1()
    fp = structure_fingerprint(m2)
    assert structure_fingerprint(m2) == fp
    m2.x[1].setub(1.0)
    assert structure_fingerprint(m2) != fp


def _result(solved: bool, term: Termination, stationarity: str | None) -> MPCCResult:
    nan = np.full(1, np.nan)
    return MPCCResult(
        x=np.zeros(1), f=0.0, g=nan, G=nan, H=nan, comp_residual=0.0, constraint_violation=0.0,
        stationarity=stationarity, termination=term,
        solution_status=SolutionStatus.SOLUTION if solved else SolutionStatus.INACCURATE,
        tol=1e-6, iterations=0, wall_time_s=0.0, backend="casadi", method="scholtes",
    )  # fmt: skip


@pytest.mark.parametrize(
    "solved, term, stat, has_obj, want",
    [
        (True, Termination.CONVERGED, "B", True, ("optimal", "ok")),
        (True, Termination.CONVERGED, "S", True, ("optimal", "ok")),
        (True, Termination.CONVERGED, "C", True, ("feasible", "ok")),
        (True, Termination.CONVERGED, None, True, ("feasible", "ok")),
        (True, Termination.CONVERGED, None, False, ("optimal", "ok")),
        (False, Termination.STALLED, None, True, ("other", "warning")),
        (False, Termination.ITERATION_LIMIT, None, True, ("maxIterations", "warning")),
        (False, Termination.TIME_LIMIT, None, False, ("maxTimeLimit", "warning")),
        (False, Termination.LOCALLY_INFEASIBLE, None, True, ("infeasible", "warning")),
        (False, Termination.SOLVER_ERROR, None, True, ("solverFailure", "error")),
        (False, Termination.INTERRUPTED, None, True, ("userInterrupt", "aborted")),
    ],
)
def test_status_map(solved: bool, term: Termination, stat: str | None, has_obj: bool, want: tuple) -> None:
    tc, ss, _ = pyomo_status(_result(solved, term, stat), has_obj)
    assert (tc.value, ss.value) == want


@pytest.mark.parametrize(
    "code",
    [
        "import mcpkit, pyomo.environ as pyo; s = pyo.SolverFactory('mcpkit'); s.available(); print(s.name)",
        "import pyomo.environ as pyo, mcpkit; s = pyo.SolverFactory('mcpkit'); s.available(); print(s.name)",
        "import sys, mcpkit; assert 'pyomo.opt' not in sys.modules; print('mcpkit')",
    ],
)
def test_registered_in_fresh_interpreter(code: str) -> None:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("mcpkit")


def test_unknown_solve_argument_refused() -> None:
    import mcpkit  # noqa: F401

    with pytest.raises(MCPInputError, match="unknown arguments"):
        pyo.SolverFactory("mcpkit").solve(linear1(), bogus=1)


def test_empty_model_refused() -> None:
    m = pyo.ConcreteModel()
    m.S = pyo.Set(initialize=[])
    m.x = pyo.Var(m.S)
    m.obj = pyo.Objective(expr=sum(m.x[i] for i in m.S))
    with pytest.raises(MCPInputError, match="no free variable"):
        MPCC.from_pyomo(m)


def test_relax_integrality_opt_in() -> None:
    m = _base()
    m.n = pyo.Var(domain=pyo.Binary)
    m.c = pyo.Constraint(expr=m.n + m.x[0] >= 1)
    mp = MPCC.from_pyomo(m, relax_integrality=True)
    k = [v.name for v in pyomo_source(mp).variables].index("n")
    assert (mp.lbx[k], mp.ubx[k]) == (0.0, 1.0)


def test_integer_refused_on_the_mcp_route_too() -> None:
    import mcpkit

    m = EXAMPLES["munson1"][0]()
    m.x[2].domain = pyo.Integers
    with pytest.raises(MCPInputError, match=r"'x\[2\]' \(Integers\) is integer"):
        mcpkit.solve(m)


def test_set_options_cli_string() -> None:
    import mcpkit  # noqa: F401

    opt = pyo.SolverFactory("mcpkit")
    opt.set_options("method=scholtes tol=1e-8 max_outer=30")
    assert dict(opt.options) == {"method": "scholtes", "tol": 1e-8, "max_outer": 30}
    with pytest.raises(MCPInputError, match="key=value"):
        opt.set_options("scholtes")


def test_available_says_why_not(monkeypatch: pytest.MonkeyPatch) -> None:
    import casadi as ca

    from mcpkit.errors import SolverNotAvailableError
    from mcpkit.frontends.pyomo_plugin import McpkitSolver

    monkeypatch.setattr(ca, "has_nlpsol", lambda name: False)
    opt = McpkitSolver()
    assert opt.available(exception_flag=False) is False
    assert "IPOPT plugin" in (opt.unavailable_reason or "")
    with pytest.raises(SolverNotAvailableError, match="IPOPT plugin does not load"):
        opt.available()
