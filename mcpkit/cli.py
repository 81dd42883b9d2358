"""The ``mcpkit`` command line.

* ``mcpkit info`` lists backends and solvers, their versions and where each was found.
* ``mcpkit solve FILE [--method M] [--backend B] [--tol T] [--time-limit S] [--json]`` solves a
  problem file (see :mod:`mcpkit.io` for the formats; MCP files in the ``mcpkit-mcp`` format and
  MCPLIB ports, MPCC JSON with ``mcplib_meta``, are read as MCPs by :mod:`mcpkit.mcp_file`, and
  ``known_solution_distance`` is reported when the file's metadata has known solutions).
* ``mcpkit print FILE [--latex]`` prints the MCP in a file as mathematics.
* ``mcpkit demo NAME [--out DIR] [--json]`` runs a demo: ``quickstart`` (one contact step,
  printed and solved by every route), ``sliding``, ``pushed-slider``, ``plate`` (time stepping),
  ``block``, ``pushing``, ``plate-design`` (MPEC planning over a horizon; ``plate-design`` also
  runs the seed's Nelder–Mead comparison over three radii, about 5 min).

Every command's exit status comes from its result's ``solved`` (the ``Outcome`` protocol of
:mod:`mcpkit.result`): 0 when solved (for demos and file sets: every part), 1 when the solver ran
but did not meet the tolerance, 2 for bad input or a missing solver. ``--method`` and
``--backend`` accept the names in :mod:`mcpkit.registry` (``mcpkit info`` lists them).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mcpkit.errors import MCPKitError
from mcpkit.options import Backend, Method


def _print_json(obj: Any) -> None:
    print(json.dumps(obj, default=str))


def cmd_info(args: argparse.Namespace) -> int:
    from mcpkit import __version__
    from mcpkit.availability import components
    from mcpkit.registry import describe

    comps = components()
    routes = describe()
    if args.json:
        _print_json({"mcpkit": __version__, "components": [c.__dict__ for c in comps], "registry": routes})
        return 0
    print(f"mcpkit {__version__} (Python {sys.version.split()[0]})")
    width = max(len(c.name) for c in comps)
    for c in comps:
        mark = "yes" if c.available else "no "
        ver = f" {c.version}" if c.version else ""
        print(f"  {c.name:<{width}}  {mark}{ver}  -- {c.location}")
    print("registry (backend=, method=):")
    width = max(len(r["name"]) for r in routes)
    for r in routes:
        mark = "yes" if r["available"] else "no "
        where = f" on {', '.join(r['backends'])}" if "backends" in r else ""
        print(f"  {r['kind']:<13} {r['name']:<{width}}  {mark}  {'/'.join(r['problems'])}{where}")
    return 0


def _solve_options(args: argparse.Namespace) -> dict[str, Any]:
    opts: dict[str, Any] = {}
    if args.tol is not None:
        opts["tol"] = args.tol
    if args.time_limit is not None:
        opts["time_limit"] = args.time_limit
    return opts


def _solve_file(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """Load ``args.file`` by its kind and solve it: a result (``Outcome``) and extra summary fields."""
    from mcpkit.io import file_kind
    from mcpkit.solve import solve

    kind = file_kind(args.file)
    opts = _solve_options(args)
    if kind == "fclib":
        from mcpkit.models.fclib import solve_fclib_file

        return solve_fclib_file(args.file, method=args.method, backend=args.backend, **opts), {}
    if kind == "mpcc-json":
        from mcpkit.mpcc import load_mpcc_json

        problem = load_mpcc_json(args.file)
        return solve(problem, backend=args.backend, method=args.method, stationarity=True, **opts), {}
    from mcpkit.mcp_file import known_solution_distance, load_any_mcp

    mcp, meta = load_any_mcp(args.file)  # LCP files, mcpkit-mcp files, MCPLIB ports
    result = solve(mcp, backend=args.backend, method=args.method, **opts)
    distance = known_solution_distance(meta, result.z)
    return result, ({} if distance is None else {"known_solution_distance": distance})


def cmd_solve(args: argparse.Namespace) -> int:
    result, extra = _solve_file(args)
    summary = result.summary() | extra
    if args.json:
        _print_json(summary)
    else:
        print(repr(result))
        for key, value in summary.items():
            print(f"{key}: {value}")
    return 0 if result.solved else 1


def cmd_print(args: argparse.Namespace) -> int:
    from mcpkit.mcp_file import load_any_mcp

    mcp, _ = load_any_mcp(args.file)
    print(mcp.to_latex(max_rows=args.max_rows) if args.latex else mcp.to_text(max_rows=args.max_rows))
    if not args.latex:
        print()
        print(mcp.explain())
    return 0


def _demo_from(module: str, func: str) -> Callable[[Path, bool], Any]:
    def run(out: Path, progress: bool) -> Any:
        import importlib

        try:
            mod = importlib.import_module(module)
        except ImportError as exc:
            raise MCPKitError(f"demo unavailable: {module} could not be imported ({exc})") from None
        return getattr(mod, func)(out, progress=progress)

    return run


#: Demo name -> ``(out_dir, progress) -> result`` (each result follows ``mcpkit.result.Outcome``).
DEMOS: dict[str, Callable[[Path, bool], Any]] = {
    "quickstart": _demo_from("mcpkit.demo", "quickstart"),
    "sliding": _demo_from("mcpkit.models.ecp.demos", "demo_sliding"),
    "pushed-slider": _demo_from("mcpkit.models.ecp.demos", "demo_pushed_slider"),
    "plate": _demo_from("mcpkit.models.stewart_trinkle.demos", "demo_plate"),
    "block": _demo_from("mcpkit.mpec.examples", "demo_block"),
    "pushing": _demo_from("mcpkit.mpec.examples", "demo_pushing"),
    "plate-design": _demo_from("mcpkit.mpec.examples.plate_design", "demo_plate_design"),
}


def cmd_demo(args: argparse.Namespace) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    result = DEMOS[args.name](out, not args.no_progress and not args.json)
    summary = result.summary()
    if args.json:
        _print_json(summary)
    else:
        for key, value in summary.items():
            print(f"{key}: {value}")
    return 0 if result.solved else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcpkit", description="Complementarity modelling for contact mechanics."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p_info = sub.add_parser("info", help="list backends and solvers with versions and locations")
    p_info.add_argument("--json", action="store_true", help="one JSON object")
    p_info.set_defaults(func=cmd_info)

    p_solve = sub.add_parser(
        "solve",
        help="solve a problem file (.json LCP, mcpkit-mcp or CasADi MPCC, .npz LCP, .hdf5 FCLIB)",
    )
    p_solve.add_argument("file", help="problem file")
    p_solve.add_argument(
        "--method",
        default="auto",
        help=f"{', '.join(m.value for m in Method)} (default auto; see `mcpkit info`)",
    )
    p_solve.add_argument(
        "--backend", default="auto", help=f"{', '.join(b.value for b in Backend)} (default auto)"
    )
    p_solve.add_argument(
        "--tol",
        type=float,
        default=None,
        help="tolerance (default 1e-8 for MCPs, 1e-6 for MPCC and FCLIB files)",
    )
    p_solve.add_argument("--time-limit", type=float, default=None, help="wall-clock limit in seconds")
    p_solve.add_argument("--json", action="store_true", help="print one JSON summary object")
    p_solve.set_defaults(func=cmd_solve)

    p_print = sub.add_parser("print", help="print the MCP in a file as mathematics")
    p_print.add_argument("file")
    p_print.add_argument("--latex", action="store_true", help="LaTeX instead of plain text")
    p_print.add_argument("--max-rows", type=int, default=8, help="rows shown per block")
    p_print.set_defaults(func=cmd_print)

    p_demo = sub.add_parser("demo", help="run a demo and write its figures")
    p_demo.add_argument("name", choices=sorted(DEMOS))
    p_demo.add_argument("--out", default="mcpkit-demo", help="folder for figures (default ./mcpkit-demo)")
    p_demo.add_argument("--json", action="store_true", help="print one JSON summary object")
    p_demo.add_argument("--no-progress", action="store_true", help="no progress bar")
    p_demo.set_defaults(func=cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mcpkit`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except MCPKitError as exc:
        print(f"mcpkit: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
