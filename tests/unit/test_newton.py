"""The semismooth Newton engine's pieces without a solve: the box Fischer-Burmeister map, its
Jacobian element, the linear algebra of H = D_a + D_b J, and the typed errors."""

from __future__ import annotations

import math

import casadi as ca
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcpkit
from mcpkit.engines.newton import BoxFischerBurmeister, NewtonRoute, fischer_burmeister
from mcpkit.engines.newton_linalg import NewtonSystem
from mcpkit.errors import BoundsError, MCPInputError, NonFiniteError, ShapeError
from mcpkit.lowering.casadi import CasadiMCP
from mcpkit.orchestration.planner import resolve
from mcpkit.problems.bounds import BOX, FIXED, FREE, LOWER, UPPER, bound_kinds
from mcpkit.solving.options import SolveOptions
from mcpkit.solving.residuals import natural_residual_vector

INF = math.inf
#: One component of every bound type: (l, u) and its kind.
BOUNDS = [
    ((-INF, INF), FREE),
    ((-1.0, INF), LOWER),
    ((-INF, 2.0), UPPER),
    ((-1.0, 2.0), BOX),
    ((0.5, 0.5), FIXED),
]

finite = st.floats(-50, 50, allow_nan=False, allow_infinity=False)
positive = st.floats(1e-3, 50)


def _fb(lb: list[float], ub: list[float]) -> BoxFischerBurmeister:
    return BoxFischerBurmeister(np.array(lb, dtype=float), np.array(ub, dtype=float))


def test_bound_kinds_match_the_bounds() -> None:
    (lb, ub), kinds = zip(*[b for b, _ in BOUNDS], strict=True), [k for _, k in BOUNDS]
    assert bound_kinds(np.array(lb), np.array(ub)).tolist() == kinds


@pytest.mark.parametrize(
    ("lb", "ub", "error"),
    [
        ([0.0, 1.0], [1.0, 0.0], BoundsError),  # l > u
        ([INF], [INF], BoundsError),  # l = +inf
        ([-INF], [-INF], BoundsError),  # u = -inf
        ([math.nan], [1.0], NonFiniteError),
        ([0.0, 0.0], [1.0], ShapeError),
    ],
)
def test_bad_bounds_are_typed_errors(lb: list[float], ub: list[float], error: type[Exception]) -> None:
    with pytest.raises(error):
        bound_kinds(np.array(lb), np.array(ub))


def test_fischer_burmeister_values() -> None:
    a = np.array([0.0, 3.0, 0.0, 2.0, -1.0, 1e8])
    b = np.array([5.0, 0.0, -2.0, 2.0, 0.0, 1e-8])
    # zero exactly on the complementarity set, nonzero elsewhere; no cancellation at (1e8, 1e-8)
    expected = np.hypot(a, b) - a - b
    expected[-1] = -2e-8 * 1e8 / (math.hypot(1e8, 1e-8) + 1e8 + 1e-8)
    np.testing.assert_allclose(fischer_burmeister(a, b), expected, rtol=1e-12, atol=0)
    assert fischer_burmeister(a, b)[:2].tolist() == [0.0, 0.0]
    assert (fischer_burmeister(a, b)[2:5] != 0).all()


@settings(max_examples=200, deadline=None)
@given(value=finite, slack=positive, which=st.integers(0, 2))
def test_phi_is_exactly_zero_at_every_solution_state(value: float, slack: float, which: int) -> None:
    """For each bound type, a complementary pair (z_i, F_i) gives Phi_i == 0 exactly."""
    cases = {
        # lower only, l = -1: at the bound with F >= 0, or above it with F = 0
        LOWER: [(-1.0, slack), (-1.0 + slack, 0.0), (-1.0, 0.0)],
        # upper only, u = 2: at the bound with F <= 0, or below it with F = 0
        UPPER: [(2.0, -slack), (2.0 - slack, 0.0), (2.0, 0.0)],
        # box [-1, 2]: lower with F >= 0, upper with F <= 0, interior with F = 0
        BOX: [(-1.0, slack), (2.0, -slack), (-1.0 + 3.0 * min(slack, 49.0) / 50.0, 0.0)],
        FREE: [(value, 0.0)] * 3,
        FIXED: [(0.5, value)] * 3,
    }
    for (lo, hi), kind in BOUNDS:
        z, F = cases[kind][which]
        Phi = _fb([lo], [hi]).residual(np.array([z]), np.array([F]))
        assert Phi[0] == 0.0, (kind, z, F, Phi)


#: F exactly zero or of a size that z - F does not absorb (the natural residual is then exact).
F_VALUES = st.one_of(st.just(0.0), st.floats(1e-3, 50), st.floats(-50, -1e-3))


@settings(max_examples=300, deadline=None)
@given(t=st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0, 1)), F=F_VALUES)
def test_phi_vanishes_exactly_where_the_natural_residual_does(t: float, F: float) -> None:
    """On the box, Phi_i = 0 iff the pair is complementary (natural residual 0); one-sided pairs
    also satisfy Tseng's bound (2 - sqrt 2) r <= |phi| <= (2 + sqrt 2) r."""
    for (lo, hi), kind in BOUNDS:
        if kind == FIXED:
            z = lo
        else:
            a, b = (lo if math.isfinite(lo) else -30.0), (hi if math.isfinite(hi) else 30.0)
            z = a + t * (b - a)
        lb, ub = np.array([lo]), np.array([hi])
        r = natural_residual_vector(np.array([z]), np.array([F]), lb, ub)[0]
        Phi = abs(_fb([lo], [hi]).residual(np.array([z]), np.array([F]))[0])
        if kind == FIXED:
            assert Phi == 0.0 and r == 0.0
            continue
        assert (Phi == 0.0) == (r == 0.0), (kind, z, F, Phi, r)
        if kind in (LOWER, UPPER):
            assert (
                (2 - math.sqrt(2)) * r * (1 - 1e-12) <= Phi <= (2 + math.sqrt(2)) * r * (1 + 1e-12) + 1e-300
            )


def _random_problem(seed: int, n: int = 10) -> tuple[np.ndarray, np.ndarray, callable, callable]:
    """Bounds of every type and a smooth F(z) = M z + q + 0.1 z^3 with its Jacobian."""
    rng = np.random.default_rng(seed)
    kinds = rng.integers(0, 5, size=n)
    lb = np.array([BOUNDS[k][0][0] for k in kinds])
    ub = np.array([BOUNDS[k][0][1] for k in kinds])
    M = rng.standard_normal((n, n))
    q = rng.standard_normal(n)

    def F(z: np.ndarray) -> np.ndarray:
        return M @ z + q + 0.1 * z**3

    def J(z: np.ndarray) -> np.ndarray:
        return M + np.diag(0.3 * z**2)

    return lb, ub, F, J


@pytest.mark.parametrize("seed", range(8))
def test_jacobian_element_matches_finite_differences_at_nondegenerate_points(seed: int) -> None:
    lb, ub, F, J = _random_problem(seed)
    fb = BoxFischerBurmeister(lb, ub)
    rng = np.random.default_rng(100 + seed)
    for _ in range(5):
        z = rng.uniform(-3, 3, size=lb.size)  # inside and outside the bounds
        Jz = J(z)
        Phi, da, db = fb.jacobian(z, F(z), lambda v, Jz=Jz: Jz @ v)
        np.testing.assert_array_equal(Phi, fb.residual(z, F(z)))
        H = np.diag(da) + db[:, None] * Jz
        h = 1e-6
        fd = np.empty_like(H)
        for j in range(z.size):
            e = np.zeros(z.size)
            e[j] = h
            fd[:, j] = (fb.residual(z + e, F(z + e)) - fb.residual(z - e, F(z - e))) / (2 * h)
        np.testing.assert_allclose(H, fd, rtol=1e-5, atol=1e-6)


def test_degenerate_pairs_get_the_directional_limit_element() -> None:
    """At a = b = 0 (every level and bound type), H e_beta is the one-sided directional derivative
    of Phi along e_beta (the De Luca-Facchinei-Kanzow element)."""
    M = np.array([[2.0, 1.0, 0.0, 0.5], [0.5, 3.0, -1.0, 0.0], [1.0, 0.0, 2.0, 1.0], [0.0, 1.0, 0.5, 4.0]])
    lb = np.array([0.0, -INF, 0.0, 0.0])
    ub = np.array([INF, 1.0, 1.0, 2.0])
    z = np.array([0.0, 1.0, 1.0, 0.0])  # each pair degenerate: at a bound with F = 0
    q = -M @ z  # F(z) = M z + q = 0
    q[3] += 0.0
    fb = BoxFischerBurmeister(lb, ub)
    F = M @ z + q
    assert np.all(F == 0)
    calls: list[np.ndarray] = []

    def jv(v: np.ndarray) -> np.ndarray:
        calls.append(v.copy())
        return M @ v

    Phi, da, db = fb.jacobian(z, F, jv)
    assert len(calls) == 1 and calls[0].tolist() == [1.0, 1.0, 1.0, 1.0]
    H = np.diag(da) + db[:, None] * M
    e = calls[0]
    t = 1e-8
    directional = (fb.residual(z + t * e, M @ (z + t * e) + q) - Phi) / t
    np.testing.assert_allclose(H @ e, directional, rtol=1e-6, atol=1e-6)
    assert np.isfinite(H).all()


# ------------------------------------------------------------------------ linear algebra
@pytest.mark.parametrize("dense", [True, False])
def test_newton_system_assembles_factorises_and_solves(dense: bool) -> None:
    import scipy.sparse as sps

    rng = np.random.default_rng(4)
    n = 40
    J = sps.random(n, n, density=0.1, random_state=5, format="csc") + sps.diags(rng.uniform(1, 2, n))
    J = J.tocsc()
    J[3, 3] = 0.0  # an entry of the diagonal that is not in the pattern
    J.eliminate_zeros()
    J.sort_indices()
    system = NewtonSystem(n, J.indptr, J.indices, dense=dense)
    assert system.dense is dense
    system.set_jacobian(J.data)
    for _ in range(3):  # the sparse path reuses its ordering from the second factorisation on
        da, db = rng.uniform(-1, -0.1, n), rng.uniform(-1, 0, n)
        H = np.diag(da) + db[:, None] * J.toarray()
        np.testing.assert_array_equal(system.matrix(da, db).toarray(), H)
        assert system.factor(da, db)
        b = rng.standard_normal(n)
        np.testing.assert_allclose(H @ system.solve(b), b, atol=1e-10)
        np.testing.assert_allclose(system.htv(da, db, b), H.T @ b, atol=1e-12)
        np.testing.assert_allclose(system.hv(da, db, b), H @ b, atol=1e-12)
    assert system.factorizations == 3
    np.testing.assert_array_equal(system.row_norms(), np.abs(J.toarray()).max(axis=1))


@pytest.mark.parametrize("dense", [True, False])
def test_singular_newton_matrix_is_reported(dense: bool) -> None:
    J = np.array([[1.0, 1.0], [1.0, 1.0]])
    colind, row = np.array([0, 2, 4]), np.array([0, 1, 0, 1])
    system = NewtonSystem(2, colind, row, dense=dense)
    system.set_jacobian(J.T.reshape(-1))  # CSC order
    assert not system.factor(np.zeros(2), np.ones(2))  # H = J: rank 1
    assert system.factor(np.ones(2), np.ones(2))  # H = I + J


def test_density_chooses_dense_or_sparse() -> None:
    n = 2000
    diag = NewtonSystem(n, np.arange(n + 1), np.arange(n))
    assert not diag.dense and diag.kind.startswith("SuperLU")
    small = NewtonSystem(5, np.arange(6), np.arange(5))
    assert small.dense and small.kind.startswith("dense")


# ------------------------------------------------------------------------ typed errors
def test_newton_refuses_other_backends_and_kinds() -> None:
    with pytest.raises(MCPInputError, match="runs on backends"):
        resolve("mcp", "newton", "gamspy")
    with pytest.raises(MCPInputError, match="does not solve MPCCs"):
        resolve("mpcc", "newton", "casadi")
    mcp = mcpkit.MCP.lcp(np.eye(2), [1.0, -1.0])
    with pytest.raises(MCPInputError, match="backends 'casadi' and 'pyomo'"):
        NewtonRoute(mcp, "gamspy", SolveOptions())
    with pytest.raises(MCPInputError, match="expects an mcpkit.MCP"):
        NewtonRoute("not an mcp", "casadi", SolveOptions())  # type: ignore[arg-type]


def test_bad_start_or_parameters_are_typed_errors() -> None:
    mcp = mcpkit.MCP.lcp(np.eye(2), [1.0, -1.0])
    route = NewtonRoute(mcp, "casadi", SolveOptions())
    with pytest.raises(ShapeError, match="z0 has 3 entries"):
        route.solve(np.zeros(0), np.zeros(3), False)
    with pytest.raises(ShapeError, match="p has 1 entries"):
        route.solve(np.zeros(1), np.zeros(2), False)
    with pytest.raises(NonFiniteError):
        route.solve(np.zeros(0), np.array([0.0, math.nan]), False)


def test_casadi_mcp_with_mismatched_bounds_is_refused() -> None:
    z, p = ca.SX.sym("z", 2), ca.SX.sym("p", 0)
    F = z - 1
    cas = CasadiMCP(
        z=z, p=p, F=F, lb=np.zeros(3), ub=np.full(3, INF), z0=np.zeros(2), p0=np.zeros(0),
        blocks={"z": slice(0, 2)}, F_fun=ca.Function("F", [z, p], [F]), name="bad",
    )  # fmt: skip
    with pytest.raises(ShapeError, match="3 bounds for 2 variables"):
        NewtonRoute.from_casadi(cas)
