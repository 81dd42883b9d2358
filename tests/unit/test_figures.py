"""Demo figures (mcpkit.formats.figures): one save helper, png/pdf/svg, no panels of round-off noise."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure

from mcpkit.command import cli
from mcpkit.errors import MCPInputError
from mcpkit.formats.figures import DEFAULT_DPI, FigureFormat, figure_format, plot_unless_roundoff, save_figure


def _figure() -> Figure:
    fig = Figure(figsize=(3.0, 2.0))
    fig.subplots().plot([0, 1], [0, 1])
    return fig


def test_png_is_written_at_200_dpi(tmp_path: Path) -> None:
    from PIL import Image

    path = save_figure(_figure(), tmp_path, "a")
    assert path == str(tmp_path / "a.png") and DEFAULT_DPI == 200
    with Image.open(path) as im:
        assert im.size == (3 * DEFAULT_DPI, 2 * DEFAULT_DPI)


@pytest.mark.parametrize(
    ("fmt", "magic"), [("pdf", b"%PDF"), ("svg", b"<?xml"), (FigureFormat.SVG, b"<?xml")]
)
def test_vector_formats(tmp_path: Path, fmt: FigureFormat | str, magic: bytes) -> None:
    path = Path(save_figure(_figure(), tmp_path, "a", fmt))
    assert path.suffix == "." + figure_format(fmt).value and path.read_bytes().startswith(magic)


def test_pdf_fonts_are_truetype(tmp_path: Path) -> None:
    data = Path(save_figure(_figure(), tmp_path, "a", "pdf")).read_bytes()
    assert b"/Subtype /Type3" not in data  # matplotlib's default; TrueType is /TrueType or /CIDFontType2
    assert b"/Subtype /TrueType" in data or b"/Subtype /CIDFontType2" in data


def test_unknown_format_is_a_typed_error_naming_the_choices() -> None:
    with pytest.raises(MCPInputError, match="unknown figure format 'jpg'; choose one of png, pdf, svg"):
        figure_format("jpg")


def test_cli_rejects_an_unknown_format_before_running(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["demo", "quickstart", "--format", "jpg"])
    assert exc.value.code == 2 and "invalid choice: 'jpg'" in capsys.readouterr().err


def test_every_demo_takes_the_figure_format() -> None:
    """Each ``mcpkit demo`` name resolves to a function with a ``fmt`` parameter defaulting to png."""
    for name, run in cli.DEMOS.items():
        module, func = run.target  # type: ignore[attr-defined]
        params = inspect.signature(getattr(importlib.import_module(module), func)).parameters
        assert "fmt" in params and params["fmt"].default == "png", name


def test_roundoff_is_said_not_plotted() -> None:
    fig = Figure()
    ax = fig.subplots()
    t = np.linspace(0.0, 1.0, 50)
    assert not plot_unless_roundoff(ax, t, 1e-14 * np.sin(40 * t), "distance")
    assert not ax.lines and "distance: |value| < 1e-12 throughout" in ax.texts[0].get_text()
    assert "largest 1.0e-14" in ax.texts[0].get_text()
    ax2 = fig.subplots()
    assert plot_unless_roundoff(ax2, t, 1e-3 * np.sin(40 * t), "distance")
    assert len(ax2.lines) == 1 and not ax2.texts
    ax3 = fig.subplots()  # a NaN is not round-off: plotted, so the gap shows
    assert plot_unless_roundoff(ax3, t, np.where(t > 0.5, np.nan, 0.0), "distance")


def _fake_plate_design(nm: bool) -> Figure:
    """plot_plate_design on made-up orbits (circles of radius R at angular rate kappa)."""
    from types import SimpleNamespace

    from mcpkit.mpec.examples.plate_design import plot_plate_design

    kappa, radii = 0.15, (4.0, 6.0)
    t = np.linspace(0.0, 0.06, 31)

    def orbit(R: float) -> np.ndarray:
        a = kappa * t
        c, s = np.cos(a), np.sin(a)
        return np.column_stack([R * c, R * s, 0 * t, -R * kappa * s, R * kappa * c])

    scen = [SimpleNamespace(t=t, states=orbit(R), resim_states=orbit(R)) for R in radii]
    res = SimpleNamespace(radii=list(radii), scenarios=scen, wall_s=12.0)
    task = SimpleNamespace(field_rate=kappa, sim_periods=2, period=0.03)
    sims = {"MPEC design": [SimpleNamespace(t=t, states=orbit(R)) for R in radii]}
    hist = {"history": np.array([[1.0, 3.0], [5.0, 2.0]])} if nm else None
    return plot_plate_design(task, res, hist, sims, mpec_objective_sim=1.5)  # type: ignore[arg-type]


def test_plate_design_legend_names_the_radius_of_each_colour() -> None:
    fig = _fake_plate_design(nm=True)
    labels = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert labels == ["R = 4 cm", "R = 6 cm", "MPEC design", r"field $\kappa t$"]
    handles = fig.axes[1].get_legend().legend_handles
    assert handles[0].get_color() == "C0" and handles[1].get_color() == "C1"
    assert fig.axes[2].get_legend() is not None


def test_plate_design_without_nelder_mead_says_so() -> None:
    fig = _fake_plate_design(nm=False)
    assert "Nelder–Mead not run" in fig.axes[2].texts[0].get_text() and not fig.axes[2].lines
