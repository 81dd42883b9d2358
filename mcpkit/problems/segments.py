r"""The printed block structure of an MPCC: named pieces of its vectors and their formulas.

An MPCC built from a declaration with blocks (the slack form of an MCP, a horizon's steps) carries
an :class:`MPCCBlocks`: named slices (:class:`Segment`) of :math:`x`, :math:`p`, :math:`g` and the
pairs :math:`(G, H)`, with the formulas as declared (:data:`Formula`: text and LaTeX). The MPCC
printer prints one line per segment instead of one per row; a horizon's per-step segments print
once "for k = 0, …, N−1".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mcpkit.errors import MCPInputError, ShapeError

Formula = tuple[str, str]
"""A printed formula: ``(text, LaTeX)``."""

SegmentKind = Literal["x", "p", "g", "pair"]


@dataclass(frozen=True)
class Segment:
    r"""A named piece of one of an MPCC's vectors, for printing (see :class:`MPCCBlocks`).

    Attributes
    ----------
    kind
        ``"x"`` (variables), ``"p"`` (parameters), ``"g"`` (constraint rows) or ``"pair"``
        (entries of :math:`G` and :math:`H`).
    name, latex
        Printed name (text and LaTeX; LaTeX defaults to the text). A per-step piece prints as
        ``name_k`` (:math:`\mathrm{name}_{k}`).
    at
        Where the piece sits: one slice, or one slice per step :math:`k = 0, 1, \dots` (a horizon;
        all slices of one size).
    dim
        Size label (``"n_c"``); ``None`` prints the number.
    body
        Rows: :math:`g_S` as declared; pairs: :math:`G_S`. ``None``: printed from the CasADi
        expressions.
    partner
        Pairs: :math:`H_S` as declared.
    statement
        Rows: the whole printed condition (``x_{k+1} = Phi(x_k, z_k)``), replacing the body and
        the row bounds.
    note
        A remark printed after the line.
    """

    kind: SegmentKind
    name: str
    at: slice | tuple[slice, ...]
    latex: str | None = None
    dim: str | None = None
    body: Formula | None = None
    partner: Formula | None = None
    statement: Formula | None = None
    note: str | None = None

    @property
    def slices(self) -> tuple[slice, ...]:
        """The slices (one, or one per step)."""
        return self.at if isinstance(self.at, tuple) else (self.at,)

    @property
    def per_step(self) -> bool:
        """One slice per step (printed once, "for k = 0, …")."""
        return isinstance(self.at, tuple)

    @property
    def size(self) -> int:
        """Entries in one slice."""
        sl = self.slices[0]
        return sl.stop - sl.start

    @property
    def tex(self) -> str:
        """The LaTeX name."""
        return self.latex if self.latex is not None else self.name


@dataclass(frozen=True)
class MPCCBlocks:
    """Optional block structure of an :class:`MPCC`, carried from the declaration it came from.

    The printer prints one line per :class:`Segment` (in this order) instead of one per row, and
    entries of :math:`x` and :math:`p` inside a named variable segment by that name
    (``w_x[0]``). Parts of the problem that no segment covers print as for a plain MPCC.

    Attributes
    ----------
    segments
        Named pieces of :math:`x`, :math:`p`, :math:`g` and the pairs, in printing order.
    objective
        The objective as declared (``None``: printed from CasADi).
    where
        Definitions ``(formula, annotation)`` printed under "where".
    given
        Lines printed under "given" (parameters and their shapes).
    sizes
        Size labels and their values.
    source
        What the MPCC was built from (``"slack form of MCP 'contact'"``).
    steps, index
        A horizon: :math:`N` steps, per-step segments printed once "for k = 0, …, N−1" with the
        step index ``index``; a per-step variable segment may have :math:`N+1` slices (states
        :math:`x_0..x_N`), whose first and last bounds print as boundary conditions.
    """

    segments: tuple[Segment, ...] = ()
    objective: Formula | None = None
    where: tuple[tuple[Formula, Formula], ...] = ()
    given: tuple[Formula, ...] = ()
    sizes: tuple[tuple[str, int], ...] = ()
    source: str | None = None
    steps: int | None = None
    index: str = "k"

    def of_kind(self, kind: SegmentKind) -> list[Segment]:
        """The segments of one kind, in order."""
        return [s for s in self.segments if s.kind == kind]

    def check(self, lengths: dict[str, int], name: str) -> None:
        """Every slice inside its vector (``lengths``: ``x, p, g, pair``) and of its segment's size."""
        for seg in self.segments:
            if seg.kind not in lengths:
                raise MCPInputError(
                    f"MPCC {name!r}: segment {seg.name!r} has kind {seg.kind!r}, not one of {list(lengths)}"
                )
            n = lengths[seg.kind]
            for sl in seg.slices:
                if (
                    not isinstance(sl, slice)
                    or sl.step not in (None, 1)
                    or not isinstance(sl.start, int)
                    or not isinstance(sl.stop, int)
                ):
                    raise ShapeError(f"MPCC {name!r}: segment {seg.name!r} needs slices slice(start, stop)")
                if not 0 <= sl.start <= sl.stop <= n or sl.stop - sl.start != seg.size:
                    raise ShapeError(
                        f"MPCC {name!r}: segment {seg.name!r} slice {sl} outside {seg.kind} (length {n}) "
                        f"or of another size than its first ({seg.size})"
                    )
            # N steps, N + 1 grid points, or N - 1 links between consecutive steps (theta_{k+1} = theta_k)
            counts = (self.steps - 1, self.steps, self.steps + 1) if self.steps is not None else ()
            if counts and seg.per_step and len(seg.slices) not in counts:
                raise ShapeError(
                    f"MPCC {name!r}: per-step segment {seg.name!r} has {len(seg.slices)} slices for "
                    f"{self.steps} steps"
                )
