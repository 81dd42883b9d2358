"""Every class of the installed packages has a name of its own (issue 45: "unique class names").

Two classes of one name in different modules (two ``PyomoRoute``, two ``Budget``) read as one
concept in tracebacks, docs and reviews while they are two; a class that should be shared is
imported, and two concepts get two names.
"""

from __future__ import annotations

import ast
import collections
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("mcpkit", "models", "mpec")


def class_homes(files: dict[str, str]) -> dict[str, list[str]]:
    """Module-level class names of ``files`` (path -> source) and the files defining each."""
    homes: dict[str, list[str]] = collections.defaultdict(list)
    for path, text in files.items():
        for node in ast.parse(text, filename=path).body:
            if isinstance(node, ast.ClassDef):
                homes[node.name].append(path)
    return homes


def test_no_two_classes_share_a_name() -> None:
    paths = [p for pkg in PACKAGES for p in sorted((REPO / pkg).rglob("*.py"))]
    files = {str(p.relative_to(REPO)): p.read_text() for p in paths}
    shared = {name: paths for name, paths in class_homes(files).items() if len(paths) > 1}
    assert not shared, shared


def test_the_check_sees_a_shared_name() -> None:
    two = {"a.py": "class Budget:\n    pass\n", "b.py": "class Budget: ...\nclass Other: ...\n"}
    homes = class_homes(two)
    assert homes["Budget"] == ["a.py", "b.py"] and homes["Other"] == ["b.py"]
