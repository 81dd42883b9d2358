"""Every option enum parses through one implementation (:class:`mcpkit.solving.options.Choice`)."""

from __future__ import annotations

import enum

import pytest

from mcpkit.errors import MCPInputError, UnknownOptionError
from mcpkit.models.fclib import FCLIBFormulation
from mcpkit.models.fclib_equations import ContactLaw
from mcpkit.models.friction.cspace_cone import ContactType
from mcpkit.models.friction.limit_surface import TwistSampling
from mcpkit.models.friction.lugre_params import Integrator
from mcpkit.models.friction.lugre_reduced import ReducedMode
from mcpkit.models.friction.patch import LoadMethod
from mcpkit.models.pile.step import StepEngine
from mcpkit.models.stepping import OnFailure
from mcpkit.mpec.grid_continuation import ControlMap
from mcpkit.solving.options import Backend, Choice, IpoptChoice, Method, PairLifting, WarmStart, parse_choice

OPTION_ENUMS: tuple[type[enum.Enum], ...] = (
    WarmStart, Method, Backend, PairLifting, LoadMethod, ReducedMode, Integrator, OnFailure, StepEngine,
    FCLIBFormulation, ContactLaw, ContactType, TwistSampling, ControlMap, IpoptChoice,
)  # fmt: skip


@pytest.mark.parametrize("cls", OPTION_ENUMS, ids=lambda c: c.__name__)
def test_every_member_parses_from_its_value_in_any_case(cls: type[Choice]) -> None:
    assert issubclass(cls, Choice)
    for member in cls:
        assert cls.parse(member) is member
        assert cls.parse(f" {str(member.value).upper()} ") is member
        assert cls.parse(str(member.value).lower()) is member


@pytest.mark.parametrize("cls", OPTION_ENUMS, ids=lambda c: c.__name__)
def test_an_unknown_value_is_a_typed_error_listing_the_values(cls: type[Choice]) -> None:
    first = str(next(iter(cls)).value)
    with pytest.raises(UnknownOptionError) as err:
        cls.parse(first + "x")
    message = str(err.value)
    assert f"unknown {cls.option_name()} '{first}x'" in message
    assert all(str(m.value) in message for m in cls)
    assert isinstance(err.value, MCPInputError) and isinstance(err.value, ValueError)


def test_the_hint_names_the_closest_value_and_the_option() -> None:
    with pytest.raises(UnknownOptionError, match=r"unknown warm_start 'adaptiv'.*Did you mean 'adaptive'\?"):
        WarmStart.parse("adaptiv")
    with pytest.raises(UnknownOptionError, match=r"unknown lift_pairs 'sometimes'"):
        PairLifting.parse("sometimes")
    with pytest.raises(UnknownOptionError, match=r"unknown FCLIB formulation"):
        parse_choice(FCLIBFormulation, "nope", "FCLIB formulation")


def test_lift_pairs_also_takes_a_bool() -> None:
    assert PairLifting.parse(True) is PairLifting.ALWAYS
    assert PairLifting.parse(False) is PairLifting.NEVER


def test_option_name_is_the_class_name_in_snake_case() -> None:
    assert WarmStart.option_name() == "warm_start"
    assert OnFailure.option_name() == "on_failure"
    assert Method.option_name() == "method"
    assert FCLIBFormulation.option_name() == "fclib_formulation"
