r"""Prose explanation of an MPCC (:mod:`mcpkit.printing.mpcc`): sizes, the rows' and
pairs' box cases in words, and with blocks one sentence per named segment."""

from __future__ import annotations

import numpy as np

from mcpkit.printing.expressions import space
from mcpkit.printing.mpcc.casadi_rows import CasadiRows
from mcpkit.printing.mpcc.cases import (
    CASE_WORDS,
    pair_kinds,
    pick_formula,
    plain_G,
    plural,
    segment_display,
    var_rule,
    vector_text,
    words_bounds,
    words_rows,
)
from mcpkit.printing.mpcc.render import check_printable
from mcpkit.problems.segments import MPCCBlocks
from mcpkit.problems.views import MPCCView


def explain(m: MPCCView, values: bool = False) -> str:
    """Prose: the sizes, each part's structure (its Jacobian's nonzeros, affine or nonlinear) and
    the pair cases in words; with blocks, one line per block."""
    check_printable(m, 2)
    ct = CasadiRows(m, False, 100)
    nx, npar, ng, nc = int(m.x.numel()), int(m.p.numel()), int(m.g.numel()), m.n_pairs
    blocks = m.block_structure()
    src = f" ({blocks.source})" if blocks is not None and blocks.source else ""
    out = [
        f"MPCC {m.name!r}{src} has {plural(nx, 'variable')}, {plural(npar, 'parameter')}, "
        f"{plural(ng, 'constraint row')} and {plural(nc, 'complementarity pair')}."
    ]
    declared = blocks.objective[0] if blocks is not None and blocks.objective is not None else None
    if m.f.is_constant():
        out.append(f"Objective: the constant {ct.objective()} (a feasibility problem).")
    else:
        shown = declared if declared is not None else ct.rows("f", [0])[0]
        shown = f"f({ct.vector['x']})" if shown.startswith("<") else shown
        out.append(f"Objective: {shown}; {ct.summary('f')}.")
    if blocks is not None:
        out += _explain_blocks(m, blocks)
    else:
        if ng:
            out.append(f"Constraints: {words_rows(m.lbg, m.ubg)}; {ct.summary('g')}.")
        out.append(f"Bounds on {ct.vector['x']}: {words_bounds(m.lbx, m.ubx)}.")
        if nc:
            out.append(f"Pairs: {ct.summary('G')}; {ct.summary('H')}.")
    for case, count in pair_kinds(m).items():
        form, words = CASE_WORDS[case]
        out.append(f"- {plural(count, case + ' pair')} {form}: {words}.")
    extra = plain_G(m)
    if extra.size:
        out.append(f"- {plural(int(extra.size), 'pair')} also bound G as a plain constraint G_l <= G <= G_u.")
    implied = [w for w, f in (("G >= 0", m.G_implied_by_bounds), ("H >= 0", m.H_implied_by_bounds)) if f]
    if implied:
        out.append(
            f"{' and '.join(implied)} already follow{'s' if len(implied) == 1 else ''} from the bounds on "
            f"{ct.vector['x']}."
        )
    if blocks is not None:
        for f, note in blocks.where:
            out.append(f"Definition: {f[0]}" + (f" ({note[0]})" if note[0] else "") + ".")
        if blocks.given:
            out.append("Given " + ", ".join(g[0] for g in blocks.given) + ".")
        if blocks.sizes:
            out.append("Sizes: " + ", ".join(f"{k} = {v}" for k, v in blocks.sizes) + ".")
    if values and npar:
        out.append(f"Parameter values {ct.vector['p']} = {vector_text(m.p0, False)}.")
    return "\n".join(out)


def _explain_blocks(m: MPCCView, blocks: MPCCBlocks) -> list[str]:
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
        head = f"- {each}{segment_display(seg, blocks, False)} ∈ {space((seg.dim or seg.size,), False)}"
        sl = seg.slices[0]
        if seg.kind == "x":
            lo, hi, ends = var_rule(seg, m, blocks.steps)
            desc = words_bounds(lo, hi) if lo is not None and hi is not None else "bounds that vary with k"
            bc = " (boundary conditions at k = 0, N)" if ends else ""
            out.append(f"{head}: variables, {desc}{bc}.")
        elif seg.kind == "g":
            body = f"{seg.body[0]}" if seg.body else "rows from CasADi"
            what = pick_formula(seg.statement, False) or body
            out.append(f"{head}: {words_rows(m.lbg[sl], m.ubg[sl])} ({what}).")
        else:
            kinds = "; ".join(f"{v} {k}" for k, v in pair_kinds(m, np.arange(sl.start, sl.stop)).items())
            G = seg.body[0] if seg.body else "G"
            H = seg.partner[0] if seg.partner else "H"
            out.append(f"{head}: pairs of G = {G} and H = {H} ({kinds}).")
    return out
