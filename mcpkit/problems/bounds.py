r"""The cases of a variable's box :math:`[l_i, u_i]`: free, lower, upper, both (box) or fixed.

One classification of the bounds for every layer that needs it (the MCP file readers, the
functional front end, the semismooth Newton engine and its warm start), with the checks of a valid
box (:func:`bound_kinds`).

Examples
--------
>>> import numpy as np
>>> lb = np.array([-np.inf, 0.0, -np.inf, 0.0, 1.0])
>>> ub = np.array([np.inf, np.inf, 2.0, 2.0, 1.0])
>>> bound_kinds(lb, ub).tolist() == [FREE, LOWER, UPPER, BOX, FIXED]
True
"""

from __future__ import annotations

import math

import numpy as np

from mcpkit.errors import BoundsError, NonFiniteError, ShapeError

#: Bound types of a component (see :func:`bound_kinds`).
FREE, LOWER, UPPER, BOX, FIXED = range(5)


def bound_kinds(lb: np.ndarray, ub: np.ndarray) -> np.ndarray:
    r"""Bound type of each component: :data:`FREE`, :data:`LOWER`, :data:`UPPER`, :data:`BOX`, :data:`FIXED`.

    Raises
    ------
    ShapeError
        ``lb`` and ``ub`` are not vectors of one length.
    NonFiniteError
        NaN in a bound.
    BoundsError
        :math:`l_i > u_i`, :math:`l_i = +\infty` or :math:`u_i = -\infty`.
    """
    lb = np.asarray(lb, dtype=float)
    ub = np.asarray(ub, dtype=float)
    if lb.ndim != 1 or lb.shape != ub.shape:
        raise ShapeError(f"bounds must be two vectors of one length, got shapes {lb.shape} and {ub.shape}")
    if np.isnan(lb).any() or np.isnan(ub).any():
        raise NonFiniteError("bounds contain NaN")
    bad = np.flatnonzero((lb > ub) | (lb == math.inf) | (ub == -math.inf))
    if bad.size:
        raise BoundsError(
            f"bounds must satisfy -inf <= l <= u <= inf with l < inf, u > -inf; violated at {bad}"
        )
    lo, up = np.isfinite(lb), np.isfinite(ub)
    kinds = np.full(lb.size, FREE, dtype=np.int8)
    kinds[lo & ~up] = LOWER
    kinds[~lo & up] = UPPER
    kinds[lo & up] = BOX
    kinds[lo & up & (lb == ub)] = FIXED
    return kinds
