r"""Stewart–Trinkle step with a polyhedral friction cone: the mixed LCP of Berard et al. eq (15).

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

At block level (as eq 15 writes it) the direction wrenches are :math:`W_f = W_t C_d + W_o S_d`
with the constant :math:`C_d = I_{n_c}\otimes(\cos\phi_1, \dots, \cos\phi_{n_d})` and
:math:`S_d = I_{n_c}\otimes(\sin\phi_1, \dots, \sin\phi_{n_d})`, the surface velocities
:math:`u_f = C_d^T u_t + S_d^T u_o`, :math:`v_f = W_f^T\nu - u_f`, :math:`E = I_{n_c}\otimes
\mathbf 1_{n_d}` and :math:`U = \operatorname{diag}(\mu)`:

.. math::
    0 &= \hat M\nu - b - W_n\beta_n - W_f\beta_f \perp \nu\ \text{free}, \qquad
    0 \le \beta_n \perp W_n^T\nu + \psi_n/h \ge 0,\\
    0 &\le \beta_f \perp v_f + E\sigma \ge 0, \qquad
    0 \le \sigma \perp U\beta_n - E^T\beta_f \ge 0 .

**Verdict.** Every row is linear in :math:`(\nu, \beta, \sigma)`, so the natural residual cannot
hide the failure of the quadratic cone (a runaway :math:`\sigma` forces :math:`\beta_f \approx 0`
and leaves the cone row at :math:`\min(\sigma, \mu\beta_n) = \mu\beta_n`, which must be
:math:`\le \tau`); but that bound is absolute, in velocity units, not invariant to scaling. A
step is therefore judged on the same scale-invariant Coulomb residual as the NCP (:mod:`.step`,
"Physical verdict"), with the polygon :math:`P = \operatorname{conv}\{d_j\}`: the friction
impulse :math:`f_i = \sum_j \beta_{f,ij} d_j`, :math:`h_P(w) = \max_j d_j\cdot w`, and
:math:`\Pi_{K_i}` = :func:`~.step.project_polygon_cone` (3-D) or the disc projection (2-D,
where :math:`P = [-1, 1]`). At a solution of eq (15) it is zero: eqs (13)-(14) are the KKT
conditions of maximal dissipation over :math:`\{\beta_{f,i} \ge 0, \sum_j\beta_{f,ij} \le
\mu_i\beta_{n,i}\}`, whose image under :math:`\beta_{f,i} \mapsto f_i` is
:math:`\mu_i\beta_{n,i}P`.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import Any

import numpy as np
import scipy.sparse as sps

from mcpkit.errors import MCPInputError
from mcpkit.models.stewart_trinkle.bodies import Body
from mcpkit.models.stewart_trinkle.contact import Contact
from mcpkit.models.stewart_trinkle.step import StewartTrinkleStep, project_disc_cone, project_polygon_cone
from mcpkit.problems.blocks import const, diag, named


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

    def _direction_matrix(self, values: np.ndarray) -> sps.csr_array:
        r""":math:`I_{n_c} \otimes (c_1, \dots, c_{n_d})` with entries below :math:`10^{-15}` dropped."""
        row = np.where(np.abs(values) > 1e-15, values, 0.0)
        return sps.csr_array(sps.kron(sps.eye_array(self.nc), sps.csr_array(row[None, :])))

    def _declare(self) -> None:
        m, s, nc, nv, nd = self.mcp, self.sym, self.nc, self.nv, self.n_d
        m.declare_dim("n_d", nd)
        cd = ("n_c", "n_c*n_d")
        bn = m.add_variable_block("lam_n", nc, lb=0.0, latex=r"\beta_n", dim="n_c")
        bf = m.add_variable_block("lam_f", nc * nd, lb=0.0, latex=r"\beta_f", dim="n_c*n_d")
        sig = m.add_variable_block("sigma", nc, lb=0.0, latex=r"\sigma", dim="n_c")
        v = m.add_variable_block("v", nv, lb=-math.inf, latex=r"\nu", dim="n_v")

        C = const(self._direction_matrix(np.cos(self.angles)), "C_d", "C_d", cd)
        E = const(sps.kron(sps.eye_array(nc), np.ones((nd, 1))), "E", "E", ("n_c*n_d", "n_c"))
        if s.Wo is not None and s.uo is not None:
            S = const(self._direction_matrix(np.sin(self.angles)), "S_d", "S_d", cd)
            Wf = named("W_f", s.Wt @ C + s.Wo @ S, "W_f")
            uf = named("u_f", C.T @ s.ut + S.T @ s.uo, "u_f")
        else:
            Wf = named("W_f", s.Wt @ C, "W_f")
            uf = named("u_f", C.T @ s.ut, "u_f")
        vf = named("v_f", Wf.T @ v - uf, "v_f")
        U = named("U", diag(s.mu), "U")
        m.add_functions("v", s.Mhat @ v - s.b - s.Wn @ bn - Wf @ bf)
        m.add_functions("lam_n", s.Wn.T @ v + s.psi_h)
        m.add_functions("lam_f", vf + E @ sig)
        m.add_functions("sigma", U @ bn - E.T @ bf)

    # ------------------------------------------------------------------ physical verdict
    @cached_property
    def _directions(self) -> np.ndarray:
        r"""Rows :math:`d_j = (\cos\phi_j[, \sin\phi_j])`, shape ``(n_d, n_f)``."""
        cols = [np.cos(self.angles)] + ([np.sin(self.angles)] if self.three_d else [])
        return np.column_stack(cols)

    def _impulses(self, zb: dict[str, np.ndarray]) -> list[tuple[float, ...]]:
        r""":math:`r_i = (\beta_{n,i}, \sum_j \beta_{f,ij} d_j)`."""
        f = zb["lam_f"].reshape(self.nc, self.n_d) @ self._directions
        return list(zip(zb["lam_n"].tolist(), *(c.tolist() for c in f.T), strict=True))

    def _support(self, w: tuple[float, ...]) -> float:
        r""":math:`h_P(w) = \max_j d_j\cdot w`."""
        return max((self._directions @ w).tolist())

    def _project(self, x: tuple[float, ...], mu: float) -> tuple[float, ...]:
        """:func:`~.step.project_polygon_cone` in 3-D; the disc projection in 2-D (``P = [-1, 1]``)."""
        if self.three_d:
            return project_polygon_cone(x, mu, self.n_d)  # type: ignore[arg-type]
        return project_disc_cone(x, mu)
