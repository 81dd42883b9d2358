r"""Variable and parameter blocks of a declaration: named ranges of :math:`z` and :math:`p`.

A block :math:`z_B` occupies ``z[start:start+size]`` of the stacked vector (a
:class:`VariableBlock`; a :class:`ParameterBlock` likewise of :math:`p`); its components are the
sympy symbols ``name_0, ..., name_{size-1}`` (:class:`SymbolRange`, created on access). A matrix
parameter :math:`A \in \mathbb{R}^{m\times n}` is stored flattened in :math:`p`
(:class:`MatrixParameterBlock`). :func:`default_latex` gives a block's printed stem.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sps
import sympy as sp

from mcpkit.errors import NonFiniteError, ShapeError
from mcpkit.problems.arrays import ArrayLike, as_float_vector


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
    dim: str | None = None
    """Printed size label of a vector block (``"n_c"``: :math:`\\mathbb{R}^{n_c}`); ``None``: the number."""

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


@dataclass(frozen=True, eq=False)
class MatrixParameterBlock(ParameterBlock):
    r"""A matrix parameter :math:`A \in \mathbb{R}^{m\times n}` stored flattened in ``p[start:start+size]``.

    Layout of the flat storage (what :meth:`~mcpkit.problems.mcp.MCP.parameter_vector`,
    :meth:`~mcpkit.problems.mcp.MCP.set_parameters`, ``Solver.solve(p=...)`` and horizons read):

    * dense (``pattern is None``): row-major, ``p[start + i*n + j] = A[i, j]``, i.e. NumPy's
      ``A.reshape(-1)``; ``size = m*n``;
    * sparse: only the entries of the fixed sparsity ``pattern`` (a canonical ``csr_array``),
      in CSR order (row by row, columns ascending), i.e. ``scipy.sparse.csr_array(A)``'s
      ``data`` after ``sort_indices()``; ``size = pattern.nnz``. Entries outside the pattern are
      structurally zero.

    Values may be given as the flat vector, as a 2-D array of shape ``(m, n)`` or as a
    ``scipy.sparse`` matrix (zero outside the pattern). ``dims`` are the printed row and column
    size labels.
    """

    shape: tuple[int, int] = (0, 0)
    pattern: sps.csr_array | None = None
    dims: tuple[str | None, str | None] = (None, None)

    def flat_value(self, value: Any, what: str) -> np.ndarray:
        """``value`` (flat vector, ``(m, n)`` array or sparse matrix) as the block's flat storage."""
        m, n = self.shape
        if not sps.issparse(value):
            arr = np.asarray(value, dtype=float) if isinstance(value, (np.ndarray, list, tuple)) else None
            if arr is None or arr.ndim != 2 or arr.shape != (m, n):
                return as_float_vector(value, self.size, what, allow_inf=False)
            if self.pattern is None:
                return as_float_vector(arr.reshape(-1), self.size, what, allow_inf=False)
            value = sps.csr_array(arr)
        if value.shape != (m, n):
            raise ShapeError(f"{what}: expected a {m}x{n} matrix, got shape {value.shape}")
        if self.pattern is None:
            return as_float_vector(value.toarray().reshape(-1), self.size, what, allow_inf=False)
        C = sps.csr_array(value, dtype=float)
        C.sum_duplicates()
        if not np.isfinite(C.data).all():
            raise NonFiniteError(f"{what}: contains NaN or inf")
        mask = sps.csr_array((np.ones(self.size), self.pattern.indices, self.pattern.indptr), shape=(m, n))
        outside = abs(C) - abs(C.multiply(mask))
        if outside.count_nonzero():
            raise ShapeError(f"{what}: the value has nonzeros outside the declared sparsity pattern")
        rows, cols = _pattern_coordinates(self.pattern)
        vals = np.asarray(C[rows, cols], dtype=float).reshape(-1)
        return as_float_vector(vals, self.size, what, allow_inf=False)

    def matrix(self, flat: ArrayLike) -> np.ndarray | sps.csr_array:
        """The matrix of a flat storage vector (dense array, or CSR with the pattern)."""
        v = np.asarray(flat, dtype=float).reshape(-1)
        if self.pattern is None:
            return v.reshape(self.shape)
        return sps.csr_array((v, self.pattern.indices, self.pattern.indptr), shape=self.shape)


def _pattern_coordinates(P: sps.csr_array) -> tuple[np.ndarray, np.ndarray]:
    """Row and column of every stored entry of a CSR pattern, in CSR order."""
    rows = np.repeat(np.arange(P.shape[0]), np.diff(P.indptr))
    return rows, P.indices.astype(np.int64)


_GREEK = {
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
    "lambda", "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi",
    "omega",
}  # fmt: skip


def default_latex(name: str) -> str:
    r"""The LaTeX stem of a block name: ``lambda_n`` -> ``\lambda_{\mathrm{n}}``, ``x`` -> ``x``."""
    head, _, tail = name.partition("_")
    stem = f"\\{head}" if head in _GREEK else (head if len(head) == 1 else f"\\mathrm{{{head}}}")
    return f"{stem}_{{\\mathrm{{{tail}}}}}" if tail else stem
