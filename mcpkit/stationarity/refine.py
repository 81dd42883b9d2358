r"""B-stationarity refinement of a homotopy point: LPEC, branch NLP, repeat.

A relaxation homotopy ends at a feasible point :math:`x^*` of the standard MPCC
:math:`\min f\ \text{s.t.}\ g_l \le g \le g_u,\ x_l \le x \le x_u,\ 0 \le G \perp H \ge 0`
that may be only C- or M-stationary: some branch of a biactive pair
(:math:`G_j = H_j = 0`) still offers descent. :class:`Refiner` repeats

1. classify :math:`x^k` (:func:`~mcpkit.stationarity.certificate.classify_stationarity`): S by
   multipliers ends the loop (S implies B); otherwise solve the LPEC
   (:mod:`mcpkit.stationarity.lpec`: branch enumeration for a few biactive pairs, a MILP with exact
   big-M bounds for more)

   .. math::

       v_k = \min_d \nabla f(x^k)^\top d\ \text{s.t. linearised active constraints},\
       0 \le \nabla G_j d \perp \nabla H_j d \ge 0\ (j \in I_{GH}),\ \|d\|_\infty \le 1;

   :math:`v_k \ge -\text{threshold}` certifies B and ends the loop;
2. otherwise the minimiser :math:`d` names a *piece*: a biactive pair with
   :math:`\nabla G_j d > \nabla H_j d` gets :math:`H_j = 0` (its :math:`G_j` may grow), the others
   :math:`G_j = 0`; a pair that is not biactive keeps its active side. The piece is an ordinary
   NLP

   .. math::

       \min f\ \text{s.t.}\ g_l \le g \le g_u,\ x_l \le x \le x_u,\
       G_{\mathcal{A}} = 0 \le H_{\mathcal{A}},\ H_{\bar{\mathcal{A}}} = 0 \le G_{\bar{\mathcal{A}}},

   solved by IPOPT (the homotopy's active-set :class:`~mcpkit.homotopy.loop.Polisher`,
   tolerance ``inner_tol_factor * tol``), warm-started at :math:`x^k` (and, if that does not
   lower :math:`f`, at :math:`x^k + \tau d`, a restart along the LPEC's descent direction);
3. the new point is accepted when it is feasible for the **original** pairs to ``tol`` and
   lowers :math:`f`; then :math:`k \gets k + 1`.

Every point of the loop is a point of some piece, so :math:`f` decreases strictly and the loop
visits each piece at most once; it stops at a certificate, at ``max_steps``, at the time limit,
when the LPEC is too large or undecided, or when a piece NLP fails. :class:`RefinementReport`
says which, and lists each :class:`RefineStep`.

**Escape** (:meth:`Refiner.escape`): a point left uncertified is retried from a bounded number
of points of the homotopy path: each path point's active side (:math:`G_j \le H_j \Rightarrow
G_j = 0`) is a piece whose NLP is solved from there and refined as above. The best certified
point (lowest :math:`f`) wins, and the report names the start that found it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from mcpkit.homotopy.loop import PointAssessor, Polisher
from mcpkit.problems.mpcc import MPCC
from mcpkit.solving.result import HomotopyStep
from mcpkit.stationarity.certificate import (
    LPEC_ENUMERATE_MAX,
    Stationarity,
    StationarityReport,
    _evaluate,
    build_lpec,
    classify_stationarity,
)
from mcpkit.stationarity.lpec import LPECSolution, solve_lpec

__all__ = ["RefineOptions", "RefineStep", "RefinementReport", "Refiner", "piece_mask"]


@dataclass(frozen=True)
class RefineOptions:
    """Settings of the B-stationarity refinement after an MPCC solve (:mod:`mcpkit.stationarity.refine`)."""

    enabled: bool = True
    """Refine every solved point until the LPEC or the multipliers certify it (B or S).
    ``False`` switches refinement off: the point is only classified."""
    max_steps: int = 10
    """Largest number of branch NLPs per start."""
    lpec_max_biactive: int = 2000
    """Largest biactive set for which the LPEC is solved (enumerated up to
    :data:`~mcpkit.stationarity.certificate.LPEC_ENUMERATE_MAX` pairs, a MILP above); larger: the
    refinement stops with reason "LPEC too large"."""
    lpec_time_limit: float = 10.0
    """Wall-clock limit of one LPEC MILP, seconds."""
    near_biactive_tol: float = 1e-3
    """After a certificate, pairs with ``max(G_j, H_j) <= near_biactive_tol`` (nearly biactive)
    are treated as biactive in one more LPEC; a descent direction there proposes a neighbouring
    piece, kept only when its NLP lowers ``f`` (the certificate is always re-established at the
    exact activity tolerance). ``0`` switches this local piece search off."""
    snap_tol: float = 1e-3
    """When a point stays uncertified because it is inexact (no LPEC step lowers ``f``): the
    bounds of ``x`` and inequality rows of ``g`` within ``eps * max(1, |bound|)``, and the free
    side of a pair when it is ``<= eps``, are fixed and the piece NLP is solved once more
    (active-set identification), for ``eps = snap_tol / 10`` and then ``snap_tol``; a new point
    is kept only when it is certified and ``f`` rises by at most ``tol * max(1, |f|)``
    (IPOPT's absolute complementarity tolerance lets a constraint with a small multiplier end
    up to ``compl_inf_tol / multiplier`` away from its bound). ``0`` switches this off."""
    flip_pairs: int = 4
    """After a certificate: up to this many pairs whose active side has a multiplier of the
    wrong sign (``nu_j < 0`` with ``G_j = 0``, or ``xi_j < 0`` with ``H_j = 0``: ``f`` falls
    when that side is released, which the other side forbids) are *flipped* one at a time, most
    negative first: the neighbouring piece's NLP is solved from the point and kept when it
    lowers ``f`` by more than ``tol * max(1, |f|)``; refinement then continues from there (a
    first-improvement local search over adjacent pieces). ``0`` switches it off."""
    flip_unchanged_stop: int = 2
    """The flip search stops after this many flips in a row whose branch NLP leaves ``f``
    unchanged (within ``tol * max(1, |f|)``): their wrong-sign multipliers did not predict a
    descent (a degenerate direction), and the candidates after them, with smaller multipliers,
    seldom do better. ``0``: never. On NOSBENCH's SMOCP_001_006 (464 variables) the four flips
    all ended within 3e-9 of ``f`` (0.5 s of a 2.0-s call); on MacMPEC and MPECLib one flip of
    190 left ``f`` unchanged (MacMPEC's ``bilevel1m``, its last), so the rule changes nothing
    there (2026-11-27)."""
    flip_iteration_factor: float = 0.5
    """Budget of the flip search in IPOPT iterations: this multiple of the homotopy's iterations
    (and, under a solve's ``time_limit``, at most half of the time it leaves); ``0`` switches
    the search off. Counted in iterations, not seconds, so the search, and the plan it returns,
    is the same on any machine and under any load (with a budget in seconds MacMPEC's
    ``bilevel1m`` ended at f = 0 or f = 5 depending on the load)."""
    multistart: int = 3
    """Largest number of homotopy-path points tried when the point stays uncertified
    (0: no escape)."""
    time_limit: float | None = None
    """Wall-clock cap of the whole refinement, seconds (``None``: none beyond the others)."""
    iteration_factor: float = 2.0
    """The refinement (branch NLPs, flips, escape) spends at most ``iteration_factor`` times the
    homotopy's IPOPT iterations, and at least :attr:`min_iterations`; also never more than the
    solve's ``time_limit`` leaves. When the budget is spent the point keeps its class, reason
    ``"iteration budget"``. Iterations, not seconds: the same plan under any load."""
    min_iterations: int = 500
    """Smallest refinement budget, IPOPT iterations (small problems: a few branch NLPs)."""
    large_vars: int = 1000
    """Above this many variables :attr:`large_iteration_factor` replaces :attr:`iteration_factor`. (At 500
    MacMPEC's ``pack-rig3c-16``, 527 variables, stayed uncertified: its one branch step needs more
    than 0.1x the homotopy.)"""
    keep_certified_above: int = 500
    """Above this many variables (as :data:`~mcpkit.orchestration.planner.SECOND_OPINION_MAX_VARS`) a
    certified point is kept as it is: no flips and no near-biactive search (:attr:`flip_pairs`
    and :attr:`near_biactive_tol` act as 0). Those only lower ``f`` further, each by a branch NLP
    as costly as a homotopy subproblem (NOSBENCH's CPWF_001_030, 934 variables, certified S at
    once: 13.2 s with them, 11.2 s without, 9.2 s for the homotopy alone; on CARTIM_001_040 a flip
    ran into its 2.3 s budget and was stopped). An uncertified point is still refined (LPEC
    steps, escape)."""
    large_iteration_factor: float = 1.0
    """The refinement budget of a large MPCC, as a multiple of the homotopy's IPOPT iterations
    (and at least :attr:`min_iterations`). Above :attr:`keep_certified_above` a certified point does no
    objective search, so this budget is spent only on points the homotopy left uncertified (LPEC
    steps, branch NLPs, escape), each branch NLP as costly as a homotopy subproblem. It was 0.1
    until 2026-11-27, which left NOSBENCH's MWFOCP_001_050 (2,605 variables) M-stationary at
    f = 0.955613 (its branch NLP was stopped); with 1.0 one branch step certifies it S at
    f = 0.806667 (9d59f9c: 0.953226), 33 s in all with a 60 s limit (0.5 stopped that NLP too).
    With a time limit a large point's refinement also takes at most half of what the limit leaves
    (:meth:`mcpkit.orchestration.mpcc_solver.MPCCSolver.solve`), so the call returns before the limit."""

    def __post_init__(self) -> None:
        from mcpkit.errors import MCPInputError

        for name in (
            "max_steps", "lpec_max_biactive", "multistart", "flip_pairs", "large_vars",
            "keep_certified_above", "flip_unchanged_stop", "min_iterations",
        ):  # fmt: skip
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise MCPInputError(f"RefineOptions.{name} must be an int >= 0, got {v!r}")
        if not isinstance(self.enabled, bool):
            raise MCPInputError(f"RefineOptions.enabled must be a bool, got {self.enabled!r}")
        for name in (
            "lpec_time_limit", "time_limit", "near_biactive_tol", "snap_tol", "flip_iteration_factor",
            "iteration_factor", "large_iteration_factor",
        ):  # fmt: skip
            v = getattr(self, name)
            zero_ok = ("near_biactive_tol", "snap_tol", "flip_iteration_factor")
            if (v is None and name == "time_limit") or (name in zero_ok and v == 0):
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
                raise MCPInputError(f"RefineOptions.{name} must be a number > 0, got {v!r}")


@dataclass
class IterationBudget:
    """IPOPT iterations a refinement may spend in all (``total``) and in its flip search
    (``flips``); ``None``: no limit. Counted, not timed, so the refinement's outcome does not
    depend on the machine or its load; only the caller's time limit reads the clock."""

    total: int | None
    """Iterations of the whole refinement (``None``: no limit)."""
    flips: int | None
    """Iterations of the flip search (``None``: no limit)."""
    spent: int = 0
    """Iterations spent so far."""
    flip_spent: int = 0
    """Iterations spent so far in flips."""

    def spend(self, iterations: int) -> None:
        """Count the iterations of one IPOPT call."""
        self.spent += max(int(iterations), 0)

    def flips_left(self) -> int | None:
        """Iterations the flip search may still spend (``None``: no limit); a flip's branch NLP
        stops there, its point not taken."""
        return None if self.flips is None else max(self.flips - self.flip_spent, 1)

    def spent_all(self, flip: bool = False) -> bool:
        """Whether the budget (with ``flip``: also the flip search's) is spent."""
        if self.total is not None and self.spent >= self.total:
            return True
        return flip and self.flips is not None and self.flip_spent >= self.flips


@dataclass(frozen=True)
class RefineStep:
    """One branch NLP of the refinement."""

    start: str
    """Which start this step belongs to (``"homotopy"`` or ``"path k"``)."""
    lpec_value: float
    r"""The LPEC value :math:`\nabla f^\top d` that triggered the step (``nan`` for the first
    NLP of a path start, which no LPEC triggered)."""
    lpec_method: str
    """``"enumerate"``, ``"milp"`` (an LPEC step; ``"... (near-biactive)"`` with nearly
    biactive pairs), ``"flip"`` (a pair flipped, :attr:`RefineOptions.flip_pairs`;
    :attr:`lpec_value` is then the wrong-sign multiplier), ``"snap"``, ``"rescale"`` or ``""``
    (the first NLP of a path start)."""
    switched: tuple[tuple[int, str], ...]
    """Biactive pairs (standard-form indices) moved into a branch: ``(j, "G=0")`` or ``(j, "H=0")``."""
    n_fixed_G: int
    """Pairs of the piece with ``G_j = 0`` fixed (the others have ``H_j = 0``); ``-1`` for a
    snap step (``lpec_method == "snap"``: the piece of the point with its nearly active bounds
    fixed, see :attr:`RefineOptions.snap_tol`)."""
    f_before: float
    f_after: float
    nlp_status: str
    """IPOPT's status of the branch NLP."""
    accepted: bool
    """Feasible on the original pairs and lowered ``f`` (a snap step: certified, ``f`` not
    raised beyond ``tol``)."""

    @property
    def decrease(self) -> float:
        """``f_before - f_after`` (positive for an accepted step)."""
        return self.f_before - self.f_after


@dataclass
class RefinementReport:
    """What the refinement did (``result.extra["refinement"]``)."""

    certified: str | None
    """``"S"`` (multipliers) or ``"B"`` (LPEC) when the final point is certified, else ``None``."""
    reason: str
    """Why refinement stopped: ``"certified"``, ``"step limit"``, ``"time limit"``,
    ``"LPEC too large"``, ``"LPEC undecided: ..."``, ``"piece NLP failed: ..."``,
    ``"not feasible"``, ``"no point"``, ``"off"``."""
    start: str
    """The start whose point is reported: ``"homotopy"`` or ``"path k"`` (escape)."""
    f_initial: float
    f_final: float
    steps: list[RefineStep] = field(default_factory=list)
    starts_tried: int = 1
    wall_time_s: float = 0.0

    def summary(self) -> str:
        """One line for the result's message."""
        cert = f"certified {self.certified}" if self.certified else f"uncertified ({self.reason})"
        n = sum(s.accepted and s.lpec_method not in ("rescale", "snap", "flip") for s in self.steps)
        n_flip = sum(s.accepted and s.lpec_method == "flip" for s in self.steps)
        return (
            f"refinement: {cert}, {n} branch step(s), {n_flip} flip(s), "
            f"f {self.f_initial:.6g} -> {self.f_final:.6g}, start {self.start}"
        )


def piece_mask(
    G: np.ndarray, H: np.ndarray, JG: np.ndarray, JH: np.ndarray, d: np.ndarray | None, tol: float
) -> tuple[np.ndarray, tuple[tuple[int, str], ...]]:
    """Piece of a point and a direction: ``1`` where ``G_j = 0`` is fixed, ``0`` where ``H_j = 0``.

    Off the biactive set the active side (``G_j <= H_j``); on it the side the direction keeps
    at zero (``grad G_j d > grad H_j d``: ``G_j`` grows, fix ``H_j = 0``).
    Returns ``(mask, switched)`` with the biactive pairs and their chosen side.
    """
    mask = (G <= H).astype(float)
    switched: list[tuple[int, str]] = []
    if d is not None:
        bi = np.flatnonzero((G <= tol) & (H <= tol))
        gd, hd = JG[bi] @ d, JH[bi] @ d
        scale = 1e-9 * max(1.0, float(np.max(np.abs(d), initial=0.0)))
        for j, a, b in zip(bi, gd, hd, strict=True):
            if a > b + scale:
                mask[j] = 0.0
            elif b > a + scale:
                mask[j] = 1.0
            switched.append((int(j), "G=0" if mask[j] else "H=0"))
    return mask, tuple(switched)


@dataclass
class RefineWalk:
    """One refinement from one start: the point it stands at and what it has done so far.

    :meth:`Refiner.run` creates it; its descent (:meth:`Refiner._descend`) and flip search
    (:meth:`Refiner._flip`) move the point and append their steps.
    """

    x: np.ndarray
    """The current point (standard-form variables)."""
    f: float
    """Its objective on the user's problem."""
    rep: StationarityReport
    """Its classification."""
    p: np.ndarray
    """The parameter values."""
    deadline: float | None
    """The refinement's deadline (``time.perf_counter``; ``None``: none)."""
    start: str
    """Where the walk started (``"homotopy"``, ``"path k"``), for its steps."""
    steps: list[RefineStep] = field(default_factory=list)
    """Every branch NLP, flip, snap and rescale so far."""
    branch_nlps: int = 0
    """Branch NLPs solved (bounded by ``RefineOptions.max_steps``)."""

    def move(self, x: np.ndarray, f: float, rep: StationarityReport) -> None:
        """Stand at ``x`` with objective ``f`` and classification ``rep``."""
        self.x, self.f, self.rep = x, f, rep


class Refiner:
    """The refinement loop on the standard form ``mpcc`` (see the module docstring).

    Parameters
    ----------
    mpcc
        The standard-form MPCC the points live in.
    polisher
        The branch NLP (IPOPT) on ``mpcc``.
    assessor
        The :class:`~mcpkit.homotopy.loop.PointAssessor` of ``mpcc``'s points: ``f`` and the
        residuals on the user's problem (handed down, so the refinement calls no solver back).
    tol
        The solve's tolerance (feasibility of accepted points).
    activity_tol
        Activity and residual tolerance of the classification and of the LPEC.
    options
        :class:`RefineOptions`.
    scaled_polisher
        ``s -> Polisher`` whose IPOPT scales the objective by ``s`` (``obj_scaling_factor``);
        used when a point with a small objective gradient is stuck (see :meth:`run`).
    """

    def __init__(
        self,
        mpcc: MPCC,
        polisher: Polisher,
        assessor: PointAssessor,
        tol: float,
        activity_tol: float,
        options: RefineOptions,
        scaled_polisher: Callable[[float], Polisher] | None = None,
    ) -> None:
        self.mpcc, self.polisher, self.assessor = mpcc, polisher, assessor
        self.tol, self.activity_tol, self.options = tol, activity_tol, options
        self.base_polisher = polisher
        self.scaled_polisher = scaled_polisher
        self._scaled: dict[float, Polisher] = {}
        self._flip_deadline: float | None = None
        self.on_step: Callable[[HomotopyStep], None] | None = None
        """Called with each branch NLP as a :class:`~mcpkit.solving.result.HomotopyStep` of phase
        ``"refine"`` (a live progress display; ``None``: nobody listens)."""
        self.budget = IterationBudget(None, None)
        """IPOPT iterations the refinement and its flip search may still spend (set by the
        caller per refinement; no limit by default)."""
        self.check_deadline: float | None = None
        """Deadline of every classification (the solve's time limit; ``None``: none). The
        refinement's own, shorter deadline bounds its LPECs and branch NLPs; a classification
        may finish past it (it reports the point's class) but not past this one."""

    def classify(self, x: np.ndarray, p: np.ndarray, deadline: float | None) -> StationarityReport:
        """Classify ``x`` with the LPEC limits of the options."""
        left = None if deadline is None else max(deadline - time.perf_counter(), 1e-3)
        limit = self.options.lpec_time_limit if left is None else min(left, self.options.lpec_time_limit)
        return classify_stationarity(
            self.mpcc, x, p, self.activity_tol, self.options.lpec_max_biactive, lpec_time_limit=limit,
            deadline=self.check_deadline,
        )  # fmt: skip

    def _branch_nlp(
        self,
        x: np.ndarray,
        p: np.ndarray,
        mask: np.ndarray,
        deadline: float | None,
        max_iter: int | None = None,
    ) -> tuple[np.ndarray | None, float, str]:
        res = self.polisher.solve(x, p, mask, deadline, max_iter)
        self.budget.spend(res.iterations)
        if not np.isfinite(res.x).all():
            self._report(res.status, res.iterations, res.wall_time_s, np.inf)
            return None, np.inf, res.status
        if max_iter is not None and res.status == "Maximum_Iterations_Exceeded":  # stopped at the cap
            self._report(res.status, res.iterations, res.wall_time_s, np.inf)
            return None, np.inf, f"{res.status} (iteration budget of {max_iter})"
        # IPOPT relaxes bounds slightly: the clipped and the raw point are both judged
        xn, f, a = self.assessor.clipped_or_given(res.x, p)
        self._report(res.status, res.iterations, res.wall_time_s, a.residual)
        if not a.meets(self.tol) or not np.isfinite(f):
            return None, np.inf, f"{res.status} (point off by {max(a.residual, a.violation):.1e})"
        return xn, f, res.status

    def _report(self, status: str, iterations: int, wall_time_s: float, residual: float) -> None:
        """Hand one branch NLP to :attr:`on_step`, if someone listens."""
        if self.on_step is not None:
            k = self.budget.spent  # a running count for the display
            self.on_step(HomotopyStep(k, 0.0, residual, status, iterations, wall_time_s, "refine"))

    def _flip(self, w: RefineWalk) -> bool:
        """Move ``w`` by the first improving flip of a pair with a wrong-sign multiplier (see
        ``flip_pairs``); ``False`` when none improves."""
        k = self.options.flip_pairs
        if k == 0:
            return False
        x, f, rep, p = w.x, w.f, w.rep, w.p
        loc = _evaluate(self.mpcc, x, p)
        # candidates only (a flip is kept when it lowers f): any clearly negative multiplier,
        # at the solve's tolerance rather than the looser residual threshold of the certificate
        tol, thr = self.activity_tol, rep.residual_threshold * self.tol / self.activity_tol
        on_g = (loc.G <= tol) & (loc.H > tol)
        on_h = (loc.H <= tol) & (loc.G > tol)
        score = np.where(on_g, rep.nu_G, np.where(on_h, rep.xi_H, 0.0))
        cand = np.flatnonzero(score < -thr)
        cand = cand[np.argsort(score[cand])][:k]
        if cand.size == 0:
            return False
        base = self.polisher.active_mask(x, p)
        stops = [t for t in (w.deadline, self._flip_deadline) if t is not None]
        stop = min(stops) if stops else None
        unchanged = 0
        for j in cand:
            if w.branch_nlps >= self.options.max_steps or (stop is not None and time.perf_counter() > stop):
                return False
            if self.budget.spent_all(flip=True):
                return False
            w.branch_nlps += 1
            mask = base.copy()
            mask[j] = 1.0 - mask[j]
            before = self.budget.spent
            xn, fn, status = self._branch_nlp(x, p, mask, stop, self.budget.flips_left())
            self.budget.flip_spent += self.budget.spent - before
            ok = xn is not None and fn < f - self.tol * max(1.0, abs(f))
            side = "G=0" if mask[j] else "H=0"
            w.steps.append(
                RefineStep(
                    w.start, float(score[j]), "flip", ((int(j), side),), int(mask.sum()), f, fn, status, ok
                )
            )
            if ok and xn is not None:
                w.move(xn, fn, self.classify(xn, p, w.deadline))
                return True
            unchanged = unchanged + 1 if xn is not None and abs(fn - f) <= self.tol * max(1.0, abs(f)) else 0
            if 0 < self.options.flip_unchanged_stop <= unchanged:
                return False
        return False

    def _rescale(self, x: np.ndarray, p: np.ndarray) -> bool:
        r"""Switch to a branch NLP with the objective scaled by :math:`s = 10^{\lceil -\log_{10}
        \|\nabla f\|_\infty \rceil}` when :math:`\|\nabla f\|_\infty < 0.1` (at most :math:`10^8`);
        ``False`` when not applicable or already scaled."""
        if self.scaled_polisher is None or self.polisher is not self.base_polisher:
            return False
        gmax = float(np.max(np.abs(_evaluate(self.mpcc, x, p).df), initial=0.0))
        if not 0.0 < gmax < 0.1:
            return False
        scale = float(min(10.0 ** np.ceil(-np.log10(gmax)), 1e8))
        if scale not in self._scaled:
            self._scaled[scale] = self.scaled_polisher(scale)
        self.polisher = self._scaled[scale]
        return True

    def _snap(
        self, x: np.ndarray, p: np.ndarray, eps: float, deadline: float | None
    ) -> tuple[np.ndarray | None, float, str]:
        """The piece NLP of ``x`` with everything nearly active fixed (see ``snap_tol``).

        Fixed: bounds of ``x`` and inequality rows of ``g`` within ``eps * max(1, |bound|)``,
        and the free side of a pair (``H_j`` where ``G_j = 0`` is the piece's, and vice versa)
        when it is ``<= eps`` (the pair is then held biactive).
        """
        mp, pol = self.mpcc, self.polisher
        loc = _evaluate(mp, x, p)
        mask = pol.active_mask(x, p)
        lbx, ubx = mp.lbx.copy(), mp.ubx.copy()
        lo = np.isfinite(lbx) & (x - lbx <= eps * np.maximum(1.0, np.abs(lbx))) & (lbx < ubx)
        hi = np.isfinite(ubx) & (ubx - x <= eps * np.maximum(1.0, np.abs(ubx))) & (lbx < ubx) & ~lo
        ubx[lo], lbx[hi] = lbx[lo], ubx[hi]
        lbg, ubg = pol.lbg.copy(), pol.ubg.copy()
        ng, nc = loc.g.size, loc.G.size
        glo, ghi = lbg[:ng], ubg[:ng]
        near_lo = np.isfinite(glo) & (loc.g - glo <= eps * np.maximum(1.0, np.abs(glo))) & (glo < ghi)
        near_hi = np.isfinite(ghi) & (ghi - loc.g <= eps * np.maximum(1.0, np.abs(ghi))) & (glo < ghi)
        near_hi &= ~near_lo
        ubg[:ng][near_lo], lbg[:ng][near_hi] = glo[near_lo], ghi[near_hi]
        n_fixed = int(lo.sum() + hi.sum() + near_lo.sum() + near_hi.sum())
        off = ng  # the sign rows G >= 0, H >= 0 of the branch NLP (when the bounds do not imply them)
        for implied, vals, free in (
            (mp.G_implied_by_bounds, loc.G, mask == 0),
            (mp.H_implied_by_bounds, loc.H, mask == 1),
        ):
            if implied:
                continue
            hold = free & (vals <= eps)
            ubg[off : off + nc][hold] = 0.0
            lbg[off : off + nc][hold] = -np.inf  # "<= 0", not an equality (degrees of freedom)
            n_fixed += int(hold.sum())
            off += nc
        if n_fixed == 0:
            return None, np.inf, "nothing to fix"
        lbg[
            -nc:
        ] = -np.inf  # the piece's rows as "<= 0" (with the sign rows: = 0), as few equalities as possible
        x0 = np.clip(x, lbx, ubx)
        res = pol.nlp.solve(x0, np.concatenate([p, mask]), lbx, ubx, lbg, ubg, deadline=deadline)
        self.budget.spend(res.iterations)
        if not np.isfinite(res.x).all():
            return None, np.inf, res.status
        xn = np.asarray(res.x, dtype=float)
        f, a = self.assessor.measure(xn, p)
        if not a.meets(self.tol) or not np.isfinite(f):
            return None, np.inf, f"{res.status} (point off by {max(a.residual, a.violation):.1e})"
        return xn, f, res.status

    def _near_lpec(
        self, x: np.ndarray, p: np.ndarray, rep: StationarityReport, deadline: float | None
    ) -> LPECSolution | None:
        """The LPEC with nearly biactive pairs counted as biactive; its solution when it descends."""
        eps = self.options.near_biactive_tol
        if eps <= self.activity_tol:
            return None
        loc = _evaluate(self.mpcc, x, p)
        both = np.maximum(loc.G, loc.H)
        if not np.any((both > self.activity_tol) & (both <= eps)):
            return None
        left = None if deadline is None else deadline - time.perf_counter()
        if left is not None and left <= 0:
            return None
        limit = self.options.lpec_time_limit if left is None else min(left, self.options.lpec_time_limit)
        lpec = build_lpec(self.mpcc, loc, x, eps)
        if lpec.n_biactive > self.options.lpec_max_biactive:
            return None
        # only a proposal (kept when its NLP lowers f), so any clear descent counts
        threshold = self.tol * max(1.0, float(np.linalg.norm(loc.df)))
        sol = solve_lpec(lpec, threshold, enumerate_max=LPEC_ENUMERATE_MAX, time_limit=limit)
        return sol if sol.verdict is False else None

    def run(
        self,
        x: np.ndarray,
        p: np.ndarray,
        deadline: float | None,
        start: str = "homotopy",
        first_mask: np.ndarray | None = None,
        flip_budget: float | None = None,
    ) -> tuple[np.ndarray, StationarityReport, RefinementReport]:
        """Refine ``x``; ``first_mask``: solve that piece's NLP first (a path start);
        ``flip_budget``: seconds for the flip search (``None``: no limit but ``deadline``)."""
        t0 = time.perf_counter()
        self._flip_deadline = None if flip_budget is None else t0 + flip_budget
        self.polisher = self.base_polisher
        f0, _ = self.assessor.measure(x, p)
        steps: list[RefineStep] = []
        if first_mask is not None:
            xn, fn, status = self._branch_nlp(x, p, first_mask, deadline)
            steps.append(
                RefineStep(start, np.nan, "", (), int(first_mask.sum()), f0, fn, status, xn is not None)
            )
            if xn is None:
                rep = self.classify(x, p, deadline)
                out = RefinementReport(None, f"piece NLP failed: {status}", start, f0, f0, steps)
                out.wall_time_s = time.perf_counter() - t0
                return x, rep, out
            x, f0 = xn, fn
        w = RefineWalk(x, f0, self.classify(x, p, deadline), p, deadline, start, steps)
        reason = self._settle(w)
        while reason == "certified" and w.branch_nlps < self.options.max_steps:
            if not self._flip(w):
                break
            reason = self._descend(w)
        certified = None
        if reason == "certified":
            certified = "S" if w.rep.level is Stationarity.S else "B"
        out = RefinementReport(certified, reason, start, f0, w.f, w.steps)
        out.wall_time_s = time.perf_counter() - t0
        return w.x, w.rep, out

    def _settle(self, w: RefineWalk) -> str:
        """Descend from ``w``'s point; when a piece NLP fails at a feasible point, rescale the
        objective or snap nearly active constraints (twice at most) and descend again. Returns
        why the descent stopped (``"certified"``, ``"time limit"``, ...)."""
        snaps_left = 2
        while True:
            reason = self._descend(w)
            stuck = reason.startswith("piece NLP failed") and w.rep.feasible and self.options.snap_tol > 0
            if not stuck or snaps_left == 0 or (w.deadline is not None and time.perf_counter() > w.deadline):
                return reason
            if self.budget.spent_all():
                return reason
            snaps_left -= 1
            if self._rescale(w.x, w.p):
                # IPOPT's absolute tolerances are loose for a small objective: scale it up and
                # descend again (the scaled branch NLP stays in use for this start)
                w.steps.append(
                    RefineStep(w.start, np.nan, "rescale", (), -1, w.f, w.f, "objective scaled", True)
                )
                reason = self._descend(w, force=True)
                if reason == "certified" or not reason.startswith("piece NLP failed"):
                    return reason
            moved, cert = self._snap_step(w)
            if not moved:
                return reason
            if cert:
                return "certified"

    def _snap_step(self, w: RefineWalk) -> tuple[bool, bool]:
        """Try the snapped piece NLPs of ``w``'s point (``snap_tol / 10``, then ``snap_tol``); move
        to the first kept one. Returns ``(moved, certified)``."""
        for eps in (0.1 * self.options.snap_tol, self.options.snap_tol):
            xn, fn, status = self._snap(w.x, w.p, eps, w.deadline)
            ok, cert, rep_n = False, False, None
            if xn is not None:
                rep_n = self.classify(xn, w.p, w.deadline)
                cert = rep_n.level is Stationarity.S or bool(rep_n.b_stationary)
                # kept when certified without raising f beyond tol, or when it lowers f
                ok = (cert and fn <= w.f + self.tol * max(1.0, abs(w.f))) or fn < w.f - 1e-12 * max(
                    1.0, abs(w.f)
                )
            w.steps.append(RefineStep(w.start, np.nan, "snap", (), -1, w.f, fn, status, ok))
            if ok and rep_n is not None and xn is not None:
                w.move(xn, fn, rep_n)
                return True, cert
        return False, False

    def _descend(self, w: RefineWalk, force: bool = False) -> str:
        """LPEC and branch NLP from ``w``'s point until a certificate or a stop (``w.branch_nlps``
        counts branch NLPs); returns why it stopped.

        ``force``: first re-solve the piece of the point (no LPEC needed; after a rescale).
        """
        p, deadline = w.p, w.deadline
        if force and w.branch_nlps < self.options.max_steps:
            w.branch_nlps += 1
            mask = self.polisher.active_mask(w.x, p)
            xn, fn, status = self._branch_nlp(w.x, p, mask, deadline)
            ok = xn is not None and fn <= w.f + self.tol * max(1.0, abs(w.f))
            w.steps.append(RefineStep(w.start, np.nan, "", (), int(mask.sum()), w.f, fn, status, ok))
            if ok and xn is not None:
                w.move(xn, fn, self.classify(xn, p, deadline))
        while True:
            x, f, rep = w.x, w.f, w.rep
            near: LPECSolution | None = None
            if rep.level is Stationarity.NOT_CHECKED:
                return "time limit"
            if rep.level is Stationarity.S or rep.b_stationary:
                near = (
                    self._near_lpec(x, p, rep, deadline) if w.branch_nlps < self.options.max_steps else None
                )
                if near is None:
                    return "certified"
            elif not rep.feasible:
                return "not feasible"
            elif rep.b_stationary is None:
                why = rep.lpec.reason if rep.lpec is not None else "LPEC skipped"
                return "LPEC too large" if "too large" in why else f"LPEC undecided: {why}"
            if w.branch_nlps >= self.options.max_steps:
                return "step limit"
            if deadline is not None and time.perf_counter() > deadline:
                return "time limit"
            if self.budget.spent_all():
                return "iteration budget"
            lp = near if near is not None else rep.lpec
            d = near.d if near is not None else rep.descent_direction
            loc = _evaluate(self.mpcc, x, p)
            act = self.options.near_biactive_tol if near is not None else self.activity_tol
            mask, switched = piece_mask(loc.G, loc.H, loc.JG, loc.JH, d, act)
            value = float(lp.value) if lp is not None else np.nan
            method = "" if lp is None else lp.method + (" (near-biactive)" if near is not None else "")
            w.branch_nlps += 1
            xn, fn, status = self._branch_nlp(x, p, mask, deadline)
            if (xn is None or not fn < f - 1e-12 * max(1.0, abs(f))) and d is not None:
                # restart along the LPEC's descent direction: off the corner, inside the piece's
                # linearisation (d is in the unit box; tau scales it to the point)
                tau = 1e-2 * max(1.0, float(np.max(np.abs(x), initial=0.0)))
                xs = np.clip(x + tau * d, self.mpcc.lbx, self.mpcc.ubx)
                xr, fr, status_r = self._branch_nlp(xs, p, mask, deadline)
                if xr is not None and (xn is None or fr < fn):
                    xn, fn, status = xr, fr, f"{status_r} (restart along d)"
            ok = xn is not None and fn < f - 1e-12 * max(1.0, abs(f))
            w.steps.append(RefineStep(w.start, value, method, switched, int(mask.sum()), f, fn, status, ok))
            if not ok or xn is None:
                if near is not None:  # the point itself is certified; the neighbour was no better
                    return "certified"
                return "piece NLP failed: " + (status if xn is None else f"no decrease ({status})")
            w.move(xn, fn, self.classify(xn, p, deadline))

    def escape(
        self,
        best: tuple[np.ndarray, StationarityReport, RefinementReport],
        path: Sequence[np.ndarray],
        p: np.ndarray,
        deadline: float | None,
    ) -> tuple[np.ndarray, StationarityReport, RefinementReport]:
        """Bounded multistart from homotopy path points when ``best`` is uncertified.

        Up to ``options.multistart`` distinct pieces (active sides of the path points, latest
        first) are solved and refined; the certified point with the lowest ``f`` wins (an
        uncertified ``best`` loses to any certified one).
        """
        t0 = time.perf_counter()
        x0, rep0, r0 = best
        if r0.certified or self.options.multistart == 0 or not path:
            return best
        seen: set[bytes] = set()
        loc0 = _evaluate(self.mpcc, x0, p)
        seen.add((loc0.G <= loc0.H).astype(float).tobytes())
        tried = 0
        steps = list(r0.steps)
        winner = best
        for k in range(len(path) - 1, -1, -1):
            if tried >= self.options.multistart:
                break
            if (deadline is not None and time.perf_counter() > deadline) or self.budget.spent_all():
                break
            xk = path[k]
            mask = self.polisher.active_mask(xk, p)
            key = mask.tobytes()
            if key in seen:
                continue
            seen.add(key)
            tried += 1
            cand = self.run(xk, p, deadline, start=f"path {k}", first_mask=mask)
            steps.extend(cand[2].steps)
            if cand[2].certified and (not winner[2].certified or cand[2].f_final < winner[2].f_final):
                winner = cand
        x, rep, rr = winner
        out = RefinementReport(rr.certified, rr.reason, rr.start, r0.f_initial, rr.f_final, steps, 1 + tried)
        out.wall_time_s = r0.wall_time_s + time.perf_counter() - t0
        return x, rep, out
