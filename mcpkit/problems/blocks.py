r"""Block-level expressions: a function block written over whole variable and parameter blocks.

A block expression is a small tree whose leaves are the blocks of one MCP (variables
:math:`z_B`, vector parameters :math:`p_B`, matrix parameters :math:`A \in \mathbb{R}^{m\times n}`)
and numeric constants, and whose nodes are the operations a paper writes::

    v   = m.add_variable_block("v", nv, lb=-inf, latex=r"\nu", dim="n_v")
    Wn  = m.add_parameter_block("Wn", (nv, nc), latex="W_n", dim=("n_v", "n_c"))
    psi = m.add_parameter_block("psi_h", nc, latex=r"\psi_n/h", dim="n_c")
    m.add_functions("lam_n", Wn.T @ v + psi)              # 0 <= beta_n ⟂ W_n^T nu + psi_n/h >= 0

Shapes are ``(n,)`` for vectors and ``(m, n)`` for matrices. The operations are

* ``A @ x`` (matrix times vector), ``A @ B`` (product of matrices), ``A.T`` (transpose; ``x.T @ y``
  is the inner product);
* ``x + y``, ``x - y``, ``-x``, ``x * y`` (Hadamard product :math:`x \circ y`), ``x / y``, ``x ** k``:
  elementwise, a length-1 operand broadcasts; ``s * A`` and ``A / s`` scale a matrix by a scalar
  and ``A + B`` adds matrices of one shape;
* :func:`maximum` (elementwise :math:`\max(x, y)`), :func:`diag` (:math:`\operatorname{diag}(x)`),
  :func:`total` (:math:`\mathbf 1^T x`), elementwise
  :func:`sin`, :func:`cos`, :func:`exp`, :func:`log`, :func:`sqrt`, :func:`tanh`, ``abs(x)``;
* :func:`named` (a definition :math:`v_t = W_t^T\nu - u_t`, printed by its name and listed under
  "where") and :func:`const` (a numeric vector or matrix, dense or ``scipy.sparse``, printed by
  its name and listed under "given").

A matrix expression is a *linear operator*: its value is never formed. Every evaluator
(:class:`Evaluator`) only applies matrices to vectors, right to left
(:math:`(AB)x = A(Bx)`, :math:`(AB)^Tx = B^T(A^Tx)`), so a lowering does one product per matrix
leaf (one CasADi ``mtimes``, one sparse row sum per row in Pyomo, sympy or NumPy) and costs
:math:`O(\mathrm{nnz})`. The same tree is printed at block level by :mod:`mcpkit.printing.mcp`,
expanded to one sympy expression per row for small problems (:func:`expand`), and lowered to
CasADi and Pyomo.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sps
import sympy as sp

from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError
from mcpkit.problems.hooks import Hook, implementation

if TYPE_CHECKING:  # pragma: no cover
    from mcpkit.problems.variables import ParameterBlock, VariableBlock

Shape = tuple[int, ...]

_CREATED = itertools.count()  # creation order of named definitions (the printer lists them in it)

#: Elementwise functions (sympy names, shared with the CasADi and Pyomo function tables).
FUNCTIONS: tuple[str, ...] = (
    "sin",
    "cos",
    "tan",
    "exp",
    "log",
    "sqrt",
    "tanh",
    "sinh",
    "cosh",
    "atan",
    "Abs",
)


# ----------------------------------------------------------------------------------- nodes
class Expr:
    """A block expression (abstract); see the module docstring for the operations."""

    __slots__ = ("shape",)
    __array_ufunc__ = None  # NumPy defers to the reflected operators (2.0 * x, A @ x with A an array)

    shape: Shape

    @property
    def is_matrix(self) -> bool:
        """The expression is matrix valued (a linear operator)."""
        return len(self.shape) == 2

    @property
    def size(self) -> int:
        """Number of entries (rows times columns for a matrix)."""
        return int(np.prod(self.shape))

    def children(self) -> tuple[Expr, ...]:
        """Direct sub-expressions."""
        return ()

    # arithmetic ---------------------------------------------------------------------
    def __add__(self, other: Any) -> Expr:
        return _add(self, as_expr(other), 1)

    def __radd__(self, other: Any) -> Expr:
        return _add(as_expr(other), self, 1)

    def __sub__(self, other: Any) -> Expr:
        return _add(self, as_expr(other), -1)

    def __rsub__(self, other: Any) -> Expr:
        return _add(as_expr(other), self, -1)

    def __neg__(self) -> Expr:
        return Neg(self)

    def __pos__(self) -> Expr:
        return self

    def __mul__(self, other: Any) -> Expr:
        return Mul(self, as_expr(other))

    def __rmul__(self, other: Any) -> Expr:
        return Mul(as_expr(other), self)

    def __truediv__(self, other: Any) -> Expr:
        return Div(self, as_expr(other))

    def __rtruediv__(self, other: Any) -> Expr:
        return Div(as_expr(other), self)

    def __pow__(self, k: Any) -> Expr:
        return Pow(self, k)

    def __matmul__(self, other: Any) -> Expr:
        return MatMul(self, as_expr(other))

    def __rmatmul__(self, other: Any) -> Expr:
        return MatMul(as_expr(other), self)

    def __abs__(self) -> Expr:
        return Func("Abs", self)

    @property
    def T(self) -> Expr:  # noqa: N802 - NumPy's name
        """Transpose (a vector becomes a row, so ``x.T @ y`` is the inner product)."""
        if isinstance(self, Transpose):
            return self.arg
        return Transpose(self)

    def __bool__(self) -> bool:
        raise MCPInputError(
            "a block expression has no truth value (write the complementarity with add_functions)"
        )

    def __str__(self) -> str:
        return implementation(Hook.EXPR_TEXT)(self)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.shape}: {self}>"

    def _repr_latex_(self) -> str:
        return f"${implementation(Hook.EXPR_LATEX)(self)}$"


class Var(Expr):
    """The variable block :math:`z_B` (a leaf), shape ``(size,)``."""

    __slots__ = ("block",)

    def __init__(self, block: VariableBlock) -> None:
        self.block = block
        self.shape = (block.size,)


class Param(Expr):
    """A parameter block (a leaf): a vector ``(size,)`` or, for a
    :class:`~mcpkit.problems.variables.MatrixParameterBlock`, a matrix of its ``shape``."""

    __slots__ = ("block",)

    def __init__(self, block: ParameterBlock) -> None:
        self.block = block
        self.shape = tuple(getattr(block, "shape", None) or (block.size,))


class Const(Expr):
    """A numeric scalar, vector or matrix (dense, or ``scipy.sparse`` kept as canonical CSR).

    ``name`` (and ``latex``, ``dim``) make the printer show it by name and list it as given;
    an unnamed scalar prints as its number.
    """

    __slots__ = ("dim", "latex", "name", "value")

    def __init__(
        self,
        value: Any,
        name: str | None = None,
        latex: str | None = None,
        dim: str | tuple[str | None, str | None] | None = None,
    ) -> None:
        if sps.issparse(value):
            if value.ndim != 2:
                raise ShapeError(f"const: a sparse value must be 2-D, got {value.ndim}-D")
            arr: Any = sps.csr_array(value, dtype=float, copy=True)
            arr.sum_duplicates()
            arr.eliminate_zeros()
            data = arr.data
        else:
            try:
                arr = np.array(value, dtype=float)
            except (TypeError, ValueError) as exc:
                raise MCPInputError(f"const: {value!r} is not numeric ({exc})") from exc
            if arr.ndim == 0:
                arr = arr.reshape(1)
            if arr.ndim > 2:
                raise ShapeError(f"const: values must be scalars, vectors or matrices, got {arr.ndim}-D")
            arr.flags.writeable = False
            data = arr
        if not np.isfinite(data).all():
            raise NonFiniteError(f"const {name or ''}: contains NaN or inf".replace("  ", " "))
        if name is not None and (not isinstance(name, str) or not name.isidentifier()):
            raise MCPInputError(f"const: name must be a Python identifier, got {name!r}")
        self.value = arr
        self.name = name
        self.latex = latex
        self.dim = dim
        self.shape = tuple(int(d) for d in arr.shape)

    @property
    def is_number(self) -> bool:
        """An unnamed scalar (printed as its number)."""
        return self.name is None and self.shape == (1,)

    @property
    def number(self) -> float:
        """The value of a scalar constant."""
        return float(self.value[0])


class Add(Expr):
    r"""Sum :math:`\pm t_1 \pm t_2 \pm \dots` of vectors (length 1 broadcasts) or of matrices of one shape."""

    __slots__ = ("terms",)

    def __init__(self, terms: tuple[tuple[int, Expr], ...]) -> None:
        self.terms = terms
        self.shape = _broadcast([t for _, t in terms], "+")

    def children(self) -> tuple[Expr, ...]:
        return tuple(t for _, t in self.terms)


class Neg(Expr):
    """:math:`-x`."""

    __slots__ = ("arg",)

    def __init__(self, arg: Expr) -> None:
        self.arg = arg
        self.shape = arg.shape

    def children(self) -> tuple[Expr, ...]:
        return (self.arg,)


class Mul(Expr):
    r"""Elementwise (Hadamard) product :math:`x \circ y`, or a matrix scaled by a scalar."""

    __slots__ = ("a", "b")

    def __init__(self, a: Expr, b: Expr) -> None:
        self.a, self.b = a, b
        if a.is_matrix and b.is_matrix:
            raise ShapeError(
                f"elementwise product of two matrices {a.shape} * {b.shape}: a block expression keeps "
                "matrices as linear operators (write A @ B for a product, or scale by a scalar)"
            )
        if a.is_matrix or b.is_matrix:
            m, s = (a, b) if a.is_matrix else (b, a)
            if s.shape != (1,):
                raise ShapeError(f"a matrix {m.shape} can only be scaled by a scalar, got shape {s.shape}")
            self.shape = m.shape
        else:
            self.shape = _broadcast([a, b], "*")

    def children(self) -> tuple[Expr, ...]:
        return (self.a, self.b)


class Div(Expr):
    """Elementwise quotient :math:`x / y` (a matrix may be divided by a scalar)."""

    __slots__ = ("a", "b")

    def __init__(self, a: Expr, b: Expr) -> None:
        self.a, self.b = a, b
        if b.is_matrix:
            raise ShapeError(f"division by a matrix {b.shape} is not supported")
        if a.is_matrix:
            if b.shape != (1,):
                raise ShapeError(f"a matrix {a.shape} can only be divided by a scalar, got shape {b.shape}")
            self.shape = a.shape
        else:
            self.shape = _broadcast([a, b], "/")

    def children(self) -> tuple[Expr, ...]:
        return (self.a, self.b)


class Pow(Expr):
    """Elementwise power :math:`x^k` with a numeric exponent."""

    __slots__ = ("arg", "k")

    def __init__(self, arg: Expr, k: Any) -> None:
        if (
            isinstance(k, Expr)
            or isinstance(k, bool)
            or not isinstance(k, (int, float, np.integer, np.floating))
        ):
            raise MCPInputError(f"x ** k: the exponent must be a number, got {k!r}")
        if not math.isfinite(float(k)):
            raise NonFiniteError(f"x ** k: the exponent must be finite, got {k!r}")
        if arg.is_matrix:
            raise ShapeError(f"elementwise power of a matrix {arg.shape} is not supported")
        self.arg = arg
        self.k: int | float = int(k) if float(k).is_integer() else float(k)
        self.shape = arg.shape

    def children(self) -> tuple[Expr, ...]:
        return (self.arg,)


class Func(Expr):
    """An elementwise function of :data:`FUNCTIONS` (``"Abs"`` is the absolute value)."""

    __slots__ = ("arg", "name")

    def __init__(self, name: str, arg: Expr) -> None:
        if name not in FUNCTIONS:
            raise MCPInputError(f"unknown elementwise function {name!r}; known: {list(FUNCTIONS)}")
        if arg.is_matrix:
            raise ShapeError(f"{name} of a matrix {arg.shape} is not supported (elementwise on vectors)")
        self.name, self.arg = name, arg
        self.shape = arg.shape

    def children(self) -> tuple[Expr, ...]:
        return (self.arg,)


class Maximum(Expr):
    r"""Elementwise maximum :math:`\max(x, y)` of two vectors (a length-1 operand broadcasts).

    A backend without its own ``maximum`` evaluates it as :math:`(x + y + |x - y|)/2`
    (:meth:`Backend.maximum`).
    """

    __slots__ = ("a", "b")

    def __init__(self, a: Expr, b: Expr) -> None:
        if a.is_matrix or b.is_matrix:
            raise ShapeError(f"max of a matrix {a.shape if a.is_matrix else b.shape} is not supported")
        self.a, self.b = a, b
        self.shape = _broadcast([a, b], "max")

    def children(self) -> tuple[Expr, ...]:
        return (self.a, self.b)


class MatMul(Expr):
    """Matrix product ``a @ b``: a matrix (or a transposed vector) times a vector or a matrix."""

    __slots__ = ("a", "b")

    def __init__(self, a: Expr, b: Expr) -> None:
        if not a.is_matrix:
            raise ShapeError(
                f"left operand of @ must be a matrix, got a vector {a.shape} "
                "(write x.T @ y for an inner product)"
            )
        if a.shape[1] != b.shape[0]:
            raise ShapeError(f"matrix product {a.shape} @ {b.shape}: inner dimensions differ")
        self.a, self.b = a, b
        self.shape = (a.shape[0],) + b.shape[1:]

    def children(self) -> tuple[Expr, ...]:
        return (self.a, self.b)


class Transpose(Expr):
    """:math:`A^T` (a vector transposes into a row of shape ``(1, n)``)."""

    __slots__ = ("arg",)

    def __init__(self, arg: Expr) -> None:
        self.arg = arg
        self.shape = (arg.shape[1], arg.shape[0]) if arg.is_matrix else (1, arg.shape[0])

    def children(self) -> tuple[Expr, ...]:
        return (self.arg,)


class Diag(Expr):
    r""":math:`\operatorname{diag}(x)`, the diagonal matrix of a vector (applied as :math:`x \circ y`)."""

    __slots__ = ("arg",)

    def __init__(self, arg: Expr) -> None:
        if arg.is_matrix:
            raise ShapeError(f"diag takes a vector, got a matrix {arg.shape}")
        self.arg = arg
        self.shape = (arg.shape[0], arg.shape[0])

    def children(self) -> tuple[Expr, ...]:
        return (self.arg,)


class Total(Expr):
    r""":math:`\mathbf 1^T x`, the sum of a vector's entries (shape ``(1,)``)."""

    __slots__ = ("arg",)

    def __init__(self, arg: Expr) -> None:
        if arg.is_matrix:
            raise ShapeError(f"total takes a vector, got a matrix {arg.shape}")
        self.arg = arg
        self.shape = (1,)

    def children(self) -> tuple[Expr, ...]:
        return (self.arg,)


class Named(Expr):
    r"""A named definition :math:`\mathrm{name} = \mathrm{expr}`: printed by its name, listed under "where".

    Lowerings evaluate it once and reuse the value.
    """

    __slots__ = ("dim", "expr", "latex", "name", "order")

    def __init__(
        self,
        name: str,
        expr: Expr,
        latex: str | None = None,
        dim: str | tuple[str | None, str | None] | None = None,
    ) -> None:
        if not isinstance(name, str) or not name.isidentifier():
            raise MCPInputError(f"named: the name must be a Python identifier, got {name!r}")
        self.name, self.expr, self.latex, self.dim = name, as_expr(expr), latex, dim
        self.order = next(_CREATED)
        self.shape = self.expr.shape

    def children(self) -> tuple[Expr, ...]:
        return (self.expr,)


# --------------------------------------------------------------------------- constructors
def as_expr(x: Any) -> Expr:
    """``x`` as a block expression: an :class:`Expr` as is, numbers and arrays as :class:`Const`.

    Raises
    ------
    MCPInputError
        For sympy objects (entrywise symbols do not mix with blocks) and other non-numeric input.
    """
    if isinstance(x, Expr):
        return x
    if isinstance(x, sp.Basic) or (isinstance(x, np.ndarray) and x.dtype == object):
        raise MCPInputError(
            f"cannot mix sympy expressions with block expressions ({x!r}); declare the blocks with "
            "add_variable_block / add_parameter_block or take them with MCP.ref(name)"
        )
    if isinstance(x, bool) or x is None:
        raise MCPInputError(f"not a number or array: {x!r}")
    return Const(x)


def const(value: Any, name: str | None = None, latex: str | None = None, dim: Any = None) -> Const:
    """A numeric constant; with a ``name`` the printer shows it by name and lists it as given."""
    return Const(value, name, latex, dim)


def named(name: str, expr: Any, latex: str | None = None, dim: Any = None) -> Named:
    """A named definition ``name = expr`` (printed by name; the printer lists it under "where")."""
    return Named(name, as_expr(expr), latex, dim)


def maximum(x: Any, y: Any) -> Maximum:
    r"""Elementwise :math:`\max(x, y)` (``maximum(x, 0)`` is the positive part)."""
    return Maximum(as_expr(x), as_expr(y))


def diag(x: Any) -> Diag:
    r""":math:`\operatorname{diag}(x)`."""
    return Diag(as_expr(x))


def total(x: Any) -> Total:
    r""":math:`\mathbf 1^T x`."""
    return Total(as_expr(x))


def _func(name: str) -> Callable[[Any], Func]:
    def fn(x: Any) -> Func:
        return Func(name, as_expr(x))

    fn.__name__ = name.lower()
    fn.__doc__ = f"Elementwise ``{name.lower()}``."
    return fn


sin, cos, tan, exp, log = (_func(n) for n in ("sin", "cos", "tan", "exp", "log"))
sqrt, tanh, sinh, cosh, atan = (_func(n) for n in ("sqrt", "tanh", "sinh", "cosh", "atan"))


def _add(a: Expr, b: Expr, sign: int) -> Add:
    """``a ± b`` keeping the written grouping: a left-hand sum is extended, a right-hand one is kept."""
    left = a.terms if isinstance(a, Add) else ((1, a),)
    return Add((*left, (sign, b)))


def _broadcast(args: Sequence[Expr], op: str) -> Shape:
    mats = [a for a in args if a.is_matrix]
    if mats:
        if len(mats) != len(args) or any(m.shape != mats[0].shape for m in mats):
            raise ShapeError(
                f"'{op}' of shapes {[a.shape for a in args]}: matrices add only to matrices of one shape"
            )
        return mats[0].shape
    sizes = {a.shape[0] for a in args} - {1}
    if len(sizes) > 1:
        raise ShapeError(
            f"'{op}' of vectors of lengths {[a.shape[0] for a in args]} (only length 1 broadcasts)"
        )
    return (sizes.pop() if sizes else 1,)


# ------------------------------------------------------------------------------ traversal
def walk(e: Expr) -> Iterator[Expr]:
    """Every node of ``e`` once (pre-order, shared sub-expressions visited once)."""
    seen: set[int] = set()
    stack = [e]
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        yield x
        stack.extend(reversed(x.children()))


def definitions(e: Expr) -> list[Named]:
    """The :class:`Named` definitions used by ``e`` in the order they were created (so each comes
    after the definitions it uses)."""
    out: list[Named] = []
    seen: set[int] = set()

    def visit(x: Expr) -> None:
        if id(x) in seen:
            return
        seen.add(id(x))
        for c in x.children():
            visit(c)
        if isinstance(x, Named):
            out.append(x)

    visit(e)
    return sorted(out, key=lambda d: d.order)


def variable_names(e: Expr) -> list[str]:
    """Names of the variable blocks ``e`` depends on, in order of first appearance."""
    out: dict[str, None] = {}
    for x in walk(e):
        if isinstance(x, Var):
            out.setdefault(x.block.name)
    return list(out)


def is_affine(e: Expr) -> bool:
    r"""``e`` is affine in the variables (parameters may enter anywhere): :math:`F = A(p) z + c(p)`."""
    memo: dict[int, tuple[bool, bool]] = {}

    def rec(x: Expr) -> tuple[bool, bool]:  # (depends on variables, affine)
        if id(x) in memo:
            return memo[id(x)]
        if isinstance(x, Var):
            r = (True, True)
        elif isinstance(x, (Param, Const)):
            r = (False, True)
        elif isinstance(x, (Add, Neg, Transpose, Named, Total, Diag)):
            parts = [rec(c) for c in x.children()]
            r = (any(d for d, _ in parts), all(a for _, a in parts))
        elif isinstance(x, (Mul, MatMul)):
            (da, aa), (db, ab) = rec(x.a), rec(x.b)
            r = (da or db, (not da and ab) or (not db and aa) if aa and ab else False)
        elif isinstance(x, Div):
            (da, aa), (db, _) = rec(x.a), rec(x.b)
            r = (da or db, aa and not db)
        elif isinstance(x, Pow):
            d, a = rec(x.arg)
            r = (d, not d or (x.k == 1 and a))
        elif isinstance(x, Maximum):
            d = rec(x.a)[0] or rec(x.b)[0]
            r = (d, not d)
        else:  # Func: affine only when constant
            d, _ = rec(x.children()[0])
            r = (d, not d)
        memo[id(x)] = r
        return r

    return rec(e)[1]


def matrix_leaves(e: Expr) -> list[Param | Const]:
    """The matrix-valued leaves (matrix parameters and matrix constants) of ``e``."""
    return [x for x in walk(e) if isinstance(x, (Param, Const)) and x.is_matrix]


def leaf_nnz(leaf: Param | Const) -> int:
    """Stored entries of a matrix leaf (all entries when dense)."""
    if isinstance(leaf, Param):
        return int(leaf.block.size)
    return int(leaf.value.nnz) if sps.issparse(leaf.value) else int(leaf.value.size)


# ------------------------------------------------------------------------------ structure
def leaf_csr(leaf: Param | Const) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""``(indptr, indices, pos)``: the CSR structure of a matrix leaf and, per stored entry, its
    position in the leaf's flat storage (the parameter block's entries, or the constant's values).

    A dense matrix parameter is stored row-major (``pos = i*n + j``); a sparse one stores its
    pattern's entries in CSR order (``pos = 0 .. nnz-1``); see
    :class:`~mcpkit.problems.variables.MatrixParameterBlock`.
    """
    if isinstance(leaf, Param):
        b = leaf.block
        pat = getattr(b, "pattern", None)
        if pat is not None:
            return pat.indptr, pat.indices, np.arange(b.size)
        m, n = leaf.shape
        return np.arange(0, m * n + 1, n), np.tile(np.arange(n), m), np.arange(m * n)
    if sps.issparse(leaf.value):
        C = leaf.value
        return C.indptr, C.indices, np.arange(C.nnz)
    m, n = leaf.shape
    rows, cols = np.nonzero(leaf.value)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=m))])
    return indptr, cols, rows * n + cols


def leaf_csc(leaf: Param | Const) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(indptr, indices, pos)`` of the transposed leaf in CSR form (the leaf's CSC structure)."""
    indptr, indices, pos = leaf_csr(leaf)
    m, n = leaf.shape
    A = sps.csr_array((np.arange(len(indices), dtype=float) + 1.0, indices, indptr), shape=(m, n))
    T = sps.csr_array(A.T)
    T.sort_indices()
    order = T.data.astype(np.int64) - 1
    return T.indptr, T.indices, pos[order]


# ------------------------------------------------------------------------------ evaluation
class Backend:
    """Primitive operations of an evaluator target (CasADi, sympy rows, Pyomo rows, NumPy)."""

    def var(self, block: VariableBlock) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def param(self, block: ParameterBlock) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def const(self, values: np.ndarray) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def apply_leaf(self, leaf: Param | Const, y: Any, transpose: bool) -> Any:  # pragma: no cover
        raise NotImplementedError

    def add(self, a: Any, b: Any) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def sub(self, a: Any, b: Any) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def neg(self, a: Any) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def mul(self, a: Any, b: Any) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def div(self, a: Any, b: Any) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def pow(self, a: Any, k: int | float) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def func(self, name: str, a: Any) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def total(self, a: Any) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def maximum(self, a: Any, b: Any) -> Any:
        r""":math:`\max(a, b) = (a + b + |a - b|)/2` from the other primitives (backends may override)."""
        return self.div(
            self.add(self.add(a, b), self.func("Abs", self.sub(a, b))), self.const(np.array([2.0]))
        )


class Evaluator:
    r"""Evaluates vector expressions on a :class:`Backend`; matrices are only applied to vectors.

    Values are memoised per node, so a shared sub-expression or a :class:`Named` definition is
    evaluated once.
    """

    def __init__(self, backend: Backend) -> None:
        self.b = backend
        self._memo: dict[int, tuple[Expr, Any]] = {}

    def value(self, e: Expr) -> Any:
        """The value of the vector expression ``e``."""
        hit = self._memo.get(id(e))
        if hit is not None:
            return hit[1]
        if e.is_matrix:
            raise ShapeError(f"a matrix expression {e.shape} is used where a vector is needed: {e}")
        b = self.b
        if isinstance(e, Var):
            out = b.var(e.block)
        elif isinstance(e, Param):
            out = b.param(e.block)
        elif isinstance(e, Const):
            out = b.const(np.asarray(e.value, dtype=float))
        elif isinstance(e, Add):
            out = None
            for sign, t in e.terms:
                v = self.value(t)
                out = (
                    (v if sign > 0 else b.neg(v))
                    if out is None
                    else (b.add(out, v) if sign > 0 else b.sub(out, v))
                )
        elif isinstance(e, Neg):
            out = b.neg(self.value(e.arg))
        elif isinstance(e, Mul):
            out = b.mul(self.value(e.a), self.value(e.b))
        elif isinstance(e, Div):
            out = b.div(self.value(e.a), self.value(e.b))
        elif isinstance(e, Pow):
            out = b.pow(self.value(e.arg), e.k)
        elif isinstance(e, Func):
            out = b.func(e.name, self.value(e.arg))
        elif isinstance(e, Total):
            out = b.total(self.value(e.arg))
        elif isinstance(e, Maximum):
            out = b.maximum(self.value(e.a), self.value(e.b))
        elif isinstance(e, MatMul):
            out = self.apply(e.a, self.value(e.b), False)
        elif isinstance(e, Named):
            out = self.value(e.expr)
        else:  # pragma: no cover - closed set of nodes
            raise TypeError(f"cannot evaluate {type(e).__name__}")
        self._memo[id(e)] = (e, out)
        return out

    def apply(self, A: Expr, y: Any, transpose: bool) -> Any:
        r""":math:`Ay` (or :math:`A^Ty`) for a matrix expression ``A`` and a vector value ``y``."""
        b = self.b
        if not A.is_matrix:  # a vector x as the column (n, 1): x y for y of length 1, x^T y otherwise
            x = self.value(A)
            return b.total(b.mul(x, y)) if transpose else b.mul(x, y)
        if isinstance(A, (Param, Const)):
            return b.apply_leaf(A, y, transpose)
        if isinstance(A, Transpose):
            return self.apply(A.arg, y, not transpose)
        if isinstance(A, MatMul):
            if transpose:
                return self.apply(A.b, self.apply(A.a, y, True), True)
            return self.apply(A.a, self.apply(A.b, y, False), False)
        if isinstance(A, Add):
            out = None
            for sign, t in A.terms:
                v = self.apply(t, y, transpose)
                out = (
                    (v if sign > 0 else b.neg(v))
                    if out is None
                    else (b.add(out, v) if sign > 0 else b.sub(out, v))
                )
            return out
        if isinstance(A, Neg):
            return b.neg(self.apply(A.arg, y, transpose))
        if isinstance(A, Mul):
            s, M = (A.b, A.a) if A.a.is_matrix else (A.a, A.b)
            return b.mul(self.value(s), self.apply(M, y, transpose))
        if isinstance(A, Div):
            return b.div(self.apply(A.a, y, transpose), self.value(A.b))
        if isinstance(A, Diag):
            return b.mul(self.value(A.arg), y)
        if isinstance(A, Named):
            return self.apply(A.expr, y, transpose)
        raise TypeError(f"cannot apply {type(A).__name__}")  # pragma: no cover - closed set


class RowsBackend(Backend):
    """A backend whose values are Python lists of scalar objects (sympy, Pyomo or floats).

    ``coefficients(leaf)`` gives the scalar objects of a matrix leaf's flat storage; ``zero`` and
    ``quicksum`` build row sums over the stored entries only (time :math:`O(\\mathrm{nnz})`).
    """

    zero: Any = 0.0

    def __init__(self) -> None:
        self._structure: dict[tuple[int, bool], tuple[list[int], list[int], list[Any], Expr]] = {}

    def number(self, x: float) -> Any:
        return float(x)

    def coefficients(self, leaf: Param | Const) -> Sequence[Any]:  # pragma: no cover - interface
        raise NotImplementedError

    def quicksum(self, terms: list[Any]) -> Any:
        out = self.zero
        for t in terms:
            out = out + t
        return out

    def const(self, values: np.ndarray) -> list[Any]:
        return [self.number(v) for v in values.tolist()]

    def apply_leaf(self, leaf: Param | Const, y: Any, transpose: bool) -> list[Any]:
        key = (id(leaf), transpose)
        if key not in self._structure:
            indptr, indices, pos = leaf_csc(leaf) if transpose else leaf_csr(leaf)
            coef = self.coefficients(leaf)
            self._structure[key] = (indptr.tolist(), indices.tolist(), [coef[k] for k in pos.tolist()], leaf)
        indptr, indices, coefs, _ = self._structure[key]
        out = []
        for r in range(len(indptr) - 1):
            terms = [
                coefs[k] * y[indices[k]]
                for k in range(indptr[r], indptr[r + 1])
                if not _is_zero(y[indices[k]]) and not _is_zero(coefs[k])
            ]
            out.append(self.quicksum(terms) if terms else self.zero)
        return out

    def add(self, a: list[Any], b: list[Any]) -> list[Any]:
        return [x + y for x, y in _pairs(a, b)]

    def sub(self, a: list[Any], b: list[Any]) -> list[Any]:
        return [x - y for x, y in _pairs(a, b)]

    def neg(self, a: list[Any]) -> list[Any]:
        return [-x for x in a]

    def mul(self, a: list[Any], b: list[Any]) -> list[Any]:
        return [x * y for x, y in _pairs(a, b)]

    def div(self, a: list[Any], b: list[Any]) -> list[Any]:
        return [x / y for x, y in _pairs(a, b)]

    def pow(self, a: list[Any], k: int | float) -> list[Any]:
        return [x**k for x in a]

    def total(self, a: list[Any]) -> list[Any]:
        return [self.quicksum(list(a))]


def _is_zero(x: Any) -> bool:
    if isinstance(x, (int, float)):
        return x == 0
    return isinstance(x, sp.Basic) and x.is_zero is True


def _pairs(a: list[Any], b: list[Any]) -> Any:
    if len(a) == len(b):
        return zip(a, b, strict=True)
    if len(a) == 1:
        return ((a[0], y) for y in b)
    return ((x, b[0]) for x in a)


def _sympy_number(x: float) -> sp.Expr:
    return sp.Integer(int(x)) if float(x).is_integer() and abs(x) < 2**53 else sp.Float(x)


class SympyRows(RowsBackend):
    """Values as lists of sympy expressions in the blocks' symbols (for :func:`expand`)."""

    zero = sp.Integer(0)

    def var(self, block: VariableBlock) -> list[sp.Expr]:
        return list(block.symbols)

    def param(self, block: ParameterBlock) -> list[sp.Expr]:
        return list(block.symbols)

    def number(self, x: float) -> sp.Expr:
        return _sympy_number(x)

    def coefficients(self, leaf: Param | Const) -> Sequence[Any]:
        if isinstance(leaf, Param):
            return leaf.block.symbols
        data = leaf.value.data if sps.issparse(leaf.value) else leaf.value.reshape(-1)
        return [_sympy_number(v) for v in data.tolist()]

    def quicksum(self, terms: list[Any]) -> Any:
        return sp.Add(*terms)

    def func(self, name: str, a: list[Any]) -> list[Any]:
        f = getattr(sp, name)
        return [f(x) for x in a]

    def maximum(self, a: list[Any], b: list[Any]) -> list[Any]:
        return [sp.Max(x, y) for x, y in _pairs(a, b)]


def expand(e: Expr) -> tuple[sp.Expr, ...]:
    """One sympy expression per row of the vector expression ``e`` (entrywise; small problems)."""
    return tuple(sp.sympify(x) for x in Evaluator(SympyRows()).value(e))


class OperatorArithmetic(Backend):
    """The arithmetic primitives as Python's operators, for targets whose values overload them
    (NumPy arrays, CasADi ``SX``/``MX``/``DM``)."""

    def add(self, a: Any, b: Any) -> Any:
        return a + b

    def sub(self, a: Any, b: Any) -> Any:
        return a - b

    def neg(self, a: Any) -> Any:
        return -a

    def mul(self, a: Any, b: Any) -> Any:
        return a * b

    def div(self, a: Any, b: Any) -> Any:
        return a / b

    def pow(self, a: Any, k: int | float) -> Any:
        return a**k


class NumpyValues(OperatorArithmetic):
    r"""Numerical evaluation at given ``z`` and ``p`` (stacked vectors): for tests and checks."""

    def __init__(self, z: np.ndarray, p: np.ndarray) -> None:
        self.z, self.p = np.asarray(z, dtype=float), np.asarray(p, dtype=float)

    def var(self, block: VariableBlock) -> np.ndarray:
        return self.z[block.slice]

    def param(self, block: ParameterBlock) -> np.ndarray:
        return self.p[block.slice]

    def const(self, values: np.ndarray) -> np.ndarray:
        return values

    def apply_leaf(self, leaf: Param | Const, y: Any, transpose: bool) -> np.ndarray:
        indptr, indices, pos = leaf_csr(leaf)
        flat = self.p[leaf.block.slice] if isinstance(leaf, Param) else None
        if flat is None:
            data = leaf.value.data if sps.issparse(leaf.value) else leaf.value.reshape(-1)
        else:
            data = flat
        A = sps.csr_array((data[pos], indices, indptr), shape=leaf.shape)
        return (A.T @ y) if transpose else (A @ y)

    def func(self, name: str, a: Any) -> Any:
        return {"Abs": np.abs, "atan": np.arctan}.get(name, getattr(np, name, None))(a)

    def total(self, a: Any) -> Any:
        return np.array([np.sum(a)])

    def maximum(self, a: Any, b: Any) -> Any:
        return np.maximum(a, b)


def evaluate(e: Expr, z: Any, p: Any) -> np.ndarray:
    """Numerical value of the vector expression ``e`` at stacked ``z`` and ``p`` (NumPy)."""
    return np.asarray(Evaluator(NumpyValues(z, p)).value(e), dtype=float).reshape(-1)
