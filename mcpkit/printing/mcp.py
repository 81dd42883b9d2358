r"""Lowering of an MCP to printed mathematics (LaTeX or plain text), for teaching.

Each pair is printed in its box case, variable first and function second:

=====================  ==========================================================
bounds                 printed condition
=====================  ==========================================================
:math:`l` finite only  :math:`l \le z_i \perp F_i(z) \ge 0`
:math:`u` finite only  :math:`z_i \le u \perp F_i(z) \le 0`
both finite            :math:`l \le z_i \le u \perp F_i(z)` (box)
neither                :math:`F_i(z) = 0` (:math:`z_i` free)
:math:`l = u`          :math:`z_i = l` (:math:`F_i` unrestricted)
=====================  ==========================================================

**Block level** (the default when a function block is a block expression,
:class:`~mcpkit.problems.functions.BlockFunction`): the printer prints what the user declared, one line per
block pair with its size (:math:`\beta_n \in \mathbb{R}^{n_c}`), transposes and products as
written (``Wn.T @ v`` in text, :math:`W_n^T\nu` in LaTeX; elementwise products of vectors as
:math:`\circ`), the named definitions under "where", and the parameters with their shapes
under "given" (values with ``values=True``); the size labels' values close the print. The
number of lines does not depend on the block sizes. ``expand=True`` gives the entrywise form.

**Entrywise** (``expand=True``, and the default for declarations without block expressions):
one line per component. Large affine blocks print in matrix form :math:`M z_S + q` (a sparse
:math:`M` with its number of nonzeros); a large block with varying bounds prints its first and
last rows, expanded from those rows of :math:`M` only. Symbols are named on demand, so printing
a declaration with :math:`10^5` variables never creates its :math:`10^5` sympy symbols.

The lowering is reversible in the sense of :class:`~mcpkit.lowering.base.Lowering`: the inverse
data map each printed component name back to its place in ``z``, so values read off by printed
name can be put back into a stacked vector.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sps
import sympy as sp

from mcpkit.errors import MCPInputError
from mcpkit.lowering.base import Lowering
from mcpkit.printing.expressions import (
    default_latex,
    expr_latex,
    expr_text,
    format_number,
    space,
    sym_shape,
    sympy_latex,
    sympy_text,
    tidy_numbers,
)
from mcpkit.problems import blocks as bx
from mcpkit.problems.functions import AffineFunction, BlockFunction, SymbolicFunction
from mcpkit.problems.hooks import Hook, provide
from mcpkit.problems.variables import MatrixParameterBlock, ParameterBlock, VariableBlock
from mcpkit.problems.views import MCPView


def _script_end(s: str, i: int) -> int:
    """End of the script argument that starts at ``s[i]``: a braced group, a control word or one character."""
    if i >= len(s):
        return i
    if s[i] == "{":
        depth = 0
        for j in range(i, len(s)):
            depth += (s[j] == "{") - (s[j] == "}")
            if depth == 0:
                return j + 1
        return len(s)
    if s[i] == "\\":
        j = i + 1
        while j < len(s) and s[j].isalpha():
            j += 1
        return max(j, min(i + 2, len(s)))
    return i + 1


def _top_level_scripts(s: str) -> list[tuple[int, str]]:
    """Positions and kinds (``_`` or ``^``) of the sub- and superscripts of ``s`` outside braces."""
    out: list[tuple[int, str]] = []
    depth, i = 0, 0
    while i < len(s):
        c = s[i]
        if c == "\\":  # an escaped character (\_, \{) or a control word: not a script
            i += 2
            continue
        if c in "{}":
            depth += 1 if c == "{" else -1
        elif c in "_^" and depth == 0:
            out.append((i, c))
        i += 1
    return out


def _indexed_latex(stem: str, k: int | str) -> str:
    r"""``stem`` with the index ``k`` as a subscript, never a double subscript.

    A trailing subscript takes the index (:math:`\beta_f` -> ``\beta_{f,k}``, ``W_{nt}`` ->
    ``W_{nt,k}``); a stem with a subscript elsewhere is braced first (``x_{a}^{2}`` ->
    ``{x_{a}^{2}}_{k}``); any other stem gets ``_{k}``.
    """
    scripts = _top_level_scripts(stem)
    if scripts and scripts[-1][1] == "_":
        p = scripts[-1][0]
        if _script_end(stem, p + 1) == len(stem) > p + 1:
            arg = stem[p + 1 :]
            inner = arg[1:-1] if arg.startswith("{") else arg
            return f"{stem[:p]}_{{{inner},{k}}}"
    if any(kind == "_" for _, kind in scripts):
        return f"{{{stem}}}_{{{k}}}"
    return f"{stem}_{{{k}}}"


@dataclass(frozen=True)
class NameMap:
    """Inverse data of the printer: printed component name -> index into ``z``."""

    names: dict[str, int]
    n: int


class SymbolNames:
    """Printed name of a variable or parameter symbol, found from its block (no table of all symbols).

    A block's symbols are ``f"{block}_{k}"`` (:class:`~mcpkit.problems.variables.SymbolRange`); a
    one-component block prints as a scalar, others as ``name[k]`` (text) or ``name_{k}`` (LaTeX).
    """

    def __init__(self, problem: MCPView, latex: bool) -> None:
        self.latex = latex
        self.blocks = {b.name: b for b in (*problem.blocks, *problem.parameter_blocks)}

    def name(self, b: VariableBlock | ParameterBlock, k: int) -> str:
        if isinstance(b, MatrixParameterBlock):
            if b.pattern is None:
                i, j = divmod(k, b.shape[1])
            else:
                i = int(np.searchsorted(b.pattern.indptr, k, side="right")) - 1
                j = int(b.pattern.indices[k])
            return _indexed_latex(b.latex, f"{i},{j}") if self.latex else f"{b.name}[{i},{j}]"
        if b.size == 1:
            return b.latex if self.latex else b.name
        return _indexed_latex(b.latex, k) if self.latex else f"{b.name}[{k}]"

    def get(self, s: sp.Symbol) -> str | None:
        head, _, k = s.name.rpartition("_")
        b = self.blocks.get(head)
        if b is None or not k.isdigit() or int(k) >= b.size or b.symbols[int(k)] != s:
            return None
        return self.name(b, int(k))


def _names(problem: MCPView, latex: bool) -> tuple[SymbolNames, dict[str, int]]:
    names = SymbolNames(problem, latex)
    index = {names.name(b, k): b.start + k for b in problem.blocks for k in range(b.size)}
    return names, index


#: Printed characters (a control word counts one, braces and scripts none) of one LaTeX row before
#: it continues on a new row of the ``aligned`` block, indented, at a term boundary. Text keeps one
#: pair per line (scripts read a line per pair).
ROW_WIDTH = 64

#: What starts a continued LaTeX row (rows are indented by ``\\quad``, continuations further).
CONTINUE = "\\\\\n  &\\qquad\\quad "


def _visible(s: str, latex: bool) -> int:
    """Rough printed width of ``s``: LaTeX counts a control word as one character and drops braces,
    script marks and spacing commands."""
    if not latex:
        return len(s)
    s = re.sub(r"\\(left|right|quad|qquad|[,;!])", "", s)
    return len(re.sub(r"[{}_^ ]", "", re.sub(r"\\[A-Za-z]+", "x", s)))


class Ranks:
    """Symbol -> ``(1, j)`` (of the ``j``-th parameter block) or ``(2, j)`` (``j``-th variable block),
    read off the symbol's name (``block_k``) as :class:`SymbolNames` does: no symbol is made for
    a whole block. ``order`` maps block names to their ``(group, j)``."""

    def __init__(self, problem: MCPView, order: dict[str, tuple[int, int]]) -> None:
        self.order = order
        self.blocks = {b.name: b for b in (*problem.blocks, *problem.parameter_blocks)}

    def get(self, s: sp.Symbol) -> tuple[int, int] | None:
        head, _, k = s.name.rpartition("_")
        b = self.blocks.get(head)
        if b is None or head not in self.order or not k.isdigit() or int(k) >= b.size:
            return None
        return self.order[head] if b.symbols[int(k)] == s else None


def term_rank(t: sp.Expr, own: frozenset[sp.Symbol], rank: Ranks | None) -> tuple[int, int]:
    r"""Where a term of a row goes in the printed order, the order rows are usually written in
    (:math:`v - v^0 - h f - p_f`, :math:`\psi/h + v_2`):

    ``(0, 0)`` a term of the row's own unknown alone (and numbers); then ``(2, j)`` a term with
    unknowns, ``j`` the place of its first one, after ``(1, j)`` a term of parameters alone, ``j``
    the place of its first one; ``(3, 0)`` a constant last. ``rank`` maps each symbol to
    ``(1, j)`` (parameter) or ``(2, j)`` (variable); a row expanded from a block expression ranks
    every symbol ``(2, j)`` by where its block first appears in the expression as written.
    """
    syms = t.free_symbols
    if syms and syms <= own:
        return (0, 0)
    places = [r for s in syms if rank is not None and (r := rank.get(s)) is not None]
    unknowns = [r for r in places if r[0] == 2]
    if unknowns:
        return min(unknowns)
    return min(places) if places else (3, 0)


def written_ranks(problem: MCPView, expr: bx.Expr) -> Ranks:
    """``(2, j)`` for the symbols of the ``j``-th block to appear in ``expr`` as written (pre-order)."""
    order: dict[str, tuple[int, int]] = {}
    for leaf in bx.walk(expr):
        if isinstance(leaf, (bx.Var, bx.Param)) and leaf.block.name not in order:
            order[leaf.block.name] = (2, len(order))
    return Ranks(problem, order)


def symbol_ranks(problem: MCPView) -> Ranks:
    """``(1, j)`` for the symbols of the ``j``-th parameter block, ``(2, j)`` for the ``j``-th variable
    block (the ranks of :func:`term_rank` for rows declared row by row)."""
    order = {pb.name: (1, j) for j, pb in enumerate(problem.parameter_blocks)}
    order.update({b.name: (2, j) for j, b in enumerate(problem.blocks)})
    return Ranks(problem, order)


def _terms(e: sp.Expr, own: frozenset[sp.Symbol], rank: Ranks | None) -> list[sp.Expr]:
    """The terms of ``e`` (tidied numbers) in :func:`term_rank` order (sympy's order among equals)."""
    e = tidy_numbers(e)
    if not isinstance(e, sp.Add):
        return [e]
    terms = list(e.as_ordered_terms())
    return sorted(terms, key=lambda t: term_rank(t, own, rank))


def _expr(
    e: sp.Expr,
    names: SymbolNames,
    latex: bool,
    own: frozenset[sp.Symbol] = frozenset(),
    rank: Ranks | None = None,
    indent: int = 0,
) -> str:
    """A row's expression in reading order (:func:`term_rank`); in LaTeX continued on a new row at a
    term boundary after :data:`ROW_WIDTH` printed characters (``indent``: those already on the row)."""
    found = {s: nm for s in e.free_symbols if (nm := names.get(s)) is not None}
    plain = {s: sp.Symbol(nm) for s, nm in found.items()}

    def one(t: sp.Expr) -> str:
        return sympy_latex(t, found) if latex else sympy_text(t.xreplace(plain))

    out, width = "", indent
    for k, t in enumerate(_terms(e, own, rank)):
        neg = k > 0 and t.could_extract_minus_sign()
        body = one(-t if neg else t)
        piece = body if k == 0 else (" - " if neg else " + ") + body
        if latex and k > 0 and width + _visible(piece, latex) > ROW_WIDTH:
            out += CONTINUE
            width = 6
        out += piece
        width += _visible(piece, latex)
    return out


def _affine_row(problem: MCPView, fb: AffineFunction, r: int) -> sp.Expr:
    r"""Row :math:`r` of :math:`M z_S + q` as a sympy expression, from that row of :math:`M` only."""
    over = [problem.blocks[[b.name for b in problem.blocks].index(nm)] for nm in fb.over]
    ends = np.cumsum([b.size for b in over])
    M = fb.M
    if sps.issparse(M):
        lo, hi = M.indptr[r], M.indptr[r + 1]
        cols, vals = M.indices[lo:hi], M.data[lo:hi]
    else:
        cols = np.flatnonzero(M[r])
        vals = M[r, cols]
    terms = []
    for j, c in zip(cols.tolist(), vals.tolist(), strict=True):
        k = int(np.searchsorted(ends, j, side="right"))
        b = over[k]
        terms.append(sp.Float(c) * b.symbols[j - (int(ends[k]) - b.size)])
    return sum(terms, sp.Integer(0)) + fb.q[r]


def _condition(zname: str, fstr: str, lo: float | str, hi: float | str, latex: bool) -> str:
    """The pair ``zname ⟂ fstr`` in its box case (a bound: a number or the printed name of a bound vector)."""
    le = r" \le " if latex else " <= "
    ge = r" \ge " if latex else " >= "
    perp = r" \perp " if latex else " ⟂ "
    lo_s = lo if isinstance(lo, str) else format_number(lo, latex)
    hi_s = hi if isinstance(hi, str) else format_number(hi, latex)
    lo_inf = not isinstance(lo, str) and math.isinf(lo)
    hi_inf = not isinstance(hi, str) and math.isinf(hi)
    if lo == hi:
        return f"{zname} = {lo_s}" + (r"\quad (F \text{ free})" if latex else "   (F free)")
    if lo_inf and hi_inf:
        free = r"\quad (" + zname + r"\ \text{free})" if latex else f"   ({zname} free)"
        return f"{fstr} = 0{free}"
    if hi_inf:
        return f"{lo_s}{le}{zname}{perp}{fstr}{ge}0"
    if lo_inf:
        return f"{zname}{le}{hi_s}{perp}{fstr}{le}0"
    return f"{lo_s}{le}{zname}{le}{hi_s}{perp}{fstr}"


def _function_sources(problem: MCPView) -> dict[str, str]:
    """Block -> where its functions come from in the user's model (``function_sources`` set on the
    MCP by a reader such as :func:`~mcpkit.lowering.pyomo.from_pyomo`; empty otherwise)."""
    return problem.__dict__.get("function_sources") or {}


def _render(problem: MCPView, latex: bool, max_rows: int) -> tuple[list[str], dict[str, int]]:
    problem.validate()
    names, index = _names(problem, latex)
    rank = symbol_ranks(problem)
    written: dict[str, Ranks] = {}  # rows expanded from a block expression: its order as written
    lb, ub = problem.lb, problem.ub
    lines: list[str] = []
    for b in problem.blocks:
        fb = problem.function_block(b.name)
        same_bounds = np.all(lb[b.slice] == lb[b.start]) and np.all(ub[b.slice] == ub[b.start])
        if isinstance(fb, AffineFunction) and b.size > max_rows and same_bounds:
            zb = b.latex if latex else b.name
            zs = ", ".join(problem.blocks[[x.name for x in problem.blocks].index(o)].latex for o in fb.over)
            zs_txt = ", ".join(fb.over)
            qnum = fb.q_values is not None
            shape = f"{fb.M.shape[0]}\\times{fb.M.shape[1]}" if latex else f"{fb.M.shape[0]}x{fb.M.shape[1]}"
            if latex:
                fstr = f"M_{{\\mathrm{{{b.name}}}}} ({zs}) + q_{{\\mathrm{{{b.name}}}}}"
            else:
                fstr = f"M_{b.name} @ ({zs_txt}) + q_{b.name}"
            cond = _condition(zb, fstr, lb[b.start], ub[b.start], latex)
            sparse = f", sparse with {fb.nnz} nonzeros" if fb.is_sparse else ""
            note = f"M_{b.name} is {shape}{sparse}" + ("" if qnum else ", q depends on parameters")
            lines.append(cond + (rf"\quad \text{{({note})}}" if latex else f"   [{note}]"))
            continue
        shown = range(b.size) if b.size <= max_rows else [*range(max_rows - 1), b.size - 1]
        source = _function_sources(problem).get(b.name)
        if source and not latex:
            lines.append(f"# {b.name}: F from {source}")
        for k in shown:
            if b.size > max_rows and k == b.size - 1:
                lines.append(r"\vdots" if latex else "...")
            i = b.start + k
            zname = names.name(b, k)
            if isinstance(fb, SymbolicFunction):
                e = fb.exprs[k]
            elif isinstance(fb, BlockFunction):
                e = fb.expand()[k]
                if b.name not in written:
                    written[b.name] = written_ranks(problem, fb.expr)
            else:
                e = _affine_row(problem, fb, k)
            # M z + q prints column by column; other rows start with their own unknown
            own = frozenset() if isinstance(fb, AffineFunction) else frozenset({b.symbols[k]})
            lead = _visible(_condition(zname, "", lb[i], ub[i], latex), latex)
            ranks = written[b.name] if b.name in written else rank
            lines.append(_condition(zname, _expr(e, names, latex, own, ranks, lead), lb[i], ub[i], latex))
    return lines, index


# ------------------------------------------------------------------ block expressions


# ------------------------------------------------------------------ block-level MCP
def _case_words(case: str, z: str, lo: str = "l", hi: str = "u") -> str:
    """The box case of a pair in words, with the bounds printed as ``lo`` and ``hi``."""
    if case == "fixed":
        return f"fixed: {z} = {lo} and F is unrestricted"
    if case == "free":
        return "free: the equation F = 0 holds"
    if case == "lower":
        gap = z if lo == "0" else f"({z} - {lo})"
        return f"lower bound only: {z} >= {lo}, F >= 0 and {gap} * F = 0"
    if case == "upper":
        gap = f"-{z}" if hi == "0" else f"({hi} - {z})"
        return f"upper bound only: {z} <= {hi}, F <= 0 and {gap} * F = 0"
    return f"box: F >= 0 where {z} = {lo}, F = 0 where {lo} < {z} < {hi}, F <= 0 where {z} = {hi}"


def case_key(lo: float, hi: float) -> str:
    """``fixed``, ``free``, ``lower``, ``upper`` or ``box`` from one pair of bounds."""
    if lo == hi:
        return "fixed"
    if math.isinf(lo) and math.isinf(hi):
        return "free"
    if math.isinf(hi):
        return "lower"
    return "upper" if math.isinf(lo) else "box"


@dataclass
class _Printout:
    """The parts of a block-level print (each a list of lines)."""

    pairs: list[tuple[str, str]]
    where: list[tuple[str, str]]
    given: list[str]
    sizes: str
    bounds: list[str]


def _block_bounds(
    problem: MCPView, b: VariableBlock, latex: bool
) -> tuple[float | str, float | str, str | None]:
    """``(lo, hi, note)``: numbers when uniform over the block, else printed names of the bound vectors."""
    lo, hi = problem.lb[b.slice], problem.ub[b.slice]
    keys = {case_key(float(a), float(c)) for a, c in zip(lo, hi, strict=True)}
    lname = rf"l_{{{b.latex}}}" if latex else f"lb_{b.name}"
    uname = rf"u_{{{b.latex}}}" if latex else f"ub_{b.name}"
    if len(keys) > 1:
        counts: dict[str, int] = {}
        for a, c in zip(lo, hi, strict=True):
            k = case_key(float(a), float(c))
            counts[k] = counts.get(k, 0) + 1
        note = "mixed bounds: " + ", ".join(f"{v} {k}" for k, v in counts.items())
        return lname, uname, note
    lo_v: float | str = float(lo[0]) if np.all(lo == lo[0]) else lname
    hi_v: float | str = float(hi[0]) if np.all(hi == hi[0]) else uname
    if keys == {"fixed"} and isinstance(lo_v, str):
        hi_v = lo_v
    return lo_v, hi_v, None


def _block_condition(
    zname: str, fstr: str, lo: float | str, hi: float | str, latex: bool, note: str | None
) -> str:
    if note is None:
        return _condition(zname, fstr, lo, hi, latex)
    le, perp = (r" \le ", r" \perp ") if latex else (" <= ", " ⟂ ")
    tail = rf"\quad \text{{({note})}}" if latex else f"   ({note})"
    return f"{lo}{le}{zname}{le}{hi}{perp}{fstr}{tail}"


def _value_text(values: np.ndarray, latex: bool, shape: tuple[int, ...] | None = None) -> str:
    arr = np.asarray(values, dtype=float)
    if shape is not None:
        arr = arr.reshape(shape)
    if latex:
        if arr.ndim == 2 and arr.shape[0] <= 6 and arr.shape[1] <= 6:
            rows = r" \\ ".join(" & ".join(format_number(float(x), True) for x in row) for row in arr)
            return rf"\begin{{bmatrix}}{rows}\end{{bmatrix}}"
        if arr.ndim == 1 and arr.size <= 8:
            return "(" + ", ".join(format_number(float(x), True) for x in arr) + ")"
        return r"\dots"
    with np.printoptions(threshold=12, edgeitems=3, linewidth=10**9):
        return np.array2string(arr, separator=", ").replace("\n", "")


def _block_printout(problem: MCPView, latex: bool, values: bool, max_rows: int) -> _Printout:
    problem.validate()
    names, _ = _names(problem, latex)
    rank = symbol_ranks(problem)
    pairs: list[tuple[str, str]] = []
    defs: list[bx.Named] = []
    consts: dict[int, bx.Const] = {}
    bounds: list[str] = []
    ind = "∈" if not latex else r"\in"
    blocks = {b.name: b for b in problem.blocks}
    for b in problem.blocks:
        fb = problem.function_block(b.name)
        zname = b.latex if latex else b.name
        size = f"{zname} {ind} {space(sym_shape(bx.Var(b)), latex)}"
        lo, hi, note = _block_bounds(problem, b, latex)
        for bound, arr in ((lo, problem.lb), (hi, problem.ub)):
            if isinstance(bound, str) and bound not in [x.split(" ")[0] for x in bounds]:
                shown = f" = {_value_text(arr[b.slice], latex)}" if values else ""
                bounds.append(f"{bound} {ind} {space(sym_shape(bx.Var(b)), latex)}{shown}")
        if isinstance(fb, BlockFunction):
            for d in bx.definitions(fb.expr):
                if all(d is not x for x in defs):
                    defs.append(d)
            for leaf in bx.walk(fb.expr):
                if isinstance(leaf, bx.Const) and leaf.name is not None:
                    consts.setdefault(id(leaf), leaf)
            fstr = expr_latex(fb.expr) if latex else expr_text(fb.expr)
            pairs.append((_block_condition(zname, fstr, lo, hi, latex, note), size))
        elif isinstance(fb, AffineFunction):
            zs = ", ".join((blocks[o].latex if latex else o) for o in fb.over)
            if latex:
                fstr = rf"M_{{\mathrm{{{b.name}}}}} ({zs}) + q_{{\mathrm{{{b.name}}}}}"
            else:
                fstr = f"M_{b.name} @ ({zs}) + q_{b.name}"
            m, n = fb.M.shape
            shape = rf"{m}\times{n}" if latex else f"{m}x{n}"
            sparse = f", sparse with {fb.nnz} nonzeros" if fb.is_sparse else ""
            qdep = "" if fb.q_values is not None else ", q depends on parameters"
            text = f"M_{b.name} is {shape}{sparse}{qdep}"
            cond = _block_condition(zname, fstr, lo, hi, latex, note)
            pairs.append((cond + (rf"\quad \text{{[{text}]}}" if latex else f"   [{text}]"), size))
        else:
            shown = range(b.size) if b.size <= max_rows else [*range(max_rows - 1), b.size - 1]
            lb, ub = problem.lb, problem.ub
            for k in shown:
                if b.size > max_rows and k == b.size - 1:
                    pairs.append((r"\vdots" if latex else "...", ""))
                i = b.start + k
                fstr = _expr(fb.exprs[k], names, latex, frozenset({b.symbols[k]}), rank, 12)
                row = _condition(names.name(b, k), fstr, lb[i], ub[i], latex)
                pairs.append((row, size if k == shown[0] else ""))
    where = []
    for d in sorted(defs, key=lambda x: x.order):
        dname = (d.latex or default_latex(d.name)) if latex else d.name
        body = expr_latex(d.expr) if latex else expr_text(d.expr)
        where.append((f"{dname} = {body}", f"{dname} {ind} {space(sym_shape(d), latex)}"))
    given = []
    pv = problem.parameter_values
    for pb in problem.parameter_blocks:
        pname = pb.latex if latex else pb.name
        shape = sym_shape(bx.Param(pb))
        line = f"{pname} {ind} {space(shape, latex)}"
        if values:
            flat = pv[pb.slice]
            if isinstance(pb, MatrixParameterBlock):
                mat = pb.matrix(flat)
                line += " = " + _value_text(mat.toarray() if sps.issparse(mat) else mat, latex)
            else:
                line += " = " + _value_text(flat, latex)
        elif isinstance(pb, MatrixParameterBlock) and pb.pattern is not None:
            line += r"\ \text{(sparse)}" if latex else " (sparse)"
        given.append(line)
    for c in consts.values():
        cname = (c.latex or default_latex(c.name or "")) if latex else c.name
        line = f"{cname} {ind} {space(sym_shape(c), latex)}"
        kind = "constant" if not sps.issparse(c.value) else "constant, sparse"
        line += rf"\ \text{{({kind})}}" if latex else f" ({kind})"
        if values:
            v = c.value.toarray() if sps.issparse(c.value) else np.asarray(c.value)
            line += " = " + _value_text(v, latex)
        given.append(line)
    sep = r",\ " if latex else ", "
    sizes = sep.join(f"{k} = {v}" for k, v in sorted(problem.dims.items()))
    return _Printout(pairs, where, given + bounds, sizes, bounds)


def _block_text(problem: MCPView, values: bool, max_rows: int) -> str:
    out = _block_printout(problem, False, values, max_rows)
    width = max(len(c) for c, _ in out.pairs + out.where) + 4
    lines = [f"MCP {problem.name!r}: find {', '.join(b.name for b in problem.blocks)} such that"]
    lines += [f"  {c:<{width}}{s}".rstrip() for c, s in out.pairs]
    if out.where:
        lines.append("where")
        lines += [f"  {c:<{width}}{s}".rstrip() for c, s in out.where]
    if out.given:
        lines.append("given")
        lines += [f"  {g}" for g in out.given]
    if out.sizes:
        lines.append(f"sizes: {out.sizes}")
    return "\n".join(lines)


#: Entries of the LaTeX "given" list per row (a longer list continues on the next row).
GIVEN_PER_ROW = 5


def _block_latex(problem: MCPView, values: bool, max_rows: int) -> str:
    out = _block_printout(problem, True, values, max_rows)
    unknowns = r",\ ".join(b.latex for b in problem.blocks)
    rows = [rf"&\text{{find }} {unknowns} \text{{ such that}}"]
    rows += [rf"&\quad {c} && {s}".rstrip() for c, s in out.pairs]
    if out.where:
        rows.append(r"&\text{where}")
        rows += [rf"&\quad {c} && {s}" for c, s in out.where]
    for k in range(0, len(out.given), GIVEN_PER_ROW):  # a long list wraps instead of running off the page
        head = r"&\text{given } " if k == 0 else r"&\quad "
        rows.append(head + r",\ ".join(out.given[k : k + GIVEN_PER_ROW]))
    if out.sizes:
        rows.append(rf"&\text{{with }} {out.sizes}")
    return "\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}"


def _block_level(problem: MCPView, expand: bool | None) -> bool:
    if expand is None:
        problem.validate()
        return any(isinstance(problem.function_block(b.name), BlockFunction) for b in problem.blocks)
    return not expand


class ToLatex(Lowering):
    """MCP -> LaTeX ``aligned`` block; the inverse maps printed names back to ``z``.

    Parameters
    ----------
    max_rows
        Entrywise form: rows shown per block before eliding.
    expand
        ``True``: entrywise; ``False``: block level; ``None`` (default): block level when a
        function block is a block expression.
    values
        Block level: print the parameters' current values in the "given" list.
    """

    def __init__(self, max_rows: int = 8, expand: bool | None = None, values: bool = False) -> None:
        if max_rows < 2:
            raise MCPInputError("ToLatex: max_rows must be >= 2")
        self.max_rows = max_rows
        self.expand = expand
        self.values = values

    def apply(self, problem: MCPView) -> tuple[str, NameMap]:
        if _block_level(problem, self.expand):
            return _block_latex(problem, self.values, self.max_rows), NameMap(
                _names(problem, True)[1], problem.n
            )
        lines, index = _render(problem, True, self.max_rows)
        find = f"z = ({', '.join(b.latex for b in problem.blocks)})"
        if problem.n_params:
            given = ", ".join(pb.latex for pb in problem.parameter_blocks)
            head = f"\\text{{Given the parameters }} {given},\\ \\text{{find }} {find}"
        else:
            head = f"\\text{{Find }} {find}"
        # the sentence is the block's first row: beside the block it ran off the page
        rows = [f"  &{head}\\ \\text{{such that}}"] + [f"  &\\quad {ln}" for ln in lines]
        text = "\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}"
        return text, NameMap(index, problem.n)

    def invert(self, solution: dict[str, float], inverse_data: NameMap) -> np.ndarray:
        z = np.full(inverse_data.n, np.nan)
        for name, value in solution.items():
            if name not in inverse_data.names:
                raise MCPInputError(f"unknown printed component name {name!r}")
            z[inverse_data.names[name]] = value
        return z


class ToText(ToLatex):
    """MCP -> plain text, one pair (block level: one block pair) per line (``⟂`` reads "complementary to")."""

    def apply(self, problem: MCPView) -> tuple[str, NameMap]:
        if _block_level(problem, self.expand):
            return _block_text(problem, self.values, self.max_rows), NameMap(
                _names(problem, False)[1], problem.n
            )
        lines, index = _render(problem, False, self.max_rows)
        find = f"find z = ({', '.join(b.name for b in problem.blocks)})"
        if problem.n_params:
            find = f"given parameters ({', '.join(pb.name for pb in problem.parameter_blocks)}), {find}"
        head = f"MCP {problem.name!r}: {find}"
        return head + " such that\n" + "\n".join(f"  {ln}" for ln in lines), NameMap(index, problem.n)


def to_latex(problem: MCPView, max_rows: int = 8, expand: bool | None = None, values: bool = False) -> str:
    """LaTeX of the MCP (``aligned`` environment): block level or entrywise (see :class:`ToLatex`)."""
    return ToLatex(max_rows, expand, values).apply(problem)[0]


def to_text(problem: MCPView, max_rows: int = 8, expand: bool | None = None, values: bool = False) -> str:
    """Plain text of the MCP: one block pair (entrywise: one pair) per line (see :class:`ToLatex`)."""
    return ToText(max_rows, expand, values).apply(problem)[0]


def explain(problem: MCPView, values: bool = False) -> str:
    """Prose explanation, one line per block: its size, its box case in words and its function.

    Block functions are quoted as written, with whether they are affine in the variables;
    definitions, parameters (shapes, and values with ``values=True``) and size labels follow.
    """
    problem.validate()
    lb, ub = problem.lb, problem.ub
    nb = len(problem.blocks)
    pairs, blocks = ("pair" if problem.n == 1 else "pairs"), ("block" if nb == 1 else "blocks")
    out = [f"MCP {problem.name!r} has {problem.n} {pairs} (z_i, F_i) in {nb} {blocks}."]
    defs: list[bx.Named] = []
    for b in problem.blocks:
        lo, hi = lb[b.slice], ub[b.slice]
        kinds: dict[str, int] = {}
        for li, ui in zip(lo, hi, strict=True):
            k = case_key(float(li), float(ui))
            kinds[k] = kinds.get(k, 0) + 1
        if len(kinds) == 1:
            uniform = np.all(lo == lo[0]) and np.all(hi == hi[0])
            ls, us = (
                (format_number(float(lo[0]), False), format_number(float(hi[0]), False))
                if uniform
                else ("l", "u")
            )
            case = _case_words(next(iter(kinds)), b.name, ls, us)
            desc = case + " (componentwise)" if b.size > 1 or b.dim else case
        else:
            desc = "mixed bounds: " + "; ".join(f"{c} x {_case_words(k, b.name)}" for k, c in kinds.items())
        fb = problem.function_block(b.name)
        if isinstance(fb, BlockFunction):
            dep = ", ".join(fb.variables) or "no variable"
            form = f"F = {expr_text(fb.expr)} is {'affine' if fb.is_affine else 'nonlinear'} in {dep}"
            defs += [d for d in bx.definitions(fb.expr) if all(d is not x for x in defs)]
        elif isinstance(fb, AffineFunction):
            nz = f"{fb.nnz} nonzero" + ("s" if fb.nnz != 1 else "")
            form = f"F = M z + q is affine ({fb.M.shape[0]}x{fb.M.shape[1]} M with {nz})"
        else:
            form = "F is given row by row (symbolic)"
        size = space(sym_shape(bx.Var(b)), False)
        count = f"{b.size} pair" + ("s" if b.size != 1 else "")
        source = _function_sources(problem).get(b.name)
        form += f" (from {source})" if source else ""
        out.append(f"- {b.name} ∈ {size} ({count}): {desc}; {form}.")
    for d in sorted(defs, key=lambda x: x.order):
        out.append(f"Definition: {d.name} = {expr_text(d.expr)} ∈ {space(sym_shape(d), False)}.")
    if problem.n_params:
        pv = problem.parameter_values
        parts = []
        for pb in problem.parameter_blocks:
            item = f"{pb.name} ∈ {space(sym_shape(bx.Param(pb)), False)}"
            if values:
                item += " = " + _value_text(pv[pb.slice], False)
            parts.append(item)
        out.append(f"Given parameters {', '.join(parts)}; they may change between solves.")
    if problem.dims:
        out.append("Sizes: " + ", ".join(f"{k} = {v}" for k, v in sorted(problem.dims.items())) + ".")
    return "\n".join(out)


provide(Hook.MCP_TEXT, to_text)
provide(Hook.MCP_LATEX, to_latex)
provide(Hook.MCP_EXPLAIN, explain)
