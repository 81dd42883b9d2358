r"""How exactly :math:`F(z; p)` can be evaluated: the rounding floor of mcpkit's verdict.

:func:`~mcpkit.solving.result.judge_point` refuses a "solved" its own evaluation cannot resolve: it
bounds the natural residual over :math:`F_i \pm e_i` with :math:`e_i \ge |\mathrm{fl}(F_i) - F_i|`.

* Affine :math:`F = Mz + q` (:meth:`AffineMap.rounding_floor <mcpkit.problems.mcp.AffineMap.rounding_floor>`):
  :math:`e_i = \varepsilon\,(\sum_j |M_{ij} z_j| + |q_i|)` with :math:`\varepsilon = 2^{-52}`
  (twice the unit roundoff): the deterministic bound for rows of up to two terms and, beyond, the
  size rounding errors of a sum reach in practice (they grow like :math:`\sqrt{k}` times the unit
  roundoff, not :math:`k`), whatever the order of the sums.
* Any other :math:`F` of at most :data:`FLOOR_JACOBIAN_MAX_N` variables (:class:`JacobianFloor`):
  the same bound on the linearisation at the point.
* Beyond: none here; the verdict uses :math:`\varepsilon |F_i|` (the last rounding only).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from mcpkit.problems.hooks import Hook, implementation

if TYPE_CHECKING:
    from mcpkit.problems.mcp import MCP


def rounding_floor_function(mcp: MCP) -> Callable[[np.ndarray, np.ndarray], np.ndarray] | None:
    """``(z, p) -> e`` for ``mcp`` (module docstring): the affine map's bound, a
    :class:`JacobianFloor`, or ``None`` above :data:`FLOOR_JACOBIAN_MAX_N` variables."""
    amap = mcp.affine_map()
    if amap is not None:
        return amap.rounding_floor
    return JacobianFloor(mcp) if mcp.n <= FLOOR_JACOBIAN_MAX_N else None


EPS = float(np.finfo(float).eps)
"""Machine epsilon :math:`2^{-52}`, the :math:`\varepsilon` of the bounds."""

#: Largest ``n`` whose verdict bounds the rounding of a non-affine :math:`F` through its Jacobian
#: (:class:`JacobianFloor`; beyond, the Jacobian's construction could cost more than the solve).
FLOOR_JACOBIAN_MAX_N = 2000


class JacobianFloor:
    r""":math:`e = \varepsilon\,(|J|\,|z| + |F - Jz|)` at :math:`(z, p)`, :math:`J = \partial F/\partial z`.

    The size of the terms a first-order model of :math:`F` sums at the point: for :math:`F = Mz + q(p)`
    it is :meth:`AffineMap.rounding_floor` (with a parametric :math:`q`), for a nonlinear :math:`F`
    the magnitude of its linear part and of the rest. The CasADi lowering's Jacobian function is
    built on the first call; an evaluation that fails gives :math:`\varepsilon |F|`.
    """

    def __init__(self, mcp: MCP) -> None:
        self._mcp = mcp
        self._funs: tuple[Any, Any] | None = None

    def __call__(self, z: np.ndarray, p: np.ndarray) -> np.ndarray:
        if self._funs is None:
            cas = implementation(Hook.LOWER_TO_CASADI)(self._mcp)
            self._funs = (cas.F_fun, cas.jacobian_function())
        F_fun, J_fun = self._funs
        F = np.asarray(F_fun(z, p), dtype=float).reshape(-1)
        try:
            J = J_fun(z, p).sparse()
        except (RuntimeError, NotImplementedError):
            return EPS * np.abs(F)
        with np.errstate(invalid="ignore", over="ignore"):
            return EPS * (abs(J) @ np.abs(z) + np.abs(F - J @ z))
