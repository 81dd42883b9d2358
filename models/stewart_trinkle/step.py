r"""Shared machinery of the Stewart–Trinkle step models (seed 004 eqs 9 and 15).

Both formulations are velocity-level: with impulses scaled to velocity units,
:math:`\beta = h\lambda/m_s` (:math:`m_s` the body mass), the Newton–Euler row of eqs (9)/(15)
divided by :math:`m_s` reads

.. math::
    \hat M\nu^{\ell+1} - b - W_n\beta_n - W_f\beta_f = 0,\qquad
    \hat M = M(q^\ell)/m_s,\quad b = \hat M\nu^\ell + h(\lambda_\mathrm{app}+\lambda_\mathrm{vp})/m_s,

and the non-penetration row, divided by :math:`h`,

.. math::
    0 \le \beta_n \perp \psi_n(q^\ell, t_{\ell+1})/h + W_n^T\nu^{\ell+1} \ge 0 .

Everything that depends on the state (:math:`\hat M, b, \psi_n/h, W_n, W_t, W_o, u_t, u_o, \mu`)
is an MCP *parameter* block, so one :class:`mcpkit.Solver` is built once and every step is
a warm parametric re-solve. The state vector is :math:`x = (q, \nu)`.

The step is declared at block level (:mod:`mcpkit.blocks`): :math:`\hat M` and the wrench
matrices :math:`W_n, W_t, W_o \in \mathbb{R}^{n_v\times n_c}` (one column per contact, as in the
paper) are matrix parameters, stored flattened row-major (``W.reshape(-1)``), and the function
blocks are written as the paper writes them, so ``mcp.to_text()`` prints eqs (9)/(15) with one
line per block whatever the number of contacts, and the lowering does one product per matrix.

Controls :math:`u` (optional, ``input_matrix`` :math:`B`) enter as the generalised force
:math:`Bu` added to :math:`\lambda_\mathrm{app}` for the step. The step map
:math:`P(x, u, t)` above and :math:`\Phi(x, z) = (q + hG(q)\nu^{\ell+1}, \nu^{\ell+1})` are
written once against an array namespace (:class:`~mcpkit.models.stepping.DeclaredStep`):
NumPy for :func:`~mcpkit.models.stepping.simulate`, CasADi for
:meth:`~mcpkit.mpec.horizon.StepSpec.from_model`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from mcpkit.blocks import Param
from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError
from mcpkit.models.arrays import ArrayNamespace
from mcpkit.models.stepping import DeclaredStep
from mcpkit.models.stewart_trinkle.bodies import Body
from mcpkit.models.stewart_trinkle.contact import Contact, ContactGeometry, contact_geometry
from mcpkit.problem import MCP


@dataclass
class StepSymbols:
    r"""Parameter blocks shared by the NCP and LCP declarations (block expressions).

    Shapes: :math:`\hat M \in \mathbb{R}^{n_v\times n_v}`, :math:`b \in \mathbb{R}^{n_v}`,
    :math:`W_n, W_t, W_o \in \mathbb{R}^{n_v\times n_c}`, and :math:`\psi_n/h, u_t, u_o, \mu \in
    \mathbb{R}^{n_c}`; ``Wo`` and ``uo`` are ``None`` for planar bodies.
    """

    Mhat: Param
    b: Param
    psi_h: Param
    Wn: Param
    Wt: Param
    Wo: Param | None
    ut: Param
    uo: Param | None
    mu: Param


class StewartTrinkleStep(DeclaredStep):
    r"""Base class of :class:`~.ncp.NCPStep` and :class:`~.lcp.LCPStep` (a declared ``StepModel``).

    Parameters
    ----------
    body
        The dynamic body (:class:`~.bodies.Particle`, :class:`~.bodies.PlanarBody` or
        :class:`~.bodies.RigidBody3D`).
    contacts
        Its potential point contacts (all surfaces of the body's dimension).
    h
        Time step :math:`h > 0` [s].
    input_matrix
        Optional :math:`B` of shape ``(nv, n_control)``: the controls :math:`u_k` of step
        :math:`k` add the generalised force :math:`Bu_k` (bind them with
        :meth:`~mcpkit.models.stepping.DeclaredStep.with_inputs`). ``None``: no controls.
    """

    formulation = "base"

    def __init__(self, body: Body, contacts: list[Contact], h: float, *, input_matrix: Any = None) -> None:
        if not isinstance(h, (int, float)) or not math.isfinite(h):
            raise NonFiniteError(f"time step h must be a finite number, got {h!r}")
        if h <= 0:
            raise MCPInputError(f"time step h must be positive, got {h!r}")
        if not contacts:
            raise MCPInputError("at least one contact is needed")
        for c in contacts:
            if not isinstance(c, Contact):
                raise MCPInputError(f"contacts must be Contact objects, got {type(c).__name__}")
            if c.surface.dim != body.dim:
                raise ShapeError(
                    f"a {c.surface.dim}-D surface cannot touch a {body.dim}-D body ({type(body).__name__})"
                )
        self.body = body
        self.contacts = list(contacts)
        self.h = float(h)
        self.nc = len(contacts)
        self.nv = body.nv
        self.nq = body.nq
        self.n_state = self.nq + self.nv
        self.input_matrix = self._input_matrix(input_matrix)
        self.n_control = 0 if self.input_matrix is None else int(self.input_matrix.shape[1])
        self.three_d = body.dim == 3
        self.mass_scale = float(body.mass)
        self.mcp = MCP(f"stewart_trinkle_{self.formulation}")
        self.sym = self._declare_parameters()
        self._declare()
        self.mcp.validate()
        self.last_geometry: ContactGeometry | None = None

    def _input_matrix(self, B: Any) -> np.ndarray | None:
        if B is None:
            return None
        try:
            a = np.asarray(B, dtype=float)
        except (TypeError, ValueError):
            raise MCPInputError(f"input_matrix must be numeric, got {B!r}") from None
        if a.ndim == 1:
            a = a.reshape(-1, 1)
        if a.ndim != 2 or a.shape[0] != self.nv or a.shape[1] < 1:
            raise ShapeError(
                f"input_matrix must have shape (nv, n_control) = ({self.nv}, >= 1), got {a.shape}"
            )
        if not np.isfinite(a).all():
            raise NonFiniteError("input_matrix contains NaN or inf")
        return a

    # ------------------------------------------------------------------ declaration
    def _declare_parameters(self) -> StepSymbols:
        m, nc, nv = self.mcp, self.nc, self.nv
        vv, vc, c = ("n_v", "n_v"), ("n_v", "n_c"), "n_c"
        Mhat = m.add_parameter_block("Mhat", (nv, nv), np.eye(nv), latex=r"\hat M", dim=vv)
        b = m.add_parameter_block("b", nv, latex="b", dim="n_v")
        psi_h = m.add_parameter_block("psi_h", nc, latex=r"\psi_n/h", dim=c)
        Wn = m.add_parameter_block("Wn", (nv, nc), latex="W_n", dim=vc)
        Wt = m.add_parameter_block("Wt", (nv, nc), latex="W_t", dim=vc)
        Wo = m.add_parameter_block("Wo", (nv, nc), latex="W_o", dim=vc) if self.three_d else None
        ut = m.add_parameter_block("ut", nc, latex="u_t", dim=c)
        uo = m.add_parameter_block("uo", nc, latex="u_o", dim=c) if self.three_d else None
        mu = m.add_parameter_block("mu", nc, [ct.mu for ct in self.contacts], latex=r"\mu", dim=c)
        return StepSymbols(Mhat, b, psi_h, Wn, Wt, Wo, ut, uo, mu)

    def _declare(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # ------------------------------------------------------------------ StepModel
    def split_state(self, state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(q, v)`` from the state vector."""
        x = np.asarray(state, dtype=float).reshape(-1)
        if x.shape != (self.nq + self.nv,):
            raise ShapeError(f"state must have nq + nv = {self.nq + self.nv} entries, got {x.shape}")
        return x[: self.nq], x[self.nq :]

    def initial_state(self, q0: object, v0: object | None = None) -> np.ndarray:
        """State vector from configuration and velocity (validated)."""
        q = np.asarray(q0, dtype=float).reshape(-1)
        v = np.zeros(self.nv) if v0 is None else np.asarray(v0, dtype=float).reshape(-1)
        if q.shape != (self.nq,) or v.shape != (self.nv,):
            raise ShapeError(f"q0 must have {self.nq} and v0 {self.nv} entries, got {q.shape}, {v.shape}")
        if not (np.isfinite(q).all() and np.isfinite(v).all()):
            raise NonFiniteError("initial state contains NaN or inf")
        if self.nq == 7:
            q = q.copy()
            q[3:7] /= np.linalg.norm(q[3:7])
        return np.concatenate([q, v])

    def check_state(self, state: np.ndarray) -> np.ndarray:
        """The state :math:`(q, \\nu)` validated (shape ``nq + nv``)."""
        q, v = self.split_state(state)
        return np.concatenate([q, v])

    def step_parameters(self, xp: ArrayNamespace, x: Any, u: Any, theta: Any, t: Any) -> dict[str, Any]:
        """Parameter values of the step from :math:`t` to :math:`t+h` (module docstring)."""
        q, v = x[: self.nq], x[self.nq :]
        g = contact_geometry(self.body, q, self.contacts, t + self.h, xp)
        if xp.numeric:
            self.last_geometry = g
        Mhat = self.body.mass_matrix(q, xp) / self.mass_scale
        force = self.body.forces(q, v, t, xp)
        if self.input_matrix is not None:
            force = force + xp.matmul(self.input_matrix, u)
        b = xp.matmul(Mhat, v) + self.h * force / self.mass_scale
        p: dict[str, Any] = {  # matrix parameters flattened row-major, W = [W_1 ... W_nc] (nv x nc)
            "Mhat": xp.flat(Mhat),
            "b": b,
            "psi_h": g.psi / self.h,
            "Wn": xp.flat(g.Wn.T),
            "Wt": xp.flat(g.Wt.T),
            "ut": g.ut,
            "mu": g.mu,
        }
        if self.three_d:
            p["Wo"] = xp.flat(g.Wo.T)
            p["uo"] = g.uo
        return p

    def step_update(self, xp: ArrayNamespace, x: Any, z: Any, u: Any, theta: Any, t: Any) -> Any:
        r""":math:`\nu^{\ell+1}` from the solution, :math:`q^{\ell+1} = q^\ell + hG\nu^{\ell+1}`."""
        v_next = z[self._v_slice]
        return xp.concat([self.body.integrate(x[: self.nq], v_next, self.h, xp), v_next])

    @property
    def _v_slice(self) -> slice:
        return {b.name: b.slice for b in self.mcp.blocks}["v"]

    def normal_force(self, z: np.ndarray) -> np.ndarray:
        r"""Physical normal forces :math:`\lambda_n = m_s\beta_n/h` from solution rows ``z``."""
        sl = {b.name: b.slice for b in self.mcp.blocks}["lam_n"]
        return np.asarray(z)[..., sl] * self.mass_scale / self.h
