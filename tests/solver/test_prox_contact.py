"""Proximal point iteration (``mcpkit.engines.prox_contact``) on the resting-pile dev steps that
every other stage misses, and on small constructed problems (Siconos error recomputed here)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mcpkit.engines.newton_contact import solve_alart_curnier
from mcpkit.engines.prox_contact import solve_prox
from mcpkit.errors import MCPInputError
from mcpkit.formats.fclib_hdf5 import read_fclib_local
from mcpkit.models.fclib import friction_residual
from mcpkit.models.pile import solve_local

pytestmark = pytest.mark.solver

DATA = Path(__file__).resolve().parents[1] / "data" / "pile"
TOL = 1e-8
REST = [
    pytest.param(DATA / "rest-N20-seed0-step77.hdf5", marks=pytest.mark.slow, id="step77"),
    pytest.param(DATA / "rest-N20-seed0-step79.hdf5", marks=pytest.mark.slow, id="step79"),
    pytest.param(DATA / "rest-N20-seed0-step81.hdf5", id="step81"),
]


@pytest.mark.parametrize("path", REST)
def test_prox_solves_resting_steps_newton_misses(path: Path) -> None:
    d = read_fclib_local(path)
    newton = solve_alart_curnier(d.W, d.q, d.mu, TOL)
    res, outer = solve_prox(d.W, d.q, d.mu, tol=TOL)
    assert not newton.solved and outer >= 1
    assert res.solved and res.natural_residual <= TOL
    assert friction_residual(d.W, d.q, d.mu, res.r) <= TOL


@pytest.mark.slow
def test_solve_local_chain_solves_a_resting_step() -> None:
    d = read_fclib_local(DATA / "rest-N20-seed0-step81.hdf5")
    res, runs = solve_local(d.W, d.q, d.mu, None, TOL, fallback_limit=0.0)
    assert res.solved and runs > 1 and friction_residual(d.W, d.q, d.mu, res.r) <= TOL


def test_prox_on_a_random_problem_and_errors() -> None:
    rng = np.random.default_rng(5)
    G = rng.normal(size=(12, 12))
    W = G @ G.T / 12 + 0.1 * np.eye(12)
    q = rng.normal(size=12)
    q[0::3] = -np.abs(q[0::3]) - 0.1
    mu = np.full(4, 0.5)
    res, outer = solve_prox(W, q, mu, tol=1e-10)
    assert res.solved and friction_residual(W, q, mu, res.r) <= 1e-10
    none, zero = solve_prox(W, q, mu, max_outer=0, max_iter=0)
    assert zero == 0 and not none.solved
    with pytest.raises(MCPInputError, match="max_outer"):
        solve_prox(W, q, mu, max_outer=-1)
    with pytest.raises(MCPInputError):
        solve_prox(W[:3, :3], q, mu)
    with pytest.raises(MCPInputError):
        solve_prox(W, q, mu, r0=np.full(12, np.inf))
