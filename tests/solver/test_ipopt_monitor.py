"""The IPOPT iteration monitor: a per-call iteration cap (the polish's), and a cooperative stop
(:mod:`mcpkit.solving.stop`, Ctrl-C in the command line) that ends a homotopy with its best point."""

from __future__ import annotations

import threading

import casadi as ca
import numpy as np
import pytest

from mcpkit.homotopy import loop as homotopy
from mcpkit.homotopy.inner import InnerResult, InnerSettings
from mcpkit.homotopy.ipopt import CasadiInner, IpoptNLP
from mcpkit.homotopy.pyomo_inner import PyomoInner
from mcpkit.homotopy.reformulation import NLPTemplate
from mcpkit.mpcc import MPCC, solve_mpcc
from mcpkit.solving import stop
from mcpkit.solving.result import Termination

pytestmark = pytest.mark.solver


def _rosenbrock() -> NLPTemplate:
    r""":math:`\min (1 - x_1)^2 + 100 (x_2 - x_1^2)^2` s.t. :math:`x_1 + x_2 \le 10`: IPOPT needs
    about 20 iterations from (-1.2, 1)."""
    x = ca.SX.sym("x", 2)
    p = ca.SX.sym("p", 1)
    f = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2 + 0 * p
    return NLPTemplate(x=x, p=p, f=f, g=x[0] + x[1], lbg=np.array([-np.inf]), ubg=np.array([10.0]))


def _solve(solver: object, max_iter: int | None) -> object:
    inf = np.full(2, np.inf)
    t = _rosenbrock()
    return solver.solve(  # type: ignore[attr-defined]
        np.array([-1.2, 1.0]), np.zeros(1), -inf, inf, t.lbg, t.ubg, max_iter=max_iter
    )


FACTORIES = [CasadiInner(), PyomoInner("mcpkit_ipopt", description="mcpkit_ipopt")]


@pytest.mark.parametrize("factory", FACTORIES, ids=["casadi", "pyomo"])
def test_per_call_iteration_cap(factory: object) -> None:
    settings = InnerSettings(tol=1e-8, deadlines=True)
    solver = factory(_rosenbrock(), settings)  # type: ignore[operator]
    free = _solve(solver, None)
    assert free.status == "Solve_Succeeded" and free.iterations > 5  # type: ignore[attr-defined]
    capped = _solve(solver, 3)
    assert capped.iterations <= 3  # type: ignore[attr-defined]
    # the cap reports itself as an iteration limit (not as a user's stop), on either inner solver
    assert capped.status == "Maximum_Iterations_Exceeded"  # type: ignore[attr-defined]
    again = _solve(solver, None)  # the cap was for that call only
    assert again.iterations == free.iterations  # type: ignore[attr-defined]


def test_a_deadline_stop_is_not_reported_as_the_cap() -> None:
    """A call the deadline (not the cap) stopped stays ``User_Requested_Stop``, even with a cap."""
    t = _rosenbrock()
    solver = IpoptNLP(t.x, t.p, t.f, t.g, tol=1e-8, deadlines=True)
    inf = np.full(2, np.inf)
    res = solver.solve(np.array([-1.2, 1.0]), np.zeros(1), -inf, inf, t.lbg, t.ubg, deadline=0.0, max_iter=5)
    assert res.status == "User_Requested_Stop"
    again = _solve(solver, 5)  # the flag of the cap is per call
    assert again.status == "Maximum_Iterations_Exceeded"  # type: ignore[attr-defined]
    assert _solve(solver, None).status == "Solve_Succeeded"  # type: ignore[attr-defined]


def test_monitor_only_where_asked() -> None:
    t = _rosenbrock()
    assert IpoptNLP(t.x, t.p, t.f, t.g, tol=1e-8)._monitor is None  # ~45 us per iteration saved
    with stop.watching():
        assert IpoptNLP(t.x, t.p, t.f, t.g, tol=1e-8)._monitor is not None
    assert not stop.watched()


def test_stop_request_ends_a_running_solve() -> None:
    t = _rosenbrock()
    with stop.watching():
        solver = IpoptNLP(t.x, t.p, t.f, t.g, tol=1e-8)
        stop.request()
        res = _solve(solver, None)
        assert res.status == "User_Requested_Stop" and res.iterations == 0  # type: ignore[attr-defined]
    assert not stop.requested()  # cleared on leaving


def _toy() -> MPCC:
    r"""min (x1 - 2)^2 + (x2 - 1)^2  s.t.  x1 + x2 = 1,  0 <= x1 ⟂ x2 >= 0, from (5, 5)."""
    x = ca.SX.sym("x", 2)
    return MPCC.from_casadi(
        x, x[0], x[1], f=(x[0] - 2) ** 2 + (x[1] - 1) ** 2, g=x[0] + x[1], lbg=1.0, ubg=1.0, x0=[5.0, 5.0]
    )


def test_stop_during_homotopy_returns_its_best_point() -> None:
    """A stop requested after the first subproblem (as the command line does on Ctrl-C) ends the
    run as ``interrupted`` with the best point so far, not an empty result."""
    seen: list[object] = []

    def progress(step: object) -> None:
        seen.append(step)
        stop.request()

    with stop.watching():
        res = solve_mpcc(_toy(), "scholtes", "casadi", progress=progress, polish=False, refine=False)
    assert res.termination is Termination.INTERRUPTED
    assert len(seen) >= 1 and res.x is not None and np.isfinite(res.x).all()
    assert np.isfinite(res.comp_residual)


@pytest.mark.parametrize("above", [0, 10**9])
def test_in_loop_polish_is_capped_on_large_problems(monkeypatch: pytest.MonkeyPatch, above: int) -> None:
    """Above ``POLISH_CAP_ABOVE_VARS`` variables the polish inside the loop gets
    ``max(POLISH_MIN_ITER, iterations so far)``; below it, no cap."""
    caps: list[int | None] = []
    original = homotopy.Polisher.polish

    def spy(self: homotopy.Polisher, x, p, mask, deadline=None, max_iter=None):  # type: ignore[no-untyped-def]
        caps.append(max_iter)
        return original(self, x, p, mask, deadline, max_iter)

    monkeypatch.setattr(homotopy.Polisher, "polish", spy)
    monkeypatch.setattr(homotopy, "POLISH_CAP_ABOVE_VARS", above)
    res = solve_mpcc(_toy(), "scholtes", "casadi", refine=False)
    assert res.solved and caps
    if above == 0:
        assert all(c is not None and c >= homotopy.POLISH_MIN_ITER for c in caps)
    else:
        assert all(c is None for c in caps)


def test_polish_stopped_at_its_cap_is_not_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """A polish stopped by the cap may sit at a feasible, complementary point that is not a
    stationary point of its branch; it is not taken, and the homotopy goes on. Here the capped
    polish 'stops' at x = (0, 1) (feasible, complementary, f = 4); the run must end at the
    homotopy's own point x = (1, 0), f = 2."""
    original = homotopy.Polisher.polish

    def stopped(self: homotopy.Polisher, x, p, mask, deadline=None, max_iter=None):  # type: ignore[no-untyped-def]
        if max_iter is None:
            return original(self, x, p, mask, deadline, max_iter)
        point = np.array([0.0, 1.0])  # as the inner solver reports its cap (iterations may end below it)
        its = max_iter - 1
        return InnerResult(point, np.zeros(2), np.zeros(2), 4.0, "Maximum_Iterations_Exceeded", its, 0.0)

    monkeypatch.setattr(homotopy.Polisher, "polish", stopped)
    monkeypatch.setattr(homotopy, "POLISH_CAP_ABOVE_VARS", 0)
    res = solve_mpcc(_toy(), "scholtes", "casadi", refine=False, fallback_methods=())
    polishes = [s for s in res.trace if s.phase == "polish"]
    at_cap = [s for s in polishes if s.inner_status == "Maximum_Iterations_Exceeded"]
    assert any(s.residual == 0.0 for s in at_cap), polishes
    assert res.solved and res.f == pytest.approx(2.0, abs=1e-5)
    np.testing.assert_allclose(res.x, [1.0, 0.0], atol=1e-6)


def test_stop_from_another_thread() -> None:
    """:func:`mcpkit.solving.stop.request` is safe from another thread (the CLI's signal watcher)."""
    t = _rosenbrock()
    with stop.watching():
        solver = IpoptNLP(t.x, t.p, t.f, t.g, tol=1e-8)
        timer = threading.Timer(0.0, stop.request)
        timer.start()
        timer.join()
        assert _solve(solver, None).status == "User_Requested_Stop"  # type: ignore[attr-defined]


@pytest.mark.parametrize("growth", [10, 0])
def test_warm_subproblems_are_capped_by_the_growth_rule(monkeypatch: pytest.MonkeyPatch, growth: int) -> None:
    """Above ``POLISH_CAP_ABOVE_VARS`` variables each warm subproblem after the first warm one gets
    ``max(RELAX_MIN_ITER, RELAX_ITER_GROWTH * iterations of the last successful warm one)``; the
    cold one and the first warm one none. A capped stop counts as an iteration limit, not as a
    user's stop."""
    from mcpkit.homotopy.inner import InnerSolver

    calls: list[tuple[int | None, int, str]] = []
    original = InnerSolver.solve

    def spy(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        res = original(self, *args, **kwargs)
        calls.append((kwargs.get("max_iter"), res.iterations, res.status))
        return res

    monkeypatch.setattr(InnerSolver, "solve", spy)
    monkeypatch.setattr(homotopy, "POLISH_CAP_ABOVE_VARS", 0)
    monkeypatch.setattr(homotopy, "RELAX_MIN_ITER", 1)
    monkeypatch.setattr(homotopy, "RELAX_ITER_GROWTH", growth)  # 0: every warm step capped at 1
    res = solve_mpcc(_toy(), "scholtes", "casadi", refine=False, polish=False, fallback_methods=())
    relax = [s for s in res.trace if s.phase == "relax"]
    assert len(relax) >= 3 and calls[0][0] is None
    last_ok: int | None = None  # of the last warm subproblem that succeeded
    for (cap, its, _), step in zip(calls[1 : len(relax)], relax[1:], strict=True):
        assert cap == (None if last_ok is None else max(1, growth * last_ok))
        assert step.inner_status != "User_Requested_Stop"
        if cap is not None:
            assert its <= cap
            if its == cap:
                assert step.inner_status == "Maximum_Iterations_Exceeded"
        if step.inner_status == "Solve_Succeeded":
            last_ok = its
    if growth == 0:
        assert any(s.inner_status == "Maximum_Iterations_Exceeded" for s in relax[1:])


def test_a_status_before_the_first_iteration_reports_zero_iterations() -> None:
    """IPOPT refuses an NLP with more equality rows than variables before iterating, and
    CasADi's ``iter_count`` is then garbage (seen: 1,701,667,187 and -76,597,776); the inner
    result, and so the homotopy's trace, report 0."""
    x = ca.SX.sym("x", 2)
    p = ca.SX.sym("p", 1)
    nlp = IpoptNLP(x, p, ca.sumsqr(x) + 0 * p, ca.vertcat(x[0], x[1], x[0] + x[1] - 1), tol=1e-8)
    for _ in range(3):
        box = (np.full(2, -10.0), np.full(2, 10.0))
        out = nlp.solve(np.ones(2), np.zeros(1), *box, np.zeros(3), np.zeros(3))
        assert out.status == "Not_Enough_Degrees_Of_Freedom"
        assert out.iterations == 0


def test_a_refused_subproblem_ends_the_homotopy_at_once() -> None:
    """``scholtes_eq`` on an MPCC with as many equality rows as variables adds one more
    (G H / sigma = 1): IPOPT refuses it before iterating (Not_Enough_Degrees_Of_Freedom), at every
    sigma alike, so the homotopy stops after that one subproblem instead of retrying."""
    x = ca.SX.sym("x", 3)
    m = MPCC.from_casadi(
        x, x[0], x[1], f=ca.sumsqr(x), g=ca.vertcat(x[0] + x[1] + x[2] - 1, x[2] - 0.5, x[0] - 0.5)
    )
    res = solve_mpcc(m, "scholtes_eq", "casadi", fallback_methods=(), max_retries=3, refine=False)
    assert [s.inner_status for s in res.trace] == ["Not_Enough_Degrees_Of_Freedom"]
    assert res.iterations == 0 and res.termination is Termination.SOLVER_ERROR
    assert "refused" in res.raw_status and not res.solved
