"""Sensitivity audit: worst neighbouring pairs stay within Delta, and the search can reach it."""

import dataclasses

import numpy as np
import pytest

from validation.audit.configs import Dataset, default_configs
from validation.audit.run import RATIO_TOLERANCE, AuditResult
from validation.audit.sensitivity import evaluate_pair, sensitivity_search

CONFIGS = {c.name: c for c in default_configs()}
SMALL = dict(n_random=16, n_starts=1, maxiter=15, n_replaced=1)


def _linear_zone_pair():
    """gamma = 20, n = 20: with small weights on the others every margin stays below 1 - h."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(20, 3))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    X[0] = np.array([1.0, 2.0, -2.0]) / 3.0  # norm 1
    y = np.tile([1.0, -1.0], 10)
    w = np.full(20, 0.3)
    w[0] = 1.0
    D = Dataset(X, y, w)
    return D, D.with_record(0, X[0], -1.0, 1.0)


def test_linear_zone_pair_attains_delta_exactly():
    config = CONFIGS["werm-huber-strong"]
    D, D1 = _linear_zone_pair()
    theta, delta = config.minimiser(D)
    # hand computation: with every margin < 1 - h the gradient condition is gamma theta = sum_i w_i y_i x_i
    closed = (D.v * D.y) @ D.X / config.gamma
    assert np.all(D.y * (D.X @ closed) < 1 - config.huber_h)
    np.testing.assert_allclose(theta, closed, rtol=0, atol=1e-12)
    tol_term = 2 * D.n * 1e-10 / config.gamma  # the solver tolerance's share of Delta (2 n tol / gamma)
    assert delta == pytest.approx(2 * config.weights_upper_bound / config.gamma + tol_term, rel=1e-15)
    ev = evaluate_pair(config, D, D1)
    expected = 1.0 / (1.0 + tol_term * config.gamma / (2 * config.weights_upper_bound))
    assert ev.ratio == pytest.approx(expected, abs=1e-10), f"linear-zone pair ratio {ev.ratio!r}, expected {expected}"


def test_search_reaches_the_bound_where_it_is_attainable():
    result = sensitivity_search(CONFIGS["werm-huber-strong"], seed=1, bases=("random",), **SMALL)
    assert 0.999 <= result.worst.ratio <= 1 + RATIO_TOLERANCE, f"worst ratio {result.worst.ratio!r}"
    assert result.by_method["optimised-pair"] >= result.by_method["random"]


@pytest.mark.parametrize("name", ["werm-huber", "werm-logistic", "werm-clip-rows", "owl-intercept"])
def test_worst_pairs_stay_within_delta(name):
    result = sensitivity_search(CONFIGS[name], seed=2, bases=("balanced",), **SMALL)
    assert result.worst.ratio <= 1 + RATIO_TOLERANCE, f"{name}: ||theta - theta'|| / Delta = {result.worst.ratio!r} > 1"
    assert result.worst.ratio > 0.2, f"{name}: search found only {result.worst.ratio:.3f} (too weak to be evidence)"
    D, D1 = result.D, result.D1
    differs = (D.X != D1.X).any(axis=1) | (D.y != D1.y) | (D.v != D1.v)
    assert differs.sum() == 1 and differs[result.replaced], "the pair must differ in exactly the replaced record"


def test_propensity_refit_pairs_stay_within_delta_and_c_is_needed():
    config = CONFIGS["owl-propensity"]
    result = sensitivity_search(config, seed=3, bases=("random",), modes=("replace",), n_random=8, n_starts=1,
                                maxiter=8, n_replaced=1)
    ev = result.worst
    assert ev.C > 0 and ev.sensitivity == pytest.approx((ev.C + 2 * config.weights_upper_bound) / config.gamma)
    assert ev.ratio <= 1 + RATIO_TOLERANCE
    assert 0 < result.worst_weight_ratio <= 1, "Proposition 8: other weights moved by more than C"
    assert result.worst_naive_ratio > ev.ratio, "ignoring C must make the pair look closer to the bound"


def test_a_wrong_delta_is_caught():
    """If Delta were under-reported (here halved) the audit must fail."""
    config = CONFIGS["werm-huber-strong"]

    class HalvedDelta(type(config)):
        def analyse(self, data):
            theta, delta, w, C = super().analyse(data)
            return theta, delta / 2, w, C

    wrong = HalvedDelta(**{f.name: getattr(config, f.name) for f in dataclasses.fields(config)})
    D, D1 = _linear_zone_pair()
    assert evaluate_pair(wrong, D, D1).ratio == pytest.approx(2.0, rel=1e-8)
    result = sensitivity_search(wrong, seed=1, bases=("random",), modes=("pair",), n_random=4, n_starts=1,
                                maxiter=10, n_replaced=1)
    audit = AuditResult(sensitivity=[result], black_box=[], n_per_split=0, alpha=0.05, seed=0)
    assert not audit.passed


def test_delta_must_not_depend_on_the_data():
    config = CONFIGS["werm-huber-strong"]

    class DataDelta(type(config)):
        def analyse(self, data):
            theta, delta, w, C = super().analyse(data)
            return theta, delta * (1 + data.v.sum()), w, C

    bad = DataDelta(**{f.name: getattr(config, f.name) for f in dataclasses.fields(config)})
    D, D1 = _linear_zone_pair()
    with pytest.raises(AssertionError, match="Delta depends on the data"):
        evaluate_pair(bad, D, D1.with_record(0, D.X[0], -1.0, 0.5))


# ------------------------------------------------------------ privacy review: the new configurations

@pytest.mark.parametrize("name", ["owl-benefit-bound", "owl-propensity-split", "owl-propensity"])
def test_propensity_configurations_stay_within_C_and_delta(name):
    """Items 1, 2 and 4: with benefits clipped at C_B, C computed with n_p, and the tight per-weight bound,
    the other records' weights move by at most C and the minimiser by at most Delta."""
    config = CONFIGS[name]
    result = sensitivity_search(config, seed=3, bases=("random",), modes=("replace",), n_random=12, n_starts=1,
                                maxiter=8, n_replaced=2)
    assert result.worst.ratio <= 1 + RATIO_TOLERANCE, f"{name}: ratio {result.worst.ratio!r}"
    assert 0 < result.worst_weight_ratio <= 1, f"{name}: other weights moved by {result.worst_weight_ratio:.3f} C"


def test_split_sample_search_replaces_a_propensity_record_and_an_owl_record():
    config = CONFIGS["owl-propensity-split"]
    assert config.n_propensity == 8 and config.n_records == 1008
    D = config.random_dataset(np.random.default_rng(0))
    assert D.n == 1008 and set(D.y[:8]) == {-1.0, 1.0} and set(D.y[8:]) == {-1.0, 1.0}
    w, C = config.weights(D)
    assert w.shape == (1000,) and C > 0


def test_an_assumed_hessian_bound_is_refused_and_can_be_false():
    """Item 3: the assumption is refused by default; the search shows data that violate it."""
    from validation.audit.run import assumption_check

    config = CONFIGS["owl-assumed-hessian"]
    assert config.conditional
    check = assumption_check(config, config.random_dataset(np.random.default_rng(1)))
    assert check.passed, check.detail
    result = sensitivity_search(config, seed=3, bases=("random", "balanced"), modes=("replace",), n_random=30,
                                n_starts=1, maxiter=10, n_replaced=2)
    assert result.worst_weight_ratio > 1, "the assumed b_x should be violated by some neighbouring datasets"
    audit = AuditResult(sensitivity=[result], black_box=[], n_per_split=0, alpha=0.05, seed=0, checks=[check])
    assert audit.passed  # conditional: reported, not part of the verdict
