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
from ..engine.losses import MarginLoss, get_loss, loss_lipschitz
from ..engine.mechanisms import floating_point_delta
from ..engine.release import check_noise_scale, release_output_perturbation, warn_reproduce_dppack
from ..engine.solver import DEFAULT_TOL
from .chunked import is_chunked
from .summary import FitSummary

__all__ = ["DPWeightedERM", "DEFAULT_TOL", "check_erm_inputs", "check_noise_scale", "release_notes"]

#: slack on ||x_i|| <= 1 for rounding in scaled data
_NORM_SLACK = 1e-12
#: default certified gradient-norm tolerance of every fit (it enters Delta as 2 n tol / gamma)


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


def release_notes(estimator: Any) -> tuple:
    """Summary notes on how the released numbers were made floating-point safe (or not)."""
    grid = getattr(estimator, "release_grid_", None)
    if getattr(estimator, "reproduce_dppack", False) and math.isfinite(float(estimator.epsilon)):
        return ("reproduce_dppack=True: full-precision release, not floating-point safe (validation only)",)
    if grid is None:
        return ()
    delta = floating_point_delta(epsilon=float(estimator.epsilon), dim=len(estimator._released()),
                                 grid=grid, noise_scale=estimator.sensitivity_ / float(estimator.epsilon))
    return (f"released values are the exact sum rounded to multiples of 2^{int(math.log2(grid))} in the noise "
            f"space (floating-point safe: (epsilon, {delta:.1e})-DP under the sampler model of "
            "docs/privacy_audit.md)",)


class DPWeightedERM(DPEstimator):
    """Differentially private weighted ERM by output perturbation (Algorithm 1).

    Minimises, exactly (certified gradient norm <= ``tol``),

        F(theta) = (1/n) sum_i w_i l(y_i x_i'theta) + (gamma / (2n)) ||theta||^2

    over rows with ``||x_i|| <= 1``, labels ``y_i`` in {-1, 1} and weights
    ``w_i`` in [0, W], then releases ``theta_hat + b`` with ``||b||`` ~
    Gamma(shape=d, rate=epsilon/Delta) and a uniform direction,
    ``Delta = (L (C + 2W) + 2 n tol) / gamma``, rounded (the exact real sum) to a
    power-of-two grid below the noise scale so that its floating-point bits
    reveal nothing (:func:`pydpowl.engine.mechanisms.round_release`).

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
        Margin loss. Built-in losses have ``L = 1``; a
        :class:`~pydpowl.engine.losses.CustomLoss` declares ``lipschitz=L``, which
        scales Delta (the guarantee rests on the declaration).
    huber_h : float, default=0.5
        Smoothing parameter h of the Huber hinge.
    C : float, default=0.0
        Public bound on the total change of the other records' weights when one
        record is replaced (0 for observed or externally estimated weights; see
        :mod:`pydpowl.estimators.propensity`).
    tol : float, default=1e-10
        Gradient-norm tolerance the solver must certify before anything is
        released. A certified answer lies within ``n tol / gamma`` of the exact
        minimiser, so Delta includes ``2 n tol / gamma`` (negligible at the default).
    reproduce_dppack : bool, default=False
        Reproduce DPpack's arithmetic exactly: a full-precision release and
        DPpack's noise rate ``gamma epsilon / (C + 2W)`` without the solver
        tolerance term. NOT floating-point safe and Delta is understated by
        ``2 n tol / gamma``: for validation against DPpack only (emits
        :class:`PrivacyLeakWarning`).
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
        Delta = (L (C + 2W) + 2 n tol) / gamma, a function of public settings only
        (without the tolerance term when ``reproduce_dppack=True``).
    release_grid_ : float or None
        The power-of-two grid of ``coef_`` (None for ``epsilon = inf`` or
        ``reproduce_dppack=True``: then nothing was rounded).
    n_features_in_ : int
    feature_names_in_ : list of str
        Only when X was a DataFrame.
    n_iter_ : int
        Newton iterations (a data-dependent diagnostic, not part of the release).

    Notes
    -----
    Guarantee: ``epsilon``-differential privacy of the real-valued mechanism for
    neighbouring datasets that differ in one record (replacement; n is public),
    provided W, C, the loss (and its declared L) and gamma are fixed before
    seeing the data; the floating-point release is ``(epsilon, delta)``-DP with
    the tiny ``delta`` of :func:`pydpowl.engine.mechanisms.floating_point_delta`
    (shown by :meth:`summary`). Only ``coef_`` is released.
    A fitted estimator is pickled with ``random_state=None``: the seed or
    generator would regenerate the noise.
    """

    def __init__(self, *, epsilon: float = 1.0, gamma: float = 1.0, weights_upper_bound: float = 1.0,
                 loss: Union[str, MarginLoss] = "huber", huber_h: float = 0.5, C: float = 0.0,
                 tol: float = DEFAULT_TOL, reproduce_dppack: bool = False, keep_nonprivate: bool = False,
                 random_state: Any = None) -> None:
        self.epsilon = epsilon
        self.gamma = gamma
        self.weights_upper_bound = weights_upper_bound
        self.loss = loss
        self.huber_h = huber_h
        self.C = C
        self.tol = tol
        self.reproduce_dppack = reproduce_dppack
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state

    def _validated_settings(self):
        eps = check_epsilon(self.epsilon)
        gamma = check_positive("gamma", self.gamma)
        w_max = check_positive("weights_upper_bound", self.weights_upper_bound)
        loss = get_loss(self.loss, check_positive("huber_h", self.huber_h))
        lip = loss_lipschitz(loss)
        c = self.C
        if isinstance(c, bool) or not isinstance(c, (int, float, np.integer, np.floating)) or not (0 <= float(c) < np.inf):
            raise ValueError(f"C must be in [0, inf), got C={c!r}.")
        tol = check_positive("tol", self.tol)
        check_bool("reproduce_dppack", self.reproduce_dppack)
        check_bool("keep_nonprivate", self.keep_nonprivate)
        check_noise_scale(eps, gamma, w_max, float(c), lipschitz=lip)
        return eps, gamma, w_max, loss, lip, float(c), tol

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
        if self.reproduce_dppack and math.isfinite(float(self.epsilon)):
            warn_reproduce_dppack(type(self).__name__, stacklevel=2)
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
        eps, gamma, w_max, loss, lip, c, tol = self._validated_settings()
        out = release_output_perturbation(X, y, w, epsilon=eps, gamma=gamma, weights_upper_bound=w_max, loss=loss,
                                          C=c, tol=tol, reproduce_dppack=self.reproduce_dppack,
                                          rng=resolve_rng(self.random_state))
        release, delta, grid = out.coef, out.sensitivity, out.grid
        n, d = X.shape
        self.coef_ = release
        self.sensitivity_ = delta
        self.release_grid_ = grid
        self.n_features_in_ = d
        self.n_iter_ = out.n_iter
        self.n_samples_ = n
        self.loss_name_ = loss.name
        if self.keep_nonprivate:
            self.nonprivate_coef_ = out.nonprivate_coef.copy()
            self.noise_ = out.noise
            self.solver_grad_norm_ = out.grad_norm
        return self

    def _released(self) -> NDArray[np.float64]:
        return self.coef_

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
            notes=release_notes(self),
        )
