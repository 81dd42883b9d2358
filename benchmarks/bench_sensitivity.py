r"""Cost of ``MCPResult.sensitivity()`` against one solve and against finite differences (issue 29).

The problem is a sparse LCP with one parameter :math:`t` (:math:`n_p = 1`),

.. math::

    0 \le z \perp M z + q_0 + d\,t \ge 0,\qquad M = \mathrm{tridiag}(-1, 4, -1)\ (\text{a P-matrix}),

:math:`q_0, d` random (about half the pairs active), for :math:`n = 10, 100, 1000, 10^4`, solved by
``mcpkit.Solver(method="newton")`` (sparse semismooth Newton, SuperLU) at ``tol = 1e-10``. In one
process, per :math:`n` (medians of ``--repeats`` runs):

* **cold solve**: ``solver.solve(p, warm_start=False)`` from the declaration's start;
* **warm re-solve**: ``solver.solve(p + h)`` warm-started from the solution at ``p``: the cost of
  one forward finite difference, i.e. finite differences cost :math:`n_p` of these;
With ``--permuted`` the same matrix is permuted symmetrically, so :math:`J_{II}` is a general
sparse matrix (SuperLU) instead of a band (LAPACK's banded LU).

* **sensitivity**: ``result.sensitivity()`` (full :math:`dz/dp`, :math:`n \times 1`) at a new
  solution, with the CasADi derivative functions already built for the structure (that one-off
  build is reported apart as **first sensitivity**).

The ratios printed are sensitivity / cold solve and sensitivity / warm re-solve (issue 29's target:
at most 0.3 for :math:`n \ge 100`), and the derivative's agreement with central differences
(relative, max norm). Prints a table; ``--json`` prints one JSON object.

Run: ``python benchmarks/bench_sensitivity.py [--sizes 10 100 1000 10000] [--repeats 5] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

import numpy as np
import scipy.sparse as sps
import sympy as sp

import mcpkit


def build(n: int, seed: int = 0, permuted: bool = False) -> tuple[mcpkit.MCP, float]:
    """The benchmark LCP (module docstring) and its nominal parameter value."""
    rng = np.random.default_rng(seed)
    M = sps.diags([-1.0, 4.0, -1.0], [-1, 0, 1], shape=(n, n), format="csr")
    if permuted:  # the same matrix with its band destroyed: J_II goes to SuperLU, not the banded LU
        perm = rng.permutation(n)
        M = M[perm][:, perm].tocsr()
    q0 = rng.standard_normal(n)
    d = rng.standard_normal(n)
    mcp = mcpkit.MCP(f"tridiag_lcp_{n}")
    mcp.add_variables("z", n, lb=0.0)
    (t,) = mcp.add_parameters("t", 1, value=0.0)
    mcp.add_affine("z", M, [sp.Float(float(a)) + sp.Float(float(b)) * t for a, b in zip(q0, d, strict=True)])
    return mcp, 0.0


def _median_time(fn: Any, repeats: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def run(n: int, repeats: int, permuted: bool = False, h: float = 1e-6) -> dict[str, Any]:
    mcp, t0 = build(n, permuted=permuted)
    tb = time.perf_counter()
    solver = mcpkit.Solver(mcp, backend="casadi", method="newton", tol=1e-10)
    build_s = time.perf_counter() - tb
    p = np.array([t0])
    cold_s, res = _median_time(lambda: solver.solve(p=p, warm_start=False), repeats)
    assert res.solved, res
    first = time.perf_counter()
    S = res.sensitivity()
    first_s = time.perf_counter() - first

    def warm() -> mcpkit.MCPResult:
        solver.solve(p=p, z0=res.z)  # re-seat the warm start at z*(p)
        t = time.perf_counter()
        r = solver.solve(p=p + h)
        warm_times.append(time.perf_counter() - t)
        return r

    warm_times: list[float] = []
    for _ in range(repeats):
        plus = warm()
    warm_s = statistics.median(warm_times)
    assert plus.solved, plus
    # a new solution, so the sensitivity recomputes J, J_p and the LU (only the CasADi build is shared)
    res2 = solver.solve(p=p + 2 * h, warm_start=False)
    sens_s, S2 = _median_time(res2.sensitivity, repeats)
    minus = solver.solve(p=p - h)
    fd = (plus.z - minus.z) / (2 * h)
    err = float(np.abs(S[:, 0] - fd).max() / max(np.abs(fd).max(), 1e-300))
    return {
        "n": n,
        "matrix": "permuted tridiagonal" if permuted else "tridiagonal",
        "active": int(res.pair_counts().get("at_lower", 0)),
        "build_solver_s": build_s,
        "cold_solve_s": cold_s,
        "warm_resolve_s": warm_s,
        "first_sensitivity_s": first_s,
        "sensitivity_s": sens_s,
        "sens_over_cold": sens_s / cold_s,
        "sens_over_warm": sens_s / warm_s,
        "fd_over_sens": warm_s / sens_s,
        "rel_err_vs_central_fd": err,
        "iterations_cold": int(res.iterations),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000, 10000])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--permuted", action="store_true", help="permute M symmetrically (general sparse J)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = [run(n, args.repeats, args.permuted) for n in args.sizes]
    if args.json:
        print(json.dumps({"benchmark": "sensitivity", "rows": rows}, indent=1))
        return
    head = (
        f"{'n':>6} {'active':>6} {'cold solve':>11} {'warm solve':>11} {'sens (1st)':>11} {'sens':>9} "
        f"{'sens/cold':>9} {'sens/warm':>9} {'FD/sens':>8} {'err vs FD':>9}"
    )
    print(head)
    for r in rows:
        print(
            f"{r['n']:>6} {r['active']:>6} {r['cold_solve_s'] * 1e3:>9.2f}ms "
            f"{r['warm_resolve_s'] * 1e3:>9.2f}ms "
            f"{r['first_sensitivity_s'] * 1e3:>9.2f}ms {r['sensitivity_s'] * 1e3:>7.2f}ms "
            f"{r['sens_over_cold']:>9.3f} {r['sens_over_warm']:>9.3f} {r['fd_over_sens']:>8.2f} "
            f"{r['rel_err_vs_central_fd']:>9.1e}"
        )


if __name__ == "__main__":
    main()
