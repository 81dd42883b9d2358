r"""IPOPT through CasADi's bundled ``nlpsol`` (always available after ``pip install``): the
default inner solver of the homotopy (:class:`CasadiInner`, the contract in
:mod:`mcpkit.homotopy.inner`).

Solves :math:`\min_x f(x; p)` s.t. :math:`g_l \le g(x; p) \le g_u`, :math:`x_l \le x \le x_u`.
The solver object is built once and re-used for every call (parametric re-solves and
homotopy steps only change numbers), with primal-dual warm starts.
"""

from __future__ import annotations

import functools
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import casadi as ca
import numpy as np

from mcpkit.errors import UnknownOptionError
from mcpkit.homotopy.inner import NO_ITERATION_STATUSES, InnerCall, InnerResult, InnerSettings, InnerSolver
from mcpkit.problems.derivatives import DENSE_ROW, dense_rows, shared_functions
from mcpkit.problems.names import casadi_name
from mcpkit.solving import stop
from mcpkit.solving.options import WarmStart

if TYPE_CHECKING:
    from mcpkit.homotopy.reformulation import NLPTemplate


def ipopt_iterations(stats: dict[str, Any]) -> int:
    """IPOPT's iteration count from CasADi's ``stats()``: 0 for a status of
    :data:`NO_ITERATION_STATUSES` and for a count that is not a non-negative integer."""
    if str(stats.get("return_status", "")) in NO_ITERATION_STATUSES:
        return 0
    try:
        count = int(stats.get("iter_count", 0))
    except (TypeError, ValueError):
        return 0
    return count if count >= 0 else 0


#: The ``warm_start_*`` settings every warm-start profile shares. Subproblem :math:`k > 0` of a
#: homotopy starts from the primal-dual point :math:`(x_{k-1}, \lambda_{k-1}, z_{k-1})` of
#: subproblem :math:`k - 1`: ``warm_start_init_point=yes`` takes the multipliers as given and the
#: pushes of 1e-9 keep the iterates as close to their bounds as the previous solution was.
_WARM_POINT: dict[str, Any] = {
    "warm_start_init_point": "yes",
    "warm_start_bound_push": 1e-9,
    "warm_start_bound_frac": 1e-9,
    "warm_start_mult_bound_push": 1e-9,
    "warm_start_slack_bound_frac": 1e-9,
    "warm_start_slack_bound_push": 1e-9,
}

#: IPOPT settings of each :class:`~mcpkit.solving.options.WarmStart` profile, by IPOPT name: the
#: shared warm point and an initial barrier parameter :math:`\mu_0` small enough that IPOPT does
#: not first move back to the central path. The reformulation's own additions and the user's
#: ``ipopt_options`` come on top, in that order (:func:`ipopt_option_dict`).
WARM_START_PROFILES: dict[WarmStart, dict[str, Any]] = {
    WarmStart.STANDARD: {**_WARM_POINT, "mu_init": 1e-5},
    WarmStart.BEST_OF_TWO: {**_WARM_POINT, "mu_init": 1e-5},
    WarmStart.ADAPTIVE: {
        **_WARM_POINT, "mu_init": 1e-4, "mu_strategy": "adaptive", "mu_oracle": "quality-function",
    },
}  # fmt: skip


def warm_start_options(profile: WarmStart | str = WarmStart.STANDARD) -> dict[str, Any]:
    """A copy of the IPOPT settings of ``profile`` (:data:`WARM_START_PROFILES`)."""
    return dict(WARM_START_PROFILES[WarmStart.parse(profile)])


#: IPOPT settings of a warm start from a nearby primal-dual point (multipliers kept, barrier
#: parameter small, iterates pushed off the bounds as little as possible): the default profile,
#: :attr:`~mcpkit.solving.options.WarmStart.STANDARD`.
WARM_START_OPTIONS: dict[str, Any] = warm_start_options(WarmStart.STANDARD)


@functools.lru_cache(maxsize=64)
def _check_option_names(names: frozenset[str]) -> None:
    x = ca.SX.sym("x")
    opts: dict[str, Any] = {f"ipopt.{k}": 0 for k in names}  # IPOPT checks names here, values at solve
    try:
        ca.nlpsol("mcpkit_option_check", "ipopt", {"x": x, "f": x * x}, opts)
    except RuntimeError as exc:
        _raise_unknown_option(exc)


def _raise_unknown_option(exc: RuntimeError) -> None:
    """Turn CasADi's "No such IPOPT option" into :class:`~mcpkit.errors.UnknownOptionError`."""
    m = re.search(r"No such IPOPT option: (\S+)", str(exc))
    if m:
        raise UnknownOptionError(
            f"unknown IPOPT option {m.group(1)!r} (see the IPOPT options reference)"
        ) from None


def check_ipopt_options(options: dict[str, Any] | None) -> None:
    """Raise :class:`~mcpkit.errors.UnknownOptionError` now if ``options`` names an option IPOPT lacks.

    Routes that may never build IPOPT (``method="auto"`` solved by ``newton``) call this so a
    misspelt option fails before anything runs, not only when a fallback first needs IPOPT.
    """
    if options:
        _check_option_names(frozenset(options))


def ipopt_option_dict(
    tol: float,
    max_iter: int,
    warm: bool = False,
    verbose: bool = False,
    options: dict[str, Any] | None = None,
    warm_start: WarmStart | str = WarmStart.STANDARD,
) -> dict[str, Any]:
    """IPOPT options by IPOPT name, the same for every inner solver of a subproblem.

    ``tol`` is IPOPT's ``tol`` and also its ``constr_viol_tol`` and ``compl_inf_tol`` (so the
    subproblem is solved to the accuracy the outer loop needs); ``warm`` adds the settings of the
    profile ``warm_start`` (:data:`WARM_START_PROFILES`; by default
    :data:`WARM_START_OPTIONS`); ``options`` (the user's, by IPOPT name, with or without an
    ``ipopt.`` prefix) come last and win.
    """
    opts: dict[str, Any] = {
        "print_level": 5 if verbose else 0,
        "sb": "yes",
        "tol": tol,
        "constr_viol_tol": tol,
        "compl_inf_tol": tol,
        "acceptable_tol": max(tol, 1e-6),
        "max_iter": int(max_iter),
    }
    if warm:
        opts.update(warm_start_options(warm_start))
    for key, value in (options or {}).items():
        opts[key.removeprefix("ipopt.")] = value
    return opts


#: Building an IPOPT solver (CasADi's ``nlpsol``: the Jacobian and Hessian of the Lagrangian,
#: symbolically) takes at least about this many seconds per unit of the rows' expression graph
#: (:func:`estimated_build_seconds`): 2.6 us per nonzero of the matrix of a dense 2000 x 2000 LCP
#: (4 million, 10.3 s) and 4.5 us at 3000 x 3000 (9 million, 41 s) on the 2-core reference
#: machine. Used as a *lower* estimate, so a faster machine builds what fits and a slower one is
#: stopped earlier, never later.
BUILD_SECONDS_PER_UNIT = 2e-6

#: ... plus this many seconds per unit of graph and Jacobian direction: an SX Jacobian takes one
#: sweep of the graph per direction (colour), and needs at least as many directions as the
#: densest row (forward) or column (reverse) has nonzeros. Measured 0.27-0.36 us per unit for
#: the rows ``s - M x`` with a dense ``M`` of 100-300 columns (0.8-29 s); a third of that as the
#: lower estimate.
JACOBIAN_SECONDS_PER_UNIT = 1e-7

#: ... except for the dense rows (:func:`mcpkit.problems.derivatives.dense_rows`), which are
#: differentiated one reverse sweep each (:func:`~mcpkit.problems.derivatives.row_jacobian`):
#: this many seconds per nonzero of theirs. Measured 3.5-3.9 us per nonzero for the rows
#: ``s - (M x + q + y)`` with a dense ``M`` of 300-1,000 columns (0.35-3.6 s); under a third of
#: that as the lower estimate.
ROW_JACOBIAN_SECONDS_PER_NONZERO = 1e-6


def estimated_build_seconds(
    x: ca.SX | ca.MX, p: ca.SX | ca.MX, g: ca.SX | ca.MX, *, derivatives: bool = True
) -> float:
    r"""A lower estimate of the seconds that building an IPOPT solver with rows ``g(x, p)`` takes:
    :data:`BUILD_SECONDS_PER_UNIT` times the size of ``g``'s expression graph, its operations
    plus (for MX) the nonzeros of the constant matrices in it (a dense :math:`M` in
    :math:`Mz + q` makes a Jacobian, and a Hessian of the pair products, as dense as :math:`M`),
    and for SX (``derivatives``: the Jacobian is not computed yet) the Jacobian's
    (:func:`jacobian_seconds`). Instant, unlike the structural Jacobian (5-19 s for a dense
    3000 x 3000 MX product)."""
    fn = ca.Function("mcpkit_size", [x, p], [g])
    size = fn.n_instructions()
    if isinstance(g, ca.MX):
        for k in range(fn.n_instructions()):
            node = fn.instruction_MX(k)
            if node.is_constant():
                size += node.nnz()
    seconds = BUILD_SECONDS_PER_UNIT * size
    if derivatives and isinstance(g, ca.SX) and g.numel() and x.numel():
        seconds += jacobian_seconds(x, p, ca.vec(g), size)
    return seconds


#: :func:`wall_build_seconds` scales by at most this factor ...
MAX_SLOWDOWN = 20.0

#: ... and only when computing the estimate took at least this much CPU time (below it the ratio
#: of wall to CPU time is noise).
SLOWDOWN_MIN_CPU = 0.01


def wall_build_seconds(
    x: ca.SX | ca.MX, p: ca.SX | ca.MX, g: ca.SX | ca.MX, *, derivatives: bool = True
) -> float:
    r""":func:`estimated_build_seconds` (CPU seconds) in wall-clock seconds on this machine now:
    times the ratio :math:`r = t_\text{wall} / t_\text{CPU}` measured while computing it, with
    :math:`1 \le r \le` :data:`MAX_SLOWDOWN`. A build cannot be interrupted; on a machine whose
    other jobs leave this process a fifth of a core it takes five times its CPU time, so a
    caller's time limit refuses it five times earlier (a dense MPCC of 200 pairs with
    ``time_limit=2`` returned after 7.4 s at a load of 9 on 2 cores without this)."""
    t0, c0 = time.perf_counter(), time.process_time()
    seconds = estimated_build_seconds(x, p, g, derivatives=derivatives)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    if cpu < SLOWDOWN_MIN_CPU:
        return seconds
    return seconds * min(MAX_SLOWDOWN, max(1.0, wall / cpu))


def jacobian_seconds(x: ca.SX, p: ca.SX, g: ca.SX, size: int) -> float:
    r"""A lower estimate of the seconds :func:`~mcpkit.problems.derivatives.row_jacobian` takes
    on the column ``g`` (``size`` operations): :data:`ROW_JACOBIAN_SECONDS_PER_NONZERO` times the
    nonzeros of its dense rows, plus :data:`JACOBIAN_SECONDS_PER_UNIT` times the other rows'
    graph and the fewest directions a Jacobian of their sparsity can take (the densest row,
    forward, or column, reverse)."""
    dense, counts = dense_rows(g, x)
    seconds = ROW_JACOBIAN_SECONDS_PER_NONZERO * float(counts[dense].sum())
    rest = np.flatnonzero(counts < DENSE_ROW)
    if rest.size:
        sub = g[rest.tolist()] if dense.size else g
        if dense.size:
            size = ca.Function("mcpkit_size", [x, p], [sub]).n_instructions()
        rows, cols = ca.jacobian_sparsity(sub, x).get_triplet()
        directions = min(np.bincount(rows).max(initial=0), np.bincount(cols).max(initial=0))
        seconds += JACOBIAN_SECONDS_PER_UNIT * size * directions
    return seconds


class _Monitor(ca.Callback):
    """IPOPT iteration callback that asks IPOPT to stop once ``deadline`` (perf_counter) passed
    or ``max_iter`` iterations of this call were taken, or a stop was requested
    (:func:`mcpkit.solving.stop.request`, Ctrl-C in the command line).

    IPOPT's own ``max_wall_time`` and ``max_iter`` are fixed when the solver is built and count
    from the start of each call; a homotopy that must end within one overall limit needs the
    *remaining* time, which changes from call to call, and its polish a cap that depends on the
    work done so far. IPOPT then returns ``User_Requested_Stop``; :attr:`capped` records that
    the cap, not the deadline or a stop request, ended the call (IPOPT's ``iter_count`` cannot
    tell: it can end below the number of callbacks; on NOSBENCH 3CPTF_002_020 calls stopped at
    caps of 300, 830 and 1,432 reported 299, 826 and 1,431 iterations). The callback costs about
    45 us per iteration, so it is installed only on solvers that ask for it (``deadlines``) or
    are built inside :func:`mcpkit.solving.stop.watching`.
    """

    def __init__(self, nx: int, ng: int, npar: int) -> None:
        ca.Callback.__init__(self)
        self.sizes = {"x": nx, "lam_x": nx, "g": ng, "lam_g": ng, "lam_p": npar, "f": 1}
        self.deadline = float("inf")
        self.max_iter: int | None = None
        self.count = 0
        self.capped = False
        self.construct("mcpkit_monitor", {})

    def start(self, deadline: float | None, max_iter: int | None) -> None:
        """Arm the monitor for one call."""
        self.deadline = float("inf") if deadline is None else deadline
        self.max_iter = max_iter
        self.count = 0
        self.capped = False

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
        self.count += 1  # called once per iteration, iteration 0 included
        over = self.max_iter is not None and self.count > self.max_iter
        self.capped = self.capped or over
        return [1 if over or stop.requested() or time.perf_counter() > self.deadline else 0]


class IpoptNLP(InnerSolver):
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
        Accept a ``deadline`` and a ``max_iter`` cap in :meth:`solve` (an iteration callback
        checks them; used when the solve has a time limit, and by the polish).
    derivatives
        IPOPT's ``grad_f``, ``jac_g`` and ``hess_lag`` functions, when they are shared with
        other solvers on the same rows (:mod:`mcpkit.problems.derivatives`); ``None``: CasADi
        differentiates the NLP itself.
    warm_start
        The IPOPT settings of a ``warm`` solver (:class:`~mcpkit.solving.options.WarmStart`).
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
        derivatives: dict[str, ca.Function] | None = None,
        warm_start: WarmStart | str = WarmStart.STANDARD,
    ) -> None:
        opts: dict[str, Any] = {
            "print_time": False, "error_on_fail": False, "show_eval_warnings": verbose, **(derivatives or {}),
        }  # fmt: skip
        for key, value in ipopt_option_dict(tol, max_iter, warm, verbose, options, warm_start).items():
            opts[f"ipopt.{key}"] = value
        self.nx = int(x.numel())
        self.ng = int(g.numel())
        self.np = int(p.numel())
        self._monitor = _Monitor(self.nx, self.ng, self.np) if deadlines or stop.watched() else None
        if self._monitor is not None:
            opts["iteration_callback"] = self._monitor
        try:
            self.solver = ca.nlpsol(casadi_name(name), "ipopt", {"x": x, "p": p, "f": f, "g": g}, opts)
        except RuntimeError as exc:
            _raise_unknown_option(exc)
            raise

    def _run(self, call: InnerCall) -> InnerResult:
        # the deadline and cap (need ``deadlines=True``) make IPOPT return ``User_Requested_Stop``
        if self._monitor is not None:
            self._monitor.start(call.deadline, call.max_iter)
        c = call
        args: dict[str, Any] = {"x0": c.x0, "p": c.q, "lbx": c.lbx, "ubx": c.ubx, "lbg": c.lbg, "ubg": c.ubg}
        for key, lam in (("lam_x0", c.lam_x0), ("lam_g0", c.lam_g0)):
            if lam is not None:
                args[key] = lam
        sol = self.solver(**args)  # evaluation errors surface as RuntimeError (see ``errors``)
        stats = self.solver.stats()
        status = str(stats.get("return_status", "unknown"))
        if status == "User_Requested_Stop" and self._monitor is not None and self._monitor.capped:
            status = "Maximum_Iterations_Exceeded"  # the per-call cap, not a user's stop
        return InnerResult(
            x=np.asarray(sol["x"], dtype=float).reshape(-1),
            lam_x=np.asarray(sol["lam_x"], dtype=float).reshape(-1),
            lam_g=np.asarray(sol["lam_g"], dtype=float).reshape(-1),
            f=float(sol["f"]),
            status=status,
            iterations=ipopt_iterations(stats),
            wall_time_s=time.perf_counter() - call.t0,
        )


@dataclass(frozen=True)
class CasadiInner:
    """:class:`~mcpkit.homotopy.inner.InnerFactory` of CasADi's ``nlpsol`` IPOPT (:class:`IpoptNLP`)."""

    description: str = "casadi"

    def __call__(self, nlp: NLPTemplate, settings: InnerSettings) -> IpoptNLP:
        # IPOPT applies its own scaling (obj_scaling_factor, ...) to whatever these return
        shared = shared_functions(nlp.base, nlp.x, nlp.p, nlp.f, nlp.extra_rows, settings.name)
        return IpoptNLP(
            nlp.x,
            nlp.p,
            nlp.f,
            nlp.g,
            tol=settings.tol,
            max_iter=settings.max_iter,
            warm=settings.warm,
            options=settings.options,
            verbose=settings.verbose,
            name=settings.name,
            deadlines=settings.deadlines,
            derivatives=shared,
            warm_start=settings.warm_start,
        )
