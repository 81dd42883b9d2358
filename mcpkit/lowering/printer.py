r"""Lowering of an MCP to printed mathematics (LaTeX or plain text), for teaching.

Each pair is printed in its box case, variable first and function second:

=====================  ==========================================================
bounds                 printed condition
=====================  ==========================================================
:math:`l` finite only  :math:`l \le z_i \perp F_i(z) \ge 0`
:math:`u` finite only  :math:`z_i \le u \perp F_i(z) \le 0`
both finite           :math:`l \le z_i \le u \perp F_i(z)` (box)
neither               :math:`F_i(z) = 0` (:math:`z_i` free)
:math:`l = u`          :math:`z_i = l` (:math:`F_i` unrestricted)
=====================  ==========================================================

Large affine blocks print in matrix form :math:`M z_S + q` (a sparse :math:`M` with its number
of nonzeros); a large block with varying bounds prints its first and last rows, expanded from
those rows of :math:`M` only. Symbols are named on demand, so printing a declaration with
:math:`10^5` variables never creates its :math:`10^5` sympy symbols. The lowering is reversible in
the sense of :class:`~mcpkit.lowering.base.Lowering`: the inverse data map each printed
component name back to its place in ``z``, so values read off by printed name can be put
back into a stacked vector.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sps
import sympy as sp

from mcpkit.errors import MCPInputError
from mcpkit.lowering.base import Lowering
from mcpkit.problem import MCP, AffineFunction, ParameterBlock, SymbolicFunction, VariableBlock


def _indexed_latex(stem: str, k: int) -> str:
    if stem.endswith("}") and "_{" in stem:
        return f"{stem[:-1]},{k}}}"
    return f"{stem}_{{{k}}}"


def _num(v: float, latex: bool) -> str:
    if v == math.inf:
        return r"\infty" if latex else "inf"
    if v == -math.inf:
        return r"-\infty" if latex else "-inf"
    return sp.latex(sp.nsimplify(v, rational=False)) if latex else f"{v:g}"


@dataclass(frozen=True)
class NameMap:
    """Inverse data of the printer: printed component name -> index into ``z``."""

    names: dict[str, int]
    n: int


class _SymbolNames:
    """Printed name of a variable or parameter symbol, found from its block (no table of all symbols).

    A block's symbols are ``f"{block}_{k}"`` (:class:`~mcpkit.problem.SymbolRange`); a
    one-component block prints as a scalar, others as ``name[k]`` (text) or ``name_{k}`` (LaTeX).
    """

    def __init__(self, problem: MCP, latex: bool) -> None:
        self.latex = latex
        self.blocks = {b.name: b for b in (*problem.blocks, *problem.parameter_blocks)}

    def name(self, b: VariableBlock | ParameterBlock, k: int) -> str:
        if b.size == 1:
            return b.latex if self.latex else b.name
        return _indexed_latex(b.latex, k) if self.latex else f"{b.name}[{k}]"

    def get(self, s: sp.Symbol) -> str | None:
        head, _, k = s.name.rpartition("_")
        b = self.blocks.get(head)
        if b is None or not k.isdigit() or int(k) >= b.size or b.symbols[int(k)] != s:
            return None
        return self.name(b, int(k))


def _names(problem: MCP, latex: bool) -> tuple[_SymbolNames, dict[str, int]]:
    names = _SymbolNames(problem, latex)
    index = {names.name(b, k): b.start + k for b in problem.blocks for k in range(b.size)}
    return names, index


def _expr(e: sp.Expr, names: _SymbolNames, latex: bool) -> str:
    found = {s: nm for s in e.free_symbols if (nm := names.get(s)) is not None}
    if latex:
        return sp.latex(e, symbol_names=found)
    return sp.sstr(e.xreplace({s: sp.Symbol(nm) for s, nm in found.items()}))


def _affine_row(problem: MCP, fb: AffineFunction, r: int) -> sp.Expr:
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


def _condition(zname: str, fstr: str, lo: float, hi: float, latex: bool) -> str:
    le = r" \le " if latex else " <= "
    ge = r" \ge " if latex else " >= "
    perp = r" \perp " if latex else " ⟂ "
    if lo == hi:
        return f"{zname} = {_num(lo, latex)}" + (r"\quad (F \text{ free})" if latex else "   (F free)")
    if math.isinf(lo) and math.isinf(hi):
        free = r"\quad (" + zname + r"\ \text{free})" if latex else f"   ({zname} free)"
        return f"{fstr} = 0{free}"
    if math.isinf(hi):
        return f"{_num(lo, latex)}{le}{zname}{perp}{fstr}{ge}0"
    if math.isinf(lo):
        return f"{zname}{le}{_num(hi, latex)}{perp}{fstr}{le}0"
    return f"{_num(lo, latex)}{le}{zname}{le}{_num(hi, latex)}{perp}{fstr}"


def _render(problem: MCP, latex: bool, max_rows: int) -> tuple[list[str], dict[str, int]]:
    problem.validate()
    names, index = _names(problem, latex)
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
        for k in shown:
            if b.size > max_rows and k == b.size - 1:
                lines.append(r"\vdots" if latex else "...")
            i = b.start + k
            zname = names.name(b, k)
            e = fb.exprs[k] if isinstance(fb, SymbolicFunction) else _affine_row(problem, fb, k)
            lines.append(_condition(zname, _expr(e, names, latex), lb[i], ub[i], latex))
    return lines, index


class ToLatex(Lowering):
    """MCP -> LaTeX ``aligned`` block; the inverse maps printed names back to ``z``."""

    def __init__(self, max_rows: int = 8) -> None:
        if max_rows < 2:
            raise MCPInputError("ToLatex: max_rows must be >= 2")
        self.max_rows = max_rows

    def apply(self, problem: MCP) -> tuple[str, NameMap]:
        lines, index = _render(problem, True, self.max_rows)
        body = " \\\\\n".join(f"  & {ln}" for ln in lines)
        params = ""
        if problem.n_params:
            params = ",\\ " + ", ".join(pb.latex for pb in problem.parameter_blocks) + r"\ \text{given}"
        text = (
            f"\\text{{Find }} z = ({', '.join(b.latex for b in problem.blocks)})"
            f"{params}\\ \\text{{such that}}\n\\begin{{aligned}}\n{body}\n\\end{{aligned}}"
        )
        return text, NameMap(index, problem.n)

    def invert(self, solution: dict[str, float], inverse_data: NameMap) -> np.ndarray:
        z = np.full(inverse_data.n, np.nan)
        for name, value in solution.items():
            if name not in inverse_data.names:
                raise MCPInputError(f"unknown printed component name {name!r}")
            z[inverse_data.names[name]] = value
        return z


class ToText(ToLatex):
    """MCP -> plain text, one pair per line (``⟂`` reads "complementary to")."""

    def apply(self, problem: MCP) -> tuple[str, NameMap]:
        lines, index = _render(problem, False, self.max_rows)
        head = f"MCP {problem.name!r}: find z = ({', '.join(b.name for b in problem.blocks)})"
        if problem.n_params:
            head += f" given parameters ({', '.join(pb.name for pb in problem.parameter_blocks)})"
        return head + " such that\n" + "\n".join(f"  {ln}" for ln in lines), NameMap(index, problem.n)


def to_latex(problem: MCP, max_rows: int = 8) -> str:
    """LaTeX of the MCP (``aligned`` environment); blocks longer than ``max_rows`` are elided."""
    return ToLatex(max_rows).apply(problem)[0]


def to_text(problem: MCP, max_rows: int = 8) -> str:
    """Plain-text rendering of the MCP, one complementarity pair per line."""
    return ToText(max_rows).apply(problem)[0]


def explain(problem: MCP) -> str:
    """Prose explanation of every block's complementarity case (what each bound means)."""
    problem.validate()
    lb, ub = problem.lb, problem.ub
    out = [f"MCP {problem.name!r} has {problem.n} pairs (z_i, F_i) in {len(problem.blocks)} blocks."]
    for b in problem.blocks:
        lo, hi = lb[b.slice], ub[b.slice]
        kinds: dict[str, int] = {}
        for li, ui in zip(lo, hi, strict=True):
            if li == ui:
                k = "fixed: z_i = l_i and F_i is unrestricted"
            elif math.isinf(li) and math.isinf(ui):
                k = "free: the equation F_i = 0 holds"
            elif math.isinf(ui):
                k = "lower bound only: z_i >= l_i, F_i >= 0, and (z_i - l_i) * F_i = 0"
            elif math.isinf(li):
                k = "upper bound only: z_i <= u_i, F_i <= 0, and (u_i - z_i) * F_i = 0"
            else:
                k = "box: F_i >= 0 if z_i = l_i, F_i = 0 if l_i < z_i < u_i, F_i <= 0 if z_i = u_i"
            kinds[k] = kinds.get(k, 0) + 1
        fb = problem.function_block(b.name)
        form = "affine (M z + q)" if isinstance(fb, AffineFunction) else "symbolic"
        desc = "; ".join(f"{c} x {k}" for k, c in kinds.items())
        out.append(f"- block {b.name!r} ({b.size} pairs, {form} F): {desc}.")
    if problem.n_params:
        names = ", ".join(f"{pb.name}[{pb.size}]" for pb in problem.parameter_blocks)
        out.append(f"Parameters {names} enter F and may change between solves.")
    return "\n".join(out)
