"""``simulate`` checks its inputs before the first step is solved.

Before, text in ``x0`` (or in the controls) was read as numbers, ``t0=nan`` ran with NaN times,
``deadline="a"`` raised a bare ``TypeError`` inside the loop, and a run of more steps than
rows of controls failed with a ``ShapeError`` only when it reached the first missing row.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError
from mcpkit.models import stepping
from mcpkit.models.stepping import simulate
from mcpkit.mpec.examples.block import BlockTask, make_step


@pytest.fixture
def model() -> Any:
    return make_step(BlockTask(n_steps=10)).with_inputs(np.zeros((5, 1)))


@pytest.mark.parametrize(
    "kwargs, err, says",
    [
        ({"x0": ["0"] * 6}, MCPInputError, "x0: numbers expected"),
        ({"t0": math.nan}, NonFiniteError, "t0 must be finite"),
        ({"t0": "0"}, MCPInputError, "t0 must be a real number"),
        ({"deadline": "a"}, MCPInputError, "deadline must be"),
        ({"deadline": math.nan}, MCPInputError, "deadline must be"),
        ({"n_steps": 6}, ShapeError, "6 steps need 6 rows of controls; 5 were given"),
    ],
)
def test_simulate_refuses_before_solving(
    model: Any, kwargs: dict[str, Any], err: type[Exception], says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def never(*_: Any, **__: Any) -> Any:  # pragma: no cover - reached only if a check is missing
        raise AssertionError("a solver was built")

    monkeypatch.setattr(stepping, "Solver", never)
    monkeypatch.setattr(type(model), "make_solver", never, raising=False)
    args = {"x0": np.zeros(6), "n_steps": 5} | kwargs
    with pytest.raises(err, match=says):
        simulate(model, **args)


def test_controls_and_design_text_refused() -> None:
    step = make_step(BlockTask(n_steps=10))
    with pytest.raises(MCPInputError, match="controls: numbers expected"):
        step.with_inputs([["1"], ["2"]])
    assert step.with_inputs(np.zeros((3, 1))).control_rows == 3
    assert step.control_rows is None
