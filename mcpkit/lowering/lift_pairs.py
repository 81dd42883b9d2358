r"""Lift the pair functions of a standard MPCC into variables of their own.

For :math:`0 \le G(x) \perp H(x) \ge 0`, :class:`LiftPairs` gives every side of a pair that is
not a single variable a variable of its own,

.. math::

    \min_{x, s, t}\ f(x) \quad\text{s.t.}\quad g_l \le g(x) \le g_u,\quad
    s = G_{\mathcal{L}}(x),\quad t = H_{\mathcal{M}}(x),\quad
    0 \le \hat G \perp \hat H \ge 0,

where :math:`\hat G_j` is :math:`x_i` when :math:`G_j(x) = x_i` and :math:`s_j` otherwise
(:math:`\mathcal{L}` the lifted :math:`G` sides, likewise :math:`\hat H`, :math:`t` and
:math:`\mathcal{M}`). Every pair is then a pair of variables, so

* the sign conditions :math:`\hat G, \hat H \ge 0` are **bounds**, not rows (a single-variable
  side's bound is tightened to :math:`x_i \ge 0`, which the MPCC requires anyway);
* every row a reformulation writes for a pair (Scholtes :math:`\hat G_j \hat H_j \le \sigma`,
  Fischer–Burmeister, the polish's active sets) involves two variables, so the Hessian of the
  Lagrangian is no denser than the original problem's: a pair :math:`x_j \perp (Mx + q)_j` with
  a dense :math:`M` makes the Hessian of :math:`\sum_j \lambda_j x_j (Mx+q)_j` dense
  (:math:`n^2` entries, built symbolically for every IPOPT solver), while its lifted form adds
  :math:`n` linear rows :math:`t = Mx + q` and a diagonal of pair terms.

When to lift (:class:`~mcpkit.solving.options.PairLifting`, the option ``lift_pairs``, decided
by the planner, :func:`~mcpkit.orchestration.planner.lifts`): by default (``auto``) only a
problem with a pair that couples at least
:data:`~mcpkit.orchestration.planner.LIFT_MIN_COUPLING` pairs of variables
(:meth:`~mcpkit.problems.mpcc.MPCC.pair_coupling`, the Hessian entries its product makes) is
lifted, all of its pairs then; other problems are solved as written, so their IPOPT
paths, and the local solutions they reach, are those of the unlifted problem (turning the sign
rows of MacMPEC's ``bilin`` into bounds moves the Scholtes homotopy from f = −18.4 to −14.6).

The problems are equivalent: :math:`(x, s, t)` is feasible (stationary, of any MPCC
stationarity class) exactly when :math:`x` is, with :math:`s = G(x)`, :math:`t = H(x)`. The
inverse drops :math:`s, t`; :meth:`LiftPairs.lift` appends their values at a point.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from mcpkit.lowering.base import Lowering
from mcpkit.problems.mpcc import MPCC


@dataclass(frozen=True)
class PairSides:
    """Which variable stands for each side of each pair.

    ``var[j]`` is the index of the variable :math:`\\hat G_j` (or :math:`\\hat H_j`) in the
    lifted problem; ``lifted`` holds the pairs whose side got a new variable.
    """

    var: np.ndarray
    lifted: np.ndarray


@dataclass(frozen=True)
class LiftMap:
    """Inverse data of :class:`LiftPairs`: the variable count before lifting and the sides."""

    nx: int
    G: PairSides
    H: PairSides

    @property
    def n_new(self) -> int:
        """Number of variables :class:`LiftPairs` appended."""
        return int(self.G.lifted.size + self.H.lifted.size)


def single_variables(
    e: ca.SX | ca.MX, x: ca.SX | ca.MX, p: ca.SX | ca.MX, jx: ca.Sparsity | None = None
) -> np.ndarray:
    r"""Per entry of ``e``: the index :math:`i` with :math:`e_j(x; p) = x_i`, or ``-1``.

    Structural first (one nonzero in row :math:`j` of :math:`\partial e / \partial x`, none in
    :math:`\partial e / \partial p`), then exact: :math:`e_j = x_i` at two points whose entries
    are distinct non-integers (an identity returns its argument bit for bit; :math:`2x_i`,
    :math:`x_i + c` or :math:`x_i^3` do not). ``jx``: the structure of
    :math:`\partial e / \partial x` when it is known (:meth:`~mcpkit.problems.mpcc.MPCC.side_sparsity`).
    """
    n = int(e.numel())
    out = np.full(n, -1, dtype=int)
    if n == 0:
        return out
    jx = ca.jacobian_sparsity(e, x) if jx is None else jx
    jp = ca.jacobian(e, p).sparsity() if p.numel() else None
    rows, cols = (np.asarray(v, dtype=int) for v in jx.get_triplet())
    counts = np.bincount(rows, minlength=n)
    cand = np.flatnonzero(counts == 1)
    if jp is not None and cand.size:
        cand = cand[np.bincount(np.asarray(jp.get_triplet()[0], dtype=int), minlength=n)[cand] == 0]
    if not cand.size:
        return out
    col_of = np.full(n, -1, dtype=int)
    col_of[rows[counts[rows] == 1]] = cols[counts[rows] == 1]
    fn = ca.Function("mcpkit_pair_side", [x, p], [e])
    nx, npar = int(x.numel()), int(p.numel())
    same = np.ones(cand.size, dtype=bool)
    for k in (1, 2):
        xv = 0.5 + np.arange(nx) * (0.37 * k) + 0.123 * k
        ev = np.asarray(fn(xv, np.full(npar, 0.731 * k)), dtype=float).reshape(-1)
        same &= ev[cand] == xv[col_of[cand]]
    out[cand[same]] = col_of[cand[same]]
    return out


class LiftPairs(Lowering):
    """Standard MPCC -> the same MPCC with every pair a pair of variables (module docstring).

    A problem whose pairs are all single variables with :math:`x \\ge 0` in their bounds is
    returned with its sign conditions marked as implied by the bounds, and no new variable.
    """

    def apply(self, problem: MPCC) -> tuple[MPCC, LiftMap]:
        if not problem.is_standard():
            raise ValueError("LiftPairs takes a standard MPCC (lower it with ToStandardMPCC first)")
        nx, nc = int(problem.x.numel()), problem.n_pairs
        lbx, ubx = problem.lbx.copy(), problem.ubx.copy()
        new_x: list[ca.SX | ca.MX] = []
        rows: list[ca.SX | ca.MX] = []
        sides: dict[str, PairSides] = {}
        offset = nx
        for side in ("G", "H"):
            e = getattr(problem, side)
            var = single_variables(e, problem.x, problem.p, problem.side_sparsity(side))
            ok = var >= 0
            ok[ok] = ubx[var[ok]] >= 0  # x_i <= u_i < 0 cannot be tightened: lift it (infeasible)
            lbx[var[ok]] = np.maximum(lbx[var[ok]], 0.0)
            lifted = np.flatnonzero(~ok)
            var = np.where(ok, var, -1)
            if lifted.size:
                s = problem.sym(f"{side}_lift", int(lifted.size))
                new_x.append(s)
                rows.append(s - e[[int(j) for j in lifted]])
                var[lifted] = offset + np.arange(lifted.size)
                offset += int(lifted.size)
            sides[side] = PairSides(var, lifted)
        inv = LiftMap(nx, sides["G"], sides["H"])
        x = ca.vertcat(problem.x, *new_x)
        n_new = inv.n_new
        lifted_problem = MPCC(
            x=x,
            p=problem.p,
            f=problem.f,
            g=ca.vertcat(problem.g, *rows),
            lbg=np.concatenate([problem.lbg, np.zeros(n_new)]),
            ubg=np.concatenate([problem.ubg, np.zeros(n_new)]),
            lbx=np.concatenate([lbx, np.zeros(n_new)]),
            ubx=np.concatenate([ubx, np.full(n_new, np.inf)]),
            G=x[[int(i) for i in sides["G"].var]] if nc else problem.G,
            H=x[[int(i) for i in sides["H"].var]] if nc else problem.H,
            x0=np.zeros(nx + n_new),  # replaced just below, by the lift of the problem's x0
            p0=problem.p0,
            G_implied_by_bounds=True,
            H_implied_by_bounds=True,
            name=problem.name,
        )
        lifted_problem.x0 = self.lift_with(problem, inv, problem.x0, problem.p0)
        return lifted_problem, inv

    def invert(self, solution: np.ndarray, inverse_data: LiftMap) -> np.ndarray:
        return np.asarray(solution, dtype=float).reshape(-1)[: inverse_data.nx]

    @staticmethod
    def lift_with(problem: MPCC, inverse: LiftMap, x: np.ndarray, p: np.ndarray) -> np.ndarray:
        """``x`` (in ``problem``'s variables) with the lifted sides' values :math:`G_j(x)`,
        :math:`H_j(x)` appended, in the order :meth:`apply` creates them."""
        x = np.asarray(x, dtype=float).reshape(-1)
        if not inverse.n_new:
            return x
        v = problem.evaluate(x, p)
        new = np.concatenate([v["G"][inverse.G.lifted], v["H"][inverse.H.lifted]])
        return np.concatenate([x, np.where(np.isfinite(new), new, 0.0)])  # NaN at x: start at 0
