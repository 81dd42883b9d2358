"""The compiled warm step's symbolic map equals the engine's Fischer-Burmeister map (no solver)."""

from __future__ import annotations

import math

import casadi as ca
import numpy as np

from mcpkit.engines.newton import BoxFischerBurmeister
from mcpkit.engines.newton_warm import CompiledWarmStep, fb_map


def test_fb_map_matches_the_engine_on_every_bound_kind() -> None:
    rng = np.random.default_rng(1)
    lb = np.array([0.0, -math.inf, -1.0, -math.inf, 2.0, 0.5])
    ub = np.array([math.inf, 3.0, 1.0, math.inf, 2.0, 4.0])
    z = ca.SX.sym("z", lb.size)
    F = ca.SX.sym("F", lb.size)
    f = ca.Function("phi", [z, F], [fb_map(z, F, lb, ub)])
    ref = BoxFischerBurmeister(lb, ub)
    for _ in range(50):
        zv, Fv = rng.normal(scale=2.0, size=lb.size), rng.normal(scale=2.0, size=lb.size)
        np.testing.assert_allclose(
            np.asarray(f(zv, Fv)).ravel(), ref.residual(zv, Fv), rtol=1e-12, atol=1e-12
        )


def test_fast_path_is_built_only_for_small_sx_problems() -> None:
    assert CompiledWarmStep.applies(ca.SX.sym("z", 5), 5)
    assert not CompiledWarmStep.applies(ca.MX.sym("z", 5), 5)
    assert not CompiledWarmStep.applies(ca.SX.sym("z", 500), 500)
