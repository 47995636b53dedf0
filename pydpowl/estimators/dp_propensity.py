"""A propensity model released with differential privacy (composition instead of Proposition 8).

:class:`DPLogisticPropensity` fits ``P(A = +1 | x)`` by logistic regression on
the features scaled with their public bounds (DPpack's ``svmDP`` scaling:
clip, intercept column, divide by ``max(|lower|, |upper|)`` and ``sqrt(d)``, so
every row has norm at most 1) and releases the coefficients by output
perturbation: this is :class:`pydpowl.DPWeightedERM` with the logistic loss and
unit weights (``W = 1``, ``C = 0``), i.e. the mechanism of Chaudhuri et al.
(2011) and of DPpack's ``LogisticRegressionDP(perturbation.method = "output")``.
It is ``epsilon``-DP with ``Delta = 2 / gamma``.

Why it matters for DP-OWL: once the model is released, each subject's
propensity ``P(A_i | x_i)`` and OWL weight ``B_i / P(A_i | x_i)`` depend only
on that subject's record and on a public model, so a DP-OWL fit with these
weights has weight sensitivity ``C = 0`` and the pipeline is
``(epsilon_propensity + epsilon_fit)``-DP by sequential composition. Fitting
the propensity model non-privately on the same data instead needs
Proposition 8's ``C``, which rests on public constants (``C_B``, ``C_x``,
``M``, ``b_x``) and adds to the sensitivity.

The released linear predictor is clipped to ``[-M, M]`` (``logit_bound``,
counted), so every propensity is at least ``1 / (1 + e^M)``: the public floor
that the value estimate's sensitivity needs.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base import DPEstimator, check_prediction_input, store_feature_names
from .._validation import check_array, check_both_arms, check_diagnose_bounds, check_positive, check_treatment, \
    columns_by_name, diagnose_bounds, feature_names_of, resolve_rng
from ..engine.preprocessing import FeatureScaler
from ..engine.losses import sigmoid
from .propensity import BoundedLogitModel
from .werm import DPWeightedERM

__all__ = ["DPLogisticPropensity", "DEFAULT_LOGIT_BOUND", "default_propensity_gamma"]

#: default M: propensities in [0.1, 0.9], the usual overlap (trimming) rule
DEFAULT_LOGIT_BOUND = math.log(9.0)
#: released coefficients are rounded to this grid in the scaled space (as pydpowl.model_io does)
_RELEASE_GRID = 2.0 ** -24


def default_propensity_gamma(n: int, epsilon: float) -> float:
    """Default regularisation ``gamma = sqrt(n / epsilon)`` of the private propensity model.

    The noise moves the released coefficients by about ``2 d / (gamma epsilon)``
    and the ridge term ``gamma / (2n) ||theta||^2`` shrinks them by a factor of
    order ``gamma / n``; ``gamma ~ sqrt(n / epsilon)`` makes both vanish as n grows
    (the same order as the utility bound's optimal gamma). Depends on public n
    and epsilon only.
    """
    return math.sqrt(check_positive("n", n) / check_positive("epsilon", epsilon))


class DPLogisticPropensity(BoundedLogitModel, DPEstimator):
    """Differentially private logistic model of ``P(A = +1 | x)`` (output perturbation).

    Parameters
    ----------
    epsilon : float
        Privacy budget of the release, in (0, inf); ``inf`` (no noise) for validation only.
    feature_bounds : dict or tuple (lower, upper)
        Public per-feature bounds, by column name (a dict ``{column: (lower,
        upper)}``, matched to a DataFrame's columns) or in column order
        (features are clipped to them, counted). Fitted on a DataFrame, the
        model reads later inputs' columns by name.
    gamma : float or None, default=None
        Regularisation constant in DPpack's convention; None uses
        :func:`default_propensity_gamma` with the training size.
    logit_bound : float, default=log(9)
        M: the released linear predictor is clipped to ``[-M, M]`` when the model
        is applied, so propensities lie in ``[1/(1+e^M), e^M/(1+e^M)]``.
    random_state : None, int, numpy.random.Generator, default=None
        Source of the noise (None: operating-system entropy, as real releases need).
    diagnose_bounds : None, True or float in (0, 1), default=None
        Opt-in, NON-PRIVATE diagnostic of bounds given in another column order
        (see :class:`pydpowl.DPOWL`). None reads nothing.

    Attributes
    ----------
    scaled_coef_ : ndarray of shape (p + 1,)
        The release in the scaled space (intercept first), rounded to 2^-24.
    intercept_, coef_ : float, ndarray of shape (p,)
        The release in the original feature space.
    gamma_ : float
        The gamma used.
    sensitivity_ : float
        ``Delta = 2 / gamma``.
    scaler_ : FeatureScaler
    privacy_spent_ : (float, float)
        The ``(epsilon, delta)`` the release spent (``delta``: the floating-point rounding's).
    n_clipped_features_ : int
        Feature entries clipped to their bounds in training (a NON-PRIVATE diagnostic; not released, not
        printed by default).

    Notes
    -----
    ``epsilon``-DP for datasets differing in one subject (replacement; n public).
    To switch to the DPpack-family ``LogisticRegressionDP`` estimator, replace the
    one ``DPWeightedERM(...)`` call in :meth:`fit`.
    """

    def __init__(self, *, epsilon: float, feature_bounds: Any, gamma: Any = None,
                 logit_bound: float = DEFAULT_LOGIT_BOUND, random_state: Any = None,
                 diagnose_bounds: Any = None) -> None:
        self.epsilon = epsilon
        self.feature_bounds = feature_bounds
        self.gamma = gamma
        self.logit_bound = logit_bound
        self.random_state = random_state
        self.diagnose_bounds = diagnose_bounds

    def fit(self, X: ArrayLike, treatment: ArrayLike) -> "DPLogisticPropensity":
        """Fit on ``(X, treatment)`` and keep only the private release."""
        check_positive("logit_bound", self.logit_bound)
        share = check_diagnose_bounds(self.diagnose_bounds)
        names = feature_names_of(X)
        X = check_array("X", X)
        n, p = X.shape
        scaler = FeatureScaler.from_bounds(self.feature_bounds, p, True, columns=names)
        diagnose_bounds(X, scaler.lower, scaler.upper, share, columns=names, owner="DPLogisticPropensity")
        A = check_treatment("treatment", treatment, length=n)
        check_both_arms("treatment", A)
        gamma = default_propensity_gamma(n, self.epsilon) if self.gamma is None else check_positive("gamma",
                                                                                                    self.gamma)
        Z, n_clipped = scaler.transform_checked(X)
        engine = DPWeightedERM(epsilon=self.epsilon, gamma=gamma, weights_upper_bound=1.0, loss="logistic",
                               random_state=resolve_rng(self.random_state))._fit_checked(Z, A, np.ones(n))
        self.scaled_coef_ = np.round(engine.coef_ / _RELEASE_GRID) * _RELEASE_GRID  # floating-point-safe release
        full = scaler.coef_to_original(self.scaled_coef_)
        self.intercept_, self.coef_ = float(full[0]), full[1:]
        self.gamma_ = gamma
        self.sensitivity_ = engine.sensitivity_
        self.privacy_spent_ = engine.privacy_spent_  # the second rounding is post-processing
        self.scaler_ = scaler
        self.n_features_in_ = p
        self.n_clipped_features_ = n_clipped
        store_feature_names(self, names)  # prediction matches a DataFrame's columns by name
        return self

    @property
    def propensity_floor(self) -> float:
        """``1 / (1 + e^M)``: the smallest propensity of either arm the model can give."""
        return float(sigmoid(np.array([-float(self.logit_bound)]))[0])

    def _unclipped_linear_predictor(self, X: ArrayLike) -> NDArray[np.float64]:
        X = columns_by_name(X, getattr(self, "feature_names_in_", None), owner="DPLogisticPropensity")
        Z, _ = self.scaler_.transform_checked(check_prediction_input(self, X))  # clipped to the bounds, scaled
        return Z @ self.scaled_coef_
