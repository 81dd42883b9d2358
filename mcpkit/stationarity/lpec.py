r"""The LPEC of B-stationarity: branch enumeration for few biactive pairs, a MILP for many.

At a feasible point :math:`x^*` of the standard MPCC (:mod:`mcpkit.stationarity.certificate`) with
biactive set :math:`I_{GH}`, the LPEC is

.. math::

    v^* = \min_d\ \nabla f^\top d\ \text{s.t.}\ A_{eq} d = 0,\ A_{ub} d \le 0,\ \ell \le d \le u,\
    0 \le \nabla G_j d \perp \nabla H_j d \ge 0\ (j \in I_{GH}),

with the linearised active constraints in :math:`A_{eq}, A_{ub}` and the trust-region box
:math:`\ell \le d \le u` (:math:`-\Delta \le d_i \le \Delta`, and :math:`0` on the side of an
active bound of :math:`x_i`). :math:`x^*` is (linearised) B-stationary iff
:math:`v^* \ge -\text{threshold}`; otherwise the minimiser is a descent direction whose signs of
:math:`\nabla G_j d, \nabla H_j d` name the branch of each biactive pair to move into.

* **Enumeration** (:func:`solve_lpec` with ``k = |I_GH| <= enumerate_max``): the :math:`2^k`
  branch LPs (:math:`\nabla G_j d = 0 \le \nabla H_j d` or :math:`\nabla G_j d \ge 0 = \nabla
  H_j d`), with :func:`scipy.optimize.linprog` (HiGHS), stopping at the first descent.
* **MILP** (larger :math:`k`): one binary :math:`z_j` per biactive pair and

  .. math::

      0 \le \nabla G_j d \le M^G_j z_j,\qquad 0 \le \nabla H_j d \le M^H_j (1 - z_j),

  solved by :func:`scipy.optimize.milp` (HiGHS branch and bound). The big-M constants are not
  guessed: :math:`M^G_j = \max_{\ell \le d \le u} \nabla G_j d = \sum_i \max(\partial_i G_j
  \ell_i, \partial_i G_j u_i)` is the exact largest value of the row over the box, so the
  big-M constraints cut off no point of the LPEC's feasible set (:func:`big_m`). B is certified
  only from an optimal MILP whose dual bound is :math:`\ge -\text{threshold}`.

The MILP's feasible set equals the LPEC's: with :math:`z_j = 1` the second row forces
:math:`\nabla H_j d = 0`, with :math:`z_j = 0` the first forces :math:`\nabla G_j d = 0`, and any
LPEC point satisfies one of the two with the other row bounded by its box maximum.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import Bounds, LinearConstraint
from scipy.sparse import csr_matrix, hstack, issparse, vstack

from mcpkit.engines import highs

__all__ = ["LPEC", "LPECSolution", "big_m", "solve_lpec", "stack_rows"]


@dataclass(frozen=True)
class LPEC:
    r"""Data of one LPEC: :math:`\min c^\top d` over the linearised MPCC cone in a box.

    ``A_eq``, ``A_ub`` are ``(m, n)`` arrays, dense or CSR (possibly with zero rows); ``JG``,
    ``JH`` the dense ``(k, n)`` gradients of the biactive pairs; ``lo``, ``hi`` the box on ``d``.
    """

    c: np.ndarray
    A_eq: np.ndarray | csr_matrix
    A_ub: np.ndarray | csr_matrix
    JG: np.ndarray
    JH: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

    @property
    def n_biactive(self) -> int:
        """Number of biactive pairs :math:`k`."""
        return int(self.JG.shape[0])

    def branch_value(self, d: np.ndarray) -> np.ndarray:
        """Per biactive pair ``1`` when ``grad H_j d = 0`` is the pair's branch (``G`` grows), else ``0``."""
        return (self.JG @ d > self.JH @ d).astype(int)


@dataclass(frozen=True)
class LPECSolution:
    """What :func:`solve_lpec` found."""

    verdict: bool | None
    """``True``: certified B (value >= -threshold); ``False``: a descent direction exists;
    ``None``: not decided (an LP failed, the MILP hit its limit or the LPEC is too large)."""
    d: np.ndarray | None
    """A descent direction when ``verdict`` is ``False``."""
    value: float
    """The best value found (``0`` when certified, ``nan`` when undecided)."""
    method: str
    """``"enumerate"``, ``"milp"`` or ``"skipped"``."""
    n_solves: int
    """LPs (enumeration) or MILPs solved."""
    reason: str = ""
    """Why the verdict is ``None``."""


def big_m(J: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    r"""Exact per-row maxima :math:`\max_{\ell \le d \le u} J_j d = \sum_i \max(J_{ji}\ell_i, J_{ji}u_i)`.

    The big-M constants of the LPEC's MILP: finite because the box is bounded, and tight (the
    maximum is attained at a vertex of the box), so no LPEC point is cut off.
    """
    if not (np.isfinite(lo).all() and np.isfinite(hi).all()):
        raise ValueError("big_m: the box on d must be bounded")
    return np.maximum(J * lo, J * hi).sum(axis=1) if J.size else np.zeros(J.shape[0])


def stack_rows(blocks: list[Any], n: int, sparse: bool) -> np.ndarray | csr_matrix:
    """Row blocks (dense or sparse) of ``n`` columns stacked into one ``(m, n)`` matrix: CSR when
    ``sparse`` (the LPECs of problems above the dense-Jacobian size), else a dense array."""
    if sparse:
        return vstack([csr_matrix(b).reshape(-1, n) for b in blocks], format="csr")
    return np.vstack(blocks).reshape(-1, n)


def milp_arrays(lpec: LPEC) -> tuple[np.ndarray, LinearConstraint, Bounds, np.ndarray]:
    r"""``(c, constraints, bounds, integrality)`` of the LPEC's MILP in :math:`(d, z)`.

    Rows: :math:`A_{eq} d = 0`; :math:`A_{ub} d \le 0`; :math:`0 \le \nabla G_j d - M^G_j z_j`
    and :math:`\nabla G_j d \ge 0` as :math:`0 \le \nabla G_j d \le M^G_j z_j`;
    :math:`0 \le \nabla H_j d \le M^H_j (1 - z_j)`; :math:`z_j \in \{0, 1\}`.
    """
    n, k = lpec.c.size, lpec.n_biactive
    MG, MH = big_m(lpec.JG, lpec.lo, lpec.hi), big_m(lpec.JH, lpec.lo, lpec.hi)
    zk = csr_matrix((lpec.A_eq.shape[0], k)), csr_matrix((lpec.A_ub.shape[0], k))
    eye = np.eye(k)
    blocks = [
        hstack([csr_matrix(lpec.A_eq), zk[0]], format="csr"),
        hstack([csr_matrix(lpec.A_ub), zk[1]], format="csr"),
        np.hstack([lpec.JG, np.zeros((k, k))]),  # grad G_j d >= 0
        np.hstack([lpec.JH, np.zeros((k, k))]),  # grad H_j d >= 0
        np.hstack([lpec.JG, -eye * MG]),  # grad G_j d - M_G z_j <= 0
        np.hstack([lpec.JH, eye * MH]),  # grad H_j d + M_H z_j <= M_H
    ]
    lo = np.concatenate([
        np.zeros(lpec.A_eq.shape[0]), np.full(lpec.A_ub.shape[0], -np.inf), np.zeros(2 * k),
        np.full(2 * k, -np.inf),
    ])  # fmt: skip
    hi = np.concatenate([
        np.zeros(lpec.A_eq.shape[0]), np.zeros(lpec.A_ub.shape[0]), np.full(2 * k, np.inf), np.zeros(k), MH,
    ])  # fmt: skip
    A = stack_rows(blocks, n + k, sparse=True)
    c = np.concatenate([lpec.c, np.zeros(k)])
    bounds = Bounds(np.concatenate([lpec.lo, np.zeros(k)]), np.concatenate([lpec.hi, np.ones(k)]))
    integrality = np.concatenate([np.zeros(n), np.ones(k)])
    return c, LinearConstraint(A, lo, hi), bounds, integrality


def _enumerate(lpec: LPEC, threshold: float, hint: np.ndarray | None) -> LPECSolution:
    k, n = lpec.n_biactive, lpec.c.size
    first = tuple(int(h) for h in (np.zeros(k, dtype=int) if hint is None else hint))

    def branches() -> Iterator[tuple[int, ...]]:
        yield first
        for bits in itertools.product((0, 1), repeat=k):
            if bits != first:
                yield bits

    n_lp = 0
    best = 0.0
    for bits in branches():
        eq, ub = [lpec.A_eq], [lpec.A_ub]
        for j, bit in enumerate(bits):
            if bit == 0:  # grad G_j d = 0, grad H_j d >= 0
                eq.append(lpec.JG[j : j + 1])
                ub.append(-lpec.JH[j : j + 1])
            else:  # grad G_j d >= 0, grad H_j d = 0
                ub.append(-lpec.JG[j : j + 1])
                eq.append(lpec.JH[j : j + 1])
        sparse = issparse(lpec.A_eq) or issparse(lpec.A_ub)
        A_eq, A_ub = stack_rows(eq, n, sparse), stack_rows(ub, n, sparse)
        res = highs.linprog(
            lpec.c,
            A_ub=A_ub if A_ub.shape[0] else None,
            b_ub=np.zeros(A_ub.shape[0]) if A_ub.shape[0] else None,
            A_eq=A_eq if A_eq.shape[0] else None,
            b_eq=np.zeros(A_eq.shape[0]) if A_eq.shape[0] else None,
            bounds=np.column_stack([lpec.lo, lpec.hi]),
        )
        n_lp += 1
        if res.status != 0 or res.x is None:
            return LPECSolution(None, None, np.nan, "enumerate", n_lp, f"branch LP failed: {res.message}")
        d, fun = np.asarray(res.x, dtype=float), float(res.fun)
        best = min(best, fun)
        if fun < -threshold:
            return LPECSolution(False, d, fun, "enumerate", n_lp)
    return LPECSolution(True, None, best, "enumerate", n_lp)


def _milp(lpec: LPEC, threshold: float, time_limit: float | None) -> LPECSolution:
    c, cons, bounds, integ = milp_arrays(lpec)
    # HiGHS's default relative gap (1e-4) is meaningless near the value 0 that certifies B;
    # the certificate is read off the dual bound, the gap only has to close near it
    opts: dict[str, float] = {"mip_rel_gap": 1e-6}
    if time_limit is not None:
        opts["time_limit"] = max(time_limit, 1e-3)
    res = highs.milp(c, constraints=cons, bounds=bounds, integrality=integ, options=opts)
    n = lpec.c.size
    if res.x is not None and res.fun is not None and res.fun < -threshold:
        # any feasible point below the threshold is a descent direction, optimal or not
        return LPECSolution(False, np.asarray(res.x[:n], dtype=float), float(res.fun), "milp", 1)
    if res.status != 0:
        return LPECSolution(None, None, np.nan, "milp", 1, f"MILP not solved: {res.message}")
    dual = getattr(res, "mip_dual_bound", None)
    dual = float(res.fun) if dual is None or not np.isfinite(dual) else float(dual)
    if dual >= -threshold:
        return LPECSolution(True, None, float(res.fun), "milp", 1)
    return LPECSolution(None, None, float(res.fun), "milp", 1, f"MILP gap open: dual bound {dual:.2e}")


def solve_lpec(
    lpec: LPEC,
    threshold: float,
    *,
    enumerate_max: int = 4,
    max_biactive: int | None = None,
    hint: np.ndarray | None = None,
    time_limit: float | None = None,
) -> LPECSolution:
    """Decide the LPEC: enumerate up to ``enumerate_max`` biactive pairs, else one MILP.

    ``max_biactive`` (``None``: no limit) skips larger LPECs (verdict ``None``); ``hint`` is the
    branch (per pair ``0``: ``grad G d = 0``, ``1``: ``grad H d = 0``) enumerated first;
    ``time_limit`` bounds the MILP.
    """
    k = lpec.n_biactive
    if max_biactive is not None and k > max_biactive:
        return LPECSolution(
            None, None, np.nan, "skipped", 0, f"LPEC too large: {k} biactive > {max_biactive}"
        )
    if k <= enumerate_max:
        return _enumerate(lpec, threshold, hint)
    return _milp(lpec, threshold, time_limit)
