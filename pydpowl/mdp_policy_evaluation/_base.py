"""Shared machinery of the policy-evaluation estimators (on pydpowl's one estimator base).

Parameter handling comes from scikit-learn's ``BaseEstimator`` through
:class:`pydpowl._base.DPEstimator`; here: the checks every estimator makes
on its public inputs, and the two result containers: the public
:class:`PolicyEvalSummary` and the private :class:`PolicyEvalDiagnostics`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_array, check_vector
from .._base import DPEstimator, check_is_fitted
from .episodes import EpisodeStatistics, episode_statistics

__all__ = ["PolicyEvalSummary", "PolicyEvalDiagnostics"]


@dataclass(frozen=True)
class PolicyEvalSummary:
    """Public settings of a fitted policy evaluator (no data-dependent values).

    ``str()`` gives a short text for people, ``dataclasses.asdict()`` a row.
    ``alpha`` is the noise multiplier (``sigma = alpha`` times the sensitivity
    bound) and ``certified_delta`` the ``delta`` proven by exact accounting at
    this ``epsilon`` (see :mod:`~.calibration`; ``None`` for non-private fits).
    """

    estimator: str
    private: bool
    epsilon: float
    delta: float
    n_states: int
    n_features: int
    n_episodes: int
    sensitivity: str
    constants: str
    matrix_norm: str
    alpha: float
    beta: float
    sensitivity_constant: float
    regularization: Optional[float]
    certified_delta: Optional[float] = None

    def __str__(self) -> str:
        lines = [f"{self.estimator}: {'private' if self.private else 'NOT private'} fit"]
        if self.private:
            lines.append(
                f"  (epsilon, delta) = ({self.epsilon:g}, {self.delta:g}); "
                f"{self.sensitivity} sensitivity, constants {self.constants}, "
                f"{self.matrix_norm} norm"
            )
            lines.append(
                f"  alpha = {self.alpha:.6g}, beta = {self.beta:.6g}, "
                f"C = {self.sensitivity_constant:.6g}"
            )
            if self.certified_delta is not None:
                lines.append(
                    f"  exact accounting: (epsilon, {self.certified_delta:.3g})-DP "
                    f"(required delta = {self.delta:g})"
                )
        lines.append(
            f"  N = {self.n_states} states, d = {self.n_features} features, "
            f"m = {self.n_episodes} episodes"
            + ("" if self.regularization is None else f", lambda = {self.regularization:.6g}")
        )
        return "\n".join(lines)


@dataclass(frozen=True, eq=False)
class PolicyEvalDiagnostics:
    """PRIVATE, data-dependent by-products of a private fit.

    None of these is covered by the differential-privacy guarantee: they are
    functions of the signature ``(n_s)`` or of the data itself. They exist for
    tests and simulations only and are kept only with ``keep_diagnostics=True``.

    Attributes
    ----------
    sigma : float
        Noise standard deviation ``sigma_X`` per coordinate.
    psi : float
        ``psi_X`` (smooth bound) or its global maximum for
        ``sensitivity="global"``.
    psi_argmax : int
        Smallest ``k`` reaching the maximum in ``psi_X`` (0 for global).
    phi0 : float
        ``phi_X(0)``, the non-smoothed local bound.
    counts : ndarray of int64
        The signature ``n_s``.
    nonprivate_coef : ndarray
        The exact minimiser before noise.
    """

    sigma: float
    psi: float
    psi_argmax: int
    phi0: float
    counts: NDArray[np.int64]
    nonprivate_coef: NDArray[np.float64]

    def __repr__(self) -> str:
        return "PolicyEvalDiagnostics(<private: sigma, psi, counts, nonprivate_coef>)"


class _PolicyEvaluatorBase(DPEstimator):
    """Checks shared by every policy evaluator (on pydpowl's one estimator base); subclasses implement ``fit``."""

    @staticmethod
    def _check_features(features: Any) -> NDArray[np.float64]:
        if features is None:
            raise TypeError(
                "features must be a 2-D array of shape (n_states, n_features), got None. "
                "Use numpy.eye(n_states) for tabular features."
            )
        return check_array("features", features)

    @staticmethod
    def _check_state_weights(
        name: str, value: Any, n_states: int, *, warn_sum: bool
    ) -> NDArray[np.float64]:
        if value is None:
            return np.full(n_states, 1.0 / n_states)
        arr = check_vector(name, value, length=n_states)
        neg = arr < 0
        if neg.any():
            raise ValueError(
                f"{name} must be non-negative (in [0, inf)); {int(neg.sum())} of {arr.size} "
                f"entries are negative (first at position {int(np.flatnonzero(neg)[0])})."
            )
        if not arr.sum() > 0:
            raise ValueError(f"{name} must have a positive entry, got all zeros.")
        if warn_sum and not np.isclose(arr.sum(), 1.0, rtol=0, atol=1e-9):
            warnings.warn(
                f"{name} sums to {arr.sum():.6g}, not 1. It is used as given; the "
                "privacy calibration only uses its max, Euclidean norm and sum.",
                UserWarning,
                stacklevel=3,  # this helper, fit, the caller of fit
            )
        return arr

    @staticmethod
    def _statistics(episodes: Any, n_states: int, discount: float) -> EpisodeStatistics:
        if isinstance(episodes, EpisodeStatistics):
            if episodes.n_states != n_states:
                raise ValueError(
                    f"episodes: EpisodeStatistics has n_states={episodes.n_states}, but "
                    f"features has {n_states} rows."
                )
            if episodes.discount != discount:
                raise ValueError(
                    f"episodes: EpisodeStatistics was computed with discount="
                    f"{episodes.discount!r}, but this estimator has discount={discount!r}."
                )
            return episodes
        return episode_statistics(episodes, n_states=n_states, discount=discount)

    def predict(self, states: ArrayLike) -> NDArray[np.float64]:
        """Value estimates ``phi_s' coef_`` for the given state indices.

        Parameters
        ----------
        states : array-like of int
            Indices in ``[0, n_states_)``.

        Returns
        -------
        ndarray
            Same shape as ``states``.
        """
        check_is_fitted(self)
        s = np.asarray(states)
        if s.dtype.kind not in "iu":
            raise TypeError(f"states must be integers, got dtype {s.dtype}.")
        bad = (s < 0) | (s >= self.n_states_)
        if np.any(bad):
            raise ValueError(
                f"states must be in [0, {self.n_states_}); {int(np.sum(bad))} of {s.size} are not."
            )
        return self.values_[s]
