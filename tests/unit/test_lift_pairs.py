"""The lifting of pair functions (:mod:`mcpkit.lowering.lift_pairs`) and the derivatives shared by
every NLP on one MPCC (:mod:`mcpkit.problems.derivatives`). No solver runs here."""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

from mcpkit.errors import MCPInputError
from mcpkit.homotopy.reformulation import assemble
from mcpkit.lowering.lift_pairs import LiftPairs, single_variables
from mcpkit.orchestration.planner import LIFT_MIN_COUPLING, lifts
from mcpkit.problems.derivatives import CACHE_KEY, SharedDerivatives, shared_functions
from mcpkit.problems.mpcc import MPCC


def _problem(kind: type = ca.SX) -> MPCC:
    """Four pairs: G a single variable, a scaled variable, a variable plus a parameter, a cube;
    H a dense affine expression, a single variable (with a free bound), and two more."""
    x, p = kind.sym("x", 5), kind.sym("p", 1)
    M = np.arange(1.0, 26.0).reshape(5, 5) / 10
    G = ca.vertcat(x[0], 2 * x[1], x[2] + p[0], x[3] ** 3)
    H = ca.vertcat(ca.mtimes(ca.DM(M[0:1, :]), x), x[4], x[0] * x[1], x[2])
    lbx = np.array([0.0, -np.inf, 0.0, -1.0, -np.inf])
    return MPCC(
        x=x, p=p, f=ca.sumsqr(x - 1), g=ca.vertcat(x[0] + x[1] + x[2]), lbg=np.array([-1.0]),
        ubg=np.array([10.0]), lbx=lbx, ubx=np.full(5, np.inf), G=G, H=H,
        x0=np.array([0.5, 0.2, 0.1, 0.3, 0.4]), p0=np.array([0.25]), name="lift_test",
    )  # fmt: skip


@pytest.mark.parametrize("kind", [ca.SX, ca.MX])
def test_single_variables_are_recognised_exactly(kind: type) -> None:
    mp = _problem(kind)
    assert single_variables(mp.G, mp.x, mp.p).tolist() == [0, -1, -1, -1]
    assert single_variables(mp.H, mp.x, mp.p).tolist() == [-1, 4, -1, 2]


@pytest.mark.parametrize("kind", [ca.SX, ca.MX])
def test_lifted_problem_is_pairs_of_variables_with_bounds(kind: type) -> None:
    mp = _problem(kind)
    lifted, inv = LiftPairs().apply(mp)
    assert inv.G.lifted.tolist() == [1, 2, 3] and inv.H.lifted.tolist() == [0, 2]
    assert lifted.x.numel() == 5 + 5 and lifted.g.numel() == 1 + 5
    assert lifted.G_implied_by_bounds and lifted.H_implied_by_bounds
    # every pair side is a variable with a lower bound of 0 (the free x_4 tightened: H_1 = x_4)
    for side in (lifted.G, lifted.H):
        idx = single_variables(side, lifted.x, lifted.p)
        assert (idx >= 0).all()
        assert (lifted.lbx[idx] >= 0).all()
    assert lifted.lbx[4] == 0.0 and lifted.lbx[1] == -np.inf  # x_1 is only inside 2 x_1: untouched
    assert np.array_equal(lifted.lbg[1:], np.zeros(5)) and np.array_equal(lifted.ubg[1:], np.zeros(5))


@pytest.mark.parametrize("kind", [ca.SX, ca.MX])
def test_lift_is_exact_and_invert_drops_the_new_variables(kind: type) -> None:
    mp = _problem(kind)
    lifted, inv = LiftPairs().apply(mp)
    rng = np.random.default_rng(3)
    for _ in range(3):
        x, p = rng.uniform(0.0, 2.0, 5), rng.uniform(-1.0, 1.0, 1)
        xl = LiftPairs.lift_with(mp, inv, x, p)
        v, vl = mp.evaluate(x, p), lifted.evaluate(xl, p)
        np.testing.assert_array_equal(vl["G"], v["G"])
        np.testing.assert_array_equal(vl["H"], v["H"])
        np.testing.assert_allclose(vl["g"][1:], 0.0, atol=1e-14)  # s = G(x), t = H(x) hold
        assert vl["f"][0] == v["f"][0]
        np.testing.assert_array_equal(LiftPairs().invert(xl, inv), x)
    np.testing.assert_array_equal(lifted.x0[:5], mp.x0)


def test_nothing_to_lift_only_marks_the_signs_as_bounds() -> None:
    x = ca.SX.sym("x", 4)
    mp = MPCC(
        x=x, p=ca.SX.sym("p", 0), f=ca.sumsqr(x), g=ca.SX(0, 1), lbg=np.zeros(0), ubg=np.zeros(0),
        lbx=np.zeros(4), ubx=np.full(4, np.inf), G=x[:2], H=x[2:], x0=np.ones(4), p0=np.zeros(0),
    )  # fmt: skip
    lifted, inv = LiftPairs().apply(mp)
    assert inv.n_new == 0 and lifted.x.numel() == 4 and lifted.g.numel() == 0
    assert lifted.G_implied_by_bounds and lifted.H_implied_by_bounds


def test_general_pair_bounds_are_refused() -> None:
    mp = _problem()
    mp.ubH = np.full(4, 3.0)
    with pytest.raises(ValueError, match="standard"):
        LiftPairs().apply(mp)


def test_shared_derivatives_equal_casadis_own() -> None:
    """The three IPOPT functions built from the shared derivatives give the values CasADi's own
    differentiation of the whole template gives (Jacobian of the rows, Hessian of the Lagrangian)."""
    mp, _ = LiftPairs().apply(_problem())
    t = ca.SX.sym("t")
    rows = [mp.G * mp.H / t - 1]
    tpl = assemble(mp, t, mp.f, rows, [np.full(4, -np.inf)], [np.zeros(4)])
    fns = shared_functions(tpl.base, tpl.x, tpl.p, tpl.f, tpl.extra_rows, "check")
    assert fns is not None and CACHE_KEY in mp._derived
    assert isinstance(mp._derived[CACHE_KEY], SharedDerivatives)
    lam_f, lam_g = ca.SX.sym("lf"), ca.SX.sym("lg", int(tpl.g.numel()))
    own_jac = ca.Function("j", [tpl.x, tpl.p], [ca.jacobian(tpl.g, tpl.x)])
    lag = lam_f * tpl.f + ca.dot(lam_g, tpl.g)
    own_hess = ca.Function("h", [tpl.x, tpl.p, lam_f, lam_g], [ca.triu(ca.hessian(lag, tpl.x)[0])])
    rng = np.random.default_rng(0)
    x, p = rng.uniform(0.1, 2.0, int(tpl.x.numel())), np.array([0.3, 0.01])
    lf, lg = 0.7, rng.standard_normal(int(tpl.g.numel()))
    np.testing.assert_allclose(np.asarray(fns["jac_g"](x, p)[1]), np.asarray(own_jac(x, p)), rtol=1e-14)
    np.testing.assert_allclose(
        np.asarray(fns["hess_lag"](x, p, lf, lg)), np.asarray(own_hess(x, p, lf, lg)), rtol=1e-13
    )
    np.testing.assert_allclose(
        np.asarray(fns["grad_f"](x, p)[1]).ravel(),
        np.asarray(ca.Function("g", [tpl.x], [ca.gradient(tpl.f, tpl.x)])(x)).ravel(),
    )


def test_another_objective_is_differentiated_on_its_own() -> None:
    """A penalty-like objective f + t G H: its gradient and the Hessian of the Lagrangian equal
    CasADi's own (the rows' derivatives shared)."""
    mp, _ = LiftPairs().apply(_problem())
    t = ca.SX.sym("t")
    p = ca.vertcat(mp.p, t)
    f2 = mp.f + t * ca.dot(mp.G, mp.H)
    rows = ca.vertcat(mp.g, mp.G - 0.1)
    fns = shared_functions(mp, mp.x, p, f2, mp.G - 0.1, "pen")
    assert fns is not None
    lam_f, lam_g = ca.SX.sym("lf"), ca.SX.sym("lg", int(rows.numel()))
    own_hess = ca.Function(
        "h", [mp.x, p, lam_f, lam_g], [ca.triu(ca.hessian(lam_f * f2 + ca.dot(lam_g, rows), mp.x)[0])]
    )
    rng = np.random.default_rng(1)
    x, pv = rng.uniform(0.1, 2.0, int(mp.x.numel())), np.array([0.3, 0.7])
    lf, lg = 0.7, rng.standard_normal(int(rows.numel()))
    ours, theirs = np.asarray(fns["hess_lag"](x, pv, lf, lg)), np.asarray(own_hess(x, pv, lf, lg))
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-14)
    grad = ca.Function("g", [mp.x, p], [ca.gradient(f2, mp.x)])
    np.testing.assert_allclose(
        np.asarray(fns["grad_f"](x, pv)[1]).ravel(), np.asarray(grad(x, pv)).ravel(), rtol=1e-14
    )
    assert float(fns["grad_f"](x, pv)[0]) == float(ca.Function("f", [mp.x, p], [f2])(x, pv))


def test_no_sharing_for_other_variables_or_mx() -> None:
    mp, _ = LiftPairs().apply(_problem())
    mx, _ = LiftPairs().apply(_problem(ca.MX))
    assert shared_functions(mx, mx.x, mx.p, mx.f, mx.G, "x") is None
    assert shared_functions(None, mp.x, mp.p, mp.f, mp.G, "x") is None


def test_pair_sparsity_is_computed_once_per_problem() -> None:
    """The planner's coupling test and the lifting read one structure per side, kept with the
    problem; it is CasADi's."""
    mp = _problem()
    # |vars(G_j)| * |vars(H_j)|: x0 with a 5-variable row, 2 x1 with x4, x2 + p with x0 x1, x3^3 with x2
    assert mp.pair_coupling().tolist() == [5, 1, 2, 1]
    kept = {side: mp.side_sparsity(side) for side in ("G", "H")}
    for side in ("G", "H"):
        assert mp.side_sparsity(side) is kept[side]
        assert kept[side] == ca.jacobian_sparsity(getattr(mp, side), mp.x)
    LiftPairs().apply(mp)
    assert mp.side_sparsity("H") is kept["H"]
    assert single_variables(mp.H, mp.x, mp.p, kept["H"]).tolist() == [-1, 4, -1, 2]
    with pytest.raises(MCPInputError, match="'G' or 'H'"):
        mp.side_sparsity("g")


def _dense_pairs(n: int) -> MPCC:
    """n pairs x_j ⟂ (M y)_j with a dense n-by-n M: every pair couples n pairs of variables."""
    x = ca.SX.sym("x", 2 * n)
    M = ca.DM(np.arange(1.0, n * n + 1).reshape(n, n) / n**2)
    return MPCC.from_casadi(x, x[:n], ca.mtimes(M, x[n:]), f=ca.sumsqr(x - 1))


@pytest.mark.parametrize(
    ("mode", "small", "dense"),
    [
        ("auto", False, True),
        ("always", True, True),
        (True, True, True),
        ("never", False, False),
        (False, False, False),
    ],
)
def test_planner_lifts_by_the_coupling_of_the_pairs(mode: object, small: bool, dense: bool) -> None:
    """``lift_pairs="auto"`` lifts exactly the problems with a pair coupling at least
    LIFT_MIN_COUPLING pairs of variables (the dense 50-column row, not the 5-column one)."""
    assert _dense_pairs(LIFT_MIN_COUPLING).pair_coupling().max() == LIFT_MIN_COUPLING
    assert _dense_pairs(LIFT_MIN_COUPLING - 1).pair_coupling().max() == LIFT_MIN_COUPLING - 1
    assert lifts(_problem(), mode) is small
    assert lifts(_dense_pairs(LIFT_MIN_COUPLING), mode) is dense
    assert lifts(_dense_pairs(LIFT_MIN_COUPLING - 1), mode) is (mode not in ("auto", "never", False))
