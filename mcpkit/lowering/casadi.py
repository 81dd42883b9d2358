r"""Lowering of an :class:`~mcpkit.problems.mcp.MCP` to CasADi, and on to the slack-form MPCC.

Two reversible steps, composable with :class:`~mcpkit.lowering.base.Chain`:

1. :class:`ToCasadi`: declaration -> :class:`CasadiMCP` (SX symbols ``z``, ``p``, expression
   ``F`` and the compiled ``F_fun``). The inverse is the identity on ``z``.
2. :class:`MCPToMPCC`: :class:`CasadiMCP` -> :class:`~mcpkit.mpcc.MPCC` in the slack form of
   :mod:`mcpkit.lowering.slack` with :math:`Z = z`: for each non-fixed pair

   .. math::

       F_i(z; p) - w_i + v_i = 0,\qquad (z_i - l_i) \perp w_i,\qquad (u_i - z_i) \perp v_i ,

   a slack :math:`w_i \ge 0` only for finite :math:`l_i`, :math:`v_i \ge 0` only for finite
   :math:`u_i`; :math:`x = (z, w, v)` (the ``"blocked"`` layout). The bounds :math:`l \le z \le u`
   are variable bounds, so a fixed pair gets no condition. The inverse keeps the first
   :math:`n` entries of :math:`x`; the inverse data is the
   :class:`~mcpkit.lowering.slack.SlackForm` (alias :data:`SlackMap`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import reduce
from typing import Any

import casadi as ca
import numpy as np
import scipy.sparse as sps
import sympy as sp

from mcpkit.errors import MCPInputError
from mcpkit.lowering.base import Lowering
from mcpkit.lowering.slack import CasadiBuilder, SlackForm
from mcpkit.problems import blocks as bx
from mcpkit.problems.functions import AffineFunction, BlockFunction, SymbolicFunction
from mcpkit.problems.hooks import Hook, implementation, provide
from mcpkit.problems.mpcc import MPCC
from mcpkit.problems.names import casadi_name
from mcpkit.problems.variables import MatrixParameterBlock
from mcpkit.problems.views import MCPView

#: sympy function name -> CasADi implementation, used when lambdifying into SX.
CASADI_FUNCTIONS: dict[str, object] = {
    "sin": ca.sin, "cos": ca.cos, "tan": ca.tan, "asin": ca.asin, "acos": ca.acos,
    "atan": ca.atan, "atan2": ca.atan2, "sinh": ca.sinh, "cosh": ca.cosh, "tanh": ca.tanh,
    "exp": ca.exp, "log": ca.log, "sqrt": ca.sqrt, "Abs": ca.fabs, "sign": ca.sign,
    "Max": lambda *a: reduce(ca.fmax, a), "Min": lambda *a: reduce(ca.fmin, a),
    "floor": ca.floor, "ceiling": ca.ceil, "pi": np.pi, "E": np.e,
}  # fmt: skip


_CASADI_SIGN = sp.Function("casadi_sign")
CASADI_FUNCTIONS["casadi_sign"] = ca.sign
# Piecewise and the logic operations: sympy prints them as Python's ``if``/``and``/``or``/``not``,
# which ask a symbolic SX for its truth value; they become calls of these functions instead
_CASADI_PIECEWISE = sp.Function("casadi_piecewise")
_CASADI_LOGIC = {
    sp.And: sp.Function("casadi_and"),
    sp.Or: sp.Function("casadi_or"),
    sp.Not: sp.Function("casadi_not"),
}
CASADI_FUNCTIONS["casadi_and"] = lambda *a: reduce(ca.logic_and, a)
CASADI_FUNCTIONS["casadi_or"] = lambda *a: reduce(ca.logic_or, a)
CASADI_FUNCTIONS["casadi_not"] = ca.logic_not


def _casadi_piecewise(*args: Any) -> Any:
    """``Piecewise((e1, c1), ..., (en, cn))`` as nested ``if_else`` (``args = c1, e1, ..., cn, en``).

    No condition holding gives NaN, as sympy's Piecewise is then undefined."""
    out: Any = math.nan
    for k in range(len(args) - 2, -1, -2):
        cond, expr = args[k], args[k + 1]
        out = expr if cond is True else ca.if_else(cond, expr, out)
    return out


CASADI_FUNCTIONS["casadi_piecewise"] = _casadi_piecewise


def _as_calls(e: sp.Basic) -> sp.Basic:
    """``Piecewise``, ``And``, ``Or``, ``Not`` and ``sign`` in ``e`` as calls of the CasADi functions."""
    e = e.replace(sp.sign, _CASADI_SIGN)
    if not e.has(sp.Piecewise, sp.And, sp.Or, sp.Not):
        return e
    # Piecewise first: its conditions must stay Booleans until they are plain call arguments
    e = e.replace(
        lambda x: isinstance(x, sp.Piecewise),
        lambda x: _CASADI_PIECEWISE(*[a for pair in x.args for a in (pair.cond, pair.expr)]),
    )
    for logic, call in _CASADI_LOGIC.items():
        e = e.replace(lambda x, t=logic: isinstance(x, t), lambda x, f=call: f(*x.args))
    return e


def sparse_dm(M: sps.sparray | sps.spmatrix) -> ca.DM:
    r"""A SciPy sparse matrix as one sparse ``casadi.DM`` (same pattern, no dense step).

    Built from the CSC arrays: ``casadi.Sparsity(nrow, ncol, colind, row)`` and the values in
    column-major order; memory :math:`O(\mathrm{nnz})`.
    """
    C = sps.csc_array(M)
    C.sort_indices()
    nrow, ncol = (int(d) for d in C.shape)
    pattern = ca.Sparsity(nrow, ncol, C.indptr.tolist(), C.indices.tolist())
    return ca.DM(pattern, np.asarray(C.data, dtype=float))


def sympy_to_casadi(exprs: list[sp.Expr], symbols: list[sp.Symbol], values: list[ca.SX]) -> list[ca.SX]:
    """Evaluate sympy expressions on CasADi SX values substituted for ``symbols``."""
    if not exprs:
        return []
    # sympy's printer writes sign(a) as "0.0 if a == 0 else copysign(1, a)" whatever the module
    # says, which asks a symbolic SX for its truth value: hand it over as a plain function call
    exprs = [_as_calls(e) if isinstance(e, sp.Basic) else e for e in exprs]
    fn = sp.lambdify([symbols], exprs, modules=[CASADI_FUNCTIONS, "math"], cse=True)
    out = fn(values)
    return [ca.SX(o) for o in out]


class CasadiBlocks(bx.OperatorArithmetic):
    r"""Block expressions on CasADi ``SX`` or ``MX`` symbols ``z`` and ``p`` (matrix operations).

    A matrix parameter is one matrix built from its flat storage in ``p`` (dense: a reshape of
    the row-major entries; sparse: its pattern filled with the stored entries), a matrix
    constant one ``DM`` (sparse when given sparse); each is applied with one ``mtimes`` per use,
    never entry by entry.
    """

    def __init__(self, problem: MCPView, z: ca.SX | ca.MX, p: ca.SX | ca.MX) -> None:
        self.T = type(z)
        self.z, self.p = z, p
        self._mats: dict[tuple[int, bool], tuple[object, object]] = {}

    def var(self, block: object) -> object:
        return self.z[block.slice]  # type: ignore[attr-defined]

    def param(self, block: object) -> object:
        return self.p[block.slice]  # type: ignore[attr-defined]

    def const(self, values: np.ndarray) -> object:
        return float(values[0]) if values.size == 1 else ca.DM(values)

    def _matrix(self, leaf: bx.Param | bx.Const) -> object:
        if isinstance(leaf, bx.Const):
            return sparse_dm(leaf.value) if sps.issparse(leaf.value) else ca.DM(np.asarray(leaf.value))
        b = leaf.block
        assert isinstance(b, MatrixParameterBlock)
        m, n = b.shape
        flat = self.p[b.slice]
        if b.pattern is None:
            return ca.reshape(flat, n, m).T  # row-major storage; CasADi reshapes column-major
        colptr, rows, pos = bx.leaf_csc(leaf)  # CSC structure; pos: each entry's place in the storage
        pattern = ca.Sparsity(m, n, colptr.tolist(), rows.tolist())
        return self.T(pattern, flat[pos.tolist()])

    def apply_leaf(self, leaf: bx.Param | bx.Const, y: object, transpose: bool) -> object:
        key = (id(leaf), transpose)
        if key not in self._mats:
            base = self._mats.get((id(leaf), False))
            A = base[0] if base is not None else self._matrix(leaf)
            self._mats[(id(leaf), False)] = (A, leaf)
            if transpose:
                self._mats[key] = (A.T, leaf)  # type: ignore[attr-defined]
        return ca.mtimes(self._mats[key][0], y)

    def func(self, name: str, a: object) -> object:
        return CASADI_FUNCTIONS[name](a)  # type: ignore[operator]

    def total(self, a: object) -> object:
        return ca.sum1(a)


def block_function_nnz(problem: MCPView) -> int:
    """Stored entries of the matrix leaves of every block function (sizes the SX/MX choice)."""
    return sum(
        fb.nnz for b in problem.blocks if isinstance(fb := problem.function_block(b.name), BlockFunction)
    )


@dataclass
class CasadiMCP:
    r"""The CasADi image of an MCP: :math:`l \le z \le u \perp F(z; p)` with SX symbols."""

    z: ca.SX
    p: ca.SX
    F: ca.SX
    lb: np.ndarray
    ub: np.ndarray
    z0: np.ndarray
    p0: np.ndarray
    blocks: dict[str, slice]
    F_fun: ca.Function
    name: str

    @classmethod
    def of(cls, problem: MCPView, z: ca.SX, p: ca.SX, F: ca.SX, name: str | None = None) -> CasadiMCP:
        """The image of ``problem`` with symbols ``z``, ``p`` and ``F = F(z; p)``; the rest from the MCP."""
        name = problem.name if name is None else name
        return cls(
            z=z, p=p, F=F, lb=problem.lb, ub=problem.ub, z0=problem.start, p0=problem.parameter_values,
            blocks={b.name: b.slice for b in problem.blocks},
            F_fun=ca.Function(casadi_name(f"{name}_F"), [z, p], [F], ["z", "p"], ["F"]), name=name,
        )  # fmt: skip

    @property
    def n(self) -> int:
        """Number of variables."""
        return int(self.z.numel())

    def jacobian(self) -> ca.SX | ca.MX:
        r""":math:`\partial F/\partial z` (sparse), differentiated one block of rows at a time.

        Per block, CasADi picks forward or reverse mode for that block alone: a few dense rows
        (the equations of motion of a body with many contacts) take one reverse sweep each and
        the many sparse contact rows a few forward sweeps, where one whole-:math:`F` pass would
        colour every column (or row) separately, :math:`O(n\,\mathrm{nnz})` (for a rigid body
        with 500 contacts and 8 directions: 0.13 s instead of 5 s with MX, 86 s with SX).
        """
        blocks = sorted(self.blocks.values(), key=lambda sl: sl.start)
        if len(blocks) <= 1:
            return ca.jacobian(self.F, self.z)
        return ca.vertcat(*[ca.jacobian(self.F[sl], self.z) for sl in blocks])

    def jacobian_function(self) -> ca.Function:
        r"""``(z, p) -> \partial F / \partial z`` (sparse; see :meth:`jacobian`)."""
        return ca.Function(casadi_name(f"{self.name}_J"), [self.z, self.p], [self.jacobian()])


class ToCasadi(Lowering):
    r"""Declaration -> :class:`CasadiMCP`. Reversible: the inverse is the identity on ``z``.

    An affine block :math:`F_B = M z_S + q(p)` is one matrix-vector product with a constant
    ``DM``: dense for a NumPy ``M``, sparse (:func:`sparse_dm`, same pattern) for a SciPy
    sparse ``M``, never expanded entry by entry. A numeric :math:`q` is one constant ``DM``.
    A block function (:class:`~mcpkit.problems.functions.BlockFunction`) is evaluated on ``z`` and ``p``
    directly with matrix operations (:class:`CasadiBlocks`): one ``mtimes`` per matrix leaf. A
    *scalar* block function (every leaf a scalar, no matrix: nothing to multiply blockwise) is
    lowered in SX mode from its sympy rows like a symbolic block, so a scalar model gives the
    same CasADi graph (and the same rounding) whether it is declared entrywise or by blocks.

    Parameters
    ----------
    symbolic
        ``"SX"`` (scalar graphs: fastest evaluation for small and sparse problems), ``"MX"``
        (matrix graphs: affine blocks stay one matrix product, so building derivatives
        of a 200x200 LCP takes milliseconds instead of seconds), or ``"auto"``: MX when the
        affine blocks hold more than :attr:`dense_limit` entries, counting every entry of a
        dense ``M``, the stored nonzeros of a sparse one and the stored entries of the matrix
        parameters and constants of block functions. For a 2-D Laplacian with
        :math:`n = 10^5` (:math:`5 \cdot 10^5` nonzeros) the MX graph builds ``F`` and its
        Jacobian in about 1 s; the SX graph takes about 5 s.
    """

    dense_limit = 4000

    def __init__(self, symbolic: str = "auto") -> None:
        if symbolic not in ("auto", "SX", "MX"):
            raise MCPInputError(f"ToCasadi: symbolic must be 'auto', 'SX' or 'MX', got {symbolic!r}")
        self.symbolic = symbolic

    def apply(self, problem: MCPView) -> tuple[CasadiMCP, None]:
        problem.validate()
        entries = sum(
            (fb.M.nnz if fb.is_sparse else fb.M.size)
            for b in problem.blocks
            if isinstance(fb := problem.function_block(b.name), AffineFunction)
        ) + block_function_nnz(problem)
        use_mx = self.symbolic == "MX" or (self.symbolic == "auto" and entries > self.dense_limit)
        T = ca.MX if use_mx else ca.SX
        z = T.sym("z", problem.n)
        p = T.sym("p", problem.n_params)
        # symbolic blocks are always built as SX scalar graphs, then called on z, p
        zs = ca.SX.sym("z", problem.n)
        ps = ca.SX.sym("p", problem.n_params)
        pl: list[ca.SX] = []  # the entries of ps, built only for sympy rows (O(n_params) Python)

        def p_entries() -> list[ca.SX]:
            if len(pl) != problem.n_params:
                pl[:] = [ps[i] for i in range(problem.n_params)]
            return pl

        slices = {b.name: b.slice for b in problem.blocks}
        syms: list[sp.Symbol] | None = None  # every symbol, built only for symbolic blocks
        vals: list[ca.SX] = []
        parts: list[object] = []
        blocks = bx.Evaluator(CasadiBlocks(problem, z, p))  # shared: a definition is built once
        for b in problem.blocks:
            fb = problem.function_block(b.name)
            scalar_rows = isinstance(fb, BlockFunction) and not use_mx and fb.is_scalar
            if isinstance(fb, BlockFunction) and not scalar_rows:
                val = blocks.value(fb.expr)
                parts.append(T(ca.DM(val)) if isinstance(val, (float, ca.DM)) else val)
            elif isinstance(fb, SymbolicFunction) or scalar_rows:
                if syms is None:
                    syms = list(problem.variables) + list(problem.parameters)
                    vals = [zs[i] for i in range(problem.n)] + p_entries()
                exprs = fb.exprs if isinstance(fb, SymbolicFunction) else fb.expand()  # type: ignore[union-attr]
                rows = ca.vertcat(*sympy_to_casadi(list(exprs), syms, vals))
                parts.append(
                    ca.Function(f"F_{b.name}", [zs, ps], [rows])(z, p)
                    if use_mx
                    else ca.substitute([rows], [zs, ps], [z, p])[0]
                )
            elif isinstance(fb, AffineFunction):
                zsub = ca.vertcat(*[z[slices[nm]] for nm in fb.over])
                qnum = fb.q_values
                if qnum is not None:
                    qv = ca.DM(qnum)
                else:
                    q_sx = ca.vertcat(*sympy_to_casadi(list(fb.q), list(problem.parameters), p_entries()))
                    qv = (
                        ca.Function(f"q_{b.name}", [ps], [q_sx])(p)
                        if use_mx
                        else ca.substitute([q_sx], [ps], [p])[0]
                    )
                A = sparse_dm(fb.M) if fb.is_sparse else ca.DM(fb.M)
                parts.append(ca.mtimes(A, zsub) + qv)
            else:  # pragma: no cover - closed union
                raise TypeError(f"unknown function block type {type(fb).__name__}")
        lowered = CasadiMCP.of(problem, z, p, ca.vertcat(*parts))
        return lowered, None

    def invert(self, solution: np.ndarray, inverse_data: None) -> np.ndarray:
        return solution


def lower_to_casadi(problem: MCPView) -> CasadiMCP:
    """Cached :class:`ToCasadi` lowering (rebuilt only when the declaration changes)."""
    cache = problem.__dict__.get("_casadi_cache")
    if cache is not None and cache[0] == problem.version:
        lowered: CasadiMCP = cache[1]
        lowered.z0 = problem.start
        lowered.p0 = problem.parameter_values
        return lowered
    lowered, _ = ToCasadi().apply(problem)
    problem.__dict__["_casadi_cache"] = (problem.version, lowered)
    return lowered


SlackMap = SlackForm
"""Inverse data of :class:`MCPToMPCC`: the :class:`~mcpkit.lowering.slack.SlackForm` of the bounds."""


def _slack_blocks(problem: CasadiMCP, form: SlackForm) -> object:
    """The slack form's block names for printing (built when the MPCC is first printed)."""
    return implementation(Hook.SLACK_FORM_BLOCKS)(problem, form)


class MCPToMPCC(Lowering):
    """:class:`CasadiMCP` -> slack-form :class:`~mcpkit.mpcc.MPCC` (see the module docstring)."""

    def apply(self, problem: CasadiMCP) -> tuple[MPCC, SlackMap]:
        form = SlackForm.from_bounds(problem.lb, problem.ub)
        T = type(problem.z)
        out = form.emit(CasadiBuilder(T), problem.z, problem.F)
        G, H = (out.G, out.H) if form.n_slacks else (T(0, 1), T(0, 1))
        F0 = np.asarray(problem.F_fun(problem.z0, problem.p0), dtype=float).reshape(-1)
        mpcc = MPCC(
            x=ca.vertcat(problem.z, out.slacks),
            p=problem.p,
            f=T(0.0),
            g=out.rows,
            lbg=np.zeros(form.rows.size),
            ubg=np.zeros(form.rows.size),
            lbx=np.concatenate([problem.lb, np.zeros(form.n_slacks)]),
            ubx=np.concatenate([problem.ub, np.full(form.n_slacks, np.inf)]),
            G=G,
            H=H,
            x0=form.lift(problem.z0, np.where(np.isfinite(F0), F0, 0.0)),
            p0=problem.p0,
            G_implied_by_bounds=True,
            H_implied_by_bounds=True,
            name=problem.name,
            blocks=lambda: _slack_blocks(problem, form),  # block names for printing, built when printed
        )
        return mpcc, form

    def invert(self, solution: np.ndarray, inverse_data: SlackMap) -> np.ndarray:
        return np.asarray(solution, dtype=float).reshape(-1)[: inverse_data.n]

    @staticmethod
    def lift(z: np.ndarray, F: np.ndarray, data: SlackMap) -> np.ndarray:
        """A point ``x = (z, w, v)`` consistent with ``z`` and ``F = F(z)`` (for warm starts)."""
        return data.lift(z, F)


provide(Hook.LOWER_TO_CASADI, lower_to_casadi)
