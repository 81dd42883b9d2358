"""Shared test helpers: exact small-LCP/box-MCP solutions, PATH skip, benchmark scripts by path."""

from __future__ import annotations

import importlib.util
import itertools
import math
import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

#: ``../shared`` beside the checkout (as in CI), or ``$MCPKIT_SHARED``.
SHARED = Path(os.environ.get("MCPKIT_SHARED", Path(__file__).resolve().parents[1].parent / "shared"))
SHARED_DATA = SHARED / "data"


BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_benchmark(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` imported by path (the folder is scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def enumerate_box_lcp(M: np.ndarray, q: np.ndarray, lb: np.ndarray, ub: np.ndarray) -> list[np.ndarray]:
    """All solutions of ``lb <= z <= ub ⟂ Mz + q`` by enumerating the 3^n active patterns.

    Independent of mcpkit: for each pattern (at lower, between, at upper) fix the bounded
    components, solve the linear system for the free ones and keep the candidates that satisfy
    the sign conditions. Only for small n.
    """
    n = q.size
    sols: list[np.ndarray] = []
    for pattern in itertools.product((0, 1, 2), repeat=n):
        if any(
            (s == 0 and not math.isfinite(lb[i])) or (s == 2 and not math.isfinite(ub[i]))
            for i, s in enumerate(pattern)
        ):
            continue
        z = np.zeros(n)
        free = [i for i, s in enumerate(pattern) if s == 1]
        fixed = [i for i, s in enumerate(pattern) if s != 1]
        for i in fixed:
            z[i] = lb[i] if pattern[i] == 0 else ub[i]
        if free:
            A = M[np.ix_(free, free)]
            rhs = -(q[free] + M[np.ix_(free, fixed)] @ z[fixed]) if fixed else -q[free]
            try:
                z[free] = np.linalg.solve(A, rhs)
            except np.linalg.LinAlgError:
                continue
        w = M @ z + q
        tol = 1e-9 * (1 + np.abs(w).max())
        ok = True
        for i, s in enumerate(pattern):
            if s == 0 and w[i] < -tol:
                ok = False
            if s == 2 and w[i] > tol:
                ok = False
            if s == 1 and not (lb[i] - 1e-12 <= z[i] <= ub[i] + 1e-12):
                ok = False
        if ok and not any(np.allclose(z, s_, atol=1e-9) for s_ in sols):
            sols.append(z)
    return sols


def random_p_matrix(rng: np.random.Generator, n: int, skew: float = 1.0, shift: float = 0.1) -> np.ndarray:
    """A positive-definite (hence P-) matrix: ``A A^T / n + shift I + skew (C - C^T)``."""
    A = rng.standard_normal((n, n))
    C = rng.standard_normal((n, n))
    return A @ A.T / n + shift * np.eye(n) + skew * (C - C.T) / math.sqrt(n)


@pytest.fixture
def require_path() -> None:
    """Skip with the reason printed when PATH is not available."""
    from mcpkit.solving.availability import path_unavailable_reason

    why = path_unavailable_reason()
    if why is not None:  # the probe's words: not installed, licence refused, ...
        pytest.skip(f"PATH not available: {why}")


@pytest.fixture(autouse=True)
def _fresh_path_probe() -> Iterator[None]:
    """Each test sees PATH as it is (or as it fakes it): ``method="auto"`` remembers its PATH
    probe for the process (:func:`mcpkit.orchestration.planner.path_first`), so the answer is dropped
    before and after every test."""
    from mcpkit.orchestration.planner import forget_path_probe

    forget_path_probe()
    yield
    forget_path_probe()
