"""scikit-learn's own estimator checks on DPWeightedERM (docs/sklearn.md).

Every check ``check_estimator`` generates is run; the ones allowed to fail are
listed by name (docs/sklearn.md says why), and any other failure fails the test.
The settings are public ones a user may choose: ``clip_rows=True`` (rows of norm
above 1 are divided by their norm, part of the mechanism) and
``weights_upper_bound=10`` (scikit-learn's weights reach 10).
"""

import warnings

import numpy as np
from sklearn.exceptions import SkipTestWarning
from sklearn.utils.estimator_checks import check_estimator

from pydpowl import DPWeightedERM

#: checks that may fail, each explained in docs/sklearn.md (at most 3)
ALLOWED_FAILURES = frozenset()
#: with the default settings these fail, for the reasons docs/sklearn.md gives (privacy bounds, not defects)
DEFAULT_SETTINGS_FAILURES = {
    "weights above W=1": {"check_sample_weights_list", "check_sample_weights_not_overwritten"},
}


def _run_checks(estimator):
    """``{check name: exception or None}`` over every generated check (a name may occur several times)."""
    results = []
    for est, check in check_estimator(estimator, generate_only=True):
        name = getattr(check, "func", check).__name__
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                check(est)
                error = None
            except Exception as exc:  # a failed check raises; collect them all
                error = exc
        skipped = [w for w in caught if issubclass(w.category, SkipTestWarning)]
        results.append((name, error, skipped))
    return results


def test_check_estimator_passes_except_the_documented_checks():
    assert len(ALLOWED_FAILURES) <= 3
    results = _run_checks(DPWeightedERM(epsilon=np.inf, clip_rows=True, weights_upper_bound=10.0))
    names = {name for name, _, _ in results}
    assert len(results) >= 45 and {"check_classifiers_train", "check_estimators_empty_data_messages",
                                   "check_complex_data", "check_estimator_sparse_data",
                                   "check_sample_weights_pandas_series", "check_estimators_unfitted"} <= names
    failed = {name: f"{type(err).__name__}: {err}" for name, err, _ in results if err is not None}
    unexpected = {k: v for k, v in failed.items() if k not in ALLOWED_FAILURES}
    assert unexpected == {}, f"scikit-learn checks failing beyond the documented ones: {unexpected}"
    skipped = [name for name, _, skips in results if skips]
    assert skipped == [], f"checks skipped: {skipped}"


def test_the_documented_failures_are_still_failures():
    """docs/sklearn.md explains what fails with default settings; keep that text true."""
    results = _run_checks(DPWeightedERM(epsilon=np.inf, clip_rows=True))
    failed = {name for name, err, _ in results if err is not None}
    assert failed == DEFAULT_SETTINGS_FAILURES["weights above W=1"]
    no_clip = {name for name, err, _ in _run_checks(DPWeightedERM(epsilon=np.inf, weights_upper_bound=10.0))
               if err is not None}
    assert "check_classifiers_train" in no_clip and "check_fit_idempotent" in no_clip  # rows of norm > 1 refused
