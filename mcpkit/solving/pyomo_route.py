r"""The Pyomo route: declaration -> Pyomo -> NL import -> slack-form MPCC -> the one homotopy.

1. :class:`~mcpkit.lowering.pyomo.ToPyomo` lowers the declaration once to a Pyomo model: the
   variables :math:`z`, the parameters written as columns :math:`p_j \le x \le p_j`
   (``params_as_vars``) and one row :math:`F_i(z; p) = 0` per pair;
2. :func:`nl_casadi_mcp` writes it **once** with Pyomo's NL writer (no symbolic labels, no
   presolve, no scaling) and imports it with ``casadi.NlpBuilder.import_nl``: the parameter
   columns become the parameter vector, so :math:`F` is evaluated from the Pyomo model for every
   parameter value without a rewrite. A large affine :math:`F` is kept as one matrix product
   (:func:`_matrix_form_if_linear`);
3. the shared :class:`~mcpkit.solving.slack_route.SlackFormRoute` then runs the same slack form
   (:class:`~mcpkit.lowering.casadi.MCPToMPCC`) and the same homotopy as the CasADi route, every
   reformulation and fallback included, with the inner solver of the ``ipopt`` choice
   (:func:`~mcpkit.homotopy.inner.select_inner`): an ``ipopt`` executable on each subproblem
   replayed in Pyomo, ``mcpkit_ipopt`` (the same code path, CasADi's IPOPT in process), or
   CasADi's ``nlpsol`` on the imported graph.

``RouteOutcome.extra["ipopt"]`` says which IPOPT ran.
"""

from __future__ import annotations

from typing import Any

import casadi as ca
import numpy as np
import pyomo.environ as pyo

from mcpkit.errors import MCPInputError
from mcpkit.homotopy.inner import select_inner
from mcpkit.lowering.casadi import CasadiMCP
from mcpkit.lowering.nl_import import import_pyomo_nl
from mcpkit.lowering.pyomo import ToPyomo
from mcpkit.problems.mcp import MCP
from mcpkit.solving.options import REFORMULATIONS, SolveOptions
from mcpkit.solving.slack_route import SlackFormRoute

#: Above this many Jacobian entries a linear constraint block is kept as one matrix product.
DENSE_LIMIT = 4000


def _matrix_form_if_linear(x: ca.SX, p: ca.SX, g: ca.SX) -> tuple[Any, Any, Any]:
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
    z, p, Fv = _matrix_form_if_linear(z, p, Fv)
    return CasadiMCP.of(problem, z, p, Fv, name=f"{problem.name}_pyomo")


class PyomoRoute(SlackFormRoute):
    """The homotopy on the Pyomo lowering of an MCP (see the module docstring).

    Parameters
    ----------
    problem
        The declaration.
    method
        A registered reformulation (``"scholtes"``, ``"scholtes_eq"``, ``"fb"``, ``"penalty"``,
        ``"elastic"``).
    options
        Stopping rules and homotopy settings.
    ipopt
        Which IPOPT solves the subproblems: ``"auto"``, ``"executable"``, ``"casadi"`` or
        ``"mcpkit_ipopt"`` (see :func:`~mcpkit.homotopy.inner.select_inner`).
    """

    backend = "pyomo"

    def __init__(self, problem: MCP, method: str, options: SolveOptions, ipopt: str = "auto") -> None:
        if method not in REFORMULATIONS:
            raise MCPInputError(f"PyomoRoute: unknown method {method!r}; valid: {list(REFORMULATIONS)}")
        inner, self.ipopt_used = select_inner(ipopt)
        self.problem = problem
        super().__init__(nl_casadi_mcp(problem), method, options, inner, extra={"ipopt": self.ipopt_used})
