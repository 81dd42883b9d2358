r"""mcpkit as a Pyomo solver: ``pyo.SolverFactory("mcpkit")``, and the Pyomo route of ``mcpkit.solve``.

A Pyomo model is solved as

* an **MPCC** (:func:`mcpkit.lowering.from_pyomo.mpcc_from_pyomo`, :class:`mcpkit.mpcc.MPCCSolver`)
  when it has an active objective that depends on a (non-fixed) variable;
* an **MCP** (:func:`mcpkit.lowering.pyomo.from_pyomo`, :class:`mcpkit.Solver`) when it has no
  active objective or a constant one (``Objective(expr=0)``, as Pyomo's ``mpec_nlp`` needs); if
  the MCP import refuses such a model (not square, inequalities outside pairs) and it has an
  objective, it is solved as an MPCC instead.

:class:`PyomoModelRoute` builds the route once; :meth:`PyomoModelRoute.solve` reads the current values of
the model's mutable ``Param``\ s (and, for an MPCC, its fixed variables) as the parameters and its
variables' values as the start, solves, and writes the point back into the variables (also when
not solved, so the user can inspect it; the verdict says what it is).

**The Pyomo solver** :class:`McpkitSolver` (``SolverFactory("mcpkit")``):
``solve(model, tee=False, load_solutions=True, timelimit=None, options={...})`` with options
``method``, ``backend``, ``tol``, ``time_limit``, ``relax_integrality`` (read integer variables
as continuous instead of refusing the model) and any other :class:`~mcpkit.solving.options.SolveOptions`
field (unknown names raise :class:`~mcpkit.errors.UnknownOptionError`). It keeps the built route
for the last model it saw and reuses it while :func:`~mcpkit.lowering.from_pyomo.structure_fingerprint`
is unchanged, so a loop that only changes mutable ``Param`` values pays the import once.
``results.solver.termination_condition`` / ``status`` (Pyomo's enums) follow mcpkit's verdict,
never a subsolver's word:

============================================  =====================================  ===========
mcpkit                                        termination_condition                  status
============================================  =====================================  ===========
solved, MCP or constant objective             ``optimal``                            ``ok``
solved, objective, stationarity S or B        ``optimal``                            ``ok``
solved, objective, weaker or unknown class    ``feasible``                           ``ok``
time limit reached (solved or not)            ``maxTimeLimit``                       ``warning``
not solved: iteration limit                   ``maxIterations``                      ``warning``
not solved: locally infeasible                ``infeasible``                         ``warning``
not solved: stalled                           ``other``                              ``warning``
numerical or solver error                     ``solverFailure``                      ``error``
interrupted                                   ``userInterrupt``                      ``aborted``
============================================  =====================================  ===========

mcpkit's own result is ``solver.last_result`` (and ``results.solver.message`` carries its message).

``timelimit`` bounds the whole call: reading and lowering the model count against it and the
solver gets what is left. A call that still ends after the limit (a phase that cannot be
interrupted, such as reading a large model, overran it) reports ``maxTimeLimit`` with its point
loaded, as :func:`mcpkit.solve` reports ``time_limit`` (:func:`mcpkit.solving.result.note_overrun`).
It is a number of seconds, or a numeric string as Pyomo's option dictionaries carry them
(``options={"timelimit": "5"}``); ``inf`` is no limit, and a bool, NaN, a number ``<= 0`` or any
other string is an :class:`~mcpkit.errors.MCPInputError` before the model is read.

``tee=True`` prints what is solved (variables, constraints, complementarities, method, tol, time
limit), then one line per step as it is taken (each homotopy step or Newton iteration with the
residual on the original problem, :func:`mcpkit.solving.progress.step_line`), then the verdict;
``options={"verbose": True}`` adds the inner solver's own output (IPOPT's iterations).
``print(results)`` names the model, counts its variables, constraints (complementarities
included) and complementarities, and, with ``load_solutions=False``, lists the solution with
its status, objective and the model's variable names.

**Registration.** Pyomo discovers solvers only through ``SolverFactory.register`` (its plugin
packages are a fixed list in ``pyomo.environ``; the only entry-point group Pyomo reads,
``pyomo.command``, is for ``pyomo`` CLI subcommands). ``import mcpkit`` therefore registers
``"mcpkit"`` (and ``"mcpkit_ipopt"``) — at once when Pyomo's ``pyomo.opt`` is already loaded,
otherwise right after it is first imported (:func:`install_registration`), so ``import mcpkit``
stays as cheap as before.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.util
import inspect
import sys
import time
from typing import Any

import numpy as np

from mcpkit.errors import MCPInputError, SolverNotAvailableError
from mcpkit.frontends.solve import time_left
from mcpkit.solving.progress import StepLog, reporting
from mcpkit.solving.result import MCPResult, MPCCResult, Termination, note_overrun

#: Names of :meth:`McpkitSolver.solve` options that choose the route rather than a SolveOptions field.
ROUTE_OPTIONS = ("method", "backend", "ipopt", "relax_integrality")


def objective_is_constant(obj: Any) -> bool:
    """The objective depends on no non-fixed variable."""
    from pyomo.core.expr.visitor import identify_variables

    return next(iter(identify_variables(obj.expr, include_fixed=False)), None) is None


def pyomo_kind(model: Any) -> str:
    """``"mpcc"`` when the model has an active objective depending on a variable, else ``"mcp"``."""
    from mcpkit.lowering.from_pyomo import active_objectives

    objs = active_objectives(model)
    if len(objs) > 1:
        raise MCPInputError(
            f"Pyomo model has {len(objs)} active objectives ({[o.name for o in objs][:5]}); mcpkit takes one"
        )
    return "mpcc" if objs and not objective_is_constant(objs[0]) else "mcp"


def _mcp_baked_values(model: Any) -> tuple[Any, ...]:
    """Values the MCP import turns into numbers: fixed variables and non-constant complementarity bounds."""
    import pyomo.environ as pyo
    from pyomo.mpec import Complementarity

    vals: list[Any] = [
        (id(v), v.value) for v in model.component_data_objects(pyo.Var, descend_into=True) if v.fixed
    ]
    for cc in model.component_data_objects(Complementarity, active=True, descend_into=True):
        for arg in cc._args:
            canon = cc._canonical_expression(arg)
            for b in (canon[0], canon[2]) if len(canon) == 3 else (canon[0],):
                if b is not None and not isinstance(b, int | float) and not b.is_constant():
                    vals.append((id(cc), pyo.value(b)))
    return tuple(vals)


def _pyomo_seconds(value: Any, name: str) -> float | None:
    """A Pyomo-side time limit in seconds: a number, or a numeric string as Pyomo's option
    dictionaries carry them (``"5"``; Pyomo's ``NonNegativeFloat`` takes it too), checked by
    :func:`~mcpkit.solving.options.time_limit_seconds` (``inf``: no limit; a bool, NaN, a number
    ``<= 0`` or a string that is not a number: :class:`~mcpkit.errors.MCPInputError`)."""
    from mcpkit.solving.options import time_limit_seconds

    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise MCPInputError(f"{name} must be a number of seconds > 0 or None, got {value!r}") from None
    return time_limit_seconds(value, name)


class PyomoModelRoute:
    """One Pyomo model's solve route, built once (see the module docstring).

    Parameters
    ----------
    model
        The Pyomo model (``ConcreteModel`` or block).
    backend, method, options, **kwargs
        As for :func:`mcpkit.solve`.
    """

    def __init__(
        self,
        model: Any,
        backend: str = "auto",
        method: str = "auto",
        options: Any = None,
        *,
        relax_integrality: bool = False,
        **kwargs: Any,
    ) -> None:
        from mcpkit.lowering.from_pyomo import structure_fingerprint

        self.model = model
        self.kind = pyomo_kind(model)
        self.fingerprint: tuple[Any, ...] | None = None
        self._mcp_solver: Any = None
        self._mpcc_solver: Any = None
        if self.kind == "mcp":
            from mcpkit.lowering.from_pyomo import active_objectives
            from mcpkit.lowering.pyomo import from_pyomo

            try:
                self.mcp = from_pyomo(model, relax_integrality=relax_integrality)
            except MCPInputError:
                if not active_objectives(model):
                    raise
                self.kind = "mpcc"  # a feasibility MPCC with a constant objective
            else:
                from mcpkit.frontends.solve import Solver

                self._mcp_solver = Solver(self.mcp, backend=backend, method=method, options=options, **kwargs)
                self.fingerprint = (structure_fingerprint(model), _mcp_baked_values(model))
        if self.kind == "mpcc":
            from mcpkit.lowering.from_pyomo import mpcc_from_pyomo
            from mcpkit.orchestration.mpcc_solver import MPCCSolver

            self.mpcc = mpcc_from_pyomo(model, relax_integrality=relax_integrality)
            self.source = self.mpcc.pyomo_source  # type: ignore[attr-defined]
            self.has_objective = self.source.objective is not None and not objective_is_constant(
                self.source.objective
            )
            if self.has_objective and "stationarity" in inspect.signature(MPCCSolver.__init__).parameters:
                kwargs.setdefault("stationarity", True)
            self._mpcc_solver = MPCCSolver(self.mpcc, method, backend, options, **kwargs)
            self.fingerprint = structure_fingerprint(model)
        else:
            self.has_objective = False

    @property
    def options(self) -> Any:
        """The :class:`~mcpkit.solving.options.SolveOptions` of the solver this route built."""
        return (self._mcp_solver if self.kind == "mcp" else self._mpcc_solver).options

    @property
    def method(self) -> str:
        """The method the route runs (``"auto"`` resolved)."""
        solver = self._mcp_solver if self.kind == "mcp" else self._mpcc_solver
        return str(getattr(solver.method, "value", solver.method))

    def current(self) -> bool:
        """The model's structure is still the one this route was built for."""
        from mcpkit.lowering.from_pyomo import structure_fingerprint

        if self.kind == "mcp":
            return self.fingerprint == (structure_fingerprint(self.model), _mcp_baked_values(self.model))
        return self.fingerprint == structure_fingerprint(self.model)

    def solve(
        self,
        p: Any = None,
        z0: Any = None,
        warm_start: bool = True,
        write_back: bool = True,
        time_limit: float | None = None,
    ) -> MCPResult | MPCCResult:
        """Solve at the model's current parameter values from its current variable values (or
        ``p``/``z0`` when given) and (``write_back``) write the point into the model's variables.
        ``time_limit`` (seconds; ``None``: the options') bounds this solve, checks included."""
        if time_limit is not None:
            time_limit = max(float(time_limit), 1e-3)  # a spent budget still returns the start
        if self.kind == "mcp":
            import pyomo.environ as pyo

            src = self.mcp.pyomo_source
            if p is None and src.params:
                p = np.array([float(pyo.value(q)) for q in src.params], dtype=float)
            if z0 is None:
                vals = [np.nan if v is None or v.value is None else float(v.value) for v in src.vars]
                z = np.asarray(vals, dtype=float)
                z0 = np.where(np.isfinite(z), z, self.mcp.start)
            res = self._mcp_solver.solve(p=p, z0=z0, warm_start=warm_start, time_limit=time_limit)
            if write_back and np.isfinite(res.z).all():
                from mcpkit.lowering.pyomo import write_back as write

                write(self.mcp, res)
            return res
        src = self.source
        pv = src.parameter_values() if p is None else p
        x0 = src.start(self.mpcc.lbx, self.mpcc.ubx) if z0 is None else z0
        res = self._mpcc_solver.solve(p=pv, x0=x0, time_limit=time_limit)
        if write_back and np.isfinite(res.x).all():
            src.write_back(res.x)
            res.extra["pyomo_objective"] = src.objective_value()
        return res


def pyomo_status(result: MCPResult | MPCCResult, has_objective: bool) -> tuple[Any, Any, str]:
    """``(TerminationCondition, SolverStatus, note)`` of an mcpkit result (module docstring table)."""
    from pyomo.opt import SolverStatus, TerminationCondition

    if result.termination is Termination.TIME_LIMIT:  # also a solution found after the limit
        found = "a solution found" if result.solved else f"not solved ({result.solution_status.value})"
        return TerminationCondition.maxTimeLimit, SolverStatus.warning, f"time limit; {found}"
    if result.solved:
        if not has_objective:
            return TerminationCondition.optimal, SolverStatus.ok, "solved"
        st = getattr(result, "stationarity", None)
        if st in ("S", "B"):
            return TerminationCondition.optimal, SolverStatus.ok, f"solved, {st}-stationary"
        return (
            TerminationCondition.feasible,
            SolverStatus.ok,
            f"feasible to tol but stationarity {st!r} (optimal needs S or B)",
        )
    t = result.termination
    table = {
        Termination.ITERATION_LIMIT: (TerminationCondition.maxIterations, SolverStatus.warning),
        Termination.TIME_LIMIT: (TerminationCondition.maxTimeLimit, SolverStatus.warning),
        Termination.LOCALLY_INFEASIBLE: (TerminationCondition.infeasible, SolverStatus.warning),
        Termination.STALLED: (TerminationCondition.other, SolverStatus.warning),
        Termination.CONVERGED: (TerminationCondition.other, SolverStatus.warning),
        Termination.NUMERICAL_ERROR: (TerminationCondition.solverFailure, SolverStatus.error),
        Termination.SOLVER_ERROR: (TerminationCondition.solverFailure, SolverStatus.error),
        Termination.INTERRUPTED: (TerminationCondition.userInterrupt, SolverStatus.aborted),
    }
    tc, ss = table[t]
    return tc, ss, f"not solved ({t.value}, {result.solution_status.value})"


def _number(text: str) -> Any:
    """``int`` or ``float`` of ``text`` when it reads as one, else the text."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


class McpkitSolver:
    """``SolverFactory("mcpkit")``: mcpkit's MCP and MPCC engines for Pyomo models (module docstring)."""

    def __init__(self, **kwargs: Any) -> None:
        from pyomo.common.collections import Bunch

        self.name = "mcpkit"
        self.options = Bunch()
        for k, v in (kwargs.pop("options", None) or {}).items():
            self.options[k] = v
        self._route: PyomoModelRoute | None = None
        self._route_key: tuple[Any, ...] | None = None
        self.last_result: MCPResult | MPCCResult | None = None
        self.unavailable_reason: str | None = None

    # ---- the legacy Pyomo solver protocol
    def available(self, exception_flag: bool = True) -> bool:
        """``True`` when CasADi's IPOPT plugin loads; else ``False`` (or raise with the reason)."""
        try:
            import casadi as ca

            ok = bool(ca.has_nlpsol("ipopt"))
            self.unavailable_reason = None if ok else "CasADi is installed but its IPOPT plugin does not load"
        except ImportError as exc:  # pragma: no cover - casadi is a dependency
            ok, self.unavailable_reason = False, f"casadi cannot be imported ({exc}); pip install casadi"
        if not ok and exception_flag:
            raise SolverNotAvailableError(f"mcpkit solver not available: {self.unavailable_reason}")
        return ok

    def license_is_valid(self) -> bool:
        return True

    def version(self) -> tuple[int, ...]:
        from importlib.metadata import version  # the package's, without importing mcpkit/__init__

        return tuple(int(v) for v in version("mcpkit").split(".")[:3])

    def warm_start_capable(self) -> bool:
        return True

    def set_options(self, opts: dict[str, Any] | str | None) -> None:
        """Set options from a dict or an ``"key=value key=value"`` string (the ``pyomo solve`` CLI's form)."""
        if isinstance(opts, str):
            items = {}
            for tok in opts.split():
                key, sep, val = tok.partition("=")
                if not sep:
                    raise MCPInputError(f"SolverFactory('mcpkit'): option {tok!r} is not key=value")
                items[key] = _number(val)
            opts = items
        for k, v in (opts or {}).items():
            self.options[k] = v

    def __enter__(self) -> McpkitSolver:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def _route_for(self, model: Any, opts: dict[str, Any]) -> PyomoModelRoute:
        route_args = {k: opts.pop(k) for k in ROUTE_OPTIONS if k in opts}
        key = (id(model), tuple(sorted((k, repr(v)) for k, v in {**route_args, **opts}.items())))
        if self._route is not None and self._route_key == key and self._route.model is model:
            if self._route.current():
                return self._route
        route = PyomoModelRoute(
            model,
            backend=route_args.pop("backend", "auto"),
            method=route_args.pop("method", "auto"),
            **route_args,
            **opts,
        )
        self._route, self._route_key = route, key
        return route

    def solve(
        self,
        model: Any,
        tee: bool = False,
        load_solutions: bool = True,
        timelimit: float | None = None,
        options: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        """Solve ``model`` (see the module docstring); returns a :class:`pyomo.opt.SolverResults`."""
        from pyomo.core.base.block import BlockData
        from pyomo.core.expr.symbol_map import SymbolMap
        from pyomo.opt import ProblemSense, Solution, SolverResults, SolverStatus

        self.available()  # raises SolverNotAvailableError with the reason
        if not isinstance(model, BlockData):
            raise MCPInputError(
                f"SolverFactory('mcpkit').solve expects a Pyomo model, got {type(model).__name__}"
            )
        for k in ("symbolic_solver_labels", "keepfiles", "report_timing", "warmstart"):
            kwargs.pop(k, None)  # accepted and meaningless here (no files; always warm from the values)
        if kwargs:
            raise MCPInputError(f"SolverFactory('mcpkit').solve: unknown arguments {sorted(kwargs)}")
        opts = {k: v for k, v in {**dict(self.options), **(options or {})}.items() if v is not None}
        if "timelimit" in opts:  # Pyomo's spelling
            opts.setdefault("time_limit", _pyomo_seconds(opts.pop("timelimit"), "options['timelimit']"))
        if timelimit is not None:
            opts["time_limit"] = _pyomo_seconds(timelimit, "timelimit")
        elif "time_limit" in opts:
            opts["time_limit"] = _pyomo_seconds(opts["time_limit"], "options['time_limit']")
        t0 = time.perf_counter()
        limit = opts.get("time_limit")
        route = self._route_for(model, dict(opts))
        counts = model_counts(model)
        if tee:
            print(tee_header(model, route, counts), flush=True)
        # the limit bounds the whole call: reading the model and lowering it count against it
        left = time_left(None if limit is None else float(limit), t0)
        with reporting(StepLog()) if tee else contextlib.nullcontext():  # one log line per step
            result = route.solve(write_back=load_solutions, time_limit=left)
        note_overrun(result, None if limit is None else float(limit), time.perf_counter() - t0)
        self.last_result = result
        tc, ss, note = pyomo_status(result, route.has_objective)
        if tee:
            print(f"mcpkit ({route.kind}, {result.method}/{result.backend}): {result.message}")
            print(f"mcpkit: Pyomo termination {tc.value} ({note})", flush=True)
        res = SolverResults()
        res.problem.name = model.name
        res.problem.number_of_variables = (
            len(route.source.variables) if route.kind == "mpcc" else len(route.mcp.pyomo_source.vars)
        )
        res.problem.number_of_constraints = counts["constraints"] + counts["complementarities"]
        res.problem.number_of_complementarities = counts["complementarities"]
        res.problem.number_of_objectives = counts["objectives"]
        objective, obj_value = None, None
        if route.kind == "mpcc" and route.source.objective is not None:
            src = route.source
            res.problem.sense = ProblemSense.minimize if src.sense > 0 else ProblemSense.maximize
            # at the returned point, in the objective's own sense (the model holds the point only
            # when it was loaded; the MPCC's f is sense * objective)
            val = src.objective_value() if load_solutions else src.sense * float(result.f)
            objective, obj_value = src.objective, val
            if np.isfinite(val) and result.solved:  # a feasible point bounds the optimum
                if src.sense > 0:
                    res.problem.upper_bound = val
                else:
                    res.problem.lower_bound = val
        res.solver.name = self.name
        res.solver.message = f"{result.message} [{note}]"
        res.solver.termination_message = res.solver.message
        res.solver.wallclock_time = time.perf_counter() - t0
        res.solver.statistics.black_box.number_of_iterations = int(result.iterations)
        res.solver.termination_condition = tc
        # one solution in Pyomo's format (the point is already in the model's variables; a
        # Solution lets load_solutions=False callers load it later with model.solutions.load_from)
        if route.kind == "mpcc":
            variables, x = route.source.variables, result.x
        else:
            pairs = [
                (v, z) for v, z in zip(route.mcp.pyomo_source.vars, result.z, strict=True) if v is not None
            ]
            variables, x = [v for v, _ in pairs], np.array([z for _, z in pairs])
        if np.isfinite(x).all():
            smap = SymbolMap()
            soln = Solution()
            soln.status = solution_status(tc)
            soln.gap = None
            for k, v in enumerate(variables):  # the model's own names (unique within the model)
                soln.variable[smap.getSymbol(v, _component_name)] = {"Value": float(x[k])}
            if objective is not None and obj_value is not None and np.isfinite(obj_value):
                soln.objective[smap.getSymbol(objective, _component_name)] = {"Value": float(obj_value)}
            res.solution.insert(soln)
            res._smap = smap
            if load_solutions:  # the route wrote the values; record them as Pyomo's loaded solution
                res.solver.status = SolverStatus.ok
                model.solutions.load_from(res)
                res.solution.clear()
        res.solver.status = ss
        return res


def _component_name(component: Any) -> str:
    return str(component.name)


def model_counts(model: Any) -> dict[str, int]:
    """Active ``Constraint`` rows (outside complementarities), ``Complementarity`` conditions and
    objectives of a Pyomo model."""
    import pyomo.environ as pyo
    from pyomo.mpec import Complementarity

    comps = list(model.component_data_objects(Complementarity, active=True, descend_into=True))
    inside = {id(c) for c in comps}

    def in_complementarity(con: Any) -> bool:
        block = con.parent_block()
        while block is not None:
            if id(block) in inside:
                return True
            block = block.parent_block()
        return False

    cons = [
        c
        for c in model.component_data_objects(pyo.Constraint, active=True, descend_into=True)
        if not in_complementarity(c)
    ]
    objs = list(model.component_data_objects(pyo.Objective, active=True, descend_into=True))
    return {"constraints": len(cons), "complementarities": len(comps), "objectives": len(objs)}


def tee_header(model: Any, route: PyomoModelRoute, counts: dict[str, int]) -> str:
    """The first line of ``tee=True``: what is solved, how, and to which tolerance and time limit."""
    o = route.options
    nvar = len(route.source.variables) if route.kind == "mpcc" else len(route.mcp.pyomo_source.vars)
    what = "MPCC" if route.kind == "mpcc" else "MCP"
    limit = "no time limit" if o.time_limit is None else f"time limit {o.time_limit:g} s"
    k = counts["complementarities"]
    rows = _count(counts["constraints"] + k, "constraint")
    pairs = _count(k, "complementarity", "complementarities")
    return (
        f"mcpkit: {model.name} as an {what}: {_count(nvar, 'variable')}, {rows} ({pairs}); "
        f"method {route.method}, tol {o.tol:g}, {limit}"
    )


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


def solution_status(tc: Any) -> Any:
    """Pyomo's ``SolutionStatus`` of the point for a ``TerminationCondition`` (module docstring)."""
    from pyomo.opt import SolutionStatus, TerminationCondition

    return {
        TerminationCondition.optimal: SolutionStatus.optimal,
        TerminationCondition.feasible: SolutionStatus.feasible,
        TerminationCondition.maxTimeLimit: SolutionStatus.stoppedByLimit,
        TerminationCondition.maxIterations: SolutionStatus.stoppedByLimit,
        TerminationCondition.infeasible: SolutionStatus.infeasible,
        TerminationCondition.solverFailure: SolutionStatus.error,
    }.get(tc, SolutionStatus.other)


def register() -> None:
    """Register ``"mcpkit"`` (and CasADi's IPOPT as ``"mcpkit_ipopt"``) with Pyomo's ``SolverFactory``."""
    from pyomo.opt import SolverFactory

    from mcpkit.homotopy.ipopt_plugin import register as register_ipopt

    if "mcpkit" not in SolverFactory:
        SolverFactory.register("mcpkit", doc="mcpkit: MCP and MPCC engines (homotopy, PATH, Newton)")(
            McpkitSolver
        )
    register_ipopt()


class _RegisterAfterImport(importlib.abc.MetaPathFinder):
    """One-shot import hook: run :func:`register` right after ``pyomo.opt`` is first imported."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != "pyomo.opt":
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader = spec.loader

        class _Loader(importlib.abc.Loader):
            def create_module(self, spec: Any) -> Any:
                return loader.create_module(spec)

            def exec_module(self, module: Any) -> None:
                loader.exec_module(module)
                register()

        spec.loader = _Loader()
        return spec


def install_registration() -> None:
    """Register now if ``pyomo.opt`` is loaded, else once it is (called by ``import mcpkit``)."""
    if "pyomo.opt" in sys.modules:
        register()
    elif not any(isinstance(f, _RegisterAfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _RegisterAfterImport())
