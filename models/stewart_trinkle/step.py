r"""Shared machinery of the Stewart–Trinkle step models (Berard et al. eqs 9 and 15).

Both formulations are velocity-level: with impulses scaled to velocity units,
:math:`\beta = h\lambda/m_s` (:math:`m_s` the body mass), the Newton–Euler row of eqs (9)/(15)
divided by :math:`m_s` reads

.. math::
    \hat M\nu^{\ell+1} - b - W_n\beta_n - W_f\beta_f = 0,\qquad
    \hat M = M(q^\ell)/m_s,\quad b = \hat M\nu^\ell + h(\lambda_\mathrm{app}+\lambda_\mathrm{vp})/m_s,

and the non-penetration row, divided by :math:`h`,

.. math::
    0 \le \beta_n \perp \psi_n(q^\ell, t_{\ell+1})/h + W_n^T\nu^{\ell+1} \ge 0 .

Everything that depends on the state (:math:`\hat M, b, \psi_n/h, W_n, W_t, W_o, u_t, u_o, \mu`)
is an MCP *parameter* block, so one :class:`mcpkit.Solver` is built once and every step is
a warm parametric re-solve. The state vector is :math:`x = (q, \nu)`.

The step is declared at block level (:mod:`mcpkit.problems.blocks`): :math:`\hat M` and the wrench
matrices :math:`W_n, W_t, W_o \in \mathbb{R}^{n_v\times n_c}` (one column per contact, as in the
paper) are matrix parameters, stored flattened row-major (``W.reshape(-1)``), and the function
blocks are written as the paper writes them, so ``mcp.to_text()`` prints eqs (9)/(15) with one
line per block whatever the number of contacts, and the lowering does one product per matrix.

Controls :math:`u` (optional, ``input_matrix`` :math:`B`) enter as the generalised force
:math:`Bu` added to :math:`\lambda_\mathrm{app}` for the step. The step map
:math:`P(x, u, t)` above and :math:`\Phi(x, z) = (q + hG(q)\nu^{\ell+1}, \nu^{\ell+1})` are
written once against an array namespace (:class:`~mcpkit.models.stepping.DeclaredStep`):
NumPy for :func:`~mcpkit.models.stepping.simulate`, CasADi for
:meth:`~mcpkit.mpec.step.StepSpec.from_model`.

**Physical verdict** (issue 12). A step is *solved* when its MCP met its natural residual
**and** the per-contact Coulomb residual below, which contains no :math:`\sigma`, met
``friction_tol`` (:meth:`StewartTrinkleStep.judge`, :class:`StepSolver`, :class:`StepResult`).
For contact :math:`i`, in the step's velocity units (impulses :math:`\beta` and velocities share
them):

.. math::
    r_i &= (\beta_{n,i},\ f_i), \qquad
    u_i = (u_{n,i},\ u_{f,i}) = \bigl(\psi_i/h + W_{n,i}^T\nu,\ \ W_{t,i}^T\nu - u_{t,i},\
          W_{o,i}^T\nu - u_{o,i}\bigr),\\
    K_i &= \{(a, b) : b \in a\,\mu_i P\},\qquad
    \hat u_i = \bigl(u_{n,i} + \mu_i h_P(-u_{f,i}),\ u_{f,i}\bigr),\qquad
    h_P(w) = \max_{p \in P} p\cdot w,\\
    e_i &= \bigl\|r_i - \Pi_{K_i}(r_i - \hat u_i)\bigr\|_2,\\
    s &= \max_i \max\bigl(\|r_i\|_2,\ \|w_i\|_2\bigr),\qquad
    w_i = \bigl(W_{n,i}^T\nu_0,\ W_{t,i}^T\nu_0 - u_{t,i},\ W_{o,i}^T\nu_0 - u_{o,i}\bigr),\qquad
    \nu_0 = \hat M^{-1} b,\\
    \hat e_i &= e_i / \max(s, 10^{-300}), \qquad
    \text{solved} \iff \text{MCP solved} \wedge \max_i \hat e_i \le \texttt{friction\_tol}.

The friction impulse :math:`f_i` and the set :math:`P` are the formulation's: for the NCP,
:math:`f_i = (\beta_{t,i}, \beta_{o,i})` and :math:`P` the unit disc
(:math:`h_P(w) = \|w\|_2`, :math:`\hat u_i` is De Saxcé's velocity and :math:`e_i` the per-contact
term of the Siconos error of :mod:`mcpkit.models.fclib`); for the LCP,
:math:`f_i = \sum_j \beta_{f,ij} d_j` with :math:`d_j = (\cos\phi_j, \sin\phi_j)` and
:math:`P = \operatorname{conv}\{d_j\}` (:math:`h_P(w) = \max_j d_j\cdot w`). In 2-D the
:math:`o` components are absent and both sets are :math:`[-1, 1]`.

* :math:`e_i = 0` exactly when contact :math:`i` obeys Signorini's condition and Coulomb's law
  with maximal dissipation over :math:`\mu_i\beta_{n,i}P`: :math:`K_i \ni r_i \perp \hat u_i \in
  K_i^*` (:math:`\hat u_i \in K_i^* \Leftrightarrow u_{n,i} \ge 0`, and
  :math:`r_i\cdot\hat u_i = \beta_{n,i}u_{n,i} + (\mu_i\beta_{n,i}h_P(-u_{f,i}) + f_i\cdot u_{f,i})`
  is a sum of two non-negative terms). These are the step's own complementarity conditions for
  the contact with :math:`\sigma` eliminated, so at an exact solution of eq (9) or (15)
  :math:`e_i = 0`, and a point where :math:`\sigma` ran away (NCP: :math:`\sigma\beta_t \approx
  -\mu\beta_n v_t` met with :math:`\beta_t \approx 0`) has :math:`e_i \approx \mu_i\beta_{n,i}`.
* :math:`e_i` is linear in :math:`(r_i, u_i)` up to the projection (positively homogeneous of
  degree one), whereas the NCP's friction rows are quadratic in :math:`\beta`: an absolute
  natural residual :math:`\tau` there allows a friction-impulse error of about
  :math:`\tau/(2\mu\beta_n)` (cone row, sliding) or a sticking velocity of
  :math:`\tau/(\mu\beta_n)` (tangential rows), which is what the check exposes.
* :math:`s` is the step's velocity scale: the largest contact impulse or free contact
  velocity (the contact points' velocity at the end of the step without contact impulses,
  tangential components relative to the surface), a number fixed by the data but for the
  impulses. It is degree-one homogeneous like :math:`e_i`, so
  :math:`\hat e_i` is dimensionless and unchanged when velocities and impulses are rescaled
  (a change of units, or of the scaling of any reformulation). It is one number per step, not
  per contact, so numerical noise at a separated or idle contact (:math:`r_i \approx 0`,
  :math:`u_{f,i} \approx 0`) is not mistaken for a relative error of order one, and it leaves
  out the gap rate :math:`\psi_i/h`, which for a distant contact can exceed every velocity of
  the motion and would loosen the check for the other contacts. :math:`s` is zero only when
  nothing moves and no impulse acts; the floor :math:`10^{-300}` then fails any
  :math:`e_i > 0`.
* Since :math:`e_i \le \|r_i - \Pi_{K_i}(r_i)\| + \|\hat u_i\|`, :math:`\hat e_i` is of order one
  at worst: it reads as a relative error of the contact law.
* Defaults. The MCP's residual is absolute, in the body's units (velocity and velocity² rows):
  without ``tol`` (and without ``options``) a step is solved to :data:`DEFAULT_STEP_TOL` of its
  units, ``1e-12`` in SI and ``1e-8`` in cgs, the same :math:`10^{-8}\,\mathrm{cm^2/s^2} =
  10^{-12}\,\mathrm{m^2/s^2}` on the quadratic cone row, and judged at ``friction_tol = 1e-8``
  (:data:`DEFAULT_FRICTION_TOL`). Measured: a particle at rest or sliding at 5 cm/s and a
  four-corner box sliding at 3.6 cm/s (h = 1 ms, μ = 0.3) are solved on every step in both unit
  systems; with ``tol = 1e-8`` in SI (a relative tolerance 10⁴ times looser) 27 of 30, 9 of 10
  and 9 of 15 steps were.
* ``friction_tol`` defaults to the MCP's ``tol`` when ``tol`` is given. The Coulomb check is
  relative: where :math:`s < 1` in the model's units, or
  :math:`\mu\beta_n` is small, it is the stricter of the two, and an NCP solved just to ``tol``
  may fail it (measured: the Vose plate at :math:`h = 10^{-4}`, :math:`s \approx 0.1` cm/s, 9 of
  1500 penalty steps at up to :math:`1.1\cdot10^{-7}`). Solve the MCP tighter there
  (:data:`~.studies.STUDY_TOL`) rather than loosen ``friction_tol``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError, SolveFailedError
from mcpkit.frontends.solve import Solver
from mcpkit.models.arrays import ArrayNamespace
from mcpkit.models.stepping import DeclaredStep
from mcpkit.models.stewart_trinkle.bodies import Body
from mcpkit.models.stewart_trinkle.contact import Contact, ContactGeometry, contact_geometry
from mcpkit.problems.arrays import ArrayLike
from mcpkit.problems.blocks import Param
from mcpkit.problems.mcp import MCP
from mcpkit.solving.options import SolveOptions
from mcpkit.solving.result import (
    RESULT_KEYS,
    SUMMARY_KEYS,
    FromParts,
    HomotopyStep,
    MCPResult,
    SolutionStatus,
    ToleranceCheck,
    summary_head,
)


@dataclass
class StepSymbols:
    r"""Parameter blocks shared by the NCP and LCP declarations (block expressions).

    Shapes: :math:`\hat M \in \mathbb{R}^{n_v\times n_v}`, :math:`b \in \mathbb{R}^{n_v}`,
    :math:`W_n, W_t, W_o \in \mathbb{R}^{n_v\times n_c}`, and :math:`\psi_n/h, u_t, u_o, \mu \in
    \mathbb{R}^{n_c}`; ``Wo`` and ``uo`` are ``None`` for planar bodies.
    """

    Mhat: Param
    b: Param
    psi_h: Param
    Wn: Param
    Wt: Param
    Wo: Param | None
    ut: Param
    uo: Param | None
    mu: Param


#: Floor of the step scale :math:`s` (module docstring): with nothing moving and no impulse, any
#: :math:`e_i > 0` fails.
SCALE_FLOOR = 1e-300


def project_disc_cone(x: tuple[float, ...], mu: float) -> tuple[float, ...]:
    r"""Euclidean projection of :math:`x = (a, b)` onto :math:`K = \{(a, b): \|b\|_2 \le \mu a\}`.

    :math:`x` itself when :math:`\|b\| \le \mu a`; :math:`0` when :math:`\mu\|b\| \le -a` (the
    polar cone); otherwise :math:`\bigl(c,\ \mu c\, b/\|b\|\bigr)` with
    :math:`c = (a + \mu\|b\|)/(1 + \mu^2)`. ``b`` has one or two components; :math:`\mu \ge 0`.
    """
    a, b = x[0], x[1:]
    nb = math.hypot(*b)
    if nb <= mu * a:
        return tuple(x)
    if mu * nb <= -a:
        return (0.0,) * len(x)
    c = (a + mu * nb) / (1.0 + mu * mu)  # here nb > 0
    return (c, *(mu * c * bk / nb for bk in b))


def project_polygon_cone(x: tuple[float, float, float], mu: float, n_d: int) -> tuple[float, float, float]:
    r"""Euclidean projection of :math:`x = (a, b_t, b_o)` onto the polyhedral friction cone of
    :class:`~.lcp.LCPStep`, :math:`K = \operatorname{cone}\{g_j\}`,
    :math:`g_j = (1, \mu\cos\phi_j, \mu\sin\phi_j)`, :math:`\phi_j = 2\pi j/n_d`, :math:`n_d \ge 3`.

    :math:`K` is symmetric under the reflections of the regular :math:`n_d`-gon, and the
    projection onto a convex set symmetric about a plane lies on the same side of it as
    :math:`x`; so it lies in the closed sector :math:`k\Delta \le \theta \le (k+1)\Delta`
    (:math:`\Delta = 2\pi/n_d`) that holds the angle :math:`\theta` of :math:`(b_t, b_o)`. There
    the candidates are: :math:`x` itself, when :math:`x \in K`, i.e.
    :math:`\|b\|\cos\delta \le \mu a\cos(\Delta/2)` with :math:`\delta = |\theta - (k+\tfrac12)\Delta|`
    (the polygon's facets are at distance :math:`\cos(\Delta/2)` from its centre); the facet
    :math:`\operatorname{cone}\{g_k, g_{k+1}\}` (projection :math:`y = x - (n\cdot x)\,n/\|n\|^2`
    onto its plane, :math:`n = g_k\times g_{k+1}`, kept when both coefficients of
    :math:`y = c_1 g_k + c_2 g_{k+1}`, :math:`c_1\|n\|^2 = (y\times g_{k+1})\cdot n` and
    :math:`c_2\|n\|^2 = (g_k\times y)\cdot n`, are :math:`\ge 0`); the edges
    :math:`\max(g\cdot x, 0)\,g/\|g\|^2` for :math:`g = g_k, g_{k+1}`; and the apex 0. For
    :math:`x \notin K` the projection lies in the facet cone, so a facet candidate (the plane
    projection lying inside the facet) is the projection itself and is returned at once: it is
    nearer than every point of its edges, by a margin of order :math:`\mu^2` that a comparison
    of lengths cannot resolve when :math:`\mu` is tiny (:math:`\mu = 10^{-9}` returned a vertex
    :math:`5\cdot 10^{-10}` away). Otherwise each remaining candidate :math:`y` lies in :math:`K`
    and is the orthogonal projection of :math:`x` onto a subspace, so
    :math:`\|x - y\|^2 = \|x\|^2 - \|y\|^2`: the projection is the longest candidate
    (compared without the cancellation of :math:`\|x - y\|^2`, which cannot tell candidates apart
    closer than :math:`\sqrt{\epsilon}\,\|x\|`). :math:`\mu = 0` gives the ray
    :math:`\{(a, 0, 0): a \ge 0\}`.
    """
    a, bt, bo = x
    if mu == 0.0:
        return (max(a, 0.0), 0.0, 0.0)
    delta_phi = 2.0 * math.pi / n_d
    nb = math.hypot(bt, bo)
    theta = math.atan2(bo, bt) % (2.0 * math.pi)
    k = min(int(theta // delta_phi), n_d - 1)
    if nb * math.cos(abs(theta - (k + 0.5) * delta_phi)) <= mu * a * math.cos(0.5 * delta_phi):
        return (a, bt, bo)
    g1 = (1.0, mu * math.cos(k * delta_phi), mu * math.sin(k * delta_phi))
    g2 = (1.0, mu * math.cos((k + 1) * delta_phi), mu * math.sin((k + 1) * delta_phi))
    candidates = [(0.0, 0.0, 0.0)]
    for g in (g1, g2):
        candidates.append(tuple(max(_dot(g, x), 0.0) / _dot(g, g) * gi for gi in g))
    n = _cross(
        g1, g2
    )  # normal of the facet's plane; |n|^2 = |g1|^2 |g2|^2 - (g1 . g2)^2 without cancellation
    n_max = max(abs(ni) for ni in n)
    if n_max > 0.0:  # scaled to max |n_i| = 1: for mu ~ 1e-158 |n|^2 ~ mu^2 is subnormal (9 digits)
        n = tuple(ni / n_max for ni in n)
    nn = _dot(n, n)
    if nn > 0.0:  # (0 only when mu^2 underflows: then the edges are the cone)
        y = _sub(x, tuple(_dot(n, x) / nn * ni for ni in n))  # projection onto the plane = c1 g1 + c2 g2
        if _dot(_cross(y, g2), n) >= 0.0 and _dot(_cross(g1, y), n) >= 0.0:  # c1 |n|^2, c2 |n|^2
            return y  # inside the facet: the nearest point of the facet, hence of K (docstring)
    # an edge y_j = max(g_j . x, 0) g_j / |g_j|^2 has length max(a + mu u_j . b, 0) / |g_j| with
    # the same |g_j| for both, so the longer is the one with the larger mu u_j . b: compared so,
    # not through |y_j|^2, whose difference (of order mu |b| a) rounds away against a^2 when
    # mu |b| is below eps a (mu = 5e-10, |b| = 1e-7: both lengths were 1.0, and the wrong
    # vertex was returned); when neither edge has g_j . x > 0 both are the apex
    t1, t2 = g1[1] * bt + g1[2] * bo, g2[1] * bt + g2[2] * bo
    return candidates[1] if t1 >= t2 else candidates[2]


def _flat(a: Any) -> np.ndarray:
    """``a`` as a 1-D float array (no copy when it already is one)."""
    if isinstance(a, np.ndarray) and a.ndim == 1 and a.dtype == np.float64:
        return a
    return np.asarray(a, dtype=float).reshape(-1)


def _solve_mass(M: np.ndarray, b: np.ndarray) -> np.ndarray:
    """:math:`M^{-1}b` (elementwise for a diagonal :math:`M`, as for particles and planar bodies)."""
    d = np.diagonal(M)
    if np.count_nonzero(M) == np.count_nonzero(d):
        return b / d
    return np.linalg.solve(M, b)


def _dot(u: tuple[float, ...], w: tuple[float, ...]) -> float:
    return sum(ui * wi for ui, wi in zip(u, w, strict=True))


def _cross(u: tuple[float, ...], w: tuple[float, ...]) -> tuple[float, float, float]:
    return (u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0])


def _sub(u: tuple[float, ...], w: tuple[float, ...]) -> tuple[float, ...]:
    return tuple(ui - wi for ui, wi in zip(u, w, strict=True))


@dataclass(frozen=True)
class FrictionResidual:
    r"""Per-contact Coulomb residual of a step point (module docstring, "Physical verdict").

    Attributes
    ----------
    absolute
        :math:`e_i`, shape ``(nc,)``, in the step's velocity units.
    scale
        The step scale :math:`s` (same units).
    """

    absolute: np.ndarray
    scale: float

    @cached_property
    def relative(self) -> np.ndarray:
        r""":math:`\hat e_i = e_i / \max(s, 10^{-300})`."""
        return self.absolute / max(self.scale, SCALE_FLOOR)

    @cached_property
    def worst(self) -> int:
        """Index of the contact with the largest :math:`\\hat e_i` (the first non-finite one, if any)."""
        rel = self.relative.tolist()
        bad = [i for i, x in enumerate(rel) if not math.isfinite(x)]
        return bad[0] if bad else max(range(len(rel)), key=rel.__getitem__)

    @cached_property
    def value(self) -> float:
        r""":math:`\max_i \hat e_i` (``nan`` when any is not finite)."""
        rel = self.relative.tolist()
        return max(rel) if all(math.isfinite(x) for x in rel) else math.nan


@dataclass(repr=False)
class StepResult(FromParts):
    r"""One Stewart–Trinkle step judged on its MCP **and** on the Coulomb residual (an ``Outcome``).

    Its parts are the MCP solve (natural residual of eq 9 or 15 at the solve's ``tol``) and the
    :class:`~mcpkit.solving.result.ToleranceCheck` :attr:`friction`: :math:`\max_i \hat e_i \le`
    ``friction_tol`` (module docstring); ``solved`` and ``termination`` come from them
    (:class:`~mcpkit.solving.result.FromParts`). When the MCP met its residual and the Coulomb check did
    not, the message says so and names the contact. The MCP result's fields (``z``, ``F``,
    ``natural_residual``, ``iterations``, ``method``, ``backend``, :meth:`block` ...) are
    available here too, so a :class:`StepResult` stands where
    :func:`~mcpkit.models.stepping.simulate` expects a step's result.

    Attributes
    ----------
    solve
        The :class:`~mcpkit.solving.result.MCPResult` of the step MCP.
    friction
        The Coulomb-residual check (its quantity names the worst contact).
    residual
        The per-contact :class:`FrictionResidual` (``None`` without a finite point).
    formulation
        ``"ncp"`` (eq 9) or ``"lcp"`` (eq 15).
    """

    solve: MCPResult
    friction: ToleranceCheck
    residual: FrictionResidual | None
    formulation: str

    kind: ClassVar[str] = "stewart_trinkle_step"
    part_name: ClassVar[str] = "check"

    @property
    def parts(self) -> list[Any]:
        """The MCP solve, then the Coulomb check."""
        return [self.solve, self.friction]

    @property
    def message(self) -> str:
        """Both verdicts; when they disagree, that the MCP met its residual but the contact did not."""
        res = self.residual
        detail = ""
        if res is not None and self.friction.finite:
            i = res.worst
            detail = f" (e = {res.absolute[i]:.2e}, step scale s = {res.scale:.2e})"
        if self.solved:
            return f"solved: {self.friction.message}{detail}; {self.solve.message}"
        if self.solve.solved:
            return (
                f"NOT solved: {self.friction.message}{detail}, although the step MCP met its natural "
                f"residual ({self.solve.message}): the friction law is violated"
            )
        return f"{self.solve.message}; {self.friction.message}{detail}"

    @property
    def failure_note(self) -> str:
        """Which measure failed and by how much (``""`` when solved); a simulation's
        :class:`~mcpkit.models.stepping.StepOutcome` carries it into its message."""
        if self.solved:
            return ""
        nat, tol = self.solve.natural_residual, self.solve.tol
        mcp = f"MCP natural residual {nat:.2e} {'<=' if self.solve.solved else '>'} {tol:.0e}"
        if self.friction.solved:
            return mcp
        fr = self.friction
        if not fr.finite:
            coulomb = fr.message
        else:
            res = self.residual
            e = (
                f", e = {res.absolute[res.worst]:.2e}, step scale s = {res.scale:.2e}"
                if res is not None
                else ""
            )
            coulomb = f"{fr.message} ({float(fr.value) / fr.tol:.3g} x the tolerance{e})"  # type: ignore[arg-type]
        if self.solve.solved:
            return f"{coulomb}, although the {mcp}: the friction law is violated"
        return f"{mcp}; {coulomb}"

    # -- the MCP result's fields --------------------------------------------------------
    @property
    def z(self) -> np.ndarray:
        """The step MCP's point."""
        return self.solve.z

    @property
    def x(self) -> np.ndarray:
        """Alias of :attr:`z`."""
        return self.solve.z

    @property
    def F(self) -> np.ndarray:
        """:math:`F(z; p)` of the step MCP."""
        return self.solve.F

    @property
    def natural_residual(self) -> float:
        """The step MCP's natural residual."""
        return self.solve.natural_residual

    @property
    def friction_residual(self) -> float | None:
        r""":math:`\max_i \hat e_i` (``None`` without a finite value)."""
        return float(self.friction.value) if self.friction.finite else None  # type: ignore[arg-type]

    @property
    def solution_status(self) -> SolutionStatus:
        """The MCP's status, ``INACCURATE`` when only the Coulomb check failed."""
        if self.solve.solved and not self.friction.solved:
            return SolutionStatus.INACCURATE
        return self.solve.solution_status

    @property
    def success(self) -> bool:
        """Alias of :attr:`solved`."""
        return self.solved

    @property
    def tol(self) -> float:
        """The MCP's tolerance (the Coulomb check's is ``friction.tol``)."""
        return self.solve.tol

    @property
    def iterations(self) -> int:
        """Inner iterations of the MCP solve."""
        return self.solve.iterations

    @property
    def nit(self) -> int:
        """Alias of :attr:`iterations`."""
        return self.solve.iterations

    @property
    def wall_time_s(self) -> float:
        """MCP solve plus Coulomb check."""
        return self.solve.wall_time_s + self.friction.wall_time_s

    @property
    def method(self) -> str:
        """The route's method."""
        return self.solve.method

    @property
    def backend(self) -> str:
        """The route's backend."""
        return self.solve.backend

    @property
    def trace(self) -> list[HomotopyStep]:
        """The MCP solve's trace."""
        return self.solve.trace

    @property
    def raw_status(self) -> str:
        """The MCP solver's raw status."""
        return self.solve.raw_status

    @property
    def blocks(self) -> dict[str, slice]:
        """Block name -> slice into :attr:`z`."""
        return self.solve.blocks

    def block(self, name: str) -> np.ndarray:
        """The part of :attr:`z` of variable block ``name``."""
        return self.solve.block(name)

    def block_F(self, name: str) -> np.ndarray:
        """The part of :attr:`F` paired with block ``name``."""
        return self.solve.block_F(name)

    def __getattr__(self, name: str) -> Any:
        """Any other field of the MCP result (``complementarity_violation``, ``pair_states``,
        ``extra`` ...) is read from :attr:`solve`."""
        if name == "solve" or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.solve, name)

    def summary(self) -> dict[str, Any]:
        """:data:`~mcpkit.solving.result.SUMMARY_KEYS` (the MCP's after the verdict's head), then the
        Coulomb residual, its tolerance, the worst contact, the per-contact :math:`\\hat e_i` and
        :math:`s`."""
        out = summary_head(self.kind, self, self.wall_time_s)
        s = self.solve.summary()
        out.update({k: s[k] for k in SUMMARY_KEYS if k not in RESULT_KEYS})
        out["solution_status"] = self.solution_status.value
        res = self.residual
        out.update(
            formulation=self.formulation,
            natural_residual=s["comp_residual"],
            friction_residual=self.friction_residual,
            friction_tol=self.friction.tol,
            worst_contact=None if res is None else res.worst,
            contact_residuals=None if res is None else [float(v) for v in res.relative],
            step_scale=None if res is None else float(res.scale),
        )
        return out

    def raise_if_failed(self) -> StepResult:
        """Return ``self`` when solved, else raise :class:`~mcpkit.errors.SolveFailedError`."""
        if not self.solved:
            raise SolveFailedError(self.message, result=self)
        return self

    def __repr__(self) -> str:
        fr = self.friction_residual
        return (
            f"StepResult(solved={self.solved}, termination={self.termination.value}, "
            f"natural_residual={self.natural_residual:.2e} (tol {self.tol:.0e}), "
            f"friction_residual={'none' if fr is None else f'{fr:.2e}'} (tol {self.friction.tol:.0e}), "
            f"formulation={self.formulation}, route={self.method}/{self.backend})"
        )


DEFAULT_STEP_TOL = {"SI": 1e-12, "cgs": 1e-8}
r"""Natural-residual tolerance of a step solved without ``tol``, per unit system: one tolerance,
:math:`10^{-12}\,\mathrm{m^2/s^2} = 10^{-8}\,\mathrm{cm^2/s^2}`, on the quadratic cone row."""

DEFAULT_FRICTION_TOL = 1e-8
"""Relative Coulomb-residual tolerance of a step solved without ``tol`` (dimensionless)."""


def _friction_tol(value: Any, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise MCPInputError(f"friction_tol must be a positive finite number, got {value!r}")
    v = float(value)
    if not (v > 0 and math.isfinite(v)):
        raise MCPInputError(f"friction_tol must be a positive finite number, got {value!r}")
    return v


class StewartTrinkleStep(DeclaredStep):
    r"""Base class of :class:`~.ncp.NCPStep` and :class:`~.lcp.LCPStep` (a declared ``StepModel``).

    Parameters
    ----------
    body
        The dynamic body (:class:`~.bodies.Particle`, :class:`~.bodies.PlanarBody` or
        :class:`~.bodies.RigidBody3D`).
    contacts
        Its potential point contacts (all surfaces of the body's dimension).
    h
        Time step :math:`h > 0` [s].
    input_matrix
        Optional :math:`B` of shape ``(nv, n_control)``: the controls :math:`u_k` of step
        :math:`k` add the generalised force :math:`Bu_k` (bind them with
        :meth:`~mcpkit.models.stepping.DeclaredStep.with_inputs`). ``None``: no controls.
    """

    formulation = "base"

    def __init__(self, body: Body, contacts: list[Contact], h: float, *, input_matrix: Any = None) -> None:
        if not isinstance(h, (int, float)) or not math.isfinite(h):
            raise NonFiniteError(f"time step h must be a finite number, got {h!r}")
        if h <= 0:
            raise MCPInputError(f"time step h must be positive, got {h!r}")
        if not contacts:
            raise MCPInputError("at least one contact is needed")
        for c in contacts:
            if not isinstance(c, Contact):
                raise MCPInputError(f"contacts must be Contact objects, got {type(c).__name__}")
            if c.surface.dim != body.dim:
                raise ShapeError(
                    f"a {c.surface.dim}-D surface cannot touch a {body.dim}-D body ({type(body).__name__})"
                )
        self.body = body
        self.contacts = list(contacts)
        self.h = float(h)
        self.nc = len(contacts)
        self.nv = body.nv
        self.nq = body.nq
        self.n_state = self.nq + self.nv
        self.input_matrix = self._input_matrix(input_matrix)
        self.n_control = 0 if self.input_matrix is None else int(self.input_matrix.shape[1])
        self.three_d = body.dim == 3
        self.mass_scale = float(body.mass)
        self.mcp = MCP(f"stewart_trinkle_{self.formulation}")
        self.sym = self._declare_parameters()
        self._declare()
        self.mcp.validate()
        self.last_geometry: ContactGeometry | None = None

    @property
    def units(self) -> str:
        """Unit system of the body (``"SI"`` or ``"cgs"``, see :mod:`.bodies`)."""
        return str(getattr(self.body, "units", "SI"))

    def _input_matrix(self, B: Any) -> np.ndarray | None:
        if B is None:
            return None
        try:
            a = np.asarray(B, dtype=float)
        except (TypeError, ValueError):
            raise MCPInputError(f"input_matrix must be numeric, got {B!r}") from None
        if a.ndim == 1:
            a = a.reshape(-1, 1)
        if a.ndim != 2 or a.shape[0] != self.nv or a.shape[1] < 1:
            raise ShapeError(
                f"input_matrix must have shape (nv, n_control) = ({self.nv}, >= 1), got {a.shape}"
            )
        if not np.isfinite(a).all():
            raise NonFiniteError("input_matrix contains NaN or inf")
        return a

    # ------------------------------------------------------------------ declaration
    def _declare_parameters(self) -> StepSymbols:
        m, nc, nv = self.mcp, self.nc, self.nv
        vv, vc, c = ("n_v", "n_v"), ("n_v", "n_c"), "n_c"
        Mhat = m.add_parameter_block("Mhat", (nv, nv), np.eye(nv), latex=r"\hat M", dim=vv)
        b = m.add_parameter_block("b", nv, latex="b", dim="n_v")
        psi_h = m.add_parameter_block("psi_h", nc, latex=r"\psi_n/h", dim=c)
        Wn = m.add_parameter_block("Wn", (nv, nc), latex="W_n", dim=vc)
        Wt = m.add_parameter_block("Wt", (nv, nc), latex="W_t", dim=vc)
        Wo = m.add_parameter_block("Wo", (nv, nc), latex="W_o", dim=vc) if self.three_d else None
        ut = m.add_parameter_block("ut", nc, latex="u_t", dim=c)
        uo = m.add_parameter_block("uo", nc, latex="u_o", dim=c) if self.three_d else None
        mu = m.add_parameter_block("mu", nc, [ct.mu for ct in self.contacts], latex=r"\mu", dim=c)
        return StepSymbols(Mhat, b, psi_h, Wn, Wt, Wo, ut, uo, mu)

    def _declare(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # ------------------------------------------------------------------ StepModel
    def split_state(self, state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(q, v)`` from the state vector."""
        x = np.asarray(state, dtype=float).reshape(-1)
        if x.shape != (self.nq + self.nv,):
            raise ShapeError(f"state must have nq + nv = {self.nq + self.nv} entries, got {x.shape}")
        return x[: self.nq], x[self.nq :]

    def initial_state(self, q0: object, v0: object | None = None) -> np.ndarray:
        """State vector from configuration and velocity (validated)."""
        q = np.asarray(q0, dtype=float).reshape(-1)
        v = np.zeros(self.nv) if v0 is None else np.asarray(v0, dtype=float).reshape(-1)
        if q.shape != (self.nq,) or v.shape != (self.nv,):
            raise ShapeError(f"q0 must have {self.nq} and v0 {self.nv} entries, got {q.shape}, {v.shape}")
        if not (np.isfinite(q).all() and np.isfinite(v).all()):
            raise NonFiniteError("initial state contains NaN or inf")
        if self.nq == 7:
            q = q.copy()
            q[3:7] /= np.linalg.norm(q[3:7])
        return np.concatenate([q, v])

    def check_state(self, state: np.ndarray) -> np.ndarray:
        """The state :math:`(q, \\nu)` validated (shape ``nq + nv``)."""
        q, v = self.split_state(state)
        return np.concatenate([q, v])

    def constants(self) -> dict[str, Any]:
        r"""``mu``: the contacts' friction coefficients (``nc`` values), which the step map reads
        through :meth:`~mcpkit.models.stepping.DeclaredStep.constant` (so a simulation can be
        differentiated by them, :func:`~mcpkit.models.stepping_gradient.simulate_with_gradient`)."""
        return {"mu": np.array([c.mu for c in self.contacts])}

    def step_parameters(self, xp: ArrayNamespace, x: Any, u: Any, theta: Any, t: Any) -> dict[str, Any]:
        """Parameter values of the step from :math:`t` to :math:`t+h` (module docstring)."""
        q, v = x[: self.nq], x[self.nq :]
        g = contact_geometry(self.body, q, self.contacts, t + self.h, xp)
        if xp.numeric:
            self.last_geometry = g
        Mhat = self.body.mass_matrix(q, xp) / self.mass_scale
        force = self.body.forces(q, v, t, xp)
        if self.input_matrix is not None:
            force = force + xp.matmul(self.input_matrix, u)
        b = xp.matmul(Mhat, v) + self.h * force / self.mass_scale
        p: dict[str, Any] = {  # matrix parameters flattened row-major, W = [W_1 ... W_nc] (nv x nc)
            "Mhat": xp.flat(Mhat),
            "b": b,
            "psi_h": g.psi / self.h,
            "Wn": xp.flat(g.Wn.T),
            "Wt": xp.flat(g.Wt.T),
            "ut": g.ut,
            "mu": self.constant("mu"),
        }
        if self.three_d:
            p["Wo"] = xp.flat(g.Wo.T)
            p["uo"] = g.uo
        return p

    def step_update(self, xp: ArrayNamespace, x: Any, z: Any, u: Any, theta: Any, t: Any) -> Any:
        r""":math:`\nu^{\ell+1}` from the solution, :math:`q^{\ell+1} = q^\ell + hG\nu^{\ell+1}`."""
        v_next = z[self._v_slice]
        return xp.concat([self.body.integrate(x[: self.nq], v_next, self.h, xp), v_next])

    @property
    def _v_slice(self) -> slice:
        return {b.name: b.slice for b in self.mcp.blocks}["v"]

    # ------------------------------------------------------------------ physical verdict
    def _impulses(self, zb: dict[str, np.ndarray]) -> list[tuple[float, ...]]:  # pragma: no cover
        r""":math:`r_i = (\beta_{n,i}, f_i)` per contact (module docstring)."""
        raise NotImplementedError

    def _support(self, w: tuple[float, ...]) -> float:  # pragma: no cover - abstract
        r""":math:`h_P(w)` of the friction set :math:`P`."""
        raise NotImplementedError

    def _project(self, x: tuple[float, ...], mu: float) -> tuple[float, ...]:  # pragma: no cover
        r"""Projection onto the friction cone :math:`K` with coefficient :math:`\mu`."""
        raise NotImplementedError

    def _parameter_values(self, p: ArrayLike | dict[str, ArrayLike] | None) -> dict[str, np.ndarray]:
        """Parameter values by block name (a complete dict, as :meth:`parameters` returns, as is)."""
        names = self._layout[1]
        if isinstance(p, dict) and all(k in p for k in names):
            return {k: _flat(p[k]) for k in names}
        pv = self.mcp.parameter_vector(p)
        return {k: pv[sl] for k, sl in names.items()}

    @property
    def _tangent_blocks(self) -> list[tuple[str, str]]:
        """``(W, u)`` parameter names of the tangent directions (``t``, and ``o`` in 3-D)."""
        return [("Wt", "ut"), ("Wo", "uo")] if self.three_d else [("Wt", "ut")]

    @property
    def _layout(self) -> tuple[dict[str, slice], dict[str, slice]]:
        """Variable and parameter block slices (the declaration is fixed at construction)."""
        cached = getattr(self, "_layout_cache", None)
        if cached is None:
            cached = (
                {b.name: b.slice for b in self.mcp.blocks},
                {b.name: b.slice for b in self.mcp.parameter_blocks},
            )
            self._layout_cache = cached
        return cached

    def friction_residual(self, p: ArrayLike | dict[str, ArrayLike] | None, z: ArrayLike) -> FrictionResidual:
        r"""The per-contact Coulomb residual :math:`e_i` and the step scale :math:`s` of the point
        ``z`` of the step MCP at parameters ``p`` (module docstring, "Physical verdict").

        ``p`` as for :meth:`mcpkit.Solver.solve` (a dict by block such as :meth:`parameters`
        returns, a stacked vector, or ``None`` for the MCP's stored values).
        """
        P = self._parameter_values(p)
        zz = np.asarray(z, dtype=float).reshape(-1)
        if zz.shape != (self.mcp.n,):
            raise ShapeError(f"z must have {self.mcp.n} entries, got shape {zz.shape}")
        zb = {k: zz[sl] for k, sl in self._layout[0].items()}
        nv, nc = self.nv, self.nc
        v, v0 = zb["v"], _solve_mass(P["Mhat"].reshape(nv, nv), P["b"])  # nu_0: no contact impulses
        Wn = P["Wn"].reshape(nv, nc).T
        un, wn = (Wn @ v).tolist(), (Wn @ v0).tolist()
        # tangential velocities relative to the surface at nu (u_f) and at nu_0 (w), per tangent
        tang = []
        for W, us in self._tangent_blocks:
            Wk = P[W].reshape(nv, nc).T
            tang.append(((Wk @ v - P[us]).tolist(), (Wk @ v0 - P[us]).tolist()))
        psi_h, mu = P["psi_h"].tolist(), P["mu"].tolist()
        e, scale = [], 0.0
        for i, r in enumerate(self._impulses(zb)):
            uf = tuple(at_v[i] for at_v, _ in tang)
            w = (wn[i], *(at_v0[i] for _, at_v0 in tang))
            u_hat = (un[i] + psi_h[i] + mu[i] * self._support(tuple(-c for c in uf)), *uf)
            e.append(math.hypot(*_sub(r, self._project(_sub(r, u_hat), mu[i]))))
            scale = max(scale, math.hypot(*r), math.hypot(*w))
        return FrictionResidual(np.array(e), scale)

    def friction_residual_values(self, P: np.ndarray, Z: np.ndarray) -> np.ndarray:
        r""":math:`\max_i \hat e_i` (:attr:`FrictionResidual.value`) of many step points at once:
        row :math:`j` of the stacked parameter vectors ``P`` (``(m, n_params)``) with row :math:`j`
        of the points ``Z`` (``(m, n)``). Here one :meth:`friction_residual` per row; the NCP
        evaluates the same formulas on whole arrays (:meth:`.ncp.NCPStep.friction_residual_values`)."""
        return np.array([self.friction_residual(P[j], Z[j]).value for j in range(P.shape[0])])

    def judge(
        self, p: ArrayLike | dict[str, ArrayLike] | None, result: MCPResult, friction_tol: float | None = None
    ) -> StepResult:
        r"""The step's verdict: ``result`` (its MCP solve at ``p``) and the Coulomb check
        :math:`\max_i \hat e_i \le` ``friction_tol`` (default: the solve's ``tol``).

        The check's quantity names the contact with the largest :math:`\hat e_i`; without a
        finite point there is nothing to measure (the check fails with ``NUMERICAL_ERROR``).
        """
        tol = _friction_tol(friction_tol, result.tol)
        t0 = time.perf_counter()
        res: FrictionResidual | None = None
        if np.isfinite(result.z).all():
            res = self.friction_residual(p, result.z)
        wall = time.perf_counter() - t0
        if res is None:
            check = ToleranceCheck("relative Coulomb residual", None, tol, kind="friction", wall_time_s=wall)
        else:
            i = res.worst
            check = ToleranceCheck(
                f"relative Coulomb residual of contact {i}", res.value, tol, kind="friction", wall_time_s=wall
            )
        return StepResult(solve=result, friction=check, residual=res, formulation=self.formulation)

    def make_solver(
        self,
        method: str = "auto",
        backend: str = "auto",
        options: SolveOptions | None = None,
        *,
        friction_tol: float | None = None,
        **kwargs: Any,
    ) -> StepSolver:
        """A :class:`StepSolver` for this step (pass it to :func:`~mcpkit.models.stepping.simulate`
        as ``solver=`` so that every step is judged on the Coulomb residual too)."""
        return StepSolver(self, backend, method, options, friction_tol=friction_tol, **kwargs)

    def normal_force(self, z: np.ndarray) -> np.ndarray:
        r"""Physical normal forces :math:`\lambda_n = m_s\beta_n/h` from solution rows ``z``."""
        sl = {b.name: b.slice for b in self.mcp.blocks}["lam_n"]
        return np.asarray(z)[..., sl] * self.mass_scale / self.h


class StepSolver(Solver):
    r"""A :class:`mcpkit.Solver` for a Stewart–Trinkle step whose :meth:`solve` returns the step's
    full verdict, a :class:`StepResult` (MCP natural residual **and** Coulomb residual).

    Built by :meth:`StewartTrinkleStep.make_solver`; the arguments are those of
    :class:`mcpkit.Solver` plus ``friction_tol`` (the Coulomb check's tolerance, default the
    solve's ``tol`` when ``tol`` is given; without ``tol`` the solve's tolerance is
    :data:`DEFAULT_STEP_TOL` of the body's units and ``friction_tol`` :data:`DEFAULT_FRICTION_TOL`).
    A point that meets the MCP's residual but not the Coulomb check is not a
    solution, so, like any unsolved point, it is never the next warm start.
    """

    def __init__(
        self,
        step: StewartTrinkleStep,
        backend: str = "auto",
        method: str = "auto",
        options: SolveOptions | None = None,
        *,
        friction_tol: float | None = None,
        ipopt: str = "auto",
        **kwargs: Any,
    ) -> None:
        if not isinstance(step, StewartTrinkleStep):
            raise MCPInputError(f"StepSolver expects a Stewart-Trinkle step, got {type(step).__name__}")
        unit_default = options is None and "tol" not in kwargs
        if unit_default:
            kwargs["tol"] = DEFAULT_STEP_TOL.get(step.units, DEFAULT_STEP_TOL["SI"])
        super().__init__(step.mcp, backend, method, options, ipopt=ipopt, **kwargs)
        self.step = step
        default_friction = DEFAULT_FRICTION_TOL if unit_default else self.options.tol
        self.friction_tol = _friction_tol(friction_tol, default_friction)

    def solve(  # type: ignore[override]
        self,
        p: ArrayLike | dict[str, ArrayLike] | None = None,
        z0: ArrayLike | None = None,
        warm_start: bool = True,
    ) -> StepResult:
        """:meth:`mcpkit.Solver.solve`, then :meth:`StewartTrinkleStep.judge` at the same ``p``."""
        previous = self._last_z
        result = self.step.judge(p, super().solve(p, z0, warm_start), self.friction_tol)
        if result.solve.solved and not result.solved:
            self._last_z = previous
        return result
