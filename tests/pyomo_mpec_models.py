r"""Small Pyomo MPEC models for tests and ``benchmarks/bench_pyomo_mpec.py``, and an independent check.

The models state the same mathematics as Pyomo's ``examples/mpec`` problems (bard1, df,
indexed, linear1, scholtes4, munson1 and its sign variants a–d), written here from the
mathematics with other Pyomo constructs (indexed components, named ``Expression``\ s, rules,
reversed operands), so the import is exercised on more forms than the originals use.

:func:`pyomo_violation` checks a point with Pyomo's own evaluation (``pyo.value`` of every
active constraint, variable bound and complementarity side), not mcpkit's: the largest
violation of the constraints, of the bounds, and of each condition read as Pyomo defines it
(``pyomo/mpec/complementarity.py``): two one-sided sides must both hold and one be active
(:math:`\min(a, b) = 0`); :math:`l \le e_1 \le u \perp e_2` is the box pair (natural residual
:math:`|e_1 - \Pi_{[l,u]}(e_1 - e_2)|`); an equality side is its equation.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pyomo.environ as pyo
from pyomo.mpec import Complementarity, complements


def bard1() -> pyo.ConcreteModel:
    r"""Bard's bilevel QP through the lower level's KKT conditions (optimum :math:`f = 17` at
    :math:`x = 1, y = 0`): :math:`\min (x-5)^2 + (2y+1)^2` with lower-level rows
    :math:`r_i = a_i x + b_i y + c_i \ge 0 \perp \lambda_i \ge 0` and stationarity
    :math:`2(y - 1) - 1.5x - \sum_i b_i \lambda_i = 0`."""
    m = pyo.ConcreteModel(name="bard1")
    m.I = pyo.RangeSet(3)
    m.a = pyo.Param(m.I, initialize={1: 3.0, 2: -1.0, 3: -1.0})
    m.b = pyo.Param(m.I, initialize={1: -1.0, 2: 0.5, 3: -1.0})
    m.c = pyo.Param(m.I, initialize={1: -3.0, 2: 4.0, 3: 7.0})
    m.x = pyo.Var(domain=pyo.NonNegativeReals)
    m.y = pyo.Var(domain=pyo.NonNegativeReals)
    m.lam = pyo.Var(m.I)
    m.row = pyo.Expression(m.I, rule=lambda m, i: m.a[i] * m.x + m.b[i] * m.y + m.c[i])
    m.obj = pyo.Objective(expr=(m.x - 5) ** 2 + (2 * m.y + 1) ** 2)
    m.stat = pyo.Constraint(expr=2 * (m.y - 1) - 1.5 * m.x - sum(m.b[i] * m.lam[i] for i in m.I) == 0)
    m.cc = Complementarity(m.I, rule=lambda m, i: complements(m.row[i] >= 0, m.lam[i] >= 0))
    return m


def df() -> pyo.ConcreteModel:
    r""":math:`\min (x - 1 - y)^2` s.t. :math:`x^2 \le 2`, :math:`(x-1)^2 + (y-1)^2 \le 3`,
    :math:`-1 \le x \le 2`, :math:`0 \le y \perp y - x^2 + 1 \ge 0` (optimum 0, e.g. at (1, 0))."""
    m = pyo.ConcreteModel(name="df")
    m.x = pyo.Var(bounds=(-1, 2))
    m.y = pyo.Var()
    m.obj = pyo.Objective(expr=(m.x - 1 - m.y) ** 2)
    m.cons = pyo.ConstraintList()
    m.cons.add(m.x**2 <= 2)
    m.cons.add(pyo.inequality(None, (m.x - 1) ** 2 + (m.y - 1) ** 2, 3))
    m.cc = Complementarity(expr=complements(m.y >= 0, m.y + 1 >= m.x**2))
    return m


def indexed(n: int = 5) -> pyo.ConcreteModel:
    r""":math:`\min \sum_i i (x_i - 1)^2` s.t. :math:`0 \le x_i \perp x_{i+1} \ge 0` (optimum 6 for
    :math:`n = 5`: :math:`x_1 = x_3 = x_5 = 1`, the heaviest pairwise non-adjacent set)."""
    m = pyo.ConcreteModel(name="indexed")
    m.N = pyo.RangeSet(n)
    m.x = pyo.Var(m.N)
    m.obj = pyo.Objective(expr=pyo.quicksum(i * (m.x[i] - 1) ** 2 for i in m.N))

    def rule(m: pyo.ConcreteModel, i: int) -> object:
        return Complementarity.Skip if i == n else complements(0 <= m.x[i], m.x[i + 1] >= 0)

    m.cc = Complementarity(m.N, rule=rule)
    return m


def linear1() -> pyo.ConcreteModel:
    r""":math:`\max x_1 + 2 x_2` (stated as a maximisation) on :math:`[-2, 2] \times [-1, 1]` with
    :math:`0 \le x_1 \perp x_2 \ge 0` (optimum 2, at (2, 0) and at (0, 1))."""
    m = pyo.ConcreteModel(name="linear1")
    m.x = pyo.Var([1, 2], bounds={1: (-2, 2), 2: (-1, 1)})
    m.obj = pyo.Objective(expr=m.x[1] + 2 * m.x[2], sense=pyo.maximize)
    m.cc = Complementarity(expr=complements(m.x[1] >= 0, m.x[2] >= 0))
    return m


def scholtes4() -> pyo.ConcreteModel:
    r""":math:`\min z_1 + z_2 - z_3` s.t. :math:`z_3 \le 4 z_1`, :math:`z_3 \le 4 z_2`,
    :math:`0 \le z_1 \perp z_2 \ge 0` (optimum 0 at the origin: with :math:`z_1 = 0`,
    :math:`z_3 \le 0`)."""
    m = pyo.ConcreteModel(name="scholtes4")
    m.z = pyo.Var([1, 2], domain=pyo.NonNegativeReals, initialize={1: 0.0, 2: 1.0})
    m.z3 = pyo.Var(initialize=0.0)
    m.obj = pyo.Objective(expr=m.z[1] + m.z[2] - m.z3)
    m.lin = pyo.Constraint([1, 2], rule=lambda m, i: m.z3 - 4 * m.z[i] <= 0)
    m.cc = Complementarity(expr=complements(m.z[1] >= 0, 0 <= m.z[2]))
    return m


def munson1(variant: str = "") -> pyo.ConcreteModel:
    r"""Munson's 3-variable LCP :math:`0 \le x \perp Mx + q \ge 0`; variants ``a``–``d`` state it
    with the signs of variables and/or functions flipped (``x <= 0``, ``-F <= 0``), as MCPs
    without an objective."""
    rows = {1: ({1: 1.0, 2: 2.0, 3: 3.0}, -1.0), 2: ({2: 1.0, 3: -1.0}, 1.0), 3: ({1: 1.0, 2: 1.0}, 1.0)}
    m = pyo.ConcreteModel(name=f"munson1{variant}")
    m.x = pyo.Var([1, 2, 3])
    flip_x = variant in ("a", "c")  # variable side as -x >= 0 ... stated x <= 0 on the negated variable
    flip_f = variant in ("b", "c")
    sx = -1.0 if flip_x else 1.0

    def F(i: int) -> object:
        coefs, q = rows[i]
        return sum(c * sx * m.x[j] for j, c in coefs.items()) + q

    def rule(m: pyo.ConcreteModel, i: int) -> object:
        xs = m.x[i] <= 0 if flip_x else m.x[i] >= 0
        fs = -F(i) <= 0 if flip_f else F(i) >= 0
        return complements(fs, xs) if variant == "d" else complements(xs, fs)

    m.cc = Complementarity([1, 2, 3], rule=rule)
    return m


#: name -> (builder, the optimum's objective in the model's own sense, or None for an MCP)
EXAMPLES: dict[str, tuple[Callable[[], pyo.ConcreteModel], float | None]] = {
    "bard1": (bard1, 17.0),
    "df": (df, 0.0),
    "indexed": (indexed, 6.0),
    "linear1": (linear1, 2.0),
    "scholtes4": (scholtes4, 0.0),
    "munson1": (munson1, None),
    "munson1a": (lambda: munson1("a"), None),
    "munson1b": (lambda: munson1("b"), None),
    "munson1c": (lambda: munson1("c"), None),
    "munson1d": (lambda: munson1("d"), None),
}


def _side(canon: tuple) -> tuple[float, float, float]:
    """``(lower, value, upper)`` of a canonical side with ``±inf`` for absent bounds."""
    lo, body, hi = canon
    lv = -math.inf if lo is None else float(pyo.value(lo))
    hv = math.inf if hi is None else float(pyo.value(hi))
    return lv, float(pyo.value(body)), hv


def pyomo_violation(model: pyo.ConcreteModel) -> dict[str, float]:
    """Largest violations at the model's current values, by Pyomo's evaluation (module docstring)."""
    out = {"constraints": 0.0, "bounds": 0.0, "complementarity": 0.0}
    for c in model.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        v = float(pyo.value(c.body))
        lo = -math.inf if c.lb is None else c.lb
        hi = math.inf if c.ub is None else c.ub
        out["constraints"] = max(out["constraints"], lo - v, v - hi)
    for x in model.component_data_objects(pyo.Var, descend_into=True):
        if x.value is None:
            continue
        if x.lb is not None:
            out["bounds"] = max(out["bounds"], x.lb - x.value)
        if x.ub is not None:
            out["bounds"] = max(out["bounds"], x.value - x.ub)
    for cc in model.component_data_objects(Complementarity, active=True, descend_into=True):
        c1 = cc._canonical_expression(cc._args[0])
        c2 = cc._canonical_expression(cc._args[1])
        eq = c1 if len(c1) == 2 else c2 if len(c2) == 2 else None
        if eq is not None:
            r = abs(float(pyo.value(eq[1])) - float(pyo.value(eq[0])))
        else:
            s1, s2 = _side(c1), _side(c2)
            if math.isinf(s1[0]) and math.isinf(s1[2]):
                s1, s2 = s2, s1
            if math.isfinite(s1[0]) and math.isfinite(s1[2]):  # l <= e1 <= u  _|_  e2
                lo, e, hi = s1
                r = abs(e - min(max(e - s2[1], lo), hi))
            else:  # one bound on each side: a >= 0, b >= 0, min(a, b) = 0
                a = s1[1] - s1[0] if math.isfinite(s1[0]) else s1[2] - s1[1]
                b = s2[1] - s2[0] if math.isfinite(s2[0]) else s2[2] - s2[1]
                r = max(abs(min(a, b)), -a, -b)
        out["complementarity"] = max(out["complementarity"], r)
    return out
