r"""The box pair and its slack form, stated once for every lowering.

A box pair :math:`l_i \le Z_i \le u_i \perp F_i` (MathOptInterface's ``Complements``, PATH's MCP,
AMPL's and GAMS's complementarity) means, case by case in MOI's order:

1. :math:`l_i < Z_i < u_i \Rightarrow F_i = 0`;
2. :math:`Z_i = l_i \Rightarrow F_i \ge 0`;
3. :math:`Z_i = u_i \Rightarrow F_i \le 0`.

So a free pair (:math:`l_i = -\infty`, :math:`u_i = \infty`) is the equation :math:`F_i = 0`, and
a fixed one (:math:`l_i = u_i`) says nothing about :math:`F_i`. The slack form of every
non-fixed pair is

.. math::

    F_i - w_i + v_i = 0,\qquad 0 \le Z_i - l_i \perp w_i \ge 0\ \ (l_i > -\infty),\qquad
    0 \le u_i - Z_i \perp v_i \ge 0\ \ (u_i < \infty),

with a slack :math:`w_i` only for a finite :math:`l_i` and :math:`v_i` only for a finite
:math:`u_i` (an absent slack is 0). The three cases follow: strictly inside both distances are
positive, so :math:`w_i = v_i = 0` and :math:`F_i = 0`; at :math:`l_i`, :math:`v_i = 0` (when
:math:`l_i < u_i`) and :math:`F_i = w_i \ge 0`; at :math:`u_i`, :math:`F_i = -v_i \le 0`.

As in MOI, where one ``Complements`` constraint covers every case and the case follows from the
bounds of the variable, no lowering writes the cases again: :class:`SlackForm` classifies the
pairs once from :math:`(l, u)` (index sets :attr:`~SlackForm.fixed`, :attr:`~SlackForm.free`,
:attr:`~SlackForm.lower`, :attr:`~SlackForm.upper`, :attr:`~SlackForm.rows`, and
:meth:`SlackForm.case` per pair), and every lowering takes them from there:

* :meth:`SlackForm.emit` states the slack form into a :class:`SlackBuilder` (the CasADi one,
  :class:`CasadiBuilder`, serves :class:`~mcpkit.lowering.casadi.MCPToMPCC` with :math:`Z = z`,
  the MCP's variables, and :class:`~mcpkit.lowering.standard.ToStandardMPCC` with :math:`Z = H`,
  :math:`F = G`, the MPCC pair's expressions);
* :meth:`SlackForm.lift` appends slack values consistent with :math:`F` (warm starts);
* :class:`~mcpkit.lowering.pyomo.ToPyomo` states each pair with ``pyomo.mpec`` ``complements``
  by its :class:`BoxCase`, not in slack form: ``complements`` *is* the box pair, and leaving it
  whole lets Pyomo's MPEC transformations, GAMS/AMPL and :func:`~mcpkit.lowering.pyomo.from_pyomo`
  read it back as one pair.

Two layouts of the slacks exist because the two CasADi lowerings have always ordered their
variables differently, and their problems must stay the same: ``"blocked"`` (every :math:`w`,
then every :math:`v`; the MCP lowering) and ``"paired"`` (:math:`w_i, v_i` pair by pair; the MPCC
lowering). The standard pairs come in the same order as the slacks (pair :math:`k` is
:math:`G'_k \perp s_k`); the rows :math:`F_i - w_i + v_i` in increasing :math:`i`.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Generic, Literal, Protocol, TypeVar

import casadi as ca
import numpy as np

from mcpkit.errors import BoundsError, NonFiniteError, ShapeError

E = TypeVar("E")
Layout = Literal["blocked", "paired"]


class BoxCase(enum.Enum):
    """Which bounds a pair has (its case split); the conditions in the module docstring."""

    BOX = "box"
    """Both bounds finite (:math:`l_i < u_i`, or any without ``drop_fixed``): slacks :math:`w_i, v_i`."""
    LOWER = "lower"
    """Only :math:`l_i` finite: :math:`F_i = w_i \\ge 0` when :math:`Z_i = l_i`, else 0."""
    UPPER = "upper"
    """Only :math:`u_i` finite: :math:`F_i = -v_i \\le 0` when :math:`Z_i = u_i`, else 0."""
    FREE = "free"
    """No finite bound: the equation :math:`F_i = 0`."""
    FIXED = "fixed"
    """:math:`l_i = u_i` with ``drop_fixed``: no condition on :math:`F_i`."""


class SlackBuilder(Protocol[E]):
    """Where :meth:`SlackForm.emit` states the slack form: columns ``E`` with ``+`` and ``-``."""

    def variables(self, name: str, n: int) -> E:
        """``n`` new variables :math:`\\ge 0`, as a column."""

    def take(self, e: E, idx: np.ndarray) -> E:
        """The entries ``idx`` of the column ``e``."""

    def concat(self, parts: Sequence[E]) -> E:
        """The columns ``parts`` stacked."""

    def constant(self, values: np.ndarray) -> E:
        """A column of numbers."""


@dataclass(frozen=True)
class CasadiBuilder:
    """:class:`SlackBuilder` over CasADi columns of one kind (``casadi.SX`` or ``casadi.MX``)."""

    kind: type = ca.SX

    def variables(self, name: str, n: int) -> Any:
        return self.kind.sym(name, n)

    def take(self, e: Any, idx: np.ndarray) -> Any:
        return e[[int(i) for i in idx]] if idx.size else self.kind(0, 1)

    def concat(self, parts: Sequence[Any]) -> Any:
        return ca.vertcat(*parts) if parts else self.kind(0, 1)

    def constant(self, values: np.ndarray) -> Any:
        return ca.DM(np.asarray(values, dtype=float).reshape(-1, 1))


@dataclass(frozen=True)
class SlackEmission(Generic[E]):
    r"""What :meth:`SlackForm.emit` states: new variables, rows and standard pairs.

    The rows hold with bounds ``0`` (:math:`F_i - w_i + v_i = 0`, :attr:`SlackForm.rows` order);
    the slacks have bounds ``[0, inf)``; pair :math:`k` is :math:`0 \le G_k \perp H_k \ge 0`.
    """

    slacks: E
    """The new variables (the slack vector, layout order)."""
    rows: E
    r""":math:`F_i - w_i + v_i` for :math:`i` in :attr:`SlackForm.rows`."""
    G: E
    r""":math:`Z_i - l_i` (a :math:`w` pair) or :math:`u_i - Z_i` (a :math:`v` pair)."""
    H: E
    """The slacks again (:math:`w_i` or :math:`v_i`)."""


def _as_bounds(value: Any, what: str) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if arr.ndim != 1:
        raise ShapeError(f"SlackForm: {what} must be a vector, got shape {arr.shape}")
    if np.isnan(arr).any():
        bad = np.flatnonzero(np.isnan(arr))[:10].tolist()
        raise NonFiniteError(f"SlackForm: {what} contains NaN at {bad}")
    return arr.copy()


@dataclass(frozen=True, eq=False)
class SlackForm:
    r"""The slack form of the box pairs :math:`l \le Z \le u \perp F` (module docstring).

    Build it with :meth:`from_bounds`. Index sets (sorted pair indices):

    Attributes
    ----------
    lb, ub
        The bounds :math:`l, u`.
    layout
        ``"blocked"`` (slacks ``w`` of :attr:`lower`, then ``v`` of :attr:`upper`) or
        ``"paired"`` (``w_i, v_i`` pair by pair).
    fixed
        :math:`l_i = u_i` (only with ``drop_fixed``): no slack, no row, no pair.
    free
        No finite bound: a row :math:`F_i = 0`, no slack.
    lower, upper
        Non-fixed pairs with a finite :math:`l_i` (own a slack :math:`w_i`) or :math:`u_i` (own
        :math:`v_i`); a box pair is in both.
    rows
        Every non-fixed pair (one row :math:`F_i - w_i + v_i = 0` each), increasing.
    """

    lb: np.ndarray
    ub: np.ndarray
    layout: Layout
    fixed: np.ndarray
    free: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    rows: np.ndarray

    @classmethod
    def from_bounds(
        cls, lb: Any, ub: Any, *, layout: Layout = "blocked", drop_fixed: bool = True
    ) -> SlackForm:
        r"""Classify the pairs of ``l <= Z <= u ⟂ F``.

        Parameters
        ----------
        lb, ub
            Bounds :math:`l, u` (vectors of one length; ``±inf`` for none).
        layout
            Slack order, ``"blocked"`` or ``"paired"`` (module docstring).
        drop_fixed
            ``True`` when :math:`l \le Z \le u` hold elsewhere (:math:`Z` is a variable with those
            bounds, as in an MCP), so a pair with :math:`l_i = u_i` states nothing. ``False``
            when :math:`Z` is an expression whose bounds only the pairs :math:`G' \ge 0` impose
            (an MPCC's :math:`H`): such a pair keeps both slacks, which force
            :math:`Z_i = l_i` and leave :math:`F_i = w_i - v_i` free.

        Raises
        ------
        ShapeError
            ``l`` or ``u`` not a vector, or of different lengths.
        NonFiniteError
            NaN in a bound.
        BoundsError
            :math:`l_i > u_i`, :math:`l_i = +\infty` or :math:`u_i = -\infty`.
        """
        if layout not in ("blocked", "paired"):
            raise ValueError(f"SlackForm: layout must be 'blocked' or 'paired', got {layout!r}")
        lo, hi = _as_bounds(lb, "lb"), _as_bounds(ub, "ub")
        if lo.shape != hi.shape:
            raise ShapeError(f"SlackForm: lb has {lo.size} entries but ub has {hi.size}")
        bad = np.flatnonzero((lo > hi) | (lo == np.inf) | (hi == -np.inf))
        if bad.size:
            raise BoundsError(
                f"SlackForm: lb > ub, lb = +inf or ub = -inf at {bad[:10].tolist()} "
                f"(lb={lo[bad[:10]].tolist()}, ub={hi[bad[:10]].tolist()})"
            )
        fixed = (lo == hi) if drop_fixed else np.zeros(lo.size, dtype=bool)
        fin_l, fin_u = np.isfinite(lo), np.isfinite(hi)
        lo.flags.writeable = hi.flags.writeable = False
        return cls(
            lb=lo,
            ub=hi,
            layout=layout,
            fixed=np.flatnonzero(fixed),
            free=np.flatnonzero(~fin_l & ~fin_u),
            lower=np.flatnonzero(fin_l & ~fixed),
            upper=np.flatnonzero(fin_u & ~fixed),
            rows=np.flatnonzero(~fixed),
        )

    # ------------------------------------------------------------------ index sets
    @property
    def n(self) -> int:
        """Number of pairs."""
        return int(self.lb.size)

    @property
    def lower_idx(self) -> np.ndarray:
        """Alias of :attr:`lower` (the name :class:`~mcpkit.lowering.casadi.SlackMap` users know)."""
        return self.lower

    @property
    def upper_idx(self) -> np.ndarray:
        """Alias of :attr:`upper`."""
        return self.upper

    @property
    def n_slacks(self) -> int:
        """Number of slack variables (= number of standard pairs)."""
        return int(self.lower.size + self.upper.size)

    def case(self, i: int) -> BoxCase:
        """The :class:`BoxCase` of pair ``i``."""
        if self.fixed.size and self.lb[i] == self.ub[i]:
            return BoxCase.FIXED
        fin_l, fin_u = bool(np.isfinite(self.lb[i])), bool(np.isfinite(self.ub[i]))
        return {(True, True): BoxCase.BOX, (True, False): BoxCase.LOWER,
                (False, True): BoxCase.UPPER, (False, False): BoxCase.FREE}[(fin_l, fin_u)]  # fmt: skip

    @cached_property
    def _order(self) -> np.ndarray:
        """Slack position -> position in the blocked order ``(w of lower, v of upper)``."""
        blocked = np.concatenate([2 * self.lower, 2 * self.upper + 1])
        if self.layout == "blocked":
            return np.arange(blocked.size)
        return np.argsort(blocked, kind="stable")

    @cached_property
    def w_pos(self) -> np.ndarray:
        """Position of each :math:`w_i` (``i`` in :attr:`lower`) in the slack vector."""
        return np.argsort(self._order, kind="stable")[: self.lower.size]

    @cached_property
    def v_pos(self) -> np.ndarray:
        """Position of each :math:`v_i` (``i`` in :attr:`upper`) in the slack vector."""
        return np.argsort(self._order, kind="stable")[self.lower.size :]

    @cached_property
    def pair_idx(self) -> np.ndarray:
        """The pair ``i`` each slack (and each standard pair) belongs to."""
        return np.concatenate([self.lower, self.upper])[self._order].astype(int)

    # ------------------------------------------------------------------ numbers
    def slacks(self, F: Any, *, exact: bool = False) -> np.ndarray:
        r"""Slack values at a point with function values ``F`` (layout order).

        :math:`w_i = \max(F_i, 0)`, :math:`v_i = \max(-F_i, 0)`: a start consistent with the rows
        whenever the pair has both slacks. With ``exact`` a pair with one slack gets
        :math:`w_i = F_i` or :math:`v_i = -F_i`, so :math:`F_i = w_i - v_i` holds for every
        non-free row (a slack may then be negative: the point is the image of ``F``, not a
        feasible start).
        """
        F = np.asarray(F, dtype=float).reshape(-1)
        if F.shape != (self.n,):
            raise ShapeError(f"SlackForm: F has {F.size} entries, expected {self.n}")
        w, v = F[self.lower], -F[self.upper]
        # a box pair (both slacks) always splits F into its positive and negative parts
        clip_w = np.isin(self.lower, self.upper) | (not exact)
        clip_v = np.isin(self.upper, self.lower) | (not exact)
        s = np.empty(self.n_slacks)
        s[self.w_pos] = np.where(clip_w, np.maximum(w, 0.0), w)
        s[self.v_pos] = np.where(clip_v, np.maximum(v, 0.0), v)
        return s

    def lift(self, x: Any, F: Any, *, exact: bool = False) -> np.ndarray:
        """``(x, slacks(F))``: the point ``x`` of the source problem with its slacks appended."""
        return np.concatenate([np.asarray(x, dtype=float).reshape(-1), self.slacks(F, exact=exact)])

    def split(self, x: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(head, w, v)`` from a lifted point: the source part, ``w`` (per :attr:`lower`), ``v``."""
        x = np.asarray(x, dtype=float).reshape(-1)
        if x.size < self.n_slacks:
            raise ShapeError(f"SlackForm: a lifted point has at least {self.n_slacks} entries, got {x.size}")
        head, s = x[: x.size - self.n_slacks], x[x.size - self.n_slacks :]
        return head, s[self.w_pos], s[self.v_pos]

    # ------------------------------------------------------------------ statement
    def emit(self, builder: SlackBuilder[E], Z: E, F: E) -> SlackEmission[E]:
        r"""State the slack form of ``l <= Z <= u ⟂ F`` into ``builder``.

        ``Z`` and ``F`` are columns of :attr:`n` entries (variables or expressions). Returns the
        new slack variables, the rows :math:`F_i - (w_i - v_i)` (one rounding in the slack
        difference, whatever the case) and the pairs
        :math:`G' = (Z_i - l_i \text{ or } u_i - Z_i)`, :math:`H' = (w_i \text{ or } v_i)`.
        """
        b = builder
        lo, up = self.lower, self.upper
        if self.layout == "blocked":
            w, v = b.variables("w", lo.size), b.variables("v", up.size)
            s = b.concat([w, v])
        else:
            s = b.variables("s", self.n_slacks)
            w, v = b.take(s, self.w_pos), b.take(s, self.v_pos)
        G_blocked = b.concat(
            [b.take(Z, lo) - b.constant(self.lb[lo]), b.constant(self.ub[up]) - b.take(Z, up)]
        )
        G = G_blocked if self.layout == "blocked" else b.take(G_blocked, self._order)
        # rows by case, then in increasing pair order
        box = np.intersect1d(lo, up)
        lo_only, up_only = np.setdiff1d(lo, up), np.setdiff1d(up, lo)
        parts = [
            b.take(F, box) - (b.take(w, np.searchsorted(lo, box)) - b.take(v, np.searchsorted(up, box))),
            b.take(F, lo_only) - b.take(w, np.searchsorted(lo, lo_only)),
            b.take(F, up_only) + b.take(v, np.searchsorted(up, up_only)),
            b.take(F, self.free),
        ]
        by_case = np.concatenate([box, lo_only, up_only, self.free])
        rows = b.take(b.concat(parts), np.argsort(by_case, kind="stable"))
        return SlackEmission(slacks=s, rows=rows, G=G, H=s)
