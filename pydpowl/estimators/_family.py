"""What DPSVM and DPLogisticRegression share: settings checks, labels, scaling, the stored release.

Both are DPpack's Chaudhuri-Monteleoni-Sarwate ERM with public feature bounds
(``FeatureScaler``: clip, optional intercept column first, divide by
``max(|lower|, |upper|)`` and ``sqrt(d)``) and labels coded -1/+1 internally
(``classes_[0]`` is DPpack's 0, ``classes_[1]`` its 1).
"""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Tuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import ClassifierMixin

from .._base import DPEstimator, check_is_fitted, check_prediction_input
from .._validation import check_bool, check_diagnose_bounds, check_epsilon, check_positive, diagnose_bounds
from ..engine.preprocessing import FeatureScaler
from ..engine.mechanisms import Release, check_perturbation
from ..privacy.accountant import rounded_release_spent

__all__ = ["BinaryERMClassifier", "check_common_settings", "feature_bounds_of", "store_release", "release_spent"]


def check_common_settings(est: Any) -> Tuple[float, float, str, Optional[float]]:
    """``(epsilon, gamma, perturbation, tol)`` after checking them and the boolean switches."""
    eps = check_epsilon(est.epsilon)
    gamma = check_positive("gamma", est.gamma)
    perturbation = check_perturbation(est.perturbation)
    tol = None if est.tol is None else check_positive("tol", est.tol)
    for name in ("fit_intercept", "reproduce_dppack", "keep_nonprivate"):
        check_bool(name, getattr(est, name))
    check_diagnose_bounds(est.diagnose_bounds)
    return eps, gamma, perturbation, tol


def release_scale(release: Release) -> float:
    """Scale of the noise a family release was rounded under: the output noise's ``Delta / epsilon`` (output
    perturbation) or the smoothing noise's ``2 r / epsilon_s`` (objective perturbation); public."""
    if release.epsilon_smoothing > 0:
        return 2.0 * release.error_radius / release.epsilon_smoothing
    return release.sensitivity / release.epsilon


def release_spent(release: Release, *, reproduce_dppack: bool, delta: float = 0.0) -> Tuple[float, float]:
    """``(epsilon, delta)`` of a family release: ``delta`` (KST's Gaussian noise, else 0) plus the
    floating-point rounding's, for the noise that was rounded (:func:`release_scale`)."""
    return rounded_release_spent(release.epsilon, dim=len(release.coef), grid=release.grid,
                                 noise_scale=release_scale(release), delta=delta,
                                 full_precision=bool(reproduce_dppack))


def store_release(est: Any, release: Release, scaler: FeatureScaler, *, split_intercept: bool) -> None:
    """Fitted attributes from a release: ``scaled_coef_``, ``dppack_coeff_``, ``coef_``, ``intercept_``, budgets
    (``privacy_spent_``)."""
    est.scaled_coef_ = np.asarray(release.coef, dtype=np.float64)
    full = scaler.coef_to_original(est.scaled_coef_)  # DPpack: coeff / (scale1 * scale2)
    est.dppack_coeff_ = full
    if split_intercept and scaler.fit_intercept:
        est.intercept_, est.coef_ = float(full[0]), full[1:].copy()
    else:
        est.intercept_, est.coef_ = 0.0, full.copy()
    est.epsilon_objective_ = release.epsilon_objective
    est.epsilon_smoothing_ = release.epsilon_smoothing
    est.Delta_ = release.Delta
    est.epsilon_prime_ = release.epsilon_prime
    est.noise_rate_ = release.rate
    est.sensitivity_ = release.sensitivity
    est.n_iter_ = release.n_iter  # a non-private diagnostic
    est.release_grid_ = release.grid  # public: the floating-point-safe grid (None with reproduce_dppack)
    est.release_scale_ = release_scale(release)  # public: the scale of the noise the release was rounded under
    est.privacy_spent_ = release_spent(release, reproduce_dppack=est.reproduce_dppack)
    if est.keep_nonprivate:  # PRIVATE: validation only
        est.minimiser_ = release.minimiser.copy()
        est.noise_ = release.noise.copy()
        est.linear_term_ = None if release.linear_term is None else release.linear_term.copy()


class BinaryERMClassifier(ClassifierMixin, DPEstimator):
    """Shared behaviour of the two classifiers (not a public estimator).

    Subclasses implement ``_scaled_rows(X)`` (the features the coefficients
    act on, before DPpack's scaling) and set ``_split_intercept``.
    """

    _split_intercept = True

    def _more_tags(self) -> dict:
        return {"binary_only": True}  # scikit-learn < 1.6 reads tags here (Debian's 1.2.1); see docs/sklearn.md

    def _bounds(self, X: NDArray[np.float64], columns: Optional[Sequence[str]] = None
                ) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The checked ``(lower, upper)`` feature bounds in the order of X's ``columns`` (bounds by name are
        matched to them), after the opt-in diagnostic :func:`~pydpowl._validation.diagnose_bounds`."""
        lower, upper = feature_bounds_of(self, X.shape[1], columns)
        diagnose_bounds(X, lower, upper, check_diagnose_bounds(self.diagnose_bounds), columns=columns,
                        owner=type(self).__name__)
        return lower, upper

    def _raw_decision(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        return X @ self.coef_ + self.intercept_

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """The released linear predictor (DPpack's ``raw.value``); new features are not clipped, as in DPpack.

        Fitted on a DataFrame, X must have the same column names in the same
        order (scikit-learn's rule); anything else is refused.
        """
        X = check_prediction_input(self, X, feature_names=True)
        return self._raw_decision(X)

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """``classes_[1]`` where the decision function is > 0, else ``classes_[0]`` (DPpack's 1 and 0)."""
        return np.where(self.decision_function(X) > 0, self.classes_[1], self.classes_[0])

    @property
    def noise_scale_(self) -> float:
        """``1 / noise_rate_``: scale of the Gamma law of the main noise's norm (public)."""
        check_is_fitted(self)
        return math.inf if self.noise_rate_ == 0 else 1.0 / self.noise_rate_


def feature_bounds_of(est: Any, n_features: int, columns: Optional[Sequence[str]] = None
                      ) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
    """An estimator's ``feature_bounds`` checked and put in the order of X's ``columns`` (required: never
    read off the data)."""
    if est.feature_bounds is None or isinstance(est.feature_bounds, str):
        raise ValueError(
            "feature_bounds must be a pair (lower, upper) of public bounds, one per feature in column order "
            "(DPpack's lower.bounds and upper.bounds), or a dict {column: (lower, upper)}, got "
            f"feature_bounds={est.feature_bounds!r}. Bounds must be known before seeing the data.")
    scaler = FeatureScaler.from_bounds(est.feature_bounds, n_features, est.fit_intercept, columns=columns)
    return scaler.lower, scaler.upper


def resolve_optional_positive(name: str, value: Optional[float]) -> Optional[float]:
    """None or a float in (0, inf)."""
    return None if value is None else check_positive(name, value)
