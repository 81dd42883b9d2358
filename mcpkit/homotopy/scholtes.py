r"""Scholtes relaxation homotopy.

For :math:`\sigma > 0` replace :math:`0 \le G \perp H \ge 0` by

.. math::

    G \ge 0,\quad H \ge 0,\quad G_j H_j / \sigma \le 1 \quad (\text{inequality form}),
    \qquad\text{or}\qquad G_j H_j / \sigma = 1 \quad (\text{equality form}),

(the product is divided by :math:`\sigma` so that IPOPT's absolute feasibility tolerance acts
relative to :math:`\sigma`), solve with IPOPT, warm-start the next problem from the solution and shrink
:math:`\sigma \leftarrow \kappa\sigma`. Scholtes (2001) showed limit points of the inequality form are
C-stationary under MPCC-LICQ. The homotopy driver (:mod:`mcpkit.homotopy.loop`) stops on the
residual of the original pairs and finishes with an active-set polish.
"""

from __future__ import annotations

import casadi as ca
import numpy as np

from mcpkit.homotopy.reformulation import PairRelaxation


class Scholtes(PairRelaxation):
    """Scholtes relaxation; ``equality=True`` uses :math:`G_j H_j = \\sigma`."""

    parameter_name = "sigma"

    def __init__(self, equality: bool = False) -> None:
        self.pair_equality = equality
        self.name = "scholtes_eq" if equality else "scholtes"

    def pair_rows(self, G: ca.SX | ca.MX, H: ca.SX | ca.MX, t: ca.SX | ca.MX) -> ca.SX | ca.MX:
        # scaled by sigma: IPOPT's absolute feasibility tolerance then means a relative
        # tolerance on the product, so the relaxation keeps tightening as sigma -> 0
        return G * H / t - 1

    def warm_multipliers(self, lam_g: np.ndarray, n_pairs: int, t_from: float, t_to: float) -> np.ndarray:
        r"""Multipliers of the last ``n_pairs`` rows (:math:`G_j H_j/\sigma - 1`) times
        :math:`\sigma_{\rm to}/\sigma_{\rm from}`: the multiplier :math:`\lambda_j/\sigma` of
        the product :math:`G_j H_j` is kept, so the warm start's dual infeasibility does not grow
        by :math:`\sigma_{\rm from}/\sigma_{\rm to}`."""
        if not n_pairs or not (t_from > 0 and t_to > 0):
            return lam_g
        out = np.array(lam_g, dtype=float, copy=True)
        out[-n_pairs:] *= t_to / t_from
        return out
