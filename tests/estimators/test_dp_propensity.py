"""Tests of pydpowl.estimators.dp_propensity: the DP logistic propensity model."""

import math
import pickle

import numpy as np
import pytest
from scipy import optimize, stats

from pydpowl.estimators.dp_propensity import DEFAULT_LOGIT_BOUND, DPLogisticPropensity, default_propensity_gamma

BOUNDS = (np.array([18.0, 0.0]), np.array([89.0, 1.0]))


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 400
    X = np.column_stack([rng.integers(18, 90, n), rng.integers(0, 2, n)]).astype(float)
    logit = -0.5 + 1.2 * X[:, 1]
    A = np.where(rng.random(n) < 1 / (1 + np.exp(-logit)), 1.0, -1.0)
    return X, A


def _scaled(X):
    scale = np.array([1.0, 89.0, 1.0])
    return np.column_stack([np.ones(len(X)), X]) / scale / math.sqrt(3)


def test_without_noise_it_is_the_ridge_logistic_fit_in_the_scaled_space(data):
    X, A = data
    gamma = 5.0
    model = DPLogisticPropensity(epsilon=np.inf, gamma=gamma, feature_bounds=BOUNDS).fit(X, A)
    Z, n = _scaled(X), len(A)

    def objective(t):
        return np.mean(np.logaddexp(0, -A * (Z @ t))) + gamma / (2 * n) * t @ t

    ref = optimize.minimize(objective, np.zeros(3), method="BFGS", options={"gtol": 1e-12}).x
    np.testing.assert_allclose(model.scaled_coef_, ref, atol=1e-6)
    # original-space coefficients give the same linear predictor
    eta = model.intercept_ + X @ model.coef_
    np.testing.assert_allclose(eta, Z @ model.scaled_coef_, atol=1e-9)


def test_noise_norm_is_gamma_with_rate_epsilon_gamma_over_two(data):
    X, A = data
    gamma, eps = 5.0, 2.0
    exact = DPLogisticPropensity(epsilon=np.inf, gamma=gamma, feature_bounds=BOUNDS).fit(X, A).scaled_coef_
    rng = np.random.default_rng(1)
    norms = [np.linalg.norm(DPLogisticPropensity(epsilon=eps, gamma=gamma, feature_bounds=BOUNDS,
                                                 random_state=rng).fit(X, A).scaled_coef_ - exact)
             for _ in range(600)]
    # Delta = 2 / gamma (W = 1, C = 0): ||b|| ~ Gamma(d = 3, rate = eps / Delta)
    assert stats.kstest(norms, stats.gamma(a=3, scale=2 / (gamma * eps)).cdf).pvalue > 1e-3
    model = DPLogisticPropensity(epsilon=eps, gamma=gamma, feature_bounds=BOUNDS, random_state=1).fit(X, A)
    assert model.sensitivity_ == pytest.approx(2 / gamma)


def test_propensities_respect_the_public_floor_and_clips_are_counted(data):
    X, A = data
    model = DPLogisticPropensity(epsilon=0.05, gamma=1.0, feature_bounds=BOUNDS, logit_bound=0.5,
                                 random_state=3).fit(X, A)
    floor = 1 / (1 + math.exp(0.5))
    assert model.propensity_floor == pytest.approx(floor)
    p = model.predict_proba(X)
    assert p.min() >= floor - 1e-15 and p.max() <= 1 - floor + 1e-15
    eta, n_clipped = model.linear_predictor(X)
    raw = _scaled(X) @ model.scaled_coef_
    assert n_clipped == int(np.sum(np.abs(raw) > 0.5))
    received, _ = model.probability_of(X, A)
    np.testing.assert_allclose(received, np.where(A > 0, p, 1 - p), atol=1e-15)


def test_default_gamma_and_logit_bound(data):
    X, A = data
    model = DPLogisticPropensity(epsilon=0.5, feature_bounds=BOUNDS, random_state=2).fit(X, A)
    assert model.gamma_ == pytest.approx(math.sqrt(400 / 0.5)) == default_propensity_gamma(400, 0.5)
    assert DEFAULT_LOGIT_BOUND == pytest.approx(math.log(9))
    assert model.propensity_floor == pytest.approx(0.1)


def test_release_is_rounded_and_the_pickle_drops_the_seed(data):
    X, A = data
    model = DPLogisticPropensity(epsilon=1.0, feature_bounds=BOUNDS, random_state=7).fit(X, A)
    g = 2.0 ** -24
    assert np.all(model.scaled_coef_ / g == np.round(model.scaled_coef_ / g))
    assert pickle.loads(pickle.dumps(model)).random_state is None


@pytest.mark.parametrize("kwargs, match", [(dict(logit_bound=0.0), "logit_bound"), (dict(gamma=-1.0), "gamma"),
                                           (dict(epsilon=0.0), "epsilon")])
def test_bad_settings_are_named(data, kwargs, match):
    X, A = data
    settings = dict(epsilon=1.0, feature_bounds=BOUNDS)
    settings.update(kwargs)
    with pytest.raises(ValueError, match=match):
        DPLogisticPropensity(**settings).fit(X, A)


def test_one_arm_is_refused(data):
    X, _ = data
    with pytest.raises(ValueError, match="treatment must contain both arms"):
        DPLogisticPropensity(epsilon=1.0, feature_bounds=BOUNDS).fit(X, np.ones(len(X)))


def test_fitted_attributes_are_the_documented_release_and_diagnostics(data):
    X, A = data
    model = DPLogisticPropensity(epsilon=1.0, feature_bounds=BOUNDS, random_state=np.random.default_rng(3)).fit(X, A)
    fitted = set(vars(model)) - set(model.get_params())
    assert fitted == {"scaled_coef_", "intercept_", "coef_", "gamma_", "sensitivity_", "scaler_", "n_features_in_",
                      "n_clipped_features_", "privacy_spent_"}, "a new fitted attribute must be reviewed for privacy"
    for name in fitted:
        value = getattr(model, name)
        assert not (isinstance(value, np.ndarray) and len(X) in value.shape), f"{name} is training-sized"


def test_privacy_spent_is_the_engines(data):
    """Issue 21.5: (epsilon, the floating-point rounding's delta); the extra rounding to 2^-24 is post-processing."""
    from pydpowl.engine.mechanisms import floating_point_delta, release_grid

    X, A = data[0], data[1]
    m = DPLogisticPropensity(epsilon=0.5, feature_bounds=([18, 0], [89, 1]), random_state=0).fit(X, A)
    grid = release_grid(sensitivity=m.sensitivity_, epsilon=0.5)
    expected = floating_point_delta(epsilon=0.5, dim=X.shape[1] + 1, grid=grid, noise_scale=m.sensitivity_ / 0.5)
    assert m.privacy_spent_ == (0.5, expected)


def test_bounds_by_name_and_prediction_by_name(data):
    import pandas as pd

    X, A = data
    frame = pd.DataFrame(X, columns=["age", "male"])
    named = {"male": (0.0, 1.0), "age": (18.0, 89.0)}
    m = DPLogisticPropensity(epsilon=1.0, feature_bounds=named, random_state=0).fit(frame, A)
    ref = DPLogisticPropensity(epsilon=1.0, feature_bounds=BOUNDS, random_state=0).fit(X, A)
    np.testing.assert_array_equal(m.scaled_coef_, ref.scaled_coef_)
    np.testing.assert_array_equal(m.predict_proba(frame[["male", "age"]]), ref.predict_proba(X))
    with pytest.raises(ValueError, match=r"lacks the column\(s\) \['male'\]"):
        m.predict_proba(frame[["age"]])
