"""No function of mcpkit (``mcpkit/``, ``models/``, ``mpec/``) is over 120 lines (issue 45).

A function's length is the span of its ``def`` statement, docstring included (decorators not):
``end_lineno - lineno + 1`` of its AST node. Functions nested in others and methods count on
their own (and inside the function that holds them). A function that grows past the bound is
split into named pieces (a step of the algorithm, a check, a state object whose methods the
steps are), not cut at an arbitrary line.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.unit.test_import_graph import module_files

#: The most lines a function may have.
MAX_LINES = 120


def long_functions(path: Path, limit: int = MAX_LINES) -> dict[str, int]:
    """``{"qualified.name": lines}`` of the functions in ``path`` over ``limit`` lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    assert child.end_lineno is not None
                    n = child.end_lineno - child.lineno + 1
                    if n > limit:
                        found[name] = n
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def test_the_measure_counts_a_long_function(tmp_path: Path) -> None:
    """The check sees a long method in a class and a long function nested in another."""
    body = "\n".join(f"        x{i} = {i}" for i in range(MAX_LINES))
    src = tmp_path / "m.py"
    text = f"class A:\n    def long(self):\n{body}\n\n\ndef short():\n    return 1\n"
    src.write_text(text, encoding="utf-8")
    assert long_functions(src) == {"A.long": MAX_LINES + 1}
    nested = "\n".join(f"        y{i} = {i}" for i in range(MAX_LINES))
    src.write_text(f"def outer():\n    def inner():\n{nested}\n    return inner\n", encoding="utf-8")
    assert long_functions(src) == {"outer": MAX_LINES + 3, "outer.inner": MAX_LINES + 1}


def test_no_function_over_120_lines() -> None:
    modules = module_files()
    assert len(modules) > 100, "the module list lost most of the package"
    long = {f"{name}:{fn}": n for name, path in modules.items() for fn, n in long_functions(path).items()}
    assert not long, f"functions over {MAX_LINES} lines (split them into named pieces): {long}"
