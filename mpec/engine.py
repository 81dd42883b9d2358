r"""The MPCC engine: solve a general-bounds MPCC (:mod:`mcpkit.mpec.problem`) with IPOPT homotopies.

Lowers with :class:`~mcpkit.mpec.problem.ToStandardMPCC`, runs the homotopy of
:mod:`mcpkit.solvers.homotopy` (Scholtes, Fischer–Burmeister or penalty; IPOPT's tolerance tied
to ``tol``; recovery after failed subproblems; active-set polish) and judges every candidate on
the original pairs. ``solved`` means complementarity residual <= ``tol`` and constraint violation
<= ``tol`` (``tol`` defaults to 1e-6 here, the benchmark convention).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcpkit.mpcc_solve import MPCCSolver
from mcpkit.mpec.loader import load_mpcc_json
from mcpkit.mpec.problem import GeneralMPCC, ToStandardMPCC
from mcpkit.result import MCPResult

DEFAULT_TOL = 1e-6


def solve_general(problem: GeneralMPCC, method: str = "scholtes", **options: Any) -> MCPResult:
    """Solve a :class:`~mcpkit.mpec.problem.GeneralMPCC` once."""
    options.setdefault("tol", DEFAULT_TOL)
    return MPCCSolver(problem, method, lowering=ToStandardMPCC(), **options).solve()


def solve_mpcc_file(path: str | Path, method: str = "auto", **options: Any) -> dict[str, Any]:
    """Load a CasADi MPCC JSON file, solve it, and return the JSON summary of ``mcpkit solve``."""
    problem = load_mpcc_json(path)
    result = solve_general(problem, method="scholtes" if method == "auto" else method, **options)
    summary = result.summary()
    summary["problem"] = problem.name
    summary["n_x"] = int(problem.x.numel())
    summary["n_pairs"] = problem.n_pairs
    return summary
