r"""Stationarity of a point of an MPCC: weak, C, M, S (multipliers) and B (LPEC).

For the standard MPCC of :mod:`mcpkit.mpcc`,

.. math::

    \min_x f(x)\ \text{s.t.}\ g_l \le g(x) \le g_u,\ x_l \le x \le x_u,\
    0 \le G(x) \perp H(x) \ge 0,

and a feasible point :math:`x^*`, let :math:`I_G = \{j: G_j(x^*) = 0\}`,
:math:`I_H = \{j: H_j(x^*) = 0\}` and the *biactive* set :math:`I_{GH} = I_G \cap I_H`.
With the MPCC-Lagrangian (Scheel & Scholtes 2000, eq. (5); Ye 2005, Def. 2.3)

.. math::

    \mathcal{L} = f + \lambda_g^\top g + \lambda_x^\top x - \nu^\top G - \xi^\top H ,

the point is **weakly stationary** when multipliers exist with

.. math::

    \nabla f + J_g^\top \lambda_g + \lambda_x - J_G^\top \nu - J_H^\top \xi = 0,\qquad
    \nu_j = 0\ (j \notin I_G),\quad \xi_j = 0\ (j \notin I_H),

:math:`\lambda_{g,i} \ge 0` at an active upper bound, :math:`\le 0` at an active lower bound, free
for an equality and :math:`0` when inactive (the same for :math:`\lambda_x`), and
:math:`\nu_j, \xi_j` free otherwise. On the biactive set the stronger notions ask in addition

* **C** (Clarke): :math:`\nu_j \xi_j \ge 0`;
* **M** (Mordukhovich): :math:`(\nu_j > 0 \wedge \xi_j > 0)` or :math:`\nu_j \xi_j = 0`;
* **S** (strong): :math:`\nu_j \ge 0` and :math:`\xi_j \ge 0` (the KKT conditions of the NLP).

**B** (Bouligand) stationarity is the primal notion: :math:`d = 0` minimises
:math:`\nabla f^\top d` over the MPCC-linearised cone, i.e. every branch LP of the LPEC

.. math::

    \min_d \nabla f^\top d\ \text{s.t. linearised active } g,\ x\text{-bounds},\
    \nabla G_j d = 0\ (j \in I_G \setminus I_H),\ \nabla H_j d = 0\ (j \in I_H \setminus I_G),\
    0 \le \nabla G_j d \perp \nabla H_j d \ge 0\ (j \in I_{GH}),\ \|d\|_\infty \le 1

has value :math:`0` (this is the linearised B-stationarity; it equals B-stationarity under the
MPCC Abadie condition). The implications used for the reported level are

.. math::

    S \Rightarrow B \Rightarrow M \Rightarrow C \Rightarrow \text{weak},

(:math:`S \Rightarrow B`: the S-multipliers certify every branch LP by LP duality;
:math:`B \Rightarrow M`: Flegel & Kanzow 2005, since the LPEC has affine data), and under
MPCC-LICQ :math:`B \Leftrightarrow S`. The level reported is the strongest one that is verified.

Numerically, a level holds when the smallest max-norm residual
:math:`\|\nabla_x \mathcal{L}\|_\infty` over its multiplier set is :math:`\le \mathrm{tol}\cdot
\max(1, \|\nabla f\|_\infty)` (max-norms as in IPOPT's dual infeasibility; a Euclidean norm
grows with the number of variables and called large optimal-control points non-stationary that
IPOPT's own measure accepts). Every multiplier test is decided in two steps: a cheap candidate
(dense least squares with BVLS for small systems, a sparse regularised least squares for large
ones) is accepted when its residual meets the threshold; otherwise the exact minimum is one sparse
LP solved by HiGHS (:mod:`mcpkit.stationarity.multipliers`). A point of that LP whose recomputed
residual meets the threshold is a witness by itself. So ``not_stationary`` rests on an LP
optimum above the threshold, not on a heuristic, and the cost stays that of a sparse LP at
thousands of variables.
Because the multipliers need not be unique without MPCC-LICQ, the C and M sets (unions of 2
resp. 3 convex pieces per biactive pair) are searched by enumerating the pieces, but only for
the biactive pairs whose multipliers are not determined (those that move along the null space
of the active Jacobian). The LPEC is solved by enumerating its
:math:`2^{|I_{GH}|}` branches with :func:`scipy.optimize.linprog` (HiGHS).

References: H. Scheel, S. Scholtes, *Mathematical programs with complementarity constraints:
stationarity, optimality, and sensitivity*, Math. Oper. Res. 25 (2000); J. J. Ye, *Necessary and
sufficient optimality conditions for MPECs*, J. Math. Anal. Appl. 307 (2005); M. L. Flegel,
C. Kanzow, *On M-stationary points for MPCCs*, J. Math. Anal. Appl. 310 (2005).
"""

from __future__ import annotations

import enum
import itertools
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import casadi as ca
import numpy as np
import scipy.sparse as sps

from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError
from mcpkit.lowering.standard import ToStandardMPCC
from mcpkit.problems.derivatives import CACHE_KEY, SharedDerivatives, row_jacobian
from mcpkit.problems.mpcc import MPCC
from mcpkit.problems.names import casadi_name
from mcpkit.stationarity.lpec import LPEC, LPECSolution, solve_lpec, stack_rows
from mcpkit.stationarity.multipliers import (
    _active,
    _Local,
    _max_abs,
    _Multipliers,
    rows_as_dense,
)

__all__ = [
    "Stationarity",
    "StationarityReport",
    "attach_stationarity",
    "check_b_stationarity",
    "classify_stationarity",
]

_MAX_PATTERNS = 4096
"""Largest number of sign-piece patterns tried in one C or M multiplier search."""

DENSE_JACOBIAN_MAX_VARS = 5000
"""Up to this many variables the Jacobians of ``g``, ``G``, ``H`` at the point are dense arrays
(as in earlier versions, so those checks are unchanged bit for bit); above it they are CSR
matrices and the LPEC's rows stay sparse. Dense, a horizon MPCC of 12,014 variables and about
10,000 rows (the plate design at N = 400) would need about 1 GB for ``J_g`` alone."""

LPEC_ENUMERATE_MAX = 4
"""Up to this many biactive pairs the LPEC's branch LPs are enumerated; above, one MILP."""


class Stationarity(enum.Enum):
    """Stationarity level of an MPCC point (definitions in the module docstring)."""

    NOT_CHECKED = "not checked"
    """Nothing was verified: the check did not fit in the time it had, or its multiplier LP
    could not be solved (the report's message says which). Not a verdict on the point."""
    NOT_FEASIBLE = "not_feasible"
    """The point violates ``g``/``x`` bounds, ``G >= 0``, ``H >= 0`` or ``min(G, H) = 0`` by more
    than ``tol``; no stationarity notion applies."""
    NOT_STATIONARY = "not_stationary"
    """Feasible, but no multipliers make the MPCC-Lagrangian gradient vanish: with
    ``nu_j = 0`` off ``I_G``, ``xi_j = 0`` off ``I_H`` and signed ``lam_g``, ``lam_x``, the
    smallest max-norm residual, an LP optimum (:func:`~mcpkit.stationarity.multipliers._linf_lp`), stays above
    ``tol * max(1, |grad f|_inf)``."""
    WEAK = "weak"
    """Weakly stationary: the MPCC-Lagrangian gradient vanishes for some multipliers with
    ``nu_j = 0`` (j not in I_G), ``xi_j = 0`` (j not in I_H), no sign condition on the biactive
    ``nu_j, xi_j`` (Scheel & Scholtes 2000; Ye 2005)."""
    C = "C"
    """Clarke-stationary: weakly stationary with ``nu_j * xi_j >= 0`` on the biactive set."""
    M = "M"
    """Mordukhovich-stationary: weakly stationary with ``(nu_j > 0 and xi_j > 0)`` or
    ``nu_j * xi_j = 0`` on the biactive set (implies C)."""
    S = "S"
    """Strongly stationary: weakly stationary with ``nu_j >= 0`` and ``xi_j >= 0`` on the biactive
    set; equivalent to the KKT conditions of the MPCC as an NLP (implies B, M, C, weak)."""
    B = "B"
    """B-stationary but not verified S: ``d = 0`` solves every branch LP of the LPEC
    ``min grad f . d`` over the MPCC-linearised cone with ``|d|_inf <= 1`` (implies M). Reported
    only when the S test fails (possible only when MPCC-LICQ fails)."""

    @property
    def strength(self) -> int:
        """Position in the chain NOT_CHECKED < NOT_FEASIBLE < NOT_STATIONARY < WEAK < C < M < B < S."""
        order = ("not checked", "not_feasible", "not_stationary", "weak", "C", "M", "B", "S")
        return order.index(self.value)


@dataclass(frozen=True, eq=False)
class StationarityReport:
    r"""What :func:`classify_stationarity` found at a point.

    The multipliers satisfy (up to :attr:`stationarity_residual`)
    :math:`\nabla f + J_g^\top \lambda_g + \lambda_x - J_G^\top \nu_G - J_H^\top \xi_H = 0` and
    belong to the multiplier set of :attr:`level` (the weak set for ``NOT_STATIONARY`` and
    ``WEAK``; the M set, when found, for ``B``). All are zero at an infeasible point.
    """

    level: Stationarity
    """Strongest verified level (see :class:`Stationarity`)."""
    feasible: bool
    """Constraint violation and complementarity residual are both <= tol."""
    stationarity_residual: float
    r""":math:`\|\nabla_x \mathcal{L}\|_\infty` at the returned multipliers (``inf`` when
    infeasible or not checked)."""
    biactive: np.ndarray
    """Indices ``j`` with ``G_j <= tol`` and ``H_j <= tol``."""
    nu_G: np.ndarray
    """Multipliers of ``G`` (one per pair; zero off ``I_G``)."""
    xi_H: np.ndarray
    """Multipliers of ``H`` (one per pair; zero off ``I_H``)."""
    lam_g: np.ndarray
    """Multipliers of ``g`` (>= 0 at an active upper bound, <= 0 at an active lower bound)."""
    lam_x: np.ndarray
    """Multipliers of the bounds on ``x`` (same sign convention)."""
    b_stationary: bool | None
    """LPEC verdict; ``None`` when infeasible, when the biactive set exceeds
    ``lpec_max_biactive`` or when an LP failed."""
    message: str
    """One-line human-readable summary."""
    constraint_violation: float = 0.0
    """Largest violation of ``g``, ``x`` bounds, ``G >= 0``, ``H >= 0``."""
    complementarity_residual: float = 0.0
    r""":math:`\max_j |\min(G_j, H_j)|`."""
    residual_threshold: float = 0.0
    r"""The residual a multiplier test must meet: ``tol * max(1, |grad f|_inf)`` (max-norms,
    as IPOPT's dual infeasibility: a Euclidean norm would grow with the number of variables)."""
    descent_direction: np.ndarray | None = field(default=None)
    """A branch-LP direction with ``grad f . d < -tol * scale`` when the LPEC check fails."""
    lpec: LPECSolution | None = field(default=None)
    """The LPEC's outcome (method, value, solves, why undecided) when it was solved."""


# --------------------------------------------------------------------------------------------
# input handling and derivatives
# --------------------------------------------------------------------------------------------


def _vector(v: Any, n: int, what: str) -> np.ndarray:
    try:
        arr = np.asarray(v, dtype=float)
    except (TypeError, ValueError) as exc:
        raise MCPInputError(f"classify_stationarity: {what} is not numeric: {exc}") from exc
    if arr.shape != (n,):
        raise ShapeError(f"classify_stationarity: {what} must have shape ({n},), got {arr.shape}")
    if not np.isfinite(arr).all():
        raise NonFiniteError(f"classify_stationarity: {what} contains NaN or inf")
    return arr


def _derivatives(mpcc: MPCC) -> ca.Function:
    """Cached ``(x, p) -> (f, g, G, H, grad f, J_g, J_G, J_H)`` (SX or MX)."""
    key = "stationarity_derivatives"
    if key not in mpcc._funs:
        x = mpcc.x
        outs = [mpcc.f, mpcc.g, mpcc.G, mpcc.H]
        shared = mpcc._derived.get(CACHE_KEY)  # the homotopy's, when it computed them
        if isinstance(shared, SharedDerivatives):
            outs += [shared.grad_f.T, shared.jac_g, row_jacobian(mpcc.G, x), row_jacobian(mpcc.H, x)]
        else:
            outs += [row_jacobian(e, x) for e in outs]
        mpcc._funs[key] = ca.Function(casadi_name(f"{mpcc.name}_stationarity"), [x, mpcc.p], outs)
    return mpcc._funs[key]


def _dense(value: ca.DM) -> np.ndarray:
    """A CasADi matrix as a dense array; a sparse one through SciPy (``DM.full()`` walks every
    entry in Python-facing code)."""
    return np.asarray(value.sparse().toarray() if value.nnz() < value.numel() else value.full(), dtype=float)


def _evaluate(mpcc: MPCC, x: np.ndarray, p: np.ndarray) -> _Local:
    """Values and first derivatives at ``x``; the Jacobians of ``g``, ``G``, ``H`` are CSR
    matrices above :data:`DENSE_JACOBIAN_MAX_VARS` variables, dense arrays below."""
    nx = x.size
    raw = _derivatives(mpcc)(x, p)
    out = [_dense(o) for o in raw[:5]]
    if nx > DENSE_JACOBIAN_MAX_VARS:
        jac = [sps.csr_matrix(o.sparse(), dtype=float) for o in raw[5:]]
    else:
        jac = [_dense(o).reshape(-1, nx) for o in raw[5:]]
    loc = _Local(
        f=float(out[0].reshape(-1)[0]),
        g=out[1].reshape(-1),
        G=out[2].reshape(-1),
        H=out[3].reshape(-1),
        df=out[4].reshape(nx),
        Jg=jac[0],
        JG=jac[1],
        JH=jac[2],
    )
    for name in ("g", "G", "H", "df", "Jg", "JG", "JH"):
        value = getattr(loc, name)
        if not np.isfinite(value.data if sps.issparse(value) else value).all():
            raise NonFiniteError(f"classify_stationarity: {name} is not finite at the given point")
    if not np.isfinite(loc.f):
        raise NonFiniteError("classify_stationarity: f is not finite at the given point")
    return loc


def _suggest_c(nu: float, xi: float) -> str:
    return "nonneg" if nu + xi >= 0 else "nonpos"


def _suggest_m(nu: float, xi: float, eps: float) -> str:
    if min(nu, xi) >= -eps:
        return "nonneg"
    return "nu0" if abs(nu) <= abs(xi) else "xi0"


def _search(
    mult: _Multipliers,
    u_weak: np.ndarray,
    pieces: Sequence[str],
    suggest: Any,
    threshold: float,
    deadline: float | None = None,
) -> tuple[np.ndarray | None, float, bool]:
    """Search the union of convex pieces for multipliers with residual <= threshold.

    Determined biactive pairs get the single piece suggested by the weak multipliers; the
    undetermined ones are enumerated (suggested pattern first, at most ``_MAX_PATTERNS``; none
    after ``deadline``). Returns ``(u or None, best residual, exhaustive)``.
    """
    fixed = {int(j): suggest(*mult.pair(u_weak, int(j))) for j in mult.biactive}
    late = deadline is not None and time.perf_counter() >= deadline
    und = None if late else mult.undetermined()
    free = [] if und is None else [int(j) for j in und]
    first = tuple(fixed[j] for j in free)
    # without the null space only the suggested pattern is tried: never called exhaustive
    n_total = len(pieces) ** len(free) if und is not None else _MAX_PATTERNS + 1

    def patterns() -> Iterator[tuple[str, ...]]:
        yield first
        for pat in itertools.product(pieces, repeat=len(free)):
            if pat != first:
                yield pat

    best = np.inf
    for count, pat in enumerate(patterns()):
        if count >= _MAX_PATTERNS or (und is None and count >= 1):
            return None, best, False
        if count >= 1 and deadline is not None and time.perf_counter() >= deadline:
            return None, best, False
        trial = dict(fixed)
        trial.update(zip(free, pat, strict=True))
        u, r = mult.solve(trial, threshold, deadline)
        best = min(best, r)
        if r <= threshold:
            return u, r, True
    return None, best, n_total <= _MAX_PATTERNS


# --------------------------------------------------------------------------------------------
# the LPEC
# --------------------------------------------------------------------------------------------


def build_lpec(mpcc: MPCC, loc: _Local, x: np.ndarray, tol: float, radius: float = 1.0) -> LPEC:
    """The :class:`~mcpkit.stationarity.lpec.LPEC` at ``x``, activity tolerance ``tol``, box ``radius``."""
    nx = x.size
    gi, _, _, g_lo, g_hi = _active(loc.g, mpcc.lbg, mpcc.ubg, tol)
    _, _, _, x_lo, x_hi = _active(x, mpcc.lbx, mpcc.ubx, tol)
    IG, IH = loc.G <= tol, loc.H <= tol
    bi = np.flatnonzero(IG & IH)
    # equality rows: active two-sided rows of g, then G_j = 0 and H_j = 0 off the biactive set;
    # inequality rows: rows of g at their upper bound, then those at their lower bound (negated)
    both, up, dn = g_lo[gi] & g_hi[gi], g_hi[gi] & ~g_lo[gi], g_lo[gi] & ~g_hi[gi]
    eq = [loc.Jg[gi[both]], loc.JG[np.flatnonzero(IG & ~IH)], loc.JH[np.flatnonzero(IH & ~IG)]]
    ub = [loc.Jg[gi[up]], -loc.Jg[gi[dn]]]
    sparse = sps.issparse(loc.Jg)  # large problems: the rows stay sparse
    A_eq, A_ub = stack_rows(eq, nx, sparse), stack_rows(ub, nx, sparse)
    return LPEC(
        c=loc.df,
        A_eq=A_eq,
        A_ub=A_ub,
        JG=rows_as_dense(loc.JG, bi),
        JH=rows_as_dense(loc.JH, bi),
        lo=np.where(x_lo, 0.0, -radius),
        hi=np.where(x_hi, 0.0, radius),
    )


def _lpec(
    mpcc: MPCC,
    loc: _Local,
    x: np.ndarray,
    tol: float,
    threshold: float,
    order_hint: np.ndarray | None = None,
    *,
    enumerate_max: int = LPEC_ENUMERATE_MAX,
    time_limit: float | None = None,
) -> LPECSolution:
    """Decide the LPEC at ``x``: enumerate few biactive pairs, else the MILP (:mod:`~.lpec`)."""
    return solve_lpec(
        build_lpec(mpcc, loc, x, tol), threshold, enumerate_max=enumerate_max, hint=order_hint,
        time_limit=time_limit,
    )  # fmt: skip


def check_b_stationarity(
    mpcc: MPCC,
    x: np.ndarray,
    p: np.ndarray | None = None,
    tol: float = 1e-6,
    max_biactive: int = 12,
) -> tuple[bool | None, np.ndarray | None]:
    r"""Linearised B-stationarity by solving the LPEC branch by branch.

    :math:`x` is B-stationary iff for every partition of the biactive set into
    :math:`P_1 \cup P_2` the LP :math:`\min \nabla f^\top d` s.t. the linearised active
    constraints, :math:`\nabla G_j d = 0 \le \nabla H_j d` (:math:`j \in P_1`),
    :math:`\nabla G_j d \ge 0 = \nabla H_j d` (:math:`j \in P_2`), :math:`\|d\|_\infty \le 1`
    has value :math:`\ge -\mathrm{tol}\cdot\max(1, \|\nabla f\|_2)`. The point must be feasible.

    Returns
    -------
    (verdict, d)
        ``verdict`` is ``None`` when the biactive set has more than ``max_biactive`` pairs or an
        LP failed; ``d`` is a descent direction when ``verdict`` is ``False``.
    """
    mpcc, x, p, tol = _validate(mpcc, x, p, tol, max_biactive, None)
    loc = _evaluate(mpcc, x, p)
    comp = float(np.max(np.abs(np.minimum(loc.G, loc.H)), initial=0.0))
    if _violation(mpcc, loc, x) > tol or comp > tol:
        raise MCPInputError("check_b_stationarity: the point is not feasible within tol")
    n_bi = int(np.sum((loc.G <= tol) & (loc.H <= tol)))
    if n_bi > max_biactive:
        return None, None
    sol = _lpec(mpcc, loc, x, tol, tol * max(1.0, float(np.linalg.norm(loc.df))))
    return sol.verdict, sol.d


# --------------------------------------------------------------------------------------------
# the classifier
# --------------------------------------------------------------------------------------------


def _positive(v: Any, what: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)):
        raise MCPInputError(f"classify_stationarity: {what} must be a number, got {v!r}")
    if not np.isfinite(v) or v <= 0:
        raise MCPInputError(f"classify_stationarity: {what} must be finite and > 0, got {v!r}")
    return float(v)


def _validate(
    mpcc: Any,
    x: Any,
    p: Any,
    tol: Any,
    max_biactive: Any,
    lowered: MPCC | None,
    lift: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
) -> tuple[MPCC, np.ndarray, np.ndarray, float]:
    if not isinstance(mpcc, MPCC):
        raise MCPInputError(f"classify_stationarity: expected an mcpkit MPCC, got {type(mpcc).__name__}")
    tol = _positive(tol, "tol")
    is_int = isinstance(max_biactive, (int, np.integer)) and not isinstance(max_biactive, bool)
    if not is_int or max_biactive < 0:
        raise MCPInputError(
            f"classify_stationarity: lpec_max_biactive must be an int >= 0, got {max_biactive!r}"
        )
    xv = _vector(x, int(mpcc.x.numel()), "x")
    pv = mpcc.p0 if p is None else _vector(p, int(mpcc.p.numel()), "p")
    if lowered is not None and lift is not None:  # a lowering of the caller's, with its lift
        mpcc, xv = lowered, lift(xv, np.asarray(pv, dtype=float))
    elif not mpcc.is_standard():
        std = ToStandardMPCC().apply(mpcc)[0] if lowered is None else lowered
        mpcc, xv = std, ToStandardMPCC.lift(mpcc, xv, pv)
    return mpcc, xv, np.asarray(pv, dtype=float), float(tol)


def _violation(mpcc: MPCC, loc: _Local, x: np.ndarray) -> float:
    parts = [
        mpcc.lbg - loc.g, loc.g - mpcc.ubg, mpcc.lbx - x, x - mpcc.ubx, -loc.G, -loc.H,
    ]  # fmt: skip
    return float(max((np.max(a, initial=0.0) for a in parts), default=0.0))


def classify_stationarity(
    mpcc: MPCC,
    x: np.ndarray,
    p: np.ndarray | None = None,
    tol: float = 1e-6,
    lpec_max_biactive: int = 12,
    *,
    residual_tol: float | None = None,
    lowered: MPCC | None = None,
    lpec_time_limit: float | None = None,
    deadline: float | None = None,
    lift: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
) -> StationarityReport:
    r"""Classify :math:`x` as not feasible, not stationary, weak, C, M, B or S-stationary.

    Definitions are in the module docstring (Scheel & Scholtes 2000; Ye 2005). Steps:

    1. feasibility: constraint violation :math:`\le` ``tol`` and
       :math:`\max_j|\min(G_j, H_j)| \le` ``tol``;
    2. active sets with tolerance: :math:`I_G = \{G_j \le \mathrm{tol}\}`,
       :math:`I_H = \{H_j \le \mathrm{tol}\}`, active ``g`` rows and ``x`` bounds within ``tol``;
    3. weak: the smallest max-norm MPCC-Lagrangian gradient over the multipliers (signs only on
       :math:`\lambda_g, \lambda_x`; a cheap least-squares candidate, else the exact LP of
       :func:`~mcpkit.stationarity.multipliers._linf_lp`); stationary when it is
       :math:`\le \mathrm{tol}\cdot\max(1, \|\nabla f\|_\infty)`;
    4. S: the same with :math:`\nu_j, \xi_j \ge 0` on the biactive set (tested before 3 when
       there are biactive pairs: S multipliers are weak ones, so an S point needs one LP);
    5. LPEC (B) when not S and :math:`|I_{GH}| \le` ``lpec_max_biactive`` (S implies B);
    6. M and C: search the unions of sign pieces (see :func:`_search`).

    Parameters
    ----------
    mpcc
        An :class:`~mcpkit.mpcc.MPCC` (SX or MX). One with general pair bounds is lowered with
        :class:`~mcpkit.lowering.standard.ToStandardMPCC` (or ``lowered`` is used, the output of
        that lowering a solver already made) and ``x`` is lifted by its slacks; indices and
        multipliers in the report then refer to the lowered problem.
    x, p
        The point and the parameter values (``p=None``: ``mpcc.p0``).
    tol
        Feasibility, activity and residual tolerance (> 0).
    lpec_max_biactive
        Largest biactive set for which the LPEC is solved: its :math:`2^{|I_{GH}|}` branch LPs
        are enumerated up to :data:`LPEC_ENUMERATE_MAX` pairs, above that it is one MILP with
        exact big-M bounds (:mod:`mcpkit.stationarity.lpec`).
    residual_tol
        Tolerance of the multiplier residual and of the LPEC values (default: ``tol``). Points
        returned by relaxation homotopies are feasible to ``tol`` but often stationary only to a
        looser accuracy; pass e.g. ``residual_tol=1e-4`` to judge them.
    lowered
        The standard form of a general ``mpcc``, when it was already built (so it is not built
        twice); with ``lift``, any equivalent standard problem (the solver's lifted form).
    lift
        ``(x, p) -> `` the point ``x`` of ``mpcc`` in ``lowered``'s variables (default: the
        slacks of :class:`~mcpkit.lowering.standard.ToStandardMPCC` appended).
    lpec_time_limit
        Wall-clock limit of the LPEC's MILP (``None``: none); when it is hit the LPEC is
        undecided (``b_stationary=None``).
    deadline
        ``time.perf_counter()`` value by which the check must end (``None``: none). The LPs get
        what is left; a multiplier test that cannot be decided in it makes the level
        :attr:`Stationarity.NOT_CHECKED` (or the strongest level verified before it), with the
        reason in the message.

    Raises
    ------
    ShapeError, NonFiniteError, MCPInputError
        Wrong shapes, NaN/inf in ``x`` or ``p`` (or in the functions at ``x``), bad ``tol``.
    """
    mpcc, x, p, tol = _validate(mpcc, x, p, tol, lpec_max_biactive, lowered, lift)
    rtol = tol if residual_tol is None else _positive(residual_tol, "residual_tol")
    loc = _evaluate(mpcc, x, p)
    viol = _violation(mpcc, loc, x)
    comp = float(np.max(np.abs(np.minimum(loc.G, loc.H)), initial=0.0))
    biactive = np.flatnonzero((loc.G <= tol) & (loc.H <= tol))
    threshold = rtol * max(1.0, _max_abs(loc.df))
    # the LPEC's value grad f . d over the unit box keeps its Euclidean scale
    lpec_threshold = rtol * max(1.0, float(np.linalg.norm(loc.df)))
    zeros = {
        "lam_g": np.zeros(loc.g.size), "lam_x": np.zeros(x.size),
        "nu_G": np.zeros(loc.G.size), "xi_H": np.zeros(loc.G.size),
    }  # fmt: skip
    common = {
        "biactive": biactive, "constraint_violation": viol, "complementarity_residual": comp,
        "residual_threshold": threshold,
    }  # fmt: skip
    if viol > tol or comp > tol:
        return StationarityReport(
            level=Stationarity.NOT_FEASIBLE, feasible=False, stationarity_residual=np.inf,
            b_stationary=None,
            message=f"not feasible: constraint violation {viol:.2e}, complementarity {comp:.2e} "
            f"(tol {tol:.0e})",
            **zeros, **common,
        )  # fmt: skip

    check = _Check(mpcc, loc, x, tol, biactive, (threshold, lpec_threshold), common, deadline)
    return check.run(lpec_max_biactive, lpec_time_limit)


class _Check:
    """The multiplier tests of :func:`classify_stationarity` at a feasible point (steps 3-6):
    their shared data, the notes they add to the message, the LPEC solved (if any)."""

    def __init__(
        self,
        mpcc: MPCC,
        loc: _Local,
        x: np.ndarray,
        tol: float,
        biactive: np.ndarray,
        thresholds: tuple[float, float],
        common: dict[str, Any],
        deadline: float | None,
    ) -> None:
        self.mpcc, self.loc, self.x, self.tol = mpcc, loc, x, tol
        self.biactive = biactive
        self.threshold, self.lpec_threshold = thresholds
        self.common = common
        self.deadline = deadline
        self.mult = _Multipliers(mpcc, loc, x, tol)
        self.notes: list[str] = []
        self.lpec_out: list[LPECSolution] = []

    def report(self, level: Stationarity, u: np.ndarray, r: float, b: bool | None, d: Any = None) -> Any:
        """The report at ``level`` with multipliers ``u``, residual ``r``, LPEC verdict ``b``
        and its descent direction ``d``."""
        msg = (
            f"{level.value}: residual {r:.2e} (threshold {self.threshold:.1e}), "
            f"{self.biactive.size} biactive pair(s), B-stationary={b}"
        )
        return StationarityReport(
            level=level, feasible=True, stationarity_residual=r, b_stationary=b,
            message="; ".join([msg, *self.notes, *self.mult.undecided]), descent_direction=d,
            **self.mult.split(u), **self.common, lpec=self.lpec_out[-1] if self.lpec_out else None,
        )  # fmt: skip

    def lpec(
        self, max_biactive: int, time_limit: float | None, hint: np.ndarray
    ) -> tuple[bool | None, np.ndarray | None]:
        """The LPEC's verdict (B-stationary or not; ``None``: not solved or undecided) and its
        descent direction, within ``time_limit`` and the deadline; ``hint`` the weak
        multipliers' branch of each biactive pair."""
        if self.biactive.size > max_biactive:
            self.notes.append(f"LPEC skipped: {self.biactive.size} biactive pairs > {max_biactive}")
            return None, None
        limit = time_limit
        if self.deadline is not None:
            left = self.deadline - time.perf_counter()
            if left <= 0:
                self.notes.append("LPEC skipped: time limit")
                return None, None
            limit = left if limit is None else min(limit, left)
        sol = _lpec(self.mpcc, self.loc, self.x, self.tol, self.lpec_threshold, hint, time_limit=limit)
        self.lpec_out.append(sol)
        what = "branch LP(s)" if sol.method == "enumerate" else "MILP"
        self.notes.append(
            f"LPEC: {sol.n_solves} {what}" + (f", undecided ({sol.reason})" if sol.verdict is None else "")
        )
        return sol.verdict, sol.d

    def run(self, lpec_max_biactive: int, lpec_time_limit: float | None) -> StationarityReport:
        """Steps 3-6 of :func:`classify_stationarity`: S (with biactive pairs), weak, then the
        LPEC and the M and C searches."""
        mult, biactive, threshold, deadline = self.mult, self.biactive, self.threshold, self.deadline
        if deadline is not None and time.perf_counter() >= deadline:
            self.notes.append("not checked: time limit reached before the multiplier test")
            return self.report(Stationarity.NOT_CHECKED, np.zeros(mult.A.shape[1]), np.inf, None)
        if biactive.size:
            # S first: its multipliers are weak ones too, so an S point (the common answer for a
            # converged homotopy) needs one multiplier LP instead of two
            s_pieces = {int(j): "nonneg" for j in biactive}
            u_s, r_s = mult.solve(s_pieces, threshold=threshold, deadline=deadline)
            if r_s <= threshold:
                return self.report(Stationarity.S, u_s, r_s, True)
        u_weak, r_weak = mult.solve(threshold=threshold, deadline=deadline)
        pairs = [mult.pair(u_weak, int(j)) for j in biactive]
        hint = np.array([int(a < b) for a, b in pairs], dtype=int)

        def lpec() -> tuple[bool | None, np.ndarray | None]:
            return self.lpec(lpec_max_biactive, lpec_time_limit, hint)

        if not np.isfinite(r_weak):  # the weak test itself was not decided: only the LPEC may speak
            b, d = lpec()
            return self.report(Stationarity.B if b else Stationarity.NOT_CHECKED, u_weak, r_weak, b, d)
        if r_weak > threshold:
            b, d = lpec()
            if b:
                self.notes.append("inconsistent: LPEC passed but no weak multipliers (tolerance effects)")
            return self.report(Stationarity.NOT_STATIONARY, u_weak, r_weak, b, d)
        if biactive.size == 0:
            self.notes.append("no biactive pairs: weak = S")
            return self.report(Stationarity.S, u_weak, r_weak, True)
        b, d = lpec()
        return self.signs(u_weak, r_weak, b, d)

    def signs(self, u_weak: np.ndarray, r_weak: float, b: bool | None, d: Any) -> StationarityReport:
        """Past weak with biactive pairs and the LPEC's verdict ``b``: B, else M, C or weak by
        the sign searches (:func:`_search`)."""
        mult, threshold, deadline, notes = self.mult, self.threshold, self.deadline, self.notes
        eps = max(threshold, self.tol)
        u_m, r_m, full_m = _search(
            mult, u_weak, ("nonneg", "nu0", "xi0"), lambda a, c: _suggest_m(a, c, eps), threshold, deadline
        )
        if u_m is None and not full_m:
            notes.append(f"M search not exhaustive ({_MAX_PATTERNS} patterns at most; 1 without null space)")
        if b:
            if u_m is None:
                notes.append("M multipliers not found although B implies M (tolerance effects)")
                return self.report(Stationarity.B, u_weak, r_weak, b)
            return self.report(Stationarity.B, u_m, r_m, b)
        if u_m is not None:
            return self.report(Stationarity.M, u_m, r_m, b, d)
        u_c, r_c, full_c = _search(mult, u_weak, ("nonneg", "nonpos"), _suggest_c, threshold, deadline)
        if u_c is not None:
            return self.report(Stationarity.C, u_c, r_c, b, d)
        if not full_c:
            notes.append(f"C search not exhaustive ({_MAX_PATTERNS} patterns at most; 1 without null space)")
        return self.report(Stationarity.WEAK, u_weak, r_weak, b, d)


def attach_stationarity(
    result: Any,
    mpcc: MPCC,
    p: np.ndarray | None = None,
    tol: float | None = None,
    lpec_max_biactive: int = 12,
    *,
    residual_tol: float | None = None,
    lowered: MPCC | None = None,
    deadline: float | None = None,
    lift: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
) -> Any:
    """Classify ``result.x`` and store it on the result; returns ``result``.

    Sets ``result.stationarity`` to the level's value (e.g. ``"S"``) and
    ``result.extra["stationarity_report"]`` to the :class:`StationarityReport`. ``tol`` defaults
    to ``result.tol``; ``residual_tol``, ``lowered`` and ``deadline`` as in
    :func:`classify_stationarity`. A
    result without a finite point is recorded as ``not_feasible`` without classification.
    ``mpcc`` must be the problem whose variables ``result.x`` holds (the problem the user posed).
    """
    tol = float(result.tol) if tol is None else tol
    z = np.asarray(result.x, dtype=float)
    if z.size == 0 or not np.isfinite(z).all():
        n_pairs = int(mpcc.G.numel())
        rep = StationarityReport(
            level=Stationarity.NOT_FEASIBLE, feasible=False, stationarity_residual=np.inf,
            biactive=np.zeros(0, dtype=int), nu_G=np.zeros(n_pairs), xi_H=np.zeros(n_pairs),
            lam_g=np.zeros(int(mpcc.g.numel())), lam_x=np.zeros(z.size), b_stationary=None,
            message="no finite point to classify", constraint_violation=np.inf,
            complementarity_residual=np.inf,
        )  # fmt: skip
    else:
        rep = classify_stationarity(
            mpcc, z, p, tol, lpec_max_biactive, residual_tol=residual_tol, lowered=lowered,
            deadline=deadline, lift=lift,
        )  # fmt: skip
    result.stationarity = rep.level.value
    result.extra["stationarity_report"] = rep
    return result
