"""pydpowl.estimators._family: what the two classifiers share."""

import numpy as np
import pytest

from pydpowl import DPLogisticRegression, DPSVM
from pydpowl.estimators._family import check_common_settings


def test_common_settings_are_checked_by_name():
    with pytest.raises(TypeError, match="fit_intercept must be True or False"):
        check_common_settings(DPSVM(fit_intercept="yes"))
    with pytest.raises(ValueError, match=r"tol must be in \(0, inf\)"):
        check_common_settings(DPLogisticRegression(tol=0.0))
    assert check_common_settings(DPSVM(epsilon=2, gamma=3)) == (2.0, 3.0, "objective", None)  # None: set from mu


def test_release_attributes_and_private_ones_only_on_request():
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, (100, 2)), rng.integers(0, 2, 100)
    kw = dict(feature_bounds=([-1, -1], [1, 1]), fit_intercept=True, random_state=1)
    m = DPSVM(**kw).fit(X, y)
    assert not hasattr(m, "minimiser_") and not hasattr(m, "noise_") and not hasattr(m, "linear_term_")
    k = DPSVM(keep_nonprivate=True, **kw).fit(X, y)
    np.testing.assert_array_equal(k.scaled_coef_, m.scaled_coef_)
    from pydpowl.engine.mechanisms import round_release

    assert m.release_grid_ is not None  # floating-point safe by default (objective perturbation's smoothing noise)
    np.testing.assert_array_equal(k.scaled_coef_, round_release(k.minimiser_, k.noise_, grid=k.release_grid_))
    assert m.noise_scale_ == 1.0 / m.noise_rate_
    np.testing.assert_array_equal(m.dppack_coeff_, np.r_[m.intercept_, m.coef_])


# ---- columns by name (issue 22.1) ----

def _family_data():
    import pandas as pd

    rng = np.random.default_rng(5)
    n = 400
    X = pd.DataFrame({"age": rng.uniform(18, 89, n), "dose": rng.uniform(0, 2, n), "male": rng.integers(0, 2, n)})
    score = (X["age"] - 50) / 20 + X["dose"] - 1 + 0.5 * X["male"]
    return X, (score + rng.normal(0, 0.5, n) > 0).astype(int).to_numpy(), score.to_numpy()


_NAMED = {"male": (0.0, 1.0), "age": (18.0, 89.0), "dose": (0.0, 2.0)}


def _family_models(bounds, **kw):
    from pydpowl import DPLinearRegression

    return [DPSVM(feature_bounds=bounds, fit_intercept=True, epsilon=np.inf, **kw),
            DPLogisticRegression(feature_bounds=bounds, fit_intercept=True, epsilon=np.inf, **kw),
            DPLinearRegression(feature_bounds=bounds, target_bounds=(-5, 5), fit_intercept=True, epsilon=np.inf,
                               **kw)]


@pytest.mark.parametrize("k", [0, 1, 2], ids=["DPSVM", "DPLogisticRegression", "DPLinearRegression"])
def test_family_bounds_by_name_on_a_reordered_dataframe(k):
    X, labels, score = _family_data()
    y = score if k == 2 else labels
    positional = ([18.0, 0.0, 0.0], [89.0, 2.0, 1.0])
    ordered = _family_models(positional)[k].fit(X, y)
    reordered = X[["male", "dose", "age"]]
    named = _family_models(_NAMED)[k].fit(reordered, y)
    np.testing.assert_allclose(named.coef_[::-1], ordered.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(named.feature_names_in_, ["male", "dose", "age"])
    np.testing.assert_allclose(named.predict(reordered) if k == 2 else named.decision_function(reordered),
                               ordered.predict(X) if k == 2 else ordered.decision_function(X), rtol=1e-9, atol=1e-12)
    # scikit-learn's rule at prediction: the fitted names in the fitted order, else a clear refusal
    with pytest.raises(ValueError, match="feature names should match those that were passed during fit"):
        ordered.predict(reordered)
    with pytest.raises(ValueError, match="given by column name .* but X has no column names"):
        _family_models(_NAMED)[k].fit(X.to_numpy(), y)


def test_family_diagnostic_is_opt_in():
    import warnings

    from pydpowl.exceptions import BoundsDiagnosticWarning

    X, labels, score = _family_data()
    swapped = X[["dose", "age", "male"]]  # positional bounds of (age, dose, male) on other columns
    positional = ([18.0, 0.0, 0.0], [89.0, 2.0, 1.0])
    for k, model in enumerate(_family_models(positional)):
        y = score if k == 2 else labels
        with warnings.catch_warnings():
            warnings.simplefilter("error", BoundsDiagnosticWarning)
            model.fit(swapped, y)
    for k, model in enumerate(_family_models(positional, diagnose_bounds=0.5)):
        y = score if k == 2 else labels
        with pytest.warns(BoundsDiagnosticWarning, match=r"column\(s\) 'dose', 'age' lie outside"):
            model.fit(swapped, y)


def test_tuning_matches_candidates_bounds_by_name():
    from pydpowl import DPLinearRegression, tune_classification_model, tune_linear_regression_model

    X, labels, score = _family_data()
    reordered = X[["male", "dose", "age"]]
    sel = tune_classification_model([DPSVM(feature_bounds=_NAMED, epsilon=1.0),
                                     DPLogisticRegression(feature_bounds=_NAMED, epsilon=1.0)],
                                    reordered, labels, random_state=0)
    assert sel.model.coef_.shape == (3,)
    lin = tune_linear_regression_model([DPLinearRegression(feature_bounds=_NAMED, target_bounds=(-5, 5), gamma=g)
                                        for g in (1.0, 10.0)], reordered, score, random_state=0)
    np.testing.assert_array_equal(lin.model.feature_names_in_, ["male", "dose", "age"])
