"""pydpowl against DPpack's svmDP, LogisticRegressionDP, LinearRegressionDP and tuning, same R seeds (needs R).

The seeded replays use ``reproduce_dppack=True`` and an RRandom at ``set.seed(s)``: the random features, the
noise and the ``.Random.seed`` left behind must be DPpack's exactly; coefficients differ by DPpack's optimiser
tolerance only (BFGS reltol 1e-8, nloptr xtol_rel 1e-4).
"""

import math
import warnings

import numpy as np
import pytest

from pydpowl import DPLinearRegression, DPLogisticRegression, DPSVM, PrivacyLeakWarning, RRandom, dppack
from pydpowl.engine.mechanisms import exponential_mechanism, sample_isotropic_gaussian
from pydpowl.engine.preprocessing import RandomFourierFeatures

pytestmark = pytest.mark.r


@pytest.fixture(scope="module", autouse=True)
def _r(require_r):
    require_r("DPpack")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(11)
    n = 300
    X = rng.uniform(-1.2, 1.2, (n, 2))
    y = (X[:, 0] + 0.6 * X[:, 1] ** 2 - 0.3 + 0.3 * rng.normal(size=n) > 0).astype(float)
    return X, y


def _quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return fn()


SVM_CASES = [
    dict(perturbation="objective", kernel="linear", add_bias=True, weights=False),
    dict(perturbation="output", kernel="linear", add_bias=False, weights=True),
    dict(perturbation="objective", kernel="Gaussian", add_bias=True, weights=False),
    dict(perturbation="output", kernel="Gaussian", add_bias=False, weights=True),
]


@pytest.mark.parametrize("case", SVM_CASES, ids=lambda c: f"{c['perturbation']}-{c['kernel']}-w{c['weights']}")
def test_svmdp_seeded_replay(data, case):
    from r_reference.dppack_family import fit_dppack_model

    X, y = data
    w = np.linspace(0.1, 1.3, len(y)) if case["weights"] else None
    seeds = [3, 4, 5]
    fits = fit_dppack_model("svmDP", X, y, upper=[1, 1], lower=[-1, -1], add_bias=case["add_bias"], eps=1.0,
                            gamma=2.0, perturbation=case["perturbation"], kernel=case["kernel"],
                            D=8 if case["kernel"] == "Gaussian" else None, weights=w,
                            weights_upper_bound=1.0 if case["weights"] else None, seeds=seeds, predict_X=X)
    gauss = case["kernel"] == "Gaussian"
    for k, s in enumerate(seeds):
        r = RRandom(s)
        m = _quiet(lambda: DPSVM(epsilon=1.0, gamma=2.0, perturbation=case["perturbation"],
                                 kernel="gaussian" if gauss else "linear", n_components=8 if gauss else None,
                                 feature_bounds=None if gauss else ([-1, -1], [1, 1]), fit_intercept=case["add_bias"],
                                 weights_upper_bound=1.0 if case["weights"] else None, reproduce_dppack=True,
                                 random_state=r).fit(X, y, w))
        np.testing.assert_array_equal(r.get_state(), fits.random_seed[k])
        if gauss:
            np.testing.assert_array_equal(m.random_features_.prefilter, fits.prefilter[k])
        gap = np.max(np.abs(m.dppack_coeff_ - fits.coef[k]))
        assert gap <= 1e-2 * max(1.0, np.max(np.abs(fits.coef[k]))), f"seed {s}: coefficient gap {gap:.2e}"
        agree = np.mean((m.decision_function(X) > 0) == (fits.predictions[k] > 0))
        assert agree >= 0.98


@pytest.mark.parametrize("perturbation", ["objective", "output"])
def test_logistic_seeded_replay(data, perturbation):
    from r_reference.dppack_family import fit_dppack_model

    X, y = data
    fits = fit_dppack_model("LogisticRegressionDP", X, y, upper=[1, 1], lower=[-1, -1], add_bias=True, eps=0.8,
                            gamma=1.0, perturbation=perturbation, seeds=[7, 8])
    for k, s in enumerate([7, 8]):
        r = RRandom(s)
        m = _quiet(lambda: DPLogisticRegression(epsilon=0.8, gamma=1.0, perturbation=perturbation,
                                                feature_bounds=([-1, -1], [1, 1]), fit_intercept=True,
                                                reproduce_dppack=True, random_state=r).fit(X, y))
        np.testing.assert_array_equal(r.get_state(), fits.random_seed[k])
        assert np.max(np.abs(m.dppack_coeff_ - fits.coef[k])) <= 1e-2 * max(1.0, np.max(np.abs(fits.coef[k])))


def test_logistic_regression_dp_ignores_gamma_in_its_optimiser(data):
    """DPpack 0.2.2 quirk: the exact (eps = Inf) coefficients are the same for every gamma."""
    from r_reference.dppack_family import fit_dppack_model

    X, y = data
    a = fit_dppack_model("LogisticRegressionDP", X, y, upper=[1, 1], lower=[-1, -1], eps=math.inf, gamma=0.01)
    b = fit_dppack_model("LogisticRegressionDP", X, y, upper=[1, 1], lower=[-1, -1], eps=math.inf, gamma=100.0)
    np.testing.assert_array_equal(a.coef, b.coef)
    py = _quiet(lambda: DPLogisticRegression(epsilon=math.inf, gamma=100.0, feature_bounds=([-1, -1], [1, 1]),
                                             reproduce_dppack=True).fit(X, y))
    np.testing.assert_allclose(py.dppack_coeff_, a.coef[0], rtol=1e-3)


@pytest.mark.parametrize("delta, add_bias", [(0.0, True), (0.01, True), (0.0, False)])
def test_linear_regression_seeded_replay(delta, add_bias):
    from r_reference.dppack_family import fit_dppack_model

    rng = np.random.default_rng(3)
    n = 300
    X = np.column_stack([rng.uniform(-1, 1, n), rng.uniform(0, 3, n)])
    y = 1 + 0.5 * X[:, 0] - 0.3 * X[:, 1] + rng.normal(scale=0.3, size=n)
    fits = fit_dppack_model("LinearRegressionDP", X, y, upper=[1, 3, 4], lower=[-1, 0, -2], add_bias=add_bias,
                            eps=1.0, delta=delta, gamma=1.0, seeds=[1, 2])
    for k, s in enumerate([1, 2]):
        r = RRandom(s)
        m = _quiet(lambda: DPLinearRegression(epsilon=1.0, delta=delta, gamma=1.0, feature_bounds=([-1, 0], [1, 3]),
                                              target_bounds=(-2, 4), fit_intercept=add_bias, reproduce_dppack=True,
                                              random_state=r).fit(X, y))
        np.testing.assert_array_equal(r.get_state(), fits.random_seed[k])
        assert np.max(np.abs(m.dppack_coeff_ - fits.coef[k])) <= 1e-3 * max(1.0, np.max(np.abs(fits.coef[k])))


@pytest.mark.parametrize("p", list(range(1, 13)))
def test_mvrnorm_isotropic_draw_is_bitwise(p):
    from r_reference.rng import r_streams

    var = 7.3 * p
    (b,), state = r_streams([f"MASS::mvrnorm(1, numeric({p}), {var!r} * diag({p}))"], seed=p)
    r = RRandom(p)
    np.testing.assert_array_equal(np.atleast_1d(sample_isotropic_gaussian(p, var, rng=r)), b)
    np.testing.assert_array_equal(r.get_state(), state)


def test_exponential_mechanism_is_dppacks_draw():
    from r_reference.dppack_family import dppack_exponential_mechanism

    for seed in range(8):
        u = -np.array([12.0, 3.0, 5.0, 3.0, 40.0])
        ref = dppack_exponential_mechanism(u, 0.7, 2.0, seed)
        r = RRandom(seed)
        assert exponential_mechanism(u, epsilon=0.7, sensitivity=2.0, rng=r) + 1 == ref["index"]
        np.testing.assert_array_equal(r.get_state(), ref["random_seed"])


def test_random_features_are_dppacks(data):
    from r_reference.dppack_family import dppack_random_features

    X, _ = data
    ref = dppack_random_features(X, 9, 0.4, seed=21)
    r = RRandom(21)
    f = RandomFourierFeatures.sample(2, 9, 0.4, rng=r)
    np.testing.assert_array_equal(f.prefilter, ref["prefilter"])
    np.testing.assert_array_equal(r.get_state(), ref["random_seed"])
    # numpy's vectorised cos vs the C library's: at most one ulp apart
    V = f.transform(X)
    assert np.max(np.abs(V - ref["V"])) <= 2 * np.finfo(float).eps * f.bound


def test_tuning_functions_select_what_dppack_selects(data):
    from r_reference.dppack_family import tune_dppack
    from r_reference.rng import r_random_seed

    X, y = data
    w = np.linspace(0.2, 1.2, len(y))
    grid = (100.0, 1.0, 1e-4)
    for seed in (1, 2):
        ref = tune_dppack("classification", [{"cls": "svmDP", "eps": 1.0, "gamma": g, "pm": "output"} for g in grid],
                          X, y, upper=[1, 1], lower=[-1, -1], weights=w, weights_upper_bound=1.0, seed=seed)
        out = _quiet(lambda: dppack.tune_classification_model(
            [{"class": "svmDP", "eps": 1.0, "gamma": g, "perturbation_method": "output", "reproduce_dppack": True}
             for g in grid], X, y, [1, 1], [-1, -1], False, w, 1.0, r_state=r_random_seed(seed)))
        assert out["index"] == ref["index"]
        np.testing.assert_array_equal(out["r_state"], ref["random_seed"])
    Xl = X[:, :1]
    yl = -0.3 + 0.5 * Xl[:, 0] + 0.1 * np.cos(np.arange(len(y)))
    for seed in (1, 2):
        ref = tune_dppack("regression", [{"cls": "LinearRegressionDP", "eps": 1.0, "delta": 0.01, "gamma": g}
                                         for g in grid], Xl, yl, upper=[1, 2], lower=[-1, -2], add_bias=True, seed=seed)
        out = _quiet(lambda: dppack.tune_linear_regression_model(
            [{"eps": 1.0, "delta": 0.01, "gamma": g, "reproduce.dppack": True} for g in grid], Xl, yl, [1, 2],
            [-1, -2], True, r_state=r_random_seed(seed)))
        assert out["index"] == ref["index"]
        np.testing.assert_array_equal(out["r_state"], ref["random_seed"])


@pytest.mark.parametrize("case", SVM_CASES[:3], ids=lambda c: f"{c['perturbation']}-{c['kernel']}")
def test_proven_default_leaves_random_seed_where_dppack_does(data, case):
    """Without reproduce_dppack, objective perturbation's solver-smoothing noise comes from a generator derived
    from the stream's state: every DPpack draw is reproduced and .Random.seed ends where DPpack leaves it; the
    release differs from DPpack's by that noise and DPpack's optimiser error only."""
    from r_reference.dppack_family import fit_dppack_model
    from r_reference.rng import r_random_seed

    X, y = data
    gauss = case["kernel"] == "Gaussian"
    w = np.linspace(0.1, 1.3, len(y)) if case["weights"] else None
    seeds = [3, 4]
    fits = fit_dppack_model("svmDP", X, y, upper=[1, 1], lower=[-1, -1], add_bias=case["add_bias"], eps=1.0,
                            gamma=2.0, perturbation=case["perturbation"], kernel=case["kernel"],
                            D=8 if gauss else None, weights=w, weights_upper_bound=1.0 if case["weights"] else None,
                            seeds=seeds, predict_X=X)
    for k, s in enumerate(seeds):
        out = dppack.svmdp_fit(X, y, [1, 1], [-1, -1], case["add_bias"], w, 1.0 if case["weights"] else None,
                               eps=1.0, gamma=2.0, perturbation_method=case["perturbation"], kernel=case["kernel"],
                               D=8 if gauss else None, r_state=r_random_seed(s))
        np.testing.assert_array_equal(out["r_state"], fits.random_seed[k])
        if gauss:
            np.testing.assert_array_equal(out["prefilter"], fits.prefilter[k])
        assert np.max(np.abs(out["coeff"] - fits.coef[k])) <= 1e-2 * max(1.0, np.max(np.abs(fits.coef[k])))
    for k, s in enumerate(seeds):  # logistic regression and linear regression, objective perturbation
        ref = fit_dppack_model("LogisticRegressionDP", X, y, upper=[1, 1], lower=[-1, -1], add_bias=True, eps=1.0,
                               gamma=1.0, perturbation="objective", seeds=[s], predict_X=X)
        out = dppack.logistic_regression_dp_fit(X, y, [1, 1], [-1, -1], True, eps=1.0, gamma=1.0,
                                                r_state=r_random_seed(s))
        np.testing.assert_array_equal(out["r_state"], ref.random_seed[0])
