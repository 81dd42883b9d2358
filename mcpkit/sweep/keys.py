r"""Row keys: a hash of what a task is asked to do, so a resumed sweep skips what it has.

.. math::
    \mathrm{key} = \mathrm{SHA256}\bigl(\mathrm{JSON}(\text{task},\ c(\text{input}),\
    c(\text{options}))\bigr)[:24]

where :math:`c` is :func:`canonical`: mappings with sorted keys, NumPy arrays by dtype, shape
and the SHA-256 of their bytes, floats by ``repr`` (so ``0.1`` and ``0.1 + 1e-17`` differ),
files by name and content (:func:`file_digest`), anything else by :func:`dask.base.tokenize`.
A file moved to another folder keeps its key; a file whose bytes changed gets a new one.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

#: Hex digits kept of the SHA-256 (96 bits: no collision in any sweep that fits on disk).
KEY_LENGTH = 24

#: Companion files a problem file's loader reads beside ``NAME.ext`` (:mod:`mcpkit.formats.io`).
_COMPANIONS = ("{stem}_q.mtx", "{stem}_b.mtx", "{stem}_lb.mtx", "{stem}_ub.mtx",
               "{stem}.q.npy", "{stem}.lb.npy", "{stem}.ub.npy")  # fmt: skip


def file_digest(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file's bytes followed by those of its companion files (``NAME_q.mtx`` ...).

    A file that cannot be read is hashed by its name alone (``"unreadable:<name>"``): the
    sweep still runs it and records the loader's error in its row.
    """
    p = Path(path)
    h = hashlib.sha256()
    try:
        with p.open("rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except OSError:
        return f"unreadable:{p.name}"
    for pattern in _COMPANIONS:
        c = p.with_name(pattern.format(stem=p.stem))
        if c.is_file():
            h.update(c.name.encode())
            h.update(c.read_bytes())
    return h.hexdigest()


def canonical(obj: Any) -> Any:
    """A JSON-ready value equal for equal inputs (see the module docstring)."""
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (int, np.integer)) and not isinstance(obj, bool):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        v = float(obj)
        return {"float": repr(v)} if not math.isfinite(v) else v
    if isinstance(obj, os.PathLike):
        return {"path": Path(obj).name, "sha256": file_digest(obj)}
    if isinstance(obj, Mapping):
        return {"map": sorted(([canonical(k), canonical(v)] for k, v in obj.items()), key=json.dumps)}
    if isinstance(obj, (list, tuple)):
        return [canonical(v) for v in obj]
    if isinstance(obj, np.ndarray):
        a = np.ascontiguousarray(obj)
        if a.dtype.kind == "O":
            return {"object_array": [canonical(v) for v in a.ravel().tolist()], "shape": list(a.shape)}
        return {
            "ndarray": a.dtype.str,
            "shape": list(a.shape),
            "sha256": hashlib.sha256(a.tobytes()).hexdigest(),
        }
    if callable(obj) and hasattr(obj, "__qualname__") and hasattr(obj, "__module__"):
        return {"callable": f"{obj.__module__}:{obj.__qualname__}"}
    from dask.base import tokenize

    return {"token": tokenize(obj)}


def row_key(task: str, content: Any, options: Mapping[str, Any]) -> str:
    """The key of one row: :data:`KEY_LENGTH` hex digits of the hash of task, input content and options."""
    text = json.dumps([task, canonical(content), canonical(dict(options))], sort_keys=True, allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()[:KEY_LENGTH]
