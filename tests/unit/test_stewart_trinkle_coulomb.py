"""The Coulomb residual that judges every Stewart–Trinkle step (issue 12), without a solver.

* The cone projections against their defining (Moreau) properties and, for the polygon, against
  SciPy's NNLS projection onto the generated cone.
* The residual is zero at closed-form solutions of eqs (9) and (15) (sliding, sticking, flying, the
  LCP on a polygon facet), where the step's own natural residual is zero too.
* Invariance: scaling every velocity and impulse by c leaves the relative residual unchanged.
* The failure of the issue, built by hand: sigma = 1e5 and beta_t = 0 on a contact sliding at 4.9,
  mu beta_n = 3.9e-5. The natural residual of eq (9) is below 1e-8, the step is not solved, and
  the message names the contact.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy.optimize import nnls

from mcpkit.errors import MCPInputError, ShapeError, SolveFailedError
from mcpkit.models.stewart_trinkle import (
    Contact,
    LCPStep,
    LineSurface2D,
    NCPStep,
    Particle,
    PlanarBody,
    PlaneSurface,
)
from mcpkit.models.stewart_trinkle.bodies import GRAVITY_CGS as G
from mcpkit.models.stewart_trinkle.step import project_disc_cone, project_polygon_cone
from mcpkit.solving.residuals import compute_residuals
from mcpkit.solving.result import RESULT_KEYS, MCPResult, SolutionStatus, Termination

finite = st.floats(-1e3, 1e3, allow_nan=False)


def _generators(mu: float, n_d: int) -> np.ndarray:
    phi = 2 * np.pi * np.arange(n_d) / n_d
    return np.column_stack([np.ones(n_d), mu * np.cos(phi), mu * np.sin(phi)])


@settings(max_examples=300, deadline=None)
@given(st.tuples(finite, finite, finite), st.floats(0.0, 3.0), st.booleans())
def test_disc_projection_is_the_projection(x: tuple, mu: float, planar: bool) -> None:
    """p in K, x - p in the polar cone {(a, b): |b| <= -a/mu}, and p . (x - p) = 0."""
    x = x[:2] if planar else x
    p = np.array(project_disc_cone(x, mu))
    d = np.asarray(x) - p
    scale = 1e-12 * (1.0 + np.linalg.norm(x))
    assert np.linalg.norm(p[1:]) <= mu * p[0] + scale
    assert mu * np.linalg.norm(d[1:]) <= -d[0] + scale or (mu == 0 and np.allclose(d[0], min(x[0], 0.0)))
    assert abs(p @ d) <= scale * (1.0 + np.linalg.norm(x))


@settings(max_examples=300, deadline=None)
@given(st.tuples(finite, finite, finite), st.floats(0.0, 3.0), st.integers(3, 40))
@example(x=(1.0, 0.0, 1.0), mu=1e-9, n_d=6)  # facet vs vertex closer than a length comparison resolves
@example(x=(0.0, 1.0, 1.0), mu=4.737136385118439e-158, n_d=4)  # |g1 x g2|^2 ~ mu^2 is subnormal
# the two edges' |y|^2 tie in rounding (mu |b| below eps a)
@example(x=(1.0, -9.456551022233717e-08, 5.120769595559909e-10), mu=5.120769595559909e-10, n_d=4)
def test_polygon_projection_matches_nnls(x: tuple, mu: float, n_d: int) -> None:
    """Equal to the NNLS projection onto cone{g_j}; x - p in the polar cone (g_j . (x - p) <= 0)."""
    g = _generators(mu, n_d)
    c, _ = nnls(g.T, np.asarray(x, dtype=float))
    p = np.array(project_polygon_cone(x, mu, n_d))
    scale = 1e-11 * (1.0 + np.linalg.norm(x))
    np.testing.assert_allclose(p, g.T @ c, atol=scale)
    assert (g @ (np.asarray(x) - p) <= scale).all()


def _sliding_particle(step: NCPStep | LCPStep, v0: np.ndarray) -> tuple[dict, np.ndarray]:
    """Parameters and the exact step of a particle at gap 0 on the table (test_stewart_trinkle)."""
    h, mu = step.h, step.contacts[0].mu
    p = step.parameters(0, 0.0, step.initial_state([0, 0, 0], v0))
    speed = float(np.linalg.norm(v0))
    bl = {b.name: b.slice for b in step.mcp.blocks}
    z = np.zeros(step.mcp.n)
    z[bl["lam_n"]] = G * h
    if isinstance(step, LCPStep):  # v0 along -d_j for one j or on the bisector of two
        phi = math.atan2(-v0[1], -v0[0]) % (2 * math.pi)
        k = phi / (2 * math.pi / step.n_d)
        js = (
            [round(k) % step.n_d]
            if abs(k - round(k)) < 1e-9
            else [math.floor(k), (math.floor(k) + 1) % step.n_d]
        )
        decel = mu * G * h * (1.0 if len(js) == 1 else math.cos(math.pi / step.n_d))
        lam_f = np.zeros(step.n_d)
        lam_f[js] = mu * G * h / len(js)
        z[bl["lam_f"]] = lam_f
        v1 = v0 * (speed - decel) / speed
        z[bl["sigma"]] = (speed - decel) * (1.0 if len(js) == 1 else math.cos(math.pi / step.n_d))
    elif speed > mu * G * h:  # NCP sliding
        v1 = v0 * (speed - mu * G * h) / speed
        z[bl["lam_t"]], z[bl["lam_o"]] = -mu * G * h * v0[:2] / speed
        z[bl["sigma"]] = speed - mu * G * h
    else:  # NCP sticking
        v1 = np.zeros(3)
        z[bl["lam_t"]], z[bl["lam_o"]] = -v0[:2]
    z[bl["v"]] = v1
    return p, z


def _natural(step: NCPStep | LCPStep, p: dict, z: np.ndarray) -> float:
    return compute_residuals(z, step.mcp.evaluate(z, p), step.mcp.lb, step.mcp.ub).natural


@pytest.mark.parametrize(
    ("make", "v0"),
    [
        (lambda: NCPStep(Particle.cgs(), [Contact(PlaneSurface(), 0.3)], 1e-3), [6.0, 3.0, 0.0]),
        (lambda: NCPStep(Particle.cgs(), [Contact(PlaneSurface(), 0.3)], 1e-3), [0.1, -0.2, 0.0]),
        (lambda: NCPStep(Particle.cgs(), [Contact(PlaneSurface(), 0.04)], 1e-6), [4.9, 0.0, 0.0]),
        (lambda: LCPStep(Particle.cgs(), [Contact(PlaneSurface(), 0.3)], 1e-3, n_d=8), [5.0, 0.0, 0.0]),
        (lambda: LCPStep(Particle.cgs(), [Contact(PlaneSurface(), 0.3)], 1e-3, n_d=8), [-3.0, -3.0, 0.0]),
        (lambda: LCPStep(Particle.cgs(), [Contact(PlaneSurface(), 0.3)], 1e-3, n_d=6), [8.0, 0.0, 0.0]),
    ],
    ids=["ncp-slide", "ncp-stick", "ncp-small-mu-h", "lcp-direction", "lcp-bisector-8", "lcp-bisector-6"],
)
def test_residual_vanishes_at_closed_form_steps(make, v0) -> None:
    step = make()
    p, z = _sliding_particle(step, np.asarray(v0, dtype=float))
    assert _natural(step, p, z) <= 1e-12  # an exact solution of the step MCP
    res = step.friction_residual(p, z)
    assert res.value <= 1e-14
    assert res.scale == pytest.approx(math.hypot(*v0, G * step.h), rel=1e-12)  # |w| = |(-g h, v0)|


def test_residual_vanishes_when_flying_and_for_a_planar_box() -> None:
    """Flying particle (gap 1 cm): r = 0, v = b. Planar box on two corners (x = -1, 1; y = -0.5)
    sliding at 4 without rotating (NCP and the 2-D LCP): beta_n sums to g h, beta_t,i = -mu beta_n,i,
    and the moment balance beta_n1 - beta_n2 = (beta_t1 + beta_t2)/2 gives beta_n = g h/2 -+ mu g h/4."""
    st_ = NCPStep(Particle.cgs(), [Contact(PlaneSurface(), 0.3)], 1e-3)
    p = st_.parameters(0, 0.0, st_.initial_state([0, 0, 1.0], [2.0, 0, -1.0]))
    z = np.zeros(st_.mcp.n)
    z[{b.name: b.slice for b in st_.mcp.blocks}["v"]] = p["b"]
    assert _natural(st_, p, z) == 0.0 and st_.friction_residual(p, z).value == 0.0
    body = PlanarBody.cgs(mass=2.0, inertia=2.0 * 5 / 12)
    cs = [Contact(LineSurface2D(), 0.3, [-1.0, -0.5]), Contact(LineSurface2D(), 0.3, [1.0, -0.5])]
    h = 1e-3
    for step in (NCPStep(body, cs, h), LCPStep(body, cs, h, n_d=2)):
        p = step.parameters(0, 0.0, step.initial_state([0, 0.5, 0], [4.0, 0, 0]))
        bl = {b.name: b.slice for b in step.mcp.blocks}
        z = np.zeros(step.mcp.n)
        z[bl["v"]] = [4.0 - 0.3 * G * h, 0.0, 0.0]
        bn = G * h * np.array([0.5 - 0.3 / 4, 0.5 + 0.3 / 4])
        z[bl["lam_n"]] = bn
        z[bl["sigma"]] = 4.0 - 0.3 * G * h
        if isinstance(step, LCPStep):
            z[bl["lam_f"]] = np.column_stack([np.zeros(2), 0.3 * bn]).reshape(-1)  # direction -t
        else:
            z[bl["lam_t"]] = -0.3 * bn
        assert _natural(step, p, z) <= 1e-12
        assert step.friction_residual(p, z).value <= 1e-14


@settings(max_examples=40, deadline=None)
@given(st.floats(-60, 60), st.integers(0, 2**31 - 1), st.sampled_from(["ncp", "lcp"]))
def test_relative_residual_is_invariant_to_scaling(log10_c: float, seed: int, form: str) -> None:
    """Velocities and impulses times c (b, psi/h, u_t, u_o and every unknown): e and s scale by c,
    e/s does not."""
    c = 10.0**log10_c
    rng = np.random.default_rng(seed)
    contacts = [Contact(PlaneSurface(normal=[0.1, -0.2, 1.0]), 0.4), Contact(PlaneSurface(), 0.2)]
    step = (
        NCPStep(Particle.cgs(), contacts, 1e-3)
        if form == "ncp"
        else LCPStep(Particle.cgs(), contacts, 1e-3, n_d=5)
    )
    p = step.parameters(0, 0.0, step.initial_state(rng.normal(size=3) * 0.01, rng.normal(size=3)))
    z = rng.normal(size=step.mcp.n)
    base = step.friction_residual(p, z)
    velocity_like = ("b", "psi_h", "ut", "uo")
    ps = {k: (np.asarray(v) * c if k in velocity_like else v) for k, v in p.items()}
    scaled = step.friction_residual(ps, z * c)
    np.testing.assert_allclose(scaled.absolute, base.absolute * c, rtol=1e-9)
    assert scaled.scale == pytest.approx(base.scale * c, rel=1e-12)
    np.testing.assert_allclose(scaled.relative, base.relative, rtol=1e-9, atol=1e-15)


def _fake_result(step: NCPStep, p: dict, z: np.ndarray, tol: float = 1e-8) -> MCPResult:
    F = step.mcp.evaluate(z, p)
    r = compute_residuals(z, F, step.mcp.lb, step.mcp.ub)
    ok = r.natural <= tol and r.complementarity <= tol
    return MCPResult(
        z=z, F=F, natural_residual=r.natural, complementarity_violation=r.complementarity,
        bound_violation=r.bounds, termination=Termination.CONVERGED,
        solution_status=SolutionStatus.SOLUTION if ok else SolutionStatus.INACCURATE, tol=tol,
        iterations=1, wall_time_s=0.0, backend="casadi", method="by-hand",
        message="solved by hand" if ok else "NOT solved by hand",
        blocks={b.name: b.slice for b in step.mcp.blocks},
    )  # fmt: skip


def test_runaway_sigma_point_is_not_solved_and_names_the_contact() -> None:
    """Issue 12's failure in seed 004's step, built by hand: contact 1 of two slides at 4.9 with
    beta_t = 0 and sigma = 1e5; the natural residual of eq (9) is under 1e-8, the step is not solved."""
    mu, h = 0.04, 1e-6
    far = PlaneSurface(point=[0.0, 0.0, -5.0])  # contact 0: 5 cm below, flying
    step = NCPStep(Particle.cgs(), [Contact(far, mu), Contact(PlaneSurface(), mu)], h)
    p = step.parameters(0, 0.0, step.initial_state([0, 0, 0], [4.9, 0, 0]))
    bl = {b.name: b.slice for b in step.mcp.blocks}
    z = np.zeros(step.mcp.n)
    z[bl["lam_n"]] = [0.0, G * h]
    z[bl["v"]] = [4.9, 0.0, 0.0]
    z[bl["sigma"]] = [0.0, 1e5]
    z[bl["lam_t"]] = [0.0, -mu * G * h * 4.9 / 1e5]  # the tangential row met through sigma
    mcp_result = _fake_result(step, p, z)
    assert mcp_result.solved and mcp_result.natural_residual <= 1e-8
    out = step.judge(p, mcp_result)
    assert not out.solved and out.solution_status is SolutionStatus.INACCURATE
    assert out.termination is Termination.STALLED
    assert out.residual is not None and out.residual.worst == 1
    assert out.residual.absolute[1] == pytest.approx(mu * G * h, rel=1e-3)  # the missing friction
    assert out.residual.absolute[0] == 0.0
    assert "contact 1" in out.message and "friction law is violated" in out.message
    d = out.summary()
    assert tuple(d)[: len(RESULT_KEYS)] == RESULT_KEYS and d["worst_contact"] == 1
    json.dumps(d)
    with pytest.raises(SolveFailedError, match="contact 1"):
        out.raise_if_failed()
    # the exact step at the same parameters passes both checks
    z[bl["v"]] = [4.9 - mu * G * h, 0.0, 0.0]
    z[bl["sigma"]] = [0.0, 4.9 - mu * G * h]
    z[bl["lam_t"]] = [0.0, -mu * G * h]
    good = step.judge(p, _fake_result(step, p, z))
    assert good.solved and good.message.startswith("solved: relative Coulomb residual")


def test_bad_input_raises_typed_errors() -> None:
    step = NCPStep(Particle.cgs(), [Contact(PlaneSurface(), 0.3)], 1e-3)
    p = step.parameters(0, 0.0, step.initial_state([0, 0, 0], [1.0, 0, 0]))
    with pytest.raises(ShapeError):
        step.friction_residual(p, np.zeros(step.mcp.n + 1))
    z = np.zeros(step.mcp.n)
    for bad in (-1.0, 0.0, math.nan, "1e-6", True):
        with pytest.raises(MCPInputError):
            step.judge(p, _fake_result(step, p, z), friction_tol=bad)  # type: ignore[arg-type]
    nan_result = _fake_result(step, p, np.full(step.mcp.n, np.nan))
    out = step.judge(p, nan_result)
    assert not out.solved and out.residual is None and out.friction_residual is None
