"""Figures of a pile run: 3-D snapshots in the box, and per step the contacts, penetration, energy
and the Siconos error."""

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


def _draw_box(ax: object, lx: float, ly: float, height: float) -> None:
    """The open box: floor outline and the four vertical wall edges, up to ``height``."""
    grey = {"color": "0.35", "lw": 1.0}
    ax.plot([0, lx, lx, 0, 0], [0, 0, ly, ly, 0], [0, 0, 0, 0, 0], **grey)  # type: ignore[attr-defined]
    for x, y in ((0, 0), (lx, 0), (lx, ly), (0, ly)):
        ax.plot([x, x], [y, y], [0, height], **grey)  # type: ignore[attr-defined]
    ax.plot([0, lx, lx, 0, 0], [0, 0, ly, ly, 0], [height] * 5, color="0.35", lw=0.6, ls=":")  # type: ignore[attr-defined]


def plot_snapshots(run: PileRun, frames: int = 4) -> Figure:
    """``frames`` 3-D views of the spheres in their box at evenly spaced steps (first and last
    included), coloured by radius; the title of each gives the time, the step and the contacts."""
    import mpl_toolkits.mplot3d  # noqa: F401  (registers the 3-D projection)

    K = run.positions.shape[0] - 1
    idx = np.unique(np.linspace(0, K, min(frames, K + 1)).round().astype(int))
    fig = Figure(figsize=(3.6 * len(idx), 4.0))
    sx, sy, sz = _sphere_mesh(run.radii.size)
    zmax = float((run.positions[:, :, 2] + run.radii).max())
    top = max(zmax, run.box.lx)
    spread = max(float(np.ptp(run.radii)), 1e-12)
    colors = matplotlib.colormaps["viridis"]((run.radii - run.radii.min()) / spread)
    contacts = [r.contacts for r in run.records]
    for k, i in enumerate(idx):
        ax = fig.add_subplot(1, len(idx), k + 1, projection="3d")
        _draw_box(ax, run.box.lx, run.box.ly, top)
        for x, r, c in zip(run.positions[i], run.radii, colors, strict=True):
            ax.plot_surface(x[0] + r * sx, x[1] + r * sy, x[2] + r * sz, color=c, linewidth=0, shade=True)
        ax.set_xlim(0, run.box.lx)
        ax.set_ylim(0, run.box.ly)
        ax.set_zlim(0, top)
        ax.set_box_aspect((run.box.lx, run.box.ly, top), zoom=0.9)
        ax.set_axis_off()
        nc = f", {contacts[i]} contacts" if i < len(contacts) else ""
        ax.set_title(f"t = {i * run.params.h:.2f} s (step {i}){nc}", fontsize=10, pad=0)
    fig.suptitle(
        f"{run.radii.size} spheres, radii {run.radii.min() * 100:.1f}-{run.radii.max() * 100:.1f} cm, "
        f"box {run.box.lx:.2f} x {run.box.ly:.2f} m",
        fontsize=11,
    )
    fig.subplots_adjust(left=0.0, right=1.0, bottom=0.0, top=0.86, wspace=0.0)
    return fig


def plot_steps(run: PileRun) -> Figure:
    """Per step, the physics of the run: the number of contacts, the deepest overlap (penetration),
    the kinetic, potential and total energy, and the Siconos error of the returned reactions (the
    residual of Coulomb's law and Signorini's condition) against the tolerance."""
    recs = run.records
    k = np.array([r.step for r in recs])
    t = (k + 1) * run.params.h  # end of each step
    err = np.array([max(r.siconos_error, 1e-17) for r in recs])
    solved = np.array([r.solved for r in recs])
    energy = run.energy()
    t_all = np.arange(run.positions.shape[0]) * run.params.h
    fig = Figure(figsize=(11, 6.4))
    (a1, a2), (a3, a4) = fig.subplots(2, 2, sharex=True)
    a1.step(t, [r.contacts for r in recs], where="post", color="C2")
    a1.set_ylabel("contacts")
    a1.set_title("active contacts", fontsize=10)
    a2.plot(k * run.params.h, run.penetration(), "o-", ms=3, color="C3")
    a2.set_ylabel("penetration [m]")
    a2.set_ylim(bottom=0.0)  # an overlap of 1e-10 m should look as small as it is
    a2.set_title("deepest overlap at the start of the step", fontsize=10)
    a3.plot(t_all, energy["kinetic"], color="C0", label="kinetic T")
    a3.plot(t_all, energy["potential"] - energy["potential"][0], color="C1", label="potential V - V(0)")
    a3.plot(t_all, energy["total"] - energy["total"][0], color="k", label="total E - E(0)")
    a3.set_ylabel("energy [J]")
    a3.set_xlabel("time [s]")
    a3.set_title(f"energy (E(0) = {energy['total'][0]:.3g} J)", fontsize=10)
    a3.legend(loc="lower left", fontsize=8)
    a4.semilogy(t[solved], err[solved], "o", ms=4, label="solved")
    if (~solved).any():
        a4.semilogy(t[~solved], err[~solved], "x", color="C3", ms=7, label="not solved")
    a4.axhline(run.params.tol, color="k", ls="--", lw=1, label=f"tol {run.params.tol:g}")
    a4.set_ylabel("Siconos error")
    a4.set_xlabel("time [s]")
    a4.set_title("Coulomb-law residual of each step", fontsize=10)
    a4.legend(loc="lower right", fontsize=8)
    fig.suptitle(f"{run.radii.size} spheres, h = {run.params.h} s, μ = {run.params.mu}", fontsize=11)
    fig.tight_layout()
    return fig
