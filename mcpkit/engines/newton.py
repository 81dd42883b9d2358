r"""``method="newton"``: a semismooth Newton method for the box MCP :math:`l \le z \le u \perp F(z; p)`.

Reformulation
-------------
With the Fischer-Burmeister function (in the sign convention of De Luca, Facchinei & Kanzow)

.. math::

    \varphi(a, b) = \sqrt{a^2 + b^2} - a - b ,\qquad
    \varphi(a, b) = 0 \iff a \ge 0,\ b \ge 0,\ ab = 0 ,

each pair :math:`(z_i, F_i)` becomes one equation :math:`\Phi_i(z) = 0` (the box extension of
Billups 1995, also used by Munson, Facchinei, Ferris, Fischer & Kanzow 2001):

==========================  ===========================================================
bounds of :math:`z_i`       :math:`\Phi_i`
==========================  ===========================================================
:math:`l_i, u_i` finite     :math:`\varphi\bigl(z_i - l_i,\ \varphi(u_i - z_i, -F_i)\bigr)`
:math:`l_i` only            :math:`\varphi(z_i - l_i, F_i)`
:math:`u_i` only            :math:`-\varphi(u_i - z_i, -F_i)`
free                        :math:`-F_i`
fixed (:math:`l_i = u_i`)   :math:`z_i - l_i`
==========================  ===========================================================

:math:`\Phi(z) = 0` exactly at the solutions of the MCP, and the merit function is
:math:`\Psi(z) = \tfrac12 \|\Phi(z)\|_2^2`, continuously differentiable with
:math:`\nabla\Psi = H^T \Phi`. The plain Fischer-Burmeister function is used, not Chen,
Chen & Kanzow's (2000) penalised :math:`\varphi_\lambda = \lambda\varphi - (1 - \lambda) a_+ b_+`:
:math:`\varphi` is smooth everywhere except at :math:`a = b = 0`, while :math:`a_+ b_+` adds a
kink at every strictly complementary active pair (:math:`a = 0 < b`), i.e. exactly at the
points the iteration converges to; Billups' box extension and the safeguards of Munson et al.
are stated for :math:`\varphi`; and the global advantages of :math:`\varphi_\lambda`
(bounded level sets of :math:`\Psi` under weaker conditions) matter least here, where the crash
phase and the watchdog handle the early iterations.
:math:`\varphi` is evaluated as :math:`-2ab / (\sqrt{a^2+b^2} + a + b)` when :math:`a + b > 0`,
which has no cancellation, so :math:`\Phi_i` is exactly zero at a complementary pair.

Generalised Jacobian
--------------------
Every row of the element :math:`H \in \partial\Phi(z)` used here has the form
:math:`H_i = (d_a)_i e_i^T + (d_b)_i \nabla F_i(z)^T`, i.e.
:math:`H = D_a + D_b J_F(z)` with diagonal :math:`D_a, D_b` from the chain rule
(:math:`\partial\varphi/\partial a = a/\|(a, b)\| - 1`, and so on). At a degenerate pair
(:math:`a = b = 0`, inner or outer level) :math:`\varphi` is not differentiable; there the
element of De Luca, Facchinei & Kanzow (1996) is taken: with :math:`\delta z = e_\beta` (ones on
the degenerate index set :math:`\beta`), the gradient of :math:`\varphi` is replaced by its limit
along :math:`z + t\,\delta z`, :math:`t \downarrow 0`, i.e. :math:`(a, b)` by their directional
derivatives, e.g. :math:`(\delta a, \delta b) = (1, (J_F e_\beta)_i)` for a lower bound (one
Jacobian-vector product for all degenerate pairs).

Globalisation (De Luca, Facchinei & Kanzow 1996; Billups 1995; Munson et al. 2001)
----------------------------------------------------------------------------------
1. **Row scaling** (affine :math:`F` only, i.e. a constant Jacobian): the method works on
   :math:`S F` with :math:`S = \mathrm{diag}(1/\|\nabla F_i\|_\infty)` (clipped to
   :math:`[10^{-8}, 10^{8}]`); the MCP's solutions do not change, the natural residual of the
   stopping rule stays unscaled. It is what lets the badly scaled Siconos LCPs ``tobenna`` and
   ``deltasigma2`` (row norms from :math:`10^{-4}` to :math:`2.5 \cdot 10^{5}`) converge. For a
   nonlinear :math:`F` a scaling frozen at the start hurt (4 MCPLIB starts failed), so none is
   applied.
2. **Crash phase** (cold starts only; ``warm=True`` skips it). Up to :data:`CRASH_ITERATIONS`
   projected Newton steps on the natural map :math:`z - \Pi_{[l,u]}(z - F(z))`: the active set
   is guessed from :math:`z - F(z)` (at or beyond a bound: fix :math:`z_i` there, else solve
   :math:`F_i = 0` linearised) and the step is projected onto the box. The phase stops when a
   step is not finite, its natural residual exceeds :data:`CRASH_GROWTH` times the best so far,
   or an active set comes back without improving; the best point met is handed on. The Newton
   matrix has the same pattern as :math:`H` (:math:`d_a, d_b \in \{0, 1\}`). For LCPs this is
   the primal-dual active-set method (Hintermüller, Ito & Kunisch 2002) and often ends at the
   exact solution; its iterates solve the linear system of a guessed active set exactly, so the
   natural residual may jump before it falls (a 2-D obstacle problem, :math:`n = 10^4`: 0.03,
   then 0.9, then :math:`10^{-15}`). For a constant Jacobian the growth test is therefore
   dropped and up to :data:`CRASH_ITERATIONS_AFFINE` steps are allowed; the repeated-active-set
   test still ends a cycle, and the best point met is handed on as before.
3. **Newton direction**: :math:`H d = -\Phi`, accepted when it passes the descent test
   :math:`\nabla\Psi^T d \le -\rho \|d\|^p` (:math:`\rho = 10^{-8}`, :math:`p = 2.1`,
   De Luca-Facchinei-Kanzow). Otherwise (:math:`H` singular or ill-conditioned, or :math:`d`
   fails the test) the stages below are tried in this order, the first direction that passes
   its test being taken:

   a. the **proximal perturbation** :math:`J_F + \mu I` (Billups' proximal perturbation of
      :math:`F`; in :math:`H` this is :math:`D_a + \mu D_b + D_b J_F`, which keeps :math:`H`
      nonsingular for :math:`P_0` Jacobians, unlike :math:`H + \mu I`) with
      :math:`\mu = \mu_1 = \min(\max(0.1\|\Phi\|_2, 10^{-10}), 1)`, under the same descent test;
   b. if :math:`H` itself is singular, i.e. its factorisation failed (LAPACK pivot ratio below
      :data:`~mcpkit.engines.newton_linalg.PIVOT_RATIO`, SuperLU "exactly singular", or
      non-finite entries) or gave a non-finite Newton step: the **Levenberg-Marquardt
      direction** (LM) :math:`(H^T H + \mu I)\, d = -H^T \Phi` with
      :math:`\mu = 10^{-2} \|\Phi\|_2^2`, raised to at least
      :math:`10^{-12} \max_j \|H e_j\|_2^2` (Yamashita-Fukushima 2001;
      :class:`~mcpkit.engines.newton_linalg.NewtonSystem` solves it by dense Cholesky of the
      normal equations or sparse LU of an augmented system). It is taken whenever
      :math:`\nabla\Psi^T d < 0`, without the test above: it solves
      :math:`\min_d \|\Phi + H d\|^2 + \mu \|d\|^2` whatever the rank of :math:`H`, so
      :math:`-\nabla\Psi^T d = d^T (H^T H + \mu I) d > 0` for :math:`\nabla\Psi \ne 0`, and with
      :math:`\mu` bounded below away from solutions it is gradient-related, which is what the
      test is there to ensure. With :math:`\mu \propto \|\Phi\|^2` the method converges
      quadratically under a local error bound, without nonsingularity (Yamashita-Fukushima
      2001; Fan-Yuan 2005 for :math:`\|\Phi\|^\delta`, :math:`\delta \in [1, 2]`), i.e. on
      the non-isolated solutions of rank-deficient problems, where the proximal perturbation
      passes the descent test only with its larger :math:`\mu` and then converges linearly.
      The factor :math:`10^{-2}` is :math:`0.1^2`: a singular value :math:`\sigma` of
      :math:`H` is inverted as :math:`\sigma/(\sigma^2 + \mu)` instead of
      :math:`1/(\sigma + \mu_1)`, and both cut off at :math:`\sigma \approx 0.1\|\Phi\|_2`.
      :math:`\mu \propto \|\Phi\|_2^2` and the floor are unchanged when :math:`F` is multiplied
      by a constant; the test :math:`\nabla\Psi^T d < 0` is unchanged by any scaling;
   c. the proximal perturbation with :math:`10\mu_1`, then :math:`100\mu_1`;
   d. if :math:`H` is not singular (b was skipped) and the direction of :math:`100\mu_1` was a
      finite descent direction (:math:`\nabla\Psi^T d < 0`) that failed the test, i.e. too
      long for it: the LM direction of b, under the same rule.

   Measured: on the FCLIB box stacks (Alart-Curnier, a rank-deficient Delassus matrix) the
   Newton matrix is singular and the proximal step with :math:`\mu_1` fails the descent test
   (it is long along nearly null directions); the one with :math:`100\mu_1` passed and gained
   about 1 % per iteration. With b, the 48-contact ``local_problem_test`` takes 19 iterations
   instead of 212 (which needed a Tikhonov continuation). b before a lost on the FCLIB Capsules
   problems (``Capsules-i100-1090``: 26 iterations became 100). With b alone, the NCP form of
   ``local_problem_test`` stalled at a natural residual of :math:`1.6 \cdot 10^{-4}` where
   :math:`H` factorises but its Newton steps (length 400 for :math:`\|\Phi\|_2 = 4 \cdot
   10^{-4}`) fail the test and gradient steps crawled; with d it reaches the tolerance
   :math:`10^{-8}` in 345 iterations (before: :math:`9 \cdot 10^{-7}` after 3000). d is
   restricted to descent directions because on the Siconos LCP ``tobenna`` the proximal
   directions of its one gradient step are ascent directions, and an LM step there (d without
   that condition) changed the path, which then stalled.
4. **Steepest descent** :math:`d = -\nabla\Psi = -H^T\Phi` when no direction of item 3 passes,
   or when the line search fails along the one that passed.
5. **Non-monotone Armijo line search** (Grippo, Lampariello & Lucidi 1986): accept
   :math:`z + t d`, :math:`t = 1, \tfrac12, \dots`, when
   :math:`\Psi(z + td) \le \max_{0 \le j < M} \Psi(z_{k-j}) + \sigma t \nabla\Psi^T d` with
   :math:`M = 10`, :math:`\sigma = 10^{-4}`; points where :math:`F` is not finite are rejected.
   If the accepted point leaves the box and its projection has no larger merit, the projection
   is taken instead (this keeps iterates where :math:`F` is usually defined). A **watchdog**
   guards against non-monotone cycling: when :math:`\Psi` has not reached a new minimum in
   :data:`WATCHDOG` iterations, the iterate returns to the best point and the reference
   restarts there (a 2-cycle of full Newton steps on MCPLIB ``kojshin`` from :math:`z = 0`
   otherwise took 230 iterations; with the watchdog, 13).

Stopping rule
-------------
* **converged**: the natural residual :math:`\|z - \Pi_{[l,u]}(z - F(z))\|_\infty \le` ``tol``,
  measured at :math:`\Pi_{[l,u]}(z)` exactly as :mod:`mcpkit.solving.residuals` measures it on the
  original pairs (a small step is never convergence);
* **iteration limit**: ``options.max_inner_iter`` Newton iterations (crash steps included);
  a warm start that has not converged in :data:`WARM_ITERATIONS` iterations restarts cold (with
  the crash phase) from the same point, within the same limits;
* **time limit**: ``options.time_limit`` seconds, checked between iterations and inside each
  factorisation: under a limit, a factorisation whose estimated cost does not fit in the time
  left is not started, and one that is still running at the limit is not waited for
  (:mod:`mcpkit.engines.factor_budget`); the message says which. A limit that has passed
  before the first iteration stops the solve there: the start point is returned, converged
  only when it already meets ``tol`` (nothing was left to do), else ``time_limit``;
* **stalled**: the line search fails on the steepest-descent direction too (a stationary point
  of :math:`\Psi` that is not a solution, e.g. MCPLIB ``billups`` near :math:`z = 0`), or the
  natural residual has not improved in :data:`STALL_WINDOW` iterations;
* **numerical error**: :math:`F` is not finite at the start.

The point returned is the iterate (projected onto the box) with the smallest natural residual,
with its :math:`F`. ``RouteOutcome.trace`` holds one
:class:`~mcpkit.solving.result.HomotopyStep` per iteration: ``parameter`` is the :math:`\mu` of the
proximal perturbation or of the Levenberg-Marquardt direction (0 when none), ``residual`` the
natural residual after the step, ``inner_status`` the step length, ``inner_iterations`` the
function evaluations of the line search, ``phase`` ``"crash"``, ``"newton"`` (the Newton or a
proximal direction), ``"lm"`` (the Levenberg-Marquardt direction) or ``"gradient"``.
``RouteOutcome.extra`` holds ``linear_solver`` (dense LAPACK or SuperLU), ``factorizations``
(Levenberg-Marquardt systems included), ``crash_iterations``, ``gradient_steps``,
``perturbed_steps`` (iterations with :math:`\mu > 0`: proximal or Levenberg-Marquardt),
``lm_steps``, ``watchdog_restarts`` and ``merit`` (:math:`\Psi` at the returned point), and
``newton_factor`` when the last factorisation is one of :math:`J_{II}` at the returned point
(:class:`~mcpkit.engines.newton_linalg.KeptFactor`, a weak handle: a converged solve on backend
``casadi`` whose :math:`J_F` does not depend on :math:`z`, whose last factorisation had no
:math:`d_a` on its kept rows, i.e. a crash step). ``MCPResult.sensitivity()`` solves with it
instead of factorising :math:`J_{II}` again when its kept rows are the free pairs
(:mod:`mcpkit.stationarity.sensitivity`).

Linear algebra
--------------
When every block of the declaration is affine with numeric data (an LCP), :math:`F = Mz + q`
and :math:`J_F = M` come from the declaration's :class:`~mcpkit.problems.mcp.AffineMap`
(:class:`AffineFunctions`: no CasADi is built, the numbers are the same). Otherwise
:math:`F` and :math:`J_F` are CasADi functions built once per route and evaluated through
CasADi's buffer interface (no per-call allocation), with CasADi's sparsity
(:class:`~mcpkit.engines.newton_casadi.CasadiFunctions`). On backend
``casadi`` the rows of affine blocks :math:`F_B = M z_S + q(p)` take their (constant) Jacobian
from the declaration's matrix instead of CasADi's MX ``jacobian``, which costs about 2 s for a
dense :math:`1000 \times 1000` block; on backend ``pyomo`` CasADi differentiates the NL import.
:math:`J_F` is evaluated once per route when it is constant (LCPs), once per solve when it
depends on :math:`p` only, else at every iterate.
:class:`~mcpkit.engines.newton_linalg.NewtonSystem` factorises :math:`H` with dense LAPACK or
SuperLU and reuses the pattern and the ordering (see that module for what SciPy allows); on the
sparse path it eliminates the identity rows (:math:`(d_b)_i = 0`: every active variable of a
crash step, every pair exactly at a bound) and factorises only the block of the others; it
solves the Levenberg-Marquardt systems by the normal equations and Cholesky (dense) or by an
augmented system of twice the size and SuperLU (sparse: :math:`H^T H` is not formed).
:class:`SemismoothNewton` only needs an object with ``F(z)``, ``J(z)`` and the CSC pattern
(:class:`AffineFunctions` and :class:`~mcpkit.engines.newton_casadi.CasadiFunctions` are two),
so callables from a functional interface can drive it too.

References
----------
* T. De Luca, F. Facchinei, C. Kanzow, "A semismooth equation approach to the solution of
  nonlinear complementarity problems", Math. Programming 75 (1996) 407-439.
* S. C. Billups, "Algorithms for complementarity problems and generalized equations", PhD
  thesis, University of Wisconsin-Madison, 1995.
* B. Chen, X. Chen, C. Kanzow, "A penalized Fischer-Burmeister NCP-function", Math.
  Programming 88 (2000) 211-216.
* T. S. Munson, F. Facchinei, M. C. Ferris, A. Fischer, C. Kanzow, "The semismooth algorithm
  for large scale complementarity problems", INFORMS J. Computing 13 (2001) 294-311.
* L. Grippo, F. Lampariello, S. Lucidi, "A nonmonotone line search technique for Newton's
  method", SIAM J. Numer. Anal. 23 (1986) 707-716.
* N. Yamashita, M. Fukushima, "On the rate of convergence of the Levenberg-Marquardt method",
  Computing Suppl. 15 (2001) 239-249.
* J. Fan, Y. Yuan, "On the quadratic convergence of the Levenberg-Marquardt method without
  nonsingularity assumption", Computing 74 (2005) 23-39.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from mcpkit.engines.blas import SINGLE_THREAD_MAX_N, SINGLE_THREAD_MIN_N, small_blas
from mcpkit.engines.factor_budget import FactorBudget
from mcpkit.engines.newton_linalg import NewtonSystem
from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError
from mcpkit.lowering.casadi import CasadiMCP, lower_to_casadi
from mcpkit.problems.bounds import FIXED, bound_kinds
from mcpkit.problems.mcp import MCP, AffineMap
from mcpkit.solving.options import Budget, SolveOptions, call_budget, progress_trace
from mcpkit.solving.residuals import natural_residual
from mcpkit.solving.result import HomotopyStep, Termination
from mcpkit.solving.route import RouteOutcome

#: Armijo constant :math:`\sigma` of the line search.
ARMIJO_SIGMA = 1e-4
#: Backtracking factor of the line search.
BACKTRACK = 0.5
#: Memory :math:`M` of the non-monotone (Grippo-Lampariello-Lucidi) reference value.
NONMONOTONE_MEMORY = 10
#: Descent test :math:`\nabla\Psi^T d \le -\rho \|d\|^p` (De Luca-Facchinei-Kanzow).
DESCENT_RHO = 1e-8
DESCENT_POWER = 2.1
#: The line search gives up when :math:`\|t d\|_\infty \le` this times :math:`1 + \|z\|_\infty`.
STEP_FLOOR = 1e-15
#: Proximal perturbation :math:`\mu = \min(\max(\text{factor} \|\Phi\|, \text{min}), \text{max})`, tried
#: with factors 1, 10, 100.
PROX_FACTOR, PROX_MIN, PROX_MAX, PROX_TRIES = 0.1, 1e-10, 1.0, 3
#: Levenberg-Marquardt stage (Yamashita-Fukushima 2001): :math:`\mu = \text{factor} \|\Phi\|_2^2`, at least
#: ``LM_MIN_REL`` times :math:`\max_j \|H e_j\|_2^2`; ``LEVENBERG_MARQUARDT = False`` removes the stage.
LEVENBERG_MARQUARDT = True
LM_FACTOR, LM_MIN_REL = 1e-2, 1e-12
#: Crash-phase iterations (projected Newton on the natural map) on a cold start.
CRASH_ITERATIONS = 10
#: Crash-phase iterations when the Jacobian is constant (the primal-dual active-set method).
CRASH_ITERATIONS_AFFINE = 30
#: A crash step is kept while its natural residual stays below this multiple of the best one so far
#: (and its active set is new or it improves the best); the crash hands over the best point.
CRASH_GROWTH = 10.0
#: Iterations a warm start gets before :meth:`SemismoothNewton.solve` restarts cold from the same point
#: (a warm start near a change of active set can sit in a poor region of the merit function: a
#: Stewart-Trinkle step at a friction reversal took 2067 warm iterations, 14 cold).
WARM_ITERATIONS = 30
#: Watchdog: when the merit has not reached a new minimum in this many non-monotone steps, the
#: iterate returns to the best point so far and the reference value restarts there.
WATCHDOG = 5
#: Stalled when the natural residual has not improved in this many iterations.
STALL_WINDOW = 100
#: Row scaling: :math:`F_i` is replaced by :math:`s_i F_i`, :math:`s_i = 1/\|\nabla F_i(z_0)\|_\infty`
#: clipped to ``[1/SCALE_MAX, 1/SCALE_MIN]`` (the MCP's solutions do not change).
SCALE_ROWS = True
SCALE_MIN, SCALE_MAX = 1e-8, 1e8
#: A pair counts as degenerate (:math:`a = b = 0`) when :math:`\sqrt{a^2+b^2}` is at most this.
DEGENERATE = 1e-14


def fischer_burmeister(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    r""":math:`\varphi(a, b) = \sqrt{a^2 + b^2} - a - b`.

    Evaluated as :math:`-2ab/(\sqrt{a^2+b^2} + a + b)` when :math:`a + b > 0`: that form has no
    cancellation, so :math:`\varphi` is exactly zero at a
    complementary pair with one large entry.
    """
    r = np.hypot(a, b)
    s = a + b
    pos = s > 0
    return np.where(pos, -2.0 * a * b / np.where(pos, r + s, 1.0), r - s)


def _phi_grad(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r""":math:`\varphi(a, b)`, its gradient, and the mask ``hypot(a, b) <= DEGENERATE`` (no gradient)."""
    r = np.hypot(a, b)
    s = a + b
    pos = s > 0
    phi = np.where(pos, -2.0 * a * b / np.where(pos, r + s, 1.0), r - s)
    deg = r <= DEGENERATE
    r = np.where(deg, 1.0, r)
    return phi, a / r - 1.0, b / r - 1.0, deg


class BoxFischerBurmeister:
    r"""The box Fischer-Burmeister map :math:`\Phi` of fixed bounds and its Jacobian element.

    Every component is written as an inner value :math:`g` and an outer one:
    :math:`g = \varphi(u - z, -F)` if :math:`u` is finite else :math:`g = F`; then
    :math:`\Phi = \varphi(z - l, g)` if :math:`l` is finite else :math:`\Phi = -g`; fixed
    components :math:`\Phi = z - l`. This reproduces the table of the module docstring with
    whole-vector operations (no per-type index sets).

    Parameters
    ----------
    lb, ub
        Bounds :math:`l \le u` (:math:`\pm\infty` allowed); checked by :func:`bound_kinds`.
    kinds
        Their cases, when already checked and classified by :func:`bound_kinds` (not checked again).
    """

    def __init__(self, lb: np.ndarray, ub: np.ndarray, kinds: np.ndarray | None = None) -> None:
        self.kinds = bound_kinds(lb, ub) if kinds is None else kinds
        self.lb = np.asarray(lb, dtype=float).copy()
        self.ub = np.asarray(ub, dtype=float).copy()
        self.n = self.lb.size
        self.has_l = np.isfinite(self.lb)
        self.has_u = np.isfinite(self.ub)
        self.fixed = self.kinds == FIXED
        self._l0 = np.where(self.has_l, self.lb, 0.0)
        self._u0 = np.where(self.has_u, self.ub, 0.0)
        self._any_u, self._all_u = bool(self.has_u.any()), bool(self.has_u.all())
        self._any_l, self._all_l = bool(self.has_l.any()), bool(self.has_l.all())
        self._i_fixed = np.flatnonzero(self.fixed)
        self._free_l = self.has_l & ~self.fixed
        self._free_u = self.has_u & ~self.fixed

    def residual(self, z: np.ndarray, F: np.ndarray) -> np.ndarray:
        r""":math:`\Phi(z)` from :math:`z` and :math:`F = F(z)` (module docstring table)."""
        if self._any_u:
            g = fischer_burmeister(self._u0 - z, -F)
            if not self._all_u:
                g = np.where(self.has_u, g, F)
        else:
            g = F
        if self._any_l:
            Phi = fischer_burmeister(z - self._l0, g)
            if not self._all_l:
                Phi = np.where(self.has_l, Phi, -g)
        else:
            Phi = -g
        if self._i_fixed.size:
            Phi[self._i_fixed] = z[self._i_fixed] - self._l0[self._i_fixed]
        return Phi

    def jacobian(
        self, z: np.ndarray, F: np.ndarray, jv: Callable[[np.ndarray], np.ndarray]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        r""":math:`(\Phi, d_a, d_b)`, :math:`H = \mathrm{diag}(d_a) + \mathrm{diag}(d_b) J_F \in \partial\Phi`

        ``jv(v)`` returns :math:`J_F(z) v`; it is called once, only when a pair is degenerate
        (De Luca-Facchinei-Kanzow element, module docstring).
        """
        has_l, has_u = self.has_l, self.has_u
        # inner level: g and its derivative g_z e_i + g_J grad F_i
        if self._any_u:
            g, pc, pd, deg_in = _phi_grad(self._u0 - z, -F)
            deg_in &= self._free_u
            if not self._all_u:
                g = np.where(has_u, g, F)
        else:
            g, deg_in = F, None
        # outer level
        if self._any_l:
            Phi, pa, pg, deg_out = _phi_grad(z - self._l0, g)
            deg_out &= self._free_l
            if deg_in is not None:
                deg_out &= ~deg_in
            if not self._all_l:
                Phi = np.where(has_l, Phi, -g)
        else:
            Phi, deg_out = -g, None
        w = None
        if (deg_in is not None and deg_in.any()) or (deg_out is not None and deg_out.any()):
            e = np.zeros(self.n)
            for m in (deg_in, deg_out):
                if m is not None:
                    e[m] = 1.0
            w = jv(e)
        if deg_in is not None:
            if w is not None:
                rho = np.hypot(1.0, w)
                pc = np.where(deg_in, -1.0 / rho - 1.0, pc)
                pd = np.where(deg_in, -w / rho - 1.0, pd)
            gz = -pc if self._all_u else np.where(has_u, -pc, 0.0)
            gJ = -pd if self._all_u else np.where(has_u, -pd, 1.0)
        else:  # no upper bounds: g = F, g_z = 0, g_J = 1
            gz, gJ = 0.0, 1.0
        if deg_out is not None:
            if w is not None:
                dg = gz + gJ * w
                rho = np.hypot(1.0, dg)
                pa = np.where(deg_out, 1.0 / rho - 1.0, pa)
                pg = np.where(deg_out, dg / rho - 1.0, pg)
            da, db = (pa, pg) if deg_in is None else (pa + pg * gz, pg * gJ)
            if not self._all_l:
                da, db = np.where(has_l, da, -gz), np.where(has_l, db, -gJ)
        else:
            da, db = -gz * np.ones(self.n), -gJ * np.ones(self.n)
        if self._i_fixed.size:
            i = self._i_fixed
            Phi[i], da[i], db[i] = z[i] - self._l0[i], 1.0, 0.0
        return Phi, da, db


def _descends(d: np.ndarray, grad: np.ndarray) -> bool:
    r"""The descent test :math:`\nabla\Psi^T d \le -\rho \|d\|^p`, :math:`d \ne 0` finite."""
    if not np.isfinite(d).all():
        return False
    nd = math.sqrt(float(d @ d))
    return nd > 0 and float(grad @ d) <= -DESCENT_RHO * nd**DESCENT_POWER


def _check_vector(x: Any, n: int, what: str) -> np.ndarray:
    arr = np.asarray(x, dtype=float).reshape(-1)
    if arr.size != n:
        raise ShapeError(f"newton: {what} has {arr.size} entries, expected {n}")
    if not np.isfinite(arr).all():
        raise NonFiniteError(f"newton: {what} contains NaN or inf at {np.flatnonzero(~np.isfinite(arr))}")
    return arr


class SemismoothNewton:
    r"""The algorithm of the module docstring on fixed functions and bounds; :meth:`solve` per parameter.

    Parameters
    ----------
    functions
        :class:`~mcpkit.engines.newton_casadi.CasadiFunctions`, :class:`AffineFunctions` (or any
        object with the same ``n``, ``n_params``, ``colind``, ``row``, ``jac_depends_on_z``,
        ``jac_depends_on_p``, ``set_parameters``, ``F``, ``J``).
    lb, ub
        Bounds :math:`l \le u`.
    options
        ``tol``, ``max_inner_iter`` (Newton iteration limit), ``time_limit``, ``verbose``.
    dense
        Force dense or sparse linear algebra (``None``: chosen by size and density).
    kinds
        The bound cases of ``lb``, ``ub`` when the caller has them checked and classified (an MCP's,
        :attr:`MCP.bound_kinds <mcpkit.problems.mcp.MCP.bound_kinds>`); else :func:`bound_kinds`.
    """

    def __init__(
        self,
        functions: Any,
        lb: np.ndarray,
        ub: np.ndarray,
        options: SolveOptions,
        dense: bool | None = None,
        kinds: np.ndarray | None = None,
    ) -> None:
        self.fun = functions
        self.fb = BoxFischerBurmeister(lb, ub, kinds)
        if self.fb.n != functions.n:
            raise ShapeError(f"newton: {self.fb.n} bounds for {functions.n} variables")
        self.lb, self.ub = self.fb.lb, self.fb.ub
        self.options = options
        self.system = NewtonSystem(functions.n, functions.colind, functions.row, dense=dense)
        self._jac_ready = False  # J_F of a constant Jacobian already stored
        self._scale = np.ones(functions.n)  # row scaling S of F (module docstring)
        self._scale_at_start = True  # recompute S at each solve's start (J_F not constant)
        self._one_blas_thread = SINGLE_THREAD_MIN_N <= functions.n <= SINGLE_THREAD_MAX_N  # small_blas limits
        self.keep_factor = False
        r"""Whether a converged solve hands on its last factorisation (``extra["newton_factor"]``).

        Only where :math:`J_F` is the declaration's :math:`\partial F/\partial z` in its order
        (:class:`NewtonRoute` on backend ``casadi``), for
        :func:`mcpkit.stationarity.sensitivity.linearize`."""

    # ------------------------------------------------------------------ helpers
    def _project(self, z: np.ndarray) -> np.ndarray:
        return np.minimum(np.maximum(z, self.lb), self.ub)

    def _natural(self, z: np.ndarray, F: np.ndarray) -> float:
        r""":math:`\|z - \Pi_{[l,u]}(z - F)\|_\infty`, the min-map residual (NaN: inf)."""
        r = float(np.abs(np.maximum(z - self.ub, np.minimum(z - self.lb, F))).max(initial=0.0))
        return r if r == r else math.inf

    def _update_jacobian(self, z: np.ndarray) -> None:
        if self.fun.jac_depends_on_z or not self._jac_ready:
            self.system.set_jacobian(self.fun.J(z))
            self._jac_ready = not self.fun.jac_depends_on_z

    def _merit(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray, float] | None:
        F = self.fun.F(z)
        if not np.isfinite(F).all():
            return None
        Phi = self.fb.residual(z, self._scale * F)
        return F, Phi, 0.5 * float(Phi @ Phi)

    # ------------------------------------------------------------------ solve
    def solve(self, p: np.ndarray, z0: np.ndarray, warm: bool, budget: Budget | None = None) -> RouteOutcome:
        """Solve at parameters ``p`` from ``z0``; ``warm`` (``z0`` is a previous solution) skips the crash.

        A warm solve that has not converged after :data:`WARM_ITERATIONS` iterations (or stalls
        sooner) restarts cold, crash phase included, from the same ``z0`` with what is left of
        the iteration and time limits; the outcome reports both parts (``extra["warm_restart"]``).
        ``budget`` bounds the call (``None``: the options' ``time_limit`` from now).
        """
        call = call_budget(budget, self.options.time_limit)
        # iterates of a problem without solution may overflow: infinite merits are rejected, not
        # warned about; small systems factorise on one BLAS thread (mcpkit.engines.blas), tiny and
        # large ones as they are (nothing to enter)
        with np.errstate(over="ignore"):
            if not self._one_blas_thread:
                return self._warm_then_cold(p, z0, warm, call)
            with small_blas(self.lb.size):
                return self._warm_then_cold(p, z0, warm, call)

    def _warm_then_cold(self, p: np.ndarray, z0: np.ndarray, warm: bool, call: Budget) -> RouteOutcome:
        t0 = time.perf_counter()
        limit = self.options.max_inner_iter
        if not warm:
            return self._solve(p, z0, False, t0, limit, call)
        out = self._solve(p, z0, True, t0, min(WARM_ITERATIONS, limit), call)
        if (
            out.termination not in (Termination.ITERATION_LIMIT, Termination.STALLED)
            or out.iterations >= limit
        ):
            return out
        cold = self._solve(p, z0, False, t0, limit - out.iterations, call)
        warm_r = self._natural(out.z, out.F) if out.z is not None and out.F is not None else math.inf
        cold_r = self._natural(cold.z, cold.F) if cold.z is not None and cold.F is not None else math.inf
        chosen = cold if cold.termination is Termination.CONVERGED or cold_r <= warm_r else out
        trace = list(out.trace) + [replace(s, k=s.k + out.iterations) for s in cold.trace]
        extra = dict(chosen.extra)
        extra["warm_restart"] = (
            f"cold restart (crash phase) after {out.iterations} warm iterations ended "
            f"{out.termination.value}: {out.raw_status}"
        )
        return RouteOutcome(
            chosen.z, cold.termination if chosen is cold else out.termination, chosen.raw_status,
            out.iterations + cold.iterations, trace, extra, chosen.F,
        )  # fmt: skip

    def _solve(
        self, p: np.ndarray, z0: np.ndarray, warm: bool, t0: float, limit: int, call: Budget
    ) -> RouteOutcome:
        """One run from ``z0`` with at most ``limit`` iterations, ending by ``call``'s deadline
        (the algorithm of the module docstring)."""
        n = self.fun.n
        p = _check_vector(p, self.fun.n_params, "p")
        z = self._project(_check_vector(z0, n, "z0"))
        opts = self.options
        deadline = math.inf if call.deadline is None else call.deadline
        self.fun.set_parameters(p)
        if self.fun.jac_depends_on_p:
            self._jac_ready = False
        run = _Run(self, t0, limit, call.time_limit)
        budget = self.system.budget = None if call.deadline is None else FactorBudget(deadline)
        F = self.fun.F(z)
        if not np.isfinite(F).all():
            return run.outcome(z, F, Termination.NUMERICAL_ERROR, "F(z0) is not finite")
        if SCALE_ROWS and not self.fun.jac_depends_on_z and (self._scale_at_start or not self._jac_ready):
            self._update_jacobian(z)
            norms = self.system.row_norms()
            self._scale = 1.0 / np.where(norms > 0, np.clip(norms, SCALE_MIN, SCALE_MAX), 1.0)
            self._scale_at_start = self.fun.jac_depends_on_z or self.fun.jac_depends_on_p
        r = self._natural(z, F)
        run.record_best(z, F, r)
        if r > opts.tol and not warm and CRASH_ITERATIONS > 0:
            z, F, r = self._crash(run, z, F, r, deadline)
        if r <= opts.tol:
            return run.outcome(z, F, Termination.CONVERGED, "converged")
        if budget is not None and budget.refusal is not None:
            return run.best_outcome(Termination.TIME_LIMIT, budget.refusal)
        return self._newton(run, z, F, deadline)

    def _crash(
        self, run: _Run, z: np.ndarray, F: np.ndarray, r: float, deadline: float
    ) -> tuple[np.ndarray, np.ndarray, float]:
        """Projected Newton steps on the natural map (module docstring); returns the best point met."""
        lb, ub, tol = self.lb, self.ub, self.options.tol
        fixed = self.fb.fixed
        best = (z, F, r)
        seen: set[bytes] = set()
        affine = not self.fun.jac_depends_on_z
        growth = math.inf if affine else CRASH_GROWTH
        for _ in range(CRASH_ITERATIONS_AFFINE if affine else CRASH_ITERATIONS):
            if r <= tol or run.iterations >= run.limit or time.perf_counter() > deadline:
                break
            t_it = time.perf_counter()
            w = z - self._scale * F
            active = (w <= lb) | (w >= ub) | fixed
            key = np.packbits(active).tobytes()
            repeated = key in seen
            seen.add(key)
            da = active.astype(float)
            self._update_jacobian(z)
            if not self.system.factor(da, (1.0 - da) * self._scale):
                break
            d = self.system.solve(-(z - self._project(w)))
            if not np.isfinite(d).all():
                break
            zt = self._project(z + d)
            Ft = self.fun.F(zt)
            rt = self._natural(zt, Ft) if np.isfinite(Ft).all() else math.inf
            if not rt < growth * best[2] or (repeated and rt >= best[2]):
                break
            z, F, r = zt, Ft, rt
            run.step(r, 0.0, 1.0, 1, "crash", t_it)
            run.record_best(z, F, r)
            run.crash += 1
            if r < best[2]:
                best = (z, F, r)
        return best

    def _direction(
        self, Phi: np.ndarray, da: np.ndarray, db: np.ndarray, grad: np.ndarray
    ) -> tuple[np.ndarray, float, str]:
        """Newton, proximal or Levenberg-Marquardt direction (module docstring, item 3), else -grad Psi."""
        norm_phi = math.sqrt(float(Phi @ Phi))
        mu = 0.0
        singular = False  # H itself could not be factorised, or its Newton step is not finite
        for attempt in range(PROX_TRIES + 1):
            if attempt:
                mu = min(max(PROX_FACTOR * norm_phi, PROX_MIN), PROX_MAX) * 10.0 ** (attempt - 1)
            too_long = False  # a finite descent direction that failed the test
            if self.system.factor(da + mu * db if mu else da, db):
                d = self.system.solve(-Phi)
                if _descends(d, grad):
                    return d, mu, "newton"
                finite = bool(np.isfinite(d).all())
                singular |= not attempt and not finite
                too_long = finite and float(grad @ d) < 0
            else:
                singular |= not attempt
            if LEVENBERG_MARQUARDT and (
                (attempt == 1 and singular) or (attempt == PROX_TRIES and not singular and too_long)
            ):
                lm = self.system.levenberg_marquardt(da, db, Phi, LM_FACTOR * norm_phi**2, LM_MIN_REL)
                if lm is not None and float(grad @ lm[0]) < 0:
                    return lm[0], lm[1], "lm"
        return -grad, 0.0, "gradient"

    def _line_search(
        self, z: np.ndarray, d: np.ndarray, slope: float, ref: float
    ) -> tuple[tuple[float, np.ndarray, np.ndarray, float] | None, int]:
        r"""Non-monotone Armijo backtracking: ``((t, z + t d, F, \Psi) or None, evaluations)``."""
        if not slope < 0:
            return None, 0
        t, evals = 1.0, 0
        dn = float(np.abs(d).max(initial=0.0))
        floor = STEP_FLOOR * (1.0 + float(np.abs(z).max(initial=0.0)))
        while t * dn > floor:
            zt = z + t * d
            evals += 1
            m = self._merit(zt)
            if m is not None and m[2] <= ref + ARMIJO_SIGMA * t * slope:
                return (t, zt, m[0], m[2]), evals
            t *= BACKTRACK
        return None, evals

    def _newton(self, run: _Run, z: np.ndarray, F: np.ndarray, deadline: float) -> RouteOutcome:
        opts = self.options
        lb, ub = self.lb, self.ub
        scale = self._scale
        Phi = self.fb.residual(z, scale * F)
        psi = 0.5 * float(Phi @ Phi)
        history: deque[float] = deque([psi], maxlen=NONMONOTONE_MEMORY)
        best_psi, best_point, best_k = psi, (z, F), run.iterations
        while True:
            if run.iterations - best_k >= WATCHDOG:
                (z, F), psi = best_point, best_psi
                history = deque([psi], maxlen=NONMONOTONE_MEMORY)
                best_k = run.iterations
                run.watchdog += 1
            if run.iterations >= run.limit:
                return run.best_outcome(Termination.ITERATION_LIMIT, f"{run.iterations} iterations")
            if time.perf_counter() > deadline:
                return run.best_outcome(Termination.TIME_LIMIT, f"time limit {run.time_limit} s")
            if run.iterations - run.best_at >= STALL_WINDOW:
                return run.best_outcome(
                    Termination.STALLED, f"stalled: no better natural residual in {STALL_WINDOW} iterations"
                )
            t_it = time.perf_counter()
            self._update_jacobian(z)
            Phi, da, db = self.fb.jacobian(z, scale * F, lambda v: scale * self.system.jv(v))
            db = db * scale  # H = D_a + D_b S J_F for the row-scaled function S F
            grad = self.system.htv(da, db, Phi)
            d, mu, phase = self._direction(Phi, da, db, grad)
            budget = self.system.budget
            if budget is not None and budget.refusal is not None:
                return run.best_outcome(Termination.TIME_LIMIT, budget.refusal)
            ref = max(history)
            step, evals = self._line_search(z, d, float(grad @ d), ref)
            if step is None and phase != "gradient":
                phase, d, mu = "gradient", -grad, 0.0
                step, more = self._line_search(z, d, float(grad @ d), ref)
                evals += more
            if step is None:
                return run.best_outcome(
                    Termination.STALLED,
                    f"stalled: line search failed along -grad Psi (Psi = {psi:.3e}, "
                    f"|grad Psi| = {math.sqrt(float(grad @ grad)):.3e}); "
                    "a stationary point of the merit function",
                )
            t, z, F, psi = step
            zc, Fc = z, F
            if ((z < lb) | (z > ub)).any():
                zc = self._project(z)
                m = self._merit(zc)
                if m is None:
                    Fc = self.fun.F(zc)
                else:
                    Fc = m[0]
                    if m[2] <= psi:
                        z, F, psi = zc, Fc, m[2]
                evals += 1
            history.append(psi)
            if psi < best_psi:
                best_psi, best_point, best_k = psi, (z, F), run.iterations + 1
            r = self._natural(zc, Fc) if np.isfinite(Fc).all() else math.inf
            run.step(r, mu, t, evals, phase, t_it)
            run.record_best(zc, Fc, r)
            if phase == "gradient":
                run.gradient += 1
            if mu > 0:
                run.perturbed += 1
            if phase == "lm":
                run.lm += 1
            if r <= opts.tol:
                return run.best_outcome(Termination.CONVERGED, "converged")


class _Run:
    """Bookkeeping of one solve: iterations, trace, best point, counters."""

    def __init__(self, engine: SemismoothNewton, t0: float, limit: int, time_limit: float | None) -> None:
        self.engine = engine
        self.t0 = t0
        self.limit = limit
        self.time_limit = time_limit
        """The call's time limit in seconds (for the message of a run it ends)."""
        self.iterations = 0
        self.trace: list[HomotopyStep] = progress_trace(engine.options)  # reports to options.progress
        self.best: tuple[np.ndarray, np.ndarray, float] | None = None
        self.best_at = 0
        self.crash = self.gradient = self.perturbed = self.lm = self.watchdog = 0
        self.factorizations0 = engine.system.factorizations

    def record_best(self, z: np.ndarray, F: np.ndarray, r: float) -> None:
        if self.best is None or r < self.best[2]:
            self.best = (z, F, r)
            self.best_at = self.iterations

    def step(self, r: float, mu: float, t: float, evals: int, phase: str, t_it: float) -> None:
        self.iterations += 1
        step = HomotopyStep(
            self.iterations - 1, mu, r, f"t={t:.3g}", evals, time.perf_counter() - t_it, phase
        )
        self.trace.append(step)  # printed by the trace when verbose (mcpkit.solving.progress)

    def best_outcome(self, termination: Termination, status: str) -> RouteOutcome:
        assert self.best is not None
        z, F, _ = self.best
        return self.outcome(z, F, termination, status)

    def outcome(self, z: np.ndarray, F: np.ndarray, termination: Termination, status: str) -> RouteOutcome:
        sysm = self.engine.system
        finite = bool(np.isfinite(F).all())
        Phi = self.engine.fb.residual(z, F) if finite else np.array([math.inf])
        extra = {
            "linear_solver": sysm.kind,
            "factorizations": sysm.factorizations - self.factorizations0,
            "crash_iterations": self.crash,
            "gradient_steps": self.gradient,
            "perturbed_steps": self.perturbed,
            "lm_steps": self.lm,
            "watchdog_restarts": self.watchdog,
            "merit": 0.5 * float(Phi @ Phi),
        }
        # the last factorisation, when it is one of J at the returned point: J_F constant during
        # the solve (it does not depend on z; p is fixed) and factorised in this run
        if (
            self.engine.keep_factor
            and termination is Termination.CONVERGED
            and not self.engine.fun.jac_depends_on_z
            and sysm._factor_id > self.factorizations0
        ):
            kept = sysm.kept_factor()
            if kept is not None:
                extra["newton_factor"] = kept
        return RouteOutcome(
            z=z,
            termination=termination,
            raw_status=status,
            iterations=self.iterations,
            trace=self.trace,
            extra=extra,
            F=F if finite else None,
        )


class AffineFunctions:
    r""":math:`F(z) = Mz + q` and its constant :math:`J_F = M` from the declaration, without CasADi.

    What :class:`SemismoothNewton` drives for an MCP whose blocks are all affine with numeric data
    (:meth:`MCP.affine_map <mcpkit.problems.mcp.MCP.affine_map>`): the same attributes as
    :class:`~mcpkit.engines.newton_casadi.CasadiFunctions` and the same numbers (the map rounds
    as CasADi's product does, the pattern is :math:`M`'s stored entries in CSC order), at none of
    the cost of building CasADi functions (about 2 ms for a 2 x 2 LCP).
    """

    jac_depends_on_z = False
    jac_depends_on_p = False

    def __init__(self, amap: AffineMap, n_params: int, name: str = "mcp") -> None:
        self.n, self.n_params, self.name = amap.n, n_params, name
        self._map = amap
        J = amap.jacobian
        self.colind, self.row = J.indptr.astype(np.int64), J.indices.astype(np.int64)
        self._values = np.array(J.data, dtype=float)

    def set_parameters(self, p: np.ndarray) -> None:
        """Nothing to set: :math:`q` is numeric."""

    def F(self, z: np.ndarray) -> np.ndarray:
        """:math:`F(z) = Mz + q` (a new array)."""
        return self._map(z)

    def J(self, z: np.ndarray) -> np.ndarray:
        """Nonzeros of :math:`J_F = M` in the CSC order of ``colind``/``row``."""
        return self._values


class NewtonRoute:
    r"""The ``newton`` engine: :class:`SemismoothNewton` on the declaration's functions.

    Parameters
    ----------
    problem
        The declaration :math:`l \le z \le u \perp F(z; p)`.
    backend
        ``"casadi"`` (:func:`~mcpkit.lowering.casadi.lower_to_casadi`; no CasADi at all when every
        block is affine with numeric data: :class:`AffineFunctions`) or ``"pyomo"`` (the Pyomo
        model read back through its NL import, :func:`~mcpkit.lowering.pyomo_nl.nl_casadi_mcp`).
    options
        ``tol``, ``max_inner_iter`` (Newton iterations), ``time_limit``, ``verbose``.

    Raises
    ------
    MCPInputError
        ``problem`` is not an MCP or ``backend`` is not one of the two.
    """

    method = "newton"

    def __init__(self, problem: MCP, backend: str, options: SolveOptions) -> None:
        if not isinstance(problem, MCP):
            raise MCPInputError(f"NewtonRoute expects an mcpkit.MCP, got {type(problem).__name__}")
        name = str(getattr(backend, "value", backend)).lower()
        if name not in ("casadi", "pyomo"):
            raise MCPInputError(f"method 'newton' runs on backends 'casadi' and 'pyomo', not {backend!r}")
        problem.validate()
        self.problem: MCP | None = problem
        amap = problem.affine_map() if name == "casadi" else None
        if amap is not None:
            fun: Any = AffineFunctions(amap, problem.n_params, problem.name)
            self._setup(fun, problem.lb, problem.ub, None, name, options, kinds=problem.bound_kinds)
            self.engine.keep_factor = True  # J_F = M, the declaration's, in its order
            return
        from mcpkit.engines.newton_casadi import CasadiFunctions, affine_jacobian_rows

        if name == "casadi":
            cas = lower_to_casadi(problem)
            constant = affine_jacobian_rows(problem)
        else:
            from mcpkit.lowering.pyomo_nl import nl_casadi_mcp

            cas = nl_casadi_mcp(problem)
            constant = None  # F comes from the Pyomo model: all of it is differentiated by CasADi
        self._setup(CasadiFunctions(cas, constant), cas.lb, cas.ub, cas, name, options)
        self.engine.keep_factor = name == "casadi"  # J_F is the declaration's (pyomo: the NL import's)

    @classmethod
    def from_casadi(
        cls,
        cas: CasadiMCP,
        options: SolveOptions | None = None,
        backend: str = "casadi",
        dense: bool | None = None,
    ) -> NewtonRoute:
        """The engine on an already lowered :class:`~mcpkit.lowering.casadi.CasadiMCP` (no declaration)."""
        from mcpkit.engines.newton_casadi import CasadiFunctions

        route = cls.__new__(cls)
        route.problem = None
        route._setup(CasadiFunctions(cas), cas.lb, cas.ub, cas, backend, options or SolveOptions(), dense)
        return route

    def _setup(
        self,
        fun: Any,
        lb: np.ndarray,
        ub: np.ndarray,
        cas: CasadiMCP | None,
        backend: str,
        options: SolveOptions,
        dense: bool | None = None,
        kinds: np.ndarray | None = None,
    ) -> None:
        self.backend = backend
        self.options = options
        self._cas = cas
        self.engine = SemismoothNewton(fun, lb, ub, options, dense=dense, kinds=kinds)
        self._warm_step: Any = None  # the CompiledWarmStep, built on the first warm solve
        self._warm_ok: bool | None = None  # whether it applies, decided on the first warm solve

    @property
    def casadi(self) -> CasadiMCP:
        """The CasADi image the engine's fast warm path compiles (lowered on first use)."""
        if self._cas is None:
            assert self.problem is not None
            self._cas = lower_to_casadi(self.problem)
        return self._cas

    def solve(self, p: np.ndarray, z0: np.ndarray, warm: bool, budget: Budget | None = None) -> RouteOutcome:
        """Run the semismooth Newton method at parameters ``p`` from ``z0`` (module docstring)
        within ``budget`` (``None``: the options' ``time_limit`` from now)."""
        budget = call_budget(budget, self.options.time_limit)
        if warm and self._warm_ok is None:
            from mcpkit.engines.newton_warm import CompiledWarmStep

            self._warm_ok = CompiledWarmStep.applies(self.casadi.z, self.casadi.n)
        note = None
        if warm and self._warm_ok:
            fast = self._compiled_warm_step(p, z0)
            if isinstance(fast, RouteOutcome):
                return fast
            note = fast
        out = self.engine.solve(p, z0, warm, budget)
        kept = out.extra.get("newton_factor")
        if kept is not None and self.problem is not None:
            kept.version = self.problem.version  # sensitivity() checks the declaration is unchanged
        if note:
            out.warnings = (*out.warnings, note)
        return out

    def _compiled_warm_step(self, p: np.ndarray, z0: np.ndarray) -> RouteOutcome | str | None:
        """The fast path of :mod:`mcpkit.engines.newton_warm`: its point if it passes the check,
        else ``None``, or a warning when it ended on a non-finite iterate (for the result)."""
        from mcpkit.engines.newton_warm import CompiledWarmStep

        if self._warm_step is None:
            c = self.casadi
            self._warm_step = CompiledWarmStep(
                c.z, c.p, c.F, c.lb, c.ub, self.options.tol, c.name, verbose=self.options.verbose
            )
        p = np.asarray(p, dtype=float).reshape(-1)
        z, iters, wall = self._warm_step.run(p, z0)
        if z is None:
            return (
                "compiled warm step: a NaN in the Fischer-Burmeister map or its Jacobian at a Newton "
                f"iterate (after {iters} steps); the engine's safeguarded Newton method took over"
            )
        fun = self.engine.fun
        fun.set_parameters(p)
        F = fun.F(z)
        r = natural_residual(z, F, self.casadi.lb, self.casadi.ub)
        if not r <= self.options.tol:
            return None
        step = HomotopyStep(0, 0.0, r, "casadi rootfinder", iters, wall, "compiled")
        extra = {"linear_solver": "casadi rootfinder (dense LU)", "warm_step": "compiled"}
        status = "converged (compiled warm step)"
        return RouteOutcome(z, Termination.CONVERGED, status, iters, [step], extra, F)
