r"""Time per Stewart–Trinkle step (seed 004 eqs 9, 15): mcpkit's warm CasADi re-solve against
the Pyomo route, PATH (when present) and a compiled-Newton physical limit.

Problem: the particle on the Vose plate (§3.1; always sliding, always in contact), h = 1e-4.
For each formulation (NCP; LCP with 8, 16, 32 directions):

* ``casadi``: :func:`mcpkit.models.stepping.simulate` with one :class:`mcpkit.Solver`
  (``backend="casadi"``, IPOPT penalty homotopy, warm parametric re-solves);
* ``mpec_nlp``: Pyomo's own MPEC route (:class:`peers.PyomoMpecNlp`) on the same step MCPs
  (parameters from the CasADi trajectory, warm-started from its previous step) — the peer;
* ``pyomo``: mcpkit's own homotopy with ``backend="pyomo"`` (fewer steps: it is slow);
* ``path``: ``method="path"`` when :func:`mcpkit.solving.availability.path_available` says so;
* ``newton``: the physical limit. With the active set of each step taken from the CasADi
  solution, the step is the smooth square system
  :math:`\Phi_i = F_i` (free or inactive bound) or :math:`z_i - l_i` (active bound),
  solved by ``casadi.rootfinder("newton")`` built once (parameters and active-set mask as
  inputs), from the previous step's solution. Timed per call, same process.

Ratios: ``mpec_nlp/casadi`` (target >= 20), ``pyomo/casadi`` and ``casadi/newton`` (target <= 20).
Steps count as solved only when the natural residual on the declaration is <= 1e-6.
Each formulation is one row of a sweep (:func:`mcpkit.sweep`, task :func:`formulation_row`): by
default on one Dask worker, so the formulations do not compete for cores and every ratio is
measured in one process; ``--workers 2`` runs two formulations at a time, ``--scheduler`` uses
an existing cluster, ``--out`` keeps the rows and resumes from them.
Run ``python benchmarks/bench_stewart_trinkle.py [--json] [--steps N] [--profile] [--workers N]
[--scheduler ADDRESS] [--out rows.parquet]``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import math
import pstats
import tempfile
import time
from pathlib import Path
from typing import Any

import casadi as ca
import numpy as np
from peers import PyomoMpecNlp

from mcpkit.lowering.casadi import lower_to_casadi
from mcpkit.models.stepping import simulate
from mcpkit.models.stewart_trinkle.studies import vose_step_model
from mcpkit.solving.availability import path_available
from mcpkit.solving.residuals import compute_residuals

METHOD = "penalty"


def _model(form: str) -> tuple[Any, np.ndarray]:
    nd = int(form[3:]) if form.startswith("lcp") else 0
    model, plate = vose_step_model(h=1e-4, formulation="ncp" if nd == 0 else "lcp", n_d=max(nd, 3))
    x = np.array([4.0, 0.0, plate.params.depth])
    return model, model.initial_state(x, plate.point_velocity(0.0, x))


def _route(form: str, steps: int, backend: str, method: str) -> dict[str, Any]:
    model, x0 = _model(form)
    t0 = time.perf_counter()
    try:
        sim = simulate(model, x0, steps, method=method, backend=backend, progress=False)
    except Exception as exc:  # report, do not hide
        return {"ran": False, "error": f"{type(exc).__name__}: {exc}"[:300]}
    wall = time.perf_counter() - t0
    times = sim.step_time_s[: int(np.sum(np.isfinite(sim.states[1:, 0])))]
    return {
        "ran": True,
        "median_step_s": float(np.median(times[1:] if times.size > 1 else times)),
        "mean_step_s": float(np.mean(times)),
        "solved_steps": int(sim.step_solved.sum()),
        "steps": steps,
        "wall_s": wall,
        "sim": sim,
        "model": model,
        "x0": x0,
    }


def _newton(model: Any, sim: Any) -> dict[str, Any]:
    """Oracle-active-set compiled Newton on each step of ``sim`` (module docstring)."""
    cas = lower_to_casadi(model.mcp)
    n = cas.n
    mask = ca.SX.sym("mask", n)
    lb = cas.lb
    lbf = np.where(np.isfinite(lb), lb, 0.0)
    phi = ca.SX(n, 1)
    rows = []
    for i in range(n):
        if np.isfinite(lb[i]):
            rows.append(mask[i] * (cas.z[i] - lbf[i]) + (1 - mask[i]) * cas.F[i])
        else:
            rows.append(cas.F[i])
    phi = ca.vertcat(*rows)
    g = ca.Function("g", [cas.z, ca.vertcat(cas.p, mask)], [phi])
    rf = ca.rootfinder("rf", "newton", g, {"abstol": 1e-12, "max_iter": 50})
    times, errs = [], []
    x = sim.states[0]
    for k in range(sim.z.shape[0]):
        p = model.mcp.parameter_vector(model.parameters(k, float(sim.t[k]), x))
        zk = sim.z[k]
        m = (np.isfinite(lb) & (zk - lbf <= 1e-9)).astype(float)
        pm = np.concatenate([p, m])
        z0 = sim.z[k - 1] if k > 0 else np.clip(model.mcp.start, lbf, None)  # mcpkit's warm start
        t0 = time.perf_counter()
        z = np.asarray(rf(z0, pm)).reshape(-1)
        times.append(time.perf_counter() - t0)
        errs.append(float(np.abs(z[model.mcp.blocks[-1].slice] - zk[model.mcp.blocks[-1].slice]).max()))
        x = sim.states[k + 1]
    e = np.array(errs)
    return {
        "median_step_s": float(np.median(times)),
        "max_v_diff": float(e.max()),
        "steps_differing": int(np.sum(e > 1e-6)),
    }


def _mpec_nlp(model: Any, sim: Any, steps: int) -> dict[str, Any]:
    """Pyomo's own ``mpec_nlp`` on the first ``steps`` step MCPs of the CasADi trajectory."""
    peer = PyomoMpecNlp(model.mcp)
    cas = lower_to_casadi(model.mcp)
    times, solved = [], 0
    for k in range(min(steps, sim.z.shape[0])):
        p = model.mcp.parameter_vector(model.parameters(k, float(sim.t[k]), sim.states[k]))
        z, sec = peer.solve(p, sim.z[k - 1] if k > 0 else None)
        times.append(sec)
        if np.isfinite(z).all():
            zc = np.clip(z, cas.lb, cas.ub)
            F = np.asarray(cas.F_fun(zc, p)).reshape(-1)
            solved += int(compute_residuals(zc, F, cas.lb, cas.ub).natural <= 1e-6)
    return {
        "median_step_s": float(np.median(times)),
        "solved": f"{solved}/{len(times)}",
        "sub": peer.subsolver,
    }


def _profile(form: str, steps: int) -> str:
    model, x0 = _model(form)
    pr = cProfile.Profile()
    pr.enable()
    simulate(model, x0, steps, method=METHOD, backend="casadi", progress=False)
    pr.disable()
    s = io.StringIO()
    st = pstats.Stats(pr, stream=s)
    st.sort_stats("cumulative").print_stats(r"mcpkit/(solve|result|residuals|problem|solvers)", 22)
    return s.getvalue()


def formulation_row(formulation: str, steps: int, slow_steps: int, have_path: bool) -> dict[str, Any]:
    """Every route on one formulation, in one process (the sweep's task: one row per formulation).

    ``solved`` is the CasADi route's verdict (every step's natural residual <= 1e-6); the other
    routes' step counts are columns beside it.
    """
    form = formulation
    cas = _route(form, steps, "casadi", METHOD)
    row: dict[str, Any] = {}  # the sweep adds the input's own column, formulation
    if not cas["ran"]:
        return row | {"solved": False, "status": "error", "casadi_error": cas["error"]}
    row.update(
        casadi_ms=1e3 * cas["median_step_s"],
        casadi_solved=f"{cas['solved_steps']}/{cas['steps']}",
        solved=bool(cas["solved_steps"] == cas["steps"]),
        status="converged" if cas["solved_steps"] == cas["steps"] else "stalled",
        wall_time_s=cas["wall_s"],
    )
    nw = _newton(cas["model"], cas["sim"])
    row.update(
        newton_ms=1e3 * nw["median_step_s"],
        newton_max_v_diff=nw["max_v_diff"],
        newton_steps_differing=nw["steps_differing"],
    )
    row["casadi_over_newton"] = cas["median_step_s"] / nw["median_step_s"]
    mn = _mpec_nlp(cas["model"], cas["sim"], slow_steps)
    row.update(mpec_nlp_ms=1e3 * mn["median_step_s"], mpec_nlp_solved=mn["solved"])
    row["mpec_nlp_over_casadi"] = mn["median_step_s"] / cas["median_step_s"]
    py = _route(form, slow_steps, "pyomo", METHOD)
    if py["ran"]:
        row.update(pyomo_ms=1e3 * py["median_step_s"], pyomo_solved=f"{py['solved_steps']}/{py['steps']}")
        row["pyomo_over_casadi"] = py["median_step_s"] / cas["median_step_s"]
    else:
        row["pyomo_error"] = py["error"]
    if have_path:
        pa = _route(form, slow_steps, "auto", "path")
        if pa["ran"]:
            row.update(path_ms=1e3 * pa["median_step_s"], path_solved=f"{pa['solved_steps']}/{pa['steps']}")
            row["path_over_casadi"] = pa["median_step_s"] / cas["median_step_s"]
        else:
            row["path_error"] = pa["error"]
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--steps", type=int, default=400, help="steps per CasADi run")
    ap.add_argument("--slow-steps", type=int, default=20, help="steps for the Pyomo and PATH routes")
    ap.add_argument("--profile", action="store_true", help="cProfile the CasADi NCP route")
    ap.add_argument(
        "--workers",
        type=int,
        default=1,
        help="Dask workers (default 1: formulations do not compete for cores)",
    )
    ap.add_argument("--scheduler", default=None, help="an existing Dask scheduler (tcp://...)")
    ap.add_argument("--out", default=None, help="keep the rows in this Parquet folder and resume from it")
    args = ap.parse_args()
    have_path = path_available()
    import cloudpickle
    import peers

    import mcpkit

    cloudpickle.register_pickle_by_value(peers)  # the workers do not have benchmarks/ on their path
    points = mcpkit.sweep.grid(
        formulation=["ncp", "lcp8", "lcp16", "lcp32"],
        steps=args.steps,
        slow_steps=args.slow_steps,
        have_path=have_path,
    )
    with tempfile.TemporaryDirectory() as tmp:
        df = mcpkit.sweep(
            formulation_row,
            points,
            workers=None if args.scheduler else args.workers,
            scheduler=args.scheduler,
            out=args.out or Path(tmp) / "rows.parquet",
            resume=args.out is not None,
            progress=not args.json,
        )
    keep = [c for c in df.columns if c not in ("key", "task", "steps", "slow_steps", "have_path")]
    rows = [
        {k: v for k, v in r.items() if v is not None and not (isinstance(v, float) and math.isnan(v))}
        for r in df[keep].to_dict("records")
    ]
    out: dict[str, Any] = {
        "problem": "Vose plate particle, h=1e-4",
        "method": METHOD,
        "path_available": have_path,
        "rows": rows,
    }
    if args.profile:
        out["profile_ncp"] = _profile("ncp", args.steps)
    if args.json:
        print(json.dumps(out))
        return
    cols = [
        "formulation",
        "casadi_ms",
        "mpec_nlp_ms",
        "pyomo_ms",
        "path_ms",
        "newton_ms",
        "mpec_nlp_over_casadi",
        "pyomo_over_casadi",
        "path_over_casadi",
        "casadi_over_newton",
    ]
    print(" | ".join(f"{c:>18}" for c in cols))
    for r in rows:
        print(
            " | ".join(
                f"{r[c]:>18.3f}" if isinstance(r.get(c), float) else f"{str(r.get(c, '-')):>18}" for c in cols
            )
        )
    for r in rows:
        for k in ("casadi_error", "pyomo_error", "path_error"):
            if k in r:
                print(f"{r['formulation']}: {k}: {r[k]}")
        print(
            f"{r['formulation']}: solved casadi {r.get('casadi_solved')}, "
            f"mpec_nlp {r.get('mpec_nlp_solved', '-')}, "
            f"pyomo {r.get('pyomo_solved', '-')}, path {r.get('path_solved', '-')}; "
            f"newton max |v - v_casadi| = {r.get('newton_max_v_diff', '-')} "
            f"({r.get('newton_steps_differing', '-')} steps > 1e-6)"
        )
    if args.profile:
        print(out["profile_ncp"])


if __name__ == "__main__":
    main()
