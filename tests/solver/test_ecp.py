"""ECP slider simulations (seed 000 §6) through mcpkit's solver (IPOPT via CasADi)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from mcpkit.models.ecp.closed_form import pure_translation_trajectory
from mcpkit.models.ecp.complementarity import ECPOutsidePatchError, ECPPatchViolation
from mcpkit.models.ecp.params import PushForce, SliderParams, paper_push, paper_slider
from mcpkit.models.ecp.simulation import ECPRun, make_model, run_ecp

pytestmark = pytest.mark.solver

X0_SLIDE = np.array([0.0, 0.0, 0.0, 0.7, 0.9, 10.0])  # §6.1


@pytest.fixture(scope="module")
def sliding_runs() -> dict[str, ECPRun]:
    P = paper_slider()
    return {k: run_ecp(make_model(k, P), X0_SLIDE, 0.45) for k in ("quadratic", "complementarity")}


def _kinetic(P: SliderParams, x: np.ndarray) -> np.ndarray:
    return 0.5 * P.m * (x[:, 3] ** 2 + x[:, 4] ** 2) + 0.5 * P.I_z * x[:, 5] ** 2


def test_free_sliding_models_agree(sliding_runs: dict[str, ECPRun]) -> None:
    """§6.1: every step solved; while the slider slides (sigma > 0 in both) the quadratic
    model (eqs 29-32) and the complementarity model agree to 1e-6 (the paper's tolerance)."""
    q, c = sliding_runs["quadratic"], sliding_runs["complementarity"]
    assert q.sim.solved and c.sim.solved
    assert (q.sigma > 0).all() and (c.sigma > 0).all()  # slides for all 0.45 s
    np.testing.assert_allclose(q.states, c.states, rtol=0, atol=1e-6)
    np.testing.assert_allclose(q.impulses, c.impulses, rtol=0, atol=1e-6)
    np.testing.assert_allclose(c.impulses[:, 3], paper_slider().p_n, rtol=1e-8)  # p_n = m g h


def test_free_sliding_dissipates_and_ecp_moves_in_patch(sliding_runs: dict[str, ECPRun]) -> None:
    """Derived checks. (i) The tangential force acts at the ECP with a - q parallel to it
    (eqs 11-12), so its moment about the CM vanishes and friction power equals the
    maximum-dissipation power at the ECP, <= 0; with backward Euler
    KE+ - KE = p.nu+ - |Δnu|_M^2/2 <= 0, so kinetic energy never increases.
    (ii) |(p_t, p_o)| <= e mu p_n bounds the ECP offset by e mu q_z; the offset is nonzero
    (q_z > 0) and changes in the body frame (it is not a fixed point under the CM)."""
    P = paper_slider()
    for run in sliding_runs.values():
        ke = _kinetic(P, run.states)
        assert (np.diff(ke) <= 1e-12).all()
        assert run.violations == []
        off = np.linalg.norm(run.ecp_offset_body[1:], axis=1)
        assert (off <= P.e_t * P.mu * P.q_z + 1e-12).all()
        assert off.min() > 1e-3
        assert np.ptp(np.unwrap(np.arctan2(run.ecp_offset_body[1:, 1], run.ecp_offset_body[1:, 0]))) > 0.5


def test_pure_translation_matches_closed_form_then_holds() -> None:
    """w0 = 0, no load: eqs 46-49 step by step until the stop step u*; after it the
    complementarity model keeps v = 0 (sigma = 0), while the quadratic model leaves its
    validity (sigma <= 0, reported as overshoot steps). Tolerance 1e-9 m/s."""
    P = paper_slider()
    v0 = np.array([0.7, 0.9])
    n = 50
    tr = pure_translation_trajectory(P, v0, n)
    u_star = tr.stop_step
    assert u_star is not None and u_star < n - 5
    x0 = np.array([0.0, 0.0, 0.0, *v0, 0.0])
    c = run_ecp(make_model("complementarity", P), x0, n * P.h)
    q = run_ecp(make_model("quadratic", P), x0, n * P.h)
    assert c.sim.solved
    np.testing.assert_allclose(c.states[:, 3:5], tr.v, rtol=0, atol=1e-9)  # incl. rest
    np.testing.assert_allclose(c.states[:, 0:2], tr.q, rtol=0, atol=1e-9)
    np.testing.assert_allclose(c.states[:, 5], 0.0, atol=1e-12)
    np.testing.assert_allclose(q.states[: u_star + 1, 3:5], tr.v[: u_star + 1], rtol=0, atol=1e-9)
    np.testing.assert_allclose(c.sigma[u_star:], 0.0, atol=1e-9)
    assert q.overshoot_steps.size > 0 and q.overshoot_steps[0] == u_star


def test_ecp_shift_in_translation_and_stick() -> None:
    """ECP shift with q_z > 0 (eqs 11-12). Sliding translation: a - q = e mu q_z v/|v|
    (ahead of the CM). Sticking under a constant force F < mu m g at CM height: friction
    balances F, so a - q = F q_z / (m g) along F. With q_z = 0 the ECP stays under the CM."""
    for qz in (0.08, 0.0):
        P = SliderParams(q_z=qz)
        run = run_ecp(make_model("complementarity", P), [0, 0, 0, 0.6, -0.3, 0.0], 0.05)
        vhat = np.array([0.6, -0.3]) / np.hypot(0.6, -0.3)
        np.testing.assert_allclose(run.ecp_offset_body[1:], np.tile(P.mu * qz * vhat, (5, 1)), atol=1e-10)
        F = 0.8 * P.mu * P.m * P.g
        push = PushForce(a=F, b=0.0, point=(0.0, 0.0), direction=(0.6, 0.8))
        rest = run_ecp(make_model("complementarity", P, push), np.zeros(6), 0.05)
        assert rest.sim.solved
        np.testing.assert_allclose(rest.states[:, 3:], 0.0, atol=1e-10)
        np.testing.assert_allclose(rest.sigma, 0.0, atol=1e-9)
        np.testing.assert_allclose(
            rest.ecp_offset_body[1:],
            np.tile(F * qz / (P.m * P.g) * np.array([0.6, 0.8]), (5, 1)),
            atol=1e-10,
        )


def test_ecp_outside_patch_is_reported_typed() -> None:
    """A tall slider (q_z = 0.2 m): translating ECP offset mu q_z = 0.062 m > L/2 = 0.025 m,
    so every sliding step is recorded; strict mode raises ECPOutsidePatchError."""
    P = SliderParams(q_z=0.2)
    run = run_ecp(make_model("quadratic", P), [0, 0, 0, 1.0, 0.0, 0.0], 0.03)
    assert len(run.violations) == 3 and all(isinstance(v, ECPPatchViolation) for v in run.violations)
    assert run.violations[0].excess == pytest.approx(P.mu * P.q_z - 0.025, abs=1e-9)
    with pytest.raises(ECPOutsidePatchError) as info:
        run_ecp(make_model("complementarity", P), [0, 0, 0, 1.0, 0.0, 0.0], 0.03, strict_patch=True)
    assert info.value.violation.step == 0


def test_pushed_slider_models_agree() -> None:
    """§6.2 (first 1 s of 3 s; the full run is in the slow test): both models solve every
    step and agree to 1e-6 while sliding; the push moment (+2.5 mm x F) spins it CCW."""
    P = paper_slider()
    x0 = [0.0, 0.0, 0.0, 0.2, 0.3, 0.0]
    q = run_ecp(make_model("quadratic", P, paper_push()), x0, 1.0)
    c = run_ecp(make_model("complementarity", P, paper_push()), x0, 1.0)
    assert q.sim.solved and c.sim.solved and (c.sigma > 0).all()
    np.testing.assert_allclose(q.states, c.states, rtol=0, atol=1e-6)
    assert c.states[-1, 5] > 0 and c.violations == []


@pytest.mark.slow
def test_pushed_slider_full_three_seconds() -> None:
    """§6.2 over the full 3 s: agreement to 1e-6 and no patch violation."""
    P = paper_slider()
    x0 = [0.0, 0.0, 0.0, 0.2, 0.3, 0.0]
    q = run_ecp(make_model("quadratic", P, paper_push()), x0, 3.0)
    c = run_ecp(make_model("complementarity", P, paper_push()), x0, 3.0)
    assert q.sim.solved and c.sim.solved
    np.testing.assert_allclose(q.states, c.states, rtol=0, atol=1e-6)
    assert c.violations == []


@pytest.mark.skipif(
    importlib.util.find_spec("mcpkit.orchestration.pyomo_route") is None,
    reason="Pyomo route (mcpkit.orchestration.pyomo_route) not present in this checkout",
)
@pytest.mark.parametrize("kind", ["quadratic", "complementarity"])
def test_pyomo_backend_matches_casadi(kind: str) -> None:
    """A few §6.1 steps through backend='pyomo' reproduce the CasADi route to 1e-7."""
    P = paper_slider()
    a = run_ecp(make_model(kind, P), X0_SLIDE, 0.05)
    b = run_ecp(make_model(kind, P), X0_SLIDE, 0.05, backend="pyomo")
    assert b.sim.solved
    np.testing.assert_allclose(b.states, a.states, rtol=0, atol=1e-7)


@pytest.mark.parametrize("pull", [0.4, 1.5])
def test_normal_contact_complementarity(pull: float) -> None:
    """Normal row 0 <= p_n ⟂ v_z + (p_n + p_z)/m - g h >= 0 with v_z = 0: an upward applied
    impulse p_z = pull * m g h gives p_n = max(0, 1 - pull) m g h; with p_n = 0 the ellipsoid
    (eq 20) collapses and the friction impulses vanish."""
    import mcpkit

    P = paper_slider()
    model = make_model("complementarity", P)
    model.set_start(X0_SLIDE)
    p = model.parameters(0, 0.0, X0_SLIDE) | {"p_z": np.array([pull * P.p_n])}
    res = mcpkit.Solver(model.mcp, backend="casadi", method="scholtes", tol=1e-10).solve(p=p)
    assert res.solved
    assert res.block("p_n")[0] == pytest.approx(max(0.0, 1.0 - pull) * P.p_n, abs=1e-9)
    if pull > 1:
        np.testing.assert_allclose([res.block(b)[0] for b in ("p_t", "p_o", "p_r")], 0.0, atol=1e-9)


def test_demo_sliding_writes_figures_and_json(tmp_path) -> None:
    """The §6.1 demo returns a result whose verdict is that of its four runs and whose
    JSON-serialisable summary (RESULT_KEYS first) has numbers that match its runs; it writes its
    PNG figures."""
    import json

    from mcpkit.models.ecp.demos import demo_sliding
    from mcpkit.solving.result import RESULT_KEYS, Outcome, Termination

    result = demo_sliding(tmp_path, progress=False)
    assert isinstance(result, Outcome) and len(result.parts) == 4
    assert result.solved and result.termination is Termination.CONVERGED
    assert result.solved == all(run.sim.step_solved.all() for run in result.parts)
    s = result.summary()
    json.dumps(s)
    assert tuple(s)[: len(RESULT_KEYS)] == RESULT_KEYS and s["kind"] == "demo:sliding" and s["solved"] is True
    assert s["steps"] == 45 and s["solved_steps"] == {"quadratic": 45, "complementarity": 45}
    assert s["max_state_difference_while_sliding"] < 1e-6
    assert s["max_ecp_offset_m"] <= s["ecp_offset_bound_e_mu_qz_m"] + 1e-12
    assert s["translation_stop_step"] == 37  # ceil(|v0| / (mu g h)) - 1 = ceil(37.53) - 1
    for path in s["figures"].values():
        assert (tmp_path / path.split("/")[-1]).stat().st_size > 10_000
