"""The planners' task dataclasses refuse bad fields with typed errors when they are made.

Before, ``PushTask(goal=(nan, 0, 0))`` and ``PushTask(goal=(1, 2))`` were accepted (the first
planned towards NaN, the second failed inside the horizon build), ``PushTask(n_steps=True)`` and
``BlockTask(n_steps=True)`` were one-step tasks, ``PushTask(force_max="5")`` was five newtons and
``BlockTask(mass="1")`` raised a bare ``TypeError``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pytest

from mcpkit.errors import MCPInputError, NonFiniteError, ShapeError
from mcpkit.mpec.examples.block import BlockTask
from mcpkit.mpec.examples.plate_design import PlateDesignTask
from mcpkit.mpec.examples.pushing import PushTask
from mcpkit.problems.arrays import as_count, as_real


@pytest.mark.parametrize(
    "fields, err",
    [
        ({"goal": (math.nan, 0.0, 0.0)}, NonFiniteError),
        ({"start": (0.0, math.inf, 0.0)}, NonFiniteError),
        ({"goal": (1.0, 2.0)}, ShapeError),
        ({"goal": 0.04}, ShapeError),
        ({"goal": ("a", 0.0, 0.0)}, MCPInputError),
        ({"n_steps": True}, MCPInputError),
        ({"n_steps": 0}, MCPInputError),
        ({"n_steps": 2.0}, MCPInputError),
        ({"force_max": "5"}, MCPInputError),
        ({"force_max": -1.0}, MCPInputError),
        ({"mu_pusher": math.nan}, NonFiniteError),
        ({"contact_range": (-0.01,)}, ShapeError),
        ({"contact_range": (math.nan, 0.01)}, NonFiniteError),
        ({"contact_range": (0.01, -0.01)}, MCPInputError),
    ],
)
def test_push_task_refuses(fields: dict[str, Any], err: type[Exception]) -> None:
    with pytest.raises(err, match="PushTask"):
        PushTask(**fields)


@pytest.mark.parametrize(
    "fields, err",
    [
        ({"n_steps": True}, MCPInputError),
        ({"n_steps": 10.0}, MCPInputError),
        ({"mass": "1"}, MCPInputError),
        ({"mass": 0.0}, MCPInputError),
        ({"mu": -0.1}, MCPInputError),
        ({"distance": math.nan}, NonFiniteError),
        ({"duration": math.inf}, NonFiniteError),
        ({"force_bound": True}, MCPInputError),
    ],
)
def test_block_task_refuses(fields: dict[str, Any], err: type[Exception]) -> None:
    with pytest.raises(err, match="BlockTask"):
        BlockTask(**fields)


@pytest.mark.parametrize(
    "fields, err",
    [
        ({"radius": True}, MCPInputError),
        ({"radius": "6"}, MCPInputError),
        ({"omega": math.nan}, NonFiniteError),
        ({"periods": True}, MCPInputError),
        ({"steps_per_period": 20.0}, MCPInputError),
    ],
)
def test_plate_design_task_refuses(fields: dict[str, Any], err: type[Exception]) -> None:
    with pytest.raises(err, match="PlateDesignTask"):
        PlateDesignTask(**fields)


def test_valid_tasks_and_the_helpers() -> None:
    assert PushTask(goal=np.array([0.03, 0.0, 0.1]), n_steps=np.int64(20)).n_steps == 20
    assert BlockTask(mass=2, n_steps=5).h == pytest.approx(0.2)
    assert as_real(np.float32(1.5), "x") == 1.5 and as_count(np.int32(3), "k") == 3
    with pytest.raises(MCPInputError, match="k must be an integer >= 0"):
        as_count(-1, "k", 0)


def test_model_parameters_refuse_strings_and_bools() -> None:
    """Slider and body parameters went through ``float()``, which took ``"0.5"`` and ``True``."""
    from mcpkit.models.ecp.params import paper_slider
    from mcpkit.models.stewart_trinkle.bodies import Particle

    base = paper_slider()
    for bad in ("0.5", True):
        with pytest.raises(MCPInputError, match="must be a real number"):
            dataclasses.replace(base, m=bad)
        with pytest.raises(MCPInputError, match="must be a real number"):
            Particle(mass=bad)
    assert Particle(mass=np.float64(2.0)).mass == 2.0 and Particle(mass=np.array(2.0)).mass == 2.0


@pytest.mark.parametrize("value", ["1e-4", True, math.nan, -1.0, 0.0])
def test_deviation_tol_is_a_positive_real(value: Any) -> None:
    """``Horizon.solve`` read it with ``float()``, which took ``"1e-4"`` and ``True``."""
    from mcpkit.mpec.examples.block import block_horizon

    hz = block_horizon(BlockTask(n_steps=3))
    with pytest.raises(MCPInputError, match="deviation_tol must be"):
        hz.solve(np.zeros((3, 1)), deviation_tol=value)
