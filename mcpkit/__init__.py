r"""mcpkit: complementarity modelling for contact mechanics and robotics.

Declare a mixed complementarity problem :math:`l \le z \le u \perp F(z; p)` once
(:class:`MCP`), lower it to CasADi, Pyomo or printed mathematics (:mod:`mcpkit.lowering`),
solve it with IPOPT reformulations or PATH (:func:`solve`, :class:`Solver`; what runs where is
:mod:`mcpkit.solving.registry`) and read one honest result (:class:`MCPResult`). MPCCs live in
:mod:`mcpkit.mpcc` and give :class:`MPCCResult`.
"""

# first: the mcpkit program's Ctrl-C guard, before the heavy imports below (mcpkit.command.entry)
from mcpkit.command import entry as _entry

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

# isort: split
# The methods of declarations and results done by a higher layer (MCP.to_text, str(expr),
# MCPResult.sensitivity, ...): each module below registers its functions with
# mcpkit.problems.hooks when imported, so they are provided before any user call.
from mcpkit.lowering import casadi as _casadi
from mcpkit.lowering import from_casadi as _from_casadi
from mcpkit.lowering import from_pyomo as _from_pyomo
from mcpkit.printing import expressions as _expressions
from mcpkit.printing import mcp as _print_mcp
from mcpkit.printing import mpcc as _print_mpcc
from mcpkit.stationarity import mpcc_sensitivity as _mpcc_sens
from mcpkit.stationarity import sensitivity as _sens
from mcpkit.stationarity import value_gradient as _vg

_install_pyomo_registration()  # SolverFactory("mcpkit"): see mcpkit.frontends.pyomo_plugin

del _casadi, _from_casadi, _from_pyomo, _expressions, _print_mcp, _print_mpcc, _mpcc_sens, _sens, _vg
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
