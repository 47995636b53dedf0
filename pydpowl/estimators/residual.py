"""Residual (augmented) OWL weights under differential privacy: one place for the rule.

OWL maximises ``E[B 1{d(X) = A} / P(A | X)]``. For any baseline ``m(x)`` that
does not depend on the treatment, ``E[m(X) 1{d(X) = A} / P(A | X) | X] = m(X)``
whatever the rule, so ``B`` may be replaced by the residual ``r = B - m(X)``
without changing the optimal rule; a negative residual counts for the other
arm: ``r 1{d = A} = |r| 1{d = A sign(r)} - |r| 1{r < 0}``. The rule is then
learnt with labels ``A sign(r)`` and weights ``|r| / P(A | X)`` (residual
weighted learning, Zhou et al. 2017; augmented OWL, Liu et al. 2018). A good
baseline makes the weights small, and with them the public weight bound W
that calibrates every mechanism's noise.

Under DP (:func:`release_baseline`, :func:`residual_problem`):

* the benefit is clipped to its public bounds ``[L, U]``;
* the baseline is the clipped benefit's mean, released by the Laplace
  mechanism (sensitivity ``(U - L) / n`` for one record replaced, n public) on
  a share ``baseline_share`` of the rule's budget, and clipped to ``[L, U]``
  (post-processing); it is then a public number;
* the residual is clipped to ``[-R, R]`` with ``R = clip_share (U - L)``
  (public; counted): each weight ``|r_i| / p_i`` depends on record i and the
  released baseline only, so the rule's weight sensitivity is C = 0 given the
  baseline, and the weight bound is ``W_r = W R / (U - L)`` (W is the bound
  of ``(B - L) / p``, so ``W_r`` bounds ``R / p`` in the same way).

Composition: the baseline is ``epsilon_m``-DP; given its value the rule's
mechanism is ``epsilon_rule``-DP on the same records (C = 0); by adaptive
sequential composition the pair is ``(epsilon_m + epsilon_rule)``-DP, the
budget of the fit. With clipping, the rule maximises
``E[clip(B - m, -R, R) 1{d = A} / P(A | X)]``: the same optimal rule whenever
``B`` given ``(X, A)`` is a location family (``E clip(mu + e - m, -R, R)`` is
increasing in ``mu``), and otherwise the rule of the clipped outcome, as with
any clipping of B to public bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional, Tuple

import numpy as np
from numpy.typing import NDArray

from .._validation import check_epsilon, check_probability

__all__ = ["ResidualWeights", "BaselineRelease", "ResidualProblem", "release_baseline", "residual_problem",
           "residual_weight_bound", "check_benefit_bounds", "RESIDUAL_BASELINE_SHARE", "RESIDUAL_CLIP_SHARE"]

#: share of the fit's budget spent on the baseline (the DP mean of the clipped benefit)
RESIDUAL_BASELINE_SHARE = 0.1
#: the residual is clipped to +-R with R this share of the benefit range U - L (the utility study's choice)
RESIDUAL_CLIP_SHARE = 1.0 / 16.0


@dataclass(frozen=True)
class ResidualWeights:
    """Settings of residual weights (public; the same object serves every stage of a multi-stage rule).

    Attributes
    ----------
    baseline_share : float, default=0.1
        Share of the fit's epsilon spent on the baseline, in (0, 1).
    clip_share : float, default=1/16
        ``R = clip_share (U - L)``, in (0, 1].
    """

    baseline_share: float = RESIDUAL_BASELINE_SHARE
    clip_share: float = RESIDUAL_CLIP_SHARE

    def __post_init__(self) -> None:
        check_probability("baseline_share", self.baseline_share, low_open=True, high_open=True)
        check_probability("clip_share", self.clip_share, low_open=True, high_open=False)

    def split(self, epsilon: float) -> Tuple[float, float]:
        """``(epsilon_baseline, epsilon_rule)`` of a fit with budget ``epsilon`` (inf: no baseline noise)."""
        eps = check_epsilon(epsilon)
        if eps == math.inf:
            return math.inf, math.inf
        e_m = self.baseline_share * eps
        return e_m, eps - e_m


def check_benefit_bounds(bounds: Any, name: str = "benefit_bounds") -> Tuple[float, float]:
    """``(L, U)`` as two finite floats with ``L < U``."""
    try:
        lo, hi = bounds
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a pair (lower, upper), got {name}={bounds!r}.") from None
    out = []
    for k, v in enumerate((lo, hi)):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)) \
                or not math.isfinite(float(v)):
            raise ValueError(f"{name}[{k}] must be a finite number, got {v!r}.")
        out.append(float(v))
    if not out[0] < out[1]:
        raise ValueError(f"{name} must satisfy lower < upper, got {name}=({out[0]!r}, {out[1]!r}).")
    return out[0], out[1]


def residual_weight_bound(weights_upper_bound: float, clip_share: float) -> float:
    """``W_r = W R / (U - L) = W clip_share``: the public bound on ``|r| / p`` (see the module docstring)."""
    return float(weights_upper_bound) * float(clip_share)


@dataclass(frozen=True)
class BaselineRelease:
    """The released baseline: a public number and how it was paid for.

    Attributes
    ----------
    value : float
        ``m``, in ``[L, U]`` (the Laplace release of the mean clipped benefit, clipped to the bounds).
    epsilon : float
    scale : float
        Laplace scale ``(U - L) / (n epsilon)``.
    grid : float or None
        Release grid of the noisy mean (floating-point safe; None at ``epsilon = inf``).
    """

    value: float
    epsilon: float
    scale: float
    grid: Optional[float]


def release_baseline(benefit: NDArray[np.float64], *, benefit_bounds: Tuple[float, float], epsilon: float,
                     rng: Any) -> BaselineRelease:
    """The DP mean of ``clip(B, L, U)`` (Laplace, sensitivity ``(U - L) / n``), clipped to ``[L, U]``.

    The noise is the engine's one-dimensional output noise (``|noise|`` ~
    Gamma(1, rate) with a random sign: Laplace) and the exact sum is rounded to
    the release grid, as every release of the package. ``epsilon = inf``
    returns the exact mean (not a release).
    """
    from ..engine.mechanisms import finite_release_grid, round_release, sample_output_noise

    lo, hi = check_benefit_bounds(benefit_bounds)
    eps = check_epsilon(epsilon)
    B = np.clip(np.asarray(benefit, dtype=np.float64), lo, hi)
    n = B.shape[0]
    if n < 1:
        raise ValueError("benefit must hold at least one value.")
    mean = math.fsum(B.tolist()) / n
    sens = (hi - lo) / n
    if eps == math.inf:
        return BaselineRelease(value=float(mean), epsilon=eps, scale=0.0, grid=None)
    noise = sample_output_noise(1, eps / sens, rng=rng)
    grid = finite_release_grid(sensitivity=sens, epsilon=eps)
    noisy = float(round_release(np.array([mean]), noise, grid=grid)[0])
    return BaselineRelease(value=float(min(max(noisy, lo), hi)), epsilon=eps, scale=sens / eps, grid=grid)


@dataclass(frozen=True, eq=False)
class ResidualProblem:
    """Labels and weights of residual OWL (private) with their public bound.

    Attributes
    ----------
    labels : ndarray of shape (n,)
        ``A sign(r)`` in {-1, 1} (``A`` where ``r = 0``, whose weight is 0).
    weights : ndarray of shape (n,)
        ``min(|r| / p, W_r)``.
    weights_upper_bound : float
        ``W_r`` (public).
    n_clipped_residuals, n_clipped_weights, n_clipped_benefits : int
        Residuals clipped at +-R, weights at ``W_r``, benefits to ``[L, U]``
        (diagnostics computed from the private data, not releases).
    """

    labels: NDArray[np.float64]
    weights: NDArray[np.float64]
    weights_upper_bound: float
    n_clipped_residuals: int
    n_clipped_weights: int
    n_clipped_benefits: int


def residual_problem(treatment: NDArray[np.float64], benefit: NDArray[np.float64],
                     propensity_received: NDArray[np.float64], *, baseline: float,
                     benefit_bounds: Tuple[float, float], weights_upper_bound: float,
                     clip_share: float = RESIDUAL_CLIP_SHARE,
                     active: Optional[NDArray[np.bool_]] = None) -> ResidualProblem:
    """Residual labels and weights for a released (public) baseline (see the module docstring).

    Parameters
    ----------
    treatment : ndarray of shape (n,)
        Received treatments in {-1, 1}.
    benefit : ndarray of shape (n,)
        Benefits on their own scale (clipped to ``benefit_bounds`` here, counted).
    propensity_received : ndarray of shape (n,)
        ``P(A_i | x_i)``: known, or from a model released before (C = 0).
    baseline : float
        The released ``m`` (:func:`release_baseline`).
    benefit_bounds : (float, float)
        Public ``(L, U)``.
    weights_upper_bound : float
        Public W of the plain OWL weights ``(B - L) / p``; residual weights are bounded by ``W clip_share``.
    clip_share : float
        ``R = clip_share (U - L)``.
    active : ndarray of bool of shape (n,), optional
        Where False the weight is 0 (a multi-stage rule's non-followers: a
        function of the record and of released rules only, so still C = 0).
    """
    lo, hi = check_benefit_bounds(benefit_bounds)
    R = clip_share * (hi - lo)
    W_r = residual_weight_bound(weights_upper_bound, clip_share)
    B = np.asarray(benefit, dtype=np.float64)
    Bc = np.clip(B, lo, hi)
    n_b = int(np.count_nonzero(Bc != B))
    r = Bc - float(baseline)
    n_r = int(np.count_nonzero(np.abs(r) > R))
    r = np.clip(r, -R, R)
    A = np.asarray(treatment, dtype=np.float64)
    labels = np.where(r < 0, -A, A)
    w = np.abs(r) / np.asarray(propensity_received, dtype=np.float64)
    if active is not None:
        w = np.where(np.asarray(active, dtype=bool), w, 0.0)
    over = w > W_r
    n_w = int(np.count_nonzero(over))
    if n_w:
        w = np.where(over, W_r, w)
    return ResidualProblem(labels=labels, weights=w, weights_upper_bound=W_r, n_clipped_residuals=n_r,
                           n_clipped_weights=n_w, n_clipped_benefits=n_b)
