"""Grid continuation without a solver: the grids, the control maps, the settings and the driver's
order of solves (with stand-in planners)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from mcpkit.errors import MCPInputError, ShapeError
from mcpkit.mpec.grid_continuation import (
    ControlMap,
    GridContinuation,
    as_continuation,
    coarse_steps,
    map_controls,
    solve_by_grid_continuation,
)


def test_coarse_steps_halve_down_to_min_steps() -> None:
    assert coarse_steps(1000, 200) == [125, 250, 500]
    assert coarse_steps(1600, 200) == [200, 400, 800]
    assert coarse_steps(401, 200) == [101, 201]
    assert coarse_steps(200, 200) == []
    assert coarse_steps(7, 1) == [1, 2, 4]


def test_linear_map_reproduces_a_linear_control_at_the_fine_midpoints() -> None:
    """u(t) = 3 - 2t sampled at the coarse midpoints maps to u at the fine midpoints (inside the
    first and last coarse midpoints; constant beyond them)."""
    nc, nf = 10, 40
    tc, tf = (np.arange(nc) + 0.5) / nc, (np.arange(nf) + 0.5) / nf
    U = np.column_stack([3 - 2 * tc, tc**0])
    out = map_controls(U, nf, ControlMap.LINEAR)
    assert out.shape == (nf, 2)
    inside = (tf >= tc[0]) & (tf <= tc[-1])
    np.testing.assert_allclose(out[inside, 0], 3 - 2 * tf[inside], rtol=0, atol=1e-12)
    np.testing.assert_allclose(out[~inside & (tf < 0.5), 0], U[0, 0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(out[~inside & (tf > 0.5), 0], U[-1, 0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(out[:, 1], 1.0, rtol=0, atol=1e-12)


def test_hold_and_first_maps() -> None:
    U = np.array([[1.0, -1.0], [2.0, -2.0], [3.0, -3.0]])
    np.testing.assert_array_equal(map_controls(U, 6, "hold")[:, 0], [1, 1, 2, 2, 3, 3])
    first = map_controls(U, 5, ControlMap.FIRST)
    np.testing.assert_array_equal(first[0], U[0])
    np.testing.assert_array_equal(first[1:], 0.0)
    # the same grid: every map but FIRST gives the controls back
    np.testing.assert_allclose(map_controls(U, 3, "linear"), U, rtol=0, atol=1e-12)
    np.testing.assert_allclose(map_controls(U, 3, "hold"), U, rtol=0, atol=0)


def test_bad_inputs_are_typed_errors() -> None:
    with pytest.raises(ShapeError):
        map_controls(np.zeros(4), 8)
    with pytest.raises(MCPInputError):
        GridContinuation(controls="cubic")
    with pytest.raises(MCPInputError):
        GridContinuation(sigma0=0.0)
    with pytest.raises(MCPInputError):
        GridContinuation(min_steps=0)
    with pytest.raises(MCPInputError):
        as_continuation("yes")  # type: ignore[arg-type]
    assert as_continuation(False) is None
    assert as_continuation(None) == GridContinuation()
    assert as_continuation(True) == GridContinuation()


class _Planner:
    """Stand-in planner: records the solves and 'solves' a grid unless told to fail it."""

    def __init__(self, fail_warm: set[int] | None = None, build_s: float = 0.0) -> None:
        self.calls: list[tuple[str, int, Any]] = []
        self.fail_warm = fail_warm or set()
        self.build_s = build_s  # the stand-in horizon's build time per step

    def _result(self, n: int, solved: bool, controls: np.ndarray) -> tuple[Any, Any]:
        res = SimpleNamespace(solved=solved, controls=controls, design=np.array([1.5]), t=np.arange(n + 1),
                              mpcc=SimpleNamespace(iterations=n), coarse=())  # fmt: skip
        return res, SimpleNamespace(N=n, build_time_s=self.build_s * n)

    def cold(self, n: int, left: float | None) -> tuple[Any, Any]:
        self.calls.append(("cold", n, left))
        return self._result(n, True, np.full((n, 1), float(n)))

    def warm(self, n: int, U: np.ndarray, th: np.ndarray, left: float | None, extra: dict[str, Any]) -> Any:
        self.calls.append(("warm", n, (U.shape, float(th[0]), extra["warm"])))
        return self._result(n, n not in self.fail_warm, U)


def test_driver_solves_coarse_to_fine_and_falls_back_cold(monkeypatch: pytest.MonkeyPatch) -> None:
    import mcpkit.mpec.grid_continuation as gc

    monkeypatch.setattr(gc, "replace", lambda res, coarse: SimpleNamespace(**{**vars(res), "coarse": coarse}))
    p = _Planner()
    res, hz = solve_by_grid_continuation(800, p.cold, p.warm, GridContinuation(min_steps=200))
    assert [(c[0], c[1]) for c in p.calls] == [("cold", 200), ("warm", 400), ("warm", 800)]
    assert p.calls[1][2] == ((400, 1), 1.5, True)  # mapped controls, the coarse design, warm
    assert hz.N == 800 and [len(c.t) - 1 for c in res.coarse] == [200, 400]
    np.testing.assert_allclose(res.controls, 200.0, rtol=0, atol=0)  # a constant maps to itself
    p = _Planner(fail_warm={800})
    res, hz = solve_by_grid_continuation(800, p.cold, p.warm, GridContinuation(min_steps=200))
    assert [(c[0], c[1]) for c in p.calls][-2:] == [("warm", 800), ("cold", 800)]
    assert res.solved and [len(c.t) - 1 for c in res.coarse] == [200, 400, 800]
    p = _Planner()
    res, hz = solve_by_grid_continuation(150, p.cold, p.warm, GridContinuation(min_steps=200))
    assert [(c[0], c[1]) for c in p.calls] == [("cold", 150)]


def test_driver_passes_what_is_left_of_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every solve gets the caller's limit less the time already spent (never more)."""
    import mcpkit.mpec.grid_continuation as gc

    monkeypatch.setattr(gc, "replace", lambda res, coarse: SimpleNamespace(**{**vars(res), "coarse": coarse}))
    p = _Planner()
    lefts: list[float] = []
    warm = p.warm

    def warm_left(n: int, U: np.ndarray, th: np.ndarray, left: float | None, extra: dict[str, Any]) -> Any:
        lefts.append(left)
        return warm(n, U, th, left, extra)

    solve_by_grid_continuation(800, p.cold, warm_left, GridContinuation(min_steps=200), time_limit=50.0)
    lefts.insert(0, p.calls[0][2])
    assert all(v is not None and 0 < v <= 50.0 for v in lefts)
    assert lefts == sorted(lefts, reverse=True)


def test_driver_skips_grids_whose_builds_do_not_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A grid is started only when its build and the finest grid's (estimated from the last build,
    linear in N) fit in what is left; the cold fallback only when the finest build fits again."""
    import mcpkit.mpec.grid_continuation as gc

    monkeypatch.setattr(gc, "replace", lambda res, coarse: SimpleNamespace(**{**vars(res), "coarse": coarse}))
    # 0.1 s per step: 400 + 800 steps (120 s) do not fit in 60 s, nor does the 800-step one again
    p, grids = _Planner(fail_warm={800}, build_s=0.1), GridContinuation(min_steps=200)
    res, hz = solve_by_grid_continuation(800, p.cold, p.warm, grids, time_limit=60.0)
    assert [(c[0], c[1]) for c in p.calls] == [("cold", 200), ("warm", 800)]  # no 400, no cold 800
    assert hz.N == 800 and not res.solved and [len(c.t) - 1 for c in res.coarse] == [200]
    p = _Planner(fail_warm={800}, build_s=1e-4)  # every build fits: all grids and the fallback
    solve_by_grid_continuation(800, p.cold, p.warm, GridContinuation(min_steps=200), time_limit=100.0)
    assert [(c[0], c[1]) for c in p.calls] == [("cold", 200), ("warm", 400), ("warm", 800), ("cold", 800)]
