"""Parameters of the planar LuGre friction models (Arslan Waltersson and Karayiannidis, Tables I and III).

The steady-state friction coefficient (eq 2) is

    g(v) = mu_C + (mu_S - mu_C) exp(-|v / v_s|^gamma),

the bristle force per unit normal force is ``sigma0 z + sigma1 dz/dt + sigma2 v`` (eqs 3, 9) and
the Elasto-Plastic breakaway deflection is ``z_ba = s_ba z_max`` (eqs 17-18).

Table I lists two parameter sets: ``p = 0`` is Coulomb friction realised as a very stiff bristle
(``mu_C = mu_S = 1``, no viscous term), used to pre-compute the limit surface (Section V-D);
``p = 1`` is the default simulation set with a Stribeck peak and viscous friction.
Table III lists the simulation settings (LSODA tolerances, contact size, grid size, ``N_ls``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mcpkit.errors import BoundsError, NonFiniteError, UnknownOptionError
from mcpkit.solving.options import Choice

__all__ = [
    "LuGreParams",
    "SimulationSettings",
    "Integrator",
    "LUGRE_P0",
    "LUGRE_P1",
    "TABLE_I",
    "TABLE_III",
    "table_i",
]


def _check_finite(name: str, value: float) -> None:
    if not math.isfinite(value):
        raise NonFiniteError(f"{name} must be finite, got {value!r}")


@dataclass(frozen=True)
class LuGreParams:
    """LuGre friction parameters of Table I (Arslan Waltersson and Karayiannidis), per unit normal force.

    ``g(v) = mu_c + (mu_s - mu_c) exp(-|v/v_s|^gamma)`` (eq 2); force per unit normal force
    ``sigma0 z + sigma1 z' + sigma2 v`` (eq 9); breakaway deflection ``z_ba = s_ba z_max`` (eq 18).
    """

    sigma0: float = 1e6
    """Bristle stiffness sigma_0 [1/m] (amended, i.e. per unit normal force)."""
    sigma1: float = 8e2
    """Bristle damping sigma_1 [s/m]."""
    sigma2: float = 0.2
    """Viscous friction coefficient sigma_2 [s/m]."""
    mu_c: float = 1.0
    """Coulomb friction coefficient mu_C [-]."""
    mu_s: float = 1.2
    """Static friction coefficient mu_S [-] (mu_S >= mu_C)."""
    gamma: float = 2.0
    """Stribeck exponent gamma [-]."""
    v_s: float = 1e-3
    """Stribeck velocity v_s [m/s]."""
    s_ba: float = 0.9
    """Breakaway ratio s_ba [-] in (0, 1): z_ba = s_ba z_max (Elasto-Plastic model)."""

    def __post_init__(self) -> None:
        for name in ("sigma0", "sigma1", "sigma2", "mu_c", "mu_s", "gamma", "v_s", "s_ba"):
            _check_finite(name, float(getattr(self, name)))
        if self.sigma0 <= 0:
            raise BoundsError(f"sigma0 must be > 0, got {self.sigma0}")
        if self.sigma1 < 0 or self.sigma2 < 0:
            raise BoundsError("sigma1 and sigma2 must be >= 0")
        if self.mu_c <= 0:
            raise BoundsError(f"mu_c must be > 0, got {self.mu_c}")
        if self.mu_s < self.mu_c:
            raise BoundsError(f"mu_s ({self.mu_s}) must be >= mu_c ({self.mu_c})")
        if self.gamma <= 0 or self.v_s <= 0:
            raise BoundsError("gamma and v_s must be > 0")
        if not 0.0 < self.s_ba < 1.0:
            raise BoundsError(f"s_ba must lie in (0, 1), got {self.s_ba}")

    def g(self, v: np.ndarray | float) -> np.ndarray:
        """Steady-state friction coefficient g(|v|) of eq (2), element-wise."""
        v = np.abs(np.asarray(v, dtype=float))
        return self.mu_c + (self.mu_s - self.mu_c) * np.exp(-((v / self.v_s) ** self.gamma))


LUGRE_P0 = LuGreParams(sigma0=1e6, sigma1=8e2, sigma2=0.0, mu_c=1.0, mu_s=1.0, gamma=2.0, v_s=1e-3, s_ba=0.9)
"""Table I, p = 0: Coulomb-like (mu_C = mu_S = 1, no viscous friction); used for limit surfaces."""

LUGRE_P1 = LuGreParams(sigma0=1e6, sigma1=8e2, sigma2=0.2, mu_c=1.0, mu_s=1.2, gamma=2.0, v_s=1e-3, s_ba=0.9)
"""Table I, p = 1: the default simulation parameters (Stribeck peak 1.2, viscous 0.2 s/m)."""

TABLE_I: tuple[LuGreParams, LuGreParams] = (LUGRE_P0, LUGRE_P1)
"""Table I of Arslan Waltersson and Karayiannidis, indexed by p."""


def table_i(p: int) -> LuGreParams:
    """Return the Table I parameter set ``p`` (0 or 1)."""
    if p not in (0, 1):
        raise UnknownOptionError(f"Table I has parameter sets p=0 and p=1, not p={p!r}")
    return TABLE_I[p]


class Integrator(Choice):
    """Time integrator used by the simulation helpers."""

    LSODA = "LSODA"
    """``scipy.integrate.solve_ivp(method="LSODA")`` with Table III tolerances (the paper)."""
    EULER = "euler"
    """Fixed-step explicit Euler, dt = 1e-5 s in the paper's accuracy studies (Section IV-C)."""
    BDF = "BDF"
    """``solve_ivp(method="BDF")`` (implicit, stiff) with an analytic, sparse CasADi Jacobian."""
    RADAU = "Radau"
    """``solve_ivp(method="Radau")`` (implicit Runge-Kutta) with an analytic, sparse Jacobian."""

    @property
    def is_solve_ivp(self) -> bool:
        """True for the adaptive ``scipy.integrate.solve_ivp`` methods (all but Euler)."""
        return self is not Integrator.EULER


@dataclass(frozen=True)
class SimulationSettings:
    """Simulation settings of Table III (the LuGre paper) plus the fixed step of Section IV-C."""

    params: LuGreParams = LUGRE_P1
    """Friction parameters (Table I, p = 1)."""
    solver: str = "LSODA"
    """ODE solver name passed to ``scipy.integrate.solve_ivp``."""
    atol: float = 1e-8
    """Absolute tolerance."""
    rtol: float = 1e-6
    """Relative tolerance."""
    max_step: float = 1e-3
    """Maximum solver step [s]."""
    contact_size: tuple[float, float] = (0.02, 0.02)
    """Side lengths of the square grid that holds the contact area [m]."""
    n_cells: int = 21
    """Cells per side of the N x N grid."""
    n_ls: int = 20
    """Pre-computation resolution N_ls (cells between 0 and pi/2 on the velocity sphere)."""
    fixed_dt: float = 1e-5
    """Fixed time step [s] used for the accuracy and timing studies (Section IV-C)."""
    output_dt: float = 1e-2
    """Sampling interval of recorded outputs [s] (the paper's 100 Hz control loop)."""

    def __post_init__(self) -> None:
        for name in ("atol", "rtol", "max_step", "fixed_dt", "output_dt"):
            value = float(getattr(self, name))
            _check_finite(name, value)
            if value <= 0:
                raise BoundsError(f"{name} must be > 0, got {value}")
        if self.n_cells < 1 or self.n_ls < 1:
            raise BoundsError("n_cells and n_ls must be >= 1")


TABLE_III = SimulationSettings()
"""Table III of Arslan Waltersson and Karayiannidis."""
