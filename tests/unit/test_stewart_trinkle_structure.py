"""Structure of the Stewart–Trinkle step MCPs (seed 004 eqs 9, 15): sizes, rows, errors.

Rows are evaluated through ``MCP.evaluate`` (the CasADi lowering, no solver) at random points and
compared with the formulas written out by hand from eqs (9) and (15).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError
from mcpkit.models.stewart_trinkle import (
    Contact,
    LCPStep,
    LineSurface2D,
    NCPStep,
    Particle,
    PlanarBody,
    PlaneSurface,
    RigidBody3D,
    VoseParameters,
)
from mcpkit.models.stewart_trinkle.contact import contact_geometry

RNG = np.random.default_rng(4)


def cube_contacts(mu: float = 0.3, half: float = 1.0) -> list[Contact]:
    plane = PlaneSurface()
    return [Contact(plane, mu, np.array([sx, sy, -half])) for sx in (-half, half) for sy in (-half, half)]


@pytest.mark.parametrize(
    ("body", "contacts", "n_ncp"),
    [
        (Particle(), [Contact(PlaneSurface(), 0.3)], 3 + 4),
        (RigidBody3D(inertia_body=[1.0, 2.0, 3.0]), cube_contacts(), 6 + 4 * 4),
        (
            PlanarBody(),
            [Contact(LineSurface2D(), 0.3, [-1.0, -0.5]), Contact(LineSurface2D(), 0.3, [1.0, -0.5])],
            3 + 3 * 2,
        ),
    ],
)
def test_ncp_sizes(body, contacts, n_ncp):
    """NCP size: nv + nc*(lam_n, lam_t, [lam_o], sigma)."""
    assert NCPStep(body, contacts, 1e-3).mcp.n == n_ncp


@pytest.mark.parametrize("n_d", [3, 4, 8, 32])
def test_lcp_sizes(n_d):
    """LCP size: nv + nc*(1 + n_d + 1) (eq 15)."""
    st = LCPStep(RigidBody3D(), cube_contacts(), 1e-3, n_d=n_d)
    assert st.mcp.n == 6 + 4 * (2 + n_d)
    blocks = {b.name: b.size for b in st.mcp.blocks}
    assert blocks == {"lam_n": 4, "lam_f": 4 * n_d, "sigma": 4, "v": 6}


def _random_point(st, mcp):
    z = RNG.normal(size=mcp.n)
    x0 = st.initial_state([0.1, -0.2, 0.05], RNG.normal(size=3))
    p = st.parameters(0, 0.0, x0)
    return z, p, mcp.split(z)


def test_ncp_rows_match_eq9():
    """Rows of eq (9): EoM, (psi/h + Wn v), mu*bn*vt + bt*sigma, mu^2 bn^2 - bt^2 - bo^2."""
    tilt = PlaneSurface(point=[0, 0, -0.3], normal=[0.2, -0.1, 1.0])
    st = NCPStep(Particle(mass=2.0), [Contact(tilt, 0.4)], 1e-3)
    z, p, b = _random_point(st, st.mcp)
    F = st.mcp.split(st.mcp.evaluate(z, p))
    v, bn, bt, bo, sg = b["v"], b["lam_n"][0], b["lam_t"][0], b["lam_o"][0], b["sigma"][0]
    g = st.last_geometry
    vt = g.Wt[0] @ v - g.ut[0]
    vo = g.Wo[0] @ v - g.uo[0]
    np.testing.assert_allclose(F["sigma"][0], (0.4 * bn) ** 2 - bt**2 - bo**2, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(F["lam_t"][0], 0.4 * bn * vt + bt * sg, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(F["lam_o"][0], 0.4 * bn * vo + bo * sg, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(F["lam_n"][0], g.psi[0] / 1e-3 + g.Wn[0] @ v, rtol=1e-12, atol=1e-9)
    Mhat = p["Mhat"].reshape(3, 3)
    eom = Mhat @ v - p["b"] - g.Wn[0] * bn - g.Wt[0] * bt - g.Wo[0] * bo
    np.testing.assert_allclose(F["v"], eom, rtol=1e-12, atol=1e-9)


def test_lcp_rows_match_eq15():
    """Rows of eqs (13)-(14): D_j v - u_j + sigma and mu*bn - sum(bf)."""
    st = LCPStep(Particle(), [Contact(PlaneSurface(), 0.5)], 1e-3, n_d=6)
    z, p, b = _random_point(st, st.mcp)
    F = st.mcp.split(st.mcp.evaluate(z, p))
    g = st.last_geometry
    for j, phi in enumerate(2 * np.pi * np.arange(6) / 6):
        D = math.cos(phi) * g.Wt[0] + math.sin(phi) * g.Wo[0]
        expect = D @ b["v"] - (math.cos(phi) * g.ut[0] + math.sin(phi) * g.uo[0]) + b["sigma"][0]
        np.testing.assert_allclose(F["lam_f"][j], expect, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(F["sigma"][0], 0.5 * b["lam_n"][0] - b["lam_f"].sum(), rtol=1e-12, atol=1e-12)


def test_gap_and_wrench_of_tilted_plane():
    """psi = n.(x - p) for a particle; Wn = n; tangents orthonormal to n."""
    n = np.array([0.3, 0.1, 1.0])
    n /= np.linalg.norm(n)
    surf = PlaneSurface(point=[0.0, 0.0, 1.0], normal=n)
    q = np.array([0.5, -0.2, 2.0])
    g = contact_geometry(Particle(), q, [Contact(surf, 0.2)], 0.0)
    np.testing.assert_allclose(g.psi[0], n @ (q - [0, 0, 1.0]), rtol=1e-14)
    np.testing.assert_allclose(g.Wn[0], n, rtol=1e-14)
    B = np.vstack([g.Wn[0], g.Wt[0], g.Wo[0]])
    np.testing.assert_allclose(B @ B.T, np.eye(3), atol=1e-14)


def test_rigid_body_wrench_is_r_cross_n():
    """Eq (7): W_n = (n, (R r_b) x n) for a rotated 3-D body."""
    body = RigidBody3D()
    ang = 0.4
    q = np.array([0, 0, 2.0, math.cos(ang / 2), 0, math.sin(ang / 2), 0])  # rotation about y
    rb = np.array([1.0, 0.5, -1.0])
    g = contact_geometry(body, q, [Contact(PlaneSurface(), 0.3, rb)], 0.0)
    r = body.rotation(q) @ rb
    np.testing.assert_allclose(g.Wn[0], np.concatenate([[0, 0, 1.0], np.cross(r, [0, 0, 1.0])]), atol=1e-14)
    np.testing.assert_allclose(g.psi[0], 2.0 + r[2], rtol=1e-14)


def test_quaternion_stays_normalised():
    """q_{l+1} = q_l + h G v is renormalised; R stays orthonormal."""
    body = RigidBody3D()
    q = np.array([0, 0, 0, 1.0, 0, 0, 0])
    for _ in range(200):
        q = body.integrate(q, np.array([0.1, 0, 0, 3.0, -2.0, 5.0]), 1e-2)
    assert abs(np.linalg.norm(q[3:]) - 1.0) < 1e-14
    R = body.rotation(q)
    np.testing.assert_allclose(R @ R.T, np.eye(3), atol=1e-13)


def test_G_maps_angular_velocity_to_quaternion_rate():
    """J(q) of seed 004 §2.1 equals the Hamilton product (1/2)(0, w) * e for a world-frame w."""
    from mcpkit.models.stewart_trinkle.bodies import quat_mul, quat_rate_matrix

    e = RNG.normal(size=4)
    e /= np.linalg.norm(e)
    w = RNG.normal(size=3)
    np.testing.assert_allclose(
        quat_rate_matrix(e) @ w, 0.5 * quat_mul(np.concatenate([[0], w]), e), atol=1e-14
    )


@pytest.mark.parametrize(
    ("make", "err"),
    [
        (lambda: Contact(PlaneSurface(), -0.1), MCPInputError),
        (lambda: Contact(PlaneSurface(), float("nan")), NonFiniteError),
        (lambda: Particle(mass=-1.0), MCPInputError),
        (lambda: Particle(mass=float("inf")), NonFiniteError),
        (lambda: RigidBody3D(inertia_body=[[1, 2, 0], [0, 1, 0], [0, 0, 1]]), MCPInputError),
        (lambda: RigidBody3D(inertia_body=[1.0, 2.0]), ShapeError),
        (lambda: PlaneSurface(normal=[0.0, 0.0, 0.0]), MCPInputError),
        (lambda: NCPStep(Particle(), [Contact(PlaneSurface(), 0.3)], 0.0), MCPInputError),
        (lambda: NCPStep(Particle(), [Contact(PlaneSurface(), 0.3)], float("nan")), NonFiniteError),
        (lambda: NCPStep(Particle(), [], 1e-3), MCPInputError),
        (lambda: NCPStep(Particle(), [Contact(LineSurface2D(), 0.3)], 1e-3), ShapeError),
        (lambda: LCPStep(Particle(), [Contact(PlaneSurface(), 0.3)], 1e-3, n_d=2), MCPInputError),
        (lambda: LCPStep(PlanarBody(), [Contact(LineSurface2D(), 0.3)], 1e-3, n_d=4), MCPInputError),
        (lambda: LCPStep(Particle(), [Contact(PlaneSurface(), 0.3)], 1e-3, n_d=4.5), MCPInputError),
        (lambda: VoseParameters(depth=-5.0), MCPInputError),
        (lambda: VoseParameters(alpha=float("nan")), NonFiniteError),
    ],
)
def test_bad_input_raises_typed_errors(make, err):
    with pytest.raises(err):
        make()


def test_bad_state_raises():
    st = NCPStep(Particle(), [Contact(PlaneSurface(), 0.3)], 1e-3)
    with pytest.raises(ShapeError):
        st.initial_state([0, 0], [0, 0, 0])
    with pytest.raises(NonFiniteError):
        st.initial_state([0, 0, np.nan])
    with pytest.raises(ShapeError):
        st.parameters(0, 0.0, np.zeros(5))
