r"""Time per step of the ECP slider models (seed 000 §6.1) through mcpkit, side by side.

For the quadratic model (eqs 29-32) and the complementarity ECP model, the same sequence of
per-step parameters (the states of a reference §6.1 run, 45 steps, h = 0.01 s) is solved by

* mcpkit's warm CasADi re-solve: one :class:`mcpkit.Solver` (Scholtes/IPOPT, CasADi),
  ``solver.solve(p=...)`` per step, warm-started from the previous step;
* the peer, Pyomo's own MPEC route: ``SolverFactory("mpec_nlp")`` on the same MCP as a Pyomo
  model with Complementarity components (``benchmarks/peers.py``), warm-started per step;
* mcpkit's Pyomo route: the same as the first with ``backend="pyomo"``;
* the "physical limit": a compiled Newton solve of the same step, ``casadi.rootfinder``
  (``newton``) on the smooth equations valid while sliding (for the complementarity model all
  pairs are taken as equations, :math:`p_n > 0, \sigma > 0`), called once per step from the
  previous step's solution.

Each route repeats the sequence ``--repeat`` times; the median per-step time is reported with
ratios (targets: mcpkit >= 20x faster than Pyomo's mpec_nlp; within 20x of compiled Newton).
mcpkit's routes are checked against the reference to 1e-8; the peer's steps count as solved
only with a natural residual <= 1e-6.

Usage::

    python benchmarks/bench_ecp_step.py [--repeat 3] [--json] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import time
from typing import Any

import casadi as ca
import numpy as np
from peers import PyomoMpecNlp

import mcpkit
from mcpkit.lowering.casadi import lower_to_casadi
from mcpkit.models.ecp.params import paper_slider
from mcpkit.models.ecp.simulation import make_model, run_ecp
from mcpkit.solving.residuals import compute_residuals

X0 = np.array([0.0, 0.0, 0.0, 0.7, 0.9, 10.0])
TOL = 1e-10


def _sequence(kind: str) -> tuple[Any, list[dict[str, np.ndarray]], np.ndarray, np.ndarray]:
    """Model, per-step parameter dicts, reference solutions and the first step's start."""
    P = paper_slider()
    model = make_model(kind, P)
    ref = run_ecp(model, X0, 0.45, tol=TOL)
    if not ref.sim.solved:
        raise RuntimeError(f"reference {kind} run failed: {ref.sim.message}")
    params = [model.parameters(k, float(ref.t[k]), ref.states[k]) for k in range(ref.sim.step_solved.size)]
    model.set_start(X0)
    return model, params, ref.sim.z, model.mcp.start


def _time_mcpkit(model: Any, params: list, zref: np.ndarray, backend: str, repeat: int) -> dict[str, Any]:
    t_build = time.perf_counter()
    solver = mcpkit.Solver(model.mcp, backend=backend, method="scholtes", tol=TOL)
    t_build = time.perf_counter() - t_build
    per: list[float] = []
    err = 0.0
    iters = 0
    extra: dict[str, Any] = {}
    for _ in range(repeat):
        for k, p in enumerate(params):
            t0 = time.perf_counter()
            res = solver.solve(p=p, warm_start=k > 0)  # each pass starts cold, like a new run
            per.append(time.perf_counter() - t0)
            if not res.solved:
                raise RuntimeError(f"{backend}: step {k} not solved: {res.message}")
            err = max(err, float(np.abs(res.z - zref[k]).max()))
            iters += res.iterations
            extra = res.extra
    return {
        "median_step_s": float(np.median(per)),
        "mean_step_s": float(np.mean(per)),
        "build_s": t_build,
        "max_abs_diff_vs_reference": err,
        "ipopt_iterations_per_step": iters / len(per),
        "route_extra": {k: str(v) for k, v in extra.items()},
    }


def _time_newton(model: Any, params: list, zref: np.ndarray, z0: np.ndarray, repeat: int) -> dict[str, Any]:
    cas = lower_to_casadi(model.mcp)
    rf = ca.rootfinder("rf", "newton", cas.F_fun, {"abstol": 1e-14, "max_iter": 50, "error_on_fail": False})
    pvecs = [model.mcp.parameter_vector(p) for p in params]
    per: list[float] = []
    err = 0.0
    for _ in range(repeat):
        z = ca.DM(z0)
        for k, pv in enumerate(pvecs):
            t0 = time.perf_counter()
            z = rf(z, pv)
            per.append(time.perf_counter() - t0)
            err = max(err, float(np.abs(np.asarray(z).reshape(-1) - zref[k]).max()))
    return {"median_step_s": float(np.median(per)), "mean_step_s": float(np.mean(per)),
            "max_abs_diff_vs_reference": err}  # fmt: skip


def _time_mpec_nlp(model: Any, params: list, zref: np.ndarray, repeat: int) -> dict[str, Any]:
    """Pyomo's own ``mpec_nlp`` route on the same steps (see ``benchmarks/peers.py``)."""
    peer = PyomoMpecNlp(model.mcp)
    cas = lower_to_casadi(model.mcp)
    pvecs = [model.mcp.parameter_vector(p) for p in params]
    per: list[float] = []
    solved = 0
    err = 0.0
    for _ in range(repeat):
        for k, pv in enumerate(pvecs):
            z, sec = peer.solve(pv, zref[k - 1] if k > 0 else None)
            per.append(sec)
            if np.isfinite(z).all():
                zc = np.clip(z, cas.lb, cas.ub)
                F = np.asarray(cas.F_fun(zc, pv)).reshape(-1)
                solved += int(compute_residuals(zc, F, cas.lb, cas.ub).natural <= 1e-6)
                err = max(err, float(np.abs(z - zref[k]).max()))
            else:
                err = float("inf")
    return {
        "median_step_s": float(np.median(per)),
        "mean_step_s": float(np.mean(per)),
        "max_abs_diff_vs_reference": err,
        "solved_at_1e-6": f"{solved}/{len(per)}",
        "subsolver": peer.subsolver,
    }


def _profile(model: Any, params: list) -> str:
    solver = mcpkit.Solver(model.mcp, backend="casadi", method="scholtes", tol=TOL)
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(5):
        for k, p in enumerate(params):
            solver.solve(p=p, warm_start=k > 0)
    pr.disable()
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(18)
    return s.getvalue()


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="passes over the 45-step sequence")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--profile", action="store_true", help="cProfile the mcpkit CasADi route")
    ap.add_argument("--no-pyomo", action="store_true", help="skip the Pyomo route")
    args = ap.parse_args(argv)
    out: dict[str, Any] = {"steps_per_pass": 45, "repeat": args.repeat, "tol": TOL, "models": {}}
    profiles: dict[str, str] = {}
    for kind in ("quadratic", "complementarity"):
        model, params, zref, z0 = _sequence(kind)
        row: dict[str, Any] = {"n": model.mcp.n}
        row["mcpkit_casadi"] = _time_mcpkit(model, params, zref, "casadi", args.repeat)
        if not args.no_pyomo:
            row["pyomo_mpec_nlp"] = _time_mpec_nlp(model, params, zref, args.repeat)
            row["speedup_vs_mpec_nlp"] = (
                row["pyomo_mpec_nlp"]["median_step_s"] / row["mcpkit_casadi"]["median_step_s"]
            )
            try:
                row["pyomo"] = _time_mcpkit(model, params, zref, "pyomo", args.repeat)
            except Exception as exc:  # report, do not hide: the route may be unfinished
                row["pyomo"] = {"error": f"{type(exc).__name__}: {exc}"}
        row["compiled_newton"] = _time_newton(model, params, zref, z0, args.repeat)
        m = row["mcpkit_casadi"]["median_step_s"]
        if "median_step_s" in row.get("pyomo", {}):
            row["speedup_vs_pyomo"] = row["pyomo"]["median_step_s"] / m
        row["slowdown_vs_newton"] = m / row["compiled_newton"]["median_step_s"]
        out["models"][kind] = row
        if args.profile:
            profiles[kind] = _profile(model, params)
    if args.json:
        if profiles:
            out["profiles"] = profiles
        print(json.dumps(out))
    else:
        print(
            f"ECP step benchmark, seed 000 §6.1, {out['steps_per_pass']} steps x {args.repeat}, tol {TOL:g}"
        )
        print(f"{'model':16s} {'route':16s} {'median ms/step':>15s} {'max |dz|':>10s}")
        for kind, row in out["models"].items():
            for route in ("mcpkit_casadi", "pyomo_mpec_nlp", "pyomo", "compiled_newton"):
                r = row.get(route)
                if r is None:
                    continue
                if "error" in r:
                    print(f"{kind:16s} {route:16s} {'n/a':>15s}  {r['error'][:60]}")
                    continue
                print(
                    f"{kind:16s} {route:16s} {1e3 * r['median_step_s']:15.3f} "
                    f"{r['max_abs_diff_vs_reference']:10.1e}"
                )
            if "speedup_vs_mpec_nlp" in row:
                print(
                    f"{kind:16s} mcpkit vs Pyomo mpec_nlp: {row['speedup_vs_mpec_nlp']:.1f}x faster "
                    f"(target >= 20x); mpec_nlp solved {row['pyomo_mpec_nlp']['solved_at_1e-6']} at 1e-6"
                )
            sp = row.get("speedup_vs_pyomo")
            print(
                f"{kind:16s} mcpkit CasADi vs mcpkit Pyomo route: {sp:.1f}x faster"
                if sp
                else f"{kind:16s} Pyomo: n/a"
            )
            print(
                f"{kind:16s} mcpkit vs compiled Newton: {row['slowdown_vs_newton']:.1f}x slower "
                "(target <= 20x)"
            )
        for kind, txt in profiles.items():
            print(f"\n--- cProfile, mcpkit CasADi route, {kind} (5 x 45 steps) ---\n{txt}")
    return out


if __name__ == "__main__":
    main()
