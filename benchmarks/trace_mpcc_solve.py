"""Files of one MPCC solve and its calls up the folder layers (issue 45: "a traced large MPCC solve
passes at most 20 files with no call back up into a caller's folder").

``mcpkit.solve(mpcc)`` for :math:`\\min_x \\|a - t\\|^2 + \\|b + t - 1\\|^2` s.t.
:math:`0 \\le a \\perp b \\ge 0` with ``n`` pairs (default 200), traced with :func:`sys.setprofile`
after a first, untraced solve of a small one (imports and caches out of the way): every Python
function call in a file of mcpkit (``mcpkit/``, ``models/``, ``mpec/``) counts its file, and a call
whose nearest mcpkit caller lies in a lower folder of
:data:`tests.unit.test_folder_graph.LAYERS` counts as a call up the layers (a callback the caller
passed down, or a registry target), listed by caller and callee.

Run: ``python benchmarks/trace_mpcc_solve.py [N] [--json]`` from the repository root.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import casadi as ca
import numpy as np

import mcpkit
from mcpkit import MPCC

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.unit.test_folder_graph import LAYERS  # noqa: E402

RANK = {f: k for k, f in enumerate(LAYERS)}


def folder(path: str) -> str | None:
    """The folder node of a source file (as in ``tests/unit/test_folder_graph.py``), ``None`` outside."""
    p = Path(path)
    if not p.is_relative_to(REPO):
        return None
    rel = p.relative_to(REPO).parts
    if rel[0] in ("models", "mpec"):
        return rel[0]
    if rel[0] != "mcpkit":
        return None
    if len(rel) == 2:
        return "mcpkit" if rel[1] == "__init__.py" else rel[1].removesuffix(".py")
    return rel[1]


def build(n: int) -> MPCC:
    r""":math:`\min \|a - t\|^2 + \|b + t - 1\|^2` s.t. :math:`0 \le a \perp b \ge 0`,
    :math:`t` evenly spaced in :math:`[0.5, 1.5]`."""
    x = ca.SX.sym("x", 2 * n)
    a, b = x[:n], x[n:]
    t = np.linspace(0.5, 1.5, n)
    return MPCC.from_casadi(x, a, b, f=ca.sumsqr(a - t) + ca.sumsqr(b + t - 1), name=f"trace_{n}")


def trace(n: int = 200) -> dict[str, Any]:
    """The traced solve: files with their call counts, and the calls up the layers."""
    mcpkit.solve(build(5))  # imports and caches out of the way
    mpcc = build(n)
    files: collections.Counter[str] = collections.Counter()
    up: collections.Counter[str] = collections.Counter()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        callee = folder(frame.f_code.co_filename)
        if callee is None:
            return
        name = str(Path(frame.f_code.co_filename).relative_to(REPO))
        files[name] += 1
        c = frame.f_back
        while c is not None and folder(c.f_code.co_filename) is None:
            c = c.f_back
        if c is None:
            return
        caller = folder(c.f_code.co_filename)
        if caller in RANK and callee in RANK and RANK[caller] < RANK[callee]:
            where = str(Path(c.f_code.co_filename).relative_to(REPO))
            up[f"{where}:{c.f_code.co_name} -> {name}:{frame.f_code.co_name}"] += 1

    sys.setprofile(profile)
    try:
        result = mcpkit.solve(mpcc)
    finally:
        sys.setprofile(None)
    return {
        "n": n,
        "solved": bool(result.solved),
        "files": len(files),
        "calls_by_file": dict(sorted(files.items())),
        "calls_up": sum(up.values()),
        "calls_up_by_site": dict(sorted(up.items())),
    }


def main() -> None:
    """Print the trace (``--json``: as one JSON object)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", nargs="?", type=int, default=200, help="pairs (default 200)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = trace(args.n)
    if args.json:
        print(json.dumps(out, indent=1))
        return
    print(f"n = {out['n']}: solved {out['solved']}, {out['files']} files")
    for f, k in out["calls_by_file"].items():
        print(f"  {f:<45} {k:>6}")
    print(f"calls up the layers: {out['calls_up']}")
    for site, k in out["calls_up_by_site"].items():
        print(f"  {site}  {k}")


if __name__ == "__main__":
    main()
