"""pydpowl.engine.mechanisms.laplace: the Laplace draws of the package."""

import numpy as np
import pytest
from scipy import stats

from pydpowl.engine.mechanisms.laplace import sample_laplace


def test_one_draw_per_scale_with_the_laplace_law():
    rng = np.random.default_rng(11)
    draws = np.array([sample_laplace([0.5, 3.0], rng=rng) for _ in range(4000)])
    for j, b in enumerate((0.5, 3.0)):
        p = stats.kstest(draws[:, j], stats.laplace(scale=b).cdf).pvalue
        assert p > 1e-3, f"KS of coordinate {j} vs Laplace({b}): p = {p:.2e} <= 1e-3"


@pytest.mark.parametrize("bad", [[0.0], [-1.0], [np.inf], [np.nan], [[1.0]]])
def test_bad_scales_are_refused(bad):
    with pytest.raises(ValueError, match="scales must be a 1-D array of finite numbers > 0"):
        sample_laplace(bad, rng=np.random.default_rng(0))


def test_release_rounds_the_exact_sums_to_each_scales_grid():
    from fractions import Fraction

    from pydpowl.engine.mechanisms.laplace import release_laplace
    from pydpowl.engine.mechanisms.rounding import grid_for_scale

    values = np.array([1e6 + 0.1, -3.3, 2.0 ** 25 + 0.3])
    scales = np.array([0.7, 5.0, 1e-3])
    released, grids = release_laplace(values, scales, rng=np.random.default_rng(2))
    noise = np.random.default_rng(2).laplace(0.0, scales)
    for v, L, b, g, r in zip(values, noise, scales, grids, released):
        assert g == grid_for_scale(b) and b * 2.0 ** -11 < g <= b * 2.0 ** -10
        exact = (Fraction(float(v)) + Fraction(float(L))) / Fraction(float(g))
        assert r == float(round(exact) * Fraction(float(g)))


def test_numpy_laplace_is_the_inversion_the_delta_assumes():
    """laplace_delta's model: numpy's Generator.laplace(0, b) is b log(2U) or -b log(2 - 2U), U = k 2^-53."""
    import math

    a, u = np.random.default_rng(8), np.random.default_rng(8)
    for _ in range(5000):
        U = u.random()
        expected = 0.0 - 1.7 * math.log(2.0 - U - U) if U >= 0.5 else 0.0 + 1.7 * math.log(U + U)
        assert a.laplace(0.0, 1.7) == expected


def test_laplace_delta_is_tiny_on_the_package_grid_and_grows_with_a_finer_one():
    from pydpowl.engine.mechanisms.laplace import laplace_delta

    d10 = laplace_delta(epsilon=1.0, scales=[1.0] * 8, grids=[2.0 ** -11] * 8)
    assert 0 < d10 < 1e-8
    d20 = laplace_delta(epsilon=1.0, scales=[1.0] * 8, grids=[2.0 ** -21] * 8)
    assert d20 > 500 * d10
    assert laplace_delta(epsilon=1e12, scales=[1.0], grids=[1.0]) == 1.0  # capped, no overflow
