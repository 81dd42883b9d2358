r"""The homotopy route of an MCP, shared by the backends: slack-form MPCC -> homotopy -> ``z``.

Given the MCP as a :class:`~mcpkit.lowering.casadi.CasadiMCP` (whatever built its :math:`F`:
the CasADi lowering of the declaration, or the NL import of its Pyomo model),
:class:`SlackFormRoute` applies :class:`~mcpkit.lowering.casadi.MCPToMPCC` once, builds the
homotopy of :func:`~mcpkit.homotopy.recovery.make_homotopy` with an inner-solver factory once,
and for every parameter value lifts the start to :math:`x = (z, w, v)`, runs the homotopy
(warm-started from the previous solution's multipliers), judges each candidate on the MCP's
pairs and returns :math:`z`.

With ``newton=True`` a warm re-solve first tries the active-set Newton polish
(:mod:`mcpkit.engines.active_set`) with the active set of the previous solution; only if its
point misses the tolerance does the homotopy run.

Termination: the homotopy's, except that IPOPT's ``Infeasible_Problem_Detected`` (the homotopy's
``LOCALLY_INFEASIBLE``) is reported ``STALLED``: it says a relaxed NLP looked infeasible near
its iterate, which proves nothing about the MCP (a P-matrix LCP always has a solution, yet an
ill-conditioned one makes IPOPT say so). The raw status keeps IPOPT's words.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mcpkit.engines.active_set import ActiveSetNewton
from mcpkit.homotopy.inner import InnerFactory
from mcpkit.homotopy.loop import MCPPointAssessor
from mcpkit.homotopy.recovery import make_homotopy
from mcpkit.lowering.casadi import CasadiMCP, MCPToMPCC
from mcpkit.solving.options import SPENT_SECONDS, Budget, SolveOptions, call_budget
from mcpkit.solving.result import HomotopyStep, Termination
from mcpkit.solving.route import RouteOutcome


class SlackFormRoute:
    """An MCP's homotopy route on a given :class:`~mcpkit.lowering.casadi.CasadiMCP` (module docstring).

    Parameters
    ----------
    cmcp
        The MCP with symbolic :math:`F(z; p)`.
    method
        A registered reformulation name.
    options
        Stopping rules and homotopy settings.
    inner
        Builds the homotopy's inner solvers (default: CasADi's ``nlpsol`` IPOPT).
    newton
        Try the active-set Newton step first on warm re-solves.
    extra
        Route-specific extras copied into every :class:`~mcpkit.solving.route.RouteOutcome`.
    """

    backend = ""

    def __init__(
        self,
        cmcp: CasadiMCP,
        method: str,
        options: SolveOptions,
        inner: InnerFactory | None = None,
        newton: bool = False,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.method = method
        self.options = options
        self.cmcp = cmcp
        self.mpcc, self.slack_map = MCPToMPCC().apply(cmcp)
        from mcpkit.orchestration.planner import recovery_plan

        recovery = recovery_plan(method, self.mpcc.x.numel(), options)
        self.homotopy = make_homotopy(self.mpcc, method, options, inner=inner, fallbacks=recovery.fallbacks)
        self.newton = newton
        self.extra = dict(extra or {})
        self._newton: ActiveSetNewton | None = None
        self._last: tuple[np.ndarray, np.ndarray | None, np.ndarray | None] | None = None
        # the loop's candidates judged on the declaration: handed down, no callback into the route
        self.assessor = MCPPointAssessor(cmcp)

    def build(self) -> SlackFormRoute:
        """Build the primary inner solvers now (otherwise built on first use)."""
        self.homotopy.build()
        return self

    def _try_newton(self, p: np.ndarray, z0: np.ndarray) -> RouteOutcome | None:
        if not (self.newton and self.options.polish):
            return None
        if self._newton is None:
            self._newton = ActiveSetNewton(self.cmcp, self.options.tol)
        z, iters, status, wall = self._newton.solve(z0, p)
        if not np.isfinite(z).all():
            return None
        x, a = self.assessor(z, p)
        if not a.meets(self.options.tol):
            return None
        step = HomotopyStep(0, 0.0, a.residual, status, iters, wall, "newton")
        return RouteOutcome(
            x,
            Termination.CONVERGED,
            f"active-set Newton: {status}",
            iters,
            [step],
            extra=dict(self.extra),
            F=self.assessor.F_at(x),
        )

    def solve(self, p: np.ndarray, z0: np.ndarray, warm: bool, budget: Budget | None = None) -> RouteOutcome:
        """Solve at parameters ``p`` from ``z0``; ``warm`` means ``z0`` is a nearby solution;
        ``budget`` bounds the call (``None``: the options' ``time_limit`` from now)."""
        budget = call_budget(budget, self.options.time_limit)
        p = np.asarray(p, dtype=float).reshape(-1)
        z0 = np.asarray(z0, dtype=float).reshape(-1)
        if warm:
            fast = self._try_newton(p, z0)
            if fast is not None:
                return fast
        F0 = np.asarray(self.cmcp.F_fun(z0, p), dtype=float).reshape(-1)
        x0 = MCPToMPCC.lift(z0, np.where(np.isfinite(F0), F0, 0.0), self.slack_map)
        lam_x = lam_g = None
        if warm and self._last is not None:
            _, lam_x, lam_g = self._last
        out = self.homotopy.run(
            x0,
            p,
            self.assessor,
            warm_start=warm,
            lam_x0=lam_x,
            lam_g0=lam_g,
            time_limit=math.inf if budget.time_limit is None else budget.remaining(SPENT_SECONDS),
        )
        if out.x is not None:
            self._last = (out.x, out.lam_x, out.lam_g)
        z = None if out.x is None else np.asarray(out.x[: self.slack_map.n], dtype=float)
        termination = out.termination
        if termination is Termination.LOCALLY_INFEASIBLE:  # no certificate: see the module docstring
            termination = Termination.STALLED
        return RouteOutcome(
            z=z,
            termination=termination,
            raw_status=out.raw_status,
            iterations=out.iterations,
            trace=out.trace,
            extra=dict(self.extra),
            F=None if z is None else self.assessor.F_at(z),
        )
