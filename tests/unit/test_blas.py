"""mcpkit.engines.blas.small_blas: one BLAS thread inside the size range, previous limits restored after."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import scipy.linalg  # noqa: F401  (loads SciPy's BLAS, so threadpoolctl sees it)
from threadpoolctl import ThreadpoolController

from mcpkit.engines.blas import SINGLE_THREAD_MAX_N, SINGLE_THREAD_MIN_N, small_blas


def blas_threads() -> list[int]:
    return [info["num_threads"] for info in ThreadpoolController().info() if info["user_api"] == "blas"]


@pytest.fixture
def two_threads():
    """The machine's default BLAS threads, when that is more than one (else nothing to check)."""
    threads = blas_threads()
    if not threads or max(threads) < 2:
        pytest.skip(f"BLAS runs on {threads or 'no'} thread(s) here: nothing to limit")


def test_limits_inside_the_range_and_restores(two_threads) -> None:
    before = blas_threads()
    with small_blas(SINGLE_THREAD_MIN_N):
        assert blas_threads() == [1] * len(before)
        with small_blas(SINGLE_THREAD_MAX_N):  # nested: still one thread, and no double restore
            assert blas_threads() == [1] * len(before)
        assert blas_threads() == [1] * len(before)
    assert blas_threads() == before


@pytest.mark.parametrize("n", [0, SINGLE_THREAD_MIN_N - 1, SINGLE_THREAD_MAX_N + 1, 10**6])
def test_leaves_threads_outside_the_range(two_threads, n: int) -> None:
    before = blas_threads()
    with small_blas(n):
        assert blas_threads() == before
    assert blas_threads() == before


def test_restores_after_an_exception(two_threads) -> None:
    before = blas_threads()
    with pytest.raises(ZeroDivisionError), small_blas(100):
        _ = 1 / 0
    assert blas_threads() == before
    with small_blas(100):  # the nesting depth was unwound too: the limit applies again
        assert blas_threads() == [1] * len(before)


def test_results_do_not_depend_on_the_limit() -> None:
    rng = np.random.default_rng(3)
    A = rng.standard_normal((200, 200)) + 20 * np.eye(200)
    b = rng.standard_normal(200)
    x_free = np.linalg.solve(A, b)
    with small_blas(200):
        x_one = np.linalg.solve(A, b)
    np.testing.assert_allclose(x_one, x_free, rtol=1e-12, atol=1e-12)


def test_a_worker_thread_sets_and_restores_its_own_limit(two_threads) -> None:
    before = blas_threads()
    seen: list[list[int]] = []

    def worker() -> None:
        with small_blas(100):
            seen.append(blas_threads())
        seen.append(blas_threads())

    t = threading.Thread(target=worker)
    t.start()
    t.join(5)
    assert seen == [[1] * len(before), before]
    assert blas_threads() == before
