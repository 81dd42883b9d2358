"""The entrywise printer: rows in the order they are written, long LaTeX rows broken, and a header
that reads "Given the parameters ..., find z = (...) such that"."""

from __future__ import annotations

import math
import re

import numpy as np

import mcpkit
from mcpkit.frontends.demo import particle_step_mcp
from mcpkit.printing.mcp import ROW_WIDTH, _visible


def test_terms_follow_the_written_order() -> None:
    # declared as m (v - v0) - h f_ext - p_f; sympy alone printed -0.01 f_ext[0] - p_f[0] - v0[0] + v[0]
    text = particle_step_mcp().to_text()
    assert "  v[0] - v0[0] - 0.01 f_ext[0] - p_f[0] = 0   (v[0] free)" in text.splitlines()
    latex = particle_step_mcp().to_latex()
    assert r"v_{0} - v^{0}_{0} - 0.01 f^{ext}_{0} - p_{f,0} = 0" in latex


def test_parameter_terms_before_coupled_unknowns() -> None:
    m = mcpkit.MCP("row")
    v = m.add_variables("v", 1, lb=-math.inf)
    bn = m.add_variables("beta_n", 1, lb=0.0)
    psi = m.add_parameters("psi", 1, value=0.0)
    h = m.add_parameters("h", 1, value=0.01)
    m.add_functions("v", [v[0] - bn[0]])
    m.add_functions("beta_n", [psi[0] / h[0] + v[0]])  # written psi/h + v; sympy prints v + psi/h
    assert "0 <= beta_n ⟂ psi/h + v >= 0" in m.to_text()


def particle_lcp(n_d: int) -> mcpkit.MCP:
    phi = 2 * np.pi * np.arange(n_d) / n_d
    D = np.round(np.vstack([np.cos(phi), np.sin(phi), np.zeros(n_d)]), 12)
    m = mcpkit.MCP(f"particle_lcp_{n_d}")
    v = m.add_variables("v", 3, lb=-math.inf, latex=r"\nu")
    bn = m.add_variables("beta_n", 1, lb=0.0, latex=r"\beta_n")
    bf = m.add_variables("beta_f", n_d, lb=0.0, latex=r"{\beta_f}")
    sig = m.add_variables("sigma", 1, lb=0.0, latex=r"\sigma")
    vl = m.add_parameters("v_prev", 3, value=[1.0, 0.5, 0.0], latex=r"\nu^{\ell}")
    h = m.add_parameters("h", 1, value=0.01)
    mu = m.add_parameters("mu", 1, value=0.3, latex=r"\mu")
    Dbf = [sum(D[i, j] * bf[j] for j in range(n_d)) for i in range(3)]
    m.add_functions("v", [v[i] - vl[i] - Dbf[i] + (h[0] * 9.81 - bn[0] if i == 2 else 0) for i in range(3)])
    m.add_functions("beta_n", [v[2]])
    m.add_functions("beta_f", [sum(D[i, j] * v[i] for i in range(3)) + sig[0] for j in range(n_d)])
    m.add_functions("sigma", [mu[0] * bn[0] - sum(bf)])
    return m


def test_long_latex_rows_are_broken_and_text_keeps_one_line_per_pair() -> None:
    m = particle_lcp(16)
    latex = m.to_latex(max_rows=100)
    body = latex.split(r"\begin{aligned}")[1].split(r"\end{aligned}")[0]
    rows = [r for r in body.split("\\\\") if r.strip()]
    widest = max(_visible(r, True) for r in rows)
    assert r"&\qquad" in body  # the velocity rows and the sigma row continue on new rows
    assert widest <= ROW_WIDTH + 30  # one term (and the closing "= 0 (free)") may pass the budget
    # every term is still there: 16 beta_f in the sigma row, wherever it is broken
    sigma_row = body[body.index(r"0 \le \sigma \perp") :]
    assert len(re.findall(r"\{\\beta_f\}_\{\d+\}", sigma_row)) == 16
    assert len(m.to_text(max_rows=100).splitlines()) == m.n + 1


def test_header_reads_given_then_find() -> None:
    m = particle_lcp(4)
    assert m.to_text().splitlines()[0] == (
        "MCP 'particle_lcp_4': given parameters (v_prev, h, mu), "
        "find z = (v, beta_n, beta_f, sigma) such that"
    )
    latex = m.to_latex()
    # the sentence is the aligned block's first row (beside the block it ran off the page)
    head = r"\text{Given the parameters } \nu^{\ell}, h, \mu,\ \text{find } z = ("
    assert latex.startswith("\\begin{aligned}\n  &" + head)
    free = mcpkit.MCP.lcp(np.eye(2), [1.0, -1.0])
    assert free.to_latex().startswith("\\begin{aligned}\n  &" + r"\text{Find } z = (z)\ \text{such that} \\")
