r"""Parameter grids for :func:`mcpkit.sweep`: the Cartesian product of named axes.

.. math::
    \mathrm{grid}(a = A, b = B, c = v) = \{\,\{a: x, b: y, c: v\} : x \in A,\ y \in B\,\}

in row-major order (the last axis varies fastest, as :func:`itertools.product`). A value that
is a ``list``, ``tuple``, ``range`` or 1-D NumPy array is an axis; anything else (numbers,
strings, ``None``, objects) is a constant put in every point. A constant that is itself a
sequence is written as a one-point axis: ``x0=[[4.0, 0.0, 0.1]]``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import numpy as np

from mcpkit.errors import MCPInputError

_AXIS_TYPES = (list, tuple, range)


def _is_axis(value: Any) -> bool:
    return isinstance(value, _AXIS_TYPES) or (isinstance(value, np.ndarray) and value.ndim == 1)


def grid(*mappings: Mapping[str, Any], **axes: Any) -> list[dict[str, Any]]:
    """Every combination of the axes, one ``dict`` per point (see the module docstring).

    Parameters
    ----------
    *mappings
        Axes given as mappings (for names that are not Python identifiers); merged in order,
        keyword axes last. A name given twice is an error.
    **axes
        ``name=values`` (an axis) or ``name=value`` (a constant).

    Returns
    -------
    list of dict
        ``prod(len(axis))`` points, each with every name. NumPy scalars become Python numbers.

    Raises
    ------
    MCPInputError
        No names, an empty axis, a name given twice, or a 2-D array as an axis.

    Examples
    --------
    >>> grid(h=[1e-3, 1e-4], n_d=(8, 16), formulation="lcp")  # doctest: +NORMALIZE_WHITESPACE
    [{'h': 0.001, 'n_d': 8, 'formulation': 'lcp'}, {'h': 0.001, 'n_d': 16, 'formulation': 'lcp'},
     {'h': 0.0001, 'n_d': 8, 'formulation': 'lcp'}, {'h': 0.0001, 'n_d': 16, 'formulation': 'lcp'}]
    """
    merged: dict[str, Any] = {}
    for m in (*mappings, axes):
        if not isinstance(m, Mapping):
            raise MCPInputError(f"grid() takes mappings and name=values, got {type(m).__name__}")
        for name, value in m.items():
            if not isinstance(name, str) or not name:
                raise MCPInputError(f"grid axis names must be non-empty strings, got {name!r}")
            if name in merged:
                raise MCPInputError(f"grid axis {name!r} given twice")
            merged[name] = value
    if not merged:
        raise MCPInputError("grid() needs at least one name=values")
    names, values = [], []
    for name, value in merged.items():
        if isinstance(value, np.ndarray) and value.ndim > 1:
            raise MCPInputError(
                f"grid axis {name!r} is a {value.ndim}-D array; pass a list of points ([a, b, ...])"
            )
        vals = [_plain(v) for v in value] if _is_axis(value) else [value]
        if not vals:
            raise MCPInputError(f"grid axis {name!r} is empty (a sweep over it would have no points)")
        names.append(name)
        values.append(vals)
    return [dict(zip(names, point, strict=True)) for point in itertools.product(*values)]


def _plain(v: Any) -> Any:
    """NumPy scalars as Python numbers (so they print and hash as the numbers they are)."""
    return v.item() if isinstance(v, np.generic) else v
