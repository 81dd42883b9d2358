"""``MPCC.is_lpec`` and ``NLPTemplate.is_affine``: the one affinity test of the MPCC path
(``mcpkit.problems.mpcc.affine_in``), which picks HiGHS or IPOPT for a branch problem."""

from __future__ import annotations

import casadi as ca
import numpy as np

from mcpkit import MPCC
from mcpkit.homotopy.scholtes import Scholtes
from mcpkit.problems.mpcc import affine_in


def lpec(objective: str) -> MPCC:
    r""":math:`\min c^\top x` (or a quadratic) s.t. :math:`x_0 + x_1 \ge p`,
    :math:`0 \le x_0 \perp x_1 + p \ge 0`."""
    x = ca.SX.sym("x", 2)
    p = ca.SX.sym("p")
    f = x[0] + 2 * x[1] if objective == "linear" else ca.sumsqr(x)
    return MPCC.from_casadi(
        x, x[0], x[1] + p, f=f, g=x[0] + x[1] - p, lbg=[0.0], ubg=[np.inf], p=p, p0=[1.0], name="lpec"
    )


def test_affine_in_is_structural_and_holds_for_every_parameter() -> None:
    x, p = ca.SX.sym("x", 2), ca.SX.sym("p")
    assert affine_in(x, 3 * x[0] - p * x[1] + p**2, ca.SX(0, 1))  # p times x is affine in x
    assert not affine_in(x, x[0] * x[1])
    assert not affine_in(x, x[0], ca.sin(x[1]))
    assert affine_in(x)  # nothing to test


def test_is_lpec_reads_f_g_G_and_H() -> None:
    assert lpec("linear").is_lpec()
    assert not lpec("quadratic").is_lpec()
    x = ca.SX.sym("x", 2)
    bilinear_pair = MPCC.from_casadi(x, x[0], x[0] * x[1], f=x[0] + x[1], name="bilinear")
    assert not bilinear_pair.is_lpec()


def test_scholtes_template_is_not_an_lp_even_on_an_lpec() -> None:
    # the pair rows G H / sigma - 1 are bilinear: only the polish's branch problems are LPs
    assert not Scholtes().build(lpec("linear")).is_affine()
