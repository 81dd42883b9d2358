"""Residual definitions, pair labels and the result object (no solver)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from mcpkit.errors import SolveFailedError
from mcpkit.solving.residuals import PairState, classify_pairs, compute_residuals
from mcpkit.solving.result import SUMMARY_KEYS, MCPResult, SolutionStatus, Termination, judge

INF = math.inf


def test_natural_residual_is_zero_exactly_at_box_solutions() -> None:
    lb = np.array([0.0, -INF, 1.0, -INF])
    ub = np.array([INF, 2.0, 3.0, INF])
    z = np.array([0.0, 2.0, 2.5, 7.0])
    F = np.array([3.0, -1.0, 0.0, 0.0])
    r = compute_residuals(z, F, lb, ub)
    assert r.natural == 0.0 and r.complementarity == 0.0 and r.bounds == 0.0


def test_residual_values_by_hand() -> None:
    lb, ub = np.array([0.0]), np.array([INF])
    # z = 2, F = 3: projection of z - F = -1 onto [0, inf) is 0 -> |2 - 0| = 2
    r = compute_residuals(np.array([2.0]), np.array([3.0]), lb, ub)
    assert r.natural == 2.0
    assert r.complementarity == 2.0  # min(z - l, F+) = min(2, 3)
    # infeasible point: z = -0.5
    r = compute_residuals(np.array([-0.5]), np.array([0.0]), lb, ub)
    assert r.bounds == 0.5
    # NaN counts as infinite, never as zero
    r = compute_residuals(np.array([np.nan]), np.array([0.0]), lb, ub)
    assert r.natural == INF


def test_pair_labels() -> None:
    lb = np.array([0.0, 0.0, 0.0, -INF, 1.0, 2.0, 0.0])
    ub = np.array([INF, INF, INF, 5.0, 3.0, 2.0, INF])
    z = np.array([0.0, 0.0, 1.0, 5.0, 2.0, 2.0, 1.0])
    F = np.array([1.0, 0.0, 0.0, -2.0, 0.0, 9.0, 4.0])
    labels = classify_pairs(z, F, lb, ub, tol=1e-9)
    assert labels == [
        PairState.AT_LOWER,
        PairState.DEGENERATE,
        PairState.BETWEEN,
        PairState.AT_UPPER,
        PairState.BETWEEN,
        PairState.FIXED,
        PairState.VIOLATED,
    ]


def test_judge_uses_residuals_not_solver_words() -> None:
    assert judge(1e-10, 0.0, 1e-8, True) is SolutionStatus.SOLUTION
    assert judge(1e-6, 0.0, 1e-8, True) is SolutionStatus.INACCURATE
    assert judge(0.0, 1e-3, 1e-8, True) is SolutionStatus.INFEASIBLE_POINT
    assert judge(0.0, 0.0, 1e-8, False) is SolutionStatus.NO_SOLUTION


def _result(status: SolutionStatus) -> MCPResult:
    return MCPResult(
        z=np.array([1.0, 2.0, 3.0]),
        F=np.zeros(3),
        termination=Termination.STALLED,
        solution_status=status,
        natural_residual=1e-3,
        complementarity_violation=1e-3,
        bound_violation=0.0,
        pair_states=[PairState.BETWEEN] * 3,
        tol=1e-8,
        iterations=5,
        wall_time_s=0.1,
        backend="casadi",
        method="scholtes",
        raw_status="Search_Direction_Becomes_Too_Small",
        blocks={"a": slice(0, 1), "b": slice(1, 3)},
    )


def test_result_reads_like_optimize_result_and_raises_on_failure() -> None:
    res = _result(SolutionStatus.INACCURATE)
    assert not res.solved and not res.success and res.x is res.z and res.nit == 5
    np.testing.assert_array_equal(res.block("b"), [2.0, 3.0])
    with pytest.raises(KeyError):
        res.block("c")
    with pytest.raises(SolveFailedError, match="Search_Direction_Becomes_Too_Small") as info:
        res.raise_if_failed()
    assert info.value.result is res
    assert _result(SolutionStatus.SOLUTION).raise_if_failed().solved


def test_json_summary_has_the_documented_keys() -> None:
    summary = json.loads(_result(SolutionStatus.INACCURATE).to_json())
    for key in SUMMARY_KEYS:
        assert key in summary
    assert summary["solved"] is False and summary["status"] == "stalled"


def test_repr_uses_the_attribute_names_and_values_and_shows_a_small_point() -> None:
    res = _result(SolutionStatus.INACCURATE)
    text = repr(res)
    assert f"termination={res.termination.value}" in text and res.status == "stalled"
    assert f"solution_status={res.solution_status.value}" in text and "inaccurate" in text
    assert " status=" not in text  # no third word for the same fact
    assert "pairs: 3 strictly between bounds (F = 0)" in text
    assert text.endswith("z=[1, 2, 3])") and str(res) == text


def test_repr_leaves_out_a_point_of_more_than_20_unknowns() -> None:
    n = 21
    res = _result(SolutionStatus.SOLUTION)
    res.z = np.linspace(0.0, 1.0, n)
    assert "z=" not in repr(res)
    res.z = res.z[:20]
    assert repr(res).endswith(
        "z=[0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, "
        "0.7, 0.75, 0.8, 0.85, 0.9, 0.95])"
    )
