"""Resting-pile dev steps (tests/data/pile/rest-*.hdf5, the 603-contact step): they have solutions.

Strict feasibility (Acary, Cadoux, Lemaréchal, Malick, ZAMM 91 (2011), existence theorem of the
discrete Coulomb problem with a positive definite mass matrix): if some :math:`z` puts
:math:`u = Wz + q` in the interior of the dual cones, :math:`u_n > \\mu\\|u_T\\|` at every
contact, a solution exists. :math:`\\{Wz + q\\}` is the set of contact velocities
:math:`\\{H^T\\nu + e\\}` the bodies can make (``range W = range H^T``). The certificate is
found by a linear programme on a polyhedral inner approximation of the cones and checked here on
the exact cones. The NSGS stage of ``solve_local`` is exercised on a resting step.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.optimize

from mcpkit.formats.fclib_hdf5 import read_fclib_local
from mcpkit.models.fclib import friction_residual
from mcpkit.models.pile import solve_local

pytestmark = pytest.mark.solver

DATA = Path(__file__).resolve().parents[1] / "data" / "pile"
FILES = sorted(DATA.glob("rest-*.hdf5")) + [
    pytest.param(DATA / "hard-N200-seed0-staged-step37-603c.hdf5", marks=pytest.mark.slow)  # dense LP, ~50 s
]


def strict_feasibility_margin(W: np.ndarray, q: np.ndarray, mu: np.ndarray, bound: float = 10.0) -> float:
    """:math:`\\min_c (u_n - \\mu_c\\|u_{T}\\|)_c` at :math:`u = Wz + q` for the :math:`z`
    (:math:`\\|z\\|_\\infty \\le` ``bound``) maximising the margin of :math:`u_n \\ge \\mu(|u_{t_1}|
    + |u_{t_2}|) + \\delta`, :math:`\\delta \\le 1` (LP, HiGHS)."""
    nc, n = mu.size, q.size
    i = 3 * np.arange(nc)
    nv = n + 2 * nc + 1
    rows, rhs = [], []
    An = np.zeros((nc, nv))
    An[:, :n] = -W[i]
    An[np.arange(nc), n + np.arange(nc)] = mu
    An[np.arange(nc), n + nc + np.arange(nc)] = mu
    An[:, -1] = 1.0
    rows.append(An)
    rhs.append(q[i])
    for j in (1, 2):
        off = n + (j - 1) * nc
        for sign in (1.0, -1.0):
            A = np.zeros((nc, nv))
            A[:, :n] = sign * W[i + j]
            A[np.arange(nc), off + np.arange(nc)] = -1.0
            rows.append(A)
            rhs.append(-sign * q[i + j])
    c = np.zeros(nv)
    c[-1] = -1.0
    bounds = [(-bound, bound)] * n + [(0.0, None)] * (2 * nc) + [(None, 1.0)]
    lp = scipy.optimize.linprog(
        c, A_ub=np.vstack(rows), b_ub=np.concatenate(rhs), bounds=bounds, method="highs"
    )
    assert lp.status == 0, lp.message
    u = W @ lp.x[:n] + q
    return float((u[i] - mu * np.hypot(u[i + 1], u[i + 2])).min())


@pytest.mark.parametrize("path", FILES, ids=lambda p: getattr(p, "stem", str(p)))
def test_steps_are_strictly_feasible(path: Path) -> None:
    d = read_fclib_local(path)
    assert np.abs(d.W - d.W.T).max() <= 1e-12 * np.abs(d.W).max()
    assert np.linalg.eigvalsh(d.W).min() >= -1e-12 * np.abs(d.W).max()  # W = H^T M^-1 H, PSD
    assert strict_feasibility_margin(d.W, d.q, d.mu) > 0.1


def test_nsgs_stage_runs_and_keeps_the_best_point() -> None:
    d = read_fclib_local(DATA / "rest-N20-seed0-step79.hdf5")
    base, runs0 = solve_local(d.W, d.q, d.mu, None, 1e-8, fallback_limit=0.0, prox_limit=0.0)
    res, runs = solve_local(d.W, d.q, d.mu, None, 1e-8, fallback_limit=0.0, nsgs_limit=1.0, prox_limit=0.0)
    assert not base.solved and runs == runs0 + 2
    err = friction_residual(d.W, d.q, d.mu, res.r)
    assert err <= friction_residual(d.W, d.q, d.mu, base.r) * (1 + 1e-9)
    assert res.solved == (err <= 1e-8 and res.natural_residual <= 1e-8)


@pytest.mark.slow
def test_nsgs_then_polish_solves_the_603_contact_step() -> None:
    """Every other stage stops at 4e-5 on it; NSGS reached 9.7e-9 after 595 sweeps (111 s here)."""
    d = read_fclib_local(DATA / "hard-N200-seed0-staged-step37-603c.hdf5")
    res, _ = solve_local(d.W, d.q, d.mu, None, 1e-8, fallback_limit=0.0, nsgs_limit=400.0, prox_limit=0.0)
    assert res.solved and friction_residual(d.W, d.q, d.mu, res.r) <= 1e-8
