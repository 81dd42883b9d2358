r"""FCLIB local problems as square nonsmooth equations :math:`\Phi(r) = 0` (free MCPs) per contact.

For an FCLIB local problem (:mod:`mcpkit.models.fclib`) with velocities :math:`u = Wr + q`, each
contact :math:`i` contributes three equations :math:`\phi(r_i, u_i) = 0` whose zeros are exactly
the contact's solutions of Coulomb's law with Signorini's condition (separation :math:`r_i = 0,
u_{n,i} \ge 0`; sticking :math:`r_i \in K_i, u_i = 0`; sliding :math:`u_{n,i} = 0,
\|r_{t,i}\| = \mu_i r_{n,i}, r_{t,i} = -\lambda u_{t,i}`, :math:`\lambda \ge 0`). That is the
solution set of FCLIB's De Saxcé formulation :math:`K_i^* \ni u_i + \mu_i\|u_{t,i}\|e_n \perp
r_i \in K_i`: :math:`\hat u \in K^* = \{\mu\|v_t\| \le v_n\}` reduces to :math:`u_n \ge 0` when
:math:`r = 0`, to :math:`\hat u = 0`, i.e. :math:`u = 0`, for :math:`r` inside :math:`K`, and for
:math:`r` on the boundary of :math:`K` to :math:`\hat u` on the ray of :math:`K^*` orthogonal to
it, i.e. :math:`u_n = 0` and :math:`u_t` opposite to :math:`r_t`. Two laws are provided:

**Alart–Curnier** (Alart & Curnier 1991; Siconos ``fc3d_AlartCurnier``), with
:math:`\rho_n, \rho_t > 0`:

.. math::
    \phi_n = r_n - \max(0,\, r_n - \rho_n u_n),\qquad
    \phi_t = r_t - \Pi_{D(\mu \max(0,\, r_n - \rho_n u_n))}(r_t - \rho_t u_t),

:math:`D(R)` the disk of radius :math:`R` and :math:`\Pi_{D(R)}(x) = x\,R/\max(R, \|x\|)`. It is
posed on the plain velocity :math:`u`: Coulomb's law and De Saxcé's formulation have the same
solutions, while a De Saxcé-modified normal row :math:`r_n - \max(0, r_n - \rho_n(u_n +
\mu\|u_t\|))` alone would accept spurious separations with :math:`-\mu\|u_t\| \le u_n < 0`.

**FB-SOC** (Fischer–Burmeister for the second-order cone; Fukushima, Luo & Tseng 2002) on
De Saxcé's velocity :math:`v = u + \mu\|u_t\| e_n`: with the Lorentz cone
:math:`L = \{x_0 \ge \|x_{1:2}\|\}`, :math:`x = (\mu r_n, r_t) \in L \iff r \in K` and
:math:`y = \rho(v_n, \mu v_t) \in L \iff v \in K^*`, :math:`x^\top y = \rho\mu\, r^\top v`, and

.. math::
    \phi = x + y - (x\circ x + y\circ y)^{1/2}

in the Jordan algebra of :math:`L` (:math:`a\circ b = (a^\top b,\ a_0 b_{1:2} + b_0 a_{1:2})`,
square root by the spectral decomposition). :math:`\phi = 0 \iff x \in L, y \in L, x^\top y = 0`.
It needs :math:`\mu > 0` (for :math:`\mu = 0` the cone is a ray, not a Lorentz cone).

Both laws are written once as block expressions (:func:`law_blocks`, printed by
:func:`mcpkit.models.fclib.fclib_mcp`) and evaluated on one contact's symbols into CasADi SX
functions of one contact; CasADi differentiates them (an element of the
generalised Jacobian: the derivative of the branch ``fmax`` selects) and ``Function.map``
evaluates them over all contacts at once, so the system's Jacobian is assembled as
:math:`J = A + B\,W` from the per-contact :math:`3\times 3` blocks :math:`A = \partial\phi/\partial
r_i`, :math:`B = \partial\phi/\partial u_i` (as Siconos does) instead of differentiating a graph
that holds :math:`W`. Square roots and divisions are guarded by :data:`TINY` so that values and
derivatives stay finite at :math:`u_t = 0` or :math:`r = u = 0`, without changing any value by
more than :math:`\sqrt{\mathtt{TINY}} = 10^{-150}`.

:class:`ContactEquations` is the whole scaled system :math:`F(\hat r) = 0` in the form
:func:`mcpkit.solve_mcp` takes (callables ``F``, ``J`` and the Jacobian structure), with
unknowns :math:`r = s_r \hat r` and rows weighted so that :math:`\|F\|` tracks the Siconos error
(class docstring).

References
----------
* P. Alart, A. Curnier, "A mixed formulation for frictional contact problems prone to Newton like
  solution methods", Comput. Methods Appl. Mech. Engrg. 92 (1991) 353-375.
* M. Fukushima, Z.-Q. Luo, P. Tseng, "Smoothing functions for second-order-cone complementarity
  problems", SIAM J. Optim. 12 (2002) 436-460.
* V. Acary, M. Brémond, O. Huber, "On solving contact problems with Coulomb friction:
  formulations and numerical comparisons", in Advanced Topics in Nonsmooth Dynamics, Springer
  (2018) 375-457.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import casadi as ca
import numpy as np
import scipy.sparse as sps

from mcpkit.engines.newton_contact import delassus_rho
from mcpkit.errors import MCPInputError
from mcpkit.problems import blocks as bx
from mcpkit.problems.mcp import MCP
from mcpkit.solving.options import Choice

#: Guard of square roots and divisions: :math:`\sqrt{\max(s, \mathtt{TINY})}`.
TINY = 1e-300
#: :class:`ContactEquations` returns dense Jacobians (and a full structure) up to this many unknowns,
#: where the Newton engine factorises with dense LAPACK anyway (its ``DENSE_MAX_N``).
DENSE_N = 300


class ContactLaw(str, Choice):
    """The per-contact nonsmooth equations :math:`\\phi(r_i, u_i) = 0` (module docstring)."""

    ALART_CURNIER = "alart_curnier"
    """Alart–Curnier: normal :math:`\\min`-type row and a projection on the friction disk of radius
    :math:`\\mu \\max(0, r_n - \\rho_n u_n)`, on the plain velocity :math:`u`."""
    FB_SOC = "fb_soc"
    """Fischer–Burmeister for the second-order cone on De Saxcé's velocity :math:`u + \\mu\\|u_t\\|e_n`
    (requires :math:`\\mu > 0`)."""


Blocks = tuple[bx.Expr, bx.Expr, bx.Expr]


def law_blocks(
    law: ContactLaw | str, r: Blocks, u: Blocks, mu: bx.Expr, rho_n: bx.Expr, rho_t: bx.Expr
) -> Blocks:
    r"""The equations :math:`(\phi_n, \phi_t, \phi_o)` of a contact law as block expressions.

    ``r`` and ``u`` are the normal, first and second tangential components of the reactions and
    velocities (vectors over the contacts, or one contact), ``mu``, ``rho_n``, ``rho_t`` vectors
    of the same length; every operation is elementwise over the contacts. Alart–Curnier:

    .. math::
        x_n = r_n - \rho_n u_n,\quad p_n = \max(x_n, 0),\quad x_{t,o} = r_{t,o} - \rho_t u_{t,o},\quad
        \theta = \frac{\mu p_n}{\max(\mu p_n, \sqrt{x_t^2 + x_o^2})},\qquad
        \phi = (r_n - p_n,\ r_t - \theta x_t,\ r_o - \theta x_o)

    (:math:`\theta x_{t,o}` is the projection on the disk of radius :math:`\mu p_n`). FB-SOC
    (:math:`\rho = \rho_n`; ``rho_t`` unused): with :math:`s = \sqrt{u_t^2 + u_o^2}`,
    :math:`x = (\mu r_n, r_t, r_o)`, :math:`y = \rho(u_n + \mu s, \mu u_t, \mu u_o)`,
    :math:`w_0 = \|x\|^2 + \|y\|^2`, :math:`w_{t,o} = 2(x_n x_{t,o} + y_n y_{t,o})`,
    :math:`\lambda_{1,2} = \sqrt{w_0 \mp \|w\|}`:
    :math:`\phi = x + y - \bigl(\tfrac{\lambda_1 + \lambda_2}{2},\
    \tfrac{\lambda_2 - \lambda_1}{2}\,w_{t,o}/\|w\|\bigr)`.

    This one tree is printed by :func:`mcpkit.models.fclib.fclib_mcp` and, evaluated on one
    contact's CasADi symbols, is the function :func:`contact_function` that the solver maps over
    the contacts (there every square root is guarded by :data:`TINY`).
    """
    law = ContactLaw.parse(law)
    (rn, rt, ro), (un, ut, uo) = r, u
    if law is ContactLaw.ALART_CURNIER:
        pn = bx.named("p_n", bx.maximum(bx.named("x_n", rn - rho_n * un, latex="x_n"), 0), latex="p_n")
        xt = bx.named("x_t", rt - rho_t * ut, latex="x_t")
        xo = bx.named("x_o", ro - rho_t * uo, latex="x_o")
        radius = mu * pn
        theta = bx.named("theta", radius / bx.maximum(radius, bx.sqrt(xt**2 + xo**2)), latex=r"\theta")
        return rn - pn, rt - theta * xt, ro - theta * xo
    slip = bx.named("s", bx.sqrt(ut**2 + uo**2), latex="s")
    xn = mu * rn
    yn = bx.named("y_n", rho_n * (un + mu * slip), latex="y_n")
    yt = bx.named("y_t", rho_n * (mu * ut), latex="y_t")
    yo = bx.named("y_o", rho_n * (mu * uo), latex="y_o")
    w0 = bx.named("w_0", xn**2 + rt**2 + ro**2 + (yn**2 + yt**2 + yo**2), latex="w_0")
    wt = bx.named("w_t", 2 * (xn * rt + yn * yt), latex="w_t")
    wo = bx.named("w_o", 2 * (xn * ro + yn * yo), latex="w_o")
    nw = bx.named("w_norm", bx.sqrt(wt**2 + wo**2), latex=r"\|w\|")
    l1 = bx.named("lam_1", bx.sqrt(w0 - nw), latex=r"\lambda_1")
    l2 = bx.named("lam_2", bx.sqrt(w0 + nw), latex=r"\lambda_2")
    half = (l2 - l1) / 2
    return xn + yn - (l1 + l2) / 2, rt + yt - half * wt / nw, ro + yo - half * wo / nw


class _OneContactSX(bx.OperatorArithmetic):
    """Block expressions of :func:`law_blocks` on one contact's CasADi ``SX`` scalars (guarded roots)."""

    def __init__(self, values: dict[str, ca.SX]) -> None:
        self.values = values

    def var(self, block: Any) -> ca.SX:
        return self.values[block.name]

    def param(self, block: Any) -> ca.SX:
        return self.values[block.name]

    def const(self, values: np.ndarray) -> float:
        return float(values[0])

    def apply_leaf(self, leaf: Any, y: Any, transpose: bool) -> Any:  # pragma: no cover - no matrices
        raise TypeError("the contact law has no matrix")

    def func(self, name: str, a: Any) -> Any:
        if name != "sqrt":  # pragma: no cover - the laws use sqrt only
            raise TypeError(f"the contact law uses sqrt only, not {name}")
        return ca.sqrt(ca.fmax(a, TINY))

    def total(self, a: Any) -> Any:  # pragma: no cover - no sums
        return a

    def maximum(self, a: Any, b: Any) -> Any:
        return ca.fmax(a, b)


def _law_expression(law: ContactLaw, r: ca.SX, u: ca.SX, d: ca.SX) -> ca.SX:
    """:math:`\\phi(r, u)` for one contact, ``d = (mu, rho_n, rho_t)``: :func:`law_blocks` on SX."""
    one = MCP("one_contact")
    names = ("r_n", "r_t", "r_o", "u_n", "u_t", "u_o", "mu", "rho_n", "rho_t")
    leaves = [one.add_variable_block(nm, 1, lb=-np.inf) for nm in names[:3]]
    leaves += [one.add_parameter_block(nm, 1) for nm in names[3:]]
    phi = law_blocks(law, tuple(leaves[:3]), tuple(leaves[3:6]), *leaves[6:])  # type: ignore[arg-type]
    values = dict(zip(names, [r[0], r[1], r[2], u[0], u[1], u[2], d[0], d[1], d[2]], strict=True))
    ev = bx.Evaluator(_OneContactSX(values))
    return ca.vertcat(*(ev.value(f) for f in phi))


@lru_cache(maxsize=64)
def _mapped(law: ContactLaw, jacobian: bool, nc: int) -> ca.Function:
    """:func:`contact_function` mapped over ``nc`` contacts (cached: CasADi functions are immutable)."""
    return contact_function(law, jacobian).map(nc)


@lru_cache(maxsize=8)
def contact_function(law: ContactLaw | str, jacobian: bool = False) -> ca.Function:
    r"""The CasADi function ``(r[3], u[3], d[3]) -> phi[3]`` of one contact, ``d = (mu, rho_n, rho_t)``.

    With ``jacobian=True`` it also returns :math:`A = \partial\phi/\partial r` and
    :math:`B = \partial\phi/\partial u` (:math:`3\times 3`). For :attr:`ContactLaw.FB_SOC`,
    :math:`\rho_t` is unused (one :math:`\rho = \rho_n` scales :math:`y`).
    Cached (CasADi functions are immutable).
    """
    law = ContactLaw.parse(law)
    r, u, d = ca.SX.sym("r", 3), ca.SX.sym("u", 3), ca.SX.sym("d", 3)
    phi = _law_expression(law, r, u, d)
    if not jacobian:
        return ca.Function(f"{law.value}_phi", [r, u, d], [phi], ["r", "u", "d"], ["phi"])
    return ca.Function(
        f"{law.value}_phi_AB",
        [r, u, d],
        [phi, ca.jacobian(phi, r), ca.jacobian(phi, u)],
        ["r", "u", "d"],
        ["phi", "A", "B"],
    )


class ContactEquations:
    r"""The scaled system :math:`F(\hat r) = 0` of one FCLIB problem and one contact law.

    .. math::
        r = s_r \hat r,\quad u = (W + \varepsilon I) r + q,\quad
        F_i(\hat r) = \frac{\omega_i}{\|q\|_2}\, \phi(r_i, u_i; \mu_i, \rho_{n,i}, \rho_{t,i}),

    with :math:`s_r = \|q\|_2 / \overline{\mathrm{diag}\,W}` (so :math:`\hat r = O(1)`),
    :math:`\rho` from :func:`~mcpkit.engines.newton_contact.delassus_rho` (times ``rho_scale``) and
    :math:`\omega_i = \max(1, 1/\min(\rho_{n,i}, \rho_{t,i}))`. The weights make the rows comparable
    with the Siconos error (``friction_residual``), which is the natural map with
    :math:`\rho = 1` divided by :math:`\|q\|_2`: for the normal rows
    :math:`|\min(r, u)| \le \max(1, 1/\rho)\,|\min(r, \rho u)|`. The Jacobian is
    :math:`J = \mathrm{diag}(\omega/\|q\|_2)\,(A + B(W + \varepsilon I))\,s_r` from the per-contact
    blocks of :func:`contact_function`.

    ``eps`` > 0 is a Tikhonov term :math:`\varepsilon I` (in units of :math:`W`): it makes the
    Newton matrices of a rank-deficient :math:`W` (statically indeterminate stacks) nonsingular
    and changes the solution by :math:`O(\varepsilon\|r\|)` in :math:`u`; the caller polishes on
    :math:`\varepsilon = 0` and judges there.

    Parameters
    ----------
    W, q, mu
        The FCLIB data (``W`` dense or sparse, :math:`3n_c \times 3n_c`).
    law
        :class:`ContactLaw`.
    eps
        Tikhonov term, absolute (same units as ``W``).
    rho_scale
        Factor on both :math:`\rho` of :func:`~mcpkit.engines.newton_contact.delassus_rho`.

    Raises
    ------
    MCPInputError
        FB-SOC with a zero friction coefficient.
    """

    def __init__(
        self,
        W: Any,
        q: np.ndarray,
        mu: np.ndarray,
        law: ContactLaw | str = ContactLaw.ALART_CURNIER,
        eps: float = 0.0,
        rho_scale: float = 1.0,
    ) -> None:
        self.law = ContactLaw.parse(law)
        self.q = np.asarray(q, dtype=float).reshape(-1)
        self.mu = np.asarray(mu, dtype=float).reshape(-1)
        nc = self.nc = int(self.mu.size)
        self.n = 3 * nc
        if self.law is ContactLaw.FB_SOC and np.any(self.mu <= 0):
            raise MCPInputError("FB-SOC needs mu > 0 at every contact (use the Alart-Curnier law)")
        self.dense = self.n <= DENSE_N
        # a large problem's W is kept (or made) sparse: a dense copy and a dense identity of
        # order 9000 took seconds and 650 MB each
        Wd = W if sps.issparse(W) else np.asarray(W, dtype=float)
        if self.dense and sps.issparse(Wd):
            Wd = Wd.toarray()
        elif not self.dense and not sps.issparse(Wd):
            Wd = sps.csr_matrix(Wd)
        diag = np.abs(Wd.diagonal())
        self.d_mean = float(diag.mean()) if nc and diag.mean() > 0 else 1.0
        self.q_norm = float(np.linalg.norm(self.q)) or 1.0
        self.s_r = self.q_norm / self.d_mean
        self.eps = float(eps)
        We = Wd
        if self.eps:
            We = Wd + self.eps * (np.eye(self.n) if self.dense else sps.identity(self.n, format="csr"))
        rho_n, rho_t = delassus_rho(Wd, nc)
        rho_n, rho_t = rho_scale * rho_n, rho_scale * rho_t
        self.rho_n, self.rho_t = rho_n, rho_t
        self.weight = np.maximum(1.0, 1.0 / np.minimum(rho_n, rho_t)) / self.q_norm
        self._row_w = np.repeat(self.weight, 3)
        self._d = np.vstack([self.mu, rho_n, rho_t])  # 3 x nc
        self._phi = _mapped(self.law, False, nc)
        self._phi_ab = _mapped(self.law, True, nc)
        cols3 = np.repeat(np.arange(self.n).reshape(nc, 1, 3), 3, axis=1)  # (c, a, b) -> 3c + b
        self._diag_cols = cols3.reshape(-1)
        self._diag_rows = cols3.transpose(0, 2, 1).reshape(-1)  # (c, a, b) -> 3c + a
        if self.dense:
            self.W: np.ndarray | sps.csr_matrix = We
            self._W_blocks = We.reshape(nc, 3, self.n)
            self.pattern: np.ndarray | sps.csc_matrix = np.ones((self.n, self.n))
            return
        Ws = sps.csr_matrix(We, dtype=float, copy=True)
        Ws.eliminate_zeros()
        Ws.sort_indices()
        self.W = Ws
        # structure of J = A_bd + B_bd W: the diagonal blocks and, for each nonzero W[3c+b, j],
        # the three rows 3c+a of column j; positions in J's CSC data found once
        w_rows = np.repeat(np.arange(self.n), np.diff(Ws.indptr))
        w_cols = Ws.indices.astype(np.int64)
        c_of, b_of = np.divmod(w_rows, 3)
        rows = np.concatenate([self._diag_rows, (3 * c_of[:, None] + np.arange(3)).reshape(-1)])
        cols = np.concatenate([self._diag_cols, np.repeat(w_cols, 3)])
        pattern = sps.csc_matrix((np.ones(rows.size), (rows, cols)), shape=(self.n, self.n))
        pattern.sum_duplicates()
        pattern.sort_indices()
        pattern.data[:] = 1.0
        self.pattern = pattern
        keys = np.repeat(np.arange(self.n, dtype=np.int64), np.diff(pattern.indptr)) * self.n
        keys += pattern.indices
        self._pos_diag = np.searchsorted(keys, self._diag_cols * self.n + self._diag_rows)
        self._pos_w = np.searchsorted(keys, (np.repeat(w_cols, 3) * self.n + rows[self._diag_rows.size :]))
        self._w_c, self._w_b, self._w_val = c_of, b_of, Ws.data.copy()

    # ---------------------------------------------------------------- evaluation
    def reactions(self, z: np.ndarray) -> np.ndarray:
        """Unscaled reactions :math:`r = s_r\\hat r` in FCLIB's order."""
        return self.s_r * np.asarray(z, dtype=float).reshape(-1)

    def velocities(self, z: np.ndarray) -> np.ndarray:
        """:math:`u = (W + \\varepsilon I)r + q` at :math:`\\hat r`."""
        return np.asarray(self.W @ self.reactions(z)).reshape(-1) + self.q

    def _split(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r = self.reactions(z)
        u = np.asarray(self.W @ r).reshape(-1) + self.q
        return r.reshape(self.nc, 3).T, u.reshape(self.nc, 3).T

    def F(self, z: np.ndarray) -> np.ndarray:
        """:math:`F(\\hat r)` (class docstring)."""
        R, U = self._split(z)
        phi = np.asarray(self._phi(R, U, self._d)).T.reshape(-1)
        return self._row_w * phi

    def phi_and_blocks(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        r""":math:`\phi` and the blocks :math:`A_i, B_i` (``(nc, 3, 3)`` arrays) at :math:`\hat r`."""
        R, U = self._split(z)
        phi, A, B = self._phi_ab(R, U, self._d)
        nc = self.nc
        A = np.asarray(A).reshape(3, nc, 3).transpose(1, 0, 2)
        B = np.asarray(B).reshape(3, nc, 3).transpose(1, 0, 2)
        return np.asarray(phi).T.reshape(-1), A, B

    def J(self, z: np.ndarray) -> np.ndarray | sps.csc_matrix:
        r""":math:`J(\hat r) = \mathrm{diag}(\omega/\|q\|)(A + BW)s_r` (class docstring).

        A dense array when :attr:`dense` (:math:`3n_c \le` :data:`DENSE_N`), else a CSC matrix
        with the structure :attr:`pattern`.
        """
        _, A, B = self.phi_and_blocks(z)
        scale = (self.weight * self.s_r)[:, None, None]
        A, B = A * scale, B * scale
        if self.dense:
            Jd = np.einsum("cab,cbj->caj", B, self._W_blocks).reshape(self.n, self.n)
            Jd[self._diag_rows, self._diag_cols] += A.reshape(-1)
            return Jd
        # B_c[a, b] * W[3c+b, j] lands on (3c+a, j); A_c[a, b] on (3c+a, 3c+b)
        contrib = B[self._w_c, :, self._w_b] * self._w_val[:, None]
        data = np.bincount(self._pos_w, weights=contrib.reshape(-1), minlength=self.pattern.nnz)
        data += np.bincount(self._pos_diag, weights=A.reshape(-1), minlength=self.pattern.nnz)
        return sps.csc_matrix((data, self.pattern.indices, self.pattern.indptr), shape=(self.n, self.n))
