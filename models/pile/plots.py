"""Figures of a pile run: 3-D snapshots and the per-step residual and cost."""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib
import numpy as np
from matplotlib.figure import Figure

if TYPE_CHECKING:
    from mcpkit.models.pile.step import PileRun


def _sphere_mesh(n_bodies: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unit-sphere mesh, coarser for many bodies (drawing cost grows with bodies x mesh)."""
    nu, nv = (12, 7) if n_bodies <= 100 else (8, 5) if n_bodies <= 400 else (6, 4)
    u = np.linspace(0, 2 * np.pi, nu)
    v = np.linspace(0, np.pi, nv)
    sv = np.sin(v)
    return np.outer(np.cos(u), sv), np.outer(np.sin(u), sv), np.outer(np.ones_like(u), np.cos(v))


def plot_snapshots(run: PileRun, frames: int = 4) -> Figure:
    """``frames`` 3-D views of the spheres at evenly spaced steps (first and last included)."""
    import mpl_toolkits.mplot3d  # noqa: F401  (registers the 3-D projection)

    K = run.positions.shape[0] - 1
    idx = np.unique(np.linspace(0, K, min(frames, K + 1)).round().astype(int))
    fig = Figure(figsize=(4.0 * len(idx), 4.2))
    sx, sy, sz = _sphere_mesh(run.radii.size)
    zmax = float((run.positions[:, :, 2] + run.radii).max())
    spread = max(float(np.ptp(run.radii)), 1e-12)
    colors = matplotlib.colormaps["viridis"]((run.radii - run.radii.min()) / spread)
    for k, i in enumerate(idx):
        ax = fig.add_subplot(1, len(idx), k + 1, projection="3d")
        for x, r, c in zip(run.positions[i], run.radii, colors, strict=True):
            ax.plot_surface(x[0] + r * sx, x[1] + r * sy, x[2] + r * sz, color=c, linewidth=0, shade=True)
        ax.set_xlim(0, run.box.lx)
        ax.set_ylim(0, run.box.ly)
        ax.set_zlim(0, max(zmax, run.box.lx))
        ax.set_box_aspect((run.box.lx, run.box.ly, max(zmax, run.box.lx)))
        ax.set_title(f"step {i} (t = {i * run.params.h:.2f} s)")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_zticks([])
    fig.tight_layout()
    return fig


def plot_steps(run: PileRun) -> Figure:
    """Per step: the Siconos error against the tolerance, and the solve time in one-LU units with
    the number of contacts."""
    recs = run.records
    k = np.array([r.step for r in recs])
    err = np.array([max(r.siconos_error, 1e-17) for r in recs])
    ratio = np.array([np.nan if r.lu_ratio is None else r.lu_ratio for r in recs])
    nc = np.array([r.contacts for r in recs])
    fig = Figure(figsize=(11, 3.8))
    a1, a2 = fig.subplots(1, 2)
    solved = np.array([r.solved for r in recs])
    a1.semilogy(k[solved], err[solved], "o", ms=4, label="solved")
    if (~solved).any():
        a1.semilogy(k[~solved], err[~solved], "x", color="C3", ms=7, label="not solved")
    a1.axhline(run.params.tol, color="k", ls="--", lw=1, label=f"tol {run.params.tol:g}")
    a1.set_xlabel("step")
    a1.set_ylabel("Siconos error")
    a1.legend(loc="lower right", fontsize=8)
    a2.plot(k, ratio, "o-", ms=3, color="C1", label="solve / one LU")
    a2.axhline(100, color="k", ls="--", lw=1, label="100 LU")
    a2.set_yscale("log")
    a2.set_xlabel("step")
    a2.set_ylabel("solve time / one dense LU of W")
    b = a2.twinx()
    b.plot(k, nc, color="C2", lw=1, label="contacts")
    b.set_ylabel("contacts")
    h1, l1 = a2.get_legend_handles_labels()
    h2, l2 = b.get_legend_handles_labels()
    a2.legend(h1 + h2, l1 + l2, loc="upper left", fontsize=8)
    fig.suptitle(f"{run.radii.size} spheres, h = {run.params.h} s, mu = {run.params.mu}")
    fig.tight_layout()
    return fig
