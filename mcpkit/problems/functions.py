r"""Function blocks of a declaration: :math:`F_B(z; p)` as sympy rows, as arrays, or as one block expression.

* :class:`SymbolicFunction`: one sympy expression per component (any smooth nonlinear function);
* :class:`AffineFunction`: :math:`F_B = M z_S + q(p)` kept as arrays (:math:`M` dense or sparse CSR,
  a numeric :math:`q` as :class:`NumericRows`), never expanded into sympy trees;
* :class:`BlockFunction`: one block expression (:mod:`mcpkit.problems.blocks`) over whole blocks, printed as
  written and lowered with one product per matrix.

:data:`FunctionBlock` is their union, what :meth:`mcpkit.problems.mcp.MCP.function_block` returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sps
import sympy as sp

from mcpkit.errors import MCPInputError, NonFiniteError
from mcpkit.problems import blocks as bx


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


@dataclass(frozen=True, eq=False)
class BlockFunction:
    r"""Function block :math:`F_B(z; p)` given as one block expression (:mod:`mcpkit.problems.blocks`).

    ``expr`` is a vector expression of the block's size over this MCP's variable and parameter
    blocks. It prints as written (:mod:`mcpkit.printing.mcp`), lowers to CasADi with one
    matrix product per matrix leaf and to Pyomo with sparse row sums, and :meth:`expand` gives
    the sympy rows that entrywise consumers (the entrywise printer, GAMSPy) read.
    """

    expr: bx.Expr

    def expand(self) -> tuple[sp.Expr, ...]:
        """One sympy expression per row (entrywise; builds every symbol: small problems only)."""
        cached = self.__dict__.get("_rows")
        if cached is None:
            cached = bx.expand(self.expr)
            object.__setattr__(self, "_rows", cached)
        return cached

    @property
    def variables(self) -> list[str]:
        """Variable blocks the expression depends on."""
        return bx.variable_names(self.expr)

    @property
    def is_affine(self) -> bool:
        """The expression is affine in the variables (parameters may enter anywhere)."""
        return bx.is_affine(self.expr)

    @property
    def is_scalar(self) -> bool:
        """Every leaf is a scalar and no node is a matrix (the block and entrywise forms coincide)."""
        return all(x.shape == (1,) for x in bx.walk(self.expr))

    @property
    def nnz(self) -> int:
        """Stored entries of the matrix leaves (matrix parameters and constants)."""
        return sum(bx.leaf_nnz(leaf) for leaf in bx.matrix_leaves(self.expr))


FunctionBlock = SymbolicFunction | AffineFunction | BlockFunction


def numeric_rows(q: Any, what: str) -> NumericRows | None:
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


def sympify_rows(exprs: Any, what: str) -> tuple[sp.Expr, ...]:
    """``exprs`` (a sympy matrix or expression, an array or any iterable) as sympy rows, each finite."""
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
