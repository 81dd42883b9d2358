r"""Stewart–Trinkle step with a polyhedral friction cone: the mixed LCP of seed 004 eq (15).

With :math:`n_d` unit directions :math:`d_j = \cos\phi_j\hat t + \sin\phi_j\hat o`,
:math:`\phi_j = 2\pi j/n_d` (a regular polygon; in 2-D :math:`n_d = 2`, :math:`\pm\hat t`),
the friction wrenches are :math:`D_{ij} = \cos\phi_j W_{it} + \sin\phi_j W_{io}` and, with
:math:`\beta_f \ge 0` and :math:`\sigma \ge 0`,

.. math::
    0 &= \hat M\nu - b - W_n\beta_n - \textstyle\sum_j D_j\beta_{fj} &&\perp\nu\ \text{free}\\
    0 &\le \beta_n \perp \psi/h + W_n^T\nu \ge 0\\
    0 &\le \beta_{f,ij} \perp D_{ij}^T\nu - (\cos\phi_j u_{it} + \sin\phi_j u_{io}) + \sigma_i \ge 0
        &&\text{(eq 13)}\\
    0 &\le \sigma_i \perp \mu_i\beta_{n,i} - \textstyle\sum_j\beta_{f,ij} \ge 0 &&\text{(eq 14)}

All rows are affine in the unknowns (bilinear only in parameter x unknown), so every step is a
mixed LCP whose data change with the state.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import sympy as sp

from mcpkit.errors import MCPInputError
from mcpkit.models.stewart_trinkle.bodies import Body
from mcpkit.models.stewart_trinkle.contact import Contact
from mcpkit.models.stewart_trinkle.step import StewartTrinkleStep


def friction_angles(n_d: int) -> np.ndarray:
    r"""Angles :math:`\phi_j = 2\pi j / n_d`, :math:`j = 0..n_d-1`, of the regular polygon."""
    return 2 * np.pi * np.arange(n_d) / n_d


class LCPStep(StewartTrinkleStep):
    """The eq (15) step as a ``StepModel``.

    Parameters
    ----------
    body, contacts, h
        As for :class:`~.step.StewartTrinkleStep`.
    n_d
        Number of friction directions per contact (>= 3 in 3-D; exactly 2 in 2-D).
    input_matrix
        Optional controls as a generalised force (see :class:`~.step.StewartTrinkleStep`).

    Blocks: ``v`` (nv, free), ``lam_n`` (nc), ``lam_f`` (nc*n_d, contact-major), ``sigma`` (nc).
    """

    formulation = "lcp"

    def __init__(
        self, body: Body, contacts: list[Contact], h: float, n_d: int = 8, *, input_matrix: Any = None
    ) -> None:
        if not isinstance(n_d, (int, np.integer)) or isinstance(n_d, bool):
            raise MCPInputError(f"n_d must be an integer, got {n_d!r}")
        if body.dim == 2 and n_d != 2:
            raise MCPInputError(f"a planar body has friction directions +t and -t: n_d must be 2, got {n_d}")
        if body.dim == 3 and n_d < 3:
            raise MCPInputError(f"n_d must be >= 3 to positively span the tangent plane, got {n_d}")
        self.n_d = int(n_d)
        self.angles = friction_angles(self.n_d)
        super().__init__(body, contacts, h, input_matrix=input_matrix)

    def _declare(self) -> None:
        m, s, nc, nv, nd = self.mcp, self.sym, self.nc, self.nv, self.n_d
        bn = m.add_variables("lam_n", nc, lb=0.0, latex=r"\beta_n")
        bf = m.add_variables("lam_f", nc * nd, lb=0.0, latex=r"\beta_f")
        sig = m.add_variables("sigma", nc, lb=0.0, latex=r"\sigma")
        cs = [sp.Float(math.cos(a)) if abs(math.cos(a)) > 1e-15 else sp.Integer(0) for a in self.angles]
        sn = [sp.Float(math.sin(a)) if abs(math.sin(a)) > 1e-15 else sp.Integer(0) for a in self.angles]

        def D(i: int, j: int) -> sp.Matrix:
            row = cs[j] * s.Wt[i, :]
            if s.Wo is not None:
                row = row + sn[j] * s.Wo[i, :]
            return row

        def ud(i: int, j: int) -> sp.Expr:
            e = cs[j] * s.ut[i]
            if s.uo is not None:
                e = e + sn[j] * s.uo[i]
            return e

        def eom(v: sp.Matrix) -> sp.Matrix:
            f = s.Mhat * v - s.b - s.Wn.T * bn
            for i in range(nc):
                for j in range(nd):
                    f -= D(i, j).T * bf[i * nd + j]
            return f

        v = m.add_equations("v", nv, eom)
        m.add_functions("lam_n", s.psi_h + s.Wn * v)
        rows = []
        for i in range(nc):
            for j in range(nd):
                rows.append((D(i, j) * v)[0, 0] - ud(i, j) + sig[i])
        m.add_functions("lam_f", rows)
        m.add_functions(
            "sigma", [s.mu[i] * bn[i] - sum(bf[i * nd + j] for j in range(nd)) for i in range(nc)]
        )
