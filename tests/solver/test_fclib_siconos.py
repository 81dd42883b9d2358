"""The 22 Siconos/LMGC FCLIB problems of ``../shared/data/fclib-siconos``: Siconos error <= 1e-8.

The stored solutions are zero placeholders, so every check recomputes the Siconos error
(``friction_residual``) from the returned reactions and the file's ``W, q, mu``.
"""

from __future__ import annotations

import math

import pytest

from mcpkit.models.fclib import FCLIBFormulation, friction_residual, load_fclib, solve_fclib_file
from tests.conftest import SHARED_DATA

DIR = SHARED_DATA / "fclib-siconos"
FILES = sorted(DIR.glob("*.hdf5")) if DIR.is_dir() else []
TOL = 1e-8
#: Small problems, each solved in well under a second (1 to 225 contacts; Confeti has W ~ 1e-5,
#: Capsules-i101-404 is sparse with rank 478 of 675).
FAST = [
    "FrictionContact3D_RR_1c",
    "Rover4144",
    "NESpheres_10_1",
    "OneObject-i1028-138",
    "Confeti-ex03-Fc3D-SBM",
    "Capsules-i101-404",
]
pytestmark = [
    pytest.mark.solver,
    pytest.mark.skipif(not FILES, reason="shared fclib-siconos problems not present"),
]


def _check(name: str, formulation: FCLIBFormulation) -> None:
    path = DIR / f"{name}.hdf5"
    res = solve_fclib_file(path, formulation=formulation, time_limit=120)
    assert res.solved, f"{name}: {res.message}"
    prob = load_fclib(path)
    err = friction_residual(prob.W, prob.q, prob.mu, res.reactions)
    assert math.isfinite(err) and err <= TOL, f"{name}: Siconos error {err:.2e}"
    assert res.solve.natural_residual <= res.solve.tol <= TOL


@pytest.mark.parametrize("name", FAST)
def test_fast_problems_alart_curnier(name):
    _check(name, FCLIBFormulation.ALART_CURNIER)


@pytest.mark.parametrize("name", FAST[:4])
def test_fast_problems_fb_soc(name):
    _check(name, FCLIBFormulation.FB_SOC)


def test_the_set_is_the_shared_one():
    assert len(FILES) == 22
    assert all((DIR / f"{name}.hdf5").is_file() for name in FAST)


@pytest.mark.slow
@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_all_problems_alart_curnier(path):
    _check(path.stem, FCLIBFormulation.ALART_CURNIER)


def test_other_methods_pose_the_ncp():
    """Without a formulation, a method other than newton/auto (here the IPOPT FB homotopy) runs on
    the quadratic-cone NCP, as ``mcpkit solve FILE --method fb`` does; the check is the same."""
    path = DIR / "Rover1039.hdf5"
    res = solve_fclib_file(path, method="fb", tol=1e-6)
    assert res.formulation == "ncp" and res.solve.method == "fb" and not res.stages
    prob = load_fclib(path)
    assert res.solved and friction_residual(prob.W, prob.q, prob.mu, res.reactions) <= 1e-6
