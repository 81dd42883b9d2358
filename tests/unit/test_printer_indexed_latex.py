r"""Component names of LaTeX-named blocks: the index never makes a double subscript.

A block named ``\beta_f`` of size 2 used to print ``\beta_f_{0}``, which MathJax and LaTeX
reject; the index now joins a trailing subscript (``\beta_{f,0}``) or the stem is braced. Each
printed name is parsed by matplotlib's mathtext, which refuses double subscripts as LaTeX does.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit import MCP
from mcpkit.printing.mcp import _indexed_latex

mathtext = pytest.importorskip("matplotlib.mathtext")
PARSER = mathtext.MathTextParser("path")


def _parses(tex: str) -> bool:
    try:
        PARSER.parse(f"${tex}$")
    except ValueError:
        return False
    return True


@pytest.mark.parametrize(
    ("stem", "expected"),
    [
        (r"\beta_f", r"\beta_{f,0}"),
        (r"\beta_{f}", r"\beta_{f,0}"),
        (r"\hat W_{nt}", r"\hat W_{nt,0}"),
        (r"x_\alpha", r"x_{\alpha,0}"),
        (r"\lambda^{+}_n", r"\lambda^{+}_{n,0}"),
        (r"x_{ab}^{2}", r"{x_{ab}^{2}}_{0}"),
        (r"r_n^{T}", r"{r_n^{T}}_{0}"),
        ("x", "x_{0}"),
        ("x^2", "x^2_{0}"),
        (r"\mathbf{x}", r"\mathbf{x}_{0}"),
    ],
)
def test_index_joins_or_braces(stem: str, expected: str) -> None:
    assert _indexed_latex(stem, 0) == expected
    assert _parses(stem) and _parses(expected)


BASES = ["x", r"\beta", r"\hat W", r"\mathbf{v}", "r"]
SCRIPTS = ["f", "{nt}", r"\alpha", "{f,t}", "2", "{+}", "T"]


@settings(max_examples=200, deadline=None)
@given(
    base=st.sampled_from(BASES),
    scripts=st.lists(
        st.tuples(st.sampled_from("_^"), st.sampled_from(SCRIPTS)), max_size=2, unique_by=lambda t: t[0]
    ),
    k=st.one_of(st.integers(0, 99).map(str), st.just("3,4")),
)
def test_indexed_names_are_valid_latex(base: str, scripts: list[tuple[str, str]], k: str) -> None:
    """Any stem LaTeX accepts (at most one sub- and one superscript) stays valid with the index,
    and the index is visible in a subscript."""
    stem = base + "".join(kind + arg for kind, arg in scripts)
    assert _parses(stem)
    out = _indexed_latex(stem, k)
    assert _parses(out), out
    assert re.search(r"_\{[^{}]*" + re.escape(k) + r"\}$", out), out


def test_expanded_print_of_a_subscripted_block() -> None:
    m = MCP("t")
    b = m.add_variable_block("beta_f", 2, lb=0.0, latex=r"\beta_f")
    m.add_functions("beta_f", b - 1.0)
    tex = m.to_latex(expand=True)
    assert r"\beta_f_{" not in tex
    assert r"0 \le \beta_{f,0} \perp \beta_{f,0} - 1 \ge 0" in tex
    assert r"\beta_{f,1}" in tex
