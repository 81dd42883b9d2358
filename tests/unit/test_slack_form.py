"""The slack form of box pairs (mcpkit.lowering.slack) and the lowerings that use it (no solver)."""

from __future__ import annotations

import itertools

import casadi as ca
import numpy as np
import pytest

from mcpkit import MCP
from mcpkit.errors import BoundsError, NonFiniteError, ShapeError
from mcpkit.lowering.casadi import MCPToMPCC, SlackMap, lower_to_casadi
from mcpkit.lowering.slack import BoxCase, CasadiBuilder, SlackForm
from mcpkit.lowering.standard import ToStandardMPCC
from mcpkit.problems.mpcc import MPCC
from mcpkit.solving.residuals import compute_residuals

INF = np.inf
#: one pair of each case: lower only, upper only, box, free, fixed, box again
L = np.array([0.0, -INF, 1.0, -INF, 2.0, -3.0])
U = np.array([INF, 2.0, 3.0, INF, 2.0, -1.0])
CASES = {
    "lower": (0.0, INF),
    "upper": (-INF, 2.0),
    "box": (1.0, 3.0),
    "free": (-INF, INF),
    "fixed": (2.0, 2.0),
}


def test_index_sets_and_cases() -> None:
    form = SlackForm.from_bounds(L, U)
    np.testing.assert_array_equal(form.fixed, [4])
    np.testing.assert_array_equal(form.free, [3])
    np.testing.assert_array_equal(form.lower, [0, 2, 5])
    np.testing.assert_array_equal(form.upper, [1, 2, 5])
    np.testing.assert_array_equal(form.rows, [0, 1, 2, 3, 5])
    assert [form.case(i) for i in range(6)] == [
        BoxCase.LOWER, BoxCase.UPPER, BoxCase.BOX, BoxCase.FREE, BoxCase.FIXED, BoxCase.BOX,
    ]  # fmt: skip
    assert form.n == 6 and form.n_slacks == 6
    # an expression Z keeps a fixed pair as a box pair (its bounds hold only through G' >= 0)
    kept = SlackForm.from_bounds(L, U, drop_fixed=False)
    assert kept.case(4) is BoxCase.BOX and kept.fixed.size == 0
    np.testing.assert_array_equal(kept.rows, np.arange(6))
    # SlackMap is the slack form: the names other modules use keep working
    assert SlackMap is SlackForm
    np.testing.assert_array_equal(form.lower_idx, form.lower)
    np.testing.assert_array_equal(form.upper_idx, form.upper)


@pytest.mark.parametrize("layout", ["blocked", "paired"])
def test_slack_positions_follow_the_layout(layout: str) -> None:
    form = SlackForm.from_bounds(L, U, layout=layout)  # type: ignore[arg-type]
    x = form.lift(np.zeros(6), np.array([1.0, -2.0, 3.0, 0.0, 9.0, -4.0]))
    _, w, v = form.split(x)
    np.testing.assert_array_equal(w, [1.0, 3.0, 0.0])  # max(F, 0) for pairs 0, 2, 5
    np.testing.assert_array_equal(v, [2.0, 0.0, 4.0])  # max(-F, 0) for pairs 1, 2, 5
    expected = [0, 2, 5, 1, 2, 5] if layout == "blocked" else [0, 1, 2, 2, 5, 5]
    np.testing.assert_array_equal(form.pair_idx, expected)
    s = x[6:]
    np.testing.assert_array_equal(s[form.w_pos], w)
    np.testing.assert_array_equal(s[form.v_pos], v)


@pytest.mark.parametrize(("case", "exact"), list(itertools.product(CASES, [False, True])))
def test_lift_then_invert_round_trips_every_box_case(case: str, exact: bool) -> None:
    lo, hi = CASES[case]
    rng = np.random.default_rng(0)
    mcp = MCP.lcp(np.eye(3) + 0.2, rng.normal(size=3), lb=lo, ub=hi)
    mpcc, data = MCPToMPCC().apply(lower_to_casadi(mcp))
    assert mpcc.x.numel() == 3 + data.n_slacks
    # rows F - w + v = 0, slacks in [0, inf), z in [l, u]
    assert mpcc.g.numel() == data.rows.size and not mpcc.lbg.any() and not mpcc.ubg.any()
    np.testing.assert_array_equal(mpcc.lbx, np.r_[mcp.lb, np.zeros(data.n_slacks)])
    np.testing.assert_array_equal(mpcc.ubx, np.r_[mcp.ub, np.full(data.n_slacks, INF)])
    for _ in range(5):
        z = np.clip(rng.normal(size=3) * 3, lo, hi)
        F = mcp.evaluate(z)
        x = data.lift(z, F, exact=exact)
        np.testing.assert_array_equal(MCPToMPCC().invert(x, data), z)
        head, w, v = data.split(x)
        np.testing.assert_array_equal(head, z)
        if exact or case == "box":
            # F - w + v = 0 on every row the pair states (F itself on a free pair)
            g = np.asarray(mpcc.function("g")(x, mpcc.p0)).ravel()
            free_rows = np.isin(data.rows, data.free)
            np.testing.assert_allclose(g[~free_rows], 0.0, atol=1e-14)
            np.testing.assert_array_equal(g[free_rows], F[data.free])
        if not exact:
            assert np.all(w >= 0) and np.all(v >= 0)  # a feasible warm start


@pytest.mark.parametrize("case", CASES)
def test_slack_mpcc_solves_exactly_when_the_box_pair_does(case: str) -> None:
    """At z in [l, u] with F = F(z), the lifted point solves the slack MPCC iff (z, F) solves the pair."""
    lo, hi = CASES[case]
    zs = sorted({v for v in (lo, hi, 0.5 * (lo + hi) if np.isfinite(lo + hi) else 1.5) if np.isfinite(v)})
    for z, F in itertools.product(zs, [-1.0, 0.0, 1.0]):
        mcp = MCP.lcp(np.ones((1, 1)), [F - z], lb=lo, ub=hi)  # F(z) = z + q
        mpcc, data = MCPToMPCC().apply(lower_to_casadi(mcp))
        comp, viol, _ = mpcc.residuals(data.lift([z], [F], exact=True), mpcc.p0)
        solves = compute_residuals(np.array([z]), np.array([F]), mcp.lb, mcp.ub).natural == 0.0
        assert (comp == 0.0 and viol == 0.0) is solves, (case, z, F)


@pytest.mark.parametrize(("layout", "kind"), list(itertools.product(["blocked", "paired"], [ca.SX, ca.MX])))
def test_casadi_emission_rows_bounds_and_sparsity(layout: str, kind: type) -> None:
    form = SlackForm.from_bounds(L, U, layout=layout)  # type: ignore[arg-type]
    Z, F = kind.sym("Z", 6), kind.sym("F", 6)
    out = form.emit(CasadiBuilder(kind), Z, F)
    s = out.slacks
    assert s.numel() == form.n_slacks == out.G.numel() == out.H.numel()
    assert out.rows.numel() == form.rows.size
    J = ca.Function("J", [Z, F, s], [ca.jacobian(out.rows, ca.vertcat(Z, F, s))])(0, 0, 0)
    J = np.asarray(ca.DM(J).full())
    # d rows / dF selects the row's own F_i; d rows / dZ = 0
    np.testing.assert_array_equal(J[:, 6:12], np.eye(6)[form.rows])
    np.testing.assert_array_equal(J[:, :6], 0.0)
    # d rows / ds: -1 at the row's w, +1 at its v
    expect = np.zeros((form.rows.size, form.n_slacks))
    for k, i in enumerate(form.lower):
        expect[np.searchsorted(form.rows, i), form.w_pos[k]] = -1.0
    for k, i in enumerate(form.upper):
        expect[np.searchsorted(form.rows, i), form.v_pos[k]] = 1.0
    np.testing.assert_array_equal(J[:, 12:], expect)
    # pairs: G'_k = Z_i - l_i (w pair) or u_i - Z_i (v pair), H'_k = s_k
    z = np.array([0.5, 1.0, 2.5, 7.0, 2.0, -2.0])
    Gv = np.asarray(ca.Function("G", [Z, s], [out.G, out.H])(z, np.arange(form.n_slacks))[0]).ravel()
    is_w = np.zeros(form.n_slacks, dtype=bool)
    is_w[form.w_pos] = True
    i = form.pair_idx
    np.testing.assert_array_equal(Gv, np.where(is_w, z[i] - L[i], U[i] - z[i]))
    JG = ca.Function("JG", [Z, s], [ca.jacobian(out.G, Z), ca.jacobian(out.H, s)])(0, 0)
    assert JG[0].nnz() == form.n_slacks and JG[1].nnz() == form.n_slacks  # one entry per pair
    np.testing.assert_array_equal(np.asarray(ca.DM(JG[0]).full())[np.arange(form.n_slacks), i],
                                  np.where(is_w, 1.0, -1.0))  # fmt: skip
    Hv = np.asarray(ca.Function("H", [s], [out.H])(np.arange(form.n_slacks))).ravel()
    np.testing.assert_array_equal(Hv, np.arange(form.n_slacks))


def _general(kind: type = ca.SX) -> MPCC:
    """Pairs: standard, shifted, upper only, box with G bounds, fixed H, lower only with G bounds."""
    x = kind.sym("x", 7)
    G = ca.vertcat(x[0], x[1] - x[6], x[2] * x[6], x[3], x[4] + 1, ca.sin(x[5]))
    H = ca.vertcat(x[6], 2 * x[1], x[2], x[3] - x[6], x[4], x[5] ** 2)
    return MPCC.from_casadi(
        x, G, H, f=ca.sumsqr(x), x0=np.linspace(-1, 1, 7),
        lbH=[0.0, 1.0, -INF, -1.0, 0.5, 0.2], ubH=[INF, INF, 3.0, 1.0, 0.5, INF],
        lbG=[0.0, 0.0, -INF, -2.0, -INF, -1.0], ubG=[INF, INF, INF, 4.0, INF, INF],
    )  # fmt: skip


@pytest.mark.parametrize("kind", [ca.SX, ca.MX])
def test_standard_lowering_keeps_the_residual_at_lifted_points(kind: type) -> None:
    prob = _general(kind)
    std, inv = ToStandardMPCC().apply(prob)
    assert std.is_standard()
    # slacks: w for pairs 3, 4, 5; v for pairs 2, 3, 4
    assert std.x.numel() == 7 + 6 and std.n_pairs == 2 + 6
    # rows: the G bounds of pairs 3 and 5 and one slack row per split pair
    assert std.g.numel() == 2 + 4
    rng = np.random.default_rng(1)
    for _ in range(20):
        x = rng.normal(size=7) * 2
        xs = ToStandardMPCC.lift(prob, x, prob.p0)
        np.testing.assert_array_equal(ToStandardMPCC().invert(xs, inv), x)
        comp, viol, vals = prob.residuals(x, prob.p0)
        comp_s, viol_s, vals_s = std.residuals(xs, std.p0)
        np.testing.assert_allclose(comp_s, comp, rtol=1e-12, atol=1e-12)
        # the slack rows hold exactly at a lifted point: G = w - v
        slack_rows = np.array([0, 2, 3, 5])
        np.testing.assert_allclose(vals_s["g"][slack_rows], 0.0, atol=1e-14)
        np.testing.assert_array_equal(vals_s["g"][[1, 4]], vals["G"][[3, 5]])  # each before its slack row


def test_standard_lowering_states_a_free_pair_as_an_equation() -> None:
    x = ca.SX.sym("x", 2)
    prob = MPCC.from_casadi(x, x[0] - 1, x[1], lbH=-INF, ubH=INF, lbG=-INF)
    std, _ = ToStandardMPCC().apply(prob)
    assert std.n_pairs == 0 and std.g.numel() == 1 and std.x.numel() == 2
    for g0 in (-0.5, 0.0, 2.0):
        x0 = np.array([1.0 + g0, 3.0])
        assert prob.residuals(x0, prob.p0)[0] == pytest.approx(abs(g0))
        assert std.residuals(ToStandardMPCC.lift(prob, x0, prob.p0), std.p0)[1] == pytest.approx(abs(g0))


def test_standard_problem_passes_through() -> None:
    x = ca.SX.sym("x", 2)
    prob = MPCC.from_casadi(x, x[0], x[1])
    std, inv = ToStandardMPCC().apply(prob)
    assert std is prob and inv.nx == 2
    np.testing.assert_array_equal(ToStandardMPCC.lift(prob, [1.0, 2.0], prob.p0), [1.0, 2.0])


@pytest.mark.parametrize(
    ("lb", "ub", "error", "match"),
    [
        ([0.0, 1.0], [1.0], ShapeError, "lb has 2 entries but ub has 1"),
        ([[0.0]], [[1.0]], ShapeError, "must be a vector"),
        ([np.nan], [1.0], NonFiniteError, "NaN"),
        ([0.0], [np.nan], NonFiniteError, "NaN"),
        ([2.0, 0.0], [1.0, 1.0], BoundsError, r"at \[0\]"),
        ([INF], [INF], BoundsError, "lb = \\+inf"),
        ([-INF], [-INF], BoundsError, "ub = -inf"),
    ],
)
def test_bad_bounds_raise_typed_errors(lb: list, ub: list, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        SlackForm.from_bounds(lb, ub)


def test_bad_layout_and_point_shapes_raise() -> None:
    with pytest.raises(ValueError, match="layout"):
        SlackForm.from_bounds([0.0], [1.0], layout="zigzag")  # type: ignore[arg-type]
    form = SlackForm.from_bounds(L, U)
    with pytest.raises(ShapeError, match="F has 2 entries"):
        form.lift(np.zeros(6), np.zeros(2))
    with pytest.raises(ShapeError, match="at least 6"):
        form.split(np.zeros(3))
