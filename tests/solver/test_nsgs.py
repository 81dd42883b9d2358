"""Nonsmooth Gauss–Seidel (``mcpkit.engines.nsgs``): one contact in closed form, small problems
with a constructed solution, input errors (the Siconos error recomputed here from the reactions)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mcpkit.engines.newton_contact import siconos_error
from mcpkit.engines.nsgs import solve_nsgs, solve_one_contact
from mcpkit.errors import MCPInputError

pytestmark = pytest.mark.solver


def _err(W: np.ndarray, q: np.ndarray, mu: np.ndarray, r: np.ndarray) -> float:
    return siconos_error(q, mu, r, W @ r + q)


def test_one_contact_take_off_stick_slide_closed_form() -> None:
    W = np.eye(3)
    np.testing.assert_array_equal(solve_one_contact(W, np.array([0.5, 1.0, -2.0]), 0.3), np.zeros(3))
    # sticking: r = -b inside the cone (|0.1| <= 0.3 * 1)
    np.testing.assert_allclose(solve_one_contact(W, np.array([-1.0, 0.1, 0.0]), 0.3), [1.0, -0.1, 0.0])
    # sliding along +t1: u_n = r_n - 1 = 0, r_t = -0.3 r_n e1, u_t = (2 - 0.3, 0) points along e1
    slide = solve_one_contact(W, np.array([-1.0, 2.0, 0.0]), 0.3)
    np.testing.assert_allclose(slide, [1.0, -0.3, 0.0], atol=1e-13)
    # sliding along a diagonal with a coupled normal row: check the law, not a formula
    Wc = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 1.5]])
    b = np.array([-1.0, 3.0, -3.0])
    r = solve_one_contact(Wc, b, 0.5)
    u = Wc @ r + b
    assert r[0] > 0 and abs(u[0]) < 1e-12
    assert math.hypot(r[1], r[2]) == pytest.approx(0.5 * r[0], rel=1e-12)
    assert float(np.dot(r[1:], u[1:])) == pytest.approx(-0.5 * r[0] * math.hypot(u[1], u[2]), rel=1e-10)
    # frictionless
    np.testing.assert_allclose(solve_one_contact(Wc, b, 0.0), [0.5, 0.0, 0.0])


def test_one_contact_random_blocks_meet_the_law() -> None:
    rng = np.random.default_rng(7)
    for _ in range(200):
        A = rng.normal(size=(3, 3))
        W = A @ A.T + 0.05 * np.eye(3)
        b, mu = rng.normal(size=3), float(rng.uniform(0.0, 1.5))
        r = solve_one_contact(W, b, mu)
        assert _err(W, b, np.array([mu]), r) <= 1e-10


def _constructed(rng: np.random.Generator, nc: int, mu: float) -> tuple[np.ndarray, ...]:
    """SPD W and q = u* - W r* for reactions and velocities r*, u* meeting the law contact by
    contact (take-off, sticking and sliding in turn)."""
    G = rng.normal(size=(3 * nc, 3 * nc))
    W = G @ G.T / (3 * nc) + np.eye(3 * nc)
    r, u = np.zeros(3 * nc), np.zeros(3 * nc)
    for i in range(nc):
        k, kind = 3 * i, i % 3
        if kind == 0:  # take-off
            u[k] = rng.uniform(0.1, 1.0)
            u[k + 1 : k + 3] = rng.normal(size=2)
        elif kind == 1:  # sticking, strictly inside the cone
            r[k] = rng.uniform(0.5, 1.5)
            a = rng.uniform(0, 2 * math.pi)
            r[k + 1 : k + 3] = 0.5 * mu * r[k] * np.array([math.cos(a), math.sin(a)])
        else:  # sliding
            r[k] = rng.uniform(0.5, 1.5)
            d = rng.normal(size=2)
            d /= np.linalg.norm(d)
            u[k + 1 : k + 3] = rng.uniform(0.1, 1.0) * d
            r[k + 1 : k + 3] = -mu * r[k] * d
    return W, u - W @ r, np.full(nc, mu), r


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nsgs_reaches_the_constructed_solution(seed: int) -> None:
    rng = np.random.default_rng(seed)
    W, q, mu, r_star = _constructed(rng, 9, 0.2)
    assert _err(W, q, mu, r_star) <= 1e-12
    res = solve_nsgs(W, q, mu, tol=1e-11, max_sweeps=2000)
    assert res.solved and res.message == "converged" and res.sweeps >= 1
    assert _err(W, q, mu, res.r) == pytest.approx(res.siconos_error) and res.siconos_error <= 1e-11
    np.testing.assert_allclose(res.u, W @ res.r + q)
    np.testing.assert_allclose(res.r, r_star, atol=1e-8)  # unique here: W well conditioned, mu small


def test_nsgs_block_diagonal_solves_in_one_sweep_and_relaxation() -> None:
    rng = np.random.default_rng(3)
    blocks = []
    for _ in range(4):
        A = rng.normal(size=(3, 3))
        blocks.append(A @ A.T + 0.5 * np.eye(3))
    W = np.zeros((12, 12))
    for i, B in enumerate(blocks):
        W[3 * i : 3 * i + 3, 3 * i : 3 * i + 3] = B
    q, mu = rng.normal(size=12), np.full(4, 0.4)
    q[0::3] = -np.abs(q[0::3])
    res = solve_nsgs(W, q, mu, tol=1e-12)
    assert res.solved and res.sweeps == 1
    under = solve_nsgs(W, q, mu, tol=1e-10, omega=0.7)
    assert under.solved and under.sweeps > 1


def test_nsgs_limits_and_errors() -> None:
    rng = np.random.default_rng(4)
    W, q, mu, _ = _constructed(rng, 6, 0.3)
    none = solve_nsgs(W, q, mu, max_sweeps=0)
    assert none.sweeps == 0 and not none.solved
    assert none.siconos_error == pytest.approx(_err(W, q, mu, np.zeros(18)))
    with pytest.raises(MCPInputError, match="18x18"):
        solve_nsgs(W[:3, :3], q, mu)
    with pytest.raises(MCPInputError, match="omega"):
        solve_nsgs(W, q, mu, omega=2.0)
    with pytest.raises(MCPInputError, match="non-negative"):
        solve_nsgs(W, q, -mu)
    Ws = W.copy()
    Ws[0, 0] = -1.0
    with pytest.raises(MCPInputError, match="contact 0"):
        solve_nsgs(Ws, q, mu)
    with pytest.raises(MCPInputError, match="r0"):
        solve_nsgs(W, q, mu, r0=np.full(18, np.nan))
