r"""Smoothed Fischer-Burmeister homotopy.

The Fischer-Burmeister function :math:`\phi(a, b) = a + b - \sqrt{a^2 + b^2}` vanishes exactly
when :math:`a \ge 0,\ b \ge 0,\ ab = 0`. Its smoothing

.. math::

    \phi_\varepsilon(a, b) = a + b - \sqrt{a^2 + b^2 + 2\varepsilon^2} = 0
    \iff a > 0,\ b > 0,\ ab = \varepsilon^2

turns every pair into one smooth equation. For an MCP the result is a square nonlinear system
(solved by IPOPT as a feasibility problem); :math:`\varepsilon \leftarrow \kappa\varepsilon` drives it
to the complementarity solution, and the active-set polish finishes it.
"""

from __future__ import annotations

from collections.abc import Iterator

import casadi as ca
import numpy as np

from mcpkit.mpcc import MPCC
from mcpkit.options import SolveOptions
from mcpkit.solvers.reformulation import (
    AdaptiveDecrease,
    NLPTemplate,
    ParameterController,
    Reformulation,
    assemble,
    geometric,
    sign_constraints,
)


def fischer_burmeister(a: ca.SX, b: ca.SX, eps: ca.SX | float) -> ca.SX:
    r""":math:`\phi_\varepsilon(a, b) = a + b - \sqrt{a^2 + b^2 + 2\varepsilon^2}` (elementwise)."""
    return a + b - ca.sqrt(a**2 + b**2 + 2 * eps**2)


class FischerBurmeister(Reformulation):
    """Smoothed Fischer-Burmeister equations :math:`\\phi_\\varepsilon(G_j, H_j) = 0`."""

    name = "fb"
    parameter_name = "epsilon"

    def build(self, mpcc: MPCC) -> NLPTemplate:
        eps = mpcc.sym("epsilon")
        rows, lo, hi = sign_constraints(mpcc)
        nc = mpcc.n_pairs
        if nc:
            rows.append(fischer_burmeister(mpcc.G, mpcc.H, eps))
            lo.append(np.zeros(nc))
            hi.append(np.zeros(nc))
        return assemble(mpcc, eps, mpcc.f, rows, lo, hi)

    def schedule(self, options: SolveOptions) -> Iterator[float]:
        return geometric(options.sigma0, options.sigma_factor, options.sigma_min, options.max_outer)

    def controller(self, options: SolveOptions) -> ParameterController:
        """Adaptive decrease (:class:`~mcpkit.solvers.reformulation.AdaptiveDecrease`)."""
        return AdaptiveDecrease(options.sigma0, options.sigma_factor, options.sigma_min, options.max_outer)
