r"""The inner solver of the homotopy: one smooth NLP per call, and which IPOPT solves it.

Every subproblem of :mod:`mcpkit.homotopy.loop` (a relaxed NLP of a reformulation, or the
active-set polish) is

.. math::

    \min_x f(x; q) \quad\text{s.t.}\quad g_l \le g(x; q) \le g_u,\quad x_l \le x \le x_u,

an :class:`~mcpkit.homotopy.reformulation.NLPTemplate` whose parameter vector :math:`q` holds the
problem's parameters and the homotopy parameter. An :class:`~mcpkit.homotopy.ipopt.InnerSolver`
(the base class states the call) is built once per template by an :class:`InnerFactory` and
solves it for many :math:`(x_0, q)`, warm-started from multipliers
:math:`(\lambda_{x,0}, \lambda_{g,0})` when given, stopping at a deadline. Two
implementations, with the same IPOPT options (:func:`~mcpkit.homotopy.ipopt.ipopt_option_dict`:
``tol = inner_tol_factor * tol`` and the warm-start settings):

* :class:`CasadiInner`: CasADi's ``nlpsol`` IPOPT on the template's graph
  (:class:`~mcpkit.homotopy.ipopt.IpoptNLP`), built once, no files;
* :class:`PyomoInner`: the template replayed as a Pyomo model and solved by a Pyomo NLP solver
  object, an ``ipopt`` executable or ``mcpkit_ipopt`` (:mod:`mcpkit.homotopy.pyomo_inner`).

:func:`select_inner` maps the user's ``ipopt=`` choice to a factory.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from mcpkit.errors import SolverNotAvailableError, UnknownOptionError
from mcpkit.homotopy.ipopt import InnerResult, InnerSolver, IpoptNLP
from mcpkit.homotopy.reformulation import NLPTemplate
from mcpkit.problems.derivatives import shared_functions
from mcpkit.solving.options import WarmStart

__all__ = [
    "IPOPT_CHOICES",
    "CasadiInner",
    "InnerFactory",
    "InnerResult",
    "InnerSettings",
    "InnerSolver",
    "PyomoInner",
    "select_inner",
]

#: Values of the ``ipopt=`` argument (backend ``pyomo``).
IPOPT_CHOICES: tuple[str, ...] = ("auto", "executable", "casadi", "mcpkit_ipopt")


@dataclass(frozen=True)
class InnerSettings:
    """How one inner solver runs IPOPT (shared by every implementation)."""

    tol: float
    """IPOPT ``tol`` (also ``constr_viol_tol`` and ``compl_inf_tol``)."""
    max_iter: int = 3000
    """IPOPT ``max_iter``."""
    warm: bool = False
    """Warm-start settings: start from the given point and multipliers."""
    verbose: bool = False
    """Show IPOPT's log."""
    options: dict[str, Any] = field(default_factory=dict)
    """The user's IPOPT options by IPOPT name (validated when the solver is built)."""
    deadlines: bool = False
    """Calls may pass a ``deadline`` (the solve has a time limit)."""
    name: str = "nlp"
    """Label of the solver (CasADi function name, Pyomo model name)."""
    warm_start: WarmStart = WarmStart.STANDARD
    """The IPOPT settings of a ``warm`` solver (:class:`~mcpkit.solving.options.WarmStart`)."""

    def with_warm(self, warm: bool, name: str) -> InnerSettings:
        """The same settings with ``warm`` and ``name`` replaced."""
        return replace(self, warm=warm, name=name)


class InnerFactory(Protocol):
    """Builds an :class:`InnerSolver` for a template."""

    description: str
    """Which IPOPT runs, for results (``extra["ipopt"]``)."""

    def __call__(self, nlp: NLPTemplate, settings: InnerSettings) -> InnerSolver:
        """The inner solver of ``nlp``."""
        ...


@dataclass(frozen=True)
class CasadiInner:
    """:class:`InnerFactory` of CasADi's ``nlpsol`` IPOPT (:class:`~mcpkit.homotopy.ipopt.IpoptNLP`)."""

    description: str = "casadi"

    def __call__(self, nlp: NLPTemplate, settings: InnerSettings) -> IpoptNLP:
        # IPOPT applies its own scaling (obj_scaling_factor, ...) to whatever these return
        shared = shared_functions(nlp.base, nlp.x, nlp.p, nlp.f, nlp.extra_rows, settings.name)
        return IpoptNLP(
            nlp.x,
            nlp.p,
            nlp.f,
            nlp.g,
            tol=settings.tol,
            max_iter=settings.max_iter,
            warm=settings.warm,
            options=settings.options,
            verbose=settings.verbose,
            name=settings.name,
            deadlines=settings.deadlines,
            derivatives=shared,
            warm_start=settings.warm_start,
        )


@dataclass
class PyomoInner:
    """:class:`InnerFactory` of a Pyomo NLP solver on the template replayed in Pyomo.

    Parameters
    ----------
    solver
        ``"ipopt"`` (an executable, given by ``executable``) or ``"mcpkit_ipopt"``.
    executable
        Path of the ``ipopt`` executable (``solver="ipopt"`` only).
    description
        Which IPOPT runs, for results.
    """

    solver: str
    executable: str | None = None
    description: str = ""
    _models: dict[int, Any] = field(default_factory=dict, repr=False)

    def make_solver(self) -> Any:
        """A new Pyomo solver object."""
        import pyomo.environ as pyo

        if self.solver == "mcpkit_ipopt":
            from mcpkit.homotopy.ipopt_plugin import register

            register()
            return pyo.SolverFactory("mcpkit_ipopt")
        return pyo.SolverFactory(self.solver, executable=self.executable)

    def __call__(self, nlp: NLPTemplate, settings: InnerSettings) -> InnerSolver:
        from mcpkit.homotopy.pyomo_inner import PyomoNLP, ReplayedNLP, check_ipopt_options

        check_ipopt_options(settings.options)
        # one Pyomo model per template, shared by its cold and warm solvers
        key = id(nlp)
        if key not in self._models:
            self._models[key] = (nlp, ReplayedNLP(nlp, settings.name))
        return PyomoNLP(self._models[key][1], settings, self.make_solver())


def select_inner(ipopt: str = "auto") -> tuple[InnerFactory, str]:
    """The inner solver for an ``ipopt=`` choice: ``(factory, description)``.

    * ``"auto"``: an ``ipopt`` executable when :func:`~mcpkit.solving.availability.ipopt_executable`
      finds one (:class:`PyomoInner`), else CasADi's ``nlpsol`` (:class:`CasadiInner`);
    * ``"executable"``: that executable, or :class:`~mcpkit.errors.SolverNotAvailableError`;
    * ``"casadi"``: CasADi's ``nlpsol``;
    * ``"mcpkit_ipopt"``: CasADi's IPOPT as a Pyomo solver (:class:`PyomoInner`, the
      executable's code path, in process).

    Raises
    ------
    UnknownOptionError
        ``ipopt`` is none of :data:`IPOPT_CHOICES` (the message lists them).
    """
    from mcpkit.solving.availability import ipopt_executable

    if ipopt not in IPOPT_CHOICES:
        raise UnknownOptionError(f"unknown ipopt {ipopt!r}; valid: {list(IPOPT_CHOICES)}")
    exe = ipopt_executable() if ipopt in ("auto", "executable") else None
    if ipopt == "executable" and exe is None:
        raise SolverNotAvailableError(
            "no `ipopt` executable on PATH or in idaes-pse's bin folder; use ipopt='auto' "
            "(CasADi's IPOPT) or install one (idaes get-extensions)"
        )
    factory: InnerFactory
    if exe is not None:
        factory = PyomoInner("ipopt", exe, f"executable {exe}")
    elif ipopt == "mcpkit_ipopt":
        factory = PyomoInner("mcpkit_ipopt", None, "mcpkit_ipopt (CasADi's IPOPT as a Pyomo solver)")
    else:
        factory = CasadiInner("casadi")
    return factory, factory.description
