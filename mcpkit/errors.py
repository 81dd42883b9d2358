"""Typed errors raised by mcpkit.

Every error a user can trigger by bad input derives from :class:`MCPInputError`
(itself a :class:`ValueError`), so ``except ValueError`` keeps working, and every
error is raised *before* any solver runs.
"""

from __future__ import annotations


class MCPKitError(Exception):
    """Base class of every mcpkit error."""


class MCPInputError(MCPKitError, ValueError):
    """Bad input data: wrong shape, NaN/inf where finite data is needed, ``l > u``, ..."""


class ShapeError(MCPInputError):
    """Array or expression shapes do not match (for example ``len(z) != len(F)``)."""


class NonFiniteError(MCPInputError):
    """NaN or infinite value where a finite one is required."""


class BoundsError(MCPInputError):
    """Inconsistent bounds, for example ``l_i > u_i`` or ``l_i = u_i = +inf``."""


class UnknownOptionError(MCPInputError, KeyError):
    """An option name that the solver or method does not know."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class ProblemFileError(MCPInputError):
    """A problem file that cannot be read or does not follow its format."""


class SolverNotAvailableError(MCPKitError, RuntimeError):
    """A requested solver or backend is not installed; the message says how to get it."""


class SolveFailedError(MCPKitError, RuntimeError):
    """Raised by ``MCPResult.raise_if_failed`` when a solve did not meet its tolerance."""

    def __init__(self, message: str, result: object | None = None) -> None:
        super().__init__(message)
        self.result = result


class NotDifferentiableError(MCPKitError, ArithmeticError):
    """The solution map has no derivative at this point (degenerate pairs, singular ``dF/dz``).

    Raised by :meth:`MCPResult.sensitivity <mcpkit.solving.result.MCPResult.sensitivity>`; ``pairs`` names
    the pairs responsible (``"block[k]"``; empty when the reason is a singular matrix).
    """

    def __init__(self, message: str, pairs: list[str] | None = None) -> None:
        super().__init__(message)
        self.pairs: list[str] = list(pairs or [])
