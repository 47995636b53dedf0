"""The fit and predict cores of DPpack's ERM family, without scikit-learn.

One place for what a fit of ``svmDP``, ``LogisticRegressionDP`` or
``LinearRegressionDP`` does to the data: the weights (clipped at their public
bound, counted), the random Fourier features (Gaussian kernel), DPpack's
scaling, the labels' mapping and the release
(:mod:`pydpowl.engine.mechanisms.objective`), and the decision values of a
fitted model. The scikit-learn estimators (:class:`~pydpowl.DPSVM`,
:class:`~pydpowl.DPLogisticRegression`, :class:`~pydpowl.DPLinearRegression`)
and the R drop-ins' entry points (:mod:`pydpowl.interop.dppack`) both call these
functions; they import numpy and the engine only, so the R package's worker
never loads scikit-learn, scipy, pandas or statsmodels for them.

The functions take settings already checked by their caller (the estimators
check them under their parameter names, :mod:`pydpowl.interop.dppack` under DPpack's
R argument names) and data already checked (finite float arrays, labels in
{-1, 1}). What depends on the data (weights, clipping) is checked and counted
here; ``names`` says how the caller spells the arguments in messages.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

import numpy as np
from numpy.typing import NDArray

from ..engine.losses import HuberHingeLoss, LogisticLoss, MarginLoss
from ..engine.preprocessing import FeatureScaler, RandomFourierFeatures, clip_columns
from ..engine.problem import QuadraticProblem
from ..engine.mechanisms import warn_reproduce_dppack
from ..engine.mechanisms import (KST_ROUNDING_SHARE, Release, kst_rounding_bound, kst_tolerance, release_cms,
                                 release_kst)
from ..exceptions import ConvergenceError
from .._validation import check_int

__all__ = ["ClassifierFit", "LinearFit", "PYTHON_NAMES", "fit_classifier", "classifier_decision", "weights_for_fit",
           "fit_linear_regression", "linear_decision", "DPPACK_OPTIMIZER_GAMMA", "LOGISTIC_CURVATURE"]

#: the gamma DPpack 0.2.2's LogisticRegressionDP optimiser uses whatever gamma is given: its
#: optimize_coeff passes ``gamma = gamma``, which R finds as the ``gamma <- 1`` that the package's
#: R/StatModels_test.R leaves in the DPpack namespace
DPPACK_OPTIMIZER_GAMMA = 1.0
#: DPpack's bound c on the second derivative of the logistic loss
LOGISTIC_CURVATURE = 0.25

#: how the scikit-learn estimators name the arguments in messages
PYTHON_NAMES: Dict[str, str] = {"weights": "sample_weight", "weights_upper_bound": "weights_upper_bound",
                                "perturbation": "perturbation"}


@dataclass(frozen=True, eq=False)
class ClassifierFit:
    """One private fit of ``svmDP`` or ``LogisticRegressionDP``.

    Attributes
    ----------
    release : Release
        The release in the scaled space (``release.coef``) and its public constants; its
        ``minimiser``, ``noise`` and ``linear_term`` are PRIVATE.
    scaler : FeatureScaler
        DPpack's scaling of the columns the coefficients act on.
    features : RandomFourierFeatures or None
        The random features (Gaussian kernel; public).
    n_clipped_features, n_clipped_weights : int
        Entries clipped to their public bounds (private diagnostics).
    weights_upper_bound : float
        The W used (1 for unweighted fits, as DPpack).
    """

    release: Release
    scaler: FeatureScaler
    features: Optional[RandomFourierFeatures]
    n_clipped_features: int
    n_clipped_weights: int
    weights_upper_bound: float

    @property
    def coeff(self) -> NDArray[np.float64]:
        """DPpack's ``coeff``: the release in the original space (intercept first for the linear kernel)."""
        return self.scaler.coef_to_original(self.release.coef)


def weights_for_fit(sample_weight: Any, n: int, *, perturbation: str, weights_upper_bound: Optional[float],
                    names: Dict[str, str] = PYTHON_NAMES,
                    index_base: int = 0) -> Tuple[NDArray[np.float64], float, int]:
    """``(w, W, n_clipped)``: DPpack's weights rule.

    Without weights: ones and W = 1, whatever bound was given (DPpack). With weights: output
    perturbation only (DPpack refuses objective perturbation), a public bound required, weights
    non-negative and clipped at W (by design, as DPpack; counted).
    """
    from .._validation import check_nonnegative, check_vector

    if sample_weight is None:
        return np.ones(n), 1.0, 0
    wname, bname, pname = names["weights"], names["weights_upper_bound"], names["perturbation"]
    if perturbation != "output":
        raise ValueError(f"{wname} are supported with {pname}='output' only (DPpack: \"Weighted SVM is only "
                         f"implemented for output perturbation\"); got {pname}={perturbation!r}.")
    if weights_upper_bound is None:
        raise ValueError(f"{bname} must be given with {wname} (the public bound W on every weight), got "
                         f"{bname}=None.")
    w = check_vector(wname, sample_weight, length=n, length_of="one per row of X", index_base=index_base)
    check_nonnegative(wname, w, index_base=index_base)
    W = float(weights_upper_bound)
    over = w > W
    return np.where(over, W, w), W, int(np.count_nonzero(over))


def fit_classifier(X: NDArray[np.float64], y_pm: NDArray[np.float64], sample_weight: Any = None, *, model: str,
                   epsilon: float, gamma: float, perturbation: str, feature_bounds: Any = None,
                   fit_intercept: bool = False, kernel: str = "linear", n_components: Optional[int] = None,
                   kernel_param: Optional[float] = None, huber_h: float = 0.5,
                   weights_upper_bound: Optional[float] = None, reproduce_dppack: bool = False,
                   tol: Optional[float] = None, backend: str = "auto", rng: Any, names: Dict[str, str] = PYTHON_NAMES,
                   index_base: int = 0, warn_as: Optional[str] = None) -> ClassifierFit:
    """Fit ``svmDP`` (``model="svm"``) or ``LogisticRegressionDP`` (``model="logistic"``) privately.

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Finite features.
    y_pm : ndarray of shape (n,)
        Labels in {-1, 1} (DPpack's 0 is -1).
    sample_weight : array-like of shape (n,), optional
        svmDP with output perturbation only (:func:`weights_for_fit`).
    model : {"svm", "logistic"}
    epsilon, gamma : float
        Checked settings (epsilon in (0, inf], gamma in (0, inf)).
    perturbation : {"objective", "output"}
    feature_bounds : tuple (lower, upper) of ndarray
        Checked bounds, one per feature: the linear kernel needs them; the Gaussian kernel ignores them
        (as DPpack: its features are bounded by construction).
    fit_intercept : bool
        DPpack's ``add.bias``.
    kernel : {"linear", "gaussian"}
        svmDP only. ``n_components`` (D) is required for the Gaussian kernel; ``kernel_param``
        defaults to ``1 / p``.
    huber_h : float
        svmDP's Huber smoothing (curvature bound ``1/(2h)``).
    weights_upper_bound : float, optional
        Public W (with weights).
    reproduce_dppack : bool
        DPpack's arithmetic and draws (validation only; emits PrivacyLeakWarning, named ``warn_as``).
    tol : float or None
        None: the objective's target from its public modulus, 1e-10 otherwise.
    backend : {"auto", "numpy", "numba"}
    rng : numpy Generator or RRandom
        Resolved generator: with an RRandom the draws are DPpack's (features, then the linear term,
        then the output noise) and the solver-smoothing noise does not advance it.
    names, index_base
        How the caller names the weights arguments (and ``reproduce_dppack``, when it spells it otherwise)
        and counts positions in messages.
    warn_as : str, optional
        The class name in the reproduce_dppack warning (default DPSVM / DPLogisticRegression).
    """
    n, p = X.shape
    loss: MarginLoss
    if model == "svm":
        loss, curvature = HuberHingeLoss(huber_h), 1.0 / (2.0 * huber_h)
    elif model == "logistic":
        loss, curvature = LogisticLoss(), LOGISTIC_CURVATURE
        if sample_weight is not None:
            raise ValueError(f"{names['weights']} are not supported by logistic regression (DPpack's "
                             "LogisticRegressionDP takes none).")
    else:
        raise ValueError(f"model must be 'svm' or 'logistic', got {model!r}.")
    w, W, n_clipped_w = weights_for_fit(sample_weight, n, perturbation=perturbation,
                                        weights_upper_bound=weights_upper_bound, names=names,
                                        index_base=index_base)
    optimizer_gamma = None
    if reproduce_dppack:
        extra = ""
        if model == "logistic":
            optimizer_gamma = DPPACK_OPTIMIZER_GAMMA
            if gamma > DPPACK_OPTIMIZER_GAMMA and epsilon < math.inf:
                extra = (f"With gamma={gamma!r} > 1 DPpack's optimiser regularises with gamma = 1 while the noise "
                         "assumes gamma: the release is less private than claimed.")
        warn_reproduce_dppack(warn_as or ("DPSVM" if model == "svm" else "DPLogisticRegression"), extra=extra,
                              stacklevel=3, argument=names.get("reproduce_dppack", "reproduce_dppack"))
    features = None
    if kernel == "linear":
        scaler = FeatureScaler(lower=np.asarray(feature_bounds[0], dtype=np.float64),
                               upper=np.asarray(feature_bounds[1], dtype=np.float64), fit_intercept=fit_intercept)
        Z, n_clipped_x = scaler.transform_checked(X, backend, loss)
    elif kernel == "gaussian":
        kp = 1.0 / p if kernel_param is None else kernel_param  # DPpack: 1/ncol(X), before the bias column
        Xb = np.column_stack([np.ones(n), X]) if fit_intercept else X
        features = RandomFourierFeatures.sample(Xb.shape[1], check_int("n_components", n_components, minimum=1),
                                                kp, rng=rng)
        scaler = features.scaler()
        Z, _ = scaler.transform_checked(features.transform(Xb))
        n_clipped_x = 0
    else:
        raise ValueError(f"kernel must be 'linear' or 'gaussian', got {kernel!r}.")
    release = release_cms(Z, y_pm, w, loss=loss, gamma=gamma, epsilon=epsilon, perturbation=perturbation,
                          curvature=curvature, weights_upper_bound=W, tol=tol, reproduce_dppack=reproduce_dppack,
                          rng=rng, optimizer_gamma=optimizer_gamma, backend=backend)
    return ClassifierFit(release=release, scaler=scaler, features=features, n_clipped_features=n_clipped_x,
                         n_clipped_weights=n_clipped_w, weights_upper_bound=W)


def classifier_decision(X: NDArray[np.float64], coeff: NDArray[np.float64], *, fit_intercept: bool,
                        features: Optional[RandomFourierFeatures] = None) -> NDArray[np.float64]:
    """DPpack's raw value: ``[1, X] coeff`` (linear kernel) or ``V([1, X]) coeff`` (Gaussian kernel).

    New features are not clipped, as in DPpack. ``coeff`` is DPpack's (original space).
    """
    Xb = np.column_stack([np.ones(X.shape[0]), X]) if fit_intercept else X
    if features is not None:
        Xb = features.transform(Xb)
    return Xb @ coeff


@dataclass(frozen=True, eq=False)
class LinearFit:
    """One private fit of ``LinearRegressionDP``.

    Attributes
    ----------
    release : Release
        In the scaled space (inside the ball ``||theta||^2 <= p``); private parts as in :class:`ClassifierFit`.
    coeff : ndarray
        DPpack's ``coeff`` (intercept first with ``fit_intercept``).
    scaler : FeatureScaler
        The feature bounds (X is divided by ``scaler.column_scale``; no ``sqrt(p)``).
    target_shift, target_scale : float
        DPpack's ``shift.y`` and ``scale.y``.
    n_clipped_features, n_clipped_targets : int
    """

    release: Release
    coeff: NDArray[np.float64]
    scaler: FeatureScaler
    target_shift: float
    target_scale: float
    n_clipped_features: int
    n_clipped_targets: int


def fit_linear_regression(X: NDArray[np.float64], y: NDArray[np.float64], *, epsilon: float, delta: float,
                          gamma: float, feature_bounds: Any, target_bounds: Tuple[float, float],
                          fit_intercept: bool = False, reproduce_dppack: bool = False, tol: Optional[float] = None,
                          rng: Any,
                          warn_as: str = "DPLinearRegression",
                          target_bounds_name: str = "target_bounds", reproduce_name: str = "reproduce_dppack",
                          sample_weight: Optional[NDArray[np.float64]] = None) -> LinearFit:
    """Fit ``LinearRegressionDP`` privately (Kifer, Smith & Thakurta's objective perturbation, DPpack's scaling).

    Clip X to its bounds and y to its bounds, put the intercept column first, divide X by
    ``max(|lower|, |upper|)`` per column and map y into ``[-p, p]`` (centred at the middle of its
    bounds with an intercept), then :func:`~pydpowl.engine.mechanisms.objective.release_kst`, and map the
    coefficients back. Settings and data are checked by the caller.

    ``sample_weight`` (weights in [0, 1], checked by the caller; DPpack has none) weights each squared
    error: the row ``(z_i, t_i)`` becomes ``sqrt(w_i) (z_i, t_i)``, again a point of KST's domain
    (``|z_ij| <= 1``, ``|t_i| <= p``), so the guarantee is unchanged; a weight of 0 is a row of zeros
    (the multi-stage baseline fits the subjects who followed the later rules this way, with n public).
    ``warn_as`` and ``reproduce_name`` name the estimator and the argument in the reproduce_dppack warning
    as the caller's user wrote them (R: ``LinearRegressionDP``, ``reproduce.dppack``).
    """
    n, p = X.shape
    lo_y, hi_y = target_bounds
    scaler = FeatureScaler(lower=np.asarray(feature_bounds[0], dtype=np.float64),
                           upper=np.asarray(feature_bounds[1], dtype=np.float64), fit_intercept=fit_intercept)
    if reproduce_dppack:
        warn_reproduce_dppack(warn_as, stacklevel=3, argument=reproduce_name)
    d = p + int(fit_intercept)
    # DPpack: clip, bias column first, then t(t(X)/scale.X), no sqrt(p); the rows are summed into the
    # squared error's statistics without being formed
    XcT = np.empty((p, n))
    n_clipped_x = clip_columns(X, scaler.lower, scaler.upper, out=XcT)
    t = np.maximum(y, lo_y)
    np.minimum(t, hi_y, out=t)
    n_clipped_y = int(np.count_nonzero(t != y))
    if fit_intercept:  # DPpack: centre at the middle of the bounds, then into [-p, p]
        shift, scale = lo_y + (hi_y - lo_y) / 2.0, (hi_y - lo_y) / (2.0 * d)
    else:
        shift, scale = 0.0, max(abs(lo_y), abs(hi_y)) / d
    if not scale > 0:
        raise ValueError(f"{target_bounds_name}=({lo_y!r}, {hi_y!r}) give a target scale of 0; without an intercept "
                         "max(|lower|, |upper|) must be > 0.")
    t -= shift
    t /= scale
    rows = _scaled_rows_statistics(XcT, t, column_scale=scaler.column_scale, fit_intercept=fit_intercept,
                                   sample_weight=sample_weight)
    try:
        release = release_kst(rows, gamma=gamma, epsilon=epsilon, delta=delta, tol=tol,
                              reproduce_dppack=reproduce_dppack, rng=rng)
    except ConvergenceError as exc:
        tol_used = kst_tolerance(tol, n=n, p=d, gamma=gamma, epsilon=epsilon, reproduce_dppack=reproduce_dppack)
        raise kst_rounding_error(exc, n=n, p=d, gamma=gamma, epsilon=epsilon, tol=tol_used,
                                 estimator=warn_as) from exc
    coeff = release.coef / scaler.column_scale * scale  # DPpack: coeff/scale.X*scale.y, then shift
    if fit_intercept:
        coeff[0] = coeff[0] + shift
    return LinearFit(release=release, coeff=coeff, scaler=scaler, target_shift=shift, target_scale=scale,
                     n_clipped_features=n_clipped_x, n_clipped_targets=n_clipped_y)


def kst_rounding_error(exc: ConvergenceError, *, n: int, p: int, gamma: float, epsilon: float, tol: float,
                       estimator: str) -> ConvergenceError:
    """The solver's failure on KST's objective, explained when epsilon makes it too steep for double precision.

    The KKT residual's rounding (:func:`~pydpowl.engine.mechanisms.objective.kst_rounding_bound`) grows as
    ``1/epsilon``; ``release_kst`` refuses once it reaches ``KST_ROUNDING_SHARE`` of tol, and a fit may fail
    from about half that share. Then the error says that epsilon is too small for the solver and names the
    smallest epsilon at which the rounding is ``KST_ROUNDING_SHARE`` of tol; otherwise the solver's own
    message is returned. Public quantities only.
    """
    ulp = float(np.finfo(np.float64).eps)
    mu = (gamma + 2.0 * p / epsilon) / n
    rounding = kst_rounding_bound(n=n, p=p, gamma=gamma, epsilon=epsilon)
    if not rounding >= 0.5 * KST_ROUNDING_SHARE * tol:
        return exc
    delta_max = n * KST_ROUNDING_SHARE * tol / (ulp * p * math.sqrt(p)) - gamma
    eps = "eps" if estimator == "LinearRegressionDP" else "epsilon"  # DPpack's name from R
    smallest = 2.0 * p / delta_max if delta_max > 0 else math.inf
    if delta_max > 0:  # rounded up to two digits: the epsilon named is one that release_kst accepts
        unit = 10.0 ** (math.floor(math.log10(smallest)) - 1)
        smallest = math.ceil(smallest * (1.0 + 1e-12) / unit) * unit
    advice = (f"Use {eps} >= {smallest:.2g} (where that rounding is a tenth of tol) or more rows"
              if delta_max > 0 else f"No {eps} works with so few rows at this gamma: use more rows or a smaller gamma")
    solver = str(exc).removesuffix("; nothing was released.")
    return ConvergenceError(
        f"{estimator}: {eps}={epsilon!r} is too small for the solver at n={n} rows and p={p} coefficients: the "
        f"perturbation's regulariser Delta = 2 p / {eps} = {2.0 * p / epsilon:.3g} makes the objective's curvature "
        f"mu = (gamma + Delta) / n = {mu:.3g}, and the rounding error of its gradient on the ball ||theta|| <= "
        f"sqrt(p) (about 2^-52 mu p sqrt(p) = {rounding:.2g}) reaches the certificate's tol={tol!r}, so the "
        f"minimiser cannot be certified (the {solver}). {advice}; nothing was released.")


def _scaled_rows_statistics(XcT: NDArray[np.float64], t: NDArray[np.float64], *,
                            column_scale: NDArray[np.float64], fit_intercept: bool,
                            sample_weight: Optional[NDArray[np.float64]] = None) -> QuadraticProblem:
    """The squared error's sufficient statistics of the rows ``z_i = [1, x_i] / column_scale`` (the bias
    column with ``fit_intercept``; ``x_i`` the columns of ``XcT``) and targets ``t``, without forming the rows
    (each squared error weighted by ``sample_weight`` when given)."""
    n = XcT.shape[1]
    wt = t if sample_weight is None else sample_weight * t
    WXcT = XcT if sample_weight is None else XcT * sample_weight
    gram_x, moment_x = np.einsum("ji,ki->jk", WXcT, XcT), np.einsum("ji,i->j", XcT, wt)
    if fit_intercept:
        sums = WXcT.sum(axis=1)
        total = float(n) if sample_weight is None else float(np.sum(sample_weight))
        gram = np.block([[np.full((1, 1), total), sums[None, :]], [sums[:, None], gram_x]])
        moment = np.concatenate([[wt.sum()], moment_x])
    else:
        gram, moment = gram_x, moment_x
    return QuadraticProblem(gram / np.outer(column_scale, column_scale), moment / column_scale, float(t @ wt), n)


def linear_decision(X: NDArray[np.float64], coeff: NDArray[np.float64], *, fit_intercept: bool) -> NDArray[np.float64]:
    """DPpack's ``LinearRegressionDP$predict``: ``[1, X] coeff`` (new features are not clipped)."""
    Xb = np.column_stack([np.ones(X.shape[0]), X]) if fit_intercept else X
    return Xb @ coeff
