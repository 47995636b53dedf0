import math
import warnings

import numpy as np
import pytest

from pydpowl import LogisticPropensity, PrivacyLeakWarning, prepare_owl, proposition8_H, trivial_weight_sensitivity
from pydpowl.estimators.propensity import resolve_propensity


def test_proposition8_by_hand():
    # H = 2 C_B C_x^2 (1 + e^M)^2 / b_x
    assert proposition8_H(benefit_bound=2.0, feature_norm_bound=3.0, logit_bound=math.log(2.0),
                          hessian_lower_bound=0.5) == pytest.approx(2 * 2 * 9 * 9 / 0.5)


def test_trivial_option():
    assert trivial_weight_sensitivity(100, 3.0) == 300.0
    with pytest.raises(ValueError, match="n_samples must be an integer >= 1"):
        trivial_weight_sensitivity(0, 3.0)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 20000
    X = rng.uniform(0, 1, size=(n, 2))
    p = 1 / (1 + np.exp(-(-0.5 + 1.0 * X[:, 0] + 0.5 * X[:, 1])))
    A = np.where(rng.uniform(size=n) < p, 1.0, -1.0)
    return X, A, p


def test_fit_recovers_the_model(data):
    X, A, p = data
    with pytest.warns(PrivacyLeakWarning, match="estimated from the private data"):
        model = LogisticPropensity(feature_bounds=([0, 0], [1, 1]), benefit_bound=5.0, logit_bound=5.0,
                                   hessian_lower_bound="data").fit(X, A)
    np.testing.assert_allclose(model.coef_, [-0.5, 1.0, 0.5], atol=0.15)
    np.testing.assert_allclose(model.predict_proba(X), p, atol=0.03)
    probs, clipped = model.probability_of(X, A)
    np.testing.assert_allclose(probs, np.where(A > 0, model.predict_proba(X), 1 - model.predict_proba(X)))
    assert clipped == 0


def test_ridge_guarantees_b_x_and_no_warning(data):
    X, A, _ = data
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        model = LogisticPropensity(feature_bounds=([0, 0], [1, 1]), benefit_bound=5.0, ridge=0.1).fit(X, A)
    assert model.hessian_lower_bound_ == 0.1
    # ridge solution: gradient of mean logloss + ridge/2 ||b||^2 vanishes
    D = np.column_stack([np.ones(len(X)), X])
    a01 = (A + 1) / 2
    q = 1 / (1 + np.exp(-D @ model.coef_))
    g = D.T @ (q - a01) / len(X) + 0.1 * model.coef_
    assert np.linalg.norm(g) < 1e-10
    assert model.feature_norm_bound_ == pytest.approx(math.sqrt(3.0))
    assert model.n_samples_ == len(X) and model.hessian_bound_kind_ == "hessian"
    assert model.weight_sensitivity(100) == pytest.approx(100 * _per_weight(5.0, math.sqrt(3), 3.0, len(X), 0.1))


def test_external_model_has_zero_C(data):
    X, A, _ = data
    model = LogisticPropensity(feature_bounds=([0, 0], [1, 1]), benefit_bound=5.0, ridge=0.1,
                               fitted_on="external").fit(X, A)
    assert model.weight_sensitivity(100) == 0.0 and model.per_weight_bound() == 0.0


def test_logit_clipping_counted():
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 1, size=(500, 1))
    A = np.where(X[:, 0] + 0.05 * rng.normal(size=500) > 0.5, 1.0, -1.0)  # nearly separable
    model = LogisticPropensity(feature_bounds=([0], [1]), benefit_bound=1.0, logit_bound=1.0, ridge=1e-3).fit(X, A)
    eta, n_clipped = model.linear_predictor(X)
    assert n_clipped > 0 and np.max(np.abs(eta)) <= 1.0
    assert np.all(model.predict_proba(X) >= 1 / (1 + math.e) - 1e-15)


def test_weight_change_per_record_within_the_bound(data):
    """Replacing one record moves every weight by at most h (the per-weight bound behind C = n h)."""
    X, A, _ = data
    X, A = X[:400], A[:400]
    n = len(A)
    kw = dict(feature_bounds=([0, 0], [1, 1]), benefit_bound=1.0, logit_bound=3.0, ridge=0.5)
    base = LogisticPropensity(**kw).fit(X, A)
    h, C = base.per_weight_bound(), base.weight_sensitivity(n)
    rng = np.random.default_rng(2)
    worst_total = 0.0
    for _ in range(20):
        j = rng.integers(n)
        X2, A2 = X.copy(), A.copy()
        X2[j] = rng.integers(0, 2, size=2)
        A2[j] = -A2[j]
        other = LogisticPropensity(**kw).fit(X2, A2)
        keep = np.arange(n) != j
        w1 = 1.0 / base.probability_of(X[keep], A[keep])[0]  # B = C_B = 1
        w2 = 1.0 / other.probability_of(X[keep], A[keep])[0]
        assert np.max(np.abs(w1 - w2)) <= h
        worst_total = max(worst_total, np.sum(np.abs(w1 - w2)))
    assert worst_total <= C, f"total weight change {worst_total:.4g} exceeds C = n h = {C:.4g}"


@pytest.mark.parametrize("bad, exc, match", [
    ("0.5", TypeError, "propensity must be a number"),
    (True, TypeError, "propensity must be a number"),
    (0.0, ValueError, r"must be in \(0, 1\)"),
    (np.array([0.5, 0.0, 0.5]), ValueError, r"propensity must be in \(0, 1\]"),
    (np.array([0.5, np.nan, 0.5]), ValueError, "propensity must be finite"),
])
def test_resolve_propensity_errors(bad, exc, match):
    X = np.zeros((3, 1))
    with pytest.raises(exc, match=match):
        resolve_propensity(bad, X, np.array([1.0, -1.0, 1.0]))


def test_scalar_propensity_means_probability_of_arm_plus_one():
    r = resolve_propensity(2 / 3, np.zeros((3, 1)), np.array([1.0, -1.0, 1.0]))
    np.testing.assert_allclose(r.probability, [2 / 3, 1 / 3, 2 / 3])
    assert r.C == 0.0 and r.benefit_bound is None


def test_private_fit_without_a_public_b_x_is_refused(data):
    X, A, _ = data
    with pytest.raises(ValueError, match="needs a public lower bound b_x"):
        LogisticPropensity(feature_bounds=([0, 0], [1, 1]), benefit_bound=5.0).fit(X, A)


def test_assumed_b_x_is_used(data):
    X, A, _ = data
    with pytest.warns(PrivacyLeakWarning, match="assume_hessian_bound=True"):
        model = LogisticPropensity(feature_bounds=([0, 0], [1, 1]), benefit_bound=5.0, hessian_lower_bound=0.02,
                                   assume_hessian_bound=True).fit(X, A)
    assert model.hessian_lower_bound_ == 0.02
    assert model.per_weight_bound() == pytest.approx(_per_weight(5.0, math.sqrt(3), 3.0, len(X), 0.02))
    unpenalised_external = LogisticPropensity(feature_bounds=([0, 0], [1, 1]), benefit_bound=5.0,
                                              fitted_on="external").fit(X, A)
    assert unpenalised_external.weight_sensitivity(10) == 0.0


# ------------------------------------------------------------------ privacy review: n_p, b_x, tight bound

def _per_weight(c_b, c_x, m, n_p, b_x):
    """Derived by hand (docs/privacy_audit.md): |dw/dbeta| <= C_B C_x e^M and
    ||beta(D) - beta(D')|| <= (2 C_x / n_p + 2 tol_p) / b_x for b_x bounding the penalised Hessian."""
    from pydpowl.estimators.propensity import PROPENSITY_TOL

    return c_b * c_x * math.exp(m) * (2 * c_x / n_p + 2 * PROPENSITY_TOL) / b_x


def test_model_fitted_on_other_private_rows_covers_every_owl_weight():
    """Review item 2: a model fitted on 8 private rows and applied to the OWL rows moves all of them.

    Before the fix C = H assumed the model had been fitted on the OWL rows: the real
    total change of the weights was 2.5 times C (40,000 OWL rows, 8 model rows).
    """

    rng = np.random.default_rng(1)
    n_p, n = 8, 40000
    Xp, Ap = rng.uniform(0, 1, (n_p, 2)), np.tile([1.0, -1.0], n_p // 2)
    X, A, B = rng.uniform(0, 1, (n, 2)), np.where(rng.uniform(size=n) < 0.5, 1.0, -1.0), np.ones(n)
    kw = dict(feature_bounds=([0, 0], [1, 1]), benefit_bound=1.0, ridge=1.0)
    settings = dict(weights_upper_bound=50.0, feature_bounds=([0, 0], [1, 1]))
    model = LogisticPropensity(**kw).fit(Xp, Ap)
    first = prepare_owl(X, A, B, model, **settings)
    w0, C = first.weights, first.weight_sensitivity
    worst = 0.0
    for t in range(40):
        j = int(rng.integers(n_p))
        X2, A2 = Xp.copy(), Ap.copy()
        X2[j], A2[j] = (rng.integers(0, 2, 2) if t % 2 else rng.uniform(0, 1, 2)), -A2[j]
        if len(set(A2)) < 2:
            continue
        w1 = prepare_owl(X, A, B, LogisticPropensity(**kw).fit(X2, A2), **settings).weights
        worst = max(worst, float(np.abs(w0 - w1).sum()))
    assert worst <= C, f"OWL weights moved by {worst:.4g} in total, {worst / C:.2f} times C = {C:.4g}"
    assert model.n_samples_ == n_p
    assert C == pytest.approx(n * _per_weight(1.0, math.sqrt(3.0), 3.0, n_p, 1.0), rel=1e-12)


def test_hessian_lower_bound_above_the_ridge_needs_an_explicit_assumption(data):
    """Review item 3: only ridge > 0 gives b_x by construction."""
    X, A, _ = data
    base = dict(feature_bounds=([0, 0], [1, 1]), benefit_bound=5.0)
    with pytest.raises(ValueError, match=r"hessian_lower_bound=0\.5 .* ridge=0\.1.*assume_hessian_bound=True"):
        LogisticPropensity(ridge=0.1, hessian_lower_bound=0.5, **base).fit(X, A)
    with pytest.raises(ValueError, match="assume_hessian_bound=True"):
        LogisticPropensity(hessian_lower_bound=0.02, **base).fit(X, A)  # ridge = 0
    with pytest.warns(PrivacyLeakWarning, match="conditional on the assumption") as record:
        model = LogisticPropensity(ridge=0.1, hessian_lower_bound=0.5, assume_hessian_bound=True, **base).fit(X, A)
    assert record[0].filename == __file__, "the warning must point at the caller"
    assert model.hessian_lower_bound_ == 0.5
    with warnings.catch_warnings():  # a bound the ridge guarantees is public: no warning, no opt-in
        warnings.simplefilter("error", PrivacyLeakWarning)
        assert LogisticPropensity(ridge=0.1, hessian_lower_bound=0.05, **base).fit(X, A).hessian_lower_bound_ == 0.05


def test_tight_bound_when_the_ridge_bounds_the_penalised_hessian(data):
    """Review item 4: each weight moves by at most C_B C_x e^M (2 C_x / n + 2 tol) / b_x, not the paper's
    (1 + e^M)^2 form, when b_x bounds the Hessian of the penalised average log-likelihood."""
    X, A, _ = data
    X, A = X[:300], A[:300]
    n = len(A)
    kw = dict(feature_bounds=([0, 0], [1, 1]), benefit_bound=1.0, logit_bound=3.0, ridge=0.5)
    model = LogisticPropensity(**kw).fit(X, A)
    bound = _per_weight(1.0, math.sqrt(3.0), 3.0, n, 0.5)
    assert model.per_weight_bound() == pytest.approx(bound, rel=1e-12)
    assert model.weight_sensitivity(n) == pytest.approx(n * bound, rel=1e-12)
    paper = proposition8_H(benefit_bound=1.0, feature_norm_bound=math.sqrt(3.0), logit_bound=3.0,
                           hessian_lower_bound=0.5) / n
    assert paper / bound == pytest.approx((1 + math.e ** 3) ** 2 / math.e ** 3, rel=1e-6)  # about 22
    rng = np.random.default_rng(2)
    worst = 0.0
    for _ in range(20):
        j = int(rng.integers(n))
        X2, A2 = X.copy(), A.copy()
        X2[j], A2[j] = rng.integers(0, 2, size=2), -A2[j]
        other = LogisticPropensity(**kw).fit(X2, A2)
        keep = np.arange(n) != j
        w1 = 1.0 / model.probability_of(X[keep], A[keep])[0]
        w2 = 1.0 / other.probability_of(X[keep], A[keep])[0]
        worst = max(worst, float(np.max(np.abs(w1 - w2))))
    assert worst <= bound, f"a weight moved by {worst:.4g} > per-weight bound {bound:.4g}"


def test_second_moment_bound_uses_the_papers_form(data):
    X, A, _ = data
    kw = dict(feature_bounds=([0, 0], [1, 1]), benefit_bound=2.0, logit_bound=1.0)
    with pytest.warns(PrivacyLeakWarning, match="second moment"):
        model = LogisticPropensity(hessian_lower_bound=0.05, hessian_bound_kind="second_moment",
                                   assume_hessian_bound=True, **kw).fit(X[:500], A[:500])
    H = proposition8_H(benefit_bound=2.0, feature_norm_bound=math.sqrt(3.0), logit_bound=1.0, hessian_lower_bound=0.05)
    from pydpowl.estimators.propensity import PROPENSITY_TOL

    expected = H / 500 + 2 * 2.0 * math.sqrt(3.0) * (1 + math.e) ** 2 * PROPENSITY_TOL / 0.05
    assert model.per_weight_bound() == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match="hessian_bound_kind"):
        LogisticPropensity(hessian_lower_bound=0.05, hessian_bound_kind="eigen", assume_hessian_bound=True,
                           **kw).fit(X[:500], A[:500])


def test_n_features_in_and_another_number_of_columns(data):
    X, A, _ = data
    model = LogisticPropensity(feature_bounds=([0, 0], [1, 1]), benefit_bound=5.0, ridge=0.1).fit(X[:500], A[:500])
    assert model.n_features_in_ == 2
    with pytest.raises(ValueError, match=r"^X must have 2 columns, got 1 \(X has 1 features, but LogisticPropensity "
                                         r"is expecting 2 features as input\)"):
        model.predict_proba(X[:, :1])
    with pytest.raises(ValueError, match=r"all 3 entries are \+1 \(one class only\)"):
        LogisticPropensity(feature_bounds=([0, 0], [1, 1]), benefit_bound=5.0, ridge=0.1).fit(X[:3], np.ones(3))


def test_a_dataframe_fit_keeps_feature_names_and_predicts_by_name(data):
    """scikit-learn's convention: feature_names_in_ after a DataFrame fit; predict matches columns by name."""
    import pandas as pd

    X, A, _ = data
    frame = pd.DataFrame(X[:500], columns=["age", "dose"])
    model = LogisticPropensity(feature_bounds=([0, 0], [1, 1]), benefit_bound=5.0, ridge=0.1).fit(frame, A[:500])
    assert list(model.feature_names_in_) == ["age", "dose"]
    np.testing.assert_array_equal(model.predict_proba(frame[["dose", "age"]]), model.predict_proba(frame))
    with pytest.raises(ValueError, match=r"^X lacks the column\(s\) \['age'\] that LogisticPropensity was fitted on "
                                         r"\(columns are matched by name\); X has \['agee', 'dose'\]\.$"):
        model.predict_proba(frame.rename(columns={"age": "agee"}))
    refit = model.fit(X[:500], A[:500])  # an array fit forgets the names of an earlier one
    assert not hasattr(refit, "feature_names_in_")
