"""Iterations per second of the reduced vs the distributed planar LuGre model (seed 003, VI-D).

One iteration = one fixed explicit-Euler step of dt = 1e-5 s (Section IV-C): the bristle rate and
the CoP wrench from ``(z_k, v_k, f_N,k)``, then ``z_{k+1} = z_k + dt z'``.  Every step is causal
(no look-ahead at later twists), so the same code would serve a closed-loop simulation.  Both
models run side by side in one process on the 21 x 21 grid, Table I p = 1, Elasto-Plastic off,
on the Fig. 5 twist profile (0.8-1.0 s, where the CoR moves), and each model is measured in every
implementation we have; the headline ratio is best reduced / best distributed:

* distributed, NumPy  - :meth:`DistributedLuGre.euler_rollout`, the cells as (n, 2) arrays;
* distributed, CasADi SX / MX - :func:`casadi_euler_rollout` of the model's CasADi expressions
  (SX: scalar instructions; MX: one vector node per operation, 10 steps written out per
  function), ``Function.mapaccum`` over chunks of 500 steps;
* reduced (limit-surface table), Python floats - the reference ``derivative_and_wrench``;
* reduced (table / ellipsoid), CasADi SX - :func:`casadi_euler_rollout` with 50 steps written out
  per SX function (removes CasADi's per-call overhead, which dominates a 3-state model);
* the pre-computation (``r``, ``u`` and the N_ls = 20 table).

Everything runs in CasADi's virtual machine or NumPy: no generated or compiled code.  Each
implementation is checked against the reference Python/NumPy ``derivative_and_wrench`` on the
first 2000 steps.  The paper (C++, Tables II and V) reports 1.1e4 it/s distributed and 8.7e5 it/s
reduced (~80x) and 0.26 s pre-computation at 21 x 21.

Usage: ``python benchmarks/bench_lugre.py [--json] [--steps K] [--rounds R] [--shape circle]``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

import casadi as ca
import numpy as np

from mcpkit.models.friction.lugre import DistributedLuGre, casadi_euler_rollout
from mcpkit.models.friction.lugre_experiments import make_patch, paper_velocity_profile
from mcpkit.models.friction.lugre_params import LUGRE_P1
from mcpkit.models.friction.lugre_reduced import ReducedLuGre, precompute_limit_surface

DT = 1e-5
UNROLL_REDUCED = 50
CHUNK_DIST = 500
UNROLL_DIST_MX = 10
PAPER = {"distributed_it_per_s": 1.1e4, "reduced_it_per_s": 8.7e5, "ratio": 79.1, "precompute_s": 0.26}


def reference_rollout(model, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Euler steps with the reference ``derivative_and_wrench`` (u: (4, K)); final z, wrenches."""
    z = np.zeros(model.n_states)
    out = np.empty((u.shape[1], 3))
    for j in range(u.shape[1]):
        dz, out[j] = model.derivative_and_wrench(z, u[:3, j], u[3, j])
        z = z + DT * dz
    return z, out


def rel_diff(a: np.ndarray, b: np.ndarray) -> float:
    """max |a - b| / max |b|."""
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-300))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--steps", type=int, default=20000, help="Euler steps per timed run")
    ap.add_argument("--rounds", type=int, default=5, help="timed runs per implementation (best kept)")
    ap.add_argument("--shape", default="square", help="patch: square (441 loaded cells) or circle")
    args = ap.parse_args()
    k = max(args.steps - args.steps % 1000, 2000)

    patch = make_patch(args.shape, 0.02, 21)
    pre_times, table_times = [], []
    for _ in range(5):
        t0 = time.perf_counter()
        red = ReducedLuGre(patch, LUGRE_P1)
        pre_times.append(time.perf_counter() - t0)
        table_times.append(precompute_limit_surface(patch, 20).precompute_seconds)
    ell = ReducedLuGre(patch, LUGRE_P1, mode="ellipsoid")
    dist = DistributedLuGre(patch, LUGRE_P1)

    m_chk = 2000  # steps compared with the reference; also the reduced rollout's chunk
    ts = 0.8 + np.arange(k) * DT
    u = np.vstack([np.array([paper_velocity_profile(t) for t in ts]).T, np.ones((1, k))])
    build: dict[str, float] = {}

    def timed_build(name: str, fun: Callable[[], ca.Function]) -> ca.Function:
        t0 = time.perf_counter()
        f = fun()
        build[name] = time.perf_counter() - t0
        return f

    roll_red = timed_build(
        "reduced_table_casadi_sx", lambda: casadi_euler_rollout(red, DT, m_chk, unroll=UNROLL_REDUCED)
    )
    roll_ell = timed_build(
        "reduced_ellipsoid_casadi_sx", lambda: casadi_euler_rollout(ell, DT, m_chk, unroll=UNROLL_REDUCED)
    )
    # the distributed rollouts run in chunks (the state history of 882 x 20000 would be 140 MB)
    roll_dsx = timed_build(
        "distributed_casadi_sx", lambda: casadi_euler_rollout(dist, DT, CHUNK_DIST, unroll=1)
    )
    roll_dmx = timed_build(
        "distributed_casadi_mx",
        lambda: casadi_euler_rollout(dist, DT, CHUNK_DIST, unroll=UNROLL_DIST_MX, sym=ca.MX),
    )

    def np_dist(n: int) -> tuple[np.ndarray, np.ndarray]:
        return dist.euler_rollout(np.zeros(dist.n_states), u[:3, :n].T, u[3, :n], DT)

    def ca_run(f: ca.Function, nz: int) -> Callable[[int], tuple[np.ndarray, np.ndarray]]:
        """Run ``f`` (a rollout over ``m`` steps) over the first ``n`` steps, chunk by chunk."""
        m = f.size2_in(1)

        def run(n: int) -> tuple[np.ndarray, np.ndarray]:
            z = np.zeros(nz)
            ws = []
            for j in range(0, n, m):
                zs, w = f(z, u[:, j : j + m])
                z = zs[:, -1]
                ws.append(w)
            return z.full().ravel(), np.vstack([w.full().T for w in ws])

        return run

    def py_red(n: int) -> tuple[np.ndarray, np.ndarray]:
        return reference_rollout(red, u[:, :n])

    # name, model kind, runner, steps per timed run (the pure-Python reference is slow: fewer)
    impls = [
        ("distributed, NumPy", "distributed", np_dist, k),
        ("distributed, CasADi SX", "distributed", ca_run(roll_dsx, dist.n_states), k),
        ("distributed, CasADi MX (vector nodes)", "distributed", ca_run(roll_dmx, dist.n_states), k),
        ("reduced (table), Python floats", "reduced", py_red, min(k, 5000)),
        ("reduced (table), CasADi SX", "reduced", ca_run(roll_red, 3), k),
        ("reduced (ellipsoid), CasADi SX", "ellipsoid", ca_run(roll_ell, 3), k),
    ]
    best = {name: np.inf for name, *_ in impls}
    for _ in range(args.rounds):  # interleaved, so that load from other processes hits all alike
        for name, _kind, run, n in impls:
            t0 = time.perf_counter()
            run(n)
            best[name] = min(best[name], (time.perf_counter() - t0) / n)
    rates = {name: 1.0 / best[name] for name in best}

    # agreement with the reference implementations over the first m_chk steps
    z_ref_d, w_ref_d = reference_rollout(dist, u[:, :m_chk])
    z_ref_r, w_ref_r = reference_rollout(red, u[:, :m_chk])
    z_ref_e, w_ref_e = reference_rollout(ell, u[:, :m_chk])
    zd, wd = np_dist(m_chk)
    checks = {"distributed, NumPy": (rel_diff(zd, z_ref_d), rel_diff(wd, w_ref_d))}
    for name, kind, run, _n in impls:
        if name in checks or "Python" in name:
            continue
        zr, wr = {
            "distributed": (z_ref_d, w_ref_d),
            "reduced": (z_ref_r, w_ref_r),
            "ellipsoid": (z_ref_e, w_ref_e),
        }[kind]
        zs, ws = run(m_chk)
        checks[name] = (rel_diff(zs, zr), rel_diff(ws[:m_chk], wr))

    best_d = max((n for n, kind, *_ in impls if kind == "distributed"), key=rates.get)
    best_r = max((n for n, kind, *_ in impls if kind == "reduced"), key=rates.get)
    ratio = rates[best_r] / rates[best_d]
    res = {
        "shape": args.shape,
        "cells_loaded": dist.n_cells,
        "steps": k,
        "it_per_s": rates,
        "best_distributed": best_d,
        "best_reduced": best_r,
        "ratio_best_reduced_vs_best_distributed": ratio,
        "ratio_reduced_casadi_sx_vs_distributed_casadi_sx": rates["reduced (table), CasADi SX"]
        / rates["distributed, CasADi SX"],
        "ratio_ellipsoid_vs_best_distributed": rates["reduced (ellipsoid), CasADi SX"] / rates[best_d],
        "precompute_total_s_median": float(np.median(pre_times)),
        "precompute_table_s_median": float(np.median(table_times)),
        "casadi_build_s": build,
        "rel_diff_vs_reference_state_wrench": checks,
        "paper_cpp": PAPER,
    }
    if args.json:
        print(json.dumps(res))
        return
    print(
        f"planar LuGre, {args.shape} patch 21x21 ({dist.n_cells} loaded cells), Euler dt = {DT:g} s, "
        f"{k} steps, best of {args.rounds}"
    )
    print(f"{'implementation':40s} {'it/s':>10s}  {'check: rel. diff state, wrench':>30s}")
    for name in rates:
        chk = checks.get(name)
        chk_s = f"{chk[0]:.1e}, {chk[1]:.1e}" if chk else "(reference)"
        print(f"{name:40s} {rates[name]:10.3e}  {chk_s:>30s}")
    print(f"ratio best reduced / best distributed: {ratio:.1f}x  ({best_r} / {best_d}; paper C++ ~80x)")
    print(
        f"ratio CasADi SX / CasADi SX: {res['ratio_reduced_casadi_sx_vs_distributed_casadi_sx']:.1f}x; "
        f"ellipsoid / best distributed: {res['ratio_ellipsoid_vs_best_distributed']:.1f}x"
    )
    print(
        f"pre-computation (r, u, table N_ls=20): {np.median(pre_times):.3f} s "
        f"(table alone {np.median(table_times):.3f} s; paper 0.26 s); CasADi build: "
        + ", ".join(f"{n} {v:.2f} s" for n, v in build.items())
    )


if __name__ == "__main__":
    main()
