"""DP-wERM: weighted ERM with output perturbation (Algorithm 1) or weighted objective perturbation."""

from __future__ import annotations

import math
from typing import Any, Optional, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from sklearn.base import ClassifierMixin
from sklearn.utils.metaestimators import available_if

from .._base import DPEstimator, check_is_fitted, check_prediction_input, feature_names_in, store_feature_names
from .._validation import (
    check_bool,
    check_choice,
    check_epsilon,
    check_positive,
    check_weight_sensitivity,
    resolve_rng,
)
from ..engine.losses import LogisticLoss, MarginLoss, class_probabilities, get_loss, loss_lipschitz
from ..engine.mechanisms import (
    check_noise_scale,
    floating_point_delta,
    is_r_stream,
    release_output_perturbation,
    warn_reproduce_dppack,
)
from ..engine.solver import DEFAULT_TOL
from ..privacy.accountant import rounded_release_spent
from .inputs import ERMData, check_erm_inputs, clip_row_norms
from .summary import FitSummary

__all__ = ["DPWeightedERM", "DEFAULT_TOL", "ERMData", "check_erm_inputs", "check_noise_scale", "clip_row_norms",
           "release_notes", "MECHANISMS", "check_mechanism_settings"]

#: the two perturbations of DP-wERM
MECHANISMS = ("output", "objective")

#: the labels of the DP-wERM objective, as ``classes_`` when the caller passes them already coded
PLUS_MINUS = np.array([-1, 1])


def check_mechanism_settings(mechanism: Any, *, C: float, reproduce_dppack: bool) -> str:
    """The mechanism, refused where it has no proof: objective perturbation needs C = 0 (each weight depends
    on its own record only) and has no DPpack counterpart with weights."""
    mechanism = check_choice("mechanism", mechanism, MECHANISMS)
    if mechanism == "objective":
        if C != 0:
            raise ValueError(f"mechanism='objective' needs weights that depend on their own record only (C = 0), "
                             f"got C={C!r}: its proof has no term for the other weights moving; use "
                             "mechanism='output', whose sensitivity includes C.")
        if reproduce_dppack:
            raise ValueError("mechanism='objective' has no DPpack counterpart with weights (DPpack refuses "
                             "objective perturbation with weights); reproduce_dppack=True needs mechanism='output'.")
    return mechanism


def release_notes(estimator: Any) -> tuple:
    """Summary notes on how the released numbers were made floating-point safe (or not)."""
    grid = getattr(estimator, "release_grid_", None)
    if getattr(estimator, "reproduce_dppack", False) and math.isfinite(float(estimator.epsilon)):
        return ("reproduce_dppack=True: full-precision release, not floating-point safe (validation only; "
                "no proven guarantee: privacy_spent_ reports delta = 1)",)
    if grid is None:
        return ()
    delta = estimator.release_delta_
    stream = " (R's samplers: replay)" if getattr(estimator, "sampler_model_", "numpy") == "R" else ""
    return (f"released values are the exact sum rounded to multiples of 2^{int(math.log2(grid))} in the noise "
            f"space (floating-point safe: (epsilon, {delta:.1e})-DP under the sampler model{stream} of "
            "docs/privacy_audit.md)",)


class RoundedReleaseMixin:
    """``release_delta_`` for an estimator with ``release_grid_``, ``release_scale_`` (the scale of the rounded
    noise) and ``sampler_model_`` (:class:`DPWeightedERM`, :class:`pydpowl.DPOWL`)."""

    # Set by the estimators this is mixed into: a constructor parameter and fitted attributes.
    epsilon: Any
    release_grid_: Optional[float]
    release_scale_: float
    sampler_model_: str

    def _released(self) -> NDArray[np.float64]:
        """The released vector (the estimator's own)."""
        raise NotImplementedError

    @property
    def release_delta_(self) -> Optional[float]:
        """The ``delta`` of the rounding under the sampler model of the noise's stream (None without a grid).

        Computed from public fitted attributes on request
        (:func:`pydpowl.engine.mechanisms.floating_point_delta`; not at fit
        time, which keeps scipy out of a bare fit).
        """
        check_is_fitted(self)
        grid = self.release_grid_
        if grid is None:
            return None
        eps = float(getattr(self, "epsilon_rule_", self.epsilon))  # DPOWL with residual weights: the rule's share
        return floating_point_delta(epsilon=eps, dim=len(self._released()), grid=grid,
                                    noise_scale=self.release_scale_, stream=self.sampler_model_)


def _logistic_loss(estimator: Any) -> bool:
    """``predict_proba`` exists only for the logistic loss (the Huber hinge estimates no probabilities)."""
    loss = estimator.loss
    if (isinstance(loss, str) and loss == "logistic") or isinstance(loss, LogisticLoss):
        return True
    raise AttributeError(f"predict_proba is available only with loss='logistic' (a probability model), got "
                         f"loss={loss!r}.")


def mechanism_text(estimator: Any) -> str:
    """How a fitted DP-wERM release was made, for summaries and reports (public settings only)."""
    if getattr(estimator, "mechanism", "output") != "objective":
        return "output perturbation"
    return (f"objective perturbation (ridge lambda = {estimator.ridge_:.6g}, linear term's epsilon = "
            f"{estimator.epsilon_prime_:.6g}, solver smoothing epsilon = {estimator.epsilon_smoothing_:.3g})")


class DPWeightedERM(RoundedReleaseMixin, ClassifierMixin, DPEstimator):
    """Differentially private weighted ERM by output perturbation (Algorithm 1) or objective perturbation.

    Minimises, exactly (certified gradient norm <= ``tol``),

        F(theta) = (1/n) sum_i w_i l(y_i x_i'theta) + (gamma / (2n)) ||theta||^2

    over rows with ``||x_i|| <= 1``, labels ``y_i`` in {-1, 1} (the two classes
    of ``y``, the first coded -1) and weights ``w_i`` in [0, W], then releases
    ``theta_hat + b`` with ``||b||`` ~ Gamma(shape=d, rate=epsilon/Delta) and a
    uniform direction, ``Delta = (L (C + 2W) + 2 n tol) / gamma``, rounded (the
    exact real sum) to a power-of-two grid below the noise scale so that its
    floating-point bits reveal nothing
    (:func:`pydpowl.engine.mechanisms.round_release`). There is no intercept:
    include a column of ones (within the norm bound) for one.

    With ``mechanism="objective"`` it releases instead the minimiser of
    ``G(theta) = sum_i w_i l(y_i x_i'theta) + (lambda/2) ||theta||^2 + b'theta``
    with ``lambda = max(gamma, W c / (e^{epsilon/2} - 1))`` (``c`` the loss's
    curvature bound) and ``||b||`` ~ Gamma(d, rate ``(epsilon - log(1 + W c/lambda)) / (2 W L)``),
    plus a tiny noise covering the solver's certified error
    (:func:`pydpowl.engine.mechanisms.release_weighted_objective`; the proof is in
    docs/privacy_audit.md). It needs ``C = 0``.

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
    clip_rows : bool, default=False
        Divide every row of norm above 1 by its norm before fitting (by
        design; counted in ``n_clipped_rows_``) instead of refusing it. Part of
        the mechanism: a public map applied to each record on its own, so the
        guarantee holds for any input; the fitted rule then depends on the
        direction of such rows only. New rows are not clipped by
        :meth:`decision_function` (the sign, hence :meth:`predict`, is the same).
    tol : float, default=1e-10
        Gradient-norm tolerance the solver must certify before anything is
        released. A certified answer lies within ``n tol / gamma`` of the exact
        minimiser, so Delta includes ``2 n tol / gamma`` (negligible at the default).
    reproduce_dppack : bool, default=False
        Reproduce DPpack's arithmetic exactly: a full-precision release and
        DPpack's noise rate ``gamma epsilon / (C + 2W)`` without the solver
        tolerance term. NOT floating-point safe and Delta is understated by
        ``2 n tol / gamma``: for validation against DPpack only (emits
        :class:`PrivacyLeakWarning`). Output perturbation only.
    mechanism : {"output", "objective"}, default="output"
        ``"output"``: Algorithm 1 (DPpack's weighted ``svmDP``). ``"objective"``:
        weighted objective perturbation (known weights, ``C = 0``; the loss must
        declare a curvature bound).
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
    classes_ : ndarray of shape (2,)
        The two class labels, sorted; ``classes_[0]`` is coded -1 and
        ``classes_[1]`` +1 (labels -1 and 1 code themselves). Dask inputs need
        numeric labels.
    coef_ : ndarray of shape (d,)
        The released (private) coefficients.
    sensitivity_ : float
        Delta = (L (C + 2W) + 2 n tol) / gamma, a function of public settings only
        (without the tolerance term when ``reproduce_dppack=True``); nan for
        objective perturbation, which has no output sensitivity.
    ridge_ : float
        The ridge of the objective that was solved (gamma, or objective
        perturbation's raised ridge lambda; public).
    epsilon_prime_, epsilon_smoothing_, noise_rate_ : float
        Objective perturbation: budget of the linear term, of the solver
        smoothing, and the Gamma rate of ``||b||`` (nan for output perturbation).
    release_scale_ : float
        Scale of the noise the release was rounded under (``Delta / epsilon``;
        for objective perturbation the smoothing noise's ``2 r / epsilon_smoothing``).
    release_grid_ : float or None
        The power-of-two grid of ``coef_`` (None for ``epsilon = inf`` or
        ``reproduce_dppack=True``: then nothing was rounded).
    release_delta_ : float or None
        The ``delta`` of the rounding under the sampler model of the noise's
        stream (:func:`pydpowl.engine.mechanisms.floating_point_delta`; larger
        for an R stream, whose ``rgamma`` uses 32-bit uniforms); None when
        nothing was rounded.
    sampler_model_ : {"numpy", "R"}
        Which sampler model applies (public: the caller chose the stream).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X was a DataFrame whose column names are all strings
        (scikit-learn's rule; prediction then checks the names).
    privacy_spent_ : (float, float)
        The ``(epsilon, delta)`` this fit spent: ``delta`` is that of the
        floating-point-safe rounding
        (:func:`pydpowl.privacy.accountant.rounded_release_spent`); 1 (no
        proven guarantee) with ``reproduce_dppack=True``.
    n_clipped_rows_ : int
        Rows divided by their norm (``clip_rows=True``; else 0). NON-PRIVATE
        diagnostic: computed from the private data, not part of the release,
        never printed by default.
    n_iter_ : int
        Newton iterations. NON-PRIVATE diagnostic (it depends on the data), not
        part of the release, never printed by default.

    Notes
    -----
    Guarantee: ``epsilon``-differential privacy of the real-valued mechanism for
    neighbouring datasets that differ in one record (replacement; n is public),
    provided W, C, the loss (and its declared L) and gamma are fixed before
    seeing the data; the floating-point release is ``(epsilon, delta)``-DP with
    the tiny ``delta`` of :func:`pydpowl.engine.mechanisms.floating_point_delta`
    (shown by :meth:`summary`). Only ``coef_`` is released; ``classes_`` are
    the labels of ``y`` (a property of the data: treat them as public labels,
    such as a study's outcome coding, before publishing a model).
    A fitted estimator is pickled with ``random_state=None``: the seed or
    generator would regenerate the noise.

    scikit-learn's ``check_estimator`` passes every check on
    ``DPWeightedERM(epsilon=inf, clip_rows=True, weights_upper_bound=10)``;
    docs/sklearn.md says what fails with other settings and why.
    """

    def __init__(self, *, epsilon: float = 1.0, gamma: float = 1.0, weights_upper_bound: float = 1.0,
                 loss: Union[str, MarginLoss] = "huber", huber_h: float = 0.5, C: float = 0.0,
                 clip_rows: bool = False, tol: float = DEFAULT_TOL, reproduce_dppack: bool = False,
                 mechanism: str = "output", keep_nonprivate: bool = False, random_state: Any = None) -> None:
        self.epsilon = epsilon
        self.gamma = gamma
        self.weights_upper_bound = weights_upper_bound
        self.loss = loss
        self.huber_h = huber_h
        self.C = C
        self.clip_rows = clip_rows
        self.tol = tol
        self.reproduce_dppack = reproduce_dppack
        self.mechanism = mechanism
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state

    def _validated_settings(self):
        eps = check_epsilon(self.epsilon)
        gamma = check_positive("gamma", self.gamma)
        w_max = check_positive("weights_upper_bound", self.weights_upper_bound)
        loss = get_loss(self.loss, check_positive("huber_h", self.huber_h))
        lip = loss_lipschitz(loss)
        c = check_weight_sensitivity(self.C)
        tol = check_positive("tol", self.tol)
        check_bool("clip_rows", self.clip_rows)
        check_bool("reproduce_dppack", self.reproduce_dppack)
        check_bool("keep_nonprivate", self.keep_nonprivate)
        if check_mechanism_settings(self.mechanism, C=c, reproduce_dppack=self.reproduce_dppack) == "objective":
            from ..engine.mechanisms import loss_curvature  # objective perturbation's module: loaded if used

            loss_curvature(loss)
        check_noise_scale(eps, gamma, w_max, c, lipschitz=lip)
        return eps, gamma, w_max, loss, lip, c, tol

    def _more_tags(self) -> dict:
        return {"binary_only": True}

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: Optional[ArrayLike] = None) -> "DPWeightedERM":
        """Solve exactly, perturb, and keep only the release.

        Parameters
        ----------
        X : array-like of shape (n, d)
            Rows with l2 norm at most 1 (include a column of ones for an
            intercept), or any rows with ``clip_rows=True``. Dask arrays (any
            of the inputs) are fitted chunk by chunk: see docs/dask.md.
        y : array-like of shape (n,)
            Two class labels (e.g. -1 and 1, 0 and 1, or two strings).
        sample_weight : array-like of shape (n,), optional
            Weights in [0, weights_upper_bound] (array, list or pandas Series);
            unit weights by default.

        Returns
        -------
        self
        """
        w_max = self._validated_settings()[2]  # settings are checked before the data
        if self.reproduce_dppack and math.isfinite(float(self.epsilon)):
            warn_reproduce_dppack(type(self).__name__, stacklevel=2)
        names = feature_names_in(X)
        # Dask inputs: checked per chunk (estimators.inputs, estimators.dask_inputs), solved blockwise
        data = check_erm_inputs(X, y, sample_weight, w_max, clip_rows=self.clip_rows)
        self._fit_checked(data.X, data.labels, data.weights, classes=data.classes)
        self.n_clipped_rows_ = data.n_clipped_rows
        store_feature_names(self, names)
        return self

    def _fit_checked(self, X: NDArray[np.float64], y: NDArray[np.float64], w: NDArray[np.float64], *,
                     classes: NDArray[Any] = PLUS_MINUS) -> "DPWeightedERM":
        """:meth:`fit` for data already validated by :func:`check_erm_inputs` (or built to
        satisfy it, as :class:`pydpowl.DPOWL` does), labels coded -1/+1 (``classes`` names them)."""
        eps, gamma, w_max, loss, lip, c, tol = self._validated_settings()
        n, d = X.shape
        if self.mechanism == "objective":
            from ..engine.mechanisms import release_weighted_objective

            obj = release_weighted_objective(X, y, w, epsilon=eps, gamma=gamma, weights_upper_bound=w_max,
                                             loss=loss, tol=tol, rng=resolve_rng(self.random_state))
            cal = obj.calibration
            if cal is None:  # release_weighted_objective always calibrates; a release without it is refused
                raise RuntimeError("the objective-perturbation release came without its calibration.")
            self.coef_, self.sensitivity_, self.release_grid_ = obj.coef, math.nan, obj.grid
            self.ridge_, self.epsilon_prime_ = cal.ridge, cal.epsilon_linear
            self.epsilon_smoothing_, self.noise_rate_ = obj.epsilon_smoothing, cal.rate
            self.release_scale_ = obj.smoothing_scale
            self.n_iter_ = obj.n_iter
            private = (obj.minimiser, obj.noise, math.nan)
        else:
            out = release_output_perturbation(X, y, w, epsilon=eps, gamma=gamma, weights_upper_bound=w_max,
                                              loss=loss, C=c, tol=tol, reproduce_dppack=self.reproduce_dppack,
                                              rng=resolve_rng(self.random_state))
            self.coef_, self.sensitivity_, self.release_grid_ = out.coef, out.sensitivity, out.grid
            self.ridge_, self.epsilon_prime_, self.epsilon_smoothing_, self.noise_rate_ = gamma, math.nan, 0.0, \
                math.nan
            self.release_scale_ = out.sensitivity / eps
            self.n_iter_ = out.n_iter
            private = (out.nonprivate_coef, out.noise, out.grad_norm)
        self.classes_ = np.asarray(classes)
        self.sampler_model_ = "R" if is_r_stream(self.random_state) else "numpy"
        self.n_features_in_ = d
        self.privacy_spent_ = rounded_release_spent(eps, dim=d, grid=self.release_grid_,
                                                    noise_scale=self.release_scale_,
                                                    full_precision=self.reproduce_dppack,
                                                    stream=self.sampler_model_)
        self.n_samples_ = n
        self.loss_name_ = loss.name
        if self.keep_nonprivate:
            self.nonprivate_coef_ = private[0].copy()
            self.noise_ = private[1]
            self.solver_grad_norm_ = private[2]
        return self

    def _released(self) -> NDArray[np.float64]:
        return self.coef_

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """``X @ coef_`` for new rows (> 0: ``classes_[1]``)."""
        X = check_prediction_input(self, X, feature_names=True)
        return X @ self.coef_

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """``classes_[1]`` where the decision function is > 0, else ``classes_[0]`` (a decision of 0 too, as DPpack)."""
        return np.where(self.decision_function(X) > 0, self.classes_[1], self.classes_[0])

    @available_if(_logistic_loss)
    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """``[1 - s, s]`` with ``s = sigmoid(X @ coef_)``, columns in ``classes_`` order (``loss="logistic"`` only).

        A function of the released coefficients and the new rows only
        (post-processing): it costs no privacy budget.
        """
        return class_probabilities(self.decision_function(X))

    @available_if(_logistic_loss)
    def predict_log_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Logarithm of :meth:`predict_proba`, computed stably (``loss="logistic"`` only)."""
        return class_probabilities(self.decision_function(X), log=True)

    def summary(self) -> FitSummary:
        """A frozen summary of the public settings and the release."""
        check_is_fitted(self)
        names = getattr(self, "feature_names_in_", None)
        names = [f"x{j}" for j in range(self.n_features_in_)] if names is None else [str(v) for v in names]
        return FitSummary(
            estimator=type(self).__name__, epsilon=float(self.epsilon), gamma=float(self.gamma),
            weights_upper_bound=float(self.weights_upper_bound), C=float(self.C),
            sensitivity=self.sensitivity_, loss=self.loss_name_, n_samples=self.n_samples_,
            coefficient_names=tuple(names), coefficients=tuple(float(v) for v in self.coef_),
            notes=release_notes(self), privacy_spent=self.privacy_spent_, mechanism=mechanism_text(self),
        )
