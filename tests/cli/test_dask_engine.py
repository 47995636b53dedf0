"""Tests of ``pydpowl fit --engine dask`` (pydpowl.cli.dask_engine): CSV files read chunk by chunk on a
Dask scheduler give the model file the in-memory command gives for the same table."""

import json
import time

import numpy as np
import pytest

from pydpowl.cli import main
from pydpowl.cli.dask_engine import dask_client, files_fingerprint
from pydpowl.datasets import make_synthetic_owl

DATA_OPTS = ["--treatment", "arm", "--treated", "new", "--benefit", "B", "--features", "x1,x2,x3,x4",
             "--bounds", "x1=0:1,x2=0:1,x3=0:1,x4=0:1", "--weights-upper-bound", "30"]
FIT_OPTS = ["--epsilon", "2", "--gamma", "40", "--seed", "1"]


@pytest.fixture
def csvs(tmp_path):
    d = make_synthetic_owl(1000, random_state=3)
    frame = d.X.copy()
    frame["arm"] = np.where(d.treatment > 0, "new", "old")
    frame["B"] = d.benefit
    frame.to_csv(tmp_path / "all.csv", index=False)
    (tmp_path / "parts").mkdir()
    for k, rows in enumerate(np.array_split(np.arange(1000), 4)):
        frame.iloc[rows].to_csv(tmp_path / "parts" / f"p{k}.csv", index=False)
    return tmp_path / "all.csv", str(tmp_path / "parts" / "*.csv")


def test_dask_engine_on_a_scheduler_writes_the_in_memory_model(csvs, tmp_path, dask_client, capsys, mentions):
    whole, pattern = csvs
    assert main(["fit", "--data", str(whole), *DATA_OPTS, *FIT_OPTS, "--out", str(tmp_path / "mem.json")]) == 0
    address = dask_client.scheduler.address  # the test cluster, reached as a remote scheduler would be
    assert main(["fit", "--data", pattern, "--engine", "dask", "--scheduler", address, *DATA_OPTS, *FIT_OPTS,
                 "--out", str(tmp_path / "dask.json")]) == 0
    out = capsys.readouterr().out
    assert "4 file(s); n not released" in out and not mentions(out, 1000) and "dask: <Client" in out
    assert json.loads((tmp_path / "dask.json").read_text()) == json.loads((tmp_path / "mem.json").read_text())


def test_dask_engine_on_a_local_cluster_with_a_budget(csvs, tmp_path, capsys):
    _, pattern = csvs
    budget = tmp_path / "budget.json"
    args = ["fit", "--data", pattern, "--engine", "dask", *DATA_OPTS, *FIT_OPTS, "--budget-file", str(budget)]
    assert main([*args, "--total-epsilon", "3", "--out", str(tmp_path / "a.json")]) == 0
    assert files_fingerprint(pattern) in budget.read_text()
    assert main([*args, "--out", str(tmp_path / "b.json")]) == 2  # 2 + 2 > 3: refused before the data are read
    assert "budget" in capsys.readouterr().err


def test_usage_errors(csvs, tmp_path, capsys):
    whole, pattern = csvs
    assert main(["fit", "--data", str(whole), "--scheduler", "tcp://127.0.0.1:1", *DATA_OPTS, *FIT_OPTS,
                 "--out", str(tmp_path / "m.json")]) == 2
    assert "--scheduler needs --engine dask" in capsys.readouterr().err
    assert main(["fit", "--data", str(whole), "--dask-timeout", "5", *DATA_OPTS, *FIT_OPTS,
                 "--out", str(tmp_path / "m.json")]) == 2
    assert "--dask-timeout needs --engine dask" in capsys.readouterr().err
    assert main(["fit", "--data", pattern, "--engine", "dask", "--dask-timeout", "0", *DATA_OPTS, *FIT_OPTS,
                 "--out", str(tmp_path / "m.json")]) == 2
    assert "--dask-timeout must be in (0, inf], got --dask-timeout=0.0" in capsys.readouterr().err
    assert main(["fit", "--data", str(tmp_path / "none*.csv"), "--engine", "dask", *DATA_OPTS, *FIT_OPTS,
                 "--out", str(tmp_path / "m.json")]) == 2
    assert "no data file matches" in capsys.readouterr().err


def test_a_scheduler_without_workers_fails_within_dask_timeout(csvs, tmp_path, dask_processes, capsys):
    _, pattern = csvs  # dask_processes: a real dask-scheduler process, no worker started
    start = time.monotonic()
    assert main(["fit", "--data", pattern, "--engine", "dask", "--scheduler", dask_processes.address,
                 "--dask-timeout", "2", *DATA_OPTS, *FIT_OPTS, "--out", str(tmp_path / "m.json")]) == 2
    assert time.monotonic() - start < 20
    err = capsys.readouterr().err
    assert f"dask: no Dask worker is connected to the scheduler {dask_processes.address}: the pass reading the CSV " \
           "files waits for workers (gives up after 2 s)" in err
    assert f"pydpowl fit: error: no Dask worker has been connected to the scheduler {dask_processes.address} for " \
           "2 s during the pass reading the CSV files" in err
    assert not (tmp_path / "m.json").exists()


def test_dask_client_closes_its_local_cluster():
    import dask

    from pydpowl.engine.dask_cluster import logger

    handlers = list(logger.handlers)
    with dask_client(worker_timeout=7) as client:
        assert client.status == "running" and len(client.scheduler_info()["workers"]) >= 1
        assert dask.config.get("pydpowl.worker-timeout") == 7 and len(logger.handlers) == len(handlers) + 1
    assert client.status == "closed"
    assert dask.config.get("pydpowl.worker-timeout", None) is None and logger.handlers == handlers
