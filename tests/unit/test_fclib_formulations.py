"""The per-contact Alart-Curnier and FB-SOC equations of the FCLIB formulations (no solver).

Zeros are checked at hand-built sticking, sliding and separating contacts (closed forms), against
the independent Siconos error (:func:`friction_residual`), and the assembled Jacobian
:math:`J = A + BW` against central differences on the dense and the sparse path.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sps
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.engines.newton_contact import delassus_rho
from mcpkit.errors import MCPInputError, UnknownOptionError
from mcpkit.models.fclib import FCLIBFormulation, friction_residual, solve_fclib_file
from mcpkit.models.fclib_equations import (
    DENSE_N,
    ContactEquations,
    ContactLaw,
    contact_function,
)
from tests.conftest import SHARED_DATA

MU = 0.5
#: (r, u) solutions with mu = 0.5, exactly representable so that Alart-Curnier is exactly zero:
#: sticking (|r_t| = 0.559 < mu r_n = 1, u = 0), sliding (|r_t| = mu r_n, u_n = 0,
#: r_t = -u_t / 3), separation (r = 0, u_n > 0), separation at rest, grazing (r = 0, u_n = 0).
SOLUTIONS = {
    "sticking": ((2.0, 0.5, -0.25), (0.0, 0.0, 0.0)),
    "sliding": ((2.0, 0.0, -1.0), (0.0, 0.0, 3.0)),
    "separating": ((0.0, 0.0, 0.0), (1.5, -2.0, 0.75)),
    "separating_at_rest": ((0.0, 0.0, 0.0), (1.0, 0.0, 0.0)),
    "grazing": ((0.0, 0.0, 0.0), (0.0, 1.0, 0.0)),
}
#: (r, u) that violate the law: negative pressure, penetration without reaction, slip while
#: sticking, friction along the slip, reaction outside the cone, reaction with separation.
NOT_SOLUTIONS = {
    "negative_pressure": ((-1.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
    "penetration": ((0.0, 0.0, 0.0), (-1.0, 0.0, 0.0)),
    "slip_inside_cone": ((2.0, 0.5, -0.25), (0.0, 1.0, 0.0)),
    "friction_along_slip": ((2.0, 0.0, 1.0), (0.0, 0.0, 3.0)),
    "outside_cone": ((1.0, 2.0, 0.0), (0.0, 0.0, 0.0)),
    "reaction_while_separating": ((1.0, 0.0, 0.0), (1.0, 0.0, 0.0)),
    # u_n + mu |u_t| = 0.25 >= 0: accepted by a De Saxce-modified normal row, not by the law
    "penetration_while_slipping": ((0.0, 0.0, 0.0), (-0.25, 1.0, 0.0)),
}


def phi(law: str, r, u, rho_n: float = 1.0, rho_t: float = 1.0, mu: float = MU) -> np.ndarray:
    f = contact_function(law)
    return np.asarray(f(np.asarray(r, float), np.asarray(u, float), [mu, rho_n, rho_t])).reshape(-1)


def siconos_error(r, u, mu: float = MU) -> float:
    """The Siconos error of one contact with W = I and q = u - r (so that u = Wr + q), unnormalised."""
    r, u = np.asarray(r, float), np.asarray(u, float)
    q = u - r
    return friction_residual(np.eye(3), q, np.array([mu]), r) * max(np.linalg.norm(q), 1.0)


@pytest.mark.parametrize("case", sorted(SOLUTIONS))
@pytest.mark.parametrize("rho", [(1.0, 1.0), (0.25, 4.0)])
def test_alart_curnier_exactly_zero_at_closed_form_solutions(case, rho):
    r, u = SOLUTIONS[case]
    assert siconos_error(r, u) == pytest.approx(0.0, abs=1e-15)
    assert np.array_equal(phi("alart_curnier", r, u, *rho), np.zeros(3))


@pytest.mark.parametrize("case", sorted(SOLUTIONS))
def test_fb_soc_zero_at_closed_form_solutions(case):
    r, u = SOLUTIONS[case]
    np.testing.assert_allclose(phi("fb_soc", r, u), 0.0, atol=1e-14)
    np.testing.assert_allclose(phi("fb_soc", r, u, 0.2, 0.2), 0.0, atol=1e-14)


@pytest.mark.parametrize("case", sorted(NOT_SOLUTIONS))
@pytest.mark.parametrize("law", [law.value for law in ContactLaw])
def test_laws_nonzero_away_from_solutions(case, law):
    r, u = NOT_SOLUTIONS[case]
    assert siconos_error(r, u) > 1e-2
    assert np.abs(phi(law, r, u)).max() > 1e-2
    assert np.abs(phi(law, r, u, 0.25, 4.0)).max() > 1e-3


def test_alart_curnier_closed_form_values():
    """Outside the cone with u = 0 the tangential row is r_t - mu r_n r_t/|r_t|; with r_n - rho u_n < 0
    the normal row is r_n."""
    np.testing.assert_allclose(phi("alart_curnier", (1.0, 2.0, 0.0), (0, 0, 0)), [0.0, 1.5, 0.0])
    np.testing.assert_allclose(phi("alart_curnier", (1.0, 0.0, 0.0), (2.0, 0, 0), rho_n=1.0), [1.0, 0, 0])


@st.composite
def contact_solutions(draw):
    """A random solution (r, u) of one contact's Coulomb law, of a random kind, and mu."""
    mu = draw(st.floats(0.05, 1.5))
    kind = draw(st.sampled_from(["sticking", "sliding", "separating"]))
    scale = draw(st.floats(1e-3, 1e3))
    angle = draw(st.floats(0.0, 2 * np.pi))
    e = np.array([np.cos(angle), np.sin(angle)])
    if kind == "sticking":
        rn = scale
        rt = draw(st.floats(0.0, 0.99)) * mu * rn * e
        return mu, np.array([rn, *rt]), np.zeros(3)
    if kind == "sliding":
        rn, speed = scale, draw(st.floats(1e-3, 1e3))
        return mu, np.array([rn, *(-mu * rn * e)]), np.array([0.0, *(speed * e)])
    un = draw(st.floats(1e-3, 1e3))
    return mu, np.zeros(3), np.array([un, *(draw(st.floats(0.0, 1e3)) * e)])


@settings(max_examples=200, deadline=None)
@given(contact_solutions(), st.floats(1e-3, 1e3), st.floats(1e-3, 1e3))
def test_zero_of_both_laws_iff_siconos_error_zero(sol, rho_n, rho_t):
    """At random solutions both laws vanish (to rounding) for any rho > 0, as the Siconos error does;
    moving the normal velocity into penetration makes all three non-zero."""
    mu, r, u = sol
    size = max(np.abs(r).max(), max(rho_n, rho_t) * np.abs(u).max(), 1e-300)
    assert siconos_error(r, u, mu) <= 1e-12 * max(np.abs(r).max(), np.abs(u).max())
    assert np.abs(phi("alart_curnier", r, u, rho_n, rho_t, mu)).max() <= 1e-12 * size
    y_size = max(mu * np.abs(r).max(), rho_n * np.abs(u).max())
    assert np.abs(phi("fb_soc", r, u, rho_n, rho_t, mu)).max() <= 1e-7 * y_size
    bad = u - np.array([abs(u[0]) + 1.0, 0.0, 0.0])  # u_n < 0: penetration
    assert siconos_error(r, bad, mu) > 1e-3
    assert np.abs(phi("alart_curnier", r, bad, rho_n, rho_t, mu)).max() > 1e-6 * min(1.0, rho_n)
    assert np.abs(phi("fb_soc", r, bad, rho_n, rho_t, mu)).max() > 0


def test_delassus_rho_closed_form():
    W = np.zeros((6, 6))
    W[:3, :3] = [[2.0, 0.3, 0.0], [0.3, 4.0, 1.0], [0.0, 1.0, 4.0]]  # tangential block eigenvalues 3, 5
    W[3:, 3:] = [[0.0, 0, 0], [0, -1.0, 0], [0, 0, -1.0]]  # degenerate: falls back to 1/mean(positive diag)
    rho_n, rho_t = delassus_rho(W, 2)
    np.testing.assert_allclose(rho_n, [0.5, 1.0 / np.mean([2.0, 4.0, 4.0])])
    np.testing.assert_allclose(rho_t, [0.2, 1.0 / np.mean([2.0, 4.0, 4.0])])


def _random_problem(nc: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    H = rng.normal(size=(3 * nc, 3 * nc // 2 + 3))
    W = H @ H.T / H.shape[1]
    W[np.abs(W) < 0.3] = 0.0  # symmetric, sparse-ish, positive diagonal: test data for J only
    W = 0.5 * (W + W.T) + 0.5 * np.eye(3 * nc)
    q = rng.normal(size=3 * nc)
    mu = rng.uniform(0.1, 0.9, nc)
    return W, q, mu


@pytest.mark.parametrize("nc", [4, DENSE_N // 3 + 20])
@pytest.mark.parametrize("law", [law.value for law in ContactLaw])
def test_jacobian_matches_central_differences(nc, law):
    """J = diag(w)(A + BW)s_r, on the dense (small) and the sparse (large) assembly path."""
    W, q, mu = _random_problem(nc, seed=nc)
    eq = ContactEquations(W, q, mu, law, eps=1e-3)
    assert eq.dense == (3 * nc <= DENSE_N)
    z = np.random.default_rng(1).normal(size=eq.n)
    J = eq.J(z)
    Jd = J.toarray() if sps.issparse(J) else np.asarray(J)
    if sps.issparse(J):
        assert J.nnz == eq.pattern.nnz  # values exactly on the declared structure
    cols = np.random.default_rng(2).choice(eq.n, size=12, replace=False)
    h = 1e-6
    for j in cols:
        e = np.zeros(eq.n)
        e[j] = h
        fd = (eq.F(z + e) - eq.F(z - e)) / (2 * h)
        np.testing.assert_allclose(Jd[:, j], fd, rtol=1e-5, atol=1e-6 * np.abs(Jd).max())


def test_system_zero_at_a_planted_solution():
    """Plant a solution: choose r (sticking, sliding and separated contacts) and u, set q = u - Wr.
    F(r / s_r) vanishes and so does the Siconos error; u is recovered."""
    W, _, _ = _random_problem(3, seed=3)
    r = np.array([*SOLUTIONS["sticking"][0], *SOLUTIONS["sliding"][0], *SOLUTIONS["separating"][0]])
    u = np.array([*SOLUTIONS["sticking"][1], *SOLUTIONS["sliding"][1], *SOLUTIONS["separating"][1]])
    q = u - W @ r
    mu = np.full(3, MU)
    assert friction_residual(W, q, mu, r) < 1e-14
    for law in ContactLaw:
        eq = ContactEquations(W, q, mu, law)
        z = r / eq.s_r
        np.testing.assert_allclose(eq.velocities(z), u, atol=1e-12)
        assert np.abs(eq.F(z)).max() < 1e-13
        assert np.abs(eq.F(z + 1e-3)).max() > 1e-6


def test_fb_soc_needs_friction():
    W, q, _ = _random_problem(2, seed=4)
    with pytest.raises(MCPInputError):
        ContactEquations(W, q, np.array([0.5, 0.0]), "fb_soc")
    ContactEquations(W, q, np.array([0.5, 0.0]), "alart_curnier")  # mu = 0 is frictionless AC


FILE = SHARED_DATA / "fclib-siconos" / "Rover1039.hdf5"


@pytest.mark.skipif(not FILE.is_file(), reason="shared FCLIB file not present")
def test_bad_options_raise_before_solving():
    with pytest.raises(UnknownOptionError):
        solve_fclib_file(FILE, formulation="alart-curnier-x")
    with pytest.raises(UnknownOptionError):
        solve_fclib_file(FILE, tolerance=1e-8)
    with pytest.raises(MCPInputError, match="semismooth Newton"):
        solve_fclib_file(FILE, formulation=FCLIBFormulation.ALART_CURNIER, method="fb")
    with pytest.raises(MCPInputError, match="backend"):
        solve_fclib_file(FILE, formulation="fb_soc", backend="pyomo")


def test_formulation_and_law_values():
    assert {f.value for f in FCLIBFormulation} == {"ncp", "alart_curnier", "fb_soc"}
    assert {law.value for law in ContactLaw} == {"alart_curnier", "fb_soc"}
