r"""``mcpkit demo pile``: spheres dropped into an open box, every step solved to a Siconos error of 1e-8.

:func:`demo_pile` builds :func:`~.step.make_pile` (``bodies`` spheres, radii uniform in
[0.04, 0.06] m, seeded), runs :func:`~.step.simulate_pile` for ``steps`` steps of
:math:`h = 0.01` s (:math:`\mu = 0.3`), and reports per step the contacts, the Siconos error of
the returned reactions, the deepest overlap (penetration), the total energy and the Newton steps.
It writes ``pile_snapshots.png`` (four frames of the spheres in the box, 3-D), ``pile_steps.png``
(per step: contacts, penetration, kinetic/potential/total energy, Siconos error) and, with
``dump_fclib``, that step as an FCLIB HDF5 file with its solution
(:func:`mcpkit.formats.fclib_hdf5.write_fclib_local`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpkit.formats.fclib_hdf5 import write_fclib_local
from mcpkit.formats.figures import figure_format, save_figure
from mcpkit.models.pile.step import (
    Pile,
    PileParams,
    PileRun,
    PileStepRecord,
    make_pile,
    simulate_pile,
    sphere_energy,
)
from mcpkit.solving.result import CompositeResult

#: Columns of the per-step table: header, width, format.
_COLUMNS = (
    ("step", 5, "d"), ("contacts", 8, "d"), ("solved", 6, ""), ("siconos_err", 11, ".1e"),
    ("penetr_m", 9, ".1e"), ("energy_J", 9, ".4f"), ("newton", 6, "d"), ("solve_s", 8, ".3f"),
)  # fmt: skip


def _row(rec: PileStepRecord, penetration: float, energy: float) -> str:
    vals = (rec.step, rec.contacts, "yes" if rec.solved else "NO", rec.siconos_error, penetration,
            energy, rec.iterations, rec.solve_s)  # fmt: skip
    cells = []
    for (_, w, fmt), v in zip(_COLUMNS, vals, strict=True):
        cells.append(f"{'-':>{w}}" if v is None else f"{v:>{w}{fmt}}")
    return "  ".join(cells)


def _physics(pile: Pile, rec: PileStepRecord) -> tuple[float, float]:
    """Penetration at the start of the step just run [m] and the pile's total energy after it [J]."""
    kinetic, potential = sphere_energy(pile.masses, pile.radii, pile.x, pile.v, pile.params.gravity)
    return (max(0.0, -rec.min_gap) if math.isfinite(rec.min_gap) else 0.0), float(kinetic + potential)


def table_header() -> str:
    """The header line of the per-step table."""
    return "  ".join(f"{name:>{w}}" for name, w, _ in _COLUMNS)


def summarize(run: PileRun) -> dict[str, Any]:
    """The JSON-ready figures of a run (module docstring), in SI units (m, kg, s, J); per step the
    penetration at its start and the total energy after it."""
    recs = run.records
    errs = [r.siconos_error for r in recs]
    energy = run.energy()
    pen = run.penetration()
    return {
        "units": "SI (m, kg, s)",
        "bodies": int(run.radii.size),
        "steps": len(recs),
        "steps_solved": sum(r.solved for r in recs),
        "max_contacts": max((r.contacts for r in recs), default=0),
        "max_siconos_error": max(errs, default=0.0),
        "max_penetration_m": float(pen.max()) if pen.size else 0.0,
        "energy_start_J": float(energy["total"][0]),
        "energy_end_J": float(energy["total"][-1]),
        "kinetic_energy_end_J": float(energy["kinetic"][-1]),
        "total_newton_steps": sum(r.iterations for r in recs),
        "fallback_steps": sum(r.runs > 1 for r in recs),
        "wall_s": run.wall_s,
        "tol": run.params.tol,
        "h": run.params.h,
        "mu": run.params.mu,
        "engine": run.params.engine.value,
        "per_step": [
            {
                "step": r.step,
                "t": r.t,
                "contacts": r.contacts,
                "solved": r.solved,
                "siconos_error": r.siconos_error,
                "penetration_m": float(p),
                "energy_J": float(e),
                "iterations": r.iterations,
                "runs": r.runs,
                "solve_s": r.solve_s,
            }  # fmt: skip
            for r, p, e in zip(recs, pen, energy["total"][1:], strict=True)
        ],
    }


@dataclass(repr=False)
class PileDemoResult(CompositeResult):
    """:class:`~mcpkit.solving.result.CompositeResult` of the steps; :meth:`table` for the text output."""

    def table(self) -> str:
        """An aligned summary (the per-step rows are printed while the run goes)."""
        d = self.details
        rows = [
            ("bodies", d["bodies"]),
            ("steps solved", f"{d['steps_solved']}/{d['steps']}"),
            ("max contacts", d["max_contacts"]),
            ("max Siconos error", f"{d['max_siconos_error']:.2e} (tol {d['tol']:g})"),
            ("max penetration", f"{d['max_penetration_m']:.2e} m"),
            (
                "energy",
                f"{d['energy_start_J']:.4f} J -> {d['energy_end_J']:.4f} J "
                f"(kinetic at the end {d['kinetic_energy_end_J']:.2e} J)",
            ),  # fmt: skip
            ("steps needing a fallback", d["fallback_steps"]),
            ("wall time", f"{d['wall_s']:.1f} s"),
            ("figures", ", ".join(d["figures"]) or "-"),
            ("FCLIB dump", d["fclib_file"] or d.get("fclib_note", "-")),
        ]
        w = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{w}}  {v}" for k, v in rows)


def demo_pile(
    out_dir: Path,
    progress: bool = True,
    bodies: int = 50,
    steps: int = 50,
    seed: int = 0,
    dump_fclib: int | None = None,
    figures: bool = True,
    engine: str = "direct",
    fmt: str = "png",
) -> PileDemoResult:
    """Run the pile (module docstring); the result's parts are the steps (``solved``: every step).
    ``engine``: :class:`~.step.StepEngine` (what each step tries first). Figures:
    ``pile_snapshots.<fmt>``, ``pile_steps.<fmt>`` (:func:`mcpkit.formats.figures.save_figure`)."""
    t0 = time.perf_counter()
    out_dir = Path(out_dir)
    figure_format(fmt)  # a bad format is refused before anything runs
    pile = make_pile(bodies, seed=seed, params=PileParams(engine=engine))
    if progress:
        print(f"{bodies} spheres in a {pile.box.lx:.2f} x {pile.box.ly:.2f} m open box, {steps} steps of "
              f"h = {pile.params.h} s, mu = {pile.params.mu}")  # fmt: skip
        print(table_header(), flush=True)
    show = (lambda r: print(_row(r, *_physics(pile, r)), flush=True)) if progress else None
    run = simulate_pile(pile, steps, measure_lu=False, dump_step=dump_fclib, on_step=show)
    details = summarize(run)
    files: list[str] = []
    if figures and steps:
        from mcpkit.models.pile.plots import plot_snapshots, plot_steps

        files = [
            save_figure(plot_snapshots(run), out_dir, "pile_snapshots", fmt),
            save_figure(plot_steps(run), out_dir, "pile_steps", fmt),
        ]
    details["figures"] = files
    details["fclib_file"] = None
    if run.dumped is not None and run.dumped.problem.nc == 0:  # an FCLIB file needs a contact
        details["fclib_note"] = f"step {run.dumped.step} has no contacts: no FCLIB file written"
        if progress:
            print(details["fclib_note"], flush=True)
    elif run.dumped is not None:
        d = run.dumped
        path = out_dir / f"pile_{bodies}_step{d.step}.hdf5"
        write_fclib_local(
            path, d.problem.W, d.problem.q, d.problem.mu, r=d.r, u=d.u,
            title=f"mcpkit-pile-{bodies}-seed{seed}-step{d.step}",
            description=f"mcpkit demo pile: {bodies} spheres, seed {seed}, step {d.step} of h = "
            f"{run.params.h} s, mu = {run.params.mu}, {d.problem.nc} contacts; solution by "
            f"solve_alart_curnier",
        )  # fmt: skip
        details["fclib_file"] = str(path)
    return PileDemoResult(kind="demo:pile", parts=list(run.records), what="step",
                          wall_time_s=time.perf_counter() - t0, details=details)  # fmt: skip
