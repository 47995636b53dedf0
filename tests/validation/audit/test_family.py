"""Quick privacy audit of DPpack's ERM family (validation.audit.family): sensitivity where it applies, black box."""

import math

import numpy as np
import pytest

from validation.audit.family import family_configs, quick_family_configs
from validation.audit.run import RATIO_TOLERANCE, black_box_row
from validation.audit.sensitivity import sensitivity_search

CONFIGS = {c.name: c for c in family_configs()}


def test_a_configuration_per_mechanism():
    assert set(CONFIGS) == {"svm-objective", "svm-gaussian-objective", "svm-gaussian-output-weighted",
                            "logistic-objective", "logistic-output", "linreg-pure", "linreg-approx"}
    assert {c.name for c in quick_family_configs()} <= set(CONFIGS)
    assert [c.sensitivity_applies for c in CONFIGS.values()].count(True) == 2


@pytest.mark.parametrize("name", ["svm-gaussian-output-weighted", "logistic-output"])
def test_output_perturbation_stays_within_its_sensitivity(name):
    config = CONFIGS[name]
    res = sensitivity_search(config, seed=2, bases=("random", "balanced"), n_random=20, n_starts=1, maxiter=15,
                             n_replaced=1)
    assert res.worst.ratio <= 1 + RATIO_TOLERANCE, f"{name}: ||theta - theta'|| / Delta = {res.worst.ratio:.6f}"
    assert res.worst.ratio > 0.1, "the search found no pair moving the minimiser: it lost its power"
    n, tol = config.n, 1e-10
    W = config.weights_upper_bound or 1.0
    assert res.worst.sensitivity == pytest.approx((2 * W + 2 * n * tol) / config.gamma, rel=1e-15)


def test_release_statistic_is_the_linear_term_difference():
    config = CONFIGS["svm-objective"]
    D, D1 = config.audit_pair(3)
    m = config.fit(D, 1.0, random_state=0)
    # without smoothing the statistic at the release is ||b|| - ||b_D'(theta)|| with b the drawn term
    from pydpowl import DPSVM

    exact = DPSVM(epsilon=1.0, gamma=1.0, feature_bounds=config.bounds, fit_intercept=True, reproduce_dppack=True,
                  keep_nonprivate=True, random_state=0)
    with pytest.warns(Warning):
        exact.fit(D.X, (D.y + 1) / 2)
    t = config.audit_map(D, D1, exact.scaled_coef_[None, :], 1.0)[0, 0]
    b0 = np.linalg.norm(exact.linear_term_)
    assert t < b0 + 1e-6 and abs(t) <= 2.0 + 1e-6  # the two gradients differ by at most 2 ||x|| <= 2
    assert m.scaled_coef_.shape == (3,)


@pytest.mark.parametrize("name, n_split", [("svm-objective", 500), ("linreg-approx", 500),
                                           ("svm-gaussian-output-weighted", 400)])
def test_pydpowl_black_box_does_not_exceed_the_claim(name, n_split):
    config = CONFIGS[name]
    D, D1 = config.audit_pair(1)  # corner record with its label flipped, on a balanced base
    row = black_box_row(config, D, D1, epsilon=1.0, engine="pydpowl", n_per_split=n_split, seed=7)
    assert row.epsilon_lb <= 1.0 and row.verdict == "PASS"
    assert math.isnan(row.ideal) == (not config.sensitivity_applies)


def test_objective_perturbation_control_is_flagged():
    config = CONFIGS["svm-objective"]
    D, D1 = config.audit_pair(1)
    row = black_box_row(config, D, D1, epsilon=1.0, engine="pydpowl", n_per_split=800, seed=11, noise_epsilon=4.0,
                        control=True)
    assert row.epsilon_lb > 1.0 and row.verdict == "FLAGGED (expected)"


@pytest.mark.r
def test_dppack_objective_perturbation_does_not_exceed_its_claim(require_r):
    require_r("DPpack")
    config = CONFIGS["logistic-objective"]
    D, D1 = config.audit_pair(1)
    row = black_box_row(config, D, D1, epsilon=1.0, engine="DPpack", n_per_split=300, seed=3)
    assert row.epsilon_lb <= 1.0


@pytest.mark.parametrize("name", ["logistic-output", "svm-objective"])
def test_run_audit_takes_family_configurations(name, require_r):
    """run_audit's loop (sensitivity, then the black box per engine, DPpack included) takes the family's configs."""
    from validation.audit.run import run_audit

    config = CONFIGS[name].with_epsilons(1.0)
    result = run_audit(configs=[config], engines=("pydpowl", "DPpack"), n_per_split=200, analysis=False,
                       search_options=dict(n_random=4, n_starts=1, maxiter=3, n_replaced=1))
    assert [(r.config, r.engine) for r in result.black_box if not r.control] == [(name, "pydpowl"),
                                                                                 (name, "DPpack")]
    assert len(result.sensitivity) == (1 if config.sensitivity_applies else 0)
    assert isinstance(result.passed, bool)  # the verdict reads every configuration (none is conditional here)
