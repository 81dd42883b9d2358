r"""An MCP :math:`l \le z \le u \perp F(z; p)` whose :math:`F` is a ``casadi.Function``.

:func:`mcp_from_casadi` turns a CasADi function ``(z) -> F`` or ``(z, p) -> F`` (SX or MX) into
an ordinary declaration (:class:`~mcpkit.problems.mcp.MCP`), so everything that reads declarations
works unchanged: the printer, the CasADi and Pyomo lowerings, PATH through GAMSPy, ``newton``,
``lemke`` and the IPOPT homotopies. One variable block ``z`` (size :math:`n`) carries the bounds
and the start; one parameter block ``p`` (size :math:`m`, if :math:`m > 0`) the values.

How :math:`F` becomes a function block:

* **affine** :math:`F`, i.e. a Jacobian :math:`\partial F/\partial z` that CasADi's SX graph
  states as a constant (it depends on neither :math:`z` nor :math:`p`): an affine block
  :math:`F = M z + q(p)` with :math:`M` the evaluated Jacobian (sparse, CasADi's sparsity) and
  :math:`q(p) = F(0; p)`. ``lemke`` and the affine fast paths (constant Jacobian, row scaling)
  then apply. The test is structural: an :math:`F` that is affine only after simplification
  (``(z+1)**2 - z**2``) counts as nonlinear, which is correct, only slower;
* otherwise a **symbolic** block: the function's SX algorithm replayed instruction by
  instruction into sympy expressions (:func:`~mcpkit.lowering.casadi_sympy.casadi_to_sympy`, the walker of
  :mod:`mcpkit.lowering.sx_replay`), in the declaration's own symbols. The expressions compute
  what CasADi computes, operation for operation (sympy may fold constants and merge equal terms).

Nonsmooth :math:`F` (``if_else``, comparisons, logic, ``fmin``, ``fmax``, ``fabs``) become
``Piecewise``, ``Min``, ``Max`` and ``Abs`` rows (a row with few ``Piecewise`` terms folded into
one), never an affine block: the affinity test is structural. Limits: operations with no sympy
counterpart that the lowerings can carry back (``fmod``, ``erf``, calls to external functions)
raise :class:`~mcpkit.errors.MCPInputError` naming the operation; ``mcpkit.solve_mcp`` solves
such a function on the CasADi function itself (``method="newton"``). The replay costs sympy's speed (tens
of microseconds per operation), which is fine for the MCPLIB-size functions the file format
carries; large affine functions never enter sympy.
"""

from __future__ import annotations

from typing import Any

import casadi as ca
import numpy as np
import scipy.sparse as sps
import sympy as sp

from mcpkit.errors import MCPInputError, ShapeError
from mcpkit.lowering.casadi_sympy import casadi_to_sympy
from mcpkit.lowering.sx_replay import (
    AFFINE,
    PARAMETER,
    as_sx_function,
    is_affine_in,
)
from mcpkit.problems.arrays import ArrayLike
from mcpkit.problems.hooks import Hook, provide
from mcpkit.problems.mcp import MCP


def casadi_signature(F: Any, what: str = "F") -> tuple[int, int]:
    r"""``(n, m)`` of a CasADi function :math:`F: \mathbb{R}^n (\times \mathbb{R}^m) \to \mathbb{R}^n`.

    Raises
    ------
    MCPInputError
        ``F`` is not a ``casadi.Function`` or has free symbols.
    ShapeError
        Not one or two dense vector inputs and one vector output of the length of ``z``.
    """
    if not isinstance(F, ca.Function):
        raise MCPInputError(
            f"{what} must be a casadi.Function (z) -> F or (z, p) -> F, got {type(F).__name__}"
        )
    if F.n_in() not in (1, 2) or F.n_out() != 1:
        raise ShapeError(
            f"{what} = {F.name()!r} must take (z) or (z, p) and return F; it has {F.n_in()} inputs "
            f"and {F.n_out()} outputs"
        )
    if F.has_free():
        raise MCPInputError(f"{what} = {F.name()!r} has free symbols {F.get_free()}; make them inputs")
    for k, label in enumerate(("z", "p")[: F.n_in()]):
        sp_in = F.sparsity_in(k)
        if not sp_in.is_vector() and sp_in.numel() > 0 or not sp_in.is_dense():
            raise ShapeError(f"{what}: input {label} must be a dense vector, got shape {F.size_in(k)}")
    n = int(F.numel_in(0))
    m = int(F.numel_in(1)) if F.n_in() == 2 else 0
    if n < 1:
        raise ShapeError(f"{what}: z has no entries")
    if F.numel_out(0) != n or not F.sparsity_out(0).is_vector():
        raise ShapeError(f"{what} must map z (n = {n}) to a vector of {n} values, got shape {F.size_out(0)}")
    return n, m


def affine_parts(F: ca.Function) -> tuple[sps.csc_matrix, ca.Function] | None:
    r"""``(M, q)`` with :math:`F(z; p) = M z + q(p)` when ``F`` is affine in ``z``, else ``None``.

    Affinity is decided on the expression graph (:func:`~mcpkit.lowering.sx_replay.affinity`),
    not by a constant Jacobian: ``floor``, ``sign``, ``if_else``, comparisons and the like have
    constant (zero) derivatives but are not affine, and replacing them by their Jacobian would
    declare a different ``F`` (``if_else(z >= 1, 5, 0) + z - 2`` became ``z - 2``). ``M`` is the
    Jacobian with CasADi's sparsity; ``q`` the CasADi function ``(p) -> F(0; p)``.
    """
    Fs = as_sx_function(F, "mcp_from_casadi")
    if not is_affine_in(Fs, [AFFINE, PARAMETER][: Fs.n_in()]):
        return None
    z = Fs.sx_in(0)
    p = Fs.sx_in(1) if Fs.n_in() == 2 else ca.SX(0, 1)
    out = ca.vec(Fs(z, p) if Fs.n_in() == 2 else Fs(z))
    J = ca.jacobian(out, ca.vec(z))
    symbols = ca.vertcat(ca.vec(z), ca.vec(p))
    if J.nnz() and ca.depends_on(J, symbols):
        return None
    M = sps.csc_matrix(ca.DM(ca.evalf(J)).sparse()) if J.nnz() else sps.csc_matrix(J.shape)
    q = ca.Function("q", [ca.vec(p)], [ca.densify(ca.substitute(out, ca.vec(z), ca.SX.zeros(z.numel())))])
    return M, q


#: A row with at most this many ``Piecewise`` terms is folded into one ``Piecewise`` (up to
#: :math:`2^k` branches for :math:`k` terms, so larger ones stay sums).
PIECEWISE_FOLD_MAX = 3


def _folded(e: Any) -> Any:
    """``e`` with its ``Piecewise`` terms folded into one (``-z + 4 + Piecewise((-9, z > 2), (0, True))`` is
    ``Piecewise((-z - 5, z > 2), (4 - z, True))``), when it has few (:data:`PIECEWISE_FOLD_MAX`)."""
    if not isinstance(e, sp.Basic) or not e.has(sp.Piecewise):
        return e
    if len(e.atoms(sp.Piecewise)) > PIECEWISE_FOLD_MAX:
        return e
    return sp.piecewise_fold(e)


def mcp_from_casadi(
    F: ca.Function,
    lb: ArrayLike,
    ub: ArrayLike,
    z0: ArrayLike | None = None,
    p0: ArrayLike | None = None,
    name: str | None = None,
) -> MCP:
    r"""The declaration :math:`l \le z \le u \perp F(z; p)` of a CasADi function (module docstring).

    Parameters
    ----------
    F
        ``casadi.Function`` ``(z) -> F`` or ``(z, p) -> F``, SX or MX; ``z`` and ``F`` vectors
        of one length :math:`n`, ``p`` a vector of length :math:`m`.
    lb, ub
        Bounds :math:`l \le u` (scalars broadcast; :math:`\pm\infty` allowed).
    z0
        Starting point (default: the projection of 0 onto the box); finite.
    p0
        Parameter values (required when :math:`m > 0`); finite. They become the block ``p``.
    name
        Name of the MCP (default: ``F.name()``).

    Returns
    -------
    MCP
        Variable block ``z``; parameter block ``p`` when :math:`m > 0`; an affine function block
        when the Jacobian is constant, else a symbolic one.

    Raises
    ------
    MCPInputError
        Not a CasADi function, free symbols, ``p0`` missing or superfluous, an operation with no
        sympy counterpart; subclasses :class:`~mcpkit.errors.ShapeError` (shapes),
        :class:`~mcpkit.errors.NonFiniteError` (NaN in bounds, non-finite ``z0``/``p0``) and
        :class:`~mcpkit.errors.BoundsError` (:math:`l > u`).
    """
    n, m = casadi_signature(F)
    if m and p0 is None:
        raise MCPInputError(f"F = {F.name()!r} takes parameters p ({m} values): pass p0")
    if not m and p0 is not None and np.size(p0):
        raise ShapeError(f"p0 has {np.size(p0)} values but F = {F.name()!r} takes no parameters")
    mcp = MCP(name or F.name())
    z = list(mcp.add_variables("z", n, lb=lb, ub=ub, start=z0))
    p = list(mcp.add_parameters("p", m, value=p0)) if m else []
    parts = affine_parts(F)
    if parts is not None:
        M, q_fun = parts
        (q,) = casadi_to_sympy(q_fun, [p])
        q_rows: Any = q if any(isinstance(e, sp.Basic) and e.free_symbols for e in q) else np.array(q, float)
        mcp.add_affine("z", M, q_rows)  # kept sparse by the declaration
    else:
        inputs = [z, p] if F.n_in() == 2 else [z]
        (exprs,) = casadi_to_sympy(F, inputs)
        mcp.add_functions("z", [_folded(e) for e in exprs])
    return mcp


provide(Hook.MCP_FROM_CASADI, mcp_from_casadi)
