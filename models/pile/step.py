r"""Stepping a pile of spheres: one FCLIB-form local problem per step, solved by the contact Newton.

Velocity-level time stepping (Stewart–Trinkle, Berard et al. eq (9); Moreau–Jean as Siconos writes
its FCLIB local problems). With the body twists :math:`\nu` (six per sphere, :mod:`.geometry`),
the diagonal mass matrix :math:`M` (:math:`m_a I_3`, :math:`\tfrac25 m_a R_a^2 I_3`; a sphere has
no gyroscopic term), gravity :math:`f_\mathrm{ext}`, the contact Jacobian :math:`H` and the
contact impulses :math:`r` (FCLIB order :math:`(r_n, r_{t_1}, r_{t_2})_c`):

.. math::
    M(\nu^+ - \nu) = h f_\mathrm{ext} + H r,\qquad
    u = H^T\nu^+ + e,\qquad e_c = (\gamma_c g_c / h,\ 0,\ 0),

so the step's local problem is :math:`u = Wr + q` with

.. math::
    W = H^T M^{-1} H,\qquad q = H^T(\nu + h M^{-1} f_\mathrm{ext}) + e ,

and Coulomb's law with Signorini's condition per contact (the quadratic cone
:math:`\|r_{t}\| \le \mu r_n`). :math:`g_c` is the contact's gap (:math:`\gamma_c = 1` for
:math:`g_c \ge 0`: the contact may close in one step but not pass; :math:`\gamma_c =`
:attr:`PileParams.stabilisation` for a penetration, default 0: Moreau–Jean's velocity-level
Signorini condition, no push-out). Positions follow :math:`x^+ = x + h v^+` (orientations are
not tracked: a sphere's geometry does not depend on them). :math:`W` is singular on any pile
(three rows per contact, six freedoms per sphere, and a resting sphere has three or more
contacts), so :math:`e` has components outside its range; a push-out of penetrations
(:math:`\gamma > 0`) then asks for separations the bodies cannot make to first order (a jammed
row between walls) and made resting piles much harder to solve (measured with the continuation
alone: 20 spheres, 150 steps, 82 steps unsolved with :math:`\gamma = 0.2`, 7 with
:math:`\gamma = 0`; the deepest penetration
with :math:`\gamma = 0` stays below 2e-6 m, the margin growing with the speed so that
approaching spheres are seen a step early).

:meth:`LocalProblem.declare` states the step at block level as Berard et al.'s NCP with the quadratic
friction cone: :func:`mcpkit.models.fclib.fclib_mcp` with the ``ncp`` formulation on
:math:`(W, q, \mu)`, so ``declare().to_text()`` prints it.

**Solve and verdict** (:func:`solve_local`): :func:`mcpkit.engines.newton_contact.solve_alart_curnier`
warm-started from the previous step's reactions matched by contact identity (the body pair, or
the sphere and plane), each carried over in world coordinates :math:`E_c^T r_c` and expressed in
the new frame; when the warm run stops unsolved, a cold run (the engine's restart), then a
Tikhonov continuation on :math:`W + \varepsilon I` and a polish on :math:`W`, a proximal point
iteration (:func:`mcpkit.engines.prox_contact.solve_prox`), optionally nonsmooth Gauss–Seidel
(:func:`mcpkit.engines.nsgs.solve_nsgs`), and last the staged FCLIB solve follow within the time
left (:func:`solve_local`). A step is *solved* when the
engine's verdict holds at the returned reactions: the Siconos error (physical friction residual,
``fc3d_compute_error``) and the scaled Alart–Curnier residual both :math:`\le` ``tol``.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse as sps

from mcpkit.engines.newton_contact import ContactNewtonResult, siconos_error, solve_alart_curnier
from mcpkit.engines.nsgs import solve_nsgs
from mcpkit.engines.prox_contact import solve_prox
from mcpkit.errors import MCPInputError
from mcpkit.models.fclib import FCLIBFormulation, FCLIBProblem, fclib_mcp, solve_fclib
from mcpkit.models.pile.geometry import Box, Contacts, check_spheres, contact_jacobian, detect_contacts
from mcpkit.problems.mcp import MCP
from mcpkit.solving.options import Choice
from mcpkit.solving.result import Termination, summary_head
from mcpkit.solving.tables import compact_repr


class StepEngine(str, Choice):
    """Which solve :func:`solve_local` tries first on a step."""

    DIRECT = "direct"
    """The dense contact Newton (:func:`~mcpkit.engines.newton_contact.solve_alart_curnier`)
    warm-started from the carried reactions, then the fallbacks of :func:`solve_local`."""
    STAGED = "staged"
    """The staged FCLIB solve (:func:`mcpkit.models.fclib.solve_fclib`: on more than
    ``DIRECT_MAX_CONTACTS`` contacts the sparse semismooth Newton engine) from zero, its point
    judged by a Newton polish; when unsolved, the ``direct`` chain from that point. A step's
    ``iterations`` then count the polish and later runs only, not the staged solve's own."""


@dataclass(frozen=True)
class PileParams:
    """Physical and numerical parameters of a pile (SI units)."""

    h: float = 0.01
    """Time step (s)."""
    mu: float = 0.3
    """Friction coefficient of every contact."""
    gravity: float = 9.81
    """Gravitational acceleration, along :math:`-z` (m/s²)."""
    density: float = 1000.0
    """Density of the spheres (kg/m³)."""
    margin_factor: float = 0.25
    """Contacts are kept while their gap is below this fraction of the smallest radius."""
    stabilisation: float = 0.0
    r"""Fraction :math:`\gamma` of a penetration corrected per step (module docstring)."""
    tol: float = 1e-8
    """Tolerance of each step's verdict (Siconos error and the engine's natural residual)."""
    max_iter: int = 100
    """Newton steps allowed to each run of the engine."""
    step_time_limit: float | None = None
    """Seconds allowed to each step's solve (``None``: no limit)."""
    fallback_limit: float = 20.0
    """Seconds allowed to the last fallback of a step, the staged FCLIB solve (:func:`solve_local`)."""
    engine: StepEngine = StepEngine.DIRECT
    """What each step tries first (:class:`StepEngine`)."""
    prox_limit: float = 30.0
    """Seconds allowed to the proximal point stage of :func:`solve_local` (0: skipped). With 10 s,
    one of 150 steps of the resting 20-sphere pile (seed 0) stayed at 1.6e-8; with 30 s none."""
    nsgs_limit: float = 0.0
    """Seconds allowed to the nonsmooth Gauss–Seidel stage of :func:`solve_local` (0: skipped, the
    default: it solved the 603-contact dev step only after about 600 sweeps, 111 s)."""

    def __post_init__(self) -> None:
        for name in ("h", "density"):
            if not (math.isfinite(getattr(self, name)) and getattr(self, name) > 0):
                raise MCPInputError(f"PileParams.{name} must be positive, got {getattr(self, name)}")
        for name in ("mu", "gravity", "margin_factor"):
            if not (math.isfinite(getattr(self, name)) and getattr(self, name) >= 0):
                raise MCPInputError(f"PileParams.{name} must be non-negative, got {getattr(self, name)}")
        if not 0 <= self.stabilisation <= 1:
            raise MCPInputError(f"PileParams.stabilisation must be in [0, 1], got {self.stabilisation}")
        for name in ("prox_limit", "nsgs_limit"):
            if not (math.isfinite(getattr(self, name)) and getattr(self, name) >= 0):
                raise MCPInputError(f"PileParams.{name} must be non-negative, got {getattr(self, name)}")
        if not (self.tol > 0 and self.max_iter >= 1):
            raise MCPInputError("PileParams.tol must be positive and max_iter at least 1")
        engine = StepEngine.parse(self.engine)
        object.__setattr__(self, "engine", engine)


@dataclass
class Pile:
    """The state of a pile: centres ``x`` ``(N, 3)``, twists ``v`` ``(N, 6)`` (linear, angular)."""

    x: np.ndarray
    v: np.ndarray
    radii: np.ndarray
    box: Box
    params: PileParams = field(default_factory=PileParams)
    t: float = 0.0

    def __post_init__(self) -> None:
        self.x, self.radii = check_spheres(self.x, self.radii)
        self.v = np.asarray(self.v, dtype=float)
        if self.v.shape != (self.radii.size, 6) or not np.isfinite(self.v).all():
            raise MCPInputError(f"v must be finite with shape ({self.radii.size}, 6), got {self.v.shape}")

    @property
    def n_bodies(self) -> int:
        """Number of spheres."""
        return int(self.radii.size)

    @property
    def masses(self) -> np.ndarray:
        r""":math:`m_a = \rho\,\tfrac43\pi R_a^3`."""
        return self.params.density * (4.0 / 3.0) * math.pi * self.radii**3

    @property
    def inverse_mass(self) -> np.ndarray:
        r"""Diagonal of :math:`M^{-1}` ``(6N,)``: :math:`1/m_a` thrice, then
        :math:`1/(\tfrac25 m_a R_a^2)` thrice, per sphere."""
        m = self.masses
        inertia = 0.4 * m * self.radii**2
        lin, ang = np.repeat(1.0 / m[:, None], 3, 1), np.repeat(1.0 / inertia[:, None], 3, 1)
        return np.column_stack([lin, ang]).reshape(-1)

    @property
    def margin(self) -> float:
        r"""Contact detection margin: :attr:`PileParams.margin_factor` times the smallest radius, or
        :math:`2h(\max_a\|v_a\| + gh)` when larger (two spheres approaching at their top speeds
        within one step are then seen before they meet)."""
        p = self.params
        speed = float(np.linalg.norm(self.v[:, :3], axis=1).max()) if self.n_bodies else 0.0
        return max(p.margin_factor * float(self.radii.min()), 2.0 * p.h * (speed + p.gravity * p.h))

    def contacts(self) -> Contacts:
        """The contacts of the current configuration (:func:`~.geometry.detect_contacts`)."""
        return detect_contacts(self.x, self.radii, self.box, self.margin)

    def local_problem(self, contacts: Contacts | None = None) -> LocalProblem:
        """The current step's local problem (module docstring)."""
        c = self.contacts() if contacts is None else contacts
        H = contact_jacobian(c, self.x)
        minv = self.inverse_mass
        p = self.params
        W = (H.T @ sps.diags_array(minv) @ H).toarray()
        fext = np.zeros((self.n_bodies, 6))
        fext[:, 2] = -self.masses * p.gravity
        v_free = self.v.reshape(-1) + p.h * minv * fext.reshape(-1)
        q = H.T @ v_free
        gamma = np.where(c.gap >= 0.0, 1.0, p.stabilisation)
        q[0::3] += gamma * c.gap / p.h
        mu = np.full(c.nc, p.mu)
        return LocalProblem(contacts=c, H=H, W=np.ascontiguousarray(W), q=q, mu=mu, v_free=v_free)

    def advance(self, lp: LocalProblem, r: np.ndarray) -> None:
        r""":math:`\nu^+ = \nu_\mathrm{free} + M^{-1}Hr`, :math:`x^+ = x + h v^+`, :math:`t^+ = t + h`."""
        vplus = lp.v_free + self.inverse_mass * (lp.H @ r)
        self.v = vplus.reshape(-1, 6)
        self.x = self.x + self.params.h * self.v[:, :3]
        self.t += self.params.h


@dataclass
class LocalProblem:
    """One step's local problem :math:`u = Wr + q` (module docstring) and what built it."""

    contacts: Contacts
    H: sps.csc_array
    """Contact Jacobian ``(6N, 3nc)``."""
    W: np.ndarray
    """Delassus matrix :math:`H^TM^{-1}H`, dense ``(3nc, 3nc)``."""
    q: np.ndarray
    mu: np.ndarray
    v_free: np.ndarray
    r"""Twists at the end of the step without contact impulses, :math:`\nu + hM^{-1}f_\mathrm{ext}`."""

    @property
    def nc(self) -> int:
        """Number of contacts."""
        return self.contacts.nc

    def fclib(self, title: str = "mcpkit pile step") -> FCLIBProblem:
        """The step as an :class:`~mcpkit.models.fclib.FCLIBProblem`."""
        return FCLIBProblem(self.W, self.q, self.mu, title=title)

    def declare(self) -> MCP:
        """The step as Berard et al.'s quadratic-cone NCP at block level
        (:func:`~mcpkit.models.fclib.fclib_mcp`, formulation ``ncp``)."""
        return fclib_mcp(self.fclib(), FCLIBFormulation.NCP)


def carry_reactions(
    prev: Contacts | None, r_prev: np.ndarray | None, now: Contacts
) -> tuple[np.ndarray, int]:
    r"""Warm start for ``now`` from the reactions ``r_prev`` of ``prev``, matched by contact identity.

    A matched contact gets :math:`E^{new}_c E^{old\,T}_c r_c` (the old impulse in world
    coordinates, expressed in the new frame); others zero. Returns ``(r0, matched)``.
    """
    r0 = np.zeros(3 * now.nc)
    if prev is None or r_prev is None or prev.nc == 0 or now.nc == 0:
        return r0, 0
    index = {k: i for i, k in enumerate(prev.keys)}
    new_i, old_i = [], []
    for j, k in enumerate(now.keys):
        i = index.get(k)
        if i is not None:
            new_i.append(j)
            old_i.append(i)
    if not new_i:
        return r0, 0
    ni, oi = np.array(new_i), np.array(old_i)
    world = np.einsum("cki,ck->ci", prev.frame[oi], r_prev.reshape(-1, 3)[oi])
    r0.reshape(-1, 3)[ni] = np.einsum("cki,ci->ck", now.frame[ni], world)
    return r0, len(new_i)


#: Tikhonov continuation of :func:`solve_local`: :math:`(\varepsilon_k/\overline{\mathrm{diag}\,W},
#: \text{tol}_k)`, each stage warm from the best point so far, then a polish at :math:`\varepsilon = 0`
#: (the stages of :mod:`mcpkit.models.fclib`, on the direct Newton method).
TIKHONOV_STAGES = ((1e-2, 1e-4), (1e-4, 1e-6), (1e-6, 1e-8), (1e-8, 1e-10))
#: Newton steps of each continuation stage.
STAGE_ITERATIONS = 60
#: The warm run stops once its merit fell less than tenfold in this many steps (then the continuation).
WARM_STALL = 20


def solve_local(
    W: np.ndarray,
    q: np.ndarray,
    mu: np.ndarray,
    r0: np.ndarray | None,
    tol: float = 1e-8,
    max_iter: int = 100,
    time_limit: float | None = None,
    fallback_limit: float = 20.0,
    engine: StepEngine | str = StepEngine.DIRECT,
    nsgs_limit: float = 0.0,
    prox_limit: float = 30.0,
) -> tuple[ContactNewtonResult, int]:
    r"""Solve one step's local problem with :func:`~mcpkit.engines.newton_contact.solve_alart_curnier`.

    1. From ``r0`` (the carried reactions) when given (stopping on slow progress,
       :data:`WARM_STALL`), then, if unsolved, from zero with the engine's restart; without
       ``r0`` from zero with the restart only;
    2. if that stops unsolved: a Tikhonov continuation (:data:`TIKHONOV_STAGES`) on
       :math:`W + \varepsilon I`, which is positive definite where :math:`W = H^TM^{-1}H` is
       singular (more contact rows than body freedoms: every pile), each stage warm from the
       best point so far as measured on the *original* problem, then a polish at
       :math:`\varepsilon = 0` from that point;
    3. if still unsolved and ``prox_limit`` is positive: the proximal point iteration
       (:func:`mcpkit.engines.prox_contact.solve_prox`, subproblems on :math:`W + \alpha I`
       with :math:`q - \alpha r_k`, by the same Newton method) from the best point for at most
       ``prox_limit`` seconds, judged by a Newton run on the original problem (it solved the
       three resting 20-sphere steps of ``tests/data/pile/rest-*.hdf5`` that every other stage
       left at 6e-7 to 1e-5);
    4. if still unsolved and ``nsgs_limit`` is positive: nonsmooth Gauss–Seidel
       (:func:`mcpkit.engines.nsgs.solve_nsgs`) from the best point for at most ``nsgs_limit``
       seconds, then a Newton polish from its best point, which judges it;
    5. if still unsolved: :func:`mcpkit.models.fclib.solve_fclib` (the staged FCLIB solve: the
       sparse semismooth Newton engine with its own continuation) for at most ``fallback_limit``
       seconds (0: skipped), then a Newton polish from its reactions, which judges its point.

    With ``engine="staged"`` the staged FCLIB solve runs first, from zero, and a Newton polish
    from its reactions judges its point; 1.–5. follow (warm from that point) only when unsolved.

    The returned result is the engine's verdict on the original :math:`(W, q, \mu)` (the polish,
    or the first run when it was solved); when nothing solved, the point with the smallest
    Siconos error. Returns it and the number of engine runs.
    """
    t0 = time.perf_counter()
    deadline = math.inf if time_limit is None else t0 + time_limit

    def left() -> float | None:
        return None if time_limit is None else max(deadline - time.perf_counter(), 1e-3)

    if q.size == 0:
        return solve_alart_curnier(W, q, mu, tol=tol, max_iter=max_iter), 1
    runs0 = 0
    if StepEngine.parse(engine) is StepEngine.STAGED:
        staged = solve_fclib(FCLIBProblem(np.asarray(W, dtype=float), q, mu), time_limit=left(), tol=tol)
        if staged.reactions is not None and np.isfinite(staged.reactions).all():
            judged = solve_alart_curnier(W, q, mu, tol=tol, max_iter=max_iter, r0=staged.reactions,
                                         time_limit=left())  # fmt: skip
            if judged.solved or time.perf_counter() >= deadline:
                return judged, 1
            r0, runs0 = judged.r, 1
    warm = r0 is not None and bool(np.any(r0))
    first = solve_alart_curnier(
        W, q, mu, tol=tol, max_iter=max_iter, r0=r0 if warm else None, time_limit=left(),
        stall_window=WARM_STALL if warm else 0,
    )  # fmt: skip
    if first.solved or time.perf_counter() >= deadline:
        return first, runs0 + 1
    best, runs = first, runs0 + 1
    if warm:  # a cold run with the engine's restart (it solved 2 of 7 resting steps the warm run missed)
        cold = solve_alart_curnier(W, q, mu, tol=tol, max_iter=max_iter, time_limit=left())
        runs += 1
        if cold.solved or time.perf_counter() >= deadline:
            return cold, runs
        if cold.siconos_error < best.siconos_error:
            best = cold
    r = best.r
    Wd = np.asarray(W, dtype=float)
    shift = float(np.abs(np.diag(Wd)).mean()) or 1.0
    diag = np.arange(q.size)
    for eps, stage_tol in TIKHONOV_STAGES:
        We = Wd.copy()
        We[diag, diag] += eps * shift
        st = solve_alart_curnier(We, q, mu, tol=stage_tol, max_iter=STAGE_ITERATIONS, r0=r, time_limit=left())
        runs += 1
        err = siconos_error(q, mu, st.r, Wd @ st.r + q)
        if st.solved or err < siconos_error(q, mu, r, Wd @ r + q):
            r = st.r
        if time.perf_counter() >= deadline:
            break
    if np.any(r):
        polish = solve_alart_curnier(Wd, q, mu, tol=tol, max_iter=max_iter, r0=r, time_limit=left())
        runs += 1
        if polish.solved or polish.siconos_error < best.siconos_error:
            best = polish
    if prox_limit > 0 and not best.solved and time.perf_counter() < deadline:
        t_px = prox_limit if time_limit is None else min(prox_limit, left() or 0.0)
        px, _ = solve_prox(Wd, q, mu, r0=best.r, tol=tol, time_limit=t_px, max_iter=max_iter)
        runs += 1
        if px.solved or px.siconos_error < best.siconos_error:
            best = px
    if nsgs_limit > 0 and not best.solved and time.perf_counter() < deadline:
        t_gs = nsgs_limit if time_limit is None else min(nsgs_limit, left() or 0.0)
        gs = solve_nsgs(Wd, q, mu, r0=best.r, tol=tol, max_sweeps=10**6, time_limit=t_gs)
        again = solve_alart_curnier(Wd, q, mu, tol=tol, max_iter=max_iter, r0=gs.r, time_limit=left())
        runs += 2
        if again.solved or again.siconos_error < best.siconos_error:
            best = again
    if best.solved or time.perf_counter() >= deadline or not fallback_limit:
        return best, runs
    # last: the library's staged FCLIB solve (sparse Newton engine with its own continuation),
    # its point judged by the same engine's verdict (a polish from it)
    t_fb = fallback_limit if time_limit is None else min(fallback_limit, left() or 0.0)
    staged = solve_fclib(FCLIBProblem(Wd, q, mu), time_limit=t_fb, tol=tol)
    if staged.reactions is not None and np.isfinite(staged.reactions).all():
        r_st = staged.reactions
        again = solve_alart_curnier(Wd, q, mu, tol=tol, max_iter=max_iter, r0=r_st, time_limit=left())
        runs += 1
        if again.solved or again.siconos_error < best.siconos_error:
            best = again
    return best, runs


def lu_seconds(W: np.ndarray, budget: float = 0.2, at_least: int = 2) -> float:
    """Seconds of one dense :func:`scipy.linalg.lu_factor` of ``W``: the minimum of repeats within
    ``budget`` seconds (at least ``at_least``), as ``benchmarks/bench_fclib.py`` measures it."""
    if W.size == 0:
        return 0.0
    times: list[float] = []
    end = time.perf_counter() + budget
    with warnings.catch_warnings():  # W is singular on most piles: only the time matters here
        warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
        while len(times) < at_least or (time.perf_counter() < end and len(times) < 50):
            A = np.array(W, order="F")
            t0 = time.perf_counter()
            scipy.linalg.lu_factor(A, overwrite_a=True, check_finite=False)
            times.append(time.perf_counter() - t0)
    return min(times)


_TERMINATION = {
    "time limit": Termination.TIME_LIMIT,
    "interrupted": Termination.INTERRUPTED,
}


@dataclass(frozen=True)
class PileStepRecord:
    """One step of :func:`simulate_pile`: its verdict and measurements (an ``Outcome`` part)."""

    step: int
    t: float
    """Time at the end of the step."""
    contacts: int
    solved: bool
    """The engine's verdict at the returned reactions (module docstring)."""
    siconos_error: float
    natural_residual: float
    iterations: int
    runs: int
    """Engine runs (more than 1 when the first run stopped unsolved: :func:`solve_local`)."""
    matched: int
    """Contacts warm-started from the previous step."""
    solve_s: float
    lu_s: float
    """One dense LU of the step's Delassus matrix (:func:`lu_seconds`; 0 when not measured)."""
    min_gap: float
    """Smallest gap at the start of the step (negative: penetration)."""
    engine_message: str

    @property
    def lu_ratio(self) -> float | None:
        """:attr:`solve_s` over :attr:`lu_s` (``None`` without contacts or LU timing)."""
        return self.solve_s / self.lu_s if self.lu_s > 0 else None

    @property
    def termination(self) -> Termination:
        """``CONVERGED`` when solved, else from the engine's message."""
        if self.solved:
            return Termination.CONVERGED
        if self.engine_message.startswith("iteration limit"):
            return Termination.ITERATION_LIMIT
        return _TERMINATION.get(self.engine_message, Termination.STALLED)

    @property
    def message(self) -> str:
        """One line: contacts, Siconos error, engine message."""
        return (
            f"step {self.step}: {self.contacts} contacts, Siconos error {self.siconos_error:.1e}, "
            f"{self.iterations} Newton steps ({self.engine_message})"
        )

    def summary(self) -> dict[str, Any]:
        """:data:`~mcpkit.solving.result.RESULT_KEYS`, then the measurements."""
        out = summary_head("pile_step", self, self.solve_s)
        out.update(
            step=self.step, t=self.t, contacts=self.contacts, siconos_error=self.siconos_error,
            natural_residual=self.natural_residual, iterations=self.iterations, runs=self.runs,
            matched=self.matched, min_gap=self.min_gap,
        )  # fmt: skip
        if self.lu_s > 0:  # only when measured (benchmarks/bench_pile.py): a cost, not physics
            out.update(lu_s=self.lu_s, lu_ratio=self.lu_ratio)
        return out


@dataclass
class DumpedStep:
    """A step kept for :func:`~mcpkit.formats.fclib_hdf5.write_fclib_local`: its problem and solution."""

    step: int
    problem: LocalProblem
    r: np.ndarray
    u: np.ndarray


def sphere_energy(
    masses: np.ndarray, radii: np.ndarray, x: np.ndarray, v: np.ndarray, gravity: float
) -> tuple[np.ndarray, np.ndarray]:
    r"""Kinetic and potential energy [J] of solid spheres, summed over the spheres (the last axis but
    one of ``x`` ``(..., N, 3)`` and ``v`` ``(..., N, 6)``):
    :math:`T = \sum_a \tfrac12 m_a\|v_a\|^2 + \tfrac15 m_a R_a^2\|\omega_a\|^2`,
    :math:`V = \sum_a m_a g z_a`."""
    lin, ang = v[..., :3], v[..., 3:]
    per_sphere = 0.5 * masses * (lin**2).sum(axis=-1) + 0.2 * masses * radii**2 * (ang**2).sum(axis=-1)
    return per_sphere.sum(axis=-1), (masses * x[..., 2]).sum(axis=-1) * gravity


@dataclass
class PileRun:
    """What :func:`simulate_pile` returns."""

    records: list[PileStepRecord]
    positions: np.ndarray
    """Centres ``(K + 1, N, 3)`` at the start and after every step [m]."""
    radii: np.ndarray
    box: Box
    params: PileParams
    wall_s: float
    dumped: DumpedStep | None = None
    velocities: np.ndarray | None = None
    """Twists ``(K + 1, N, 6)`` (linear [m/s], angular [rad/s]) at the start and after every step."""

    @property
    def masses(self) -> np.ndarray:
        r""":math:`m_a = \rho\,\tfrac43\pi R_a^3` [kg]."""
        return self.params.density * (4.0 / 3.0) * math.pi * self.radii**3

    def energy(self) -> dict[str, np.ndarray]:
        r"""Kinetic, potential and total energy [J] at the start and after every step, ``(K + 1,)`` each:
        :math:`T = \sum_a \tfrac12 m_a\|v_a\|^2 + \tfrac15 m_a R_a^2\|\omega_a\|^2` (solid spheres,
        :math:`I_a = \tfrac25 m_a R_a^2`) and :math:`V = \sum_a m_a g z_a` (floor at :math:`z = 0`)."""
        twists = self.velocities
        if twists is None:
            twists = np.full(self.positions.shape[:2] + (6,), np.nan)
        kinetic, potential = sphere_energy(
            self.masses, self.radii, self.positions, twists, self.params.gravity
        )
        return {"kinetic": kinetic, "potential": potential, "total": kinetic + potential}

    def penetration(self) -> np.ndarray:
        r"""Deepest overlap [m] at the start of every step, ``(K,)``: :math:`\max(0, -\min g)` over the
        step's contacts (0 without contacts)."""
        return np.array([max(0.0, -r.min_gap) if math.isfinite(r.min_gap) else 0.0 for r in self.records])

    def __repr__(self) -> str:
        """A few lines: key fields, arrays by shape (:func:`~mcpkit.solving.tables.compact_repr`)."""
        return compact_repr(self)


def simulate_pile(
    pile: Pile,
    steps: int,
    *,
    measure_lu: bool = True,
    dump_step: int | None = None,
    on_step: Any = None,
) -> PileRun:
    """Advance ``pile`` (in place) by ``steps`` steps (module docstring); one record per step.

    ``measure_lu`` times one dense LU of each step's :math:`W` (:func:`lu_seconds`);
    ``dump_step`` keeps that step's problem and solution (0-based); ``on_step(record)`` is called
    after each step (progress).
    """
    if steps < 0:
        raise MCPInputError(f"steps must be non-negative, got {steps}")
    if dump_step is not None and not 0 <= dump_step < steps:
        raise MCPInputError(f"the step to dump must be in [0, {steps - 1}], got {dump_step}")
    t0 = time.perf_counter()
    p = pile.params
    records: list[PileStepRecord] = []
    positions = [pile.x.copy()]
    velocities = [pile.v.copy()]
    prev: Contacts | None = None
    r_prev: np.ndarray | None = None
    dumped = None
    for k in range(steps):
        lp = pile.local_problem()
        r0, matched = carry_reactions(prev, r_prev, lp.contacts)
        ts = time.perf_counter()
        res, runs = solve_local(
            lp.W, lp.q, lp.mu, r0, p.tol, p.max_iter, p.step_time_limit, p.fallback_limit, p.engine,
            nsgs_limit=p.nsgs_limit, prox_limit=p.prox_limit,
        )  # fmt: skip
        solve_s = time.perf_counter() - ts
        lu = lu_seconds(lp.W) if measure_lu and lp.nc else 0.0
        if k == dump_step:
            dumped = DumpedStep(k, lp, res.r.copy(), res.u.copy())
        pile.advance(lp, res.r)
        rec = PileStepRecord(
            step=k, t=pile.t, contacts=lp.nc, solved=res.solved, siconos_error=float(res.siconos_error),
            natural_residual=float(res.natural_residual), iterations=res.iterations, runs=runs,
            matched=matched, solve_s=solve_s, lu_s=lu,
            min_gap=float(lp.contacts.gap.min()) if lp.nc else math.inf, engine_message=res.message,
        )  # fmt: skip
        records.append(rec)
        positions.append(pile.x.copy())
        velocities.append(pile.v.copy())
        prev, r_prev = lp.contacts, res.r
        if on_step is not None:
            on_step(rec)
    wall = time.perf_counter() - t0
    return PileRun(
        records,
        np.array(positions),
        pile.radii.copy(),
        pile.box,
        p,
        wall,
        dumped,
        velocities=np.array(velocities),
    )


def make_pile(
    n_bodies: int,
    seed: int = 0,
    radius_range: tuple[float, float] = (0.04, 0.06),
    layers: int = 4,
    params: PileParams | None = None,
) -> Pile:
    """``n_bodies`` spheres (radii uniform in ``radius_range``, seeded) on a square grid of about
    ``layers`` layers above the floor of a box just wide enough, with a gap of 5 % of the largest
    diameter between grid cells, a random lateral offset and a small random lateral velocity.
    """
    if n_bodies < 1:
        raise MCPInputError(f"a pile needs at least one body, got {n_bodies}")
    lo, hi = radius_range
    if not 0 < lo <= hi:
        raise MCPInputError(f"radius_range must satisfy 0 < low <= high, got {radius_range}")
    rng = np.random.default_rng(seed)
    radii = rng.uniform(lo, hi, n_bodies)
    s = 2.0 * hi * 1.05
    m = max(1, math.ceil(math.sqrt(n_bodies / max(layers, 1))))
    k = np.arange(n_bodies)
    layer, cell = np.divmod(k, m * m)
    i, j = np.divmod(cell, m)
    x = np.column_stack([(i + 0.5) * s, (j + 0.5) * s, hi * 1.05 + layer * s])
    x[:, :2] += rng.uniform(-0.02, 0.02, (n_bodies, 2)) * s
    v = np.zeros((n_bodies, 6))
    v[:, :2] = rng.normal(0.0, 0.05, (n_bodies, 2))
    return Pile(x=x, v=v, radii=radii, box=Box(m * s, m * s), params=params or PileParams())
