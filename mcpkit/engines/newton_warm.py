r"""Warm re-solves of ``method="newton"``: CasADi's compiled Newton iteration on :math:`\Phi(z; p) = 0`.

A time-stepping or parametric run re-solves the same MCP from the previous solution. Near a
strictly complementary solution the box Fischer-Burmeister map :math:`\Phi` of
:mod:`mcpkit.engines.newton` is smooth, so the plain Newton iteration

.. math::

    z_{k+1} = z_k - \Phi'(z_k; p)^{-1}\,\Phi(z_k; p)

converges quadratically from a warm start, without any of the safeguards (they exist for the
global phase). :class:`CompiledWarmStep` states :math:`\Phi` symbolically in CasADi (the same
table as :class:`~mcpkit.engines.newton.BoxFischerBurmeister`: lower bound
:math:`\varphi(z - l, F)`, upper bound :math:`-\varphi(u - z, -F)`, box
:math:`\varphi(z - l, \varphi(u - z, -F))`, free :math:`-F`, fixed :math:`z - l`, with
:math:`\varphi(a, b) = \sqrt{a^2 + b^2} - a - b`) and hands it to ``casadi.rootfinder``
(plugin ``newton``): the whole iteration runs in compiled code, with AD Jacobians and a dense
LU. It is the bare-rootfinder cost the per-step benchmark compares against.

It is a fast path only. Its point is accepted when its **natural residual on the original
pairs** (:math:`\|z - \Pi_{[l,u]}(z - F(z))\|_\infty`, after projecting :math:`z` on the box)
is at most ``tol``; otherwise (degenerate pairs, where :math:`\varphi` is not differentiable and
AD gives NaN; an active-set change too large for a full Newton step; no convergence in
:data:`MAX_ITER` steps) the safeguarded method of :class:`~mcpkit.engines.newton.SemismoothNewton`
runs from the original warm start. It is used for problems with at most :data:`MAX_SIZE`
variables (dense LU inside the rootfinder) whose :math:`F` is a CasADi SX graph.
"""

from __future__ import annotations

import time

import casadi as ca
import numpy as np

from mcpkit.problems.bounds import FIXED, bound_kinds
from mcpkit.problems.names import casadi_name
from mcpkit.solving.residuals import finite_in_box

MAX_SIZE = 200
"""Largest ``n`` for which the compiled warm step is built."""
MAX_ITER = 8
"""Newton steps of the compiled iteration before it gives up."""


def _phi(a: ca.SX, b: ca.SX) -> ca.SX:
    return ca.sqrt(a * a + b * b) - a - b


def fb_map(z: ca.SX, F: ca.SX, lb: np.ndarray, ub: np.ndarray) -> ca.SX:
    r"""The box Fischer-Burmeister map :math:`\Phi(z)` as CasADi expressions (module docstring)."""
    kinds = bound_kinds(lb, ub)
    rows = []
    for i in range(int(z.numel())):
        zi, Fi, li, ui = z[i], F[i], float(lb[i]), float(ub[i])
        if kinds[i] == FIXED:
            rows.append(zi - li)
        elif np.isfinite(li) and np.isfinite(ui):
            rows.append(_phi(zi - li, _phi(ui - zi, -Fi)))
        elif np.isfinite(li):
            rows.append(_phi(zi - li, Fi))
        elif np.isfinite(ui):
            rows.append(-_phi(ui - zi, -Fi))
        else:
            rows.append(-Fi)
    return ca.vertcat(*rows)


class CompiledWarmStep:
    r"""``casadi.rootfinder`` (``newton``) on :math:`\Phi(z; p) = 0`; see the module docstring.

    Parameters
    ----------
    z, p, F
        CasADi SX symbols of the variables and parameters and the expression :math:`F(z; p)`.
    lb, ub
        Bounds of ``z``.
    tol
        Stopping tolerance of the compiled iteration on :math:`\|\Phi\|_\infty` (the acceptance
        test is the caller's, on the natural residual).
    verbose
        Let CasADi print its evaluation warnings (a NaN in :math:`\Phi` or its Jacobian at an
        iterate); otherwise they are silent and :meth:`run` returns no point.
    """

    def __init__(
        self,
        z: ca.SX,
        p: ca.SX,
        F: ca.SX,
        lb: np.ndarray,
        ub: np.ndarray,
        tol: float,
        name: str = "mcp",
        verbose: bool = False,
    ) -> None:
        n = int(z.numel())
        self.n = n
        self.lb = np.asarray(lb, dtype=float)
        self.ub = np.asarray(ub, dtype=float)
        phi = ca.Function(casadi_name(f"{name}_fb_phi"), [z, p], [fb_map(z, F, self.lb, self.ub)])
        # an iterate where Phi or its Jacobian is not finite ends the iteration (z = NaN: the caller
        # falls back to the engine); CasADi's warning about it is printed only with ``verbose``
        opts = {
            "abstol": min(tol, 1e-12) * 1e-2,
            "max_iter": MAX_ITER,
            "error_on_fail": False,
            "show_eval_warnings": bool(verbose),
        }
        self.tol = float(tol)
        self.rootfinder = ca.rootfinder(casadi_name(f"{name}_warm_newton"), "newton", phi, opts)
        self._z0 = np.zeros(n)
        self._p = np.zeros(int(p.numel()))
        self._out = np.zeros(n)
        self._buf, self._eval = self.rootfinder.buffer()
        self._buf.set_arg(0, memoryview(self._z0))
        self._buf.set_arg(1, memoryview(self._p))
        self._buf.set_res(0, memoryview(self._out))

    @classmethod
    def applies(cls, z: object, n: int) -> bool:
        """Whether the fast path is built for variables ``z`` of size ``n`` (SX and small)."""
        return isinstance(z, ca.SX) and 0 < n <= MAX_SIZE

    def run(self, p: np.ndarray, z0: np.ndarray) -> tuple[np.ndarray | None, int, float]:
        """``(z projected on the box or None if not finite, Newton steps taken, wall time)``."""
        t0 = time.perf_counter()
        self._z0[:] = z0
        self._p[:] = p
        self._eval()
        iters = int(self._buf.stats().get("iter_count", MAX_ITER))
        z = self._out
        if finite_in_box(z, self.lb, self.ub):
            return z.copy(), iters, time.perf_counter() - t0
        if not np.isfinite(z).all():
            return None, iters, time.perf_counter() - t0
        return np.minimum(np.maximum(z, self.lb), self.ub), iters, time.perf_counter() - t0
