r"""Array namespaces: one step map written once, evaluated on NumPy arrays or CasADi symbols.

A step model's map :math:`p = P(x, u, \theta, t)`, :math:`x^+ = \Phi(x, z, u, \theta, t)` is
written once as Python code that takes an array namespace ``xp`` and calls only its functions
(and ``+ - * / **`` and indexing, which NumPy arrays and CasADi ``SX`` share). The simulator
(:func:`mcpkit.models.stepping.simulate`) evaluates it with :data:`NUMPY` on numbers; a horizon
(:meth:`mcpkit.mpec.step.StepSpec.from_model`) evaluates it once with :data:`CASADI` on SX
symbols. With :data:`NUMPY` every function is the plain NumPy operation (``@``, ``np.cos``,
``np.concatenate`` ...), so the numbers of a simulation are those of NumPy code written by hand.

Vectors are 1-D NumPy arrays or CasADi column vectors; matrices are 2-D. :meth:`ArrayNamespace.flat`
flattens **row-major** in both namespaces (``A.reshape(-1)``), the order in which the models
declare matrix parameter blocks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import casadi as ca
import numpy as np

__all__ = ["CASADI", "NUMPY", "ArrayNamespace", "CasadiNamespace", "NumpyNamespace"]


class ArrayNamespace:
    """The operations a step map may use beyond arithmetic and indexing (see the module docstring)."""

    name: str = ""
    numeric: bool = True
    """True for :data:`NUMPY` (numbers), False for :data:`CASADI` (symbols)."""

    def sin(self, a: Any) -> Any:
        raise NotImplementedError

    def cos(self, a: Any) -> Any:
        raise NotImplementedError

    def sqrt(self, a: Any) -> Any:
        raise NotImplementedError

    def vector(self, items: Sequence[Any]) -> Any:
        """A vector from scalars."""
        raise NotImplementedError

    def concat(self, parts: Sequence[Any]) -> Any:
        """One vector from vectors (end to end)."""
        raise NotImplementedError

    def matrix(self, rows: Sequence[Sequence[Any]]) -> Any:
        """A matrix from rows of scalars."""
        raise NotImplementedError

    def stack_rows(self, rows: Sequence[Any]) -> Any:
        """A matrix whose rows are the given vectors (all of one length)."""
        raise NotImplementedError

    def block(self, blocks: Sequence[Sequence[Any]]) -> Any:
        """A block matrix (``numpy.block``)."""
        raise NotImplementedError

    def matmul(self, a: Any, b: Any) -> Any:
        """Matrix-matrix or matrix-vector product ``a @ b``."""
        raise NotImplementedError

    def dot(self, a: Any, b: Any) -> Any:
        """Inner product of two vectors."""
        raise NotImplementedError

    def cross(self, a: Any, b: Any) -> Any:
        """Cross product of two 3-vectors."""
        raise NotImplementedError

    def norm(self, a: Any) -> Any:
        """Euclidean norm of a vector."""
        raise NotImplementedError

    def flat(self, a: Any) -> Any:
        """Row-major flattening (``a.reshape(-1)``)."""
        raise NotImplementedError

    def copy(self, a: Any) -> Any:
        """A float copy of an array (NumPy) or the expression itself (CasADi)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<array namespace {self.name}>"


class NumpyNamespace(ArrayNamespace):
    """:class:`ArrayNamespace` on NumPy arrays (the plain NumPy operations)."""

    name = "numpy"
    numeric = True

    def sin(self, a: Any) -> Any:
        return np.sin(a)

    def cos(self, a: Any) -> Any:
        return np.cos(a)

    def sqrt(self, a: Any) -> Any:
        return np.sqrt(a)

    def vector(self, items: Sequence[Any]) -> np.ndarray:
        return np.array(items, dtype=float)

    def concat(self, parts: Sequence[Any]) -> np.ndarray:
        return np.concatenate([np.atleast_1d(np.asarray(p, dtype=float)) for p in parts])

    def matrix(self, rows: Sequence[Sequence[Any]]) -> np.ndarray:
        return np.array(rows, dtype=float)

    def stack_rows(self, rows: Sequence[Any]) -> np.ndarray:
        return np.array(rows, dtype=float)

    def block(self, blocks: Sequence[Sequence[Any]]) -> np.ndarray:
        return np.block([list(r) for r in blocks])

    def matmul(self, a: Any, b: Any) -> Any:
        return a @ b

    def dot(self, a: Any, b: Any) -> Any:
        return a @ b

    def cross(self, a: Any, b: Any) -> np.ndarray:
        return np.cross(a, b)

    def norm(self, a: Any) -> Any:
        return np.linalg.norm(a)

    def flat(self, a: Any) -> np.ndarray:
        return np.asarray(a).reshape(-1)

    def copy(self, a: Any) -> np.ndarray:
        return np.asarray(a, dtype=float).copy()


def _sx(a: Any) -> ca.SX:
    """An SX from an SX, a DM, a number or a NumPy array (1-D -> column)."""
    if isinstance(a, ca.SX):
        return a
    if isinstance(a, (ca.DM, int, float, np.integer, np.floating)):
        return ca.SX(a)
    arr = np.asarray(a)
    if arr.dtype == object:
        items = [_sx(v) for v in arr.reshape(-1)]
        col = ca.vertcat(*items) if items else ca.SX(0, 1)
        return col if arr.ndim <= 1 else ca.reshape(col, arr.shape[1], arr.shape[0]).T
    return ca.SX(ca.DM(np.asarray(arr, dtype=float)))


class CasadiNamespace(ArrayNamespace):
    """:class:`ArrayNamespace` on CasADi ``SX`` (NumPy constants are converted on the way in)."""

    name = "casadi"
    numeric = False

    def sin(self, a: Any) -> ca.SX:
        return ca.sin(_sx(a))

    def cos(self, a: Any) -> ca.SX:
        return ca.cos(_sx(a))

    def sqrt(self, a: Any) -> ca.SX:
        return ca.sqrt(_sx(a))

    def vector(self, items: Sequence[Any]) -> ca.SX:
        return ca.vertcat(*[_sx(v) for v in items]) if len(items) else ca.SX(0, 1)

    def concat(self, parts: Sequence[Any]) -> ca.SX:
        return ca.vertcat(*[ca.vec(_sx(p)) for p in parts]) if len(parts) else ca.SX(0, 1)

    def matrix(self, rows: Sequence[Sequence[Any]]) -> ca.SX:
        return ca.vertcat(*[ca.horzcat(*[_sx(v) for v in r]) for r in rows])

    def stack_rows(self, rows: Sequence[Any]) -> ca.SX:
        return ca.vertcat(*[ca.vec(_sx(r)).T for r in rows])

    def block(self, blocks: Sequence[Sequence[Any]]) -> ca.SX:
        return ca.blockcat([[_sx(b) for b in r] for r in blocks])

    def matmul(self, a: Any, b: Any) -> ca.SX:
        return ca.mtimes(_sx(a), _sx(b))

    def dot(self, a: Any, b: Any) -> ca.SX:
        return ca.dot(ca.vec(_sx(a)), ca.vec(_sx(b)))

    def cross(self, a: Any, b: Any) -> ca.SX:
        return ca.cross(ca.vec(_sx(a)), ca.vec(_sx(b)))

    def norm(self, a: Any) -> ca.SX:
        return ca.norm_2(ca.vec(_sx(a)))

    def flat(self, a: Any) -> ca.SX:
        return ca.vec(_sx(a).T)

    def copy(self, a: Any) -> ca.SX:
        return _sx(a)


NUMPY: ArrayNamespace = NumpyNamespace()
"""The NumPy namespace (simulation)."""

CASADI: ArrayNamespace = CasadiNamespace()
"""The CasADi ``SX`` namespace (horizons)."""
