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

It speaks the ``ipopt`` executable's dialect: primal start from the variables' values, dual start
(with ``warm_start_init_point=yes``) from the export suffixes ``ipopt_zL_in``, ``ipopt_zU_in``
and ``dual``, and the multipliers back in the import suffixes ``ipopt_zL_out``,
``ipopt_zU_out`` and ``dual`` (:func:`ampl_multipliers` gives the sign conventions), so code
written for the executable runs unchanged on it. IPOPT's iteration count is in
``results.solver.statistics.black_box.number_of_iterations``.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

import casadi as ca
import numpy as np

from mcpkit.errors import MCPInputError
from mcpkit.homotopy.ipopt import ipopt_iterations

#: IPOPT's AMPL suffixes: bound multipliers in (warm start) and out, and the row multipliers.
ZL_IN, ZU_IN, ZL_OUT, ZU_OUT, DUAL = "ipopt_zL_in", "ipopt_zU_in", "ipopt_zL_out", "ipopt_zU_out", "dual"


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

    row_of: dict[int, int] = field(init=False, repr=False)
    """``id(constraint) -> row of g``."""

    def __post_init__(self) -> None:
        self.row_of = {id(c): r for r, c in enumerate(self.constraints)}

    def over(self, *groups: list[Any]) -> tuple[list[ca.SX], ca.SX, ca.SX]:
        """``(symbols, f, g)`` with the columns renamed: one new SX vector per group of Pyomo variables.

        Every column of the import must belong to a group; a group's variables that the NL writer
        left out (they appear in no row) are symbols that ``f`` and ``g`` do not depend on.
        """
        syms = [ca.SX.sym(f"c{k}", len(grp)) for k, grp in enumerate(groups)]
        where = {id(v): syms[k][i] for k, grp in enumerate(groups) for i, v in enumerate(grp)}
        missing = [v.name for v in self.variables if id(v) not in where]
        if missing:
            raise MCPInputError(f"NL import: columns outside the given groups: {missing[:5]}")
        args = [where[id(v)] for v in self.variables]
        fun = ca.Function("nl_over", [self.x], [self.f, self.g])
        f, g = fun(ca.vertcat(*args) if args else ca.SX(0, 1))
        return syms, f, g

    def body(self, g: ca.SX, constraint: Any) -> ca.SX:
        """The Pyomo body of an equality row ``body == c``: ``g[r] - lbg[r]`` (the NL writer moves
        the body's constant into the bounds); for a row it did not write, the body's constant value."""
        r = self.row_of.get(id(constraint))
        if r is None:
            from pyomo.environ import value

            return ca.SX(float(value(constraint.body)))
        return g[r] - self.lbg[r]


#: NL operator codes by arity (Gay, "Writing .nl files"): the rest of ``oN`` are binary.
_UNARY_OPS = frozenset({13, 14, 15, 16, 34, *range(37, 48), *range(49, 54)})
_NARY_OPS = frozenset({11, 12, 54, 59, 60, 61, 70, 71, 74})
_IF_OPS = frozenset({35, 65, 72})


def _nl_expression(lines: list[str], i: int) -> tuple[list[str], int]:
    """The NL expression starting at line ``i`` (prefix notation, one token a line), with every
    ``if C then A else B`` (``o35``) rewritten as ``C*A + (not C)*B``; returns ``(lines, next i)``."""
    tok = lines[i].split("#", 1)[0].strip()
    if tok[0] != "o":  # a number (n, s, l), a variable (v) or a string (h)
        return [lines[i]], i + 1
    code = int(tok[1:])
    if code in _NARY_OPS:
        count = int(lines[i + 1].split("#", 1)[0])
        out, j = lines[i : i + 2], i + 2
        for _ in range(count):
            sub, j = _nl_expression(lines, j)
            out += sub
        return out, j
    arity = 1 if code in _UNARY_OPS else 3 if code in _IF_OPS else 2
    args, j = [], i + 1
    for _ in range(arity):
        sub, j = _nl_expression(lines, j)
        args.append(sub)
    if code == 35:
        cond, then, other = args
        return ["o0", "o2", *cond, *then, "o2", "o34", *cond, *other], j
    if code in _IF_OPS:
        raise MCPInputError(f"NL import: operator o{code} (an if-then-else on strings) is not supported")
    return [lines[i]] + [t for a in args for t in a], j


def without_if_then_else(text: str) -> str:
    r"""NL text with ``if C then A else B`` written as :math:`C A + (\lnot C) B`.

    CasADi's NL reader has comparisons and logical operators but no if-then-else, which Pyomo's
    ``Expr_if`` (and so the replay of ``if_else``, ``fmin``, ``fmax``, ``sign``) writes. Both
    branches are then evaluated (a NaN or infinity in the branch not taken propagates, where
    ``Expr_if`` would ignore it); value and derivatives agree elsewhere.
    """
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        if lines[i].split("#", 1)[0].strip() == "o35":  # op lines occur only inside expressions
            sub, i = _nl_expression(lines, i)
            out += sub
        else:
            out.append(lines[i])
            i += 1
    return "\n".join(out)


def import_pyomo_nl(model: Any, export_nonlinear_variables: list[Any] | None = None) -> NLImport:
    """Write ``model`` with Pyomo's NL writer and import it into CasADi (see the module docstring).

    ``export_nonlinear_variables`` (an NL writer option) lists variables to write as columns
    even when they appear in no active row or objective (the writer drops those otherwise).
    """
    from pyomo.core.base.suffix import Suffix
    from pyomo.repn.plugins.nl_writer import NLWriter

    # CasADi's reader takes no suffix sections: export suffixes (warm starts) are read from the
    # model itself by CasadiIpopt, so they stay out of the file
    exported = [
        s for s in model.component_data_objects(Suffix, active=True, descend_into=True) if s.export_enabled()
    ]
    for suffix in exported:
        suffix.deactivate()
    try:
        with tempfile.TemporaryDirectory(prefix="mcpkit_nl_") as tmp:
            path = os.path.join(tmp, "model.nl")
            with open(path, "w") as fh:
                info = NLWriter().write(
                    model,
                    fh,
                    symbolic_solver_labels=False,
                    linear_presolve=False,
                    scale_model=False,
                    export_nonlinear_variables=export_nonlinear_variables,
                )
            with open(path) as fh:
                text = fh.read()
            if "\no35\n" in text:
                with open(path, "w") as fh:
                    fh.write(without_if_then_else(text))
            builder = ca.NlpBuilder()
            builder.import_nl(path, {"verbose": False})
    finally:
        for suffix in exported:
            suffix.activate()
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
    f, g = fun.call([x[k] for k in range(nx)])  # a list even with no columns (fun() gives a dict)
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


def ampl_multipliers(
    lam_x: np.ndarray, lam_g: np.ndarray, sense: int = 1
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""CasADi's multipliers -> the values of IPOPT's AMPL suffixes ``(zL, zU, dual)``.

    CasADi reports :math:`\lambda_x = z_U - z_L` and IPOPT's own :math:`\lambda_g`; IPOPT's AMPL
    interface writes (and reads back, for a warm start) :math:`\mathrm{zL} = s z_L`,
    :math:`\mathrm{zU} = -s z_U` and :math:`\mathrm{dual} = -s \lambda_g` with the objective
    sense :math:`s` (+1 minimise), so :math:`z_L = \max(0, -\lambda_x)`,
    :math:`z_U = \max(0, \lambda_x)` as CasADi splits them for its own warm start.
    """
    lx = np.asarray(lam_x, dtype=float)
    return sense * np.maximum(-lx, 0.0), -sense * np.maximum(lx, 0.0), -sense * np.asarray(lam_g, dtype=float)


def casadi_multipliers(
    zL: np.ndarray, zU: np.ndarray, dual: np.ndarray, sense: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """The inverse of :func:`ampl_multipliers`: ``(lam_x, lam_g)`` from the suffix values."""
    z_L = sense * np.asarray(zL, dtype=float)
    z_U = -sense * np.asarray(zU, dtype=float)
    return z_U - z_L, -sense * np.asarray(dual, dtype=float)


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
