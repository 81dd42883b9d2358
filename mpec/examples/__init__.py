r"""Horizon-MPCC examples (seed 004 §4-5 motivation): a block moved to a target and planar pushing.

:func:`demo_block` and :func:`demo_pushing` solve the examples, write figures and return a
:class:`~mcpkit.solving.result.CompositeResult` (an :class:`~mcpkit.solving.result.Outcome`) whose one part is
the :class:`~mcpkit.mpec.resimulation.HorizonResult`: ``solved`` is True only when the MPCC met its
tolerance AND the re-simulation of the planned controls reproduced the plan. The figures and
numbers are in ``details`` (the summary after :data:`~mcpkit.solving.result.RESULT_KEYS`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from mcpkit.formats.figures import figure_format, save_figure
from mcpkit.formats.io import output_dir
from mcpkit.solving.result import RESULT_KEYS, CompositeResult

__all__ = ["demo_block", "demo_pushing"]


_out = output_dir


def _pattern(sliding: np.ndarray) -> str:
    """Run-length string of the stick/slide pattern, e.g. ``"slide x25, stick x5"``."""
    out, k = [], 0
    while k < sliding.size:
        j = k
        while j < sliding.size and sliding[j] == sliding[k]:
            j += 1
        out.append(f"{'slide' if sliding[k] else 'stick'} x{j - k}")
        k = j
    return ", ".join(out)


def details_of(summary: dict[str, Any]) -> dict[str, Any]:
    """A part's summary without :data:`~mcpkit.solving.result.RESULT_KEYS` (the demo's head replaces them)."""
    return {k: v for k, v in summary.items() if k not in RESULT_KEYS}


def demo_block(out_dir: Path, progress: bool = True, n_steps: int = 100, fmt: str = "png") -> CompositeResult:
    """Block moved 5 m in 1 s and stopped (N = 100 steps, 101 grid points, h = 0.01 s); writes
    ``mpec_block.<fmt>`` (``png``, ``pdf`` or ``svg``, :func:`mcpkit.formats.figures.save_figure`)."""
    from mcpkit.mpec.examples.block import (
        BlockTask,
        friction_force,
        sliding_qp_plan,
        solve_block,
        stick_slide,
    )
    from mcpkit.mpec.examples.plots import plot_block

    t0 = time.perf_counter()
    d = _out(out_dir)
    fmt = figure_format(fmt).value
    task = BlockTask(n_steps=n_steps)
    if progress:
        print(f"block: solving the {n_steps}-step horizon MPCC ...", flush=True)
    res, hz = solve_block(task)
    slide = stick_slide(res)
    fr = friction_force(task, res)
    u_qp, cost_qp = sliding_qp_plan(task)
    h = task.h
    active = np.abs(np.abs(fr) - task.mu * task.mass * task.g) < 1e-4
    figure = save_figure(plot_block(res, slide, fr, u_qp), d, "mpec_block", fmt)
    s = details_of(res.summary())
    s.update({
        "n_steps": n_steps,
        "n_x": int(hz.mpcc.x.numel()), "n_g": int(hz.mpcc.g.numel()), "n_pairs": int(hz.mpcc.n_pairs),
        "closed_form_cost": cost_qp,
        "max_abs_u_minus_closed_form": float(np.max(np.abs(res.controls[:, 0] - u_qp))),
        "final_state": [float(v) for v in res.states[-1]],
        "impulse_balance": float(np.sum(res.controls[:, 0]) * h + np.sum(fr) * h),
        "friction_at_mu_m_g_steps": int(active.sum()),
        "stick_slide": _pattern(slide),
        "figure": figure,
    })  # fmt: skip
    if progress:
        print(res.message, flush=True)
    return CompositeResult(kind="demo:block", parts=[res], what="run", wall_time_s=time.perf_counter() - t0,
                           details=s)  # fmt: skip


def demo_pushing(out_dir: Path, progress: bool = True, fmt: str = "png") -> CompositeResult:
    """ECP slider pushed from rest at (0, 0, 0) to rest at (4 cm, 1 cm, 0.15 rad) in 0.3 s; writes
    ``mpec_pushing.<fmt>`` (``png``, ``pdf`` or ``svg``)."""
    from mcpkit.models.ecp.complementarity import check_ecp_in_patch
    from mcpkit.models.ecp.quadratic import ecp_offset
    from mcpkit.mpec.examples.plots import plot_pushing
    from mcpkit.mpec.examples.pushing import PushTask, contact_modes, solve_pushing

    t0 = time.perf_counter()
    d = _out(out_dir)
    fmt = figure_format(fmt).value
    task = PushTask()
    if progress:
        print(f"pushing: solving the {task.n_steps}-step horizon MPCC ...", flush=True)
    res, hz = solve_pushing(task)
    slide = contact_modes(res)
    P = task.params
    off = ecp_offset(P, res.block("p_t")[:, 0], res.block("p_o")[:, 0], res.block("p_n")[:, 0])
    viol = check_ecp_in_patch(P, res.states[1:, 2], off, res.t[1:], tol=1e-9)
    figure = save_figure(plot_pushing(res, slide, P.patch, task.edge_x), d, "mpec_pushing", fmt)
    s = details_of(res.summary())
    s.update({
        "n_steps": task.n_steps,
        "n_x": int(hz.mpcc.x.numel()), "n_g": int(hz.mpcc.g.numel()), "n_pairs": int(hz.mpcc.n_pairs),
        "theta_c_m": float(res.design[0]),
        "goal": list(task.goal),
        "final_state": [float(v) for v in res.states[-1]],
        "stick_slide": _pattern(slide),
        "ecp_patch_violations": len(viol),
        "max_pusher_force_N": float(np.max(np.hypot(res.controls[:, 0], res.controls[:, 1]))),
        "figure": figure,
    })  # fmt: skip
    if progress:
        print(res.message, flush=True)
    return CompositeResult(kind="demo:pushing", parts=[res], what="run", wall_time_s=time.perf_counter() - t0,
                           details=s)  # fmt: skip
