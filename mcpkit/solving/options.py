r"""Solver options: which route to take and how to stop; and the budget of one call.

All options are plain dataclasses and enums so they can be inspected, documented and
validated before any solver runs. Unknown option names raise
:class:`~mcpkit.errors.UnknownOptionError` with the list of valid names.

Options hold what a solver *is*; no solve changes them. What one call may spend travels down
the call chain as an argument, a :class:`Budget`: the call's time limit :math:`T` and its start
:math:`t_0` (:func:`time.perf_counter`), so its deadline is :math:`t_0 + T` and at time
:math:`t` what is left is :math:`T - (t - t_0)`. The :class:`~mcpkit.Solver` makes one per call
(its ``time_limit`` or the options') and hands it to the route's ``solve``; a chain of methods
hands each attempt the same budget, so every attempt ends by the call's deadline.
"""

from __future__ import annotations

import difflib
import enum
import math
import numbers
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from mcpkit.errors import MCPInputError, UnknownOptionError
from mcpkit.solving import registry
from mcpkit.solving.progress import AMBIENT, reporters

if TYPE_CHECKING:
    from mcpkit.solving.result import HomotopyStep


E = TypeVar("E", bound=enum.Enum)


def parse_choice(cls: type[E], value: Any, what: str | None = None) -> E:
    """The member of ``cls`` whose value is ``value`` (a member, or its value in any case, blanks
    around it ignored), or :class:`~mcpkit.errors.UnknownOptionError` listing the valid values
    with a :func:`did_you_mean` hint; ``what`` names the option in the message (default: the
    class's :meth:`Choice.option_name`)."""
    if isinstance(value, cls):
        return value
    key = str(getattr(value, "value", value)).strip().lower()
    for member in cls:
        if str(member.value).lower() == key:
            return member
    valid = [str(m.value) for m in cls]
    name = what or (cls.option_name() if issubclass(cls, Choice) else cls.__name__)
    raise UnknownOptionError(f"unknown {name} {value!r}; valid: {valid}.{did_you_mean(key, valid)}")


class Choice(enum.Enum):
    """Base of every option enum of mcpkit and its models: :meth:`parse` takes a member or its
    value (any case) and refuses anything else with the valid values and a suggestion.

    Subclass with the values users type as the members' values (``class WarmStart(str, Choice)``
    for string members); :meth:`option_name` names the option in error messages, the class name
    in snake case unless the class statement names it (``class DriftLoad(str, Choice,
    option="load")``).
    """

    def __init_subclass__(cls, option: str | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if option is not None:
            cls._option = option

    @classmethod
    def option_name(cls) -> str:
        """The option's name in messages: the ``option=`` of the class statement, else the class
        name in snake case (``WarmStart`` -> ``warm_start``, ``FCLIBFormulation`` ->
        ``fclib_formulation``)."""
        named = cls.__dict__.get("_option")
        if named is not None:
            return str(named)
        return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", cls.__name__).lower()

    @classmethod
    def parse(cls: type[E], value: Any) -> E:
        """:func:`parse_choice`."""
        return parse_choice(cls, value)


class WarmStart(str, Choice):
    """Which IPOPT settings the warm-started subproblems of a homotopy use (the settings of each:
    :data:`mcpkit.homotopy.ipopt.WARM_START_PROFILES`)."""

    STANDARD = "standard"
    """The previous point and multipliers, :math:`\\mu_0 = 10^{-5}` and IPOPT's monotone
    (Fiacco-McCormick) barrier update: the default. Its path, and so its local solution, is the
    one every earlier release followed."""
    ADAPTIVE = "adaptive"
    """The previous point and multipliers, :math:`\\mu_0 = 10^{-4}`, and IPOPT's adaptive
    barrier update (``mu_strategy=adaptive``, ``mu_oracle=quality-function``). It changes the
    path: on the large NOSBENCH dev files it solved some problems the standard profile did not
    solve in time and ended at lower objectives on others, but it lost problems and ended at
    higher objectives elsewhere (``docs/mpcc_engine.md``). Opt in, and compare."""
    BEST_OF_TWO = "best_of_two"
    """MPCC solves: the standard profile in this process and the adaptive one in a forked child
    process on another core, from the same start within the same time limit; the better point is
    kept (:mod:`mcpkit.orchestration.second_start`). Needs ``fork`` and two cores, else the standard
    profile alone. This process's IPOPT settings are the standard ones."""


class PairLifting(str, Choice, option="lift_pairs"):
    """When :class:`~mcpkit.lowering.lift_pairs.LiftPairs` gives the pair functions of an MPCC
    variables of their own (the option ``lift_pairs``; decided by
    :func:`mcpkit.orchestration.planner.lifts`)."""

    AUTO = "auto"
    """Lift a problem with a pair whose product couples at least
    :data:`~mcpkit.orchestration.planner.LIFT_MIN_COUPLING` pairs of variables
    (:meth:`~mcpkit.problems.mpcc.MPCC.pair_coupling`); solve other problems as written."""
    ALWAYS = "always"
    """Lift every problem with pairs."""
    NEVER = "never"
    """Solve every problem as written."""

    @classmethod
    def parse(cls, value: Any) -> PairLifting:
        """A member from its name or a bool (``True``: always, ``False``: never)."""
        if isinstance(value, bool):
            return cls.ALWAYS if value else cls.NEVER
        return super().parse(value)


class IpoptChoice(str, Choice, option="ipopt"):
    """Which IPOPT solves the homotopy's subproblems on backend ``pyomo`` (the argument
    ``ipopt=``; the factories: :func:`mcpkit.orchestration.planner.select_inner`)."""

    AUTO = "auto"
    """An ``ipopt`` executable when :func:`~mcpkit.solving.availability.ipopt_executable` finds
    one, else CasADi's bundled IPOPT (``nlpsol``)."""
    EXECUTABLE = "executable"
    """The ``ipopt`` executable, or :class:`~mcpkit.errors.SolverNotAvailableError`."""
    CASADI = "casadi"
    """CasADi's bundled IPOPT (``nlpsol``) on the subproblem's graph, no files."""
    MCPKIT_IPOPT = "mcpkit_ipopt"
    """CasADi's IPOPT as a Pyomo solver (the executable's code path, in process)."""


class _Choice(str, Choice):
    """A choice whose members come from :mod:`mcpkit.solving.registry` (plus ``AUTO``)."""


def _choice_enum(name: str, doc: str, auto_doc: str, entries: dict[str, Any]) -> Any:
    members = {"AUTO": "auto"} | {(e.enum_name or e.name.upper()): e.name for e in entries.values()}
    cls = _Choice(name, members, module=__name__)  # type: ignore[call-overload]
    cls.__doc__ = doc
    docs = {"auto": auto_doc} | {e.name: e.doc for e in entries.values()}
    for member in cls:
        member.__doc__ = docs[member.value]
    return cls


Method = _choice_enum(
    "Method",
    "How the complementarity conditions are handled; one member per method of "
    ":data:`mcpkit.solving.registry.METHODS` (each member's docstring is its registry entry's).",
    "PATH when available, otherwise the Scholtes homotopy on IPOPT. The result's ``message`` "
    "says which was picked.",
    registry.METHODS,
)

Backend = _choice_enum(
    "Backend",
    "Which modelling layer builds the functions the solver evaluates; one member per backend "
    "of :data:`mcpkit.solving.registry.BACKENDS`.",
    "The method's first registered backend (CasADi for the IPOPT reformulations).",
    registry.BACKENDS,
)

#: Names of the IPOPT reformulations (each one file in :mod:`mcpkit.homotopy`, one registry line).
REFORMULATIONS: tuple[str, ...] = registry.reformulations()

#: Default ``tol`` by problem kind: MCPs are judged on the natural residual, MPCCs on the
#: complementarity residual and constraint violation (the MPECLib/MacMPEC convention, 1e-6).
DEFAULT_TOL: dict[str, float] = {"mcp": 1e-8, "mpcc": 1e-6}


def time_limit_seconds(value: Any, name: str = "time_limit", *, zero_ok: bool = False) -> float | None:
    r"""A time limit :math:`S` as seconds: ``None`` or :math:`+\infty` is no limit (``None``),
    a real :math:`S > 0` (:math:`S \ge 0` with ``zero_ok``) is ``float(S)``.

    The one check of a time limit at the entry points that take one beside
    :class:`SolveOptions` (:meth:`MPCCSolver.solve <mcpkit.orchestration.mpcc_solver.MPCCSolver.solve>`,
    :func:`~mcpkit.sweep.solve_file.solve_path`, :func:`mcpkit.sweep.sweep`, the planners of
    :mod:`mcpkit.mpec`), so that each refuses the same values before anything is built.

    Raises
    ------
    MCPInputError
        A bool, a string or any other non-real value, NaN, :math:`-\infty`, or a number
        :math:`\le 0` (:math:`< 0` with ``zero_ok``); ``name`` is named in the message.
    """
    if value is None:
        return None
    bound = ">= 0" if zero_ok else "> 0"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        key = name.rsplit(" ", 1)[-1]  # "solve_mcp: time_limit" -> time_limit
        hint = f" (a string: write {key}={value}, not {key}={value!r})" if isinstance(value, str) else ""
        raise MCPInputError(
            f"{name} must be a number of seconds {bound} or None, got {type(value).__name__} {value!r}{hint}"
        )
    seconds = float(value)
    if not (seconds >= 0 if zero_ok else seconds > 0):  # also NaN
        raise MCPInputError(f"{name} must be a number of seconds {bound} or None, got {value!r}")
    return None if seconds == math.inf else seconds


#: The options that take a real number (``time_limit`` also None) and those that take a count.
_REAL_OPTIONS = (
    "tol", "time_limit", "sigma0", "sigma_factor", "sigma_min", "rho0", "rho_factor",
    "polish_trigger", "inner_tol_factor",
)  # fmt: skip
_COUNT_OPTIONS = ("max_outer", "max_inner_iter", "max_retries")
#: The options that take a count or None.
_OPTIONAL_COUNT_OPTIONS = ("primary_iterations", "first_step_iterations")


#: Option names of other solvers and libraries, by the name meant here (:func:`suggestion`).
SYNONYMS: dict[str, str] = {
    "tolerance": "tol",
    "convergence_tolerance": "tol",
    "timelimit": "time_limit",
    "max_time": "time_limit",
    "maxiter": "max_inner_iter",
    "max_iter": "max_inner_iter",
    "major_iteration_limit": "max_inner_iter",
    "output": "verbose",
    "tee": "verbose",
    "disp": "verbose",
}


def suggestion(name: str, valid: list[str] | tuple[str, ...]) -> str | None:
    """The valid name probably meant by ``name``: the closest spelling (:mod:`difflib`), else a
    valid name ``name`` starts with (``tolerance`` -> ``tol``), else its entry in :data:`SYNONYMS`;
    ``None`` when nothing fits. Every unknown-option error of mcpkit takes its hint from here."""
    close = difflib.get_close_matches(name, list(valid), n=1)
    if close:
        return close[0]
    low = name.lower()
    prefixes = [v for v in valid if len(v) >= 3 and low.startswith(v.lower())]
    if prefixes:
        return max(prefixes, key=len)
    meant = SYNONYMS.get(low)
    return meant if meant in valid else None


def did_you_mean(name: str, valid: list[str] | tuple[str, ...]) -> str:
    """`` Did you mean 'x'?`` for :func:`suggestion`, or an empty string."""
    hint = suggestion(name, valid)
    return f" Did you mean {hint!r}?" if hint else ""


@dataclass(frozen=True)
class SolveOptions:
    """Stopping rules and homotopy settings shared by every route.

    The outer test is always on the original pairs: ``natural_residual <= tol`` and
    ``bound_violation <= tol``. IPOPT's own tolerance is tied to it: every subproblem of the
    homotopy and the polish are solved to ``inner_tol_factor * tol`` (one IPOPT instance per
    reformulation is built once, so its ``tol`` does not follow the parameter).

    Types are checked, not coerced: a real option (``tol``, ``time_limit``, ``sigma0``, ...)
    takes an ``int`` or a ``float`` (NumPy scalars included), a count (``max_outer``, ...) an
    integer, a switch (``polish``, ``verbose``) a ``bool``. Anything else, including a numeric
    string such as ``tol="1e-6"``, raises :class:`~mcpkit.errors.MCPInputError` naming the option:
    strings are parsed where they are read (the command line, a file), never guessed here.
    """

    tol: float = 1e-8
    """Tolerance of the verdict on the user's problem: natural residual and bound violation
    (MCP), complementarity residual and constraint violation (MPCC). Solvers built without an
    explicit ``tol`` use :data:`DEFAULT_TOL` for their problem kind."""
    max_outer: int = 40
    """Maximum number of homotopy (outer) iterations."""
    time_limit: float | None = None
    """Wall-clock limit in seconds for the whole solve (None: no limit)."""
    sigma0: float = 1.0
    """Initial relaxation/smoothing parameter (Scholtes sigma, FB epsilon)."""
    sigma_factor: float = 0.1
    """Multiplicative update of the parameter per outer iteration (0 < factor < 1)."""
    sigma_min: float = 1e-14
    """Smallest parameter tried before the homotopy is declared stalled."""
    rho0: float = 1.0
    """Initial penalty weight (method ``penalty``)."""
    rho_factor: float = 10.0
    """Penalty weight growth per outer iteration (method ``penalty``)."""
    polish: bool = True
    """After a homotopy step, fix the identified active sets and re-solve (see the docs)."""
    polish_trigger: float = 1e-2
    """Try the polish once the natural residual falls below this value."""
    inner_tol_factor: float = 0.1
    """IPOPT's ``tol`` as a fraction of the outer tolerance (see the class docstring)."""
    max_inner_iter: int = 3000
    """IPOPT ``max_iter`` for each subproblem."""
    max_retries: int = 2
    """Recovery attempts after a failed subproblem before giving up."""
    fallback_methods: tuple[str, ...] = ("scholtes_eq", "fb", "penalty")
    """Reformulations tried in turn, from the original start, when the requested one fails
    (``()`` disables the recovery). Names: those of :data:`REFORMULATIONS`."""
    primary_iterations: int | None = 1280
    """With a ``time_limit`` and fallbacks, the IPOPT iterations the requested reformulation (and
    each fallback but the last) may take while it is not on track before the next one gets its
    turn, for an MPCC of 1,000 pairs and in proportion to ``1000 / pairs`` otherwise (an
    iteration's cost grows with the pair rows; :func:`~mcpkit.homotopy.recovery.iteration_budget`).
    A stalled homotopy then does not eat the whole limit, while one whose last subproblem was
    solved and lowered the residual goes on (:class:`~mcpkit.homotopy.recovery.RecoveringHomotopy`).
    Counted, not timed, so the choice does not depend on the machine or its load. ``None``: no
    budget (the primary may use the whole limit)."""
    first_step_iterations: int | None = 640
    """With a ``time_limit`` and fallbacks, the IPOPT iteration cap of the first subproblem of
    every reformulation but the last, for an MPCC of 1,000 pairs and in proportion to
    ``1000 / pairs`` otherwise: one stuck there yields to the next. MPECLib's ``tollmpec``
    (2,300 pairs, cap 278): Scholtes at sigma = 1 needs 826 iterations, the penalty form solves
    the problem in 67; ``aampec_2`` (69 pairs) solves after a first subproblem of 3,000. ``None``:
    no cap."""
    lift_pairs: bool | str = "auto"
    """MPCCs: give every side of a pair that is not a single variable a variable of its own
    (:class:`~mcpkit.lowering.lift_pairs.LiftPairs`), so that the pairs' sign conditions are
    bounds and the reformulated rows products of two variables; results are reported in the
    user's variables either way. ``"auto"``: when a pair function is dense
    (:class:`PairLifting`); ``"always"`` or ``True``; ``"never"`` or
    ``False``."""
    scale_warm_multipliers: bool = False
    r"""Warm-started subproblems of a homotopy whose pair rows are divided by the parameter
    (Scholtes, :math:`G_j H_j / \sigma - 1`): multiply the previous multipliers of those rows by
    :math:`\sigma_{\rm new} / \sigma_{\rm old}`, so that the multiplier of the product
    :math:`G_j H_j` carries over (unscaled, the warm start's dual infeasibility grows by
    :math:`1/\kappa` per decrease). Off by default; the horizon planners of :mod:`mcpkit.mpec`
    turn it on (:func:`mcpkit.mpec.horizon.with_horizon_ipopt_options`)."""
    ipopt_options: dict[str, Any] = field(default_factory=dict)
    """Extra IPOPT options by IPOPT name (``{"linear_solver": "mumps"}``); validated by IPOPT."""
    warm_start: WarmStart | str = WarmStart.STANDARD
    """IPOPT settings of the homotopy's warm-started subproblems (every one after the first,
    started from the previous point and multipliers): ``"standard"`` (default) or
    ``"adaptive"`` (IPOPT's adaptive barrier update; a different path, see
    :class:`~mcpkit.solving.options.WarmStart`). ``ipopt_options`` still win."""
    path_options: dict[str, Any] = field(default_factory=dict)
    """Extra PATH options by PATH name (``{"major_iteration_limit": 500}``)."""
    verbose: bool = False
    """Print each step on stdout as it is taken (a Newton iteration or a homotopy step with the
    residual on the original problem, :func:`mcpkit.solving.progress.step_line`) and the inner
    solver's own output (IPOPT's iterations, PATH's log)."""
    progress: bool | str | Callable[[HomotopyStep], None] | None = None
    """Live progress. ``True``: a ``tqdm`` line on stderr (``tqdm.auto``: a widget in notebooks)
    with the steps done, the last step's phase, residual and parameter, drawn only when stderr is
    a terminal or in a notebook, as the command line's live line (:mod:`mcpkit.solving.progress`);
    ``"always"``: drawn wherever stderr goes; ``None``/``False``: none. A callable is called with
    each :class:`~mcpkit.solving.result.HomotopyStep` as an engine records it (a Newton iteration
    of ``newton``, a homotopy step or polish of the IPOPT reformulations), for a display of one's
    own (``mcpkit solve`` draws its line this way); it must be cheap, and exceptions propagate."""

    def __post_init__(self) -> None:
        self._check_types()
        object.__setattr__(self, "warm_start", WarmStart.parse(self.warm_start))
        checks = [
            (self.tol > 0 and math.isfinite(self.tol), "tol must be a positive finite number"),
            (self.max_outer >= 1, "max_outer must be >= 1"),
            (self.time_limit is None or self.time_limit > 0, "time_limit must be > 0 or None"),
            (self.sigma0 > 0 and math.isfinite(self.sigma0), "sigma0 must be positive and finite"),
            (0 < self.sigma_factor < 1, "sigma_factor must lie in (0, 1)"),
            (0 < self.sigma_min < self.sigma0, "sigma_min must lie in (0, sigma0)"),
            (self.rho0 > 0 and self.rho_factor > 1, "rho0 must be > 0 and rho_factor > 1"),
            (self.polish_trigger > 0, "polish_trigger must be > 0"),
            (0 < self.inner_tol_factor <= 1, "inner_tol_factor must lie in (0, 1]"),
            (self.max_inner_iter >= 1, "max_inner_iter must be >= 1"),
            (self.max_retries >= 0, "max_retries must be >= 0"),
            (
                self.primary_iterations is None or self.primary_iterations >= 1,
                "primary_iterations must be >= 1 or None",
            ),
            (
                self.first_step_iterations is None or self.first_step_iterations >= 1,
                "first_step_iterations must be >= 1 or None",
            ),
        ]
        for ok, msg in checks:
            if not ok:
                raise MCPInputError(f"SolveOptions: {msg}")
        bad = [m for m in self.fallback_methods if m not in REFORMULATIONS]
        if bad or isinstance(self.fallback_methods, str):
            raise MCPInputError(
                f"SolveOptions.fallback_methods: unknown reformulations {bad or self.fallback_methods!r}; "
                f"valid: {', '.join(REFORMULATIONS)}"
            )
        for name in ("ipopt_options", "path_options"):
            if not isinstance(getattr(self, name), dict):
                raise MCPInputError(f"SolveOptions.{name} must be a dict of option names to values")

    def _check_types(self) -> None:
        """:class:`~mcpkit.errors.MCPInputError` for an option of the wrong type (class docstring)."""

        def bad(name: str, want: str) -> MCPInputError:
            value = getattr(self, name)
            hint = ""
            if isinstance(value, str):
                hint = f" (a string: write {name}={value}, not {name}={value!r})"
            return MCPInputError(
                f"SolveOptions.{name} must be {want}, got {type(value).__name__} {value!r}{hint}"
            )

        for name in _REAL_OPTIONS:
            value = getattr(self, name)
            if value is None and name == "time_limit":
                continue
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise bad(name, "a real number" + (" or None" if name == "time_limit" else ""))
        for name in _COUNT_OPTIONS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise bad(name, "an integer")
        for name in _OPTIONAL_COUNT_OPTIONS:
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Integral)):
                raise bad(name, "an integer or None")
        if self.lift_pairs not in (True, False, "auto", "always", "never"):
            raise bad("lift_pairs", "'auto', 'always', 'never', True or False")
        for name in ("polish", "verbose", "scale_warm_multipliers"):
            if not isinstance(getattr(self, name), bool | np.bool_) and getattr(self, name) not in (0, 1):
                raise bad(name, "True or False")
        if not (self.progress is None or isinstance(self.progress, bool) or callable(self.progress)):
            if self.progress != "always":
                raise bad("progress", "True, False, 'always', None or a callable taking a HomotopyStep")
        if not isinstance(self.fallback_methods, tuple | list):
            raise bad("fallback_methods", "a tuple of reformulation names")

    @classmethod
    def names(cls) -> list[str]:
        """Valid option names."""
        return [f.name for f in fields(cls)]

    @classmethod
    def for_problem(cls, kind: str, base: SolveOptions | None = None, **kwargs: Any) -> SolveOptions:
        """:meth:`from_kwargs`, with ``tol`` from :data:`DEFAULT_TOL` unless ``base`` or ``kwargs`` set it."""
        if base is None and "tol" not in kwargs:
            kwargs["tol"] = DEFAULT_TOL[kind]
        return cls.from_kwargs(base, **kwargs)

    @classmethod
    def from_kwargs(cls, base: SolveOptions | None = None, **kwargs: Any) -> SolveOptions:
        """Options from keyword arguments; unknown names raise with a suggestion."""
        valid = cls.names()
        for key in kwargs:
            if key not in valid:
                extra = did_you_mean(key, valid)
                raise UnknownOptionError(f"unknown option {key!r}; valid options: {valid}.{extra}")
        return replace(base or cls(), **kwargs)


class _ReportingTrace(list):  # type: ignore[type-arg]
    """A trace list that hands each appended step to progress reporters."""

    def __init__(self, report: tuple[Callable[[Any], None], ...]) -> None:
        super().__init__()
        self._report = report

    def append(self, step: Any) -> None:
        super().append(step)
        for report in self._report:
            report(step)

    def __reduce__(self) -> tuple[Any, ...]:  # a result's trace pickles as the plain list it is
        return (list, (list(self),))


def progress_trace(options: SolveOptions) -> list[HomotopyStep]:
    """An empty trace for an engine's :class:`~mcpkit.solving.result.HomotopyStep` records: a plain list,
    or, when someone listens (:func:`mcpkit.solving.progress.reporters`: a callable
    :attr:`SolveOptions.progress`, the step log of ``verbose``, a display open around the solve),
    one whose ``append`` also hands each step to them (the one hook engines need for live
    progress). When none of the three can be there (no callable, no ``verbose``, no display
    open), the plain list is returned without asking :mod:`mcpkit.solving.progress`."""
    if not (callable(options.progress) or options.verbose or AMBIENT.get()):
        return []
    report = reporters(options)
    return _ReportingTrace(report) if report else []


#: The least time limit a route hands on from a spent budget: the solver it calls still runs and
#: stops before its first iteration, so the start point is returned, judged.
SPENT_SECONDS = 1e-9


@dataclass(frozen=True)
class Budget:
    """The time budget of one solve call: ``time_limit`` seconds from ``start`` (module docstring)."""

    time_limit: float | None = None
    """Seconds this call may take (``None``: no limit)."""
    start: float = field(default_factory=time.perf_counter)
    """When the call started (a :func:`time.perf_counter` value)."""

    @property
    def deadline(self) -> float | None:
        """``start + time_limit`` (``None``: no limit)."""
        return None if self.time_limit is None else self.start + self.time_limit

    def remaining(self, floor: float | None = None) -> float | None:
        """Seconds left now (``None``: no limit), at least ``floor`` if given (may be ``<= 0``
        otherwise)."""
        if self.time_limit is None:
            return None
        left = self.time_limit - (time.perf_counter() - self.start)
        return left if floor is None else max(left, floor)

    def fits(self, seconds: float) -> bool:
        """Whether ``seconds`` more end within the limit (always without one)."""
        left = self.remaining()
        return left is None or seconds <= left

    def spent(self) -> bool:
        """Whether the deadline has passed."""
        deadline = self.deadline
        return deadline is not None and time.perf_counter() > deadline


def call_budget(budget: Budget | None, time_limit: float | None) -> Budget:
    """``budget``, or when ``None`` one of ``time_limit`` seconds starting now (a route solved
    directly, without a :class:`~mcpkit.Solver`, spends its options' ``time_limit``)."""
    return Budget(time_limit) if budget is None else budget
