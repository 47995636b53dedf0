"""Tests of pydpowl.estimators.inputs: every rule is a block check, and blocks add up to the whole data."""

import numpy as np
import pytest

from pydpowl.engine.preprocessing import FeatureScaler
from pydpowl.estimators.inputs import (check_erm_inputs, erm_block, merge_counts, owl_block, prepare_owl,
                                       raise_from_counts)


def _bad_erm(rng, n=40):
    X = rng.uniform(-0.3, 0.3, size=(n, 3))  # rows of norm below 0.52
    X[[5, 31], 1] = np.nan
    X[17] *= 10  # a row of norm above 1
    y = rng.choice([0.0, 1.0], size=n)
    w = rng.uniform(0, 2, size=n)
    w[[3, 22]] = -1.0
    return X, y, w


def _blockwise(block, arrays, cuts, **settings):
    parts, start = [], 0
    for stop in list(cuts) + [arrays[0].shape[0]]:
        sl = slice(start, stop)
        parts.append(block(*(None if a is None else a[sl] for a in arrays), offset=start, **settings)[1])
        start = stop
    return merge_counts(*parts)


@pytest.mark.parametrize("cuts", [(), (1,), (10, 20, 30), tuple(range(1, 40))])
def test_erm_counts_of_blocks_add_up_to_the_counts_of_the_whole(cuts):
    X, y, w = _bad_erm(np.random.default_rng(0))
    whole = erm_block(X, y, w, weights_upper_bound=1.5)[1]
    assert _blockwise(erm_block, [X, y, w], cuts, weights_upper_bound=1.5) == whole
    assert whole["X_nan"] == 2 and whole["nonfinite_rows_X"] == (5, 31) and whole["sample_weight_negative"] == 2
    X[[5, 31], 1] = 0.0
    whole = erm_block(X, y, w, weights_upper_bound=1.5)[1]
    assert (whole["rows_too_long"], whole["first_rows_too_long"]) == (1, 17)
    assert _blockwise(erm_block, [X, y, w], cuts, weights_upper_bound=1.5) == whole


def test_the_error_comes_from_the_counts_alone():
    X, y, w = _bad_erm(np.random.default_rng(1))
    X[[5, 31], 1] = 0.0
    counts = _blockwise(erm_block, [X, y, w], (7, 19), weights_upper_bound=1.5)
    with pytest.raises(ValueError) as merged:
        raise_from_counts(counts, 40, n_features=3, weights_upper_bound=1.5)
    with pytest.raises(ValueError) as direct:
        check_erm_inputs(X, y, w, 1.5)
    assert str(merged.value) == str(direct.value)
    assert str(direct.value).startswith("every row of X must have l2 norm <= 1") and "first at position 17" in \
        str(direct.value)


def test_a_non_integer_label_anywhere_makes_the_target_continuous():
    # the first three distinct values are integers; the fourth, in another block, is not
    y = np.array([0.0, 1.0, 2.0, 1.0, 2.5, 0.0])
    X = np.full((6, 1), 0.5)
    counts = _blockwise(erm_block, [X, y, None], (3,), weights_upper_bound=1.0)
    assert counts["values_y"] == (0.0, 1.0, 2.0) and counts["y_nonint"]
    with pytest.raises(ValueError, match="more than 2. Unknown label type: 'continuous'"):
        raise_from_counts(counts, 6, n_features=1)
    with pytest.raises(ValueError, match="more than 2. Unknown label type: 'continuous'"):
        check_erm_inputs(X, y, None, 1.0)


def test_unit_weights_above_the_bound_are_refused_after_the_row_rule():
    X = np.full((4, 2), 0.5)
    y = np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match=r"^sample_weight=None means unit weights, which exceed "
                                         r"weights_upper_bound=0.5\.$"):
        check_erm_inputs(X, y, None, 0.5)
    with pytest.raises(ValueError, match="^every row of X"):
        check_erm_inputs(X * 3, y, None, 0.5)


def _owl_data(n=30):
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(n, 2))
    A = rng.choice([-1.0, 1.0], size=n)
    A[:2] = [-1.0, 1.0]
    B = rng.uniform(0, 1, size=n)
    return X, A, B


@pytest.mark.parametrize("cuts", [(), (4,), (5, 12, 29)])
def test_owl_blocks_prepare_what_the_whole_prepares(cuts):
    X, A, B = _owl_data()
    scaler = FeatureScaler.from_bounds(([-1, -1], [1, 1]), 2, True)
    settings = dict(spec=0.5, scaler=scaler, weights_upper_bound=3.0, benefit_bound=None)
    (Z, labels, w, _, _), whole = owl_block(X, A, B, None, **settings)
    assert _blockwise(owl_block, [X, A, B, None], cuts, **settings) == whole
    problem = prepare_owl(X, A, B, 0.5, weights_upper_bound=3.0, feature_bounds=([-1, -1], [1, 1]))
    np.testing.assert_array_equal(problem.Z, Z)
    np.testing.assert_array_equal(problem.weights, w)
    B[[3, 9]] = -0.5
    counts = _blockwise(owl_block, [X, A, B, None], cuts, **settings)
    assert (counts["benefit_negative"], counts["first_benefit_negative"]) == (2, 3)
    with pytest.raises(ValueError, match=r"^benefit must be non-negative .*; 2 of 30 entries are negative "
                                         r"\(first at position 3\)"):
        raise_from_counts(counts, 30, n_features=2)


def test_an_array_propensity_is_judged_before_its_statement():
    X, A, B = _owl_data()
    p = np.full(30, 0.5)
    p[7] = 0.0
    with pytest.raises(ValueError, match=r"^propensity must be in \(0, 1\] .*; 1 of 30 entries"):
        prepare_owl(X, A, B, p, weights_upper_bound=3.0, feature_bounds=([-1, -1], [1, 1]))
    p[7] = 0.5
    with pytest.raises(ValueError, match="state how it was obtained with weight_sensitivity"):
        prepare_owl(X, A, B, p, weights_upper_bound=3.0, feature_bounds=([-1, -1], [1, 1]))


def test_dask_labels_are_judged_like_in_memory_labels():
    da = pytest.importorskip("dask.array")
    from pydpowl import DPWeightedERM

    y = np.array([0.0, 1.0, 2.0, 1.0, 2.5, 0.0])  # a non-integer label in the second chunk only
    X = np.full((6, 1), 0.5)
    messages = []
    for Xi, yi in ((X, y), (da.from_array(X, chunks=3), da.from_array(y, chunks=3))):
        with pytest.raises(ValueError) as err:
            DPWeightedERM(epsilon=np.inf).fit(Xi, yi)
        messages.append(str(err.value))
    assert messages[0] == messages[1] and "continuous" in messages[1]
