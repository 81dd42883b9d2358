r"""Residuals of an MCP point (and an MPCC point), always measured on the original pairs :math:`(z_i, F_i)`.

For bounds :math:`l \le u` and a point :math:`z` with function value :math:`F = F(z)`:

* natural residual :math:`r_{\mathrm{nat}} = \max_i |\rho_i|` with the *min-map*

  .. math::

      \rho_i = \operatorname{mid}(z_i - l_i,\ z_i - u_i,\ F_i)
             = \max\bigl(z_i - u_i,\ \min(z_i - l_i,\ F_i)\bigr),

  the median of the three numbers (:math:`z_i - u_i \le z_i - l_i`). It equals
  :math:`z_i - \Pi_{[l_i,u_i]}(z_i - F_i)` exactly in real arithmetic, so it is zero exactly at
  solutions and is the residual PATH reports; per bound type it reads :math:`F_i` (free),
  :math:`\min(z_i - l_i, F_i)` (lower bound only), :math:`\max(z_i - u_i, F_i)` (upper bound
  only), the median of three (box), :math:`z_i - l_i` (fixed, :math:`l_i = u_i`). It is
  *computed* in that form, never as :math:`z - \Pi(z - F)`: :math:`F_i` enters unchanged, each
  :math:`z_i - l_i`, :math:`z_i - u_i` is one subtraction with relative error at most the unit
  roundoff (exact when :math:`z_i` is near the bound), and min/max are exact, so no digit of
  :math:`F_i` is lost however large :math:`|z_i|` is. The projected form subtracts two nearly
  equal numbers when :math:`|z_i| \gg |F_i|` (:math:`z_i = 3\cdot 10^{17}`, :math:`F_i = -1`,
  :math:`l_i = 0` gives 0 instead of 1);
* complementarity violation
  :math:`r_{\mathrm{comp}} = \max_i \max\bigl(\min(z_i - l_i, F_i^+),\ \min(u_i - z_i, F_i^-)\bigr)`
  with :math:`F^+ = \max(F, 0)`, :math:`F^- = \max(-F, 0)` and :math:`z_i - l_i`,
  :math:`u_i - z_i` clipped at 0 (an infinite bound makes the min equal to :math:`F^\pm`: a
  sign that nothing can balance). For :math:`l \le z \le u` it equals :math:`r_{\mathrm{nat}}`
  (the two are the same number computed two ways; both are reported and both are judged);
* bound violation :math:`r_{\mathrm{bnd}} = \max_i \max(l_i - z_i,\ z_i - u_i,\ 0)`.

All three are absolute: in the units of :math:`F` (first two) and of :math:`z` (the
:math:`z - l` entries and the third), with no rescaling by the size of :math:`F` or :math:`z`
at the point (a scale taken at the point hides exactly the failures above: at
:math:`z \approx 3\cdot 10^{17}` every :math:`F_i` is tiny relative to :math:`|M||z|`). NaN in
any entry counts as an infinite residual, and so does a non-finite :math:`F_i` (an overflow) in
the first two.

Each pair is labelled with a :class:`PairState`.

An MPCC point is judged the same way on its pairs :math:`H_l \le H \perp G`
(:func:`judged_residuals`): the complementarity residual is the natural residual of the pairs
with :math:`H` in the variable's role, beside the constraint violation.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

import numpy as np

if TYPE_CHECKING:
    from mcpkit.problems.mpcc import MPCC


class PairState(enum.Enum):
    """Where a pair :math:`(z_i, F_i)` sits at the reported point."""

    AT_LOWER = "at_lower"
    """:math:`z_i = l_i` and :math:`F_i > 0` (strictly complementary, lower bound active)."""
    BETWEEN = "between"
    """:math:`l_i < z_i < u_i` and :math:`F_i = 0` (includes free variables of equations)."""
    AT_UPPER = "at_upper"
    """:math:`z_i = u_i` and :math:`F_i < 0` (strictly complementary, upper bound active)."""
    DEGENERATE = "degenerate"
    """Biactive: :math:`z_i` at a bound and :math:`F_i = 0` (no strict complementarity)."""
    FIXED = "fixed"
    """:math:`l_i = u_i`: the variable is fixed and :math:`F_i` is unrestricted."""
    VIOLATED = "violated"
    """The pair does not satisfy its complementarity condition within the tolerance."""


@dataclass(frozen=True)
class Residuals:
    """Residual measures of a point; see the module docstring for the definitions."""

    natural: float
    """:math:`\\max_i |\\operatorname{mid}(z_i - l_i, z_i - u_i, F_i)|` (the natural residual
    :math:`\\|z - \\Pi_{[l,u]}(z - F)\\|_\\infty`, computed without cancellation)."""
    complementarity: float
    """Largest per-pair complementarity violation."""
    bounds: float
    """Largest bound violation :math:`\\max(l - z, z - u, 0)`."""
    per_pair: np.ndarray
    """Per-pair natural residual :math:`|\\operatorname{mid}(z_i - l_i, z_i - u_i, F_i)|`."""


def natural_residual_vector(z: np.ndarray, F: np.ndarray, lb: np.ndarray, ub: np.ndarray) -> np.ndarray:
    r"""Per-pair min-map :math:`|\max(z_i - u_i, \min(z_i - l_i, F_i))|` (module docstring).

    Equal to :math:`|z_i - \Pi_{[l_i,u_i]}(z_i - F_i)|` in real arithmetic, computed without the
    cancellation of that form; an infinite bound makes its entry :math:`\pm\infty`, which the
    min/max then drop. A NaN anywhere in a pair or a non-finite :math:`F_i` (an overflow, which
    no tolerance can judge) gives :math:`+\infty`.
    """
    z = np.asarray(z, dtype=float)
    F = np.asarray(F, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        r = np.abs(np.maximum(z - ub, np.minimum(z - lb, F)))
    return np.where(np.isnan(r) | ~np.isfinite(F), np.inf, r)


def certified_residual(
    z: np.ndarray, F: np.ndarray, lb: np.ndarray, ub: np.ndarray, err: np.ndarray | float
) -> float:
    r"""An upper bound of the natural residual that survives the rounding of :math:`F`:
    :math:`\max_i \max_{\pm} |\operatorname{mid}(z_i - l_i, z_i - u_i, F_i \pm e_i)|`.

    ``err`` is :math:`e_i \ge |\mathrm{fl}(F_i) - F_i|`, a bound of the evaluation error of each
    :math:`F_i` (:meth:`~mcpkit.problems.mcp.AffineMap.rounding_floor` for an affine :math:`F`).
    The min-map is nondecreasing in :math:`F_i`, so over :math:`[F_i - e_i, F_i + e_i]` its absolute
    value is largest at an end: the bound is exact for the data, and a pair whose bound is active
    with :math:`F_i` clearly of the right sign (:math:`F_i > e_i` at a lower bound) keeps its
    residual whatever :math:`e_i`. The subtractions :math:`z_i - l_i`, :math:`z_i - u_i` carry a
    relative error of at most the unit roundoff and are not widened. NaN counts as infinite.
    """
    z = np.asarray(z, dtype=float)
    F = np.asarray(F, dtype=float)
    e = np.asarray(err, dtype=float)
    lo = natural_residual_vector(z, F - e, lb, ub)
    hi = natural_residual_vector(z, F + e, lb, ub)
    worst = np.maximum(lo, hi)
    return float(np.where(np.isnan(worst), np.inf, worst).max(initial=0.0))


SMALL = 32
"""Largest ``n`` measured element by element in Python floats (:func:`compute_residuals`)."""


def compute_residuals(z: np.ndarray, F: np.ndarray, lb: np.ndarray, ub: np.ndarray) -> Residuals:
    """All residual measures of the point ``z`` with ``F = F(z)`` (module docstring).

    NaN counts as infinite, and so does a non-finite :math:`F_i` in the two measures on
    :math:`F`. Up to :data:`SMALL` pairs with finite ``z`` and ``F`` the same formulas are
    evaluated element by element on Python floats (a dozen NumPy calls cost more than the
    arithmetic there); both are IEEE double operations in the same order, so the numbers are
    identical (tested).
    """
    z = np.asarray(z, dtype=float)
    F = np.asarray(F, dtype=float)
    if _small(z, F, lb, ub):
        small = _small_residuals(z, F, lb, ub)
        if small is not None:
            return small
    return _vector_residuals(z, F, lb, ub)


def _small(z: np.ndarray, F: np.ndarray, lb: np.ndarray, ub: np.ndarray) -> bool:
    """Whether the element-by-element path applies: at most :data:`SMALL` entries, four alike 1-D arrays."""
    return (
        z.ndim == 1
        and z.size <= SMALL
        and isinstance(F, np.ndarray)
        and isinstance(lb, np.ndarray)
        and isinstance(ub, np.ndarray)
        and z.shape == F.shape == lb.shape == ub.shape
    )


def _vector_residuals(z: np.ndarray, F: np.ndarray, lb: np.ndarray, ub: np.ndarray) -> Residuals:
    """:func:`compute_residuals` in NumPy vector operations (any size, NaN and infinities)."""
    per = natural_residual_vector(z, F, lb, ub)
    with np.errstate(invalid="ignore"):
        dl = np.maximum(z - lb, 0.0)
        du = np.maximum(ub - z, 0.0)
        comp = np.maximum(np.minimum(dl, np.maximum(F, 0.0)), np.minimum(du, np.maximum(-F, 0.0)))
        bnd = np.maximum(np.maximum(lb - z, z - ub), 0.0)
    comp = np.where(np.isnan(comp) | ~np.isfinite(F), np.inf, comp)
    bnd = np.where(np.isnan(bnd), np.inf, bnd)
    return Residuals(
        natural=float(per.max(initial=0.0)),
        complementarity=float(comp.max(initial=0.0)),
        bounds=float(bnd.max(initial=0.0)),
        per_pair=per,
    )


def _small_residuals(z: np.ndarray, F: np.ndarray, lb: np.ndarray, ub: np.ndarray) -> Residuals | None:
    """:func:`compute_residuals` on Python floats, or ``None`` when an entry of ``z``/``F`` is not finite.

    With :math:`z_i, F_i` finite no NaN can arise (an infinite bound only makes
    :math:`z_i - l_i` or :math:`z_i - u_i` infinite), so ``min``/``max`` agree with NumPy's;
    :math:`l_i - z_i = -(z_i - l_i)` exactly in IEEE arithmetic; comparisons stand for
    ``min``/``max`` (calls cost more than the arithmetic). ``+ 0.0`` turns a ``-0.0`` into
    ``0.0``.
    """
    per: list[float] = []
    comp = bnd = 0.0
    for zi, Fi, li, ui in zip(z.tolist(), F.tolist(), lb.tolist(), ub.tolist(), strict=True):
        if zi - zi != 0.0 or Fi - Fi != 0.0:  # NaN or infinite
            return None
        dl = zi - li
        du = zi - ui
        m = dl if dl < Fi else Fi
        per.append(abs(du if du > m else m))
        a = dl if dl > 0.0 else 0.0  # max(z - l, 0)
        f = Fi if Fi > 0.0 else 0.0
        c = a if a < f else f
        a = -du if du < 0.0 else 0.0  # max(u - z, 0)
        f = -Fi if Fi < 0.0 else 0.0
        c2 = a if a < f else f
        if c2 > c:
            c = c2
        if c > comp:
            comp = c
        if -dl > bnd:
            bnd = -dl
        if du > bnd:
            bnd = du
    return Residuals(
        natural=max(per, default=0.0) + 0.0,
        complementarity=comp + 0.0,
        bounds=bnd + 0.0,
        per_pair=np.array(per, dtype=float),
    )


def natural_residual(z: np.ndarray, F: np.ndarray, lb: np.ndarray, ub: np.ndarray) -> float:
    r""":math:`r_{\mathrm{nat}}` alone: ``compute_residuals(z, F, lb, ub).natural``, the same number."""
    z = np.asarray(z, dtype=float)
    F = np.asarray(F, dtype=float)
    if _small(z, F, lb, ub):
        r = 0.0
        for zi, Fi, li, ui in zip(z.tolist(), F.tolist(), lb.tolist(), ub.tolist(), strict=True):
            if zi - zi != 0.0 or Fi - Fi != 0.0:  # NaN or infinite
                return math.inf
            dl = zi - li
            du = zi - ui
            m = dl if dl < Fi else Fi
            m = abs(du if du > m else m)
            if m > r:
                r = m
        return r
    return float(natural_residual_vector(z, F, lb, ub).max(initial=0.0))


def finite_in_box(z: np.ndarray, lb: np.ndarray, ub: np.ndarray) -> bool:
    r"""Every :math:`z_i` finite and :math:`l_i \le z_i \le u_i`."""
    if _small(z, z, lb, ub):
        for zi, li, ui in zip(z.tolist(), lb.tolist(), ub.tolist(), strict=True):
            if zi - zi != 0.0 or not li <= zi <= ui:
                return False
        return True
    return bool(np.isfinite(z).all() and (z >= lb).all() and (z <= ub).all())


def classify_pairs(
    z: np.ndarray,
    F: np.ndarray,
    lb: np.ndarray,
    ub: np.ndarray,
    tol: float,
    per_pair: np.ndarray | None = None,
) -> PairStates:
    r"""Label each pair with a :class:`PairState` (computed when first read, :class:`PairStates`).

    A bound counts as active when :math:`|z_i - l_i| \le \tau` and :math:`F_i` counts as zero
    when :math:`|F_i| \le \tau`, with :math:`\tau = 10\,\mathrm{tol}`. A pair whose natural
    residual exceeds ``tol`` is :attr:`PairState.VIOLATED`. The labels are tried in the order
    fixed, violated, degenerate, at lower, at upper, between; the first that holds is taken.
    ``per_pair`` is :func:`natural_residual_vector` of the point when already computed.
    """
    return PairStates(z, F, lb, ub, tol, per_pair)


def _labels(
    z: np.ndarray, F: np.ndarray, lb: np.ndarray, ub: np.ndarray, tol: float, per_pair: np.ndarray | None
) -> list[PairState]:
    act = 10.0 * tol
    per = natural_residual_vector(z, F, lb, ub) if per_pair is None else per_pair
    with np.errstate(invalid="ignore"):
        at_l = np.abs(z - lb) <= act
        at_u = np.abs(ub - z) <= act
        f0 = np.abs(F) <= act
        codes = np.ones(z.shape, dtype=np.int8)  # BETWEEN; then the labels in reverse priority
        codes[at_u & (F < 0)] = 2
        codes[at_l & (F > 0)] = 0
        codes[(at_l | at_u) & f0] = 3
        codes[~(per <= tol)] = 5
        codes[lb == ub] = 4
    return [_ORDER[c] for c in codes.tolist()]


class PairStates(Sequence[PairState]):
    """The pair labels of :func:`classify_pairs`, computed on first access.

    A result carries them for every solve, but a time-stepping loop rarely reads them; the
    labelling (a dozen vector operations) then costs nothing. The point is copied when the
    object is made, so later changes to the caller's arrays do not change the labels. Compares
    equal to any sequence with the same labels (a ``list`` included).
    """

    __slots__ = ("_args", "_labels", "_n")

    def __init__(
        self,
        z: np.ndarray,
        F: np.ndarray,
        lb: np.ndarray,
        ub: np.ndarray,
        tol: float,
        per_pair: np.ndarray | None = None,
    ) -> None:
        z = np.array(z, dtype=float).reshape(-1)
        F = np.array(F, dtype=float).reshape(-1)
        per = None if per_pair is None else np.array(per_pair, dtype=float)
        self._n = z.size
        bounds = (np.asarray(lb, dtype=float), np.asarray(ub, dtype=float))
        self._args: tuple[Any, ...] | None = (z, F, *bounds, float(tol), per)
        self._labels: list[PairState] | None = None

    def _list(self) -> list[PairState]:
        if self._labels is None:
            assert self._args is not None
            self._labels = _labels(*self._args)
            self._args = None
        return self._labels

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> PairState: ...
    @overload
    def __getitem__(self, i: slice) -> list[PairState]: ...
    def __getitem__(self, i: int | slice) -> PairState | list[PairState]:
        return self._list()[i]

    def __iter__(self) -> Iterator[PairState]:
        return iter(self._list())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
            return self._list() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._list())


_ORDER = [
    PairState.AT_LOWER,
    PairState.BETWEEN,
    PairState.AT_UPPER,
    PairState.DEGENERATE,
    PairState.FIXED,
    PairState.VIOLATED,
]


def judged_residuals(orig: MPCC, x: np.ndarray, p: np.ndarray) -> tuple[float, float, dict[str, np.ndarray]]:
    r"""``(comp, viol, values)`` of the user's MPCC at ``x``: what the verdict is taken on.

    ``viol`` and ``values`` are :meth:`MPCC.residuals <mcpkit.problems.mpcc.MPCC.residuals>`';
    ``comp`` is :math:`\max_j |\max(H_j - H_{u,j}, \min(H_j - H_{l,j}, G_j))|`, the same pair
    residual :math:`|H_j - \Pi_{[H_l, H_u]}(H_j - G_j)|` computed as a min-map so that a huge
    :math:`H_j` cannot swallow :math:`G_j` (:func:`natural_residual_vector`; NaN or a non-finite
    :math:`G_j` is infinite).
    """
    _, viol, vals = orig.residuals(x, p)
    per = natural_residual_vector(vals["H"], vals["G"], orig.lbH, orig.ubH)
    return float(per.max(initial=0.0)), viol, vals
