r"""Closed forms of the ECP slider (Xie and Chakraborty §5): quasi-static (38-40), pure translation (46-49).

**Quasi-static pushing** (eqs 33-40), isotropic ellipsoid :math:`e_t = e_o`,
:math:`c = e_r/e_t`, pusher at :math:`(x_c, y_c)` with velocity :math:`(v_{px}, v_{py})`,
:math:`d_x = x_c - q_x`, :math:`d_y = y_c - q_y`:

.. math::

    v_x = \frac{(c^2 + d_x^2) v_{px} + d_x d_y v_{py}}{c^2 + d_x^2 + d_y^2},\quad
    v_y = \frac{(c^2 + d_y^2) v_{py} + d_x d_y v_{px}}{c^2 + d_x^2 + d_y^2},\quad
    w_z = \frac{d_x v_y - d_y v_x}{c^2}.

**Pure translation** (:math:`w_z = 0`, :math:`p_r = 0`, eqs 41-49), isotropic
:math:`e_t = e_o = e`, :math:`s = m v^u + p^u` (momentum after the applied impulse):
eqs 41-43 give :math:`m\sigma + e^2\mu p_n = e\lVert s\rVert`, hence

.. math::

    (p_t, p_o)^{u+1} = -e\,\mu p_n\, s/\lVert s\rVert,\qquad
    v^{u+1} = (p^{u+1} + p^u)/m + v^u .

The paper prints :math:`e^2` and :math:`\lVert s\rVert` in eqs 45-47 in place of :math:`e`
and :math:`e\lVert s\rVert`: its eq 44 drops the factors :math:`e_t^2, e_o^2` that eq 43
brings in. Both agree for the paper's :math:`e_t = e_o = 1`; the form above also satisfies
eqs 41-43 when :math:`e \ne 1` (tested). The step is valid while :math:`\sigma^{u+1} > 0`,
i.e. :math:`\lVert s\rVert > e^2\mu p_n/e = e\mu p_n`; otherwise the slider stops in the
step (:math:`v^{u+1} = 0`, stick), which :func:`pure_translation_trajectory` applies.
The ECP of a translating slider sits at :math:`a - q = e\mu q_z\, s/\lVert s\rVert`
(eqs 11-12): ahead of the CM by :math:`e\mu q_z`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError
from mcpkit.models.ecp.params import SliderParams

__all__ = [
    "PureTranslation",
    "pure_translation_step",
    "pure_translation_trajectory",
    "quasi_static_velocity",
]


def _vec2(name: str, v: object) -> np.ndarray:
    try:
        a = np.asarray(v, dtype=float)
    except (TypeError, ValueError):
        raise MCPInputError(f"{name} must be numeric, got {v!r}") from None
    if a.shape[-1:] != (2,):
        raise ShapeError(f"{name} must have a trailing dimension of 2, got shape {a.shape}")
    if not np.isfinite(a).all():
        raise NonFiniteError(f"{name} contains NaN or inf")
    return a


def _isotropic(params: SliderParams) -> float:
    if params.e_t != params.e_o:
        raise MCPInputError(
            f"the closed forms assume isotropic friction e_t == e_o (got {params.e_t}, {params.e_o})"
        )
    return params.e_t


def quasi_static_velocity(
    params: SliderParams, contact: object, pusher_velocity: object, cm: object = (0.0, 0.0)
) -> np.ndarray:
    r"""Slider twist :math:`(v_x, v_y, w_z)` under a sticking quasi-static pusher, eqs 38-40.

    Parameters
    ----------
    params
        Uses :math:`c = e_r / e_t` (requires :math:`e_t = e_o`).
    contact
        Pusher contact point :math:`(x_c, y_c)` [m], shape ``(..., 2)``.
    pusher_velocity
        :math:`(v_{px}, v_{py})` [m/s], shape ``(..., 2)``.
    cm
        CM position :math:`(q_x, q_y)` [m].

    Returns
    -------
    numpy.ndarray
        Shape ``(..., 3)``.
    """
    e = _isotropic(params)
    c2 = (params.e_r / e) ** 2
    xc = _vec2("contact", contact)
    vp = _vec2("pusher_velocity", pusher_velocity)
    q = _vec2("cm", cm)
    d = xc - q
    dx, dy = d[..., 0], d[..., 1]
    den = c2 + dx**2 + dy**2
    vx = ((c2 + dx**2) * vp[..., 0] + dx * dy * vp[..., 1]) / den
    vy = ((c2 + dy**2) * vp[..., 1] + dx * dy * vp[..., 0]) / den
    wz = (dx * vy - dy * vx) / c2
    return np.stack(np.broadcast_arrays(vx, vy, wz), axis=-1)


def pure_translation_step(
    params: SliderParams, v: object, p_app: object = (0.0, 0.0)
) -> tuple[np.ndarray, np.ndarray, float]:
    r"""One step of pure translation, eqs 46-49 (in the corrected form of the module docstring).

    Parameters
    ----------
    v
        :math:`(v_x^u, v_y^u)` [m/s].
    p_app
        Applied impulse :math:`(p_x^u, p_y^u)` [N s] of the step.

    Returns
    -------
    (p, v_next, sigma)
        Friction impulse :math:`(p_t, p_o)^{u+1}`, velocity :math:`v^{u+1}`, and
        :math:`\sigma^{u+1} = (e\lVert s\rVert - e^2\mu p_n)/m`. A non-positive
        :math:`\sigma` means the sliding formula is outside its validity (the slider stops
        within the step); the values are returned as the formula gives them.
    """
    e = _isotropic(params)
    vv = _vec2("v", v)
    pa = _vec2("p_app", p_app)
    s = params.m * vv + pa
    ns = float(np.linalg.norm(s))
    if ns == 0.0:
        return np.zeros(2), vv + pa / params.m, -(e**2) * params.mu * params.p_n / params.m
    p = -e * params.mu * params.p_n * s / ns
    v1 = (p + pa) / params.m + vv
    sigma = (e * ns - e**2 * params.mu * params.p_n) / params.m
    return p, v1, sigma


@dataclass(frozen=True)
class PureTranslation:
    """Closed-form pure-translation trajectory.

    Attributes
    ----------
    t
        Times ``(N+1,)``.
    v
        Velocities ``(N+1, 2)``.
    q
        CM positions ``(N+1, 2)``, :math:`q^{u+1} = q^u + h v^{u+1}`.
    p
        Friction impulses ``(N, 2)``.
    sigma
        Slip speed ``(N,)`` (0 once stuck).
    stop_step
        First step at which the slider sticks (``None`` if it slides throughout).
    """

    t: np.ndarray
    v: np.ndarray
    q: np.ndarray
    p: np.ndarray
    sigma: np.ndarray
    stop_step: int | None


def pure_translation_trajectory(
    params: SliderParams, v0: object, n_steps: int, q0: object = (0.0, 0.0)
) -> PureTranslation:
    r"""Free pure translation (no applied load) by eqs 46-49 until the slider stops.

    While :math:`\lVert m v^u\rVert > e\mu p_n` the step is eqs 46-49; at the first step
    where it is not, friction can absorb the whole momentum inside the ellipsoid, so
    :math:`p^{u+1} = -m v^u`, :math:`v^{u+1} = 0` and the slider stays at rest.
    """
    if not isinstance(n_steps, (int, np.integer)) or n_steps < 1:
        raise MCPInputError(f"n_steps must be a positive integer, got {n_steps!r}")
    e = _isotropic(params)
    v = np.zeros((n_steps + 1, 2))
    q = np.zeros((n_steps + 1, 2))
    v[0] = _vec2("v0", v0)
    q[0] = _vec2("q0", q0)
    p = np.zeros((n_steps, 2))
    sig = np.zeros(n_steps)
    stop: int | None = None
    for k in range(n_steps):
        if stop is None and np.linalg.norm(params.m * v[k]) > e * params.mu * params.p_n:
            p[k], v[k + 1], sig[k] = pure_translation_step(params, v[k])
        else:
            stop = k if stop is None else stop
            p[k] = -params.m * v[k]
            v[k + 1] = 0.0
        q[k + 1] = q[k] + params.h * v[k + 1]
    t = params.h * np.arange(n_steps + 1)
    return PureTranslation(t, v, q, p, sig, stop)
