r"""Scholtes relaxation homotopy.

For :math:`\sigma > 0` replace :math:`0 \le G \perp H \ge 0` by

.. math::

    G \ge 0,\quad H \ge 0,\quad G_j H_j / \sigma \le 1 \quad (\text{inequality form}),
    \qquad\text{or}\qquad G_j H_j / \sigma = 1 \quad (\text{equality form}),

(the product is divided by :math:`\sigma` so that IPOPT's absolute feasibility tolerance acts
relative to :math:`\sigma`), solve with IPOPT, warm-start the next problem from the solution and shrink
:math:`\sigma \leftarrow \kappa\sigma`. Scholtes (2001) showed limit points of the inequality form are
C-stationary under MPCC-LICQ. The homotopy driver (:mod:`mcpkit.solvers.homotopy`) stops on the
residual of the original pairs and finishes with an active-set polish.
"""

from __future__ import annotations

from collections.abc import Iterator

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


class Scholtes(Reformulation):
    """Scholtes relaxation; ``equality=True`` uses :math:`G_j H_j = \\sigma`."""

    parameter_name = "sigma"

    def __init__(self, equality: bool = False) -> None:
        self.equality = equality
        self.name = "scholtes_eq" if equality else "scholtes"

    def build(self, mpcc: MPCC) -> NLPTemplate:
        sigma = mpcc.sym("sigma")
        rows, lo, hi = sign_constraints(mpcc)
        nc = mpcc.n_pairs
        if nc:
            # scaled by sigma: IPOPT's absolute feasibility tolerance then means a relative
            # tolerance on the product, so the relaxation keeps tightening as sigma -> 0
            rows.append(mpcc.G * mpcc.H / sigma - 1)
            lo.append(np.zeros(nc) if self.equality else np.full(nc, -np.inf))
            hi.append(np.zeros(nc))
        return assemble(mpcc, sigma, mpcc.f, rows, lo, hi)

    def schedule(self, options: SolveOptions) -> Iterator[float]:
        return geometric(options.sigma0, options.sigma_factor, options.sigma_min, options.max_outer)

    def controller(self, options: SolveOptions) -> ParameterController:
        """Adaptive decrease (:class:`~mcpkit.solvers.reformulation.AdaptiveDecrease`)."""
        return AdaptiveDecrease(options.sigma0, options.sigma_factor, options.sigma_min, options.max_outer)
