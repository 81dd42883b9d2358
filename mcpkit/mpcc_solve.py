r"""Solving a user's :class:`~mcpkit.mpcc.MPCC` with the same IPOPT homotopies as MCPs.

The result reuses :class:`~mcpkit.result.MCPResult` by reading the pairs
:math:`0 \le G_j \perp H_j \ge 0` as NCP pairs: ``natural_residual`` is
:math:`\max_j |\min(G_j, H_j)|` (the natural residual of those pairs), ``bound_violation`` is the
constraint violation of :math:`g`, the bounds on :math:`x` and the signs of :math:`G, H`, and
``objective`` is :math:`f`. ``z`` holds :math:`x`; ``F`` holds :math:`H(x)`, and ``extra["G"]``
holds :math:`G(x)`.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from mcpkit.errors import MCPInputError
from mcpkit.mpcc import MPCC
from mcpkit.options import Method, SolveOptions
from mcpkit.problem import _as_float_vector
from mcpkit.residuals import classify_pairs
from mcpkit.result import MCPResult, SolutionStatus, Termination
from mcpkit.solvers.homotopy import Assessment, HomotopySolver, reformulation_for


class MPCCSolver:
    """An MPCC with one reformulation, built once; :meth:`solve` for many parameter values."""

    def __init__(
        self,
        mpcc: MPCC,
        method: str | Method = "scholtes",
        options: SolveOptions | None = None,
        **kwargs: Any,
    ) -> None:
        self.options = SolveOptions.from_kwargs(options, **kwargs)
        m = Method.parse(method)
        if m is Method.AUTO:
            m = Method.SCHOLTES
        if m is Method.PATH:
            raise MCPInputError("PATH solves MCPs, not MPCCs with an objective; use scholtes, fb or penalty")
        self.method = m
        self.mpcc = mpcc
        self.homotopy = HomotopySolver(mpcc, reformulation_for(m.value), self.options)

    def _assess(self, x: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, Assessment]:
        x = np.clip(x, self.mpcc.lbx, self.mpcc.ubx)
        return x, Assessment(self.mpcc.complementarity_residual(x, p), self.mpcc.constraint_violation(x, p))

    def solve(self, p: Any = None, x0: Any = None) -> MCPResult:
        """Solve at parameter values ``p`` from ``x0`` (defaults: the MPCC's ``p0``, ``x0``)."""
        mp = self.mpcc
        pv = mp.p0 if p is None else _as_float_vector(p, mp.p.numel(), "p", allow_inf=False)
        xs = mp.x0 if x0 is None else _as_float_vector(x0, mp.x.numel(), "x0", allow_inf=False)
        t0 = time.perf_counter()
        out = self.homotopy.run(xs, pv, self._assess)
        wall = time.perf_counter() - t0
        tol = self.options.tol
        if out.x is None or not np.isfinite(out.x).all():
            n = mp.x.numel()
            return MCPResult(
                z=np.full(n, np.nan), F=np.full(mp.n_pairs, np.nan), termination=out.termination,
                solution_status=SolutionStatus.NO_SOLUTION, natural_residual=np.inf,
                complementarity_violation=np.inf, bound_violation=np.inf, pair_states=[], tol=tol,
                iterations=out.iterations, wall_time_s=wall, backend="casadi", method=self.method.value,
                trace=out.trace, raw_status=out.raw_status, message="no point produced",
            )  # fmt: skip
        vals = mp.evaluate(out.x, pv)
        comp, viol = out.assessment.residual, out.assessment.violation
        if viol > tol:
            status = SolutionStatus.INFEASIBLE_POINT
        elif comp <= tol:
            status = SolutionStatus.SOLUTION
        else:
            status = SolutionStatus.INACCURATE
        term = out.termination
        if term is Termination.CONVERGED and status is not SolutionStatus.SOLUTION:
            term = Termination.STALLED
        zeros = np.zeros(mp.n_pairs)
        return MCPResult(
            z=out.x,
            F=vals["H"],
            termination=term,
            solution_status=status,
            natural_residual=comp,
            complementarity_violation=comp,
            bound_violation=viol,
            pair_states=classify_pairs(vals["G"], vals["H"], zeros, zeros + np.inf, tol),
            tol=tol,
            iterations=out.iterations,
            wall_time_s=wall,
            backend="casadi",
            method=self.method.value,
            trace=out.trace,
            raw_status=out.raw_status,
            message=(
                f"{'solved' if status is SolutionStatus.SOLUTION else 'NOT solved'}: complementarity "
                f"residual {comp:.2e}, constraint violation {viol:.2e} (tol {tol:.0e})"
            ),
            objective=float(vals["f"][0]),
            extra={"G": vals["G"]},
        )


def solve_mpcc(
    mpcc: MPCC,
    method: str | Method = "auto",
    options: SolveOptions | None = None,
    p: Any = None,
    x0: Any = None,
    **kwargs: Any,
) -> MCPResult:
    """Solve ``mpcc`` once (see :class:`MPCCSolver`)."""
    return MPCCSolver(mpcc, method, options, **kwargs).solve(p=p, x0=x0)
