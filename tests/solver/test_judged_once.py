"""A plain LCP solve is judged once (issue 27): the ``auto`` chain's verdict on its accepted
point is the :class:`mcpkit.Solver`'s, not a second evaluation of the same point."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import mcpkit
import mcpkit.solving.result
from mcpkit import MCP

pytestmark = pytest.mark.solver


def test_plain_lcp_solve_is_judged_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    original = mcpkit.solving.result.judge_point

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return original(*args, **kwargs)

    for name in ("mcpkit.frontends.solve", "mcpkit.orchestration.planner"):  # the module, not mcpkit.solve()
        monkeypatch.setattr(importlib.import_module(name), "judge_point", counting)
    res = mcpkit.solve(MCP.lcp(np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([-1.0, -1.0])))
    assert res.solved
    np.testing.assert_allclose(res.z, [1 / 3, 1 / 3], atol=1e-10)
    assert len(calls) == 1
