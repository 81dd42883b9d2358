r"""The derivatives of an MPCC's own rows, computed once and shared by every NLP built on them.

Every NLP the homotopy builds on an MPCC (each reformulation's subproblem, cold and warm; the
active-set polish; the refinement's branch NLPs) is

.. math::

    \min_x f(x; p) \quad\text{s.t.}\quad g_l \le \begin{pmatrix} g(x; p) \\ r(x; p, t)
    \end{pmatrix} \le g_u,

the MPCC's rows :math:`g` followed by rows :math:`r` of its own (pair rows, sign rows, active
sets), with parameters :math:`(p, t)`. CasADi's ``nlpsol`` differentiates the whole NLP
symbolically each time it builds a solver; for rows :math:`g` with a large expression graph
that is most of the cost (an SX row block :math:`Mx` with a dense :math:`200 \times 200` matrix:
6 s for its Jacobian, against 0.1 s for everything else). :class:`SharedDerivatives` computes
:math:`\nabla f`, :math:`\partial g / \partial x` and :math:`\nabla^2_{xx}(\lambda_f f +
\lambda_g^\top g)` once per MPCC (kept with the problem, so per problem identity, never
globally) and hands each template IPOPT's three derivative functions,

.. math::

    \partial_x \begin{pmatrix} g \\ r \end{pmatrix} = \begin{pmatrix} \partial_x g \\
    \partial_x r \end{pmatrix}, \qquad
    \nabla^2_{xx} L = \nabla^2_{xx}(\lambda_f f + \lambda_g^\top g) +
    \nabla^2_{xx}(\mu^\top r),

so only the template's own rows :math:`r` are differentiated per build. SX problems only (MX
functions take no composite inputs); other templates are built as before.

Dense rows are differentiated one at a time (:func:`row_jacobian`): CasADi's Jacobian of a block
colours its columns, and a block with :math:`k` nonzeros in its densest row takes at least
:math:`k` sweeps over the block's whole expression graph. For the lifted rows
:math:`s - (Mx + q + y)` of a dense :math:`n \times n` matrix that is :math:`n` sweeps over
:math:`n^2` operations, :math:`O(n^3)`; one reverse sweep per row over that row's own
:math:`O(n)` operations is :math:`O(n^2)`, the size of :math:`M` (7.8 s against 0.35 s at
:math:`n = 300`, the same expressions).
"""

from __future__ import annotations

from typing import Any

import casadi as ca
import numpy as np

from mcpkit.problems.mpcc import MPCC
from mcpkit.problems.names import casadi_name

#: Key of the cache in :attr:`MPCC._derived <mcpkit.problems.mpcc.MPCC>`.
CACHE_KEY = "shared_derivatives"

#: A row with at least this many Jacobian nonzeros is differentiated on its own
#: (:func:`row_jacobian`); the threshold of :mod:`mcpkit.lowering.lift_pairs`' ``"auto"``.
DENSE_ROW = 50


def dense_rows(g: ca.SX, x: ca.SX) -> tuple[np.ndarray, np.ndarray]:
    r"""The rows of ``g`` with at least :data:`DENSE_ROW` nonzeros in :math:`\partial g /
    \partial x` (by structure), and the nonzeros of every row."""
    if not g.numel() or not x.numel():
        return np.zeros(0, dtype=int), np.zeros(int(g.numel()), dtype=int)
    rows, _ = ca.jacobian_sparsity(g, x).get_triplet()
    counts = np.bincount(np.asarray(rows, dtype=int), minlength=int(g.numel()))
    return np.flatnonzero(counts >= DENSE_ROW), counts


def row_jacobian(g: ca.SX | ca.MX, x: ca.SX | ca.MX) -> ca.SX | ca.MX:
    r""":math:`\partial g / \partial x` (sparse), the rows :func:`dense_rows` finds one reverse
    sweep each over their own expression graph, the others in one CasADi Jacobian.

    The same expressions as ``casadi.jacobian(g, x)`` (rows stacked back in their order), at a
    cost proportional to the graphs of the dense rows rather than to the densest row times the
    whole graph (module docstring). MX, a vector ``g`` without dense rows: ``casadi.jacobian``."""
    if not isinstance(g, ca.SX) or not isinstance(x, ca.SX) or g.size2() != 1:
        return ca.jacobian(g, x)
    dense, counts = dense_rows(g, x)
    if dense.size == 0:
        return ca.jacobian(g, x)
    rest = np.flatnonzero(counts < DENSE_ROW)
    blocks = [ca.jacobian(g[int(i)], x) for i in dense]
    if rest.size:
        blocks.insert(0, ca.jacobian(g[rest.tolist()], x))
    order = np.argsort(np.concatenate([rest, dense]), kind="stable")
    return ca.vertcat(*blocks)[order.tolist(), :]


class SharedDerivatives:
    r"""Derivative expressions of one SX MPCC's :math:`f` and :math:`g` (module docstring)."""

    def __init__(self, mpcc: MPCC) -> None:
        self.mpcc = mpcc
        x, f, g = mpcc.x, mpcc.f, mpcc.g
        self.lam_f = ca.SX.sym("lam_f")
        self.lam_g = ca.SX.sym("lam_g", int(g.numel()))
        self.grad_f = ca.gradient(f, x)
        self.jac_g = row_jacobian(g, x)
        # rows affine in x add nothing to the Hessian: only the others enter its graph (for the
        # lifted rows s - (Mx + q + y) of a dense M, a reverse sweep over O(n^2) operations less)
        self.curved = np.flatnonzero(ca.which_depends(g, x, 2, True)).tolist() if g.numel() else []
        self.hess = ca.hessian(self.lam_f * f + ca.dot(self.lam_g[self.curved], g[self.curved]), x)[0]
        self._hess_g: ca.SX | None = None

    @property
    def hess_g(self) -> ca.SX:
        r""":math:`\nabla^2_{xx}(\lambda_g^\top g)` alone, for an NLP with another objective
        (computed on first use)."""
        if self._hess_g is None:
            g, c = self.mpcc.g, self.curved
            self._hess_g = ca.hessian(ca.dot(self.lam_g[c], g[c]), self.mpcc.x)[0]
        return self._hess_g

    @staticmethod
    def of(mpcc: MPCC) -> SharedDerivatives:
        """The problem's shared derivatives (computed on first use, then kept with it)."""
        cached = mpcc._derived.get(CACHE_KEY)
        if cached is None:
            cached = SharedDerivatives(mpcc)
            mpcc._derived[CACHE_KEY] = cached
        return cached

    def functions(
        self, p: ca.SX, extra_rows: ca.SX, name: str, f: ca.SX | None = None
    ) -> dict[str, ca.Function]:
        r"""IPOPT's ``grad_f``, ``jac_g`` and ``hess_lag`` for the NLP with parameters ``p`` (the
        MPCC's followed by the template's), rows :math:`(g, r)`, :math:`r` = ``extra_rows``, and
        the objective ``f`` (``None``: the MPCC's; another one, such as a penalty
        reformulation's, is differentiated here and only :math:`g`'s derivatives are shared)."""
        mp = self.mpcc
        x = mp.x
        own = f is None or ca.is_equal(f, mp.f)
        f = mp.f if own else f
        grad_f = self.grad_f if own else ca.gradient(f, x)
        base_hess = self.hess if own else ca.hessian(self.lam_f * f, x)[0] + self.hess_g
        name = casadi_name(name)
        mu = ca.SX.sym("mu", int(extra_rows.numel()))
        rows = ca.vertcat(mp.g, extra_rows)
        jac = ca.vertcat(self.jac_g, row_jacobian(extra_rows, x))
        hess = base_hess + ca.hessian(ca.dot(mu, extra_rows), x)[0]
        lam_g = ca.vertcat(self.lam_g, mu)
        return {
            "grad_f": ca.Function(f"{name}_grad_f", [x, p], [f, grad_f]),
            "jac_g": ca.Function(f"{name}_jac_g", [x, p], [rows, jac]),
            "hess_lag": ca.Function(f"{name}_hess_lag", [x, p, self.lam_f, lam_g], [ca.triu(hess)]),
        }


def shared_functions(
    base: MPCC | None, x: Any, p: Any, f: Any, extra_rows: Any, name: str
) -> dict[str, ca.Function] | None:
    """The ``nlpsol`` derivative options of an NLP on ``base`` (see :class:`SharedDerivatives`),
    or ``None`` when they cannot be shared: no base, an MX problem, or other variables. Another
    objective than the base's is differentiated on its own (IPOPT's own scaling options apply to
    what these return)."""
    if base is None or not isinstance(base.x, ca.SX) or extra_rows is None:
        return None
    if not (isinstance(x, ca.SX) and isinstance(p, ca.SX) and isinstance(extra_rows, ca.SX)):
        return None
    if x.numel() != base.x.numel() or not ca.is_equal(x, base.x) or not isinstance(f, ca.SX):
        return None
    return SharedDerivatives.of(base).functions(p, extra_rows, name, f)
