"""Residual OWL weights under DP (pydpowl.estimators.residual)."""

import math

import numpy as np
import pytest
from scipy import stats

from pydpowl.estimators.residual import (ResidualWeights, check_benefit_bounds, release_baseline,
                                         residual_problem, residual_weight_bound)


def _trial(n=300, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.choice([-1.0, 1.0], n)
    B = rng.normal(2.0, 3.0, n)
    p = np.where(A > 0, 2 / 3, 1 / 3)
    return A, B, p


def test_baseline_is_the_clipped_mean_plus_laplace_noise_of_the_stated_scale():
    rng = np.random.default_rng(1)
    B = rng.uniform(-3, 12, 200)  # some outside the bounds [0, 10]
    exact = float(np.clip(B, 0, 10).mean())
    draws = np.array([release_baseline(B, benefit_bounds=(0, 10), epsilon=2.0, rng=rng).value for _ in range(2000)])
    scale = 10.0 / (200 * 2.0)
    assert stats.kstest(draws - exact, stats.laplace(scale=scale).cdf).pvalue > 1e-3
    one = release_baseline(B, benefit_bounds=(0, 10), epsilon=2.0, rng=rng)
    assert one.scale == pytest.approx(scale) and one.value / one.grid == round(one.value / one.grid)


def test_baseline_is_clipped_to_the_bounds_and_exact_at_infinite_epsilon():
    B = np.full(5, 10.0)
    rel = release_baseline(B, benefit_bounds=(0, 10), epsilon=0.01, rng=np.random.default_rng(2))
    assert 0.0 <= rel.value <= 10.0
    assert release_baseline(np.array([1.0, 3.0]), benefit_bounds=(0, 10), epsilon=math.inf, rng=None).value == 2.0


def test_residual_labels_and_weights_leave_the_optimal_rule_unchanged():
    """sum_i r_i/p_i 1{d_i = A_i} = sum_i w_i 1{d_i = label_i} - const for every rule d (no clipping here)."""
    A, B, p = _trial()
    prob = residual_problem(A, B, p, baseline=2.5, benefit_bounds=(-20, 25), weights_upper_bound=1000.0,
                            clip_share=1.0)
    assert prob.n_clipped_residuals == 0 and prob.n_clipped_weights == 0
    r = B - 2.5
    const = np.abs(r[r < 0] / p[r < 0]).sum()
    rng = np.random.default_rng(3)
    for _ in range(20):
        d = rng.choice([-1.0, 1.0], A.size)
        lhs = (r / p * (d == A)).sum()
        rhs = (prob.weights * (d == prob.labels)).sum() - const
        assert lhs == pytest.approx(rhs, rel=1e-12, abs=1e-9)


def test_residuals_are_clipped_to_a_share_of_the_range_and_weights_bounded():
    A, B, p = _trial()
    prob = residual_problem(A, B, p, baseline=2.0, benefit_bounds=(-4.0, 8.0), weights_upper_bound=36.0,
                            clip_share=0.25)
    R = 0.25 * 12.0
    Bc = np.clip(B, -4, 8)
    assert prob.n_clipped_benefits == int(np.count_nonzero(Bc != B))
    assert prob.n_clipped_residuals == int(np.count_nonzero(np.abs(Bc - 2.0) > R))
    assert prob.weights_upper_bound == residual_weight_bound(36.0, 0.25) == 9.0
    np.testing.assert_allclose(prob.weights, np.minimum(np.minimum(np.abs(Bc - 2.0), R) / p, 9.0))
    assert np.all(prob.labels == np.where(Bc - 2.0 < 0, -A, A))


def test_one_replaced_record_moves_only_its_own_weight_given_the_baseline():
    A, B, p = _trial(n=50, seed=5)
    before = residual_problem(A, B, p, baseline=1.0, benefit_bounds=(-5, 9), weights_upper_bound=28.0)
    A2, B2 = A.copy(), B.copy()
    A2[7], B2[7] = -A2[7], 100.0
    after = residual_problem(A2, B2, p, baseline=1.0, benefit_bounds=(-5, 9), weights_upper_bound=28.0)
    changed = np.flatnonzero((before.weights != after.weights) | (before.labels != after.labels))
    assert set(changed) <= {7}


def test_settings_are_checked_with_the_argument_named():
    with pytest.raises(ValueError, match="baseline_share"):
        ResidualWeights(baseline_share=1.0)
    with pytest.raises(ValueError, match="clip_share"):
        ResidualWeights(clip_share=0.0)
    with pytest.raises(ValueError, match="benefit_bounds"):
        check_benefit_bounds((3.0, 1.0))
    assert ResidualWeights().split(1.0) == pytest.approx((0.1, 0.9))
