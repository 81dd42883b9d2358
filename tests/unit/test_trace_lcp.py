"""The traced plain LCP solve (``benchmarks/trace_lcp_solve.py``, issue 27): judged once, through
the solve's spine only (no CasADi lowering, PATH probe or progress call for a 2 x 2 LCP)."""

from __future__ import annotations

from tests.conftest import load_benchmark

#: What a plain LCP solve passes: front end, declaration, options, planner (every choice; it only
#: reads the registry's tables, no registry code runs), engine and its linear algebra, verdict,
#: residuals (docs/contributing.md, "A plain LCP solve, traced").
SPINE = {
    "mcpkit/frontends/solve.py",
    "mcpkit/problems/mcp.py",
    "mcpkit/solving/options.py",
    "mcpkit/orchestration/planner.py",
    "mcpkit/engines/newton.py",
    "mcpkit/engines/newton_linalg.py",
    "mcpkit/solving/result.py",
    "mcpkit/solving/residuals.py",
}


def test_plain_lcp_solve_is_judged_once_along_the_spine() -> None:
    out = load_benchmark("trace_lcp_solve").trace()
    assert out["solved"]
    assert out["verdicts"] == 1
    files = set(out["calls_by_file"])
    assert files <= SPINE, f"the solve left the spine: {sorted(files - SPINE)}"
    assert out["files"] == len(files) <= 8
