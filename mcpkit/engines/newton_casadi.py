r"""The CasADi functions the semismooth Newton engine evaluates: :class:`CasadiFunctions`.

:class:`~mcpkit.engines.newton.SemismoothNewton` drives any object that gives :math:`F(z; p)`,
the nonzeros of :math:`J_F(z; p)` and their CSC pattern. :class:`CasadiFunctions` is that object
for a :class:`~mcpkit.lowering.casadi.CasadiMCP` (the declaration lowered to CasADi, or a Pyomo
model read back through its NL import); the constant rows of the declaration's affine blocks
come from :func:`affine_jacobian_rows`, not from CasADi's differentiation. An MCP whose blocks
are all affine with numeric data needs no CasADi at all
(:class:`~mcpkit.engines.newton.AffineFunctions`).
"""

from __future__ import annotations

import casadi as ca
import numpy as np
import scipy.sparse as sps

from mcpkit.lowering.casadi import CasadiMCP
from mcpkit.problems.functions import AffineFunction
from mcpkit.problems.mcp import MCP, place_affine_block
from mcpkit.problems.names import casadi_name


def affine_jacobian_rows(problem: MCP) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""The constant Jacobian rows of the declaration's affine blocks :math:`F_B = M z_S + q(p)`.

    Returns ``(rows, r, c, v)``: the row indices those blocks cover, and the nonzeros
    :math:`J_{rc} = v` of :math:`M` placed at the rows of :math:`B` and the columns of
    :math:`z_S`. ``M`` may be a NumPy array (its nonzeros are found once) or the declaration's
    SciPy sparse matrix, whose stored entries are taken as they are: time and memory
    :math:`O(\mathrm{nnz})`, no dense step.
    """
    slices = problem.block_slices
    rows: list[np.ndarray] = []
    rr: list[np.ndarray] = []
    cc: list[np.ndarray] = []
    vv: list[np.ndarray] = []
    for b in problem.blocks:
        fb = problem.function_block(b.name)
        if not isinstance(fb, AffineFunction):
            continue
        cols = np.concatenate([np.arange(slices[nm].start, slices[nm].stop) for nm in fb.over])
        r, c, v = place_affine_block(b.start, cols, fb.M)  # as AffineMap.jacobian places them
        rows.append(np.arange(b.start, b.start + b.size))
        rr.append(r)
        cc.append(c)
        vv.append(v)
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, np.zeros(0)
    return np.concatenate(rows), np.concatenate(rr), np.concatenate(cc), np.concatenate(vv)


class CasadiFunctions:
    r""":math:`F(z; p)` and :math:`J_F(z; p)` of a :class:`~mcpkit.lowering.casadi.CasadiMCP`, built once.

    Both are evaluated through CasADi's buffer interface (``Function.buffer()``): inputs and
    outputs are preallocated NumPy arrays, so an evaluation allocates nothing and costs well
    under a microsecond of Python overhead. ``colind``/``row`` are the CSC pattern of
    :math:`J_F` (CasADi's sparsity); ``jac_depends_on_z``/``jac_depends_on_p`` say when it must
    be re-evaluated.

    ``constant_rows = (rows, r, c, v)`` (from :func:`affine_jacobian_rows`) gives rows of
    :math:`J_F` that are known constants (affine blocks of the declaration): CasADi then
    differentiates only the other rows. CasADi's MX ``jacobian`` of a dense affine block costs
    seconds at :math:`n = 1000` (about 2 s, measured); the declaration already holds the matrix.
    """

    def __init__(
        self,
        cas: CasadiMCP,
        constant_rows: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None,
    ) -> None:
        n = self.n = int(cas.z.numel())
        self.n_params = int(cas.p.numel())
        self.name = cas.name
        self.F_fun = ca.Function(
            casadi_name(f"{cas.name}_newton_F"), [cas.z, cas.p], [ca.densify(cas.F)], ["z", "p"], ["F"]
        )
        crows, cr, cc, cv = (
            constant_rows
            if constant_rows is not None
            else (np.zeros(0, dtype=np.int64),) * 3 + (np.zeros(0),)
        )
        sym_rows = np.setdiff1d(np.arange(n), crows)
        if sym_rows.size == n:
            Jexpr = ca.jacobian(cas.F, cas.z)
        elif sym_rows.size:
            Jexpr = ca.jacobian(cas.F[sym_rows.tolist()], cas.z)
        else:
            Jexpr = type(cas.z)(0, n)
        self.J_fun = ca.Function(
            casadi_name(f"{cas.name}_newton_J"), [cas.z, cas.p], [Jexpr], ["z", "p"], ["J"]
        )
        sp = self.J_fun.sparsity_out(0)
        nnz = sp.nnz()
        self.jac_depends_on_z = bool(nnz and ca.depends_on(Jexpr, cas.z))
        self.jac_depends_on_p = bool(self.n_params and nnz and ca.depends_on(Jexpr, cas.p))
        s_col = np.repeat(np.arange(n, dtype=np.int64), np.diff(np.asarray(sp.colind(), dtype=np.int64)))
        s_row = sym_rows[np.asarray(sp.row(), dtype=np.int64)] if nnz else np.zeros(0, dtype=np.int64)
        # one CSC pattern for both parts: CasADi's entries then the constants; SciPy's COO -> CSC
        # conversion sorts them (in C), carrying each entry's index as its value
        rows = np.concatenate([s_row, np.asarray(cr, dtype=np.int64)])
        cols = np.concatenate([s_col, np.asarray(cc, dtype=np.int64)])
        tag = sps.csc_matrix((np.arange(1.0, rows.size + 1.0), (rows, cols)), shape=(n, n))
        tag.sort_indices()
        order = tag.data.astype(np.int64) - 1
        pos = np.empty_like(order)
        pos[order] = np.arange(order.size)
        self.colind, self.row = tag.indptr.astype(np.int64), tag.indices.astype(np.int64)
        self._cas_pos = pos[:nnz]
        self._values = np.zeros(rows.size)
        self._values[pos[nnz:]] = cv
        self._z = np.zeros(n)
        self._p = np.zeros(self.n_params)
        self._F = np.zeros(n)
        self._J = np.zeros(nnz)
        self._fbuf, self._feval = self.F_fun.buffer()
        self._jbuf, self._jeval = self.J_fun.buffer()
        for buf, out in ((self._fbuf, self._F), (self._jbuf, self._J)):
            buf.set_arg(0, memoryview(self._z))
            buf.set_arg(1, memoryview(self._p))
            buf.set_res(0, memoryview(out))

    def set_parameters(self, p: np.ndarray) -> None:
        """Parameter values for the following evaluations."""
        self._p[:] = p

    def F(self, z: np.ndarray) -> np.ndarray:
        """:math:`F(z; p)` (a new array)."""
        self._z[:] = z
        self._feval()
        return self._F.copy()

    def J(self, z: np.ndarray) -> np.ndarray:
        """Nonzeros of :math:`J_F(z; p)` in the CSC order of ``colind``/``row`` (overwritten next call)."""
        if self._J.size:
            self._z[:] = z
            self._jeval()
            self._values[self._cas_pos] = self._J
        return self._values
