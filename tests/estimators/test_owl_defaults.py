"""DP-OWL's defaults from the utility study (pydpowl.estimators.owl_defaults)."""

import math

import pytest

from pydpowl.estimators.owl_defaults import (MIN_GAMMA, OBJECTIVE_HUBER_H, OUTPUT_HUBER_H, PAPER_MECHANISM,
                                             default_gamma)


def test_output_rule_scales_like_sqrt_n_w_d_over_epsilon():
    g = default_gamma(perturbation="output", n_samples=1459, epsilon=1.0, dim=5, weights_upper_bound=30.0,
                      huber_h=0.5)
    assert g == pytest.approx(0.6 * math.sqrt(1459 * 30.0 * 5 / 1.0))
    g4 = default_gamma(perturbation="output", n_samples=4 * 1459, epsilon=1.0, dim=5, weights_upper_bound=30.0,
                       huber_h=0.5)
    assert g4 == pytest.approx(2 * g)


def test_objective_rule_is_the_ridge_floor_times_a_factor_for_small_n_epsilon():
    W, h, d = 30.0 / 16, 1.0, 5
    floor = W * (1 / (2 * h)) / math.expm1(0.9 / 2)
    small = default_gamma(perturbation="objective", n_samples=500, epsilon=0.9, dim=d, weights_upper_bound=W,
                          huber_h=h)
    assert small == pytest.approx(floor * d * math.sqrt(1000 / (500 * 0.9)))
    large = default_gamma(perturbation="objective", n_samples=10 ** 6, epsilon=0.9, dim=d, weights_upper_bound=W,
                          huber_h=h)
    assert large == pytest.approx(floor)  # n epsilon large next to d^2: the floor itself


def test_edges_and_constants():
    assert default_gamma(perturbation="objective", n_samples=100, epsilon=math.inf, dim=3, weights_upper_bound=1.0,
                         huber_h=1.0) == 1.0
    assert default_gamma(perturbation="objective", n_samples=100, epsilon=1e9, dim=3, weights_upper_bound=1.0,
                         huber_h=1.0) == MIN_GAMMA
    assert (OBJECTIVE_HUBER_H, OUTPUT_HUBER_H) == (1.0, 0.5)
    assert PAPER_MECHANISM == {"mechanism": "output", "residual": False}
    with pytest.raises(ValueError, match="perturbation"):
        default_gamma(perturbation="laplace", n_samples=1, epsilon=1.0, dim=1, weights_upper_bound=1.0, huber_h=1.0)
