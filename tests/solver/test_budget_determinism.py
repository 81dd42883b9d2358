"""Results do not depend on the machine's load: the MPCC engine's internal budgets count IPOPT
iterations; the clock decides only the caller's time limit.

One MPCC with fallbacks and a second opinion runs twice under a time limit of 1,000 s: once on the
real clock, once with ``time.perf_counter`` skewed forward after every recorded step (as a heavily
loaded machine would make each subproblem slower), by ``0.8 * limit / steps`` so that the whole run
still ends within the limit. Both runs must take the same steps, iterations and point. With wall
clock shares of the limit (a fraction for the primary, a quarter of the time left for the second
opinion) the skewed run stopped the second opinion after fewer steps.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import casadi as ca
import numpy as np
import pytest

from mcpkit.homotopy.loop import Assessment, HomotopyOutcome
from mcpkit.homotopy.recovery import make_homotopy
from mcpkit.mpcc import MPCC
from mcpkit.solving.options import SolveOptions
from mcpkit.solving.result import HomotopyStep, Termination

pytestmark = pytest.mark.solver

LIMIT = 1000.0
"""The caller's time limit (s): far above the real run's length, so only the skew can use it."""


def _mpcc() -> MPCC:
    """min (x0 - 1)^2 + (x1 - 1)^2 + x2^2 s.t. 0 <= x0 _|_ x1 >= 0, x0 + x1 + x2 >= 1.5: sigma
    must go down to the corner; (1, 0, 0.5) and (0, 1, 0.5) are its minimisers."""
    x = ca.SX.sym("x", 3)
    f = (x[0] - 1) ** 2 + (x[1] - 1) ** 2 + x[2] ** 2
    return MPCC.from_casadi(x, x[0], x[1], f=f, g=x[0] + x[1] + x[2], lbg=1.5, ubg=np.inf, x0=[0.5, 0.4, 0.0])


def _run(progress: Callable[[HomotopyStep], None] | None) -> HomotopyOutcome:
    m = _mpcc()
    opts = SolveOptions(tol=1e-9, time_limit=LIMIT, progress=progress)
    hom = make_homotopy(m, "scholtes", opts, second_opinion="fb", fallbacks=("scholtes_eq", "penalty"))

    def assess(x: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, Assessment]:
        return x, Assessment(*m.residuals(x, p)[:2])

    return hom.run(m.x0, m.p0, assess)


def _steps(out: HomotopyOutcome) -> list[tuple[str, float, str, int]]:
    return [(s.phase, s.parameter, s.inner_status, s.inner_iterations) for s in out.trace]


def test_a_loaded_clock_changes_nothing_within_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    calm = _run(None)
    assert calm.termination is Termination.CONVERGED
    assert any(s.phase.startswith("second:") for s in calm.trace)  # the second opinion ran
    n = len(calm.trace)
    real = time.perf_counter
    skew = [0.0]

    def loaded() -> float:
        return real() + skew[0]

    def step(_: HomotopyStep) -> None:
        skew[0] += 0.8 * LIMIT / n  # each step seems to take 0.8 * LIMIT / n seconds longer

    monkeypatch.setattr(time, "perf_counter", loaded)
    busy = _run(step)
    monkeypatch.undo()
    assert skew[0] < LIMIT  # still inside the limit: no step was cut by the caller's deadline
    assert busy.termination is calm.termination
    assert _steps(busy) == _steps(calm)
    assert busy.iterations == calm.iterations and busy.reformulation == calm.reformulation
    np.testing.assert_allclose(busy.x, calm.x, rtol=0, atol=0)
