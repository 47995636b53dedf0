import numpy as np
import pytest

from pydpowl import PrivacyLeakWarning, min_shift_benefits, shift_benefits


def test_shift_by_public_bound_counts_clipping():
    B, n = shift_benefits([-3.0, 0.0, 2.0, -7.0], lower_bound=-5.0)
    np.testing.assert_array_equal(B, [2.0, 5.0, 7.0, 0.0])
    assert n == 1


def test_shift_with_upper_bound():
    B, n = shift_benefits([1.0, 9.0], lower_bound=0.0, upper_bound=5.0)
    np.testing.assert_array_equal(B, [1.0, 5.0])
    assert n == 1


@pytest.mark.parametrize("lo, hi, match", [(np.nan, np.inf, "lower_bound must be a real number"),
                                           (np.inf, np.inf, "lower_bound must be finite"),
                                           (1.0, 0.5, "upper_bound must exceed lower_bound")])
def test_shift_bad_bounds(lo, hi, match):
    with pytest.raises(ValueError, match=match):
        shift_benefits([1.0], lower_bound=lo, upper_bound=hi)


def test_min_shift_warns_and_matches_the_paper():
    with pytest.warns(PrivacyLeakWarning, match="guarantee .* is void"):
        B = min_shift_benefits([-2.0, 1.0])
    np.testing.assert_allclose(B, [0.001, 3.001])
