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


def _loaded_cells(P: ContactPatch, size: float, n: int) -> set[tuple[int, int]]:
    """(row, column) of the loaded cells in image order: row 0 at the top (+y), column 0 at
    the left (-x), the indexing of seed 003's 21 x 21 pressure grids."""
    h = size / n
    col = np.rint((P.x + size / 2) / h - 0.5).astype(int)
    row = n - 1 - np.rint((P.y + size / 2) / h - 0.5).astype(int)
    return set(zip(row.tolist(), col.tolist(), strict=True))


def test_nonconvex_shapes_are_seed003_grids() -> None:
    """Seed 003 Fig. 8 / Figs 20-21 non-convex surfaces on the paper's 21 x 21 grid over
    0.02 x 0.02 m (Table III), as in the authors' code: "non-convex 1" loads rows 9-11 x
    columns 0-2 and 18-20; "non-convex 2" loads rows 9-11 x columns 0-13 and rows 4-17 x
    columns 18-20; uniform pressure (equal weights)."""
    s, n = 0.02, 21
    A = ContactPatch.nonconvex_a(s, n)
    exp_a = {(r, c) for r in range(9, 12) for c in [*range(0, 3), *range(18, 21)]}
    assert _loaded_cells(A, s, n) == exp_a
    np.testing.assert_allclose(A.weights, 1.0 / len(exp_a), rtol=1e-12)
    B = ContactPatch.nonconvex_b(s, n)
    exp_b = {(r, c) for r in range(9, 12) for c in range(0, 14)}
    exp_b |= {(r, c) for r in range(4, 18) for c in range(18, 21)}
    assert _loaded_cells(B, s, n) == exp_b
    np.testing.assert_allclose(B.weights, 1.0 / len(exp_b), rtol=1e-12)
    # CoP by hand: bars of equal area 2 s^2/21 with centroids (-s/6, 0) and (3s/7, -s/42)
    np.testing.assert_allclose(A.centre_of_pressure, [0.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(B.centre_of_pressure, [11 * s / 84, -s / 84], rtol=1e-12)


@pytest.mark.parametrize("ctor", [ContactPatch.nonconvex_a, ContactPatch.nonconvex_b])
def test_nonconvex_shapes_are_resolution_independent(ctor) -> None:
    """The shape is fixed in physical units: on a 42 x 42 grid, each 2 x 2 block carries the
    weight of the 21 x 21 cell it refines; on a 20 x 20 grid (not aligned with the pads)
    the boundary cells get exact area fractions, so the total area is unchanged."""
    s = 0.03
    c21, c42 = ctor(s, 21), ctor(s, 42)
    g21 = np.zeros((21, 21))
    g42 = np.zeros((42, 42))
    for P, g, n in ((c21, g21, 21), (c42, g42, 42)):
        ix = np.rint((P.x + s / 2) / (s / n) - 0.5).astype(int)
        iy = np.rint((P.y + s / 2) / (s / n) - 0.5).astype(int)
        g[ix, iy] = P.weights
    np.testing.assert_allclose(g42.reshape(21, 2, 21, 2).sum(axis=(1, 3)), g21, atol=1e-15)
    # uniform pressure: a fully covered cell has weight (s/n)^2 / total area, so the total
    # area follows from the largest weight on either grid
    c20 = ctor(s, 20)
    full21 = c21.weights.max() / (s / 21) ** 2  # 1 / total area
    full20 = c20.weights.max() / (s / 20) ** 2
    np.testing.assert_allclose(full20, full21, rtol=1e-12)


def _rect_quadrature_load(rects, ratio: float, size: float, cor, cop) -> np.ndarray:
    """Load of CCW rotation about ``cor`` (patch frame) on rectangles with pressure
    1 + (ratio - 1)(x + size/2)/size, by scipy dblquad of the Coulomb integrand, M about
    ``cop``."""
    from scipy.integrate import dblquad

    cx, cy = cor

    def pres(x):
        return 1.0 + (ratio - 1.0) * (x + size / 2) / size

    def integrand(k):
        def f(y, x):
            X, Y = x - cx, y - cy
            r = np.hypot(X, Y)
            ux, uy = -Y / r, X / r
            return pres(x) * (ux, uy, (x - cop[0]) * uy - (y - cop[1]) * ux)[k]

        return f

    tot = sum(dblquad(lambda y, x: pres(x), a, b, c, d)[0] for a, b, c, d in rects)
    ref = [
        sum(dblquad(integrand(k), a, b, c, d, epsabs=1e-16, epsrel=1e-11)[0] for a, b, c, d in rects)
        for k in range(3)
    ]
    return -MU * N * np.array(ref) / tot


def test_nonconvex_loads_against_direct_quadrature() -> None:
    """EXACT loads of both non-convex shapes (uniform pressure, as in seed 003) vs scipy
    dblquad of the Coulomb integrand over each rectangle: rotation about the CoP
    (M = -mu N <|rho|>), about points in the gap between the bars and outside the patch
    (smooth integrands). The cells represent the uniform shapes exactly, so the only error is
    round-off (atol 1e-12 of mu N, mu N s). With a pressure gradient (ratio 0.25) the cells
    hold a piecewise-constant pressure: error O(h^2), measured 3.7e-4 at n = 21."""
    s = 0.02
    rects_a = [(-s / 2, -5 * s / 14, -s / 14, s / 14), (5 * s / 14, s / 2, -s / 14, s / 14)]
    rects_b = [(-s / 2, s / 6, -s / 14, s / 14), (5 * s / 14, s / 2, -5 * s / 14, 13 * s / 42)]
    scale = np.array([MU * N, MU * N, MU * N * s])
    cases = [
        (ContactPatch.nonconvex_a, rects_a, (0.0, 0.0)),
        (ContactPatch.nonconvex_a, rects_a, (0.002, 0.004)),
        (ContactPatch.nonconvex_b, rects_b, (0.0052, 0.004)),
        (ContactPatch.nonconvex_b, rects_b, (0.02, -0.001)),
    ]
    for ctor, rects, cor in cases:
        P = ctor(s, 21)
        cop = P.centre_of_pressure
        ref = _rect_quadrature_load(rects, 1.0, s, cor, cop)
        load = P.friction_load(_rot_twist(cor[0] - cop[0], cor[1] - cop[1]), MU, N)
        np.testing.assert_allclose(load / scale, ref / scale, atol=1e-12)
    err = []
    for n in (21, 42):
        P = ContactPatch.nonconvex_b(s, n, ratio=0.25)
        cop = P.centre_of_pressure
        cor = (-0.003, -0.0045)
        ref = _rect_quadrature_load(rects_b, 0.25, s, cor, cop)
        load = P.friction_load(_rot_twist(cor[0] - cop[0], cor[1] - cop[1]), MU, N)
        err.append(np.max(np.abs((load - ref) / scale)))
    assert err[0] < 5e-4
    assert 3.5 < err[0] / err[1] < 4.5  # second order in the cell size


def test_array_and_callable_constructors_agree() -> None:
    """Weights are normalised, CoP equals sum w (x, y), from_array/from_callable agree."""
    f = lambda x, y: 1.0 + 50.0 * x  # noqa: E731
    Pc = ContactPatch.from_callable(f, (-0.01, 0.01), (-0.005, 0.005), 8)
    np.testing.assert_allclose(Pc.weights.sum(), 1.0, rtol=1e-14)
    dx, dy = 0.02 / 8, 0.01 / 8
    xs = -0.01 + (np.arange(8) + 0.5) * dx
    ys = -0.005 + (np.arange(8) + 0.5) * dy
    X, Y = np.meshgrid(xs, ys, indexing="ij")
    Pa = ContactPatch.from_array(f(X, Y), dx, dy, origin=(xs[0], ys[0]))
    np.testing.assert_allclose(Pa.centre_of_pressure, Pc.centre_of_pressure, atol=1e-15)
    np.testing.assert_allclose(
        Pc.centre_of_pressure, [np.sum(f(X, Y) * X) / np.sum(f(X, Y)), 0.0], atol=1e-15
    )
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
    np.testing.assert_allclose(P.friction_load(7.0 * T, 2 * MU, N), 2 * batch, rtol=1e-12, atol=1e-14)


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
