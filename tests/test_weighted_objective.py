"""Weighted objective perturbation (pydpowl.engine.weighted_objective): constants, law and release."""

import math

import numpy as np
import pytest
from scipy import stats

from pydpowl.engine.losses import CustomLoss, HuberHingeLoss, LogisticLoss
from pydpowl.engine.mechanisms import cms_calibration
from pydpowl.engine.weighted_objective import (ObjectiveCalibration, loss_curvature, objective_calibration,
                                               objective_ridge_floor, release_objective_perturbation)


def _data(n=400, d=3, W=5.0, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.uniform(-1, 1, (n, d))
    Z /= np.maximum(1.0, np.linalg.norm(Z, axis=1))[:, None]
    y = rng.choice([-1.0, 1.0], n)
    w = rng.uniform(0, W, n)
    return Z, y, w


def test_calibration_raises_the_ridge_to_the_floor_and_splits_the_budget():
    # W c / (e^{eps/2} - 1) with W = 30, c = 1, eps = 1; the Jacobian then costs exactly eps / 2
    cal = objective_calibration(epsilon=1.0, gamma=1.0, weights_upper_bound=30.0, curvature=1.0)
    assert cal.ridge == pytest.approx(30.0 / (math.exp(0.5) - 1.0), rel=1e-14)
    assert cal.extra_ridge == pytest.approx(cal.ridge - 1.0, rel=1e-14)
    assert cal.epsilon_jacobian == pytest.approx(0.5, rel=1e-12)
    assert cal.epsilon_linear == pytest.approx(0.5, rel=1e-12)
    assert cal.gradient_sensitivity == 60.0
    assert cal.rate == pytest.approx(0.5 / 60.0, rel=1e-12)


def test_calibration_keeps_a_large_gamma_and_gives_the_rest_to_the_linear_term():
    cal = objective_calibration(epsilon=2.0, gamma=500.0, weights_upper_bound=4.0, curvature=0.25, lipschitz=1.0)
    assert cal.ridge == 500.0 and cal.extra_ridge == 0.0
    assert cal.epsilon_jacobian == pytest.approx(math.log(1.0 + 4.0 * 0.25 / 500.0), rel=1e-14)
    assert cal.rate == pytest.approx((2.0 - math.log(1.002)) / 8.0, rel=1e-14)


def test_floor_share_and_infinite_epsilon():
    assert objective_ridge_floor(epsilon=1.0, weights_upper_bound=2.0, curvature=1.0, jacobian_share=0.25) == \
        pytest.approx(2.0 / math.expm1(0.25))
    cal = objective_calibration(epsilon=math.inf, gamma=3.0, weights_upper_bound=2.0, curvature=1.0)
    assert cal.ridge == 3.0 and cal.rate == math.inf
    with pytest.raises(ValueError, match="jacobian_share"):
        objective_ridge_floor(epsilon=1.0, weights_upper_bound=2.0, curvature=1.0, jacobian_share=1.0)


@pytest.mark.parametrize("eps,gamma", [(0.5, 0.1), (1.0, 1.0), (2.0, 10.0), (5.0, 0.01)])
def test_tighter_than_dppacks_cms_constants_for_unit_weights(eps, gamma):
    """With W = 1 the Jacobian term is log(1 + c/lambda), half of CMS's log(1 + 2c/gamma + c^2/gamma^2)."""
    c = 1.0
    ours = objective_calibration(epsilon=eps, gamma=gamma, weights_upper_bound=1.0, curvature=c)
    cms = cms_calibration(epsilon=eps, gamma=gamma, c=c, n=1)
    if cms.Delta == 0:  # CMS's ordinary branch: same ridge gamma, budget eps - 2 log(1 + c/gamma)
        assert ours.epsilon_linear >= cms.epsilon_prime
    assert ours.epsilon_linear >= eps / 2.0 - 1e-12


def test_loss_without_a_curvature_bound_is_refused():
    loss = CustomLoss(value=lambda m: np.logaddexp(0, -m), deriv=lambda m: -1 / (1 + np.exp(m)),
                      deriv2=lambda m: np.exp(m) / (1 + np.exp(m)) ** 2, lipschitz=1.0)
    with pytest.raises(ValueError, match="curvature"):
        loss_curvature(loss)
    assert loss_curvature(LogisticLoss()) == 0.25


def test_release_is_the_minimiser_of_the_perturbed_objective_plus_a_tiny_smoothing_noise():
    Z, y, w = _data()
    n, d = Z.shape
    loss = HuberHingeLoss(0.5)
    rel = release_objective_perturbation(Z, y, w, epsilon=1.0, gamma=2.0, weights_upper_bound=5.0, loss=loss,
                                         rng=np.random.default_rng(1))
    lam = rel.calibration.ridge
    # first-order condition of G at the minimiser, computed here: sum w y l' z + lam theta + b = 0
    theta = rel.minimiser
    grad = (w * y * loss.deriv(y * (Z @ theta))) @ Z + lam * theta + rel.linear_term
    assert np.linalg.norm(grad) / n <= 1e-10
    assert rel.error_radius == pytest.approx(n * 1e-10 / lam)
    kappa = math.sqrt(n * 1e-10 / (2.0 * 5.0))
    assert rel.epsilon_smoothing == pytest.approx(kappa * 1.0, rel=1e-12)
    assert rel.epsilon_objective + rel.epsilon_smoothing == pytest.approx(1.0, rel=1e-15)
    # rounded to the grid of the smoothing noise
    assert np.all(rel.coef / rel.grid == np.round(rel.coef / rel.grid))
    assert np.linalg.norm(rel.coef - theta) < 1e-3


def test_linear_term_has_the_calibrated_law():
    """||b|| ~ Gamma(d, rate) with rate epsilon_linear / (2 W): KS test over releases."""
    Z, y, w = _data(n=60, d=2, W=3.0, seed=2)
    loss = HuberHingeLoss(0.5)
    rng = np.random.default_rng(3)
    norms, cal = [], None
    for _ in range(600):
        rel = release_objective_perturbation(Z, y, w, epsilon=1.0, gamma=1.0, weights_upper_bound=3.0, loss=loss,
                                             rng=rng)
        norms.append(np.linalg.norm(rel.linear_term))
        cal = rel.calibration
    assert stats.kstest(norms, stats.gamma(a=2, scale=1.0 / cal.rate).cdf).pvalue > 1e-3
    assert isinstance(cal, ObjectiveCalibration)


def test_infinite_epsilon_releases_the_exact_minimiser_at_gamma():
    Z, y, w = _data(n=100, seed=4)
    rel = release_objective_perturbation(Z, y, w, epsilon=math.inf, gamma=3.0, weights_upper_bound=5.0,
                                         loss=HuberHingeLoss(0.5), rng=np.random.default_rng(0))
    assert rel.grid is None and rel.calibration.ridge == 3.0
    np.testing.assert_array_equal(rel.coef, rel.minimiser)
