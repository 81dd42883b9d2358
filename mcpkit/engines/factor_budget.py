r"""The caller's time limit inside sparse and dense factorisations: estimate first, then run stoppably.

A SuperLU or LAPACK factorisation cannot be interrupted: an engine that checks its deadline
between iterations overruns it by one factorisation, and on a matrix whose factor fills in (a
random sparse :math:`H` of order :math:`10^4` takes seconds, :math:`10^5` hours) that is the
whole overrun. :class:`FactorBudget` guards each factorisation of order at least
:data:`GUARD_MIN_ORDER` made while a caller's limit is running:

1. **cost estimate (sizes, no clock)**: the work of factorising :math:`A` (order :math:`m`) is
   estimated by that of the Cholesky factor :math:`L` of the pattern of
   :math:`A + A^T + I`,

   .. math::

       w(A) = \sum_j c_j^2, \qquad c_j = |\{i \ge j : L_{ij} \ne 0\}|,

   in the ordering SuperLU will use (CasADi's approximate minimum degree for a fresh ordering,
   the given order for an inherited one). The column counts come from CasADi's symbolic
   :math:`LDL^T` (``Sparsity.ldl``), whose cost is that of the pattern of :math:`L`; it is run
   only when the **envelope** of the order (:math:`\sum_i (i - \min\{j : A_{ij} \ne 0\})`,
   which contains every fill-in of a symmetric elimination in that order) is at most
   :data:`SYMBOLIC_MAX_ENTRIES`; otherwise the estimate is :math:`\sum_i (i - f_i + 1)^2`
   over the smaller of the envelopes of the minimum-degree and the reverse Cuthill-McKee
   orders (exact in size for random sparse patterns, whose factors fill their envelope; an
   overestimate for large meshes). A dense :math:`m \times m` LU costs :math:`2m^3/3` flops
   (:data:`DENSE_SECONDS_PER_FLOP` each);
2. **refusal**: when :data:`SECONDS_PER_UNIT` :math:`\cdot\, w(A)` exceeds the time left to the
   caller's limit, the factorisation is not started and :attr:`FactorBudget.refusal` says why;
3. **stoppable run**: a sparse factorisation that is started runs in a worker thread (SuperLU
   releases the GIL), and the caller waits for it until the limit; one still running then is
   left to finish in the background (it was estimated to fit, so what is left is bounded) and
   :attr:`FactorBudget.refusal` says so.

The engine turns a refusal into ``Termination.TIME_LIMIT`` with that message. Factorisations
made without a caller's limit, and small ones, run as before (no estimate, no thread).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import casadi as ca
import numpy as np
import scipy.sparse as sps
from scipy.sparse.csgraph import reverse_cuthill_mckee

#: Seconds per unit of the estimate :math:`w(A)`. SuperLU took 0.4-1.7 ns per unit on this
#: project's benchmark machine (a 2-D Laplacian of order :math:`4 \cdot 10^4`: 0.11 s for
#: :math:`2.8 \cdot 10^8`; a random sparse block of order 5059: 2.8 s for :math:`1.7 \cdot 10^9`),
#: 2 ns keeps a margin for a loaded machine.
SECONDS_PER_UNIT = 2e-9
#: Seconds per flop of a dense LU (LAPACK ``getrf``, about 0.1 ns per flop on one thread there).
DENSE_SECONDS_PER_FLOP = 5e-10
#: The symbolic factorisation of the estimate is computed only when its envelope bound holds at most
#: this many entries (about 0.1 s and 160 MB at the bound); beyond it, the envelope is the estimate.
SYMBOLIC_MAX_ENTRIES = 10_000_000
#: Factorisations of a smaller order are neither estimated nor run in a thread (milliseconds at most).
GUARD_MIN_ORDER = 500

T = TypeVar("T")


class FactorRefused(Exception):
    """A factorisation was not started, or not waited for, because of the caller's time limit."""


class FactorBudget:
    r"""The caller's hard limit for the factorisations of one solve (module docstring).

    Parameters
    ----------
    deadline
        :func:`time.perf_counter` value of the caller's limit.
    """

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.refusal: str | None = None
        """Why the last guarded factorisation was refused or cut (``None``: none was)."""

    def remaining(self) -> float:
        """Seconds left to the caller's limit (negative when it has passed)."""
        return self.deadline - time.perf_counter()

    def refuse(self, message: str) -> FactorRefused:
        """Record ``message`` as the refusal and return the exception to raise."""
        self.refusal = message
        return FactorRefused(message)

    def check(self, what: str, m: int, units: float, seconds_per_unit: float | None = None) -> None:
        r"""Raise :class:`FactorRefused` when :math:`w` ``= units`` cannot fit in the time left.

        ``seconds_per_unit``: :data:`SECONDS_PER_UNIT` when ``None``.
        """
        rate = SECONDS_PER_UNIT if seconds_per_unit is None else seconds_per_unit
        need, left = rate * units, self.remaining()
        if need > left:
            raise self.refuse(
                f"time limit: {what} of order {m} not started, its estimated cost "
                f"({units:.2e} flops, about {need:.3g} s) exceeds the {max(left, 0.0):.3g} s left"
            )

    def run(self, what: str, m: int, factorise: Callable[[], T]) -> T:
        """Run ``factorise`` in a worker thread and wait for it until the caller's limit."""
        box = _Outcome()
        worker = threading.Thread(target=box.run, args=(factorise,), name="mcpkit-factorise", daemon=True)
        worker.start()
        worker.join(min(max(self.remaining(), 0.0), threading.TIMEOUT_MAX))
        if worker.is_alive():
            raise self.refuse(
                f"time limit: reached during {what} of order {m} (left to finish in the background)"
            )
        return box.result()


class _Outcome:
    """What a worker thread's factorisation gave: its value or its exception."""

    def __init__(self) -> None:
        self.value: Any = None
        self.error: BaseException | None = None

    def run(self, factorise: Callable[[], Any]) -> None:
        try:
            self.value = factorise()
        except BaseException as exc:  # re-raised in the caller's thread
            self.error = exc

    def result(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.value


def guarded(
    budget: FactorBudget | None, what: str, m: int, units: Callable[[], float], factorise: Callable[[], T]
) -> T:
    r"""``factorise()`` (of order ``m``) under ``budget``: estimated (``units()``), refused or run stoppably.

    Without a budget, or below :data:`GUARD_MIN_ORDER`, ``factorise()`` runs directly and
    ``units`` is not called.
    """
    if budget is None or m < GUARD_MIN_ORDER:
        return factorise()
    budget.check(what, m, units())
    return budget.run(what, m, factorise)


def dense_cost(m: int) -> float:
    r""":math:`2m^3/3`, the flops of an LU of order :math:`m`."""
    return 2.0 * float(m) ** 3 / 3.0


def sparse_cost(indices: np.ndarray, indptr: np.ndarray, m: int, fresh: bool) -> float:
    r""":math:`w(A) = \sum_j c_j^2` of the module docstring for the CSC pattern ``(indices, indptr)``."""
    P = sps.csc_matrix((np.ones(indices.size), indices, indptr), shape=(m, m))
    S = ((P + P.T + sps.identity(m, format="csc")) != 0).astype(np.int8).tocsc()
    S.sort_indices()
    orders = [np.arange(m)]
    if fresh:
        orders = [np.asarray(_sparsity(S).amd(), dtype=np.int64), reverse_cuthill_mckee(S.tocsr(), True)]
    widths = None
    for perm in orders:
        Sp = S[perm][:, perm].tocsc()
        w = _envelope(Sp)
        if float(w.sum()) <= SYMBOLIC_MAX_ENTRIES:
            L, _ = _sparsity(Sp).ldl(False)  # pattern of L^T, strictly upper: row j holds column j of L
            c = np.bincount(np.asarray(L.row(), dtype=np.int64), minlength=m) + 1.0
            return float(c @ c)
        if widths is None or w.sum() < widths.sum():
            widths = w
    assert widths is not None
    return float(((widths + 1.0) ** 2).sum())


def _envelope(S: sps.csc_matrix) -> np.ndarray:
    r""":math:`i - \min\{j : S_{ij} \ne 0\}` for every row of a symmetric pattern with its diagonal."""
    R = S.tocsr()
    first = np.minimum.reduceat(R.indices, R.indptr[:-1]) if R.nnz else np.zeros(0, dtype=np.int64)
    return np.arange(R.shape[0]) - first


def _sparsity(S: sps.csc_matrix) -> ca.Sparsity:
    """The CasADi sparsity of a CSC pattern (its indices sorted in place)."""
    S.sort_indices()
    return ca.Sparsity(S.shape[0], S.shape[1], S.indptr.tolist(), S.indices.tolist())
