"""Property tests: random P-matrix LCPs and box MCPs have unique solutions that mcpkit finds.

The reference solution is computed independently by enumerating the 3^n active patterns.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mcpkit
from mcpkit import MCP
from tests.conftest import enumerate_box_lcp, random_p_matrix

pytestmark = pytest.mark.solver

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(
    seed=st.integers(0, 2**31 - 1), n=st.integers(1, 6), method=st.sampled_from(["scholtes", "fb", "penalty"])
)
def test_random_p_matrix_lcp(seed: int, n: int, method: str) -> None:
    rng = np.random.default_rng(seed)
    M = random_p_matrix(rng, n, skew=rng.uniform(0, 2))
    q = rng.standard_normal(n) * 3
    exact = enumerate_box_lcp(M, q, np.zeros(n), np.full(n, math.inf))
    assert len(exact) == 1
    res = mcpkit.solve(MCP.lcp(M, q), backend="casadi", method=method, tol=1e-9)
    assert res.solved, res
    np.testing.assert_allclose(res.z, exact[0], atol=1e-6, rtol=0)


#: one component's bounds: lower only, upper only, a box (possibly thin), or free
bounds = st.one_of(
    st.tuples(st.floats(-3, 3), st.just(math.inf)),
    st.tuples(st.just(-math.inf), st.floats(-3, 3)),
    st.tuples(st.floats(-3, 1), st.floats(0.01, 4)).map(lambda t: (t[0], t[0] + t[1])),
    st.just((-math.inf, math.inf)),
)


@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), box=st.lists(bounds, min_size=1, max_size=5))
def test_random_box_mcp(seed: int, box: list[tuple[float, float]]) -> None:
    rng = np.random.default_rng(seed)
    n = len(box)
    lo = np.array([b[0] for b in box])
    hi = np.array([b[1] for b in box])
    M = random_p_matrix(rng, n)
    q = rng.standard_normal(n) * 3
    exact = enumerate_box_lcp(M, q, lo, hi)
    assert len(exact) == 1
    res = mcpkit.solve(MCP.lcp(M, q, lb=lo, ub=hi), backend="casadi", tol=1e-9)
    assert res.solved, (lo, hi, res)
    np.testing.assert_allclose(res.z, exact[0], atol=1e-6, rtol=0)
