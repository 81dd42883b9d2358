r"""``mcpkit demo quickstart``: one contact time step, printed as mathematics and solved by every route.

The step is the Stewart–Trinkle velocity-level NCP with the quadratic friction cone for a
particle of mass :math:`m` on a horizontal table (normal :math:`n = e_z`, tangents
:math:`t = e_x`, :math:`o = e_y`), impulses :math:`p = h\lambda`:

.. math::

    m(v - v_0) - h f_{\mathrm{ext}} - n p_n - t p_t - o p_o &= 0 \quad (v \text{ free}) \\
    0 \le p_n &\perp \psi_0 / h + n^\top v \ge 0 \\
    \mu p_n\, t^\top v + p_t \sigma &= 0 \quad (p_t \text{ free}) \\
    \mu p_n\, o^\top v + p_o \sigma &= 0 \quad (p_o \text{ free}) \\
    0 \le \sigma &\perp (\mu p_n)^2 - p_t^2 - p_o^2 \ge 0 .

With the particle resting (:math:`\psi_0 = 0`), gravity :math:`f_{\mathrm{ext}} = (0, 0, -mg)` and an
initial sliding velocity :math:`v_0 = (u_0, 0, 0)` with :math:`u_0 > \mu g h`, the closed form is
:math:`p_n = mgh`, :math:`p_t = -\mu p_n`, :math:`v = (u_0 - \mu g h, 0, 0)` and the sliding speed
:math:`\sigma = u_0 - \mu g h`; the demo checks every route against it.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np

from mcpkit.formats.figures import figure_format
from mcpkit.frontends.solve import solve
from mcpkit.problems.mcp import MCP
from mcpkit.solving.availability import path_available
from mcpkit.solving.result import CompositeResult, Outcome, ToleranceCheck


def particle_step_mcp(m: float = 1.0, mu: float = 0.5, h: float = 0.01, g: float = 9.81) -> MCP:
    """The quickstart's Stewart–Trinkle NCP step (see the module docstring); state as parameters."""
    mcp = MCP("particle_step")
    v = mcp.add_variables("v", 3, lb=-math.inf, ub=math.inf, latex="v")
    pn = mcp.add_variables("p_n", 1, lb=0.0, latex="p_{n}")
    pf = mcp.add_variables("p_f", 2, lb=-math.inf, ub=math.inf, latex="p_{f}")
    sig = mcp.add_variables("sigma", 1, lb=0.0, latex=r"\sigma")
    v0 = mcp.add_parameters("v0", 3, value=[1.0, 0.0, 0.0], latex="v^{0}")
    psi = mcp.add_parameters("psi", 1, value=0.0, latex=r"\psi")
    f = mcp.add_parameters("f_ext", 3, value=[0.0, 0.0, -m * g], latex="f^{ext}")
    mcp.add_functions(
        "v",
        [
            m * (v[0] - v0[0]) - h * f[0] - pf[0],
            m * (v[1] - v0[1]) - h * f[1] - pf[1],
            m * (v[2] - v0[2]) - h * f[2] - pn[0],
        ],
    )
    mcp.add_functions("p_n", [psi[0] / h + v[2]])
    mcp.add_functions("p_f", [mu * pn[0] * v[0] + pf[0] * sig[0], mu * pn[0] * v[1] + pf[1] * sig[0]])
    mcp.add_functions("sigma", [(mu * pn[0]) ** 2 - pf[0] ** 2 - pf[1] ** 2])
    mcp.set_start(p_n=[m * g * h], sigma=[1.0])
    return mcp


def closed_form(u0: float, m: float, mu: float, h: float, g: float) -> dict[str, float]:
    """Sliding case :math:`u_0 > \\mu g h`: the exact step solution."""
    pn = m * g * h
    vx = u0 - mu * g * h
    return {"p_n": pn, "v_x": vx, "p_t": -mu * pn, "sigma": vx}


def quickstart(out: Path | None = None, progress: bool = True, fmt: str = "png") -> CompositeResult:
    """Print the step MCP, solve it by every available route and compare with the closed form.

    It draws no figure; ``out`` receives the step's LaTeX (``particle_step.tex``) and ``fmt`` is
    only checked (every demo takes it, :mod:`mcpkit.formats.figures`).

    Returns a :class:`~mcpkit.solving.result.CompositeResult` whose parts are every route's
    :class:`~mcpkit.solving.result.MCPResult` and its agreement with the closed form (a
    :class:`~mcpkit.solving.result.ToleranceCheck`, error at most 1e-6): ``solved`` when every
    route solved the step and agrees with the closed form. ``progress`` prints the step and a
    line per route.
    """
    t0 = time.perf_counter()
    figure_format(fmt)
    m, mu, h, g, u0 = 1.0, 0.5, 0.01, 9.81, 1.0
    mcp = particle_step_mcp(m, mu, h, g)
    exact = closed_form(u0, m, mu, h, g)
    if progress:
        print(mcp.to_text())
        print()
        print(mcp.explain())
        print()
    routes = [("casadi", "scholtes"), ("casadi", "fb"), ("casadi", "penalty"), ("pyomo", "scholtes")]
    if path_available():
        routes.append(("auto", "path"))
    rows = []
    parts: list[Outcome] = []
    for backend, method in routes:
        res = solve(mcp, backend=backend, method=method, tol=1e-9)
        err = max(
            abs(res.block("p_n")[0] - exact["p_n"]),
            abs(res.block("v")[0] - exact["v_x"]),
            abs(res.block("p_f")[0] - exact["p_t"]),
        )
        route = f"{res.method}/{res.backend}"
        parts += [res, ToleranceCheck(f"{route} error vs closed form", float(err), 1e-6, kind="closed_form")]
        rows.append(
            {
                "route": route,
                "solved": res.solved,
                "natural_residual": res.natural_residual,
                "error_vs_closed_form": float(err),
                "iterations": res.iterations,
                "wall_time_s": res.wall_time_s,
            }
        )
        if progress:
            print(
                f"{rows[-1]['route']:<18} solved={res.solved!s:<5} residual={res.natural_residual:.1e} "
                f"|error|={err:.1e} iterations={res.iterations:<4} time={res.wall_time_s * 1e3:.1f} ms"
            )
    if out is not None:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "particle_step.tex").write_text(mcp.to_latex() + "\n")
    details = {
        "problem": mcp.name,
        "closed_form": exact,
        "routes": rows,
        "max_error_vs_closed_form": float(np.max([r["error_vs_closed_form"] for r in rows])),
    }
    return CompositeResult(kind="demo:quickstart", parts=parts, what="check",
                           wall_time_s=time.perf_counter() - t0, details=details)  # fmt: skip
