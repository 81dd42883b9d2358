r"""Reading FCLIB local problems from HDF5 (Acary et al., FCLIB), checked before anything is read.

An FCLIB *local* 3-D friction-contact problem stores the Delassus matrix :math:`W` (sparse:
compressed column, compressed row or triplets in ``fclib_local/W/{i,p,x,m,n,nz}``), the free
velocity :math:`q` and the friction coefficients :math:`\mu` (``fclib_local/vectors``), optionally
a reference solution (``solution/{r,u}``) and a title. :func:`write_fclib_local` writes that
layout (``W`` compressed by column, as Siconos writes it). :func:`read_fclib_local` returns them as
:class:`FCLIBData` with :math:`W` dense (these problems are small); the contact model built on
them (formulations, the Siconos error, the staged solve) is :mod:`mcpkit.models.fclib`, whose
:func:`~mcpkit.models.fclib.load_fclib` wraps this reader.

Hostile files are refused with :class:`~mcpkit.errors.ProblemFileError` and a message naming the
member: links that do not resolve, groups where datasets belong, text where numbers belong,
declared sizes beyond :data:`MAX_FCLIB_ENTRIES` or half the available memory (checked on the
declared sizes, before allocating), indices out of range, NaN or inf, negative friction.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mcpkit.errors import ProblemFileError

__all__ = ["MAX_FCLIB_ENTRIES", "FCLIBData", "data_error", "read_fclib_local", "write_fclib_local"]


@dataclass(frozen=True)
class FCLIBData:
    """The arrays and text of an FCLIB local problem, as read (``W`` dense)."""

    W: np.ndarray
    """Delassus matrix ``(3 nc, 3 nc)``."""
    q: np.ndarray
    """Free velocity ``(3 nc,)``."""
    mu: np.ndarray
    """Friction coefficients ``(nc,)``."""
    r_ref: np.ndarray | None
    """The file's reference reactions (``None`` when absent)."""
    u_ref: np.ndarray | None
    """The file's reference velocities (``None`` when absent)."""
    title: str
    """``fclib_local/info/title`` (``""`` when absent)."""
    description: str
    """``fclib_local/info/description`` (``""`` when absent)."""


#: Most entries mcpkit reads from one FCLIB dataset, and most entries of the dense ``W`` it
#: builds (2**31 float64 values are 16 GiB); both are also held to half the available memory
#: (:func:`_memory_budget`). Checked on the declared sizes, before anything is read or allocated.
MAX_FCLIB_ENTRIES = 2**31


def _memory_budget() -> int | None:
    """Half the memory available now (``MemAvailable`` of ``/proc/meminfo``, else the free pages),
    in bytes; ``None`` when the platform does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024 // 2
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
    except (AttributeError, OSError, ValueError):
        return None


def _check_allocation(entries: int, itemsize: int, what: str, path: Path) -> None:
    """Refuse ``entries`` values of ``itemsize`` bytes beyond :data:`MAX_FCLIB_ENTRIES` or the memory
    budget, naming ``what`` and ``path``."""
    size = entries * itemsize
    budget = _memory_budget()
    if entries > MAX_FCLIB_ENTRIES or (budget is not None and size > budget):
        limit = f"at most {MAX_FCLIB_ENTRIES} entries" + (
            f" and {budget / 2**30:.1f} GiB (half the memory available)" if budget is not None else ""
        )
        raise ProblemFileError(
            f"FCLIB: {path}: {what} declares {entries} entries ({size / 2**30:.1f} GiB); mcpkit reads {limit}"
        )


def _link_error(group: Any, name: str, full: str, path: Path) -> ProblemFileError:
    """The error for a member ``name`` of ``group`` that exists as a link but cannot be opened."""
    import h5py

    try:
        link = group.get(name, getlink=True)
    except Exception:  # h5py raises many types
        link = None
    if isinstance(link, h5py.ExternalLink):
        how = f"an external link to {link.path!r} in file {link.filename!r}, which does not resolve"
    elif isinstance(link, h5py.SoftLink):
        how = f"a soft link to {link.path!r}, which does not resolve (a missing target or a loop of links)"
    else:
        how = "an object that cannot be opened"
    return ProblemFileError(f"FCLIB: {path}: {full} is {how}")


def _member(root: Any, key: str, path: Path, prefix: str = "") -> Any:
    """The object at ``key`` (``"W/i"``) under the group ``root``, or ``None`` when it is absent.

    Each step is looked up as a link first (a dangling soft link or external link is a typed
    error naming it, not h5py's KeyError or RuntimeError), and every step but the last must be a
    group.
    """
    import h5py

    obj, done = root, prefix
    for part in key.split("/"):
        full = f"{done}/{part}" if done else part
        if not isinstance(obj, h5py.Group):
            raise ProblemFileError(f"FCLIB: {path}: {done} is a dataset, expected a group holding {part!r}")
        try:
            link = obj.get(part, getlink=True)
        except Exception as exc:  # h5py raises many types
            raise ProblemFileError(f"FCLIB: {path}: cannot look up {full}: {exc}") from None
        if link is None:
            return None
        try:
            obj = obj[part]
        except Exception:  # h5py raises many types
            raise _link_error(obj, part, full, path) from None
        done = full
    return obj


def _dataset(
    root: Any,
    key: str,
    path: Path,
    *,
    prefix: str = "fclib_local",
    numeric: bool = True,
    want: str = "real numbers",
) -> Any:
    """The dataset at ``key`` under ``root`` (``None`` if absent), checked before it is read:
    a dataset (not a group), numbers when ``numeric`` (``want`` says which, in messages), a
    declared size mcpkit may read."""
    import h5py

    full = f"{prefix}/{key}" if prefix else key
    ds = _member(root, key, path, prefix)
    if ds is None:
        return None
    if not isinstance(ds, h5py.Dataset):
        raise ProblemFileError(f"FCLIB: {path}: {full} is a group, expected a dataset")
    kind = ds.dtype.kind
    if numeric and kind not in "biuf":
        what = "text" if kind in "SUO" else f"dtype {ds.dtype}"
        raise ProblemFileError(f"FCLIB: {path}: {full} must hold {want}, got {what}")
    _check_allocation(int(ds.size or 0), int(ds.dtype.itemsize), full, path)
    return ds


def _read(ds: Any, what: str, path: Path | str = "") -> np.ndarray:
    where = f"{path}: " if path else ""
    try:
        return np.asarray(ds[()])
    except Exception as exc:  # h5py raises many types
        raise ProblemFileError(f"FCLIB: {where}cannot read {what}: {exc}") from exc


def _array(
    root: Any, key: str, path: Path, *, integer: bool = False, prefix: str = "fclib_local"
) -> np.ndarray:
    """The numeric dataset ``key`` as a flat float (or, ``integer``, int64) array; must exist."""
    full = f"{prefix}/{key}" if prefix else key
    ds = _dataset(root, key, path, prefix=prefix, want="integers" if integer else "real numbers")
    if ds is None:
        raise ProblemFileError(f"FCLIB: {path} lacks {full}")
    arr = _read(ds, full, path).reshape(-1)
    if not integer:
        return arr.astype(float)
    if arr.dtype.kind == "f" and not (np.isfinite(arr).all() and (arr == np.round(arr)).all()):
        raise ProblemFileError(f"FCLIB: {path}: {full} must hold integers")
    if arr.size and (np.abs(arr.astype(float)).max() >= 2.0**62):
        raise ProblemFileError(f"FCLIB: {path}: {full} holds integers beyond the range of an index")
    return arr.astype(np.int64)


def _scalar(root: Any, key: str, path: Path, default: int | None = None) -> int:
    """The first entry of the integer dataset ``key`` (FCLIB stores scalars as 1-element arrays);
    ``default`` when it is absent (``None``: required)."""
    full = f"fclib_local/{key}"
    if default is not None and _member(root, key, path, "fclib_local") is None:
        return default
    arr = _array(root, key, path, integer=True)
    if arr.size == 0:
        raise ProblemFileError(f"FCLIB: {path}: {full} is empty, expected one integer")
    return int(arr[0])


def _text(root: Any, key: str, path: Path) -> str:
    """The string dataset ``key`` (title, description), ``""`` when absent."""
    ds = _dataset(root, key, path, numeric=False)
    if ds is None:
        return ""
    return _read(ds, f"fclib_local/{key}", path).tobytes().decode(errors="replace")


def read_fclib_local(path: str | Path) -> FCLIBData:
    """Read an FCLIB local problem's data; raise :class:`~mcpkit.errors.ProblemFileError` if the file is
    unreadable or does not follow the format (``fclib_local/W/{i,p,x,m,n,nz}``,
    ``fclib_local/vectors/{q,mu}``, ``fclib_local/spacedim`` = 3).

    Everything is checked before it is read or allocated: links that do not resolve (a dangling
    soft link, a loop, an external link to a missing file), groups where datasets belong, text
    where numbers belong, empty scalars, declared sizes beyond :data:`MAX_FCLIB_ENTRIES` or half
    the available memory (datasets and the dense ``W``), the sizes of ``W``, ``q`` and ``mu``
    against each other, and the compressed or triplet indices of ``W``.
    """
    import h5py

    path = Path(path)
    if not path.is_file():
        raise ProblemFileError(f"FCLIB: no such file: {path}")
    try:
        f = h5py.File(path, "r")
    except Exception as exc:
        raise ProblemFileError(f"FCLIB: {path} is not a readable HDF5 file: {exc}") from exc
    with f:
        g = _member(f, "fclib_local", path)
        if g is None:
            raise ProblemFileError(
                f"FCLIB: {path} has no 'fclib_local' group (only local problems are supported)"
            )
        if not isinstance(g, h5py.Group):
            raise ProblemFileError(f"FCLIB: {path}: fclib_local is a dataset, expected the problem's group")
        for key in ("W/i", "W/p", "W/x", "W/m", "W/n", "vectors/q", "vectors/mu"):
            if _member(g, key, path, "fclib_local") is None:
                raise ProblemFileError(f"FCLIB: {path} lacks fclib_local/{key}")
        dim = _scalar(g, "spacedim", path, default=3)
        if dim != 3:
            raise ProblemFileError(f"FCLIB: {path}: spacedim {dim} is not supported (3-D only)")
        m, n = _scalar(g, "W/m", path), _scalar(g, "W/n", path)
        nz = _scalar(g, "W/nz", path, default=-1)
        q = _array(g, "vectors/q", path)
        mu = _array(g, "vectors/mu", path)
        if m != n or m != q.size or m != 3 * mu.size:
            raise ProblemFileError(
                f"FCLIB: {path}: inconsistent sizes W {m}x{n}, q {q.size}, mu {mu.size} (need 3*nc)"
            )
        if m == 0:
            raise ProblemFileError(f"FCLIB: {path} has 0 contacts (W 0x0): nothing to solve")
        _check_allocation(m * n, 8, f"W ({m}x{n}, built dense)", path)
        i = _array(g, "W/i", path, integer=True)
        p = _array(g, "W/p", path, integer=True)
        x = _array(g, "W/x", path)
        title = _text(g, "info/title", path)
        desc = _text(g, "info/description", path).strip()
        r_ref = u_ref = None
        if _member(f, "solution/r", path) is not None and _member(f, "solution/u", path) is not None:
            r_ref = _array(f, "solution/r", path, prefix="")
            u_ref = _array(f, "solution/u", path, prefix="")
    W = np.zeros((m, n))
    if nz >= 0:  # triplet form
        if not (i.size == p.size == x.size):
            raise ProblemFileError(f"FCLIB: {path}: triplet W needs equal-length i, p, x")
        if i.size and (i.min() < 0 or i.max() >= m or p.min() < 0 or p.max() >= n):
            raise ProblemFileError(f"FCLIB: {path}: W/i or W/p index out of range")
        np.add.at(W, (i, p), x)
    else:  # -1 compressed column, -2 compressed row
        major = n if nz == -1 else m
        if p.size != major + 1 or p[0] != 0 or np.any(np.diff(p) < 0) or p[-1] > x.size or i.size < p[-1]:
            raise ProblemFileError(f"FCLIB: {path}: malformed compressed pointers W/p")
        minor = np.repeat(np.arange(major), np.diff(p))
        idx = i[: p[-1]]
        if idx.size and (idx.min() < 0 or idx.max() >= (m if nz == -1 else n)):
            raise ProblemFileError(f"FCLIB: {path}: W/i index out of range")
        if nz == -1:
            np.add.at(W, (idx, minor), x[: p[-1]])
        else:
            np.add.at(W, (minor, idx), x[: p[-1]])
    bad = data_error(W, q, mu)
    if bad:
        raise ProblemFileError(f"FCLIB: {path}: {bad}")
    for what, arr in (("solution/r", r_ref), ("solution/u", u_ref)):
        if arr is not None and arr.shape != q.shape:
            raise ProblemFileError(f"FCLIB: {path}: {what} has shape {arr.shape}, expected {q.shape}")
    return FCLIBData(W, q, mu, r_ref, u_ref, title, desc)


def data_error(W: Any, q: Any, mu: Any) -> str:
    """What is wrong with the values of a problem (NaN/inf in W, q or mu, a negative mu), or
    ``""``: the checks the reader and :func:`mcpkit.models.fclib.solve_fclib` share."""
    for what, arr in (("W", W), ("q", q), ("mu", mu)):
        if not np.isfinite(np.asarray(arr, dtype=float)).all():
            return f"{what} contains NaN or inf"
    if np.any(np.asarray(mu, dtype=float) < 0):
        return "negative friction coefficient"
    return ""


def write_fclib_local(
    path: str | Path,
    W: Any,
    q: Any,
    mu: Any,
    r: Any = None,
    u: Any = None,
    title: str = "",
    description: str = "",
) -> Path:
    """Write an FCLIB local problem (and, when ``r`` and ``u`` are given, its solution) to HDF5.

    The layout :func:`read_fclib_local` reads and Siconos writes: ``fclib_local/W/{i,p,x,m,n,nz,
    nzmax}`` with ``W`` compressed by column (``nz = -1``; ``int32`` indices, explicit zeros
    dropped), ``fclib_local/vectors/{q,mu}``, ``fclib_local/spacedim = 3``,
    ``fclib_local/info/{title,description}`` and ``solution/{r,u}``. ``W`` may be dense or
    SciPy sparse. Values are checked first (:func:`data_error`, shapes): a
    :class:`~mcpkit.errors.ProblemFileError` names what is wrong and nothing is written.
    Returns the path.
    """
    import h5py
    import scipy.sparse as sps

    path = Path(path)
    q = np.asarray(q, dtype=float).reshape(-1)
    mu = np.asarray(mu, dtype=float).reshape(-1)
    Wc = sps.csc_array(W, dtype=float)
    Wc.eliminate_zeros()
    Wc.sort_indices()
    n = q.size
    if Wc.shape != (n, n) or n != 3 * mu.size:
        raise ProblemFileError(
            f"FCLIB: cannot write {path}: W {Wc.shape}, q {q.shape}, mu {mu.shape} do not fit (need 3*nc)"
        )
    if n == 0:  # read_fclib_local refuses such a file: never write one
        raise ProblemFileError(f"FCLIB: cannot write {path}: the problem has 0 contacts")
    bad = data_error(Wc.data, q, mu)
    if bad:
        raise ProblemFileError(f"FCLIB: cannot write {path}: {bad}")
    sol = None
    if (r is None) != (u is None):
        raise ProblemFileError(f"FCLIB: cannot write {path}: a solution needs both r and u")
    if r is not None:
        sol = tuple(np.asarray(a, dtype=float).reshape(-1) for a in (r, u))
        if any(a.shape != q.shape or not np.isfinite(a).all() for a in sol):
            raise ProblemFileError(
                f"FCLIB: cannot write {path}: r and u must be finite vectors of length {n}"
            )
    if n >= 2**31 or Wc.nnz >= 2**31:
        raise ProblemFileError(f"FCLIB: cannot write {path}: too large for FCLIB's int32 indices")
    try:
        with h5py.File(path, "w") as f:
            g = f.create_group("fclib_local")
            gw = g.create_group("W")
            gw["i"] = Wc.indices.astype(np.int32)
            gw["p"] = Wc.indptr.astype(np.int32)
            gw["x"] = Wc.data
            for key, val in (("m", n), ("n", n), ("nz", -1), ("nzmax", Wc.nnz)):
                gw[key] = np.array([val], dtype=np.int32)
            gv = g.create_group("vectors")
            gv["q"], gv["mu"] = q, mu
            g["spacedim"] = np.array([3], dtype=np.int32)
            gi = g.create_group("info")
            gi["title"] = np.bytes_(title.encode())
            gi["description"] = np.bytes_(description.encode())
            gi["math_info"] = np.bytes_(b"")
            if sol is not None:
                gs = f.create_group("solution")
                gs["r"], gs["u"] = sol
    except OSError as exc:
        raise ProblemFileError(f"FCLIB: cannot write {path}: {exc}") from exc
    return path
