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
:math:`O(\mathrm{nnz})`); a numeric :math:`q` is kept as a float array
(:class:`~mcpkit.problems.functions.NumericRows`). Parameters :math:`p` are sympy symbols whose
values can change between solves without rebuilding anything (time stepping, parametric studies).

A function block may also be a *block expression*
(:class:`~mcpkit.problems.functions.BlockFunction`, :mod:`mcpkit.problems.blocks`) written over whole
blocks, e.g. ``Wn.T @ v + psi_h`` with a matrix parameter ``Wn`` (:meth:`MCP.add_parameter_block`,
stored flattened in :math:`p`: see :class:`~mcpkit.problems.variables.MatrixParameterBlock`). It is
printed as written, lowered with one product per matrix, and expanded to sympy rows
(:meth:`~mcpkit.problems.functions.BlockFunction.expand`) for consumers that read rows.

The pieces live in modules of their own (:mod:`~mcpkit.problems.variables`,
:mod:`~mcpkit.problems.functions`, :mod:`~mcpkit.problems.arrays`), so the printers and lowerings
that the conveniences of :class:`MCP` call (:meth:`MCP.to_latex`, :meth:`MCP.evaluate`) depend on
them and on the read side :class:`~mcpkit.problems.views.MCPView`, never on this module.

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
from mcpkit.problems import blocks as bx
from mcpkit.problems.arrays import ArrayLike, as_affine_matrix, as_float_vector, refuse_text
from mcpkit.problems.bounds import bound_kinds as classify_bounds
from mcpkit.problems.floor import rounding_floor_function
from mcpkit.problems.functions import (
    AffineFunction,
    BlockFunction,
    FunctionBlock,
    SymbolicFunction,
    numeric_rows,
    sympify_rows,
)
from mcpkit.problems.hooks import Hook, implementation
from mcpkit.problems.variables import (
    MatrixParameterBlock,
    ParameterBlock,
    SymbolRange,
    VariableBlock,
    default_latex,
)


def _block_value(pb: ParameterBlock, value: Any, what: str) -> np.ndarray:
    """A parameter block's value as its flat storage (matrix blocks accept ``(m, n)`` and sparse values)."""
    if isinstance(pb, MatrixParameterBlock):
        return pb.flat_value(value, what)
    return as_float_vector(value, pb.size, what, allow_inf=False)


def _check_name(name: str, taken: Iterable[str], kind: str) -> None:
    if not isinstance(name, str) or not name.isidentifier():
        raise MCPInputError(f"{kind} name must be a Python identifier, got {name!r}")
    if name in taken:
        raise MCPInputError(f"{kind} block {name!r} is already declared")


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
    _dims: dict[str, int] = field(default_factory=dict, repr=False)
    _refs: dict[str, bx.Expr] = field(default_factory=dict, repr=False)
    _n_params_cache: tuple[int, int] | None = field(default=None, repr=False, compare=False)
    _slices: dict[str, slice] = field(default_factory=dict, repr=False, compare=False)
    _kinds: list[np.ndarray] = field(default_factory=list, repr=False, compare=False)
    _affine_cache: tuple[int, AffineMap | None] | None = field(default=None, repr=False, compare=False)
    _floor_cache: tuple[int, Any] | None = field(default=None, repr=False, compare=False)

    # ------------------------------------------------------------------ declare
    def add_variables(
        self,
        name: str,
        size: int,
        lb: ArrayLike = 0.0,
        ub: ArrayLike = math.inf,
        start: ArrayLike | None = None,
        latex: str | None = None,
        dim: str | None = None,
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
        dim
            Printed size label (``"n_c"``: the block prints as :math:`\in \mathbb{R}^{n_c}`); one
            label names one size throughout the MCP.

        Returns
        -------
        sympy.Matrix
            Column of the block's symbols, for use in function expressions.
        """
        return sp.Matrix(list(self._declare_variables(name, size, lb, ub, start, latex, dim).symbols))

    def add_variable_block(
        self,
        name: str,
        size: int,
        lb: ArrayLike = 0.0,
        ub: ArrayLike = math.inf,
        start: ArrayLike | None = None,
        latex: str | None = None,
        dim: str | None = None,
    ) -> bx.Var:
        r"""Declare a variable block :math:`l_B \le z_B \le u_B` and return it as a block expression.

        The same as :meth:`add_variables` (see there for the arguments), but the result is the
        :class:`~mcpkit.problems.blocks.Var` of the whole block, for block-level functions
        (``m.add_functions("lam_n", Wn.T @ v + psi_h)``).
        """
        self._declare_variables(name, size, lb, ub, start, latex, dim)
        return self.ref(name)  # type: ignore[return-value]

    def _declare_variables(
        self,
        name: str,
        size: int,
        lb: ArrayLike,
        ub: ArrayLike,
        start: ArrayLike | None,
        latex: str | None,
        dim: str | None = None,
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
        self._check_dim(dim, size, f"variable block {name!r}")
        block = VariableBlock(name, self.n, size, SymbolRange(name, size), latex or default_latex(name), dim)
        self._vars[name] = block
        self._slices[name] = slice(block.start, block.start + size)
        self._kinds.append(classify_bounds(lo, hi))
        self._lb.append(lo)
        self._ub.append(hi)
        self._start.append(np.clip(z0, lo, hi))
        self._version += 1
        return block

    def add_parameters(
        self, name: str, size: int, value: ArrayLike = 0.0, latex: str | None = None, dim: str | None = None
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
        dim
            Printed size label (see :meth:`add_variables`).

        Returns
        -------
        sympy.Matrix
            Column of the parameter symbols.
        """
        return sp.Matrix(list(self._declare_parameters(name, size, value, latex, dim).symbols))

    def _declare_parameters(
        self, name: str, size: int, value: ArrayLike, latex: str | None, dim: str | None
    ) -> ParameterBlock:
        """:meth:`add_parameters` without building the sympy column (the new block)."""
        self._check_parameter_name(name)
        if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 1:
            raise ShapeError(f"parameter block {name!r}: size must be a positive integer")
        size = int(size)
        val = as_float_vector(value, size, f"parameter block {name!r} value", allow_inf=False)
        self._check_dim(dim, size, f"parameter block {name!r}")
        block = ParameterBlock(
            name, self.n_params, size, SymbolRange(name, size), latex or default_latex(name), dim
        )
        self._params[name] = block
        self._pvalues.append(val)
        self._version += 1
        return block

    def add_parameter_block(
        self,
        name: str,
        shape: int | tuple[int, int],
        value: Any = 0.0,
        latex: str | None = None,
        dim: str | tuple[str | None, str | None] | None = None,
        pattern: Any = None,
    ) -> bx.Param:
        r"""Declare a vector or matrix parameter and return it as a block expression.

        Parameters
        ----------
        name
            Block name (a Python identifier, distinct from every other block).
        shape
            ``size`` for a vector :math:`p_B \in \mathbb{R}^{size}`, ``(m, n)`` for a matrix
            :math:`A \in \mathbb{R}^{m \times n}` (a :class:`MatrixParameterBlock`, stored
            flattened: row-major when dense, the pattern's entries in CSR order when sparse).
        value
            Current value: a scalar (broadcast), the flat vector, or for a matrix an ``(m, n)``
            array or ``scipy.sparse`` matrix. Change it between solves like any parameter.
        latex
            LaTeX stem (``"W_n"``).
        dim
            Printed size label(s): ``"n_c"`` for a vector, ``("n_v", "n_c")`` for a matrix.
        pattern
            Fixed sparsity of a matrix parameter (any matrix whose nonzeros mark the structure);
            ``None``: dense, unless ``value`` is a ``scipy.sparse`` matrix, whose pattern is then
            taken. Memory and lowering cost :math:`O(\mathrm{nnz})`.

        Returns
        -------
        mcpkit.problems.blocks.Param
            The parameter as a block expression (``Wn.T @ v``).
        """
        if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
            if pattern is not None:
                raise MCPInputError(f"parameter block {name!r}: a pattern needs a matrix shape (m, n)")
            if dim is not None and not isinstance(dim, str):
                raise MCPInputError(f"parameter block {name!r}: dim of a vector is one label, got {dim!r}")
            self._declare_parameters(name, int(shape), value, latex, dim)
            return self.ref(name)  # type: ignore[return-value]
        try:
            m, n = (int(d) for d in shape)  # type: ignore[union-attr]
        except (TypeError, ValueError) as exc:
            raise ShapeError(
                f"parameter block {name!r}: shape must be a size or (m, n), got {shape!r}"
            ) from exc
        if m < 1 or n < 1:
            raise ShapeError(f"parameter block {name!r}: shape must be positive, got {shape!r}")
        self._check_parameter_name(name)
        dims: tuple[str | None, str | None] = (None, None)
        if dim is not None:
            if isinstance(dim, str) or len(dim) != 2:
                raise MCPInputError(f"parameter block {name!r}: dim of a matrix is (rows, cols), got {dim!r}")
            dims = (dim[0], dim[1])
        if pattern is None and sps.issparse(value):
            pattern = value
        pat: sps.csr_array | None = None
        if pattern is not None:
            P = sps.csr_array(
                pattern if sps.issparse(pattern) else np.asarray(pattern, dtype=float), dtype=float
            )
            if P.shape != (m, n):
                raise ShapeError(f"parameter block {name!r}: pattern has shape {P.shape}, expected {(m, n)}")
            P.sum_duplicates()
            P.eliminate_zeros()
            P.sort_indices()
            if P.nnz == 0:
                raise ShapeError(f"parameter block {name!r}: the sparsity pattern is empty")
            pat = sps.csr_array((np.ones(P.nnz), P.indices.copy(), P.indptr.copy()), shape=(m, n))
        size = m * n if pat is None else int(pat.nnz)
        block = MatrixParameterBlock(
            name,
            self.n_params,
            size,
            SymbolRange(name, size),
            latex or default_latex(name),
            None,
            (m, n),
            pat,
            dims,
        )
        what = f"parameter block {name!r} value"
        val = np.full(size, float(value)) if np.isscalar(value) else block.flat_value(value, what)
        if not np.isfinite(val).all():
            raise NonFiniteError(f"{what}: contains NaN or inf")
        self._check_dim(dims[0], m, f"parameter block {name!r} rows")
        self._check_dim(dims[1], n, f"parameter block {name!r} columns")
        self._params[name] = block
        self._pvalues.append(val)
        self._version += 1
        return self.ref(name)  # type: ignore[return-value]

    def declare_dim(self, label: str, size: int) -> None:
        """Name a size for printing (e.g. ``n_d`` when only ``n_c*n_d`` labels a block)."""
        if not isinstance(label, str) or not label.isidentifier():
            raise MCPInputError(f"a size label must be a Python identifier, got {label!r}")
        self._check_dim(label, size, f"declare_dim({label!r})")

    def _check_dim(self, label: str | None, size: int, what: str) -> None:
        """Register ``label = size``; a plain label names one size, a product ``a*b`` is checked."""
        if label is None:
            return
        if not isinstance(label, str) or not label.strip():
            raise MCPInputError(f"{what}: dim must be a non-empty string, got {label!r}")
        factors = [f.strip() for f in label.split("*")]
        if len(factors) == 1 and factors[0].isidentifier():
            known = self._dims.get(label)
            if known is not None and known != size:
                raise ShapeError(f"{what}: size label {label!r} is {known} elsewhere, here {size}")
            self._dims[label] = int(size)
        elif all(f.isidentifier() and f in self._dims for f in factors):
            prod = math.prod(self._dims[f] for f in factors)
            if prod != size:
                raise ShapeError(f"{what}: size label {label!r} = {prod}, but the block has {size}")

    def _check_parameter_name(self, name: str) -> None:
        _check_name(name, self._params, "parameter")
        if name in self._vars:
            raise MCPInputError(f"name {name!r} is already used by a variable block")

    def ref(self, name: str) -> bx.Var | bx.Param:
        """The declared variable or parameter block ``name`` as a block expression.

        See :mod:`mcpkit.problems.blocks`.
        """
        hit = self._refs.get(name)
        if hit is not None and getattr(hit, "block", None) is (
            self._vars.get(name) or self._params.get(name)
        ):
            return hit  # type: ignore[return-value]
        if name in self._vars:
            ref: bx.Var | bx.Param = bx.Var(self._vars[name])
        elif name in self._params:
            ref = bx.Param(self._params[name])
        else:
            raise MCPInputError(
                f"no block named {name!r}; variables: {list(self._vars) or 'none'}, "
                f"parameters: {list(self._params) or 'none'}"
            )
        self._refs[name] = ref
        return ref

    @property
    def dims(self) -> dict[str, int]:
        """Printed size labels and their sizes (``{"n_c": 50, "n_v": 3}``)."""
        return dict(self._dims)

    def add_functions(self, block: str, exprs: Any) -> None:
        r"""Pair the variable block ``block`` with the function block :math:`F_B(z; p)`.

        ``exprs`` is a sympy Matrix or a sequence of expressions (numbers allowed), one per
        component of the block, built from variable and parameter symbols of this MCP; or one
        block expression (:mod:`mcpkit.problems.blocks`) of the block's size over this MCP's blocks,
        kept as written (:class:`BlockFunction`).
        """
        vb = self._require_unpaired(block)
        if isinstance(exprs, bx.Expr):
            self._funcs[block] = self._block_function(block, vb, exprs)
            self._version += 1
            return
        rows = sympify_rows(exprs, f"F[{block}]")
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

    def _block_function(self, name: str, vb: VariableBlock, expr: bx.Expr) -> BlockFunction:
        """Check a block expression for pairing with ``vb``: its shape and that its blocks are ours."""
        if expr.is_matrix:
            raise ShapeError(
                f"F[{name}] is a matrix {expr.shape}; a function block is a vector of size {vb.size}"
            )
        if expr.shape != (vb.size,) and not (expr.shape == (1,) and vb.size == 1):
            raise ShapeError(
                f"F[{name}] has {expr.shape[0]} components but variable block {name!r} has {vb.size}"
            )
        for leaf in bx.walk(expr):
            if isinstance(leaf, bx.Var):
                mine = self._vars.get(leaf.block.name)
            elif isinstance(leaf, bx.Param):
                mine = self._params.get(leaf.block.name)
            else:
                continue
            if mine is not leaf.block:
                raise MCPInputError(
                    f"F[{name}] uses block {leaf.block.name!r} of another MCP "
                    "(take blocks with this MCP's ref())"
                )
        return BlockFunction(expr)

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
        qrows = numeric_rows(q, f"q[{block}]")
        if qrows is not None:
            if len(qrows) != vb.size:
                raise ShapeError(f"add_affine({block!r}): q has {len(qrows)} rows, expected {vb.size}")
            self._funcs[block] = AffineFunction(Mx, qrows, names)
            self._version += 1
            return
        qrows = sympify_rows(q, f"q[{block}]")
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
        del self._slices[name]
        self._kinds.pop()
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
        return implementation(Hook.MCP_FROM_CASADI)(F, lb, ub, z0, p0, name)

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
        refuse_text(M, "lcp: M")
        refuse_text(q, "lcp: q")
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
        mcp.affine_map()  # built with the declaration: every solve evaluates F = Mz + q with it
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
    def block_slices(self) -> dict[str, slice]:
        """Where each variable block sits in the stacked vector (a new dict, declaration order)."""
        return dict(self._slices)

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
    def bound_kinds(self) -> np.ndarray:
        """Stacked case of each box (:func:`~mcpkit.problems.bounds.bound_kinds`), found at declaration."""
        return np.concatenate(self._kinds) if self._kinds else np.zeros(0, dtype=np.int8)

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
            self._pvalues[names.index(name)] = _block_value(
                self._params[name], value, f"parameter block {name!r} value"
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

    def _n_params_now(self) -> int:
        """:attr:`n_params`, cached for the current :attr:`version` (it changes only with the structure)."""
        cached = self._n_params_cache
        if cached is None or cached[0] != self._version:
            cached = self._n_params_cache = (self._version, self.n_params)
        return cached[1]

    def parameter_vector(self, p: ArrayLike | dict[str, ArrayLike] | None = None) -> np.ndarray:
        """Stacked parameter vector from ``None`` (current values), a dict by block or an array."""
        if p is None:
            return self.parameter_values
        if isinstance(p, np.ndarray) and p.shape == (self.n_params,) and np.isfinite(p).all():
            return p.astype(float, copy=True)
        if isinstance(p, dict):
            params = self._params
            # every block given: nothing of the current values is needed (a dict has no duplicates)
            out = np.empty(self._n_params_now()) if len(p) == len(params) else self.parameter_values
            finite = True
            for name, value in p.items():
                pb = params.get(name)
                if pb is None:
                    raise MCPInputError(f"unknown parameter block {name!r}")
                if isinstance(value, (float, int)) and not isinstance(value, bool):
                    if pb.size == 1:
                        out[pb.start] = value
                    else:
                        out[pb.start : pb.start + pb.size] = value
                    finite = finite and math.isfinite(value)
                elif isinstance(value, np.ndarray) and value.shape == (pb.size,) and value.dtype.kind in "fi":
                    out[pb.start : pb.start + pb.size] = value
                    finite = finite and bool(np.isfinite(value).all())
                else:
                    out[pb.slice] = _block_value(pb, value, f"parameter {name!r}")  # checked there
            if not finite:
                for name, value in p.items():  # name the offending block
                    _block_value(params[name], value, f"parameter {name!r}")
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
            elif isinstance(fb, BlockFunction):
                out.extend(fb.expand())
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

    def affine_map(self) -> AffineMap | None:
        r"""The :class:`AffineMap` :math:`F(z) = Mz + q` when every function block is affine with a
        numeric :math:`q` (an LCP, box LCP or affine MCP with numbers only), else ``None``.

        Built once per structure (:attr:`version`); :meth:`lcp` builds it with the declaration.
        """
        cached = self._affine_cache
        if cached is not None and cached[0] == self._version:
            return cached[1]
        self.validate()
        parts: list[AffinePart] = []
        for name, rows in self._slices.items():
            fb = self._funcs[name]
            q = fb.q_values if isinstance(fb, AffineFunction) else None
            if q is None:
                self._affine_cache = (self._version, None)
                return None
            assert isinstance(fb, AffineFunction)
            spans = [self._slices[nm] for nm in fb.over]
            cols: slice | np.ndarray = (
                spans[0] if len(spans) == 1 else np.concatenate([np.arange(s.start, s.stop) for s in spans])
            )
            parts.append((rows, cols, fb.M, q))
        amap = AffineMap(self.n, parts)
        self._affine_cache = (self._version, amap)
        return amap

    def evaluator(self) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        """``(z, p) -> F(z; p)`` as a float vector: the :meth:`affine_map` when there is one (no
        CasADi), else the function of the cached CasADi lowering (built on first use)."""
        amap = self.affine_map()
        if amap is not None:
            return amap
        F_fun = implementation(Hook.LOWER_TO_CASADI)(self).F_fun
        return lambda z, p: np.asarray(F_fun(z, p), dtype=float).reshape(-1)

    def rounding_floor_function(self) -> Callable[[np.ndarray, np.ndarray], np.ndarray] | None:
        """``(z, p) -> e``: :func:`mcpkit.problems.floor.rounding_floor_function` (an LCP: its map's)."""
        if (amap := self.affine_map()) is not None:  # the plain solve's spine: no other module
            return amap.rounding_floor
        if self._floor_cache is None or self._floor_cache[0] != self._version:
            self._floor_cache = (self._version, rounding_floor_function(self))
        return self._floor_cache[1]

    def evaluate(self, z: ArrayLike, p: ArrayLike | dict[str, ArrayLike] | None = None) -> np.ndarray:
        """Numerical value of :math:`F(z; p)` (through :meth:`evaluator`)."""
        zz = np.asarray(z, dtype=float).reshape(-1)
        if zz.shape != (self.n,):
            raise ShapeError(f"evaluate: z must have {self.n} entries, got shape {zz.shape}")
        return self.evaluator()(zz, self.parameter_vector(p))

    def to_latex(self, **kwargs: Any) -> str:
        """LaTeX rendering of the MCP; see :func:`mcpkit.printing.mcp.to_latex`."""
        return implementation(Hook.MCP_LATEX)(self, **kwargs)

    def _repr_latex_(self) -> str:
        """Notebook rendering: :meth:`to_latex` in display math."""
        return f"$${self.to_latex()}$$"

    def to_text(self, **kwargs: Any) -> str:
        """Plain-text rendering of the MCP; see :func:`mcpkit.printing.mcp.to_text`."""
        return implementation(Hook.MCP_TEXT)(self, **kwargs)

    def explain(self, **kwargs: Any) -> str:
        """Prose explanation of every block's case; see :func:`~mcpkit.printing.mcp.explain`."""
        return implementation(Hook.MCP_EXPLAIN)(self, **kwargs)

    def __str__(self) -> str:
        kinds = ", ".join(f"{b.name}[{b.size}]" for b in self._vars.values())
        return f"MCP {self.name!r}: n={self.n}, params={self.n_params}, blocks: {kinds}"


#: One block of an :class:`AffineMap`: its rows, the columns of :math:`z_S`, :math:`M_B`, :math:`q_B`.
AffinePart = tuple[slice, slice | np.ndarray, np.ndarray | sps.csr_array, np.ndarray]


def place_affine_block(
    start: int, cols: slice | np.ndarray, M: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""The entries of an affine block's :math:`M_B` placed in :math:`J_F`: ``(r, c, v)``, with
    :math:`J_{r_k c_k} = v_k` at the block's rows (from ``start``) and the columns ``cols`` of
    :math:`z_S` (a slice or an index array). A NumPy ``M`` gives its nonzeros, a SciPy sparse one
    its stored entries as they are (:math:`O(\mathrm{nnz})`, no dense step)."""
    coo = M.tocoo() if sps.issparse(M) else sps.coo_array(M)
    idx = np.arange(cols.start, cols.stop) if isinstance(cols, slice) else cols
    return start + coo.row.astype(np.int64), idx[coo.col], np.asarray(coo.data, dtype=float)


class AffineMap:
    r""":math:`F(z) = Mz + q` of an MCP whose function blocks are all affine with a numeric :math:`q`.

    Built once per structure by :meth:`MCP.affine_map`; the engines and the verdict evaluate
    :math:`F` with it instead of a CasADi function. Each block's rows :math:`F_B = M_B z_S + q_B`
    are one SciPy CSR product plus :math:`q_B`: every row summed in column order, then
    :math:`q_B` added, which is the rounding of the CasADi lowering's product (dense or sparse,
    SX or MX), so both give the same numbers. :attr:`jacobian` is the constant :math:`J_F`
    (CSC, sorted indices): the stored entries of the CSR blocks, i.e. a dense :math:`M`'s nonzeros.
    Both are converted on first use (a declaration that is never solved pays nothing for them).

    Parameters
    ----------
    n
        Number of variables.
    parts
        ``(rows, columns, M_B, q_B)`` per block: the slice of its rows, the stacked columns of
        :math:`z_S` (a slice or an index array), its matrix (dense or CSR) and its :math:`q_B`.
    """

    def __init__(self, n: int, parts: list[AffinePart]) -> None:
        self.n = n
        self._given = parts
        self._csr: list[AffinePart] | None = None
        self._jacobian: sps.csc_array | None = None
        self._abs: AffineMap | None = None  # |M|, |q| (rounding_floor)
        self._whole = len(parts) == 1 and parts[0][0] == slice(0, n) and parts[0][1] == slice(0, n)

    @property
    def parts(self) -> list[AffinePart]:
        """The blocks with :math:`M_B` as CSR (converted on first use)."""
        if self._csr is None:
            self._csr = [(rows, cols, sps.csr_array(M), q) for rows, cols, M, q in self._given]
        return self._csr

    @property
    def jacobian(self) -> sps.csc_array:
        r"""The constant :math:`J_F = M` (CSC, sorted indices; built on first use)."""
        if self._jacobian is None:
            if self._whole:
                J = self.parts[0][2].tocsc()
            else:
                placed = [place_affine_block(rows.start, cols, M) for rows, cols, M, _ in self.parts]
                r, c, v = (np.concatenate(x) for x in zip(*placed, strict=True))  # >= 1 block
                J = sps.csc_array((v, (r, c)), shape=(self.n, self.n))
            J.sort_indices()
            self._jacobian = J
        return self._jacobian

    def rounding_floor(self, z: np.ndarray, p: np.ndarray | None = None) -> np.ndarray:
        r""":math:`\varepsilon(\sum_j |M_{ij} z_j| + |q_i|)`, the rounding of :math:`F` (see floor.py)."""
        if self._abs is None:  # |M| z + |q| is this map's product on |M|, |q|
            self._abs = AffineMap(self.n, [(r, c, abs(M), np.abs(q)) for r, c, M, q in self.parts])
        return float(np.finfo(float).eps) * self._abs(np.abs(z))

    def __call__(self, z: np.ndarray, p: np.ndarray | None = None) -> np.ndarray:
        """:math:`F(z) = Mz + q` (a new array; ``p`` is not used: :math:`q` is numeric)."""
        parts = self._csr if self._csr is not None else self.parts
        if self._whole:
            return parts[0][2] @ z + parts[0][3]
        F = np.empty(self.n)
        for rows, cols, M, q in parts:
            F[rows] = M @ z[cols] + q
        return F
