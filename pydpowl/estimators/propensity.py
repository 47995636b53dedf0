"""Propensities P(A_i | x_i) for outcome weights, and the weight-sensitivity bound C.

DP-OWL weights are ``w_i = B_i / P(A_i | x_i)``. When one record is replaced,
the released solution moves by at most ``Delta = (C + 2W + 2 n tol) / gamma``
(Theorem 7 plus the solver's tolerance), where ``C`` bounds the total change of
the *other* OWL rows' weights:

    sum_{i != j} |w_i(D) - w_i(D')| <= C.

Theorem 7's three options for C:

1. **C = 0** — propensities are known (a randomised trial) or come from a model
   fitted on data independent of D (an external study). The weights of the
   other records do not depend on the replaced one. For an array of
   probabilities the analyst states this (``DPOWL(weight_sensitivity=0)``).
2. **C = n W** — no assumption on how the propensities were estimated: each of
   the other weights lies in (0, W], so each changes by at most W
   (:func:`trivial_weight_sensitivity`). Valid but usually far too large.
3. **C from a logistic model fitted on private data** (Proposition 8, tightened).
   The weight of a subject is ``w = B / p`` with ``p = sigmoid(A eta)``,
   ``eta = clip(x'beta, -M, M)`` and ``0 <= B <= C_B`` (benefits above C_B are
   clipped by :class:`~pydpowl.DPOWL`, counted). Then
   ``|w(beta) - w(beta')| <= C_B C_x e^M ||beta - beta'||``. If b_x bounds the
   smallest eigenvalue of the Hessian of the penalised average
   log-likelihood (what ``ridge > 0`` guarantees), replacing one of the
   model's n_p rows moves the exact fit by at most ``2 C_x / (n_p b_x)``, and the
   certified fit (gradient norm <= ``PROPENSITY_TOL``) by at most
   ``(2 C_x / n_p + 2 PROPENSITY_TOL) / b_x``. Each weight therefore moves by at
   most ``h = C_B C_x e^M (2 C_x / n_p + 2 PROPENSITY_TOL) / b_x``
   (:meth:`LogisticPropensity.per_weight_bound`; :func:`hessian_H` is
   ``n_p h`` without the tolerance term). The paper's
   ``H = 2 C_B C_x^2 (1 + e^M)^2 / b_x`` (:func:`proposition8_H`) is the same
   bound when b_x bounds the eigenvalues of the design's second moment
   ``(1/n_p) sum x x'`` instead (``hessian_bound_kind="second_moment"``): then
   the Hessian is at least ``b_x e^M / (1 + e^M)^2`` while the logits stay in
   ``[-M, M]``; with a ridge bound it is about 22 times too large at M = 3.

   Whichever rows the model was fitted on (the OWL rows themselves, or other
   private rows), replacing one subject changes the model at most once, and
   then every one of the n OWL rows' weights by at most h: C = n h
   (:meth:`LogisticPropensity.weight_sensitivity`); the subject's own OWL row,
   if any, is covered by the 2W term.

:class:`LogisticPropensity` makes these constants hold by construction where it
can: C_x is computed from the public feature bounds, the linear predictor is
clipped to [-M, M] (counted), the fit is certified, and ``ridge > 0``
guarantees ``b_x >= ridge``. A larger b_x, or a second-moment bound, is an
assumption about the private data and every neighbour of it: refused unless
``assume_hessian_bound=True``, which emits :class:`PrivacyLeakWarning`.
Estimating b_x from the data (``"data"``) voids the guarantee.
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass
from typing import Any, Optional, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base import DPEstimator, check_is_fitted, n_features_message, store_feature_names
from .._validation import (
    check_array,
    check_bool,
    check_both_arms,
    check_diagnose_bounds,
    check_treatment,
    check_positive,
    check_weight_sensitivity,
    columns_by_name,
    diagnose_bounds,
    feature_names_of,
    resolve_feature_bounds,
    said,
)
from ..engine.losses import sigmoid
from ..exceptions import ConvergenceError, PrivacyLeakWarning
from .propensity_received import received_propensity

__all__ = [
    "LogisticPropensity",
    "proposition8_H",
    "hessian_H",
    "trivial_weight_sensitivity",
    "resolve_propensity",
    "ResolvedPropensity",
    "propensity_constants",
    "PROPENSITY_TOL",
]

#: gradient norm of the penalised average log-likelihood certified by every fit (it enters the weight bound)
PROPENSITY_TOL = 1e-12
#: values of ``hessian_bound_kind``
_BOUND_KINDS = ("hessian", "second_moment")


def _bound_constants(benefit_bound, feature_norm_bound, logit_bound, hessian_lower_bound):
    c_b = check_positive("benefit_bound", benefit_bound)
    c_x = check_positive("feature_norm_bound", feature_norm_bound)
    m = check_positive("logit_bound", logit_bound)
    b_x = check_positive("hessian_lower_bound", hessian_lower_bound)
    if m > _MAX_LOGIT_BOUND:
        raise ValueError(f"logit_bound must be in (0, {_MAX_LOGIT_BOUND:g}] (larger values make H overflow), "
                         f"got logit_bound={m!r}.")
    return c_b, c_x, m, b_x


def _finite_H(H, c_b, c_x, m, b_x):
    if not math.isfinite(H):
        raise ValueError(
            f"benefit_bound={c_b!r}, feature_norm_bound={c_x!r}, logit_bound={m!r} and hessian_lower_bound={b_x!r} "
            "give an infinite H; the weight sensitivity C would be infinite."
        )
    return H


def proposition8_H(*, benefit_bound: float, feature_norm_bound: float, logit_bound: float,
                   hessian_lower_bound: float) -> float:
    """Proposition 8's ``H = 2 C_B C_x^2 (1 + e^M)^2 / b_x`` (b_x: a second-moment eigenvalue bound).

    ``H / n_p`` bounds the change of each weight when b_x bounds the smallest
    eigenvalue of the propensity design's second moment ``(1/n_p) sum x x'``
    and the logits stay in ``[-M, M]`` (the paper's assumptions). When b_x
    bounds the Hessian of the penalised average log-likelihood (as a ridge
    does), :func:`hessian_H` is the bound and this one is ``(1 + e^M)^2 / e^M``
    times too large.

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
        b_x, lower bound on the smallest eigenvalue of the design's second moment.
    """
    c_b, c_x, m, b_x = _bound_constants(benefit_bound, feature_norm_bound, logit_bound, hessian_lower_bound)
    return _finite_H(2.0 * c_b * c_x ** 2 * (1.0 + math.exp(m)) ** 2 / b_x, c_b, c_x, m, b_x)


def hessian_H(*, benefit_bound: float, feature_norm_bound: float, logit_bound: float,
              hessian_lower_bound: float) -> float:
    """The tight ``H = 2 C_B C_x^2 e^M / b_x`` (b_x: a bound on the penalised average Hessian).

    ``H / n_p`` bounds the change of each weight of an exact fit when b_x
    bounds the smallest eigenvalue of the Hessian of the penalised average
    negative log-likelihood for every dataset (``ridge > 0`` guarantees
    ``b_x = ridge``): ``|dw/dbeta| <= C_B C_x e^M`` and
    ``||beta(D) - beta(D')|| <= 2 C_x / (n_p b_x)``. Parameters as in
    :func:`proposition8_H`.
    """
    c_b, c_x, m, b_x = _bound_constants(benefit_bound, feature_norm_bound, logit_bound, hessian_lower_bound)
    return _finite_H(2.0 * c_b * c_x ** 2 * math.exp(m) / b_x, c_b, c_x, m, b_x)


def trivial_weight_sensitivity(n_samples: int, weights_upper_bound: float) -> float:
    """Option 2 of Theorem 7: ``C = n W`` (no assumption on the propensity estimate)."""
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral) or n_samples < 1:
        raise ValueError(f"n_samples must be an integer >= 1, got n_samples={n_samples!r}.")
    return float(n_samples) * check_positive("weights_upper_bound", weights_upper_bound)


#: (1 + e^M)^2 overflows a double above M of about 354.8
_MAX_LOGIT_BOUND = 350.0


class BoundedLogitModel:
    """Probabilities of a logistic propensity model whose linear predictor is clipped to ``[-M, M]``.

    Subclasses set ``logit_bound`` (M) and define ``_unclipped_linear_predictor``;
    the clipping, its count and the probabilities are defined here once.
    """

    logit_bound: float

    def _unclipped_linear_predictor(self, X: ArrayLike) -> NDArray[np.float64]:
        raise NotImplementedError

    def _more_tags(self) -> dict:
        """scikit-learn's tags: fitted on a treatment of two arms, which is required (docs/sklearn.md)."""
        return {"binary_only": True, "requires_y": True}

    def linear_predictor(self, X: ArrayLike) -> Tuple[NDArray[np.float64], int]:
        """The linear predictor clipped to ``[-M, M]`` and the number of clipped rows."""
        check_is_fitted(self)
        eta = self._unclipped_linear_predictor(X)
        m = float(self.logit_bound)
        clipped = np.clip(eta, -m, m)
        return clipped, int(np.count_nonzero(clipped != eta))

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """``P(A = +1 | x)`` in ``[1/(1+e^M), e^M/(1+e^M)]``."""
        return sigmoid(self.linear_predictor(X)[0])

    def probability_of(self, X: ArrayLike, treatment: ArrayLike) -> Tuple[NDArray[np.float64], int]:
        """``P(A_i | x_i)`` of the treatment each subject received, and the number of clipped logits."""
        eta, n_clipped = self.linear_predictor(X)
        A = check_treatment("treatment", treatment, length=eta.shape[0])
        return sigmoid(A * eta), n_clipped


class LogisticPropensity(BoundedLogitModel, DPEstimator):
    """Logistic model of P(A = +1 | x), fitted with statsmodels and certified by Newton steps.

    Parameters
    ----------
    feature_bounds : dict or tuple of array-like
        Public bounds of the features, by column name (a dict ``{column:
        (lower, upper)}``, matched to a DataFrame's columns) or a pair
        ``(lower, upper)`` in column order; the design is clipped to them and
        C_x is computed from them. Fitted on a DataFrame, the model reads the
        columns of later inputs by name.
    benefit_bound : float
        C_B, public upper bound on the benefits used in the OWL weights. When
        the model was fitted on private data, :class:`~pydpowl.DPOWL` clips
        benefits above it (by design, counted in ``n_clipped_benefits_``).
    logit_bound : float, default=3.0
        M: the linear predictor is clipped to ``[-M, M]`` (counted in
        ``n_clipped_logits_``), so propensities stay in
        ``[1/(1+e^M), e^M/(1+e^M)]``.
    ridge : float, default=0.0
        Ridge penalty ``ridge/2 ||beta||^2`` added to the average negative
        log-likelihood (statsmodels ``GLM.fit_regularized`` with ``L1_wt=0``,
        polished by Newton steps to a gradient norm of ``PROPENSITY_TOL``).
        ``ridge > 0`` guarantees ``b_x >= ridge`` for every dataset.
    hessian_lower_bound : float or "data", optional
        b_x. Defaults to ``ridge`` when ``ridge > 0``. A value up to ``ridge`` is
        implied by the ridge and public. A larger value (or any value with
        ``ridge = 0``) is an assumption about the private data and every
        neighbouring dataset: refused unless ``assume_hessian_bound=True``.
        ``"data"`` estimates it from the private data (smallest eigenvalue of
        the penalised average Hessian at the fit) for exploration only, with a
        :class:`PrivacyLeakWarning` (the guarantee is void). Models with
        ``fitted_on="external"`` do not need it (C = 0).
    hessian_bound_kind : {"hessian", "second_moment"}, default="hessian"
        What b_x bounds: the smallest eigenvalue of the Hessian of the
        penalised average log-likelihood (then each weight moves by at most
        ``C_B C_x e^M (2 C_x / n_p + 2 tol) / b_x``), or of the design's second
        moment ``(1/n_p) sum x x'`` (Proposition 8's ``(1 + e^M)^2`` form; always
        an assumption).
    assume_hessian_bound : bool, default=False
        Take a b_x that the ridge does not guarantee as an assumption. The
        privacy guarantee is then conditional on it; a
        :class:`PrivacyLeakWarning` says so.
    fitted_on : {"private", "external"}, default="private"
        "external" when the model is fitted on data independent of the data the
        DP-OWL fit protects (then C = 0).
    diagnose_bounds : None, True or float in (0, 1), default=None
        Opt-in, NON-PRIVATE diagnostic of bounds given in another column order
        (see :class:`pydpowl.DPOWL`). None reads nothing.

    Attributes
    ----------
    coef_ : ndarray of shape (p + 1,)
        Intercept first.
    n_samples_ : int
        n_p, the number of rows the model was fitted on (public under the
        replacement relation); it enters the weight bound.
    n_features_in_ : int
        p, the number of feature columns (public).
    hessian_lower_bound_ : float
        The b_x used (nan for an external model).
    hessian_bound_kind_ : str
    feature_norm_bound_ : float
        C_x.
    """

    # fitted attributes (set by fit)
    coef_: NDArray[np.float64]
    n_samples_: int
    feature_norm_bound_: float
    hessian_lower_bound_: float
    hessian_bound_kind_: str

    def __init__(self, *, feature_bounds, benefit_bound: float, logit_bound: float = 3.0,
                 ridge: float = 0.0, hessian_lower_bound: Optional[float] = None,
                 hessian_bound_kind: str = "hessian", assume_hessian_bound: bool = False,
                 fitted_on: str = "private", diagnose_bounds: Any = None) -> None:
        self.feature_bounds = feature_bounds
        self.benefit_bound = benefit_bound
        self.logit_bound = logit_bound
        self.ridge = ridge
        self.hessian_lower_bound = hessian_lower_bound
        self.hessian_bound_kind = hessian_bound_kind
        self.assume_hessian_bound = assume_hessian_bound
        self.fitted_on = fitted_on
        self.diagnose_bounds = diagnose_bounds

    def _design(self, X: ArrayLike) -> NDArray[np.float64]:
        """``[1, clip(X)]`` for new inputs, a DataFrame's columns matched by name to the fitted ones."""
        X = columns_by_name(X, getattr(self, "feature_names_in_", None), owner="LogisticPropensity")
        return self._design_checked(check_array("X", X))

    def _design_checked(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        lower, upper = self.bounds_
        if X.shape[1] != lower.shape[0]:
            raise ValueError(n_features_message("LogisticPropensity", lower.shape[0], X.shape[1]))
        return np.column_stack([np.ones(X.shape[0]), np.clip(X, lower, upper)])

    def _public_b_x(self, ridge: float) -> Tuple[Optional[float], str]:
        """b_x (None when it comes from the data) and its kind, checked before the data are touched."""
        kind = self.hessian_bound_kind
        if not isinstance(kind, str) or kind not in _BOUND_KINDS:
            raise ValueError(f"hessian_bound_kind must be one of {list(_BOUND_KINDS)}, got "
                             f"hessian_bound_kind={kind!r}.")
        assume = check_bool("assume_hessian_bound", self.assume_hessian_bound)
        given = self.hessian_lower_bound
        if isinstance(given, str) and given == "data":
            if kind != "hessian":
                raise ValueError("hessian_lower_bound='data' estimates the Hessian bound; it needs "
                                 "hessian_bound_kind='hessian'.")
            return None, kind
        if self.fitted_on == "external":
            return (float("nan") if given is None else check_positive("hessian_lower_bound", given)), kind
        if given is None:
            if ridge > 0 and kind == "hessian":
                return ridge, kind
            raise ValueError(
                "LogisticPropensity fitted on the private data needs a public lower bound b_x on the Hessian: "
                "give ridge > 0 (then b_x = ridge is guaranteed), or hessian_lower_bound=b_x with "
                "assume_hessian_bound=True (an assumption about the data); hessian_lower_bound='data' estimates "
                "it from the data and voids the privacy guarantee."
            )
        b_x = check_positive("hessian_lower_bound", given)
        if kind == "hessian" and b_x <= ridge:
            return b_x, kind  # implied by the ridge for every dataset: public
        what = (f"hessian_lower_bound={b_x!r} exceeds ridge={ridge!r}, the only bound on the Hessian of the "
                "penalised average log-likelihood that holds by construction" if kind == "hessian" else
                f"hessian_lower_bound={b_x!r} bounds the second moment of the design, a property of the data")
        if not assume:
            raise ValueError(f"{what}; taking it as public would make C too small for datasets that violate it. "
                             "Use ridge >= hessian_lower_bound, or set assume_hessian_bound=True to make the "
                             "assumption explicit.")
        assumed = ("the smallest eigenvalue of the second moment of the design is at least b_x and every fitted "
                   "logit lies in [-M, M])" if kind == "second_moment" else
                   "the smallest eigenvalue of the penalised average Hessian is at least b_x)")
        warnings.warn(
            f"LogisticPropensity: {what}. With assume_hessian_bound=True the differential-privacy guarantee of "
            "a DP-OWL fit that uses this model is conditional on the assumption that it holds for the private "
            "data and every neighbouring dataset (" + assumed + ".",
            PrivacyLeakWarning, stacklevel=3,
        )
        return b_x, kind

    def fit(self, X: ArrayLike, treatment: ArrayLike) -> "LogisticPropensity":
        """Fit P(A = +1 | x) by (ridge-penalised) maximum likelihood, certified to ``PROPENSITY_TOL``."""
        import statsmodels.api as sm

        names = feature_names_of(X)
        X_arr = check_array("X", X)
        self.bounds_ = resolve_feature_bounds("feature_bounds", self.feature_bounds, X_arr.shape[1], names)
        share = check_diagnose_bounds(self.diagnose_bounds)
        check_positive("benefit_bound", self.benefit_bound)
        if check_positive("logit_bound", self.logit_bound) > _MAX_LOGIT_BOUND:
            raise ValueError(f"logit_bound must be in (0, {_MAX_LOGIT_BOUND:g}] (larger values make H overflow), "
                             f"got logit_bound={self.logit_bound!r}.")
        if isinstance(self.ridge, (bool, np.bool_)) or not isinstance(self.ridge, numbers.Real):
            raise TypeError(f"ridge must be a real number, got {type(self.ridge).__name__}.")
        ridge = float(self.ridge)
        if not (0.0 <= ridge < np.inf):
            raise ValueError(f"ridge must be in [0, inf), got ridge={self.ridge!r}.")
        if not isinstance(self.fitted_on, str) or self.fitted_on not in ("private", "external"):
            raise ValueError(f"fitted_on must be 'private' or 'external', got fitted_on={self.fitted_on!r}.")
        b_x, kind = self._public_b_x(ridge)  # before the data are read
        diagnose_bounds(X_arr, *self.bounds_, share, columns=names, owner="LogisticPropensity")
        A = check_treatment("treatment", treatment, length=X_arr.shape[0])
        check_both_arms("treatment", A)
        D = self._design_checked(X_arr)
        a01 = (A + 1.0) / 2.0
        if ridge > 0:
            res = sm.GLM(a01, D, family=sm.families.Binomial()).fit_regularized(alpha=ridge, L1_wt=0.0)
            start = np.asarray(res.params, dtype=np.float64)
        else:
            start = _unpenalised_logistic(sm, D, a01)
        beta = _polish_ridge_logistic(D, a01, start, ridge)
        self.coef_ = beta
        self.n_samples_ = int(D.shape[0])
        self.n_features_in_ = int(X_arr.shape[1])
        lower, upper = self.bounds_
        self.feature_norm_bound_ = float(np.sqrt(1.0 + np.sum(np.maximum(np.abs(lower), np.abs(upper)) ** 2)))
        self.hessian_bound_kind_ = kind
        if b_x is None:
            warnings.warn(
                "LogisticPropensity: hessian_lower_bound (b_x) was estimated from the private data; "
                "the differential-privacy guarantee of a DP-OWL fit that uses it is void. Give "
                "b_x as a public assumption or use ridge > 0.",
                PrivacyLeakWarning, stacklevel=2,
            )
            p = sigmoid(D @ beta)
            Hbar = (D * (p * (1 - p))[:, None]).T @ D / D.shape[0] + ridge * np.eye(D.shape[1])
            b_x = float(np.linalg.eigvalsh(Hbar)[0])
        self.hessian_lower_bound_ = b_x
        store_feature_names(self, names)  # later inputs' columns are matched by name
        return self

    def _unclipped_linear_predictor(self, X: ArrayLike) -> NDArray[np.float64]:
        return self._design(X) @ self.coef_

    def per_weight_bound(self) -> float:
        """h: the most one OWL weight ``min(B, C_B) / p`` can move when one of the model's rows is replaced.

        ``C_B C_x e^M (2 C_x / n_p + 2 PROPENSITY_TOL) / b_H`` with ``b_H = b_x``
        (``hessian_bound_kind="hessian"``) or ``b_x e^M / (1 + e^M)^2``
        (``"second_moment"``, Proposition 8's form); 0 for an external model.
        """
        check_is_fitted(self)
        if self.fitted_on == "external":
            return 0.0
        c_b, c_x, m, b_x = _bound_constants(self.benefit_bound, self.feature_norm_bound_, self.logit_bound,
                                            self.hessian_lower_bound_)
        if self.hessian_bound_kind_ == "hessian":
            exact = hessian_H(benefit_bound=c_b, feature_norm_bound=c_x, logit_bound=m, hessian_lower_bound=b_x)
            slope = c_b * c_x * math.exp(m) / b_x  # |dw/dbeta| / b_H
        else:
            exact = proposition8_H(benefit_bound=c_b, feature_norm_bound=c_x, logit_bound=m, hessian_lower_bound=b_x)
            slope = c_b * c_x * (1.0 + math.exp(m)) ** 2 / b_x
        return exact / self.n_samples_ + 2.0 * slope * PROPENSITY_TOL

    def weight_sensitivity(self, n_samples: int) -> float:
        """C of Theorem 7 for ``n_samples`` OWL rows weighted with this model: ``n_samples x per_weight_bound()``.

        Valid whether the model was fitted on the OWL rows themselves or on
        other private rows (docs/privacy_audit.md); 0 for an external model.
        """
        n = n_samples
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, numbers.Integral) or n < 1:
            raise ValueError(f"n_samples must be an integer >= 1, got n_samples={n!r}.")
        H = int(n) * self.per_weight_bound()
        if not math.isfinite(H):
            raise ValueError(f"the weight sensitivity C = n h overflows for n_samples={n!r}.")
        return H


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


def _polish_ridge_logistic(D, a01, beta, ridge, tol=PROPENSITY_TOL, max_iter=50):
    """Newton steps on ``mean logloss + ridge/2 ||beta||^2`` until the gradient norm is at most ``tol``
    (``ridge = 0``: the unpenalised likelihood); the certificate enters the weight bound."""
    n = D.shape[0]
    for _ in range(max_iter):
        p = sigmoid(D @ beta)
        g = D.T @ (p - a01) / n + ridge * beta
        if np.linalg.norm(g) <= tol:
            return beta
        H = (D * (p * (1 - p))[:, None]).T @ D / n + ridge * np.eye(D.shape[1])
        beta = beta - np.linalg.solve(H, g)
    raise ConvergenceError(f"logistic propensity model: the fit could not be certified (gradient norm "
                           f"{np.linalg.norm(g):.1e} > {tol:.0e} after {max_iter} Newton steps); use a larger ridge.")


@dataclass(frozen=True)
class ResolvedPropensity:
    """What DP-OWL needs from a propensity argument.

    Attributes
    ----------
    probability : ndarray of shape (n,)
        P(A_i | x_i) of the received treatment.
    C : float
        The weight sensitivity.
    n_clipped_logits : int
    benefit_bound : float or None
        C_B when C relies on it (a model fitted on private data): benefits above
        it must be clipped; None otherwise.
    """

    probability: NDArray[np.float64]
    C: float
    n_clipped_logits: int = 0
    benefit_bound: Optional[float] = None


def _stated_C(weight_sensitivity: Union[None, float, str], n: int, weights_upper_bound: float) -> Optional[float]:
    if weight_sensitivity is None:
        return None
    if isinstance(weight_sensitivity, str):
        if weight_sensitivity == "trivial":
            return trivial_weight_sensitivity(n, weights_upper_bound)
        raise ValueError(f"weight_sensitivity must be a number in [0, inf), 'trivial' or None, got "
                         f"weight_sensitivity={weight_sensitivity!r}.")
    if isinstance(weight_sensitivity, (bool, np.bool_)) or not isinstance(weight_sensitivity, numbers.Real):
        raise TypeError(f"weight_sensitivity must be a number, 'trivial' or None, got "
                        f"{type(weight_sensitivity).__name__}.")
    return check_weight_sensitivity(weight_sensitivity, "weight_sensitivity")


def propensity_constants(propensity: Any, n: int, *, weight_sensitivity: Union[None, float, str] = None,
                         weights_upper_bound: float = 1.0, name: str = "propensity") -> Tuple[float, Optional[float]]:
    """The weight sensitivity C and the benefit bound C relies on, from public settings and n only.

    The rules of :func:`resolve_propensity` without the data (a chunked fit
    computes them once on the client for the total n): a scalar ``P(A = +1)``
    gives C = 0 unless stated; an array needs ``weight_sensitivity`` stated
    (there is no default); a fitted :class:`LogisticPropensity` gives its
    ``C = n h`` and, when fitted on private data, its C_B (benefits above it
    are clipped). Returns ``(C, benefit_bound or None)``.
    """
    stated = _stated_C(weight_sensitivity, n, weights_upper_bound)
    if isinstance(propensity, LogisticPropensity):
        if stated is not None:
            raise ValueError("weight_sensitivity must be None with a LogisticPropensity: C is computed from the "
                             "LogisticPropensity (its constants and n).")
        c_b = float(propensity.benefit_bound) if propensity.fitted_on == "private" else None
        return propensity.weight_sensitivity(n), c_b
    if isinstance(propensity, (bool, np.bool_)) or isinstance(propensity, str):
        raise TypeError(
            f"propensity must be a number in (0, 1), an array of probabilities or a fitted "
            f"LogisticPropensity, got {type(propensity).__name__}."
        )
    if isinstance(propensity, numbers.Real):  # a randomised trial's P(A = +1)
        return (0.0 if stated is None else stated), None
    if stated is None:
        raise ValueError(
            f"{said(name)} was given as an array of P(A_i | x_i): state how it was obtained with weight_sensitivity= "
            "(0 when the probabilities are known or estimated on data independent of these; a bound C on the "
            "total change of the other weights when one subject is replaced, if they were estimated on these "
            "data; 'trivial' for C = n W). Nothing is assumed by default."
        )
    return stated, None


def resolve_propensity(propensity: Any, X: NDArray[np.float64], treatment: NDArray[np.float64], *,
                       weight_sensitivity: Union[None, float, str] = None,
                       weights_upper_bound: float = 1.0) -> ResolvedPropensity:
    """P(A_i | x_i) of the received treatment, the weight sensitivity C, and what C relies on.

    ``propensity`` may be

    * a scalar ``pi`` in (0, 1): the randomisation probability of arm +1 (so
      P(A_i | x_i) is ``pi`` for A_i = +1 and ``1 - pi`` for A_i = -1), a public
      design constant: C = 0 unless ``weight_sensitivity`` states more;
    * an array of length n with P(A_i | x_i) in (0, 1] for the treatment each
      subject received: ``weight_sensitivity`` must say how they were obtained
      (0: known, or estimated on independent data; a bound C when estimated on
      these data; ``"trivial"``: C = n W); there is no default;
    * a fitted :class:`LogisticPropensity`: C = n h from the model (0 if fitted
      externally); ``weight_sensitivity`` must be None.

    C and C_B come from :func:`propensity_constants`.
    """
    n = X.shape[0]
    if isinstance(propensity, LogisticPropensity):
        C, c_b = propensity_constants(propensity, n, weight_sensitivity=weight_sensitivity,
                                      weights_upper_bound=weights_upper_bound)
        p, n_clipped = propensity.probability_of(X, treatment)
        return ResolvedPropensity(p, C, n_clipped, c_b)
    if not isinstance(propensity, (numbers.Real, str)):  # an array: its values are checked first
        p = received_propensity(propensity, treatment)
    C, c_b = propensity_constants(propensity, n, weight_sensitivity=weight_sensitivity,
                                  weights_upper_bound=weights_upper_bound)
    if isinstance(propensity, numbers.Real):
        p = received_propensity(propensity, treatment)
    return ResolvedPropensity(p, C, 0, c_b)
