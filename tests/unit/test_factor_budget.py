"""The caller's time limit inside the Newton engine's factorisations (mcpkit.engines.factor_budget):
the cost estimate, the refusal, the stoppable run, and the engine's time-limit verdict. No clock
is asserted: a passed or a far deadline, and a cost estimate made too large on purpose."""

from __future__ import annotations

import math
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sps

from mcpkit.engines import factor_budget as fb
from mcpkit.engines.newton import AffineFunctions, SemismoothNewton
from mcpkit.engines.newton_linalg import NewtonSystem
from mcpkit.problems.mcp import MCP
from mcpkit.solving.options import SolveOptions
from mcpkit.solving.result import Termination


def _arrow(m: int) -> sps.csc_matrix:
    """Identity plus a full first row and column: natural order fills everything, hub-last nothing."""
    A = sps.lil_matrix((m, m))
    A.setdiag(4.0)
    A[0, :] = 1.0
    A[:, 0] = 1.0
    A[0, 0] = float(m)
    return A.tocsc()


def test_cost_of_the_arrow_matrix_in_the_given_and_in_a_minimum_degree_order() -> None:
    m = 600
    A = _arrow(m)
    natural = fb.sparse_cost(A.indices, A.indptr, m, fresh=False)
    assert natural == sum(float(c) ** 2 for c in range(1, m + 1))  # L is full: c_j = m - j
    fresh = fb.sparse_cost(A.indices, A.indptr, m, fresh=True)
    assert fresh == 4.0 * (m - 1) + 1.0  # the hub last: c_j = 2, then 1


def test_beyond_the_symbolic_bound_the_envelope_is_the_estimate(monkeypatch: pytest.MonkeyPatch) -> None:
    m = 600
    A = _arrow(m)
    exact = fb.sparse_cost(A.indices, A.indptr, m, fresh=False)
    monkeypatch.setattr(fb, "SYMBOLIC_MAX_ENTRIES", 10)
    # the envelope of the natural order of the arrow is its whole lower triangle: the same sum
    assert fb.sparse_cost(A.indices, A.indptr, m, fresh=False) == exact


def test_a_passed_deadline_refuses_and_says_why() -> None:
    budget = fb.FactorBudget(time.perf_counter() - 1.0)
    with pytest.raises(fb.FactorRefused, match="not started"):
        budget.check("a sparse LU", 1000, 1e6)
    assert budget.refusal is not None and "order 1000" in budget.refusal and "exceeds" in budget.refusal


def test_the_stoppable_run_returns_the_value_or_the_exception() -> None:
    budget = fb.FactorBudget(math.inf)
    assert budget.run("x", 1, lambda: 42) == 42

    def singular() -> None:
        raise RuntimeError("Factor is exactly singular")

    with pytest.raises(RuntimeError, match="singular"):
        budget.run("x", 1, singular)
    assert budget.refusal is None


def test_a_factorisation_still_running_at_the_limit_is_not_waited_for() -> None:
    release = threading.Event()
    budget = fb.FactorBudget(time.perf_counter() - 1.0)  # passed: join(0) returns at once
    with pytest.raises(fb.FactorRefused, match="left to finish in the background"):
        budget.run("a sparse LU", 700, release.wait)
    release.set()


def _random_system(n: int, seed: int = 0) -> tuple[NewtonSystem, np.ndarray]:
    rng = np.random.default_rng(seed)
    k = 3 * n
    A = sps.csr_matrix((rng.standard_normal(k), (rng.integers(0, n, k), rng.integers(0, n, k))), shape=(n, n))
    M = (A @ A.T + sps.eye(n) + (A - A.T)).tocsc()
    M.sort_indices()
    system = NewtonSystem(n, M.indptr, M.indices, dense=False)
    system.set_jacobian(M.data)
    return system, M.toarray()


def test_newton_system_refuses_under_a_passed_limit_and_factorises_without_one() -> None:
    n = 800
    system, _ = _random_system(n)
    da, db = np.zeros(n), np.ones(n)
    system.budget = fb.FactorBudget(time.perf_counter() - 1.0)
    assert not system.factor(da, db)
    assert system.budget.refusal is not None and "fresh ordering" in system.budget.refusal
    system.budget = fb.FactorBudget(math.inf)  # estimated, run in the worker thread, waited for
    assert system.factor(da, db) and system.budget.refusal is None
    system.budget = None
    assert system.factor(da, db)


def test_the_engine_says_time_limit_when_no_factorisation_fits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every factorisation estimated at hours: the solve stops at the first one with the reason."""
    n = 1500  # the crash's first block (the inactive half) is above GUARD_MIN_ORDER
    rng = np.random.default_rng(1)
    system, M = _random_system(n, 1)
    mcp = MCP.lcp(sps.csr_matrix(M), rng.standard_normal(n))
    fun = AffineFunctions(mcp.affine_map(), 0)
    monkeypatch.setattr(fb, "SECONDS_PER_UNIT", 1e3)
    opts = SolveOptions(time_limit=600.0)
    engine = SemismoothNewton(fun, np.zeros(n), np.full(n, np.inf), opts, dense=False)
    out = engine.solve(np.zeros(0), np.zeros(n), warm=False)
    assert out.termination is Termination.TIME_LIMIT
    assert "not started" in out.raw_status and "estimated cost" in out.raw_status
    monkeypatch.setattr(fb, "SECONDS_PER_UNIT", 2e-9)
    opts = SolveOptions(time_limit=600.0)
    engine = SemismoothNewton(fun, np.zeros(n), np.full(n, np.inf), opts, dense=False)
    assert engine.solve(np.zeros(0), np.zeros(n), warm=False).termination is not Termination.TIME_LIMIT


def test_contact_newton_and_prox_refuse_a_dense_step_that_cannot_fit() -> None:
    """Order 1800 (600 contacts): a dense Newton step is about 4e9 flops; with 1 ms left it is not
    started, the start is judged, and the proximal loop makes no step either."""
    from mcpkit.engines.newton_contact import solve_alart_curnier
    from mcpkit.engines.prox_contact import prox_point

    nc = 600
    rng = np.random.default_rng(2)
    B = rng.standard_normal((3 * nc, 3 * nc)) / np.sqrt(3 * nc)
    W, q, mu = B @ B.T + np.eye(3 * nc), rng.standard_normal(3 * nc), np.full(nc, 0.5)
    d = solve_alart_curnier(W, q, mu, time_limit=1e-3)
    assert (
        d.iterations == 0
        and not d.solved
        and d.message.startswith("time limit")
        and "not started" in d.message
    )
    assert np.isfinite(d.siconos_error) and d.natural_residual > 0
    px = prox_point(W, q, mu, time_limit=1e-3)
    assert px.outer == 0 and px.result.iterations == 0 and px.result.message.startswith("time limit")
    assert solve_alart_curnier(W, q, mu, max_iter=0).message == "iteration limit 0"


def test_fclib_stages_skip_a_dense_proximal_stage_that_cannot_fit() -> None:
    """The proximal stage (dense steps of order 3 n_c) is not started when one step cannot fit the
    time left; small problems and solves without a limit always start it."""
    from mcpkit.models.fclib import ContactLaw, FCLIBProblem, _Stages

    def stages(nc: int, limit: float | None) -> _Stages:
        prob = FCLIBProblem(np.eye(3 * nc), np.ones(3 * nc), np.full(nc, 0.5))
        return _Stages(prob, ContactLaw.ALART_CURNIER, SolveOptions(time_limit=limit))

    why = stages(600, 0.5).dense_refusal()
    assert why is not None and "dense proximal Newton step of order 1800 not started" in why
    assert stages(600, None).dense_refusal() is None
    assert stages(600, 1e4).dense_refusal() is None
    assert stages(100, 1e-3).dense_refusal() is None  # order 300 < GUARD_MIN_ORDER
