r"""Scaling of mcpkit's licence-free MCP engines against the machine's own linear algebra and PATH.

Every ratio below is taken from timings measured in the same run (same machine, same load).
Times of the dense and sparse parts are the best of ``--repeat`` (medians are in the JSON), and
the BLAS runs single-threaded (``--blas-threads 1``): on this shared 2-core machine a threaded
OpenBLAS makes one 221 x 221 LU take 0.5 ms or 75 ms at random, which no ratio survives.

1. **Dense random P-matrix LCP** :math:`0 \le z \perp Mz + q \ge 0` with
   :math:`M = AA^T/n + I + 0.3(A - A^T)/\sqrt n` (positive definite, so a P-matrix: one
   solution), :math:`A` and then :math:`q` standard normal from ``np.random.default_rng(7)``.
   For each size, in a fresh subprocess: ``mcpkit.solve(MCP.lcp(M, q), method="newton")``
   (total: declaration, lowering, solve), the same split into ``mcpkit.Solver`` build and cold
   solve, the natural residual, the peak RSS, and one ``scipy.linalg.lu_factor(M)`` as the
   physical-limit proxy (the peak memory of one LU alone comes from its own subprocess).
   ``method="lemke"`` (n <= ``--lemke-max``) and ``method="path"`` (n <= ``--path-max``; GAMSPy's
   demo licence is size-limited) run in their own subprocesses. Targets: newton <= 30 one-LU
   times at n = 1000 and 2000, peak memory <= 1 GB at n = 2000, residual <= 1e-10.
2. **Sparse obstacle problem**: the box LCP :math:`\psi_l \le u \le \psi_u \perp Ku - h^2 f` on a
   :math:`k \times k` grid of the unit square (:func:`obstacle_lcp`; both bounds active on about a
   third of the nodes), declared as ``MCP.lcp(K_sparse, q, lb, ub)``. ``method="newton"`` total
   and split against one ``scipy.sparse.linalg.splu(K)``; the peak RSS above the problem data,
   per stored nonzero of :math:`K` and against the peak of one ``splu`` alone. Target: <= 30
   one-``splu`` times up to n = 10^5, memory O(nnz).
3. **Per step**: the seed-000 ECP slider steps (``bench_ecp_step``: both models, 45 steps) and the
   seed-004 Stewart-Trinkle NCP steps (``bench_stewart_trinkle``: Vose plate, h = 1e-4, the steps
   of its IPOPT penalty trajectory). One ``mcpkit.Solver(method="newton")`` re-solves warm step
   after step; the reference is the bare ``casadi.rootfinder("newton")`` on the same steps, as
   those two benchmarks build and time it. Target: median step <= 3x the rootfinder's. A cProfile
   of the Solver's warm steps shows where the time goes.
4. **PATH side by side** on ``../shared/data/lcp-siconos/*.json``, ``mcplib/*.lcp.json`` and (when
   :func:`mcpkit.formats.io.load_mcp` reads them) the nonlinear MCPLIB ports ``mcplib/*.json``:
   ``newton``, ``lemke`` (LCPs) and ``path`` (GAMSPy; skipped with the reason when
   :func:`mcpkit.solving.availability.path_status` says no), each through ``mcpkit.solve`` and judged on
   the declaration. Total times include the route build (for PATH: GAMSPy's model generation).
5. **Block-level declarations** (issue 13): the 500-contact rows of
   ``bench_block_declarations.py`` (Stewart–Trinkle NCP and LCP steps of a rigid body, ``nc``
   particles, an FCLIB Alart–Curnier declaration): declare, lower to CasADi, Jacobian, Pyomo
   times, stored entries (nnz), µs per entry and memory, each in its own process.

Run::

    nice -n 10 python benchmarks/bench_mcp_scaling.py [--out results.json] \
        [--parts dense,sparse,steps,path,blocks]

The table goes to stdout, progress bars to stderr; ``--out`` writes everything measured as JSON.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import math
import os
import pstats
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from tqdm import tqdm

import mcpkit
from mcpkit.errors import MCPKitError
from mcpkit.solving.availability import path_status

HERE = Path(__file__).resolve().parent
#: ``../shared/data`` beside the checkout (as in ``tests/conftest.py``), or ``$MCPKIT_SHARED/data``.
DATA = Path(os.environ.get("MCPKIT_SHARED", HERE.parent.parent / "shared")) / "data"
PARTS = ("dense", "sparse", "steps", "path", "blocks")
RESULT_TAG = "BENCH_RESULT "
BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


# ---------------------------------------------------------------------------------------- problems
def dense_p_lcp(n: int, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    r"""The issue's dense LCP data: :math:`M = AA^T/n + I + 0.3(A - A^T)/\sqrt n`, then :math:`q`.

    :math:`x^T M x = \|A^T x\|^2/n + \|x\|^2 > 0`, so :math:`M` is positive definite (a P-matrix)
    and the LCP has exactly one solution.
    """
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    M = A @ A.T / n + np.eye(n) + 0.3 * (A - A.T) / math.sqrt(n)
    q = rng.standard_normal(n)
    return M, q


def obstacle_lcp(k: int, load: float = 150.0) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray, np.ndarray]:
    r"""Two-sided obstacle problem, :math:`k \times k` grid: :math:`\psi_l \le u \le \psi_u \perp Ku - h^2 f`.

    :math:`K = I \otimes T + T \otimes I`, :math:`T = \mathrm{tridiag}(-1, 2, -1)` (the 5-point
    Laplacian times :math:`h^2`, :math:`h = 1/(k+1)`, zero Dirichlet boundary), symmetric
    positive definite; :math:`f = \text{load}\cdot\sin 2\pi x`,
    :math:`\psi_l = 0.05 - 4\|x - (0.75, 0.5)\|^2`,
    :math:`\psi_u = \max(-0.05 + 4\|x - (0.25, 0.5)\|^2, \psi_l + 0.1)`.
    Returns ``(K as CSR, q, lb, ub)``.
    """
    h = 1.0 / (k + 1)
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(k, k))
    eye = sp.identity(k)
    K = (sp.kron(eye, T) + sp.kron(T, eye)).tocsr()
    x = h * np.arange(1, k + 1)
    X, Y = (g.ravel() for g in np.meshgrid(x, x, indexing="ij"))
    lb = 0.05 - 4.0 * ((X - 0.75) ** 2 + (Y - 0.5) ** 2)
    ub = np.maximum(-0.05 + 4.0 * ((X - 0.25) ** 2 + (Y - 0.5) ** 2), lb + 0.1)
    q = -h * h * load * np.sin(2.0 * np.pi * X)
    return K, q, lb, ub


def sparse_lcp_status() -> tuple[bool, str]:
    """Whether ``MCP.lcp`` takes a ``scipy.sparse`` matrix (``(ok, why not)``)."""
    try:
        mcpkit.MCP.lcp(sp.identity(3, format="csr"), np.ones(3))
    except Exception as exc:  # any refusal means "not landed yet"
        return False, f"MCP.lcp(scipy.sparse) raises {type(exc).__name__}: {exc}"[:300]
    return True, ""


# ---------------------------------------------------------------------------------- measurements
def _rss_mb() -> float:
    """Current resident set size of this process, MB (Linux ``/proc``)."""
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _status_mb(field: str) -> float | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def _reset_peak() -> bool:
    """Reset the kernel's peak-RSS mark of this process (Linux ``clear_refs`` 5); False if refused."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return False
    return True


def _peak_mb() -> float:
    """Peak resident set size since :func:`_reset_peak` (``VmHWM``), else since start (``ru_maxrss``), MB."""
    hwm = _status_mb("VmHWM")
    return hwm if hwm is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _times(fn: Callable[[], Any], repeat: int) -> list[float]:
    times = []
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def _outcome(res: Any, total_s: float) -> dict[str, Any]:
    return {
        "solved": bool(res.solved),
        "residual": float(res.natural_residual),
        "total_s": total_s,
        "route_s": float(res.wall_time_s),
        "iterations": int(res.iterations),
        "termination": str(getattr(res.termination, "value", res.termination)),
        "message": res.message[:300],
    }


def _solve_timed(
    make: Callable[[], mcpkit.MCP], method: str, tol: float, time_limit: float
) -> dict[str, Any]:
    """Declaration plus ``mcpkit.solve`` from scratch; ``total_s`` includes both."""
    t0 = time.perf_counter()
    mcp = make()
    t_decl = time.perf_counter() - t0
    res = mcpkit.solve(mcp, method=method, tol=tol, time_limit=time_limit)
    out = _outcome(res, time.perf_counter() - t0)
    out["declare_s"] = t_decl
    return out


def _split(
    make: Callable[[], mcpkit.MCP], method: str, tol: float, time_limit: float, repeat: int
) -> dict[str, Any]:
    """``mcpkit.Solver`` build once, then cold solves (best of ``repeat``): where the total goes."""
    mcp = make()
    t0 = time.perf_counter()
    solver = mcpkit.Solver(mcp, method=method, tol=tol, time_limit=time_limit)
    build = time.perf_counter() - t0
    times, res = [], None
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        res = solver.solve(warm_start=False)
        times.append(time.perf_counter() - t0)
    assert res is not None
    return {
        "build_s": build,
        "solve_s": min(times),
        "solve_median_s": float(np.median(times)),
        "solve_solved": bool(res.solved),
        "linear_solver": str(res.extra.get("linear_solver", "")),
        "factorizations": res.extra.get("factorizations"),
    }


def worker(spec: dict[str, Any]) -> dict[str, Any]:
    """One size and method in this (fresh) process; returns the measurements (see module docstring).

    ``method="lu"`` measures only the peak memory of one LU of the same matrix (its own process,
    so that memory freed by earlier work does not hide it).
    """
    kind, method = spec["kind"], spec["method"]
    tol, tl, repeat = spec["tol"], spec["time_limit"], spec["repeat"]
    if method != "lu":  # a tiny solve first: lazy imports and one-time set-up are not the size's memory
        small = mcpkit.MCP.lcp(*dense_p_lcp(5)) if kind == "dense" else mcpkit.MCP.lcp(*obstacle_lcp(3))
        mcpkit.solve(small, method=method, tol=tol)
    if kind == "dense":
        M, q = dense_p_lcp(spec["n"])

        def make() -> mcpkit.MCP:
            return mcpkit.MCP.lcp(M, q)

        def factor() -> Any:
            return scipy.linalg.lu_factor(M)

        out: dict[str, Any] = {"n": spec["n"], "nnz": int(M.size)}
    else:
        K, q, lb, ub = obstacle_lcp(spec["k"])

        def make() -> mcpkit.MCP:
            return mcpkit.MCP.lcp(K, q, lb, ub)

        Kc = K.tocsc()

        def factor() -> Any:
            return spla.splu(Kc)

        out = {"k": spec["k"], "n": K.shape[0], "nnz": int(K.nnz)}
    base = _rss_mb()  # after the problem data: what the solve adds to it
    out["peak_since_base"] = _reset_peak()
    if method == "lu":
        factor()
        out["lu_peak_mb"] = _peak_mb() - base
        return out
    runs = [_solve_timed(make, method, tol, tl) for _ in range(max(1, repeat))]
    out.update(runs[-1])
    for key in ("total_s", "route_s", "declare_s"):
        out[key] = min(r[key] for r in runs)
    out["total_median_s"] = float(np.median([r["total_s"] for r in runs]))
    out["solved"] = all(r["solved"] for r in runs)
    out["peak_mb"] = _peak_mb()
    out["base_mb"] = base
    out["peak_above_base_mb"] = out["peak_mb"] - base
    if method == "newton":
        out.update(_split(make, method, tol, tl, repeat))
    lu = _times(factor, spec["lu_repeat"])
    out["lu_s"], out["lu_median_s"] = min(lu), float(np.median(lu))
    return out


def _spawn(spec: dict[str, Any], timeout: float) -> dict[str, Any]:
    """Run :func:`worker` in a fresh interpreter (its own peak RSS); errors come back as data."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(spec)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"worker timed out after {timeout:.0f} s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT_TAG):
            return json.loads(line[len(RESULT_TAG) :])
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
    return {"error": f"worker exit {proc.returncode}: " + " | ".join(tail)[:500]}


# ----------------------------------------------------------------------------------------- parts
def part_dense(args: argparse.Namespace, have_path: bool) -> list[dict[str, Any]]:
    rows = []
    tasks = []
    for n in args.dense_sizes:
        tasks += [(n, "newton"), (n, "lu")]
        if n <= args.lemke_max:
            tasks.append((n, "lemke"))
        if have_path and n <= args.path_max:
            tasks.append((n, "path"))
    by_n: dict[int, dict[str, Any]] = {n: {"n": n} for n in args.dense_sizes}
    for n, method in tqdm(tasks, desc="dense LCP", unit="run"):
        spec = {"kind": "dense", "n": n, "method": method, "tol": args.tol, "time_limit": args.time_limit,
                "repeat": args.repeat, "lu_repeat": args.lu_repeat}  # fmt: skip
        by_n[n][method] = _spawn(spec, args.worker_timeout)
    for row in by_n.values():
        nw = row.get("newton", {})
        lu = nw.get("lu_s")
        row["lu_peak_mb"] = row.pop("lu", {}).get("lu_peak_mb")
        if row["lu_peak_mb"] and "peak_above_base_mb" in nw:
            row["newton_mem_over_lu_mem"] = nw["peak_above_base_mb"] / row["lu_peak_mb"]
        if lu:
            row["lu_s"] = lu
            row["newton_over_lu"] = nw["total_s"] / lu
            row["newton_over_lu_median"] = nw["total_median_s"] / nw["lu_median_s"]
            row["newton_solve_over_lu"] = nw["solve_s"] / lu if "solve_s" in nw else None
            if "total_s" in row.get("lemke", {}):
                row["lemke_over_lu"] = row["lemke"]["total_s"] / lu
        if "total_s" in nw and "total_s" in row.get("path", {}):
            row["newton_over_path"] = nw["total_s"] / row["path"]["total_s"]
        rows.append(row)
    return rows


def part_sparse(args: argparse.Namespace) -> dict[str, Any]:
    ok, why = sparse_lcp_status()
    if not ok:
        return {"skipped": why, "rows": []}
    rows = []
    for k in tqdm(args.grid_sizes, desc="obstacle LCP", unit="grid"):
        spec = {"kind": "sparse", "k": k, "method": "newton", "tol": args.tol, "time_limit": args.time_limit,
                "repeat": args.repeat if k * k <= 20000 else 1, "lu_repeat": args.lu_repeat}  # fmt: skip
        r = _spawn(spec, args.worker_timeout)
        r.setdefault("k", k)
        r["lu_peak_mb"] = _spawn(spec | {"method": "lu"}, args.worker_timeout).get("lu_peak_mb")
        if r.get("lu_s"):
            r["newton_over_splu"] = r["total_s"] / r["lu_s"]
            r["newton_over_splu_median"] = r["total_median_s"] / r["lu_median_s"]
            r["newton_solve_over_splu"] = r["solve_s"] / r["lu_s"]
            r["bytes_above_base_per_nnz"] = r["peak_above_base_mb"] * 2**20 / r["nnz"]
            if r.get("lu_peak_mb"):
                r["newton_mem_over_splu_mem"] = r["peak_above_base_mb"] / r["lu_peak_mb"]
        rows.append(r)
    ok = [r for r in rows if "peak_above_base_mb" in r]
    for a, b in zip(ok, ok[1:], strict=False):  # memory slope: O(nnz) shows as a bounded, flat value
        grow = b["peak_above_base_mb"] - a["peak_above_base_mb"]
        b["marginal_bytes_per_nnz"] = grow * 2**20 / (b["nnz"] - a["nnz"])
    return {"rows": rows}


def _profile_rows(prof: cProfile.Profile, steps: int, top: int) -> dict[str, list[dict[str, Any]]]:
    """Top functions by cumulative and by own time, per step (ms)."""
    st = pstats.Stats(prof)
    entries = []
    for (fname, line, func), (_cc, nc, tt, ct, _callers) in st.stats.items():  # type: ignore[attr-defined]
        short = fname
        for marker in ("site-packages/", "/work/main/", "lib/python3"):
            if marker in short:
                short = short.split(marker, 1)[1]
        entries.append(
            {
                "function": f"{short}:{line}({func})",
                "calls_per_step": nc / steps,
                "cum_ms_per_step": 1e3 * ct / steps,
                "own_ms_per_step": 1e3 * tt / steps,
            }
        )
    by_cum = sorted(entries, key=lambda e: -e["cum_ms_per_step"])
    by_own = sorted(entries, key=lambda e: -e["own_ms_per_step"])
    return {"by_cumulative": by_cum[:top], "by_own_time": by_own[:top]}


def _warm_steps(mcp: mcpkit.MCP, params: list[Any], passes: int, tol: float) -> dict[str, Any]:
    """One ``Solver(method="newton")``; each pass re-solves the steps warm (the first cold)."""
    t0 = time.perf_counter()
    solver = mcpkit.Solver(mcp, backend="casadi", method="newton", tol=tol)
    build = time.perf_counter() - t0
    per, its, zs, solved = [], [], [], 0
    unsolved: set[int] = set()
    for _ in range(passes):
        zs = []
        for k, p in enumerate(params):
            t0 = time.perf_counter()
            res = solver.solve(p=p, warm_start=k > 0)
            per.append(time.perf_counter() - t0)
            its.append(res.iterations)
            solved += int(res.solved)
            if not res.solved:
                unsolved.add(k)
            zs.append(res.z)
    warm = [t for i, t in enumerate(per) if i % len(params)]  # the warm steps only
    prof = cProfile.Profile()
    prof.enable()
    for k, p in enumerate(params):
        solver.solve(p=p, warm_start=k > 0)
    prof.disable()
    return {
        "build_s": build,
        "median_step_s": float(np.median(warm)),
        "mean_step_s": float(np.mean(warm)),
        "iterations_per_step": float(np.mean(its)),
        "median_iterations_per_step": float(np.median(its)),
        "solved": f"{solved}/{len(per)}",
        "unsolved_steps": sorted(unsolved),
        "z": np.array(zs),
        "profile": _profile_rows(prof, len(params), 20),
    }


def part_steps(args: argparse.Namespace) -> list[dict[str, Any]]:
    sys.path.insert(0, str(HERE))
    import bench_ecp_step as ecp
    import bench_stewart_trinkle as stt

    rows = []
    bar = tqdm(total=3, desc="per-step", unit="model")
    for kind in ("complementarity", "quadratic"):
        model, params, zref, z0 = ecp._sequence(kind)
        ours = _warm_steps(model.mcp, params, args.step_passes, ecp.TOL)
        zdiff = float(np.abs(ours.pop("z") - zref).max())
        rf = ecp._time_newton(model, params, zref, z0, args.step_passes)
        rows.append(
            {
                "problem": f"ECP seed 000, {kind} model",
                "n": model.mcp.n,
                "steps": len(params),
                "newton": ours,
                "max_abs_diff_vs_reference": zdiff,
                "rootfinder": rf,
                "ratio": ours["median_step_s"] / rf["median_step_s"],
            }
        )
        bar.update()
    # the steps: the IPOPT penalty trajectory of bench_stewart_trinkle (all steps solved there), so
    # that newton and the rootfinder (active set from that trajectory) see the same parameters
    route = stt._route("ncp", args.st_steps, "casadi", stt.METHOD)
    if not route["ran"]:
        rows.append({"problem": "Stewart-Trinkle seed 004, NCP", "error": route["error"]})
    else:
        model, sim = route["model"], route["sim"]
        rf = stt._newton(model, sim)
        params = [model.parameters(k, float(sim.t[k]), sim.states[k]) for k in range(sim.z.shape[0])]
        ours = _warm_steps(model.mcp, params, 1, 1e-8)
        zdiff = float(np.abs(ours.pop("z") - sim.z).max())
        rows.append(
            {
                "problem": "Stewart-Trinkle seed 004, NCP (Vose plate, h=1e-4)",
                "n": model.mcp.n,
                "steps": len(params),
                "newton": ours,
                "rootfinder": rf,
                "max_abs_diff_vs_reference": zdiff,
                "reference": f"{stt.METHOD}/casadi, {route['solved_steps']}/{route['steps']} solved",
                "ratio": ours["median_step_s"] / rf["median_step_s"],
            }
        )
    bar.update()
    bar.close()
    return rows


def load_problem(path: Path) -> tuple[mcpkit.MCP | None, str]:
    """``(MCP, "")`` or ``(None, why not)`` through :func:`mcpkit.formats.io.load_mcp`."""
    from mcpkit.formats.io import load_mcp

    try:
        return load_mcp(path), ""
    except MCPKitError as exc:
        return None, f"{type(exc).__name__}: {exc}"[:300]


def _is_lcp(path: Path) -> bool:
    return path.name.endswith(".lcp.json") or path.parent.name == "lcp-siconos"


def part_path(args: argparse.Namespace, have_path: bool, why_not: str) -> dict[str, Any]:
    files = sorted((DATA / "lcp-siconos").glob("*.json")) + sorted((DATA / "mcplib").glob("*.lcp.json"))
    nonlinear = sorted(p for p in (DATA / "mcplib").glob("*.json") if not p.name.endswith(".lcp.json"))
    notes: list[str] = []
    jobs: list[tuple[Path, mcpkit.MCP, list[str]]] = []
    skipped: dict[str, list[str]] = {}
    for f in files + nonlinear:
        mcp, why = load_problem(f)
        if mcp is None:
            skipped.setdefault(why.replace(str(f), "FILE"), []).append(f.name)
            continue
        methods = ["newton"] + (["lemke"] if _is_lcp(f) else []) + (["path"] if have_path else [])
        jobs.append((f, mcp, methods))
    for why, names in skipped.items():
        notes.append(f"skipped {len(names)} files, not readable as MCPs ({why}): {', '.join(names)}")
    if not have_path:
        notes.append(f"PATH skipped: {why_not}")
    rows = []
    for f, mcp, methods in tqdm(jobs, desc="data sets", unit="problem"):
        row: dict[str, Any] = {"problem": f"{f.parent.name}/{f.name.removesuffix('.json')}", "n": mcp.n}
        for m in methods:
            t0 = time.perf_counter()
            try:
                res = mcpkit.solve(mcp, method=m, tol=args.tol_data, time_limit=args.time_limit)
                row[m] = _outcome(res, time.perf_counter() - t0)
            except Exception as exc:  # a refusal (size limit, not affine) is a result here
                row[m] = {"error": f"{type(exc).__name__}: {exc}"[:300], "total_s": time.perf_counter() - t0}
        nw, pa = row.get("newton", {}), row.get("path", {})
        if "residual" in nw and "residual" in pa:
            row["newton_over_path"] = nw["total_s"] / pa["total_s"]
            row["newton_over_path_route"] = nw["route_s"] / pa["route_s"] if pa["route_s"] > 0 else None
        rows.append(row)
    return {"rows": rows, "notes": notes, "nonlinear_files": len(nonlinear), "skipped": skipped}


# ----------------------------------------------------------------------------------------- table
Column = tuple[str, int, str, Callable[[dict[str, Any]], Any]]


def _fmt(x: Any, spec: str) -> str:
    if isinstance(x, bool) or x is None:
        return "-" if x is None else str(x)
    try:
        return format(x, spec)
    except (TypeError, ValueError):
        return str(x)


def _lines(cols: list[Column], rows: list[dict[str, Any]], indent: str = "") -> list[str]:
    """A fixed-width table: a header, then one line per row (missing cells as ``-``)."""
    out = [indent + " ".join(f"{h:>{w}}" for h, w, _, _ in cols)]
    for r in rows:
        cells = []
        for _, w, spec, get in cols:
            try:
                v = get(r)
            except (KeyError, TypeError, IndexError):
                v = None
            cells.append(f"{_fmt(v, spec):>{w}}")
        out.append(indent + " ".join(cells))
    return out


def _cell(r: dict[str, Any] | None) -> str:
    """``solved? residual time`` of one method's outcome."""
    if not r:
        return "-"
    if "error" in r:
        return "ERR " + r["error"][:40]
    return f"{'ok' if r['solved'] else 'FAIL'} {r['residual']:.0e} {r['total_s']:.3f}s"


def _dense_lines(rows: list[dict[str, Any]]) -> list[str]:
    cols: list[Column] = [
        ("n", 5, "d", lambda r: r["n"]),
        ("LU s", 7, ".4f", lambda r: r["lu_s"]),
        ("newton s", 8, ".3f", lambda r: r["newton"]["total_s"]),
        ("build", 7, ".3f", lambda r: r["newton"]["build_s"]),
        ("solve", 7, ".3f", lambda r: r["newton"]["solve_s"]),
        ("/LU", 6, ".1f", lambda r: r["newton_over_lu"]),
        ("med/LU", 6, ".1f", lambda r: r["newton_over_lu_median"]),
        ("solve/LU", 8, ".1f", lambda r: r["newton_solve_over_lu"]),
        ("resid", 8, ".1e", lambda r: r["newton"]["residual"]),
        ("it", 3, "d", lambda r: r["newton"]["iterations"]),
        ("peak MB", 8, ".0f", lambda r: r["newton"]["peak_mb"]),
        ("+data", 6, ".0f", lambda r: r["newton"]["peak_above_base_mb"]),
        ("LU MB", 6, ".0f", lambda r: r["lu_peak_mb"]),
        ("lemke s", 8, ".3f", lambda r: r["lemke"]["total_s"]),
        ("/LU", 6, ".1f", lambda r: r["lemke_over_lu"]),
        ("resid", 8, ".1e", lambda r: r["lemke"]["residual"]),
        ("path s", 7, ".3f", lambda r: r["path"]["total_s"]),
        ("nw/path", 7, ".2f", lambda r: r["newton_over_path"]),
    ]
    out = _lines(cols, rows)
    for r in rows:
        for m in ("newton", "lemke", "path"):
            x = r.get(m, {})
            if "error" in x or (x and not x.get("solved")):
                out.append(f"      n={r['n']} {m}: {x.get('error') or x.get('message')}")
    return out


def _sparse_lines(part: dict[str, Any]) -> list[str]:
    cols: list[Column] = [
        ("k", 4, "d", lambda r: r["k"]),
        ("n", 7, "d", lambda r: r["n"]),
        ("nnz", 7, "d", lambda r: r["nnz"]),
        ("splu s", 7, ".4f", lambda r: r["lu_s"]),
        ("newton s", 8, ".3f", lambda r: r["total_s"]),
        ("build", 7, ".3f", lambda r: r["build_s"]),
        ("solve", 7, ".3f", lambda r: r["solve_s"]),
        ("/splu", 6, ".1f", lambda r: r["newton_over_splu"]),
        ("med/splu", 8, ".1f", lambda r: r["newton_over_splu_median"]),
        ("solve/splu", 10, ".1f", lambda r: r["newton_solve_over_splu"]),
        ("resid", 8, ".1e", lambda r: r["residual"]),
        ("it", 3, "d", lambda r: r["iterations"]),
        ("peak MB", 8, ".0f", lambda r: r["peak_mb"]),
        ("+data", 6, ".0f", lambda r: r["peak_above_base_mb"]),
        ("B/nnz", 7, ".0f", lambda r: r["bytes_above_base_per_nnz"]),
        ("dB/dnnz", 7, ".0f", lambda r: r["marginal_bytes_per_nnz"]),
        ("splu MB", 7, ".0f", lambda r: r["lu_peak_mb"]),
        ("mem/splu", 8, ".1f", lambda r: r["newton_mem_over_splu_mem"]),
    ]
    out = [f"   skipped: {part['skipped']}"] if part.get("skipped") else []
    out += _lines(cols, part["rows"])
    for r in part["rows"]:
        if "error" in r or not r.get("solved"):
            out.append(f"      k={r['k']} newton: {r.get('error') or r.get('message')}")
    return out


def _step_lines(rows: list[dict[str, Any]]) -> list[str]:
    cols: list[Column] = [
        ("problem", 52, "s", lambda r: r["problem"][:52]),
        ("n", 3, "d", lambda r: r["n"]),
        ("steps", 5, "d", lambda r: r["steps"]),
        ("newton ms", 9, ".3f", lambda r: 1e3 * r["newton"]["median_step_s"]),
        ("rootf ms", 8, ".3f", lambda r: 1e3 * r["rootfinder"]["median_step_s"]),
        ("ratio", 6, ".2f", lambda r: r["ratio"]),
        ("mean ms", 8, ".3f", lambda r: 1e3 * r["newton"]["mean_step_s"]),
        ("max|dz|", 8, ".1e", lambda r: r["max_abs_diff_vs_reference"]),
        ("it/step", 7, ".2f", lambda r: r["newton"]["iterations_per_step"]),
        ("solved", 8, "s", lambda r: r["newton"]["solved"]),
    ]
    out = _lines(cols, rows)
    prof: list[Column] = [
        ("cum ms", 8, ".3f", lambda e: e["cum_ms_per_step"]),
        ("own ms", 8, ".3f", lambda e: e["own_ms_per_step"]),
        ("calls", 6, ".1f", lambda e: e["calls_per_step"]),
        ("  function", 10, "s", lambda e: "  " + e["function"]),
    ]
    for r in rows:
        if "error" in r:
            out.append(f"   {r['problem']}: error {r['error']}")
        elif r["newton"]["unsolved_steps"]:
            out.append(f"   {r['problem']}: newton did not solve steps {r['newton']['unsolved_steps']}")
        if "newton" in r:
            out.append(f"\n   cProfile of the warm steps, {r['problem']}: by cumulative time, per step")
            out += _lines(prof, r["newton"]["profile"]["by_cumulative"][:12], "   ")
            out.append(f"   ... by own time, {r['problem']}")
            out += _lines(prof, r["newton"]["profile"]["by_own_time"][:8], "   ")
    return out


def _path_lines(part: dict[str, Any]) -> list[str]:
    cols: list[Column] = [
        ("problem", 34, "s", lambda r: r["problem"][:34]),
        ("n", 4, "d", lambda r: r["n"]),
        ("newton", 24, "s", lambda r: _cell(r.get("newton"))),
        ("lemke", 24, "s", lambda r: _cell(r.get("lemke"))),
        ("path", 24, "s", lambda r: _cell(r.get("path"))),
        ("nw/path", 7, ".2f", lambda r: r["newton_over_path"]),
    ]
    rows = part["rows"]
    out = _lines(cols, rows)
    out += [f"   note: {note}" for note in part["notes"]]
    fails = [r["problem"] for r in rows if not r.get("newton", {}).get("solved")]
    out.append(f"   newton not solved on: {', '.join(fails) if fails else 'none'}")
    ratios = [r["newton_over_path"] for r in rows if r.get("newton_over_path")]
    if ratios:
        out.append(
            f"   newton/PATH total-time ratio: median {np.median(ratios):.2f}, "
            f"min {min(ratios):.2f}, max {max(ratios):.2f} over {len(ratios)} problems"
        )
        route = [r["newton_over_path_route"] for r in rows if r.get("newton_over_path_route")]
        out.append(
            f"   newton/PATH route-only ratio (no build, no GAMSPy model generation): "
            f"median {np.median(route):.3g}, max {max(route):.3g}"
        )
    return out


def _block_bench() -> Any:
    """``benchmarks/bench_block_declarations.py`` as a module (issue 13's declaration benchmark)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_blocks", HERE / "bench_block_declarations.py")
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def part_blocks(sizes: tuple[int, ...] = (500,)) -> list[dict[str, Any]]:
    """Issue 13: declaring and lowering block-level steps and an FCLIB problem at 500 contacts."""
    return _block_bench().run_sizes(list(sizes))


def print_table(out: dict[str, Any]) -> None:
    """The human-readable summary of :func:`main`'s results."""
    lines = [
        f"mcpkit MCP scaling benchmark, {out['date']}; tol {out['tol']:g} (data sets {out['tol_data']:g})",
        f"PATH: {out['path']}",
    ]
    if "dense" in out:
        lines += [
            "",
            "1. Dense random P-matrix LCP (seed 7); best-of times; ratios to one dense LU (target <= 30)",
        ]
        lines += _dense_lines(out["dense"])
    if "sparse" in out:
        lines += [
            "",
            "2. Sparse obstacle LCP, two-sided box; best-of times; ratios to one splu (target <= 30)",
        ]
        lines += _sparse_lines(out["sparse"])
    if "steps" in out:
        lines += [
            "",
            "3. Per step: one warm Solver(method='newton') vs bare casadi.rootfinder (target <= 3x)",
        ]
        lines += _step_lines(out["steps"])
    if "path_side" in out:
        lines += ["", "4. Data sets: solved? residual total-time of newton, lemke, PATH; newton/PATH time"]
        lines += _path_lines(out["path_side"])
    if "blocks" in out:
        lines += ["", "5. Block-level declarations (issue 13): declare, lower, Jacobian, memory (O(nnz))"]
        lines += ["  " + line for line in _block_bench().table_lines(out["blocks"])]
    print("\n".join(lines))


# ------------------------------------------------------------------------------------------ main
def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, help="write the results as JSON to this file")
    ap.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated subset of {PARTS}")
    ap.add_argument("--dense-sizes", type=int, nargs="+", default=[100, 200, 300, 500, 1000, 2000])
    ap.add_argument("--grid-sizes", type=int, nargs="+", default=[50, 100, 200, 317])
    ap.add_argument("--lemke-max", type=int, default=1000, help="largest n for lemke on the dense LCP")
    ap.add_argument("--path-max", type=int, default=1000, help="largest n for PATH, dense LCP")
    ap.add_argument("--tol", type=float, default=1e-10, help="tolerance of the dense and sparse LCPs")
    ap.add_argument("--tol-data", type=float, default=1e-8, help="tolerance on the data sets (part 4)")
    ap.add_argument("--time-limit", type=float, default=300.0, help="per solve, seconds")
    ap.add_argument("--repeat", type=int, default=3, help="solves per size (median; one above n = 1000)")
    ap.add_argument("--lu-repeat", type=int, default=5, help="LU factorisations per size (median)")
    ap.add_argument("--step-passes", type=int, default=3, help="passes over the ECP step sequence")
    ap.add_argument("--st-steps", type=int, default=400, help="Stewart-Trinkle steps")
    ap.add_argument("--worker-timeout", type=float, default=1800.0)
    ap.add_argument(
        "--blas-threads",
        type=int,
        default=1,
        help="BLAS/OpenMP threads (default 1: on a loaded machine threaded OpenBLAS makes one small LU "
        "take 0.5 ms or 75 ms at random); 0 leaves the environment as it is",
    )
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    want = str(args.blas_threads)
    if args.blas_threads > 0 and any(os.environ.get(v) != want for v in BLAS_THREAD_VARS):
        if argv is not None:
            need = ", ".join(f"{v}={want}" for v in BLAS_THREAD_VARS)
            raise SystemExit(f"set {need} before starting Python, or pass --blas-threads 0")
        # the BLAS reads its thread count at load time: start again with it set
        env = os.environ | dict.fromkeys(BLAS_THREAD_VARS, want)
        sys.stdout.flush()
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    if args.worker:
        res = worker(json.loads(args.worker))
        print(RESULT_TAG + json.dumps(res), flush=True)
        return res
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        ap.error(f"unknown parts {unknown}; choose from {PARTS}")
    have_path, where = path_status()
    out: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "tol": args.tol,
        "tol_data": args.tol_data,
        "path": where if have_path else f"unavailable ({where})",
        "machine": {
            "cpus": os.cpu_count(),
            "numpy": np.__version__,
            "blas_threads": {v: os.environ.get(v) for v in BLAS_THREAD_VARS},
            "load_average_at_start": os.getloadavg(),
        },
    }
    if "dense" in parts:
        out["dense"] = part_dense(args, have_path)
    if "steps" in parts:
        out["steps"] = part_steps(args)
    if "path" in parts:
        out["path_side"] = part_path(args, have_path, where)
    if "sparse" in parts:
        out["sparse"] = part_sparse(args)
    if "blocks" in parts:
        out["blocks"] = part_blocks()
    out["machine"]["load_average_at_end"] = os.getloadavg()
    if args.out:
        args.out.write_text(json.dumps(out, indent=1, default=str))
    print_table(out)
    return out


if __name__ == "__main__":
    main()
