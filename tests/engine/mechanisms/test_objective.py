"""pydpowl.engine.mechanisms.objective: CMS, KST and weighted objective perturbation, solver smoothing, one private
fit."""

import math

import numpy as np
import pytest

from pydpowl import RRandom
from scipy import stats

from pydpowl.engine.losses import CustomLoss, HuberHingeLoss, LogisticLoss
from pydpowl.engine.mechanisms.objective import (
    WeightedObjectiveCalibration,
    cms_calibration,
    kst_calibration,
    loss_curvature,
    objective_ridge_floor,
    release_cms,
    release_kst,
    release_weighted_objective,
    sample_kst_noise,
    smoothing_rate,
    smoothing_share,
    weighted_objective_calibration,
)


def test_cms_calibration_without_extra_curvature():
    # c = 1 (h = 0.5), gamma = 2: eps' = eps - log(1 + 1 + 1/4) = eps - log(2.25)
    cal = cms_calibration(epsilon=2.0, gamma=2.0, c=1.0, n=100)
    assert cal.epsilon_prime == pytest.approx(2.0 - math.log(2.25), rel=1e-15)
    assert cal.Delta == 0.0 and cal.rate == cal.epsilon_prime / 2


def test_cms_calibration_with_extra_curvature():
    # eps = 0.5, c = 1, gamma = 1: eps - log(4) < 0, so Delta = c/(n(e^{eps/4} - 1)) - gamma/n and eps' = eps/2
    n = 50
    cal = cms_calibration(epsilon=0.5, gamma=1.0, c=1.0, n=n)
    assert cal.epsilon_prime == 0.25 and cal.rate == 0.125
    assert cal.Delta == pytest.approx(1.0 / (n * (math.exp(0.125) - 1.0)) - 1.0 / n, rel=1e-15)
    # then (gamma/n + Delta) n = c / (e^{eps/4} - 1): log(1 + c / (n (Lambda + Delta)))^2 = eps/2 exactly
    lam = 1.0 / n + cal.Delta
    assert 2 * math.log(1 + 1.0 / (n * lam)) == pytest.approx(0.25, rel=1e-12)


def test_cms_calibration_infinite_epsilon():
    cal = cms_calibration(epsilon=math.inf, gamma=1.0, c=0.25, n=10)
    assert cal.Delta == 0.0 and cal.rate == math.inf


@pytest.mark.parametrize("p", [1, 2, 5])
def test_kst_constants(p):
    cal = kst_calibration(epsilon=2.0, delta=0.0, p=p)
    assert cal.zeta == pytest.approx(2 * p ** 1.5, rel=1e-15) and cal.lam == p
    assert cal.Delta == pytest.approx(p, rel=1e-15) and cal.rate == pytest.approx(2.0 / (2 * cal.zeta), rel=1e-15)
    g = kst_calibration(epsilon=2.0, delta=1e-3, p=p)
    assert g.variance == pytest.approx(cal.zeta ** 2 * (8 * math.log(2e3) + 8.0) / 4.0, rel=1e-14)


def test_kst_refuses_infinite_epsilon_with_delta_and_bad_delta():
    with pytest.raises(ValueError, match="epsilon=inf with delta > 0"):
        kst_calibration(epsilon=math.inf, delta=0.1, p=2)
    for bad in (-0.1, 1.0, float("nan"), "0"):
        with pytest.raises(ValueError, match=r"delta must be in \[0, 1\)"):
            kst_calibration(epsilon=1.0, delta=bad, p=2)


def test_kst_noise_for_infinite_epsilon_draws_like_dppack_and_is_zero(fake_r_stream):
    fake = fake_r_stream()
    cal = kst_calibration(epsilon=math.inf, delta=0.0, p=2)
    assert np.array_equal(sample_kst_noise(cal, rng=fake), np.zeros(2))
    assert fake.calls == [("rgamma", 1, 2, math.inf), ("rnorm", 2)]


def test_smoothing_share_and_rate():
    # kappa = sqrt(r n mu / s); with r = tol / mu that is sqrt(n tol / s), kept in [min(1/64, n 2^-24), 1/2]
    assert smoothing_share(n=20000, tol=1e-6, error_radius=1e-6 / 1e-4, strong_convexity=1e-4,
                           gradient_sensitivity=2.0) == pytest.approx(math.sqrt(20000 * 1e-6 / 2), rel=1e-12)
    assert smoothing_share(n=20000, tol=1e-10, error_radius=1e-10 / 1e-4, strong_convexity=1e-4,
                           gradient_sensitivity=2.0) == 20000 * 2.0 ** -24
    assert smoothing_share(n=10 ** 6, tol=1e-14, error_radius=1e-14 / 1e-6, strong_convexity=1e-6,
                           gradient_sensitivity=2.0) == 1 / 64
    assert smoothing_share(n=10 ** 12, tol=1.0, error_radius=1.0, strong_convexity=1.0, gradient_sensitivity=2.0) == 0.5
    assert smoothing_rate(epsilon=0.5, error_radius=0.25) == 1.0
    with pytest.raises(ValueError, match="error_radius"):
        smoothing_rate(epsilon=1.0, error_radius=0.0)


def test_smoothing_noise_has_the_l2_laplace_law():
    from pydpowl.engine.mechanisms import sample_smoothing_noise

    rng = np.random.default_rng(5)
    norms = np.array([np.linalg.norm(sample_smoothing_noise(3, epsilon=2.0, error_radius=0.5, rng=rng))
                      for _ in range(4000)])
    # ||b|| ~ Gamma(3, rate = epsilon / (2 r) = 2): mean 1.5, variance 0.75
    assert abs(norms.mean() - 1.5) < 4 * math.sqrt(0.75 / 4000)


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
    from pydpowl.engine.mechanisms.objective import linear_term_shift

    # kappa = sqrt(r0 n mu0 / 2) at the full budget's calibration, r0 = tol/mu0 + the linear term's shift
    cal0 = cms_calibration(epsilon=1.0, gamma=1.0, c=1.0, n=200)
    mu0 = 1.0 / 200 + cal0.Delta
    r0 = 1e-10 / mu0 + linear_term_shift(dim=3, modulus=200 * mu0, rate=cal0.rate)
    assert rel.epsilon_smoothing == pytest.approx(math.sqrt(r0 * 200 * mu0 / 2), rel=1e-12)  # above n 2^-24
    # r = tol / mu with the solved objective's public modulus mu = gamma/n + Delta (here eps' <= 0, so Delta > 0)
    assert rel.Delta == pytest.approx(1.0 / (200 * (math.exp(rel.epsilon_objective / 4) - 1)) - 1.0 / 200, rel=1e-12)
    assert rel.Delta > 0
    shift = linear_term_shift(dim=3, modulus=1.0 + 200 * rel.Delta, rate=rel.rate)  # the linear term's sampler
    assert rel.error_radius == pytest.approx(1e-10 / (1.0 / 200 + rel.Delta) + shift, rel=1e-15)
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


def test_kst_release_of_rows_needs_their_targets():
    Z = np.random.default_rng(4).uniform(-1, 1, (20, 2))
    with pytest.raises(ValueError, match=r"y \(the targets\) is required when Z holds the rows"):
        release_kst(Z, gamma=1.0, epsilon=0.5, delta=0.0, tol=1e-10, reproduce_dppack=False, rng=RRandom(1))


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
    # KKT radius (ball_error_radius with L = p + mu), mu = (gamma + Delta)/n, Delta = 2 lambda / eps_obj, lambda = p
    assert sound.Delta == pytest.approx(2 * p / sound.epsilon_objective, rel=1e-15)
    from pydpowl.engine.mechanisms.objective import linear_term_shift

    from pydpowl.engine.solver import ball_error_radius

    shift = linear_term_shift(dim=p, modulus=1.0 + sound.Delta, rate=sound.rate)  # the linear term's sampler
    mu = (1.0 + sound.Delta) / n
    assert sound.error_radius == pytest.approx(ball_error_radius(1e-10, mu, math.sqrt(p), p + mu) + shift,
                                               rel=1e-15)
    assert 2 * 1e-10 / mu < sound.error_radius - shift <= 2 * 1e-10 / mu + 2.0 ** -23 * math.sqrt(p)


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
    from pydpowl.engine.mechanisms.objective import linear_term_shift

    cal = kst_calibration(epsilon=rel.epsilon_objective, delta=0.01, p=2)
    shift = linear_term_shift(dim=2, modulus=1e-4 + rel.Delta, variance=cal.variance)
    from pydpowl.engine.solver import ball_error_radius

    mu = (1e-4 + rel.Delta) / 300
    assert rel.error_radius == pytest.approx(ball_error_radius(1e-10, mu, math.sqrt(2), 2 + mu) + shift, rel=1e-12)
    # smoothing scale 2 r / (kappa eps) is about 5e-3 here (r is floored by the ball's rounding, 2^-23 R), far
    # below the ball's radius sqrt(2) and the Gaussian term's displacement (about 0.4)
    assert np.linalg.norm(rel.noise) < 0.05


def test_smoothing_radius_covers_the_linear_terms_sampler_error():
    """The proofs hold for an exact linear term b; the computed one is within the sampler model's error, which
    moves the minimiser by at most that over n mu: the smoothing's radius includes it (CMS and KST)."""
    from pydpowl.engine.mechanisms.objective import linear_term_shift, objective_coupling_failure
    from pydpowl.engine.solver import ball_error_radius

    Z, y = _scaled(n=300)
    rel = _cms(Z, y, tol=1e-13)
    shift = linear_term_shift(dim=3, modulus=1.0 + 300 * rel.Delta, rate=rel.rate)
    assert rel.error_radius == pytest.approx(1e-13 / (1.0 / 300 + rel.Delta) + shift, rel=1e-15)
    assert shift > 0 and objective_coupling_failure(3) < 2.0 ** -32
    t = Z @ np.array([0.3, -0.2, 0.1])
    for delta in (0.0, 0.01):
        k = release_kst(Z, t, gamma=1.0, epsilon=1.0, delta=delta, tol=1e-13, reproduce_dppack=False,
                        rng=np.random.default_rng(0))
        cal = kst_calibration(epsilon=k.epsilon_objective, delta=delta, p=3)
        extra = linear_term_shift(dim=3, modulus=1.0 + cal.Delta, **({"rate": cal.rate} if delta == 0 else
                                                                     {"variance": cal.variance}))
        mu = (1.0 + cal.Delta) / 300
        assert k.error_radius == pytest.approx(ball_error_radius(1e-13, mu, math.sqrt(3), 3 + mu) + extra, rel=1e-12)


# --------------------------------------------------------------------------- weighted objective perturbation


def _weighted_data(n=400, d=3, W=5.0, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.uniform(-1, 1, (n, d))
    Z /= np.maximum(1.0, np.linalg.norm(Z, axis=1))[:, None]
    y = rng.choice([-1.0, 1.0], n)
    w = rng.uniform(0, W, n)
    return Z, y, w


def test_calibration_raises_the_ridge_to_the_floor_and_splits_the_budget():
    # W c / (e^{eps/2} - 1) with W = 30, c = 1, eps = 1; the Jacobian then costs exactly eps / 2
    cal = weighted_objective_calibration(epsilon=1.0, gamma=1.0, weights_upper_bound=30.0, curvature=1.0)
    assert cal.ridge == pytest.approx(30.0 / (math.exp(0.5) - 1.0), rel=1e-14)
    assert cal.extra_ridge == pytest.approx(cal.ridge - 1.0, rel=1e-14)
    assert cal.epsilon_jacobian == pytest.approx(0.5, rel=1e-12)
    assert cal.epsilon_linear == pytest.approx(0.5, rel=1e-12)
    assert cal.gradient_sensitivity == 60.0
    assert cal.rate == pytest.approx(0.5 / 60.0, rel=1e-12)


def test_calibration_keeps_a_large_gamma_and_gives_the_rest_to_the_linear_term():
    cal = weighted_objective_calibration(epsilon=2.0, gamma=500.0, weights_upper_bound=4.0, curvature=0.25,
                                         lipschitz=1.0)
    assert cal.ridge == 500.0 and cal.extra_ridge == 0.0
    assert cal.epsilon_jacobian == pytest.approx(math.log(1.0 + 4.0 * 0.25 / 500.0), rel=1e-14)
    assert cal.rate == pytest.approx((2.0 - math.log(1.002)) / 8.0, rel=1e-14)


def test_floor_share_and_infinite_epsilon():
    assert objective_ridge_floor(epsilon=1.0, weights_upper_bound=2.0, curvature=1.0, jacobian_share=0.25) == \
        pytest.approx(2.0 / math.expm1(0.25))
    cal = weighted_objective_calibration(epsilon=math.inf, gamma=3.0, weights_upper_bound=2.0, curvature=1.0)
    assert cal.ridge == 3.0 and cal.rate == math.inf
    with pytest.raises(ValueError, match="jacobian_share"):
        objective_ridge_floor(epsilon=1.0, weights_upper_bound=2.0, curvature=1.0, jacobian_share=1.0)


@pytest.mark.parametrize("eps,gamma", [(0.5, 0.1), (1.0, 1.0), (2.0, 10.0), (5.0, 0.01)])
def test_tighter_than_dppacks_cms_constants_for_unit_weights(eps, gamma):
    """With W = 1 the Jacobian term is log(1 + c/lambda), half of CMS's log(1 + 2c/gamma + c^2/gamma^2)."""
    c = 1.0
    ours = weighted_objective_calibration(epsilon=eps, gamma=gamma, weights_upper_bound=1.0, curvature=c)
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
    Z, y, w = _weighted_data()
    n, d = Z.shape
    loss = HuberHingeLoss(0.5)
    rel = release_weighted_objective(Z, y, w, epsilon=1.0, gamma=2.0, weights_upper_bound=5.0, loss=loss,
                                     tol=1e-10, rng=np.random.default_rng(1))
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
    Z, y, w = _weighted_data(n=60, d=2, W=3.0, seed=2)
    loss = HuberHingeLoss(0.5)
    rng = np.random.default_rng(3)
    norms, cal = [], None
    for _ in range(600):
        rel = release_weighted_objective(Z, y, w, epsilon=1.0, gamma=1.0, weights_upper_bound=3.0, loss=loss,
                                         tol=1e-10, rng=rng)
        norms.append(np.linalg.norm(rel.linear_term))
        cal = rel.calibration
    assert stats.kstest(norms, stats.gamma(a=2, scale=1.0 / cal.rate).cdf).pvalue > 1e-3
    assert isinstance(cal, WeightedObjectiveCalibration)


def test_infinite_epsilon_releases_the_exact_minimiser_at_gamma():
    Z, y, w = _weighted_data(n=100, seed=4)
    rel = release_weighted_objective(Z, y, w, epsilon=math.inf, gamma=3.0, weights_upper_bound=5.0,
                                     loss=HuberHingeLoss(0.5), tol=1e-10, rng=np.random.default_rng(0))
    assert rel.grid is None and rel.calibration.ridge == 3.0
    np.testing.assert_array_equal(rel.coef, rel.minimiser)
