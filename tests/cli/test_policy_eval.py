"""Tests of pydpowl.cli.policy_eval (the ``pydpowl policy-eval`` command)."""

import pandas as pd
import pytest

from pydpowl.cli import build_parser, main

FAST = ["--m", "10,30", "--epsilon", "0.5,2", "--reps", "2", "--states", "6", "--lambda-grid", "0.1,10",
        "--lambda-m", "30"]


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
                "--lambda-p", "--seed", "--out", "--quick", "--return-bound", "--reward-bound"):
        assert opt in out, f"--help does not mention {opt}"


def test_run_writes_csv_png_and_summary(tmp_path, capsys):
    out_dir = tmp_path / "res"
    assert main(["policy-eval", *FAST, "--seed", "3", "--out", str(out_dir)]) == 0
    table = pd.read_csv(out_dir / "policy_eval.csv")
    assert {"panel", "method", "m", "epsilon", "rep", "rmse", "mse", "sigma", "noise"} <= set(table.columns)
    assert sorted(table.loc[table["panel"] == "m", "m"].unique()) == [10, 30]
    assert sorted(table["epsilon"].unique()) == [0.5, 2.0, float("inf")]
    assert table["rep"].max() == 1
    # one row per repetition of every (panel, method, m, epsilon, c)
    keys = ["panel", "method", "m", "epsilon", "lambda_c"]
    assert (table.groupby(keys).size() == 2).all()
    assert (out_dir / "policy_eval.png").read_bytes()[:4] == b"\x89PNG"
    captured = capsys.readouterr()
    assert "Mean rho-weighted RMSE at epsilon=2, over 2 repetitions" in captured.out
    assert "F_max=1" in captured.out, "the default public bound is the largest return, 1"
    assert "DP-LSW/LSW" in captured.out and "GS-analytic-LSL" in captured.out
    assert "Mean RMSE against lambda at m=30" in captured.out
    assert "policy-eval [" in captured.err, "the progress bar goes to stderr"


def test_seed_makes_runs_reproducible(tmp_path):
    for name in ("a", "b"):
        assert main(["policy-eval", *FAST, "--seed", "5", "--out", str(tmp_path / name)]) == 0
    a = pd.read_csv(tmp_path / "a" / "policy_eval.csv")
    b = pd.read_csv(tmp_path / "b" / "policy_eval.csv")
    pd.testing.assert_frame_equal(a, b)


def test_quick_aggregated_and_reward_bound(tmp_path, capsys):
    args = ["policy-eval", "--quick", "--m", "10", "--reps", "1", "--states", "8", "--lambda-m", "10",
            "--features", "aggregated", "--reward-bound", "1", "--out", str(tmp_path)]
    assert main(args) == 0
    table = pd.read_csv(tmp_path / "policy_eval.csv")
    assert sorted(table.loc[table["panel"] == "lambda", "lambda_c"].unique()) == [0.01, 1.0, 100.0, 1e4]
    assert sorted(table.loc[table["panel"] == "m", "epsilon"].unique()) == [0.1, 1.0, 10.0, float("inf")]
    assert "R_max=1" in capsys.readouterr().out


def test_return_and_reward_bound_are_exclusive(capsys):
    with pytest.raises(SystemExit) as info:
        main(["policy-eval", "--return-bound", "1", "--reward-bound", "1"])
    assert info.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args, message",
    [
        (["--epsilon", "0.1,0"], "pydpowl policy-eval: error: epsilons entry must be in (0, inf), got "
                                 "epsilons entry=0.0."),
        (["--epsilon", "inf"], "pydpowl policy-eval: error: epsilons entry must be in (0, inf), got "
                               "epsilons entry=inf."),
        (["--delta", "1.5"], "pydpowl policy-eval: error: delta must be in (0, 1), got delta=1.5."),
        (["--states", "7", "--features", "aggregated"], "pydpowl policy-eval: error: n_states must be a multiple"),
    ],
)
def test_bad_values_give_one_line_errors(args, message, tmp_path, capsys):
    assert main(["policy-eval", *FAST, *args, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(message), err
    assert not (tmp_path / "policy_eval.csv").exists()


@pytest.mark.parametrize("args", [["--m", "10,x"], ["--m", "0"], ["--lambda-grid", "-1"], ["--features", "rbf"],
                                  ["--epsilon", "a"]])
def test_bad_syntax_is_an_argparse_error(args, capsys):
    with pytest.raises(SystemExit) as info:
        main(["policy-eval", *args])
    assert info.value.code == 2
    assert "error:" in capsys.readouterr().err
