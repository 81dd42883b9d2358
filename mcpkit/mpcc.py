r"""The CasADi-level mathematical program with complementarity constraints (MPCC).

.. math::

    \min_x\ f(x; p) \quad \text{s.t.}\quad g_l \le g(x; p) \le g_u,\quad
    x_l \le x \le x_u,\quad 0 \le G(x; p) \perp H(x; p) \ge 0 .

Every IPOPT route in mcpkit works on this one form: an MCP is lowered to it by
:class:`mcpkit.lowering.casadi.MCPToMPCC`, user MPCCs (``x, G, H`` and bounds) are wrapped by
:meth:`MPCC.from_casadi`, and the reformulations in :mod:`mcpkit.solvers` turn it into NLPs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import casadi as ca
import numpy as np

from mcpkit.errors import BoundsError, MCPInputError, NonFiniteError, ShapeError


def casadi_name(name: str) -> str:
    """A valid CasADi function name from any label (letters first, single underscores)."""
    out = re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9]", "_", name)).strip("_")
    return out if out[:1].isalpha() else f"f_{out}"


@dataclass
class MPCC:
    r"""An MPCC with pairs :math:`0 \le G_j \perp H_j \ge 0` (see the module docstring).

    Attributes
    ----------
    x, p
        CasADi SX column symbols of the decision variables and parameters.
    f, g, G, H
        SX expressions (scalar objective; column vectors).
    lbx, ubx, lbg, ubg
        Numeric bounds (``±inf`` allowed).
    x0, p0
        Default starting point and parameter value.
    G_implied_by_bounds, H_implied_by_bounds
        ``True`` when :math:`G \ge 0` (resp. :math:`H \ge 0`) already follows from ``lbx``/``ubx``
        (as in the MCP lowering), so reformulations need not add them as constraints.
    name
        Label for messages.
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
    G_implied_by_bounds: bool = False
    H_implied_by_bounds: bool = False
    name: str = "mpcc"
    _funs: dict[str, ca.Function] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        nx, ng, nc = self.x.numel(), self.g.numel(), self.G.numel()
        if self.H.numel() != nc:
            raise ShapeError(f"MPCC {self.name!r}: G has {nc} rows but H has {self.H.numel()}")
        for arr, n, what in (
            (self.lbx, nx, "lbx"), (self.ubx, nx, "ubx"), (self.x0, nx, "x0"),
            (self.lbg, ng, "lbg"), (self.ubg, ng, "ubg"), (self.p0, self.p.numel(), "p0"),
        ):  # fmt: skip
            if np.shape(arr) != (n,):
                raise ShapeError(f"MPCC {self.name!r}: {what} must have shape ({n},), got {np.shape(arr)}")
            if np.isnan(arr).any():
                raise NonFiniteError(f"MPCC {self.name!r}: {what} contains NaN")
        if not np.isfinite(self.x0).all() or not np.isfinite(self.p0).all():
            raise NonFiniteError(f"MPCC {self.name!r}: x0 and p0 must be finite")
        for lo, hi, what in ((self.lbx, self.ubx, "x"), (self.lbg, self.ubg, "g")):
            bad = np.flatnonzero(lo > hi)
            if bad.size:
                raise BoundsError(f"MPCC {self.name!r}: lower > upper bound on {what} at {bad[:10].tolist()}")
        if self.f.numel() != 1:
            raise ShapeError(f"MPCC {self.name!r}: objective must be scalar")

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
        name: str = "mpcc",
    ) -> MPCC:
        """Wrap a user's CasADi MPCC (SX symbols ``x``, expressions ``G``, ``H``) with checks."""
        if not isinstance(x, (ca.SX, ca.MX)) or not x.is_valid_input():
            raise MCPInputError("MPCC.from_casadi: x must be a purely symbolic casadi SX or MX vector")
        T = type(x)
        x = ca.vec(x)
        p = T(0, 1) if p is None else ca.vec(p)
        g = T(0, 1) if g is None else ca.vec(T(g))
        nx, ng, npar = x.numel(), g.numel(), p.numel()

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
            G=ca.vec(T(G)),
            H=ca.vec(T(H)),
            x0=vec(x0, nx, 0.0, "x0"),
            p0=vec(p0, npar, 0.0, "p0"),
            name=name,
        )

    def sym(self, name: str, n: int = 1) -> ca.SX | ca.MX:
        """A new symbol of the same kind (SX or MX) as :attr:`x`."""
        return type(self.x).sym(name, n)

    @property
    def n_pairs(self) -> int:
        """Number of complementarity pairs."""
        return int(self.G.numel())

    def function(self, what: str) -> ca.Function:
        """Cached ``casadi.Function`` ``(x, p) -> what`` for ``what`` in ``f, g, G, H``."""
        if what not in self._funs:
            expr = {"f": self.f, "g": self.g, "G": self.G, "H": self.H}[what]
            self._funs[what] = ca.Function(casadi_name(f"{self.name}_{what}"), [self.x, self.p], [expr])
        return self._funs[what]

    def evaluate(self, x: np.ndarray, p: np.ndarray) -> dict[str, np.ndarray]:
        """Numeric ``f, g, G, H`` at ``(x, p)``."""
        return {k: np.asarray(self.function(k)(x, p), dtype=float).reshape(-1) for k in ("f", "g", "G", "H")}

    def complementarity_residual(self, x: np.ndarray, p: np.ndarray) -> float:
        r""":math:`\max_j |\min(G_j, H_j)|` at ``(x, p)`` (0 for no pairs)."""
        Gv = np.asarray(self.function("G")(x, p)).reshape(-1)
        Hv = np.asarray(self.function("H")(x, p)).reshape(-1)
        if Gv.size == 0:
            return 0.0
        return float(np.max(np.abs(np.minimum(Gv, Hv))))

    def residuals(self, x: np.ndarray, p: np.ndarray) -> tuple[float, float, dict[str, np.ndarray]]:
        """``(complementarity residual, constraint violation, {"f", "g", "G", "H"})`` at ``(x, p)``."""
        v = self.evaluate(x, p)
        comp = float(np.max(np.abs(np.minimum(v["G"], v["H"])), initial=0.0))
        return comp, self.constraint_violation(x, p), v

    def constraint_violation(self, x: np.ndarray, p: np.ndarray) -> float:
        """Largest violation of ``g``, ``x`` bounds and the sign conditions ``G, H >= 0``."""
        v = self.evaluate(x, p)
        parts = [
            np.maximum(self.lbg - v["g"], 0.0),
            np.maximum(v["g"] - self.ubg, 0.0),
            np.maximum(self.lbx - x, 0.0),
            np.maximum(x - self.ubx, 0.0),
            np.maximum(-v["G"], 0.0),
            np.maximum(-v["H"], 0.0),
        ]
        return float(max((float(np.max(a, initial=0.0)) for a in parts), default=0.0))
