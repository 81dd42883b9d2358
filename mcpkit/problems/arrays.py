r"""Numeric input at the boundary of a declaration: vectors and matrices checked once.

:func:`as_float_vector` broadcasts a scalar or reads a vector :math:`v \in \mathbb{R}^n` (optionally
with :math:`\pm\infty` entries, for bounds); :func:`as_affine_matrix` reads the matrix :math:`M` of an
affine block, dense or ``scipy.sparse`` (kept sparse, canonical CSR). Both raise the typed errors of
:mod:`mcpkit.errors` (:class:`~mcpkit.errors.ShapeError`, :class:`~mcpkit.errors.NonFiniteError`).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
import scipy.sparse as sps

from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError

ArrayLike = Any  # numbers, sequences or numpy arrays; validated at the boundary


def refuse_text(value: Any, what: str) -> None:
    """:class:`~mcpkit.errors.MCPInputError` when ``value`` holds text (``"1"``, ``["1", 2]``),
    which ``np.asarray(value, dtype=float)`` would silently read as numbers."""
    if sps.issparse(value):
        return
    try:
        arr = value if isinstance(value, np.ndarray) else np.asarray(value)
    except (TypeError, ValueError):
        return  # ragged or odd input: the caller's conversion says what is wrong
    text = arr.dtype.kind in "US" or (
        arr.dtype.kind == "O" and any(isinstance(v, (str, bytes)) for v in arr.reshape(-1).tolist())
    )
    if text:
        raise MCPInputError(f"{what}: numbers expected, got text {value!r}"[:300])


def as_real(value: Any, what: str) -> float:
    """``value`` as a finite float: a real number (or a 0-d real NumPy array), not a bool or a
    string (typed errors as below).

    Raises
    ------
    MCPInputError
        A bool, a string or another non-real value.
    NonFiniteError
        NaN or an infinity.
    """
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise MCPInputError(f"{what} must be a real number, got {type(value).__name__} {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise NonFiniteError(f"{what} must be finite, got {value!r}")
    return v


def as_positive(value: Any, what: str) -> float:
    """:func:`as_real`, and ``> 0`` (else :class:`~mcpkit.errors.MCPInputError`)."""
    v = as_real(value, what)
    if v <= 0:
        raise MCPInputError(f"{what} must be > 0, got {value!r}")
    return v


def as_count(value: Any, what: str, minimum: int = 1) -> int:
    """``value`` as an integer ``>= minimum`` (a bool is not a count), else
    :class:`~mcpkit.errors.ShapeError` (a count is a size)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ShapeError(f"{what} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def as_float_vector(value: ArrayLike, n: int, what: str, *, allow_inf: bool) -> np.ndarray:
    """Broadcast ``value`` to a float vector of length ``n`` and check it is finite (or ±inf)."""
    refuse_text(value, what)
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
    refuse_text(M, what)
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
