"""Single-contact configuration-space friction problem (seed 002) posed as an MCP.

Part at rest, generalised coordinates (x, y, rho theta), mass matrix m I. Unknowns: normal
force f_n >= 0, friction-edge multipliers beta >= 0 (tangential force beta_1 - beta_2 along
t_s) and the sliding-rate slack lambda >= 0 (Stewart-Trinkle polyhedral friction, 2 edges):

    m a = F + f_n Delta_n n + (beta_1 - beta_2) v_f,
    0 <= f_n    _|_  Delta_n n . a                 >= 0   (normal contact acceleration)
    0 <= beta_1 _|_  lambda + v_f . a              >= 0   (tangential acceleration)
    0 <= beta_2 _|_  lambda - v_f . a              >= 0
    0 <= lambda _|_  mu f_n - beta_1 - beta_2      >= 0.

The MCP reaction must equal seed 002 §5.2's double projection (cone above the tangent plane)
and, when the cone dips, be one of the enumerated consistent modes.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from mcpkit import MCP, solve
from mcpkit.models.friction.cspace_cone import (
    Ambiguity,
    ContactMode,
    CSpaceContact,
    enumerate_modes_at_rest,
)

pytestmark = pytest.mark.solver

A = 0.05
RHO = np.sqrt(2.0 / 3.0) * A
MASS, G = 2.0, 9.81


def _build(c: CSpaceContact, mass: float) -> MCP:
    mcp = MCP(name="cspace_contact")
    fn = mcp.add_variables("normal", 1, lb=0.0)
    beta = mcp.add_variables("friction", 2, lb=0.0)
    lam = mcp.add_variables("slack", 1, lb=0.0)
    F = mcp.add_parameters("load", 3, value=[0.0, -mass * G, 0.0])
    g = sp.Matrix((c.delta_n * c.n).tolist())
    vf = sp.Matrix(c.v_f.tolist())
    a = (sp.Matrix(F) + fn[0] * g + (beta[0] - beta[1]) * vf) / mass
    an = (g.T * a)[0]
    at = (vf.T * a)[0]
    mcp.add_functions("normal", [an])
    mcp.add_functions("friction", [lam[0] + at, lam[0] - at])
    mcp.add_functions("slack", [c.mu * fn[0] - beta[0] - beta[1]])
    return mcp


def _reaction(c: CSpaceContact, res) -> np.ndarray:
    fn = res.block("normal")[0]
    b = res.block("friction")
    return fn * c.delta_n * c.n + (b[0] - b[1]) * c.v_f


LOADS = {
    "gravity": [0.0, -MASS * G, 0.0],
    "push_small": [3.0, -MASS * G, 0.4],
    "push_large": [25.0, -MASS * G, 0.0],
    "push_left": [-25.0, -MASS * G, 1.0],
    "lift": [0.5, 30.0, 0.0],
}


@pytest.mark.parametrize("geom", ["square_corner", "block_on_point", "slanted"])
@pytest.mark.parametrize("load", list(LOADS))
def test_mcp_matches_section_5_2(geom: str, load: str) -> None:
    """Cone above the tangent plane: MCP reaction = §5.2 reaction (unique), atol 1e-6 N."""
    c = {
        "square_corner": CSpaceContact([0.0, 1.0], [A, A], RHO, 0.5),
        "block_on_point": CSpaceContact([0.0, 1.0], [0.0, 0.1], 0.08, 0.4),
        "slanted": CSpaceContact([0.3, 1.0], [-0.04, 0.07], 0.05, 0.8),
    }[geom]
    assert not c.dips_below_tangent_plane
    F = np.array(LOADS[load])
    res = solve(_build(c, MASS), p={"load": F}, tol=1e-10)
    assert res.solved, res
    ref = c.reaction_at_rest(F)
    np.testing.assert_allclose(_reaction(c, res), ref.force, atol=1e-6)
    if ref.mode is ContactMode.SEPARATING:
        assert res.block("normal")[0] <= 1e-8


def test_mcp_dipping_cone_returns_one_of_the_modes() -> None:
    """Square corner, mu = 2.5 > 5/3 (the cone dips): the load of the ambiguity test has
    several consistent modes; the MCP finds one of them (which one depends on the start)."""
    c = CSpaceContact([0.0, 1.0], [A, A], RHO, 2.5)
    e_star = c.edges[np.argmin(c.edges @ c.n)]
    other = c.edges[np.argmax(c.edges @ c.n)]
    F = -(0.9 * e_star + 0.1 * other)
    F = 10.0 * F / np.linalg.norm(F)
    R = c.reaction_at_rest(F)
    assert R.ambiguity is Ambiguity.CONE_BELOW_TANGENT_PLANE_MULTIPLE
    modes = enumerate_modes_at_rest(c, F, mass=MASS)
    res = solve(_build(c, MASS), p={"load": F}, tol=1e-10)
    assert res.solved, res
    Rm = _reaction(c, res)
    dist = [np.linalg.norm(Rm - s.reaction) for s in modes]
    assert min(dist) < 1e-6
