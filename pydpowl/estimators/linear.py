"""DPLinearRegression: DPpack's ``LinearRegressionDP`` (Kifer, Smith & Thakurta's objective perturbation)."""

from __future__ import annotations

import math
import numbers
from typing import Any, Optional, Tuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import RegressorMixin

from .._base import DPEstimator, check_prediction_input, feature_names_in, store_feature_names
from .._validation import check_array, check_bool, check_diagnose_bounds, check_epsilon, check_positive, \
    check_target_vector, diagnose_bounds, feature_names_of, resolve_rng
from ..engine.mechanisms import kst_calibration
from ..engine.preprocessing import FeatureScaler
from ._family import release_scale, release_spent
from ._family_core import fit_linear_regression

__all__ = ["DPLinearRegression", "check_target_bounds"]


def check_target_bounds(bounds: Any) -> Tuple[float, float]:
    """Public bounds ``(lower, upper)`` on the target, finite with ``lower < upper``.

    Raises
    ------
    ValueError
        When they are missing (None), as for every missing public bound, or out of order or not finite.
    TypeError
        For a string or another object that is not a pair.
    """
    if bounds is None:
        raise ValueError("target_bounds must be a pair (lower, upper) of public bounds on y, got None; they are "
                         "required (known before seeing the data).")
    if isinstance(bounds, str):
        raise TypeError(f"target_bounds must be a pair (lower, upper) of public bounds on y, got {bounds!r}.")
    try:
        lo, hi = bounds
    except (TypeError, ValueError):
        raise TypeError(f"target_bounds must be a pair (lower, upper) of numbers, got {bounds!r}.") from None
    for name, v in (("lower", lo), ("upper", hi)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(float(v)):
            raise ValueError(f"target_bounds: {name} must be a finite number, got {v!r}.")
    lo, hi = float(lo), float(hi)
    if not lo < hi:
        raise ValueError(f"target_bounds: lower must be < upper, got ({lo!r}, {hi!r}).")
    return lo, hi


class DPLinearRegression(RegressorMixin, DPEstimator):
    """Differentially private linear regression (DPpack's ``LinearRegressionDP``).

    Kifer, Smith & Thakurta's objective perturbation (2012) as DPpack applies
    it: features clipped to public bounds and divided by ``max(|lower|,
    |upper|)`` (so ``|x_j| <= 1``), the target clipped to its public bounds and
    mapped into ``[-p, p]``, then the minimiser over ``||theta||^2 <= p`` of

        (1/n) sum_i (y_i - x_i'theta)^2 / 2 + (gamma + Delta)/(2n) ||theta||^2 + b'theta/n,

    ``p`` coefficients (intercept included), ``zeta = 2 p^(3/2)``, ``lambda = p``,
    ``Delta = 2 lambda / epsilon``; ``b`` has density proportional to
    ``exp(-epsilon ||b|| / (2 zeta))`` for ``delta = 0`` (epsilon-DP) and is
    ``N(0, zeta^2 (8 log(2/delta) + 4 epsilon)/epsilon^2 I)`` for ``delta > 0``
    ((epsilon, delta)-DP).

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget in (0, inf] (DPpack's ``eps``). ``inf`` with ``delta = 0`` gives the exact
        constrained minimiser (DPpack still draws, and discards, the noise).
    delta : float, default=0.0
        In [0, 1) (DPpack's ``delta``).
    gamma : float, default=1.0
        Regularisation constant in (0, inf).
    feature_bounds : dict or tuple (lower, upper)
        Public per-feature bounds (DPpack's bounds vectors without their last entry), by column name or
        in column order as in :class:`~pydpowl.estimators.svm.DPSVM`.
    target_bounds : tuple (lower, upper)
        Public bounds on y (the last entries of DPpack's bounds vectors), ``lower < upper``.
    fit_intercept : bool, default=False
        DPpack's ``add.bias``. With it the target is centred at the middle of its bounds (the shift is
        added back to the intercept); without it, only scaled.
    reproduce_dppack : bool, default=False
        Reproduce DPpack 0.2.2 draw for draw (validation and replay; emits PrivacyLeakWarning).
    tol : float or None, default=None
        Certified KKT residual of the ball-constrained solve. None: set from
        the public modulus (:func:`pydpowl.engine.mechanisms.solver_tolerance`,
        so that the smoothing noise stays negligible at every n; 1e-10 with
        ``reproduce_dppack``).
    keep_nonprivate : bool, default=False
        Keep ``minimiser_``, ``noise_`` and ``linear_term_`` (PRIVATE; validation only).
    random_state : None, int, numpy.random.Generator or RRandom, default=None
        Source of the noise. With an :class:`pydpowl.RRandom` the draws are DPpack's: ``rgamma(1, p,
        rate)`` and ``rnorm(p)`` (delta = 0) or ``MASS::mvrnorm``'s ``rnorm(p)`` (delta > 0).
    diagnose_bounds : None, True or float in (0, 1), default=None
        Opt-in, NON-PRIVATE diagnostic (see :class:`~pydpowl.estimators.svm.DPSVM`).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    dppack_coeff_ : ndarray
        DPpack's ``coeff`` (intercept first with ``fit_intercept``).
    scaled_coef_ : ndarray
        The release in the scaled space (inside the ball ``||theta||^2 <= p``).
    target_shift_, target_scale_ : float
        DPpack's ``shift.y`` and ``scale.y``.
    zeta_, lambda_, Delta_ : float
        KST constants (public).
    noise_rate_ : float
        ``delta = 0``: rate of the Gamma law of ``||b||`` (nan for ``delta > 0``).
    epsilon_objective_, epsilon_smoothing_ : float
    release_scale_ : float
        Scale of the noise the release was rounded under (public: the output noise's ``Delta / epsilon`` or the
        smoothing noise's ``2 r / epsilon_s``).
    privacy_spent_ : (float, float)
        The ``(epsilon, delta)`` this fit spent: the ``delta`` given (Gaussian noise; 0 for the l2-Laplace
        noise) plus the floating-point rounding's of the smoothing noise; 1 (no proven guarantee) with
        ``reproduce_dppack=True``.
    n_clipped_features_, n_clipped_targets_ : int
        Entries clipped to the public bounds (NON-PRIVATE diagnostics: not released, never printed by default).
    n_features_in_ : int
    n_iter_ : int
        Solver iterations (a NON-PRIVATE diagnostic).

    Notes
    -----
    The proof needs the exact constrained minimiser. The solver certifies the
    KKT conditions on the ball (``||grad + nu theta|| <= tol`` and the
    complementarity slack, exactly), which places its answer within ``2 tol n /
    (gamma + Delta) + 2^-23 sqrt(p)`` of it
    (:func:`pydpowl.engine.solver.ball_error_radius`); without ``reproduce_dppack``
    a share ``kappa = min(1/2, max(1/64, sqrt(n tol / zeta)))`` of epsilon pays
    for an output noise covering that distance, and the result is projected back
    onto the ball (post-processing). ``tol`` is set from ``gamma / n`` by default
    (:func:`pydpowl.engine.mechanisms.solver_tolerance`), so the smoothing noise
    stays negligible as n grows. DPpack's nloptr
    (MMA, ``xtol_rel = 1e-4``) stops far from the minimiser.
    """

    def __init__(self, *, epsilon: float = 1.0, delta: float = 0.0, gamma: float = 1.0, feature_bounds: Any = None,
                 target_bounds: Any = None, fit_intercept: bool = False, reproduce_dppack: bool = False,
                 tol: Optional[float] = None, keep_nonprivate: bool = False, random_state: Any = None,
                 diagnose_bounds: Any = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.gamma = gamma
        self.feature_bounds = feature_bounds
        self.target_bounds = target_bounds
        self.fit_intercept = fit_intercept
        self.reproduce_dppack = reproduce_dppack
        self.tol = tol
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state
        self.diagnose_bounds = diagnose_bounds

    def _settings(self):
        eps = check_epsilon(self.epsilon)
        gamma = check_positive("gamma", self.gamma)
        tol = None if self.tol is None else check_positive("tol", self.tol)
        for name in ("fit_intercept", "reproduce_dppack", "keep_nonprivate"):
            check_bool(name, getattr(self, name))
        kst_calibration(epsilon=eps, delta=self.delta, p=1)  # checks delta (and epsilon = inf with delta > 0)
        lo_y, hi_y = check_target_bounds(self.target_bounds)
        if self.feature_bounds is None or isinstance(self.feature_bounds, str):
            raise ValueError("feature_bounds must be a pair (lower, upper) of public bounds, one per feature in "
                             "column order, or a dict {column: (lower, upper)}, got "
                             f"feature_bounds={self.feature_bounds!r}.")
        check_diagnose_bounds(self.diagnose_bounds)
        return eps, float(self.delta), gamma, tol, lo_y, hi_y

    def fit(self, X: ArrayLike, y: ArrayLike) -> "DPLinearRegression":
        """Fit privately.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n, p)
        y : array-like of shape (n,)

        Returns
        -------
        self
        """
        names, columns = feature_names_in(X), feature_names_of(X)
        eps, delta, gamma, tol, lo_y, hi_y = self._settings()
        X = check_array("X", X, order="K")  # read column by column: no row-major copy
        n, p = X.shape
        y = check_target_vector("y", y, length=n)
        scaler = FeatureScaler.from_bounds(self.feature_bounds, p, self.fit_intercept, columns=columns)
        diagnose_bounds(X, scaler.lower, scaler.upper, check_diagnose_bounds(self.diagnose_bounds), columns=columns,
                        owner="DPLinearRegression")
        fit = fit_linear_regression(X, y, epsilon=eps, delta=delta, gamma=gamma,
                                    feature_bounds=(scaler.lower, scaler.upper), target_bounds=(lo_y, hi_y),
                                    fit_intercept=bool(self.fit_intercept),
                                    reproduce_dppack=bool(self.reproduce_dppack), tol=tol,
                                    rng=resolve_rng(self.random_state))
        release, full, d = fit.release, fit.coeff, scaler.n_coefficients
        shift, scale = fit.target_shift, fit.target_scale
        if self.fit_intercept:
            self.intercept_, self.coef_ = float(full[0]), full[1:].copy()
        else:
            self.intercept_, self.coef_ = 0.0, full.copy()
        n_clipped_x, n_clipped_y = fit.n_clipped_features, fit.n_clipped_targets
        cal = kst_calibration(epsilon=release.epsilon_objective, delta=delta, p=d)
        self.dppack_coeff_ = full
        self.scaled_coef_ = release.coef
        self.target_shift_, self.target_scale_ = shift, scale
        self.zeta_, self.lambda_, self.Delta_ = cal.zeta, cal.lam, release.Delta
        self.noise_rate_ = release.rate
        self.noise_variance_ = cal.variance
        self.epsilon_objective_ = release.epsilon_objective
        self.epsilon_smoothing_ = release.epsilon_smoothing
        self.n_iter_ = release.n_iter  # a non-private diagnostic
        self.release_grid_ = release.grid  # public: the floating-point-safe grid (None with reproduce_dppack)
        self.release_scale_ = release_scale(release)  # public: the scale of the rounded (smoothing) noise
        self.privacy_spent_ = release_spent(release, reproduce_dppack=self.reproduce_dppack, delta=delta)
        self.n_features_in_ = p
        self.n_samples_ = n
        self.n_clipped_features_ = n_clipped_x
        self.n_clipped_targets_ = n_clipped_y
        self.scaler_ = scaler
        if self.keep_nonprivate:  # PRIVATE: validation only
            self.minimiser_ = release.minimiser.copy()
            self.noise_ = release.noise.copy()
            self.linear_term_ = release.linear_term.copy()
        store_feature_names(self, names)
        return self

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """``X coef_ + intercept_`` (DPpack's ``predict``; new features are not clipped).

        Fitted on a DataFrame, X must have the same column names in the same order (scikit-learn's rule).
        """
        X = check_prediction_input(self, X, feature_names=True)
        return X @ self.coef_ + self.intercept_

    def prediction_range(self) -> Tuple[float, float]:
        """Range of :meth:`predict` on features inside their bounds (public: the release lies in the ball).

        ``|x_s'theta| <= ||x_s|| ||theta|| <= p`` in the scaled space, so predictions lie in
        ``shift -+ p * scale``.
        """
        check_prediction_input(self, np.zeros((1, self.n_features_in_)))
        d = self.scaled_coef_.shape[0]
        return self.target_shift_ - d * self.target_scale_, self.target_shift_ + d * self.target_scale_
