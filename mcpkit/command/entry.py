r"""The ``mcpkit`` program's entry point: Ctrl-C handled from the first import on.

``[project.scripts] mcpkit = "mcpkit.command.entry:main"``. The command's own handling of
Ctrl-C (:mod:`mcpkit.command.cli`: one line ``mcpkit: interrupted``, exit status 130) starts
when its module runs, but importing it takes about a second (CasADi, SciPy, SymPy, Pyomo), and
a Ctrl-C in that second ended the process with a traceback of import frames and the signal's
status. This module imports only the standard library, so it is in place before them:

* importing any ``mcpkit`` module runs ``mcpkit/__init__.py`` first, whose first import is this
  module, and importing it calls :func:`guard_import`: when the process is the ``mcpkit``
  program (:func:`is_program`), SIGINT then writes ``mcpkit: interrupted`` and exits with
  :data:`EXIT_INTERRUPTED` at once (nothing has been solved or written yet). Imported as a
  library (any other program) nothing changes: Python's own handler stays;
* :func:`main` imports the command and :func:`release` gives SIGINT back to Python's handler
  (``KeyboardInterrupt``) right before the command runs, where the command turns it into its
  ``interrupted`` result.

The choice against a lazy ``mcpkit/__init__.py``: the package keeps importing its public names
and registering its Pyomo plugin at ``import mcpkit`` for every other user; only the program
sees a difference. Python's own start-up (before ``mcpkit`` is imported, a few tens of
milliseconds) is not covered.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

EXIT_INTERRUPTED = 130
"""Exit status after Ctrl-C (128 + SIGINT), as :data:`mcpkit.command.cli.EXIT_INTERRUPTED`."""

#: Names the ``mcpkit`` program runs under: the console script (``argv[0]``) and ``python -m``.
PROGRAM_NAMES = ("mcpkit", "mcpkit.exe", "mcpkit-script.py")
PROGRAM_MODULES = ("mcpkit.command.cli", "mcpkit.command.entry")


def is_program(argv: Sequence[str] | None = None, orig_argv: Sequence[str] | None = None) -> bool:
    """Whether this process is the ``mcpkit`` program: ``argv[0]`` names the console script
    (:data:`PROGRAM_NAMES`) or the interpreter was started as ``python -m`` one of
    :data:`PROGRAM_MODULES` (``sys.orig_argv``; ``sys.argv[0]`` is ``"-m"`` while the package is
    imported then)."""
    argv = sys.argv if argv is None else argv
    orig = getattr(sys, "orig_argv", []) if orig_argv is None else orig_argv
    if argv and os.path.basename(argv[0]) in PROGRAM_NAMES:
        return True
    if "-m" in orig:
        k = list(orig).index("-m")
        return k + 1 < len(orig) and orig[k + 1] in PROGRAM_MODULES
    return False


def _interrupted(signum: int, frame: Any) -> None:
    """SIGINT while the program imports: one line on stderr, exit :data:`EXIT_INTERRUPTED`."""
    try:
        os.write(2, b"\nmcpkit: interrupted\n")
    finally:
        os._exit(EXIT_INTERRUPTED)


def guard_import() -> None:
    """In the ``mcpkit`` program (:func:`is_program`), SIGINT ends it in one line until :func:`release`.

    Only when Python's own handler is in place, in the main thread; otherwise nothing changes.
    """
    if threading.current_thread() is not threading.main_thread() or not is_program():
        return
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupted)


def release() -> None:
    """Python's handler back (``KeyboardInterrupt``), if :func:`guard_import` installed its own."""
    if (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is _interrupted
    ):
        signal.signal(signal.SIGINT, signal.default_int_handler)


def main() -> int:
    """The ``mcpkit`` command (:func:`mcpkit.command.cli.main`), imported under :func:`guard_import`."""
    guard_import()
    from mcpkit.command.cli import main as run

    return run()


guard_import()  # on import: mcpkit/__init__.py imports this module before anything heavy
