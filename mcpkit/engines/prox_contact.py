r"""Proximal point iteration for 3-D frictional contact, each subproblem by the contact Newton method.

For a local friction-contact problem (FCLIB: :math:`u = Wr + q`, Coulomb's law with
Signorini's condition per contact), the proximal point map of step :math:`\alpha > 0` at
:math:`r_k` is the solution :math:`r_{k+1}` of the same law with

.. math::
    W_\alpha = W + \alpha I,\qquad q_k = q - \alpha r_k
    \quad(u = W r_{k+1} + q + \alpha(r_{k+1} - r_k)),

so a fixed point is a solution of the original problem. :math:`W_\alpha` is positive definite
where :math:`W = H^TM^{-1}H` is singular (piles: more contact rows than body freedoms), and the
subproblem is solved by :func:`~mcpkit.engines.newton_contact.solve_alart_curnier` warm from
:math:`r_k` (at most :data:`INNER_ITERATIONS` steps). :math:`\alpha` is halved after a solved
subproblem and multiplied by :data:`ALPHA_GROW` after an unsolved one, within
:data:`ALPHA_RANGE` times the mean diagonal of :math:`W` (Siconos's ``FC3D_PROX`` adapts it in
the same spirit). Unlike a Tikhonov continuation
(:math:`W + \varepsilon I` with :math:`q` unchanged, which pulls towards :math:`r = 0`), the
proximal term pulls towards the current point, so on a problem whose reactions are not unique
the iterates move along the solution set instead of being held off it.

Measured (``tests/data/pile/rest-*.hdf5``: resting 20-sphere pile steps, 60 contacts, where warm
and cold Newton runs, the Tikhonov continuation, nonsmooth Gauss–Seidel and the staged FCLIB
solve all stopped between 6e-8 and 1e-5): Siconos errors below 1e-8 in 117–130 outer
iterations, about 1 s; a settling 603-contact step (where Newton stalls and NSGS crawls) in 9
(:data:`ALPHA_GROW`).

**Verdict.** Whenever the Siconos error (:func:`~mcpkit.engines.newton_contact.siconos_error`)
at :math:`r_{k+1}` on the *original* problem meets ``tol``, a Newton run on the original problem
from that point (at most :data:`JUDGE_ITERATIONS` steps; 0 when it already meets both
measures) gives the verdict; the best point
met, by Siconos error, is judged the same way at the end.

References
----------
* R. T. Rockafellar, "Monotone operators and the proximal point algorithm", SIAM J. Control
  Optim. 14 (1976) 877-898.
* V. Acary, M. Brémond, O. Huber, "On solving contact problems with Coulomb friction:
  formulations and numerical comparisons", in Advanced Topics in Nonsmooth Dynamics (2018).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sps

from mcpkit.engines.factor_budget import (
    DENSE_SECONDS_PER_FLOP,
    GUARD_MIN_ORDER,
    FactorBudget,
    FactorRefused,
    dense_cost,
)
from mcpkit.engines.newton_contact import ContactNewtonResult, siconos_error, solve_alart_curnier
from mcpkit.errors import MCPInputError
from mcpkit.solving.tables import compact_repr

INNER_ITERATIONS = 20
"""Newton steps allowed to each proximal subproblem."""
JUDGE_ITERATIONS = 3
"""Newton steps of the judging run inside the iteration (when the Siconos error met ``tol``)."""
ALPHA_RANGE = (1e-8, 1e-1)
r"""Bounds of :math:`\alpha` relative to the mean diagonal of :math:`W`."""
ALPHA_START = 1e-4
r"""Starting :math:`\alpha` relative to the mean diagonal of :math:`W`."""
ALPHA_GROW = 10.0
r"""Factor on :math:`\alpha` after an unsolved subproblem (it is halved after a solved one). With 2
the subproblems of the settling 603-contact pile step
``tests/data/pile/hard-N200-seed0-staged-step37-603c.hdf5`` stayed as hard as the step (20
Newton steps each, unsolved; 1.1e-5 after 240 s); with 10 it is solved in 9 proximal steps, 66
Newton steps (4.8e-10, 17 s), and the resting 60-contact steps in 117-130 proximal steps (about
1,400 Newton steps, about 1 s). Starting from 1e-2 instead solved the 603-contact step as well but
took 550 proximal steps on one resting step (79 from 1e-4)."""


@dataclass(frozen=True)
class ProxResult:
    """What :func:`prox_point` returns."""

    result: ContactNewtonResult
    """The verdict of the judging Newton run on the original problem (module docstring)."""
    outer: int
    """Proximal steps made."""
    newton_steps: int
    """Newton steps of every subproblem and judging run together."""
    best_error: float
    """The smallest Siconos error met on the original problem (before the final judging run)."""

    def __repr__(self) -> str:
        """A few lines: key fields, arrays by shape (:func:`~mcpkit.solving.tables.compact_repr`)."""
        return compact_repr(self, ("result", "outer", "newton_steps", "best_error"))


def solve_prox(
    W: np.ndarray | sps.spmatrix,
    q: np.ndarray,
    mu: np.ndarray,
    r0: np.ndarray | None = None,
    tol: float = 1e-8,
    max_outer: int = 400,
    time_limit: float | None = None,
    max_iter: int = 100,
) -> tuple[ContactNewtonResult, int]:
    r"""Proximal point iteration on a 3-D friction-contact problem (:func:`prox_point`); returns
    ``(result, outer)``: the judging Newton run's verdict and the proximal steps made."""
    px = prox_point(W, q, mu, r0=r0, tol=tol, max_outer=max_outer, time_limit=time_limit, max_iter=max_iter)
    return px.result, px.outer


def prox_point(
    W: np.ndarray | sps.spmatrix,
    q: np.ndarray,
    mu: np.ndarray,
    r0: np.ndarray | None = None,
    tol: float = 1e-8,
    max_outer: int = 400,
    time_limit: float | None = None,
    max_iter: int = 100,
    max_newton: int | None = None,
) -> ProxResult:
    r"""Proximal point iteration on a 3-D friction-contact problem (module docstring).

    Parameters
    ----------
    W, q, mu
        Delassus matrix (:math:`3n_c \times 3n_c`, dense or sparse; made dense), free velocity
        and friction coefficients (:math:`n_c`, non-negative).
    r0
        Starting reactions (default zero).
    tol
        Tolerance of the verdict (both measures of
        :func:`~mcpkit.engines.newton_contact.solve_alart_curnier`).
    max_outer
        Proximal steps at most.
    time_limit
        Wall-time limit in seconds (``None``: none).
    max_iter
        Newton steps of the final judging run.
    max_newton
        Newton steps of all subproblems and judging runs together at most (``None``: no bound);
        the proximal steps stop when fewer than :data:`JUDGE_ITERATIONS` are left, and the final
        judging run gets what is left.

    Returns
    -------
    ProxResult
        The judging run's verdict, the proximal steps, the Newton steps, the best error met.

    Raises
    ------
    MCPInputError
        As :func:`~mcpkit.engines.newton_contact.solve_alart_curnier`; ``max_outer`` or
        ``max_newton`` negative.
    """
    t0 = time.perf_counter()
    deadline = math.inf if time_limit is None else t0 + time_limit

    def left() -> float | None:
        return None if time_limit is None else max(deadline - time.perf_counter(), 1e-3)

    mu = np.asarray(mu, dtype=float).reshape(-1)
    q = np.asarray(q, dtype=float).reshape(-1)
    Wd = W.toarray() if sps.issparse(W) else np.asarray(W, dtype=float)
    if max_outer < 0:
        raise MCPInputError(f"max_outer must be non-negative, got {max_outer}")
    if max_newton is not None and max_newton < 0:
        raise MCPInputError(f"max_newton must be non-negative, got {max_newton}")
    budget = math.inf if max_newton is None else float(max_newton)
    # checks shapes, finiteness and r0 before any proximal step
    first = solve_alart_curnier(Wd, q, mu, tol=tol, max_iter=0, r0=r0, restart=False)
    r = first.r
    best_err, best_r = first.siconos_error, r.copy()
    n = q.size
    shift = float(np.abs(np.diag(Wd)).mean()) if n else 1.0
    shift = shift or 1.0
    lo, hi = ALPHA_RANGE[0] * shift, ALPHA_RANGE[1] * shift
    alpha = ALPHA_START * shift
    diag = np.arange(n)
    outer = steps = 0
    # with a budget, the last JUDGE_ITERATIONS steps are kept for the final judging run
    inner_budget = budget - (JUDGE_ITERATIONS if max_newton is not None else 0)
    if time_limit is not None and n >= GUARD_MIN_ORDER:
        try:  # a dense step of order n that cannot fit the limit: no proximal loop (no copies of W)
            FactorBudget(deadline).check(
                "a dense proximal Newton step", n, dense_cost(n), DENSE_SECONDS_PER_FLOP
            )
        except FactorRefused:
            max_outer = 0
    while not first.solved and outer < max_outer and time.perf_counter() < deadline and steps < inner_budget:
        Wa = Wd.copy()
        Wa[diag, diag] += alpha
        inner = int(min(INNER_ITERATIONS, inner_budget - steps))
        st = solve_alart_curnier(
            Wa, q - alpha * r, mu, tol=0.01 * tol, max_iter=inner, r0=r, time_limit=left()
        )
        outer += 1
        steps += st.iterations
        if st.message.startswith("time limit") and not st.iterations:
            break  # the caller's limit refused the subproblem's first step (too large to fit)
        r = st.r
        err = siconos_error(q, mu, r, Wd @ r + q)
        if err < best_err:
            best_err, best_r = err, r.copy()
        if err <= tol:
            judge = int(min(JUDGE_ITERATIONS, budget - steps))
            judged = solve_alart_curnier(Wd, q, mu, tol=tol, max_iter=judge, r0=r, time_limit=left())
            steps += judged.iterations
            if judged.solved:
                return ProxResult(judged, outer, steps, best_err)
        alpha = max(alpha / 2.0, lo) if st.solved else min(alpha * ALPHA_GROW, hi)
    last = int(min(max_iter, budget - steps))
    final = solve_alart_curnier(Wd, q, mu, tol=tol, max_iter=last, r0=best_r, time_limit=left())
    return ProxResult(final, outer, steps + final.iterations, best_err)
