"""``pydpowl fit`` and ``pydpowl predict`` with three or more arms, and ``predict`` with a multi-stage regime."""

import json

import numpy as np
import pandas as pd
import pytest

from pydpowl.cli import main
from pydpowl.model_io import ReleasedRegime, export_model, load_model

FEATS = ["x1", "x2", "x3"]
DATA_OPTS = ["--treatment", "arm", "--benefit", "B", "--features", ",".join(FEATS),
             "--bounds", "x1=-1:1,x2=-1:1,x3=-1:1", "--weights-upper-bound", "20"]


@pytest.fixture
def trial(tmp_path):
    rng = np.random.default_rng(5)
    n = 600
    frame = pd.DataFrame(rng.uniform(-1, 1, (n, 3)), columns=FEATS)
    frame["arm"] = rng.choice(["low", "mid", "high"], n)
    best = np.where(frame.x1 > 0.3, "high", np.where(frame.x2 > 0, "mid", "low"))
    frame["B"] = 1.0 + 2.0 * (frame.arm == best) + rng.uniform(0, 1, n)
    frame["id"] = [f"p{i}" for i in range(n)]
    path = tmp_path / "trial.csv"
    frame.to_csv(path, index=False)
    return frame, path


def test_fit_and_predict_three_arms(trial, tmp_path, capsys, mentions):
    frame, path = trial
    model = tmp_path / "model.json"
    assert main(["fit", "--data", str(path), *DATA_OPTS, "--propensity", "high=0.3333333333,low=0.3333333333,"
                 "mid=0.3333333334", "--epsilon", "5", "--gamma", "20", "--seed", "1", "--out", str(model)]) == 0
    text = capsys.readouterr().out
    assert "3 arms" in text and "high, low, mid" in text and not mentions(text, 600)  # n only with --public-n
    loaded = load_model(model)
    assert isinstance(loaded, ReleasedRegime) and loaded.stages[0].arms == ("high", "low", "mid")
    assert loaded.epsilon == 5.0 and loaded.stages[0].gamma == 20.0
    new = tmp_path / "new.csv"
    frame[["id", "x3", "x1", "x2"]].head(40).to_csv(new, index=False)
    out = tmp_path / "a.csv"
    assert main(["predict", "--model", str(model), "--data", str(new), "--id-column", "id", "--out", str(out)]) == 0
    pred = pd.read_csv(out)
    assert list(pred.columns) == ["id", "recommended", "score_high", "score_low", "score_mid"]
    X = frame[FEATS].head(40).to_numpy()
    assert (pred.recommended.to_numpy() == loaded.predict(X)).all()
    # the scores are <V_a, intercept + Theta x>, recomputed here from the file's numbers
    st = json.loads(model.read_text())["stages"][0]
    scores = (X @ np.array(st["coef"]).T + np.array(st["intercept"])) @ np.array(st["vertices"]).T
    np.testing.assert_allclose(pred[["score_high", "score_low", "score_mid"]].to_numpy(), scores, rtol=1e-12)
    assert (pred.recommended.to_numpy() == np.array(["high", "low", "mid"])[scores.argmax(axis=1)]).all()
    said = capsys.readouterr().out
    assert "recommended high" in said and "3 arms" in said


def test_balanced_propensity_is_the_default_and_a_wrong_scalar_is_named(trial, tmp_path, capsys):
    _, path = trial
    base = ["fit", "--data", str(path), *DATA_OPTS, "--epsilon", "5", "--gamma", "20", "--seed", "1"]
    assert main([*base, "--out", str(tmp_path / "m.json")]) == 0  # 1/K for K arms
    capsys.readouterr()
    assert main([*base, "--propensity", "0.5", "--out", str(tmp_path / "m2.json")]) == 2
    assert "1/K" in capsys.readouterr().err
    assert main([*base, "--propensity", "high=0.5,low=0.5", "--out", str(tmp_path / "m3.json")]) == 2
    assert "missing ['mid']" in capsys.readouterr().err
    assert main([*base, "--treated", "high", "--out", str(tmp_path / "m4.json")]) == 2
    assert "treated='high' names the arm coded +1 of two arms" in capsys.readouterr().err


def test_predict_applies_a_regime_stage_by_stage(tmp_path, capsys):
    from pydpowl.estimators.multistage import DPMultiStageOWL

    rng = np.random.default_rng(3)
    n = 400
    H1 = rng.uniform(-1, 1, (n, 2))
    A1 = rng.choice([-1, 1], n)
    A2 = rng.choice([-1, 1], n)
    H2 = np.column_stack([H1, A1])
    R1 = rng.uniform(0, 1, n) + (A1 == np.sign(H1[:, 0]))
    R2 = rng.uniform(0, 1, n) + (A2 == np.sign(H2[:, 2]))
    reg = DPMultiStageOWL(epsilon=4.0, gamma=20.0, feature_bounds=[([-1, -1], [1, 1]), ([-1, -1, -1], [1, 1, 1])],
                          reward_bounds=[(0, 2), (0, 2)], propensity_floor=0.5,
                          random_state=2).fit([H1, H2], [A1, A2], [R1, R2], [0.5, 0.5])
    model = export_model(reg, tmp_path / "regime.json", feature_names=[["age", "bp"], ["age", "bp", "a1"]])
    new = tmp_path / "h.csv"
    pd.DataFrame({"bp": H1[:, 1], "a1": A1, "age": H1[:, 0]}).to_csv(new, index=False)
    out = tmp_path / "r.csv"
    capsys.readouterr()
    assert main(["predict", "--model", str(model), "--data", str(new), "--out", str(out)]) == 0
    pred = pd.read_csv(out)
    assert list(pred.columns) == ["stage1_recommended", "stage2_recommended"]
    assert (pred.stage1_recommended.to_numpy() == reg.predict([H1, H2], stage=1)).all()
    assert (pred.stage2_recommended.to_numpy() == reg.predict([H1, H2], stage=2)).all()
    said = capsys.readouterr().out
    assert "2 stages" in said and "stage 2 reads age, bp, a1" in said
    pd.DataFrame({"bp": H1[:, 1], "age": H1[:, 0]}).to_csv(new, index=False)
    assert main(["predict", "--model", str(model), "--data", str(new), "--out", str(out)]) == 2
    assert "['a1']" in capsys.readouterr().err


@pytest.mark.parametrize("neighbour", ["arm", "feature"])
def test_a_three_arm_neighbour_that_changes_a_count_changes_nothing_the_user_sees(neighbour, tmp_path):
    """With three arms as with two: a neighbour invisible to the mechanism changes an arm or clip count, and with
    the same seed everything printed and written is identical; --diagnostics shows the counts (control)."""
    from validation.audit.disclosure import first_difference, seen_pair

    differs, detail = first_difference(*seen_pair("pydpowl fit (3 arms)", neighbour, tmp_path))
    assert not differs, detail
    D, D1 = seen_pair("pydpowl fit (3 arms)", neighbour, tmp_path, diagnostics=True)
    assert first_difference(D, D1)[0] == ("stdout",) and "NON-PRIVATE DIAGNOSTICS" in D.stdout
    assert "3 arms" in D.stdout
