"""simulate_with_gradient and DeclaredStep.with_constants reject bad inputs before any solve."""

from __future__ import annotations

import numpy as np
import pytest

from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError
from mcpkit.models.ecp import QuadraticECPStep, make_model, paper_slider
from mcpkit.models.stepping_gradient import simulate_with_gradient

X0 = np.array([0.0, 0.0, 0.0, 0.7, 0.9, 10.0])


@pytest.fixture(scope="module")
def model() -> QuadraticECPStep:
    m = make_model("quadratic", paper_slider())
    assert isinstance(m, QuadraticECPStep)
    return m


@pytest.mark.parametrize(
    ("wrt", "match"),
    [
        (["friction"], "valid: \\['x0', 'I_z'"),
        ([], "empty"),
        (["mu", "mu"], "more than once"),
        (["design"], "valid"),
    ],
)
def test_bad_wrt(model: QuadraticECPStep, wrt: list[str], match: str) -> None:
    with pytest.raises(MCPInputError, match=match):
        simulate_with_gradient(model, X0, 3, wrt=wrt)


def test_bad_direction(model: QuadraticECPStep) -> None:
    with pytest.raises(ShapeError, match="7 entries"):
        simulate_with_gradient(model, X0, 3, wrt=["mu", "x0"], direction=[1.0, 0.0])
    with pytest.raises(NonFiniteError):
        simulate_with_gradient(model, X0, 3, wrt=["mu"], direction=[np.nan])


def test_not_a_declared_step() -> None:
    with pytest.raises(MCPInputError, match="DeclaredStep"):
        simulate_with_gradient(object(), X0, 3)  # type: ignore[arg-type]


def test_with_constants(model: QuadraticECPStep) -> None:
    with pytest.raises(MCPInputError, match="no constants \\['g'\\]"):
        model.with_constants(g=9.81)
    other = model.with_constants(mu=0.4, m=0.6)
    assert other.params.mu == 0.4 and other.params.m == 0.6 and model.params.mu == paper_slider().mu
    p = other.parameters(0, 0.0, X0)
    assert p["mu"] == 0.4 and p["m"] == 0.6
    assert p["p_nbar"] == pytest.approx(0.6 * 9.8 * 0.01)
    assert other.mcp is model.mcp  # one step MCP (and solver) serves both
