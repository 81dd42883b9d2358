"""Peer solvers for the benchmarks, each measured in the same process as mcpkit.

:class:`PyomoMpecNlp` is Pyomo's own MPEC route: the MCP as a Pyomo model with ``pyomo.mpec``
Complementarity components (built once, mutable Params for the parameters) solved by
``SolverFactory("mpec_nlp")`` (``mpec.simple_nonlinear`` + one NLP with the products relaxed
to ``<= 1e-7``). The NLP subsolver is an ``ipopt`` executable when one is found, else CasADi's
bundled IPOPT through Pyomo's NL writer (``mcpkit_ipopt``, in process).
"""

from __future__ import annotations

import logging
import time

import numpy as np
import pyomo.environ as pyo

import mcpkit
from mcpkit.homotopy.ipopt_plugin import register
from mcpkit.lowering.pyomo import ToPyomo
from mcpkit.solving.availability import ipopt_executable


class PyomoMpecNlp:
    """Pyomo's ``mpec_nlp`` on one MCP structure; :meth:`solve` per parameter value."""

    def __init__(self, mcp: mcpkit.MCP) -> None:
        register()
        self.subsolver = "ipopt" if ipopt_executable() else "mcpkit_ipopt"
        t0 = time.perf_counter()
        self.model, self.info = ToPyomo().apply(mcp)
        self.model.obj = pyo.Objective(expr=0.0)
        self.build_s = time.perf_counter() - t0
        self.opt = pyo.SolverFactory("mpec_nlp")
        self.opt.options.solver = self.subsolver

    def solve(self, p: np.ndarray, z0: np.ndarray | None = None) -> tuple[np.ndarray, float]:
        """``(z, seconds)`` at parameters ``p`` (stacked), warm-started at ``z0`` when given."""
        logger = logging.getLogger("pyomo.core")
        level = logger.level
        # mpec_nlp re-applies its transformation to the model on every call; Pyomo warns
        # about the replaced components, which is noise here
        logger.setLevel(logging.ERROR)
        try:
            t = time.perf_counter()
            self.info.set_parameters(self.model, p)
            if z0 is not None:
                self.info.set_values(self.model, z0)
            self.opt.solve(self.model)
            z = np.array(
                [v.value if v.value is not None else np.nan for v in self.info.variables(self.model)]
            )
            return z, time.perf_counter() - t
        finally:
            logger.setLevel(level)
