"""pydpowl.engine.mechanisms.output: Algorithm 1's sensitivity, its noise and the one output release."""

import numpy as np
import pytest
from scipy import stats

from pydpowl.engine.mechanisms.output import (
    noise_rate,
    output_sensitivity,
    sample_output_noise,
    sample_output_noise_batch,
)

ALPHA = 1e-3  # KS tests with fixed seeds: fail if p < 0.001


EXACT = dict(n_samples=10, tol=0.0)  # an exact minimiser: no tolerance term


def test_sensitivity_formula():
    assert output_sensitivity(gamma=4.0, weights_upper_bound=3.0, C=2.0, **EXACT) == pytest.approx((2.0 + 6.0) / 4.0)
    assert output_sensitivity(gamma=75.0, weights_upper_bound=1.0, **EXACT) == pytest.approx(2.0 / 75.0)


def test_rate_without_tolerance_term_uses_dppack_operation_order():
    # DPpack: beta <- gamma*eps/(2*weights.upper.bound); L = 1, C = 0 and tol = 0 add exact operations only
    gamma, eps, w = 75.0, 0.3, np.log(24 * 365) / (1 / 3)
    assert noise_rate(epsilon=eps, gamma=gamma, weights_upper_bound=w, **EXACT) == gamma * eps / (2 * w)
    assert noise_rate(epsilon=np.inf, gamma=gamma, weights_upper_bound=w, **EXACT) == np.inf


@pytest.mark.parametrize("kwargs, match", [
    (dict(gamma=0.0, weights_upper_bound=1.0), r"gamma must be in \(0, inf\)"),
    (dict(gamma=1.0, weights_upper_bound=-2.0), r"weights_upper_bound must be in \(0, inf\)"),
    (dict(gamma=1.0, weights_upper_bound=1.0, C=-1.0), r"C must be in \[0, inf\)"),
    (dict(gamma=1.0, weights_upper_bound=1.0, C=float("nan")), r"C must be in \[0, inf\)"),
    (dict(gamma=1.0, weights_upper_bound=1.0, lipschitz=0.0), r"lipschitz must be in \(0, inf\)"),
    (dict(gamma=1.0, weights_upper_bound=1.0, tol=-1e-3), r"tol must be in \[0, inf\)"),
    (dict(gamma=1.0, weights_upper_bound=1.0, n_samples=-1), r"n_samples must be an integer >= 0"),
])
def test_bad_sensitivity_inputs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        output_sensitivity(**{**EXACT, **kwargs})


@pytest.mark.parametrize("eps", [0.0, -1.0, float("nan")])
def test_bad_epsilon(eps):
    with pytest.raises(ValueError, match=r"epsilon must be in \(0, inf\]"):
        noise_rate(epsilon=eps, gamma=1.0, weights_upper_bound=1.0, **EXACT)


def test_epsilon_as_string_is_type_error():
    with pytest.raises(TypeError, match="epsilon must be a real number"):
        noise_rate(epsilon="1", gamma=1.0, weights_upper_bound=1.0, **EXACT)


@pytest.mark.parametrize("d, rate", [(1, 2.0), (5, 0.7), (12, 30.0)])
def test_norm_is_gamma_and_direction_uniform(d, rate):
    rng = np.random.default_rng(20240 + d)
    draws = np.array([sample_output_noise(d, rate, rng=rng) for _ in range(4000)])
    norms = np.linalg.norm(draws, axis=1)
    ks = stats.kstest(norms, stats.gamma(a=d, scale=1.0 / rate).cdf)
    assert ks.pvalue > ALPHA, (f"KS of noise norms vs Gamma({d}, rate={rate}): D={ks.statistic:.4f}, "
                               f"p={ks.pvalue:.2e} <= {ALPHA}")
    if d >= 2:
        u = draws[:, 0] / norms
        law = stats.beta((d - 1) / 2, (d - 1) / 2)
        ks = stats.kstest((u + 1) / 2, law.cdf)
        assert ks.pvalue > ALPHA, (f"KS of (u1+1)/2 vs Beta({(d-1)/2}, {(d-1)/2}): D={ks.statistic:.4f}, "
                                   f"p={ks.pvalue:.2e} <= {ALPHA}")
    else:
        signs = np.sign(draws[:, 0])
        binom = stats.binomtest(int((signs > 0).sum()), len(signs))
        assert binom.pvalue > ALPHA, f"sign test of 1-d direction: p={binom.pvalue:.2e} <= {ALPHA}"


def test_batch_has_the_same_law():
    rng = np.random.default_rng(7)
    batch = sample_output_noise_batch(5, 1.3, 5000, rng=rng)
    ks = stats.kstest(np.linalg.norm(batch, axis=1), stats.gamma(a=5, scale=1 / 1.3).cdf)
    assert ks.pvalue > ALPHA, f"KS of batch norms: D={ks.statistic:.4f}, p={ks.pvalue:.2e} <= {ALPHA}"
    u = batch[:, 2] / np.linalg.norm(batch, axis=1)
    ks = stats.kstest((u + 1) / 2, stats.beta(2, 2).cdf)
    assert ks.pvalue > ALPHA, f"KS of batch direction coordinate vs Beta(2,2): p={ks.pvalue:.2e} <= {ALPHA}"


def test_infinite_rate_gives_no_noise():
    rng = np.random.default_rng(0)
    assert np.array_equal(sample_output_noise(4, np.inf, rng=rng), np.zeros(4))
    assert np.array_equal(sample_output_noise_batch(4, np.inf, 3, rng=rng), np.zeros((3, 4)))


def test_numpy_draw_order_is_norm_then_direction():
    seed = 99
    noise = sample_output_noise(3, 2.0, rng=np.random.default_rng(seed))
    rng = np.random.default_rng(seed)
    radius = rng.gamma(shape=3, scale=0.5)
    z = rng.standard_normal(3)
    np.testing.assert_allclose(noise, radius * z / np.linalg.norm(z), rtol=1e-15)


def test_r_stream_draws_rgamma_then_rnorm_like_dppack(fake_r_stream):
    fake = fake_r_stream()
    noise = sample_output_noise(2, 0.5, rng=fake)
    assert fake.calls == [("rgamma", 1, 2, 0.5), ("rnorm", 2)]
    np.testing.assert_allclose(noise, [2.0 * 3 / 5, 2.0 * 4 / 5])


def test_sensitivity_with_lipschitz_constant_and_solver_tolerance():
    """Delta = (L (C + 2W) + 2 n tol) / gamma (items 5 and 8)."""
    got = output_sensitivity(gamma=4.0, weights_upper_bound=3.0, C=2.0, lipschitz=1.5, n_samples=1000, tol=1e-4)
    assert got == pytest.approx((1.5 * (2.0 + 6.0) + 2 * 1000 * 1e-4) / 4.0, rel=1e-15)
    assert noise_rate(epsilon=0.5, gamma=4.0, weights_upper_bound=3.0, C=2.0, lipschitz=1.5, n_samples=1000,
                      tol=1e-4) == pytest.approx(0.5 / got, rel=1e-15)
    with pytest.raises(TypeError):
        output_sensitivity(gamma=4.0, weights_upper_bound=3.0)  # n and tol must be stated


def test_output_mechanism_checks_before_the_data_and_perturb_uses_it():
    """The one output release: named settings, the noise scale and the reach guard, for fits and batches alike."""
    from pydpowl.engine.mechanisms.output import output_mechanism, perturb

    m = output_mechanism(epsilon=0.5, gamma=4.0, weights_upper_bound=3.0, C=2.0, lipschitz=1.5, n_samples=1000,
                         tol=1e-4)
    assert m.sensitivity == output_sensitivity(gamma=4.0, weights_upper_bound=3.0, C=2.0, lipschitz=1.5,
                                               n_samples=1000, tol=1e-4)
    assert m.rate == noise_rate(epsilon=0.5, gamma=4.0, weights_upper_bound=3.0, C=2.0, lipschitz=1.5,
                                n_samples=1000, tol=1e-4)
    assert m.grid is not None
    dpp = output_mechanism(epsilon=0.5, gamma=4.0, weights_upper_bound=3.0, n_samples=1000, tol=1e-4,
                           reproduce_dppack=True)
    assert dpp.grid is None and dpp.sensitivity == 6.0 / 4.0  # DPpack's Delta: no tolerance term
    with pytest.raises(ValueError, match="gamma must be in"):
        output_mechanism(epsilon=0.5, gamma=-1.0, weights_upper_bound=3.0, n_samples=10, tol=0.0)
    with pytest.raises(ValueError, match="must be finite and > 0; nothing was released"):
        output_mechanism(epsilon=1e-320, gamma=1.0, weights_upper_bound=1.0, n_samples=10, tol=0.0)
    with pytest.raises(ValueError, match="no floating-point-safe rounding exists"):
        perturb(np.zeros((2, 3)), epsilon=1e11, gamma=1e-3, weights_upper_bound=30.0, n_samples=100, tol=1e-10,
                rng=np.random.default_rng(0))
    coef, noise = m.release(np.array([0.25, -1.0]), rng=np.random.default_rng(3))
    assert np.all(np.round(coef / m.grid) * m.grid == coef) and np.all(np.abs(coef - [0.25, -1.0] - noise) <= m.grid)
