"""Every mcpkit module's docstring examples (``mcpkit``, ``mcpkit.models``, ``mcpkit.mpec``) as doctests.

Equivalent to ``pytest --doctest-modules`` over the installed package, but it imports the modules
by their installed names (``models/`` and ``mpec/`` install as ``mcpkit.models`` and
``mcpkit.mpec``), which a path-based collection of the source folders cannot do.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from types import ModuleType

import pytest


def _module_names() -> list[str]:
    names = set()
    # mcpkit.models and mcpkit.mpec live in other folders: walk each installed package's own path
    for top in ("mcpkit", "mcpkit.models", "mcpkit.mpec"):
        pkg = importlib.import_module(top)
        names.add(top)
        for info in pkgutil.walk_packages(pkg.__path__, prefix=f"{top}."):
            if info.name.split(".")[-1] != "__main__":
                names.add(info.name)
    return sorted(names)


def _examples(module: ModuleType) -> list[doctest.DocTest]:
    finder = doctest.DocTestFinder(exclude_empty=True)
    return [t for t in finder.find(module, module.__name__) if t.examples]


MODULES = _module_names()
#: The modules whose docstrings hold examples (an import error here fails the collection loudly).
WITH_EXAMPLES = [name for name in MODULES if _examples(importlib.import_module(name))]


def test_every_module_imports() -> None:
    """Every module imports (a doctest collection that silently skipped one would hide its examples)."""
    failed = {}
    for name in MODULES:
        try:
            importlib.import_module(name)
        except ImportError as exc:  # pragma: no cover - reported below
            failed[name] = repr(exc)
    assert not failed, failed
    assert {"mcpkit.problems.mcp", "mcpkit.models.ecp", "mcpkit.mpec.horizon"} <= set(MODULES)


def test_examples_found() -> None:
    assert "mcpkit.frontends.solve" in WITH_EXAMPLES


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_docstring_examples(name: str) -> None:
    tests = _examples(importlib.import_module(name))
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for t in tests:
        runner.run(t, out=_Collect.write)
    failed, attempted = runner.summarize(verbose=False)
    assert attempted > 0
    assert failed == 0, f"{failed} of {attempted} examples failed in {name}:\n" + _Collect.flush()


class _Collect:
    buf: list[str] = []

    @classmethod
    def write(cls, s: str) -> None:
        cls.buf.append(s)

    @classmethod
    def flush(cls) -> str:
        out, cls.buf = "".join(cls.buf), []
        return out
