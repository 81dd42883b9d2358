"""Sphinx configuration of the mcpkit documentation site.

Build with ``sphinx-build -W -b html docs docs/_build/html`` (``pip install -e ".[docs]"``).
Pages are MyST Markdown; the tutorials and gallery cards are MyST notebooks that myst-nb
executes at build time, cached in ``docs/_build/.jupyter_cache``. Math is MathJax 3 served from
the build itself (``sphinx-mathjax-offline``), so the site renders with no network.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
# Notebook kernels inherit the environment: figures through the inline backend (an MPLBACKEND=Agg
# set for the tests would otherwise hide every figure), the repository importable.
os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))

project = "mcpkit"
author = "the mcpkit authors"
copyright = "2026, the mcpkit authors"
release = version = "0.1.0"

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "sphinx_copybutton",
]
# MathJax 3 from a pip package (no CDN): the extension copies it into _static/mathjax.
if importlib.util.find_spec("sphinx-mathjax-offline") is not None:
    extensions.append("sphinx-mathjax-offline")

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
exclude_patterns = ["_build", "README.md", "**/.ipynb_checkpoints", "Thumbs.db", ".DS_Store"]

# MyST
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist", "substitution"]
myst_heading_anchors = 3

# myst-nb: execute notebooks at build time, cached (re-run only when a cell changes)
nb_execution_mode = os.environ.get("MCPKIT_DOCS_EXECUTE", "cache")
nb_execution_cache_path = str(DOCS / "_build" / ".jupyter_cache")
nb_execution_timeout = 120
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True
# solver chatter on stderr (CasADi NaN probes of a Newton line search) is not part of a lesson
nb_output_stderr = "remove"
nb_render_markdown_format = "myst"


def _encrypted_kernels() -> None:
    """Kernels that execute the pages talk to the build over CurveZMQ when both ends can.

    ipykernel >= 7.3 warns at every kernel start that runs over TCP without encryption (one
    "[IPKernelApp] WARNING" per executed page); jupyter_client provisions Curve keys when its
    KernelManager's ``transport_encryption`` is ``"auto"`` and the kernelspec declares support.
    myst-nb builds its kernel managers without a traitlets config, so the trait's default is
    what applies; older jupyter_client (no such trait) or a pyzmq without Curve: nothing to do.
    """
    try:
        import zmq
        from jupyter_client.manager import KernelManager
    except ImportError:
        return
    trait = KernelManager.class_traits().get("transport_encryption")
    if trait is not None and zmq.has("curve"):
        trait.default_value = "auto"


_encrypted_kernels()

# autodoc
autodoc_default_options = {"members": True, "show-inheritance": False}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_typehints_format = "short"
autodoc_preserve_defaults = True
autosummary_generate = False
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_use_ivar = False

html_theme = "furo"
html_title = "mcpkit"
html_static_path = ["_static"]
html_css_files = ["mcpkit.css"]
html_show_sourcelink = False
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True

intersphinx_mapping: dict = {}


# The guide toctree in index.md lists the pages in reading order and ends with the line
# ``GUIDE_REST``: every other top-level page (new ones included) is listed there, so a page
# added to docs/ appears on the site without editing index.md.
GUIDE_MARK = "GUIDE_REST"


def _guide_rest(app, docname: str, source: list[str]) -> None:
    if docname != "index" or GUIDE_MARK not in source[0]:
        return
    text = source[0]
    listed = {line.strip() for line in text.splitlines()}
    rest = sorted(d for d in app.env.found_docs if "/" not in d and d not in listed and d != "index")
    source[0] = text.replace(GUIDE_MARK, "\n".join(rest))


def setup(app) -> dict:
    app.connect("source-read", _guide_rest)
    # a page added or removed changes the guide list: re-read index.md then
    app.connect(
        "env-get-outdated", lambda app, env, added, changed, removed: ["index"] if added or removed else []
    )
    return {"parallel_read_safe": True}
