r"""Kanzow–Schwartz relaxation homotopy.

For :math:`t > 0` replace :math:`0 \le G \perp H \ge 0` by :math:`G \ge 0`, :math:`H \ge 0` and
:math:`\varphi(G_j, H_j; t) \le 0` with

.. math::

    \varphi(a, b; t) = \begin{cases}
        (a - t)(b - t) & a + b \ge 2t, \\
        -\tfrac12\bigl((a - t)^2 + (b - t)^2\bigr) & a + b < 2t,
    \end{cases}

a once continuously differentiable function whose zero set is the two half-lines
:math:`\{a = t, b \ge t\} \cup \{a \ge t, b = t\}`: the feasible set is the complementarity
"L" shifted by :math:`t` into the positive quadrant, so biactive points keep a strictly
feasible neighbourhood. Kanzow & Schwartz (2013) show that limit points are M-stationary under
MPCC-GCQ. Divided by :math:`t^2` (as the Scholtes product is by :math:`\sigma`) so that IPOPT's
absolute tolerance acts relative to the parameter; same adaptive decrease, retries and polish as
every reformulation (:mod:`mcpkit.homotopy.loop`). This file and one registry line in
:mod:`mcpkit.solving.registry` are all it takes (the worked example of ``docs/contributing.md``).
"""

from __future__ import annotations

import casadi as ca

from mcpkit.homotopy.reformulation import PairRelaxation


class KanzowSchwartz(PairRelaxation):
    r""":math:`\varphi(G_j, H_j; t) / t^2 \le 0` (see the module docstring)."""

    name = "kanzow_schwartz"
    parameter_name = "t"

    def pair_rows(self, G: ca.SX | ca.MX, H: ca.SX | ca.MX, t: ca.SX | ca.MX) -> ca.SX | ca.MX:
        a, b = G - t, H - t
        return ca.if_else(a + b >= 0, a * b, -0.5 * (a * a + b * b)) / (t * t)
