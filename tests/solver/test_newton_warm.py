"""Warm re-solves of ``method="newton"`` take CasADi's compiled Newton step when it passes the check.

The fast path (:mod:`mcpkit.engines.newton_warm`) must give the same answers as cold solves,
and hand over to the safeguarded method whenever its point misses the tolerance.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import mcpkit
from mcpkit import MCP

pytestmark = pytest.mark.solver


def parametric_ncp(n: int = 8, seed: int = 3) -> MCP:
    """0 <= z perp M z + q + 0.1 z^3 with a parameter q (a P-function: one solution per q)."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    M = A @ A.T / n + 0.5 * np.eye(n)
    mcp = MCP("ncp_q")
    z = mcp.add_variables("z", n, lb=0.0)
    q = mcp.add_parameters("q", n, value=rng.standard_normal(n))
    mcp.add_functions("z", [sum(M[i, j] * z[j] for j in range(n)) + q[i] + 0.1 * z[i] ** 3 for i in range(n)])
    return mcp


def test_compiled_warm_steps_agree_with_cold_solves() -> None:
    mcp = parametric_ncp()
    warm = mcpkit.Solver(mcp, backend="casadi", method="newton", tol=1e-10)
    cold = mcpkit.Solver(mcp, backend="casadi", method="newton", tol=1e-10)
    assert warm.solve().solved
    q0 = mcp.parameter_values
    phases = []
    for k in range(1, 12):
        qk = q0 + 0.05 * k * np.cos(np.arange(q0.size) + k)
        a = warm.solve(p={"q": qk})
        b = cold.solve(p={"q": qk}, warm_start=False)
        assert a.solved and b.solved, (a.message, b.message)
        np.testing.assert_allclose(a.z, b.z, atol=1e-9, rtol=0)
        phases.append(a.trace[0].phase)
    assert "compiled" in phases  # small parameter changes keep the active set: the fast path holds
    assert all(p in ("compiled", "newton", "gradient") for p in phases)


def test_a_failed_fast_path_hands_over_to_the_safeguarded_method() -> None:
    """A warm start far from the new solution (every pair's state changes): the compiled
    iteration's point misses the tolerance or is not finite; the result is still solved."""
    mcp = parametric_ncp()
    solver = mcpkit.Solver(mcp, backend="casadi", method="newton", tol=1e-10)
    assert solver.solve().solved
    q_far = -5.0 * np.sign(mcp.parameter_values) - 1.0
    res = solver.solve(p={"q": q_far}, z0=np.full(mcp.n, 30.0))
    assert res.solved, res.message
    F = np.asarray(mcp.evaluate(res.z, p={"q": q_far}), dtype=float)
    assert res.z.min() >= 0 and F.min() >= -1e-9 and abs(res.z @ F) <= 1e-8
    if res.trace[0].phase != "compiled":  # when the fast path failed, the safeguards ran
        assert {s.phase for s in res.trace} <= {"newton", "gradient"}


def test_a_warm_start_that_does_not_converge_restarts_cold(monkeypatch: pytest.MonkeyPatch) -> None:
    """With one warm iteration allowed, a far warm start cannot converge: the engine restarts
    cold (crash phase) from the same point within the same limits and says so."""
    import mcpkit.engines.newton as newton_module
    from mcpkit.engines.newton_warm import CompiledWarmStep

    monkeypatch.setattr(newton_module, "WARM_ITERATIONS", 1)
    monkeypatch.setattr(CompiledWarmStep, "applies", classmethod(lambda cls, z, n: False))
    mcp = parametric_ncp()
    solver = mcpkit.Solver(mcp, backend="casadi", method="newton", tol=1e-10)
    assert solver.solve().solved
    q_far = -5.0 * np.sign(mcp.parameter_values) - 1.0
    res = solver.solve(p={"q": q_far}, z0=np.full(mcp.n, 30.0))
    assert res.solved, res.message
    assert "cold restart" in res.extra["warm_restart"]
    assert res.iterations == len(res.trace) and res.trace[0].phase != "crash"
    assert any(s.phase == "crash" for s in res.trace[1:])
    capped = mcpkit.Solver(mcp, backend="casadi", method="newton", tol=1e-10)
    assert capped.solve().solved
    engine = capped.route.engine  # type: ignore[attr-defined]
    engine.options = dataclasses.replace(engine.options, max_inner_iter=1)
    out = capped.solve(p={"q": q_far}, z0=np.full(mcp.n, 30.0))
    assert not out.solved and out.iterations == 1  # the limit holds for both parts together
    assert "warm_restart" not in out.extra
