"""The homotopy's two inner solvers: CasADi's nlpsol and a Pyomo NLP solver on the replayed template.

``mcpkit_ipopt`` runs the Pyomo branch (the code path of an ``ipopt`` executable) in CI, where
no executable exists.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import casadi as ca
import numpy as np
import pytest

import mcpkit
from mcpkit import MCP
from mcpkit.homotopy.ipopt import CasadiInner
from mcpkit.homotopy.loop import HomotopyOutcome, assess_mcp_point, inner_settings
from mcpkit.homotopy.pyomo_inner import PyomoInner, ipopt_iterations, ipopt_status
from mcpkit.homotopy.recovery import make_homotopy
from mcpkit.homotopy.reformulation import NLPTemplate
from mcpkit.lowering.casadi import MCPToMPCC, lower_to_casadi
from mcpkit.lowering.nl_import import ampl_multipliers, casadi_multipliers
from mcpkit.orchestration.planner import select_inner
from mcpkit.solving.options import REFORMULATIONS, IpoptChoice, SolveOptions

pytestmark = pytest.mark.solver

MCPKIT_IPOPT = PyomoInner("mcpkit_ipopt", description="mcpkit_ipopt")


def run_mcp(mcp: MCP, method: str, inner: object, **opts: object) -> HomotopyOutcome:
    """The homotopy on the slack-form MPCC of ``mcp`` (the CasADi lowering), from its start."""
    cmcp = lower_to_casadi(mcp)
    mpcc, slack = MCPToMPCC().apply(cmcp)
    hom = make_homotopy(mpcc, method, SolveOptions(**opts), inner=inner)  # type: ignore[arg-type]

    def assess(x: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, object]:
        x = x.copy()
        x[: slack.n], _, a = assess_mcp_point(cmcp, x[: slack.n], p)
        return x, a

    return hom.run(mpcc.x0, cmcp.p0, assess)  # type: ignore[arg-type]


def steps(out: HomotopyOutcome) -> list[tuple[str, float, int]]:
    """The outer path: phase, homotopy parameter and IPOPT iterations of every subproblem."""
    return [(s.phase, s.parameter, s.inner_iterations) for s in out.trace]


LCPS = {
    # z = (1/3, 1/3): the LCP whose iterations differed 41 vs 5 between the two Pyomo routes
    "lcp_2x2": (np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([-1.0, -1.0]), 0.0, math.inf),
    "box_3x3": (
        np.array([[4.0, 1.0, 0.5], [-1.0, 3.0, 0.2], [0.3, 0.0, 2.0]]),
        np.array([-1.0, 8.0, -20.0]),
        np.array([1.0, -math.inf, 0.0]),
        np.array([3.0, 2.0, math.inf]),
    ),
}


@pytest.mark.parametrize("method", REFORMULATIONS)
@pytest.mark.parametrize("name", list(LCPS))
def test_same_path_and_iterations_on_both_inner_solvers(name: str, method: str) -> None:
    """Same reformulation, same MPCC: the same subproblems, and IPOPT iterations within one per subproblem.

    The Pyomo branch solves the template replayed in Pyomo and read back from an NL file: the same
    functions, but written the NL way (a row's constant moved into its bounds, ``x / c`` as
    ``x * (1/c)``, constants folded), so values agree to the last bit or two. IPOPT then takes the
    same steps except where a stopping test is borderline, which moves one subproblem's count by
    one (Kanzow-Schwartz on the 2x2 LCP: 12, 12, 10 vs 12, 13, 9). The outer path (phases and
    parameter values) is identical.
    """
    M, q, lb, ub = LCPS[name]
    mcp = MCP.lcp(M, q, lb=lb, ub=ub)
    a = run_mcp(mcp, method, CasadiInner(), tol=1e-9)
    b = run_mcp(mcp, method, MCPKIT_IPOPT, tol=1e-9)
    assert a.termination is b.termination is mcpkit.Termination.CONVERGED
    assert [s[:2] for s in steps(a)] == [s[:2] for s in steps(b)]
    assert max(abs(x[2] - y[2]) for x, y in zip(steps(a), steps(b), strict=True)) <= 1
    assert a.x is not None and b.x is not None
    np.testing.assert_allclose(a.x[: mcp.n], b.x[: mcp.n], atol=1e-8, rtol=0)


def test_scholtes_lcp_iterations_are_equal_step_by_step() -> None:
    """The LCP on which the two Pyomo routes once took 41 and 5 iterations: equal, step by step.

    Every row of this subproblem family is affine or the Scholtes row ``G H / sigma - 1``, whose
    constant moves to the bound 1: IPOPT's slack push ``max(1, |bound|)`` is unchanged.
    """
    M, q, lb, ub = LCPS["lcp_2x2"]
    a = run_mcp(MCP.lcp(M, q, lb=lb, ub=ub), "scholtes", CasadiInner())
    b = run_mcp(MCP.lcp(M, q, lb=lb, ub=ub), "scholtes", MCPKIT_IPOPT)
    assert steps(a) == steps(b)
    assert a.iterations == b.iterations == sum(s.inner_iterations for s in a.trace)


MPECLIB = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "mpeclib"


@pytest.mark.skipif(not (MPECLIB / "bard1.nl.json").exists(), reason="MPECLib data not present")
def test_mpeclib_bard1_on_both_inner_solvers() -> None:
    """bard1 (MPECLib) with Scholtes on the Pyomo backend, CasADi's nlpsol vs the Pyomo branch.

    Both solve it along the same outer path (phases, sigma values) with IPOPT counts within one
    per subproblem (13, 10, 6, 4 vs 14, 10, 6, 4). The one difference is the NL form, and
    precisely its bound shift: the first (cold) subproblem's rows carry constants that the NL
    file moves into the row bounds (up to 7 here), and IPOPT pushes its initial slacks by
    ``bound_push * max(1, |bound|)``; CasADi's nlpsol on the template with the same constants
    moved into its bounds takes exactly the Pyomo branch's iterations.
    """
    from mcpkit.homotopy.pyomo_inner import ReplayedNLP
    from mcpkit.lowering.nl_import import import_pyomo_nl
    from mcpkit.mpcc import MPCCSolver, load_mpcc_json

    prob = load_mpcc_json(MPECLIB / "bard1.nl.json")
    runs = [
        MPCCSolver(prob, "scholtes", backend="pyomo", ipopt=ipopt) for ipopt in ("casadi", "mcpkit_ipopt")
    ]
    res = [s.solve() for s in runs]
    assert all(r.solved for r in res)
    a, b = ([(s.phase, s.parameter, s.inner_iterations) for s in r.trace] for r in res)
    assert [s[:2] for s in a] == [s[:2] for s in b]
    assert max(abs(x[2] - y[2]) for x, y in zip(a, b, strict=True)) <= 1
    assert res[0].f == pytest.approx(res[1].f, rel=1e-7, abs=1e-7)
    np.testing.assert_allclose(res[0].x, res[1].x, rtol=1e-5, atol=1e-6)  # x[3] ~ 1869

    # the first subproblem, alone: template as CasADi states it, as the NL file states it
    solver = runs[0]
    t, mp = solver.homotopy.primary.template, solver.mpcc
    q = np.concatenate([mp.p0, [solver.options.sigma0]])
    x0 = np.clip(mp.x0, mp.lbx, mp.ubx)
    rp = ReplayedNLP(t)
    rp.set_rows(t.lbg, t.ubg)
    rp.set_point(x0, q, mp.lbx, mp.ubx, None)
    nl = import_pyomo_nl(rp.model, rp.x)
    shift = np.zeros(t.g.numel())
    for i, con in rp.rows:
        r = nl.row_of[id(con)]
        shift[i] = t.lbg[i] - nl.lbg[r] if np.isfinite(t.lbg[i]) else t.ubg[i] - nl.ubg[r]
    assert np.abs(shift).max() > 1  # bounds beyond 1 move: IPOPT's slack push changes
    opts = solver.options
    settings = inner_settings(opts, opts.inner_tol_factor * opts.tol, False, "first")
    bounds = (mp.lbx, mp.ubx)
    shifted = replace(t, g=t.g - shift, lbg=t.lbg - shift, ubg=t.ubg - shift)
    counts = {
        "casadi": CasadiInner()(t, settings).solve(x0, q, *bounds, t.lbg, t.ubg),
        "pyomo": MCPKIT_IPOPT(t, settings).solve(x0, q, *bounds, t.lbg, t.ubg),
        "casadi_shifted": CasadiInner()(shifted, settings).solve(x0, q, *bounds, shifted.lbg, shifted.ubg),
    }
    assert all(r.ok for r in counts.values())
    assert counts["casadi"].iterations == a[0][2] and counts["pyomo"].iterations == b[0][2]
    assert counts["casadi_shifted"].iterations == counts["pyomo"].iterations


def test_warm_start_multipliers_reach_both_inner_solvers() -> None:
    """Re-solving from a solution and its multipliers takes the same (few) iterations on both.

    min (x1 - 2)^2 + (x2 + 1)^2 + q x1 x2 s.t. x1 + x2 >= 1, x >= 0: at q = 0 the solution is
    (2, 0) with the bound x2 >= 0 active (multiplier 2). A warm start with the multipliers makes
    IPOPT stop within a couple of iterations; the Pyomo branch gets them through IPOPT's suffixes.
    """
    x = ca.SX.sym("x", 2)
    q = ca.SX.sym("q")
    nlp = NLPTemplate(
        x=x,
        p=q,
        f=(x[0] - 2) ** 2 + (x[1] + 1) ** 2 + q * x[0] * x[1],
        g=x[0] + x[1],
        lbg=np.array([1.0]),
        ubg=np.array([np.inf]),
    )
    bounds = (np.zeros(2), np.full(2, np.inf), nlp.lbg, nlp.ubg)
    counts = []
    for factory in (CasadiInner(), MCPKIT_IPOPT):
        cold = factory(nlp, inner_settings(SolveOptions(), 1e-9, False, "cold"))
        warm = factory(nlp, inner_settings(SolveOptions(), 1e-9, True, "warm"))
        r0 = cold.solve(np.array([0.5, 0.5]), np.array([0.0]), *bounds)
        assert r0.ok
        np.testing.assert_allclose(r0.x, [2.0, 0.0], atol=1e-7)
        np.testing.assert_allclose(r0.lam_x, [0.0, -2.0], atol=1e-6)  # CasADi: lam_x = z_U - z_L
        r1 = warm.solve(r0.x, np.array([0.0]), *bounds, r0.lam_x, r0.lam_g)
        assert r1.ok
        counts.append((r0.iterations, r1.iterations))
    assert counts[0] == counts[1]
    assert counts[0][1] <= 2 < counts[0][0]


def test_ampl_multiplier_conventions_round_trip() -> None:
    """CasADi's lam_x = z_U - z_L and IPOPT's AMPL suffixes (zL >= 0, zU <= 0, dual = -lam_g)."""
    lam_x = np.array([-2.0, 0.0, 3.0])
    lam_g = np.array([1.5, -0.5])
    zL, zU, dual = ampl_multipliers(lam_x, lam_g)
    np.testing.assert_array_equal(zL, [2.0, 0.0, 0.0])
    np.testing.assert_array_equal(zU, [0.0, 0.0, -3.0])
    np.testing.assert_array_equal(dual, [-1.5, 0.5])
    back = casadi_multipliers(zL, zU, dual)
    np.testing.assert_array_equal(back[0], lam_x)
    np.testing.assert_array_equal(back[1], lam_g)


def test_executable_status_and_iterations_are_read_from_its_output() -> None:
    """The executable reports an AMPL message and its summary in the log (no iteration statistic)."""
    stats = SimpleNamespace(black_box=SimpleNamespace(number_of_iterations=None))

    def result(message: str) -> SimpleNamespace:
        return SimpleNamespace(
            solver=SimpleNamespace(message=message, statistics=stats, termination_condition="x")
        )

    assert ipopt_status(result("Ipopt 3.14.16\\x3a Optimal Solution Found")) == "Solve_Succeeded"
    assert ipopt_status(result("Ipopt 3.14.16: Restoration Phase Failed.")) == "Restoration_Failed"
    assert ipopt_status(result("Solve_Succeeded")) == "Solve_Succeeded"
    log = "...\nNumber of Iterations....: 17\n\n...\nEXIT: Optimal Solution Found.\n"
    assert ipopt_iterations(result("x"), SimpleNamespace(_log=log)) == 17
    stats.black_box.number_of_iterations = 4
    assert ipopt_iterations(result("x"), SimpleNamespace(_log=log)) == 4


def test_unknown_ipopt_choice_lists_the_valid_ones() -> None:
    with pytest.raises(mcpkit.UnknownOptionError, match="mcpkit_ipopt") as err:
        select_inner("ipopt_exe")
    assert all(c.value in str(err.value) for c in IpoptChoice)
    with pytest.raises(mcpkit.UnknownOptionError, match="Did you mean 'mcpkit_ipopt'"):
        select_inner("mcpkit_ipop")
    with pytest.raises(mcpkit.UnknownOptionError, match="'executable'"):
        mcpkit.solve(MCP.lcp([[1.0]], [-1.0]), backend="pyomo", method="scholtes", ipopt="bogus")


def test_executable_choice_without_one_is_not_available() -> None:
    from mcpkit.solving.availability import ipopt_executable

    if ipopt_executable() is not None:
        factory, description = select_inner("executable")
        assert description.startswith("executable ")
    else:
        with pytest.raises(mcpkit.SolverNotAvailableError, match="ipopt"):
            select_inner("executable")


def test_unknown_ipopt_option_is_a_typed_error_on_the_pyomo_branch() -> None:
    with pytest.raises(mcpkit.UnknownOptionError, match="no_such_option"):
        mcpkit.solve(
            MCP.lcp(np.eye(2), [1.0, 1.0]),
            backend="pyomo",
            method="scholtes",
            ipopt="mcpkit_ipopt",
            ipopt_options={"no_such_option": 1},
        )
