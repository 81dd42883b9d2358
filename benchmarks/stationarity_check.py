"""The scalable stationarity certificate against the dense checks, on saved MPCC points.

For every point saved by ``bench_mpcc_sets.py --isolate --save-points DIR`` (one ``.npy`` per
problem file), at the activity and residual tolerance of the solvers (1e-4):

* **new**: :func:`mcpkit.stationarity.certificate.classify_stationarity` as solves run it (the max-norm
  residual; cheap least-squares candidate, else the sparse LP), timed;
* **dense LP**: the same weak and S tests as dense LPs written out here (HiGHS on dense arrays,
  :func:`dense_linf`): an independent reference for the new verdict;
* **dense BVLS** (the check before 2026-11-26): the Euclidean least squares
  ``min ||A u - b||_2`` by :func:`scipy.optimize.lsq_linear` (BVLS) with threshold
  ``tol * max(1, ||grad f||_2)``, in a child process stopped after ``--dense-timeout`` seconds
  (20 s on NOSBENCH's MFTOPT; minutes at 3,000 variables).

Per point it prints the verdicts of the weak and S tests (``yes``/``no``) and the times; the
summary counts agreements. Where "new" and "dense BVLS" differ it is the norm: a max-norm
residual does not grow with the number of rows, a Euclidean one does.

Run: ``python benchmarks/stationarity_check.py DIR [--set nosbench-large] [--dense-timeout 120]
[--json]``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import multiprocessing as mp  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from scipy.optimize import linprog, lsq_linear  # noqa: E402

from mcpkit.mpcc import load_mpcc_json  # noqa: E402
from mcpkit.stationarity import certificate as st  # noqa: E402

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
SETS = {"nosbench-large": DATA / "nosbench-large-dev", "nosbench": DATA / "nosbench-dev"}
TOL = 1e-4


def _system(prob: Any, x: np.ndarray) -> tuple[Any, Any, float, float]:
    """``(multipliers, local values, max-norm threshold, Euclidean threshold)`` at ``x``."""
    mpcc, xv, p, tol = st._validate(prob, x, None, TOL, 12, None)
    loc = st._evaluate(mpcc, xv, p)
    mult = st._Multipliers(mpcc, loc, xv, tol)
    scale_inf, scale_2 = float(np.abs(loc.df).max()), float(np.linalg.norm(loc.df))
    return mult, loc, TOL * max(1.0, scale_inf), TOL * max(1.0, scale_2)


def _bounds(mult: Any, s_test: bool) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = mult.lo.copy(), mult.hi.copy()
    if s_test:
        for j in mult.biactive:
            lo[[mult.pos_nu[int(j)], mult.pos_xi[int(j)]]] = 0.0
    return lo, hi


def dense_linf(A: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> float:
    """The smallest max-norm residual over the box: a dense LP (HiGHS), written out here."""
    m, n = A.shape
    A_ub = np.block([[A, -np.ones((m, 1))], [-A, -np.ones((m, 1))]])
    c = np.r_[np.zeros(n), 1.0]
    res = linprog(c, A_ub=A_ub, b_ub=np.r_[b, -b], bounds=np.column_stack([np.r_[lo, 0], np.r_[hi, np.inf]]),
                  method="highs")  # fmt: skip
    return float(res.fun) if res.status == 0 else float("nan")


def _bvls(queue: Any, A: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
    v = lsq_linear(A, b, bounds=(lo, hi), method="bvls").x
    queue.put(float(np.linalg.norm(A @ v - b)))


def dense_bvls(A: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray, timeout: float) -> float | None:
    """The Euclidean bound-constrained least-squares minimum (BVLS), or ``None`` after ``timeout``."""
    queue: Any = mp.get_context("fork").Queue()
    proc = mp.get_context("fork").Process(target=_bvls, args=(queue, A, b, lo, hi))
    proc.start()
    proc.join(timeout)
    if proc.is_alive():
        proc.kill()
        proc.join()
        return None
    return queue.get() if not queue.empty() else None


def check(path: Path, x: np.ndarray, dense_timeout: float) -> dict[str, Any]:
    prob = load_mpcc_json(path)
    t = time.perf_counter()
    rep = st.classify_stationarity(prob, x, None, TOL)
    t_new = time.perf_counter() - t
    row: dict[str, Any] = {"problem": path.name.removesuffix(".json"), "n": int(x.size),
                           "new_level": rep.level.value, "new_s": t_new}  # fmt: skip
    if not rep.feasible:
        return row
    mult, loc, thr_inf, thr_2 = _system(prob, x)
    row["biactive"] = int(mult.biactive.size)
    tests = [("weak", False)] + ([("S", True)] if mult.biactive.size else [])
    for name, s_test in tests:
        lo, hi = _bounds(mult, s_test)
        u, r = mult.solve({int(j): "nonneg" for j in mult.biactive} if s_test else None, threshold=thr_inf)
        row[f"{name}_new"] = bool(r <= thr_inf)
        t = time.perf_counter()
        ref = dense_linf(mult.A, mult.b, lo, hi)
        row[f"{name}_dense_lp"] = bool(ref <= thr_inf) if np.isfinite(ref) else None
        row[f"{name}_dense_lp_s"] = time.perf_counter() - t
        t = time.perf_counter()
        r2 = dense_bvls(mult.A, mult.b, lo, hi, dense_timeout)
        row[f"{name}_dense_bvls"] = None if r2 is None else bool(r2 <= thr_2)
        row[f"{name}_dense_bvls_s"] = time.perf_counter() - t
        row[f"{name}_residual_inf"], row[f"{name}_threshold_inf"] = r, thr_inf
        row[f"{name}_residual_2"], row[f"{name}_threshold_2"] = r2, thr_2
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("points", type=Path, help="folder of .npy points (bench_mpcc_sets.py --save-points)")
    ap.add_argument("--set", choices=sorted(SETS), default="nosbench-large")
    ap.add_argument("--dense-timeout", type=float, default=120.0)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    rows = []
    for pt in sorted(args.points.glob("*.npy")):
        f = SETS[args.set] / (pt.name.removesuffix(".npy") + ".json")
        if not f.is_file():
            continue
        row = check(f, np.load(pt), args.dense_timeout)
        rows.append(row)
        if not args.json:
            short = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()}
            print(json.dumps(short), flush=True)
    summary: dict[str, Any] = {"points": len(rows)}
    for name in ("weak", "S"):
        have = [r for r in rows if f"{name}_new" in r]
        lp = [r for r in have if r[f"{name}_dense_lp"] is not None]
        bv = [r for r in have if r[f"{name}_dense_bvls"] is not None]
        summary[name] = {
            "tested": len(have),
            "agree_with_dense_lp": sum(r[f"{name}_new"] == r[f"{name}_dense_lp"] for r in lp),
            "dense_lp_finished": len(lp),
            "agree_with_dense_bvls": sum(r[f"{name}_new"] == r[f"{name}_dense_bvls"] for r in bv),
            "dense_bvls_finished": len(bv),
            "differ_from_dense_bvls": [
                r["problem"] for r in bv if r[f"{name}_new"] != r[f"{name}_dense_bvls"]
            ],
        }
    t_new = [r["new_s"] for r in rows]
    t_bv = [r["weak_dense_bvls_s"] for r in rows if r.get("weak_dense_bvls") is not None]
    summary["new_s_median"] = float(np.median(t_new)) if t_new else None
    summary["new_s_max"] = float(np.max(t_new)) if t_new else None
    summary["dense_bvls_weak_s_median"] = float(np.median(t_bv)) if t_bv else None
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1, default=float))
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
