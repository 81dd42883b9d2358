r"""Lemke's complementary pivoting method for (box) LCPs: ``method="lemke"``.

The method on a standard LCP, its degeneracy rule and numerics are in
:mod:`mcpkit.engines.lemke_pivoting`; the exact reduction of a box LCP to a standard one in
:mod:`mcpkit.engines.box_lcp`. This module is the engine the registry names.

Box LCPs and MCPs
-----------------
:class:`LemkeRoute` (the registered engine) takes an :class:`~mcpkit.MCP`
:math:`l \le z \le u \perp F(z; p)` whose :math:`F` is affine in :math:`z`,
:math:`F = Mz + q(p)`, and reduces it exactly to one standard LCP
(:class:`~mcpkit.engines.box_lcp.BoxLCPReduction`: fixed variables dropped, free ones eliminated by
a Schur complement or split, bounded ones shifted and boxed ones given a second variable; a finitely
boxed LCP has no secondary ray), on which Lemke's method runs.

Lemke's method is a dense tableau method, so a sparse :math:`M` of the declaration (a SciPy
matrix in :meth:`~mcpkit.MCP.lcp` or :meth:`~mcpkit.MCP.add_affine`) is converted to a dense
array here, once per route; above :data:`SPARSE_DENSE_LIMIT` variables that conversion
(:math:`8n^2` bytes, 0.8 GB at :math:`n = 10^4`, before the tableau) is refused at construction
with :class:`~mcpkit.errors.MCPInputError` pointing to ``method="newton"``, which keeps
:math:`M` sparse.

``M`` comes from the declaration's affine blocks when every function block is affine, otherwise
from the CasADi lowering's Jacobian, which must not depend on :math:`z` (checked with
``casadi.depends_on``; a nonlinear MCP raises :class:`~mcpkit.errors.MCPInputError` at
construction, naming the blocks). A Jacobian that depends on the parameters :math:`p` is
re-evaluated, and the reduction rebuilt, at each solve. :math:`q(p) = F(0; p)` is evaluated with
the CasADi lowering. On ``backend="pyomo"`` the same affine data is read from the declaration
(the Pyomo model of an LCP holds the same :math:`M, q`). The returned :math:`z` is judged by
:class:`mcpkit.Solver` on the declaration, through its own evaluation of :math:`F`.

Starts and restarts (``extra`` and the trace say which ran; ``iterations`` counts all pivots):

* warm (``warm`` and a previous solution of this route, :math:`M` not parametric): the previous
  complementary basis :math:`J` is tried first for the new :math:`q(p)` (one LU of
  :math:`M_{JJ}`); if it is still feasible it is the solution (0 pivots,
  ``extra["warm"] = "basis reused"``), otherwise Lemke runs from :math:`J` (see ``start`` of
  :func:`~mcpkit.engines.lemke_pivoting.lemke_lcp`; for a P-matrix every start works); if that
  fails, Lemke starts cold;
* cold: :math:`J = \emptyset`, the textbook method above (the only start whose ray gives a
  certificate);
* restarts: when the cold run ends on a ray *without* a verified certificate (so nothing is
  known), Lemke is restarted from at most two crash bases (:func:`_crash_bases`:
  :math:`J_0 = \{i : q_i < 0\}` and one block-principal-pivoting update of it). This solves,
  for example, the bimatrix-game LCP ``lcp_CPS_3`` of the Siconos set, on which Lemke from
  :math:`J = \emptyset` ends on a ray at the first pivot for every covering vector (with
  :math:`q = -\mathbf 1` and zero diagonal blocks, :math:`z_0` stays constant along the first
  edge).

References
----------
C. E. Lemke, "Bimatrix equilibrium points and mathematical programming", Management Science
11 (1965) 681-689. R. W. Cottle, J.-S. Pang, R. E. Stone, *The Linear Complementarity Problem*,
Academic Press 1992 (SIAM Classics 2009), §4.4 (Lemke's method, lexicographic rule, Thm 4.4.13).
"""

from __future__ import annotations

from typing import Any

import casadi as ca
import numpy as np

from mcpkit.engines.blas import small_blas
from mcpkit.engines.box_lcp import BoxLCPReduction, box_natural_residual
from mcpkit.engines.lemke_pivoting import (
    LemkeResult,
    copositive_plus,
    farkas_check,
    lcp_residual,
    lemke_lcp,
    solve_principal,
)
from mcpkit.errors import MCPInputError
from mcpkit.lowering.sx_replay import AFFINE, CONSTANT, is_affine_in
from mcpkit.problems.functions import AffineFunction
from mcpkit.problems.mcp import MCP
from mcpkit.solving.options import Budget, SolveOptions, call_budget
from mcpkit.solving.result import HomotopyStep, Termination
from mcpkit.solving.route import RouteOutcome

#: Largest :math:`n` for which a declaration with a sparse :math:`M` is densified for Lemke's method.
SPARSE_DENSE_LIMIT = 10_000


# ------------------------------------------------------------------------------ affine data
class AffineData:
    r""":math:`M` and :math:`q(p)` of an MCP whose :math:`F` is affine in :math:`z`.

    :math:`M` is assembled from the affine blocks when every block is affine, otherwise it is the
    CasADi Jacobian :math:`\partial F/\partial z` (which must not depend on :math:`z`);
    :math:`q(p) = F(0; p)`.

    A sparse :math:`M` in the declaration is densified (Lemke's tableau is dense).

    Raises
    ------
    MCPInputError
        When :math:`F` is not affine in :math:`z` (the message names the blocks), or when a
        block's :math:`M` is sparse and :math:`n >` :data:`SPARSE_DENSE_LIMIT`.
    """

    def __init__(self, problem: MCP) -> None:
        from mcpkit.lowering.casadi import lower_to_casadi

        problem.validate()
        sparse = [
            b.name
            for b in problem.blocks
            if isinstance(fb := problem.function_block(b.name), AffineFunction) and fb.is_sparse
        ]
        if sparse and problem.n > SPARSE_DENSE_LIMIT:
            raise MCPInputError(
                f"method='lemke' is a dense tableau method: the sparse M of blocks {sparse} would be "
                f"densified to {problem.n}x{problem.n} ({8e-9 * problem.n**2:.1f} GB) with n = {problem.n} "
                f"> SPARSE_DENSE_LIMIT = {SPARSE_DENSE_LIMIT}. Use method='newton', which keeps M sparse."
            )
        self.problem = problem
        self.cas = lower_to_casadi(problem)
        n = problem.n
        self.n = n
        blocks = problem.blocks
        fbs = {b.name: problem.function_block(b.name) for b in blocks}
        self.M_const: np.ndarray | None = None
        self._J: ca.Function | None = None
        if all(isinstance(fb, AffineFunction) for fb in fbs.values()):
            M = np.zeros((n, n))
            slices = {b.name: b.slice for b in blocks}
            for b in blocks:
                fb = fbs[b.name]
                assert isinstance(fb, AffineFunction)
                col = 0
                for nm in fb.over:
                    sl = slices[nm]
                    width = sl.stop - sl.start
                    part = fb.M[:, col : col + width]
                    M[b.slice, sl] += part.toarray() if fb.is_sparse else part
                    col += width
            self.M_const = M
            self.source = "declaration"
        else:
            z, p, F = self.cas.z, self.cas.p, self.cas.F
            J = ca.jacobian(F, z)
            # structurally (floor, sign, if_else have constant Jacobians but are not affine); p is
            # a constant here (M may depend on it: it is evaluated at each solve's p)
            if ca.depends_on(J, z) or not is_affine_in(ca.Function("F", [z, p], [F]), [AFFINE, CONSTANT]):
                bad = [
                    b.name
                    for b in blocks
                    if not isinstance(fbs[b.name], AffineFunction)  # symbolic or block-expression rows
                    and not is_affine_in(
                        ca.Function("Fb", [z, p], [F[b.start : b.start + b.size]]), [AFFINE, CONSTANT]
                    )
                ]
                raise MCPInputError(
                    f"method='lemke' solves linear complementarity problems, but F is not affine in z "
                    f"(function blocks {bad} are nonlinear). Use method='newton', 'path' or 'scholtes'."
                )
            self._J = ca.Function("lemke_M", [z, p], [J])
            self.source = "casadi jacobian"
            if not ca.depends_on(J, p):
                self.M_const = self._eval_J(problem.parameter_values)

    def _eval_J(self, p: np.ndarray) -> np.ndarray:
        assert self._J is not None
        return np.asarray(ca.DM(self._J(np.zeros(self.n), p)).full(), dtype=float)

    @property
    def parametric_M(self) -> bool:
        """:math:`M` depends on the parameters (re-evaluated at each solve)."""
        return self.M_const is None

    def M(self, p: np.ndarray) -> np.ndarray:
        """:math:`M` at parameters ``p``."""
        return self.M_const if self.M_const is not None else self._eval_J(p)

    def q(self, p: np.ndarray) -> np.ndarray:
        r""":math:`q(p) = F(0; p)`."""
        return np.asarray(self.cas.F_fun(np.zeros(self.n), p), dtype=float).reshape(-1)


# ------------------------------------------------------------------------------------ route
class LemkeRoute:
    r"""Lemke's method on an affine MCP (a box LCP); see the module docstring.

    Parameters
    ----------
    problem
        The declaration; every :math:`F_i` must be affine in :math:`z`.
    backend
        ``"casadi"`` or ``"pyomo"``: both read the same :math:`M, q(p)` (from the declaration's
        affine blocks, or the CasADi lowering of symbolic ones).
    options
        ``max_inner_iter`` is the pivot limit; ``time_limit`` is checked between pivots.
    covering
        Covering vector :math:`d > 0` of the standard LCP that Lemke runs on (default all ones;
        its length is that LCP's size, see :class:`~mcpkit.engines.box_lcp.BoxLCPReduction`).

    Raises
    ------
    MCPInputError
        At construction: :math:`F` not affine in :math:`z`, an unknown backend or a bad covering
        vector.
    """

    method = "lemke"

    def __init__(
        self, problem: MCP, backend: str, options: SolveOptions, covering: np.ndarray | None = None
    ) -> None:
        b = str(getattr(backend, "value", backend)).lower()
        if b not in ("casadi", "pyomo"):
            raise MCPInputError(f"LemkeRoute: backend must be 'casadi' or 'pyomo', got {backend!r}")
        self.backend = b
        self.problem = problem
        self.options = options
        self.data = AffineData(problem)
        self.lb, self.ub = problem.lb, problem.ub
        p0 = problem.parameter_values
        self.reduction = BoxLCPReduction(self.data.M(p0), self.lb, self.ub)
        N = self.reduction.N
        self.covering = None if covering is None else np.asarray(covering, dtype=float).reshape(-1)
        if self.covering is not None and (
            self.covering.shape != (N,) or not np.isfinite(self.covering).all() or self.covering.min() <= 0
        ):
            raise MCPInputError(
                f"LemkeRoute: covering vector must hold {N} finite positive numbers (the size of the "
                f"standard LCP), got shape {self.covering.shape}"
            )
        self._basis: np.ndarray | None = None
        self._copositive: bool | None | str = "unknown"

    def _copositive_plus(self, M: np.ndarray) -> bool | None:
        if self.data.parametric_M:
            return copositive_plus(M)
        if self._copositive == "unknown":
            self._copositive = copositive_plus(M)
        return self._copositive  # type: ignore[return-value]

    def solve(self, p: np.ndarray, z0: np.ndarray, warm: bool, budget: Budget | None = None) -> RouteOutcome:
        """Reduce to a standard LCP at ``p`` and run Lemke (see the module docstring).

        ``z0`` is not used as a point (Lemke starts from a basis, not a point); with ``warm`` the
        previous solution's basis is the start. Small problems pivot on one BLAS thread
        (:mod:`mcpkit.engines.blas`). ``budget``: the call's time limit (``None``: the options').
        """
        budget = call_budget(budget, self.options.time_limit)
        with small_blas(self.lb.size):
            return self._solve(p, warm, budget)

    def _solve(self, p: np.ndarray, warm: bool, budget: Budget) -> RouteOutcome:
        p = np.asarray(p, dtype=float)
        red = self.reduction
        if self.data.parametric_M:
            red = BoxLCPReduction(self.data.M(p), self.lb, self.ub)
        q = self.data.q(p)
        qs = red.q_std(q)
        Ms = red.M_std
        extra: dict[str, Any] = {"lemke_size": red.N, "affine_data": self.data.source}
        trace: list[HomotopyStep] = []
        pivots = 0

        def run(start: np.ndarray | None, phase: str) -> LemkeResult:
            nonlocal pivots
            remaining = budget.remaining(0.0)
            max_piv = max(self.options.max_inner_iter - pivots, 1)
            r = lemke_lcp(Ms, qs, self.covering, max_pivots=max_piv, time_limit=remaining, start=start)
            pivots += r.pivots
            res_lcp = lcp_residual(r.z, r.w - r.d * r.z0) if r.z0 else lcp_residual(r.z, r.w)
            trace.append(HomotopyStep(len(trace), r.z0, res_lcp, r.status, r.pivots, r.wall_time_s, phase))
            return r

        res: LemkeResult | None = None
        term = Termination.STALLED
        if warm and self._basis is not None and not self.data.parametric_M:
            r = run(self._basis, "warm")
            if r.status == "solution":
                res = r
                extra["warm"] = "basis reused" if r.pivots == 0 else "started from the previous basis"
        if res is None:
            res = run(None, "pivot")
            if res.status == "secondary_ray":
                term = self._ray(res, Ms, qs, red, extra)
                if term is Termination.STALLED:
                    # no proof of infeasibility: restart from crash bases (module docstring)
                    for J in _crash_bases(Ms, qs):
                        if budget.spent():
                            break
                        r = run(J, "restart")
                        if r.status == "solution":
                            extra["restart"] = f"solved from the crash basis |J| = {J.size} after a ray"
                            res = r
                            break
        if res.status == "solution":
            self._basis = res.basis
            extra.pop("certificate", None)
            term = Termination.CONVERGED
        else:
            self._basis = None
            if res.status != "secondary_ray":
                term = {
                    "pivot_limit": Termination.ITERATION_LIMIT,
                    "time_limit": Termination.TIME_LIMIT,
                }.get(res.status, Termination.NUMERICAL_ERROR)
        if res.status == "pivot_limit":
            extra["hint"] = "raise SolveOptions.max_inner_iter (Lemke's pivot limit)"
        extra.update(lemke=res.status.replace("_", " "), pivots=pivots, z0=res.z0)
        if res.refactorizations:
            extra["refactorizations"] = res.refactorizations
        z = red.expand(np.maximum(res.z, 0.0), q)
        if res.status == "solution" and res.basis is not None and not red.is_standard:
            zp = red.polish(res.basis, q, z)
            if zp is not None:
                M = red.M
                if box_natural_residual(M, q, self.lb, self.ub, zp) < box_natural_residual(
                    M, q, self.lb, self.ub, z
                ):
                    z = zp
        return RouteOutcome(z, term, res.message, pivots, trace, extra)

    def _ray(
        self, res: LemkeResult, Ms: np.ndarray, qs: np.ndarray, red: BoxLCPReduction, extra: dict[str, Any]
    ) -> Termination:
        """Fill the ray's certificate; LOCALLY_INFEASIBLE when infeasibility is verified."""
        assert res.ray is not None
        cop = self._copositive_plus(Ms)
        extra["certificate"] = {
            "z": res.z, "z0": res.z0, "direction": res.ray["z"], "direction_z0": res.ray["z0"],
            "entering": res.ray["entering"], "copositive_plus": cop,
            "coordinates": _coordinates(red),
        }  # fmt: skip
        farkas = farkas_check(Ms, qs, res.ray["z"])
        if farkas is None:
            return Termination.STALLED
        why = "M copositive-plus: Cottle-Pang-Stone Thm 4.4.13" if cop else "Farkas certificate verified"
        extra["infeasibility_certificate"] = {
            **farkas,
            "statement": "y >= 0, M^T y <= 0, q^T y < 0: no x >= 0 has M x + q >= 0, so the LCP "
            f"(and the MCP) has no solution ({why})",
            "coordinates": _coordinates(red),
        }
        return Termination.LOCALLY_INFEASIBLE


def _crash_bases(M: np.ndarray, q: np.ndarray, steps: int = 2) -> list[np.ndarray]:
    r"""Complementary starting bases for restarts: :math:`J_0 = \{i : q_i < 0\}`, then block
    principal pivoting updates :math:`J_{t+1} = \{i \in J_t : z_i > 0\} \cup \{i \notin J_t :
    w_i < 0\}` of the basic point of :math:`J_t` (stopping at a repeat or a singular
    :math:`M_{JJ}`)."""
    out: list[np.ndarray] = []
    J = np.flatnonzero(q < 0.0)
    for _ in range(steps):
        if J.size == 0 or any(np.array_equal(J, K) for K in out):
            break
        out.append(J)
        z = solve_principal(M, q, J)
        if z is None:
            break
        w = M @ z + q
        inJ = np.zeros(q.size, dtype=bool)
        inJ[J] = True
        J = np.flatnonzero((inJ & (z > 0.0)) | (~inJ & (w < 0.0)))
    return out


def _coordinates(red: BoxLCPReduction) -> str:
    if red.is_standard:
        return "the MCP's own z (a standard LCP)"
    return (
        "the standard LCP of BoxLCPReduction: x_t = sign_t (z - offset)_t for the variables "
        f"{red.idx.tolist()[:20]}{'...' if red.idx.size > 20 else ''} (BoxLCPReduction.idx), then one "
        f"v per boxed variable; free variables: {red.free_mode}"
    )
