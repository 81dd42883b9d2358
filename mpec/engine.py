r"""The MPCC engine: solve a general-bounds MPCC (:mod:`mcpkit.mpec.problem`) with IPOPT homotopies.

Lowers with :class:`~mcpkit.mpec.problem.ToStandardMPCC`, runs the homotopy of
:mod:`mcpkit.solvers.homotopy` (Scholtes, Fischer–Burmeister or penalty; IPOPT's tolerance tied
to ``tol``; recovery after failed subproblems; active-set polish) and judges every candidate on
the original pairs. ``solved`` means complementarity residual <= ``tol`` and constraint violation
<= ``tol`` (``tol`` defaults to 1e-6 here, the benchmark convention). The point's stationarity
class (S, B, M, C, weak, or not stationary) is reported beside the verdict, never folded into it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcpkit.errors import MCPInputError
from mcpkit.mpcc_solve import MPCCSolver
from mcpkit.mpec.loader import load_mpcc_json
from mcpkit.mpec.problem import GeneralMPCC, ToStandardMPCC
from mcpkit.mpec.stationarity import attach_stationarity
from mcpkit.options import Backend
from mcpkit.result import MCPResult

DEFAULT_TOL = 1e-6
#: Activity / multiplier-residual tolerance of the stationarity check after a solve: homotopy
#: points carry errors around 1e-6 in G and H, so a tighter tolerance misreads activity.
STATIONARITY_TOL = 1e-4
#: Above this many variables the (dense) stationarity check is skipped, with a note.
STATIONARITY_MAX_VARS = 3000


def solve_general(
    problem: GeneralMPCC,
    method: str = "scholtes",
    stationarity: bool = True,
    backend: str = "casadi",
    **options: Any,
) -> MCPResult:
    """Solve a :class:`~mcpkit.mpec.problem.GeneralMPCC` once.

    ``backend="casadi"`` (default, also ``"auto"``) runs the homotopy on the CasADi
    expressions; ``backend="pyomo"`` lowers the problem to Pyomo and solves the relaxations
    there (:class:`~mcpkit.mpec.pyomo_solve.PyomoMPCCSolver`; pass ``ipopt=`` to choose its
    IPOPT). With ``stationarity`` (default) the returned point is classified
    (:func:`~mcpkit.mpec.stationarity.attach_stationarity`, tolerance :data:`STATIONARITY_TOL`):
    ``result.extra["stationarity"]`` is one of ``S``, ``B``, ``M``, ``C``, ``weak``,
    ``not_stationary``, ``not_feasible``, or ``"not checked"`` above
    :data:`STATIONARITY_MAX_VARS` variables.
    """
    options.setdefault("tol", DEFAULT_TOL)
    b = Backend.parse(backend)
    if b is Backend.PYOMO:
        from mcpkit.mpec.pyomo_solve import PyomoMPCCSolver

        result = PyomoMPCCSolver(problem, method, **options).solve()
    elif b in (Backend.CASADI, Backend.AUTO):
        if "ipopt" in options:
            raise MCPInputError("ipopt= chooses the IPOPT of backend='pyomo'; the CasADi backend has one")
        result = MPCCSolver(problem, method, lowering=ToStandardMPCC(), **options).solve()
    else:
        raise MCPInputError(f"MPCCs are solved on backend 'casadi' or 'pyomo', not {b.value!r}")
    if stationarity:
        if problem.x.numel() <= STATIONARITY_MAX_VARS:
            attach_stationarity(result, problem, problem.p0, tol=STATIONARITY_TOL)
        else:
            result.extra["stationarity"] = "not checked"
    return result


def solve_mpcc_file(
    path: str | Path, method: str = "auto", backend: str = "casadi", **options: Any
) -> dict[str, Any]:
    """Load a CasADi MPCC JSON file, solve it, and return the JSON summary of ``mcpkit solve``."""
    problem = load_mpcc_json(path)
    method = "scholtes" if method == "auto" else method
    result = solve_general(problem, method=method, backend=backend, **options)
    summary = result.summary()
    summary["problem"] = problem.name
    summary["n_x"] = int(problem.x.numel())
    summary["n_pairs"] = problem.n_pairs
    summary["stationarity"] = result.extra.get("stationarity")
    return summary
