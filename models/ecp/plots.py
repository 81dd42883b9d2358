r"""Figures of ECP runs in the style of Xie and Chakraborty Figs 2-3: velocities against time and
snapshots of the patch with the CM and the ECP (eqs 11-12)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib import colormaps
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure

from mcpkit.models.ecp.simulation import ECPRun

__all__ = ["plot_angular_velocity", "plot_snapshots", "plot_velocities"]


def _new_fig(w: float = 6.4, h: float = 4.0) -> Figure:
    return Figure(figsize=(w, h), dpi=100, layout="constrained")


def plot_velocities(runs: Sequence[ECPRun], labels: Sequence[str] | None = None) -> Figure:
    r"""Translational velocities :math:`v_x, v_y` (and :math:`w_z` on a second axis) vs time.

    Runs after the first are drawn dashed with markers so overlapping curves stay visible
    (the paper's Fig 2a overlays its quadratic and NCP models the same way).
    """
    fig = _new_fig(7.0, 4.2)
    ax, ax2 = fig.subplots(1, 2)
    labels = list(labels) if labels is not None else [r.kind for r in runs]
    for j, (r, lab) in enumerate(zip(runs, labels, strict=True)):
        style = {"ls": "-", "lw": 1.8} if j == 0 else {"ls": "none", "marker": "o", "ms": 3, "mfc": "none"}
        ax.plot(r.t, r.states[:, 3], color="C0", label=f"$v_x$ {lab}", **style)
        ax.plot(r.t, r.states[:, 4], color="C1", label=f"$v_y$ {lab}", **style)
        ax2.plot(r.t, r.states[:, 5], color="C2", label=f"$w_z$ {lab}", **style)
    ax.set_xlabel("t [s]")
    ax.set_ylabel("velocity of the CM [m/s]")
    ax2.set_xlabel("t [s]")
    ax2.set_ylabel(r"$w_z$ [rad/s]")
    for a in (ax, ax2):
        a.grid(alpha=0.3)
        a.legend(fontsize=7)
    return fig


def plot_angular_velocity(runs: Sequence[ECPRun], labels: Sequence[str] | None = None) -> Figure:
    r"""Angular velocity :math:`w_z` and applied force magnitude vs time (cf. Fig 3a-b)."""
    fig = _new_fig(7.0, 3.6)
    ax, ax2 = fig.subplots(1, 2)
    labels = list(labels) if labels is not None else [r.kind for r in runs]
    for j, (r, lab) in enumerate(zip(runs, labels, strict=True)):
        style = {"ls": "-"} if j == 0 else {"ls": "none", "marker": "o", "ms": 2, "mfc": "none"}
        ax2.plot(r.t, r.states[:, 5], color=f"C{j}", label=lab, **style)
    r0 = runs[0]
    mag = np.linalg.norm(r0.applied[:, :2], axis=1) / r0.params.h
    ax.plot(r0.t[:-1], mag, color="k", lw=1)
    ax.set_xlabel("t [s]")
    ax.set_ylabel("|F applied| [N]")
    ax.set_xlim(0, min(0.5, float(r0.t[-1])))
    ax2.set_xlabel("t [s]")
    ax2.set_ylabel(r"$w_z$ [rad/s]")
    ax2.legend(fontsize=7)
    for a in (ax, ax2):
        a.grid(alpha=0.3)
    return fig


def plot_snapshots(
    run: ECPRun,
    every: int = 1,
    t_max: float | None = None,
    push_point: tuple[float, float] | None = None,
) -> Figure:
    """Patch outline, CM (dot) and ECP (cross) at every ``every``-th step (cf. Figs 2b, 3d),
    coloured by time (the colour bar).

    The right panel shows the ECP in the body frame: its excursion inside the patch. With
    ``push_point`` (body frame) the applied force is drawn as an arrow ending there.
    """
    fig = _new_fig(8.0, 4.2)
    ax, axb = fig.subplots(1, 2, width_ratios=[1.6, 1.0])
    V = np.vstack([run.params.patch, run.params.patch[:1]])
    n = run.states.shape[0]
    last = n if t_max is None else int(np.searchsorted(run.t, t_max, side="right"))
    ks = [k for k in range(0, last, every) if np.isfinite(run.states[k]).all()]
    cmap = colormaps["viridis"]
    t0, t1 = (float(run.t[ks[0]]), float(run.t[ks[-1]])) if ks else (0.0, 1.0)
    times = Normalize(t0, t1 if t1 > t0 else t0 + 1.0)
    for k in ks:
        x = run.states[k]
        c, s = np.cos(x[2]), np.sin(x[2])
        W = V @ np.array([[c, s], [-s, c]]) + x[:2]
        col = cmap(times(float(run.t[k])))
        ax.plot(W[:, 0], W[:, 1], color=col, lw=0.7)
        ax.plot(*x[:2], "o", color=col, ms=2.5)
        ax.plot(*run.ecp[k], "x", color="r", ms=3.5, mew=0.9)
        if push_point is not None and k < run.applied.shape[0]:
            F = run.applied[k, :2] / run.params.h
            rx, ry = push_point
            pt = np.array([c * rx - s * ry, s * rx + c * ry]) + x[:2]
            ax.annotate("", xy=pt, xytext=pt - 0.006 * F, arrowprops={"arrowstyle": "->", "lw": 0.6})
    ax.plot([], [], "o", color="k", ms=3, label="CM")
    ax.plot([], [], "x", color="r", ms=4, label="ECP")
    if ks:  # the outline's colour is the snapshot's time
        fig.colorbar(ScalarMappable(norm=times, cmap=cmap), ax=ax, label="snapshot time t [s]", shrink=0.8)
    ax.set_aspect("equal")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.legend(fontsize=7, loc="best")
    ax.grid(alpha=0.3)
    axb.plot(V[:, 0], V[:, 1], "k-", lw=1)
    ob = run.ecp_offset_body[1:last]
    axb.plot(ob[:, 0], ob[:, 1], "r.-", lw=0.6, ms=3)
    axb.plot(0, 0, "ko", ms=4)
    axb.set_aspect("equal")
    axb.set_title("ECP in the body frame", fontsize=9)
    axb.set_xlabel(r"$x_s$ [m]")
    axb.set_ylabel(r"$y_s$ [m]")
    return fig
