"""Tests of pydpowl.interop.noise: the expected noise of a release from public quantities only."""

import math

import numpy as np
import pytest

from pydpowl import DPOWL, FeatureScaler
from pydpowl.datasets import make_synthetic_owl
from pydpowl.interop.noise import owl_noise_scale, release_noise


def test_release_noise_follows_the_gamma_norm_and_the_minimiser_bound():
    scaler = FeatureScaler.from_bounds(([-2.0, -1.0], [2.0, 1.0]), 2, True)  # d = 3 coefficients
    out = release_noise(scaler, 3, epsilon=0.5, sensitivity=2.0, weights_upper_bound=4.0, gamma=8.0, huber_h=0.5,
                        n=100)
    scale = 2.0 / 0.5
    assert out["expected_norm"] == pytest.approx(3 * scale)  # E||b|| = D Delta / epsilon
    from pydpowl.engine.losses import huber_hinge_value

    l0 = float(huber_hinge_value(np.zeros(1), 0.5)[0])
    assert out["minimiser_norm_bound"] == pytest.approx(math.sqrt(2 * 100 * 4.0 * l0 / 8.0))
    assert out["dominated"] == (3 * scale >= out["minimiser_norm_bound"])
    # each coordinate's sd, mapped to the user's scale as the coefficients are
    per = np.full(3, math.sqrt(4.0) * scale)
    np.testing.assert_allclose(out["sd"], scaler.coef_to_original(per))
    assert release_noise(scaler, 3, epsilon=math.inf, sensitivity=2.0, weights_upper_bound=4.0, gamma=8.0,
                         huber_h=0.5, n=100)["expected_norm"] == 0.0


def test_owl_noise_scale_uses_the_fitted_public_settings():
    d = make_synthetic_owl(300, random_state=0)
    m = DPOWL(epsilon=1.0, gamma=10.0, weights_upper_bound=4.0, feature_bounds=d.feature_bounds, mechanism="output",
              residual=False, random_state=0).fit(d.X, d.treatment, d.benefit, 0.5)
    out = owl_noise_scale(m, 300)
    dim = np.size(m.scaled_coef_)
    assert out["expected_norm"] == pytest.approx(dim * m.sensitivity_ / m.epsilon_rule_)
