"""pydpowl.estimators._perturbation: one private fit of DPpack's ERM family, on scaled data."""

import math

import numpy as np
import pytest

from pydpowl import RRandom
from pydpowl.engine.losses import HuberHingeLoss, LogisticLoss
from pydpowl.estimators._perturbation import release_cms, release_kst


def _scaled(seed=0, n=200, d=3):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, d))
    Z /= np.maximum(1.0, np.linalg.norm(Z, axis=1))[:, None]
    return Z, np.where(rng.uniform(size=n) < 0.5, 1.0, -1.0)


def _cms(Z, y, **kw):
    args = dict(loss=HuberHingeLoss(0.5), gamma=1.0, epsilon=1.0, perturbation="objective", curvature=1.0,
                weights_upper_bound=1.0, tol=1e-10, reproduce_dppack=False, rng=np.random.default_rng(0))
    args.update(kw)
    return release_cms(Z, y, np.ones(len(y)), **args)


def test_objective_release_is_minimiser_plus_smoothing():
    Z, y = _scaled()
    rel = _cms(Z, y)
    # floating-point safe: the exact sum minimiser + noise rounded to a power-of-two grid of the smoothing noise
    from pydpowl.engine.mechanisms import round_release

    assert rel.grid is not None and rel.grid == 2.0 ** round(math.log2(rel.grid))
    np.testing.assert_array_equal(rel.coef, round_release(rel.minimiser, rel.noise, grid=rel.grid))
    assert np.all(np.abs(rel.coef - (rel.minimiser + rel.noise)) <= rel.grid / 2)
    assert np.all(np.round(rel.coef / rel.grid) * rel.grid == rel.coef)
    assert rel.epsilon_smoothing == pytest.approx(math.sqrt(200 * 1e-10 / 2), rel=1e-12)
    # r = tol / mu with the solved objective's public modulus mu = gamma/n + Delta (here eps' <= 0, so Delta > 0)
    assert rel.Delta == pytest.approx(1.0 / (200 * (math.exp(rel.epsilon_objective / 4) - 1)) - 1.0 / 200, rel=1e-12)
    assert rel.Delta > 0
    assert rel.error_radius == pytest.approx(1e-10 / (1.0 / 200 + rel.Delta), rel=1e-15)
    # the minimiser solves the perturbed objective: grad = 0 with b and n Delta
    g = Z.T @ (y * HuberHingeLoss(0.5).deriv(y * (Z @ rel.minimiser))) + (1.0 + 200 * rel.Delta) * rel.minimiser \
        + rel.linear_term
    assert np.linalg.norm(g) / 200 <= 1e-10


def test_reproduce_has_no_smoothing_and_weights_are_refused():
    Z, y = _scaled(1)
    rel = _cms(Z, y, reproduce_dppack=True)
    assert rel.epsilon_smoothing == 0.0 and np.array_equal(rel.noise, np.zeros(3)) and rel.grid is None
    with pytest.raises(ValueError, match="unweighted"):
        release_cms(Z, y, np.full(len(y), 0.5), loss=LogisticLoss(), gamma=1.0, epsilon=1.0,
                    perturbation="objective", curvature=0.25, weights_upper_bound=1.0, tol=1e-10,
                    reproduce_dppack=False, rng=np.random.default_rng(0))


def test_optimizer_gamma_only_when_reproducing():
    Z, y = _scaled(2)
    with pytest.raises(ValueError, match="optimizer_gamma"):
        _cms(Z, y, optimizer_gamma=1.0, gamma=2.0)
    rel = _cms(Z, y, optimizer_gamma=1.0, gamma=2.0, reproduce_dppack=True, epsilon=math.inf)
    ref = _cms(Z, y, gamma=1.0, epsilon=math.inf)
    np.testing.assert_allclose(rel.coef, ref.coef, rtol=1e-13)


def test_output_release_rate_both_modes():
    Z, y = _scaled(3)
    w = np.linspace(0, 2, len(y))
    kw = dict(loss=HuberHingeLoss(0.5), gamma=3.0, epsilon=0.5, perturbation="output", curvature=1.0,
              weights_upper_bound=2.0, tol=1e-10, rng=np.random.default_rng(0))
    sound = release_cms(Z, y, w, reproduce_dppack=False, **kw)
    kw["rng"] = np.random.default_rng(0)
    dpp = release_cms(Z, y, w, reproduce_dppack=True, **kw)
    assert dpp.rate == 3.0 * 0.5 / 4.0 and dpp.sensitivity == 4.0 / 3.0
    assert sound.sensitivity == pytest.approx((4.0 + 2 * 200 * 1e-10) / 3.0, rel=1e-15)
    np.testing.assert_array_equal(sound.minimiser, dpp.minimiser)


def test_kst_release_in_the_ball_and_both_modes():
    rng = np.random.default_rng(4)
    n, p = 300, 3
    Z = rng.uniform(-1, 1, (n, p))
    t = np.clip(Z @ np.array([2.0, -1.0, 0.5]) * 2 + rng.normal(size=n), -p, p)
    dpp = release_kst(Z, t, gamma=1.0, epsilon=0.5, delta=0.0, tol=1e-10, reproduce_dppack=True, rng=RRandom(1))
    sound = release_kst(Z, t, gamma=1.0, epsilon=0.5, delta=0.0, tol=1e-10, reproduce_dppack=False, rng=RRandom(1))
    for rel in (dpp, sound):
        assert np.sum(rel.coef ** 2) <= p * (1 + 1e-12)
    assert dpp.epsilon_smoothing == 0.0 and sound.epsilon_smoothing > 0
    # KKT radius 2 tol / mu, mu = (gamma + Delta)/n, Delta = 2 lambda / eps_obj with lambda = p
    assert sound.Delta == pytest.approx(2 * p / sound.epsilon_objective, rel=1e-15)
    assert sound.error_radius == pytest.approx(2 * 1e-10 * n / (1.0 + sound.Delta), rel=1e-15)


@pytest.mark.parametrize("mechanism", ["cms", "kst-pure", "kst-approx"])
def test_an_r_stream_ends_after_dppacks_draws_in_the_proven_mode(mechanism):
    """The smoothing noise does not advance an R stream: the state after the release is the state after
    DPpack's own draws (the linear term), and the release is still reproducible from the same state."""
    from pydpowl.engine.mechanisms import cms_calibration, kst_calibration, sample_kst_noise, sample_output_noise

    Z, y = _scaled(n=300)
    expected = RRandom(9)
    if mechanism == "cms":
        rel = _cms(Z, y, rng=RRandom(9))
        again = _cms(Z, y, rng=RRandom(9))
        cal = cms_calibration(epsilon=rel.epsilon_objective, gamma=1.0, c=1.0, n=300)
        b = sample_output_noise(3, cal.rate, rng=expected)
    else:
        delta = 0.0 if mechanism == "kst-pure" else 1e-3
        t = Z @ np.array([0.3, -0.2, 0.1])
        kw = dict(gamma=1.0, epsilon=1.0, delta=delta, tol=1e-10, reproduce_dppack=False)
        rel = release_kst(Z, t, rng=RRandom(9), **kw)
        again = release_kst(Z, t, rng=RRandom(9), **kw)
        b = sample_kst_noise(kst_calibration(epsilon=rel.epsilon_objective, delta=delta, p=3), rng=expected)
    r = RRandom(9)
    (_cms(Z, y, rng=r) if mechanism == "cms" else release_kst(Z, t, rng=r, **kw))
    np.testing.assert_array_equal(r.get_state(), expected.get_state())
    np.testing.assert_array_equal(rel.linear_term, b)
    assert rel.epsilon_smoothing > 0 and np.any(rel.noise != 0)
    np.testing.assert_array_equal(rel.coef, again.coef)


def test_kst_error_radius_uses_the_public_modulus_with_delta():
    """KST's objective has curvature (gamma + Delta)/n with Delta = 2 p / eps public: with a small gamma the
    smoothing noise is as small as that modulus allows, not gamma/n's (tens of times the ball's radius)."""
    Z, _ = _scaled(n=300, d=2)
    t = Z @ np.array([0.3, -0.2])
    rel = release_kst(Z, t, gamma=1e-4, epsilon=1.0, delta=0.01, tol=1e-10, reproduce_dppack=False,
                      rng=np.random.default_rng(1))
    assert rel.Delta == pytest.approx(2 * 2 / rel.epsilon_objective, rel=1e-12)
    assert rel.error_radius == pytest.approx(2e-10 * 300 / (1e-4 + rel.Delta), rel=1e-12)
    assert np.linalg.norm(rel.noise) < 1e-3  # smoothing scale 2 r / (kappa eps) is about 1e-4 here
