r"""Plot helpers for the friction-geometry tools (patches, limit surfaces, moment function,
Goyal et al.'s two-point bar, Erdmann's configuration-space cone).

Every function draws :math:`\cdot` into ``ax``/``fig`` when given (else creates a figure) and
returns the Figure. ``python -m mcpkit.models.friction.plots OUTDIR`` regenerates the docs
figures (``ls_*.png``, ``cspace_*.png``) and prints the measured accuracy tables.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from mcpkit.models.friction import limit_surface as ls
from mcpkit.models.friction.cspace_cone import CSpaceContact
from mcpkit.models.friction.patch import ContactPatch
from mcpkit.models.friction.two_point_bar import bar_facets, bar_vertices, two_point_bar

__all__ = [
    "make_docs_figures",
    "plot_cor_sweep",
    "plot_cspace_cone",
    "plot_limit_surface_3d",
    "plot_ls_section",
    "plot_moment_function",
    "plot_patch",
    "plot_two_point_bar",
]


def _fig_ax(ax, projection: str | None = None, figsize=(5, 4)):
    if ax is not None:
        return ax.figure, ax
    fig = Figure(figsize=figsize, dpi=100)
    return fig, fig.add_subplot(111, projection=projection)


def plot_patch(patch: ContactPatch, ax=None, title: str | None = None) -> Figure:
    """Cells coloured by pressure (weight / cell area), CoP marked (the LuGre paper Fig. 8 style)."""
    fig, ax = _fig_ax(ax)
    dx, dy = patch.cell_size
    h = dy if dy > 0 else dx * 0.3
    p = patch.weights / (dx * h)
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Rectangle

    rects = [Rectangle((x - dx / 2, y - h / 2), dx, h) for x, y in zip(patch.x, patch.y, strict=True)]
    pc = PatchCollection(rects, cmap="viridis", edgecolor="k", linewidth=0.2)
    pc.set_array(p / p.max())
    pc.set_clim(0.0, 1.0)  # uniform patches in the top colour, not rescaled round-off
    ax.add_collection(pc)
    c = patch.centre_of_pressure
    ax.plot(c[0], c[1], "r+", ms=10, mew=2)
    ax.set_xlim(patch.x.min() - dx, patch.x.max() + dx)
    ax.set_ylim(patch.y.min() - max(h, dx), patch.y.max() + max(h, dx))
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    if title:
        ax.set_title(title, fontsize=9)
    return fig


def plot_cor_sweep(length: float = 0.02, n: int = 5, ax=None) -> Figure:
    """Line contact, CCW rotation about (x_c, 0) swept along the line: F_y from the exact,
    midpoint (the LuGre paper eq 21) and bilinear (the LuGre paper eq 23) methods vs the closed form
    2 mu N x_c / L (Arslan Waltersson and Karayiannidis Figs 10-11)."""
    fig, ax = _fig_ax(ax, figsize=(6, 3.5))
    P = ContactPatch.line(length, n)
    xs = np.linspace(-length / 2, length / 2, 801)
    T = np.stack([np.zeros_like(xs), -xs, np.ones_like(xs)], axis=1)
    ax.plot(xs * 1e3, 2 * xs / length, "k-", lw=3, alpha=0.3, label="closed form")
    for m, st in (("midpoint", "C1-"), ("bilinear", "C2--"), ("exact", "C0:")):
        ax.plot(xs * 1e3, P.friction_load(T, 1.0, 1.0, method=m)[:, 1], st, label=m)
    for e in np.linspace(-length / 2, length / 2, n + 1):
        ax.axvline(e * 1e3, color="0.8", lw=0.5)
    ax.set_xlabel("centre of rotation $x_c$ [mm]")
    ax.set_ylabel(r"$F_y/(\mu N)$")
    ax.set_title(f"line contact, {n} cells: CoR sweep", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_limit_surface_3d(samples: ls.LimitSurfaceSamples, ax=None, title: str | None = None) -> Figure:
    """Normalised limit surface (convex hull of the samples) in (F_x, F_y, M/L)/(mu N)."""
    from scipy.spatial import ConvexHull

    fig, ax = _fig_ax(ax, projection="3d")
    Pn = samples.normalised_loads
    hull = ConvexHull(Pn)
    ax.plot_trisurf(
        Pn[:, 0],
        Pn[:, 1],
        Pn[:, 2],
        triangles=hull.simplices,
        cmap="viridis",
        linewidth=0.05,
        edgecolor="k",
        alpha=0.9,
    )
    ax.set_xlabel(r"$F_x/\mu N$")
    ax.set_ylabel(r"$F_y/\mu N$")
    ax.set_zlabel(r"$M/(\mu N L)$")
    if title:
        ax.set_title(title, fontsize=9)
    return fig


def plot_ls_section(
    model: ls.FrictionLoadModel,
    mu: float = 1.0,
    normal_force: float = 1.0,
    plane: str = "FxM",
    fit: ls.EllipsoidFit | None = None,
    ax=None,
    title: str | None = None,
    char_length: float | None = None,
    n: int = 121,
) -> Figure:
    """Section of the limit surface on a coordinate plane, with the fitted ellipsoid's section
    (if ``fit``) dashed."""
    fig, ax = _fig_ax(ax)
    L = model.radius_of_gyration if char_length is None else char_length
    sec = ls.limit_surface_section(model, mu, normal_force, plane, n=n, char_length=L)
    sc = np.array([1, 1, 1 / L]) / (mu * normal_force)
    Pn = sec * sc
    i, j = {"FxM": (0, 2), "FyM": (1, 2), "FxFy": (0, 1)}[plane]
    ax.plot(Pn[:, i], Pn[:, j], "C0-", label="limit surface")
    if fit is not None:
        t = np.linspace(0, 2 * np.pi, 200)
        A2 = fit.A[np.ix_([i, j], [i, j])]
        u = np.stack([np.cos(t), np.sin(t)], axis=1)
        r = 1 / np.sqrt(np.einsum("ki,ij,kj->k", u, A2, u))
        ax.plot(r * u[:, 0], r * u[:, 1], "C3--", label="ellipsoid fit")
        ax.legend(fontsize=7, loc="lower left")
    lab = {0: r"$F_x/\mu N$", 1: r"$F_y/\mu N$", 2: r"$M/(\mu N L)$"}
    ax.set_xlabel(lab[i])
    ax.set_ylabel(lab[j])
    ax.set_aspect("equal")
    if title:
        ax.set_title(title, fontsize=9)
    return fig


def plot_moment_function(
    model: ls.FrictionLoadModel,
    extent: float,
    mu: float = 1.0,
    normal_force: float = 1.0,
    ax=None,
    n: int = 61,
    title: str | None = None,
) -> Figure:
    """Surface of Zhukovskii's moment function M_c(x_c, y_c) over [-extent, extent]^2
    (Goyal et al. Fig. 7)."""
    fig, ax = _fig_ax(ax, projection="3d")
    g = np.linspace(-extent, extent, n)
    X, Y = np.meshgrid(g, g)
    Mc = ls.moment_function(model, X, Y, mu, normal_force)
    ax.plot_surface(X, Y, Mc, cmap="viridis", linewidth=0, antialiased=True, alpha=0.95)
    ax.set_xlabel("$x_c$")
    ax.set_ylabel("$y_c$")
    ax.set_zlabel("$M_c$")
    if title:
        ax.set_title(title, fontsize=9)
    return fig


def plot_two_point_bar(mu: float = 1.0, normal_force: float = 1.0, fig=None) -> Figure:
    """Goyal et al. Fig. 6: the bar's limit surface with its 4 facets and 4 vertices, and the
    square [F_x, M] section."""
    if fig is None:
        fig = Figure(figsize=(9, 4), dpi=100)
    bar = two_point_bar(1.0)
    S = ls.sample_limit_surface(bar, mu, normal_force, n=80, kind="grid", char_length=1.0)
    ax = fig.add_subplot(121, projection="3d")
    plot_limit_surface_3d(S, ax=ax, title="two-point bar: limit surface")
    for f in bar_facets(mu, normal_force, 1.0):
        b = f.boundary(100) / (mu * normal_force)
        ax.plot(b[:, 0], b[:, 1], b[:, 2], "r-", lw=1.5)
    V = bar_vertices(mu, normal_force, 1.0) / (mu * normal_force)
    ax.scatter(V[:, 0], V[:, 1], V[:, 2], color="k", s=30, depthshade=False)
    ax.view_init(elev=20, azim=-60)
    ax2 = fig.add_subplot(122)
    plot_ls_section(
        bar, mu, normal_force, "FxM", ax=ax2, char_length=1.0, n=181, title=r"$[F_x, M]$ section: a square"
    )
    ax2.plot(V[:, 0][[0, 1, 2, 3]], V[:, 2][[0, 1, 2, 3]], "ko", label="vertices")
    for f in bar_facets(mu, normal_force, 1.0):
        c = f.centre / (mu * normal_force)
        ax2.plot(c[0], c[2], "rs", ms=4)
    ax2.legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_cspace_cone(
    contact: CSpaceContact, F: np.ndarray | None = None, ax=None, title: str | None = None
) -> Figure:
    r"""Erdmann Fig. 5: the cone in its plane :math:`F\cdot t_r = 0`, axes :math:`t_r^\perp`
    (horizontal) and :math:`\mathbf n` (vertical); the tangent plane is the horizontal line.
    With ``F``, draws :math:`-F`'s in-plane part and the §5.2 reaction."""
    fig, ax = _fig_ax(ax, figsize=(4.5, 4))
    E = contact.plane_coordinates(contact.edges)[:, :2]
    E = E / np.linalg.norm(E, axis=1)[:, None]
    from matplotlib.patches import Polygon

    ax.add_patch(Polygon([[0, 0], 1.6 * E[0], 1.6 * E[1]], closed=True, color="C0", alpha=0.25))
    for k, lab in enumerate((r"$\Delta_n n + \mu v_f$", r"$\Delta_n n - \mu v_f$")):
        ax.annotate("", 1.5 * E[k], (0, 0), arrowprops=dict(arrowstyle="->", color="C0", lw=2))
        ax.text(*(1.55 * E[k]), lab, fontsize=8, color="C0", ha="center")
    ax.axhline(0, color="k", lw=1)
    ax.text(1.05, 0.03, "tangent plane", fontsize=7)
    ax.annotate("", (0, 1.0), (0, 0), arrowprops=dict(arrowstyle="->", color="k"))
    ax.text(0.03, 1.0, r"$\mathbf{n}$", fontsize=10)
    ax.text(1.3, -0.12, r"$t_r^\perp$", fontsize=10)
    if F is not None:
        R = contact.reaction_at_rest(np.asarray(F, dtype=float))
        f = contact.plane_coordinates(-np.asarray(F, dtype=float))[:2]
        s = 1.2 / max(np.linalg.norm(f), np.linalg.norm(contact.plane_coordinates(R.force)[:2]), 1e-300)
        ax.annotate("", s * f, (0, 0), arrowprops=dict(arrowstyle="->", color="C1", lw=1.5))
        ax.text(*(s * f), r"$-F_A$", color="C1", fontsize=8)
        rr = contact.plane_coordinates(R.force)[:2] * s
        ax.annotate("", rr, (0, 0), arrowprops=dict(arrowstyle="->", color="C3", lw=1.5))
        ax.text(*rr, f"$F_R$ ({R.mode.value})", color="C3", fontsize=7)
    ax.set_xlim(-1.8, 1.8)
    ax.set_ylim(-0.8, 1.8)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    ttl = title or (
        rf"$\mu$={contact.mu:g}, $\mu^*$={contact.dip_threshold:.3g}, $k_1$={contact.k1:.3g}, "
        rf"$k_2$={contact.k2:.3g}"
    )
    ax.set_title(ttl, fontsize=8)
    return fig


# ---------------------------------------------------------------------- docs figures
def _shapes() -> dict[str, ContactPatch]:
    return {
        "circle": ContactPatch.circle(0.01, 21),
        "square": ContactPatch.rectangle(0.02, 0.02, 21),
        "gradient line": ContactPatch.linear_gradient(0.02, 0.0, 21),
        "non-convex 1": ContactPatch.nonconvex_a(0.02, 21),
        "non-convex 2": ContactPatch.nonconvex_b(0.02, 21),
        "hertz (k=2fN, fN=2)": ContactPatch.hertz(6e-3, 2.0, 21, k_scales_with_force=True),
    }


def accuracy_tables() -> dict[str, dict]:
    """Measured errors (printed in the docs): ellipsoid fits, load-integration methods and
    the pre-computed limit-surface table of Arslan Waltersson and Karayiannidis §V-D."""
    from mcpkit.models.friction.lugre_reduced import precompute_limit_surface

    out: dict[str, dict] = {"ellipsoid": {}, "methods": {}, "table": {}}
    shapes = {
        "disc": ContactPatch.circle(0.01, 21),
        "rectangle 2:1": ContactPatch.rectangle(0.02, 0.01, 21),
        "line": ContactPatch.line(0.02, 21),
        "gradient line": ContactPatch.linear_gradient(0.02, 0.0, 21),
        "non-convex 1": ContactPatch.nonconvex_a(0.02, 21),
        "non-convex 2": ContactPatch.nonconvex_b(0.02, 21),
    }
    for name, P in shapes.items():
        S = ls.sample_limit_surface(P, 1.0, 1.0, n=3000)
        row = {}
        for diag in (False, True):
            f = ls.fit_ellipsoid(S, diagonal=diag)
            tag = "diag" if diag else "full"
            row[tag] = (f.rms_radial_error, f.max_radial_error, f.rms_load_error, f.max_load_error)
        out["ellipsoid"][name] = row
    # integration methods: square, CoR anywhere in the patch, vs the exact integral
    rng = np.random.default_rng(0)
    cors = rng.uniform(-0.01, 0.01, size=(400, 2))
    T = np.stack([cors[:, 1], -cors[:, 0], np.ones(len(cors))], axis=1)
    ref = ContactPatch.rectangle(0.02, 0.02, 4).friction_load(T, 1.0, 1.0)
    sc = np.array([1, 1, 1 / 0.01])
    for n in (5, 11, 21, 41):
        P = ContactPatch.rectangle(0.02, 0.02, n)
        row = {}
        for m in ("midpoint", "bilinear", "exact"):
            e = np.abs((P.friction_load(T, 1.0, 1.0, method=m) - ref) * sc).max()
            row[m] = float(e)
        out["methods"][n] = row
    # pre-computed table (bilinear read-back of the bilinear-method loads at the eq 35 nodes)
    # vs the exact load, 500 random motion directions, units of mu N (moment / r')
    rng = np.random.default_rng(1)
    q = rng.normal(size=(500, 3))
    q /= np.linalg.norm(q, axis=1)[:, None]
    for name in ("disc", "gradient line", "non-convex 1", "non-convex 2"):
        P = shapes[name]
        row = {}
        for n_ls in (5, 10, 20, 40):
            tab = precompute_limit_surface(P, n_ls)
            sc = np.array([1.0, 1.0, 1.0 / tab.r_pre])
            tw = q * sc
            H = np.array([tab.h(t) for t in tw]) * tab.scale
            e = np.linalg.norm((H - P.friction_load(tw, 1.0, 1.0)) * sc, axis=1)
            row[n_ls] = (float(np.sqrt(np.mean(e**2))), float(e.max()))
        out["table"][name] = row
    return out


def make_docs_figures(outdir: str | Path) -> dict[str, dict]:
    """Write every ``ls_*.png`` and ``cspace_*.png`` docs figure into ``outdir``."""
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    kw = dict(dpi=100)

    fig = Figure(figsize=(9, 5.5), dpi=100)
    for k, (name, P) in enumerate(_shapes().items()):
        plot_patch(P, ax=fig.add_subplot(2, 3, k + 1), title=name)
    fig.tight_layout()
    fig.savefig(out / "ls_patches.png", **kw)

    plot_cor_sweep().savefig(out / "ls_cor_sweep.png", **kw)

    fig = Figure(figsize=(13, 6.5), dpi=100)
    shapes = _shapes()
    for k, (name, P) in enumerate(list(shapes.items())[:5]):
        S = ls.sample_limit_surface(P, 1.0, 1.0, n=1500)
        fit = ls.fit_ellipsoid(S)
        plot_ls_section(
            P,
            fit=fit,
            ax=fig.add_subplot(2, 4, k + 1),
            n=91,
            title=f"{name}: rms radial fit err {100 * fit.rms_radial_error:.1f}%",
        )
        if name == "non-convex 1":  # pads along x: the telling section is [F_y, M]
            plot_ls_section(
                P,
                fit=fit,
                plane="FyM",
                ax=fig.add_subplot(2, 4, 6),
                n=91,
                title="non-convex 1, $[F_y, M]$: nearly the two-point diamond",
            )
    for k, name in ((7, "non-convex 1"), (8, "non-convex 2")):
        ax = fig.add_subplot(2, 4, k, projection="3d")
        plot_limit_surface_3d(ls.sample_limit_surface(shapes[name], 1, 1, 1500), ax=ax, title=f"{name}: 3-D")
    fig.tight_layout()
    fig.savefig(out / "ls_sections.png", **kw)

    plot_two_point_bar().savefig(out / "ls_two_point_bar.png", **kw)

    fig = Figure(figsize=(9, 4), dpi=100)
    plot_moment_function(
        two_point_bar(1.0),
        2.0,
        ax=fig.add_subplot(121, projection="3d"),
        title="moment function, two-point bar (Goyal et al. Fig. 7)",
    )
    plot_moment_function(
        ContactPatch.nonconvex_b(0.02, 21),
        0.02,
        ax=fig.add_subplot(122, projection="3d"),
        n=41,
        title="moment function, non-convex 2",
    )
    fig.tight_layout()
    fig.savefig(out / "ls_moment_function.png", **kw)

    a = 0.05
    rho = np.sqrt(2 / 3) * a
    fig = Figure(figsize=(9, 4), dpi=100)
    F = np.array([25.0, -19.62, 0.0])
    plot_cspace_cone(CSpaceContact([0, 1], [a, a], rho, 0.8), F=F, ax=fig.add_subplot(121))
    plot_cspace_cone(CSpaceContact([0, 1], [a, a], rho, 2.5), ax=fig.add_subplot(122))
    fig.suptitle("square corner on a table, r = (a, a): cone in the plane F.t_r = 0", fontsize=9)
    fig.tight_layout()
    fig.savefig(out / "cspace_cone.png", **kw)
    return accuracy_tables()


def main(argv: list[str] | None = None) -> int:
    """Regenerate the docs figures and print the accuracy tables."""
    args = sys.argv[1:] if argv is None else argv
    outdir = args[0] if args else "docs/figures"
    tabs = make_docs_figures(outdir)
    print("ellipsoid fit errors (rms radial, max radial, rms load, max load) [fraction of mu N]")
    for name, row in tabs["ellipsoid"].items():
        for tag, v in row.items():
            print(f"  {name:14s} {tag:4s} " + " ".join(f"{x:8.4f}" for x in v))
    print("max load error vs exact, square, 400 random CoRs inside [fraction of mu N]")
    for n, row in tabs["methods"].items():
        print(f"  n={n:3d} " + " ".join(f"{m}={e:.2e}" for m, e in row.items()))
    print("pre-computed table vs exact load (rms, max) [fraction of mu N], by N_ls")
    for name, row in tabs["table"].items():
        print(f"  {name:14s} " + " ".join(f"{k}: {v[0]:.2e}/{v[1]:.2e}" for k, v in row.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
