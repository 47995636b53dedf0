"""Propensities P(A_i | x_i) for outcome weights, and the weight-sensitivity bound C.

DP-OWL weights are ``w_i = B_i / P(A_i | x_i)``. When one record is replaced,
the minimiser moves by at most ``Delta = (C + 2W) / gamma`` (Theorem 7), where
``C`` bounds the total change of the *other* records' weights:

    sum_{i != j} |w_i(D) - w_i(D')| <= C.

Theorem 7's three options for C:

1. **C = 0** — propensities are known (a randomised trial) or come from a model
   fitted on data independent of D (an external study). The weights of the
   other records do not depend on the replaced one.
2. **C = n W** — no assumption on how the propensities were estimated: each of
   the other weights lies in (0, W], so each changes by at most W
   (:func:`trivial_weight_sensitivity`). Valid but usually far too large.
3. **C from Proposition 8** — propensities from a logistic model fitted on D.
   With public constants C_B (benefit bound), C_x (norm bound of the propensity
   model's design rows), M (bound on the linear predictor) and b_x (lower bound
   on the smallest eigenvalue of the average logistic Hessian), replacing one
   record moves the coefficients by at most ``2 C_x / (n b_x)`` and each weight
   by at most ``H / n`` with ``H = 2 C_B C_x^2 (1 + e^M)^2 / b_x``
   (:func:`proposition8_H`). The total over the other ``n - 1`` weights is at
   most ``(n - 1) H / n``; pydpowl uses ``C = H``, which covers it for every n.
   (``H / n`` is the per-weight bound; the sensitivity needs the total.)

:class:`LogisticPropensity` makes the Proposition-8 constants hold by
construction where it can: C_x is computed from the public feature bounds, the
linear predictor is clipped to [-M, M] (counted), and a ridge penalty
``ridge > 0`` guarantees ``b_x >= ridge``. Without a ridge, b_x must be given
as a public assumption; estimating it from the data emits
:class:`PrivacyLeakWarning`.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any, Optional, Tuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base import DPEstimator, check_is_fitted
from .._validation import check_array, check_both_arms, check_bounds, check_labels, check_positive, check_vector
from ..exceptions import ConvergenceError, PrivacyLeakWarning

__all__ = [
    "LogisticPropensity",
    "proposition8_H",
    "trivial_weight_sensitivity",
    "resolve_propensity",
]


def proposition8_H(*, benefit_bound: float, feature_norm_bound: float, logit_bound: float,
                   hessian_lower_bound: float) -> float:
    """Proposition 8's ``H = 2 C_B C_x^2 (1 + e^M)^2 / b_x``.

    Parameters
    ----------
    benefit_bound : float
        C_B, public upper bound on the (shifted, non-negative) benefits.
    feature_norm_bound : float
        C_x, public bound on the l2 norm of a row of the propensity model's design
        (intercept included).
    logit_bound : float
        M, bound on ``|x'beta|``; propensities then lie in ``[1/(1+e^M), 1 - 1/(1+e^M)]``.
    hessian_lower_bound : float
        b_x, lower bound on the smallest eigenvalue of the average Hessian of the
        logistic negative log-likelihood (plus ridge) around the fit.
    """
    c_b = check_positive("benefit_bound", benefit_bound)
    c_x = check_positive("feature_norm_bound", feature_norm_bound)
    m = check_positive("logit_bound", logit_bound)
    b_x = check_positive("hessian_lower_bound", hessian_lower_bound)
    if m > _MAX_LOGIT_BOUND:
        raise ValueError(f"logit_bound must be in (0, {_MAX_LOGIT_BOUND:g}] (larger values make H overflow), "
                         f"got logit_bound={m!r}.")
    H = 2.0 * c_b * c_x ** 2 * (1.0 + math.exp(m)) ** 2 / b_x
    if not math.isfinite(H):
        raise ValueError(
            f"benefit_bound={c_b!r}, feature_norm_bound={c_x!r}, logit_bound={m!r} and hessian_lower_bound={b_x!r} "
            "give an infinite H; the weight sensitivity C would be infinite."
        )
    return H


def trivial_weight_sensitivity(n_samples: int, weights_upper_bound: float) -> float:
    """Option 2 of Theorem 7: ``C = n W`` (no assumption on the propensity estimate)."""
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral) or n_samples < 1:
        raise ValueError(f"n_samples must be an integer >= 1, got n_samples={n_samples!r}.")
    return float(n_samples) * check_positive("weights_upper_bound", weights_upper_bound)


#: (1 + e^M)^2 overflows a double above M of about 354.8
_MAX_LOGIT_BOUND = 350.0


def _sigmoid(x: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.exp(-np.logaddexp(0.0, -x))


class LogisticPropensity(DPEstimator):
    """Logistic model of P(A = +1 | x), fitted with statsmodels.

    Parameters
    ----------
    feature_bounds : tuple of array-like
        Public bounds ``(lower, upper)`` of the features; the design is clipped to
        them and C_x is computed from them.
    benefit_bound : float
        C_B, public upper bound on the benefits used in the OWL weights.
    logit_bound : float, default=3.0
        M: the linear predictor is clipped to ``[-M, M]`` (counted in
        ``n_clipped_logits_``), so propensities stay in
        ``[1/(1+e^M), e^M/(1+e^M)]``.
    ridge : float, default=0.0
        Ridge penalty ``ridge/2 ||beta||^2`` added to the average negative
        log-likelihood (statsmodels ``GLM.fit_regularized`` with ``L1_wt=0``,
        polished by Newton steps). ``ridge > 0`` guarantees
        ``b_x >= ridge``.
    hessian_lower_bound : float or "data", optional
        b_x as a public assumption. Defaults to ``ridge`` when ``ridge > 0``.
        With ``ridge = 0`` a model fitted on the private data needs it: a fit
        without it is refused. ``"data"`` estimates it from the private data
        (smallest eigenvalue of the average Hessian at the fit) for
        exploration only, with a :class:`PrivacyLeakWarning`; models with
        ``fitted_on="external"`` do not need it (C = 0).
    fitted_on : {"private", "external"}, default="private"
        "external" when the model is fitted on data independent of the data the
        DP-OWL fit protects (then C = 0).
    """

    def __init__(self, *, feature_bounds, benefit_bound: float, logit_bound: float = 3.0,
                 ridge: float = 0.0, hessian_lower_bound: Optional[float] = None,
                 fitted_on: str = "private") -> None:
        self.feature_bounds = feature_bounds
        self.benefit_bound = benefit_bound
        self.logit_bound = logit_bound
        self.ridge = ridge
        self.hessian_lower_bound = hessian_lower_bound
        self.fitted_on = fitted_on

    def _design(self, X: ArrayLike) -> NDArray[np.float64]:
        X = check_array("X", X)
        lower, upper = self.bounds_
        if X.shape[1] != lower.shape[0]:
            raise ValueError(f"X must have {lower.shape[0]} columns, got {X.shape[1]}.")
        return np.column_stack([np.ones(X.shape[0]), np.clip(X, lower, upper)])

    def fit(self, X: ArrayLike, treatment: ArrayLike) -> "LogisticPropensity":
        """Fit P(A = +1 | x) by (ridge-penalised) maximum likelihood."""
        import statsmodels.api as sm

        X_arr = check_array("X", X)
        self.bounds_ = check_bounds("feature_bounds", self.feature_bounds, X_arr.shape[1])
        check_positive("benefit_bound", self.benefit_bound)
        if check_positive("logit_bound", self.logit_bound) > _MAX_LOGIT_BOUND:
            raise ValueError(f"logit_bound must be in (0, {_MAX_LOGIT_BOUND:g}] (larger values make H overflow), "
                             f"got logit_bound={self.logit_bound!r}.")
        if isinstance(self.ridge, (bool, np.bool_)) or not isinstance(self.ridge, numbers.Real):
            raise TypeError(f"ridge must be a real number, got {type(self.ridge).__name__}.")
        ridge = float(self.ridge)
        if not (0.0 <= ridge < np.inf):
            raise ValueError(f"ridge must be in [0, inf), got ridge={self.ridge!r}.")
        b_x_from_data = isinstance(self.hessian_lower_bound, str) and self.hessian_lower_bound == "data"
        if self.hessian_lower_bound is not None and not b_x_from_data:
            check_positive("hessian_lower_bound", self.hessian_lower_bound)
        if not isinstance(self.fitted_on, str) or self.fitted_on not in ("private", "external"):
            raise ValueError(f"fitted_on must be 'private' or 'external', got fitted_on={self.fitted_on!r}.")
        if self.hessian_lower_bound is None and ridge == 0 and self.fitted_on == "private":
            raise ValueError(
                "LogisticPropensity fitted on the private data needs a public lower bound b_x on the Hessian "
                "for Proposition 8: give ridge > 0 (then b_x = ridge is guaranteed) or hessian_lower_bound=b_x; "
                "hessian_lower_bound='data' estimates it from the data and voids the privacy guarantee."
            )
        A = check_labels("treatment", treatment, length=X_arr.shape[0])
        check_both_arms("treatment", A)
        D = self._design(X_arr)
        a01 = (A + 1.0) / 2.0
        if ridge > 0:
            res = sm.GLM(a01, D, family=sm.families.Binomial()).fit_regularized(alpha=ridge, L1_wt=0.0)
            beta = _polish_ridge_logistic(D, a01, np.asarray(res.params, dtype=np.float64), ridge)
        else:
            beta = _unpenalised_logistic(sm, D, a01)
        self.coef_ = beta
        lower, upper = self.bounds_
        self.feature_norm_bound_ = float(np.sqrt(1.0 + np.sum(np.maximum(np.abs(lower), np.abs(upper)) ** 2)))
        if self.hessian_lower_bound is not None and not b_x_from_data:
            self.hessian_lower_bound_ = check_positive("hessian_lower_bound", self.hessian_lower_bound)
        elif ridge > 0 and not b_x_from_data:
            self.hessian_lower_bound_ = ridge
        elif not b_x_from_data:  # external model: C = 0 and b_x is never used
            self.hessian_lower_bound_ = float("nan")
        else:
            warnings.warn(
                "LogisticPropensity: hessian_lower_bound (b_x) was estimated from the private data; "
                "the differential-privacy guarantee of a DP-OWL fit that uses it is void. Give "
                "b_x as a public assumption or use ridge > 0.",
                PrivacyLeakWarning, stacklevel=2,
            )
            p = _sigmoid(D @ beta)
            Hbar = (D * (p * (1 - p))[:, None]).T @ D / D.shape[0]
            self.hessian_lower_bound_ = float(np.linalg.eigvalsh(Hbar)[0])
        return self

    def linear_predictor(self, X: ArrayLike) -> Tuple[NDArray[np.float64], int]:
        """``x'beta`` clipped to ``[-M, M]`` and the number of clipped rows."""
        check_is_fitted(self)
        eta = self._design(X) @ self.coef_
        m = float(self.logit_bound)
        clipped = np.clip(eta, -m, m)
        return clipped, int(np.count_nonzero(clipped != eta))

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """P(A = +1 | x) with the linear predictor clipped to ``[-M, M]``."""
        return _sigmoid(self.linear_predictor(X)[0])

    def probability_of(self, X: ArrayLike, treatment: ArrayLike) -> Tuple[NDArray[np.float64], int]:
        """P(A_i | x_i) of the treatment each subject received, and the clip count."""
        eta, n_clipped = self.linear_predictor(X)
        A = check_labels("treatment", treatment, length=eta.shape[0])
        return _sigmoid(A * eta), n_clipped

    def weight_sensitivity(self) -> float:
        """The C of Theorem 7 for OWL weights built from this model (0 if fitted externally)."""
        check_is_fitted(self)
        if self.fitted_on == "external":
            return 0.0
        return proposition8_H(
            benefit_bound=self.benefit_bound, feature_norm_bound=self.feature_norm_bound_,
            logit_bound=self.logit_bound, hessian_lower_bound=self.hessian_lower_bound_,
        )


def _unpenalised_logistic(sm: Any, D: NDArray[np.float64], a01: NDArray[np.float64]) -> NDArray[np.float64]:
    """Maximum likelihood by statsmodels' Newton; refuse an ill-posed or unconverged fit."""
    hint = ("the maximum-likelihood estimate does not exist or is not unique (separable arms, or a feature "
            "that is constant or collinear with others); use ridge > 0")
    with warnings.catch_warnings(), np.errstate(over="ignore"):  # exp overflow near separation is expected
        warnings.simplefilter("error", _statsmodels_convergence_warning(sm))
        try:
            res = sm.Logit(a01, D).fit(disp=0, method="newton", maxiter=100)
        except np.linalg.LinAlgError:
            raise ValueError(f"LogisticPropensity: X and treatment: {hint}.") from None
        except Exception as exc:  # PerfectSeparationError, ConvergenceWarning raised as error
            if type(exc).__name__ in ("PerfectSeparationError", "ConvergenceWarning", "HessianInversionWarning"):
                raise ValueError(f"LogisticPropensity: X and treatment: {hint} ({type(exc).__name__}).") from None
            raise
    if not res.mle_retvals.get("converged", False):
        raise ConvergenceError("LogisticPropensity: the maximum-likelihood fit did not converge in 100 Newton steps; "
                               "use ridge > 0.")
    beta = np.asarray(res.params, dtype=np.float64)
    if not np.all(np.isfinite(beta)):
        raise ValueError(f"LogisticPropensity: X and treatment: {hint}.")
    return beta


def _statsmodels_convergence_warning(sm: Any) -> type:
    from statsmodels.tools.sm_exceptions import ConvergenceWarning

    return ConvergenceWarning


def _polish_ridge_logistic(D, a01, beta, ridge, tol=1e-12, max_iter=50):
    """Newton steps on ``mean logloss + ridge/2 ||beta||^2`` until the gradient is below ``tol``."""
    n = D.shape[0]
    for _ in range(max_iter):
        p = _sigmoid(D @ beta)
        g = D.T @ (p - a01) / n + ridge * beta
        if np.linalg.norm(g) <= tol:
            return beta
        H = (D * (p * (1 - p))[:, None]).T @ D / n + ridge * np.eye(D.shape[1])
        beta = beta - np.linalg.solve(H, g)
    raise ConvergenceError(f"ridge logistic propensity model did not converge (gradient norm {np.linalg.norm(g):.1e}).")


def resolve_propensity(propensity: Any, X: NDArray[np.float64], treatment: NDArray[np.float64]
                       ) -> Tuple[NDArray[np.float64], float, int]:
    """P(A_i | x_i) of the received treatment, the weight sensitivity C, and a clip count.

    ``propensity`` may be

    * a scalar ``pi`` in (0, 1): the randomisation probability of arm +1 (so
      P(A_i | x_i) is ``pi`` for A_i = +1 and ``1 - pi`` for A_i = -1); C = 0;
    * an array of length n with P(A_i | x_i) in (0, 1] for the treatment each
      subject received; C = 0 (known or externally estimated propensities);
    * a fitted :class:`LogisticPropensity`; C from Proposition 8, or 0 if the
      model was fitted on external data.
    """
    n = X.shape[0]
    if isinstance(propensity, LogisticPropensity):
        p, n_clipped = propensity.probability_of(X, treatment)
        return p, propensity.weight_sensitivity(), n_clipped
    if isinstance(propensity, (bool, np.bool_)) or isinstance(propensity, str):
        raise TypeError(
            f"propensity must be a number in (0, 1), an array of probabilities or a fitted "
            f"LogisticPropensity, got {type(propensity).__name__}."
        )
    if isinstance(propensity, numbers.Real):
        pi = float(propensity)
        if not (0.0 < pi < 1.0):
            raise ValueError(
                f"propensity (the probability of treatment +1) must be in (0, 1), got propensity={pi!r}."
            )
        return np.where(treatment > 0, pi, 1.0 - pi), 0.0, 0
    p = check_vector("propensity", propensity, length=n)
    bad = (p <= 0) | (p > 1)
    if bad.any():
        raise ValueError(
            f"propensity must be in (0, 1] (P(A_i | x_i) of the received treatment); "
            f"{int(bad.sum())} of {n} entries are outside (first at position {int(np.flatnonzero(bad)[0])})."
        )
    return p, 0.0, 0
