"""Tests of pydpowl.policy_evaluation.noise (the Gaussian sampler)."""

import numpy as np
import pytest
from scipy import stats

from pydpowl.policy_evaluation.noise import sample_gaussian


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
