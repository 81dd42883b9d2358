r"""The in-process IPOPT for Pyomo: Pyomo NLP :math:`\to` NL import :math:`\to` CasADi ``nlpsol``.

:class:`CasadiIpopt` is a Pyomo solver (registered as ``SolverFactory("mcpkit_ipopt")``) that
solves any Pyomo NLP with CasADi's bundled IPOPT through the NL import
(:func:`mcpkit.lowering.nl_import.import_pyomo_nl`). It makes a plain
``pip install`` enough for Pyomo's own NLP-based tools, e.g. ``mpec_nlp``::

    opt = pyo.SolverFactory("mpec_nlp")
    opt.options.solver = "mcpkit_ipopt"
    opt.solve(model)

It speaks the ``ipopt`` executable's dialect: primal start from the variables' values, dual start
(with ``warm_start_init_point=yes``) from the export suffixes ``ipopt_zL_in``, ``ipopt_zU_in``
and ``dual``, and the multipliers back in the import suffixes ``ipopt_zL_out``,
``ipopt_zU_out`` and ``dual`` (:func:`~mcpkit.lowering.nl_import.ampl_multipliers` gives the
sign conventions), so code written for the executable runs unchanged on it. IPOPT's iteration count is in
``results.solver.statistics.black_box.number_of_iterations``.
"""

from __future__ import annotations

import time
from typing import Any

import casadi as ca
import numpy as np

from mcpkit.errors import MCPInputError
from mcpkit.homotopy.ipopt import ipopt_iterations
from mcpkit.lowering.nl_import import (
    DUAL,
    ZL_IN,
    ZL_OUT,
    ZU_IN,
    ZU_OUT,
    NLImport,
    ampl_multipliers,
    casadi_multipliers,
    import_pyomo_nl,
)


def _suffix_values(
    suffixes: dict[str, Any], name: str, items: list[Any], default: float
) -> np.ndarray | None:
    """Values of suffix ``name`` on ``items`` (``default`` where unset); ``None`` without the suffix."""
    suffix = suffixes.get(name)
    if suffix is None:
        return None
    return np.array([float(suffix.get(c, default)) for c in items], dtype=float)


class CasadiIpopt:
    """A Pyomo solver: CasADi's bundled IPOPT on the NL import of the model (``"mcpkit_ipopt"``).

    Supports ``solve(model, tee=False, timelimit=None, options=None, load_solutions=True,
    export_nonlinear_variables=None)`` (the last an NL writer option, as for the executable);
    options are IPOPT options, set through ``solver.options[name] = value`` or ``options=``
    for one call. The returned :class:`pyomo.opt.SolverResults` carries IPOPT's status as its
    message, the iteration count in ``solver.statistics.black_box.number_of_iterations``, and
    one solution (values, bound multipliers, row duals) that ``load_solutions`` (or
    ``model.solutions.load_from``) loads into the model and its import suffixes. The warm-start
    suffixes are read as the ``ipopt`` executable reads them (see the module docstring); where
    the executable would start a bound multiplier at 1 (no ``ipopt_zL_in``/``ipopt_zU_in``
    suffix), CasADi's warm start, which holds one net multiplier per variable, starts it at 0.
    """

    def __init__(self, **kwargs: Any) -> None:
        from pyomo.common.collections import Bunch

        self.options = Bunch()
        self.name = "mcpkit_ipopt"
        self._rc = None
        self._log = None

    def available(self, exception_flag: bool = True) -> bool:
        return True

    def license_is_valid(self) -> bool:
        return True

    def version(self) -> tuple[int, ...]:
        return tuple(int(v) for v in ca.__version__.split(".")[:3])

    def __enter__(self) -> CasadiIpopt:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def _warm_start(self, model: Any, nlp: NLImport) -> dict[str, np.ndarray]:
        """``lam_x0``/``lam_g0`` from the model's export suffixes (the executable's rules)."""
        from pyomo.core.base.suffix import active_export_suffix_generator

        suffixes = dict(active_export_suffix_generator(model))
        args: dict[str, np.ndarray] = {}
        zL = _suffix_values(suffixes, ZL_IN, nlp.variables, 0.0)
        zU = _suffix_values(suffixes, ZU_IN, nlp.variables, 0.0)
        if zL is not None or zU is not None:
            ones = np.full(len(nlp.variables), nlp.objective_sense, dtype=float)
            z_in = (ones if zL is None else zL, -ones if zU is None else zU)
            args["lam_x0"] = casadi_multipliers(*z_in, np.zeros(0), nlp.objective_sense)[0]
        dual = _suffix_values(suffixes, DUAL, nlp.constraints, 0.0)
        if dual is not None:
            args["lam_g0"] = casadi_multipliers(np.zeros(0), np.zeros(0), dual, nlp.objective_sense)[1]
        return args

    def solve(
        self,
        model: Any,
        tee: bool = False,
        timelimit: float | None = None,
        options: dict[str, Any] | None = None,
        load_solutions: bool = True,
        **kwargs: Any,
    ) -> Any:
        from pyomo.core.expr.symbol_map import SymbolMap
        from pyomo.opt import Solution, SolverResults, SolverStatus, TerminationCondition

        t0 = time.perf_counter()
        nlp = import_pyomo_nl(model, kwargs.get("export_nonlinear_variables"))
        given = {**dict(self.options), **(options or {})}
        opts: dict[str, Any] = {
            "print_time": False,
            "ipopt.print_level": 5 if tee else 0,
            "ipopt.sb": "yes",
            "show_eval_warnings": bool(tee),  # CasADi's NaN warnings only with the log
        }
        for k, v in given.items():
            opts[f"ipopt.{k}"] = v
        if timelimit is not None:
            opts["ipopt.max_wall_time"] = float(timelimit)
        try:
            solver = ca.nlpsol("mcpkit_ipopt", "ipopt", {"x": nlp.x, "f": nlp.f, "g": nlp.g}, opts)
        except RuntimeError as exc:
            raise MCPInputError(f"mcpkit_ipopt: {exc}") from None
        args = {"x0": nlp.x0, "lbx": nlp.lbx, "ubx": nlp.ubx, "lbg": nlp.lbg, "ubg": nlp.ubg}
        if str(given.get("warm_start_init_point", "no")).lower() == "yes":
            args.update(self._warm_start(model, nlp))
        sol = solver(**args)
        stats = solver.stats()
        status = str(stats.get("return_status", "unknown"))
        x = np.asarray(sol["x"], dtype=float).reshape(-1)
        zL, zU, dual = ampl_multipliers(
            np.asarray(sol["lam_x"], dtype=float).reshape(-1),
            np.asarray(sol["lam_g"], dtype=float).reshape(-1),
            nlp.objective_sense,
        )
        res = SolverResults()
        res.solver.name = self.name
        res.solver.message = status
        res.solver.wallclock_time = time.perf_counter() - t0
        res.solver.statistics.black_box.number_of_iterations = ipopt_iterations(stats)
        ok = status in ("Solve_Succeeded", "Solved_To_Acceptable_Level")
        res.solver.status = SolverStatus.ok if ok else SolverStatus.warning
        res.solver.termination_condition = {
            "Solve_Succeeded": TerminationCondition.optimal,
            "Solved_To_Acceptable_Level": TerminationCondition.locallyOptimal,
            "Infeasible_Problem_Detected": TerminationCondition.infeasible,
            "Maximum_Iterations_Exceeded": TerminationCondition.maxIterations,
            "Maximum_WallTime_Exceeded": TerminationCondition.maxTimeLimit,
        }.get(status, TerminationCondition.error)
        # one solution in Pyomo's format, labels through a symbol map (as the shell solvers do)
        smap = SymbolMap()
        soln = Solution()
        for k, v in enumerate(nlp.variables):
            soln.variable[smap.getSymbol(v, lambda _o, k=k: f"v{k}")] = {
                "Value": float(x[k]),
                ZL_OUT: float(zL[k]),
                ZU_OUT: float(zU[k]),
            }
        for r, c in enumerate(nlp.constraints):
            soln.constraint[smap.getSymbol(c, lambda _o, r=r: f"c{r}")] = {"Dual": float(dual[r])}
        res.solution.insert(soln)
        res._smap = smap
        self._rc = 0 if ok else 1
        if load_solutions:
            res.solver.status = SolverStatus.ok  # load whatever IPOPT ended with; the message says how
            model.solutions.load_from(res)
            res.solver.status = SolverStatus.ok if ok else SolverStatus.warning
        return res


def register() -> None:
    """Register :class:`CasadiIpopt` with Pyomo's ``SolverFactory`` as ``"mcpkit_ipopt"``."""
    from pyomo.opt import SolverFactory

    if "mcpkit_ipopt" not in SolverFactory:
        SolverFactory.register("mcpkit_ipopt", doc="IPOPT bundled with CasADi, via mcpkit's NL import")(
            CasadiIpopt
        )
