r"""What printers and lowerings read of a problem: the read side of an MCP and of an MPCC.

:class:`MCPView` is the read side of a declaration :math:`l \le z \le u \perp F(z; p)`
(:class:`~mcpkit.problems.mcp.MCP`): its blocks, bounds, start, parameters and function blocks.
:class:`MPCCView` is the read side of an :class:`~mcpkit.problems.mpcc.MPCC`: its CasADi symbols
and expressions, bounds and printed block structure. Both are structural types
(:class:`typing.Protocol`): ``MCP`` and ``MPCC`` satisfy them without naming them.

Why a view and not the class: ``MCP.to_latex``, ``MCP.evaluate``, ``MPCC.to_text`` and the other
conveniences of the problem classes import the printers and lowerings that carry them out. If
those modules imported the classes back (even for annotations), every printer and lowering would
sit in one import cycle with the problem classes (issue 27). They take the view instead and depend
only on the pieces a problem is made of (:mod:`~mcpkit.problems.variables`,
:mod:`~mcpkit.problems.functions`, :mod:`~mcpkit.problems.segments`); only a module that *builds* a
problem imports its class.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from mcpkit.problems.functions import FunctionBlock
from mcpkit.problems.segments import MPCCBlocks
from mcpkit.problems.variables import ParameterBlock, VariableBlock


class MCPView(Protocol):
    r"""The read side of a declared MCP :math:`l \le z \le u \perp F(z; p)` (module docstring).

    The members are those of :class:`~mcpkit.problems.mcp.MCP` of the same names.
    """

    name: str

    @property
    def n(self) -> int: ...

    @property
    def n_params(self) -> int: ...

    @property
    def blocks(self) -> tuple[VariableBlock, ...]: ...

    @property
    def parameter_blocks(self) -> tuple[ParameterBlock, ...]: ...

    @property
    def variables(self) -> tuple[Any, ...]: ...

    @property
    def parameters(self) -> tuple[Any, ...]: ...

    @property
    def lb(self) -> np.ndarray: ...

    @property
    def ub(self) -> np.ndarray: ...

    @property
    def start(self) -> np.ndarray: ...

    @property
    def parameter_values(self) -> np.ndarray: ...

    @property
    def version(self) -> int: ...

    @property
    def dims(self) -> dict[str, int]: ...

    def function_block(self, name: str) -> FunctionBlock: ...

    def validate(self) -> None: ...


class MPCCView(Protocol):
    r"""The read side of an MPCC :math:`\min f` s.t. :math:`g_l \le g \le g_u`, :math:`H \perp G` (see above).

    The members are those of :class:`~mcpkit.problems.mpcc.MPCC` of the same names: the CasADi
    symbols ``x``, ``p``, the expressions ``f``, ``g``, ``G``, ``H``, the bounds, the start and
    the printed block structure.
    """

    x: Any
    p: Any
    f: Any
    g: Any
    G: Any
    H: Any
    lbg: np.ndarray
    ubg: np.ndarray
    lbx: np.ndarray
    ubx: np.ndarray
    x0: np.ndarray
    p0: np.ndarray
    lbG: np.ndarray | None
    ubG: np.ndarray | None
    lbH: np.ndarray | None
    ubH: np.ndarray | None
    G_implied_by_bounds: bool
    H_implied_by_bounds: bool
    name: str
    blocks: MPCCBlocks | Callable[[], MPCCBlocks] | None

    @property
    def n_pairs(self) -> int: ...

    def standard_pairs(self) -> np.ndarray: ...

    def block_structure(self) -> MPCCBlocks | None: ...
