"""``pydpowl analyze --stages T``: the whole private analysis of a multi-stage regime from the command line."""

import json
import re

import numpy as np
import pandas as pd
import pytest

from pydpowl.cli import main
from pydpowl.model_io import ReleasedRegime, load_model

N = 2000


def _smart(n=N, seed=0):
    """Two stages: x1 decides stage 1 (A1 in -1/1), x2 stage 2 (A2 in a/b); the reward comes at the end."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.uniform(-1, 1, (n, 2)), columns=["x1", "x2"])
    frame["A1"] = rng.choice([-1, 1], n)
    frame["A2"] = rng.choice(["a", "b"], n)
    frame["R1"] = 0.0
    frame["R2"] = (1.0 + (frame.A1 == np.where(frame.x1 > 0, 1, -1)) + (frame.A2 == np.where(frame.x2 > 0, "a", "b"))
                   + rng.uniform(-0.5, 0.5, n))
    return frame


@pytest.fixture(scope="module")
def smart_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("smart") / "smart.csv"
    _smart().to_csv(path, index=False)
    return path


def _opts(path, **change):
    opts = {"--data": str(path), "--stages": "2", "--treatment": "A1,A2", "--reward": "R1,R2",
            "--reward-bounds": "0:0.1,0:3.5", "--features-stage1": "x1,x2", "--features-stage2": "x1,x2,A1",
            "--bounds": "x1=-1:1,x2=-1:1,A1=-1:1", "--propensity": "0.5", "--total-epsilon": "6", "--gamma": "40",
            "--seed": "3"}
    opts.update(change)
    out = ["analyze"]
    for k, v in opts.items():
        if v is not None:
            out += [f"{k}={v}"]
    return out


def test_a_two_stage_analysis_writes_the_regime_its_values_and_the_ledger(smart_csv, tmp_path, capsys, mentions):
    out = tmp_path / "out"
    assert main([*_opts(smart_csv, **{"--stage-split": "1:2"}), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert not mentions(text, N) and "n not released" in text  # n only with --public-n
    assert "value of the regime" in text and "1 | a" in text
    for name in ("model.json", "ledger.json", "value.json", "report.md", "value.png"):
        assert (out / name).is_file(), name
    led = json.loads((out / "ledger.json").read_text())
    stages = [r for r in led["releases"] if "stage" in r]
    assert [r["epsilon"] for r in stages] == [1.2, 2.4] and led["stage_split"] == [1, 2]  # rule's 3.6 of E = 6
    assert led["spent"] == 6.0
    value = json.loads((out / "value.json").read_text())
    assert set(value["value_of_sequence"]) == {"-1 | a", "-1 | b", "1 | a", "1 | b"}
    assert value["ci_low"] < value["estimate"] < value["ci_high"]
    assert value["estimate"] > max(v["estimate"] for v in value["value_of_sequence"].values())  # 3 vs 2
    report = (out / "report.md").read_text()
    assert "regime" in report and "stage 2" in report and not mentions(report, N)
    regime = load_model(out / "model.json")
    assert isinstance(regime, ReleasedRegime) and regime.n_stages == 2
    assert regime.stages[1].feature_names == ("x1", "x2", "A1") and regime.stages[1].arms == ("a", "b")
    # predict applies it stage by stage, each stage reading its own columns by name
    pred = tmp_path / "pred.csv"
    assert main(["predict", "--model", str(out / "model.json"), "--data", str(smart_csv), "--out", str(pred)]) == 0
    p = pd.read_csv(pred)
    frame = _smart()
    assert np.mean(p.stage1_recommended.to_numpy() == np.where(frame.x1 > 0, 1, -1)) > 0.8
    assert np.mean(p.stage2_recommended.to_numpy() == np.where(frame.x2 > 0, "a", "b")) > 0.8


def test_public_n_prints_the_sizes(smart_csv, tmp_path, capsys):
    assert main([*_opts(smart_csv), "--public-n", "--out", str(tmp_path / "o")]) == 0
    assert f"n = {N} rows" in capsys.readouterr().out
    assert f"{N // 2}" in (tmp_path / "o" / "report.md").read_text()


@pytest.mark.parametrize("change, message", [
    ({"--treatment": "A1"}, r"--treatment must name one column per stage \(--stages 2\), got 1: 'A1'"),
    ({"--reward": "R1,R2,R3"}, r"--reward must name one column per stage \(--stages 2\), got 3"),
    ({"--treatment": "A1,nope"}, r"--treatment: column 'nope' \(stage 2\) is not in smart.csv"),
    ({"--features-stage2": "x1,zz"}, r"--features-stage2: column 'zz' is not in smart.csv"),
    ({"--features-stage2": None}, r"--features-stage2 is needed \(stage 2's history columns; --stages 2\)"),
    ({"--features-stage3": "x1"}, r"--features-stage3 names a stage beyond --stages 2"),
    ({"--treatment": "A1,R1"}, r"--treatment: stage 2's column 'R1' has one level \(0.0\): a stage needs at least "
                               r"two treatments"),
    ({"--propensity": "0.5;a=0.5,b=0.6"}, r"--propensity \(stage 2, arms a, b\).*must sum to 1.*got 1.1"),
    ({"--propensity": "0.5;0.5;0.5"}, r"--propensity must give one specification for every stage or one per stage "
                                      r"\(--stages 2\), separated by ';', got 3"),
    ({"--propensity": "0.3"}, r"--propensity \(stage 1\): a number means balanced randomisation, 1/K = 0.5 for the "
                              r"2 arms"),
    ({"--reward-bounds": "0:1,2:1"}, r"--reward-bounds: stage 2's '2:1' must be LO:HI with LO < HI"),
    ({"--bounds": "-1:1,-1:1,-1:1"}, r"--bounds must name every column \(name=lo:hi\) with --stages"),
    ({"--bounds": "x1=-1:1,x2=-1:1"}, r"--bounds: no bound for column\(s\) \['A1'\]"),
    ({"--stage-split": "1:0"}, r"--stage-split must be T positive numbers separated by ':' \(one per stage, "
                               r"--stages 2\), got '1:0'"),
    ({"--stage-split": "1:2:3"}, r"--stage-split must be T positive numbers"),
    ({"--stages": "1"}, r"--stages must be a whole number >= 2"),
    ({"--weights-upper-bound": "10"}, r"--weights-upper-bound: with --stages each stage's W is computed from "
                                      r"--reward-bounds and the propensities"),
])
def test_bad_input_names_the_option_the_value_and_the_bound(smart_csv, tmp_path, capsys, change, message):
    _refused([*_opts(smart_csv, **change), "--out", str(tmp_path / "o")], message, capsys)
    assert not (tmp_path / "o").exists()


def _refused(argv, message, capsys):
    """One line on stderr, exit status 2 (the command line's errors), matching ``message``."""
    assert main(argv) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and re.search(message, lines[0]), lines


def test_single_stage_options_are_refused_with_stages(smart_csv, tmp_path, capsys):
    _refused([*_opts(smart_csv, **{"--benefit": "R2"}), "--out", str(tmp_path / "o")],
             r"--benefit is the single-stage outcome; with --stages give --reward", capsys)
    _refused(["analyze", "--data", str(smart_csv), "--treatment", "A1", "--benefit", "R2", "--features", "x1",
              "--features-stage1", "x1", "--bounds", "x1=-1:1", "--benefit-bounds", "0:4", "--weights-upper-bound",
              "10", "--propensity", "0.5", "--total-epsilon", "1", "--out", str(tmp_path / "o")],
             r"--features-stage1 describe several stages and need --stages", capsys)


@pytest.mark.parametrize("neighbour", ["benefit", "feature"])
def test_a_neighbour_that_changes_a_count_changes_nothing_the_user_sees(neighbour, tmp_path):
    """D and D' differ in one record clipped to the same value (a reward or a history column): the releases
    are bit-identical with the same seed, so everything printed and written must be too."""
    from validation.audit.disclosure import first_difference, seen_pair

    differs, detail = first_difference(*seen_pair("pydpowl analyze (2 stages)", neighbour, tmp_path))
    assert not differs, detail


def test_diagnostics_print_the_counts_on_stdout_only(tmp_path):
    from validation.audit.disclosure import first_difference, seen_pair

    D, D1 = seen_pair("pydpowl analyze (2 stages)", "benefit", tmp_path, diagnostics=True)
    differs, _ = first_difference(D, D1)
    assert differs == ("stdout",)
    assert "NON-PRIVATE DIAGNOSTICS" in D.stdout and "rewards clipped to the bounds: [0, 0]" in D.stdout
    assert "rewards clipped to the bounds: [0, 1]" in D1.stdout
