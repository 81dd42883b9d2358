"""Sweeps on a real two-process Dask cluster: rows = inputs, resume, a killed worker, bad files,
time limits, the registered tasks, Ctrl-C."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import cloudpickle
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import mcpkit
from mcpkit.formats.io import save_lcp_json
from mcpkit.sweep.sink import part_files, read_results
from tests.conftest import random_p_matrix

pytestmark = pytest.mark.solver

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"
TOL = 1e-8


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the test's tasks travel by value
    with (
        LocalCluster(
            n_workers=2,
            processes=True,
            threads_per_worker=1,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as cluster,
        Client(cluster) as c,
    ):
        yield c


@pytest.fixture
def lcp_files(tmp_path: Path) -> list[Path]:
    rng = np.random.default_rng(15)
    (tmp_path / "lcp").mkdir()
    files = []
    for i in range(6):
        M = random_p_matrix(rng, 3)
        files.append(save_lcp_json(tmp_path / "lcp" / f"p{i}.json", M, rng.standard_normal(3)))
    return files


def _raw_keys(out: Path) -> list[str]:
    """Every key stored on disk, duplicates included (no de-duplication on reading)."""
    return (
        pa.concat_tables([pq.read_table(p, columns=["key"]) for p in part_files(out)])
        .column("key")
        .to_pylist()
    )


def test_rows_are_inputs_bad_files_are_error_rows_and_resume_runs_nothing(
    client, lcp_files, tmp_path
) -> None:
    from distributed import get_task_stream

    bad = [BAD / "bad_json.json", BAD / "nan_in_M.json", BAD / "unknown_suffix.txt"]
    files = [*lcp_files, *bad]
    out = tmp_path / "r.parquet"
    df = mcpkit.sweep(
        "solve-file", files, client=client, out=out, progress=False, time_limit=60, tol=TOL, method="lemke"
    )
    assert len(df) == len(files) and df["key"].is_unique
    assert list(df["name"]) == [f.name for f in files]
    good = df[df["name"].isin([f.name for f in lcp_files])]
    assert (
        good["solved"].all()
        and (good["comp_residual"] <= TOL).all()
        and (good["status"] == "converged").all()
    )
    assert (good["family"] == "mcp").all() and (good["kind"] == "mcp").all()
    errs = df[df["name"].isin([f.name for f in bad])]
    assert (errs["status"] == "error").all() and not errs["solved"].any()
    assert set(errs["error_type"]) == {"ProblemFileError"}
    assert errs["error_message"].str.len().gt(0).all()
    assert sorted(_raw_keys(out)) == sorted(df["key"])  # each row stored exactly once

    with get_task_stream(client) as ts:
        again = mcpkit.sweep(
            "solve-file",
            files,
            client=client,
            out=out,
            progress=False,
            time_limit=60,
            tol=TOL,
            method="lemke",
        )
    assert again.attrs["sweep"]["submitted"] == 0 and again.attrs["sweep"]["skipped"] == len(files)
    assert len(ts.data) == 0  # no task ran on the cluster
    assert list(again["key"]) == list(df["key"]) and list(again["solved"]) == list(df["solved"])

    other = mcpkit.sweep(
        "solve-file",
        lcp_files[:2],
        client=client,
        out=out,
        progress=False,
        time_limit=60,
        tol=1e-9,
        method="lemke",
    )
    assert other.attrs["sweep"]["submitted"] == 2  # other options: other keys


def _slow(i: int) -> dict:
    time.sleep(0.4)
    return {"solved": True, "status": "converged", "pid": os.getpid()}


def test_killed_worker_still_gives_every_row_exactly_once(client, tmp_path) -> None:
    out = tmp_path / "r.parquet"
    killed: list[int] = []

    def kill_one() -> None:
        time.sleep(1.5)  # both workers are inside a task now
        busy = [a for a, v in client.processing().items() if v]
        # the scheduler info of this Dask has no pid; ask the worker (its event loop answers mid-task)
        pids = client.run(os.getpid, workers=busy[:1] or None)
        pid = next(iter(pids.values()))
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    killer = threading.Thread(target=kill_one)
    killer.start()
    n = 16
    df = mcpkit.sweep(_slow, list(range(n)), client=client, out=out, progress=False)
    killer.join()
    assert killed
    assert sorted(df["input"]) == list(range(n)) and df["key"].is_unique
    assert df["solved"].all() and (df["status"] == "converged").all()
    assert sorted(_raw_keys(out)) == sorted(df["key"])
    assert df.attrs["sweep"]["workers_lost"] >= 1  # the sweep says what happened
    client.wait_for_workers(2, timeout=60)


def _sleepy(x: float) -> dict:
    time.sleep(x)
    return {"solved": True, "status": "converged"}


def test_time_limit_is_a_row(client, tmp_path) -> None:
    df = mcpkit.sweep(
        _sleepy, [0.0, 30.0], client=client, out=tmp_path / "r.parquet", progress=False, time_limit=0.3
    )
    by = df.set_index("input")
    assert by.loc[0.0, "solved"] and by.loc[0.0, "status"] == "converged"
    assert by.loc[30.0, "status"] == "time_limit" and not by.loc[30.0, "solved"]
    assert by.loc[30.0, "task_time_s"] < 5.0


def test_simulate_task_on_a_grid(client, tmp_path) -> None:
    from mcpkit.models.stewart_trinkle.studies import vose_step_model

    inputs = []
    for h in (1e-3, 5e-4):
        model, plate = vose_step_model(h=h, formulation="ncp")
        x = np.array([4.0, 0.0, plate.params.depth])
        inputs.append(
            {"model": model, "x0": model.initial_state(x, plate.point_velocity(0.0, x)), "n_steps": 10}
        )
    df = mcpkit.sweep(
        "simulate", inputs, client=client, out=tmp_path / "r.parquet", progress=False, method="penalty"
    )
    assert list(df["kind"]) == ["simulation", "simulation"] and df["solved"].all()
    assert list(df["steps"]) == [10, 10] and (df["max_natural_residual"] <= 1e-6).all()


def test_ctrl_c_leaves_a_valid_resumable_folder(client, tmp_path) -> None:
    out = tmp_path / "r.parquet"
    script = textwrap.dedent(
        f"""
        import time, mcpkit
        def slow(i):
            time.sleep(0.2)
            return {{"solved": True, "status": "converged"}}
        mcpkit.sweep(slow, list(range(30)), scheduler={client.scheduler.address!r}, out={str(out)!r},
                     progress=False, batch_rows=2)
        """
    )
    # SIGINT at its default in the child: a background test run (``pytest &``) ignores it, and
    # children inherit an ignored SIGINT
    proc = subprocess.Popen(
        [sys.executable, "-c", script], cwd=tmp_path, stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(part_files(out)) < 2:
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0 and b"KeyboardInterrupt" in err
    kept = read_results(out)
    assert 0 < len(kept) < 30 and kept["key"].is_unique and kept["solved"].all()
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]

    def slow(i: int) -> dict:  # the same task name as in the script: the same keys
        time.sleep(0.2)
        return {"solved": True, "status": "converged"}

    slow.__module__, slow.__qualname__ = "__main__", "slow"
    df = mcpkit.sweep(slow, list(range(30)), client=client, out=out, progress=False)
    assert df.attrs["sweep"]["submitted"] == 30 - len(kept)
    assert sorted(df["input"]) == list(range(30)) and df["key"].is_unique


def test_cli_sweep_on_an_existing_scheduler(client, lcp_files, tmp_path, capsys) -> None:
    import json

    from mcpkit.command.cli import EXIT_NOT_SOLVED, EXIT_SOLVED, main

    out, png = tmp_path / "cli.parquet", tmp_path / "profile.png"
    args = ["sweep", str(lcp_files[0].parent / "*.json"), "--method", "lemke", "--time-limit", "30"]
    args += ["--scheduler", client.scheduler.address, "--out", str(out), "--json"]
    assert main(args) == EXIT_SOLVED
    got = json.loads(capsys.readouterr().out)
    assert (got["rows"], got["solved"], got["errors"]) == (len(lcp_files), len(lcp_files), 0)
    assert set(got["time_quantiles_s"]) == {"q50", "q90", "q99", "q100"}
    code = main([args[0], str(BAD / "bad_json.json"), *args[1:-1], "--plot", str(png)])
    text = capsys.readouterr().out
    assert code == EXIT_NOT_SOLVED and png.stat().st_size > 0
    assert "errors" in text and "bad_json.json" in text
    assert len(read_results(out)) == len(lcp_files) + 1


def test_plan_task_multi_start(client, tmp_path) -> None:
    import functools

    from mcpkit.mpec.examples.block import BlockTask, block_horizon

    task = BlockTask(n_steps=10)
    factory = functools.partial(block_horizon, task)  # horizons hold CasADi expressions: built on the worker
    starts = mcpkit.sweep.grid(horizon=[factory], controls0=[[[f]] * task.n_steps for f in (2.0, 8.0)])
    df = mcpkit.sweep(
        "plan", starts, client=client, out=tmp_path / "r.parquet", progress=False, time_limit=120
    )
    assert len(df) == 2 and df["key"].is_unique and list(df["kind"]) == ["horizon", "horizon"]
    assert df["solved"].all() and (df["comp_residual"] <= 1e-6).all()
    assert (df["max_resim_deviation"] <= df["deviation_tol"]).all()
    # the same minimum-effort plan from both starts
    assert abs(df["objective"].iloc[0] - df["objective"].iloc[1]) <= 1e-4 * abs(df["objective"].iloc[0])
