"""Sweep pieces without a cluster: row keys, grids, the Parquet sink, input checks, the per-row runner."""

from __future__ import annotations

import math
import os
import shutil
import signal
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcpkit
from mcpkit.errors import MCPInputError, ProblemFileError, UnknownOptionError
from mcpkit.formats.io import save_lcp_json
from mcpkit.sweep.api import expand_files
from mcpkit.sweep.keys import canonical, file_digest, row_key
from mcpkit.sweep.report import summarize
from mcpkit.sweep.sink import ParquetSink, part_files, read_results
from mcpkit.sweep.tasks import hard_deadline, outcome_columns, run_row

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"


# ------------------------------------------------------------------------------ keys
def test_key_follows_file_content_not_folder(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    a = save_lcp_json(tmp_path / "a" / "p.json", np.eye(2), [-1, 1])
    (tmp_path / "b").mkdir()
    b = tmp_path / "b" / "p.json"
    shutil.copy(a, b)
    ka, kb = row_key("solve-file", a, {}), row_key("solve-file", b, {})
    assert ka == kb  # moved: same name and bytes
    save_lcp_json(b, np.eye(2), [-1, 2])
    assert row_key("solve-file", b, {}) != ka  # changed bytes
    c = tmp_path / "b" / "q.json"
    shutil.copy(a, c)
    assert row_key("solve-file", c, {}) != ka  # another name


def test_key_follows_options_and_exact_floats() -> None:
    base = row_key("t", {"h": 0.1}, {"method": "penalty"})
    assert base == row_key("t", {"h": 0.1}, {"method": "penalty"})
    assert base != row_key("t", {"h": 0.1 + 1e-17 * 8}, {"method": "penalty"})
    assert base != row_key("t", {"h": 0.1}, {"method": "scholtes"})
    assert base != row_key("u", {"h": 0.1}, {"method": "penalty"})
    assert row_key("t", {"a": 1, "b": 2}, {}) == row_key("t", {"b": 2, "a": 1}, {})


def test_canonical_arrays_and_nonfinite() -> None:
    x = np.arange(4.0)
    assert canonical(x) == canonical(x.copy())
    assert canonical(x) != canonical(x.astype(np.float32))
    assert canonical(x) != canonical(x.reshape(2, 2))
    assert canonical(math.inf) != canonical(-math.inf)
    assert canonical(np.int64(3)) == 3


def test_file_digest_includes_companions(tmp_path: Path) -> None:
    from mcpkit.formats.io import save_lcp_mtx

    p = save_lcp_mtx(tmp_path / "m.mtx", np.eye(2), np.array([1.0, -1.0]))
    d1 = file_digest(p)
    save_lcp_mtx(tmp_path / "m.mtx", np.eye(2), np.array([1.0, -2.0]))  # same M, another q
    assert file_digest(p) != d1
    assert file_digest(tmp_path / "absent.json") == "unreadable:absent.json"


# ------------------------------------------------------------------------------ grid
def test_grid_product_order_and_constants() -> None:
    pts = mcpkit.sweep.grid(h=[1e-3, 1e-4], n_d=np.array([8, 16]), form="lcp", x0=[[1.0, 2.0]])
    assert [(p["h"], p["n_d"]) for p in pts] == [(1e-3, 8), (1e-3, 16), (1e-4, 8), (1e-4, 16)]
    assert all(p["form"] == "lcp" and p["x0"] == [1.0, 2.0] for p in pts)
    assert type(pts[0]["n_d"]) is int
    assert mcpkit.sweep.grid({"a-b": (1, 2)}, c=range(3))[-1] == {"a-b": 2, "c": 2}


@pytest.mark.parametrize(
    "args, kwargs",
    [((), {}), ((), {"h": []}), (({"h": [1]},), {"h": [2]}), ((), {"x": np.zeros((2, 2))}), ((3,), {})],
)
def test_grid_errors(args: tuple, kwargs: dict) -> None:
    with pytest.raises(MCPInputError):
        mcpkit.sweep.grid(*args, **kwargs)


@settings(max_examples=40, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from("abcde"), st.lists(st.integers(-5, 5), min_size=1, max_size=4), min_size=1
    )
)
def test_grid_size_is_product_of_axes(axes: dict[str, list[int]]) -> None:
    pts = mcpkit.sweep.grid(**axes)
    assert len(pts) == math.prod(len(v) for v in axes.values())
    for name, values in axes.items():
        assert {p[name] for p in pts} == set(values)


def test_sweep_is_a_callable_module() -> None:
    import mcpkit.sweep as sw

    assert callable(mcpkit.sweep) and sw is mcpkit.sweep
    assert mcpkit.sweep.grid is sw.grid
    from mcpkit.sweep import sweep

    assert callable(sweep)


# ------------------------------------------------------------------------------ sink
def _row(i: int, **extra: object) -> dict:
    return {"key": f"k{i}", "task": "t", "solved": i % 2 == 0, "status": "converged", "x": i, **extra}


def test_sink_parts_are_valid_while_writing(tmp_path: Path) -> None:
    out = tmp_path / "r.parquet"
    sink = ParquetSink(out, batch_rows=3, flush_seconds=1e9)
    for i in range(7):
        sink.add(_row(i))
        for p in part_files(out):  # every part on disk is a whole Parquet file at every moment
            pq.read_metadata(p)
    assert len(part_files(out)) == 2 and len(read_results(out)) == 6
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    sink.close()
    df = read_results(out)
    assert sorted(df["key"]) == sorted(f"k{i}" for i in range(7))
    assert len(part_files(out)) == 1  # merged at close
    assert set(ParquetSink(out).keys()) == {f"k{i}" for i in range(7)}


def test_sink_unifies_columns_and_keeps_last_row_per_key(tmp_path: Path) -> None:
    out = tmp_path / "r.parquet"
    sink = ParquetSink(out, batch_rows=1)
    sink.add(_row(0, objective=1.5))
    sink.add(_row(1, stationarity="S", steps=3))
    sink.add(_row(0, objective=2.5))  # a key written twice (e.g. a merge cut short): one row
    sink.close(compact=False)
    df = read_results(out)
    assert len(df) == 2
    assert df.set_index("key").loc["k0", "objective"] == 2.5
    assert df.set_index("key").loc["k1", "steps"] == 3 and pd.isna(df.set_index("key").loc["k0", "steps"])
    assert pd.read_parquet(out, columns=["key", "solved"]).shape[0] == 3  # plain pandas reads the folder too


def test_sink_mixed_types_fall_back_to_text_and_core_types_hold(tmp_path: Path) -> None:
    out = tmp_path / "r.parquet"
    sink = ParquetSink(out)
    sink.add(_row(0, odd=1, iterations=3, objective=None))
    sink.add(_row(1, odd="one", iterations=None, objective=2))
    sink.close()
    table = pq.read_table(part_files(out)[0])
    assert str(table.schema.field("odd").type) == "string"
    assert str(table.schema.field("iterations").type) == "int64"
    assert str(table.schema.field("objective").type) == "double"


def test_sink_without_resume_starts_afresh_and_rejects_a_file(tmp_path: Path) -> None:
    out = tmp_path / "r.parquet"
    sink = ParquetSink(out)
    sink.add(_row(0))
    sink.close()
    assert ParquetSink(out, resume=False).keys() == set()
    f = tmp_path / "file.parquet"
    f.write_text("x")
    with pytest.raises(MCPInputError, match="is a file"):
        ParquetSink(f)


# --------------------------------------------------------------------- input checks
def _trivial(x: int, scale: float = 1.0) -> dict:
    return {"solved": True, "status": "converged", "value": x * scale}


@pytest.mark.parametrize(
    "task, inputs, kwargs, err",
    [
        ("solve-fil", ["a.json"], {}, UnknownOptionError),
        (_trivial, [1], {"scal": 2.0}, UnknownOptionError),
        (_trivial, [], {}, MCPInputError),
        (_trivial, [1], {"time_limit": -1}, MCPInputError),
        (_trivial, [1], {"workers": 0}, MCPInputError),
        (_trivial, [1], {"retries": -1}, MCPInputError),
        (_trivial, [1], {"client": object(), "scheduler": "tcp://x:1"}, MCPInputError),
        ("solve-file", [str(BAD / "bad_json.json")], {"method": "nosuch"}, UnknownOptionError),
        ("solve-file", ["/no/such/file.json"], {}, ProblemFileError),
        ("solve-file", ["/no/such/*.json"], {}, ProblemFileError),
        ("solve-file", [3], {}, MCPInputError),
        ("plan", [{"horizon": 1, "controls0": [[0.0]]}], {}, MCPInputError),
        ("simulate", [{"model": 1}], {}, MCPInputError),
        (42, [1], {}, MCPInputError),
    ],
)
def test_bad_sweep_calls_raise_typed_errors_before_running(task, inputs, kwargs, err, tmp_path: Path) -> None:
    with pytest.raises(err):
        mcpkit.sweep(task, inputs, out=tmp_path / "r.parquet", progress=False, **kwargs)
    assert not part_files(tmp_path / "r.parquet")


def test_expand_files_folders_globs_and_companions(tmp_path: Path) -> None:
    from mcpkit.formats.io import save_lcp_mtx

    save_lcp_json(tmp_path / "a.json", np.eye(1), [1.0])
    save_lcp_mtx(tmp_path / "m.mtx", np.eye(1), np.array([1.0]))
    (tmp_path / "notes.txt").write_text("x")
    got = expand_files([tmp_path, str(tmp_path / "*.json")])
    assert [p.name for p in got] == ["a.json", "m.mtx"]


# ----------------------------------------------------------------------- the runner
def _sleepy(x: float) -> dict:
    time.sleep(x)
    return {"solved": True, "status": "converged"}


def _crash(x: int) -> dict:
    os.kill(os.getpid(), signal.SIGSEGV)
    return {}


def _raises(x: int) -> dict:
    raise ZeroDivisionError("no")


def test_runner_error_row_time_limit_row_and_crash_row() -> None:
    row = run_row(_raises, 1, {}, None)
    assert row["status"] == "error" and row["error_type"] == "ZeroDivisionError" and row["solved"] is False
    row = run_row(_raises, 1, {}, 5.0)  # the same through a forked child
    assert row["error_type"] == "ZeroDivisionError"
    t0 = time.perf_counter()
    row = run_row(_sleepy, 30.0, {}, 0.2)
    took = time.perf_counter() - t0
    assert row["status"] == "time_limit" and row["solved"] is False
    assert hard_deadline(0.2) - 0.05 <= took <= hard_deadline(0.2) + 2.0
    row = run_row(_crash, 1, {}, 5.0)
    assert row["status"] == "error" and "signal 11" in row["error_message"]
    row = run_row(_sleepy, 0.0, {}, 5.0)
    assert row["solved"] is True and row["task_time_s"] >= 0


def test_outcome_columns_from_a_result_and_pairs() -> None:
    from mcpkit.solving.result import ToleranceCheck

    cols = outcome_columns((ToleranceCheck("deviation", 1e-3, 1e-2), {"extra": [1, 2]}))
    assert cols["solved"] is True and cols["status"] == "converged" and cols["value"] == 1e-3
    assert cols["extra"] == "[1, 2]"
    with pytest.raises(TypeError):
        outcome_columns(3.0)


def test_summarize_counts() -> None:
    df = pd.DataFrame(
        {
            "solved": [True, False, False, True],
            "status": ["converged", "time_limit", "error", "converged"],
            "task_time_s": [1.0, 2.0, 3.0, 4.0],
        }
    )
    s = summarize(df)
    assert (s["rows"], s["solved"], s["not_solved"], s["time_limit"], s["errors"]) == (4, 2, 1, 1, 1)
    assert s["time_quantiles_s"]["q50"] == pytest.approx(2.5, rel=1e-12)


def test_summary_says_what_a_rerun_skipped_and_what_the_cluster_lost() -> None:
    from mcpkit.sweep.report import format_summary

    s = {"rows": 3, "solved": 3, "not_solved": 0, "time_limit": 0, "errors": 0, "time_quantiles_s": {}}
    assert "this run" not in format_summary(s)
    text = format_summary(s, {"submitted": 1, "skipped": 2, "resubmitted": 0, "workers_lost": 0})
    assert "1 run now, 2 already in the results folder (skipped)" in text and "faults" not in text
    text = format_summary(s, {"submitted": 3, "skipped": 0, "resubmitted": 2, "workers_lost": 1})
    assert "1 worker(s) lost, 2 input(s) resubmitted" in text


def test_drive_faults_counts_workers_that_left() -> None:
    from mcpkit.sweep.api import DriveFaults

    class Client:
        def __init__(self) -> None:
            self.workers = {"tcp://a": 1, "tcp://b": 1}

        def nthreads(self) -> dict[str, int]:
            return dict(self.workers)

    c, f = Client(), DriveFaults()
    f.look(c, force=True)
    c.workers = {"tcp://a": 1, "tcp://c": 1}  # b died, its nanny started c
    f.look(c)  # too soon after the last look: not asked
    assert f.workers_lost == set()
    f.look(c, force=True)
    assert f.workers_lost == {"tcp://b"} and f.seen == {"tcp://a", "tcp://b", "tcp://c"}
