"""The whole private analysis of a two-stage regime (pydpowl.analysis_regime.run_regime_analysis)."""

import json
import math

import numpy as np
import pytest

from pydpowl.analysis_regime import run_regime_analysis
from pydpowl.model_io import ReleasedRegime, model_from_json


def _smart(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 2))
    A1 = rng.choice([-1, 1], n)
    A2 = rng.choice(["a", "b"], n)
    R1 = np.zeros(n)
    R2 = 1.0 + (A1 == np.where(X[:, 0] > 0, 1, -1)) + (A2 == np.where(X[:, 1] > 0, "a", "b")) \
        + rng.uniform(-0.5, 0.5, n)
    H = [X, np.column_stack([X, A1])]
    return H, [A1, A2], [R1, R2]


@pytest.fixture(scope="module")
def result():
    H, A, R = _smart()
    return run_regime_analysis(H, A, R, feature_bounds=[([-1, -1], [1, 1]), ([-1, -1, -1], [1, 1, 1])],
                               reward_bounds=[(0.0, 0.1), (0.0, 3.5)], propensity=[0.5, 0.5], total_epsilon=6.0,
                               gamma=40.0, feature_names=[["x1", "x2"], ["x1", "x2", "a1"]], random_state=3)


def test_the_regime_beats_the_fixed_sequences_and_every_value_has_an_interval(result):
    v = result.value
    assert set(v.arm_values) == {"-1 | a", "-1 | b", "1 | a", "1 | b"}
    assert v.value.ci_low < v.value.estimate < v.value.ci_high
    # true values: regime up to 3.0, each fixed sequence 2.0
    assert v.value.estimate > max(iv.estimate for iv in v.arm_values.values())
    summary = json.loads(json.dumps(result.value_summary()))
    assert set(summary["versus_sequence"]) == set(v.arm_values)


def test_the_ledger_has_one_release_per_stage_and_adds_up(result):
    led = result.ledger()
    stages = [r for r in led["releases"] if "stage" in r]
    assert [r["stage"] for r in stages] == [1, 2] and stages[0]["epsilon"] == stages[1]["epsilon"] == 1.8
    assert math.fsum(r["epsilon"] for r in led["releases"]) == pytest.approx(6.0, abs=1e-12)
    assert led["spent"] == 6.0 and all(r["delta"] > 0 for r in led["releases"])
    assert "rows" not in stages[0]


def test_the_model_file_holds_the_regime(result):
    content = result.model_content
    assert content["kind"] == "multistage" and content["epsilon_total"] == 6.0
    regime = model_from_json(json.dumps(content))
    assert isinstance(regime, ReleasedRegime) and regime.n_stages == 2
    assert regime.stages[1].feature_names == ("x1", "x2", "a1")


def test_mismatched_stages_are_named():
    H, A, R = _smart(200)
    with pytest.raises(ValueError, match=r"R must be a list with one entry per stage \(T=2"):
        run_regime_analysis(H, A, R[:1], feature_bounds=[None, None], reward_bounds=[(0, 1), (0, 1)],
                            propensity=[0.5, 0.5], total_epsilon=1.0, gamma=10.0)


def test_stage_split_shares_the_rule_budget_and_the_ledger_records_it():
    """stage_split=(1, 2): of the rule's share 3.6 of E = 6, stage 1 gets 1.2 and stage 2 2.4 (exact), and the
    ledger says how it was split and which mechanism each stage used."""
    H, A, R = _smart(600)
    res = run_regime_analysis(H, A, R, feature_bounds=[([-1, -1], [1, 1]), ([-1, -1, -1], [1, 1, 1])],
                              reward_bounds=[(0.0, 0.1), (0.0, 3.5)], propensity=[0.5, 0.5], total_epsilon=6.0,
                              gamma=40.0, stage_split=[1, 2], random_state=1)
    led = res.ledger()
    stages = [r for r in led["releases"] if "stage" in r]
    assert [r["epsilon"] for r in stages] == [1.2, 2.4]
    assert led["spent"] == 6.0
    assert led["stage_split"] == [1, 2]
    assert "objective perturbation" in stages[0]["name"]  # the engine's default for a two-arm stage
    with pytest.raises(ValueError, match=r"stage_split\[0\] must be in \(0, inf\), got -1"):
        run_regime_analysis(H, A, R, feature_bounds=[([-1, -1], [1, 1]), ([-1, -1, -1], [1, 1, 1])],
                            reward_bounds=[(0.0, 0.1), (0.0, 3.5)], propensity=[0.5, 0.5], total_epsilon=6.0,
                            gamma=40.0, stage_split=[-1, 2])


def test_reward_bounds_and_public_n_are_checked_per_stage():
    """The reward bounds are DPMultiStageOWL's per-stage check (named with the stage); public_n must be a bool."""
    H, A, R = _smart(200)
    common = dict(feature_bounds=[([-1, -1], [1, 1]), ([-1, -1, -1], [1, 1, 1])], propensity=[0.5, 0.5],
                  total_epsilon=6.0, gamma=40.0)
    with pytest.raises(ValueError, match=r"^reward_bounds\[1\] must be finite with lower < upper \(public bounds on "
                                         r"stage 2's reward\), got reward_bounds\[1\]=\(3\.5, 0\.0\)\.$"):
        run_regime_analysis(H, A, R, reward_bounds=[(0.0, 0.1), (3.5, 0.0)], **common)
    with pytest.raises(TypeError, match=r"^public_n must be"):
        run_regime_analysis(H, A, R, reward_bounds=[(0.0, 0.1), (0.0, 3.5)], public_n="yes", **common)


def test_to_dict_is_plain_and_holds_the_sizes_only_when_public(result):
    d = json.loads(json.dumps(result.to_dict()))
    assert d["model"]["kind"] == "multistage" and set(d["value"]["value_of_sequence"]) == set(result.value.arms)
    assert [s["stage"] for s in d["stages"]] == [1, 2] and "n" not in d and "n_learning" not in d
