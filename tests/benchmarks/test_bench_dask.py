"""Tests of benchmarks/bench_dask.py: its data writer and table (fast), and one whole run (slow)."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_dask  # noqa: E402


def test_data_are_written_chunk_by_chunk(tmp_path):
    chunks = list(bench_dask.synthetic_chunks(130_000, bench_dask.chunk_rows_for(130_000), seed=1))
    assert [c["X"].shape[0] for c in chunks] == [50_000, 50_000, 30_000]
    assert all(c["benefit"].min() >= 0 and set(np.unique(c["treatment"])) == {-1.0, 1.0} for c in chunks)
    assert not np.array_equal(chunks[0]["X"], chunks[1]["X"])  # a seed per chunk
    assert bench_dask.chunk_rows_for(10**6) == 62_500 and bench_dask.chunk_rows_for(10**8) == 10**6
    bench_dask.write_data(tmp_path / "n" / "npy", 70_000, seed=1)
    assert sorted(p.name for p in (tmp_path / "n" / "npy").iterdir()) == ["X", "benefit", "treatment"]
    assert len(list((tmp_path / "n" / "npy" / "X").glob("*.npy"))) == 2


def test_table_and_crossover_lines():
    dask_row = {"persist": "auto", "chunks": 16, "fit": 3.2, "passes": 6, "evaluations": 4, "line_search": 0,
                "client_rss": 0.25 * 2**30, "client_tracemalloc": 5 * 2**20, "workers_rss": 2**30,
                "workers_rss_total": 2 * 2**30}
    rows = [{"n": 10**7, "dask": dask_row, "memory": {"load": 2.5, "fit": 2.3, "rss": 1.4 * 2**30},
             "dppack": {"fit": 58.7}, "csv_fit": None, "rel_diff": 1.5e-16},
            {"n": 10**8, "dask": dask_row, "memory": None, "memory_note": "needs about 15 GB", "dppack": None,
             "csv_fit": None, "rel_diff": None}]
    table = bench_dask.format_table(rows)
    row = "| 10,000,000 | 16 | auto | 3.20 | 6 (4 + 0) | 0.25 | 5.0 | 1.00, 2.00 | 2.50 | 2.30 | 1.40 | 58.70 |"
    assert row in table
    lines = bench_dask.crossover_lines(rows)
    assert "Dask faster" in lines[0] and "needs about 15 GB" in lines[1]


@pytest.mark.slow
def test_whole_run_without_r(tmp_path):
    proc = subprocess.run([sys.executable, "benchmarks/bench_dask.py", "--sizes", "1e5", "--repeats", "1",
                           "--r-max", "0", "--csv-max", "1e5", "--workdir", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "| 100,000 | 2 | auto |" in proc.stdout and "release agreement" in proc.stdout
    assert not any(tmp_path.iterdir())  # the data were removed
