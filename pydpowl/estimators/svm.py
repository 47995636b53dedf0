"""DPSVM: DPpack's ``svmDP`` (Huber-hinge SVM; objective or output perturbation; linear or Gaussian kernel)."""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base import feature_names_in, store_feature_names
from .._validation import check_array, check_binary_target, check_int, check_positive, feature_names_of, \
    resolve_rng
from ._family import BinaryERMClassifier, check_common_settings, resolve_optional_positive, store_release
from ._family_core import classifier_decision, fit_classifier

__all__ = ["DPSVM", "KERNELS"]

#: kernels of DPpack's svmDP
KERNELS = ("linear", "gaussian")


class DPSVM(BinaryERMClassifier):
    """Differentially private support vector machine (DPpack's ``svmDP``).

    Minimises the Huber-hinge ERM objective of Chaudhuri, Monteleoni & Sarwate
    (2011) in DPpack's scaled space,

        (1/n) sum_i w_i l_h(y_i z_i'theta) + gamma/(2n) ||theta||^2,

    privately by objective perturbation (DPpack's default) or output
    perturbation, with the linear kernel (``z_i`` are the clipped, scaled
    features) or the Gaussian kernel approximated by ``n_components`` random
    Fourier features (``z_i = cos(omega'x_i + phi) / sqrt(D)``).

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget in (0, inf] (DPpack's ``eps``); ``inf`` gives the exact minimiser.
    gamma : float, default=1.0
        Regularisation constant in (0, inf), DPpack's convention (Chaudhuri's Lambda is ``gamma / n``).
    perturbation : {"objective", "output"}, default="objective"
        DPpack's ``perturbation.method`` (its default is objective perturbation).
    kernel : {"linear", "gaussian"}, default="linear"
        DPpack's ``kernel`` ("Gaussian" there).
    n_components : int, optional
        Number D of random Fourier features (DPpack's ``D``); required for the Gaussian kernel.
    kernel_param : float, optional
        ``g`` of the Gaussian kernel ``exp(-g ||x - x'||^2)`` (DPpack's ``kernel.param``); default
        ``1 / n_features`` (intercept not counted), as DPpack.
    huber_h : float, default=0.5
        Huber smoothing ``h`` (DPpack's ``huber.h``); the loss curvature bound is ``c = 1/(2h)``.
    feature_bounds : dict or tuple (lower, upper), optional
        Public per-feature bounds, required for the linear kernel: by column name (a dict ``{column:
        (lower, upper)}``, a pair of pandas Series indexed by column, or a lower/upper DataFrame), matched
        to the columns of a DataFrame X in any order, or a pair ``(lower, upper)`` in column order
        (DPpack's ``lower.bounds``/``upper.bounds``). Features are clipped to them (by design; counted in
        ``n_clipped_features_``). The Gaussian kernel needs none (its features are bounded by
        construction; DPpack ignores the bounds there): leave None.
    fit_intercept : bool, default=False
        DPpack's ``add.bias``: a column of ones first (bounds [1, 1]); it is regularised like every
        coefficient. With the Gaussian kernel the column is an input of the random features.
    weights_upper_bound : float, optional
        Public bound W on ``sample_weight`` (DPpack's ``weights.upper.bound``), required with weights;
        larger weights are clipped to W (by design, as DPpack; counted in ``n_clipped_weights_``).
        Unweighted fits use W = 1 whatever is given here, as DPpack does.
    reproduce_dppack : bool, default=False
        Reproduce DPpack 0.2.2 draw for draw (validation and replay; emits PrivacyLeakWarning): no
        solver-tolerance terms. See Notes.
    tol : float or None, default=None
        Certified gradient-norm tolerance of the solver (scaled space). None:
        for objective perturbation the target is set from the public modulus
        (:func:`pydpowl.engine.mechanisms.solver_tolerance`: the smoothing noise
        stays negligible at every n); for output perturbation 1e-10.
    keep_nonprivate : bool, default=False
        Keep ``minimiser_``, ``noise_`` and ``linear_term_`` (PRIVATE; validation only).
    backend : {"auto", "numpy", "numba"}, default="auto"
        Solver backend (:func:`pydpowl.engine.solver.solve_weighted_erm`): "auto" uses the compiled
        kernels from 100,000 rows; "numba" always (about 0.2 s to load once per process, then 2-4 times
        faster fits: for repeated fits at tens of thousands of rows). The release is the same.
    diagnose_bounds : None, True or float in (0, 1), default=None
        Opt-in, NON-PRIVATE diagnostic of bounds given in another column order (see
        :class:`pydpowl.DPOWL`): warn when more than this share of a column's values lie outside its
        bounds. It depends on the private data; None reads nothing.
    random_state : None, int, numpy.random.Generator or RRandom, default=None
        Source of the random features and the noise; None uses operating-system entropy (real
        releases). With an :class:`pydpowl.RRandom` at R's ``.Random.seed`` the draws are DPpack's:
        the features (``rnorm(d, sd = sqrt(2 g))``, ``runif(1, -pi, pi)``, D times), then
        ``rgamma(1, d, rate)`` and ``rnorm(d)``.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` is the positive class (DPpack's 1).
    coef_ : ndarray
        Released coefficients in the original space: one per feature (linear kernel) or per random
        feature (Gaussian kernel).
    intercept_ : float
        Released intercept (linear kernel with ``fit_intercept``; else 0.0).
    dppack_coeff_ : ndarray
        DPpack's ``coeff``: intercept first (linear kernel with ``fit_intercept``), original space.
    scaled_coef_ : ndarray
        The release in DPpack's scaled space.
    random_features_ : RandomFourierFeatures or None
        The random features (public: drawn independently of the data); ``random_features_.prefilter`` is
        DPpack's ``prefilter``.
    kernel_param_ : float or None
        The kernel parameter used (Gaussian kernel).
    epsilon_objective_, epsilon_smoothing_ : float
        Budget of the perturbation and of the solver smoothing (objective perturbation without
        ``reproduce_dppack``); they add up to ``epsilon``.
    epsilon_prime_, Delta_ : float
        Objective perturbation: budget of the linear term and extra curvature (Algorithm 2).
    noise_rate_ : float
        Gamma rate of the norm of the linear term (objective) or of the output noise (output).
    sensitivity_ : float
        Output perturbation: the l2 sensitivity used (nan for objective perturbation).
    release_scale_ : float
        Scale of the noise the release was rounded under (public: the output noise's ``Delta / epsilon`` or the
        smoothing noise's ``2 r / epsilon_s``).
    privacy_spent_ : (float, float)
        The ``(epsilon, delta)`` this fit spent: ``delta`` is that of the floating-point-safe rounding of the
        output noise (output perturbation) or of the smoothing noise (objective perturbation); 1 (no proven
        guarantee) with ``reproduce_dppack=True``.
    n_clipped_features_, n_clipped_weights_ : int
        Entries clipped to the public bounds. NON-PRIVATE diagnostics computed from the private data: not
        part of the release, never printed by default.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X was a DataFrame whose column names are all strings (scikit-learn's rule: prediction
        then refuses other names or another order).
    n_iter_ : int
        Newton iterations (a NON-PRIVATE diagnostic, as the counts).

    Notes
    -----
    Guarantee: ``epsilon``-differential privacy for datasets differing in one record (replacement;
    ``n`` public), given public bounds, ``gamma``, ``h``, ``W`` and the kernel settings. Objective
    perturbation (Chaudhuri et al. 2011, Algorithm 2, DPpack's constants): ``epsilon' = epsilon -
    log(1 + 2c/gamma + c^2/gamma^2)``, ``||b|| ~ Gamma(d, epsilon'/2)``; when ``epsilon' <= 0`` an extra
    curvature ``Delta = c/(n(e^{epsilon/4} - 1)) - gamma/n`` and ``epsilon' = epsilon/2``. Its proof
    needs the exact minimiser: without ``reproduce_dppack`` a share ``kappa = min(1/2, max(1/64, sqrt(n tol/2)))``
    of epsilon pays for an output noise covering the solver's certified error ``n tol / gamma``, with ``tol``
    set from ``gamma / n`` by default. Output perturbation: rate ``gamma epsilon / (2W + 2 n tol)`` (DPpack:
    ``gamma epsilon / (2W)``). Weights
    are refused with objective perturbation (as DPpack). A fitted model is pickled with
    ``random_state=None``.
    """

    def __init__(self, *, epsilon: float = 1.0, gamma: float = 1.0, perturbation: str = "objective",
                 kernel: str = "linear", n_components: Optional[int] = None, kernel_param: Optional[float] = None,
                 huber_h: float = 0.5, feature_bounds: Any = None, fit_intercept: bool = False,
                 weights_upper_bound: Optional[float] = None, reproduce_dppack: bool = False, tol: Optional[float] = None,
                 keep_nonprivate: bool = False, backend: str = "auto", random_state: Any = None,
                 diagnose_bounds: Any = None) -> None:
        self.epsilon = epsilon
        self.gamma = gamma
        self.perturbation = perturbation
        self.kernel = kernel
        self.n_components = n_components
        self.kernel_param = kernel_param
        self.huber_h = huber_h
        self.feature_bounds = feature_bounds
        self.fit_intercept = fit_intercept
        self.weights_upper_bound = weights_upper_bound
        self.reproduce_dppack = reproduce_dppack
        self.tol = tol
        self.keep_nonprivate = keep_nonprivate
        self.backend = backend
        self.random_state = random_state
        self.diagnose_bounds = diagnose_bounds

    def _settings(self):
        eps, gamma, perturbation, tol = check_common_settings(self)
        h = check_positive("huber_h", self.huber_h)
        if not isinstance(self.kernel, str) or self.kernel.lower() not in KERNELS:
            raise ValueError(f"kernel must be one of {{'linear', 'gaussian'}}, got kernel={self.kernel!r}.")
        kernel = self.kernel.lower()
        D = kp = None
        if kernel == "gaussian":
            if self.n_components is None:
                raise ValueError("n_components (DPpack's D, the number of random Fourier features) is required "
                                 "for kernel='gaussian', got n_components=None.")
            D = check_int("n_components", self.n_components, minimum=1)
            kp = resolve_optional_positive("kernel_param", self.kernel_param)
            if self.feature_bounds is not None:
                raise ValueError("feature_bounds must be None for kernel='gaussian': the random features are "
                                 "bounded by construction and the inputs are not clipped (DPpack ignores its "
                                 f"bounds there), got feature_bounds={self.feature_bounds!r}.")
        W = resolve_optional_positive("weights_upper_bound", self.weights_upper_bound)
        return eps, gamma, perturbation, tol, h, kernel, D, kp, W

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: Optional[ArrayLike] = None) -> "DPSVM":
        """Fit privately.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n, p)
        y : array-like of shape (n,)
            Two distinct labels (DPpack: 0 and 1).
        sample_weight : array-like of shape (n,), optional
            Non-negative weights, output perturbation only (as DPpack); needs ``weights_upper_bound``.

        Returns
        -------
        self
        """
        names, columns = feature_names_in(X), feature_names_of(X)
        self._settings()  # settings are checked before the data
        X = check_array("X", X, order="K")  # read column by column: no row-major copy
        classes, y_pm = check_binary_target("y", y, length=X.shape[0])
        self._fit_checked(X, y_pm, sample_weight, classes, columns=columns)
        store_feature_names(self, names)
        return self

    def _fit_checked(self, X: NDArray[np.float64], y_pm: NDArray[np.float64], sample_weight: Optional[ArrayLike],
                     classes: NDArray[Any], *, columns: Optional[Sequence[str]] = None) -> "DPSVM":
        """:meth:`fit` for a checked float array and labels already in {-1, 1} (``classes`` gives their names);
        ``columns`` are X's column names (bounds given by name are matched to them)."""
        eps, gamma, perturbation, tol, h, kernel, D, kp, W = self._settings()
        n, p = X.shape
        fit = fit_classifier(X, y_pm, sample_weight, model="svm", epsilon=eps, gamma=gamma, perturbation=perturbation,
                             feature_bounds=None if kernel == "gaussian" else self._bounds(X, columns),
                             fit_intercept=bool(self.fit_intercept), kernel=kernel, n_components=D, kernel_param=kp,
                             huber_h=h, weights_upper_bound=W, reproduce_dppack=bool(self.reproduce_dppack), tol=tol,
                             backend=self.backend, rng=resolve_rng(self.random_state))
        self.classes_ = np.asarray(classes)
        self.random_features_ = fit.features
        self.kernel_param_ = None if fit.features is None else fit.features.kernel_param
        self.scaler_ = fit.scaler
        store_release(self, fit.release, fit.scaler, split_intercept=kernel == "linear")
        self.n_features_in_ = p
        self.n_samples_ = n
        self.n_clipped_features_ = fit.n_clipped_features
        self.n_clipped_weights_ = fit.n_clipped_weights
        self.weights_upper_bound_ = fit.weights_upper_bound
        return self

    def _raw_decision(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        if self.random_features_ is None:
            return X @ self.coef_ + self.intercept_
        return classifier_decision(X, self.dppack_coeff_, fit_intercept=bool(self.fit_intercept),
                                   features=self.random_features_)
