"""Central finite differences of a map and the column-wise comparison the gradient tests share."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def central_fd(run: Callable[[np.ndarray], np.ndarray], theta: np.ndarray, rel: float = 1e-6) -> np.ndarray:
    r"""Columns :math:`(r(\theta + h_j e_j) - r(\theta - h_j e_j)) / 2h_j`, with
    :math:`h_j = \text{rel}\cdot\max(|\theta_j|, 10^{-2})`."""
    cols = []
    for j in range(theta.size):
        e = np.zeros(theta.size)
        e[j] = rel * max(abs(theta[j]), 1e-2)
        cols.append((run(theta + e) - run(theta - e)) / (2 * e[j]))
    return np.stack(cols, axis=1)


def assert_columns_close(J: np.ndarray, J_fd: np.ndarray, rtol: float) -> None:
    """Each column agrees to ``rtol`` relative to that column's largest entry."""
    for j in range(J.shape[1]):
        scale = np.abs(J_fd[:, j]).max()
        assert scale > 0
        err = np.abs(J[:, j] - J_fd[:, j]).max() / scale
        assert err <= rtol, f"column {j}: relative error {err:.2e}"
