"""Two budgets of :class:`~mcpkit.homotopy.loop.HomotopySolver`: the polish backoff and the
first-subproblem time cap (both on a tiny MPCC with CasADi's IPOPT)."""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

from mcpkit.homotopy.inner import InnerResult
from mcpkit.homotopy.ipopt import BUILD_SECONDS_PER_UNIT, estimated_build_seconds
from mcpkit.homotopy.loop import POLISH_BACKOFF, Assessment, HomotopySolver
from mcpkit.homotopy.reformulation import reformulation_for
from mcpkit.mpcc import MPCC
from mcpkit.solving.options import SolveOptions
from mcpkit.solving.result import Termination

pytestmark = pytest.mark.solver


def _mpcc() -> MPCC:
    """min (x0 - 1)^2 + (x1 - 1)^2, 0 <= x0 _|_ x1 >= 0: two minimisers, (1, 0) and (0, 1)."""
    x = ca.SX.sym("x", 2)
    return MPCC.from_casadi(x, x[0], x[1], f=(x[0] - 1) ** 2 + (x[1] - 1) ** 2, x0=[0.5, 0.5])


def _assess(x: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, Assessment]:
    comp = float(abs(min(x[0], x[1])))
    return x, Assessment(comp, float(max(0.0, -x[0], -x[1])))


class _FailingPolisher:
    """Every polish 'fails' (IPOPT infeasible); each call sees a new mask so none is skipped."""

    def __init__(self) -> None:
        self.residuals: list[float] = []
        self.calls = 0

    def active_mask(self, x: np.ndarray, p: np.ndarray) -> np.ndarray:
        self.calls += 1
        return np.array([float(self.calls), 0.0])

    def solve(
        self,
        x: np.ndarray,
        p: np.ndarray,
        mask: np.ndarray,
        deadline: float | None = None,
        max_iter: int | None = None,
    ):
        self.residuals.append(float(abs(min(x[0], x[1]))))
        nan = np.full(2, np.nan)
        return InnerResult(nan, nan, np.zeros(0), np.nan, "Infeasible_Problem_Detected", 3, 0.0)

    polish = solve  # an IPOPT polish: no branch identification (that is for LPECs)
    linear = False


def test_failed_polishes_back_off_by_the_factor() -> None:
    # tol below what the homotopy reaches in max_outer steps: it runs every step
    opts = SolveOptions(tol=1e-12, max_outer=12, polish_trigger=0.5, sigma_factor=0.3, fallback_methods=())
    solver = HomotopySolver(_mpcc(), reformulation_for("scholtes"), opts)
    fake = _FailingPolisher()
    solver._polisher = fake  # type: ignore[assignment]
    out = solver.run(np.array([0.5, 0.5]), np.zeros(0), _assess)
    relax = [s for s in out.trace if s.phase == "relax"]
    eligible = [s for s in relax if s.residual <= opts.polish_trigger]
    assert len(eligible) >= 4
    tried = fake.residuals[:-1]  # the last one is the final polish from the best point
    assert len(tried) < len(eligible)  # fewer polishes than steps that could have polished
    for a, b in zip(tried, tried[1:], strict=False):
        assert b <= POLISH_BACKOFF * a * (1 + 1e-9)


def test_first_step_cap_ends_the_run_with_iteration_limit() -> None:
    """``first_step_iterations``: a first subproblem that reaches its IPOPT iteration cap ends
    the run (``ITERATION_LIMIT``, ``budget_spent``), whatever the clock says."""
    opts = SolveOptions(tol=1e-8, fallback_methods=(), time_limit=30.0)  # the monitor that caps
    solver = HomotopySolver(_mpcc(), reformulation_for("scholtes"), opts)
    out = solver.run(np.array([0.5, 0.5]), np.zeros(0), _assess, first_step_iterations=1)
    assert out.termination is Termination.ITERATION_LIMIT and out.budget_spent
    relax = [s for s in out.trace if s.phase == "relax"]
    assert len(relax) == 1 and relax[0].inner_iterations <= 1
    assert "first subproblem" in out.raw_status
    # without the cap the same run converges
    free = solver.run(np.array([0.5, 0.5]), np.zeros(0), _assess)
    assert free.termination is Termination.CONVERGED and not free.budget_spent
    np.testing.assert_allclose(sorted(free.x), [0.0, 1.0], atol=1e-6)


def test_estimated_build_cost_counts_dense_constant_matrices() -> None:
    """The build estimate sees a dense matrix inside an MX product (instantly), and stays small
    for a small SX graph."""
    n = 300
    z = ca.MX.sym("z", n)
    p = ca.MX.sym("p", 0)
    M = np.ones((n, n))
    big = estimated_build_seconds(z, p, ca.mtimes(ca.DM(M), z) + 1)
    assert big >= BUILD_SECONDS_PER_UNIT * n * n
    x = ca.SX.sym("x", 2)
    assert estimated_build_seconds(x, ca.SX.sym("q", 0), x[0] * x[1]) < 1e-4


def test_nlp_whose_build_cannot_fit_is_not_started(monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: a dense 3000 x 3000 LCP with ``method="scholtes", time_limit=5`` ran 64 s (41 s
    in CasADi's nlpsol, 21 s in IPOPT's first iteration). When the lower build estimate already
    passes the time limit no IPOPT solver is built: ``time_limit`` and the reason, at once."""
    import mcpkit
    from mcpkit import MCP
    from mcpkit.homotopy import ipopt

    built: list[str] = []
    original = ipopt.IpoptNLP.__init__

    def counting(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        built.append(kwargs.get("name", ""))
        original(self, *args, **kwargs)

    monkeypatch.setattr(ipopt.IpoptNLP, "__init__", counting)
    n = 1500  # 2.25 million nonzeros: at least 4.5 s to build, against a limit of 2 s
    rng = np.random.default_rng(0)
    A = rng.standard_normal((n, n))
    lcp = MCP.lcp(A @ A.T / n + np.eye(n), rng.standard_normal(n))
    res = mcpkit.solve(lcp, method="scholtes", time_limit=2)
    assert res.termination is Termination.TIME_LIMIT and not res.solved
    assert res.raw_status.startswith("not started: building the NLP takes at least"), res.raw_status
    assert built == []
