import math

import numpy as np
import pandas as pd
import pytest

from pydpowl.datasets import (
    CYP_WEIGHTS_UPPER_BOUND,
    load_cyp_guides,
    make_cyp_guides_style,
    make_synthetic_owl,
    synthetic_decision,
)


def test_synthetic_design_by_formula():
    d = make_synthetic_owl(20000, random_state=0, shift=None)
    X = d.X.to_numpy()
    assert X.shape == (20000, 4) and X.min() >= 0 and X.max() <= 1
    f = synthetic_decision(X)
    np.testing.assert_allclose(f, 1 + X[:, 0] + X[:, 1] - 1.8 * X[:, 2] - 2.2 * X[:, 3])
    resid = d.benefit - (0.01 + 0.02 * X[:, 3] + 3 * d.treatment * f)
    assert abs(resid.std() - 0.5) < 0.01 and abs(resid.mean()) < 0.01
    assert abs((d.treatment > 0).mean() - 0.5) < 0.01
    np.testing.assert_array_equal(d.optimal, np.where(f > 0, 1.0, -1.0))


def test_synthetic_paper_shift_and_noise_features():
    d = make_synthetic_owl(500, n_noise_features=6, random_state=1)
    raw = make_synthetic_owl(500, n_noise_features=6, random_state=1, shift=None)
    assert d.X.shape == (500, 10)
    np.testing.assert_allclose(d.benefit, raw.benefit + abs(raw.benefit.min()) + 0.001)
    assert d.benefit.min() == pytest.approx(0.001)


def test_cyp_generator_matches_the_spec_targets():
    d = make_cyp_guides_style(random_state=3)
    X = d.X
    assert d.n == 1459 and int((d.treatment > 0).sum()) == 982
    assert abs(X.male.mean() - 0.490) <= 0.04 and abs(X.nonwhite.mean() - 0.426) <= 0.04
    assert abs(X.mdd.mean() - 0.812) <= 0.04
    assert abs(X.age.median() - 37) <= 3 and X.age.min() >= 18 and X.age.max() <= 89
    los = np.exp(math.log(24 * 365) - d.benefit)
    for arm in (1, -1):
        med = np.median(los[d.treatment == arm])
        sd = np.log(los[d.treatment == arm]).std()
        assert 115 <= med <= 160 and 0.60 <= sd <= 0.76
    assert los.min() >= 6 - 1e-9 and los.max() <= 4000 + 1e-6
    assert np.max(d.benefit / d.propensity) <= CYP_WEIGHTS_UPPER_BOUND
    assert 0.6 < (d.optimal > 0).mean() < 0.75


def test_cyp_trial_like_preset_and_errors():
    d = make_cyp_guides_style(500, preset="trial-like", random_state=0)
    assert d.n == 500 and int((d.treatment > 0).sum()) == round(500 * 982 / 1459)
    with pytest.raises(ValueError, match="preset must be one of"):
        make_cyp_guides_style(preset="magic")


def test_loader_codes_a_small_file(tmp_path):
    path = tmp_path / "c.csv"
    pd.DataFrame({
        "ID": [1, 2, 3, 4], "GENDER": ["F", "M", "M", "F"], "AGE": [30, 60, 45, 22],
        "RACE/ETHNICITY": ["W", "B", "W", "L"],
        "Diagnosis": ["MDD, Recurrent", "Depressive Disorder NOS", "Major Depressive Disorder", "Bipolar II"],
        "Assignment": ["G", "S", None, "G"], "LOS": [100, 200, 50, 24],
    }).to_csv(path, index=False, encoding="utf-8-sig")
    d = load_cyp_guides(path)
    assert d.n == 3
    np.testing.assert_array_equal(d.X.male, [0, 1, 0])
    np.testing.assert_array_equal(d.X.nonwhite, [0, 1, 1])
    np.testing.assert_array_equal(d.X.mdd, [1, 0, 0])
    np.testing.assert_array_equal(d.treatment, [1, -1, 1])
    np.testing.assert_allclose(d.benefit, np.log(8760) - np.log([100, 200, 24]))
    np.testing.assert_allclose(d.propensity, [2 / 3, 1 / 3, 2 / 3])
    assert any("the others are dropped" in n for n in d.notes)
    assert d.diagnostics == {"rows read": 4, "not randomised (dropped)": 1, "randomised (kept)": 3,
                             "treatment +1 (G)": 2, "treatment -1 (S)": 1}
    assert "n=" not in d.description and not any(ch.isdigit() for ch in d.notes[0])


def test_loader_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_cyp_guides(tmp_path / "missing.csv")
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"AGE": [1]}).to_csv(bad, index=False)
    with pytest.raises(ValueError, match="missing column"):
        load_cyp_guides(bad)


@pytest.mark.allow_skip("the public trial file is outside the repository; the 'layout' case reads a made-up file "
                        "in its layout (tests/reference/cyp_guides_schema.csv, counts from the rules of its script), "
                        "which every checkout has")
@pytest.mark.parametrize("where, counts", [
    (("tests", "reference", "cyp_guides_schema.csv"), (144, 96, 116, 48, 72, 6)),
    (("..", "shared", "data", "cyp_guides_clinical.csv"), (1459, 982, 1185, 715, 621, 41)),
], ids=["layout", "public"])
def test_real_file_if_present(where, counts):
    from pathlib import Path

    path = Path(__file__).resolve().parents[2].joinpath(*where)
    if not path.exists():
        pytest.skip("the public CYP-GUIDES file is not next to this checkout")
    n, guided, mdd, male, nonwhite, dropped = counts
    d = load_cyp_guides(path)
    assert d.n == n and int((d.treatment > 0).sum()) == guided and d.diagnostics["not randomised (dropped)"] == dropped
    assert int(d.X.mdd.sum()) == mdd and int(d.X.male.sum()) == male and int(d.X.nonwhite.sum()) == nonwhite


def _ipw(rule_plus, data, p_plus):
    prop = np.where(data.treatment > 0, p_plus, 1 - p_plus)
    v = (rule_plus == (data.treatment > 0)) * data.benefit / prop
    return v.mean(), v.std() / math.sqrt(data.n)


def test_cyp_truth_agrees_with_a_large_sample():
    from pydpowl.datasets import cyp_guides_style_truth

    truth = cyp_guides_style_truth()
    assert truth.X.shape == (576, 4) and truth.weight.sum() == pytest.approx(1.0)
    n = 200000
    d = make_cyp_guides_style(n, random_state=11)
    p_plus = round(n * 982 / 1459) / n  # complete randomisation with the trial's allocation
    X = d.X.to_numpy()
    for rule, exact in [(X[:, 3] > 0, truth.value(truth.X[:, 3] > 0)), (X[:, 0] < 40, truth.value(truth.X[:, 0] < 40)),
                        (np.ones(n, bool), truth.arm_value(1)), (np.zeros(n, bool), truth.arm_value(-1)),
                        (d.optimal > 0, truth.optimal_value)]:
        est, se = _ipw(rule, d, p_plus)
        assert abs(est - exact) <= 4 * se, (est, se, exact)
    # the covariate law: feature means
    assert truth.weight @ truth.X[:, 3] == pytest.approx(X[:, 3].mean(), abs=0.01)
    assert truth.weight @ truth.X[:, 0] == pytest.approx(X[:, 0].mean(), abs=0.2)


def test_synthetic_truth_agrees_with_a_large_sample_and_clips_in_closed_form():
    from pydpowl.datasets import synthetic_truth

    truth = synthetic_truth(benefit_bounds=(-8.0, 8.0))
    d = make_synthetic_owl(400000, random_state=12, shift=None)
    clipped = type(d)(X=d.X, treatment=d.treatment, benefit=np.clip(d.benefit, -8, 8), propensity=d.propensity,
                      feature_bounds=d.feature_bounds, weights_upper_bound=30.0)
    X = d.X.to_numpy()
    for coef, b0 in [((1, 1, -1.8, -2.2), 1.0), ((1, -1, 0, 0), 0.0), ((0.2, 0.5, -1, 0.3), -0.1)]:
        est, se = _ipw(X @ np.array(coef) + b0 > 0, clipped, 0.5)
        assert abs(est - truth.linear_rule_value(b0, np.array(coef))) <= 4 * se
    assert truth.optimal_value == pytest.approx(truth.linear_rule_value(1.0, np.array([1, 1, -1.8, -2.2])))
    # without clipping, the value of giving everyone one arm is E[0.01 + 0.02 x4] +- 3 E[f] = 0.02 (E f = 0)
    plain = synthetic_truth()
    assert plain.arm_value(1) == pytest.approx(0.02, abs=1e-3) and plain.arm_value(-1) == pytest.approx(0.02, abs=1e-3)


def test_zhao_design_and_its_truth():
    from pydpowl.datasets import ZHAO_BENEFIT_BOUNDS, make_zhao_owl, zhao_truth

    d = make_zhao_owl(20000, random_state=3)
    X, A, B = d.X.to_numpy(), d.treatment, d.benefit
    mean = 1 + 2 * X[:, 0] + X[:, 1] + 0.5 * X[:, 2] + 0.442 * (1 - X[:, 0] - X[:, 1]) * A
    resid = B - mean
    assert abs(resid.mean()) < 0.03 and abs(resid.std() - 1.0) < 0.03  # N(0, 1) noise
    assert X.shape == (20000, 10) and X.min() >= -1 and X.max() <= 1
    assert np.all((B > ZHAO_BENEFIT_BOUNDS[0]) & (B < ZHAO_BENEFIT_BOUNDS[1]))
    np.testing.assert_array_equal(d.optimal, np.where(1 - X[:, 0] - X[:, 1] > 0, 1.0, -1.0))
    truth = zhao_truth(n_points=2 ** 12)
    # the rule sign(1 - x1 - x2) attains V*; treating everyone with +1 loses E[0.884 (x1 + x2 - 1)^+]
    coef = np.zeros(10)
    coef[:2] = -1.0
    assert truth.linear_rule_value(1.0, coef) == pytest.approx(truth.optimal_value, abs=1e-12)
    assert truth.optimal_value - truth.arm_value(1) == pytest.approx(0.884 / 24, abs=2e-3)
