"""DPSVM (pydpowl.estimators.svm): DPpack's svmDP semantics, checked against independent computations."""

import math
import pickle
import warnings

import numpy as np
import pytest
from scipy import optimize, stats
from sklearn.base import clone

from pydpowl import DPSVM, PrivacyLeakWarning, RRandom
from pydpowl.exceptions import NotFittedError

BOUNDS = ([-1.0, -1.0], [1.0, 1.0])


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 300
    X = rng.uniform(-1.2, 1.2, (n, 2))
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + 0.3 * rng.normal(size=n) > 0, 1.0, 0.0)
    return X, y


def huber(m, h=0.5):
    return np.where(m > 1 + h, 0.0, np.where(m < 1 - h, 1 - m, (1 + h - m) ** 2 / (4 * h)))


def scaled(X, fit_intercept=True):
    """DPpack's linear-kernel preprocessing written out: clip, bias first, / max|bound|, / sqrt(d)."""
    Xc = np.clip(X, -1.0, 1.0)
    if fit_intercept:
        Xc = np.column_stack([np.ones(len(X)), Xc])
    return Xc / np.sqrt(Xc.shape[1])


def perturbed_minimiser(Z, y, gamma, b, Delta, h=0.5):
    n = len(y)

    def J(t):
        return np.sum(huber(y * (Z @ t), h)) / n + gamma * t @ t / (2 * n) + b @ t / n + Delta * t @ t / 2
    return optimize.minimize(J, np.zeros(Z.shape[1]), method="BFGS", options={"gtol": 1e-12}).x


def test_sklearn_conventions(data):
    X, y = data
    est = DPSVM(epsilon=2.0, gamma=3.0, feature_bounds=BOUNDS, fit_intercept=True, random_state=1)
    assert clone(est).get_params() == est.get_params()
    assert est.fit(X, y) is est
    labels = np.where(y > 0, "yes", "no")
    m = DPSVM(epsilon=2.0, gamma=3.0, feature_bounds=BOUNDS, random_state=1).fit(X, labels)
    assert list(m.classes_) == ["no", "yes"] and set(m.predict(X)) <= {"no", "yes"}
    assert 0.0 <= m.score(X, labels) <= 1.0
    with pytest.raises(NotFittedError):
        DPSVM(feature_bounds=BOUNDS).predict(X)


@pytest.mark.parametrize("kwargs, match", [
    (dict(epsilon=0.0), r"epsilon must be in \(0, inf\]"),
    (dict(gamma=-1.0), r"gamma must be in \(0, inf\)"),
    (dict(perturbation="noise"), "perturbation must be one of"),
    (dict(kernel="poly"), "kernel must be one of"),
    (dict(kernel="gaussian"), "n_components .* is required"),
    (dict(kernel="gaussian", n_components=5, feature_bounds=BOUNDS), "feature_bounds must be None"),
    (dict(feature_bounds=None), "feature_bounds must be a pair"),
    (dict(huber_h=0.0), r"huber_h must be in \(0, inf\)"),
])
def test_bad_settings_are_named(data, kwargs, match):
    X, y = data
    settings = dict(feature_bounds=BOUNDS)
    settings.update(kwargs)
    with pytest.raises(ValueError, match=match):
        DPSVM(**settings).fit(X, y)


def test_weights_rules(data):
    X, y = data
    w = np.linspace(0, 2, len(y))
    with pytest.raises(ValueError, match="perturbation='output' only"):
        DPSVM(feature_bounds=BOUNDS, weights_upper_bound=1.0).fit(X, y, w)
    with pytest.raises(ValueError, match="weights_upper_bound must be given"):
        DPSVM(feature_bounds=BOUNDS, perturbation="output").fit(X, y, w)
    with pytest.raises(ValueError, match="non-negative; 1 of 300"):
        DPSVM(feature_bounds=BOUNDS, perturbation="output", weights_upper_bound=1.0).fit(X, y, np.r_[-1.0, w[1:]])
    m = DPSVM(feature_bounds=BOUNDS, perturbation="output", weights_upper_bound=1.0, random_state=0).fit(X, y, w)
    assert m.n_clipped_weights_ == int(np.sum(w > 1.0)) and m.weights_upper_bound_ == 1.0
    # unweighted fits use W = 1 whatever is given (DPpack)
    u = DPSVM(feature_bounds=BOUNDS, perturbation="output", weights_upper_bound=5.0, random_state=0).fit(X, y)
    assert u.weights_upper_bound_ == 1.0


def test_exact_limit_is_the_same_for_both_perturbations(data):
    X, y = data
    a = DPSVM(epsilon=math.inf, gamma=2.0, feature_bounds=BOUNDS, fit_intercept=True).fit(X, y)
    b = DPSVM(epsilon=math.inf, gamma=2.0, perturbation="output", feature_bounds=BOUNDS, fit_intercept=True).fit(X, y)
    np.testing.assert_allclose(a.dppack_coeff_, b.dppack_coeff_, rtol=1e-12)
    Z, ypm = scaled(X), np.where(y > 0, 1.0, -1.0)
    ref = perturbed_minimiser(Z, ypm, 2.0, np.zeros(3), 0.0)
    np.testing.assert_allclose(a.scaled_coef_, ref, atol=1e-6)
    np.testing.assert_allclose(a.dppack_coeff_, a.scaled_coef_ / np.sqrt(3), rtol=1e-15)
    assert a.intercept_ == a.dppack_coeff_[0] and np.array_equal(a.coef_, a.dppack_coeff_[1:])


@pytest.mark.parametrize("eps, gamma", [(2.0, 3.0), (0.3, 0.5)])  # the second takes the Delta > 0 branch
def test_objective_perturbation_replays_dppack_constants(data, eps, gamma):
    """With R's stream: b from rgamma(1, d, eps'/2) then rnorm(d), and the exact minimiser of DPpack's J."""
    X, y = data
    with pytest.warns(PrivacyLeakWarning, match="reproduce_dppack"):
        m = DPSVM(epsilon=eps, gamma=gamma, feature_bounds=BOUNDS, fit_intercept=True, reproduce_dppack=True,
                  random_state=RRandom(42)).fit(X, y)
    n, c = len(y), 1.0
    eps_p = eps - math.log(1 + 2 * c / gamma + c * c / gamma ** 2)
    Delta = 0.0
    if eps_p <= 0:
        Delta, eps_p = c / (n * (math.exp(eps / 4) - 1)) - gamma / n, eps / 2
    r = RRandom(42)
    radius = r.rgamma(1, 3, rate=eps_p / 2)[0]
    z = r.rnorm(3)
    b = radius * z / np.sqrt(np.sum(z * z))
    ref = perturbed_minimiser(scaled(X), np.where(y > 0, 1.0, -1.0), gamma, b, Delta)
    np.testing.assert_allclose(m.scaled_coef_, ref, atol=1e-6)
    assert m.Delta_ == pytest.approx(Delta, rel=1e-14) and m.epsilon_prime_ == pytest.approx(eps_p, rel=1e-14)


def test_output_perturbation_noise_law_and_sensitivity(data):
    X, y = data
    n, gamma, eps, tol = len(y), 4.0, 1.0, 1e-10
    rng = np.random.default_rng(5)
    fits = [DPSVM(epsilon=eps, gamma=gamma, perturbation="output", feature_bounds=BOUNDS, keep_nonprivate=True,
                  random_state=rng).fit(X, y) for _ in range(600)]
    assert fits[0].sensitivity_ == pytest.approx((2.0 + 2 * n * tol) / gamma, rel=1e-15)
    norms = [np.linalg.norm(f.scaled_coef_ - f.minimiser_) for f in fits]
    assert stats.kstest(norms, stats.gamma(a=2, scale=(2.0 + 2 * n * tol) / (gamma * eps)).cdf).pvalue > 1e-3


def test_objective_smoothing_share_and_noise_law(data):
    """Without reproduce_dppack: kappa = max(n 2^-24, sqrt(r0 n mu0 / 2)) of epsilon (r0 the radius at the full
    budget's calibration, about n tol / gamma) pays for noise of rate kappa eps / (2 r)."""
    X, y = data
    n, gamma, eps, tol = len(y), 2.0, 1.0, 1e-6  # a loose tol makes the smoothing noise visible
    from pydpowl.engine.mechanisms import cms_calibration, linear_term_shift

    cal0 = cms_calibration(epsilon=eps, gamma=gamma, c=1.0, n=n)  # the share at the full budget's calibration
    mu0 = gamma / n + cal0.Delta
    r0 = tol / mu0 + linear_term_shift(dim=2, modulus=n * mu0, rate=cal0.rate)
    kappa = max(n * 2.0 ** -24, math.sqrt(r0 * n * mu0 / 2))
    rng = np.random.default_rng(6)
    fits = [DPSVM(epsilon=eps, gamma=gamma, feature_bounds=BOUNDS, tol=tol, keep_nonprivate=True,
                  random_state=rng).fit(X, y) for _ in range(400)]
    assert fits[0].epsilon_smoothing_ == pytest.approx(kappa * eps, rel=1e-12)
    assert fits[0].epsilon_objective_ + fits[0].epsilon_smoothing_ == pytest.approx(eps, rel=1e-15)
    norms = [np.linalg.norm(f.noise_) for f in fits]
    rate = kappa * eps / (2 * n * tol / gamma)
    assert stats.kstest(norms, stats.gamma(a=2, scale=1 / rate).cdf).pvalue > 1e-3
    b_norms = [np.linalg.norm(f.linear_term_) for f in fits]
    eps_p = (1 - kappa) * eps - math.log(1 + 2 * 1.0 / gamma + 1.0 / gamma ** 2)
    assert eps_p > 0
    assert stats.kstest(b_norms, stats.gamma(a=2, scale=2 / eps_p).cdf).pvalue > 1e-3


def test_gaussian_kernel_draws_features_then_noise(data):
    X, y = data
    D, eps, gamma = 6, 1.0, 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        m = DPSVM(epsilon=eps, gamma=gamma, kernel="gaussian", n_components=D, fit_intercept=True,
                  reproduce_dppack=True, random_state=RRandom(3)).fit(X, y)
    r = RRandom(3)
    sd = math.sqrt(2 * 0.5)  # kernel_param defaults to 1/ncol(X) = 1/2
    omega, phi = np.empty((D, 3)), np.empty(D)
    for j in range(D):
        omega[j], phi[j] = r.rnorm(3, 0.0, sd), r.runif(1, -math.pi, math.pi)[0]
    assert m.kernel_param_ == 0.5
    np.testing.assert_array_equal(m.random_features_.omega, omega)
    np.testing.assert_array_equal(m.random_features_.phi, phi)
    eps_p = eps - math.log(4.0)  # c = 1, gamma = 1
    assert eps_p <= 0
    eps_p = eps / 2
    Delta = 1.0 / (len(y) * (math.exp(eps / 4) - 1)) - gamma / len(y)
    radius = r.rgamma(1, D, rate=eps_p / 2)[0]
    z = r.rnorm(D)
    b = radius * z / np.linalg.norm(z)
    Xb = np.column_stack([np.ones(len(y)), X])
    Z = np.cos(Xb @ omega.T + phi) / np.sqrt(D)  # sqrt(2/D) cos(.) / sqrt(2/D) / sqrt(D)
    ref = perturbed_minimiser(Z, np.where(y > 0, 1.0, -1.0), gamma, b, Delta)
    np.testing.assert_allclose(m.scaled_coef_, ref, atol=1e-6)
    # prediction recomputes the features: V(X) coeff with V = sqrt(2/D) cos(.)
    V = np.sqrt(2 / D) * np.cos(Xb @ omega.T + phi)
    np.testing.assert_allclose(m.decision_function(X), V @ m.dppack_coeff_, rtol=1e-12, atol=1e-12)
    assert m.intercept_ == 0.0 and m.coef_.shape == (D,)


def test_infinite_epsilon_objective_draws_nothing_output_draws_like_dppack(data):
    X, y = data
    r = RRandom(1)
    DPSVM(epsilon=math.inf, feature_bounds=BOUNDS, random_state=r).fit(X, y)
    assert r.words_used == 0
    r2 = RRandom(1)
    DPSVM(epsilon=math.inf, perturbation="output", feature_bounds=BOUNDS, random_state=r2).fit(X, y)
    r3 = RRandom(1)
    r3.rgamma(1, 2, rate=math.inf)
    r3.rnorm(2)
    assert np.array_equal(r2.get_state(), r3.get_state())


def test_pickle_drops_the_stream(data):
    X, y = data
    m = DPSVM(feature_bounds=BOUNDS, random_state=RRandom(2)).fit(X, y)
    back = pickle.loads(pickle.dumps(m))
    assert back.random_state is None and np.array_equal(back.predict(X), m.predict(X))


@pytest.mark.skipif(not __import__("pydpowl.engine.kernels", fromlist=["x"]).numba_available(), reason="no numba")
def test_numba_backend_releases_the_same(data):
    X, y = data
    kw = dict(epsilon=1.0, feature_bounds=BOUNDS, fit_intercept=True)
    a = DPSVM(backend="numpy", random_state=4, **kw).fit(X, y)
    b = DPSVM(backend="numba", random_state=4, **kw).fit(X, y)
    np.testing.assert_allclose(a.scaled_coef_, b.scaled_coef_, rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="backend must be one of"):
        DPSVM(backend="gpu", **kw).fit(X, y)


@pytest.mark.parametrize("kernel", ["linear", "gaussian"])
def test_release_does_not_depend_on_the_memory_layout_of_X(data, kernel):
    # column-major X (pandas' values, R's matrices) is read as it is, row-major is not copied either: same release
    X, y = data
    settings = dict(n_components=8) if kernel == "gaussian" else dict(feature_bounds=([-1.0, -1.0], [1.0, 1.0]))
    fits = [DPSVM(epsilon=1.0, gamma=1.0, kernel=kernel, random_state=3, **settings).fit(layout(X), y)
            for layout in (np.ascontiguousarray, np.asfortranarray)]
    assert np.array_equal(fits[0].coef_, fits[1].coef_)


@pytest.mark.parametrize("perturbation", ["output", "objective"])
def test_privacy_spent_is_epsilon_and_the_rounding_delta(data, perturbation):
    """Issue 21.5: every estimator reports (epsilon, delta); delta is the floating-point rounding's for the noise
    that was rounded (the output noise, or objective perturbation's smoothing noise of radius r = tol / mu)."""
    from pydpowl.engine.mechanisms import floating_point_delta

    X, y = data
    m = DPSVM(epsilon=0.8, gamma=2.0, perturbation=perturbation, feature_bounds=BOUNDS, random_state=1).fit(X, y)
    d = m.scaled_coef_.size
    if perturbation == "output":
        scale = m.sensitivity_ / 0.8
    else:
        scale = m.release_scale_  # 2 r / epsilon_s, r the certified radius (tests/test_mechanisms_objective.py)
        assert 0 < scale < 1e-3
    expected = floating_point_delta(epsilon=0.8, dim=d, grid=m.release_grid_, noise_scale=scale)
    assert m.privacy_spent_ == (0.8, expected) and 0 < expected < 1e-7
    with pytest.warns(PrivacyLeakWarning):
        full = DPSVM(epsilon=0.8, perturbation=perturbation, feature_bounds=BOUNDS, reproduce_dppack=True,
                     random_state=1).fit(X, y)
    assert full.privacy_spent_ == (0.8, 1.0)  # full precision: no proven guarantee
