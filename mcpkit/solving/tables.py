r"""Summaries as text a person reads: aligned ``key  value`` lines and tables, 4 significant digits.

One formatter for every front end that prints a result's summary (``mcpkit demo NAME``,
``mcpkit solve FILE``): a value prints as

=======================  ======================================================
value                    printed
=======================  ======================================================
float                    4 significant digits (``0.01``, ``1.235e-07``, ``nan``)
int, bool, str           as is
``None``                 ``-``
list of numbers          ``[a, b, c]`` up to :data:`MAX_ITEMS` entries, else the
                         first three, ``…``, the last two and the count
dict                     an indented block of ``key  value`` lines
list of dicts            an indented table, one row per dict, columns aligned
=======================  ======================================================

so a demo's ``details`` print without reprs of 17-digit floats or 30-element lists, and the
JSON summary (``--json``) keeps every digit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["MAX_ITEMS", "compact_repr", "format_summary", "format_table", "format_value", "outcome_repr"]

#: Lists with more entries print shortened (first three, ``…``, last two, count).
MAX_ITEMS = 8

#: Significant digits of printed floats.
DIGITS = 4


def _number(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def format_value(v: Any, digits: int = DIGITS) -> str:
    r"""One value as printed: floats to ``digits`` significant digits, short lists, ``-`` for None."""
    if v is None:
        return "-"
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        x = float(v)
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        s = f"{x:.{digits}g}"
        return "0" if s == "-0" else s
    if isinstance(v, np.ndarray):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        items = list(v)
        if len(items) <= MAX_ITEMS:
            return "[" + ", ".join(format_value(x, digits) for x in items) + "]"
        head = ", ".join(format_value(x, digits) for x in items[:3])
        tail = ", ".join(format_value(x, digits) for x in items[-2:])
        return f"[{head}, …, {tail}] ({len(items)} values)"
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{k}: {format_value(x, digits)}" for k, x in v.items()) + "}"
    return str(v)


#: Characters of one field's value (or of a message) that a short repr shows before ``…``.
REPR_VALUE_CHARS = 100

#: Fields (dataclass results) or summary figures (composite results) a short repr shows.
REPR_FIELDS = 12


def _clip(text: str, limit: int = REPR_VALUE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short(v: Any) -> str:
    """One field's value for a repr: arrays by shape (and values when tiny), long things clipped."""
    if isinstance(v, np.ndarray):
        if v.size <= 4 and v.dtype.kind in "fiub":
            return format_value(v)
        return f"<{v.dtype.name} array {'x'.join(map(str, v.shape)) or 'scalar'}>"
    if isinstance(v, (list, tuple)) and len(v) > MAX_ITEMS and not all(_number(x) for x in v):
        return f"<{len(v)} {type(v).__name__} items>"
    if isinstance(v, Mapping) and len(v) > 4:
        return f"<dict of {len(v)}: {_clip(', '.join(map(str, v)), 40)}>"
    if isinstance(v, str):
        return repr(_clip(v))
    if v is None or isinstance(v, (bool, np.bool_, int, float, np.number, list, tuple, Mapping)):
        return _clip(format_value(v))
    text = repr(v)
    return _clip(text) if len(text) <= REPR_VALUE_CHARS else f"<{type(v).__name__}>"


def compact_repr(obj: Any, names: Sequence[str] | None = None) -> str:
    """``Name(field=value, ...)`` of a dataclass in a few lines: arrays by shape, floats to
    :data:`DIGITS` digits, long values clipped, at most :data:`REPR_FIELDS` fields (``names``:
    these fields, in this order; default every field that takes part in the repr)."""
    import dataclasses

    if names is None:
        names = [f.name for f in dataclasses.fields(obj) if f.repr]
    shown = [f"{n}={_short(getattr(obj, n))}" for n in names[:REPR_FIELDS]]
    more = f", … ({len(names) - REPR_FIELDS} more fields)" if len(names) > REPR_FIELDS else ""
    return f"{type(obj).__name__}({', '.join(shown)}{more})"


def outcome_repr(
    name: str, outcome: Any, summary: Mapping[str, Any], keys: Sequence[str] | None = None
) -> str:
    """``Name(solved=..., termination=..., <figures>, message='...')`` of a result that follows
    :class:`~mcpkit.solving.result.Outcome`: its verdict, then up to :data:`REPR_FIELDS` scalar
    figures of its ``summary()`` (``keys``: these; default the ones after the common head), then
    its message clipped to :data:`REPR_VALUE_CHARS` characters, on at most three lines."""
    head = ("kind", "solved", "status", "message", "wall_time_s")
    pick = [k for k in (keys if keys is not None else summary) if k in summary and k not in head]
    figures = [
        f"{k}={_short(summary[k])}"
        for k in pick
        if summary[k] is None or isinstance(summary[k], (str, bool, int, float, np.number, np.bool_))
    ][:REPR_FIELDS]
    wall = summary.get("wall_time_s")
    if isinstance(wall, (int, float)):
        figures.append(f"wall_time_s={format_value(wall)}")
    sizes = _array_sizes(outcome)
    return (
        f"{name}(solved={bool(outcome.solved)}, termination={outcome.termination.value},\n"
        f"  {', '.join(figures)},\n{sizes}  message={_clip(str(outcome.message), 2 * REPR_VALUE_CHARS)!r})"
    )


def _array_sizes(obj: Any) -> str:
    """The sizes of the array fields of a dataclass (at most six) as a repr line, or ``""``."""
    import dataclasses

    if not dataclasses.is_dataclass(obj):
        return ""
    arrays = [
        f"{f.name} {'x'.join(map(str, v.shape))}"
        for f in dataclasses.fields(obj)
        if isinstance(v := getattr(obj, f.name, None), np.ndarray) and v.ndim
    ]
    return f"  arrays: {', '.join(arrays[:6])}{', …' if len(arrays) > 6 else ''},\n" if arrays else ""


def _is_rows(v: Any) -> bool:
    return isinstance(v, (list, tuple)) and len(v) > 0 and all(isinstance(r, Mapping) for r in v)


def format_table(rows: Sequence[Mapping[str, Any]], indent: str = "", digits: int = DIGITS) -> str:
    """Rows (dicts) as an aligned table: a header of the keys, numbers right-aligned, text left."""
    columns: list[str] = []
    for r in rows:
        columns += [k for k in r if k not in columns]
    cells = [[format_value(r.get(c), digits) for c in columns] for r in rows]
    right = [all(_number(r.get(c)) or r.get(c) is None for r in rows) for c in columns]
    widths = [max(len(c), *(len(row[j]) for row in cells)) for j, c in enumerate(columns)]

    def line(values: Sequence[str]) -> str:
        out = [v.rjust(w) if r else v.ljust(w) for v, w, r in zip(values, widths, right, strict=True)]
        return (indent + "  ".join(out)).rstrip()

    return "\n".join([line(columns), *(line(row) for row in cells)])


def format_summary(summary: Mapping[str, Any], indent: str = "", digits: int = DIGITS) -> str:
    """A summary as aligned ``key  value`` lines; nested dicts and lists of dicts indented below their key."""
    flat = [k for k, v in summary.items() if not (isinstance(v, Mapping) and v) and not _is_rows(v)]
    width = max((len(str(k)) for k in flat), default=0)
    lines: list[str] = []
    for k, v in summary.items():
        if isinstance(v, Mapping) and v:
            lines.append(f"{indent}{k}:")
            lines.append(format_summary(v, indent + "  ", digits))
        elif _is_rows(v):
            lines.append(f"{indent}{k}:")
            lines.append(format_table(v, indent + "  ", digits))
        else:
            lines.append(f"{indent}{str(k).ljust(width)}  {format_value(v, digits)}".rstrip())
    return "\n".join(lines)
