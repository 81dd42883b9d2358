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

import casadi as ca

from mcpkit.homotopy.reformulation import PairRelaxation


def fischer_burmeister(a: ca.SX, b: ca.SX, eps: ca.SX | float) -> ca.SX:
    r""":math:`\phi_\varepsilon(a, b) = a + b - \sqrt{a^2 + b^2 + 2\varepsilon^2}` (elementwise)."""
    return a + b - ca.sqrt(a**2 + b**2 + 2 * eps**2)


class FischerBurmeister(PairRelaxation):
    """Smoothed Fischer-Burmeister equations :math:`\\phi_\\varepsilon(G_j, H_j) = 0`."""

    name = "fb"
    parameter_name = "epsilon"
    pair_equality = True
    #: Warm starts keep iterates :math:`10^{-6}` (not :math:`10^{-9}`) inside their bounds. At a
    #: solution for :math:`\varepsilon` no sign row :math:`G_j, H_j \ge 0` is active (both sides
    #: are positive with product :math:`\varepsilon^2`), and every pair has to move when
    #: :math:`\varepsilon` shrinks tenfold; started :math:`10^{-9}` from those bounds IPOPT falls
    #: into its restoration phase. On MPECLib's ``frictionalblock_6`` the subproblem at
    #: :math:`\varepsilon = 10^{-4}` took 66-84 iterations and 26-28 s that way, against 43-49
    #: iterations and 1.9-2.5 s with these pushes (the other subproblems alike or faster). Applied
    #: to every reformulation the same pushes changed MacMPEC's answers both ways (``bilevel1m``
    #: better, ``bilin`` and ``water-net`` worse), so only this one has them.
    warm_start_options = {
        "warm_start_bound_push": 1e-6,
        "warm_start_bound_frac": 1e-6,
        "warm_start_slack_bound_push": 1e-6,
        "warm_start_slack_bound_frac": 1e-6,
        "warm_start_mult_bound_push": 1e-6,
    }

    def pair_rows(self, G: ca.SX | ca.MX, H: ca.SX | ca.MX, t: ca.SX | ca.MX) -> ca.SX | ca.MX:
        return fischer_burmeister(G, H, t)
