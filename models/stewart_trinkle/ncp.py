r"""Stewart–Trinkle step with the quadratic friction cone: the NCP of Berard et al. eq (9).

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

**Verdict.** The friction rows are quadratic in :math:`\beta`, so their natural residual alone
does not bound the Coulomb law when :math:`\mu\beta_n` is small: at :math:`\mu\beta_n =
3.9\cdot10^{-5}` a point with :math:`\sigma = 10^5` and :math:`\beta_t \approx 0` (no friction
on a contact sliding at 4.9) meets :math:`\tau = 10^{-8}`. A step is therefore also judged on
the per-contact Coulomb residual of :mod:`.step` ("Physical verdict") with the disc
:math:`P = \{\|p\|_2 \le 1\}`: :math:`f_i = (\beta_{t,i}, \beta_{o,i})`,
:math:`h_P(w) = \|w\|_2`, :math:`\Pi_{K_i}` = :func:`~.step.project_disc_cone`, which is the
per-contact term of the Siconos error with De Saxcé's velocity.
"""

from __future__ import annotations

import math

import numpy as np

from mcpkit.models.stewart_trinkle.step import SCALE_FLOOR, StewartTrinkleStep, project_disc_cone
from mcpkit.problems.blocks import diag, named


class NCPStep(StewartTrinkleStep):
    r"""The eq (9) step as a ``StepModel`` for :func:`mcpkit.models.stepping.simulate`.

    Blocks: ``v`` (nv, free), ``lam_n`` (nc, >= 0), ``lam_t`` (nc, free), ``lam_o`` (nc, free,
    3-D only), ``sigma`` (nc, >= 0). Declared at block level with the definitions
    :math:`U = \operatorname{diag}(\mu)`, :math:`v_t = W_t^T\nu - u_t`, :math:`v_o = W_o^T\nu - u_o`
    (module docstring), so ``mcp.to_text()`` prints eq (9) one block per line.
    """

    formulation = "ncp"

    def _declare(self) -> None:
        m, s, nc, nv = self.mcp, self.sym, self.nc, self.nv
        free = -math.inf
        bn = m.add_variable_block("lam_n", nc, lb=0.0, latex=r"\beta_n", dim="n_c")
        bt = m.add_variable_block("lam_t", nc, lb=free, latex=r"\beta_t", dim="n_c")
        bo = m.add_variable_block("lam_o", nc, lb=free, latex=r"\beta_o", dim="n_c") if self.three_d else None
        sig = m.add_variable_block("sigma", nc, lb=0.0, latex=r"\sigma", dim="n_c")
        v = m.add_variable_block("v", nv, lb=free, latex=r"\nu", dim="n_v")

        U = named("U", diag(s.mu), latex="U")
        Ubn = U @ bn  # one node, evaluated once by every lowering
        vt = named("v_t", s.Wt.T @ v - s.ut, latex="v_t")
        eom = s.Mhat @ v - s.b - s.Wn @ bn - s.Wt @ bt
        friction = Ubn**2 - bt**2
        if bo is not None and s.Wo is not None and s.uo is not None:
            vo = named("v_o", s.Wo.T @ v - s.uo, latex="v_o")
            eom = eom - s.Wo @ bo
            friction = friction - bo**2
        m.add_functions("v", eom)
        m.add_functions("lam_n", s.Wn.T @ v + s.psi_h)
        m.add_functions("lam_t", Ubn * vt + bt * sig)
        if bo is not None:
            m.add_functions("lam_o", Ubn * vo + bo * sig)
        m.add_functions("sigma", friction)

    # ------------------------------------------------------------------ physical verdict
    def _impulses(self, zb: dict[str, np.ndarray]) -> list[tuple[float, ...]]:
        r""":math:`r_i = (\beta_{n,i}, \beta_{t,i}[, \beta_{o,i}])`."""
        cols = [zb["lam_n"], zb["lam_t"]] + ([zb["lam_o"]] if self.three_d else [])
        return list(zip(*(c.tolist() for c in cols), strict=True))

    def _support(self, w: tuple[float, ...]) -> float:
        r""":math:`h_P(w) = \|w\|_2` (the unit disc)."""
        return math.hypot(*w)

    def _project(self, x: tuple[float, ...], mu: float) -> tuple[float, ...]:
        """:func:`~.step.project_disc_cone`."""
        return project_disc_cone(x, mu)

    def friction_residual_values(self, P: np.ndarray, Z: np.ndarray) -> np.ndarray:
        r""":math:`\max_i \hat e_i` of many step points (rows of ``P`` and ``Z``), the formulas of
        :meth:`~.step.StewartTrinkleStep.friction_residual` on whole arrays: :math:`\nu_0 =
        \hat M^{-1}b`, :math:`\hat u_i = (u_{n,i} + \mu_i\|u_{f,i}\|, u_{f,i})` and
        :func:`~.step.project_disc_cone` (inside, polar cone, else
        :math:`(c, \mu c\,b/\|b\|)`, :math:`c = (a + \mu\|b\|)/(1 + \mu^2)`). NaN where any
        contact's value is not finite."""
        P = np.asarray(P, dtype=float)
        Z = np.asarray(Z, dtype=float)
        m, nv, nc = P.shape[0], self.nv, self.nc
        zs, ps = self._layout
        pb = {k: P[:, sl] for k, sl in ps.items()}
        v = Z[:, zs["v"]]
        Mhat = pb["Mhat"].reshape(m, nv, nv)
        v0 = np.linalg.solve(Mhat, pb["b"][:, :, None])[:, :, 0]

        def rows(W: str, at: np.ndarray) -> np.ndarray:  # W_i^T x per contact, (m, nc)
            return np.einsum("mvc,mv->mc", pb[W].reshape(m, nv, nc), at)

        tang = [(rows(W, v) - pb[us], rows(W, v0) - pb[us]) for W, us in self._tangent_blocks]
        uf = np.stack([t[0] for t in tang], axis=-1)
        w = np.concatenate([rows("Wn", v0)[..., None], np.stack([t[1] for t in tang], axis=-1)], axis=-1)
        r = np.stack(
            [Z[:, zs["lam_n"]], Z[:, zs["lam_t"]]] + ([Z[:, zs["lam_o"]]] if self.three_d else []), -1
        )
        mu = pb["mu"]
        nuf = np.sqrt(np.sum(uf * uf, axis=-1))
        u_hat = np.concatenate([(rows("Wn", v) + pb["psi_h"] + mu * nuf)[..., None], uf], axis=-1)
        x = r - u_hat
        a, b = x[..., 0], x[..., 1:]
        nb = np.sqrt(np.sum(b * b, axis=-1))
        with np.errstate(invalid="ignore", divide="ignore"):
            c = (a + mu * nb) / (1.0 + mu * mu)
            edge = np.concatenate([c[..., None], (mu * c / nb)[..., None] * b], axis=-1)
        proj = np.where((nb <= mu * a)[..., None], x, np.where((mu * nb <= -a)[..., None], 0.0, edge))
        e = np.sqrt(np.sum((r - proj) ** 2, axis=-1))
        scale = np.maximum(np.sqrt(np.sum(r * r, axis=-1)), np.sqrt(np.sum(w * w, axis=-1))).max(axis=-1)
        rel = e / np.maximum(scale, SCALE_FLOOR)[:, None]
        return np.where(np.isfinite(rel).all(axis=-1), rel.max(axis=-1), np.nan)
