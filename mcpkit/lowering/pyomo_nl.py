r"""Standard MPCC -> Pyomo model -> NL file -> standard MPCC: the Pyomo backend of MPCCs.

:class:`ThroughPyomoNL` replays the CasADi graphs of :math:`f, g, G, H` as a Pyomo model
(:func:`~mcpkit.lowering.casadi_pyomo.standard_pyomo_model`), writes it with Pyomo's NL writer
(no symbolic labels, no presolve, no scaling), and reads it back with
``casadi.NlpBuilder.import_nl``. The MPCC it returns evaluates every function from the Pyomo
model, with the Pyomo parameters (written as columns :math:`p \le x \le p`) as its parameter
vector, so one import serves every parameter value. The variables keep their order, so the
inverse is the identity on :math:`x`.

:func:`nl_casadi_mcp` is the same round trip for an MCP declaration (the Pyomo backend of MCPs):
its :math:`F` as Pyomo rows, written once and read back as a :class:`~mcpkit.lowering.casadi.CasadiMCP`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import casadi as ca
import numpy as np

from mcpkit.lowering.base import Lowering
from mcpkit.lowering.casadi import CasadiMCP
from mcpkit.lowering.casadi_pyomo import standard_pyomo_model
from mcpkit.lowering.nl_import import import_pyomo_nl
from mcpkit.problems.mcp import MCP
from mcpkit.problems.mpcc import MPCC


@dataclass(frozen=True)
class NLRoundTrip:
    """Inverse data of :class:`ThroughPyomoNL`: the variable count (the columns keep their order)."""

    nx: int


class ThroughPyomoNL(Lowering):
    r"""Standard MPCC -> Pyomo model -> NL file -> standard MPCC of CasADi expressions.

    The returned MPCC evaluates :math:`f, g, G, H` from the NL import of the Pyomo model, with the
    Pyomo parameters (written as columns :math:`p \le x \le p`) as its parameter vector.
    """

    def apply(self, mpcc: MPCC) -> tuple[MPCC, NLRoundTrip]:
        m, info = standard_pyomo_model(mpcc, mpcc.p0, params_as_vars=True)
        nlp = import_pyomo_nl(m)
        nx, npar = mpcc.x.numel(), mpcc.p.numel()
        x, p = ca.SX.sym("x", nx), ca.SX.sym("p", npar)
        where = {id(v): x[i] for i, v in enumerate(m.x.values())}
        where.update({id(v): p[j] for j, v in enumerate(m.p.values())})
        missing = [v.name for v in nlp.variables if id(v) not in where]
        if missing:  # pragma: no cover - the model only has x and p columns
            raise RuntimeError(f"NL import: unexpected columns {missing[:5]}")
        args = ca.vertcat(*[where[id(v)] for v in nlp.variables]) if nlp.variables else ca.SX(0, 1)
        fun = ca.Function("nl", [nlp.x], [nlp.f * nlp.objective_sense, nlp.g])
        f, g = fun(args)
        row = {id(c): k for k, c in enumerate(nlp.constraints)}

        def pick(name: str, exprs: list[Any]) -> ca.SX:
            # the NL writer moves a row's constant into its bounds: G_j = body - lower bound
            comp = getattr(m, name)
            rows = iter(comp.values())
            out = []
            for e in exprs:
                if isinstance(e, int | float):  # constant rows are not written
                    out.append(ca.SX(float(e)))
                else:
                    r = row[id(next(rows))]
                    out.append(g[r] - nlp.lbg[r])
            return ca.vertcat(*out) if out else ca.SX(0, 1)

        g_rows = [row[id(c)] for c in m.g.values()]
        lowered = MPCC(
            x=x,
            p=p,
            f=f,
            g=g[g_rows] if g_rows else ca.SX(0, 1),
            lbg=nlp.lbg[g_rows],
            ubg=nlp.ubg[g_rows],
            lbx=mpcc.lbx,
            ubx=mpcc.ubx,
            G=pick("mpcc_G", info.G),
            H=pick("mpcc_H", info.H),
            x0=mpcc.x0,
            p0=mpcc.p0,
            name=f"{mpcc.name}_pyomo",
        )
        return lowered, NLRoundTrip(nx)

    def invert(self, solution: np.ndarray, inverse_data: NLRoundTrip) -> np.ndarray:
        return np.asarray(solution, dtype=float).reshape(-1)[: inverse_data.nx]


#: Above this many Jacobian entries a linear constraint block is kept as one matrix product.
DENSE_LIMIT = 4000


def matrix_form_if_linear(x: ca.SX, p: ca.SX, g: ca.SX) -> tuple[Any, Any, Any]:
    r"""Rewrite an affine :math:`g = A x + B p + c` with MX matrix products when it is large.

    Scalar SX graphs of dense rows (a 200x200 LCP has 40 000 products) make IPOPT's
    derivative set-up take seconds; one MX matrix product keeps it in milliseconds (the same
    choice :class:`~mcpkit.lowering.casadi.ToCasadi` makes for dense affine blocks).
    """
    xp = ca.vertcat(x, p)
    if g.numel() * xp.numel() <= DENSE_LIMIT or not ca.is_linear(g, xp):
        return x, p, g
    J = ca.Function("J", [x, p], [ca.jacobian(g, x), ca.jacobian(g, p), g])
    A, B, c = J(np.zeros(x.numel()), np.zeros(p.numel()))
    xm, pm = ca.MX.sym("x", x.numel()), ca.MX.sym("p", p.numel())
    gm = ca.mtimes(ca.DM(A), xm) + ca.DM(c)
    if p.numel():
        gm = gm + ca.mtimes(ca.DM(B), pm)
    return xm, pm, gm


def nl_casadi_mcp(problem: MCP) -> CasadiMCP:
    r"""The MCP with :math:`F` evaluated from the NL import of its Pyomo model (module docstring).

    Each :math:`F_i` is the Pyomo row :math:`F_i = 0` read back as ``g_i - lbg_i`` (the NL
    writer moves a row's constant into its bounds); a constant :math:`F_i` is kept as a number.
    """
    import pyomo.environ as pyo

    from mcpkit.lowering.pyomo import ToPyomo

    m, info = ToPyomo(complementarity=False, params_as_vars=True).apply(problem)
    zs = info.variables(m)
    for v in zs:
        v.unfix()  # fixed pairs keep lb = ub as bounds so every z stays a column
    F = info.F
    rows = [i for i, e in enumerate(F) if not isinstance(e, int | float)]
    m.mcp_F = pyo.Constraint(range(len(rows)), rule=lambda _m, k: F[rows[k]] == 0)
    nlp = import_pyomo_nl(m)
    (z, p), _, g = nlp.over(zs, info.parameters(m))
    Fx = [ca.SX(float(e)) if isinstance(e, int | float) else None for e in F]
    for k, i in enumerate(rows):
        Fx[i] = nlp.body(g, m.mcp_F[k])
    Fv = ca.vertcat(*Fx) if Fx else ca.SX(0, 1)
    z, p, Fv = matrix_form_if_linear(z, p, Fv)
    return CasadiMCP.of(problem, z, p, Fv, name=f"{problem.name}_pyomo")
