"""B-stationarity refinement after the homotopy (``mcpkit.stationarity.refine``), with IPOPT.

Small MPCCs whose stationary points are known by hand. Started at the corner ``x = 0`` the
Scholtes homotopy stays there (a C-stationary point: a descent direction exists along one
branch); the refinement must leave it for the B-stationary point, and must never report B or S
without a certificate.
"""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.mpcc import MPCC, MPCCSolver, solve_mpcc
from mcpkit.stationarity.refine import RefinementReport, RefineOptions

pytestmark = pytest.mark.solver

ATOL = 1e-6


def _quad(a1: float, a2: float, x0: tuple[float, float] = (0.0, 0.0)) -> MPCC:
    r"""min (x1 - a1)^2 + (x2 - a2)^2  s.t.  0 <= x1 ⟂ x2 >= 0,  0 <= x <= 3.

    Branch minima: x1 = 0: f = a1^2 + min(a2, 0)^2; x2 = 0: f = a2^2 + min(a1, 0)^2; at the corner
    ``0`` the multipliers are (nu, xi) = (-2 a1, -2 a2), so for a1, a2 > 0 the corner is C, not
    M and not B (d = e_1 descends on the branch x2 = 0).
    """
    x = ca.SX.sym("x", 2)
    return MPCC.from_casadi(
        x, x[0], x[1], f=(x[0] - a1) ** 2 + (x[1] - a2) ** 2, x0=list(x0), lbx=[0.0, 0.0], ubx=[3.0, 3.0]
    )


@pytest.mark.parametrize("backend", ["casadi", "pyomo"])
def test_corner_c_point_is_refined_to_s(backend: str) -> None:
    """a = (1, 1) from 0: without refinement f = 2 at the C corner; with it f = 1 at (1, 0) or
    (0, 1) (both S), after one branch step whose LPEC value is negative. The Pyomo backend
    refines on the standard form with CasADi's IPOPT, with the same outcome."""
    off = MPCCSolver(_quad(1.0, 1.0), backend=backend, refine=False).solve()
    assert off.solved and off.f == pytest.approx(2.0, abs=ATOL) and off.stationarity == "C"
    on = MPCCSolver(_quad(1.0, 1.0), backend=backend).solve()
    assert on.solved and on.f == pytest.approx(1.0, abs=ATOL)
    assert on.stationarity == "S"
    rep = on.extra["refinement"]
    assert isinstance(rep, RefinementReport) and rep.certified == "S" and rep.reason == "certified"
    steps = [s for s in rep.steps if s.accepted]
    assert len(steps) == 1 and steps[0].lpec_value < 0 and steps[0].decrease == pytest.approx(1.0, abs=ATOL)
    assert steps[0].switched and steps[0].switched[0][0] == 0
    assert np.min(on.x) == pytest.approx(0.0, abs=ATOL) and np.max(on.x) == pytest.approx(1.0, abs=ATOL)
    assert "refinement: certified S" in on.message


def test_scaled_corner_moves_to_the_better_branch() -> None:
    """scale1-like: f = 100 (x1 - 1)^2 + (x2 - 1)^2 from 0: corner f = 101 (C); branch x2 = 0 gives
    f = 1 at (1, 0), branch x1 = 0 gives 100 at (0, 1). The LPEC's steepest branch is x2 = 0."""
    x = ca.SX.sym("x", 2)
    m = MPCC.from_casadi(x, x[0], x[1], f=100 * (x[0] - 1) ** 2 + (x[1] - 1) ** 2, x0=[0.0, 0.0])
    res = solve_mpcc(m)
    assert res.solved and res.stationarity == "S"
    np.testing.assert_allclose(res.x, [1.0, 0.0], atol=1e-6)
    assert res.f == pytest.approx(1.0, abs=ATOL)


def test_b_not_s_point_is_certified_by_the_lpec() -> None:
    """scholtes4-like: min x1 + x2 - x3 s.t. x3 <= 4 x1, x3 <= 4 x2, 0 <= x1 ⟂ x2 >= 0. At 0 every
    LPEC branch has value 0 (x1 = 0 forces d3 <= 0, so d2 - d3 >= 0): B. The multipliers need
    nu + xi = -2: not S (M with nu = 0, xi = -2). Reported B, by the LPEC."""
    y = ca.SX.sym("y", 3)
    m = MPCC.from_casadi(
        y, y[0], y[1], f=y[0] + y[1] - y[2], g=ca.vertcat(y[2] - 4 * y[0], y[2] - 4 * y[1]), ubg=[0.0, 0.0],
        x0=[1.0, 1.0, 1.0],
    )  # fmt: skip
    solver = MPCCSolver(m)
    res = solver.solve()
    assert res.solved and res.f <= 1e-6 and res.stationarity in ("B", "S")
    _, rep, report = solver.refiner().run(np.zeros(3), np.zeros(0), None)
    assert report.certified == "B" and rep.b_stationary is True and rep.lpec is not None
    assert report.steps == []


def test_no_certificate_no_claim() -> None:
    """With max_steps = 0 and no multistart the C corner stays: stationarity C, reason "step
    limit", certified None; refine=False still classifies (C) and records no refinement."""
    opts = RefineOptions(max_steps=0, multistart=0)
    res = MPCCSolver(_quad(1.0, 2.0), refine=opts).solve()
    assert res.solved and res.stationarity == "C"
    rep = res.extra["refinement"]
    assert (
        rep.certified is None and rep.reason == "step limit" and rep.f_final == pytest.approx(5.0, abs=ATOL)
    )
    off = MPCCSolver(_quad(1.0, 2.0), refine=False).solve()
    assert off.stationarity == "C" and "refinement" not in off.extra
    quiet = MPCCSolver(_quad(1.0, 2.0), refine=False, stationarity=False).solve()
    assert quiet.stationarity == "not checked"


def test_two_pairs_two_descents() -> None:
    """Two copies of the quad with a = (1, 2) and (2, 1), x = 0: the corner is C in both pairs;
    the refined point takes the larger target of each pair: f = 1 + 1 = 2."""
    z = ca.SX.sym("z", 4)
    f = (z[0] - 1) ** 2 + (z[1] - 2) ** 2 + (z[2] - 2) ** 2 + (z[3] - 1) ** 2
    m = MPCC.from_casadi(z, ca.vertcat(z[0], z[2]), ca.vertcat(z[1], z[3]), f=f, x0=np.zeros(4))
    res = solve_mpcc(m)
    assert res.solved and res.stationarity == "S"
    assert res.f <= 5.0 + ATOL  # at worst one pair moved to its smaller target
    assert res.f == pytest.approx(2.0, abs=ATOL)


def test_flip_finds_the_better_branch() -> None:
    """a = (1, 2) from (1, 0): the homotopy ends at the S point (1, 0), f = 4, where the active
    side H = x2 has the multiplier xi = 2 (0 - 2) = -4 < 0. Flipping the pair (x1 = 0) gives
    (0, 2), f = 1, also S. With flip_pairs = 0 the point stays at f = 4 (still S, certified)."""
    res = MPCCSolver(_quad(1.0, 2.0, (1.0, 0.0))).solve()
    assert res.solved and res.stationarity == "S" and res.f == pytest.approx(1.0, abs=ATOL)
    flips = [s for s in res.extra["refinement"].steps if s.lpec_method == "flip" and s.accepted]
    assert len(flips) == 1 and flips[0].lpec_value == pytest.approx(-4.0, abs=1e-4)
    stay = MPCCSolver(_quad(1.0, 2.0, (1.0, 0.0)), refine=RefineOptions(flip_pairs=0)).solve()
    assert stay.solved and stay.stationarity == "S" and stay.f == pytest.approx(4.0, abs=ATOL)


@settings(max_examples=12, deadline=None)
@given(st.floats(0.2, 2.5), st.floats(0.2, 2.5))
def test_refined_corner_reaches_the_better_branch_minimum(a1: float, a2: float) -> None:
    """For a1, a2 > 0 the corner is C; the refined point is S and one of the two branch minima
    (a1, 0) with f = a2^2 or (0, a2) with f = a1^2; the flip search picks the smaller one
    (up to the flip's acceptance margin tol * max(1, |f|))."""
    res = MPCCSolver(_quad(a1, a2)).solve()
    assert res.solved and res.stationarity == "S"
    assert min(abs(res.f - a1**2), abs(res.f - a2**2)) <= 1e-6 * max(1.0, res.f)
    assert res.f <= min(a1, a2) ** 2 + 2e-6 * max(1.0, res.f)


def test_escape_from_a_path_point_names_its_start() -> None:
    """No branch steps allowed (max_steps = 0): the C corner stays uncertified, then the escape
    solves the piece of the path point (0.5, 0.1) (G = 0.5 > H = 0.1: fix H = x2 = 0), reaching
    (1, 0), f = 1, S; the report says the point came from "path 0" after 2 starts."""
    solver = MPCCSolver(_quad(1.0, 1.0), refine=RefineOptions(max_steps=0, flip_pairs=0))
    refiner = solver.refiner()
    p = np.zeros(0)
    best = refiner.run(np.zeros(2), p, None)
    assert best[2].certified is None and best[2].reason == "step limit"
    x, rep, report = refiner.escape(best, [np.array([0.5, 0.1])], p, None)
    assert report.certified == "S" and report.start == "path 0" and report.starts_tried == 2
    np.testing.assert_allclose(x, [1.0, 0.0], atol=1e-6)
    assert report.f_initial == pytest.approx(2.0, abs=ATOL) and report.f_final == pytest.approx(1.0, abs=ATOL)


@pytest.mark.parametrize(("stop", "tried"), [(2, 2), (1, 1), (0, 3)])
def test_flip_search_stops_after_flips_that_leave_f_unchanged(
    monkeypatch: pytest.MonkeyPatch, stop: int, tried: int
) -> None:
    """Three pairs, each (x_a, x_b) with f = (x_a - 1)^2 + (x_b - 2)^2, at the S point
    (1, 0, 1, 0, 1, 0): every active side x_b has xi = -4, so three flip candidates. With branch
    NLPs that end where they start (f unchanged, as on NOSBENCH's SMOCP_001_006) the search stops
    after ``flip_unchanged_stop`` of them in a row (0: tries all three); the point stays S."""
    x = ca.SX.sym("x", 6)
    f = sum((x[2 * i] - 1) ** 2 + (x[2 * i + 1] - 2) ** 2 for i in range(3))
    m = MPCC.from_casadi(x, x[0::2], x[1::2], f=f, lbx=np.zeros(6), ubx=np.full(6, 3.0))
    refiner = MPCCSolver(m, refine=RefineOptions(flip_unchanged_stop=stop)).refiner()
    calls: list[np.ndarray] = []

    def unchanged(
        xs: np.ndarray, p: np.ndarray, mask: np.ndarray, deadline: object, cap: object = None
    ) -> tuple:
        calls.append(mask)
        return xs, refiner.assessor.measure(xs, p)[0], "Solve_Succeeded"

    monkeypatch.setattr(refiner, "_branch_nlp", unchanged)
    xs, rep, report = refiner.run(np.array([1.0, 0, 1, 0, 1, 0]), np.zeros(0), None)
    flips = [s for s in report.steps if s.lpec_method == "flip"]
    assert len(calls) == len(flips) == tried and not any(s.accepted for s in flips)
    assert report.certified == "S" and report.f_final == pytest.approx(12.0, abs=1e-12)


def test_flip_unchanged_stop_is_validated() -> None:
    from mcpkit.errors import MCPInputError

    with pytest.raises(MCPInputError, match="flip_unchanged_stop"):
        RefineOptions(flip_unchanged_stop=-1)
