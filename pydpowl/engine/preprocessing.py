"""DPpack's feature preprocessing: public-bound scaling and random Fourier features.

:class:`FeatureScaler` (``svmDP`` and ``LogisticRegressionDP``, linear kernel):

1. Clip each feature to its public bounds ``[lower_j, upper_j]`` (by design;
   the number of clipped entries is counted).
2. Prepend an intercept column of ones, with bounds ``[1, 1]``, when requested.
3. Divide each column by ``max(|lower_j|, |upper_j|)``, then every column by
   ``sqrt(d)`` (d columns, intercept included), so every row has norm <= 1.

Coefficients fitted in this scaled space map back to the original space by
dividing by ``scale_j * sqrt(d)``. The operations follow DPpack's order so the
two engines see the same scaled data.

:class:`RandomFourierFeatures` (``svmDP`` with ``kernel = "Gaussian"``): the map
``x -> sqrt(2/D) cos(omega_j'x + phi_j)``, j = 1..D, of Rahimi & Recht (2007),
whose inner products approximate the Gaussian kernel ``exp(-g ||x - x'||^2)``
for ``omega_j ~ N(0, 2g I)`` and ``phi_j ~ U(-pi, pi)``. The features are
bounded by ``sqrt(2/D)`` whatever ``x`` is, so DPpack does not clip ``x``; it
scales the features with the bounds ``+-sqrt(2/D)`` (a :class:`FeatureScaler`
without intercept), which gives rows ``cos(.)/sqrt(D)`` of norm at most 1.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
import math
from typing import Any, Optional, Sequence, Tuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_array, check_int, check_positive, resolve_feature_bounds
from ..exceptions import PrivacyLeakWarning
from .kernels import use_kernels

__all__ = ["FeatureScaler", "RandomFourierFeatures", "bounds_from_data", "clip_columns"]


def clip_columns(X: NDArray[np.float64], lower: NDArray[np.float64], upper: NDArray[np.float64], *,
                 out: NDArray[np.float64]) -> int:
    """Write ``X`` (n, p) clipped to ``[lower, upper]`` column by column into the rows of ``out`` (p, n) and
    return the number of entries changed (clipped by design, counted).

    Column by column: each feature is read once in its own layout (contiguous in column-major ``X``) and
    clipped with its scalar bounds, which is several times faster than a bound broadcast along a short
    last axis; the values are ``np.clip``'s.
    """
    clipped = 0
    for j in range(X.shape[1]):
        column = np.ascontiguousarray(X[:, j])  # a strided column (row-major X) is gathered first: faster
        np.minimum(np.maximum(column, lower[j], out=out[j]), upper[j], out=out[j])
        clipped += int(np.count_nonzero(out[j] != column))
    return clipped


@dataclass(frozen=True)
class FeatureScaler:
    """Public map from original features to DPpack's scaled space.

    Built only from public bounds, so it is safe to keep and to serialise.

    Attributes
    ----------
    lower, upper : ndarray of shape (p,)
        Public feature bounds (without the intercept).
    fit_intercept : bool
        Whether a column of ones is prepended.
    """

    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    fit_intercept: bool = True

    @classmethod
    def from_bounds(cls, bounds: Any, n_features: int, fit_intercept: bool = True,
                    columns: Optional[Sequence[str]] = None, name: str = "feature_bounds") -> "FeatureScaler":
        """Validate public bounds for ``n_features`` features, in the order of X's ``columns``.

        ``bounds`` is a pair ``(lower, upper)`` in column order, or bounds by
        column name (a mapping ``{column: (lower, upper)}``, a pair of pandas
        Series indexed by column, or a lower/upper DataFrame), matched to
        ``columns`` (:func:`pydpowl._validation.resolve_feature_bounds`). ``name`` names them in messages
        (a multi-stage fit's ``feature_bounds[k]``).
        """
        lower, upper = resolve_feature_bounds(name, bounds, n_features, columns)
        return cls(lower=lower, upper=upper, fit_intercept=bool(fit_intercept))

    @property
    def n_features(self) -> int:
        """Number of original features ``p``."""
        return int(self.lower.shape[0])

    @property
    def n_coefficients(self) -> int:
        """Number of coefficients ``d`` (intercept included)."""
        return self.n_features + int(self.fit_intercept)

    @property
    def column_scale(self) -> NDArray[np.float64]:
        """``max(|lower|, |upper|)`` per column, intercept (1) first when present."""
        scale = np.maximum(np.abs(self.lower), np.abs(self.upper))
        return np.concatenate([[1.0], scale]) if self.fit_intercept else scale

    @property
    def dimension_scale(self) -> float:
        """``sqrt(d)``."""
        return float(np.sqrt(self.n_coefficients))

    def clip(self, X: NDArray[np.float64]) -> Tuple[NDArray[np.float64], int]:
        """Clip to the bounds; return the clipped copy and the number of entries changed."""
        clipped = np.minimum(np.maximum(X, self.lower), self.upper)  # np.clip's values, without its overhead
        return clipped, int(np.count_nonzero(clipped != X))

    def transform(self, X: ArrayLike) -> Tuple[NDArray[np.float64], int]:
        """Clip, add the intercept and scale; return ``(Z, n_clipped_entries)``."""
        X = check_array("X", X)
        if X.shape[1] != self.n_features:
            raise ValueError(f"X must have {self.n_features} columns (one per bound), got {X.shape[1]}.")
        return self.transform_checked(X)

    def transform_checked(self, X: NDArray[np.float64], backend: str = "auto",
                          loss: Any = None) -> Tuple[NDArray[np.float64], int]:
        """:meth:`transform` for a finite float64 array already known to have ``p`` columns.

        ``Z`` is written column-major (Fortran order), the layout the solver
        works in, with the same floating-point operations as
        ``(clip(X) / col_scale) / dim_scale``: numpy writes each feature
        clipped into ``Z`` (:func:`clip_columns`) and divides in place.
        Where the solver uses the numba kernels (``backend``, the rule of
        :func:`pydpowl.engine.kernels.use_kernels` for the fit's ``loss``),
        it is one pass of
        :func:`~pydpowl.engine.kernels.feature_scaling.clip_and_scale_rows`,
        bit-identical to the numpy steps.
        """
        n, p = X.shape
        off = int(self.fit_intercept)
        col_scale, dim_scale = self.column_scale, self.dimension_scale
        Z = np.empty((n, p + off), order="F")
        if use_kernels(n, backend, loss):
            from .kernels.feature_scaling import clip_and_scale_rows

            f64 = np.ascontiguousarray
            count = clip_and_scale_rows(f64(X, dtype=np.float64), f64(self.lower, dtype=np.float64),
                                        f64(self.upper, dtype=np.float64), f64(col_scale, dtype=np.float64),
                                        dim_scale, off, Z)
            return Z, int(count)
        if off:
            Z[:, 0] = (1.0 / col_scale[0]) / dim_scale
        features = Z.T[off:]  # (p, n), C-contiguous: one feature per row
        count = clip_columns(X, self.lower, self.upper, out=features)
        np.divide(features, col_scale[off:, None], out=features)
        np.divide(features, dim_scale, out=features)
        return Z, count

    def coef_to_original(self, theta_scaled: NDArray[np.float64]) -> NDArray[np.float64]:
        """Map scaled-space coefficients (intercept first) to the original feature space."""
        return np.asarray(theta_scaled, dtype=np.float64) / (self.column_scale * self.dimension_scale)

    def coef_to_scaled(self, theta_original: NDArray[np.float64]) -> NDArray[np.float64]:
        """Inverse of :meth:`coef_to_original`."""
        return np.asarray(theta_original, dtype=np.float64) * (self.column_scale * self.dimension_scale)


@dataclass(frozen=True)
class RandomFourierFeatures:
    """Random Fourier features of the Gaussian kernel, as DPpack's ``svmDP`` draws and applies them.

    Public by construction: drawn from the random stream before the data are
    touched, independently of them (DPpack keeps them as ``prefilter``).

    Attributes
    ----------
    omega : ndarray of shape (D, d)
        Frequencies, rows ``~ N(0, 2 kernel_param I_d)``.
    phi : ndarray of shape (D,)
        Phases ``~ U(-pi, pi)``.
    kernel_param : float
        ``g`` in ``exp(-g ||x - x'||^2)`` (DPpack's ``kernel.param``).
    """

    omega: NDArray[np.float64]
    phi: NDArray[np.float64]
    kernel_param: float

    @classmethod
    def sample(cls, n_inputs: int, n_components: int, kernel_param: float, *, rng: Any) -> "RandomFourierFeatures":
        """Draw ``D = n_components`` features for inputs of dimension ``d = n_inputs``.

        With an R-compatible stream the draws are DPpack's ``generate.sampling``,
        called D times: ``rnorm(d, sd = sqrt(2 * kernel_param))`` then
        ``runif(1, -pi, pi)`` for each feature in turn. With a numpy Generator
        the same law is drawn in two vectorised calls.
        """
        from .mechanisms import is_r_stream

        d = check_int("n_inputs", n_inputs, minimum=1)
        D = check_int("n_components", n_components, minimum=1)
        g = check_positive("kernel_param", kernel_param)
        sd = math.sqrt(2.0 * g)
        if is_r_stream(rng):
            omega = np.empty((D, d))
            phi = np.empty(D)
            for j in range(D):
                omega[j] = rng.rnorm(d, 0.0, sd)
                phi[j] = rng.runif(1, -math.pi, math.pi)[0]
        else:
            omega = rng.normal(0.0, sd, size=(D, d))
            phi = rng.uniform(-math.pi, math.pi, size=D)
        return cls(omega=omega, phi=phi, kernel_param=g)

    @classmethod
    def from_prefilter(cls, prefilter: ArrayLike, kernel_param: float) -> "RandomFourierFeatures":
        """From DPpack's ``prefilter`` matrix (D rows ``c(omega_j, phi_j)``)."""
        P = check_array("prefilter", prefilter)
        if P.shape[1] < 2:
            raise ValueError(f"prefilter must have at least 2 columns (omega and phi), got {P.shape[1]}.")
        return cls(omega=np.ascontiguousarray(P[:, :-1]), phi=P[:, -1].copy(),
                   kernel_param=check_positive("kernel_param", kernel_param))

    @property
    def n_components(self) -> int:
        """``D``."""
        return int(self.omega.shape[0])

    @property
    def n_inputs(self) -> int:
        """``d``, the input dimension (intercept column included when DPpack's ``add.bias`` added it)."""
        return int(self.omega.shape[1])

    @property
    def bound(self) -> float:
        """``sqrt(2/D)``: every feature lies in ``[-bound, bound]``."""
        return math.sqrt(2.0 / self.n_components)

    @property
    def prefilter(self) -> NDArray[np.float64]:
        """DPpack's ``prefilter``: ``cbind(omega, phi)``, shape (D, d + 1)."""
        return np.column_stack([self.omega, self.phi])

    def scaler(self) -> FeatureScaler:
        """DPpack's scaling of the features: bounds ``+-sqrt(2/D)``, no intercept (rows of norm <= 1)."""
        b = np.full(self.n_components, self.bound)
        return FeatureScaler(lower=-b, upper=b, fit_intercept=False)

    def transform(self, X: ArrayLike) -> NDArray[np.float64]:
        """``V[i, j] = sqrt(2/D) cos(x_i'omega_j + phi_j)``, shape (n, D).

        The inner products are summed left to right over the d inputs, the order
        of R's ``x %*% theta`` (reference BLAS), so the two engines agree to the bit
        where the cosines do.
        """
        X = check_array("X", X)
        if X.shape[1] != self.n_inputs:
            raise ValueError(f"X must have {self.n_inputs} columns (the features' input dimension), "
                             f"got {X.shape[1]}.")
        A = X[:, :1] * self.omega[:, 0]
        for k in range(1, self.n_inputs):
            A += X[:, k:k + 1] * self.omega[:, k]
        A += self.phi
        np.cos(A, out=A)
        A *= self.bound
        return A


def bounds_from_data(X: ArrayLike) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Column minima and maxima of ``X``: NOT public bounds.

    Bounds read off the private data leak information about it, and the
    differential-privacy guarantee of any release that uses them is void. This
    helper exists for exploration and always emits :class:`PrivacyLeakWarning`.
    """
    X = check_array("X", X)
    warnings.warn(
        "feature bounds computed from the data are not public: the differential-privacy "
        "guarantee of any release that uses them is void. Use bounds known before seeing "
        "the data (design ranges, plausible limits).",
        PrivacyLeakWarning,
        stacklevel=2,
    )
    return X.min(axis=0), X.max(axis=0)
