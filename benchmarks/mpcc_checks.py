"""Two independent checks of MPCC objective values, for the benchmark's comparisons.

``pieces FILE``: the lowest objective over *all* pieces of a small MPCC file. A box-MCP pair
(:mod:`mcpkit.problems.mpcc`) has up to three pieces,

* :math:`H_j = H_{l,j}`, :math:`G_j \\ge 0`;
* :math:`G_j = 0`, :math:`H_{l,j} \\le H_j \\le H_{u,j}`;
* :math:`H_j = H_{u,j}`, :math:`G_j \\le 0` (only when :math:`H_{u,j}` is finite),

and every combination is solved as an NLP by IPOPT from the file's ``w0``. For an LPEC each
piece is an LP, so the lowest piece value is the global minimum; for other problems it is the
best of local solutions. Refuses more than ``--max-pieces`` (default 4096) pieces.

``relaxation FILE``: what the reading "``H_j >= 0``, ``G_j`` free, ``|G_j H_j| <= t``" of a pair
with a free :math:`G_j` allows (mpecss 1.0.3's MacMPEC loader reads one-sided pairs so, see
docs/mpcc_stationarity.md). Every pair is read so, and G's own bounds are left out: the check
is meant for files whose pairs all have a free G and an H with no upper bound, as the
``pack-rig`` files. The NLPs are not convex, so where the path ends depends on its start (and
on IPOPT's path: adding G's free rows, which change nothing, ends ``pack-rig-16`` at 1.0840
instead of 0.9190). From mcpkit's solution, the NLPs of that reading are solved for
``t = 1e-6, ..., 1e-14``, each warm-started from the last; printed per ``t``: the objective, the
largest ``min(|G_j|, |H_j|)`` and the most negative :math:`G_j` where :math:`H_j` is at its
lower bound (which the box-MCP meaning forbids).

Run: ``python benchmarks/mpcc_checks.py pieces ../shared/data/macmpec-dev/bilevel1m.nl.json``,
``python benchmarks/mpcc_checks.py relaxation ../shared/data/macmpec-dev/pack-rig-16.nl.json``.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import casadi as ca
import numpy as np

from mcpkit.mpcc import MPCC, load_mpcc_json, solve_mpcc

IPOPT = {"print_time": 0, "ipopt.print_level": 0, "ipopt.sb": "yes", "ipopt.tol": 1e-10}


def piece_choices(prob: MPCC) -> list[tuple[int, ...]]:
    """Per pair, the pieces it has: 0 (H at its lower bound), 1 (G = 0), 2 (H at its upper bound)."""
    out = []
    for lo, hi in zip(prob.lbH, prob.ubH, strict=True):
        out.append(tuple(k for k, ok in ((0, np.isfinite(lo)), (1, True), (2, np.isfinite(hi))) if ok))
    return out


def piece_rows(prob: MPCC, piece: tuple[int, ...]) -> tuple[ca.SX, np.ndarray, np.ndarray]:
    """``(rows, lower, upper)`` of the NLP of one piece: ``g`` and ``G``'s own bounds, then per pair."""
    rows, lo, hi = [prob.g, prob.G], [prob.lbg, prob.lbG], [prob.ubg, prob.ubG]
    for j, k in enumerate(piece):
        Gj, Hj, hl, hu = prob.G[j], prob.H[j], prob.lbH[j], prob.ubH[j]
        if k == 0:
            rows += [Hj, Gj]
            lo += [[hl], [0.0]]
            hi += [[hl], [np.inf]]
        elif k == 1:
            rows += [Gj, Hj]
            lo += [[0.0], [hl]]
            hi += [[0.0], [hu]]
        else:
            rows += [Hj, Gj]
            lo += [[hu], [-np.inf]]
            hi += [[hu], [0.0]]
    return (
        ca.vertcat(*rows),
        np.concatenate([np.ravel(a) for a in lo]),
        np.concatenate([np.ravel(a) for a in hi]),
    )


def best_piece(prob: MPCC, max_pieces: int = 4096) -> tuple[float, tuple[int, ...] | None, int]:
    """``(lowest objective, its piece, pieces solved)`` over every piece IPOPT solves."""
    choices = piece_choices(prob)
    count = int(np.prod([len(c) for c in choices], dtype=float))
    if count > max_pieces:
        raise ValueError(f"{prob.name}: {count} pieces > max_pieces={max_pieces}")
    best, arg = np.inf, None
    for piece in itertools.product(*choices):
        g, lbg, ubg = piece_rows(prob, piece)
        solver = ca.nlpsol("piece", "ipopt", {"x": prob.x, "p": prob.p, "f": prob.f, "g": g}, IPOPT)
        r = solver(x0=prob.x0, p=prob.p0, lbx=prob.lbx, ubx=prob.ubx, lbg=lbg, ubg=ubg)
        f = float(r["f"])
        if solver.stats()["success"] and f < best:
            best, arg = f, piece
    return best, arg, count


def relaxation_path(prob: MPCC, x: np.ndarray) -> list[tuple[float, float, float, float]]:
    """``(t, f, max min(|G|,|H|), min G at H = H_l)`` along the free-G reading, from ``x``."""
    t = ca.SX.sym("t")
    g = ca.vertcat(prob.g, prob.H, prob.G * prob.H)
    nlp = {"x": prob.x, "p": ca.vertcat(prob.p, t), "f": prob.f, "g": g}
    solver = ca.nlpsol("relaxed", "ipopt", nlp, {**IPOPT, "ipopt.tol": 1e-12, "ipopt.max_iter": 3000})
    values = ca.Function("GH", [prob.x, prob.p], [prob.G, prob.H])
    out = []
    nc = prob.n_pairs
    for tk in 10.0 ** -np.arange(6, 15):
        lbg = np.concatenate([prob.lbg, prob.lbH, -tk * np.ones(nc)])
        ubg = np.concatenate([prob.ubg, prob.ubH, tk * np.ones(nc)])
        r = solver(x0=x, p=np.append(prob.p0, tk), lbx=prob.lbx, ubx=prob.ubx, lbg=lbg, ubg=ubg)
        x = np.asarray(r["x"]).ravel()
        G, H = (np.asarray(v).ravel() for v in values(x, prob.p0))
        at_lower = np.abs(H - prob.lbH) <= 1e-8
        out.append(
            (
                float(tk),
                float(r["f"]),
                float(np.max(np.minimum(np.abs(G), np.abs(H)), initial=0.0)),
                float(G[at_lower].min(initial=np.inf)),
            )
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("check", choices=["pieces", "relaxation"])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--max-pieces", type=int, default=4096)
    args = ap.parse_args(argv)
    for path in args.files:
        prob = load_mpcc_json(path)
        if args.check == "pieces":
            f, piece, count = best_piece(prob, args.max_pieces)
            print(f"{prob.name}: lowest objective over {count} pieces {f:.10g} (piece {piece})")
        else:
            res = solve_mpcc(prob, "auto", "casadi", tol=1e-6, time_limit=60.0)
            print(f"{prob.name}: mcpkit f = {res.f:.10g} ({res.termination.value}, {res.stationarity})")
            for tk, f, gap, g_min in relaxation_path(prob, np.asarray(res.x, dtype=float)):
                where = f"max min(|G|,|H|) = {gap:.1e}, min G at H = H_l: {g_min:.2e}"
                print(f"  t = {tk:.0e}: f = {f:.10g}, {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
