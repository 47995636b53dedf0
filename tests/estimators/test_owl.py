import math
import re
import pickle

import numpy as np
import pytest
from scipy import stats

from pydpowl import DPOWL, LogisticPropensity, OWLProblem, prepare_owl, shift_benefits
from pydpowl.datasets import make_cyp_guides_style, make_synthetic_owl
from pydpowl.engine.solver import objective_gradient
from pydpowl.engine.losses import HuberHingeLoss
from pydpowl.estimators.summary import delta_text


@pytest.fixture(scope="module")
def synth():
    return make_synthetic_owl(400, random_state=1)


def owl(eps=math.inf, **kw):
    """DPOWL with the paper's mechanism (Algorithm 1, OWL weights, h = 0.5), which these tests are about."""
    base = dict(epsilon=eps, gamma=5.0, weights_upper_bound=30.0, feature_bounds=([0] * 4, [1] * 4),
                mechanism="output", residual=False, huber_h=0.5)
    base.update(kw)
    return DPOWL(**base)


def test_nonprivate_fit_is_certified_in_scaled_space(synth):
    m = owl(keep_nonprivate=True).fit(synth.X, synth.treatment, synth.benefit, 0.5)
    problem = prepare_owl(synth.X, synth.treatment, synth.benefit, 0.5, weights_upper_bound=30.0,
                          feature_bounds=([0] * 4, [1] * 4))
    g = objective_gradient(m.nonprivate_scaled_coef_, problem.Z, problem.labels, problem.weights, gamma=5.0,
                           loss=HuberHingeLoss(0.5))
    assert np.linalg.norm(g) <= 1e-10
    np.testing.assert_allclose(m.dppack_coeff_, problem.scaler.coef_to_original(m.scaled_coef_))
    assert problem.weight_sensitivity == 0.0 and problem.n_clipped_features == 0


def test_owl_weights_and_clipping_counted(synth):
    m = owl(weights_upper_bound=10.0).fit(synth.X, synth.treatment, synth.benefit, 0.5)
    expected = int(np.sum(synth.benefit / 0.5 > 10.0))
    assert m.n_clipped_weights_ == expected > 0


def test_rule_recovers_most_of_the_optimal_rule(synth):
    m = owl(gamma=1.0).fit(synth.X, synth.treatment, synth.benefit, 0.5)
    acc = np.mean(m.predict(synth.X) == synth.optimal)
    assert acc > 0.85, f"non-private accuracy {acc:.3f} <= 0.85 on n=400"


def test_private_noise_law_in_scaled_space(synth):
    rng = np.random.default_rng(3)
    model = owl(eps=2.0, keep_nonprivate=True, random_state=rng)
    noises = np.array([model.fit(synth.X, synth.treatment, synth.benefit).noise_scaled_ for _ in range(800)])
    delta = 2 * 30.0 / 5.0
    ks = stats.kstest(np.linalg.norm(noises, axis=1), stats.gamma(a=5, scale=delta / 2.0).cdf)
    assert ks.pvalue > 1e-3, f"KS of DP-OWL noise norms vs Gamma(5, eps/Delta): p={ks.pvalue:.2e} <= 1e-3"


def test_sensitivity_on_worst_case_neighbour_subjects():
    data = make_synthetic_owl(150, random_state=8)
    X = data.X.to_numpy()
    gamma, W = 2.0, 30.0
    rng = np.random.default_rng(0)
    worst = 0.0
    base = owl(gamma=gamma, keep_nonprivate=True).fit(X, data.treatment, data.benefit).nonprivate_scaled_coef_
    for _ in range(30):
        j = rng.integers(len(X))
        X2, A2, B2 = X.copy(), data.treatment.copy(), data.benefit.copy()
        X2[j] = rng.integers(0, 2, size=4)  # a corner of the feature box
        A2[j] = -A2[j]
        B2[j] = W * 0.5  # weight exactly W
        other = owl(gamma=gamma, keep_nonprivate=True).fit(X2, A2, B2).nonprivate_scaled_coef_
        worst = max(worst, np.linalg.norm(base - other))
    assert worst <= 2 * W / gamma, f"max scaled-space change {worst:.4g} > Delta {2 * W / gamma:.4g}"


def test_dataframe_and_summary():
    data = make_cyp_guides_style(300, random_state=2)
    m = DPOWL(epsilon=1.0, gamma=75.0, weights_upper_bound=data.weights_upper_bound,
              feature_bounds=data.feature_bounds, weight_sensitivity=0.0,  # the trial's known probabilities
              random_state=0).fit(data.X, data.treatment, data.benefit, data.propensity)
    assert m.feature_names_in_ == ["age", "male", "nonwhite", "mdd"]
    text = str(m.summary())
    assert "(intercept)" in text and "mdd" in text
    assert "floating-point safe" in text and "multiples of 2^" in text
    # issue 21.5: the rule's (epsilon, delta), delta rounded up; neither n nor the non-private counts are printed
    assert m.privacy_spent_[0] == 1.0 and 0 < m.privacy_spent_[1] < 1e-8
    assert f"guarantee: (1, {delta_text(m.privacy_spent_[1])})-DP" in text
    assert not re.search(r"\bn = |\b300\b", text) and "clipped_" not in text and "iter" not in text
    assert set(np.unique(m.predict(data.X))) <= {-1, 1}
    assert m.coef_.shape == (4,) and isinstance(m.intercept_, float)


def test_no_intercept():
    data = make_synthetic_owl(100, random_state=0)
    m = owl(fit_intercept=False, random_state=0, epsilon=1.0).fit(data.X, data.treatment, data.benefit)
    assert m.intercept_ == 0.0 and m.scaled_coef_.shape == (4,)


def test_private_state_not_kept_by_default():
    data = make_synthetic_owl(100, random_state=0)
    m = owl(epsilon=1.0, random_state=0).fit(data.X, data.treatment, data.benefit)
    leaked = [k for k in vars(m) if k.endswith("_") and ("nonprivate" in k or "noise" in k)]
    assert leaked == []
    kept = owl(epsilon=1.0, random_state=0, keep_nonprivate=True).fit(data.X, data.treatment, data.benefit)
    assert kept.nonprivate_scaled_coef_.tobytes() not in pickle.dumps(m)


def test_logistic_propensity_sets_C_and_known_propensity_does_not():
    data = make_synthetic_owl(300, random_state=4)
    bounds = ([0] * 4, [1] * 4)
    prop = LogisticPropensity(feature_bounds=bounds, benefit_bound=21.0, ridge=0.05).fit(data.X, data.treatment)
    m = owl(epsilon=1.0, gamma=50.0, weights_upper_bound=60.0, random_state=0).fit(data.X, data.treatment,
                                                                                   data.benefit, prop)
    C = prop.weight_sensitivity(300)
    assert m.weight_sensitivity_ == C == 300 * prop.per_weight_bound()
    assert m.sensitivity_ == pytest.approx((C + 120.0 + 2 * 300 * 1e-10) / 50.0, rel=1e-14)
    m0 = owl(epsilon=1.0, random_state=0).fit(data.X, data.treatment, data.benefit, 0.5)
    assert m0.weight_sensitivity_ == 0.0


@pytest.mark.parametrize("kwargs, args, exc, match", [
    (dict(epsilon=0.0), {}, ValueError, r"epsilon must be in \(0, inf\]"),
    (dict(gamma=-1.0), {}, ValueError, r"gamma must be in \(0, inf\)"),
    (dict(weights_upper_bound=0.0), {}, ValueError, r"weights_upper_bound must be in \(0, inf\)"),
    (dict(huber_h=-0.1), {}, ValueError, r"huber_h must be in \(0, inf\)"),
    (dict(feature_bounds=([0] * 3, [1] * 3)), {}, ValueError, "lower bounds must have length 4"),
    (dict(feature_bounds=([1] * 4, [0] * 4)), {}, ValueError, "lower must be <= upper"),
    ({}, dict(treatment="one_arm"), ValueError, r"^treatment must contain at least two arms"),
    ({}, dict(benefit="negative"), ValueError, "benefit must be non-negative .*shift_benefits"),
    ({}, dict(propensity=0.0), ValueError, r"propensity \(the probability of treatment \+1\) must be in \(0, 1\)"),
    ({}, dict(propensity=1.0), ValueError, r"must be in \(0, 1\)"),
    ({}, dict(propensity="array_bad"), ValueError, r"propensity must be in \(0, 1\] .*; 1 of 50 entries are outside"),
    ({}, dict(propensity="short"), ValueError, "propensity must have length 50"),
    ({}, dict(X="nan"), ValueError, "X must be finite"),
    ({}, dict(benefit="short"), ValueError, "benefit must have length 50"),
])
def test_bad_input(kwargs, args, exc, match):
    data = make_synthetic_owl(50, random_state=0)
    X, A, B, p = data.X.to_numpy(), data.treatment.copy(), data.benefit.copy(), 0.5
    if args.get("treatment") == "one_arm":
        A = np.ones_like(A)
    if args.get("benefit") == "negative":
        B[3] = -1.0
    if args.get("benefit") == "short":
        B = B[:-1]
    if args.get("propensity") == "array_bad":
        p = np.full(50, 0.5)
        p[7] = 1.5
    elif args.get("propensity") == "short":
        p = np.full(49, 0.5)
    elif "propensity" in args:
        p = args["propensity"]
    if args.get("X") == "nan":
        X[2, 1] = np.nan
    with pytest.raises(exc, match=match):
        owl(**kwargs).fit(X, A, B, p)


def test_shift_then_fit():
    data = make_synthetic_owl(100, shift=None, random_state=2)
    assert data.benefit.min() < 0
    B, n_clipped = shift_benefits(data.benefit, lower_bound=-12.0)
    assert n_clipped == 0 and B.min() >= 0
    owl(epsilon=1.0, random_state=0).fit(data.X, data.treatment, B)


def test_feature_bounds_from_data_warn():
    from pydpowl import PrivacyLeakWarning

    data = make_synthetic_owl(60, random_state=0)
    with pytest.warns(PrivacyLeakWarning, match="void"):
        m = owl(feature_bounds="data", epsilon=1.0, random_state=0).fit(data.X, data.treatment, data.benefit)
    np.testing.assert_allclose(m.scaler_.upper, data.X.max().to_numpy())


def test_feature_bounds_other_strings_refused():
    data = make_synthetic_owl(20, random_state=0)
    with pytest.raises(TypeError, match="must be a pair"):
        owl(feature_bounds="auto").fit(data.X, data.treatment, data.benefit)


# ------------------------------------------------------------------ privacy review: benefits, C statement

def _cb_case(seed=0, n=60):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (n, 2))
    A = np.where(rng.uniform(size=n) < 0.5, 1.0, -1.0)
    A[:2] = (1.0, -1.0)
    return X, A, rng.uniform(0.5, 1.0, n), rng


def test_benefits_above_the_propensity_models_bound_are_clipped_and_counted():
    """Review item 1: C_B = 1e-5, benefits in [0.5, 1], ridge 3, W = 50.

    Before the fix the other subjects' weights moved in total about 50 times the
    C the model reported, because benefits above C_B were used unclipped.
    """
    X, A, B, rng = _cb_case()
    kw = dict(feature_bounds=([0, 0], [1, 1]), benefit_bound=1e-5, ridge=3.0)
    settings = dict(weights_upper_bound=50.0, feature_bounds=([0, 0], [1, 1]))
    prop = LogisticPropensity(**kw).fit(X, A)
    first = prepare_owl(X, A, B, prop, **settings)
    w0, C = first.weights, first.weight_sensitivity
    worst = 0.0
    for _ in range(25):
        j = int(rng.integers(len(B)))
        X2, A2, B2 = X.copy(), A.copy(), B.copy()
        X2[j], A2[j], B2[j] = rng.integers(0, 2, 2), -A2[j], 1.0
        other = prepare_owl(X2, A2, B2, LogisticPropensity(**kw).fit(X2, A2), **settings)
        w1, C1 = other.weights, other.weight_sensitivity
        assert C1 == C, "C must not depend on the data"
        worst = max(worst, float(np.abs(w0 - w1)[np.arange(len(B)) != j].sum()))
    assert worst <= C, f"other weights moved by {worst:.4g} in total, {worst / C:.1f} times C = {C:.4g}"
    assert first.n_clipped_benefits == int(np.sum(B > 1e-5)) == len(B)
    assert np.all(w0 <= 1e-5 * (1 + math.exp(3.0)) * (1 + 1e-12))
    fitted = DPOWL(epsilon=1.0, gamma=1.0, weights_upper_bound=50.0, feature_bounds=([0, 0], [1, 1]),
                   random_state=0).fit(X, A, B, prop)
    assert fitted.n_clipped_benefits_ == len(B)
    assert "n_clipped_benefits_" in DPOWL.__doc__


def test_known_and_external_propensities_do_not_clip_benefits():
    X, A, B, _ = _cb_case(1)
    external = LogisticPropensity(feature_bounds=([0, 0], [1, 1]), benefit_bound=1e-5, ridge=3.0,
                                  fitted_on="external").fit(X, A)
    for prop in (0.5, external):
        m = DPOWL(epsilon=1.0, gamma=1.0, weights_upper_bound=50.0, feature_bounds=([0, 0], [1, 1]),
                  random_state=0).fit(X, A, B, prop)
        assert m.n_clipped_benefits_ == 0 and m.weight_sensitivity_ == 0.0


def test_array_propensities_need_an_explicit_weight_sensitivity():
    """Review item 6: an array of probabilities no longer means C = 0 silently."""
    data = make_synthetic_owl(80, random_state=3)
    p = data.propensity
    with pytest.raises(ValueError, match="weight_sensitivity"):
        owl(epsilon=1.0, random_state=0).fit(data.X, data.treatment, data.benefit, p)
    known = owl(epsilon=1.0, random_state=0, weight_sensitivity=0.0).fit(data.X, data.treatment, data.benefit, p)
    assert known.weight_sensitivity_ == 0.0
    stated = owl(epsilon=1.0, random_state=0, weight_sensitivity=2.5).fit(data.X, data.treatment, data.benefit, p)
    assert stated.weight_sensitivity_ == 2.5
    assert stated.sensitivity_ - known.sensitivity_ == pytest.approx(2.5 / 5.0)
    trivial = owl(epsilon=1.0, random_state=0, weight_sensitivity="trivial").fit(
        data.X, data.treatment, data.benefit, p)
    assert trivial.weight_sensitivity_ == 80 * 30.0
    # a scalar is the known randomisation probability: C = 0 without a statement
    assert owl(epsilon=1.0, random_state=0).fit(data.X, data.treatment, data.benefit, 0.5).weight_sensitivity_ == 0.0
    prop = LogisticPropensity(feature_bounds=([0] * 4, [1] * 4), benefit_bound=21.0, ridge=0.5).fit(
        data.X, data.treatment)
    with pytest.raises(ValueError, match="weight_sensitivity .* computed from the LogisticPropensity"):
        owl(epsilon=1.0, weight_sensitivity=0.0).fit(data.X, data.treatment, data.benefit, prop)
    for bad in (-1.0, float("nan"), "zero"):
        with pytest.raises((ValueError, TypeError), match="weight_sensitivity"):
            owl(epsilon=1.0, weight_sensitivity=bad).fit(data.X, data.treatment, data.benefit, p)


def test_released_values_are_floating_point_safe():
    """Review item 7: scaled_coef_ lies on a power-of-two grid tied to the noise scale, and every other
    released number is computed from it (post-processing), not from the full-precision sum."""
    data = make_synthetic_owl(200, random_state=5)
    m = owl(eps=1.0, random_state=2).fit(data.X, data.treatment, data.benefit, 0.5)
    grid = m.release_grid_
    assert grid == 2.0 ** math.floor(math.log2(grid)), "the grid must be a power of two"
    assert m.sensitivity_ / 1.0 / 2 ** 12 < grid <= m.sensitivity_ / 1.0 / 2 ** 9
    np.testing.assert_array_equal(np.round(m.scaled_coef_ / grid) * grid, m.scaled_coef_)
    full = m.scaler_.coef_to_original(m.scaled_coef_)
    assert m.intercept_ == full[0] and np.array_equal(m.coef_, full[1:])
    assert m.summary().coefficients == tuple(full)


# ------------------------------------------------------------------ the prepared problem

def test_prepare_owl_returns_a_frozen_typed_problem(synth):
    import dataclasses

    W = 3.0
    problem = prepare_owl(synth.X, synth.treatment, synth.benefit, 0.5, weights_upper_bound=W,
                          feature_bounds=([0] * 4, [1] * 4))
    assert isinstance(problem, OWLProblem)
    with pytest.raises(dataclasses.FrozenInstanceError):
        problem.weight_sensitivity = 1.0
    assert problem.n_samples == 400 and problem.Z.shape == (400, 5)
    np.testing.assert_array_equal(problem.labels, synth.treatment)
    np.testing.assert_allclose(problem.weights, np.minimum(synth.benefit / 0.5, W))
    assert problem.n_clipped_weights == int(np.sum(synth.benefit / 0.5 > W)) > 0
    assert np.all(np.linalg.norm(problem.Z, axis=1) <= 1 + 1e-12)
    fitted = owl(weights_upper_bound=W).fit(synth.X, synth.treatment, synth.benefit, 0.5)
    assert fitted.n_clipped_weights_ == problem.n_clipped_weights
    assert fitted.weight_sensitivity_ == problem.weight_sensitivity == 0.0


def test_dpowl_prepare_is_deprecated_and_keeps_its_tuple(synth):
    m = owl()
    with pytest.warns(FutureWarning, match="DPOWL.prepare is deprecated.*prepare_owl"):
        Z, A, w, C, scaler, counts = m.prepare(synth.X, synth.treatment, synth.benefit, 0.5)
    problem = prepare_owl(synth.X, synth.treatment, synth.benefit, 0.5, weights_upper_bound=30.0,
                          feature_bounds=([0] * 4, [1] * 4))
    np.testing.assert_array_equal(Z, problem.Z)
    np.testing.assert_array_equal(w, problem.weights)
    assert C == problem.weight_sensitivity
    np.testing.assert_array_equal(scaler.column_scale, problem.scaler.column_scale)
    assert counts == {"n_clipped_weights": 0, "n_clipped_features": 0, "n_clipped_logits": 0,
                      "n_clipped_benefits": 0}


def test_prepare_owl_checks_public_settings_before_the_data(synth):
    with pytest.raises(ValueError, match=r"^weights_upper_bound must be in \(0, inf\)"):
        prepare_owl("not data", None, None, weights_upper_bound=0.0, feature_bounds=None)
    with pytest.raises(TypeError, match="fit_intercept must be True or False"):
        prepare_owl("not data", None, None, weights_upper_bound=1.0, feature_bounds=None, fit_intercept=1)


# ---- columns by name (issue 22.1): bounds matched to a DataFrame's columns, prediction by column name ----

@pytest.fixture(scope="module")
def cyp():
    return make_cyp_guides_style(1459, random_state=1)


def _cyp_owl(data, bounds, **kw):
    base = dict(epsilon=5.0, gamma=75.0, weights_upper_bound=data.weights_upper_bound, feature_bounds=bounds,
                weight_sensitivity=0.0, random_state=3)
    return DPOWL(**{**base, **kw})


def _by_name(data):
    lower, upper = data.feature_bounds
    return {c: (lo, hi) for c, lo, hi in zip(data.X.columns, lower, upper)}


def test_bounds_by_name_fit_a_reordered_dataframe_as_the_ordered_one(cyp):
    # the exact rule (the noise's coordinates follow the column order, so compare the minimisers)
    ordered = _cyp_owl(cyp, cyp.feature_bounds, epsilon=math.inf).fit(cyp.X, cyp.treatment, cyp.benefit,
                                                                      cyp.propensity)
    reordered = cyp.X[cyp.X.columns[::-1]]
    named = _cyp_owl(cyp, _by_name(cyp), epsilon=math.inf).fit(reordered, cyp.treatment, cyp.benefit,
                                                               cyp.propensity)
    assert named.n_clipped_features_ == ordered.n_clipped_features_ == 0
    assert named.feature_names_in_ == ["mdd", "nonwhite", "male", "age"]
    np.testing.assert_allclose(named.coef_[::-1], ordered.coef_, rtol=1e-12)
    assert named.intercept_ == pytest.approx(ordered.intercept_, rel=1e-12)
    assert np.all(named.predict(reordered) == ordered.predict(cyp.X))
    # the bounds given by name in any order, and the other named forms, are the same bounds
    import pandas as pd

    lower, upper = cyp.feature_bounds
    names = list(cyp.X.columns)
    forms = [dict(reversed(list(_by_name(cyp).items()))),
             (pd.Series(lower, index=names), pd.Series(upper, index=names)),
             pd.DataFrame({"lower": lower, "upper": upper}, index=names),
             pd.DataFrame([lower, upper], index=["lower", "upper"], columns=names)]
    for bounds in forms:
        m = _cyp_owl(cyp, bounds, epsilon=math.inf).fit(reordered, cyp.treatment, cyp.benefit, cyp.propensity)
        np.testing.assert_array_equal(m.coef_, named.coef_)


def test_predict_matches_a_reordered_dataframe_by_name(cyp):
    m = _cyp_owl(cyp, cyp.feature_bounds).fit(cyp.X, cyp.treatment, cyp.benefit, cyp.propensity)
    reordered = cyp.X[cyp.X.columns[::-1]]
    np.testing.assert_array_equal(m.decision_function(reordered), m.decision_function(cyp.X))
    np.testing.assert_array_equal(m.predict(reordered), m.predict(cyp.X))
    wider = cyp.X.assign(site=1.0)[["site", "mdd", "age", "male", "nonwhite"]]  # extra columns are not features
    np.testing.assert_array_equal(m.predict(wider), m.predict(cyp.X))
    with pytest.raises(ValueError, match=r"X lacks the column\(s\) \['mdd'\] that DPOWL was fitted on"):
        m.predict(cyp.X.drop(columns="mdd").assign(depression=0.0))
    with pytest.warns(UserWarning, match="X does not have valid feature names, but DPOWL was fitted with"):
        np.testing.assert_array_equal(m.predict(cyp.X.to_numpy()), m.predict(cyp.X))


def test_bounds_by_name_need_named_columns(cyp):
    with pytest.raises(ValueError, match="given by column name .* but X has no column names"):
        _cyp_owl(cyp, _by_name(cyp)).fit(cyp.X.to_numpy(), cyp.treatment, cyp.benefit, cyp.propensity)
    bad = dict(_by_name(cyp), bmi=(15.0, 60.0))
    with pytest.raises(ValueError, match=r"name column\(s\) \['bmi'\] that X does not have"):
        _cyp_owl(cyp, bad).fit(cyp.X, cyp.treatment, cyp.benefit, cyp.propensity)
    short = {k: v for k, v in _by_name(cyp).items() if k != "male"}
    with pytest.raises(ValueError, match=r"no bounds for column\(s\) \['male'\]"):
        _cyp_owl(cyp, short).fit(cyp.X, cyp.treatment, cyp.benefit, cyp.propensity)
    with pytest.raises(ValueError, match=r"feature_bounds\['age'\]: lower must be <= upper"):
        _cyp_owl(cyp, dict(_by_name(cyp), age=(89, 18))).fit(cyp.X, cyp.treatment, cyp.benefit, cyp.propensity)


def test_misaligned_bounds_warn_only_when_the_diagnostic_is_asked_for(cyp):
    import warnings

    from pydpowl.exceptions import BoundsDiagnosticWarning

    reordered = cyp.X[cyp.X.columns[::-1]]  # positional bounds now meet the wrong columns
    with warnings.catch_warnings():
        warnings.simplefilter("error", BoundsDiagnosticWarning)  # by default nothing data-dependent is said
        _cyp_owl(cyp, cyp.feature_bounds).fit(reordered, cyp.treatment, cyp.benefit, cyp.propensity)
    with pytest.warns(BoundsDiagnosticWarning) as caught:
        m = _cyp_owl(cyp, cyp.feature_bounds, diagnose_bounds=True).fit(reordered, cyp.treatment, cyp.benefit,
                                                                        cyp.propensity)
    text = str(caught[0].message)
    assert "'mdd'" in text and "'age'" in text and "NON-PRIVATE" in text and "more than 50%" in text
    assert str(m.n_clipped_features_) not in text and "1459" not in text  # columns named, counts never
    with warnings.catch_warnings():
        warnings.simplefilter("error", BoundsDiagnosticWarning)  # bounds that fit their columns: silent
        _cyp_owl(cyp, cyp.feature_bounds, diagnose_bounds=0.2).fit(cyp.X, cyp.treatment, cyp.benefit, cyp.propensity)
    with pytest.raises(ValueError, match=r"diagnose_bounds must be in \(0, 1\)"):
        _cyp_owl(cyp, cyp.feature_bounds, diagnose_bounds=1.5).fit(cyp.X, cyp.treatment, cyp.benefit, cyp.propensity)


def test_propensity_model_reads_columns_by_name(cyp):
    names = _by_name(cyp)
    prop = LogisticPropensity(feature_bounds=names, benefit_bound=10.0, ridge=0.1).fit(cyp.X, cyp.treatment)
    reordered = cyp.X[cyp.X.columns[::-1]]
    np.testing.assert_array_equal(prop.predict_proba(reordered), prop.predict_proba(cyp.X))
    base = dict(epsilon=math.inf, gamma=75.0, weights_upper_bound=60.0, feature_bounds=names)
    a = DPOWL(**base).fit(cyp.X, cyp.treatment, cyp.benefit, prop)
    b = DPOWL(**base).fit(reordered, cyp.treatment, cyp.benefit, prop)
    assert a.weight_sensitivity_ == b.weight_sensitivity_ > 0
    np.testing.assert_allclose(b.coef_[::-1], a.coef_, rtol=1e-12)


def test_propensity_models_take_treatment_coded_zero_one(synth):
    """Issue 22.5: the 0/1 coding the CLI and DPWeightedERM take (0 is -1); DPOWL's labels: the test above."""
    zero_one = (synth.treatment + 1) / 2
    prop = LogisticPropensity(feature_bounds=([0] * 4, [1] * 4), benefit_bound=10.0, ridge=0.1)
    np.testing.assert_array_equal(prop.fit(synth.X, zero_one).coef_, prop.fit(synth.X, synth.treatment).coef_)


# ------------------------------------------------------------------ treatment labels of any kind, K arms (issue 25)
def test_two_arm_labels_of_any_kind_give_the_same_release():
    data = make_synthetic_owl(300, random_state=3)
    X, A, B = data.X.to_numpy(), data.treatment, data.benefit
    ref = owl(epsilon=1.0, random_state=5).fit(X, A, B, 0.3)
    for labels in ((A + 1) / 2, np.where(A > 0, "treated", "control"), A.astype(int)):
        m = owl(epsilon=1.0, random_state=5).fit(X, labels, B, 0.3)  # 0.3 = P(classes_[1])
        np.testing.assert_array_equal(m.scaled_coef_, ref.scaled_coef_)
        np.testing.assert_array_equal(m.predict(X), np.where(ref.predict(X) > 0, m.classes_[1], m.classes_[0]))
    assert ref.predict(X).dtype.kind == "i"  # -1/+1 labels keep predicting -1/+1


def test_three_arms_release_the_angle_based_rule():
    from pydpowl.estimators.multiarm import encode_arms, prepare_arm_problem, release_arm_rule

    rng = np.random.default_rng(0)
    n = 900
    X = rng.uniform(-2, 2, (n, 3))
    arms = np.array(["low", "mid", "high"])
    best = np.where(X[:, 0] < -0.7, 1, np.where(X[:, 0] > 0.7, 0, 2))  # index into the sorted ("high", "low", "mid")
    A = rng.choice(arms, n)
    _, codes = encode_arms("A", A)
    B = 1.0 + (codes == best) + rng.uniform(0, 0.2, n)
    bounds = ([-2.0] * 3, [2.0] * 3)
    m = DPOWL(epsilon=np.inf, gamma=1.0, weights_upper_bound=10.0, feature_bounds=bounds, mechanism="output",
              residual=False).fit(X, A, B, 1 / 3)  # OWL weights (the defaults: tests/estimators/test_multiarm.py)
    np.testing.assert_array_equal(m.classes_, ["high", "low", "mid"])
    assert m.scaled_coef_.shape == (2, 4) and m.coef_.shape == (2, 3) and m.intercept_.shape == (2,)
    assert m.decision_function(X).shape == (n, 3)
    assert np.mean(m.predict(X) == m.classes_[best]) > 0.7  # 0.77 here; a constant rule gets 0.35, chance 0.33
    # the estimator's release is the multi-arm release of the same problem and noise
    priv = DPOWL(epsilon=1.0, gamma=4.0, weights_upper_bound=10.0, feature_bounds=bounds, random_state=3,
                 mechanism="output", residual=False).fit(
        X, A, B, {"low": 1 / 3, "mid": 1 / 3, "high": 1 / 3})
    Z, _ = priv.scaler_.transform_checked(X)
    problem = prepare_arm_problem(Z, codes, 3, B, np.full(n, 1 / 3), weights_upper_bound=10.0)
    out = release_arm_rule(problem, epsilon=1.0, gamma=4.0, tol=1e-10, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(priv.scaled_coef_.ravel(), out.coef)
    assert priv.sensitivity_ == out.sensitivity == pytest.approx((2 * 10.0 + 2 * n * 1e-10) / 4.0)
    s = priv.summary()
    assert s.coefficient_names[:2] == ("f1:(intercept)", "f1:x1") and len(s.coefficients) == 8
    assert "Frobenius" in s.notes[0]
    from pydpowl.model_io import model_to_dict

    content = model_to_dict(priv)  # the whole K-arm rule, format version 3 (tests/test_model_io_regime.py)
    assert content["format_version"] == 3 and content["stages"][0]["arms"] == ["high", "low", "mid"]
    with pytest.raises(AttributeError, match=r"DPpack's svmDP has two arms"):
        priv.dppack_coeff_


def test_three_arms_match_bounds_and_columns_by_name():
    import pandas as pd

    rng = np.random.default_rng(1)
    n = 600
    X = pd.DataFrame({"age": rng.uniform(18, 89, n), "dose": rng.uniform(0, 2, n), "male": rng.integers(0, 2, n)})
    A = rng.choice(["a", "b", "c"], n)
    B = 1.0 + (A == np.where(X["dose"] > 1, "a", "b")) + rng.uniform(0, 0.2, n)
    named = {"male": (0, 1), "age": (18, 89), "dose": (0, 2)}
    kw = dict(epsilon=np.inf, gamma=1.0, weights_upper_bound=10.0)
    ordered = DPOWL(feature_bounds=([18, 0, 0], [89, 2, 1]), **kw).fit(X, A, B, 1 / 3)
    reordered = X[["dose", "male", "age"]]
    m = DPOWL(feature_bounds=named, **kw).fit(reordered, A, B, 1 / 3)
    np.testing.assert_allclose(m.coef_[:, [2, 0, 1]], ordered.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(ordered.predict(reordered), ordered.predict(X))


def test_cold_output_fit_loads_only_what_it_uses(tmp_path):
    """A user's one-fit script (pandas frame, Algorithm 1, 20,000 rows) in a fresh process: the engine's
    other mechanisms, the Dask plumbing, numba and the R streams are never imported (each is loaded on
    first use), and the release is the one of a process that imported them all first."""
    import subprocess
    import sys

    lazy = ["pydpowl.engine.mechanisms.objective", "pydpowl.engine.mechanisms.exponential",
            "pydpowl.engine.mechanisms.gaussian", "pydpowl.engine.mechanisms.laplace",
            "pydpowl.estimators.dask_inputs", "pydpowl.engine.dask_problem", "pydpowl.engine.dask_cluster",
            "dask", "numba", "pydpowl.rrandom"]
    code = (
        "import sys, numpy as np, pandas as pd\n"
        "if sys.argv[1] == 'all':\n"
        "    import importlib; [importlib.import_module(m) for m in sys.argv[2].split(',') if m != 'numba']\n"
        "from pydpowl import DPOWL\n"
        "rng = np.random.default_rng(3); n = 20_000\n"
        "X = pd.DataFrame({'age': rng.uniform(18, 89, n), 'male': rng.integers(0, 2, n),"
        " 'nonwhite': rng.integers(0, 2, n), 'mdd': rng.integers(0, 2, n)})\n"
        "A = rng.integers(0, 2, n); B = rng.uniform(0, 5, X.shape[0]) + A * X['male']\n"
        "m = DPOWL(epsilon=1.0, gamma=75.0, weights_upper_bound=10.0, feature_bounds=([18, 0, 0, 0], [89, 1, 1, 1]),"
        " random_state=1, mechanism='output', residual=False, huber_h=0.5).fit(X, A, B, 0.5)\n"
        "print(repr([m.intercept_, *m.coef_]))\n"
        "print(','.join(name for name in sys.argv[2].split(',') if name in sys.modules))\n"
    )
    outs = [subprocess.run([sys.executable, "-c", code, mode, ",".join(lazy)], capture_output=True, text=True,
                           check=True, cwd=tmp_path).stdout.splitlines() for mode in ("cold", "all")]
    assert outs[0][1] == ""
    assert outs[0][0] == outs[1][0]
