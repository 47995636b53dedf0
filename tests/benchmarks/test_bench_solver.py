"""Smoke test: the solver benchmark script runs (pydpowl only; not a timing test)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_script_runs_without_r():
    proc = subprocess.run([sys.executable, "benchmarks/bench_solver.py", "--sizes", "1000", "--repeats", "1",
                           "--no-r"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "| 1,000 |" in proc.stdout and "precision goal" in proc.stdout
