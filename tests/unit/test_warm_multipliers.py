"""Warm-started multipliers of the Scholtes rows scaled with sigma (``scale_warm_multipliers``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mcpkit.errors import MCPInputError
from mcpkit.homotopy.fischer_burmeister import FischerBurmeister
from mcpkit.homotopy.scholtes import Scholtes
from mcpkit.solving.options import SolveOptions


def test_scholtes_keeps_the_multiplier_of_the_product() -> None:
    r"""Row :math:`G H/\sigma - 1` with multiplier :math:`\lambda` is the product's row with
    multiplier :math:`\lambda/\sigma`; keeping that from sigma = 1e-2 to 1e-3 multiplies the pair
    rows' multipliers (the last ``n_pairs``) by 0.1 and leaves the other rows alone."""
    lam = np.array([1.0, -2.0, 3.0, 4.0, -5.0])
    on = SolveOptions(scale_warm_multipliers=True)
    for equality in (False, True):
        out = Scholtes(equality).warm_lam_g(lam, 2, 1e-2, 1e-3, on)
        np.testing.assert_allclose(out, [1.0, -2.0, 3.0, 0.4, -0.5], rtol=1e-15, atol=0)
        assert out[3] / 1e-3 == pytest.approx(lam[3] / 1e-2, rel=1e-15)  # the product's multiplier
    np.testing.assert_array_equal(lam, [1.0, -2.0, 3.0, 4.0, -5.0])  # the input is not changed


def test_scaling_is_off_by_default_and_skips_given_multipliers() -> None:
    """Off by default (the engine's default warm start is unchanged); multipliers the caller gave
    (no parameter known, NaN) and other reformulations are passed through as they are."""
    lam = np.array([1.0, 2.0, 3.0])
    assert Scholtes().warm_lam_g(lam, 2, 1e-2, 1e-3, SolveOptions()) is lam
    on = SolveOptions(scale_warm_multipliers=True)
    assert Scholtes().warm_lam_g(lam, 2, math.nan, 1e-3, on) is lam
    assert Scholtes().warm_lam_g(None, 2, 1e-2, 1e-3, on) is None
    assert Scholtes().warm_lam_g(lam, 0, 1e-2, 1e-3, on) is lam
    assert FischerBurmeister().warm_lam_g(lam, 2, 1e-2, 1e-3, on) is lam


def test_scale_warm_multipliers_must_be_a_bool() -> None:
    with pytest.raises(MCPInputError, match="scale_warm_multipliers"):
        SolveOptions(scale_warm_multipliers="yes")  # type: ignore[arg-type]
