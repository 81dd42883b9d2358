r"""Planar contact patches and their Coulomb friction load.

A patch is a set of cells (centres :math:`(x_i, y_i)`, size :math:`\Delta x \times \Delta y`)
each carrying a fraction :math:`w_i \ge 0`, :math:`\sum_i w_i = 1`, of the normal force
:math:`N`; the pressure is taken constant on each cell, :math:`p = w_i N / (\Delta x\Delta y)`.

For a rigid planar motion with twist :math:`(v_x, v_y, \omega)` (velocity of the centre of
pressure, CoP, and angular rate) the sliding velocity at a point :math:`\rho` (measured from
the CoP) is :math:`v(\rho) = (v_x - \omega\rho_y,\; v_y + \omega\rho_x)` and Coulomb friction
gives the load on the patch (Arslan Waltersson and Karayiannidis eqs 7-8; Goyal et al. eqs 1-2)

.. math::

    F = -\mu \int_A p\,\hat v\,dA, \qquad
    M = -\mu \int_A p\,(\rho \times \hat v)\,dA, \qquad \hat v = v / \lVert v\rVert .

The integral is evaluated per cell. Three methods (:class:`LoadMethod`) are provided:
``EXACT`` integrates the unit-velocity field over every cell in closed form (no
discretisation step when the centre of rotation crosses a cell), ``MIDPOINT`` is the LuGre paper
eqs 21-22 (one velocity sample per cell) and ``BILINEAR`` is the LuGre paper eq 23 (bilinear
interpolation of midpoint loads for rotations about the four corners of the cell that
holds the centre of rotation).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError
from mcpkit.solving.options import Choice

__all__ = ["ContactPatch", "LoadMethod"]

# Cells whose centre is farther than this many cell sizes from the centre of rotation use
# 3x3 Gauss-Legendre quadrature instead of the closed form (the closed form is a double
# difference of terms of size d^2 .. d^3 and loses ~ (d/h)^3 eps to cancellation).
_FAR_FACTOR = 30.0
_GAUSS_X = np.array([-np.sqrt(0.6), 0.0, np.sqrt(0.6)])
_GAUSS_W = np.array([5.0, 8.0, 5.0]) / 9.0
_CHUNK = 400_000  # (twists x cells) evaluated at once


class LoadMethod(str, Choice):
    """How :meth:`ContactPatch.friction_load` integrates the unit sliding direction over a cell."""

    EXACT = "exact"
    """Closed-form integral of the unit velocity field over each (rectangular or segment) cell,
    exact for piecewise-constant pressure; far cells (> 30 cell sizes from the centre of
    rotation) use 3x3 Gauss-Legendre, relative error < 1e-9 there."""
    MIDPOINT = "midpoint"
    """One sample per cell, the LuGre paper eqs 21-22; jumps when the centre of rotation crosses
    a cell centre (error O(cell size / patch size) near pure rotation)."""
    BILINEAR = "bilinear"
    """The LuGre paper's eq 23: midpoint loads for rotation about the four corners of the cell that
    contains the centre of rotation, blended bilinearly (midpoint rule when the centre of
    rotation is outside the patch's grid); continuous but not exact."""


def _check_scalar(name: str, value: float, *, positive: bool = False) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise MCPInputError(f"{name} must be a real number, got {value!r}") from None
    if not np.isfinite(v):
        raise NonFiniteError(f"{name} must be finite, got {v}")
    if v < 0 or (positive and v == 0):
        raise MCPInputError(f"{name} must be {'> 0' if positive else '>= 0'}, got {v}")
    return v


def _check_n(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise MCPInputError(f"n must be a positive integer, got {n!r}")
    return int(n)


def _asinh_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``asinh(num/|den|)`` with the limit 0 when ``den == 0`` (multiplied by den^k, k >= 1)."""
    ad = np.abs(den)
    safe = np.where(ad > 0, ad, 1.0)
    return np.where(ad > 0, np.arcsinh(num / safe), 0.0)


def _prim_2d(X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Primitives whose mixed second derivative is X/r, Y/r and r (r = hypot(X, Y)).

    ``Px = (Y r + X^2 asinh(Y/|X|))/2``, ``Py = (X r + Y^2 asinh(X/|Y|))/2``,
    ``Pr = X Y r/3 + X^3 asinh(Y/|X|)/6 + Y^3 asinh(X/|Y|)/6`` (derived from
    ``int int r dX dY``; the dropped ``X^k ln|X|`` terms vanish under the double difference).
    """
    r = np.hypot(X, Y)
    ay = _asinh_ratio(Y, X)
    ax = _asinh_ratio(X, Y)
    px = 0.5 * (Y * r + X * X * ay)
    py = 0.5 * (X * r + Y * Y * ax)
    pr = X * Y * r / 3.0 + X**3 * ay / 6.0 + Y**3 * ax / 6.0
    return px, py, pr


def _prim_1d(X: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Primitives in X of X/r, b/r and r along a segment at height b (r = hypot(X, b))."""
    r = np.hypot(X, b)
    a = _asinh_ratio(X, b)
    return r, b * a, 0.5 * (X * r + b * b * a)


class ContactPatch:
    """A planar contact patch discretised into cells, with a normal-pressure distribution.

    Cells are rectangles of size ``cell_size = (dx, dy)`` centred at ``(x_i, y_i)`` with
    constant pressure ``w_i N / (dx dy)``; ``dy = 0`` means a line patch along x whose cells
    are segments of length ``dx`` (1-D line density ``w_i N / dx``).

    Parameters
    ----------
    x, y
        (N,) cell-centre coordinates [m] in the patch frame.
    weights
        (N,) non-negative fractions of the normal force; normalised to sum to 1.
    cell_size
        ``(dx, dy)`` [m], ``dx > 0``, ``dy >= 0``.

    Attributes
    ----------
    x, y, weights, cell_size
        As above (cells with zero weight are dropped).
    """

    x: np.ndarray
    y: np.ndarray
    weights: np.ndarray
    cell_size: tuple[float, float]

    def __init__(
        self,
        x: np.ndarray,
        y: np.ndarray,
        weights: np.ndarray,
        cell_size: tuple[float, float],
    ) -> None:
        x = np.asarray(x, dtype=float).ravel()
        y = np.asarray(y, dtype=float).ravel()
        w = np.asarray(weights, dtype=float).ravel()
        if not (x.shape == y.shape == w.shape) or x.size == 0:
            raise ShapeError(
                f"x, y, weights must be non-empty and of equal length, got {x.shape}, {y.shape}, {w.shape}"
            )
        for name, arr in (("x", x), ("y", y), ("weights", w)):
            if not np.all(np.isfinite(arr)):
                raise NonFiniteError(f"{name} contains NaN or inf")
        if np.any(w < 0):
            raise MCPInputError("weights must be >= 0")
        if w.sum() <= 0:
            raise MCPInputError("weights must have a positive sum")
        if len(cell_size) != 2:
            raise ShapeError(f"cell_size must be (dx, dy), got {cell_size!r}")
        dx = _check_scalar("cell_size dx", cell_size[0], positive=True)
        dy = _check_scalar("cell_size dy", cell_size[1])
        keep = w > 0
        self.x = x[keep]
        self.y = y[keep]
        self.weights = w[keep] / w.sum()
        self.cell_size = (dx, dy)

    # ------------------------------------------------------------------ properties
    @property
    def n_cells(self) -> int:
        """Number of cells with positive weight."""
        return int(self.x.size)

    @property
    def centre_of_pressure(self) -> np.ndarray:
        r"""(2,) centre of pressure :math:`\sum_i w_i (x_i, y_i)`."""
        return np.array([self.weights @ self.x, self.weights @ self.y])

    @property
    def radius_of_gyration(self) -> float:
        r"""Pressure-weighted RMS distance from the CoP, :math:`\sqrt{\int p\,\rho^2 dA / N}`.

        Includes the within-cell second moment ``(dx^2 + dy^2)/12``. Used as the
        characteristic length that makes twists dimensionally homogeneous.
        """
        c = self.centre_of_pressure
        dx, dy = self.cell_size
        m2 = self.weights @ ((self.x - c[0]) ** 2 + (self.y - c[1]) ** 2)
        return float(np.sqrt(m2 + (dx * dx + dy * dy) / 12.0))

    def __repr__(self) -> str:
        dx, dy = self.cell_size
        c = self.centre_of_pressure
        return (
            f"ContactPatch(n_cells={self.n_cells}, cell_size=({dx:.3g}, {dy:.3g}), "
            f"cop=({c[0]:.3g}, {c[1]:.3g}))"
        )

    # ------------------------------------------------------------------ constructors
    @staticmethod
    def _grid(xlim: tuple[float, float], ylim: tuple[float, float], nx: int, ny: int):
        dx = (xlim[1] - xlim[0]) / nx
        dy = (ylim[1] - ylim[0]) / ny
        xc = xlim[0] + (np.arange(nx) + 0.5) * dx
        yc = ylim[0] + (np.arange(ny) + 0.5) * dy
        X, Y = np.meshgrid(xc, yc, indexing="ij")
        return X, Y, dx, dy

    @classmethod
    def _supersampled(
        cls,
        inside: Callable[[np.ndarray, np.ndarray], np.ndarray],
        pressure: Callable[[np.ndarray, np.ndarray], np.ndarray] | None,
        xlim: tuple[float, float],
        ylim: tuple[float, float],
        n: int,
        sub: int,
    ) -> ContactPatch:
        """Cell weights = integral of ``pressure * inside`` over the cell by sub x sub midpoints."""
        X, Y, dx, dy = cls._grid(xlim, ylim, n, n)
        off = (np.arange(sub) + 0.5) / sub - 0.5
        acc = np.zeros_like(X)
        for ox in off:
            for oy in off:
                xs, ys = X + ox * dx, Y + oy * dy
                val = inside(xs, ys).astype(float)
                if pressure is not None:
                    pv = np.asarray(pressure(xs, ys), dtype=float) * np.ones_like(xs)
                    if not np.all(np.isfinite(pv)):
                        raise NonFiniteError("pressure returned NaN or inf")
                    if np.any(pv[val > 0] < 0):
                        raise MCPInputError("pressure must be >= 0")
                    val = val * pv
                acc += val
        return cls(X.ravel(), Y.ravel(), acc.ravel(), (dx, dy))

    @classmethod
    def circle(
        cls,
        radius: float,
        n: int = 21,
        pressure: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
        *,
        subsample: int = 8,
    ) -> ContactPatch:
        r"""Disc of ``radius`` centred at the origin on an ``n x n`` grid over :math:`[-R, R]^2`.

        Cell weight = :math:`\int_{cell \cap disc} p\,dA` estimated with ``subsample^2``
        sub-points (partial boundary cells get fractional weight; the LuGre paper Fig. 8 circle).
        ``pressure(x, y)`` (arbitrary units, >= 0) defaults to uniform.
        """
        R = _check_scalar("radius", radius, positive=True)
        n = _check_n(n)
        sub = _check_n(subsample)
        return cls._supersampled(lambda x, y: x * x + y * y <= R * R, pressure, (-R, R), (-R, R), n, sub)

    @classmethod
    def rectangle(
        cls,
        width: float,
        height: float,
        n: int = 21,
        pressure: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
    ) -> ContactPatch:
        """``width x height`` rectangle centred at the origin on an ``n x n`` grid.

        ``pressure(x, y)`` is sampled at cell centres (uniform when ``None``).
        """
        w = _check_scalar("width", width, positive=True)
        h = _check_scalar("height", height, positive=True)
        n = _check_n(n)
        X, Y, dx, dy = cls._grid((-w / 2, w / 2), (-h / 2, h / 2), n, n)
        p = np.ones_like(X) if pressure is None else np.asarray(pressure(X, Y), float)
        p = p * np.ones_like(X)
        if not np.all(np.isfinite(p)):
            raise NonFiniteError("pressure returned NaN or inf")
        return cls(X.ravel(), Y.ravel(), p.ravel(), (dx, dy))

    @classmethod
    def line(cls, length: float, n: int = 21, width: float | None = None) -> ContactPatch:
        """Uniform line contact of ``length`` along x, centred at the origin.

        ``width=None`` is an ideal line (cells are segments, ``dy = 0``); otherwise a single
        row of ``n`` cells of height ``width``.
        """
        L = _check_scalar("length", length, positive=True)
        n = _check_n(n)
        dy = 0.0 if width is None else _check_scalar("width", width, positive=True)
        dx = L / n
        x = -L / 2 + (np.arange(n) + 0.5) * dx
        return cls(x, np.zeros(n), np.ones(n), (dx, dy))

    @classmethod
    def linear_gradient(cls, width: float, height: float, n: int = 21, ratio: float = 0.0) -> ContactPatch:
        """Rectangle (or line when ``height == 0``) with pressure linear in x, sampled at cell
        centres.

        ``p(x) ∝ 1 + (ratio - 1) (x + width/2) / width``: ``ratio = p(+width/2) / p(-width/2)``.
        The default ``ratio = 0`` (largest pressure at x < 0, falling to zero at
        ``x = +width/2``) is the "gradient line" of the LuGre paper Figs 8, 19 and 31 (the text gives
        only "the pressure gradient is the largest in x < 0 and smallest in x > 0"; the
        authors' code uses cell pressures ``∝ n - i``, which is ``ratio = 1/(2n + 1)`` at cell
        centres). ``height == 0`` gives ``n`` segment cells, otherwise ``n x n`` cells.
        """
        w = _check_scalar("width", width, positive=True)
        h = _check_scalar("height", height)
        n = _check_n(n)
        rt = _check_scalar("ratio", ratio)

        def p(x: np.ndarray) -> np.ndarray:
            return 1.0 + (rt - 1.0) * (x + w / 2) / w

        if h == 0.0:
            dx = w / n
            x = -w / 2 + (np.arange(n) + 0.5) * dx
            return cls(x, np.zeros(n), p(x), (dx, 0.0))
        X, Y, dx, dy = cls._grid((-w / 2, w / 2), (-h / 2, h / 2), n, n)
        return cls(X.ravel(), Y.ravel(), p(X).ravel(), (dx, dy))

    @classmethod
    def _rectangles(
        cls,
        rects: tuple[tuple[float, float, float, float], ...],
        size: float,
        n: int,
        ratio: float,
    ) -> ContactPatch:
        r"""Union of disjoint axis-aligned rectangles ``(x0, x1, y0, y1)`` (in units of ``size``)
        on an ``n x n`` grid over :math:`[-s/2, s/2]^2`, pressure linear in x.

        Cell weight = :math:`\int_{cell \cap R} p\,dA` in closed form: overlap area times
        :math:`p` at the overlap's centroid (exact for linear :math:`p`), so boundary cells of a
        grid that is not aligned with the rectangles get their exact covered fraction.
        """
        s = _check_scalar("size", size, positive=True)
        n = _check_n(n)
        rt = _check_scalar("ratio", ratio)
        X, Y, dx, dy = cls._grid((-s / 2, s / 2), (-s / 2, s / 2), n, n)
        acc = np.zeros_like(X)
        tiny = 1e-9 * dx * dy  # overlaps below this are round-off of coincident edges
        for x0, x1, y0, y1 in rects:
            lo_x = np.maximum(x0 * s, X - dx / 2)
            hi_x = np.minimum(x1 * s, X + dx / 2)
            lo_y = np.maximum(y0 * s, Y - dy / 2)
            hi_y = np.minimum(y1 * s, Y + dy / 2)
            area = np.clip(hi_x - lo_x, 0.0, None) * np.clip(hi_y - lo_y, 0.0, None)
            area = np.where(area > tiny, area, 0.0)
            xm = 0.5 * (lo_x + hi_x)
            acc += area * (1.0 + (rt - 1.0) * (xm + s / 2) / s)
        return cls(X.ravel(), Y.ravel(), acc.ravel(), (dx, dy))

    @classmethod
    def nonconvex_a(cls, size: float = 0.02, n: int = 21, ratio: float = 1.0) -> ContactPatch:
        r"""The LuGre paper's "non-convex 1" surface (Figs 8 and 20): two square pads at the ends of a
        ``size x size`` area.

        With :math:`s` = ``size``, the pads are :math:`|y| \le s/14` and
        :math:`5s/14 \le |x| \le s/2` (side :math:`s/7`, centres :math:`(\pm 3s/7, 0)`); area
        :math:`2 s^2/49`, CoP at the origin (uniform pressure).

        Source: the paper's text only names the shape ("gradient non-convex 1", Fig. 20
        caption) and gives the grid (21 x 21 cells) and area (0.02 x 0.02 m, Table III). The
        dimensions are those of the authors' published code (``non_convex_1`` in
        ``surfaces/surfaces.py`` of github.com/Gabrieleenx/FrictionModelling, used for Figs 8
        and 20): on their 21 x 21 grid, rows 9-11 and columns 0-2 and 18-20 carry uniform
        pressure; we restate it in physical units, so at ``n = 21`` the cells coincide with
        theirs and other ``n`` keep the same shape (boundary cells get exact area fractions).
        The authors' pressure is uniform although the caption says "gradient";
        ``ratio != 1`` adds a linear gradient in x, ``p(+s/2)/p(-s/2) = ratio`` (our option, not
        the paper's).
        """
        rects = ((-1 / 2, -5 / 14, -1 / 14, 1 / 14), (5 / 14, 1 / 2, -1 / 14, 1 / 14))
        return cls._rectangles(rects, size, n, ratio)

    @classmethod
    def nonconvex_b(cls, size: float = 0.02, n: int = 21, ratio: float = 1.0) -> ContactPatch:
        r"""The LuGre paper's "non-convex 2" surface (Figs 8 and 21): a horizontal bar and a separate
        vertical bar in a ``size x size`` area.

        With :math:`s` = ``size``: bar 1 is :math:`-s/2 \le x \le s/6`, :math:`|y| \le s/14`
        (14 x 3 cells of :math:`s/21`); bar 2 is :math:`5s/14 \le x \le s/2`,
        :math:`-5s/14 \le y \le 13s/42` (3 x 14 cells, half a cell below centre, as in the
        authors' grid). Area :math:`2 \cdot 42 s^2/441 = 4s^2/21`; uniform pressure.

        Source: as :meth:`nonconvex_a`; the paper's text only names the shape ("gradient
        non-convex 2", Fig. 21 caption). The dimensions are those of ``non_convex_2`` in the
        authors' code: on the 21 x 21 grid, rows 9-11 x columns 0-13 and rows 4-17 x columns
        18-20 (row 0 at the top, +y), uniform pressure. ``ratio`` as in :meth:`nonconvex_a`.
        """
        rects = ((-1 / 2, 1 / 6, -1 / 14, 1 / 14), (5 / 14, 1 / 2, -5 / 14, 13 / 42))
        return cls._rectangles(rects, size, n, ratio)

    @classmethod
    def hertz(
        cls,
        radius: float,
        normal_force: float,
        n: int = 21,
        *,
        k: float = 2.0,
        k_scales_with_force: bool = False,
        subsample: int = 4,
    ) -> ContactPatch:
        r"""Force-dependent Hertz-like patch, Arslan Waltersson and Karayiannidis eqs 45-46.

        Contact radius :math:`a = a_1 f_N^{1/3}` (eq 45; the paper uses
        :math:`a_1 = 6` mm N^{-1/3}, pass ``radius=6e-3``), pressure
        :math:`p \propto [1 - (\lVert\rho\rVert/a)^k]^{1/k}` inside the disc (eq 46),
        with ``k`` fixed or, if ``k_scales_with_force``, :math:`k \cdot f_N` (the paper's
        ":math:`k = 2 f_N`" surface). Eq 46's prefactor 1.144 is replaced by exact
        normalisation of the weights (total force = :math:`f_N`).

        Parameters
        ----------
        radius
            :math:`a_1` [m N^{-1/3}], contact radius at 1 N.
        normal_force
            :math:`f_N > 0` [N].
        """
        a1 = _check_scalar("radius", radius, positive=True)
        fN = _check_scalar("normal_force", normal_force, positive=True)
        kk = _check_scalar("k", k, positive=True)
        if k_scales_with_force:
            kk = kk * fN
        a = a1 * fN ** (1.0 / 3.0)

        def p(x: np.ndarray, y: np.ndarray) -> np.ndarray:
            s = np.clip(np.hypot(x, y) / a, 0.0, 1.0)
            return (1.0 - s**kk) ** (1.0 / kk)

        return cls.circle(a, n, pressure=p, subsample=subsample)

    @classmethod
    def from_array(
        cls,
        pressure_2d: np.ndarray,
        dx: float,
        dy: float,
        origin: tuple[float, float] = (0.0, 0.0),
    ) -> ContactPatch:
        """Patch from a pressure image: ``pressure_2d[i, j]`` is the pressure of the cell with
        centre ``(origin[0] + i dx, origin[1] + j dy)`` (``origin`` = centre of cell [0, 0])."""
        P = np.asarray(pressure_2d, dtype=float)
        if P.ndim != 2:
            raise ShapeError(f"pressure_2d must be 2-D, got shape {P.shape}")
        if not np.all(np.isfinite(P)):
            raise NonFiniteError("pressure_2d contains NaN or inf")
        ddx = _check_scalar("dx", dx, positive=True)
        ddy = _check_scalar("dy", dy, positive=True)
        if len(origin) != 2 or not np.all(np.isfinite(origin)):
            raise ShapeError("origin must be two finite numbers")
        i, j = np.meshgrid(np.arange(P.shape[0]), np.arange(P.shape[1]), indexing="ij")
        return cls(origin[0] + i * ddx, origin[1] + j * ddy, P, (ddx, ddy))

    @classmethod
    def from_callable(
        cls,
        f: Callable[[np.ndarray, np.ndarray], np.ndarray],
        xlim: tuple[float, float],
        ylim: tuple[float, float],
        n: int = 21,
    ) -> ContactPatch:
        """Patch on an ``n x n`` grid over ``xlim x ylim`` with pressure ``f(x, y)`` (vectorised,
        >= 0, arbitrary units) sampled at cell centres."""
        n = _check_n(n)
        lims = np.array([*xlim, *ylim], dtype=float)
        if lims.shape != (4,) or not np.all(np.isfinite(lims)):
            raise ShapeError("xlim and ylim must be pairs of finite numbers")
        if lims[1] <= lims[0] or lims[3] <= lims[2]:
            raise MCPInputError("xlim and ylim must be increasing")
        X, Y, dx, dy = cls._grid((lims[0], lims[1]), (lims[2], lims[3]), n, n)
        p = np.asarray(f(X, Y), dtype=float) * np.ones_like(X)
        return cls(X.ravel(), Y.ravel(), p.ravel(), (dx, dy))

    # ------------------------------------------------------------------ friction
    def friction_load(
        self,
        twist: np.ndarray,
        mu: float,
        normal_force: float,
        method: LoadMethod | str = LoadMethod.EXACT,
    ) -> np.ndarray:
        r"""Coulomb friction load :math:`(F_x, F_y, M)` about the CoP for a rigid twist.

        :math:`F = -\mu N \sum_i w_i \langle \hat v\rangle_i`,
        :math:`M = -\mu N \sum_i w_i \langle \rho\times\hat v\rangle_i` (the LuGre paper eqs 7-8),
        where :math:`\langle\cdot\rangle_i` is the mean over cell *i* and
        :math:`v(\rho) = (v_x - \omega\rho_y, v_y + \omega\rho_x)`, :math:`\rho` from the CoP.

        With ``method="exact"`` (default) and :math:`\omega \ne 0` the motion is a rotation
        about the centre of rotation :math:`\rho_c = (-v_y, v_x)/\omega` and, with
        :math:`X, Y` measured from :math:`\rho_c`, :math:`s = \operatorname{sign}\omega`,
        :math:`\langle\hat v\rangle = s(-\bar I_Y, \bar I_X)`,
        :math:`\langle\rho\times\hat v\rangle = s(\bar I_r + \rho_{c,x}\bar I_X +
        \rho_{c,y}\bar I_Y)`, where :math:`\bar I_X, \bar I_Y, \bar I_r` are the cell means of
        :math:`X/r, Y/r, r`, integrated in closed form (double differences of primitives).

        Accuracy: ``exact`` is exact (to ~1e-12 relative) for the piecewise-constant pressure
        the patch represents, including pure rotation about a grid point, a cell centre or a
        cell corner; there is no step as the centre of rotation crosses cells. Cells farther
        than 30 cell sizes from :math:`\rho_c` (and every cell when :math:`\omega = 0`) use
        3x3 Gauss-Legendre, relative error < 1e-9. The only remaining error is the
        representation of the true pressure by cells (O(h^2) for smooth pressure on
        rectangles, boundary-cell error for curved outlines). ``midpoint`` and ``bilinear``
        (the LuGre paper eqs 21-23) are provided for comparison; they have O(h) errors near pure
        rotation.

        Parameters
        ----------
        twist
            (3,) or (K, 3): :math:`(v_x, v_y, \omega)` [m/s, m/s, rad/s]. A zero twist gives a
            zero load (the friction load is then set-valued).
        mu, normal_force
            Friction coefficient and normal force, both >= 0 and finite.
        method
            :class:`LoadMethod` or its name.

        Returns
        -------
        numpy.ndarray
            (3,) or (K, 3) loads :math:`(F_x, F_y, M)` [N, N, N m] on the patch.
        """
        t = np.asarray(twist, dtype=float)
        single = t.ndim == 1
        if t.shape[-1:] != (3,) or t.ndim not in (1, 2):
            raise ShapeError(f"twist must have shape (3,) or (K, 3), got {t.shape}")
        if not np.all(np.isfinite(t)):
            raise NonFiniteError("twist contains NaN or inf")
        mu_v = _check_scalar("mu", mu)
        N = _check_scalar("normal_force", normal_force)
        meth = LoadMethod.parse(method)
        T = np.atleast_2d(t)
        out = np.empty((T.shape[0], 3))
        step = max(1, _CHUNK // max(1, self.n_cells))
        for k0 in range(0, T.shape[0], step):
            blk = T[k0 : k0 + step]
            if meth is LoadMethod.EXACT:
                out[k0 : k0 + step] = self._mean_terms_exact(blk)
            elif meth is LoadMethod.MIDPOINT:
                out[k0 : k0 + step] = self._mean_terms_midpoint(blk)
            else:
                out[k0 : k0 + step] = self._mean_terms_bilinear(blk)
        out *= -mu_v * N
        return out[0] if single else out

    # ------------------------------------------------------------------ internals
    def _rel(self) -> tuple[np.ndarray, np.ndarray]:
        c = self.centre_of_pressure
        return self.x - c[0], self.y - c[1]

    def _mean_terms_midpoint(self, T: np.ndarray, rx=None, ry=None) -> np.ndarray:
        """sum_i w_i (v_hat, rho x v_hat) at cell centres (Arslan Waltersson and Karayiannidis eqs 21-22)."""
        if rx is None:
            rx, ry = self._rel()
        vx = T[:, 0:1] - T[:, 2:3] * ry[None, :]
        vy = T[:, 1:2] + T[:, 2:3] * rx[None, :]
        nv = np.hypot(vx, vy)
        inv = np.where(nv > 0, 1.0 / np.where(nv > 0, nv, 1.0), 0.0)
        ux, uy = vx * inv, vy * inv
        w = self.weights
        return np.stack([ux @ w, uy @ w, (rx[None, :] * uy - ry[None, :] * ux) @ w], axis=1)

    def distance_means(
        self, xc: np.ndarray, yc: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        r"""Cell means of :math:`X/r`, :math:`Y/r`, :math:`r` and :math:`\delta\cdot(X, Y)/r`.

        :math:`X = \rho_x - x_c`, :math:`Y = \rho_y - y_c`, :math:`r = \sqrt{X^2 + Y^2}`, with
        :math:`\rho` measured from the CoP and :math:`\delta` the offset from the cell centre
        (the last mean is :math:`\langle r\rangle - (X_i, Y_i)\cdot\langle (X, Y)/r\rangle`
        and is returned separately to avoid cancellation). Closed form (double differences of
        primitives) for cells within 30 cell sizes of the point, 3x3 Gauss-Legendre beyond.

        Parameters
        ----------
        xc, yc
            (K,) coordinates relative to the CoP.

        Returns
        -------
        tuple of numpy.ndarray
            Four (K, N) arrays.
        """
        xc = np.atleast_1d(np.asarray(xc, dtype=float))
        yc = np.atleast_1d(np.asarray(yc, dtype=float))
        if xc.shape != yc.shape or xc.ndim != 1:
            raise ShapeError("xc and yc must be 1-D arrays of equal length")
        if not (np.all(np.isfinite(xc)) and np.all(np.isfinite(yc))):
            raise NonFiniteError("xc, yc contain NaN or inf")
        rx, ry = self._rel()
        dx, dy = self.cell_size
        X = rx[None, :] - xc[:, None]
        Y = ry[None, :] - yc[:, None]
        mX = np.empty_like(X)
        mY = np.empty_like(X)
        mR = np.empty_like(X)
        mD = np.empty_like(X)
        near = np.hypot(X, Y) <= _FAR_FACTOR * max(dx, dy)
        far = ~near
        if np.any(far):
            Xf, Yf = X[far], Y[far]
            aX = np.zeros_like(Xf)
            aY = np.zeros_like(Xf)
            aR = np.zeros_like(Xf)
            aD = np.zeros_like(Xf)
            gy, wy = (_GAUSS_X, _GAUSS_W) if dy > 0 else (np.zeros(1), np.full(1, 2.0))
            for a, wa in zip(_GAUSS_X, _GAUSS_W, strict=True):
                for b, wb in zip(gy, wy, strict=True):
                    px = Xf + 0.5 * a * dx
                    py = Yf + 0.5 * b * dy
                    r = np.hypot(px, py)
                    ww = wa * wb / 4.0
                    aX += ww * px / r
                    aY += ww * py / r
                    aR += ww * r
                    aD += ww * (0.5 * a * dx * px + 0.5 * b * dy * py) / r
            mX[far], mY[far], mR[far], mD[far] = aX, aY, aR, aD
        if np.any(near):
            Xc, Yc = X[near], Y[near]
            if dy > 0:
                Ix = Iy = Ir = 0.0
                for sx in (-1.0, 1.0):
                    for sy in (-1.0, 1.0):
                        px, py, pr = _prim_2d(Xc + sx * dx / 2, Yc + sy * dy / 2)
                        sg = sx * sy
                        Ix = Ix + sg * px
                        Iy = Iy + sg * py
                        Ir = Ir + sg * pr
                area = dx * dy
            else:
                a1 = _prim_1d(Xc + dx / 2, Yc)
                a0 = _prim_1d(Xc - dx / 2, Yc)
                Ix, Iy, Ir = (a1[0] - a0[0], a1[1] - a0[1], a1[2] - a0[2])
                area = dx
            Ix, Iy, Ir = Ix / area, Iy / area, Ir / area
            mX[near], mY[near], mR[near] = Ix, Iy, Ir
            mD[near] = Ir - (Xc * Ix + Yc * Iy)
        return mX, mY, mR, mD

    def _mean_terms_exact(self, T: np.ndarray) -> np.ndarray:
        rx, ry = self._rel()
        w = self.weights
        out = np.empty((T.shape[0], 3))
        # rotation if omega moves the direction by more than 1e-14 rad anywhere on the patch;
        # otherwise a translation (uniform direction), relative error < 1e-14
        ext = float(np.max(np.hypot(rx, ry))) + float(np.hypot(*self.cell_size))
        rot = np.abs(T[:, 2]) * ext > 1e-14 * np.hypot(T[:, 0], T[:, 1])
        if np.any(~rot):  # pure translation: the direction is uniform over the patch
            Tt = T[~rot]
            nv = np.hypot(Tt[:, 0], Tt[:, 1])
            inv = np.where(nv > 0, 1.0 / np.where(nv > 0, nv, 1.0), 0.0)
            ux, uy = Tt[:, 0] * inv, Tt[:, 1] * inv
            c = np.array([w @ rx, w @ ry])  # = 0 (CoP), kept for clarity
            out[~rot] = np.stack([ux, uy, c[0] * uy - c[1] * ux], axis=1)
        if np.any(rot):
            Tr = T[rot]
            o = Tr[:, 2]
            cx = -Tr[:, 1] / o
            cy = Tr[:, 0] / o
            mX, mY, _, mD = self.distance_means(cx, cy)
            s = np.sign(o)[:, None]
            mx = -s * mY
            my = s * mX
            # rho x v_hat = s (rho . (X, Y)) / r, rho = rho_i + delta
            mm = s * (rx[None, :] * mX + ry[None, :] * mY + mD)
            out[rot] = np.stack([mx @ w, my @ w, mm @ w], axis=1)
        return out

    def _mean_terms_bilinear(self, T: np.ndarray) -> np.ndarray:
        """The LuGre paper's eq 23: blend midpoint loads for rotations about the enclosing cell's corners."""
        rx, ry = self._rel()
        dx, dy = self.cell_size
        out = self._mean_terms_midpoint(T, rx, ry)
        om = T[:, 2]
        rot = np.nonzero(om != 0.0)[0]
        if rot.size == 0:
            return out
        cx = -T[rot, 1] / om[rot]
        cy = T[rot, 0] / om[rot]
        # corner lattice: cell edges, anchored at the first cell
        x0 = rx[0] - dx / 2
        fx = (cx - x0) / dx
        ix = np.floor(fx)
        tx = fx - ix
        inside = (cx >= rx.min() - dx / 2) & (cx <= rx.max() + dx / 2)
        if dy > 0:
            y0 = ry[0] - dy / 2
            fy = (cy - y0) / dy
            iy = np.floor(fy)
            ty = fy - iy
            inside &= (cy >= ry.min() - dy / 2) & (cy <= ry.max() + dy / 2)
        if not np.any(inside):
            return out
        sel = rot[inside]
        o = om[sel]
        acc = np.zeros((sel.size, 3))
        corners = [(0, 0), (0, 1), (1, 0), (1, 1)] if dy > 0 else [(0, 0), (1, 0)]
        for ax, ay in corners:
            kx = x0 + (ix[inside] + ax) * dx
            if dy > 0:
                ky = y0 + (iy[inside] + ay) * dy
                wgt = (tx[inside] if ax else 1 - tx[inside]) * (ty[inside] if ay else 1 - ty[inside])
            else:
                ky = cy[inside]
                wgt = tx[inside] if ax else 1 - tx[inside]
            Tc = np.stack([o * ky, -o * kx, o], axis=1)  # rotation about (kx, ky)
            acc += wgt[:, None] * self._mean_terms_midpoint(Tc, rx, ry)
        out[sel] = acc
        return out
