"""Whole-horizon MPCCs against the horizon length N: block, pushing and plate design.

For N = 25, 50, 100, 200, 400 (``--steps``) each planner of :mod:`mcpkit.mpec.examples` is
built and solved once, in its own process (``--isolate``, the default; a fresh interpreter per
solve, so no cache of one N helps the next), under ``--time-limit`` seconds:

* **block** (``BlockTask(n_steps=N)``: same 1 s duration, ``h = 1/N``);
* **pushing** (``PushTask(n_steps=N)``: the seed-000 slider at its own ``h = 0.01`` s, so the
  horizon lasts ``N h``);
* **plate** (``PlateDesignTask(periods=1, steps_per_period=N)``: one plate period in N steps).

Per run: variables and pairs of the MPCC, the whole call's wall time (build, initial
simulation, MPCC solve with its checks, re-simulation), the MPCC solve alone, solved (the MPCC
and the re-simulation), objective, stationarity; per family the time ratio of each doubling of
N (aim: at most 2.5).

Run: ``python benchmarks/bench_horizon_length.py [--family block pushing plate] [--steps 25 50 ...]
[--time-limit 300] [--json] [--out rows.json] [--plot fig.png]``.
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
    t = time.perf_counter()
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
    wall = time.perf_counter() - t
    return {
        "family": family,
        "N": n,
        "variables": int(hz.mpcc.x.numel()),
        "pairs": int(hz.mpcc.n_pairs),
        "wall_s": wall,
        "mpcc_s": float(res.mpcc.wall_time_s),
        "solved": bool(res.solved),
        "mpcc_solved": bool(res.mpcc.solved),
        "objective": float(res.objective),
        "stationarity": str(res.mpcc.stationarity),
        "message": res.message[:200],
        "time_limit_s": time_limit,
    }


def run_isolated(family: str, n: int, time_limit: float) -> dict[str, Any]:
    """:func:`solve_one` in a fresh interpreter (killed at ``3 * time_limit + 60`` s)."""
    cmd = [sys.executable, __file__, "--one", family, str(n), "--time-limit", str(time_limit)]
    t = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3 * time_limit + 60,
                              cwd=tempfile.gettempdir())  # fmt: skip
    except subprocess.TimeoutExpired:
        wall = time.perf_counter() - t
        return {"family": family, "N": n, "wall_s": wall, "solved": False, "message": "killed"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        err = (proc.stderr.strip().splitlines() or ["no output"])[-1][:200]
        return {"family": family, "N": n, "wall_s": time.perf_counter() - t, "solved": False, "message": err}
    row = json.loads(lines[-1])
    row["process_s"] = time.perf_counter() - t
    return row


def doubling_ratios(rows: list[dict[str, Any]]) -> dict[str, list[float]]:
    """Per family, ``wall(2N) / wall(N)`` for consecutive N that double."""
    out: dict[str, list[float]] = {}
    for fam in FAMILIES:
        r = sorted((x for x in rows if x["family"] == fam), key=lambda x: x["N"])
        out[fam] = [
            b["wall_s"] / a["wall_s"] for a, b in zip(r, r[1:], strict=False) if b["N"] == 2 * a["N"]
        ]
    return {k: v for k, v in out.items() if v}


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
    n0 = np.array([25.0, 400.0])
    ax.plot(n0, 0.2 * (n0 / 25.0) ** np.log2(2.5), ":", color="0.5", label="2.5x per doubling")
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
    ap.add_argument("--steps", nargs="*", type=int, default=[25, 50, 100, 200, 400])
    ap.add_argument("--time-limit", type=float, default=300.0)
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
                row = run_isolated(fam, n, args.time_limit)
                rows.append(row)
                if not args.json:
                    print(f"{fam:<8} N={n:<4} {row.get('variables', '?')!s:>6} vars  {row['wall_s']:8.2f} s  "
                          f"solved={row['solved']}  {row.get('stationarity', '')}", flush=True)  # fmt: skip
    # a re-plotted file reports the limit its rows ran under, not this command's default
    limit = args.time_limit
    if args.from_json:
        limit = max((r.get("time_limit_s", 0.0) for r in rows), default=0.0)
    summary = {"doubling_ratios": doubling_ratios(rows), "time_limit_s": limit}
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    if args.plot:
        plot(rows, args.plot)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
