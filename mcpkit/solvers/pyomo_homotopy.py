r"""The IPOPT homotopy stated in Pyomo and solved by a Pyomo NLP solver.

For pairs :math:`0 \le G_j \perp H_j \ge 0` given as Pyomo expressions of a model whose
constraints already hold :math:`g`, the bounds and :math:`G, H \ge 0`, :class:`PyomoHomotopy`
adds one reformulation with a mutable parameter ``mcp_t``:

* ``scholtes``: :math:`G_j H_j \le t` (``scholtes_eq``: :math:`= t`);
* ``fb``: :math:`G_j + H_j - \sqrt{G_j^2 + H_j^2 + 2t^2} = 0`;
* ``penalty``: objective :math:`f + t \sum_j G_j H_j`;
* ``elastic``: each given row :math:`c_l \le c_i(x) \le c_u` becomes
  :math:`c_i + s_i \ge c_l`, :math:`c_i - s_i \le c_u` with :math:`s_i \ge 0` (started at the
  row's violation), objective :math:`f + t(\sum_i s_i + \sum_j G_j H_j)`;

and the active-set polish rows :math:`m_j G_j + (1 - m_j) H_j = 0` (mask :math:`m_j = 1` where
:math:`G_j \le H_j`), deactivated until used. :meth:`PyomoHomotopy.run` walks the parameter
schedule of the same reformulation objects as the CasADi homotopy
(:func:`~mcpkit.solvers.homotopy.reformulation_for`), calls the solver once per value, and judges
every point with the caller's ``assess`` on the **original** problem; IPOPT's tolerance is
``inner_tol_factor * tol`` and its wall-time limit the time left. During the polish the elastic
variables are fixed at 0, so it solves the original constraints.

The solver is any Pyomo NLP solver: an ``ipopt`` executable (``SolverFactory("ipopt",
executable=...)``) or ``SolverFactory("mcpkit_ipopt")`` (CasADi's IPOPT through an NL file,
always available).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyomo.environ as pyo

from mcpkit.errors import MCPInputError, SolverNotAvailableError
from mcpkit.options import SolveOptions
from mcpkit.result import HomotopyStep, Termination
from mcpkit.solvers.homotopy import Assessment, reformulation_for
from mcpkit.solvers.route import RouteOutcome

#: Reformulations this Pyomo homotopy states.
PYOMO_METHODS = ("scholtes", "scholtes_eq", "fb", "penalty", "elastic")

#: Values of the ``ipopt=`` argument of the Pyomo routes.
IPOPT_CHOICES = ("auto", "executable", "casadi", "mcpkit_ipopt")


def pyomo_ipopt(ipopt: str) -> tuple[Any | None, str]:
    """Which IPOPT a Pyomo route uses: ``(Pyomo solver, description)``.

    ``"auto"``: an ``ipopt`` executable when :func:`~mcpkit.availability.ipopt_executable`
    finds one, else ``None`` (the route then writes an NL file once and runs the CasADi
    homotopy on its import); ``"executable"``: that executable or
    :class:`~mcpkit.errors.SolverNotAvailableError`; ``"casadi"``: ``None``; ``"mcpkit_ipopt"``:
    CasADi's IPOPT as a Pyomo solver, the homotopy stated in Pyomo.
    """
    from mcpkit.availability import ipopt_executable
    from mcpkit.solvers.nl_import import register

    if ipopt not in IPOPT_CHOICES:
        raise MCPInputError(f"ipopt must be one of {list(IPOPT_CHOICES)}, got {ipopt!r}")
    exe = ipopt_executable() if ipopt in ("auto", "executable") else None
    if ipopt == "executable" and exe is None:
        raise SolverNotAvailableError(
            "no `ipopt` executable on PATH or in idaes-pse's bin folder; use ipopt='auto' "
            "(CasADi's IPOPT through an NL file) or install one (idaes get-extensions)"
        )
    if exe is not None:
        return pyo.SolverFactory("ipopt", executable=exe), f"executable {exe}"
    if ipopt == "mcpkit_ipopt":
        register()
        return pyo.SolverFactory(
            "mcpkit_ipopt"
        ), "mcpkit_ipopt (homotopy in Pyomo, CasADi's IPOPT per subproblem)"
    return None, "casadi (via NL import of the Pyomo model)"


PyomoAssessor = Callable[[], tuple[np.ndarray, Assessment]]
"""Reads the model's current point and returns ``(point, assessment on the original problem)``."""


class PyomoHomotopy:
    """A Pyomo model with one reformulation added (see the module docstring).

    Parameters
    ----------
    model
        The Pyomo model (constraints :math:`g`, bounds and :math:`G, H \\ge 0` already in it).
    G, H
        Pyomo expressions of the pairs, same length.
    objective
        The objective expression :math:`f` (``0.0`` for an MCP); any active objective of the
        model is deactivated.
    method
        One of :data:`PYOMO_METHODS`.
    options
        Stopping rules and homotopy settings.
    solver
        A Pyomo solver object.
    rows
        The constraint rows :math:`g` that the ``elastic`` mode relaxes (ignored otherwise).
    """

    def __init__(
        self,
        model: pyo.Block,
        G: list[Any],
        H: list[Any],
        objective: Any,
        method: str,
        options: SolveOptions,
        solver: Any,
        rows: Sequence[Any] = (),
    ) -> None:
        if method not in PYOMO_METHODS:
            raise MCPInputError(f"the Pyomo homotopy states {list(PYOMO_METHODS)}, not {method!r}")
        if len(G) != len(H):
            raise MCPInputError(f"PyomoHomotopy: {len(G)} G expressions but {len(H)} H expressions")
        self.m, self.G, self.H, self.method, self.options, self.solver = model, G, H, method, options, solver
        m = model
        for obj in m.component_data_objects(pyo.Objective, active=True):
            obj.deactivate()
        nc = len(G)
        m.mcp_t = pyo.Param(mutable=True, initialize=1.0)
        comp = sum(G[j] * H[j] for j in range(nc))
        self._rows = [c for c in rows if c.active and (c.has_lb() or c.has_ub())]
        if method == "elastic":
            rs = self._rows
            m.mcp_s = pyo.Var(range(len(rs)), bounds=(0.0, None), initialize=0.0)
            lo = [k for k, c in enumerate(rs) if c.has_lb()]
            up = [k for k, c in enumerate(rs) if c.has_ub()]
            m.mcp_el_lo = pyo.Constraint(lo, rule=lambda _m, k: rs[k].body + m.mcp_s[k] >= rs[k].lower)
            m.mcp_el_up = pyo.Constraint(up, rule=lambda _m, k: rs[k].body - m.mcp_s[k] <= rs[k].upper)
            for c in rs:
                c.deactivate()
            m.mcp_obj = pyo.Objective(expr=objective + m.mcp_t * (sum(m.mcp_s.values()) + comp))
        elif method == "penalty":
            m.mcp_obj = pyo.Objective(expr=objective + m.mcp_t * comp)
        else:
            m.mcp_obj = pyo.Objective(expr=objective)
            if method == "scholtes_eq":
                m.mcp_rel = pyo.Constraint(range(nc), rule=lambda _m, j: G[j] * H[j] == m.mcp_t)
            elif method == "scholtes":
                m.mcp_rel = pyo.Constraint(range(nc), rule=lambda _m, j: G[j] * H[j] <= m.mcp_t)
            else:  # fb
                m.mcp_rel = pyo.Constraint(
                    range(nc),
                    rule=lambda _m, j: G[j] + H[j] - pyo.sqrt(G[j] ** 2 + H[j] ** 2 + 2 * m.mcp_t**2) == 0,
                )
        m.mcp_mask = pyo.Param(range(nc), mutable=True, initialize=1.0)
        m.mcp_pol = pyo.Constraint(
            range(nc), rule=lambda _m, j: m.mcp_mask[j] * G[j] + (1 - m.mcp_mask[j]) * H[j] == 0
        )
        m.mcp_pol.deactivate()
        self._vars = list(m.component_data_objects(pyo.Var, descend_into=True))
        self.is_executable = getattr(solver, "name", "") == "ipopt"

    # ----------------------------------------------------------------- one NLP
    def _run_solver(self, warm: bool, time_left: float | None) -> tuple[str, float]:
        opts = self.options
        tol = opts.inner_tol_factor * opts.tol
        o: dict[str, Any] = {
            "tol": tol,
            "constr_viol_tol": tol,
            "compl_inf_tol": tol,
            "acceptable_tol": max(tol, 1e-6),
            "max_iter": opts.max_inner_iter,
        }
        if warm and self.is_executable:
            o.update({"warm_start_init_point": "yes", "mu_init": 1e-5, "warm_start_bound_push": 1e-9})
        if time_left is not None:
            o["max_wall_time"] = max(time_left, 1e-3)
        o.update(opts.ipopt_options)
        t0 = time.perf_counter()
        try:
            if self.is_executable:
                res = self.solver.solve(self.m, tee=opts.verbose, options=o, load_solutions=False)
                if len(res.solution) > 0:
                    self.m.solutions.load_from(res)
            else:
                self.solver.options.update(o)
                res = self.solver.solve(self.m, tee=opts.verbose)
        except Exception as exc:  # the executable crashed or wrote no solution
            return f"exception: {str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__}", (
                time.perf_counter() - t0
            )
        msg = str(getattr(res.solver, "message", "") or "")
        status = msg if msg and not self.is_executable else str(res.solver.termination_condition)
        return status, time.perf_counter() - t0

    def _snapshot(self) -> list[float | None]:
        return [v.value for v in self._vars]

    def _restore(self, values: list[float | None]) -> None:
        for v, val in zip(self._vars, values, strict=True):
            v.set_value(val, skip_validation=True)

    def _polish(
        self, assess: PyomoAssessor, k: int, trace: list[HomotopyStep], time_left: float | None
    ) -> tuple[np.ndarray, Assessment]:
        m = self.m
        for j in range(len(self.G)):
            m.mcp_mask[j].set_value(1.0 if pyo.value(self.G[j]) <= pyo.value(self.H[j]) else 0.0)
        if hasattr(m, "mcp_rel"):
            m.mcp_rel.deactivate()
        if hasattr(m, "mcp_s"):  # the original rows, exactly
            m.mcp_s.fix(0.0)
        m.mcp_pol.activate()
        status, wall = self._run_solver(True, time_left)
        m.mcp_pol.deactivate()
        if hasattr(m, "mcp_s"):
            m.mcp_s.unfix()
        if hasattr(m, "mcp_rel"):
            m.mcp_rel.activate()
        z, a = assess()
        trace.append(HomotopyStep(k, 0.0, a.residual, status, 0, wall, "polish"))
        return z, a

    # ----------------------------------------------------------------- the loop
    def run(self, assess: PyomoAssessor, warm: bool = False) -> RouteOutcome:
        """Run the homotopy from the model's current point (see the module docstring).

        Returns the best point found (feasible first, then smallest residual) with the
        termination reason; ``CONVERGED`` only when ``assess`` says the tolerance is met.
        """
        opts = self.options
        best_z, best_a = assess()
        trace: list[HomotopyStep] = []
        raw = "not started"
        t_start = time.perf_counter()
        termination = Termination.ITERATION_LIMIT
        if warm and best_a.meets(opts.tol):
            return RouteOutcome(best_z, Termination.CONVERGED, "start point", 0, trace)

        def left() -> float | None:
            return None if opts.time_limit is None else opts.time_limit - (time.perf_counter() - t_start)

        if hasattr(self.m, "mcp_s"):  # elastic variables start at the rows' violations
            for k, c in enumerate(self._rows):
                v = pyo.value(c.body)
                lo = pyo.value(c.lower) - v if c.has_lb() else 0.0
                up = v - pyo.value(c.upper) if c.has_ub() else 0.0
                self.m.mcp_s[k].set_value(max(lo, up, 0.0))
        reform = reformulation_for(self.method)
        for k, t in enumerate(reform.schedule(opts)):
            remaining = left()
            if remaining is not None and remaining <= 0:
                termination = Termination.TIME_LIMIT
                break
            self.m.mcp_t.set_value(float(t))
            raw, wall = self._run_solver(warm or k > 0, remaining)
            z, a = assess()
            trace.append(HomotopyStep(k, float(t), a.residual, raw, 0, wall))
            if np.isfinite(a.residual) and a.key(opts.tol) < best_a.key(opts.tol):
                best_z, best_a = z, a
            if a.meets(opts.tol):
                termination = Termination.CONVERGED
                break
            if opts.polish and a.residual <= opts.polish_trigger and self.G:
                saved = self._snapshot()
                zp, ap = self._polish(assess, k, trace, left())
                if ap.key(opts.tol) < best_a.key(opts.tol):
                    best_z, best_a = zp, ap
                if ap.meets(opts.tol):
                    termination = Termination.CONVERGED
                    break
                self._restore(saved)  # continue the homotopy from the relaxed point
        else:
            floor = reform.parameter_name != "rho"
            termination = Termination.STALLED if floor else Termination.ITERATION_LIMIT
        z = best_z if np.isfinite(best_z).all() else None
        return RouteOutcome(z, termination, raw, len(trace), trace)
