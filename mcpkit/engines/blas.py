r"""One BLAS thread while a small dense solve runs: :func:`small_blas`.

NumPy and SciPy each load their own OpenBLAS (and CasADi a third), each with its own thread
pool. On small matrices threads buy nothing — one LU of a :math:`156 \times 156` matrix takes
0.33 ms on one thread or on two — but after a call a pool's threads keep spinning for a while,
and a call into the *other* library's BLAS then competes with them for the cores. A Newton
method alternates exactly so (NumPy products, then a SciPy/LAPACK factorisation). Measured on
the 2-core CI machine, FCLIB's ``BoxesStack1`` (52 contacts, :math:`n = 156`): most dense
factorisations took 0.4 ms, some 3–4 ms, and the whole solve 0.175 s; with one thread per pool
0.073 s (``benchmarks/bench_fclib.py``; ``local_problem_test`` 0.151 s against 0.070 s).

:func:`small_blas` limits every BLAS that threadpoolctl finds loaded to one thread while a solve
with :data:`SINGLE_THREAD_MIN_N` to :data:`SINGLE_THREAD_MAX_N` unknowns runs, and restores the
previous limits after. Below that range OpenBLAS runs single-threaded by itself (its GEMM for
:math:`mnk \le 262144`, its GETRF for :math:`mn < 10^4`), and the limit's own cost (about
50 µs) would show on problems that solve in a millisecond.
Above that the threads pay: a dense LU with :math:`n = 1000` takes 23 ms on two threads against
35 ms on one, :math:`n = 2000` 130 ms against 248 ms. Nested uses cost nothing (only the
outermost one changes the limits).

Each Python thread keeps its own nesting depth, but the limit itself is process-wide: while a
small solve runs in one thread, other threads' BLAS calls are single-threaded too, and a thread
that ends its solve restores the threads under another that is still solving — a matter of
speed, never of results.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

__all__ = ["SINGLE_THREAD_MAX_N", "SINGLE_THREAD_MIN_N", "small_blas"]

#: Below this many unknowns OpenBLAS does not thread anyway: no limit is set (module docstring).
SINGLE_THREAD_MIN_N = 64
#: Solves with at most this many unknowns run with one BLAS thread (module docstring: one LU
#: costs the same on one or two threads up to about n = 400, and 30 % more on one at n = 700).
SINGLE_THREAD_MAX_N = 500

_local = threading.local()  # .depth: nesting depth of small_blas in this thread
_controller_lock = threading.Lock()
_controller = None


def _limiter() -> object | None:
    """threadpoolctl's controller (built on first use; ``None`` if threadpoolctl cannot load)."""
    global _controller
    with _controller_lock:
        if _controller is None:
            try:
                from threadpoolctl import ThreadpoolController
            except ImportError:  # pragma: no cover - a core dependency; speed only, never results
                _controller = False
            else:
                _controller = ThreadpoolController()
    return _controller or None


@contextlib.contextmanager
def small_blas(n: int) -> Iterator[None]:
    """Run the ``with`` body with one BLAS thread when ``SINGLE_THREAD_MIN_N <= n <= SINGLE_THREAD_MAX_N``.

    See the module docstring for why and the measurements behind the bounds.

    Parameters
    ----------
    n
        Number of unknowns of the solve (the order of its dense matrices).
    """
    if not SINGLE_THREAD_MIN_N <= n <= SINGLE_THREAD_MAX_N:
        yield
        return
    depth = getattr(_local, "depth", 0)
    outer = depth == 0
    _local.depth = depth + 1
    try:
        ctl = _limiter() if outer else None
        if ctl is None:
            yield
        else:
            with ctl.limit(limits=1, user_api="blas"):  # type: ignore[attr-defined]
                yield
    finally:
        _local.depth = depth
