r"""The registry of solve methods and backends: one place that says what runs where.

Every way mcpkit can solve a problem is one registry line (in the spirit of cvxpy's reductions
and MathOptInterface's bridges):

* a **method** (:class:`MethodEntry`): a reformulation of the complementarity pairs into smooth
  NLPs driven by the one homotopy of :mod:`mcpkit.homotopy.loop` (``scholtes``, ``fb`` ...),
  or an engine that solves the MCP directly (``path``). It states which problem kinds it accepts
  (``"mcp"``, ``"mpcc"``), on which backends it runs, and where its code lives
  (``"module:attribute"``, imported only when used);
* a **backend** (:class:`BackendEntry`): the modelling layer that builds the functions the
  solver evaluates (CasADi from the declaration, Pyomo through its NL writer, GAMSPy), with an
  ``available()`` check.

:func:`resolve` turns a user's ``(problem kind, method, backend)`` into a :class:`Route`,
resolving ``"auto"`` and refusing what is not registered with
:class:`~mcpkit.errors.UnknownOptionError` (listing what is) or a combination that does not
exist with :class:`~mcpkit.errors.MCPInputError` (saying which backends run the method).
:class:`~mcpkit.solving.options.Method`, :class:`~mcpkit.solving.options.Backend`, the CLI help and
``mcpkit info`` are all derived from this registry. Adding a reformulation is one new file
under :mod:`mcpkit.homotopy` (or :mod:`mcpkit.engines`) plus one :func:`register_method` line here (see
``docs/contributing.md``).
"""

from __future__ import annotations

import difflib
import enum
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcpkit.errors import MCPInputError, SolverNotAvailableError, UnknownOptionError

#: Problem kinds the registry knows.
PROBLEM_KINDS: tuple[str, ...] = ("mcp", "mpcc")


class Availability(enum.IntEnum):
    """Whether a registered method or backend can run on this machine now (true when it can).

    As in Pyomo's ``contrib.solver`` ``Availability``, the value is positive exactly when the
    entry is usable; the accompanying reason string says why not, or what the limits are.
    """

    AVAILABLE = 2
    """Installed and usable without limits."""
    LIMITED = 1
    """Usable with limits (for example a size-limited demo licence); small problems only."""
    NOT_FOUND = -1
    """Not installed; the reason says how to get it."""
    BAD_LICENSE = -2
    """Installed, but its licence is expired or refuses to run."""
    BAD_VERSION = -3
    """Installed, but a version mcpkit cannot use."""

    def __bool__(self) -> bool:
        return self.value > 0


Check = Callable[[], tuple[Availability, str]]
"""``() -> (availability, reason)``; run at call time, never cached across processes."""


def _always() -> tuple[Availability, str]:
    return Availability.AVAILABLE, "pure Python in mcpkit"


@dataclass(frozen=True)
class MethodEntry:
    """One registered method."""

    name: str
    """The name users pass as ``method=`` (lower case)."""
    doc: str
    """One paragraph: the mathematics of the method (used for ``Method`` and ``mcpkit info``)."""
    problems: frozenset[str]
    """Problem kinds it accepts (subset of :data:`PROBLEM_KINDS`)."""
    backends: tuple[str, ...]
    """Backends it runs on; the first is used for ``backend="auto"``."""
    target: str
    """``"module:attribute"`` of its implementation (a :class:`~mcpkit.homotopy.reformulation.Reformulation`
    subclass for a reformulation, a route class for an engine)."""
    kind: str = "reformulation"
    """``"reformulation"`` (driven by the homotopy) or ``"engine"`` (solves the MCP itself)."""
    kwargs: dict[str, Any] = field(default_factory=dict)
    """Keyword arguments for ``target`` (e.g. ``{"equality": True}``)."""
    enum_name: str = ""
    """Name of the :class:`~mcpkit.solving.options.Method` member (default: ``name.upper()``)."""
    check: Check = _always
    """Availability of the method itself (beyond its backend)."""

    def load(self) -> Any:
        """Import and return ``target``."""
        return _load(self.target)

    def build(self) -> Any:
        """An instance of ``target`` with :attr:`kwargs` (the reformulation object)."""
        return self.load()(**self.kwargs)

    def available(self) -> Availability:
        """:class:`Availability` of the method (see :attr:`check`)."""
        return self.check()[0]


@dataclass(frozen=True)
class BackendEntry:
    """One registered backend."""

    name: str
    """The name users pass as ``backend=``."""
    doc: str
    """One paragraph: what builds the functions and which solver runs."""
    problems: frozenset[str]
    """Problem kinds it can lower."""
    check: Check = _always
    """Availability of the backend."""
    enum_name: str = ""
    """Name of the :class:`~mcpkit.solving.options.Backend` member (default: ``name.upper()``)."""
    mcp_route: str = ""
    """``"module:attribute"`` of the route class that runs a reformulation on an MCP here
    (``cls(problem, method, options)``, plus ``ipopt=`` on ``pyomo``); empty when the backend
    only hosts engines."""

    def available(self) -> Availability:
        """:class:`Availability` of the backend (see :attr:`check`)."""
        return self.check()[0]

    def load_mcp_route(self) -> Any:
        """Import and return :attr:`mcp_route` (the route class of a reformulation on an MCP)."""
        if not self.mcp_route:
            raise MCPInputError(f"backend {self.name!r} runs no reformulation on MCPs")
        return _load(self.mcp_route)


METHODS: dict[str, MethodEntry] = {}
"""Registered methods by name, in registration order."""
BACKENDS: dict[str, BackendEntry] = {}
"""Registered backends by name, in registration order."""


def register_method(entry: MethodEntry) -> MethodEntry:
    """Add a method (its name must be new and its backends registered)."""
    if entry.name in METHODS or entry.name == "auto":
        raise MCPInputError(f"method {entry.name!r} is already registered")
    unknown = [b for b in entry.backends if b not in BACKENDS]
    if unknown or not entry.backends:
        raise MCPInputError(
            f"method {entry.name!r}: unknown backends {unknown}; registered: {list(BACKENDS)}"
        )
    if not entry.problems or not entry.problems <= set(PROBLEM_KINDS):
        raise MCPInputError(f"method {entry.name!r}: problems must be a non-empty subset of {PROBLEM_KINDS}")
    METHODS[entry.name] = entry
    return entry


def register_backend(entry: BackendEntry) -> BackendEntry:
    """Add a backend (its name must be new)."""
    if entry.name in BACKENDS or entry.name == "auto":
        raise MCPInputError(f"backend {entry.name!r} is already registered")
    BACKENDS[entry.name] = entry
    return entry


# --------------------------------------------------------------------------------------------
# availability checks (no downloads, nothing cached across processes)
# --------------------------------------------------------------------------------------------


def _casadi_ipopt() -> tuple[Availability, str]:
    try:
        import casadi as ca
    except ImportError:  # pragma: no cover - a core dependency
        return Availability.NOT_FOUND, "casadi not installed (pip install casadi)"
    if not ca.has_nlpsol("ipopt"):  # pragma: no cover - the wheel bundles it
        return Availability.NOT_FOUND, "this casadi build lacks its IPOPT plugin"
    return Availability.AVAILABLE, f"casadi {ca.__version__} with its bundled IPOPT"


def _pyomo() -> tuple[Availability, str]:
    try:
        import pyomo.version
    except ImportError:  # pragma: no cover - a core dependency
        return Availability.NOT_FOUND, "pyomo not installed (pip install pyomo)"
    from mcpkit.solving.availability import ipopt_executable

    exe = ipopt_executable()
    how = f"IPOPT executable {exe}" if exe else "no ipopt executable; CasADi's IPOPT through the NL writer"
    return Availability.AVAILABLE, f"pyomo {pyomo.version.version_info[:3]}; {how}"


def _path() -> tuple[Availability, str]:
    from mcpkit.solving.availability import PATH_HOWTO, path_status

    ok, where = path_status()
    return (Availability.AVAILABLE, where) if ok else (Availability.NOT_FOUND, f"{where}. {PATH_HOWTO}")


def _gamspy() -> tuple[Availability, str]:
    from mcpkit.solving.availability import gamspy_status

    ok, where = gamspy_status()
    return (Availability.LIMITED, where) if ok else (Availability.NOT_FOUND, where)


# --------------------------------------------------------------------------------------------
# the registered backends and methods
# --------------------------------------------------------------------------------------------

MCP_AND_MPCC = frozenset({"mcp", "mpcc"})

register_backend(BackendEntry(
    "casadi",
    "CasADi SX/MX expressions of the declaration, solved in process (CasADi's bundled IPOPT).",
    MCP_AND_MPCC,
    _casadi_ipopt,
    mcp_route="mcpkit.solving.casadi_route:CasadiRoute",
))  # fmt: skip
register_backend(BackendEntry(
    "pyomo",
    "A Pyomo model of the problem (functions evaluated from the Pyomo model through its NL "
    "writer); subproblems solved by an ``ipopt`` executable when one is found, else by "
    "CasADi's IPOPT; PATH through Pyomo's ``path`` solver (``pathampl``).",
    MCP_AND_MPCC,
    _pyomo,
    mcp_route="mcpkit.solving.pyomo_route:PyomoRoute",
))  # fmt: skip
register_backend(BackendEntry(
    "gamspy",
    "GAMSPy's bundled PATH (method ``path`` only; ``pip install gamspy``, demo licence).",
    frozenset({"mcp"}),
    _gamspy,
))  # fmt: skip

_IPOPT_BACKENDS = ("casadi", "pyomo")

register_method(MethodEntry(
    "scholtes",
    r"Scholtes relaxation :math:`G_j H_j \le \sigma`, :math:`\sigma \to 0`, solved with IPOPT, "
    "followed by an active-set polish.",
    MCP_AND_MPCC, _IPOPT_BACKENDS, "mcpkit.homotopy.scholtes:Scholtes",
))  # fmt: skip
register_method(MethodEntry(
    "scholtes_eq",
    r"Scholtes relaxation in equality form :math:`G_j H_j = \sigma` (keeps iterates off the "
    r"corner :math:`G = H = 0`), same homotopy and polish.",
    MCP_AND_MPCC, _IPOPT_BACKENDS, "mcpkit.homotopy.scholtes:Scholtes", kwargs={"equality": True},
))  # fmt: skip
register_method(MethodEntry(
    "fb",
    r"Smoothed Fischer-Burmeister equations "
    r":math:`G_j + H_j - \sqrt{G_j^2 + H_j^2 + 2\varepsilon^2} = 0`, :math:`\varepsilon \to 0`, "
    "solved with IPOPT, followed by the same polish.",
    MCP_AND_MPCC, _IPOPT_BACKENDS, "mcpkit.homotopy.fischer_burmeister:FischerBurmeister",
    enum_name="FISCHER_BURMEISTER",
))  # fmt: skip
register_method(MethodEntry(
    "penalty",
    r"Penalty mode: minimise :math:`f + \rho \sum_j G_j H_j` subject to :math:`G, H \ge 0`, "
    r"increasing :math:`\rho`, then polish.",
    MCP_AND_MPCC, _IPOPT_BACKENDS, "mcpkit.homotopy.penalty:Penalty",
))  # fmt: skip
register_method(MethodEntry(
    "elastic",
    r"Elastic :math:`\ell_1` mode: minimise :math:`f + \rho(\sum_i s_i + \sum_j G_j H_j)` with "
    r"the constraints relaxed to :math:`g_l - s \le g \le g_u + s`, :math:`s \ge 0` (every "
    r"subproblem feasible), increasing :math:`\rho`, then polish.",
    MCP_AND_MPCC, _IPOPT_BACKENDS, "mcpkit.homotopy.elastic:Elastic",
))  # fmt: skip
register_method(MethodEntry(
    "kanzow_schwartz",
    r"Kanzow-Schwartz relaxation :math:`\varphi(G_j, H_j; t) \le 0` (the complementarity 'L' "
    r"shifted by :math:`t` into the positive quadrant), :math:`t \to 0`, solved with IPOPT, "
    "then polish. Limit points are M-stationary under MPCC-GCQ.",
    MCP_AND_MPCC, _IPOPT_BACKENDS, "mcpkit.homotopy.kanzow_schwartz:KanzowSchwartz",
))  # fmt: skip
register_method(MethodEntry(
    "path",
    "The PATH solver (a stabilised Newton method on the normal map), via Pyomo's ``path`` "
    "solver (``pathampl``) or GAMSPy.",
    frozenset({"mcp"}), ("pyomo", "gamspy"), "mcpkit.engines.path:PathRoute", kind="engine",
    check=_path,
))  # fmt: skip
register_method(MethodEntry(
    "newton",
    r"Semismooth Newton on the box Fischer-Burmeister equations :math:`\Phi(z) = 0` "
    r"(generalised Jacobian :math:`D_a + D_b J_F`), with a crash phase, proximal perturbation, "
    r"steepest-descent fallback and a non-monotone Armijo search on :math:`\tfrac12\|\Phi\|^2`; "
    "dense LAPACK or sparse SuperLU on CasADi's Jacobian. No licence needed.",
    frozenset({"mcp"}), ("casadi", "pyomo"), "mcpkit.engines.newton:NewtonRoute", kind="engine",
))  # fmt: skip
register_method(MethodEntry(
    "lemke",
    r"Lemke's complementary pivoting method with the lexicographic ratio test, for MCPs whose "
    r":math:`F = Mz + q(p)` is affine (box LCPs): exact and finite; a secondary ray is reported "
    "not solved, with an infeasibility certificate when one is verified.",
    frozenset({"mcp"}), ("casadi", "pyomo"), "mcpkit.engines.lemke:LemkeRoute", kind="engine",
))  # fmt: skip


def reformulations() -> tuple[str, ...]:
    """Names of the registered homotopy reformulations."""
    return tuple(n for n, e in METHODS.items() if e.kind == "reformulation")


def reformulation_for(name: str) -> Any:
    """A new reformulation object for a registered reformulation name."""
    entry = METHODS.get(name)
    if entry is None or entry.kind != "reformulation":
        _unknown("reformulation", name, reformulations())
    return entry.build()


# --------------------------------------------------------------------------------------------
# resolving a user's choice
# --------------------------------------------------------------------------------------------


def _unknown(what: str, value: Any, valid: Any) -> Any:
    names = [str(v) for v in valid]
    hint = difflib.get_close_matches(str(value), names, n=1)
    extra = f" Did you mean {hint[0]!r}?" if hint else ""
    raise UnknownOptionError(f"unknown {what} {value!r}; registered: {names}.{extra}")


def _name(value: Any, what: str, table: dict[str, Any]) -> str:
    name = str(getattr(value, "value", value)).lower()
    if name != "auto" and name not in table:
        _unknown(what, value, ["auto", *table])
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
    MCPs only; see :mod:`mcpkit.solving.planner`)."""
    second_opinion: str | None = None
    """MPCCs: the reformulation run after this one converged, whose point is kept when its
    objective is lower (``method="auto"`` on LPECs; see
    :class:`~mcpkit.homotopy.loop.RecoveringHomotopy`)."""

    @property
    def entry(self) -> MethodEntry:
        """The method's registry entry."""
        return METHODS[self.method]

    @property
    def is_reformulation(self) -> bool:
        """The method is a homotopy reformulation (else an engine)."""
        return self.entry.kind == "reformulation"



#: What ``method="auto"`` tries after its first choice for an MCP (see :mod:`mcpkit.solving.planner`).
AUTO_MCP_FALLBACKS: tuple[str, ...] = ("newton", "lemke", "scholtes")

#: ``method="auto"`` for an MPCC: the reformulation run first and the one asked for a second
#: opinion (a run from the same start whose point is kept only when it meets the tolerance with
#: a lower objective, :class:`~mcpkit.homotopy.loop.RecoveringHomotopy`). Scholtes's
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
    (:class:`~mcpkit.solving.planner.FallbackRoute`). :func:`forget_path_probe` makes the next
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
    point fails the check (:mod:`mcpkit.solving.planner`). For an MPCC,
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
        _unknown("problem kind", kind, PROBLEM_KINDS)
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


def _load(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def require_available(route: Route) -> None:
    """Raise :class:`~mcpkit.errors.SolverNotAvailableError` (with the how-to) if ``route`` cannot run."""
    for what, check in (("method", METHODS[route.method].check), ("backend", BACKENDS[route.backend].check)):
        status, reason = check()
        if not status:
            raise SolverNotAvailableError(f"{what} {getattr(route, what)!r} is not available: {reason}")


def describe() -> list[dict[str, Any]]:
    """Every registered method and backend with its availability (for ``mcpkit info``)."""
    rows: list[dict[str, Any]] = []
    for b in BACKENDS.values():
        status, reason = b.check()
        rows.append({"kind": "backend", "name": b.name, "available": bool(status),
                     "availability": status.name, "problems": sorted(b.problems), "detail": reason,
                     "doc": b.doc})  # fmt: skip
    for m in METHODS.values():
        status, reason = m.check()
        rows.append({"kind": m.kind, "name": m.name, "available": bool(status),
                     "availability": status.name, "problems": sorted(m.problems),
                     "backends": list(m.backends), "detail": reason, "doc": m.doc})  # fmt: skip
    return rows
