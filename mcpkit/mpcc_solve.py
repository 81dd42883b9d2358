r"""Solving MPCCs with the same IPOPT homotopies as MCPs.

:class:`MPCCSolver` solves a standard-form :class:`~mcpkit.mpcc.MPCC`
(:math:`0 \le G \perp H \ge 0`). Problems in another form (general pair bounds, see
:mod:`mcpkit.mpec.problem`) pass an ``original`` problem and a lowering: the homotopy runs on the
standard form and every candidate is judged on the original pairs.

The result reuses :class:`~mcpkit.result.MCPResult` by reading the pairs as NCP pairs:
``natural_residual`` is the complementarity residual of the original pairs
(:math:`\max_j |\min(G_j, H_j)|` in the standard case), ``bound_violation`` is the constraint
violation (of :math:`g`, the bounds on :math:`x` and on :math:`G, H`), ``objective`` is :math:`f`,
``z`` holds :math:`x`, ``F`` holds :math:`H(x)` and ``extra["G"]`` holds :math:`G(x)`.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

import numpy as np

from mcpkit.errors import MCPInputError
from mcpkit.lowering.base import Lowering
from mcpkit.mpcc import MPCC
from mcpkit.options import REFORMULATIONS, Method, SolveOptions
from mcpkit.problem import as_float_vector
from mcpkit.residuals import classify_pairs
from mcpkit.result import MCPResult, SolutionStatus, Termination
from mcpkit.solvers.homotopy import Assessment, make_homotopy


class OriginalMPCC(Protocol):
    """What :class:`MPCCSolver` needs of the problem the user posed."""

    x0: np.ndarray
    p0: np.ndarray
    lbx: np.ndarray
    ubx: np.ndarray
    name: str

    def residuals(self, x: np.ndarray, p: np.ndarray) -> tuple[float, float, dict[str, np.ndarray]]:
        """``(complementarity residual, constraint violation, {"f", "g", "G", "H"})``."""
        ...


class MPCCSolver:
    """An MPCC with one reformulation, built once; :meth:`solve` for many parameter values.

    Parameters
    ----------
    problem
        A standard :class:`~mcpkit.mpcc.MPCC`, or any problem with a ``lowering`` to one.
    method
        One of :data:`~mcpkit.options.REFORMULATIONS` (``scholtes`` for ``auto``).
    options, **kwargs
        :class:`~mcpkit.options.SolveOptions` and/or its fields.
    lowering
        A :class:`~mcpkit.lowering.base.Lowering` from ``problem`` to a standard MPCC (needed
        when ``problem`` is not one); ``problem`` must then provide ``residuals(x, p)`` (as
        :class:`~mcpkit.mpcc.MPCC` does).
    """

    def __init__(
        self,
        problem: Any,
        method: str | Method = "scholtes",
        options: SolveOptions | None = None,
        lowering: Lowering | None = None,
        **kwargs: Any,
    ) -> None:
        self.options = SolveOptions.from_kwargs(options, **kwargs)
        name = str(method.value if isinstance(method, Method) else method).lower()
        if name in ("auto",):
            name = "scholtes"
        if name == "path":
            raise MCPInputError("PATH solves MCPs, not MPCCs with an objective; use scholtes, fb or penalty")
        if name not in REFORMULATIONS:
            Method.parse(name)  # raises the helpful unknown-method error
        self.method = name
        if lowering is None:
            if not isinstance(problem, MPCC):
                raise MCPInputError("MPCCSolver: pass a standard MPCC or a lowering for this problem")
            self.original: OriginalMPCC = problem
            self.mpcc = problem
            self._invert = None
        else:
            self.original = problem
            self.mpcc, inverse = lowering.apply(problem)
            self._invert = (lowering, inverse)
        self.homotopy = make_homotopy(self.mpcc, name, self.options)

    def _orig_x(self, x: np.ndarray) -> np.ndarray:
        if self._invert is None:
            return x
        lowering, inverse = self._invert
        return lowering.invert(x, inverse)

    def _assess(self, x: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, Assessment]:
        x = np.clip(x, self.mpcc.lbx, self.mpcc.ubx)
        comp, viol, _ = self.original.residuals(self._orig_x(x), p)
        return x, Assessment(comp, viol)

    def solve(self, p: Any = None, x0: Any = None) -> MCPResult:
        """Solve at parameter values ``p`` from ``x0`` (defaults: the problem's ``p0``, ``x0``)."""
        mp, orig = self.mpcc, self.original
        pv = orig.p0 if p is None else as_float_vector(p, mp.p.numel(), "p", allow_inf=False)
        if x0 is None:
            xs = mp.x0
        else:
            xo = as_float_vector(x0, orig.x0.size, "x0", allow_inf=False)
            xs = np.concatenate([xo, mp.x0[xo.size :]])
        t0 = time.perf_counter()
        out = self.homotopy.run(xs, pv, self._assess)
        x = None if out.x is None else self._orig_x(out.x)
        return mpcc_result(
            orig, x, pv, out.termination, self.options.tol,
            iterations=out.iterations, wall_time_s=time.perf_counter() - t0, backend="casadi",
            method=self.method, trace=out.trace, raw_status=out.raw_status,
        )  # fmt: skip


def mpcc_result(
    orig: OriginalMPCC,
    x: np.ndarray | None,
    p: np.ndarray,
    termination: Termination,
    tol: float,
    **common: Any,
) -> MCPResult:
    """The result of an MPCC solve, judged on the original problem ``orig`` at ``x``.

    ``SOLUTION`` needs complementarity residual and constraint violation <= ``tol``; a solver
    that claims convergence without that is reported as ``STALLED``. ``common`` holds the
    :class:`~mcpkit.result.MCPResult` fields every route fills (iterations, wall time, backend,
    method, trace, raw status).
    """
    if x is None or not np.isfinite(x).all():
        n, nc = orig.x0.size, int(getattr(orig, "n_pairs", 0))
        return MCPResult(
            z=np.full(n, np.nan), F=np.full(nc, np.nan), termination=termination,
            solution_status=SolutionStatus.NO_SOLUTION, natural_residual=np.inf,
            complementarity_violation=np.inf, bound_violation=np.inf, pair_states=[],
            message="no point produced", tol=tol, **common,
        )  # fmt: skip
    comp, viol, vals = orig.residuals(x, p)
    if not np.isfinite(viol) or viol > tol:
        status = SolutionStatus.INFEASIBLE_POINT
    elif comp <= tol:
        status = SolutionStatus.SOLUTION
    else:
        status = SolutionStatus.INACCURATE
    if termination is Termination.CONVERGED and status is not SolutionStatus.SOLUTION:
        termination = Termination.STALLED
    zeros = np.zeros(vals["G"].size)
    return MCPResult(
        z=x,
        F=vals["H"],
        termination=termination,
        solution_status=status,
        natural_residual=comp,
        complementarity_violation=comp,
        bound_violation=viol,
        pair_states=classify_pairs(vals["G"], vals["H"], zeros, zeros + np.inf, tol),
        message=(
            f"{'solved' if status is SolutionStatus.SOLUTION else 'NOT solved'} {orig.name}: "
            f"complementarity residual {comp:.2e}, constraint violation {viol:.2e} (tol {tol:.0e})"
        ),
        objective=float(vals["f"][0]),
        extra={"G": vals["G"]},
        tol=tol,
        **common,
    )


def solve_mpcc(
    mpcc: MPCC,
    method: str | Method = "auto",
    options: SolveOptions | None = None,
    p: Any = None,
    x0: Any = None,
    **kwargs: Any,
) -> MCPResult:
    """Solve a standard-form ``mpcc`` once (see :class:`MPCCSolver`)."""
    return MPCCSolver(mpcc, method, options, **kwargs).solve(p=p, x0=x0)
