"""The shared FCLIB problem (48 contacts) solved as the quadratic-cone NCP of seed 004 eq (9)."""

from __future__ import annotations

import json

import pytest

from mcpkit.errors import ProblemFileError, UnknownOptionError
from mcpkit.models.fclib import solve_fclib_file
from mcpkit.result import SUMMARY_KEYS
from tests.conftest import SHARED_DATA

DATA = SHARED_DATA / "fclib" / "local_problem_test.hdf5"
pytestmark = [
    pytest.mark.solver,
    pytest.mark.skipif(not DATA.is_file(), reason="shared FCLIB file not present"),
]


@pytest.fixture(scope="module")
def summary():
    return solve_fclib_file(DATA)


def test_friction_residual_below_1e6(summary):
    assert summary["solved"]
    assert summary["friction_residual"] <= 1e-6
    assert summary["comp_residual"] <= 1e-6


def test_summary_is_json_with_required_keys(summary):
    keys = {
        *SUMMARY_KEYS,
        "friction_residual",
        "reference_friction_residual",
    }
    assert keys <= set(summary)
    assert summary["objective"] is None
    json.loads(json.dumps(summary))


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
