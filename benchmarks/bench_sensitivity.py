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
* **sensitivity**: ``result.sensitivity()`` (full :math:`dz/dp`, :math:`n \times 1`) at a new
  solution, with the CasADi derivative functions already built for the structure (that one-off
  build is reported apart as **first sensitivity**).

The ratios printed are sensitivity / cold solve and sensitivity / warm re-solve (issue 29's target:
at most 0.3 for :math:`n \ge 100`), with the spread (min-max over the repeats) of the cold solve,
and the derivative's agreement with central differences (relative, max norm).

The central differences re-solve at :math:`p \pm h` (:math:`h = 10^{-6}`) with a second solver at
``tol = 1e-13``: a re-solve stopped at ``tol = 1e-10`` leaves errors of order :math:`10^{-11}` in
:math:`z` on free pairs, which the difference divides by :math:`2h`, so differences of the
benchmark's own solves agree with the exact derivative only to about :math:`10^{-5}` (measured:
1.3e-5 on the permuted :math:`n = 1000` LCP), an error of the differences, not of the derivative.

``--matrix`` chooses :math:`M`:

* ``tridiagonal`` (default): :math:`J_{II}` is a band (LAPACK's banded LU);
* ``permuted`` (or ``--permuted``): the same matrix permuted symmetrically, its band destroyed;
  the reverse Cuthill-McKee order of :math:`J`'s pattern (computed once per structure, part of
  **first sensitivity**) recovers it, so :math:`J_{II}` goes to the banded LU in that order (before
  that order was used, to SuperLU);
* ``grid``: the 5-point Laplacian plus :math:`I` of a grid :math:`w = \lceil\sqrt n\,\rceil` wide
  (:math:`n` nodes filled row by row: an obstacle problem), band :math:`2w + 1` in every ordering
  up to a constant, so SuperLU beyond :math:`w = 15`;
* ``random``: :math:`M = D + R` with :math:`R` two random entries per row at random columns
  (values in :math:`[-1, 1]`) and :math:`D` the diagonal making each row strictly diagonally
  dominant (so a P-matrix); no ordering makes it narrow-banded, so :math:`J_{II}` goes to SuperLU.

Prints a table; ``--json`` prints one JSON object.

Run: ``python benchmarks/bench_sensitivity.py [--sizes 10 100 1000 10000] [--repeats 5]
[--matrix tridiagonal|permuted|random] [--json]``.
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

MATRICES = ("tridiagonal", "permuted", "grid", "random")


def build(
    n: int, seed: int = 0, permuted: bool = False, matrix: str | None = None
) -> tuple[mcpkit.MCP, float]:
    """The benchmark LCP (module docstring) and its nominal parameter value.

    ``matrix`` is one of :data:`MATRICES`; ``permuted=True`` is ``matrix="permuted"``.
    """
    matrix = matrix or ("permuted" if permuted else "tridiagonal")
    rng = np.random.default_rng(seed)
    M = sps.diags([-1.0, 4.0, -1.0], [-1, 0, 1], shape=(n, n), format="csr")
    if matrix == "permuted":  # the same matrix with its band destroyed (until it is reordered)
        perm = rng.permutation(n)
        M = M[perm][:, perm].tocsr()
    elif matrix == "grid":  # 5-point Laplacian + I on a grid w wide, filled row by row
        w = int(np.ceil(np.sqrt(n)))
        i = np.arange(n)
        right = i[(i % w < w - 1) & (i + 1 < n)]
        down = i[i + w < n]
        r = np.concatenate([right, right + 1, down, down + w])
        c = np.concatenate([right + 1, right, down + w, down])
        M = (sps.csr_array((-np.ones(r.size), (r, c)), shape=(n, n)) + 5.0 * sps.eye_array(n)).tocsr()
    elif matrix == "random":  # two random off-diagonal entries per row, strictly diagonally dominant
        rows = np.repeat(np.arange(n), 2)
        cols = (rows + rng.integers(1, max(n, 2), rows.size)) % n
        R = sps.csr_array((rng.uniform(-1.0, 1.0, rows.size), (rows, cols)), shape=(n, n))
        M = (R + sps.diags_array(1.0 + abs(R).sum(axis=1))).tocsr()
    elif matrix != "tridiagonal":
        raise ValueError(f"matrix must be one of {MATRICES}, got {matrix!r}")
    q0 = rng.standard_normal(n)
    d = rng.standard_normal(n)
    mcp = mcpkit.MCP(f"tridiag_lcp_{n}")
    mcp.add_variables("z", n, lb=0.0)
    (t,) = mcp.add_parameters("t", 1, value=0.0)
    mcp.add_affine("z", M, [sp.Float(float(a)) + sp.Float(float(b)) * t for a, b in zip(q0, d, strict=True)])
    return mcp, 0.0


def _times(fn: Any, repeats: int) -> tuple[list[float], Any]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return times, out


def _median_time(fn: Any, repeats: int) -> tuple[float, Any]:
    times, out = _times(fn, repeats)
    return statistics.median(times), out


def run(
    n: int, repeats: int, permuted: bool = False, h: float = 1e-6, matrix: str | None = None
) -> dict[str, Any]:
    matrix = matrix or ("permuted" if permuted else "tridiagonal")
    mcp, t0 = build(n, matrix=matrix)
    tb = time.perf_counter()
    solver = mcpkit.Solver(mcp, backend="casadi", method="newton", tol=1e-10)
    build_s = time.perf_counter() - tb
    p = np.array([t0])
    cold_times, res = _times(lambda: solver.solve(p=p, warm_start=False), repeats)
    cold_s = statistics.median(cold_times)
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
    # central differences from tight re-solves (module docstring: tol = 1e-10 re-solves are not
    # accurate enough for h = 1e-6), both warm-started at z*(p)
    fine = mcpkit.Solver(mcp, backend="casadi", method="newton", tol=1e-13)
    plus_f = fine.solve(p=p + h, z0=res.z)
    minus_f = fine.solve(p=p - h, z0=res.z)
    assert plus_f.solved and minus_f.solved, (plus_f, minus_f)
    fd = (plus_f.z - minus_f.z) / (2 * h)
    err = float(np.abs(S[:, 0] - fd).max() / max(np.abs(fd).max(), 1e-300))
    return {
        "n": n,
        "matrix": matrix,
        "active": int(res.pair_counts().get("at_lower", 0)),
        "build_solver_s": build_s,
        "cold_solve_s": cold_s,
        "cold_solve_min_s": min(cold_times),
        "cold_solve_max_s": max(cold_times),
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
    ap.add_argument("--matrix", choices=MATRICES, default=None, help="M (module docstring)")
    ap.add_argument("--permuted", action="store_true", help="same as --matrix permuted")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    matrix = args.matrix or ("permuted" if args.permuted else "tridiagonal")
    rows = [run(n, args.repeats, matrix=matrix) for n in args.sizes]
    if args.json:
        print(json.dumps({"benchmark": "sensitivity", "rows": rows}, indent=1))
        return
    print(f"M: {matrix}")
    head = (
        f"{'n':>6} {'active':>6} {'cold solve':>11} {'(min-max)':>15} {'warm solve':>11} "
        f"{'sens (1st)':>11} {'sens':>9} "
        f"{'sens/cold':>9} {'sens/warm':>9} {'FD/sens':>8} {'err vs FD':>9}"
    )
    print(head)
    for r in rows:
        print(
            f"{r['n']:>6} {r['active']:>6} {r['cold_solve_s'] * 1e3:>9.2f}ms "
            f"{r['cold_solve_min_s'] * 1e3:>6.2f}-{r['cold_solve_max_s'] * 1e3:<6.2f}ms "
            f"{r['warm_resolve_s'] * 1e3:>9.2f}ms "
            f"{r['first_sensitivity_s'] * 1e3:>9.2f}ms {r['sensitivity_s'] * 1e3:>7.2f}ms "
            f"{r['sens_over_cold']:>9.3f} {r['sens_over_warm']:>9.3f} {r['fd_over_sens']:>8.2f} "
            f"{r['rel_err_vs_central_fd']:>9.1e}"
        )


if __name__ == "__main__":
    main()
