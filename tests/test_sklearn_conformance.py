"""scikit-learn's estimator checks on every pydpowl estimator (docs/sklearn.md).

Every check ``check_estimator`` generates (scikit-learn 1.2.1, Debian's
``python3-sklearn``) runs as its own test, on each configuration in
``CONFIGURATIONS``. The checks allowed to fail are named per configuration in
``EXPECTED_FAILURES`` with their reason (the rows of docs/sklearn.md's table)
and marked ``xfail(strict=True)``: a check that fails outside that list fails
the suite, and so does a listed check that starts passing (the table would be
stale). A check that skips itself fails too.

The estimators need public bounds that scikit-learn's generated data do not
come with. :func:`wide_bounds` is a test-only factory: a subclass whose ``fit``
supplies ``feature_bounds = [-WIDE, WIDE]`` for every column (built from the
number of columns only, never from the values) and puts the parameter back
afterwards. Estimators fitted on treatments in {-1, 1} (the propensity models,
and DPOWL through :class:`OWLOnLabels`) get scikit-learn's two labels coded as
arms (the larger one +1), as a user codes a trial's arms.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Dict, List, Optional

import numpy as np
import pytest
from sklearn.exceptions import SkipTestWarning
from sklearn.utils import estimator_checks
from sklearn.utils.estimator_checks import check_estimator

from pydpowl import DPLinearRegression, DPLogisticRegression, DPMultiStageOWL, DPOWL, DPSVM, DPWeightedERM
from pydpowl.estimators.dp_propensity import DPLogisticPropensity
from pydpowl.estimators.propensity import LogisticPropensity
from pydpowl.policy_evaluation import DPLSL, DPLSW, LSL, LSW

#: public bound on every feature of the checks' data (mostly standardised or in [0, 20]; larger values are
#: clipped by design, which the checks cannot tell from a defect, so the bound is wide)
WIDE = 10.0

#: scikit-learn checks that check_estimator 1.2.1 does not generate but that test the feature-name contract
#: (its own estimators run them in sklearn/tests/test_common.py)
EXTRA_CHECKS = ("check_dataframe_column_names_consistency", "check_n_features_in_after_fitting")


def _n_columns(X: Any) -> int:
    """Columns of X (1 for a 1-D X, which the estimator then refuses itself): a public count."""
    shape = X.shape if hasattr(X, "shape") else np.asarray(X).shape
    return int(shape[1]) if len(shape) == 2 else 1


_WIDE: Dict[type, type] = {}


def wide_bounds(cls: type) -> type:
    """Test-only subclass of ``cls`` whose ``fit`` supplies ``feature_bounds`` of ``[-WIDE, WIDE]`` per column.

    The subclass has ``cls``'s parameters (``get_params``, ``clone`` and the
    parameter checks see the real estimator), its ``fit`` has ``cls.fit``'s
    signature (``has_fit_parameter`` finds ``sample_weight`` where the estimator
    takes it), and ``feature_bounds`` is put back after the fit, so no
    parameter is changed. It is defined at module level (``<cls>Wide``) so that
    fitted models pickle (one per class).
    """
    if cls in _WIDE:
        return _WIDE[cls]

    @functools.wraps(cls.fit)
    def fit(self, X, *args, **kwargs):
        p = _n_columns(X)
        given = self.feature_bounds
        self.feature_bounds = (np.full(p, -WIDE), np.full(p, WIDE))
        try:
            return cls.fit(self, X, *args, **kwargs)
        finally:
            self.feature_bounds = given

    name = f"{cls.__name__}Wide"
    sub = type(name, (cls,), {"fit": fit, "__module__": __name__, "__qualname__": name})
    globals()[name] = _WIDE[cls] = sub
    return sub


def arms_of(y: Any) -> Any:
    """scikit-learn's labels as arms: with at most two values, the larger is +1 and the other -1.

    Anything else (None, more values, 2-D) is passed on unchanged for the estimator to refuse.
    """
    if y is None:
        return None
    arr = np.asarray(y)
    if arr.ndim != 1 or arr.dtype.kind not in "iufO" or len(set(arr.tolist())) > 2:
        return y
    return np.where(arr == max(arr.tolist()), 1, -1).astype(arr.dtype)  # the dtype kept (an object array stays one)


class LogisticPropensityArms(wide_bounds(LogisticPropensity)):
    """LogisticPropensity with wide bounds, fitted on scikit-learn's labels coded as arms."""

    @functools.wraps(LogisticPropensity.fit)
    def fit(self, X, treatment):
        return super().fit(X, arms_of(treatment))


class DPLogisticPropensityArms(wide_bounds(DPLogisticPropensity)):
    """DPLogisticPropensity with wide bounds, fitted on scikit-learn's labels coded as arms."""

    @functools.wraps(DPLogisticPropensity.fit)
    def fit(self, X, treatment):
        return super().fit(X, arms_of(treatment))


class OWLOnLabels(wide_bounds(DPOWL)):
    """DPOWL with wide bounds fitted as ``fit(X, y)``: y's labels as the arms, unit benefits, propensity 1/2.

    The OWL weights are then 2 (W = 2), so the rule is a weighted Huber-SVM of
    the treatment: what scikit-learn's generic checks can exercise of DPOWL's
    input checks, label handling, fitted attributes, pickling and prediction.
    DPOWL itself is not a scikit-learn classifier (its fit takes treatments,
    benefits and propensities); this class only adapts the call, for the test
    (two arms: the propensity 1/2 is a two-arm design).
    """

    def fit(self, X, y):
        return super().fit(X, y, np.ones(_n_rows(X)), 0.5)

    def _more_tags(self) -> dict:
        return {"binary_only": True, "requires_y": True}


class MultiStageOnLabels(wide_bounds(DPMultiStageOWL)):
    """DPMultiStageOWL with wide bounds as a one-stage ``fit(X, y)``: y's labels as the arms, unit rewards,
    propensity 1/2, and ``predict(X)`` the stage's rule (the same adaptation as :class:`OWLOnLabels`)."""

    def fit(self, X, y):
        return super().fit(X, [y], [np.ones(_n_rows(X))], [0.5])

    def predict(self, X):
        return super().predict(X, stage=1)

    def decision_function(self, X):
        return super().decision_function(X, stage=1)

    def _more_tags(self) -> dict:
        return {"binary_only": True, "requires_y": True}


def _n_rows(X: Any) -> int:
    shape = X.shape if hasattr(X, "shape") else np.asarray(X).shape
    return int(shape[0]) if len(shape) else 0


INF = float("inf")

#: (configuration id, estimator): public settings a user may choose; epsilon = inf gives the exact minimiser,
#: which the accuracy checks can hold to their thresholds (docs/sklearn.md)
CONFIGURATIONS = {
    "DPWeightedERM": DPWeightedERM(epsilon=INF, clip_rows=True, weights_upper_bound=10.0),
    "DPWeightedERM-W1": DPWeightedERM(epsilon=INF, clip_rows=True),
    "DPSVM": wide_bounds(DPSVM)(epsilon=INF),
    "DPSVM-output": wide_bounds(DPSVM)(epsilon=INF, perturbation="output", weights_upper_bound=10.0),
    "DPSVM-gaussian": DPSVM(epsilon=INF, kernel="gaussian", n_components=20, perturbation="output",
                            weights_upper_bound=10.0),
    "DPLogisticRegression": wide_bounds(DPLogisticRegression)(epsilon=INF),
    "DPLogisticRegression-eps1": wide_bounds(DPLogisticRegression)(epsilon=1.0),
    "DPLinearRegression": wide_bounds(DPLinearRegression)(epsilon=INF, target_bounds=(-1e3, 1e3)),
    "DPLinearRegression-eps1": wide_bounds(DPLinearRegression)(epsilon=1.0, target_bounds=(-1e3, 1e3)),
    "LogisticPropensity": LogisticPropensityArms(feature_bounds=None, benefit_bound=1.0, ridge=0.1),
    "DPLogisticPropensity": DPLogisticPropensityArms(epsilon=1.0, feature_bounds=None),
    "DPOWL": OWLOnLabels(epsilon=INF, gamma=1.0, weights_upper_bound=2.0, feature_bounds=None),
    "DPMultiStageOWL": MultiStageOnLabels(epsilon=INF, gamma=1.0, feature_bounds=None, reward_bounds=(0.0, 1.0)),
}

#: reasons (keys of docs/sklearn.md's table)
W_BOUND = "weights above the public bound W = 1 are refused"
NO_WEIGHTED_OBJECTIVE = "objective perturbation takes no weights (DPpack; no weighted proof)"
REQUIRED_PUBLIC = "privacy parameters without a default (epsilon, public bounds)"
NOISE = "the privacy noise costs accuracy below the check's threshold"
TREATMENT_ARGUMENT = "the second argument of fit is the treatment, not y"
PER_STAGE = "fit takes a history and a treatment per stage: no one n_features_in_ or feature_names_in_"
NAMES_AS_STRINGS = ("prediction takes the fitted columns by name in any order (extra columns ignored), and refuses "
                    "a missing one in pydpowl's words, not scikit-learn's; LogisticPropensity keeps no "
                    "feature_names_in_")

#: configuration id -> {check name: reason}: the only checks allowed to fail
EXPECTED_FAILURES: Dict[str, Dict[str, str]] = {
    "DPWeightedERM": {},
    "DPWeightedERM-W1": {"check_sample_weights_list": W_BOUND, "check_sample_weights_not_overwritten": W_BOUND},
    "DPSVM": {name: NO_WEIGHTED_OBJECTIVE for name in (
        "check_sample_weights_pandas_series", "check_sample_weights_not_an_array", "check_sample_weights_list",
        "check_sample_weights_shape", "check_sample_weights_not_overwritten", "check_sample_weights_invariance",
        "check_classifiers_one_label_sample_weights")},
    "DPSVM-output": {},
    "DPSVM-gaussian": {},
    "DPLogisticRegression": {},
    "DPLogisticRegression-eps1": {"check_classifiers_classes": NOISE},
    "DPLinearRegression": {},
    "DPLinearRegression-eps1": {"check_regressors_train": NOISE},
    "LogisticPropensity": {"check_parameters_default_constructible": REQUIRED_PUBLIC,
                           "check_fit_score_takes_y": TREATMENT_ARGUMENT,
                           "check_requires_y_none": TREATMENT_ARGUMENT},
    "DPLogisticPropensity": {"check_parameters_default_constructible": REQUIRED_PUBLIC,
                             "check_fit_score_takes_y": TREATMENT_ARGUMENT,
                             "check_requires_y_none": TREATMENT_ARGUMENT},
    "DPOWL": {"check_parameters_default_constructible": REQUIRED_PUBLIC, "check_requires_y_none": TREATMENT_ARGUMENT},
    "DPMultiStageOWL": {"check_parameters_default_constructible": REQUIRED_PUBLIC,
                        "check_requires_y_none": TREATMENT_ARGUMENT, "check_n_features_in": PER_STAGE,
                        "check_n_features_in_after_fitting": PER_STAGE,
                        "check_dataframe_column_names_consistency": PER_STAGE},
}
for _config in ("LogisticPropensity", "DPLogisticPropensity", "DPOWL"):
    EXPECTED_FAILURES[_config]["check_dataframe_column_names_consistency"] = NAMES_AS_STRINGS


def _name(check: Any) -> str:
    return getattr(check, "func", check).__name__


def _checks(config: str) -> List[Any]:
    """``pytest.param``s of every check for one configuration, the expected failures marked."""
    estimator = CONFIGURATIONS[config]
    checks = [check for _, check in check_estimator(estimator, generate_only=True)]
    checks += [functools.partial(getattr(estimator_checks, name), type(estimator).__name__) for name in EXTRA_CHECKS]
    seen: Dict[str, int] = {}
    params = []
    for check in checks:
        name = _name(check)
        seen[name] = seen.get(name, 0) + 1
        reason = EXPECTED_FAILURES[config].get(name)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        params.append(pytest.param(config, check, id=f"{config}-{name}-{seen[name]}", marks=marks))
    return params


ALL_CHECKS = [param for config in CONFIGURATIONS for param in _checks(config)]


def _run(estimator: Any, check: Any) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check(estimator)
    skipped = [str(w.message) for w in caught if issubclass(w.category, SkipTestWarning)]
    assert skipped == [], f"{_name(check)} skipped itself: {skipped}"


@pytest.mark.parametrize("config, check", ALL_CHECKS)
def test_estimator_check(config, check):
    _run(CONFIGURATIONS[config], check)


def _estimator_classes() -> set:
    """Every public BaseEstimator subclass of pydpowl: its exports and the estimator subpackages' modules."""
    import importlib
    import pkgutil

    import pydpowl
    from sklearn.base import BaseEstimator

    objects = [getattr(pydpowl, name) for name in pydpowl.__all__]
    for package in ("pydpowl.estimators", "pydpowl.policy_evaluation"):
        for info in pkgutil.iter_modules(importlib.import_module(package).__path__, package + "."):
            objects += vars(importlib.import_module(info.name)).values()
    return {obj for obj in objects if isinstance(obj, type) and issubclass(obj, BaseEstimator)
            and obj.__module__.startswith("pydpowl") and not obj.__name__.startswith("_")}


def test_every_estimator_is_covered():
    """Every estimator of pydpowl is checked here (the policy evaluators: the parameter checks)."""
    found = _estimator_classes()
    assert {DPWeightedERM, DPOWL, DPSVM, LogisticPropensity, DPLSW} <= found
    covered = {cls for est in CONFIGURATIONS.values() for cls in type(est).__mro__} | set(POLICY_EVALUATORS)
    assert found - covered == set()
    assert all(len(_checks(config)) >= 30 for config in CONFIGURATIONS)
    assert {"check_classifiers_train", "check_estimators_unfitted"} <= {_name(p.values[1]) for p in _checks("DPSVM")}
    assert "check_regressors_train" in {_name(p.values[1]) for p in _checks("DPLinearRegression")}


#: fit(episodes) of a Markov chain: scikit-learn's (X, y) checks do not apply; these do
POLICY_EVALUATORS = (LSW, LSL, DPLSW, DPLSL)
PARAMETER_CHECKS = ("check_no_attributes_set_in_init", "check_parameters_default_constructible",
                    "check_get_params_invariance", "check_set_params", "check_estimator_get_tags_default_keys",
                    "check_estimators_unfitted")


@pytest.mark.parametrize("cls", POLICY_EVALUATORS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", PARAMETER_CHECKS)
def test_policy_evaluator_parameter_checks(cls, name):
    _run(cls(), functools.partial(getattr(estimator_checks, name), cls.__name__))


def _failures(estimator: Any) -> Dict[str, BaseException]:
    failed = {}
    for est, check in check_estimator(estimator, generate_only=True):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                check(est)
            except Exception as exc:  # a failed check raises; collect them all
                failed[_name(check)] = exc
    return failed


def _says(exc: Optional[BaseException], words: str) -> bool:
    """Whether ``exc`` or an exception it was raised from mentions ``words``."""
    while exc is not None:
        if words in str(exc):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


@pytest.mark.parametrize("estimator, words", [
    (DPSVM(epsilon=INF), "feature_bounds must be"),
    (DPLogisticRegression(epsilon=INF), "feature_bounds must be"),
    (DPLinearRegression(epsilon=INF, feature_bounds=None, target_bounds=(-1e3, 1e3)), "feature_bounds must be"),
    (DPWeightedERM(epsilon=INF, weights_upper_bound=10.0), "every row of X must have l2 norm <= 1"),
], ids=["DPSVM", "DPLogisticRegression", "DPLinearRegression", "DPWeightedERM-no-clip"])
def test_without_public_bounds_every_failure_is_the_bound(estimator, words):
    """docs/sklearn.md: without the public bounds the data checks fail, each on the missing bound, nothing else."""
    failed = _failures(estimator)
    assert len(failed) >= 15
    assert {name for name, exc in failed.items() if not _says(exc, words)} == set()
