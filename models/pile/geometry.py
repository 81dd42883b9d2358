r"""Spheres in an open box: contact detection, contact frames and the contact Jacobian.

A scene holds :math:`N` rigid spheres (centres :math:`x_a`, radii :math:`R_a`) and the five
planes of an open box (floor :math:`z = 0`, walls :math:`x = 0`, :math:`x = L_x`, :math:`y = 0`,
:math:`y = L_y`; unit normals pointing into the box). Contacts are found in two phases:

* **broad phase**: :meth:`scipy.spatial.cKDTree.query_pairs` over the centres within
  :math:`2R_{\max} + \delta` (:math:`\delta` the margin), then kept when
  :math:`\|x_a - x_b\| < R_a + R_b + \delta`; each sphere against each plane when its gap is
  below :math:`\delta`;
* **narrow phase** (analytic for spheres): for a sphere pair :math:`(a, b)`, :math:`a < b`,

  .. math::
      n = \frac{x_a - x_b}{\|x_a - x_b\|},\quad g = \|x_a - x_b\| - R_a - R_b,\quad
      p = x_b + (R_b + g/2)\,n ;

  for sphere :math:`a` on a plane :math:`\{y : n_P\cdot y = d_P\}`: :math:`n = n_P`,
  :math:`g = n_P\cdot x_a - d_P - R_a`, :math:`p = x_a - R_a n`.

Each contact gets the orthonormal frame :math:`(n, t_1, t_2)`, :math:`t_1\times t_2 = n`
(:func:`contact_frames`), the normal pointing from the second body (or plane) to the first, so
:math:`u_n > 0` separates. Body :math:`a` has the twist :math:`\nu_a = (v_a, \omega_a)` (six
entries: linear, angular, world frame); the relative velocity of the material points at
:math:`p` is :math:`(v_a + \omega_a\times r_a) - (v_b + \omega_b\times r_b)`,
:math:`r_\cdot = p - x_\cdot`, and in the contact frame

.. math::
    u_c = E_c^T\bigl[(v_a + \omega_a\times r_a) - (v_b + \omega_b\times r_b)\bigr] = H_c^T \nu,
    \qquad H_{c,a} = \begin{bmatrix} E_c \\ [r_a]_\times E_c \end{bmatrix},\quad
    H_{c,b} = -\begin{bmatrix} E_c \\ [r_b]_\times E_c \end{bmatrix},

with :math:`E_c = [n\ t_1\ t_2]` and :math:`[r]_\times E` the columns :math:`r\times e`
(:func:`contact_jacobian`: :math:`H \in \mathbb{R}^{6N\times 3n_c}` sparse, contact by contact in
FCLIB's order :math:`(n, t_1, t_2)_c`). For spheres :math:`r_a \parallel n`, so the normal row
has no angular part while the tangential rows carry the lever arm: friction makes spheres roll.
Planes are static and have no columns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sps
from scipy.spatial import cKDTree

from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError

#: Plane names of the open box, in the order of :attr:`Box.planes`; a plane ``k`` appears in
#: :attr:`Contacts.b` as the body index ``-1 - k``.
PLANES = ("floor", "x0", "x1", "y0", "y1")


@dataclass(frozen=True)
class Box:
    """An open box: floor :math:`z = 0` and four walls at :math:`x = 0, L_x` and :math:`y = 0, L_y`."""

    lx: float
    """Inner length along :math:`x`."""
    ly: float
    """Inner length along :math:`y`."""

    def __post_init__(self) -> None:
        if not (np.isfinite(self.lx) and np.isfinite(self.ly) and self.lx > 0 and self.ly > 0):
            raise MCPInputError(f"box sides must be positive and finite, got {self.lx} x {self.ly}")

    @property
    def planes(self) -> tuple[np.ndarray, np.ndarray]:
        r"""Unit normals ``(5, 3)`` (into the box) and offsets ``(5,)``: plane :math:`n_P\cdot y = d_P`."""
        n = np.array([[0, 0, 1], [1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0]], dtype=float)
        d = np.array([0.0, 0.0, -self.lx, 0.0, -self.ly])
        return n, d


@dataclass(frozen=True)
class Contacts:
    """The contacts of one configuration (module docstring); arrays have one row per contact."""

    a: np.ndarray
    """First body (a sphere index), ``(nc,)`` int."""
    b: np.ndarray
    """Second body: a sphere index :math:`> a`, or ``-1 - k`` for plane ``k`` of :data:`PLANES`."""
    gap: np.ndarray
    """Signed distance :math:`g` (negative: penetration), ``(nc,)``."""
    point: np.ndarray
    """Contact point :math:`p`, ``(nc, 3)``."""
    frame: np.ndarray
    """``(nc, 3, 3)``: rows :math:`n, t_1, t_2` (so ``frame[c] @ w`` is :math:`E_c^T w`)."""

    @property
    def nc(self) -> int:
        """Number of contacts."""
        return int(self.a.size)

    @property
    def keys(self) -> list[tuple[int, int]]:
        """Contact identities ``(a, b)`` (a body pair or a sphere and a plane), for warm starts."""
        return list(zip(self.a.tolist(), self.b.tolist(), strict=True))


def contact_frames(n: np.ndarray) -> np.ndarray:
    r"""Orthonormal frames ``(m, 3, 3)`` with rows :math:`(n, t_1, t_2)`, :math:`t_1\times t_2 = n`.

    :math:`t_1` is the normalised component of :math:`e_x` (or :math:`e_y` where
    :math:`|n_x| \ge 0.9`) orthogonal to :math:`n`, :math:`t_2 = n\times t_1`.
    """
    n = np.asarray(n, dtype=float).reshape(-1, 3)
    a = np.zeros_like(n)
    use_y = np.abs(n[:, 0]) >= 0.9
    a[~use_y, 0] = 1.0
    a[use_y, 1] = 1.0
    t1 = a - np.sum(a * n, axis=1)[:, None] * n
    t1 /= np.linalg.norm(t1, axis=1)[:, None]
    t2 = np.cross(n, t1)
    return np.stack([n, t1, t2], axis=1)


def check_spheres(x: np.ndarray, radii: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``x`` as ``(N, 3)`` floats and ``radii`` as ``(N,)`` positive floats; typed errors otherwise."""
    x = np.asarray(x, dtype=float)
    radii = np.asarray(radii, dtype=float).reshape(-1)
    if x.ndim != 2 or x.shape[1] != 3 or x.shape[0] != radii.size:
        raise ShapeError(f"centres must be (N, 3) with N = {radii.size} radii, got {x.shape}")
    if not (np.isfinite(x).all() and np.isfinite(radii).all()):
        raise NonFiniteError("sphere centres or radii contain NaN or inf")
    if (radii <= 0).any():
        raise MCPInputError("sphere radii must be positive")
    return x, radii


def detect_contacts(x: np.ndarray, radii: np.ndarray, box: Box, margin: float) -> Contacts:
    """Sphere–sphere and sphere–plane contacts with gap below ``margin`` (module docstring).

    Sorted by ``(a, b)`` with planes (negative ``b``) first for each sphere, so the order is
    reproducible.
    """
    x, radii = check_spheres(x, radii)
    if not (np.isfinite(margin) and margin >= 0):
        raise MCPInputError(f"margin must be a non-negative number, got {margin}")
    N = radii.size
    # sphere-sphere: broad phase by the k-d tree, narrow phase analytic
    if N >= 2:
        pairs = cKDTree(x).query_pairs(r=2.0 * float(radii.max()) + margin, output_type="ndarray")
    else:
        pairs = np.zeros((0, 2), dtype=np.intp)
    pa, pb = pairs[:, 0], pairs[:, 1]
    d = x[pa] - x[pb]
    dist = np.linalg.norm(d, axis=1)
    keep = dist < radii[pa] + radii[pb] + margin
    pa, pb, d, dist = pa[keep], pb[keep], d[keep], dist[keep]
    if (dist <= 0).any():
        raise MCPInputError("two sphere centres coincide: no contact normal")
    ns = d / dist[:, None]
    gs = dist - radii[pa] - radii[pb]
    ps = x[pb] + (radii[pb] + 0.5 * gs)[:, None] * ns
    # sphere-plane
    nP, dP = box.planes
    gp = x @ nP.T - dP[None, :] - radii[:, None]  # (N, 5)
    sa, k = np.nonzero(gp < margin)
    npl = nP[k]
    pp = x[sa] - radii[sa][:, None] * npl
    a = np.concatenate([sa, pa]).astype(np.int64)
    b = np.concatenate([-1 - k, pb]).astype(np.int64)
    gap = np.concatenate([gp[sa, k], gs])
    n = np.concatenate([npl, ns]).reshape(-1, 3)
    p = np.concatenate([pp, ps]).reshape(-1, 3)
    order = np.lexsort((b, a))
    return Contacts(a=a[order], b=b[order], gap=gap[order], point=p[order], frame=contact_frames(n[order]))


def contact_jacobian(contacts: Contacts, x: np.ndarray) -> sps.csc_array:
    r""":math:`H \in \mathbb{R}^{6N\times 3n_c}` (module docstring), sparse; ``x`` the centres ``(N, 3)``.

    Column :math:`3c + k` holds :math:`(e_k, r_a\times e_k)` in body :math:`a`'s six rows and
    :math:`-(e_k, r_b\times e_k)` in body :math:`b`'s (spheres only), :math:`e_k` the
    :math:`k`-th row of the frame.
    """
    x = np.asarray(x, dtype=float)
    N, nc = x.shape[0], contacts.nc
    E = contacts.frame  # (nc, 3, 3), rows e_k
    rows, cols, vals = [], [], []
    col = (3 * np.arange(nc))[:, None] + np.arange(3)[None, :]  # (nc, 3)
    for body, sign, mask in ((contacts.a, 1.0, np.ones(nc, bool)), (contacts.b, -1.0, contacts.b >= 0)):
        bi = body[mask]
        r = contacts.point[mask] - x[bi]  # (m, 3)
        Em = E[mask]  # (m, 3 frame rows, 3 xyz)
        ang = np.cross(r[:, None, :], Em)  # (m, 3, 3): r x e_k
        block = np.concatenate([Em, ang], axis=2)  # (m, k, 6)
        rr = 6 * bi[:, None, None] + np.arange(6)[None, None, :]
        cc = np.broadcast_to(col[mask][:, :, None], block.shape)
        rows.append(np.broadcast_to(rr, block.shape).reshape(-1))
        cols.append(cc.reshape(-1))
        vals.append(sign * block.reshape(-1))
    H = sps.coo_array(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(6 * N, 3 * nc)
    )
    return H.tocsc()
