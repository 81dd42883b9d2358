"""Pile scene (issue 28): contact detection, frames, the contact Jacobian and the FCLIB writer."""

from __future__ import annotations

import numpy as np
import pytest

from mcpkit.engines.newton_contact import siconos_error, solve_alart_curnier
from mcpkit.errors import MCPInputError, ProblemFileError
from mcpkit.formats.fclib_hdf5 import read_fclib_local, write_fclib_local
from mcpkit.models.pile import (
    Box,
    carry_reactions,
    contact_frames,
    contact_jacobian,
    detect_contacts,
    make_pile,
)


def _rotate(p: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Rodrigues rotation of ``p`` by the rotation vector ``w``."""
    th = np.linalg.norm(w)
    if th == 0:
        return p
    k = w / th
    return p * np.cos(th) + np.cross(k, p) * np.sin(th) + k * (k @ p) * (1 - np.cos(th))


def test_detection_by_hand() -> None:
    box = Box(1.0, 1.0)
    x = np.array([[0.5, 0.5, 0.1], [0.5, 0.5, 0.305], [0.05, 0.5, 0.6], [0.5, 0.9, 0.6]])
    radii = np.array([0.1, 0.1, 0.05, 0.05])
    c = detect_contacts(x, radii, box, margin=0.01)
    got = {k: g for k, g in zip(c.keys, c.gap.tolist(), strict=True)}
    # sphere 0 on the floor (gap 0), spheres 0-1 (gap 0.005), sphere 2 on wall x0 (gap 0); sphere 3
    # is 0.05 from wall y1 (beyond the margin) and far from everything else
    assert set(got) == {(0, -1), (0, 1), (2, -2)}
    assert got[(0, -1)] == pytest.approx(0.0, abs=1e-15)
    assert got[(0, 1)] == pytest.approx(0.005)
    k = c.keys.index((0, 1))
    np.testing.assert_allclose(c.frame[k, 0], [0, 0, -1])  # from sphere 1 to sphere 0
    np.testing.assert_allclose(c.point[k], [0.5, 0.5, 0.2025])
    wide = detect_contacts(x, radii, box, margin=0.06)
    assert (3, -5) in wide.keys  # the y1 wall, normal -e_y


def test_detection_matches_brute_force() -> None:
    rng = np.random.default_rng(3)
    box = Box(0.6, 0.5)
    x = rng.uniform([0, 0, 0], [0.6, 0.5, 0.4], (60, 3))
    radii = rng.uniform(0.03, 0.07, 60)
    margin = 0.02
    c = detect_contacts(x, radii, box, margin)
    want = set()
    for a in range(60):
        for b in range(a + 1, 60):
            if np.linalg.norm(x[a] - x[b]) < radii[a] + radii[b] + margin:
                want.add((a, b))
        for k, g in enumerate([x[a, 2], x[a, 0], 0.6 - x[a, 0], x[a, 1], 0.5 - x[a, 1]]):
            if g - radii[a] < margin:
                want.add((a, -1 - k))
    assert set(c.keys) == want
    for (a, b), g, n, p in zip(c.keys, c.gap, c.frame[:, 0], c.point, strict=True):
        if b >= 0:  # the gap is the distance between the surfaces along n
            assert g == pytest.approx(np.linalg.norm(x[a] - x[b]) - radii[a] - radii[b])
            np.testing.assert_allclose(p - n * g / 2, x[b] + radii[b] * n, atol=1e-14)


def test_frames_orthonormal_right_handed() -> None:
    rng = np.random.default_rng(0)
    n = rng.normal(size=(200, 3))
    n[:5] = [[1, 0, 0], [-1, 0, 0], [0, 0, 1], [0.95, 0.1, 0], [0, -1, 0]]
    n /= np.linalg.norm(n, axis=1)[:, None]
    E = contact_frames(n)
    np.testing.assert_allclose(E[:, 0], n)
    np.testing.assert_allclose(E @ E.transpose(0, 2, 1), np.broadcast_to(np.eye(3), E.shape), atol=1e-14)
    np.testing.assert_allclose(np.cross(E[:, 1], E[:, 2]), n, atol=1e-14)


def test_jacobian_matches_material_point_velocities() -> None:
    """H^T nu is the relative velocity of the material points at the contact point, in the frame:
    central finite differences of the points moved rigidly with the bodies over a time eps."""
    rng = np.random.default_rng(1)
    pile = make_pile(30, seed=2)
    x, radii = pile.x, pile.radii
    x = x + rng.normal(0, 0.004, x.shape)  # some overlaps and gaps
    c = detect_contacts(x, radii, pile.box, margin=0.03)
    assert c.nc > 20 and (c.b >= 0).any() and (c.b < 0).any()
    H = contact_jacobian(c, x)
    nu = rng.normal(size=(30, 6))
    u = (H.T @ nu.reshape(-1)).reshape(-1, 3)
    eps = 1e-6

    def material(body: int, p: np.ndarray, s: float) -> np.ndarray:
        if body < 0:
            return p  # planes are static
        return x[body] + s * nu[body, :3] + _rotate(p - x[body], s * nu[body, 3:])

    for k, (a, b) in enumerate(c.keys):
        p = c.point[k]
        rel = lambda s, a=a, b=b, p=p: material(a, p, s) - material(b, p, s)  # noqa: E731
        fd = (rel(eps) - rel(-eps)) / (2 * eps)
        np.testing.assert_allclose(u[k], c.frame[k] @ fd, rtol=1e-6, atol=1e-8)
    # the normal rows of spheres have no angular part; the tangential rows do (rolling)
    Hd = H.toarray().reshape(30, 6, -1)
    assert np.abs(Hd[:, 3:, 0::3]).max() < 1e-15
    assert np.abs(Hd[:, 3:, 1::3]).max() > 0.01


def test_local_problem_and_warm_start_transport() -> None:
    pile = make_pile(12, seed=4)
    for _ in range(3):
        lp = pile.local_problem()
        pile.advance(lp, np.zeros(3 * lp.nc))
    lp = pile.local_problem()
    H, minv = lp.H.toarray(), pile.inverse_mass
    np.testing.assert_allclose(lp.W, H.T @ np.diag(minv) @ H, atol=1e-12)
    np.testing.assert_allclose(lp.W, lp.W.T, atol=1e-12)
    assert lp.declare().name == "fclib_quadratic_cone"
    # reactions carried to the same contacts with rotated frames keep their world value
    rng = np.random.default_rng(0)
    r = rng.normal(size=3 * lp.nc)
    c = lp.contacts
    flipped = type(c)(c.a, c.b, c.gap, c.point, c.frame[:, [0, 2, 1]] * np.array([1, -1, 1])[None, :, None])
    r0, matched = carry_reactions(c, r, flipped)
    assert matched == c.nc
    world = np.einsum("cki,ck->ci", c.frame, r.reshape(-1, 3))
    np.testing.assert_allclose(np.einsum("cki,ck->ci", flipped.frame, r0.reshape(-1, 3)), world, atol=1e-14)


def test_fclib_writer_round_trip(tmp_path) -> None:
    pile = make_pile(15, seed=1)
    for _ in range(6):
        lp = pile.local_problem()
        res = solve_alart_curnier(lp.W, lp.q, lp.mu)
        pile.advance(lp, res.r)
    assert lp.nc > 10 and res.solved
    path = write_fclib_local(tmp_path / "step.hdf5", lp.W, lp.q, lp.mu, r=res.r, u=res.u, title="pile")
    d = read_fclib_local(path)
    np.testing.assert_array_equal(d.W, lp.W)
    np.testing.assert_array_equal(d.q, lp.q)
    np.testing.assert_array_equal(d.mu, lp.mu)
    assert d.title == "pile"
    err = siconos_error(d.q, d.mu, d.r_ref, d.W @ d.r_ref + d.q)
    assert err == pytest.approx(res.siconos_error, rel=1e-6, abs=1e-15) and err <= 1e-8
    np.testing.assert_allclose(d.u_ref, d.W @ d.r_ref + d.q, atol=1e-12)


def test_fclib_writer_refuses_bad_data(tmp_path) -> None:
    W, q = np.eye(6), np.ones(6)
    with pytest.raises(ProblemFileError, match="do not fit"):
        write_fclib_local(tmp_path / "a.hdf5", W, q, np.ones(3))
    with pytest.raises(ProblemFileError, match="negative"):
        write_fclib_local(tmp_path / "a.hdf5", W, q, np.array([0.3, -1.0]))
    with pytest.raises(ProblemFileError, match="both r and u"):
        write_fclib_local(tmp_path / "a.hdf5", W, q, np.ones(2), r=q)
    assert not (tmp_path / "a.hdf5").exists()


def test_bad_scene_input() -> None:
    with pytest.raises(MCPInputError):
        Box(0.0, 1.0)
    with pytest.raises(MCPInputError):
        detect_contacts(np.zeros((2, 3)), np.array([0.1, -0.1]), Box(1, 1), 0.0)
    with pytest.raises(MCPInputError):
        make_pile(0)
