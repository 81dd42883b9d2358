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

__all__ = ["MAX_ITEMS", "format_summary", "format_table", "format_value"]

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
