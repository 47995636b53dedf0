"""Tests of pydpowl.model_io for K-arm rules and multi-stage regimes (format version 3)."""

import hashlib
import json

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

from pydpowl import DPOWL
from pydpowl.engine.multicategory import simplex_vertices
from pydpowl.estimators.multistage import DPMultiStageOWL
from pydpowl.model_io import (REGIME_FORMAT_VERSION, ModelFileError, ReleasedModel, ReleasedRegime, export_model,
                              load_model, model_from_json)

BOUNDS = ([-1.0] * 3, [1.0] * 3)
PRIVATE_WORDS = ("nonprivate", "noise", "n_samples", "clipped", "n_followed")


def _three_arm(n=600, seed=0, labels=("drug A", "drug B", "placebo")):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.uniform(-1, 1, (n, 3)), columns=["age", "score", "dose"])
    codes = rng.integers(0, 3, n)
    A = np.array(labels, dtype=object)[codes]
    best = np.where(X["age"] > 0.3, 0, np.where(X["score"] > 0, 1, 2))
    B = 1.0 + 2.0 * (codes == best) + rng.uniform(0, 1, n)
    return X, A, B


@pytest.fixture(scope="module")
def three():
    X, A, B = _three_arm()
    model = DPOWL(epsilon=5.0, gamma=20.0, weights_upper_bound=15.0, feature_bounds=BOUNDS,
                  random_state=3).fit(X, A, B, 1 / 3)
    return model, X


@pytest.fixture(scope="module")
def regime():
    rng = np.random.default_rng(7)
    n = 500
    H1 = rng.uniform(-1, 1, (n, 2))
    A1 = rng.choice([-1, 1], n)
    A2 = rng.choice(["a", "b", "c"], n)
    H2 = np.column_stack([H1, A1])
    R1 = rng.uniform(0, 1, n) + (A1 == np.sign(H1[:, 0]))
    R2 = rng.uniform(0, 1, n) + (A2 == np.where(H2[:, 1] > 0, "a", "b"))
    model = DPMultiStageOWL(epsilon=[2.0, 2.0], gamma=20.0,
                            feature_bounds=[([-1, -1], [1, 1]), ([-1, -1, -1], [1, 1, 1])],
                            reward_bounds=[(0, 2), (0, 2)], propensity_floor=[0.5, 1 / 3],
                            random_state=4).fit([H1, H2], [A1, A2], [R1, R2], [0.5, 1 / 3])
    return model, [H1, H2]


def _rehash(content):
    body = {k: v for k, v in content.items() if k != "checksum"}
    canon = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    content["checksum"] = {"sha256": hashlib.sha256(canon.encode()).hexdigest()}
    return json.dumps(content)


def test_three_arm_rule_round_trips_and_predicts_like_the_model(three, tmp_path):
    model, X = three
    path = export_model(model, tmp_path / "m.json", epsilon_total=6.0)
    content = json.loads(path.read_text())
    assert content["format_version"] == REGIME_FORMAT_VERSION == 3 and content["kind"] == "multiarm"
    stage = content["stages"][0]
    assert stage["arms"] == ["drug A", "drug B", "placebo"]
    assert np.array(stage["coef"]).shape == (2, 3) and len(stage["intercept"]) == 2
    np.testing.assert_array_equal(np.array(stage["vertices"]), simplex_vertices(3))
    loaded = load_model(path)
    assert isinstance(loaded, ReleasedRegime) and loaded.n_stages == 1
    assert (loaded.epsilon, loaded.epsilon_total) == (5.0, 6.0)
    assert loaded.feature_names == ("age", "score", "dose")
    assert_array_equal(loaded.predict(X), model.predict(X))
    np.testing.assert_allclose(loaded.scores(X), model.decision_function(X), rtol=1e-12, atol=1e-12)
    # columns by name, in any order
    assert_array_equal(loaded.predict(X[["dose", "age", "score"]]), model.predict(X))
    text = json.dumps(content)
    for word in PRIVATE_WORDS:
        assert word not in text, f"model file mentions {word!r}"


def test_numeric_arm_labels_stay_numbers(tmp_path):
    X, A, B = _three_arm(labels=(0, 1, 2))
    model = DPOWL(epsilon=5.0, gamma=20.0, weights_upper_bound=15.0, feature_bounds=BOUNDS,
                  random_state=3).fit(X, A.astype(int), B, 1 / 3)
    loaded = load_model(export_model(model, tmp_path / "m.json"))
    assert loaded.stages[0].arms == (0, 1, 2)
    assert_array_equal(loaded.predict(X), model.predict(X))


def test_two_arm_files_are_unchanged(tmp_path):
    X, A, B = _three_arm()
    keep = A != "placebo"
    model = DPOWL(epsilon=5.0, gamma=20.0, weights_upper_bound=15.0, feature_bounds=BOUNDS,
                  random_state=3).fit(X[keep], A[keep], B[keep], 0.5)
    content = json.loads(export_model(model, tmp_path / "m.json").read_text())
    assert content["format_version"] == 2 and "stages" not in content
    assert isinstance(load_model(tmp_path / "m.json"), ReleasedModel)


def test_multistage_regime_round_trips_stage_by_stage(regime, tmp_path):
    model, H = regime
    path = export_model(model, tmp_path / "r.json", feature_names=[["h1", "h2"], ["h1", "h2", "a1"]])
    content = json.loads(path.read_text())
    assert content["kind"] == "multistage" and [s["stage"] for s in content["stages"]] == [1, 2]
    assert [s["epsilon"] for s in content["stages"]] == [2.0, 2.0] and content["epsilon"] == 4.0
    loaded = load_model(path)
    assert loaded.n_stages == 2
    assert loaded.stages[0].arms == (-1, 1) and loaded.stages[1].arms == ("a", "b", "c")
    for k in range(2):
        assert_array_equal(loaded.stages[k].predict(H[k]), model.predict(H, stage=k + 1))
    frame = pd.DataFrame({"a1": H[1][:, 2], "h2": H[0][:, 1], "h1": H[0][:, 0]})
    got = loaded.predict(frame)
    assert len(got) == 2
    for k in range(2):
        assert_array_equal(got[k], model.predict(H, stage=k + 1))
    for word in PRIVATE_WORDS:
        assert word not in json.dumps(content)


@pytest.mark.parametrize("edit, message", [
    (lambda c: c["stages"][0].update(arms=["a", "a", "b"]), "arms must be distinct"),
    (lambda c: c["stages"][0].update(arms=["a", 1, "b"]), "arms must be all strings or all numbers"),
    (lambda c: c["stages"][0].update(coef=c["stages"][0]["coef"][:1]), r"coef must have 2 rows"),
    (lambda c: c["stages"][0].update(intercept=[0.0]), r"intercept must have 2 entries"),
    (lambda c: c["stages"][0]["vertices"][0].__setitem__(0, 0.5), "vertices do not match"),
    (lambda c: c.update(stages=[]), "stages must be a non-empty list"),
    (lambda c: c.update(kind="forest"), "kind must be"),
    (lambda c: c.update(epsilon=1.0), r"epsilon \(1\) must equal the sum of the stages' epsilons"),
    (lambda c: c["stages"][0].update(stage=2), "stage numbers must be 1, 2, ..."),
    (lambda c: c["stages"][0].update(extra=1), r"unknown field\(s\) \['extra'\]"),
])
def test_invalid_regime_files_are_rejected_with_one_line(three, tmp_path, edit, message):
    content = json.loads(export_model(three[0], tmp_path / "m.json").read_text())
    edit(content)
    with pytest.raises(ModelFileError, match=message):
        model_from_json(_rehash(content))


def test_tampered_regime_is_rejected_and_signature_checked(three, tmp_path):
    key = b"k" * 32
    path = export_model(three[0], tmp_path / "m.json", key=key)
    assert load_model(path, key=key).signature_verified
    content = json.loads(path.read_text())
    content["stages"][0]["coef"][0][0] += 1.0
    with pytest.raises(ModelFileError, match="checksum mismatch"):
        model_from_json(json.dumps(content))
    with pytest.raises(ModelFileError, match="signature mismatch"):
        model_from_json(_rehash(content), key=key)


def test_non_private_regime_is_not_exported(tmp_path):
    X, A, B = _three_arm()
    model = DPOWL(epsilon=np.inf, gamma=20.0, weights_upper_bound=15.0, feature_bounds=BOUNDS).fit(X, A, B, 1 / 3)
    with pytest.raises(ValueError, match="only private models can be exported"):
        export_model(model, tmp_path / "m.json")
