"""Per-solve time of mcpkit's warm parametric re-solve against Pyomo's ``mpec_nlp`` route.

The problem is a small nonlinear complementarity problem (n = 10),

    0 <= z ⟂ F(z; q) = M z + q + 0.1 z^3 >= 0,

with a positive-definite M (unique solution) and the vector ``q`` as a parameter that drifts
smoothly from solve to solve, as the state does in time stepping. In one process run, for the
same sequence of ``q`` values:

* **mcpkit**: ``mcpkit.Solver`` built once (CasADi, Scholtes homotopy + active-set polish),
  ``solver.solve(p=...)`` per value, warm-started from the previous solution;
* **Pyomo mpec_nlp**: the same MCP as a Pyomo model with ``pyomo.mpec`` Complementarity
  components (mutable Params for ``q``), built once and solved by ``SolverFactory("mpec_nlp")``
  per value (its default: one NLP with the complementarity products relaxed to ``<= 1e-7``).
  Its NLP subsolver is an ``ipopt`` executable when one is found, else CasADi's bundled IPOPT
  through Pyomo's NL writer (``mcpkit_ipopt``: in-process, no subprocess);
* **PATH** through GAMSPy or pathampl, when present.

Every answer is checked on the declaration: the natural residual must be at most 1e-6 for the
solve to count. Prints a table; ``--json`` prints one JSON object.

Run: ``python benchmarks/bench_parametric.py [--solves 40] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np
from peers import PyomoMpecNlp

import mcpkit
from mcpkit.solving.availability import path_available
from mcpkit.solving.residuals import compute_residuals

N = 10


def build(seed: int = 0) -> tuple[mcpkit.MCP, np.ndarray]:
    """The benchmark NCP and its nominal ``q``."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((N, N))
    M = A @ A.T / N + 0.5 * np.eye(N)
    q0 = rng.standard_normal(N)
    mcp = mcpkit.MCP("bench_ncp")
    z = mcp.add_variables("z", N, lb=0.0)
    q = mcp.add_parameters("q", N, value=q0)
    mcp.add_functions("z", [sum(M[i, j] * z[j] for j in range(N)) + q[i] + 0.1 * z[i] ** 3 for i in range(N)])
    return mcp, q0


def q_sequence(q0: np.ndarray, count: int) -> list[np.ndarray]:
    """A smooth drift of ``q`` (the active set changes now and then)."""
    return [q0 + 0.3 * np.sin(0.15 * k + np.arange(N)) for k in range(count)]


def residual(mcp: mcpkit.MCP, z: np.ndarray, q: np.ndarray) -> float:
    F = mcp.evaluate(z, p={"q": q})
    return compute_residuals(z, F, mcp.lb, mcp.ub).natural


def run_mcpkit(mcp: mcpkit.MCP, qs: list[np.ndarray]) -> dict[str, Any]:
    t0 = time.perf_counter()
    solver = mcpkit.Solver(mcp, backend="casadi", method="scholtes", tol=1e-9)
    build_s = time.perf_counter() - t0
    times, res = [], []
    for q in qs:
        t = time.perf_counter()
        r = solver.solve(p={"q": q})
        times.append(time.perf_counter() - t)
        res.append(residual(mcp, r.z, q))
    return {"build_s": build_s, "times": times, "residuals": res}


def run_pyomo_mpec_nlp(mcp: mcpkit.MCP, qs: list[np.ndarray]) -> dict[str, Any]:
    peer = PyomoMpecNlp(mcp)
    times, res = [], []
    for q in qs:
        z, sec = peer.solve(mcp.parameter_vector({"q": q}))
        times.append(sec)
        res.append(residual(mcp, np.clip(z, 0, None), q))
    return {"subsolver": peer.subsolver, "build_s": peer.build_s, "times": times, "residuals": res}


def run_path(mcp: mcpkit.MCP, qs: list[np.ndarray]) -> dict[str, Any] | None:
    if not path_available():
        return None
    solver = mcpkit.Solver(mcp, method="path", tol=1e-9)
    times, res = [], []
    for q in qs:
        t = time.perf_counter()
        r = solver.solve(p={"q": q})
        times.append(time.perf_counter() - t)
        res.append(residual(mcp, r.z, q))
    return {"backend": solver.route.backend, "times": times, "residuals": res}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--solves", type=int, default=40)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    mcp, q0 = build()
    qs = q_sequence(q0, args.solves)
    ours = run_mcpkit(mcp, qs)
    peer = run_pyomo_mpec_nlp(mcp, qs)
    path = run_path(mcp, qs)

    def stats(r: dict[str, Any]) -> dict[str, Any]:
        t = np.array(r["times"])
        ok = np.array(r["residuals"]) <= 1e-6
        return {
            "median_ms": float(np.median(t) * 1e3),
            "mean_ms": float(t.mean() * 1e3),
            "solved": int(ok.sum()),
            "of": int(t.size),
            "max_residual": float(np.max(r["residuals"])),
        }

    out: dict[str, Any] = {
        "problem": f"NCP n={N}, {args.solves} parametric solves",
        "mcpkit_warm": stats(ours) | {"build_s": ours["build_s"]},
        "pyomo_mpec_nlp": stats(peer) | {"subsolver": peer["subsolver"], "build_s": peer["build_s"]},
    }
    out["ratio_pyomo_over_mcpkit_median"] = (
        out["pyomo_mpec_nlp"]["median_ms"] / out["mcpkit_warm"]["median_ms"]
    )
    if path is not None:
        out["path"] = stats(path) | {"backend": path["backend"]}
        out["ratio_path_over_mcpkit_median"] = out["path"]["median_ms"] / out["mcpkit_warm"]["median_ms"]
    if args.json:
        print(json.dumps(out))
        return
    print(out["problem"])
    print(f"{'route':<22}{'median ms':>11}{'mean ms':>10}{'solved':>10}{'max residual':>15}")
    for key in ("mcpkit_warm", "pyomo_mpec_nlp", "path"):
        if key in out:
            s = out[key]
            print(
                f"{key:<22}{s['median_ms']:>11.3f}{s['mean_ms']:>10.3f}{s['solved']:>6}/{s['of']:<3}{s['max_residual']:>15.1e}"
            )
    print(f"mcpkit build (once): {ours['build_s']:.3f} s; Pyomo subsolver: {peer['subsolver']}")
    print(f"per-solve speed-up over Pyomo mpec_nlp (median): {out['ratio_pyomo_over_mcpkit_median']:.1f}x")
    if path is not None:
        print(f"PATH ({path['backend']}) median / mcpkit median: {out['ratio_path_over_mcpkit_median']:.1f}x")


if __name__ == "__main__":
    main()
