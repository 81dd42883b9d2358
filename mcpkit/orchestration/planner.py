r"""The one planner: every choice of a solve, from a user's ``(kind, method, backend)`` to what runs.

:mod:`mcpkit.solving.registry` says what exists (the tables of methods and backends, their
availability checks); it chooses nothing, so that :mod:`mcpkit.solving.options` and every solver
can read it. Every choice is made here, reading those tables:

* :func:`resolve`: a user's ``(kind, method, backend)`` to a :class:`Route`: the ``"auto"``
  method (for MCPs PATH when reachable, else ``newton``; for MPCCs ``scholtes``, or ``fb`` on an
  LPEC), the ``"auto"`` backend, the PATH probe (:func:`path_first`, once a process), the MCP
  fallbacks (:data:`AUTO_MCP_FALLBACKS`) and the MPCC second opinion
  (:data:`AUTO_MPCC_METHODS`, :data:`AUTO_LPEC_METHODS`); unknown names get the registry's
  did-you-mean error (:func:`mcpkit.solving.registry.unknown_name`);
* :func:`require_available`: the typed error, with the how-to, of a route that cannot run;
* :func:`build_mcp_route`: the one place an MCP's solve chain is built (:class:`mcpkit.Solver`,
  and each attempt of :class:`FallbackRoute`), from the registry's ``"module:attribute"``
  targets (imported once, :attr:`mcpkit.solving.registry.MethodEntry.implementation`);
* :func:`plan_mpcc`: the one place an MPCC's solve is planned (:class:`mcpkit.mpcc.MPCCSolver`):
  the route (``"auto"`` re-resolved for LPECs), the lowering chain to what the homotopy solves,
  and the homotopy with its fallbacks and second opinion (:func:`recovery_plan`);
* :func:`inner_solver` and :func:`select_inner`: the inner IPOPT of a homotopy on a route's
  backend (the ``ipopt=`` choice, :class:`~mcpkit.solving.options.IpoptChoice`);
* :func:`lifts`: whether an MPCC's pair functions are lifted into variables of their own (the
  option ``lift_pairs``, :class:`~mcpkit.solving.options.PairLifting`).

The ``auto`` chain of MCPs (:class:`FallbackRoute`)
---------------------------------------------------

The chain :func:`resolve` builds for ``method="auto"`` is

1. ``path`` when PATH is reachable (``pathampl``, or GAMSPy with a licence that passed its probe);
2. ``newton``, the licence-free semismooth Newton engine;
3. ``lemke`` when :math:`F` is affine (an LCP): exact and finite, and it proves infeasibility
   when it can;
4. ``scholtes``: the IPOPT relaxation homotopy.

Each attempt's point is judged the way :class:`mcpkit.Solver` judges every point, on the original
pairs: it is accepted when its natural residual, complementarity violation and bound violation
are at most ``tol`` (:func:`mcpkit.solving.result.judge`). The next method runs only if the previous one
was not accepted, and never after

* a **time limit** (the whole chain shares the call's :class:`~mcpkit.solving.options.Budget`:
  each attempt gets the same one, so it ends by the call's deadline);
* an **interrupt** (``KeyboardInterrupt`` during an attempt: the best point so far is returned
  with termination ``interrupted`` and the attempts up to then);
* a **verified proof that no solution exists** (Lemke's infeasibility certificate), since no
  other method can then succeed.

Later routes are built only when first needed, so a problem ``newton`` solves never pays for
building IPOPT. A later method that cannot take the problem (``lemke`` on a nonlinear :math:`F`)
is skipped and the reason recorded; an input error of the first of mcpkit's own methods (a
typed :class:`~mcpkit.errors.MCPInputError`, e.g. a constant row with no solution on backend
``pyomo``) is raised before anything runs, as it would be for that method asked by name. PATH's
interfaces have limits of their own (what GAMSPy or AMPL can state), so an input error of PATH
only skips it. A
method whose solver is not available (:class:`~mcpkit.errors.SolverNotAvailableError`, e.g.
PATH refused by its demo licence) is skipped at any position.

What the result shows: ``trace`` holds every attempt's records in order (their ``phase`` says
which method made them: ``"crash"``, ``"newton"``, ``"gradient"``, ``"pivot"``, ``"relax"``,
``"polish"``...); ``iterations`` is their sum; ``method`` is the method whose point is returned;
``extra["attempts"]`` lists one dict per attempt with ``method``, ``termination``,
``natural_residual``, ``iterations``, ``wall_time_s`` and ``raw_status`` (or ``skipped`` with the
reason). When no attempt is accepted, the point with the smallest natural residual is returned
(``method`` names its method, ``extra`` is its extras plus any infeasibility certificate) with
the termination and raw status of the last attempt, which say why the chain stopped.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, replace
from typing import Any

import casadi as ca
import numpy as np

from mcpkit.errors import MCPInputError, SolverNotAvailableError
from mcpkit.homotopy.inner import InnerFactory
from mcpkit.homotopy.ipopt import CasadiInner
from mcpkit.homotopy.loop import PointAssessor
from mcpkit.homotopy.recovery import make_homotopy
from mcpkit.lowering.base import Chain, Lowering
from mcpkit.lowering.lift_pairs import LiftMap, LiftPairs
from mcpkit.lowering.standard import ToStandardMPCC
from mcpkit.problems.mpcc import MPCC
from mcpkit.solving.options import Budget, IpoptChoice, PairLifting, SolveOptions, call_budget
from mcpkit.solving.registry import BACKENDS, METHODS, PROBLEM_KINDS, Check, MethodEntry, unknown_name
from mcpkit.solving.result import SolutionStatus, Termination, judge_point
from mcpkit.solving.route import RouteOutcome, RouteRunner

# --------------------------------------------------------------------------------------------
# resolving a user's choice: the route, "auto" method and backend, the PATH probe
# --------------------------------------------------------------------------------------------


def _name(value: Any, what: str, table: dict[str, Any]) -> str:
    """The registered name ``value`` (a string or a ``Method``/``Backend`` member) stands for, or
    ``"auto"``; the registry's did-you-mean error when it is neither."""
    name = str(getattr(value, "value", value)).lower()
    if name != "auto" and name not in table:
        unknown_name(what, value, ["auto", *table])
    return name


@dataclass(frozen=True)
class Route:
    """A resolved choice: which method runs on which backend for which problem kind."""

    kind: str
    """Problem kind (``"mcp"`` or ``"mpcc"``)."""
    method: str
    """Registered method name (never ``"auto"``)."""
    backend: str
    """Registered backend name (never ``"auto"``)."""
    note: str = ""
    """Why ``"auto"`` chose this route (empty when nothing was automatic)."""
    fallbacks: tuple[Route, ...] = ()
    """Routes tried in order when this one's point fails mcpkit's check (``method="auto"`` for
    MCPs only; :class:`FallbackRoute`)."""
    second_opinion: str | None = None
    """MPCCs: the reformulation run after this one converged, whose point is kept when its
    objective is lower (``method="auto"`` on LPECs; see
    :class:`~mcpkit.homotopy.recovery.RecoveringHomotopy`)."""

    @property
    def entry(self) -> MethodEntry:
        """The method's registry entry."""
        return METHODS[self.method]

    @property
    def is_reformulation(self) -> bool:
        """The method is a homotopy reformulation (else an engine)."""
        return self.entry.kind == "reformulation"


#: What ``method="auto"`` tries after its first choice for an MCP (:class:`FallbackRoute`).
AUTO_MCP_FALLBACKS: tuple[str, ...] = ("newton", "lemke", "scholtes")

#: ``method="auto"`` for an MPCC: the reformulation run first and the one asked for a second
#: opinion (a run from the same start whose point is kept only when it meets the tolerance with
#: a lower objective, :class:`~mcpkit.homotopy.recovery.RecoveringHomotopy`). Scholtes's
#: homotopy first, Fischer-Burmeister's second: the two end in different basins, and on MPECLib's
#: parameter-identification problems (``find*``) the second finds far better fits (``finda30l``
#: 138 -> 4e-7, ``findb15l`` 4.99 -> 0.077, ``findc10s`` 0.30 -> 9e-8: 10 of 86 problems
#: lower), at 1.6-2.4x the median time per problem (MPECLib 0.26 -> 0.62 s, MacMPEC 0.037 ->
#: 0.056 s, NOSBENCH 0.053 -> 0.089 s; no objective higher).
AUTO_MPCC_METHODS: tuple[str, str] = ("scholtes", "fb")
#: The same for an LPEC (f, g, G, H affine in x), in the other order: on MPECLib's LPECs the
#: Fischer-Burmeister homotopy is 5-30x faster than Scholtes's (frictionalblock_1-5: 1.0-1.7 s
#: against 7-31 s; frictionalblock_6 solved in 24 s, which Scholtes does not finish in 60 s),
#: but ends on a worse piece of MacMPEC's bilin (-16 against -18.4).
AUTO_LPEC_METHODS: tuple[str, str] = ("fb", "scholtes")


def _auto_mpcc_method(lpec: bool) -> tuple[str, str, str | None]:
    """``(method, note, second opinion)`` of ``method="auto"`` for an MPCC."""
    first, second = AUTO_LPEC_METHODS if lpec else AUTO_MPCC_METHODS
    what = "an LPEC, so " if lpec else ""
    return first, f"auto: {what}{first} first, then {second} as a second opinion", second


#: What the ``path`` entry's check said, by check: the first ``method="auto"`` solve of an MCP in a
#: process probes PATH (:func:`path_first`), later ones reuse the answer.
_PATH_PROBED: dict[Check, bool] = {}


def path_first() -> bool:
    """Whether ``method="auto"`` puts PATH first on backend ``"auto"``: the ``path`` entry's check,
    run on the first call in a process (it looks for ``pathampl`` on ``PATH`` and in idaes-pse's
    folders, about 0.1 ms, and probes GAMSPy's licence with a real solve) and remembered after.

    PATH that became unusable since (a demo licence that expired while the process ran, a size
    the licence refuses) is not a crash: the chain skips it as "PATH unavailable" and goes on
    (:class:`FallbackRoute`). :func:`forget_path_probe` makes the next
    call probe again (a PATH installed while the process runs; tests that fake its absence).
    A replaced ``path`` entry (another check) is probed afresh.
    """
    check = METHODS["path"].check
    found = _PATH_PROBED.get(check)
    if found is None:
        found = _PATH_PROBED[check] = bool(check()[0])
    return found


def forget_path_probe() -> None:
    """Drop the answer :func:`path_first` remembered: its next call runs the check again."""
    _PATH_PROBED.clear()


def _auto_mcp_method(backend: str) -> tuple[str, str, tuple[str, ...]]:
    """``(first method, note, methods to try next)`` of ``method="auto"`` for an MCP on ``backend``."""
    then = "then Lemke (LCPs) and the Scholtes homotopy if Newton fails"
    if backend == "gamspy":
        return "path", "auto: backend gamspy means PATH", ()
    if backend == "pyomo":
        from mcpkit.solving.availability import pathampl_executable

        if pathampl_executable() is not None:
            return "path", "auto: pathampl found, so PATH ran first, through Pyomo", AUTO_MCP_FALLBACKS
    if backend == "auto" and path_first():
        return "path", "auto: PATH is available, so PATH ran first", AUTO_MCP_FALLBACKS
    if backend == "casadi":
        return "newton", f"auto: semismooth Newton on CasADi, {then}", AUTO_MCP_FALLBACKS[1:]
    why = "no pathampl for Pyomo" if backend == "pyomo" else "PATH not available"
    return "newton", f"auto: {why}; semismooth Newton, {then}", AUTO_MCP_FALLBACKS[1:]


def _auto_backend(method: str) -> str:
    if method == "path":
        from mcpkit.solving.availability import pathampl_executable

        return "pyomo" if pathampl_executable() is not None else "gamspy"
    return METHODS[method].backends[0]


def resolve(kind: str, method: Any = "auto", backend: Any = "auto", *, lpec: bool = False) -> Route:
    """The :class:`Route` for ``method`` on ``backend`` for a problem of ``kind``.

    ``"auto"`` method: for an MCP, PATH when reachable through ``backend`` (or anywhere, for
    ``backend="auto"``), else ``newton``; later methods of :data:`AUTO_MCP_FALLBACKS`
    (``newton``, ``lemke``, ``scholtes``) become :attr:`Route.fallbacks`, tried in order when a
    point fails the check (:class:`FallbackRoute`). For an MPCC,
    :data:`AUTO_MPCC_METHODS`: ``scholtes``, with ``fb`` as :attr:`Route.second_opinion`; when
    ``lpec`` (the caller found f, g, G and H affine), :data:`AUTO_LPEC_METHODS`: ``fb``, with
    ``scholtes`` as the second opinion. ``"auto"`` backend: the
    method's first registered backend (for PATH: ``pyomo`` when ``pathampl`` is found, else
    ``gamspy``).

    Raises
    ------
    UnknownOptionError
        ``method`` or ``backend`` is not registered (the message lists what is).
    MCPInputError
        The method does not accept this problem kind, or does not run on this backend.
    """
    if kind not in PROBLEM_KINDS:
        unknown_name("problem kind", kind, PROBLEM_KINDS)
    m = _name(method, "method", METHODS)
    b = _name(backend, "backend", BACKENDS)
    note = ""
    if b != "auto" and kind not in BACKENDS[b].problems:
        able = [n for n, e in BACKENDS.items() if kind in e.problems]
        raise MCPInputError(f"backend {b!r} does not take {kind.upper()}s; backends that do: {able}")
    then: tuple[str, ...] = ()
    second: str | None = None
    if m == "auto" and kind == "mcp":
        m, note, then = _auto_mcp_method(b)
    elif m == "auto":
        m, note, second = _auto_mpcc_method(lpec)
    entry = METHODS[m]
    if kind not in entry.problems:
        able = [n for n, e in METHODS.items() if kind in e.problems]
        raise MCPInputError(f"method {m!r} does not solve {kind.upper()}s; methods that do: {able}")
    if b == "auto":
        b = _auto_backend(m)
    elif b not in entry.backends:
        raise MCPInputError(f"method {m!r} runs on backends {list(entry.backends)}, not {b!r}")
    fallbacks = tuple(Route(kind, f, b if b in METHODS[f].backends else METHODS[f].backends[0]) for f in then)
    return Route(kind, m, b, note, fallbacks, second)


def require_available(route: Route) -> None:
    """Raise :class:`~mcpkit.errors.SolverNotAvailableError` (with the how-to) if ``route`` cannot run."""
    for what, check in (("method", METHODS[route.method].check), ("backend", BACKENDS[route.backend].check)):
        status, reason = check()
        if not status:
            raise SolverNotAvailableError(f"{what} {getattr(route, what)!r} is not available: {reason}")


#: Terminations after which no later method is tried.
FINAL = (Termination.TIME_LIMIT, Termination.INTERRUPTED)


class FallbackRoute:
    """Routes tried in order (module docstring); built by :func:`build_mcp_route`.

    Parameters
    ----------
    problem
        The MCP declaration.
    routes
        The :class:`Route` of each method, in the order to try them.
    options
        Stopping rules shared by every attempt (``time_limit`` bounds the whole chain).
    ipopt
        Passed to the IPOPT homotopy on backend ``pyomo``.
    """

    def __init__(self, problem: Any, routes: list[Any], options: SolveOptions, ipopt: str = "auto") -> None:
        if not routes:
            raise MCPInputError("FallbackRoute needs at least one route")
        self._build = build_mcp_route
        self.problem = problem
        self.specs = list(routes)
        self.options = options
        self.ipopt = ipopt
        self.backend: str = self.specs[0].backend
        self.method: str = self.specs[0].method
        self._routes: dict[int, RouteRunner | str] = {0: self._make(0)}  # the first one is built now

    def _make(self, k: int) -> RouteRunner | str:
        spec = self.specs[k]
        ipopt = self.ipopt if spec.is_reformulation and spec.backend == "pyomo" else "auto"
        try:
            return self._build(self.problem, spec, self.options, ipopt)
        except SolverNotAvailableError as exc:  # e.g. PATH refused by its licence
            return f"{type(exc).__name__}: {exc}"
        except MCPInputError as exc:  # lemke on a nonlinear F, ...
            if k == 0 and spec.method != "path":  # an input error of mcpkit's own first engine
                raise
            return f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # PATH's own errors (GAMSPy's FatalError on an expired licence)
            if spec.method != "path":
                raise
            first = str(exc).splitlines()[0][:200] if str(exc) else ""
            return f"PATH unavailable: {type(exc).__name__}: {first}"

    def _route(self, k: int) -> RouteRunner | str:
        if k not in self._routes:
            self._routes[k] = self._make(k)
        return self._routes[k]

    def _accepted(self, out: RouteOutcome, p: np.ndarray) -> tuple[bool, float]:
        """Does the attempt's point pass mcpkit's check (:func:`mcpkit.solving.result.judge`: natural
        residual, complementarity violation and bound violation <= tol); and its natural residual."""
        if out.z is None or not np.isfinite(out.z).all():
            return False, float("inf")
        F_at = self.problem.evaluator()  # F of the declaration (mcpkit.problems.mcp.MCP.evaluator)
        floor = getattr(self.problem, "rounding_floor_function", lambda: None)()  # as the Solver's
        err = None if floor is None else (lambda z: floor(z, p))
        jp = judge_point(
            out.z, lambda z: F_at(z, p), self.problem.lb, self.problem.ub, self.options.tol, out.F, err
        )
        out.z, out.F, out.judged = jp.z, jp.F, jp  # the Solver's verdict: this one
        return jp.status is SolutionStatus.SOLUTION, jp.residuals.natural

    def solve(self, p: np.ndarray, z0: np.ndarray, warm: bool, budget: Budget | None = None) -> RouteOutcome:
        """Try the methods in order from ``z0`` (each from the same start) until one is accepted,
        every one within ``budget`` (the whole chain's; ``None``: the options' ``time_limit``)."""
        budget = call_budget(budget, self.options.time_limit)
        attempts: list[dict[str, Any]] = []
        trace, iterations = [], 0
        best: tuple[float, RouteOutcome, Any] | None = None
        interrupted = False
        for k, spec in enumerate(self.specs):
            remaining = budget.remaining()
            if k > 0 and remaining is not None and remaining <= 0:
                attempts.append({"method": spec.method, "skipped": "no time left"})
                break
            route = self._route(k)
            if isinstance(route, str):
                attempts.append({"method": spec.method, "skipped": route})
                continue
            ta = time.perf_counter()
            try:
                out = route.solve(p, z0, warm, budget)
            except SolverNotAvailableError as exc:  # e.g. PATH's demo licence refusing the size
                attempts.append({"method": spec.method, "skipped": f"SolverNotAvailableError: {exc}"})
                continue
            except Exception as exc:  # PATH failing in its own code, e.g. a licence that expired
                if spec.method != "path":  # while this process ran: PATH unavailable, next method
                    raise
                first = str(exc).splitlines()[0][:200] if str(exc) else ""
                why = f"PATH unavailable: {type(exc).__name__}: {first}"
                attempts.append({"method": spec.method, "skipped": why})
                self._routes[k] = f"PATH unavailable: {type(exc).__name__}"  # not tried again
                continue
            except KeyboardInterrupt:  # report what the chain has so far, as an interrupt
                attempts.append({"method": spec.method, "termination": Termination.INTERRUPTED.value})
                interrupted = True
                break
            ok, nat = self._accepted(out, p)
            attempts.append({
                "method": spec.method, "termination": out.termination.value, "natural_residual": nat,
                "iterations": out.iterations, "wall_time_s": time.perf_counter() - ta,
                "raw_status": out.raw_status,
            })  # fmt: skip
            trace.extend(out.trace)
            iterations += out.iterations
            if best is None or nat < best[0]:
                best = (nat, out, spec)
            if ok:
                best = (nat, out, spec)
                break
            if out.termination in FINAL or "infeasibility_certificate" in out.extra:
                break
        if best is None:  # every method was skipped, or the first one interrupted
            if interrupted:
                return RouteOutcome(
                    None, Termination.INTERRUPTED, "KeyboardInterrupt", 0, extra={"attempts": attempts}
                )
            reasons = "; ".join(f"{a['method']}: {a['skipped']}" for a in attempts)
            return RouteOutcome(None, Termination.SOLVER_ERROR, f"no method could run ({reasons})", 0,
                                extra={"attempts": attempts})  # fmt: skip
        _, chosen, chosen_spec = best
        if interrupted:
            out = dataclasses.replace(
                out, termination=Termination.INTERRUPTED, raw_status="KeyboardInterrupt"
            )
        extra = dict(chosen.extra)
        if "infeasibility_certificate" in out.extra:
            extra["infeasibility_certificate"] = out.extra["infeasibility_certificate"]
        extra["attempts"] = attempts
        return dataclasses.replace(
            chosen, termination=out.termination, raw_status=out.raw_status, trace=trace,
            iterations=iterations, extra=extra, method=chosen_spec.method, backend=chosen_spec.backend,
        )  # fmt: skip


def build_mcp_route(problem: Any, route: Route, options: Any, ipopt: str = "auto") -> RouteRunner:
    """The one place an MCP's solve chain is built: the object whose ``solve(p, z0, warm)`` runs it.

    A reformulation runs on its backend's route class (declaration -> backend lowering ->
    slack-form MPCC -> homotopy -> inner IPOPT); an engine is its own route class; a route with
    fallbacks is a :class:`~mcpkit.orchestration.planner.FallbackRoute` over the chain.
    """
    if route.kind != "mcp":
        raise MCPInputError(f"build_mcp_route: route is for {route.kind!r}, not 'mcp'")
    chain = (route, *route.fallbacks)
    ipopt = IpoptChoice.parse(ipopt)
    if ipopt is not IpoptChoice.AUTO and not any(r.is_reformulation and r.backend == "pyomo" for r in chain):
        raise MCPInputError("ipopt= chooses the IPOPT of the homotopy on backend 'pyomo' only")
    if route.fallbacks:
        return FallbackRoute(problem, [replace(r, fallbacks=()) for r in chain], options, ipopt)
    if route.is_reformulation:
        cls = BACKENDS[route.backend].mcp_route_class
        extra = {"ipopt": ipopt} if route.backend == "pyomo" else {}
        return cls(problem, route.method, options, **extra)
    return route.entry.implementation(problem, route.backend, options)


def inner_solver(route: Route, ipopt: str = "auto") -> tuple[InnerFactory | None, str]:
    """``(inner-solver factory or None for CasADi's nlpsol, description)`` for ``route``'s subproblems.

    ``ipopt`` matters on backend ``pyomo`` only (see :func:`select_inner`).
    """
    if route.backend != "pyomo":
        return None, "casadi"
    return select_inner(ipopt)


def select_inner(ipopt: IpoptChoice | str = "auto") -> tuple[InnerFactory, str]:
    """The inner solver for an ``ipopt=`` choice (:class:`~mcpkit.solving.options.IpoptChoice`):
    ``(factory, description)``.

    * ``"auto"``: an ``ipopt`` executable when :func:`~mcpkit.solving.availability.ipopt_executable`
      finds one (:class:`~mcpkit.homotopy.pyomo_inner.PyomoInner`), else CasADi's ``nlpsol``
      (:class:`~mcpkit.homotopy.ipopt.CasadiInner`);
    * ``"executable"``: that executable, or :class:`~mcpkit.errors.SolverNotAvailableError`;
    * ``"casadi"``: CasADi's ``nlpsol``;
    * ``"mcpkit_ipopt"``: CasADi's IPOPT as a Pyomo solver (``PyomoInner``, the executable's
      code path, in process).

    Raises
    ------
    UnknownOptionError
        ``ipopt`` is none of the choices (the message lists them, with a did-you-mean hint).
    """
    from mcpkit.homotopy.pyomo_inner import PyomoInner  # imports Pyomo: only when asked for
    from mcpkit.solving.availability import ipopt_executable

    choice = IpoptChoice.parse(ipopt)
    exe = ipopt_executable() if choice in (IpoptChoice.AUTO, IpoptChoice.EXECUTABLE) else None
    if choice is IpoptChoice.EXECUTABLE and exe is None:
        raise SolverNotAvailableError(
            "no `ipopt` executable on PATH or in idaes-pse's bin folder; use ipopt='auto' "
            "(CasADi's IPOPT) or install one (idaes get-extensions)"
        )
    factory: InnerFactory
    if exe is not None:
        factory = PyomoInner("ipopt", exe, f"executable {exe}")
    elif choice is IpoptChoice.MCPKIT_IPOPT:
        factory = PyomoInner("mcpkit_ipopt", None, "mcpkit_ipopt (CasADi's IPOPT as a Pyomo solver)")
    else:
        factory = CasadiInner("casadi")
    return factory, factory.description


#: ``lift_pairs="auto"`` lifts a problem with a pair whose product couples at least this many
#: pairs of variables (one side a single variable, the other a row of a dense 50-column matrix).
LIFT_MIN_COUPLING = 50


def lifts(problem: MPCC, mode: PairLifting | str | bool) -> bool:
    """Whether the option ``lift_pairs`` (``mode``) lifts ``problem``'s pair functions into
    variables of their own (:class:`~mcpkit.lowering.lift_pairs.LiftPairs`): ``"auto"`` when
    :meth:`~mcpkit.problems.mpcc.MPCC.pair_coupling` reaches :data:`LIFT_MIN_COUPLING` somewhere."""
    mode = PairLifting.parse(mode)
    if mode is PairLifting.NEVER or not problem.n_pairs:
        return False
    return mode is PairLifting.ALWAYS or bool(problem.pair_coupling().max() >= LIFT_MIN_COUPLING)


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
    #: :attr:`standard` with its pair functions lifted (:class:`~mcpkit.lowering.lift_pairs.LiftPairs`;
    #: :attr:`standard` itself with ``lift_pairs=False``): what the homotopy and the refinement solve.
    lifted: MPCC
    #: The lifting's inverse data (``None``: not lifted).
    lift_map: LiftMap | None
    #: The lowerings from the user's problem to :attr:`target`, and their inverse data.
    chain: Chain
    inverse: list[Any]
    #: What the homotopy solves (:attr:`standard`, or its Pyomo/NL round trip on ``pyomo``).
    target: MPCC
    #: The homotopy (reformulation, fallbacks, second opinion, inner IPOPT).
    homotopy: Any
    #: Which IPOPT solves the subproblems (``"casadi"`` or the ``ipopt=`` choice made).
    ipopt_used: str
    #: The homotopy's fallbacks and second opinion (:func:`recovery_plan`).
    recovery: Recovery
    #: The user's problem.
    problem: MPCC

    def assessor(self, tol: float, lifted: bool = False) -> PointAssessor:
        """The :class:`~mcpkit.homotopy.loop.PointAssessor` of :attr:`target`'s points (``lifted``:
        of :attr:`lifted`'s, the refinement's) on the user's problem, through the chain's inverse."""
        if not lifted:
            return PointAssessor(self.problem, self.target, self.chain, self.inverse, tol)
        k = 1 + (self.lift_map is not None)  # the standard form, then the lifting
        to_lifted = Chain(self.chain.lowerings[:k])
        return PointAssessor(self.problem, self.lifted, to_lifted, self.inverse[:k], tol)

    def lift(self, x: np.ndarray, p: np.ndarray) -> np.ndarray:
        """A point ``x`` of the user's problem in :attr:`lifted`'s variables (the standard form's
        slacks and the lifted pair sides appended, at their values at ``x``)."""
        xs = ToStandardMPCC.lift(self.problem, x, p)
        return xs if self.lift_map is None else LiftPairs.lift_with(self.standard, self.lift_map, xs, p)


#: No second opinion above this many variables. It runs a whole second homotopy, as long as the
#: first: on small MPCCs that costs milliseconds and found lower objectives (MPECLib's ``find*``
#: fits, at most 300 variables); on large optimal-control MPCCs (NOSBENCH's 350-5,000 variables)
#: it doubled the solve time (MFTOPT_001_027, 1,410 variables: homotopy 5.0 s, second opinion
#: another 5.0 s; CPWF_001_030, 934 variables: 17.5 s -> 39 s in all).
SECOND_OPINION_MAX_VARS = 500


@dataclass(frozen=True)
class Recovery:
    """What a homotopy runs besides its own reformulation (:func:`recovery_plan`)."""

    #: Reformulations run in turn after a failed run.
    fallbacks: tuple[str, ...]
    #: The reformulation run once after a converged run (``None``: no second opinion).
    second_opinion: str | None
    #: Why the route's second opinion does not run (``""`` when it runs or none was asked for).
    skipped: str = ""


def recovery_plan(
    method: str,
    n_vars: int,
    options: SolveOptions,
    second_opinion: str | None = None,
    constant_objective: bool = False,
) -> Recovery:
    """The fallbacks and the second opinion of a homotopy for ``method`` on ``n_vars`` variables.

    Fallbacks (run in turn after a failed run; :class:`~mcpkit.homotopy.recovery.RecoveringHomotopy`):
    ``options.fallback_methods`` without ``method`` itself. Second opinion (run once after a
    converged run, kept only if its objective is lower): the route's ``second_opinion`` when it
    differs from ``method``, unless the MPCC has more than :data:`SECOND_OPINION_MAX_VARS`
    variables or its objective is constant in :math:`x` (a feasibility problem: every feasible
    point has the same objective, so no second point can be better).
    """
    fallbacks = tuple(m for m in options.fallback_methods if m != method)
    if second_opinion in (None, method):
        return Recovery(fallbacks, None)
    if n_vars > SECOND_OPINION_MAX_VARS:
        return Recovery(fallbacks, None, f"no second opinion above {SECOND_OPINION_MAX_VARS} variables")
    if constant_objective:
        return Recovery(fallbacks, None, "no second opinion: the objective is constant in x")
    return Recovery(fallbacks, second_opinion)


def plan_mpcc(problem: MPCC, method: Any, backend: Any, options: Any, ipopt: str = "auto") -> MPCCPlan:
    r"""The one place an MPCC's solve is planned: route, lowering chain and homotopy.

    1. ``resolve("mpcc", method, backend)`` (typed errors before any lowering);
    2. the one lowering to the standard form (:class:`~mcpkit.lowering.standard.ToStandardMPCC`);
       for ``method="auto"`` the route is resolved again with ``lpec=`` when :math:`f, g, G, H`
       are affine (an LPEC gets ``fb`` first, ``scholtes`` as second opinion); then (option
       ``lift_pairs``; by default when a pair function is dense) the pair functions lifted into
       variables of their own (:class:`~mcpkit.lowering.lift_pairs.LiftPairs`);
    3. on ``backend="pyomo"`` the standard form on through Pyomo's NL writer
       (:class:`~mcpkit.lowering.pyomo_nl.ThroughPyomoNL`);
    4. the homotopy on the target (:func:`~mcpkit.homotopy.recovery.make_homotopy`), its inner IPOPT
       from :func:`inner_solver`, its fallbacks and second opinion from :func:`recovery_plan`.
    """
    route = resolve("mpcc", method, backend)
    ipopt = IpoptChoice.parse(ipopt)
    if route.backend != "pyomo" and ipopt is not IpoptChoice.AUTO:
        raise MCPInputError("ipopt= chooses the IPOPT of backend='pyomo'; the CasADi backend has one")
    standard, pair_map = ToStandardMPCC().apply(problem)
    if route.note:  # "auto": an LPEC gets its own choice
        lpec = standard.is_lpec()
        route = resolve("mpcc", method, backend, lpec=lpec)
    steps: list[Lowering] = [ToStandardMPCC()]
    inverse: list[Any] = [pair_map]
    lifted, lift_map = standard, None
    if lifts(standard, options.lift_pairs):
        lifted, lift_map = LiftPairs().apply(standard)
        steps.append(LiftPairs())
        inverse.append(lift_map)
    target = lifted
    inner, ipopt_used = inner_solver(route, ipopt)
    if route.backend == "pyomo":
        from mcpkit.lowering.pyomo_nl import ThroughPyomoNL

        target, nl_inverse = ThroughPyomoNL().apply(lifted)
        steps.append(ThroughPyomoNL())
        inverse.append(nl_inverse)
    constant = not ca.depends_on(target.f, target.x)
    recovery = recovery_plan(route.method, target.x.numel(), options, route.second_opinion, constant)
    homotopy = make_homotopy(
        target, route.method, options, inner=inner, second_opinion=recovery.second_opinion,
        fallbacks=recovery.fallbacks,
    )  # fmt: skip
    return MPCCPlan(
        route, standard, lifted, lift_map, Chain(steps), inverse, target, homotopy, ipopt_used, recovery,
        problem,
    )  # fmt: skip
