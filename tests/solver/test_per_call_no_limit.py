"""A per-call ``time_limit=math.inf`` lifts the limit the solver was built with, all the way into
the homotopy (MPCCs through :class:`~mcpkit.MPCCSolver`, MCPs through the slack route); ``None``
keeps the solver's limit. The limit the homotopy receives is recorded, not timed."""

from __future__ import annotations

import math
from typing import Any

import casadi as ca
import numpy as np
import pytest

import mcpkit
from mcpkit.homotopy.recovery import RecoveringHomotopy

pytestmark = pytest.mark.solver


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[float | None]:
    """The limit each :meth:`RecoveringHomotopy.run` works with (its ``time_limit`` resolved as
    the method resolves it: ``None`` takes the options', ``inf`` means none)."""
    limits: list[float | None] = []
    original = RecoveringHomotopy.run

    def run(self: RecoveringHomotopy, *args: Any, time_limit: float | None = None, **kw: Any) -> Any:
        limit = self.options.time_limit if time_limit is None else time_limit
        limits.append(None if limit is not None and math.isinf(limit) else limit)
        return original(self, *args, time_limit=time_limit, **kw)

    monkeypatch.setattr(RecoveringHomotopy, "run", run)
    return limits


def _mpcc() -> mcpkit.MPCC:
    x = ca.SX.sym("x", 2)
    return mcpkit.MPCC.from_casadi(x, x[0], x[1], f=(x[0] - 1) ** 2 + (x[1] - 2) ** 2, x0=[0.5, 0.5])


def test_mpcc_solver_per_call_inf_lifts_the_built_limit(seen: list[float | None]) -> None:
    solver = mcpkit.MPCCSolver(_mpcc(), "scholtes", "casadi", time_limit=50.0)
    res = solver.solve(time_limit=math.inf)
    assert res.solved and res.f == pytest.approx(1.0, abs=1e-6)
    assert seen[-1] is None  # no limit inside the homotopy
    solver.solve()
    assert seen[-1] == pytest.approx(50.0, rel=0.01)  # the solver's limit, from the call's start


def test_mcp_solver_per_call_inf_lifts_the_built_limit(seen: list[float | None]) -> None:
    m = mcpkit.MCP.lcp(np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([-1.0, -1.0]))
    solver = mcpkit.Solver(m, backend="casadi", method="scholtes", time_limit=50.0)
    res = solver.solve(time_limit=math.inf)
    assert res.solved
    np.testing.assert_allclose(res.z, [1 / 3, 1 / 3], atol=1e-6)
    assert seen[-1] is None
    # a second call on the same solver starts warm at its solution (no homotopy): a fresh one
    fresh = mcpkit.Solver(m, backend="casadi", method="scholtes", time_limit=50.0)
    fresh.solve()
    assert seen[-1] is not None and 0 < seen[-1] <= 50.0
