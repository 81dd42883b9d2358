"""``benchmarks/mpcc_checks.py``: piece enumeration and the free-G reading, on problems solved by hand."""

from __future__ import annotations

from types import ModuleType

import casadi as ca
import numpy as np
import pytest

from mcpkit.mpcc import MPCC
from tests.conftest import load_benchmark

pytestmark = pytest.mark.solver


@pytest.fixture(scope="module")
def checks() -> ModuleType:
    return load_benchmark("mpcc_checks")


def test_pieces_find_the_global_minimum_of_an_lpec(checks: ModuleType) -> None:
    """min -x1 - 2 x2, x1 + x2 <= 1, 0 <= x1 ⊥ x2 >= 0 (G = x1, H = x2): the piece H = 0 gives
    -1 at (1, 0), the piece G = 0 gives -2 at (0, 1)."""
    x = ca.SX.sym("x", 2)
    prob = MPCC.from_casadi(x, x[0], x[1], f=-x[0] - 2 * x[1], g=x[0] + x[1], lbg=-np.inf, ubg=1.0)
    f, piece, count = checks.best_piece(prob)
    assert count == 2 and piece == (1,)
    assert f == pytest.approx(-2.0, abs=1e-6)


def test_a_finite_upper_bound_gives_a_third_piece(checks: ModuleType) -> None:
    """min -x1 - 0.1 x0, x0 in [0, 5], H = x1 in [0, 2] ⊥ G = 1 - x0 (G free): H = 0 needs x0 <= 1
    (f = -0.1), G = 0 gives x0 = 1 (f = -2.1), H = 2 needs x0 >= 1 (f = -2.5 at x0 = 5)."""
    x = ca.SX.sym("x", 2)
    prob = MPCC.from_casadi(
        x,
        1 - x[0],
        x[1],
        f=-x[1] - 0.1 * x[0],
        lbx=[0.0, -10.0],
        ubx=[5.0, 10.0],
        lbG=-np.inf,
        lbH=0.0,
        ubH=2.0,
    )
    assert checks.piece_choices(prob) == [(0, 1, 2)]
    f, piece, count = checks.best_piece(prob)
    assert count == 3 and piece == (2,)
    assert f == pytest.approx(-2.5, abs=1e-6)
    with pytest.raises(ValueError, match="pieces"):
        checks.best_piece(prob, max_pieces=2)


def test_the_free_g_reading_reaches_points_the_pair_forbids(checks: ModuleType) -> None:
    """min x0 + x1, x0 >= -1, pair H = x1 >= 0 ⊥ G = x0 with G free in the file: the box-MCP
    meaning (H = 0 => G >= 0) gives f = 0 at (0, 0); the reading "G free, |G H| <= t" reaches
    f = -1 at (-1, 0), with G = -1 where H = 0."""
    x = ca.SX.sym("x", 2)
    prob = MPCC.from_casadi(x, x[0], x[1], f=x[0] + x[1], lbx=[-1.0, -5.0], ubx=[5.0, 5.0], lbG=-np.inf)
    f, _, _ = checks.best_piece(prob)
    assert f == pytest.approx(0.0, abs=1e-6)
    path = checks.relaxation_path(prob, np.array([0.0, 0.0]))
    assert len(path) == 9
    t, f_end, _, g_min = path[-1]
    assert t == pytest.approx(1e-14)
    assert f_end == pytest.approx(-1.0, abs=1e-6) and g_min == pytest.approx(-1.0, abs=1e-6)
