r"""FCLIB 3-D local friction-contact problems: loading, the Siconos error, and three formulations.

An FCLIB *local* problem (Acary et al., FCLIB) with :math:`n_c` contacts asks for reactions
:math:`r_i = (r_{n}, r_{t}, r_{o})_i` and velocities :math:`u = Wr + q` with, per contact,

.. math::
    K_i = \{r: \|r_{t,o}\| \le \mu_i r_n\},\quad \hat u_i = u_i + \mu_i\|u_{t,o,i}\|\,e_n,\quad
    K_i^* \ni \hat u_i \perp r_i \in K_i

(De Saxcé's modified velocity). Its solutions are those of Coulomb's law with Signorini's
condition (separation :math:`r = 0, u_n \ge 0`; sticking :math:`r \in K, u = 0`; sliding
:math:`u_n = 0`, :math:`r_t = -\mu r_n u_t/\|u_t\|`). :func:`solve_fclib_file` poses it in one of
the :class:`FCLIBFormulation` forms:

* ``alart_curnier`` (default) and ``fb_soc``: the square nonsmooth equations of
  :mod:`mcpkit.models.fclib_equations` in the reactions only (:math:`u = Wr + q` substituted),
  a free MCP solved by the semismooth Newton engine through :func:`mcpkit.solve_mcp`; for
  ``alart_curnier`` on up to :data:`DIRECT_MAX_CONTACTS` contacts first by the direct dense
  Newton method :func:`mcpkit.engines.newton_contact.solve_alart_curnier`, its point judged on
  the same equations (:func:`solve_equations`);
* ``ncp``: the quadratic-cone NCP of Berard et al. eq (9), with :math:`u` kept as free variable
  blocks paired with :math:`u - Wr - q = 0`, declared at block level (:func:`fclib_ncp`) and
  solved by :func:`mcpkit.solve` with any registered method:

  .. math::
      0 \le r_n \perp u_n \ge 0,\quad
      \mu r_n u_t + r_t\sigma = 0,\quad \mu r_n u_o + r_o\sigma = 0,\quad
      0 \le \sigma \perp \mu^2 r_n^2 - r_t^2 - r_o^2 \ge 0 ,

  (sliding: :math:`\sigma = \|u_{t,o}\|`), unknowns scaled as :math:`r = s_r\hat r`,
  :math:`u = s_u\hat u` with :math:`s_u = \|q\|_\infty`, :math:`s_r = s_u/\overline{\mathrm{diag}(W)}`.

**Printing.** :func:`fclib_mcp` declares any of the three with block expressions
(:mod:`mcpkit.problems.blocks`): reactions grouped by component into :math:`r_n, r_t, r_o \in
\mathbb{R}^{n_c}`, :math:`u_a = \sum_b W_{ab} r_b + q_a` with the nine :math:`n_c\times n_c`
blocks of :math:`W` (:func:`velocity_blocks`), the contact law elementwise over the contacts, so
``fclib_mcp(load_fclib(path)).to_text()`` prints the formulation one component block per line.

**Residual** (reported as ``friction_residual``, the verdict's physical check): the natural-map
residual of the De Saxcé formulation as in Siconos ``fc3d_compute_error`` with :math:`\rho = 1`,

.. math::
    \mathrm{err}(r) = \frac{\bigl(\sum_i \|r_i - \Pi_{K_i}(r_i - \hat u_i)\|_2^2\bigr)^{1/2}}
                           {\|q\|_2},\qquad u = Wr + q,

(division skipped when :math:`\|q\|_2` is below machine epsilon). A file is solved when the MCP
solve met its own tolerance (natural residual of the posed formulation) **and**
:math:`\mathrm{err}(r) \le` ``tol``.
"""

from __future__ import annotations

import math
import time
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sps

from mcpkit.engines.blas import small_blas
from mcpkit.engines.factor_budget import (
    DENSE_SECONDS_PER_FLOP,
    GUARD_MIN_ORDER,
    FactorBudget,
    FactorRefused,
    dense_cost,
)
from mcpkit.engines.newton_contact import contact_errors, delassus_rho, siconos_error
from mcpkit.errors import MCPInputError
from mcpkit.formats.fclib_hdf5 import data_error, read_fclib_local
from mcpkit.models.fclib_equations import DENSE_N, ContactEquations, ContactLaw
from mcpkit.models.fclib_result import FCLIBResult, FCLIBStage
from mcpkit.printing.fclib import CONE_FORM, cone_explain, cone_latex, cone_text
from mcpkit.problems import blocks as bx
from mcpkit.problems.mcp import MCP
from mcpkit.solving.options import Choice, SolveOptions
from mcpkit.solving.residuals import classify_pairs
from mcpkit.solving.result import (
    MCPResult,
    Termination,
    ToleranceCheck,
    judge_point,
    mcp_termination,
    note_overrun,
    verdict_message,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from mcpkit.engines.newton_contact import ContactNewtonResult

DEFAULT_TOL = 1e-8
"""Tolerance of :func:`solve_fclib_file` on the Siconos error and on the posed MCP's natural
residual (the ``alart_curnier`` default reaches it on every shared problem; see ``docs/fclib.md``)."""


class FCLIBFormulation(str, Choice):
    """How :func:`solve_fclib_file` poses an FCLIB problem (module docstring)."""

    NCP = "ncp"
    """The quadratic-cone NCP of Berard et al. eq (9) in :math:`(r_n, r_t, r_o, \\sigma, u)`, declared as an
    :class:`~mcpkit.MCP` and solved by :func:`mcpkit.solve` with any registered method."""
    ALART_CURNIER = "alart_curnier"
    """Alart–Curnier equations in the reactions (:class:`~mcpkit.models.fclib_equations.ContactLaw`),
    a free MCP: the direct Alart–Curnier Newton method first (small problems), then the
    semismooth Newton engine with a Tikhonov-continuation fallback."""
    FB_SOC = "fb_soc"
    """Second-order-cone Fischer–Burmeister equations on De Saxcé's velocity, solved like
    ``alart_curnier`` (needs :math:`\\mu > 0`)."""


#: The formulation :func:`solve_fclib_file` uses unless told (see ``docs/fclib.md``).
DEFAULT_FORMULATION = FCLIBFormulation.ALART_CURNIER
#: Newton iterations allowed to the first (unregularised) attempt of the equation formulations
#: before the Tikhonov continuation takes over (the shared problems that converge in it need at most 73).
PLAIN_ITERATIONS = 120
#: Tikhonov continuation :math:`\varepsilon_k / \overline{\mathrm{diag}\,W}`, each stage warm from the
#: last, then a polish at :math:`\varepsilon = 0` (fallback for statically indeterminate problems).
TIKHONOV_SEQUENCE = (1e-2, 1e-4, 1e-6, 1e-8)
#: At most this many re-solves with a tighter MCP tolerance when the MCP met ``tol`` but the
#: Siconos error did not (each warm from the last point).
TIGHTEN_ROUNDS = 3
#: The ``direct`` stage (:func:`~mcpkit.engines.newton_contact.solve_alart_curnier`) runs on problems
#: with at most this many contacts (larger ones: the dense LU of each step dominates, and the
#: engine's sparse factorisations win).
DIRECT_MAX_CONTACTS = 170
#: Newton steps allowed to the ``direct`` stage (and to the judging run that ends the ``prox`` stage).
DIRECT_ITERATIONS = 40
#: Share of the time left (after the ``direct`` stage) that the ``plain`` stage may use when a
#: ``prox`` stage may follow (Alart–Curnier law): on a resting 641-contact pile step it reached
#: 3.6e-7 in 32 iterations (2 s) and then crawled on Levenberg–Marquardt steps of 3.5 s each to
#: the end of 60 s.
PLAIN_SHARE = 0.25
#: Share of the time left after the ``plain`` stage that the Tikhonov continuation and its
#: polish may use when a ``prox`` stage may follow (Alart–Curnier law): on a 603-contact pile
#: step the continuation used all of 60 s and ended at 3.7e-5.
CONTINUATION_SHARE = 0.3
#: The ``prox`` stage starts from the best point so far when its Siconos error is at most this,
#: else from :math:`r = 0`: on a resting 313-contact pile step it reached 1.3e-4 in 26 s from the
#: plain stage's point (error 1.8e-3) and 1.8e-9 in 29 s from zero; on resting 60-contact steps
#: it finishes from the polish's point (2e-8) in a few proximal steps.
PROX_WARM_MAX = 1e-6
#: Proximal steps allowed to the ``prox`` stage (:func:`~mcpkit.engines.prox_contact.prox_point`;
#: the time limit and the iteration budget usually bind first).
PROX_OUTER = 2000
#: The ``direct`` stage gives up once its merit fell less than tenfold in this many steps.
DIRECT_STALL = 12


class FCLIBProblem:
    """An FCLIB 3-D local problem read from HDF5 (dense ``W``; these problems are small).

    Attributes
    ----------
    W, q, mu
        Delassus matrix ``(3nc, 3nc)``, free velocity ``(3nc,)``, friction ``(nc,)``.
    r_ref, u_ref
        The file's reference solution (``None`` when absent).
    title, description
        From ``fclib_local/info`` when present.
    """

    def __init__(
        self,
        W: np.ndarray,
        q: np.ndarray,
        mu: np.ndarray,
        r_ref: np.ndarray | None = None,
        u_ref: np.ndarray | None = None,
        title: str = "",
        description: str = "",
    ) -> None:
        self.W, self.q, self.mu = W, q, mu
        self.r_ref, self.u_ref = r_ref, u_ref
        self.title, self.description = title, description

    @property
    def nc(self) -> int:
        """Number of contacts."""
        return int(self.mu.size)

    def declare(self, formulation: FCLIBFormulation | str = "alart_curnier") -> MCP:
        """The problem in ``formulation`` declared at block level (:func:`fclib_mcp`)."""
        return fclib_mcp(self, formulation)

    def to_text(self, formulation: FCLIBFormulation | str = "cone", **kwargs: Any) -> str:
        r"""Plain text: ``"cone"`` (default) the cone complementarity problem
        :math:`K^* \ni \hat u \perp r \in K` (:mod:`mcpkit.printing.fclib`); a formulation
        (``"alart_curnier"``, ``"fb_soc"``, ``"ncp"``) its :meth:`declare` (``kwargs`` as
        :meth:`mcpkit.MCP.to_text`)."""
        if _is_cone(formulation):
            return cone_text(self, **kwargs)
        return self.declare(formulation).to_text(**kwargs)

    def to_latex(self, formulation: FCLIBFormulation | str = "cone", **kwargs: Any) -> str:
        """LaTeX of what :meth:`to_text` prints (``kwargs`` as :meth:`mcpkit.MCP.to_latex`)."""
        if _is_cone(formulation):
            return cone_latex(self, **kwargs)
        return self.declare(formulation).to_latex(**kwargs)

    def explain(self, formulation: FCLIBFormulation | str = "cone", **kwargs: Any) -> str:
        """Prose of what :meth:`to_text` prints (``kwargs`` as :meth:`mcpkit.MCP.explain`)."""
        if _is_cone(formulation):
            return cone_explain(self, **kwargs)
        return self.declare(formulation).explain(**kwargs)

    def _repr_latex_(self) -> str:
        """Notebook rendering: the cone complementarity problem."""
        return f"$${self.to_latex()}$$"


def _is_cone(form: Any) -> bool:
    return isinstance(form, str) and not isinstance(form, FCLIBFormulation) and form == CONE_FORM


def load_fclib(path: str | Path) -> FCLIBProblem:
    """Read an FCLIB local problem (:func:`mcpkit.formats.fclib_hdf5.read_fclib_local`: every
    member checked before it is read; :class:`~mcpkit.errors.ProblemFileError` otherwise)."""
    d = read_fclib_local(path)
    return FCLIBProblem(d.W, d.q, d.mu, d.r_ref, d.u_ref, d.title, d.description)


def project_cone(z: np.ndarray, mu: float) -> np.ndarray:
    r"""Euclidean projection of :math:`z = (z_n, z_t, z_o)` onto :math:`K_\mu`."""
    zn, zt = z[0], z[1:]
    nt = float(np.linalg.norm(zt))
    if nt <= mu * zn:  # already in K
        return z.copy()
    if mu * nt <= -zn:  # in the polar cone {mu |z_t| <= -z_n}
        return np.zeros(3)
    a = (mu * nt + zn) / (mu * mu + 1.0)
    return np.concatenate([[a], mu * a * zt / nt])


def friction_residual(
    W: np.ndarray, q: np.ndarray, mu: np.ndarray, r: np.ndarray, u: np.ndarray | None = None
) -> float:
    r"""Siconos ``fc3d_compute_error`` residual (module docstring) of reactions ``r``.

    ``u`` defaults to :math:`Wr + q`; passing a stored ``u`` evaluates the pair as given. The one
    implementation is :func:`mcpkit.engines.newton_contact.siconos_error` (the engines' own).
    """
    r = np.asarray(r, dtype=float).reshape(-1)
    u = W @ r + q if u is None else np.asarray(u, dtype=float).reshape(-1)
    return siconos_error(
        np.asarray(q, dtype=float), np.asarray(mu, dtype=float), r, np.asarray(u, dtype=float)
    )


def worst_contact_error(
    W: np.ndarray, q: np.ndarray, mu: np.ndarray, r: np.ndarray, u: np.ndarray | None = None
) -> float:
    r""":math:`\max_i e_i`, the worst per-contact error
    (:func:`~mcpkit.engines.newton_contact.contact_errors`) of reactions ``r`` (0 without contacts).

    ``u`` defaults to :math:`Wr + q`.
    """
    r = np.asarray(r, dtype=float).reshape(-1)
    u = W @ r + q if u is None else np.asarray(u, dtype=float).reshape(-1)
    terms = abs(W) @ np.abs(r)  # the size of the products summed into u = Wr + q
    e = contact_errors(
        np.asarray(q, dtype=float), np.asarray(mu, dtype=float), r, np.asarray(u, dtype=float), terms
    )
    return float(e.max(initial=0.0))


#: Components of a contact in FCLIB's order: normal, first and second tangential.
COMPONENTS = ("n", "t", "o")


def _component_index(nc: int) -> dict[str, np.ndarray]:
    return {c: 3 * np.arange(nc) + k for k, c in enumerate(COMPONENTS)}


def velocity_blocks(
    m: MCP, W: Any, q: np.ndarray, r: tuple[Any, Any, Any], hat: bool = False
) -> tuple[Any, Any, Any]:
    r"""Declare :math:`W` and :math:`q` split by component and return :math:`u = Wr + q` per component.

    FCLIB orders unknowns contact by contact, :math:`(r_n, r_t, r_o)_i`; grouped by component,
    :math:`u_a = \sum_{b \in \{n,t,o\}} W_{ab} r_b + q_a` with the :math:`n_c \times n_c` blocks
    :math:`W_{ab} = W[a_i, b_j]` (sparse named constants; a block without nonzeros is left out)
    and the parameter blocks :math:`q_a`. ``r`` are the variable blocks :math:`(r_n, r_t, r_o)`;
    ``hat``: the names and symbols of scaled data (``Wh_nt``, :math:`\hat W_{nt}`). Memory and
    lowering cost :math:`O(\mathrm{nnz}(W))`.
    """
    nc = int(q.size) // 3
    idx = _component_index(nc)
    Ws = sps.csr_array(W)
    stem, tex = ("Wh", r"\hat W") if hat else ("W", "W")
    qstem, qtex = ("qh", r"\hat q") if hat else ("q", "q")
    out = []
    for a in COMPONENTS:
        rows = Ws[idx[a]]
        terms = []
        for b, rb in zip(COMPONENTS, r, strict=True):
            block = sps.csr_array(rows[:, idx[b]])
            block.eliminate_zeros()
            if block.nnz:
                A = bx.const(block, name=f"{stem}_{a}{b}", latex=f"{tex}_{{{a}{b}}}", dim=("n_c", "n_c"))
                terms.append(A @ rb)
        qa = m.add_parameter_block(f"{qstem}_{a}", nc, q[idx[a]], latex=f"{qtex}_{a}", dim="n_c")
        out.append(sum(terms[1:], terms[0]) + qa if terms else qa)
    return out[0], out[1], out[2]


def _reaction_blocks(m: MCP, nc: int, lb_n: float) -> tuple[Any, Any, Any]:
    free = -math.inf
    return (
        m.add_variable_block("r_n", nc, lb=lb_n, start=1.0 if lb_n == 0.0 else None, latex="r_n", dim="n_c"),
        m.add_variable_block("r_t", nc, lb=free, latex="r_t", dim="n_c"),
        m.add_variable_block("r_o", nc, lb=free, latex="r_o", dim="n_c"),
    )


def fclib_mcp(prob: FCLIBProblem, formulation: FCLIBFormulation | str = DEFAULT_FORMULATION) -> MCP:
    r"""``prob`` in ``formulation`` declared at block level (for printing: ``fclib_mcp(p).to_text()``).

    * ``alart_curnier``, ``fb_soc``: the free MCP :math:`0 = \phi_a(r, u)\perp r_a` free,
      :math:`a \in \{n, t, o\}`, with :math:`u_a = \sum_b W_{ab}r_b + q_a` (:func:`velocity_blocks`)
      and the per-contact law of :func:`~mcpkit.models.fclib_equations.law_blocks`, all
      elementwise over the contacts; :math:`\mu`, :math:`\rho_n`, :math:`\rho_t`
      (:func:`~mcpkit.engines.newton_contact.delassus_rho`) are parameter blocks. It is the
      system :class:`~mcpkit.models.fclib_equations.ContactEquations` solves (the same expression
      tree gives its per-contact CasADi function), before that class's scaling
      :math:`r = s_r\hat r` and row weights, and without its square-root guard.
    * ``ncp``: :func:`fclib_ncp`'s scaled MCP.
    """
    from mcpkit.models.fclib_equations import law_blocks

    form = FCLIBFormulation.parse(formulation)
    if form is FCLIBFormulation.NCP:
        return fclib_ncp(prob)[0]
    nc = prob.nc
    m = MCP(f"fclib_{form.value}")
    r = _reaction_blocks(m, nc, -math.inf)
    u = tuple(
        bx.named(f"u_{a}", e, latex=f"u_{a}")
        for a, e in zip(COMPONENTS, velocity_blocks(m, prob.W, prob.q, r), strict=True)
    )
    mu = m.add_parameter_block("mu", nc, prob.mu, latex=r"\mu", dim="n_c")
    rho_n, rho_t = delassus_rho(prob.W, nc)
    rn = m.add_parameter_block("rho_n", nc, rho_n, latex=r"\rho_n", dim="n_c")
    rt = rn  # FB-SOC: one rho scales y, rho_t is not part of its law
    if form is FCLIBFormulation.ALART_CURNIER:
        rt = m.add_parameter_block("rho_t", nc, rho_t, latex=r"\rho_t", dim="n_c")
    phi = law_blocks(form.value, r, u, mu, rn, rt)  # type: ignore[arg-type]
    for a, f in zip(COMPONENTS, phi, strict=True):
        m.add_functions(f"r_{a}", f)
    return m


def fclib_ncp(prob: FCLIBProblem) -> tuple[MCP, float, float]:
    """The scaled quadratic-cone NCP of the module docstring, declared at block level; returns
    ``(mcp, s_r, s_u)``.

    Blocks ``r_n`` (:math:`\\ge 0`), ``r_t``, ``r_o``, ``sigma`` (:math:`\\ge 0`), ``u_n``, ``u_t``,
    ``u_o`` (free, paired with :math:`0 = u_a - \\sum_b \\hat W_{ab} r_b - \\hat q_a`), with
    :math:`\\hat W = W s_r/s_u`, :math:`\\hat q = q/s_u` (:func:`velocity_blocks`).
    """
    nc, W, q, mu = prob.nc, prob.W, prob.q, prob.mu
    s_u = float(np.abs(q).max()) or 1.0
    dmean = float(np.mean(np.abs(np.diag(W)))) or 1.0
    s_r = s_u / dmean
    mcp = MCP("fclib_quadratic_cone")
    r = _reaction_blocks(mcp, nc, 0.0)
    rn, rt, ro = r
    sg = mcp.add_variable_block("sigma", nc, lb=0.0, latex=r"\sigma", dim="n_c")
    u = [mcp.add_variable_block(f"u_{a}", nc, lb=-math.inf, latex=f"u_{a}", dim="n_c") for a in COMPONENTS]
    wrq = velocity_blocks(mcp, W * (s_r / s_u), q / s_u, r, hat=True)
    m_mu = mcp.add_parameter_block("mu", nc, mu, latex=r"\mu", dim="n_c")
    mrn = m_mu * rn
    mcp.add_functions("r_n", u[0])
    mcp.add_functions("r_t", mrn * u[1] + rt * sg)
    mcp.add_functions("r_o", mrn * u[2] + ro * sg)
    mcp.add_functions("sigma", mrn**2 - rt**2 - ro**2)
    for a, ua, e in zip(COMPONENTS, u, wrq, strict=True):
        mcp.add_functions(f"u_{a}", ua - e)
    return mcp, s_r, s_u


def reactions_from(z_blocks: dict[str, np.ndarray], s_r: float) -> np.ndarray:
    """Interleave ``r_n, r_t, r_o`` blocks into FCLIB's ``(r_n, r_t, r_o)_i`` order, unscaled."""
    r = np.column_stack([z_blocks["r_n"], z_blocks["r_t"], z_blocks["r_o"]]).reshape(-1)
    return r * s_r


def _err(prob: FCLIBProblem, r: np.ndarray | None) -> float | None:
    """The error the stages steer by: the larger of the Siconos error and the worst per-contact
    error (both must meet ``tol`` for a solved result); ``None`` without a finite point."""
    if r is None or not np.isfinite(r).all():
        return None
    e = max(friction_residual(prob.W, prob.q, prob.mu, r), worst_contact_error(prob.W, prob.q, prob.mu, r))
    return e if math.isfinite(e) else None


class _Stages:
    """The staged Newton solves of an equation formulation (see :func:`solve_equations`)."""

    def __init__(self, prob: FCLIBProblem, law: ContactLaw, options: SolveOptions) -> None:
        self.prob, self.law, self.options = prob, law, options
        self.W = prob.W
        """``prob.W``, made sparse once when it is a dense array of a large problem (each
        :class:`ContactEquations` keeps a large ``W`` sparse; one conversion instead of one per stage)."""
        if not sps.issparse(prob.W) and 3 * prob.nc > DENSE_N:
            self.W = sps.csr_matrix(prob.W)
        self.deadline = math.inf if options.time_limit is None else time.perf_counter() + options.time_limit
        self.until = self.deadline
        """The end of the current group of stages (:meth:`share`), at most :attr:`deadline`."""
        self.iterations_left = options.max_inner_iter
        self.stages: list[FCLIBStage] = []
        self.last_termination: Termination | None = None

    @cached_property
    def exact(self) -> ContactEquations:
        """The unregularised equations (built when first needed: a solved ``direct`` stage does not)."""
        return ContactEquations(self.W, self.prob.q, self.prob.mu, self.law)

    def expired(self) -> bool:
        """The time or the iterations are used up, or a stage was interrupted (Ctrl-C: no
        further stage starts; the best stage so far is the result)."""
        interrupted = bool(self.stages) and self.last_termination is Termination.INTERRUPTED
        out_of_time = time.perf_counter() >= min(self.until, self.deadline)
        return out_of_time or self.iterations_left < 1 or interrupted

    def share(self, fraction: float) -> None:
        """The stages from now on end by ``fraction`` of the time left (1: the deadline)."""
        now = time.perf_counter()
        self.until = self.deadline if fraction >= 1 else now + fraction * (self.deadline - now)

    def _time_left(self, t0: float) -> float | None:
        end = min(self.until, self.deadline)
        return max(end - t0, 1e-3) if math.isfinite(end) else None

    def direct(self, tol: float) -> tuple[MCPResult, float | None, np.ndarray]:
        """:func:`~mcpkit.engines.newton_contact.solve_alart_curnier` from :math:`r = 0` (no restart,
        :data:`DIRECT_ITERATIONS`, :data:`DIRECT_STALL`), judged as an MCP result; records the stage.
        Returns the result, the Siconos error and the (unscaled) reactions."""
        from mcpkit.engines.newton_contact import solve_alart_curnier

        t0 = time.perf_counter()
        prob = self.prob
        d = solve_alart_curnier(
            prob.W, prob.q, prob.mu, tol=tol, max_iter=max(min(DIRECT_ITERATIONS, self.iterations_left), 1),
            stall_window=DIRECT_STALL, restart=False, time_limit=self._time_left(t0),
        )  # fmt: skip
        res, err = self._record_direct("direct", d, d.iterations, tol, t0)
        return res, err, d.r

    def dense_refusal(self) -> str | None:
        """Why the dense proximal stage cannot start in the time left (its LU of order :math:`3n_c`
        estimated as :mod:`mcpkit.engines.factor_budget` does), or ``None`` when it can."""
        n = 3 * self.prob.nc
        if not math.isfinite(self.deadline) or n < GUARD_MIN_ORDER:
            return None
        try:
            FactorBudget(min(self.until, self.deadline)).check(
                "a dense proximal Newton step", n, dense_cost(n), DENSE_SECONDS_PER_FLOP
            )
        except FactorRefused as exc:
            return str(exc)
        return None

    def prox(self, r0: np.ndarray, tol: float) -> tuple[MCPResult, float | None]:
        """:func:`~mcpkit.engines.prox_contact.prox_point` from the unscaled reactions ``r0`` within the
        time and Newton iterations left; the point of its judging Newton run on the original
        problem judged as the ``direct`` stage's (:func:`_direct_result`); records the stage."""
        from mcpkit.engines.prox_contact import prox_point

        t0 = time.perf_counter()
        prob = self.prob
        px = prox_point(
            prob.W, prob.q, prob.mu, r0=r0, tol=tol, max_outer=PROX_OUTER, time_limit=self._time_left(t0),
            max_iter=max(min(DIRECT_ITERATIONS, self.iterations_left), 1), max_newton=self.iterations_left,
        )  # fmt: skip
        return self._record_direct("prox", px.result, px.newton_steps, tol, t0)

    def _record_direct(
        self, name: str, d: ContactNewtonResult, newton_steps: int, tol: float, t0: float
    ) -> tuple[MCPResult, float | None]:
        """The point of a direct Newton run ``d`` judged as an MCP result (:func:`_direct_result`),
        its Siconos error, and the stage ``name`` recorded with ``newton_steps`` charged to the
        iteration budget; ``t0`` is the stage's start."""
        res = _direct_result(d, lambda z: self.exact.F(z), t0)
        err = _err(self.prob, d.r) if math.isfinite(d.siconos_error) else None
        self.iterations_left -= newton_steps
        stage = FCLIBStage(
            name, 0.0, tol, bool(res.solved), newton_steps, float(res.natural_residual), err,
            res.wall_time_s,
        )  # fmt: skip
        self.stages.append(stage)
        self.last_termination = res.termination
        return res, err

    def run(
        self, name: str, eq: ContactEquations, z0: np.ndarray, tol: float, cap: int | None = None
    ) -> tuple[MCPResult, float | None]:
        """One ``solve_mcp(method="newton")`` on ``eq`` from ``z0``; records the stage."""
        from mcpkit.frontends.functional import solve_mcp

        t0 = time.perf_counter()
        limit = self.iterations_left if cap is None else min(cap, self.iterations_left)
        kw: dict[str, Any] = {}
        if math.isfinite(self.deadline):
            kw["time_limit"] = self._time_left(t0)
        res = solve_mcp(
            eq.F, eq.J, -np.inf, np.inf, z0, method="newton", convergence_tolerance=tol,
            major_iteration_limit=max(int(limit), 1), output=self.options.verbose,
            jacobian_structure=eq.pattern, progress=self.options.progress, **kw,
        )  # fmt: skip
        have = bool(np.isfinite(res.z).all())
        err = _err(self.prob, eq.reactions(res.z)) if have else None
        self.iterations_left -= int(res.iterations)
        wall = time.perf_counter() - t0
        stage = FCLIBStage(
            name, eq.eps / eq.d_mean, tol, bool(res.solved), int(res.iterations),
            float(res.natural_residual), err, wall,
        )  # fmt: skip
        self.stages.append(stage)
        self.last_termination = res.termination
        return res, err


#: Why :func:`~mcpkit.engines.newton_contact.solve_alart_curnier` stopped, by the start of its message.
_DIRECT_TERMINATION = (
    ("converged", Termination.CONVERGED),
    ("iteration limit", Termination.ITERATION_LIMIT),
    ("time limit", Termination.TIME_LIMIT),
    ("interrupted", Termination.INTERRUPTED),
)


def _direct_result(d: ContactNewtonResult, F_at: Callable[[np.ndarray], np.ndarray], t0: float) -> MCPResult:
    r"""The ``direct`` stage's point as an :class:`~mcpkit.solving.result.MCPResult` of the free MCP
    :math:`F(\hat r) = 0` (:class:`~mcpkit.models.fclib_equations.ContactEquations`), judged as
    :class:`mcpkit.Solver` judges a route's point.

    :math:`\hat r = r / s_r`; :func:`~mcpkit.solving.result.judge_point` takes :math:`F(\hat r)` from the
    direct method's own evaluation of the same scaled equations at that point (``d.F``, as a
    route's ``F``; that the two evaluations agree is tested) and ``F_at`` (``ContactEquations.F``)
    otherwise; pair states, termination (:func:`~mcpkit.solving.result.mcp_termination`: a
    ``"converged"`` the check does not confirm is ``STALLED``) and message as there. The direct
    method's own word is kept in ``raw_status``. ``wall_time_s`` counts from ``t0`` (a
    :func:`time.perf_counter` value) to the end of the verdict.
    """
    n = d.r.size
    lb, ub = np.full(n, -np.inf), np.full(n, np.inf)
    tol = float(d.tol)
    z = d.r / d.s_r
    jp = judge_point(z, F_at, lb, ub, tol, np.asarray(d.F, dtype=float))
    r = jp.residuals
    states = classify_pairs(jp.z, jp.F, lb, ub, tol, r.per_pair) if jp.have_point else []
    term = next((t for key, t in _DIRECT_TERMINATION if d.message.startswith(key)), Termination.STALLED)
    term = mcp_termination(term, jp.status, {})
    who = "by newton_contact/lapack (direct Alart-Curnier Newton)"
    return MCPResult(
        z=jp.z, F=jp.F, termination=term, solution_status=jp.status, natural_residual=r.natural,
        complementarity_violation=r.complementarity, bound_violation=r.bounds, pair_states=states,
        tol=tol, iterations=int(d.iterations), wall_time_s=time.perf_counter() - t0, backend="lapack",
        method="newton_contact", raw_status=d.message,
        message=verdict_message(who, jp.status, r.natural, r.complementarity, r.bounds, tol, term, jp.floor),
        extra={"lm_steps": int(d.lm_steps)},
    )  # fmt: skip


def _better(a: tuple[MCPResult, float | None], b: tuple[MCPResult, float | None]) -> bool:
    """``a`` is a better final point than ``b``: solved first, then the smaller Siconos error."""
    ka = (not a[0].solved, math.inf if a[1] is None else a[1])
    kb = (not b[0].solved, math.inf if b[1] is None else b[1])
    return ka < kb


def _met(a: tuple[MCPResult, float | None], tol: float) -> bool:
    """The MCP verdict holds and the Siconos error is at most ``tol``."""
    return a[0].solved and a[1] is not None and a[1] <= tol


def solve_equations(
    prob: FCLIBProblem, law: ContactLaw | str, options: SolveOptions, direct: bool = True
) -> tuple[MCPResult, np.ndarray | None, list[FCLIBStage]]:
    r"""Solve ``prob`` as the free MCP :math:`F(\hat r) = 0` of the equations of a contact law.

    The system is :class:`~mcpkit.models.fclib_equations.ContactEquations`.

    Stages (each recorded as an :class:`FCLIBStage`; all but the first are semismooth Newton
    solves through :func:`mcpkit.solve_mcp`):

    0. ``direct`` (Alart–Curnier law, at most :data:`DIRECT_MAX_CONTACTS` contacts, ``direct``
       true): :func:`~mcpkit.engines.newton_contact.solve_alart_curnier` from :math:`r = 0`, at
       most :data:`DIRECT_ITERATIONS` steps, stopping when the merit fell less than tenfold in
       :data:`DIRECT_STALL` steps; its point is judged on :math:`F` as a solve's
       (:func:`_direct_result`). When that verdict and the Siconos error both meet ``tol`` it is
       the answer; otherwise the stages below run from :math:`\hat r = 0` as without it, and its
       point competes for the final one;
    1. ``plain``: :math:`\varepsilon = 0` from :math:`\hat r = 0`, at most :data:`PLAIN_ITERATIONS`
       iterations (Alart–Curnier law: within :data:`PLAIN_SHARE` of the time left);
    2. if that did not meet ``tol``: the Tikhonov continuation: :math:`\varepsilon =`
       :data:`TIKHONOV_SEQUENCE` (times :math:`\overline{\mathrm{diag}\,W}`), each from the last
       point (Alart–Curnier law: these and the polish within :data:`CONTINUATION_SHARE` of the
       time left, the rest kept for the ``prox`` stage) to the MCP tolerance
       :math:`10^{-2}\varepsilon` (whatever ``tol``: the polish needs a
       point close to the solution set), then ``polish`` at
       :math:`\varepsilon = 0`; the better of the :math:`\varepsilon = 0` results is kept;
    3. ``tighten`` (at most :data:`TIGHTEN_ROUNDS`): when the MCP met its tolerance but the Siconos
       error or the worst per-contact error (``err``, the larger) did not meet ``tol``, re-solve
       from that point with the MCP tolerance set to the smaller of the last tolerance and the
       natural residual reached, times :math:`\max(10^{-3}, \tfrac12\,\mathtt{tol}/\mathrm{err})`;
    4. ``prox`` (Alart–Curnier law): when no stage met both measures, the proximal point
       iteration :func:`~mcpkit.engines.prox_contact.prox_point` (subproblems on
       :math:`W + \alpha I`, :math:`q - \alpha r_k` by the direct Newton method; at most
       :data:`PROX_OUTER` proximal steps) from the point of smallest Siconos error so far
       (the stages above, continuation included) when that error is at most
       :data:`PROX_WARM_MAX`, else from :math:`r = 0`, with the time and
       iterations left; the point of its judging Newton run on the original problem is judged
       as the ``direct`` stage's and competes for the final one. It solves resting pile steps
       whose reactions are not unique, which every stage above leaves at 1e-7 to 1e-4
       (``docs/fclib.md``).

    ``options.max_inner_iter`` bounds the iterations of all stages together and
    ``options.time_limit`` their wall time. Returns the last :math:`\varepsilon = 0` MCP result
    kept, the unscaled reactions (``None`` without a finite point) and the stages. Problems of
    up to :data:`mcpkit.engines.blas.SINGLE_THREAD_MAX_N` unknowns run on one BLAS thread
    (:mod:`mcpkit.engines.blas`).
    """
    with small_blas(3 * prob.nc):
        return _solve_equations(prob, law, options, direct)


def _solve_equations(
    prob: FCLIBProblem, law: ContactLaw | str, options: SolveOptions, direct: bool
) -> tuple[MCPResult, np.ndarray | None, list[FCLIBStage]]:
    """The stages of :func:`solve_equations`."""
    run = _Stages(prob, ContactLaw.parse(law), options)
    tol = options.tol
    first: tuple[MCPResult, float | None] | None = None
    if direct and run.law is ContactLaw.ALART_CURNIER and 0 < prob.nc <= DIRECT_MAX_CONTACTS:
        res, err, r = run.direct(tol)
        first = (res, err)
        if (res.solved and err is not None and err <= tol) or run.expired():
            return res, r if np.isfinite(r).all() else None, run.stages
    exact = run.exact
    prox = run.law is ContactLaw.ALART_CURNIER
    run.share(PLAIN_SHARE if prox else 1.0)
    best = run.run("plain", exact, np.zeros(exact.n), tol, cap=PLAIN_ITERATIONS)
    run.share(1.0)
    start = (math.inf if best[1] is None else best[1], best[0].z)  # the prox stage's start
    if not best[0].solved:
        run.share(CONTINUATION_SHARE if prox else 1.0)
        z = np.zeros(exact.n)
        for e in TIKHONOV_SEQUENCE:
            if run.expired():
                break
            eq = ContactEquations(run.W, prob.q, prob.mu, run.law, eps=e * exact.d_mean)
            res, err = run.run("tikhonov", eq, z, 1e-2 * e)
            if np.isfinite(res.z).all():
                z = res.z
                if err is not None and err < start[0]:
                    start = (err, z)
        if not run.expired():
            polished = run.run("polish", exact, z, tol)
            if _better(polished, best):
                best = polished
        run.share(1.0)
    if first is not None and _better(first, best):
        best = first
    mcp_tol = tol
    for _ in range(TIGHTEN_ROUNDS):
        res, err = best
        if not res.solved or err is None or err <= tol or run.expired():
            break
        mcp_tol = min(mcp_tol, res.natural_residual) * max(1e-3, 0.5 * tol / err)  # below what it met
        tightened = run.run("tighten", exact, res.z, mcp_tol)
        if _better(tightened, best) or (tightened[0].solved and tightened[1] is not None):
            best = tightened
    refusal = None
    if prox and not _met(best, tol) and not run.expired():
        refusal = run.dense_refusal()
    if prox and not _met(best, tol) and not run.expired() and refusal is None:
        if best[1] is not None and best[1] <= start[0]:
            start = (best[1], best[0].z)
        warm = start[0] <= PROX_WARM_MAX and np.isfinite(start[1]).all()
        px = run.prox(exact.reactions(start[1]) if warm else np.zeros(exact.n), tol)
        if _better(px, best):
            best = px
    res = best[0]
    if refusal is not None and not res.solved:  # the proximal stage was cut by the limit
        old = res.termination
        res.termination = Termination.TIME_LIMIT
        res.message = res.message.replace(f"termination {old.value}", "termination time_limit")
        res.message += f"; proximal stage {refusal}"
    if math.isfinite(run.deadline):  # the one rule for a run out of time
        res = note_overrun(res, options.time_limit, time.perf_counter() - (run.deadline - options.time_limit))
    r = exact.reactions(res.z) if np.isfinite(res.z).all() else None
    return res, r, run.stages


def _name(value: Any) -> str:
    """A method or backend given as a name or an enum member, lower case (``""`` for ``None``)."""
    return str(getattr(value, "value", value) or "").lower()


def _options(formulation: FCLIBFormulation, solve_options: dict[str, Any]) -> tuple[str, str, SolveOptions]:
    """Method, backend and :class:`~mcpkit.solving.options.SolveOptions`; typed errors before any solve."""
    opts = dict(solve_options)
    method, backend = _name(opts.pop("method", None)), _name(opts.pop("backend", None))
    opts.setdefault("tol", DEFAULT_TOL)
    options = SolveOptions.from_kwargs(**opts)  # unknown names raise UnknownOptionError
    if formulation is FCLIBFormulation.NCP:
        return method or "newton", backend or "casadi", options
    if method not in ("", "auto", "newton"):
        raise MCPInputError(
            f"FCLIB formulation {formulation.value!r} is solved by the semismooth Newton engine "
            f"(method 'newton' or 'auto'), not {method!r}; use formulation='ncp' for other methods"
        )
    if backend not in ("", "auto", "casadi"):
        raise MCPInputError(
            f"FCLIB formulation {formulation.value!r} evaluates its equations with CasADi in this "
            f"process (backend 'auto' or 'casadi'), not {backend!r}; use formulation='ncp'"
        )
    return "newton", "casadi", options


def solve_fclib_file(
    path: str | Path,
    formulation: FCLIBFormulation | str | None = None,
    direct: bool = True,
    **solve_options: Any,
) -> FCLIBResult:
    """Load, pose in ``formulation``, solve, and judge by the Siconos error.

    Parameters
    ----------
    path
        FCLIB HDF5 file (local 3-D problem).
    formulation
        An :class:`FCLIBFormulation` or its value. ``None``: :data:`DEFAULT_FORMULATION`, or
        ``ncp`` when ``method`` names a method other than ``"newton"``/``"auto"`` (the equation
        formulations run on the Newton engine only; this keeps ``mcpkit solve FILE --method fb``
        meaningful).
    direct
        ``alart_curnier`` only: try the direct Alart–Curnier Newton method first
        (:func:`solve_equations`, stage ``direct``); ``False`` runs the engine's stages alone.
    **solve_options
        ``method`` and ``backend``: for ``ncp`` any registered pair (default ``"newton"`` on
        ``"casadi"``); for ``alart_curnier`` and ``fb_soc`` only ``"newton"``/``"auto"`` on
        ``"casadi"``/``"auto"`` (:func:`solve_equations`). Any
        :class:`~mcpkit.solving.options.SolveOptions` field: ``tol`` (default :data:`DEFAULT_TOL`) is the
        tolerance of the MCP's natural residual and of the Siconos error; the equation
        formulations also use ``time_limit``, ``max_inner_iter`` (Newton iterations, all stages)
        and ``verbose``.

    Returns
    -------
    FCLIBResult
        ``solved`` when the posed MCP met its tolerance and :func:`friction_residual` of the
        unscaled reactions is at most ``tol``; ``summary()`` carries
        :data:`~mcpkit.solving.result.SUMMARY_KEYS`, ``friction_residual``,
        ``reference_friction_residual``, ``reference_friction_residual_stored_u``,
        ``reference_consistency``, ``n_contacts``, ``title``, ``formulation``,
        ``newton_iterations`` and ``stages``.

    Raises
    ------
    UnknownOptionError
        An unknown formulation or option name.
    MCPInputError
        A method or backend the formulation cannot use; ``fb_soc`` with a zero friction
        coefficient.
    ProblemFileError
        The file cannot be read as an FCLIB local problem.
    """
    form, method, backend, options = _prepare(formulation, solve_options)
    return _solve_loaded(load_fclib(path), form, method, backend, options, direct, str(path))


def solve_fclib(
    prob: FCLIBProblem,
    formulation: FCLIBFormulation | str | None = None,
    direct: bool = True,
    **solve_options: Any,
) -> FCLIBResult:
    r""":func:`solve_fclib_file` on a problem already in memory (from :func:`load_fclib`, or built
    from :math:`W, q, \mu` with :class:`FCLIBProblem`); the same parameters and result, with an
    empty ``path``. Re-solving one loaded problem this way times the solve alone, as the
    benchmark's one-LU reference is timed."""
    _check_problem(prob)
    form, method, backend, options = _prepare(formulation, solve_options)
    return _solve_loaded(prob, form, method, backend, options, direct, "")


def _check_problem(prob: Any) -> None:
    """The checks :func:`load_fclib` makes on a file, as :class:`~mcpkit.errors.MCPInputError`
    for a problem built in memory: type, shapes (W 3n_c x 3n_c, q 3n_c, mu n_c), finite
    entries, mu >= 0."""
    if not isinstance(prob, FCLIBProblem):
        raise MCPInputError(
            f"solve_fclib expects an FCLIBProblem (load_fclib(path), or FCLIBProblem(W, q, mu)), "
            f"got {type(prob).__name__}; for a file use solve_fclib_file"
        )
    mu, q = np.asarray(prob.mu), np.asarray(prob.q)
    shape = getattr(prob.W, "shape", None)
    n = 3 * mu.size
    if mu.ndim != 1 or q.shape != (n,) or shape != (n, n) or n == 0:
        raise MCPInputError(
            f"FCLIBProblem: W {shape}, q {q.shape}, mu {mu.shape}: need W 3n_c x 3n_c, q 3n_c and "
            "mu n_c with n_c >= 1"
        )
    W = prob.W.data if sps.issparse(prob.W) else prob.W  # the stored values: never densified
    bad = data_error(W, q, mu)
    if bad:
        raise MCPInputError(f"FCLIBProblem: {bad}")


def _prepare(
    formulation: FCLIBFormulation | str | None, solve_options: dict[str, Any]
) -> tuple[FCLIBFormulation, str, str, SolveOptions]:
    """Formulation, method, backend and options; typed errors before any file is read."""
    if formulation is None:
        method = _name(solve_options.get("method"))
        formulation = DEFAULT_FORMULATION if method in ("", "auto", "newton") else FCLIBFormulation.NCP
    form = FCLIBFormulation.parse(formulation)
    method, backend, options = _options(form, solve_options)
    return form, method, backend, options


def _reference(prob: FCLIBProblem) -> tuple[float | None, float | None, float | None]:
    """The reference residuals of :class:`FCLIBResult` (``None`` each when absent or not finite: a
    stored ``solution/r`` or ``u`` with NaN or inf is reported as null, never computed with)."""
    r, u = prob.r_ref, prob.u_ref
    if r is None or not np.isfinite(r).all():
        return None, None, None
    ref = friction_residual(prob.W, prob.q, prob.mu, r)
    if u is None or not np.isfinite(u).all():
        return ref, None, None
    ref_stored = friction_residual(prob.W, prob.q, prob.mu, r, u)
    consistency = float(np.abs(prob.W @ r + prob.q - u).max())
    return ref, ref_stored, consistency


def _solve_loaded(
    prob: FCLIBProblem,
    form: FCLIBFormulation,
    method: str,
    backend: str,
    options: SolveOptions,
    direct: bool,
    path: str,
) -> FCLIBResult:
    """Pose, solve and judge a loaded problem (:func:`solve_fclib_file`)."""
    from mcpkit.frontends.solve import solve

    if form is FCLIBFormulation.FB_SOC and np.any(prob.mu <= 0):
        raise MCPInputError("FCLIB formulation 'fb_soc' needs mu > 0 at every contact; use 'alart_curnier'")
    t0 = time.perf_counter()
    stages: list[FCLIBStage] = []
    if form is FCLIBFormulation.NCP:
        mcp, s_r, _ = fclib_ncp(prob)
        res = solve(mcp, method=method, backend=backend, options=options)
        have = bool(np.isfinite(res.z).all())
        r = reactions_from(mcp.split(res.z), s_r) if have else None
    else:
        res, r, stages = solve_equations(prob, ContactLaw(form.value), options, direct=direct)
    wall = time.perf_counter() - t0
    fr = None if r is None or not np.isfinite(r).all() else friction_residual(prob.W, prob.q, prob.mu, r)
    ref, ref_stored, consistency = _reference(prob)
    check = ToleranceCheck("friction residual", fr, float(options.tol), kind="friction")
    worst = None if r is None or not np.isfinite(r).all() else worst_contact_error(prob.W, prob.q, prob.mu, r)
    per = ToleranceCheck("worst contact error", worst, float(options.tol), kind="contact")
    return FCLIBResult(
        path=path, solve=res, friction=check, reactions=r,
        reference_friction_residual=ref, reference_friction_residual_stored_u=ref_stored,
        reference_consistency=consistency, n_contacts=prob.nc, title=prob.title, wall_time_s=wall,
        formulation=form.value, stages=tuple(stages), contact=per,
    )  # fmt: skip
