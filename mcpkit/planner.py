"""From a resolved route to the objects that run it: the MCP solve chain and a homotopy's inner IPOPT.

:mod:`mcpkit.registry` says what exists and resolves a user's ``(kind, method, backend)`` into a
:class:`~mcpkit.registry.Route`; it imports no solver, so that :mod:`mcpkit.options` and every
solver can read it. This module builds what a route names, and so imports the route classes and
inner solvers (through the registry's ``"module:attribute"`` targets and
:mod:`mcpkit.solvers.fallback`):

* :func:`build_mcp_route`: the one place an MCP's solve chain is built (:class:`mcpkit.Solver`,
  and each attempt of :class:`~mcpkit.solvers.fallback.FallbackRoute`);
* :func:`inner_solver`: the inner IPOPT of a homotopy on a route's backend (the ``ipopt=``
  choice of :class:`mcpkit.mpcc.MPCCSolver`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from mcpkit.errors import MCPInputError
from mcpkit.registry import BACKENDS, Route
from mcpkit.solvers.inner import select_inner


def build_mcp_route(problem: Any, route: Route, options: Any, ipopt: str = "auto") -> Any:
    """The one place an MCP's solve chain is built: the object whose ``solve(p, z0, warm)`` runs it.

    A reformulation runs on its backend's route class (declaration -> backend lowering ->
    slack-form MPCC -> homotopy -> inner IPOPT); an engine is its own route class; a route with
    fallbacks is a :class:`~mcpkit.solvers.fallback.FallbackRoute` over the chain.
    """
    if route.kind != "mcp":
        raise MCPInputError(f"build_mcp_route: route is for {route.kind!r}, not 'mcp'")
    chain = (route, *route.fallbacks)
    if ipopt != "auto" and not any(r.is_reformulation and r.backend == "pyomo" for r in chain):
        raise MCPInputError("ipopt= chooses the IPOPT of the homotopy on backend 'pyomo' only")
    if route.fallbacks:
        from mcpkit.solvers.fallback import FallbackRoute

        return FallbackRoute(problem, [replace(r, fallbacks=()) for r in chain], options, ipopt)
    if route.is_reformulation:
        cls = BACKENDS[route.backend].load_mcp_route()
        extra = {"ipopt": ipopt} if route.backend == "pyomo" else {}
        return cls(problem, route.method, options, **extra)
    return route.entry.load()(problem, route.backend, options)


def inner_solver(route: Route, ipopt: str = "auto") -> tuple[Any, str]:
    """``(inner-solver factory or None for CasADi's nlpsol, description)`` for ``route``'s subproblems.

    ``ipopt`` matters on backend ``pyomo`` only (see :func:`mcpkit.solvers.inner.select_inner`).
    """
    if route.backend != "pyomo":
        return None, "casadi"
    return select_inner(ipopt)
