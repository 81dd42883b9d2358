r"""Figures of the horizon examples: planned vs re-simulated trajectories and stick/slide bands."""

from __future__ import annotations

from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.cm import ScalarMappable  # noqa: E402
from matplotlib.colors import Normalize  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from mcpkit.mpec.resimulation import HorizonResult  # noqa: E402

__all__ = ["plot_block", "plot_pushing", "plot_pushing_starts"]


def _shade_slide(ax: plt.Axes, t: np.ndarray, sliding: np.ndarray) -> None:
    """Grey bands over the steps that slide (step k covers [t_k, t_k+1])."""
    for k in np.flatnonzero(sliding):
        ax.axvspan(t[k], t[k + 1], color="0.88", lw=0)


def plot_block(res: HorizonResult, sliding: np.ndarray, friction: np.ndarray, u_closed: np.ndarray) -> Figure:
    r"""Block plan: position/velocity (plan and re-simulation), force :math:`u_k` against the
    closed-form sliding optimum, friction force; sliding steps shaded."""
    t = res.t
    fig, axs = plt.subplots(3, 1, figsize=(7, 7), sharex=True, dpi=100)
    for ax in axs:
        _shade_slide(ax, t, sliding)
    axs[0].plot(t, res.states[:, 0], "C0-", label="plan $q_x$ [m]")
    axs[0].plot(t, res.states[:, 3], "C1-", label="plan $v_x$ [m/s]")
    axs[0].plot(t, res.resim_states[:, 0], "k:", label="re-simulation")
    axs[0].plot(t, res.resim_states[:, 3], "k:")
    axs[0].legend(loc="upper left", fontsize=8)
    axs[0].set_title(f"block: MPCC plan (max re-simulation deviation {res.max_deviation:.1e})")
    tm = t[:-1]
    axs[1].step(tm, res.controls[:, 0], where="post", label="MPCC $u_k$")
    axs[1].plot(tm, u_closed, "k--", lw=1, label="closed-form sliding optimum")
    axs[1].set_ylabel("force [N]")
    axs[1].legend(fontsize=8)
    axs[2].step(tm, friction, where="post", color="C3", label="friction force")
    axs[2].ticklabel_format(axis="y", useOffset=False)
    lo = float(np.min(friction)) if friction.size else -1.0
    axs[2].set_ylim(1.3 * min(lo, -1e-3), 0.3 * abs(min(lo, -1e-3)))
    axs[2].set_ylabel("friction [N]")
    axs[2].set_xlabel("t [s]  (grey: sliding, $\\sigma_k > 0$)")
    axs[2].legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_pushing(res: HorizonResult, sliding: np.ndarray, patch: np.ndarray, edge_x: float) -> Figure:
    r"""Pushing plan: slider snapshots coloured by time (colour bar) with the pusher point, pose
    vs time (plan, re-simulation), pusher force components and slip speed :math:`\sigma`
    (sliding shaded)."""
    fig = plt.figure(figsize=(10, 6), dpi=100)
    ax0 = fig.add_subplot(1, 2, 1)
    X = res.states
    rho = np.array([edge_x, float(res.design[0])])
    cmap = matplotlib.colormaps["viridis"]
    times = Normalize(float(res.t[0]), float(res.t[-1]) if res.t[-1] > res.t[0] else float(res.t[0]) + 1.0)
    for k in range(0, X.shape[0], max(1, X.shape[0] // 6)) if X.shape[0] > 1 else [0]:
        c, s = np.cos(X[k, 2]), np.sin(X[k, 2])
        R = np.array([[c, -s], [s, c]])
        P = patch @ R.T + X[k, :2]
        P = np.vstack([P, P[:1]])
        ax0.plot(P[:, 0] * 100, P[:, 1] * 100, "-", color=cmap(times(res.t[k])), lw=1)
        r = R @ rho + X[k, :2]
        ax0.plot(r[0] * 100, r[1] * 100, "C3o", ms=3)
    fig.colorbar(ScalarMappable(norm=times, cmap=cmap), ax=ax0, label="snapshot time t [s]", shrink=0.7)
    ax0.plot(X[:, 0] * 100, X[:, 1] * 100, "C0.-", ms=2, label="plan CM")
    ax0.plot(res.resim_states[:, 0] * 100, res.resim_states[:, 1] * 100, "k:", label="re-simulation")
    ax0.set_aspect("equal")
    ax0.set_xlabel("x [cm]")
    ax0.set_ylabel("y [cm]")
    ax0.legend(fontsize=8, loc="lower right")
    ax0.set_title(f"pusher (red) at contact height $\\theta_c$ = {rho[1] * 1000:.1f} mm")
    t = res.t
    ax1 = fig.add_subplot(3, 2, 2)
    ax2 = fig.add_subplot(3, 2, 4, sharex=ax1)
    ax3 = fig.add_subplot(3, 2, 6, sharex=ax1)
    for ax in (ax1, ax2, ax3):
        _shade_slide(ax, t, sliding)
    ax1.plot(t, X[:, 0] * 100, label="$q_x$ [cm]")
    ax1.plot(t, X[:, 1] * 100, label="$q_y$ [cm]")
    ax1.plot(t, X[:, 2] * 10, label="$10\\,\\theta_z$ [rad]")
    ax1.plot(t, res.resim_states[:, 0] * 100, "k:", lw=1)
    ax1.legend(fontsize=7, ncol=3)
    ax1.set_title(f"max re-simulation deviation {res.max_deviation:.1e}", fontsize=9)
    ax2.step(t[:-1], res.controls[:, 0], where="post", label="$f_n$")
    ax2.step(t[:-1], res.controls[:, 1], where="post", label="$f_t$")
    ax2.set_ylabel("pusher [N]")
    ax2.legend(fontsize=7)
    ax3.step(t[:-1], res.block("sigma")[:, 0], where="post", color="C3")
    ax3.set_ylabel("$\\sigma$ (slip)")
    ax3.set_xlabel("t [s]  (grey: sliding)")
    fig.tight_layout()
    return fig


def plot_pushing_starts(attempts: list[Any], best: int, title: str = "") -> Figure:
    r"""Multi-start record of :func:`~mcpkit.mpec.examples.pushing.plan_pushing`: objective and
    complementarity residual of every attempt (filled: solved and reproduced by re-simulation;
    open: failed), grouped by start, re-seeds to the right; the winner is starred.

    ``attempts`` are :class:`~mcpkit.mpec.examples.pushing.PushAttempt` records, ``best`` the
    index of the winner (``-1``: none). Residuals below 1e-20 (including exact zeros) are drawn
    at 1e-20.
    """
    fig, axs = plt.subplots(1, 2, figsize=(10, 3.6), dpi=100)
    n_start = 1 + max((a.start_index for a in attempts), default=0)
    for k, a in enumerate(attempts):
        x = a.start_index + 0.2 * a.restart
        c = f"C{a.start_index % 10}"
        face = c if a.solved else "none"
        axs[0].plot(x, a.objective, "o", mec=c, mfc=face, ms=7)
        axs[1].semilogy(x, max(a.complementarity, 1e-20), "o", mec=c, mfc=face, ms=7)
        if k == best:
            axs[0].plot(x, a.objective, "k*", ms=14, mfc="none")
    labels = {a.start_index: a.start.label.replace(", ", "\n") for a in attempts}
    for ax in axs:
        ax.set_xticks(range(n_start), [labels.get(i, str(i)) for i in range(n_start)], fontsize=6)
        ax.set_xlim(-0.5, n_start - 0.3)
    axs[0].set_ylabel("objective $\\sum h\\|u\\|^2$ [N$^2$ s]")
    axs[0].set_title(title or "attempts (filled: solved; right: re-seeds; star: best)", fontsize=9)
    axs[1].set_ylabel("complementarity residual")
    axs[1].set_title("complementarity residual of each attempt", fontsize=9)
    fig.tight_layout()
    return fig
