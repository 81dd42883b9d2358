"""The folders are layers: the folder-level import graph follows :data:`LAYERS`, so it has no cycle.

What is counted
---------------
Each subpackage of ``mcpkit`` is one node (``mcpkit/engines/`` is ``engines``), each top-level
module of ``mcpkit`` too (``mcpkit/errors.py`` is ``errors``, ``mcpkit/jax.py`` is ``jax``),
``models/`` (``mcpkit.models``) and ``mpec/`` (``mcpkit.mpec``) are one node each, and
``mcpkit/__init__.py`` with every explicit ``import mcpkit`` is the node ``mcpkit``, the top. Every
``import`` and ``from ... import`` statement is an edge, at module level or inside a function,
except those under ``if TYPE_CHECKING:`` (annotations only, never run). Modules imported by a
string at run time (the registry's ``"module:attribute"`` targets) are not edges; the methods a
higher layer does for a declaration or a result go through :mod:`mcpkit.problems.hooks`.

The tests
---------
* :func:`test_every_folder_is_placed`: every node of the graph is in :data:`LAYERS`;
* :func:`test_folders_import_only_folders_below`: each edge goes down :data:`LAYERS`
  (``docs/contributing.md``, "The layers"), which makes the graph acyclic;
* :func:`test_folder_graph_is_acyclic`: no strongly connected component over one node (the
  message lists the cycle's edges);
* :func:`test_checker_sees_a_planted_cycle`: the same builder on a synthetic tree with a
  function-level import back up finds the cycle and the upward edge, so the tests above can fail.
"""

from __future__ import annotations

import ast
import collections
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

#: Source folders and the import name each installs as.
ROOTS: dict[str, str] = {"mcpkit": "mcpkit", "models": "mcpkit.models", "mpec": "mcpkit.mpec"}

#: The folders bottom up (docs/contributing.md). A folder imports only folders earlier in this list.
LAYERS: tuple[str, ...] = (
    "errors",  # the exceptions
    "problems",  # the declarations (MCP, MPCC, blocks) and the hooks of their higher-layer methods
    "solving",  # the vocabulary: options, results, residuals, registry tables, stop rules, progress
    "lowering",  # declarations -> CasADi, Pyomo, the standard and slack forms
    "printing",  # declarations -> text, LaTeX, prose (reads the slack form of a lowering)
    "formats",  # problem files -> declarations
    "engines",  # MCP engines (Newton, Lemke, PATH, contact Newton), HiGHS
    "homotopy",  # the reformulations, the homotopy loop, the NLP solvers
    "stationarity",  # what a point is: certificates, LPEC, refinement, sensitivities
    "orchestration",  # planner, routes, MPCCSolver
    "mpcc",  # the MPCC package facade
    "frontends",  # solve, Solver, solve_mcp, the Pyomo plugin, demos, forked deadlines
    "jax",  # the JAX custom call around Solver
    "models",  # contact models, FCLIB
    "mpec",  # horizons as MPCCs
    "sweep",  # problem files under a budget, one or many
    "command",  # the mcpkit program
    "mcpkit",  # the package's __init__: the public names
)


def _node(module: str) -> str | None:
    """The folder node of a dotted module name, ``None`` outside mcpkit."""
    parts = module.split(".")
    if parts[0] != "mcpkit":
        return None
    if len(parts) == 1 or parts[1] == "__init__":
        return "mcpkit"
    return parts[1]


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """Ids of every node under an ``if TYPE_CHECKING:`` block."""
    skip: set[int] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test):
            skip.update(id(m) for m in ast.walk(n))
    return skip


def folder_edges(root: Path, roots: dict[str, str] = ROOTS) -> collections.Counter[tuple[str, str]]:
    """Import statements between folder nodes, counted: ``(importer, imported) -> count``."""
    edges: collections.Counter[tuple[str, str]] = collections.Counter()
    for base, name in roots.items():
        for f in sorted((root / base).rglob("*.py")):
            rel = f.relative_to(root / base).with_suffix("")
            src = _node(".".join([name, *rel.parts]))
            tree = ast.parse(f.read_text(encoding="utf-8"))
            skip = _type_checking_nodes(tree)
            for n in ast.walk(tree):
                if id(n) in skip:
                    continue
                if isinstance(n, ast.ImportFrom) and n.module and n.level == 0:
                    mods = [n.module]
                elif isinstance(n, ast.Import):
                    mods = [a.name for a in n.names]
                else:
                    mods = []
                for m in mods:
                    dst = _node(m)
                    if dst and src and dst != src:
                        edges[(src, dst)] += 1
    return edges


def cycles(edges: collections.Counter[tuple[str, str]]) -> list[set[str]]:
    """Strongly connected components of more than one node (Tarjan)."""
    graph: dict[str, set[str]] = collections.defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
        graph.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp: set[str] = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def upward(edges: collections.Counter[tuple[str, str]], layers: tuple[str, ...]) -> list[str]:
    """The edges that do not go down ``layers`` (importer not above the imported), with counts."""
    rank = {f: k for k, f in enumerate(layers)}
    return [
        f"{a} -> {b} ({k})"
        for (a, b), k in sorted(edges.items())
        if a in rank and b in rank and rank[a] <= rank[b]
    ]


def test_every_folder_is_placed() -> None:
    edges = folder_edges(REPO)
    nodes = {x for e in edges for x in e}
    assert nodes - set(LAYERS) == set(), "place every folder in LAYERS (and in docs/contributing.md)"
    assert {"problems", "solving", "orchestration", "frontends", "models"} <= nodes


def test_folders_import_only_folders_below() -> None:
    bad = upward(folder_edges(REPO), LAYERS)
    assert bad == [], "imports up the layers: " + "; ".join(bad)


def test_folder_graph_is_acyclic() -> None:
    edges = folder_edges(REPO)
    found = cycles(edges)
    detail = [
        f"{sorted(c)}: " + ", ".join(f"{a}->{b} {k}" for (a, b), k in sorted(edges.items()) if {a, b} <= c)
        for c in found
    ]
    assert found == [], "folder cycles: " + "; ".join(detail)


def test_checker_sees_a_planted_cycle(tmp_path: Path) -> None:
    """A synthetic tree: ``low`` imports ``high`` inside a function (a lazy import counts), one
    import under ``if TYPE_CHECKING:`` (does not count), and the checker reports both findings."""
    pkg = tmp_path / "mcpkit"
    for folder in ("low", "high"):
        (pkg / folder).mkdir(parents=True)
        (pkg / folder / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "high" / "a.py").write_text("from mcpkit.low.b import f\n")
    (pkg / "low" / "b.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from mcpkit.high import a\n"
        "def f():\n    from mcpkit.high.a import g\n    return g\n"
    )
    edges = folder_edges(tmp_path, {"mcpkit": "mcpkit"})
    assert edges == {("high", "low"): 1, ("low", "high"): 1}
    assert cycles(edges) == [{"high", "low"}]
    assert upward(edges, ("low", "high")) == ["low -> high (1)"]
    (pkg / "low" / "b.py").write_text("def f():\n    return 1\n")
    edges = folder_edges(tmp_path, {"mcpkit": "mcpkit"})
    assert cycles(edges) == [] and upward(edges, ("low", "high")) == []
