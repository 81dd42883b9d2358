r"""Reader for the CasADi MPCC JSON format used by nosnoc, MPECLib conversions and NOSBENCH.

Keys: ``w`` (serialized SX of the variables), ``w0``, ``lbw``, ``ubw``, ``p`` and ``p0`` (optional
parameters), the objective ``f_fun`` or ``objective_fun``, optional ``g_fun`` with ``lbg``,
``ubg``, the pairs ``G_fun`` and ``H_fun``, and optional ``lbG``, ``ubG``, ``lbH``, ``ubH``
(default :math:`0 \le G \perp H \ge 0`). Functions are CasADi serializations taking ``(w)`` or
``(w, p)``. Values beyond :math:`\pm 10^{19}` are AMPL's infinity and become ``±inf``.

**Names.** Blocks are attached only from what a file states. NOSBENCH files (nosnoc) serialize
``w`` and ``p`` as vectors of named scalars (``X_0_0_1_0, X_0_0_1_1, X_0_0_1_2, h_0_0, ...``):
each maximal run ``stem_0, stem_1, …`` of consecutive entries is a vector symbol of nosnoc and
becomes a named :class:`~mcpkit.problems.segments.Segment` (:func:`name_segments`), so the printer
shows ``X_0_0_1 ∈ R^3`` with its bounds and writes entries as ``X_0_0_1[2]`` in every row.
MacMPEC and MPECLib files name their variables ``w_0 … w_{n-1}`` (one generic run): nothing is
learnt and nothing is attached. The rows ``g``, ``G``, ``H`` are one CasADi function each, with
unnamed outputs; which rows came from one vectorised expression cannot be told from the
serialized graph reliably, so rows and pairs print entry by entry with summaries.

Every problem with the file raises :class:`~mcpkit.errors.ProblemFileError` naming the file and
the key, before any solver runs: among them corrupted serializations, numbers beyond the range of
a float, a lower bound of ``+inf`` or an upper bound of ``-inf``, and ``f``, ``g``, ``G`` or ``H``
evaluating to NaN at the start point (which would stop every solver at its first step).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import casadi as ca
import numpy as np

from mcpkit.errors import ProblemFileError
from mcpkit.formats.io import read_json
from mcpkit.problems.mpcc import MPCC
from mcpkit.problems.segments import MPCCBlocks, Segment

BIG = 1e19


def _vec(data: dict[str, Any], key: str, n: int, default: float, path: Path) -> np.ndarray:
    raw = data.get(key)
    if raw is None or (isinstance(raw, list) and len(raw) == 0 and n > 0):
        return np.full(n, default)
    try:
        arr = np.atleast_1d(np.asarray(raw, dtype=float)).reshape(-1)
    except (TypeError, ValueError):
        raise ProblemFileError(f"{path}: {key} must be a list of numbers") from None
    except OverflowError:
        raise ProblemFileError(f"{path}: {key} holds an integer beyond the range of a float") from None
    if arr.size == 1 and n != 1:
        arr = np.full(n, float(arr[0]))
    if arr.shape != (n,):
        raise ProblemFileError(f"{path}: {key} has {arr.size} entries, expected {n}")
    if np.isnan(arr).any():
        raise ProblemFileError(f"{path}: {key} contains NaN")
    arr = np.where(arr <= -BIG, -np.inf, arr)
    return np.where(arr >= BIG, np.inf, arr)


def _function(data: dict[str, Any], key: str, path: Path) -> ca.Function | None:
    raw = data.get(key)
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise ProblemFileError(f"{path}: {key} must be a CasADi-serialized function string")
    try:
        fun = ca.Function.deserialize(raw)
    except _DESERIALIZE_ERRORS as exc:
        raise ProblemFileError(f"{path}: cannot deserialize {key}: {_last_line(exc)}") from None
    if fun.is_null():
        raise ProblemFileError(f"{path}: cannot deserialize {key}: the serialization is empty")
    return fun


#: What deserializing a corrupted CasADi string raises (its embedded names fail to decode as
#: UTF-8 when a byte is flipped).
_DESERIALIZE_ERRORS = (
    RuntimeError, UnicodeDecodeError, ValueError, TypeError, NotImplementedError, OverflowError, MemoryError,
)  # fmt: skip


def _last_line(exc: BaseException) -> str:
    """The last line of an exception's message (CasADi's carry the C++ trace before it)."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[-1]


def _sx(data: dict[str, Any], key: str, path: Path) -> ca.SX:
    """``casadi.SX.deserialize(data[key])`` with a typed error naming ``key``."""
    try:
        return ca.SX.deserialize(data[key])
    except _DESERIALIZE_ERRORS:
        raise ProblemFileError(
            f"{path}: cannot deserialize {key} (expected a serialized casadi.SX)"
        ) from None


def _check_bounds(bounds: dict[str, np.ndarray], path: Path) -> None:
    """No lower bound of ``+inf`` and no upper bound of ``-inf``: such a row has no feasible value."""
    for key, value in bounds.items():
        bad = np.flatnonzero(value == (np.inf if key.startswith("lb") else -np.inf))
        if bad.size:
            sign = "+inf" if key.startswith("lb") else "-inf"
            raise ProblemFileError(
                f"{path}: {key} is {sign} at {bad[:10].tolist()}: a {'lower' if sign == '+inf' else 'upper'} "
                f"bound of {sign} leaves no feasible value"
            )


def _check_start(mpcc: MPCC, path: Path) -> None:
    """``f``, ``g``, ``G`` and ``H`` are not NaN at the start point ``(w0, p0)``, or refuse the file.

    A NaN there stops every solver at its first evaluation (IPOPT and CasADi then print a
    warning per attempt); one evaluation of the functions here says so before any solver runs.
    """
    parts = (("f (the objective)", mpcc.f), ("g", mpcc.g), ("G", mpcc.G), ("H", mpcc.H))
    try:
        fun = ca.Function("start", [mpcc.x, mpcc.p], [ca.vec(e) for _, e in parts])
        values = fun(mpcc.x0, mpcc.p0)
    except (RuntimeError, NotImplementedError) as exc:
        raise ProblemFileError(f"{path}: cannot evaluate the functions at w0: {_last_line(exc)}") from None
    for (what, _), value in zip(parts, values, strict=True):
        nan = np.flatnonzero(np.isnan(np.asarray(ca.DM(value)).reshape(-1)))
        if nan.size:
            at = "" if what.startswith("f ") else f" (entries {nan[:10].tolist()})"
            raise ProblemFileError(
                f"{path}: {what} is NaN at the start point w0{at}; no solver can start there"
            )


def _call(fun: ca.Function, x: ca.SX, p: ca.SX, key: str, path: Path) -> ca.SX:
    if fun.n_in() == 1:
        args = [x]
    elif fun.n_in() == 2:
        args = [x, p]
    else:
        raise ProblemFileError(f"{path}: {key} takes {fun.n_in()} inputs; expected (w) or (w, p)")
    for k, a in enumerate(args):
        if fun.size_in(k) != a.shape and fun.numel_in(k) != a.numel():
            raise ProblemFileError(f"{path}: {key} input {k} has shape {fun.size_in(k)}, expected {a.shape}")
    try:
        return ca.vec(fun(*args))
    except (RuntimeError, NotImplementedError) as exc:  # e.g. an MX function that cannot take SX
        raise ProblemFileError(f"{path}: cannot evaluate {key}: {str(exc).splitlines()[-1]}") from None


_INDEXED = re.compile(r"^(.+)_(\d+)$")


def name_segments(sym: Any, kind: str) -> list[Segment] | None:
    """Named segments of a serialized vector of scalar symbols (``kind`` ``"x"`` or ``"p"``).

    A maximal run ``stem_0, stem_1, …, stem_{m-1}`` of consecutive entries is one segment
    ``stem`` of size ``m``; any other entry is a segment of size 1 under its own name. ``None``
    when the names say nothing: not all entries are named symbols, names repeat, or the whole
    vector is one run (``w_0 … w_{n-1}``).
    """
    n = int(sym.numel())
    if n == 0 or not all(sym[i].is_symbolic() for i in range(n)):
        return None
    names = [sym[i].name() for i in range(n)]
    if len(set(names)) != n:
        return None
    segs: list[Segment] = []
    i = 0
    while i < n:
        m = _INDEXED.match(names[i])
        if m is None or m.group(2) != "0":
            segs.append(Segment(kind, names[i], slice(i, i + 1)))  # type: ignore[arg-type]
            i += 1
            continue
        stem, j = m.group(1), i + 1
        while j < n and names[j] == f"{stem}_{j - i}":
            j += 1
        segs.append(Segment(kind, stem, slice(i, j)))  # type: ignore[arg-type]
        i = j
    if len(segs) == 1 or len({s.name for s in segs}) != len(segs):
        return None
    return segs


def _file_blocks(w: Any, par: Any, path: Path) -> MPCCBlocks | None:
    """The blocks the file's names give (:func:`name_segments`), ``None`` when they give none."""
    xs = name_segments(w, "x")
    ps = name_segments(par, "p") if par is not None else None
    if xs is None and ps is None:
        return None
    return MPCCBlocks(segments=tuple((ps or []) + (xs or [])), source=f"variable names in {path.name}")


def load_mpcc_json(path: str | Path) -> MPCC:
    """Load a CasADi MPCC JSON file as a :class:`~mcpkit.mpcc.MPCC` (general pair bounds)."""
    p = Path(path)
    data = read_json(p)
    missing = [k for k in ("w", "G_fun", "H_fun") if k not in data]
    if missing:
        raise ProblemFileError(f"{p}: not a CasADi MPCC file, missing keys {missing}")
    w = _sx(data, "w", p)
    nx = int(w.numel())
    x = ca.SX.sym("w", nx)
    par = data.get("p")
    pars = _sx(data, "p", p) if isinstance(par, str) else None
    npar = 0 if pars is None else int(pars.numel())
    psym = ca.SX.sym("p", npar)
    f_fun = _function(data, "f_fun", p) or _function(data, "objective_fun", p)
    f = _call(f_fun, x, psym, "f_fun", p) if f_fun is not None else ca.SX(0.0)
    G_fun, H_fun = _function(data, "G_fun", p), _function(data, "H_fun", p)
    if G_fun is None or H_fun is None:
        null = [k for k, fun in (("G_fun", G_fun), ("H_fun", H_fun)) if fun is None]
        raise ProblemFileError(
            f"{p}: {' and '.join(null)} must be a CasADi-serialized function string, got null"
        )
    G = _call(G_fun, x, psym, "G_fun", p)
    H = _call(H_fun, x, psym, "H_fun", p)
    if G.numel() != H.numel():
        raise ProblemFileError(f"{p}: G_fun has {G.numel()} outputs but H_fun has {H.numel()}")
    g_fun = _function(data, "g_fun", p)
    g = _call(g_fun, x, psym, "g_fun", p) if g_fun is not None else ca.SX(0, 1)
    ng, nc = int(g.numel()), int(G.numel())
    lbw = _vec(data, "lbw", nx, -np.inf, p)
    ubw = _vec(data, "ubw", nx, np.inf, p)
    x0 = _vec(data, "w0", nx, 0.0, p)
    if not np.isfinite(x0).all():
        raise ProblemFileError(f"{p}: w0 must be finite")
    p0 = _vec(data, "p0", npar, 0.0, p)
    # CasADi's nlpsol defaults for g, the standard pairs 0 <= G, H for the pair bounds; read
    # before the container so their errors (which name the file already) are not wrapped twice
    bounds = {
        key: _vec(data, key, size, default, p)
        for key, size, default in (
            ("lbg", ng, -np.inf), ("ubg", ng, np.inf),
            ("lbG", nc, 0.0), ("ubG", nc, np.inf), ("lbH", nc, 0.0), ("ubH", nc, np.inf),
        )
    }  # fmt: skip
    _check_bounds({"lbw": lbw, "ubw": ubw} | bounds, p)
    try:
        mpcc = MPCC(
            x=x,
            p=psym,
            f=f,
            g=g,
            lbx=lbw,
            ubx=ubw,
            x0=np.clip(x0, lbw, ubw),
            p0=p0,
            G=G,
            H=H,
            name=p.name.removesuffix(".json").removesuffix(".nl"),
            **bounds,
        )
    except ValueError as exc:  # shape and bound errors from the containers
        raise ProblemFileError(f"{p}: {exc}") from None
    _check_start(mpcc, p)
    blocks = _file_blocks(w, pars, p)
    return mpcc if blocks is None else mpcc.with_blocks(blocks)
