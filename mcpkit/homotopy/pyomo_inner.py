r"""The inner NLP of the homotopy as a Pyomo model, solved by a Pyomo NLP solver object.

:class:`ReplayedNLP` states an :class:`~mcpkit.homotopy.reformulation.NLPTemplate`
:math:`\min_x f(x; q)` s.t. :math:`g_l \le g(x; q) \le g_u`, :math:`x_l \le x \le x_u` in
Pyomo: variables ``x``, the parameter vector :math:`q` (problem parameters and the homotopy
parameter) as mutable ``Param`` ``q``, and :math:`f, g` replayed from the CasADi graph
instruction by instruction (:func:`~mcpkit.lowering.casadi_pyomo.casadi_to_pyomo`), so every
reformulation written as a CasADi template runs here unchanged. :class:`PyomoNLP` solves it with
a Pyomo solver object, an ``ipopt`` executable or ``mcpkit_ipopt``:

* primal start: the variables' values;
* dual start (warm settings): IPOPT's suffixes ``ipopt_zL_in``, ``ipopt_zU_in`` and ``dual``
  with ``warm_start_init_point=yes`` (:func:`~mcpkit.lowering.nl_import.ampl_multipliers`;
  missing multipliers start at 0, as in CasADi);
* IPOPT options: :func:`~mcpkit.homotopy.ipopt.ipopt_option_dict`, the same as CasADi's
  ``nlpsol`` gets; a deadline becomes ``max_wall_time`` (the time left);
* result: the point, the multipliers back in CasADi's convention, IPOPT's status name and its
  iteration count (``mcpkit_ipopt`` reports it in the results' statistics; for the executable
  it is read from IPOPT's summary, so its ``print_level`` is at least 3, the summary level, in
  a log that Pyomo captures and shows only with ``verbose``).

:class:`PyomoInner` is the factory the homotopy is given (the contract:
:mod:`mcpkit.homotopy.inner`).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

import casadi as ca
import numpy as np
import pyomo.environ as pyo

from mcpkit.homotopy.inner import IPOPT_STATUS, InnerCall, InnerResult, InnerSettings, InnerSolver
from mcpkit.homotopy.ipopt import check_ipopt_options, ipopt_option_dict
from mcpkit.homotopy.reformulation import NLPTemplate
from mcpkit.lowering.casadi_pyomo import casadi_to_pyomo
from mcpkit.lowering.nl_import import DUAL, ZL_IN, ZL_OUT, ZU_IN, ZU_OUT, ampl_multipliers, casadi_multipliers

#: Messages of IPOPT's AMPL interface (the ``ipopt`` executable) -> IPOPT status names.
AMPL_MESSAGES: tuple[tuple[str, str], ...] = (
    ("optimal solution found", "Solve_Succeeded"),
    ("solved to acceptable level", "Solved_To_Acceptable_Level"),
    ("feasible point for square problem found", "Feasible_Point_Found"),
    ("locally infeasible", "Infeasible_Problem_Detected"),
    ("search direction is becoming too small", "Search_Direction_Becomes_Too_Small"),
    ("iterates diverging", "Diverging_Iterates"),
    ("requested by user", "User_Requested_Stop"),
    ("maximum number of iterations exceeded", "Maximum_Iterations_Exceeded"),
    ("maximum cpu time exceeded", "Maximum_CpuTime_Exceeded"),
    ("maximum wallclock time exceeded", "Maximum_WallTime_Exceeded"),
    ("restoration phase failed", "Restoration_Failed"),
    ("error in step computation", "Error_In_Step_Computation"),
    ("too few degrees of freedom", "Not_Enough_Degrees_Of_Freedom"),
    ("invalid number", "Invalid_Number_Detected"),
    ("invalid option", "Invalid_Option"),
)

_ITERATIONS = re.compile(r"Number of Iterations\.*:\s*(\d+)")


def ipopt_status(results: Any) -> str:
    """IPOPT's status name from a Pyomo result (``mcpkit_ipopt``'s message is already one)."""
    msg = str(getattr(results.solver, "message", "") or "")
    if msg in IPOPT_STATUS:
        return msg
    low = msg.lower()
    for text, status in AMPL_MESSAGES:
        if text in low:
            return status
    return msg or str(results.solver.termination_condition)


def ipopt_iterations(results: Any, solver: Any) -> int:
    """IPOPT's iteration count: the results' statistics, else IPOPT's summary in the solver's log."""
    n = results.solver.statistics.black_box.number_of_iterations
    if isinstance(n, int):
        return n
    found = _ITERATIONS.findall(str(getattr(solver, "_log", "") or ""))
    return int(found[-1]) if found else 0


def _bound(v: float) -> float | None:
    return float(v) if np.isfinite(v) else None


class ReplayedNLP:
    """An :class:`~mcpkit.homotopy.reformulation.NLPTemplate` as a Pyomo model (module docstring).

    The rows are written with the bounds of the first :meth:`set_rows` call and rewritten only
    when the bounds change. Rows whose replayed body is a constant are not written (they hold no
    variable; their multiplier is reported as 0).
    """

    def __init__(self, nlp: NLPTemplate, name: str = "nlp") -> None:
        self.nx, self.nq, self.ng = int(nlp.x.numel()), int(nlp.p.numel()), int(nlp.g.numel())
        m = pyo.ConcreteModel(name=name)
        m.x = pyo.Var(range(self.nx), initialize=0.0)
        m.q = pyo.Param(range(self.nq), mutable=True, initialize=0.0)
        fun = ca.Function("replay", [nlp.x, nlp.p], [nlp.f, nlp.g])
        self.x = list(m.x.values())
        self.q = list(m.q.values())
        f, self.bodies = casadi_to_pyomo(fun, [self.x, self.q], block=m)
        m.obj = pyo.Objective(expr=f[0])
        m.add_component(DUAL, pyo.Suffix(direction=pyo.Suffix.IMPORT_EXPORT))
        for name_in in (ZL_IN, ZU_IN):
            m.add_component(name_in, pyo.Suffix(direction=pyo.Suffix.EXPORT))
        for name_out in (ZL_OUT, ZU_OUT):
            m.add_component(name_out, pyo.Suffix(direction=pyo.Suffix.IMPORT))
        self.model = m
        self._bounds: tuple[bytes, bytes] | None = None
        self.rows: list[tuple[int, Any]] = []
        """``(index into g, Pyomo constraint)`` of every written row."""

    def set_rows(self, lbg: np.ndarray, ubg: np.ndarray) -> None:
        """Write the rows ``lbg <= g <= ubg`` (once per set of bounds)."""
        key = (np.asarray(lbg, dtype=float).tobytes(), np.asarray(ubg, dtype=float).tobytes())
        if key == self._bounds:
            return
        m = self.model
        if m.component("g") is not None:
            m.del_component("g")
        keep = [
            i
            for i, e in enumerate(self.bodies)
            if (np.isfinite(lbg[i]) or np.isfinite(ubg[i])) and not isinstance(e, int | float)
        ]

        def rule(_m: Any, k: int) -> Any:
            i = keep[k]
            if lbg[i] == ubg[i]:
                return self.bodies[i] == float(lbg[i])
            return pyo.inequality(_bound(lbg[i]), self.bodies[i], _bound(ubg[i]))

        m.g = pyo.Constraint(range(len(keep)), rule=rule)
        self.rows = [(i, m.g[k]) for k, i in enumerate(keep)]
        self._bounds = key

    def set_point(
        self,
        x0: np.ndarray,
        q: np.ndarray,
        lbx: np.ndarray,
        ubx: np.ndarray,
        lam: tuple[np.ndarray, np.ndarray] | None,
    ) -> None:
        """Parameters, bounds, start values, and (``lam = (lam_x, lam_g)``) the dual start."""
        for d, v in zip(self.q, q, strict=True):
            d.set_value(float(v))
        for d, v, lo, hi in zip(self.x, x0, lbx, ubx, strict=True):
            d.setlb(_bound(lo))
            d.setub(_bound(hi))
            d.set_value(float(v), skip_validation=True)
        m = self.model
        for name in (ZL_IN, ZU_IN, DUAL):
            m.component(name).clear()
        if lam is None:
            return
        zL, zU, dual = ampl_multipliers(*lam)
        zl_in, zu_in, duals = m.component(ZL_IN), m.component(ZU_IN), m.component(DUAL)
        for k, d in enumerate(self.x):
            zl_in[d] = float(zL[k])
            zu_in[d] = float(zU[k])
        for i, c in self.rows:
            duals[c] = float(dual[i])

    def read(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """``(x, lam_x, lam_g, f)`` from the model after a solve (multipliers in CasADi's convention)."""
        m = self.model
        x = np.array([np.nan if d.value is None else float(d.value) for d in self.x])
        zl, zu, duals = m.component(ZL_OUT), m.component(ZU_OUT), m.component(DUAL)
        dual = np.zeros(self.ng)
        for i, c in self.rows:
            dual[i] = float(duals.get(c, 0.0))
        lam_x, lam_g = casadi_multipliers(
            np.array([float(zl.get(d, 0.0)) for d in self.x]),
            np.array([float(zu.get(d, 0.0)) for d in self.x]),
            dual,
        )
        try:
            f = float(pyo.value(m.obj))
        except (ValueError, ZeroDivisionError, OverflowError):
            f = float("nan")
        return x, lam_x, lam_g, f


class PyomoNLP(InnerSolver):
    """:class:`~mcpkit.homotopy.inner.InnerSolver` on a :class:`ReplayedNLP` with a Pyomo solver.

    Any exception of the solver call (a crashed executable, an evaluation error in the NL
    import, no point returned) is a failed subproblem.
    """

    errors = (Exception,)

    def __init__(self, replayed: ReplayedNLP, settings: InnerSettings, solver: Any) -> None:
        self.replayed = replayed
        self.nx, self.ng = replayed.nx, replayed.ng
        self.settings = settings
        self.solver = solver
        self.options = ipopt_option_dict(
            settings.tol,
            settings.max_iter,
            settings.warm,
            settings.verbose,
            settings.options,
            settings.warm_start,
        )
        if getattr(solver, "name", "") == "ipopt":  # the executable: its summary holds the iterations
            self.options["print_level"] = max(int(self.options["print_level"]), 3)

    def _run(self, call: InnerCall) -> InnerResult:
        rp = self.replayed
        rp.set_rows(call.lbg, call.ubg)
        lam = None
        if self.settings.warm:  # as CasADi: absent multipliers start at 0
            lam = (
                np.zeros(rp.nx) if call.lam_x0 is None else np.asarray(call.lam_x0, dtype=float),
                np.zeros(rp.ng) if call.lam_g0 is None else np.asarray(call.lam_g0, dtype=float),
            )
        rp.set_point(call.x0, call.q, call.lbx, call.ubx, lam)
        opts = dict(self.options)
        if call.deadline is not None:
            opts["max_wall_time"] = max(call.deadline - time.perf_counter(), 1e-3)
        if call.max_iter is not None:
            opts["max_iter"] = min(int(opts.get("max_iter", call.max_iter)), call.max_iter)
        res = self.solver.solve(
            rp.model,
            tee=self.settings.verbose,
            options=opts,
            load_solutions=False,
            # every column, as in CasADi's nlpsol (the NL writer drops unused ones otherwise)
            export_nonlinear_variables=rp.x,
        )
        if len(res.solution) == 0:
            raise RuntimeError(f"{self.solver.name} returned no point: {res.solver.message}")
        status_was = res.solver.status
        res.solver.status = pyo.SolverStatus.ok  # load the last iterate whatever the status
        rp.model.solutions.load_from(res)
        res.solver.status = status_was
        x, lam_x, lam_g, f = rp.read()
        return InnerResult(
            x=x,
            lam_x=lam_x,
            lam_g=lam_g,
            f=f,
            status=ipopt_status(res),
            iterations=ipopt_iterations(res, self.solver),
            wall_time_s=time.perf_counter() - call.t0,
        )


@dataclass
class PyomoInner:
    """:class:`~mcpkit.homotopy.inner.InnerFactory` of a Pyomo NLP solver on the template replayed in Pyomo.

    Parameters
    ----------
    solver
        ``"ipopt"`` (an executable, given by ``executable``) or ``"mcpkit_ipopt"``.
    executable
        Path of the ``ipopt`` executable (``solver="ipopt"`` only).
    description
        Which IPOPT runs, for results.
    """

    solver: str
    executable: str | None = None
    description: str = ""
    _models: dict[int, Any] = field(default_factory=dict, repr=False)

    def make_solver(self) -> Any:
        """A new Pyomo solver object."""
        import pyomo.environ as pyo

        if self.solver == "mcpkit_ipopt":
            from mcpkit.homotopy.ipopt_plugin import register

            register()
            return pyo.SolverFactory("mcpkit_ipopt")
        return pyo.SolverFactory(self.solver, executable=self.executable)

    def __call__(self, nlp: NLPTemplate, settings: InnerSettings) -> InnerSolver:
        check_ipopt_options(settings.options)
        # one Pyomo model per template, shared by its cold and warm solvers
        key = id(nlp)
        if key not in self._models:
            self._models[key] = (nlp, ReplayedNLP(nlp, settings.name))
        return PyomoNLP(self._models[key][1], settings, self.make_solver())
