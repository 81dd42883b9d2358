"""No compatibility shims in the installed packages (issue 45: "no shims").

A shim keeps an old import path alive after a move: a module that only re-imports names from
elsewhere, a redundant alias ``from a import X as X`` kept "one release", or a module-level
``__getattr__`` (PEP 562) that forwards old names. mcpkit has never been released, so each such
path is a second name for one thing. Package ``__init__.py`` files are the public API and may
re-export; everything else must define what it exports.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("mcpkit", "models", "mpec")


def shim_findings(path: Path, text: str) -> list[str]:
    """What makes the module at ``path`` (source ``text``) a shim, one line per finding."""
    tree = ast.parse(text, filename=str(path))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.asname == alias.name:  # "import x as x", "from m import x as x"
                    found.append(f"{path}:{node.lineno}: redundant alias '{alias.name} as {alias.asname}'")
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
            found.append(f"{path}:{node.lineno}: module-level __getattr__")
    if path.name != "__init__.py":
        found += [f"{path}: re-exports '{name}' in __all__" for name in reexported(tree)]
    if path.name != "__init__.py" and tree.body:
        defines = [
            n
            for n in tree.body
            if not isinstance(n, (ast.Import, ast.ImportFrom))
            and not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))  # docstring
            and not (isinstance(n, ast.Assign) and [getattr(t, "id", None) for t in n.targets] == ["__all__"])
        ]
        if not defines:
            found.append(f"{path}: only imports (a re-export module)")
    return found


def reexported(tree: ast.Module) -> list[str]:
    """Names a module lists in ``__all__`` but imports instead of defining (a second import path)."""
    imported: set[str] = set()
    defined: set[str] = set()
    exported: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            defined.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name):
                    defined.add(target.id)
                    if target.id == "__all__" and isinstance(node.value, (ast.List, ast.Tuple)):
                        exported = [e.value for e in node.value.elts if isinstance(e, ast.Constant)]
    return [name for name in exported if name in imported and name not in defined]


def source_files() -> list[Path]:
    """Every Python file of the installed packages."""
    return sorted(p for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py"))


def test_no_shim_in_the_packages() -> None:
    findings = [f for p in source_files() for f in shim_findings(p.relative_to(REPO), p.read_text())]
    assert not findings, "\n".join(findings)


def test_checker_sees_each_kind_of_shim() -> None:
    alias = "from mcpkit.engines.lemke_pivoting import principal_pivot as principal_pivot\nX = 1\n"
    assert shim_findings(Path("a.py"), alias) == [
        "a.py:1: redundant alias 'principal_pivot as principal_pivot'"
    ]
    forward = '"""Old path."""\n\ndef __getattr__(name):\n    return 1\n'
    listed = 'from mcpkit.mpec.step import StepSpec\n__all__ = ["Horizon", "StepSpec"]\nclass Horizon: ...\n'
    assert shim_findings(Path("c.py"), listed) == ["c.py: re-exports 'StepSpec' in __all__"]
    assert shim_findings(Path("pkg/__init__.py"), listed) == []
    assert any("__getattr__" in f for f in shim_findings(Path("b.py"), forward))
    reexport = '"""Moved."""\nfrom mcpkit.solving.options import Choice\n__all__ = ["Choice"]\n'
    assert shim_findings(Path("c.py"), reexport) == [
        "c.py: re-exports 'Choice' in __all__",
        "c.py: only imports (a re-export module)",
    ]
    assert shim_findings(Path("__init__.py"), reexport) == []
    plain = "import numpy as np\nimport os.path as path\n\ndef f() -> int:\n    return 1\n"
    assert shim_findings(Path("d.py"), plain) == []
