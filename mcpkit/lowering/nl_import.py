r"""Pyomo models -> CasADi through Pyomo's NL writer, and an in-process IPOPT for Pyomo.

:func:`import_pyomo_nl` writes a Pyomo model to an NL file (no symbolic labels, no presolve, no
scaling, so every Pyomo variable and constraint keeps its own column and row), reads it with
``casadi.NlpBuilder.import_nl`` and returns the NLP as CasADi SX expressions over one vector
ordered like the NL writer's variable list.


The Pyomo solver ``SolverFactory("mcpkit_ipopt")`` that solves a Pyomo NLP through this import is
:class:`mcpkit.homotopy.ipopt_plugin.CasadiIpopt`; :func:`ampl_multipliers` and
:func:`casadi_multipliers` give the sign conventions of IPOPT's suffixes.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from typing import Any

import casadi as ca
import numpy as np

from mcpkit.errors import MCPInputError

#: IPOPT's AMPL suffixes: bound multipliers in (warm start) and out, and the row multipliers.
ZL_IN, ZU_IN, ZL_OUT, ZU_OUT, DUAL = "ipopt_zL_in", "ipopt_zU_in", "ipopt_zL_out", "ipopt_zU_out", "dual"


@dataclass
class NLImport:
    """An NLP read back from Pyomo's NL file: ``min f(x)`` s.t. ``lbg <= g(x) <= ubg``, bounds on x."""

    x: ca.SX
    f: ca.SX
    g: ca.SX
    lbx: np.ndarray
    ubx: np.ndarray
    lbg: np.ndarray
    ubg: np.ndarray
    x0: np.ndarray
    variables: list[Any]
    """Pyomo variable data objects, in the order of ``x``."""
    constraints: list[Any]
    """Pyomo constraint data objects, in the order of ``g``."""
    objective_sense: int
    """+1 for a minimised Pyomo objective; -1 for a maximised one (``f`` is then its negation)."""

    row_of: dict[int, int] = field(init=False, repr=False)
    """``id(constraint) -> row of g``."""

    def __post_init__(self) -> None:
        self.row_of = {id(c): r for r, c in enumerate(self.constraints)}

    def over(self, *groups: list[Any]) -> tuple[list[ca.SX], ca.SX, ca.SX]:
        """``(symbols, f, g)`` with the columns renamed: one new SX vector per group of Pyomo variables.

        Every column of the import must belong to a group; a group's variables that the NL writer
        left out (they appear in no row) are symbols that ``f`` and ``g`` do not depend on.
        """
        syms = [ca.SX.sym(f"c{k}", len(grp)) for k, grp in enumerate(groups)]
        where = {id(v): syms[k][i] for k, grp in enumerate(groups) for i, v in enumerate(grp)}
        missing = [v.name for v in self.variables if id(v) not in where]
        if missing:
            raise MCPInputError(f"NL import: columns outside the given groups: {missing[:5]}")
        args = [where[id(v)] for v in self.variables]
        fun = ca.Function("nl_over", [self.x], [self.f, self.g])
        f, g = fun(ca.vertcat(*args) if args else ca.SX(0, 1))
        return syms, f, g

    def body(self, g: ca.SX, constraint: Any) -> ca.SX:
        """The Pyomo body of an equality row ``body == c``: ``g[r] - lbg[r]`` (the NL writer moves
        the body's constant into the bounds); for a row it did not write, the body's constant value."""
        r = self.row_of.get(id(constraint))
        if r is None:
            from pyomo.environ import value

            return ca.SX(float(value(constraint.body)))
        return g[r] - self.lbg[r]


#: NL operator codes by arity (Gay, "Writing .nl files"): the rest of ``oN`` are binary.
_UNARY_OPS = frozenset({13, 14, 15, 16, 34, *range(37, 48), *range(49, 54)})
_NARY_OPS = frozenset({11, 12, 54, 59, 60, 61, 70, 71, 74})
_IF_OPS = frozenset({35, 65, 72})


def _nl_expression(lines: list[str], i: int) -> tuple[list[str], int]:
    """The NL expression starting at line ``i`` (prefix notation, one token a line), with every
    ``if C then A else B`` (``o35``) rewritten as ``C*A + (not C)*B``; returns ``(lines, next i)``."""
    tok = lines[i].split("#", 1)[0].strip()
    if tok[0] != "o":  # a number (n, s, l), a variable (v) or a string (h)
        return [lines[i]], i + 1
    code = int(tok[1:])
    if code in _NARY_OPS:
        count = int(lines[i + 1].split("#", 1)[0])
        out, j = lines[i : i + 2], i + 2
        for _ in range(count):
            sub, j = _nl_expression(lines, j)
            out += sub
        return out, j
    arity = 1 if code in _UNARY_OPS else 3 if code in _IF_OPS else 2
    args, j = [], i + 1
    for _ in range(arity):
        sub, j = _nl_expression(lines, j)
        args.append(sub)
    if code == 35:
        cond, then, other = args
        return ["o0", "o2", *cond, *then, "o2", "o34", *cond, *other], j
    if code in _IF_OPS:
        raise MCPInputError(f"NL import: operator o{code} (an if-then-else on strings) is not supported")
    return [lines[i]] + [t for a in args for t in a], j


def without_if_then_else(text: str) -> str:
    r"""NL text with ``if C then A else B`` written as :math:`C A + (\lnot C) B`.

    CasADi's NL reader has comparisons and logical operators but no if-then-else, which Pyomo's
    ``Expr_if`` (and so the replay of ``if_else``, ``fmin``, ``fmax``, ``sign``) writes. Both
    branches are then evaluated (a NaN or infinity in the branch not taken propagates, where
    ``Expr_if`` would ignore it); value and derivatives agree elsewhere.
    """
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        if lines[i].split("#", 1)[0].strip() == "o35":  # op lines occur only inside expressions
            sub, i = _nl_expression(lines, i)
            out += sub
        else:
            out.append(lines[i])
            i += 1
    return "\n".join(out)


def import_pyomo_nl(model: Any, export_nonlinear_variables: list[Any] | None = None) -> NLImport:
    """Write ``model`` with Pyomo's NL writer and import it into CasADi (see the module docstring).

    ``export_nonlinear_variables`` (an NL writer option) lists variables to write as columns
    even when they appear in no active row or objective (the writer drops those otherwise).
    """
    from pyomo.core.base.suffix import Suffix
    from pyomo.repn.plugins.nl_writer import NLWriter

    # CasADi's reader takes no suffix sections: export suffixes (warm starts) are read from the
    # model itself by CasadiIpopt, so they stay out of the file
    exported = [
        s for s in model.component_data_objects(Suffix, active=True, descend_into=True) if s.export_enabled()
    ]
    for suffix in exported:
        suffix.deactivate()
    try:
        with tempfile.TemporaryDirectory(prefix="mcpkit_nl_") as tmp:
            path = os.path.join(tmp, "model.nl")
            with open(path, "w") as fh:
                info = NLWriter().write(
                    model,
                    fh,
                    symbolic_solver_labels=False,
                    linear_presolve=False,
                    scale_model=False,
                    export_nonlinear_variables=export_nonlinear_variables,
                )
            with open(path) as fh:
                text = fh.read()
            if "\no35\n" in text:
                with open(path, "w") as fh:
                    fh.write(without_if_then_else(text))
            builder = ca.NlpBuilder()
            builder.import_nl(path, {"verbose": False})
    finally:
        for suffix in exported:
            suffix.activate()
    variables = list(info.variables)
    constraints = list(info.constraints)
    nx = len(variables)
    if len(builder.x) != nx or len(builder.g) != len(constraints):
        raise RuntimeError(  # pragma: no cover - would be a Pyomo/CasADi format change
            f"NL import mismatch: Pyomo wrote {nx} variables and {len(constraints)} rows, "
            f"CasADi read {len(builder.x)} and {len(builder.g)}"
        )
    x = ca.SX.sym("x", nx)
    outs = [ca.MX(builder.f), ca.vertcat(*builder.g) if builder.g else ca.MX(0, 1)]
    fun = ca.Function("nl", list(builder.x), outs).expand()
    f, g = fun.call([x[k] for k in range(nx)])  # a list even with no columns (fun() gives a dict)
    objs = info.objectives
    sense = -1 if objs and not objs[0].is_minimizing() else 1  # CasADi's import minimises -f then
    return NLImport(
        x=x,
        f=ca.SX(f),
        g=ca.SX(g),
        lbx=np.asarray(builder.x_lb, dtype=float),
        ubx=np.asarray(builder.x_ub, dtype=float),
        lbg=np.asarray(builder.g_lb, dtype=float),
        ubg=np.asarray(builder.g_ub, dtype=float),
        x0=np.asarray([v.value if v.value is not None else 0.0 for v in variables], dtype=float),
        variables=variables,
        constraints=constraints,
        objective_sense=sense,
    )


def ampl_multipliers(
    lam_x: np.ndarray, lam_g: np.ndarray, sense: int = 1
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""CasADi's multipliers -> the values of IPOPT's AMPL suffixes ``(zL, zU, dual)``.

    CasADi reports :math:`\lambda_x = z_U - z_L` and IPOPT's own :math:`\lambda_g`; IPOPT's AMPL
    interface writes (and reads back, for a warm start) :math:`\mathrm{zL} = s z_L`,
    :math:`\mathrm{zU} = -s z_U` and :math:`\mathrm{dual} = -s \lambda_g` with the objective
    sense :math:`s` (+1 minimise), so :math:`z_L = \max(0, -\lambda_x)`,
    :math:`z_U = \max(0, \lambda_x)` as CasADi splits them for its own warm start.
    """
    lx = np.asarray(lam_x, dtype=float)
    return sense * np.maximum(-lx, 0.0), -sense * np.maximum(lx, 0.0), -sense * np.asarray(lam_g, dtype=float)


def casadi_multipliers(
    zL: np.ndarray, zU: np.ndarray, dual: np.ndarray, sense: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """The inverse of :func:`ampl_multipliers`: ``(lam_x, lam_g)`` from the suffix values."""
    z_L = sense * np.asarray(zL, dtype=float)
    z_U = -sense * np.asarray(zU, dtype=float)
    return z_U - z_L, -sense * np.asarray(dual, dtype=float)
