"""Exact (epsilon, delta) accounting for the Gaussian mechanisms of this package.

Three calibrations of Gaussian output noise live here:

* the **classical Gaussian mechanism** (Dwork & Roth 2014, Theorem A.1):
  ``sigma = Delta sqrt(2 ln(1.25/delta)) / epsilon``, proven for
  ``epsilon in (0, 1)`` only (:func:`classical_gaussian_scale`);
* the **analytic Gaussian mechanism** (Balle & Wang, ICML 2018, Theorem 8): the
  smallest ``sigma`` whose exact privacy profile
  ``delta(epsilon) = Phi(mu/2 - epsilon/mu) - e^epsilon Phi(-mu/2 - epsilon/mu)``,
  ``mu = Delta / sigma``, is at most ``delta``; valid for every ``epsilon > 0``
  (:func:`gaussian_delta`, :func:`analytic_gaussian_scale`);
* an **exact certificate for the smooth-sensitivity Gaussian mechanism** of
  DP-LSW and DP-LSL (:func:`smooth_gaussian_delta`), valid for every
  ``epsilon > 0``.

The certificate. The smoothed algorithms release ``f(X) + sigma_X Z`` with
``Z ~ N(0, I_d)``, where for all neighbours ``X, X'``

(A1) ``||f(X) - f(X')|| <= sigma_X / alpha`` (``sigma_X / alpha`` bounds the local
     sensitivity, spec §6.1-6.2), and
(A2) ``sigma_X' <= e^b sigma_X`` with ``b = beta / 2`` (``psi`` is ``beta``-smooth,
     so ``sigma = C sqrt(psi)`` is ``beta/2``-smooth, spec §6.3).

Write ``P = N(f(X), s^2 I)``, ``Q = N(f(X'), s'^2 I)`` and the intermediate
``R = N(f(X'), s^2 I)``. For any split ``epsilon = e1 + e2``:

1. ``P`` against ``R`` is a Gaussian shift by at most ``1/alpha`` standard
   deviations, so ``P(E) <= e^e1 R(E) + gaussian_delta(e1, 1/alpha)``. (The
   profile grows with the shift: ``N(0,1), N(mu',1)`` is a post-processing of
   ``N(0,1), N(mu,1)`` for ``mu' < mu``, by ``z -> (mu'/mu) z + N(0, 1 - (mu'/mu)^2)``.)
2. ``R`` against ``Q`` is a pure change of scale by ``r = s'/s`` in
   ``[e^-b, e^b]``, so ``R(E) <= e^e2 Q(E) + dilation_delta(e2, b, d)``, the
   largest hockey-stick divergence between ``N(0, I_d)`` and ``N(0, r^2 I_d)``
   over that range. The family ``N(0, v I_d)`` has a monotone likelihood ratio
   in ``||z||^2``, so the optimal event is a ball or its complement and the
   divergence is monotone in ``v`` on each side of 1: the supremum is at
   ``r = e^b`` or ``r = e^-b``, and each is a chi-square probability.
3. Chaining: ``P(E) <= e^epsilon Q(E) + delta_1 + e^e1 delta_2``.

The roles of ``X`` and ``X'`` are symmetric, so ``min`` over splits of
``delta_1 + e^e1 delta_2`` is a valid ``delta`` for the released vector.
Every step is an exact computation (normal and chi-square distribution
functions); nothing relies on ``epsilon <= 1``.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import special, stats

from .._validation import check_int, check_positive, check_probability

__all__ = [
    "classical_gaussian_scale",
    "gaussian_delta",
    "analytic_gaussian_scale",
    "dilation_delta",
    "smooth_gaussian_delta",
]

#: Splits ``epsilon = e1 + e2`` tried by :func:`smooth_gaussian_delta`.
_N_SPLITS = 129


def _check_nonnegative(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}.")
    value = float(value)
    if not 0.0 <= value < np.inf:
        raise ValueError(f"{name} must be in [0, inf), got {name}={value!r}.")
    return value


def _exp_times(log_factor: float, log_prob: np.ndarray) -> np.ndarray:
    """``exp(log_factor) * exp(log_prob)`` without overflow (0 where the probability is 0)."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.exp(log_factor + log_prob)
    return np.where(np.isneginf(log_prob), 0.0, out)


def classical_gaussian_scale(sensitivity: float, epsilon: float, delta: float) -> float:
    """Noise scale of the classical Gaussian mechanism.

    ``sigma = sensitivity * sqrt(2 ln(1.25 / delta)) / epsilon`` (Dwork & Roth
    2014, Theorem A.1). The theorem is proven for ``epsilon in (0, 1)`` only
    (and asks ``c^2 > 2 ln(1.25/delta)``; the scale returned is checked against
    the exact profile, :func:`gaussian_delta`, and refused if it were not
    ``(epsilon, delta)``-DP).

    Parameters
    ----------
    sensitivity : float
        Global l2 sensitivity ``Delta``, in ``[0, inf)``.
    epsilon : float
        In ``(0, 1)``.
    delta : float
        In ``(0, 1)``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``epsilon`` is not in ``(0, 1)``: use :func:`analytic_gaussian_scale`.
    """
    sens = _check_nonnegative("sensitivity", sensitivity)
    eps = check_positive("epsilon", epsilon, allow_inf=True)
    dlt = check_probability("delta", delta, low_open=True, high_open=True)
    if not eps < 1.0:
        raise ValueError(
            "epsilon must be in (0, 1) for the classical Gaussian mechanism "
            f"(Dwork & Roth 2014, Theorem A.1), got epsilon={eps!r}; use the analytic "
            "Gaussian mechanism (analytic_gaussian_scale) there."
        )
    factor = math.sqrt(2.0 * math.log(1.25 / dlt)) / eps
    if not gaussian_delta(eps, 1.0 / factor) <= dlt:  # pragma: no cover - a proof, never seen to fail
        raise ValueError(f"the classical constant is not (epsilon={eps}, delta={dlt})-DP here.")
    return float(sens * factor)


def gaussian_delta(epsilon: float, mu: float) -> float:
    """Exact ``delta(epsilon)`` of the Gaussian mechanism with ``Delta / sigma = mu``.

    ``Phi(mu/2 - epsilon/mu) - e^epsilon Phi(-mu/2 - epsilon/mu)``, the
    hockey-stick divergence between ``N(0, 1)`` and ``N(mu, 1)`` (Balle & Wang
    2018, Theorem 8). It is 0 for ``mu = 0`` and increases with ``mu``.

    Parameters
    ----------
    epsilon : float
        In ``[0, inf)``.
    mu : float
        Sensitivity over noise scale, in ``[0, inf)``.

    Returns
    -------
    float
    """
    eps = _check_nonnegative("epsilon", epsilon)
    mu = _check_nonnegative("mu", mu)
    if mu == 0.0:
        return 0.0
    a = mu / 2.0 - eps / mu
    b = -mu / 2.0 - eps / mu
    first = float(special.ndtr(a))
    second = float(_exp_times(eps, np.array(special.log_ndtr(b))))
    return max(0.0, first - second)


def analytic_gaussian_scale(sensitivity: float, epsilon: float, delta: float) -> float:
    """Smallest noise scale for which the Gaussian mechanism is ``(epsilon, delta)``-DP.

    The analytic Gaussian mechanism of Balle & Wang (2018): the exact profile
    :func:`gaussian_delta` is solved for ``mu = Delta / sigma`` by bisection, and
    the scale returned is checked to satisfy ``gaussian_delta <= delta``. Valid
    for every ``epsilon > 0``.

    Parameters
    ----------
    sensitivity : float
        Global l2 sensitivity ``Delta``, in ``[0, inf)``.
    epsilon : float
        In ``(0, inf)``.
    delta : float
        In ``(0, 1)``.

    Returns
    -------
    float
        ``sigma`` (0 when ``sensitivity`` is 0).
    """
    sens = _check_nonnegative("sensitivity", sensitivity)
    eps = check_positive("epsilon", epsilon)
    dlt = check_probability("delta", delta, low_open=True, high_open=True)
    if sens == 0.0:
        return 0.0
    return float(sens / _analytic_mu(eps, dlt))


@functools.lru_cache(maxsize=256)
def _analytic_mu(eps: float, dlt: float) -> float:
    lo, hi = 0.0, 1.0
    while gaussian_delta(eps, hi) <= dlt:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if gaussian_delta(eps, mid) <= dlt:
            lo = mid
        else:
            hi = mid
    assert gaussian_delta(eps, lo) <= dlt  # lo only ever moves to points that satisfy it
    return lo


def _dilation_one_side(eps: np.ndarray, log_r: float, d: int) -> np.ndarray:
    """Hockey-stick ``H_{e^eps}(N(0, I_d) || N(0, r^2 I_d))`` for one ``r = e^log_r != 1``.

    With ``T = ||z||^2 ~ chi2_d`` under the first and ``T / r^2 ~ chi2_d`` under
    the second, ``log p/q = d log r - (T/2)(1 - r^-2)``: the event where it
    exceeds ``eps`` is ``{T < t}`` for ``r > 1`` and ``{T > t}`` for ``r < 1``.
    ``t`` and ``t / r^2`` are formed without overflow for large ``|log r|``.
    """
    chi2 = stats.chi2(d)
    b = abs(log_r)
    out = np.zeros_like(eps)
    if log_r > 0:
        t = 2.0 * (d * b - eps) / (-math.expm1(-2.0 * b))
        t_r = t * math.exp(-2.0 * b)
        ok = t > 0
        if np.any(ok):
            out[ok] = chi2.cdf(t[ok]) - _exp_times(0.0, eps[ok] + chi2.logcdf(t_r[ok]))
    else:
        num = 2.0 * (eps + d * b)
        with np.errstate(over="ignore"):
            t = num / np.expm1(2.0 * b)  # 0 when expm1 overflows
        t_r = num / (-math.expm1(-2.0 * b))
        out = chi2.sf(t) - _exp_times(0.0, eps + chi2.logsf(t_r))
    return np.maximum(out, 0.0)


def dilation_delta(epsilon: float, log_ratio: float, n_features: int) -> float:
    """Largest ``H_{e^epsilon}(N(0, I_d) || N(0, r^2 I_d))`` over ``|log r| <= log_ratio``.

    Exact: the supremum is at ``r = e^{+-log_ratio}`` (monotone likelihood
    ratio in ``||z||^2``) and each end is a difference of chi-square
    probabilities with ``d`` degrees of freedom.

    Parameters
    ----------
    epsilon : float
        In ``[0, inf)``.
    log_ratio : float
        ``b >= 0``; the scales of the two Gaussians differ by a factor in
        ``[e^-b, e^b]``.
    n_features : int
        Dimension ``d``.

    Returns
    -------
    float
    """
    eps = _check_nonnegative("epsilon", epsilon)
    b = _check_nonnegative("log_ratio", log_ratio)
    d = check_int("n_features", n_features, minimum=1)
    return float(_dilation_array(np.array([eps]), b, d)[0])


def _dilation_array(eps: np.ndarray, b: float, d: int) -> np.ndarray:
    if b == 0.0:
        return np.zeros_like(eps)
    return np.maximum(_dilation_one_side(eps, b, d), _dilation_one_side(eps, -b, d))


def smooth_gaussian_delta(epsilon: float, alpha: float, beta: float, n_features: int) -> float:
    """A ``delta`` for which the smooth-sensitivity Gaussian mechanism is ``(epsilon, delta)``-DP.

    The mechanism adds ``N(0, sigma_X^2 I_d)`` with ``sigma_X = alpha S(X)``,
    where ``S`` bounds the local sensitivity and ``sigma_X`` is
    ``beta/2``-smooth (see the module docstring for the proof). Returns
    ``min`` over splits ``epsilon = e1 + e2`` (a grid of ``_N_SPLITS`` values)
    of ``gaussian_delta(e1, 1/alpha) + e^e1 dilation_delta(e2, beta/2, d)``.
    Each split gives a valid bound, so the minimum over any grid does.

    Parameters
    ----------
    epsilon : float
        In ``(0, inf)``.
    alpha : float
        Noise multiplier, in ``(0, inf)``.
    beta : float
        Smoothness of ``psi``, in ``[0, inf)`` (``sigma`` is ``beta/2``-smooth).
    n_features : int
        Dimension ``d`` of the released vector.

    Returns
    -------
    float
        In ``[0, 1]``.
    """
    eps = check_positive("epsilon", epsilon)
    a = check_positive("alpha", alpha)
    b = _check_nonnegative("beta", beta)
    d = check_int("n_features", n_features, minimum=1)
    return _smooth_gaussian_delta(eps, a, b, d)


@functools.lru_cache(maxsize=1024)
def _smooth_gaussian_delta(eps: float, alpha: float, beta: float, d: int) -> float:
    e1 = np.linspace(0.0, eps, _N_SPLITS)
    e2 = np.maximum(eps - e1, 0.0)
    mu = 1.0 / alpha
    shift = np.array([gaussian_delta(float(x), mu) for x in e1])
    scale = _dilation_array(e2, beta / 2.0, d)
    with np.errstate(divide="ignore"):
        log_scale = np.log(scale)
    total = shift + _exp_times(0.0, e1 + log_scale)
    return float(min(1.0, np.min(total)))
