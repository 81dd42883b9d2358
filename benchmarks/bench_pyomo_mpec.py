r"""Pyomo MPEC models: ``SolverFactory("mpec_nlp")`` against ``SolverFactory("mcpkit")``, same process.

Three sets, each model solved by both on separate fresh instances (``mpec_nlp`` transforms the
model it solves):

* ``examples``: the models of Pyomo's ``examples/mpec`` (bard1, df, indexed, linear1, scholtes4,
  munson1 and sign variants), as re-stated in ``tests/pyomo_mpec_models.py``;
* ``steps``: the seed-000 complementarity ECP step (45 steps, ``benchmarks/bench_ecp_step.py``)
  and the seed-004 Stewart–Trinkle NCP step (particle on the Vose plate, h = 1e-4), each written
  as a plain Pyomo model (``ConcreteModel`` with ``Var``, mutable ``Param`` and
  ``Complementarity(complements(...))``, built by :class:`mcpkit.lowering.pyomo.ToPyomo`, plus
  ``Objective(expr=0)`` because ``mpec_nlp`` needs one) and re-solved per step after setting the
  step's parameters, warm from the previous step's values;
* ``macmpec``: the MacMPEC models of ``Pyomo/pyomo-model-libraries`` (folder ``macmpec/``),
  loaded from a local checkout given by ``--macmpec DIR`` (or ``$MACMPEC_DIR``); skipped with a
  message when absent. Those whose Python constructs (with their ``.dat`` file for abstract
  models: the exact name, else the data in the file itself, else the smallest file sharing the
  longest name prefix) and yield at least one constraint or complementarity are run; the rest
  are listed with the reason.

A point counts as **solved** only by the independent check of ``tests/pyomo_mpec_models.py``
(:func:`pyomo_violation`: Pyomo's own evaluation of every constraint, bound and complementarity
condition at the loaded values) with every violation :math:`\le 10^{-6}`; for the steps, the
natural residual of the step MCP :math:`\le 10^{-6}` as in ``bench_ecp_step.py``. Objectives
are Pyomo's ``value(objective)`` after the solve. ``mpec_nlp``'s NLP subsolver is an ``ipopt``
executable when one is found, else CasADi's IPOPT in process (``mcpkit_ipopt``).

Usage::

    python benchmarks/bench_pyomo_mpec.py [--sets examples,steps,macmpec] [--macmpec DIR]
        [--ncp-steps 40] [--time-limit 60] [--json]
"""

from __future__ import annotations

import argparse
import glob
import json
import logging
import math
import os
import runpy
import sys
import time
from typing import Any

import numpy as np
import pyomo.environ as pyo

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))

import mcpkit  # noqa: E402  (registers SolverFactory("mcpkit"))
from mcpkit.lowering.casadi import lower_to_casadi  # noqa: E402
from mcpkit.lowering.pyomo import ToPyomo  # noqa: E402
from mcpkit.solving.availability import ipopt_executable  # noqa: E402
from mcpkit.solving.residuals import compute_residuals  # noqa: E402

TOL = 1e-6
SUBSOLVER = "ipopt" if ipopt_executable() else "mcpkit_ipopt"


def _quiet() -> None:
    # mpec_nlp re-applies its transformation and Pyomo logs the replaced components; noise here
    logging.getLogger("pyomo").setLevel(logging.CRITICAL)


def _objective(m: Any) -> float | None:
    objs = list(m.component_data_objects(pyo.Objective, active=True))
    if not objs:
        return None
    try:
        return float(pyo.value(objs[0]))
    except (ValueError, TypeError, ZeroDivisionError):
        return math.nan


def _run(solver: str, build: Any, time_limit: float, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """One model by one solver: time, Pyomo termination, objective, independent violation."""
    from pyomo_mpec_models import pyomo_violation

    m = build()
    opt = pyo.SolverFactory(solver)
    if solver == "mpec_nlp":
        opt.options.solver = SUBSOLVER
    t0 = time.perf_counter()
    try:
        if solver == "mpec_nlp":
            res = opt.solve(m, timelimit=time_limit)
        else:
            res = opt.solve(m, options={"time_limit": time_limit, **(options or {})})
        tc = str(res.solver.termination_condition)
    except Exception as exc:  # report, do not hide
        return {"error": f"{type(exc).__name__}: {exc}"[:200], "time_s": time.perf_counter() - t0}
    wall = time.perf_counter() - t0
    try:
        viol = pyomo_violation(m)
        worst = max(viol.values())
    except (ValueError, TypeError, ZeroDivisionError):
        worst = math.inf
    worst = worst if math.isfinite(worst) else math.inf
    return {
        "time_s": wall,
        "termination": tc,
        "objective": _objective(m),
        "violation": worst,
        "solved": bool(worst <= TOL),
    }


# ----------------------------------------------------------------------------- examples
def bench_examples(time_limit: float) -> dict[str, Any]:
    from pyomo_mpec_models import EXAMPLES

    out = {}
    for name, (build, optimum) in EXAMPLES.items():
        out[name] = {
            "optimum": optimum,
            "mpec_nlp": _run("mpec_nlp", build, time_limit),
            "mcpkit": _run("mcpkit", build, time_limit),
        }
    return out


# ----------------------------------------------------------------------------- steps
def _ecp_sequence() -> tuple[Any, list[np.ndarray]]:
    from bench_ecp_step import _sequence

    model, params, _zref, _z0 = _sequence("complementarity")
    return model.mcp, [model.mcp.parameter_vector(p) for p in params]


def _ncp_sequence(steps: int) -> tuple[Any, list[np.ndarray]]:
    from mcpkit.models.stepping import simulate
    from mcpkit.models.stewart_trinkle.studies import vose_step_model

    model, plate = vose_step_model(h=1e-4, formulation="ncp", n_d=3)
    x = np.array([4.0, 0.0, plate.params.depth])
    x0 = model.initial_state(x, plate.point_velocity(0.0, x))
    sim = simulate(model, x0, steps, method="penalty", backend="casadi", progress=False)
    n = int(np.sum(np.isfinite(sim.states[1:, 0])))
    ps = [model.mcp.parameter_vector(model.parameters(k, float(sim.t[k]), sim.states[k])) for k in range(n)]
    return model.mcp, ps


def _steps(mcp: Any, params: list[np.ndarray], solver: str, options: dict[str, Any]) -> dict[str, Any]:
    """Per-step re-solves of one plain Pyomo model (module docstring)."""
    m, info = ToPyomo().apply(mcp)
    m.obj = pyo.Objective(expr=0.0)
    cas = lower_to_casadi(mcp)
    opt = pyo.SolverFactory(solver)
    if solver == "mpec_nlp":
        opt.options.solver = SUBSOLVER
    per, solved, optimal = [], 0, 0
    for pv in params:
        info.set_parameters(m, pv)
        t0 = time.perf_counter()
        try:
            res = opt.solve(m) if solver == "mpec_nlp" else opt.solve(m, options=options)
        except Exception as exc:  # report, do not hide
            return {"error": f"{type(exc).__name__}: {exc}"[:200]}
        per.append(time.perf_counter() - t0)
        optimal += str(res.solver.termination_condition) == "optimal"
        z = np.array([np.nan if v.value is None else v.value for v in info.variables(m)], dtype=float)
        if np.isfinite(z).all():
            zc = np.clip(z, cas.lb, cas.ub)
            F = np.asarray(cas.F_fun(zc, pv), dtype=float).reshape(-1)
            solved += int(compute_residuals(zc, F, cas.lb, cas.ub).natural <= TOL)
    first = per[0]
    rest = per[1:] if len(per) > 1 else per
    return {
        "steps": len(per),
        "solved": solved,
        "termination_optimal": optimal,
        "first_step_s": first,
        "median_step_s": float(np.median(rest)),
        "total_s": float(np.sum(per)),
    }


def bench_steps(ncp_steps: int, methods: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for label, (mcp, params) in (
        ("ecp_complementarity_seed000", _ecp_sequence()),
        ("stewart_trinkle_ncp_seed004", _ncp_sequence(ncp_steps)),
    ):
        row: dict[str, Any] = {"n": mcp.n, "mpec_nlp": _steps(mcp, params, "mpec_nlp", {})}
        for meth in methods:
            row[f"mcpkit[{meth}]"] = _steps(mcp, params, "mcpkit", {"method": meth})
        out[label] = row
    return out


# ----------------------------------------------------------------------------- macmpec
def _dat_for(path: str) -> str | None:
    """The data file of an abstract MacMPEC model (module docstring)."""
    d, stem = os.path.dirname(path), os.path.basename(path)[:-3]
    special = {"TrafficSignalCycle": "TSC-1"}
    if stem in special:
        return os.path.join(d, special[stem] + ".dat")
    exact = os.path.join(d, stem + ".dat")
    if os.path.exists(exact):
        return exact
    for k in range(len(stem), 2, -1):
        found = glob.glob(os.path.join(d, glob.escape(stem[:k]) + "*.dat"))
        if found:
            return min(found, key=os.path.getsize)
    return None


def _macmpec_builder(path: str) -> Any:
    """A function building a fresh instance of the model in ``path`` (raises if it does not load)."""

    def build() -> Any:
        cwd = os.getcwd()
        os.chdir(os.path.dirname(path))
        try:
            g = runpy.run_path(path, run_name="__macmpec__")
            m = g.get("model")
            if m is None:
                raise RuntimeError("defines no `model`")
            if not m.is_constructed():
                dat = _dat_for(path)
                exact = dat is not None and os.path.basename(dat)[:-4] == os.path.basename(path)[:-3]
                if exact:
                    return m.create_instance(dat)
                try:  # data given in the file itself
                    return m.create_instance()
                except Exception:
                    if dat is None:
                        raise
                    return m.create_instance(dat)
            return m
        finally:
            os.chdir(cwd)

    m = build()  # loads at all, and with content? (an instance whose data did not load is empty)
    from pyomo.mpec import Complementarity

    rows = sum(1 for _ in m.component_data_objects((pyo.Constraint, Complementarity), active=True))
    if rows == 0:
        raise RuntimeError("the instance has no constraint and no complementarity (its data did not load)")
    return build


def bench_macmpec(folder: str | None, time_limit: float, only: list[str] | None) -> dict[str, Any]:
    if not folder or not os.path.isdir(folder):
        return {
            "skipped": "no MacMPEC folder: pass --macmpec DIR (the macmpec/ folder of a checkout of "
            "github.com/Pyomo/pyomo-model-libraries) or set MACMPEC_DIR"
        }
    files = sorted(glob.glob(os.path.join(folder, "*.py")))
    if only:
        files = [f for f in files if os.path.basename(f)[:-3] in only]
    problems: dict[str, Any] = {}
    not_loaded: dict[str, str] = {}
    for f in files:
        name = os.path.basename(f)[:-3]
        try:
            build = _macmpec_builder(f)
        except Exception as exc:  # the model file itself does not run: not counted
            not_loaded[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
            continue
        problems[name] = {
            "mpec_nlp": _run("mpec_nlp", build, time_limit),
            "mcpkit": _run("mcpkit", build, time_limit),
        }
        r = problems[name]
        if "integer" in r["mcpkit"].get("error", ""):  # refused by default; the opt-in, reported apart
            r["mcpkit_relax_integrality"] = _run("mcpkit", build, time_limit, {"relax_integrality": True})
        print(
            f"  {name:22s} mpec_nlp {_fmt_run(r['mpec_nlp']):38s} mcpkit {_fmt_run(r['mcpkit'])}",
            file=sys.stderr,
            flush=True,
        )
    solved = {s: {n for n, r in problems.items() if r[s].get("solved")} for s in ("mpec_nlp", "mcpkit")}
    relaxed = {n for n, r in problems.items() if r.get("mcpkit_relax_integrality", {}).get("solved")}
    return {
        "loaded": len(problems),
        "not_loaded": not_loaded,
        "solved_mpec_nlp": len(solved["mpec_nlp"]),
        "solved_mcpkit": len(solved["mcpkit"]),
        "solved_by_mpec_nlp_only": sorted(solved["mpec_nlp"] - solved["mcpkit"]),
        "solved_by_mcpkit_only": sorted(solved["mcpkit"] - solved["mpec_nlp"]),
        "solved_by_mcpkit_with_relax_integrality": sorted(relaxed),
        "problems": problems,
    }


def _fmt_run(r: dict[str, Any]) -> str:
    if "error" in r:
        return "error " + r["error"][:40]
    f = r["objective"]
    fs = "-" if f is None else f"{f:.6g}"
    return f"{'ok ' if r['solved'] else 'NO '} f={fs:>12s} v={r['violation']:.0e} {r['time_s']:.2f}s"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default="examples,steps,macmpec")
    ap.add_argument("--macmpec", default=os.environ.get("MACMPEC_DIR"), help="macmpec/ folder")
    ap.add_argument("--only", default="", help="comma-separated MacMPEC names")
    ap.add_argument("--ncp-steps", type=int, default=40)
    ap.add_argument("--methods", default="auto,scholtes", help="mcpkit methods for the steps")
    ap.add_argument("--time-limit", type=float, default=60.0, help="per solve, both solvers")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    _quiet()
    sets = args.sets.split(",")
    out: dict[str, Any] = {"tol": TOL, "subsolver_of_mpec_nlp": SUBSOLVER, "mcpkit": mcpkit.__version__}
    if "examples" in sets:
        out["examples"] = bench_examples(args.time_limit)
    if "steps" in sets:
        out["steps"] = bench_steps(args.ncp_steps, args.methods.split(","))
    if "macmpec" in sets:
        out["macmpec"] = bench_macmpec(args.macmpec, args.time_limit, [s for s in args.only.split(",") if s])
    if args.json:
        print(json.dumps(out, default=str))
        return out
    if "examples" in out:
        print(f"examples (solved: independent violation <= {TOL:g}); mpec_nlp subsolver {SUBSOLVER}")
        for name, r in out["examples"].items():
            print(f"  {name:10s} optimum {r['optimum']!s:>5s}  mpec_nlp {_fmt_run(r['mpec_nlp'])}")
            print(
                f"  {'':10s} {'':13s}  mcpkit   {_fmt_run(r['mcpkit'])}  [{r['mcpkit'].get('termination')}]"
            )
    if "steps" in out:
        print("steps (solved: natural residual of the step MCP <= 1e-6)")
        for label, row in out["steps"].items():
            for solver, r in row.items():
                if solver == "n":
                    continue
                if "error" in r:
                    print(f"  {label:30s} {solver:18s} error {r['error'][:80]}")
                    continue
                print(
                    f"  {label:30s} {solver:18s} solved {r['solved']:3d}/{r['steps']:<3d} "
                    f"median {1e3 * r['median_step_s']:8.2f} ms/step  first {1e3 * r['first_step_s']:8.1f} ms"
                )
    if "macmpec" in out:
        mm = out["macmpec"]
        if "skipped" in mm:
            print("macmpec: skipped:", mm["skipped"])
        else:
            print(
                f"macmpec: {mm['loaded']} loaded ({len(mm['not_loaded'])} do not construct); solved: "
                f"mpec_nlp {mm['solved_mpec_nlp']}, mcpkit {mm['solved_mcpkit']}; only mpec_nlp: "
                f"{mm['solved_by_mpec_nlp_only']}; only mcpkit: {mm['solved_by_mcpkit_only']}"
            )
    return out


if __name__ == "__main__":
    main()
