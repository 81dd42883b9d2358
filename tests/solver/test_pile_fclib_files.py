"""The pile's FCLIB dev data (tests/data/pile): read back, stored solutions judged, solved again.

The stored solutions were written by the demo's engine; here the Siconos error is recomputed from
the file alone, and a cold solve by the contact Newton must reach 1e-8 again (slow: dense
problems of 256–989 contacts).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mcpkit.formats.fclib_hdf5 import read_fclib_local
from mcpkit.models.fclib import friction_residual
from mcpkit.models.pile import solve_local

DATA = Path(__file__).resolve().parents[1] / "data" / "pile"
SOLVED = sorted(DATA.glob("pile-*.hdf5"))
TOL = 1e-8


def test_dev_files_present() -> None:
    assert len(SOLVED) >= 4 and all(f.stat().st_size < 2 * 2**20 for f in DATA.glob("*.hdf5"))


@pytest.mark.parametrize("path", SOLVED, ids=lambda p: p.stem)
def test_stored_solution_meets_siconos_error(path: Path) -> None:
    d = read_fclib_local(path)
    assert d.r_ref is not None and d.u_ref is not None
    np.testing.assert_allclose(d.u_ref, d.W @ d.r_ref + d.q, atol=1e-10 * np.abs(d.q).max())
    assert friction_residual(d.W, d.q, d.mu, d.r_ref) <= TOL
    assert 250 <= d.mu.size <= 1000


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("path", SOLVED, ids=lambda p: p.stem)
def test_cold_solve_reaches_tolerance(path: Path) -> None:
    d = read_fclib_local(path)
    res, _ = solve_local(d.W, d.q, d.mu, None, TOL)
    assert res.solved and friction_residual(d.W, d.q, d.mu, res.r) <= TOL


REST = sorted(DATA.glob("rest-*.hdf5"))


@pytest.mark.solver
@pytest.mark.parametrize("path", REST, ids=lambda p: p.stem)
def test_continuation_keeps_the_best_point(path: Path) -> None:
    """Resting-pile steps the engine's cold run misses: the continuation runs, and the point kept
    is no worse (Siconos error recomputed here) than that run's; the verdict matches the error."""
    from mcpkit.engines.newton_contact import solve_alart_curnier

    d = read_fclib_local(path)
    first = solve_alart_curnier(d.W, d.q, d.mu, TOL)
    res, runs = solve_local(d.W, d.q, d.mu, None, TOL, fallback_limit=0.0)  # no staged FCLIB solve
    err = friction_residual(d.W, d.q, d.mu, res.r)
    assert not first.solved and runs > 1
    assert err <= friction_residual(d.W, d.q, d.mu, first.r) * (1 + 1e-9)
    assert res.solved == (err <= TOL and res.natural_residual <= TOL)
