"""Tests of the K-arm value release (pydpowl.evaluation.private.private_arm_value) and of the noise
quantile with more than two Laplace terms."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from pydpowl.evaluation.private import arm_cell_sums, noise_quantile, private_arm_value, private_value


@pytest.mark.parametrize("sd, scales", [(0.5, [1.0, 1.0, 1.0, 1.0]), (0.2, [1.0, 2.0, 0.5, 0.3, 0.3]),
                                        (0.0, [1.0, 1.0, 1.0])])
def test_quantile_of_normal_plus_many_laplace_matches_monte_carlo(sd, scales):
    rng = np.random.default_rng(11)
    N = 2_000_000
    x = sd * rng.standard_normal(N) + sum(rng.laplace(0, b, N) for b in scales)
    for p in (0.95, 0.99):
        assert noise_quantile(p, sd=sd, laplace_scales=scales) == pytest.approx(np.quantile(x, p), rel=6e-3)


def test_quantile_of_three_equal_laplace_matches_the_closed_form():
    # the sum of three iid Laplace(b) has density (1/(16 b)) e^{-|u|} (3 + 3|u| + u^2), u = x / b
    b = 1.3
    q = noise_quantile(0.99, laplace_scales=[b, b, b])
    u = q / b
    tail = np.exp(-u) * (8 + 5 * u + u * u) / 16  # int_u^inf (3 + 3t + t^2) e^{-t} dt / 16
    assert tail == pytest.approx(0.01, rel=1e-8)


def _trial(rng, n, K=3, probs=None):
    probs = np.full(K, 1.0 / K) if probs is None else np.asarray(probs)
    x = rng.uniform(-1, 1, n)
    A = rng.choice(K, n, p=probs)
    B = 4 + 0.5 * (A == (x > 0).astype(int)) + 0.7 * rng.standard_normal(n)
    rule = np.where(x > 0, 1, 0)
    return rule, A, B, probs[A], probs


def test_estimates_are_the_ipw_values_when_the_noise_is_negligible():
    rng = np.random.default_rng(1)
    rule, A, B, p, probs = _trial(rng, 3000, probs=[0.5, 0.25, 0.25])
    out = private_arm_value(rule, A, B, p, n_arms=3, benefit_bounds=(0, 8), propensity_floor=probs,
                            epsilon_mean=1e9, epsilon_variance=1e9, arms=("a", "b", "c"),
                            rng=np.random.default_rng(2))
    Bc = np.clip(B, 0, 8)
    ipw = lambda d: 4.0 + np.mean((Bc - 4.0) * (A == d) / p)  # noqa: E731 - Horvitz-Thompson, centred at c
    assert out.value.estimate == pytest.approx(ipw(rule), abs=1e-6)
    for k, arm in enumerate("abc"):
        v_arm = ipw(np.full_like(A, k))
        assert out.arm_values[arm].estimate == pytest.approx(v_arm, abs=1e-6)
        assert out.versus[arm].estimate == pytest.approx(ipw(rule) - v_arm, abs=1e-6)
    assert out.difference.estimate == pytest.approx(min(v.estimate for v in out.versus.values()))
    assert out.first_moments.shape == (3, 3) and out.delta > 0
    assert_allclose(out.first_scales, 2 * 4.0 / np.array([0.5, 0.25, 0.25]) / 1e9)


def test_two_arms_give_the_two_arm_release_when_the_noise_is_negligible():
    rng = np.random.default_rng(3)
    n = 2000
    x = rng.uniform(-1, 1, n)
    A = np.where(rng.random(n) < 0.6, 1.0, -1.0)
    B = 4 + 0.5 * A * x + 0.7 * rng.standard_normal(n)
    d = np.where(x > 0, 1.0, -1.0)
    p = np.where(A > 0, 0.6, 0.4)
    two = private_value(d, A, B, p, benefit_bounds=(0, 8), propensity_floor=(0.6, 0.4), epsilon_mean=1e9,
                        epsilon_variance=1e9, rng=np.random.default_rng(1))
    code = lambda v: (v > 0).astype(int)  # noqa: E731 - arm -1 is position 0, +1 is position 1
    many = private_arm_value(code(d), code(A), B, p, n_arms=2, benefit_bounds=(0, 8), propensity_floor=(0.4, 0.6),
                             epsilon_mean=1e9, epsilon_variance=1e9, arms=(-1, 1), rng=np.random.default_rng(1))
    for a, b in ((two.value, many.value), (two.versus_plus, many.versus[1]), (two.versus_minus, many.versus[-1]),
                 (two.difference, many.difference)):
        assert (b.estimate, b.ci_low, b.ci_high) == pytest.approx((a.estimate, a.ci_low, a.ci_high), abs=1e-6)


def test_replacing_one_record_moves_the_sums_by_at_most_the_noise_calibration():
    """The sensitivity argument: sum over cells of |S - S'| / b1 <= epsilon_mean, of |Q - Q'| / b2 <=
    epsilon_variance, for random replacements (including the worst: extreme benefits, floor propensities)."""
    rng = np.random.default_rng(5)
    probs = np.array([0.5, 0.3, 0.2])
    rule, A, B, p, _ = _trial(rng, 200, probs=probs)
    h = 4.0 / probs
    b1, b2 = 2 * h / 1.0, 2 * h ** 2 / 1.0
    worst = [0.0, 0.0]
    for _ in range(400):
        i = rng.integers(200)
        r2, A2, B2, p2 = rule.copy(), A.copy(), B.copy(), p.copy()
        r2[i], A2[i] = rng.integers(3), rng.integers(3)
        B2[i] = rng.choice([0.0, 8.0, rng.uniform(0, 8)])
        B[i] = rng.choice([0.0, 8.0, B[i]])
        p2[i] = probs[A2[i]]
        S, Q, _ = arm_cell_sums(rule, A, B, p, n_arms=3, benefit_bounds=(0, 8), propensity_floor=probs)
        S2, Q2, _ = arm_cell_sums(r2, A2, B2, p2, n_arms=3, benefit_bounds=(0, 8), propensity_floor=probs)
        worst[0] = max(worst[0], float(np.sum(np.abs(S - S2) / b1[:, None])))
        worst[1] = max(worst[1], float(np.sum(np.abs(Q - Q2) / b2[:, None])))
    assert worst[0] <= 1.0 + 1e-12 and worst[1] <= 1.0 + 1e-12
    assert worst[0] > 0.9  # the bound is reached (a record at a bound moved between cells)


def test_bad_input_is_named():
    rng = np.random.default_rng(0)
    rule, A, B, p, probs = _trial(rng, 50)
    kw = dict(n_arms=3, benefit_bounds=(0, 8), epsilon_mean=1.0, epsilon_variance=1.0, rng=rng)
    with pytest.raises(ValueError, match="propensity_floor must have n_arms=3 entries"):
        private_arm_value(rule, A, B, p, propensity_floor=(0.3, 0.3), **kw)
    with pytest.raises(ValueError, match=r"treatment must hold arm positions in \[0, 2\]"):
        private_arm_value(rule, A + 1, B, p, propensity_floor=probs, **kw)
    with pytest.raises(ValueError, match="floor of the received arm"):
        private_arm_value(rule, A, B, p * 0.5, propensity_floor=probs, **kw)
