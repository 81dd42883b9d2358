r"""Erdmann's configuration-space friction cone for a planar part (M. Erdmann, *A Configuration Space
Friction Cone*).

Generalised coordinates :math:`(x, y, q = \rho\theta)` with :math:`\rho` the radius of
gyration, generalised force :math:`F = (F_x, F_y, \tau/\rho)`, mass matrix :math:`mI_3`.
For one contact with unit real-space normal :math:`n_0` (pointing into the part) and
:math:`r` the vector from the contact point to the reference point (Erdmann §2):

.. math::

    n_q = n_0\times r,\quad \Delta_n = \sqrt{\rho^2 + n_q^2}/\rho,\quad
    \mathbf n = (n_x, n_y, n_q/\rho)/\Delta_n,\\
    t_s = \pm(n_y, -n_x),\quad v_q = t_s\times r,\quad v_f = (t_s, v_q/\rho),\\
    \text{cone edges } \Delta_n\mathbf n \pm \mu v_f \text{ (§3)},\quad
    t_r \parallel (-r_y, r_x, \rho),\quad t_r^\perp \perp \{\mathbf n, t_r\} \text{ (§4)},

with the signs chosen so that :math:`t_r^\perp\cdot n_0 \ge 0` and
:math:`t_r^\perp\cdot t_s > 0`, and (eq 5)

.. math::

    k_1 = \frac{t_r^\perp\cdot t_s - \mu\,t_r^\perp\cdot n_0}{\mu\,\mathbf n\cdot n_0},\qquad
    k_2 = \frac{t_r^\perp\cdot t_s + \mu\,t_r^\perp\cdot n_0}{-\mu\,\mathbf n\cdot n_0}.

The cone dips below the tangent plane (an edge :math:`e^*` has :math:`e^*\cdot\mathbf n < 0`)
iff :math:`k_1 < 0`, i.e. iff :math:`\mu |v_q n_q| > \rho^2 + n_q^2`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError
from mcpkit.models.friction.patch import _check_scalar
from mcpkit.solving.options import Choice
from mcpkit.solving.tables import compact_repr

__all__ = [
    "Ambiguity",
    "CSpaceContact",
    "ContactMode",
    "ContactType",
    "ModeSolution",
    "ReactionResult",
    "cone_sum_generators",
    "enumerate_modes_at_rest",
    "static_equilibrium_multi",
]


class ContactMode(str, Enum):
    """Contact mode of a single-point contact."""

    SEPARATING = "separating"
    """No reaction force (the applied force does not push into the surface)."""
    STICKING = "sticking"
    """Reaction strictly inside the cone: the contact point does not slide."""
    SLIDING_POSITIVE = "sliding_positive"
    """Reaction on the edge that opposes sliding along +t_s (f_t = f_n / k2)."""
    SLIDING_NEGATIVE = "sliding_negative"
    """Reaction on the edge that opposes sliding along -t_s (f_t = f_n / k1)."""


class Ambiguity(str, Enum):
    """What the single-contact rigid-body problem (object at rest) admits."""

    UNIQUE = "unique"
    """Exactly one consistent contact mode; the §5.2 projection rule gives it."""
    CONE_BELOW_TANGENT_PLANE_MULTIPLE = "cone_below_tangent_plane_multiple"
    """The cone dips below the tangent plane (k1 < 0) and several contact modes (distinct
    reaction forces) are consistent: the motion is ambiguous (Erdmann §4)."""
    CONE_BELOW_TANGENT_PLANE_NONE = "cone_below_tangent_plane_none"
    """The cone dips below the tangent plane and no contact mode is consistent (the rigid
    problem has no solution; an impulse would be needed)."""
    CONE_BELOW_TANGENT_PLANE_UNIQUE = "cone_below_tangent_plane_unique"
    """The cone dips below the tangent plane but this load still has one consistent mode."""


class ContactType(str, Choice):
    """Geometric contact type for the second-variation constraint (Erdmann §5.5)."""

    VERTEX_ON_EDGE = "vertex_on_edge"
    """Type B: vertex of the part on an obstacle edge, h = omega^2 r."""
    EDGE_ON_VERTEX = "edge_on_vertex"
    """Type A: edge of the part on an obstacle vertex, h = -omega^2 r - 2 omega x v_xy."""


@dataclass
class ReactionResult:
    r"""Reaction :math:`F_R = f_n\mathbf n + f_t t_r^\perp` of Erdmann §5.2 / §5.6.

    Attributes
    ----------
    force
        (3,) generalised reaction force.
    f_n, f_t
        Its components along :math:`\mathbf n` and :math:`t_r^\perp`.
    mode
        :class:`ContactMode`.
    ambiguity
        :class:`Ambiguity` (UNIQUE when the cone lies above the tangent plane).
    alternatives
        For an at-rest query on a dipping cone, every consistent mode (see
        :func:`enumerate_modes_at_rest`).
    """

    force: np.ndarray
    f_n: float
    f_t: float
    mode: ContactMode
    ambiguity: Ambiguity
    alternatives: list[ModeSolution] = field(default_factory=list)

    def __repr__(self) -> str:
        """A few lines: key fields, arrays by shape (:func:`~mcpkit.solving.tables.compact_repr`)."""
        return compact_repr(self)


@dataclass
class ModeSolution:
    r"""One consistent contact mode at rest: real-space normal force ``normal_force``
    (:math:`\ge 0`), tangential force ``tangential_force`` along :math:`t_s`, generalised
    reaction ``reaction`` and acceleration ``acceleration`` (configuration space)."""

    mode: ContactMode
    normal_force: float
    tangential_force: float
    reaction: np.ndarray
    acceleration: np.ndarray


def _vec(name: str, v: object, n: int) -> np.ndarray:
    a = np.asarray(v, dtype=float)
    if a.shape != (n,):
        raise ShapeError(f"{name} must have shape ({n},), got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise NonFiniteError(f"{name} contains NaN or inf")
    return a


def _cross2(a: np.ndarray, b: np.ndarray) -> float:
    return float(a[0] * b[1] - a[1] * b[0])


class CSpaceContact:
    r"""A single point contact of a planar part, in configuration space (Erdmann §§2-5).

    Parameters
    ----------
    normal
        (2,) real-space contact normal :math:`n_0` pointing into the part (normalised here).
    r
        (2,) vector from the contact point to the part's reference point (centre of mass).
    rho
        Radius of gyration :math:`\rho > 0` [m].
    mu
        Friction coefficient :math:`\mu > 0`.

    Attributes
    ----------
    n0, t_s
        (3,) real-space normal and sliding tangent embedded with a zero third coordinate.
    n_q, v_q, delta_n
        Scalars of §2.
    n, v_f, t_r, t_r_perp
        (3,) configuration-space vectors (``n``, ``t_r``, ``t_r_perp`` unit).
    k1, k2
        Eq 5.
    edges
        (2, 3) cone edges :math:`\Delta_n\mathbf n + \mu v_f` and :math:`\Delta_n\mathbf n -
        \mu v_f` (rows).
    """

    def __init__(self, normal: np.ndarray, r: np.ndarray, rho: float, mu: float) -> None:
        n0 = _vec("normal", normal, 2)
        if np.linalg.norm(n0) == 0:
            raise MCPInputError("normal must be non-zero")
        n0 = n0 / np.linalg.norm(n0)
        rr = _vec("r", r, 2)
        self.rho = _check_scalar("rho", rho, positive=True)
        self.mu = _check_scalar("mu", mu, positive=True)
        self.r = rr
        self.n_q = _cross2(n0, rr)
        self.delta_n = float(np.sqrt(self.rho**2 + self.n_q**2) / self.rho)
        self.n0 = np.array([n0[0], n0[1], 0.0])
        self.n = np.array([n0[0], n0[1], self.n_q / self.rho]) / self.delta_n
        tr = np.array([-rr[1], rr[0], self.rho])
        self.t_r = tr / np.linalg.norm(tr)
        tp = np.cross(self.n, self.t_r)
        tp /= np.linalg.norm(tp)
        ts = np.array([n0[1], -n0[0], 0.0])
        if tp @ self.n0 < -1e-14 or (abs(tp @ self.n0) <= 1e-14 and tp @ ts < 0):
            tp = -tp
        if tp @ ts < 0:
            ts = -ts
        self.t_r_perp = tp
        self.t_s = ts
        self.v_q = _cross2(ts[:2], rr)
        self.v_f = np.array([ts[0], ts[1], self.v_q / self.rho])
        nn0 = float(self.n @ self.n0)
        self.k1 = float((tp @ ts - self.mu * (tp @ self.n0)) / (self.mu * nn0))
        self.k2 = float((tp @ ts + self.mu * (tp @ self.n0)) / (-self.mu * nn0))
        base = self.delta_n * self.n
        self.edges = np.stack([base + self.mu * self.v_f, base - self.mu * self.v_f])

    # ------------------------------------------------------------------ geometry
    @property
    def dips_below_tangent_plane(self) -> bool:
        """True iff a cone edge has a negative component along ``n`` (``k1 < 0``)."""
        return bool(self.k1 < 0)

    @property
    def dip_threshold(self) -> float:
        r"""Friction coefficient above which the cone dips: :math:`(\rho^2 + n_q^2) /
        |v_q n_q|` (``inf`` when :math:`v_q n_q = 0`)."""
        p = abs(self.v_q * self.n_q)
        return float("inf") if p == 0 else float((self.rho**2 + self.n_q**2) / p)

    def plane_coordinates(self, F: np.ndarray) -> np.ndarray:
        r"""(..., 3) coordinates :math:`(F\cdot t_r^\perp, F\cdot\mathbf n, F\cdot t_r)`."""
        B = np.stack([self.t_r_perp, self.n, self.t_r], axis=1)
        return np.asarray(F, dtype=float) @ B

    # ------------------------------------------------------------------ statics
    def static_equilibrium(self, F: np.ndarray, tol: float = 1e-10) -> bool:
        r"""Erdmann §5.1: the applied generalised force :math:`F` is balanced iff
        (i)' :math:`F\cdot n_0 \le 0`, (ii)' :math:`\mu F\cdot n_0 \le F\cdot t_s \le
        -\mu F\cdot n_0`, (iii)' :math:`F\cdot t_r = 0` (tolerance ``tol`` times
        :math:`\lVert F\rVert`)."""
        F = _vec("F", F, 3)
        s = tol * max(1.0, float(np.linalg.norm(F)))
        fn0 = F @ self.n0
        fts = F @ self.t_s
        return bool(fn0 <= s and self.mu * fn0 - s <= fts <= -self.mu * fn0 + s and abs(F @ self.t_r) <= s)

    def static_equilibrium_k_form(self, F: np.ndarray, tol: float = 1e-10) -> bool:
        r"""Eq 4 form: :math:`F\cdot\mathbf n \le k_1 F\cdot t_r^\perp`,
        :math:`F\cdot\mathbf n \le k_2 F\cdot t_r^\perp`, :math:`F\cdot t_r = 0`."""
        F = _vec("F", F, 3)
        s = tol * max(1.0, float(np.linalg.norm(F))) * max(1.0, abs(self.k1), abs(self.k2))
        a, b = F @ self.n, F @ self.t_r_perp
        return bool(a <= self.k1 * b + s and a <= self.k2 * b + s and abs(F @ self.t_r) <= s)

    # ------------------------------------------------------------------ reactions
    def reaction_at_rest(self, F: np.ndarray) -> ReactionResult:
        r"""Erdmann §5.2: :math:`F_R = -(F\cdot\mathbf n)\mathbf n - h\,t_r^\perp` with
        :math:`h = \operatorname{clip}(F\cdot t_r^\perp, (F\cdot\mathbf n)/k_1,
        (F\cdot\mathbf n)/k_2)`, and no reaction if :math:`F\cdot\mathbf n \ge 0`.

        The rule assumes the cone lies above the tangent plane. When it dips
        (:attr:`dips_below_tangent_plane`), the result is computed from the complete
        enumeration of consistent modes (:func:`enumerate_modes_at_rest`); ``ambiguity``
        tells whether the answer is unique, multiple (``alternatives`` lists all) or empty,
        and ``force`` is the first consistent mode (zero, SEPARATING, if there is none).
        """
        F = _vec("F", F, 3)
        if self.dips_below_tangent_plane:
            sols = enumerate_modes_at_rest(self, F)
            if not sols:
                amb = Ambiguity.CONE_BELOW_TANGENT_PLANE_NONE
                return ReactionResult(np.zeros(3), 0.0, 0.0, ContactMode.SEPARATING, amb, [])
            amb = (
                Ambiguity.CONE_BELOW_TANGENT_PLANE_UNIQUE
                if len(sols) == 1
                else Ambiguity.CONE_BELOW_TANGENT_PLANE_MULTIPLE
            )
            s0 = sols[0]
            return ReactionResult(
                s0.reaction,
                float(s0.reaction @ self.n),
                float(s0.reaction @ self.t_r_perp),
                s0.mode,
                amb,
                sols,
            )
        fn = float(F @ self.n)
        if fn >= 0:
            return ReactionResult(np.zeros(3), 0.0, 0.0, ContactMode.SEPARATING, Ambiguity.UNIQUE)
        lo, hi = fn / self.k1, fn / self.k2
        ht = float(F @ self.t_r_perp)
        h = min(max(ht, lo), hi)
        if h == ht and lo < ht < hi:
            mode = ContactMode.STICKING
        elif ht >= hi:
            mode = ContactMode.SLIDING_POSITIVE
        else:
            mode = ContactMode.SLIDING_NEGATIVE
        FR = -fn * self.n - h * self.t_r_perp
        return ReactionResult(FR, -fn, -h, mode, Ambiguity.UNIQUE)

    def reaction(
        self,
        F: np.ndarray,
        velocity: np.ndarray,
        mass: float,
        contact_type: ContactType | str = ContactType.VERTEX_ON_EDGE,
    ) -> ReactionResult:
        r"""Erdmann §5.6 rules for a moving part in contact (cone above the tangent plane).

        ``velocity = (v_x, v_y, omega)`` of the reference point (physical angular rate).
        :math:`h = \omega^2 r` (type B) or :math:`-\omega^2 r - 2\bar\omega\times v_{xy}`
        (type A); :math:`f_n = \max\{0, -(F + m h)\cdot\mathbf n\}`;
        :math:`C = v_t (F\cdot t_r^\perp) - v_n (m h\cdot\mathbf n) + \omega^2 m\, r\cdot v_f`
        with :math:`v_f = v_n\mathbf n + v_t t_r^\perp`; :math:`v_0` = velocity of the
        contact point; :math:`f_t = f_n/k_2` if :math:`v_0\cdot t_s > 0`, :math:`f_n/k_1` if
        :math:`< 0`, else :math:`-C/v_t` clipped to :math:`[f_n/k_2, f_n/k_1]`.
        Raises :class:`~mcpkit.errors.MCPInputError` if the cone dips below the tangent plane
        (the paper's rules do not apply; use :meth:`reaction_at_rest`).
        """
        F = _vec("F", F, 3)
        vel = _vec("velocity", velocity, 3)
        m = _check_scalar("mass", mass, positive=True)
        ct = ContactType.parse(contact_type)
        if self.dips_below_tangent_plane:
            raise MCPInputError(
                "the friction cone dips below the tangent plane (k1 < 0): Erdmann §5.6 rules "
                "do not apply; use reaction_at_rest for the mode enumeration"
            )
        om = vel[2]
        r3 = np.array([self.r[0], self.r[1], 0.0])
        if ct is ContactType.VERTEX_ON_EDGE:
            hv = om**2 * r3
        else:
            hv = -(om**2) * r3 - 2 * np.cross([0.0, 0.0, om], [vel[0], vel[1], 0.0])
        fn = max(0.0, float(-(F + m * hv) @ self.n))
        v_n = float(self.v_f @ self.n)
        v_t = float(self.v_f @ self.t_r_perp)
        C = v_t * float(F @ self.t_r_perp) - v_n * m * float(hv @ self.n) + om**2 * m * float(r3 @ self.v_f)
        v0 = np.array([vel[0] + om * self.r[1], vel[1] - om * self.r[0], 0.0])
        s = float(v0 @ self.t_s)
        scale = 1e-12 * max(1.0, float(np.linalg.norm(vel[:2])) + abs(om) * np.linalg.norm(self.r))
        lo, hi = fn / self.k2, fn / self.k1
        if s > scale:
            ft, mode = lo, ContactMode.SLIDING_POSITIVE
        elif s < -scale:
            ft, mode = hi, ContactMode.SLIDING_NEGATIVE
        else:
            ft = -C / v_t
            if ft <= lo:
                ft, mode = lo, ContactMode.SLIDING_POSITIVE
            elif ft >= hi:
                ft, mode = hi, ContactMode.SLIDING_NEGATIVE
            else:
                mode = ContactMode.STICKING
        if fn == 0.0:
            mode = ContactMode.SEPARATING
        return ReactionResult(fn * self.n + ft * self.t_r_perp, fn, ft, mode, Ambiguity.UNIQUE)


def enumerate_modes_at_rest(
    contact: CSpaceContact, F: np.ndarray, mass: float = 1.0, tol: float = 1e-10
) -> list[ModeSolution]:
    r"""All contact modes consistent with Coulomb's law for a part at rest (acceleration
    level, Erdmann eq 2 with :math:`v = 0`).

    Reaction :math:`R = f_n\Delta_n\mathbf n + f_t v_f`, :math:`m a = F + R`; the contact
    point's normal and tangential accelerations are :math:`a_n = \Delta_n\mathbf n\cdot a`,
    :math:`a_t = v_f\cdot a`. Modes: separating (:math:`f_n = f_t = 0`, :math:`a_n \ge 0`),
    sticking (:math:`a_n = a_t = 0`, :math:`|f_t|\le\mu f_n`), sliding along :math:`\pm t_s`
    (:math:`a_n = 0`, :math:`f_t = \mp\mu f_n`, :math:`\pm a_t > 0`). Distinct consistent
    modes with distinct reactions are returned (a sticking solution on the cone boundary is
    reported once, as sticking).
    """
    F = _vec("F", F, 3)
    m = _check_scalar("mass", mass, positive=True)
    g = contact.delta_n * contact.n
    vf = contact.v_f
    mu = contact.mu
    scale = tol * max(1.0, float(np.linalg.norm(F)))
    out: list[ModeSolution] = []

    def add(mode: ContactMode, fn: float, ft: float) -> None:
        R = fn * g + ft * vf
        a = (F + R) / m
        for s in out:
            if np.linalg.norm(s.reaction - R) <= 1e3 * scale:
                return
        out.append(ModeSolution(mode, fn, ft, R, a))

    # sticking: [g.g g.vf; vf.g vf.vf] [fn; ft] = -[g.F; vf.F]
    G = np.array([[g @ g, g @ vf], [vf @ g, vf @ vf]])
    fn, ft = np.linalg.solve(G, -np.array([g @ F, vf @ F]))
    if fn >= -scale and abs(ft) <= mu * max(fn, 0.0) + scale:
        add(ContactMode.STICKING, max(fn, 0.0), ft)
    for sgn, mode in ((1.0, ContactMode.SLIDING_POSITIVE), (-1.0, ContactMode.SLIDING_NEGATIVE)):
        d = g - sgn * mu * vf  # direction of R per unit f_n
        den = g @ d
        if abs(den) < 1e-300:
            continue
        fn = float(-(g @ F) / den)
        if fn < -scale:
            continue
        fn = max(fn, 0.0)
        at = vf @ (F + fn * d) / m
        if sgn * at > scale:
            add(mode, fn, -sgn * mu * fn)
    if g @ F >= -scale:
        add(ContactMode.SEPARATING, 0.0, 0.0)
    return out


def cone_sum_generators(contacts: list[CSpaceContact]) -> np.ndarray:
    r"""(2K, 3) generators of the net cone of K contacts: the vector (Minkowski) sum of the
    single-contact cones is the conic hull of all their edges (Erdmann §6)."""
    if not contacts:
        raise MCPInputError("need at least one contact")
    return np.vstack([c.edges for c in contacts])


def static_equilibrium_multi(
    contacts: list[CSpaceContact], F: np.ndarray, tol: float = 1e-9
) -> tuple[bool, np.ndarray]:
    r"""Static equilibrium with several contacts: :math:`-F` must lie in the sum of the cones,
    :math:`-F = \sum_j\lambda_j e_j`, :math:`\lambda\ge 0` (non-negative least squares).

    Returns ``(balanced, lambda)`` where ``balanced`` means residual
    :math:`\le` ``tol`` :math:`\lVert F\rVert`.
    """
    from scipy.optimize import nnls

    F = _vec("F", F, 3)
    E = cone_sum_generators(contacts)
    lam, res = nnls(E.T, -F)
    return bool(res <= tol * max(1.0, float(np.linalg.norm(F)))), lam
