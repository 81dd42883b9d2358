"""Compiled rollouts (issue 46), evaluated by CasADi alone (no external solver).

Agreement with the per-step route (IPOPT) is in ``tests/solver/test_rollout_agreement.py``.
Gravity is passed explicitly (SI) so that nothing depends on a model's default units.
"""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError, UnknownOptionError
from mcpkit.models import CompiledRollout, RolloutOptions, rollout
from mcpkit.models.compiled_rollout import box_fb, natural_residual_sx
from mcpkit.models.ecp import ComplementarityECPStep, EdgePusher, make_model
from mcpkit.models.ecp.params import SliderParams
from mcpkit.models.stewart_trinkle import Contact, NCPStep, Particle, PlaneSurface
from mcpkit.solving.residuals import natural_residual_vector
from tests.finite_differences import assert_columns_close, central_fd

X0_SLIDE = np.array([0.0, 0.0, 0.0, 0.7, 0.9, 10.0])  # seed 000 §6.1
G_SI = np.array([0.0, 0.0, -9.81])


def _slider(kind: str = "complementarity") -> object:
    return make_model(kind, SliderParams(g=9.8))


def _particle() -> tuple[NCPStep, np.ndarray]:
    st = NCPStep(Particle(mass=1.0, gravity=G_SI), [Contact(PlaneSurface(), 0.3)], 1e-2)
    return st, st.initial_state([0.0, 0.0, 0.0], [1.0, 0.5, 0.0])


def test_box_fb_and_residual_are_zero_exactly_at_solutions() -> None:
    """The box FB function vanishes (to the smoothing) at the solutions of each kind of pair and
    not elsewhere; the symbolic natural residual equals the NumPy one of mcpkit.solving."""
    lb = np.array([0.0, -np.inf, -np.inf, -1.0, -1.0, -1.0])
    ub = np.array([np.inf, np.inf, 2.0, 1.0, 1.0, 1.0])
    z, F = ca.SX.sym("z", 6), ca.SX.sym("F", 6)
    fb = ca.Function("fb", [z, F], [box_fb(z, F, lb, ub, 1e-20), natural_residual_sx(z, F, lb, ub)])
    sol_z = np.array([0.0, 3.0, 2.0, -1.0, 0.3, 1.0])
    sol_F = np.array([4.0, 0.0, -5.0, 2.0, 0.0, -0.5])
    phi, r = fb(sol_z, sol_F)
    assert np.abs(np.asarray(phi)).max() <= 1e-15 and float(r) == 0.0
    rng = np.random.default_rng(3)
    for _ in range(20):
        zz, FF = rng.normal(size=6), rng.normal(size=6)
        zz = np.clip(zz, lb, ub)
        phi, r = fb(zz, FF)
        assert np.abs(np.asarray(phi)).max() > 1e-6
        assert float(r) == pytest.approx(natural_residual_vector(zz, FF, lb, ub).max(), rel=1e-14)


@pytest.mark.parametrize("kind", ["quadratic", "complementarity"])
def test_slider_rollout_meets_the_residual_at_every_step(kind: str) -> None:
    """§6.1 slider, 45 steps: every step's residual (recomputed here in NumPy from the returned
    points) is within tol without any fallback, and it slides throughout (sigma > 0)."""
    model = _slider(kind)
    res = rollout(model, X0_SLIDE, steps=45, tol=1e-10, resolve_failed=False)
    assert res.solved and not res.resolved.any()
    assert res.states.shape == (1, 46, 6) and res.z.shape == (1, 45, model.mcp.n)
    cr = CompiledRollout(model)
    for k in range(45):
        p = model.mcp.parameter_vector(model.parameters(k, float(res.t[k]), res.states[0, k]))
        F = np.asarray(cr.F_fun(res.z[0, k], p)).reshape(-1)
        r = natural_residual_vector(res.z[0, k], F, model.mcp.lb, model.mcp.ub).max()
        assert r <= 1e-10
        assert r == pytest.approx(res.residual[0, k], abs=1e-15)
        x_next = model.advance(k, float(res.t[k]), res.states[0, k], type("R", (), {"z": res.z[0, k]})())
        np.testing.assert_allclose(res.states[0, k + 1], x_next, rtol=0, atol=1e-14)
    assert (res.block("sigma")[0, :, 0] > 1e-3).all()
    assert "solved=True" in repr(res) and "steps=45" in repr(res)


def test_missed_tolerance_is_flagged_not_hidden() -> None:
    """A solver cut to one Newton iteration per step misses tol: the steps are flagged, solved is
    False, and (without the per-step route) nothing is re-solved."""
    model = _slider()
    res = rollout(
        model, X0_SLIDE, steps=10, iterations_per_block=1, blocks=1, line_search_halvings=0,
        resolve_failed=False,
    )  # fmt: skip
    assert not res.solved
    assert res.failed_steps.shape[0] >= 1 and not res.resolved.any()
    assert (res.residual[~res.step_solved] > res.tol).all()


def test_batch_equals_single_rollouts_and_threads_agree() -> None:
    """B rollouts in one threaded map give the rows of B single rollouts (bit for bit up to
    1e-14), serially or on two threads."""
    model = _slider()
    rng = np.random.default_rng(0)
    X0 = X0_SLIDE + np.c_[np.zeros((5, 3)), 0.1 * rng.normal(size=(5, 3))]
    many = rollout(model, batch=X0, steps=20)
    serial = rollout(model, batch=X0, steps=20, threads=1)
    assert many.states.shape == (5, 21, 6) and many.solved
    np.testing.assert_allclose(many.states, serial.states, rtol=0, atol=1e-14)
    for b in range(5):
        one = rollout(model, X0[b], steps=20)
        np.testing.assert_allclose(many.states[b], one.states[0], rtol=0, atol=1e-14)
        np.testing.assert_allclose(many.residual[b], one.residual[0], rtol=0, atol=1e-15)


def test_controls_and_design_shared_or_per_rollout() -> None:
    """A pushed slider (controls (f_n, f_t), design: the contact height): shared controls, one row
    per rollout, and the controls bound with with_inputs give the same trajectories."""
    model = ComplementarityECPStep(SliderParams(g=9.8), EdgePusher(-0.025))
    K = 12
    U = np.c_[np.linspace(2.0, 3.0, K), 0.2 * np.ones(K)]
    th = np.array([0.004])
    x0 = np.array([0.0, 0.0, 0.0, 0.3, 0.0, 0.0])
    one = rollout(model, x0, U, design=th)
    assert one.solved and one.states.shape == (1, K + 1, 6)
    bound = rollout(model.with_inputs(U, th), x0)
    np.testing.assert_allclose(bound.states, one.states, rtol=0, atol=1e-14)
    X0 = np.stack([x0, x0 + [0, 0, 0, 0.1, 0, 0]])
    shared = rollout(model, controls=U, batch=X0, design=th)
    per = rollout(model, controls=np.stack([U, U]), batch=X0, design=th)
    np.testing.assert_allclose(shared.states, per.states, rtol=0, atol=1e-14)
    np.testing.assert_allclose(shared.states[0], one.states[0], rtol=0, atol=1e-14)
    U2 = U.copy()
    U2[:, 1] = -0.2
    mixed = rollout(model, controls=np.stack([U, U2]), batch=np.stack([x0, x0]), design=th)
    np.testing.assert_allclose(mixed.states[0], one.states[0], rtol=0, atol=1e-14)
    assert np.abs(mixed.states[1, -1] - one.states[0, -1]).max() > 1e-4


@pytest.mark.parametrize(
    ("case", "steps"),
    [("slider-quadratic", 30), ("slider", 30), ("particle-slide", 20), ("particle-stick", 60)],
)
def test_gradients_match_finite_differences(case: str, steps: int) -> None:
    """d x_K / d(mu, x0) by CasADi AD through the compiled rollout equals central differences of
    whole compiled rollouts to 1e-6 (relative to each column), sliding throughout (the slider,
    the particle's first 20 steps) and across the particle's stop (it sticks from about step 38;
    the stop is not at a degenerate point, so the trajectory is differentiable there)."""
    if case.startswith("slider"):
        model, x0, mu = (
            _slider("quadratic" if case.endswith("quadratic") else "complementarity"),
            X0_SLIDE,
            0.31,
        )
    else:
        (model, x0), mu = _particle(), 0.3
    res = rollout(model, x0, steps=steps, resolve_failed=False)
    assert res.solved
    if case == "particle-stick":
        speed = np.hypot(res.states[0, :, 3], res.states[0, :, 4])
        assert speed[20] > 0.1 and speed[-1] < 1e-9  # slides, then sticks
    cr = CompiledRollout(model)
    g = cr.jacobian(x0, steps=steps, wrt=("mu", "x0"))
    assert g.solved and not g.degenerate_steps and "is the derivative" in g.note
    J = g.jacobian
    np.testing.assert_allclose(g.x_final, res.states[0, -1], rtol=0, atol=1e-13)
    theta = np.r_[mu, x0]

    def final_state(th: np.ndarray) -> np.ndarray:
        r = rollout(model, th[1:], steps=steps, constants={"mu": th[0]}, resolve_failed=False)
        assert r.solved
        return r.final_states[0]

    J_fd = central_fd(final_state, theta)
    moving = [j for j in range(theta.size) if np.abs(J_fd[:, j]).max() > 1e-3]
    assert_columns_close(J[:, moving], J_fd[:, moving], 1e-6)
    np.testing.assert_allclose(J, J_fd, rtol=0, atol=1e-6)


def test_constants_change_the_trajectory() -> None:
    """constants={'mu': ...} is an input of the compiled function, not baked in."""
    model = _slider()
    a = rollout(model, X0_SLIDE, steps=10)
    b = rollout(model, X0_SLIDE, steps=10, constants={"mu": 0.2})
    assert a.solved and b.solved
    assert np.abs(a.states[0, -1, 3:] - b.states[0, -1, 3:]).max() > 1e-3


def test_bad_inputs_raise_typed_errors() -> None:
    model = _slider()
    with pytest.raises(ShapeError):
        rollout(model, np.zeros(5), steps=3)
    with pytest.raises(NonFiniteError):
        rollout(model, np.r_[np.nan, X0_SLIDE[1:]], steps=3)
    with pytest.raises(ShapeError):
        rollout(model, X0_SLIDE, steps=0)
    with pytest.raises(UnknownOptionError):
        rollout(model, X0_SLIDE, steps=3, newton_its=3)
    with pytest.raises(MCPInputError):
        rollout(model, X0_SLIDE, steps=3, constants={"nu": 0.3})
    with pytest.raises(NonFiniteError):
        rollout(model, X0_SLIDE, steps=3, constants={"mu": np.inf})
    with pytest.raises(ShapeError):
        rollout(model, batch=np.zeros((3, 5)), steps=3)
    with pytest.raises(NonFiniteError):
        rollout(model, batch=np.full((2, 6), np.nan), steps=3)
    with pytest.raises(MCPInputError):
        rollout(model, steps=3)
    with pytest.raises(MCPInputError):
        rollout(model, X0_SLIDE)  # no controls to count the steps from
    with pytest.raises(MCPInputError):
        rollout(model, X0_SLIDE, steps=3, tol=-1.0)
    with pytest.raises(ShapeError):
        RolloutOptions(blocks=0)
    with pytest.raises(MCPInputError):
        RolloutOptions(resolve_failed="yes")  # type: ignore[arg-type]
    with pytest.raises(MCPInputError):
        rollout(object(), X0_SLIDE, steps=3)  # type: ignore[arg-type]
    with pytest.raises(MCPInputError):
        CompiledRollout(model).jacobian(X0_SLIDE, steps=3, wrt=("x0", "lambda"))
    pushed = ComplementarityECPStep(SliderParams(g=9.8), EdgePusher(-0.025))
    with pytest.raises(ShapeError):
        rollout(pushed, X0_SLIDE, np.ones((4, 3)), design=[0.0])
    with pytest.raises(NonFiniteError):
        rollout(pushed, X0_SLIDE, np.full((4, 2), np.nan), design=[0.0])
    with pytest.raises(MCPInputError):
        rollout(pushed, X0_SLIDE, np.ones((4, 2)))  # no design
    with pytest.raises(ShapeError):
        rollout(pushed, X0_SLIDE, np.ones((4, 2)), steps=5, design=[0.0])


def test_stick_slip_switch_is_noted_and_the_jacobian_is_one_sided() -> None:
    """A translation whose speed is exactly 5 mu g h stops at the end of step 4 with its friction
    wrench on the ellipsoid (sigma = 0 and slack = 0: a degenerate pair). The Jacobian names
    step 4 and sigma[0]; in each direction d it equals the one-sided difference quotient of one
    side (1e-7 steps, error O(eps)) and the two sides differ: a kink, not a derivative."""
    P = SliderParams(g=9.8)
    dv = P.mu * P.g * P.h
    x0 = np.array([0.0, 0.0, 0.0, 0.6 * 5 * dv, 0.8 * 5 * dv, 0.0])
    model = make_model("complementarity", P)
    N = 8
    g = CompiledRollout(model).jacobian(x0, steps=N, wrt=("mu", "x0"))
    assert g.solved and list(g.degenerate_steps) == [4] and g.degenerate_steps[4] == ["sigma[0]"]
    assert "step 4" in g.note and "one-sided" in g.note

    def final_state(th: np.ndarray) -> np.ndarray:
        r = rollout(model, th[1:], steps=N, constants={"mu": th[0]}, resolve_failed=False)
        assert r.solved
        return r.final_states[0]

    theta = np.r_[P.mu, x0]
    base = final_state(theta)
    eps = 1e-7
    for d in (np.r_[1.0, np.zeros(6)], np.r_[0, 0, 0, 0, 1.0, 0, 0]):
        plus = (final_state(theta + eps * d) - base) / eps
        minus = (base - final_state(theta - eps * d)) / eps
        scale = np.abs(plus).max()
        assert np.abs(plus - minus).max() > 1e-2 * scale  # the kink is real
        err = min(np.abs(g.jacobian @ d - plus).max(), np.abs(g.jacobian @ d - minus).max())
        assert err <= 1e-5 * scale


def test_batched_coulomb_check_equals_the_per_step_one() -> None:
    """NCPStep.friction_residual_values (all steps at once, used by rollout's model check)
    equals friction_residual(p, z).value row by row: a particle's trajectory points and random
    points (inside the cone, outside, in the polar cone), and a planar body with two contacts."""
    from mcpkit.models.stewart_trinkle import LineSurface2D, PlanarBody

    rng = np.random.default_rng(7)
    st, x0 = _particle()
    res = rollout(st, x0, steps=60)
    cr = CompiledRollout(st)
    body = PlanarBody(mass=2.0, inertia=2.0 * 5 / 12, gravity=9.81)
    cs = [Contact(LineSurface2D(), 0.3, [-1.0, -0.5]), Contact(LineSurface2D(), 0.2, [1.0, -0.5])]
    planar = NCPStep(body, cs, 1e-3)
    cases = []
    P = np.stack(
        [st.mcp.parameter_vector(st.parameters(k, float(res.t[k]), res.states[0, k])) for k in range(60)]
    )
    cases.append((st, P, res.z[0]))
    cases.append((st, P, res.z[0] + 0.05 * rng.normal(size=res.z[0].shape)))
    xs = np.stack(
        [planar.initial_state([0, 0.5 + 0.01 * j, 0.1 * j], [4.0, -0.2 * j, 1.0]) for j in range(8)]
    )
    Pp = np.stack([planar.mcp.parameter_vector(planar.parameters(0, 0.0, x)) for x in xs])
    cases.append((planar, Pp, rng.normal(size=(8, planar.mcp.n))))
    for model, PP, ZZ in cases:
        got = model.friction_residual_values(PP, ZZ)
        want = np.array([model.friction_residual(PP[j], ZZ[j]).value for j in range(PP.shape[0])])
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    assert cr.nc == 1
