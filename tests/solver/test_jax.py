"""mcpkit.jax.mcp_function: jax.grad and jax.jacrev through an MCP solve (issue 29, item 3).

Skipped, with the reason, when JAX is not installed (``pip install 'mcpkit[jax]'``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="JAX is not installed (pip install 'mcpkit[jax]')")
import jax.numpy as jnp  # noqa: E402

import mcpkit  # noqa: E402
from mcpkit import MCP  # noqa: E402
from mcpkit.errors import MCPInputError  # noqa: E402
from tests.conftest import random_p_matrix  # noqa: E402

mcpkit_jax = pytest.importorskip("mcpkit.jax")

pytestmark = pytest.mark.solver


@pytest.fixture(autouse=True)
def x64() -> object:
    """float64 for each test, the previous setting restored after it."""
    old = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", old)


def nonlinear_mcp() -> MCP:
    """A box MCP with parameters in q, in a product with z and in a bound-active row."""
    rng = np.random.default_rng(11)
    n = 5
    M = random_p_matrix(rng, n, shift=0.5)
    m = MCP("nl")
    z = m.add_variables("z", n, lb=[0.0, -1.0, -math.inf, 0.0, -2.0], ub=[math.inf, 1.0, math.inf, 0.3, 2.0])
    p = m.add_parameters("p", 3, value=[0.2, -0.4, 1.1])
    q0 = rng.standard_normal(n) * 2
    rows = [
        sum(float(M[i, j]) * z[j] for j in range(n)) + float(q0[i]) + p[i % 2] + p[2] * z[i] ** 3 / 5
        for i in range(n)
    ]
    m.add_functions("z", rows)
    return m


def test_grad_equals_finite_differences() -> None:
    m = nonlinear_mcp()
    p0 = m.parameter_values
    f = mcpkit_jax.mcp_function(m, method="newton", tol=1e-12)
    w = np.linspace(-1.0, 2.0, m.n)

    def loss(p: jnp.ndarray) -> jnp.ndarray:
        z = f(p)
        return jnp.dot(w, z) + jnp.sum(z**2)

    g = np.asarray(jax.grad(loss)(jnp.asarray(p0)))
    ref = f.solver.solve(p=p0)
    assert ref.solved and ref.pair_counts().get("between", 0) >= 2, ref.pair_counts()
    h = 1e-5
    fd = np.array([(float(loss(p0 + h * e)) - float(loss(p0 - h * e))) / (2 * h) for e in np.eye(p0.size)])
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-7)


def test_jacrev_equals_sensitivity_and_jit_agrees() -> None:
    rng = np.random.default_rng(3)
    n = 12
    M = random_p_matrix(rng, n)
    q0 = rng.standard_normal(n) * 2
    m = MCP("lcp")
    m.add_variables("z", n, lb=0.0)
    q = m.add_parameters("q", n, value=q0)
    m.add_affine("z", M, list(q))
    f = mcpkit_jax.mcp_function(m, method="lemke", tol=1e-12)
    J = np.asarray(jax.jacrev(f)(jnp.asarray(q0)))
    S = mcpkit.Solver(m, method="lemke", tol=1e-12).solve().sensitivity()
    np.testing.assert_allclose(J, S, rtol=1e-12, atol=1e-14)
    grad = jax.grad(lambda p: jnp.sum(f(p) ** 2))
    np.testing.assert_allclose(np.asarray(jax.jit(grad)(q0)), np.asarray(grad(q0)), rtol=1e-10, atol=1e-13)


def test_degenerate_point_refuses_a_gradient() -> None:
    m = MCP("kink")
    z = m.add_variables("z", 1, lb=0.0)
    (p,) = m.add_parameters("p", 1)
    m.add_functions("z", [z[0] - p])
    f = mcpkit_jax.mcp_function(m)
    np.testing.assert_allclose(np.asarray(f(jnp.array([0.5]))), [0.5], atol=1e-8)
    with pytest.raises(Exception, match="degenerate pair"):
        jax.grad(lambda p: f(p)[0])(jnp.zeros(1))


def test_input_errors() -> None:
    with pytest.raises(MCPInputError, match="no parameters"):
        mcpkit_jax.mcp_function(MCP.lcp(np.eye(2), np.ones(2)))
    f = mcpkit_jax.mcp_function(nonlinear_mcp())
    with pytest.raises(MCPInputError, match=r"shape \(3,\)"):
        f(jnp.zeros(2))
    jax.config.update("jax_enable_x64", False)
    with pytest.raises(MCPInputError, match="jax_enable_x64"):
        f(np.zeros(3))


def test_bad_p_is_refused_before_the_callback() -> None:
    """jax_bad_p.py of the 2026-11-28 fuzz corpus: complex, text and NaN ``p``."""
    from mcpkit.errors import NonFiniteError

    f = mcpkit_jax.mcp_function(nonlinear_mcp())
    calls = []
    f.solver.solve = lambda *a, **k: calls.append(a)  # type: ignore[attr-defined]  # must not be reached
    with pytest.raises(MCPInputError, match="complex"):
        f(np.array([1 + 7j, 0.5, 1.0]))
    with pytest.raises(MCPInputError, match="real numbers"):
        f("abc")
    with pytest.raises(NonFiniteError, match=r"entries \[0\]"):
        f(np.array([np.nan, 0.0, 0.0]))
    assert calls == []
