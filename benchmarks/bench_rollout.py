r"""Whole trajectories in one compiled call (:func:`mcpkit.models.rollout`, issue 46), side by side.

Cases (gravity passed explicitly, SI):

* ``slider``: the seed 000 §6.1 slider, complementarity ECP model (45 steps, h = 0.01 s,
  :math:`x_0 = (0, 0, 0, 0.7, 0.9, 10)`), the case the JSON line reports;
* ``slider_quadratic``: the same with the quadratic ECP model (eqs 29-32);
* ``particle``: a Stewart–Trinkle NCP particle (m = 1 kg, :math:`\mu = 0.3`, h = 0.01 s,
  :math:`g = 9.81`) on a plane, sliding from :math:`v = (1, 0.5, 0)` m/s and sticking from
  about step 38 (60 steps).

Routes, all in one process:

* ``loop``: the present Python loop, :func:`mcpkit.models.stepping.simulate` (one
  :class:`mcpkit.Solver` per run, warm parametric re-solves, tol 1e-10; the slider through
  :func:`~mcpkit.models.ecp.run_ecp`), per step = the run's wall time / K;
* ``rootfinder``: the floor of ``benchmarks/bench_ecp_step.py``: ``casadi.rootfinder("newton")``
  on the smooth equations of each step (the slider: every pair as an equation, valid while it
  slides; the particle: the active set of the reference step, as in
  ``benchmarks/bench_stewart_trinkle.py``), called once per step from Python with the
  reference parameters, warm-started from the reference solution of the previous step (the
  first step from its own solution: the particle's start, all zeros, is a singular point of the
  smooth equations, where Newton does not move);
  ``rootfinder_mapaccum``: the same rootfinder inside a ``mapaccum`` rollout with the step map
  (no Python per step: the stricter floor);
* ``rollout``: :func:`mcpkit.models.rollout`, the whole call (input checks, first guess, the
  compiled rollout, the per-step residuals and verdicts; the particle also its Coulomb check
  in NumPy, :attr:`~mcpkit.models.compiled_rollout.RolloutOptions.model_check`); per step = call / K;
* batches: ``rollout(model, batch=X0, steps=K)`` for B rollouts from perturbed initial
  velocities (``"thread"`` map, 2 threads), steps/s = B K / wall, against the loop's steps/s
  over ``--loop-rollouts`` of the same starts.

Times are the best of ``--repeat`` (the machine is shared: the minimum is the least disturbed).
The trajectory is compared with the loop's (max abs state difference) and every step's natural
residual is reported. Targets: per step <= 1.5x rootfinder with every residual <= 1e-8 and the
trajectory equal to the loop's to 1e-8; batched >= 10x the loop's throughput.

Usage::

    python benchmarks/bench_rollout.py [--repeat 5] [--batches 1,100,10000] [--json]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

import casadi as ca
import numpy as np

from mcpkit.lowering.casadi import lower_to_casadi
from mcpkit.models import CompiledRollout, rollout
from mcpkit.models.ecp import make_model, run_ecp
from mcpkit.models.ecp.params import SliderParams
from mcpkit.models.stepping import simulate
from mcpkit.models.stepping_gradient import StepJacobians
from mcpkit.models.stewart_trinkle import Contact, NCPStep, Particle, PlaneSurface

TOL = 1e-10
X0_SLIDER = np.array([0.0, 0.0, 0.0, 0.7, 0.9, 10.0])


def _case(name: str) -> tuple[Any, np.ndarray, int, Callable[[Any, np.ndarray, int], Any]]:
    """Model, initial state, steps and the per-step route (returns a SimulationResult)."""
    if name.startswith("slider"):
        model = make_model(
            "quadratic" if name.endswith("quadratic") else "complementarity", SliderParams(g=9.8)
        )

        def loop(m: Any, x0: np.ndarray, K: int) -> Any:
            return run_ecp(m, x0, K * m.h, tol=TOL).sim

        return model, X0_SLIDER.copy(), 45, loop
    st = NCPStep(
        Particle(mass=1.0, gravity=np.array([0.0, 0.0, -9.81])), [Contact(PlaneSurface(), 0.3)], 1e-2
    )

    def loop_st(m: Any, x0: np.ndarray, K: int) -> Any:
        return simulate(m, x0, K, tol=TOL)

    return st, st.initial_state([0.0, 0.0, 0.0], [1.0, 0.5, 0.0]), 60, loop_st


def _best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _smooth_rootfinder(model: Any, sim: Any) -> tuple[ca.Function, np.ndarray]:
    """``rootfinder`` on the smooth equations (inputs ``z0``, ``[p; mask]``) and per-step masks:
    :math:`z_i - l_i` for a bound active at the reference solution, else :math:`F_i`."""
    cas = lower_to_casadi(model.mcp)
    lb = cas.lb
    lbf = np.where(np.isfinite(lb), lb, 0.0)
    mask = ca.SX.sym("mask", cas.n)
    rows = [
        mask[i] * (cas.z[i] - lbf[i]) + (1 - mask[i]) * cas.F[i] if np.isfinite(lb[i]) else cas.F[i]
        for i in range(cas.n)
    ]
    g = ca.Function("g", [cas.z, ca.vertcat(cas.p, mask)], [ca.vertcat(*rows)])
    rf = ca.rootfinder("rf", "newton", g, {"abstol": 1e-14, "max_iter": 50, "error_on_fail": False})
    masks = (np.isfinite(lb) & (sim.z - lbf <= 1e-9)).astype(float)
    return rf, masks


def _per_step(model: Any, x0: np.ndarray, sim: Any, repeat: int) -> dict[str, Any]:
    """Per-step times of the rootfinder (per call from Python, and inside a ``mapaccum``) and of
    :func:`rollout`, measured in interleaved rounds (the best of each over ``repeat`` rounds)."""
    K = sim.z.shape[0]
    rf, masks = _smooth_rootfinder(model, sim)
    pm = [
        np.concatenate(
            [model.mcp.parameter_vector(model.parameters(k, float(sim.t[k]), sim.states[k])), masks[k]]
        )
        for k in range(K)
    ]
    cr = CompiledRollout(model)
    z_first = sim.z[0]  # the floor's first step starts at its solution (in its favour)
    z_prev = [sim.z[0], *sim.z[:-1]]

    def per_call() -> np.ndarray:  # each step from the previous reference solution
        return np.hstack([np.asarray(rf(z_prev[k], pm[k])) for k in range(K)]).T

    x, zp, c = ca.MX.sym("x", cr.nx), ca.MX.sym("z", cr.n), ca.MX.sym("c", cr.nc)
    t, msk = ca.MX.sym("t"), ca.MX.sym("mask", cr.n)
    u, th = ca.MX.sym("u", cr.nu), ca.MX.sym("theta", cr.nth)
    p = cr.P_fun(x, u, th, t, c)[0]
    z = rf(zp, ca.vertcat(p, msk))
    maps = StepJacobians(model, cr.constant_names)
    step = ca.Function("rf_step", [x, zp, u, t, msk, th, c], [maps.Phi(x, z, u, th, t, c)[0], z])
    roll = step.mapaccum("rf_rollout", K, [0, 1], [0, 1])
    args = (x0, z_first, np.zeros((cr.nu, K)), (sim.t[:K]).reshape(1, -1), masks.T, np.zeros(cr.nth),
            cr.constant_vector(None))  # fmt: skip
    t_build = time.perf_counter()
    rollout(model, x0, steps=K, tol=TOL)  # builds and caches the compiled functions
    t_build = time.perf_counter() - t_build
    routes = {
        "rf": per_call,
        "rf_mapaccum": lambda: roll(*args),
        "rollout": lambda: rollout(model, x0, steps=K, tol=TOL),
    }
    best = dict.fromkeys(routes, np.inf)
    last: dict[str, Any] = {}
    compiled = np.inf
    for _ in range(repeat):  # interleaved: a burst of load hits every route alike
        for name, fn in routes.items():
            t0 = time.perf_counter()
            last[name] = fn()
            best[name] = min(best[name], time.perf_counter() - t0)
        compiled = min(compiled, last["rollout"].compiled_time_s)
    res = last["rollout"]
    Xr = np.asarray(last["rf_mapaccum"][0]).T
    return {
        "build_s": t_build,
        "rootfinder_per_step_s": best["rf"] / K,
        "rootfinder_max_abs_z_diff_vs_loop": float(np.abs(last["rf"] - sim.z).max()),
        "rootfinder_mapaccum_per_step_s": best["rf_mapaccum"] / K,
        "rootfinder_mapaccum_max_abs_state_diff_vs_loop": float(np.abs(Xr - sim.states[1:]).max()),
        "rollout_per_step_s": best["rollout"] / K,
        "rollout_compiled_per_step_s": compiled / K,
        "max_step_residual": res.max_residual,
        "steps_resolved": int(res.resolved.sum()),
        "solved": res.solved,
        "max_abs_state_diff_vs_loop": float(np.abs(res.states[0] - sim.states).max()),
    }


def _starts(x0: np.ndarray, B: int, nq: int) -> np.ndarray:
    """B initial states: ``x0`` with its velocities scaled by factors in [0.9, 1.1]."""
    rng = np.random.default_rng(46)
    X = np.tile(x0, (B, 1))
    X[:, nq:] *= rng.uniform(0.9, 1.1, size=(B, x0.size - nq))
    X[0] = x0
    return X


def run_case(name: str, repeat: int, batches: list[int], loop_rollouts: int) -> dict[str, Any]:
    model, x0, K, loop = _case(name)
    nq = 3
    t_loop, sim = _best(lambda: loop(model, x0, K), max(2, repeat // 2))
    assert sim.solved, sim.message
    row: dict[str, Any] = {"steps": K, "n": model.mcp.n, "loop_per_step_s": t_loop / K}
    row.update(_per_step(model, x0, sim, repeat))
    row["per_step_ratio_vs_rootfinder"] = row["rollout_per_step_s"] / row["rootfinder_per_step_s"]
    row["per_step_ratio_vs_rootfinder_mapaccum"] = (
        row["rollout_per_step_s"] / row["rootfinder_mapaccum_per_step_s"]
    )
    row["loop_vs_rollout_per_step"] = row["loop_per_step_s"] / row["rollout_per_step_s"]
    X_loop = _starts(x0, loop_rollouts, nq)
    t0 = time.perf_counter()
    for xb in X_loop:
        assert loop(model, xb, K).solved
    loop_rate = loop_rollouts * K / (time.perf_counter() - t0)
    row["loop_steps_per_s"] = loop_rate
    row["batches"] = {}
    for B in batches:
        X = _starts(x0, B, nq)
        rollout(model, batch=X[: min(B, 2)], steps=K, tol=TOL)  # build the batch map once
        t_b, rb = _best(lambda X=X: rollout(model, batch=X, steps=K, tol=TOL), 1 if B > 1000 else 3)
        row["batches"][str(B)] = {
            "wall_s": t_b,
            "steps_per_s": B * K / t_b,
            "speedup_vs_loop": B * K / t_b / loop_rate,
            "solved": rb.solved,
            "max_step_residual": rb.max_residual,
            "steps_resolved": int(rb.resolved.sum()),
        }
    big = row["batches"][str(max(batches))]
    row["batch_speedup_vs_loop"] = big["speedup_vs_loop"]
    return row


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=20, help="timed rounds (the best is kept)")
    ap.add_argument("--batches", default="1,100,10000", help="batch sizes B, comma-separated")
    ap.add_argument(
        "--particle-batches",
        default="1,100,1000",
        help="batch sizes for the particle (Coulomb check in NumPy)",
    )
    ap.add_argument("--loop-rollouts", type=int, default=5, help="rollouts timed through the Python loop")
    ap.add_argument("--cases", default="slider,slider_quadratic,particle")
    ap.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = ap.parse_args(argv)
    out: dict[str, Any] = {"tol": TOL, "repeat": args.repeat, "threads": 2, "cases": {}}
    for name in args.cases.split(","):
        b = args.particle_batches if name == "particle" else args.batches
        out["cases"][name] = run_case(name, args.repeat, [int(v) for v in b.split(",")], args.loop_rollouts)
    s = out["cases"].get("slider")
    if s is not None:
        out.update(
            per_step_ratio_vs_rootfinder=s["per_step_ratio_vs_rootfinder"],
            per_step_ratio_vs_rootfinder_mapaccum=s["per_step_ratio_vs_rootfinder_mapaccum"],
            max_step_residual=s["max_step_residual"],
            max_abs_state_diff_vs_loop=s["max_abs_state_diff_vs_loop"],
            batch_speedup_vs_loop=s["batch_speedup_vs_loop"],
        )
    for name, r in out["cases"].items():
        us = {k: 1e6 * r[k] for k in r if k.endswith("per_step_s")}
        print(
            f"{name:17s} K={r['steps']:3d} per step: rollout {us['rollout_per_step_s']:.1f} us (compiled "
            f"part {us['rollout_compiled_per_step_s']:.1f}), rootfinder {us['rootfinder_per_step_s']:.1f} us "
            f"(in mapaccum {us['rootfinder_mapaccum_per_step_s']:.1f}), loop {us['loop_per_step_s']:.1f} us"
        )
        print(
            f"{'':17s} ratio vs rootfinder {r['per_step_ratio_vs_rootfinder']:.2f} (target <= 1.5; vs "
            f"mapaccum {r['per_step_ratio_vs_rootfinder_mapaccum']:.2f}), max residual "
            f"{r['max_step_residual']:.1e}, max |x - x_loop| {r['max_abs_state_diff_vs_loop']:.1e}, "
            f"re-solved {r['steps_resolved']}"
        )
        for B, rb in r["batches"].items():
            print(
                f"{'':17s} B={B:>6s}: {rb['steps_per_s']:10.0f} steps/s, {rb['speedup_vs_loop']:6.1f}x the "
                f"loop ({r['loop_steps_per_s']:.0f} steps/s), solved {rb['solved']}, "
                f"re-solved {rb['steps_resolved']}"
            )
    if args.json:
        print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
