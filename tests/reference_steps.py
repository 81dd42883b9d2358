"""Reference step maps of the horizon examples, derived by hand in CasADi (the code the examples used
before their steps were built with ``StepSpec.from_model``).

They are kept here only as the regression reference: the MPCC built from the models' own step
maps must equal the MPCC built from these.
"""

from __future__ import annotations

from typing import Any

import casadi as ca
import numpy as np

from mcpkit.models.ecp.complementarity import build_complementarity_mcp
from mcpkit.models.stewart_trinkle import Contact, LCPStep, Particle, PlaneSurface
from mcpkit.models.stewart_trinkle.contact import contact_geometry
from mcpkit.mpec.examples.block import BlockTask
from mcpkit.mpec.examples.pushing import PushTask
from mcpkit.mpec.step import StepSpec


def block_reference_spec(task: BlockTask) -> StepSpec:
    r"""Block step by hand: :math:`\hat M = I`, :math:`b = \nu + h(g + u\hat x/m)`,
    :math:`\psi/h = (\hat n\cdot q + \psi_0)/h`, constant contact data; :math:`q^+ = q + h\nu^+`."""
    body = Particle(mass=task.mass, gravity=np.array([0.0, 0.0, -task.g]))
    st = LCPStep(body, [Contact(PlaneSurface(), task.mu)], task.h, n_d=4)
    h = st.h
    geo = contact_geometry(body, np.zeros(3), st.contacts, h)
    n_hat = geo.Wn[0]
    psi0 = float(geo.psi[0])
    grav = np.asarray(body.gravity, dtype=float)
    m = float(body.mass)

    def params(x: ca.SX, u: ca.SX, theta: ca.SX, t: ca.SX) -> dict[str, Any]:
        q, v = x[:3], x[3:]
        force = ca.vertcat(u[0], 0.0, 0.0)
        return {
            "Mhat": np.eye(3).reshape(-1),
            "b": v + h * (grav + force / m),
            "psi_h": (ca.dot(ca.DM(n_hat), q) + psi0) / h,
            "Wn": geo.Wn.reshape(-1), "Wt": geo.Wt.reshape(-1), "Wo": geo.Wo.reshape(-1),
            "ut": geo.ut, "uo": geo.uo, "mu": geo.mu,
        }  # fmt: skip

    vs = {b.name: b.slice for b in st.mcp.blocks}["v"]

    def update(x: ca.SX, z: ca.SX, u: ca.SX, theta: ca.SX) -> ca.SX:
        v_next = z[vs]
        return ca.vertcat(x[:3] + h * v_next, v_next)

    return StepSpec(st.mcp, n_state=6, n_control=1, n_design=0, parameters=params, update=update, h=h)


def pushing_reference_spec(task: PushTask) -> StepSpec:
    r"""Pushing step by hand: applied impulses :math:`hR(\theta_z)(f_n, f_t)`,
    :math:`h(\rho_x f_t - \theta_c f_n)`; linear update of eqs 26-28."""
    P = task.params
    mcp = build_complementarity_mcp(P)
    h, rx = P.h, task.edge_x

    def applied(x: ca.SX, u: ca.SX, th: ca.SX) -> tuple[ca.SX, ca.SX, ca.SX]:
        c, s = ca.cos(x[2]), ca.sin(x[2])
        fn, ft = u[0], u[1]
        return h * (c * fn - s * ft), h * (s * fn + c * ft), h * (rx * ft - th[0] * fn)

    def params(x: ca.SX, u: ca.SX, th: ca.SX, t: ca.SX) -> dict[str, Any]:
        px, py, pz = applied(x, u, th)
        return {"v_x": x[3], "v_y": x[4], "w_z": x[5], "p_x": px, "p_y": py, "p_ztau": pz}

    sl = {b.name: b.slice.start for b in mcp.blocks}

    def update(x: ca.SX, z: ca.SX, u: ca.SX, th: ca.SX) -> ca.SX:
        px, py, pz = applied(x, u, th)
        v = ca.vertcat(
            x[3] + (z[sl["p_t"]] + px) / P.m,
            x[4] + (z[sl["p_o"]] + py) / P.m,
            x[5] + (z[sl["p_r"]] + pz) / P.I_z,
        )
        return ca.vertcat(x[:3] + h * v, v)

    return StepSpec(mcp, n_state=6, n_control=2, n_design=1, parameters=params, update=update, h=h)
