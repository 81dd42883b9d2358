r"""Old import paths of the modules that issue 27 moved into concept folders, kept for one release.

``import mcpkit.solvers.newton`` (or ``from mcpkit.registry import describe``) still works and gives
the very module now at its new path (:data:`MOVED`), with a :class:`DeprecationWarning` naming
it. A meta-path finder does this for every old path at once, so no shim file per module is kept;
it is installed when this module is imported (by ``import mcpkit``) and is removed, with this
module, in the next release.

Names that moved between modules (``registry.resolve`` to :mod:`mcpkit.solving.planner`) are read
at their old place through that module's ``__getattr__``, which calls :func:`moved_name`.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from typing import Any

#: Old module path -> new module path (issue 27: engines, homotopy, stationarity, solving, front ends).
MOVED: dict[str, str] = {
    "mcpkit.solvers.newton": "mcpkit.engines.newton",
    "mcpkit.solvers.newton_linalg": "mcpkit.engines.newton_linalg",
    "mcpkit.solvers.newton_warm": "mcpkit.engines.newton_warm",
    "mcpkit.solvers.newton_contact": "mcpkit.engines.newton_contact",
    "mcpkit.solvers.lemke": "mcpkit.engines.lemke",
    "mcpkit.solvers.lemke_pivoting": "mcpkit.engines.lemke_pivoting",
    "mcpkit.solvers.box_lcp": "mcpkit.engines.box_lcp",
    "mcpkit.solvers.active_set": "mcpkit.engines.active_set",
    "mcpkit.solvers.path": "mcpkit.engines.path",
    "mcpkit.blas": "mcpkit.engines.blas",
    "mcpkit.solvers.homotopy": "mcpkit.homotopy.loop",
    "mcpkit.solvers.scholtes": "mcpkit.homotopy.scholtes",
    "mcpkit.solvers.kanzow_schwartz": "mcpkit.homotopy.kanzow_schwartz",
    "mcpkit.solvers.fischer_burmeister": "mcpkit.homotopy.fischer_burmeister",
    "mcpkit.solvers.elastic": "mcpkit.homotopy.elastic",
    "mcpkit.solvers.penalty": "mcpkit.homotopy.penalty",
    "mcpkit.solvers.reformulation": "mcpkit.homotopy.reformulation",
    "mcpkit.solvers.inner": "mcpkit.homotopy.inner",
    "mcpkit.solvers.ipopt": "mcpkit.homotopy.ipopt",
    "mcpkit.solvers.pyomo_inner": "mcpkit.homotopy.pyomo_inner",
    "mcpkit.solvers.lp_inner": "mcpkit.homotopy.lp_inner",
    "mcpkit.solvers.lpec_polish": "mcpkit.homotopy.lpec_polish",
    "mcpkit.solvers.nl_import": "mcpkit.lowering.nl_import",
    "mcpkit.mpcc.pyomo_nl": "mcpkit.lowering.pyomo_nl",
    "mcpkit.lowering.mpcc_printer": "mcpkit.printing.mpcc",  # session 10's move, was a shim file
    "mcpkit.mpcc.stationarity": "mcpkit.stationarity.certificate",
    "mcpkit.mpcc.lpec": "mcpkit.stationarity.lpec",
    "mcpkit.mpcc.refine": "mcpkit.stationarity.refine",
    "mcpkit.registry": "mcpkit.solving.registry",
    "mcpkit.planner": "mcpkit.solving.planner",
    "mcpkit.options": "mcpkit.solving.options",
    "mcpkit.result": "mcpkit.solving.result",
    "mcpkit.residuals": "mcpkit.solving.residuals",
    "mcpkit.availability": "mcpkit.solving.availability",
    "mcpkit.stop": "mcpkit.solving.stop",
    "mcpkit.solvers.route": "mcpkit.solving.route",
    "mcpkit.solvers.fallback": "mcpkit.solving.planner",
    "mcpkit.solvers.casadi_route": "mcpkit.solving.casadi_route",
    "mcpkit.solvers.pyomo_route": "mcpkit.solving.pyomo_route",
    "mcpkit.solvers.slack_route": "mcpkit.solving.slack_route",
    "mcpkit.mpcc.solver": "mcpkit.solving.mpcc_solver",
    "mcpkit.io": "mcpkit.formats.io",
    "mcpkit.mcp_file": "mcpkit.formats.mcp_file",
    "mcpkit.blocks": "mcpkit.problems.blocks",
    "mcpkit.solve_file": "mcpkit.frontends.solve_file",
    "mcpkit.functional": "mcpkit.frontends.functional",
    "mcpkit.pyomo_plugin": "mcpkit.frontends.pyomo_plugin",
    "mcpkit.cli": "mcpkit.frontends.cli",
    "mcpkit.demo": "mcpkit.frontends.demo",
    "mcpkit.forked": "mcpkit.frontends.forked",
}

# Not aliased: ``mcpkit.solve``, the old module of :func:`mcpkit.solve` and :class:`mcpkit.Solver`
# (now :mod:`mcpkit.frontends.solve`). Importing a module by an old path binds it on its parent
# package, which would replace the function ``mcpkit.solve`` by a module; both names it held are
# public at the top (``from mcpkit import solve, Solver``).

#: Old packages that are now empty: importing one gives an empty package (its modules moved).
GONE_PACKAGES: frozenset[str] = frozenset({"mcpkit.solvers"})


class _Alias(importlib.abc.Loader):
    def __init__(self, new: str | None) -> None:
        self.new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        if self.new is None:
            module = types.ModuleType(spec.name, f"Moved by issue 27; see {__name__}.")
            module.__path__ = []  # a package, so that its old submodules can be found
            return module
        return importlib.import_module(self.new)

    def exec_module(self, module: types.ModuleType) -> None:  # the target has run already
        pass


class MovedFinder(importlib.abc.MetaPathFinder):
    """Resolve an old module path of :data:`MOVED` to the module at its new path."""

    def find_spec(
        self, fullname: str, path: Any, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname in MOVED:
            new: str | None = MOVED[fullname]
        elif fullname in GONE_PACKAGES:
            new = None
        else:
            return None
        warnings.warn(
            f"{fullname} moved to {new} (issue 27); the old path works until the next release"
            if new
            else f"{fullname} is gone (issue 27): its modules moved; see mcpkit._moved.MOVED",
            DeprecationWarning,
            stacklevel=3,
        )
        return importlib.machinery.ModuleSpec(fullname, _Alias(new), is_package=new is None)


def moved_name(old_module: str, name: str, new_module: str) -> Any:
    """``name`` of ``new_module``, read at its old place ``old_module.name``, with a
    :class:`DeprecationWarning` naming the new place (for a module-level ``__getattr__`` of
    ``old_module``, e.g. :func:`mcpkit.solving.registry.__getattr__`). ``new_module`` is imported by
    its string, so that the old module need not import it (it may import the old one)."""
    warnings.warn(
        f"{old_module}.{name} moved to {new_module}.{name} (issue 27); the old place works until "
        "the next release",
        DeprecationWarning,
        stacklevel=3,
    )
    return getattr(importlib.import_module(new_module), name)


def install() -> None:
    """Put :class:`MovedFinder` on ``sys.meta_path`` once (``import mcpkit`` calls this)."""
    if not any(isinstance(f, MovedFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, MovedFinder())


install()
