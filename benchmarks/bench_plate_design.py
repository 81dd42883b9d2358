"""Seed 004 §5.1 plate design: periodic boundary-value MPEC vs Nelder–Mead over full simulations.

Both designs are evaluated with the same full simulation (``simulated_objective``: particle from
rest at R = 6 cm, 20 plate periods, J over the last 2). Wall times are measured side by side in
this process. Usage: ``python benchmarks/bench_plate_design.py [--evals 60] [--json] [--figure]``.
"""

from __future__ import annotations

import argparse
import json
import math

from mcpkit.mpec.examples.plate_design import demo_plate_design


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--evals", type=int, default=60, help="Nelder-Mead evaluation budget")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--out", default="docs/figures", help="directory of mpec_plate_design.png")
    args = ap.parse_args()
    s = demo_plate_design(args.out, progress=not args.json, max_evals=args.evals)
    reach = s["nm_time_to_mpec_objective_s"]
    row = {
        "mpec_wall_s": s["mpec_wall_s"], "mpec_objective_sim": s["objective_sim_mpec"],
        "mpec_objective_plan": s["objective_plan"], "mpec_ok": s["solved"],
        "mpec_design": s["design"], "nm_wall_s": s["nm_wall_s"], "nm_evals": s["nm_evals"],
        "nm_objective_sim": s["nm_objective_sim"], "nm_design": s["nm_design"],
        "initial_objective_sim": s["objective_sim_initial"],
        "nm_time_to_mpec_objective_s": reach if math.isfinite(reach) else None,
        "wall_ratio_nm_over_mpec": s["wall_ratio_nm_over_mpec"],
    }  # fmt: skip
    if args.json:
        print(json.dumps(row))
        return
    print(f"{'method':<14}{'wall [s]':>10}{'J (full sim)':>14}{'evals':>7}")
    print(f"{'initial':<14}{'':>10}{row['initial_objective_sim']:>14.3e}{'':>7}")
    print(f"{'MPEC':<14}{row['mpec_wall_s']:>10.2f}{row['mpec_objective_sim']:>14.3e}{'':>7}")
    print(f"{'Nelder-Mead':<14}{row['nm_wall_s']:>10.2f}{row['nm_objective_sim']:>14.3e}{row['nm_evals']:>7}")
    print(f"NM / MPEC wall-time ratio: {row['wall_ratio_nm_over_mpec']:.1f}x; "
          f"NM time to reach the MPEC objective: {reach:.1f} s")  # fmt: skip


if __name__ == "__main__":
    main()
