r"""Elastic :math:`\ell_1` mode: relax the constraints :math:`g` as well as complementarity.

.. math::

    \min_{x, s}\ f(x; p) + \rho\Big(\sum_i s_i + \sum_j G_j(x; p) H_j(x; p)\Big)
    \quad\text{s.t.}\quad
    g_i(x; p) + s_i \ge g_{l,i},\quad g_i(x; p) - s_i \le g_{u,i},\quad s \ge 0,\quad
    G \ge 0,\ H \ge 0,\ x_l \le x \le x_u,

with one elastic variable :math:`s_i` per row of :math:`g` that has a finite bound, and
:math:`\rho \leftarrow \gamma\rho` (``rho0``, ``rho_factor``) until the original pairs and the
original constraints meet the tolerance. Because :math:`s, G, H \ge 0` the added terms are the
exact :math:`\ell_1` penalty of the constraint violation and of complementarity
(:math:`\sum_j |G_j H_j|`): for :math:`\rho` above the multipliers' norm, local solutions of the
MPCC that satisfy MPCC-LICQ are local minimisers of the elastic problem (Anitescu 2005; Ralph &
Wright 2004). Unlike :mod:`~mcpkit.homotopy.penalty` (which penalises complementarity only), every
subproblem is feasible whenever the bounds on :math:`x` are, so the mode starts from infeasible
guesses and reaches infeasible-looking regions that make Scholtes' subproblems fail.

Each subproblem starts with :math:`s_i` equal to row :math:`i`'s violation at the start point.
The homotopy driver judges every candidate on the original problem, never on :math:`s`.
"""

from __future__ import annotations

from collections.abc import Iterator

import casadi as ca
import numpy as np

from mcpkit.homotopy.reformulation import NLPTemplate, Reformulation, sign_constraints
from mcpkit.problems.mpcc import MPCC
from mcpkit.solving.options import SolveOptions


class Elastic(Reformulation):
    r""":math:`\ell_1` elastic mode (see the module docstring)."""

    name = "elastic"
    parameter_name = "rho"

    def build(self, mpcc: MPCC) -> NLPTemplate:
        rho = mpcc.sym("rho")
        lo_rows = np.flatnonzero(np.isfinite(mpcc.lbg))
        up_rows = np.flatnonzero(np.isfinite(mpcc.ubg))
        elastic = np.union1d(lo_rows, up_rows)
        ns = int(elastic.size)
        s = mpcc.sym("elastic_s", ns)
        pos = {int(i): k for k, i in enumerate(elastic)}
        g = mpcc.g
        rows: list = []
        lo: list[np.ndarray] = []
        hi: list[np.ndarray] = []
        if lo_rows.size:
            rows.append(g[lo_rows.tolist()] + s[[pos[int(i)] for i in lo_rows]])
            lo.append(mpcc.lbg[lo_rows])
            hi.append(np.full(lo_rows.size, np.inf))
        if up_rows.size:
            rows.append(g[up_rows.tolist()] - s[[pos[int(i)] for i in up_rows]])
            lo.append(np.full(up_rows.size, -np.inf))
            hi.append(mpcc.ubg[up_rows])
        sr, slo, shi = sign_constraints(mpcc)
        rows += sr
        lo += slo
        hi += shi
        comp = ca.sum1(mpcc.G * mpcc.H) if mpcc.n_pairs else type(mpcc.x)(0.0)
        penalty = (ca.sum1(s) if ns else 0) + comp
        self._rows = elastic
        return NLPTemplate(
            x=ca.vertcat(mpcc.x, s),
            p=ca.vertcat(mpcc.p, rho),
            f=mpcc.f + rho * penalty,
            g=ca.vertcat(*rows) if rows else type(mpcc.x)(0, 1),
            lbg=np.concatenate(lo) if lo else np.zeros(0),
            ubg=np.concatenate(hi) if hi else np.zeros(0),
            n_extra=ns,
            extra_start=lambda x, p: self._violation(mpcc, x, p),
        )

    def _violation(self, mpcc: MPCC, x: np.ndarray, p: np.ndarray) -> np.ndarray:
        """:math:`s_i^0 = \\max(g_{l,i} - g_i, g_i - g_{u,i}, 0)` at ``x`` (rows with a finite bound)."""
        gv = np.asarray(mpcc.function("g")(x, p), dtype=float).reshape(-1)[self._rows]
        with np.errstate(invalid="ignore"):
            v = np.maximum(np.maximum(mpcc.lbg[self._rows] - gv, gv - mpcc.ubg[self._rows]), 0.0)
        return np.where(np.isfinite(v), v, 0.0)

    def schedule(self, options: SolveOptions) -> Iterator[float]:
        rho = options.rho0
        for _ in range(options.max_outer):
            yield rho
            rho *= options.rho_factor
