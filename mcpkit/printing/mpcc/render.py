r"""Text and LaTeX of an MPCC (:mod:`mcpkit.printing.mpcc`): the plain form (row by row from
CasADi) and the form with blocks (one line per named segment, a horizon's step once under
"for k = 0, …, N-1" with its boundary conditions)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from mcpkit.errors import MCPInputError
from mcpkit.printing.expressions import space
from mcpkit.printing.mpcc.casadi_rows import CasadiRows
from mcpkit.printing.mpcc.cases import (
    CASE_LATEX,
    CASE_MEANING_LATEX,
    CASE_WORDS,
    bound_condition,
    bounds_of,
    pair_condition,
    pair_kinds,
    pick_formula,
    plain_G,
    plural,
    relation_symbols,
    row_condition,
    row_kinds,
    segment_display,
    segment_note,
    step_latex,
    texttt,
    var_rule,
    vector_text,
    words_bounds,
)
from mcpkit.problems.segments import MPCCBlocks, Segment
from mcpkit.problems.views import MPCCView


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
            self.parts.append(("head", tex if tex is not None else rf"\text{{{texttt(text)}}}"))
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
    out: _Out, ct: CasadiRows, idx: np.ndarray, max_rows: int, label: Callable[[int], str] | None = None
) -> None:
    """Rows ``idx`` of ``g``, one per line (a summary and the first rows when there are many)."""
    m, latex = ct.m, out.latex
    label = label or (lambda i: f"g_{{{i}}}" if latex else f"g[{i}]")
    if idx.size > max_rows:
        kinds = ", ".join(plural(v, k) for k, v in row_kinds(m.lbg[idx], m.ubg[idx]).items())
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
        out.item(row_condition(body, m.lbg[i : i + 1], m.ubg[i : i + 1], latex), label(i))


def _pairs_items(
    out: _Out, ct: CasadiRows, idx: np.ndarray, max_rows: int, label: Callable[[int], str] | None = None
) -> None:
    """Pairs ``idx``, one per line (a summary and the first pairs when there are many)."""
    m, latex = ct.m, out.latex
    label = label or (lambda j: rf"\text{{pair }}{j}" if latex else f"pair {j}")
    if idx.size > max_rows:
        kinds = ", ".join(f"{v} {k}" for k, v in pair_kinds(m, idx).items())
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
        out.item(pair_condition(G, H, m.lbG[sl], m.ubG[sl], m.lbH[sl], m.ubH[sl], latex), label(j))


def _pairs_footer(out: _Out, m: MPCCView) -> None:
    """The pair cases in words, one line per case present."""
    kinds = pair_kinds(m)
    if not kinds:
        return
    out.head("pairs", r"\text{pairs}")
    for case, count in kinds.items():
        form, words = CASE_WORDS[case]
        if out.latex:
            out.item(rf"\text{{{count} {case}: }} {CASE_LATEX[case]}", CASE_MEANING_LATEX[case])
        else:
            out.item(f"{count} {case}: {form}", words)
    extra = plain_G(m)
    if extra.size:
        note = f"{plural(int(extra.size), 'pair')} also bound G as a plain constraint"
        out.item(rf"\text{{{note} }} G_l \le G \le G_u" if out.latex else note + " G_l <= G <= G_u")


def _sizes(m: MPCCView, latex: bool, names: dict[str, str] | None = None) -> list[str]:
    s = relation_symbols(latex)
    x, p = (names or {}).get("x", "x"), (names or {}).get("p", "p")
    out = [f"{x}{s['in']}{space((int(m.x.numel()),), latex)}"]
    if m.p.numel():
        out.append(f"{p}{s['in']}{space((int(m.p.numel()),), latex)}")
    out += [f"g{s['in']}{space((int(m.g.numel()),), latex)}", f"G, H{s['in']}{space((m.n_pairs,), latex)}"]
    return out


def _given_values(out: _Out, m: MPCCView, values: bool, p: str = "p") -> None:
    if values and m.p.numel():
        out.head(
            f"given {p} = {vector_text(m.p0, False)}", rf"\text{{given }} {p} = {vector_text(m.p0, True)}"
        )


# ------------------------------------------------------------------ plain MPCC
def _plain(m: MPCCView, latex: bool, max_rows: int, values: bool, width: int) -> str:
    ct = CasadiRows(m, latex, width)
    out = _Out(latex)
    s = relation_symbols(latex)
    nx, npar = int(m.x.numel()), int(m.p.numel())
    x, p = ct.vector["x"], ct.vector["p"]  # the problem's own names (a file's w)
    xs = f"{x}{s['in']}{space((nx,), latex)}"
    ps = f" given {p}{s['in']}{space((npar,), latex)}" if npar else ""
    if latex:
        given = rf"\text{{ given }} {p}{s['in']}{space((npar,), True)}" if npar else ""
        out.head("", rf"\text{{find }} {xs}{given}\text{{ such that}}")
        out.item(rf"\min\ {ct.objective()}")
    else:
        out.head(f"MPCC {m.name!r}: find {xs}{ps} such that")
        out.item(f"minimize {ct.objective()}")
    _rows_items(out, ct, np.arange(int(m.g.numel())), max_rows)
    lo, hi = m.lbx, m.ubx
    if nx > max_rows and not (np.all(lo == lo[0]) and np.all(hi == hi[0])):
        words = words_bounds(lo, hi)
        if latex:
            out.item(rf"{x}_l \le {x} \le {x}_u\quad (\text{{{words}}})", xs)
        else:
            out.item(f"{x}_l <= {x} <= {x}_u   ({words})", xs)
    elif not (np.all(np.isneginf(lo)) and np.all(np.isposinf(hi))):
        out.item(bound_condition(x, lo, hi, latex), xs)
    _pairs_items(out, ct, np.arange(m.n_pairs), max_rows)
    _pairs_footer(out, m)
    _given_values(out, m, values, p)
    sizes = _sizes(m, latex, ct.vector)
    out.head("sizes: " + ", ".join(sizes), r"\text{sizes: } " + r",\ ".join(sizes))
    return out.render()


def _entry_label(seg: Segment, blocks: MPCCBlocks, latex: bool) -> Callable[[int], str]:
    start = seg.slices[0].start
    name = segment_display(seg, blocks, latex)
    if latex:
        return lambda i: step_latex(name, i - start)
    return lambda i: f"{name}[{i - start}]"


def _seg_item(out: _Out, seg: Segment, ct: CasadiRows, blocks: MPCCBlocks, max_rows: int) -> None:
    """The line of a row or pair segment (its entries, from CasADi, when it has no formula)."""
    m, latex = ct.m, out.latex
    note = segment_note(seg, blocks, latex)
    sl = seg.slices[0]
    idx = np.arange(sl.start, sl.stop)
    varies = r"\quad (\text{bounds vary with } k)" if latex else "   (bounds vary with k)"
    at_0 = r"\quad (\text{at } k = 0)" if latex else "   (at k = 0)"
    if seg.kind == "g":
        statement = pick_formula(seg.statement, latex)
        if statement is not None:
            out.item(statement, note)
            return
        body = pick_formula(seg.body, latex)
        if body is None and idx.size != 1:
            if seg.per_step:
                out.item(r"\text{rows at } k = 0:" if latex else "rows at k = 0:", note)
            _rows_items(out, ct, idx, max_rows, _entry_label(seg, blocks, latex))
            return
        lo, hi, vary = bounds_of(seg, m.lbg, m.ubg)
        if body is None:
            body = ct.rows("g", [int(idx[0])])[0]
            note += at_0 if seg.per_step else ""
        out.item(row_condition(body, lo, hi, latex) + (varies if vary else ""), note)
        return
    G, H = pick_formula(seg.body, latex), pick_formula(seg.partner, latex)
    if (G is None or H is None) and idx.size != 1:
        if seg.per_step:
            out.item(r"\text{pairs at } k = 0:" if latex else "pairs at k = 0:", note)
        _pairs_items(out, ct, idx, max_rows, _entry_label(seg, blocks, latex))
        return
    if G is None or H is None:
        G = G if G is not None else ct.rows("G", [int(idx[0])])[0]
        H = H if H is not None else ct.rows("H", [int(idx[0])])[0]
        note += at_0 if seg.per_step else ""
    lG, uG, vG = bounds_of(seg, m.lbG, m.ubG)
    lH, uH, vH = bounds_of(seg, m.lbH, m.ubH)
    out.item(pair_condition(G, H, lG, uG, lH, uH, latex) + (varies if vG or vH else ""), note)


def _var_item(out: _Out, boundary: list[str], seg: Segment, m: MPCCView, blocks: MPCCBlocks) -> None:
    """The bounds line of a variable segment; a horizon's boundary conditions go to ``boundary``."""
    latex = out.latex
    s = relation_symbols(latex)
    name = segment_display(seg, blocks, latex)
    note = segment_note(seg, blocks, latex)
    lo, hi, ends = var_rule(seg, m, blocks.steps)
    if lo is not None and hi is not None:
        out.item(bound_condition(name, lo, hi, latex), note)
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
        boundary.append(bound_condition(nm, m.lbx[seg.slices[k]], m.ubx[seg.slices[k]], latex))


def _uncovered(blocks: MPCCBlocks, kind: str, n: int) -> np.ndarray:
    mask = np.zeros(n, dtype=bool)
    for seg in blocks.segments:
        if seg.kind == kind:
            for sl in seg.slices:
                mask[sl] = True
    return np.flatnonzero(~mask)


def _with_blocks(
    m: MPCCView, blocks: MPCCBlocks, latex: bool, max_rows: int, values: bool, width: int
) -> str:
    ct = CasadiRows(m, latex, width)
    out = _Out(latex)
    xsegs = [seg for seg in blocks.segments if seg.kind == "x"]
    cons = [seg for seg in blocks.segments if seg.kind in ("g", "pair")]
    names = (r",\ " if latex else ", ").join(segment_display(seg, blocks, latex) for seg in xsegs) or "x"
    obj = pick_formula(blocks.objective, latex)
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
            out.item(bound_condition(ct.entry_name("x", i), m.lbx[i : i + 1], m.ubx[i : i + 1], latex))
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
def check_printable(m: MPCCView, max_rows: int) -> None:
    """Refuse what the printer cannot print: not an MPCC, or ``max_rows`` not an integer >= 2."""
    if not callable(getattr(m, "block_structure", None)):  # the view's one method every MPCC has
        raise MCPInputError(f"the MPCC printer needs an mcpkit.mpcc.MPCC, got {type(m).__name__}")
    if not isinstance(max_rows, int) or max_rows < 2:
        raise MCPInputError(f"MPCC printer: max_rows must be an integer >= 2, got {max_rows!r}")


def _print(m: MPCCView, latex: bool, max_rows: int, values: bool, expand: bool, width: int) -> str:
    check_printable(m, max_rows)
    blocks = m.block_structure()
    if blocks is not None and not expand:
        return _with_blocks(m, blocks, latex, max_rows, values, width)
    return _plain(m, latex, max_rows, values, width)


def to_text(
    m: MPCCView, max_rows: int = 8, values: bool = False, expand: bool = False, width: int = 100
) -> str:
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


def to_latex(
    m: MPCCView, max_rows: int = 8, values: bool = False, expand: bool = False, width: int = 200
) -> str:
    """LaTeX of the MPCC (an ``aligned`` environment): the lines of :func:`to_text`."""
    return _print(m, True, max_rows, values, expand, width)
