r"""What every IPOPT reformulation of an MPCC provides, and the shared constraint pieces.

A reformulation turns :math:`0 \le G \perp H \ge 0` into smooth NLP constraints controlled by
one scalar parameter :math:`t` (Scholtes :math:`\sigma`, Fischer-Burmeister :math:`\varepsilon`,
penalty :math:`\rho`). The NLP parameter vector is :math:`(p, t)`, so one built IPOPT solver
serves the whole homotopy and every parametric re-solve.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import casadi as ca
import numpy as np

from mcpkit.problems.mpcc import MPCC, affine_in
from mcpkit.solving.options import SolveOptions
from mcpkit.solving.registry import reformulation_entry


@dataclass
class NLPTemplate:
    """An NLP with parameter vector ``(p, t)``: ``min f`` s.t. ``lbg <= g <= ubg``."""

    x: ca.SX | ca.MX
    p: ca.SX | ca.MX
    f: ca.SX | ca.MX
    g: ca.SX | ca.MX
    lbg: np.ndarray
    ubg: np.ndarray
    n_extra: int = 0
    """Variables the reformulation appends to the MPCC's ``x`` (bounded below by 0, e.g. the
    elastic variables of :mod:`~mcpkit.homotopy.elastic`); the homotopy drops them before judging."""
    extra_start: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None
    """``(x, p) -> start values of the appended variables`` (zeros when ``None``)."""
    base: MPCC | None = None
    """The MPCC whose rows come first in :attr:`g` (``g = [base.g; extra_rows]``), so that the
    derivatives of its rows are shared (:mod:`mcpkit.problems.derivatives`); ``None``: not known."""
    extra_rows: ca.SX | ca.MX | None = None
    """The rows after ``base.g`` in :attr:`g`."""

    def is_affine(self) -> bool:
        r"""Whether the objective and the rows are affine in :math:`x` for every value of
        :math:`(p, t)`: the NLP is an LP (:func:`~mcpkit.problems.mpcc.affine_in`)."""
        return affine_in(self.x, self.f, self.g)


def sign_constraints(mpcc: MPCC) -> tuple[list[ca.SX], list[np.ndarray], list[np.ndarray]]:
    """Rows ``G >= 0`` and ``H >= 0`` unless the variable bounds already imply them."""
    rows: list[ca.SX] = []
    lo: list[np.ndarray] = []
    hi: list[np.ndarray] = []
    nc = mpcc.n_pairs
    if nc and not mpcc.G_implied_by_bounds:
        rows.append(mpcc.G)
        lo.append(np.zeros(nc))
        hi.append(np.full(nc, np.inf))
    if nc and not mpcc.H_implied_by_bounds:
        rows.append(mpcc.H)
        lo.append(np.zeros(nc))
        hi.append(np.full(nc, np.inf))
    return rows, lo, hi


def assemble(
    mpcc: MPCC,
    t: ca.SX | ca.MX,
    f: ca.SX | ca.MX,
    extra_rows: list[ca.SX],
    extra_lo: list[np.ndarray],
    extra_hi: list[np.ndarray],
) -> NLPTemplate:
    """Stack the MPCC's own constraints with the reformulation's rows."""
    rows = [mpcc.g, *extra_rows]
    lo = [mpcc.lbg, *extra_lo]
    hi = [mpcc.ubg, *extra_hi]
    return NLPTemplate(
        x=mpcc.x,
        p=ca.vertcat(mpcc.p, t),
        f=f,
        g=ca.vertcat(*rows) if rows else ca.SX(0, 1),
        lbg=np.concatenate(lo) if lo else np.zeros(0),
        ubg=np.concatenate(hi) if hi else np.zeros(0),
        base=mpcc,
        extra_rows=ca.vertcat(*extra_rows) if extra_rows else type(mpcc.x)(0, 1),
    )


class Reformulation(ABC):
    """A parametrised smooth NLP whose solutions tend to MPCC solutions as the parameter moves."""

    #: Method name reported in results.
    name: str = ""
    #: Name of the homotopy parameter (for traces and plots).
    parameter_name: str = "t"
    #: IPOPT options of this reformulation's warm-started subproblems, over
    #: :data:`~mcpkit.homotopy.ipopt.WARM_START_OPTIONS` (the user's ``ipopt_options`` still win).
    warm_start_options: ClassVar[dict[str, Any]] = {}

    @abstractmethod
    def build(self, mpcc: MPCC) -> NLPTemplate:
        """The NLP for ``mpcc`` with the homotopy parameter appended to ``p``."""

    @abstractmethod
    def schedule(self, options: SolveOptions) -> Iterator[float]:
        """Parameter values to visit, in order."""

    def controller(self, options: SolveOptions) -> ParameterController:
        """How the parameter moves from one subproblem to the next (default: the schedule)."""
        return ScheduleController(self.schedule(options))

    def warm_lam_g(
        self, lam_g: np.ndarray | None, n_pairs: int, t_from: float, t_to: float, options: SolveOptions
    ) -> np.ndarray | None:
        """``lam_g`` (of the subproblem at ``t_from``; NaN: given by the caller) as the warm start
        at ``t_to``: :meth:`warm_multipliers` when ``options.scale_warm_multipliers``, else as is."""
        if lam_g is None or not options.scale_warm_multipliers or not math.isfinite(t_from):
            return lam_g
        return self.warm_multipliers(lam_g, n_pairs, t_from, t_to)

    def warm_multipliers(self, lam_g: np.ndarray, n_pairs: int, t_from: float, t_to: float) -> np.ndarray:
        """The multipliers ``lam_g`` of the subproblem at ``t_from`` as a start for ``t_to``
        (:attr:`~mcpkit.solving.options.SolveOptions.scale_warm_multipliers`; default: unchanged)."""
        return lam_g

    def inner_tol(self, t: float, options: SolveOptions) -> float:
        """IPOPT tolerance for the subproblem at parameter ``t`` (tied to ``options.tol``)."""
        return options.inner_tol_factor * options.tol


class PairRelaxation(Reformulation):
    r"""A reformulation that replaces each pair by one row in :math:`(G_j, H_j, t)`, :math:`t \to 0`.

    The NLP is the MPCC's own constraints, the sign rows :math:`G, H \ge 0` (unless the bounds
    imply them) and :math:`r(G_j, H_j; t) = 0` (:attr:`pair_equality`) or :math:`\le 0`, with the
    objective unchanged; :math:`t` follows the adaptive decrease. Subclasses give
    :meth:`pair_rows` (Scholtes, Fischer-Burmeister, Kanzow-Schwartz).
    """

    #: ``True``: the pair rows are equations; ``False``: ``<= 0``.
    pair_equality: bool = False

    def pair_rows(self, G: ca.SX | ca.MX, H: ca.SX | ca.MX, t: ca.SX | ca.MX) -> ca.SX | ca.MX:
        """The rows :math:`r(G, H; t)` (elementwise)."""
        raise NotImplementedError

    def build(self, mpcc: MPCC) -> NLPTemplate:
        t = mpcc.sym(self.parameter_name)
        rows, lo, hi = sign_constraints(mpcc)
        nc = mpcc.n_pairs
        if nc:
            rows.append(self.pair_rows(mpcc.G, mpcc.H, t))
            lo.append(np.zeros(nc) if self.pair_equality else np.full(nc, -np.inf))
            hi.append(np.zeros(nc))
        return assemble(mpcc, t, mpcc.f, rows, lo, hi)

    def schedule(self, options: SolveOptions) -> Iterator[float]:
        return geometric(options.sigma0, options.sigma_factor, options.sigma_min, options.max_outer)

    def controller(self, options: SolveOptions) -> ParameterController:
        """Adaptive decrease (:class:`AdaptiveDecrease`)."""
        return AdaptiveDecrease(options.sigma0, options.sigma_factor, options.sigma_min, options.max_outer)


def geometric(start: float, factor: float, stop: float, limit: int) -> Iterator[float]:
    """``start, start*factor, ...`` while above ``stop`` (at most ``limit`` values), then ``stop``."""
    t = start
    for _ in range(limit - 1):
        if t <= stop:
            break
        yield t
        t *= factor
    yield stop


class ParameterController:
    """Chooses the homotopy parameter of the next subproblem from how the last one went."""

    def first(self) -> float:
        """The first parameter value."""
        raise NotImplementedError

    def next(self, success: bool, inner_iterations: int) -> float | None:
        """The next value after a subproblem (``None``: the homotopy is exhausted)."""
        raise NotImplementedError


class ScheduleController(ParameterController):
    """A fixed sequence of values, whatever happens (used by the penalty method)."""

    def __init__(self, values: Iterator[float]) -> None:
        self._values = iter(values)
        self._first = next(self._values)

    def first(self) -> float:
        return self._first

    def next(self, success: bool, inner_iterations: int) -> float | None:
        return next(self._values, None)


class AdaptiveDecrease(ParameterController):
    r"""Adaptive decrease of a relaxation parameter :math:`t \to 0`.

    After a solved subproblem :math:`t \leftarrow \kappa t`, or :math:`\kappa^2 t` when IPOPT
    needed at most ``fast_iterations`` iterations (the path is easy there, so move faster).
    After a failed subproblem the homotopy keeps its last good point and goes on with
    :math:`\kappa t`: backing off towards the last solved value was tried and lost problems it
    otherwise solves (an MPECLib problem and a planar-pushing horizon), while the recovery of
    :class:`~mcpkit.homotopy.recovery.RecoveringHomotopy` handles the runs that fail for good.
    Stops after ``max_outer`` subproblems or once :math:`t_{\min}` has been solved.
    """

    def __init__(
        self, t0: float, factor: float, t_min: float, max_outer: int, fast_iterations: int = 5
    ) -> None:
        self.t = t0
        self.factor = factor
        self.t_min = t_min
        self.max_outer = max_outer
        self.fast = fast_iterations
        self.count = 0

    def first(self) -> float:
        return self.t

    def next(self, success: bool, inner_iterations: int) -> float | None:
        self.count += 1
        if self.count >= self.max_outer:
            return None
        if success and self.t <= self.t_min * (1 + 1e-9):  # the floor is solved, up to rounding
            return None
        f = self.factor**2 if success and inner_iterations <= self.fast else self.factor
        self.t = max(self.t * f, self.t_min)
        return self.t


def reformulation_for(name: str) -> Reformulation:
    """A new reformulation object for a registered reformulation name: the class its registry entry
    names (:func:`mcpkit.solving.registry.reformulation_entry`), built here with the entry's
    ``kwargs``, so the registry only says what exists and the homotopy builds its pieces."""
    entry = reformulation_entry(name)
    return entry.implementation(**entry.kwargs)
