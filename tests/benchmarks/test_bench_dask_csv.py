"""Tests of benchmarks/bench_dask_csv.py: its CSV writer and report (fast), and one whole run (slow)."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_dask_csv  # noqa: E402


def test_the_files_hold_the_design_in_row_order(tmp_path):
    bench_dask_csv.write_csv_files(tmp_path, 1003, 3)
    files = sorted(tmp_path.glob("*.csv"))
    frames = [pd.read_csv(f) for f in files]
    assert [len(f) for f in frames] == [334, 334, 335]
    assert list(frames[0].columns) == [*bench_dask_csv.FEATURES, "A", "B"]
    both = pd.concat(frames)
    assert set(both["A"]) == {-1, 1} and both["B"].min() >= 0
    assert both[bench_dask_csv.FEATURES].to_numpy().min() >= 0 and both[bench_dask_csv.FEATURES].to_numpy().max() <= 1


def test_report_ratio_and_agreement():
    release = {"coef": [0.1, -0.2, 0.3, 0.0], "intercept": 0.5}
    results = {"cli": [{"seconds": 30.0, **release}, {"seconds": 34.0, **release}],
               "dd": [{"seconds": 20.0, **release}],
               "memory": [{"seconds": 12.0, "coef": [0.1, -0.2, 0.3, 1e-17], "intercept": 0.5}],
               "dd-lazy": [{"error": "RuntimeError: boom"}]}
    lines = bench_dask_csv.summarise(10**6, 40, results)
    assert "| cli | 32.0 | 30.0, 34.0 |" in lines
    assert "cli / dd (dask.dataframe.read_csv + persist + fit) = 1.60 (within the target 2)" in lines
    assert "release of cli equal to the in-memory release bit for bit: False" in lines  # 1e-17 differs
    assert any(line.startswith("| dd-lazy | nan |") and "failed: RuntimeError: boom" in line for line in lines)
    assert np.isnan(float(next(line for line in lines if line.startswith("| dd-lazy")).split("|")[2]))


@pytest.mark.slow
def test_whole_run(tmp_path):
    proc = subprocess.run([sys.executable, "benchmarks/bench_dask_csv.py", "--n", "20000", "--files", "4",
                           "--kinds", "cli,memory", "--workdir", str(tmp_path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    assert "release of cli equal to the in-memory release bit for bit: True" in proc.stdout
    assert not any(tmp_path.iterdir())  # the files were removed
