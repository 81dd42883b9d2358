r"""Cost of declaring and lowering block-level Stewart–Trinkle steps against the number of nonzeros.

A step declared at block level (:mod:`mcpkit.problems.blocks`) keeps every wrench matrix as one matrix
parameter, so declaring it and lowering it should cost memory :math:`O(\mathrm{nnz})` and time
linear in :math:`\mathrm{nnz}`, where nnz counts the stored entries of the matrix parameters and
constants (:attr:`mcpkit.problems.functions.BlockFunction.nnz`). Two families:

* ``rigid``: :class:`~mcpkit.models.stewart_trinkle.NCPStep` and ``LCPStep`` (``n_d = 8``) of one
  3-D rigid body with ``nc`` point contacts (dense :math:`6\times n_c` wrench matrices);
* ``particles``: ``nc`` particles, each on its own plane, declared with *sparse* matrix
  parameters (:math:`W_n, W_t, W_o \in \mathbb{R}^{3n_c\times n_c}` with 3 entries per column,
  :math:`\hat M` diagonal), the NCP of eq (9);
* ``fclib``: the Alart–Curnier FCLIB declaration (:func:`~mcpkit.models.fclib.fclib_mcp`) of a
  synthetic problem with ``nc`` contacts in a chain, :math:`W` block tridiagonal (3x3 blocks,
  symmetric positive definite), split into the nine :math:`n_c \times n_c` sparse blocks
  :math:`W_{ab}`.

Phases, each timed: ``declare`` (building the MCP), ``casadi`` (:func:`lower_to_casadi`: SX or MX
by the usual rule), ``jac`` (building :math:`\partial F/\partial z` and one evaluation of
:math:`F` and :math:`J`), ``pyomo`` (:class:`~mcpkit.lowering.pyomo.ToPyomo`), and for small sizes
``entrywise`` (``nc <= 100``, not ``fclib``): the same step expanded to one sympy row per
component and lowered (what the models did before block declarations). Memory: peak Python
allocations (``tracemalloc``) of declare + lower, and the growth of the process's peak RSS
(CasADi's C++ memory included); each size runs in its own process. ``us/nnz`` is (declare +
casadi + jac) per stored entry.

Run ``python benchmarks/bench_block_declarations.py [--json] [--sizes 50,500,5000] [--quick]``;
``benchmarks/bench_mcp_scaling.py --parts blocks`` prints the 500-contact rows (:func:`run_sizes`,
:func:`table_lines`) beside issue 10's figures.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sps


def _rss_mb() -> float:
    """Peak RSS of this process in MB: ``VmHWM`` (reset by ``exec``; ``ru_maxrss`` is not, so a child
    of a large parent would report the parent's peak), else ``ru_maxrss``."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return float(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def rigid_contacts(nc: int) -> list[Any]:
    """``nc`` contact points on a circle under a rigid body, against one plane."""
    from mcpkit.models.stewart_trinkle import Contact, PlaneSurface

    ang = 2 * np.pi * np.arange(nc) / nc
    pts = np.stack([np.cos(ang), np.sin(ang), -np.ones(nc)], axis=1)
    plane = PlaneSurface()
    return [Contact(plane, 0.3, p) for p in pts]


def rigid_step(kind: str, nc: int, contacts: list[Any] | None = None) -> Any:
    """Block-level NCP or LCP step of one rigid body with ``nc`` contacts on a plane."""
    from mcpkit.models.stewart_trinkle import LCPStep, NCPStep, RigidBody3D

    contacts = rigid_contacts(nc) if contacts is None else contacts
    body = RigidBody3D(inertia_body=[1.0, 2.0, 3.0])
    if kind == "ncp":
        return NCPStep(body, contacts, 1e-3)
    return LCPStep(body, contacts, 1e-3, n_d=8)


def particles_ncp(nc: int) -> Any:
    r"""Eq (9) for ``nc`` particles (one contact each), with sparse matrix parameters."""
    from mcpkit import MCP
    from mcpkit.problems import blocks

    nv = 3 * nc
    m = MCP("particles_ncp")
    cols = np.repeat(np.arange(nc), 3)
    W = sps.csr_array((np.ones(nv), (np.arange(nv), cols)), shape=(nv, nc))
    vc, c = ("n_v", "n_c"), "n_c"
    Mhat = m.add_parameter_block("Mhat", (nv, nv), sps.eye_array(nv, format="csr"), r"\hat M", ("n_v", "n_v"))
    b = m.add_parameter_block("b", nv, latex="b", dim="n_v")
    psi = m.add_parameter_block("psi_h", nc, latex=r"\psi_n/h", dim=c)
    Wn = m.add_parameter_block("Wn", (nv, nc), W, "W_n", vc)
    Wt = m.add_parameter_block("Wt", (nv, nc), W, "W_t", vc)
    Wo = m.add_parameter_block("Wo", (nv, nc), W, "W_o", vc)
    ut = m.add_parameter_block("ut", nc, latex="u_t", dim=c)
    uo = m.add_parameter_block("uo", nc, latex="u_o", dim=c)
    mu = m.add_parameter_block("mu", nc, 0.3, latex=r"\mu", dim=c)
    bn = m.add_variable_block("lam_n", nc, lb=0.0, dim=c)
    bt = m.add_variable_block("lam_t", nc, lb=-math.inf, dim=c)
    bo = m.add_variable_block("lam_o", nc, lb=-math.inf, dim=c)
    sig = m.add_variable_block("sigma", nc, lb=0.0, dim=c)
    v = m.add_variable_block("v", nv, lb=-math.inf, dim="n_v")
    U = blocks.named("U", blocks.diag(mu))
    Ubn = U @ bn
    m.add_functions("lam_n", Wn.T @ v + psi)
    m.add_functions("lam_t", Ubn * blocks.named("v_t", Wt.T @ v - ut) + bt * sig)
    m.add_functions("lam_o", Ubn * blocks.named("v_o", Wo.T @ v - uo) + bo * sig)
    m.add_functions("sigma", Ubn**2 - bt**2 - bo**2)
    m.add_functions("v", Mhat @ v - b - Wn @ bn - Wt @ bt - Wo @ bo)
    return m


def fclib_chain(nc: int, seed: int = 0) -> Any:
    r"""A synthetic FCLIB problem: ``nc`` contacts in a chain, :math:`W` block tridiagonal and SPD."""
    from mcpkit.models.fclib import FCLIBProblem

    rng = np.random.default_rng(seed)
    n = 3 * nc
    C = sps.random(n, n, density=0.0, random_state=rng, format="lil")
    for i in range(nc):
        for j in range(max(0, i - 1), min(nc, i + 2)):
            C[3 * i : 3 * i + 3, 3 * j : 3 * j + 3] = rng.normal(size=(3, 3)) * (1.0 if i == j else 0.3)
    C = sps.csr_array(C)
    W = (C @ C.T + 3.0 * sps.eye_array(n)).toarray()
    return FCLIBProblem(W, rng.normal(size=n), np.full(nc, 0.3))


def _entrywise(mcp: Any) -> Any:
    """The same MCP with every block function expanded to sympy rows (the entrywise declaration)."""
    from mcpkit import MCP
    from mcpkit.problems.functions import BlockFunction

    out = MCP(mcp.name + "_entrywise")
    for pb in mcp.parameter_blocks:
        out.add_parameters(pb.name, pb.size, mcp.parameter_values[pb.slice])
    for vb in mcp.blocks:
        out.add_variables(vb.name, vb.size, mcp.lb[vb.slice], mcp.ub[vb.slice])
    for vb in mcp.blocks:
        fb = mcp.function_block(vb.name)
        assert isinstance(fb, BlockFunction)
        out.add_functions(vb.name, list(fb.expand()))
    return out


def measure(family: str, nc: int, entrywise: bool, pyomo: bool) -> dict[str, Any]:
    """One size, in this process: phase times, nnz, memory."""
    import casadi as ca

    from mcpkit.lowering.casadi import ToCasadi, lower_to_casadi
    from mcpkit.lowering.pyomo import ToPyomo
    from mcpkit.models.fclib import fclib_mcp
    from mcpkit.models.stewart_trinkle import NCPStep  # noqa: F401  (imports outside the timings)
    from mcpkit.problems.functions import BlockFunction

    contacts = rigid_contacts(nc) if family.startswith("rigid") else None  # geometry, not declaration
    prob = fclib_chain(nc) if family == "fclib" else None  # the file's data, not the declaration
    rss0 = _rss_mb()
    tracemalloc.start()
    t0 = time.perf_counter()
    step = None
    if family == "particles":
        mcp = particles_ncp(nc)
    elif prob is not None:
        mcp = fclib_mcp(prob)
    else:
        step = rigid_step(family.split("-")[1], nc, contacts)
        mcp = step.mcp
    t_declare = time.perf_counter() - t0
    nnz = sum(fb.nnz for b in mcp.blocks if isinstance(fb := mcp.function_block(b.name), BlockFunction))
    t0 = time.perf_counter()
    cas = lower_to_casadi(mcp)
    t_casadi = time.perf_counter() - t0
    _, py_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rng = np.random.default_rng(0)
    p = mcp.parameter_values if step is None else mcp.parameter_vector(step.parameters(0, 0.0, _state(step)))
    z = rng.normal(size=mcp.n)
    t0 = time.perf_counter()
    J = cas.jacobian_function()
    F = np.asarray(cas.F_fun(z, p)).reshape(-1)
    Jz = J(z, p)
    t_jac = time.perf_counter() - t0
    row: dict[str, Any] = {
        "family": family, "nc": nc, "n": mcp.n, "n_params": mcp.n_params, "nnz": nnz,
        "graph": type(cas.z).__name__, "declare_s": t_declare, "casadi_s": t_casadi, "jac_s": t_jac,
        "jac_nnz": int(ca.DM(Jz).nnz()), "F_finite": bool(np.isfinite(F).all()),
        "py_peak_mb": py_peak / 2**20, "rss_growth_mb": _rss_mb() - rss0,
        "lines": len(mcp.to_text().splitlines()),
    }  # fmt: skip
    if pyomo:
        t0 = time.perf_counter()
        ToPyomo().apply(mcp)
        row["pyomo_s"] = time.perf_counter() - t0
    if entrywise:
        t0 = time.perf_counter()
        ew = _entrywise(mcp)
        ToCasadi().apply(ew)
        row["entrywise_s"] = time.perf_counter() - t0
        Fe = np.asarray(lower_to_casadi(ew).F_fun(z, p)).reshape(-1)
        row["entrywise_max_diff"] = float(np.max(np.abs(Fe - F)))
    return row


def _state(step: Any) -> np.ndarray:
    return step.initial_state([0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0], [0.1, 0.0, -0.2, 0.0, 0.3, 0.0])


def _child(args: argparse.Namespace) -> None:
    row = measure(args.family, args.nc, args.entrywise, args.pyomo)
    print(json.dumps(row))


FAMILIES = ("rigid-ncp", "rigid-lcp", "particles", "fclib")


def run_sizes(sizes: list[int], families: tuple[str, ...] = FAMILIES) -> list[dict[str, Any]]:
    """:func:`measure` each family at each size, each in its own process (entrywise up to 100
    contacts, except ``fclib``; Pyomo up to 2000)."""
    rows = []
    for family in families:
        for nc in sizes:
            cmd = [sys.executable, __file__, "--child", "--family", family, "--nc", str(nc)]
            if nc <= 100 and family != "fclib":  # sympy Max/sqrt rows: 100 s at 50 contacts
                cmd.append("--entrywise")
            if nc <= 2000:
                cmd.append("--pyomo")
            out = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if out.returncode != 0:
                rows.append({"family": family, "nc": nc, "error": out.stderr.strip().splitlines()[-1:]})
                continue
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return rows


def table_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The rows of :func:`run_sizes` as a table."""
    lines = [
        f"{'family':<10}{'nc':>6}{'n':>7}{'nnz':>8}{'graph':>6}{'decl s':>8}{'lower s':>8}{'jac s':>8}"
        f"{'pyomo s':>8}{'us/nnz':>8}{'py MB':>7}{'RSS MB':>7}{'lines':>6}{'entrywise s':>12}"
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"{r['family']:<10}{r['nc']:>6}  ERROR {r['error']}")
            continue
        total = r["declare_s"] + r["casadi_s"] + r["jac_s"]
        ew = f"{r['entrywise_s']:12.2f}" if "entrywise_s" in r else f"{'-':>12}"
        py = f"{r['pyomo_s']:8.2f}" if "pyomo_s" in r else f"{'-':>8}"
        lines.append(
            f"{r['family']:<10}{r['nc']:>6}{r['n']:>7}{r['nnz']:>8}{r['graph']:>6}{r['declare_s']:8.3f}"
            f"{r['casadi_s']:8.3f}{r['jac_s']:8.3f}{py}{1e6 * total / r['nnz']:8.1f}{r['py_peak_mb']:7.1f}"
            f"{r['rss_growth_mb']:7.1f}{r['lines']:>6}{ew}"
        )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    ap.add_argument("--sizes", default="50,100,200,500,1000,2000", help="contact counts")
    ap.add_argument("--quick", action="store_true", help="sizes 50,200,500 only")
    ap.add_argument("--families", default=",".join(FAMILIES), help=f"comma-separated subset of {FAMILIES}")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--family", default="rigid-ncp", help=argparse.SUPPRESS)
    ap.add_argument("--nc", type=int, default=50, help=argparse.SUPPRESS)
    ap.add_argument("--entrywise", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--pyomo", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(args)
        return
    sizes = [50, 200, 500] if args.quick else [int(s) for s in args.sizes.split(",")]
    rows = run_sizes(sizes, tuple(f.strip() for f in args.families.split(",") if f.strip()))
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print("\n".join(table_lines(rows)))


if __name__ == "__main__":
    main()
