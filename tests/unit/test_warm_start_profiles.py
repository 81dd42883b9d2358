"""The IPOPT settings of the homotopy's warm subproblems by profile (``SolveOptions.warm_start``).

No IPOPT runs: CasADi's ``nlpsol`` is replaced by a recorder, so the tests see the options each
inner solver would be built with.
"""

from __future__ import annotations

from typing import Any

import casadi as ca
import pytest

from mcpkit.errors import UnknownOptionError
from mcpkit.homotopy import ipopt as ipopt_module
from mcpkit.homotopy.ipopt import (
    WARM_START_OPTIONS,
    WARM_START_PROFILES,
    CasadiInner,
    ipopt_option_dict,
    warm_start_options,
)
from mcpkit.homotopy.loop import HomotopySolver, inner_settings
from mcpkit.homotopy.reformulation import reformulation_for
from mcpkit.mpcc import MPCC
from mcpkit.solving.options import SolveOptions, WarmStart


def _toy() -> MPCC:
    x = ca.SX.sym("x", 2)
    return MPCC.from_casadi(
        x, x[0], x[1], f=(x[0] - 2) ** 2 + (x[1] - 1) ** 2, g=x[0] + x[1], lbg=1.0, ubg=1.0
    )


def test_standard_is_the_default_and_the_old_settings() -> None:
    opts = ipopt_option_dict(1e-7, 100, warm=True)
    assert opts["mu_init"] == 1e-5 and opts["warm_start_init_point"] == "yes"
    assert "mu_strategy" not in opts  # IPOPT's monotone update
    assert WARM_START_OPTIONS == WARM_START_PROFILES[WarmStart.STANDARD]
    assert SolveOptions().warm_start is WarmStart.STANDARD


def test_adaptive_profile_sets_the_adaptive_barrier_only_when_warm() -> None:
    warm = ipopt_option_dict(1e-7, 100, warm=True, warm_start="adaptive")
    assert warm["mu_strategy"] == "adaptive" and warm["mu_oracle"] == "quality-function"
    assert warm["mu_init"] == 1e-4 and warm["warm_start_bound_push"] == 1e-9
    cold = ipopt_option_dict(1e-7, 100, warm=False, warm_start="adaptive")
    assert "mu_strategy" not in cold and "warm_start_init_point" not in cold


def test_user_options_win_over_the_profile() -> None:
    opts = ipopt_option_dict(1e-7, 100, True, False, {"ipopt.mu_init": 0.1}, WarmStart.ADAPTIVE)
    assert opts["mu_init"] == 0.1 and opts["mu_strategy"] == "adaptive"


def test_profiles_are_copies() -> None:
    warm_start_options("adaptive")["mu_init"] = 1.0
    assert WARM_START_PROFILES[WarmStart.ADAPTIVE]["mu_init"] == 1e-4


def test_solve_options_parse_the_profile() -> None:
    assert SolveOptions(warm_start="Adaptive").warm_start is WarmStart.ADAPTIVE
    with pytest.raises(UnknownOptionError, match="adaptive"):
        SolveOptions(warm_start="adaptiv")


@pytest.mark.parametrize("profile", ["standard", "adaptive"])
def test_the_warm_solver_is_built_with_the_profile(monkeypatch: pytest.MonkeyPatch, profile: str) -> None:
    built: dict[str, dict[str, Any]] = {}

    def record(name: str, plugin: str, nlp: dict[str, Any], opts: dict[str, Any]) -> object:
        built[name] = opts
        return object()

    monkeypatch.setattr(ipopt_module.ca, "nlpsol", record)
    options = SolveOptions(warm_start=profile, tol=1e-6)
    assert inner_settings(options, 1e-7, True, "n").warm_start is WarmStart(profile)
    HomotopySolver(_toy(), reformulation_for("scholtes"), options, CasadiInner()).build()
    warm = next(v for k, v in built.items() if k.endswith("_warm"))
    cold = next(v for k, v in built.items() if k.endswith("scholtes"))
    expected = warm_start_options(profile)
    assert {k: warm[f"ipopt.{k}"] for k in expected} == expected
    assert warm.get("ipopt.mu_strategy") == ("adaptive" if profile == "adaptive" else None)
    assert "ipopt.mu_strategy" not in cold and "ipopt.warm_start_init_point" not in cold
