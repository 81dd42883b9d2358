r"""The warm-start profiles of ``SolveOptions.warm_start`` on MPCC files, one process per solve.

For every file and profile: the Scholtes homotopy of :func:`mcpkit.mpcc.solve_mpcc` with its
fallbacks and polish (``method="scholtes"``, ``refine=False``, ``tol=1e-6``) in a fresh process,
reporting the IPOPT iterations of every subproblem (the trace), the process's CPU seconds, the
verdict and the objective :math:`f`. Iterations and CPU seconds, unlike wall times, change little
with the machine's load; a run the time limit cut does depend on the load, and says so
(``time_limit``).

Run: ``python benchmarks/bench_warm_start.py FILE... [--profiles standard adaptive]
[--time-limit 150] [--jobs 2] [--trace]``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402


def solve_one(path: str, profile: str, time_limit: float) -> dict[str, Any]:
    """One solve in this process: verdict, objective, IPOPT iterations per step, CPU seconds."""
    from mcpkit.mpcc import load_mpcc_json, solve_mpcc

    cpu = time.process_time()
    prob = load_mpcc_json(path)
    res = solve_mpcc(
        prob, "scholtes", "casadi", tol=1e-6, refine=False, time_limit=time_limit, warm_start=profile
    )
    return {
        "file": Path(path).name,
        "profile": profile,
        "solved": bool(res.solved),
        "f": float(res.f),
        "iterations": int(res.iterations),
        "cpu_s": time.process_time() - cpu,
        "wall_s": float(res.wall_time_s),
        "termination": res.termination.value,
        "steps": [(s.phase, s.parameter, s.inner_iterations, s.inner_status) for s in res.trace],
    }


def run(path: str, profile: str, time_limit: float) -> dict[str, Any]:
    """:func:`solve_one` in a fresh process of this Python."""
    cmd = [sys.executable, __file__, "--one", path, "--profiles", profile, "--time-limit", str(time_limit)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=3 * time_limit + 60)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        return {"file": Path(path).name, "profile": profile, "error": out.stderr.strip()[-300:]}
    return json.loads(lines[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--profiles", nargs="+", default=["standard", "adaptive"])
    ap.add_argument("--time-limit", type=float, default=150.0)
    ap.add_argument("--jobs", type=int, default=2, help="solves run at once")
    ap.add_argument("--trace", action="store_true", help="print every subproblem")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one is not None:
        print(json.dumps(solve_one(args.one, args.profiles[0], args.time_limit)))
        return
    jobs = [(f, p) for f in args.files for p in args.profiles]
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for r in pool.map(lambda job: run(job[0], job[1], args.time_limit), jobs):
            if "error" in r:
                print(f"{r['file'][:30]:30s} {r['profile']:9s} error: {r['error']}", flush=True)
                continue
            print(
                f"{r['file'][:30]:30s} {r['profile']:9s} solved={r['solved']!s:5s} f={r['f']:<12.6g} "
                f"iterations={r['iterations']:5d} cpu={r['cpu_s']:6.1f}s wall={r['wall_s']:6.1f}s "
                f"{r['termination']}",
                flush=True,
            )
            if args.trace:
                for phase, t, it, status in r["steps"]:
                    print(f"    {phase:18s} {t:9.2e} {it:5d} {status}")


if __name__ == "__main__":
    main()
