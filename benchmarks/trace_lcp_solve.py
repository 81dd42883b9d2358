"""Files and cross-file calls of one plain LCP solve (issue 27: "a traced plain LCP solve through at
most 8 files, judged once").

``mcpkit.solve(MCP.lcp(M, q))`` for a 2 x 2 P-matrix LCP, traced with :func:`sys.setprofile`
after a first, untraced solve (imports and caches out of the way): every Python function call in
a file of mcpkit (``mcpkit/``, ``models/``, ``mpec/``) counts its file, a call whose caller lies in
another mcpkit file counts as a cross-file call (calls of import hooks by the interpreter's import
machinery are not counted: no mcpkit code calls them), and the calls of
:func:`mcpkit.solving.result.judge_point` (the verdict) are counted separately.

Run: ``python benchmarks/trace_lcp_solve.py [--json]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np

import mcpkit
from mcpkit import MCP

ROOTS = ("/mcpkit/", "/models/", "/mpec/")


def _ours(path: str) -> bool:
    return any(r in path for r in ROOTS) and "/benchmarks/" not in path


def trace() -> dict[str, Any]:
    """The traced solve: files with their call counts, cross-file calls, verdicts."""
    M = np.array([[2.0, 1.0], [1.0, 2.0]])
    q = np.array([-1.0, -1.0])
    mcpkit.solve(MCP.lcp(M, q))  # imports and caches out of the way
    files: dict[str, int] = {}
    counts = {"cross": 0, "judge": 0}

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or not _ours(frame.f_code.co_filename):
            return
        if frame.f_back is not None and frame.f_back.f_code.co_filename.startswith("<frozen importlib"):
            return  # an import hook (meta-path finder) called by the interpreter, not by the solve
        name = frame.f_code.co_filename
        files[name] = files.get(name, 0) + 1
        if frame.f_code.co_name == "judge_point":
            counts["judge"] += 1
        back = frame.f_back
        if back is not None and back.f_code.co_filename != name and _ours(back.f_code.co_filename):
            counts["cross"] += 1

    lcp = MCP.lcp(M, q)
    sys.setprofile(profile)
    try:
        res = mcpkit.solve(lcp)
    finally:
        sys.setprofile(None)
    root = Path(mcpkit.__file__).resolve().parents[1]
    rel: dict[str, int] = {}
    for f, n in files.items():
        rel[str(Path(f).resolve().relative_to(root)) if f.startswith(str(root)) else f] = n
    return {
        "solved": bool(res.solved),
        "files": len(rel),
        "cross_file_calls": counts["cross"],
        "verdicts": counts["judge"],
        "calls_by_file": dict(sorted(rel.items(), key=lambda kv: -kv[1])),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()
    out = trace()
    if args.json:
        print(json.dumps(out))
        return
    print(
        f"solved {out['solved']}: {out['files']} files, {out['cross_file_calls']} cross-file calls, "
        f"judge_point called {out['verdicts']} times (issue 27's aim: at most 8 files, judged once)"
    )
    for name, n in out["calls_by_file"].items():
        print(f"  {n:5d}  {name}")


if __name__ == "__main__":
    main()
