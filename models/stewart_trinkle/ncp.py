r"""Stewart–Trinkle step with the quadratic friction cone: the NCP of seed 004 eq (9).

Unknowns (impulses scaled to velocity units, see :mod:`.step`): :math:`\nu^{\ell+1}` (free),
:math:`\beta_n \ge 0`, :math:`\beta_t, \beta_o` (free), sliding speed :math:`\sigma \ge 0`.

.. math::
    0 &= \hat M\nu - b - W_n\beta_n - W_t\beta_t - W_o\beta_o
        &&\perp \nu \ \text{free}\\
    0 &\le \beta_n \perp \psi/h + W_n^T\nu \ge 0\\
    0 &= \mu\beta_n\,(W_t^T\nu - u_t) + \beta_t\,\sigma &&\perp \beta_t\ \text{free}\\
    0 &= \mu\beta_n\,(W_o^T\nu - u_o) + \beta_o\,\sigma &&\perp \beta_o\ \text{free}\\
    0 &\le \sigma \perp (\mu\beta_n)^2 - \beta_t^2 - \beta_o^2 \ge 0

(all rows per contact, Hadamard products as in eq 9). While sliding,
:math:`\sigma = \|v_f\|` and :math:`\beta_f = -\mu\beta_n v_f/\|v_f\|`; while sticking
:math:`\sigma = 0` forces :math:`v_f = 0` whenever :math:`\beta_n > 0`. Wrenches are evaluated at
:math:`\ell` (the Stewart–Trinkle choice of §2.2.1); for a particle this is exact.
For planar bodies the :math:`o` rows are absent.
"""

from __future__ import annotations

import sympy as sp

from mcpkit.models.stewart_trinkle.step import StewartTrinkleStep


class NCPStep(StewartTrinkleStep):
    """The eq (9) step as a ``StepModel`` for :func:`mcpkit.models.stepping.simulate`.

    Blocks: ``v`` (nv, free), ``lam_n`` (nc, >= 0), ``lam_t`` (nc, free), ``lam_o`` (nc, free,
    3-D only), ``sigma`` (nc, >= 0). See the module docstring for the rows.
    """

    formulation = "ncp"

    def _declare(self) -> None:
        m, s, nc, nv = self.mcp, self.sym, self.nc, self.nv
        bn = m.add_variables("lam_n", nc, lb=0.0, latex=r"\beta_n")
        bt = m.add_variables("lam_t", nc, lb=-float("inf"), latex=r"\beta_t")
        bo = m.add_variables("lam_o", nc, lb=-float("inf"), latex=r"\beta_o") if self.three_d else None
        sig = m.add_variables("sigma", nc, lb=0.0, latex=r"\sigma")

        def eom(v: sp.Matrix) -> sp.Matrix:
            f = s.Mhat * v - s.b - s.Wn.T * bn - s.Wt.T * bt
            if bo is not None:
                f -= s.Wo.T * bo
            return f

        v = m.add_equations("v", nv, eom)
        m.add_functions("lam_n", s.psi_h + s.Wn * v)
        vt = s.Wt * v - s.ut
        m.add_functions("lam_t", [s.mu[i] * bn[i] * vt[i] + bt[i] * sig[i] for i in range(nc)])
        cone = [(s.mu[i] * bn[i]) ** 2 - bt[i] ** 2 for i in range(nc)]
        if bo is not None:
            vo = s.Wo * v - s.uo
            m.add_functions("lam_o", [s.mu[i] * bn[i] * vo[i] + bo[i] * sig[i] for i in range(nc)])
            cone = [cone[i] - bo[i] ** 2 for i in range(nc)]
        m.add_functions("sigma", cone)
