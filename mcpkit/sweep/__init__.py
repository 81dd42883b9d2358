r"""Sweeps: one task over thousands of inputs on Dask distributed, local by default, a cluster by address.

.. math::
    \{x_i\}_{i=1}^n \ \mapsto\ \{(k_i, x_i, \text{summary}(\text{task}(x_i)))\}_{i=1}^n
    \ \text{(one Parquet row each, streamed)}

``mcpkit.sweep`` is a package you can call: ``mcpkit.sweep(task, inputs, ...)`` is
:func:`mcpkit.sweep.api.sweep` (the module object's class defines ``__call__``), and the
package's other names sit beside it::

    import mcpkit

    df = mcpkit.sweep("solve-file", ["mpeclib/*.json"], method="scholtes", time_limit=60)
    pts = mcpkit.sweep.grid(h=[1e-3, 1e-4], n_d=[8, 16])
    df = mcpkit.sweep(my_study, pts, out="study.parquet")
    old = mcpkit.sweep.read_results("results.parquet")

``from mcpkit.sweep import sweep, grid`` gives the same functions. One file per concern:
:mod:`~mcpkit.sweep.api` (the driver), :mod:`~mcpkit.sweep.tasks` (the task registry and the
per-input runner), :mod:`~mcpkit.sweep.sink` (Parquet part files), :mod:`~mcpkit.sweep.progress`
(the bar), :mod:`~mcpkit.sweep.grid` (parameter grids), :mod:`~mcpkit.sweep.keys` (row keys);
:mod:`~mcpkit.sweep.solve_file`: one problem file of any kind under a budget (the ``"solve-file"``
task, and ``mcpkit solve``).
Dask is imported only when a sweep runs.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from mcpkit.sweep.grid import grid
from mcpkit.sweep.keys import row_key
from mcpkit.sweep.tasks import TASKS, TaskSpec, register_task


def sweep(task: Any, inputs: Any, **kwargs: Any) -> Any:
    """:func:`mcpkit.sweep.api.sweep` (imports Dask on first use)."""
    from mcpkit.sweep.api import sweep as run

    return run(task, inputs, **kwargs)


def read_results(path: Any, columns: list[str] | None = None) -> Any:
    """:func:`mcpkit.sweep.sink.read_results`: a results folder as a DataFrame, one row per key."""
    from mcpkit.sweep.sink import read_results as read

    return read(path, columns)


def expand_files(patterns: Any) -> Any:
    """:func:`mcpkit.sweep.api.expand_files`: problem files from paths, folders and globs."""
    from mcpkit.sweep.api import expand_files as expand

    return expand(patterns)


class _CallableModule(types.ModuleType):
    """The class of the ``mcpkit.sweep`` module: calling the module calls :func:`sweep`."""

    def __call__(self, task: Any, inputs: Any, **kwargs: Any) -> Any:
        return sweep(task, inputs, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

__all__ = ["TASKS", "TaskSpec", "expand_files", "grid", "read_results", "register_task", "row_key", "sweep"]
