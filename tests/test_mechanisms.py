import numpy as np
import pytest
from scipy import stats

from pydpowl.engine.mechanisms import (
    is_r_stream,
    noise_rate,
    output_sensitivity,
    sample_output_noise,
    sample_output_noise_batch,
)

ALPHA = 1e-3  # KS tests with fixed seeds: fail if p < 0.001


def test_sensitivity_formula():
    assert output_sensitivity(gamma=4.0, weights_upper_bound=3.0, C=2.0) == pytest.approx((2.0 + 6.0) / 4.0)
    assert output_sensitivity(gamma=75.0, weights_upper_bound=1.0) == pytest.approx(2.0 / 75.0)


def test_rate_uses_dppack_operation_order():
    # DPpack: beta <- gamma*eps/(2*weights.upper.bound)
    gamma, eps, w = 75.0, 0.3, np.log(24 * 365) / (1 / 3)
    assert noise_rate(epsilon=eps, gamma=gamma, weights_upper_bound=w) == gamma * eps / (2 * w)
    assert noise_rate(epsilon=np.inf, gamma=gamma, weights_upper_bound=w) == np.inf


@pytest.mark.parametrize("kwargs, match", [
    (dict(gamma=0.0, weights_upper_bound=1.0), r"gamma must be in \(0, inf\)"),
    (dict(gamma=1.0, weights_upper_bound=-2.0), r"weights_upper_bound must be in \(0, inf\)"),
    (dict(gamma=1.0, weights_upper_bound=1.0, C=-1.0), r"C must be in \[0, inf\)"),
    (dict(gamma=1.0, weights_upper_bound=1.0, C=float("nan")), r"C must be in \[0, inf\)"),
])
def test_bad_sensitivity_inputs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        output_sensitivity(**kwargs)


@pytest.mark.parametrize("eps", [0.0, -1.0, float("nan")])
def test_bad_epsilon(eps):
    with pytest.raises(ValueError, match=r"epsilon must be in \(0, inf\]"):
        noise_rate(epsilon=eps, gamma=1.0, weights_upper_bound=1.0)


def test_epsilon_as_string_is_type_error():
    with pytest.raises(TypeError, match="epsilon must be a real number"):
        noise_rate(epsilon="1", gamma=1.0, weights_upper_bound=1.0)


@pytest.mark.parametrize("d, rate", [(1, 2.0), (5, 0.7), (12, 30.0)])
def test_norm_is_gamma_and_direction_uniform(d, rate):
    rng = np.random.default_rng(20240 + d)
    draws = np.array([sample_output_noise(d, rate, rng=rng) for _ in range(4000)])
    norms = np.linalg.norm(draws, axis=1)
    ks = stats.kstest(norms, stats.gamma(a=d, scale=1.0 / rate).cdf)
    assert ks.pvalue > ALPHA, f"KS of noise norms vs Gamma({d}, rate={rate}): D={ks.statistic:.4f}, p={ks.pvalue:.2e} <= {ALPHA}"
    if d >= 2:
        u = draws[:, 0] / norms
        law = stats.beta((d - 1) / 2, (d - 1) / 2)
        ks = stats.kstest((u + 1) / 2, law.cdf)
        assert ks.pvalue > ALPHA, f"KS of (u1+1)/2 vs Beta({(d-1)/2}, {(d-1)/2}): D={ks.statistic:.4f}, p={ks.pvalue:.2e} <= {ALPHA}"
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


class FakeRStream:
    """Records the order of calls, like R's stream would consume them."""

    def __init__(self):
        self.calls = []

    def rgamma(self, n, shape, rate=1.0):
        self.calls.append(("rgamma", n, shape, rate))
        return np.array([2.0])

    def rnorm(self, n):
        self.calls.append(("rnorm", n))
        return np.array([3.0, 4.0])


def test_r_stream_draws_rgamma_then_rnorm_like_dppack():
    fake = FakeRStream()
    assert is_r_stream(fake) and not is_r_stream(np.random.default_rng(0))
    noise = sample_output_noise(2, 0.5, rng=fake)
    assert fake.calls == [("rgamma", 1, 2, 0.5), ("rnorm", 2)]
    np.testing.assert_allclose(noise, [2.0 * 3 / 5, 2.0 * 4 / 5])
