"""A differentially private estimate of a treatment rule's value, with a confidence interval.

The rule ``d`` is public (released before, and learned on other rows); the
rows here are the evaluation rows ``(x_i, A_i, B_i)``, ``i = 1..n``, with
``P(A_i | x_i) = p_i`` known or given by a released propensity model.

Estimands (on the benefit's scale after clipping to the public bounds [L, U])
-------------------------------------------------------------------------------
* ``V(d) = E[B(d(X))]``, the value of the rule;
* ``D_a = V(d) - V(a)`` for the single-arm rules ``a = +1, -1``;
* ``D = V(d) - max(V(+1), V(-1)) = min(D_+1, D_-1)``, the gain over giving
  everyone the better single arm.

Private statistics
------------------
With the public centre ``c = (L + U) / 2`` and half-range ``r = (U - L) / 2``,
every subject contributes ``s_i = (B_i - c) / p_i`` to one of four cells
``(A_i, d(x_i))``; ``|s_i| <= h_a = r / f_a`` where ``f_a`` is the public floor
of the propensity of arm ``a`` (the randomisation probability in a trial,
``1 / (1 + e^M)`` for a model whose logits are clipped to ``[-M, M]``). The
mechanism releases, for the four cells ``k = (a, r)``,

* ``S_k = sum_{i in k} s_i + Laplace(2 h_a / epsilon_mean)`` and
* ``Q_k = sum_{i in k} s_i^2 + Laplace(2 h_a^2 / epsilon_variance)``.

Privacy (neighbours differ in one record; n public): replacing a record moves
``s`` within its cell by at most ``2 h_a`` (loss ``epsilon_mean``), or out of
cell k and into cell k' by at most ``h_a`` and ``h_a'`` (loss
``epsilon_mean / 2 + epsilon_mean / 2``); the same argument with ``s^2`` in
``[0, h_a^2]`` bounds the second release by ``epsilon_variance``. In all,
``epsilon_mean + epsilon_variance`` (sequential composition). The released
values are the exact sums rounded to a power-of-two grid between ``2^-11`` and
``2^-10`` times their noise scale (:func:`pydpowl.engine.mechanisms.laplace.release_laplace`;
post-processing, accounted for in the intervals). Under numpy's Laplace sampler
the computed release is ``(epsilon, delta)``-DP with the tiny ``delta`` of
:func:`pydpowl.engine.mechanisms.laplace.laplace_delta` (``PrivateValue.delta``).

Estimates (Horvitz-Thompson, unbiased when the propensities are right)
-----------------------------------------------------------------------
``V = c + (S_++ + S_--) / n``, ``D_+1 = (S_-- - S_+-) / n``,
``D_-1 = (S_++ - S_-+) / n`` (cells written ``(A, d)``), ``D = min(D_+1, D_-1)``.

K arms (:func:`private_arm_value`)
---------------------------------
With ``K >= 3`` arms (labels ``0..K-1`` in the rule's order) the cells are the
``K^2`` pairs ``(A, d(x))`` and the same two releases are made for every cell,
``S_(a,r) + Laplace(2 h_a / epsilon_mean)`` and ``Q_(a,r) + Laplace(2 h_a^2 /
epsilon_variance)`` with ``h_a = r / f_a`` for the received arm ``a``. The
privacy argument above does not depend on the number of cells: a replaced
record moves its term within one cell (``2 h_a``) or out of one cell and into
another (``h_a`` and ``h_a'``), so the release is again ``(epsilon_mean +
epsilon_variance)``-DP (docs/privacy_audit.md, "The value of a K-arm rule").
The estimates: ``V(d) = c + sum_a S_(a,a) / n``, the value of giving everyone
arm ``a``, ``V(a) = c + sum_r S_(a,r) / n``, and ``D_a = V(d) - V(a) =
(sum_(b != a) S_(b,b) - sum_(r != a) S_(a,r)) / n``; ``D = V(d) - max_a V(a) =
min_a D_a``. The K intervals of the ``D_a`` are computed at ``alpha / K`` each
(they hold together), those of ``V(d)`` and of each ``V(a)`` at ``alpha``.
With more than two Laplace terms per estimate the noise law's quantile is
computed by inverting its characteristic function (:func:`noise_quantile`).

Intervals (sampling and privacy noise)
--------------------------------------
An estimate is ``theta + (sampling error) + (sum of Laplace noises) / n``. The
sampling error is approximately normal with variance ``Var(u) / n``, where
``u_i`` is the subject's term, and ``Var(u) <= E[u^2]``, estimated by
``m2 = sum_{k in K} Q_k / n`` over the estimand's cells K. The released
``Q`` carries Laplace noise, so the interval uses the upper bound
``m2_up = (Q~_K + t) / n`` with ``t`` the ``1 - alpha_v`` quantile of the summed
Laplace noise (capped at the public ``max h_a^2``): ``m2 <= m2_up`` with
probability at least ``1 - alpha_v``. The interval is ``estimate +- q`` with
``q`` the ``1 - alpha_c / 2`` quantile of ``N(0, m2_up / n) + sum_k
Laplace(b_k / n)`` (computed exactly, in closed form). By the union bound the coverage is at least
``1 - alpha_c - alpha_v = level`` (up to the normal approximation of the
sampling error); by default ``alpha_v = alpha / 5``. For ``D`` the two
intervals of ``D_+1`` and ``D_-1`` are computed at ``alpha / 2`` each, so both
hold together with probability ``1 - alpha`` and the interval
``[min(lo_+1, lo_-1), min(hi_+1, hi_-1)]`` covers ``min(D_+1, D_-1)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, Sequence, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize, special, stats

from .._validation import check_labels, check_positive, check_probability, check_same_length, check_vector
from ..engine.mechanisms.laplace import laplace_delta, release_laplace
from ..engine.mechanisms.rounding import grid_for_scale

__all__ = ["Interval", "PrivateValue", "private_value", "noise_quantile", "cell_sums", "CELLS", "release_grid",
           "PrivateArmValue", "private_arm_value", "arm_cell_sums"]

#: the four cells, as (received treatment A, recommended treatment d(x))
CELLS: Tuple[Tuple[int, int], ...] = ((1, 1), (1, -1), (-1, 1), (-1, -1))


@dataclass(frozen=True)
class Interval:
    """A point estimate and its confidence interval."""

    estimate: float
    ci_low: float
    ci_high: float
    level: float

    @property
    def width(self) -> float:
        return self.ci_high - self.ci_low

    def as_dict(self) -> Dict[str, float]:
        return {"estimate": self.estimate, "ci_low": self.ci_low, "ci_high": self.ci_high, "level": self.level}


@dataclass(frozen=True)
class PrivateValue:
    """The private value release and what is derived from it (all public).

    Attributes
    ----------
    value : Interval
        ``V(d)``.
    difference : Interval
        ``V(d) - max(V(+1), V(-1))``.
    versus_plus, versus_minus : Interval
        ``V(d) - V(+1)`` and ``V(d) - V(-1)``; their intervals hold together with
        probability ``level``.
    first_moments, second_moments : ndarray of shape (4,)
        The released noisy cell sums ``S_k`` and ``Q_k`` (order :data:`CELLS`).
    first_scales, second_scales : ndarray of shape (4,)
        Their Laplace scales (public).
    n : int
        Evaluation rows (public).
    centre, half_range : float
        ``c`` and ``r`` of the public benefit bounds.
    propensity_floor : tuple of float
        Public floors of P(A = +1 | x) and P(A = -1 | x) used for the sensitivities.
    epsilon_mean, epsilon_variance : float
    delta : float
        The ``delta`` of the floating-point release under numpy's sampler
        (:func:`pydpowl.engine.mechanisms.laplace.laplace_delta`).
    """

    value: Interval
    difference: Interval
    versus_plus: Interval
    versus_minus: Interval
    first_moments: NDArray[np.float64]
    second_moments: NDArray[np.float64]
    first_scales: NDArray[np.float64]
    second_scales: NDArray[np.float64]
    n: int
    centre: float
    half_range: float
    propensity_floor: Tuple[float, float]
    epsilon_mean: float
    epsilon_variance: float
    delta: float = 0.0

    @property
    def epsilon(self) -> float:
        """Total budget of the release (sequential composition of the two cell releases)."""
        return self.epsilon_mean + self.epsilon_variance


def release_grid(scale: float) -> float:
    """Power-of-two grid for a value released with Laplace noise of ``scale`` (at most ``2^-10 scale``).

    The package's one release grid, :func:`pydpowl.engine.mechanisms.rounding.grid_for_scale`.
    """
    return grid_for_scale(scale)


def _normal_laplace_cdf(x: float, sd: float, b: float) -> float:
    """P(N(0, sd^2) + Laplace(b) <= x), in closed form.

    With ``u = x/sd`` and ``r = sd/b`` the law's cdf is
    ``Phi(u) - E(r - u)/2 + E(r + u)/2`` with ``E(z) = exp(r^2/2 - r u) Phi(-z)``
    for the first term and ``exp(r^2/2 + r u) Phi(-z)`` for the second. Written
    as ``exp(-u^2/2) exp(z^2/2) Phi(-z)`` and evaluated through the scaled
    complementary error function (``exp(z^2/2) Phi(-z) = erfcx(z/sqrt 2)/2``)
    where ``z >= 0``, it neither overflows nor cancels when ``b`` is tiny
    against ``sd``; where ``z < 0`` the direct form is already bounded.
    """
    if sd == 0:
        return 1.0 - 0.5 * math.exp(-x / b) if x >= 0 else 0.5 * math.exp(x / b)
    r, u = sd / b, x / sd

    def term(z: float, log_direct: float) -> float:  # exp(r^2/2 -+ r u) Phi(-z), z = r -+ u
        if z >= 0:
            return 0.5 * math.exp(-0.5 * u * u) * float(special.erfcx(z / math.sqrt(2.0)))
        return math.exp(log_direct + float(special.log_ndtr(-z)))

    lower = term(r - u, 0.5 * r * r - r * u)
    upper = term(r + u, 0.5 * r * r + r * u)
    return float(special.ndtr(u) - 0.5 * lower + 0.5 * upper)


def _cdf(x: float, sd: float, scales: NDArray[np.float64]) -> float:
    """P(N(0, sd^2) + sum of one or two independent Laplace terms <= x), in closed form.

    Two scales b1 != b2: the characteristic function splits in partial fractions,
    ``1/((1 + b1^2 t^2)(1 + b2^2 t^2)) = w1/(1 + b1^2 t^2) + w2/(1 + b2^2 t^2)``
    with ``w1 = b1^2/(b1^2 - b2^2)``, ``w2 = -b2^2/(b1^2 - b2^2)``, so the law is a
    signed mixture of normal-plus-Laplace laws. Equal scales: ``1/(1 + b^2 t^2)^2 =
    1/(1 + b^2 t^2) + (b/2) d/db 1/(1 + b^2 t^2)``. Scales within 0.1 % of each
    other are both replaced by the larger one (a wider law: conservative).
    """
    if scales.size == 1:
        return _normal_laplace_cdf(x, sd, float(scales[0]))
    b1, b2 = float(max(scales)), float(min(scales))
    if b1 - b2 <= 1e-3 * b1:
        eta = 1e-5
        slope = (_normal_laplace_cdf(x, sd, b1 * (1 + eta)) - _normal_laplace_cdf(x, sd, b1 * (1 - eta))) / (2 * eta)
        return _normal_laplace_cdf(x, sd, b1) + 0.5 * slope
    w1 = b1 * b1 / (b1 * b1 - b2 * b2)
    return w1 * _normal_laplace_cdf(x, sd, b1) + (1.0 - w1) * _normal_laplace_cdf(x, sd, b2)


def _cdf_inverted(x: float, sd: float, scales: NDArray[np.float64]) -> float:
    """P(N(0, sd^2) + sum_j Laplace(b_j) <= x) for any number of Laplace terms, by Gil-Pelaez inversion.

    The law is symmetric with the real characteristic function ``phi(t) = exp(-sd^2 t^2 / 2) prod_j 1 / (1 +
    b_j^2 t^2)``, so ``F(x) = 1/2 + (1/pi) int_0^inf sin(t x) phi(t) / t dt``. Everything is first divided by
    ``s = sd + sum_j b_j`` (scales at most 1); the integral is split at ``t = 50``: below, an ordinary
    adaptive quadrature of a bounded integrand (``sin(t x)/t -> x``); above, QUADPACK's Fourier integral
    (QAWF) of ``phi(t)/t`` with the weight ``sin(x t)``.
    """
    from scipy import integrate

    s = sd + float(np.sum(scales))
    u, sd1, b = x / s, sd / s, scales / s

    def phi(t: float) -> float:
        return math.exp(-0.5 * sd1 * sd1 * t * t) / float(np.prod(1.0 + (b * t) ** 2))

    split = 50.0
    head = integrate.quad(lambda t: u * float(np.sinc(t * u / math.pi)) * phi(t), 0.0, split, limit=400,
                          epsabs=1e-13, epsrel=1e-12)[0]
    tail = integrate.quad(lambda t: phi(t) / t, split, np.inf, weight="sin", wvar=u, limlst=200)[0] if u else 0.0
    return 0.5 + (head + tail) / math.pi


def noise_quantile(prob: float, *, sd: float = 0.0, laplace_scales: Sequence[float] = ()) -> float:
    """The ``prob`` quantile (``prob`` in [0.5, 1)) of ``N(0, sd^2) + sum_j Laplace(laplace_scales_j)``.

    Up to two Laplace terms the law's cdf is in closed form (:func:`_cdf`); more
    terms (the K-arm value of :func:`private_arm_value`: one per cell of the
    estimate) are inverted from the characteristic function (:func:`_cdf_inverted`).

    Parameters
    ----------
    prob : float
    sd : float, default=0.0
        Standard deviation of the normal part (>= 0).
    laplace_scales : sequence of float
        Scales of the independent Laplace terms (> 0 each).
    """
    p = check_probability("prob", prob, low_open=False, high_open=True)
    if p < 0.5:
        raise ValueError(f"prob must be in [0.5, 1), got prob={prob!r}.")
    if isinstance(sd, bool) or not (isinstance(sd, (int, float, np.floating)) and 0 <= sd < np.inf):
        raise ValueError(f"sd must be in [0, inf), got sd={sd!r}.")
    scales = np.array([check_positive("laplace_scales", b) for b in laplace_scales], dtype=np.float64)
    if p == 0.5:
        return 0.0
    if scales.size == 0:
        if sd == 0:
            raise ValueError("noise_quantile needs sd > 0 or at least one Laplace scale.")
        return float(sd * stats.norm.ppf(p))
    if scales.size == 1 and sd == 0:
        return float(-scales[0] * math.log(2.0 * (1.0 - p)))
    # P(sum > a + sum b_j) <= P(N > a) + sum_j P(L_j > b_j) with each tail (1 - p) / (J + 1)
    share = (1.0 - p) / (scales.size + 1)
    hi = sd * stats.norm.ppf(1.0 - share) + float(np.sum(scales)) * -math.log(2.0 * share)
    cdf = _cdf if scales.size <= 2 else _cdf_inverted
    return float(optimize.brentq(lambda x: cdf(x, sd, scales) - p, 0.0, hi, xtol=1e-12 * hi, rtol=1e-12))


def _check_floor(name: str, value: Any) -> float:
    return check_probability(name, value, low_open=True, high_open=True)


def private_value(rule: ArrayLike, treatment: ArrayLike, benefit: ArrayLike, propensity_received: ArrayLike, *,
                  benefit_bounds: Tuple[float, float], propensity_floor: Tuple[float, float],
                  epsilon_mean: float, epsilon_variance: float, level: float = 0.95,
                  variance_alpha_share: float = 0.2, rng: np.random.Generator) -> PrivateValue:
    """Release the value of a public rule on evaluation rows privately, with confidence intervals.

    Parameters
    ----------
    rule : array-like of shape (n,)
        The rule's recommendation ``d(x_i)`` in {-1, 1} for each evaluation row.
    treatment : array-like of shape (n,)
        Received treatments in {-1, 1}.
    benefit : array-like of shape (n,)
        Benefits on their original scale (larger is better); clipped to
        ``benefit_bounds`` by design.
    propensity_received : array-like of shape (n,)
        ``P(A_i | x_i)`` of the received treatment; each must be at least the
        floor of its arm.
    benefit_bounds : (float, float)
        Public bounds ``(L, U)`` with ``L < U``.
    propensity_floor : (float, float)
        Public lower bounds of ``P(A = +1 | x)`` and ``P(A = -1 | x)``, in (0, 1).
    epsilon_mean, epsilon_variance : float
        Budgets of the first- and second-moment releases; the release is
        ``(epsilon_mean + epsilon_variance)``-DP.
    level : float, default=0.95
        Confidence level of every interval.
    variance_alpha_share : float, default=0.2
        Share of ``alpha = 1 - level`` spent on the upper bound of the sampling
        variance (the rest on the interval itself).
    rng : numpy.random.Generator
        Source of the noise (seeds are for tests only).

    Returns
    -------
    PrivateValue

    Raises
    ------
    ValueError
        If a propensity is below its arm's public floor (the sensitivity would
        not hold), or an argument is out of range (the message names it).
    """
    eps_m = check_positive("epsilon_mean", epsilon_mean)
    eps_v = check_positive("epsilon_variance", epsilon_variance)
    level = check_probability("level", level, low_open=True, high_open=True)
    share = check_probability("variance_alpha_share", variance_alpha_share, low_open=True, high_open=True)
    lo, hi = _benefit_bounds(benefit_bounds)
    floor_pos, floor_neg = _pair("propensity_floor", propensity_floor)
    floors = (_check_floor("propensity_floor[0]", floor_pos), _check_floor("propensity_floor[1]", floor_neg))
    d = check_labels("rule", rule)
    A = check_labels("treatment", treatment)
    B = check_vector("benefit", benefit)
    p = check_vector("propensity_received", propensity_received)
    check_same_length(("rule", "treatment", "benefit", "propensity_received"), (d.size, A.size, B.size, p.size))
    n = int(A.size)
    if n < 1:
        raise ValueError("the evaluation rows must not be empty.")
    floor_i = np.where(A > 0, floors[0], floors[1])
    below = (p < floor_i) | (p > 1)
    if below.any():
        raise ValueError(f"propensity_received must lie in [floor of the received arm, 1] (floors "
                         f"{floors[0]:.6g} for +1, {floors[1]:.6g} for -1); {int(below.sum())} of {n} entries "
                         "do not, so the sensitivity would not hold.")
    centre, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    first, second, h = cell_sums(d, A, B, p, benefit_bounds=(lo, hi), propensity_floor=floors)
    b1 = 2.0 * h / eps_m
    b2 = 2.0 * h ** 2 / eps_v
    first_noisy = _release(first, b1, rng)
    second_noisy = _release(second, b2, rng)

    alpha = 1.0 - level
    index = {cell: k for k, cell in enumerate(CELLS)}
    pp, pm, mp, mm = (index[(1, 1)], index[(1, -1)], index[(-1, 1)], index[(-1, -1)])

    def interval(coef: Dict[int, float], a: float, offset: float = 0.0) -> Interval:
        return _cells_interval(coef, first_noisy, second_noisy, b1, b2, h, n=n, alpha=a, share=share, level=level,
                               offset=offset)

    value = interval({pp: 1.0, mm: 1.0}, alpha, offset=centre)
    vs_plus = interval({mm: 1.0, pm: -1.0}, alpha / 2.0)
    vs_minus = interval({pp: 1.0, mp: -1.0}, alpha / 2.0)
    diff = Interval(min(vs_plus.estimate, vs_minus.estimate), min(vs_plus.ci_low, vs_minus.ci_low),
                    min(vs_plus.ci_high, vs_minus.ci_high), level)
    return PrivateValue(value=value, difference=diff, versus_plus=vs_plus, versus_minus=vs_minus,
                        first_moments=first_noisy, second_moments=second_noisy, first_scales=b1, second_scales=b2,
                        n=n, centre=centre, half_range=half, propensity_floor=(floors[0], floors[1]),
                        epsilon_mean=eps_m, epsilon_variance=eps_v,
                        delta=laplace_delta(epsilon=eps_m + eps_v, scales=np.r_[b1, b2],
                                            grids=[release_grid(b) for b in np.r_[b1, b2]]))


def _cells_interval(coef: Dict[Any, float], first: NDArray[np.float64], second: NDArray[np.float64],
                    b1: NDArray[np.float64], b2: NDArray[np.float64], h: NDArray[np.float64], *, n: int, alpha: float,
                    share: float, level: float, offset: float = 0.0) -> Interval:
    """The interval of ``offset + sum_k coef_k S_k / n`` over the cells ``k`` of ``coef`` (see the module
    docstring): ``first``, ``second`` the released sums, ``b1``, ``b2`` their Laplace scales, ``h`` the bound
    of each cell's terms, all indexed by the cells' keys; ``alpha`` split as ``share`` for the second-moment
    bound and the rest for the interval."""
    cells = list(coef)
    est = offset + sum(coef[k] * first[k] for k in cells) / n
    t = noise_quantile(1.0 - share * alpha, laplace_scales=[b2[k] for k in cells])
    cap = float(max(h[k] for k in cells) ** 2)
    grid2 = sum(release_grid(b2[k]) for k in cells) / 2.0
    m2_up = min(max((sum(second[k] for k in cells) + t + grid2) / n, 0.0), cap)
    q = noise_quantile(1.0 - (1.0 - share) * alpha / 2.0, sd=math.sqrt(m2_up / n),
                       laplace_scales=[b1[k] / n for k in cells])
    q += sum(release_grid(b1[k]) for k in cells) / (2.0 * n)
    return Interval(float(est), float(est - q), float(est + q), level)


def cell_sums(rule: NDArray[np.float64], treatment: NDArray[np.float64], benefit: NDArray[np.float64],
              propensity_received: NDArray[np.float64], *, benefit_bounds: Tuple[float, float],
              propensity_floor: Tuple[float, float]
              ) -> Tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """The exact (private) cell sums ``S_k``, ``Q_k`` and the public bounds ``h_k`` on ``|s_i|`` per cell.

    Validated inputs only (:func:`private_value` checks them); exposed for the
    sensitivity tests and the privacy audit.
    """
    lo, hi = benefit_bounds
    centre, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    s = (np.clip(benefit, lo, hi) - centre) / propensity_received
    h = np.array([half / propensity_floor[0] if a > 0 else half / propensity_floor[1] for a, _ in CELLS])
    cells = [(treatment == a) & (rule == r) for a, r in CELLS]
    return (np.array([s[c].sum() for c in cells]), np.array([(s[c] ** 2).sum() for c in cells]), h)


def _release(values: NDArray[np.float64], scales: NDArray[np.float64], rng: Any) -> NDArray[np.float64]:
    """``values + Laplace(scales)``, the exact sums rounded to :func:`release_grid`
    (:func:`pydpowl.engine.mechanisms.laplace.release_laplace`: floating-point-safe post-processing).
    ``rng``: a numpy Generator, or any object with its ``laplace(loc, scale)`` (the audit's fixed draws)."""
    return release_laplace(values, scales, rng=rng)[0]


def _pair(name: str, value: Any) -> Tuple[Any, Any]:
    try:
        a, b = value
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a pair of numbers.") from None
    return a, b


def _benefit_bounds(bounds: Any) -> Tuple[float, float]:
    lo, hi = _pair("benefit_bounds", bounds)
    for k, v in enumerate((lo, hi)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not math.isfinite(v):
            raise ValueError(f"benefit_bounds[{k}] must be a finite number, got {v!r}.")
    if not float(lo) < float(hi):
        raise ValueError(f"benefit_bounds must satisfy lower < upper, got benefit_bounds=({lo!r}, {hi!r}).")
    return float(lo), float(hi)


@dataclass(frozen=True)
class PrivateArmValue:
    """The private value release of a K-arm rule and what is derived from it (all public).

    Attributes
    ----------
    arms : tuple
        The arm labels, in the rule's order (cells are indexed by their positions).
    value : Interval
        ``V(d)``.
    arm_values : dict of label to Interval
        ``V(a)``, the value of giving everyone arm ``a`` (each interval at ``level``).
    versus : dict of label to Interval
        ``V(d) - V(a)``; the K intervals hold together with probability ``level``.
    difference : Interval
        ``V(d) - max_a V(a)``.
    first_moments, second_moments : ndarray of shape (K, K)
        The released noisy cell sums, ``[received arm, recommended arm]``.
    first_scales, second_scales : ndarray of shape (K,)
        Their Laplace scales, per received arm (public).
    n : int
    centre, half_range : float
    propensity_floor : tuple of float
        Public floor of each arm's propensity.
    epsilon_mean, epsilon_variance : float
    delta : float
        As in :class:`PrivateValue`, over the ``2 K^2`` rounded sums.
    """

    arms: Tuple[Any, ...]
    value: Interval
    arm_values: Dict[Any, Interval]
    versus: Dict[Any, Interval]
    difference: Interval
    first_moments: NDArray[np.float64]
    second_moments: NDArray[np.float64]
    first_scales: NDArray[np.float64]
    second_scales: NDArray[np.float64]
    n: int
    centre: float
    half_range: float
    propensity_floor: Tuple[float, ...]
    epsilon_mean: float
    epsilon_variance: float
    delta: float = 0.0

    @property
    def epsilon(self) -> float:
        """Total budget of the release (sequential composition of the two cell releases)."""
        return self.epsilon_mean + self.epsilon_variance

    @property
    def cell_scales(self) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The Laplace scales of every released sum, ``(K, K)`` each (first, second moments)."""
        K = len(self.arms)
        return np.repeat(self.first_scales[:, None], K, axis=1), np.repeat(self.second_scales[:, None], K, axis=1)


def arm_cell_sums(rule: NDArray[np.intp], treatment: NDArray[np.intp], benefit: NDArray[np.float64],
                  propensity_received: NDArray[np.float64], *, n_arms: int, benefit_bounds: Tuple[float, float],
                  propensity_floor: Union[Sequence[float], NDArray[np.float64]]
                  ) -> Tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """The exact (private) K-arm cell sums ``S``, ``Q`` (``(K, K)``: received, recommended) and the public
    bound ``h_a`` on ``|s_i|`` per received arm. Validated inputs only (:func:`private_arm_value` checks them);
    exposed for the sensitivity tests and the privacy audit."""
    lo, hi = benefit_bounds
    centre, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    s = (np.clip(benefit, lo, hi) - centre) / propensity_received
    S = np.zeros((n_arms, n_arms))
    Q = np.zeros((n_arms, n_arms))
    np.add.at(S, (treatment, rule), s)
    np.add.at(Q, (treatment, rule), s * s)
    return S, Q, half / np.asarray(propensity_floor, dtype=np.float64)


def private_arm_value(rule: ArrayLike, treatment: ArrayLike, benefit: ArrayLike, propensity_received: ArrayLike, *,
                      n_arms: int, benefit_bounds: Tuple[float, float],
                      propensity_floor: Union[Sequence[float], NDArray[np.float64]], epsilon_mean: float,
                      epsilon_variance: float, arms: Sequence[Any] = (), level: float = 0.95,
                      variance_alpha_share: float = 0.2, rng: np.random.Generator) -> PrivateArmValue:
    """Release the value of a public K-arm rule on evaluation rows privately, with confidence intervals.

    Parameters
    ----------
    rule, treatment : array-like of int of shape (n,)
        The recommended and the received arm of each row, as positions ``0..K-1`` in the rule's order.
    benefit : array-like of shape (n,)
        Benefits on their original scale; clipped to ``benefit_bounds`` by design.
    propensity_received : array-like of shape (n,)
        ``P(A_i | x_i)`` of the received arm; each at least its arm's floor.
    n_arms : int
        K (>= 2).
    benefit_bounds : (float, float)
        Public ``(L, U)``.
    propensity_floor : sequence of K floats
        Public lower bound of each arm's propensity, in (0, 1).
    epsilon_mean, epsilon_variance : float
        Budgets of the first- and second-moment releases.
    arms : sequence, optional
        The arm labels (keys of ``arm_values`` and ``versus``); default ``0..K-1``.
    level, variance_alpha_share, rng
        As in :func:`private_value`.

    Returns
    -------
    PrivateArmValue

    Raises
    ------
    ValueError
        If a propensity is below its arm's floor, an arm index is out of range, or an argument is out of range.
    """
    from .._validation import check_int

    K = check_int("n_arms", n_arms, minimum=2)
    eps_m = check_positive("epsilon_mean", epsilon_mean)
    eps_v = check_positive("epsilon_variance", epsilon_variance)
    level = check_probability("level", level, low_open=True, high_open=True)
    share = check_probability("variance_alpha_share", variance_alpha_share, low_open=True, high_open=True)
    lo, hi = _benefit_bounds(benefit_bounds)
    floors = np.array([_check_floor(f"propensity_floor[{a}]", f) for a, f in enumerate(propensity_floor)])
    if floors.size != K:
        raise ValueError(f"propensity_floor must have n_arms={K} entries (one per arm), got {floors.size}.")
    labels = tuple(arms) if len(arms) else tuple(range(K))
    if len(labels) != K:
        raise ValueError(f"arms must have n_arms={K} labels, got {len(labels)}.")
    d = _arm_indices("rule", rule, K)
    A = _arm_indices("treatment", treatment, K)
    B = check_vector("benefit", benefit)
    p = check_vector("propensity_received", propensity_received)
    check_same_length(("rule", "treatment", "benefit", "propensity_received"), (d.size, A.size, B.size, p.size))
    n = int(A.size)
    if n < 1:
        raise ValueError("the evaluation rows must not be empty.")
    below = (p < floors[A]) | (p > 1)
    if below.any():
        raise ValueError(f"propensity_received must lie in [floor of the received arm, 1] (floors "
                         f"{', '.join(f'{f:.6g}' for f in floors)}); {int(below.sum())} of {n} entries do not, so "
                         "the sensitivity would not hold.")
    centre, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    first, second, h = arm_cell_sums(d, A, B, p, n_arms=K, benefit_bounds=(lo, hi), propensity_floor=floors)
    b1 = 2.0 * h / eps_m  # per received arm (row of the cell table)
    b2 = 2.0 * h ** 2 / eps_v
    B1, B2 = np.repeat(b1[:, None], K, axis=1), np.repeat(b2[:, None], K, axis=1)
    first_noisy = _release(first.ravel(), B1.ravel(), rng).reshape(K, K)
    second_noisy = _release(second.ravel(), B2.ravel(), rng).reshape(K, K)
    alpha = 1.0 - level

    H = np.repeat(h[:, None], K, axis=1)  # the bound of each cell's terms: its received arm's

    def interval(coef: Dict[Tuple[int, int], float], a: float, offset: float = 0.0) -> Interval:
        return _cells_interval(coef, first_noisy, second_noisy, B1, B2, H, n=n, alpha=a, share=share, level=level,
                               offset=offset)

    value = interval({(a, a): 1.0 for a in range(K)}, alpha, offset=centre)
    arm_values = {labels[a]: interval({(a, r): 1.0 for r in range(K)}, alpha, offset=centre) for a in range(K)}
    versus = {}
    for a in range(K):
        coef = {(b, b): 1.0 for b in range(K) if b != a}
        coef.update({(a, r): -1.0 for r in range(K) if r != a})
        versus[labels[a]] = interval(coef, alpha / K)
    diff = Interval(min(v.estimate for v in versus.values()), min(v.ci_low for v in versus.values()),
                    min(v.ci_high for v in versus.values()), level)
    scales = np.r_[B1.ravel(), B2.ravel()]
    return PrivateArmValue(arms=labels, value=value, arm_values=arm_values, versus=versus, difference=diff,
                           first_moments=first_noisy, second_moments=second_noisy, first_scales=b1, second_scales=b2,
                           n=n, centre=centre, half_range=half, propensity_floor=tuple(float(f) for f in floors),
                           epsilon_mean=eps_m, epsilon_variance=eps_v,
                           delta=laplace_delta(epsilon=eps_m + eps_v, scales=scales,
                                               grids=[release_grid(b) for b in scales]))


def _arm_indices(name: str, values: ArrayLike, K: int) -> NDArray[np.intp]:
    arr = np.asarray(values)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must be a 1-D array of arm positions (integers in [0, {K - 1}]).")
    bad = (arr < 0) | (arr >= K)
    if bad.any():
        raise ValueError(f"{name} must hold arm positions in [0, {K - 1}]; {int(bad.sum())} of {arr.size} entries "
                         "do not.")
    return arr.astype(np.intp)
