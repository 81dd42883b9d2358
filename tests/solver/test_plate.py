"""The Vose rotating plate (seed 004 §3.1, eq 16) in NCP and LCP form.

Reference: the sliding ODE of :mod:`mcpkit.models.stewart_trinkle.studies` (derived in its
docstring from the rotating-frame kinematics, integrated with an adaptive RK method and event
location at slip reversals), independent of the complementarity stepper. The stepper is first
order, so its distance to the ODE grows like C h t; 0.02 cm over 0.15 s at h = 1e-4 allows
C ~ 1.3e3 cm/s^2 (about mu g).
"""

from __future__ import annotations

import numpy as np
import pytest

from mcpkit.models.stewart_trinkle.demos import stick_runs
from mcpkit.models.stewart_trinkle.studies import (
    circle_step_model,
    friction_directions_study,
    run_vose,
    step_size_study,
    vose_fit,
    vose_sliding_ode,
)

pytestmark = pytest.mark.solver


@pytest.fixture(scope="module")
def vose_short():
    return run_vose(t_end=0.15)


def test_contact_maintained_and_no_sticking(vose_short):
    run = vose_short
    assert run.sim.solved
    assert run.normal_force.min() > 0.2 * 980.665  # never close to losing contact
    assert np.abs(run.gap).max() < 1e-9
    assert stick_runs(run.slip) <= 2  # slip speed ~0 only at instantaneous reversals


def test_matches_sliding_ode(vose_short):
    run = vose_short
    _, y = vose_sliding_ode(4.0, 0.0, 0.15, t_eval=run.sim.t)
    assert np.abs(y[:, 0] - run.r).max() < 0.02
    # and the particle does move toward r = 0 (v_ss < 0 for r > 0)
    assert run.r[-1] < run.r[0] - 0.2


def test_lcp_equals_ncp_when_sliding_along_a_direction(vose_short):
    """The Vose particle slides along the plate x axis, which is a friction direction of every
    even n_d, so the polyhedral and quadratic cones give the same step (to solver accuracy)."""
    lcp = run_vose(t_end=0.03, formulation="lcp", n_d=8)
    assert lcp.sim.solved
    np.testing.assert_allclose(lcp.r, vose_short.r[: lcp.r.size], atol=1e-6)


def test_lcp_error_decreases_with_directions_on_circle_plate():
    """§3.3, small: on the scaled Circle plate (eqs 18-19) the LCP error against the NCP
    decreases monotonically from 4 to 8 to 32 directions (as in the paper's Fig. 14)."""
    study = friction_directions_study(directions=(4, 8, 32), h=1e-4, t_end=0.03)
    assert study["solved"]
    assert np.all(np.diff(study["error"]) < 0)
    assert study["error"][-1] < 0.8 * study["error"][0]


def test_step_size_small():
    """§3.2, small: error decreases with h; slopes are positive (order <= 2 at most)."""
    study = step_size_study(steps=(2e-3, 1e-3, 5e-4), h_ref=1e-4, t_end=0.04)
    assert study["solved"]
    assert np.all(np.diff(study["error"]) < 0)
    assert np.all(study["slopes"] > 0.5) and np.all(study["slopes"] < 2.5)


def test_circle_model_sizes():
    assert circle_step_model(1e-4, "ncp")[0].mcp.n == 7
    assert circle_step_model(1e-4, "lcp", 16)[0].mcp.n == 3 + 1 + 16 + 1


@pytest.mark.slow
def test_asymptotic_velocity_paper_section_3_1():
    """Per-period average velocity approaches v_ss = b r + c r^3 (eq 17): within 5 % after 30
    periods (the paper's Fig. 5 shows the same slow approach from above)."""
    run = run_vose(t_end=0.9)
    fit = vose_fit(np.linspace(0.5, 5.0, 6))
    vth = fit["b"] * run.period_r + fit["c"] * run.period_r**3
    assert abs(run.period_v[-1] - vth[-1]) / abs(vth[-1]) < 0.05
    assert run.sim.solved


@pytest.mark.slow
def test_step_size_study_full():
    """§3.2 full size: the least-squares log-log slope of error against h over 1e-3..1e-4 lies
    between 1 and 2 (paper, Fig. 11: 1.19 and 1.41, "between O(h) and O(h^2)")."""
    study = step_size_study()
    assert study["solved"]
    assert 1.0 < study["fit_slope"] < 2.0


@pytest.mark.slow
def test_demo_plate_short(tmp_path):
    """`mcpkit demo plate` entry point: a result solved exactly when every step was (the CLI exits
    0 on it), a JSON-serialisable summary with RESULT_KEYS first, and both figures written."""
    import json

    from mcpkit.models.stewart_trinkle.demos import demo_plate
    from mcpkit.solving.result import RESULT_KEYS

    result = demo_plate(tmp_path, progress=False, t_end=0.06)
    d = result.summary()
    json.loads(json.dumps(d))
    assert tuple(d)[: len(RESULT_KEYS)] == RESULT_KEYS and d["kind"] == "demo:plate"
    assert result.solved and d["solved"] is True
    assert d["solved_steps"] == d["steps"] == 600
    assert d["longest_stick_run_steps"] <= 2 and d["min_normal_force_dyn"] > 0
    assert all((tmp_path / f).is_file() for f in ("st_vose_contact.png", "st_vose_velocity.png"))


@pytest.mark.slow
def test_demo_plate_shorter_than_one_period(tmp_path):
    """A run shorter than one plate period has no complete period to compare with theory: the
    summary says so (None) instead of raising IndexError."""
    from mcpkit.models.stewart_trinkle.demos import demo_plate

    result = demo_plate(tmp_path, progress=False, t_end=0.005, fmt="pdf")
    d = result.summary()
    assert result.solved and d["steps"] == 50
    assert d["figures"] == [str(tmp_path / "st_vose_contact.pdf"), str(tmp_path / "st_vose_velocity.pdf")]
    assert all(open(f, "rb").read(4) == b"%PDF" for f in d["figures"])
    assert d["period_avg_velocity"] == [] and d["last_period_relative_difference"] is None
