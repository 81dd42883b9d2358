"""sensitivity() reusing the Newton engine's last factorisation, and refusing one that does not fit.

The engine hands on (``extra["newton_factor"]``) a weak handle on its last LU when that LU is one
of :math:`\\mathrm{diag}(d_b)_K J_{KK}`; :func:`mcpkit.stationarity.sensitivity._kept_solver` uses it
for :math:`J_{II}` only while it is current and when :math:`K = I`. Checked here against the
exact :math:`dz/dq = -J_{II}^{-1}` on the free rows of LCPs, and against the LU the sensitivity
makes itself.
"""

from __future__ import annotations

import copy
import gc
import pickle
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sps
import sympy as sp

import mcpkit
from mcpkit import MCP
from mcpkit.engines.newton_linalg import KeptFactor, NewtonSystem
from mcpkit.stationarity import sensitivity
from mcpkit.stationarity.sensitivity import result_linearization


def _matrix(n: int, seed: int = 0) -> sps.csr_array:
    """Two random off-diagonal entries a row, strictly diagonally dominant (a P-matrix), not symmetric."""
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n), 2)
    cols = (rows + rng.integers(1, n, rows.size)) % n
    R = sps.csr_array((rng.uniform(-1.0, 1.0, rows.size), (rows, cols)), shape=(n, n))
    return (R + sps.diags_array(1.0 + abs(R).sum(axis=1) + rng.uniform(0.0, 1.0, n))).tocsr()


def _lcp(n: int) -> tuple[MCP, sps.csr_array]:
    """``0 <= z ⟂ M z + q`` with ``q`` the parameters (so ``dz/dq`` has ``n`` columns)."""
    M = _matrix(n)
    m = MCP(f"kept_lcp_{n}")
    m.add_variables("z", n, lb=0.0)
    q = m.add_parameters("q", n)
    m.add_affine("z", M, list(q))
    return m, M


def _exact(M: sps.csr_array, res: Any) -> np.ndarray:
    """``dz/dq``: ``-inv(M_II)`` on the free rows and columns, zero elsewhere."""
    lin = result_linearization(res)
    assert not lin.degenerate.size
    fr = lin.free
    out = np.zeros((M.shape[0], M.shape[0]))
    out[np.ix_(fr, fr)] = -np.linalg.inv(M.toarray()[np.ix_(fr, fr)])
    return out


def _q(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n)  # about half the pairs active


@pytest.mark.parametrize(
    ("n", "method"), [(60, "dense LU (Newton engine)"), (400, "SuperLU (Newton engine)")]
)
def test_sensitivity_reuses_the_engines_factor(n: int, method: str) -> None:
    # a cold Newton solve of an LCP ends with a crash step whose kept rows are the free pairs:
    # its LU (dense at n = 60, SuperLU of the kept block at n = 400) gives dz/dq, w^T dz/dq and
    # (dz/dq) dq exactly (matrix right-hand sides, transposed solves, one vector)
    m, M = _lcp(n)
    solver = mcpkit.Solver(m, backend="casadi", method="newton", tol=1e-12)
    res = solver.solve(p=_q(n, 1), warm_start=False)
    assert res.solved and isinstance(res.extra.get("newton_factor"), KeptFactor)
    lin = result_linearization(res)
    assert lin.factorization == method
    ref = _exact(M, res)
    scale = np.abs(ref).max()
    np.testing.assert_allclose(res.sensitivity(), ref, rtol=0, atol=1e-12 * scale)
    w = np.cos(np.arange(n))
    np.testing.assert_allclose(lin.vjp(w), w @ ref, rtol=0, atol=1e-12 * np.abs(w @ ref).max())
    dq = np.sin(np.arange(n))
    np.testing.assert_allclose(res.sensitivity(direction=dq), ref @ dq, rtol=0, atol=1e-12 * scale)
    own = replace(lin, kept=None)  # the same point with J_II factorised by the sensitivity itself
    assert "Newton engine" not in own.factorization
    np.testing.assert_allclose(own.jacobian(), lin.jacobian(), rtol=0, atol=1e-12 * scale)


@pytest.mark.parametrize("n", [60, 400])
def test_a_factor_that_does_not_fit_is_not_used(n: int) -> None:
    m, M = _lcp(n)
    solver = mcpkit.Solver(m, backend="casadi", method="newton", tol=1e-12)
    res1 = solver.solve(p=_q(n, 1), warm_start=False)
    lin1 = result_linearization(res1)
    assert "Newton engine" in lin1.factorization
    # rows that are not the free pairs: the factor is refused
    fewer = replace(lin1, free=lin1.free[:-1], active=np.union1d(lin1.active, lin1.free[-1:]))
    assert "Newton engine" not in fewer.factorization
    assert sensitivity._kept_solver(res1.extra["newton_factor"], lin1.free[1:], n, None) is None
    # made for another version of the declaration (the route tags it with the one it solved)
    kept = res1.extra["newton_factor"]
    assert kept.version == m.version
    kept.version = m.version - 1
    assert "Newton engine" not in result_linearization(res1).factorization
    kept.version = m.version
    held = result_linearization(res1)
    held._factor()  # holds the engine's LU ...
    assert held.factorization == lin1.factorization
    # ... until the engine factorises again (another q, another active set): then every result
    # and linearisation of the first point factorises J_II itself, and stays exact
    res2 = solver.solve(p=_q(n, 2), warm_start=False)
    assert res2.solved
    assert not res1.extra["newton_factor"].current and res2.extra["newton_factor"].current
    assert "Newton engine" not in result_linearization(res1).factorization
    ref1 = _exact(M, res1)
    scale = np.abs(ref1).max()
    np.testing.assert_allclose(res1.sensitivity(), ref1, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(held.jacobian(), ref1, rtol=0, atol=1e-12 * scale)  # fell back
    assert "Newton engine" in result_linearization(res2).factorization
    np.testing.assert_allclose(res2.sensitivity(), _exact(M, res2), rtol=0, atol=1e-12 * scale)


def test_a_factor_outlives_neither_its_solver_nor_pickling() -> None:
    n = 400
    m, M = _lcp(n)
    solver = mcpkit.Solver(m, backend="casadi", method="newton", tol=1e-12)
    res = solver.solve(p=_q(n, 1), warm_start=False)
    kept = res.extra["newton_factor"]
    assert copy.deepcopy(kept) is kept and copy.copy(res).extra["newton_factor"] is kept
    back = pickle.loads(pickle.dumps(kept))
    assert isinstance(back, KeptFactor) and not back.current and back.rows() is None
    assert kept.current
    del solver
    gc.collect()
    assert not kept.current and kept.solve(np.ones(3)) is None  # a weak reference: nothing kept alive
    assert result_linearization(res).factorization == "SuperLU"
    ref = _exact(M, res)
    np.testing.assert_allclose(res.sensitivity(), ref, rtol=0, atol=1e-12 * np.abs(ref).max())


def test_no_factor_from_a_jacobian_that_depends_on_z() -> None:
    # F_i = z_i^3 + z_i + (M z)_i + q_i: the engine's last LU is of J at the previous iterate
    n = 30
    M = _matrix(n).toarray() * 0.1
    m = MCP("cubic")
    z = m.add_variables("z", n, lb=0.0)
    q = m.add_parameters("q", n)
    coupling = [sum(sp.Float(M[i, j]) * z[j] for j in np.flatnonzero(M[i])) for i in range(n)]
    m.add_functions("z", [z[i] ** 3 + z[i] + coupling[i] + q[i] for i in range(n)])
    res = mcpkit.Solver(m, backend="casadi", method="newton", tol=1e-12).solve(p=_q(n, 3), warm_start=False)
    assert res.solved and "newton_factor" not in res.extra


@pytest.mark.parametrize("dense", [True, False])
def test_newton_system_hands_on_only_factors_of_j_kk(dense: bool) -> None:
    n = 40
    J = _matrix(n, seed=4).tocsc()
    J.sort_indices()
    system = NewtonSystem(n, J.indptr, J.indices, dense=dense)
    system.set_jacobian(J.data)
    rng = np.random.default_rng(5)
    active = rng.random(n) < 0.4
    da = active.astype(float)
    db = np.where(active, 0.0, rng.uniform(0.5, 2.0, n))  # a row scaling on the kept rows
    # a Fischer-Burmeister element (d_a != 0 on kept rows) is not a factor of J_KK
    assert system.factor(da + 1e-3 * (db != 0), db) and system.kept_factor() is None
    assert system.factor(da, db)
    kept = system.kept_factor()
    assert kept is not None and kept.current
    K = kept.rows()
    assert K is not None and np.array_equal(np.sort(K), np.flatnonzero(~active))
    JKK = J.toarray()[np.ix_(K, K)]
    b = rng.standard_normal((K.size, 3))
    np.testing.assert_allclose(kept.solve(b), np.linalg.solve(JKK, b), rtol=1e-12, atol=1e-12)
    y = np.linalg.solve(JKK.T, b[:, 0])
    np.testing.assert_allclose(kept.solve(b[:, 0], True), y, rtol=1e-12, atol=1e-12)
    assert system.factor(da, db)  # the same matrix again, but another factorisation
    assert not kept.current and kept.rows() is None and kept.solve(b) is None
    zero_row = da.copy()
    zero_row[np.flatnonzero(active)[0]] = 0.0  # d_a = d_b = 0: H singular, nothing to hand on
    assert not system.factor(zero_row, db) and system.kept_factor() is None
