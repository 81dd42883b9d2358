r"""The one lowering of a general-bounds :class:`~mcpkit.mpcc.MPCC` to the standard form.

:class:`ToStandardMPCC` turns the pairs :math:`H_l \le H \le H_u \perp G` (semantics in
:mod:`mcpkit.problems.mpcc`) into :math:`0 \le G' \perp H' \ge 0`. A pair with only a finite
lower bound on :math:`H` and :math:`0 \le G` (:func:`shiftable`) is shifted:
:math:`G' = G`, :math:`H' = H - H_l`. Every other pair is the box pair of
:mod:`mcpkit.lowering.slack` with :math:`H` in the variable's role and :math:`G` in the
function's role, stated by its :class:`~mcpkit.lowering.slack.SlackForm`:
:math:`G_j - w_j + v_j = 0`, :math:`(H_j - H_{l,j}) \perp w_j`, :math:`(H_{u,j} - H_j) \perp v_j`
(``"paired"`` layout: :math:`x' = (x, w_j, v_j, \dots)` pair by pair; ``drop_fixed=False``:
:math:`H` is an expression, so :math:`H_l = H_u` keeps both slacks, which force
:math:`H_j = H_{l,j}`). Plain bounds :math:`G_l \le G \le G_u` of a split pair become a row
just before its slack row; the pairs keep the order of the original pairs.

The inverse drops the slacks; :meth:`ToStandardMPCC.lift` appends their values at a point. A
problem that is already standard passes through unchanged. It runs once per solver; the
stationarity check reuses its output.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from mcpkit.lowering.base import Lowering
from mcpkit.lowering.slack import CasadiBuilder, SlackForm
from mcpkit.problems.mpcc import MPCC


def shiftable(problem: MPCC) -> np.ndarray:
    """Per pair: ``0 <= G ⟂ H >= 0`` up to a shift of ``H`` (finite ``H_l``, no other bounds)."""
    return (problem.lbG == 0) & np.isposinf(problem.ubG) & np.isfinite(problem.lbH) & np.isposinf(problem.ubH)


def split_pairs(problem: MPCC) -> tuple[np.ndarray, SlackForm]:
    """The pairs that are not :func:`shiftable` and the :class:`SlackForm` of their ``H`` bounds."""
    split = np.flatnonzero(~shiftable(problem))
    form = SlackForm.from_bounds(problem.lbH[split], problem.ubH[split], layout="paired", drop_fixed=False)
    return split, form


@dataclass(frozen=True)
class PairMap:
    """Inverse data of :class:`ToStandardMPCC`: the original variable count."""

    nx: int


class ToStandardMPCC(Lowering):
    """General-bounds :class:`~mcpkit.mpcc.MPCC` -> standard ``0 <= G ⟂ H >= 0``; inverse drops slacks."""

    def apply(self, problem: MPCC) -> tuple[MPCC, PairMap]:
        if problem.is_standard():
            return problem, PairMap(int(problem.x.numel()))
        b = CasadiBuilder(type(problem.x))
        split, form = split_pairs(problem)
        shift = np.flatnonzero(shiftable(problem))
        out = form.emit(b, b.take(problem.H, split), b.take(problem.G, split))
        # pairs in the original order: shifted G_j ⟂ H_j - H_l,j, or the slack pairs of j
        pair_order = np.argsort(np.concatenate([shift, split[form.pair_idx]]), kind="stable")
        G = b.concat([b.take(problem.G, shift), out.G])
        H = b.concat([b.take(problem.H, shift) - b.constant(problem.lbH[shift]), out.H])
        # rows: a split pair's plain bounds on G (not implied by its pair) just before its slack row
        bounded = split[np.isfinite(problem.lbG[split]) | np.isfinite(problem.ubG[split])]
        row_order = np.argsort(np.concatenate([2 * bounded, 2 * split[form.rows] + 1]), kind="stable")
        rows = b.concat([b.take(problem.G, bounded), out.rows])
        zeros = np.zeros(form.rows.size)
        G0 = problem.evaluate(problem.x0, problem.p0)["G"]
        mpcc = MPCC(
            x=ca.vertcat(problem.x, out.slacks),
            p=problem.p,
            f=problem.f,
            g=ca.vertcat(problem.g, b.take(rows, row_order)),
            lbg=np.concatenate([problem.lbg, np.concatenate([problem.lbG[bounded], zeros])[row_order]]),
            ubg=np.concatenate([problem.ubg, np.concatenate([problem.ubG[bounded], zeros])[row_order]]),
            lbx=np.concatenate([problem.lbx, np.zeros(form.n_slacks)]),
            ubx=np.concatenate([problem.ubx, np.full(form.n_slacks, np.inf)]),
            G=b.take(G, pair_order),
            H=b.take(H, pair_order),
            x0=form.lift(problem.x0, G0[split]),
            p0=problem.p0,
            name=problem.name,
        )
        return mpcc, PairMap(int(problem.x.numel()))

    def invert(self, solution: np.ndarray, inverse_data: PairMap) -> np.ndarray:
        return np.asarray(solution, dtype=float).reshape(-1)[: inverse_data.nx]

    @staticmethod
    def lift(problem: MPCC, x: np.ndarray, p: np.ndarray) -> np.ndarray:
        """``x`` with the slack values appended, in the order :meth:`apply` creates them.

        The exact slacks of :meth:`SlackForm.slacks`: ``G = w - v`` holds at the lifted point, so
        its residuals are those of ``x`` in ``problem``.
        """
        x = np.asarray(x, dtype=float).reshape(-1)
        if problem.is_standard():
            return x
        split, form = split_pairs(problem)
        return form.lift(x, problem.evaluate(x, p)["G"][split], exact=True)
