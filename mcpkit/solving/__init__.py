r"""The vocabulary of a solve: what every solver layer speaks, and nothing that solves.

Below the lowerings, printers, engines, homotopy and stationarity, which all import it; above
the declarations (:mod:`mcpkit.problems`) only. The orchestration that chooses and runs solvers is
:mod:`mcpkit.orchestration`.

* :mod:`~mcpkit.solving.registry`: the one table of methods and backends (what exists; no
  decisions);
* :mod:`~mcpkit.solving.options`: :class:`~mcpkit.solving.options.SolveOptions`, the method and
  backend enums;
* :mod:`~mcpkit.solving.result`: the result vocabulary and the verdict on the declaration;
  :mod:`~mcpkit.solving.residuals`: the residuals on the original pairs;
  :mod:`~mcpkit.solving.route`: :class:`~mcpkit.solving.route.RouteOutcome`, what every route
  returns to be judged; :mod:`~mcpkit.solving.tables`: summaries as aligned 4-digit tables;
* :mod:`~mcpkit.solving.progress` (progress lines), :mod:`~mcpkit.solving.availability`
  (run-time detection of PATH and IPOPT) and :mod:`~mcpkit.solving.stop` (interrupts).
"""
