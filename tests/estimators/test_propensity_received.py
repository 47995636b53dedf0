"""The received arm's probability from P(A = +1), and its range rule (pydpowl.estimators.propensity_received)."""

import numpy as np
import pytest

from pydpowl._validation import caller_words
from pydpowl.estimators.propensity_received import (
    arm_propensity,
    received_propensity,
    received_propensity_error,
    received_propensity_outside,
)


def test_arm_propensity_and_received_propensity():
    A = np.array([1.0, -1.0, 1.0])
    assert np.allclose(arm_propensity(0.7, A), [0.7, 0.3, 0.7])
    assert np.allclose(arm_propensity([0.2, 0.4, 0.9], A), [0.2, 0.6, 0.9])
    assert np.allclose(received_propensity(0.7, A), [0.7, 0.3, 0.7])
    with pytest.raises(ValueError, match=r"propensity \(the probability of treatment \+1\) must be in \(0, 1\)"):
        received_propensity(1.0, A)
    with pytest.raises(ValueError, match=r"1 of 3 entries are outside \(first at position 1\)"):
        received_propensity([0.5, 0.0, 0.5], A)


def test_the_received_propensity_range_rule_is_one_function():
    np.testing.assert_array_equal(received_propensity_outside(np.array([0.0, 0.5, 1.0, 1.5, -0.1])),
                                  [True, False, False, True, True])
    err = received_propensity_error(2, 5, 3)
    with pytest.raises(ValueError) as info:
        received_propensity([0.5, 0.5, 0.5, 1.5, 0.0], np.ones(5))
    assert str(info.value) == str(err) == ("propensity must be in (0, 1] (P(A_i | x_i) of the received treatment); "
                                           "2 of 5 entries are outside (first at position 3).")


def test_positions_count_from_the_callers_base():
    with caller_words({}, index_base=1):
        with pytest.raises(ValueError, match=r"\(first at position 2\)"):
            received_propensity([0.5, 0.0, 0.5], np.ones(3))


def test_the_former_home_no_longer_defines_them():
    """One home: evaluation.empirical uses these helpers but does not define or export them."""
    import pydpowl.evaluation.empirical as empirical

    assert not {"received_propensity", "received_propensity_outside", "received_propensity_error",
                "arm_propensity"} & set(empirical.__all__)
    assert empirical.received_propensity is received_propensity
