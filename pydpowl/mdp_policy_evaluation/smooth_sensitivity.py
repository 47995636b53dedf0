"""Smooth-sensitivity calibration of DP-LSW and DP-LSL (Balle et al., 2016).

The released estimate is ``theta + eta`` with ``eta ~ N(0, sigma_X^2 I_d)`` and
``sigma_X = C * sqrt(psi_X)``, where

* ``alpha, beta`` come from the Gaussian smooth-sensitivity lemma of Nissim,
  Raskhodnikova & Smith (2007), see :func:`privacy_constants`;
* ``C`` is a public constant (:func:`constant_w`, :func:`constant_lambda`);
* ``psi_X = max_k exp(-k beta) phi_X(k)`` is a ``beta``-smooth function of the
  signature ``(n_1, ..., n_N)`` (:func:`psi_w`, :func:`psi_lambda`).

The global-sensitivity baselines replace ``psi_X`` by its data-independent
maximum (:func:`global_psi_w`, :func:`global_psi_lambda`).

All functions here are pure; the maxima over ``k`` are taken in log space so
that ``exp(-k beta)`` never underflows to a wrong answer.
"""

from __future__ import annotations

from typing import Callable, Literal, Tuple, Union, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_choice, check_epsilon, check_int, check_probability

__all__ = [
    "CONSTANTS",
    "MATRIX_NORMS",
    "privacy_constants",
    "matrix_norm",
    "weighted_pinv_norm",
    "phi_w",
    "psi_w",
    "global_psi_w",
    "constant_w",
    "regularization_threshold",
    "c_lambda",
    "phi_lambda",
    "psi_lambda",
    "global_psi_lambda",
    "constant_lambda",
    "noise_scale",
]

#: Accepted values of ``constants``: ``"A"`` is the default pair, ``"conservative"``
#: takes the larger alpha and the smaller beta of pairs A and B.
CONSTANTS = ("A", "conservative")
#: Accepted values of ``matrix_norm``.
MATRIX_NORMS = ("spectral", "frobenius")


def _check_beta(beta: float) -> float:
    beta = float(beta)
    if not beta >= 0:  # NaN fails too
        raise ValueError(f"beta must be in [0, inf], got beta={beta!r}.")
    return beta


def privacy_constants(
    epsilon: float, delta: float, n_features: int, *, constants: str = "A"
) -> Tuple[float, float]:
    """Noise multiplier ``alpha`` and smoothness ``beta`` of the Gaussian lemma.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in ``(0, inf]``. The lemma is stated for
        ``epsilon <= 1``; larger values are computed but not covered.
    delta : float
        Privacy parameter in ``(0, 1)``.
    n_features : int
        Dimension ``d`` of the released vector.
    constants : {"A", "conservative"}, default="A"
        ``"A"``: ``alpha = 5 sqrt(2 ln(2/delta)) / epsilon`` and
        ``beta = epsilon / (4 (d + ln(2/delta)))``. ``"conservative"``: the
        larger ``alpha`` and the smaller ``beta`` of pair A and pair B
        (``alpha_B = 15 sqrt(2 ln(4/delta)) / epsilon``,
        ``beta_B = 2 epsilon / (5 (sqrt(d) + sqrt(2 ln(2/delta)))^2)``).

    Returns
    -------
    alpha, beta : float
        ``(0.0, inf)`` when ``epsilon`` is infinite (no noise).
    """
    eps = check_epsilon(epsilon)
    dlt = check_probability("delta", delta, low_open=True, high_open=True)
    d = check_int("n_features", n_features, minimum=1)
    check_choice("constants", constants, CONSTANTS)
    if eps == np.inf:
        return 0.0, np.inf
    log2d = np.log(2.0 / dlt)
    alpha = 5.0 * np.sqrt(2.0 * log2d) / eps
    beta = eps / (4.0 * (d + log2d))
    if constants == "conservative":
        alpha_b = 15.0 * np.sqrt(2.0 * np.log(4.0 / dlt)) / eps
        beta_b = 2.0 * eps / (5.0 * (np.sqrt(d) + np.sqrt(2.0 * log2d)) ** 2)
        alpha, beta = max(alpha, alpha_b), min(beta, beta_b)
    return float(alpha), float(beta)


def matrix_norm(matrix: ArrayLike, kind: str = "spectral") -> float:
    """Spectral (largest singular value) or Frobenius norm of a matrix."""
    check_choice("matrix_norm", kind, MATRIX_NORMS)
    mat = np.asarray(matrix, dtype=np.float64)
    return float(np.linalg.norm(mat, 2 if kind == "spectral" else "fro"))


def weighted_pinv_norm(
    features: ArrayLike, weights: ArrayLike, kind: str = "spectral"
) -> float:
    """``||(W^{1/2} Phi)^+||``: ``1/sqrt(lambda_min(Phi'W Phi))`` for the spectral norm.

    For the Frobenius norm it is ``sqrt(sum_i 1/sigma_i^2)`` over the singular
    values of ``W^{1/2} Phi``. Infinite if ``W^{1/2} Phi`` is rank deficient.
    """
    check_choice("matrix_norm", kind, MATRIX_NORMS)
    phi = np.asarray(features, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    sv = np.linalg.svd(np.sqrt(w)[:, None] * phi, compute_uv=False)
    if sv.shape[0] < phi.shape[1] or sv.min() <= 0:
        return float("inf")
    if kind == "spectral":
        return float(1.0 / sv.min())
    return float(np.sqrt(np.sum(1.0 / sv**2)))


#: Number of (k, state) pairs evaluated at once when searching over k: the
#: search holds O(N + _BLOCK_ELEMENTS) floats, never an (m + 1) x N matrix.
_BLOCK_ELEMENTS = 1 << 17
#: Slack (in log space) when skipping blocks, far above floating-point rounding.
_PRUNE_SLACK = 1e-9


def _search_smoothed_max(
    profile: Callable[[NDArray[np.int64]], NDArray[np.float64]],
    k_max: int,
    n_states: int,
    beta: float,
) -> Tuple[int, float]:
    """First ``k`` in ``0..k_max`` maximising ``log profile(k) - k beta``.

    ``profile`` maps an array of distances to the values ``phi(k)``; it must be
    non-decreasing in ``k`` (both ``phi^w`` and ``phi^lambda`` are, also in
    floating point, since every step of their evaluation is monotone). The
    distances are scanned in blocks of about ``_BLOCK_ELEMENTS / n_states``
    values, so memory is ``O(N + block)`` whatever ``k_max`` is. Because
    ``exp(-k beta) phi(k) <= exp(-a beta) phi(b)`` on a block ``a..b``, a block
    whose bound is below the best value found so far is skipped, and the scan
    stops once ``exp(-a beta) phi(k_max)`` is. Skipping uses a slack of
    ``_PRUNE_SLACK`` in log space, so the result is the exhaustive maximum
    (same ``k``, same value).

    Returns
    -------
    k : int
        Smallest maximising distance.
    phi_k : float
        ``profile(k)``.
    """
    first = float(profile(np.zeros(1, dtype=np.int64))[0])
    if beta == np.inf or k_max == 0:
        return 0, first
    with np.errstate(divide="ignore"):
        best_k, best_phi, best = 0, first, float(np.log(first))
        log_top = float(np.log(profile(np.array([k_max], dtype=np.int64))[0]))
        block = max(1, _BLOCK_ELEMENTS // max(1, n_states))
        for a in range(1, k_max + 1, block):
            if log_top - a * beta < best - _PRUNE_SLACK:
                break  # no later k can reach the best value
            b = min(a + block - 1, k_max)
            if float(np.log(profile(np.array([b], dtype=np.int64))[0])) - a * beta < best - _PRUNE_SLACK:
                continue
            ks = np.arange(a, b + 1, dtype=np.int64)
            values = profile(ks)
            scores = np.log(values) - beta * ks.astype(np.float64)
            j = int(np.argmax(scores))
            if scores[j] > best:
                best_k, best_phi, best = a + j, float(values[j]), float(scores[j])
    return best_k, best_phi


def _scaled(value: float, k: int, beta: float) -> float:
    """``exp(-k beta) * value``, exact at ``k = 0`` (then ``psi = phi(0)`` bit for bit)."""
    return float(value) if k == 0 else float(value * np.exp(-k * beta))


def phi_w(counts: ArrayLike, weights: ArrayLike, k: ArrayLike) -> NDArray[np.float64]:
    """``phi^w_X(k) = sum_s w_s / max(n_s - k, 1)^2`` for each ``k`` given.

    Parameters
    ----------
    counts : array-like of shape (N,)
        The signature ``n_s``.
    weights : array-like of shape (N,)
        Fixed non-negative weights ``w_s``.
    k : int or array-like of int
        Distances at which to evaluate.

    Returns
    -------
    ndarray
        Same shape as ``k``.
    """
    n = np.asarray(counts, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    kk = np.asarray(k, dtype=np.float64)
    den = np.maximum(n[None, :] - kk.reshape(-1, 1), 1.0) ** 2
    return (w[None, :] / den).sum(axis=1).reshape(kk.shape)


@overload
def psi_w(counts: ArrayLike, weights: ArrayLike, beta: float, *, return_argmax: Literal[False] = ...) -> float: ...


@overload
def psi_w(counts: ArrayLike, weights: ArrayLike, beta: float, *, return_argmax: Literal[True]) -> Tuple[float, int]:
    ...


def psi_w(
    counts: ArrayLike, weights: ArrayLike, beta: float, *, return_argmax: bool = False
) -> Union[float, Tuple[float, int]]:
    """Smooth bound ``psi^w_X = max_{0 <= k <= K_X} exp(-k beta) phi^w_X(k)``.

    ``K_X = max_s n_s``; for ``k >= K_X`` the profile is constant, so a longer
    range would not change the maximum. Time ``O(K_X N)`` at worst (blocks
    that cannot hold the maximum are skipped), memory ``O(N)`` plus a block of
    fixed size: no ``(K_X + 1) x N`` matrix is formed.

    Parameters
    ----------
    counts, weights : array-like of shape (N,)
        Signature and fixed weights.
    beta : float
        Smoothness parameter in ``[0, inf]``.
    return_argmax : bool, default=False
        Also return the smallest maximising ``k``.

    Returns
    -------
    psi : float
    k : int
        Only when ``return_argmax`` is true.
    """
    beta = _check_beta(beta)
    n = np.asarray(counts, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    big_k = int(n.max(initial=0))
    k, phi_k = _search_smoothed_max(lambda ks: phi_w(n, w, ks), big_k, n.shape[0], beta)
    psi = _scaled(phi_k, k, beta)
    return (psi, k) if return_argmax else psi


def global_psi_w(weights: ArrayLike) -> float:
    """Data-independent maximum of ``phi^w``: ``sum_s w_s`` (all ``n_s <= 1``)."""
    return float(np.sum(np.asarray(weights, dtype=np.float64)))


def constant_w(
    alpha: float,
    return_bound: float,
    features: ArrayLike,
    weights: ArrayLike,
    *,
    matrix_norm: str = "spectral",
) -> float:
    """``C_w = alpha * F_max * ||(W^{1/2} Phi)^+||``.

    With the spectral norm this is ``alpha F_max / sqrt(lambda_min(Phi'W Phi))``.
    """
    return float(alpha * return_bound * weighted_pinv_norm(features, weights, matrix_norm))


def regularization_threshold(features_norm: float, rho: ArrayLike) -> float:
    """``||Phi||^2 ||rho||_inf``; DP-LSL needs ``lambda`` strictly above it."""
    return float(features_norm**2 * np.max(np.asarray(rho, dtype=np.float64)))


def c_lambda(features_norm: float, rho: ArrayLike, regularization: float) -> float:
    """``c_lambda = ||Phi|| ||rho||_inf / sqrt(2 lambda)``."""
    return float(
        features_norm * np.max(np.asarray(rho, dtype=np.float64)) / np.sqrt(2.0 * regularization)
    )


def phi_lambda(
    counts: ArrayLike, rho: ArrayLike, n_episodes: int, c_lam: float, k: ArrayLike
) -> NDArray[np.float64]:
    """``phi^lambda_X(k) = (c_lambda sqrt(sum_s rho_s min(n_s + k, m)) + ||rho||_2)^2``.

    Parameters
    ----------
    counts : array-like of shape (N,)
        The signature ``n_s``.
    rho : array-like of shape (N,)
        Regression weights.
    n_episodes : int
        ``m`` (public).
    c_lam : float
        ``c_lambda`` from :func:`c_lambda`.
    k : int or array-like of int
        Distances at which to evaluate.
    """
    n = np.asarray(counts, dtype=np.float64)
    r = np.asarray(rho, dtype=np.float64)
    kk = np.asarray(k, dtype=np.float64)
    mass = (r[None, :] * np.minimum(n[None, :] + kk.reshape(-1, 1), float(n_episodes))).sum(
        axis=1
    )
    out = (c_lam * np.sqrt(mass) + np.linalg.norm(r)) ** 2
    return out.reshape(kk.shape)


@overload
def psi_lambda(counts: ArrayLike, rho: ArrayLike, n_episodes: int, c_lam: float, beta: float, *,
               return_argmax: Literal[False] = ...) -> float: ...


@overload
def psi_lambda(counts: ArrayLike, rho: ArrayLike, n_episodes: int, c_lam: float, beta: float, *,
               return_argmax: Literal[True]) -> Tuple[float, int]: ...


def psi_lambda(
    counts: ArrayLike,
    rho: ArrayLike,
    n_episodes: int,
    c_lam: float,
    beta: float,
    *,
    return_argmax: bool = False,
) -> Union[float, Tuple[float, int]]:
    """Smooth bound ``psi^lambda_X = max_{0 <= k <= m} exp(-k beta) phi^lambda_X(k)``.

    Time ``O(m N)`` at worst (blocks that cannot hold the maximum are
    skipped; since ``log phi^lambda`` is concave the scan usually stops early),
    memory ``O(N)`` plus a block of fixed size. Returns ``(psi, k)`` when
    ``return_argmax`` is true.
    """
    beta = _check_beta(beta)
    m = int(n_episodes)
    n = np.asarray(counts, dtype=np.float64)
    r = np.asarray(rho, dtype=np.float64)
    k, phi_k = _search_smoothed_max(lambda ks: phi_lambda(n, r, m, c_lam, ks), m, n.shape[0], beta)
    psi = _scaled(phi_k, k, beta)
    return (psi, k) if return_argmax else psi


def global_psi_lambda(rho: ArrayLike, n_episodes: int, c_lam: float) -> float:
    """``phi^lambda_X(m) = (c_lambda sqrt(m sum_s rho_s) + ||rho||_2)^2`` (every ``n_s = m``)."""
    r = np.asarray(rho, dtype=np.float64)
    return float((c_lam * np.sqrt(n_episodes * r.sum()) + np.linalg.norm(r)) ** 2)


def constant_lambda(
    alpha: float, return_bound: float, features_norm: float, rho: ArrayLike, regularization: float
) -> float:
    """``C_lambda = 2 alpha F_max ||Phi|| / (lambda - ||Phi||^2 ||rho||_inf)``.

    Raises
    ------
    ValueError
        If ``lambda`` does not exceed ``||Phi||^2 ||rho||_inf``.
    """
    thr = regularization_threshold(features_norm, rho)
    if not regularization > thr:
        raise ValueError(
            f"regularization must be in ({thr!r}, inf) (above ||Phi||^2 ||rho||_inf), "
            f"got regularization={regularization!r}."
        )
    return float(2.0 * alpha * return_bound * features_norm / (regularization - thr))


def noise_scale(constant: float, psi: float) -> float:
    """``sigma_X = C sqrt(psi_X)`` (0 when ``C = 0``, i.e. ``epsilon = inf``)."""
    if constant == 0.0:
        return 0.0
    return float(constant * np.sqrt(psi))
