"""SI units by default: every default gravity in the models, the MPEC examples and the demos is in m/s².

A model stated in other units (the vibrating-plate studies of Berard, Nguyen, Trinkle and Anderson,
in cm, g and s) says so: its bodies are built with ``.cgs(...)`` / ``units="cgs"`` and its module
declares ``UNITS = "cgs"``; a constant in cgs carries ``_CGS`` in its name.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import mcpkit.frontends
import mcpkit.models
import mcpkit.mpec
from mcpkit.models.stewart_trinkle import Particle, PlanarBody, RigidBody3D
from mcpkit.models.stewart_trinkle.bodies import GRAVITY_CGS, GRAVITY_SI, standard_gravity

#: Standard gravity 9.80665 m/s²; 9.8 and 9.81 (rounded, as papers print it) are SI too.
SI_BAND = (9.7, 9.9)
GRAVITY_NAME = re.compile(r"^(g|g0|gravity|gravity_[xyz]|grav)$")
GRAVITY_CONSTANT = re.compile(r"GRAVITY")


def _modules() -> Iterator[ModuleType]:
    for pkg in (mcpkit.models, mcpkit.mpec, mcpkit.frontends):
        yield pkg
        for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            yield importlib.import_module(info.name)


def _magnitude(value: Any) -> float | None:
    """Largest |entry| of a numeric default (None when it is not numeric)."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return None
    return float(np.abs(a).max()) if a.size else None


def _is_si(g: float) -> bool:
    return g == 0.0 or SI_BAND[0] <= g <= SI_BAND[1]


def _gravity_defaults(module: ModuleType) -> Iterator[tuple[str, float]]:
    """``(where, |g|)`` for every gravity-named default defined in ``module``: module constants,
    function and method parameters, dataclass fields (through the generated ``__init__``)."""
    for name, obj in vars(module).items():
        if GRAVITY_CONSTANT.search(name) and (g := _magnitude(obj)) is not None:
            yield f"{module.__name__}.{name}", g
        if getattr(obj, "__module__", None) != module.__name__:
            continue
        callables = [obj]
        if inspect.isclass(obj):
            callables = [obj.__init__] + [
                v
                for v in vars(obj).values()
                if inspect.isfunction(v) or isinstance(v, classmethod | staticmethod)
            ]
        for fn in callables:
            fn = getattr(fn, "__func__", fn)
            try:
                params = inspect.signature(fn).parameters.values()
            except (TypeError, ValueError):
                continue
            for p in params:
                if GRAVITY_NAME.match(p.name) and (g := _magnitude(p.default)) is not None:
                    if p.default is not inspect.Parameter.empty:
                        yield f"{module.__name__}.{getattr(fn, '__qualname__', name)}({p.name}=...)", g


def test_every_default_gravity_is_si() -> None:
    """A gravity default outside 9.7-9.9 m/s² (or 0) fails, unless its module declares cgs units
    (``UNITS = "cgs"``, then it must be 980.665 cm/s²) or its constant's name ends in ``_CGS``."""
    seen, bad = 0, []
    for module in _modules():
        declared = getattr(module, "UNITS", "SI")
        for where, g in _gravity_defaults(module):
            seen += 1
            if _is_si(g) or where.endswith("_CGS"):
                continue
            if declared == "cgs" and g == GRAVITY_CGS:
                continue
            bad.append(f"{where} = {g}")
    assert not bad, "non-SI gravity defaults: " + "; ".join(bad)
    assert seen >= 5  # the scan found the gravity defaults it is there to check


def test_the_scan_would_catch_a_cgs_default() -> None:
    """The scan is not vacuous: a module with a cgs default and no cgs declaration is reported."""
    fake = ModuleType("fake_model")

    def step(mass: float = 1.0, g: float = 981.0) -> None:  # pragma: no cover - only inspected
        return None

    step.__module__ = "fake_model"
    fake.step = step  # type: ignore[attr-defined]
    found = dict(_gravity_defaults(fake))
    assert found and not all(_is_si(g) for g in found.values())


@pytest.mark.parametrize("cls", [Particle, PlanarBody, RigidBody3D])
def test_bodies_default_to_si_and_cgs_is_named(cls: type) -> None:
    """Default-constructed bodies pull with 9.80665 m/s² and say ``units == "SI"``; the named
    constructor ``.cgs()`` gives 980.665 cm/s² and says ``"cgs"``."""
    body = cls()
    q = np.zeros(body.nq)
    q[3 if body.nq == 7 else 0] = 1.0 if body.nq == 7 else 0.0  # a unit quaternion for the 3-D body
    assert body.units == "SI"
    assert np.max(np.abs(body.gravity)) == GRAVITY_SI == standard_gravity("SI")
    assert np.max(np.abs(body.forces(q, np.zeros(body.nv), 0.0)[:3])) == pytest.approx(body.mass * GRAVITY_SI)
    cgs = cls.cgs()
    assert cgs.units == "cgs" and np.max(np.abs(cgs.gravity)) == GRAVITY_CGS


def test_unknown_units_are_refused() -> None:
    from mcpkit.errors import MCPInputError

    with pytest.raises(MCPInputError, match="units"):
        Particle(units="imperial")  # type: ignore[arg-type]


def test_paper_models_state_their_units() -> None:
    """The vibrating-plate studies build their particle in cgs and their step says so."""
    from mcpkit.models.stewart_trinkle.studies import UNITS, circle_step_model, vose_step_model

    assert UNITS == "cgs"
    for model, _ in (vose_step_model(), circle_step_model(1e-3)):
        assert model.units == "cgs" and model.body.gravity[2] == -GRAVITY_CGS
