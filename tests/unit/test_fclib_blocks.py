"""FCLIB problems declared at block level (no solver): structure, printing, and that the declared
equations are the ones the Newton path evaluates (:class:`ContactEquations`)."""

from __future__ import annotations

import math
from pathlib import Path

import h5py
import numpy as np
import pytest
import scipy.sparse as sps
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit import MCP
from mcpkit.engines.newton_contact import delassus_rho
from mcpkit.errors import ShapeError
from mcpkit.models.fclib import FCLIBProblem, fclib_mcp, fclib_ncp, load_fclib
from mcpkit.models.fclib_equations import ContactEquations
from mcpkit.problems import blocks as bx
from tests.conftest import SHARED_DATA

RNG = np.random.default_rng(13)


def _spd(n: int, rng: np.random.Generator) -> np.ndarray:
    A = rng.normal(size=(n, n))
    return A @ A.T + n * np.eye(n)


def _write_fclib(path: Path, W: np.ndarray, q: np.ndarray, mu: np.ndarray) -> Path:
    """An FCLIB local problem in triplet form (``nz >= 0``)."""
    i, j = np.nonzero(W)
    with h5py.File(path, "w") as f:
        f["fclib_local/W/i"] = i.astype(np.int32)
        f["fclib_local/W/p"] = j.astype(np.int32)
        f["fclib_local/W/x"] = W[i, j]
        f["fclib_local/W/m"] = np.array([W.shape[0]], np.int32)
        f["fclib_local/W/n"] = np.array([W.shape[1]], np.int32)
        f["fclib_local/W/nz"] = np.array([i.size], np.int32)
        f["fclib_local/vectors/q"] = q
        f["fclib_local/vectors/mu"] = mu
        f["fclib_local/spacedim"] = np.array([3], np.int32)
    return path


def _problem(nc: int, rng: np.random.Generator = RNG) -> FCLIBProblem:
    return FCLIBProblem(_spd(3 * nc, rng), rng.normal(size=3 * nc), rng.uniform(0.1, 0.9, nc))


def _by_component(x: np.ndarray) -> np.ndarray:
    """FCLIB's contact order ``(n, t, o)_i`` regrouped by component ``(n..., t..., o...)``."""
    return np.concatenate([x[0::3], x[1::3], x[2::3]])


AC_LINES = [
    "r_n - p_n = 0   (r_n free)",
    "r_t - theta * x_t = 0   (r_t free)",
    "r_o - theta * x_o = 0   (r_o free)",
]
AC_WHERE = [
    "u_n = W_nn @ r_n + W_nt @ r_t + W_no @ r_o + q_n",
    "u_t = W_tn @ r_n + W_tt @ r_t + W_to @ r_o + q_t",
    "u_o = W_on @ r_n + W_ot @ r_t + W_oo @ r_o + q_o",
    "x_n = r_n - rho_n * u_n",
    "p_n = max(x_n, 0)",
    "x_t = r_t - rho_t * u_t",
    "x_o = r_o - rho_t * u_o",
    "theta = mu * p_n / max(mu * p_n, sqrt(x_t**2 + x_o**2))",
]


def _rows(text: str) -> list[str]:
    """The conditions of a block-level print (the part before the size annotation)."""
    return [ln.strip().split("    ")[0].strip() for ln in text.splitlines() if ln.startswith("  ")]


def test_two_contact_file_prints_alart_curnier_at_block_level(tmp_path):
    W = _spd(6, RNG)
    path = _write_fclib(tmp_path / "two.hdf5", W, RNG.normal(size=6), np.array([0.3, 0.5]))
    m = fclib_mcp(load_fclib(path))
    text = m.to_text()
    assert text.splitlines()[0] == "MCP 'fclib_alart_curnier': find r_n, r_t, r_o such that"
    rows = _rows(text)
    assert rows[:3] == AC_LINES
    assert rows[3:11] == AC_WHERE
    given_ = set(rows[11:])
    assert {"q_n ∈ R^n_c", "mu ∈ R^n_c", "rho_n ∈ R^n_c", "rho_t ∈ R^n_c"} <= given_
    assert "W_nt ∈ R^(n_c x n_c) (constant, sparse)" in given_
    assert text.splitlines()[-1] == "sizes: n_c = 2"
    assert [b.name for b in m.blocks] == ["r_n", "r_t", "r_o"]
    assert np.all(np.isinf(m.lb)) and np.all(np.isinf(m.ub))
    latex = m.to_latex()
    assert r"\theta = \mu \circ p_n \oslash \max\left(\mu \circ p_n," in latex
    assert r"u_n = W_{nn} r_n + W_{nt} r_t + W_{no} r_o + q_n" in latex
    words = m.explain()
    assert "r_n ∈ R^n_c (2 pairs): free" in words and "Definition: p_n = max(x_n, 0)" in words


def test_fb_soc_prints_de_saxce_velocity_and_jordan_root():
    text = fclib_mcp(_problem(2), "fb_soc").to_text()
    rows = _rows(text)
    assert rows[0] == "mu * r_n + y_n - (lam_1 + lam_2) / 2 = 0   (r_n free)"
    assert "s = sqrt(u_t**2 + u_o**2)" in rows
    assert "y_n = rho_n * (u_n + mu * s)" in rows
    assert "rho_t ∈ R^n_c" not in rows  # one rho in FB-SOC


def test_ncp_form_prints_eq9_blocks():
    m, _, _ = fclib_ncp(_problem(2))
    rows = _rows(m.to_text())
    assert rows[:5] == [
        "0 <= r_n ⟂ u_n >= 0",
        "mu * r_n * u_t + r_t * sigma = 0   (r_t free)",
        "mu * r_n * u_o + r_o * sigma = 0   (r_o free)",
        "0 <= sigma ⟂ (mu * r_n)**2 - r_t**2 - r_o**2 >= 0",
        "u_n - (Wh_nn @ r_n + Wh_nt @ r_t + Wh_no @ r_o + qh_n) = 0   (u_n free)",
    ]


def test_print_does_not_grow_with_contacts():
    small, large = fclib_mcp(_problem(2)).to_text(), fclib_mcp(_problem(40)).to_text()
    assert len(small.splitlines()) == len(large.splitlines())
    assert small.replace("n_c = 2", "n_c = 40") == large


def test_zero_blocks_of_w_are_left_out():
    """A contact-diagonal W with no normal-tangential coupling declares W_nn, W_tt, W_oo only."""
    nc = 3
    W = np.diag(RNG.uniform(1, 2, 3 * nc))
    m = fclib_mcp(FCLIBProblem(W, RNG.normal(size=3 * nc), np.full(nc, 0.4)))
    rows = _rows(m.to_text())
    assert "u_n = W_nn @ r_n + q_n" in rows and "u_t = W_tt @ r_t + q_t" in rows
    assert not any(r.startswith("W_nt") for r in rows)


@pytest.mark.parametrize("law", ["alart_curnier", "fb_soc"])
@pytest.mark.parametrize("nc", [1, 2, 7])
def test_declaration_equals_the_solved_equations(law, nc):
    r"""F of the declared MCP at r is :math:`\phi(r, Wr + q)` of ContactEquations (unscaled, unweighted)."""
    prob = _problem(nc)
    m = fclib_mcp(prob, law)
    eq = ContactEquations(prob.W, prob.q, prob.mu, law)
    for scale in (1e-3, 1.0, 1e3):
        z = RNG.normal(size=eq.n) * scale
        z[: 3 * (nc // 2) : 3] = 0.0  # some contacts at r_n = 0
        phi = eq.F(z) / eq._row_w
        F = m.evaluate(_by_component(eq.reactions(z)))
        np.testing.assert_allclose(F, _by_component(phi), rtol=1e-11, atol=1e-12 * np.abs(phi).max())


def test_declared_rho_is_delassus_rho():
    prob = _problem(3)
    m = fclib_mcp(prob)
    pv = {b.name: m.parameter_values[b.slice] for b in m.parameter_blocks}
    rho_n, rho_t = delassus_rho(prob.W, 3)
    np.testing.assert_array_equal(pv["rho_n"], rho_n)
    np.testing.assert_array_equal(pv["rho_t"], rho_t)
    np.testing.assert_array_equal(pv["mu"], prob.mu)
    np.testing.assert_array_equal(pv["q_t"], prob.q[1::3])


def test_ncp_declaration_values():
    """The block NCP evaluates eq (9) entry by entry (scaled W and q)."""
    prob = _problem(3)
    nc = prob.nc
    m, s_r, s_u = fclib_ncp(prob)
    z = RNG.normal(size=m.n)
    zb = m.split(z)
    F = m.split(m.evaluate(z))
    rn, rt, ro, sg = zb["r_n"], zb["r_t"], zb["r_o"], zb["sigma"]
    u = np.column_stack([zb["u_n"], zb["u_t"], zb["u_o"]]).reshape(-1)
    r = np.column_stack([rn, rt, ro]).reshape(-1)
    wrq = prob.W @ r * (s_r / s_u) + prob.q / s_u
    mu = prob.mu
    np.testing.assert_allclose(F["r_n"], zb["u_n"], rtol=1e-14)
    np.testing.assert_allclose(F["r_t"], mu * rn * zb["u_t"] + rt * sg, rtol=1e-12)
    np.testing.assert_allclose(F["sigma"], (mu * rn) ** 2 - rt**2 - ro**2, rtol=1e-12)
    np.testing.assert_allclose(
        np.column_stack([F["u_n"], F["u_t"], F["u_o"]]).reshape(-1), u - wrq, rtol=1e-10, atol=1e-12
    )
    assert m.n == 7 * nc and np.all(m.lb[:nc] == 0.0)


# ------------------------------------------------------------------ the maximum node
def test_maximum_evaluates_prints_and_is_not_affine():
    m = MCP("mx")
    x = m.add_variable_block("x", 4, lb=-math.inf, dim="n")
    p = m.add_parameter_block("p", 4, [0.0, 1.0, -1.0, 2.0])
    e = bx.maximum(x - p, 0)
    m.add_functions("x", x - e)
    assert not bx.is_affine(e) and bx.is_affine(bx.maximum(p, 1.0))
    z = np.array([3.0, 0.5, -2.0, 2.0])
    expected = z - np.maximum(z - m.parameter_values, 0.0)
    np.testing.assert_allclose(bx.evaluate(m.function_block("x").expr, z, m.parameter_values), expected)
    np.testing.assert_allclose(m.evaluate(z), expected, rtol=1e-15)  # CasADi: (a + b + |a - b|)/2
    assert str(e) == "max(x - p, 0)"
    assert bx.expand(e)[0].func.__name__ == "Max"
    with pytest.raises(ShapeError):
        bx.maximum(bx.const(sps.eye(4)), x)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-1e6, 1e6), min_size=3, max_size=3),
    st.lists(st.floats(-1e6, 1e6), min_size=3, max_size=3),
)
def test_maximum_default_backend_matches_numpy(a, b):
    """The primitives' fallback (a + b + |a - b|)/2 of Backend.maximum equals np.maximum (to rounding)."""

    class Plain(bx.NumpyValues):
        maximum = bx.Backend.maximum

    m = MCP("mx")
    x = m.add_variable_block("x", 3, lb=-math.inf)
    p = m.add_parameter_block("p", 3)
    e = bx.maximum(x, p)
    got = bx.Evaluator(Plain(np.array(a), np.array(b))).value(e)
    np.testing.assert_allclose(got, np.maximum(a, b), rtol=1e-15, atol=1e-9)


@pytest.mark.parametrize("doc", ["printing.md", "fclib.md"])
def test_docs_show_the_generated_printout(doc):
    """The docs' FCLIB printouts are generated: they must equal today's output."""
    path = SHARED_DATA / "fclib-siconos" / "Rover4144.hdf5"
    if not path.is_file():
        pytest.skip("shared FCLIB files not present")
    text = (Path(__file__).resolve().parents[2] / "docs" / doc).read_text()
    prob = load_fclib(path)
    assert fclib_mcp(prob).to_text() in text
    if doc == "printing.md":
        assert fclib_mcp(prob).to_latex() in text
        assert fclib_mcp(prob, "fb_soc").to_text() in text
        assert fclib_ncp(prob)[0].to_text() in text
        assert fclib_mcp(prob).explain() in text


def test_direct_contact_newton_solves_the_declared_law():
    """``mcpkit.engines.newton_contact`` writes the Alart–Curnier law out by hand: it must equal
    the declared (printed) law, so the printout stays the solved system on that path too."""
    nc_mod = pytest.importorskip("mcpkit.engines.newton_contact")
    phi_fn = getattr(nc_mod, "alart_curnier_phi", None)
    if phi_fn is None:
        pytest.skip("newton_contact has no alart_curnier_phi")
    prob = _problem(6)
    m = fclib_mcp(prob)
    rho_n, rho_t = delassus_rho(prob.W, prob.nc)
    for k in range(5):
        r = RNG.normal(size=3 * prob.nc) * 10.0**k
        r[0:6:3] = 0.0
        u = prob.W @ r + prob.q
        phi = phi_fn(r.reshape(-1, 3), u.reshape(-1, 3), prob.mu, rho_n, rho_t[:, None]).reshape(-1)
        np.testing.assert_allclose(
            m.evaluate(_by_component(r)), _by_component(phi), rtol=1e-12, atol=1e-12 * 10.0**k
        )


def test_problem_prints_itself():
    prob = _problem(2)
    assert prob.to_text("alart_curnier") == fclib_mcp(prob).to_text()
    assert prob.to_text("ncp") == fclib_ncp(prob)[0].to_text()
    assert prob.explain("fb_soc") == fclib_mcp(prob, "fb_soc").explain()


def test_problem_prints_the_cone_complementarity_problem_by_default():
    """K* ∋ û ⟂ r ∈ K with û = u + mu ||u_t|| e_n, u = W r + q; the same lines for any n_c."""
    prob = _problem(2)
    text = prob.to_text()
    assert "K* ∋ û ⟂ r ∈ K" in text and "u = W @ r + q" in text
    assert "û_i = u_i + mu_i * ||(u_t,i, u_o,i)|| * e_n" in text
    assert "K_i = {r_i : ||(r_t,i, r_o,i)|| <= mu_i * r_n,i}" in text
    assert text.splitlines()[-1] == "sizes: n_c = 2"
    assert len(_problem(40).to_text().splitlines()) == len(text.splitlines())
    latex = prob.to_latex()
    assert r"K^* \ni \hat u \perp r \in K" in latex and r"\hat u_i = u_i + \mu_i" in latex
    assert prob._repr_latex_() == f"$${latex}$$"
    assert "Alart–Curnier" in prob.explain() and "cone" in prob.explain()


def test_a_sparse_problem_is_checked_without_densifying_it() -> None:
    """``solve_fclib``'s input check densified a sparse W (729 MB at 3,000 contacts) only to look
    for NaN; it now reads the stored values."""
    import numpy as np
    import pytest
    import scipy.sparse as sps

    from mcpkit.errors import MCPInputError
    from mcpkit.models.fclib import FCLIBProblem, _check_problem

    class NoDense(sps.csc_array):
        def toarray(self, *a: object, **k: object) -> np.ndarray:  # pragma: no cover - the defect
            raise AssertionError("densified")

    nc = 50
    W = NoDense(sps.eye(3 * nc, format="csc") * 2.0)
    _check_problem(FCLIBProblem(W, np.ones(3 * nc), np.full(nc, 0.3)))
    W.data[4] = np.nan
    with pytest.raises(MCPInputError, match="W contains NaN or inf"):
        _check_problem(FCLIBProblem(W, np.ones(3 * nc), np.full(nc, 0.3)))
