"""The shared FCLIB problem (48 contacts) solved as the quadratic-cone NCP of seed 004 eq (9)."""

from __future__ import annotations

import json

import pytest

from mcpkit.errors import ProblemFileError, UnknownOptionError
from mcpkit.models.fclib import FCLIBResult, solve_fclib_file
from mcpkit.result import RESULT_KEYS, SUMMARY_KEYS, Outcome, Termination, ToleranceCheck
from tests.conftest import SHARED_DATA

DATA = SHARED_DATA / "fclib" / "local_problem_test.hdf5"
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


def test_friction_residual_below_1e6(result, summary):
    assert isinstance(result, Outcome)
    assert result.solved and result.termination is Termination.CONVERGED, result.message
    assert result.solve.solved and result.friction.solved
    assert summary["solved"] is True
    assert summary["friction_residual"] <= 1e-6
    assert summary["comp_residual"] <= 1e-6


def test_summary_is_json_with_required_keys(summary):
    keys = {
        *SUMMARY_KEYS,
        "friction_residual",
        "reference_friction_residual",
    }
    assert keys <= set(summary)
    assert tuple(summary)[: len(RESULT_KEYS)] == RESULT_KEYS and summary["kind"] == "fclib"
    assert summary["objective"] is None
    json.loads(json.dumps(summary))


def test_verdict_needs_the_friction_residual(result):
    """The solve alone does not decide: a friction residual above tol (or none) fails the file."""
    high = ToleranceCheck("friction residual", 2e-6, 1e-6)
    assert not high.solved and high.termination is Termination.STALLED
    assert ToleranceCheck("friction residual", None, 1e-6).termination is Termination.NUMERICAL_ERROR
    failed = FCLIBResult(**{**vars(result), "friction": high})
    assert result.solve.solved and not failed.solved
    assert failed.termination is Termination.STALLED
    assert "first failure at check 1: friction residual 2.00e-06 > 1e-06" in failed.message


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
