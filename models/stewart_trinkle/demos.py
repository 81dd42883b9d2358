r"""``mcpkit demo plate``: the Vose rotating plate of Berard, Nguyen, Trinkle and Anderson
§3.1 (eq 16), in cgs units as the paper states it.

α = 180 rad/s², T = 0.03 s, d = 5 cm, m = 1 g, μ = 0.3, g = 980.665 cm/s², h = 1e-4 s,
particle starting at r = 4 cm at rest relative to the plate; NCP (eq 9) step.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from mcpkit.formats.figures import figure_format, save_figure
from mcpkit.models.stewart_trinkle.bodies import UNIT_NAMES
from mcpkit.models.stewart_trinkle.plots import plot_vose_contact, plot_vose_velocity
from mcpkit.models.stewart_trinkle.studies import UNITS, run_vose, vose_fit
from mcpkit.solving.result import CompositeResult


def stick_runs(slip: np.ndarray, threshold: float = 1e-3) -> int:
    """Longest run of consecutive steps with slip speed below ``threshold`` (cm/s)."""
    best = cur = 0
    for s in slip < threshold:
        cur = cur + 1 if s else 0
        best = max(best, cur)
    return best


def demo_plate(out_dir: Path, progress: bool = True, t_end: float = 0.9, fmt: str = "png") -> CompositeResult:
    """Run the Vose plate, write ``st_vose_contact.<fmt>`` and ``st_vose_velocity.<fmt>`` to
    ``out_dir`` (``png``, ``pdf`` or ``svg``, :func:`mcpkit.formats.figures.save_figure`) and
    return a :class:`~mcpkit.solving.result.CompositeResult` whose one part is the run
    (``solved`` when every step was solved).

    Its ``details`` hold the per-period average velocities, the theoretical
    :math:`v_{ss} = br + cr^3` at the per-period mean positions (our own :math:`b, c` from the
    sliding-ODE reference of :mod:`.studies`, since the paper does not print them), the relative
    difference over the last period, the minimum normal force, the largest |distance| and the
    longest run of steps with slip speed < 1e-3 cm/s (1 = only instantaneous reversals).
    """
    t0 = time.perf_counter()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    fmt = figure_format(fmt).value
    run = run_vose(t_end=t_end, progress=progress)
    fit = vose_fit(np.linspace(0.5, 5.0, 6))
    vth = fit["b"] * run.period_r + fit["c"] * run.period_r**3
    f1 = save_figure(plot_vose_contact(run), out_dir, "st_vose_contact", fmt)
    f2 = save_figure(plot_vose_velocity(run, fit), out_dir, "st_vose_velocity", fmt)
    summ = run.sim.summary()
    details = {
        "problem": "Vose rotating plate (Berard, Nguyen, Trinkle and Anderson, section 3.1)",
        "units": UNIT_NAMES[UNITS],
        "alpha": run.plate.params.alpha,
        "period": run.plate.params.period,
        "depth": run.plate.params.depth,
        "h": run.sim.t[1] - run.sim.t[0],
        "t_end": float(run.sim.t[-1]),
        "steps": summ["steps"],
        "solved_steps": summ["solved_steps"],
        "max_natural_residual": summ["max_natural_residual"],
        "mean_step_time_s": summ["mean_step_time_s"],
        "method": summ["method"],
        "min_normal_force_dyn": float(run.normal_force.min()),
        "max_abs_distance_cm": float(np.abs(run.gap).max()),
        "longest_stick_run_steps": stick_runs(run.slip),
        "period_mean_r": run.period_r.tolist(),
        "period_avg_velocity": run.period_v.tolist(),
        "theory_v_ss": vth.tolist(),
        "theory_b": fit["b"],
        "theory_c": fit["c"],
        # None when the run is shorter than one plate period (no complete period to compare)
        "last_period_relative_difference": (
            float(abs(run.period_v[-1] - vth[-1]) / abs(vth[-1])) if run.period_v.size else None
        ),
        "figures": [f1, f2],
    }
    return CompositeResult(kind="demo:plate", parts=[run], what="run", wall_time_s=time.perf_counter() - t0,
                           details=details)  # fmt: skip


def study_figures(out_dir: Path, t_end: float = 0.3, fmt: str = "png") -> dict[str, Any]:
    """Run the §3.2–3.4 studies at full size (minutes) and write ``st_step_size.<fmt>``,
    ``st_directions.<fmt>`` and ``st_timing.<fmt>``; returns the numbers (JSON-serialisable)."""
    from mcpkit.models.stewart_trinkle.plots import plot_directions, plot_step_size, plot_timing
    from mcpkit.models.stewart_trinkle.studies import friction_directions_study, step_size_study, timing_study

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    fmt = figure_format(fmt).value
    ss = step_size_study(t_end=t_end)
    save_figure(plot_step_size(ss), out_dir, "st_step_size", fmt)
    fd = friction_directions_study(t_end=t_end)
    save_figure(plot_directions(fd), out_dir, "st_directions", fmt)
    tm = timing_study()
    save_figure(plot_timing(tm), out_dir, "st_timing", fmt)
    return {
        "units": UNIT_NAMES[UNITS],
        "step_size": {
            "h": ss["h"].tolist(),
            "error": ss["error"].tolist(),
            "slopes": ss["slopes"].tolist(),
            "fit_slope": ss["fit_slope"],
            "solved": ss["solved"],
        },
        "directions": {
            "n_d": fd["n_d"].tolist(),
            "error": fd["error"].tolist(),
            "solved": fd["solved"],
        },
        "timing": {
            "n_d": tm["n_d"].tolist(),
            "lcp_ms": (1e3 * tm["lcp_step_time_s"]).tolist(),
            "ncp_ms": 1e3 * tm["ncp_step_time_s"],
            "lcp_size": tm["lcp_size"].tolist(),
            "ncp_size": tm["ncp_size"],
        },
    }
