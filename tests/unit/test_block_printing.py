"""Block-level printing of the models' steps: the printout is the paper's equation as declared.

The expected strings are the seed-004 eq (9) NCP step, the eq (15) LCP step and the seed-000
eqs (29)-(32) ECP step, one line per block pair with its size, the definitions under "where" and
the parameters under "given" (docs/printing.md sets them beside the papers' equations).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mcpkit import MCP
from mcpkit.models.ecp import build_complementarity_mcp, build_quadratic_mcp, paper_slider
from mcpkit.models.stewart_trinkle import Contact, LCPStep, NCPStep, Particle, PlaneSurface, RigidBody3D
from mcpkit.problems import blocks

NCP_TEXT = """\
MCP 'stewart_trinkle_ncp': find lam_n, lam_t, lam_o, sigma, v such that
  0 <= lam_n ⟂ Wn.T @ v + psi_h >= 0                                    lam_n ∈ R^n_c
  (U @ lam_n) * v_t + lam_t * sigma = 0   (lam_t free)                  lam_t ∈ R^n_c
  (U @ lam_n) * v_o + lam_o * sigma = 0   (lam_o free)                  lam_o ∈ R^n_c
  0 <= sigma ⟂ (U @ lam_n)**2 - lam_t**2 - lam_o**2 >= 0                sigma ∈ R^n_c
  Mhat @ v - b - Wn @ lam_n - Wt @ lam_t - Wo @ lam_o = 0   (v free)    v ∈ R^n_v
where
  U = diag(mu)                                                          U ∈ R^(n_c x n_c)
  v_t = Wt.T @ v - ut                                                   v_t ∈ R^n_c
  v_o = Wo.T @ v - uo                                                   v_o ∈ R^n_c
given
  Mhat ∈ R^(n_v x n_v)
  b ∈ R^n_v
  psi_h ∈ R^n_c
  Wn ∈ R^(n_v x n_c)
  Wt ∈ R^(n_v x n_c)
  Wo ∈ R^(n_v x n_c)
  ut ∈ R^n_c
  uo ∈ R^n_c
  mu ∈ R^n_c
sizes: n_c = 1, n_v = 3"""

NCP_LATEX_PAIRS = [
    r"&\quad 0 \le \beta_n \perp W_n^{T} \nu + \psi_n/h \ge 0 && \beta_n \in \mathbb{R}^{n_c}",
    r"&\quad \left(U \beta_n\right) \circ v_t + \beta_t \circ \sigma = 0\quad (\beta_t\ \text{free}) "
    r"&& \beta_t \in \mathbb{R}^{n_c}",
    r"&\quad 0 \le \sigma \perp \left(U \beta_n\right)^{\circ 2} - \beta_t^{\circ 2} "
    r"- \beta_o^{\circ 2} \ge 0 && \sigma \in \mathbb{R}^{n_c}",
    r"&\quad \hat M \nu - b - W_n \beta_n - W_t \beta_t - W_o \beta_o = 0\quad (\nu\ \text{free}) "
    r"&& \nu \in \mathbb{R}^{n_v}",
    r"&\quad v_t = W_t^{T} \nu - u_t && v_t \in \mathbb{R}^{n_c}",
]

LCP_TEXT = """\
MCP 'stewart_trinkle_lcp': find lam_n, lam_f, sigma, v such that
  0 <= lam_n ⟂ Wn.T @ v + psi_h >= 0                        lam_n ∈ R^n_c
  0 <= lam_f ⟂ v_f + E @ sigma >= 0                         lam_f ∈ R^(n_c*n_d)
  0 <= sigma ⟂ U @ lam_n - E.T @ lam_f >= 0                 sigma ∈ R^n_c
  Mhat @ v - b - Wn @ lam_n - W_f @ lam_f = 0   (v free)    v ∈ R^n_v
where
  W_f = Wt @ C_d + Wo @ S_d                                 W_f ∈ R^(n_v x n_c*n_d)
  u_f = C_d.T @ ut + S_d.T @ uo                             u_f ∈ R^(n_c*n_d)
  v_f = W_f.T @ v - u_f                                     v_f ∈ R^(n_c*n_d)
  U = diag(mu)                                              U ∈ R^(n_c x n_c)
given
  Mhat ∈ R^(n_v x n_v)
  b ∈ R^n_v
  psi_h ∈ R^n_c
  Wn ∈ R^(n_v x n_c)
  Wt ∈ R^(n_v x n_c)
  Wo ∈ R^(n_v x n_c)
  ut ∈ R^n_c
  uo ∈ R^n_c
  mu ∈ R^n_c
  C_d ∈ R^(n_c x n_c*n_d) (constant, sparse)
  S_d ∈ R^(n_c x n_c*n_d) (constant, sparse)
  E ∈ R^(n_c*n_d x n_c) (constant, sparse)
sizes: n_c = 1, n_d = 4, n_v = 3"""

ECP_PAIRS = [
    "  (mu * e_t**2 * (p_nbar * v_x_next + p_o * q_z * w_z_next) + p_t * sigma) / (mu * p_nbar) = 0"
    "   (p_t free)",
    "  (mu * e_o**2 * (p_nbar * v_y_next - p_t * q_z * w_z_next) + p_o * sigma) / (mu * p_nbar) = 0"
    "   (p_o free)",
    "  (mu * e_r**2 * p_nbar * w_z_next + p_r * sigma) / (mu * p_nbar) = 0   (p_r free)",
    "  (mu**2 * p_nbar**2 - (p_t / e_t)**2 - (p_o / e_o)**2 - (p_r / e_r)**2) / (mu * p_nbar)**2 = 0"
    "   (sigma free)",
]
ECP_GIVEN = [
    "v_x",
    "v_y",
    "w_z",
    "p_x",
    "p_y",
    "p_ztau",
    "m",
    "I_z",
    "mu",
    "e_t",
    "e_o",
    "e_r",
    "q_z",
    "p_nbar",
]

ECP_WHERE = """\
  v_x_next = v_x + (p_t + p_x) / m
  v_y_next = v_y + (p_o + p_y) / m
  w_z_next = w_z + (p_r + p_ztau) / I_z"""


def _particle_ncp() -> NCPStep:
    return NCPStep(Particle(), [Contact(PlaneSurface(), 0.3)], 1e-3)


def _columns(text: str) -> list[str]:
    """The condition column of each line (the size column and padding removed)."""
    return [
        ln.split("    ")[0].rstrip() if "∈ R" in ln and ln.startswith("  ") else ln
        for ln in text.splitlines()
    ]


def test_ncp_step_prints_eq9_at_block_level() -> None:
    """Seed 004 eq (9): one line per block, W_n^T nu, (U beta_n) o v_t + beta_t o sigma, the cone."""
    assert _particle_ncp().mcp.to_text() == NCP_TEXT


def test_ncp_step_latex_is_the_papers_notation() -> None:
    tex = _particle_ncp().mcp.to_latex()
    assert tex.startswith(
        "\\begin{aligned}\n&\\text{find } \\beta_n,\\ \\beta_t,\\ \\beta_o,\\ \\sigma,\\ \\nu"
    )
    lines = [ln.rstrip(" \\") for ln in tex.splitlines()]
    for want in NCP_LATEX_PAIRS:
        assert want in lines, want
    assert lines[-2] == r"&\text{with } n_c = 1,\ n_v = 3"


def test_lcp_step_prints_eq15_at_block_level() -> None:
    """Seed 004 eq (15) with W_f = W_t C_d + W_o S_d, v_f + E sigma and U beta_n - E^T beta_f."""
    st = LCPStep(Particle(), [Contact(PlaneSurface(), 0.3)], 1e-3, n_d=4)
    assert st.mcp.to_text() == LCP_TEXT


def test_ecp_quadratic_step_prints_eqs_29_to_32() -> None:
    """Seed 000 eqs (29)-(32) (scaled rows, as declared) with the eqs (26)-(28) velocities as definitions."""
    text = build_quadratic_mcp(paper_slider()).to_text()
    cols = _columns(text)
    assert cols[0] == "MCP 'ecp_quadratic': find p_t, p_o, p_r, sigma such that"
    assert cols[1:5] == ECP_PAIRS
    assert cols[5] == "where" and "\n".join(cols[6:9]) == ECP_WHERE
    assert cols[9] == "given" and cols[10:] == [f"  {n} ∈ R" for n in ECP_GIVEN]
    sizes = [ln.split()[-3:] for ln in text.splitlines()[1:5]]
    assert sizes == [[n, "∈", "R"] for n in ("p_t", "p_o", "p_r", "sigma")]


def test_ecp_complementarity_step_prints_normal_contact_and_cone() -> None:
    cols = _columns(build_complementarity_mcp(paper_slider()).to_text())
    assert cols[1] == "  0 <= p_n ⟂ v_z_next + gap / h >= 0"
    assert cols[2] == (
        "  0 <= sigma ⟂ (mu**2 * p_n**2 - (p_t / e_t)**2 - (p_o / e_o)**2 - (p_r / e_r)**2)"
        " / (mu * p_nbar)**2 >= 0"
    )
    assert "  v_z_next = v_z + (p_n + p_z) / m - g * h" in cols


def _cube(n: int) -> list[Contact]:
    ang = 2 * np.pi * np.arange(n) / n
    return [Contact(PlaneSurface(), 0.3, [math.cos(a), math.sin(a), -1.0]) for a in ang]


@pytest.mark.parametrize("kind", ["ncp", "lcp"])
def test_fifty_contacts_print_like_one(kind: str) -> None:
    """The block-level print does not grow with the contacts: same lines, only the sizes differ."""
    body = RigidBody3D(inertia_body=[1.0, 2.0, 3.0])
    make = (lambda c: NCPStep(body, c, 1e-3)) if kind == "ncp" else (lambda c: LCPStep(body, c, 1e-3, n_d=6))
    one, fifty = make(_cube(1)).mcp, make(_cube(50)).mcp
    assert fifty.n - one.n == 49 * (one.n - 6)  # 6 velocities, the rest per contact
    t1, t50 = one.to_text().splitlines(), fifty.to_text().splitlines()
    assert len(t1) == len(t50)
    assert t1[:-1] == t50[:-1] and t1[-1] != t50[-1] and "n_c = 50" in t50[-1]
    assert len(one.to_latex().splitlines()) == len(fifty.to_latex().splitlines())
    assert len(one.explain().splitlines()) == len(fifty.explain().splitlines())
    assert len(fifty.to_text(expand=True, max_rows=10**6).splitlines()) == fifty.n + 1


def test_repr_latex_renders_to_latex() -> None:
    mcp = _particle_ncp().mcp
    assert mcp._repr_latex_() == f"$${mcp.to_latex()}$$"
    assert str(mcp.ref("Wn").T @ mcp.ref("v")) == "Wn.T @ v"
    assert (mcp.ref("Wn").T @ mcp.ref("v"))._repr_latex_() == r"$W_n^{T} \nu$"


def test_values_are_optional_in_the_given_list() -> None:
    st = _particle_ncp()
    st.mcp.set_parameters(Wn=np.array([[0.0], [0.0], [1.0]]), mu=0.25)
    text = st.mcp.to_text(values=True)
    assert "  Wn ∈ R^(n_v x n_c) = [[0.], [0.], [1.]]" in text.splitlines()
    assert "  mu ∈ R^n_c = [0.25]" in text.splitlines()
    assert len(text.splitlines()) == len(st.mcp.to_text().splitlines())
    assert (
        r"W_n \in \mathbb{R}^{n_v \times n_c} = \begin{bmatrix}0 \\ 0 \\ 1\end{bmatrix}"
        in st.mcp.to_latex(values=True)
    )


def test_explain_names_size_case_and_linearity() -> None:
    lines = _particle_ncp().mcp.explain().splitlines()
    assert lines[0] == "MCP 'stewart_trinkle_ncp' has 7 pairs (z_i, F_i) in 5 blocks."
    assert lines[1] == (
        "- lam_n ∈ R^n_c (1 pair): lower bound only: lam_n >= 0, F >= 0 and lam_n * F = 0 (componentwise); "
        "F = Wn.T @ v + psi_h is affine in v."
    )
    assert lines[2].startswith("- lam_t ∈ R^n_c (1 pair): free: the equation F = 0 holds (componentwise); ")
    assert lines[2].endswith("is nonlinear in lam_n, v, lam_t, sigma.")
    assert lines[5].endswith(
        "F = Mhat @ v - b - Wn @ lam_n - Wt @ lam_t - Wo @ lam_o is affine in v, lam_n, lam_t, lam_o."
    )
    assert "Definition: v_t = Wt.T @ v - ut ∈ R^n_c." in lines
    assert lines[-1] == "Sizes: n_c = 1, n_v = 3."


def test_expand_gives_the_entrywise_form() -> None:
    """``expand=True`` prints what an entrywise declaration of the same rows prints."""
    blk, ent = MCP("same"), MCP("same")
    x = blk.add_variable_block("x", 2, lb=0.0)
    q = blk.add_parameter_block("q", 2, [1.0, -2.0])
    blk.add_functions("x", 2.0 * x - q + x * x)
    xs = ent.add_variables("x", 2, lb=0.0)
    qs = ent.add_parameters("q", 2, [1.0, -2.0])
    ent.add_functions("x", [2 * xs[k] - qs[k] + xs[k] ** 2 for k in range(2)])
    assert blk.to_text(expand=True) == ent.to_text()
    assert blk.to_latex(expand=True) == ent.to_latex()
    assert blk.to_text() != ent.to_text()
    # the row's own unknown first, then the parameter (sympy had "-q[0] + x[0]**2 + 2 x[0]")
    assert ent.to_text(expand=False).splitlines()[1].startswith("  0 <= x[0] ⟂ x[0]**2 + 2 x[0] - q[0] >= 0")


def test_matrix_entries_print_with_two_indices_when_expanded() -> None:
    text = _particle_ncp().mcp.to_text(expand=True)
    assert "0 <= lam_n ⟂ Wn[0,0]*v[0] + Wn[1,0]*v[1] + Wn[2,0]*v[2] + psi_h >= 0" in text


def test_varying_and_mixed_bounds_are_named() -> None:
    mcp = MCP("bounds")
    x = mcp.add_variable_block("x", 3, lb=[0.0, 1.0, 2.0], dim="n")
    y = mcp.add_variable_block("y", 2, lb=[0.0, -math.inf], ub=[1.0, math.inf])
    mcp.add_functions("x", x - 1.0)
    mcp.add_functions("y", blocks.sin(y))
    lines = mcp.to_text().splitlines()
    assert lines[1].startswith("  lb_x <= x ⟂ x - 1 >= 0")
    assert lines[2].startswith("  lb_y <= y <= ub_y ⟂ sin(y)   (mixed bounds: 1 box, 1 free)")
    assert "  lb_x ∈ R^n" in lines
    assert "mixed bounds: 1 x box: F >= 0 where y = l" in mcp.explain()


def test_legacy_declarations_keep_the_entrywise_print() -> None:
    mcp = MCP.lcp(np.eye(2), [1.0, -1.0])
    assert mcp.to_text().splitlines()[1] == "  0 <= z[0] ⟂ z[0] + 1 >= 0"
    block = mcp.to_text(expand=False).splitlines()
    assert block[1].startswith("  0 <= z ⟂ M_z @ (z) + q_z >= 0   [M_z is 2x2]")


def test_coefficients_print_as_a_person_writes_them() -> None:
    """Integral floats without ``.0``, unit coefficients dropped, a space after a coefficient."""
    mcp = MCP.lcp(np.array([[2.0, 1.0], [-1.0, 0.5]]), [-1.0, 1 / 3])
    text = mcp.to_text().splitlines()
    assert text[1] == "  0 <= z[0] ⟂ 2 z[0] + z[1] - 1 >= 0"
    assert text[2] == "  0 <= z[1] ⟂ -z[0] + 0.5 z[1] + 0.333333 >= 0"
    latex = mcp.to_latex()
    assert r"0 \le z_{0} \perp 2 z_{0} + z_{1} - 1 \ge 0" in latex
    assert r"- z_{0} + 0.5 z_{1} + 0.333333 \ge 0" in latex
    assert "1.0" not in latex and "2.0" not in latex
