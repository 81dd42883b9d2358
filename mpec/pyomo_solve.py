r"""The MPCC relaxations on Pyomo: the alternative to the CasADi engine.

The problem is lowered once, :class:`~mcpkit.mpec.problem.ToStandardMPCC` then
:func:`~mcpkit.mpec.to_pyomo.standard_pyomo_model` (the CasADi graph replayed as Pyomo
expressions), and solved by one of two IPOPTs, as for MCPs on the Pyomo backend:

(a) **homotopy in Pyomo** — an ``ipopt`` executable when one is found
    (:func:`mcpkit.availability.ipopt_executable`), or ``ipopt="mcpkit_ipopt"`` (CasADi's IPOPT
    as a Pyomo solver): the reformulation (Scholtes inequality or equality form, smoothed
    Fischer–Burmeister, penalty or elastic) is added to the Pyomo model with a mutable parameter
    (:class:`~mcpkit.solvers.pyomo_homotopy.PyomoHomotopy`) and each subproblem is one Pyomo
    solve;
(b) **NL import** (the default with no executable) — the Pyomo model
    is written once by Pyomo's NL writer (parameters as bounded columns), imported with
    ``casadi.NlpBuilder.import_nl`` and solved by the CasADi homotopy with its recovery and
    polish; every function IPOPT evaluates comes from the Pyomo model.

Either way every candidate is judged on the ORIGINAL general-bounds pairs and constraints, with
the same verdict as :func:`mcpkit.mpec.engine.solve_general` (``solved`` = complementarity
residual and constraint violation <= ``tol``); ``result.backend`` is ``"pyomo"`` and
``result.extra["ipopt"]`` says which IPOPT ran.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import casadi as ca
import numpy as np

from mcpkit.errors import MCPInputError
from mcpkit.lowering.base import Chain, Lowering
from mcpkit.mpcc import MPCC
from mcpkit.mpcc_solve import MPCCSolver, mpcc_result
from mcpkit.mpec.problem import GeneralMPCC, ToStandardMPCC
from mcpkit.mpec.to_pyomo import standard_pyomo_model
from mcpkit.options import REFORMULATIONS, SolveOptions
from mcpkit.problem import as_float_vector
from mcpkit.result import MCPResult
from mcpkit.solvers.homotopy import Assessment
from mcpkit.solvers.nl_import import import_pyomo_nl
from mcpkit.solvers.pyomo_homotopy import PyomoHomotopy, pyomo_ipopt


@dataclass(frozen=True)
class NLRoundTrip:
    """Inverse data of :class:`ThroughPyomoNL`: the variable count (the columns keep their order)."""

    nx: int


class ThroughPyomoNL(Lowering):
    r"""Standard MPCC -> Pyomo model -> NL file -> standard MPCC of CasADi expressions.

    The returned MPCC evaluates :math:`f, g, G, H` from the NL import of the Pyomo model, with the
    Pyomo parameters (written as columns :math:`p \le x \le p`) as its parameter vector.
    """

    def apply(self, mpcc: MPCC) -> tuple[MPCC, NLRoundTrip]:
        m, info = standard_pyomo_model(mpcc, mpcc.p0, params_as_vars=True)
        nlp = import_pyomo_nl(m)
        nx, npar = mpcc.x.numel(), mpcc.p.numel()
        x, p = ca.SX.sym("x", nx), ca.SX.sym("p", npar)
        where = {id(v): x[i] for i, v in enumerate(m.x.values())}
        where.update({id(v): p[j] for j, v in enumerate(m.p.values())})
        missing = [v.name for v in nlp.variables if id(v) not in where]
        if missing:  # pragma: no cover - the model only has x and p columns
            raise RuntimeError(f"NL import: unexpected columns {missing[:5]}")
        args = ca.vertcat(*[where[id(v)] for v in nlp.variables]) if nlp.variables else ca.SX(0, 1)
        fun = ca.Function("nl", [nlp.x], [nlp.f * nlp.objective_sense, nlp.g])
        f, g = fun(args)
        row = {id(c): k for k, c in enumerate(nlp.constraints)}

        def pick(name: str, exprs: list[Any]) -> ca.SX:
            # the NL writer moves a row's constant into its bounds: G_j = body - lower bound
            comp = getattr(m, name)
            rows = iter(comp.values())
            out = []
            for e in exprs:
                if isinstance(e, int | float):  # constant rows are not written
                    out.append(ca.SX(float(e)))
                else:
                    r = row[id(next(rows))]
                    out.append(g[r] - nlp.lbg[r])
            return ca.vertcat(*out) if out else ca.SX(0, 1)

        g_rows = [row[id(c)] for c in m.g.values()]
        lowered = MPCC(
            x=x,
            p=p,
            f=f,
            g=g[g_rows] if g_rows else ca.SX(0, 1),
            lbg=nlp.lbg[g_rows],
            ubg=nlp.ubg[g_rows],
            lbx=mpcc.lbx,
            ubx=mpcc.ubx,
            G=pick("mpcc_G", info.G),
            H=pick("mpcc_H", info.H),
            x0=mpcc.x0,
            p0=mpcc.p0,
            name=f"{mpcc.name}_pyomo",
        )
        return lowered, NLRoundTrip(nx)

    def invert(self, solution: np.ndarray, inverse_data: NLRoundTrip) -> np.ndarray:
        return np.asarray(solution, dtype=float).reshape(-1)[: inverse_data.nx]


class PyomoMPCCSolver:
    """A general-bounds MPCC on the Pyomo backend (see the module docstring).

    Parameters
    ----------
    problem
        The MPCC: general bounds (:class:`~mcpkit.mpec.problem.GeneralMPCC`) or standard
        (:class:`~mcpkit.mpcc.MPCC`, e.g. a planning horizon).
    method
        One of :data:`~mcpkit.options.REFORMULATIONS` (``auto``: ``scholtes``).
    options, **kwargs
        :class:`~mcpkit.options.SolveOptions` and/or its fields.
    ipopt
        ``"auto"`` (an executable when found, else the NL import), ``"executable"``,
        ``"casadi"`` (NL import) or ``"mcpkit_ipopt"`` (homotopy in Pyomo, CasADi's IPOPT).
    """

    def __init__(
        self,
        problem: GeneralMPCC | MPCC,
        method: str = "scholtes",
        options: SolveOptions | None = None,
        ipopt: str = "auto",
        **kwargs: Any,
    ) -> None:
        self.options = SolveOptions.from_kwargs(options, **kwargs)
        name = "scholtes" if method == "auto" else str(method).lower()
        if name not in REFORMULATIONS:
            raise MCPInputError(f"unknown MPCC method {method!r}; valid: {list(REFORMULATIONS)}")
        if not isinstance(problem, GeneralMPCC | MPCC):
            raise MCPInputError(
                f"PyomoMPCCSolver: expected a GeneralMPCC or an MPCC, got {type(problem).__name__}"
            )
        self.problem, self.method = problem, name
        standard = isinstance(problem, MPCC)
        solver, self.ipopt_used = pyomo_ipopt(ipopt)
        self._pyomo_side = solver is not None
        if self._pyomo_side:
            self.std = problem if standard else ToStandardMPCC().apply(problem)[0]
            self.model, self.info = standard_pyomo_model(self.std, self.std.p0)
            self.homotopy = PyomoHomotopy(
                self.model, self.info.G, self.info.H, self.info.f, name, self.options, solver,
                rows=list(self.model.g.values()),
            )  # fmt: skip
        else:
            lowering = ThroughPyomoNL() if standard else Chain([ToStandardMPCC(), ThroughPyomoNL()])
            self.inner = MPCCSolver(problem, name, self.options, lowering=lowering)

    def solve(self, p: Any = None, x0: Any = None) -> MCPResult:
        """Solve at parameter values ``p`` from ``x0`` (defaults: the problem's ``p0``, ``x0``)."""
        if not self._pyomo_side:
            res = self.inner.solve(p=p, x0=x0)
        else:
            res = self._solve_in_pyomo(p, x0)
        res.backend = "pyomo"
        res.extra["ipopt"] = self.ipopt_used
        return res

    def _solve_in_pyomo(self, p: Any, x0: Any) -> MCPResult:
        prob, std, m = self.problem, self.std, self.model
        pv = prob.p0 if p is None else as_float_vector(p, prob.p0.size, "p", allow_inf=False)
        xs = std.x0.copy()
        if x0 is not None:
            xo = as_float_vector(x0, prob.x0.size, "x0", allow_inf=False)
            xs[: xo.size] = xo
        for j, v in m.p.items():
            v.set_value(float(pv[j]))
        for i, v in m.x.items():
            v.set_value(float(np.clip(xs[i], std.lbx[i], std.ubx[i])), skip_validation=True)
        nx = prob.x0.size

        def assess() -> tuple[np.ndarray, Assessment]:
            x = self.info.x_values()
            x = np.clip(x, std.lbx, std.ubx)
            comp, viol, _ = prob.residuals(x[:nx], pv)
            return x, Assessment(comp, viol)

        t0 = time.perf_counter()
        out = self.homotopy.run(assess)
        x = None if out.z is None else out.z[:nx]
        return mpcc_result(
            prob, x, pv, out.termination, self.options.tol,
            iterations=out.iterations, wall_time_s=time.perf_counter() - t0, backend="pyomo",
            method=self.method, trace=out.trace, raw_status=out.raw_status,
        )  # fmt: skip
