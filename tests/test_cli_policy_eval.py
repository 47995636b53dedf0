"""Tests of pydpowl.cli.policy_eval (the ``pydpowl policy-eval`` command)."""

import pandas as pd
import pytest

from pydpowl.cli import build_parser, main

FAST = ["--m", "10,30", "--reps", "2", "--states", "6", "--lambda-grid", "0.1,10", "--lambda-m", "30"]


def test_command_is_registered():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert "policy-eval" in sub.choices


def test_help_has_examples(capsys):
    with pytest.raises(SystemExit) as info:
        main(["policy-eval", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "examples:" in out and "pydpowl policy-eval --quick --out results/" in out
    for opt in ("--m", "--reps", "--epsilon", "--delta", "--states", "--features", "--lambda-c",
                "--lambda-p", "--seed", "--out", "--quick"):
        assert opt in out, f"--help does not mention {opt}"


def test_run_writes_csv_png_and_summary(tmp_path, capsys):
    out_dir = tmp_path / "res"
    assert main(["policy-eval", *FAST, "--seed", "3", "--out", str(out_dir)]) == 0
    table = pd.read_csv(out_dir / "policy_eval.csv")
    assert {"panel", "method", "m", "rep", "rmse", "mse", "sigma"} <= set(table.columns)
    assert sorted(table.loc[table["panel"] == "m", "m"].unique()) == [10, 30]
    assert table["rep"].max() == 1
    assert (out_dir / "policy_eval.png").read_bytes()[:4] == b"\x89PNG"
    captured = capsys.readouterr()
    assert "Mean rho-weighted RMSE over 2 repetitions" in captured.out and "DP-LSL" in captured.out
    assert "policy-eval [" in captured.err, "the progress bar goes to stderr"


def test_seed_makes_runs_reproducible(tmp_path):
    for name in ("a", "b"):
        assert main(["policy-eval", *FAST, "--seed", "5", "--out", str(tmp_path / name)]) == 0
    a = pd.read_csv(tmp_path / "a" / "policy_eval.csv")
    b = pd.read_csv(tmp_path / "b" / "policy_eval.csv")
    pd.testing.assert_frame_equal(a, b)


def test_quick_aggregated_and_return_bound(tmp_path):
    args = ["policy-eval", "--quick", "--m", "10", "--reps", "1", "--states", "8",
            "--features", "aggregated", "--return-bound", "1", "--epsilon", "1", "--out", str(tmp_path)]
    assert main(args) == 0
    table = pd.read_csv(tmp_path / "policy_eval.csv")
    assert sorted(table.loc[table["panel"] == "lambda", "lambda_c"].unique()) == [0.01, 1.0, 100.0, 1e4]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--epsilon", "0"], "pydpowl policy-eval: error: epsilon must be in (0, inf], got epsilon=0.0."),
        (["--delta", "1.5"], "pydpowl policy-eval: error: delta must be in (0, 1), got delta=1.5."),
        (["--states", "7", "--features", "aggregated"], "pydpowl policy-eval: error: n_states must be a multiple"),
    ],
)
def test_bad_values_give_one_line_errors(args, message, tmp_path, capsys):
    assert main(["policy-eval", *FAST, *args, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(message), err
    assert not (tmp_path / "policy_eval.csv").exists()


@pytest.mark.parametrize("args", [["--m", "10,x"], ["--m", "0"], ["--lambda-grid", "-1"], ["--features", "rbf"]])
def test_bad_syntax_is_an_argparse_error(args, capsys):
    with pytest.raises(SystemExit) as info:
        main(["policy-eval", *args])
    assert info.value.code == 2
    assert "error:" in capsys.readouterr().err
