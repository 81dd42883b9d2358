"""MCPResult.sensitivity without a solver: exact solutions known in closed form, and the typed errors.

Each result is built by hand at a point that is an exact solution (checked by the same residual
judge a solve uses), so the sensitivity code is tested apart from any engine.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import sympy as sp

from mcpkit import MCP, MCPResult, NotDifferentiableError
from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError, SolveFailedError
from mcpkit.solving.result import Termination, judge_point


def exact_result(mcp: MCP, z: np.ndarray, p: np.ndarray, tol: float = 1e-10) -> MCPResult:
    """An MCPResult at ``z`` judged on the declaration, as mcpkit.Solver would return it."""
    jp = judge_point(np.asarray(z, dtype=float), lambda x: mcp.evaluate(x, p), mcp.lb, mcp.ub, tol)
    r = jp.residuals
    return MCPResult(
        z=jp.z, F=jp.F, termination=Termination.CONVERGED, solution_status=jp.status,
        natural_residual=r.natural, complementarity_violation=r.complementarity,
        bound_violation=r.bounds, tol=tol, iterations=0, wall_time_s=0.0, backend="none",
        method="exact", problem=mcp, p=np.asarray(p, dtype=float),
    )  # fmt: skip


def scalar_mcp(lb: float = 0.0, ub: float = math.inf) -> MCP:
    """``lb <= z <= ub ⟂ z - p``: ``z(p) = clip(p, lb, ub)``."""
    m = MCP("scalar")
    z = m.add_variables("z", 1, lb=lb, ub=ub)
    p = m.add_parameters("p", 1)
    m.add_functions("z", [z[0] - p[0]])
    return m


def test_interior_lcp_is_minus_inverse() -> None:
    # F = Mz + q with z > 0 at the solution: dz/dq = -M^{-1} exactly
    M = np.array([[2.0, 1.0], [0.5, 3.0]])
    m = MCP("lcp")
    m.add_variables("z", 2, lb=0.0)
    q = m.add_parameters("q", 2)
    m.add_affine("z", M, list(q))
    q0 = np.array([-1.0, -2.0])
    z = -np.linalg.solve(M, q0)
    assert (z > 0).all()
    res = exact_result(m, z, q0)
    assert res.solved
    np.testing.assert_allclose(res.sensitivity(), -np.linalg.inv(M), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(
        res.sensitivity(direction=[1.0, -1.0]), -np.linalg.inv(M) @ [1.0, -1.0], rtol=1e-12
    )


def test_active_pairs_do_not_move() -> None:
    # z2 at its lower bound with F2 > 0: its row is zero; z1 free follows -1/M11
    M = np.array([[2.0, 1.0], [0.5, 3.0]])
    m = MCP("lcp")
    m.add_variables("z", 2, lb=0.0)
    q = m.add_parameters("q", 2)
    m.add_affine("z", M, list(q))
    q0 = np.array([-1.0, 2.0])
    res = exact_result(m, np.array([0.5, 0.0]), q0)
    assert res.solved
    np.testing.assert_allclose(res.sensitivity(), [[-0.5, 0.0], [0.0, 0.0]], atol=1e-14)


def test_nonlinear_upper_bound_and_parameter_in_jacobian() -> None:
    # z1 free: z1^3 + a z1 - b = 0; z2 at its upper bound 1 with F2 = z2 - b - 3 < 0
    m = MCP("nl")
    z = m.add_variables("z", 2, lb=[-math.inf, -1.0], ub=[math.inf, 1.0])
    a, b = m.add_parameters("p", 2)
    m.add_functions("z", [z[0] ** 3 + a * z[0] - b, z[1] - b - 3])
    z1 = 1.0
    p0 = np.array([2.0, z1**3 + 2.0 * z1])  # a = 2, b = 3
    res = exact_result(m, np.array([z1, 1.0]), p0)
    assert res.solved
    J = 3 * z1**2 + p0[0]
    np.testing.assert_allclose(res.sensitivity(), [[-z1 / J, 1.0 / J], [0.0, 0.0]], rtol=1e-12, atol=1e-14)


def test_degenerate_lower_bound_needs_a_direction() -> None:
    res = exact_result(scalar_mcp(), np.array([0.0]), np.array([0.0]))
    with pytest.raises(NotDifferentiableError, match=r"z\[0\] at lower bound") as info:
        res.sensitivity()
    assert info.value.pairs == ["z[0]"]
    np.testing.assert_allclose(res.sensitivity(direction=[1.0]), [1.0])
    np.testing.assert_allclose(res.sensitivity(direction=[-1.0]), [0.0])
    np.testing.assert_allclose(res.sensitivity(direction=[2.5]), [2.5])


def test_degenerate_upper_bound_is_mirrored() -> None:
    res = exact_result(scalar_mcp(0.0, 1.0), np.array([1.0]), np.array([1.0]))
    with pytest.raises(NotDifferentiableError, match="upper bound"):
        res.sensitivity()
    np.testing.assert_allclose(res.sensitivity(direction=[1.0]), [0.0])
    np.testing.assert_allclose(res.sensitivity(direction=[-1.0]), [-1.0])


def test_degenerate_pair_coupled_to_free_rows() -> None:
    # z1 free with F1 = 2 z1 + z2 - p, z2 >= 0 with F2 = z2 - z1 + 1 ... at p = -2: z1 = -1, z2 = 0, F2 = 0
    m = MCP("mixed")
    z = m.add_variables("z", 2, lb=[-math.inf, 0.0])
    (p,) = m.add_parameters("p", 1)
    m.add_functions("z", [2 * z[0] + z[1] - p, z[1] - z[0] - 1])
    res = exact_result(m, np.array([-1.0, 0.0]), np.array([-2.0]))
    assert res.solved
    # dp > 0: z1 grows, F2 = -z1 - 1 + z2 would go negative, so z2 leaves its bound:
    # 2 dz1 + dz2 = dp, dz2 - dz1 = 0 -> dz = dp/3 (1, 1)
    np.testing.assert_allclose(res.sensitivity(direction=[3.0]), [1.0, 1.0], atol=1e-12)
    # dp < 0: z2 stays at 0, dz1 = dp/2
    np.testing.assert_allclose(res.sensitivity(direction=[-2.0]), [-1.0, 0.0], atol=1e-12)


def test_singular_free_block_is_not_differentiable() -> None:
    m = MCP("cubic")
    z = m.add_variables("z", 1, lb=-math.inf)
    (p,) = m.add_parameters("p", 1)
    m.add_functions("z", [z[0] ** 3 - p])
    res = exact_result(m, np.array([0.0]), np.array([0.0]))
    with pytest.raises(NotDifferentiableError, match="singular"):
        res.sensitivity()


@pytest.mark.parametrize("direction", [[1.0, 2.0], [[1.0], [2.0]], [], 3.0, [[1.0]], np.ones((1, 1))])
def test_wrong_direction_shape(direction: object) -> None:
    res = exact_result(scalar_mcp(), np.array([1.0]), np.array([1.0]))
    with pytest.raises(ShapeError, match=r"shape \(1,\)"):
        res.sensitivity(direction=direction)


def test_nonfinite_direction() -> None:
    res = exact_result(scalar_mcp(), np.array([1.0]), np.array([1.0]))
    with pytest.raises(NonFiniteError):
        res.sensitivity(direction=[math.nan])


def test_non_parametric_mcp() -> None:
    m = MCP.lcp(np.eye(2), np.array([-1.0, 1.0]))
    res = exact_result(m, np.array([1.0, 0.0]), np.zeros(0))
    assert res.solved
    with pytest.raises(MCPInputError, match="no parameters"):
        res.sensitivity()


def test_unsolved_result() -> None:
    res = exact_result(scalar_mcp(), np.array([0.5]), np.array([1.0]))
    assert not res.solved
    with pytest.raises(SolveFailedError, match="solved result"):
        res.sensitivity()


def test_result_without_problem() -> None:
    res = exact_result(scalar_mcp(), np.array([1.0]), np.array([1.0]))
    res.problem = None
    with pytest.raises(MCPInputError, match="does not know its MCP"):
        res.sensitivity()


def test_changed_structure_is_refused() -> None:
    m = scalar_mcp()
    res = exact_result(m, np.array([1.0]), np.array([1.0]))
    m.add_parameters("extra", 1)
    with pytest.raises(MCPInputError, match="structure changed"):
        res.sensitivity()


def _sparse_matrix(kind: str, n: int) -> Any:
    """A sparse strictly diagonally dominant :math:`n \\times n` matrix (so nonsingular, a P-matrix).

    ``tridiagonal``: banded as declared (not symmetric, so transposed solves are told apart from
    plain ones); ``permuted``: the same symmetrically permuted (a band only
    after reordering); ``random``: two random off-diagonal entries per row (no narrow band in any
    order).
    """
    import scipy.sparse as sps

    rng = np.random.default_rng(0)
    if kind == "random":
        rows = np.repeat(np.arange(n), 2)
        cols = (rows + rng.integers(1, n, rows.size)) % n
        R = sps.csr_array((rng.uniform(-1.0, 1.0, rows.size), (rows, cols)), shape=(n, n))
        return (R + sps.diags_array(1.0 + abs(R).sum(axis=1))).tocsr()
    M = sps.diags([-1.0, 4.0, -2.0], [-1, 0, 1], shape=(n, n), format="csr")  # not symmetric
    if kind == "permuted":
        perm = rng.permutation(n)
        M = M[perm][:, perm].tocsr()
    return M


def _interior_lcp(M: Any, d: np.ndarray) -> MCPResult:
    """``z free ⟂ M z + 1 + d t`` at its exact solution for ``t = 0``."""
    import scipy.sparse as sps

    n = M.shape[0]
    m = MCP("sparse_interior")
    m.add_variables("z", n, lb=-math.inf)
    (t,) = m.add_parameters("t", 1)
    m.add_affine("z", M, [sp.Float(di) * t + 1.0 for di in d])
    z = np.asarray(sps.linalg.spsolve(sps.csc_matrix(M), -np.ones(n)))
    return exact_result(m, z, np.array([0.0]))


@pytest.mark.parametrize(
    ("kind", "method"),
    [("tridiagonal", "banded LU"), ("permuted", "banded LU (reordered)"), ("random", "SuperLU")],
)
def test_sparse_free_block(kind: str, method: str) -> None:
    # an interior solution bigger than the dense limit: dz/dt = -M^{-1} d. Tridiagonal M takes the
    # banded LU; symmetrically permuted (band as wide as the matrix) the banded LU in the reverse
    # Cuthill-McKee order; a random sparse pattern SuperLU
    import scipy.sparse as sps

    from mcpkit.stationarity import sensitivity

    n = sensitivity.DENSE_LIMIT + 50
    M = _sparse_matrix(kind, n)
    d = np.linspace(-1.0, 1.0, n)
    res = _interior_lcp(M, d)
    assert res.solved
    lin = sensitivity.result_linearization(res)
    assert isinstance(lin.J, sps.sparray)  # the sparse path ran
    coo = sps.coo_array(M)
    kl = int((coo.row - coo.col).max())
    assert (kl + 1 + kl <= sensitivity.BAND_LIMIT) is (kind == "tridiagonal")
    assert lin.factorization == method
    ref = -np.linalg.solve(M.toarray(), d)
    np.testing.assert_allclose(res.sensitivity()[:, 0], ref, rtol=1e-10, atol=1e-13)
    w = np.cos(np.arange(n))
    np.testing.assert_allclose(lin.vjp(w), [w @ ref], rtol=1e-10)


def test_band_order_of_the_pattern() -> None:
    # built once per structure: None when banded as declared or when no ordering narrows it, else
    # a permutation under which J's band is within BAND_LIMIT
    from mcpkit.stationarity import sensitivity

    n = sensitivity.DENSE_LIMIT + 50
    orders = {}
    for kind in ("tridiagonal", "permuted", "random"):
        res = _interior_lcp(_sparse_matrix(kind, n), np.ones(n))
        d = sensitivity.derivatives(res.problem)
        orders[kind] = d.band_order()
        assert d.band_order() is orders[kind]  # cached
    assert orders["tridiagonal"] is None and orders["random"] is None
    order = orders["permuted"]
    assert order is not None and np.array_equal(np.sort(order), np.arange(n))
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    r, c = sensitivity.derivatives(_interior_lcp(_sparse_matrix("permuted", n), np.ones(n)).problem).pattern()
    assert np.abs(pos[r] - pos[c]).max() == 1  # the permuted tridiagonal is tridiagonal again


def test_entries_zero_at_the_point_are_dropped_before_factorising() -> None:
    # F = M z + 1 + d t + s (z_a + z_b) with M tridiagonal and a, b random partners: CasADi's
    # pattern of dF/dz holds the partners (no ordering narrows it), but at s = 0 their entries are
    # exactly zero, so J_II is tridiagonal and takes the banded LU (with them: dense LU, as J_II
    # has at most DENSE_LIMIT rows); dz/d(t, s) is exact
    import scipy.sparse as sps

    from mcpkit.stationarity import sensitivity

    n = 80
    rng = np.random.default_rng(5)
    a, b = rng.integers(0, n, n), rng.integers(0, n, n)
    M = sps.diags([-1.0, 4.0, -2.0], [-1, 0, 1], shape=(n, n)).toarray()
    d = np.linspace(-1.0, 1.0, n)
    m = MCP("zero_partners")
    z = m.add_variables("z", n, lb=-math.inf)
    t, s_ = m.add_parameters("p", 2)
    rows = []
    for i in range(n):
        row = 4.0 * z[i] + 1.0 + sp.Float(d[i]) * t + s_ * (z[a[i]] + z[b[i]])
        row += -z[i - 1] if i > 0 else 0
        row += -2.0 * z[i + 1] if i < n - 1 else 0
        rows.append(row)
    m.add_functions("z", rows)
    zs = np.linalg.solve(M, -np.ones(n))
    res = exact_result(m, zs, np.zeros(2))
    assert res.solved
    d_ = sensitivity.derivatives(m)
    r, c = d_.pattern()
    assert d_.band_order() is None and int(np.abs(r - c).max()) > sensitivity.BAND_LIMIT
    lin = sensitivity.result_linearization(res)
    assert lin.factorization == "banded LU"
    ref = -np.linalg.solve(M, np.column_stack([d, zs[a] + zs[b]]))
    np.testing.assert_allclose(res.sensitivity(), ref, rtol=1e-10, atol=1e-13)
    # at s != 0 the partners count: dense LU, and dz/dt = -(M + s P)^{-1} d still exact
    s1 = 0.05
    P = np.zeros((n, n))
    np.add.at(P, (np.arange(n), a), 1.0)
    np.add.at(P, (np.arange(n), b), 1.0)
    z1 = np.linalg.solve(M + s1 * P, -np.ones(n))
    res1 = exact_result(m, z1, np.array([0.0, s1]))
    lin1 = sensitivity.result_linearization(res1)
    assert lin1.factorization == "dense LU"
    ref1 = -np.linalg.solve(M + s1 * P, d)
    np.testing.assert_allclose(res1.sensitivity()[:, 0], ref1, rtol=1e-10, atol=1e-13)


def _without_band_order(lin: Any) -> Any:
    """The same linearisation with the band ordering switched off (SuperLU in the declared order)."""
    from dataclasses import replace

    from mcpkit.stationarity import sensitivity

    d = sensitivity.Derivatives(lin.problem)
    d._band_order = (None,)
    return replace(lin, derivs=d)


def test_reordered_factorisation_matches_the_declared_order() -> None:
    # permuted tridiagonal LCP 0 <= z ⟂ M z + q with q the parameters, about half the pairs active
    # and one degenerate: the reordered banded LU and SuperLU in the declared order give the same
    # directional derivatives (matrix right-hand sides of the Schur complement), and, with the
    # degenerate pair's F nudged positive, the same dz/dq and w^T dz/dq, to 1e-12
    from mcpkit.stationarity import sensitivity

    n = 3 * sensitivity.DENSE_LIMIT  # about half free: above the dense limit
    rng = np.random.default_rng(3)
    M = _sparse_matrix("permuted", n)
    m = MCP("permuted_lcp")
    m.add_variables("z", n, lb=0.0)
    q = m.add_parameters("q", n)
    m.add_affine("z", M, list(q))
    z = np.where(rng.random(n) < 0.5, rng.uniform(0.5, 1.5, n), 0.0)
    w = np.where(z > 0, 0.0, rng.uniform(0.5, 1.5, n))
    k = int(np.flatnonzero(z == 0)[0])
    w[k] = 0.0  # z_k = 0 = F_k: degenerate
    res = exact_result(m, z, w - M @ z)
    assert res.solved
    lin = sensitivity.result_linearization(res)
    assert lin.degenerate.tolist() == [k]
    ref = _without_band_order(lin)
    assert lin.factorization == "banded LU (reordered)" and ref.factorization == "SuperLU"
    for _ in range(3):
        dp = rng.standard_normal(n)
        a, b = lin.jvp(dp), ref.jvp(dp)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * np.abs(b).max())
    with pytest.raises(NotDifferentiableError, match="degenerate"):
        lin.jacobian()
    w[k] = 1.0
    lin = sensitivity.result_linearization(exact_result(m, z, w - M @ z))
    assert lin.degenerate.size == 0
    ref = _without_band_order(lin)
    J1, J2 = lin.jacobian(), ref.jacobian()
    assert np.abs(J2).max() > 0.1
    np.testing.assert_allclose(J1, J2, rtol=1e-12, atol=1e-12 * np.abs(J2).max())
    v = rng.standard_normal(n)
    np.testing.assert_allclose(lin.vjp(v), ref.vjp(v), rtol=1e-12, atol=1e-12 * np.abs(ref.vjp(v)).max())


def test_singular_free_block_in_the_reordered_banded_lu() -> None:
    # tridiag(1, 1, 1) of order 251 is singular (eigenvalue 1 + 2 cos(2 pi / 3) = 0); permuted, it
    # reaches the banded LU through the reordering, which must still refuse it
    import scipy.sparse as sps

    from mcpkit.stationarity import sensitivity

    n = 251
    perm = np.random.default_rng(1).permutation(n)
    M = sps.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(n, n), format="csr")[perm][:, perm].tocsr()
    z = np.linspace(1.0, 2.0, n)
    q0 = -(M @ z)
    m = MCP("singular_chain")
    m.add_variables("z", n, lb=-math.inf)
    (t,) = m.add_parameters("t", 1)
    m.add_affine("z", M, [sp.Float(float(a)) + t for a in q0])
    res = exact_result(m, z, np.array([0.0]))
    assert res.solved
    assert sensitivity.derivatives(m).band_order() is not None
    with pytest.raises(NotDifferentiableError, match="singular \\(banded LU\\)"):
        res.sensitivity()


@pytest.mark.parametrize("n_chain", [4, 90], ids=["dense_J", "banded_J"])
def test_sparse_output_of_decoupled_chains(n_chain: int) -> None:
    # three decoupled tridiagonal chains, parameter j shifts chain j only: dz/dp is block
    # diagonal, so the sparse output stores exactly the chains' entries and equals the dense one
    import scipy.sparse as sps

    k = 3
    T = sps.diags([-1.0, 4.0, -1.0], [-1, 0, 1], shape=(n_chain, n_chain))
    M = sps.block_diag([T] * k, format="csr")
    n = k * n_chain
    m = MCP("chains")
    m.add_variables("z", n, lb=-math.inf)
    t = m.add_parameters("t", k)
    d = np.linspace(0.5, 1.5, n)
    m.add_affine("z", M, [sp.Float(d[i]) * t[i // n_chain] + 1.0 for i in range(n)])
    z = np.asarray(sps.linalg.spsolve(M.tocsc(), -np.ones(n)))
    res = exact_result(m, z, np.zeros(k))
    dense = res.sensitivity()
    S = res.sensitivity(sparse=True)
    assert isinstance(S, sps.csc_array) and S.shape == (n, k)
    np.testing.assert_allclose(S.toarray(), dense, rtol=1e-12, atol=1e-15)
    assert S.nnz == n  # each z_i moves with its own chain's parameter only
    ref = np.zeros((n, k))
    for j in range(k):
        blk = slice(j * n_chain, (j + 1) * n_chain)
        ref[blk, j] = -np.linalg.solve(T.toarray(), d[blk])
    np.testing.assert_allclose(dense, ref, rtol=1e-10, atol=1e-14)
    assert isinstance(res.sensitivity(sparse=None), np.ndarray)  # small: automatic stays dense
    from mcpkit.stationarity import sensitivity

    saved = sensitivity.SPARSE_AUTO_ENTRIES
    sensitivity.SPARSE_AUTO_ENTRIES = n * k - 1  # just below this problem's n * n_p
    try:
        auto = res.sensitivity(sparse=None)
    finally:
        sensitivity.SPARSE_AUTO_ENTRIES = saved
    assert isinstance(auto, sps.csc_array) and auto.nnz == n


def test_sparse_output_active_rows_and_bad_option() -> None:
    import scipy.sparse as sps

    m = scalar_mcp()
    res = exact_result(m, np.array([0.0]), np.array([-1.0]))  # z at 0 with F = 1: strongly active
    S = res.sensitivity(sparse=True)
    assert isinstance(S, sps.csc_array) and S.shape == (1, 1) and S.nnz == 0
    with pytest.raises(MCPInputError, match="sparse"):
        res.sensitivity(sparse="yes")  # type: ignore[arg-type]
