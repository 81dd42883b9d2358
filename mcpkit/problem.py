r"""Backend-neutral declaration of a mixed complementarity problem (MCP).

An MCP in PATH's box form: given bounds :math:`l \le u` (entries may be :math:`\pm\infty`)
and a function :math:`F:\mathbb{R}^n\times\mathbb{R}^m\to\mathbb{R}^n`, find :math:`z` with
:math:`l \le z \le u` such that for every component :math:`i`

.. math::

    z_i = l_i &\Rightarrow F_i(z; p) \ge 0, \\
    l_i < z_i < u_i &\Rightarrow F_i(z; p) = 0, \\
    z_i = u_i &\Rightarrow F_i(z; p) \le 0.

Written compactly, :math:`l \le z \le u \perp F(z; p)`. The operand order is always
*variable first, function second* (PATH, GAMS ``F.z``); the pair ``(z_i, F_i)`` shares one index.

Variables and functions come in named blocks (``normal``, ``friction``, ...). Function
blocks are either sympy expressions (any smooth nonlinear function) or affine blocks
:math:`F_B = M z_{S} + q(p)` kept as arrays, so large LCPs never expand into sympy trees.
:math:`M` may be a dense NumPy array or any ``scipy.sparse`` matrix (kept as CSR, memory
:math:`O(\mathrm{nnz})`); a numeric :math:`q` is kept as a float array (:class:`NumericRows`).
Parameters :math:`p` are sympy symbols whose values can change between solves without
rebuilding anything (time stepping, parametric studies).

The declaration is pure data: it never calls a solver. Lowerings in :mod:`mcpkit.lowering`
turn it into CasADi, Pyomo or printed mathematics.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sps
import sympy as sp

from mcpkit.errors import BoundsError, MCPInputError, NonFiniteError, ShapeError

ArrayLike = Any  # numbers, sequences or numpy arrays; validated at the boundary


class SymbolRange(Sequence[sp.Symbol]):
    """The symbols ``name_0, ..., name_{size-1}`` (real), created on access.

    sympy caches symbols by name and assumptions, so item ``k`` is always the same symbol; a
    block of :math:`10^5` variables whose function is affine never creates its symbols (about
    3.5 s and 50 MB as a tuple). Iterating creates them all.
    """

    __slots__ = ("name", "size")

    def __init__(self, name: str, size: int) -> None:
        self.name, self.size = name, size

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):
            return tuple(self[j] for j in range(*k.indices(self.size)))
        j = int(k) + self.size if int(k) < 0 else int(k)
        if not 0 <= j < self.size:
            raise IndexError(f"symbol index {k} out of range for block {self.name!r} of size {self.size}")
        return sp.Symbol(f"{self.name}_{j}", real=True)

    def __iter__(self) -> Any:
        return (sp.Symbol(f"{self.name}_{j}", real=True) for j in range(self.size))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SymbolRange):
            return (self.name, self.size) == (other.name, other.size)
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash((SymbolRange, self.name, self.size))

    def __repr__(self) -> str:
        return f"SymbolRange({self.name!r}, {self.size})"


@dataclass(frozen=True)
class _Block:
    """A named block of symbols occupying ``[start, start + size)`` of a stacked vector."""

    name: str
    start: int
    size: int
    symbols: SymbolRange
    latex: str

    @property
    def slice(self) -> slice:
        """Slice of the block inside the stacked vector."""
        return slice(self.start, self.start + self.size)


@dataclass(frozen=True)
class VariableBlock(_Block):
    """A named block of MCP variables :math:`z_B` occupying ``z[start:start+size]``.

    ``name`` is unique within the MCP and also names the paired function block; ``symbols``
    are the sympy symbols of the components and ``latex`` is the printer's stem
    (``\\lambda_n`` for example).
    """


@dataclass(frozen=True)
class ParameterBlock(_Block):
    """A named block of parameters :math:`p_B` occupying ``p[start:start+size]``."""


@dataclass(frozen=True)
class SymbolicFunction:
    r"""Function block :math:`F_B(z; p)` given as sympy expressions, one per component."""

    exprs: tuple[sp.Expr, ...]


class NumericRows(Sequence[sp.Expr]):
    r"""Read-only sequence of sympy numbers backed by a float array: a numeric :math:`q` of an affine block.

    Item ``k`` is ``sympy.Float(values[k])``, created on access, so a numeric :math:`q` with
    :math:`10^5` rows costs one float array instead of :math:`10^5` sympy objects (about 1.5 s
    to create). ``values`` is the array itself (read-only).
    """

    __slots__ = ("values",)

    def __init__(self, values: np.ndarray) -> None:
        arr = np.array(values, dtype=float).reshape(-1)
        arr.flags.writeable = False
        self.values = arr

    def __len__(self) -> int:
        return int(self.values.size)

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):
            return NumericRows(self.values[k])
        return sp.Float(float(self.values[k]))

    def __iter__(self) -> Any:
        return (sp.Float(v) for v in self.values.tolist())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, NumericRows):
            return bool(np.array_equal(self.values, other.values))
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]  # equal to tuples, so not hashable like them

    def __repr__(self) -> str:
        return f"NumericRows({self.values!r})"


@dataclass(frozen=True)
class AffineFunction:
    r"""Function block :math:`F_B(z; p) = M\,z_S + q(p)` kept as arrays.

    ``over`` names the variable blocks whose stacked values form :math:`z_S` (all blocks, in
    declaration order, when the block was added). ``M`` is a dense ``numpy`` array or a
    ``scipy.sparse.csr_array`` in canonical form (sorted indices, no duplicates, no stored
    zeros). ``q`` holds one sympy expression per row so that it may depend on parameters;
    numeric rows are plain sympy numbers (a :class:`NumericRows` when ``q`` was given as a float
    array, see :attr:`q_values`).
    """

    M: np.ndarray | sps.csr_array
    q: tuple[sp.Expr, ...] | NumericRows
    over: tuple[str, ...]

    @property
    def is_sparse(self) -> bool:
        """``M`` is a SciPy sparse (CSR) matrix."""
        return sps.issparse(self.M)

    @property
    def nnz(self) -> int:
        """Number of nonzero entries of ``M`` (stored entries when sparse)."""
        return int(self.M.nnz) if sps.issparse(self.M) else int(np.count_nonzero(self.M))

    @property
    def q_values(self) -> np.ndarray | None:
        """``q`` as a float array when every row is a number (``None`` when ``q`` depends on parameters)."""
        if isinstance(self.q, NumericRows):
            return self.q.values
        if all(e.is_number for e in self.q):
            return np.array([float(e) for e in self.q], dtype=float)
        return None


FunctionBlock = SymbolicFunction | AffineFunction


def as_float_vector(value: ArrayLike, n: int, what: str, *, allow_inf: bool) -> np.ndarray:
    """Broadcast ``value`` to a float vector of length ``n`` and check it is finite (or ±inf)."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise MCPInputError(f"{what}: cannot convert {value!r} to numbers ({exc})") from exc
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    arr = arr.reshape(-1) if arr.ndim == 2 and 1 in arr.shape else arr
    if arr.shape != (n,):
        raise ShapeError(f"{what}: expected a scalar or {n} values, got shape {arr.shape}")
    if np.isnan(arr).any():
        raise NonFiniteError(f"{what}: contains NaN at positions {np.flatnonzero(np.isnan(arr))}")
    if not allow_inf and np.isinf(arr).any():
        raise NonFiniteError(f"{what}: contains inf at positions {np.flatnonzero(np.isinf(arr))}")
    return arr.copy()


def as_affine_matrix(M: Any, shape: tuple[int, int] | None, what: str) -> np.ndarray | sps.csr_array:
    r"""``M`` as a finite float matrix: a dense copy, or for ``scipy.sparse`` input a canonical CSR copy.

    A sparse ``M`` (any format) is never densified: it is converted to ``csr_array`` with
    duplicates summed, indices sorted and stored zeros dropped (memory :math:`O(\mathrm{nnz})`);
    finiteness is checked on the stored values. ``shape`` (if given) is the required shape.

    Raises
    ------
    MCPInputError
        ``M`` is not numeric (or complex).
    ShapeError
        ``M`` is not 2-D or not of shape ``shape``.
    NonFiniteError
        An entry is NaN or infinite.
    """
    if sps.issparse(M):
        if M.ndim != 2:
            raise ShapeError(f"{what}: M must be a 2-D matrix, got a {M.ndim}-D sparse array")
        if M.dtype.kind not in "biuf":
            raise MCPInputError(f"{what}: M must hold real numbers, got dtype {M.dtype}")
        if shape is not None and M.shape != shape:
            raise ShapeError(f"{what}: M must have shape {shape}, got {M.shape}")
        Mx = sps.csr_array(M, dtype=float, copy=True)
        Mx.sum_duplicates()
        bad = ~np.isfinite(Mx.data)
        if bad.any():
            k = np.flatnonzero(bad)[:5]
            rows = np.searchsorted(Mx.indptr, k, side="right") - 1
            where = [(int(r), int(c)) for r, c in zip(rows, Mx.indices[k], strict=True)]
            raise NonFiniteError(f"{what}: M contains NaN or inf (sparse entries at (row, col) {where})")
        Mx.eliminate_zeros()
        return Mx
    try:
        Md = np.asarray(M, dtype=float)
    except (TypeError, ValueError) as exc:
        raise MCPInputError(f"{what}: M is not numeric ({exc})") from exc
    if Md.ndim != 2 or (shape is not None and Md.shape != shape):
        want = f"shape {shape}" if shape is not None else "a 2-D matrix"
        raise ShapeError(f"{what}: M must have {want}, got {Md.shape}")
    if not np.isfinite(Md).all():
        raise NonFiniteError(f"{what}: M contains NaN or inf")
    return Md.copy()


def _check_name(name: str, taken: Iterable[str], kind: str) -> None:
    if not isinstance(name, str) or not name.isidentifier():
        raise MCPInputError(f"{kind} name must be a Python identifier, got {name!r}")
    if name in taken:
        raise MCPInputError(f"{kind} block {name!r} is already declared")


def _numeric_rows(q: Any, what: str) -> NumericRows | None:
    """``q`` as :class:`NumericRows` when it is a float NumPy array (1-D or a column/row), else ``None``."""
    if not (isinstance(q, np.ndarray) and q.dtype.kind == "f" and q.ndim >= 1):
        return None
    if q.ndim > 1 and sum(d > 1 for d in q.shape) > 1:
        return None  # not a vector: let the generic path report it row by row
    rows = NumericRows(q)
    bad = np.flatnonzero(~np.isfinite(rows.values))
    if bad.size:
        raise NonFiniteError(f"{what}[{int(bad[0])}] contains nan or infinity: {rows.values[bad[0]]}")
    return rows


def _sympify_rows(exprs: Any, what: str) -> tuple[sp.Expr, ...]:
    if isinstance(exprs, sp.MatrixBase):
        rows = list(exprs)
    elif isinstance(exprs, sp.Basic):
        rows = [exprs]
    elif isinstance(exprs, np.ndarray):
        rows = list(exprs.reshape(-1))
    else:
        try:
            rows = list(exprs)
        except TypeError:
            rows = [exprs]
    out = []
    for k, e in enumerate(rows):
        try:
            out.append(sp.sympify(e))
        except (sp.SympifyError, TypeError) as exc:
            raise MCPInputError(f"{what}[{k}]: not a symbolic expression: {e!r}") from exc
    for k, e in enumerate(out):
        if e.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
            raise NonFiniteError(f"{what}[{k}] contains nan or infinity: {e}")
    return tuple(out)


@dataclass
class MCP:
    r"""A mixed complementarity problem :math:`l \le z \le u \perp F(z; p)`.

    Build it block by block::

        mcp = MCP("contact")
        lam = mcp.add_variables("normal", 2, lb=0.0)          # 0 <= lam
        mcp.add_functions("normal", [lam[0] + lam[1] - 1, lam[1] - 0.5])

    or with the conveniences :meth:`lcp`, :meth:`ncp` and :meth:`add_equations`.

    Parameters
    ----------
    name
        A label used by printers and results.
    """

    name: str = "mcp"
    _vars: dict[str, VariableBlock] = field(default_factory=dict, repr=False)
    _params: dict[str, ParameterBlock] = field(default_factory=dict, repr=False)
    _funcs: dict[str, FunctionBlock] = field(default_factory=dict, repr=False)
    _lb: list[np.ndarray] = field(default_factory=list, repr=False)
    _ub: list[np.ndarray] = field(default_factory=list, repr=False)
    _start: list[np.ndarray] = field(default_factory=list, repr=False)
    _pvalues: list[np.ndarray] = field(default_factory=list, repr=False)
    _version: int = field(default=0, repr=False)

    # ------------------------------------------------------------------ declare
    def add_variables(
        self,
        name: str,
        size: int,
        lb: ArrayLike = 0.0,
        ub: ArrayLike = math.inf,
        start: ArrayLike | None = None,
        latex: str | None = None,
    ) -> sp.Matrix:
        r"""Declare a block of ``size`` variables with bounds :math:`l_B \le z_B \le u_B`.

        Parameters
        ----------
        name
            Block name; :meth:`add_functions` pairs a function block with it by this name.
        size
            Number of components (``>= 1``).
        lb, ub
            Scalar or per-component bounds; ``-inf``/``inf`` allowed. ``lb > ub``, NaN,
            ``lb = +inf`` or ``ub = -inf`` raise :class:`~mcpkit.errors.BoundsError`.
        start
            Starting point for solvers (default: the projection of 0 onto the box).
        latex
            LaTeX stem for printing (default: the name).

        Returns
        -------
        sympy.Matrix
            Column of the block's symbols, for use in function expressions.
        """
        return sp.Matrix(list(self._declare_variables(name, size, lb, ub, start, latex).symbols))

    def _declare_variables(
        self, name: str, size: int, lb: ArrayLike, ub: ArrayLike, start: ArrayLike | None, latex: str | None
    ) -> VariableBlock:
        """:meth:`add_variables` without building the sympy column (the new block)."""
        _check_name(name, self._vars, "variable")
        if name in self._params:
            raise MCPInputError(f"name {name!r} is already used by a parameter block")
        if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 1:
            raise ShapeError(f"variable block {name!r}: size must be a positive integer, got {size!r}")
        size = int(size)
        lo = as_float_vector(lb, size, f"variable block {name!r} lb", allow_inf=True)
        hi = as_float_vector(ub, size, f"variable block {name!r} ub", allow_inf=True)
        bad = np.flatnonzero(lo > hi)
        if bad.size:
            raise BoundsError(
                f"variable block {name!r}: lb > ub at components {bad.tolist()} "
                f"(lb={lo[bad].tolist()}, ub={hi[bad].tolist()})"
            )
        if np.any(lo == math.inf) or np.any(hi == -math.inf):
            raise BoundsError(f"variable block {name!r}: lb=+inf or ub=-inf leaves no feasible value")
        z0 = (
            np.clip(0.0, lo, hi)
            if start is None
            else as_float_vector(start, size, f"variable block {name!r} start", allow_inf=False)
        )
        block = VariableBlock(name, self.n, size, SymbolRange(name, size), latex or _default_latex(name))
        self._vars[name] = block
        self._lb.append(lo)
        self._ub.append(hi)
        self._start.append(np.clip(z0, lo, hi))
        self._version += 1
        return block

    def add_parameters(
        self, name: str, size: int, value: ArrayLike = 0.0, latex: str | None = None
    ) -> sp.Matrix:
        """Declare a block of parameters whose values may change between solves.

        Parameters
        ----------
        name
            Block name (a Python identifier, distinct from every variable block).
        size
            Number of components.
        value
            Current value(s), finite. Change them later with :meth:`set_parameters`.
        latex
            LaTeX stem for printing.

        Returns
        -------
        sympy.Matrix
            Column of the parameter symbols.
        """
        _check_name(name, self._params, "parameter")
        if name in self._vars:
            raise MCPInputError(f"name {name!r} is already used by a variable block")
        if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 1:
            raise ShapeError(f"parameter block {name!r}: size must be a positive integer")
        size = int(size)
        val = as_float_vector(value, size, f"parameter block {name!r} value", allow_inf=False)
        syms = SymbolRange(name, size)
        self._params[name] = ParameterBlock(name, self.n_params, size, syms, latex or _default_latex(name))
        self._pvalues.append(val)
        self._version += 1
        return sp.Matrix(list(syms))

    def add_functions(self, block: str, exprs: Any) -> None:
        r"""Pair the variable block ``block`` with the function block :math:`F_B(z; p)`.

        ``exprs`` is a sympy Matrix or a sequence of expressions (numbers allowed), one per
        component of the block, built from variable and parameter symbols of this MCP.
        """
        vb = self._require_unpaired(block)
        rows = _sympify_rows(exprs, f"F[{block}]")
        if len(rows) != vb.size:
            raise ShapeError(
                f"F[{block}] has {len(rows)} components but variable block {block!r} has {vb.size}"
            )
        known = set(self.variables) | set(self.parameters)
        for k, e in enumerate(rows):
            stray = {s for s in e.free_symbols if s not in known}
            if stray:
                raise MCPInputError(
                    f"F[{block}][{k}] uses symbols that are not variables or parameters of this "
                    f"MCP: {sorted(map(str, stray))}"
                )
        self._funcs[block] = SymbolicFunction(rows)
        self._version += 1

    def add_affine(
        self,
        block: str,
        M: ArrayLike,
        q: ArrayLike,
        over: Sequence[str] | None = None,
    ) -> None:
        r"""Pair ``block`` with the affine function :math:`F_B = M z_S + q(p)`.

        Parameters
        ----------
        block
            The variable block to pair.
        M
            Matrix of shape ``(size_B, sum of sizes of the blocks in over)``, finite: a dense
            array, or any ``scipy.sparse`` matrix or array, kept sparse (canonical CSR, see
            :func:`as_affine_matrix`) and lowered as one sparse matrix-vector product.
        q
            ``size_B`` numbers or sympy expressions in the parameters (finite). A float NumPy
            array is kept as one (:class:`NumericRows`), without a sympy object per row.
        over
            Names of the variable blocks stacked into :math:`z_S` (default: every block
            declared so far, in order).
        """
        vb = self._require_unpaired(block)
        names = tuple(self._vars) if over is None else tuple(over)
        for nm in names:
            if nm not in self._vars:
                raise MCPInputError(f"add_affine({block!r}): unknown variable block {nm!r} in over")
        ncols = sum(self._vars[nm].size for nm in names)
        Mx = as_affine_matrix(M, (vb.size, ncols), f"add_affine({block!r})")
        qrows = _numeric_rows(q, f"q[{block}]")
        if qrows is not None:
            if len(qrows) != vb.size:
                raise ShapeError(f"add_affine({block!r}): q has {len(qrows)} rows, expected {vb.size}")
            self._funcs[block] = AffineFunction(Mx, qrows, names)
            self._version += 1
            return
        qrows = _sympify_rows(q, f"q[{block}]")
        if len(qrows) == 1 and vb.size > 1 and not isinstance(q, (list, tuple, np.ndarray, sp.MatrixBase)):
            qrows = qrows * vb.size
        if len(qrows) != vb.size:
            raise ShapeError(f"add_affine({block!r}): q has {len(qrows)} rows, expected {vb.size}")
        pset = set(self.parameters)
        for k, e in enumerate(qrows):
            if e.free_symbols - pset:
                raise MCPInputError(
                    f"add_affine({block!r}): q[{k}] may depend on parameters only, "
                    f"found {sorted(map(str, e.free_symbols - pset))}"
                )
        self._funcs[block] = AffineFunction(Mx, qrows, names)
        self._version += 1

    def add_equations(
        self,
        name: str,
        size: int,
        equations: Callable[[sp.Matrix], Any] | Any,
        start: ArrayLike | None = None,
    ) -> sp.Matrix:
        r"""Declare free variables :math:`-\infty < z_B < \infty` paired with equations.

        This is the square-system building block :math:`F_B(z; p) = 0`.

        Parameters
        ----------
        name
            Name of the new free variable block.
        size
            Number of new variables (and equations).
        equations
            ``callable(z_B) -> expressions`` receiving the new block's symbols, or a
            sequence of ``size`` expressions in already declared symbols.
        start
            Starting values of the new variables.

        Returns
        -------
        sympy.Matrix
            The new block's symbols.
        """
        syms = self.add_variables(name, size, lb=-math.inf, ub=math.inf, start=start)
        try:
            self.add_functions(name, equations(syms) if callable(equations) else equations)
        except Exception:
            self._drop_last_block(name)
            raise
        return syms

    def _drop_last_block(self, name: str) -> None:
        """Undo the most recent :meth:`add_variables` (used when pairing fails)."""
        del self._vars[name]
        self._lb.pop()
        self._ub.pop()
        self._start.pop()
        self._version += 1

    def _require_unpaired(self, block: str) -> VariableBlock:
        if block not in self._vars:
            raise MCPInputError(f"no variable block named {block!r}; declared: {list(self._vars) or 'none'}")
        if block in self._funcs:
            raise MCPInputError(f"variable block {block!r} already has its function block")
        return self._vars[block]

    # ------------------------------------------------------------ conveniences
    @classmethod
    def from_casadi(
        cls,
        F: Any,
        lb: ArrayLike,
        ub: ArrayLike,
        z0: ArrayLike | None = None,
        p0: ArrayLike | None = None,
        name: str | None = None,
    ) -> MCP:
        r"""The MCP :math:`l \le z \le u \perp F(z; p)` of a ``casadi.Function`` ``(z[, p]) -> F``.

        An affine :math:`F` becomes one affine block, otherwise its SX graph is replayed into
        sympy expressions (see :func:`mcpkit.lowering.from_casadi.mcp_from_casadi`).
        """
        from mcpkit.lowering.from_casadi import mcp_from_casadi

        return mcp_from_casadi(F, lb, ub, z0, p0, name)

    @classmethod
    def lcp(
        cls,
        M: ArrayLike,
        q: ArrayLike,
        lb: ArrayLike = 0.0,
        ub: ArrayLike = math.inf,
        name: str = "lcp",
        block: str = "z",
    ) -> MCP:
        r"""The (box) linear complementarity problem :math:`l \le z \le u \perp Mz + q`.

        With the default bounds this is the LCP :math:`0 \le z \perp Mz + q \ge 0`.
        ``M`` must be square and finite; ``q`` finite with ``len(q) == M.shape[0]``. ``M`` may be
        dense or any ``scipy.sparse`` matrix (kept sparse: see :meth:`add_affine`).
        """
        sparse = sps.issparse(M)
        try:
            Mx = M if sparse else np.asarray(M, dtype=float)
            qx = np.asarray(q, dtype=float)
        except (TypeError, ValueError) as exc:
            raise MCPInputError(f"lcp: M and q must be numeric ({exc})") from exc
        if Mx.ndim != 2 or Mx.shape[0] != Mx.shape[1]:
            raise ShapeError(f"lcp: M must be a square matrix, got shape {Mx.shape}")
        if qx.reshape(-1).shape != (Mx.shape[0],):
            raise ShapeError(f"lcp: q must have {Mx.shape[0]} entries, got shape {qx.shape}")
        if not sparse and not np.isfinite(Mx).all():  # a sparse M is checked once, by add_affine
            raise NonFiniteError("lcp: M contains NaN or inf")
        if not np.isfinite(qx).all():
            raise NonFiniteError("lcp: q contains NaN or inf")
        mcp = cls(name)
        mcp._declare_variables(block, Mx.shape[0], lb, ub, None, None)
        mcp.add_affine(block, Mx, qx.reshape(-1))
        return mcp

    @classmethod
    def ncp(
        cls,
        size: int,
        F: Callable[[sp.Matrix], Any],
        name: str = "ncp",
        block: str = "z",
        start: ArrayLike | None = None,
    ) -> MCP:
        r"""The nonlinear complementarity problem :math:`0 \le z \perp F(z) \ge 0`.

        ``F`` is a callable that receives the column of symbols ``z`` and returns ``size``
        sympy expressions.
        """
        mcp = cls(name)
        z = mcp.add_variables(block, size, lb=0.0, start=start)
        mcp.add_functions(block, F(z))
        return mcp

    # -------------------------------------------------------------- properties
    @property
    def n(self) -> int:
        """Number of variables (= number of functions)."""
        return sum(b.size for b in self._vars.values())

    @property
    def n_params(self) -> int:
        """Number of scalar parameters."""
        return sum(b.size for b in self._params.values())

    @property
    def blocks(self) -> tuple[VariableBlock, ...]:
        """Variable blocks in declaration order."""
        return tuple(self._vars.values())

    @property
    def parameter_blocks(self) -> tuple[ParameterBlock, ...]:
        """Parameter blocks in declaration order."""
        return tuple(self._params.values())

    def function_block(self, name: str) -> FunctionBlock:
        """The function block paired with variable block ``name``."""
        if name not in self._funcs:
            raise MCPInputError(f"variable block {name!r} has no function block yet")
        return self._funcs[name]

    @property
    def variables(self) -> tuple[sp.Symbol, ...]:
        """All variable symbols, stacked in block order."""
        return tuple(s for b in self._vars.values() for s in b.symbols)

    @property
    def parameters(self) -> tuple[sp.Symbol, ...]:
        """All parameter symbols, stacked in block order."""
        return tuple(s for b in self._params.values() for s in b.symbols)

    @property
    def lb(self) -> np.ndarray:
        """Stacked lower bounds :math:`l`."""
        return np.concatenate(self._lb) if self._lb else np.zeros(0)

    @property
    def ub(self) -> np.ndarray:
        """Stacked upper bounds :math:`u`."""
        return np.concatenate(self._ub) if self._ub else np.zeros(0)

    @property
    def start(self) -> np.ndarray:
        """Stacked starting point (inside the box)."""
        return np.concatenate(self._start) if self._start else np.zeros(0)

    @property
    def parameter_values(self) -> np.ndarray:
        """Current stacked parameter values :math:`p`."""
        return np.concatenate(self._pvalues) if self._pvalues else np.zeros(0)

    @property
    def version(self) -> int:
        """Counter bumped by every structural change; lowerings cache on it."""
        return self._version

    def set_parameters(self, **values: ArrayLike) -> None:
        """Set current parameter values by block name, e.g. ``mcp.set_parameters(q=[1, 2])``.

        Only values change; the structure (and hence any built solver) stays valid.
        """
        names = list(self._params)
        for name, value in values.items():
            if name not in self._params:
                raise MCPInputError(f"unknown parameter block {name!r}; declared: {names or 'none'}")
            pb = self._params[name]
            self._pvalues[names.index(name)] = as_float_vector(
                value, pb.size, f"parameter block {name!r} value", allow_inf=False
            )

    def set_start(self, **values: ArrayLike) -> None:
        """Set starting values by variable block name (clipped into the box)."""
        names = list(self._vars)
        for name, value in values.items():
            if name not in self._vars:
                raise MCPInputError(f"unknown variable block {name!r}; declared: {names}")
            k = names.index(name)
            vb = self._vars[name]
            v = as_float_vector(value, vb.size, f"start of block {name!r}", allow_inf=False)
            self._start[k] = np.clip(v, self._lb[k], self._ub[k])

    def parameter_vector(self, p: ArrayLike | dict[str, ArrayLike] | None = None) -> np.ndarray:
        """Stacked parameter vector from ``None`` (current values), a dict by block or an array."""
        if p is None:
            return self.parameter_values
        if isinstance(p, np.ndarray) and p.shape == (self.n_params,) and np.isfinite(p).all():
            return p.astype(float, copy=True)
        if isinstance(p, dict):
            out = self.parameter_values
            for name, value in p.items():
                if name not in self._params:
                    raise MCPInputError(f"unknown parameter block {name!r}")
                pb = self._params[name]
                if (isinstance(value, (float, int)) and not isinstance(value, bool)) or (
                    isinstance(value, np.ndarray) and value.shape == (pb.size,) and value.dtype.kind in "fi"
                ):
                    out[pb.start : pb.start + pb.size] = value  # fast path; finiteness checked below
                else:
                    out[pb.slice] = as_float_vector(value, pb.size, f"parameter {name!r}", allow_inf=False)
            if not np.isfinite(out).all():
                for name, value in p.items():  # name the offending block
                    as_float_vector(value, self._params[name].size, f"parameter {name!r}", allow_inf=False)
            return out
        return as_float_vector(p, self.n_params, "parameter vector p", allow_inf=False)

    def block_of(self, i: int) -> tuple[str, int]:
        """Block name and local index of the stacked component ``i``."""
        for b in self._vars.values():
            if b.start <= i < b.start + b.size:
                return b.name, i - b.start
        raise IndexError(f"component {i} out of range (n = {self.n})")

    def split(self, z: ArrayLike) -> dict[str, np.ndarray]:
        """Split a stacked vector into a dict of per-block arrays."""
        zz = np.asarray(z, dtype=float).reshape(-1)
        if zz.shape != (self.n,):
            raise ShapeError(f"expected a vector of length {self.n}, got shape {zz.shape}")
        return {b.name: zz[b.slice].copy() for b in self._vars.values()}

    # -------------------------------------------------------------- validation
    def validate(self) -> None:
        """Check the declaration is complete: every variable block has its function block.

        Raises
        ------
        MCPInputError
            If the MCP is empty or a block is unpaired.
        """
        if not self._vars:
            raise MCPInputError(f"MCP {self.name!r} declares no variables")
        missing = [b for b in self._vars if b not in self._funcs]
        if missing:
            raise ShapeError(
                f"MCP {self.name!r}: variable blocks {missing} have no function block, so "
                f"len(F) = {self.n - sum(self._vars[b].size for b in missing)} != len(z) = {self.n}"
            )

    # ------------------------------------------------------------ conveniences
    def function_exprs(self) -> list[sp.Expr]:
        """All :math:`F_i` as sympy expressions (affine blocks expanded; small problems only)."""
        self.validate()
        out: list[sp.Expr] = []
        for b in self._vars.values():
            fb = self._funcs[b.name]
            if isinstance(fb, SymbolicFunction):
                out.extend(fb.exprs)
            else:
                zs = [s for nm in fb.over for s in self._vars[nm].symbols]
                M = fb.M
                for r in range(b.size):
                    if sps.issparse(M):
                        lo, hi = M.indptr[r], M.indptr[r + 1]
                        terms = zip(M.data[lo:hi].tolist(), (zs[j] for j in M.indices[lo:hi]), strict=True)
                    else:
                        terms = zip(M[r], zs, strict=True)
                    row = sum((sp.Float(c) * s for c, s in terms if c != 0.0), sp.Integer(0))
                    out.append(row + fb.q[r])
        return out

    def evaluate(self, z: ArrayLike, p: ArrayLike | dict[str, ArrayLike] | None = None) -> np.ndarray:
        """Numerical value of :math:`F(z; p)` (through the cached CasADi lowering)."""
        from mcpkit.lowering.casadi import lower_to_casadi

        zz = np.asarray(z, dtype=float).reshape(-1)
        if zz.shape != (self.n,):
            raise ShapeError(f"evaluate: z must have {self.n} entries, got shape {zz.shape}")
        lowered = lower_to_casadi(self)
        return np.asarray(lowered.F_fun(zz, self.parameter_vector(p))).reshape(-1)

    def to_latex(self, **kwargs: Any) -> str:
        """LaTeX rendering of the MCP; see :func:`mcpkit.lowering.printer.to_latex`."""
        from mcpkit.lowering.printer import to_latex

        return to_latex(self, **kwargs)

    def to_text(self, **kwargs: Any) -> str:
        """Plain-text rendering of the MCP; see :func:`mcpkit.lowering.printer.to_text`."""
        from mcpkit.lowering.printer import to_text

        return to_text(self, **kwargs)

    def explain(self) -> str:
        """A short prose explanation of every pair's complementarity case."""
        from mcpkit.lowering.printer import explain

        return explain(self)

    def __str__(self) -> str:
        kinds = ", ".join(f"{b.name}[{b.size}]" for b in self._vars.values())
        return f"MCP {self.name!r}: n={self.n}, params={self.n_params}, blocks: {kinds}"


_GREEK = {
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
    "lambda", "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi",
    "omega",
}  # fmt: skip


def _default_latex(name: str) -> str:
    head, _, tail = name.partition("_")
    stem = f"\\{head}" if head in _GREEK else (head if len(head) == 1 else f"\\mathrm{{{head}}}")
    return f"{stem}_{{\\mathrm{{{tail}}}}}" if tail else stem
