"""The hooks of declaration and result methods done by higher layers (:mod:`mcpkit.problems.hooks`):
each is provided once ``mcpkit`` is imported, by the function its value names, and only once."""

from __future__ import annotations

import importlib

import pytest

import mcpkit  # noqa: F401  (imports every providing module)
from mcpkit.errors import MCPKitError
from mcpkit.problems import hooks
from mcpkit.problems.hooks import Hook, implementation, provide


@pytest.mark.parametrize("hook", list(Hook), ids=lambda h: h.name)
def test_every_hook_is_provided_by_the_function_it_names(hook: Hook) -> None:
    module, name = hook.value.split(":")
    assert hook.module == module
    assert implementation(hook) is getattr(importlib.import_module(module), name)


def test_a_hook_has_one_implementation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hooks, "_PROVIDED", dict(hooks._PROVIDED))
    same = implementation(Hook.MCP_TEXT)
    provide(Hook.MCP_TEXT, same)  # a module imported again provides the same function: allowed
    with pytest.raises(MCPKitError, match="provided twice"):
        provide(Hook.MCP_TEXT, lambda *a, **k: "")


def test_a_hook_not_provided_names_its_module(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hooks, "_PROVIDED", {})
    with pytest.raises(MCPKitError, match=r"MCP_TEXT is not provided: import mcpkit\.printing\.mcp"):
        implementation(Hook.MCP_TEXT)


def test_a_namesake_from_another_module_is_a_second_implementation(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpkit.printing.mpcc import to_text as mpcc_to_text

    monkeypatch.setattr(hooks, "_PROVIDED", dict(hooks._PROVIDED))
    with pytest.raises(MCPKitError, match="provided twice"):
        provide(Hook.MCP_TEXT, mpcc_to_text)  # also named to_text, but the MPCC printer's
