"""Tests of pydpowl.datasets.tabular: a user's CSV as DP-OWL data, with stated coding."""

import re

import numpy as np
import pandas as pd
import pytest

from pydpowl.datasets.tabular import owl_data_from_frame, parse_bounds, parse_propensity, treatment_codes


def _frame():
    return pd.DataFrame({"arm": ["G", "S", "G", "S"], "b": [1.0, 2.0, 0.5, -0.2], "age": [20, 30, 95, 40],
                         "male": [0, 1, 1, 0], "ps": [0.6, 0.6, 0.7, 0.5]})


def test_parse_bounds_by_name_and_position():
    lo, hi = parse_bounds("male=0:1,age=18:89", ["age", "male"])
    np.testing.assert_array_equal(lo, [18, 0])
    np.testing.assert_array_equal(hi, [89, 1])
    lo, hi = parse_bounds("18:89, 0:1", ["age", "male"])
    np.testing.assert_array_equal(hi, [89, 1])


@pytest.mark.parametrize("text, message", [
    ("age=18:89", r"no bound for feature\(s\) \['male'\]"),
    ("age=18:89,sex=0:1", "not among the features"),
    ("18:89", "got 1 bound"),
    ("age=18-89,male=0:1", "lower:upper"),
    ("age=a:b,male=0:1", "two numbers"),
    ("age=89:18,male=0:1", "lower must be <= upper"),
    ("age=18:89,0:1", "either every bound by name"),
])
def test_parse_bounds_errors(text, message):
    with pytest.raises(ValueError, match=message):
        parse_bounds(text, ["age", "male"])


def test_treatment_coding():
    a, plus, minus = treatment_codes(pd.Series(["G", "S", "G"]), "G")
    assert a.tolist() == [1, -1, 1] and (plus, minus) == ("G", "S")
    a, plus, minus = treatment_codes(pd.Series([0, 1, 1]))
    assert a.tolist() == [-1, 1, 1] and (plus, minus) == ("1", "0")
    with pytest.raises(ValueError, match="--treated"):
        treatment_codes(pd.Series(["G", "S"]))
    with pytest.raises(ValueError, match="exactly 2 values"):
        treatment_codes(pd.Series([1, 2, 3]))


def test_parse_propensity():
    assert parse_propensity("0.25") == 0.25
    assert parse_propensity("column:ps") == "ps"
    with pytest.raises(ValueError, match=r"must be in \(0, 1\)"):
        parse_propensity("1.5")


def test_frame_to_owl_data_with_column_propensity_and_benefit_shift():
    data = owl_data_from_frame(_frame(), treatment="arm", benefit="b", features=["age", "male"],
                               bounds="age=18:89,male=0:1", weights_upper_bound=20, propensity="column:ps",
                               treated="G", benefit_lower_bound=-0.1)
    assert data.treatment.tolist() == [1, -1, 1, -1]
    # received-treatment probabilities: P(+1) for G rows, 1 - P(+1) for S rows
    np.testing.assert_allclose(data.propensity, [0.6, 0.4, 0.7, 0.5])
    # shift by the public lower bound -0.1; -0.2 is clipped to it first
    np.testing.assert_allclose(data.benefit, [1.1, 2.1, 0.6, 0.0])
    assert any("values below it are clipped to it" in n for n in data.notes)
    assert any("+1 = G, -1 = S" in n for n in data.notes)
    # counts computed from the data are diagnostics (printed on request only), never in the public text
    assert data.diagnostics == {"rows read": 4, "treatment +1 (G)": 2, "treatment -1 (S)": 2,
                                "benefits below the lower bound (clipped)": 1}
    assert not any(ch.isdigit() for ch in data.description)
    assert not any(re.search(r"\b[124] (value|row|subject)", n) for n in data.notes)
    assert data.weight_sensitivity is None  # a propensity column states nothing about C by itself


def test_weight_sensitivity_is_stated_for_a_column_and_zero_for_a_constant():
    kw = dict(treatment="arm", benefit="b", features=["age", "male"], bounds="age=18:89,male=0:1",
              weights_upper_bound=20, treated="G", benefit_lower_bound=-0.1)
    assert owl_data_from_frame(_frame(), propensity="column:ps", weight_sensitivity=0.0, **kw).weight_sensitivity == 0
    assert owl_data_from_frame(_frame(), propensity=0.5, **kw).weight_sensitivity == 0.0


@pytest.mark.parametrize("kw, message", [
    (dict(features=["age", "weight"]), r"missing column\(s\) \['weight'\]"),
    (dict(features=["age", "age"]), "must not repeat"),
    (dict(features=["age", "arm"]), "must not be features"),
    (dict(propensity="column:age"), "propensity column 'age' must hold probabilities"),
])
def test_frame_errors(kw, message):
    args = dict(treatment="arm", benefit="b", features=["age", "male"], bounds="18:89,0:1",
                weights_upper_bound=20, treated="G")
    args.update(kw)
    if args["features"] != ["age", "male"]:
        args["bounds"] = ",".join("0:100" for _ in args["features"])
    with pytest.raises(ValueError, match=message):
        owl_data_from_frame(_frame(), **args)


def test_missing_values_are_counted():
    f = _frame()
    f.loc[1, "age"] = np.nan
    with pytest.raises(ValueError, match=r"missing values in \{'age': 1\}"):
        owl_data_from_frame(f, treatment="arm", benefit="b", features=["age"], bounds="18:89", weights_upper_bound=9,
                            treated="G")


def test_infinite_feature_or_benefit_is_named(tmp_path):
    import numpy as np
    import pandas as pd
    import pytest

    from pydpowl.datasets.tabular import owl_data_from_frame

    frame = pd.DataFrame({"x": [0.1, np.inf, 0.3, 0.2], "arm": ["a", "b", "a", "b"], "B": [1.0, 2.0, 3.0, 1.0]})
    with pytest.raises(ValueError, match=r"infinite values in feature column\(s\) \{'x': 1\}"):
        owl_data_from_frame(frame, treatment="arm", treated="a", benefit="B", features=["x"],
                            bounds={"x": (0.0, 1.0)}, weights_upper_bound=10.0, propensity=0.5)


def test_frame_bounds_by_name_in_any_order():
    kw = dict(treatment="arm", treated="G", benefit="b", features=["age", "male"], weights_upper_bound=10.0,
              benefit_lower_bound=-1.0)
    data = owl_data_from_frame(_frame(), bounds={"male": (0, 1), "age": (18, 89)}, **kw)
    np.testing.assert_array_equal(data.feature_bounds[0], [18, 0])
    assert data.bounds_by_name == {"age": (18.0, 89.0), "male": (0.0, 1.0)}


def test_parse_bounds_by_name_or_position_and_its_errors():
    for text in ("b=2:3,a=0:1", "0:1,2:3"):
        lower, upper = parse_bounds(text, ["a", "b"])
        np.testing.assert_array_equal(lower, [0.0, 2.0])
        np.testing.assert_array_equal(upper, [1.0, 3.0])
    with pytest.raises(ValueError, match="feature 'a' is given twice"):
        parse_bounds("a=0:1,a=2:3", ["a", "b"])
    with pytest.raises(ValueError, match=r"\['c'\] are not among the features \['a', 'b'\]"):
        parse_bounds("a=0:1,c=2:3", ["a", "b"])
