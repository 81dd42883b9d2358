r"""The CasADi route: declaration -> CasADi -> slack MPCC -> reformulation -> IPOPT.

:class:`~mcpkit.lowering.casadi.ToCasadi` lowers the declaration once; the rest is the shared
:class:`~mcpkit.orchestration.slack_route.SlackFormRoute` with CasADi's ``nlpsol`` IPOPT as the inner
solver (built once, re-used for every parameter value, warm-started from the previous solution
and its multipliers), and the active-set Newton step first on warm re-solves.
"""

from __future__ import annotations

from mcpkit.homotopy.ipopt import CasadiInner
from mcpkit.lowering.casadi import lower_to_casadi
from mcpkit.orchestration.slack_route import SlackFormRoute
from mcpkit.problems.mcp import MCP
from mcpkit.solving.options import SolveOptions


class CasadiRoute(SlackFormRoute):
    """IPOPT (CasADi's bundled build) on a reformulated slack-form MPCC of the MCP."""

    backend = "casadi"

    def __init__(self, problem: MCP, method: str, options: SolveOptions) -> None:
        super().__init__(lower_to_casadi(problem), method, options, CasadiInner(), newton=True)
