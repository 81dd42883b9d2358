"""Whole-horizon MPCCs against the horizon length N: block, pushing and plate design.

For N = 50, 100, 200, 400, 800, 1600 (``--steps``) each planner of :mod:`mcpkit.mpec.examples`
is built and solved once, in its own process (a fresh interpreter per solve, so no cache of one N
helps the next), under ``--time-limit`` seconds per call (default 120; the child is killed at
``1.5 * limit + 30`` s):

* **block** (``BlockTask(n_steps=N)``: same 1 s duration, ``h = 1/N``);
* **pushing** (``PushTask(n_steps=N)``: the seed-000 slider at its own ``h = 0.01`` s, so the
  horizon lasts ``N h``);
* **plate** (``PlateDesignTask(periods=1, steps_per_period=N)``: one plate period in N steps).

Per run: variables and pairs of the MPCC, the whole call's wall time (build, initial
simulation, MPCC solve with its checks, re-simulation) and CPU time of the child process, the
MPCC solve alone, IPOPT iterations (all subproblems and the polish, the coarse grids' solves of a
grid continuation included) and the solve's milliseconds per iteration, solved (the MPCC and the
re-simulation), objective, stationarity; per family the time ratio of each doubling of N (wall
and CPU; aim: at most 2.2). A shared machine makes wall times noisy; the CPU times and iteration
counts are what to compare between runs.

``--compare PYTHON`` runs every (family, N) also with another interpreter (for example one
that imports another checkout of mcpkit), alternating the two per case, and prints both.

Run: ``python benchmarks/bench_horizon_length.py [--family block pushing plate] [--steps 50 100 ...]
[--time-limit 120] [--compare /usr/bin/python3] [--json] [--out rows.json] [--plot fig.png]``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

FAMILIES = ("block", "pushing", "plate")


def solve_one(family: str, n: int, time_limit: float) -> dict[str, Any]:
    """Build and solve one horizon of ``family`` with ``n`` steps in this process."""
    t, c = time.perf_counter(), time.process_time()
    if family == "block":
        from mcpkit.mpec.examples.block import BlockTask, solve_block

        res, hz = solve_block(BlockTask(n_steps=n), time_limit=time_limit)
    elif family == "pushing":
        from mcpkit.mpec.examples.pushing import PushTask, solve_pushing

        res, hz = solve_pushing(PushTask(n_steps=n), time_limit=time_limit)
    elif family == "plate":
        from mcpkit.mpec.examples.plate_design import PlateDesignTask, solve_plate_design

        res, hz, _ = solve_plate_design(PlateDesignTask(periods=1, steps_per_period=n), time_limit=time_limit)
    else:
        raise ValueError(family)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    iters = int(getattr(res, "total_iterations", res.mpcc.iterations))  # coarse grids' solves included
    return {
        "family": family,
        "N": n,
        "variables": int(hz.mpcc.x.numel()),
        "pairs": int(hz.mpcc.n_pairs),
        "wall_s": wall,
        "cpu_s": cpu,
        "mpcc_s": float(res.mpcc.wall_time_s),
        "iterations": iters,
        "ms_per_iteration": 1000.0 * float(res.mpcc.wall_time_s) / max(iters, 1),
        "solved": bool(res.solved),
        "mpcc_solved": bool(res.mpcc.solved),
        "objective": float(res.objective),
        "stationarity": str(res.mpcc.stationarity),
        "message": res.message[:200],
        "coarse_grids": [len(c.t) - 1 for c in getattr(res, "coarse", ())],
        "time_limit_s": time_limit,
    }


def run_isolated(family: str, n: int, time_limit: float, python: str | None = None) -> dict[str, Any]:
    """:func:`solve_one` in a fresh interpreter (``python``, default this one; killed at
    ``1.5 * time_limit + 30`` s)."""
    cmd = [python or sys.executable, str(Path(__file__).resolve()), "--one", family, str(n),
           "--time-limit", str(time_limit)]  # fmt: skip
    t = time.perf_counter()
    base = {"family": family, "N": n, "python": python or "this", "solved": False, "time_limit_s": time_limit}
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1.5 * time_limit + 30,
                              cwd=tempfile.gettempdir())  # fmt: skip
    except subprocess.TimeoutExpired:
        return {**base, "wall_s": time.perf_counter() - t, "message": "killed"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        err = (proc.stderr.strip().splitlines() or ["no output"])[-1][:200]
        return {**base, "wall_s": time.perf_counter() - t, "message": err}
    row = {**base, **json.loads(lines[-1])}
    row["process_s"] = time.perf_counter() - t
    return row


def doubling_ratios(rows: list[dict[str, Any]], key: str = "wall_s") -> dict[str, list[float]]:
    """Per family (and interpreter), ``key(2N) / key(N)`` for consecutive solved N that double."""
    out: dict[str, list[float]] = {}
    for fam in FAMILIES:
        for py in sorted({x.get("python", "this") for x in rows}):
            r = sorted((x for x in rows if x["family"] == fam and x.get("python", "this") == py and key in x),
                       key=lambda x: x["N"])  # fmt: skip
            ratios = [b[key] / a[key] for a, b in zip(r, r[1:], strict=False)
                      if b["N"] == 2 * a["N"] and a["solved"] and b["solved"]]  # fmt: skip
            if ratios:
                out[fam if py == "this" else f"{fam} ({py})"] = ratios
    return out


def table(rows: list[dict[str, Any]]) -> str:
    """One line per run: family, N, interpreter, size, times, iterations, ms/iteration, verdict."""
    head = (f"{'family':<8} {'N':>5} {'python':<16} {'vars':>7} {'wall s':>8} {'cpu s':>7} {'mpcc s':>7} "
            f"{'iters':>6} {'ms/it':>7} {'solved':<6} {'objective':>13} class")  # fmt: skip
    out = [head]
    for r in rows:
        v = {k: (format(r[k], f) if isinstance(r.get(k), (int, float)) else "-") for k, f in (
            ("variables", "d"), ("wall_s", ".1f"), ("cpu_s", ".1f"), ("mpcc_s", ".1f"), ("iterations", "d"),
            ("ms_per_iteration", ".1f"), ("objective", ".6g"))}  # fmt: skip
        py = str(r.get("python", "this"))[-16:]
        out.append(f"{r['family']:<8} {r['N']:>5} {py:<16} {v['variables']:>7} {v['wall_s']:>8} "
                   f"{v['cpu_s']:>7} {v['mpcc_s']:>7} {v['iterations']:>6} {v['ms_per_iteration']:>7} "
                   f"{str(r['solved']):<6} {v['objective']:>13} "
                   f"{r.get('stationarity', r.get('message', ''))[:40]}")  # fmt: skip
    return "\n".join(out)


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.0, 3.8))
    for fam, mark in zip(FAMILIES, "osd", strict=True):
        r = sorted((x for x in rows if x["family"] == fam), key=lambda x: x["N"])
        if not r:
            continue
        n = np.array([x["N"] for x in r], dtype=float)
        w = np.array([x["wall_s"] for x in r], dtype=float)
        ok = np.array([x["solved"] for x in r], dtype=bool)
        (line,) = ax.plot(n, w, "-", marker=mark, label=fam)
        ax.plot(n[~ok], w[~ok], "x", color=line.get_color(), ms=10, mew=2)
    n0 = np.array([50.0, 1600.0])
    ax.plot(n0, 1.0 * (n0 / 50.0) ** np.log2(2.2), ":", color="0.5", label="2.2x per doubling")
    ax.set_xscale("log", base=2)
    ns = sorted({x["N"] for x in rows})
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.set_yscale("log")
    limit = max((x.get("time_limit_s", 0.0) for x in rows), default=0.0)
    if limit:
        ax.axhline(limit, color="0.6", lw=0.8, ls="--", label=f"time limit {limit:g} s")
    ax.set_xlabel("horizon length N (steps)")
    ax.set_ylabel("whole call [s]")
    ax.set_title("Horizon MPCCs against N (x: not solved)", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", nargs="*", choices=FAMILIES, default=list(FAMILIES))
    ap.add_argument("--steps", nargs="*", type=int, default=[50, 100, 200, 400, 800, 1600])
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--compare", default=None, help="another interpreter, run alternately with this one")
    ap.add_argument("--one", nargs=2, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--plot", type=Path, default=None)
    ap.add_argument("--from-json", type=Path, default=None, help="re-plot a saved --out file")
    args = ap.parse_args()
    if args.one:
        print(json.dumps(solve_one(args.one[0], int(args.one[1]), args.time_limit)))
        return
    if args.from_json:
        rows = json.loads(args.from_json.read_text())["rows"]
    else:
        rows = []
        for fam in args.family:
            for n in args.steps:
                for py in [None, args.compare] if args.compare else [None]:
                    row = run_isolated(fam, n, args.time_limit, py)
                    rows.append(row)
                    if not args.json:
                        print(table([row]).splitlines()[1], flush=True)
    # a re-plotted file reports the limit its rows ran under, not this command's default
    limit = args.time_limit
    if args.from_json:
        limit = max((r.get("time_limit_s", 0.0) for r in rows), default=0.0)
    summary = {"doubling_ratios": doubling_ratios(rows),
               "doubling_ratios_cpu": doubling_ratios(rows, "cpu_s"), "time_limit_s": limit}  # fmt: skip
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    if args.plot:
        plot([r for r in rows if r.get("python", "this") == "this"], args.plot)
    if args.json:
        print(json.dumps({"summary": summary, "rows": rows}, indent=1))
    else:
        print(table(rows))
        print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
