"""MPCC -> Pyomo lowering, the NL round trip and the elastic reformulation's structure (no solver)."""

from __future__ import annotations

import casadi as ca
import numpy as np
import pyomo.environ as pyo
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyomo.mpec import Complementarity

from mcpkit.errors import MCPInputError
from mcpkit.homotopy.elastic import Elastic
from mcpkit.lowering.casadi_pyomo import ToPyomoMPCC, casadi_to_pyomo, standard_pyomo_model
from mcpkit.lowering.pyomo_nl import ThroughPyomoNL
from mcpkit.mpcc import MPCC, ToStandardMPCC


def _ops_function() -> ca.Function:
    x = ca.SX.sym("x", 3)
    p = ca.SX.sym("p", 1)
    shared = ca.sin(x[0]) * x[1] + p[0]  # read several times below
    outs = ca.vertcat(
        shared**2 + ca.exp(shared) - ca.log(1 + x[2] ** 2),
        ca.sqrt(x[2] ** 2 + 1) / (2 + ca.cos(x[1])),
        ca.fmax(x[0], x[1]) - ca.fmin(x[0], shared) + ca.fabs(x[2]),
        ca.tanh(x[0]) * ca.atan(x[1]) + x[2] ** 3 + 2 * x[0] - 1 / (3 + x[1] ** 2),
        ca.if_else(x[0] >= x[1], x[2], -x[2]) + ca.sign(x[1]),
        0,
    )
    return ca.Function("ops", [x, p], [outs])


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-2.0, 2.0), min_size=4, max_size=4))
def test_translated_expressions_evaluate_like_casadi(vals: list[float]) -> None:
    """Replaying the SX algorithm in Pyomo gives CasADi's numbers at random points."""
    fun = _ops_function()
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), initialize=lambda _m, i: vals[i])
    m.p = pyo.Param(mutable=True, initialize=vals[3])
    (out,) = casadi_to_pyomo(fun, [list(m.x.values()), [m.p]], block=m)
    ref = np.asarray(fun(vals[:3], vals[3:]), dtype=float).reshape(-1)
    got = np.array([pyo.value(e) for e in out], dtype=float)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    assert len(m.cse) >= 1  # the shared sub-expression became a named Expression


def test_unsupported_operation_is_named() -> None:
    x = ca.SX.sym("x")
    fun = ca.Function("f", [x], [ca.erf(x)])
    with pytest.raises(MCPInputError, match="OP_ERF"):
        casadi_to_pyomo(fun, [[1.0]])
    with pytest.raises(MCPInputError, match="needs 1 entries"):
        casadi_to_pyomo(fun, [[1.0, 2.0]])


def _general(lbH: np.ndarray, ubH: np.ndarray, lbG: np.ndarray, ubG: np.ndarray) -> MPCC:
    n = lbH.size
    x = ca.SX.sym("x", 2 * n + 1)
    return MPCC(
        x=x, p=ca.SX(0, 1), f=ca.sumsqr(x), g=ca.vertcat(x[-1] - 1, ca.sum1(x)),
        lbg=np.array([0.0, -np.inf]), ubg=np.array([0.0, np.inf]),
        lbx=np.full(2 * n + 1, -5.0), ubx=np.full(2 * n + 1, 5.0), x0=np.zeros(2 * n + 1), p0=np.zeros(0),
        G=x[:n], H=x[n : 2 * n], lbG=lbG, ubG=ubG, lbH=lbH, ubH=ubH,
    )  # fmt: skip


def test_pyomo_model_states_every_pair_and_bound() -> None:
    """Box cases: standard, shifted, upper only, both bounds, free H (G = 0); G bounds kept."""
    inf = np.inf
    lbH = np.array([0.0, 2.0, -inf, -1.0, -inf])
    ubH = np.array([inf, inf, 3.0, 1.0, inf])
    lbG = np.array([0.0, -inf, -inf, -inf, -inf])
    ubG = np.array([inf, inf, inf, 4.0, inf])
    prob = _general(lbH, ubH, lbG, ubG)
    m, info = ToPyomoMPCC().apply(prob)
    comps = list(m.component_data_objects(Complementarity))
    assert len(comps) == 4  # the free-H pair is the equation G_4 = 0 instead
    assert len(m.G_zero) == 1
    assert len(m.G_bounds) == 1  # only pair 3's G <= 4; pair 0's G >= 0 is in its complements()
    assert len(m.g) == 1 and info.free_rows == (1,)  # the row with no finite bound is listed
    np.testing.assert_array_equal(ToPyomoMPCC().invert([1.0, 2.0], info), [1.0, 2.0])
    x = np.linspace(-1, 1, prob.x.numel())
    for i, v in m.x.items():
        v.set_value(x[i])
    assert pyo.value(m.obj) == pytest.approx(float(np.sum(x**2)))
    np.testing.assert_allclose(info.x_values(), x)


def test_constant_rows_are_checked_not_dropped() -> None:
    x = ca.SX.sym("x", 2)
    bad = MPCC.from_casadi(x, x[0], x[1], g=ca.vertcat(ca.SX(1.0)), lbg=[2.0], ubg=[3.0])
    with pytest.raises(MCPInputError, match="constant row"):
        standard_pyomo_model(bad, np.zeros(0))


def test_nl_round_trip_evaluates_like_the_original() -> None:
    """Standard MPCC -> Pyomo -> NL -> CasADi: same f, g, G, H (constants moved into bounds)."""
    inf = np.inf
    prob = _general(np.array([0.0, 2.0]), np.array([inf, 4.0]), np.array([0.0, -inf]), np.array([inf, inf]))
    std, _ = ToStandardMPCC().apply(prob)
    back, inv = ThroughPyomoNL().apply(std)
    rng = np.random.default_rng(0)
    for _ in range(5):
        x = rng.normal(size=std.x.numel())
        a, b = std.evaluate(x, std.p0), back.evaluate(x, back.p0)
        for key in ("f", "G", "H"):
            np.testing.assert_allclose(b[key], a[key], atol=1e-12)
        assert back.constraint_violation(x, back.p0) == pytest.approx(std.constraint_violation(x, std.p0))
    np.testing.assert_array_equal(
        ThroughPyomoNL().invert(np.arange(std.x.numel() + 0.0), inv).size, std.x.numel()
    )


def test_elastic_relaxes_every_bounded_row_and_starts_feasible() -> None:
    x = ca.SX.sym("x", 3)
    mpcc = MPCC.from_casadi(
        x, x[0], x[1], f=x[2], g=ca.vertcat(x[0] + x[1], x[2], x[0] * x[1]),
        lbg=[1.0, -np.inf, -np.inf], ubg=[1.0, 2.0, np.inf],
    )  # fmt: skip
    tpl = Elastic().build(mpcc)
    assert tpl.n_extra == 2  # rows 0 (equality) and 1 (upper bound); row 2 is free
    assert tpl.x.numel() == 5
    s0 = tpl.extra_start(np.array([0.0, 0.0, 5.0]), np.zeros(0))
    np.testing.assert_allclose(s0, [1.0, 3.0])  # |0 - 1| and 5 - 2
    fun = ca.Function("t", [tpl.x, tpl.p], [tpl.g, tpl.f])
    g, f = fun(np.r_[0.0, 0.0, 5.0, s0], [10.0])
    g = np.asarray(g).reshape(-1)
    assert np.all(g >= tpl.lbg - 1e-12) and np.all(g <= tpl.ubg + 1e-12)  # feasible start
    assert float(f) == pytest.approx(5.0 + 10.0 * (1.0 + 3.0))  # f + rho (sum s + sum G H)
