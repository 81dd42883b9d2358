r"""The ``mcpkit`` program, the top layer: it may import every folder, and none imports it.

* :mod:`~mcpkit.command.entry`: the console script's entry point (Ctrl-C handled from the first
  import on; standard library only, imported first by ``mcpkit/__init__.py``);
* :mod:`~mcpkit.command.cli`: the subcommands (``solve``, ``print``, ``sweep``, ``demo``, ...),
  above the sweeps (:mod:`mcpkit.sweep`) and the contact models (:mod:`mcpkit.models`) they run.

This package's ``__init__`` imports nothing, so the entry point runs before the heavy imports.
"""
