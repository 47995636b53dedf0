"""DPLogisticRegression (pydpowl.estimators.logistic)."""

import math
import warnings

import numpy as np
import pytest
from scipy import optimize

from pydpowl import DPLogisticRegression, PrivacyLeakWarning, RRandom

BOUNDS = ([-1.0, 0.0], [1.0, 3.0])


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    n = 300
    X = np.column_stack([rng.uniform(-1, 1, n), rng.uniform(0, 3.3, n)])
    y = (X[:, 0] - 0.4 * X[:, 1] + 0.5 + 0.5 * rng.normal(size=n) > 0).astype(float)
    return X, y


def minimiser(X, y, gamma, b=None, Delta=0.0):
    """DPpack's J for the cross-entropy of sigmoid(z'theta), written out (labels 0/1)."""
    Z = np.column_stack([np.ones(len(y)), np.clip(X, BOUNDS[0], BOUNDS[1]) / np.array([1.0, 3.0])]) / np.sqrt(3)
    n = len(y)
    b = np.zeros(3) if b is None else b

    def J(t):
        eta = Z @ t
        ce = np.logaddexp(0, eta) - y * eta
        return np.sum(ce) / n + gamma * t @ t / (2 * n) + b @ t / n + Delta * t @ t / 2
    return optimize.minimize(J, np.zeros(3), method="BFGS", options={"gtol": 1e-12}).x


def test_exact_limit_matches_the_cross_entropy_minimiser(data):
    X, y = data
    m = DPLogisticRegression(epsilon=math.inf, gamma=0.5, feature_bounds=BOUNDS, fit_intercept=True).fit(X, y)
    np.testing.assert_allclose(m.scaled_coef_, minimiser(X, y, 0.5), atol=1e-6)
    p = m.predict_proba(X)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    np.testing.assert_array_equal(m.predict(X), (p[:, 1] > 0.5).astype(float))
    np.testing.assert_allclose(np.exp(m.predict_log_proba(X)), p, rtol=1e-12)


def test_objective_perturbation_with_dppack_constants(data):
    X, y = data
    eps, gamma, c = 1.0, 1.0, 0.25
    with pytest.warns(PrivacyLeakWarning):
        m = DPLogisticRegression(epsilon=eps, gamma=gamma, feature_bounds=BOUNDS, fit_intercept=True,
                                 reproduce_dppack=True, random_state=RRandom(9)).fit(X, y)
    eps_p = eps - math.log(1 + 2 * c / gamma + c * c / gamma ** 2)
    assert eps_p > 0 and m.Delta_ == 0.0
    r = RRandom(9)
    radius = r.rgamma(1, 3, rate=eps_p / 2)[0]
    z = r.rnorm(3)
    np.testing.assert_allclose(m.scaled_coef_, minimiser(X, y, gamma, radius * z / np.linalg.norm(z)), atol=1e-6)


def test_reproduce_dppack_uses_gamma_one_in_the_optimiser(data):
    """DPpack 0.2.2's LogisticRegressionDP minimises with gamma = 1 whatever gamma is (its namespace's gamma)."""
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        a = DPLogisticRegression(epsilon=math.inf, gamma=0.01, feature_bounds=BOUNDS, reproduce_dppack=True).fit(X, y)
        b = DPLogisticRegression(epsilon=math.inf, gamma=50.0, feature_bounds=BOUNDS, reproduce_dppack=True).fit(X, y)
    np.testing.assert_allclose(a.dppack_coeff_, b.dppack_coeff_, rtol=1e-12)
    sound = DPLogisticRegression(epsilon=math.inf, gamma=50.0, feature_bounds=BOUNDS).fit(X, y)
    assert np.linalg.norm(sound.dppack_coeff_) < 0.5 * np.linalg.norm(b.dppack_coeff_)
    with pytest.warns(PrivacyLeakWarning, match="less private than claimed"):
        DPLogisticRegression(epsilon=1.0, gamma=2.0, feature_bounds=BOUNDS, reproduce_dppack=True,
                             random_state=0).fit(X, y)


def test_output_perturbation_rate(data):
    X, y = data
    m = DPLogisticRegression(epsilon=0.5, gamma=2.0, perturbation="output", feature_bounds=BOUNDS,
                             random_state=0).fit(X, y)
    assert m.noise_rate_ == pytest.approx(2.0 * 0.5 / (2.0 + 2 * len(y) * 1e-10), rel=1e-15)
    with pytest.warns(PrivacyLeakWarning):
        d = DPLogisticRegression(epsilon=0.5, gamma=2.0, perturbation="output", feature_bounds=BOUNDS,
                                 reproduce_dppack=True, random_state=0).fit(X, y)
    assert d.noise_rate_ == 2.0 * 0.5 / 2


@pytest.mark.parametrize("kwargs, match", [
    (dict(feature_bounds=None), "feature_bounds must be a pair"),
    (dict(perturbation="both"), "perturbation must be one of"),
    (dict(reproduce_dppack=1), "reproduce_dppack must be True or False"),
])
def test_bad_settings(data, kwargs, match):
    X, y = data
    settings = dict(feature_bounds=BOUNDS)
    settings.update(kwargs)
    with pytest.raises((ValueError, TypeError), match=match):
        DPLogisticRegression(**settings).fit(X, y)


def test_one_class_is_refused(data):
    X, _ = data
    with pytest.raises(ValueError, match="exactly two distinct values"):
        DPLogisticRegression(feature_bounds=BOUNDS).fit(X, np.ones(len(X)))


def test_dppack_gamma_quirk_breaks_the_sensitivity_and_pydpowl_does_not():
    """With gamma = 4 DPpack calibrates output noise to 2/gamma = 0.5 but optimises with gamma = 1: on this
    neighbouring pair (record 0's label flipped) its minimisers are 1.32 times that apart; pydpowl's 0.44."""
    X = np.array([[1.0, 1.0], [1.0, 1.0], [-1.0, 1.0], [-1.0, 1.0]])
    y, y1 = np.array([1.0, 0.0, 1.0, 0.0]), np.array([0.0, 0.0, 1.0, 0.0])
    ratios = {}
    for rep in (True, False):
        kw = dict(epsilon=math.inf, gamma=4.0, perturbation="output", feature_bounds=([-1, -1], [1, 1]),
                  fit_intercept=True, reproduce_dppack=rep)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            a, b = DPLogisticRegression(**kw).fit(X, y), DPLogisticRegression(**kw).fit(X, y1)
        ratios[rep] = np.linalg.norm(a.scaled_coef_ - b.scaled_coef_) / (2.0 / 4.0)
    assert ratios[True] > 1.2, "DPpack's quirk should exceed the sensitivity its noise assumes"
    assert ratios[False] <= 1.0


@pytest.mark.parametrize("perturbation", ["objective", "output"])
def test_release_does_not_depend_on_the_memory_layout_of_X(data, perturbation):
    # column-major X (pandas' values, R's matrices) is read as it is, row-major is not copied either: same release
    X, y = data
    fits = [DPLogisticRegression(epsilon=1.0, gamma=1.0, perturbation=perturbation, feature_bounds=BOUNDS,
                                 random_state=3).fit(layout(X), y) for layout in (np.ascontiguousarray,
                                                                                  np.asfortranarray)]
    assert np.array_equal(fits[0].coef_, fits[1].coef_) and fits[0].intercept_ == fits[1].intercept_
