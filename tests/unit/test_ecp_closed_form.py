"""Closed forms of the ECP slider (seed 000 §5) and input validation; no solver needed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError, UnknownOptionError
from mcpkit.models.ecp.closed_form import (
    pure_translation_step,
    pure_translation_trajectory,
    quasi_static_velocity,
)
from mcpkit.models.ecp.complementarity import (
    ECPPatchViolation,
    build_complementarity_mcp,
    check_ecp_in_patch,
)
from mcpkit.models.ecp.params import PushForce, SliderParams, paper_slider, square_patch
from mcpkit.models.ecp.quadratic import StepImpulses, build_quadratic_mcp, ecp_offset, linear_update
from mcpkit.models.ecp.simulation import make_model

RNG = np.random.default_rng(7)


# ----------------------------------------------------------------------------- quasi-static
def test_quasi_static_satisfies_pusher_kinematics_and_moment_balance() -> None:
    """Eqs 38-40 must satisfy the equations they were derived from.

    Kinematics of a sticking pusher (eqs 33-34): v = v_p + w x (c - q), i.e.
    v_x = v_px + w d_y, v_y = v_py - w d_x. The maximum-dissipation wrench with the ECP under
    the CM is lambda ∝ -(e^2 v_x, e^2 v_y, e_r^2 w) (eqs 22-24), and the moment balance
    (eq 35) lambda_r = d_x lambda_o - d_y lambda_t must then hold.
    """
    P = SliderParams(e_t=0.9, e_o=0.9, e_r=0.02)
    d = RNG.uniform(-0.05, 0.05, size=(50, 2))
    vp = RNG.uniform(-1, 1, size=(50, 2))
    tw = quasi_static_velocity(P, d, vp)
    vx, vy, w = tw.T
    np.testing.assert_allclose(vx, vp[:, 0] + w * d[:, 1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(vy, vp[:, 1] - w * d[:, 0], rtol=0, atol=1e-12)
    lt, lo, lr = -(P.e_t**2) * vx, -(P.e_o**2) * vy, -(P.e_r**2) * w
    np.testing.assert_allclose(lr, d[:, 0] * lo - d[:, 1] * lt, rtol=0, atol=1e-14)


def test_quasi_static_limits() -> None:
    """Pushing at the CM, or along a line through it, gives pure translation with v = v_p;
    a push perpendicular to an offset arm d (v_p = (0, 1), contact (d, 0)) gives
    v_y = c^2/(c^2+d^2), w = d v_y / c^2 (eqs 39-40 with d_y = 0)."""
    P = paper_slider()
    np.testing.assert_allclose(
        quasi_static_velocity(P, [0.0, 0.0], [0.3, -0.2]), [0.3, -0.2, 0.0], atol=1e-15
    )
    np.testing.assert_allclose(
        quasi_static_velocity(P, [-0.025, 0.0], [0.4, 0.0]), [0.4, 0.0, 0.0], atol=1e-15
    )
    d, c2 = 0.02, (P.e_r / P.e_t) ** 2
    out = quasi_static_velocity(P, [d, 0.0], [0.0, 1.0], cm=[0.0, 0.0])
    np.testing.assert_allclose(out, [0.0, c2 / (c2 + d**2), d / (c2 + d**2)], rtol=1e-13, atol=0)
    # translation invariance: only c - q matters
    out2 = quasi_static_velocity(P, [1.0 + d, 2.0], [0.0, 1.0], cm=[1.0, 2.0])
    np.testing.assert_allclose(out2, out, rtol=1e-12, atol=1e-14)


# -------------------------------------------------------------------------- pure translation
def test_pure_translation_matches_paper_formula_for_unit_ellipsoid() -> None:
    """For e_t = e_o = 1 the step equals eqs 46-49 as printed in the paper."""
    P = paper_slider()
    v, pa = np.array([0.7, 0.9]), np.array([0.004, -0.002])
    s = P.m * v + pa
    p_paper = -(P.e_t**2) * P.mu * P.p_n * s / math.hypot(*s)
    p, v1, sig = pure_translation_step(P, v, pa)
    np.testing.assert_allclose(p, p_paper, rtol=1e-14, atol=0)
    np.testing.assert_allclose(v1, (p_paper + pa) / P.m + v, rtol=1e-14, atol=0)
    assert sig == pytest.approx((math.hypot(*s) - P.mu * P.p_n) / P.m, rel=1e-13)


@pytest.mark.parametrize("e", [0.6, 1.0, 1.7])
def test_pure_translation_satisfies_discrete_model(e: float) -> None:
    """The closed form (corrected for e != 1) solves eqs 29-32 with w = 0: the quadratic MCP
    evaluated at (p_t, p_o, 0, sigma) is zero."""
    P = SliderParams(e_t=e, e_o=e)
    v, pa = np.array([0.5, -0.8]), np.array([0.01, 0.0])
    p, _, sig = pure_translation_step(P, v, pa)
    assert sig > 0
    mcp = build_quadratic_mcp(P)
    F = mcp.evaluate(
        [p[0], p[1], 0.0, sig], p={"v_x": v[0], "v_y": v[1], "w_z": 0.0, "p_x": pa[0], "p_y": pa[1]}
    )
    np.testing.assert_allclose(F, 0.0, atol=1e-13)


def test_pure_translation_trajectory_stops_in_closed_form() -> None:
    """Free translation: the speed falls by e mu g h per step along a fixed direction, so the
    slider sticks at the first step u with |v^u| <= e mu g h, i.e. u* = ceil(|v0|/(e mu g h)) - 1
    (when not an integer), and stays at rest; q advances by h v^{u+1}."""
    P = paper_slider()
    v0 = np.array([0.7, 0.9])
    dv = P.e_t * P.mu * P.g * P.h
    tr = pure_translation_trajectory(P, v0, 60)
    k = np.arange(61)
    speed = np.maximum(np.linalg.norm(v0) - k * dv, 0.0)
    u_star = math.ceil(np.linalg.norm(v0) / dv) - 1
    assert tr.stop_step == u_star
    np.testing.assert_allclose(
        np.linalg.norm(tr.v[: u_star + 1], axis=1), speed[: u_star + 1], rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(tr.v[u_star + 1 :], 0.0, atol=0)
    direction = tr.v[:u_star] / np.linalg.norm(tr.v[:u_star], axis=1)[:, None]
    np.testing.assert_allclose(direction, np.tile(v0 / np.linalg.norm(v0), (u_star, 1)), atol=1e-12)
    np.testing.assert_allclose(np.diff(tr.q, axis=0), P.h * tr.v[1:], atol=1e-15)
    assert (tr.sigma[:u_star] > 0).all()


# -------------------------------------------------------------------------------- ECP offset
def test_ecp_offset_and_linear_update() -> None:
    """Eqs 11-12: a - q = -(p_t, p_o) q_z / p_n; eqs 26-28 and q+ = q + h v+."""
    P = paper_slider()
    off = ecp_offset(P, -0.01, 0.005)
    np.testing.assert_allclose(off, [0.01 * P.q_z / P.p_n, -0.005 * P.q_z / P.p_n], rtol=1e-15)
    x0 = np.array([0.1, 0.2, 0.3, 0.7, 0.9, 10.0])
    imp = StepImpulses(-0.01, -0.012, -1e-4, P.p_n)
    x1, a = linear_update(P, x0, imp, np.array([0.002, 0.0, 1e-5]))
    v = np.array([0.7 + (-0.01 + 0.002) / P.m, 0.9 - 0.012 / P.m, 10.0 + (-1e-4 + 1e-5) / P.I_z])
    np.testing.assert_allclose(x1[3:], v, rtol=1e-15)
    np.testing.assert_allclose(x1[:3], x0[:3] + P.h * v, rtol=1e-15)
    np.testing.assert_allclose(a, x1[:2] + ecp_offset(P, imp.p_t, imp.p_o), rtol=1e-15)


def test_patch_check_uses_body_frame() -> None:
    """A world offset (0.03, 0) lies outside the 0.05 m square when theta = 0 (0.005 m beyond
    the edge) but inside when theta = 45 deg (body coordinates (0.0212, -0.0212))."""
    P = paper_slider()
    viol = check_ecp_in_patch(
        P, np.array([0.0, np.pi / 4]), np.array([[0.03, 0.0], [0.03, 0.0]]), np.array([0.01, 0.02])
    )
    assert len(viol) == 1 and isinstance(viol[0], ECPPatchViolation)
    assert viol[0].step == 0 and viol[0].excess == pytest.approx(0.005, abs=1e-15)
    assert check_ecp_in_patch(P, np.zeros(1), np.array([[np.nan, 0.0]]), np.zeros(1))[0].step == 0


def test_push_force_moment() -> None:
    """Force F d at body point rho: moment F (rho x d); for the paper's push (rho = (-L/2,
    -2.5 mm), d = +x) that is +2.5e-3 F, and the world force rotates with theta."""
    push = PushForce()
    lam = push(0.0, np.array([0, 0, np.pi / 2, 0, 0, 0]))
    np.testing.assert_allclose(lam, [0.0, 4.2, 4.2 * 0.0025], atol=1e-14)
    assert push.magnitude(0.05) == pytest.approx(0.2, abs=1e-12)


def test_mcp_prints_paper_unknowns() -> None:
    """The declaration is a square system of 4 free unknowns (quadratic) and 2 pairs + 3
    free unknowns (complementarity)."""
    q = build_quadratic_mcp(paper_slider())
    assert q.n == 4 and np.isinf(q.lb).all() and np.isinf(q.ub).all()
    c = build_complementarity_mcp(paper_slider())
    np.testing.assert_array_equal(c.lb, [0, 0, -np.inf, -np.inf, -np.inf])
    txt = q.to_text()
    for name in ("(p_t free)", "(p_o free)", "(p_r free)", "(sigma free)"):
        assert name in txt
    assert "0 <= sigma ⟂" in c.to_text() and "0 <= p_n ⟂" in c.to_text()


# ------------------------------------------------------------------------------ error paths
@pytest.mark.parametrize(
    ("kwargs", "err"),
    [
        ({"mu": -0.1}, MCPInputError),
        ({"m": 0.0}, MCPInputError),
        ({"e_r": -1.0}, MCPInputError),
        ({"q_z": -0.01}, MCPInputError),
        ({"h": float("nan")}, NonFiniteError),
        ({"I_z": float("inf")}, NonFiniteError),
        ({"g": "heavy"}, MCPInputError),
        ({"patch": np.zeros((2, 2))}, ShapeError),
        ({"patch": square_patch(0.05)[::-1]}, MCPInputError),  # clockwise
        ({"patch": square_patch(0.05) + 1.0}, MCPInputError),  # CM outside
    ],
)
def test_bad_parameters_raise(kwargs: dict, err: type[Exception]) -> None:
    with pytest.raises(err):
        SliderParams(**kwargs)


def test_bad_inputs_raise() -> None:
    P = paper_slider()
    with pytest.raises(MCPInputError, match="mu > 0"):
        build_quadratic_mcp(SliderParams(mu=0.0))
    with pytest.raises(MCPInputError, match="mu > 0"):
        build_complementarity_mcp(SliderParams(mu=0.0))
    with pytest.raises(UnknownOptionError):
        make_model("linear", P)
    with pytest.raises(MCPInputError):
        make_model("quadratic", P, load=3.0)  # type: ignore[arg-type]
    with pytest.raises(ShapeError):
        make_model("quadratic", P).parameters(0, 0.0, np.zeros(5))
    with pytest.raises(NonFiniteError):
        make_model("complementarity", P).parameters(0, 0.0, np.array([0, 0, 0, np.nan, 0, 0]))
    with pytest.raises(ShapeError):
        make_model("quadratic", P, load=lambda t, x: np.zeros(2)).parameters(0, 0.0, np.zeros(6))
    with pytest.raises(MCPInputError, match="isotropic"):
        pure_translation_step(SliderParams(e_t=1.0, e_o=0.5), [1.0, 0.0])
    with pytest.raises(NonFiniteError):
        quasi_static_velocity(P, [np.inf, 0.0], [1.0, 0.0])
    with pytest.raises(ShapeError):
        quasi_static_velocity(P, [0.0, 0.0, 0.0], [1.0, 0.0])
    with pytest.raises(MCPInputError):
        pure_translation_trajectory(P, [1.0, 0.0], 0)
    with pytest.raises(MCPInputError):
        PushForce(period=0.0)
    with pytest.raises(MCPInputError):
        PushForce(direction=(0.0, 0.0))
