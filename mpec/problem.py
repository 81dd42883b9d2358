r"""MPCCs with general complementarity bounds, and their lowering to the standard form.

.. math::

    \min_x f(x; p)\quad\text{s.t.}\quad g_l \le g(x; p) \le g_u,\quad x_l \le x \le x_u,\quad
    H_l \le H(x; p) \le H_u \ \perp\ G(x; p),\quad G_l \le G(x; p) \le G_u .

Each pair reads as a box-MCP pair with :math:`H_j` in the variable's role and :math:`G_j` in the
function's role (the AMPL/GAMS convention the MPECLib files come from):

* :math:`H_j = H_{l,j}` :math:`\Rightarrow G_j \ge 0`;
* :math:`H_{l,j} < H_j < H_{u,j}` :math:`\Rightarrow G_j = 0`;
* :math:`H_j = H_{u,j}` :math:`\Rightarrow G_j \le 0`;

and :math:`G_l \le G \le G_u` hold as plain constraints. With :math:`G_l = H_l = 0` and
:math:`G_u = H_u = \infty` this is the standard :math:`0 \le G \perp H \ge 0`.

The residual of a pair is the box-MCP natural residual
:math:`|H_j - \Pi_{[H_{l,j}, H_{u,j}]}(H_j - G_j)|`, which reduces to :math:`|\min(G_j, H_j)|` in
the standard case. :class:`ToStandardMPCC` lowers the general form to
:class:`mcpkit.mpcc.MPCC` by shifting pairs with a single finite lower bound and by splitting
:math:`G_j = w_j - v_j` (slacks :math:`w_j, v_j \ge 0`) for the others, exactly as the MCP lowering
does; its inverse drops the slacks.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import casadi as ca
import numpy as np

from mcpkit.errors import BoundsError, ShapeError
from mcpkit.lowering.base import Lowering
from mcpkit.mpcc import MPCC


@dataclass
class GeneralMPCC:
    """An MPCC with general pair bounds (see the module docstring). Infinite bounds are ``±inf``."""

    x: ca.SX | ca.MX
    p: ca.SX | ca.MX
    f: ca.SX | ca.MX
    g: ca.SX | ca.MX
    lbg: np.ndarray
    ubg: np.ndarray
    lbx: np.ndarray
    ubx: np.ndarray
    x0: np.ndarray
    p0: np.ndarray
    G: ca.SX | ca.MX
    H: ca.SX | ca.MX
    lbG: np.ndarray
    ubG: np.ndarray
    lbH: np.ndarray
    ubH: np.ndarray
    name: str = "mpcc"
    _funs: dict[str, ca.Function] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        nc = self.G.numel()
        if self.H.numel() != nc:
            raise ShapeError(f"{self.name}: G has {nc} rows, H has {self.H.numel()}")
        for what in ("lbG", "ubG", "lbH", "ubH"):
            if np.shape(getattr(self, what)) != (nc,):
                raise ShapeError(f"{self.name}: {what} must have {nc} entries")
        for lo, hi, what in ((self.lbG, self.ubG, "G"), (self.lbH, self.ubH, "H")):
            bad = np.flatnonzero(lo > hi)
            if bad.size:
                raise BoundsError(f"{self.name}: lower > upper bound on {what} at pairs {bad[:10].tolist()}")
        # the same problem read as 0 <= G ⟂ H >= 0: validates the shared fields and evaluates
        # f, g, G, H (the pair bounds are this class's own)
        shared = {f.name: getattr(self, f.name) for f in fields(MPCC) if f.init and f.name in _OWN_FIELDS}
        self.standard = MPCC(**shared)

    @property
    def n_pairs(self) -> int:
        """Number of complementarity pairs."""
        return int(self.G.numel())

    def is_standard(self) -> np.ndarray:
        """Per pair: already ``0 <= G ⟂ H >= 0`` up to a shift of ``H``."""
        return (self.lbG == 0) & np.isinf(self.ubG) & np.isfinite(self.lbH) & np.isinf(self.ubH)

    def residuals(self, x: np.ndarray, p: np.ndarray) -> tuple[float, float, dict[str, np.ndarray]]:
        """``(complementarity residual, constraint violation, values)`` on the original pairs."""
        v = self.standard.evaluate(x, p)
        Gv, Hv = v["G"], v["H"]
        with np.errstate(invalid="ignore"):
            comp = np.abs(Hv - np.clip(Hv - Gv, self.lbH, self.ubH))
            parts = [
                np.maximum(self.lbg - v["g"], 0.0), np.maximum(v["g"] - self.ubg, 0.0),
                np.maximum(self.lbx - x, 0.0), np.maximum(x - self.ubx, 0.0),
                np.maximum(self.lbG - Gv, 0.0), np.maximum(Gv - self.ubG, 0.0),
                np.maximum(self.lbH - Hv, 0.0), np.maximum(Hv - self.ubH, 0.0),
            ]  # fmt: skip
        comp_r = float(np.max(np.where(np.isnan(comp), np.inf, comp), initial=0.0))
        viol = max((float(np.max(np.where(np.isnan(a), np.inf, a), initial=0.0)) for a in parts), default=0.0)
        return comp_r, viol, v


_OWN_FIELDS = {f.name for f in fields(GeneralMPCC) if not f.name.startswith("_")}


@dataclass(frozen=True)
class PairMap:
    """Inverse data of :class:`ToStandardMPCC`: the original variable count."""

    nx: int


class ToStandardMPCC(Lowering):
    """:class:`GeneralMPCC` -> :class:`mcpkit.mpcc.MPCC` (``0 <= G ⟂ H >= 0``); inverse drops slacks."""

    def apply(self, problem: GeneralMPCC) -> tuple[MPCC, PairMap]:
        T = type(problem.x)
        std = problem.is_standard()
        Gs: list = []
        Hs: list = []
        rows: list = [problem.g]
        lo: list[np.ndarray] = [problem.lbg]
        hi: list[np.ndarray] = [problem.ubg]
        new_x: list = []
        new_lb: list[float] = []
        new_x0: list[float] = []
        v0 = problem.standard.evaluate(problem.x0, problem.p0)
        for j in range(problem.n_pairs):
            Gj, Hj = problem.G[j], problem.H[j]
            lH, uH, lG, uG = problem.lbH[j], problem.ubH[j], problem.lbG[j], problem.ubG[j]
            if std[j]:
                Gs.append(Gj)
                Hs.append(Hj - lH)
                continue
            # plain bounds on G that the complementarity does not already imply
            if np.isfinite(lG) or np.isfinite(uG):
                rows.append(Gj)
                lo.append(np.array([lG]))
                hi.append(np.array([uG]))
            slack = 0
            if np.isfinite(lH):
                w = T.sym(f"w_{j}")
                new_x.append(w)
                new_lb.append(0.0)
                new_x0.append(max(float(v0["G"][j]), 0.0))
                Gs.append(Hj - lH)
                Hs.append(w)
                slack = slack + w
            if np.isfinite(uH):
                vv = T.sym(f"v_{j}")
                new_x.append(vv)
                new_lb.append(0.0)
                new_x0.append(max(-float(v0["G"][j]), 0.0))
                Gs.append(uH - Hj)
                Hs.append(vv)
                slack = slack - vv
            rows.append(Gj - slack)  # G_j = w_j - v_j  (G_j = 0 when H_j is unbounded both ways)
            lo.append(np.zeros(1))
            hi.append(np.zeros(1))
        x = ca.vertcat(problem.x, *new_x)
        empty = T(0, 1)
        mpcc = MPCC(
            x=x,
            p=problem.p,
            f=problem.f,
            g=ca.vertcat(*rows) if rows else empty,
            lbg=np.concatenate(lo),
            ubg=np.concatenate(hi),
            lbx=np.concatenate([problem.lbx, new_lb]),
            ubx=np.concatenate([problem.ubx, np.full(len(new_lb), np.inf)]),
            G=ca.vertcat(*Gs) if Gs else empty,
            H=ca.vertcat(*Hs) if Hs else empty,
            x0=np.concatenate([problem.x0, new_x0]),
            p0=problem.p0,
            name=problem.name,
        )
        return mpcc, PairMap(int(problem.x.numel()))

    def invert(self, solution: np.ndarray, inverse_data: PairMap) -> np.ndarray:
        return np.asarray(solution, dtype=float).reshape(-1)[: inverse_data.nx]
