r"""FCLIB 3-D local friction-contact problems as Stewart–Trinkle quadratic-cone NCPs.

An FCLIB *local* problem (Acary et al., FCLIB) with :math:`n_c` contacts asks for reactions
:math:`r_i = (r_{n}, r_{t}, r_{o})_i` and velocities :math:`u = Wr + q` with, per contact,

.. math::
    K_i = \{r: \|r_{t,o}\| \le \mu_i r_n\},\quad \hat u_i = u_i + \mu_i\|u_{t,o,i}\|\,e_n,\quad
    K_i^* \ni \hat u_i \perp r_i \in K_i

(De Saxcé's modified velocity). It is posed here as the NCP of seed 004 eq (9) — the same
quadratic friction law — with :math:`u` kept as free variables of the affine block
:math:`u - Wr - q = 0`:

.. math::
    0 \le r_n \perp u_n \ge 0,\quad
    \mu r_n u_t + r_t\sigma = 0,\quad \mu r_n u_o + r_o\sigma = 0,\quad
    0 \le \sigma \perp \mu^2 r_n^2 - r_t^2 - r_o^2 \ge 0 .

Both have the same solutions (sliding: :math:`\sigma = \|u_{t,o}\|`, :math:`u_n = 0`; sticking:
:math:`u = 0`; separation: :math:`r = 0`, :math:`u_n\ge0`). Unknowns are scaled before solving:
:math:`r = s_r\hat r`, :math:`u = s_u\hat u` with :math:`s_u = \|q\|_\infty` and
:math:`s_r = s_u/\overline{\mathrm{diag}(W)}`.

**Residual** (reported as ``friction_residual``): the natural-map residual of the
De Saxcé formulation as in Siconos ``fc3d_compute_error`` with :math:`\rho = 1`,

.. math::
    \mathrm{err}(r) = \frac{\bigl(\sum_i \|r_i - \Pi_{K_i}(r_i - \hat u_i)\|_2^2\bigr)^{1/2}}
                           {\|q\|_2},\qquad u = Wr + q,

(division skipped when :math:`\|q\|_2` is below machine epsilon).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mcpkit.errors import ProblemFileError
from mcpkit.problem import MCP
from mcpkit.result import RESULT_KEYS, SUMMARY_KEYS, FromParts, MCPResult, ToleranceCheck, summary_head

DEFAULT_TOL = 1e-6
"""Natural-residual tolerance of the scaled NCP used by :func:`solve_fclib_file`. With the
mcpkit default 1e-8 the three IPOPT homotopies stall between 1e-7 and 5e-7 on the 48-contact
test problem (see ``docs/fclib.md``); 1e-6 gives friction residuals ~4e-7."""


class FCLIBProblem:
    """An FCLIB 3-D local problem read from HDF5 (dense ``W``; these problems are small).

    Attributes
    ----------
    W, q, mu
        Delassus matrix ``(3nc, 3nc)``, free velocity ``(3nc,)``, friction ``(nc,)``.
    r_ref, u_ref
        The file's reference solution (``None`` when absent).
    title, description
        From ``fclib_local/info`` when present.
    """

    def __init__(
        self,
        W: np.ndarray,
        q: np.ndarray,
        mu: np.ndarray,
        r_ref: np.ndarray | None = None,
        u_ref: np.ndarray | None = None,
        title: str = "",
        description: str = "",
    ) -> None:
        self.W, self.q, self.mu = W, q, mu
        self.r_ref, self.u_ref = r_ref, u_ref
        self.title, self.description = title, description

    @property
    def nc(self) -> int:
        """Number of contacts."""
        return int(self.mu.size)


def _read(ds: Any, what: str) -> np.ndarray:
    try:
        return np.asarray(ds[()])
    except Exception as exc:  # h5py raises many types
        raise ProblemFileError(f"FCLIB: cannot read {what}: {exc}") from exc


def load_fclib(path: str | Path) -> FCLIBProblem:
    """Read an FCLIB local problem; raise :class:`~mcpkit.errors.ProblemFileError` if the file is
    unreadable or does not follow the format (``fclib_local/W/{i,p,x,m,n,nz}``,
    ``fclib_local/vectors/{q,mu}``, ``fclib_local/spacedim`` = 3)."""
    import h5py

    path = Path(path)
    if not path.is_file():
        raise ProblemFileError(f"FCLIB: no such file: {path}")
    try:
        f = h5py.File(path, "r")
    except Exception as exc:
        raise ProblemFileError(f"FCLIB: {path} is not a readable HDF5 file: {exc}") from exc
    with f:
        if "fclib_local" not in f:
            raise ProblemFileError(
                f"FCLIB: {path} has no 'fclib_local' group (only local problems are supported)"
            )
        g = f["fclib_local"]
        for key in ("W/i", "W/p", "W/x", "W/m", "W/n", "vectors/q", "vectors/mu"):
            if key not in g:
                raise ProblemFileError(f"FCLIB: {path} lacks fclib_local/{key}")
        dim = int(_read(g["spacedim"], "spacedim").reshape(-1)[0]) if "spacedim" in g else 3
        if dim != 3:
            raise ProblemFileError(f"FCLIB: spacedim {dim} is not supported (3-D only)")
        i = _read(g["W/i"], "W/i").astype(np.int64).reshape(-1)
        p = _read(g["W/p"], "W/p").astype(np.int64).reshape(-1)
        x = _read(g["W/x"], "W/x").astype(float).reshape(-1)
        m = int(_read(g["W/m"], "W/m").reshape(-1)[0])
        n = int(_read(g["W/n"], "W/n").reshape(-1)[0])
        nz = int(_read(g["W/nz"], "W/nz").reshape(-1)[0]) if "W/nz" in g else -1
        q = _read(g["vectors/q"], "q").astype(float).reshape(-1)
        mu = _read(g["vectors/mu"], "mu").astype(float).reshape(-1)
        title = (
            _read(g["info/title"], "title").tobytes().decode(errors="replace") if "info/title" in g else ""
        )
        desc = (
            _read(g["info/description"], "description").tobytes().decode(errors="replace").strip()
            if "info/description" in g
            else ""
        )
        r_ref = u_ref = None
        if "solution/r" in f and "solution/u" in f:
            r_ref = _read(f["solution/r"], "solution/r").astype(float).reshape(-1)
            u_ref = _read(f["solution/u"], "solution/u").astype(float).reshape(-1)
    if m != n or m != q.size or m != 3 * mu.size:
        raise ProblemFileError(f"FCLIB: inconsistent sizes W {m}x{n}, q {q.size}, mu {mu.size} (need 3*nc)")
    W = np.zeros((m, n))
    if nz >= 0:  # triplet form
        if not (i.size == p.size == x.size):
            raise ProblemFileError("FCLIB: triplet W needs equal-length i, p, x")
        np.add.at(W, (i, p), x)
    else:  # -1 compressed column, -2 compressed row
        major = n if nz == -1 else m
        if p.size != major + 1 or p[0] != 0 or np.any(np.diff(p) < 0) or p[-1] > x.size or i.size < p[-1]:
            raise ProblemFileError("FCLIB: malformed compressed pointers W/p")
        minor = np.repeat(np.arange(major), np.diff(p))
        idx = i[: p[-1]]
        if idx.size and (idx.min() < 0 or idx.max() >= (m if nz == -1 else n)):
            raise ProblemFileError("FCLIB: W/i index out of range")
        if nz == -1:
            np.add.at(W, (idx, minor), x[: p[-1]])
        else:
            np.add.at(W, (minor, idx), x[: p[-1]])
    for what, arr in (("W", W), ("q", q), ("mu", mu)):
        if not np.isfinite(arr).all():
            raise ProblemFileError(f"FCLIB: {what} contains NaN or inf")
    if np.any(mu < 0):
        raise ProblemFileError("FCLIB: negative friction coefficient")
    for what, arr in (("solution/r", r_ref), ("solution/u", u_ref)):
        if arr is not None and arr.shape != q.shape:
            raise ProblemFileError(f"FCLIB: {what} has shape {arr.shape}, expected {q.shape}")
    return FCLIBProblem(W, q, mu, r_ref, u_ref, title, desc)


def project_cone(z: np.ndarray, mu: float) -> np.ndarray:
    r"""Euclidean projection of :math:`z = (z_n, z_t, z_o)` onto :math:`K_\mu`."""
    zn, zt = z[0], z[1:]
    nt = float(np.linalg.norm(zt))
    if nt <= mu * zn:  # already in K
        return z.copy()
    if mu * nt <= -zn:  # in the polar cone {mu |z_t| <= -z_n}
        return np.zeros(3)
    a = (mu * nt + zn) / (mu * mu + 1.0)
    return np.concatenate([[a], mu * a * zt / nt])


def friction_residual(
    W: np.ndarray, q: np.ndarray, mu: np.ndarray, r: np.ndarray, u: np.ndarray | None = None
) -> float:
    r"""Siconos ``fc3d_compute_error`` residual (module docstring) of reactions ``r``.

    ``u`` defaults to :math:`Wr + q`; passing a stored ``u`` evaluates the pair as given.
    """
    r = np.asarray(r, dtype=float).reshape(-1)
    u = W @ r + q if u is None else np.asarray(u, dtype=float).reshape(-1)
    err2 = 0.0
    for i in range(mu.size):
        ri, ui = r[3 * i : 3 * i + 3], u[3 * i : 3 * i + 3]
        uh = ui.copy()
        uh[0] += mu[i] * np.linalg.norm(ui[1:])
        d = ri - project_cone(ri - uh, float(mu[i]))
        err2 += float(d @ d)
    nq = float(np.linalg.norm(q))
    e = math.sqrt(err2)
    return e / nq if nq > np.finfo(float).eps else e


def fclib_ncp(prob: FCLIBProblem) -> tuple[MCP, float, float]:
    """The scaled quadratic-cone NCP of the module docstring; returns ``(mcp, s_r, s_u)``."""
    nc, W, q, mu = prob.nc, prob.W, prob.q, prob.mu
    s_u = float(np.abs(q).max()) or 1.0
    dmean = float(np.mean(np.abs(np.diag(W)))) or 1.0
    s_r = s_u / dmean
    Wh = W * (s_r / s_u)
    qh = q / s_u
    mcp = MCP("fclib_quadratic_cone")
    rn = mcp.add_variables("r_n", nc, lb=0.0, start=1.0)
    rt = mcp.add_variables("r_t", nc, lb=-math.inf)
    ro = mcp.add_variables("r_o", nc, lb=-math.inf)
    sg = mcp.add_variables("sigma", nc, lb=0.0)
    u = mcp.add_variables("u", 3 * nc, lb=-math.inf)
    n_idx, t_idx, o_idx = np.arange(nc) * 3, np.arange(nc) * 3 + 1, np.arange(nc) * 3 + 2
    M = np.hstack([-Wh[:, n_idx], -Wh[:, t_idx], -Wh[:, o_idx], np.zeros((3 * nc, nc)), np.eye(3 * nc)])
    mcp.add_affine("u", M, (-qh).tolist(), over=("r_n", "r_t", "r_o", "sigma", "u"))
    mcp.add_functions("r_n", [u[3 * i] for i in range(nc)])
    mcp.add_functions("r_t", [mu[i] * rn[i] * u[3 * i + 1] + rt[i] * sg[i] for i in range(nc)])
    mcp.add_functions("r_o", [mu[i] * rn[i] * u[3 * i + 2] + ro[i] * sg[i] for i in range(nc)])
    mcp.add_functions("sigma", [(mu[i] * rn[i]) ** 2 - rt[i] ** 2 - ro[i] ** 2 for i in range(nc)])
    return mcp, s_r, s_u


def reactions_from(z_blocks: dict[str, np.ndarray], s_r: float) -> np.ndarray:
    """Interleave ``r_n, r_t, r_o`` blocks into FCLIB's ``(r_n, r_t, r_o)_i`` order, unscaled."""
    r = np.column_stack([z_blocks["r_n"], z_blocks["r_t"], z_blocks["r_o"]]).reshape(-1)
    return r * s_r


@dataclass(repr=False)
class FCLIBResult(FromParts):
    """An FCLIB file solved as the quadratic-cone NCP (an :class:`~mcpkit.result.Outcome`).

    Its parts are the NCP solve (:attr:`solve`, judged on the scaled NCP's natural residual) and
    the physical check :attr:`friction`: :func:`friction_residual` of the unscaled reactions at
    most the same ``tol``; ``solved`` and ``termination`` come from them
    (:class:`~mcpkit.result.FromParts`).

    Attributes
    ----------
    path
        The file.
    solve
        The :class:`~mcpkit.result.MCPResult` of the scaled NCP.
    friction
        The friction-residual :class:`~mcpkit.result.ToleranceCheck`.
    reactions
        Unscaled reactions :math:`(r_n, r_t, r_o)_i` (``None`` without a point).
    reference_friction_residual, reference_friction_residual_stored_u, reference_consistency
        The file's reference solution: its residual with :math:`u = Wr + q`, with the stored
        :math:`u`, and :math:`\\max|Wr_\\mathrm{ref} + q - u_\\mathrm{ref}|` (``None`` when absent).
    n_contacts, title
        From the file.
    wall_time_s
        Posing and solving (not reading the file).
    """

    path: str
    solve: MCPResult
    friction: ToleranceCheck
    reactions: np.ndarray | None
    reference_friction_residual: float | None
    reference_friction_residual_stored_u: float | None
    reference_consistency: float | None
    n_contacts: int
    title: str
    wall_time_s: float

    kind = "fclib"
    part_name = "check"

    @property
    def parts(self) -> list[Any]:
        """The NCP solve, then the friction check."""
        return [self.solve, self.friction]

    @property
    def message(self) -> str:
        """The friction residual and the solve's message when solved; the first failure otherwise."""
        if self.solved:
            return f"solved: {self.friction.message}; {self.solve.message}"
        return super().message

    @property
    def friction_residual(self) -> float | None:
        """The friction residual (``None`` without a point)."""
        return self.friction.value if self.friction.finite else None

    def __repr__(self) -> str:
        fr = self.friction_residual
        return (
            f"FCLIBResult(solved={self.solved}, termination={self.termination.value}, "
            f"friction_residual={'none' if fr is None else f'{fr:.2e}'} (tol {self.friction.tol:.0e}), "
            f"n_contacts={self.n_contacts}, route={self.solve.method}/{self.solve.backend}, "
            f"wall_time_s={self.wall_time_s:.3f}, file={self.path!r})"
        )

    def summary(self) -> dict[str, Any]:
        """:data:`~mcpkit.result.SUMMARY_KEYS` (those of the solve after the verdict's head), then
        the friction and reference residuals, the contact count and the title."""
        out = summary_head(self.kind, self, self.wall_time_s)
        s = self.solve.summary()
        out.update({k: s[k] for k in SUMMARY_KEYS if k not in RESULT_KEYS})
        out.update(
            friction_residual=self.friction_residual,
            reference_friction_residual=self.reference_friction_residual,
            reference_friction_residual_stored_u=self.reference_friction_residual_stored_u,
            reference_consistency=self.reference_consistency,
            n_contacts=self.n_contacts,
            title=self.title,
        )
        return out


def solve_fclib_file(path: str | Path, **solve_options: Any) -> FCLIBResult:
    """Load, pose as the quadratic-cone NCP, solve, and judge by the friction residual.

    Parameters
    ----------
    path
        FCLIB HDF5 file (local 3-D problem).
    **solve_options
        ``method`` (default ``"fb"``), ``backend`` (default ``"casadi"``) and any
        :class:`~mcpkit.options.SolveOptions` field (``tol`` defaults to :data:`DEFAULT_TOL`
        on the natural residual of the *scaled* NCP; the friction residual is judged against the
        same ``tol``).

    Returns
    -------
    FCLIBResult
        ``solved`` when the NCP met its tolerance and :func:`friction_residual` of the unscaled
        reactions is at most ``tol``; ``summary()`` carries
        :data:`~mcpkit.result.SUMMARY_KEYS`, ``friction_residual``,
        ``reference_friction_residual``, ``reference_friction_residual_stored_u``,
        ``reference_consistency``, ``n_contacts`` and ``title``.
    """
    import mcpkit

    opts = dict(solve_options)
    method = opts.pop("method", "fb")
    backend = opts.pop("backend", "casadi")
    opts.setdefault("tol", DEFAULT_TOL)
    prob = load_fclib(path)
    t0 = time.perf_counter()
    mcp, s_r, s_u = fclib_ncp(prob)
    res = mcpkit.solve(mcp, method=method, backend=backend, **opts)
    wall = time.perf_counter() - t0
    have = bool(np.isfinite(res.z).all())
    r = reactions_from(mcp.split(res.z), s_r) if have else None
    fr = friction_residual(prob.W, prob.q, prob.mu, r) if r is not None else None
    ref = ref_stored = consistency = None
    if prob.r_ref is not None:
        ref = friction_residual(prob.W, prob.q, prob.mu, prob.r_ref)
        ref_stored = friction_residual(prob.W, prob.q, prob.mu, prob.r_ref, prob.u_ref)
        consistency = float(np.abs(prob.W @ prob.r_ref + prob.q - prob.u_ref).max())
    check = ToleranceCheck("friction residual", fr, float(res.tol), kind="friction")
    return FCLIBResult(
        path=str(path), solve=res, friction=check, reactions=r,
        reference_friction_residual=ref, reference_friction_residual_stored_u=ref_stored,
        reference_consistency=consistency, n_contacts=prob.nc, title=prob.title, wall_time_s=wall,
    )  # fmt: skip
