r"""What a sweep's rows say: counts, time quantiles, and the solved-vs-time profile.

The profile of a sweep is the step function

.. math::
    S(t) = \#\{i : \text{row}_i \text{ solved and } \tau_i \le t\},

:math:`\tau_i` the row's time (``task_time_s``: loading, solving and checking), drawn on a
logarithmic time axis with the number of rows as a ceiling (the performance-profile view of a
benchmark set with one solver).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from mcpkit.sweep.tasks import ERROR_STATUS, TIME_LIMIT_STATUS

#: The quantiles of the per-row time reported by :func:`summarize`.
QUANTILES = (0.5, 0.9, 0.99, 1.0)


def _time_column(df: Any) -> str:
    return "task_time_s" if "task_time_s" in df.columns else "wall_time_s"


def summarize(df: Any) -> dict[str, Any]:
    """Counts (rows, solved, not solved, of which time limit, errors) and time quantiles of ``df``.

    ``not_solved`` counts rows that ran without raising and are not solved (``time_limit`` among
    them); ``errors`` the rows whose task raised. Times are ``task_time_s`` (seconds per row).
    """
    n = len(df)
    status = df["status"].astype(object) if n else []
    solved = df["solved"].fillna(False).astype(bool) if n else []
    errors = int(np.sum(np.asarray(status) == ERROR_STATUS)) if n else 0
    n_solved = int(np.sum(np.asarray(solved))) if n else 0
    t = np.asarray(df[_time_column(df)], dtype=float) if n else np.array([])
    t = t[np.isfinite(t)]
    return {
        "rows": n,
        "solved": n_solved,
        "not_solved": n - n_solved - errors,
        "time_limit": int(np.sum(np.asarray(status) == TIME_LIMIT_STATUS)) if n else 0,
        "errors": errors,
        "time_quantiles_s": {f"q{int(100 * q)}": float(np.quantile(t, q)) for q in QUANTILES}
        if t.size
        else {},
        "total_time_s": float(t.sum()),
    }


def format_summary(s: dict[str, Any], run: dict[str, Any] | None = None) -> str:
    """The summary as a small text table; ``run`` (``df.attrs["sweep"]``) adds what this run did.

    With ``run``: how many rows ran now and how many were already in the results folder
    (skipped on a rerun), and, when it happened, inputs resubmitted after their task was lost
    and workers lost during the run.
    """
    lines = [
        f"{'rows':<12}{s['rows']:>8}",
        f"{'solved':<12}{s['solved']:>8}",
        f"{'not solved':<12}{s['not_solved']:>8}   (time limit: {s['time_limit']})",
        f"{'errors':<12}{s['errors']:>8}",
    ]
    if s["time_quantiles_s"]:
        q = s["time_quantiles_s"]
        lines.append(
            "time per row [s]: " + ", ".join(f"{k.replace('q100', 'max')} {v:.3g}" for k, v in q.items())
        )
        lines.append(f"total time [s]: {s['total_time_s']:.3g} (summed over rows)")
    if run:
        lines.append(
            f"this run: {run.get('submitted', 0)} run now, {run.get('skipped', 0)} already in the "
            "results folder (skipped)"
        )
        if run.get("resubmitted") or run.get("workers_lost"):
            lines.append(
                f"cluster faults: {run.get('workers_lost', 0)} worker(s) lost, "
                f"{run.get('resubmitted', 0)} input(s) resubmitted"
            )
    return "\n".join(lines)


def plot_profile(
    df: Any, path: str | os.PathLike[str], title: str = "", label: str = "solved", ax: Any = None
) -> Any:
    """Draw :math:`S(t)` of ``df`` (module docstring) and save it to ``path`` (PNG, SVG, PDF ...).

    Returns the figure. ``ax`` draws into an existing axis (several sweeps in one figure) and
    does not save when ``path`` is empty.
    """
    import matplotlib

    if ax is None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = None
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.0, 3.6))
    col = _time_column(df)
    ok = df["solved"].fillna(False).astype(bool).to_numpy()
    times = np.sort(np.asarray(df[col], dtype=float)[ok])
    times = times[np.isfinite(times)]
    if times.size:
        ax.step(
            np.concatenate([[times[0]], times]),
            np.arange(times.size + 1),
            where="post",
            label=f"{label} ({times.size} of {len(df)})",
        )
    ax.axhline(len(df), color="0.6", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("time per problem [s]")
    ax.set_ylabel("problems solved within the time")
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(loc="lower right", fontsize=8)
    if fig is not None:
        fig.tight_layout()
        if path:
            fig.savefig(path, dpi=120)
        plt.close(fig)
    return fig if fig is not None else ax.figure
