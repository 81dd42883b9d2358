r"""``mcpkit.solve`` and the re-usable :class:`Solver`: declare -> lower -> solve -> result.

>>> import numpy as np, mcpkit
>>> mcp = mcpkit.MCP.lcp(np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([-1.0, -1.0]))
>>> res = mcpkit.solve(mcp)
>>> bool(res.solved), np.round(res.z, 6).tolist()
(True, [0.333333, 0.333333])

Whatever the route, the returned point is judged here, on the declaration: :math:`F(z; p)` is
evaluated from the MCP itself and the natural residual, complementarity violation and bound
violation are computed on the original pairs (:mod:`mcpkit.solving.residuals`); the point is a solution
exactly when all three are at most ``tol`` (:func:`mcpkit.solving.result.judge`). The termination is
the route's, corrected by :func:`mcp_termination`: "converged" that the check does not confirm
is ``stalled``, and "locally infeasible" without an infeasibility certificate is ``stalled``.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import replace
from typing import Any

import numpy as np

from mcpkit.errors import MCPInputError, UnknownOptionError
from mcpkit.homotopy.ipopt import check_ipopt_options
from mcpkit.lowering.casadi import CasadiMCP, lower_to_casadi
from mcpkit.orchestration.planner import build_mcp_route, resolve
from mcpkit.problems.arrays import ArrayLike, as_float_vector
from mcpkit.problems.mcp import MCP
from mcpkit.problems.mpcc import MPCC
from mcpkit.solving import stop
from mcpkit.solving.options import (
    SPENT_SECONDS,
    Backend,
    Budget,
    Method,
    SolveOptions,
    did_you_mean,
    time_limit_seconds,
)
from mcpkit.solving.progress import BAR_SETTINGS, display
from mcpkit.solving.residuals import classify_pairs
from mcpkit.solving.result import (
    AtParameter,
    MCPResult,
    MPCCResult,
    Termination,
    judge_point,
    mcp_termination,
    note_overrun,
    verdict_message,
)
from mcpkit.solving.route import RouteOutcome, RouteRunner

#: The options :meth:`Solver.solve` takes per call; every other option is the solver's, set once
#: in ``Solver(...)`` (it shapes the route that is built).
PER_CALL: tuple[str, ...] = ("p", "z0", "warm_start", "time_limit", "tol")

#: Per-call tolerances whose routes a :class:`Solver` keeps (:meth:`Solver.solve` ``tol=``).
TOL_ROUTES = 4


def _refuse_per_solver(options: dict[str, Any]) -> None:
    """Raise :class:`~mcpkit.errors.UnknownOptionError` for keywords :meth:`Solver.solve` does not take:
    an option of :class:`~mcpkit.solving.options.SolveOptions` is named as the solver's (set it in
    ``Solver(...)``), any other name with the closest per-call or solver option."""
    name = next(iter(options))
    solver_options = [n for n in SolveOptions.names() if n not in PER_CALL]
    if name in solver_options:
        raise UnknownOptionError(
            f"{name!r} is an option of the solver, not of one call: build Solver(problem, {name}=...) "
            f"(or mcpkit.solve(problem, {name}=...)). Per call: {list(PER_CALL)}"
        )
    extra = did_you_mean(name, list(PER_CALL) + solver_options)
    raise UnknownOptionError(
        f"unknown option {name!r} of Solver.solve; per call: {list(PER_CALL)}, per solver (Solver(...)): "
        f"{solver_options}.{extra}"
    )


class Solver:
    r"""A solve route built once for one MCP structure; call :meth:`solve` many times.

    Parameters
    ----------
    problem
        The declaration :math:`l \le z \le u \perp F(z; p)`.
    backend, method
        A registered backend and method, or ``"auto"`` (see :mod:`mcpkit.solving.registry`,
        :class:`~mcpkit.solving.options.Backend`, :class:`~mcpkit.solving.options.Method`, ``mcpkit info``).
        Unknown names raise :class:`~mcpkit.errors.UnknownOptionError` listing the registered
        ones; a method that does not run on the backend raises
        :class:`~mcpkit.errors.MCPInputError`.
    options
        A :class:`~mcpkit.solving.options.SolveOptions`; keyword arguments override its fields.
    ipopt
        Backend ``pyomo`` only: which IPOPT solves the subproblems (``"auto"``: an ``ipopt``
        executable when found, else CasADi's; ``"executable"``, ``"casadi"``, ``"mcpkit_ipopt"``).

    Notes
    -----
    Parameter values may change between calls (``solve(p=...)``) without rebuilding: the
    parameters are symbolic in every lowering. With ``warm_start=True`` (default) the next
    call starts from the previous solution and its multipliers.
    """

    def __init__(
        self,
        problem: MCP,
        backend: str | Backend = "auto",
        method: str | Method = "auto",
        options: SolveOptions | None = None,
        *,
        ipopt: str = "auto",
        **kwargs: Any,
    ) -> None:
        if not isinstance(problem, MCP):
            raise MCPInputError(
                f"Solver expects an mcpkit.MCP, got {type(problem).__name__}; use "
                "mcpkit.solve() for Pyomo models and mcpkit.mpcc.MPCCSolver for MPCCs"
            )
        self.options = SolveOptions.for_problem("mcp", options, **kwargs)
        if self.options.ipopt_options:  # misspelt IPOPT options fail now, even if only a fallback uses IPOPT
            check_ipopt_options(self.options.ipopt_options)
        problem.validate()
        self.problem = problem
        self._version = problem.version
        self.resolved = resolve("mcp", method, backend)
        self.backend = Backend.parse(self.resolved.backend)
        self.method = Method.parse(self.resolved.method)
        self.choice_note = self.resolved.note
        self._lb, self._ub = problem.lb, problem.ub
        self._F = problem.evaluator()  # F(z; p) of the declaration, for the verdict
        self._floor = problem.rounding_floor_function()  # the verdict's floor (MCP.rounding_floor_function)
        self.route: RouteRunner = build_mcp_route(problem, self.resolved, self.options, ipopt)
        self._ipopt = ipopt
        self._tol_routes: dict[float, RouteRunner] = {}  # routes built for a per-call tol
        self._last_z: np.ndarray | None = None

    @property
    def cas(self) -> CasadiMCP:
        """The CasADi lowering of the problem (:func:`~mcpkit.lowering.casadi.lower_to_casadi`,
        built on first use: a solve of an LCP with numeric data needs none)."""
        return lower_to_casadi(self.problem)

    def solve(
        self,
        p: ArrayLike | dict[str, ArrayLike] | None = None,
        z0: ArrayLike | None = None,
        warm_start: bool = True,
        *,
        time_limit: float | None = None,
        tol: float | None = None,
        **options: Any,
    ) -> MCPResult:
        """Solve at parameter values ``p`` (dict by block, stacked array, or current values).

        Parameters
        ----------
        p
            Parameter values; ``None`` uses the values stored in the MCP.
        z0
            Starting point (stacked); default: the previous solution when ``warm_start``,
            otherwise the declaration's start.
        warm_start
            Start from the previous solution (and multipliers) of this solver.
        time_limit
            Seconds for this call (``None``: the options' ``time_limit``; ``inf``: none for this
            call; ``0``, or a limit that passes before the first iteration: return the start
            point, judged, so ``solved`` only when the start point is a solution); later calls
            are not affected. A bool,
            a string, NaN or a negative number is an :class:`~mcpkit.errors.MCPInputError`
            (:func:`~mcpkit.solving.options.time_limit_seconds`).
        tol
            The tolerance of this call (``None``: the solver's ``tol``): the route stops on it and
            the point is judged against it. A route whose solver reads its tolerance when built
            (the IPOPT homotopies) is built once more for each new ``tol`` and kept for the next
            calls with that ``tol``; later calls without ``tol`` use the solver's.
        **options
            Nothing else is per call: any other option of
            :class:`~mcpkit.solving.options.SolveOptions` raises
            :class:`~mcpkit.errors.UnknownOptionError` saying it belongs to ``Solver(...)``
            (:data:`PER_CALL`), and an unknown name names the option probably meant.
        """
        if options:
            _refuse_per_solver(options)
        if self.problem.version != self._version:
            raise MCPInputError("the MCP's structure changed after this Solver was built; build a new Solver")
        route = self._route_for(tol)
        if not isinstance(warm_start, (bool, np.bool_)):
            raise MCPInputError(f"warm_start must be True or False, got {warm_start!r}")
        limit = None if time_limit is None else time_limit_seconds(time_limit, zero_ok=True)
        pv = self.problem.parameter_vector(p)
        warm = warm_start and self._last_z is not None
        if z0 is not None:
            start = as_float_vector(z0, self.problem.n, "z0", allow_inf=False)
        elif warm:
            assert self._last_z is not None
            start = self._last_z
        else:
            start = self.problem.start
        start = np.minimum(np.maximum(start, self._lb), self._ub)
        t0 = time.perf_counter()
        seconds = route.options.time_limit
        if time_limit is not None:  # this call's limit (inf: none this call)
            # a passed limit (0, or less than what is left) still runs the route: it stops before
            # its first iteration (SPENT_LIMIT) and the start point is judged
            seconds = None if limit is None else max(limit, SPENT_LIMIT)
        budget = Budget(seconds, t0)
        try:
            # progress=True: a tqdm line; otherwise nothing to enter (progress.py is not called)
            bar = (
                display(self.options.progress, self.problem.name)
                if self.options.progress in BAR_SETTINGS
                else contextlib.nullcontext()
            )
            with bar:
                out = route.solve(pv, start, warm, budget)
        except (KeyboardInterrupt, RuntimeError) as exc:  # CasADi wraps an interrupt it caught
            if not stop.is_interrupt(exc):
                raise
            out = RouteOutcome(None, Termination.INTERRUPTED, "KeyboardInterrupt", 0)
        wall = time.perf_counter() - t0
        result = self._result(out, pv, wall, route.options.tol, route)
        if self.options.verbose:
            for line in result.warnings:
                print(f"mcpkit warning: {line}")
        if result.solved:
            self._last_z = result.z.copy()
        return result

    def _route_for(self, tol: float | None) -> RouteRunner:
        """The route that solves at ``tol``: :attr:`route` for the solver's own, else one built
        with ``tol`` (kept: up to :data:`TOL_ROUTES` tolerances, the oldest dropped first)."""
        if tol is None:
            return self.route
        t = SolveOptions.from_kwargs(self.options, tol=tol).tol  # checked like Solver(tol=...)
        if t == self.options.tol:
            return self.route
        if t not in self._tol_routes:
            if len(self._tol_routes) >= TOL_ROUTES:
                self._tol_routes.pop(next(iter(self._tol_routes)))
            self._tol_routes[t] = build_mcp_route(
                self.problem, self.resolved, replace(self.options, tol=t), self._ipopt
            )
        return self._tol_routes[t]

    def _result(
        self, out: RouteOutcome, p: np.ndarray, wall: float, tol: float, route: RouteRunner
    ) -> MCPResult:
        lb, ub = self._lb, self._ub
        # judged once: the chain's verdict on this very point at this tolerance, when it has one
        jp = out.judged
        if jp is None or jp.z is not out.z or route.options.tol != tol:
            floor = self._floor
            err = None if floor is None else AtParameter(floor, p)
            jp = judge_point(out.z, AtParameter(self._F, p), lb, ub, tol, out.F, err)
        z, F, r, status = jp.z, jp.F, jp.residuals, jp.status
        states = classify_pairs(z, F, lb, ub, tol, r.per_pair) if jp.have_point else []
        termination = mcp_termination(out.termination, status, out.extra)
        method, backend = out.method or self.method.value, out.backend or route.backend
        route = f"{method}/{backend}"
        msg = verdict_message(
            f"by {route}", status, r.natural, r.complementarity, r.bounds, tol, termination, jp.floor
        )
        if termination is Termination.TIME_LIMIT and out.raw_status.startswith("not started"):
            msg += f" ({out.raw_status})"  # why no step ran: the reason the time limit is reported
        if self.choice_note:
            msg += f"; {self.choice_note}"
        return MCPResult(
            z=z,
            F=F,
            termination=termination,
            solution_status=status,
            natural_residual=r.natural,
            complementarity_violation=r.complementarity,
            bound_violation=r.bounds,
            pair_states=states,
            tol=tol,
            iterations=out.iterations,
            wall_time_s=wall,
            backend=backend,
            method=method,
            trace=list(out.trace),
            raw_status=out.raw_status,
            message=msg,
            blocks=self.problem.block_slices,
            extra=dict(out.extra),
            warnings=tuple(out.warnings),
            problem=self.problem,
            p=p,
        )


def solve(
    problem: Any,
    backend: str | Backend = "auto",
    method: str | Method = "auto",
    p: ArrayLike | dict[str, ArrayLike] | None = None,
    z0: ArrayLike | None = None,
    options: SolveOptions | None = None,
    **kwargs: Any,
) -> MCPResult | MPCCResult:
    r"""Solve an MCP, an MPCC or a Pyomo complementarity model once.

    Parameters
    ----------
    problem
        An :class:`~mcpkit.MCP` (solved by :class:`Solver`, returns
        :class:`~mcpkit.solving.result.MCPResult`); an :class:`~mcpkit.mpcc.MPCC` with standard or
        general pair bounds, e.g. from :func:`~mcpkit.mpcc.load_mpcc_json` (solved by
        :class:`~mcpkit.mpcc.MPCCSolver`, returns :class:`~mcpkit.solving.result.MPCCResult`); or a
        Pyomo model: with an active objective that depends on a variable it is an MPCC
        (:meth:`MPCC.from_pyomo <mcpkit.mpcc.MPCC.from_pyomo>`, returns
        :class:`~mcpkit.solving.result.MPCCResult`, whose ``extra["pyomo_objective"]`` is the Pyomo
        objective in its own sense); without one (or with a constant one) an MCP
        (:func:`mcpkit.lowering.pyomo.from_pyomo`); see :mod:`mcpkit.frontends.pyomo_plugin`. The point
        is written back into the model's variables; mutable ``Param`` values are the parameters
        and the variables' values the start unless ``p``/``z0`` are given.
    backend, method
        Registered names or ``"auto"`` (see :class:`Solver`); honoured for every problem kind
        or refused with a typed error before anything runs.
    p
        Parameter values (dict by block name or stacked array; an array for an MPCC).
    z0
        Starting point (``x0`` of an MPCC).
    options, **kwargs
        :class:`~mcpkit.solving.options.SolveOptions` and/or its fields as keywords (``tol=1e-10``);
        ``ipopt=`` (backend ``pyomo``) and, for MPCCs, ``stationarity=True`` pass on.
        Unknown names raise :class:`~mcpkit.errors.UnknownOptionError` before anything runs,
        with the name probably meant (``tolerance`` -> ``tol``). ``progress=True`` draws a
        ``tqdm`` line with each step's residual (:attr:`SolveOptions.progress
        <mcpkit.solving.options.SolveOptions.progress>`); ``time_limit`` bounds the whole call,
        building the route included, and a call that ends after it reports
        ``termination="time_limit"`` (:func:`~mcpkit.solving.result.note_overrun`).

    Returns
    -------
    MCPResult or MPCCResult
        ``result.solved`` is mcpkit's verdict from residuals on the problem as posed;
        ``result.raise_if_failed()`` turns a failure into an exception.
    """
    t0 = time.perf_counter()  # the time limit bounds the whole call: building the route counts too
    if isinstance(problem, MPCC):
        from mcpkit.orchestration.mpcc_solver import MPCCSolver

        solver = MPCCSolver(problem, method, backend, options, **kwargs)
        limit = solver.options.time_limit
        res = solver.solve(p=p, x0=z0, time_limit=time_left(limit, t0))
        return note_overrun(res, limit, time.perf_counter() - t0)
    if isinstance(problem, MCP):
        mcp_solver = Solver(problem, backend=backend, method=method, options=options, **kwargs)
        limit = mcp_solver.options.time_limit
        res = mcp_solver.solve(p=p, z0=z0, warm_start=False, time_limit=time_left(limit, t0, SPENT_LIMIT))
        return note_overrun(res, limit, time.perf_counter() - t0)
    if _is_pyomo_model(problem):
        from mcpkit.frontends.pyomo_plugin import PyomoModelRoute

        route = PyomoModelRoute(problem, backend=backend, method=method, options=options, **kwargs)
        limit = route.options.time_limit
        res = route.solve(p=p, z0=z0, warm_start=False, time_limit=time_left(limit, t0))
        return note_overrun(res, limit, time.perf_counter() - t0)
    raise MCPInputError(
        f"solve() expects an mcpkit.MCP, an mcpkit.MPCC or a Pyomo model with Complementarity "
        f"components; got {type(problem).__name__}"
    )


def _is_pyomo_model(obj: Any) -> bool:
    try:
        from pyomo.core.base.block import BlockData
    except ImportError:  # pragma: no cover - pyomo is a dependency
        return False
    return isinstance(obj, BlockData)


#: The limit an MCP route gets when the caller's has passed (or is below it): so small that every
#: route stops before its first iteration and returns the start point, judged; a start point that
#: solves the problem is reported solved (nothing was left to do), any other is ``time_limit``
#: (the routes' own floor, :data:`~mcpkit.solving.options.SPENT_SECONDS`).
SPENT_LIMIT = SPENT_SECONDS


def time_left(limit: float | None, t0: float, floor: float = 1e-3) -> float | None:
    """What is left at this moment of a ``limit`` (seconds) counted from ``t0``; at least ``floor``
    (1 ms for MPCC solves; :data:`SPENT_LIMIT` for MCP solves), so that a spent budget still
    returns the start point, judged."""
    return None if limit is None else max(limit - (time.perf_counter() - t0), floor)
