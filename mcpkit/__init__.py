r"""mcpkit: complementarity modelling for contact mechanics and robotics.

Declare a mixed complementarity problem :math:`l \le z \le u \perp F(z; p)` once
(:class:`MCP`), lower it to CasADi, Pyomo or printed mathematics (:mod:`mcpkit.lowering`),
solve it with IPOPT reformulations or PATH (:func:`solve`, :class:`Solver`; what runs where is
:mod:`mcpkit.solving.registry`) and read one honest result (:class:`MCPResult`). MPCCs live in
:mod:`mcpkit.mpcc` and give :class:`MPCCResult`.
"""

# first: the mcpkit program's Ctrl-C guard, before the heavy imports below (mcpkit.frontends.entry)
from mcpkit.frontends import entry as _entry

# isort: split
from mcpkit import sweep  # a callable module: mcpkit.sweep(...), mcpkit.sweep.grid(...)
from mcpkit.errors import (
    BoundsError,
    MCPInputError,
    MCPKitError,
    NonFiniteError,
    NotDifferentiableError,
    ProblemFileError,
    ShapeError,
    SolveFailedError,
    SolverNotAvailableError,
    UnknownOptionError,
)
from mcpkit.frontends.functional import solve_mcp
from mcpkit.frontends.pyomo_plugin import install_registration as _install_pyomo_registration
from mcpkit.frontends.solve import Solver, solve
from mcpkit.mpcc import MPCC, MPCCSolver, load_mpcc_json, solve_mpcc
from mcpkit.problems.mcp import MCP
from mcpkit.solving.options import Backend, Method, SolveOptions
from mcpkit.solving.registry import Availability
from mcpkit.solving.residuals import PairState
from mcpkit.solving.result import (
    CompositeResult,
    HomotopyStep,
    MCPResult,
    MPCCResult,
    Outcome,
    SolutionStatus,
    Termination,
)

_install_pyomo_registration()  # SolverFactory("mcpkit"): see mcpkit.frontends.pyomo_plugin
del _entry

__version__ = "0.1.0"

__all__ = [
    "MCP",
    "MPCC",
    "MPCCResult",
    "MPCCSolver",
    "Availability",
    "CompositeResult",
    "Outcome",
    "load_mpcc_json",
    "solve_mpcc",
    "Backend",
    "BoundsError",
    "HomotopyStep",
    "MCPInputError",
    "MCPKitError",
    "MCPResult",
    "Method",
    "NonFiniteError",
    "NotDifferentiableError",
    "PairState",
    "ProblemFileError",
    "ShapeError",
    "SolutionStatus",
    "SolveFailedError",
    "SolveOptions",
    "Solver",
    "SolverNotAvailableError",
    "Termination",
    "UnknownOptionError",
    "solve",
    "solve_mcp",
    "sweep",
]
