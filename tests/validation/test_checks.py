"""Checks of the validation harness on synthetic inputs that must pass or fail."""

import math

import numpy as np
import pytest

from pydpowl.engine.losses import HuberHingeLoss
from pydpowl.engine.solver import objective_value, solve_weighted_erm
from validation.checks import (
    bonferroni_rows,
    data_check,
    direction_coordinate_law,
    nonprivate_checks,
    objective_gap,
    one_sample_noise_tests,
    two_sample_noise_tests,
)

ALPHA = 0.01


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(3)
    n, d = 300, 4
    Z = rng.normal(size=(n, d))
    Z /= np.maximum(1.0, np.linalg.norm(Z, axis=1))[:, None]
    y = np.where(Z @ np.array([1.0, -1.0, 0.5, 0.0]) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    w = rng.uniform(0.0, 2.0, n)
    gamma = 3.0
    theta = solve_weighted_erm(Z, y, w, gamma=gamma, loss=HuberHingeLoss(0.5)).x
    return Z, y, w, gamma, theta


def _verdicts(rows):
    return {r.check.split(" ")[0]: r.verdict for r in rows}


def test_objective_gap_by_hand():
    # one row z = 1, y = 1, w = 2, h = 0.5, gamma = 1 (n = 1):
    # theta = 0: margin 0 < 1 - h, loss 1;            F = 2 * 1 = 2
    # theta = 1: margin 1 in the quadratic zone, loss (1.5 - 1)^2 / 2 = 0.125; F = 0.25 + 0.5 = 0.75
    gap = objective_gap([0.0], [1.0], np.array([[1.0]]), np.array([1.0]), np.array([2.0]), gamma=1.0,
                        loss=HuberHingeLoss(0.5))
    assert gap == pytest.approx(2.0 - 0.75, abs=1e-15)


def test_nonprivate_passes_when_dppack_stops_early(problem):
    Z, y, w, gamma, theta = problem
    early = theta + 1e-4 * np.array([1.0, -2.0, 0.5, 1.0])  # an optimiser that stopped short
    rows, s = nonprivate_checks("t", Z, y, w, gamma=gamma, loss="huber", theta_py=theta, theta_r=early)
    assert all(r.verdict == "PASS" for r in rows), [(r.check, r.statistic, r.threshold) for r in rows]
    assert s.gap > 0 and s.distance <= s.bound
    assert s.max_abs_diff_scaled == pytest.approx(2e-4)


def test_nonprivate_fails_when_pydpowl_is_worse(problem):
    Z, y, w, gamma, theta = problem
    worse = theta + 1e-3 * np.array([1.0, 1.0, 1.0, 1.0])
    rows, _ = nonprivate_checks("t", Z, y, w, gamma=gamma, loss="huber", theta_py=worse, theta_r=theta)
    assert rows[0].verdict == "FAIL", "F(theta_py) > F(theta_R) + 1e-12 must fail"


def test_nonprivate_distance_fails_when_not_explained_by_gap(problem):
    Z, y, w, gamma, theta = problem
    v = 1e-3 * np.array([0.3, -0.2, 0.9, 0.1])
    # symmetric around the minimiser: nearly equal F, far apart
    rows, s = nonprivate_checks("t", Z, y, w, gamma=gamma, loss="huber", theta_py=theta - v, theta_r=theta + v)
    dist_row = rows[1]
    assert dist_row.verdict == "FAIL", f"distance {s.distance:.2e} vs bound {s.bound:.2e} must fail"


def test_nonprivate_counts_treatment_differences(problem):
    Z, y, w, gamma, theta = problem
    flipped = -theta
    _, s = nonprivate_checks("t", Z, y, w, gamma=gamma, loss="huber", theta_py=theta, theta_r=flipped)
    expected = int(np.count_nonzero((Z @ theta > 0) != (Z @ flipped > 0)))
    assert s.n_treatment_differs == expected > 250


def test_data_check():
    rng = np.random.default_rng(0)
    Z, y, w = rng.normal(size=(20, 3)), np.ones(20), rng.uniform(size=20)
    assert data_check("t", Z, y, w, Z.copy(), y.copy(), w.copy()).verdict == "PASS"
    Z2 = Z.copy()
    Z2[3, 1] += 1e-9
    assert data_check("t", Z, y, w, Z2, y, w).verdict == "FAIL"
    assert data_check("t", Z, y, w, Z[:-1], y[:-1], w[:-1]).verdict == "FAIL"


def test_direction_coordinate_law_by_hand():
    # d = 3: Archimedes - a coordinate of a uniform point on the sphere is uniform on [-1, 1]
    assert direction_coordinate_law(3).cdf(0.5) == pytest.approx(0.75, abs=1e-12)
    # d = 2: u = cos(phi), phi uniform; P(u <= 1/2) = P(phi >= pi/3 on [0, pi]) = 2/3
    assert direction_coordinate_law(2).cdf(0.5) == pytest.approx(2.0 / 3.0, abs=1e-12)
    with pytest.raises(ValueError, match="d must be >= 2"):
        direction_coordinate_law(1)


def _noise(rng, k, d, rate, anisotropy=None):
    z = rng.standard_normal((k, d))
    if anisotropy is not None:
        z = z * anisotropy
    return z / np.linalg.norm(z, axis=1)[:, None] * rng.gamma(d, 1.0 / rate, size=k)[:, None]


def test_one_sample_tests_pass_on_the_exact_law_and_fail_otherwise():
    rng = np.random.default_rng(42)
    k, d, rate = 1000, 5, 2.0
    good = one_sample_noise_tests("c", "e", _noise(rng, k, d, rate), rate)
    assert len(good) == d + 1
    rows, thr = bonferroni_rows(good, ALPHA)
    assert thr == pytest.approx(ALPHA / (d + 1))
    assert all(r.verdict == "PASS" for r in rows), [(r.check, r.p_value) for r in rows]
    wrong_rate = one_sample_noise_tests("c", "e", _noise(rng, k, d, rate * 1.25), rate)
    assert wrong_rate[0].p_value < ALPHA / (d + 1), f"norm KS p={wrong_rate[0].p_value:.2e} for a 25% rate error"
    skewed = one_sample_noise_tests("c", "e", _noise(rng, k, d, rate, anisotropy=[2.0, 1, 1, 1, 1]), rate)
    assert skewed[1].p_value < ALPHA / (d + 1), f"u0 KS p={skewed[1].p_value:.2e} for an anisotropic direction"


def test_two_sample_tests():
    rng = np.random.default_rng(7)
    a, b = _noise(rng, 800, 4, 1.0), _noise(rng, 800, 4, 1.0)
    same = two_sample_noise_tests("c", a, b)
    assert min(t.p_value for t in same) > ALPHA / len(same)
    differ = two_sample_noise_tests("c", a, _noise(rng, 800, 4, 1.3))
    assert differ[0].p_value < ALPHA / len(differ), "norms with rates 1 and 1.3 must differ"


def test_bonferroni_threshold_and_verdicts():
    from validation.checks import KSTest

    tests = [KSTest("c", f"t{i}", "e", 0.1, p, 100) for i, p in enumerate([0.5, 0.002, 0.0009])]
    rows, thr = bonferroni_rows(tests, 0.01)
    assert thr == pytest.approx(0.01 / 3)
    assert [r.verdict for r in rows] == ["PASS", "FAIL", "FAIL"]
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\)"):
        bonferroni_rows(tests, 1.5)


def test_gap_matches_difference_of_objectives(problem):
    Z, y, w, gamma, theta = problem
    other = theta + 0.01
    loss = HuberHingeLoss(0.5)
    direct = objective_value(other, Z, y, w, gamma=gamma, loss=loss) - objective_value(theta, Z, y, w,
                                                                                       gamma=gamma, loss=loss)
    assert objective_gap(other, theta, Z, y, w, gamma=gamma, loss=loss) == pytest.approx(direct, rel=1e-9)
    assert not math.isnan(direct)


def test_replay_check():
    from validation.checks import replay_check

    rng = np.random.default_rng(2)
    noise = rng.normal(size=(20, 5)) * 30
    assert replay_check("c", noise + 1e-14, noise).verdict == "PASS"
    assert replay_check("c", noise * (1 + 1e-6), noise).verdict == "FAIL"
    assert replay_check("c", noise[:-1], noise).verdict == "FAIL"
