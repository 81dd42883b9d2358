"""The import graph of mcpkit: no cycle over three modules, and only front ends import the models.

What is counted
---------------
Every ``.py`` file of ``mcpkit/``, ``models/`` (as ``mcpkit.models.*``) and ``mpec/`` (as
``mcpkit.mpec.*``) is parsed with :mod:`ast`; a package is named by its ``__init__.py``
(``mcpkit/mpcc/__init__.py`` is the module ``mcpkit.mpcc``). Every ``import`` and
``from ... import`` statement anywhere in a file is an edge: at module level, inside functions and
methods, under ``if TYPE_CHECKING:`` and in ``try`` blocks alike. Relative imports are resolved
against the importing module's package. Imports of names outside mcpkit are ignored.

* ``import a.b.c`` is an edge to ``a.b.c``; ``from a import b`` is an edge to ``a.b`` when that is a
  module, else to ``a`` (``b`` is then a name defined in ``a``).
* Importing ``a.b.c`` first runs the ``__init__`` of ``a`` and of ``a.b``, so each such import also
  gives an edge to every package on the way (this is how importing ``mcpkit.mpcc.problem`` from
  outside the package runs ``mcpkit/mpcc/__init__.py`` and everything that imports).
* The one exception to the previous rule: a package that contains the importing module is not
  given an edge on the way. Python has started that package's ``__init__`` before it could run
  the importing module at all, so ``from mcpkit.problems.mcp import MCP`` in ``mcpkit.engines.newton``
  does not make ``mcpkit.engines.newton`` depend on ``mcpkit`` or ``mcpkit.engines``. An explicit
  import of such a package *is* counted: ``from mcpkit import solve`` (a function defined or
  re-exported in ``mcpkit/__init__.py``) or ``from mcpkit.mpcc import MPCC`` inside
  ``mcpkit.stationarity.lpec`` are edges to ``mcpkit`` and ``mcpkit.mpcc``.
* Edges out of the root package ``mcpkit`` (``mcpkit/__init__.py``, the facade that re-exports the
  public API) are not counted: it may import everything. Edges *into* ``mcpkit`` are counted
  whenever they are explicit (``from mcpkit import solve``); ``from mcpkit import sweep`` (a
  submodule) is an edge to ``mcpkit.sweep`` only, by the rules above.

Not counted: modules imported by a string at run time (``importlib.import_module``: the
registry's ``"module:attribute"`` targets in :mod:`mcpkit.solving.registry`, the CLI's demo table, a sweep
worker's warm-up), since no import statement names them.

Every other package ``__init__`` (``mcpkit.mpcc``, ``mcpkit.engines``, ``mcpkit.sweep``, ...) is an
ordinary module whose re-exports are edges like any other import, so a re-export kept at an old
import path counts.

The tests
---------
* :func:`test_no_import_cycle_over_three_modules`: every strongly connected component of this graph
  has at most :data:`MAX_CYCLE` (3) modules.
* :func:`test_only_front_ends_import_models`: the mcpkit core modules that import any
  ``mcpkit.models.*`` or ``mcpkit.mpec.*`` module (by the same edges) are a subset of
  :data:`FRONT_ENDS`.
* :func:`test_graph_finds_a_planted_cycle`: the builder sees a cycle planted in a copy of the
  sources (through a function-level import and through a package ``__init__``), so the first test
  can fail.

Where it stands (issue 27)
--------------------------
Before: one cycle of 40 modules (lowering, mpcc, solvers, problem, io), cli <-> sweep (7) and
solve <-> pyomo_plugin (2); then one of 13 (the problem classes with the printing and lowering
modules). Now no cycle has more than 3 modules: formats.io -> formats.mcp_file ->
formats.mpcc_json -> formats.io (3), and the 2-cycles command.cli <-> command.entry,
frontends.solve <-> frontends.pyomo_plugin, homotopy.inner <-> homotopy.pyomo_inner and
problems.floor <-> problems.mcp. The methods of ``MCP``,
``MPCC`` and block expressions that print or lower (``to_text``, ``from_casadi``, ``str(expr)``)
reach the printers and lowerings through :mod:`mcpkit.problems.hooks`, so a problem module imports
neither (issue 45; the folder-level layers are ``tests/unit/test_folder_graph.py``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

#: Source folders and the import name each installs as (see setup.py).
ROOTS: dict[str, str] = {"mcpkit": "mcpkit", "models": "mcpkit.models", "mpec": "mcpkit.mpec"}

#: The root package: edges out of its ``__init__`` are not counted (see the module docstring).
ROOT_PACKAGE = "mcpkit"

#: The largest import cycle allowed (strongly connected component, in modules), the aim of issue 27.
MAX_CYCLE = 3

#: The layers above the models (the ``mcpkit`` program, problem files and sweeps): the only core
#: modules allowed to import ``mcpkit.models`` and ``mcpkit.mpec``. A name ending in ``.*`` allows a
#: package and every module under it.
FRONT_ENDS: frozenset[str] = frozenset({"mcpkit.command.*", "mcpkit.sweep.*"})

#: The model packages, imported only by front ends.
MODEL_PACKAGES = ("mcpkit.models", "mcpkit.mpec")


def module_files(repo: Path = REPO, roots: Mapping[str, str] = ROOTS) -> dict[str, Path]:
    """Every module name under ``roots`` and its file (a package is named by its ``__init__.py``)."""
    modules: dict[str, Path] = {}
    for folder, name in roots.items():
        base = repo / folder
        for path in sorted(base.rglob("*.py")):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join([name, *parts])] = path
    return modules


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _ancestors(name: str) -> list[str]:
    """``a.b.c`` -> ``["a", "a.b"]``."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _resolve_relative(importer: str, is_package: bool, level: int, module: str | None) -> str:
    package = importer if is_package else importer.rpartition(".")[0]
    parts = package.split(".")
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    base = ".".join(parts)
    return f"{base}.{module}" if module else base


def imported_names(tree: ast.AST, importer: str, is_package: bool, modules: Iterable[str]) -> set[str]:
    """The modules named explicitly by every import statement of ``tree`` (no packages on the way)."""
    known = set(modules)
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                targets.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _resolve_relative(importer, is_package, node.level, node.module)
            else:
                base = node.module or ""
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                targets.add(sub if sub in known else base)
    return {t for t in targets if t in known or any(t.startswith(k + ".") for k in known)}


def import_graph(modules: Mapping[str, Path], root: str | None = ROOT_PACKAGE) -> dict[str, set[str]]:
    """Edges ``importer -> imported`` between the modules of ``modules`` (see the module docstring)."""
    known = set(modules)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        if name == root:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        own = set(_ancestors(name))
        for target in imported_names(tree, name, _is_package(path), known):
            while target and target not in known:  # ``import mcpkit.x.y`` of no such module
                target = target.rpartition(".")[0]
            if target != name:
                graph[name].add(target)
            for package in _ancestors(target):
                if package in known and package not in own and package != name:
                    graph[name].add(package)
    return graph


def strongly_connected_components(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative: the components of ``graph``, each sorted, largest first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work: list[tuple[str, Iterable[str]]] = []
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        work.append((start, iter(sorted(graph.get(start, ())))))
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph.get(succ, ())))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return sorted(components, key=lambda c: (-len(c), c))


def cycles_report(components: list[list[str]], graph: Mapping[str, set[str]], above: int) -> str:
    """The components larger than ``above``, with the edges inside each."""
    lines: list[str] = []
    for component in components:
        if len(component) <= above:
            break
        members = set(component)
        lines.append(f"cycle of {len(component)} modules:")
        for name in component:
            inside = sorted(graph[name] & members)
            lines.append(f"  {name} -> {', '.join(inside)}")
    return "\n".join(lines)


def model_importers(graph: Mapping[str, set[str]]) -> dict[str, set[str]]:
    """Core modules (not themselves models) and the model modules each imports."""

    def is_model(name: str) -> bool:
        return any(name == p or name.startswith(p + ".") for p in MODEL_PACKAGES)

    return {
        name: {t for t in targets if is_model(t)}
        for name, targets in graph.items()
        if not is_model(name) and any(is_model(t) for t in targets)
    }


def test_no_import_cycle_over_three_modules() -> None:
    graph = import_graph(module_files())
    components = strongly_connected_components(graph)
    assert all(len(c) <= MAX_CYCLE for c in components), (
        f"import cycles over {MAX_CYCLE} modules (every import counted):\n"
        + cycles_report(components, graph, MAX_CYCLE)
    )


def is_front_end(name: str) -> bool:
    """``name`` is one of :data:`FRONT_ENDS` (or under a ``package.*`` entry)."""
    for entry in FRONT_ENDS:
        package = entry.removesuffix(".*")
        if name == entry or (entry != package and (name == package or name.startswith(package + "."))):
            return True
    return False


def test_only_front_ends_import_models() -> None:
    importers = model_importers(import_graph(module_files()))
    assert importers, "no core module imports the models: the graph builder lost the front ends' imports"
    outside = {name: sorted(t) for name, t in importers.items() if not is_front_end(name)}
    assert not outside, f"core modules importing mcpkit.models / mcpkit.mpec: {outside}"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_graph_finds_a_planted_cycle(tmp_path: Path) -> None:
    # A function-level import and a package __init__ that pulls a module importing back.
    _write(tmp_path / "pkg" / "__init__.py", "from pkg import top\n")
    _write(tmp_path / "pkg" / "top.py", "def f():\n    from pkg.sub import leaf\n")
    _write(tmp_path / "pkg" / "sub" / "__init__.py", "from pkg.sub.heavy import H\n")
    _write(tmp_path / "pkg" / "sub" / "leaf.py", "X = 1\n")
    _write(tmp_path / "pkg" / "sub" / "heavy.py", "from ..top import f\nH = 1\n")
    _write(tmp_path / "pkg" / "other.py", "if False:\n    import pkg.sub.leaf\n")
    modules = module_files(tmp_path, {"pkg": "pkg"})
    graph = import_graph(modules, root="pkg")
    assert graph["pkg.top"] == {"pkg.sub", "pkg.sub.leaf"}
    assert graph["pkg.sub.heavy"] == {"pkg.top"}
    assert graph["pkg.other"] == {"pkg.sub", "pkg.sub.leaf"}
    assert graph["pkg"] == set()  # the root's edges are not counted
    components = strongly_connected_components(graph)
    assert components[0] == ["pkg.sub", "pkg.sub.heavy", "pkg.top"]
    assert "cycle of 3 modules" in cycles_report(components, graph, 2)
    # Inside a package, an implicit edge to the importer's own package is not counted ...
    _write(tmp_path / "pkg" / "sub" / "leaf.py", "from pkg.other import X\n")
    graph = import_graph(module_files(tmp_path, {"pkg": "pkg"}), root="pkg")
    assert graph["pkg.sub.leaf"] == {"pkg.other"}
    # ... but an explicit one is.
    _write(tmp_path / "pkg" / "sub" / "leaf.py", "from pkg.sub import H\n")
    graph = import_graph(module_files(tmp_path, {"pkg": "pkg"}), root="pkg")
    assert graph["pkg.sub.leaf"] == {"pkg.sub"}
