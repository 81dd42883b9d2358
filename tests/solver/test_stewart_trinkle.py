"""Stewart–Trinkle steps (seed 004 eqs 9, 15) against closed forms.

Sliding on a flat table: with gap 0 the normal row gives v_z = 0 and beta_n = g h; while
|v_k| > mu g h the implicit step removes exactly mu g h along v_k/|v_k| (the friction impulse is
opposite to v_{k+1}, which is parallel to v_k), else the particle sticks. Hence at the grid times
|v_k| = max(|v0| - mu g t_k, 0): the continuous closed form v(t) = v0 - mu g t (then rest)
holds exactly at t_k, for the NCP and for any LCP with a direction along v0.

Polyhedral cone, v0 on the bisector of two directions (n_d even): maximal dissipation selects the
two directions opposite v equally, so the friction along v is mu N cos(pi/n_d) and
|v_k| = max(|v0| - mu g cos(pi/n_d) t_k, 0); the LCP->NCP gap shrinks like 1 - cos(pi/n_d).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mcpkit.models.stepping import simulate
from mcpkit.models.stewart_trinkle import (
    Contact,
    LCPStep,
    LineSurface2D,
    NCPStep,
    Particle,
    PlanarBody,
    PlaneSurface,
    RigidBody3D,
)
from mcpkit.models.stewart_trinkle.bodies import GRAVITY_CGS as G

pytestmark = pytest.mark.solver
MU, H = 0.3, 1e-3


def _speed_closed_form(v0: float, decel: float, t: np.ndarray) -> np.ndarray:
    return np.maximum(v0 - decel * t, 0.0)


@pytest.mark.parametrize("method", ["penalty", "fb"])
def test_particle_slides_to_rest_ncp(method):
    v0 = np.array([6.0, 3.0, 0.0])
    st = NCPStep(Particle.cgs(mass=1.0), [Contact(PlaneSurface(), MU)], H)
    n = 30  # stop at |v0|/(mu g) = 0.0228 s, i.e. step 23
    sim = simulate(st, st.initial_state([0, 0, 0], v0), n, method=method, backend="casadi", progress=False)
    assert sim.solved
    speed = np.linalg.norm(sim.states[:, 3:6], axis=1)
    np.testing.assert_allclose(speed, _speed_closed_form(np.linalg.norm(v0), MU * G, sim.t), atol=1e-6)
    # direction preserved while sliding, v_z = 0
    moving = speed > 1e-3
    np.testing.assert_allclose(
        sim.states[moving, 3:5] / speed[moving, None],
        np.tile(v0[:2] / np.linalg.norm(v0), (moving.sum(), 1)),
        atol=1e-7,
    )
    np.testing.assert_allclose(sim.states[:, 5], 0.0, atol=1e-7)
    # stopping distance |v0|^2/(2 mu g), discretisation error <= h |v0|
    stop = np.linalg.norm(v0) ** 2 / (2 * MU * G)
    assert abs(np.linalg.norm(sim.states[-1, :2]) - stop) <= H * np.linalg.norm(v0)
    # normal force = m g while in contact
    np.testing.assert_allclose(st.normal_force(sim.z), G, rtol=1e-6)


def test_particle_slides_to_rest_lcp_along_direction():
    v0 = np.array([5.0, 0.0, 0.0])  # along d_0
    st = LCPStep(Particle.cgs(), [Contact(PlaneSurface(), MU)], H, n_d=8)
    sim = simulate(
        st, st.initial_state([0, 0, 0], v0), 25, method="penalty", backend="casadi", progress=False
    )
    assert sim.solved
    np.testing.assert_allclose(
        np.linalg.norm(sim.states[:, 3:6], axis=1), _speed_closed_form(5.0, MU * G, sim.t), atol=1e-6
    )


def test_lcp_converges_to_ncp_on_bisector():
    """|v_LCP - v_NCP| at the grid times equals mu g t (1 - cos(pi/n_d)) and decreases with n_d."""
    gaps = []
    n = 10
    for nd in (4, 8, 16, 32):
        phi = math.pi / nd
        v0 = 8.0 * np.array([math.cos(phi), math.sin(phi), 0.0])
        st = LCPStep(Particle.cgs(), [Contact(PlaneSurface(), MU)], H, n_d=nd)
        sim = simulate(
            st, st.initial_state([0, 0, 0], v0), n, method="penalty", backend="casadi", progress=False
        )
        assert sim.solved
        speed = np.linalg.norm(sim.states[:, 3:6], axis=1)
        np.testing.assert_allclose(speed, _speed_closed_form(8.0, MU * G * math.cos(phi), sim.t), atol=1e-6)
        gaps.append(MU * G * sim.t[-1] - (8.0 - speed[-1]))
    gaps = np.array(gaps)
    assert np.all(np.diff(gaps) < 0)
    np.testing.assert_allclose(
        gaps, MU * G * n * H * (1 - np.cos(np.pi / np.array([4, 8, 16, 32]))), atol=1e-6
    )


def test_planar_box_slides_without_rotation():
    """Two corners on the ground: total friction mu m g, no tipping (mu*height < half-width)."""
    body = PlanarBody.cgs(mass=2.0, inertia=2.0 * (4 + 1) / 12)
    ground = LineSurface2D()
    contacts = [Contact(ground, MU, [-1.0, -0.5]), Contact(ground, MU, [1.0, -0.5])]
    for st in (NCPStep(body, contacts, H), LCPStep(body, contacts, H, n_d=2)):
        sim = simulate(
            st,
            st.initial_state([0, 0.5, 0], [4.0, 0, 0]),
            20,
            method="penalty",
            backend="casadi",
            progress=False,
        )
        assert sim.solved
        np.testing.assert_allclose(sim.states[:, 3], _speed_closed_form(4.0, MU * G, sim.t), atol=1e-6)
        np.testing.assert_allclose(sim.states[:, 4:6], 0.0, atol=1e-7)


def test_flat_plate_body_slides_to_rest_3d():
    """3-D flat square body touching at four corners level with its centre of mass: friction
    has no moment about horizontal axes and, for any admissible split of the normal forces,
    none about the vertical (sum N_i r_i = 0), so the centre slides like a particle (mu g t),
    without spin, and the quaternion stays unit.

    Tolerance 1e-4 on the speed, not 1e-6: the four normal impulses are not unique, the solver
    may drive two of them to ~1e-5, and for such a contact the quadratic cone row
    (mu beta_n)^2 - |beta_f|^2 is met to tol = 1e-8 with a friction impulse short by up to
    sqrt(1e-8) = 1e-4 (observed: 2.7e-5). The translational speed is still within 1e-4."""
    body = RigidBody3D.cgs(mass=1.0, inertia_body=[1 / 3, 1 / 3, 2 / 3])
    plane = PlaneSurface()
    contacts = [Contact(plane, MU, [sx, sy, 0.0]) for sx in (-1.0, 1.0) for sy in (-1.0, 1.0)]
    v0 = np.array([3.0, -2.0, 0.0, 0.0, 0.0, 0.0])
    st = NCPStep(body, contacts, H)
    sim = simulate(
        st,
        st.initial_state([0, 0, 0.0, 1, 0, 0, 0], v0),
        15,
        method="penalty",
        backend="casadi",
        progress=False,
    )
    assert sim.solved
    speed = np.linalg.norm(sim.states[:, 7:10], axis=1)
    np.testing.assert_allclose(speed, _speed_closed_form(np.linalg.norm(v0), MU * G, sim.t), atol=1e-4)
    np.testing.assert_allclose(sim.states[:, 10:13], 0.0, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(sim.states[:, 3:7], axis=1), 1.0, atol=1e-12)


def test_particle_drops_onto_table_inelastic():
    """Free fall (semi-implicit Euler: v_k = -g t_k) then a perfectly inelastic impact: v_z = 0
    once the gap closes, never any penetration."""
    st = NCPStep(Particle.cgs(), [Contact(PlaneSurface(), MU)], H)
    sim = simulate(
        st, st.initial_state([0, 0, 0.01], [0, 0, 0]), 60, method="penalty", backend="casadi", progress=False
    )
    assert sim.solved
    z, vz = sim.states[:, 2], sim.states[:, 5]
    assert z.min() >= -1e-9  # no penetration (the gap row is exact for a particle)
    # before contact: semi-implicit Euler free fall v_k = -g t_k
    free = np.flatnonzero(z > 1e-6)[:-1]
    np.testing.assert_allclose(vz[free], -G * sim.t[free], atol=1e-7)
    np.testing.assert_allclose(vz[-10:], 0.0, atol=1e-8)
