import numpy as np
import pandas as pd
import pytest

from pydpowl._validation import (
    check_array,
    check_bool,
    check_bounds,
    check_int,
    check_labels,
    check_positive,
    check_probability,
    check_vector,
    feature_names_of,
    resolve_rng,
)


@pytest.mark.parametrize("value, exc, match", [
    (0.0, ValueError, r"^g must be in \(0, inf\), got g=0.0\.$"),
    (float("inf"), ValueError, r"\(0, inf\)"),
    (float("nan"), ValueError, "got g=nan"),
    ("1", TypeError, "g must be a real number, got str"),
    (True, TypeError, "got bool"),
    (None, TypeError, "got NoneType"),
])
def test_check_positive(value, exc, match):
    with pytest.raises(exc, match=match):
        check_positive("g", value)


def test_check_positive_allows_inf_when_asked():
    assert check_positive("epsilon", float("inf"), allow_inf=True) == float("inf")
    assert check_positive("x", np.float32(2.5)) == 2.5


def test_check_probability_and_int_and_bool():
    assert check_probability("p", 1.0) == 1.0
    with pytest.raises(ValueError, match=r"p must be in \(0, 1\]"):
        check_probability("p", 0.0)
    with pytest.raises(ValueError, match=r"must be an integer >= 2, got k=1"):
        check_int("k", 1, minimum=2)
    with pytest.raises(TypeError, match="k must be an integer, got float"):
        check_int("k", 1.5)
    with pytest.raises(TypeError, match="flag must be True or False"):
        check_bool("flag", 1)


def test_check_array_shapes_and_types():
    assert check_array("X", [[1, 2], [3, 4]]).dtype == np.float64
    with pytest.raises(ValueError, match="X must be 2-D .* got a 1-D array of length 3"):
        check_array("X", [1, 2, 3])
    with pytest.raises(ValueError, match="at least 1 row"):
        check_array("X", np.zeros((0, 3)))
    with pytest.raises(ValueError, match="at least 1 column"):
        check_array("X", np.zeros((3, 0)))
    with pytest.raises(TypeError, match="X must hold numbers only, got values of type str"):
        check_array("X", np.array([[1, "a"]], dtype=object))
    with pytest.raises(TypeError, match="X must hold numbers, got dtype <U"):
        check_array("X", np.array([["1", "2"]]))
    with pytest.raises(ValueError, match="1 NaN and 1 infinite"):
        check_array("X", [[np.nan, np.inf]])
    assert check_array("X", pd.DataFrame({"a": [1, 2], "b": [True, False]})).shape == (2, 2)


@pytest.mark.parametrize("bad, counts", [((np.nan,), "1 NaN and 0 infinite"),
                                         ((np.inf, -np.inf), "0 NaN and 2 infinite"),
                                         ((np.nan, np.inf), "1 NaN and 1 infinite")])
def test_non_finite_entries_are_found_in_large_arrays(bad, counts):
    X = np.random.default_rng(0).normal(size=(30_000, 4))  # large enough for the sum shortcut
    X.flat[[7, 99_999][:len(bad)]] = bad
    with pytest.raises(ValueError, match=f"X must be finite; it has {counts} entries of 120000"):
        check_array("X", X)


def test_finite_entries_whose_sum_overflows_are_accepted_silently():
    X = np.full((40_000, 2), 1e308)  # the sum overflows, yet every entry is finite
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_array("X", X).shape == (40_000, 2)


def test_check_vector_and_labels():
    np.testing.assert_array_equal(check_vector("v", [[1], [2]]), [1.0, 2.0])
    with pytest.raises(ValueError, match="v must have length 3, got length 2"):
        check_vector("v", [1, 2], length=3)
    with pytest.raises(ValueError, match=r"y must take values in \{-1, 1\}; 2 of 3 entries do not \(first at position 1\)"):
        check_labels("y", [1, 0, 2])


def test_check_bounds_wrong_length_and_names():
    with pytest.raises(ValueError, match=r"upper bounds must have length 2 \(one per feature\), got length 3"):
        check_bounds("feature_bounds", ([0, 0], [1, 1, 1]), 2)
    assert feature_names_of(pd.DataFrame({"a": [1]})) == ["a"]
    assert feature_names_of(np.zeros((1, 1))) is None


def test_resolve_rng_kinds():
    g = np.random.default_rng(1)
    assert resolve_rng(g) is g
    assert isinstance(resolve_rng(None), np.random.Generator)
    a, b = resolve_rng(5).normal(), resolve_rng(5).normal()
    assert a == b


@pytest.mark.parametrize("bad", [True, "seed", 1.5, np.random.RandomState(0)])
def test_resolve_rng_rejects(bad):
    with pytest.raises(TypeError, match="random_state must be"):
        resolve_rng(bad)
