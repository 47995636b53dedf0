"""The functions the R package calls (rpkg/pydpowl/inst/python/pydpowl_rcalls.py), called directly.

``svmdp_fit`` with output perturbation must release exactly what
:class:`pydpowl.DPOWL` releases on the same data and R stream (the engine's one
release), and leave the stream where DPOWL leaves it. Its checks speak R: R's
argument names, positions counted from 1.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from pydpowl import DPOWL, RRandom

_PATH = Path(__file__).resolve().parents[1] / "rpkg" / "pydpowl" / "inst" / "python" / "pydpowl_rcalls.py"
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
    with pytest.warns(rcalls.WeightsClippedWarning, match=r"^\d+ of 1459 weights exceed weights.upper.bound = 25 "):
        out = _fit_svm(X, y01, w, add_bias=add_bias)
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
        warnings.simplefilter("ignore", rcalls.WeightsClippedWarning)
        out = _fit_svm(X, y01, w, eps=np.inf)
    model = DPOWL(epsilon=np.inf, gamma=75.0, weights_upper_bound=25.0, feature_bounds=(LOWER, UPPER),
                  weight_sensitivity=0.0, random_state=RRandom(2024), **PAPER).fit(X, 2 * y01 - 1, w, np.ones(len(w)))
    np.testing.assert_allclose(out["coeff"], model.dppack_coeff_, rtol=1e-9, atol=1e-12)


def test_without_weights_the_bound_is_one_whatever_was_given():
    X, y01, _ = _data(300)
    out = rcalls.svmdp_fit(X=X, y=y01, upper_bounds=UPPER, lower_bounds=LOWER, add_bias=True, weights=None,
                           weights_upper_bound=99.0, eps=1.0, gamma=2.0, huber_h=0.5, perturbation_method="output",
                           r_state=RRandom(3).get_state())
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
    a = rcalls.svmdp_fit(r_state=state, **kw)
    b = rcalls.svmdp_fit(r_state=rounding, **kw)
    np.testing.assert_array_equal(a["coeff"], b["coeff"])


@pytest.mark.parametrize("change, exc, match", [
    (dict(eps=0), ValueError, r"^eps must be in \(0, inf\], got eps=0\.0\.$"),
    (dict(huber_h=None), TypeError, r"^huber\.h must be a real number, got None\.$"),
    (dict(y=np.array([0.0, 1.0, 2.0])), ValueError, r"^y must have length 4 \(one per row of X\), got length 3\.$"),
    (dict(y=np.array([0.0, -1.0, 1.0, -1.0])), ValueError,
     r"^y must take values in \{0, 1\}; 2 of 4 entries do not \(first at position 2\)\. DPpack codes labels"),
    (dict(weights=np.array([1.0, -1.0, 1.0, 1.0])), ValueError,
     r"^weights must be non-negative; 1 of 4 entries are negative \(first at position 2\)\.$"),
    (dict(weights_upper_bound=None), ValueError, r"^weights\.upper\.bound must be given with weights \(the public "),
    (dict(perturbation_method="objective"), ValueError,
     r"^weights are supported with perturbation\.method='output' only \(DPpack: \"Weighted SVM"),
    (dict(kernel="gaussian"), ValueError, r"^kernel must be one of \['linear', 'Gaussian'\], got kernel='gaussian'\.$"),
    (dict(kernel="Gaussian"), ValueError, r"^D \(the number of random Fourier features\) must be given for kernel"),
    (dict(kernel="Gaussian", D=2.5), TypeError, r"^D must be an integer, got float\.$"),
    (dict(regularizer="l1"), ValueError, r"^regularizer must be 'l2' \(pydpowl's one regularizer; for a custom "
     r"regularizer function use DPpack\), got regularizer='l1'\.$"),
    (dict(upper_bounds=np.array([89.0, 1.0])), ValueError,
     r"^upper\.bounds must have length 3 \(one per feature\), got length 2\.$"),
    (dict(add_bias=None), TypeError, r"^add\.bias must be True or False, got None\.$"),
    (dict(eps=1e-320), ValueError, r"noise scale Delta/epsilon = inf, which must be finite and > 0; nothing was released"),
])
def test_svmdp_fit_checks_speak_r(change, exc, match):
    X, y01, w = _data(4)
    kw = dict(X=X, y=y01, upper_bounds=UPPER, lower_bounds=LOWER, add_bias=True, weights=w,
              weights_upper_bound=25.0, eps=1.0, gamma=2.0, huber_h=0.5, perturbation_method="output", r_state=None)
    kw.update(change)
    with pytest.raises(exc, match=match):
        rcalls.svmdp_fit(**kw)


def test_fit_owl_checks_its_arguments_before_the_engine():
    X, y01, w = _data(50)
    kw = dict(x=X, treatment=2 * y01 - 1, benefit=w, propensity=0.5, lower=LOWER, upper=UPPER, intercept=True,
              epsilon=1.0, gamma=2.0, weights_upper_bound=40.0, huber_h=0.5, random_seed=None)
    out = rcalls.fit_owl(**kw)
    assert out["random_seed"] is None and out["coef"].shape == (3,)
    with pytest.raises(ValueError, match=r"^propensity must be in \(0, 1\), got propensity=1\.0\.$"):
        rcalls.fit_owl(**{**kw, "propensity": 1.0})
    p = np.full(50, 0.5)
    p[7] = 0.0
    with pytest.raises(ValueError, match=r"^propensity must be in \(0, 1\] .* \(first at position 8\)\.$"):
        rcalls.fit_owl(**{**kw, "propensity": p})
    B = w.copy()
    B[2] = -1
    with pytest.raises(ValueError, match=r"^benefit must be non-negative \(OWL weights are benefit / propensity\); "
                                         r"1 of 50 entries are negative \(first at position 3\)\. Shift"):
        rcalls.fit_owl(**{**kw, "benefit": B})


def test_propensity_logistic_and_make_data_check_r_numbers():
    spec = rcalls.propensity_logistic(benefit_bound=2, logit_bound=3.0, ridge=0.0, hessian_lower_bound=None)
    assert spec == {"benefit_bound": 2.0, "logit_bound": 3.0, "ridge": 0.0, "hessian_lower_bound": None,
                    "hessian_bound_kind": "hessian", "assume_hessian_bound": False}
    with pytest.raises(ValueError, match=r"^ridge must be in \[0, inf\), got ridge=-1\.0\.$"):
        rcalls.propensity_logistic(benefit_bound=2, logit_bound=3.0, ridge=-1.0, hessian_lower_bound=None)
    d = rcalls.make_data(name="synthetic", n=30.0, seed=2.0)  # R's whole doubles count as integers
    assert d["X"].shape[0] == 30 and len(d["names"]) == d["X"].shape[1]
    with pytest.raises(TypeError, match=r"^n must be an integer, got float\.$"):
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
                       gamma=1.0, huber_h=0.5, r_state=RRandom(1).get_state())
    return "numba" in sys.modules
from pydpowl.engine.kernels import AUTO_MIN_ROWS as N
print(fit(N - 1), fit(N), fit(N - 1), fit(N))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    numba_installed = importlib.util.find_spec("numba") is not None
    assert out == ["False", "False", "False", str(numba_installed)]


def test_analyze_is_the_engines_analysis_with_r_names():
    from pydpowl.analysis import analyze_arrays
    from pydpowl.datasets import make_cyp_guides_style

    d = make_cyp_guides_style(400, random_state=2)
    X = d.X.to_numpy(dtype=float)
    common = dict(weights_upper_bound=d.weights_upper_bound, total_epsilon=1.0, propensity=2 / 3, gamma=75.0)
    got = rcalls.analyze(x=X, treatment=d.treatment, benefit=d.benefit, lower=d.feature_bounds[0],
                         upper=d.feature_bounds[1], benefit_bounds=np.array([0.0, 9.078]), seed=123.0,
                         treatment_labels=["guided", "standard"], columns=list(d.X.columns), **common)
    ref = analyze_arrays(X, d.treatment, d.benefit, lower=d.feature_bounds[0], upper=d.feature_bounds[1],
                         benefit_lower=0.0, benefit_upper=9.078, feature_names=list(d.X.columns),
                         treatment_labels=("guided", "standard"), seed=123, **common)
    assert got["coefficients"] == ref["coefficients"] and got["value"] == ref["value"]
    assert got["ledger"] == ref["ledger"] and got["model"]["treatment_labels"] == {"+1": "guided", "-1": "standard"}
    with pytest.raises(ValueError, match=r"^benefit_bounds must be c\(lower, upper\) with lower < upper"):
        rcalls.analyze(x=X, treatment=d.treatment, benefit=d.benefit, lower=d.feature_bounds[0],
                       upper=d.feature_bounds[1], benefit_bounds=np.array([9.0, 0.0]), **common)
