r"""The result of an FCLIB solve (:func:`mcpkit.models.fclib.solve_fclib_file`): the stages of
the staged equation solve (:class:`FCLIBStage`) and the :class:`FCLIBResult`, judged on the posed
MCP, the Siconos error and the per-contact error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mcpkit.solving.result import (
    RESULT_KEYS,
    SUMMARY_KEYS,
    FromParts,
    MCPResult,
    ToleranceCheck,
    summary_head,
)


@dataclass(frozen=True)
class FCLIBStage:
    r"""One Newton solve of :func:`solve_fclib_file` with an equation formulation (``FCLIBResult.stages``).

    ``name`` is ``"direct"`` (:func:`~mcpkit.engines.newton_contact.solve_alart_curnier` from
    :math:`r = 0`), ``"plain"`` (from :math:`r = 0`, :math:`\varepsilon = 0`), ``"tikhonov"`` (one step
    of the continuation, :math:`\varepsilon > 0`), ``"polish"`` (:math:`\varepsilon = 0` from the
    continuation's point), ``"tighten"`` (:math:`\varepsilon = 0` with a smaller MCP tolerance) or
    ``"prox"`` (the proximal point iteration, :func:`solve_equations`; ``iterations`` counts the
    Newton steps of all its subproblems);
    ``eps`` the Tikhonov term relative to :math:`\overline{\mathrm{diag}\,W}`; ``tol`` the MCP
    tolerance of the stage; ``solved`` the MCP verdict at that tolerance; ``friction_residual``
    the larger of the Siconos error and the worst per-contact error of its point, the error the
    stages steer by (``None`` without a finite point).
    """

    name: str
    eps: float
    tol: float
    solved: bool
    iterations: int
    natural_residual: float
    friction_residual: float | None
    wall_time_s: float

    def summary(self) -> dict[str, Any]:
        """The fields as a JSON-ready dict."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(repr=False)
class FCLIBResult(FromParts):
    r"""An FCLIB file solved in one :class:`~mcpkit.models.fclib.FCLIBFormulation` (an
    :class:`~mcpkit.solving.result.Outcome`).

    Its parts are the MCP solve (:attr:`solve`, judged on the posed formulation's natural
    residual at its own tolerance) and the physical check :attr:`friction`:
    :func:`friction_residual` of the unscaled reactions at most ``tol``; ``solved`` and
    ``termination`` come from them (:class:`~mcpkit.solving.result.FromParts`).

    Attributes
    ----------
    path
        The file.
    solve
        The :class:`~mcpkit.solving.result.MCPResult` of the posed MCP (for the equation formulations the
        last stage on the unregularised equations; its ``tol`` may be below ``tol`` after a
        ``"tighten"`` stage).
    friction
        The friction-residual :class:`~mcpkit.solving.result.ToleranceCheck` (tolerance ``tol``).
    reactions
        Unscaled reactions :math:`(r_n, r_t, r_o)_i` (``None`` without a point).
    reference_friction_residual, reference_friction_residual_stored_u, reference_consistency
        The file's reference solution: its residual with :math:`u = Wr + q`, with the stored
        :math:`u`, and :math:`\max|Wr_\mathrm{ref} + q - u_\mathrm{ref}|` (``None`` when absent or
        not finite).
    n_contacts, title
        From the file.
    wall_time_s
        Posing and solving (not reading the file).
    formulation
        The :class:`~mcpkit.models.fclib.FCLIBFormulation` value.
    stages
        The Newton solves of an equation formulation in order (empty for ``ncp``).
    contact
        The per-contact check (:func:`worst_contact_error` at most ``tol``): one contact with a
        huge :math:`q_i` makes the normalised Siconos error blind to the others, so a solved
        result meets the tolerance contact by contact too (``None``: not measured).
    """

    path: str
    solve: MCPResult
    friction: ToleranceCheck
    reactions: np.ndarray | None
    reference_friction_residual: float | None
    reference_friction_residual_stored_u: float | None
    reference_consistency: float | None
    n_contacts: int
    title: str
    wall_time_s: float
    formulation: str = "ncp"  # FCLIBFormulation.NCP.value
    stages: tuple[FCLIBStage, ...] = field(default_factory=tuple)
    contact: ToleranceCheck | None = None

    kind = "fclib"
    part_name = "check"

    @property
    def parts(self) -> list[Any]:
        """The MCP solve, then the friction check and the per-contact check."""
        return [self.solve, self.friction] + ([] if self.contact is None else [self.contact])

    @property
    def message(self) -> str:
        """The friction residual and the solve's message when solved; the first failure otherwise."""
        if self.solved:
            per = "" if self.contact is None else f", {self.contact.message}"
            return f"solved: {self.friction.message}{per}; {self.solve.message}"
        return super().message

    @property
    def contact_residual(self) -> float | None:
        """The worst per-contact error (``None`` without a point)."""
        return self.contact.value if self.contact is not None and self.contact.finite else None

    @property
    def friction_residual(self) -> float | None:
        """The friction residual (``None`` without a point)."""
        return self.friction.value if self.friction.finite else None

    @property
    def newton_iterations(self) -> int:
        """Iterations of every stage (equation formulations) or of the solve (``ncp``)."""
        return sum(st.iterations for st in self.stages) if self.stages else int(self.solve.iterations)

    def __repr__(self) -> str:
        fr = self.friction_residual
        return (
            f"FCLIBResult(solved={self.solved}, termination={self.termination.value}, "
            f"friction_residual={'none' if fr is None else f'{fr:.2e}'} (tol {self.friction.tol:.0e}), "
            f"n_contacts={self.n_contacts}, formulation={self.formulation}, "
            f"route={self.solve.method}/{self.solve.backend}, "
            f"wall_time_s={self.wall_time_s:.3f}, file={self.path!r})"
        )

    def summary(self) -> dict[str, Any]:
        """:data:`~mcpkit.solving.result.SUMMARY_KEYS` (those of the solve after the verdict's head), then
        the friction and reference residuals, the contact count, the title, the formulation,
        the total Newton iterations and the stages."""
        out = summary_head(self.kind, self, self.wall_time_s)
        s = self.solve.summary()
        out.update({k: s[k] for k in SUMMARY_KEYS if k not in RESULT_KEYS})
        out.update(
            friction_residual=self.friction_residual,
            contact_residual=self.contact_residual,
            reference_friction_residual=self.reference_friction_residual,
            reference_friction_residual_stored_u=self.reference_friction_residual_stored_u,
            reference_consistency=self.reference_consistency,
            n_contacts=self.n_contacts,
            title=self.title,
            formulation=self.formulation,
            newton_iterations=self.newton_iterations,
            stages=[st.summary() for st in self.stages],
        )
        return out
