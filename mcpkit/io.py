r"""Problem files for ``mcpkit solve FILE``.

Formats, chosen by content and extension:

* **LCP JSON** (``.json``): ``{"M": [[...]], "q": [...], "lb": ..., "ub": ...}`` for the box
  LCP :math:`l \le z \le u \perp Mz + q`; ``lb``/``ub`` optional (default 0 and ``inf``), scalars
  or lists, with ``"inf"``/``"-inf"`` strings or ``null`` for infinite bounds.
* **LCP NPZ** (``.npz``): arrays ``M``, ``q`` and optional ``lb``, ``ub``.
* **FCLIB** (``.hdf5``/``.h5``): a 3-D friction-contact problem, handled by
  :mod:`mcpkit.models.fclib`.
* **CasADi MPCC JSON** (keys ``w``, ``G_fun``, ...): loaded by
  :func:`mcpkit.mpcc.load_mpcc_json` (general pair bounds allowed).

Every failure to read or interpret a file raises :class:`~mcpkit.errors.ProblemFileError`
naming the file and the problem, before any solver runs.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from mcpkit.errors import MCPInputError, ProblemFileError
from mcpkit.problem import MCP


def _bound(value: Any, what: str, path: Path) -> Any:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            return float(value)  # "inf", "-inf", "1e3"
        except ValueError:
            raise ProblemFileError(f"{path}: {what} entry {value!r} is not a number") from None
    if isinstance(value, list):
        return [
            math.inf if v is None and what == "ub" else -math.inf if v is None else _bound(v, what, path)
            for v in value
        ]
    return value


def read_json(path: Path) -> dict[str, Any]:
    """Parse a JSON file into a dict, with a typed error naming the file."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise ProblemFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProblemFileError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ProblemFileError(f"{path}: expected a JSON object at the top level")
    return data


def lcp_from_mapping(data: Any, path: Path) -> MCP:
    """Box LCP from a mapping with ``M``, ``q`` and optional ``lb``, ``ub``."""
    missing = [k for k in ("M", "q") if k not in data]
    if missing:
        raise ProblemFileError(f"{path}: LCP file lacks {missing} (keys present: {sorted(data)})")
    lb = _bound(data["lb"], "lb", path) if "lb" in data else 0.0
    ub = _bound(data["ub"], "ub", path) if "ub" in data else math.inf
    lb = -math.inf if lb is None else lb
    ub = math.inf if ub is None else ub
    try:
        return MCP.lcp(
            np.asarray(data["M"], dtype=float),
            np.asarray(data["q"], dtype=float),
            lb=lb,
            ub=ub,
            name=path.stem,
        )
    except MCPInputError as exc:
        raise ProblemFileError(f"{path}: {exc}") from None
    except (TypeError, ValueError) as exc:
        raise ProblemFileError(f"{path}: M and q must be numeric arrays ({exc})") from None


def file_kind(path: str | Path) -> str:
    """``"lcp-json"``, ``"lcp-npz"``, ``"fclib"`` or ``"mpcc-json"`` (raises for others)."""
    p = Path(path)
    if not p.exists():
        raise ProblemFileError(f"no such file: {p}")
    if not p.is_file():
        raise ProblemFileError(f"not a file: {p}")
    suffix = p.suffix.lower()
    if suffix in (".hdf5", ".h5"):
        return "fclib"
    if suffix == ".npz":
        return "lcp-npz"
    if suffix == ".json":
        data = read_json(p)
        if "M" in data and "q" in data:
            return "lcp-json"
        if "w" in data and ("G_fun" in data or "H_fun" in data):
            return "mpcc-json"
        raise ProblemFileError(
            f"{p}: JSON file is neither an LCP (keys M, q) nor a CasADi MPCC (keys w, G_fun, H_fun); "
            f"keys present: {sorted(data)[:12]}"
        )
    raise ProblemFileError(f"{p}: unknown problem file type {suffix!r} (expected .json, .npz, .hdf5 or .h5)")


def load_mcp(path: str | Path) -> MCP:
    """Load an LCP file (JSON or NPZ) as an :class:`~mcpkit.MCP`."""
    p = Path(path)
    kind = file_kind(p)
    if kind == "lcp-json":
        return lcp_from_mapping(read_json(p), p)
    if kind == "lcp-npz":
        try:
            with np.load(p, allow_pickle=False) as npz:
                return lcp_from_mapping({k: npz[k] for k in npz.files}, p)
        except (OSError, ValueError) as exc:
            raise ProblemFileError(f"cannot read {p} as NPZ: {exc}") from None
    raise ProblemFileError(
        f"{p}: {kind} files are not plain MCPs; use `mcpkit solve` which dispatches on the type"
    )


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


def output_dir(out_dir: str | Path) -> Path:
    """``out_dir`` as a created folder (for demos and figures); a typed error if it is not a path."""
    try:
        d = Path(out_dir)
    except TypeError:
        raise MCPInputError(f"out_dir must be a path, got {out_dir!r}") from None
    d.mkdir(parents=True, exist_ok=True)
    return d
