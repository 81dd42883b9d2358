r"""Printing of block expressions (:mod:`mcpkit.problems.blocks`) as written, in text or LaTeX.

An expression :math:`W_n^T \nu + \psi_n / h` prints the way it was declared: leaves by their
block's name (text) or LaTeX stem, transposes and matrix products as written (``Wn.T @ v`` in text,
:math:`W_n^T \nu` in LaTeX), elementwise products of vectors as :math:`\circ`, with the fewest
parentheses the operator precedences allow. :func:`sym_shape` and :func:`space` print shapes with
their size labels (:math:`\mathbb{R}^{n_c}`).

This is what :meth:`mcpkit.problems.blocks.Expr.__str__` and ``_repr_latex_`` call, so it imports nothing
of mcpkit but the expressions and the block declarations they refer to.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import sympy as sp
from sympy.printing.precedence import PRECEDENCE
from sympy.printing.str import StrPrinter

from mcpkit.problems import blocks as bx
from mcpkit.problems.hooks import Hook, provide
from mcpkit.problems.variables import MatrixParameterBlock, default_latex


def format_number(v: float, latex: bool) -> str:
    """A number as printed: ``inf`` / :math:`\\infty`, else ``%g`` (text) or sympy's LaTeX."""
    if v == math.inf:
        return r"\infty" if latex else "inf"
    if v == -math.inf:
        return r"-\infty" if latex else "-inf"
    return sp.latex(sp.nsimplify(v, rational=False)) if latex else f"{v:g}"


def tidy_numbers(e: sp.Expr) -> sp.Expr:
    """``e`` with integral floats as integers and other floats to 6 significant digits.

    ``2.0*z_0 + 1.0*z_1 - 1.0`` becomes ``2*z_0 + z_1 - 1`` (sympy drops the unit coefficient
    when the product is rebuilt); ``0.333333333333333`` becomes ``0.333333``.
    """
    subs: dict[sp.Expr, sp.Expr] = {}
    for a in e.atoms(sp.Float):
        v = float(a)
        if math.isfinite(v) and v == round(v) and abs(v) < 1e15:
            subs[a] = sp.Integer(round(v))
        elif math.isfinite(v):
            subs[a] = sp.Float(float(f"{v:.6g}"), 6)
    return e.xreplace(subs) if subs else e


class _SpacedPrinter(StrPrinter):
    """sympy's text printer with a space, not ``*``, after a numeric coefficient (``2 z[0]``)."""

    def _print_Mul(self, expr: sp.Mul) -> str:
        c, rest = expr.as_coeff_Mul()
        if (c.is_Integer or c.is_Float) and c not in (1, -1) and rest is not sp.S.One:
            return f"{self._print(c)} {self.parenthesize(rest, PRECEDENCE['Mul'], strict=True)}"
        return super()._print_Mul(expr)


def sympy_text(e: sp.Expr) -> str:
    """A sympy expression as text, ``2 z[0] + z[1] - 1`` (:func:`tidy_numbers`, a space after numbers)."""
    return _SpacedPrinter({"full_prec": False}).doprint(tidy_numbers(e))


def sympy_latex(e: sp.Expr, symbol_names: dict[sp.Symbol, str] | None = None) -> str:
    """A sympy expression in LaTeX with :func:`tidy_numbers`: ``2 z_{0} + z_{1} - 1``."""
    return sp.latex(tidy_numbers(e), symbol_names=symbol_names or {}, full_prec=False)


_ADD, _NEG, _MUL, _POW, _ATOM = 1, 2, 3, 4, 5
_LATEX_FUNCS = {
    "sin": r"\sin", "cos": r"\cos", "tan": r"\tan", "exp": r"\exp", "log": r"\log", "tanh": r"\tanh",
    "sinh": r"\sinh", "cosh": r"\cosh", "atan": r"\arctan",
}  # fmt: skip

Label = str | int
Rename = Callable[[bx.Expr, str, bool], str]
"""``rename(leaf, printed name, latex) -> printed name`` for :class:`~mcpkit.problems.blocks.Var`,
:class:`~mcpkit.problems.blocks.Param` and :class:`~mcpkit.problems.blocks.Named` leaves."""


def sym_shape(e: bx.Expr) -> tuple[Label, ...]:
    """Printed shape of a block expression: per axis its size label (``"n_c"``) or its size."""
    if isinstance(e, (bx.Var, bx.Param)):
        b = e.block
        if isinstance(b, MatrixParameterBlock):
            return tuple(d if d is not None else s for d, s in zip(b.dims, b.shape, strict=True))
        return (b.dim if b.dim is not None else b.size,)
    if isinstance(e, (bx.Const, bx.Named)) and e.dim is not None:
        dims = (e.dim,) if isinstance(e.dim, str) else tuple(e.dim)
        return tuple(d if d is not None else s for d, s in zip(dims, e.shape, strict=True))
    if isinstance(e, bx.Named):
        return sym_shape(e.expr)
    if isinstance(e, bx.Const):
        return tuple(e.shape)
    if isinstance(e, bx.MatMul):
        return sym_shape(e.a)[:1] + sym_shape(e.b)[1:]
    if isinstance(e, bx.Transpose):
        inner = sym_shape(e.arg)
        return (inner[1], inner[0]) if len(inner) == 2 else (1, inner[0])
    if isinstance(e, bx.Diag):
        d = sym_shape(e.arg)[0]
        return (d, d)
    if isinstance(e, bx.Total):
        return (1,)
    parts = [sym_shape(c) for c in e.children() if c.shape == e.shape]
    for axis in parts:  # prefer a labelled operand of the result's shape
        if any(isinstance(d, str) for d in axis):
            return axis
    return parts[0] if parts else tuple(e.shape)


def _vectorish(e: bx.Expr) -> bool:
    """A vector with more than one entry or a size label (so :math:`\\circ` marks its products)."""
    if e.is_matrix:
        return False
    d = sym_shape(e)[0]
    return isinstance(d, str) or d > 1


def _label(d: Label, latex: bool) -> str:
    if not latex:
        return str(d)
    return str(d).replace("*", " ") if isinstance(d, str) else str(d)


def space(shape: tuple[Label, ...], latex: bool) -> str:
    r"""``R^n_c`` / ``\mathbb{R}^{n_c}`` for a printed shape (``R`` for a scalar)."""
    R = r"\mathbb{R}" if latex else "R"
    if len(shape) == 1:
        d = shape[0]
        if d == 1:
            return R
        if latex:
            return f"{R}^{{{_label(d, True)}}}"
        txt = str(d)
        return f"{R}^{txt}" if txt.isidentifier() or txt.isdigit() else f"{R}^({txt})"
    r, c = (_label(d, latex) for d in shape)
    return f"{R}^{{{r} \\times {c}}}" if latex else f"{R}^({r} x {c})"


def _base(s: str, prec: int, need: int, latex: bool) -> str:
    if prec < need:
        return rf"\left({s}\right)" if latex else f"({s})"
    return s


def _sup(stem: str) -> str:
    """A LaTeX stem safe to put a superscript on (braced when it has one already)."""
    return f"{{{stem}}}" if "^" in stem else stem


def _fmt(e: bx.Expr, latex: bool, rename: Rename | None = None) -> tuple[str, int]:
    """``(string, precedence)`` of a block expression as written (leaf names through ``rename``)."""
    if isinstance(e, (bx.Var, bx.Param)):
        leaf = e.block.latex if latex else e.block.name
        return (leaf if rename is None else rename(e, leaf, latex)), _ATOM
    if isinstance(e, bx.Named):
        leaf = (e.latex or default_latex(e.name)) if latex else e.name
        return (leaf if rename is None else rename(e, leaf, latex)), _ATOM
    if isinstance(e, bx.Const):
        if e.name is not None:
            return ((e.latex or default_latex(e.name)) if latex else e.name), _ATOM
        if e.shape == (1,):
            v = e.number
            return format_number(v, latex), (_ATOM if v >= 0 else _NEG)
        if e.is_matrix:
            m, n = e.shape
            return (rf"C_{{{m}\times{n}}}" if latex else f"const({m}x{n})"), _ATOM
        vals = ", ".join(format_number(float(x), latex) for x in np.asarray(e.value)[:6])
        more = ", …" if e.shape[0] > 6 else ""
        return (rf"({vals}{more})^{{T}}" if latex else f"[{vals}{more}]"), _ATOM
    if isinstance(e, bx.Add):
        out = []
        for k, (sign, t) in enumerate(e.terms):
            ts, tp = _fmt(t, latex, rename)
            if k == 0:
                out.append(ts if sign > 0 else "-" + _base(ts, tp, _MUL, latex))
            else:
                out.append((" + " if sign > 0 else " - ") + _base(ts, tp, _MUL, latex))
        return "".join(out), _ADD
    if isinstance(e, bx.Neg):
        s, p = _fmt(e.arg, latex, rename)
        return "-" + _base(s, p, _MUL, latex), _NEG
    if isinstance(e, (bx.Mul, bx.Div, bx.MatMul)):
        (a, pa), (b, pb) = _fmt(e.a, latex, rename), _fmt(e.b, latex, rename)
        if isinstance(e, bx.Div) and latex and not (_vectorish(e.a) and _vectorish(e.b)):
            return rf"\frac{{{a}}}{{{b}}}", _ATOM
        # a matrix product inside an elementwise one (and vice versa) is parenthesised for reading
        mixed = (bx.MatMul,) if not isinstance(e, bx.MatMul) else (bx.Mul, bx.Div)
        pa = _MUL - 1 if isinstance(e.a, mixed) else pa
        left, right = _base(a, pa, _MUL, latex), _base(b, pb, _MUL + 1, latex)
        if not latex:
            op = {bx.Mul: " * ", bx.Div: " / ", bx.MatMul: " @ "}[type(e)]
        elif isinstance(e, bx.Div):
            op = r" \oslash "
        elif isinstance(e, bx.Mul) and _vectorish(e.a) and _vectorish(e.b):
            op = r" \circ "
        elif isinstance(e, bx.Mul) and isinstance(e.b, bx.Const) and e.b.is_number:
            op = r" \cdot "
        else:
            op = " "
        return left + op + right, _MUL
    if isinstance(e, bx.Pow):
        s, p = _fmt(e.arg, latex, rename)
        k = e.k
        if not latex:
            return _base(s, p, _ATOM, latex) + "**" + (f"{k:g}" if k >= 0 else f"({k:g})"), _POW
        leaf = isinstance(e.arg, (bx.Var, bx.Param, bx.Const, bx.Named, bx.Transpose))
        base = _sup(s) if leaf and p >= _ATOM else _base(s, _ADD, _ATOM, latex)
        ks = f"{k:g}"
        return base + (f"^{{\\circ {ks}}}" if _vectorish(e.arg) else f"^{{{ks}}}"), _POW
    if isinstance(e, bx.Func):
        s, _ = _fmt(e.arg, latex, rename)
        if not latex:
            return f"{'abs' if e.name == 'Abs' else e.name}({s})", _ATOM
        if e.name == "sqrt":
            return rf"\sqrt{{{s}}}", _ATOM
        if e.name == "Abs":
            return rf"\left|{s}\right|", _ATOM
        return rf"{_LATEX_FUNCS[e.name]}\left({s}\right)", _ATOM
    if isinstance(e, bx.Maximum):
        (a, _), (b, _) = _fmt(e.a, latex, rename), _fmt(e.b, latex, rename)
        return (rf"\max\left({a}, {b}\right)" if latex else f"max({a}, {b})"), _ATOM
    if isinstance(e, bx.Transpose):
        s, p = _fmt(e.arg, latex, rename)
        if not latex:
            return _base(s, p, _ATOM, latex) + ".T", _ATOM
        return (_sup(s) if p >= _ATOM else _base(s, p, _ATOM, latex)) + "^{T}", _ATOM
    if isinstance(e, bx.Diag):
        s, _ = _fmt(e.arg, latex, rename)
        return (rf"\operatorname{{diag}}\left({s}\right)" if latex else f"diag({s})"), _ATOM
    if isinstance(e, bx.Total):
        s, p = _fmt(e.arg, latex, rename)
        if latex:
            return r"\mathbf{1}^{T} " + _base(s, p, _MUL + 1, latex), _MUL
        return f"total({s})", _ATOM
    raise TypeError(f"cannot print {type(e).__name__}")  # pragma: no cover - closed set


def expr_text(e: bx.Expr, rename: Rename | None = None) -> str:
    """A block expression as written, in Python syntax (``Wn.T @ v + psi_h``).

    ``rename(leaf, name, latex)`` may replace the printed name of a variable, parameter or
    named definition (a horizon prints ``v_k`` for the step's ``v``).
    """
    return _fmt(e, False, rename)[0]


def expr_latex(e: bx.Expr, rename: Rename | None = None) -> str:
    r"""A block expression in LaTeX (``W_n^{T} \nu + \psi_n/h``; :math:`\circ` for vector products)."""
    return _fmt(e, True, rename)[0]


provide(Hook.EXPR_TEXT, expr_text)
provide(Hook.EXPR_LATEX, expr_latex)
