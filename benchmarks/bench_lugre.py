"""Iterations per second of the reduced vs the distributed planar LuGre model (seed 003, VI-D).

Measured side by side in one process, 21 x 21 cells, Table I p = 1, Elasto-Plastic off:

* ``numpy``   - one right-hand-side evaluation (bristle rate + wrench) per call, vectorised NumPy
                for the distributed model, plain-Python floats for the reduced model;
* ``casadi``  - fixed explicit-Euler steps (dt = 1e-5 s, Section IV-C) of an SX step function
                rolled out with ``Function.mapaccum`` (CasADi's virtual machine, no C code), for
                both models;
* the limit-surface pre-computation time (eqs 25, 29 and the N_ls = 20 table).

The paper (C++, Tables II and V) reports 1.1e4 it/s distributed vs 8.7e5 it/s reduced (~80x)
and 0.26 s pre-computation at 21 x 21.

Usage: ``python benchmarks/bench_lugre.py [--json] [--steps K]``.
"""

from __future__ import annotations

import argparse
import json
import time

import casadi as ca
import numpy as np

from mcpkit.models.friction.lugre import DistributedLuGre
from mcpkit.models.friction.lugre_experiments import make_patch, paper_velocity_profile
from mcpkit.models.friction.lugre_params import LUGRE_P1
from mcpkit.models.friction.lugre_reduced import ReducedLuGre, precompute_limit_surface


def _rate(fun, min_time: float = 0.5) -> float:
    n, total = 0, 0.0
    reps = 100
    while total < min_time:
        t0 = time.perf_counter()
        for _ in range(reps):
            fun()
        total += time.perf_counter() - t0
        n += reps
    return n / total


def _g(nv: ca.SX) -> ca.SX:
    p = LUGRE_P1
    return p.mu_c + (p.mu_s - p.mu_c) * ca.exp(-(nv / p.v_s) ** 2)


def casadi_reduced_step(model: ReducedLuGre, dt: float) -> ca.Function:
    """SX Euler step of eqs (28), (33) with the table read back by a linear interpolant."""
    p = model.params
    z = ca.SX.sym("z", 3)
    u = ca.SX.sym("u", 4)  # vx, vy, omega, fN
    vx, vy, w, fn = u[0], u[1], u[2], u[3]
    r = model.r
    nv = ca.sqrt(vx**2 + vy**2 + (r * w) ** 2 + 1e-300)
    tab = model.table
    assert tab is not None
    theta_grid = list(np.arange(4 * tab.n_ls + 1) * np.pi / (2 * tab.n_ls))
    phi_grid = list(np.arange(tab.n_ls + 1) * np.pi / (2 * tab.n_ls))
    # casadi layout: output index fastest, then first grid dimension, then second
    vals = np.transpose(tab.values, (1, 0, 2)).ravel()
    interp = ca.interpolant("h", "linear", [theta_grid, phi_grid], vals)
    sgn = ca.if_else(w >= 0, 1.0, -1.0)
    theta = ca.atan2(vy, vx) + ca.if_else(w >= 0, 0.0, np.pi)
    theta = ca.fmod(theta + 4 * np.pi, 2 * np.pi)
    phi = ca.atan2(ca.sqrt(vx**2 + vy**2), r * ca.fabs(w))
    h = -sgn * interp(ca.vertcat(theta, phi))
    g = _g(nv)
    s_h = ca.vertcat(h[0], h[1], r * h[2])
    dz = s_h * nv - z * p.sigma0 * nv / g
    wrench = -(p.sigma0 * z + p.sigma1 * dz + p.sigma2 * ca.vertcat(vx, vy, model.u * w)) * fn
    return ca.Function("step", [z, u], [z + dt * dz, wrench])


def casadi_distributed_step(model: DistributedLuGre, dt: float) -> ca.Function:
    """SX Euler step of eqs (10), (21)-(22) for all cells (vectorised SX expressions)."""
    p = model.params
    n = model.n_cells
    z = ca.SX.sym("z", 2 * n)
    u = ca.SX.sym("u", 4)
    vx, vy, w, fn = u[0], u[1], u[2], u[3]
    x, y, wt = (ca.DM(a) for a in (model.patch.x, model.patch.y, model.patch.w))
    zx, zy = z[0::2], z[1::2]
    cvx = vx - w * y
    cvy = vy + w * x
    vn = ca.sqrt(cvx**2 + cvy**2)
    k = p.sigma0 * vn / _g(vn)
    dzx = cvx - k * zx
    dzy = cvy - k * zy
    lx = (p.sigma0 * zx + p.sigma1 * dzx + p.sigma2 * cvx) * wt
    ly = (p.sigma0 * zy + p.sigma1 * dzy + p.sigma2 * cvy) * wt
    wrench = -fn * ca.vertcat(ca.sum1(lx), ca.sum1(ly), ca.dot(x, ly) - ca.dot(y, lx))
    dz = ca.reshape(ca.horzcat(dzx, dzy).T, 2 * n, 1)
    return ca.Function("step", [z, u], [z + dt * dz, wrench])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--steps", type=int, default=20000, help="Euler steps per CasADi rollout")
    ap.add_argument("--shape", default="square", help="patch: square (441 loaded cells) or circle")
    args = ap.parse_args()

    patch = make_patch(args.shape, 0.02, 21)
    dist = DistributedLuGre(patch, LUGRE_P1)
    pre_times = []
    for _ in range(5):
        t0 = time.perf_counter()
        red = ReducedLuGre(patch, LUGRE_P1)
        pre_times.append(time.perf_counter() - t0)
    table_times = [precompute_limit_surface(patch, 20).precompute_seconds for _ in range(5)]
    ell = ReducedLuGre(patch, LUGRE_P1, mode="ellipsoid")

    twist = np.array([0.004, 0.002, 0.6])
    zd = np.full(dist.n_states, 1e-7)
    zr = np.array([1e-7, 2e-7, 1e-9])
    it_dist = _rate(lambda: dist.derivative_and_wrench(zd, twist, 1.0))
    it_red = _rate(lambda: red.derivative_and_wrench(zr, twist, 1.0))
    it_ell = _rate(lambda: ell.derivative_and_wrench(zr, twist, 1.0))

    dt = 1e-5
    k = args.steps
    ts = np.arange(k) * dt + 0.8  # part of the Fig. 5 profile where the CoR moves
    u = np.array([np.append(paper_velocity_profile(t), 1.0) for t in ts]).T
    step_r = casadi_reduced_step(red, dt)
    step_d = casadi_distributed_step(dist, dt)
    roll_r = step_r.mapaccum("roll_r", k)
    roll_d = step_d.mapaccum("roll_d", k)

    def timed(fun, *a):
        best = np.inf
        out = None
        for _ in range(3):
            t0 = time.perf_counter()
            out = fun(*a)
            best = min(best, time.perf_counter() - t0)
        return best, out

    t_r, (zr_roll, wr_roll) = timed(roll_r, np.zeros(3), u)
    t_d, (zd_roll, wd_roll) = timed(roll_d, np.zeros(dist.n_states), u)
    it_cas_red = k / t_r
    it_cas_dist = k / t_d

    # consistency: CasADi rollout vs the Python models stepping the same Euler recursion
    z = np.zeros(3)
    zdn = np.zeros(dist.n_states)
    m = min(k, 2000)
    for j in range(m):
        z = z + dt * red.derivative_and_wrench(z, u[:3, j], 1.0)[0]
        zdn = zdn + dt * dist.derivative_and_wrench(zdn, u[:3, j], 1.0)[0]
    chk_r = float(np.max(np.abs(np.asarray(zr_roll)[:, m - 1] - z)) / max(np.abs(z).max(), 1e-30))
    chk_d = float(np.max(np.abs(np.asarray(zd_roll)[:, m - 1] - zdn))
                  / max(np.abs(zdn).max(), 1e-30))

    res = {
        "shape": args.shape,
        "cells_loaded": dist.n_cells,
        "numpy_distributed_rhs_per_s": it_dist,
        "python_reduced_ls_rhs_per_s": it_red,
        "python_reduced_ellipsoid_rhs_per_s": it_ell,
        "ratio_python_reduced_vs_numpy_distributed": it_red / it_dist,
        "casadi_distributed_steps_per_s": it_cas_dist,
        "casadi_reduced_ls_steps_per_s": it_cas_red,
        "ratio_casadi_reduced_vs_casadi_distributed": it_cas_red / it_cas_dist,
        "ratio_casadi_reduced_vs_numpy_distributed": it_cas_red / it_dist,
        "precompute_total_s_median": float(np.median(pre_times)),
        "precompute_table_s_median": float(np.median(table_times)),
        "casadi_vs_python_rel_state_diff_reduced": chk_r,
        "casadi_vs_numpy_rel_state_diff_distributed": chk_d,
        "paper_cpp": {"distributed_it_per_s": 1.1e4, "reduced_it_per_s": 8.7e5, "ratio": 79.1,
                      "precompute_s": 0.26},
    }
    if args.json:
        print(json.dumps(res))
        return
    print(f"planar LuGre benchmark, {args.shape} patch 21x21 ({dist.n_cells} loaded cells)")
    print(f"{'implementation':44s} {'it/s':>12s}")
    print(f"{'distributed, NumPy RHS':44s} {it_dist:12.3e}")
    print(f"{'reduced (LS table), Python-float RHS':44s} {it_red:12.3e}")
    print(f"{'reduced (ellipsoid), Python-float RHS':44s} {it_ell:12.3e}")
    print(f"{'distributed, CasADi SX Euler steps':44s} {it_cas_dist:12.3e}")
    print(f"{'reduced (LS table), CasADi SX Euler steps':44s} {it_cas_red:12.3e}")
    print(f"ratio reduced/distributed: python/numpy {it_red / it_dist:.1f}x, "
          f"casadi/casadi {it_cas_red / it_cas_dist:.1f}x, "
          f"casadi/numpy {it_cas_red / it_dist:.1f}x  (paper C++: ~80x)")
    print(f"pre-computation (r, u, table N_ls=20): {np.median(pre_times):.3f} s "
          f"(table alone {np.median(table_times):.3f} s; paper 0.26 s)")
    print(f"check: CasADi vs Python Euler states rel. diff: reduced {chk_r:.1e}, "
          f"distributed {chk_d:.1e}")


if __name__ == "__main__":
    main()
