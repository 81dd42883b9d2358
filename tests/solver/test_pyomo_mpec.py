"""Pyomo MPECs through mcpkit.solve(model) and SolverFactory("mcpkit"), checked by Pyomo's own evaluation."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.mpec import Complementarity, complements

import mcpkit
from mcpkit.lowering.casadi import lower_to_casadi
from mcpkit.lowering.pyomo import ToPyomo
from mcpkit.solving.residuals import compute_residuals
from tests.pyomo_mpec_models import EXAMPLES, pyomo_violation

pytestmark = pytest.mark.solver

ATOL = 1e-6  # violation of the conditions, by Pyomo's evaluation
F_ATOL = 1e-5  # objective against the known optimum


def _objective(m: pyo.ConcreteModel) -> float | None:
    objs = list(m.component_data_objects(pyo.Objective, active=True))
    return float(pyo.value(objs[0])) if objs else None


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_examples_mcpkit_solve(name: str) -> None:
    build, optimum = EXAMPLES[name]
    m = build()
    res = mcpkit.solve(m)
    assert res.solved, res.message
    assert isinstance(res, mcpkit.MCPResult if optimum is None else mcpkit.MPCCResult)
    viol = pyomo_violation(m)  # the values are in the model
    assert max(viol.values()) <= ATOL, viol
    if optimum is not None:
        assert _objective(m) == pytest.approx(optimum, abs=F_ATOL)
        assert res.extra["pyomo_objective"] == pytest.approx(_objective(m), abs=1e-12)


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_examples_solver_factory(name: str) -> None:
    build, optimum = EXAMPLES[name]
    m = build()
    opt = pyo.SolverFactory("mcpkit")
    results = opt.solve(m, options={"tol": 1e-7})
    tc = results.solver.termination_condition
    assert results.solver.status == pyo.SolverStatus.ok
    assert tc in (pyo.TerminationCondition.optimal, pyo.TerminationCondition.feasible)
    if tc == pyo.TerminationCondition.optimal and optimum is not None:
        assert opt.last_result.stationarity in ("S", "B")
    viol = pyomo_violation(m)
    assert max(viol.values()) <= ATOL, viol
    if optimum is not None:
        assert _objective(m) == pytest.approx(optimum, abs=F_ATOL)


def test_load_solutions_false_keeps_values_until_loaded() -> None:
    build, _ = EXAMPLES["bard1"]
    m = build()
    results = pyo.SolverFactory("mcpkit").solve(m, load_solutions=False)
    assert m.x.value is None
    m.solutions.load_from(results)
    assert max(pyomo_violation(m).values()) <= ATOL
    assert pyo.value(m.obj) == pytest.approx(17.0, abs=F_ATOL)


def test_mutable_param_resolves_reuse_the_import() -> None:
    r"""min (x - p)^2 + (y - 1)^2, 0 <= x _|_ y >= 0: the branch y = 0 has x = p, the branch
    x = 0 has y = 1; each re-solve must land on one branch's own minimiser."""
    m = pyo.ConcreteModel()
    m.p = pyo.Param(initialize=2.0, mutable=True)
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.obj = pyo.Objective(expr=(m.x - m.p) ** 2 + (m.y - 1) ** 2)
    m.cc = Complementarity(expr=complements(m.x >= 0, m.y >= 0))
    opt = pyo.SolverFactory("mcpkit")
    route = None
    for p in (2.0, 3.0, 0.5, 1.5):
        m.p = p
        res = opt.solve(m)
        assert res.solver.termination_condition in (
            pyo.TerminationCondition.optimal,
            pyo.TerminationCondition.feasible,
        )
        x, y = m.x.value, m.y.value
        on_y0 = abs(y) <= ATOL and x == pytest.approx(p, abs=1e-5)
        on_x0 = abs(x) <= ATOL and y == pytest.approx(1.0, abs=1e-5)
        assert on_y0 or on_x0, (p, x, y)
        route = route or opt._route
        assert opt._route is route  # one import for every parameter value
    m.x.setub(10.0)  # a structural change rebuilds
    opt.solve(m)
    assert opt._route is not route


def test_ranged_pair_and_maximise() -> None:
    r"""max -(x - 3)^2 - (y - 1)^2 with 0 <= x <= 2 _|_ y - 1: x = 2 forces y - 1 <= 0; the optimum
    is x = 2, y = 1 (objective -1)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(initialize=1.0)
    m.y = pyo.Var(initialize=0.0)
    m.obj = pyo.Objective(expr=-((m.x - 3) ** 2) - (m.y - 1) ** 2, sense=pyo.maximize)
    m.cc = Complementarity(expr=complements(pyo.inequality(0, m.x, 2), m.y - 1))
    res = pyo.SolverFactory("mcpkit").solve(m)
    assert res.solver.termination_condition in (
        pyo.TerminationCondition.optimal,
        pyo.TerminationCondition.feasible,
    )
    assert max(pyomo_violation(m).values()) <= ATOL
    assert pyo.value(m.obj) == pytest.approx(-1.0, abs=F_ATOL)


def test_ecp_complementarity_steps_through_solver_factory() -> None:
    """Seed-000 complementarity ECP step as a plain Pyomo model: every step of a §6.1 run solves."""
    from mcpkit.models.ecp.params import paper_slider
    from mcpkit.models.ecp.simulation import make_model, run_ecp

    model = make_model("complementarity", paper_slider())
    ref = run_ecp(model, np.array([0.0, 0.0, 0.0, 0.7, 0.9, 10.0]), 0.2, tol=1e-10)
    assert ref.sim.solved
    n = ref.sim.step_solved.size
    params = [
        model.mcp.parameter_vector(model.parameters(k, float(ref.t[k]), ref.states[k])) for k in range(n)
    ]
    m, info = ToPyomo().apply(model.mcp)
    m.obj = pyo.Objective(expr=0.0)
    cas = lower_to_casadi(model.mcp)
    opt = pyo.SolverFactory("mcpkit")
    for k, pv in enumerate(params):
        info.set_parameters(m, pv)
        res = opt.solve(m, options={"method": "scholtes", "tol": 1e-9})
        assert res.solver.termination_condition == pyo.TerminationCondition.optimal, (k, res.solver.message)
        z = np.array([v.value for v in info.variables(m)], dtype=float)
        F = np.asarray(cas.F_fun(z, pv)).reshape(-1)
        assert compute_residuals(z, F, cas.lb, cas.ub).natural <= 1e-8
        np.testing.assert_allclose(z, ref.sim.z[k], atol=1e-6)


def test_stewart_trinkle_ncp_steps_through_solver_factory() -> None:
    """Seed-004 NCP step (particle on the Vose plate) as a plain Pyomo model: every step solves."""
    from mcpkit.models.stepping import simulate
    from mcpkit.models.stewart_trinkle.studies import vose_step_model

    model, plate = vose_step_model(h=1e-4, formulation="ncp", n_d=3)
    q = np.array([4.0, 0.0, plate.params.depth])
    sim = simulate(
        model, model.initial_state(q, plate.point_velocity(0.0, q)), 15, method="penalty", progress=False
    )
    assert sim.solved
    m, info = ToPyomo().apply(model.mcp)
    m.obj = pyo.Objective(expr=0.0)
    cas = lower_to_casadi(model.mcp)
    opt = pyo.SolverFactory("mcpkit")
    for k in range(sim.z.shape[0]):
        pv = model.mcp.parameter_vector(model.parameters(k, float(sim.t[k]), sim.states[k]))
        info.set_parameters(m, pv)
        res = opt.solve(m, options={"method": "scholtes"})
        assert res.solver.termination_condition == pyo.TerminationCondition.optimal, (k, res.solver.message)
        z = np.array([v.value for v in info.variables(m)], dtype=float)
        F = np.asarray(cas.F_fun(z, pv)).reshape(-1)
        assert compute_residuals(z, F, cas.lb, cas.ub).natural <= 1e-6


def test_mpcc_on_the_pyomo_backend() -> None:
    build, optimum = EXAMPLES["bard1"]
    m = build()
    res = pyo.SolverFactory("mcpkit").solve(m, options={"backend": "pyomo"})
    assert res.solver.termination_condition == pyo.TerminationCondition.optimal
    assert max(pyomo_violation(m).values()) <= ATOL
    assert pyo.value(m.obj) == pytest.approx(optimum, abs=F_ATOL)


def test_relax_integrality_is_an_explicit_opt_in() -> None:
    r"""min (x - 2)^2 + (y - 0.5)^2, y in {0, 1} read as [0, 1], 0 <= x _|_ y >= 0: optimum
    (2, 0) with f = 0.25 or (0, 0.5) with f = 4; refused without the opt-in."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(initialize=1.0)
    m.y = pyo.Var(domain=pyo.Binary, initialize=0.0)
    m.obj = pyo.Objective(expr=(m.x - 2) ** 2 + (m.y - 0.5) ** 2)
    m.cc = Complementarity(expr=complements(m.x >= 0, m.y >= 0))
    opt = pyo.SolverFactory("mcpkit")
    with pytest.raises(mcpkit.MCPInputError, match=r"'y' \(Binary\) is integer"):
        opt.solve(m)
    res = opt.solve(m, options={"relax_integrality": True})
    assert res.solver.termination_condition == pyo.TerminationCondition.optimal
    assert max(pyomo_violation(m).values()) <= ATOL
    assert pyo.value(m.obj) in (pytest.approx(0.25, abs=F_ATOL), pytest.approx(4.0, abs=F_ATOL))
