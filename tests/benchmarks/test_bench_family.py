"""benchmarks/bench_family.py: options (the timings themselves are a script, never a test)."""


def test_bench_family_refuses_unknown_configs(capsys):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import bench_family

    assert bench_family.main(["--configs", "svm_quantum"]) == 2
    assert "unknown configs" in capsys.readouterr().err
