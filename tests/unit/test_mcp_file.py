"""MCPs from CasADi functions, the ``mcpkit-mcp`` file format, MCPLIB ports as MCPs, and the option
checks of ``solve_mcp`` (no solver runs here)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import casadi as ca
import numpy as np
import pytest
import scipy.sparse as sps
import sympy as sp

from mcpkit import solve_mcp
from mcpkit.command.cli import main
from mcpkit.errors import (
    BoundsError,
    MCPInputError,
    NonFiniteError,
    ProblemFileError,
    ShapeError,
    UnknownOptionError,
)
from mcpkit.formats.io import file_kind
from mcpkit.formats.mcp_file import (
    load_any_mcp,
    load_mcp_file,
    mcp_file_from_mpcc_json,
    read_mcp_file,
    save_mcp_file,
)
from mcpkit.frontends.functional import OPTIONS, CallableFunctions
from mcpkit.lowering.casadi_sympy import casadi_to_sympy
from mcpkit.lowering.from_casadi import mcp_from_casadi
from mcpkit.mpcc import load_mpcc_json
from mcpkit.problems.functions import AffineFunction, SymbolicFunction
from tests.conftest import SHARED_DATA

MCPLIB = SHARED_DATA / "mcplib"
PORTS = sorted(p.name for p in MCPLIB.glob("*.json") if not p.name.endswith(".lcp.json"))
needs_mcplib = pytest.mark.skipif(
    not MCPLIB.is_dir(), reason=f"{MCPLIB} not present (see ../shared/README.md)"
)


def nonlinear_function(T: Any = ca.SX) -> ca.Function:
    z, p = T.sym("z", 3), T.sym("p", 2)
    F = ca.vertcat(
        z[0] * z[1] + ca.sin(z[2]) - p[0],
        ca.exp(z[0]) + ca.sqrt(z[1] ** 2 + 1) - p[1] * z[2],
        ca.fmax(z[2], 0.5) + ca.fabs(z[0]) - 1 / (1 + z[1] ** 2),
    )
    return ca.Function("nl", [z, p], [F])


def assert_same_function(F: ca.Function, G: ca.Function, n: int, p0: np.ndarray, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(5):
        z = rng.uniform(-2, 2, n)
        a = np.asarray(F(z, p0) if F.n_in() == 2 else F(z), dtype=float).reshape(-1)
        b = np.asarray(G(z, p0) if G.n_in() == 2 else G(z), dtype=float).reshape(-1)
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)


# ------------------------------------------------------------ CasADi -> declaration
def test_sympy_replay_states_the_same_expressions() -> None:
    F = nonlinear_function()
    z = sp.symbols("z0:3", real=True)
    p = sp.symbols("p0:2", real=True)
    (exprs,) = casadi_to_sympy(F, [z, p])
    expected = [
        z[0] * z[1] + sp.sin(z[2]) - p[0],
        sp.exp(z[0]) + sp.sqrt(z[1] ** 2 + 1) - p[1] * z[2],
        sp.Max(z[2], sp.Float(0.5)) + sp.Abs(z[0]) - 1 / (1 + z[1] ** 2),
    ]
    for got, want in zip(exprs, expected, strict=True):
        assert sp.simplify(got - want) == 0, (got, want)
    # integer constants stay integers: a square is printed as a square, not a float power
    assert exprs[1].has(z[1] ** 2) and not exprs[1].has(sp.Float(2.0))


@pytest.mark.parametrize("T", [ca.SX, ca.MX])
def test_nonlinear_function_becomes_a_symbolic_block_that_evaluates_like_casadi(T: Any) -> None:
    F = nonlinear_function(T)
    p0 = np.array([0.3, -1.2])
    mcp = mcp_from_casadi(F, [0, -math.inf, -1], [math.inf, math.inf, 1], z0=[1, 2, 0.5], p0=p0)
    assert isinstance(mcp.function_block("z"), SymbolicFunction)
    assert mcp.n == 3 and mcp.n_params == 2
    np.testing.assert_array_equal(mcp.start, [1, 2, 0.5])
    rng = np.random.default_rng(1)
    for _ in range(5):
        z = rng.uniform(-1, 1, 3)
        np.testing.assert_allclose(mcp.evaluate(z), np.asarray(F(z, p0)).reshape(-1), rtol=1e-13, atol=1e-13)
    assert "sin" in mcp.to_text()


@pytest.mark.parametrize("T", [ca.SX, ca.MX])
def test_affine_function_becomes_an_affine_block(T: Any) -> None:
    rng = np.random.default_rng(2)
    A = sps.random(6, 6, density=0.4, random_state=3, format="csc") + sps.eye(6)
    b = rng.standard_normal(6)
    z, p = T.sym("z", 6), T.sym("p", 1)
    F = ca.Function("lin", [z, p], [ca.mtimes(ca.DM(A), z) + ca.DM(b) + ca.vertcat(p, T.zeros(5))])
    mcp = mcp_from_casadi(F, 0, math.inf, p0=[0.7])
    fb = mcp.function_block("z")
    assert isinstance(fb, AffineFunction)
    M = fb.M.toarray() if sps.issparse(fb.M) else np.asarray(fb.M)
    np.testing.assert_allclose(M, A.toarray(), rtol=0, atol=1e-15)
    assert fb.q[0].free_symbols  # q(p) keeps the parameter
    z1 = rng.standard_normal(6)
    np.testing.assert_allclose(mcp.evaluate(z1), A @ z1 + b + np.r_[0.7, np.zeros(5)], rtol=1e-13, atol=1e-13)


def test_parameter_dependent_jacobian_is_not_affine() -> None:
    z, p = ca.SX.sym("z", 2), ca.SX.sym("p", 1)
    F = ca.Function("pz", [z, p], [p * z + 1])
    assert isinstance(mcp_from_casadi(F, 0, math.inf, p0=[2.0]).function_block("z"), SymbolicFunction)


def test_mcp_from_casadi_typed_errors() -> None:
    z = ca.SX.sym("z", 2)
    good = ca.Function("g", [z], [z + 1])
    with pytest.raises(MCPInputError, match="casadi.Function"):
        mcp_from_casadi(lambda v: v, 0, 1)  # type: ignore[arg-type]
    with pytest.raises(ShapeError, match="outputs"):
        mcp_from_casadi(ca.Function("two", [z], [z, z]), 0, 1)
    with pytest.raises(ShapeError, match="vector of 2"):
        mcp_from_casadi(ca.Function("short", [z], [z[0]]), 0, 1)
    with pytest.raises(ShapeError, match="dense vector"):
        Z = ca.SX.sym("Z", 2, 2)
        mcp_from_casadi(ca.Function("mat", [Z], [ca.vec(Z)]), 0, 1)
    with pytest.raises(MCPInputError, match="pass p0"):
        mcp_from_casadi(nonlinear_function(), 0, 1)
    with pytest.raises(ShapeError, match="no parameters"):
        mcp_from_casadi(good, 0, 1, p0=[1.0])
    with pytest.raises(NonFiniteError):
        mcp_from_casadi(good, [0, math.nan], 1)
    with pytest.raises(BoundsError):
        mcp_from_casadi(good, [0, 2], 1)
    with pytest.raises(NonFiniteError):
        mcp_from_casadi(good, 0, 1, z0=[0, math.inf])
    x = ca.SX.sym("x")
    with pytest.raises(MCPInputError, match=r"OP_FMOD.*method='newton'\) solves it on the CasADi function"):
        mcp_from_casadi(ca.Function("fmod", [x], [ca.fmod(x, 2.0)]), 0, 1)


# ------------------------------------------------------------ the mcpkit-mcp format
def test_round_trip_with_parameters_and_meta(tmp_path: Path) -> None:
    F = nonlinear_function(ca.MX)
    meta = {"source": "test", "known_solutions": [[1.0, 2.0, 3.0]]}
    lb, ub = np.array([0, -math.inf, -1]), np.array([math.inf, math.inf, 1])
    path = save_mcp_file(tmp_path / "nl.json", F, lb, ub, [1, 2, 0.5], p0=[0.3, -1.2], meta=meta, name="nl")
    doc = json.loads(path.read_text())
    assert doc["format"] == "mcpkit-mcp" and doc["version"] == 1 and doc["ub"][0] == "inf"
    assert file_kind(path) == "mcp-json"
    f = read_mcp_file(path)
    np.testing.assert_array_equal(f.lb, lb)
    np.testing.assert_array_equal(f.ub, ub)
    np.testing.assert_array_equal(f.z0, [1, 2, 0.5])
    np.testing.assert_array_equal(f.p0, [0.3, -1.2])
    assert f.name == "nl" and f.meta == meta
    assert_same_function(f.F, F, 3, f.p0)
    mcp = load_mcp_file(path)
    np.testing.assert_allclose(
        mcp.evaluate([0.1, 0.2, 0.3]), np.asarray(F([0.1, 0.2, 0.3], f.p0)).reshape(-1)
    )


def test_function_of_z_only_is_stored_as_z_p(tmp_path: Path) -> None:
    z = ca.SX.sym("z", 2)
    F = ca.Function("F", [z], [ca.vertcat(z[0] ** 3 - z[1], z[1] + 1)])
    f = read_mcp_file(save_mcp_file(tmp_path / "a.json", F, 0, math.inf, [1, 1]))
    assert f.F.n_in() == 2 and f.F.numel_in(1) == 0 and f.p0.size == 0
    np.testing.assert_allclose(np.asarray(f.F([2, 3], [])).reshape(-1), [5, 4])


def write(tmp_path: Path, doc: Any, raw: str | None = None) -> Path:
    p = tmp_path / "bad.json"
    p.write_text(raw if raw is not None else json.dumps(doc))
    return p


def base_doc() -> dict[str, Any]:
    z, p = ca.SX.sym("z", 2), ca.SX.sym("p", 1)
    F = ca.Function("F", [z, p], [ca.vertcat(z[0] - p, z[1] ** 2)])
    return {"format": "mcpkit-mcp", "version": 1, "F": F.serialize(), "lb": [0, "-inf"],
            "ub": ["inf", 4], "z0": [1, 1], "p0": [0.5], "name": "b", "meta": {}}  # fmt: skip


def z3_function() -> str:
    z, p = ca.SX.sym("z", 3), ca.SX.sym("p", 0)
    return ca.Function("F3", [z, p], [z]).serialize()


MALFORMED: list[tuple[str, Any, str]] = [
    ("not json", None, "not valid JSON"),
    ("missing F", {"F": None}, "missing keys"),
    ("missing lb", {"lb": None}, "missing keys"),
    ("missing z0", {"z0": None}, "missing keys"),
    ("other format", {"format": "other"}, "format is 'other'"),
    ("version 2", {"version": 2}, "version 2 is not supported"),
    ("version string", {"version": "1"}, "version '1'"),
    ("F not a string", {"F": [1, 2]}, "serialize"),
    ("F garbage", {"F": "not a casadi blob"}, "cannot deserialize F"),
    (
        "F of z only",
        {"F": ca.Function("f", [ca.SX.sym("z", 2)], [ca.SX.sym("z", 2) * 0]).serialize()},
        "(z, p)",
    ),
    ("F 3 to 3 with 2 bounds", {"F": z3_function(), "p0": []}, "lb has 2 entries, expected 3"),
    ("lb too short", {"lb": [0]}, "lb has 1 entries"),
    ("lb NaN string", {"lb": [0, "nan"]}, "NaN"),
    ("lb word", {"lb": [0, "low"]}, "not a number"),
    ("lb nested", {"lb": [[0], [1]]}, "list of numbers"),
    ("l > u", {"lb": [0, 5]}, "l <= u"),
    ("z0 infinite", {"z0": [1, "inf"]}, "z0 must be finite"),
    ("p0 missing", {"p0": None}, "no p0"),
    ("p0 wrong length", {"p0": [1, 2]}, "p0 has 2 entries"),
    ("meta not an object", {"meta": [1]}, "meta an object"),
]


@pytest.mark.parametrize(("label", "change", "match"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_files_raise_problem_file_errors_naming_the_file(
    tmp_path: Path, label: str, change: Any, match: str
) -> None:
    doc = base_doc()
    if change is None:
        path = write(tmp_path, None, raw="{not json")
    else:
        for k, v in change.items():
            if v is None:
                del doc[k]
            else:
                doc[k] = v
        path = write(tmp_path, doc)
    with pytest.raises(ProblemFileError, match=match) as err:
        load_mcp_file(path)
    assert str(path) in str(err.value)


def test_json_nan_literal_is_refused(tmp_path: Path) -> None:
    text = json.dumps(base_doc()).replace('"z0": [1, 1]', '"z0": [1, NaN]')
    with pytest.raises(ProblemFileError, match="z0 contains NaN"):
        load_mcp_file(write(tmp_path, None, raw=text))


def test_cli_refuses_malformed_file_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = base_doc()
    doc["version"] = 7
    assert main(["solve", str(write(tmp_path, doc))]) == 2
    assert "version 7" in capsys.readouterr().err


def test_save_refuses_bad_input(tmp_path: Path) -> None:
    F = nonlinear_function()
    with pytest.raises(MCPInputError, match="pass p0"):
        save_mcp_file(tmp_path / "x.json", F, 0, 1, [0, 0, 0])
    with pytest.raises(BoundsError):
        save_mcp_file(tmp_path / "x.json", F, 2, 1, [0, 0, 0], p0=[0, 0])
    with pytest.raises(MCPInputError, match="JSON"):
        save_mcp_file(tmp_path / "x.json", F, 0, 1, None, p0=[0, 0], meta={"x": math.nan})
    assert not (tmp_path / "x.json").exists()


# ------------------------------------------------------------ MCPLIB ports
@needs_mcplib
@pytest.mark.parametrize("name", PORTS or ["none"])
def test_ports_read_as_mcps_and_round_trip_through_the_file_format(tmp_path: Path, name: str) -> None:
    port = MCPLIB / name
    assert file_kind(port) == "mcp-mpcc-json"
    f = mcp_file_from_mpcc_json(port)
    mpcc = load_mpcc_json(port)
    # the pairs (z_j, F_j) are the ports' (H_k, G_k) up to the sign of H_k = s z_j + c
    S = np.array(ca.evalf(ca.jacobian(mpcc.H, mpcc.x)))
    Gf = ca.Function("G", [mpcc.x, mpcc.p], [mpcc.G])
    rng = np.random.default_rng(4)
    for _ in range(3):
        z = rng.uniform(0.1, 2.0, mpcc.x.numel())
        F = np.asarray(f.F(z, f.p0)).reshape(-1)
        G = np.asarray(Gf(z, mpcc.p0)).reshape(-1)
        np.testing.assert_allclose(S.T @ G, F, rtol=1e-14, atol=1e-14)  # |s| = 1 in these ports
    path = save_mcp_file(tmp_path / name, f.F, f.lb, f.ub, f.z0, f.p0, meta=f.meta, name=f.name)
    g = read_mcp_file(path)
    for a, b in ((g.lb, f.lb), (g.ub, f.ub), (g.z0, f.z0), (g.p0, f.p0)):
        np.testing.assert_array_equal(a, b)
    assert g.meta == json.loads(port.read_text())["mcplib_meta"] and g.name == f.name
    assert_same_function(g.F, f.F, f.lb.size, f.p0)
    mcp, meta = load_any_mcp(path)
    affine = name.startswith(("munson", "obstacle"))
    assert isinstance(mcp.function_block("z"), AffineFunction if affine else SymbolicFunction)
    np.testing.assert_allclose(
        mcp.evaluate(f.z0), np.asarray(f.F(f.z0, f.p0)).reshape(-1), rtol=1e-12, atol=1e-12
    )


@needs_mcplib
def test_munson1b_reads_as_upper_bounded_mcp() -> None:
    f = mcp_file_from_mpcc_json(MCPLIB / "munson1b.json")
    np.testing.assert_array_equal(f.lb, [-math.inf] * 3)
    np.testing.assert_array_equal(f.ub, [0.0] * 3)
    lcp = json.loads((MCPLIB / "munson1b.lcp.json").read_text())
    z = np.array([-0.3, -1.1, -0.2])
    np.testing.assert_allclose(
        np.asarray(f.F(z, [])).reshape(-1), np.array(lcp["M"]) @ z + lcp["q"], atol=1e-14
    )


def mpcc_file(tmp_path: Path, f: Any = None, H: Any = None, lbw: Any = None, g: Any = None) -> Path:
    w = ca.SX.sym("w", 2)
    fun = lambda e, nm: ca.Function(nm, [w], [e]).serialize()  # noqa: E731
    doc = {
        "w": w.serialize(),
        "f_fun": fun(0 if f is None else f(w), "f"),
        "G_fun": fun(ca.vertcat(w[0] + w[1] - 1, w[1] - w[0]), "G"),
        "H_fun": fun(w if H is None else H(w), "H"),
        "lbw": [0, 0] if lbw is None else lbw,
        "ubw": [1e20, 1e20],
        "mcplib_meta": {},
    }
    if g is not None:
        doc["g_fun"], doc["lbg"], doc["ubg"] = fun(g(w), "g"), [0], [1]
    p = tmp_path / "m.json"
    p.write_text(json.dumps(doc))
    return p


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"f": lambda w: w[0] ** 2}, "objective depends"),
        ({"H": lambda w: ca.vertcat(w[0] + w[1], w[1])}, "exactly one variable"),
        ({"H": lambda w: ca.vertcat(w[0], w[0])}, "two pairs"),
        ({"H": lambda w: ca.vertcat(w[0] ** 2, w[1])}, "not affine"),
        ({"lbw": [0.5, 0]}, "tighter"),
        ({"g": lambda w: w[0]}, "not equations"),
    ],
)
def test_mpcc_that_is_not_an_mcp_is_refused(tmp_path: Path, kw: dict[str, Any], match: str) -> None:
    with pytest.raises(ProblemFileError, match=match):
        load_any_mcp(mpcc_file(tmp_path, **kw))


# ------------------------------------------------------------ solve_mcp: checks before solving
def ncp() -> tuple[Any, Any]:
    return (lambda z: z**3 + z - 1), (lambda z: np.diag(3 * z**2 + 1))


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"tolerance": 1e-6}, UnknownOptionError, "convergence_tolerance"),
        ({"max_iter": 5}, UnknownOptionError, "accepted"),
        ({"method": "nope"}, UnknownOptionError, "unknown method"),
        ({"convergence_tolerance": -1.0}, MCPInputError, "tol"),
        ({"major_iteration_limit": 0}, MCPInputError, "positive integer"),
        ({"output": "yes"}, MCPInputError, "True or False"),
        ({"method": "path"}, MCPInputError, "casadi.Function"),
        ({"method": "lemke"}, MCPInputError, "'newton' only"),
        ({"backend": "gamspy"}, MCPInputError, "backend must be 'auto'"),
        ({"p0": [1.0]}, MCPInputError, "p0 is for"),
    ],
)
def test_solve_mcp_option_errors(options: dict[str, Any], error: type, match: str) -> None:
    F, J = ncp()
    with pytest.raises(error, match=match):
        solve_mcp(F, J, 0, math.inf, np.ones(2), **options)


def test_unknown_option_message_lists_every_accepted_name() -> None:
    F, J = ncp()
    with pytest.raises(UnknownOptionError) as err:
        solve_mcp(F, J, 0, math.inf, np.ones(2), iterations=3)
    assert all(name in str(err.value) for name in OPTIONS)


def test_solve_mcp_input_errors_before_solving() -> None:
    F, J = ncp()
    with pytest.raises(ShapeError):
        solve_mcp(F, J, [0, 0], [1, 1, 1], np.ones(2))
    with pytest.raises(NonFiniteError):
        solve_mcp(F, J, 0, math.inf, [1.0, math.nan])
    with pytest.raises(BoundsError):
        solve_mcp(F, J, [0, 3], [1, 1], np.ones(2))
    with pytest.raises(ShapeError, match="F\\(z\\) returned 1"):
        solve_mcp(lambda z: z[:1], J, 0, math.inf, np.ones(2))
    with pytest.raises(ShapeError, match="J\\(z\\) has shape"):
        solve_mcp(F, lambda z: np.eye(3), 0, math.inf, np.ones(2))
    with pytest.raises(MCPInputError, match="J=None"):
        solve_mcp(nonlinear_function(), J, 0, 1, np.ones(3), p0=[0, 0])
    with pytest.raises(MCPInputError, match="pass p0"):
        solve_mcp(nonlinear_function(), None, 0, 1, np.ones(3))
    with pytest.raises(ShapeError, match="square"):
        solve_mcp(np.ones((2, 3)), np.ones(2), 0, math.inf)
    with pytest.raises(NonFiniteError):
        solve_mcp(sps.csr_matrix(np.array([[1.0, math.nan], [0, 1]])), np.ones(2), 0, math.inf)
    with pytest.raises(MCPInputError, match="expects callables"):
        solve_mcp("F", "J", 0, 1, np.ones(2))


def test_callable_jacobian_structure() -> None:
    F = lambda z: np.array([z[0] ** 2 + z[1], z[1] - 1.0, 2 * z[2]])  # noqa: E731
    J = lambda z: sps.csr_matrix(np.array([[2 * z[0], 1, 0], [0, 1, 0], [0, 0, 2.0]]))  # noqa: E731
    # from J(z0) at z0 = 0: the explicit-zero-free sparse J(0) misses (0, 0), and a later J has it
    f = CallableFunctions(F, J, np.zeros(3))
    assert f.row.size == 3
    with pytest.raises(MCPInputError, match="outside the Jacobian structure"):
        f.J(np.ones(3))
    g = CallableFunctions(F, J, np.zeros(3), structure=([0, 0, 1, 2], [0, 1, 1, 2]))
    vals = g.J(np.array([3.0, 0, 0]))
    A = sps.csc_matrix((vals, g.row, g.colind), shape=(3, 3)).toarray()
    np.testing.assert_array_equal(A, [[6, 1, 0], [0, 1, 0], [0, 0, 2]])
    dense = CallableFunctions(F, lambda z: J(z).toarray(), np.zeros(3))
    assert dense.row.size == 9  # a dense J: every entry may be nonzero
    with pytest.raises(ShapeError, match="index a 3 x 3"):
        CallableFunctions(F, J, np.zeros(3), structure=([0, 5], [0, 1]))
