"""Structure of the horizon MPCC builder (no solver): sizes, coupling rows, typed input errors, steps
built from models (``StepSpec.from_model``) and verdicts from parts."""

from __future__ import annotations

import json
import math

import casadi as ca
import numpy as np
import pytest

from mcpkit.errors import BoundsError, MCPInputError, NonFiniteError, ShapeError
from mcpkit.mpec.horizon import (
    HORIZON_IPOPT_OPTIONS,
    HORIZON_SOLVE_OPTIONS,
    LIFT_DESIGN_MIN_STEPS,
    Horizon,
    with_horizon_ipopt_options,
)
from mcpkit.mpec.resimulation import HorizonResult, resimulation_check
from mcpkit.mpec.step import PathConstraint, StepSpec
from mcpkit.problems.mcp import MCP
from mcpkit.solving.result import (
    RESULT_KEYS,
    MPCCResult,
    Outcome,
    SolutionStatus,
    Termination,
    ToleranceCheck,
)


def _mcp() -> MCP:
    r"""Step MCP with one block of each bound kind.

    ``a >= 0 ⟂ a - (x + u)`` (so ``a = max(0, x + u)``), ``-1 <= b <= 1 ⟂ b - s`` (a clip of
    the parameter ``s``), ``c`` free with ``c - 2 a = 0``, ``d`` fixed at 0 (``l = u``).
    """
    m = MCP("tiny")
    a = m.add_variables("a", 1, lb=0.0)[0]
    b = m.add_variables("b", 1, lb=-1.0, ub=1.0)[0]
    d = m.add_variables("d", 1, lb=0.0, ub=0.0)[0]
    xu = m.add_parameters("xu", 1)[0]
    s = m.add_parameters("s", 1)[0]
    m.add_parameters("const", 1, 7.0)
    m.add_functions("a", [a - xu])
    m.add_functions("b", [b - s])
    m.add_functions("d", [d])
    m.add_equations("c", 1, lambda c: [c[0] - 2 * a])
    return m


def _spec(**over: object) -> StepSpec:
    kw: dict[str, object] = {
        "mcp": _mcp(),
        "n_state": 2,
        "n_control": 1,
        "n_design": 1,
        "parameters": lambda x, u, th, t: {"xu": x[0] + u[0], "s": th[0] * t},
        "update": lambda x, z, u, th: ca.vertcat(z[0], x[1] + z[3]),
        "h": 0.1,
    }
    kw.update(over)
    return StepSpec(**kw)  # type: ignore[arg-type]


def test_sizes_of_tiny_horizon() -> None:
    """Counts derived by hand for N = 3, n_x = 2, n_u = 1, n_theta = 1.

    Step MCP: z = (a, b, d, c); slacks w for the finite lower bounds of the non-fixed a, b and v
    for the finite upper bound of b, so the step MPCC has 4 + 3 = 7 variables, 3 equality rows
    (a, b, c; d is fixed) and 3 pairs. Horizon with one design: 2*(N+1) + 1*N + 1 + 7*N = 33
    variables, 3N + 2N = 15 rows (+ 2N path rows), 3N = 9 pairs; with a design copy per step
    (``lift_design=True``; by default only from LIFT_DESIGN_MIN_STEPS steps on) N - 1 = 2 more
    variables and N - 1 = 2 more rows.
    """
    N = 3
    pc = PathConstraint(lambda x, u, th: ca.vertcat(u[0] - x[0], u[0] + x[0]), -1.0, 1.0)
    one = Horizon(_spec(), N, [0.5, 0.0], path=[pc])
    hz = Horizon(_spec(), N, [0.5, 0.0], path=[pc], lift_design=True)
    mp = hz.mpcc
    assert hz.n_step_vars == 7
    assert one.mpcc.x.numel() == 2 * (N + 1) + N + 1 + 7 * N
    assert one.mpcc.g.numel() == 3 * N + 2 * N + 2 * N
    assert (one.n_design_copies, hz.n_design_copies) == (1, N)
    assert mp.x.numel() == 2 * (N + 1) + N + N + 7 * N
    assert mp.g.numel() == 3 * N + 2 * N + 2 * N + (N - 1)
    assert mp.n_pairs == one.mpcc.n_pairs == 3 * N
    assert mp.G_implied_by_bounds and mp.H_implied_by_bounds
    # stage order: per step the 3 step rows, the 2 path rows, the 2 dynamics rows (and the copy row)
    k = np.arange(N)[:, None]
    np.testing.assert_array_equal(one.rows["step"], (7 * k + np.arange(3)).ravel())
    np.testing.assert_array_equal(one.rows["path"], (7 * k + 3 + np.arange(2)).ravel())
    np.testing.assert_array_equal(one.rows["dynamics"], (7 * k + 5 + np.arange(2)).ravel())
    np.testing.assert_array_equal(hz.rows["dynamics"], (8 * k + 5 + np.arange(2)).ravel())
    np.testing.assert_array_equal(hz.rows["design"], [7, 15])
    assert one.rows["design"].size == 0
    # variables: per step (x_k, u_k, theta_k, s_k), then x_N; a single theta last
    np.testing.assert_array_equal(one.layout["x"], np.r_[0, 1, 10, 11, 20, 21, 30, 31])
    np.testing.assert_array_equal(one.layout["theta"], [32])
    np.testing.assert_array_equal(hz.layout["theta_copies"], [3, 14, 25])
    np.testing.assert_array_equal(hz.layout["s"][:7], np.arange(4, 11))
    # x0 fixed by bounds, terminal free, step bounds repeated
    L = hz.layout
    np.testing.assert_array_equal(mp.lbx[L["x"]][:2], [0.5, 0.0])
    np.testing.assert_array_equal(mp.ubx[L["x"]][:2], [0.5, 0.0])
    assert np.isinf(mp.lbx[L["x"]][2:]).all()
    s_lo = mp.lbx[L["s"]].reshape(N, 7)
    np.testing.assert_array_equal(s_lo[:, :4], np.tile([0.0, -1.0, 0.0, -np.inf], (N, 1)))


def test_coupling_and_step_rows_evaluate_to_hand_values() -> None:
    r"""At a random point the rows equal the formulas written out by hand.

    Dynamics rows: :math:`x_{k+1} - (a_k, x_{k,1} + c_k)`. Step rows (slack form):
    :math:`a - (x_0 + u) - w_a`, :math:`b - \theta t_k - w_b + v_b`, :math:`c - 2a`.
    Pairs: G = (a - 0, b + 1, 1 - b), H = (w_a, w_b, v_b). Path rows: (u - x_0, u + x_0).
    """
    N = 2
    pc = PathConstraint(lambda x, u, th: ca.vertcat(u[0] - x[0], u[0] + x[0]), -1.0, 1.0)
    hz = Horizon(_spec(), N, [0.5, 0.0], path=[pc], t0=0.3)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(N + 1, 2))
    U = rng.normal(size=(N, 1))
    th = rng.normal(size=1)
    S = rng.normal(size=(N, 7))
    v = hz.mpcc.evaluate(hz.pack(X, U, th, S), np.zeros(0))
    g, G, H = v["g"], v["G"], v["H"]
    t = 0.3 + 0.1 * np.arange(N)
    for k in range(N):
        a, b, _d, c, wa, wb, vb = S[k]
        r = 7 * k  # stage order: step rows, path rows, dynamics rows
        np.testing.assert_allclose(
            g[r : r + 3], [a - (X[k, 0] + U[k, 0]) - wa, b - th[0] * t[k] - wb + vb, c - 2 * a],
            rtol=0, atol=1e-12,
        )  # fmt: skip
        np.testing.assert_allclose(g[r + 5 : r + 7], X[k + 1] - [a, X[k, 1] + c], rtol=0, atol=1e-12)
        np.testing.assert_allclose(
            g[r + 3 : r + 5], [U[k, 0] - X[k, 0], U[k, 0] + X[k, 0]], rtol=0, atol=1e-12
        )
        np.testing.assert_allclose(G[3 * k : 3 * k + 3], [a, b + 1, 1 - b], rtol=0, atol=1e-12)
        np.testing.assert_allclose(H[3 * k : 3 * k + 3], [wa, wb, vb], rtol=0, atol=1e-12)
    # unpack inverts pack
    parts = hz.unpack(hz.pack(X, U, th, S))
    np.testing.assert_array_equal(parts["states"], X)
    np.testing.assert_array_equal(parts["s"], S)


def test_design_copies_are_the_same_mpcc() -> None:
    r"""With a design copy per step (``lift_design``) every row of the one-design MPCC is
    reproduced at the packed point, the copy rows :math:`\theta_{k+1} - \theta_k` vanish there and
    equal the differences at a point whose copies differ; every copy carries the design bounds,
    and ``unpack`` reads the design from the first copy."""
    N = 4
    pc = PathConstraint(lambda x, u, th: ca.vertcat(u[0] - x[0], u[0] + th[0]), -1.0, 1.0)
    kw = dict(path=[pc], design_bounds=(-2.0, 3.0), stage_cost=lambda x, u, th, z, k: th[0] * u[0] ** 2,
              terminal_cost=lambda x, th: th[0] * x[0])  # fmt: skip
    one = Horizon(_spec(), N, [0.5, 0.0], lift_design=False, **kw)
    hz = Horizon(_spec(), N, [0.5, 0.0], lift_design=True, **kw)
    rng = np.random.default_rng(5)
    X, U, th = rng.normal(size=(N + 1, 2)), rng.normal(size=(N, 1)), rng.normal(size=1)
    S = rng.normal(size=(N, 7))
    v1 = one.mpcc.evaluate(one.pack(X, U, th, S), np.zeros(0))
    x = hz.pack(X, U, th, S)
    v = hz.mpcc.evaluate(x, np.zeros(0))
    keep = np.ones(int(hz.mpcc.g.numel()), dtype=bool)
    keep[hz.rows["design"]] = False
    np.testing.assert_allclose(v["g"][keep], v1["g"], rtol=0, atol=1e-14)
    np.testing.assert_array_equal(v["g"][hz.rows["design"]], np.zeros(N - 1))
    for key in ("f", "G", "H"):
        np.testing.assert_allclose(v[key], v1[key], rtol=0, atol=1e-14)
    copies = np.array([1.0, -0.5, 2.0, 0.25])
    x[hz.layout["theta_copies"]] = copies
    np.testing.assert_allclose(hz.mpcc.evaluate(x, np.zeros(0))["g"][hz.rows["design"]], np.diff(copies))
    np.testing.assert_array_equal(hz.mpcc.lbx[hz.layout["theta_copies"]], np.full(N, -2.0))
    np.testing.assert_array_equal(hz.mpcc.ubx[hz.layout["theta_copies"]], np.full(N, 3.0))
    assert hz.unpack(x)["design"].tolist() == [1.0]
    # step k's rows use its own copy only (what makes the KKT matrix banded)
    timed = Horizon(_spec(), N, [0.5, 0.0], lift_design=True, t0=0.3, **kw)
    th_k = timed.mpcc.x[timed.layout["theta_copies"].tolist()]
    m = timed.rows["step"].size // N
    for k in range(N):
        rows_k = timed.mpcc.g[timed.rows["step"][m * k : m * (k + 1)].tolist()]
        assert [bool(ca.depends_on(rows_k, th_k[j])) for j in range(N)] == [j == k for j in range(N)]
    assert "theta_{k+1} = theta_k" in hz.to_text() and "theta_{k+1}" not in one.to_text()
    with pytest.raises(MCPInputError, match="lift_design"):
        Horizon(_spec(), N, [0.5, 0.0], lift_design=1)  # type: ignore[arg-type]
    # the default: one design below LIFT_DESIGN_MIN_STEPS steps, a copy per step from there on
    assert Horizon(_spec(), N, [0.5, 0.0]).n_design_copies == 1
    M = LIFT_DESIGN_MIN_STEPS
    assert Horizon(_spec(), M - 1, [0.5, 0.0]).n_design_copies == 1
    assert Horizon(_spec(), M, [0.5, 0.0]).n_design_copies == M


def test_objective_is_stage_plus_terminal() -> None:
    """f = sum_k (u_k^2 + a_k) + 10 x_N0^2, evaluated by hand."""
    N = 2
    hz = Horizon(
        _spec(), N, [0.0, 0.0],
        stage_cost=lambda x, u, th, z, k: u[0] ** 2 + z[0],
        terminal_cost=lambda x, th: 10 * x[0] ** 2,
    )  # fmt: skip
    X = np.arange(6.0).reshape(3, 2)
    U = np.array([[1.5], [-2.0]])
    S = np.arange(14.0).reshape(2, 7)
    f = hz.mpcc.evaluate(hz.pack(X, U, [0.2], S), np.zeros(0))["f"][0]
    assert f == pytest.approx(1.5**2 + 0.0 + 2.0**2 + 7.0 + 10 * 16.0, rel=1e-14)


def test_terminal_and_state_bounds_intersect() -> None:
    lo, hi = [1.0, -math.inf], [1.0, math.inf]
    hz = Horizon(_spec(), 2, [0.0, 0.0], terminal_bounds=(lo, hi), state_bounds=([-5, -2], [5, 2]))
    L = hz.layout
    xs_lo = hz.mpcc.lbx[L["x"]].reshape(3, 2)
    xs_hi = hz.mpcc.ubx[L["x"]].reshape(3, 2)
    np.testing.assert_array_equal(xs_lo[2], [1.0, -2.0])
    np.testing.assert_array_equal(xs_hi[2], [1.0, 2.0])
    np.testing.assert_array_equal(xs_lo[1], [-5.0, -2.0])
    with pytest.raises(BoundsError):
        Horizon(_spec(), 2, [0.0, 0.0], terminal_bounds=([9, 0], [9, 0]), state_bounds=([-5, -2], [5, 2]))


def test_unknown_parameter_block_is_rejected() -> None:
    with pytest.raises(MCPInputError, match="unknown parameter blocks"):
        _spec(parameters=lambda x, u, th, t: {"xu": x[0], "nope": 1.0})


def test_wrong_parameter_size_is_rejected() -> None:
    with pytest.raises(ShapeError, match="'xu'"):
        _spec(parameters=lambda x, u, th, t: {"xu": ca.vertcat(x[0], x[1])})


def test_parameters_must_return_dict() -> None:
    with pytest.raises(MCPInputError):
        _spec(parameters=lambda x, u, th, t: [x[0]])


def test_update_of_wrong_size_is_rejected() -> None:
    with pytest.raises(ShapeError, match="update"):
        _spec(update=lambda x, z, u, th: z[0])
    bad = ca.Function("f", [ca.SX.sym("x", 3), ca.SX.sym("z", 4), ca.SX.sym("u"), ca.SX.sym("t")],
                      [ca.SX.zeros(2)])  # fmt: skip
    with pytest.raises(ShapeError):
        _spec(update=bad)


def test_update_as_casadi_function() -> None:
    x, z, u, th = ca.SX.sym("x", 2), ca.SX.sym("z", 4), ca.SX.sym("u"), ca.SX.sym("th")
    f = ca.Function("phi", [x, z, u, th], [ca.vertcat(z[0], x[1] + z[3])])
    spec = _spec(update=f)
    np.testing.assert_allclose(spec.x_next(np.array([1.0, 2.0]), np.arange(4.0), np.zeros(1), np.zeros(1)),
                               [0.0, 5.0], rtol=0, atol=0)  # fmt: skip


def test_bad_sizes_and_h() -> None:
    with pytest.raises(ShapeError):
        _spec(n_state=0)
    with pytest.raises(NonFiniteError):
        _spec(h=float("nan"))
    with pytest.raises(MCPInputError):
        _spec(h=-0.1)
    with pytest.raises(MCPInputError):
        _spec(mcp="not an mcp")


@pytest.mark.parametrize(
    ("kwargs", "err"),
    [
        ({"x_initial": [0.0, 0.0, 0.0]}, ShapeError),
        ({"x_initial": [0.0, float("nan")]}, NonFiniteError),
        ({"x_initial": [0.0, float("inf")]}, NonFiniteError),
        ({"n_steps": 0}, ShapeError),
        ({"control_bounds": (float("nan"), 1.0)}, NonFiniteError),
        ({"control_bounds": (2.0, 1.0)}, BoundsError),
        ({"control_bounds": (np.zeros((5, 1)), 1.0)}, ShapeError),
        ({"control_bounds": 1.0}, MCPInputError),
        ({"design_bounds": ([0.0, 0.0], [1.0, 1.0])}, ShapeError),
        ({"terminal_bounds": ([0.0, float("nan")], [1.0, 1.0])}, NonFiniteError),
        ({"terminal_bounds": ([math.inf, 0.0], [math.inf, 1.0])}, BoundsError),
        ({"stage_cost": 3.0}, MCPInputError),
        ({"path": [lambda x, u, th: x]}, MCPInputError),
        ({"t0": float("nan")}, NonFiniteError),
    ],
)
def test_horizon_input_errors(kwargs: dict[str, object], err: type[Exception]) -> None:
    args: dict[str, object] = {"n_steps": 2, "x_initial": [0.0, 0.0]}
    args.update(kwargs)
    with pytest.raises(err):
        Horizon(_spec(), **args)  # type: ignore[arg-type]


def test_nonscalar_stage_cost_and_bad_path_bounds() -> None:
    with pytest.raises(ShapeError):
        Horizon(_spec(), 2, [0.0, 0.0], stage_cost=lambda x, u, th, z, k: x)
    pc = PathConstraint(lambda x, u, th: ca.vertcat(u[0], x[0]), [0.0, 0.0, 0.0], 1.0)
    with pytest.raises(ShapeError):
        Horizon(_spec(), 2, [0.0, 0.0], path=[pc])
    pc = PathConstraint(lambda x, u, th: u[0], 2.0, 1.0)
    with pytest.raises(BoundsError):
        Horizon(_spec(), 2, [0.0, 0.0], path=[pc])


def test_solve_rejects_bad_controls_and_tolerance() -> None:
    hz = Horizon(_spec(), 2, [0.0, 0.0])
    with pytest.raises(ShapeError):
        hz.solve(np.zeros((3, 1)), [0.0])
    with pytest.raises(NonFiniteError):
        hz.solve(np.array([[0.0], [np.nan]]), [0.0])
    with pytest.raises(MCPInputError):
        hz.solve(np.zeros((2, 1)), [0.0], deviation_tol=-1.0)
    with pytest.raises(ShapeError):
        hz.unpack(np.zeros(3))


# --------------------------------------------------------------------------- step models declared once
def _example_horizons(example: str, n_steps: int) -> tuple[Horizon, Horizon]:
    """(horizon from the model's own step map, horizon from the hand-derived reference map)."""
    from mcpkit.mpec.examples.block import BlockTask, block_horizon
    from mcpkit.mpec.examples.pushing import PushTask, pushing_horizon
    from tests.reference_steps import block_reference_spec, pushing_reference_spec

    if example == "block":
        task = BlockTask(n_steps=n_steps)
        return block_horizon(task), block_horizon(task, block_reference_spec(task))
    ptask = PushTask(n_steps=n_steps)
    return pushing_horizon(ptask), pushing_horizon(ptask, pushing_reference_spec(ptask))


@pytest.mark.parametrize("example", ["block", "pushing"])
def test_horizon_from_model_is_the_hand_derived_mpcc(example: str) -> None:
    r"""``StepSpec.from_model`` gives the MPCC the examples used to derive by hand: same layout and
    bounds, and the same :math:`f, g, G, H` at random points (the maps agree up to rounding:
    e.g. the block's :math:`b = \hat M\nu + h(mg + Bu)/m` against :math:`\nu + h(g + u\hat x/m)`)."""
    new, ref = _example_horizons(example, 4)
    assert new.spec.model is not None and ref.spec.model is None
    a, b = new.mpcc, ref.mpcc
    assert (a.x.numel(), a.g.numel(), a.n_pairs) == (b.x.numel(), b.g.numel(), b.n_pairs)
    for name in ("lbx", "ubx", "lbg", "ubg"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    rng = np.random.default_rng(7)
    for _ in range(5):
        x = rng.normal(size=int(a.x.numel()))
        va, vb = a.evaluate(x, np.zeros(0)), b.evaluate(x, np.zeros(0))
        for key in ("f", "g", "G", "H"):
            np.testing.assert_allclose(va[key], vb[key], rtol=1e-12, atol=1e-12, err_msg=key)


def test_step_map_numpy_equals_casadi() -> None:
    r"""One definition, two namespaces: a model's NumPy ``parameters``/``advance`` (the simulator's)
    equal the CasADi map of ``StepSpec.from_model`` at random states, for the ECP slider with a
    time-dependent load and Stewart–Trinkle steps of a planar and a 3-D rigid body."""
    from mcpkit.models.ecp import ComplementarityECPStep, QuadraticECPStep, paper_push, paper_slider
    from mcpkit.models.stewart_trinkle import (
        Contact,
        LCPStep,
        LineSurface2D,
        NCPStep,
        PlanarBody,
        PlaneSurface,
        RigidBody3D,
    )  # fmt: skip

    rng = np.random.default_rng(3)
    planar = PlanarBody(mass=1.5, inertia=0.2, gravity=9.81)
    rigid = RigidBody3D(mass=2.0, inertia_body=[1.0, 2.0, 3.0], gravity=[0.0, 0.0, -9.81])
    models = [
        QuadraticECPStep(paper_slider(), paper_push()),
        ComplementarityECPStep(paper_slider(), paper_push()),
        LCPStep(planar, [Contact(LineSurface2D(), 0.3, [0.1, -0.05])], 0.01, n_d=2,
                input_matrix=[1.0, 0.5, 0.0]),
        NCPStep(rigid, [Contact(PlaneSurface(), 0.4, [0.1, 0.1, -0.1]),
                        Contact(PlaneSurface(), 0.4, [0, -0.1, -0.1])], 0.01),
    ]  # fmt: skip
    for model in models:
        spec = StepSpec.from_model(model)
        for _ in range(3):
            x = rng.normal(size=model.n_state)
            if model.n_state == 13:
                x[3:7] /= np.linalg.norm(x[3:7])
            U = rng.normal(size=(2, model.n_control))
            sim = model.with_inputs(U) if model.n_control else model
            t = float(rng.uniform(0, 1))
            p_np = model.mcp.parameter_vector(sim.parameters(1, t, x))
            np.testing.assert_allclose(spec.p_value(x, U[1], np.zeros(0), t), p_np, rtol=1e-13, atol=1e-13)
            z = rng.normal(size=model.mcp.n)
            res = type("R", (), {"z": z})()
            np.testing.assert_allclose(
                spec.x_next(x, z, U[1], np.zeros(0), t), sim.advance(1, t, x, res), rtol=1e-13, atol=1e-13
            )


def test_from_model_errors() -> None:
    """Typed errors: an object without a declared step map, a NumPy-only load, a moving plate."""
    from mcpkit.models.ecp import ComplementarityECPStep, paper_slider
    from mcpkit.models.stewart_trinkle import Contact, NCPStep, Particle, PlaneSurface, SinusoidalPlate

    with pytest.raises(MCPInputError, match="declared step map"):
        StepSpec.from_model(_mcp())
    numeric_load = ComplementarityECPStep(paper_slider(), lambda t, x: np.array([1.0, 0.0, 0.0]))
    with pytest.raises(MCPInputError, match="NumPy callable"):
        StepSpec.from_model(numeric_load)
    plate = SinusoidalPlate()
    moving = NCPStep(Particle(), [Contact(PlaneSurface(motion=plate), 0.3)], 1e-3)
    with pytest.raises(MCPInputError, match="static surfaces"):
        StepSpec.from_model(moving)


def test_with_inputs_validation() -> None:
    """Controls and design are checked when bound; a model with controls needs them to run."""
    from mcpkit.models.ecp import ComplementarityECPStep, EdgePusher, paper_slider

    model = ComplementarityECPStep(paper_slider(), EdgePusher(-0.025))
    assert (model.n_control, model.n_design) == (2, 1)
    with pytest.raises(MCPInputError, match="controls"):
        model.parameters(0, 0.0, np.zeros(6))
    with pytest.raises(ShapeError):
        model.with_inputs(np.zeros((3, 3)), [0.0])
    with pytest.raises(NonFiniteError):
        model.with_inputs(np.full((3, 2), np.nan), [0.0])
    with pytest.raises(ShapeError):
        model.with_inputs(np.zeros((3, 2)), [0.0, 1.0])
    with pytest.raises(MCPInputError, match="design"):
        model.with_inputs(np.zeros((3, 2)))
    bound = model.with_inputs(np.ones((3, 2)), [0.01])
    assert bound.mcp is model.mcp
    with pytest.raises(ShapeError, match="step 3"):
        bound.parameters(3, 0.0, np.zeros(6))


def test_update_with_time_argument() -> None:
    r"""An update may take the step's start time: :math:`\Phi = (z_0 + t, x_1)`, horizon rows use
    :math:`t_k = t_0 + kh`."""
    spec = _spec(update=lambda x, z, u, th, t: ca.vertcat(z[0] + t, x[1]))
    x_next = spec.x_next(np.array([1.0, 2.0]), np.arange(4.0), np.zeros(1), np.zeros(1), 0.5)
    np.testing.assert_allclose(x_next, [0.5, 2.0], rtol=0, atol=0)
    hz = Horizon(spec, 2, [0.0, 0.0], t0=0.3)
    rng = np.random.default_rng(2)
    X, S = rng.normal(size=(3, 2)), rng.normal(size=(2, 7))
    g = hz.mpcc.evaluate(hz.pack(X, rng.normal(size=(2, 1)), [0.1], S), np.zeros(0))["g"]
    for k in range(2):
        dyn = g[hz.rows["dynamics"][2 * k : 2 * k + 2]]
        np.testing.assert_allclose(dyn, X[k + 1] - [S[k, 0] + 0.3 + 0.1 * k, X[k, 1]], rtol=0, atol=1e-12)


# --------------------------------------------------------------------------- verdicts from parts
def _mpcc_result(solved: bool, termination: Termination) -> MPCCResult:
    status = SolutionStatus.SOLUTION if solved else SolutionStatus.INACCURATE
    return MPCCResult(
        x=np.zeros(2), f=1.5, g=np.zeros(0), G=np.zeros(1), H=np.zeros(1),
        comp_residual=0.0 if solved else 0.1, constraint_violation=0.0, termination=termination,
        solution_status=status, tol=1e-6, iterations=7, wall_time_s=0.1, backend="casadi",
        method="scholtes", message="mpcc says hi",
    )  # fmt: skip


def _horizon_result(mpcc: MPCCResult, check: ToleranceCheck | None) -> HorizonResult:
    z = np.zeros((2, 1))
    return HorizonResult(t=np.arange(3.0), states=np.zeros((3, 1)), controls=z, design=np.zeros(0), z=z,
                         objective=1.5, mpcc=mpcc, resim_states=np.zeros((3, 1)), resim=check)  # fmt: skip


def test_horizon_verdict_from_its_parts() -> None:
    """solved = MPCC solved AND re-simulation reproduced; termination and message from the first
    failing part; the summary starts with RESULT_KEYS."""
    ok, bad = _mpcc_result(True, Termination.CONVERGED), _mpcc_result(False, Termination.ITERATION_LIMIT)
    planned = np.zeros((3, 1))
    good = _horizon_result(ok, resimulation_check(planned + 1e-9, planned, 1e-4))
    assert isinstance(good, Outcome) and good.solved and good.termination is Termination.CONVERGED
    assert "reproduced (re-simulation deviation 1.00e-09 <= 1e-04)" in good.message
    assert tuple(good.summary())[: len(RESULT_KEYS)] == RESULT_KEYS
    dev = _horizon_result(ok, resimulation_check(planned + 0.5, planned, 1e-4))
    assert not dev.solved and dev.termination is Termination.STALLED
    assert dev.message == "FAILED: re-simulation deviation 5.00e-01 > 1e-04"
    nan = _horizon_result(ok, resimulation_check(np.full((3, 1), np.nan), planned, 1e-4))
    assert not nan.solved and nan.termination is Termination.NUMERICAL_ERROR and nan.max_deviation == math.inf
    both = _horizon_result(bad, resimulation_check(planned - 0.5, planned, 1e-4))
    assert not both.solved and both.termination is Termination.ITERATION_LIMIT
    assert both.message == "FAILED: MPCC not solved: mpcc says hi; re-simulation deviation 5.00e-01 > 1e-04"
    s = both.summary()
    assert s["solved"] is False and s["status"] == "iteration_limit" and s["max_resim_deviation"] == 0.5
    json.dumps(s)
    no_resim = _horizon_result(ok, None)
    assert no_resim.solved and math.isnan(no_resim.max_deviation)


def test_simulation_verdict_from_its_steps() -> None:
    """A simulation is solved when every step is; the first failed step names the termination."""
    from mcpkit.models.stepping import OnFailure, SimulationResult

    sim = SimulationResult(
        t=np.arange(4.0), states=np.zeros((4, 1)), z=np.zeros((3, 1)),
        step_solved=np.array([True, False, False]), natural_residual=np.array([0.0, 0.3, np.nan]),
        step_termination=[Termination.CONVERGED, Termination.LOCALLY_INFEASIBLE, None],
        iterations=np.zeros(3, dtype=int), step_time_s=np.zeros(3), on_failure=OnFailure.STOP,
    )  # fmt: skip
    assert isinstance(sim, Outcome) and not sim.solved
    assert sim.termination is Termination.LOCALLY_INFEASIBLE
    assert sim.message.startswith("1 of 3 steps solved; first failure at step 1")
    assert not sim.steps[2].ran and "not run" in sim.steps[2].message
    s = sim.summary()
    assert (
        tuple(s)[: len(RESULT_KEYS)] == RESULT_KEYS
        and s["on_failure"] == "stop"
        and s["failed_steps"] == [1, 2]
    )
    json.dumps(s)


def test_on_failure_is_validated() -> None:
    from mcpkit.errors import UnknownOptionError
    from mcpkit.models.stepping import OnFailure

    assert (
        OnFailure.parse("STOP") is OnFailure.STOP
        and OnFailure.parse(OnFailure.CONTINUE) is OnFailure.CONTINUE
    )
    with pytest.raises(UnknownOptionError, match=r"valid: \['continue', 'stop'\]"):
        OnFailure.parse("sometimes")


def test_run_simulator_passes_the_deadline_only_where_it_is_taken() -> None:
    """A simulator with a ``deadline`` parameter or ``**kwargs`` gets the planner's deadline; one
    without, or any simulator when there is no deadline, is called with (U, theta) only."""
    from mcpkit.mpec.resimulation import run_simulator

    seen: list[object] = []

    def with_deadline(U: np.ndarray, th: np.ndarray, deadline: float | None = None) -> np.ndarray:
        seen.append(deadline)
        return np.zeros((2, 1))

    def with_kwargs(U: np.ndarray, th: np.ndarray, **kw: object) -> np.ndarray:
        seen.append(kw.get("deadline", "absent"))
        return np.zeros((2, 1))

    def plain(U: np.ndarray, th: np.ndarray) -> np.ndarray:
        seen.append("plain")
        return np.zeros((2, 1))

    U, th = np.zeros((1, 1)), np.zeros(0)
    for fn in (with_deadline, with_kwargs, plain):
        out = run_simulator(fn, U, th, 12.5)
        assert out.shape == (2, 1) and out.dtype == float
    assert seen == [12.5, 12.5, "plain"]
    seen.clear()
    run_simulator(with_deadline, U, th, None)
    run_simulator(with_kwargs, U, th, None)
    assert seen == [None, "absent"]


@pytest.mark.parametrize("lift", [False, True])
def test_stage_order_makes_the_jacobian_block_banded(lift: bool) -> None:
    r"""In stage order the rows of step :math:`k` reach only the variables of step :math:`k`
    (:math:`x_k, u_k, \theta_k, s_k`), :math:`x_{k+1}` (dynamics) and :math:`\theta_{k+1}` (copy
    row), or the single :math:`\theta`, which is the last variable; the rows come step by step."""
    N = 5
    pc = PathConstraint(lambda x, u, th: ca.vertcat(u[0] - x[0], u[0] + th[0]), -1.0, 1.0)
    hz = Horizon(_spec(), N, [0.5, 0.0], path=[pc], lift_design=lift)
    L, R = hz.layout, hz.rows
    nv = int(hz.mpcc.x.numel())
    stage_of = np.full(nv, -1)
    stage_of[L["x"]] = np.repeat(np.arange(N + 1), 2)
    stage_of[L["u"]] = np.arange(N)
    stage_of[L["s"]] = np.repeat(np.arange(N), hz.n_step_vars)
    stage_of[L["theta_copies"]] = np.arange(N) if lift else N
    assert (np.diff(stage_of) >= 0).all()  # variables stage by stage, theta (unlifted) last
    assert lift or L["theta"].tolist() == [nv - 1]
    row_stage = np.full(int(hz.mpcc.g.numel()), -1)
    for name, per in (("step", 3), ("path", 2), ("dynamics", 2)):
        row_stage[R[name]] = np.repeat(np.arange(N), per)
    row_stage[R["design"]] = np.arange(R["design"].size)
    assert (np.diff(row_stage) >= 0).all() and (row_stage >= 0).all()
    jac = ca.jacobian(hz.mpcc.g, hz.mpcc.x).sparsity()
    rows, cols = np.array(jac.get_triplet()[0]), np.array(jac.get_triplet()[1])
    reach = stage_of[cols] - row_stage[rows]
    single_theta = np.isin(cols, L["theta"]) & (not lift)
    assert set(reach[~single_theta].tolist()) == {0, 1}


def test_horizon_ipopt_options_sit_under_the_callers() -> None:
    """The horizon's IPOPT settings fill in what the caller did not set (an ``ipopt_options``
    keyword wins key by key); a whole ``SolveOptions`` is taken as it is; nothing else moves."""
    from mcpkit.solving.options import SolveOptions

    assert with_horizon_ipopt_options({})["ipopt_options"] == HORIZON_IPOPT_OPTIONS
    key = next(iter(HORIZON_IPOPT_OPTIONS))
    out = with_horizon_ipopt_options({"sigma0": 0.1, "ipopt_options": {"tol": 1e-3}})
    assert out == {
        **HORIZON_SOLVE_OPTIONS,
        "sigma0": 0.1,
        "ipopt_options": {**HORIZON_IPOPT_OPTIONS, "tol": 1e-3},
    }
    assert with_horizon_ipopt_options({"polish_trigger": 0.5})["polish_trigger"] == 0.5
    assert with_horizon_ipopt_options({"ipopt_options": {key: "mine"}})["ipopt_options"][key] == "mine"
    base = SolveOptions(ipopt_options={"max_cpu_time": 5.0})
    assert with_horizon_ipopt_options({"options": base, "sigma0": 0.1}) == {"options": base, "sigma0": 0.1}


def test_blocked_layout_is_the_same_mpcc() -> None:
    """``stage_order=False`` stacks by kind (all states first, all step rows first); at the same
    packed point every named block of rows, the objective and the pairs equal the stage order's."""
    N = 4
    pc = PathConstraint(lambda x, u, th: ca.vertcat(u[0] - x[0], u[0] + th[0]), -1.0, 1.0)
    rng = np.random.default_rng(7)
    X, U = rng.normal(size=(N + 1, 2)), rng.normal(size=(N, 1))
    th, S = rng.normal(size=1), rng.normal(size=(N, 7))
    for lift in (False, True):
        st = Horizon(_spec(), N, [0.5, 0.0], path=[pc], lift_design=lift)
        bl = Horizon(_spec(), N, [0.5, 0.0], path=[pc], lift_design=lift, stage_order=False)
        np.testing.assert_array_equal(bl.layout["x"], np.arange(2 * (N + 1)))
        np.testing.assert_array_equal(bl.rows["step"], np.arange(3 * N))
        vs = st.mpcc.evaluate(st.pack(X, U, th, S), np.zeros(0))
        vb = bl.mpcc.evaluate(bl.pack(X, U, th, S), np.zeros(0))
        for name in ("step", "dynamics", "path", "design"):
            np.testing.assert_array_equal(vb["g"][bl.rows[name]], vs["g"][st.rows[name]])
        for key in ("f", "G", "H"):
            np.testing.assert_array_equal(vb[key], vs[key])
        assert bl.to_text() == st.to_text()
    with pytest.raises(MCPInputError, match="stage_order"):
        Horizon(_spec(), N, [0.5, 0.0], stage_order=1)  # type: ignore[arg-type]
