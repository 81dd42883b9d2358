"""Limit surface, moment function, ellipsoid fit, eigen-directions and the two-point bar
(seed 001) checked against closed forms derived in each docstring."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.optimize import brentq

from mcpkit.errors import MCPInputError, ShapeError, UnknownOptionError
from mcpkit.models.friction import limit_surface as ls
from mcpkit.models.friction.patch import ContactPatch
from mcpkit.models.friction.two_point_bar import (
    bar_facets,
    bar_gauge,
    bar_vertices,
    two_point_bar,
)

MU, N = 0.5, 4.0


# ------------------------------------------------------------------ moment function
def test_moment_function_points_is_sum_of_cones() -> None:
    """Point supports: M_c = mu N sum_i w_i |r_i - r_c| (seed 001: a sum of upward cones)."""
    pc = ls.PointContacts([0.0, 1.0, -0.5], [0.0, 0.2, 0.7], [0.2, 0.5, 0.3])
    cop = pc.centre_of_pressure
    xc, yc = np.array([0.3, -2.0]), np.array([0.1, 0.4])
    exp = [
        MU
        * N
        * sum(
            w * np.hypot(x - cop[0] - a, y - cop[1] - b)
            for x, y, w in zip(pc.x, pc.y, pc.weights, strict=True)
        )
        for a, b in zip(xc, yc, strict=True)
    ]
    np.testing.assert_allclose(ls.moment_function(pc, xc, yc, MU, N), exp, rtol=1e-13)


def test_moment_function_disc_centre() -> None:
    """Uniform disc, C at the centre: M_c = mu N <r> = (2/3) mu N R."""
    R = 0.01
    P = ContactPatch.circle(R, 101)
    np.testing.assert_allclose(ls.moment_function(P, 0.0, 0.0, MU, N), 2 / 3 * MU * N * R, rtol=3e-4)


@pytest.mark.parametrize(
    "patch", [ContactPatch.nonconvex_a(0.02, 9), ContactPatch.linear_gradient(0.02, 0.01, 7)]
)
def test_moment_function_gradient_fd_and_eq6(patch: ContactPatch) -> None:
    """Analytic gradient vs central differences (h = 1e-7 m), and seed 001 eq 6:
    F_x = dM_c/dy_c, F_y = -dM_c/dx_c equal the directly integrated load of CCW rotation
    about C, and M = M_c + r_c x F. (r x f = (r - r_c) x f + r_c x f; the printed
    M = M_c - r_c x F fails, which we also assert.)"""
    pts = np.array([[0.0, 0.0], [0.0031, -0.0042], [0.011, 0.02], [-0.0045, 0.0045]])
    h = 1e-7
    for xc, yc in pts:
        gx, gy = ls.moment_function_gradient(patch, xc, yc, MU, N)
        fdx = (
            ls.moment_function(patch, xc + h, yc, MU, N) - ls.moment_function(patch, xc - h, yc, MU, N)
        ) / (2 * h)
        fdy = (
            ls.moment_function(patch, xc, yc + h, MU, N) - ls.moment_function(patch, xc, yc - h, MU, N)
        ) / (2 * h)
        np.testing.assert_allclose([gx, gy], [fdx, fdy], rtol=1e-5, atol=1e-7 * MU * N)
        direct = ls.applied_load(patch, np.array([yc, -xc, 1.0]), MU, N)
        via = ls.load_from_moment_function(patch, xc, yc, MU, N)
        np.testing.assert_allclose(via, direct, rtol=1e-10, atol=1e-15)
        Mc = ls.moment_function(patch, xc, yc, MU, N)
        paper = Mc - (xc * direct[1] - yc * direct[0])
        if np.hypot(xc, yc) > 0.004:
            assert abs(paper - direct[2]) > 1e-3 * abs(Mc)


# ------------------------------------------------------------------ sampled surface
def test_load_motion_inequality_and_normality() -> None:
    """Seed 001 eq 5: (P(q) - P(q*)) . q >= 0 for every pair of sampled motions, and
    P(q) . q > 0 (max power)."""
    P = ContactPatch.nonconvex_b(0.02, 9)
    S = ls.sample_limit_surface(P, MU, N, n=300)
    Pn = S.normalised_loads
    q = S.directions
    G = Pn @ q.T  # G[k, j] = P_k . q_j
    ineq = np.diag(G)[None, :] - G  # (P_j - P_k) . q_j
    assert ineq.min() > -1e-12
    assert np.all(np.diag(G) > 0)


def test_ellipsoid_fit_recovers_exact_ellipsoid() -> None:
    """Synthetic loads on P^T A P = 1 (A known, SPD) are fitted with zero error."""
    rng = np.random.default_rng(1)
    B = rng.normal(size=(3, 3))
    A = B @ B.T + 0.5 * np.eye(3)
    u = rng.normal(size=(200, 3))
    u /= np.linalg.norm(u, axis=1)[:, None]
    Pn = u / np.sqrt(np.einsum("ki,ij,kj->k", u, A, u))[:, None]
    S = ls.LimitSurfaceSamples(u, u, Pn * MU * N * np.array([1, 1, 0.3]), 0.3, MU, N)
    fit = ls.fit_ellipsoid(S)
    np.testing.assert_allclose(fit.A, A, rtol=1e-9)
    assert fit.max_radial_error < 1e-10
    # normality: P = A^-1 q / sqrt(q^T A^-1 q) for q = A P / |A P|
    q = Pn @ A
    q /= np.linalg.norm(q, axis=1)[:, None]
    np.testing.assert_allclose(fit.predict(q * np.array([1, 1, 1 / 0.3])), S.loads, rtol=1e-9, atol=1e-12)


def test_ellipsoid_fit_disc_symmetry_and_intercepts() -> None:
    """Disc: the fit is axis-aligned with equal force axes (symmetry); the true intercepts
    mu N (translation) and (2/3) mu N R (rotation) lie within the reported max radial error."""
    R = 0.01
    P = ContactPatch.circle(R, 21)
    S = ls.sample_limit_surface(P, MU, N, n=800)
    fit = ls.fit_ellipsoid(S)
    A = fit.A
    assert abs(A[0, 1]) + abs(A[0, 2]) + abs(A[1, 2]) < 1e-3 * A[0, 0]
    np.testing.assert_allclose(A[0, 0], A[1, 1], rtol=1e-3)
    true = np.array([[MU * N, 0, 0], [0, 0, 2 / 3 * MU * N * R]])
    err = np.abs(fit.radial_error(true))
    assert np.all(err <= fit.max_radial_error + 1e-3)
    assert 0.005 < fit.rms_radial_error < 0.05  # the disc LS is not an ellipsoid


def test_precomputed_table_reproduces_patch_loads() -> None:
    """Seed 003 §V-C/D pre-computed limit surface (``lugre_reduced.precompute_limit_surface``):
    at the eq 35 nodes it holds the normalised BILINEAR patch loads (eq 31: divided by the
    per-component maxima, ``scale``); between nodes the bilinear read-back (eqs 36-44) of a
    disc's surface converges to the exact load as N_ls grows (measured max error 4.4e-2 at
    N_ls = 5, 5.7e-3 at N_ls = 20, in mu N with the moment divided by r')."""
    from mcpkit.models.friction.lugre_reduced import precompute_limit_surface, sphere_twists

    P = ContactPatch.circle(0.01, 21)
    tab = precompute_limit_surface(P, 4)
    _, _, nodes = sphere_twists(4, tab.r_pre)
    nodes = nodes.reshape(-1, 3)
    ref = P.friction_load(nodes, 1.0, 1.0, method="bilinear")
    np.testing.assert_allclose(tab.values.reshape(-1, 3) * tab.scale, ref, atol=1e-12)
    read = np.array([tab.h(t) for t in nodes[1:-1]]) * tab.scale  # skip the theta seam rows
    np.testing.assert_allclose(read, ref[1:-1], atol=1e-12)
    rng = np.random.default_rng(3)
    q = rng.normal(size=(300, 3))
    q /= np.linalg.norm(q, axis=1)[:, None]
    err = {}
    for n_ls in (5, 20):
        tab = precompute_limit_surface(P, n_ls)
        sc = np.array([1.0, 1.0, 1.0 / tab.r_pre])
        tw = q * sc
        H = np.array([tab.h(t) for t in tw]) * tab.scale
        err[n_ls] = np.max(np.linalg.norm((H - P.friction_load(tw, 1.0, 1.0)) * sc, axis=1))
    assert err[20] < 1e-2
    assert err[5] > 3 * err[20]


def test_nonconvex_1_section_is_nearly_the_two_point_diamond() -> None:
    """Seed 003's "non-convex 1" is two pads of side s/7 centred at (+-d, 0), d = 3s/7. Point
    supports there (seed 001's two-point bar turned by 90 degrees) give the [F_y, M] section
    |F_y|/(mu N) + |M|/M_0 = 1 (a diamond; M_0 = mu N d). The pads only round it: with the
    true intercepts (mu N and M_0 = mu N <|rho|>) the gauge stays in [1, 1.07], while the
    ellipse through the same intercepts has gauge sqrt 2 at 45 degrees (measured: 1.062)."""
    s = 0.02
    d = 3 * s / 7
    P = ContactPatch.nonconvex_a(s, 21)
    sec = ls.limit_surface_section(P, MU, N, "FyM", n=73, char_length=d)
    np.testing.assert_allclose(sec[:, 0], 0.0, atol=1e-12)
    M0 = -P.friction_load([0.0, 0.0, 1.0], MU, N)[2]
    assert 1.0 < M0 / (MU * N * d) < 1.01  # lever arms spread around d
    g = np.abs(sec[:, 1]) / (MU * N) + np.abs(sec[:, 2]) / M0
    assert g.min() > 1.0 - 1e-9 and g.max() < 1.07
    e = np.hypot(sec[:, 1] / (MU * N), sec[:, 2] / M0)
    assert e.max() < 1.0 + 1e-9 and e.min() < 0.8  # diamond: 1/sqrt 2 at 45 degrees


# ------------------------------------------------------------------ eigen-directions
def _disc_load_polar(R: float, d: float) -> np.ndarray:
    """Applied load of CCW rotation about (d, 0), 0 < d < R, uniform disc, mu N = 1 (polar
    quadrature about the CoR, r_max = -d cos(phi) + sqrt(R^2 - d^2 sin^2 phi))."""

    def rm(p):
        return -d * np.cos(p) + np.sqrt(R * R - (d * np.sin(p)) ** 2)

    A = np.pi * R * R
    fy = quad(lambda p: np.cos(p) * rm(p) ** 2 / 2, -np.pi, np.pi, epsabs=1e-14)[0] / A
    m = quad(lambda p: d * np.cos(p) * rm(p) ** 2 / 2 + rm(p) ** 3 / 3, -np.pi, np.pi, epsabs=1e-14)[0] / A
    return np.array([0.0, fy, m])


def test_eigen_directions_disc() -> None:
    """Disc: pure rotation and pure translations are eigen-directions (symmetry); the mixed
    ones form a circle of CoRs whose radius d solves P_y L / M = q_y / q_w = -d / L with the
    polar-quadrature load (L = R / sqrt 2); d_ref = 0.6530 R."""
    R = 0.01
    P = ContactPatch.circle(R, 31)
    E = ls.eigen_directions(P, MU, N, char_length=R / np.sqrt(2), n_start=10)
    kinds = {e.kind for e in E}
    assert ls.MotionKind.ROTATION in kinds and ls.MotionKind.TRANSLATION in kinds
    for e in E:
        assert e.misalignment < 1e-6
        if e.kind is ls.MotionKind.ROTATION:
            np.testing.assert_allclose(e.direction, [0, 0, 1], atol=1e-7)
        if e.kind is ls.MotionKind.TRANSLATION:
            assert abs(e.direction[2]) < 1e-7
    L = R / np.sqrt(2)

    def g(d: float) -> float:
        Pl = _disc_load_polar(R, d)
        return Pl[1] * L / Pl[2] + d / L

    d_ref = brentq(g, 0.2 * R, 0.95 * R, xtol=1e-12)
    mixed = [np.hypot(*e.centre_of_rotation) for e in E if e.kind is ls.MotionKind.MIXED]
    assert len(mixed) >= 2
    np.testing.assert_allclose(mixed, d_ref, rtol=6e-3)  # boundary cells: 0.4% at n = 31


def test_eigen_directions_rectangle() -> None:
    """Rectangle: pure rotation about the centre is an eigen-direction (two mirror symmetries)
    and every returned translation has omega = 0 and P parallel to v."""
    P = ContactPatch.rectangle(0.03, 0.01, 9)
    E = ls.eigen_directions(P, MU, N, n_start=16)
    rot = [e for e in E if e.kind is ls.MotionKind.ROTATION]
    assert len(rot) == 1
    tr = [e for e in E if e.kind is ls.MotionKind.TRANSLATION]
    assert tr
    for e in tr:
        np.testing.assert_allclose(
            e.load[:2] / np.linalg.norm(e.load[:2]),
            e.direction[:2] / np.linalg.norm(e.direction[:2]),
            atol=1e-9,
        )


# ------------------------------------------------------------------ two-point bar
def test_bar_samples_are_minkowski_sums_of_rim_points() -> None:
    """Every sampled load is f_1 + f_2 with |f_i| = c on each support's friction circle:
    f_1x = (F_x - M/L)/2, f_2x = (F_x + M/L)/2 and F_y = +-sqrt(c^2 - f_1x^2) +-
    sqrt(c^2 - f_2x^2); hence gauge = 1 (on the limit surface)."""
    L = 1.5
    bar = two_point_bar(L)
    S = ls.sample_limit_surface(bar, MU, N, n=500, char_length=L)
    c = MU * N / 2
    f1 = (S.loads[:, 0] - S.loads[:, 2] / L) / 2
    f2 = (S.loads[:, 0] + S.loads[:, 2] / L) / 2
    a = np.sqrt(np.clip(c * c - f1 * f1, 0, None))
    b = np.sqrt(np.clip(c * c - f2 * f2, 0, None))
    best = np.min(
        [np.abs(S.loads[:, 1] - (s1 * a + s2 * b)) for s1, s2 in itertools.product((1, -1), repeat=2)], axis=0
    )
    assert np.all(np.abs(f1) <= c * (1 + 1e-12)) and np.all(np.abs(f2) <= c * (1 + 1e-12))
    assert best.max() < 1e-9 * c
    np.testing.assert_allclose(bar_gauge(S.loads, MU, N, L), 1.0, atol=1e-12)


def test_bar_sections_square_and_circle() -> None:
    """[F_x, M] section: |F_x| + |M|/L = mu N (a square); [F_y, M] section: a circle."""
    L = 1.0
    bar = two_point_bar(L)
    sq = ls.limit_surface_section(bar, MU, N, "FxM", n=100, char_length=L)
    np.testing.assert_allclose(np.abs(sq[:, 1]), 0.0, atol=1e-9)
    np.testing.assert_allclose(np.abs(sq[:, 0]) + np.abs(sq[:, 2]) / L, MU * N, rtol=1e-9)
    ci = ls.limit_surface_section(bar, MU, N, "FyM", n=100, char_length=L)
    np.testing.assert_allclose(np.hypot(ci[:, 1], ci[:, 2] / L), MU * N, rtol=1e-7)


def test_bar_has_four_facets_and_four_vertices() -> None:
    """Seed 001: 4 vertices (on the F_x and M axes) and 4 flat elliptical facets whose normals
    lie in the [M, F_x] plane: the normals are the rotations about the supports."""
    L = 1.0
    bar = two_point_bar(L)
    S = ls.sample_limit_surface(bar, MU, N, n=64, kind="grid", char_length=L)
    F = ls.detect_features(S)
    assert len(F.facet_areas) == 4
    assert len(F.vertices) == 4
    expected_normals = np.array([f.twist / np.linalg.norm(f.twist) for f in bar_facets(MU, N, L)])
    for nrm in F.facet_normals:
        assert np.max(expected_normals @ nrm) > 0.999
    V = bar_vertices(MU, N, L)
    for v in F.vertices:
        assert np.min(np.linalg.norm(V - v, axis=1)) < 1e-9 * MU * N


def test_bar_facet_is_convex_hull_of_approach_limits() -> None:
    """CoR -> support j along direction alpha: the stuck support's force tends to c times the
    unit velocity it would have, i.e. a rim point of facet j; the CoR-exactly-at-support load
    (stuck force 0) is the facet centre = mean of the rim points from opposite approaches."""
    L = 1.0
    bar = two_point_bar(L)
    for f in bar_facets(MU, N, L):
        yj = (L, -L)[f.stuck]
        s = f.sense
        centre = ls.applied_load(bar, f.twist, MU, N)
        np.testing.assert_allclose(centre, f.centre, atol=1e-12)
        for alpha in np.linspace(0, np.pi, 5):
            eps = 1e-9
            cs = [
                np.array([eps * np.cos(alpha + k * np.pi), yj + eps * np.sin(alpha + k * np.pi)])
                for k in (0, 1)
            ]
            loads = [ls.applied_load(bar, s * np.array([c[1], -c[0], 1.0]), MU, N) for c in cs]
            np.testing.assert_allclose(0.5 * (loads[0] + loads[1]), centre, atol=1e-7)
            rim = f.boundary(721)
            for ld in loads:
                assert np.min(np.linalg.norm(rim - ld, axis=1)) < 1e-2 * MU * N


def test_vertices_only_for_collinear_support() -> None:
    """Seed 001: vertices iff all support lies on one line. A line patch has the two
    vertices (0, +-mu N, 0) (every CoR on the line's axis outside the line); a disc and a
    rectangle have neither vertices nor facets."""
    Sl = ls.sample_limit_surface(ContactPatch.line(0.02, 15), MU, N, n=48, kind="grid")
    Fl = ls.detect_features(Sl)
    assert len(Fl.vertices) == 2 and len(Fl.facet_areas) == 0
    np.testing.assert_allclose(np.sort(Fl.vertices[:, 1]), [-MU * N, MU * N], rtol=1e-12)
    for P in (ContactPatch.circle(0.01, 11), ContactPatch.rectangle(0.02, 0.01, 11)):
        F = ls.detect_features(ls.sample_limit_surface(P, MU, N, n=40, kind="grid"))
        assert len(F.vertices) == 0 and len(F.facet_areas) == 0


def test_bad_input() -> None:
    P = ContactPatch.circle(0.01, 5)
    with pytest.raises(UnknownOptionError):
        ls.limit_surface_section(P, MU, N, plane="XY")
    with pytest.raises(UnknownOptionError):
        ls.unit_twists(10, 1.0, kind="random")
    with pytest.raises(MCPInputError):
        ls.unit_twists(2)
    with pytest.raises(MCPInputError):
        ls.sample_limit_surface(P, 0.0, N)
    with pytest.raises(MCPInputError):
        ls.sample_limit_surface(object(), MU, N)  # type: ignore[arg-type]
    with pytest.raises(ShapeError):
        ls.moment_function(P, np.zeros(3), np.zeros(2), MU, N)
    with pytest.raises(ShapeError):
        ls.PointContacts([0.0], [0.0, 1.0])
    with pytest.raises(MCPInputError):
        two_point_bar(-1.0)


def test_plot_helpers_return_figures() -> None:
    """Plot helpers draw without pyplot and return Figures with the expected axes."""
    from matplotlib.figure import Figure

    from mcpkit.models.friction import plots

    P = ContactPatch.nonconvex_a(0.02, 7)
    S = ls.sample_limit_surface(P, MU, N, n=200)
    figs = [
        plots.plot_patch(P, title="a"),
        plots.plot_cor_sweep(n=3),
        plots.plot_limit_surface_3d(S),
        plots.plot_ls_section(P, MU, N, "FxM", fit=ls.fit_ellipsoid(S), n=21),
        plots.plot_moment_function(P, 0.02, n=11),
        plots.plot_two_point_bar(),
    ]
    assert all(isinstance(f, Figure) for f in figs)
    assert len(figs[-1].axes) == 2
    sec_line = figs[3].axes[0].lines[0].get_xydata()
    assert sec_line.shape == (21, 2)
