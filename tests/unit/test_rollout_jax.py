"""A compiled rollout as a JAX function (issue 46): mcpkit.jax.casadi_function and
CompiledRollout.jax_rollout, evaluated by CasADi alone (no external solver)."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="JAX is not installed (pip install 'mcpkit[jax]')")
jnp = pytest.importorskip("jax.numpy")

import casadi as ca  # noqa: E402

from mcpkit.errors import MCPInputError, ShapeError  # noqa: E402
from mcpkit.jax import casadi_function  # noqa: E402
from mcpkit.models import CompiledRollout, rollout  # noqa: E402
from mcpkit.models.ecp import make_model  # noqa: E402
from mcpkit.models.ecp.params import SliderParams  # noqa: E402

X0_SLIDE = np.array([0.0, 0.0, 0.0, 0.7, 0.9, 10.0])


@pytest.fixture(autouse=True)
def x64() -> object:
    """float64 for each test, the previous setting restored after it."""
    old = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", old)


def test_casadi_function_values_and_reverse_derivative() -> None:
    """f(x, A) = (A x, sin(x)^T x) through JAX equals NumPy, and jax.grad equals the closed form."""
    x, A = ca.MX.sym("x", 3), ca.MX.sym("A", 2, 3)
    fn = ca.Function("f", [x, A], [ca.mtimes(A, x), ca.dot(ca.sin(x), x)])
    f = casadi_function(fn)
    xv, Av = np.array([0.3, -1.0, 2.0]), np.arange(6.0).reshape(2, 3)
    y, s = f(xv, Av)
    np.testing.assert_allclose(np.asarray(y).ravel(), Av @ xv, rtol=1e-15)
    g = jax.grad(lambda xx: f(xx, Av)[1][0, 0] + jnp.sum(f(xx, Av)[0]))(jnp.asarray(xv))
    np.testing.assert_allclose(g, np.sin(xv) + xv * np.cos(xv) + Av.sum(axis=0), rtol=1e-14)
    with pytest.raises(ShapeError):
        f(np.zeros(2), Av)
    with pytest.raises(MCPInputError):
        casadi_function(lambda v: v)


def test_jax_rollout_equals_rollout_and_its_gradient_the_casadi_jacobian() -> None:
    """§6.1 slider, 30 steps: the JAX rollout's states equal rollout()'s, its residuals are within
    tol, and jax.grad of |q_xy(K)|^2 by (x0, constants) equals 2 q^T dq/d(x0, c) from
    CompiledRollout.jacobian (which is tested against finite differences)."""
    model = make_model("complementarity", SliderParams(g=9.8))
    cr = CompiledRollout(model)
    K = 30
    f = cr.jax_rollout(K, X0_SLIDE)
    c = cr.constant_vector(None)
    states, res = f(X0_SLIDE, np.zeros((K, 0)), np.zeros(0), c)
    ref = rollout(model, X0_SLIDE, steps=K)
    np.testing.assert_allclose(np.asarray(states), ref.states[0], rtol=0, atol=1e-14)
    assert float(jnp.max(res)) <= 1e-10

    def loss(x0: object, cc: object) -> object:
        s, _ = f(x0, jnp.zeros((K, 0)), jnp.zeros(0), cc)
        return jnp.sum(s[-1, :2] ** 2)

    gx, gc = jax.jit(jax.grad(loss, argnums=(0, 1)))(jnp.asarray(X0_SLIDE), jnp.asarray(c))
    J = cr.jacobian(X0_SLIDE, steps=K, wrt=("x0", *cr.constant_names)).jacobian
    want = 2.0 * ref.states[0, -1, :2] @ J[:2]
    np.testing.assert_allclose(np.r_[gx, gc], want, rtol=0, atol=1e-12 * np.abs(want).max())
