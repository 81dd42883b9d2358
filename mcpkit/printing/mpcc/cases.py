r"""The box cases of an MPCC's rows, bounds and pairs, printed: :math:`l \le g \le u`,
:math:`x_l \le x \le x_u` and :math:`H_l \le H \perp G` by case, in symbols and in words.

What the text and LaTeX printer (:mod:`~mcpkit.printing.mpcc.render`) and the prose
(:mod:`~mcpkit.printing.mpcc.explain`) share: names and numbers, the printed conditions of rows,
bounds and pairs in their box cases, counts of the cases, and the names and bounds of declared
segments (:class:`~mcpkit.problems.segments.Segment`)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from mcpkit.printing.expressions import format_number, space
from mcpkit.printing.mcp import case_key
from mcpkit.problems.segments import Formula, MPCCBlocks, Segment
from mcpkit.problems.views import MPCCView

#: Rows of more operations than this print by name (never replayed into sympy).
MAX_OPERATIONS = 400


CASE_WORDS = {
    "standard": ("0 <= G ⟂ H >= 0", "G >= 0, H >= 0 and G * H = 0 (at least one of the two is zero)"),
    "lower": ("H_l <= H ⟂ G >= 0", "H >= H_l, G >= 0 and (H - H_l) * G = 0"),
    "upper": ("H <= H_u ⟂ G <= 0", "H <= H_u, G <= 0 and (H_u - H) * G = 0"),
    "box": ("H_l <= H <= H_u ⟂ G", "G >= 0 where H = H_l, G = 0 where H_l < H < H_u, G <= 0 where H = H_u"),
    "free": ("G = 0   (H free)", "the equation G = 0, H unrestricted"),
    "fixed": ("H = H_l   (G free)", "H = H_l, G unrestricted"),
}


CASE_LATEX = {
    "standard": r"0 \le G \perp H \ge 0",
    "lower": r"H_l \le H \perp G \ge 0",
    "upper": r"H \le H_u \perp G \le 0",
    "box": r"H_l \le H \le H_u \perp G",
    "free": r"G = 0\quad (H\ \text{free})",
    "fixed": r"H = H_l\quad (G\ \text{free})",
}


#: What each case means (:data:`CASE_WORDS`' second column), as mathematics for LaTeX.
CASE_MEANING_LATEX = {
    "standard": r"G \ge 0,\ H \ge 0,\ G \circ H = 0\ \text{(one of each pair is zero)}",
    "lower": r"H \ge H_l,\ G \ge 0,\ (H - H_l) \circ G = 0",
    "upper": r"H \le H_u,\ G \le 0,\ (H_u - H) \circ G = 0",
    "box": r"G_j \ge 0 \text{ if } H_j = H_{l,j},\ G_j = 0 \text{ if } H_{l,j} < H_j < H_{u,j},\ "
    r"G_j \le 0 \text{ if } H_j = H_{u,j}",
    "free": r"G = 0,\ H\ \text{unrestricted}",
    "fixed": r"H = H_l,\ G\ \text{unrestricted}",
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


def texttt(s: str) -> str:
    r"""Text for LaTeX's ``\text{...}`` (underscores and the like escaped)."""
    return re.sub(r"([_%&#$])", r"\\\1", s).replace("∈", "in")


def relation_symbols(latex: bool) -> dict[str, str]:
    r"""The printed :math:`\le, \ge, \perp, \in` (keys ``le``, ``ge``, ``perp``, ``in``), text or LaTeX."""
    if latex:
        return {"le": r" \le ", "ge": r" \ge ", "perp": r" \perp ", "in": r" \in "}
    return {"le": " <= ", "ge": " >= ", "perp": " ⟂ ", "in": " ∈ "}


def vector_text(arr: np.ndarray, latex: bool) -> str:
    """A vector's values (``[5, -inf, 0]``; long ones as their first and last entries)."""
    vals = [format_number(float(v), latex) for v in np.asarray(arr, dtype=float).reshape(-1)]
    if len(vals) > 8:
        vals = [*vals[:3], r"\dots" if latex else "…", *vals[-2:]]
    return r"\left(" + ", ".join(vals) + r"\right)" if latex else "[" + ", ".join(vals) + "]"


def _bound(arr: np.ndarray, latex: bool) -> str:
    """A bound vector: its number when all entries agree, else its values."""
    if arr.size and np.all(arr == arr[0]):
        return format_number(float(arr[0]), latex)
    return vector_text(arr, latex)


def _uniform(arrs: Sequence[np.ndarray]) -> np.ndarray | None:
    """The common array of ``arrs`` (one per step), or ``None`` when they differ."""
    first = arrs[0]
    return first if all(np.array_equal(a, first) for a in arrs[1:]) else None


def row_condition(body: str, lo: np.ndarray, hi: np.ndarray, latex: bool) -> str:
    """``body = c``, ``body >= l``, ``body <= u`` or ``l <= body <= u`` (``lo``, ``hi`` arrays)."""
    s = relation_symbols(latex)
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


def bound_condition(name: str, lo: np.ndarray, hi: np.ndarray, latex: bool) -> str:
    """Variable bounds: ``x = c``, ``l <= x``, ``x <= u``, ``l <= x <= u`` or ``x free``."""
    s = relation_symbols(latex)
    if np.array_equal(lo, hi):
        return f"{name} = {_bound(lo, latex)}"
    no_lo, no_hi = bool(np.all(np.isneginf(lo))), bool(np.all(np.isposinf(hi)))
    if no_lo and no_hi:
        return name + (r"\ \text{free}" if latex else " free")
    left = "" if no_lo else f"{_bound(lo, latex)}{s['le']}"
    right = "" if no_hi else f"{s['le']}{_bound(hi, latex)}"
    return f"{left}{name}{right}"


def pair_condition(
    G: str, H: str, lbG: np.ndarray, ubG: np.ndarray, lbH: np.ndarray, ubH: np.ndarray, latex: bool
) -> str:
    """One pair (or a block of pairs with these bound arrays) in its case."""
    s = relation_symbols(latex)
    if np.all(lbG == 0) and np.all(np.isposinf(ubG)) and np.all(lbH == 0) and np.all(np.isposinf(ubH)):
        return f"0{s['le']}{G}{s['perp']}{H}{s['ge']}0"
    cases = {case_key(float(a), float(b)) for a, b in zip(lbH, ubH, strict=True)}
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
        out += (r",\quad " if latex else ",   ") + row_condition(G, lbG, ubG, latex)
    return out


def pair_kinds(m: MPCCView, idx: np.ndarray | None = None) -> dict[str, int]:
    """Counts of the pair cases: ``standard``, or the case of ``H_l <= H <= H_u ⟂ G``."""
    sel = np.arange(m.n_pairs) if idx is None else np.asarray(idx, dtype=int)
    std = m.standard_pairs()[sel]
    out: dict[str, int] = {}
    if std.any():
        out["standard"] = int(std.sum())
    for j in sel[~std]:
        k = case_key(float(m.lbH[j]), float(m.ubH[j]))
        out[k] = out.get(k, 0) + 1
    return out


def plain_G(m: MPCCView) -> np.ndarray:
    """Pairs whose bounds ``G_l <= G <= G_u`` are more than their case implies (printed separately)."""
    out = []
    for j in np.flatnonzero(~m.standard_pairs()):
        lo, hi = _IMPLIED.get(case_key(float(m.lbH[j]), float(m.ubH[j])), (-math.inf, math.inf))
        if not (m.lbG[j] <= lo and m.ubG[j] >= hi):
            out.append(int(j))
    return np.asarray(out, dtype=int)


def row_kinds(lo: np.ndarray, hi: np.ndarray) -> dict[str, int]:
    r"""Counts of rows :math:`l \le g \le u` by case: equality, inequality, range, free (nonzero ones)."""
    eq = lo == hi
    free = np.isneginf(lo) & np.isposinf(hi)
    rng = ~eq & np.isfinite(lo) & np.isfinite(hi)
    out = {"equality": int(eq.sum()), "inequality": int((~eq & ~free & ~rng).sum()),
           "range": int(rng.sum()), "free row": int(free.sum())}  # fmt: skip
    return {k: v for k, v in out.items() if v}


def plural(n: int, word: str) -> str:
    """``"1 row"``, ``"2 rows"``, ``"3 entries"``: ``n`` and ``word`` in its number."""
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word[:-1]}ies" if word.endswith("y") else f"{n} {word}s"


def words_rows(lo: np.ndarray, hi: np.ndarray) -> str:
    """:func:`row_kinds` in words (``"2 equalities, 1 range"``)."""
    return ", ".join(plural(v, k) for k, v in row_kinds(lo, hi).items())


def words_bounds(lo: np.ndarray, hi: np.ndarray) -> str:
    r"""Counts of variables :math:`x_l \le x \le x_u` by bound case, in words (``"3 free, 2 fixed"``)."""
    words = {"fixed": "fixed", "free": "free", "lower": "with a lower bound only",
             "upper": "with an upper bound only", "box": "with both bounds"}  # fmt: skip
    kinds: dict[str, int] = {}
    for a, b in zip(lo, hi, strict=True):
        k = words[case_key(float(a), float(b))]
        kinds[k] = kinds.get(k, 0) + 1
    return ", ".join(f"{v} {k}" for k, v in kinds.items())


# ------------------------------------------------------------------ MPCC with blocks
def segment_display(seg: Segment, blocks: MPCCBlocks, latex: bool) -> str:
    """A segment's printed name (a per-step one with the step index: ``w_x_k``)."""
    if seg.per_step:
        return step_latex(seg.tex, blocks.index) if latex else f"{seg.name}_{blocks.index}"
    return seg.tex if latex else seg.name


def segment_note(seg: Segment, blocks: MPCCBlocks, latex: bool) -> str:
    """A segment's name, its space (``g_lam_n ∈ R^n_c``) and its declared note."""
    size = space((seg.dim if seg.dim is not None else seg.size,), latex)
    note = f"{segment_display(seg, blocks, latex)}{relation_symbols(latex)['in']}{size}"
    if seg.note:
        note += rf"\quad \text{{({texttt(seg.note)})}}" if latex else f"   ({seg.note})"
    return note


def bounds_of(seg: Segment, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """``(lo, hi, varies)``: the bounds of the first slice and whether other steps' differ."""
    los, his = [lo[sl] for sl in seg.slices], [hi[sl] for sl in seg.slices]
    ulo, uhi = _uniform(los), _uniform(his)
    return los[0], his[0], ulo is None or uhi is None


def pick_formula(f: Formula | None, latex: bool) -> str | None:
    """The text or the LaTeX of a formula ``(text, latex)``; ``None`` without one."""
    return None if f is None else (f[1] if latex else f[0])


def var_rule(
    seg: Segment, m: MPCCView, steps: int | None
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
