"""Dense rows differentiated one at a time (:func:`mcpkit.problems.derivatives.row_jacobian`) and
the build estimate that follows them (:func:`mcpkit.homotopy.ipopt.estimated_build_seconds`).
No solver runs here."""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

from mcpkit.homotopy.ipopt import (
    BUILD_SECONDS_PER_UNIT,
    JACOBIAN_SECONDS_PER_UNIT,
    ROW_JACOBIAN_SECONDS_PER_NONZERO,
    estimated_build_seconds,
)
from mcpkit.problems.derivatives import DENSE_ROW, dense_rows, row_jacobian


def _rows(n: int = 60) -> tuple[ca.SX, ca.SX]:
    """``w = (x, y, s)`` and rows mixing sparse ones (a product, ``sin(x s)``) with dense ones
    (``s - (M x + q + y)``, a sum of exponentials), interleaved."""
    rng = np.random.default_rng(3)
    x, y, s = ca.SX.sym("x", n), ca.SX.sym("y", n), ca.SX.sym("s", n)
    H = ca.mtimes(ca.DM(rng.standard_normal((n, n))), x) + rng.standard_normal(n) + y
    g = ca.vertcat(x[0] * y[1], s - H, ca.sin(x * s), ca.sum1(ca.exp(x)), x[3] ** 2)
    return ca.vertcat(x, y, s), g


def test_dense_rows_are_found_by_their_nonzeros() -> None:
    w, g = _rows()
    dense, counts = dense_rows(g, w)
    assert counts.shape == (g.numel(),)
    np.testing.assert_array_equal(dense, [*range(1, 61), 121])  # the 60 rows of s - H, the sum
    assert (counts[dense] >= DENSE_ROW).all() and counts[0] == 2 and counts[-1] == 1


def test_row_jacobian_is_casadis_jacobian_row_for_row() -> None:
    """The same sparsity, the same expressions, in the rows' order."""
    w, g = _rows()
    ours, theirs = row_jacobian(g, w), ca.jacobian(g, w)
    assert ours.sparsity() == theirs.sparsity()
    assert ca.is_equal(ours, theirs, 3)
    point = np.random.default_rng(0).uniform(0.1, 1.0, w.numel())
    diff = ca.Function("diff", [w], [ours - theirs])(point)
    assert float(ca.norm_inf(diff)) == 0.0


def test_row_jacobian_without_dense_rows_and_of_mx() -> None:
    x = ca.SX.sym("x", 4)
    g = ca.vertcat(x[0] * x[1], ca.sin(x[2]))
    assert ca.is_equal(row_jacobian(g, x), ca.jacobian(g, x), 2)
    z = ca.MX.sym("z", 3)
    assert row_jacobian(ca.sin(z), z).sparsity() == ca.jacobian(ca.sin(z), z).sparsity()


def test_build_estimate_counts_dense_rows_by_their_nonzeros() -> None:
    """Dense rows: ROW_JACOBIAN_SECONDS_PER_NONZERO per nonzero; the other rows: a sweep of their
    own graph per direction."""
    w, g = _rows()
    p = ca.SX.sym("p", 0)
    dense, counts = dense_rows(g, w)
    without = estimated_build_seconds(w, p, g, derivatives=False)
    sparse = ca.vertcat(g[0], g[61:121], g[122])
    size = ca.Function("size", [w, p], [sparse]).n_instructions()
    expected = ROW_JACOBIAN_SECONDS_PER_NONZERO * counts[dense].sum() + JACOBIAN_SECONDS_PER_UNIT * size * 2
    assert estimated_build_seconds(w, p, g) == pytest.approx(without + expected)
    assert without == pytest.approx(BUILD_SECONDS_PER_UNIT * ca.Function("f", [w, p], [g]).n_instructions())


def test_wall_estimate_scales_with_the_share_of_a_core(monkeypatch: pytest.MonkeyPatch) -> None:
    """An estimate computed while the process waits five times as long as it computes is scaled
    by at least three (at most by MAX_SLOWDOWN); one computed instantly is left as it is."""
    import time

    from mcpkit.homotopy import ipopt

    def waiting(*args: object, **kwargs: object) -> float:
        c0 = time.process_time()
        while time.process_time() - c0 < 0.02:
            pass
        time.sleep(0.1)
        return 1.5

    x = ca.SX.sym("x", 2)
    monkeypatch.setattr(ipopt, "estimated_build_seconds", waiting)
    scaled = ipopt.wall_build_seconds(x, ca.SX.sym("p", 0), x[0] * x[1])
    assert 3 * 1.5 <= scaled <= ipopt.MAX_SLOWDOWN * 1.5
    monkeypatch.setattr(ipopt, "estimated_build_seconds", lambda *a, **k: 1.5)
    assert ipopt.wall_build_seconds(x, ca.SX.sym("p", 0), x[0] * x[1]) == 1.5
