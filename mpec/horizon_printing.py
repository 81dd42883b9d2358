r"""The printed form of a horizon MPCC: one step's blocks "for k = 0, …, N-1".

:func:`horizon_blocks` gives the :class:`~mcpkit.problems.segments.MPCCBlocks` that
:meth:`mcpkit.mpcc.MPCC.to_text`, ``to_latex`` and ``explain`` print for a
:class:`~mcpkit.mpec.horizon.Horizon`. Per step :math:`k`: the step MCP's blocks in slack form
with the names suffixed ``_k`` (parameters that :math:`P` sets per step too), the dynamics
:math:`x_{k+1} = \Phi(x_k, z_k, u_k, \theta, t_k)`, the path constraints and the costs
:math:`\sum_k \ell_k + \ell_N`; :math:`P`, :math:`\Phi` and the costs are printed from CasADi on
named symbols (or by their arguments when too large). Nothing depends on :math:`N` but the
slices, so a horizon prints as many lines for any :math:`N`. Built on first print: building a
horizon pays nothing for printing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import casadi as ca
import numpy as np

from mcpkit.mpec.step import as_column, as_scalar
from mcpkit.printing.expressions import space, sym_shape
from mcpkit.printing.mpcc import casadi_formulas, declaration_parts, slack_segments, step_latex
from mcpkit.problems import blocks as bx
from mcpkit.problems.segments import Formula, MPCCBlocks, Segment

if TYPE_CHECKING:
    from mcpkit.mpec.horizon import Horizon

__all__ = ["horizon_blocks"]

#: The printed name of the step index.
K = "k"


def _starts(idx: np.ndarray, n: int, size: int) -> list[int]:
    """First positions of the ``n`` runs of ``size`` entries of ``idx`` (see :func:`_runs`)."""
    return [sl.start for sl in _runs(idx, n, size)]


def _runs(idx: np.ndarray, n: int, size: int) -> tuple[slice, ...]:
    """``idx`` (positions in stage order, run by run) as ``n`` slices of ``size`` entries each; every
    run is contiguous in stage order (:meth:`Horizon._stage_order`)."""
    out = []
    for i in range(n):
        run = idx[i * size : (i + 1) * size]
        a = int(run[0]) if size else 0
        if size and not np.array_equal(run, np.arange(a, a + size)):
            raise AssertionError(f"run {i} of a horizon block is not contiguous")
        out.append(slice(a, a + size))
    return tuple(out)


def _named_column(name: str, tex: str, n: int) -> tuple[ca.SX, list[tuple[ca.SX, Formula]]]:
    """SX symbols of one printed vector and their names (``x_k[0], ...``; a scalar prints as ``u_k``)."""
    col = ca.SX.sym(name, n)
    names = [(name, tex)] if n == 1 else [(f"{name}[{j}]", step_latex(tex, j)) for j in range(n)]
    return col, [(col[j], names[j]) for j in range(n)]


def _args(expr: ca.SX, columns: list[tuple[Formula, ca.SX]]) -> Formula:
    """``(x_k, v_k)``: the printed arguments that ``expr`` depends on."""
    used = [nm for nm, col in columns if col.numel() and ca.depends_on(expr, col)]
    return ", ".join(n[0] for n in used), ", ".join(n[1] for n in used)


def _per(starts: list[int]) -> Callable[[slice], tuple[slice, ...]]:
    """A slice of one step's block, placed at each step's start."""
    return lambda sl: tuple(slice(a + sl.start, a + sl.stop) for a in starts)


class _StepPrinter:
    """One step's named symbols (``x_k``, ``u_k``, ``theta``, ``t_k``, the step MCP's blocks
    ``z_k``) and the ``where`` lines the pieces of :func:`horizon_blocks` add."""

    def __init__(self, hz: Horizon) -> None:
        self.hz = hz
        spec = hz.spec
        mcp = spec.mcp
        self.xs, xn = _named_column("x_k", "x_{k}", spec.n_state)
        self.us, un = _named_column("u_k", "u_{k}", spec.n_control)
        self.lifted = hz.n_design_copies > 1
        self.th_name = ("theta_k", r"\theta_{k}") if self.lifted else ("theta", r"\theta")
        self.ths, self.thn = _named_column(*self.th_name, spec.n_design)
        self.t = ca.SX.sym("t_k")
        zcols: list[tuple[Formula, ca.SX]] = []
        zn: list[tuple[ca.SX, Formula]] = []
        for b in mcp.blocks:
            col, names = _named_column(f"{b.name}_k", step_latex(b.latex, K), b.size)
            zcols.append(((f"{b.name}_k", step_latex(b.latex, K)), col))
            zn += names
        self.zs = ca.vertcat(*[c for _, c in zcols])
        self.symbols = xn + un + self.thn + [(self.t, ("t_k", "t_{k}"))] + zn
        self.columns = [(("x_k", "x_{k}"), self.xs), *zcols, (("u_k", "u_{k}"), self.us),
                        (self.th_name, self.ths), (("t_k", "t_{k}"), self.t)]  # fmt: skip
        self.p = spec.param_fun(self.xs, self.us, self.ths, self.t)
        inputs = ca.vertcat(self.xs, self.us, self.ths, self.t)
        self.per_step = {pb.name for pb in mcp.parameter_blocks if ca.depends_on(self.p[pb.slice], inputs)}
        self._memo: dict[int, bool] = {}
        self.where: list[tuple[Formula, Formula]] = []
        self.uses_t = False

    def is_step(self, leaf: bx.Expr) -> bool:
        """Whether a leaf of the declaration changes per step (a variable, a parameter that
        :math:`P` sets, or a named expression of those)."""
        if isinstance(leaf, bx.Var):
            return True
        if isinstance(leaf, bx.Param):
            return leaf.block.name in self.per_step
        if isinstance(leaf, bx.Named):
            if id(leaf) not in self._memo:
                self._memo[id(leaf)] = any(
                    self.is_step(x) for x in bx.walk(leaf.expr) if isinstance(x, (bx.Var, bx.Param))
                )
            return self._memo[id(leaf)]
        return False

    def rename(self, leaf: bx.Expr, name: str, latex: bool) -> str:
        """``name`` suffixed with the step index when the leaf changes per step."""
        if not self.is_step(leaf):
            return name
        return step_latex(name, K) if latex else f"{name}_{K}"

    def formula(self, e: ca.SX, fallback: Callable[[Formula], Formula]) -> Formula:
        """``e`` printed on the named symbols, or ``fallback`` of its arguments when too large."""
        f = casadi_formulas(e, self.symbols)
        return fallback(_args(e, self.columns)) if f is None else f

    def parameters(self) -> None:
        """The ``where`` lines of :math:`P`: each parameter block set per step."""
        for pb in self.hz.spec.mcp.parameter_blocks:
            if pb.name not in self.per_step:
                continue
            e = self.p[pb.slice]
            self.uses_t = self.uses_t or bool(ca.depends_on(e, self.t))
            shape = sym_shape(bx.Param(pb))
            nm = (f"{pb.name}_k", step_latex(pb.latex, K))
            f = self.formula(e, lambda a, n=pb.name: (f"P_{n}({a[0]})", rf"P_{{\mathrm{{{n}}}}}({a[1]})"))
            note = (f"{nm[0]} ∈ {space(shape, False)}", rf"{nm[1]} \in {space(shape, True)}")
            self.where.append(((f"{nm[0]} = {f[0]}", f"{nm[1]} = {f[1]}"), note))

    def dynamics(self) -> Segment:
        r"""The dynamics rows :math:`x_{k+1} = \Phi(\dots)` (and :math:`\Phi`'s formula under ``where``)."""
        hz = self.hz
        phi = hz.spec.update_fun(self.xs, self.zs, self.us, self.ths, self.t)
        self.uses_t = self.uses_t or bool(ca.depends_on(phi, self.t))
        args = _args(phi, self.columns)
        dyn = Segment(
            "g",
            "dynamics",
            _runs(hz.rows["dynamics"], hz.N, hz.spec.n_state),
            latex=r"\mathrm{dynamics}",
            statement=(f"x_{{k+1}} = Phi({args[0]})", rf"x_{{k+1}} = \Phi({args[1]})"),
        )
        f = casadi_formulas(phi, self.symbols)
        if f is not None:
            self.where.append(((f"Phi({args[0]}) = {f[0]}", rf"\Phi({args[1]}) = {f[1]}"), ("", "")))
        return dyn

    def path(self) -> list[Segment]:
        """The path constraints :math:`c_j(x_k, u_k, \\theta)`, one segment each."""
        hz = self.hz
        if not hz.path:
            return []
        cols = [
            as_column(pc.fn(self.xs, self.us, self.ths), f"path constraint {j}")
            for j, pc in enumerate(hz.path)
        ]
        sizes = [int(c.numel()) for c in cols]
        p0 = _starts(hz.rows["path"], hz.N, sum(sizes))
        out, off = [], 0
        for j, (c, n) in enumerate(zip(cols, sizes, strict=True)):
            f = self.formula(c, lambda a, j=j: (f"c_{j}({a[0]})", f"c_{{{j}}}({a[1]})"))
            at = tuple(slice(a + off, a + off + n) for a in p0)
            out.append(Segment("g", f"c{j}", at, latex=f"c_{{{j}}}", body=f))
            off += n
        return out

    def objective(self) -> Formula:
        r"""The objective :math:`\sum_k \ell_k + \ell_N` (the costs' formulas under ``where``)."""
        hz = self.hz
        obj_t, obj_l = [], []
        if hz.stage_cost is not None:
            l0 = as_scalar(hz.stage_cost(self.xs, self.us, self.ths, self.zs, 0), "stage_cost")
            l1 = as_scalar(hz.stage_cost(self.xs, self.us, self.ths, self.zs, 1), "stage_cost")
            f = casadi_formulas(l0, self.symbols) or (
                "stage_cost(x_k, u_k, theta, z_k, k)",
                r"\ell(x_k, u_k, \theta, z_k, k)",
            )
            varies = " (at k = 0; it changes with k)" if str(l0) != str(l1) else ""
            self.where.append(
                ((f"l_k = {f[0]}{varies}", rf"\ell_k = {f[1]}" + (r"\ (k = 0)" if varies else "")), ("", ""))
            )
            obj_t.append("sum_{k=0}^{N-1} l_k")
            obj_l.append(r"\sum_{k=0}^{N-1} \ell_k")
        if hz.terminal_cost is not None:
            nx, nth = hz.spec.n_state, hz.spec.n_design
            xN, xNn = _named_column("x_N", "x_{N}", nx)
            thN, thNn = (
                _named_column("theta_{N-1}", r"\theta_{N-1}", nth) if self.lifted else (self.ths, self.thn)
            )
            lN = as_scalar(hz.terminal_cost(xN, thN), "terminal_cost")
            f = casadi_formulas(lN, xNn + thNn) or ("terminal_cost(x_N, theta)", r"\ell_N(x_N, \theta)")
            self.where.append(((f"l_N = {f[0]}", rf"\ell_N = {f[1]}"), ("", "")))
            obj_t.append("l_N")
            obj_l.append(r"\ell_N")
        return " + ".join(obj_t) or "0", " + ".join(obj_l) or "0"

    def layout(self) -> tuple[list[Segment], list[Segment], list[Segment]]:
        """``(head, tail, copies)``: the segments of states, controls and design before the
        step variables, the design after them (one copy), and the rows equating the design
        copies (``lift_design``)."""
        hz = self.hz
        N, L, nx, nu, nth = hz.N, hz.layout, hz.spec.n_state, hz.spec.n_control, hz.spec.n_design
        head = [Segment("x", "x", _runs(L["x"], N + 1, nx))]
        if nu:
            head.append(Segment("x", "u", _runs(L["u"], N, nu)))
        if not self.lifted:
            tail = [Segment("x", "theta", _runs(L["theta"], 1, nth)[0], latex=r"\theta")] if nth else []
            return head, tail, []
        # lift_design: step k's copy theta_k, all equal
        head.append(Segment("x", "theta", _runs(L["theta_copies"], N, nth), latex=r"\theta"))
        copies = [
            Segment(
                "g", "design_copies", _runs(hz.rows["design"], N - 1, nth), latex=r"\mathrm{design\ copies}",
                statement=("theta_{k+1} = theta_k, k = 0..N-2 (one design, a copy per step)",
                           r"\theta_{k+1} = \theta_k,\ k = 0, \dots, N-2"
                           r"\quad (\text{one design, a copy per step})"),
            )
        ]  # fmt: skip
        return head, [], copies


def horizon_blocks(hz: Horizon) -> MPCCBlocks:
    r"""The printing blocks of a horizon MPCC: one step's segments for every :math:`k` (the
    module docstring)."""
    spec, N = hz.spec, hz.N
    mcp = spec.mcp
    pr = _StepPrinter(hz)
    sblocks, defs, given = declaration_parts(mcp, pr.rename, pr.per_step, index=K)
    nxs, L = hz.n_step_vars, hz.layout
    m_step, nc = int(hz.step_mpcc.g.numel()), int(hz.step_mpcc.G.numel())
    variables, cons, bounds = slack_segments(
        sblocks,
        hz.slack_map,
        x_at=_per(_starts(L["s"], N, nxs)),
        g_at=_per(_starts(hz.rows["step"], N, m_step)),
        pair_at=_per([i * nc for i in range(N)]),
        index=K,
    )
    pr.parameters()
    pr.where += defs
    dyn = pr.dynamics()
    path = pr.path()
    objective = pr.objective()
    if pr.uses_t:
        t0 = f"{hz.t0:g} + " if hz.t0 else ""
        pr.where.insert(0, ((f"t_k = {t0}{spec.h:g}*k", rf"t_k = {t0}{spec.h:g}\,k"), ("", "")))
    head, tail, copies = pr.layout()
    return MPCCBlocks(
        segments=tuple(cons + [dyn] + path + copies + head + variables + tail),
        objective=objective,
        where=tuple(pr.where),
        given=tuple(given + bounds),
        sizes=(("N", N), *sorted(mcp.dims.items())),
        source=f"horizon of MCP {mcp.name!r}: N steps of h = {spec.h:g}, each in slack form",
        steps=N,
    )
