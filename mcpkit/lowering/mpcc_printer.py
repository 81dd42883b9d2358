r"""Lowering of an MPCC to printed mathematics (plain text, LaTeX, prose), for teaching.

An :class:`~mcpkit.mpcc.MPCC` prints in the form its module states,

.. math::

    \min_x f(x; p)\quad\text{s.t.}\quad g_l \le g(x; p) \le g_u,\quad x_l \le x \le x_u,\quad
    H_l \le H(x; p) \le H_u \perp G(x; p),\quad G_l \le G(x; p) \le G_u ,

one line per row and per pair: a standard pair as :math:`0 \le G_j \perp H_j \ge 0`, any other
pair in its box case with :math:`H_j` in the variable's role (``l <= H ⟂ G >= 0``,
``G = 0   (H free)``, ``l <= H <= u ⟂ G``, ...) and its plain bounds on :math:`G` when the case
does not imply them; then the pair cases in words and the sizes.

**Plain MPCCs** (built from CasADi): the expressions are CasADi's own, replayed into sympy
(:func:`~mcpkit.lowering.from_casadi.casadi_to_sympy`) only for the rows shown, so a row prints
as a formula (``(x_0 - 5)**2 + (2*x_1 + 1)**2`` where CasADi's ``str`` gives
``sq((x_0-5))+...``). A vector with more than ``max_rows`` entries prints a summary (its size,
the nonzeros of its Jacobian, whether it is affine in :math:`x`) and its first rows; a row of
more than :data:`MAX_OPERATIONS` operations prints by name. Nothing is replayed for rows not
shown, so printing a large MPCC costs its Jacobian sparsity and a few rows.

**With blocks** (:class:`~mcpkit.mpcc.problem.MPCCBlocks`, carried from a declaration): one line
per named segment, with the formula as declared and its size (``g_lam_n ∈ R^n_c``), variable
bounds per block, then "where", "given" and the sizes; entries inside a named variable segment
print by that name (``w_x[0]``) wherever CasADi expressions are printed. A horizon's per-step
segments print once under "for k = 0, …, N-1" and the first and last states' bounds as boundary
conditions, so a horizon of 50 steps prints the lines of one of 5. :func:`slack_form_blocks`
gives the blocks of the slack form (:class:`~mcpkit.lowering.casadi.MCPToMPCC`) of an MCP.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import casadi as ca
import numpy as np
import scipy.sparse as sps
import sympy as sp

from mcpkit import blocks as bx
from mcpkit.errors import MCPInputError
from mcpkit.lowering.from_casadi import casadi_to_sympy
from mcpkit.lowering.printer import (
    Rename,
    _case_key,
    _default_stem,
    _num,
    _SymbolNames,
    expr_latex,
    expr_text,
    space,
    sym_shape,
)
from mcpkit.lowering.slack import SlackForm
from mcpkit.mpcc.problem import MPCC, Formula, MPCCBlocks, Segment
from mcpkit.problem import MCP, AffineFunction, BlockFunction, MatrixParameterBlock, ParameterBlock

__all__ = [
    "MAX_OPERATIONS",
    "StepBlock",
    "casadi_formulas",
    "declaration_parts",
    "explain",
    "slack_form_blocks",
    "slack_segments",
    "step_latex",
    "to_latex",
    "to_text",
]

#: Rows of more operations than this print by name (never replayed into sympy).
MAX_OPERATIONS = 400

_CASE_WORDS = {
    "standard": ("0 <= G ⟂ H >= 0", "G >= 0, H >= 0 and G * H = 0 (at least one of the two is zero)"),
    "lower": ("H_l <= H ⟂ G >= 0", "H >= H_l, G >= 0 and (H - H_l) * G = 0"),
    "upper": ("H <= H_u ⟂ G <= 0", "H <= H_u, G <= 0 and (H_u - H) * G = 0"),
    "box": ("H_l <= H <= H_u ⟂ G", "G >= 0 where H = H_l, G = 0 where H_l < H < H_u, G <= 0 where H = H_u"),
    "free": ("G = 0   (H free)", "the equation G = 0, H unrestricted"),
    "fixed": ("H = H_l   (G free)", "H = H_l, G unrestricted"),
}
_CASE_LATEX = {
    "standard": r"0 \le G \perp H \ge 0",
    "lower": r"H_l \le H \perp G \ge 0",
    "upper": r"H \le H_u \perp G \le 0",
    "box": r"H_l \le H \le H_u \perp G",
    "free": r"G = 0\quad (H\ \text{free})",
    "fixed": r"H = H_l\quad (G\ \text{free})",
}
#: What each case of ``H_l <= H ⟂ G`` implies about ``G`` alone, as ``(lowest, highest)``.
_IMPLIED = {"lower": (0.0, math.inf), "upper": (-math.inf, 0.0), "free": (0.0, 0.0)}


# ------------------------------------------------------------------ names and numbers
def step_latex(stem: str, index: str | int) -> str:
    r"""A LaTeX stem with the subscript ``index`` added: ``\beta_n`` -> ``\beta_{n,k}``, ``x`` -> ``x_{k}``,
    ``\psi_n/h`` -> ``\left(\psi_n/h\right)_{k}``."""
    m = re.fullmatch(r"(.*?)_\{((?:[^{}]|\{[^{}]*\})*)\}", stem)
    if m:
        return f"{m.group(1)}_{{{m.group(2)},{index}}}"
    m = re.fullmatch(r"([^_]*[^_\s])_([A-Za-z0-9])", stem)
    if m:
        return f"{m.group(1)}_{{{m.group(2)},{index}}}"
    if re.search(r"[/+\-*_]", stem):
        return rf"\left({stem}\right)_{{{index}}}"
    return f"{{{stem}}}_{{{index}}}" if "^" in stem else f"{stem}_{{{index}}}"


def _tt(s: str) -> str:
    r"""Text for LaTeX's ``\text{...}`` (underscores and the like escaped)."""
    return re.sub(r"([_%&#$])", r"\\\1", s).replace("∈", "in")


def _short(e: sp.Expr) -> sp.Expr:
    """Floats rounded to 6 significant digits for display (``0.333333``, not 15 digits)."""
    floats = {a: sp.Float(float(f"{float(a):.6g}"), 6) for a in e.atoms(sp.Float)}
    return e.xreplace(floats) if floats else e


def _sym(latex: bool) -> dict[str, str]:
    if latex:
        return {"le": r" \le ", "ge": r" \ge ", "perp": r" \perp ", "in": r" \in "}
    return {"le": " <= ", "ge": " >= ", "perp": " ⟂ ", "in": " ∈ "}


def _vec(arr: np.ndarray, latex: bool) -> str:
    """A vector's values (``[5, -inf, 0]``; long ones as their first and last entries)."""
    vals = [_num(float(v), latex) for v in np.asarray(arr, dtype=float).reshape(-1)]
    if len(vals) > 8:
        vals = [*vals[:3], r"\dots" if latex else "…", *vals[-2:]]
    return r"\left(" + ", ".join(vals) + r"\right)" if latex else "[" + ", ".join(vals) + "]"


def _bound(arr: np.ndarray, latex: bool) -> str:
    """A bound vector: its number when all entries agree, else its values."""
    if arr.size and np.all(arr == arr[0]):
        return _num(float(arr[0]), latex)
    return _vec(arr, latex)


def _uniform(arrs: Sequence[np.ndarray]) -> np.ndarray | None:
    """The common array of ``arrs`` (one per step), or ``None`` when they differ."""
    first = arrs[0]
    return first if all(np.array_equal(a, first) for a in arrs[1:]) else None


def _row_condition(body: str, lo: np.ndarray, hi: np.ndarray, latex: bool) -> str:
    """``body = c``, ``body >= l``, ``body <= u`` or ``l <= body <= u`` (``lo``, ``hi`` arrays)."""
    s = _sym(latex)
    if np.array_equal(lo, hi):
        return f"{body} = {_bound(lo, latex)}"
    no_lo, no_hi = bool(np.all(np.isneginf(lo))), bool(np.all(np.isposinf(hi)))
    if no_lo and no_hi:
        return body + (r"\quad (\text{free row})" if latex else "   (free row)")
    if no_hi:
        return f"{body}{s['ge']}{_bound(lo, latex)}"
    if no_lo:
        return f"{body}{s['le']}{_bound(hi, latex)}"
    return f"{_bound(lo, latex)}{s['le']}{body}{s['le']}{_bound(hi, latex)}"


def _bound_condition(name: str, lo: np.ndarray, hi: np.ndarray, latex: bool) -> str:
    """Variable bounds: ``x = c``, ``l <= x``, ``x <= u``, ``l <= x <= u`` or ``x free``."""
    s = _sym(latex)
    if np.array_equal(lo, hi):
        return f"{name} = {_bound(lo, latex)}"
    no_lo, no_hi = bool(np.all(np.isneginf(lo))), bool(np.all(np.isposinf(hi)))
    if no_lo and no_hi:
        return name + (r"\ \text{free}" if latex else " free")
    left = "" if no_lo else f"{_bound(lo, latex)}{s['le']}"
    right = "" if no_hi else f"{s['le']}{_bound(hi, latex)}"
    return f"{left}{name}{right}"


def _pair_condition(
    G: str, H: str, lbG: np.ndarray, ubG: np.ndarray, lbH: np.ndarray, ubH: np.ndarray, latex: bool
) -> str:
    """One pair (or a block of pairs with these bound arrays) in its case."""
    s = _sym(latex)
    if np.all(lbG == 0) and np.all(np.isposinf(ubG)) and np.all(lbH == 0) and np.all(np.isposinf(ubH)):
        return f"0{s['le']}{G}{s['perp']}{H}{s['ge']}0"
    cases = {_case_key(float(a), float(b)) for a, b in zip(lbH, ubH, strict=True)}
    case = cases.pop() if len(cases) == 1 else "mixed"
    lo, hi = _bound(lbH, latex), _bound(ubH, latex)
    if case == "fixed":
        out = f"{H} = {lo}" + (rf"\quad ({G}\ \text{{free}})" if latex else f"   ({G} free)")
    elif case == "free":
        out = f"{G} = 0" + (rf"\quad ({H}\ \text{{free}})" if latex else f"   ({H} free)")
    elif case == "lower":
        out = f"{lo}{s['le']}{H}{s['perp']}{G}{s['ge']}0"
    elif case == "upper":
        out = f"{H}{s['le']}{hi}{s['perp']}{G}{s['le']}0"
    else:
        out = f"{lo}{s['le']}{H}{s['le']}{hi}{s['perp']}{G}"
    imp_lo, imp_hi = _IMPLIED.get(case, (-math.inf, math.inf))
    if not (np.all(lbG <= imp_lo) and np.all(ubG >= imp_hi)):
        out += (r",\quad " if latex else ",   ") + _row_condition(G, lbG, ubG, latex)
    return out


def _pair_kinds(m: MPCC, idx: np.ndarray | None = None) -> dict[str, int]:
    """Counts of the pair cases: ``standard``, or the case of ``H_l <= H <= H_u ⟂ G``."""
    sel = np.arange(m.n_pairs) if idx is None else np.asarray(idx, dtype=int)
    std = m.standard_pairs()[sel]
    out: dict[str, int] = {}
    if std.any():
        out["standard"] = int(std.sum())
    for j in sel[~std]:
        k = _case_key(float(m.lbH[j]), float(m.ubH[j]))
        out[k] = out.get(k, 0) + 1
    return out


def _plain_G(m: MPCC) -> np.ndarray:
    """Pairs whose bounds ``G_l <= G <= G_u`` are more than their case implies (printed separately)."""
    out = []
    for j in np.flatnonzero(~m.standard_pairs()):
        lo, hi = _IMPLIED.get(_case_key(float(m.lbH[j]), float(m.ubH[j])), (-math.inf, math.inf))
        if not (m.lbG[j] <= lo and m.ubG[j] >= hi):
            out.append(int(j))
    return np.asarray(out, dtype=int)


def _row_kinds(lo: np.ndarray, hi: np.ndarray) -> dict[str, int]:
    eq = lo == hi
    free = np.isneginf(lo) & np.isposinf(hi)
    rng = ~eq & np.isfinite(lo) & np.isfinite(hi)
    out = {"equality": int(eq.sum()), "inequality": int((~eq & ~free & ~rng).sum()),
           "range": int(rng.sum()), "free row": int(free.sum())}  # fmt: skip
    return {k: v for k, v in out.items() if v}


def _plural(n: int, word: str) -> str:
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word[:-1]}ies" if word.endswith("y") else f"{n} {word}s"


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
            out.append(sp.latex(_short(e), symbol_names=printed))
    else:
        subs = {s: sp.Symbol(n) for s, n in zip(syms, names, strict=True)}
        for e in exprs:
            out.append(sp.sstr(_short(e).xreplace(subs), full_prec=False))
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

    def text(self, what: str) -> str:
        form = "affine" if self.affine else "nonlinear"
        return f"∂{what}/∂x is {self.rows}x{self.cols} with {_plural(self.nnz, 'nonzero')}, {form} in x"

    def latex(self, what: str) -> str:
        form = "affine" if self.affine else "nonlinear"
        return (
            rf"\partial {what}/\partial x \in \mathbb{{R}}^{{{self.rows} \times {self.cols}}}"
            rf"\ \text{{with {_plural(self.nnz, 'nonzero')}, {form} in }} x"
        )


class _Casadi:
    """Printed CasADi expressions of an MPCC: only the rows asked for are replayed into sympy.

    Entries of :math:`x` and :math:`p` print by their segment names (``w_x[0]``; a per-step
    segment at step 3: ``w_x_3[0]``) when the blocks name them, else by their CasADi names (an
    MX problem: ``x_0, ...``). MX expressions are expanded to SX once, on first use.
    """

    def __init__(self, mpcc: MPCC, latex: bool, width: int) -> None:
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
        name = str(sx[kind][i].name()) if sx is not None and isinstance(self.m.x, ca.SX) else f"{kind}_{i}"
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
        affine = bool(ca.is_linear(e, m.x)) if nx and e.numel() else True
        return _Jacobian(int(e.numel()), nx, nnz, affine)

    def summary(self, what: str, idx: np.ndarray | None = None) -> str:
        j = self.jacobian(what, idx)
        return j.latex(what) if self.latex else j.text(what)

    def objective(self) -> str:
        m = self.m
        if m.f.is_constant():
            return _num(float(ca.evalf(m.f)) if isinstance(m.f, ca.MX) else float(m.f), self.latex)
        got = self.rows("f", [0])[0]
        if got.startswith("<") or got.startswith(r"\langle"):
            return (rf"f(x)\quad ({self.summary('f')})") if self.latex else f"f(x)   [{self.summary('f')}]"
        return got


# ------------------------------------------------------------------ layout
@dataclass
class _Out:
    """The printed parts: ``("head", text)`` and ``("item", condition, annotation)`` entries.

    Text aligns the annotations of each section (the items between two heads) in one column.
    """

    latex: bool
    parts: list[tuple[str, ...]] = field(default_factory=list)

    def head(self, text: str, tex: str | None = None) -> None:
        """A section head: plain ``text``, or (LaTeX) the math ``tex`` (default ``\\text{text}``)."""
        if self.latex:
            self.parts.append(("head", tex if tex is not None else rf"\text{{{_tt(text)}}}"))
        else:
            self.parts.append(("head", text))

    def item(self, cond: str, note: str = "") -> None:
        self.parts.append(("item", cond, note))

    def render(self) -> str:
        if self.latex:
            rows = [
                f"&{p[1]}" if p[0] == "head" else rf"&\quad {p[1]} && {p[2]}".rstrip() for p in self.parts
            ]
            return "\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}"
        lines: list[str] = []
        section: list[tuple[str, ...]] = []

        def flush() -> None:
            width = max((len(p[1]) for p in section if p[2]), default=0) + 4
            lines.extend(f"  {p[1]:<{width}}{p[2]}".rstrip() for p in section)
            section.clear()

        for p in self.parts:
            if p[0] == "head":
                flush()
                lines.append(p[1])
            else:
                section.append(p)
        flush()
        return "\n".join(lines)


def _shown(n: int, max_rows: int) -> list[int]:
    return list(range(n)) if n <= max_rows else [*range(max_rows - 1), n - 1]


def _rows_items(
    out: _Out, ct: _Casadi, idx: np.ndarray, max_rows: int, label: Callable[[int], str] | None = None
) -> None:
    """Rows ``idx`` of ``g``, one per line (a summary and the first rows when there are many)."""
    m, latex = ct.m, out.latex
    label = label or (lambda i: f"g_{{{i}}}" if latex else f"g[{i}]")
    if idx.size > max_rows:
        kinds = ", ".join(_plural(v, k) for k, v in _row_kinds(m.lbg[idx], m.ubg[idx]).items())
        if latex:
            out.item(rf"\text{{{idx.size} rows: {kinds};}}\ {ct.summary('g', idx)}")
        else:
            out.item(f"[{idx.size} rows: {kinds}; {ct.summary('g', idx)}]")
    pos = _shown(idx.size, max_rows)
    bodies = ct.rows("g", [int(idx[k]) for k in pos])
    for body, k in zip(bodies, pos, strict=True):
        i = int(idx[k])
        if idx.size > max_rows and k == idx.size - 1:
            out.item(r"\vdots" if latex else "...")
        out.item(_row_condition(body, m.lbg[i : i + 1], m.ubg[i : i + 1], latex), label(i))


def _pairs_items(
    out: _Out, ct: _Casadi, idx: np.ndarray, max_rows: int, label: Callable[[int], str] | None = None
) -> None:
    """Pairs ``idx``, one per line (a summary and the first pairs when there are many)."""
    m, latex = ct.m, out.latex
    label = label or (lambda j: rf"\text{{pair }}{j}" if latex else f"pair {j}")
    if idx.size > max_rows:
        kinds = ", ".join(f"{v} {k}" for k, v in _pair_kinds(m, idx).items())
        summ = f"{ct.summary('G', idx)}; {ct.summary('H', idx)}"
        out.item(
            rf"\text{{{idx.size} pairs: {kinds};}}\ {summ}"
            if latex
            else f"[{idx.size} pairs: {kinds}; {summ}]"
        )
    pos = _shown(idx.size, max_rows)
    sel = [int(idx[k]) for k in pos]
    for G, H, k in zip(ct.rows("G", sel), ct.rows("H", sel), pos, strict=True):
        j = int(idx[k])
        if idx.size > max_rows and k == idx.size - 1:
            out.item(r"\vdots" if latex else "...")
        sl = slice(j, j + 1)
        out.item(_pair_condition(G, H, m.lbG[sl], m.ubG[sl], m.lbH[sl], m.ubH[sl], latex), label(j))


def _pairs_footer(out: _Out, m: MPCC) -> None:
    """The pair cases in words, one line per case present."""
    kinds = _pair_kinds(m)
    if not kinds:
        return
    out.head("pairs", r"\text{pairs}")
    for case, count in kinds.items():
        form, words = _CASE_WORDS[case]
        if out.latex:
            out.item(rf"\text{{{count} {case}: }} {_CASE_LATEX[case]}", rf"\text{{{_tt(words)}}}")
        else:
            out.item(f"{count} {case}: {form}", words)
    extra = _plain_G(m)
    if extra.size:
        note = f"{_plural(int(extra.size), 'pair')} also bound G as a plain constraint"
        out.item(rf"\text{{{note} }} G_l \le G \le G_u" if out.latex else note + " G_l <= G <= G_u")


def _sizes(m: MPCC, latex: bool) -> list[str]:
    s = _sym(latex)
    out = [f"x{s['in']}{space((int(m.x.numel()),), latex)}"]
    if m.p.numel():
        out.append(f"p{s['in']}{space((int(m.p.numel()),), latex)}")
    out += [f"g{s['in']}{space((int(m.g.numel()),), latex)}", f"G, H{s['in']}{space((m.n_pairs,), latex)}"]
    return out


def _given_values(out: _Out, m: MPCC, values: bool) -> None:
    if values and m.p.numel():
        out.head(f"given p = {_vec(m.p0, False)}", rf"\text{{given }} p = {_vec(m.p0, True)}")


# ------------------------------------------------------------------ plain MPCC
def _plain(m: MPCC, latex: bool, max_rows: int, values: bool, width: int) -> str:
    ct = _Casadi(m, latex, width)
    out = _Out(latex)
    s = _sym(latex)
    nx, npar = int(m.x.numel()), int(m.p.numel())
    xs = f"x{s['in']}{space((nx,), latex)}"
    ps = f" given p{s['in']}{space((npar,), latex)}" if npar else ""
    if latex:
        given = rf"\text{{ given }} p{s['in']}{space((npar,), True)}" if npar else ""
        out.head("", rf"\text{{find }} {xs}{given}\text{{ such that}}")
        out.item(rf"\min\ {ct.objective()}")
    else:
        out.head(f"MPCC {m.name!r}: find {xs}{ps} such that")
        out.item(f"minimize {ct.objective()}")
    _rows_items(out, ct, np.arange(int(m.g.numel())), max_rows)
    lo, hi = m.lbx, m.ubx
    if nx > max_rows and not (np.all(lo == lo[0]) and np.all(hi == hi[0])):
        words = _words_bounds(lo, hi)
        if latex:
            out.item(rf"x_l \le x \le x_u\quad (\text{{{words}}})", xs)
        else:
            out.item(f"x_l <= x <= x_u   ({words})", xs)
    elif not (np.all(np.isneginf(lo)) and np.all(np.isposinf(hi))):
        out.item(_bound_condition("x", lo, hi, latex), xs)
    _pairs_items(out, ct, np.arange(m.n_pairs), max_rows)
    _pairs_footer(out, m)
    _given_values(out, m, values)
    sizes = _sizes(m, latex)
    out.head("sizes: " + ", ".join(sizes), r"\text{sizes: } " + r",\ ".join(sizes))
    return out.render()


# ------------------------------------------------------------------ MPCC with blocks
def _display(seg: Segment, blocks: MPCCBlocks, latex: bool) -> str:
    """A segment's printed name (a per-step one with the step index: ``w_x_k``)."""
    if seg.per_step:
        return step_latex(seg.tex, blocks.index) if latex else f"{seg.name}_{blocks.index}"
    return seg.tex if latex else seg.name


def _note(seg: Segment, blocks: MPCCBlocks, latex: bool) -> str:
    size = space((seg.dim if seg.dim is not None else seg.size,), latex)
    note = f"{_display(seg, blocks, latex)}{_sym(latex)['in']}{size}"
    if seg.note:
        note += rf"\quad \text{{({_tt(seg.note)})}}" if latex else f"   ({seg.note})"
    return note


def _bounds_of(seg: Segment, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """``(lo, hi, varies)``: the bounds of the first slice and whether other steps' differ."""
    los, his = [lo[sl] for sl in seg.slices], [hi[sl] for sl in seg.slices]
    ulo, uhi = _uniform(los), _uniform(his)
    return los[0], his[0], ulo is None or uhi is None


def _pick(f: Formula | None, latex: bool) -> str | None:
    return None if f is None else (f[1] if latex else f[0])


def _entry_label(seg: Segment, blocks: MPCCBlocks, latex: bool) -> Callable[[int], str]:
    start = seg.slices[0].start
    name = _display(seg, blocks, latex)
    if latex:
        return lambda i: step_latex(name, i - start)
    return lambda i: f"{name}[{i - start}]"


def _seg_item(out: _Out, seg: Segment, ct: _Casadi, blocks: MPCCBlocks, max_rows: int) -> None:
    """The line of a row or pair segment (its entries, from CasADi, when it has no formula)."""
    m, latex = ct.m, out.latex
    note = _note(seg, blocks, latex)
    sl = seg.slices[0]
    idx = np.arange(sl.start, sl.stop)
    varies = r"\quad (\text{bounds vary with } k)" if latex else "   (bounds vary with k)"
    at_0 = r"\quad (\text{at } k = 0)" if latex else "   (at k = 0)"
    if seg.kind == "g":
        statement = _pick(seg.statement, latex)
        if statement is not None:
            out.item(statement, note)
            return
        body = _pick(seg.body, latex)
        if body is None and idx.size != 1:
            if seg.per_step:
                out.item(r"\text{rows at } k = 0:" if latex else "rows at k = 0:", note)
            _rows_items(out, ct, idx, max_rows, _entry_label(seg, blocks, latex))
            return
        lo, hi, vary = _bounds_of(seg, m.lbg, m.ubg)
        if body is None:
            body = ct.rows("g", [int(idx[0])])[0]
            note += at_0 if seg.per_step else ""
        out.item(_row_condition(body, lo, hi, latex) + (varies if vary else ""), note)
        return
    G, H = _pick(seg.body, latex), _pick(seg.partner, latex)
    if (G is None or H is None) and idx.size != 1:
        if seg.per_step:
            out.item(r"\text{pairs at } k = 0:" if latex else "pairs at k = 0:", note)
        _pairs_items(out, ct, idx, max_rows, _entry_label(seg, blocks, latex))
        return
    if G is None or H is None:
        G = G if G is not None else ct.rows("G", [int(idx[0])])[0]
        H = H if H is not None else ct.rows("H", [int(idx[0])])[0]
        note += at_0 if seg.per_step else ""
    lG, uG, vG = _bounds_of(seg, m.lbG, m.ubG)
    lH, uH, vH = _bounds_of(seg, m.lbH, m.ubH)
    out.item(_pair_condition(G, H, lG, uG, lH, uH, latex) + (varies if vG or vH else ""), note)


def _var_rule(
    seg: Segment, m: MPCC, steps: int | None
) -> tuple[np.ndarray | None, np.ndarray | None, list[int]]:
    """``(lo, hi, ends)``: a variable segment's bounds rule (``None`` when they vary with the
    step) and the steps whose bounds print as boundary conditions (a horizon's first and last
    states when they differ from the rule)."""
    los, his = [m.lbx[sl] for sl in seg.slices], [m.ubx[sl] for sl in seg.slices]
    if seg.per_step and steps is not None and len(seg.slices) == steps + 1:
        rule, ends = list(range(1, steps)), [0, steps]
    else:
        rule, ends = list(range(len(seg.slices))), []
    if not rule:
        return None, None, ends
    lo, hi = _uniform([los[k] for k in rule]), _uniform([his[k] for k in rule])
    if lo is None or hi is None:
        return None, None, ends
    return lo, hi, [k for k in ends if not (np.array_equal(los[k], lo) and np.array_equal(his[k], hi))]


def _var_item(out: _Out, boundary: list[str], seg: Segment, m: MPCC, blocks: MPCCBlocks) -> None:
    """The bounds line of a variable segment; a horizon's boundary conditions go to ``boundary``."""
    latex = out.latex
    s = _sym(latex)
    name = _display(seg, blocks, latex)
    note = _note(seg, blocks, latex)
    lo, hi, ends = _var_rule(seg, m, blocks.steps)
    if lo is not None and hi is not None:
        out.item(_bound_condition(name, lo, hi, latex), note)
    elif len(seg.slices) == 2 and blocks.steps == 1:
        out.item(name, note)
    else:
        lo_n = step_latex(rf"l_{{{seg.tex}}}", blocks.index) if latex else f"lb_{name}"
        hi_n = step_latex(rf"u_{{{seg.tex}}}", blocks.index) if latex else f"ub_{name}"
        vary = r"\quad (\text{bounds vary with } k)" if latex else "   (bounds vary with k)"
        out.item(f"{lo_n}{s['le']}{name}{s['le']}{hi_n}{vary}", note)
    for k in ends:
        label = "0" if k == 0 else "N"
        nm = step_latex(seg.tex, label) if latex else f"{seg.name}_{label}"
        boundary.append(_bound_condition(nm, m.lbx[seg.slices[k]], m.ubx[seg.slices[k]], latex))


def _uncovered(blocks: MPCCBlocks, kind: str, n: int) -> np.ndarray:
    mask = np.zeros(n, dtype=bool)
    for seg in blocks.segments:
        if seg.kind == kind:
            for sl in seg.slices:
                mask[sl] = True
    return np.flatnonzero(~mask)


def _with_blocks(m: MPCC, blocks: MPCCBlocks, latex: bool, max_rows: int, values: bool, width: int) -> str:
    ct = _Casadi(m, latex, width)
    out = _Out(latex)
    xsegs = [seg for seg in blocks.segments if seg.kind == "x"]
    cons = [seg for seg in blocks.segments if seg.kind in ("g", "pair")]
    names = (r",\ " if latex else ", ").join(_display(seg, blocks, latex) for seg in xsegs) or "x"
    obj = _pick(blocks.objective, latex)
    obj = obj if obj is not None else ct.objective()
    if latex:
        out.head("", rf"\text{{find }} {names} \text{{ such that}}")
        out.item(rf"\min\ {obj}")
    else:
        if blocks.source:
            out.head(f"MPCC {m.name!r}: {blocks.source}")
            out.head(f"find {names} such that")
        else:
            out.head(f"MPCC {m.name!r}: find {names} such that")
        out.item(f"minimize {obj}")
    for seg in cons:
        if not seg.per_step:
            _seg_item(out, seg, ct, blocks, max_rows)
    boundary: list[str] = []
    step_vars = [seg for seg in xsegs if seg.per_step]
    if step_vars or any(seg.per_step for seg in cons):
        k = blocks.index
        out.head(f"for {k} = 0, …, N-1:", rf"\text{{for }} {k} = 0, \dots, N-1:")
        for seg in cons:
            if seg.per_step:
                _seg_item(out, seg, ct, blocks, max_rows)
        for seg in step_vars:
            _var_item(out, boundary, seg, m, blocks)
        if any(not seg.per_step for seg in xsegs):
            out.head("and", r"\text{and}")
    for seg in xsegs:
        if not seg.per_step:
            _var_item(out, boundary, seg, m, blocks)
    # whatever no segment covers prints as in a plain MPCC
    rest = _uncovered(blocks, "g", int(m.g.numel()))
    if rest.size:
        out.head("other rows", r"\text{other rows}")
        _rows_items(out, ct, rest, max_rows)
    rest = _uncovered(blocks, "pair", m.n_pairs)
    if rest.size:
        out.head("other pairs", r"\text{other pairs}")
        _pairs_items(out, ct, rest, max_rows)
    rest = _uncovered(blocks, "x", int(m.x.numel()))
    if rest.size:
        out.head("other variables", r"\text{other variables}")
        for j in _shown(rest.size, max_rows):
            i = int(rest[j])
            if rest.size > max_rows and j == rest.size - 1:
                out.item(r"\vdots" if latex else "...")
            out.item(_bound_condition(ct.entry_name("x", i), m.lbx[i : i + 1], m.ubx[i : i + 1], latex))
    if boundary:
        out.head("boundary conditions", r"\text{boundary conditions}")
        for cond in boundary:
            out.item(cond)
    if blocks.where:
        out.head("where", r"\text{where}")
        for f, note in blocks.where:
            out.item(f[1] if latex else f[0], note[1] if latex else note[0])
    if blocks.given:
        if latex:
            out.head("", r"\text{given } " + r",\ ".join(g[1] for g in blocks.given))
        else:
            out.head("given")
            for g in blocks.given:
                out.item(g[0])
    _pairs_footer(out, m)
    _given_values(out, m, values)
    labels = [f"{k} = {v}" for k, v in blocks.sizes]
    sizes = _sizes(m, latex)
    if latex:
        out.head("", r"\text{sizes: } " + r",\ ".join(labels + sizes))
    else:
        out.head("sizes: " + ", ".join(labels) + (f" ({', '.join(sizes)})" if labels else ", ".join(sizes)))
    return out.render()


# ------------------------------------------------------------------ entry points
def _check(m: MPCC, max_rows: int) -> None:
    if not isinstance(m, MPCC):
        raise MCPInputError(f"the MPCC printer needs an mcpkit.mpcc.MPCC, got {type(m).__name__}")
    if not isinstance(max_rows, int) or max_rows < 2:
        raise MCPInputError(f"MPCC printer: max_rows must be an integer >= 2, got {max_rows!r}")


def _print(m: MPCC, latex: bool, max_rows: int, values: bool, expand: bool, width: int) -> str:
    _check(m, max_rows)
    blocks = m.block_structure()
    if blocks is not None and not expand:
        return _with_blocks(m, blocks, latex, max_rows, values, width)
    return _plain(m, latex, max_rows, values, width)


def to_text(m: MPCC, max_rows: int = 8, values: bool = False, expand: bool = False, width: int = 100) -> str:
    """Plain text of the MPCC: one line per row and pair (with blocks: per block), then the pair
    cases in words and the sizes (module docstring).

    Parameters
    ----------
    max_rows
        Rows shown per vector (or per block without a declared formula) before eliding.
    values
        Also print the parameter values :math:`p`.
    expand
        Ignore the block structure: print as a plain MPCC.
    width
        Formulas from CasADi longer than this are cut (``…``).
    """
    return _print(m, False, max_rows, values, expand, width)


def to_latex(m: MPCC, max_rows: int = 8, values: bool = False, expand: bool = False, width: int = 200) -> str:
    """LaTeX of the MPCC (an ``aligned`` environment): the lines of :func:`to_text`."""
    return _print(m, True, max_rows, values, expand, width)


def _words_rows(lo: np.ndarray, hi: np.ndarray) -> str:
    return ", ".join(_plural(v, k) for k, v in _row_kinds(lo, hi).items())


def _words_bounds(lo: np.ndarray, hi: np.ndarray) -> str:
    words = {"fixed": "fixed", "free": "free", "lower": "with a lower bound only",
             "upper": "with an upper bound only", "box": "with both bounds"}  # fmt: skip
    kinds: dict[str, int] = {}
    for a, b in zip(lo, hi, strict=True):
        k = words[_case_key(float(a), float(b))]
        kinds[k] = kinds.get(k, 0) + 1
    return ", ".join(f"{v} {k}" for k, v in kinds.items())


def explain(m: MPCC, values: bool = False) -> str:
    """Prose: the sizes, each part's structure (its Jacobian's nonzeros, affine or nonlinear) and
    the pair cases in words; with blocks, one line per block."""
    _check(m, 2)
    ct = _Casadi(m, False, 100)
    nx, npar, ng, nc = int(m.x.numel()), int(m.p.numel()), int(m.g.numel()), m.n_pairs
    blocks = m.block_structure()
    src = f" ({blocks.source})" if blocks is not None and blocks.source else ""
    out = [
        f"MPCC {m.name!r}{src} has {_plural(nx, 'variable')}, {_plural(npar, 'parameter')}, "
        f"{_plural(ng, 'constraint row')} and {_plural(nc, 'complementarity pair')}."
    ]
    declared = blocks.objective[0] if blocks is not None and blocks.objective is not None else None
    if m.f.is_constant():
        out.append(f"Objective: the constant {ct.objective()} (a feasibility problem).")
    else:
        shown = declared if declared is not None else ct.rows("f", [0])[0]
        shown = "f(x)" if shown.startswith("<") else shown
        out.append(f"Objective: {shown}; {ct.summary('f')}.")
    if blocks is not None:
        out += _explain_blocks(m, blocks)
    else:
        if ng:
            out.append(f"Constraints: {_words_rows(m.lbg, m.ubg)}; {ct.summary('g')}.")
        out.append(f"Bounds on x: {_words_bounds(m.lbx, m.ubx)}.")
        if nc:
            out.append(f"Pairs: {ct.summary('G')}; {ct.summary('H')}.")
    for case, count in _pair_kinds(m).items():
        form, words = _CASE_WORDS[case]
        out.append(f"- {_plural(count, case + ' pair')} {form}: {words}.")
    extra = _plain_G(m)
    if extra.size:
        out.append(
            f"- {_plural(int(extra.size), 'pair')} also bound G as a plain constraint G_l <= G <= G_u."
        )
    implied = [w for w, f in (("G >= 0", m.G_implied_by_bounds), ("H >= 0", m.H_implied_by_bounds)) if f]
    if implied:
        out.append(
            f"{' and '.join(implied)} already follow{'s' if len(implied) == 1 else ''} from the bounds on x."
        )
    if blocks is not None:
        for f, note in blocks.where:
            out.append(f"Definition: {f[0]}" + (f" ({note[0]})" if note[0] else "") + ".")
        if blocks.given:
            out.append("Given " + ", ".join(g[0] for g in blocks.given) + ".")
        if blocks.sizes:
            out.append("Sizes: " + ", ".join(f"{k} = {v}" for k, v in blocks.sizes) + ".")
    if values and npar:
        out.append(f"Parameter values p = {_vec(m.p0, False)}.")
    return "\n".join(out)


def _explain_blocks(m: MPCC, blocks: MPCCBlocks) -> list[str]:
    out = []
    if blocks.steps is not None:
        out.append(
            f"The blocks marked 'each k' repeat for k = 0, …, N-1 (N = {blocks.steps}); the first and "
            f"last states carry the boundary conditions."
        )
    for seg in blocks.segments:
        if seg.kind == "p":
            continue
        each = "each k: " if seg.per_step else ""
        head = f"- {each}{_display(seg, blocks, False)} ∈ {space((seg.dim or seg.size,), False)}"
        sl = seg.slices[0]
        if seg.kind == "x":
            lo, hi, ends = _var_rule(seg, m, blocks.steps)
            desc = _words_bounds(lo, hi) if lo is not None and hi is not None else "bounds that vary with k"
            bc = " (boundary conditions at k = 0, N)" if ends else ""
            out.append(f"{head}: variables, {desc}{bc}.")
        elif seg.kind == "g":
            what = _pick(seg.statement, False) or (f"{seg.body[0]}" if seg.body else "rows from CasADi")
            out.append(f"{head}: {_words_rows(m.lbg[sl], m.ubg[sl])} ({what}).")
        else:
            kinds = "; ".join(f"{v} {k}" for k, v in _pair_kinds(m, np.arange(sl.start, sl.stop)).items())
            G = seg.body[0] if seg.body else "G"
            H = seg.partner[0] if seg.partner else "H"
            out.append(f"{head}: pairs of G = {G} and H = {H} ({kinds}).")
    return out


# ------------------------------------------------------------------ blocks of the slack form
@dataclass(frozen=True)
class StepBlock:
    """One MCP variable block as the slack form sees it: names, size label, slice and ``F`` as declared."""

    name: str
    latex: str
    dim: str | None
    slice: slice
    F: Formula | None = None


def _minus(z: str, c: float, latex: bool, reverse: bool = False) -> str:
    """``z - c`` (or ``c - z``) with the number printed well (``z``, ``z + 1``, ``-z``, ``2 - z``)."""
    if not reverse:
        if c == 0:
            return z
        return f"{z} + {_num(-c, latex)}" if c < 0 else f"{z} - {_num(c, latex)}"
    return f"-{z}" if c == 0 else f"{_num(c, latex)} - {z}"


Place = Callable[[slice], "slice | tuple[slice, ...]"]


def slack_segments(
    blocks: Sequence[StepBlock],
    form: SlackForm,
    *,
    x_at: Place = lambda sl: sl,
    g_at: Place = lambda sl: sl,
    pair_at: Place = lambda sl: sl,
    index: str | None = None,
) -> tuple[list[Segment], list[Segment], list[Formula]]:
    """Segments of the ``"blocked"`` slack form of MCP blocks: ``(variables, rows and pairs, given)``.

    For a block ``b``: its variables ``b``, the slacks ``w_b`` (finite lower bounds) and ``v_b``
    (finite upper), the rows ``g_b``: ``F_b - w_b + v_b = 0`` and the pairs ``(G, H)_b``:
    ``0 <= b - l ⟂ w_b >= 0``, ``0 <= u - b ⟂ v_b >= 0``. ``x_at``, ``g_at`` and ``pair_at``
    place a slice of the step's vectors in the MPCC's (a horizon: one slice per step); ``index``
    (``"k"``) suffixes the names in the formulas (``w_b_k``); ``given`` lists the bound vectors
    that vary inside a block.
    """
    n, nl = form.n, int(form.lower.size)
    variables: list[Segment] = []
    cons: list[Segment] = []
    given: list[Formula] = []

    def nm(name: str, tex: str) -> Formula:
        return (name, tex) if index is None else (f"{name}_{index}", step_latex(tex, index))

    for b in blocks:
        a, c = b.slice.start, b.slice.stop
        size = c - a
        pl, pr = (int(np.searchsorted(form.lower, v)) for v in (a, c))
        ql, qr = (int(np.searchsorted(form.upper, v)) for v in (a, c))
        ra, rb = (int(np.searchsorted(form.rows, v)) for v in (a, c))
        has_w, has_v = pr > pl, qr > ql
        z = nm(b.name, b.latex)
        slack = {"lower": (f"w_{b.name}", rf"w_{{{b.latex}}}"), "upper": (f"v_{b.name}", rf"v_{{{b.latex}}}")}
        w, v = nm(*slack["lower"]), nm(*slack["upper"])
        variables.append(Segment("x", b.name, x_at(b.slice), latex=b.latex, dim=b.dim))
        for has, (s0, s1), base, key in ((has_w, (pl, pr), n, "lower"), (has_v, (ql, qr), n + nl, "upper")):
            if has:
                dim = b.dim if s1 - s0 == size else None
                at = x_at(slice(base + s0, base + s1))
                variables.append(Segment("x", slack[key][0], at, latex=slack[key][1], dim=dim))
        if rb > ra:
            body, note = None, None
            if b.F is not None:
                bt, bl = b.F
                if has_w:
                    bt, bl = f"{bt} - {w[0]}", f"{bl} - {w[1]}"
                if has_v:
                    bt, bl = f"{bt} + {v[0]}", f"{bl} + {v[1]}"
                body = (bt, bl)
            if rb - ra != size:
                note = "the non-fixed components"
            elif (has_w and pr - pl != size) or (has_v and qr - ql != size):
                note = "w, v on the components with a finite lower, upper bound"
            dim = b.dim if rb - ra == size else None
            cons.append(Segment("g", f"g_{b.name}", g_at(slice(ra, rb)), latex=rf"g_{{{b.latex}}}", dim=dim,
                                body=body, note=note))  # fmt: skip
        for side, (s0, s1), H, base in (("lower", (pl, pr), w, 0), ("upper", (ql, qr), v, nl)):
            if s1 <= s0:
                continue
            idx = (form.lower if side == "lower" else form.upper)[s0:s1]
            bnd = (form.lb if side == "lower" else form.ub)[idx]
            rev = side == "upper"
            if np.all(bnd == bnd[0]):
                G = (_minus(z[0], float(bnd[0]), False, rev), _minus(z[1], float(bnd[0]), True, rev))
            else:
                bn, bl = (
                    (f"lb_{b.name}", rf"l_{{{b.latex}}}")
                    if not rev
                    else (f"ub_{b.name}", rf"u_{{{b.latex}}}")
                )
                G = (f"{z[0]} - {bn}", f"{z[1]} - {bl}") if not rev else (f"{bn} - {z[0]}", f"{bl} - {z[1]}")
                given.append((f"{bn} = {_vec(bnd, False)}", f"{bl} = {_vec(bnd, True)}"))
            tag_t, tag_l = ("_lo", r",\mathrm{lo}") if not rev else ("_up", r",\mathrm{up}")
            if not (has_w and has_v):
                tag_t = tag_l = ""
            full = s1 - s0 == size
            cons.append(Segment(
                "pair", f"(G, H)_{b.name}{tag_t}", pair_at(slice(base + s0, base + s1)),
                latex=rf"(G, H)_{{{b.latex}{tag_l}}}", dim=b.dim if full else None, body=G, partner=H,
                note=None if full else f"the components with a finite {side} bound",
            ))  # fmt: skip
    return variables, cons, given


def _symbolic_rows(mcp: MCP, exprs: Sequence[sp.Expr], rename: Rename | None, latex: bool) -> list[str]:
    """Rows of a symbolic function block, leaf names through ``rename`` (``a_k`` in a horizon)."""
    names = _SymbolNames(mcp, latex)
    out = []
    for e in exprs:
        found: dict[sp.Symbol, str] = {}
        for s in e.free_symbols:
            nm = names.get(s)
            if nm is None:
                continue
            if rename is not None:
                head, _, k = s.name.rpartition("_")
                b = names.blocks[head]
                leaf = bx.Var(b) if b in mcp.blocks else bx.Param(b)  # type: ignore[arg-type]
                stem = rename(leaf, b.latex if latex else b.name, latex)
                if b.size == 1:
                    nm = stem
                else:
                    nm = step_latex(stem, k) if latex else f"{stem}[{k}]"
            found[s] = nm
        if latex:
            out.append(sp.latex(e, symbol_names=found))
        else:
            out.append(sp.sstr(e.xreplace({s: sp.Symbol(n) for s, n in found.items()})))
    return out


def _fb_formula(
    mcp: MCP, name: str, rename: Rename | None, index: str | None, max_rows: int
) -> tuple[Formula, list[tuple[Formula, Formula]], list[Formula]]:
    """``F_b`` as declared, and what its formula needs under "where" and "given"."""
    fb = mcp.function_block(name)
    b = mcp._vars[name]
    if isinstance(fb, BlockFunction):
        return (expr_text(fb.expr, rename), expr_latex(fb.expr, rename)), [], []
    suffix_t = f"_{index}" if index is not None else ""

    def sub(stem: str) -> str:
        return step_latex(stem, index) if index is not None else stem

    if isinstance(fb, AffineFunction):
        over = [mcp._vars[o] for o in fb.over]
        zs = ", ".join(rename(bx.Var(o), o.name, False) if rename else o.name for o in over)
        zl = ", ".join(rename(bx.Var(o), o.latex, True) if rename else o.latex for o in over)
        if len(over) > 1:
            zs, zl = f"({zs})", rf"\left({zl}\right)"
        M_t, M_l = f"M_{name}", rf"M_{{\mathrm{{{name}}}}}"
        q_t, q_l = f"q_{name}", rf"q_{{\mathrm{{{name}}}}}"
        rows, cols = fb.M.shape
        sparse = f" (sparse, {fb.nnz} nonzeros)" if fb.is_sparse else ""
        given = [
            (f"{M_t} ∈ R^({rows} x {cols}){sparse}", rf"{M_l} \in \mathbb{{R}}^{{{rows} \times {cols}}}")
        ]
        if fb.q_values is None:  # q depends on the parameters: per step in a horizon
            q_t, q_l = q_t + suffix_t, sub(q_l)
            where = [
                (
                    (f"{q_t} ∈ R^{rows} (affine in the parameters)", rf"{q_l} \in \mathbb{{R}}^{{{rows}}}"),
                    ("", ""),
                )
            ]
        else:
            where = []
            given.append((f"{q_t} ∈ R^{rows}", rf"{q_l} \in \mathbb{{R}}^{{{rows}}}"))
        return (f"{M_t} @ {zs} + {q_t}", rf"{M_l} {zl} + {q_l}"), where, given
    F_t, F_l = f"F_{name}{suffix_t}", sub(rf"F_{{\mathrm{{{name}}}}}")
    if b.size <= max_rows:
        rows_t = ", ".join(_symbolic_rows(mcp, fb.exprs, rename, False))
        rows_l = ", ".join(_symbolic_rows(mcp, fb.exprs, rename, True))
        where = [((f"{F_t} = [{rows_t}]", rf"{F_l} = \left({rows_l}\right)"), ("", ""))]
    else:
        tex = rf"{F_l}:\ \text{{{b.size} rows given row by row}}"
        where = [((f"{F_t}: {b.size} rows given row by row", tex), ("", ""))]
    return (F_t, F_l), where, []


def _param_line(pb: ParameterBlock) -> Formula:
    shape = sym_shape(bx.Param(pb))
    sparse = isinstance(pb, MatrixParameterBlock) and pb.pattern is not None
    text = f"{pb.name} ∈ {space(shape, False)}" + (" (sparse)" if sparse else "")
    tex = rf"{pb.latex} \in {space(shape, True)}" + (r"\ \text{(sparse)}" if sparse else "")
    return text, tex


def declaration_parts(
    mcp: MCP,
    rename: Rename | None = None,
    per_step: set[str] | None = None,
    index: str | None = None,
    max_rows: int = 8,
) -> tuple[list[StepBlock], list[tuple[Formula, Formula]], list[Formula]]:
    """``(blocks, where, given)`` of an MCP declaration for a slack-form printout.

    ``rename`` renames leaves in the formulas (a horizon's ``v_k``) and ``index`` suffixes the
    per-step names of row-by-row functions (``F_b_k``); parameter blocks named in ``per_step``
    are left out of "given" (a horizon defines them per step).
    """
    mcp.validate()
    per_step = per_step or set()
    sblocks: list[StepBlock] = []
    where: list[tuple[Formula, Formula]] = []
    defs: list[bx.Named] = []
    consts: dict[int, bx.Const] = {}
    affine_given: list[Formula] = []
    for b in mcp.blocks:
        F, extra, needs = _fb_formula(mcp, b.name, rename, index, max_rows)
        where += extra
        affine_given += needs
        sblocks.append(StepBlock(b.name, b.latex, b.dim, b.slice, F))
        fb = mcp.function_block(b.name)
        if isinstance(fb, BlockFunction):
            defs += [d for d in bx.definitions(fb.expr) if all(d is not x for x in defs)]
            for leaf in bx.walk(fb.expr):
                if isinstance(leaf, bx.Const) and leaf.name is not None:
                    consts.setdefault(id(leaf), leaf)
    for d in sorted(defs, key=lambda x: x.order):
        t_name, l_name = d.name, d.latex or _default_stem(d.name)
        if rename is not None:
            t_name, l_name = rename(d, t_name, False), rename(d, l_name, True)
        where.append((
            (f"{t_name} = {expr_text(d.expr, rename)}", rf"{l_name} = {expr_latex(d.expr, rename)}"),
            (f"{t_name} ∈ {space(sym_shape(d), False)}", rf"{l_name} \in {space(sym_shape(d), True)}"),
        ))  # fmt: skip
    given = affine_given + [_param_line(pb) for pb in mcp.parameter_blocks if pb.name not in per_step]
    for c in consts.values():
        kind = "constant, sparse" if sps.issparse(c.value) else "constant"
        cname, cl = c.name or "", c.latex or _default_stem(c.name or "")
        given.append((f"{cname} ∈ {space(sym_shape(c), False)} ({kind})",
                      rf"{cl} \in {space(sym_shape(c), True)}\ \text{{({kind})}}"))  # fmt: skip
    return sblocks, where, given


def slack_form_blocks(source: Any, form: SlackForm, max_rows: int = 8) -> MPCCBlocks:
    """The :class:`~mcpkit.mpcc.problem.MPCCBlocks` of the slack form of an MCP.

    Parameters
    ----------
    source
        The :class:`~mcpkit.problem.MCP` declaration (formulas as declared, "where" and "given"
        as in its own printout) or its :class:`~mcpkit.lowering.casadi.CasadiMCP` (block names
        only; the rows print from CasADi).
    form
        The :class:`~mcpkit.lowering.slack.SlackForm` that
        :class:`~mcpkit.lowering.casadi.MCPToMPCC` returned with the MPCC.

    Use: ``mpcc, form = MCPToMPCC().apply(lower_to_casadi(mcp))``;
    ``mpcc.with_blocks(slack_form_blocks(mcp, form)).to_text()``.
    """
    if not isinstance(form, SlackForm) or form.layout != "blocked":
        raise MCPInputError("slack_form_blocks: form must be the 'blocked' SlackForm of MCPToMPCC")
    if isinstance(source, MCP):
        sblocks, where, given = declaration_parts(source, max_rows=max_rows)
        sizes: tuple[tuple[str, int], ...] = tuple(sorted(source.dims.items()))
        n = source.n
    else:
        blocks = getattr(source, "blocks", None)
        if not isinstance(blocks, dict):
            raise MCPInputError(
                f"slack_form_blocks: source must be an MCP or a CasadiMCP, got {type(source).__name__}"
            )
        ordered = sorted(blocks.items(), key=lambda t: t[1].start)
        sblocks = [StepBlock(k, _default_stem(k), None, sl) for k, sl in ordered]
        where, given, sizes = [], [], ()
        n = int(source.n)
    if n != form.n:
        raise MCPInputError(f"slack_form_blocks: the MCP has {n} variables but the slack form {form.n}")
    variables, cons, bounds = slack_segments(sblocks, form)
    return MPCCBlocks(
        segments=tuple(cons + variables),
        objective=("0", "0"),
        where=tuple(where),
        given=tuple(given + bounds),
        sizes=sizes,
        source=f"slack form of MCP {source.name!r}",
    )
