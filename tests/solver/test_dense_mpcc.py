"""A dense MPCC (pairs x ⟂ Mx + q + y with a dense M): its pair functions are lifted, its NLP
derivatives computed once, and a time limit too short for that derivative is honoured."""

from __future__ import annotations

import time

import casadi as ca
import numpy as np
import pytest

import mcpkit
from mcpkit.homotopy import ipopt
from mcpkit.homotopy.ipopt import estimated_build_seconds

pytestmark = pytest.mark.solver


def dense_mpcc(n: int, seed: int = 1) -> mcpkit.MPCC:
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, n))
    M, q = B @ B.T / n + np.eye(n), 2.0 * rng.standard_normal(n)
    x, y = ca.SX.sym("x", n), ca.SX.sym("y", n)
    H = ca.mtimes(ca.DM(M), x) + q + y
    return mcpkit.MPCC.from_casadi(
        ca.vertcat(x, y), G=x, H=H, f=ca.sumsqr(x - 1) + ca.sum1(y), lbx=np.zeros(2 * n),
        ubx=np.full(2 * n, np.inf),
    )  # fmt: skip


def test_lifted_and_unlifted_reach_the_same_certified_point() -> None:
    mpcc = dense_mpcc(60)
    lifted = mcpkit.solve(mpcc, method="scholtes")
    plain = mcpkit.solve(mpcc, method="scholtes", lift_pairs="never")
    assert lifted.extra["lifted_pair_sides"] == 60 and plain.extra["lifted_pair_sides"] == 0
    assert lifted.solved and plain.solved
    assert lifted.x.shape == plain.x.shape == (120,)  # reported in the user's variables
    assert lifted.f == pytest.approx(plain.f, rel=1e-6, abs=1e-6)
    assert lifted.stationarity in ("S", "B")


def test_sparsity_of_the_rows_enters_the_build_estimate() -> None:
    """The rows of a dense M (101 nonzeros each) are differentiated one reverse sweep each, at
    1e-6 s per nonzero; a diagonal block's Jacobian is one sweep of its graph (1e-7 s per unit
    against the graph's 2e-6 s)."""
    mpcc = dense_mpcc(100)
    dense = estimated_build_seconds(mpcc.x, mpcc.p, mpcc.H)
    without = estimated_build_seconds(mpcc.x, mpcc.p, mpcc.H, derivatives=False)
    assert dense == pytest.approx(without + 100 * 101 * 1e-6)
    diagonal = mpcc.x[:100] * mpcc.x[100:]
    assert estimated_build_seconds(mpcc.x, mpcc.p, diagonal) == pytest.approx(
        estimated_build_seconds(mpcc.x, mpcc.p, diagonal, derivatives=False) * (1 + 1e-7 / 2e-6)
    )


def test_a_limit_on_a_dense_mpcc_is_honoured() -> None:
    """n = 200 with time_limit=2: the call returns within the caller's hard limit, solved or
    stopped by the limit (on a busy machine)."""
    mpcc = dense_mpcc(200)
    t0 = time.perf_counter()
    res = mcpkit.solve(mpcc, time_limit=2)
    assert time.perf_counter() - t0 <= 1.1 * 2 + 2  # the caller's hard limit
    assert res.solved or res.termination.value == "time_limit"


def test_a_build_estimate_beyond_the_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a build estimate far above the limit (the per-unit cost raised a thousandfold, as on a
    machine that much slower), the NLP is not built and the call says so."""
    monkeypatch.setattr(ipopt, "BUILD_SECONDS_PER_UNIT", 2e-3)
    mpcc = dense_mpcc(200)
    t0 = time.perf_counter()
    res = mcpkit.solve(mpcc, time_limit=2)
    assert time.perf_counter() - t0 <= 1.1 * 2 + 2
    assert res.termination.value == "time_limit" and not res.solved
    assert "building the NLP takes at least" in res.raw_status
    assert res.stationarity == "not checked"
