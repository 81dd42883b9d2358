r"""Standard MPCC -> Pyomo model -> NL file -> standard MPCC: the Pyomo backend of MPCCs.

:class:`ThroughPyomoNL` replays the CasADi graphs of :math:`f, g, G, H` as a Pyomo model
(:func:`~mcpkit.lowering.casadi_pyomo.standard_pyomo_model`), writes it with Pyomo's NL writer
(no symbolic labels, no presolve, no scaling), and reads it back with
``casadi.NlpBuilder.import_nl``. The MPCC it returns evaluates every function from the Pyomo
model, with the Pyomo parameters (written as columns :math:`p \le x \le p`) as its parameter
vector, so one import serves every parameter value. The variables keep their order, so the
inverse is the identity on :math:`x`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import casadi as ca
import numpy as np

from mcpkit.lowering.base import Lowering
from mcpkit.lowering.casadi_pyomo import standard_pyomo_model
from mcpkit.lowering.nl_import import import_pyomo_nl
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
