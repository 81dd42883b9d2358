r"""The verdict knows its rounding floor (issue 43, ``lcp_free_q1e14_rounding.json``).

With :math:`q \sim 10^{14}` and free variables, :math:`Mz + q` evaluated in doubles is 0 at points
whose exact residual is :math:`10^{-3}`: the check cannot see the error. :func:`judge_point` bounds
the evaluation error of :math:`F` (:meth:`AffineMap.rounding_floor`) and says ``UNCERTIFIED`` then.
The exact residuals here are computed in rational arithmetic (:mod:`fractions`).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from mcpkit import MCP, SolutionStatus
from mcpkit.solving.residuals import certified_residual
from mcpkit.solving.result import judge_point

#: The corpus file's data (3x3 positive definite M, q ~ 1e14, every variable free).
M14 = np.array(
    [
        [4.938115671685868, 2.1584671831968127, -2.351888852713625],
        [2.1584671831968127, 6.7499374923637685, -1.9940279225888804],
        [-2.351888852713625, -1.9940279225888804, 8.879885404159499],
    ]
)
Q14 = np.array([-109132890169570.9, -135520874620473.95, 22478573245989.312])
#: The point ``mcpkit solve`` returned on it (reported residual 0.0).
Z14 = np.array([17831661334869.63, 16089950507065.422, 5804503156411.553])


def exact_residual(M: np.ndarray, q: np.ndarray, z: np.ndarray) -> float:
    """:math:`\\max_i |(Mz + q)_i|` in rational arithmetic (free variables)."""
    n = len(q)
    return float(
        max(abs(sum(Fraction(M[i, j]) * Fraction(z[j]) for j in range(n)) + Fraction(q[i])) for i in range(n))
    )


def test_float_residual_is_zero_but_exact_residual_is_not() -> None:
    """The premise: the float evaluation is blind here."""
    mcp = MCP.lcp(M14, Q14, lb=-np.inf, ub=np.inf)
    F = mcp.affine_map()(Z14)
    assert np.max(np.abs(F)) == 0.0
    assert exact_residual(M14, Q14, Z14) > 1e-3


def test_rounding_floor_bounds_the_exact_error() -> None:
    mcp = MCP.lcp(M14, Q14, lb=-np.inf, ub=np.inf)
    amap = mcp.affine_map()
    floor = amap.rounding_floor(Z14)
    exact = [
        abs(float(sum(Fraction(M14[i, j]) * Fraction(Z14[j]) for j in range(3)) + Fraction(Q14[i])))
        for i in range(3)
    ]
    assert np.all(floor >= np.array(exact)), (floor, exact)
    lb, ub = mcp.lb, mcp.ub
    assert certified_residual(Z14, amap(Z14), lb, ub, floor) >= exact_residual(M14, Q14, Z14)


def test_point_below_the_floor_is_uncertified_not_solved() -> None:
    mcp = MCP.lcp(M14, Q14, lb=-np.inf, ub=np.inf)
    amap = mcp.affine_map()
    jp = judge_point(Z14, lambda z: amap(z), mcp.lb, mcp.ub, 1e-8, F_err=amap.rounding_floor)
    assert jp.residuals.natural == 0.0
    assert jp.status is SolutionStatus.UNCERTIFIED
    assert 1e-3 < jp.floor < 1.0
    loose = judge_point(Z14, lambda z: amap(z), mcp.lb, mcp.ub, 1.0, F_err=amap.rounding_floor)
    assert loose.status is SolutionStatus.SOLUTION  # a tolerance above the floor can be certified


def test_ordinary_data_has_a_floor_near_machine_precision() -> None:
    M = np.array([[2.0, 1.0], [1.0, 2.0]])
    q = np.array([-1.0, -1.0])
    z = np.array([1.0, 1.0]) / 3.0
    mcp = MCP.lcp(M, q)
    amap = mcp.affine_map()
    assert np.max(amap.rounding_floor(z)) < 1e-15
    jp = judge_point(z, lambda x: amap(x), mcp.lb, mcp.ub, 1e-12, F_err=amap.rounding_floor)
    assert jp.status is SolutionStatus.SOLUTION and jp.floor < 1e-14


def test_active_bound_with_large_F_keeps_its_certificate() -> None:
    """A pair at its lower bound with :math:`F_i \\gg e_i` is certified whatever the floor."""
    M = np.array([[1.0, 0.0], [0.0, 1.0]])
    q = np.array([1e14, -1.0])
    mcp = MCP.lcp(M, q)
    amap = mcp.affine_map()
    z = np.array([0.0, 1.0])
    jp = judge_point(z, lambda x: amap(x), mcp.lb, mcp.ub, 1e-10, F_err=amap.rounding_floor)
    assert jp.status is SolutionStatus.SOLUTION


def test_default_floor_of_a_nonlinear_F_is_its_last_rounding() -> None:
    lb, ub = np.array([-np.inf]), np.array([np.inf])
    z = np.array([1.0])
    jp = judge_point(z, lambda x: np.array([1e-9]), lb, ub, 1e-8)
    assert jp.status is SolutionStatus.SOLUTION and jp.floor <= 1e-9 * (1 + 1e-15)


def test_parametric_q_gets_the_same_floor_through_the_jacobian() -> None:
    """``q`` as a parameter: no affine map, the floor comes from the Jacobian (JacobianFloor)."""
    m = MCP("lcp")
    m.add_variables("z", 3, lb=-np.inf, ub=np.inf)
    q = m.add_parameters("q", 3, value=Q14)
    m.add_affine("z", M14, list(q))
    assert m.affine_map() is None
    floor = m.rounding_floor_function()
    assert floor is not None
    expected = MCP.lcp(M14, Q14, lb=-np.inf, ub=np.inf).affine_map().rounding_floor(Z14)
    np.testing.assert_allclose(floor(Z14, Q14), expected, rtol=1e-6, atol=0)
    F = m.evaluate(Z14)
    jp = judge_point(Z14, lambda z: F, m.lb, m.ub, 1e-8, F, lambda z: floor(z, Q14))
    assert jp.status is SolutionStatus.UNCERTIFIED
