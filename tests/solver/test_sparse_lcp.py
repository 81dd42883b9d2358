"""Sparse LCP declarations solved: the same answers as dense ones, obstacle problems, files.

Each LCP has a planted solution or an independent check (the natural residual computed here from
``M`` and ``q``), and the sparse declaration is solved next to the dense declaration of the same
matrix by ``newton`` (on ``casadi`` and ``pyomo``), ``lemke`` and, when present, PATH.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sps

import mcpkit
import mcpkit.solving.availability as avail
from mcpkit import MCP
from mcpkit.command.cli import main
from mcpkit.formats.io import load_mcp, save_lcp_mtx, save_lcp_npz

pytestmark = pytest.mark.solver

ROUTES = [("newton", "casadi"), ("newton", "pyomo"), ("lemke", "casadi")]


def obstacle(N: int, load: float = 20.0) -> tuple[sps.csr_array, np.ndarray, np.ndarray, np.ndarray]:
    r"""The 2-D obstacle box LCP on an ``N x N`` grid: :math:`l \le z \le u \perp Lz - c h^2`.

    ``L`` is the 5-point Laplacian, the lower obstacle a product of sines (as in MCPLIB's
    ``obstacle``), the upper obstacle finite on a disc in the middle only.
    """
    h = 1.0 / (N + 1)
    D = sps.diags_array([-1.0, 2.0, -1.0], offsets=[-1, 0, 1], shape=(N, N))
    eye = sps.identity(N, format="csr")
    L = sps.csr_array(sps.kron(eye, D) + sps.kron(D, eye))
    x = np.arange(1, N + 1) * h
    X, Y = (a.ravel() for a in np.meshgrid(x, x, indexing="ij"))
    lb = 0.05 * np.sin(3.2 * math.pi * X) * np.sin(3.3 * math.pi * Y) - 0.02
    ub = np.where((X - 0.5) ** 2 + (Y - 0.5) ** 2 < 0.05, lb + 0.04 + 0.03 * X * Y, math.inf)
    return L, np.full(N * N, -load * h * h), lb, ub


def natural_residual(M: sps.sparray, q: np.ndarray, lb: np.ndarray, ub: np.ndarray, z: np.ndarray) -> float:
    return float(np.abs(z - np.clip(z - (M @ z + q), lb, ub)).max())


def planted_sparse_lcp(
    seed: int, n: int
) -> tuple[sps.csr_array, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(M, q, lb, ub, z*)``: a sparse strictly diagonally dominant (P-matrix) box LCP solved by ``z*``.

    Components are lower-bounded, upper-bounded, boxed or free, each at a bound with :math:`F`
    strictly signed or strictly inside with :math:`F = 0`; ``q = F* - M z*``.
    """
    rng = np.random.default_rng(seed)
    A = sps.random_array((n, n), density=3.0 / n, rng=rng, format="csr")
    A = sps.csr_array(A - A.T * rng.uniform(0, 2))
    M = sps.csr_array(A + sps.diags_array(abs(A).sum(axis=1) + 1.0))
    lb, ub, z, F = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    for i in range(n):
        kind = ["lower", "upper", "box", "free"][rng.integers(4)]
        lo = rng.uniform(-2, 1)
        lb[i], ub[i], inside = {
            "lower": (lo, math.inf, lo + 0.7), "upper": (-math.inf, lo, lo - 0.7),
            "box": (lo, lo + 2, lo + 1), "free": (-math.inf, math.inf, lo),
        }[kind]  # fmt: skip
        states = ["inside"] + [s for s, b in (("lower", lb[i]), ("upper", ub[i])) if np.isfinite(b)]
        z[i], F[i] = {
            "lower": (lb[i], rng.uniform(0.1, 2)),
            "upper": (ub[i], -rng.uniform(0.1, 2)),
            "inside": (inside, 0.0),
        }[states[rng.integers(len(states))]]
    return M, F - M @ z, lb, ub, z


@pytest.mark.parametrize(("method", "backend"), ROUTES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sparse_and_dense_declarations_give_the_planted_solution(
    method: str, backend: str, seed: int
) -> None:
    M, q, lb, ub, zstar = planted_sparse_lcp(seed, 40)
    out = {}
    for kind, Mx in (("sparse", M), ("dense", M.toarray())):
        res = mcpkit.solve(MCP.lcp(Mx, q, lb, ub), method=method, backend=backend, tol=1e-10)
        assert res.solved and res.method == method and res.backend == backend, (kind, res.message)
        np.testing.assert_allclose(res.z, zstar, rtol=0, atol=1e-8)
        out[kind] = res.z
    np.testing.assert_allclose(out["sparse"], out["dense"], rtol=0, atol=1e-9)


@pytest.mark.parametrize("backend", ["casadi", "pyomo"])
def test_mixed_sparse_affine_and_symbolic_blocks(backend: str) -> None:
    """x >= 0 ⟂ A (x, y) + q with a sparse A over two blocks; y free ⟂ y^3 + y - x_0 (NCP + equations)."""
    M, q, _, _, _ = planted_sparse_lcp(5, 12)
    sols = []
    for Mx in (M, M.toarray()):
        mcp = MCP("mixed")
        mcp.add_variables("x", 8, lb=0.0)
        y = mcp.add_variables("y", 4, lb=-math.inf)
        mcp.add_affine("x", Mx[:8], q[:8], over=["x", "y"])
        x0 = mcp.blocks[0].symbols[0]
        mcp.add_functions("y", [y[k] ** 3 + y[k] - x0 * (k + 1) for k in range(4)])
        res = mcpkit.solve(mcp, method="newton", backend=backend, tol=1e-10)
        assert res.solved, res.message
        z = res.z
        F = mcp.evaluate(z)
        assert np.abs(np.minimum(z[:8], F[:8])).max() <= 1e-9 and np.abs(F[8:]).max() <= 1e-9
        np.testing.assert_allclose(F[:8], Mx[:8] @ z + q[:8], rtol=0, atol=1e-12)
        np.testing.assert_allclose(F[8:], z[8:] ** 3 + z[8:] - z[0] * np.arange(1, 5), rtol=0, atol=1e-12)
        sols.append(z)
    np.testing.assert_allclose(sols[0], sols[1], rtol=0, atol=1e-9)


@pytest.mark.parametrize("backend", ["casadi", "pyomo"])
def test_sparse_obstacle_problem_n2500_solves(backend: str) -> None:
    L, q, lb, ub = obstacle(50)
    res = mcpkit.solve(MCP.lcp(L, q, lb, ub, name="obstacle"), method="newton", backend=backend, tol=1e-9)
    assert res.solved, res.message
    assert natural_residual(L, q, lb, ub, res.z) <= 1e-9
    active = (res.z <= lb + 1e-9) | (res.z >= ub - 1e-9)
    assert 0 < active.sum() < L.shape[0]  # a genuine free boundary, not a trivial solution


@pytest.mark.parametrize("save", [save_lcp_npz, save_lcp_mtx])
def test_sparse_file_round_trip_solves(
    tmp_path: Path, save: object, capsys: pytest.CaptureFixture[str]
) -> None:
    L, q, lb, ub = obstacle(20)
    path = save(tmp_path / ("obst.npz" if save is save_lcp_npz else "obst.mtx"), L, q, lb, ub)
    mcp = load_mcp(path)
    assert mcp.function_block("z").is_sparse
    res = mcpkit.solve(mcp, method="newton", tol=1e-10)
    assert res.solved, res.message
    assert natural_residual(L, q, lb, ub, res.z) <= 1e-10
    direct = mcpkit.solve(MCP.lcp(L, q, lb, ub), method="newton", tol=1e-10)
    np.testing.assert_allclose(res.z, direct.z, rtol=0, atol=1e-12)
    if save is save_lcp_npz:  # `mcpkit solve` reads the file by its kind
        assert main(["solve", str(path), "--method", "newton", "--json"]) == 0
        assert '"solved": true' in capsys.readouterr().out


@pytest.mark.path
def test_path_on_gamspy_takes_sparse_records() -> None:
    """Affine blocks over affine blocks (indexed records) and over a symbolic block (column records)."""
    if (why := avail.path_unavailable_reason()) is not None:
        pytest.skip(f"PATH not available: {why}")
    M, q, lb, ub, zstar = planted_sparse_lcp(3, 30)
    C = sps.csr_array(([1.0, -2.0, 0.5], ([0, 3, 7], [1, 0, 1])), shape=(20, 2))  # a's coupling to c
    roots = np.roots([1.0, 0.0, 1.0, -1.0])  # c^3 + c - 1: one real root
    cstar = roots[np.abs(roots.imag) < 1e-12].real
    mcp = MCP("p")
    mcp.add_variables("a", 20, lb=lb[:20], ub=ub[:20])
    mcp.add_variables("b", 10, lb=lb[20:], ub=ub[20:])
    c = mcp.add_variables("c", 2, lb=-math.inf)
    mcp.add_affine("a", sps.hstack([M[:20], C]), q[:20] - C @ np.full(2, cstar[0]), over=["a", "b", "c"])
    mcp.add_affine("b", M[20:][:, list(range(20, 30)) + list(range(20))], q[20:], over=["b", "a"])
    mcp.add_functions("c", [c[k] ** 3 + c[k] - 1 for k in range(2)])
    res = mcpkit.solve(mcp, method="path", backend="gamspy", tol=1e-10)
    assert res.solved, res.message
    np.testing.assert_allclose(res.z, np.concatenate([zstar, np.full(2, cstar[0])]), rtol=0, atol=1e-7)
