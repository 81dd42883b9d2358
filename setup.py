"""Package discovery for the mcpkit layout.

``models/`` and ``mpec/`` live at the top of the repository but install as
``mcpkit.models`` and ``mcpkit.mpec``; this file lists every sub-package under
those names so that no top-level ``models`` or ``mpec`` import name is created.
"""

from setuptools import find_packages, setup

ROOTS = {"mcpkit": "mcpkit", "mcpkit.models": "models", "mcpkit.mpec": "mpec"}


def _packages() -> tuple[list[str], dict[str, str]]:
    packages: list[str] = []
    package_dir: dict[str, str] = {}
    for name, folder in ROOTS.items():
        packages.append(name)
        package_dir[name] = folder
        for sub in find_packages(where=folder):
            packages.append(f"{name}.{sub}")
            package_dir[f"{name}.{sub}"] = f"{folder}/{sub.replace('.', '/')}"
    return packages, package_dir


PACKAGES, PACKAGE_DIR = _packages()

setup(packages=PACKAGES, package_dir=PACKAGE_DIR)
