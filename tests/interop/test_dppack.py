"""pydpowl.interop.dppack: DPpack's classes as functions of plain arrays and .Random.seed (entry points for R)."""

import numpy as np
import pytest

from pydpowl import DPLinearRegression, DPSVM, PrivacyLeakWarning, RRandom, dppack


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 200
    X = rng.uniform(-1, 1, (n, 2))
    y = (X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=n) > 0).astype(float)
    return X, y


def _state(seed):
    return RRandom(seed).get_state()


def test_svmdp_fit_matches_the_estimator_and_advances_the_state(data):
    X, y = data
    out = dppack.svmdp_fit(X, y, [1, 1], [-1, -1], True, eps=1.0, gamma=2.0, r_state=_state(3))
    r = RRandom(3)
    m = DPSVM(epsilon=1.0, gamma=2.0, feature_bounds=([-1, -1], [1, 1]), fit_intercept=True, random_state=r).fit(X, y)
    np.testing.assert_array_equal(out["coeff"], m.dppack_coeff_)
    np.testing.assert_array_equal(out["r_state"], r.get_state())
    assert out["prefilter"] is None
    pred = dppack.svmdp_predict(X, out["coeff"], True)
    np.testing.assert_array_equal(pred, (m.predict(X) > 0).astype(float))


def test_svmdp_gaussian_returns_the_public_fields(data):
    X, y = data
    st = _state(5)
    st[0] = 10403 + 10000  # another sample.kind digit is kept
    with pytest.warns(PrivacyLeakWarning, match=r"svmDP\(reproduce\.dppack=True\)"):
        out = dppack.svmdp_fit(X, y, [1, 1], [-1, -1], False, np.ones(len(y)), 1.0, eps=1.0, gamma=1.0,
                               perturbation_method="output", kernel="Gaussian", D=7.0, r_state=st,
                               reproduce_dppack=True)
    assert out["D"] == 7 and out["prefilter"].shape == (7, 3) and out["kernel_param"] == 0.5
    assert out["r_state"][0] == 20403
    raw = dppack.svmdp_predict(X, out["coeff"], False, True, kernel="Gaussian", prefilter=out["prefilter"])
    V = np.sqrt(2 / 7) * np.cos(X @ out["prefilter"][:, :2].T + out["prefilter"][:, 2])
    np.testing.assert_allclose(raw, V @ out["coeff"], rtol=1e-12, atol=1e-14)


def test_labels_must_be_zero_one(data):
    X, y = data
    with pytest.raises(ValueError, match=r"^y must take values in \{0, 1\}; 98 of 200 entries do not \(first at "
                                         r"position 2\)\. DPpack codes labels 0 and 1"):
        dppack.svmdp_fit(X, 2 * y - 1, [1, 1], [-1, -1], eps=1.0, gamma=1.0)
    # one class is allowed, as in DPpack
    out = dppack.logistic_regression_dp_fit(X, np.ones(len(y)), [1, 1], [-1, -1], eps=1.0, gamma=1.0)
    assert out["r_state"] is None and out["coeff"].shape == (2,)


def test_linear_regression_bounds_layout(data):
    X, _ = data
    y = X @ np.array([0.5, -0.2]) + 0.1
    out = dppack.linear_regression_dp_fit(X, y, [1, 1, 2], [-1, -1, -2], True, eps=1.0, delta=0.0, gamma=1.0,
                                          r_state=_state(2))
    r = RRandom(2)
    m = DPLinearRegression(epsilon=1.0, gamma=1.0, feature_bounds=([-1, -1], [1, 1]), target_bounds=(-2, 2),
                           fit_intercept=True, random_state=r).fit(X, y)
    np.testing.assert_array_equal(out["coeff"], m.dppack_coeff_)
    np.testing.assert_allclose(dppack.linear_regression_dp_predict(X, out["coeff"], True), m.predict(X))
    with pytest.raises(ValueError, match=r"^upper.bounds must have length ncol\(X\) \+ 1 = 3 \(the last entry "
                                         r"bounds y\), got length 2\.$"):
        dppack.linear_regression_dp_fit(X, y, [1, 1], [-1, -1], eps=1.0, delta=0.0, gamma=1.0)


def test_logistic_predict_rounds_half_to_zero():
    p = dppack.logistic_regression_dp_predict(np.array([[0.0], [1.0]]), [1.0], False, False)
    np.testing.assert_array_equal(p, [0.0, 1.0])


def test_tuning_entry_points(data):
    X, y = data
    specs = [{"class": "svmDP", "eps": 1.0, "gamma": g, "perturbation_method": "output"} for g in (10.0, 0.1)]
    specs.append({"class": "LogisticRegressionDP", "eps": 1.0, "gamma": 1.0})
    out = dppack.tune_classification_model(specs, X, y, [1, 1], [-1, -1], r_state=_state(1))
    assert out["index"] in (1, 2, 3) and len(out["models"]) == 3 and len(out["r_state"]) == 626
    ylin = X[:, 0] * 0.3
    lin = dppack.tune_linear_regression_model([{"eps": 1.0, "gamma": 1.0}, {"eps": 1.0, "delta": 0.1, "gamma": 5.0}],
                                              X, ylin, [1, 1, 1], [-1, -1, -1], True, r_state=_state(1))
    assert lin["index"] in (1, 2) and len(lin["models"]) == 2
    with pytest.raises(ValueError, match=r"^DPmodels\[\[1\]\] must be an svmDP or LogisticRegressionDP object"):
        dppack.tune_classification_model([{"class": "lm", "eps": 1, "gamma": 1}], X, y, [1, 1], [-1, -1])
