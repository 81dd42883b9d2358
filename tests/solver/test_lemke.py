"""``method="lemke"`` through ``mcpkit.solve``: property tests against enumeration, both backends,
and the Siconos LCP/MLCP/relay set of ``../shared/data/lcp-siconos``.

``mcpkit.solve`` judges the returned point on the declaration, so ``res.solved`` below is
mcpkit's residual check, not Lemke's own word.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mcpkit
from mcpkit import MCP
from mcpkit.formats.io import load_mcp
from mcpkit.solving.result import Termination
from tests.conftest import SHARED_DATA, enumerate_box_lcp, random_p_matrix

pytestmark = pytest.mark.solver

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SICONOS = SHARED_DATA / "lcp-siconos"


@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 8), skew=st.floats(0.0, 3.0))
def test_random_p_matrix_lcp(seed: int, n: int, skew: float) -> None:
    rng = np.random.default_rng(seed)
    M = random_p_matrix(rng, n, skew=skew)
    q = rng.standard_normal(n) * 3
    exact = enumerate_box_lcp(M, q, np.zeros(n), np.full(n, math.inf))
    assert len(exact) == 1
    res = mcpkit.solve(MCP.lcp(M, q), method="lemke", tol=1e-10)
    assert res.solved, res.message
    assert res.termination is Termination.CONVERGED
    np.testing.assert_allclose(res.z, exact[0], atol=1e-9, rtol=0)


#: one component's bounds: lower only, upper only, a box (possibly thin), fixed, or free
bounds = st.one_of(
    st.tuples(st.floats(-3, 3), st.just(math.inf)),
    st.tuples(st.just(-math.inf), st.floats(-3, 3)),
    st.tuples(st.floats(-3, 1), st.floats(1e-3, 4)).map(lambda t: (t[0], t[0] + t[1])),
    st.floats(-2, 2).map(lambda v: (v, v)),
    st.just((-math.inf, math.inf)),
)


@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), box=st.lists(bounds, min_size=1, max_size=5))
def test_random_box_lcp(seed: int, box: list[tuple[float, float]]) -> None:
    rng = np.random.default_rng(seed)
    n = len(box)
    lo = np.array([b[0] for b in box])
    hi = np.array([b[1] for b in box])
    M = random_p_matrix(rng, n, skew=float(rng.uniform(0, 2)))
    q = rng.standard_normal(n) * 3
    exact = enumerate_box_lcp(M, q, lo, hi)
    assert len(exact) == 1
    res = mcpkit.solve(MCP.lcp(M, q, lb=lo, ub=hi), method="lemke", tol=1e-10)
    assert res.solved, (lo, hi, res.message)
    np.testing.assert_allclose(res.z, exact[0], atol=1e-9, rtol=0)


def test_pyomo_backend_reads_the_same_data() -> None:
    rng = np.random.default_rng(12)
    M = random_p_matrix(rng, 5)
    q = rng.standard_normal(5)
    lo = np.array([0.0, -1.0, -math.inf, 0.0, -math.inf])
    hi = np.array([math.inf, 1.0, 0.5, 2.0, math.inf])
    mcp = MCP.lcp(M, q, lb=lo, ub=hi)
    a = mcpkit.solve(mcp, method="lemke", backend="casadi")
    b = mcpkit.solve(mcp, method="lemke", backend="pyomo")
    assert a.solved and b.solved and b.backend == "pyomo"
    (exact,) = enumerate_box_lcp(M, q, lo, hi)
    np.testing.assert_allclose(b.z, exact, atol=1e-10, rtol=0)
    assert a.iterations == b.iterations


# ---------------------------------------------------------------------------------- Siconos
def _siconos_files() -> list[Path]:
    return sorted(SICONOS.glob("*.json")) if SICONOS.is_dir() else []


def _is_standard(mcp: MCP) -> bool:
    return bool((mcp.lb == 0).all() and np.isinf(mcp.ub).all())


def _confirmed_solvable(mcp: MCP) -> str | None:
    """How another route confirms a solution exists (None if none does)."""
    from mcpkit.engines.lemke import AffineData

    data = AffineData(mcp)
    p = mcp.parameter_values
    if mcp.n <= 12:
        return "enumeration" if enumerate_box_lcp(data.M(p), data.q(p), mcp.lb, mcp.ub) else None
    if mcpkit.solve(mcp, method="scholtes", time_limit=60).solved:
        return "scholtes"
    from mcpkit.solving.availability import path_available

    if path_available() and mcp.n <= 1000 and mcpkit.solve(mcp, method="path").solved:
        return "path"
    return None


@pytest.mark.skipif(not _siconos_files(), reason=f"Siconos LCP data absent ({SICONOS})")
@pytest.mark.parametrize("path", _siconos_files(), ids=lambda p: p.stem)
def test_siconos_set(path: Path, record_property: pytest.RecordProperty) -> None:
    mcp = load_mcp(path)
    t0 = time.perf_counter()
    res = mcpkit.solve(mcp, method="lemke")
    wall = time.perf_counter() - t0
    line = (
        f"{path.stem:24s} n={mcp.n:4d} solved={res.solved!s:5s} residual={res.natural_residual:.1e} "
        f"pivots={res.iterations:4d} time={wall:.3f}s {res.termination.value}"
    )
    record_property("lemke", line)
    print(line)
    assert res.solved or res.termination is not Termination.CONVERGED
    if res.solved:
        assert res.natural_residual <= 1e-8
    finite_box = bool(np.isfinite(mcp.lb).all() and np.isfinite(mcp.ub).all() and (mcp.lb < mcp.ub).all())
    if finite_box:
        # a finitely boxed LCP has no secondary ray (module docstring): always solved
        assert res.solved, res.message
    elif _is_standard(mcp) and not res.solved:
        how = _confirmed_solvable(mcp)
        assert how is None, f"{path.stem} is solvable ({how}) but lemke did not solve it: {res.message}"
