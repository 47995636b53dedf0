"""Tests of pydpowl.engine.dask_cluster: passes on a Dask cluster fail loudly and say where.

Real ``dask-scheduler`` and ``dask-worker`` processes are started on loopback by the tests (fixture
``dask_processes``) and workers are killed by pid with SIGKILL in the middle of a fit."""

import importlib
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import dask
import dask.array as da
import numpy as np
import pytest
from dask import delayed
from distributed import Client

import pydpowl.engine.dask_problem as dask_problem
from pydpowl import DPOWL
from pydpowl.datasets import make_synthetic_owl
from pydpowl.engine import dask_cluster
from pydpowl.engine.dask_cluster import DaskClusterError, check_workers, compute, heartbeat_interval, worker_timeout

BOUNDS = (np.zeros(4), np.ones(4))


def _data(n=2000, chunks=500):
    d = make_synthetic_owl(n, shift=10, random_state=5)
    X = d.X.to_numpy()
    lazy = (da.from_array(X, chunks=(chunks, -1)), da.from_array(d.treatment, chunks=chunks),
            da.from_array(d.benefit, chunks=chunks))
    return (X, d.treatment, d.benefit), lazy


def _model():
    return DPOWL(epsilon=1, gamma=50, weights_upper_bound=30, feature_bounds=BOUNDS, random_state=7)


def _connect(address, n_workers):
    client = Client(address, timeout="30s", set_as_default=True)
    client.wait_for_workers(n_workers, timeout=60)
    return client


def _kill_at_first_evaluation(monkeypatch, kill):
    """Run ``kill()`` when the fit starts its first evaluation pass (after the validation pass)."""
    original = dask_problem.count_pass
    done = []

    def count_pass(kind, chunks=0):
        if kind == "evaluations" and not done:
            done.append(True)
            kill()
        original(kind, chunks)

    monkeypatch.setattr(dask_problem, "count_pass", count_pass)
    return done


# --------------------------------------------------------------------------- settings and the local scheduler


def test_settings_and_their_errors():
    assert (worker_timeout(), heartbeat_interval()) == (60.0, 30.0)
    for value, seconds in ((5, 5.0), ("2 minutes", 120.0), (None, np.inf), ("inf", np.inf)):
        with dask.config.set({"pydpowl.worker-timeout": value}):
            assert worker_timeout() == seconds
    for value, error in ((0, ValueError), (-1.0, ValueError), (float("nan"), ValueError), ("soon", ValueError),
                         (True, TypeError)):
        with dask.config.set({"pydpowl.heartbeat": value}), pytest.raises(error, match="pydpowl.heartbeat"):
            heartbeat_interval()


def test_without_a_distributed_client_compute_is_dasks():
    x = da.arange(10, chunks=3)
    with dask.config.set(scheduler="sync"):
        (total,) = compute(x.sum())
    assert total == 45


# --------------------------------------------------------------------------- in-process cluster (fixture dask_client)


def test_an_import_error_in_a_task_names_the_worker(dask_client):
    task = delayed(importlib.import_module, pure=False)("pydpowl_no_such_module")
    with pytest.raises(DaskClusterError) as info:
        compute(task, label="the test pass")
    message = str(info.value)
    workers = list(dask_client.scheduler_info()["workers"])
    assert "No module named 'pydpowl_no_such_module'" in message and "during the test pass" in message
    assert any(w in message for w in workers)  # the worker it happened on, by address
    assert "-m distributed.cli.dask_worker" in message


def test_a_worker_with_another_pydpowl_version_is_refused(dask_client, monkeypatch):
    probe = dask_cluster._environment_probe()

    def other_version():
        env = probe()
        env["version"] = "0.0.0-other"
        return env

    monkeypatch.setattr(dask_cluster, "_environment_probe", lambda: other_version)
    worker = next(iter(dask_client.scheduler_info()["workers"]))
    with pytest.raises(DaskClusterError, match=f"Dask worker {worker} imports pydpowl 0.0.0-other, the client"):
        check_workers(dask_client, workers=[worker])


def test_a_long_pass_logs_heartbeats(dask_client, caplog):
    task = delayed(time.sleep, pure=False)(2.5)
    with dask.config.set({"pydpowl.heartbeat": 0.5}), caplog.at_level(logging.INFO, logger="pydpowl.dask"):
        compute(task, label="the slow pass")
    beats = [r.getMessage() for r in caplog.records if "still running" in r.getMessage()]
    assert beats and all(m.startswith("the slow pass still running after") and "2 worker(s)" in m for m in beats)


# --------------------------------------------------------------------------- real scheduler and worker processes


def test_every_worker_lost_mid_fit_fails_loudly_within_the_timeout(dask_processes, monkeypatch, caplog):
    worker = dask_processes.start_worker()
    _, (X, A, B) = _data()
    with _connect(dask_processes.address, 1) as client:
        assert list(client.run(os.getpid).values()) == [worker.pid]
        killed = _kill_at_first_evaluation(monkeypatch, lambda: dask_processes.kill(worker))
        with dask.config.set({"pydpowl.worker-timeout": 3, "pydpowl.heartbeat": 1}), \
                caplog.at_level(logging.INFO, logger="pydpowl.dask"), pytest.raises(DaskClusterError) as info:
            start = time.monotonic()
            _model().fit(X, A, B, 0.5)
        waited = time.monotonic() - start
    assert killed and worker.returncode == -9
    assert str(info.value).startswith(f"no Dask worker has been connected to the scheduler {dask_processes.address} "
                                      "for 3 s during an evaluation pass")
    assert "--dask-timeout" in str(info.value)
    assert waited < 20  # 3 s without a worker, plus the fit's first passes
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(m.startswith(f"no Dask worker is connected to the scheduler {dask_processes.address}") for m in warnings)


@pytest.mark.slow
def test_workers_back_in_time_resume_the_fit_with_the_same_release(dask_processes, monkeypatch, caplog):
    (X0, A0, B0), (X, A, B) = _data()
    reference = _model().fit(X0, A0, B0, 0.5)
    worker = dask_processes.start_worker()
    with _connect(dask_processes.address, 1) as client:
        def replace_worker():
            dask_processes.kill(worker)
            dask_processes.start_worker()

        _kill_at_first_evaluation(monkeypatch, replace_worker)
        with dask.config.set({"pydpowl.worker-timeout": 60}), caplog.at_level(logging.INFO, logger="pydpowl.dask"):
            model = _model().fit(X, A, B, 0.5)
        assert worker.returncode == -9 and len(client.scheduler_info()["workers"]) == 1
    messages = [r.getMessage() for r in caplog.records]
    assert any("waits for workers" in m for m in messages) and any("connected again" in m for m in messages)
    np.testing.assert_array_equal(model.coef_, reference.coef_)
    assert model.intercept_ == reference.intercept_


def test_a_worker_whose_python_lacks_pydpowl_is_named(dask_processes, tmp_path):
    system_python = str(Path(sys.base_prefix) / "bin" / "python3")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    lacks = subprocess.run([system_python, "-c", "import pydpowl"], cwd=tmp_path, env=env, capture_output=True)
    assert lacks.returncode != 0, f"{system_python} imports pydpowl from {tmp_path}: this test needs one that cannot"
    dask_processes.start_worker(system_python, cwd=tmp_path, env=env)
    _, (X, A, B) = _data()
    with _connect(dask_processes.address, 1) as client:
        (address,) = client.scheduler_info()["workers"]
        with pytest.raises(DaskClusterError) as info:
            _model().fit(X, A, B, 0.5)
    message = str(info.value)
    assert message.startswith(f"Dask worker {address} cannot import pydpowl (ModuleNotFoundError: No module named "
                              f"'pydpowl'); it runs {system_python} in {tmp_path}")
    assert f"'{sys.executable} -m distributed.cli.dask_worker {dask_processes.address}'" in message


@pytest.mark.slow
def test_a_lost_scheduler_is_named(tmp_path, monkeypatch):
    from conftest import DaskProcesses

    processes = DaskProcesses(tmp_path)
    try:
        address = processes.start_scheduler()
        processes.start_worker()
        _, (X, A, B) = _data()
        with _connect(address, 1):
            _kill_at_first_evaluation(monkeypatch, lambda: processes.kill(processes.procs[0]))
            with pytest.raises(DaskClusterError, match=f"lost the connection to the Dask scheduler {address} during "
                                                       "an evaluation pass"):
                _model().fit(X, A, B, 0.5)
    finally:
        processes.close()


def test_the_heartbeat_without_workers_says_how_long_none_has_been_connected(monkeypatch, caplog):
    # a fake clock (1 s per tick) and a cluster without workers: the pass ends at the 6th tick
    clock = iter(range(100))
    ticks = iter([False] * 5 + [True])
    monkeypatch.setattr(dask_cluster.time, "monotonic", lambda: float(next(clock)))
    monkeypatch.setattr(dask_cluster, "_done_within", lambda futures, seconds: next(ticks))
    monkeypatch.setattr(dask_cluster, "_workers", lambda client: {})
    monkeypatch.setattr(dask_cluster, "_scheduler_address", lambda client: "tcp://test:1")
    with dask.config.set({"pydpowl.heartbeat": 2, "pydpowl.worker-timeout": 60}), \
            caplog.at_level(logging.INFO, logger=dask_cluster.logger.name):
        dask_cluster._wait(object(), [], "a test pass")
    waiting = [r.getMessage() for r in caplog.records if "waiting for workers" in r.getMessage()]
    # start at 0; no worker from t=1 on; heartbeats at t=2 (1 s alone) and t=4 (3 s alone)
    assert waiting == [f"a test pass waiting for workers: none connected to tcp://test:1 for {s} s (gives up after "
                       "60 s)" for s in (1, 3)]
