"""DPLogisticRegression: DPpack's ``LogisticRegressionDP`` (objective or output perturbation)."""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base import feature_names_in, store_feature_names
from .._validation import check_array, check_binary_target, feature_names_of, resolve_rng
from ..engine.losses import class_probabilities
from ._family import BinaryERMClassifier, check_common_settings, store_release
from ._family_core import DPPACK_OPTIMIZER_GAMMA, fit_classifier

__all__ = ["DPLogisticRegression", "DPPACK_OPTIMIZER_GAMMA"]

#: DPPACK_OPTIMIZER_GAMMA: the gamma DPpack 0.2.2's LogisticRegressionDP optimiser uses (defined in ._family_core)


class DPLogisticRegression(BinaryERMClassifier):
    """Differentially private logistic regression (DPpack's ``LogisticRegressionDP``).

    Minimises, in DPpack's scaled space (features clipped to public bounds and
    divided by ``max(|lower|, |upper|)`` and ``sqrt(d)``),

        (1/n) sum_i log(1 + exp(-y_i z_i'theta)) + gamma/(2n) ||theta||^2

    (DPpack's cross-entropy of ``sigmoid(z'theta)`` on 0/1 labels), privately by
    objective perturbation (DPpack's default; curvature bound ``c = 1/4``) or
    output perturbation (rate ``gamma epsilon / 2``).

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget in (0, inf] (DPpack's ``eps``).
    gamma : float, default=1.0
        Regularisation constant in (0, inf) (DPpack's convention).
    perturbation : {"objective", "output"}, default="objective"
        DPpack's ``perturbation.method``.
    feature_bounds : dict or tuple (lower, upper)
        Public per-feature bounds, by column name or in column order as in
        :class:`~pydpowl.estimators.svm.DPSVM` (DPpack's ``lower.bounds``/``upper.bounds``); features are
        clipped to them (by design; counted in ``n_clipped_features_``).
    fit_intercept : bool, default=False
        DPpack's ``add.bias`` (a column of ones first, regularised like every coefficient).
    reproduce_dppack : bool, default=False
        Reproduce DPpack 0.2.2 draw for draw (validation and replay; emits PrivacyLeakWarning), including
        its optimiser's ``gamma = 1`` (see Notes).
    tol : float or None, default=None
        Certified gradient-norm tolerance of the solver (scaled space). None:
        for objective perturbation the target is set from the public modulus
        (:func:`pydpowl.engine.mechanisms.solver_tolerance`: the smoothing noise
        stays negligible at every n); for output perturbation 1e-10.
    keep_nonprivate : bool, default=False
        Keep ``minimiser_``, ``noise_`` and ``linear_term_`` (PRIVATE; validation only).
    backend : {"auto", "numpy", "numba"}, default="auto"
        Solver backend (:func:`pydpowl.engine.solver.solve_weighted_erm`): "auto" is numpy at every n
        for this loss (numpy's vectorised exp and log1p beat the compiled kernels' scalar ones: 12 ms
        against 15 ms per fit at 200,000 rows); "numba" forces the kernels. The release is the same.
    random_state : None, int, numpy.random.Generator or RRandom, default=None
        Source of the noise (see :class:`pydpowl.estimators.svm.DPSVM`).
    diagnose_bounds : None, True or float in (0, 1), default=None
        Opt-in, NON-PRIVATE diagnostic (see :class:`~pydpowl.estimators.svm.DPSVM`).

    Attributes
    ----------
    classes_, coef_, intercept_, dppack_coeff_, scaled_coef_ : see :class:`pydpowl.estimators.svm.DPSVM`
    epsilon_objective_, epsilon_smoothing_, epsilon_prime_, Delta_, noise_rate_, sensitivity_ : float
    release_scale_ : float
        Scale of the noise the release was rounded under (public: the output noise's ``Delta / epsilon`` or the
        smoothing noise's ``2 r / epsilon_s``).
    privacy_spent_ : (float, float)
        As in :class:`~pydpowl.estimators.svm.DPSVM`.
    n_features_in_ : int
    n_clipped_features_, n_iter_ : int
        NON-PRIVATE diagnostics (computed from the private data; not released, never printed by default).

    Notes
    -----
    Guarantee and constants as :class:`~pydpowl.estimators.svm.DPSVM` with ``c = 1/4``.
    DPpack 0.2.2 quirk: its optimiser minimises the objective with ``gamma = 1``
    whatever ``gamma`` is (the noise is calibrated with the given gamma), so its
    coefficients do not depend on gamma; for ``gamma > 1`` its release is then
    less private than claimed (output perturbation: epsilon times gamma).
    pydpowl uses the given gamma unless ``reproduce_dppack=True``.
    """

    def __init__(self, *, epsilon: float = 1.0, gamma: float = 1.0, perturbation: str = "objective",
                 feature_bounds: Any = None, fit_intercept: bool = False, reproduce_dppack: bool = False,
                 tol: Optional[float] = None, keep_nonprivate: bool = False, backend: str = "auto",
                 random_state: Any = None, diagnose_bounds: Any = None) -> None:
        self.epsilon = epsilon
        self.gamma = gamma
        self.perturbation = perturbation
        self.feature_bounds = feature_bounds
        self.fit_intercept = fit_intercept
        self.reproduce_dppack = reproduce_dppack
        self.tol = tol
        self.keep_nonprivate = keep_nonprivate
        self.backend = backend
        self.random_state = random_state
        self.diagnose_bounds = diagnose_bounds

    def fit(self, X: ArrayLike, y: ArrayLike) -> "DPLogisticRegression":
        """Fit privately.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n, p)
        y : array-like of shape (n,)
            Two distinct labels (DPpack: 0 and 1).

        Returns
        -------
        self
        """
        names, columns = feature_names_in(X), feature_names_of(X)
        check_common_settings(self)
        X = check_array("X", X, order="K")  # read column by column: no row-major copy
        classes, y_pm = check_binary_target("y", y, length=X.shape[0])
        self._fit_checked(X, y_pm, classes, columns=columns)
        store_feature_names(self, names)
        return self

    def _fit_checked(self, X: NDArray[np.float64], y_pm: NDArray[np.float64], classes: NDArray[Any], *,
                     columns: Optional[Sequence[str]] = None) -> "DPLogisticRegression":
        """:meth:`fit` for a checked float array and labels in {-1, 1}; ``columns`` as in DPSVM's."""
        eps, gamma, perturbation, tol = check_common_settings(self)
        n, p = X.shape
        fit = fit_classifier(X, y_pm, None, model="logistic", epsilon=eps, gamma=gamma, perturbation=perturbation,
                             feature_bounds=self._bounds(X, columns), fit_intercept=bool(self.fit_intercept),
                             reproduce_dppack=bool(self.reproduce_dppack), tol=tol, backend=self.backend,
                             rng=resolve_rng(self.random_state))
        self.classes_ = np.asarray(classes)
        self.scaler_ = fit.scaler
        store_release(self, fit.release, fit.scaler, split_intercept=True)
        self.n_features_in_ = p
        self.n_samples_ = n
        self.n_clipped_features_ = fit.n_clipped_features
        return self

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """``[1 - s, s]`` with ``s = sigmoid(decision)`` (DPpack's ``raw.value``), columns in ``classes_`` order."""
        return class_probabilities(self.decision_function(X))

    def predict_log_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Logarithm of :meth:`predict_proba`, computed stably."""
        return class_probabilities(self.decision_function(X), log=True)
