"""``mcpkit.solve_mcp`` and the MCPLIB ports read as MCPs, against known and planted solutions."""

from __future__ import annotations

import json
import math
from pathlib import Path

import casadi as ca
import numpy as np
import pytest
import scipy.sparse as sps

import mcpkit
from mcpkit import solve_mcp
from mcpkit.command.cli import main
from mcpkit.formats.mcp_file import load_any_mcp, mcp_file_from_mpcc_json, save_mcp_file
from tests.conftest import SHARED_DATA, random_p_matrix

pytestmark = pytest.mark.solver

MCPLIB = SHARED_DATA / "mcplib"
needs_mcplib = pytest.mark.skipif(
    not MCPLIB.is_dir(), reason=f"{MCPLIB} not present (see ../shared/README.md)"
)
STARTS = [f"{m}_s{k}.json" for m in ("josephy", "kojshin") for k in range(1, 9)]


def known_distance(z: np.ndarray, meta: dict) -> float:
    return min(float(np.abs(z - np.array(s)).max()) for s in meta["known_solutions"])


@needs_mcplib
@pytest.mark.parametrize("name", STARTS)
def test_ports_as_mcps_reach_known_solutions_with_newton(name: str) -> None:
    mcp, meta = load_any_mcp(MCPLIB / name)
    res = mcpkit.solve(mcp, method="newton", tol=1e-12)
    assert res.solved, res.message
    assert known_distance(res.z, meta) <= 1e-9
    f = mcp_file_from_mpcc_json(MCPLIB / name)  # the same through the functional interface
    out = solve_mcp(f.F, None, f.lb, f.ub, f.z0, method="newton", convergence_tolerance=1e-12)
    assert out.solved and out.method == "newton", out.message
    np.testing.assert_allclose(out.z, res.z, atol=1e-10, rtol=0)


@needs_mcplib
def test_cli_solves_a_port_and_reports_the_known_solution_distance(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["solve", str(MCPLIB / "josephy_s1.json"), "--method", "newton", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["solved"] and out["method"] == "newton" and out["known_solution_distance"] <= 1e-8
    f = mcp_file_from_mpcc_json(MCPLIB / "kojshin_s2.json")
    path = save_mcp_file(tmp_path / "k.json", f.F, f.lb, f.ub, f.z0, f.p0, f.meta, f.name)
    assert main(["solve", str(path), "--method", "newton", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["known_solution_distance"] <= 1e-8


def planted_ncp(seed: int, n: int = 8) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``F(z) = A z + z^3 + q`` with ``A`` positive definite and a planted solution ``z*``."""
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, n))
    A = B @ B.T / n + np.eye(n)
    active = rng.random(n) < 0.5
    z = np.where(active, 0.0, rng.uniform(0.5, 2.0, n))
    w = np.where(active, rng.uniform(0.5, 2.0, n), 0.0)
    return A, w - A @ z - z**3, z


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("sparse_jacobian", [False, True])
def test_callables_find_a_planted_ncp_solution(seed: int, sparse_jacobian: bool) -> None:
    A, q, z_star = planted_ncp(seed)
    F = lambda z: A @ z + z**3 + q  # noqa: E731
    dense_J = lambda z: A + np.diag(3 * z**2)  # noqa: E731
    J = (lambda z: sps.csc_matrix(dense_J(z))) if sparse_jacobian else dense_J
    res = solve_mcp(F, J, 0.0, math.inf, np.ones(q.size), convergence_tolerance=1e-11)
    assert res.solved and res.method == "newton" and res.backend == "python", res.message
    np.testing.assert_allclose(res.z, z_star, atol=1e-9, rtol=0)
    np.testing.assert_allclose(res.F, F(res.z), rtol=0, atol=0)  # judged on the user's F


def test_callables_respect_the_iteration_limit() -> None:
    A, q, _ = planted_ncp(0)
    res = solve_mcp(
        lambda z: A @ z + z**3 + q,
        lambda z: A + np.diag(3 * z**2),
        0.0,
        math.inf,
        np.full(q.size, 50.0),
        major_iteration_limit=1,
    )
    assert not res.solved and res.iterations <= 1
    assert res.termination is mcpkit.Termination.ITERATION_LIMIT


def casadi_ncp(seed: int) -> tuple[ca.Function, np.ndarray, np.ndarray]:
    A, q, z_star = planted_ncp(seed)
    z, p = ca.MX.sym("z", q.size), ca.MX.sym("p", q.size)
    return ca.Function("ncp", [z, p], [ca.mtimes(ca.DM(A), z) + z**3 + p]), q, z_star


@pytest.mark.parametrize("method", ["newton", "auto"])
def test_casadi_function_with_parameters(method: str) -> None:
    F, q, z_star = casadi_ncp(1)
    res = solve_mcp(F, None, 0.0, math.inf, np.ones(q.size), p0=q, method=method, convergence_tolerance=1e-10)
    assert res.solved, res.message
    np.testing.assert_allclose(res.z, z_star, atol=1e-8, rtol=0)
    np.testing.assert_allclose(res.F, np.asarray(F(res.z, q)).reshape(-1), rtol=0, atol=0)


@pytest.mark.parametrize("method", ["newton", "lemke"])
def test_sparse_lcp_and_the_same_lcp_as_an_affine_casadi_function(method: str) -> None:
    n = 60
    M = sps.diags([-1.0, 2.5, -1.0], [-1, 0, 1], shape=(n, n), format="csr")  # an M-matrix
    rng = np.random.default_rng(5)
    active = rng.random(n) < 0.4
    z_star = np.where(active, 0.0, rng.uniform(0.1, 1.0, n))
    q = np.where(active, rng.uniform(0.1, 1.0, n), 0.0) - M @ z_star
    res = solve_mcp(M, q, 0.0, math.inf, method=method)
    assert res.solved and res.method == method, res.message
    np.testing.assert_allclose(res.z, z_star, atol=1e-10, rtol=0)
    z = ca.SX.sym("z", n)
    F = ca.Function("lcp", [z], [ca.mtimes(ca.DM(M), z) + ca.DM(q)])  # affine: lemke applies
    out = solve_mcp(F, None, 0.0, math.inf, method=method)
    assert out.solved, out.message
    np.testing.assert_allclose(out.z, z_star, atol=1e-10, rtol=0)


def test_dense_p_matrix_lcp_box() -> None:
    rng = np.random.default_rng(3)
    M = random_p_matrix(rng, 12)
    q = rng.standard_normal(12)
    res = solve_mcp(M, q, -1.0, 1.0, method="newton", convergence_tolerance=1e-12)
    assert res.solved, res.message
    w = M @ res.z + q
    assert np.abs(res.z - np.clip(res.z - w, -1.0, 1.0)).max() <= 1e-12


@needs_mcplib
@pytest.mark.parametrize("name", ["josephy_s1.json", "kojshin_s3.json", "nash_s1.json"])
def test_path_agrees_with_newton(name: str, require_path: None) -> None:
    f = mcp_file_from_mpcc_json(MCPLIB / name)
    kw = {"convergence_tolerance": 1e-10}
    newton = solve_mcp(f.F, None, f.lb, f.ub, f.z0, method="newton", **kw)
    path = solve_mcp(f.F, None, f.lb, f.ub, f.z0, method="path", **kw)
    assert newton.solved and path.solved, (newton.message, path.message)
    assert path.method == "path"
    np.testing.assert_allclose(path.z, newton.z, atol=1e-7, rtol=0)


def test_progress_receives_every_step() -> None:
    """``progress=`` sees the same step records the result's trace holds (a live display hook)."""
    seen: list = []
    res = solve_mcp(
        lambda z: np.array([z[0] ** 3 - 1.0]), lambda z: np.array([[3.0 * z[0] ** 2]]), 0.0, np.inf,
        np.array([3.0]), progress=seen.append,
    )  # fmt: skip
    assert res.solved and len(seen) == len(res.trace) > 1 and seen == res.trace
    with pytest.raises(mcpkit.MCPInputError):
        solve_mcp(np.eye(1), np.ones(1), 0.0, np.inf, None, progress="not callable")
