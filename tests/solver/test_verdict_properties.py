"""Property suite of issue 12: no registered method on any backend reports a false "solved".

For every registered MCP method x backend (``mcpkit.solving.registry.METHODS``; PATH skipped with the
reason when it cannot run) hypothesis generates box LCPs :math:`l \\le z \\le u \\perp Mz + q` of
five families:

* ``no_solution``: a row with :math:`M_{i,:} \\le 0`, :math:`q_i < 0` (so :math:`F_i < 0` on
  :math:`z \\ge 0`), at scales :math:`10^{-150} .. 10^{150}`;
* ``huge``: :math:`M = \\mathrm{diag}(10^{-e_i})`, solutions up to :math:`10^{15}`, and zero rows
  with :math:`q_i = 0` (a ray of solutions);
* ``scaled``: a positive-definite :math:`M` and :math:`q`, both times :math:`10^{k}`,
  :math:`|k| \\le 150`;
* ``degenerate``: a planted solution with :math:`z_i = F_i = 0` on some pairs;
* ``fixed``: box MCPs with :math:`l_i = u_i` on some components (and boxes, one-sided, free).

The property: the result is not solved, or the residual recomputed *here* (own code, not
mcpkit's: the complementarity conditions pair by pair, :math:`F = Mz + q` in NumPy) is at most
``tol`` plus, pair by pair, the rounding of two float evaluations of that row of :math:`F`. A
problem without a solution whose :math:`|q_i|` exceeds ``tol`` is never solved.

The default run checks one explicit example per family on every route; ``-m slow`` runs the
full hypothesis search.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

import mcpkit
from mcpkit.errors import MCPInputError, SolverNotAvailableError
from mcpkit.solving.registry import METHODS

pytestmark = pytest.mark.solver

INF = math.inf
TOL = 1e-8
EPS = float(np.finfo(float).eps)

ROUTES = [(m, b) for m, e in METHODS.items() if "mcp" in e.problems for b in e.backends] + [
    ("auto", "casadi"),
    ("auto", "pyomo"),
]
IDS = [f"{m}-{b}" for m, b in ROUTES]


@dataclass(frozen=True)
class Case:
    """One generated box LCP and what is known about it."""

    family: str
    M: np.ndarray
    q: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    no_solution_row: int = -1
    """A row that no z in the box can satisfy (``no_solution`` family), else -1."""

    def __repr__(self) -> str:  # hypothesis prints this on failure
        return (
            f"Case({self.family}, M={self.M.tolist()}, q={self.q.tolist()}, "
            f"lb={self.lb.tolist()}, ub={self.ub.tolist()})"
        )


def our_residual(case: Case, z: np.ndarray) -> tuple[float, float]:
    """``(residual, excess)`` at ``z``: the largest violation of the pair conditions, pair by pair.

    * :math:`l_i = u_i`: :math:`|z_i - l_i|`;
    * :math:`F_i > 0` needs :math:`z_i = l_i`: :math:`\\min(z_i - l_i, F_i)`;
    * :math:`F_i < 0` needs :math:`z_i = u_i`: :math:`\\min(u_i - z_i, -F_i)`;
    * and any bound violation.

    ``excess`` is the largest :math:`r_i - \\delta_i`, with :math:`\\delta_i` = 4(n+1) eps
    :math:`(|M||z| + |q|)_i` bounding the difference between two float evaluations of row
    :math:`i` of :math:`Mz + q` (mcpkit evaluates :math:`F` through CasADi or the NL file).
    """
    F = case.M @ z + case.q
    delta = 4.0 * (z.size + 1) * EPS * (np.abs(case.M) @ np.abs(z) + np.abs(case.q))
    worst, excess = 0.0, -INF
    for i in range(z.size):
        lo, hi, zi, fi = case.lb[i], case.ub[i], z[i], F[i]
        viol = max(lo - zi, zi - hi, 0.0)
        if lo == hi:
            r = abs(zi - lo)
        elif fi > 0:
            r = min(zi - lo, fi) if math.isfinite(lo) else fi
        elif fi < 0:
            r = min(hi - zi, -fi) if math.isfinite(hi) else -fi
        else:
            r = 0.0
        worst = max(worst, r, viol)
        excess = max(excess, r - delta[i], viol)
    return worst, excess


def _ints(draw: st.DrawFn, shape: tuple[int, ...], lo: int = -3, hi: int = 3) -> np.ndarray:
    n = int(np.prod(shape))
    return np.array(draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n)), dtype=float).reshape(shape)


def _spd(draw: st.DrawFn, n: int) -> np.ndarray:
    B = _ints(draw, (n, n))
    return B @ B.T + np.eye(n)


def _free(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(n), np.full(n, INF)


@st.composite
def cases(draw: st.DrawFn, family: str, n_max: int = 4) -> Case:
    """A generated problem of ``family`` (module docstring)."""
    n = draw(st.integers(1, n_max))
    if family == "no_solution":
        M, q = _ints(draw, (n, n)), _ints(draw, (n,))
        i = draw(st.integers(0, n - 1))
        M[i] = -np.abs(M[i])
        q[i] = -(abs(q[i]) + 1.0)
        s = 10.0 ** draw(st.integers(-150, 150))
        return Case(family, s * M, s * q, *_free(n), no_solution_row=i)
    if family == "huge":
        e = _ints(draw, (n,), 0, 15)
        M = np.diag(10.0**-e)
        q = np.where(_ints(draw, (n,), 0, 1) > 0, 1.0, -1.0)
        ray = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        for i, r in enumerate(ray):
            if r:
                M[i, i], q[i] = 0.0, 0.0  # F_i = 0: any z_i >= 0 is a solution
        return Case(family, M, q, *_free(n))
    if family == "scaled":
        s = 10.0 ** draw(st.integers(-150, 150))
        return Case(family, s * _spd(draw, n), s * _ints(draw, (n,)), *_free(n))
    if family == "degenerate":
        M = _spd(draw, n)
        zs = _ints(draw, (n,), 0, 3)
        ws = _ints(draw, (n,), 0, 3)
        ws[zs > 0] = 0.0
        j = draw(st.integers(0, n - 1))
        zs[j] = ws[j] = 0.0  # a biactive pair
        return Case(family, M, ws - M @ zs, *_free(n))
    if family == "fixed":
        M, q = _spd(draw, n), _ints(draw, (n,), -4, 4)
        kind = st.sampled_from(["fixed", "box", "lower", "upper", "free"])
        kinds = draw(st.lists(kind, min_size=n, max_size=n))
        kinds[draw(st.integers(0, n - 1))] = "fixed"
        a, w = _ints(draw, (n,), -2, 2), _ints(draw, (n,), 1, 3)
        lb = np.array([a[i] if k in ("fixed", "box", "lower") else -INF for i, k in enumerate(kinds)])
        top = {"fixed": 0.0, "box": 1.0, "upper": 1.0}
        ub = np.array([a[i] + top[k] * w[i] if k in top else INF for i, k in enumerate(kinds)])
        return Case(family, M, q, lb, ub)
    raise AssertionError(family)


def _constant_row_without_solution(case: Case) -> bool:
    """A row with F_i constant that no z_i in [l_i, u_i] can complement (checked here)."""
    for i in range(case.q.size):
        if not np.any(case.M[i]):
            qi = case.q[i]
            if (qi < 0 and case.ub[i] == INF) or (qi > 0 and case.lb[i] == -INF):
                return True
    return False


def check_route(case: Case, method: str, backend: str) -> None:
    """The property of the module docstring for one route on one problem."""
    mcp = mcpkit.MCP.lcp(case.M, case.q, lb=case.lb, ub=case.ub)
    logging.disable(logging.CRITICAL)
    try:
        try:
            solver = mcpkit.Solver(mcp, backend=backend, method=method, tol=TOL, time_limit=30.0)
        except SolverNotAvailableError as exc:
            pytest.skip(f"{method}/{backend} not available: {exc}")
        except MCPInputError as exc:  # a typed refusal: only for a provably unsolvable constant row
            assert _constant_row_without_solution(case), exc
            return
        res = solver.solve()
    finally:
        logging.disable(logging.NOTSET)
    if not res.solved:
        return
    assert np.isfinite(res.z).all()
    mine, excess = our_residual(case, res.z)
    why = f"{method}/{backend} solved {case} at z={res.z.tolist()}: residual {mine:.3e}"
    assert excess <= TOL, why
    if case.no_solution_row >= 0:
        # F_i <= q_i < 0 on z >= 0: |F_i| >= |q_i| cannot be balanced, so solved needs |q_i| <= tol
        assert abs(case.q[case.no_solution_row]) <= TOL, why


FAMILIES = ("no_solution", "huge", "scaled", "degenerate", "fixed")


#: One explicit problem per family for the default run (checked on every route).
def _case(family: str, M: list, q: list, scale: float = 1.0, row: int = -1, box: tuple = ()) -> Case:
    n = len(q)
    lb, ub = (np.array(box[0], dtype=float), np.array(box[1], dtype=float)) if box else _free(n)
    return Case(family, scale * np.array(M, dtype=float), scale * np.array(q, dtype=float), lb, ub, row)


EXPLICIT = [
    _case("no_solution", [[0]], [-1], row=0),  # issue 12: elastic said solved at z = 3e17
    _case("no_solution", [[0, 1], [-1, 0]], [-1, -1], row=1),  # issue 12 (skew)
    _case("no_solution", [[2, -1], [0, -3]], [-1, -2], row=1),
    _case("no_solution", [[0, -1], [-1, 0]], [-1, -1], scale=1e-150, row=0),
    _case("no_solution", [[1, -1], [-1, 0]], [-1, -1], scale=1e150, row=1),
    _case("huge", np.diag([1e-15, 1.0, 0.0]).tolist(), [-1, 1, 0]),
    _case("scaled", [[2, 1], [1, 2]], [-1, -1], scale=1e120),
    _case("scaled", [[2, 1], [1, 2]], [-1, 3], scale=1e-120),
    _case("degenerate", [[2, 1], [1, 2]], [-1, -2]),  # z = (0, 1), F = (0, 0): pair 1 biactive
    _case("degenerate", [[2, 1, 0], [1, 2, 1], [0, 1, 2]], [0, 0, 1]),  # z = 0, F = (0, 0, 1)
    _case("fixed", [[2, 1, 0], [1, 3, 1], [0, 1, 2]], [1, -4, 2], box=([1, 0, -INF], [1, 2, 0.5])),
]


#: The default run's share of :data:`EXPLICIT` (the issue's case, scale extremes, one per family).
FAST = [EXPLICIT[i] for i in (0, 4, 5, 6, 8, 10)]


@pytest.mark.parametrize(("method", "backend"), ROUTES, ids=IDS)
@pytest.mark.parametrize("case", FAST, ids=[f"{c.family}{i}" for i, c in enumerate(FAST)])
def test_verdict_on_explicit_cases(case: Case, method: str, backend: str) -> None:
    """Default run: the property on a few hand-made problems (every family, both scale extremes)."""
    check_route(case, method, backend)


def test_explicit_cases_are_what_they_claim() -> None:
    """The explicit problems' claims, checked by hand: no-solution rows, planted degenerate solutions."""
    for c in EXPLICIT:
        if c.no_solution_row >= 0:
            i = c.no_solution_row
            assert (c.M[i] <= 0).all() and c.q[i] < 0
    deg, z = EXPLICIT[8], np.array([0.0, 1.0])
    assert our_residual(deg, z)[0] == 0.0 and (deg.M @ z + deg.q)[0] == 0.0  # z_1 = F_1 = 0
    deg3 = EXPLICIT[9]
    F = deg3.M @ np.zeros(3) + deg3.q
    assert F[0] == F[1] == 0.0 and our_residual(deg3, np.zeros(3))[0] == 0.0


SLOW = settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
)
"""Hypothesis settings of the slow suite: 15 generated problems per family and route."""


@pytest.mark.slow
@pytest.mark.parametrize(("method", "backend"), ROUTES, ids=IDS)
@pytest.mark.parametrize("family", FAMILIES)
def test_verdict_property(family: str, method: str, backend: str) -> None:
    """``-m slow``: the property on hypothesis-generated problems of every family, every route."""

    def run(case: Case) -> None:
        check_route(case, method, backend)

    for c in EXPLICIT:  # every hand-made problem of the family first
        if c.family == family:
            run = example(case=c)(run)
    SLOW(given(case=cases(family))(run))()
