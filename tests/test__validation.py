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
    check_in_interval,
    check_nonnegative,
    check_vector,
    feature_names_of,
    is_chunked,
    resolve_rng,
)


@pytest.mark.parametrize("value, exc, match", [
    (0.0, ValueError, r"^g must be in \(0, inf\), got g=0.0\.$"),
    (float("inf"), ValueError, r"\(0, inf\)"),
    (float("nan"), ValueError, "got g=nan"),
    ("1", TypeError, "g must be a real number, got str"),
    (True, TypeError, "got bool"),
    (None, TypeError, "got None"),
    (np.array([1.0, 2.0]), TypeError, r"g must be a real number, got an array of length 2\.$"),
    ([1.0], TypeError, r"got a list of length 1\.$"),
])
def test_check_positive(value, exc, match):
    with pytest.raises(exc, match=match):
        check_positive("g", value)


def test_check_positive_allows_inf_when_asked():
    assert check_positive("epsilon", float("inf"), allow_inf=True) == float("inf")
    assert check_positive("x", np.float32(2.5)) == 2.5


def test_check_positive_allows_zero_when_asked():
    assert check_positive("ridge", 0, allow_zero=True) == 0.0
    with pytest.raises(ValueError, match=r"^ridge must be in \[0, inf\), got ridge=-1\.0\.$"):
        check_positive("ridge", -1, allow_zero=True)
    with pytest.raises(ValueError, match=r"^ridge must be in \[0, inf\), got ridge=inf\.$"):
        check_positive("ridge", np.inf, allow_zero=True)


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


def test_check_array_order():
    F = np.asfortranarray(np.arange(12.0).reshape(6, 2))
    C = check_array("X", F)
    assert C.flags.c_contiguous and np.array_equal(C, F)
    K = check_array("X", F, order="K")
    assert K.flags.f_contiguous and np.shares_memory(K, F)  # kept: no copy
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [4.0, 5.0, 6.0]})
    assert np.array_equal(check_array("X", frame, order="K"), frame.to_numpy())
    assert check_array("X", [[1, 2], [3, 4]], order="K").dtype == np.float64
    with pytest.raises(ValueError, match=r"order must be 'C' or 'K', got order='F'"):
        check_array("X", F, order="F")
    with pytest.raises(ValueError, match="X must be finite"):
        check_array("X", np.asfortranarray([[1.0, np.nan], [2.0, 3.0]]), order="K")


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


def test_non_finite_entries_are_located_by_column_and_row():
    X = np.ones((8, 3))
    X[2, 1] = np.nan
    X[6, 1] = np.inf
    X[6, 2] = np.nan
    with pytest.raises(ValueError, match=r"^X must be finite; it has 2 NaN and 1 infinite entries of 24 in "
                                         r"column\(s\) 1, 2 \(rows 2, 6\)\. Nothing is dropped silently"):
        check_array("X", X)
    # R's conventions: names from the caller, positions from 1
    with pytest.raises(ValueError, match=r"in column\(s\) 'b', 'c' \(rows 3, 7\)\."):
        check_array("X", X, columns=["a", "b", "c"], index_base=1)
    # a DataFrame's own column names
    with pytest.raises(ValueError, match=r"in column\(s\) 'u', 'v' \(rows 2, 6\)\."):
        check_array("X", pd.DataFrame(X, columns=["t", "u", "v"]))
    v = np.arange(10.0)
    v[[1, 3, 4, 5, 8, 9]] = np.nan
    with pytest.raises(ValueError, match=r"^w must be finite; it has 6 NaN and 0 infinite entries of 10 at "
                                         r"position\(s\) 2, 4, 5, 6, 9, \.\.\.\. "):
        check_vector("w", v, index_base=1)


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
    with pytest.raises(ValueError,
                       match=r"y must take values in \{-1, 1\}; 2 of 3 entries do not \(first at position 1\)"):
        check_labels("y", [1, 0, 2])
    with pytest.raises(ValueError, match=r"^y must have length 3 \(one per row of X\), got length 2\.$"):
        check_vector("y", [1, 2], length=3, length_of="one per row of X")
    with pytest.raises(ValueError, match=r"^y must take values in \{0, 1\}; 2 of 3 entries do not \(first at "
                                         r"position 1\)\. Recode\.$"):
        check_labels("y", [-1, 1, -1], allowed=(0, 1), hint="Recode.", index_base=1)


def test_check_nonnegative_and_in_interval_report_count_and_first_position():
    check_nonnegative("w", np.array([0.0, 2.0]))
    with pytest.raises(ValueError, match=r"^w must be non-negative; 2 of 4 entries are negative \(first at "
                                         r"position 1\)\.$"):
        check_nonnegative("w", np.array([0.0, -1.0, 2.0, -3.0]))
    with pytest.raises(ValueError, match=r"^B must be non-negative \(why\); 1 of 2 entries are negative \(first "
                                         r"at position 2\)\. Shift\.$"):
        check_nonnegative("B", np.array([0.0, -1.0]), why="why", hint="Shift.", index_base=1)
    check_in_interval("p", np.array([0.5, 1.0]), 0.0, 1.0)
    with pytest.raises(ValueError, match=r"^p must be in \(0, 1\] \(P\); 2 of 3 entries are outside \(first at "
                                         r"position 2\)\.$"):
        check_in_interval("p", np.array([0.5, 0.0, 1.5]), 0.0, 1.0, why="P", index_base=1)
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\)"):
        check_in_interval("p", np.array([1.0]), 0.0, 1.0, low_open=False, high_open=True)


def test_check_bounds_wrong_length_and_names():
    with pytest.raises(ValueError, match=r"upper bounds must have length 2 \(one per feature\), got length 3"):
        check_bounds("feature_bounds", ([0, 0], [1, 1, 1]), 2)
    with pytest.raises(ValueError,
                       match=r"feature_bounds: lower must be <= upper for every feature; reversed at \[1\]"):
        check_bounds("feature_bounds", ([0, 2], [1, 1]), 2)


def test_check_bounds_with_separate_names_counts_from_index_base():
    names = ("lower.bounds", "upper.bounds")
    with pytest.raises(ValueError, match=r"^upper\.bounds must have length 2 \(one per feature\), got length 3\.$"):
        check_bounds("bounds", ([0, 0], [1, 1, 1]), 2, names=names)
    with pytest.raises(ValueError, match=r"^lower\.bounds must be <= upper\.bounds for every feature; reversed at "
                                         r"position\(s\) 1, 2\.$"):
        check_bounds("bounds", ([1, 1], [0, 0.5]), 2, names=names, index_base=1)
    with pytest.raises(ValueError, match=r"^max\(\|lower\.bounds\|, \|upper\.bounds\|\) must be > 0 for every feature "
                                         r"\(used as its scale\); it is 0 at position\(s\) 2\.$"):
        check_bounds("bounds", ([1, 0], [2, 0]), 2, names=names, index_base=1)
    with pytest.raises(ValueError, match=r"^upper\.bounds must be finite; it has 1 NaN .* at position\(s\) 2\."):
        check_bounds("bounds", ([0, 0], [1, np.nan]), 2, names=names, index_base=1)
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


def test_scikit_learns_wording_inside_our_messages():
    """scikit-learn's estimator checks look for these phrases; the messages still name the argument."""
    from scipy import sparse

    with pytest.raises(ValueError, match=r"^X must be 2-D .*length 3\. Reshape your data: X\.reshape\(-1, 1\)"):
        check_array("X", [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"^X must have at least 1 column: found 0 feature\(s\) \(shape=\(3, 0\)\) "
                                         r"while a minimum of 1 is required\.$"):
        check_array("X", np.zeros((3, 0)))
    with pytest.raises(ValueError,
                       match=r"^X must hold real numbers, got dtype complex128: Complex data not supported"):
        check_array("X", np.ones((2, 2)) + 1j)
    with pytest.raises(ValueError, match=r"^X must hold real numbers, got complex values: Complex data not supported"):
        check_array("X", np.array([[1.0, 2 + 1j]], dtype=object))
    with pytest.raises(TypeError, match=r"^X is a sparse matrix \(csr_matrix\); sparse input is not supported"):
        check_array("X", sparse.csr_matrix(np.eye(2)))
    with pytest.raises(TypeError, match=r"^X must hold numbers only, got values of type dict \(float\(\) argument "
                                        r"must be a string or a real number, not 'dict'\)"):
        check_array("X", np.array([[1.0, {"a": 1}]], dtype=object))
    with pytest.raises(TypeError, match=r"values of type str; convert"):  # text: no float() aside
        check_array("X", np.array([[1.0, "a"]], dtype=object))


def test_check_binary_target():
    from sklearn.exceptions import DataConversionWarning

    from pydpowl._validation import check_binary_target

    classes, y = check_binary_target("y", np.array(["b", "a", "b"]))
    np.testing.assert_array_equal(classes, ["a", "b"])
    np.testing.assert_array_equal(y, [1.0, -1.0, 1.0])
    classes, y = check_binary_target("y", [-1, 1, 1])
    np.testing.assert_array_equal(y, [-1.0, 1.0, 1.0])  # -1/+1 code themselves
    with pytest.warns(DataConversionWarning, match="A column-vector y was passed"):
        check_binary_target("y", np.array([[0], [1]]))
    with pytest.raises(ValueError, match=r"requires y to be passed, but the target y is None"):
        check_binary_target("y", None)
    with pytest.raises(ValueError, match=r"got 1 class\.$"):
        check_binary_target("y", [3, 3])
    with pytest.raises(ValueError, match=r"got more than 2\.$"):
        check_binary_target("y", [0, 1, 2])
    with pytest.raises(ValueError, match=r"got more than 2\. Unknown label type: 'continuous'"):
        check_binary_target("y", [0.5, 1.0, 2.25])
    with pytest.raises(ValueError, match=r"^y must be finite; it has 1 NaN and 0 infinite entries of 3 at "
                                         r"position\(s\) 1\."):
        check_binary_target("y", [1.0, np.nan, -1.0])
    with pytest.raises(ValueError, match=r"got 0 \(no labels\)"):
        check_binary_target("y", [])


def test_check_weight_sensitivity_is_the_one_check_of_C():
    from pydpowl._validation import check_weight_sensitivity

    assert check_weight_sensitivity(0) == 0.0 and check_weight_sensitivity(np.float32(2.5)) == 2.5
    for bad in (-1.0, float("inf"), float("nan"), True, "1", None):
        with pytest.raises(ValueError, match=r"^C must be in \[0, inf\), got C="):
            check_weight_sensitivity(bad)
    with pytest.raises(ValueError, match=r"^weight_sensitivity must be in \[0, inf\), got weight_sensitivity=-2\.$"):
        check_weight_sensitivity(-2, "weight_sensitivity")


# ---- bounds by column name and columns matched by name (issue 22.1) ----

def test_named_bounds_recognises_every_named_form():
    import pandas as pd

    from pydpowl._validation import named_bounds

    want = {"a": (0, 1), "b": (-2, 2)}
    assert named_bounds("fb", want) == want
    got = named_bounds("fb", (pd.Series([0, -2], index=["a", "b"]), pd.Series([1, 2], index=["a", "b"])))
    assert {k: tuple(map(float, v)) for k, v in got.items()} == want
    got = named_bounds("fb", pd.DataFrame({"upper": [1, 2], "lower": [0, -2]}, index=["a", "b"]))
    assert {k: tuple(map(float, v)) for k, v in got.items()} == want
    got = named_bounds("fb", pd.DataFrame({"a": [0, 1], "b": [-2, 2]}, index=["lower", "upper"]))
    assert {k: tuple(map(float, v)) for k, v in got.items()} == want
    assert named_bounds("fb", ([0, -2], [1, 2])) is None  # by position
    assert named_bounds("fb", (pd.Series([0, -2]), pd.Series([1, 2]))) is None  # a RangeIndex names nothing
    with pytest.raises(TypeError, match="both lower and upper by column name"):
        named_bounds("fb", (pd.Series([0, -2], index=["a", "b"]), [1, 2]))
    with pytest.raises(TypeError, match=r"fb\['a'\] must be a pair"):
        named_bounds("fb", {"a": 1.0})
    with pytest.raises(TypeError, match="columns 'lower' and 'upper'"):
        named_bounds("fb", pd.DataFrame({"lo": [0], "hi": [1]}))


def test_resolve_feature_bounds_orders_by_column():
    from pydpowl._validation import resolve_feature_bounds

    lo, up = resolve_feature_bounds("fb", {"b": (-2, 2), "a": (0, 1)}, 2, ["a", "b"])
    np.testing.assert_array_equal(lo, [0, -2])
    np.testing.assert_array_equal(up, [1, 2])
    lo, up = resolve_feature_bounds("fb", ([0, -2], [1, 2]), 2, ["b", "a"])  # positional: column order
    np.testing.assert_array_equal(lo, [0, -2])
    with pytest.raises(ValueError, match=r"fb\['a'\]: max\(\|lower\|, \|upper\|\) must be > 0"):
        resolve_feature_bounds("fb", {"a": (0, 0), "b": (0, 1)}, 2, ["a", "b"])
    with pytest.raises(ValueError, match=r"fb\['a'\] must be finite"):
        resolve_feature_bounds("fb", {"a": (0, np.inf), "b": (0, 1)}, 2, ["a", "b"])


def test_columns_by_name():
    import pandas as pd

    from pydpowl._validation import columns_by_name

    X = pd.DataFrame({"b": [1.0], "a": [2.0], "c": [3.0]})
    assert list(columns_by_name(X, ["a", "b"], owner="M").columns) == ["a", "b"]
    assert columns_by_name(X, None, owner="M") is X
    with pytest.raises(ValueError, match=r"X lacks the column\(s\) \['d'\] that M was fitted on"):
        columns_by_name(X, ["a", "d"], owner="M")
    with pytest.warns(UserWarning, match="X does not have valid feature names, but M was fitted"):
        columns_by_name(X.to_numpy(), ["a", "b", "c"], owner="M")


def test_check_diagnose_bounds():
    from pydpowl._validation import check_diagnose_bounds

    assert check_diagnose_bounds(None) is None and check_diagnose_bounds(False) is None
    assert check_diagnose_bounds(True) == 0.5 and check_diagnose_bounds(0.1) == 0.1
    with pytest.raises(ValueError, match=r"diagnose_bounds must be in \(0, 1\)"):
        check_diagnose_bounds(1.0)


def test_is_chunked_does_not_need_dask_objects():
    import dask.array as da

    assert is_chunked(np.ones(3), 0.5, da.ones(3))
    assert not is_chunked(np.ones(3), 0.5, [1, 2], None)


def test_caller_words_name_arguments_and_count_positions_as_the_caller_does():
    """A front end runs the engine's checks in its own names and position base instead of restating them."""
    from pydpowl._validation import caller_words, said

    with caller_words({"X": "x", "feature_bounds.lower": "bounds$lower", "feature_bounds.upper": "bounds$upper"},
                      index_base=1):
        assert said("X") == "x" and said("gamma") == "gamma"
        with pytest.raises(ValueError, match=r"^x must be finite; it has 1 NaN .* \(rows 3\)"):
            check_array("X", np.array([[1.0], [2.0], [np.nan]]))
        with pytest.raises(ValueError, match=r"^bounds\$lower must be <= bounds\$upper .* position\(s\) 2\.$"):
            check_bounds("feature_bounds", ([0.0, 2.0], [1.0, 1.0]), 2)
        with pytest.raises(ValueError, match=r"\(first at position 1\)"):  # an explicit base still wins
            check_nonnegative("w", np.array([-1.0]), index_base=1)
        with pytest.raises(ValueError, match=r"\(first at position 2\)"):
            check_nonnegative("w", np.array([1.0, -1.0]))
    assert said("X") == "X"  # the block ends the setting
    with pytest.raises(ValueError, match=r"^X must be finite; it has 1 NaN .* \(rows 2\)"):
        check_array("X", np.array([[1.0], [2.0], [np.nan]]))
