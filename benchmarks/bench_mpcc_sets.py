"""MPECLib (86), NOSBENCH (72) and MacMPEC (73) with mcpkit's MPCC engine and ``mpecss`` side by side.

For every problem file, in one process run and in the same order:

* **mcpkit**: :func:`mcpkit.mpcc.solve_mpcc` with its defaults (Scholtes homotopy on IPOPT with
  recovery and active-set polish, then the B-stationarity refinement of
  :mod:`mcpkit.stationarity.refine`; ``--no-refine`` switches it off), from the file's ``w0``;
* **mpecss** (``pip install mpecss``; adaptive Scholtes + IPOPT), with its own loader and its
  default parameters, from its default start (``x0_fn(0)``); for MacMPEC by default its
  *published* run (``../shared/data/macmpec-dev/peer_mpecss_published.csv``: status, final
  objective, complementarity residual, CPU time; ``--peer run`` runs it here instead).

Objectives are compared where both solve: mcpkit is *worse* when its objective exceeds
mpecss's by more than ``1e-4 * max(1, |f_mpecss|)``. For MacMPEC both are also compared, by the
same allowance, with the collection's best-known objectives (``REFERENCE_collection.csv``), and
the summary names the worse rows where mpecss's value lies below the best known
(``worse_peer_below_best_known``). ``--table`` writes the per-problem table
(Markdown: objectives, stationarity, refinement, times), ``--plot`` the solved-vs-time figure.

Both answers are judged by the same rule on the problem as mcpkit reads it: complementarity
residual <= 1e-6 and constraint violation <= 1e-6 (box-MCP reading of general pair bounds, see
:mod:`mcpkit.problems.mpcc`). mpecss's own verdict is reported too. An mcpkit solve whose wall time
(refinement and stationarity check included) exceeds ``--time-limit`` counts as not solved
(``over_time`` in its row).

Run: ``python benchmarks/bench_mpcc_sets.py --set mpeclib|nosbench|macmpec [--time-limit 60]
[--limit N] [--only NAME ...] [--no-peer] [--peer run|published] [--no-refine]
[--backend casadi|pyomo] [--method auto|scholtes|elastic|...] [--json] [--out results.json]
[--plot fig.png] [--table table.md] [--workers N [--sweep-out DIR]]``; ``--workers N`` runs
the solves (and a run peer) as one :func:`mcpkit.sweep` on N Dask worker processes;
``--from-json results.json --plot fig.png --table t.md`` re-draws a saved run. The full sets
take tens of minutes; they are not part of the test suite (a small sample is, in
``tests/solver/test_mpcc_solver.py``).
"""

from __future__ import annotations

import os

# one BLAS thread: the per-problem linear algebra is small, and on a shared machine OpenBLAS's
# thread pool oversubscribes the cores (a 650 x 820 least-squares solve took 40x longer)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import contextlib
import csv
import io
import json
import logging
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from mcpkit.mpcc import load_mpcc_json, solve_mpcc
from mcpkit.solving.options import REFORMULATIONS

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
SETS = {
    "mpeclib": DATA / "mpeclib", "nosbench": DATA / "nosbench-dev", "macmpec": DATA / "macmpec-dev",
    "nosbench-large": DATA / "nosbench-large-dev",
}  # fmt: skip
PUBLISHED = {"macmpec": DATA / "macmpec-dev" / "peer_mpecss_published.csv"}
BEST_KNOWN = {"macmpec": DATA / "macmpec-dev" / "REFERENCE_collection.csv"}
TOL = 1e-6
OBJ_RTOL = 1e-4
"""Objective comparison: worse when ``f_mcpkit > f_mpecss + OBJ_RTOL * max(1, |f_mpecss|)``."""


def run_mcpkit(
    path: Path, time_limit: float, backend: str = "casadi", method: str = "auto", refine: bool = True
) -> dict[str, Any]:
    prob = load_mpcc_json(path)
    t = time.perf_counter()
    res = solve_mpcc(prob, method, backend, time_limit=time_limit, tol=TOL, stationarity=True, refine=refine)
    wall = time.perf_counter() - t
    ref = res.extra.get("refinement")
    return {
        "refine_steps": 0 if ref is None else int(sum(s.accepted for s in ref.steps)),
        "refine_reason": "" if ref is None else ref.reason,
        "refine_start": "" if ref is None else ref.start,
        # solved within the limit: a verdict that arrives after it does not count
        "solved": bool(res.solved) and wall <= time_limit,
        "over_time": wall > time_limit,
        "time_s": wall,
        "objective": res.f,
        "comp": res.comp_residual,
        "viol": res.constraint_violation,
        "status": res.termination.value,
        "stationarity": res.stationarity,
        "reformulation": res.extra.get("reformulation", ""),
        "iterations": res.iterations,
    }


def run_mcpkit_file(path: str, time_limit: float, backend: str, method: str, refine: bool) -> dict[str, Any]:
    """:func:`run_mcpkit` as a :func:`mcpkit.sweep` task (a row of plain columns)."""
    return run_mcpkit(Path(path), time_limit, backend, method, refine)


ONE = Path(__file__).resolve().parent / "mpcc_one.py"
"""The one-solve worker (:mod:`mpcc_one`) that ``--isolate`` and ``--baseline-python`` run."""


def run_isolated(
    python: str,
    path: Path,
    time_limit: float,
    method: str = "auto",
    refine: bool = True,
    save_point: Path | None = None,
    warm_start: str | None = None,
) -> dict[str, Any]:
    """One solve in a fresh process of ``python`` (this checkout's or an older mcpkit's venv).

    The whole call is timed inside the process (load, lowering, solve, checks: ``time_s``) and
    from outside (``process_s``, interpreter start and imports included). The point is judged
    again from the file with CasADi alone (:func:`mpcc_one.file_residuals`), so "solved" never
    rests on the solver's own verdict: residual and violation <= :data:`TOL` and the call within
    ``time_limit``. ``over_budget``: the call took longer than ``1.1 * time_limit + 2`` s, the
    contract of every entry point; ``false_solved``: mcpkit said solved where the file says not.
    A process still running at ``3 * time_limit + 30`` s is killed and counted unsolved.
    ``save_point``: write the returned point there (``.npy``), e.g. for
    ``benchmarks/stationarity_check.py``. ``warm_start``: ``SolveOptions.warm_start`` (the current
    API only: not passed to a baseline).
    """
    import subprocess
    import sys

    sys.path.insert(0, str(ONE.parent))
    from mpcc_one import file_residuals

    cmd = [python, str(ONE), str(path), "--time-limit", str(time_limit), "--method", method]
    if not refine:
        cmd.append("--no-refine")
    if warm_start is not None:
        cmd += ["--warm-start", warm_start]
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    t = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=3 * time_limit + 30, env=env,
            cwd=tempfile.gettempdir(),
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        wall = time.perf_counter() - t
        return {"solved": False, "time_s": wall, "process_s": wall, "status": "killed", "over_time": True,
                "over_budget": True, "own_verdict": False, "false_solved": False}  # fmt: skip
    wall = time.perf_counter() - t
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        err = (proc.stderr.strip().splitlines() or ["no output"])[-1][:160]
        return {"solved": False, "time_s": wall, "process_s": wall, "status": f"error: {err}",
                "over_time": wall > time_limit, "over_budget": wall > 1.1 * time_limit + 2,
                "own_verdict": False, "false_solved": False}  # fmt: skip
    row = json.loads(lines[-1])
    x = row.pop("x")
    if save_point is not None:
        np.save(save_point, np.asarray(x, dtype=float))
    chk = file_residuals(str(path), x)
    call = float(row.pop("call_s"))
    ok = chk["comp"] <= TOL and chk["viol"] <= TOL
    return {
        "solved": bool(ok and call <= time_limit),
        "time_s": call,
        "process_s": wall,
        "objective": chk["objective"],
        "comp": chk["comp"],
        "viol": chk["viol"],
        "status": row.get("status", ""),
        "stationarity": row.get("stationarity"),
        "reformulation": row.get("reformulation", ""),
        "own_verdict": bool(row.get("solved")),
        "false_solved": bool(row.get("solved")) and not ok,
        "over_time": call > time_limit,
        "over_budget": call > 1.1 * time_limit + 2,
        "api": row.get("api", ""),
        **{k: row[k] for k in ("warm_start", "warm_start_note") if row.get(k)},  # best_of_two
    }


def run_mpecss_file(path: str, which: str, time_limit: float) -> dict[str, Any]:
    """:func:`run_mpecss` as a :func:`mcpkit.sweep` task."""
    return run_mpecss(Path(path), which, time_limit)


#: The columns :func:`run_mcpkit` and :func:`run_mpecss` give, read back from a sweep's rows.
ROW_FIELDS = (
    "solved", "time_s", "objective", "comp", "viol", "status", "stationarity", "own_verdict",
    "refine_steps", "refine_reason", "refine_start", "over_time", "wrong_sign_pairs",
)  # fmt: skip


def swept_rows(
    task: Any, files: list[Path], workers: int, out: Path, quiet: bool, **options: Any
) -> list[dict[str, Any]]:
    """Run ``task`` on every file with :func:`mcpkit.sweep` on ``workers`` Dask worker processes.

    The rows come back in the files' order, in the shape the sequential loop gives; a task that
    raised gives ``solved=False`` with the error as its status. The sweep's own time limit is
    left to the task (``hard_limit=False``), so both ways of running measure the same thing.
    """
    import mcpkit

    df = mcpkit.sweep(
        task, [{"path": str(f)} for f in files], workers=workers, out=out, resume=False,
        progress=not quiet, hard_limit=False, **options,
    )  # fmt: skip
    by_path = {r["path"]: r for r in df.to_dict("records")}
    rows = []
    for f in files:
        r = by_path[str(f)]
        row = {k: r[k] for k in ROW_FIELDS if k in r and not (isinstance(r[k], float) and np.isnan(r[k]))}
        if r.get("error_type") is not None and isinstance(r.get("error_type"), str):
            row = {"solved": False, "time_s": float("nan"), "status": f"error: {r['error_message']}"[:120]}
        row["solved"] = bool(row.get("solved", False))
        row.setdefault("time_s", float("nan"))
        rows.append(row)
    return rows


def run_mpecss(path: Path, which: str, time_limit: float) -> dict[str, Any]:
    try:
        from mpecss import run_mpecss as mpecss_run

        if which == "mpeclib":
            from mpecss.helpers.loaders.mpeclib_loader import load_mpeclib as loader
        elif which == "macmpec":
            from mpecss.helpers.loaders.macmpec_loader import load_macmpec as loader
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
        "wrong_sign_pairs": wrong_sign_pairs(prob, vals["G"], vals["H"]),
    }


def wrong_sign_pairs(prob: Any, G: np.ndarray, H: np.ndarray) -> int:
    """Pairs whose :math:`H_j` sits at a bound while :math:`G_j` has the sign that bound forbids
    (:math:`H_j = H_{l,j}` with :math:`G_j < 0`, or :math:`H_j = H_{u,j}` with :math:`G_j > 0`, each
    beyond :data:`TOL`): the part of the box-MCP condition that a reading of a pair with free
    :math:`G` as "H >= 0, G free, G H = 0" drops."""
    at_lower = np.abs(H - prob.lbH) <= TOL
    at_upper = np.abs(H - prob.ubH) <= TOL
    return int(np.sum(at_lower & (G < -TOL)) + np.sum(at_upper & (G > TOL)))


def load_published(which: str) -> dict[str, dict[str, Any]]:
    """mpecss's published per-problem rows: solved = status ``converged`` and residual <= TOL."""
    out: dict[str, dict[str, Any]] = {}
    with open(PUBLISHED[which], newline="") as fh:
        for r in csv.DictReader(fh):
            name = r["problem_file"].removesuffix(".json").removesuffix(".nl")
            comp = abs(float(r["comp_res"])) if r["comp_res"] else np.inf
            out[name] = {
                "solved": r["status"] == "converged" and comp <= TOL,
                "time_s": float(r["cpu_time_total"]),
                "objective": float(r["f_final"]) if r["f_final"] else np.nan,
                "comp": comp,
                "status": r["status"],
                "stationarity": r["stationarity"],
                "own_verdict": r["status"] == "converged",
            }
    return out


def load_best_known(which: str) -> dict[str, float]:
    """The collection's best-known objective per problem (``REFERENCE_collection.csv``, column
    ``solution``); problems listed as infeasible ``(I)`` or ``tba`` are left out."""
    if which not in BEST_KNOWN:
        return {}
    out: dict[str, float] = {}
    with open(BEST_KNOWN[which], newline="") as fh:
        for r in csv.DictReader(fh):
            try:
                out[r["name"]] = float(r["solution"])
            except ValueError:
                continue
    return out


def _gap(f_ref: float) -> float:
    """The comparison's allowance: :data:`OBJ_RTOL` ``* max(1, |f_ref|)``."""
    return OBJ_RTOL * max(1.0, abs(f_ref))


def _versus(f: float, f_ref: float) -> str:
    """``"worse"``, ``"better"`` or ``"equal"``: ``f`` against ``f_ref`` with :func:`_gap` ``(f_ref)``."""
    gap = _gap(f_ref)
    return "worse" if f > f_ref + gap else "better" if f < f_ref - gap else "equal"


def _listed_as_maximum(f: float, best: float) -> bool:
    """``f`` matches ``-best`` but not ``best``: the collection lists a maximisation problem by its
    maximum while the file minimises the negated objective (MacMPEC's ``bilin``, ``hakonsen``, ...)."""
    return bool(abs(f + best) <= _gap(best) < abs(f - best))


def compare_objectives(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Better / equal / worse counts where both solve (rule of :data:`OBJ_RTOL`).

    ``worse_peer_below_best_known`` lists the worse rows where mpecss's objective lies below the
    collection's best-known value (``row["best_known"]``, by more than the same allowance) while
    mcpkit's is not above it: there the peer's value is better than any the collection knows.
    """
    groups: dict[str, list[str]] = {"worse": [], "better": [], "equal": []}
    for r in rows:
        a, b = r["mcpkit"], r.get("mpecss", {})
        if a["solved"] and b.get("solved"):
            groups[_versus(a["objective"], b["objective"])].append(r["problem"])
    worse, better, equal = groups["worse"], groups["better"], groups["equal"]
    both = len(worse) + len(better) + len(equal)
    by_name = {r["problem"]: r for r in rows}
    below = []
    for name in worse:
        r = by_name[name]
        best = r.get("best_known", np.nan)
        f_peer = r["mpecss"]["objective"]
        if np.isfinite(best) and f_peer < best - _gap(best) and not _listed_as_maximum(f_peer, best):
            if r["mcpkit"]["objective"] <= best + _gap(best):
                below.append(name)
    return {
        "both_solved": both, "worse": worse, "better": better, "n_equal": len(equal),
        "not_worse_fraction": (both - len(worse)) / both if both else None,
        "worse_peer_below_best_known": below,
    }  # fmt: skip


def compare_best_known(rows: list[dict[str, Any]], key: str = "mcpkit") -> dict[str, Any]:
    """``key``'s solved objectives against the collection's best-known ones (same allowance).

    Rows whose objective matches the negated listed value are counted apart (``sign``, see
    :func:`_listed_as_maximum`), not as better.
    """
    worse, better, sign, n = [], [], [], 0
    for r in rows:
        a, best = r.get(key, {}), r.get("best_known", np.nan)
        if not (a.get("solved") and np.isfinite(best)):
            continue
        n += 1
        f = a["objective"]
        if _listed_as_maximum(f, best):
            sign.append(r["problem"])
        elif f > best + _gap(best):
            worse.append(r["problem"])
        elif f < best - _gap(best):
            better.append(r["problem"])
    return {"compared": n, "worse": worse, "better": better, "sign": sign, "not_worse": n - len(worse)}


def write_table(rows: list[dict[str, Any]], path: Path) -> None:
    """Per-problem Markdown table: objectives, stationarity, refinement and times."""
    lines = [
        "| problem | mcpkit f | mpecss f | best known | vs mpecss | stationarity | refinement "
        "| mcpkit s | mpecss s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        a, b = r["mcpkit"], r.get("mpecss", {})
        fa = f"{a['objective']:.6g}" if a["solved"] else "not solved"
        fb = f"{b['objective']:.6g}" if b.get("solved") else ("not solved" if b else "")
        best = r.get("best_known", np.nan)
        fbest = f"{best:.6g}" if np.isfinite(best) else ""
        cmp = _versus(a["objective"], b["objective"]) if a["solved"] and b.get("solved") else ""
        ref = a.get("refine_reason", "")
        if a.get("refine_steps"):
            ref = f"{a['refine_steps']} step(s), {ref}"
        if a.get("refine_start") not in ("", "homotopy", None):
            ref += f", from {a['refine_start']}"
        tb = f"{b['time_s']:.3f}" if b else ""
        lines.append(
            f"| {r['problem']} | {fa} | {fb} | {fbest} | {cmp} | {a.get('stationarity')} | {ref} | "
            f"{a['time_s']:.3f} | {tb} |"
        )
    path.write_text("\n".join(lines) + "\n")


def write_versus_table(rows: list[dict[str, Any]], path: Path, name: str) -> None:
    """Per-problem Markdown table of mcpkit against an earlier mcpkit (``baseline``), both judged
    from the file: objective, time (whole call) and their ratio, stationarity."""
    lines = [
        f"| problem | n | mcpkit f | {name} f | mcpkit s | {name} s | ratio | stationarity |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        a, b = r["mcpkit"], r.get("baseline", {})
        fa = f"{a['objective']:.6g}" if a["solved"] else "not solved"
        fb = f"{b['objective']:.6g}" if b.get("solved") else "not solved"
        ratio = a["time_s"] / b["time_s"] if b.get("time_s") else float("nan")
        ta = f"{a['time_s']:.1f}" + (" (over budget)" if a.get("over_budget") else "")
        lines.append(
            f"| {r['problem']} | {r.get('n', '')} | {fa} | {fb} | {ta} | {b.get('time_s', float('nan')):.1f} "
            f"| {ratio:.2f} | {a.get('stationarity')} |"
        )
    path.write_text("\n".join(lines) + "\n")


def versus_baseline(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """mcpkit against the baseline: time ratios (all problems; both solved), objectives where
    both solve (worse by the :func:`_versus` rule), runs over budget and false 'solved'."""
    both = [r for r in rows if r["mcpkit"]["solved"] and r["baseline"]["solved"]]
    ratio = np.array([r["mcpkit"]["time_s"] / r["baseline"]["time_s"] for r in rows], dtype=float)
    ratio_both = np.array([r["mcpkit"]["time_s"] / r["baseline"]["time_s"] for r in both], dtype=float)
    t_a = np.array([r["mcpkit"]["time_s"] for r in rows], dtype=float)
    t_b = np.array([r["baseline"]["time_s"] for r in rows], dtype=float)
    cmp = {r["problem"]: _versus(r["mcpkit"]["objective"], r["baseline"]["objective"]) for r in both}
    worse = [k for k, v in cmp.items() if v == "worse"]
    better = [k for k, v in cmp.items() if v == "better"]
    return {
        "median_time_ratio": float(np.median(t_a) / np.median(t_b)) if rows else None,
        "per_problem_ratio_median": float(np.median(ratio)) if ratio.size else None,
        "per_problem_ratio_max": float(np.max(ratio)) if ratio.size else None,
        "slower_than_1.25x": [r["problem"] for r, q in zip(rows, ratio, strict=True) if q > 1.25],
        "both_solved": len(both),
        "ratio_both_solved_max": float(np.max(ratio_both)) if ratio_both.size else None,
        "objective_worse": worse,
        "objective_better": better,
        "solved_only_by_mcpkit": [
            r["problem"] for r in rows if r["mcpkit"]["solved"] and not r["baseline"]["solved"]
        ],
        "solved_only_by_baseline": [
            r["problem"] for r in rows if r["baseline"]["solved"] and not r["mcpkit"]["solved"]
        ],
        "mcpkit_over_budget": [r["problem"] for r in rows if r["mcpkit"].get("over_budget")],
        "baseline_over_budget": [r["problem"] for r in rows if r["baseline"].get("over_budget")],
        "mcpkit_false_solved": [r["problem"] for r in rows if r["mcpkit"].get("false_solved")],
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
    for key, style in (("mcpkit", "-"), ("baseline", ":"), ("mpecss", "--")):
        times = np.sort([r[key]["time_s"] for r in rows if key in r and r[key]["solved"]])
        name = rows[0].get("baseline_name", "baseline") if key == "baseline" and rows else key
        if times.size:
            ax.step(times, np.arange(1, times.size + 1), style, where="post", label=f"{name} ({times.size})")
    ax.axhline(len(rows), color="0.6", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("wall time per problem [s]")
    ax.set_ylabel("problems solved (comp, viol <= 1e-6)")
    ax.set_title(f"{title}, {len(rows)} problems", fontsize=9)
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
    ap.add_argument(
        "--peer", choices=["auto", "run", "published"], default="auto",
        help="mpecss: run it, or its published rows (auto: published for macmpec)",
    )  # fmt: skip
    ap.add_argument("--no-refine", action="store_true", help="mcpkit without the B-stationarity refinement")
    ap.add_argument("--only", nargs="*", default=None, help="only these problems (names without .nl.json)")
    ap.add_argument("--table", type=Path, default=None, help="write the per-problem Markdown table")
    ap.add_argument("--backend", choices=["casadi", "pyomo"], default="casadi", help="mcpkit's backend")
    ap.add_argument(
        "--method",
        choices=("auto", *REFORMULATIONS),
        default="auto",
        help="mcpkit's reformulation (auto: what solve_mpcc does by default; fb then scholtes on LPECs)",
    )
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--out", type=Path, default=None, help="write per-problem rows as JSON")
    ap.add_argument("--plot", type=Path, default=None, help="save a solved-vs-time figure (PNG)")
    ap.add_argument("--from-json", type=Path, default=None, help="re-plot/summarise an --out file, no solves")
    ap.add_argument(
        "--workers", type=int, default=None,
        help="solve as a Dask sweep (mcpkit.sweep) on N worker processes (default: in turn, in this process)",
    )  # fmt: skip
    ap.add_argument("--sweep-out", type=Path, default=None, help="the sweep's Parquet folder (default: temp)")
    ap.add_argument(
        "--isolate", action="store_true",
        help="each mcpkit solve in its own process, judged again from the file (mpcc_one.py)",
    )  # fmt: skip
    ap.add_argument(
        "--baseline-python", default=None,
        help="python of an older mcpkit (its own venv) run side by side, isolated (implies --isolate)",
    )  # fmt: skip
    ap.add_argument("--baseline-name", default="9d59f9c", help="what the baseline is called in outputs")
    ap.add_argument("--warm-start", default=None, help="mcpkit's SolveOptions.warm_start (implies --isolate)")
    ap.add_argument("--jobs", type=int, default=1, help="isolated solves run at once (mcpkit and baseline)")
    ap.add_argument(
        "--save-points", type=Path, default=None, help="isolated: save mcpkit's points (.npy) here"
    )  # fmt: skip
    args = ap.parse_args()
    if args.baseline_python or args.warm_start is not None:
        args.isolate = True
    if args.from_json is not None:
        saved = json.loads(args.from_json.read_text())
        if args.plot:
            summ = saved["summary"]
            peer = summ["baseline"]["name"] + " (same run)" if "baseline" in summ else "mpecss"
            title = f"{summ['set']}: mcpkit ({summ.get('mcpkit_backend', 'casadi')}) vs {peer}"
            plot_solved_vs_time(saved["rows"], title, args.plot)
        if args.table:
            write_table(saved["rows"], args.table)
        print(json.dumps(saved["summary"], indent=1))
        return
    logging.getLogger("mpecss").setLevel(logging.ERROR)
    files = sorted(SETS[args.set].glob("*.json"))[: args.limit]
    if args.only:
        files = [f for f in files if f.name.removesuffix(".json").removesuffix(".nl") in set(args.only)]
    if args.set == "nosbench-large" and args.peer == "auto":
        args.no_peer = True  # no per-problem mpecss rows are published for these files (its total: 26/34)
    peer_mode = args.peer if args.peer != "auto" else ("published" if args.set in PUBLISHED else "run")
    published = load_published(args.set) if peer_mode == "published" and not args.no_peer else {}
    best_known = load_best_known(args.set)
    rows: list[dict[str, Any]] = []
    swept: dict[str, list[dict[str, Any]]] = {}
    if args.workers is not None:
        if args.workers < 1:
            ap.error("--workers must be >= 1")
        base = args.sweep_out or Path(tempfile.mkdtemp(prefix="bench_mpcc_sets_"))
        swept["mcpkit"] = swept_rows(
            run_mcpkit_file, files, args.workers, base / "mcpkit.parquet", args.json,
            time_limit=args.time_limit, backend=args.backend, method=args.method, refine=not args.no_refine,
        )  # fmt: skip
        if not args.no_peer and peer_mode == "run":
            swept["mpecss"] = swept_rows(
                run_mpecss_file, files, args.workers, base / "mpecss.parquet", args.json,
                which=args.set, time_limit=args.time_limit,
            )  # fmt: skip
    if args.isolate:
        import sys
        from concurrent.futures import ThreadPoolExecutor

        tasks = [("mcpkit", sys.executable, f) for f in files]
        if args.baseline_python:
            py = (sys.executable, args.baseline_python)
            tasks = [t for f in files for t in (("mcpkit", py[0], f), ("baseline", py[1], f))]
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            if args.save_points is not None:
                args.save_points.mkdir(parents=True, exist_ok=True)

            def point(who: str, f: Path) -> Path | None:
                if args.save_points is None or who != "mcpkit":
                    return None
                return args.save_points / (f.name.removesuffix(".json") + ".npy")

            futures = {
                (who, f): pool.submit(
                    run_isolated, py, f, args.time_limit, args.method, not args.no_refine, point(who, f),
                    args.warm_start if who == "mcpkit" else None,
                )
                for who, py, f in tasks
            }  # fmt: skip
            for who, f in futures:
                swept.setdefault(who, []).append(futures[(who, f)].result())
                r = swept[who][-1]
                if not args.json:
                    line = f"{f.name[:44]:<44} {who:<8} {r['solved']!s:<5} {r['time_s']:7.2f}s {r['status']}"
                    print(line, flush=True)
    for i, f in enumerate(files):
        row: dict[str, Any] = {"problem": f.name.removesuffix(".json").removesuffix(".nl")}
        row["best_known"] = best_known.get(row["problem"], float("nan"))
        if "baseline" in swept:
            row["baseline"], row["baseline_name"] = swept["baseline"][i], args.baseline_name
        if args.isolate:
            row["n"] = len(json.loads(f.read_text()).get("w0", []))
        if "mcpkit" in swept:
            row["mcpkit"] = swept["mcpkit"][i]
        else:
            row["mcpkit"] = run_mcpkit(f, args.time_limit, args.backend, args.method, not args.no_refine)
        if not args.no_peer:
            if peer_mode == "published":
                row["mpecss"] = published.get(row["problem"], {"solved": False, "time_s": np.nan})
            elif "mpecss" in swept:
                row["mpecss"] = swept["mpecss"][i]
            else:
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
    out["mcpkit_refine"] = not args.no_refine
    out["mcpkit_warm_start"] = args.warm_start or "standard"
    out["mcpkit"] = summarise(rows, "mcpkit")
    if args.baseline_python:
        out["baseline"] = {"name": args.baseline_name, **summarise(rows, "baseline")}
        out["versus_baseline"] = versus_baseline(rows)
    if args.isolate:
        out["mcpkit"]["false_solved"] = [r["problem"] for r in rows if r["mcpkit"].get("false_solved")]
        out["mcpkit"]["over_budget"] = [r["problem"] for r in rows if r["mcpkit"].get("over_budget")]
    if not args.no_peer:
        out["mpecss"] = summarise(rows, "mpecss")
        out["mpecss"]["source"] = peer_mode
        out["mpecss"]["own_verdict_converged"] = int(sum(r["mpecss"].get("own_verdict", False) for r in rows))
        if peer_mode == "run":
            # its own "converged" that the common rule refuses, with G of the wrong sign at H's bound
            out["mpecss"]["converged_with_wrong_sign_pairs"] = [
                r["problem"] for r in rows
                if r["mpecss"].get("own_verdict") and not r["mpecss"]["solved"]
                and r["mpecss"].get("wrong_sign_pairs", 0) > 0
            ]  # fmt: skip
        out["objective_vs_mpecss"] = compare_objectives(rows)
    if best_known and rows:
        who = [k for k in ("mcpkit", "mpecss") if k in rows[0]]
        out["objective_vs_best_known"] = {k: compare_best_known(rows, k) for k in who}
    out["mcpkit_failed"] = [r["problem"] for r in rows if not r["mcpkit"]["solved"]]
    classes: dict[str, int] = {}
    for r in rows:
        if r["mcpkit"]["solved"]:
            key = str(r["mcpkit"].get("stationarity"))
            classes[key] = classes.get(key, 0) + 1
    out["mcpkit_stationarity_of_solved"] = classes
    n_solved = out["mcpkit"]["solved"]
    out["mcpkit_certified_fraction"] = (
        (classes.get("B", 0) + classes.get("S", 0)) / n_solved if n_solved else None
    )
    out["mcpkit_uncertified"] = {
        r["problem"]: f"{r['mcpkit'].get('stationarity')}: {r['mcpkit'].get('refine_reason', '')}"
        for r in rows
        if r["mcpkit"]["solved"] and r["mcpkit"].get("stationarity") not in ("B", "S")
    }
    if args.out:
        args.out.write_text(json.dumps({"summary": out, "rows": rows}, default=float, indent=1))
    if args.plot:
        who = "mpecss (published)" if peer_mode == "published" else "mpecss"
        if args.baseline_python:
            who = f"{args.baseline_name} (same run)"
        plot_solved_vs_time(rows, f"{args.set}: mcpkit ({args.backend}) vs {who}", args.plot)
    if args.table:
        if args.baseline_python:
            write_versus_table(rows, args.table, args.baseline_name)
        else:
            write_table(rows, args.table)
    if args.json:
        print(json.dumps(out))
    else:
        print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
