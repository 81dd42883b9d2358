"""Tests of the distributed planar LuGre model (seed 003, Section IV) and its parameters."""

from __future__ import annotations

from types import SimpleNamespace

import casadi as ca
import numpy as np
import pytest

from mcpkit.errors import (
    BoundsError,
    MCPInputError,
    NonFiniteError,
    ShapeError,
    UnknownOptionError,
)
from mcpkit.models.friction.lugre import (
    DistributedLuGre,
    beta_bar,
    casadi_euler_rollout,
    normalised_rmse,
    patch_arrays,
    simulate_twist_profile,
    twist_at_point,
    wrench_about_point,
)
from mcpkit.models.friction.lugre_params import (
    LUGRE_P0,
    LUGRE_P1,
    TABLE_III,
    Integrator,
    LuGreParams,
    SimulationSettings,
    table_i,
)


def grid_patch(kind: str, size: float = 0.02, n: int = 21) -> SimpleNamespace:
    """Plain-array patch: uniform disc of diameter ``size``, uniform square, or a uniform line."""
    d = size / n
    c = (np.arange(n) + 0.5) * d - size / 2
    xg, yg = np.meshgrid(c, c, indexing="ij")
    if kind == "circle":
        p = (xg**2 + yg**2 <= (size / 2) ** 2 * (1 + 1e-9)).astype(float)
    elif kind == "square":
        p = np.ones_like(xg)
    elif kind == "line":
        p = np.zeros_like(xg)
        p[n // 2, :] = 1.0
    else:
        raise ValueError(kind)
    return SimpleNamespace(x=xg.ravel(), y=yg.ravel(), weights=p.ravel() / p.sum(), cell_size=(d, d))


# ------------------------------------------------------------------------------------ params
def test_table_i_values_match_paper() -> None:
    """Table I of seed 003: p=0 (1e6, 8e2, 0, 1, 1, 2, 1e-3, 0.9), p=1 (..., 0.2, 1, 1.2, ...)."""
    p0, p1 = table_i(0), table_i(1)
    assert (p0.sigma0, p0.sigma1, p0.sigma2, p0.mu_c, p0.mu_s, p0.gamma, p0.v_s, p0.s_ba) == (
        1e6,
        8e2,
        0.0,
        1.0,
        1.0,
        2.0,
        1e-3,
        0.9,
    )
    assert (p1.sigma0, p1.sigma1, p1.sigma2, p1.mu_c, p1.mu_s, p1.gamma, p1.v_s, p1.s_ba) == (
        1e6,
        8e2,
        0.2,
        1.0,
        1.2,
        2.0,
        1e-3,
        0.9,
    )
    s = TABLE_III
    assert (s.solver, s.atol, s.rtol, s.max_step, s.contact_size, s.n_cells, s.n_ls) == (
        "LSODA",
        1e-8,
        1e-6,
        1e-3,
        (0.02, 0.02),
        21,
        20,
    )


def test_stribeck_curve_limits() -> None:
    """Eq (2): g(0) = mu_S, g(v_s) = mu_C + (mu_S - mu_C)/e, g(inf) -> mu_C."""
    p = LUGRE_P1
    np.testing.assert_allclose(p.g(0.0), 1.2, rtol=0, atol=1e-15)
    np.testing.assert_allclose(p.g(1e-3), 1.0 + 0.2 / np.e, rtol=1e-12, atol=0)
    np.testing.assert_allclose(p.g(1.0), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(p.g(-1e-3), p.g(1e-3), rtol=1e-15, atol=0)


@pytest.mark.parametrize(
    "kwargs, err",
    [
        ({"sigma0": -1.0}, BoundsError),
        ({"mu_s": 0.5}, BoundsError),
        ({"s_ba": 1.0}, BoundsError),
        ({"mu_c": float("nan")}, NonFiniteError),
        ({"v_s": float("inf")}, NonFiniteError),
        ({"sigma1": -1.0}, BoundsError),
    ],
)
def test_params_reject_bad_values(kwargs: dict, err: type) -> None:
    with pytest.raises(err):
        LuGreParams(**kwargs)


def test_option_errors() -> None:
    with pytest.raises(UnknownOptionError):
        table_i(2)
    with pytest.raises(UnknownOptionError):
        Integrator.parse("rk45-ish")
    assert Integrator.parse("lsoda") is Integrator.LSODA
    with pytest.raises(BoundsError):
        SimulationSettings(atol=-1.0)


# ------------------------------------------------------------------------------------ patches
def test_patch_validation() -> None:
    good = grid_patch("square", n=5)
    with pytest.raises(ShapeError):
        patch_arrays(SimpleNamespace(x=good.x, y=good.y[:-1], weights=good.weights, cell_size=good.cell_size))
    with pytest.raises(NonFiniteError):
        patch_arrays(
            SimpleNamespace(x=good.x * np.nan, y=good.y, weights=good.weights, cell_size=good.cell_size)
        )
    with pytest.raises(BoundsError):
        patch_arrays(SimpleNamespace(x=good.x, y=good.y, weights=-good.weights, cell_size=good.cell_size))
    with pytest.raises(BoundsError):
        patch_arrays(SimpleNamespace(x=good.x, y=good.y, weights=good.weights, cell_size=(0, 0)))
    with pytest.raises(MCPInputError):
        patch_arrays(SimpleNamespace(x=good.x, y=good.y, cell_size=good.cell_size))
    with pytest.raises(MCPInputError):
        DistributedLuGre(good, params={"sigma0": 1e6})


def test_patch_positions_are_relative_to_cop() -> None:
    """Weights w_k proportional to k on a line: CoP = sum w_k y_k; rho sums to zero under w."""
    p = grid_patch("line")
    w = p.weights.copy()
    w[w > 0] = np.arange(1, 22)
    pa = patch_arrays(SimpleNamespace(x=p.x, y=p.y, weights=w, cell_size=p.cell_size))
    assert pa.n == 21
    np.testing.assert_allclose(np.dot(pa.w, pa.y), 0.0, atol=1e-15)
    np.testing.assert_allclose(pa.cop[1], np.dot(w, p.y) / w.sum(), rtol=1e-12, atol=1e-15)


def test_twist_wrench_transport_preserves_power() -> None:
    """Power F.v + tau omega is frame independent: moving twist and wrench to the same point
    (v_p = v + w e_z x p, tau_p = tau - p x F) leaves it unchanged."""
    rng = np.random.default_rng(0)
    for _ in range(5):
        tw, wr, pt = rng.normal(size=3), rng.normal(size=3), rng.normal(size=2)
        tp, wp = twist_at_point(tw, pt), wrench_about_point(wr, pt)
        np.testing.assert_allclose(tp @ wp, tw @ wr, rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------------------------ steady state
@pytest.mark.parametrize("angle", [0.0, 0.7, 2.0])
def test_steady_translation_is_coulomb(angle: float) -> None:
    """Pure translation with p=0: every cell slides along v^, g = 1, so F = -mu f_N v^ exactly
    and the torque about the CoP is -sum w rho x v^ = 0 (sum w rho = 0)."""
    m = DistributedLuGre(grid_patch("circle"), LUGRE_P0)
    v = 0.01 * np.array([np.cos(angle), np.sin(angle)])
    f = m.steady_state_wrench(np.array([v[0], v[1], 0.0]), normal_force=2.5)
    np.testing.assert_allclose(f, [-2.5 * np.cos(angle), -2.5 * np.sin(angle), 0.0], rtol=0, atol=1e-12)


@pytest.mark.parametrize("bilinear", [False, True])
def test_steady_rotation_of_disc_is_two_thirds_mu_n_r(bilinear: bool) -> None:
    """Pure rotation about the centre of a uniform disc: tau = -mu N int |rho| dA / (pi R^2)
    = -(2/3) mu N R.  The 41 x 41 midpoint discretisation of the disc edge errs by O(d/R),
    observed < 0.3 %, so rtol = 5e-3."""
    radius, fn = 0.01, 3.0
    m = DistributedLuGre(grid_patch("circle", 2 * radius, 41), LUGRE_P0)
    f = m.steady_state_wrench(np.array([0.0, 0.0, 2.0]), normal_force=fn, bilinear=bilinear)
    np.testing.assert_allclose(f[2], -2.0 / 3.0 * fn * radius, rtol=5e-3, atol=0)
    np.testing.assert_allclose(f[:2], 0.0, atol=1e-3 * fn)


def test_bilinear_steady_state_removes_steps_on_a_line() -> None:
    """Uniform line along y, length L, Coulomb, rotation about (0, c): cells with y > c slide
    along -x and y < c along +x; friction opposes the sliding, so
    f_x = mu N [(L/2 - c) - (c + L/2)] / L = -2 mu N c / L (closed form).  The point
    evaluation (eqs 21-22) is a staircase with steps of 2/21 (half-step error up to
    ~1/21); the bilinear form (eq 23) is within 1 % (its corner CoRs sit half a cell off
    the line)."""
    length = 0.02
    m = DistributedLuGre(grid_patch("line", length), LUGRE_P0)
    cs = np.linspace(-0.009, 0.009, 181)
    w = 1.0
    twists = np.column_stack([w * cs, np.zeros_like(cs), np.full_like(cs, w)])  # CoR (0, c)
    exact = -2.0 * cs / length
    point = m.steady_state_wrenches(twists, bilinear=False)[:, 0]
    bil = m.steady_state_wrenches(twists, bilinear=True)[:, 0]
    err_point = np.max(np.abs(point - exact))
    err_bil = np.max(np.abs(bil - exact))
    assert err_bil < 0.01
    assert err_point > 0.03
    assert np.all(np.diff(bil) < 0)  # strictly monotone, no plateaus


# ------------------------------------------------------------------------------------ dynamics
def test_dynamic_model_converges_to_steady_state() -> None:
    """Constant translation 0.01 m/s with p=1: z -> g v^/sigma0, so F -> -(g(v) + sigma2 v) N
    with g(0.01) = 1 + 0.2 exp(-100) = 1; F_x -> -(1 + 0.002) N."""
    m = DistributedLuGre(grid_patch("circle", n=11), LUGRE_P1)
    tr = simulate_twist_profile(
        m, lambda t: np.array([0.01, 0.0, 0.0]), 0.2, normal_force=2.0, output_dt=0.05
    )
    np.testing.assert_allclose(tr.wrench[-1], [-2.004, 0.0, 0.0], rtol=0, atol=1e-6)


def test_euler_and_lsoda_agree() -> None:
    """Both integrators solve the same ODE (spin-up to 1 rad/s); fixed Euler at 1e-5 is first
    order and the bristle time constant g/(sigma0 |v|) >= 1e-4 s.  The force is very sensitive
    to z (d f/d z = sigma0 - sigma1 sigma0 |v|/g ~ 1e6 per metre), so Table III's atol = 1e-8 on
    z ~ 1e-6 m would allow ~1 % force error; LSODA runs here at atol 1e-12 / rtol 1e-9 and the
    two agree to 1e-3 of the peak force."""
    m = DistributedLuGre(grid_patch("circle", n=9), LUGRE_P1)

    def prof(t: float) -> np.ndarray:
        return np.array([0.002, 0.0, min(t / 0.05, 1.0)])

    tight = SimulationSettings(atol=1e-12, rtol=1e-9)
    a = simulate_twist_profile(m, prof, 0.08, output_dt=0.02, settings=tight)
    b = simulate_twist_profile(m, prof, 0.08, output_dt=0.02, integrator="euler")
    np.testing.assert_allclose(b.wrench[1:], a.wrench[1:], rtol=0, atol=1e-3 * np.abs(a.wrench).max())


def test_elasto_plastic_rate_cases() -> None:
    """Eqs (15)-(18): |z| <= z_ba gives beta = 0 (pure spring, z' = v); z anti-parallel to v gives
    eps = 0 (z' = v); |z| >= z_max parallel to v gives beta = 1 (the LuGre rate, eq 10)."""
    patch = grid_patch("square", n=3)
    ep = DistributedLuGre(patch, LUGRE_P1, elasto_plastic=True)
    lg = DistributedLuGre(patch, LUGRE_P1)
    tw = np.array([0.004, 0.0, 0.0])
    v = np.tile([0.004, 0.0], 9)
    zmax = LUGRE_P1.g(0.004) / LUGRE_P1.sigma0
    small = np.tile([0.5 * zmax, 0.0], 9)
    np.testing.assert_allclose(ep.derivative(small, tw), v, rtol=1e-14, atol=0)
    anti = np.tile([-2.0 * zmax, 0.0], 9)
    np.testing.assert_allclose(ep.derivative(anti, tw), v, rtol=1e-14, atol=0)
    big = np.tile([1.5 * zmax, 0.0], 9)
    np.testing.assert_allclose(ep.derivative(big, tw), lg.derivative(big, tw), rtol=1e-14, atol=0)
    assert np.all(lg.derivative(small, tw)[0::2] < v[0::2])  # plain LuGre always slips


def test_beta_bar_is_continuous_blend() -> None:
    """Eq (6): alpha(z_ba) = 0, alpha((z_ba + z_max)/2) = 1/2, alpha(z_max) = 1."""
    zmax = 2.0
    vals = beta_bar(np.array([1.8, 1.9, 2.0, 1.0, 3.0]), zmax, 0.9)
    np.testing.assert_allclose(vals, [0.0, 0.5, 1.0, 0.0, 1.0], atol=1e-12)


def test_model_input_errors() -> None:
    m = DistributedLuGre(grid_patch("square", n=3))
    z = np.zeros(m.n_states)
    with pytest.raises(ShapeError):
        m.derivative(z, np.zeros(2))
    with pytest.raises(NonFiniteError):
        m.derivative(z, np.array([np.nan, 0.0, 0.0]))
    with pytest.raises(BoundsError):
        m.wrench(z, np.zeros(3), normal_force=-1.0)
    with pytest.raises(ShapeError):
        m.wrench(np.zeros(5), np.zeros(3))
    with pytest.raises(ShapeError):
        m.steady_state_wrenches(np.zeros((4, 2)))
    with pytest.raises(BoundsError):
        simulate_twist_profile(m, lambda t: np.zeros(3), -1.0)
    with pytest.raises(UnknownOptionError):
        simulate_twist_profile(m, lambda t: np.zeros(3), 1.0, integrator="magic")
    with pytest.raises(ShapeError):
        normalised_rmse(np.zeros((3, 3)), np.zeros((4, 3)))


def test_normalised_rmse_definition() -> None:
    """RMSE / max|f|: a constant offset of 0.1 on f_x against |f| <= 2 gives 0.05."""
    ref = np.zeros((10, 3))
    ref[:, 0] = np.linspace(0, 2, 10)
    ref[:, 2] = 1.0
    est = ref.copy()
    est[:, 0] += 0.1
    np.testing.assert_allclose(normalised_rmse(est, ref), [0.05, 0.0], rtol=1e-12, atol=1e-15)


# ------------------------------------------------------------------ CasADi / NumPy fast paths
def _random_states(m: DistributedLuGre, rng: np.random.Generator, twist: np.ndarray) -> list[np.ndarray]:
    """States that put cells below z_ba, in the eq (18) blend and above z_max, and z = 0."""
    zs = m.steady_state_state(twist)
    scale = rng.uniform(0.5, 1.2, size=m.n_cells).repeat(2)
    rot = rng.normal(scale=1e-7, size=m.n_states)
    return [zs * scale + rot, -zs, np.zeros(m.n_states)]


@pytest.mark.parametrize("ep", [False, True])
def test_casadi_expressions_equal_numpy_model(ep: bool) -> None:
    """The CasADi SX and MX expressions are the same equations (10)/(15), (21)-(22) as the NumPy
    right-hand side; only rounding (and the REG = 1e-100 norm regularisation) differ:
    rtol 1e-12 of the largest entry."""
    m = DistributedLuGre(grid_patch("circle", n=9), LUGRE_P1, elasto_plastic=ep)
    rng = np.random.default_rng(3)
    for twist in (np.array([0.004, -0.002, 0.7]), np.array([0.0, 0.0, -1.0]), np.zeros(3)):
        for z in _random_states(m, rng, twist if np.any(twist) else np.array([1e-3, 0, 0])):
            dz, wr = m.derivative_and_wrench(z, twist, 1.7)
            for sym in (ca.SX, ca.MX):
                cdz, cwr = m.casadi_function(sym)(z, twist, 1.7)
                np.testing.assert_allclose(
                    cdz.full().ravel(), dz, rtol=0, atol=1e-12 * max(np.abs(dz).max(), 1e-30)
                )
                np.testing.assert_allclose(
                    cwr.full().ravel(), wr, rtol=0, atol=1e-12 * max(np.abs(wr).max(), 1e-30)
                )


def test_casadi_jacobian_is_finite_at_rest_and_matches_differences() -> None:
    """At zero twist and zero deflection the analytic Jacobian is finite (REG); away from it, it
    equals central differences of the NumPy model (step 1e-12 m on z ~ 1e-6 m: rtol 1e-5)."""
    m = DistributedLuGre(grid_patch("square", n=5), LUGRE_P1, elasto_plastic=True)
    z = ca.SX.sym("z", m.n_states)
    tw = ca.SX.sym("tw", 3)
    jf = ca.Function("jf", [z, tw], [ca.jacobian(m.casadi_function()(z, tw, 1.0)[0], z)])
    assert np.all(np.isfinite(jf(np.zeros(m.n_states), np.zeros(3)).full()))
    twist = np.array([0.003, 0.001, 0.4])
    z0 = m.steady_state_state(twist) * 0.93
    jac = jf(z0, twist).full()
    h = 1e-12
    fd = np.column_stack(
        [
            (m.derivative_and_wrench(z0 + h * e, twist)[0] - m.derivative_and_wrench(z0 - h * e, twist)[0])
            / (2 * h)
            for e in np.eye(m.n_states)
        ]
    )
    np.testing.assert_allclose(jac, fd, rtol=0, atol=1e-5 * np.abs(fd).max())


@pytest.mark.parametrize("ep", [False, True])
def test_fast_euler_rollouts_equal_reference_loop(ep: bool) -> None:
    """NumPy ``euler_rollout`` and the CasADi ``casadi_euler_rollout`` (SX, unrolled; MX) step
    the same recursion as the reference ``derivative_and_wrench`` loop: states and wrenches to
    1e-12 relative over 300 steps of a spin-up with translation."""
    m = DistributedLuGre(grid_patch("circle", n=7), LUGRE_P1, elasto_plastic=ep)
    k, dt = 300, 1e-5
    t = np.arange(k) * dt
    twists = np.column_stack([0.003 * np.ones(k), -0.001 * np.ones(k), np.minimum(t / 1e-3, 1.0)])
    fns = 1.0 + 0.5 * np.sin(200 * t)
    z = np.zeros(m.n_states)
    ref_w = np.empty((k, 3))
    for j in range(k):
        dz, ref_w[j] = m.derivative_and_wrench(z, twists[j], fns[j])
        z = z + dt * dz
    z_np, w_np = m.euler_rollout(np.zeros(m.n_states), twists, fns, dt)
    np.testing.assert_allclose(z_np, z, rtol=0, atol=1e-12 * np.abs(z).max())
    np.testing.assert_allclose(w_np, ref_w, rtol=0, atol=1e-12 * np.abs(ref_w).max())
    u = np.vstack([twists.T, fns])
    for sym, unroll in ((ca.SX, 1), (ca.SX, 5), (ca.MX, 3)):
        zs, ws = casadi_euler_rollout(m, dt, k, unroll=unroll, sym=sym)(np.zeros(m.n_states), u)
        np.testing.assert_allclose(zs.full()[:, -1], z, rtol=0, atol=1e-12 * np.abs(z).max())
        np.testing.assert_allclose(ws.full().T, ref_w, rtol=0, atol=1e-12 * np.abs(ref_w).max())


def test_rollout_input_errors() -> None:
    m = DistributedLuGre(grid_patch("circle", n=5), LUGRE_P1)
    with pytest.raises(ShapeError):
        m.euler_rollout(np.zeros(m.n_states), np.zeros((4, 2)), np.ones(4), 1e-5)
    with pytest.raises(BoundsError):
        casadi_euler_rollout(m, 1e-5, 10, unroll=3)
    with pytest.raises(BoundsError):
        casadi_euler_rollout(m, 0.0, 10, unroll=1)


def test_bdf_and_radau_with_casadi_jacobian_agree_with_lsoda() -> None:
    """The implicit solvers with the analytic sparse Jacobian solve the same ODE as LSODA (banded
    finite differences): Fig. 5 profile for 1 s at atol 1e-12 / rtol 1e-9, forces within
    1e-4 of the peak (measured ~1e-5)."""
    m = DistributedLuGre(grid_patch("circle", n=7), LUGRE_P1)
    tight = SimulationSettings(atol=1e-12, rtol=1e-9)
    from mcpkit.models.friction.lugre_experiments import paper_velocity_profile

    ref = simulate_twist_profile(m, paper_velocity_profile, 1.0, settings=tight)
    for integ in ("BDF", "Radau"):
        tr = simulate_twist_profile(m, paper_velocity_profile, 1.0, settings=tight, integrator=integ)
        np.testing.assert_allclose(tr.wrench, ref.wrench, rtol=0, atol=1e-4 * np.abs(ref.wrench).max())
    assert Integrator.parse("bdf") is Integrator.BDF and Integrator.parse("radau") is Integrator.RADAU
    assert not Integrator.EULER.is_solve_ivp and Integrator.BDF.is_solve_ivp
