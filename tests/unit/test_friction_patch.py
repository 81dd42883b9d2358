"""Tests of ContactPatch and its Coulomb friction load against closed forms.

Convention: ``friction_load`` is the load ON the patch, ``-mu * int p v_hat`` (seed 003
eqs 7-8); a counter-clockwise rotation (omega > 0) therefore gives M < 0.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import quad

from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError, UnknownOptionError
from mcpkit.models.friction.patch import ContactPatch, LoadMethod

MU, N = 0.7, 3.0


def _rot_twist(xc: float, yc: float, omega: float = 1.0) -> np.ndarray:
    """Twist (v of the CoP, omega) of a rotation about (xc, yc): v = omega z x (0 - c)."""
    return np.array([omega * yc, -omega * xc, omega])


def _polar_load_convex(rmax, xc: float, yc: float, area: float, pts=None) -> np.ndarray:
    r"""Load of a uniform convex patch in CCW rotation about an interior point c.

    In polar coordinates (r, phi) about c the unit velocity is (-sin phi, cos phi) and
    rho = c + r e(phi), so with r_max(phi) the distance to the boundary:
    F = -mu N/A int (-sin, cos) r_max^2/2 dphi,
    M = -mu N/A int [c . e r_max^2/2 + r_max^3/3] dphi.
    """

    def q(f):
        return quad(f, -np.pi, np.pi, points=pts, limit=400, epsabs=1e-14, epsrel=1e-12)[0]

    fx = q(lambda p: -np.sin(p) * rmax(p) ** 2 / 2)
    fy = q(lambda p: np.cos(p) * rmax(p) ** 2 / 2)
    m = q(lambda p: (xc * np.cos(p) + yc * np.sin(p)) * rmax(p) ** 2 / 2 + rmax(p) ** 3 / 3)
    return -MU * N / area * np.array([fx, fy, m])


def test_disc_pure_rotation_closed_form() -> None:
    """Uniform disc about its centre: M = -mu N <r> = -(2/3) mu N R (<r> = 2R/3)."""
    R = 0.01
    for n, rtol in ((21, 4e-3), (101, 3e-4)):
        P = ContactPatch.circle(R, n)
        load = P.friction_load([0.0, 0.0, 2.5], MU, N)
        np.testing.assert_allclose(load[2], -2.0 / 3.0 * MU * N * R, rtol=rtol)
        np.testing.assert_allclose(load[:2], 0.0, atol=1e-12)


@pytest.mark.parametrize(
    "patch",
    [
        ContactPatch.circle(0.01, 15),
        ContactPatch.rectangle(0.03, 0.01, 9),
        ContactPatch.line(0.02, 7),
        ContactPatch.nonconvex_a(0.02, 11),
        ContactPatch.nonconvex_b(0.02, 11),
        ContactPatch.hertz(6e-3, 2.0, 11),
    ],
)
def test_pure_translation_every_shape(patch: ContactPatch) -> None:
    """Translation: every cell slides along -v_hat, so F = -mu N v_hat and, about the CoP,
    M = -mu N (sum w rho) x v_hat = 0."""
    v = np.array([0.3, -0.4, 0.0])
    load = patch.friction_load(v, MU, N)
    np.testing.assert_allclose(load[:2], -MU * N * v[:2] / 0.5, rtol=1e-12)
    np.testing.assert_allclose(load[2], 0.0, atol=1e-14)


@pytest.mark.parametrize("c", [(0.003, 0.0), (0.004, -0.005), (-0.0071, 0.0052)])
def test_disc_general_centre_of_rotation(c: tuple[float, float]) -> None:
    """Disc, CoR at distance d < R: r_max(phi) = -c.e + sqrt(R^2 - (c x e)^2), polar quadrature
    of the closed-form integrand vs the patch (fractional boundary cells, n = 201)."""
    R = 0.01
    xc, yc = c

    def rmax(p):
        ce = xc * np.cos(p) + yc * np.sin(p)
        cxe = xc * np.sin(p) - yc * np.cos(p)
        return -ce + np.sqrt(R * R - cxe * cxe)

    ref = _polar_load_convex(rmax, xc, yc, np.pi * R * R)
    load = ContactPatch.circle(R, 201).friction_load(_rot_twist(xc, yc), MU, N)
    scale = np.array([MU * N, MU * N, MU * N * R])
    np.testing.assert_allclose(load / scale, ref / scale, atol=1e-4)


def test_square_pure_rotation_exact_any_grid() -> None:
    """Uniform square of side a about its centre: <r> = a (sqrt2 + ln(1 + sqrt2)) / 6.
    The rectangle is represented exactly by its cells, so the EXACT method is exact for any n
    (including odd n where the CoR is a cell centre, and even n where it is a grid corner)."""
    a = 0.02
    expected = -MU * N * a * (np.sqrt(2.0) + np.log(1.0 + np.sqrt(2.0))) / 6.0
    for n in (1, 2, 3, 6, 7):
        load = ContactPatch.rectangle(a, a, n).friction_load([0.0, 0.0, 1.0], MU, N)
        np.testing.assert_allclose(load[2], expected, rtol=1e-12)
    # the midpoint rule has an O(h) error here
    mid = ContactPatch.rectangle(a, a, 7).friction_load([0.0, 0.0, 1.0], MU, N, method="midpoint")
    assert abs(mid[2] / expected - 1.0) > 5e-3


@pytest.mark.parametrize("c", [(0.0, 0.0), (0.004, 0.001), (-0.011, 0.0035), (0.0149, -0.0049)])
def test_rectangle_general_cor_polar_quadrature(c: tuple[float, float]) -> None:
    """Uniform 0.03 x 0.01 rectangle, CoR inside: r_max(phi) = min over the 4 edges of the ray
    distance; polar quadrature (breakpoints at the corner angles) vs EXACT on a 4 x 4 grid."""
    w, h = 0.03, 0.01
    xc, yc = c

    def rmax(p):
        cp, sp = np.cos(p), np.sin(p)
        ts = []
        if cp > 0:
            ts.append((w / 2 - xc) / cp)
        if cp < 0:
            ts.append((-w / 2 - xc) / cp)
        if sp > 0:
            ts.append((h / 2 - yc) / sp)
        if sp < 0:
            ts.append((-h / 2 - yc) / sp)
        return min(ts)

    corners = [np.arctan2(sy * h / 2 - yc, sx * w / 2 - xc) for sx in (-1, 1) for sy in (-1, 1)]
    ref = _polar_load_convex(rmax, xc, yc, w * h, pts=sorted(corners))
    load = ContactPatch.rectangle(w, h, 4).friction_load(_rot_twist(xc, yc), MU, N)
    np.testing.assert_allclose(load, ref, rtol=1e-8, atol=1e-12)


def test_line_cor_sweep_has_no_steps() -> None:
    """Ideal uniform line of length L, CCW rotation about (x_c, 0), |x_c| <= L/2:
    v_hat_y = sign(x - x_c) gives F_y = 2 mu N x_c / L and M = -mu N (L/4 - x_c^2 / L).
    EXACT matches at every x_c (cell centres and edges included) with only 5 cells; the
    midpoint rule (seed 003 eq 21) shows the steps of seed 003 Fig. 10."""
    L = 0.02
    P = ContactPatch.line(L, 5)
    xs = np.linspace(-L / 2, L / 2, 401)
    T = np.stack([np.zeros_like(xs), -xs, np.ones_like(xs)], axis=1)
    load = P.friction_load(T, MU, N)
    np.testing.assert_allclose(load[:, 1], 2 * MU * N * xs / L, atol=1e-12)
    np.testing.assert_allclose(load[:, 2], -MU * N * (L / 4 - xs**2 / L), atol=1e-14)
    mid = P.friction_load(T, MU, N, method=LoadMethod.MIDPOINT)
    assert np.max(np.abs(mid[:, 1] - 2 * MU * N * xs / L)) > 0.1 * MU * N
    bil = P.friction_load(T, MU, N, method="bilinear")
    # bilinear (seed 003 eq 23) is continuous: no jump larger than the slope times the step
    assert np.max(np.abs(np.diff(bil[:, 1]))) < 5 * 2 * MU * N * (xs[1] - xs[0]) / L
    assert np.max(np.abs(np.diff(mid[:, 1]))) > 0.3 * MU * N


def test_line_with_width_matches_thin_rectangle_limit() -> None:
    """A line of small width tends to the ideal line: same closed form with O(width^2/L^2)."""
    L = 0.02
    P = ContactPatch.line(L, 5, width=L * 1e-3)
    load = P.friction_load(_rot_twist(0.003, 0.0), MU, N)
    np.testing.assert_allclose(load[1], 2 * MU * N * 0.003 / L, rtol=1e-5)


def test_hertz_distribution_closed_forms() -> None:
    """Eqs 45-46 with k = 2: a = a1 fN^(1/3), p ~ sqrt(1 - r^2/a^2), so <r^2> = 0.4 a^2 and
    the pure-rotation moment is mu N <r> = mu N 3 pi a / 16."""
    a1, fN = 6e-3, 3.0
    a = a1 * fN ** (1.0 / 3.0)
    P = ContactPatch.hertz(a1, fN, 101)
    np.testing.assert_allclose(P.radius_of_gyration, np.sqrt(0.4) * a, rtol=2e-3)
    M = P.friction_load([0, 0, 1.0], 1.0, fN)[2]
    np.testing.assert_allclose(M, -3 * np.pi * a / 16 * fN, rtol=2e-3)
    # k = 2 fN changes the distribution (flatter for fN > 1): larger <r>
    P2 = ContactPatch.hertz(a1, fN, 101, k_scales_with_force=True)
    assert P2.radius_of_gyration > P.radius_of_gyration


def test_linear_gradient_centre_of_pressure() -> None:
    """p ~ 1 + (r - 1) u on u = (x + w/2)/w in [0, 1]: x_cop = w (r - 1) / (6 (1 + r))."""
    w, r = 0.02, 0.2
    for h in (0.0, 0.005):
        P = ContactPatch.linear_gradient(w, h, 201, ratio=r)
        np.testing.assert_allclose(P.centre_of_pressure[0], w * (r - 1) / (6 * (1 + r)), rtol=1e-4)
        np.testing.assert_allclose(P.centre_of_pressure[1], 0.0, atol=1e-12)


def test_nonconvex_shapes_and_constructors() -> None:
    """Weights are normalised, CoP equals sum w (x, y), from_array/from_callable agree."""
    for P in (ContactPatch.nonconvex_a(), ContactPatch.nonconvex_b()):
        np.testing.assert_allclose(P.weights.sum(), 1.0, rtol=1e-14)
        assert np.all(P.weights >= 0)
    A = ContactPatch.nonconvex_a(0.02, 10)
    # L-shape: the empty quadrant is x > 0, y > 0
    assert not np.any((A.x > 0) & (A.y > 0))
    f = lambda x, y: 1.0 + 50.0 * x  # noqa: E731
    Pc = ContactPatch.from_callable(f, (-0.01, 0.01), (-0.005, 0.005), 8)
    dx, dy = 0.02 / 8, 0.01 / 8
    xs = -0.01 + (np.arange(8) + 0.5) * dx
    ys = -0.005 + (np.arange(8) + 0.5) * dy
    X, Y = np.meshgrid(xs, ys, indexing="ij")
    Pa = ContactPatch.from_array(f(X, Y), dx, dy, origin=(xs[0], ys[0]))
    np.testing.assert_allclose(Pa.centre_of_pressure, Pc.centre_of_pressure, atol=1e-15)
    t = np.array([0.1, 0.2, 30.0])
    np.testing.assert_allclose(Pa.friction_load(t, MU, N), Pc.friction_load(t, MU, N), rtol=1e-12)


def test_vectorised_equals_loop_and_scaling() -> None:
    """(K, 3) input equals row-by-row evaluation; load is linear in mu N and 0-homogeneous
    in the twist (rate independence)."""
    P = ContactPatch.nonconvex_b(0.02, 9)
    rng = np.random.default_rng(0)
    T = rng.normal(size=(20, 3)) * np.array([1.0, 1.0, 100.0])
    T[3] = [0.0, 0.0, 0.0]
    batch = P.friction_load(T, MU, N)
    loop = np.array([P.friction_load(t, MU, N) for t in T])
    np.testing.assert_allclose(batch, loop, rtol=1e-13, atol=1e-16)
    np.testing.assert_allclose(batch[3], 0.0)
    np.testing.assert_allclose(P.friction_load(7.0 * T, 2 * MU, N), 2 * batch, rtol=1e-12)


def test_bad_input_raises_typed_errors() -> None:
    P = ContactPatch.circle(0.01, 5)
    with pytest.raises(MCPInputError):
        P.friction_load([1, 0, 0], -0.1, 1.0)
    with pytest.raises(MCPInputError):
        P.friction_load([1, 0, 0], 0.1, -1.0)
    with pytest.raises(NonFiniteError):
        P.friction_load([np.nan, 0, 0], 0.1, 1.0)
    with pytest.raises(ShapeError):
        P.friction_load([1, 0], 0.1, 1.0)
    with pytest.raises(ShapeError):
        P.friction_load(np.zeros((2, 2, 3)), 0.1, 1.0)
    with pytest.raises(UnknownOptionError):
        P.friction_load([1, 0, 0], 0.1, 1.0, method="trapezoid")
    with pytest.raises(MCPInputError):
        ContactPatch.circle(-1.0)
    with pytest.raises(MCPInputError):
        ContactPatch.circle(0.01, n=0)
    with pytest.raises(NonFiniteError):
        ContactPatch.rectangle(np.inf, 1.0)
    with pytest.raises(ShapeError):
        ContactPatch.from_array(np.ones(4), 0.1, 0.1)
    with pytest.raises(MCPInputError):
        ContactPatch([0.0, 1.0], [0.0, 0.0], [1.0, -1.0], (0.1, 0.1))
    with pytest.raises(ShapeError):
        ContactPatch([0.0, 1.0], [0.0], [1.0, 1.0], (0.1, 0.1))
    with pytest.raises(MCPInputError):
        ContactPatch.hertz(6e-3, 0.0)


def test_vanishing_angular_rate_tends_to_translation() -> None:
    """omega -> 0 (CoR -> infinity, even subnormal omega) gives the translation load
    F = -mu N v_hat, M = 0, without overflow."""
    P = ContactPatch.nonconvex_a(0.02, 7)
    v = np.array([0.6, 0.8])
    for w in (1e-310, 1e-200, 1e-12):
        load = P.friction_load([v[0], v[1], w], MU, N)
        np.testing.assert_allclose(load[:2], -MU * N * v, rtol=1e-10)
        assert abs(load[2]) < 1e-8 * MU * N * 0.02
