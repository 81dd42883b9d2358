"""A dense MPCC of n pairs: ``mcpkit.solve`` against a plain lifted Scholtes loop, side by side.

The problem (one random instance per ``--seed``; ``M = B Bᵀ/n + I``, ``B`` and ``q`` standard
normal, ``q`` scaled by 2):

    min_{x, y}  ‖x − 1‖² + Σ y   s.t.  x, y ≥ 0,  0 ≤ x ⟂ M x + q + y ≥ 0,

written as a user would, with ``mcpkit.MPCC.from_casadi`` on CasADi SX symbols and
``H = M x + q + y`` as one expression.

* **mcpkit**: ``mcpkit.solve(mpcc)`` with its defaults (``method="auto"``, refinement and
  stationarity check included), the whole call timed;
* **plain loop** (the reference, written here): ``H`` lifted into a slack ``s = M x + q + y``,
  the pair rows ``x_i s_i ≤ σ``, one ``casadi.nlpsol`` built with ``σ`` as a parameter and
  warm-started (primal and dual) from ``σ = 1`` down to ``1e-12`` by factors of 10
  (``min(x_i, s_i) ≤ √σ``: a residual of 1e-6 needs ``σ = 1e-12``); its time includes the build.

Both points are judged on the original problem: complementarity residual and constraint
violation ≤ 1e-6. Prints a table with the time ratio (wall clock, and CPU time of this process,
which a busy machine disturbs less) and the objectives; ``--json`` prints one
JSON object as the last line. ``--time-limit S`` also times ``mcpkit.solve(mpcc, time_limit=S)``
(the call must return within ``1.1 S + 2`` s).

``--loop-limit S`` runs the loop in a child process stopped after ``S`` s (its one build cannot be
interrupted otherwise); the row then says ``unfinished`` and gives the time it had.

Run: ``python benchmarks/bench_dense_mpcc.py [--sizes 100 200 500 1000] [--seed 0] [--loop-limit S]
[--json]``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import casadi as ca  # noqa: E402
import numpy as np  # noqa: E402

import mcpkit  # noqa: E402

TOL = 1e-6


def data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(M, q)`` of the instance."""
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, n))
    return B @ B.T / n + np.eye(n), 2.0 * rng.standard_normal(n)


def as_mpcc(M: np.ndarray, q: np.ndarray) -> mcpkit.MPCC:
    """The problem as a user writes it (SX, ``H`` one expression)."""
    n = q.size
    x, y = ca.SX.sym("x", n), ca.SX.sym("y", n)
    H = ca.mtimes(ca.DM(M), x) + q + y
    f = ca.sumsqr(x - 1) + ca.sum1(y)
    w = ca.vertcat(x, y)
    return mcpkit.MPCC.from_casadi(w, G=x, H=H, f=f, lbx=np.zeros(2 * n), ubx=np.full(2 * n, np.inf))


def judge(M: np.ndarray, q: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """``(objective, complementarity residual, violation)`` on the original problem."""
    H = M @ x + q + y
    comp = float(np.max(np.abs(np.minimum(x, H))))
    viol = float(max(0.0, -x.min(), -y.min(), -H.min()))
    return float(np.sum((x - 1) ** 2) + y.sum()), comp, viol


def plain_loop(M: np.ndarray, q: np.ndarray, verbose: bool = False) -> dict[str, Any]:
    """The reference: lifted Scholtes, one build, σ a parameter, primal-dual warm starts
    (``verbose``: one line per stage, for a run that may be cut off)."""
    t0, c0 = time.perf_counter(), time.process_time()
    n = q.size
    x, y, s, sigma = ca.SX.sym("x", n), ca.SX.sym("y", n), ca.SX.sym("s", n), ca.SX.sym("sigma")
    w = ca.vertcat(x, y, s)
    g = ca.vertcat(s - (ca.mtimes(ca.DM(M), x) + q + y), x * s - sigma)
    f = ca.sumsqr(x - 1) + ca.sum1(y)
    opts = {"print_time": False, "ipopt.print_level": 0, "ipopt.sb": "yes", "ipopt.tol": 1e-9,
            "ipopt.warm_start_init_point": "yes"}  # fmt: skip
    solver = ca.nlpsol("loop", "ipopt", {"x": w, "p": sigma, "f": f, "g": g}, opts)
    if verbose:
        cpu = time.process_time() - c0
        print(f"  loop: built after {time.perf_counter() - t0:.1f} s ({cpu:.1f} s CPU)", flush=True)
    lbg = np.concatenate([np.zeros(n), np.full(n, -np.inf)])
    ubg = np.zeros(2 * n)
    args: dict[str, Any] = {"x0": np.zeros(3 * n), "lbx": 0.0, "ubx": np.inf, "lbg": lbg, "ubg": ubg}
    iterations = 0
    for sig in 10.0 ** -np.arange(0, 13):
        sol = solver(p=sig, **args)
        iterations += int(solver.stats()["iter_count"])
        args.update(x0=sol["x"], lam_x0=sol["lam_x"], lam_g0=sol["lam_g"])
        if verbose:
            wall = time.perf_counter() - t0
            print(f"  loop: sigma {sig:.0e} after {wall:.1f} s ({iterations} iterations)", flush=True)
    wv = np.asarray(sol["x"]).reshape(-1)
    f_v, comp, viol = judge(M, q, wv[:n], wv[n : 2 * n])
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"time_s": wall, "cpu_s": cpu, "f": f_v, "comp": comp, "viol": viol, "iterations": iterations,
            "solved": comp <= TOL and viol <= TOL}  # fmt: skip


def _loop_child(M: np.ndarray, q: np.ndarray, conn: Any) -> None:
    """:func:`plain_loop` in a child process, its result sent through ``conn``."""
    conn.send(plain_loop(M, q, verbose=True))


def capped_loop(M: np.ndarray, q: np.ndarray, limit: float) -> dict[str, Any]:
    """:func:`plain_loop` in a child process stopped after ``limit`` s of wall time (its build
    cannot be interrupted otherwise); an unfinished run reports the time it had, its CPU time
    from the operating system, and ``unfinished``."""
    import multiprocessing as mp
    import resource

    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_loop_child, args=(M, q, child))
    t0 = time.perf_counter()
    proc.start()
    child.close()  # the child's end: a child that dies (killed by hand) is then an end of file
    out = None
    try:
        if parent.poll(limit):
            out = parent.recv()
    except EOFError:
        out = None
    if out is None:
        proc.terminate()
    proc.join()
    if out is not None:
        return out
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"time_s": time.perf_counter() - t0, "cpu_s": cpu.ru_utime + cpu.ru_stime, "f": float("nan"),
            "comp": float("nan"), "viol": float("nan"), "iterations": -1, "solved": False,
            "unfinished": True}  # fmt: skip


def run_mcpkit(M: np.ndarray, q: np.ndarray, time_limit: float | None = None) -> dict[str, Any]:
    """``mcpkit.solve`` with its defaults (and ``time_limit``), the whole call timed."""
    mpcc = as_mpcc(M, q)
    n = q.size
    t0, c0 = time.perf_counter(), time.process_time()
    res = mcpkit.solve(mpcc, time_limit=time_limit)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    f_v, comp, viol = judge(M, q, res.x[:n], res.x[n:])
    return {"time_s": wall, "cpu_s": cpu, "f": f_v, "comp": comp, "viol": viol, "solved": bool(res.solved),
            "iterations": int(res.iterations), "stationarity": res.stationarity,
            "termination": res.termination.value}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 200, 500, 1000])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-limit", type=float, default=2.0, help="also time a call with this limit")
    ap.add_argument("--loop-limit", type=float, default=None,
                    help="run the plain loop in a child process stopped after this many seconds")  # fmt: skip
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    for n in args.sizes:
        M, q = data(n, args.seed)
        ours = run_mcpkit(M, q)
        ref = plain_loop(M, q) if args.loop_limit is None else capped_loop(M, q, args.loop_limit)
        limited = run_mcpkit(M, q, args.time_limit) if args.time_limit else None
        rows.append({"n": n, "mcpkit": ours, "loop": ref, "limited": limited,
                     "ratio": ours["time_s"] / ref["time_s"],
                     "cpu_ratio": ours["cpu_s"] / ref["cpu_s"]})  # fmt: skip
        cut = " (unfinished)" if ref.get("unfinished") else ""
        lim = "" if limited is None else f"  time_limit={args.time_limit:g}: {limited['time_s']:6.2f} s"
        print(
            f"n={n:5d}  mcpkit {ours['time_s']:7.2f} s f={ours['f']:.6f} {ours['stationarity']:>3} "
            f"solved={ours['solved']}  loop {ref['time_s']:7.2f} s{cut} "
            f"f={ref['f']:.6f} solved={ref['solved']}  "
            f"ratio {rows[-1]['ratio']:.2f} (CPU {rows[-1]['cpu_ratio']:.2f}){lim}",
            flush=True,
        )
    if args.json:
        print(json.dumps({"seed": args.seed, "rows": rows}))


if __name__ == "__main__":
    main()
