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
