"""DP-wERM: weighted ERM with output perturbation (Algorithm 1)."""

from __future__ import annotations

import math
import warnings
from typing import Any, Optional, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base import EstimatorBase, check_is_fitted, check_prediction_input, resolve_rng
from .._validation import (
    check_array,
    check_bool,
    check_epsilon,
    check_labels,
    check_positive,
    check_vector,
    feature_names_of,
)
from ..engine.losses import MarginLoss, get_loss, loss_lipschitz
from ..engine.mechanisms import (
    floating_point_delta,
    noise_rate,
    output_sensitivity,
    release_grid,
    round_release,
    sample_output_noise,
)
from ..engine.solver import solve_weighted_erm
from ..exceptions import PrivacyLeakWarning
from .summary import FitSummary

__all__ = ["DPWeightedERM", "DEFAULT_TOL", "check_erm_inputs", "check_noise_scale", "state_without_randomness",
           "warn_reproduce_dppack", "release_notes"]

#: slack on ||x_i|| <= 1 for rounding in scaled data
_NORM_SLACK = 1e-12
#: default certified gradient-norm tolerance of every fit (it enters Delta as 2 n tol / gamma)
DEFAULT_TOL = 1e-10


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


def check_noise_scale(epsilon: float, gamma: float, weights_upper_bound: float, C: float, *, lipschitz: float = 1.0,
                      n_samples: int = 0, tol: float = 0.0) -> None:
    """Refuse settings whose sensitivity or noise scale is not a finite positive float.

    Extreme but individually valid settings (``epsilon=1e-320``, ``C=1e308``,
    ``W / gamma`` near the float range) would otherwise release infinite or
    NaN coefficients. Checked before the data are touched (``n_samples=0``) and
    again with the number of rows, which enters Delta through ``2 n tol``.
    """
    delta = (lipschitz * (C + 2.0 * weights_upper_bound) + 2.0 * n_samples * tol) / gamma
    rate = gamma * epsilon / (lipschitz * (C + 2.0 * weights_upper_bound) + 2.0 * n_samples * tol)
    ok = math.isfinite(delta) and delta > 0 and rate > 0 and (rate == math.inf or math.isfinite(1.0 / rate))
    if not ok:
        raise ValueError(
            f"epsilon={epsilon!r}, gamma={gamma!r}, weights_upper_bound={weights_upper_bound!r} and C={C!r} "
            f"(with lipschitz={lipschitz!r}, n={n_samples!r}, tol={tol!r}) give a sensitivity "
            f"Delta = (L (C + 2W) + 2 n tol)/gamma = {delta!r} and noise scale Delta/epsilon = "
            f"{(delta / epsilon if epsilon else math.inf)!r}, which must be finite and > 0; nothing was released."
        )


def warn_reproduce_dppack(stacklevel: int) -> None:
    """The :class:`PrivacyLeakWarning` of a fit with ``reproduce_dppack=True`` (validation only)."""
    warnings.warn(
        "reproduce_dppack=True reproduces DPpack's arithmetic for validation: the release is full precision "
        "(not floating-point safe: its last bits can reveal the data) and Delta omits the solver tolerance "
        "term 2 n tol / gamma. Do not publish it.",
        PrivacyLeakWarning, stacklevel=stacklevel + 1,
    )


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


def state_without_randomness(estimator: Any) -> dict:
    """``__dict__`` for pickling, with ``random_state`` dropped once the estimator is fitted.

    A fitted estimator's source of randomness is as private as its noise: an int
    seed regenerates the noise, and a Generator, whose state has only advanced
    past the noise draws, can be rewound to them (PCG64 ``advance`` accepts
    negative steps). Either way ``coef_ - noise`` is the exact non-private
    solution. The pickle therefore stores ``random_state=None``; the unpickled
    estimator predicts identically, and refitting it uses fresh entropy.
    """
    state = estimator.__dict__.copy()
    if hasattr(estimator, "coef_"):
        state["random_state"] = None
    return state


class DPWeightedERM(EstimatorBase):
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
            warn_reproduce_dppack(stacklevel=2)
        X, y, w = check_erm_inputs(X, y, sample_weight, w_max)
        self._fit_checked(X, y, w)
        if names is not None:
            self.feature_names_in_ = names
        return self

    def _fit_checked(self, X: NDArray[np.float64], y: NDArray[np.float64], w: NDArray[np.float64]) -> "DPWeightedERM":
        """:meth:`fit` for data already validated by :func:`check_erm_inputs` (or built to
        satisfy it, as :class:`pydpowl.DPOWL` does)."""
        eps, gamma, w_max, loss, lip, c, tol = self._validated_settings()
        rng = resolve_rng(self.random_state)
        n, d = X.shape
        tol_in_delta = 0.0 if self.reproduce_dppack else tol  # DPpack's Delta has no tolerance term
        check_noise_scale(eps, gamma, w_max, c, lipschitz=lip, n_samples=n, tol=tol_in_delta)
        delta = output_sensitivity(gamma=gamma, weights_upper_bound=w_max, C=c, lipschitz=lip, n_samples=n,
                                   tol=tol_in_delta)
        grid = None if self.reproduce_dppack else release_grid(sensitivity=delta, epsilon=eps)
        reach = n * (w_max * lip + tol) / gamma  # public bound on |theta_hat_k|: gamma theta = -sum w_i y_i l' z_i
        if grid is not None and not reach < grid * 2.0 ** 49:
            raise ValueError(
                f"the solution may reach n (W L + tol)/gamma = {reach:.3g}, beyond 2^49 times the release grid "
                f"{grid:.3g} (Delta/epsilon = {delta / eps:.3g}): no floating-point-safe rounding exists at that "
                "scale; nothing was released (raise epsilon's noise scale or lower n W / gamma)."
            )
        result = solve_weighted_erm(X, y, w, gamma=gamma, loss=loss, tol=tol)
        rate = noise_rate(epsilon=eps, gamma=gamma, weights_upper_bound=w_max, C=c, lipschitz=lip, n_samples=n,
                          tol=tol_in_delta)
        noise = sample_output_noise(d, rate, rng=rng)
        release = result.x + noise
        if np.all(np.isfinite(release)) and grid is not None:
            release = round_release(result.x, noise, grid=grid)
        if not np.all(np.isfinite(release)):
            raise ValueError(
                f"the noise for epsilon={eps!r}, gamma={gamma!r}, weights_upper_bound={w_max!r}, C={c!r} overflowed "
                "(its scale is too large for double precision); nothing was released."
            )
        self.coef_ = release
        self.sensitivity_ = delta
        self.release_grid_ = grid
        self.n_features_in_ = d
        self.n_iter_ = result.nit
        self.n_samples_ = n
        self.loss_name_ = loss.name
        if self.keep_nonprivate:
            self.nonprivate_coef_ = result.x.copy()
            self.noise_ = noise
            self.solver_grad_norm_ = result.grad_norm
        return self

    def _released(self) -> NDArray[np.float64]:
        return self.coef_

    def __getstate__(self) -> dict:
        """Pickle state without the source of randomness once fitted (see :func:`state_without_randomness`)."""
        return state_without_randomness(self)

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
