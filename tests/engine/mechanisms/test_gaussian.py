"""pydpowl.engine.mechanisms.gaussian: isotropic Gaussian noise, as MASS::mvrnorm draws it."""

import numpy as np
import pytest
from scipy import stats

from pydpowl import RRandom
from pydpowl.engine.mechanisms.gaussian import sample_gaussian, sample_isotropic_gaussian

ALPHA = 1e-3


def test_isotropic_gaussian_law():
    rng = np.random.default_rng(3)
    draws = np.array([sample_isotropic_gaussian(3, 4.0, rng=rng) for _ in range(4000)])
    for j in range(3):
        assert stats.kstest(draws[:, j], stats.norm(scale=2.0).cdf).pvalue > ALPHA


def test_isotropic_gaussian_from_r_stream_is_a_signed_permutation_of_rnorm():
    """MASS::mvrnorm rotates rnorm(p) by eigen(Sigma)$vectors: for Sigma = s I a signed permutation."""
    for p in (1, 2, 3, 6):
        b = sample_isotropic_gaussian(p, 2.25, rng=RRandom(4))
        z = RRandom(4).rnorm(p)
        assert np.allclose(np.sort(np.abs(b)), np.sort(np.abs(1.5 * z)), rtol=0, atol=0)


def test_isotropic_gaussian_rotation_is_lapacks_without_scipy():
    """MASS::mvrnorm rotates by R's eigen(c I) vectors (dsyevr): the closed form equals scipy's evr driver."""
    from scipy.linalg import eigh

    from pydpowl.engine.mechanisms.gaussian import _r_identity_rotation

    z_all = np.random.default_rng(0).normal(size=80)
    for c in (1e-6, 3.7, 8.1e5):
        for d in range(1, 80):
            values, vectors = eigh(c * np.eye(d), lower=True, driver="evr")
            V = vectors[:, ::-1]
            z = z_all[:d]
            np.testing.assert_array_equal(_r_identity_rotation(z), V @ z)


def test_standardised_draws_pass_ks_against_normal():
    rng = np.random.default_rng(123)
    z = np.concatenate([sample_gaussian(7, 3.5, rng=rng) / 3.5 for _ in range(600)])
    p = stats.kstest(z, "norm").pvalue
    assert p > 1e-3, f"KS of 4200 standardised draws vs N(0,1): p = {p:.2e} <= 1e-3"


def test_coordinates_are_uncorrelated():
    rng = np.random.default_rng(7)
    draws = np.array([sample_gaussian(4, 2.0, rng=rng) for _ in range(4000)])
    corr = np.corrcoef(draws.T)
    off = np.max(np.abs(corr - np.eye(4)))
    assert off < 4 / np.sqrt(4000), f"max |off-diagonal correlation| {off:.3f} >= {4 / np.sqrt(4000):.3f}"


def test_same_seed_same_draw_and_zero_scale_consumes_nothing():
    a = sample_gaussian(3, 1.0, rng=np.random.default_rng(5))
    b = sample_gaussian(3, 1.0, rng=np.random.default_rng(5))
    assert np.array_equal(a, b)
    rng = np.random.default_rng(5)
    assert np.array_equal(sample_gaussian(3, 0.0, rng=rng), np.zeros(3))
    assert np.array_equal(rng.standard_normal(3), a), "scale 0 must not advance the generator"


def test_global_numpy_state_untouched():
    before = np.random.get_state()[1].copy()
    sample_gaussian(5, 1.0, rng=np.random.default_rng(0))
    assert np.array_equal(before, np.random.get_state()[1])


@pytest.mark.parametrize(
    "args, kwargs, exc, pattern",
    [
        ((0, 1.0), {}, ValueError, r"dim must be an integer >= 1"),
        ((2, -1.0), {}, ValueError, r"scale must be in \[0, inf\)"),
        ((2, np.inf), {}, ValueError, r"scale must be in \[0, inf\)"),
        ((2, 1.0), {"rng": 3}, TypeError, r"rng must be a numpy.random.Generator"),
    ],
)
def test_bad_arguments(args, kwargs, exc, pattern):
    kwargs.setdefault("rng", np.random.default_rng(0))
    with pytest.raises(exc, match=pattern):
        sample_gaussian(*args, **kwargs)


def test_release_gaussian_rounds_the_exact_sum_and_its_delta_grows_with_the_scale_range():
    from fractions import Fraction

    from pydpowl.engine.mechanisms.gaussian import gaussian_rounding_delta, release_gaussian

    theta = np.array([0.1, -2.5, 1e3 + 1e-9])
    coef, noise = release_gaussian(theta, 0.3, grid=2.0 ** -12, rng=np.random.default_rng(4))
    for t, b, c in zip(theta, noise, coef):
        exact = (Fraction(float(t)) + Fraction(float(b))) / Fraction(2.0 ** -12)
        assert c == float(round(exact) * Fraction(2.0 ** -12))
    one = gaussian_rounding_delta(epsilon=1.0, dim=3, grid=2.0 ** -12, max_scale=0.3, scale_ulps=40)
    wide = gaussian_rounding_delta(epsilon=1.0, dim=3, grid=2.0 ** -12, max_scale=300.0, scale_ulps=40)
    assert 0 < one < 1e-9 and wide > 500 * one
