r"""The 4-unknown quadratic ECP step model (Xie and Chakraborty eqs 29-32) and its linear updates.

Unknowns per step: the friction impulses :math:`p_t, p_o, p_r` and the slip speed
:math:`\sigma` at the equivalent contact point (ECP). With
:math:`v_x^{u+1} = v_x^u + (p_t + p_x)/m`, :math:`v_y^{u+1} = v_y^u + (p_o + p_y)/m` and
:math:`w_z^{u+1} = w_z^u + (p_r + p_{z\tau})/I_z` (eqs 26-28), the model is (eqs 29-32)

.. math::

    0 &= \mu p_n e_t^2\,\bigl[v_x^{u+1} + p_o q_z w_z^{u+1}/p_n\bigr] + p_t\sigma, \\
    0 &= \mu p_n e_o^2\,\bigl[v_y^{u+1} - p_t q_z w_z^{u+1}/p_n\bigr] + p_o\sigma, \\
    0 &= \mu p_n e_r^2\, w_z^{u+1} + p_r\sigma, \\
    0 &= \mu^2 p_n^2 - (p_t/e_t)^2 - (p_o/e_o)^2 - (p_r/e_r)^2 .

It assumes sliding, :math:`\sigma > 0`. After the solve the state and the ECP follow
linearly: eqs 26-28 for the velocities, :math:`q^{u+1} = q^u + h\,v^{u+1}`, and (eqs 11-12)

.. math::

    a_x - q_x = -p_t q_z / p_n, \qquad a_y - q_y = -p_o q_z / p_n .

For conditioning, the first three equations are divided by :math:`\mu p_n` and the last by
:math:`\mu^2 p_n^2` (same roots). The physical constants are MCP parameters, so the
declaration prints as the paper's equations and one built solver serves every step. The rows are
block expressions (:mod:`mcpkit.problems.blocks`) with the velocities of eqs 26-28 as named definitions
:math:`v_x^{u+1}, v_y^{u+1}, w_z^{u+1}`, so ``mcp.to_text()`` prints eqs 29-32 with a "where" list.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError
from mcpkit.models.arrays import NUMPY, ArrayNamespace
from mcpkit.models.ecp.params import AppliedLoad, Load, SliderParams
from mcpkit.models.stepping import DeclaredStep
from mcpkit.problems.blocks import Expr, Named, Param, named
from mcpkit.problems.mcp import MCP
from mcpkit.solving.result import MCPResult

__all__ = [
    "QuadraticECPStep",
    "StepImpulses",
    "build_quadratic_mcp",
    "declare_slider_parameters",
    "ecp_offset",
    "friction_guess",
    "linear_update",
    "slider_update",
]

# (block name, LaTeX stem) of every scalar parameter shared by both ECP models.
_PARAMS: tuple[tuple[str, str], ...] = (
    ("v_x", r"v^{u}_{x}"),
    ("v_y", r"v^{u}_{y}"),
    ("w_z", r"w^{u}_{z}"),
    ("p_x", r"p^{u}_{x}"),
    ("p_y", r"p^{u}_{y}"),
    ("p_ztau", r"p^{u}_{z\tau}"),
    ("m", "m"),
    ("I_z", r"I_{z}"),
    ("mu", r"\mu"),
    ("e_t", r"e_{t}"),
    ("e_o", r"e_{o}"),
    ("e_r", r"e_{r}"),
    ("q_z", r"q_{z}"),
    ("p_nbar", r"\bar{p}_{n}"),
)


def declare_slider_parameters(mcp: MCP, params: SliderParams) -> dict[str, Param]:
    r"""Declare the scalar parameters of one ECP step on ``mcp``; return them (block expressions) by name.

    ``p_nbar`` is the reference normal impulse :math:`\bar p_n = m g h` (eq 8 times h).
    """
    values = physical_values(params)
    out: dict[str, Param] = {}
    for name, tex in _PARAMS:
        out[name] = mcp.add_parameter_block(name, 1, value=values.get(name, 0.0), latex=tex)
    return out


def physical_values(params: SliderParams) -> dict[str, float]:
    """Values of the constant (non-state) parameter blocks."""
    return {
        "m": params.m,
        "I_z": params.I_z,
        "mu": params.mu,
        "e_t": params.e_t,
        "e_o": params.e_o,
        "e_r": params.e_r,
        "q_z": params.q_z,
        "p_nbar": params.p_n,
    }


def next_velocities(s: dict[str, Param], pt: Expr, po: Expr, pr: Expr) -> tuple[Named, Named, Named]:
    r"""Eqs 26-28 as named definitions :math:`v_x^{u+1} = v_x^u + (p_t + p_x^u)/m`, :math:`v_y^{u+1}`,
    :math:`w_z^{u+1} = w_z^u + (p_r + p_{z\tau}^u)/I_z`."""
    return (
        named("v_x_next", s["v_x"] + (pt + s["p_x"]) / s["m"], r"v^{u+1}_{x}"),
        named("v_y_next", s["v_y"] + (po + s["p_y"]) / s["m"], r"v^{u+1}_{y}"),
        named("w_z_next", s["w_z"] + (pr + s["p_ztau"]) / s["I_z"], r"w^{u+1}_{z}"),
    )


def friction_rows(s: dict[str, Param], pt: Expr, po: Expr, pr: Expr, sig: Expr, pn: Expr) -> list[Expr]:
    r"""Eqs 29-31 multiplied through by :math:`p_n` where it divides, over :math:`\mu\bar p_n`.

    Returns :math:`[(\mu e_t^2 (p_n v_x^{u+1} + p_o q_z w_z^{u+1}) + p_t\sigma)/(\mu\bar p_n),\ \dots]`
    (block expressions). With :math:`p_n = \bar p_n` these are eqs 29-31 divided by :math:`\mu p_n`.
    """
    vx1, vy1, wz1 = next_velocities(s, pt, po, pr)
    scale = s["mu"] * s["p_nbar"]
    return [
        (s["mu"] * s["e_t"] ** 2 * (pn * vx1 + po * s["q_z"] * wz1) + pt * sig) / scale,
        (s["mu"] * s["e_o"] ** 2 * (pn * vy1 - pt * s["q_z"] * wz1) + po * sig) / scale,
        (s["mu"] * s["e_r"] ** 2 * pn * wz1 + pr * sig) / scale,
    ]


def ellipsoid_slack(s: dict[str, Param], pt: Expr, po: Expr, pr: Expr, pn: Expr) -> Expr:
    r"""Scaled ellipsoid slack (eqs 20, 32):
    :math:`[\mu^2 p_n^2 - (p_t/e_t)^2 - (p_o/e_o)^2 - (p_r/e_r)^2]/(\mu\bar p_n)^2`."""
    return (s["mu"] ** 2 * pn**2 - (pt / s["e_t"]) ** 2 - (po / s["e_o"]) ** 2 - (pr / s["e_r"]) ** 2) / (
        s["mu"] * s["p_nbar"]
    ) ** 2


def build_quadratic_mcp(params: SliderParams) -> MCP:
    r"""Declare eqs 29-32 as a square system of free variables (an MCP with no bounds).

    Variable blocks ``p_t``, ``p_o``, ``p_r`` (eqs 29-31) and ``sigma`` (eq 32), all free;
    parameter blocks carry the state :math:`(v^u, w^u)`, the applied impulses and the
    physical constants.

    Raises
    ------
    MCPInputError
        If ``params.mu == 0`` (no friction: eq 32 has no sliding solution with
        :math:`\sigma > 0`; the motion is free flight).
    """
    if not isinstance(params, SliderParams):
        raise MCPInputError(f"expected SliderParams, got {type(params).__name__}")
    if params.mu == 0:
        raise MCPInputError("the ECP models need mu > 0 (mu = 0 is frictionless free motion)")
    mcp = MCP("ecp_quadratic")
    free = {"lb": -math.inf, "ub": math.inf}
    pt = mcp.add_variable_block("p_t", 1, latex=r"p_{t}", **free)
    po = mcp.add_variable_block("p_o", 1, latex=r"p_{o}", **free)
    pr = mcp.add_variable_block("p_r", 1, latex=r"p_{r}", **free)
    s = declare_slider_parameters(mcp, params)
    pn = s["p_nbar"]
    sig = mcp.add_variable_block("sigma", 1, start=1.0, latex=r"\sigma", **free)
    mcp.add_functions("sigma", ellipsoid_slack(s, pt, po, pr, pn))
    rows = friction_rows(s, pt, po, pr, sig, pn)
    for name, row in zip(("p_t", "p_o", "p_r"), rows, strict=True):
        mcp.add_functions(name, row)
    return mcp


@dataclass(frozen=True)
class StepImpulses:
    """Friction impulses of one step [N s, N s, N m s] and the normal impulse [N s]."""

    p_t: float
    p_o: float
    p_r: float
    p_n: float


def ecp_offset(params: SliderParams, p_t: Any, p_o: Any, p_n: Any | None = None) -> np.ndarray:
    r"""ECP relative to the CM in the world frame, eqs 11-12:
    :math:`a - q = -(p_t, p_o)\,q_z / p_n`.

    Works elementwise on arrays; returns shape ``(..., 2)``.
    """
    pn = params.p_n if p_n is None else np.asarray(p_n, dtype=float)
    pt = np.asarray(p_t, dtype=float)
    po = np.asarray(p_o, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.stack([-pt * params.q_z / pn, -po * params.q_z / pn], axis=-1)


def slider_update(xp: ArrayNamespace, params: SliderParams, x: Any, p_t: Any, p_o: Any, p_r: Any,
                  applied: Any, m: Any = None, I_z: Any = None) -> Any:  # fmt: skip
    r"""State at :math:`u+1`: eqs 26-28 for the velocities, then :math:`q^{u+1} = q^u + h\nu^{u+1}`.

    .. math::
        \nu^{u+1} = \bigl(v_x^u + (p_t + p_x)/m,\ v_y^u + (p_o + p_y)/m,\
        w_z^u + (p_r + p_{z\tau})/I_z\bigr)

    Written once against the array namespace ``xp`` (NumPy for simulation, CasADi for horizons).

    Parameters
    ----------
    x
        :math:`(q_x, q_y, \theta_z, v_x, v_y, w_z)` at step :math:`u`.
    p_t, p_o, p_r
        The step's friction impulses.
    applied
        Applied impulses :math:`(p_x, p_y, p_{z\tau})` of the step.
    m, I_z
        Mass and yaw inertia when they differ from ``params`` (numbers or CasADi symbols; see
        :meth:`SliderStep.constants`).
    """
    m = params.m if m is None else m
    I_z = params.I_z if I_z is None else I_z
    v = xp.vector(
        [
            x[3] + (p_t + applied[0]) / m,
            x[4] + (p_o + applied[1]) / m,
            x[5] + (p_r + applied[2]) / I_z,
        ]
    )
    return xp.concat([x[:3] + params.h * v, v])


def linear_update(
    params: SliderParams, state: np.ndarray, imp: StepImpulses, applied: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    r"""State at :math:`u+1` (:func:`slider_update`: eqs 26-28, then :math:`q^{u+1} = q^u + h\nu^{u+1}`)
    and the world-frame ECP :math:`a^{u+1} = q^{u+1} - (p_t, p_o)q_z/p_n` (eqs 11-12).

    Parameters
    ----------
    state
        :math:`(q_x, q_y, \theta_z, v_x, v_y, w_z)` at step :math:`u`.
    imp
        The step's impulses.
    applied
        Applied impulses :math:`(p_x, p_y, p_{z\tau})` of the step.
    """
    x = np.asarray(state, dtype=float)
    pa = np.asarray(applied, dtype=float)
    xn = slider_update(NUMPY, params, x, imp.p_t, imp.p_o, imp.p_r, pa)
    ecp = xn[:2] + ecp_offset(params, imp.p_t, imp.p_o, imp.p_n)
    return xn, ecp


def friction_guess(params: SliderParams, state: np.ndarray, applied: np.ndarray) -> np.ndarray:
    r"""Starting point :math:`(p_t, p_o, p_r, \sigma)` from the continuous model at :math:`u`.

    Takes the ECP under the CM and the predicted velocity
    :math:`\hat\nu = \nu^u + (p_x, p_y)/m, w^u + p_{z\tau}/I_z`; the maximum-dissipation wrench
    is :math:`p = -\mu p_n E^2\hat\nu/\lVert E\hat\nu\rVert` (eqs 17-21 with
    :math:`E = \mathrm{diag}(e_t, e_o, e_r)`), and :math:`\sigma` the post-step slip speed
    estimate.
    """
    x = np.asarray(state, dtype=float)
    pa = np.asarray(applied, dtype=float)
    E = np.array([params.e_t, params.e_o, params.e_r])
    nu = np.array([x[3] + pa[0] / params.m, x[4] + pa[1] / params.m, x[5] + pa[2] / params.I_z])
    nrm = float(np.linalg.norm(E * nu))
    if nrm == 0.0:
        return np.array([0.0, 0.0, 0.0, 1e-3])
    p = -params.mu * params.p_n * E**2 * nu / nrm
    inv = np.array([params.m, params.m, params.I_z])
    sig = max(float(np.linalg.norm(E * (nu + p / inv))), 1e-3)
    return np.concatenate([p, [sig]])


def _check_load(lam: Any, t: float) -> np.ndarray:
    lam = np.asarray(lam, dtype=float).reshape(-1)
    if lam.shape != (3,):
        raise ShapeError(
            f"applied load must return 3 values (lambda_x, lambda_y, lambda_ztau), got {lam.shape}"
        )
    if not np.isfinite(lam).all():
        raise NonFiniteError(f"applied load at t={t} is not finite: {lam}")
    return lam


class SliderStep(DeclaredStep):
    r"""What the ECP step models share: the step map, written once
    (a :class:`~mcpkit.models.stepping.DeclaredStep`).

    State :math:`x = (q_x, q_y, \theta_z, v_x, v_y, w_z)`; the applied load (force and yaw moment,
    evaluated at :math:`t_u`) enters as impulses :math:`p_{\rm app} = h\lambda`. The map is

    .. math::
        P(x, u, \theta, t) = (v_x, v_y, w_z, p_{\rm app}, c),\qquad
        \Phi(x, z, u, \theta, t) = \text{eqs 26-28 and } q^{u+1} = q^u + h\nu^{u+1}
        \ (:func:`slider_update`),

    with :math:`c` the constants of :meth:`constants` (and :math:`\bar p_n = m g h`),
    evaluated on NumPy by :func:`~mcpkit.models.stepping.simulate` and on CasADi by
    :meth:`~mcpkit.mpec.step.StepSpec.from_model`. Subclasses set :attr:`kind` and
    :meth:`build`.

    Parameters
    ----------
    params
        The slider.
    load
        Optional applied load: a :class:`~mcpkit.models.ecp.params.Load` (``wrench(xp, t, state,
        u, theta)``; its ``n_control``/``n_design`` become the model's inputs, bound with
        :meth:`~mcpkit.models.stepping.DeclaredStep.with_inputs`), or a plain NumPy callable
        ``load(t, state) -> (lambda_x, lambda_y, lambda_ztau)`` (simulation only).
    """

    kind = ""
    n_state = 6

    def __init__(self, params: SliderParams, load: Load | AppliedLoad | None = None) -> None:
        if load is not None and not (isinstance(load, Load) or callable(load)):
            raise MCPInputError("load must be a Load (wrench(xp, ...)) or callable load(t, state), or None")
        self.params = params
        self.load = load
        self.h = params.h
        self.n_control = int(load.n_control) if isinstance(load, Load) else 0
        self.n_design = int(load.n_design) if isinstance(load, Load) else 0
        self.mcp = self.build(params)
        self._friction = {b.name: b.slice.start for b in self.mcp.blocks}

    @staticmethod
    def build(params: SliderParams) -> MCP:
        """The step MCP of this model."""
        raise NotImplementedError

    def check_state(self, state: np.ndarray) -> np.ndarray:
        """Validated state (:meth:`SliderParams.check_state`)."""
        return self.params.check_state(state)

    def applied_impulse(self, xp: ArrayNamespace, t: Any, x: Any, u: Any, theta: Any) -> Any:
        r"""Applied impulses :math:`(p_x, p_y, p_{z\tau}) = h\lambda_{app}(t, x, u, \theta)`."""
        if self.load is None:
            return xp.vector([0.0, 0.0, 0.0])
        if isinstance(self.load, Load):
            lam = self.load.wrench(xp, t, x, u, theta)
        elif xp.numeric:
            lam = self.load(t, x)
        else:
            raise MCPInputError(
                "the load is a NumPy callable load(t, state); a horizon step needs a Load written "
                "against an array namespace (wrench(xp, t, state, u, theta))"
            )
        if xp.numeric:
            lam = _check_load(lam, t)
        return self.h * lam

    def applied(self, t: float, state: np.ndarray, k: int = 0) -> np.ndarray:
        r"""Applied impulses :math:`(p_x, p_y, p_{z\tau}) = h\lambda_{app}(t_u)` of step ``k`` (NumPy)."""
        u, th = self.inputs(k)
        return np.asarray(self.applied_impulse(NUMPY, t, np.asarray(state, dtype=float), u, th), dtype=float)

    def constants(self) -> dict[str, Any]:
        r"""The slider's constants the step map reads (:meth:`~mcpkit.models.stepping.DeclaredStep.constant`):
        ``mu``, ``m``, ``I_z``, ``e_t``, ``e_o``, ``e_r`` from :attr:`params`.

        They set the MCP's blocks of those names (and :math:`\bar p_n = m g h`) every step, and
        ``m``, ``I_z`` enter the update (eqs 26-28), so a simulation can be differentiated by them
        (:func:`~mcpkit.models.stepping_gradient.simulate_with_gradient`).
        """
        P = self.params
        return {"mu": P.mu, "m": P.m, "I_z": P.I_z, "e_t": P.e_t, "e_o": P.e_o, "e_r": P.e_r}

    def with_constants(self, **values: Any) -> Any:
        """A copy reading ``values`` for the named constants; numbers also replace them in :attr:`params`
        (so :func:`~mcpkit.models.ecp.simulation.run_ecp`'s post-processing agrees)."""
        out = super().with_constants(**values)
        if all(isinstance(v, (int, float, np.integer, np.floating)) for v in values.values()):
            out.params = replace(self.params, **{k: float(v) for k, v in values.items()})
            out._constant_values = None
        return out

    def step_parameters(self, xp: ArrayNamespace, x: Any, u: Any, theta: Any, t: Any) -> dict[str, Any]:
        """State, applied-impulse and constant parameter blocks (:math:`P`, class docstring)."""
        pa = self.applied_impulse(xp, t, x, u, theta)
        c = self.constant
        out = {"v_x": x[3], "v_y": x[4], "w_z": x[5], "p_x": pa[0], "p_y": pa[1], "p_ztau": pa[2]}
        out.update({k: c(k) for k in ("mu", "m", "I_z", "e_t", "e_o", "e_r")})
        out["p_nbar"] = c("m") * self.params.g * self.params.h
        return out

    def step_update(self, xp: ArrayNamespace, x: Any, z: Any, u: Any, theta: Any, t: Any) -> Any:
        r"""State at :math:`t + h` (:math:`\Phi`, eqs 26-28)."""
        pa = self.applied_impulse(xp, t, x, u, theta)
        i, c = self._friction, self.constant
        return slider_update(xp, self.params, x, z[i["p_t"]], z[i["p_o"]], z[i["p_r"]], pa, c("m"), c("I_z"))


class QuadraticECPStep(SliderStep):
    r""":class:`~mcpkit.models.stepping.StepModel` of the quadratic ECP model (eqs 29-32).

    See :class:`SliderStep` for the state, the load and the step map.
    """

    kind = "quadratic"
    build = staticmethod(build_quadratic_mcp)

    def set_start(self, state: np.ndarray, t: float = 0.0) -> None:
        """Put :func:`friction_guess` into the MCP's starting point (for the first step)."""
        g = friction_guess(self.params, state, self.applied(t, state))
        self.mcp.set_start(p_t=g[0], p_o=g[1], p_r=g[2], sigma=g[3])

    def impulses(self, result: MCPResult) -> StepImpulses:
        """The step's impulses read from a solve result."""
        return StepImpulses(
            float(result.block("p_t")[0]),
            float(result.block("p_o")[0]),
            float(result.block("p_r")[0]),
            self.params.p_n,
        )

    def sigma(self, result: MCPResult) -> float:
        r"""Slip speed :math:`\sigma^{u+1}`."""
        return float(result.block("sigma")[0])
