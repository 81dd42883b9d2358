"""Erdmann's configuration-space friction cone (seed 002) against hand-derived cases."""

from __future__ import annotations

import numpy as np
import pytest

from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError, UnknownOptionError
from mcpkit.models.friction.cspace_cone import (
    Ambiguity,
    ContactMode,
    ContactType,
    CSpaceContact,
    enumerate_modes_at_rest,
    static_equilibrium_multi,
)

A = 0.05  # half side of the square [m]
RHO_SQ = np.sqrt(2.0 / 3.0) * A  # square of side 2a: rho^2 = (2a)^2 / 6
M, G = 2.0, 9.81


def test_square_corner_geometry_by_hand() -> None:
    """Square (side 2a) touching a table (n0 = (0, 1)) at its lower-left corner, r = (a, a):
    n_q = n0 x r = -a, Delta_n = sqrt(rho^2 + a^2)/rho, n = (0, 1, -a/rho)/Delta_n,
    t_s = (1, 0) (from t_perp . t_s > 0), v_q = t_s x r = a, v_f = (1, 0, a/rho),
    t_r = (-a, a, rho)/|.|, dip threshold mu* = (rho^2 + a^2)/a^2 = 5/3."""
    c = CSpaceContact([0.0, 1.0], [A, A], RHO_SQ, 0.5)
    dn = np.sqrt(RHO_SQ**2 + A**2) / RHO_SQ
    np.testing.assert_allclose(c.n_q, -A)
    np.testing.assert_allclose(c.delta_n, dn)
    np.testing.assert_allclose(c.n, np.array([0, 1, -A / RHO_SQ]) / dn, atol=1e-15)
    np.testing.assert_allclose(c.t_s, [1, 0, 0])
    np.testing.assert_allclose(c.v_f, [1, 0, A / RHO_SQ])
    tr = np.array([-A, A, RHO_SQ])
    np.testing.assert_allclose(c.t_r, tr / np.linalg.norm(tr))
    np.testing.assert_allclose(c.dip_threshold, 5.0 / 3.0, rtol=1e-14)
    # orthonormal frame {t_perp, n, t_r}; cone edges lie in the plane F . t_r = 0
    Bm = np.stack([c.t_r_perp, c.n, c.t_r])
    np.testing.assert_allclose(Bm @ Bm.T, np.eye(3), atol=1e-14)
    np.testing.assert_allclose(c.edges @ c.t_r, 0.0, atol=1e-14)
    assert c.t_r_perp @ c.n0 >= 0 and c.t_r_perp @ c.t_s > 0
    # k1, k2 of eq 5 from the hand-computed frame
    tp = np.cross(c.n, c.t_r)
    tp = tp if tp @ c.n0 >= 0 else -tp
    k1 = (tp[0] - 0.5 * tp[1]) / (0.5 * c.n[1])
    k2 = (tp[0] + 0.5 * tp[1]) / (-0.5 * c.n[1])
    np.testing.assert_allclose([c.k1, c.k2], [k1, k2], rtol=1e-13)


@pytest.mark.parametrize("mu", [0.3, 1.0, 1.6, 1.7, 2.5])
def test_dip_threshold_square_corner(mu: float) -> None:
    """Below mu* = 5/3 both edges have e . n > 0 and k1 > 0; above it one edge dips."""
    c = CSpaceContact([0.0, 1.0], [A, A], RHO_SQ, mu)
    dips = mu > 5.0 / 3.0
    assert c.dips_below_tangent_plane is dips
    assert bool(np.min(c.edges @ c.n) < 0) is dips
    assert bool(c.k1 < 0) is dips and c.k2 < 0


@pytest.mark.parametrize("radius", [0.2, 0.5, 1.0, 2.0, 5.0])
@pytest.mark.parametrize("beta", [0.3, np.pi / 4, 1.2])
def test_point_contact_at_radius(radius: float, beta: float) -> None:
    """Table contact, reference point at r = R (cos b, sin b), rho = 1: n_q = -R cos b,
    v_q = R sin b, mu* = (1 + R^2 cos^2 b) / (R^2 sin b cos b); the k1 sign flips there."""
    r = radius * np.array([np.cos(beta), np.sin(beta)])
    mu_star = (1 + radius**2 * np.cos(beta) ** 2) / (radius**2 * np.sin(beta) * np.cos(beta))
    for mu in (0.98 * mu_star, 1.02 * mu_star):
        c = CSpaceContact([0.0, 1.0], r, 1.0, mu)
        np.testing.assert_allclose(c.dip_threshold, mu_star, rtol=1e-12)
        assert c.dips_below_tangent_plane is bool(mu > mu_star)


def test_contact_below_reference_point_never_dips() -> None:
    """r parallel to n0 (CoM straight above the contact): n_q = 0, threshold infinite."""
    c = CSpaceContact([0.0, 1.0], [0.0, 0.3], 0.1, 50.0)
    assert np.isinf(c.dip_threshold) and not c.dips_below_tangent_plane


def test_static_equilibrium_block_on_point() -> None:
    """Contact straight below the CoM, r = (0, h): gravity (0, -mg, 0) is balanced; a
    horizontal push P at the CoM is not (torque r x (P, 0) = -P h about the contact,
    F . t_r != 0); the push with the balancing torque tau = +P h (F_q = tau/rho) is balanced
    iff |P| <= mu m g."""
    h, rho, mu = 0.1, 0.08, 0.4
    c = CSpaceContact([0.0, 1.0], [0.0, h], rho, mu)
    assert c.static_equilibrium([0.0, -M * G, 0.0])
    assert not c.static_equilibrium([0.1, -M * G, 0.0])
    for P, ok in ((0.99 * mu * M * G, True), (1.01 * mu * M * G, False), (-0.99 * mu * M * G, True)):
        F = np.array([P, -M * G, P * h / rho])
        assert c.static_equilibrium(F) is ok
        assert c.static_equilibrium_k_form(F) is ok
    assert not c.static_equilibrium([0.0, M * G, 0.0])  # pulling away


def test_static_forms_agree_random() -> None:
    """Eq 4 (k1, k2 form) is equivalent to (i)'-(iii)' for any geometry, dipping or not."""
    rng = np.random.default_rng(3)
    for _ in range(2000):
        c = CSpaceContact(
            rng.normal(size=2), rng.normal(size=2), 0.1 + abs(rng.normal()), 0.05 + 3 * abs(rng.normal())
        )
        F = rng.normal(size=3)
        F -= (F @ c.t_r) * c.t_r
        assert c.static_equilibrium(F) == c.static_equilibrium_k_form(F)


def test_reaction_at_rest_block_sliding() -> None:
    """Block with contact below the CoM, r = (0, h), rho: push P > mu m g with the balancing
    torque. Real space: f_n = m g, friction -mu m g along x, its torque about the CoM
    (-r) x f = -mu m g h; so F_R = (-mu m g, m g, -mu m g h / rho), mode sliding along +x."""
    h, rho, mu = 0.1, 0.08, 0.4
    c = CSpaceContact([0.0, 1.0], [0.0, h], rho, mu)
    P = 2 * mu * M * G
    R = c.reaction_at_rest(np.array([P, -M * G, P * h / rho]))
    np.testing.assert_allclose(R.force, [-mu * M * G, M * G, -mu * M * G * h / rho], rtol=1e-12)
    assert R.mode is ContactMode.SLIDING_POSITIVE and R.ambiguity is Ambiguity.UNIQUE
    # small push: sticking, the reaction cancels the in-plane part of F
    F = np.array([0.5 * mu * M * G, -M * G, 0.3])
    R = c.reaction_at_rest(F)
    assert R.mode is ContactMode.STICKING
    np.testing.assert_allclose(R.force, -(F - (F @ c.t_r) * c.t_r), atol=1e-12)
    # pulling away: no reaction
    R = c.reaction_at_rest(np.array([0.0, 1.0, 0.0]))
    assert R.mode is ContactMode.SEPARATING and np.all(R.force == 0)


def test_rule_5_2_equals_mode_enumeration_when_cone_above_plane() -> None:
    """Above the tangent plane the acceleration-level Coulomb problem has exactly one
    consistent mode and it is the §5.2 double projection."""
    rng = np.random.default_rng(5)
    n_checked = 0
    while n_checked < 500:
        c = CSpaceContact(
            rng.normal(size=2), rng.normal(size=2), 0.1 + abs(rng.normal()), 0.05 + abs(rng.normal())
        )
        if c.dips_below_tangent_plane:
            continue
        F = rng.normal(size=3)
        sols = enumerate_modes_at_rest(c, F)
        R = c.reaction_at_rest(F)
        assert len(sols) == 1
        assert sols[0].mode is R.mode
        np.testing.assert_allclose(sols[0].reaction, R.force, atol=1e-9 * (1 + np.linalg.norm(F)))
        n_checked += 1


def test_dipping_cone_reports_ambiguity() -> None:
    """Square corner with mu = 2.5 > 5/3: the dipping edge e* has e* . n < 0. A force along
    -e* + small n pulls away from the surface (F . n > 0, so separating is consistent) yet
    -F is inside the cone (sticking is consistent too): at least two modes, typed ambiguity."""
    c = CSpaceContact([0.0, 1.0], [A, A], RHO_SQ, 2.5)
    e_star = c.edges[np.argmin(c.edges @ c.n)]
    other = c.edges[np.argmax(c.edges @ c.n)]
    F = -(0.9 * e_star + 0.1 * other)
    F = F / np.linalg.norm(F)
    assert F @ c.n > 0  # pointing away from the surface
    R = c.reaction_at_rest(F)
    assert R.ambiguity is Ambiguity.CONE_BELOW_TANGENT_PLANE_MULTIPLE
    modes = {s.mode for s in R.alternatives}
    assert ContactMode.SEPARATING in modes and ContactMode.STICKING in modes
    # below the threshold the same construction is impossible: the load is unique
    c2 = CSpaceContact([0.0, 1.0], [A, A], RHO_SQ, 1.0)
    R2 = c2.reaction_at_rest(F)
    assert R2.ambiguity is Ambiguity.UNIQUE
    with pytest.raises(MCPInputError):
        c.reaction(F, np.zeros(3), M)


def test_section_5_6_rules() -> None:
    """At rest with no velocity terms the §5.6 rules reduce to §5.2; a block sliding along +x
    (v0 . t_s > 0) gets f_t = f_n / k2, i.e. real-space friction -mu f_n."""
    rng = np.random.default_rng(9)
    for _ in range(200):
        c = CSpaceContact(
            rng.normal(size=2), rng.normal(size=2), 0.1 + abs(rng.normal()), 0.05 + abs(rng.normal())
        )
        if c.dips_below_tangent_plane:
            continue
        F = rng.normal(size=3)
        a = c.reaction(F, np.zeros(3), 1.0)
        b = c.reaction_at_rest(F)
        np.testing.assert_allclose(a.force, b.force, atol=1e-10)
    h, rho, mu = 0.1, 0.08, 0.4
    c = CSpaceContact([0.0, 1.0], [0.0, h], rho, mu)
    R = c.reaction(np.array([0.0, -M * G, 0.0]), np.array([1.0, 0.0, 0.0]), M)
    np.testing.assert_allclose(R.force, [-mu * M * G, M * G, -mu * M * G * h / rho], rtol=1e-12)
    R = c.reaction(np.array([0.0, -M * G, 0.0]), np.array([-1.0, 0.0, 0.0]), M, "edge_on_vertex")
    np.testing.assert_allclose(R.force, [mu * M * G, M * G, mu * M * G * h / rho], rtol=1e-12)
    assert R.mode is ContactMode.SLIDING_NEGATIVE
    # spinning vertex contact: h = omega^2 r adds the centripetal load to f_n
    R = c.reaction(np.array([0.0, -M * G, 0.0]), np.array([0.0, 0.0, 2.0]), M, ContactType.VERTEX_ON_EDGE)
    np.testing.assert_allclose(R.f_n, max(0.0, M * G - M * 4.0 * h), rtol=1e-12)


@pytest.mark.parametrize("mu", [0.5, 1.5])
def test_two_contacts_square_on_table(mu: float) -> None:
    """Square (side 2a) on a table, contacts at both lower corners (r = (a, a), (-a, a)),
    horizontal push P at the CoM. Statics: n1 = (mg - P)/2 >= 0 (no tipping, P <= mg) and
    P <= mu m g (no sliding): balanced iff P <= min(mu, 1) m g. The net cone is the sum of
    the two single-contact cones."""
    cs = [CSpaceContact([0.0, 1.0], [A, A], RHO_SQ, mu), CSpaceContact([0.0, 1.0], [-A, A], RHO_SQ, mu)]
    lim = min(mu, 1.0) * M * G
    for P, ok in ((0.0, True), (0.97 * lim, True), (1.03 * lim, False), (-0.97 * lim, True)):
        bal, lam = static_equilibrium_multi(cs, np.array([P, -M * G, 0.0]))
        assert bal is ok
        if ok:
            E = np.vstack([c.edges for c in cs])
            np.testing.assert_allclose(lam @ E, -np.array([P, -M * G, 0.0]), atol=1e-9)


def test_bad_input() -> None:
    with pytest.raises(MCPInputError):
        CSpaceContact([0.0, 1.0], [1.0, 1.0], 1.0, -0.1)
    with pytest.raises(MCPInputError):
        CSpaceContact([0.0, 1.0], [1.0, 1.0], 0.0, 0.5)
    with pytest.raises(MCPInputError):
        CSpaceContact([0.0, 0.0], [1.0, 1.0], 1.0, 0.5)
    with pytest.raises(ShapeError):
        CSpaceContact([0.0, 1.0, 0.0], [1.0, 1.0], 1.0, 0.5)
    with pytest.raises(NonFiniteError):
        CSpaceContact([0.0, 1.0], [np.nan, 1.0], 1.0, 0.5)
    c = CSpaceContact([0.0, 1.0], [0.0, 1.0], 1.0, 0.5)
    with pytest.raises(ShapeError):
        c.reaction_at_rest([1.0, 2.0])
    with pytest.raises(UnknownOptionError):
        c.reaction([0.0, -1.0, 0.0], [0.0, 0.0, 0.0], 1.0, "type_c")
    with pytest.raises(MCPInputError):
        static_equilibrium_multi([], np.zeros(3))


def test_plot_cspace_cone() -> None:
    """The Fig. 5 plot shows the two edges as arrows in the (t_perp, n) plane."""
    from matplotlib.figure import Figure

    from mcpkit.models.friction.plots import plot_cspace_cone

    c = CSpaceContact([0.0, 1.0], [A, A], RHO_SQ, 0.8)
    fig = plot_cspace_cone(c, F=np.array([25.0, -19.62, 0.0]))
    assert isinstance(fig, Figure)
    assert "k_1" in fig.axes[0].get_title()
