"""Rows to Parquet as they finish: a folder of part files that is a valid dataset at every moment.

``out`` (``results.parquet``) is a folder; each flush writes one part file
(``part-<run>-<n>.parquet``) to a hidden temporary name and renames it into place (an atomic
``os.replace``), so an interrupted or killed sweep leaves only whole part files, readable by
:func:`read_results`, :func:`pandas.read_parquet` (pyarrow), DuckDB or Polars. A flush happens
every ``batch_rows`` rows or ``flush_seconds`` seconds, whichever comes first, and at
:meth:`ParquetSink.close`, which also merges the parts into one when there are several (the
merged part is written before the others are removed; :func:`read_results` keeps one row per
key, so a merge cut short duplicates nothing).

Every part has the :data:`~mcpkit.sweep.tasks.RESULT_COLUMNS` with their types; input columns
and a summary's own fields are typed from their values (a column whose values do not share a
type is stored as text).
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from mcpkit.errors import MCPInputError, ProblemFileError
from mcpkit.sweep.tasks import RESULT_COLUMNS

#: Arrow types of the columns every part has: the row key, the task's name, then the results.
CORE_SCHEMA = pa.schema(
    [("key", pa.string()), ("task", pa.string())]
    + [(name, pa.type_for_alias(t)) for name, t in RESULT_COLUMNS.items()]
)

#: Merge the parts at close when there are more than one and at most this many rows.
COMPACT_MAX_ROWS = 200_000


def part_files(folder: Path) -> list[Path]:
    """The finished part files of a results folder, in name order (temporary files excluded)."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.parquet") if p.is_file() and not p.name.startswith((".", "_")))


def check_part(part: Path) -> pa.Schema:
    """The schema of a part file, or a :class:`~mcpkit.errors.ProblemFileError` naming the part.

    A part that is not a whole Parquet file (truncated, 0 bytes, text named ``part-*.parquet``)
    or whose ``key`` column is not text (keys are strings; another sweep's or a foreign file's
    integer keys cannot be merged) is refused: the message says to move it away or to start
    afresh (``mcpkit sweep --no-resume``, ``resume=False``).
    """
    why = "move it out of the folder, or start afresh with --no-resume (resume=False)"
    try:
        schema = pq.read_schema(part)
    except (pa.ArrowException, OSError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ProblemFileError(
            f"results part {part} is not a readable Parquet file (truncated or foreign: {first}); {why}"
        ) from None
    if "key" in schema.names and not (
        pa.types.is_string(schema.field("key").type) or pa.types.is_null(schema.field("key").type)
    ):
        raise ProblemFileError(
            f"results part {part} has a key column of type {schema.field('key').type}, not text "
            f"(not a part mcpkit wrote); {why}"
        )
    return schema


def _read_part(part: Path, columns: list[str] | None = None) -> pa.Table:
    """``pq.read_table`` of a checked part (:func:`check_part`; a read error names the part too)."""
    check_part(part)
    try:
        return pq.read_table(part, columns=columns)
    except (pa.ArrowException, OSError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ProblemFileError(f"results part {part} cannot be read ({first})") from None


def _column(name: str, values: list[Any]) -> pa.Array:
    if name in CORE_SCHEMA.names:
        typ = CORE_SCHEMA.field(name).type
        if pa.types.is_floating(typ):
            values = [None if v is None else float(v) for v in values]
        elif pa.types.is_integer(typ):
            values = [None if v is None else int(v) for v in values]
        elif pa.types.is_string(typ):
            values = [None if v is None else str(v) for v in values]
        return pa.array(values, type=typ)
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
        return pa.array([None if v is None else str(v) for v in values], type=pa.string())


def rows_to_table(rows: list[dict[str, Any]]) -> pa.Table:
    """One Arrow table of ``rows``: :data:`CORE_SCHEMA` columns first, then the others as they appear."""
    names = list(CORE_SCHEMA.names)
    seen = set(names)
    for row in rows:
        for k in row:
            if k not in seen:
                seen.add(k)
                names.append(k)
    return pa.table({n: _column(n, [row.get(n) for row in rows]) for n in names})


def read_results(path: str | os.PathLike[str], columns: list[str] | None = None) -> Any:
    """All rows of a results folder as a :class:`pandas.DataFrame`, one row per key (the last written).

    Part files whose columns differ (input columns of different sweeps, summary fields of
    different result kinds) are unified; a missing column is null. An absent folder gives an
    empty frame with the :data:`CORE_SCHEMA` columns. A part that cannot be read or merged
    (:func:`check_part`) raises :class:`~mcpkit.errors.ProblemFileError` naming it.
    """
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        return _read_part(folder, columns).to_pandas()
    tables = [_read_part(p, columns) for p in part_files(folder)]
    if not tables:
        return (
            CORE_SCHEMA.empty_table().to_pandas()
            if columns is None
            else pa.table({c: pa.array([], type=pa.string()) for c in columns}).to_pandas()
        )
    table = pa.concat_tables(tables, promote_options="permissive")
    df = table.to_pandas()
    if "key" in df.columns:
        df = df.drop_duplicates("key", keep="last").reset_index(drop=True)
    return df


class ParquetSink:
    """Buffered rows written as part files of the folder ``path`` (see the module docstring).

    Parameters
    ----------
    path
        The results folder (created). A regular file there is an error.
    resume
        Keep the rows already there (:meth:`keys` lists them); ``False`` removes the old part
        files first.
    batch_rows, flush_seconds
        Flush when this many rows are buffered or this long after the last flush.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        resume: bool = True,
        batch_rows: int = 256,
        flush_seconds: float = 2.0,
    ) -> None:
        self.path = Path(path)
        if self.path.exists() and not self.path.is_dir():
            raise MCPInputError(
                f"out={str(self.path)!r} is a file; sweep results are a folder of Parquet part files "
                "(give a new name, or remove the file)"
            )
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise MCPInputError(
                f"out={str(self.path)!r}: cannot create the folder ({exc.strerror or exc})"
            ) from None
        if not os.access(self.path, os.W_OK):
            raise MCPInputError(f"out={str(self.path)!r}: the folder is not writable")
        if not resume:
            for p in part_files(self.path):
                p.unlink()
        for p in part_files(self.path):  # every part kept must merge: checked before anything runs
            check_part(p)
        self.batch_rows = max(1, int(batch_rows))
        self.flush_seconds = float(flush_seconds)
        self.run = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"
        self.buffer: list[dict[str, Any]] = []
        self.parts = 0
        self.written = 0
        self.last_flush = time.monotonic()

    def keys(self) -> set[str]:
        """Keys of the rows already in the folder."""
        out: set[str] = set()
        for p in part_files(self.path):
            if "key" in check_part(p).names:
                out.update(k for k in _read_part(p, ["key"]).column("key").to_pylist() if k)
        return out

    def add(self, row: dict[str, Any]) -> None:
        """Buffer one row; flush when due."""
        self.buffer.append(row)
        if len(self.buffer) >= self.batch_rows or time.monotonic() - self.last_flush >= self.flush_seconds:
            self.flush()

    def tick(self) -> None:
        """Flush buffered rows if ``flush_seconds`` have passed (call while waiting)."""
        if self.buffer and time.monotonic() - self.last_flush >= self.flush_seconds:
            self.flush()

    def flush(self) -> None:
        """Write the buffered rows as one part file (atomically), if there are any."""
        self.last_flush = time.monotonic()
        if not self.buffer:
            return
        self._write(rows_to_table(self.buffer), f"part-{self.run}-{self.parts:06d}.parquet")
        self.written += len(self.buffer)
        self.parts += 1
        self.buffer = []

    def _write(self, table: pa.Table, name: str) -> Path:
        final = self.path / name
        tmp = self.path / f".{name}.tmp"
        pq.write_table(table, tmp)
        os.replace(tmp, final)
        return final

    def close(self, compact: bool = True) -> None:
        """Flush, then merge the parts into one when there are several (and not too many rows)."""
        self.flush()
        if compact:
            self.compact()

    def compact(self) -> None:
        """Merge all part files into one (written first, then the old parts removed)."""
        parts = part_files(self.path)
        if len(parts) < 2:
            return
        total = sum(pq.read_metadata(p).num_rows for p in parts)
        if total > COMPACT_MAX_ROWS:
            return
        tables = [_read_part(p) for p in parts]
        table = pa.concat_tables(tables, promote_options="permissive")
        if "key" in table.column_names:  # keep the last row of each key
            keys = table.column("key").to_pylist()
            last = {k: i for i, k in enumerate(keys)}
            if len(last) < len(keys):
                table = table.take(sorted(last.values()))
        merged = self._write(table, f"part-{self.run}-merged.parquet")
        for p in parts:
            if p != merged:
                p.unlink(missing_ok=True)


def write_rows(path: str | os.PathLike[str], rows: Iterable[dict[str, Any]]) -> None:
    """Write ``rows`` to a results folder in one part (for tests and conversions)."""
    sink = ParquetSink(path)
    for r in rows:
        sink.add(r)
    sink.close(compact=False)
