r"""IPOPT through CasADi's bundled ``nlpsol`` (always available after ``pip install``).

Solves :math:`\min_x f(x; p)` s.t. :math:`g_l \le g(x; p) \le g_u`, :math:`x_l \le x \le x_u`.
The solver object is built once and re-used for every call (parametric re-solves and
homotopy steps only change numbers), with primal-dual warm starts.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

import casadi as ca
import numpy as np

from mcpkit.errors import UnknownOptionError
from mcpkit.mpcc import casadi_name
from mcpkit.result import Termination

#: IPOPT ``return_status`` strings (as CasADi reports them) -> mcpkit termination.
#: "Solved" statuses map to CONVERGED only for the *subproblem*; mcpkit's own residual
#: test decides whether the MCP/MPCC is solved.
IPOPT_STATUS: dict[str, Termination] = {
    "Solve_Succeeded": Termination.CONVERGED,
    "Solved_To_Acceptable_Level": Termination.CONVERGED,
    "Feasible_Point_Found": Termination.CONVERGED,
    "Infeasible_Problem_Detected": Termination.LOCALLY_INFEASIBLE,
    "Search_Direction_Becomes_Too_Small": Termination.STALLED,
    "Diverging_Iterates": Termination.NUMERICAL_ERROR,
    "User_Requested_Stop": Termination.INTERRUPTED,
    "Maximum_Iterations_Exceeded": Termination.ITERATION_LIMIT,
    "Maximum_CpuTime_Exceeded": Termination.TIME_LIMIT,
    "Maximum_WallTime_Exceeded": Termination.TIME_LIMIT,
    "Restoration_Failed": Termination.STALLED,
    "Error_In_Step_Computation": Termination.NUMERICAL_ERROR,
    "Not_Enough_Degrees_Of_Freedom": Termination.SOLVER_ERROR,
    "Invalid_Problem_Definition": Termination.SOLVER_ERROR,
    "Invalid_Option": Termination.SOLVER_ERROR,
    "Invalid_Number_Detected": Termination.NUMERICAL_ERROR,
    "Unrecoverable_Exception": Termination.SOLVER_ERROR,
    "NonIpopt_Exception_Thrown": Termination.SOLVER_ERROR,
    "Insufficient_Memory": Termination.SOLVER_ERROR,
    "Internal_Error": Termination.SOLVER_ERROR,
}


def ipopt_termination(status: str) -> Termination:
    """Map a raw IPOPT status to :class:`~mcpkit.result.Termination` (unknown -> SOLVER_ERROR)."""
    return IPOPT_STATUS.get(status, Termination.SOLVER_ERROR)


@dataclass(frozen=True)
class InnerResult:
    """One IPOPT call."""

    x: np.ndarray
    lam_x: np.ndarray
    lam_g: np.ndarray
    f: float
    status: str
    iterations: int
    wall_time_s: float

    @property
    def ok(self) -> bool:
        """IPOPT's own verdict that the subproblem converged (not mcpkit's verdict)."""
        return ipopt_termination(self.status) is Termination.CONVERGED


class _Deadline(ca.Callback):
    """IPOPT iteration callback that asks IPOPT to stop once ``deadline`` (perf_counter) passed.

    IPOPT's own ``max_wall_time`` is fixed when the solver is built and counts from the start of
    each call; a homotopy that must end within one overall limit needs the *remaining* time,
    which changes from call to call. IPOPT then returns ``User_Requested_Stop``.
    """

    def __init__(self, nx: int, ng: int, npar: int) -> None:
        ca.Callback.__init__(self)
        self.sizes = {"x": nx, "lam_x": nx, "g": ng, "lam_g": ng, "lam_p": npar, "f": 1}
        self.deadline = float("inf")
        self.construct("mcpkit_deadline", {})

    def get_n_in(self) -> int:
        return ca.nlpsol_n_out()

    def get_n_out(self) -> int:
        return 1

    def get_name_in(self, i: int) -> str:
        return ca.nlpsol_out(i)

    def get_name_out(self, i: int) -> str:
        return "stop"

    def get_sparsity_in(self, i: int) -> ca.Sparsity:
        return ca.Sparsity.dense(self.sizes.get(ca.nlpsol_out(i), 0), 1)

    def eval(self, arg: list[Any]) -> list[Any]:
        return [1 if time.perf_counter() > self.deadline else 0]


class IpoptNLP:
    r"""A built IPOPT solver for one NLP structure; call :meth:`solve` repeatedly.

    Parameters
    ----------
    x, p, f, g
        CasADi SX decision vector, parameter vector, objective and constraints.
    tol
        IPOPT ``tol``; also used for ``constr_viol_tol`` and ``compl_inf_tol`` so the
        subproblem is solved to the accuracy the outer loop needs.
    max_iter
        IPOPT ``max_iter``.
    warm
        Configure IPOPT for warm starts from a nearby primal-dual point.
    options
        Extra IPOPT options by IPOPT name; unknown names raise
        :class:`~mcpkit.errors.UnknownOptionError` when the solver is built.
    verbose
        Show IPOPT's iteration log.
    name
        Name of the CasADi function.
    deadlines
        Accept a ``deadline`` in :meth:`solve` (an iteration callback checks it; used when the
        solve has a time limit).
    """

    def __init__(
        self,
        x: ca.SX | ca.MX,
        p: ca.SX | ca.MX,
        f: ca.SX | ca.MX,
        g: ca.SX | ca.MX,
        *,
        tol: float,
        max_iter: int = 3000,
        warm: bool = False,
        options: dict[str, Any] | None = None,
        verbose: bool = False,
        name: str = "nlp",
        deadlines: bool = False,
    ) -> None:
        opts: dict[str, Any] = {
            "print_time": False,
            "error_on_fail": False,
            "ipopt.print_level": 5 if verbose else 0,
            "ipopt.sb": "yes",
            "ipopt.tol": tol,
            "ipopt.constr_viol_tol": tol,
            "ipopt.compl_inf_tol": tol,
            "ipopt.acceptable_tol": max(tol, 1e-6),
            "ipopt.max_iter": int(max_iter),
        }
        if warm:
            opts.update(
                {
                    "ipopt.warm_start_init_point": "yes",
                    "ipopt.mu_init": 1e-5,
                    "ipopt.warm_start_bound_push": 1e-9,
                    "ipopt.warm_start_bound_frac": 1e-9,
                    "ipopt.warm_start_mult_bound_push": 1e-9,
                    "ipopt.warm_start_slack_bound_frac": 1e-9,
                    "ipopt.warm_start_slack_bound_push": 1e-9,
                }
            )
        for key, value in (options or {}).items():
            opts[key if key.startswith("ipopt.") else f"ipopt.{key}"] = value
        self.nx = int(x.numel())
        self.ng = int(g.numel())
        self.np = int(p.numel())
        self._deadline = _Deadline(self.nx, self.ng, self.np) if deadlines else None
        if self._deadline is not None:
            opts["iteration_callback"] = self._deadline
        try:
            self.solver = ca.nlpsol(casadi_name(name), "ipopt", {"x": x, "p": p, "f": f, "g": g}, opts)
        except RuntimeError as exc:
            m = re.search(r"No such IPOPT option: (\S+)", str(exc))
            if m:
                raise UnknownOptionError(
                    f"unknown IPOPT option {m.group(1)!r} (see the IPOPT options reference)"
                ) from None
            raise

    def solve(
        self,
        x0: np.ndarray,
        p: np.ndarray,
        lbx: np.ndarray,
        ubx: np.ndarray,
        lbg: np.ndarray,
        ubg: np.ndarray,
        lam_x0: np.ndarray | None = None,
        lam_g0: np.ndarray | None = None,
        deadline: float | None = None,
    ) -> InnerResult:
        """Run IPOPT from ``x0`` (and multipliers, when given) and return the outcome.

        ``deadline`` (a :func:`time.perf_counter` value; needs ``deadlines=True``) stops IPOPT
        at its first iteration after that moment, with status ``User_Requested_Stop``.
        """
        if self._deadline is not None:
            self._deadline.deadline = float("inf") if deadline is None else deadline
        args: dict[str, Any] = {"x0": x0, "p": p, "lbx": lbx, "ubx": ubx, "lbg": lbg, "ubg": ubg}
        if lam_x0 is not None:
            args["lam_x0"] = lam_x0
        if lam_g0 is not None:
            args["lam_g0"] = lam_g0
        t0 = time.perf_counter()
        try:
            sol = self.solver(**args)
            stats = self.solver.stats()
            status = str(stats.get("return_status", "unknown"))
            iters = int(stats.get("iter_count", 0))
        except RuntimeError as exc:  # evaluation errors surface as exceptions in CasADi
            return InnerResult(
                x=np.full(self.nx, np.nan),
                lam_x=np.zeros(self.nx),
                lam_g=np.zeros(self.ng),
                f=float("nan"),
                status=f"exception: {str(exc).splitlines()[-1][:200]}",
                iterations=0,
                wall_time_s=time.perf_counter() - t0,
            )
        return InnerResult(
            x=np.asarray(sol["x"], dtype=float).reshape(-1),
            lam_x=np.asarray(sol["lam_x"], dtype=float).reshape(-1),
            lam_g=np.asarray(sol["lam_g"], dtype=float).reshape(-1),
            f=float(sol["f"]),
            status=status,
            iterations=iters,
            wall_time_s=time.perf_counter() - t0,
        )
