"""The whole private analysis with three or more arms (pydpowl.analysis.run_analysis, ``pydpowl analyze``)."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from pydpowl.analysis import run_analysis
from pydpowl.cli import main
from pydpowl.model_io import ReleasedRegime, load_model, model_from_json
from pydpowl.evaluation.private import PrivateArmValue

FEATS = ["x1", "x2", "x3"]
BOUNDS = {f: (-1.0, 1.0) for f in FEATS}


def _trial(n=1200, seed=0, probs=(1 / 3, 1 / 3, 1 / 3)):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.uniform(-1, 1, (n, 3)), columns=FEATS)
    A = rng.choice(["high", "low", "mid"], n, p=list(probs))
    best = np.where(X.x1 > 0.3, "high", np.where(X.x2 > 0, "mid", "low"))
    B = 2.0 + 2.0 * (A == best) + rng.uniform(-1, 1, n)
    return X, A, B


@pytest.fixture(scope="module")
def result():
    X, A, B = _trial()
    return run_analysis(X, A, B, feature_bounds=BOUNDS, benefit_bounds=(0, 6), weights_upper_bound=30.0,
                        total_epsilon=3.0, propensity={"high": 1 / 3, "low": 1 / 3, "mid": 1 / 3},
                        random_state=4)


def test_three_arm_analysis_releases_the_rule_and_the_values_of_every_arm(result):
    assert isinstance(result.value, PrivateArmValue) and result.treatment_labels == ("high", "low", "mid")
    # the rule is released as two arms are by default (issue 25): objective perturbation with residual weights
    assert (result.model.mechanism_, result.model.residual_) == ("objective", True)
    assert result.model.epsilon_baseline_ + result.model.epsilon_rule_ == pytest.approx(result.epsilons["rule"])
    v = result.value
    assert set(v.arm_values) == set(v.versus) == {"high", "low", "mid"}
    assert v.value.ci_low < v.value.estimate < v.value.ci_high
    # the rule is learnt: its value beats every single arm's (true values about 3.3 vs 2.3 to 2.7)
    assert v.difference.estimate > 0.2 and v.value.estimate > max(iv.estimate for iv in v.arm_values.values())
    # the rule evaluated is the one written to model.json (version 3)
    content = result.model_content
    assert content["format_version"] == 3 and content["stages"][0]["arms"] == ["high", "low", "mid"]
    assert isinstance(model_from_json(json.dumps(content)), ReleasedRegime)


def test_the_ledger_adds_up_to_the_total(result):
    led = result.ledger()
    names = [r["name"] for r in led["releases"]]
    assert len(names) == 3 and "3 arms" in names[0] and led["spent"] == 3.0
    assert math.fsum(r["epsilon"] for r in led["releases"]) == pytest.approx(3.0, abs=1e-15)
    assert "18 Laplace-noised sums" not in json.dumps(led) and "9 Laplace-noised sums" in json.dumps(led)
    assert "rows" not in led["releases"][0]  # n only with public_n


def test_summary_and_dict_are_json_and_name_every_arm(result):
    summary = result.value_summary()
    assert set(summary["value_of_arm"]) == set(summary["versus_arm"]) == {"high", "low", "mid"}
    out = json.loads(json.dumps(result.to_dict()))
    assert out["propensity"] == {"known": {"high": 1 / 3, "low": 1 / 3, "mid": 1 / 3}}
    assert np.array(out["value_release"]["first_moments"]).shape == (3, 3)
    assert list(out["coefficients"])[:2] == ["f1:(intercept)", "f1:x1"]


@pytest.mark.parametrize("kwargs, message", [
    (dict(propensity=None, propensity_model="logistic"), "propensity model .* two arms"),
    (dict(gammas=[20, 200]), "private selection of gamma .* two-arm rules"),
    (dict(propensity=0.5), "1/K"),
    (dict(propensity={"high": 0.5, "low": 0.5}), r"missing \['mid'\]"),
])
def test_what_three_arms_cannot_do_is_refused_by_name(kwargs, message):
    X, A, B = _trial(200)
    args = dict(feature_bounds=BOUNDS, benefit_bounds=(0, 6), weights_upper_bound=30.0, total_epsilon=1.0,
                propensity=1 / 3, random_state=0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        run_analysis(X, A, B, **args)


def test_analyze_cli_with_three_arms_writes_what_predict_reads(tmp_path, capsys, mentions):
    X, A, B = _trial(900, seed=2)
    frame = X.assign(arm=A, B=B)
    data = tmp_path / "trial.csv"
    frame.to_csv(data, index=False)
    out = tmp_path / "res"
    assert main(["analyze", "--data", str(data), "--treatment", "arm", "--benefit", "B", "--features", "x1,x2,x3",
                 "--bounds", "-1:1,-1:1,-1:1", "--benefit-bounds", "0:6", "--weights-upper-bound", "30",
                 "--propensity", "high=0.3333333333,low=0.3333333333,mid=0.3333333334", "--total-epsilon", "2",
                 "--seed", "3", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "value of everyone on high" in text and "gain over the best single arm" in text
    assert not mentions(text, 900) and not mentions(text, 450)  # n only with --public-n
    for name in ("model.json", "ledger.json", "value.json", "report.md", "value.png", "coefficients.png"):
        assert (out / name).is_file(), name
    assert "NON-PRIVATE" not in (out / "report.md").read_text()
    report = (out / "report.md").read_text()
    assert "Everyone on mid" in report and "largest score" in report
    assert isinstance(load_model(out / "model.json"), ReleasedRegime)
    assert main(["predict", "--model", str(out / "model.json"), "--data", str(data), "--out",
                 str(tmp_path / "p.csv")]) == 0
    assert set(pd.read_csv(tmp_path / "p.csv").recommended) <= {"high", "low", "mid"}


@pytest.mark.parametrize("command, neighbour", [("pydpowl analyze (3 arms)", "benefit"),
                                                ("pydpowl analyze (3 arms)", "feature"),
                                                ("pydpowl analyze --mechanism output (3 arms)", "arm")])
def test_a_three_arm_neighbour_changes_nothing_the_analysis_shows(command, neighbour, tmp_path):
    """The default release (objective perturbation, residual weights) gives a benefit at its lower bound a
    residual weight, so the arm pair (weight 0 under OWL weights) is audited on the paper's mechanism."""
    from validation.audit.disclosure import first_difference, seen_pair

    differs, detail = first_difference(*seen_pair(command, neighbour, tmp_path))
    assert not differs, detail


def test_a_lowered_weight_bound_is_kept_and_said_with_k_arms(result):
    # W = 30 given; every weight is at most (U - L) / (smallest design probability) = 6 / (1/3) = 18 (both public)
    assert result.weights_upper_bound_given == 30.0 and result.weights_upper_bound_used == pytest.approx(18.0)
    assert result.weight_bound_note == ("weights_upper_bound: 30 given; 18 used = (U - L) / smallest public "
                                        "propensity (the weights cannot exceed it)")
    assert result.to_dict()["weights_upper_bound"]["given"] == 30.0
