"""MPECLib (86) and NOSBENCH (72) with mcpkit's MPCC engine and ``mpecss`` side by side.

For every problem file, in one process run and in the same order:

* **mcpkit**: :func:`mcpkit.mpcc.solve_mpcc` with ``stationarity=True`` (Scholtes homotopy on
  IPOPT with recovery and active-set polish), from the file's ``w0``;
* **mpecss** (``pip install mpecss``; adaptive Scholtes + IPOPT), with its own loader and its
  default parameters, from its default start (``x0_fn(0)``).

Both answers are judged by the same rule on the problem as mcpkit reads it: complementarity
residual <= 1e-6 and constraint violation <= 1e-6 (box-MCP reading of general pair bounds, see
:mod:`mcpkit.mpcc.problem`). mpecss's own verdict is reported too.

Run: ``python benchmarks/bench_mpcc_sets.py --set mpeclib [--time-limit 60] [--limit N]
[--no-peer] [--backend casadi|pyomo] [--method scholtes|elastic|...] [--json]
[--out results.json] [--plot fig.png]``; ``--from-json results.json --plot fig.png`` re-draws a
saved run. The full sets take tens of minutes; they are not part of the test suite
(a small sample is, in ``tests/solver/test_mpcc_solver.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import time
from pathlib import Path
from typing import Any

import numpy as np

from mcpkit.mpcc import load_mpcc_json, solve_mpcc
from mcpkit.options import REFORMULATIONS

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
SETS = {"mpeclib": DATA / "mpeclib", "nosbench": DATA / "nosbench-dev"}
TOL = 1e-6


def run_mcpkit(
    path: Path, time_limit: float, backend: str = "casadi", method: str = "scholtes"
) -> dict[str, Any]:
    prob = load_mpcc_json(path)
    t = time.perf_counter()
    res = solve_mpcc(prob, method, backend, time_limit=time_limit, tol=TOL, stationarity=True)
    wall = time.perf_counter() - t
    return {
        "solved": bool(res.solved),
        "time_s": wall,
        "objective": res.f,
        "comp": res.comp_residual,
        "viol": res.constraint_violation,
        "status": res.termination.value,
        "stationarity": res.stationarity,
    }


def run_mpecss(path: Path, which: str, time_limit: float) -> dict[str, Any]:
    try:
        from mpecss import run_mpecss as mpecss_run

        if which == "mpeclib":
            from mpecss.helpers.loaders.mpeclib_loader import load_mpeclib as loader
        else:
            from mpecss.helpers.loaders.nosbench_loader import load_nosbench as loader
    except ImportError as exc:
        return {"solved": False, "time_s": float("nan"), "status": f"mpecss unavailable: {exc}"}
    prob = load_mpcc_json(path)
    sink = io.StringIO()
    t = time.perf_counter()
    try:
        with contextlib.redirect_stdout(sink):
            problem = loader(str(path))
            out = mpecss_run(problem, problem["x0_fn"](0), {"wall_timeout": time_limit})
    except Exception as exc:  # a crash of the peer is its result
        return {"solved": False, "time_s": time.perf_counter() - t, "status": f"error: {exc}"[:120]}
    wall = time.perf_counter() - t
    z = np.asarray(out.get("z_final"), dtype=float).reshape(-1)
    if z.size != prob.x.numel() or not np.isfinite(z).all():
        return {"solved": False, "time_s": wall, "status": f"mpecss: {out.get('status')} (no point)"}
    comp, viol, vals = prob.residuals(z, prob.p0)
    return {
        "solved": bool(comp <= TOL and viol <= TOL),
        "time_s": wall,
        "objective": float(vals["f"][0]),
        "comp": comp,
        "viol": viol,
        "status": str(out.get("status")),
        "own_verdict": str(out.get("status")) == "converged",
    }


def summarise(rows: list[dict[str, Any]], key: str) -> dict[str, Any]:
    r = [row[key] for row in rows if key in row]
    times = np.array([x["time_s"] for x in r], dtype=float)
    return {
        "solved": int(sum(x["solved"] for x in r)),
        "of": len(r),
        "median_time_s": float(np.nanmedian(times)) if times.size else None,
        "total_time_s": float(np.nansum(times)) if times.size else None,
    }


def plot_solved_vs_time(rows: list[dict[str, Any]], title: str, path: Path) -> None:
    """Cumulative count of problems solved (by the common rule) within a time, per solver."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.0, 3.6))
    for key, style in (("mcpkit", "-"), ("mpecss", "--")):
        times = np.sort([r[key]["time_s"] for r in rows if key in r and r[key]["solved"]])
        if times.size:
            ax.step(times, np.arange(1, times.size + 1), style, where="post", label=f"{key} ({times.size})")
    ax.axhline(len(rows), color="0.6", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("wall time per problem [s]")
    ax.set_ylabel("problems solved (comp, viol <= 1e-6)")
    ax.set_title(title, fontsize=9)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", choices=sorted(SETS), default="mpeclib")
    ap.add_argument("--time-limit", type=float, default=60.0, help="per problem and solver, seconds")
    ap.add_argument("--limit", type=int, default=None, help="only the first N files")
    ap.add_argument("--no-peer", action="store_true", help="skip mpecss")
    ap.add_argument("--backend", choices=["casadi", "pyomo"], default="casadi", help="mcpkit's backend")
    ap.add_argument("--method", choices=REFORMULATIONS, default="scholtes", help="mcpkit's reformulation")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--out", type=Path, default=None, help="write per-problem rows as JSON")
    ap.add_argument("--plot", type=Path, default=None, help="save a solved-vs-time figure (PNG)")
    ap.add_argument("--from-json", type=Path, default=None, help="re-plot/summarise an --out file, no solves")
    args = ap.parse_args()
    if args.from_json is not None:
        saved = json.loads(args.from_json.read_text())
        if args.plot:
            summ = saved["summary"]
            title = f"{summ['set']}: mcpkit ({summ.get('mcpkit_backend', 'casadi')}) vs mpecss"
            plot_solved_vs_time(saved["rows"], title, args.plot)
        print(json.dumps(saved["summary"], indent=1))
        return
    logging.getLogger("mpecss").setLevel(logging.ERROR)
    files = sorted(SETS[args.set].glob("*.json"))[: args.limit]
    rows: list[dict[str, Any]] = []
    for f in files:
        row: dict[str, Any] = {"problem": f.name.removesuffix(".json").removesuffix(".nl")}
        row["mcpkit"] = run_mcpkit(f, args.time_limit, args.backend, args.method)
        if not args.no_peer:
            row["mpecss"] = run_mpecss(f, args.set, args.time_limit)
        rows.append(row)
        if not args.json:
            peer = row.get("mpecss", {})
            print(
                f"{row['problem']:<44} mcpkit {row['mcpkit']['solved']!s:<5} {row['mcpkit']['time_s']:7.2f}s"
                + (f"   mpecss {peer['solved']!s:<5} {peer['time_s']:7.2f}s" if peer else ""),
                flush=True,
            )
    out = {"set": args.set, "files": len(files), "tol": TOL, "time_limit_s": args.time_limit}
    out["mcpkit_backend"], out["mcpkit_method"] = args.backend, args.method
    out["mcpkit"] = summarise(rows, "mcpkit")
    if not args.no_peer:
        out["mpecss"] = summarise(rows, "mpecss")
        out["mpecss"]["own_verdict_converged"] = int(sum(r["mpecss"].get("own_verdict", False) for r in rows))
    out["mcpkit_failed"] = [r["problem"] for r in rows if not r["mcpkit"]["solved"]]
    classes: dict[str, int] = {}
    for r in rows:
        if r["mcpkit"]["solved"]:
            key = str(r["mcpkit"].get("stationarity"))
            classes[key] = classes.get(key, 0) + 1
    out["mcpkit_stationarity_of_solved"] = classes
    if args.out:
        args.out.write_text(json.dumps({"summary": out, "rows": rows}, default=float, indent=1))
    if args.plot:
        plot_solved_vs_time(rows, f"{args.set}: mcpkit ({args.backend}) vs mpecss", args.plot)
    if args.json:
        print(json.dumps(out))
    else:
        print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
