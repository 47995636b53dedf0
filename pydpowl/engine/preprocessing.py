"""DPpack's feature preprocessing for DP-OWL (``svmDP``, linear kernel).

1. Clip each feature to its public bounds ``[lower_j, upper_j]`` (by design;
   the number of clipped entries is counted).
2. Prepend an intercept column of ones, with bounds ``[1, 1]``, when requested.
3. Divide each column by ``max(|lower_j|, |upper_j|)``, then every column by
   ``sqrt(d)`` (d columns, intercept included), so every row has norm <= 1.

Coefficients fitted in this scaled space map back to the original space by
dividing by ``scale_j * sqrt(d)``. The operations follow DPpack's order so the
two engines see the same scaled data.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Tuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_array, check_bounds
from ..exceptions import PrivacyLeakWarning
from .kernels import use_kernels

__all__ = ["FeatureScaler", "bounds_from_data"]

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
    def from_bounds(cls, bounds, n_features: int, fit_intercept: bool = True) -> "FeatureScaler":
        """Validate ``bounds = (lower, upper)`` for ``n_features`` features."""
        lower, upper = check_bounds("feature_bounds", bounds, n_features)
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
        clipped = np.clip(X, self.lower, self.upper)
        return clipped, int(np.count_nonzero(clipped != X))

    def transform(self, X: ArrayLike) -> Tuple[NDArray[np.float64], int]:
        """Clip, add the intercept and scale; return ``(Z, n_clipped_entries)``."""
        X = check_array("X", X)
        if X.shape[1] != self.n_features:
            raise ValueError(f"X must have {self.n_features} columns (one per bound), got {X.shape[1]}.")
        return self.transform_checked(X)

    def transform_checked(self, X: NDArray[np.float64], backend: str = "auto") -> Tuple[NDArray[np.float64], int]:
        """:meth:`transform` for a finite float64 array already known to have ``p`` columns.

        ``Z`` is written column-major (Fortran order), the layout the solver
        works in, with the same floating-point operations as
        ``(clip(X) / col_scale) / dim_scale``: numpy copies the features into
        ``Z``, clips only the features with entries out of bounds, and divides
        in place. Where the solver uses the numba kernels (``backend``, the
        rule of :func:`pydpowl.engine.kernels.use_kernels`), it is one pass of
        :func:`~pydpowl.engine.kernels.feature_scaling.clip_and_scale_rows`,
        bit-identical to the numpy steps.
        """
        n, p = X.shape
        off = int(self.fit_intercept)
        col_scale, dim_scale = self.column_scale, self.dimension_scale
        Z = np.empty((n, p + off), order="F")
        if use_kernels(n, backend):
            from .kernels.feature_scaling import clip_and_scale_rows

            f64 = np.ascontiguousarray
            count = clip_and_scale_rows(f64(X, dtype=np.float64), f64(self.lower, dtype=np.float64),
                                        f64(self.upper, dtype=np.float64), f64(col_scale, dtype=np.float64),
                                        dim_scale, off, Z)
            return Z, int(count)
        if off:
            Z[:, 0] = (1.0 / col_scale[0]) / dim_scale
        features = Z.T[off:]  # (p, n), C-contiguous: one feature per row
        np.copyto(features, X.T)
        lower, upper = self.lower[:, None], self.upper[:, None]
        outside = (features < lower) | (features > upper)
        count = int(np.count_nonzero(outside))
        if count:  # clip the features with entries outside their bounds (by design, counted)
            for j in np.flatnonzero(outside.any(axis=1)):
                np.clip(features[j], self.lower[j], self.upper[j], out=features[j])
        np.divide(features, col_scale[off:, None], out=features)
        np.divide(features, dim_scale, out=features)
        return Z, count

    def coef_to_original(self, theta_scaled: NDArray[np.float64]) -> NDArray[np.float64]:
        """Map scaled-space coefficients (intercept first) to the original feature space."""
        return np.asarray(theta_scaled, dtype=np.float64) / (self.column_scale * self.dimension_scale)

    def coef_to_scaled(self, theta_original: NDArray[np.float64]) -> NDArray[np.float64]:
        """Inverse of :meth:`coef_to_original`."""
        return np.asarray(theta_original, dtype=np.float64) * (self.column_scale * self.dimension_scale)


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
