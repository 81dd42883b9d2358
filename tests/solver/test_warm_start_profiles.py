"""``SolveOptions.warm_start``: both profiles solve MPCCs with known solutions.

The adaptive profile changes IPOPT's path; on these problems it must reach the same solutions as
the standard one (on large optimal-control MPCCs it does not always: ``docs/mpcc_engine.md``).
"""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

from mcpkit.mpcc import MPCC, load_mpcc_json, solve_mpcc
from mcpkit.orchestration import second_start
from tests.conftest import SHARED_DATA

pytestmark = pytest.mark.solver

MACMPEC = SHARED_DATA / "macmpec-dev"
needs_data = pytest.mark.skipif(not MACMPEC.is_dir(), reason="shared/data/macmpec-dev not present")


def _corner(a: float, b: float) -> MPCC:
    r"""min (x1 - a)^2 + (x2 - b)^2 s.t. x1 + x2 = 1, 0 <= x1 ⟂ x2 >= 0 (a > b: x = (1, 0))."""
    x = ca.SX.sym("x", 2)
    f = (x[0] - a) ** 2 + (x[1] - b) ** 2
    return MPCC.from_casadi(x, x[0], x[1], f=f, g=x[0] + x[1], lbg=1.0, ubg=1.0, x0=[5.0, 5.0])


@pytest.mark.parametrize("profile", ["standard", "adaptive"])
@pytest.mark.parametrize(("a", "b"), [(2.0, 0.5), (3.0, 1.0)])
def test_corner_solution(profile: str, a: float, b: float) -> None:
    res = solve_mpcc(_corner(a, b), "scholtes", tol=1e-6, warm_start=profile, refine=False)
    assert res.solved
    np.testing.assert_allclose(res.x, [1.0, 0.0], atol=1e-5)
    np.testing.assert_allclose(res.f, (1 - a) ** 2 + b**2, rtol=1e-6, atol=1e-6)


@needs_data
@pytest.mark.parametrize("name", ["bard1m", "ralph1", "scholtes4", "jr2", "desilva"])
def test_macmpec_objectives_agree(name: str) -> None:
    prob = load_mpcc_json(str(MACMPEC / f"{name}.nl.json"))
    f = {}
    for profile in ("standard", "adaptive"):
        res = solve_mpcc(prob, "scholtes", tol=1e-6, warm_start=profile, refine=False, time_limit=30)
        assert res.solved, (name, profile, res.message)
        f[profile] = float(res.f)
    np.testing.assert_allclose(f["adaptive"], f["standard"], rtol=1e-5, atol=1e-6)


@pytest.mark.skipif(not second_start.available(), reason="needs fork and two cores")
@pytest.mark.parametrize(("a", "b"), [(2.0, 0.5), (3.0, 1.0)])
def test_best_of_two_keeps_a_solution_and_says_which(a: float, b: float) -> None:
    res = solve_mpcc(_corner(a, b), tol=1e-6, warm_start="best_of_two", time_limit=30)
    assert res.solved
    np.testing.assert_allclose(res.f, (1 - a) ** 2 + b**2, rtol=1e-6, atol=1e-6)
    assert res.extra["warm_start"] in ("standard", "adaptive")
    assert "best of two warm starts" in res.message and "adaptive" in res.message


def test_best_of_two_without_a_second_core_runs_the_standard_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(second_start, "available", lambda: False)
    res = solve_mpcc(_corner(2.0, 0.5), tol=1e-6, warm_start="best_of_two")
    assert res.solved and res.extra["warm_start"] == "standard"
    assert "no second start" in res.message
