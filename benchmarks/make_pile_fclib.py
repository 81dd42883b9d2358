r"""FCLIB dev data made by mcpkit's own scenes (issue 28): pile steps with 250-1,000 contacts.

Steps piles of spheres (:func:`mcpkit.models.pile.make_pile`, seeded) and writes chosen steps as
FCLIB local problems (:func:`mcpkit.formats.fclib_hdf5.write_fclib_local`) into ``DIR``, for
``benchmarks/bench_fclib.py --dir DIR``. The default set (:data:`RUNS`): falling piles of 300
and 500 spheres and piles of 100 and 200 spheres stepped while they settle, seeds as listed.

**Deterministic.** The trajectory is stepped by
:func:`mcpkit.models.pile.step.solve_local` with its iteration-bounded stages only (warm and
cold Alart-Curnier Newton, Tikhonov continuation, polish; no proximal, NSGS or staged stage,
no time limit), so the same seed gives the same steps on a machine whatever its load (the BLAS
on one thread: run with ``OPENBLAS_NUM_THREADS=1``). A step that chain leaves unsolved is kept
as stepped (its best point moves the bodies).

**Which steps.** Among the steps with 250 to 1,000 contacts: the *hard* steps (the warm Newton
run missed them: ``solve_local`` needed more than one run, or nothing solved them), at most
``--hard-per-run``, the hardest first (unsolved, then most runs, then largest error), then
``--easy-per-run`` evenly spaced other steps, and for the resting runs the last step. A file
stores the solution ``solution/{r,u}`` when the step was solved at ``tol = 1e-8``; its
``fclib_local/info/description`` says how it was made and whether it is hard.
``--with-committed`` also copies ``tests/data/pile/hard-*.hdf5`` (step 37 of the 200-sphere
pile stepped with ``--engine staged``, 603 contacts: the trajectory of the staged engine
depends on its time limits, so it is copied, not remade).

Run::

    OPENBLAS_NUM_THREADS=1 python benchmarks/make_pile_fclib.py [DIR] [--runs fall:200:1:40,...] \
        [--with-committed]

The default set was checked for determinism on the 100-sphere pile: two runs gave the same
steps (step 52: 313 contacts, left at 5.6e-4 by the chain, in both).
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mcpkit.formats.fclib_hdf5 import write_fclib_local
from mcpkit.models.pile import PileParams, make_pile
from mcpkit.models.pile.step import LocalProblem, carry_reactions, solve_local

HERE = Path(__file__).resolve().parent
CONTACT_RANGE = (250, 1000)
DEFAULT_DIR = Path("/tmp/pile-fclib")


@dataclass(frozen=True)
class PileRunSpec:
    """One pile to step: ``kind`` ``fall`` (steps while it falls) or ``rest`` (stepped until it rests;
    its last step is always kept)."""

    kind: str
    bodies: int
    seed: int
    steps: int

    @classmethod
    def parse(cls, text: str) -> PileRunSpec:
        """``kind:bodies:seed:steps``."""
        kind, n, seed, steps = text.split(":")
        if kind not in ("fall", "rest"):
            raise SystemExit(f"run kind must be 'fall' or 'rest', got {kind!r}")
        return cls(kind, int(n), int(seed), int(steps))


#: The default set (falling piles are easy for the warm Newton run; the hard steps come while
#: a pile settles; 300 spheres pass 1,000 contacts after step 31): 15 files of 250-1,000
#: contacts, about 20 minutes on a loaded 2-core machine.
RUNS = (
    PileRunSpec("fall", 500, 2, 9),
    PileRunSpec("rest", 100, 0, 110),
    PileRunSpec("rest", 200, 1, 80),
    PileRunSpec("fall", 300, 0, 32),
)


def _spread(items: list[Any], k: int) -> list[Any]:
    """At most ``k`` evenly spaced items, first and last included."""
    if k <= 0 or not items:
        return []
    idx = np.unique(np.linspace(0, len(items) - 1, min(k, len(items))).round().astype(int))
    return [items[i] for i in idx]


def step_pile(spec: PileRunSpec, out: Path, hard_per_run: int, easy_per_run: int) -> list[dict[str, Any]]:
    """Step one pile (module docstring) and write its chosen steps; returns one row per file."""
    pile = make_pile(spec.bodies, seed=spec.seed, params=PileParams())
    p = pile.params
    steps: list[tuple[int, LocalProblem, np.ndarray, np.ndarray, bool, bool, float, int]] = []
    prev = r_prev = None
    t0 = time.perf_counter()
    for k in range(spec.steps):
        lp = pile.local_problem()
        r0, _ = carry_reactions(prev, r_prev, lp.contacts)
        ts = time.perf_counter()
        res, runs = solve_local(
            lp.W, lp.q, lp.mu, r0, p.tol, p.max_iter, None, fallback_limit=0.0, prox_limit=0.0, nsgs_limit=0.0
        )
        hard = runs > 1 or not res.solved
        print(
            f"  {spec.kind} N={spec.bodies} seed {spec.seed} step {k:3d}: {lp.nc:4d} contacts, "
            f"Siconos {res.siconos_error:.1e}, {runs} run(s){' HARD' if hard else ''}, "
            f"{time.perf_counter() - ts:6.1f} s",
            flush=True,
        )
        if CONTACT_RANGE[0] <= lp.nc <= CONTACT_RANGE[1]:
            steps.append((k, lp, res.r.copy(), res.u.copy(), bool(res.solved), hard, float(res.siconos_error),
                          runs))  # fmt: skip
        pile.advance(lp, res.r)
        prev, r_prev = lp.contacts, res.r
    # the hardest first: unsolved by the chain, then the most runs, then the largest error
    hard_steps = sorted((s for s in steps if s[5]), key=lambda s: (s[4], -s[7], -s[6]))[:hard_per_run]
    easy_steps = _spread([s for s in steps if not s[5]], easy_per_run)
    chosen = {s[0]: s for s in hard_steps + easy_steps}
    if spec.kind == "rest" and steps and steps[-1][0] == spec.steps - 1:
        chosen[steps[-1][0]] = steps[-1]
    rows = []
    for k in sorted(chosen):
        _, lp, r, u, solved, hard, err, runs = chosen[k]
        name = f"{spec.kind}-N{spec.bodies}-seed{spec.seed}-step{k}-{lp.nc}c{'-hard' if hard else ''}"
        path = out / f"{name}.hdf5"
        how = (
            f"mcpkit benchmarks/make_pile_fclib.py: {spec.kind} pile of {spec.bodies} spheres, seed "
            f"{spec.seed}, step {k}, h = {p.h}, mu = {p.mu}; "
            + (f"hard (the warm Newton run missed it; {runs} Newton runs); " if hard else "")
            + (f"solution by solve_local, Siconos error {err:.1e}" if solved else f"unsolved by the "
               f"iteration-bounded chain (Siconos error {err:.1e}), no solution stored")
        )  # fmt: skip
        write_fclib_local(path, lp.W, lp.q, lp.mu, r=r if solved else None, u=u if solved else None,
                          title=name, description=how)  # fmt: skip
        rows.append({"file": path.name, "contacts": lp.nc, "hard": hard, "runs": runs,
                     "solved_when_stepped": solved, "siconos_error_when_stepped": err})  # fmt: skip
        print(f"  wrote {path}", flush=True)
    print(f"  {spec.kind} N={spec.bodies} seed {spec.seed}: {time.perf_counter() - t0:.0f} s", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("dir", nargs="?", type=Path, default=DEFAULT_DIR, help=f"output ({DEFAULT_DIR})")
    ap.add_argument("--runs", default="", help="comma-separated kind:bodies:seed:steps (default: RUNS)")
    ap.add_argument("--hard-per-run", type=int, default=4, help="hard steps kept per pile")
    ap.add_argument("--easy-per-run", type=int, default=1, help="other steps kept per pile")
    ap.add_argument("--with-committed", action="store_true", help="copy tests/data/pile/hard-*.hdf5 too")
    args = ap.parse_args(argv)
    specs = [PileRunSpec.parse(t) for t in args.runs.split(",") if t.strip()] or list(RUNS)
    args.dir.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    if args.with_committed:
        for src in sorted((HERE.parent / "tests" / "data" / "pile").glob("hard-*.hdf5")):
            shutil.copy(src, args.dir / src.name)
            rows.append({"file": src.name, "copied_from": str(src.relative_to(HERE.parent))})
        _manifest(args.dir, rows)
    for spec in specs:
        new = step_pile(spec, args.dir, args.hard_per_run, args.easy_per_run)
        _manifest(args.dir, new)  # after each pile: a long run stopped early keeps what it wrote
        rows += new
    print(f"{len(rows)} files written to {args.dir}")
    return 0


def _manifest(out: Path, rows: list[dict[str, Any]]) -> None:
    """Merge ``rows`` into ``out/MANIFEST.json`` (several runs may write into one directory)."""
    manifest = out / "MANIFEST.json"
    old = json.loads(manifest.read_text()) if manifest.is_file() else []
    names = {r["file"] for r in rows}
    manifest.write_text(json.dumps([r for r in old if r["file"] not in names] + rows, indent=1))


if __name__ == "__main__":
    raise SystemExit(main())
