r"""Penalty (elastic) reformulation.

Move complementarity into the objective:

.. math::

    \min_x\ f(x; p) + \rho \sum_j G_j(x; p) H_j(x; p)
    \quad\text{s.t.}\quad g_l \le g \le g_u,\ x_l \le x \le x_u,\ G \ge 0,\ H \ge 0,

with :math:`\rho \leftarrow \gamma\rho` until the pairs' residual meets the tolerance. Because
:math:`G, H \ge 0` the penalty is an exact :math:`\ell_1` penalty of the complementarity
constraint. For an MCP (:math:`f = 0`) any solution is a global minimiser with value 0, so a
single subproblem often suffices; the active-set polish then removes the remaining error.
"""

from __future__ import annotations

from collections.abc import Iterator

import casadi as ca

from mcpkit.homotopy.reformulation import NLPTemplate, Reformulation, assemble, sign_constraints
from mcpkit.problems.mpcc import MPCC
from mcpkit.solving.options import SolveOptions


class Penalty(Reformulation):
    """:math:`\\ell_1` penalty of complementarity with increasing weight :math:`\\rho`."""

    name = "penalty"
    parameter_name = "rho"

    def build(self, mpcc: MPCC) -> NLPTemplate:
        rho = mpcc.sym("rho")
        rows, lo, hi = sign_constraints(mpcc)
        penalty = ca.sum1(mpcc.G * mpcc.H) if mpcc.n_pairs else type(mpcc.x)(0.0)
        return assemble(mpcc, rho, mpcc.f + rho * penalty, rows, lo, hi)

    def schedule(self, options: SolveOptions) -> Iterator[float]:
        rho = options.rho0
        for _ in range(options.max_outer):
            yield rho
            rho *= options.rho_factor
