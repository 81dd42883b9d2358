"""From a resolved route to the objects that run it: the MCP solve chain and a homotopy's inner IPOPT.

:mod:`mcpkit.solving.registry` says what exists and resolves a user's ``(kind, method, backend)`` into a
:class:`~mcpkit.solving.registry.Route`; it imports no solver, so that :mod:`mcpkit.solving.options` and every
solver can read it. This module builds what a route names, and so imports the route classes and
inner solvers (through the registry's ``"module:attribute"`` targets and
:mod:`mcpkit.solving.fallback`):

* :func:`build_mcp_route`: the one place an MCP's solve chain is built (:class:`mcpkit.Solver`,
  and each attempt of :class:`~mcpkit.solving.fallback.FallbackRoute`);
* :func:`plan_mpcc`: the one place an MPCC's solve is planned (:class:`mcpkit.mpcc.MPCCSolver`):
  the route (``"auto"`` re-resolved for LPECs), the lowering chain to what the homotopy solves,
  and the homotopy with its fallbacks and second opinion;
* :func:`inner_solver`: the inner IPOPT of a homotopy on a route's backend (the ``ipopt=``
  choice of :class:`mcpkit.mpcc.MPCCSolver`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from mcpkit.errors import MCPInputError
from mcpkit.homotopy.inner import select_inner
from mcpkit.homotopy.loop import make_homotopy
from mcpkit.homotopy.lpec_polish import is_lpec
from mcpkit.lowering.base import Chain, Lowering
from mcpkit.lowering.standard import ToStandardMPCC
from mcpkit.problems.mpcc import MPCC
from mcpkit.solving.registry import BACKENDS, Route, resolve


def build_mcp_route(problem: Any, route: Route, options: Any, ipopt: str = "auto") -> Any:
    """The one place an MCP's solve chain is built: the object whose ``solve(p, z0, warm)`` runs it.

    A reformulation runs on its backend's route class (declaration -> backend lowering ->
    slack-form MPCC -> homotopy -> inner IPOPT); an engine is its own route class; a route with
    fallbacks is a :class:`~mcpkit.solving.fallback.FallbackRoute` over the chain.
    """
    if route.kind != "mcp":
        raise MCPInputError(f"build_mcp_route: route is for {route.kind!r}, not 'mcp'")
    chain = (route, *route.fallbacks)
    if ipopt != "auto" and not any(r.is_reformulation and r.backend == "pyomo" for r in chain):
        raise MCPInputError("ipopt= chooses the IPOPT of the homotopy on backend 'pyomo' only")
    if route.fallbacks:
        from mcpkit.solving.fallback import FallbackRoute

        return FallbackRoute(problem, [replace(r, fallbacks=()) for r in chain], options, ipopt)
    if route.is_reformulation:
        cls = BACKENDS[route.backend].load_mcp_route()
        extra = {"ipopt": ipopt} if route.backend == "pyomo" else {}
        return cls(problem, route.method, options, **extra)
    return route.entry.load()(problem, route.backend, options)


def inner_solver(route: Route, ipopt: str = "auto") -> tuple[Any, str]:
    """``(inner-solver factory or None for CasADi's nlpsol, description)`` for ``route``'s subproblems.

    ``ipopt`` matters on backend ``pyomo`` only (see :func:`mcpkit.homotopy.inner.select_inner`).
    """
    if route.backend != "pyomo":
        return None, "casadi"
    return select_inner(ipopt)


@dataclass(frozen=True)
class MPCCPlan:
    r"""What one MPCC solve runs, chosen once (:func:`plan_mpcc`).

    The homotopy solves :attr:`target`; a point :math:`x_t` of it maps back to the user's
    variables by :attr:`chain` ``.invert(x_t, inverse)``.
    """

    #: The resolved method and backend (for ``"auto"``: with its second opinion).
    route: Route
    #: The problem in the standard form :math:`0 \le G \perp H \ge 0` (the stationarity check's).
    standard: MPCC
    #: The lowerings from the user's problem to :attr:`target`, and their inverse data.
    chain: Chain
    inverse: list[Any]
    #: What the homotopy solves (:attr:`standard`, or its Pyomo/NL round trip on ``pyomo``).
    target: MPCC
    #: The homotopy (reformulation, fallbacks, second opinion, inner IPOPT).
    homotopy: Any
    #: Which IPOPT solves the subproblems (``"casadi"`` or the ``ipopt=`` choice made).
    ipopt_used: str


def plan_mpcc(problem: MPCC, method: Any, backend: Any, options: Any, ipopt: str = "auto") -> MPCCPlan:
    r"""The one place an MPCC's solve is planned: route, lowering chain and homotopy.

    1. ``resolve("mpcc", method, backend)`` (typed errors before any lowering);
    2. the one lowering to the standard form (:class:`~mcpkit.lowering.standard.ToStandardMPCC`);
       for ``method="auto"`` the route is resolved again with ``lpec=`` when :math:`f, g, G, H`
       are affine (an LPEC gets ``fb`` first, ``scholtes`` as second opinion);
    3. on ``backend="pyomo"`` the standard form on through Pyomo's NL writer
       (:class:`~mcpkit.lowering.pyomo_nl.ThroughPyomoNL`);
    4. the homotopy on the target (:func:`~mcpkit.homotopy.loop.make_homotopy`), its inner IPOPT
       from :func:`inner_solver`.
    """
    route = resolve("mpcc", method, backend)
    if route.backend != "pyomo" and ipopt != "auto":
        raise MCPInputError("ipopt= chooses the IPOPT of backend='pyomo'; the CasADi backend has one")
    standard, pair_map = ToStandardMPCC().apply(problem)
    if route.note:  # "auto": an LPEC gets its own choice
        lpec = is_lpec(standard.f, standard.g, standard.G, standard.H, standard.x)
        route = resolve("mpcc", method, backend, lpec=lpec)
    steps: list[Lowering] = [ToStandardMPCC()]
    inverse: list[Any] = [pair_map]
    target = standard
    inner, ipopt_used = inner_solver(route, ipopt)
    if route.backend == "pyomo":
        from mcpkit.lowering.pyomo_nl import ThroughPyomoNL

        target, nl_inverse = ThroughPyomoNL().apply(standard)
        steps.append(ThroughPyomoNL())
        inverse.append(nl_inverse)
    homotopy = make_homotopy(target, route.method, options, inner=inner, second_opinion=route.second_opinion)
    return MPCCPlan(route, standard, Chain(steps), inverse, target, homotopy, ipopt_used)
