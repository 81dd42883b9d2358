r"""The mathematical program with complementarity constraints (MPCC), stated once.

.. math::

    \min_x\ f(x; p) \quad \text{s.t.}\quad g_l \le g(x; p) \le g_u,\quad
    x_l \le x \le x_u,\quad H_l \le H(x; p) \le H_u \ \perp\ G(x; p),\quad
    G_l \le G(x; p) \le G_u .

Each pair is a box-MCP pair with :math:`H_j` in the variable's role and :math:`G_j` in the
function's role (PATH's and MathOptInterface's ``Complements`` convention, and AMPL/GAMS's, where
the MPECLib and MacMPEC files come from):

* :math:`H_j = H_{l,j}` :math:`\Rightarrow G_j \ge 0`;
* :math:`H_{l,j} < H_j < H_{u,j}` :math:`\Rightarrow G_j = 0`;
* :math:`H_j = H_{u,j}` :math:`\Rightarrow G_j \le 0`;

and :math:`G_l \le G \le G_u` hold as plain constraints. The defaults
:math:`G_l = H_l = 0`, :math:`G_u = H_u = \infty` give the standard form
:math:`0 \le G \perp H \ge 0` (:meth:`MPCC.is_standard`), the one form the reformulations in
:mod:`mcpkit.homotopy` work on; :class:`~mcpkit.lowering.standard.ToStandardMPCC` lowers any other
once.

The residual of a pair is the box-MCP natural residual
:math:`|H_j - \Pi_{[H_{l,j}, H_{u,j}]}(H_j - G_j)|`, which is :math:`|\min(G_j, H_j)|` for a
standard pair.

**Printing** (:meth:`MPCC.to_text`, :meth:`MPCC.to_latex`, :meth:`MPCC.explain`, notebooks'
``_repr_latex_``; :mod:`mcpkit.printing.mpcc`): the problem in this form with its sizes,
the pair cases in words and the expressions. An MPCC built from CasADi alone prints its rows
compactly (large vectors as a summary and their first rows); one built from a declaration with
blocks carries an optional :class:`MPCCBlocks` (named slices of :math:`x, g` and the pairs, with
the formulas as declared) and prints one line per block, for a horizon one step's blocks
"for k = 0, …, N−1".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import casadi as ca
import numpy as np

from mcpkit.errors import BoundsError, MCPInputError, NonFiniteError, ShapeError
from mcpkit.problems.hooks import Hook, implementation
from mcpkit.problems.names import casadi_name
from mcpkit.problems.segments import MPCCBlocks


@dataclass
class MPCC:
    r"""An MPCC with general pair bounds (see the module docstring).

    Attributes
    ----------
    x, p
        CasADi SX (or MX) column symbols of the decision variables and parameters.
    f, g, G, H
        Expressions (scalar objective; column vectors).
    lbg, ubg, lbx, ubx
        Numeric bounds (``±inf`` allowed).
    x0, p0
        Default starting point and parameter value.
    lbG, ubG, lbH, ubH
        Pair bounds (default ``0`` and ``inf``: the standard :math:`0 \le G \perp H \ge 0`).
    G_implied_by_bounds, H_implied_by_bounds
        ``True`` when :math:`G \ge 0` (resp. :math:`H \ge 0`) already follows from ``lbx``/``ubx``
        (as in the MCP lowering), so reformulations need not add them as constraints.
    name
        Label for messages.
    blocks
        Optional :class:`MPCCBlocks` (named slices and declared formulas) for the printer.
    """

    x: ca.SX | ca.MX
    p: ca.SX | ca.MX
    f: ca.SX | ca.MX
    g: ca.SX | ca.MX
    lbg: np.ndarray
    ubg: np.ndarray
    lbx: np.ndarray
    ubx: np.ndarray
    G: ca.SX | ca.MX
    H: ca.SX | ca.MX
    x0: np.ndarray
    p0: np.ndarray
    lbG: np.ndarray | None = None
    ubG: np.ndarray | None = None
    lbH: np.ndarray | None = None
    ubH: np.ndarray | None = None
    G_implied_by_bounds: bool = False
    H_implied_by_bounds: bool = False
    name: str = "mpcc"
    _funs: dict[str, ca.Function] = field(default_factory=dict, repr=False)
    _derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """Objects derived from this problem and kept with it (the homotopy's shared derivatives)."""
    blocks: MPCCBlocks | Callable[[], MPCCBlocks] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        # structural zeros (``casadi.SX(1, 1)``: no stored entry) are zeros: stored densely, so that
        # every solver (IPOPT's interface wants dense vectors) and printer takes them as values
        for key in ("f", "g", "G", "H"):
            value = getattr(self, key)
            if isinstance(value, (ca.SX, ca.MX, ca.DM)) and not value.is_dense():
                setattr(self, key, ca.densify(value))
        nx, ng, nc = self.x.numel(), self.g.numel(), self.G.numel()
        if self.H.numel() != nc:
            raise ShapeError(f"MPCC {self.name!r}: G has {nc} rows but H has {self.H.numel()}")
        for what, default in (("lbG", 0.0), ("ubG", np.inf), ("lbH", 0.0), ("ubH", np.inf)):
            if getattr(self, what) is None:
                setattr(self, what, np.full(nc, default))
        for arr, n, what in (
            (self.lbx, nx, "lbx"), (self.ubx, nx, "ubx"), (self.x0, nx, "x0"),
            (self.lbg, ng, "lbg"), (self.ubg, ng, "ubg"), (self.p0, self.p.numel(), "p0"),
            (self.lbG, nc, "lbG"), (self.ubG, nc, "ubG"), (self.lbH, nc, "lbH"), (self.ubH, nc, "ubH"),
        ):  # fmt: skip
            if np.shape(arr) != (n,):
                raise ShapeError(f"MPCC {self.name!r}: {what} must have shape ({n},), got {np.shape(arr)}")
            if np.isnan(arr).any():
                raise NonFiniteError(f"MPCC {self.name!r}: {what} contains NaN")
        if not np.isfinite(self.x0).all() or not np.isfinite(self.p0).all():
            raise NonFiniteError(f"MPCC {self.name!r}: x0 and p0 must be finite")
        for lo, hi, what in (
            (self.lbx, self.ubx, "x"), (self.lbg, self.ubg, "g"), (self.lbG, self.ubG, "G"),
            (self.lbH, self.ubH, "H"),
        ):  # fmt: skip
            bad = np.flatnonzero(lo > hi)
            if bad.size:
                raise BoundsError(f"MPCC {self.name!r}: lower > upper bound on {what} at {bad[:10].tolist()}")
        if self.f.numel() != 1:
            raise ShapeError(f"MPCC {self.name!r}: objective must be scalar")
        if isinstance(self.blocks, MPCCBlocks):
            self.blocks.check(self._lengths(), self.name)
        elif self.blocks is not None and not callable(self.blocks):
            raise MCPInputError(
                f"MPCC {self.name!r}: blocks must be an MPCCBlocks or a function returning one"
            )

    @classmethod
    def from_casadi(
        cls,
        x: ca.SX,
        G: ca.SX,
        H: ca.SX,
        *,
        f: ca.SX | float = 0.0,
        g: ca.SX | None = None,
        lbg: np.ndarray | float | None = None,
        ubg: np.ndarray | float | None = None,
        lbx: np.ndarray | float = -np.inf,
        ubx: np.ndarray | float = np.inf,
        x0: np.ndarray | float = 0.0,
        p: ca.SX | None = None,
        p0: np.ndarray | float | None = None,
        lbG: np.ndarray | float = 0.0,
        ubG: np.ndarray | float = np.inf,
        lbH: np.ndarray | float = 0.0,
        ubH: np.ndarray | float = np.inf,
        name: str = "mpcc",
    ) -> MPCC:
        """Wrap a user's CasADi MPCC (symbols ``x``, expressions ``G``, ``H``) with checks.

        Scalars broadcast; ``lbg``/``ubg`` default to ``0`` (equalities).
        """
        if not isinstance(x, (ca.SX, ca.MX)) or not x.is_valid_input():
            raise MCPInputError("MPCC.from_casadi: x must be a purely symbolic casadi SX or MX vector")
        T = type(x)
        x = ca.vec(x)
        p = T(0, 1) if p is None else ca.vec(p)
        g = T(0, 1) if g is None else ca.vec(T(g))
        G, H = ca.vec(T(G)), ca.vec(T(H))
        nx, ng, npar, nc = x.numel(), g.numel(), p.numel(), G.numel()

        def vec(v: object, n: int, default: float, what: str) -> np.ndarray:
            arr = np.full(n, default) if v is None else np.asarray(v, dtype=float).reshape(-1)
            if arr.size == 1 and n != 1:
                arr = np.full(n, float(arr[0]))
            if arr.shape != (n,):
                raise ShapeError(f"MPCC.from_casadi: {what} must have {n} entries, got {arr.shape}")
            return arr

        return cls(
            x=x,
            p=p,
            f=T(f),
            g=g,
            lbg=vec(lbg, ng, 0.0, "lbg"),
            ubg=vec(ubg, ng, 0.0, "ubg"),
            lbx=vec(lbx, nx, -np.inf, "lbx"),
            ubx=vec(ubx, nx, np.inf, "ubx"),
            G=G,
            H=H,
            x0=vec(x0, nx, 0.0, "x0"),
            p0=vec(p0, npar, 0.0, "p0"),
            lbG=vec(lbG, nc, 0.0, "lbG"),
            ubG=vec(ubG, nc, np.inf, "ubG"),
            lbH=vec(lbH, nc, 0.0, "lbH"),
            ubH=vec(ubH, nc, np.inf, "ubH"),
            name=name,
        )

    @classmethod
    def from_pyomo(cls, model: Any, name: str | None = None, *, relax_integrality: bool = False) -> MPCC:
        """The MPCC of a Pyomo model with an objective, constraints and ``pyomo.mpec``
        complementarities; see :func:`mcpkit.lowering.from_pyomo.mpcc_from_pyomo` (semantics, what is
        refused). The map back to the model is ``mpcc.pyomo_source``."""
        return implementation(Hook.MPCC_FROM_PYOMO)(model, name, relax_integrality=relax_integrality)

    def _lengths(self) -> dict[str, int]:
        return {
            "x": int(self.x.numel()),
            "p": int(self.p.numel()),
            "g": int(self.g.numel()),
            "pair": self.n_pairs,
        }

    def with_blocks(self, blocks: MPCCBlocks | Callable[[], MPCCBlocks] | None) -> MPCC:
        """The same MPCC carrying the block structure ``blocks`` for printing (or a function that
        builds it on first use, :meth:`block_structure`)."""
        return dataclasses.replace(self, blocks=blocks, _funs={})

    def block_structure(self) -> MPCCBlocks | None:
        """The :class:`MPCCBlocks` for printing, or ``None``; a function given as ``blocks`` is called
        (and its result checked) on first use, so building a large MPCC pays nothing for printing."""
        if self.blocks is not None and not isinstance(self.blocks, MPCCBlocks):
            built = self.blocks()
            if not isinstance(built, MPCCBlocks):
                raise MCPInputError(f"MPCC {self.name!r}: the blocks function must return an MPCCBlocks")
            built.check(self._lengths(), self.name)
            self.blocks = built
        return self.blocks

    # ------------------------------------------------------------------ printing
    def to_text(self, **kwargs: Any) -> str:
        """Plain text of the MPCC; see :func:`mcpkit.printing.mpcc.to_text`."""
        return implementation(Hook.MPCC_TEXT)(self, **kwargs)

    def to_latex(self, **kwargs: Any) -> str:
        """LaTeX of the MPCC; see :func:`mcpkit.printing.mpcc.to_latex`."""
        return implementation(Hook.MPCC_LATEX)(self, **kwargs)

    def _repr_latex_(self) -> str:
        """Notebook rendering: :meth:`to_latex` in display math."""
        return f"$${self.to_latex()}$$"

    def explain(self, **kwargs: Any) -> str:
        """Prose: sizes, each part's structure and the pair cases in words; see
        :func:`mcpkit.printing.mpcc.explain`."""
        return implementation(Hook.MPCC_EXPLAIN)(self, **kwargs)

    def sym(self, name: str, n: int = 1) -> ca.SX | ca.MX:
        """A new symbol of the same kind (SX or MX) as :attr:`x`."""
        return type(self.x).sym(name, n)

    @property
    def n_pairs(self) -> int:
        """Number of complementarity pairs."""
        return int(self.G.numel())

    def standard_pairs(self) -> np.ndarray:
        r"""Per pair: exactly :math:`0 \le G_j \perp H_j \ge 0` (zero lower, infinite upper bounds)."""
        return (self.lbG == 0) & np.isposinf(self.ubG) & (self.lbH == 0) & np.isposinf(self.ubH)

    def is_standard(self) -> bool:
        r"""Every pair is :math:`0 \le G_j \perp H_j \ge 0` (the reformulations' form)."""
        return bool(self.standard_pairs().all())

    def is_lpec(self) -> bool:
        r""":math:`f, g, G, H` are affine in :math:`x` for every parameter value: an LPEC, every
        branch problem (each pair's side fixed at zero) a linear program (:func:`affine_in`)."""
        return affine_in(self.x, self.f, self.g, self.G, self.H)

    def side_sparsity(self, side: str) -> ca.Sparsity:
        r"""The structure of :math:`\partial G / \partial x` (``side="G"``) or of
        :math:`\partial H / \partial x`, computed once per problem and kept with it: the
        planner's coupling test and :class:`~mcpkit.lowering.lift_pairs.LiftPairs` both read it
        (0.3-0.8 s for a dense :math:`1000 \times 1000` matrix in ``H``)."""
        if side not in ("G", "H"):
            raise MCPInputError(f"side_sparsity: side must be 'G' or 'H', not {side!r}")
        key = f"pair_sparsity_{side}"
        if key not in self._derived:
            self._derived[key] = ca.jacobian_sparsity(getattr(self, side), self.x)
        return self._derived[key]

    def pair_coupling(self) -> np.ndarray:
        r"""Per pair: :math:`|\mathrm{vars}(G_j)| \cdot |\mathrm{vars}(H_j)|`, the pairs of
        variables its product :math:`G_j H_j` couples (the Hessian entries a reformulation's
        pair row makes), from the structure alone."""
        counts = []
        for side in ("G", "H"):
            rows = np.asarray(self.side_sparsity(side).get_triplet()[0], dtype=int)
            counts.append(np.bincount(rows, minlength=self.n_pairs))
        return counts[0] * counts[1]

    def function(self, what: str) -> ca.Function:
        """Cached ``casadi.Function`` ``(x, p) -> what`` for ``what`` in ``f, g, G, H``."""
        if what not in self._funs:
            expr = {"f": self.f, "g": self.g, "G": self.G, "H": self.H}[what]
            self._funs[what] = ca.Function(casadi_name(f"{self.name}_{what}"), [self.x, self.p], [expr])
        return self._funs[what]

    def evaluate(self, x: np.ndarray, p: np.ndarray) -> dict[str, np.ndarray]:
        """Numeric ``f, g, G, H`` at ``(x, p)``."""
        return {k: np.asarray(self.function(k)(x, p), dtype=float).reshape(-1) for k in ("f", "g", "G", "H")}

    def residuals(self, x: np.ndarray, p: np.ndarray) -> tuple[float, float, dict[str, np.ndarray]]:
        r"""``(complementarity residual, constraint violation, {"f", "g", "G", "H"})`` at ``(x, p)``.

        * complementarity residual: :math:`\max_j |H_j - \Pi_{[H_{l,j}, H_{u,j}]}(H_j - G_j)|`;
        * constraint violation: the largest violation of :math:`g_l \le g \le g_u`,
          :math:`x_l \le x \le x_u`, :math:`G_l \le G \le G_u` and :math:`H_l \le H \le H_u`.

        NaN in any value counts as an infinite residual or violation (it can never pass).
        """
        v = self.evaluate(x, p)
        Gv, Hv = v["G"], v["H"]
        with np.errstate(invalid="ignore"):
            comp = np.abs(Hv - np.clip(Hv - Gv, self.lbH, self.ubH))
            parts = [
                self.lbg - v["g"], v["g"] - self.ubg, self.lbx - x, x - self.ubx,
                self.lbG - Gv, Gv - self.ubG, self.lbH - Hv, Hv - self.ubH,
            ]  # fmt: skip
        comp_r = _nan_max(comp)
        viol = max((_nan_max(a) for a in parts), default=0.0)
        return comp_r, viol, v

    def complementarity_residual(self, x: np.ndarray, p: np.ndarray) -> float:
        """The first value of :meth:`residuals`."""
        return self.residuals(x, p)[0]

    def constraint_violation(self, x: np.ndarray, p: np.ndarray) -> float:
        """The second value of :meth:`residuals`."""
        return self.residuals(x, p)[1]


def affine_in(x: ca.SX | ca.MX, *exprs: ca.SX | ca.MX) -> bool:
    r"""Whether every expression of ``exprs`` is affine in ``x`` for every parameter value
    (CasADi's structural test ``is_linear``; empty expressions count as affine)."""
    return all(ca.is_linear(e, x) for e in exprs if e.numel())


def _nan_max(a: np.ndarray) -> float:
    """``max(a, 0)`` with NaN read as ``inf`` (0 for an empty array)."""
    a = np.asarray(a, dtype=float)
    return float(max(np.max(np.where(np.isnan(a), np.inf, a), initial=0.0), 0.0))
