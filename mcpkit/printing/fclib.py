r"""An FCLIB local problem printed as the cone complementarity problem it states (``mcpkit print``).

FCLIB's 3-D frictional contact problem with :math:`n_c` contacts, in the local frames of the
contacts (normal :math:`n`, tangents :math:`t, o`), is (Acary, Brémond, Huber, "On solving contact
problems with Coulomb friction: formulations and numerical comparisons", 2018)

.. math::

    K^* \ni \hat u \perp r \in K, \qquad u = W r + q, \qquad
    \hat u_i = u_i + \mu_i \|(u_{t,i}, u_{o,i})\|\, e_n,

with :math:`K = \prod_i K_i`, :math:`K_i = \{(r_n, r_t, r_o) : \|(r_t, r_o)\| \le \mu_i r_n\}`
(Coulomb's friction cones) and :math:`K^*` their dual cones
:math:`K_i^* = \{(u_n, u_t, u_o) : \mu_i \|(u_t, u_o)\| \le u_n\}`: :math:`r \in K`,
:math:`\hat u \in K^*` and :math:`r^\top \hat u = 0` (De Saxcé's bipotential form). This is what
:meth:`FCLIBProblem.to_text <mcpkit.models.fclib.FCLIBProblem.to_text>` prints by default; the
formulations mcpkit solves (Alart–Curnier equations, the Fischer–Burmeister SOC equations, the
NCP) print with ``formulation=`` (:func:`~mcpkit.models.fclib.fclib_mcp`). The print does not
depend on :math:`n_c`: the names are the Alart–Curnier print's (``r_n, r_t, r_o``, ``u``,
``W``, ``q``, ``mu``), one symbol per quantity.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
import scipy.sparse as sps

from mcpkit.solving.tables import format_value

__all__ = ["CONE_FORM", "cone_explain", "cone_latex", "cone_text"]


class FCLIBView(Protocol):
    r"""What the printer reads of an FCLIB local problem (:class:`mcpkit.models.fclib.FCLIBProblem`):
    its title, the contact count :math:`n_c`, the Delassus matrix :math:`W` and the friction
    coefficients :math:`\mu`."""

    title: str
    nc: int
    W: Any
    mu: Any


#: The print form of the cone complementarity problem (``mcpkit print --form cone``, the default).
CONE_FORM = "cone"


def _nnz(W: Any) -> int:
    return int(W.nnz) if sps.issparse(W) else int(np.count_nonzero(W))


def _name(prob: FCLIBView) -> str:
    return f"FCLIB local problem {prob.title!r}" if prob.title else "FCLIB local problem"


def _mu_text(prob: FCLIBView, latex: bool, values: bool) -> str:
    """`` (all 0.5)`` when every contact has the same friction coefficient; with ``values`` the list."""
    mu = np.asarray(prob.mu, dtype=float)
    if values:
        shown = format_value(mu)
        return rf" = \text{{{shown}}}" if latex else f" = {shown}"
    one = np.unique(mu)
    if one.size == 1:
        return rf"\ (\text{{all }} {one[0]:g})" if latex else f" (all {one[0]:g})"
    return ""


def cone_text(prob: FCLIBView, values: bool = False, **_: Any) -> str:
    r"""Plain text of :math:`K^* \ni \hat u \perp r \in K` (module docstring); ``values`` prints
    :math:`\mu` (other keywords of :meth:`mcpkit.MCP.to_text` are accepted and have no effect)."""
    nc = prob.nc
    mu = _mu_text(prob, False, values)
    rows = [
        (f"{_name(prob)}: find r = (r_n, r_t, r_o) per contact such that", ""),
        ("  K* ∋ û ⟂ r ∈ K", "r ∈ R^(3 n_c): contact impulses"),
        ("where", ""),
        ("  u = W @ r + q", "u ∈ R^(3 n_c): relative velocities"),
        ("  û_i = u_i + mu_i * ||(u_t,i, u_o,i)|| * e_n", "De Saxcé's modified velocity"),
        ("  K = K_1 x ... x K_n_c", "Coulomb's friction cones"),
        ("  K_i = {r_i : ||(r_t,i, r_o,i)|| <= mu_i * r_n,i}", ""),
        ("  K* = K*_1 x ... x K*_n_c", "their dual cones"),
        ("  K*_i = {u_i : mu_i * ||(u_t,i, u_o,i)|| <= u_n,i}", ""),
    ]
    width = max(len(a) for a, _ in rows[1:]) + 4
    lines = [rows[0][0]] + [f"{a:<{width}}{b}".rstrip() for a, b in rows[1:]]
    lines += [
        "given",
        f"  W ∈ R^(3 n_c x 3 n_c) (Delassus matrix, {_nnz(prob.W)} nonzeros)",
        "  q ∈ R^(3 n_c)",
        f"  mu ∈ R^n_c{mu}",
        f"sizes: n_c = {nc}",
    ]
    return "\n".join(lines)


def cone_latex(prob: FCLIBView, values: bool = False, **_: Any) -> str:
    r"""LaTeX (``aligned``) of :math:`K^* \ni \hat u \perp r \in K` (module docstring)."""
    mu = _mu_text(prob, True, values)
    rows = [
        r"&\text{find } r \in \mathbb{R}^{3 n_c} \text{ such that}",
        r"&\quad K^* \ni \hat u \perp r \in K && \text{contact impulses } r",
        r"&\text{where}",
        r"&\quad u = W r + q && \text{relative velocities}",
        r"&\quad \hat u_i = u_i + \mu_i \left\|(u_{t,i}, u_{o,i})\right\| e_n,\ i = 1, \dots, n_c"
        r" && \text{De Saxcé's modified velocity}",
        r"&\quad K = K_1 \times \dots \times K_{n_c} && \text{Coulomb's friction cones}",
        r"&\qquad K_i = \left\{ r_i : \left\|(r_{t,i}, r_{o,i})\right\| \le \mu_i r_{n,i} \right\}",
        r"&\quad K^* = K_1^* \times \dots \times K_{n_c}^* && \text{their dual cones}",
        r"&\qquad K_i^* = \left\{ u_i : \mu_i \left\|(u_{t,i}, u_{o,i})\right\| \le u_{n,i} \right\}",
        rf"&\text{{given }} W \in \mathbb{{R}}^{{3 n_c \times 3 n_c}}\ (\text{{Delassus, {_nnz(prob.W)} "
        rf"nonzeros}}),\ q \in \mathbb{{R}}^{{3 n_c}},\ \mu \in \mathbb{{R}}^{{n_c}}{mu}",
        rf"&\text{{with }} n_c = {prob.nc}",
    ]
    return "\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}"


def cone_explain(prob: FCLIBView, values: bool = False, **_: Any) -> str:
    """Prose: what the cone complementarity problem says, its sizes and the formulations it is solved in."""
    nc = prob.nc
    return "\n".join(
        [
            f"{_name(prob)} with {nc} contact{'s' if nc != 1 else ''} (3-D, local frames n, t, o).",
            "Unknowns: the impulses r_i = (r_n, r_t, r_o) of each contact; u = W r + q their velocities.",
            "r lies in Coulomb's friction cones K, De Saxcé's velocity û = u + mu ||(u_t, u_o)|| e_n in "
            "their dual cones K*, and r and û are orthogonal: each contact is open (r_i = 0), sticks "
            "(u_i = 0) or slides on the rim of its cone against its tangential velocity.",
            f"W is the {3 * nc}x{3 * nc} Delassus matrix with {_nnz(prob.W)} nonzeros.",
            "mcpkit solves it as the Alart–Curnier equations (print with --form alart-curnier), "
            "the Fischer–Burmeister SOC equations (--form fb-soc) or an NCP (--form ncp).",
        ]
    )
