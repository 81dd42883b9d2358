"""The ``direct`` stage of ``solve_fclib_file`` (Alart–Curnier law): the dense Newton method of
``mcpkit.engines.newton_contact`` first, its point judged on the posed equations as a solve is.

Every verdict is checked against measures recomputed here: the Siconos error from the returned
reactions and the file's data, :math:`F(\\hat r)` from ``ContactEquations`` (the declaration the
engine's stages solve).
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import pytest

from mcpkit.engines.newton_contact import solve_alart_curnier
from mcpkit.models.fclib import (
    DIRECT_ITERATIONS,
    _direct_result,
    friction_residual,
    load_fclib,
    solve_fclib_file,
)
from mcpkit.models.fclib_equations import ContactEquations
from mcpkit.solving.result import SolutionStatus, Termination
from tests.conftest import SHARED_DATA

DIR = SHARED_DATA / "fclib-siconos"
STACK = SHARED_DATA / "fclib" / "local_problem_test.hdf5"
#: A periodic box (W of rank 72 of 180, 22 of 60 contacts on the stick/slip boundary at the
#: solution): whether the direct stage alone reaches 1e-8 depends on rounding (perturbing W and
#: q by 1e-14 flips it either way), so its tests assert only what does not
PERIODIC = DIR / "LMGC_100_PR_PerioBox-i00361-60-03000.hdf5"
TOL = 1e-8
pytestmark = [
    pytest.mark.solver,
    pytest.mark.skipif(not DIR.is_dir(), reason="shared fclib-siconos problems not present"),
]


@pytest.mark.parametrize("name", ["Rover1039", "FrictionContact3D_RR_1c", "Confeti-ex03-Fc3D-SBM"])
def test_direct_stage_answers_small_problems(name: str) -> None:
    path = DIR / f"{name}.hdf5"
    res = solve_fclib_file(path)
    assert res.solved, res.message
    assert [st.name for st in res.stages] == ["direct"] and res.stages[0].solved
    assert res.solve.method == "newton_contact" and res.solve.termination is Termination.CONVERGED
    assert 0 < res.newton_iterations <= DIRECT_ITERATIONS
    prob = load_fclib(path)
    assert friction_residual(prob.W, prob.q, prob.mu, res.reactions) <= TOL
    # the verdict's F is the declaration's F at the returned point, to rounding
    eq = ContactEquations(prob.W, prob.q, prob.mu)
    F = eq.F(res.solve.z)
    np.testing.assert_allclose(res.solve.F, F, rtol=0, atol=1e-12)
    assert res.solve.natural_residual == pytest.approx(np.abs(F).max(), rel=0, abs=1e-12)
    np.testing.assert_allclose(eq.reactions(res.solve.z), res.reactions, rtol=1e-14, atol=0)
    # the engine alone reaches the same solution (strictly monotone laws here: one solution)
    engine = solve_fclib_file(path, direct=False)
    assert engine.solved and [st.name for st in engine.stages][0] == "plain"
    scale = max(1.0, float(np.abs(engine.reactions).max()))
    np.testing.assert_allclose(res.reactions, engine.reactions, rtol=0, atol=1e-5 * scale)


def test_stalled_direct_stage_hands_over(monkeypatch: pytest.MonkeyPatch) -> None:
    """A direct stage that stops without a solution (here: capped at 3 steps, so that it stops
    on every machine; uncapped it solves most problems alone, and the periodic box depending on
    rounding): the engine's stages then solve the problem and their point is the one returned."""
    import mcpkit.models.fclib as fclib_module

    monkeypatch.setattr(fclib_module, "DIRECT_ITERATIONS", 3)
    res = solve_fclib_file(PERIODIC)
    assert res.solved, res.message
    first = res.stages[0]
    assert first.name == "direct" and first.iterations == 3
    assert not (first.solved and first.friction_residual <= TOL)
    assert res.stages[1].name == "plain" and res.solve.method == "newton"
    assert res.newton_iterations == sum(st.iterations for st in res.stages)


def test_a_solvers_converged_word_is_not_taken() -> None:
    """A point one Newton step from r = 0, labelled ``converged``: judged not solved, STALLED."""
    prob = load_fclib(DIR / "Rover1039.hdf5")
    d = solve_alart_curnier(prob.W, prob.q, prob.mu, max_iter=1, restart=False)
    assert not d.solved
    eq = ContactEquations(prob.W, prob.q, prob.mu)
    liar = dataclasses.replace(d, message="converged", solved=True)
    res = _direct_result(liar, eq.F, time.perf_counter())
    assert not res.solved and res.solution_status is SolutionStatus.INACCURATE
    assert res.termination is Termination.STALLED and res.raw_status == "converged"
    assert res.natural_residual == pytest.approx(np.abs(eq.F(res.z)).max(), rel=1e-9)
    assert res.natural_residual > TOL and "NOT solved" in res.message


def test_direct_stage_respects_the_iteration_budget() -> None:
    res = solve_fclib_file(DIR / "Rover1039.hdf5", max_inner_iter=2)
    assert res.stages[0].name == "direct" and res.stages[0].iterations <= 2
    assert res.newton_iterations <= 2 and not res.solved


@pytest.mark.skipif(not STACK.is_file(), reason="shared FCLIB file not present")
@pytest.mark.parametrize("path", [STACK, DIR / "BoxesStack1-i100000-32.hdf5"])
def test_the_perturbed_direct_stage_solves_singular_stacks(path) -> None:
    """Statically indeterminate stacks and the periodic box (singular Newton matrices at the
    solutions): the proximally perturbed steps with a memory of 10 and the watchdog solve them
    in the direct stage alone (the plain Newton step stalled there and the engine took over),
    to the Siconos error 1e-8."""
    res = solve_fclib_file(path)
    assert res.solved, res.message
    assert [st.name for st in res.stages] == ["direct"] and res.solve.method == "newton_contact"
    prob = load_fclib(path)
    assert friction_residual(prob.W, prob.q, prob.mu, res.reactions) <= TOL


@pytest.mark.skipif(not PERIODIC.is_file(), reason="shared FCLIB file not present")
def test_the_periodic_box_is_solved_direct_stage_first() -> None:
    """W of rank 72/180, 22 contacts sticking on the cone boundary at the solution: whether the
    direct stage alone reaches 1e-8 depends on rounding (1e-14 perturbations of W and q flip it:
    30/30 perturbed copies stall in it on one machine, the unperturbed file solved there in 32
    steps on another), so only the machine-independent part is asserted: the direct stage runs
    first, and when it stops short the engine's stages finish to the Siconos error 1e-8."""
    res = solve_fclib_file(PERIODIC)
    assert res.solved, res.message
    assert res.stages[0].name == "direct"
    if not (res.stages[0].solved and res.stages[0].friction_residual <= TOL):
        assert res.stages[-1].solved and res.solve.method == "newton"
    prob = load_fclib(PERIODIC)
    assert friction_residual(prob.W, prob.q, prob.mu, res.reactions) <= TOL
