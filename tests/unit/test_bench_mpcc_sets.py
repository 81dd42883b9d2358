"""The MPCC benchmark's comparison rules (``benchmarks/bench_mpcc_sets.py``), on made-up rows."""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any

import pytest

from tests.conftest import load_benchmark


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("bench_mpcc_sets")


def _row(name: str, f_mcpkit: float, f_peer: float | None, best: float = math.nan) -> dict[str, Any]:
    row: dict[str, Any] = {
        "problem": name,
        "best_known": best,
        "mcpkit": {"solved": True, "objective": f_mcpkit},
    }
    row["mpecss"] = {"solved": f_peer is not None, "objective": f_peer}
    return row


def test_worse_better_equal_by_the_relative_allowance(bench: ModuleType) -> None:
    rows = [
        _row("equal", 1.0 + 0.5e-4, 1.0),  # within 1e-4 * max(1, |f|)
        _row("worse", 1.0 + 2e-4, 1.0),
        _row("better", 100.0 - 0.02, 100.0),  # 2e-4 relative at |f| = 100
        _row("peer unsolved", 5.0, None),
    ]
    out = bench.compare_objectives(rows)
    assert out["worse"] == ["worse"] and out["better"] == ["better"] and out["n_equal"] == 1
    assert out["both_solved"] == 3
    assert out["not_worse_fraction"] == pytest.approx(2 / 3)


def test_worse_rows_where_the_peer_lies_below_the_best_known_value(bench: ModuleType) -> None:
    rows = [
        # mcpkit at the collection's value, the peer below it: named
        _row("below", 1.08514, 1.0846, best=1.08514),
        # mcpkit above the collection's value too: a real shortfall, not named
        _row("short", 1.2, 1.0846, best=1.08514),
        # no listed value: not named
        _row("unlisted", 1.08514, 1.0846),
    ]
    out = bench.compare_objectives(rows)
    assert out["worse"] == ["below", "short", "unlisted"]
    assert out["worse_peer_below_best_known"] == ["below"]


def test_a_maximum_listed_by_its_value_is_counted_apart(bench: ModuleType) -> None:
    # the file minimises -f; the collection lists max f = 18.4
    assert bench._listed_as_maximum(-18.4, 18.4)
    assert not bench._listed_as_maximum(18.4, 18.4)
    assert not bench._listed_as_maximum(-3.0, 18.4)
    rows = [
        _row("bilin", -18.4, -18.4, best=18.4),
        _row("short", 0.0, 5.0, best=-55.0),
        _row("eq", 2.0, 2.0, 2.0),
    ]
    out = bench.compare_best_known(rows)
    assert out == {"compared": 3, "worse": ["short"], "better": [], "sign": ["bilin"], "not_worse": 2}
    # a peer below a value listed as a maximum is not taken as lying below the best known
    assert (
        bench.compare_objectives([_row("bilin", -18.0, -18.4, best=18.4)])["worse_peer_below_best_known"]
        == []
    )


def test_best_known_values_skip_infeasible_and_unknown_rows(bench: ModuleType) -> None:
    path = bench.BEST_KNOWN["macmpec"]
    if not path.exists():
        pytest.skip(f"{path} not present")
    best = bench.load_best_known("macmpec")
    assert best["pack-rig2p-16"] == pytest.approx(1.08514)
    assert "pack-rig2-16" not in best  # listed as "(I)"
    assert "pack-rig3-32" not in best  # listed as "tba"
    assert bench.load_best_known("mpeclib") == {}


def test_wrong_sign_pairs_count_only_a_forbidden_sign_at_a_bound(bench: ModuleType) -> None:
    from types import SimpleNamespace

    import numpy as np

    prob = SimpleNamespace(
        lbH=np.array([0.0, 0.0, 0.0, -1.0, -1.0]), ubH=np.array([np.inf, np.inf, np.inf, 2.0, 2.0])
    )
    G = np.array([-1e-3, 1e-3, -1e-3, 0.5, -0.5])
    H = np.array([0.0, 0.0, 0.4, 2.0, 2.0])
    # pair 0: H at 0 with G < 0 (forbidden); 1: allowed; 2: H inside (a residual, not a sign);
    # 3: H at its upper bound with G > 0 (forbidden); 4: allowed
    assert bench.wrong_sign_pairs(prob, G, H) == 2
