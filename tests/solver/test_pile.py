"""A small pile of spheres stepped to a Siconos error of 1e-8 (issue 28), and ``mcpkit demo pile``.

Every step's verdict is checked against the Siconos error recomputed here from the step's data;
the physics against the geometry: no deep penetration, the spheres end resting above the floor.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from mcpkit.cli import EXIT_BAD_INPUT, EXIT_SOLVED, main
from mcpkit.formats.fclib_hdf5 import read_fclib_local
from mcpkit.models.pile import make_pile, simulate_pile, solve_local
from mcpkit.solvers.newton_contact import siconos_error

TOL = 1e-8
pytestmark = pytest.mark.solver


def test_small_pile_every_step_solved_and_physical() -> None:
    pile = make_pile(20, seed=0)
    r_min = float(pile.radii.min())
    checked = []

    def check(rec) -> None:  # noqa: ANN001
        checked.append(rec.step)

    run = simulate_pile(pile, 40, measure_lu=False, on_step=check)
    assert len(checked) == 40
    assert all(r.solved for r in run.records), [r.message for r in run.records if not r.solved]
    assert max(r.siconos_error for r in run.records) <= TOL
    assert max(r.contacts for r in run.records) >= 30  # a pile, not free flight
    # no deep penetration at any step; every sphere rests on or above the floor at the end
    assert min(r.min_gap for r in run.records) > -0.02 * r_min
    assert (pile.x[:, 2] - pile.radii).min() > -1e-3 * r_min
    # dropped from at most 3.5 diameters: nothing moves faster than free fall from there
    assert np.linalg.norm(pile.v[:, :3], axis=1).max() < np.sqrt(2 * 9.81 * pile.x[:, 2].max() * 2)
    assert pile.x[:, 2].max() < run.positions[0, :, 2].max()  # the pile settled lower
    # the walls hold the spheres in the box
    assert (pile.x[:, 0] - pile.radii).min() > -1e-3 * r_min
    assert (pile.x[:, 0] + pile.radii).max() < pile.box.lx + 1e-3 * r_min


def test_step_verdict_recomputed() -> None:
    pile = make_pile(20, seed=5)
    for _ in range(12):
        lp = pile.local_problem()
        res, _ = solve_local(lp.W, lp.q, lp.mu, None, TOL)
        u = lp.W @ res.r + lp.q
        err = siconos_error(lp.q, lp.mu, res.r, u)
        assert res.solved and err <= TOL
        assert err == pytest.approx(res.siconos_error, rel=1e-6, abs=1e-14)
        pile.advance(lp, res.r)
    assert lp.nc > 15


def test_demo_pile_json_and_dump(tmp_path, capsys) -> None:
    code = main(["demo", "pile", "--bodies", "12", "--steps", "8", "--json", "--out", str(tmp_path),
                 "--dump-fclib", "6"])  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert code == EXIT_SOLVED and out["solved"]
    keys = ("steps", "steps_solved", "max_contacts", "max_friction_residual", "median_lu_ratio", "wall_s")
    assert all(key in out for key in keys)
    assert out["steps"] == out["steps_solved"] == 8 and out["max_friction_residual"] <= TOL
    assert (tmp_path / "pile_steps.png").stat().st_size > 0
    d = read_fclib_local(out["fclib_file"])
    assert siconos_error(d.q, d.mu, d.r_ref, d.W @ d.r_ref + d.q) <= TOL
    assert d.mu.size == out["per_step"][6]["contacts"]


def test_demo_flags_refused() -> None:
    assert main(["demo", "quickstart", "--bodies", "3"]) == EXIT_BAD_INPUT
    assert main(["demo", "pile", "--bodies", "0"]) == EXIT_BAD_INPUT
    assert main(["demo", "pile", "--steps", "4", "--dump-fclib", "4"]) == EXIT_BAD_INPUT
