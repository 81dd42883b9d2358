"""An MPCC prints its own vector names (a problem file's ``w``, not ``x``) and, in LaTeX, the pair
cases' meaning as mathematics, never as ``\\text{H >= H_l ...}``."""

from __future__ import annotations

import casadi as ca
import numpy as np

from mcpkit.mpcc import MPCC
from mcpkit.printing.mpcc.casadi_rows import vector_name


def bard1m_like() -> MPCC:
    """Bard's problem as MacMPEC's ``bard1m`` states it: variables ``w``, pairs ``H >= H_l ⟂ G``."""
    w = ca.SX.sym("w", 6)
    G = ca.vertcat(3 * w[0] - w[1] - 3, -w[0] + 0.5 * w[1] + 4, -w[0] - w[1] + 7)
    H = w[3:6]
    g = 1.5 * w[0] - 2 * w[1] + w[2] - w[3] + 0.5 * w[4] - w[5]
    f = (w[0] - 5) ** 2 + (2 * w[1] + 1) ** 2
    return MPCC.from_casadi(
        w, G, H, f=f, g=g, lbg=-2.0, ubg=-2.0, lbx=[0, 0, 0, -np.inf, -np.inf, -np.inf],
        lbH=[0.5, 0.5, 0.5], name="bard1m",
    )  # fmt: skip


def test_the_files_vector_name_is_used_throughout() -> None:
    m = bard1m_like()
    text = m.to_text()
    lines = text.splitlines()
    assert lines[0] == "MPCC 'bard1m': find w ∈ R^6 such that"
    assert "w_0" in lines[1]
    assert any(ln.strip().startswith("[0, 0, 0, -inf, -inf, -inf] <= w ") for ln in lines)
    assert lines[-1].startswith("sizes: w ∈ R^6")
    assert " x " not in text and "x ∈" not in text
    words = m.explain()
    assert "Bounds on w:" in words and "∂f/∂w" in words and "/∂x" not in words
    latex = m.to_latex()
    assert r"\text{find } w \in \mathbb{R}^{6}" in latex and r"\le w &&" in latex


def test_latex_pair_meaning_is_mathematics() -> None:
    latex = bard1m_like().to_latex()
    assert r"\text{H >=" not in latex and "G * H" not in latex
    assert r"H \ge H_l,\ G \ge 0,\ (H - H_l) \circ G = 0" in latex


def test_vector_name() -> None:
    assert vector_name(ca.SX.sym("w", 3), "x") == "w"
    assert vector_name(ca.SX.sym("lam", 1), "x") == "lam"
    assert vector_name(ca.MX.sym("u", 4), "x") == "u"
    mixed = ca.vertcat(ca.SX.sym("a"), ca.SX.sym("b"))
    assert vector_name(mixed, "x") == "x"
    assert vector_name(ca.SX(0, 1), "p") == "p"
