r"""The PATH route: the box MCP :math:`l \le z \le u \perp F(z; p)` handed to PATH as is.

PATH (Dirkse & Ferris; a stabilised Newton method on the normal map) solves the MCP directly,
with no relaxation parameter. Two interfaces:

* ``"pyomo"``: Pyomo's ``SolverFactory("path")`` (the ``pathampl`` executable) on the
  :class:`~mcpkit.lowering.pyomo.ToPyomo` block; the plugin applies Pyomo's ``mpec.nl``
  transformation and writes the pairs as AMPL complementarity suffixes.
* ``"gamspy"``: GAMSPy's bundled PATH (demo license: at most 1000 rows/columns for MCPs).
  Each affine block :math:`F_B = M z_S + q(p)` becomes one indexed equation
  ``F_B(i) .. sum(j, M(i,j) z_S(j)) + q(i) =n= 0`` matched with the indexed variable
  ``z_B(i)`` (a sparse :math:`M` gives the parameter ``M`` its records straight from the COO
  triplets, never a dense array); each component of a symbolic block becomes one scalar
  variable matched with one scalar equation (sympy lambdified into GAMSPy expressions). Parameters are GAMSPy
  ``Parameter``\ s updated before each solve, so the model is built once.

``options.tol`` is PATH's ``convergence_tolerance``; ``options.path_options`` are passed
through by PATH option name. ``RouteOutcome.extra`` holds ``{"path": "gamspy <version>"}`` or
``{"path": "pathampl <path>"}`` and PATH's model/solve status.
"""

from __future__ import annotations

import math
import time
from functools import reduce
from typing import Any

import numpy as np
import sympy as sp

from mcpkit.errors import MCPInputError, SolverNotAvailableError
from mcpkit.problems.functions import AffineFunction, BlockFunction, SymbolicFunction
from mcpkit.problems.mcp import MCP
from mcpkit.solving.availability import PATH_HOWTO, _gamspy_path, pathampl_executable, require_path
from mcpkit.solving.options import SPENT_SECONDS, Budget, SolveOptions, call_budget
from mcpkit.solving.result import Termination
from mcpkit.solving.route import RouteOutcome


def _matrix_records(M: Any, matrix: bool = True) -> Any:
    """GAMSPy records of a block of :math:`M` (``matrix=False``: of a one-column block, as a vector).

    Dense: the array itself (as GAMSPy takes it). Sparse: a DataFrame of the stored entries,
    one row per nonzero: the domain labels ``"0", "1", ...`` (columns ``row``, ``col``; GAMSPy
    reads them by position), then ``value``; built from COO, never densified.
    """
    import scipy.sparse as sps

    if not sps.issparse(M):
        return M if matrix else np.asarray(M).reshape(-1)
    import pandas as pd

    coo = sps.coo_array(M)
    data = {"row": coo.row.astype(str)}
    if matrix:
        data["col"] = coo.col.astype(str)
    data["value"] = coo.data
    return pd.DataFrame(data)


def _which_interface(backend: str) -> str:
    """``"ampl"`` or ``"gamspy"`` for a backend name; raise with :data:`PATH_HOWTO` if absent."""
    b = str(getattr(backend, "value", backend)).lower()
    if b == "auto":
        return require_path()
    if b == "pyomo":
        if pathampl_executable() is not None:
            return "ampl"
        hint = " (GAMSPy's PATH is installed: use backend='gamspy' or 'auto')" if _gamspy_path()[0] else ""
        raise SolverNotAvailableError(
            f"method='path' with backend='pyomo' needs the `pathampl` executable{hint}.\n" + PATH_HOWTO
        )
    if b == "gamspy":
        if not _gamspy_path()[0]:
            raise SolverNotAvailableError(f"GAMSPy's PATH is not usable ({_gamspy_path()[2]}).\n{PATH_HOWTO}")
        return "gamspy"
    raise MCPInputError(f"PathRoute: backend must be 'auto', 'pyomo' or 'gamspy', got {backend!r}")


class PathRoute:
    """PATH on the MCP through Pyomo/pathampl or GAMSPy (see the module docstring).

    Parameters
    ----------
    problem
        The declaration.
    backend
        ``"auto"`` (pathampl if found, else GAMSPy), ``"pyomo"`` or ``"gamspy"``.
    options
        ``tol`` (PATH's convergence tolerance), ``path_options``, ``time_limit``, ``verbose``.

    Raises
    ------
    SolverNotAvailableError
        At construction, when the requested PATH interface is missing (message: how to get it).
    """

    method = "path"

    def __init__(self, problem: MCP, backend: str, options: SolveOptions) -> None:
        self.interface = _which_interface(backend)
        self.backend = "pyomo" if self.interface == "ampl" else "gamspy"
        self.problem = problem
        self.options = options
        problem.validate()
        if self.interface == "ampl":
            self._impl: _AmplPath | _GamspyPath = _AmplPath(problem, options)
        else:
            self._impl = _GamspyPath(problem, options)

    def solve(self, p: np.ndarray, z0: np.ndarray, warm: bool, budget: Budget | None = None) -> RouteOutcome:
        """Run PATH at parameters ``p`` from ``z0`` (``warm`` only changes the start) within
        ``budget`` (``None``: the options' ``time_limit``)."""
        limit = call_budget(budget, self.options.time_limit).remaining(SPENT_SECONDS)
        return self._impl.solve(np.asarray(p, dtype=float), np.asarray(z0, dtype=float), limit)


# ------------------------------------------------------------------------------ pathampl
class _AmplPath:
    """PATH through Pyomo's ``path`` solver plugin on the ToPyomo block."""

    def __init__(self, problem: MCP, options: SolveOptions) -> None:
        import pyomo.environ as pyo

        from mcpkit.lowering.pyomo import ToPyomo

        self.options = options
        self.lowering = ToPyomo()
        self.model, self.info = self.lowering.apply(problem)
        self.exe = pathampl_executable()
        self.solver = pyo.SolverFactory("path", executable=self.exe)

    def solve(self, p: np.ndarray, z0: np.ndarray, time_limit: float | None) -> RouteOutcome:
        from pyomo.opt import TerminationCondition as TC

        self.info.set_parameters(self.model, p)
        self.info.set_values(self.model, z0)
        opts: dict[str, Any] = {"convergence_tolerance": self.options.tol}
        if time_limit is not None:
            opts["time_limit"] = time_limit
        opts.update(self.options.path_options)
        try:
            res = self.solver.solve(self.model, tee=self.options.verbose, options=opts, load_solutions=False)
        except Exception as exc:  # executable crashed or wrote no .sol file
            return RouteOutcome(None, Termination.SOLVER_ERROR, f"pathampl failed: {exc}", 0)
        tc = res.solver.termination_condition
        if len(res.solution) > 0:
            self.model.solutions.load_from(res)
            z = self.lowering.invert(self.model, self.info)
        else:
            z = None
        table = {
            TC.optimal: Termination.CONVERGED,
            TC.locallyOptimal: Termination.CONVERGED,
            TC.globallyOptimal: Termination.CONVERGED,
            TC.feasible: Termination.CONVERGED,
            TC.maxIterations: Termination.ITERATION_LIMIT,
            TC.maxTimeLimit: Termination.TIME_LIMIT,
            TC.infeasible: Termination.LOCALLY_INFEASIBLE,
            TC.locallyInfeasible: Termination.LOCALLY_INFEASIBLE,
            TC.userInterrupt: Termination.INTERRUPTED,
        }
        term = table.get(tc, Termination.SOLVER_ERROR)
        return RouteOutcome(
            z=z,
            termination=term,
            raw_status=str(tc),
            iterations=0,
            extra={"path": f"pathampl {self.exe}", "path_status": str(tc)},
        )


# -------------------------------------------------------------------------------- gamspy
def _gp_functions() -> dict[str, Any]:
    import gamspy as gp

    gm = gp.math

    return {
        "sin": gm.sin, "cos": gm.cos, "tan": gm.tan, "asin": gm.asin, "acos": gm.acos,
        "atan": gm.atan, "atan2": gm.atan2, "sinh": gm.sinh, "cosh": gm.cosh, "tanh": gm.tanh,
        "exp": gm.exp, "log": gm.log, "sqrt": gm.sqrt, "Abs": gm.abs, "sign": gm.sign,
        "Max": lambda *a: reduce(gm.Max, a), "Min": lambda *a: reduce(gm.Min, a),
        "floor": gm.floor, "ceiling": gm.ceil, "pi": math.pi, "E": math.e,
    }  # fmt: skip


#: GAMS model status -> mcpkit termination (PATH's verdict; mcpkit re-checks residuals).
def _gamspy_termination(model_status: Any, solve_status: Any) -> Termination:
    ms = str(getattr(model_status, "name", model_status))
    ss = str(getattr(solve_status, "name", solve_status))
    if ss == "IterationInterrupt":
        return Termination.ITERATION_LIMIT
    if ss == "ResourceInterrupt":
        return Termination.TIME_LIMIT
    if ss == "EvaluationInterrupt":
        return Termination.NUMERICAL_ERROR
    if ss == "UserInterrupt":
        return Termination.INTERRUPTED
    if ss not in ("NormalCompletion",):
        return Termination.SOLVER_ERROR
    if ms in ("OptimalGlobal", "OptimalLocal", "Feasible"):
        return Termination.CONVERGED
    if ms in ("InfeasibleGlobal", "InfeasibleLocal", "InfeasibleIntermed", "IntegerInfeasible"):
        return Termination.LOCALLY_INFEASIBLE
    return Termination.STALLED


class _GamspyPath:
    """PATH through GAMSPy: the container is built once, values updated per solve."""

    MAX_SIZE = 1000  # GAMSPy demo license limit for MCP (nonlinear) rows/columns

    def __init__(self, problem: MCP, options: SolveOptions) -> None:
        import gamspy as gp

        self.gp = gp
        self.problem = problem
        self.options = options
        self.version = _gamspy_path()[1]
        c = gp.Container()
        self.c = c
        lb, ub = problem.lb, problem.ub
        # parameters: one scalar GAMSPy Parameter each
        self.params = [gp.Parameter(c, f"par{j}") for j in range(problem.n_params)]
        # variables: indexed for affine blocks, scalar per component for symbolic blocks
        self.kind: dict[str, str] = {}
        self.sets: dict[str, Any] = {}
        self.vars: dict[str, Any] = {}
        self.comp: list[Any] = []  # GAMSPy reference of each z_i
        for b in problem.blocks:
            fb = problem.function_block(b.name)
            if isinstance(fb, AffineFunction):
                s = gp.Set(c, f"s_{b.name}", records=[str(k) for k in range(b.size)])
                v = gp.Variable(c, f"z_{b.name}", domain=s)
                self.kind[b.name], self.sets[b.name], self.vars[b.name] = "affine", s, v
                self.comp.extend(v[str(k)] for k in range(b.size))
            else:
                vs = [gp.Variable(c, f"z_{b.name}_{k}") for k in range(b.size)]
                self.kind[b.name], self.vars[b.name] = "scalar", vs
                self.comp.extend(vs)
        self.lb, self.ub = lb, ub
        syms = list(problem.variables) + list(problem.parameters)
        vals = self.comp + self.params
        funcs = _gp_functions()
        matches: dict[Any, Any] = {}
        self.qpar: dict[str, tuple[Any, Any]] = {}
        zero = gp.Number(0)
        for b in problem.blocks:
            fb = problem.function_block(b.name)
            if isinstance(fb, (SymbolicFunction, BlockFunction)):
                # a block function (mcpkit.problems.blocks) enters GAMSPy as its expanded sympy rows
                rows_sym = list(fb.exprs) if isinstance(fb, SymbolicFunction) else list(fb.expand())
                if any(isinstance(r, sp.Basic) and r.has(sp.Piecewise) for r in rows_sym):
                    raise MCPInputError(
                        f"PATH through GAMSPy: block {b.name!r} has piecewise rows (if_else or "
                        "comparisons), which the GAMSPy lowering cannot state; use method='newton' "
                        "or an IPOPT homotopy ('scholtes', 'fb'), or PATH through pathampl"
                    )
                fn = sp.lambdify([syms], rows_sym, modules=[funcs, "math"])
                rows = fn(vals)
                for k, (row, v) in enumerate(zip(rows, self.vars[b.name], strict=True)):
                    eq = gp.Equation(c, f"F_{b.name}_{k}", type="nonbinding")
                    if isinstance(row, (int, float)):
                        row = gp.Number(float(row)) + 0 * v
                    eq[...] = row == zero
                    matches[eq] = v
            else:
                s = self.sets[b.name]
                i = s
                q = gp.Parameter(c, f"q_{b.name}", domain=s)
                qf = sp.lambdify([list(problem.parameters)], list(fb.q), modules=["numpy"])
                self.qpar[b.name] = (q, qf)
                expr: Any = q[i]
                col = 0
                for nm in fb.over:
                    ob = problem._vars[nm]
                    Msub = fb.M[:, col : col + ob.size]
                    col += ob.size
                    if not (Msub.nnz if fb.is_sparse else Msub.any()):
                        continue
                    if self.kind[nm] == "affine":
                        so = self.sets[nm]
                        j = gp.Alias(c, f"a_{b.name}_{nm}", so)
                        rec = _matrix_records(Msub)
                        Mp = gp.Parameter(c, f"M_{b.name}_{nm}", domain=[s, so], records=rec)
                        expr = expr + gp.Sum(j, Mp[i, j] * self.vars[nm][j])
                    else:
                        Mc = Msub.tocsc() if fb.is_sparse else Msub
                        used = np.flatnonzero(np.diff(Mc.indptr) if fb.is_sparse else Msub.any(axis=0))
                        for k in used:
                            rec = _matrix_records(Mc[:, [int(k)]], False) if fb.is_sparse else Msub[:, k]
                            mc = gp.Parameter(c, f"Mc_{b.name}_{nm}_{k}", domain=s, records=rec)
                            expr = expr + mc[i] * self.vars[nm][int(k)]
                eq = gp.Equation(c, f"F_{b.name}", domain=s, type="nonbinding")
                eq[i] = expr == zero
                matches[eq] = self.vars[b.name]
        self.model = gp.Model(c, "mcpkit_mcp", problem="MCP", matches=matches)

    def _set_values(self, p: np.ndarray, z0: np.ndarray) -> None:
        import pandas as pd

        for prm, val in zip(self.params, p, strict=True):
            prm.setRecords(float(val))
        for name, (q, qf) in self.qpar.items():
            qv = np.asarray(qf(list(p)), dtype=float).reshape(-1)
            b = self.problem._vars[name]
            q.setRecords(np.broadcast_to(qv, (b.size,)).copy())
        for b in self.problem.blocks:
            sl = b.slice
            lo, hi, st = self.lb[sl], self.ub[sl], z0[sl]
            if self.kind[b.name] == "affine":
                df = pd.DataFrame(
                    {
                        f"s_{b.name}": [str(k) for k in range(b.size)],
                        "level": st,
                        "marginal": 0.0,
                        "lower": lo,
                        "upper": hi,
                        "scale": 1.0,
                    }
                )
                self.vars[b.name].setRecords(df)
            else:
                for k, v in enumerate(self.vars[b.name]):
                    v.setRecords(
                        {"level": st[k], "marginal": 0.0, "lower": lo[k], "upper": hi[k], "scale": 1.0}
                    )

    def _read(self) -> np.ndarray:
        out: list[float] = []
        for b in self.problem.blocks:
            if self.kind[b.name] == "affine":
                out.extend(np.asarray(self.vars[b.name].toDense(), dtype=float).reshape(-1))
            else:
                out.extend(float(np.asarray(v.toValue()).reshape(-1)[0]) for v in self.vars[b.name])
        return np.asarray(out, dtype=float)

    def solve(self, p: np.ndarray, z0: np.ndarray, time_limit: float | None) -> RouteOutcome:
        n = self.problem.n
        if n > self.MAX_SIZE:
            raise SolverNotAvailableError(
                f"GAMSPy's demo license limits MCPs to {self.MAX_SIZE} rows/columns; this MCP has "
                f"n = {n}. Use a full GAMS license, the pathampl executable or method='scholtes'."
            )
        self._set_values(p, z0)
        opts: dict[str, Any] = {"convergence_tolerance": self.options.tol}
        opts.update(self.options.path_options)
        kw: dict[str, Any] = {}
        if time_limit is not None:
            kw["options"] = self.gp.Options(time_limit=time_limit)
        t0 = time.perf_counter()
        try:
            self.model.solve(solver="PATH", solver_options=opts, **kw)
        except Exception as exc:  # GAMS compilation/execution/license errors
            msg = str(exc).splitlines()[0][:300]
            if "licen" in str(exc).lower():  # e.g. "Return code 7 ... license error": not a failed solve
                raise SolverNotAvailableError(
                    f"GAMSPy's PATH refused this model under its licence ({msg}).\n{PATH_HOWTO}"
                ) from None
            return RouteOutcome(
                None, Termination.SOLVER_ERROR, f"gamspy: {msg}", 0, extra={"path": f"gamspy {self.version}"}
            )
        wall = time.perf_counter() - t0
        term = _gamspy_termination(self.model.status, self.model.solve_status)
        try:
            z: np.ndarray | None = self._read()
        except Exception:  # no levels written
            z = None
        if z is not None:
            z = np.where(np.isnan(z), 0.0, z)  # GAMS leaves levels of zero as absent records
        return RouteOutcome(
            z=z,
            termination=term,
            raw_status=f"{getattr(self.model.status, 'name', self.model.status)}/"
            f"{getattr(self.model.solve_status, 'name', self.model.solve_status)}",
            iterations=int(self.model.num_iterations or 0),
            extra={
                "path": f"gamspy {self.version}",
                "path_model_status": str(getattr(self.model.status, "name", self.model.status)),
                "path_solve_time_s": float(self.model.solve_model_time or wall),
            },
        )
