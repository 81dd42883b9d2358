r"""Problem files for ``mcpkit solve FILE``.

Formats, chosen by content and extension:

* **LCP JSON** (``.json``): ``{"M": [[...]], "q": [...], "lb": ..., "ub": ...}`` for the box
  LCP :math:`l \le z \le u \perp Mz + q`; ``lb``/``ub`` optional (default 0 and ``inf``), scalars
  or lists, with ``"inf"``/``"-inf"`` strings or ``null`` for infinite bounds.
* **LCP NPZ** (``.npz``): arrays ``M``, ``q`` and optional ``lb``, ``ub``.
* **Sparse LCP NPZ** (``.npz``): ``M`` stored as :func:`scipy.sparse.save_npz` stores it (keys
  ``format``, ``shape``, ``data`` and ``indices``/``indptr``, ``row``/``col`` or ``offsets``:
  any format :func:`scipy.sparse.load_npz` reads), kept sparse. ``q`` (and optional ``lb``,
  ``ub``) either as arrays of the same name in that file (what :func:`save_lcp_npz` writes; the
  file stays readable by ``load_npz``) or in companion ``.npy`` files beside ``NAME.npz``:
  ``NAME.q.npy``, ``NAME.lb.npy``, ``NAME.ub.npy`` (a vector each, or a scalar bound; a value
  given in both places is an error). The index arrays are checked before SciPy sees them
  (``indptr`` from 0 to the number of entries without decreasing, indices inside the shape).
  From SciPy, two lines::

      scipy.sparse.save_npz("obstacle.npz", M)
      numpy.save("obstacle.q.npy", q)

* **Matrix Market LCP** (``.mtx``): ``NAME.mtx`` holds ``M`` (read with
  :func:`scipy.io.mmread`: ``coordinate`` files stay sparse, ``array`` files are dense), and
  ``q`` is the companion ``NAME_q.mtx`` (an ``n x 1`` or ``1 x n`` Matrix Market matrix, the
  SuiteSparse ``NAME_b.mtx`` convention), required; ``NAME_lb.mtx`` and ``NAME_ub.mtx`` likewise,
  optional (``Infinity`` entries allowed). From SciPy::

      scipy.io.mmwrite("obstacle.mtx", M)
      scipy.io.mmwrite("obstacle_q.mtx", q.reshape(-1, 1))

  :func:`save_lcp_mtx` writes all of them.
* **FCLIB** (``.hdf5``/``.h5``): a 3-D friction-contact problem, handled by
  :mod:`mcpkit.models.fclib`.
* **Nonlinear MCP** (``.json`` with ``"format": "mcpkit-mcp"``): a serialized CasADi function
  :math:`F(z, p)` with bounds, start and parameter values; see :mod:`mcpkit.formats.mcp_file`.
* **CasADi MPCC JSON** (keys ``w``, ``G_fun``, ...): loaded by
  :func:`mcpkit.mpcc.load_mpcc_json` (general pair bounds allowed); with an ``mcplib_meta`` key
  (the MCPLIB ports) read as an MCP by :func:`mcpkit.formats.mcp_file.load_any_mcp`.

Every failure to read or interpret a file raises :class:`~mcpkit.errors.ProblemFileError`
naming the file and the problem, before any solver runs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import json
import math
import os
import stat
import struct
import tempfile
import tokenize
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sps

from mcpkit.errors import MCPInputError, ProblemFileError
from mcpkit.problems.mcp import MCP


def _bound(value: Any, what: str, path: Path) -> Any:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            return float(value)  # "inf", "-inf", "1e3"
        except ValueError:
            raise ProblemFileError(f"{path}: {what} entry {value!r} is not a number") from None
    if isinstance(value, list):
        value = [
            (math.inf if what == "ub" else -math.inf) if v is None
            else v if isinstance(v, int | float) else _bound(v, what, path)
            for v in value
        ]  # fmt: skip
    return _real_array(value, what, path)


def _real_array(value: Any, key: str, path: Path) -> np.ndarray:
    """``value`` (a list from JSON, an array from NPZ) as a float array; typed errors naming ``key``.

    Complex values are refused (casting would drop the imaginary part), as are entries that are
    not numbers and integers beyond the range of a float.
    """
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError, OverflowError) as exc:  # ragged nesting, ...
        raise ProblemFileError(f"{path}: {key} must be a numeric array ({exc})") from None
    if arr.dtype.kind == "c":
        raise ProblemFileError(f"{path}: {key} holds complex numbers; an LCP needs real data")
    try:
        return arr.astype(float, copy=False)
    except OverflowError:
        raise ProblemFileError(
            f"{path}: {key} holds an integer beyond the range of a float (±1.8e308)"
        ) from None
    except (TypeError, ValueError) as exc:
        raise ProblemFileError(f"{path}: {key} must be a numeric array ({exc})") from None


#: Parsed JSON files by ``(path, mtime, size)`` while :func:`parse_once` is active, else None.
_JSON_MEMO: dict[tuple[str, int, int], dict[str, Any]] | None = None


@contextlib.contextmanager
def parse_once() -> Iterator[None]:
    """Within the block :func:`read_json` parses each (unchanged) file once.

    Detecting a file's kind and loading it read the same JSON several times (:func:`file_kind`,
    then the loader); for a large LCP file each parse costs seconds. ``mcpkit solve`` loads
    inside this block; the parsed objects are dropped when it ends.
    """
    global _JSON_MEMO
    outer = _JSON_MEMO
    _JSON_MEMO = {} if outer is None else outer
    try:
        yield
    finally:
        _JSON_MEMO = outer


def read_json(path: Path) -> dict[str, Any]:
    """Parse a JSON file into a dict, with a typed error naming the file (see :func:`parse_once`)."""
    memo, key = _JSON_MEMO, None
    if memo is not None:
        try:
            st = path.stat()
            key = (str(path.resolve()), st.st_mtime_ns, st.st_size)
        except OSError:
            key = None
        if key is not None and key in memo:
            return dict(memo[key])
    data = _parse_json(path)
    if memo is not None and key is not None:
        memo[key] = data
    return dict(data)


def _parse_json(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ProblemFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ProblemFileError(f"{path} is not a UTF-8 text (JSON) file: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProblemFileError(f"{path} is not valid JSON: {exc}") from None
    except RecursionError:
        raise ProblemFileError(
            f"{path}: JSON arrays or objects nested too deeply to read (the problem formats nest at most "
            "a few levels)"
        ) from None
    except MemoryError:
        raise ProblemFileError(f"{path}: not enough memory to parse the JSON file") from None
    except ValueError as exc:  # an integer literal longer than Python converts (sys.get_int_max_str_digits)
        raise ProblemFileError(f"{path}: {_huge_integer(text) or exc}") from None
    if not isinstance(data, dict):
        raise ProblemFileError(f"{path}: expected a JSON object at the top level")
    return data


class _HugeInt:
    """Stand-in for a JSON integer literal that no float can hold (:func:`_huge_integer`)."""

    def __init__(self, digits: int) -> None:
        self.digits = digits


def _parse_int(literal: str) -> int | _HugeInt:
    """``int(literal)``, or a :class:`_HugeInt` when the value is beyond the range of a float."""
    digits = len(literal.lstrip("-"))
    if digits < 309:
        return 0  # the value does not matter: only where the huge ones are
    if digits == 309:
        with contextlib.suppress(OverflowError):
            float(int(literal))
            return 0
    return _HugeInt(digits)


def _huge_integer(text: str) -> str:
    """Where the first integer literal beyond the range of a float is (``"M[0][1] is ..."``), or ``""``.

    Called when :func:`json.loads` refused ``text`` with a ValueError, which it raises for an
    integer literal longer than ``sys.get_int_max_str_digits()``: parses ``text`` again with a
    ``parse_int`` that marks every literal beyond the range of a float and walks the result
    without recursion. (Shorter ones parse; the readers refuse them when they convert the key to
    floats, which costs nothing on the files that have none.)
    """
    try:
        data = json.loads(text, parse_int=_parse_int)
    except (ValueError, RecursionError, MemoryError):
        return "an integer literal is too long to read"
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, _HugeInt):
            return (
                f"{where or 'the top level'} is an integer with {value.digits} digits, beyond the range of "
                "a float (±1.8e308)"
            )
        if isinstance(value, dict):
            stack.extend((f"{where}.{k}" if where else str(k), v) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", v) for i, v in reversed(list(enumerate(value))))
    return ""


def lcp_from_mapping(data: Any, path: Path) -> MCP:
    """Box LCP from a mapping with ``M``, ``q`` and optional ``lb``, ``ub``."""
    missing = [k for k in ("M", "q") if k not in data]
    if missing:
        raise ProblemFileError(f"{path}: LCP file lacks {missing} (keys present: {sorted(data)})")
    lb = _bound(data["lb"], "lb", path) if "lb" in data else 0.0
    ub = _bound(data["ub"], "ub", path) if "ub" in data else math.inf
    lb = -math.inf if lb is None else lb
    ub = math.inf if ub is None else ub
    M = data["M"]
    if sps.issparse(M):
        if M.dtype.kind not in "biuf":
            raise ProblemFileError(f"{path}: M must hold real numbers, got dtype {M.dtype}")
    else:
        M = _real_array(M, "M", path)
    q = _real_array(data["q"], "q", path)
    try:
        return MCP.lcp(M, q, lb=lb, ub=ub, name=path.stem)
    except MCPInputError as exc:
        raise ProblemFileError(f"{path}: {exc}") from None
    except (TypeError, ValueError) as exc:
        raise ProblemFileError(f"{path}: M and q must be numeric arrays ({exc})") from None


#: What reading a file in a given format can raise when the file is not in that format (a
#: corrupted NPY header fails in ``ast``/``tokenize``; an unknown ZIP method is NotImplementedError,
#: a flipped encryption flag RuntimeError; a Matrix Market integer beyond 64 bits OverflowError).
_READ_ERRORS = (
    OSError, ValueError, KeyError, IndexError, TypeError, EOFError, zipfile.BadZipFile, zlib.error,
    SyntaxError, tokenize.TokenError, NotImplementedError, RuntimeError, struct.error, MemoryError,
    OverflowError,
)  # fmt: skip

#: The optional or required vectors of an LCP file beside ``M``.
_VECTORS = ("q", "lb", "ub")


def _vector(value: Any, key: str, n: int, source: Path) -> np.ndarray:
    """``value`` as a scalar or a length-``n`` float vector (``q``: length ``n`` only), naming ``source``."""
    v = value.toarray() if sps.issparse(value) else np.asarray(value)
    if v.dtype.kind not in "biuf":
        raise ProblemFileError(f"{source}: {key} must hold real numbers, got dtype {v.dtype}")
    if v.ndim == 2 and 1 in v.shape:
        v = v.reshape(-1)
    if v.shape != (n,) and not (key != "q" and v.ndim == 0):
        want = f"{n} values" if key == "q" else f"a scalar or {n} values"
        raise ProblemFileError(f"{source}: {key} must be {want} (M is {n}x{n}), got shape {v.shape}")
    return v.astype(float)


#: Largest number of rows or columns a sparse ``M`` may declare (SciPy's 32-bit index range).
MAX_SPARSE_DIM = 2**31 - 1

#: The index arrays of each format :func:`scipy.sparse.load_npz` reads.
_SPARSE_KEYS = {
    "csr": ("indices", "indptr"),
    "csc": ("indices", "indptr"),
    "bsr": ("indices", "indptr"),
    "coo": ("row", "col"),
    "dia": ("offsets",),
}


def _npz_array(npz: Any, files: set[str], key: str, p: Path, kinds: str, ndim: int) -> np.ndarray:
    """Member ``key`` of an open NPZ archive, checked for dtype kind (``kinds``) and dimension."""
    if key not in files:
        raise ProblemFileError(f"cannot read {p} as NPZ: the sparse matrix M lacks its array {key!r}")
    arr = npz[key]
    if arr.dtype.kind == "c":
        raise ProblemFileError(f"{p}: sparse M's {key} holds complex numbers; an LCP needs real data")
    if arr.dtype.kind not in kinds:
        what = "integers" if kinds == "iu" else "real numbers"
        raise ProblemFileError(f"{p}: sparse M's {key} must hold {what}, got dtype {arr.dtype}")
    if arr.ndim != ndim:
        raise ProblemFileError(f"{p}: sparse M's {key} must have {ndim} dimension(s), got shape {arr.shape}")
    return arr


def _check_range(idx: np.ndarray, bound: int, key: str, p: Path) -> None:
    """Every entry of the index array ``idx`` in ``[0, bound)``."""
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= bound):
        bad = np.flatnonzero((idx < 0) | (idx >= bound))[:5].tolist()
        raise ProblemFileError(
            f"{p}: sparse M's {key} must lie in [0, {bound}); entries {bad} are {idx[bad].tolist()}"
        )


def _check_sparse_npz(npz: Any, files: set[str], p: Path) -> None:
    """Check the arrays of a :func:`scipy.sparse.save_npz` matrix before SciPy builds it.

    SciPy trusts the index arrays: a negative or out-of-range index, or a decreasing ``indptr``,
    makes its constructors fail at best and corrupt the heap at worst. Checked here: the format
    name, ``shape`` (two integers in ``[0, MAX_SPARSE_DIM]``), real ``data``, and the index arrays
    of the format (``indptr`` starts at 0, never decreases and ends at the number of stored
    entries; indices within the shape). Raises :class:`~mcpkit.errors.ProblemFileError`.
    """
    raw = npz["format"]
    fmt = raw.item() if raw.ndim == 0 else None
    fmt = fmt.decode("ascii", errors="replace") if isinstance(fmt, bytes) else fmt
    if fmt not in _SPARSE_KEYS:
        raise ProblemFileError(
            f"{p}: unknown sparse format {fmt!r} (scipy.sparse.save_npz writes {', '.join(_SPARSE_KEYS)})"
        )
    shape = _npz_array(npz, files, "shape", p, "iu", 1)
    if shape.size != 2 or int(shape.min()) < 0 or int(shape.max()) > MAX_SPARSE_DIM:
        raise ProblemFileError(
            f"{p}: sparse M's shape must be two sizes in [0, {MAX_SPARSE_DIM}], got {shape.tolist()[:4]}"
        )
    rows, cols = int(shape[0]), int(shape[1])
    data = _npz_array(npz, files, "data", p, "biuf", {"bsr": 3, "dia": 2}.get(fmt, 1))
    if fmt in ("csr", "csc", "bsr"):
        indices = _npz_array(npz, files, "indices", p, "iu", 1)
        indptr = _npz_array(npz, files, "indptr", p, "iu", 1)
        major, minor = (rows, cols) if fmt != "csc" else (cols, rows)
        if fmt == "bsr":
            r, c = data.shape[1:]
            if r < 1 or c < 1 or rows % r or cols % c:
                raise ProblemFileError(f"{p}: sparse M's blocks {r}x{c} do not tile its shape {rows}x{cols}")
            major, minor = rows // r, cols // c
        nnz = indices.size
        if data.shape[0] != nnz:
            raise ProblemFileError(f"{p}: sparse M has {data.shape[0]} stored values but {nnz} indices")
        if indptr.size != major + 1:
            raise ProblemFileError(f"{p}: sparse M's indptr must have {major + 1} entries, got {indptr.size}")
        if int(indptr[0]) != 0 or int(indptr[-1]) != nnz or (np.diff(indptr) < 0).any():
            raise ProblemFileError(
                f"{p}: sparse M's indptr must start at 0, never decrease and end at {nnz} (the number of "
                f"stored entries); it is {indptr.tolist()[:8]}{' ...' if indptr.size > 8 else ''}"
            )
        _check_range(indices, minor, "indices", p)
    elif fmt == "coo":
        if "coords" in files:
            coords = _npz_array(npz, files, "coords", p, "iu", 2)
            if coords.shape[0] != 2:
                raise ProblemFileError(f"{p}: sparse M's coords must have 2 rows, got shape {coords.shape}")
            row, col = coords[0], coords[1]
        else:
            row = _npz_array(npz, files, "row", p, "iu", 1)
            col = _npz_array(npz, files, "col", p, "iu", 1)
        if not row.size == col.size == data.size:
            raise ProblemFileError(
                f"{p}: sparse M needs as many row and column indices as values, got {row.size}, {col.size} "
                f"and {data.size}"
            )
        _check_range(row, rows, "row", p)
        _check_range(col, cols, "col", p)
    else:  # dia
        offsets = _npz_array(npz, files, "offsets", p, "iu", 1)
        if data.shape[0] != offsets.size:
            raise ProblemFileError(
                f"{p}: sparse M has {offsets.size} diagonal offsets but {data.shape[0]} rows of data"
            )


def _read_npz(p: Path) -> dict[str, Any]:
    """The LCP arrays of an NPZ file: the dense layout (key ``M``) or a sparse ``M`` with its vectors."""
    try:
        with np.load(p, allow_pickle=False) as npz:
            if not hasattr(npz, "files"):
                raise ProblemFileError(f"{p}: a single .npy array, not an NPZ archive")
            files = set(npz.files)
            if "M" in files:
                return {k: npz[k] for k in files}
            if not {"format", "shape", "data"} <= files:
                raise ProblemFileError(
                    f"{p}: NPZ file holds neither the dense LCP arrays (M, q) nor a sparse matrix written by "
                    f"scipy.sparse.save_npz (format, shape, data, ...); keys present: {sorted(files)[:12]}"
                )
            _check_sparse_npz(npz, files, p)
            data: dict[str, Any] = {k: npz[k] for k in _VECTORS if k in files}
        data["M"] = sps.load_npz(p)
    except ProblemFileError:
        raise
    except _READ_ERRORS as exc:
        raise ProblemFileError(f"cannot read {p} as NPZ: {exc}") from None
    n = data["M"].shape[0]
    for key in _VECTORS:
        side = p.with_name(f"{p.stem}.{key}.npy")
        if side.is_file():
            if key in data:
                raise ProblemFileError(f"{p}: {key} is given twice, in the file and in {side.name}")
            try:
                value = np.load(side, allow_pickle=False)
            except _READ_ERRORS as exc:
                raise ProblemFileError(f"cannot read {side} as NPY: {exc}") from None
            if not isinstance(value, np.ndarray):
                raise ProblemFileError(f"{side}: expected one array written by numpy.save")
            data[key] = _vector(value, key, n, side)
        elif key in data:
            data[key] = _vector(data[key], key, n, p)
    if "q" not in data:
        raise ProblemFileError(
            f"{p}: sparse LCP NPZ without q: store it in the file (save_lcp_npz) or beside it as "
            f"{p.stem}.q.npy (numpy.save)"
        )
    return data


def _read_mtx(p: Path, key: str) -> Any:
    """One Matrix Market file (:func:`scipy.io.mmread`): a sparse COO matrix or a dense array."""
    import scipy.io

    try:
        value = scipy.io.mmread(p)
    except _READ_ERRORS as exc:
        raise ProblemFileError(f"cannot read {p} as Matrix Market ({key}): {exc}") from None
    if np.iscomplexobj(value):
        raise ProblemFileError(f"{p}: {key} must be real, the file holds complex numbers")
    return value


def _read_mtx_lcp(p: Path) -> dict[str, Any]:
    """``M`` from ``NAME.mtx``, ``q`` from ``NAME_q.mtx``, optional ``NAME_lb.mtx``, ``NAME_ub.mtx``."""
    M = _read_mtx(p, "M")
    shape = M.shape
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ProblemFileError(f"{p}: M must be a square matrix, got shape {shape}")
    data: dict[str, Any] = {"M": M}
    for key in _VECTORS:
        side = p.with_name(f"{p.stem}_{key}.mtx")
        if side.is_file():
            data[key] = _vector(_read_mtx(side, key), key, shape[0], side)
        elif key == "q":
            raise ProblemFileError(
                f"{p}: a Matrix Market LCP needs q beside it in {side.name} "
                f"(scipy.io.mmwrite({side.name!r}, q.reshape(-1, 1)))"
            )
    return data


@dataclasses.dataclass(frozen=True)
class FileKind:
    """One kind of problem file: the family of problem it states and what it is."""

    name: str
    """The kind, as :func:`file_kind` returns it."""
    family: str
    """The problem it states, which decides how it is loaded, solved and its solution written:
    ``"mcp"``, ``"mpcc"`` or ``"fclib"``."""
    what: str
    """One line for messages and documentation."""


#: The one table of problem-file kinds (:func:`file_kind` detects them; :func:`file_family` reads
#: their family; the MCP kinds load through :func:`mcpkit.formats.mcp_file.load_any_mcp`, an MPCC
#: through :func:`mcpkit.formats.mpcc_json.load_mpcc_json`, an FCLIB file through
#: :func:`mcpkit.models.fclib.load_fclib`; :mod:`mcpkit.sweep.solve_file` dispatches on the family).
FILE_KINDS: dict[str, FileKind] = {
    k.name: k
    for k in (
        FileKind("lcp-json", "mcp", "an LCP as JSON (keys M, q)"),
        FileKind("lcp-npz", "mcp", "an LCP as NPZ (M dense or sparse, q)"),
        FileKind("lcp-mtx", "mcp", "an LCP as Matrix Market (NAME.mtx, NAME_q.mtx)"),
        FileKind("mcp-json", "mcp", "a nonlinear MCP (format mcpkit-mcp)"),
        FileKind("mcp-mpcc-json", "mcp", "an MCPLIB port in CasADi MPCC JSON (key mcplib_meta)"),
        FileKind("mpcc-json", "mpcc", "a CasADi MPCC JSON file (keys w, G_fun, H_fun)"),
        FileKind("fclib", "fclib", "an FCLIB local friction-contact problem (HDF5)"),
    )
}


def file_family(kind: str) -> str:
    """The problem family of a file kind (:data:`FILE_KINDS`): ``"mcp"``, ``"mpcc"`` or ``"fclib"``."""
    return FILE_KINDS[kind].family


#: Suffixes of FCLIB files (HDF5), the one kind known by its suffix alone.
FCLIB_SUFFIXES = (".hdf5", ".h5")


def guess_family(path: str | Path) -> str:
    """The problem family from the suffix alone, without reading the file (``.json`` files may be
    MCPs or MPCCs: ``"mcp"``); :func:`file_family` of :func:`file_kind` is the answer."""
    return "fclib" if Path(path).suffix.lower() in FCLIB_SUFFIXES else "mcp"


def file_kind(path: str | Path) -> str:
    """The kind of a problem file (raises :class:`~mcpkit.errors.ProblemFileError` for others).

    ``"lcp-json"``, ``"lcp-npz"``, ``"lcp-mtx"`` (LCPs), ``"mcp-json"`` (the nonlinear-MCP format
    of :mod:`mcpkit.formats.mcp_file`), ``"mcp-mpcc-json"`` (a CasADi MPCC JSON port of an MCPLIB model,
    recognised by its ``mcplib_meta`` key, read as an MCP), ``"mpcc-json"`` or ``"fclib"``.
    """
    p = Path(path)
    if not p.exists():
        raise ProblemFileError(f"no such file: {p}")
    if not p.is_file():
        raise ProblemFileError(f"not a file: {p}")
    suffix = p.suffix.lower()
    if suffix in FCLIB_SUFFIXES:
        return "fclib"
    if suffix == ".npz":
        return "lcp-npz"
    if suffix == ".mtx":
        return "lcp-mtx"
    if suffix == ".json":
        data = read_json(p)
        if "M" in data and "q" in data:
            return "lcp-json"
        if "format" in data or "F" in data:  # mcpkit.formats.mcp_file checks the format and version
            return "mcp-json"
        if "w" in data and ("G_fun" in data or "H_fun" in data):
            return "mcp-mpcc-json" if "mcplib_meta" in data else "mpcc-json"
        raise ProblemFileError(
            f"{p}: JSON file is neither an LCP (keys M, q), an mcpkit-mcp file (keys format, F, ...) "
            f"nor a CasADi MPCC (keys w, G_fun, H_fun); "
            f"keys present: {sorted(data)[:12]}"
        )
    raise ProblemFileError(
        f"{p}: unknown problem file type {suffix!r} (expected .json, .npz, .mtx, .hdf5 or .h5)"
    )


def load_lcp(path: str | Path, kind: str) -> MCP:
    """The LCP of a file of kind ``"lcp-json"``, ``"lcp-npz"`` or ``"lcp-mtx"`` (:func:`file_kind`)."""
    p = Path(path)
    readers = {"lcp-json": read_json, "lcp-npz": _read_npz, "lcp-mtx": _read_mtx_lcp}
    if kind not in readers:
        raise ProblemFileError(f"{p}: {kind} files are not LCPs")
    return lcp_from_mapping(readers[kind](p), p)


def load_mcp(path: str | Path) -> MCP:
    """Load an MCP file as an :class:`~mcpkit.MCP`: an LCP (JSON, NPZ with a dense or sparse ``M``,
    Matrix Market), an ``mcpkit-mcp`` nonlinear MCP or an MCPLIB port: a file of family ``"mcp"``
    (:data:`FILE_KINDS`), through :func:`mcpkit.formats.mcp_file.load_any_mcp`."""
    p = Path(path)
    kind = file_kind(p)
    if file_family(kind) != "mcp":
        raise ProblemFileError(
            f"{p}: {kind} files are not MCPs; use `mcpkit solve`, which dispatches on the type"
        )
    if kind.startswith("lcp-"):
        return load_lcp(p, kind)
    from mcpkit.formats.mcp_file import load_any_mcp

    return load_any_mcp(p)[0]


def save_lcp_json(path: str | Path, M: Any, q: Any, lb: Any = 0.0, ub: Any = math.inf) -> Path:
    """Write a box LCP in the LCP JSON format (infinite bounds as ``"inf"`` strings)."""

    def enc(v: Any) -> Any:
        arr = np.asarray(v, dtype=float)
        if arr.ndim == 0:
            return str(float(arr)) if np.isinf(arr) else float(arr)
        return [str(float(x)) if np.isinf(x) else float(x) for x in arr.reshape(-1)]

    p = Path(path)
    p.write_text(
        json.dumps({"M": np.asarray(M, dtype=float).tolist(), "q": enc(q), "lb": enc(lb), "ub": enc(ub)})
    )
    return p


def save_lcp_npz(path: str | Path, M: Any, q: Any, lb: Any = 0.0, ub: Any = math.inf) -> Path:
    r"""Write the box LCP :math:`l \le z \le u \perp Mz + q` as one NPZ file; returns its path.

    A ``scipy.sparse`` ``M`` is written in CSR exactly as :func:`scipy.sparse.save_npz` writes it
    (so ``scipy.sparse.load_npz(path)`` reads ``M`` back), with ``q``, ``lb``, ``ub`` as extra
    arrays in the same file (the sparse LCP NPZ of the module docstring); a dense ``M`` is written
    in the dense layout (arrays ``M``, ``q``, ``lb``, ``ub``). The file is compressed.
    """
    p = Path(path)
    arrays: dict[str, np.ndarray] = {
        "q": np.asarray(q, dtype=float).reshape(-1),
        "lb": np.asarray(lb, dtype=float),
        "ub": np.asarray(ub, dtype=float),
    }
    if sps.issparse(M):
        C = sps.csr_array(M, dtype=float)
        C.sum_duplicates()
        arrays.update(
            format=np.array(b"csr"),
            shape=np.asarray(C.shape),
            data=C.data,
            indices=C.indices,
            indptr=C.indptr,
            _is_array=np.array(True),
        )
    else:
        arrays["M"] = np.asarray(M, dtype=float)
    with p.open("wb") as fh:
        np.savez_compressed(fh, **arrays)
    return p


def save_lcp_mtx(path: str | Path, M: Any, q: Any, lb: Any = 0.0, ub: Any = math.inf) -> Path:
    r"""Write the box LCP as Matrix Market files: ``NAME.mtx`` (``M``) and ``NAME_{q,lb,ub}.mtx``.

    ``path`` must end in ``.mtx``. A sparse ``M`` is written in ``coordinate`` format (its stored
    entries), a dense one in ``array`` format; the vectors as ``n x 1`` arrays (bounds broadcast
    to :math:`n` values, ``Infinity`` for infinite ones). Returns the path of ``NAME.mtx``.
    """
    import scipy.io

    p = Path(path)
    if p.suffix.lower() != ".mtx":
        raise MCPInputError(f"save_lcp_mtx: the path must end in .mtx, got {p.name!r}")
    n = M.shape[0] if sps.issparse(M) else np.asarray(M).shape[0]
    scipy.io.mmwrite(p, sps.coo_array(M) if sps.issparse(M) else np.asarray(M, dtype=float))
    for key, value in (("q", q), ("lb", lb), ("ub", ub)):
        vec = np.broadcast_to(np.asarray(value, dtype=float).reshape(-1), (n,)).reshape(-1, 1)
        scipy.io.mmwrite(p.with_name(f"{p.stem}_{key}.mtx"), np.ascontiguousarray(vec))
    return p


def output_dir(out_dir: str | Path) -> Path:
    """``out_dir`` as a created folder (for demos and figures); a typed error if it is not a path."""
    try:
        d = Path(out_dir)
    except TypeError:
        raise MCPInputError(f"out_dir must be a path, got {out_dir!r}") from None
    d.mkdir(parents=True, exist_ok=True)
    return d


# ------------------------------------------------------------------------------ solutions
#: Suffixes ``mcpkit solve --out`` writes: JSON and NPZ for every problem kind, HDF5 for FCLIB.
SOLUTION_SUFFIXES: dict[str, tuple[str, ...]] = {
    "mcp": (".json", ".npz"),
    "mpcc": (".json", ".npz"),
    "fclib": (".json", ".npz", ".h5", ".hdf5"),
}

_KIND_NAMES = {"mcp": "an MCP", "mpcc": "an MPCC", "fclib": "an FCLIB"}

#: Version of the solution files :func:`write_solution` writes (key ``version``).
SOLUTION_VERSION = 1


def json_ready(obj: Any) -> Any:
    """``obj`` as strict JSON values: arrays as lists, enums by value, ``±inf`` as the strings
    ``"inf"``/``"-inf"`` (as in the LCP JSON format) and NaN as ``null``."""
    if isinstance(obj, dict):
        return {str(k): json_ready(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [json_ready(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return json_ready(obj.tolist())
    if isinstance(obj, enum.Enum):
        return json_ready(obj.value)
    if isinstance(obj, bool | np.bool_):
        return bool(obj)
    if isinstance(obj, int | np.integer):
        return int(obj)
    if isinstance(obj, float | np.floating):
        v = float(obj)
        return None if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else v
    if obj is None or isinstance(obj, str):
        return obj
    return str(obj)


def solution_kind(result: Any) -> str:
    """``"mcp"``, ``"mpcc"`` or ``"fclib"``: the kind of a solve result, for its solution file."""
    kind = str(getattr(result, "kind", ""))
    if kind not in SOLUTION_SUFFIXES:
        raise MCPInputError(f"no solution layout for a result of kind {kind!r}")
    return kind


def check_solution_path(path: str | Path, kind: str, source: str | Path | None = None) -> Path:
    """``path`` as a solution file for a ``kind`` problem, checked before anything is solved.

    Raises :class:`~mcpkit.errors.MCPInputError` for a suffix the kind has no layout for
    (:data:`SOLUTION_SUFFIXES`), a file name longer than the file system allows
    (``PC_NAME_MAX``), a missing parent folder, a folder at ``path``, a folder in which no file
    can be created (no permission, a read-only or virtual file system such as ``/proc``: a
    probe file is created and removed), ``path`` being the problem file ``source`` itself, an
    empty name, or a target that exists but is not a regular file (a FIFO, a device, a socket:
    the file is written whole beside it and renamed over it, which would replace the special
    file, so it is refused). A symbolic link is checked (and later written) through: its target
    counts.
    """
    if str(path) == "":
        raise MCPInputError("--out is empty; give a file name")
    p = Path(path)
    allowed = SOLUTION_SUFFIXES[kind]
    if p.suffix.lower() not in allowed:
        raise MCPInputError(
            f"--out {p}: {_KIND_NAMES[kind]} solution is written as {', '.join(allowed)} (by the suffix), "
            f"not {p.suffix or 'a name without suffix'!r}"
        )
    target = Path(os.path.realpath(p))
    folder = target.parent
    name_max = 255
    with contextlib.suppress(OSError, ValueError):
        name_max = os.pathconf(folder if folder.is_dir() else "/", "PC_NAME_MAX")
    for name in {p.name, target.name}:
        if len(os.fsencode(name)) > name_max:
            raise MCPInputError(
                f"--out {p}: the file name is {len(os.fsencode(name))} bytes long; "
                f"the file system allows at most {name_max}"
            )
    if target.is_dir():
        raise MCPInputError(f"--out {p} is a folder; give a file name")
    special = _special_file(target)
    if special:
        raise MCPInputError(f"--out {p} is {special}, not a regular file; give the name of a regular file")
    if not folder.is_dir():
        raise MCPInputError(f"--out {p}: the folder {folder} does not exist")
    if source is not None and p.exists() and target == Path(source).resolve():
        raise MCPInputError(f"--out {p} is the problem file itself; choose another name")
    try:  # the only sure test that a file can be created there
        fd, probe = tempfile.mkstemp(prefix=".mcpkit-probe-", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise MCPInputError(
            f"--out {p}: cannot create a file in the folder {folder} ({exc.strerror or exc})"
        ) from None
    return p


def solution_arrays(result: Any, delassus: tuple[Any, Any] | None = None) -> dict[str, Any]:
    r"""The solution of a result by name, as the solution files store it.

    * MCP (:class:`~mcpkit.solving.result.MCPResult`): ``{"z": {block: z_B}, "F": {block: F_B}}``, the
      point and :math:`F(z)` of every variable block in declaration order;
    * MPCC (:class:`~mcpkit.solving.result.MPCCResult`): ``x``, the pair functions ``G``, ``H`` and the
      constraints ``g`` at ``x``, and the objective ``f``;
    * FCLIB (``FCLIBResult`` of ``mcpkit.models.fclib``): the reactions ``r`` (its
      ``reactions``) and velocities :math:`u = Wr + q` in FCLIB's layout, :math:`(r_n, r_t,
      r_o)_i` contact after contact; ``delassus`` is the problem's ``(W, q)`` (core does not
      read contact models, so the caller passes them).

    A result without a point holds NaN.
    """
    kind = solution_kind(result)
    if kind == "mcp":
        blocks = result.blocks or {"z": slice(0, result.z.size)}
        return {
            "z": {name: np.asarray(result.z[sl], dtype=float) for name, sl in blocks.items()},
            "F": {name: np.asarray(result.F[sl], dtype=float) for name, sl in blocks.items()},
        }
    if kind == "mpcc":
        return {
            "x": np.asarray(result.x, dtype=float),
            "G": np.asarray(result.G, dtype=float),
            "H": np.asarray(result.H, dtype=float),
            "g": np.asarray(result.g, dtype=float),
            "f": float(result.f),
        }
    if delassus is None:
        raise MCPInputError("solution_arrays: an FCLIB result needs delassus=(W, q) for u = W r + q")
    W, q = delassus
    q = np.asarray(q, dtype=float).reshape(-1)
    r = result.reactions
    if r is None:
        return {"r": np.full(q.size, np.nan), "u": np.full(q.size, np.nan)}
    r = np.asarray(r, dtype=float).reshape(-1)
    return {"r": r, "u": np.asarray(W @ r, dtype=float).reshape(-1) + q}


def solution_size(arrays: dict[str, Any]) -> int:
    """Number of unknowns in :func:`solution_arrays` (``z``, ``x`` or ``r``)."""
    for key in ("z", "x", "r"):
        if key in arrays:
            value = arrays[key]
            return sum(v.size for v in value.values()) if isinstance(value, dict) else int(np.size(value))
    return 0


def _umask() -> int:
    """The process's file-creation mask (read from ``/proc`` where possible, else set and reset)."""
    with contextlib.suppress(OSError, ValueError, StopIteration):
        status = Path("/proc/self/status").read_text().splitlines()
        return int(next(line for line in status if line.startswith("Umask:")).split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _special_file(target: Path) -> str:
    """What ``target`` is when it exists but is not a regular file (``"a FIFO"``, ...), else ``""``."""
    try:
        mode = os.stat(target).st_mode
    except OSError:
        return ""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return ""
    for test, what in (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return what
    return "a special file"


def _atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    """``write`` to a temporary file beside ``path``, then rename it over ``path``.

    A symbolic link at ``path`` is written through (its target is replaced, the link stays a
    link); the file gets the mode a new file gets under the user's umask (``0o666 & ~umask``),
    not :func:`tempfile.mkstemp`'s ``0o600``. The temporary name is short (a long ``path`` name
    that the file system accepts must not fail for its temporary sibling).
    """
    target = Path(os.path.realpath(path))
    special = _special_file(target)  # made since the check: still never renamed over
    if special:
        raise MCPInputError(f"--out {path} is {special}, not a regular file; nothing was written")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.stem[:32]}.", suffix=target.suffix, dir=target.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_solution(
    path: str | Path,
    result: Any,
    source: str | Path | None = None,
    summary: dict[str, Any] | None = None,
    arrays: dict[str, Any] | None = None,
) -> Path:
    """Write a result's solution and verdict to ``path`` (``.json``, ``.npz``; FCLIB also ``.h5``).

    Layouts (``version`` :data:`SOLUTION_VERSION`):

    * ``.json``: one object ``{"format": "mcpkit-solution", "version", "source", "kind",
      "solved", "summary", ...}`` plus the arrays of :func:`solution_arrays` (MCP blocks as
      objects by name), numbers as in :func:`json_ready`;
    * ``.npz``: one array per vector, ``z.<block>`` and ``F.<block>`` for an MCP, ``x``, ``G``,
      ``H``, ``g``, ``f`` for an MPCC, ``r`` and ``u`` for FCLIB; ``solved`` (bool) and ``summary``
      (the JSON text of the summary); readable with ``numpy.load`` without pickle;
    * ``.h5``/``.hdf5`` (FCLIB): the problem's ``fclib_local`` group copied from the source
      file and the ``solution`` group with datasets ``r`` and ``u`` (FCLIB's layout, as a
      reference solution is stored), plus an ``mcpkit`` group with attributes ``solved`` and
      ``summary``; the file is again an FCLIB problem whose reference solution is this one.

    ``summary`` defaults to ``result.summary()``, ``arrays`` to :func:`solution_arrays` of the
    result (FCLIB results need them given). ``arrays={}`` writes the verdict alone (a result
    without a point, such as a time limit that ran out before the solver started: an older
    file at ``path`` must not be left looking current). The file is written whole or not at
    all; a symbolic link is written through, and the file's mode follows the umask.
    """
    kind = solution_kind(result)
    p = check_solution_path(path, kind, source)
    arrays = solution_arrays(result) if arrays is None else arrays
    summ = json_ready(result.summary() if summary is None else summary)
    head = {
        "format": "mcpkit-solution",
        "version": SOLUTION_VERSION,
        "source": None if source is None else str(source),
        "kind": kind,
        "solved": bool(result.solved),
        "summary": summ,
    }
    suffix = p.suffix.lower()
    if suffix == ".json":
        text = json.dumps(json_ready(head | arrays), allow_nan=False)
        _atomic_write(p, lambda t: t.write_text(text + "\n", encoding="utf-8"))
    elif suffix == ".npz":
        flat: dict[str, np.ndarray] = {}
        for key, value in arrays.items():
            if isinstance(value, dict):
                flat.update({f"{key}.{name}": np.asarray(v) for name, v in value.items()})
            else:
                flat[key] = np.asarray(value)
        flat.update(solved=np.array(bool(result.solved)), summary=np.array(json.dumps(head)))

        def save(t: Path) -> None:
            with t.open("wb") as fh:
                np.savez_compressed(fh, **flat)

        _atomic_write(p, save)
    else:
        _atomic_write(p, lambda t: _write_fclib_hdf5(t, result, arrays, head))
    return p


def _write_fclib_hdf5(path: Path, result: Any, arrays: dict[str, Any], head: dict[str, Any]) -> None:
    import h5py

    with h5py.File(path, "w") as out:
        source = head["source"] or getattr(result, "path", None)
        if source is not None:
            try:
                with h5py.File(source, "r") as src:
                    if "fclib_local" in src:
                        src.copy(src["fclib_local"], out, "fclib_local")
            except OSError as exc:
                raise ProblemFileError(f"cannot copy the problem from {source}: {exc}") from None
        if "r" in arrays:  # a verdict without a point has no solution group
            sol = out.create_group("solution")
            sol.create_dataset("r", data=np.asarray(arrays["r"], dtype=float))
            sol.create_dataset("u", data=np.asarray(arrays["u"], dtype=float))
        meta = out.create_group("mcpkit")
        meta.attrs["solved"] = bool(head["solved"])
        meta.attrs["summary"] = json.dumps(head)
