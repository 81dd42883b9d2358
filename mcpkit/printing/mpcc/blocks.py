r"""Blocks of the slack form of an MCP and of one step of a horizon, for the MPCC printer
(:mod:`mcpkit.printing.mpcc`): :class:`StepBlock`, :func:`slack_segments`,
:func:`declaration_parts` and :func:`slack_form_blocks`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sps
import sympy as sp

from mcpkit.errors import MCPInputError
from mcpkit.lowering.slack import SlackForm
from mcpkit.printing.expressions import (
    Rename,
    default_latex,
    expr_latex,
    expr_text,
    format_number,
    space,
    sym_shape,
    sympy_latex,
    sympy_text,
)
from mcpkit.printing.mcp import SymbolNames
from mcpkit.printing.mpcc.cases import step_latex, vector_text
from mcpkit.problems import blocks as bx
from mcpkit.problems.functions import AffineFunction, BlockFunction
from mcpkit.problems.segments import Formula, MPCCBlocks, Segment
from mcpkit.problems.variables import MatrixParameterBlock, ParameterBlock
from mcpkit.problems.views import MCPView


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
        return f"{z} + {format_number(-c, latex)}" if c < 0 else f"{z} - {format_number(c, latex)}"
    return f"-{z}" if c == 0 else f"{format_number(c, latex)} - {z}"


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
                given.append((f"{bn} = {vector_text(bnd, False)}", f"{bl} = {vector_text(bnd, True)}"))
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


def _symbolic_rows(mcp: MCPView, exprs: Sequence[sp.Expr], rename: Rename | None, latex: bool) -> list[str]:
    """Rows of a symbolic function block, leaf names through ``rename`` (``a_k`` in a horizon)."""
    names = SymbolNames(mcp, latex)
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
            out.append(sympy_latex(e, found))
        else:
            out.append(sympy_text(e.xreplace({s: sp.Symbol(n) for s, n in found.items()})))
    return out


def _fb_formula(
    mcp: MCPView, name: str, rename: Rename | None, index: str | None, max_rows: int
) -> tuple[Formula, list[tuple[Formula, Formula]], list[Formula]]:
    """``F_b`` as declared, and what its formula needs under "where" and "given"."""
    fb = mcp.function_block(name)
    by_name = {vb.name: vb for vb in mcp.blocks}
    b = by_name[name]
    if isinstance(fb, BlockFunction):
        return (expr_text(fb.expr, rename), expr_latex(fb.expr, rename)), [], []
    suffix_t = f"_{index}" if index is not None else ""

    def sub(stem: str) -> str:
        return step_latex(stem, index) if index is not None else stem

    if isinstance(fb, AffineFunction):
        over = [by_name[o] for o in fb.over]
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
    mcp: MCPView,
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
        t_name, l_name = d.name, d.latex or default_latex(d.name)
        if rename is not None:
            t_name, l_name = rename(d, t_name, False), rename(d, l_name, True)
        where.append((
            (f"{t_name} = {expr_text(d.expr, rename)}", rf"{l_name} = {expr_latex(d.expr, rename)}"),
            (f"{t_name} ∈ {space(sym_shape(d), False)}", rf"{l_name} \in {space(sym_shape(d), True)}"),
        ))  # fmt: skip
    given = affine_given + [_param_line(pb) for pb in mcp.parameter_blocks if pb.name not in per_step]
    for c in consts.values():
        kind = "constant, sparse" if sps.issparse(c.value) else "constant"
        cname, cl = c.name or "", c.latex or default_latex(c.name or "")
        given.append((f"{cname} ∈ {space(sym_shape(c), False)} ({kind})",
                      rf"{cl} \in {space(sym_shape(c), True)}\ \text{{({kind})}}"))  # fmt: skip
    return sblocks, where, given


def slack_form_blocks(source: Any, form: SlackForm, max_rows: int = 8) -> MPCCBlocks:
    """The :class:`~mcpkit.problems.mpcc.MPCCBlocks` of the slack form of an MCP.

    Parameters
    ----------
    source
        The :class:`~mcpkit.problems.mcp.MCP` declaration (formulas as declared, "where" and "given"
        as in its own printout) or its :class:`~mcpkit.lowering.casadi.CasadiMCP` (block names
        only; the rows print from CasADi).
    form
        The :class:`~mcpkit.lowering.slack.SlackForm` that
        :class:`~mcpkit.lowering.casadi.MCPToMPCC` returned with the MPCC.

    Notes
    -----
    Use: ``mpcc, form = MCPToMPCC().apply(lower_to_casadi(mcp))``, then
    ``mpcc.with_blocks(slack_form_blocks(mcp, form)).to_text()``.
    """
    if not isinstance(form, SlackForm) or form.layout != "blocked":
        raise MCPInputError("slack_form_blocks: form must be the 'blocked' SlackForm of MCPToMPCC")
    if callable(getattr(source, "function_block", None)):  # a declaration (an MCPView)
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
        sblocks = [StepBlock(k, default_latex(k), None, sl) for k, sl in ordered]
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
