"""The functions the R package calls (rpkg/pydpowl/inst/python/pydpowl_rcalls.py), called directly.

``svmdp_fit`` with output perturbation must release exactly what
:class:`pydpowl.DPOWL` releases on the same data and R stream (the engine's one
release), and leave the stream where DPOWL leaves it. Its checks speak R: R's
argument names, positions counted from 1, values spelled as R prints them.
By default (no R state) the noise comes from OS entropy and no warning depends
on the data; an R state (replay) warns that the release is not private.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from pydpowl import DPOWL, PrivacyLeakWarning, RRandom
from pydpowl.exceptions import ReplayStreamWarning

_PATH = Path(__file__).resolve().parents[2] / "rpkg" / "pydpowl" / "inst" / "python" / "pydpowl_rcalls.py"
_spec = importlib.util.spec_from_file_location("pydpowl_rcalls", _PATH)
rcalls = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rcalls)

LOWER, UPPER = np.array([18.0, 0.0, 0.0]), np.array([89.0, 1.0, 1.0])
#: DPOWL with the paper's mechanism, DPpack's svmDP output perturbation with weights
PAPER = dict(mechanism="output", residual=False, huber_h=0.5)


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(10, 95, n), rng.integers(0, 2, (n, 2))]).astype(float)  # some ages clipped
    y01 = (rng.uniform(size=n) < 0.6).astype(float)
    w = rng.uniform(0.0, 30.0, n)
    return X, y01, w


def _fit_svm(X, y01, w, *, W=25.0, eps=1.0, gamma=75.0, seed=2024, add_bias=True):
    return rcalls.svmdp_fit(X=X, y=y01, upper_bounds=UPPER, lower_bounds=LOWER, add_bias=add_bias, weights=w,
                            weights_upper_bound=W, eps=eps, gamma=gamma, huber_h=0.5, perturbation_method="output",
                            r_state=RRandom(seed).get_state())


@pytest.mark.parametrize("add_bias", [True, False])
def test_svmdp_output_releases_what_dpowl_releases_bit_for_bit(add_bias):
    X, y01, w = _data(1459)
    with pytest.warns(ReplayStreamWarning, match=r"NOT differentially private") as caught:
        out = _fit_svm(X, y01, w, add_bias=add_bias)
    assert [type(c.message) for c in caught] == [ReplayStreamWarning]  # the only warning: none about the data
    rng = RRandom(2024)
    model = DPOWL(epsilon=1.0, gamma=75.0, weights_upper_bound=25.0, feature_bounds=(LOWER, UPPER),
                  fit_intercept=add_bias, weight_sensitivity=0.0, random_state=rng, **PAPER)
    # OWL weights B / P with P = 1 are the weights themselves, clipped at W the same way
    model.fit(X, 2 * y01 - 1, w, np.ones(len(w)))
    np.testing.assert_array_equal(out["coeff"], model.dppack_coeff_)
    np.testing.assert_array_equal(out["r_state"], rng.get_state())


def test_svmdp_output_agrees_with_dpowl_on_large_data_through_the_numpy_path():
    X, y01, w = _data(20_000, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReplayStreamWarning)
        out = _fit_svm(X, y01, w, eps=np.inf)
    model = DPOWL(epsilon=np.inf, gamma=75.0, weights_upper_bound=25.0, feature_bounds=(LOWER, UPPER),
                  weight_sensitivity=0.0, random_state=RRandom(2024), **PAPER).fit(X, 2 * y01 - 1, w, np.ones(len(w)))
    np.testing.assert_allclose(out["coeff"], model.dppack_coeff_, rtol=1e-9, atol=1e-12)


def test_without_weights_the_bound_is_one_whatever_was_given():
    X, y01, _ = _data(300)
    with pytest.warns(ReplayStreamWarning):
        out = rcalls.svmdp_fit(X=X, y=y01, upper_bounds=UPPER, lower_bounds=LOWER, add_bias=True, weights=None,
                               weights_upper_bound=99.0, eps=1.0, gamma=2.0, huber_h=0.5,
                               perturbation_method="output", r_state=RRandom(3).get_state())
    model = DPOWL(epsilon=1.0, gamma=2.0, weights_upper_bound=1.0, feature_bounds=(LOWER, UPPER),
                  weight_sensitivity=0.0, random_state=RRandom(3), **PAPER).fit(X, 2 * y01 - 1, np.ones(300),
                                                                                np.ones(300))
    np.testing.assert_array_equal(out["coeff"], model.dppack_coeff_)


def test_r_sample_kind_digit_does_not_change_the_noise():
    X, y01, w = _data(200)
    state = RRandom(5).get_state()
    rounding = state.copy()
    rounding[0] = 10303  # sample.kind = "Rounding": R keeps the digit, rgamma/rnorm ignore it
    kw = dict(X=X, y=y01, upper_bounds=UPPER, lower_bounds=LOWER, add_bias=True, weights=w / 30,
              weights_upper_bound=1.0, eps=1.0, gamma=2.0, huber_h=0.5, perturbation_method="output")
    with pytest.warns(ReplayStreamWarning):
        a = rcalls.svmdp_fit(r_state=state, **kw)
        b = rcalls.svmdp_fit(r_state=rounding, **kw)
    np.testing.assert_array_equal(a["coeff"], b["coeff"])


@pytest.mark.parametrize("change, exc, match", [
    (dict(eps=0), ValueError, r"^eps must be in \(0, Inf\], got eps = 0\.$"),
    (dict(eps="1"), TypeError, r"^eps must be a real number, got character\.$"),
    (dict(huber_h=None), TypeError, r"^huber\.h must be a real number, got NULL\.$"),
    (dict(y=np.array([0.0, 1.0, 2.0])), ValueError, r"^y must have length 4 \(one per row of X\), got length 3\.$"),
    (dict(y=np.array([0.0, -1.0, 1.0, -1.0])), ValueError,
     r"^y must take values in \{0, 1\}; 2 of 4 entries do not \(first at position 2\)\. DPpack codes labels"),
    (dict(weights=np.array([1.0, -1.0, 1.0, 1.0])), ValueError,
     r"^weights must be non-negative; 1 of 4 entries are negative \(first at position 2\)\.$"),
    (dict(weights_upper_bound=None), ValueError, r"^weights\.upper\.bound must be given with weights \(the public "
     r"bound W on every weight\), got weights\.upper\.bound = NULL\.$"),
    (dict(perturbation_method="objective"), ValueError,
     r"^weights are supported with perturbation\.method = \"output\" only \(DPpack: \"Weighted SVM"),
    (dict(kernel="gaussian"), ValueError,
     r"^kernel must be one of c\(\"linear\", \"Gaussian\"\), got kernel = \"gaussian\"\.$"),
    (dict(kernel="Gaussian"), ValueError, r"^D \(the number of random Fourier features\) must be given for kernel"),
    (dict(kernel="Gaussian", D=2.5), TypeError, r"^D must be an integer, got numeric\.$"),
    (dict(regularizer="l1"), ValueError, r"^regularizer must be 'l2' \(pydpowl's one regularizer; for a custom "
     r"regularizer function use DPpack\), got regularizer = \"l1\"\.$"),
    (dict(upper_bounds=np.array([89.0, 1.0])), ValueError,
     r"^upper\.bounds must have length 3 \(one per feature\), got length 2\.$"),
    (dict(add_bias=None), TypeError, r"^add\.bias must be TRUE or FALSE, got NULL\.$"),
    (dict(eps=1e-320), ValueError,
     r"noise scale Delta/epsilon = Inf, which must be finite and > 0; nothing was released"),
])
def test_svmdp_fit_checks_speak_r(change, exc, match):
    X, y01, w = _data(4)
    kw = dict(X=X, y=y01, upper_bounds=UPPER, lower_bounds=LOWER, add_bias=True, weights=w,
              weights_upper_bound=25.0, eps=1.0, gamma=2.0, huber_h=0.5, perturbation_method="output", r_state=None)
    kw.update(change)
    with pytest.raises(exc, match=match):
        rcalls.svmdp_fit(**kw)


def test_fit_owl_leaves_the_checks_to_dpowl_in_r_words():
    X, y01, w = _data(50)
    kw = dict(x=X, treatment=2 * y01 - 1, benefit=w, propensity=0.5, lower=LOWER, upper=UPPER, intercept=True,
              epsilon=1.0, gamma=50.0, weights_upper_bound=40.0, huber_h=0.5, random_seed=None)
    out = rcalls.fit_owl(**kw)
    assert out["random_seed"] is None and out["coef"].shape == (3,)
    with pytest.raises(ValueError, match=r"^propensity \(the probability of treatment \+1\) must be in \(0, 1\), "
                                         r"got propensity = 1\.$"):
        rcalls.fit_owl(**{**kw, "propensity": 1.0})
    p = np.full(50, 0.5)
    p[7] = 0.0
    with pytest.raises(ValueError, match=r"^propensity must be in \(0, 1\] .* \(first at position 8\)\.$"):
        rcalls.fit_owl(**{**kw, "propensity": p})
    B = w.copy()
    B[2] = -1
    with pytest.raises(ValueError, match=r"^benefit must be non-negative \(OWL weights are benefit / propensity\); "
                                         r"1 of 50 entries are negative \(first at position 3\)\. Give benefit_bounds"):
        rcalls.fit_owl(**{**kw, "benefit": B})


def test_fit_owl_errors_name_r_arguments_and_count_from_1():
    """dpowl()'s values reach DPOWL unchecked: its one check speaks R's names (x, bounds$lower, intercept)."""
    X, y01, w = _data(50)
    kw = dict(x=X, treatment=2 * y01 - 1, benefit=w, propensity=0.5, lower=LOWER, upper=UPPER, intercept=True,
              epsilon=1.0, gamma=50.0, weights_upper_bound=40.0, huber_h=0.5, random_seed=None)
    with pytest.raises(ValueError, match=r"^bounds\$lower must have length 3 \(one per feature\), got length 1\.$"):
        rcalls.fit_owl(**{**kw, "lower": LOWER[:1]})
    with pytest.raises(ValueError, match=r"^bounds\$lower must be <= bounds\$upper for every feature; reversed at "
                                         r"position\(s\) 2\.$"):
        rcalls.fit_owl(**{**kw, "lower": np.array([LOWER[0], UPPER[1] + 1.0, LOWER[2]])})
    Xi = X.copy()
    Xi[3, 1] = np.inf
    with pytest.raises(ValueError, match=r"^x must be finite; it has 0 NaN and 1 infinite entries of 150 in "
                                         r"column\(s\) 2 \(rows 4\)\."):
        rcalls.fit_owl(**{**kw, "x": Xi})
    with pytest.raises(TypeError, match=r"^intercept must be TRUE or FALSE, got character\.$"):
        rcalls.fit_owl(**{**kw, "intercept": "yes"})
    from pydpowl import DPOWL

    with pytest.raises(ValueError, match=r"^feature_bounds: lower bounds must have length 3"):  # Python's own words
        DPOWL(epsilon=1.0, weights_upper_bound=40.0, feature_bounds=(LOWER[:1], UPPER)).fit(X, 2 * y01 - 1, w)


def test_propensity_logistic_and_make_data_check_r_numbers():
    spec = rcalls.propensity_logistic(benefit_bound=2, logit_bound=3.0, ridge=0.0, hessian_lower_bound=None)
    assert spec == {"benefit_bound": 2.0, "logit_bound": 3.0, "ridge": 0.0, "hessian_lower_bound": None,
                    "hessian_bound_kind": "hessian", "assume_hessian_bound": False}
    with pytest.raises(ValueError, match=r"^ridge must be in \[0, Inf\), got ridge = -1\.$"):
        rcalls.propensity_logistic(benefit_bound=2, logit_bound=3.0, ridge=-1.0, hessian_lower_bound=None)
    d = rcalls.make_data(name="synthetic", n=30.0, seed=2.0)  # R's whole doubles count as integers
    assert d["X"].shape[0] == 30 and len(d["names"]) == d["X"].shape[1]
    with pytest.raises(TypeError, match=r"^n must be an integer, got numeric\.$"):
        rcalls.make_data(name="synthetic", n=30.5, seed=1)


def test_numba_kernels_only_from_the_second_large_fit_of_a_worker():
    """A one-off fit never loads numba (about 1 s in a fresh process); repeated large fits use its kernels."""
    code = f"""
import importlib.util, sys
import numpy as np
from pydpowl import RRandom
spec = importlib.util.spec_from_file_location("pydpowl_rcalls", {str(_PATH)!r})
rc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rc)
rng = np.random.default_rng(0)
def fit(n):
    X = rng.uniform(0, 1, (n, 2))
    out = rc.svmdp_fit(X=X, y=(rng.uniform(size=n) < 0.5).astype(float), upper_bounds=np.ones(2),
                       lower_bounds=np.zeros(2), add_bias=True, weights=None, weights_upper_bound=None, eps=1.0,
                       gamma=1.0, huber_h=0.5, r_state=None)
    return "numba" in sys.modules
from pydpowl.engine.kernels import AUTO_MIN_ROWS as N
print(fit(N - 1), fit(N), fit(N - 1), fit(N))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    numba_installed = importlib.util.find_spec("numba") is not None
    assert out == ["False", "False", "False", str(numba_installed)]


def test_analyze_is_the_engines_analysis_with_r_names():
    from pydpowl.interop.analysis import analyze_arrays
    from pydpowl.datasets import make_cyp_guides_style

    d = make_cyp_guides_style(400, random_state=2)
    X = d.X.to_numpy(dtype=float)
    common = dict(weights_upper_bound=d.weights_upper_bound, total_epsilon=1.0, propensity=2 / 3, gamma=75.0)
    with pytest.warns(ReplayStreamWarning):  # a seed drawn from R's stream (rng = "R"): replay, not private
        got = rcalls.analyze(x=X, treatment=d.treatment, benefit=d.benefit, lower=d.feature_bounds[0],
                             upper=d.feature_bounds[1], benefit_bounds=np.array([0.0, 9.078]), seed=123.0,
                             treatment_labels=["guided", "standard"], columns=list(d.X.columns), **common)
    ref = analyze_arrays(X, d.treatment, d.benefit, lower=d.feature_bounds[0], upper=d.feature_bounds[1],
                         benefit_lower=0.0, benefit_upper=9.078, feature_names=list(d.X.columns),
                         treatment_labels=("guided", "standard"), seed=123, **common)
    assert got["coefficients"] == ref["coefficients"] and got["value"] == ref["value"]
    assert got["ledger"] == ref["ledger"] and got["model"]["treatment_labels"] == {"+1": "guided", "-1": "standard"}
    base = dict(x=X, treatment=d.treatment, benefit=d.benefit, lower=d.feature_bounds[0], upper=d.feature_bounds[1],
                benefit_bounds=np.array([0.0, 9.078]), columns=list(d.X.columns), **common)
    # run_analysis' checks, in dpowl_analysis()'s names (positions from 1)
    for change, error, match in [
        (dict(benefit_bounds=np.array([9.0, 0.0])), ValueError,
         r"^benefit_bounds must satisfy lower < upper, got benefit_bounds = c\(9, 0\)\.$"),
        (dict(benefit_bounds=np.array([0.0, 1.0, 2.0])), TypeError, r"^benefit_bounds must be a pair \(lower, upper\)"),
        (dict(lower=d.feature_bounds[1], upper=d.feature_bounds[0]), ValueError,
         r"^bounds\$lower must be <= bounds\$upper for every feature"),
        (dict(x=np.where(np.arange(X.size).reshape(X.shape) == 3, np.nan, X)), ValueError,
         r"^x must be finite.* in column\(s\) 'mdd' \(rows 1\)"),
        (dict(benefit=d.benefit[1:]), ValueError, r"^benefit must have length 400"),
        (dict(total_epsilon=0.0), ValueError, r"^total_epsilon must be in \(0, Inf\), got total_epsilon = 0"),
        (dict(weights_upper_bound=-1.0), ValueError, r"^weights_upper_bound must be in \(0, Inf\)"),
        (dict(level=1.0), ValueError, r"^level must be in \(0, 1\)"),
        (dict(propensity=1.0), ValueError, r"^propensity must be in \(0, 1\)"),
        (dict(public_n="yes"), TypeError, r"^public_n must be"),
    ]:
        with pytest.raises(error, match=match):
            rcalls.analyze(**{**base, **change})


def test_a_default_release_draws_from_os_entropy_and_sends_nothing_that_depends_on_the_data():
    """Issue 21.1/21.2: without an R state the noise is fresh OS entropy; no warning and no count reaches R, even
    when a record lies above the weights' bound (DPpack clips silently)."""
    X, y01, w = _data(300)
    kw = dict(X=X, y=y01, upper_bounds=UPPER, lower_bounds=LOWER, add_bias=True, weights=w, weights_upper_bound=25.0,
              eps=1.0, gamma=75.0, huber_h=0.5, perturbation_method="output")
    below = np.minimum(w, 25.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a = rcalls.svmdp_fit(**kw)            # 10% of the weights above the bound
        b = rcalls.svmdp_fit(**{**kw, "weights": below})
        tuned = rcalls.tune_classification_model(
            DPmodels=[{"class": "svmDP", "eps": 1.0, "gamma": g, "perturbation.method": "output"} for g in (1.0, 10.0)],
            X=X, y=y01, upper_bounds=UPPER, lower_bounds=LOWER, add_bias=True, weights=w, weights_upper_bound=25.0)
    assert caught == []
    assert a["r_state"] is None and tuned["r_state"] is None
    assert not np.array_equal(a["coeff"], b["coeff"])  # two draws (the exact parts are equal: clipped alike)
    for out in [a, b, *tuned["models"]]:
        assert not [k for k in out if "clipped" in k], sorted(out)


# R 4.2.2's format(x, digits = 15), as R prints these numbers
_R_FORMAT = [(0.0, "0"), (1.0, "1"), (-1.0, "-1"), (0.5, "0.5"), (1e-07, "1e-07"), (1e5, "1e+05"), (123456.0, "123456"),
             (2.6e7, "2.6e+07"), (1e-4, "1e-04"), (0.1, "0.1"), (1 / 3, "0.333333333333333"), (27.23385, "27.23385"),
             (-0.9999999, "-0.9999999"), (1e15, "1e+15"), (1e16, "1e+16"), (1234567.5, "1234567.5"),
             (0.000123, "0.000123"), (100.0, "100"), (np.inf, "Inf"), (-np.inf, "-Inf"), (np.nan, "NaN")]


@pytest.mark.parametrize("x, printed", _R_FORMAT)
def test_numbers_are_written_as_r_prints_them(x, printed):
    assert rcalls.r_number(x) == printed


@pytest.mark.parametrize("python, r", [
    ("eps must be in (0, inf], got eps=0.0.", "eps must be in (0, Inf], got eps = 0."),
    ("weights.upper.bound must be given, got weights.upper.bound=None.", "weights.upper.bound must be given, got "
     "weights.upper.bound = NULL."),
    ("eps must be a real number, got str.", "eps must be a real number, got character."),
    ("add.bias must be True or False, got bool.", "add.bias must be TRUE or FALSE, got logical."),
    ("kernel must be one of ['linear', 'Gaussian'], got kernel='gaussian'.",
     'kernel must be one of c("linear", "Gaussian"), got kernel = "gaussian".'),
    ("gamma must be in (0, inf), got gamma=inf.", "gamma must be in (0, Inf), got gamma = Inf."),
    ("eps must be a real number, got an array of length 2.", "eps must be a real number, got a vector of length 2."),
    ("x has shape=(0, 3) and DPmodels[[2]]=1e-07; p in [0, 1]", "x has shape = c(0, 3) and DPmodels[[2]] = 1e-07; "
     "p in [0, 1]"),
    ("bounds$lower=-2.5 for 'age' (rows 3, 7); a<=b, c==d; 2 NaN", "bounds$lower = -2.5 for 'age' (rows 3, 7); a<=b, "
     "c==d; 2 NaN"),
])
def test_messages_reach_r_for_r(python, r):
    assert rcalls.r_words(python) == r


def test_errors_and_warnings_of_every_r_call_are_for_r():
    with pytest.raises(ValueError, match=r"^eps must be in \(0, Inf\], got eps = 0\.$"):
        rcalls.logistic_regression_dp_settings(eps=0.0, gamma=1.0)
    X, y01, _ = _data(100)
    # worded for R, with R's name of the argument (reproduce.dppack)
    with pytest.warns(PrivacyLeakWarning, match=r"^LogisticRegressionDP\(reproduce\.dppack = TRUE\) reproduces"):
        rcalls.logistic_regression_dp_fit(X=X, y=y01, upper_bounds=UPPER, lower_bounds=LOWER, eps=1.0, gamma=1.0,
                                          reproduce_dppack=True)
    with pytest.warns(PrivacyLeakWarning, match=r"^svmDP\(reproduce\.dppack = TRUE\) reproduces"):
        rcalls.svmdp_fit(X=X, y=y01, upper_bounds=UPPER, lower_bounds=LOWER, eps=1.0, gamma=1.0,
                         reproduce_dppack=True)
    with pytest.warns(PrivacyLeakWarning, match=r"^LinearRegressionDP\(reproduce\.dppack = TRUE\) reproduces"):
        rcalls.linear_regression_dp_fit(X=X, y=np.asarray(y01, dtype=float), upper_bounds=np.r_[UPPER, 1.0],
                                        lower_bounds=np.r_[LOWER, 0.0], eps=1.0, delta=0.0, gamma=1.0,
                                        reproduce_dppack=True)
    assert set(rcalls.__all__) <= {name for name, f in vars(rcalls).items() if getattr(f, "__wrapped__", None)}


def test_dpowl_reports_the_noise_per_coefficient_and_flags_a_noise_dominated_release():
    X, y01, w = _data(400, seed=3)
    kw = dict(x=X, treatment=2 * y01 - 1, benefit=w, propensity=0.5, lower=LOWER, upper=UPPER, intercept=True,
              epsilon=2.0, gamma=75.0, weights_upper_bound=40.0, huber_h=0.5, mechanism="output", residual=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = rcalls.fit_owl(**kw)
    d, Delta = 4, out["sensitivity"]
    scale = np.r_[1.0, np.maximum(np.abs(LOWER), np.abs(UPPER))] * np.sqrt(d)  # DPpack's scaling, bias first
    np.testing.assert_allclose(out["noise"]["sd"], np.sqrt(d + 1) * Delta / 2.0 / scale, rtol=1e-14)
    assert out["noise"]["expected_norm"] == pytest.approx(d * Delta / 2.0, rel=1e-14)
    assert out["noise"]["minimiser_norm_bound"] == pytest.approx(np.sqrt(2 * 400 * 40.0 / 75.0), rel=1e-14)
    assert not out["noise"]["dominated"]
    with pytest.warns(rcalls.NoiseDominatedWarning, match=r"^the release is noise-dominated: .* Raise epsilon or "
                                                          r"gamma \(or use more rows\)\.$"):
        low = rcalls.fit_owl(**{**kw, "gamma": 0.5, "epsilon": 1.0})
    assert low["noise"]["dominated"]


def test_dpowl_noise_summary_of_objective_perturbation_bounds_the_move_by_the_linear_term():
    """dpowl()'s default with a known propensity: residual weights (W / 16) and objective perturbation; the
    noise's expected effect is bounded by E||b|| / lambda = d / (rate lambda), from public constants only."""
    X, y01, w = _data(400, seed=3)
    out = rcalls.fit_owl(x=X, treatment=2 * y01 - 1, benefit=w, propensity=0.5, lower=LOWER, upper=UPPER,
                         intercept=True, epsilon=2.0, gamma=75.0, weights_upper_bound=40.0, huber_h=None)
    assert (out["mechanism"], out["residual"], out["huber_h"]) == ("objective", True, 1.0)
    assert np.isnan(out["sensitivity"]) and "objective perturbation" in out["mechanism_description"]
    d, W_r, c = 4, 40.0 / 16, 1.0 / (2 * 1.0)
    eps_rule = 2.0 * 0.9                               # 10 % of epsilon for the baseline
    eps_obj = eps_rule * (1 - np.sqrt(400 * 1e-10 / (2 * W_r)))  # less the solver smoothing's share
    lam = max(75.0, W_r * c / np.expm1(eps_obj / 2))
    rate = (eps_obj - np.log1p(W_r * c / lam)) / (2 * W_r)
    assert out["noise"]["expected_norm"] == pytest.approx(d / (rate * lam), rel=1e-12)
    # l(0) = 1
    assert out["noise"]["minimiser_norm_bound"] == pytest.approx(np.sqrt(2 * 400 * W_r * 1.0 / lam), rel=1e-12)


def test_warnings_counted_from_the_private_data_never_reach_r():
    """Issue 21.1 at the relay: a DataClippedWarning (a count of clipped values, computed from the private data)
    raised anywhere under an R call is not relayed; other warnings are, in R's words."""
    from pydpowl.exceptions import DataClippedWarning

    def call():
        warnings.warn(DataClippedWarning("3 of 200 weights exceed weights.upper.bound=2.0"))
        warnings.warn(UserWarning("eps=0.5 is small"))
        return 1

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert rcalls._for_r(call)() == 1
    assert [(w.category, str(w.message)) for w in caught] == [(UserWarning, "eps = 0.5 is small")]


# ---- several arms and several stages --------------------------------------------------------------------------

def _arms_data(n=300, seed=5):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 3))
    codes = rng.integers(1, 4, n).astype(float)  # R's levels' positions
    B = rng.uniform(0, 2, n) + (codes == 1 + (X[:, 0] > 0))
    return X, codes, B


def test_fit_owl_with_three_arms_releases_what_dpowl_releases_and_names_the_levels():
    X, codes, B = _arms_data()
    kw = dict(x=X, treatment=codes, benefit=B, lower=-np.ones(3), upper=np.ones(3), intercept=True, epsilon=1.0,
              gamma=20.0, weights_upper_bound=10.0, huber_h=0.5, levels=["a", "b", "c"])
    with pytest.warns(ReplayStreamWarning):
        out = rcalls.fit_owl(**kw, propensity={"per_arm": np.array([0.5, 0.25, 0.25])},
                             random_seed=RRandom(11).get_state())
    model = DPOWL(epsilon=1.0, gamma=20.0, weights_upper_bound=10.0, feature_bounds=(-np.ones(3), np.ones(3)),
                  huber_h=0.5, random_state=RRandom(11)).fit(X, codes, B, {1.0: 0.5, 2.0: 0.25, 3.0: 0.25})
    np.testing.assert_array_equal(out["coef"], model.coef_)
    np.testing.assert_array_equal(out["intercept"], model.intercept_)
    assert (out["mechanism"], out["residual"]) == ("objective", True)  # DPOWL's K-arm default (issue 25)
    assert out["vertices"].shape == (3, 2) and out["noise"]["sd"].shape == (2, 4)
    with pytest.warns(ReplayStreamWarning):  # the paper's mechanism: the noise of the output release
        paper = rcalls.fit_owl(**kw, propensity={"per_arm": np.array([0.5, 0.25, 0.25])}, mechanism="output",
                               residual=False, random_seed=RRandom(11).get_state())
    assert paper["noise"]["expected_norm"] == pytest.approx(8 * paper["sensitivity"] / 1.0, rel=1e-14)
    with pytest.raises(ValueError, match=r'^propensity\["b"\] must be a probability in \(0, 1\], got 1\.25\.$'):
        rcalls.fit_owl(**kw, propensity={"per_arm": np.array([0.5, 1.25, 0.25])})
    with pytest.raises(ValueError, match=r"^propensity = 0\.5: one number means balanced randomisation, 1/3 for the 3 "
                                         r'arms; .*\(names "a", "b", "c"\), or an n x 3 matrix'):
        rcalls.fit_owl(**kw, propensity=0.5)
    # two arms coded -1/+1 by R: a per-arm vector is the probability of the arm coded +1, as before
    A = np.where(codes > 1, 1.0, -1.0)
    two = {**kw, "treatment": A, "levels": ["s", "g"], "epsilon": np.inf}
    np.testing.assert_array_equal(rcalls.fit_owl(**two, propensity={"per_arm": np.array([0.4, 0.6])})["coef"],
                                  rcalls.fit_owl(**two, propensity=0.6)["coef"])
    assert "vertices" not in rcalls.fit_owl(**two, propensity=0.6)


def _stages(n=400, seed=7):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    A1, A2 = rng.choice([-1.0, 1.0], n), rng.choice([-1.0, 1.0], n)
    R2 = (A1 == np.sign(X[:, 0])) + (A2 == np.sign(X[:, 1])) + rng.normal(0, 0.5, n)
    H = [X, np.column_stack([X, A1])]
    bounds = [{"lower": np.full(3, -3.0), "upper": np.full(3, 3.0)},
              {"lower": np.r_[np.full(3, -3.0), -1.0], "upper": np.r_[np.full(3, 3.0), 1.0]}]
    return dict(H=H, AA=[A1, A2], RR=[np.zeros(n), R2], n=float(n), pi=[0.5, 0.5], bounds=bounds,
                reward_bounds=[np.array([0.0, 0.1]), np.array([-1.0, 4.0])])


def test_owl_fit_releases_what_dpmultistageowl_releases():
    from pydpowl import DPMultiStageOWL

    kw = _stages()
    with pytest.warns(ReplayStreamWarning):
        out = rcalls.owl_fit(**kw, epsilon=np.array([2.0]), gamma=np.array([30.0]), baseline="linear",
                             mechanism="output", huber_h=0.5, random_seed=RRandom(3).get_state())
    model = DPMultiStageOWL(epsilon=2.0, gamma=30.0, baseline="linear", reward_bounds=[(0.0, 0.1), (-1.0, 4.0)],
                            mechanism="output", residual=False, huber_h=0.5,  # owl(mechanism = "output")'s
                            feature_bounds=[([-3] * 3, [3] * 3), ([-3] * 3 + [-1], [3] * 3 + [1])],
                            random_state=RRandom(3)).fit(kw["H"], kw["AA"], kw["RR"], [0.5, 0.5])
    for got, st in zip(out["stages"], model.stages_):
        np.testing.assert_array_equal(got["coef"], st.rule.coef)
        np.testing.assert_array_equal(got["intercept"], st.rule.intercept)
        np.testing.assert_array_equal(got["baseline_coef"], st.baseline_coef)
    assert out["ledger"]["release"] == [r.label for r in model.ledger_.releases]
    np.testing.assert_array_equal(out["random_seed"][1:], model.random_state.get_state()[1:])
    # owl()'s default (mechanism "auto", huber_h NULL, baseline "lower"): the engine's defaults
    with pytest.warns(ReplayStreamWarning):
        out = rcalls.owl_fit(**kw, epsilon=np.array([2.0]), gamma=np.array([30.0]), baseline="lower",
                             random_seed=RRandom(4).get_state())
    model = DPMultiStageOWL(epsilon=2.0, gamma=30.0, reward_bounds=[(0.0, 0.1), (-1.0, 4.0)],
                            feature_bounds=[([-3] * 3, [3] * 3), ([-3] * 3 + [-1], [3] * 3 + [1])],
                            random_state=RRandom(4)).fit(kw["H"], kw["AA"], kw["RR"], [0.5, 0.5])
    for got, st in zip(out["stages"], model.stages_):
        np.testing.assert_array_equal(got["coef"], st.rule.coef)
        assert got["mechanism"] == st.mechanism == "objective" and got["residual"] and got["huber_h"] == 1.0
    assert out["ledger"]["release"] == [r.label for r in model.ledger_.releases]
    # DTRlearn2's c: gamma_k = n / (c d_k s_k^2), s_k the stage's largest bound
    out = rcalls.owl_fit(**kw, epsilon=np.inf, c=np.array([0.5]))
    assert [s["gamma"] for s in out["stages"]] == pytest.approx([400 / (0.5 * 4 * 9), 400 / (0.5 * 5 * 9)], rel=1e-15)


@pytest.mark.parametrize("change, match", [
    (lambda kw: kw["H"].__setitem__(1, kw["H"][1][1:]),
     r"^H\[\[2\]\] \(stage 2's history\) has 399 rows but H\[\[1\]\] has 400: every stage's history must have one row"),
    (lambda kw: kw["H"].__setitem__(0, kw["H"][0][1:]), r"^H\[\[1\]\] \(stage 1's history\) has 399 rows but n = 400"),
    (lambda kw: kw["AA"].__setitem__(1, np.ones(400)),
     r"^AA\[\[2\]\] \(stage 2's treatments\) must contain at least two arms .* "
     r"all 400 entries are 1 \(one class only\)\.$"),
    (lambda kw: kw["pi"].__setitem__(0, {"per_arm": np.array([0.5, 0.6])}),
     r"^pi\[\[1\]\]: the probabilities of the 2 arms must sum to 1 .* got 1\.1\.$"),
    (lambda kw: kw["pi"].__setitem__(0, np.full(400, 0.5)),
     r"^pi\[\[1\]\] was given as an array of P\(A_i \| x_i\): state how"),
    (lambda kw: kw["RR"].__setitem__(1, np.r_[np.nan, kw["RR"][1][1:]]),
     r"^RR\[\[2\]\] must be finite; it has 1 NaN and 0 infinite entries of 400 at position\(s\) 1\."),
    (lambda kw: kw["bounds"][1].__setitem__("lower", np.r_[np.full(3, 3.5), -1.0]),
     r"^bounds\[\[2\]\]\$lower must be <= bounds\[\[2\]\]\$upper for every feature; reversed at position\(s\) 1, 2, 3"),
    (lambda kw: kw.__setitem__("reward_bounds", [np.array([0.0, 0.1]), np.array([4.0, -1.0])]),
     r"^reward_bounds\[\[2\]\] must be finite with lower < upper \(public bounds on stage 2's reward\), "
     r"got reward_bounds\[\[2\]\] = c\(4, -1\)\.$"),
    (lambda kw: kw.__setitem__("reward_bounds", np.array([4.0, -1.0])),
     r"^reward_bounds must be finite with lower < upper .*got reward_bounds = c\(4, -1\)\.$"),
    (lambda kw: kw.__setitem__("epsilon", np.array([1.0, 1.0, 1.0])),
     r"^epsilon must be one number \(the total\) or one per stage \(T = 2\), got 3 numbers\.$"),
    (lambda kw: kw.__setitem__("epsilon", np.array([1.0, 0.0])), r"^epsilon\[2\] must be in \(0, Inf\], got"),
    (lambda kw: kw.__setitem__("gamma", np.array([1.0, -2.0])), r"^gamma\[2\] must be .*got"),
    (lambda kw: kw.__setitem__("propensity_floor", np.array([0.5, 1.5])),
     r"^propensity_floor\[2\] must be in \(0, 1\], got 1\.5\.$"),
    (lambda kw: kw.update(pi=[np.full(400, 0.5), 0.5], weight_sensitivity=0.0),
     r"^propensity_floor is needed: pi\[\[1\]\] gives one probability per subject"),
    (lambda kw: kw["bounds"][1].__setitem__("lower", np.full(3, -3.0)),
     r"^bounds\[\[2\]\]\$lower must have length 4"),
    (lambda kw: kw.update(baseline="linear", baseline_share=1.5),
     r"^baseline_share must be in \(0, 1\), got baseline_share = 1\.5"),
])
def test_owl_fit_checks_speak_r(change, match):
    """The engine's checks (DPMultiStageOWL's), in owl()'s names per stage, positions and stages from 1."""
    kw = {"epsilon": 1.0, "gamma": 10.0, **_stages()}
    change(kw)
    with pytest.raises(ValueError, match=match):
        rcalls.owl_fit(**kw)


def test_owl_evaluate_is_dtrlearn2s_value_and_benefit():
    from pydpowl.estimators.multistage import ipw_value

    kw = _stages()
    rng = np.random.default_rng(0)
    rec = [rng.choice([-1.0, 1.0], 400) for _ in range(2)]
    out = rcalls.owl_evaluate(recommended=rec, AA=kw["AA"], RR=kw["RR"], pi=[0.5, {"per_arm": np.array([0.5, 0.5])}])
    value, _ = ipw_value(rec, kw["AA"], kw["RR"], [np.full(400, 0.5)] * 2)
    follow = (rec[0] == kw["AA"][0]) & (rec[1] == kw["AA"][1])
    Y = kw["RR"][0] + kw["RR"][1]
    assert out["valuefun"] == pytest.approx(Y[follow].mean(), rel=1e-12) == value
    assert out["benefit"] == pytest.approx(Y[follow].mean() - Y[~follow].mean(), rel=1e-12)


def _regime(n=400):
    kw = _stages(n)
    return dict(H=kw["H"], treatment=[np.where(a > 0, 2.0, 1.0) for a in kw["AA"]], levels=[["-1", "1"]] * 2,
                benefit=kw["RR"], bounds=kw["bounds"], benefit_bounds=kw["reward_bounds"], total_epsilon=2.0,
                propensity=[0.5, 0.5], gamma=10.0)


@pytest.mark.parametrize("change, match", [
    (lambda kw: kw["H"].__setitem__(1, kw["H"][1][1:]),
     r"^x\[\[2\]\] \(stage 2's history\) has 399 rows but x\[\[1\]\] "),
    (lambda kw: kw["benefit"].__setitem__(1, np.r_[np.nan, kw["benefit"][1][1:]]),
     r"^benefit\[\[2\]\] must be finite; it has 1 NaN"),
    (lambda kw: kw.__setitem__("benefit_bounds", [np.array([0.0, 0.1]), np.array([4.0, -1.0])]),
     r"^benefit_bounds\[\[2\]\] must be finite with lower < upper .*got benefit_bounds\[\[2\]\] = c\(4, -1\)\.$"),
    (lambda kw: kw["bounds"][1].__setitem__("lower", np.r_[np.full(3, 3.5), -1.0]),
     r"^bounds\[\[2\]\]\$lower must be <= bounds\[\[2\]\]\$upper for every feature; reversed at position\(s\) 1, 2, 3"),
    (lambda kw: kw.__setitem__("stage_split", np.array([1.0, 0.0])),
     r"^stage_split\[2\] must be in \(0, Inf\), got 0 \(stage 2's share\)\.$"),
    (lambda kw: kw.__setitem__("gamma", np.array([1.0, -2.0])), r"^gamma\[2\] must be .*got"),
    (lambda kw: kw.__setitem__("total_epsilon", -1.0), r"^total_epsilon must be in \(0, Inf\), got total_epsilon = -1"),
])
def test_analyze_regime_checks_are_the_engines_in_r_words(change, match):
    """run_regime_analysis' and DPMultiStageOWL's checks, in dpowl_analysis()'s names per stage (positions from 1)."""
    kw = _regime()
    change(kw)
    with pytest.raises(ValueError, match=match):
        rcalls.analyze_regime(**kw)


def test_analyze_regime_public_n_is_checked_by_the_engine():
    with pytest.raises(TypeError, match=r"^public_n must be"):
        rcalls.analyze_regime(**_regime(), public_n="yes")


def test_owl_evaluate_names_a_stage_whose_treatments_are_too_short():
    """predict()'s value: AA[[2]] shorter than AA[[1]] is refused by the engine's one length rule, in R's names."""
    kw = _stages()
    AA = [kw["AA"][0], kw["AA"][1][:399]]
    rec = [np.ones(400), np.ones(400)]
    with pytest.raises(ValueError, match=r"^AA\[\[2\]\] \(stage 2's treatments\) must have length 400 \(one label per "
                                         r"subject\), got length 399\.$"):
        rcalls.owl_evaluate(recommended=rec, AA=AA, RR=kw["RR"], pi=[0.5, 0.5])
