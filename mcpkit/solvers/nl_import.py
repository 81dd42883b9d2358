r"""Pyomo models -> CasADi through Pyomo's NL writer, and an in-process IPOPT for Pyomo.

:func:`import_pyomo_nl` writes a Pyomo model to an NL file (no symbolic labels, no presolve, no
scaling, so every Pyomo variable and constraint keeps its own column and row), reads it with
``casadi.NlpBuilder.import_nl`` and returns the NLP as CasADi SX expressions over one vector
ordered like the NL writer's variable list.

:class:`CasadiIpopt` is a Pyomo solver (registered as ``SolverFactory("mcpkit_ipopt")``) that
solves any Pyomo NLP with CasADi's bundled IPOPT through that import. It makes a plain
``pip install`` enough for Pyomo's own NLP-based tools, e.g. ``mpec_nlp``::

    opt = pyo.SolverFactory("mpec_nlp")
    opt.options.solver = "mcpkit_ipopt"
    opt.solve(model)
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from typing import Any

import casadi as ca
import numpy as np

from mcpkit.errors import MCPInputError


@dataclass
class NLImport:
    """An NLP read back from Pyomo's NL file: ``min f(x)`` s.t. ``lbg <= g(x) <= ubg``, bounds on x."""

    x: ca.SX
    f: ca.SX
    g: ca.SX
    lbx: np.ndarray
    ubx: np.ndarray
    lbg: np.ndarray
    ubg: np.ndarray
    x0: np.ndarray
    variables: list[Any]
    """Pyomo variable data objects, in the order of ``x``."""
    constraints: list[Any]
    """Pyomo constraint data objects, in the order of ``g``."""
    objective_sense: int
    """+1 for a minimised Pyomo objective; -1 for a maximised one (``f`` is then its negation)."""


def import_pyomo_nl(model: Any) -> NLImport:
    """Write ``model`` with Pyomo's NL writer and import it into CasADi (see the module docstring)."""
    from pyomo.repn.plugins.nl_writer import NLWriter

    with tempfile.TemporaryDirectory(prefix="mcpkit_nl_") as tmp:
        path = os.path.join(tmp, "model.nl")
        with open(path, "w") as fh:
            info = NLWriter().write(
                model, fh, symbolic_solver_labels=False, linear_presolve=False, scale_model=False
            )
        builder = ca.NlpBuilder()
        builder.import_nl(path, {"verbose": False})
    variables = list(info.variables)
    constraints = list(info.constraints)
    nx = len(variables)
    if len(builder.x) != nx or len(builder.g) != len(constraints):
        raise RuntimeError(  # pragma: no cover - would be a Pyomo/CasADi format change
            f"NL import mismatch: Pyomo wrote {nx} variables and {len(constraints)} rows, "
            f"CasADi read {len(builder.x)} and {len(builder.g)}"
        )
    x = ca.SX.sym("x", nx)
    outs = [ca.MX(builder.f), ca.vertcat(*builder.g) if builder.g else ca.MX(0, 1)]
    fun = ca.Function("nl", list(builder.x), outs).expand()
    f, g = fun(*[x[k] for k in range(nx)]) if nx else fun()
    objs = info.objectives
    sense = -1 if objs and not objs[0].is_minimizing() else 1  # CasADi's import minimises -f then
    return NLImport(
        x=x,
        f=ca.SX(f),
        g=ca.SX(g),
        lbx=np.asarray(builder.x_lb, dtype=float),
        ubx=np.asarray(builder.x_ub, dtype=float),
        lbg=np.asarray(builder.g_lb, dtype=float),
        ubg=np.asarray(builder.g_ub, dtype=float),
        x0=np.asarray([v.value if v.value is not None else 0.0 for v in variables], dtype=float),
        variables=variables,
        constraints=constraints,
        objective_sense=sense,
    )


class CasadiIpopt:
    """A Pyomo solver: CasADi's bundled IPOPT on the NL import of the model (``"mcpkit_ipopt"``).

    Supports ``solve(model, tee=False, timelimit=None, load_solutions=True)``; options are IPOPT
    options, set through ``solver.options[name] = value``. Variable values are written back into
    the model; the returned :class:`pyomo.opt.SolverResults` carries IPOPT's status.
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

    def solve(self, model: Any, tee: bool = False, timelimit: float | None = None, **kwargs: Any) -> Any:
        from pyomo.opt import SolverResults, SolverStatus, TerminationCondition

        t0 = time.perf_counter()
        nlp = import_pyomo_nl(model)
        opts: dict[str, Any] = {"print_time": False, "ipopt.print_level": 5 if tee else 0, "ipopt.sb": "yes"}
        for k, v in dict(self.options).items():
            opts[f"ipopt.{k}"] = v
        if timelimit is not None:
            opts["ipopt.max_wall_time"] = float(timelimit)
        try:
            solver = ca.nlpsol("mcpkit_ipopt", "ipopt", {"x": nlp.x, "f": nlp.f, "g": nlp.g}, opts)
        except RuntimeError as exc:
            raise MCPInputError(f"mcpkit_ipopt: {exc}") from None
        sol = solver(x0=nlp.x0, lbx=nlp.lbx, ubx=nlp.ubx, lbg=nlp.lbg, ubg=nlp.ubg)
        status = str(solver.stats().get("return_status", "unknown"))
        x = np.asarray(sol["x"], dtype=float).reshape(-1)
        if kwargs.get("load_solutions", True):
            for v, val in zip(nlp.variables, x, strict=True):
                v.set_value(float(val), skip_validation=True)
        res = SolverResults()
        res.solver.name = self.name
        res.solver.message = status
        res.solver.wallclock_time = time.perf_counter() - t0
        ok = status in ("Solve_Succeeded", "Solved_To_Acceptable_Level")
        res.solver.status = SolverStatus.ok if ok else SolverStatus.warning
        res.solver.termination_condition = {
            "Solve_Succeeded": TerminationCondition.optimal,
            "Solved_To_Acceptable_Level": TerminationCondition.locallyOptimal,
            "Infeasible_Problem_Detected": TerminationCondition.infeasible,
            "Maximum_Iterations_Exceeded": TerminationCondition.maxIterations,
            "Maximum_WallTime_Exceeded": TerminationCondition.maxTimeLimit,
        }.get(status, TerminationCondition.error)
        self._rc = 0 if ok else 1
        return res


def register() -> None:
    """Register :class:`CasadiIpopt` with Pyomo's ``SolverFactory`` as ``"mcpkit_ipopt"``."""
    from pyomo.opt import SolverFactory

    if "mcpkit_ipopt" not in SolverFactory:
        SolverFactory.register("mcpkit_ipopt", doc="IPOPT bundled with CasADi, via mcpkit's NL import")(
            CasadiIpopt
        )
