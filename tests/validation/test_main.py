"""``python -m validation`` end to end (the quick run against the real DPpack)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_k_too_small_is_refused_without_running(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "validation", "--k", "5", "--out", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "--k must be >= 20" in proc.stderr


@pytest.mark.r
def test_quick_run_passes(tmp_path, require_r):
    require_r("DPpack")
    out = tmp_path / "report"
    proc = subprocess.run([sys.executable, "-m", "validation", "--quick", "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"quick validation failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    report = (out / "report.md").read_text()
    assert "**Overall: PASS**" in report and "Bonferroni" in report
    pngs = {p.name for p in out.glob("*.png")}
    assert "coef_differences.png" in pngs
    assert any(p.startswith("noise_norm_qq_") for p in pngs) and any(p.startswith("direction_u1_") for p in pngs)
    assert " 0 failed" in proc.stdout
