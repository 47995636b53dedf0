"""DP-wERM: weighted ERM with output perturbation (Algorithm 1)."""

from __future__ import annotations

import math
from typing import Any, Optional, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base import DPEstimator, check_is_fitted, check_prediction_input
from .._validation import (
    check_array,
    check_bool,
    check_epsilon,
    check_labels,
    check_positive,
    check_vector,
    feature_names_of,
    resolve_rng,
)
from ..engine.losses import MarginLoss, get_loss
from ..engine.mechanisms import noise_rate, output_sensitivity, sample_output_noise
from ..engine.solver import SolverResult, solve_weighted_erm
from .chunked import is_chunked
from .summary import FitSummary

__all__ = ["DPWeightedERM", "check_erm_inputs", "check_noise_scale"]

#: slack on ||x_i|| <= 1 for rounding in scaled data
_NORM_SLACK = 1e-12


def check_erm_inputs(X: ArrayLike, y: ArrayLike, sample_weight: Optional[ArrayLike], weights_upper_bound: float):
    """Validate DP-wERM data: rows with norm <= 1, labels in {-1, 1}, weights in [0, W]."""
    X = check_array("X", X)
    n = X.shape[0]
    y = check_labels("y", y, length=n)
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    too_long = norms > 1.0 + _NORM_SLACK
    if too_long.any():
        raise ValueError(
            f"every row of X must have l2 norm <= 1 (the sensitivity assumes it); {int(too_long.sum())} "
            f"of {n} rows exceed it (first at position {int(np.flatnonzero(too_long)[0])}). Scale the "
            "features with public bounds (pydpowl.FeatureScaler) or use DPOWL, which does."
        )
    if sample_weight is None:
        if weights_upper_bound < 1.0:
            raise ValueError(
                f"sample_weight=None means unit weights, which exceed weights_upper_bound={weights_upper_bound!r}."
            )
        w = np.ones(n)
    else:
        w = check_vector("sample_weight", sample_weight, length=n)
        neg = w < 0
        if neg.any():
            raise ValueError(f"sample_weight must lie in [0, weights_upper_bound={weights_upper_bound!r}]; "
                             f"{int(neg.sum())} of {n} entries are negative.")
        over = w > weights_upper_bound
        if over.any():
            raise ValueError(f"sample_weight must lie in [0, weights_upper_bound={weights_upper_bound!r}]; "
                             f"{int(over.sum())} of {n} entries exceed the bound (clip them to the public bound "
                             "first, or raise the bound).")
    return X, y, w


def check_noise_scale(epsilon: float, gamma: float, weights_upper_bound: float, C: float) -> None:
    """Refuse settings whose sensitivity or noise scale is not a finite positive float.

    Extreme but individually valid settings (``epsilon=1e-320``, ``C=1e308``,
    ``W / gamma`` near the float range) would otherwise release infinite or
    NaN coefficients. Checked before the data are touched.
    """
    delta = (C + 2.0 * weights_upper_bound) / gamma
    rate = gamma * epsilon / (C + 2.0 * weights_upper_bound)
    ok = math.isfinite(delta) and delta > 0 and rate > 0 and (rate == math.inf or math.isfinite(1.0 / rate))
    if not ok:
        raise ValueError(
            f"epsilon={epsilon!r}, gamma={gamma!r}, weights_upper_bound={weights_upper_bound!r} and C={C!r} give a "
            f"sensitivity Delta = (C + 2W)/gamma = {delta!r} and noise scale Delta/epsilon = "
            f"{(delta / epsilon if epsilon else math.inf)!r}, which must be finite and > 0; nothing was released."
        )


class DPWeightedERM(DPEstimator):
    """Differentially private weighted ERM by output perturbation (Algorithm 1).

    Minimises, exactly (certified gradient norm <= ``tol``),

        F(theta) = (1/n) sum_i w_i l(y_i x_i'theta) + (gamma / (2n)) ||theta||^2

    over rows with ``||x_i|| <= 1``, labels ``y_i`` in {-1, 1} and weights
    ``w_i`` in [0, W], then releases ``theta_hat + b`` with ``||b||`` ~
    Gamma(shape=d, rate=epsilon/Delta) and a uniform direction,
    ``Delta = (C + 2W) / gamma``.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget in (0, inf]; ``inf`` releases the exact minimiser (no privacy).
    gamma : float, default=1.0
        Regularisation constant in (0, inf), DPpack's convention (the paper's
        Lambda is ``gamma / n``).
    weights_upper_bound : float, default=1.0
        Public bound W on the weights, in (0, inf).
    loss : {"huber", "logistic"} or MarginLoss, default="huber"
        Margin loss; user losses are checked for ``|l'| <= 1``.
    huber_h : float, default=0.5
        Smoothing parameter h of the Huber hinge.
    C : float, default=0.0
        Public bound on the total change of the other records' weights when one
        record is replaced (0 for observed or externally estimated weights; see
        :mod:`pydpowl.estimators.propensity`).
    tol : float, default=1e-10
        Gradient-norm tolerance the solver must certify before anything is released.
    keep_nonprivate : bool, default=False
        Keep ``nonprivate_coef_`` and ``noise_``. They are PRIVATE (the exact
        minimiser, and the noise that hides it): use only for validation.
    random_state : None, int, numpy.random.Generator or RRandom, default=None
        Source of the noise. None uses fresh operating-system entropy, as real
        releases must; seeds are for reproducing research results and tests.
        An :class:`pydpowl.RRandom` draws ``rgamma(1, d, rate)`` then ``rnorm(d)``
        as DPpack does after ``set.seed``.

    Attributes
    ----------
    coef_ : ndarray of shape (d,)
        The released (private) coefficients.
    sensitivity_ : float
        Delta, a function of public settings only.
    n_features_in_ : int
    feature_names_in_ : list of str
        Only when X was a DataFrame.
    n_iter_ : int
        Newton iterations (a data-dependent diagnostic, not part of the release).

    Notes
    -----
    Guarantee: ``epsilon``-differential privacy for neighbouring datasets that
    differ in one record (replacement; n is public), provided W, C, the loss
    and gamma are fixed before seeing the data. Only ``coef_`` is released.
    A fitted estimator is pickled with ``random_state=None``: the seed or
    generator would regenerate the noise.
    """

    def __init__(self, *, epsilon: float = 1.0, gamma: float = 1.0, weights_upper_bound: float = 1.0,
                 loss: Union[str, MarginLoss] = "huber", huber_h: float = 0.5, C: float = 0.0,
                 tol: float = 1e-10, keep_nonprivate: bool = False, random_state: Any = None) -> None:
        self.epsilon = epsilon
        self.gamma = gamma
        self.weights_upper_bound = weights_upper_bound
        self.loss = loss
        self.huber_h = huber_h
        self.C = C
        self.tol = tol
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state

    def _validated_settings(self):
        eps = check_epsilon(self.epsilon)
        gamma = check_positive("gamma", self.gamma)
        w_max = check_positive("weights_upper_bound", self.weights_upper_bound)
        loss = get_loss(self.loss, check_positive("huber_h", self.huber_h))
        c = self.C
        if isinstance(c, bool) or not isinstance(c, (int, float, np.integer, np.floating)) or not (0 <= float(c) < np.inf):
            raise ValueError(f"C must be in [0, inf), got C={c!r}.")
        tol = check_positive("tol", self.tol)
        check_bool("keep_nonprivate", self.keep_nonprivate)
        check_noise_scale(eps, gamma, w_max, float(c))
        return eps, gamma, w_max, loss, float(c), tol

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: Optional[ArrayLike] = None) -> "DPWeightedERM":
        """Solve exactly, perturb, and keep only the release.

        Parameters
        ----------
        X : array-like of shape (n, d)
            Rows with l2 norm at most 1 (include a column of ones for an intercept).
            Dask arrays (any of the inputs) are fitted chunk by chunk: see docs/dask.md.
        y : array-like of shape (n,)
            Labels in {-1, 1}.
        sample_weight : array-like of shape (n,), optional
            Weights in [0, weights_upper_bound]; unit weights by default.

        Returns
        -------
        self
        """
        names = feature_names_of(X)
        w_max = self._validated_settings()[2]  # settings are checked before the data
        check = check_erm_inputs
        if is_chunked(X, y, sample_weight):  # Dask inputs: checked per chunk, solved blockwise (estimators.chunked)
            from .chunked import check_erm_inputs_chunked as check
        X, y, w = check(X, y, sample_weight, w_max)
        self._fit_checked(X, y, w)
        if names is not None:
            self.feature_names_in_ = names
        return self

    def _fit_checked(self, X: NDArray[np.float64], y: NDArray[np.float64], w: NDArray[np.float64]) -> "DPWeightedERM":
        """:meth:`fit` for data already validated by :func:`check_erm_inputs` (or built to
        satisfy it, as :class:`pydpowl.DPOWL` does)."""
        eps, gamma, w_max, loss, c, tol = self._validated_settings()
        rng = resolve_rng(self.random_state)
        result = solve_weighted_erm(X, y, w, gamma=gamma, loss=loss, tol=tol)
        self._set_release(result, X.shape[1], eps=eps, gamma=gamma, w_max=w_max, c=c, rng=rng)
        self.n_samples_ = X.shape[0]
        self.loss_name_ = loss.name
        return self

    def _set_release(self, result: SolverResult, d: int, *, eps, gamma, w_max, c, rng) -> None:
        rate = noise_rate(epsilon=eps, gamma=gamma, weights_upper_bound=w_max, C=c)
        noise = sample_output_noise(d, rate, rng=rng)
        release = result.x + noise
        if not np.all(np.isfinite(release)):
            raise ValueError(
                f"the noise for epsilon={eps!r}, gamma={gamma!r}, weights_upper_bound={w_max!r}, C={c!r} overflowed "
                "(its scale is too large for double precision); nothing was released."
            )
        self.coef_ = release
        self.sensitivity_ = output_sensitivity(gamma=gamma, weights_upper_bound=w_max, C=c)
        self.n_features_in_ = d
        self.n_iter_ = result.nit
        if self.keep_nonprivate:
            self.nonprivate_coef_ = result.x.copy()
            self.noise_ = noise
            self.solver_grad_norm_ = result.grad_norm

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """``X @ coef_`` for new rows."""
        X = check_prediction_input(self, X)
        return X @ self.coef_

    def predict(self, X: ArrayLike) -> NDArray[np.int64]:
        """Labels in {-1, 1}: +1 where the decision function is > 0 (0 maps to -1, as in DPpack)."""
        return np.where(self.decision_function(X) > 0, 1, -1)

    def summary(self) -> FitSummary:
        """A frozen summary of the public settings and the release."""
        check_is_fitted(self)
        names = getattr(self, "feature_names_in_", None) or [f"x{j}" for j in range(self.n_features_in_)]
        return FitSummary(
            estimator=type(self).__name__, epsilon=float(self.epsilon), gamma=float(self.gamma),
            weights_upper_bound=float(self.weights_upper_bound), C=float(self.C),
            sensitivity=self.sensitivity_, loss=self.loss_name_, n_samples=self.n_samples_,
            coefficient_names=tuple(names), coefficients=tuple(float(v) for v in self.coef_),
        )
