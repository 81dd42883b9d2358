"""Every option enum parses through one implementation (:class:`mcpkit.solving.options.Choice`)."""

from __future__ import annotations

import enum

import pytest

from mcpkit.errors import MCPInputError, UnknownOptionError
from mcpkit.models.ecp.simulation import ECPModelKind
from mcpkit.models.fclib import FCLIBFormulation
from mcpkit.models.fclib_equations import ContactLaw
from mcpkit.models.friction.cspace_cone import ContactType
from mcpkit.models.friction.limit_surface import LoadPlane, TwistSampling
from mcpkit.models.friction.lugre_experiments import DriftLoad, LuGreModelKind, PatchKind
from mcpkit.models.friction.lugre_params import Integrator
from mcpkit.models.friction.lugre_reduced import ReducedMode
from mcpkit.models.friction.patch import LoadMethod
from mcpkit.models.pile.step import StepEngine
from mcpkit.models.stepping import OnFailure
from mcpkit.models.stewart_trinkle.studies import StepFormulation
from mcpkit.mpec.grid_continuation import ControlMap
from mcpkit.solving.options import Backend, Choice, IpoptChoice, Method, PairLifting, WarmStart, parse_choice

OPTION_ENUMS: tuple[type[enum.Enum], ...] = (
    WarmStart, Method, Backend, PairLifting, LoadMethod, ReducedMode, Integrator, OnFailure, StepEngine,
    FCLIBFormulation, ContactLaw, ContactType, TwistSampling, ControlMap, IpoptChoice,
    ECPModelKind, PatchKind, LuGreModelKind, DriftLoad, LoadPlane, StepFormulation,
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


def test_model_functions_refuse_an_unknown_name_before_building_anything() -> None:
    """The studies' string arguments parse through their enums: a typo is a typed error with a
    hint, not a silent default (``circle_step_model`` took any name but "ncp" for the LCP)."""
    from mcpkit.models.ecp.params import SliderParams
    from mcpkit.models.ecp.simulation import make_model
    from mcpkit.models.friction.lugre_experiments import drift_experiment, make_patch
    from mcpkit.models.stewart_trinkle.studies import circle_step_model, vose_step_model

    with pytest.raises(UnknownOptionError, match=r"unknown ECP model 'quadratc'.*Did you mean 'quadratic'"):
        make_model("quadratc", SliderParams())
    with pytest.raises(UnknownOptionError, match=r"unknown formulation 'lpc'"):
        circle_step_model(1e-3, "lpc")
    with pytest.raises(UnknownOptionError, match=r"unknown formulation 'ncpp'"):
        vose_step_model(formulation="ncpp")
    with pytest.raises(UnknownOptionError, match=r"unknown patch kind 'hexagon'"):
        make_patch("hexagon")
    with pytest.raises(UnknownOptionError, match=r"unknown model 'reducd'.*Did you mean 'reduced'"):
        drift_experiment(model="reducd")
    with pytest.raises(UnknownOptionError, match=r"unknown load 'shear'"):
        drift_experiment(load="shear")
    assert type(circle_step_model(1e-3, "LCP")[0]).__name__ == "LCPStep"
    assert type(make_model("Complementarity", SliderParams())).__name__ == "ComplementarityECPStep"
