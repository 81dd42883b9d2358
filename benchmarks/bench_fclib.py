r"""FCLIB problems against one dense LU of their Delassus matrix: Siconos error and time per formulation.

For every problem of ``../shared/data/fclib-siconos`` (and the 48-contact
``fclib/local_problem_test.hdf5``), measured in one run on the same machine:

* ``lu_ms``: one :func:`scipy.linalg.lu_factor` of the dense :math:`W` (:math:`3n_c \times 3n_c`),
  the minimum of repeated factorisations (the issue's physical-limit proxy);
* per formulation (:class:`~mcpkit.models.fclib.FCLIBFormulation`, all with ``method="newton"``
  and ``tol = 1e-8``): :func:`~mcpkit.models.fclib.solve_fclib`'s ``wall_time_s`` on the
  problem loaded once (posing and solving, not reading the file; the minimum of ``--repeat`` runs
  when a run takes under a second, as ``lu_ms`` is the minimum of repeated factorisations of one
  loaded :math:`W`), its ratio to ``lu_ms``, the Siconos error (recomputed here from the returned reactions
  with :func:`~mcpkit.models.fclib.friction_residual`), the verdict, the Newton iterations and the
  stages used;
* ``direct``: the library's default path, ``alart_curnier`` with its ``direct`` stage
  (:func:`~mcpkit.models.fclib.solve_equations`: the dense Alart–Curnier Newton method
  :func:`~mcpkit.engines.newton_contact.solve_alart_curnier` without the MCP layer on up to
  :data:`~mcpkit.models.fclib.DIRECT_MAX_CONTACTS` contacts, handing over to the engine's stages
  when it stops early); the ``alart_curnier`` column runs the engine's stages alone
  (``direct=False``), as before the direct stage existed;
* optionally (``--peer-fb``) the old default, the IPOPT Fischer-Burmeister homotopy on the NCP
  form at ``tol = 1e-6``.

Target of issue 10: Siconos error :math:`\le 10^{-8}` on every problem, in at most 100 one-LU
times. Dense LAPACK on this shared 2-core machine is erratic with several BLAS threads. The
solvers limit the BLAS to one thread themselves on problems of 64 to 500 unknowns
(:mod:`mcpkit.engines.blas`); run with ``OPENBLAS_NUM_THREADS=1`` for stable ratios all the same (it also
steadies the one-LU reference; the value is recorded in the JSON).

``--dir DIR`` measures the ``*.hdf5`` files of ``DIR`` instead (for instance the pile steps written
by ``benchmarks/make_pile_fclib.py``); ``--stages`` appends each solve's stages to its line.

Run::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_fclib.py [--out fclib.json] \
        [--formulations direct,alart_curnier,fb_soc,ncp] [--ncp-time-limit 60] [--peer-fb] [--only Rover] \
        [--dir /tmp/pile-fclib] [--stages]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.linalg

from mcpkit.models.fclib import FCLIBFormulation, friction_residual, load_fclib, solve_fclib

HERE = Path(__file__).resolve().parent
#: ``../shared/data`` beside the checkout (as in ``tests/conftest.py``), or ``$MCPKIT_SHARED/data``.
DATA = Path(os.environ.get("MCPKIT_SHARED", HERE.parent.parent / "shared")) / "data"
TOL = 1e-8
TARGET_LU = 100.0
DIRECT = "direct"
"""The column of the default path: ``alart_curnier`` with its ``direct`` stage (module docstring)."""


def lu_time(W: np.ndarray, budget: float = 0.3, at_least: int = 5) -> float:
    """Seconds of one ``lu_factor`` of ``W``: the minimum over repeats within ``budget`` seconds."""
    times: list[float] = []
    end = time.perf_counter() + budget
    while len(times) < at_least or (time.perf_counter() < end and len(times) < 500):
        A = np.array(W, order="F")
        t0 = time.perf_counter()
        scipy.linalg.lu_factor(A, overwrite_a=True, check_finite=False)
        times.append(time.perf_counter() - t0)
    return min(times)


def run(path: Path, formulation: str, repeat: int, **options: Any) -> dict[str, Any]:
    """Solve ``path``; the fastest of up to ``repeat`` runs (repeats only when a run is under 1 s).

    ``formulation`` :data:`DIRECT` is the library's default path (``alart_curnier`` with its
    ``direct`` stage); ``alart_curnier`` runs with ``direct=False`` (the engine's stages alone).
    """
    direct = formulation == DIRECT
    form = FCLIBFormulation.ALART_CURNIER.value if direct else formulation
    prob = load_fclib(path)
    best: Any = None
    for k in range(repeat):
        # the loaded problem re-solved, as lu_time re-factorises one loaded W: a solve timed right
        # after an HDF5 read runs on cold caches (on the 4-contact Rovers 0.42 ms against 0.33 ms)
        res = solve_fclib(prob, formulation=form, direct=direct, **options)
        if best is None or res.wall_time_s < best.wall_time_s:
            best = res
        if k == 0 and res.wall_time_s > 1.0:
            break
    r = best.reactions
    err = None if r is None else float(friction_residual(prob.W, prob.q, prob.mu, r))
    return {
        "solved": bool(best.solved) and err is not None and err <= float(options.get("tol", TOL)),
        "siconos_error": err,
        "time_s": float(best.wall_time_s),
        "iterations": int(best.newton_iterations),
        "stages": [f"{st.name}:{st.iterations}" for st in best.stages],
        "natural_residual": float(best.solve.natural_residual),
        "termination": best.termination.value,
        "message": best.message,
    }


def cell(out: dict[str, Any]) -> str:
    """One formulation's columns of the table."""
    err = "none" if out["siconos_error"] is None else f"{out['siconos_error']:.1e}"
    ok = "yes" if out["solved"] else "NO"
    return f" | {ok:>13s} {out['time_s']:7.3f} {out['ratio_to_lu']:7.0f} {err:>8s} {out['iterations']:4d}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--out", type=Path, help="write all measurements as JSON")
    ap.add_argument(
        "--formulations",
        default=f"{DIRECT},alart_curnier,fb_soc,ncp",
        help=f"comma-separated FCLIBFormulation values and {DIRECT!r} (the default path); default: all four",
    )
    ap.add_argument("--ncp-time-limit", type=float, default=60.0, help="time limit of each NCP solve (s)")
    ap.add_argument("--time-limit", type=float, default=120.0, help="time limit of the other solves (s)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per fast solve (the minimum is kept)")
    ap.add_argument("--peer-fb", action="store_true", help="also the IPOPT FB homotopy on the NCP (1e-6)")
    ap.add_argument("--only", default="", help="only files whose name contains this")
    ap.add_argument("--dir", type=Path, help="measure the *.hdf5 files of this directory instead")
    ap.add_argument("--stages", action="store_true", help="append each solve's stages to its line")
    args = ap.parse_args(argv)
    forms = [
        f.strip() if f.strip() == DIRECT else FCLIBFormulation(f.strip()).value
        for f in args.formulations.split(",")
        if f.strip()
    ]
    if args.dir is not None:
        files = sorted(args.dir.glob("*.hdf5"))
    else:
        files = sorted((DATA / "fclib-siconos").glob("*.hdf5")) + [DATA / "fclib" / "local_problem_test.hdf5"]
    files = [f for f in files if f.is_file() and args.only in f.name]
    if not files:
        print(f"no FCLIB files under {args.dir or DATA}", file=sys.stderr)
        return 2
    rows: list[dict[str, Any]] = []
    head = f"{'problem':40s} {'nc':>4s} {'LU ms':>8s}"
    for f in forms + (["fb_peer"] if args.peer_fb else []):
        head += f" | {f[:13]:>13s} {'s':>7s} {'xLU':>7s} {'error':>8s} {'its':>4s}"
    print(head)
    for path in files:
        prob = load_fclib(path)
        row: dict[str, Any] = {"problem": path.stem, "n_contacts": prob.nc, "lu_s": lu_time(prob.W)}
        line = f"{path.stem[:40]:40s} {prob.nc:4d} {row['lu_s'] * 1e3:8.3f}"
        for form in forms:
            limit = args.ncp_time_limit if form == "ncp" else args.time_limit
            out = run(path, form, 1 if form == "ncp" else args.repeat, tol=TOL, time_limit=limit)
            out["ratio_to_lu"] = out["time_s"] / row["lu_s"]
            row[form] = out
            line += cell(out)
            if args.stages:
                line += " [" + " ".join(out["stages"]) + "]"
        if args.peer_fb:
            out = run(path, "ncp", 1, method="fb", tol=1e-6, time_limit=args.ncp_time_limit)
            out["ratio_to_lu"] = out["time_s"] / row["lu_s"]
            row["fb_peer"] = out
            line += cell(out)
        print(line, flush=True)
        rows.append(row)
    summary: dict[str, Any] = {}
    for form in forms + (["fb_peer"] if args.peer_fb else []):
        outs = [r[form] for r in rows]
        ratios = np.array([o["ratio_to_lu"] for o in outs])
        summary[form] = {
            "solved": sum(o["solved"] for o in outs),
            "of": len(outs),
            "within_100_lu": int(np.sum(ratios <= TARGET_LU)),
            "median_ratio_to_lu": float(np.median(ratios)),
            "total_time_s": float(sum(o["time_s"] for o in outs)),
        }
        s = summary[form]
        print(
            f"{form}: solved {s['solved']}/{s['of']}, within {TARGET_LU:.0f} LU {s['within_100_lu']}, "
            f"median x LU {s['median_ratio_to_lu']:.0f}, total {s['total_time_s']:.2f} s"
        )
    if args.out:
        meta = {
            "tol": TOL,
            "python": sys.version.split()[0],
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
            "dir": str(args.dir or DATA),
            "load_average": os.getloadavg(),
        }
        args.out.write_text(json.dumps({"meta": meta, "summary": summary, "problems": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
