r"""Figure files: the one helper every demo's figure writer saves through (``--format png|pdf|svg``).

A figure ``fig`` saved as ``stem`` into ``out_dir`` becomes ``out_dir/stem.png`` (raster,
:data:`DEFAULT_DPI` dots per inch), ``stem.pdf`` or ``stem.svg`` (vector, for a paper). The format
is checked by :func:`figure_format` before a demo computes anything, so a typo costs no solve.
:func:`plot_unless_roundoff` keeps panels of round-off noise out of the figures.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Any

from mcpkit.errors import MCPInputError

__all__ = ["DEFAULT_DPI", "ROUNDOFF", "FigureFormat", "figure_format", "plot_unless_roundoff", "save_figure"]

#: Resolution of PNG figures (and of raster parts inside PDF/SVG ones).
DEFAULT_DPI = 200


class FigureFormat(enum.Enum):
    """File format of a demo's figures."""

    PNG = "png"
    """Raster image at :data:`DEFAULT_DPI` dpi (the default)."""
    PDF = "pdf"
    """Vector graphics for print (fonts embedded as TrueType)."""
    SVG = "svg"
    """Vector graphics for the web and for editing."""


def figure_format(fmt: FigureFormat | str) -> FigureFormat:
    """``fmt`` as a :class:`FigureFormat` (else :class:`~mcpkit.errors.MCPInputError` naming the choices)."""
    if isinstance(fmt, FigureFormat):
        return fmt
    try:
        return FigureFormat(str(fmt).lower().lstrip("."))
    except ValueError:
        choices = ", ".join(f.value for f in FigureFormat)
        raise MCPInputError(f"unknown figure format {fmt!r}; choose one of {choices}") from None


def save_figure(
    fig: Any,
    out_dir: str | Path,
    stem: str,
    fmt: FigureFormat | str = FigureFormat.PNG,
    dpi: int = DEFAULT_DPI,
) -> str:
    """Write the Matplotlib figure ``fig`` to ``out_dir/stem.<fmt>``; returns the path written.

    A figure made by ``pyplot`` is closed afterwards (figures made with
    ``matplotlib.figure.Figure`` are freed with their last reference).
    """
    import matplotlib

    f = figure_format(fmt)
    path = Path(out_dir) / f"{stem}.{f.value}"
    with matplotlib.rc_context({"pdf.fonttype": 42}):  # TrueType in PDFs (journals reject Type 3)
        fig.savefig(path, dpi=dpi, format=f.value)
    if getattr(fig.canvas, "manager", None) is not None:  # made by pyplot: release it there
        import matplotlib.pyplot as plt

        plt.close(fig)
    return str(path)


#: Values all below this in magnitude are round-off, not a signal (:func:`plot_unless_roundoff`).
ROUNDOFF = 1e-12


def plot_unless_roundoff(ax: Any, x: Any, y: Any, what: str, floor: float = ROUNDOFF, **style: Any) -> bool:
    r"""Plot ``y`` against ``x`` on ``ax``, or, when :math:`\max|y| <` ``floor``, say so in the panel.

    A quantity that is zero up to round-off (a contact distance of 1e-14 cm) drawn as a curve
    shows only floating-point noise; the panel then states ``"<what>: |value| < 1e-12 throughout
    (max 3.2e-14)"`` as text instead, with no y ticks. Returns whether a curve was drawn.
    """
    import numpy as np

    y = np.asarray(y, dtype=float)
    finite = y[np.isfinite(y)]
    biggest = float(np.max(np.abs(finite))) if finite.size else float("nan")
    if finite.size == y.size and y.size and biggest < floor:
        ax.text(
            0.5,
            0.5,
            f"{what}: |value| < {floor:.0e} throughout\n(largest {biggest:.1e}: round-off, not plotted)",
            transform=ax.transAxes,
            ha="center",
            va="center",
            fontsize=9,
        )
        ax.set_yticks([])
        x = np.asarray(x, dtype=float)
        if x.size:
            ax.set_xlim(float(x.min()), float(x.max()))
        return False
    ax.plot(x, y, **style)
    return True
