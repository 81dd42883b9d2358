"""Printing of MPCCs (issue 13, item 4): the standard form with its sizes, the pair cases in words
and the expressions; the slack form of an MCP by its blocks; a horizon as one step's blocks
"for k = 0, …, N-1" plus its boundary conditions (no solver).

The expected strings were read against the problems' definitions: bard1 (MacMPEC) is
``min (x-5)^2 + (2y+1)^2`` s.t. ``2(y-1) - 1.5x + l1 - 0.5l2 + l3 = 0`` and three standard pairs;
the contact MCP is the one of docs/printing.md.
"""

from __future__ import annotations

import math

import casadi as ca
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit import MCP
from mcpkit.errors import MCPInputError, ShapeError
from mcpkit.lowering.casadi import MCPToMPCC, lower_to_casadi
from mcpkit.mpcc import MPCC, ToStandardMPCC
from mcpkit.mpec.horizon import Horizon
from mcpkit.mpec.step import PathConstraint, StepSpec
from mcpkit.printing.mpcc import slack_form_blocks, step_latex
from mcpkit.problems.segments import MPCCBlocks, Segment


# ------------------------------------------------------------------ problems
def bard1() -> MPCC:
    """MacMPEC bard1 with x = (x, y, l1, l2, l3) >= 0."""
    x = ca.SX.sym("x", 5)
    f = (x[0] - 5) ** 2 + (2 * x[1] + 1) ** 2
    g = 2 * (x[1] - 1) - 1.5 * x[0] + x[2] - 0.5 * x[3] + x[4]
    G = ca.vertcat(3 * x[0] - x[1] - 3, -x[0] + 0.5 * x[1] + 4, -x[0] - x[1] + 7)
    return MPCC.from_casadi(x, G, x[2:5], f=f, g=g, lbx=0.0, name="bard1")


def contact() -> MCP:
    """The two-block contact MCP of docs/printing.md."""
    m = MCP("contact")
    v = m.add_variable_block("v", 2, lb=-math.inf, latex=r"\nu", dim="n_v")
    lam = m.add_variable_block("lam_n", 1, lb=0.0, latex=r"\beta_n", dim="n_c")
    Wn = m.add_parameter_block("Wn", (2, 1), [[0.0], [1.0]], latex="W_n", dim=("n_v", "n_c"))
    b = m.add_parameter_block("b", 2, [0.0, -1.0], latex="b", dim="n_v")
    psi = m.add_parameter_block("psi_h", 1, 0.5, latex=r"\psi_n/h", dim="n_c")
    m.add_functions("v", v - b - Wn @ lam)
    m.add_functions("lam_n", Wn.T @ v + psi)
    return m


def slack_form(mcp: MCP) -> tuple[MPCC, MPCC]:
    """``(plain, with blocks)``: the MCPToMPCC slack form without any block structure, and with the
    declaration's (MCPToMPCC itself attaches the CasADi image's block names)."""
    mp, form = MCPToMPCC().apply(lower_to_casadi(mcp))
    return mp.with_blocks(None), mp.with_blocks(slack_form_blocks(mcp, form))


def tiny_spec() -> StepSpec:
    """``0 <= a ⟂ a - xu``, ``-1 <= b <= 1 ⟂ b - s`` with ``xu = x_0 + u``, ``s = theta t``."""
    m = MCP("tiny")
    a = m.add_variable_block("a", 1, lb=0.0)
    b = m.add_variable_block("b", 1, lb=-1.0, ub=1.0)
    xu = m.add_parameter_block("xu", 1, 0.0)
    s = m.add_parameter_block("s", 1, 0.0)
    m.add_functions("a", a - xu)
    m.add_functions("b", b - s)
    return StepSpec(
        m, n_state=2, n_control=1, n_design=1,
        parameters=lambda x, u, th, t: {"xu": x[0] + u[0], "s": th[0] * t},
        update=lambda x, z, u, th: ca.vertcat(x[0] + 0.1 * z[0], x[1] + z[1]), h=0.1,
    )  # fmt: skip


def tiny_horizon(N: int) -> Horizon:
    return Horizon(
        tiny_spec(), N, [0.5, 0.0], control_bounds=(-1, 1), design_bounds=(0, 2),
        terminal_bounds=([1, -math.inf], [1, math.inf]),
        stage_cost=lambda x, u, th, z, k: u[0] ** 2, terminal_cost=lambda x, th: x[1] ** 2,
        path=[PathConstraint(lambda x, u, th: x[0] - u[0], -math.inf, 2.0)],
    )  # fmt: skip


# ------------------------------------------------------------------ plain MPCC
BARD1_TEXT = """\
MPCC 'bard1': find x ∈ R^5 such that
  minimize (x_0 - 5)**2 + (2 x_1 + 1)**2
  -1.5 x_0 + 2 x_1 + x_2 - 0.5 x_3 + x_4 - 2 = 0    g[0]
  0 <= x                                            x ∈ R^5
  0 <= 3 x_0 - x_1 - 3 ⟂ x_2 >= 0                   pair 0
  0 <= -x_0 + 0.5 x_1 + 4 ⟂ x_3 >= 0                pair 1
  0 <= -x_0 - x_1 + 7 ⟂ x_4 >= 0                    pair 2
pairs
  3 standard: 0 <= G ⟂ H >= 0    G >= 0, H >= 0 and G * H = 0 (at least one of the two is zero)
sizes: x ∈ R^5, g ∈ R, G, H ∈ R^3"""


def test_bard1_text() -> None:
    assert bard1().to_text() == BARD1_TEXT


def test_bard1_latex_and_notebook() -> None:
    m = bard1()
    tex = m.to_latex()
    assert tex.startswith("\\begin{aligned}\n") and tex.endswith("\n\\end{aligned}")
    assert r"&\quad \min\ \left(x_{0} - 5\right)^{2} + \left(2 x_{1} + 1\right)^{2} &&" in tex
    assert r"&\quad 0 \le 3 x_{0} - x_{1} - 3 \perp x_{2} \ge 0 && \text{pair }0" in tex
    assert r"&\quad 0 \le x && x \in \mathbb{R}^{5}" in tex
    assert m._repr_latex_() == f"$${tex}$$"


def test_bard1_explain() -> None:
    lines = bard1().explain().splitlines()
    assert (
        lines[0]
        == "MPCC 'bard1' has 5 variables, 0 parameters, 1 constraint row and 3 complementarity pairs."
    )
    assert lines[1] == (
        "Objective: (x_0 - 5)**2 + (2 x_1 + 1)**2; ∂f/∂x is 1x5 with 2 nonzeros, nonlinear in x."
    )
    assert lines[2] == "Constraints: 1 equality; ∂g/∂x is 1x5 with 5 nonzeros, affine in x."
    assert lines[3] == "Bounds on x: 5 with a lower bound only."
    assert "∂H/∂x is 3x5 with 3 nonzeros, affine in x" in lines[4]
    assert lines[5].startswith("- 3 standard pairs 0 <= G ⟂ H >= 0: G >= 0, H >= 0 and G * H = 0")


def test_mx_prints_like_sx() -> None:
    """An MX problem is expanded once; its rows print as the SX problem's (entries x_0, ...)."""
    sx = bard1()
    x = ca.MX.sym("x", 5)
    fun = ca.Function("b", [sx.x], [sx.f, sx.g, sx.G, sx.H])
    f, g, G, H = fun(x)
    mx = MPCC.from_casadi(x, G, H, f=f, g=g, lbx=0.0, name="bard1")
    assert mx.to_text() == BARD1_TEXT


def test_pair_cases_and_plain_bounds_on_G() -> None:
    """Each box case of ``H_l <= H <= H_u ⟂ G`` prints as such, with ``G_l <= G <= G_u`` when not implied."""
    x = ca.SX.sym("x", 4)
    G = ca.vertcat(x[0] - 1, x[1], x[2], x[3])
    H = ca.vertcat(x[1], x[2], x[3], x[0])
    m = MPCC.from_casadi(
        x, G, H, lbH=[0, -1, -np.inf, 2], ubH=[np.inf, 1, np.inf, 2],
        lbG=[-np.inf, -np.inf, -np.inf, -np.inf], ubG=[np.inf, 3, np.inf, np.inf], name="cases",
    )  # fmt: skip
    rows = m.to_text().splitlines()
    assert rows[2].startswith("  0 <= x_1 ⟂ x_0 - 1 >= 0 ")
    assert rows[3].startswith("  -1 <= x_2 <= 1 ⟂ x_1,   x_1 <= 3 ")
    assert rows[4].startswith("  x_2 = 0   (x_3 free) ")
    assert rows[5].startswith("  x_0 = 2   (x_3 free) ")
    words = m.explain()
    assert "1 box pair H_l <= H <= H_u ⟂ G: G >= 0 where H = H_l, G = 0 where H_l < H < H_u" in words
    assert "1 fixed pair H = H_l   (G free): H = H_l, G unrestricted." in words
    assert "1 pair also bound G as a plain constraint G_l <= G <= G_u." in words
    # the standard form of the same problem prints its slacks and only standard pairs
    std, _ = ToStandardMPCC().apply(m)
    assert "pairs\n  " + f"{std.n_pairs} standard: 0 <= G ⟂ H >= 0" in std.to_text()


def test_large_vectors_print_a_summary_and_the_first_rows() -> None:
    """Sizes beyond ``max_rows`` print a Jacobian summary and max_rows rows; the line count is fixed."""

    def chain(n: int) -> MPCC:
        x = ca.SX.sym("x", n)
        return MPCC.from_casadi(
            x, x[: n // 2] + x[n // 2 :], x[n // 2 :], f=ca.sumsqr(x), g=x[1:] - x[:-1], lbg=-1, ubg=1,
            name="chain",
        )  # fmt: skip

    small, big = chain(40).to_text(max_rows=5), chain(4000).to_text(max_rows=5)
    assert len(small.splitlines()) == len(big.splitlines())
    assert "  [3999 rows: 3999 ranges; ∂g/∂x is 3999x4000 with 7998 nonzeros, affine in x]" in big
    assert "  -1 <= -x_0 + x_1 <= 1" in big and "  -1 <= -x_3998 + x_3999 <= 1" in big
    assert "-x_4 + x_5" not in big  # only the first max_rows - 1 rows and the last
    assert "  minimize f(x)   [∂f/∂x is 1x4000 with 4000 nonzeros, nonlinear in x]" in big
    assert "[2000 pairs: 2000 standard;" in big


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 30), max_rows=st.integers(2, 6), seed=st.integers(0, 2**16))
def test_plain_print_has_one_line_per_shown_pair_and_case(n: int, max_rows: int, seed: int) -> None:
    """Lines: head, objective, 1 row, bounds, the shown pairs, "pairs" and one line per case present
    (plus one when a box or upper-bound pair keeps its plain ``G >= 0``), sizes."""
    rng = np.random.default_rng(seed)
    x = ca.SX.sym("x", 2 * n)
    lbH = rng.choice([0.0, -1.0, -np.inf], n)
    ubH = np.where(rng.random(n) < 0.5, np.inf, np.maximum(lbH, 0.0) + 1.0)
    m = MPCC.from_casadi(x, x[:n] * x[n:], x[n:] + 1, g=ca.sum1(x), lbx=-5.0, lbH=lbH, ubH=ubH)

    def case(lo: float, hi: float) -> str:
        if (lo, hi) == (0.0, np.inf):
            return "standard"
        return {(True, True): "box", (True, False): "lower", (False, True): "upper", (False, False): "free"}[
            (bool(np.isfinite(lo)), bool(np.isfinite(hi)))
        ]

    cases = [case(lo, hi) for lo, hi in zip(lbH, ubH, strict=True)]
    shown = n if n <= max_rows else max_rows + 2  # summary, max_rows - 1 pairs, "...", the last
    plain_G = int(any(c in ("box", "upper") for c in cases))  # G >= 0 is not implied by these cases
    text = m.to_text(max_rows=max_rows)
    assert len(text.splitlines()) == 4 + shown + 1 + len(set(cases)) + plain_G + 1
    for c in set(cases):
        assert f"  {cases.count(c)} {c}: " in text


# ------------------------------------------------------------------ slack form of an MCP
CONTACT_TEXT = """\
MPCC 'contact': slack form of MCP 'contact'
find v, lam_n, w_lam_n such that
  minimize 0
  v - b - Wn @ lam_n = 0            g_v ∈ R^n_v
  Wn.T @ v + psi_h - w_lam_n = 0    g_lam_n ∈ R^n_c
  0 <= lam_n ⟂ w_lam_n >= 0         (G, H)_lam_n ∈ R^n_c
  v free                            v ∈ R^n_v
  0 <= lam_n                        lam_n ∈ R^n_c
  0 <= w_lam_n                      w_lam_n ∈ R^n_c
given
  Wn ∈ R^(n_v x n_c)
  b ∈ R^n_v
  psi_h ∈ R^n_c
pairs
  1 standard: 0 <= G ⟂ H >= 0    G >= 0, H >= 0 and G * H = 0 (at least one of the two is zero)
sizes: n_c = 1, n_v = 2 (x ∈ R^4, p ∈ R^5, g ∈ R^3, G, H ∈ R)"""

CONTACT_LATEX_ROWS = [
    r"&\text{find } \nu,\ \beta_n,\ w_{\beta_n} \text{ such that}",
    r"&\quad \nu - b - W_n \beta_n = 0 && g_{\nu} \in \mathbb{R}^{n_v}",
    r"&\quad W_n^{T} \nu + \psi_n/h - w_{\beta_n} = 0 && g_{\beta_n} \in \mathbb{R}^{n_c}",
    r"&\quad 0 \le \beta_n \perp w_{\beta_n} \ge 0 && (G, H)_{\beta_n} \in \mathbb{R}^{n_c}",
    r"&\text{given } W_n \in \mathbb{R}^{n_v \times n_c},\ b \in \mathbb{R}^{n_v},\ "
    r"\psi_n/h \in \mathbb{R}^{n_c}",
]


def test_slack_form_of_a_two_block_mcp_prints_its_blocks() -> None:
    plain, blocked = slack_form(contact())
    assert blocked.to_text() == CONTACT_TEXT
    tex = [row.removesuffix(" \\\\") for row in blocked.to_latex().splitlines()]
    for row in CONTACT_LATEX_ROWS:
        assert row in tex
    # the blocks are printing metadata: expanded, the same rows print with the blocks' entry names
    expanded, entrywise = blocked.to_text(expand=True).splitlines(), plain.to_text().splitlines()
    assert len(expanded) == len(entrywise)
    assert entrywise[2] == "  -p_0*z_2 - p_2 + z_0 = 0           g[0]"
    assert expanded[2] == "  -lam_n*p_0 - p_2 + v[0] = 0                g[0]"
    assert expanded[6] == "  0 <= lam_n ⟂ w_lam_n >= 0                  pair 0"


def test_slack_form_explain_names_the_blocks() -> None:
    text = slack_form(contact())[1].explain()
    assert "- g_lam_n ∈ R^n_c: 1 equality (Wn.T @ v + psi_h - w_lam_n)." in text
    assert "- (G, H)_lam_n ∈ R^n_c: pairs of G = lam_n and H = w_lam_n (1 standard)." in text
    assert "- v ∈ R^n_v: variables, 2 free." in text
    assert "G >= 0 and H >= 0 already follow from the bounds on x." in text


def test_slack_form_from_the_casadi_image_names_entries_by_block() -> None:
    """Without the declaration only block names are known: rows print from CasADi, entries by block."""
    mcp = contact()
    cm = lower_to_casadi(mcp)
    mp, form = MCPToMPCC().apply(cm)
    assert mp.to_text() == mp.with_blocks(slack_form_blocks(cm, form)).to_text()  # attached by MCPToMPCC
    lines = mp.to_text().splitlines()
    assert lines[3] == "  -lam_n*p_0 - p_2 + v[0] = 0                g_v[0]"
    assert lines[5] == "  p_0*v[0] + p_1*v[1] + p_4 - w_lam_n = 0    g_lam_n ∈ R"
    assert lines[6] == "  0 <= lam_n ⟂ w_lam_n >= 0                  (G, H)_lam_n ∈ R"


def test_slack_form_of_box_and_varying_bounds() -> None:
    """A block with a box component and varying bounds: w and v pairs, the bound vector under "given"."""
    M = np.array([[2.0, 1, 0], [1, 2, 1], [0, 1, 2]])
    mcp = MCP.lcp(M, [-1.0, 0, 1], lb=[0, -1, -np.inf], ub=[np.inf, 1, np.inf])
    text = slack_form(mcp)[1].to_text()
    assert "  M_z @ z + q_z - w_z + v_z = 0 " in text
    assert "  0 <= z - lb_z ⟂ w_z >= 0 " in text and "(G, H)_z_lo ∈ R^2" in text
    assert "  0 <= 1 - z ⟂ v_z >= 0 " in text and "(G, H)_z_up ∈ R" in text
    assert "  lb_z = [0, -1]" in text and "  M_z ∈ R^(3 x 3)" in text


def test_block_slices_match_the_casadi_problem() -> None:
    """The pair segment's H is the slack w_lam_n and its G the block lam_n, entry by entry."""
    _, m = slack_form(contact())
    blocks = m.block_structure()
    assert blocks is not None
    seg = {s.name: s for s in blocks.segments}
    xv = np.array([3.0, 5.0, 7.0, 11.0])
    GH = ca.Function("GH", [m.x, m.p], [m.G, m.H])
    G, H = (np.asarray(v).ravel() for v in GH(xv, m.p0))
    pair = seg["(G, H)_lam_n"].slices[0]
    np.testing.assert_array_equal(H[pair], xv[seg["w_lam_n"].slices[0]])
    np.testing.assert_array_equal(G[pair], xv[seg["lam_n"].slices[0]])
    assert [s.kind for s in blocks.segments] == ["g", "g", "pair", "x", "x", "x"]


# ------------------------------------------------------------------ horizons
HORIZON_TEXT = """\
MPCC 'horizon_tiny_N4': horizon of MCP 'tiny': N steps of h = 0.1, each in slack form
find x_k, u_k, a_k, w_a_k, b_k, w_b_k, v_b_k, theta such that
  minimize sum_{k=0}^{N-1} l_k + l_N
for k = 0, …, N-1:
  a_k - xu_k - w_a_k = 0           g_a_k ∈ R
  0 <= a_k ⟂ w_a_k >= 0            (G, H)_a_k ∈ R
  b_k - s_k - w_b_k + v_b_k = 0    g_b_k ∈ R
  0 <= b_k + 1 ⟂ w_b_k >= 0        (G, H)_b_lo_k ∈ R
  0 <= 1 - b_k ⟂ v_b_k >= 0        (G, H)_b_up_k ∈ R
  x_{k+1} = Phi(x_k, a_k, b_k)     dynamics_k ∈ R^2
  -u_k + x_k[0] <= 2               c0_k ∈ R
  x_k free                         x_k ∈ R^2
  -1 <= u_k <= 1                   u_k ∈ R
  0 <= a_k                         a_k ∈ R
  0 <= w_a_k                       w_a_k ∈ R
  -1 <= b_k <= 1                   b_k ∈ R
  0 <= w_b_k                       w_b_k ∈ R
  0 <= v_b_k                       v_b_k ∈ R
and
  0 <= theta <= 2    theta ∈ R
boundary conditions
  x_0 = [0.5, 0]
  [1, -inf] <= x_N <= [1, inf]
where
  t_k = 0.1*k
  xu_k = u_k + x_k[0]    xu_k ∈ R
  s_k = t_k*theta        s_k ∈ R
  Phi(x_k, a_k, b_k) = [0.1 a_k + x_k[0], b_k + x_k[1]]
  l_k = u_k**2
  l_N = x_N[1]**2
pairs
  12 standard: 0 <= G ⟂ H >= 0    G >= 0, H >= 0 and G * H = 0 (at least one of the two is zero)
sizes: N = 4 (x ∈ R^35, g ∈ R^20, G, H ∈ R^12)"""


def test_horizon_prints_one_step_and_its_boundary_conditions() -> None:
    hz = tiny_horizon(4)
    assert hz.to_text() == HORIZON_TEXT
    tex = [row.removesuffix(" \\\\") for row in hz.to_latex().splitlines()]
    assert r"&\text{for } k = 0, \dots, N-1:" in tex
    assert r"&\quad x_{k+1} = \Phi(x_{k}, a_{k}, b_{k}) && \mathrm{dynamics}_{k} \in \mathbb{R}^{2}" in tex
    assert r"&\quad 0 \le b_{k} + 1 \perp w_{b,k} \ge 0 && (G, H)_{b,\mathrm{lo},k} \in \mathbb{R}" in tex
    assert r"&\quad x_{0} = \left(\frac{1}{2}, 0\right) &&" in tex


def test_horizon_of_5_and_50_steps_print_the_same_lines() -> None:
    """Only the name and the sizes line differ: nothing else depends on N."""
    from mcpkit.mpec.examples.block import BlockTask, block_horizon

    tasks = [BlockTask(n_steps=n, duration=0.2 * n) for n in (5, 50)]  # one step length h = 0.2
    t5, t50 = (block_horizon(task).to_text() for task in tasks)
    l5, l50 = t5.splitlines(), t50.splitlines()
    assert len(l5) == len(l50) > 30
    differ = [i for i, (a, b) in enumerate(zip(l5, l50, strict=True)) if a != b]
    assert differ == [0, len(l5) - 2, len(l5) - 1]  # name; pair count; sizes
    assert "  Wn.T @ v_k + psi_h_k - w_lam_n_k = 0 " in t5
    assert "  Mhat @ v_k - b_k - Wn @ lam_n_k - W_f @ lam_f_k = 0 " in t5
    assert "  x_{k+1} = Phi(x_k, v_k) " in t5
    assert "  psi_h_k = 5 x_k[2] " in t5  # P sets psi_h per step; Wn stays under "given"
    assert "\n  Wn ∈ R^(n_v x n_c)\n" in t5
    lat5, lat50 = (block_horizon(task).to_latex().splitlines() for task in tasks)
    assert len(lat5) == len(lat50)


def test_horizon_blocks_are_built_on_first_print_and_match_the_mpcc() -> None:
    hz = tiny_horizon(3)
    assert callable(hz.mpcc.blocks)  # building a horizon pays nothing for printing
    blocks = hz.mpcc.block_structure()
    assert isinstance(blocks, MPCCBlocks) and hz.mpcc.blocks is blocks and blocks.steps == 3
    m = hz.mpcc
    seg = {s.name: s for s in blocks.segments}
    fH = ca.Function("H", [m.x], [m.H])
    xv = np.arange(1.0, m.x.numel() + 1)
    Hv = np.asarray(fH(xv)).ravel()
    for k in range(3):  # H of (G, H)_a at step k is the slack w_a at step k
        np.testing.assert_array_equal(Hv[seg["(G, H)_a"].slices[k]], xv[seg["w_a"].slices[k]])
        np.testing.assert_array_equal(Hv[seg["(G, H)_b_up"].slices[k]], xv[seg["v_b"].slices[k]])
    # entries print by their segment names when expanded
    expanded = hz.mpcc.to_text(expand=True)
    assert "  a_0 - u_0 - w_a_0 - x_0[0] = 0 " in expanded
    assert "  0 <= 1 - b_2 ⟂ v_b_2 >= 0 " in expanded


def test_horizon_explain_repeats_per_step() -> None:
    text = tiny_horizon(4).explain()
    assert "The blocks marked 'each k' repeat for k = 0, …, N-1 (N = 4)" in text
    assert "- each k: x_k ∈ R^2: variables, 2 free (boundary conditions at k = 0, N)." in text
    assert "- each k: dynamics_k ∈ R^2: 2 equalities (x_{k+1} = Phi(x_k, a_k, b_k))." in text
    assert "- theta ∈ R: variables, 1 with both bounds." in text


# ------------------------------------------------------------------ names and errors
@pytest.mark.parametrize(
    ("stem", "expected"),
    [
        ("x", "x_{k}"),
        (r"\beta_n", r"\beta_{n,k}"),
        (r"w_{\beta_n}", r"w_{\beta_n,k}"),
        (r"F_{\mathrm{a}}", r"F_{\mathrm{a},k}"),
        (r"\psi_n/h", r"\left(\psi_n/h\right)_{k}"),
        (r"\hat M", r"\hat M_{k}"),
    ],
)
def test_step_latex(stem: str, expected: str) -> None:
    assert step_latex(stem, "k") == expected


def test_bad_blocks_and_options_are_typed_errors() -> None:
    m = bard1()
    with pytest.raises(ShapeError):
        m.with_blocks(MPCCBlocks(segments=(Segment("x", "y", slice(3, 9)),)))
    with pytest.raises(ShapeError):
        m.with_blocks(MPCCBlocks(segments=(Segment("g", "c", (slice(0, 1), slice(0, 2))),)))
    with pytest.raises(ShapeError):
        m.with_blocks(MPCCBlocks(segments=(Segment("x", "y", slice(None, 3)),)))
    with pytest.raises(MCPInputError):
        m.with_blocks(MPCCBlocks(segments=(Segment("z", "y", slice(0, 3)),)))  # type: ignore[arg-type]
    with pytest.raises(MCPInputError):
        m.with_blocks("x and y")  # type: ignore[arg-type]
    with pytest.raises(MCPInputError):
        m.with_blocks(lambda: "nope").to_text()  # type: ignore[arg-type, return-value]
    with pytest.raises(MCPInputError):
        m.to_text(max_rows=1)
    mp, form = MCPToMPCC().apply(lower_to_casadi(contact()))
    with pytest.raises(MCPInputError):
        slack_form_blocks(MCP.lcp(np.eye(2), [1.0, 1.0]), form)  # 2 variables, the form has 3
    with pytest.raises(MCPInputError):
        slack_form_blocks("contact", form)


def test_values_print_the_parameters() -> None:
    mp, _ = slack_form(contact())
    assert "given p = [0, 1, 0, -1, 0.5]" in mp.to_text(values=True)
    assert "Parameter values p = [0, 1, 0, -1, 0.5]." in mp.explain(values=True)
