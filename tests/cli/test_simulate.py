"""Tests of ``pydpowl simulate`` (pydpowl.cli.simulate)."""

import math

import pandas as pd
import pytest

from pydpowl.cli import build_parser, main


def test_registered_with_help_examples(capsys):
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert {"simulate", "tune", "fit", "predict", "casestudy"} <= set(sub.choices)
    with pytest.raises(SystemExit) as info:
        main(["simulate", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "examples:" in out
    for opt in ("--n", "--eps", "--reps", "--test-size", "--seed", "--out", "--gamma-table"):
        assert opt in out


def test_small_run_writes_results_and_figure(tmp_path, capsys):
    out = tmp_path / "sim"
    assert main(["simulate", "--n", "200,500", "--eps", "1,20", "--reps", "10", "--test-size", "500",
                 "--out", str(out)]) == 0
    res = pd.read_csv(out / "results.csv")
    assert list(res.columns[:8]) == ["n", "epsilon", "accuracy_mean", "accuracy_lo", "accuracy_hi", "value_mean",
                                     "value_lo", "value_hi"]
    assert sorted(res.epsilon.unique()) == [1.0, 20.0, math.inf]
    assert (out / "fig1.png").read_bytes()[:4] == b"\x89PNG"
    captured = capsys.readouterr()
    assert "authors' tuned table" in captured.out and "simulate [" in captured.err


def test_gamma_table_file_is_used(tmp_path, capsys):
    table = tmp_path / "g.csv"
    pd.DataFrame({"n": [200, 200], "epsilon": ["1", "inf"], "gamma": [7.0, 3.0]}).to_csv(table, index=False)
    out = tmp_path / "sim"
    assert main(["simulate", "--n", "200", "--eps", "1", "--reps", "3", "--test-size", "100", "--no-progress",
                 "--gamma-table", str(table), "--out", str(out)]) == 0
    res = pd.read_csv(out / "results.csv")
    assert res.set_index("epsilon").gamma.to_dict() == {1.0: 7.0, math.inf: 3.0}


@pytest.mark.parametrize("args, message", [
    (["--reps", "1"], "reps must be"),
    (["--gamma-table", "missing.csv"], "gamma table not found"),
])
def test_errors_are_one_line(tmp_path, capsys, args, message):
    status = main(["simulate", "--n", "200", "--eps", "1", "--test-size", "50", "--no-progress",
                   "--out", str(tmp_path), *args])
    err = capsys.readouterr().err.strip()
    assert status == 2 and message in err and len(err.splitlines()) == 1, err
