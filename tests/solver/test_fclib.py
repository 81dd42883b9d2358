"""The shared FCLIB problem (48 contacts, rank-deficient W) solved to a Siconos error of 1e-8.

Default formulation: Alart-Curnier equations in the reactions, semismooth Newton (``newton``),
whose unregularised first attempt stalls on this statically indeterminate stack and hands over
to the Tikhonov continuation; FB-SOC solves it directly.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import mcpkit.models.fclib as fclib_module
from mcpkit.errors import MCPInputError, ProblemFileError, UnknownOptionError
from mcpkit.models.fclib import (
    DEFAULT_FORMULATION,
    DIRECT_MAX_CONTACTS,
    FCLIBFormulation,
    FCLIBProblem,
    FCLIBResult,
    friction_residual,
    load_fclib,
    solve_fclib,
    solve_fclib_file,
)
from mcpkit.solving.result import (
    RESULT_KEYS,
    SUMMARY_KEYS,
    Outcome,
    Termination,
    ToleranceCheck,
    note_overrun,
)
from tests.conftest import SHARED_DATA

DATA = SHARED_DATA / "fclib" / "local_problem_test.hdf5"
FAF = SHARED_DATA / "fclib-siconos" / "faf_Capsules-i97-269.hdf5"
TOL = 1e-8
pytestmark = [
    pytest.mark.solver,
    pytest.mark.skipif(not DATA.is_file(), reason="shared FCLIB file not present"),
]


@pytest.fixture(scope="module")
def result() -> FCLIBResult:
    return solve_fclib_file(DATA)


@pytest.fixture(scope="module")
def summary(result: FCLIBResult) -> dict:
    return result.summary()


def test_siconos_error_below_1e8(result, summary):
    assert isinstance(result, Outcome)
    assert result.formulation == DEFAULT_FORMULATION.value == "alart_curnier"
    assert result.solved and result.termination is Termination.CONVERGED, result.message
    assert result.solve.solved and result.friction.solved
    assert summary["solved"] is True and summary["method"] == "newton_contact"
    assert result.friction.tol == TOL
    # recomputed here from the returned reactions and the file's data, not taken from the result
    prob = load_fclib(DATA)
    assert friction_residual(prob.W, prob.q, prob.mu, result.reactions) <= TOL
    assert summary["friction_residual"] <= TOL
    assert summary["comp_residual"] <= result.solve.tol <= TOL


def test_stages_are_recorded(result, summary):
    """W is singular here: the direct Alart-Curnier stage (proximally perturbed Newton steps)
    solves it alone, so it is the only stage and the judged one; the summary reports it."""
    names = [st.name for st in result.stages]
    assert names == ["direct"] and result.stages[0].solved and result.stages[0].eps == 0.0
    assert summary["newton_iterations"] == sum(st.iterations for st in result.stages)
    assert len(summary["stages"]) == len(result.stages)


@pytest.mark.skipif(not FAF.is_file(), reason="fclib-siconos set not present")
def test_continuation_stages_when_the_plain_attempt_fails(monkeypatch):
    """FB-SOC on faf_Capsules with the plain attempt capped at 5 iterations, so that it fails
    on every CPU (uncapped it stalls on some and converges in about 60 iterations on others):
    the Tikhonov continuation on W + eps I ends with an eps = 0 polish, the judged stage."""
    monkeypatch.setattr(fclib_module, "PLAIN_ITERATIONS", 5)
    res = solve_fclib_file(FAF, formulation=FCLIBFormulation.FB_SOC)
    names = [st.name for st in res.stages]
    assert res.solved, res.message
    assert names[0] == "plain" and not res.stages[0].solved
    assert "tikhonov" in names and names[-1] in ("polish", "tighten")
    assert res.stages[-1].eps == 0.0 and res.stages[-1].solved
    assert all(st.eps > 0 for st in res.stages if st.name == "tikhonov")


def test_fb_soc_solves_it_too():
    res = solve_fclib_file(DATA, formulation=FCLIBFormulation.FB_SOC)
    assert res.solved, res.message
    assert res.friction_residual is not None and res.friction_residual <= TOL
    prob = load_fclib(DATA)
    np.testing.assert_array_less(friction_residual(prob.W, prob.q, prob.mu, res.reactions), TOL)


def test_summary_is_json_with_required_keys(summary):
    keys = {
        *SUMMARY_KEYS,
        "friction_residual",
        "reference_friction_residual",
        "formulation",
        "newton_iterations",
        "stages",
    }
    assert keys <= set(summary)
    assert tuple(summary)[: len(RESULT_KEYS)] == RESULT_KEYS and summary["kind"] == "fclib"
    assert summary["objective"] is None
    json.loads(json.dumps(summary))


def test_verdict_needs_the_friction_residual(result):
    """The solve alone does not decide: a friction residual above tol (or none) fails the file."""
    high = ToleranceCheck("friction residual", 2e-8, TOL)
    assert not high.solved and high.termination is Termination.STALLED
    assert ToleranceCheck("friction residual", None, TOL).termination is Termination.NUMERICAL_ERROR
    failed = FCLIBResult(**{**vars(result), "friction": high})
    assert result.solve.solved and not failed.solved
    assert failed.termination is Termination.STALLED
    assert "first failure at check 1: friction residual 2.00e-08 > 1e-08" in failed.message


def test_tolerance_is_honoured():
    """A looser tol is a looser check on both parts (and may need fewer iterations)."""
    res = solve_fclib_file(DATA, tol=1e-6)
    assert res.solved and res.friction.tol == 1e-6 and res.friction_residual <= 1e-6


def test_reference_solution_reported(summary):
    """The file's stored reference does not satisfy u = W r + q (see the unit test); both of its
    residuals are reported rather than hidden."""
    assert summary["reference_friction_residual"] > 0.5
    assert summary["reference_friction_residual_stored_u"] is not None


def test_errors_before_solving(tmp_path):
    with pytest.raises(ProblemFileError):
        solve_fclib_file(tmp_path / "nope.hdf5")
    with pytest.raises(UnknownOptionError):
        solve_fclib_file(DATA, tolerance=1e-6)


def test_unknown_options_are_reported_before_the_file_is_read(tmp_path):
    with pytest.raises(UnknownOptionError):
        solve_fclib_file(tmp_path / "nope.hdf5", tolerance=1e-6)


def test_a_loaded_problem_solves_as_its_file_does(result):
    """solve_fclib on the loaded problem: the same stages, reactions and verdict as the file
    route (whose only extra step is reading the file); its path is empty."""
    prob = load_fclib(DATA)
    res = solve_fclib(prob)
    assert res.path == "" and result.path == str(DATA)
    assert res.solved and res.friction_residual <= TOL
    assert [st.name for st in res.stages] == [st.name for st in result.stages]
    scale = np.abs(result.reactions).max()
    np.testing.assert_allclose(res.reactions, result.reactions, rtol=0, atol=1e-12 * scale)
    with pytest.raises(UnknownOptionError):
        solve_fclib(prob, tolerance=1e-6)
    with pytest.raises(MCPInputError, match="FCLIBProblem"):
        solve_fclib(str(DATA))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"W": "nan"}, "NaN or inf"),
        ({"q": "short"}, "need W 3n_c"),
        ({"mu": "negative"}, "negative friction"),
    ],
)
def test_bad_in_memory_problems_are_refused_before_solving(change, match):
    """Problems built in memory get the checks load_fclib makes on files, as typed errors, on
    the direct-stage size and above it (where no direct stage would check them)."""
    for nc in (2, DIRECT_MAX_CONTACTS + 1):
        W, q, mu = np.eye(3 * nc), np.ones(3 * nc), np.full(nc, 0.3)
        if change.get("W") == "nan":
            W[0, 0] = np.nan
        if change.get("q") == "short":
            q = q[:-1]
        if change.get("mu") == "negative":
            mu[0] = -0.1
        with pytest.raises(MCPInputError, match=match):
            solve_fclib(FCLIBProblem(W, q, mu))


def test_unsolved_result_after_the_deadline_says_time_limit() -> None:
    """Regression: an FCLIB solve stopped by its time limit said ``iteration_limit`` when the best
    stage kept was one that had ended at its own iteration cap (RockPile at 20 s)."""
    import mcpkit

    capped = mcpkit.solve_mcp(
        lambda z: np.array([z[0] ** 3 - 8.0]), lambda z: np.array([[3 * z[0] ** 2]]), -np.inf, np.inf,
        np.array([50.0]), method="newton", major_iteration_limit=1,
    )  # fmt: skip
    assert not capped.solved and capped.termination is Termination.ITERATION_LIMIT
    assert note_overrun(capped, 5.0, 4.0).termination is Termination.ITERATION_LIMIT  # in time
    late = note_overrun(capped, 5.0, 5.5)
    assert late.termination is Termination.TIME_LIMIT
    assert "termination time_limit" in late.message and "iteration_limit" not in late.message
    assert "time limit 5 s exceeded" in late.message
