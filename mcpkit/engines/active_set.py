r"""Active-set Newton polish for MCPs: the fast path of warm re-solves.

Given a guess of which pairs sit at a bound, the MCP reduces to the square system

.. math::

    r_i(z) = a_i\,(z_i - b_i) + (1 - a_i)\,F_i(z; p) = 0, \qquad i = 1, \dots, n,

with :math:`a_i = 1, b_i = l_i` for a pair at its lower bound, :math:`a_i = 1, b_i = u_i` at its
upper bound (and for fixed variables), and :math:`a_i = 0` for a pair with :math:`F_i = 0`.
Newton's method (CasADi's ``rootfinder``) solves it in a few iterations. The answer is kept only
if the natural residual of the *original* pairs meets the tolerance — which also checks the
signs of :math:`F` at the bounds and that :math:`z` stays inside them. Otherwise the caller
falls back to the IPOPT homotopy.

In time stepping the active set rarely changes from one step to the next, so most steps are
one Newton solve; a step where contact opens, closes or sticks goes through IPOPT.
"""

from __future__ import annotations

import time

import casadi as ca
import numpy as np

from mcpkit.lowering.casadi import CasadiMCP


class ActiveSetNewton:
    """Newton's method on the active-set system of the module docstring, built once."""

    def __init__(self, cmcp: CasadiMCP, tol: float, max_iter: int = 30) -> None:
        n = cmcp.n
        T = type(cmcp.z)
        a = T.sym("a", n)
        b = T.sym("b", n)
        r = a * (cmcp.z - b) + (1 - a) * cmcp.F
        fun = ca.Function("active_set_residual", [cmcp.z, ca.vertcat(cmcp.p, a, b)], [r])
        self.rootfinder = ca.rootfinder(
            "active_set_newton",
            "newton",
            fun,
            {"abstol": 0.1 * tol, "max_iter": max_iter, "error_on_fail": False, "show_eval_warnings": False},
        )
        self.lb = cmcp.lb
        self.ub = cmcp.ub

    def guess(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Active set read off a previous solution ``z``: which bound each pair sits on."""
        scale = 1e-9 * (1.0 + np.abs(z))
        at_l = np.abs(z - self.lb) <= scale
        at_u = np.abs(self.ub - z) <= scale
        a = (at_l | at_u).astype(float)
        b = np.where(at_l, self.lb, np.where(at_u, self.ub, 0.0))
        return a, b

    def solve(self, z0: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, int, str, float]:
        """Newton from ``z0`` with the active set guessed from ``z0``.

        Returns ``(z, iterations, status, wall_time_s)``; ``z`` may be NaN on failure.
        """
        a, b = self.guess(z0)
        t0 = time.perf_counter()
        try:
            z = np.asarray(self.rootfinder(z0, np.concatenate([p, a, b])), dtype=float).reshape(-1)
            stats = self.rootfinder.stats()
            iters = int(stats.get("iter_count", 0))
            status = str(stats.get("return_status", "unknown"))
        except RuntimeError as exc:  # evaluation errors (e.g. sqrt of a negative) surface here
            z = np.full(z0.shape, np.nan)
            iters, status = 0, f"exception: {str(exc).splitlines()[-1][:120]}"
        return z, iters, status, time.perf_counter() - t0
