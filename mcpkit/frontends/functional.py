r"""``mcpkit.solve_mcp``: PATHSolver.jl's functional interface to the box MCP.

Find :math:`z` with :math:`l \le z \le u \perp F(z)`, given

* ``solve_mcp(F, J, lb, ub, z0)`` with Python callables ``F(z) -> array`` and
  ``J(z) -> array or scipy.sparse matrix`` (the Jacobian :math:`\partial F/\partial z`);
* ``solve_mcp(F, None, lb, ub, z0)`` with a ``casadi.Function`` ``(z) -> F`` or ``(z, p) -> F``
  (CasADi differentiates; ``p0=`` gives the parameter values);
* ``solve_mcp(M, q, lb, ub, z0)``: the box LCP :math:`l \le z \le u \perp Mz + q`, ``M`` a dense
  array or a ``scipy.sparse`` matrix.

Routing
-------
A CasADi function becomes a declaration (:func:`~mcpkit.lowering.from_casadi.mcp_from_casadi`;
affine ones an affine block) and an LCP becomes :meth:`MCP.lcp <mcpkit.MCP.lcp>`; both are
solved by :class:`mcpkit.Solver`, so ``method="auto"`` takes what the registry picks (PATH when
present, else the licence-free engine) and ``method="path"``, ``"newton"``, ``"lemke"`` or an IPOPT
homotopy can be asked for by name. Python callables can only be evaluated in this process: they
drive :class:`~mcpkit.engines.newton.SemismoothNewton` directly (``method="auto"`` or
``"newton"``; ``method="path"`` raises :class:`~mcpkit.errors.MCPInputError`, since PATH runs in
another process and cannot call Python: pass a ``casadi.Function`` instead).

Jacobian structure (callables)
------------------------------
``jacobian_structure=`` gives the nonzero pattern: a ``scipy.sparse`` matrix or a dense array
(its nonzeros) or a pair ``(rows, cols)`` of index arrays. Without it the pattern is taken from
``J(z0)``: a sparse matrix's stored entries (explicit zeros count), or all :math:`n^2` entries
when ``J`` returns a dense array. An evaluation with a nonzero outside the pattern raises
:class:`~mcpkit.errors.MCPInputError`.

Options
-------
PATH's names where PATH has the option:

==========================  ===============================================================
``convergence_tolerance``   the tolerance of the verdict, on the natural residual
                            (default ``1e-8``, mcpkit's MCP default; PATH's own is ``1e-6``)
``major_iteration_limit``   PATH's major iterations; Newton iterations for ``newton``; the
                            IPOPT iteration limit per subproblem for the homotopies
``time_limit``              wall-clock seconds
``output``                  ``True``: print a header (n, method, tol), then each iteration
``method``, ``backend``     as for :func:`mcpkit.solve` (default ``"auto"``)
``jacobian_structure``      callables only (above)
``p0``                      CasADi functions with a parameter input only
``progress``                ``True``: a ``tqdm`` line (on a terminal or in a notebook;
                            ``"always"``: anywhere); or a callable receiving each step
                            record; see :attr:`mcpkit.solving.options.SolveOptions.progress`
==========================  ===============================================================

Any other name raises :class:`~mcpkit.errors.UnknownOptionError` listing these. Shapes, NaN,
:math:`l > u` and a non-finite ``z0`` raise typed errors before anything is solved.

Result
------
An :class:`~mcpkit.MCPResult`, as :func:`mcpkit.solve` returns, judged on the user's own
:math:`F` (the callable, the CasADi function, or :math:`Mz + q`): natural residual
:math:`\max_i |\operatorname{mid}(z_i - l_i, z_i - u_i, F_i(z))|`, complementarity violation
and bound violation all :math:`\le` ``convergence_tolerance``, with the residual code of
:mod:`mcpkit.solving.residuals` and the verdict of :func:`mcpkit.solving.result.judge`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import casadi as ca
import numpy as np
import scipy.sparse as sps

from mcpkit.errors import MCPInputError, ShapeError, UnknownOptionError
from mcpkit.lowering.casadi_sympy import undeclarable
from mcpkit.lowering.from_casadi import casadi_signature, mcp_from_casadi
from mcpkit.problems.arrays import ArrayLike, as_float_vector, as_positive
from mcpkit.problems.bounds import bound_kinds
from mcpkit.problems.mcp import MCP
from mcpkit.solving.options import Method, SolveOptions, suggestion, time_limit_seconds
from mcpkit.solving.progress import display
from mcpkit.solving.residuals import classify_pairs
from mcpkit.solving.result import MCPResult, SolutionStatus, judge_point, mcp_termination, verdict_message

#: Option names :func:`solve_mcp` accepts (PATH's where PATH has them).
OPTIONS = (
    "convergence_tolerance",
    "major_iteration_limit",
    "time_limit",
    "output",
    "method",
    "backend",
    "jacobian_structure",
    "p0",
    "progress",
)


def _options(options: dict[str, Any]) -> tuple[SolveOptions, str, str]:
    """``SolveOptions``, method and backend from PATH-named options (unknown names raise)."""
    unknown = [k for k in options if k not in OPTIONS]
    if unknown:
        hints = {k: suggestion(k, OPTIONS) for k in unknown}
        extra = "".join(f" Did you mean {h!r} for {k!r}?" for k, h in hints.items() if h)
        raise UnknownOptionError(f"solve_mcp: unknown options {unknown}; accepted: {list(OPTIONS)}.{extra}")
    kw: dict[str, Any] = {}
    if "convergence_tolerance" in options:
        kw["tol"] = as_positive(options["convergence_tolerance"], "solve_mcp: convergence_tolerance")
    if "major_iteration_limit" in options:
        k = options["major_iteration_limit"]
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
            raise MCPInputError(f"solve_mcp: major_iteration_limit must be a positive integer, got {k!r}")
        kw["max_inner_iter"] = int(k)
        kw["path_options"] = {"major_iteration_limit": int(k)}
    if "time_limit" in options:
        kw["time_limit"] = time_limit_seconds(options["time_limit"], "solve_mcp: time_limit")
    if "output" in options:
        if not isinstance(options["output"], bool | np.bool_):
            raise MCPInputError(f"solve_mcp: output must be True or False, got {options['output']!r}")
        kw["verbose"] = bool(options["output"])
    if options.get("progress") is not None:
        kw["progress"] = options["progress"]  # SolveOptions checks it is callable
    method = str(getattr(options.get("method", "auto"), "value", options.get("method", "auto")))
    backend = str(getattr(options.get("backend", "auto"), "value", options.get("backend", "auto")))
    return SolveOptions.for_problem("mcp", **kw), method, backend


def _size(lb: ArrayLike, ub: ArrayLike, z0: ArrayLike | None) -> int:
    for v in (z0, lb, ub):
        if v is not None and np.ndim(v) > 0:
            return int(np.size(v))
    raise ShapeError("solve_mcp: cannot tell n from scalar bounds; pass z0 or bound vectors")


def _box(lb: ArrayLike, ub: ArrayLike, z0: ArrayLike | None, n: int) -> tuple[np.ndarray, ...]:
    """Checked ``(lb, ub, z0)``; ``z0`` defaults to the projection of 0 and is clipped into the box."""
    lo = as_float_vector(lb, n, "lb", allow_inf=True)
    hi = as_float_vector(ub, n, "ub", allow_inf=True)
    bound_kinds(lo, hi)
    start = np.zeros(n) if z0 is None else as_float_vector(z0, n, "z0", allow_inf=False)
    return lo, hi, np.clip(start, lo, hi)


def judged(
    z: np.ndarray | None,
    F_at: Callable[[np.ndarray], np.ndarray],
    lb: np.ndarray,
    ub: np.ndarray,
    template: MCPResult,
    note: str = "",
) -> MCPResult:
    r"""``template`` with its verdict re-made on ``F_at`` (the user's :math:`F`) at ``z``.

    Residuals from :func:`~mcpkit.solving.residuals.compute_residuals`, pair states from
    :func:`~mcpkit.solving.residuals.classify_pairs`, status from :func:`~mcpkit.solving.result.judge` (every
    measure <= tol); the termination corrected by :func:`~mcpkit.solving.result.mcp_termination`
    (``CONVERGED`` the check does not confirm, or ``LOCALLY_INFEASIBLE`` without a certificate,
    becomes ``STALLED``), as in :class:`mcpkit.Solver`. The other fields (iterations, trace,
    route) are the template's.
    """
    tol = template.tol
    jp = judge_point(z, F_at, lb, ub, tol)
    zz, F, r, status, have = jp.z, jp.F, jp.residuals, jp.status, jp.have_point
    term = mcp_termination(template.termination, status, template.extra)
    who = f"by {template.method}/{template.backend} (solve_mcp, judged on the given F)"
    message = verdict_message(who, status, r.natural, r.complementarity, r.bounds, tol, term, jp.floor) + note
    return dataclasses.replace(
        template,
        z=zz,
        F=F,
        termination=term,
        solution_status=status,
        natural_residual=r.natural,
        complementarity_violation=r.complementarity,
        bound_violation=r.bounds,
        pair_states=classify_pairs(zz, F, lb, ub, tol) if have else [],
        message=message,
    )


class CallableFunctions:
    r""":math:`F` and :math:`J_F` of Python callables, in the form ``SemismoothNewton`` drives.

    The same attributes as :class:`~mcpkit.engines.newton_casadi.CasadiFunctions`: ``n``, ``n_params``
    (0), the CSC pattern ``colind``/``row`` (module docstring, *Jacobian structure*),
    ``jac_depends_on_z`` (``True``: ``J`` is called at every iterate), ``F(z)`` and ``J(z)``
    (the nonzeros in CSC order).

    Raises
    ------
    ShapeError
        ``F(z0)`` is not :math:`n` values, ``J(z0)`` not :math:`n \times n`, or a bad structure.
    """

    n_params = 0
    jac_depends_on_z = True
    jac_depends_on_p = False

    def __init__(
        self,
        F: Callable[[np.ndarray], Any],
        J: Callable[[np.ndarray], Any],
        z0: np.ndarray,
        structure: Any = None,
    ) -> None:
        n = self.n = int(z0.size)
        self._f, self._j = F, J
        self.F(z0)
        if structure is None:
            J0 = J(z0.copy())
            structure = J0 if sps.issparse(J0) else np.ones((n, n))
        elif isinstance(structure, tuple) and len(structure) == 2:
            rows, cols = (np.asarray(a, dtype=np.int64).reshape(-1) for a in structure)
            bad = rows.size != cols.size or bool(
                ((rows < 0) | (rows >= n)).any() or ((cols < 0) | (cols >= n)).any()
            )
            if bad:
                raise ShapeError(f"solve_mcp: jacobian_structure (rows, cols) must index a {n} x {n} matrix")
            structure = sps.coo_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n))
        pattern = sps.csc_matrix(
            structure if sps.issparse(structure) else np.asarray(structure) != 0, dtype=float
        )
        if pattern.shape != (n, n):
            raise ShapeError(f"solve_mcp: the Jacobian structure is {pattern.shape}, expected ({n}, {n})")
        pattern.data[:] = 1.0  # explicit zeros of a sparse J(z0) stay in the pattern
        pattern.sum_duplicates()
        self.colind, self.row = pattern.indptr.astype(np.int64), pattern.indices.astype(np.int64)
        self._keys = np.repeat(np.arange(n, dtype=np.int64), np.diff(self.colind)) * n + self.row  # CSC order
        self._full = pattern.nnz == n * n
        self._values = np.zeros(pattern.nnz)
        self.J(z0)  # checks the first evaluation against the structure

    def set_parameters(self, p: np.ndarray) -> None:
        """No parameters (the callables close over their data)."""

    def F(self, z: np.ndarray) -> np.ndarray:
        """:math:`F(z)` as a float vector of length :math:`n`."""
        v = np.asarray(self._f(z.copy()), dtype=float).reshape(-1)
        if v.size != self.n:
            raise ShapeError(f"solve_mcp: F(z) returned {v.size} values, expected {self.n}")
        return v

    def J(self, z: np.ndarray) -> np.ndarray:
        """Nonzeros of :math:`J(z)` in the CSC order of ``colind``/``row``."""
        Jz = self._j(z.copy())
        if np.shape(Jz) != (self.n, self.n):  # np.shape reads a sparse matrix's .shape
            raise ShapeError(f"solve_mcp: J(z) has shape {np.shape(Jz)}, expected ({self.n}, {self.n})")
        if not sps.issparse(Jz) and self._full:
            self._values[:] = np.asarray(Jz, dtype=float).ravel(order="F")
            return self._values
        A = sps.coo_matrix(Jz)  # a dense J on a sparse structure goes through COO too
        r, c, v = A.row.astype(np.int64), A.col.astype(np.int64), np.asarray(A.data, dtype=float)
        keys = c * self.n + r
        pos = np.minimum(np.searchsorted(self._keys, keys), max(self._keys.size - 1, 0))
        found = self._keys[pos] == keys if self._keys.size else np.zeros(keys.size, dtype=bool)
        if not found.all():
            if (v[~found] != 0).any():
                raise MCPInputError(
                    "solve_mcp: J(z) has nonzeros outside the Jacobian structure (taken from J(z0) or "
                    "jacobian_structure); pass jacobian_structure= with every entry that can be nonzero"
                )
            pos, v = pos[found], v[found]
        self._values[:] = 0.0
        np.add.at(self._values, pos, v)
        return self._values


def _casadi_F(F: ca.Function, p0: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    return lambda z: np.asarray(F(z, p0) if F.n_in() == 2 else F(z), dtype=float).reshape(-1)


def solve_mcp(
    F: Any,
    J: Any,
    lb: ArrayLike,
    ub: ArrayLike,
    z0: ArrayLike | None = None,
    **options: Any,
) -> MCPResult:
    r"""Solve :math:`l \le z \le u \perp F(z)` from callables, a CasADi function or an LCP (module docstring).

    Parameters
    ----------
    F
        A callable ``F(z) -> array``, a ``casadi.Function`` ``(z) -> F`` / ``(z, p) -> F``, or the
        matrix ``M`` of an LCP (dense array or ``scipy.sparse``).
    J
        A callable ``J(z) -> dense array or scipy.sparse matrix`` for callables; ``None`` for a
        CasADi function; the vector ``q`` for an LCP.
    lb, ub
        Bounds :math:`l \le u` (scalars broadcast; :math:`\pm\infty` allowed).
    z0
        Starting point (default: the projection of 0 onto the box).
    **options
        ``convergence_tolerance``, ``major_iteration_limit``, ``time_limit``, ``output``,
        ``method``, ``backend``, ``jacobian_structure``, ``p0`` (module docstring).

    Returns
    -------
    MCPResult
        ``solved`` when the natural residual of the given :math:`F` meets the tolerance.

    Raises
    ------
    UnknownOptionError
        An option name not in :data:`OPTIONS`, or an unknown method/backend name.
    MCPInputError
        Bad shapes, NaN, :math:`l > u`, a non-finite ``z0``, a method the form cannot use
        (``method="path"`` with callables), or inputs of none of the three forms.

    Examples
    --------
    The projection of :math:`a = (-1, 0.5, 2)` onto :math:`[0, 1]^3` as the box MCP
    :math:`0 \le z \le 1 \perp z - a`:

    >>> import numpy as np
    >>> a = np.array([-1.0, 0.5, 2.0])
    >>> res = solve_mcp(lambda z: z - a, lambda z: np.eye(3), np.zeros(3), np.ones(3), method="newton")
    >>> res.solved, np.round(res.z, 12).tolist()
    (True, [0.0, 0.5, 1.0])
    """
    opts, method, backend = _options(options)
    method_name = Method.parse(method).value
    if isinstance(F, ca.Function):
        if J is not None:
            raise MCPInputError("solve_mcp: CasADi computes the Jacobian of a casadi.Function; pass J=None")
        if "jacobian_structure" in options:
            raise MCPInputError(
                "solve_mcp: jacobian_structure is for Python callables (CasADi knows its sparsity)"
            )
        lo, hi, start = _box(lb, ub, z0, casadi_signature(F)[0])
        p0 = options.get("p0")
        why = undeclarable(F)
        if why is None:
            try:
                mcp = mcp_from_casadi(F, lo, hi, start, p0, name=F.name())
            except RecursionError:
                why = "it is nested too deeply for the declaration"
            else:
                return _solve_declaration(
                    mcp, _casadi_F(F, mcp.parameter_values), lo, hi, opts, method, backend
                )
        return _solve_undeclarable(F, why, lo, hi, start, p0, opts, method_name, backend)
    if "p0" in options:
        raise MCPInputError("solve_mcp: p0 is for a casadi.Function with a parameter input")
    if sps.issparse(F) or (not callable(F) and np.ndim(F) == 2):
        if "jacobian_structure" in options:
            raise MCPInputError("solve_mcp: jacobian_structure is for Python callables, not for an LCP")
        mcp = MCP.lcp(F, J, lb=lb, ub=ub)
        lo, hi, start = _box(lb, ub, z0, mcp.n)
        mcp.set_start(**{mcp.blocks[0].name: start})
        M, q = (F if sps.issparse(F) else np.asarray(F, dtype=float)), np.asarray(J, dtype=float).reshape(-1)
        return _solve_declaration(
            mcp, lambda z: np.asarray(M @ z).reshape(-1) + q, lo, hi, opts, method, backend
        )
    if not callable(F) or not callable(J):
        raise MCPInputError(
            "solve_mcp expects callables F(z) and J(z), a casadi.Function F (J=None) or an LCP "
            f"(M, q); got F of type {type(F).__name__} and J of type {type(J).__name__}"
        )
    if method_name == "path":
        raise MCPInputError(
            "solve_mcp: PATH runs in another process and cannot call Python functions; pass F as a "
            "casadi.Function (J=None) to use method='path', or use method='newton'"
        )
    if method_name not in ("auto", "newton"):
        raise MCPInputError(f"solve_mcp: Python callables run on method 'newton' only, not {method_name!r}")
    if backend != "auto":
        raise MCPInputError(
            "solve_mcp: Python callables are evaluated in this process; backend must be 'auto', "
            f"not {backend!r}"
        )
    lo, hi, start = _box(lb, ub, z0, _size(lb, ub, z0))
    return _solve_callables(F, J, lo, hi, start, opts, options.get("jacobian_structure"), method_name)


def _solve_undeclarable(
    F: ca.Function,
    why: str,
    lb: np.ndarray,
    ub: np.ndarray,
    z0: np.ndarray,
    p0: Any,
    opts: SolveOptions,
    method: str,
    backend: str,
) -> MCPResult:
    r"""Newton on the CasADi function itself: :math:`F(z; p_0)` and CasADi's :math:`\partial F/\partial z`.

    For an ``F`` the declaration cannot state (``why``: a rootfinder or external call, an
    operation without a sympy counterpart); only ``method="auto"``/``"newton"`` on backend
    ``"auto"``/``"casadi"`` can run it, any other choice raises :class:`~mcpkit.errors.MCPInputError`.
    """
    if method not in ("auto", "newton") or backend not in ("auto", "casadi"):
        raise MCPInputError(
            f"solve_mcp: F = {F.name()!r} cannot become a declaration ({why}), which method "
            f"{method!r} on backend {backend!r} needs; method='newton' solves it on the CasADi function "
            "itself"
        )
    n, m = casadi_signature(F)
    if m and p0 is None:
        raise MCPInputError(f"F = {F.name()!r} takes parameters p ({m} values): pass p0")
    p = as_float_vector(np.zeros(0) if p0 is None else p0, m, "p0", allow_inf=False)
    z = ca.MX.sym("z", n)
    out = ca.vec(F(z, p) if F.n_in() == 2 else F(z))
    f_fun = ca.Function("F", [z], [out])
    j_fun = ca.Function("J", [z], [ca.jacobian(out, z)])
    sp_j = j_fun.sparsity_out(0)
    structure = sps.csc_matrix(
        (np.ones(sp_j.nnz()), np.array(sp_j.row(), dtype=np.int64), np.array(sp_j.colind(), dtype=np.int64)),
        shape=(n, n),
    )
    note = f"; auto: F cannot become a declaration ({why}), so the semismooth Newton method ran on it"
    return _solve_callables(
        lambda v: np.asarray(f_fun(v), dtype=float).reshape(-1),
        lambda v: j_fun(v).sparse(),
        lb, ub, z0, opts, structure, method, note if method == "auto" else "",
    )  # fmt: skip


def header(n: int, route: str, opts: SolveOptions) -> str:
    r"""The line ``output=True`` prints before the iterations: what is solved (the box MCP
    :math:`l \le z \le u \perp F(z)` with :math:`n` unknowns), by which method, to which tolerance."""
    limit = "no time limit" if opts.time_limit is None else f"time limit {opts.time_limit:g} s"
    return (
        f"solve_mcp: box MCP l <= z <= u _|_ F(z), n = {n}; method {route}; "
        f"convergence_tolerance {opts.tol:g} (natural residual); {limit}"
    )


def _solve_declaration(
    mcp: MCP,
    F_user: Callable[[np.ndarray], np.ndarray],
    lb: np.ndarray,
    ub: np.ndarray,
    opts: SolveOptions,
    method: str,
    backend: str,
) -> MCPResult:
    from mcpkit.frontends.solve import Solver

    solver = Solver(mcp, backend=backend, method=method, options=opts)
    if opts.verbose:
        print(header(mcp.n, f"{solver.method.value}/{solver.backend.value}", opts), flush=True)
    res = solver.solve(warm_start=False)
    return judged(res.z if np.isfinite(res.z).all() else None, F_user, lb, ub, res)


def _solve_callables(
    F: Callable[[np.ndarray], Any],
    J: Callable[[np.ndarray], Any],
    lb: np.ndarray,
    ub: np.ndarray,
    z0: np.ndarray,
    opts: SolveOptions,
    structure: Any,
    method: str,
    note: str | None = None,
) -> MCPResult:
    from mcpkit.engines.newton import SemismoothNewton

    t0 = time.perf_counter()
    if opts.verbose:
        print(header(lb.size, "newton/python", opts), flush=True)
    funs = CallableFunctions(F, J, z0, structure)
    with display(opts.progress, "solve_mcp"):  # progress=True: a tqdm line, as mcpkit.Solver draws
        out = SemismoothNewton(funs, lb, ub, opts).solve(np.zeros(0), z0, warm=False)
    template = MCPResult(
        z=np.zeros(0),
        F=np.zeros(0),
        termination=out.termination,
        solution_status=SolutionStatus.NO_SOLUTION,
        tol=opts.tol,
        iterations=out.iterations,
        wall_time_s=time.perf_counter() - t0,
        backend="python",
        method="newton",
        trace=list(out.trace),
        raw_status=out.raw_status,
        natural_residual=np.inf,
        complementarity_violation=np.inf,
        bound_violation=np.inf,
        blocks={"z": slice(0, lb.size)},
        extra=dict(out.extra),
    )
    if note is None:
        note = "; auto: Python callables, so the semismooth Newton method ran" if method == "auto" else ""
    return judged(out.z, funs.F, lb, ub, template, note)
