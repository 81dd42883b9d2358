"""Siconos ``mlcp_diodeBridge``: Lemke ends on a secondary ray, and rightly gives no certificate.

After the box reduction (the three free variables split, ``BoxLCPReduction``) the standard LCP
matrix is not copositive: :math:`x = e_0 + e_5` (free variable 0's positive copy and the
constrained variable paired with it) has :math:`x^\top M x = M_{05} + M_{50} + M_{00} + M_{55} < 0`.
So it is not copositive-plus, the ray proves nothing (Cottle-Pang-Stone 4.4.13 does not apply),
and the problem does have a solution (``newton`` finds it).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import mcpkit
from mcpkit.engines.box_lcp import BoxLCPReduction
from mcpkit.engines.lemke_pivoting import copositive_plus
from mcpkit.formats.io import load_mcp
from mcpkit.solving.result import Termination
from tests.conftest import SHARED_DATA

PATH = SHARED_DATA / "lcp-siconos" / "mlcp_diodeBridge.json"
pytestmark = [pytest.mark.solver, pytest.mark.skipif(not PATH.is_file(), reason="shared data not present")]


def test_reduced_matrix_is_not_copositive() -> None:
    d = json.loads(PATH.read_text())
    M = np.asarray(d["M"], dtype=float)
    lb = np.array([-np.inf if v is None else v for v in d["lb"]], dtype=float)
    ub = np.array([np.inf if v is None else v for v in d["ub"]], dtype=float)
    Ms = BoxLCPReduction(M, lb, ub).M_std
    x = np.zeros(Ms.shape[0])
    x[[0, 5]] = 1.0
    assert x @ Ms @ x < -0.5  # a nonnegative x with x'Mx < 0: not copositive
    assert copositive_plus(Ms) is None


def test_lemke_reports_the_ray_without_claiming_infeasibility() -> None:
    mcp = load_mcp(PATH)
    res = mcpkit.solve(mcp, method="lemke", tol=1e-8)
    assert not res.solved and res.termination is not Termination.LOCALLY_INFEASIBLE
    assert res.extra["lemke"] == "secondary ray"
    assert res.extra["certificate"]["copositive_plus"] is None
    assert "infeasibility_certificate" not in res.extra
    ok = mcpkit.solve(mcp, method="newton", tol=1e-8)
    assert ok.solved and ok.natural_residual <= 1e-8
