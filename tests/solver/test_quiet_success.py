"""A solved MPCC prints nothing: IPOPT's polish met NaN objective values on the way (CasADi printed
``gnash15_polish:nlp_f failed: NaN detected`` to stderr from C++) and recovered; the evaluation
warnings are shown with ``verbose=True`` only."""

from __future__ import annotations

import pytest

import mcpkit
from mcpkit.mpcc import load_mpcc_json
from tests.conftest import SHARED_DATA

GNASH15 = SHARED_DATA / "macmpec-dev" / "gnash15.nl.json"


@pytest.mark.solver
@pytest.mark.skipif(not GNASH15.is_file(), reason="macmpec-dev set not present")
def test_solved_mpcc_prints_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    res = mcpkit.solve(load_mpcc_json(GNASH15), method="scholtes", backend="casadi", tol=1e-6)
    out, err = capfd.readouterr()
    assert res.solved and res.comp_residual <= 1e-6 and res.constraint_violation <= 1e-6
    assert err == ""
