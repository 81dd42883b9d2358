r"""The Pyomo route: declaration -> Pyomo -> slack-form MPCC -> IPOPT homotopy.

The declaration is lowered once with :class:`~mcpkit.lowering.pyomo.ToPyomo` and stated in the
same slack form as the CasADi route (:class:`~mcpkit.lowering.casadi.MCPToMPCC`): for every
non-fixed pair :math:`F_i(z; p) - w_i + v_i = 0` with :math:`(z_i - l_i) \perp w_i` when
:math:`l_i > -\infty` and :math:`(u_i - z_i) \perp v_i` when :math:`u_i < \infty`. Each pair's
:math:`G_j` (distance to the bound) and :math:`H_j` (slack) stay identifiable. IPOPT then runs
one of the homotopies (Scholtes :math:`G_j H_j \le \sigma`, smoothed Fischer-Burmeister,
penalty :math:`\rho \sum_j G_j H_j`) and stops on the natural residual of the ORIGINAL MCP,
finishing with the active-set polish. Two IPOPTs can run it:

(a) an ``ipopt`` executable (found by :func:`mcpkit.availability.ipopt_executable`), or
    ``ipopt="mcpkit_ipopt"``: the reformulation is stated in Pyomo with a mutable homotopy
    parameter (:class:`~mcpkit.solvers.pyomo_homotopy.PyomoHomotopy`) and each subproblem is
    solved by that Pyomo solver, primal warm starts between steps;
(b) no executable (a plain ``pip install``): the Pyomo slack-form model is written **once** to
    an NL file (no symbolic labels, no presolve, no scaling), imported with
    ``casadi.NlpBuilder.import_nl`` and handed to :class:`~mcpkit.solvers.homotopy.HomotopySolver`
    as an :class:`~mcpkit.mpcc.MPCC`. Parameters are written as variables with bounds
    :math:`p_j \le x \le p_j` (:class:`~mcpkit.lowering.pyomo.ToPyomo` with
    ``params_as_vars``); after the import those columns become the MPCC's parameter vector, so
    one NL import serves every parameter value (no re-write per parametric solve).

``RouteOutcome.extra["ipopt"]`` says which IPOPT ran.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import casadi as ca
import numpy as np
import pyomo.environ as pyo

from mcpkit.errors import MCPInputError
from mcpkit.lowering.casadi import lower_to_casadi
from mcpkit.lowering.pyomo import PyomoMap, ToPyomo
from mcpkit.mpcc import MPCC
from mcpkit.options import REFORMULATIONS, SolveOptions
from mcpkit.problem import MCP
from mcpkit.solvers.homotopy import Assessment, assess_mcp_point, make_homotopy
from mcpkit.solvers.nl_import import import_pyomo_nl
from mcpkit.solvers.pyomo_homotopy import PyomoHomotopy, pyomo_ipopt
from mcpkit.solvers.route import RouteOutcome

_METHODS = REFORMULATIONS


@dataclass
class SlackForm:
    """Index sets of the slack form (the same as :class:`~mcpkit.lowering.casadi.SlackMap`)."""

    n: int
    lower_idx: np.ndarray
    """Pairs with a finite lower bound (slack ``w``)."""
    upper_idx: np.ndarray
    """Pairs with a finite upper bound (slack ``v``)."""
    rows: np.ndarray
    """Non-fixed pairs (one equality row each)."""


def add_slack_form(
    m: pyo.Block, info: PyomoMap, lb: np.ndarray, ub: np.ndarray
) -> tuple[SlackForm, list[Any], list[Any]]:
    r"""Add slacks ``mcp_w``, ``mcp_v`` and rows ``mcp_eq``: :math:`F_i - w_i + v_i = 0`.

    Returns the index sets and the lists of Pyomo expressions :math:`G_j` and :math:`H_j`.
    """
    fixed = lb == ub
    lo = np.flatnonzero(np.isfinite(lb) & ~fixed)
    up = np.flatnonzero(np.isfinite(ub) & ~fixed)
    rows = np.flatnonzero(~fixed)
    m.mcp_w = pyo.Var(range(lo.size), bounds=(0.0, None), initialize=0.0)
    m.mcp_v = pyo.Var(range(up.size), bounds=(0.0, None), initialize=0.0)
    wpos = {int(i): k for k, i in enumerate(lo)}
    vpos = {int(i): k for k, i in enumerate(up)}
    F = info.F

    def eq_rule(_m: Any, r: int) -> Any:
        i = int(rows[r])
        e = F[i]
        if i in wpos:
            e = e - m.mcp_w[wpos[i]]
        if i in vpos:
            e = e + m.mcp_v[vpos[i]]
        return e == 0

    m.mcp_eq = pyo.Constraint(range(rows.size), rule=eq_rule)
    z = info.variables(m)
    G = [z[int(i)] - float(lb[i]) for i in lo] + [float(ub[i]) - z[int(i)] for i in up]
    H = [m.mcp_w[k] for k in range(lo.size)] + [m.mcp_v[k] for k in range(up.size)]
    return SlackForm(n=info.n, lower_idx=lo, upper_idx=up, rows=rows), G, H


#: Above this many Jacobian entries a linear constraint block is kept as one matrix product.
DENSE_LIMIT = 4000


def _matrix_form_if_linear(x: ca.SX, p: ca.SX, g: ca.SX) -> tuple[Any, Any, Any]:
    r"""Rewrite an affine :math:`g = A x + B p + c` with MX matrix products when it is large.

    Scalar SX graphs of dense rows (a 200x200 LCP has 40 000 products) make IPOPT's
    derivative set-up take seconds; one MX matrix product keeps it in milliseconds (the same
    choice :class:`~mcpkit.lowering.casadi.ToCasadi` makes for dense affine blocks).
    """
    xp = ca.vertcat(x, p)
    if g.numel() * xp.numel() <= DENSE_LIMIT or not ca.is_linear(g, xp):
        return x, p, g
    J = ca.Function("J", [x, p], [ca.jacobian(g, x), ca.jacobian(g, p), g])
    A, B, c = J(np.zeros(x.numel()), np.zeros(p.numel()))
    xm, pm = ca.MX.sym("x", x.numel()), ca.MX.sym("p", p.numel())
    gm = ca.mtimes(ca.DM(A), xm) + ca.DM(c)
    if p.numel():
        gm = gm + ca.mtimes(ca.DM(B), pm)
    return xm, pm, gm


class PyomoRoute:
    """IPOPT homotopy on the Pyomo lowering of an MCP (see the module docstring).

    Parameters
    ----------
    problem
        The declaration.
    method
        ``"scholtes"``, ``"scholtes_eq"``, ``"fb"`` or ``"penalty"``.
    options
        Stopping rules and homotopy settings.
    ipopt
        ``"auto"`` (an executable when one is found, else CasADi's IPOPT via an NL import),
        ``"executable"``, ``"casadi"`` or ``"mcpkit_ipopt"`` (see
        :func:`~mcpkit.solvers.pyomo_homotopy.pyomo_ipopt`).
    """

    backend = "pyomo"

    def __init__(self, problem: MCP, method: str, options: SolveOptions, ipopt: str = "auto") -> None:
        if method not in _METHODS:
            raise MCPInputError(f"PyomoRoute: unknown method {method!r}; valid: {list(_METHODS)}")
        solver, self.ipopt_used = pyomo_ipopt(ipopt)
        self.problem = problem
        self.method = method
        self.options = options
        self.cas = lower_to_casadi(problem)  # only for measuring residuals on the declaration
        self.lb, self.ub = problem.lb, problem.ub
        self._last: tuple[np.ndarray, np.ndarray | None, np.ndarray | None] | None = None
        if solver is not None:
            self._impl: _PyomoSideImpl | None = _PyomoSideImpl(problem, method, options, solver)
        else:
            self._impl = None
            self._build_nl_import()

    # ------------------------------------------------------------- (b) NL -> CasADi
    def _build_nl_import(self) -> None:
        m, info = ToPyomo(complementarity=False, params_as_vars=True).apply(self.problem)
        for v in info.variables(m):
            v.unfix()  # fixed pairs keep lb = ub as bounds so every z stays a column
        slack, _, _ = add_slack_form(m, info, self.lb, self.ub)
        self.slack = slack
        self.pyomo_model, self.pyomo_map = m, info
        zs = info.variables(m)
        ws = [m.mcp_w[k] for k in range(slack.lower_idx.size)]
        vs = [m.mcp_v[k] for k in range(slack.upper_idx.size)]
        ps = info.parameters(m)
        nx = len(zs) + len(ws) + len(vs)
        where: dict[int, tuple[str, int]] = {}
        for k, d in enumerate(zs + ws + vs):
            where[id(d)] = ("x", k)
        for k, d in enumerate(ps):
            where[id(d)] = ("p", k)
        nlp = import_pyomo_nl(m)
        cons = nlp.constraints
        if len(cons) != slack.rows.size:
            raise RuntimeError(  # pragma: no cover - would be a Pyomo/CasADi change
                f"NL import: expected {slack.rows.size} rows, the NL writer reported {len(cons)}"
            )
        x = ca.SX.sym("x", nx)
        p = ca.SX.sym("p", len(ps))
        args = []
        for d in nlp.variables:
            kind, k = where[id(d)]
            args.append(x[k] if kind == "x" else p[k])
        if cons:
            g = ca.Function("nl_g", [nlp.x], [nlp.g])(ca.vertcat(*args))
        else:
            g = ca.SX(0, 1)
        x, p, g = _matrix_form_if_linear(x, p, g)
        lbg, ubg = nlp.lbg, nlp.ubg
        lo, up, n = slack.lower_idx, slack.upper_idx, slack.n
        G = ca.vertcat(*[x[int(i)] - self.lb[i] for i in lo], *[self.ub[i] - x[int(i)] for i in up])
        H = x[n:nx]
        if G.numel() == 0:
            G, H = type(x)(0, 1), type(x)(0, 1)
        self.mpcc = MPCC(
            x=x,
            p=p,
            f=type(x)(0.0),
            g=g,
            lbg=lbg,
            ubg=ubg,
            lbx=np.concatenate([self.lb, np.zeros(nx - n)]),
            ubx=np.concatenate([self.ub, np.full(nx - n, np.inf)]),
            G=G,
            H=H,
            x0=self._lift(self.problem.start, self.problem.parameter_values),
            p0=self.problem.parameter_values,
            G_implied_by_bounds=True,
            H_implied_by_bounds=True,
            name=f"{self.problem.name}_pyomo",
        )
        self.nl_rows = cons
        self.homotopy = make_homotopy(self.mpcc, self.method, self.options)

    def _lift(self, z: np.ndarray, p: np.ndarray) -> np.ndarray:
        F = np.asarray(self.cas.F_fun(z, p), dtype=float).reshape(-1)
        F = np.where(np.isfinite(F), F, 0.0)
        s = self.slack
        return np.concatenate([z, np.maximum(F[s.lower_idx], 0.0), np.maximum(-F[s.upper_idx], 0.0)])

    def _assess(self, x: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, Assessment]:
        n = self.problem.n
        x = x.copy()
        x[:n], _, a = assess_mcp_point(self.cas, x[:n], p)
        return x, a

    def build(self) -> PyomoRoute:
        """Build all IPOPT instances now (CasADi IPOPT only)."""
        if self._impl is None:
            self.homotopy.build()
        return self

    def solve(self, p: np.ndarray, z0: np.ndarray, warm: bool) -> RouteOutcome:
        """Run the homotopy at parameters ``p`` from ``z0`` (see the module docstring)."""
        p = np.asarray(p, dtype=float).reshape(-1)
        if self._impl is not None:
            out = self._impl.solve(p, z0, warm)
            out.extra["ipopt"] = self.ipopt_used
            return out
        x0 = self._lift(np.asarray(z0, dtype=float), p)
        lam_x = lam_g = None
        if warm and self._last is not None:
            _, lam_x, lam_g = self._last
        res = self.homotopy.run(x0, p, self._assess, warm_start=warm, lam_x0=lam_x, lam_g0=lam_g)
        if res.x is not None:
            self._last = (res.x, res.lam_x, res.lam_g)
        z = None if res.x is None else np.asarray(res.x[: self.problem.n], dtype=float)
        return RouteOutcome(
            z=z,
            termination=res.termination,
            raw_status=res.raw_status,
            iterations=res.iterations,
            trace=res.trace,
            extra={"ipopt": self.ipopt_used},
        )


class _PyomoSideImpl:
    r"""Route (a): the homotopy stated in Pyomo (:class:`~mcpkit.solvers.pyomo_homotopy.PyomoHomotopy`)
    on the slack form, solved by a Pyomo NLP solver (an ``ipopt`` executable, or
    ``mcpkit_ipopt``)."""

    def __init__(self, problem: MCP, method: str, options: SolveOptions, solver: Any) -> None:
        self.problem = problem
        self.cas = lower_to_casadi(problem)
        m, info = ToPyomo(complementarity=False).apply(problem)
        slack, G, H = add_slack_form(m, info, problem.lb, problem.ub)
        self.m, self.info, self.slack = m, info, slack
        self.homotopy = PyomoHomotopy(m, G, H, 0.0, method, options, solver, rows=list(m.mcp_eq.values()))

    def _set_start(self, z: np.ndarray, p: np.ndarray) -> None:
        self.info.set_values(self.m, z)
        F = np.asarray(self.cas.F_fun(z, p), dtype=float).reshape(-1)
        F = np.where(np.isfinite(F), F, 0.0)
        for k, i in enumerate(self.slack.lower_idx):
            self.m.mcp_w[k].set_value(max(F[i], 0.0))
        for k, i in enumerate(self.slack.upper_idx):
            self.m.mcp_v[k].set_value(max(-F[i], 0.0))

    def solve(self, p: np.ndarray, z0: np.ndarray, warm: bool) -> RouteOutcome:
        self.info.set_parameters(self.m, p)
        self._set_start(np.asarray(z0, dtype=float), p)

        def assess() -> tuple[np.ndarray, Assessment]:
            vals = [v.value for v in self.info.variables(self.m)]
            z = np.array([np.nan if v is None else float(v) for v in vals], dtype=float)
            zc, _, a = assess_mcp_point(self.cas, z, p)
            return zc, a

        return self.homotopy.run(assess, warm)
