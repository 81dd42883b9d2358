r"""JAX bridge: the solution map :math:`p \mapsto z^*(p)` of a parametric MCP as a differentiable function.

Usage (float64 must be on before arrays are made)::

    import jax
    jax.config.update("jax_enable_x64", True)
    import mcpkit.jax

    z_of = mcpkit.jax.mcp_function(mcp, tol=1e-10)    # p -> z*(p)
    g = jax.grad(lambda p: z_of(p).sum())(p0)          # (dz/dp)^T 1

:func:`mcp_function` wraps one :class:`mcpkit.Solver` in a :func:`jax.custom_vjp`:

* forward: the solve runs on the host (:func:`jax.pure_callback`, so the function also works under
  :func:`jax.jit` and, one solve after another, :func:`jax.vmap`); an unsolved MCP raises
  :class:`~mcpkit.errors.SolveFailedError` there, never a silent point;
* backward: :math:`\bar p = (dz/dp)^\top \bar z = -J_{p,I}^\top J_{II}^{-\top} \bar z_I`, one
  transposed solve with :math:`J_{II} = \partial F_I/\partial z_I` at the solution
  (:meth:`mcpkit.stationarity.sensitivity.Linearization.vjp`). The linearisation of the last point is kept,
  so :func:`jax.jacrev` (one backward pass per output) factorises :math:`J_{II}` once. At a point
  with degenerate pairs the gradient does not exist and the backward pass raises
  :class:`~mcpkit.errors.NotDifferentiableError` (use
  :meth:`MCPResult.sensitivity(direction=...) <mcpkit.solving.result.MCPResult.sensitivity>` for
  directional derivatives there).

Reverse mode only (:func:`jax.grad`, :func:`jax.vjp`, :func:`jax.jacrev`): a ``custom_vjp``
function has no forward-mode rule, so :func:`jax.jvp` and :func:`jax.jacfwd` are refused by JAX.
JAX must run in float64 (``jax.config.update("jax_enable_x64", True)`` before any array is made):
the solve tolerances mean nothing in float32, so a call with x64 off raises
:class:`~mcpkit.errors.MCPInputError`. Exceptions raised on the host reach the caller wrapped by
JAX (the mcpkit message is kept in the text). Install with ``pip install mcpkit[jax]``; without
JAX this module still imports and :func:`mcp_function` raises
:class:`~mcpkit.errors.SolverNotAvailableError` saying so.

This module is named like the ``jax`` package; it imports it absolutely (``import jax``), which
always finds the installed package.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mcpkit.errors import (
    MCPInputError,
    NonFiniteError,
    ShapeError,
    SolveFailedError,
    SolverNotAvailableError,
)
from mcpkit.frontends.solve import Solver
from mcpkit.problems.mcp import MCP
from mcpkit.stationarity.sensitivity import Linearization, linearize

__all__ = ["casadi_function", "mcp_function", "require_x64"]

try:
    import jax
    import jax.numpy as jnp
except ImportError as exc:  # pragma: no cover - exercised only without jax
    _JAX_MISSING: str | None = f"mcpkit.jax needs JAX: pip install 'mcpkit[jax]' (or pip install jax); {exc}"
else:
    _JAX_MISSING = None


def _require_jax() -> None:
    if _JAX_MISSING is not None:  # pragma: no cover - exercised only without jax
        raise SolverNotAvailableError(_JAX_MISSING)


def require_x64() -> None:
    """Raise :class:`~mcpkit.errors.MCPInputError` unless JAX runs in float64."""
    _require_jax()
    if not jax.config.read("jax_enable_x64"):
        raise MCPInputError(
            "mcpkit.jax needs float64: call jax.config.update('jax_enable_x64', True) before creating "
            "arrays (solve tolerances and implicit derivatives are meaningless in float32)"
        )


class _HostSolver:
    """Host side of :func:`mcp_function`: solves, and vector-Jacobian products at the last linearisation."""

    def __init__(self, mcp: MCP, backend: str, method: str, solve_options: dict[str, Any]) -> None:
        self.mcp = mcp
        self.solver = Solver(mcp, backend=backend, method=method, **solve_options)
        self.tol = self.solver.options.tol
        self._lin: tuple[bytes, Linearization] | None = None

    def solve(self, p: np.ndarray) -> np.ndarray:
        pv = np.asarray(p, dtype=float).reshape(-1)
        res = self.solver.solve(p=pv)
        if not res.solved:
            raise SolveFailedError(
                f"mcpkit.jax: the MCP was not solved at p = {pv.tolist()}: {res.message}", res
            )
        return np.asarray(res.z, dtype=np.float64)

    def vjp(self, p: np.ndarray, z: np.ndarray, g: np.ndarray) -> np.ndarray:
        pv = np.asarray(p, dtype=float).reshape(-1)
        zv = np.asarray(z, dtype=float).reshape(-1)
        key = pv.tobytes() + zv.tobytes()
        if self._lin is None or self._lin[0] != key:
            self._lin = (key, linearize(self.mcp, zv, pv, self.tol))
        return self._lin[1].vjp(np.asarray(g, dtype=float).reshape(-1)).astype(np.float64)


def _dtype_kind(p: Any) -> str:
    """NumPy's kind letter of ``p``'s dtype (``"f"``, ``"c"``, ``"U"``, ...), also for a JAX tracer."""
    dtype = getattr(p, "dtype", None)
    if dtype is None:
        try:
            dtype = np.asarray(p).dtype
        except (TypeError, ValueError):
            return "O"
    return np.dtype(dtype).kind


def mcp_function(
    mcp: MCP, *, backend: str = "auto", method: str = "auto", **solve_options: Any
) -> Callable[[Any], Any]:
    r"""The solution map :math:`p \mapsto z^*(p)` of ``mcp`` as a JAX function with a custom VJP.

    Parameters
    ----------
    mcp
        A parametric :class:`~mcpkit.MCP` (at least one parameter); :math:`p` is its stacked
        parameter vector (:attr:`~mcpkit.MCP.parameter_values` order), :math:`z` the stacked
        variables.
    backend, method, **solve_options
        As for :class:`mcpkit.Solver` (``tol=1e-10``, ...). One solver is built here and reused
        (warm starts) by every call.

    Returns
    -------
    callable
        ``f(p) -> z``: ``p`` of shape ``(n_p,)``, ``z`` of shape ``(n,)``, float64; differentiable
        in reverse mode by :math:`(dz/dp)^\top \bar z` (module docstring).

    Raises
    ------
    SolverNotAvailableError
        JAX is not installed (this module imports without it).
    MCPInputError
        The MCP has no parameters, or (when ``f`` is called) JAX is not in float64 mode, or ``p``
        has the wrong shape, is complex or is not numbers (checked before the solver runs).
    NonFiniteError
        ``p`` holds NaN or inf (checked when ``p`` is concrete, i.e. outside ``jax.jit``).
    """
    _require_jax()
    if not isinstance(mcp, MCP):
        raise MCPInputError(f"mcp_function expects an mcpkit.MCP, got {type(mcp).__name__}")
    if mcp.n_params == 0:
        raise MCPInputError(f"MCP {mcp.name!r} has no parameters: nothing to differentiate with respect to")
    host = _HostSolver(mcp, backend, method, solve_options)
    n, n_p = mcp.n, mcp.n_params
    z_shape = jax.ShapeDtypeStruct((n,), jnp.float64)
    p_shape = jax.ShapeDtypeStruct((n_p,), jnp.float64)

    def check(p: Any) -> Any:
        require_x64()
        kind = _dtype_kind(p)
        if kind == "c":
            raise MCPInputError("mcp_function: p is complex; the MCP's parameters are real numbers")
        if kind not in "fiub":
            raise MCPInputError(f"mcp_function: p must hold real numbers, got {type(p).__name__} {p!r:.60}")
        p = jnp.asarray(p, dtype=jnp.float64)
        if p.shape != (n_p,):
            raise MCPInputError(f"mcp_function: p must have shape ({n_p},), got {p.shape}")
        if not isinstance(p, jax.core.Tracer) and not np.isfinite(np.asarray(p)).all():  # concrete p
            bad = np.flatnonzero(~np.isfinite(np.asarray(p)))
            raise NonFiniteError(f"mcp_function: p has NaN or inf (entries {bad[:10].tolist()})")
        return p

    @jax.custom_vjp
    def solution(p: Any) -> Any:
        return jax.pure_callback(host.solve, z_shape, p, vmap_method="sequential")

    def forward(p: Any) -> tuple[Any, tuple[Any, Any]]:
        z = solution(p)
        return z, (p, z)

    def backward(res: tuple[Any, Any], g: Any) -> tuple[Any]:
        p, z = res
        return (jax.pure_callback(host.vjp, p_shape, p, z, g, vmap_method="sequential"),)

    solution.defvjp(forward, backward)

    def f(p: Any) -> Any:
        return solution(check(p))

    f.__doc__ = f"z*(p) of MCP {mcp.name!r} (n = {n}, n_p = {n_p}); see mcpkit.jax.mcp_function."
    f.solver = host.solver  # type: ignore[attr-defined]
    return f


def casadi_function(fn: Any) -> Callable[..., Any]:
    r"""A ``casadi.Function`` as a JAX function, differentiable in reverse mode through CasADi's AD.

    ``f(*inputs) -> tuple of outputs``, each input and output a float64 array of the CasADi shape
    (``(rows, cols)``; a column vector may also be passed as ``(rows,)``). The forward pass
    evaluates ``fn`` on the host (:func:`jax.pure_callback`), the backward pass its reverse-mode
    derivative ``fn.reverse(1)``: :math:`\bar x_i = \sum_j (\partial y_j/\partial x_i)^\top \bar y_j`.
    Used for compiled rollouts (:meth:`mcpkit.models.compiled_rollout.CompiledRollout.jax_rollout`:
    the whole trajectory, its solver compiled, as one JAX function).

    Raises
    ------
    SolverNotAvailableError
        JAX is not installed.
    MCPInputError
        ``fn`` is not a ``casadi.Function``, or (when called) float64 is off or an input has the
        wrong shape (:class:`~mcpkit.errors.ShapeError`).
    """
    _require_jax()
    import casadi as ca

    if not isinstance(fn, ca.Function):
        raise MCPInputError(f"casadi_function expects a casadi.Function, got {type(fn).__name__}")
    n_in, n_out = fn.n_in(), fn.n_out()
    in_shapes = [(fn.size1_in(i), fn.size2_in(i)) for i in range(n_in)]
    out_specs = tuple(
        jax.ShapeDtypeStruct((fn.size1_out(j), fn.size2_out(j)), jnp.float64) for j in range(n_out)
    )
    in_specs = tuple(jax.ShapeDtypeStruct(sh, jnp.float64) for sh in in_shapes)
    rev = fn.reverse(1)

    def host(*args: Any) -> tuple[np.ndarray, ...]:
        out = fn(*[np.asarray(a, dtype=float) for a in args])
        out = out if isinstance(out, (list, tuple)) else [out]
        return tuple(
            np.asarray(o, dtype=np.float64).reshape(sp.shape) for o, sp in zip(out, out_specs, strict=True)
        )

    def host_vjp(*args: Any) -> tuple[np.ndarray, ...]:
        out = rev(*[np.asarray(a, dtype=float) for a in args])
        out = out if isinstance(out, (list, tuple)) else [out]
        return tuple(
            np.asarray(o, dtype=np.float64).reshape(sp.shape) for o, sp in zip(out, in_specs, strict=True)
        )

    @jax.custom_vjp
    def call(*args: Any) -> Any:
        return jax.pure_callback(host, out_specs, *args, vmap_method="sequential")

    def forward(*args: Any) -> tuple[Any, tuple[Any, Any]]:
        out = call(*args)
        return out, (args, out)

    def backward(res: tuple[Any, Any], g: Any) -> tuple[Any, ...]:
        args, out = res
        return jax.pure_callback(host_vjp, in_specs, *args, *out, *g, vmap_method="sequential")

    call.defvjp(forward, backward)

    def f(*args: Any) -> Any:
        require_x64()
        if len(args) != n_in:
            raise MCPInputError(f"{fn.name()} takes {n_in} inputs, got {len(args)}")
        xs = []
        for i, (a, sh) in enumerate(zip(args, in_shapes, strict=True)):
            x = jnp.asarray(a, dtype=jnp.float64)
            if x.ndim == 1 and sh[1] == 1 and x.shape[0] == sh[0]:
                x = x.reshape(sh)
            if x.shape != sh:
                raise ShapeError(f"{fn.name()}: input {fn.name_in(i)} must have shape {sh}, got {x.shape}")
            xs.append(x)
        return call(*xs)

    f.__doc__ = f"casadi.Function {fn.name()} as a JAX function; see mcpkit.jax.casadi_function."
    return f
