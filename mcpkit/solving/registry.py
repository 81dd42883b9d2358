r"""The registry of solve methods and backends: what exists, and no decisions.

Every way mcpkit can solve a problem is one registry line (in the spirit of cvxpy's reductions
and MathOptInterface's bridges):

* a **method** (:class:`MethodEntry`): a reformulation of the complementarity pairs into smooth
  NLPs driven by the one homotopy of :mod:`mcpkit.homotopy.loop` (``scholtes``, ``fb`` ...),
  or an engine that solves the MCP directly (``path``). It states which problem kinds it accepts
  (``"mcp"``, ``"mpcc"``), on which backends it runs, and where its code lives
  (``"module:attribute"``, imported on first use and kept: :attr:`MethodEntry.implementation`);
* a **backend** (:class:`BackendEntry`): the modelling layer that builds the functions the
  solver evaluates (CasADi from the declaration, Pyomo through its NL writer, GAMSPy), with an
  ``available()`` check.

This module holds the tables (:data:`METHODS`, :data:`BACKENDS`), their registration, the
availability checks, :func:`reformulations`, :func:`reformulation_entry`, :func:`describe` (for
``mcpkit info``) and the did-you-mean error of an unknown name (:func:`unknown_name`). It
chooses nothing: every choice (``"auto"`` method and backend, the PATH probe, the MCP fallback
chain, the MPCC second opinion) is :mod:`mcpkit.orchestration.planner`'s
(:func:`mcpkit.orchestration.planner.resolve`), which reads these tables. A plain solve runs no code of
this module, it only reads its tables.
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
from functools import cached_property
from typing import Any

from mcpkit.errors import MCPInputError, UnknownOptionError

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

    @cached_property
    def implementation(self) -> Any:
        """What ``target`` names, imported on first use and kept on this entry (a replaced entry,
        ``dataclasses.replace(entry, ...)``, imports afresh)."""
        return _load(self.target)

    def load(self) -> Any:
        """Import and return ``target`` (:attr:`implementation`)."""
        return self.implementation

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

    @cached_property
    def mcp_route_class(self) -> Any:
        """What :attr:`mcp_route` names (the route class of a reformulation on an MCP), imported
        on first use and kept on this entry."""
        if not self.mcp_route:
            raise MCPInputError(f"backend {self.name!r} runs no reformulation on MCPs")
        return _load(self.mcp_route)

    def load_mcp_route(self) -> Any:
        """Import and return :attr:`mcp_route` (:attr:`mcp_route_class`)."""
        return self.mcp_route_class


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
    mcp_route="mcpkit.orchestration.casadi_route:CasadiRoute",
))  # fmt: skip
register_backend(BackendEntry(
    "pyomo",
    "A Pyomo model of the problem (functions evaluated from the Pyomo model through its NL "
    "writer); subproblems solved by an ``ipopt`` executable when one is found, else by "
    "CasADi's IPOPT; PATH through Pyomo's ``path`` solver (``pathampl``).",
    MCP_AND_MPCC,
    _pyomo,
    mcp_route="mcpkit.orchestration.pyomo_route:PyomoRoute",
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


def reformulation_entry(name: str) -> MethodEntry:
    """The registry entry of a reformulation name (the did-you-mean error for any other name); the
    homotopy builds the object (:func:`mcpkit.homotopy.reformulation.reformulation_for`)."""
    entry = METHODS.get(name)
    if entry is None or entry.kind != "reformulation":
        unknown_name("reformulation", name, reformulations())
    return entry


# --------------------------------------------------------------------------------------------
# names: the did-you-mean error, loading a target
# --------------------------------------------------------------------------------------------


def unknown_name(what: str, value: Any, valid: Any) -> Any:
    """Raise :class:`~mcpkit.errors.UnknownOptionError` for ``value``, listing the ``valid`` names.

    The message names ``what`` was asked for, every registered name and the closest one
    (``"unknown method 'scholtez'; registered: [...]. Did you mean 'scholtes'?"``).
    """
    names = [str(v) for v in valid]
    hint = difflib.get_close_matches(str(value), names, n=1)
    extra = f" Did you mean {hint[0]!r}?" if hint else ""
    raise UnknownOptionError(f"unknown {what} {value!r}; registered: {names}.{extra}")


def _load(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


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
