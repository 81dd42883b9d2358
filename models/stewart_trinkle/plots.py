r"""Figures in the style of Berard et al. (Figs 4–5, 10–16). Each function returns the Figure."""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator

from mcpkit.formats.figures import plot_unless_roundoff
from mcpkit.models.stewart_trinkle.studies import VoseRun


def plot_vose_contact(run: VoseRun, periods: float = 2.0) -> Figure:
    r"""Fig. 4 analogue: (a) particle–plate distance, (b) slip speed :math:`\sigma` over
    ``periods`` plate periods, (c) normal force :math:`\lambda_n`."""
    fig = Figure(figsize=(9, 6.5), dpi=100)
    axs = fig.subplots(3, 1, sharex=False)
    t = run.sim.t
    plot_unless_roundoff(axs[0], t, run.gap, "distance", lw=0.8)
    axs[0].set_ylabel("distance [cm]")
    axs[0].set_title("(a) particle-plate distance (contact maintained)")
    n = int(round(periods * run.plate.params.period / run.sim.t[1]))
    axs[1].plot(t[1 : n + 1], run.slip[:n], lw=1.0)
    axs[1].set_ylabel(r"slip speed $\sigma$ [cm/s]")
    axs[1].set_title("(b) slip speed over two periods (zero only at instants of slip reversal)")
    axs[2].plot(t[1:], run.normal_force, lw=0.6)
    axs[2].set_ylabel(r"$\lambda_n$ [dyn]")
    axs[2].set_xlabel("t [s]")
    axs[2].set_title("(c) normal force (> 0 throughout)")
    fig.tight_layout()
    return fig


def plot_vose_velocity(run: VoseRun, fit: dict[str, Any]) -> Figure:
    r"""Fig. 5 analogue: per-period average velocity against the asymptotic velocity
    :math:`v_{ss}(\bar r) = b\bar r + c\bar r^3` (eq 17) at the per-period mean position."""
    fig = Figure(figsize=(9, 4.2), dpi=100)
    ax1, ax2 = fig.subplots(1, 2)
    vth = fit["b"] * run.period_r + fit["c"] * run.period_r**3
    ax1.plot(run.period_t, run.period_v, "o-", ms=3, label="simulated (per-period average)")
    ax1.plot(run.period_t, vth, "k--", label=r"theory $v_{ss}=b\bar r+c\bar r^3$")
    ax1.set_xlabel("t [s]")
    ax1.set_ylabel("velocity [cm/s]")
    ax1.legend(fontsize=8)
    ax1.set_title("asymptotic velocity (Vose plate, r0 = 4 cm)")
    ax2.plot(run.sim.t, run.r, lw=1)
    ax2.set_xlabel("t [s]")
    ax2.set_ylabel("plate coordinate r [cm]")
    ax2.set_title("particle position on the plate")
    fig.tight_layout()
    return fig


def _trajectories(ax: Any, ref: np.ndarray, ref_label: str, trajs: dict[Any, np.ndarray], label: str,
                  title: str) -> None:  # fmt: skip
    """Reference trajectory (black) and the others (``label.format(key)``) in the plane."""
    ax.plot(ref[:, 0], ref[:, 1], "k", lw=1.5, label=ref_label)
    for key, tr in trajs.items():
        ax.plot(tr[:, 0], tr[:, 1], lw=0.8, label=label.format(key))
    ax.set_xlabel("x [cm]")
    ax.set_ylabel("y [cm]")
    ax.legend(fontsize=7)
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_title(title)


def plot_step_size(study: dict[str, Any]) -> Figure:
    """Figs 10–11 analogue: trajectories and log–log error against step size."""
    fig = Figure(figsize=(9, 4.2), dpi=100)
    ax1, ax2 = fig.subplots(1, 2)
    ref = study["reference"]
    _trajectories(ax1, ref, f"h = {study['h_ref']:g} (reference)", study["trajectories"], "h = {:g}",
                  "particle trajectory (scaled Circle plate)")  # fmt: skip
    ax1.plot(ref[0, 0], ref[0, 1], "go")
    ax2.loglog(study["h"], study["error"], "o-")
    for k, s in enumerate(study["slopes"]):
        hm = np.sqrt(study["h"][k] * study["h"][k + 1])
        em = np.sqrt(study["error"][k] * study["error"][k + 1])
        ax2.annotate(f"slope {s:.2f}", (hm, em), fontsize=8)
    ax2.set_xlabel("step size h [s]")
    ax2.set_ylabel("max trajectory error [cm]")
    ax2.set_title("error against step size (NCP)")
    fig.tight_layout()
    return fig


def plot_directions(study: dict[str, Any]) -> Figure:
    """Figs 12–15 analogue: LCP trajectories and error against the number of directions."""
    fig = Figure(figsize=(9, 4.2), dpi=100)
    ax1, ax2 = fig.subplots(1, 2)
    _trajectories(
        ax1, study["ncp"], "NCP (quadratic cone)", study["trajectories"], "LCP n_d = {}", "trajectories"
    )
    ax2.loglog(study["n_d"], study["error"], "o-")
    ax2.set_xscale("log", base=2)
    ax2.set_xticks(study["n_d"], [str(int(n)) for n in study["n_d"]])
    ax2.xaxis.set_minor_locator(NullLocator())
    ax2.set_xlabel("friction directions n_d")
    ax2.set_ylabel("max distance to NCP trajectory [cm]")
    ax2.set_title("LCP error against directions")
    fig.tight_layout()
    return fig


def plot_timing(study: dict[str, Any]) -> Figure:
    """Fig. 16 analogue: time per step of the LCP against directions, with the NCP level."""
    fig = Figure(figsize=(6, 4), dpi=100)
    ax = fig.subplots()
    ax.plot(study["n_d"], 1e3 * study["lcp_step_time_s"], "o-", label="LCP (eq 15)")
    ax.axhline(1e3 * study["ncp_step_time_s"], color="k", ls="--", label="NCP (eq 9)")
    ax.set_xscale("log", base=2)
    ax.set_xticks(study["n_d"], [str(int(n)) for n in study["n_d"]])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("friction directions n_d")
    ax.set_ylabel("median time per step [ms]")
    ax.set_title("warm parametric re-solve, IPOPT penalty route")
    ax.legend()
    fig.tight_layout()
    return fig
