r"""Where a Scholtes homotopy breaks: which rows IPOPT leaves violated at a failed subproblem.

For :math:`\sigma = \sigma_0, \kappa\sigma_0, \dots` the Scholtes NLP of one MPCC file

.. math::

    \min_x f \quad\text{s.t.}\quad g_l \le g \le g_u,\ x_l \le x \le x_u,\
    G \ge 0,\ H \ge 0,\ G_j H_j / \sigma \le 1

is solved with the IPOPT settings of :mod:`mcpkit.homotopy.loop` (cold first subproblem, then
warm starts with :data:`~mcpkit.homotopy.ipopt.WARM_START_OPTIONS` and the previous multipliers),
without a time limit. After each subproblem it prints IPOPT's status and iterations and, at the
point IPOPT returned, the largest violation (and the count above 1e-6) of each block: the bounds
on :math:`x`, the equality and inequality rows of :math:`g`, :math:`G \ge 0`, :math:`H \ge 0` and
the relaxed pair rows, and the complementarity residual :math:`\max_j |\min(G_j, H_j)|`. With
``--bisect N`` a failed subproblem is retried up to ``N`` times from the last solved point at
:math:`\sigma \leftarrow \sqrt{\sigma_{ok}\,\sigma_{fail}}` (the homotopy goes on from the first
retry that solves); ``--rows`` names the violated rows of :math:`g` (index, value, variables) at
each infeasible point.

A locally infeasible relaxation (IPOPT ``Infeasible_Problem_Detected``) is IPOPT's local
verdict, a stationary point of its constraint violation: the relaxation contains the MPCC's
feasible set. The blocks show what it could not satisfy.

Run: ``python benchmarks/diagnose_relaxation.py FILE [--steps 8] [--bisect 3] [--rows]
[--ipopt '{"mu_strategy": "adaptive"}'] [--cold-ipopt ...] [--warm-ipopt ...]``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import casadi as ca  # noqa: E402
import numpy as np  # noqa: E402

from mcpkit.homotopy.ipopt import ipopt_option_dict  # noqa: E402
from mcpkit.homotopy.reformulation import NLPTemplate  # noqa: E402
from mcpkit.homotopy.scholtes import Scholtes  # noqa: E402
from mcpkit.mpcc import load_mpcc_json  # noqa: E402
from mcpkit.problems.mpcc import MPCC  # noqa: E402

SOLVED = ("Solve_Succeeded", "Solved_To_Acceptable_Level")


def blocks(mp: MPCC) -> list[tuple[str, int, int]]:
    """``(name, first, end)`` of the row blocks of the Scholtes NLP (see ``sign_constraints``)."""
    ng, nc = mp.g.numel(), mp.n_pairs
    out, o = [("g", 0, ng)], ng
    for name, implied in (("G>=0", mp.G_implied_by_bounds), ("H>=0", mp.H_implied_by_bounds)):
        if not implied:
            out.append((name, o, o + nc))
            o += nc
    out.append(("GH/s<=1", o, o + nc))
    return out


def excess(v: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Elementwise violation :math:`\\max(lo - v, v - hi, 0)`."""
    return np.maximum(np.maximum(lo - v, v - hi), 0.0)


class Diagnosis:
    """The Scholtes NLP of ``mp`` with its solvers and the per-block violation report."""

    def __init__(self, mp: MPCC, ipopt: dict[str, Any], cold: dict[str, Any], warm: dict[str, Any]) -> None:
        self.mp = mp
        self.tpl: NLPTemplate = Scholtes().build(mp)
        self.blocks = blocks(mp)
        self.g = ca.Function("g", [self.tpl.x, self.tpl.p], [self.tpl.g])
        self.G, self.H = mp.function("G"), mp.function("H")
        tol = 0.1 * 1e-6  # inner_tol_factor * tol, as mcpkit.solve(..., tol=1e-6)
        self.cold = self._solver(ipopt_option_dict(tol, 3000, False, False, {**ipopt, **cold}))
        self.warm = self._solver(ipopt_option_dict(tol, 3000, True, False, {**ipopt, **warm}))

    def _solver(self, opts: dict[str, Any]) -> ca.Function:
        t = self.tpl
        ipopt = {f"ipopt.{k}": v for k, v in opts.items()}
        nlp = {"x": t.x, "p": t.p, "f": t.f, "g": t.g}
        return ca.nlpsol("scholtes", "ipopt", nlp, {"print_time": False, "error_on_fail": False, **ipopt})

    def solve(
        self, x: np.ndarray, sigma: float, lam: tuple[np.ndarray, np.ndarray] | None
    ) -> tuple[str, int, float, np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """``(status, iterations, seconds, x, (lam_x, lam_g))`` of the subproblem at ``sigma``."""
        mp, t = self.mp, self.tpl
        solver = self.cold if lam is None else self.warm
        args: dict[str, Any] = {"x0": x, "p": np.concatenate([mp.p0, [sigma]]), "lbx": mp.lbx, "ubx": mp.ubx}
        args.update(lbg=t.lbg, ubg=t.ubg)
        if lam is not None:
            args.update(lam_x0=lam[0], lam_g0=lam[1])
        t0 = time.perf_counter()
        sol = solver(**args)
        seconds = time.perf_counter() - t0
        stats = solver.stats()
        xs = np.asarray(sol["x"], dtype=float).ravel()
        lams = (np.asarray(sol["lam_x"], dtype=float).ravel(), np.asarray(sol["lam_g"], dtype=float).ravel())
        return str(stats["return_status"]), int(stats["iter_count"]), seconds, xs, lams

    def report(self, x: np.ndarray, sigma: float, rows: bool) -> str:
        """Largest violation and count above 1e-6 per block at ``x``; the violated rows of ``g``."""
        mp, t = self.mp, self.tpl
        v = excess(np.asarray(self.g(x, np.concatenate([mp.p0, [sigma]]))).ravel(), t.lbg, t.ubg)
        eq = mp.lbg == mp.ubg
        gv = v[: mp.g.numel()]
        parts = [f"bounds {excess(x, mp.lbx, mp.ubx).max(initial=0.0):.2e}"]
        parts.append(f"g-eq {gv[eq].max(initial=0.0):.2e} ({int((gv[eq] > 1e-6).sum())})")
        parts.append(f"g-ineq {gv[~eq].max(initial=0.0):.2e} ({int((gv[~eq] > 1e-6).sum())})")
        for name, a, b in self.blocks[1:]:
            parts.append(f"{name} {v[a:b].max(initial=0.0):.2e} ({int((v[a:b] > 1e-6).sum())})")
        G = np.asarray(self.G(x, mp.p0)).ravel()
        H = np.asarray(self.H(x, mp.p0)).ravel()
        parts.append(f"comp {np.abs(np.minimum(G, H)).max(initial=0.0):.2e}")
        text = "    " + " | ".join(parts)
        if rows:
            for i in np.flatnonzero(gv > 1e-6):
                deps = [j for j in range(mp.x.numel()) if ca.depends_on(mp.g[int(i)], mp.x[j])]
                text += f"\n      g[{i}] violated by {gv[i]:.2e}; depends on x{deps[:12]}"
        return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--steps", type=int, default=8, help="subproblems of the homotopy")
    ap.add_argument("--sigma0", type=float, default=1.0)
    ap.add_argument("--factor", type=float, default=0.1)
    ap.add_argument("--bisect", type=int, default=0, help="retries at sqrt(sigma_ok * sigma_fail)")
    ap.add_argument("--rows", action="store_true", help="name the violated rows of g")
    ap.add_argument("--ipopt", type=json.loads, default={}, help="IPOPT options of every subproblem")
    ap.add_argument("--cold-ipopt", type=json.loads, default={}, help="... of the first one only")
    ap.add_argument("--warm-ipopt", type=json.loads, default={}, help="... of the warm ones only")
    args = ap.parse_args()
    mp = load_mpcc_json(args.file)
    d = Diagnosis(mp, args.ipopt, args.cold_ipopt, args.warm_ipopt)
    print(f"{mp.name}: {mp.x.numel()} variables, {mp.g.numel()} rows of g, {mp.n_pairs} pairs")
    x = np.clip(mp.x0, mp.lbx, mp.ubx)
    lam: tuple[np.ndarray, np.ndarray] | None = None
    sigma, last_ok = args.sigma0, None
    for k in range(args.steps):
        status, it, sec, xs, lams = d.solve(x, sigma, lam)
        print(f"k={k} sigma={sigma:.2e} {status} iterations={it} {sec:.1f} s")
        print(d.report(xs, sigma, args.rows and status not in SOLVED))
        if status not in SOLVED:
            if last_ok is None:
                break
            fail = sigma
            for _ in range(args.bisect):
                s = float(np.sqrt(last_ok * fail))
                status, it, sec, xs, lams = d.solve(x, s, lam)
                print(f"  retry sigma={s:.2e} {status} iterations={it} {sec:.1f} s")
                print(d.report(xs, s, args.rows and status not in SOLVED))
                if status in SOLVED:
                    sigma = s
                    break
                fail = s
            if status not in SOLVED:
                break
        x, lam, last_ok = xs, lams, sigma
        sigma *= args.factor


if __name__ == "__main__":
    main()
