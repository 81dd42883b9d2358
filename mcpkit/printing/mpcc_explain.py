r"""Prose explanation of an MPCC (:mod:`mcpkit.printing.mpcc`): sizes, the rows' and
pairs' box cases in words, and with blocks one sentence per named segment."""

from __future__ import annotations

import numpy as np

from mcpkit.printing.expressions import space
from mcpkit.printing.mpcc_casadi_rows import _Casadi
from mcpkit.printing.mpcc_common import (
    _CASE_WORDS,
    _display,
    _pair_kinds,
    _pick,
    _plain_G,
    _plural,
    _var_rule,
    _vec,
    _words_bounds,
    _words_rows,
)
from mcpkit.printing.mpcc_render import _check
from mcpkit.problems.segments import MPCCBlocks
from mcpkit.problems.views import MPCCView


def explain(m: MPCCView, values: bool = False) -> str:
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
        shown = f"f({ct.vector['x']})" if shown.startswith("<") else shown
        out.append(f"Objective: {shown}; {ct.summary('f')}.")
    if blocks is not None:
        out += _explain_blocks(m, blocks)
    else:
        if ng:
            out.append(f"Constraints: {_words_rows(m.lbg, m.ubg)}; {ct.summary('g')}.")
        out.append(f"Bounds on {ct.vector['x']}: {_words_bounds(m.lbx, m.ubx)}.")
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
        out.append(f"Parameter values {ct.vector['p']} = {_vec(m.p0, False)}.")
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
