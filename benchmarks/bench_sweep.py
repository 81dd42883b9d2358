"""Sweeps on Dask: speed-up of 2 workers over 1 on NOSBENCH dev + MPECLib, and the per-task overhead.

* **Speed-up.** The same ``"solve-file"`` sweep (:func:`mcpkit.sweep`; Scholtes homotopy on
  CasADi/IPOPT, ``tol=1e-6``, ``stationarity=True``: the settings of
  ``benchmarks/bench_mpcc_sets.py``) over NOSBENCH dev (72 files) and MPECLib (87 files), once on a
  ``LocalCluster`` of 1 single-threaded worker process and once on 2. Each cluster is started and
  warmed (:func:`mcpkit.sweep.tasks.warm_solvers` on every worker) before the clock starts; the
  wall time is the sweep's, rows written to Parquet included. Files run largest first (a
  longest-first order keeps the last worker from finishing alone). Speed-up = wall(1) / wall(2);
  the load average of the machine is recorded beside each run (the machine may be shared).
  ``--paired K`` measures the same speed-up in K alternating blocks (1 worker, then 2, per
  block), so that a load that drifts during the run weighs on both alike.
* **Overhead.** ``N`` trivial tasks (a function returning a constant row) on the 2-worker
  cluster: wall / N is the sweep's cost per task (submission, scheduling, transfer, the row
  written to Parquet), with one input per Dask task (``chunk=1``: Dask's own cost) and with
  adaptive chunks (the default); also with ``time_limit`` set, where each input runs in a
  forked child (the hard guard). The peer, in the same run: plain ``client.map`` +
  ``client.gather`` of the same function.

Run: ``python benchmarks/bench_sweep.py [--limit N] [--time-limit 30] [--trivial 2000] [--json]
[--plot docs/figures/sweep_profile.png] [--out-dir DIR] [--overhead-only] [--paired K]``. The full run takes
about 10-20 min.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import mcpkit
from mcpkit.sweep.report import plot_profile, summarize
from mcpkit.sweep.tasks import warm_solvers

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
SETS = {"nosbench": DATA / "nosbench-dev", "mpeclib": DATA / "mpeclib"}
OPTIONS = {"method": "scholtes", "backend": "casadi", "tol": 1e-6}


def noop(i: int) -> dict[str, Any]:
    """A trivial task: a constant row."""
    return {"solved": True, "status": "converged", "kind": "noop"}


def cluster(n: int) -> tuple[Any, Any]:
    from distributed import Client, LocalCluster

    c = LocalCluster(
        n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR
    )
    client = Client(c)
    client.run(warm_solvers)
    return c, client


def files(limit: int | None) -> list[Path]:
    out: list[Path] = []
    for folder in SETS.values():
        out += sorted(folder.glob("*.json"))[:limit]
    return sorted(out, key=lambda p: p.stat().st_size, reverse=True)


def run_set(n: int, paths: list[Path], time_limit: float, out: Path) -> tuple[dict[str, Any], Any, Any, Any]:
    c, client = cluster(n)
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    df = mcpkit.sweep(
        "solve-file",
        paths,
        client=client,
        out=out,
        resume=False,
        progress=False,
        time_limit=time_limit,
        **OPTIONS,
    )
    wall = time.perf_counter() - t0
    busy = float(df["task_time_s"].sum())
    row = {
        "workers": n,
        "wall_s": wall,
        "busy_s": busy,
        "efficiency": busy / (n * wall),
        "load_before": load0,
        "load_after": os.getloadavg(),
    } | summarize(df)
    return row, df, c, client


def paired(paths: list[Path], blocks: int, time_limit: float, out_dir: Path) -> dict[str, Any]:
    """Speed-up measured in alternating blocks: block b on 1 worker, then on 2, for every b.

    On a shared machine the load drifts over a long run; alternating short blocks exposes both
    worker counts to the same load. Blocks are dealt round-robin from the size-sorted files, so
    each holds large and small problems alike. Speed-up = sum of 1-worker walls / sum of
    2-worker walls; the per-block ratios show the spread.
    """
    (c1, cl1), (c2, cl2) = cluster(1), cluster(2)
    walls: dict[int, list[float]] = {1: [], 2: []}
    loads = []
    try:
        for b in range(blocks):
            part = paths[b::blocks]
            for n, client in ((1, cl1), (2, cl2)):
                loads.append(os.getloadavg()[0])
                t0 = time.perf_counter()
                mcpkit.sweep(
                    "solve-file", part, client=client, out=out_dir / f"paired_{n}w_{b}.parquet", resume=False,
                    progress=False, time_limit=time_limit, **OPTIONS,
                )  # fmt: skip
                walls[n].append(time.perf_counter() - t0)
    finally:
        for x in (cl1, c1, cl2, c2):
            x.close()
    return {
        "blocks": blocks,
        "wall_1_s": walls[1],
        "wall_2_s": walls[2],
        "block_speedups": [a / b for a, b in zip(walls[1], walls[2], strict=True)],
        "speedup_2_over_1": sum(walls[1]) / sum(walls[2]),
        "load_1min_during": loads,
    }


def overhead(client: Any, n: int, out: Path, time_limit: float | None, chunk: int | None) -> dict[str, Any]:
    t0 = time.perf_counter()
    df = mcpkit.sweep(
        noop,
        list(range(n)),
        client=client,
        out=out,
        resume=False,
        progress=False,
        time_limit=time_limit,
        chunk=chunk,
    )
    wall = time.perf_counter() - t0
    assert len(df) == n and df["solved"].all()
    return {
        "tasks": n,
        "time_limit": time_limit,
        "chunk": chunk or "adaptive",
        "wall_s": wall,
        "ms_per_task": 1e3 * wall / n,
    }


def dask_map(client: Any, n: int) -> dict[str, Any]:
    """The peer: ``client.map`` + ``client.gather`` of the same trivial function (no rows, no Parquet)."""
    t0 = time.perf_counter()
    futs = client.map(noop, range(n), pure=False)
    client.gather(futs)
    wall = time.perf_counter() - t0
    del futs
    return {"tasks": n, "peer": "client.map+gather", "wall_s": wall, "ms_per_task": 1e3 * wall / n}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=None, help="first N files of each set")
    ap.add_argument("--time-limit", type=float, default=30.0, help="seconds per problem")
    ap.add_argument("--trivial", type=int, default=2000, help="trivial tasks for the overhead")
    ap.add_argument(
        "--out-dir", type=Path, default=None, help="results folders (default: a temporary folder)"
    )
    ap.add_argument("--plot", type=Path, default=None, help="solved-vs-time profile of the 2-worker sweep")
    ap.add_argument("--overhead-only", action="store_true", help="only the trivial-task overhead")
    ap.add_argument(
        "--paired",
        type=int,
        default=0,
        metavar="K",
        help="only the speed-up, in K alternating 1/2-worker blocks",
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out_dir = args.out_dir or Path(tempfile.mkdtemp(prefix="bench_sweep_"))
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = files(args.limit)
    report: dict[str, Any] = {"files": len(paths), "time_limit_s": args.time_limit, "options": OPTIONS}
    report["cpus"] = os.cpu_count()
    if args.paired:
        report["paired"] = paired(paths, args.paired, args.time_limit, out_dir)
        print(json.dumps(report, indent=None if args.json else 1))
        return
    runs = []
    for n in (1, 2):
        if args.overhead_only and n == 1:
            continue
        if args.overhead_only:
            (c, client), df = cluster(n), None
        else:
            row, df, c, client = run_set(n, paths, args.time_limit, out_dir / f"sets_{n}w.parquet")
            runs.append(row)
            if not args.json:
                print(json.dumps(row), flush=True)
        if n == 2:
            report["load_before_overhead"] = os.getloadavg()
            report["overhead"] = [
                dask_map(client, args.trivial),
                overhead(client, args.trivial, out_dir / "noop_1.parquet", None, 1),
                overhead(client, args.trivial, out_dir / "noop_auto.parquet", None, None),
                overhead(client, max(50, args.trivial // 10), out_dir / "noop_forked.parquet", 60.0, 1),
            ]
            if args.plot is not None and df is not None:
                args.plot.parent.mkdir(parents=True, exist_ok=True)
                title = (
                    f"NOSBENCH dev + MPECLib ({len(df)} files), scholtes/casadi, "
                    f"{args.time_limit:g} s limit, 2 Dask workers"
                )
                plot_profile(df, args.plot, title=title, label="mcpkit sweep")
        client.close()
        c.close()
    report["runs"] = runs
    if len(runs) == 2:
        report["speedup_2_over_1"] = runs[0]["wall_s"] / runs[1]["wall_s"]
    report["out_dir"] = str(out_dir)
    print(json.dumps(report, indent=None if args.json else 1))


if __name__ == "__main__":
    main()
