r"""CasADi expressions of an MPCC as printed formulas (:mod:`mcpkit.printing.mpcc`).

Rows are replayed from CasADi into sympy (:func:`~mcpkit.lowering.casadi_sympy.casadi_to_sympy`)
only when shown and only up to :data:`~mcpkit.printing.mpcc.cases.MAX_OPERATIONS` operations;
a vector too long to show prints a summary from its Jacobian sparsity (:class:`CasadiRows`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import casadi as ca
import numpy as np
import sympy as sp

from mcpkit.errors import MCPInputError
from mcpkit.lowering.casadi_sympy import casadi_to_sympy
from mcpkit.printing.expressions import format_number, sympy_latex, sympy_text
from mcpkit.printing.mpcc.cases import MAX_OPERATIONS, plural, step_latex
from mcpkit.problems.mpcc import affine_in
from mcpkit.problems.segments import Formula, Segment
from mcpkit.problems.views import MPCCView


# ------------------------------------------------------------------ the MPCC's own names
def vector_name(v: Any, default: str) -> str:
    """The name a problem gives its vector ``v`` (a CasADi column): an MX symbol's name, or the common
    stem of SX entries named ``stem_0, stem_1, ...`` (a problem file's ``w``); else ``default``."""
    n = int(v.numel())
    if isinstance(v, ca.MX):
        return str(v.name()) if v.is_symbolic() else default
    if n == 0 or not all(v[i].is_symbolic() for i in range(min(n, 3))):
        return default
    first = str(v[0].name())
    stem = re.sub(r"_0$", "", first)
    if stem == first:
        return first if n == 1 and re.fullmatch(r"[A-Za-z]\w*", first) else default
    ok = all(v[i].is_symbolic() and str(v[i].name()) == f"{stem}_{i}" for i in range(n))
    return stem if ok and re.fullmatch(r"[A-Za-z]\w*", stem) else default


# ------------------------------------------------------------------ CasADi expressions as formulas
def _replay(col: Any, inputs: Sequence[Any], names: Sequence[str], latex: bool) -> list[str] | None:
    """The entries of the SX column ``col`` as formulas in the scalar symbols ``inputs`` (printed as
    ``names``); ``None`` when the column takes more than :data:`MAX_OPERATIONS` operations or uses
    one sympy cannot state."""
    fun = ca.Function("rows", [ca.vertcat(*inputs) if len(inputs) else ca.SX(0, 1)], [col])
    if fun.n_instructions() > MAX_OPERATIONS + 2 * col.numel() + len(inputs):
        return None
    syms = [sp.Symbol(f"_e{k}") for k in range(len(inputs))]
    try:
        exprs = casadi_to_sympy(fun, [syms])[0]
    except MCPInputError:
        return None
    out = []
    if latex:
        printed = dict(zip(syms, names, strict=True))
        for e in exprs:
            out.append(sympy_latex(e, printed))
    else:
        subs = {s: sp.Symbol(n) for s, n in zip(syms, names, strict=True)}
        for e in exprs:
            out.append(sympy_text(e.xreplace(subs)))
    return out


def casadi_formulas(expr: Any, symbols: Sequence[tuple[Any, Formula]], width: int = 100) -> Formula | None:
    r"""A CasADi SX expression as ``(text, LaTeX)`` in named scalar symbols, or ``None``.

    ``symbols`` pairs every scalar SX symbol the expression may use with its printed name. A
    column prints as ``[e0, e1, ...]`` (LaTeX :math:`(e_0, e_1, \dots)^T`). ``None`` when the
    text is longer than ``width``, the expression is too large (:data:`MAX_OPERATIONS`) or it
    uses a symbol not in ``symbols``.
    """
    e = ca.vec(ca.SX(expr))
    used: list[tuple[Any, Formula]] = []
    if symbols and e.numel():
        col = ca.vertcat(*[s for s, _ in symbols])
        used = [sym for sym, d in zip(symbols, ca.which_depends(e, col, 1, False), strict=True) if d]
    inputs = [s for s, _ in used]
    try:
        text = _replay(e, inputs, [nm[0] for _, nm in used], False)
        tex = _replay(e, inputs, [nm[1] for _, nm in used], True)
    except RuntimeError:  # a free symbol: the expression uses a symbol that was not named
        return None
    if text is None or tex is None:
        return None
    if e.numel() == 1:
        t, lt = text[0], tex[0]
    else:
        t, lt = "[" + ", ".join(text) + "]", r"\left(" + ", ".join(tex) + r"\right)^{T}"
    return None if len(t) > width else (t, lt)


@dataclass(frozen=True)
class _Jacobian:
    """Structure of one of ``f, g, G, H`` (or some of its entries) with respect to ``x``."""

    rows: int
    cols: int
    nnz: int
    affine: bool

    def text(self, what: str, x: str = "x") -> str:
        form = "affine" if self.affine else "nonlinear"
        return f"∂{what}/∂{x} is {self.rows}x{self.cols} with {plural(self.nnz, 'nonzero')}, {form} in {x}"

    def latex(self, what: str, x: str = "x") -> str:
        form = "affine" if self.affine else "nonlinear"
        return (
            rf"\partial {what}/\partial {x} \in \mathbb{{R}}^{{{self.rows} \times {self.cols}}}"
            rf"\ \text{{with {plural(self.nnz, 'nonzero')}, {form} in }} {x}"
        )


class CasadiRows:
    """Printed CasADi expressions of an MPCC: only the rows asked for are replayed into sympy.

    Entries of :math:`x` and :math:`p` print by their segment names (``w_x[0]``; a per-step
    segment at step 3: ``w_x_3[0]``) when the blocks name them, else by their CasADi names (an
    MX problem: ``x_0, ...``). MX expressions are expanded to SX once, on first use.
    """

    def __init__(self, mpcc: MPCCView, latex: bool, width: int) -> None:
        self.m, self.latex, self.width = mpcc, latex, width
        self._sx: dict[str, Any] | None = None
        self._failed = False
        segs: dict[str, list[tuple[int, int, Segment, int]]] = {"x": [], "p": []}
        blocks = mpcc.block_structure()
        for seg in blocks.segments if blocks is not None else ():
            if seg.kind in segs:
                segs[seg.kind] += [(sl.start, sl.stop, seg, k) for k, sl in enumerate(seg.slices)]
        self._segs = {k: sorted(v, key=lambda t: t[0]) for k, v in segs.items()}
        self._starts = {k: [t[0] for t in v] for k, v in self._segs.items()}
        self.vector = {"x": vector_name(mpcc.x, "x"), "p": vector_name(mpcc.p, "p")}
        """Printed names of the vectors x and p: the problem's own (:func:`vector_name`)."""

    def _load(self) -> dict[str, Any] | None:
        if self._sx is not None or self._failed:
            return self._sx
        m = self.m
        if isinstance(m.x, ca.SX):
            self._sx = {"x": m.x, "p": m.p, "f": m.f, "g": m.g, "G": m.G, "H": m.H}
            return self._sx
        xs, ps = ca.SX.sym("x", m.x.numel()), ca.SX.sym("p", m.p.numel())
        try:
            fun = ca.Function("mpcc_print", [m.x, m.p], [m.f, m.g, m.G, m.H]).expand()
        except RuntimeError:
            self._failed = True
            return None
        f, g, G, H = fun(xs, ps)
        self._sx = {"x": xs, "p": ps, "f": f, "g": g, "G": G, "H": H}
        return self._sx

    def entry_name(self, kind: str, i: int) -> str:
        """Printed name of entry ``i`` of ``x`` or ``p``."""
        segs = self._segs[kind]
        j = int(np.searchsorted(self._starts[kind], i, side="right")) - 1
        if j >= 0 and segs[j][0] <= i < segs[j][1]:
            start, stop, seg, k = segs[j]
            base = f"{seg.name}_{k}" if seg.per_step else seg.name
            tex = step_latex(seg.tex, k) if seg.per_step else seg.tex
            if stop - start == 1:
                return tex if self.latex else base
            return step_latex(tex, i - start) if self.latex else f"{base}[{i - start}]"
        sx = self._load()
        if sx is not None and isinstance(self.m.x, ca.SX):
            name = str(sx[kind][i].name())  # a file's w_0, ..., beside its vector w (:attr:`vector`)
        else:
            name = f"{self.vector[kind]}_{i}"
        return sp.latex(sp.Symbol(name)) if self.latex else name

    def rows(self, what: str, idx: Sequence[int]) -> list[str]:
        """The entries ``idx`` of ``f``, ``g``, ``G`` or ``H`` as formulas (by name when too large)."""
        sx = self._load()
        got = None
        if sx is not None and len(idx):
            col = ca.vertcat(*[sx[what][int(i)] for i in idx])
            dx = np.flatnonzero(ca.which_depends(col, sx["x"], 1, False)) if sx["x"].numel() else []
            dp = np.flatnonzero(ca.which_depends(col, sx["p"], 1, False)) if sx["p"].numel() else []
            if len(dx) + len(dp) <= MAX_OPERATIONS:  # more inputs than that never print
                inputs = [sx["x"][int(i)] for i in dx] + [sx["p"][int(i)] for i in dp]
                names = [self.entry_name("x", int(i)) for i in dx] + [
                    self.entry_name("p", int(i)) for i in dp
                ]
                got = _replay(col, inputs, names, self.latex)
        if got is None:
            return [rf"\langle {what}_{{{i}}} \rangle" if self.latex else f"<{what}[{i}]>" for i in idx]
        return [self.clip(s) for s in got]

    def clip(self, s: str) -> str:
        """A formula cut to the printing width (LaTeX: a note instead)."""
        if len(s) <= self.width:
            return s
        return r"\langle\text{long expression}\rangle" if self.latex else s[: self.width - 1] + "…"

    def jacobian(self, what: str, idx: np.ndarray | None = None) -> _Jacobian:
        m = self.m
        e = {"f": m.f, "g": m.g, "G": m.G, "H": m.H}[what]
        if idx is not None:
            e = e[[int(i) for i in idx]] if len(idx) else type(e)(0, 1)
        nx = int(m.x.numel())
        nnz = int(ca.jacobian_sparsity(e, m.x).nnz()) if nx and e.numel() else 0
        affine = affine_in(m.x, e)
        return _Jacobian(int(e.numel()), nx, nnz, affine)

    def summary(self, what: str, idx: np.ndarray | None = None) -> str:
        j = self.jacobian(what, idx)
        x = self.vector["x"]
        return j.latex(what, x) if self.latex else j.text(what, x)

    def objective(self) -> str:
        m = self.m
        if m.f.is_constant():
            return format_number(float(ca.evalf(m.f)) if isinstance(m.f, ca.MX) else float(m.f), self.latex)
        got = self.rows("f", [0])[0]
        if got.startswith("<") or got.startswith(r"\langle"):
            x, j = self.vector["x"], self.summary("f")
            return rf"f({x})\quad ({j})" if self.latex else f"f({x})   [{j}]"
        return got
