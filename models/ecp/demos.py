r"""Demos reproducing Xie and Chakraborty §6: free sliding (§6.1) and the pushed slider (§6.2).

Each demo runs the quadratic model (eqs 29-32) and the complementarity model side by side,
writes its figures into ``out_dir`` (``fmt``: ``png`` at 200 dpi, ``pdf`` or ``svg``; through
:func:`mcpkit.formats.figures.save_figure`) and returns a :class:`~mcpkit.solving.result.CompositeResult`
whose parts are its simulations (``solved`` when every step of every run was solved) and whose
``details`` hold the numbers and figures (``mcpkit demo sliding``, ``mcpkit demo pushed-slider``).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from mcpkit.formats.figures import figure_format, save_figure
from mcpkit.formats.io import output_dir
from mcpkit.models.ecp.closed_form import pure_translation_trajectory
from mcpkit.models.ecp.params import paper_push, paper_slider
from mcpkit.models.ecp.plots import plot_angular_velocity, plot_snapshots, plot_velocities
from mcpkit.models.ecp.simulation import ECPRun, make_model, run_ecp
from mcpkit.solving.result import CompositeResult

__all__ = ["demo_pushed_slider", "demo_sliding"]


_out = output_dir


def _pair_summary(runs: dict[str, ECPRun]) -> dict[str, Any]:
    q, c = runs["quadratic"], runs["complementarity"]
    both = np.isfinite(q.states).all(axis=1) & np.isfinite(c.states).all(axis=1)
    sliding = np.concatenate([[True], (q.sigma > 0) & (c.sigma > 0)])
    upto = int(np.argmin(sliding)) if not sliding.all() else sliding.size
    rows = both.copy()
    rows[upto + 1 :] = False
    diff = float(np.abs(q.states[rows] - c.states[rows]).max()) if rows.any() else float("nan")
    out: dict[str, Any] = {k: r.summary() for k, r in runs.items()}
    out["steps"] = int(c.sim.step_solved.size)
    out["solved_steps"] = {k: int(r.sim.step_solved.sum()) for k, r in runs.items()}
    out["max_residual"] = max(float(np.nanmax(r.sim.natural_residual)) for r in runs.values())
    out["max_state_difference_while_sliding"] = diff
    out["ecp_violations"] = {k: len(r.violations) for k, r in runs.items()}
    return out


def _result(kind: str, runs: list[ECPRun], details: dict[str, Any], t0: float) -> CompositeResult:
    return CompositeResult(kind=kind, parts=list(runs), what="run", wall_time_s=time.perf_counter() - t0,
                           details=details)  # fmt: skip


def demo_sliding(out_dir: Path, progress: bool = True, fmt: str = "png") -> CompositeResult:
    r"""Xie and Chakraborty §6.1: a square-patch slider sliding freely, and a pure-translation check.

    :math:`h = 0.01` s for 0.45 s, :math:`\mu = 0.31`, :math:`e_t = e_o = 1`, :math:`e_r = 0.01`
    m, :math:`m = 0.5` kg, :math:`q_z = 0.08` m, :math:`v_0 = (0.7, 0.9)` m/s,
    :math:`w_0 = 10` rad/s. Also runs the pure translation (:math:`w_0 = 0`) for 0.6 s and
    compares it with eqs 46-49 up to the stop, and the complementarity model's hold after it.

    Figures: ``ecp_sliding_velocities.<fmt>``, ``ecp_sliding_snapshots.<fmt>``,
    ``ecp_translation_stop.<fmt>``. Parts: the four runs (both models, free sliding and pure
    translation).
    """
    t0 = time.perf_counter()
    d = _out(out_dir)
    fmt = figure_format(fmt).value
    P = paper_slider()
    x0 = np.array([0.0, 0.0, 0.0, 0.7, 0.9, 10.0])
    runs = {
        k: run_ecp(make_model(k, P), x0, 0.45, progress=progress) for k in ("quadratic", "complementarity")
    }
    summary = _pair_summary(runs)
    figs = {
        "velocities": save_figure(plot_velocities(list(runs.values())), d, "ecp_sliding_velocities", fmt),
        "snapshots": save_figure(plot_snapshots(runs["quadratic"], every=3), d, "ecp_sliding_snapshots", fmt),
    }
    # pure translation until the stop, and after it
    n = 60
    xt = np.array([0.0, 0.0, 0.0, 0.7, 0.9, 0.0])
    tr = pure_translation_trajectory(P, xt[3:5], n)
    trans = {
        k: run_ecp(make_model(k, P), xt, n * P.h, progress=progress) for k in ("quadratic", "complementarity")
    }
    u = int(tr.stop_step) if tr.stop_step is not None else n
    err = {k: float(np.abs(r.states[: u + 1, 3:5] - tr.v[: u + 1]).max()) for k, r in trans.items()}
    hold = float(np.abs(trans["complementarity"].states[u + 1 :, 3:6]).max()) if u < n else 0.0
    figs["translation_stop"] = save_figure(_translation_figure(trans, tr), d, "ecp_translation_stop", fmt)
    c = runs["complementarity"]
    summary.update(
        {
            "experiment": "Xie and Chakraborty §6.1 free sliding",
            "final_speed_m_s": float(np.hypot(*c.states[-1, 3:5])),
            "final_w_z_rad_s": float(c.states[-1, 5]),
            "final_position_m": [float(v) for v in c.states[-1, :3]],
            "max_ecp_offset_m": float(np.linalg.norm(c.ecp_offset_body[1:], axis=1).max()),
            "ecp_offset_bound_e_mu_qz_m": P.e_t * P.mu * P.q_z,
            "translation_stop_step": u,
            "translation_max_error_vs_closed_form": err,
            "translation_max_velocity_after_stop_complementarity": hold,
            "translation_quadratic_overshoot_steps": int(trans["quadratic"].overshoot_steps.size),
            "figures": figs,
        }
    )
    return _result("demo:sliding", [*runs.values(), *trans.values()], summary, t0)


def _translation_figure(trans: dict[str, ECPRun], tr: Any) -> Any:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 3.6), dpi=100, layout="constrained")
    ax = fig.subplots()
    ax.plot(
        tr.t,
        np.linalg.norm(tr.v, axis=1),
        "k-",
        lw=2.5,
        alpha=0.4,
        label="closed form (46-49) + stop",
    )
    q, c = trans["quadratic"], trans["complementarity"]
    signed = np.sign(q.states[:, 3]) * np.linalg.norm(q.states[:, 3:5], axis=1)
    ax.plot(q.t, signed, "C3--",
            label=r"quadratic (29-32): signed speed, overshoots")  # fmt: skip
    ax.plot(
        c.t,
        np.linalg.norm(c.states[:, 3:5], axis=1),
        "C0o",
        ms=3,
        mfc="none",
        label="complementarity",
    )
    ax.axhline(0, color="k", lw=0.5)
    ax.set_xlabel("t [s]")
    ax.set_ylabel("speed of the CM along $v_0$ [m/s]")
    ax.set_title("pure translation, $w_0 = 0$", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return fig


def demo_pushed_slider(out_dir: Path, progress: bool = True, fmt: str = "png") -> CompositeResult:
    r"""Xie and Chakraborty §6.2: the slider pushed by :math:`F = 2.2 + 2\cos(2\pi t/0.1)` N.

    The force is perpendicular to the left edge, 2.5 mm below its middle, and turns with the
    slider; :math:`v_0 = (0.2, 0.3)` m/s, :math:`w_0 = 0`, 3 s with :math:`h = 0.01` s.

    Figures: ``ecp_pushed_velocities.<fmt>``, ``ecp_pushed_force_w.<fmt>``,
    ``ecp_pushed_snapshots.<fmt>`` (0-0.6 s, as the paper's Fig 3d). Parts: both models' runs.
    """
    t0 = time.perf_counter()
    d = _out(out_dir)
    fmt = figure_format(fmt).value
    P = paper_slider()
    push = paper_push()
    x0 = np.array([0.0, 0.0, 0.0, 0.2, 0.3, 0.0])
    runs = {
        k: run_ecp(make_model(k, P, push), x0, 3.0, progress=progress)
        for k in ("quadratic", "complementarity")
    }
    summary = _pair_summary(runs)
    c = runs["complementarity"]
    figs = {
        "velocities": save_figure(plot_velocities(list(runs.values())), d, "ecp_pushed_velocities", fmt),
        "force_w": save_figure(plot_angular_velocity(list(runs.values())), d, "ecp_pushed_force_w", fmt),
        "snapshots": save_figure(
            plot_snapshots(c, every=2, t_max=0.6, push_point=push.point), d, "ecp_pushed_snapshots", fmt
        ),
    }
    w = c.states[:, 5]
    summary.update(
        {
            "experiment": "Xie and Chakraborty §6.2 pushed slider",
            "mean_w_z_last_second_rad_s": float(np.mean(w[c.t >= 2.0])),
            "max_speed_m_s": float(np.max(np.hypot(c.states[:, 3], c.states[:, 4]))),
            "min_sigma_m_s": float(np.min(c.sigma)),
            "max_ecp_offset_m": float(np.linalg.norm(c.ecp_offset_body[1:], axis=1).max()),
            "final_position_m": [float(v) for v in c.states[-1, :3]],
            "figures": figs,
        }
    )
    return _result("demo:pushed-slider", list(runs.values()), summary, t0)
