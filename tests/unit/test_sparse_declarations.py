"""Sparse affine declarations: storage, typed errors, and the structure of every lowering (no solver runs).

``MCP.lcp``/``add_affine`` keep a ``scipy.sparse`` ``M`` as canonical CSR; the CasADi lowering is
one sparse ``DM`` times the vector (Jacobian pattern = ``M``'s pattern), the Pyomo lowering one
linear sum per CSR row, the printer summarises, Lemke densifies (refusing huge ``n``), GAMSPy
records come from COO, and LCP files may hold a sparse ``M`` (NPZ or Matrix Market).
"""

from __future__ import annotations

import math
from pathlib import Path

import casadi as ca
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sps
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyomo.repn import generate_standard_repn

from mcpkit import MCP
from mcpkit.command.cli import main
from mcpkit.engines.lemke import SPARSE_DENSE_LIMIT, AffineData, LemkeRoute
from mcpkit.engines.newton_casadi import affine_jacobian_rows
from mcpkit.engines.path import _matrix_records
from mcpkit.errors import MCPInputError, NonFiniteError, ProblemFileError, ShapeError
from mcpkit.formats.io import file_kind, load_mcp, save_lcp_mtx, save_lcp_npz
from mcpkit.lowering.casadi import ToCasadi, lower_to_casadi
from mcpkit.lowering.pyomo import ToPyomo
from mcpkit.problems.functions import AffineFunction, NumericRows
from mcpkit.solving.options import SolveOptions

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def laplacian_2d(N: int) -> sps.csr_array:
    """5-point Laplacian on an ``N x N`` grid (``4`` on the diagonal, ``-1`` to each neighbour)."""
    D = sps.diags_array([-1.0, 2.0, -1.0], offsets=[-1, 0, 1], shape=(N, N))
    eye = sps.identity(N, format="csr")
    return sps.csr_array(sps.kron(eye, D) + sps.kron(D, eye))


def random_sparse(seed: int, n: int, m: int | None = None, density: float = 0.2) -> sps.csr_array:
    rng = np.random.default_rng(seed)
    return sps.csr_array(sps.random_array((n, m or n), density=density, rng=rng, format="csr"))


def pattern(M: sps.sparray) -> tuple[np.ndarray, np.ndarray]:
    C = sps.csc_array(M)
    C.sort_indices()
    return C.indptr.astype(np.int64), C.indices.astype(np.int64)


# ------------------------------------------------------------------------------ declaration
def test_sparse_m_is_stored_as_canonical_csr_copy() -> None:
    rows = np.array([0, 0, 1, 2, 2, 2])
    cols = np.array([1, 1, 0, 2, 0, 1])
    vals = np.array([1.0, 2.0, 0.0, 5.0, -1.0, 0.0])  # a duplicate (0,1) and two stored zeros
    M = sps.coo_array((vals, (rows, cols)), shape=(3, 3))
    mcp = MCP.lcp(M, np.ones(3))
    fb = mcp.function_block("z")
    assert isinstance(fb, AffineFunction) and fb.is_sparse
    assert isinstance(fb.M, sps.csr_array) and fb.M.has_canonical_format
    assert fb.nnz == 3 and fb.M.nnz == 3  # duplicates summed, zeros dropped
    np.testing.assert_array_equal(fb.M.toarray(), [[0, 3, 0], [0, 0, 0], [-1, 0, 5]])
    M.data[:] = 99.0  # the declaration holds its own copy
    assert fb.M.toarray().max() == 5.0


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "bsr", "dia", "lil", "dok"])
@pytest.mark.parametrize("kind", ["array", "matrix"])
def test_every_scipy_format_is_accepted_and_kept_sparse(fmt: str, kind: str) -> None:
    dense = np.array([[2.0, 0.0, 1.0], [0.0, 3.0, 0.0], [-1.0, 0.0, 4.0]])
    M = (sps.csr_array(dense) if kind == "array" else sps.csr_matrix(dense)).asformat(fmt)
    mcp = MCP.lcp(M, [1.0, -1.0, 0.5])
    fb = mcp.function_block("z")
    assert fb.is_sparse and fb.nnz == 5
    np.testing.assert_array_equal(fb.M.toarray(), dense)
    np.testing.assert_allclose(mcp.evaluate([1.0, 2.0, 3.0]), dense @ [1, 2, 3] + [1, -1, 0.5], atol=1e-15)


def test_dense_declarations_are_unchanged() -> None:
    M = np.array([[2.0, 1.0], [0.0, 3.0]])
    fb = MCP.lcp(M, [-1.0, 1.0]).function_block("z")
    assert isinstance(fb.M, np.ndarray) and not fb.is_sparse and fb.nnz == 3
    assert isinstance(fb.q, NumericRows) and [float(v) for v in fb.q] == [-1.0, 1.0]
    assert all(isinstance(v, sp.Float) for v in fb.q)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_sparse_entries_raise_before_anything_runs(bad: float) -> None:
    M = sps.csr_array(([1.0, bad, 2.0], ([0, 1, 2], [0, 2, 2])), shape=(3, 3))
    with pytest.raises(NonFiniteError, match=r"NaN or inf.*\(1, 2\)"):
        MCP.lcp(M, np.zeros(3))
    mcp = MCP("a")
    mcp.add_variables("x", 3)
    with pytest.raises(NonFiniteError, match="NaN or inf"):
        mcp.add_affine("x", M, np.zeros(3))


def test_sparse_shape_and_type_errors() -> None:
    with pytest.raises(ShapeError, match="square"):
        MCP.lcp(sps.csr_array((2, 3)), np.zeros(2))
    with pytest.raises(ShapeError, match="3 entries"):
        MCP.lcp(sps.identity(3, format="csr"), np.zeros(4))
    with pytest.raises(MCPInputError, match="real numbers"):
        MCP.lcp(sps.csr_array(np.eye(2) * (1 + 1j)), np.zeros(2))
    with pytest.raises(NonFiniteError, match="q contains NaN"):
        MCP.lcp(sps.identity(2, format="csr"), [0.0, np.nan])
    mcp = MCP("b")
    mcp.add_variables("x", 2)
    mcp.add_variables("y", 3)
    with pytest.raises(ShapeError, match=r"shape \(2, 5\)"):
        mcp.add_affine("x", sps.identity(2, format="csr"), np.zeros(2))
    with pytest.raises(ShapeError, match="2-D"):
        mcp.add_affine("x", sps.coo_array(np.ones(5)), np.zeros(2))


def test_function_exprs_of_a_sparse_block_match_the_dense_one() -> None:
    M = random_sparse(3, 6, density=0.4)
    q = np.linspace(-1, 1, 6)
    assert MCP.lcp(M, q).function_exprs() == MCP.lcp(M.toarray(), q).function_exprs()


def test_large_declaration_creates_no_symbols_until_asked() -> None:
    mcp = MCP.lcp(laplacian_2d(100), -np.ones(10_000))
    block = mcp.blocks[0]
    assert len(block.symbols) == 10_000 and repr(block.symbols) == "SymbolRange('z', 10000)"
    assert block.symbols[-1] == sp.Symbol("z_9999", real=True)
    assert block.symbols[3] is block.symbols[3]  # sympy's symbol cache: one object per name


# ---------------------------------------------------------------------------------- CasADi
def test_casadi_jacobian_pattern_is_m_pattern_and_mx_is_chosen_for_large_nnz() -> None:
    L = laplacian_2d(100)  # n = 10^4, nnz = 49 600: above ToCasadi.dense_limit
    mcp = MCP.lcp(L, -np.ones(L.shape[0]))
    cas = lower_to_casadi(mcp)
    assert isinstance(cas.z, ca.MX)
    J = ca.DM(cas.jacobian_function()(np.zeros(L.shape[0]), []))
    colind, row = pattern(L)
    assert J.nnz() == L.nnz
    np.testing.assert_array_equal(np.asarray(J.sparsity().colind()), colind)
    np.testing.assert_array_equal(np.asarray(J.sparsity().row()), row)
    np.testing.assert_array_equal(np.asarray(J.nonzeros()), sps.csc_array(L).data)
    z = np.random.default_rng(0).standard_normal(L.shape[0])
    np.testing.assert_allclose(np.asarray(cas.F_fun(z, [])).ravel(), L @ z - 1.0, rtol=0, atol=1e-12)


def test_small_sparse_block_uses_sx_and_costs_o_nnz_instructions() -> None:
    M = random_sparse(1, 300, density=0.01)  # ~900 nonzeros of 90 000 entries
    cas, _ = ToCasadi().apply(MCP.lcp(M, np.ones(300)))
    assert isinstance(cas.z, ca.SX)
    assert cas.F_fun.n_instructions() < 4 * (M.nnz + 300)  # a dense block would need ~2 * 90 000


@SETTINGS
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(1, 12),
    m=st.integers(1, 12),
    density=st.floats(0.0, 1.0),
    symbolic=st.sampled_from(["SX", "MX"]),
)
def test_casadi_lowering_of_mixed_blocks_equals_dense(
    seed: int, n: int, m: int, density: float, symbolic: str
) -> None:
    """x (n) affine over (x, y) with a sparse M, y (m) symbolic: F and J equal the dense declaration's."""
    rng = np.random.default_rng(seed)
    A = random_sparse(seed, n, n + m, density)
    qx = rng.standard_normal(n)

    def build(M: object) -> MCP:
        mcp = MCP("mixed")
        mcp.add_variables("x", n, lb=-1.0, ub=2.0)
        y = mcp.add_variables("y", m, lb=-math.inf)
        mcp.add_affine("x", M, qx, over=["x", "y"])
        mcp.add_functions("y", [y[k] ** 3 + k for k in range(m)])
        return mcp

    cs, _ = ToCasadi(symbolic).apply(build(A))
    cd, _ = ToCasadi(symbolic).apply(build(A.toarray()))
    z = rng.standard_normal(n + m)
    np.testing.assert_allclose(np.asarray(cs.F_fun(z, [])), np.asarray(cd.F_fun(z, [])), rtol=0, atol=1e-12)
    Js = ca.DM(cs.jacobian_function()(z, []))
    Jd = ca.DM(cd.jacobian_function()(z, []))
    np.testing.assert_allclose(np.asarray(Js.full()), np.asarray(Jd.full()), rtol=0, atol=1e-12)
    assert Js.nnz() == A.nnz + m  # the affine rows hold exactly M's nonzeros


def test_affine_jacobian_rows_and_the_affine_map_place_the_same_entries() -> None:
    """Two affine blocks (one dense, one sparse over permuted columns, numeric q): the Newton
    engine's constant rows and ``AffineMap.jacobian`` (one placing helper) both give the
    Jacobian assembled by hand."""
    A = np.array([[2.0, 0.0, 1.0], [0.0, 3.0, 0.0]])
    B = sps.csr_array(np.array([
        [0.0, 4.0, 0.0, 5.0, 0.0], [6.0, 0.0, 0.0, 0.0, 8.0], [0.0, 0.0, 7.0, 0.0, 0.0],
    ]))  # fmt: skip
    mcp = MCP("two")
    mcp.add_variables("x", 2)
    mcp.add_variables("y", 3)
    mcp.add_affine("x", A, np.zeros(2), over=["y"])
    mcp.add_affine("y", B, np.ones(3), over=["y", "x"])
    want = np.zeros((5, 5))
    want[0:2, 2:5] = A
    want[2:5][:, [2, 3, 4, 0, 1]] = B.toarray()
    rows, r, c, v = affine_jacobian_rows(mcp)
    np.testing.assert_array_equal(rows, np.arange(5))
    np.testing.assert_array_equal(sps.csc_array((v, (r, c)), shape=(5, 5)).toarray(), want)
    amap = mcp.affine_map()
    assert amap is not None and not amap._whole
    np.testing.assert_array_equal(amap.jacobian.toarray(), want)


def test_newton_affine_rows_take_the_sparse_matrix_as_is() -> None:
    A = random_sparse(5, 4, 7, density=0.3)
    out = []
    for M in (A, A.toarray()):
        mcp = MCP("r")
        mcp.add_variables("y", 3)
        mcp.add_variables("x", 4)
        mcp.add_functions("y", [0, 0, 0])
        mcp.add_affine("x", M, np.zeros(4), over=["x", "y"])
        rows, r, c, v = affine_jacobian_rows(mcp)
        order = np.lexsort((c, r))
        out.append((rows, r[order], c[order], v[order]))
    for a, b in zip(*out, strict=True):
        np.testing.assert_array_equal(a, b)
    rows, r, c, _ = out[0]
    np.testing.assert_array_equal(rows, np.arange(3, 7))
    coo = A.tocoo()
    assert r.size == A.nnz
    assert set(zip(r.tolist(), c.tolist(), strict=True)) == {
        (3 + i, (j + 3) if j < 4 else j - 4) for i, j in zip(coo.row.tolist(), coo.col.tolist(), strict=True)
    }


# ----------------------------------------------------------------------------------- Pyomo
def test_pyomo_rows_hold_the_csr_coefficients() -> None:
    A = random_sparse(7, 9, density=0.3)
    q = np.arange(9.0) - 4
    mcp = MCP.lcp(A, q, lb=-1.0, ub=3.0)
    m, info = ToPyomo().apply(mcp)
    col = {id(v): j for j, v in enumerate(info.variables(m))}
    for r, expr in enumerate(info.F):
        lo, hi = A.indptr[r], A.indptr[r + 1]
        if hi == lo:
            assert expr == q[r]
            continue
        repn = generate_standard_repn(expr, compute_values=True)
        assert repn.is_linear()
        got = {col[id(v)]: c for v, c in zip(repn.linear_vars, repn.linear_coefs, strict=True)}
        assert got == dict(zip(A.indices[lo:hi].tolist(), A.data[lo:hi].tolist(), strict=True))
        assert repn.constant == pytest.approx(q[r], abs=0)


def test_pyomo_sparse_and_dense_rows_agree_with_parameters_in_q() -> None:
    A = random_sparse(11, 5, density=0.5)
    reps, models = [], []  # the models stay alive: a collected model detaches its variables
    for M in (A, A.toarray()):
        mcp = MCP("p")
        mcp.add_variables("x", 5)
        a = mcp.add_parameters("a", 1, value=2.0)
        mcp.add_affine("x", M, [a[0] * k for k in range(5)])
        m, info = ToPyomo().apply(mcp)
        models.append(m)
        reps.append([generate_standard_repn(e, compute_values=True) for e in info.F])
    for rs, rd in zip(*reps, strict=True):
        assert rs.constant == pytest.approx(rd.constant, abs=0)
        assert [v.name for v in rs.linear_vars] == [v.name for v in rd.linear_vars]
        assert list(rs.linear_coefs) == list(rd.linear_coefs)


# --------------------------------------------------------------------------------- printer
def test_printer_summarises_sparse_blocks_and_prints_rows_like_dense() -> None:
    L = laplacian_2d(10)
    text = MCP.lcp(L, -np.ones(100), ub=1.0).to_text()
    assert "M_z is 100x100, sparse with 460 nonzeros" in text
    latex = MCP.lcp(L, -np.ones(100)).to_latex()
    assert r"100\times100, sparse with 460 nonzeros" in latex
    lb = np.linspace(-1, 0, 100)  # varying bounds: the first and last rows are printed
    assert MCP.lcp(L, -np.ones(100), lb=lb).to_text() == MCP.lcp(L.toarray(), -np.ones(100), lb=lb).to_text()
    small = random_sparse(2, 4, density=0.5)
    assert MCP.lcp(small, np.ones(4)).to_latex() == MCP.lcp(small.toarray(), np.ones(4)).to_latex()


# ----------------------------------------------------------------------------- Lemke, PATH
def test_lemke_densifies_sparse_m_and_refuses_huge_n() -> None:
    A = random_sparse(4, 6, density=0.4) + sps.identity(6)
    mcp = MCP("l")
    mcp.add_variables("a", 2)
    mcp.add_variables("b", 4)
    mcp.add_affine("a", A[:2], np.ones(2))
    mcp.add_affine("b", A[2:, [2, 3, 4, 5, 0, 1]], np.ones(4), over=["b", "a"])
    data = AffineData(mcp)
    assert data.source == "declaration"
    np.testing.assert_array_equal(data.M(np.zeros(0)), A.toarray())
    n = SPARSE_DENSE_LIMIT + 1
    with pytest.raises(MCPInputError, match="method='newton'"):
        LemkeRoute(MCP.lcp(sps.identity(n, format="csr"), np.ones(n)), "casadi", SolveOptions())


def test_gamspy_records_come_from_coo() -> None:
    A = random_sparse(9, 5, 3, density=0.4)
    df = _matrix_records(A)
    assert list(df.columns) == ["row", "col", "value"] and len(df) == A.nnz
    back = np.zeros((5, 3))
    back[df["row"].astype(int), df["col"].astype(int)] = df["value"]
    np.testing.assert_array_equal(back, A.toarray())
    col = _matrix_records(sps.csc_array(A)[:, [1]], matrix=False)
    assert list(col.columns) == ["row", "value"] and len(col) == A[:, [1]].nnz
    dense = A.toarray()
    assert _matrix_records(dense) is dense


# ------------------------------------------------------------------------------------ files
def _box(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q = np.linspace(-2, 1, n)
    lb = np.where(np.arange(n) % 3 == 0, -math.inf, -0.5)
    ub = np.where(np.arange(n) % 4 == 0, math.inf, 2.0)
    return q, lb, ub


def _same_lcp(mcp: MCP, M: sps.sparray, q: np.ndarray, lb: np.ndarray, ub: np.ndarray) -> None:
    fb = mcp.function_block("z")
    assert fb.is_sparse
    assert abs(fb.M - sps.csr_array(M)).max() == 0.0
    np.testing.assert_array_equal(fb.q_values, q)
    np.testing.assert_array_equal(mcp.lb, lb)
    np.testing.assert_array_equal(mcp.ub, ub)


def test_sparse_npz_round_trip_is_scipy_readable(tmp_path: Path) -> None:
    M = random_sparse(6, 12, density=0.25)
    q, lb, ub = _box(12)
    p = save_lcp_npz(tmp_path / "a.npz", M.tocoo(), q, lb, ub)
    assert file_kind(p) == "lcp-npz"
    _same_lcp(load_mcp(p), M, q, lb, ub)
    assert abs(sps.load_npz(p) - M).max() == 0.0  # the file is a save_npz file too


def test_save_npz_with_companion_vectors(tmp_path: Path) -> None:
    M = random_sparse(8, 10, density=0.3)
    q, lb, ub = _box(10)
    sps.save_npz(tmp_path / "b.npz", sps.csc_matrix(M))
    np.save(tmp_path / "b.q.npy", q)
    mcp = load_mcp(tmp_path / "b.npz")
    _same_lcp(mcp, M, q, np.zeros(10), np.full(10, math.inf))
    np.save(tmp_path / "b.lb.npy", lb)
    np.save(tmp_path / "b.ub.npy", ub)
    _same_lcp(load_mcp(tmp_path / "b.npz"), M, q, lb, ub)


def test_dense_npz_and_json_still_load(tmp_path: Path) -> None:
    M = np.array([[2.0, 1.0], [1.0, 2.0]])
    p = save_lcp_npz(tmp_path / "d.npz", M, [-1.0, -1.0], ub=[1.0, math.inf])
    mcp = load_mcp(p)
    assert not mcp.function_block("z").is_sparse
    np.testing.assert_array_equal(mcp.function_block("z").M, M)
    np.testing.assert_array_equal(mcp.ub, [1.0, math.inf])
    np.savez(tmp_path / "e.npz", M=M, q=[1.0, 2.0])
    assert load_mcp(tmp_path / "e.npz").n == 2


def test_matrix_market_round_trip(tmp_path: Path) -> None:
    M = random_sparse(10, 15, density=0.2)
    q, lb, ub = _box(15)
    p = save_lcp_mtx(tmp_path / "c.mtx", M, q, lb, ub)
    assert file_kind(p) == "lcp-mtx"
    assert {f.name for f in tmp_path.iterdir()} == {"c.mtx", "c_q.mtx", "c_lb.mtx", "c_ub.mtx"}
    _same_lcp(load_mcp(p), M, q, lb, ub)
    # the plain SciPy recipe of the module docstring: M and q only, default bounds
    scipy.io.mmwrite(tmp_path / "s.mtx", M)
    scipy.io.mmwrite(tmp_path / "s_q.mtx", q.reshape(-1, 1))
    _same_lcp(load_mcp(tmp_path / "s.mtx"), M, q, np.zeros(15), np.full(15, math.inf))
    # an "array" Matrix Market file gives a dense declaration
    scipy.io.mmwrite(tmp_path / "t.mtx", M.toarray())
    scipy.io.mmwrite(tmp_path / "t_q.mtx", q.reshape(1, -1))
    assert not load_mcp(tmp_path / "t.mtx").function_block("z").is_sparse


def test_cli_prints_a_sparse_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = save_lcp_npz(tmp_path / "lap.npz", laplacian_2d(5), -np.ones(25), 0.0, 1.0)
    assert main(["print", str(p)]) == 0
    assert "M_z is 25x25, sparse with 105 nonzeros" in capsys.readouterr().out


NPZ_KEYS = {"format": np.array(b"csr"), "shape": np.array([2, 2])}


@pytest.mark.parametrize(
    ("files", "match"),
    [
        ({"x.npz": b"not a zip"}, "cannot read .*x.npz"),
        ({"x.npz": b"PK\x03\x04truncated"}, "cannot read .*x.npz"),
        ({"x.npz": {"A": np.eye(2)}}, "x.npz: NPZ file holds neither"),
        ({"x.npz": {**NPZ_KEYS, "data": np.ones(1)}}, "cannot read .*x.npz"),  # no indices/indptr
        ({"x.npz": {**NPZ_KEYS, "data": np.ones(1), "indices": [5], "indptr": [0, 1, 1]}}, "x.npz"),
        ({"x.npz": {**NPZ_KEYS, "data": [np.nan], "indices": [0], "indptr": [0, 1, 1], "q": [0, 0]}}, "NaN"),
        ({"x.npz": {**NPZ_KEYS, "data": [1.0], "indices": [0], "indptr": [0, 1, 1]}}, "without q"),
        (
            {"x.npz": {**NPZ_KEYS, "data": [1.0], "indices": [0], "indptr": [0, 1, 1], "q": [1, 2]},
             "x.q.npy": np.ones(2)},
            "q is given twice",
        ),
        (
            {"x.npz": {**NPZ_KEYS, "data": [1.0], "indices": [0], "indptr": [0, 1, 1]},
             "x.q.npy": np.ones(3)},
            r"x.q.npy: q must be 2 values",
        ),
        (
            {"x.npz": {**NPZ_KEYS, "data": [1.0], "indices": [0], "indptr": [0, 1, 1]}, "x.q.npy": b"junk"},
            "cannot read .*x.q.npy",
        ),
        (
            {"x.npz": {**NPZ_KEYS, "data": [1.0], "indices": [0], "indptr": [0, 1, 1], "q": [1, 2],
                       "lb": [2, 2], "ub": [1, 1]}},
            "lb > ub",
        ),
        ({"x.mtx": "garbage\n"}, "cannot read .*x.mtx as Matrix Market"),
        ({"x.mtx": "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1.0\n"}, "needs q beside it"),
        (
            {"x.mtx": "%%MatrixMarket matrix coordinate real general\n2 3 1\n1 1 1.0\n"},
            "x.mtx: M must be a square matrix",
        ),
        (
            {"x.mtx": "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n"},
            "cannot read .*x.mtx",
        ),
        (
            {"x.mtx": "%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1.0 2.0\n"},
            "x.mtx: M must be real",
        ),
        (
            {"x.mtx": "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 nan\n",
             "x_q.mtx": "%%MatrixMarket matrix array real general\n2 1\n1\n2\n"},
            "NaN",
        ),
        (
            {"x.mtx": "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n",
             "x_q.mtx": "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n"},
            r"x_q.mtx: q must be 2 values",
        ),
        (
            {"x.mtx": "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n",
             "x_q.mtx": "%%MatrixMarket matrix array real general\n2 1\n1\n"},
            "cannot read .*x_q.mtx",
        ),
    ],
)  # fmt: skip
def test_bad_sparse_files_raise_problem_file_errors(
    tmp_path: Path, files: dict[str, object], match: str
) -> None:
    for name, content in files.items():
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str):
            path.write_text(content)
        elif name.endswith(".npy"):
            np.save(path, content)
        else:
            np.savez(path, **{k: np.asarray(v) for k, v in content.items()})
    main_file = tmp_path / next(iter(files))
    with pytest.raises(ProblemFileError, match=match):
        load_mcp(main_file)


def test_save_lcp_mtx_needs_the_suffix(tmp_path: Path) -> None:
    with pytest.raises(MCPInputError, match=r"\.mtx"):
        save_lcp_mtx(tmp_path / "x.txt", sps.identity(2), np.zeros(2))
