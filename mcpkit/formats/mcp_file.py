r"""Nonlinear-MCP files: the ``mcpkit-mcp`` JSON format, and MCP-shaped MPCC JSON (the MCPLIB ports).

The ``mcpkit-mcp`` format
-------------------------
One JSON object stating :math:`l \le z \le u \perp F(z; p)`::

    {"format": "mcpkit-mcp", "version": 1,
     "F": "<casadi.Function.serialize() of (z, p) -> F>",
     "lb": [...], "ub": [...], "z0": [...], "p0": [...],
     "name": "josephy_s1", "meta": {...}}

* ``F``: a serialized ``casadi.Function`` with inputs ``(z, p)`` (``p`` may have 0 entries)
  and one output of the length of ``z`` (SX or MX);
* ``lb``, ``ub``: lists of :math:`n` numbers, or one number for all; infinite bounds as the
  strings ``"inf"``/``"-inf"`` (as in the LCP JSON of :mod:`mcpkit.formats.io`);
* ``z0``: :math:`n` finite numbers (the start); ``p0``: :math:`m` finite numbers (required when
  ``F``'s ``p`` has entries);
* ``name`` (optional, default the file's stem) and ``meta`` (optional object: where the problem
  comes from, ``known_solutions`` as a list of points, anything else).

:func:`save_mcp_file` writes it, :func:`read_mcp_file` reads it into an :class:`MCPFile`, and
:func:`load_mcp_file` into an :class:`~mcpkit.MCP` (through
:func:`~mcpkit.lowering.from_casadi.mcp_from_casadi`). Every malformed file (not JSON, missing
keys, another format or version, ``F`` that does not deserialize or has the wrong shapes, NaN,
:math:`l > u`, non-finite ``z0``/``p0``, ``meta.known_solutions`` that are not points of
:math:`n` numbers) raises :class:`~mcpkit.errors.ProblemFileError` naming the file, before any
solver runs; so does an ``F`` the declaration cannot hold (:func:`check_declarable`: a call of
another CasADi function such as a rootfinder, or operations nested deeper than
:data:`MAX_DECLARATION_DEPTH`).

MCP-shaped MPCC JSON (the MCPLIB ports)
---------------------------------------
:func:`mcp_file_from_mpcc_json` reads a CasADi MPCC JSON file (:func:`~mcpkit.mpcc.load_mpcc_json`)
that states an MCP and returns the same :class:`MCPFile`. The file is **MCP-shaped** when

1. the objective does not depend on the variables (the MCPLIB ports have :math:`f = 0`);
2. every pair's :math:`H_j = s_j x_{i(j)} + c_j` is affine in one variable (:math:`s_j \ne 0`,
   constant, no parameters) and no variable is in two pairs. The pair then is the box-MCP pair
   of :math:`x_{i(j)}` with bounds from :math:`[H_{l,j}, H_{u,j}]` and
   :math:`F_{i(j)} = \operatorname{sign}(s_j)\, G_j` (a negative :math:`s_j` swaps the bounds and
   the sign, e.g. ``munson1b``'s :math:`z \le 0`);
3. the plain bounds :math:`G_{l,j} \le G_j \le G_{u,j}` say nothing the pair does not already say
   (e.g. :math:`0 \le G_j` for a pair with only :math:`H_{l,j}` finite), and the variable bounds
   ``lbw``/``ubw`` of a paired variable are not tighter than the pair's;
4. every other variable is free (paired, in order, with the equations :math:`g_k = g_{l,k}` of
   rows with :math:`g_{l,k} = g_{u,k}`, which must be all the rows) or fixed (:math:`F_i = 0`).

Anything else raises :class:`~mcpkit.errors.ProblemFileError` saying which condition fails.
``mcpkit solve`` reads MPCC JSON as an MCP when it carries the ``mcplib_meta`` key (the MCPLIB
ports); other MPCC JSON stays an MPCC there (a zero-objective MPCC may be meant as one), while
:func:`load_any_mcp` reads any MCP-shaped MPCC JSON as an MCP. ``mcplib_meta`` becomes the
:class:`MCPFile`'s ``meta`` (``known_solutions``, start point, source).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import casadi as ca
import numpy as np
import scipy.sparse as sps

from mcpkit.errors import MCPInputError, ProblemFileError
from mcpkit.formats.io import file_kind, load_lcp, read_json
from mcpkit.lowering.casadi_sympy import SOLVE_IT_DIRECTLY
from mcpkit.lowering.from_casadi import casadi_signature, mcp_from_casadi
from mcpkit.lowering.sx_replay import AFFINE, CONSTANT, is_affine_in
from mcpkit.problems.arrays import ArrayLike, as_float_vector
from mcpkit.problems.bounds import bound_kinds
from mcpkit.problems.mcp import MCP
from mcpkit.problems.names import casadi_name

FORMAT = "mcpkit-mcp"
VERSION = 1
#: Keys every ``mcpkit-mcp`` file must have (``p0`` too when ``F`` takes parameters).
REQUIRED = ("format", "version", "F", "lb", "ub", "z0")


@dataclass(frozen=True)
class MCPFile:
    r"""The contents of an MCP file: :math:`l \le z \le u \perp F(z; p)` with start and metadata."""

    F: ca.Function
    """``(z, p) -> F``."""
    lb: np.ndarray
    ub: np.ndarray
    z0: np.ndarray
    p0: np.ndarray
    name: str
    meta: dict[str, Any] = field(default_factory=dict)

    def to_mcp(self) -> MCP:
        """The declaration (:func:`~mcpkit.lowering.from_casadi.mcp_from_casadi`)."""
        return mcp_from_casadi(
            self.F, self.lb, self.ub, self.z0, self.p0 if self.p0.size else None, self.name
        )

    def known_solutions(self) -> list[np.ndarray]:
        """``meta["known_solutions"]`` as arrays (empty when there are none)."""
        return [np.asarray(s, dtype=float).reshape(-1) for s in self.meta.get("known_solutions", [])]


def known_solution_distance(meta: dict[str, Any], z: np.ndarray) -> float | None:
    r""":math:`\min_k \|z - z^*_k\|_\infty` over ``meta["known_solutions"]`` (``None`` if there are none)."""
    sols = meta.get("known_solutions") or []
    dists = [float(np.abs(np.asarray(z, dtype=float) - np.asarray(s, dtype=float)).max()) for s in sols]
    return min(dists) if dists else None


def with_parameter_input(F: ca.Function) -> ca.Function:
    """``F`` as a function of ``(z, p)``: unchanged if it has two inputs, else with an empty ``p``."""
    if F.n_in() == 2:
        return F
    sx = F.is_a("SXFunction")
    z = F.sx_in(0) if sx else F.mx_in(0)
    p = ca.SX.sym("p", 0) if sx else ca.MX.sym("p", 0)
    return ca.Function(F.name(), [z, p], [F(z)], ["z", "p"], ["F"])


def _encode(v: np.ndarray) -> list[float | str]:
    return [x if math.isfinite(x) else ("inf" if x > 0 else "-inf") for x in v.tolist()]


def save_mcp_file(
    path: str | Path,
    F: ca.Function,
    lb: ArrayLike,
    ub: ArrayLike,
    z0: ArrayLike | None = None,
    p0: ArrayLike | None = None,
    meta: dict[str, Any] | None = None,
    name: str | None = None,
) -> Path:
    r"""Write :math:`l \le z \le u \perp F(z; p)` as an ``mcpkit-mcp`` file (module docstring).

    Parameters
    ----------
    path
        The file to write.
    F
        ``casadi.Function`` ``(z) -> F`` or ``(z, p) -> F``; stored as ``(z, p) -> F``.
    lb, ub, z0, p0
        Bounds, start (default: the projection of 0 onto the box) and parameter values
        (required when ``F`` takes parameters).
    meta
        JSON-serialisable metadata (e.g. ``{"known_solutions": [[...]]}``).
    name
        Problem name (default: ``F.name()``).

    Raises
    ------
    MCPInputError
        The same checks as :func:`~mcpkit.lowering.from_casadi.mcp_from_casadi` (shapes, NaN,
        :math:`l > u`), metadata that is not JSON-serialisable, or an ``F`` CasADi cannot
        serialize.
    """
    n, m = casadi_signature(F)
    lo = as_float_vector(lb, n, "lb", allow_inf=True)
    hi = as_float_vector(ub, n, "ub", allow_inf=True)
    bound_kinds(lo, hi)
    start = np.clip(0.0, lo, hi) if z0 is None else as_float_vector(z0, n, "z0", allow_inf=False)
    if m and p0 is None:
        raise MCPInputError(f"F = {F.name()!r} takes parameters p ({m} values): pass p0")
    pv = as_float_vector(np.zeros(0) if p0 is None else p0, m, "p0", allow_inf=False)
    try:
        blob = with_parameter_input(F).serialize()
    except RuntimeError as exc:
        raise MCPInputError(
            f"CasADi cannot serialize F = {F.name()!r}: {str(exc).splitlines()[-1]}"
        ) from None
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "name": name or F.name(),
        "lb": _encode(lo),
        "ub": _encode(hi),
        "z0": start.tolist(),
        "p0": pv.tolist(),
        "meta": meta or {},
        "F": blob,
    }
    try:
        text = json.dumps(doc, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise MCPInputError(f"meta is not JSON-serialisable without NaN: {exc}") from None
    p = Path(path)
    p.write_text(text)
    return p


def _vector(data: dict[str, Any], key: str, n: int, path: Path, *, allow_inf: bool) -> np.ndarray:
    raw = data[key]
    items = raw if isinstance(raw, list) else [raw]
    if any(isinstance(v, bool) or not isinstance(v, int | float | str) for v in items):
        raise ProblemFileError(f"{path}: {key} must be a number or a list of numbers")
    try:
        arr = np.array([float(v) for v in items], dtype=float)
    except ValueError:
        raise ProblemFileError(f"{path}: {key} holds a string that is not a number ('inf', '-inf')") from None
    except OverflowError:
        raise ProblemFileError(f"{path}: {key} holds an integer beyond the range of a float") from None
    if not isinstance(raw, list) and n != 1:
        arr = np.full(n, arr[0])
    if arr.shape != (n,):
        raise ProblemFileError(f"{path}: {key} has {arr.size} entries, expected {n} (the length of z)")
    if np.isnan(arr).any():
        raise ProblemFileError(f"{path}: {key} contains NaN at {np.flatnonzero(np.isnan(arr))[:10].tolist()}")
    if not allow_inf and np.isinf(arr).any():
        raise ProblemFileError(
            f"{path}: {key} must be finite (inf at {np.flatnonzero(np.isinf(arr))[:10].tolist()})"
        )
    return arr


def read_mcp_file(path: str | Path) -> MCPFile:
    """Read and check an ``mcpkit-mcp`` file (module docstring); nothing is solved or replayed."""
    p = Path(path)
    data = read_json(p)
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise ProblemFileError(f"{p}: not an {FORMAT} file, missing keys {missing} (present: {sorted(data)})")
    if data["format"] != FORMAT:
        raise ProblemFileError(f"{p}: format is {data['format']!r}, expected {FORMAT!r}")
    if data["version"] != VERSION or isinstance(data["version"], bool):
        raise ProblemFileError(
            f"{p}: {FORMAT} version {data['version']!r} is not supported (this reads {VERSION})"
        )
    if not isinstance(data["F"], str):
        raise ProblemFileError(f"{p}: F must be the string of casadi.Function.serialize()")
    F = deserialize_function(data["F"], "F", p)
    try:
        n, m = casadi_signature(F)
    except MCPInputError as exc:
        raise ProblemFileError(f"{p}: {exc}") from None
    if F.n_in() != 2:
        raise ProblemFileError(f"{p}: F must take (z, p) (p may be empty); it takes {F.n_in()} input")
    lb = _vector(data, "lb", n, p, allow_inf=True)
    ub = _vector(data, "ub", n, p, allow_inf=True)
    try:
        bound_kinds(lb, ub)
    except MCPInputError as exc:
        raise ProblemFileError(f"{p}: {exc}") from None
    z0 = _vector(data, "z0", n, p, allow_inf=False)
    if m and "p0" not in data:
        raise ProblemFileError(f"{p}: F takes {m} parameters but the file has no p0")
    p0 = _vector(data, "p0", m, p, allow_inf=False) if "p0" in data else np.zeros(0)
    name, meta = data.get("name", p.stem), data.get("meta", {})
    if not isinstance(name, str) or not isinstance(meta, dict):
        raise ProblemFileError(f"{p}: name must be a string and meta an object")
    check_known_solutions(meta, n, p, "meta")
    return MCPFile(F=F, lb=lb, ub=ub, z0=z0, p0=p0, name=name, meta=meta)


def deserialize_function(blob: str, key: str, path: Path) -> ca.Function:
    """``casadi.Function.deserialize(blob)`` with a typed error naming ``path`` and ``key``.

    A corrupted serialization fails in CasADi (RuntimeError), in decoding its embedded strings
    (UnicodeDecodeError) or yields a null function (an empty string), which CasADi would only
    refuse later with an internal assertion.
    """
    try:
        F = ca.Function.deserialize(blob)
    except (RuntimeError, UnicodeDecodeError, ValueError, TypeError, OverflowError, MemoryError) as exc:
        last = (str(exc).strip().splitlines() or [type(exc).__name__])[-1]
        raise ProblemFileError(f"{path}: cannot deserialize {key}: {last}") from None
    if F.is_null():
        raise ProblemFileError(f"{path}: cannot deserialize {key}: the serialization is empty")
    return F


def check_known_solutions(meta: dict[str, Any], n: int, path: Path, where: str) -> None:
    """Check ``meta["known_solutions"]``: a list of points of ``n`` finite numbers each (or absent).

    The points are compared with the solver's answer only after the solve; a malformed entry must
    be refused before, not lose the result. ``where`` names the metadata key in messages.
    """
    sols = meta.get("known_solutions")
    if sols is None:
        return
    key = f"{where}.known_solutions"
    if not isinstance(sols, list):
        raise ProblemFileError(
            f"{path}: {key} must be a list of points (lists of {n} numbers), got {type(sols).__name__}"
        )
    for k, point in enumerate(sols):
        numbers = isinstance(point, list) and all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in point
        )
        if not numbers:
            raise ProblemFileError(f"{path}: {key}[{k}] must be a list of {n} numbers, got {point!r:.60}")
        if len(point) != n:
            raise ProblemFileError(
                f"{path}: {key}[{k}] has {len(point)} values, expected {n} (the length of z)"
            )
        try:
            finite = all(math.isfinite(v) for v in point)
        except OverflowError:  # an integer beyond the range of a float
            finite = False
        if not finite:
            raise ProblemFileError(f"{path}: {key}[{k}] must hold finite numbers")


#: Deepest nesting of operations in ``F`` that the declaration takes (:func:`check_declarable`).
#: SymPy, which holds the declaration, recurses once or more per level of an expression in
#: building, printing and lowering it; at Python's default recursion limit a chain of about 300
#: nested operations already fails, so deeper graphs are refused up front (measured: 240 levels
#: load and solve, 300 fail). Sums and products do not count as levels (SymPy flattens them).
MAX_DECLARATION_DEPTH = 200

#: Operations SymPy flattens into one node with their operands of the same kind.
_FLATTENED = {ca.OP_ADD: "+", ca.OP_SUB: "+", ca.OP_NEG: "+", ca.OP_MUL: "*", ca.OP_DIV: "*"}


def check_declarable(F: ca.Function, path: Path) -> None:
    """Refuse an ``F`` whose expression graph the declaration (SymPy) cannot hold, before building it.

    Two cases, found in one pass over the SX algorithm (MX functions are expanded): a call of
    another CasADi function that stays a call in SX (``OP_CALL``: a rootfinder, an integrator,
    an external function), which has no symbolic counterpart, and operations nested deeper than
    :data:`MAX_DECLARATION_DEPTH`, on which SymPy runs out of recursion only after minutes.
    Either raises :class:`~mcpkit.errors.ProblemFileError` naming ``path``.
    """
    try:
        fun = F if F.is_a("SXFunction") else F.expand()
    except RuntimeError as exc:
        last = (str(exc).strip().splitlines() or ["RuntimeError"])[-1]
        raise ProblemFileError(
            f"{path}: F cannot be expanded into scalar (SX) operations: {last}; the declaration cannot "
            f"state it ({SOLVE_IT_DIRECTLY})"
        ) from None
    depth: dict[int, int] = {}
    kind: dict[int, str] = {}
    for k in range(fun.n_instructions()):
        op, out = fun.instruction_id(k), fun.instruction_output(k)
        if op == ca.OP_CALL:
            raise ProblemFileError(
                f"{path}: F calls another CasADi function (operation OP_CALL: a rootfinder, integrator or "
                f"external function); the declaration cannot state it ({SOLVE_IT_DIRECTLY})"
            )
        if op == ca.OP_OUTPUT:
            continue
        tag = _FLATTENED.get(op, str(op))
        level = 0
        for j in fun.instruction_input(k) if op not in (ca.OP_CONST, ca.OP_INPUT) else ():
            if j in depth:
                flat = tag in ("+", "*") and kind[j] == tag  # SymPy merges a + (b + c) into one sum
                level = max(level, depth[j] + (0 if flat else 1))
        if level > MAX_DECLARATION_DEPTH:
            raise ProblemFileError(
                f"{path}: F nests more than {MAX_DECLARATION_DEPTH} operations deep ({fun.n_instructions()} "
                f"operations in all); the declaration cannot hold it ({SOLVE_IT_DIRECTLY})"
            )
        depth[out[0]], kind[out[0]] = level, tag


def check_start(f: MCPFile, path: Path) -> None:
    r""":math:`F(\Pi_{[l,u]}(z_0); p_0)` has no NaN, or refuse the file before any solver runs.

    A NaN there stops every engine at its first evaluation (CasADi and IPOPT then print a warning
    per attempt); one evaluation here says so in one line, as MPCC JSON does for ``G``. An
    infinite entry is left to the solvers (a barrier may start there).
    """
    z0 = np.clip(f.z0, f.lb, f.ub)
    try:
        value = np.asarray(ca.DM(f.F(z0, f.p0)), dtype=float).reshape(-1)
    except (RuntimeError, NotImplementedError) as exc:
        raise ProblemFileError(f"{path}: cannot evaluate F at z0: {str(exc).splitlines()[-1]}") from None
    nan = np.flatnonzero(np.isnan(value))
    if nan.size:
        raise ProblemFileError(
            f"{path}: F is NaN at the start point z0 (entries {nan[:10].tolist()}); no solver can start "
            "there: give a z0 where F is defined"
        )


def _declaration(f: MCPFile, path: Path) -> MCP:
    check_declarable(f.F, path)
    check_start(f, path)
    try:
        return f.to_mcp()
    except MCPInputError as exc:
        raise ProblemFileError(f"{path}: {exc}") from None
    except RecursionError:
        raise ProblemFileError(
            f"{path}: F is nested too deeply for the declaration ({SOLVE_IT_DIRECTLY})"
        ) from None


def load_mcp_file(path: str | Path) -> MCP:
    """An ``mcpkit-mcp`` file as an :class:`~mcpkit.MCP` (typed errors naming the file)."""
    return _declaration(read_mcp_file(path), Path(path))


# ------------------------------------------------------------------ MPCC JSON as an MCP
def _refuse(path: Path, why: str) -> ProblemFileError:
    return ProblemFileError(f"{path}: not an MCP-shaped MPCC ({why}); solve it as an MPCC instead")


def mcp_file_from_mpcc_json(path: str | Path) -> MCPFile:
    """An MCP-shaped CasADi MPCC JSON file (module docstring, conditions 1-4) as an :class:`MCPFile`."""
    from mcpkit.formats.mpcc_json import load_mpcc_json

    p = Path(path)
    mpcc = load_mpcc_json(p)
    x, par = mpcc.x, mpcc.p
    nx, nc = int(x.numel()), int(mpcc.G.numel())
    if ca.depends_on(mpcc.f, x):
        raise _refuse(p, "the objective depends on the variables")
    JH = ca.jacobian(mpcc.H, x)
    structural = is_affine_in(ca.Function("H", [x, par], [mpcc.H]), [AFFINE, CONSTANT])
    if (
        not structural
        or (JH.nnz() and ca.depends_on(JH, ca.vertcat(x, par)))
        or (par.numel() and ca.depends_on(mpcc.H, par))
    ):
        raise _refuse(p, "some H_j is not affine in x with constant coefficients")
    S = sps.csr_matrix(ca.DM(ca.evalf(JH)).sparse()) if JH.nnz() else sps.csr_matrix((nc, nx))
    S.eliminate_zeros()
    c = np.array(ca.evalf(ca.substitute(mpcc.H, x, ca.SX.zeros(nx)))).reshape(-1) if nc else np.zeros(0)
    per_row = np.diff(S.indptr)
    if (per_row != 1).any():
        rows = np.flatnonzero(per_row != 1)[:10].tolist()
        raise _refuse(p, f"H_j must involve exactly one variable; rows {rows} do not")
    col, s = S.indices.astype(np.int64), np.asarray(S.data, dtype=float)  # one entry per row
    if np.unique(col).size != col.size:
        raise _refuse(p, "a variable appears in two pairs")
    lo_pair = np.where(s > 0, (mpcc.lbH - c) / s, (mpcc.ubH - c) / s)  # s < 0 swaps the bounds
    hi_pair = np.where(s > 0, (mpcc.ubH - c) / s, (mpcc.lbH - c) / s)
    lo_fin, hi_fin = np.isfinite(mpcc.lbH), np.isfinite(mpcc.ubH)
    g_lo = np.where((lo_fin & ~hi_fin) | (~lo_fin & ~hi_fin), 0.0, -np.inf)  # what the pair implies on G
    g_hi = np.where((hi_fin & ~lo_fin) | (~lo_fin & ~hi_fin), 0.0, np.inf)
    extra = np.flatnonzero((mpcc.lbG > g_lo) | (mpcc.ubG < g_hi))
    if extra.size:
        raise _refuse(p, f"pairs {extra[:10].tolist()} bound G beyond what complementarity implies")
    lb, ub = np.array(mpcc.lbx, dtype=float), np.array(mpcc.ubx, dtype=float)
    slack = 1e-12 * (1.0 + np.abs(np.where(np.isfinite(lo_pair), lo_pair, 0.0)))
    tight = (lb[col] > lo_pair + slack) | (ub[col] < hi_pair - slack)
    if tight.any():
        raise _refuse(p, f"variables {col[tight][:10].tolist()} have bounds tighter than their pairs")
    lb[col], ub[col] = lo_pair + 0.0, hi_pair + 0.0  # + 0.0: no -0.0 bounds
    F: list[Any] = [ca.SX(0.0)] * nx
    for j in range(nc):
        F[col[j]] = np.sign(s[j]) * mpcc.G[j]
    rest = np.setdiff1d(np.arange(nx), col)
    free = rest[np.isinf(lb[rest]) & np.isinf(ub[rest])]
    odd = rest[~(np.isinf(lb[rest]) & np.isinf(ub[rest])) & (lb[rest] != ub[rest])]
    if odd.size:
        raise _refuse(p, f"variables {odd[:10].tolist()} have bounds but no complementarity pair")
    eq = np.isfinite(mpcc.lbg) & (mpcc.lbg == mpcc.ubg)
    if not eq.all() or eq.size != free.size:
        raise _refuse(
            p,
            f"{int((~eq).sum())} constraint rows are not equations and {eq.size} equations meet "
            f"{free.size} free variables (they must be all the rows and as many)",
        )
    for k, i in enumerate(free):
        F[i] = mpcc.g[k] - mpcc.lbg[k]
    fun = ca.Function(casadi_name(mpcc.name), [x, par], [ca.vertcat(*F)], ["z", "p"], ["F"])
    meta = read_json(p).get("mcplib_meta") or {}
    if not isinstance(meta, dict):
        raise ProblemFileError(f"{p}: mcplib_meta must be an object, got {type(meta).__name__}")
    meta = dict(meta)
    check_known_solutions(meta, nx, p, "mcplib_meta")
    return MCPFile(fun, lb, ub, np.clip(mpcc.x0, lb, ub), np.asarray(mpcc.p0, dtype=float), mpcc.name, meta)


def load_any_mcp(path: str | Path) -> tuple[MCP, dict[str, Any]]:
    """Any file stating an MCP, with its metadata: ``mcpkit-mcp``, MCP-shaped MPCC JSON, LCP JSON or NPZ."""
    p = Path(path)
    kind = file_kind(p)
    if kind.startswith("lcp-"):
        return load_lcp(p, kind), {}
    if kind == "mcp-json":
        f = read_mcp_file(p)
    elif kind in ("mpcc-json", "mcp-mpcc-json"):
        f = mcp_file_from_mpcc_json(p)
    else:
        raise ProblemFileError(f"{p}: {kind} files do not state an MCP")
    return _declaration(f, p), f.meta
