r"""Piles of spheres (issue 28): contacts, per-step cost in one-LU units, Siconos errors, by size.

For each number of bodies (default 50, 200, 500, 1000) :func:`mcpkit.models.pile.make_pile`
(seeded) is stepped ``--steps`` times by :func:`mcpkit.models.pile.simulate_pile`; every step's
local problem :math:`u = Wr + q`, :math:`W = H^TM^{-1}H`, is solved by the FCLIB-class contact
Newton (:func:`mcpkit.engines.newton_contact.solve_alart_curnier`, warm-started by contact
identity; when that run stops unsolved, the fallbacks of ``solve_local``: a cold run, a
Tikhonov continuation and the staged FCLIB solve; ``--engine staged`` tries the staged solve
first) and judged by the Siconos error (``tol = 1e-8``). Measured in one run on the same machine, per size:

* contacts per step (median, max);
* ``lu_ratio``: each step's solve time over ONE dense :func:`scipy.linalg.lu_factor` of that
  step's :math:`W` (the minimum of repeats, same process): median and max over the steps with
  contacts, and how many steps are within 100 (the issue's target);
* the Siconos error (max), steps solved, Newton steps, steps that needed a fallback, wall
  time.

``--dump-dir DIR`` writes the steps with 250 to 1,000 contacts (at most ``--dump-per-size`` per
size, evenly spaced) as FCLIB HDF5 files with their solutions (dev data for the FCLIB engine;
:func:`mcpkit.formats.fclib_hdf5.write_fclib_local`). ``--plot FILE`` draws the per-step cost and
error against contacts. Dense LAPACK on a shared 2-core machine is erratic with several BLAS
threads: run with ``OPENBLAS_NUM_THREADS=1`` (recorded in the JSON).

Run::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_pile.py [--sizes 50,200,500,1000] [--steps 20] \
        [--out pile.json] [--plot pile.png] [--dump-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

from mcpkit.formats.fclib_hdf5 import write_fclib_local
from mcpkit.models.pile import PileParams, make_pile
from mcpkit.models.pile.step import LocalProblem, PileStepRecord, carry_reactions, lu_seconds, solve_local

TARGET_LU = 100.0
DUMP_RANGE = (250, 1000)


def run_size(
    n_bodies: int, steps: int, seed: int, dump_dir: Path | None, dump_per_size: int, engine: str = "direct"
) -> dict[str, Any]:
    """Step one pile; returns its per-step rows and the size's summary (module docstring)."""
    pile = make_pile(n_bodies, seed=seed, params=PileParams(engine=engine))
    p = pile.params
    rows: list[dict[str, Any]] = []
    kept: list[tuple[int, LocalProblem, np.ndarray, np.ndarray]] = []
    prev = r_prev = None
    t0 = time.perf_counter()
    for k in range(steps):
        lp = pile.local_problem()
        r0, matched = carry_reactions(prev, r_prev, lp.contacts)
        ts = time.perf_counter()
        res, runs = solve_local(
            lp.W, lp.q, lp.mu, r0, p.tol, p.max_iter, p.step_time_limit, p.fallback_limit, p.engine
        )
        solve_s = time.perf_counter() - ts
        lu = lu_seconds(lp.W) if lp.nc else 0.0
        rec = PileStepRecord(
            step=k, t=pile.t + p.h, contacts=lp.nc, solved=res.solved, siconos_error=float(res.siconos_error),
            natural_residual=float(res.natural_residual), iterations=res.iterations, runs=runs,
            matched=matched, solve_s=solve_s, lu_s=lu, min_gap=float(lp.contacts.gap.min()) if lp.nc else 0.0,
            engine_message=res.message,
        )  # fmt: skip
        rows.append(rec.summary())
        if dump_dir is not None and DUMP_RANGE[0] <= lp.nc <= DUMP_RANGE[1] and res.solved:
            kept.append((k, lp, res.r.copy(), res.u.copy()))
        pile.advance(lp, res.r)
        prev, r_prev = lp.contacts, res.r
        print(
            f"  N={n_bodies:<5d} step {k:3d}: {lp.nc:5d} contacts, Siconos {res.siconos_error:.1e}, "
            f"{res.iterations:3d} Newton, {runs} run(s), {solve_s:7.2f} s = "
            f"{rec.lu_ratio if rec.lu_ratio is not None else float('nan'):7.1f} LU",
            flush=True,
        )
    wall = time.perf_counter() - t0
    files = []
    if kept and dump_dir is not None:
        dump_dir.mkdir(parents=True, exist_ok=True)
        pick = np.unique(np.linspace(0, len(kept) - 1, min(dump_per_size, len(kept))).round().astype(int))
        for i in pick:
            k, lp, r, u = kept[i]
            path = dump_dir / f"pile-N{n_bodies}-seed{seed}-step{k}-{lp.nc}c.hdf5"
            what = f"mcpkit benchmarks/bench_pile.py: {n_bodies} spheres, seed {seed}, step {k}"
            write_fclib_local(path, lp.W, lp.q, lp.mu, r=r, u=u, title=path.stem,
                              description=f"{what}, h = {p.h}, mu = {p.mu}")  # fmt: skip
            files.append(str(path))
    ratios = [r["lu_ratio"] for r in rows if r["lu_ratio"] is not None]
    contacts = [r["contacts"] for r in rows]
    return {
        "bodies": n_bodies,
        "steps": steps,
        "steps_solved": sum(r["solved"] for r in rows),
        "contacts_median": float(np.median(contacts)) if contacts else 0.0,
        "contacts_max": max(contacts, default=0),
        "max_siconos_error": max((r["siconos_error"] for r in rows), default=0.0),
        "median_lu_ratio": float(np.median(ratios)) if ratios else None,
        "max_lu_ratio": max(ratios) if ratios else None,
        "steps_within_100_lu": sum(x <= TARGET_LU for x in ratios),
        "newton_steps": sum(r["iterations"] for r in rows),
        "fallback_steps": sum(r["runs"] > 1 for r in rows),
        "wall_s": wall,
        "engine": engine,
        "fclib_files": files,
        "per_step": rows,
    }


def plot(results: list[dict[str, Any]], path: Path) -> None:
    """Per step: solve time in one-LU units and Siconos error against contacts, one colour per size."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 3.8))
    a1, a2 = fig.subplots(1, 2)
    for res in results:
        nc = [r["contacts"] for r in res["per_step"] if r["lu_ratio"] is not None]
        ratio = [r["lu_ratio"] for r in res["per_step"] if r["lu_ratio"] is not None]
        err = [max(r["siconos_error"], 1e-17) for r in res["per_step"] if r["lu_ratio"] is not None]
        a1.plot(nc, ratio, "o", ms=4, label=f"N = {res['bodies']}")
        a2.plot(nc, err, "o", ms=4, label=f"N = {res['bodies']}")
    a1.axhline(TARGET_LU, color="k", ls="--", lw=1)
    a1.set_yscale("log")
    a1.set_xlabel("contacts")
    a1.set_ylabel("step solve time / one dense LU of W")
    a1.legend(fontsize=8)
    a2.axhline(1e-8, color="k", ls="--", lw=1)
    a2.set_yscale("log")
    a2.set_xlabel("contacts")
    a2.set_ylabel("Siconos error")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--sizes", default="50,200,500,1000", help="numbers of bodies, comma-separated")
    ap.add_argument("--steps", type=int, default=20, help="steps per size")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, help="write all measurements as JSON")
    ap.add_argument("--plot", type=Path, help="write the per-step figure (PNG)")
    ap.add_argument("--dump-dir", type=Path, help="write steps with 250-1000 contacts as FCLIB files")
    ap.add_argument("--dump-per-size", type=int, default=2, help="at most this many files per size")
    ap.add_argument("--engine", default="direct", choices=("direct", "staged"), help="PileParams.engine")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    results = [
        run_size(n, args.steps, args.seed, args.dump_dir, args.dump_per_size, args.engine) for n in sizes
    ]
    head = f"{'bodies':>6} {'contacts':>13} {'solved':>7} {'max err':>8} {'med LU':>7} {'max LU':>8} " \
           f"{'<=100LU':>7} {'fallbk':>7} {'wall s':>7}"  # fmt: skip
    print(head)
    for r in results:
        med = "-" if r["median_lu_ratio"] is None else f"{r['median_lu_ratio']:.1f}"
        mx = "-" if r["max_lu_ratio"] is None else f"{r['max_lu_ratio']:.1f}"
        print(
            f"{r['bodies']:>6} {r['contacts_median']:>6.0f}/{r['contacts_max']:<6d} "
            f"{r['steps_solved']:>3}/{r['steps']:<3} {r['max_siconos_error']:>8.1e} {med:>7} {mx:>8} "
            f"{r['steps_within_100_lu']:>7} {r['fallback_steps']:>7} {r['wall_s']:>7.1f}"
        )
    if args.plot:
        plot(results, args.plot)
    if args.out:
        meta = {"python": platform.python_version(), "machine": platform.machine(),
                "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS")}  # fmt: skip
        args.out.write_text(json.dumps({"meta": meta, "results": results}, indent=1))
    return 0 if all(r["steps_solved"] == r["steps"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
