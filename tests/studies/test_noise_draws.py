"""Tests of pydpowl.studies.noise_draws: many releases of one solution, each distributed as a DP-OWL release."""

import numpy as np
from scipy import stats

from pydpowl import FeatureScaler
from pydpowl.studies.noise_draws import decision_values, noisy_releases


def test_releases_center_and_law():
    theta = np.array([0.3, -0.2, 0.1])
    rng = np.random.default_rng(0)
    rel = noisy_releases(theta, epsilon=2.0, gamma=10.0, weights_upper_bound=5.0, n_samples=50, n_releases=3000,
                         rng=rng)
    norms = np.linalg.norm(rel - theta, axis=1)
    delta = (10 + 2 * 50 * 1e-10) / 10.0  # (2W + 2 n tol) / gamma
    ks = stats.kstest(norms, stats.gamma(a=3, scale=delta / 2.0).cdf)
    assert ks.pvalue > 1e-3, f"KS of release noise norms vs Gamma(3, eps/Delta): p={ks.pvalue:.2e} <= 1e-3"


def test_decision_values_match_original_space_coefficients():
    scaler = FeatureScaler.from_bounds(([0, -1], [2, 1]), 2)
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 1, size=(10, 2))
    coefs = rng.normal(size=(4, 3))
    vals = decision_values(X, coefs, scaler)
    for k in range(4):
        full = scaler.coef_to_original(coefs[k])
        np.testing.assert_allclose(vals[:, k], full[0] + X @ full[1:], rtol=1e-13)
    Z, _ = scaler.transform(X)
    np.testing.assert_allclose(vals, Z @ coefs.T, rtol=1e-12)


def test_infinite_epsilon_gives_the_solution():
    theta = np.array([1.0, 2.0])
    rel = noisy_releases(theta, epsilon=np.inf, gamma=1.0, weights_upper_bound=1.0, n_samples=5, n_releases=2,
                         rng=np.random.default_rng(0))
    np.testing.assert_array_equal(rel, [theta, theta])


def test_releases_are_rounded_like_a_dpowl_release():
    """Each row is the exact sum rounded to the grid DP-OWL would use (floating-point safe)."""
    from pydpowl.engine.mechanisms import release_grid

    theta = np.array([0.3, -0.2, 0.1])
    rel = noisy_releases(theta, epsilon=1.0, gamma=10.0, weights_upper_bound=5.0, n_samples=50, n_releases=50,
                         rng=np.random.default_rng(2))
    grid = release_grid(sensitivity=(10 + 2 * 50 * 1e-10) / 10.0, epsilon=1.0)
    np.testing.assert_array_equal(np.round(rel / grid) * grid, rel)
