"""Solver options: which route to take and how to stop.

All options are plain dataclasses and enums so they can be inspected, documented and
validated before any solver runs. Unknown option names raise
:class:`~mcpkit.errors.UnknownOptionError` with the list of valid names.
"""

from __future__ import annotations

import difflib
import enum
import math
from dataclasses import dataclass, field, fields, replace
from typing import Any

from mcpkit.errors import MCPInputError, UnknownOptionError


class Method(str, enum.Enum):
    """How the complementarity conditions are handled."""

    AUTO = "auto"
    """PATH when available, otherwise the Scholtes homotopy on IPOPT (the most reliable
    IPOPT route in mcpkit's tests). The result's ``message`` says which was picked."""
    PATH = "path"
    """The PATH solver (a stabilised Newton method on the normal map), via Pyomo's ``path``
    solver (``pathampl``) or GAMSPy."""
    SCHOLTES = "scholtes"
    """Scholtes relaxation :math:`G_j H_j \\le \\sigma`, :math:`\\sigma \\to 0`, solved with IPOPT,
    followed by an active-set polish."""
    SCHOLTES_EQ = "scholtes_eq"
    """Scholtes relaxation in equality form :math:`G_j H_j = \\sigma` (keeps iterates off the
    corner :math:`G = H = 0`), same homotopy and polish."""
    FISCHER_BURMEISTER = "fb"
    """Smoothed Fischer-Burmeister equations
    :math:`G_j + H_j - \\sqrt{G_j^2 + H_j^2 + 2\\varepsilon^2} = 0`, :math:`\\varepsilon \\to 0`,
    solved with IPOPT, followed by the same polish."""
    PENALTY = "penalty"
    """Penalty mode: minimise :math:`f + \\rho \\sum_j G_j H_j` subject to
    :math:`G, H \\ge 0`, increasing :math:`\\rho`, then polish."""
    ELASTIC = "elastic"
    """Elastic :math:`\\ell_1` mode: minimise :math:`f + \\rho(\\sum_i s_i + \\sum_j G_j H_j)`
    with the constraints relaxed to :math:`g_l - s \\le g \\le g_u + s`, :math:`s \\ge 0`
    (every subproblem feasible), increasing :math:`\\rho`, then polish."""

    @classmethod
    def parse(cls, value: str | Method) -> Method:
        """Method from its name, with a helpful error listing the valid names."""
        return _parse_enum(cls, value, "method")


#: Names of the IPOPT reformulations (each one file in :mod:`mcpkit.solvers`).
REFORMULATIONS: tuple[str, ...] = ("scholtes", "scholtes_eq", "fb", "penalty", "elastic")


class Backend(str, enum.Enum):
    """Which modelling layer builds the nonlinear program."""

    AUTO = "auto"
    """CasADi (always available, fastest re-solves)."""
    CASADI = "casadi"
    """CasADi SX expressions and CasADi's bundled IPOPT."""
    PYOMO = "pyomo"
    """A Pyomo model with ``pyomo.mpec`` Complementarity components, solved by an ``ipopt``
    executable when one is found, else routed to CasADi's IPOPT through an NL file."""

    GAMSPY = "gamspy"
    """GAMSPy's bundled PATH (method ``path`` only; ``pip install gamspy``)."""

    @classmethod
    def parse(cls, value: str | Backend) -> Backend:
        """Backend from its name, with a helpful error listing the valid names."""
        return _parse_enum(cls, value, "backend")


def _parse_enum(cls: type[enum.Enum], value: Any, what: str) -> Any:
    if isinstance(value, cls):
        return value
    try:
        return cls(str(value).lower())
    except ValueError:
        valid = [m.value for m in cls]  # type: ignore[attr-defined]
        hint = difflib.get_close_matches(str(value), valid, n=1)
        extra = f" Did you mean {hint[0]!r}?" if hint else ""
        raise UnknownOptionError(f"unknown {what} {value!r}; valid: {valid}.{extra}") from None


@dataclass(frozen=True)
class SolveOptions:
    """Stopping rules and homotopy settings shared by every route.

    The outer test is always on the original pairs: ``natural_residual <= tol`` and
    ``bound_violation <= tol``. IPOPT's own tolerances are tied to it: each subproblem
    is solved to ``inner_tol_factor * max(tol, parameter)`` and the polish to
    ``inner_tol_factor * tol``.
    """

    tol: float = 1e-8
    """Tolerance on the natural residual and the bound violation."""
    max_outer: int = 40
    """Maximum number of homotopy (outer) iterations."""
    time_limit: float | None = None
    """Wall-clock limit in seconds for the whole solve (None: no limit)."""
    sigma0: float = 1.0
    """Initial relaxation/smoothing parameter (Scholtes sigma, FB epsilon)."""
    sigma_factor: float = 0.1
    """Multiplicative update of the parameter per outer iteration (0 < factor < 1)."""
    sigma_min: float = 1e-14
    """Smallest parameter tried before the homotopy is declared stalled."""
    rho0: float = 1.0
    """Initial penalty weight (method ``penalty``)."""
    rho_factor: float = 10.0
    """Penalty weight growth per outer iteration (method ``penalty``)."""
    polish: bool = True
    """After a homotopy step, fix the identified active sets and re-solve (see the docs)."""
    polish_trigger: float = 1e-2
    """Try the polish once the natural residual falls below this value."""
    inner_tol_factor: float = 0.1
    """IPOPT's ``tol`` as a fraction of the outer tolerance (see the class docstring)."""
    max_inner_iter: int = 3000
    """IPOPT ``max_iter`` for each subproblem."""
    max_retries: int = 2
    """Recovery attempts after a failed subproblem before giving up."""
    fallback_methods: tuple[str, ...] = ("scholtes_eq", "fb")
    """Reformulations tried in turn, from the original start, when the requested one fails
    (``()`` disables the recovery). Names: those of :data:`REFORMULATIONS`."""
    ipopt_options: dict[str, Any] = field(default_factory=dict)
    """Extra IPOPT options by IPOPT name (``{"linear_solver": "mumps"}``); validated by IPOPT."""
    path_options: dict[str, Any] = field(default_factory=dict)
    """Extra PATH options by PATH name (``{"major_iteration_limit": 500}``)."""
    verbose: bool = False
    """Print the homotopy trace and the inner solver's output."""

    def __post_init__(self) -> None:
        checks = [
            (self.tol > 0 and math.isfinite(self.tol), "tol must be a positive finite number"),
            (self.max_outer >= 1, "max_outer must be >= 1"),
            (self.time_limit is None or self.time_limit > 0, "time_limit must be > 0 or None"),
            (self.sigma0 > 0 and math.isfinite(self.sigma0), "sigma0 must be positive and finite"),
            (0 < self.sigma_factor < 1, "sigma_factor must lie in (0, 1)"),
            (0 < self.sigma_min < self.sigma0, "sigma_min must lie in (0, sigma0)"),
            (self.rho0 > 0 and self.rho_factor > 1, "rho0 must be > 0 and rho_factor > 1"),
            (self.polish_trigger > 0, "polish_trigger must be > 0"),
            (0 < self.inner_tol_factor <= 1, "inner_tol_factor must lie in (0, 1]"),
            (self.max_inner_iter >= 1, "max_inner_iter must be >= 1"),
            (self.max_retries >= 0, "max_retries must be >= 0"),
        ]
        for ok, msg in checks:
            if not ok:
                raise MCPInputError(f"SolveOptions: {msg}")
        bad = [m for m in self.fallback_methods if m not in REFORMULATIONS]
        if bad or isinstance(self.fallback_methods, str):
            raise MCPInputError(
                f"SolveOptions.fallback_methods: unknown reformulations {bad or self.fallback_methods!r}; "
                f"valid: {', '.join(REFORMULATIONS)}"
            )
        for name in ("ipopt_options", "path_options"):
            if not isinstance(getattr(self, name), dict):
                raise MCPInputError(f"SolveOptions.{name} must be a dict of option names to values")

    @classmethod
    def names(cls) -> list[str]:
        """Valid option names."""
        return [f.name for f in fields(cls)]

    @classmethod
    def from_kwargs(cls, base: SolveOptions | None = None, **kwargs: Any) -> SolveOptions:
        """Options from keyword arguments; unknown names raise with a suggestion."""
        valid = cls.names()
        for key in kwargs:
            if key not in valid:
                hint = difflib.get_close_matches(key, valid, n=1)
                extra = f" Did you mean {hint[0]!r}?" if hint else ""
                raise UnknownOptionError(f"unknown option {key!r}; valid options: {valid}.{extra}")
        return replace(base or cls(), **kwargs)
