r"""The Pyomo route: declaration -> Pyomo -> NL import -> slack-form MPCC -> the one homotopy.

1. :class:`~mcpkit.lowering.pyomo.ToPyomo` lowers the declaration once to a Pyomo model: the
   variables :math:`z`, the parameters written as columns :math:`p_j \le x \le p_j`
   (``params_as_vars``) and one row :math:`F_i(z; p) = 0` per pair;
2. :func:`~mcpkit.lowering.pyomo_nl.nl_casadi_mcp` writes it **once** with Pyomo's NL writer (no
   symbolic labels, no presolve, no scaling) and imports it with ``casadi.NlpBuilder.import_nl``:
   the parameter columns become the parameter vector, so :math:`F` is evaluated from the Pyomo model for every
   parameter value without a rewrite. A large affine :math:`F` is kept as one matrix product
   (:func:`~mcpkit.lowering.pyomo_nl.matrix_form_if_linear`);
3. the shared :class:`~mcpkit.orchestration.slack_route.SlackFormRoute` then runs the same slack form
   (:class:`~mcpkit.lowering.casadi.MCPToMPCC`) and the same homotopy as the CasADi route, every
   reformulation and fallback included, with the inner solver of the ``ipopt`` choice
   (:func:`~mcpkit.orchestration.planner.select_inner`): an ``ipopt`` executable on each subproblem
   replayed in Pyomo, ``mcpkit_ipopt`` (the same code path, CasADi's IPOPT in process), or
   CasADi's ``nlpsol`` on the imported graph.

``RouteOutcome.extra["ipopt"]`` says which IPOPT ran.
"""

from __future__ import annotations

from mcpkit.errors import MCPInputError
from mcpkit.lowering.pyomo_nl import nl_casadi_mcp
from mcpkit.orchestration.planner import select_inner
from mcpkit.orchestration.slack_route import SlackFormRoute
from mcpkit.problems.mcp import MCP
from mcpkit.solving.options import REFORMULATIONS, SolveOptions


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
        ``"mcpkit_ipopt"`` (see :func:`~mcpkit.orchestration.planner.select_inner`).
    """

    backend = "pyomo"

    def __init__(self, problem: MCP, method: str, options: SolveOptions, ipopt: str = "auto") -> None:
        if method not in REFORMULATIONS:
            raise MCPInputError(f"PyomoRoute: unknown method {method!r}; valid: {list(REFORMULATIONS)}")
        inner, self.ipopt_used = select_inner(ipopt)
        self.problem = problem
        super().__init__(nl_casadi_mcp(problem), method, options, inner, extra={"ipopt": self.ipopt_used})
