"""One MPCC file solved in this process, printed as one JSON line; the worker of ``bench_mpcc_sets``.

Run by :mod:`bench_mpcc_sets` in a fresh process per solve (``--isolate``), with this checkout's
Python or another one (``--baseline-python``: an older mcpkit in its own venv, such as 9d59f9c,
run side by side in the same benchmark run). It imports whichever mcpkit that Python has:

* the current API, :func:`mcpkit.mpcc.solve_mpcc` (``--method``, ``--no-refine``,
  ``--warm-start``: ``SolveOptions.warm_start``);
* the 2026-11-23 API (9d59f9c), ``mcpkit.mpec.engine.solve_general``.

It prints ``{"x": [...], "call_s": ..., "solved": ..., "objective": ..., "status": ...,
"stationarity": ..., "api": "current" | "9d59f9c"}``: the whole call (load, lowering, solve,
checks) is timed; the verdict is mcpkit's own and is re-judged from the file by the caller
(:func:`mpcc_checks.file_residuals`).

Usage: ``python benchmarks/mpcc_one.py FILE --time-limit S [--method M] [--no-refine] [--warm-start P]``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402


def _float(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def solve_current(
    path: str, time_limit: float, method: str, refine: bool, warm_start: str | None = None
) -> dict[str, Any]:
    from mcpkit.mpcc import load_mpcc_json, solve_mpcc

    t = time.perf_counter()
    prob = load_mpcc_json(path)
    extra = {} if warm_start is None else {"warm_start": warm_start}  # SolveOptions.warm_start
    res = solve_mpcc(prob, method, "casadi", time_limit=time_limit, tol=1e-6, refine=refine, **extra)
    call = time.perf_counter() - t
    return {
        "api": "current",
        "call_s": call,
        "x": [float(v) for v in res.x],
        "solved": bool(res.solved),
        "objective": _float(res.f),
        "status": res.termination.value,
        "stationarity": str(res.stationarity),
        "reformulation": str(res.extra.get("reformulation", "")),
        # warm_start="best_of_two": the point kept and both objectives (the message's last clause)
        "warm_start": str(res.extra.get("warm_start", "")),
        "warm_start_note": res.message.rpartition("best of two warm starts: ")[2]
        if "warm_start" in res.extra
        else "",
    }


def solve_9d59f9c(path: str, time_limit: float, method: str) -> dict[str, Any]:
    from mcpkit.mpec.engine import solve_general  # type: ignore[import-not-found]
    from mcpkit.mpec.loader import load_mpcc_json  # type: ignore[import-not-found]

    t = time.perf_counter()
    prob = load_mpcc_json(path)
    # the homotopy alone: 9d59f9c's dense stationarity check (20 s of BVLS on MFTOPT) is left out,
    # so the baseline is the faster one, as the figures measured it
    res = solve_general(
        prob, method="scholtes" if method == "auto" else method, stationarity=False, time_limit=time_limit
    )
    call = time.perf_counter() - t
    x = getattr(res, "x", None)
    if x is None:
        x = res.z
    return {
        "api": "9d59f9c",
        "call_s": call,
        "x": [float(v) for v in list(x)[: prob.x.numel()]],
        "solved": bool(res.solved),
        "objective": _float(getattr(res, "objective", float("nan"))),
        "status": res.termination.value,
        "stationarity": str(res.extra.get("stationarity")),
        "reformulation": method,
    }


def file_residuals(path: str, x: list[float]) -> dict[str, float]:
    r"""``{"comp", "viol", "objective"}`` of ``x`` recomputed from the JSON file with CasADi alone.

    No mcpkit code is involved. Pairs are read as the files mean them: :math:`0 \le G \perp H
    \ge 0` by default, or with ``lbG, ubG, lbH, ubH`` present the box-MCP reading
    :math:`H_l \le H \le H_u \perp G`. ``comp`` is
    :math:`\max_j |\operatorname{mid}(H_j - H_{l,j}, H_j - H_{u,j}, G_j)|` (a min-map: a large
    :math:`H_j` cannot hide :math:`G_j`); ``viol`` the largest violation of ``lbw <= w <= ubw``,
    ``lbg <= g <= ubg`` and the pair bounds. NaN anywhere counts as infinite.
    """
    import casadi as ca
    import numpy as np

    d = json.loads(open(path).read())
    w = np.asarray(x, dtype=float)
    p0 = np.asarray(d.get("p0", []), dtype=float)

    def call(key: str) -> np.ndarray | None:
        if not isinstance(d.get(key), str):
            return None
        fun = ca.Function.deserialize(d[key])
        args = [w, p0][: fun.n_in()]
        return np.asarray(fun(*args), dtype=float).ravel()

    def vec(key: str, n: int, default: float) -> np.ndarray:
        v = d.get(key)
        return np.full(n, default) if v is None else np.asarray(v, dtype=float).ravel()

    def below(v: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> float:
        with np.errstate(invalid="ignore"):
            e = np.maximum(np.maximum(lo - v, v - hi), 0.0)
        e[np.isnan(e)] = np.inf
        return float(e.max(initial=0.0))

    G, H = call("G_fun"), call("H_fun")
    g = call("g_fun")
    f = call("f_fun")
    if f is None:
        f = call("objective_fun")
    nc = G.size
    viol = below(w, vec("lbw", w.size, -np.inf), vec("ubw", w.size, np.inf))
    if g is not None and g.size:
        viol = max(viol, below(g, vec("lbg", g.size, -np.inf), vec("ubg", g.size, np.inf)))
    lbG, ubG = vec("lbG", nc, 0.0), vec("ubG", nc, np.inf)
    lbH, ubH = vec("lbH", nc, 0.0), vec("ubH", nc, np.inf)
    viol = max(viol, below(G, lbG, ubG), below(H, lbH, ubH))
    with np.errstate(invalid="ignore"):
        per = np.abs(np.median(np.stack([H - lbH, H - ubH, G]), axis=0))
    per[np.isnan(per)] = np.inf
    return {
        "comp": float(per.max(initial=0.0)),
        "viol": viol,
        "objective": float(f[0]) if f is not None and np.isfinite(f[0]) else float("nan"),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--method", default="auto")
    ap.add_argument("--no-refine", action="store_true")
    ap.add_argument("--warm-start", default=None, help="SolveOptions.warm_start (current API only)")
    args = ap.parse_args()
    logging.disable(logging.WARNING)
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink):  # solver chatter off stdout: it carries one JSON line
        try:
            import mcpkit.mpcc  # noqa: F401

            current = hasattr(mcpkit.mpcc, "solve_mpcc")
        except ImportError:
            current = False
        if current:
            row = solve_current(args.file, args.time_limit, args.method, not args.no_refine, args.warm_start)
        else:
            row = solve_9d59f9c(args.file, args.time_limit, args.method)
    sys.stdout.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
