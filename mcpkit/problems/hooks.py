r"""Methods of declarations and results whose work lives in a higher layer: :math:`\mathrm{hook} \mapsto f`.

The folders are layers (``docs/contributing.md``): a folder imports only the folders below it.
A few methods users call on a declaration or a result are done by a higher layer: ``MCP.to_text()``
by :mod:`mcpkit.printing`, ``MCP.evaluator()`` on a nonlinear :math:`F` by the CasADi lowering,
``MCPResult.sensitivity()`` by :mod:`mcpkit.stationarity`. The method calls :func:`implementation`
of its :class:`Hook`; the module that does the work registers itself with :func:`provide` when it
is imported, and ``mcpkit/__init__.py`` (the top, which every ``import mcpkit...`` runs first)
imports each such module, so every hook is provided before a user can call a method.

One table, no decisions: a hook has exactly one implementation (providing it twice with different
functions is an error), and a hook nobody provided names the module that should have.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any

from mcpkit.errors import MCPKitError

__all__ = ["Hook", "implementation", "provide"]


class Hook(Enum):
    """A method of a declaration or result done by a higher layer; the value names the function
    that provides it (``"module:function"``, for messages and documentation only)."""

    EXPR_TEXT = "mcpkit.printing.expressions:expr_text"
    """``str(expr)`` of a block expression: :func:`mcpkit.printing.expressions.expr_text`."""
    EXPR_LATEX = "mcpkit.printing.expressions:expr_latex"
    """LaTeX of a block expression: :func:`mcpkit.printing.expressions.expr_latex`."""
    MCP_TEXT = "mcpkit.printing.mcp:to_text"
    """``MCP.to_text``: :func:`mcpkit.printing.mcp.to_text`."""
    MCP_LATEX = "mcpkit.printing.mcp:to_latex"
    """``MCP.to_latex``: :func:`mcpkit.printing.mcp.to_latex`."""
    MCP_EXPLAIN = "mcpkit.printing.mcp:explain"
    """``MCP.explain``: :func:`mcpkit.printing.mcp.explain`."""
    MPCC_TEXT = "mcpkit.printing.mpcc:to_text"
    """``MPCC.to_text``: :func:`mcpkit.printing.mpcc.to_text`."""
    MPCC_LATEX = "mcpkit.printing.mpcc:to_latex"
    """``MPCC.to_latex``: :func:`mcpkit.printing.mpcc.to_latex`."""
    MPCC_EXPLAIN = "mcpkit.printing.mpcc:explain"
    """``MPCC.explain``: :func:`mcpkit.printing.mpcc.explain`."""
    SLACK_FORM_BLOCKS = "mcpkit.printing.mpcc:slack_form_blocks"
    """The printed block structure of a slack-form MPCC, built when it is first printed:
    :func:`mcpkit.printing.mpcc.blocks.slack_form_blocks`."""
    LOWER_TO_CASADI = "mcpkit.lowering.casadi:lower_to_casadi"
    """The cached CasADi lowering of an MCP (its :math:`F` and Jacobian for ``MCP.evaluator`` and
    the rounding floor): :func:`mcpkit.lowering.casadi.lower_to_casadi`."""
    MCP_FROM_CASADI = "mcpkit.lowering.from_casadi:mcp_from_casadi"
    """``MCP.from_casadi``: :func:`mcpkit.lowering.from_casadi.mcp_from_casadi`."""
    MPCC_FROM_PYOMO = "mcpkit.lowering.from_pyomo:mpcc_from_pyomo"
    """``MPCC.from_pyomo``: :func:`mcpkit.lowering.from_pyomo.mpcc_from_pyomo`."""
    MCP_SENSITIVITY = "mcpkit.stationarity.sensitivity:result_sensitivity"
    """``MCPResult.sensitivity``: :func:`mcpkit.stationarity.sensitivity.result_sensitivity`."""
    MPCC_VALUE_GRADIENT = "mcpkit.stationarity.value_gradient:result_value_gradient"
    """``MPCCResult.value_gradient``: :func:`mcpkit.stationarity.value_gradient.result_value_gradient`."""
    MPCC_SENSITIVITY = "mcpkit.stationarity.mpcc_sensitivity:result_mpcc_sensitivity"
    """``MPCCResult.sensitivity``: :func:`mcpkit.stationarity.mpcc_sensitivity.result_mpcc_sensitivity`."""

    @property
    def module(self) -> str:
        """The module that provides this hook."""
        return self.value.split(":")[0]


_PROVIDED: dict[Hook, Callable[..., Any]] = {}


def _where(function: Callable[..., Any]) -> tuple[str, str]:
    """A function's module and qualified name (the same after its module is imported again)."""
    return getattr(function, "__module__", ""), getattr(function, "__qualname__", repr(function))


def provide(hook: Hook, function: Callable[..., Any]) -> None:
    """Register ``function`` as the one implementation of ``hook`` (called by the providing module
    when it is imported; providing the same function again, e.g. on a module reload, is allowed)."""
    old = _PROVIDED.get(hook)
    if old is not None and _where(old) != _where(function):
        raise MCPKitError(f"{hook.name} is provided twice: by {old!r} and by {function!r}")
    _PROVIDED[hook] = function


def implementation(hook: Hook) -> Callable[..., Any]:
    """The function registered for ``hook``.

    Raises
    ------
    MCPKitError
        Nothing provided it (its module, :attr:`Hook.module`, was not imported: ``import mcpkit``
        imports all of them).
    """
    try:
        return _PROVIDED[hook]
    except KeyError:
        raise MCPKitError(
            f"{hook.name} is not provided: import {hook.module} (``import mcpkit`` imports it)"
        ) from None
