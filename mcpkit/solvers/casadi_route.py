r"""The CasADi route: declaration -> CasADi -> slack MPCC -> reformulation -> IPOPT.

The chain :class:`~mcpkit.lowering.casadi.ToCasadi` -> :class:`~mcpkit.lowering.casadi.MCPToMPCC`
is applied once; the homotopy solver (and its IPOPT instances) is built once and re-used for
every parameter value, warm-started from the previous solution and its multipliers.

A warm re-solve first tries the active-set Newton polish (:mod:`mcpkit.solvers.active_set`) with
the active set of the previous solution; only if its point misses the tolerance does the IPOPT
homotopy run.
"""

from __future__ import annotations

import numpy as np

from mcpkit.lowering.base import Chain
from mcpkit.lowering.casadi import CasadiMCP, MCPToMPCC, SlackMap, lower_to_casadi
from mcpkit.options import SolveOptions
from mcpkit.problem import MCP
from mcpkit.result import HomotopyStep, Termination
from mcpkit.solvers.active_set import ActiveSetNewton
from mcpkit.solvers.homotopy import Assessment, assess_mcp_point, make_homotopy
from mcpkit.solvers.route import RouteOutcome


class CasadiRoute:
    """IPOPT (CasADi's bundled build) on a reformulated slack-form MPCC of the MCP."""

    backend = "casadi"

    def __init__(self, problem: MCP, method: str, options: SolveOptions) -> None:
        self.method = method
        self.options = options
        self.cmcp: CasadiMCP = lower_to_casadi(problem)
        self.chain = Chain([MCPToMPCC()])
        self.mpcc, inverse = self.chain.apply(self.cmcp)
        self.slack_map: SlackMap = inverse[0]
        self.homotopy = make_homotopy(self.mpcc, method, options)
        self._newton: ActiveSetNewton | None = None
        self._last: tuple[np.ndarray, np.ndarray | None, np.ndarray | None] | None = None

    def build(self) -> CasadiRoute:
        """Build all IPOPT instances now."""
        self.homotopy.build()
        return self

    def _assess(self, x: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, Assessment]:
        n = self.cmcp.n
        x = x.copy()
        x[:n], F, a = assess_mcp_point(self.cmcp, x[:n], p)
        self._last_F = (x[:n].copy(), F)
        return x, a

    def _F_at(self, z: np.ndarray) -> np.ndarray | None:
        """``F`` from the last assessment if it was evaluated at exactly ``z``."""
        last = getattr(self, "_last_F", None)
        if last is not None and np.array_equal(last[0], z):
            return last[1]
        return None

    def _try_newton(self, p: np.ndarray, z0: np.ndarray) -> RouteOutcome | None:
        if not self.options.polish:
            return None
        if self._newton is None:
            self._newton = ActiveSetNewton(self.cmcp, self.options.tol)
        z, iters, status, wall = self._newton.solve(z0, p)
        if not np.isfinite(z).all():
            return None
        x, a = self._assess(z, p)
        if not a.meets(self.options.tol):
            return None
        step = HomotopyStep(0, 0.0, a.residual, status, iters, wall, "newton")
        return RouteOutcome(
            x, Termination.CONVERGED, f"active-set Newton: {status}", iters, [step], F=self._F_at(x)
        )

    def solve(self, p: np.ndarray, z0: np.ndarray, warm: bool) -> RouteOutcome:
        if warm:
            fast = self._try_newton(p, z0)
            if fast is not None:
                return fast
        F0 = np.asarray(self.cmcp.F_fun(z0, p), dtype=float).reshape(-1)
        x0 = MCPToMPCC.lift(z0, np.where(np.isfinite(F0), F0, 0.0), self.slack_map)
        lam_x = lam_g = None
        if warm and self._last is not None:
            _, lam_x, lam_g = self._last
        out = self.homotopy.run(x0, p, self._assess, warm_start=warm, lam_x0=lam_x, lam_g0=lam_g)
        if out.x is not None:
            self._last = (out.x, out.lam_x, out.lam_g)
        z = None if out.x is None else self.chain.invert(out.x, [self.slack_map])
        return RouteOutcome(
            z=z,
            termination=out.termination,
            raw_status=out.raw_status,
            iterations=out.iterations,
            trace=out.trace,
            F=None if z is None else self._F_at(z),
        )
