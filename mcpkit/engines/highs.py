r"""HiGHS (through SciPy) with fixed variables substituted out: :func:`linprog` and :func:`milp`.

Every LP and MILP mcpkit hands to HiGHS goes through here. The two functions take the arguments
of :func:`scipy.optimize.linprog` (``method`` one of HiGHS's) and :func:`scipy.optimize.milp`
and return the same :class:`~scipy.optimize.OptimizeResult`, but the components with
:math:`l_i = u_i` never reach HiGHS: their columns move to the right-hand side,

.. math::

    \min_{x_F} c_F^\top x_F + c_X^\top x_X \quad\text{s.t.}\quad
    A_F x_F \le b - A_X x_X,\quad l_F \le x_F \le u_F,

with :math:`X` the fixed and :math:`F` the free components, and the point, the objective and
the bound multipliers are put back in the full space. The substitution is exact: the rows are
unchanged (so are their multipliers), and the multiplier of a fixed component's bound is its
reduced cost :math:`c_i - A_{:,i}^\top y` (its positive part in ``lower.marginals``, its negative
part in ``upper.marginals``, SciPy's signs).

Why: HiGHS's presolve (SciPy 1.17.1) corrupted the heap — a segmentation fault that ends the
whole process, not an exception — on an LPEC branch LP of the pushing horizon at N = 100 (1,606
variables, 1,399 equations, twelve fixed variables; ``tests/data/highs_presolve_crash_lp.npz``),
with ``highs``, ``highs-ds`` and ``highs-ipm`` alike. Without the fixed variables it solves that
LP. NOSBENCH's optimal-control MPCCs fix their initial states by bounds, so every LP built on
their variables has fixed columns.

When every component is fixed nothing is substituted (HiGHS then only checks the point).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sps
from scipy.optimize import Bounds, LinearConstraint, OptimizeResult
from scipy.optimize import linprog as _scipy_linprog
from scipy.optimize import milp as _scipy_milp

__all__ = ["linprog", "milp"]


def _split(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(fixed mask, values of the fixed components, 0 elsewhere)``."""
    fixed = np.isfinite(lo) & (lo == hi)
    if fixed.all():
        fixed = np.zeros_like(fixed)
    return fixed, np.where(fixed, lo, 0.0)


def _columns(A: Any, mask: np.ndarray) -> Any:
    """``A[:, mask]`` for a dense or sparse ``A`` (sparse as CSC: column slicing)."""
    if sps.issparse(A):
        return sps.csc_matrix(A)[:, np.flatnonzero(mask)]
    return np.asarray(A)[:, mask]


def _times(A: Any, x: np.ndarray) -> np.ndarray:
    return np.asarray(A @ x, dtype=float).reshape(-1)


def _transpose_times(A: Any, y: np.ndarray) -> np.ndarray:
    return np.asarray(A.T @ y, dtype=float).reshape(-1)


def linprog(
    c: np.ndarray,
    A_ub: Any = None,
    b_ub: np.ndarray | None = None,
    A_eq: Any = None,
    b_eq: np.ndarray | None = None,
    bounds: np.ndarray | None = None,
    method: str = "highs",
    options: dict[str, Any] | None = None,
) -> OptimizeResult:
    r""":math:`\min c^\top x` s.t. :math:`A_{ub} x \le b_{ub}`, :math:`A_{eq} x = b_{eq}`, bounds,
    by :func:`scipy.optimize.linprog` with the fixed components substituted out (module docstring).

    ``bounds`` is an ``(n, 2)`` array (``None``: :math:`x \ge 0`, SciPy's default). The result
    has SciPy's fields; ``x`` and ``fun`` are in the full space, ``ineqlin`` and ``eqlin`` are
    HiGHS's, ``lower``/``upper`` marginals hold the fixed components' reduced costs (split by sign).
    """
    c = np.asarray(c, dtype=float).reshape(-1)
    n = c.size
    B = np.column_stack([np.zeros(n), np.full(n, np.inf)]) if bounds is None else np.asarray(bounds, float)
    fixed, x_fix = _split(B[:, 0], B[:, 1])
    if not fixed.any():
        return _scipy_linprog(
            c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=B, method=method, options=options
        )
    free = ~fixed
    kw: dict[str, Any] = {}
    for name, A, b in (("ub", A_ub, b_ub), ("eq", A_eq, b_eq)):
        if A is not None and A.shape[0]:
            kw[f"A_{name}"] = _columns(A, free)
            kw[f"b_{name}"] = np.asarray(b, dtype=float).reshape(-1) - _times(A, x_fix)
    res = _scipy_linprog(c[free], bounds=B[free], method=method, options=options, **kw)
    if res.x is None:
        return res
    x = x_fix.copy()
    x[free] = res.x
    res.x = x
    res.fun = float(c @ x)
    # reduced costs of the fixed components: d(obj)/d(x_i) with the rows' multipliers held
    reduced = c[fixed].copy()
    for name, A in (("ineqlin", A_ub), ("eqlin", A_eq)):
        part = getattr(res, name, None)
        if A is not None and A.shape[0] and part is not None and len(part.marginals):
            reduced -= _transpose_times(_columns(A, fixed), np.asarray(part.marginals, dtype=float))
    for side in ("lower", "upper"):
        part = getattr(res, side, None)
        if part is None:
            continue
        # SciPy's signs: lower marginals >= 0, upper <= 0; a fixed component's bound is both
        on_fixed = np.maximum(reduced, 0.0) if side == "lower" else np.minimum(reduced, 0.0)
        part.marginals = _expand(part.marginals, free, on_fixed)
        if hasattr(part, "residual"):
            part.residual = _expand(part.residual, free, 0.0)
    return res


def _expand(values: Any, free: np.ndarray, at_fixed: np.ndarray | float) -> np.ndarray:
    """Free components' ``values`` in the full space, ``at_fixed`` on the fixed ones."""
    full = np.zeros(free.size)
    full[free] = np.asarray(values, dtype=float)
    full[~free] = at_fixed
    return full


def milp(
    c: np.ndarray,
    *,
    constraints: LinearConstraint,
    integrality: np.ndarray | None = None,
    bounds: Bounds,
    options: dict[str, Any] | None = None,
) -> OptimizeResult:
    r""":func:`scipy.optimize.milp` with the fixed components substituted out (module docstring).

    One :class:`~scipy.optimize.LinearConstraint` :math:`l_A \le A x \le u_A`. ``x``, ``fun`` and
    ``mip_dual_bound`` are in the full space (the fixed part of the objective added back).
    """
    c = np.asarray(c, dtype=float).reshape(-1)
    lo = np.broadcast_to(np.asarray(bounds.lb, dtype=float), c.shape)
    hi = np.broadcast_to(np.asarray(bounds.ub, dtype=float), c.shape)
    fixed, x_fix = _split(lo, hi)
    if not fixed.any():
        return _scipy_milp(
            c, constraints=constraints, integrality=integrality, bounds=bounds, options=options
        )
    free = ~fixed
    A = constraints.A
    shift = _times(A, x_fix)
    cons = LinearConstraint(
        _columns(A, free),
        np.asarray(constraints.lb, dtype=float) - shift,
        np.asarray(constraints.ub, dtype=float) - shift,
    )
    integ = None if integrality is None else np.broadcast_to(np.asarray(integrality), c.shape)[free]
    const = float(c[fixed] @ x_fix[fixed])
    res = _scipy_milp(
        c[free], constraints=cons, integrality=integ, bounds=Bounds(lo[free], hi[free]), options=options
    )
    if res.x is not None:
        x = x_fix.copy()
        x[free] = res.x
        res.x = x
        res.fun = float(c @ x)
    dual = getattr(res, "mip_dual_bound", None)
    if dual is not None:
        res.mip_dual_bound = float(dual) + const
    return res
