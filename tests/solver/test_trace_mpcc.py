"""The traced MPCC solve (``benchmarks/trace_mpcc_solve.py``, issue 45): no call back up the layers.

A call whose nearest mcpkit caller lies in a lower folder of
:data:`tests.unit.test_folder_graph.LAYERS` than the callee is a callback a higher layer handed
down. The MPCC point assessment is data handed down instead
(:class:`~mcpkit.homotopy.loop.PointAssessor`), so neither the homotopy loop nor the refinement
calls into :mod:`mcpkit.orchestration` (until it was, they called ``MPCCSolver._assess`` and the
refiner's closure, 29 times on this problem).
"""

from __future__ import annotations

import pytest

from tests.conftest import load_benchmark

pytestmark = pytest.mark.solver


def test_traced_mpcc_solve_calls_no_folder_above_its_caller() -> None:
    out = load_benchmark("trace_mpcc_solve").trace(4)
    assert out["solved"]
    files = out["calls_by_file"]
    # the homotopy and the refinement both ran, so both had the chance to call back up
    assert "mcpkit/homotopy/loop.py" in files and "mcpkit/stationarity/refine.py" in files
    assert out["calls_up"] == 0, out["calls_up_by_site"]


def test_traced_mpcc_solve_passes_no_more_files_than_its_concepts() -> None:
    """25 files, each a concept the solve uses (``docs/contributing.md`` lists them); a new file
    on this path is a new concept to add there, or a file the default path should not enter
    (the lifting, the LP inner solver and the progress display are entered only when used)."""
    files = load_benchmark("trace_mpcc_solve").trace(4)["calls_by_file"]
    assert len(files) <= 25, sorted(files)
    for unused in (
        "lowering/lift_pairs.py",
        "homotopy/lp_inner.py",
        "solving/progress.py",
        "homotopy/pyomo_inner.py",
    ):
        assert f"mcpkit/{unused}" not in files
