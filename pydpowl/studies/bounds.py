"""Utility bounds for DP-wERM / DP-OWL with output perturbation (Theorems 10-11, Corollary 12).

The paper's body was not available to this project, so these are *derived*
standard forms for output perturbation with Gamma-norm noise, written with the
paper's ingredients; ``docs/utility_bounds.md`` has the derivations. Symbols:

=====================  ==================================================================
``n``                  training size
``p``                  number of released coefficients (intercept included; ``d`` in code)
``epsilon``            privacy budget
``gamma``              regularisation constant, DPpack's convention: the objective is
                       ``F(theta) = (1/n) sum_i w_i l_h(y_i z_i'theta) + gamma/(2n) ||theta||^2``
``W``                  public bound on the weights ``w_i`` (OWL: ``B_i / P(A_i | x_i)``)
``C``                  weight sensitivity (0 for known propensities)
``Delta``              l2 sensitivity of the minimiser, ``(C + 2W) / gamma`` (the released solution adds
                       ``2 n tol / gamma``, negligible here and ignored)
``h``                  Huber smoothing of the hinge (DPpack: 0.5)
``theta_star``         any comparison vector in the scaled space (``||z_i|| <= 1``);
                       ``theta_norm = ||theta_star||``
``rho``                failure probability of the noise bound
``delta``              failure probability of the sampling (generalisation) bound
=====================  ==================================================================

Risks are *weighted hinge* risks (the OWL surrogate of the weighted
misclassification risk ``E[w 1{y != sign(z'theta)}]``, which the hinge bounds
from above): ``R_hat(theta) = (1/n) sum_i w_i max(0, 1 - y_i z_i'theta)`` and
``R(theta) = E[w max(0, 1 - y z'theta)]``. The released vector is
``theta_tilde = theta_hat + b`` with ``||b|| ~ Gamma(p, rate = epsilon / Delta)``.

* :func:`a_p`: ``a_p(rho)``, the ``(1 - rho)`` quantile of Gamma(p, 1), so that
  ``P(||b|| > a_p(rho) Delta / epsilon) = rho``; ``kind="union"`` gives the
  closed-form upper bound ``p log(p / rho)`` (a Gamma(p, 1) is a sum of p
  Exp(1) variables; if it exceeds ``p t`` one of them exceeds ``t``).
* :func:`empirical_risk_bound` (Theorem 10): with probability at least
  ``1 - rho`` over the noise (or in expectation with ``rho=None``),
  ``R_hat(theta_tilde) - R_hat(theta_star) <= T1 + T2 + T3`` with
  ``T1 = gamma ||theta_star||^2 / (2n)`` (regularisation),
  ``T2 = W a_p(rho) Delta / epsilon`` (DP noise; ``W p Delta / epsilon`` in
  expectation) and ``T3 = W h / 4`` (Huber-to-hinge).
* :func:`population_risk_bound` (Theorem 11): adds twice a uniform deviation
  ``U`` over the ball that holds ``theta_star`` and ``theta_tilde``; holds with
  probability at least ``1 - rho - delta``.
* :func:`sample_complexity` (Corollary 12): the smallest n whose population
  bound, with the gamma that minimises it, is at most a target ``alpha > T3``.
  :func:`bound_optimal_gamma` gives the closed-form minimiser of ``T1 + T2``,
  ``gamma* ~ sqrt(n / epsilon)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Union

from .._validation import check_int, check_positive, check_probability

__all__ = [
    "a_p",
    "noise_norm_bound",
    "expected_noise_norm",
    "RiskBound",
    "empirical_risk_bound",
    "population_risk_bound",
    "bound_optimal_gamma",
    "population_optimal_gamma",
    "solution_norm_bound",
    "sample_complexity",
]


def _check_nonneg(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0 <= float(value) < math.inf):
        raise ValueError(f"{name} must be in [0, inf), got {name}={value!r}.")
    return float(value)


def a_p(rho: float, p: int, *, kind: str = "quantile") -> float:
    """``a_p(rho)``: a bound with ``P(Gamma(p, 1) > a_p(rho)) <= rho``.

    Parameters
    ----------
    rho : float
        Failure probability in (0, 1).
    p : int
        Shape of the Gamma law: the number of released coefficients.
    kind : {"quantile", "union"}, default="quantile"
        "quantile": the exact ``(1 - rho)`` quantile (equality in the tail
        bound); "union": ``p log(p / rho)``, the closed form of Chaudhuri et
        al. (2011), which is never smaller.
    """
    rho = check_probability("rho", rho, low_open=True, high_open=True)
    p = check_int("p", p, minimum=1)
    if kind == "quantile":
        from scipy.stats import gamma

        return float(gamma.isf(rho, p))
    if kind == "union":
        return p * math.log(p / rho)
    raise ValueError(f"kind must be 'quantile' or 'union', got kind={kind!r}.")


def _delta(gamma: float, W: float, C: float) -> float:
    return (_check_nonneg("C", C) + 2.0 * check_positive("W", W)) / check_positive("gamma", gamma)


def expected_noise_norm(*, p: int, epsilon: float, gamma: float, W: float, C: float = 0.0) -> float:
    """``E||b|| = p Delta / epsilon`` (mean of Gamma(p, rate = epsilon / Delta))."""
    p = check_int("p", p, minimum=1)
    return p * _delta(gamma, W, C) / check_positive("epsilon", epsilon)


def noise_norm_bound(rho: float, *, p: int, epsilon: float, gamma: float, W: float, C: float = 0.0,
                     kind: str = "quantile") -> float:
    """``a_p(rho) Delta / epsilon``: exceeded by ``||b||`` with probability at most ``rho``."""
    return a_p(rho, p, kind=kind) * _delta(gamma, W, C) / check_positive("epsilon", epsilon)


def solution_norm_bound(*, n: int, gamma: float, W: float, h: float = 0.5) -> float:
    """``||theta_hat|| <= sqrt(2 n W l_h(0) / gamma)``, from ``F(theta_hat) <= F(0) <= W l_h(0)``.

    ``l_h(0) = 1`` when ``h < 1`` (linear zone), else ``(1 + h)^2 / (4h)``.
    """
    n = check_int("n", n, minimum=1)
    h = check_positive("h", h)
    loss0 = 1.0 if h < 1.0 else (1.0 + h) ** 2 / (4.0 * h)
    return math.sqrt(2.0 * n * check_positive("W", W) * loss0 / check_positive("gamma", gamma))


@dataclass(frozen=True)
class RiskBound:
    """Terms of a utility bound (all in units of the weighted hinge risk).

    Attributes
    ----------
    T1 : float
        Regularisation, ``gamma ||theta_star||^2 / (2n)``.
    T2 : float
        DP noise, ``W a_p(rho) Delta / epsilon`` (``W p Delta / epsilon`` in expectation).
    T3 : float
        Huber-to-hinge, ``W h / 4``.
    T4 : float
        Generalisation, ``2 U`` (0 for the empirical bound).
    probability : float or None
        Probability with which the bound holds (None: a bound in expectation).
    """

    T1: float
    T2: float
    T3: float
    T4: float = 0.0
    probability: Optional[float] = None

    @property
    def total(self) -> float:
        """``T1 + T2 + T3 + T4``."""
        return self.T1 + self.T2 + self.T3 + self.T4


def empirical_risk_bound(*, n: int, p: int, epsilon: float, gamma: float, W: float, theta_norm: float,
                         h: float = 0.5, rho: Optional[float] = 0.05, C: float = 0.0,
                         kind: str = "quantile") -> RiskBound:
    """Theorem 10 (derived form): ``R_hat(theta_tilde) - R_hat(theta_star) <= T1 + T2 + T3``.

    Parameters
    ----------
    n, p, epsilon, gamma, W, C, h
        See the module docstring.
    theta_norm : float
        ``||theta_star||`` of the comparison vector (scaled space).
    rho : float or None, default=0.05
        The bound holds with probability at least ``1 - rho`` over the noise;
        None gives the bound on the expected excess risk (``E||b|| = p Delta / epsilon``).
    kind : {"quantile", "union"}
        Form of ``a_p(rho)``.

    Notes
    -----
    ``R_hat(theta_tilde) <= L_h(theta_tilde)`` (hinge <= Huber hinge)
    ``<= L_h(theta_hat) + W ||b||`` (each term is W-Lipschitz in theta, ``||z|| <= 1``)
    ``<= L_h(theta_star) + gamma ||theta_star||^2 / (2n) + W ||b||`` (theta_hat minimises F)
    ``<= R_hat(theta_star) + W h / 4 + T1 + W ||b||`` (Huber hinge <= hinge + h/4).
    """
    n = check_int("n", n, minimum=1)
    theta_norm = _check_nonneg("theta_norm", theta_norm)
    eps = check_positive("epsilon", epsilon)
    W = check_positive("W", W)
    h = check_positive("h", h)
    T1 = check_positive("gamma", gamma) * theta_norm ** 2 / (2.0 * n)
    if rho is None:
        T2 = W * expected_noise_norm(p=p, epsilon=eps, gamma=gamma, W=W, C=C)
        prob = None
    else:
        T2 = W * noise_norm_bound(rho, p=p, epsilon=eps, gamma=gamma, W=W, C=C, kind=kind)
        prob = 1.0 - rho
    return RiskBound(T1=T1, T2=T2, T3=W * h / 4.0, probability=prob)


def population_risk_bound(*, n: int, p: int, epsilon: float, gamma: float, W: float, theta_norm: float,
                          h: float = 0.5, rho: float = 0.05, delta: float = 0.05, C: float = 0.0,
                          kind: str = "quantile") -> RiskBound:
    """Theorem 11 (derived form): ``R(theta_tilde) - R(theta_star) <= T1 + T2 + T3 + 2U``.

    With probability at least ``1 - rho - delta``, where ``U`` bounds
    ``sup_{||theta|| <= B} |R(theta) - R_hat(theta)|`` with probability ``1 - delta``:
    ``U = 2 W B / sqrt(n) + W (1 + B) sqrt(log(2 / delta) / (2n))`` (Rademacher
    complexity ``W B / sqrt(n)`` of the W-Lipschitz weighted hinge over linear
    rules with ``||z|| <= 1``, and McDiarmid with range ``W (1 + B)``), and
    ``B = max(||theta_star||, sqrt(2 n W l_h(0) / gamma) + a_p(rho) Delta / epsilon)``
    holds both ``theta_star`` and, with probability ``1 - rho``, ``theta_tilde``.
    """
    emp = empirical_risk_bound(n=n, p=p, epsilon=epsilon, gamma=gamma, W=W, theta_norm=theta_norm, h=h,
                               rho=rho, C=C, kind=kind)
    delta = check_probability("delta", delta, low_open=True, high_open=True)
    radius = max(theta_norm, solution_norm_bound(n=n, gamma=gamma, W=W, h=h)
                 + noise_norm_bound(rho, p=p, epsilon=epsilon, gamma=gamma, W=W, C=C, kind=kind))
    U = 2.0 * W * radius / math.sqrt(n) + W * (1.0 + radius) * math.sqrt(math.log(2.0 / delta) / (2.0 * n))
    return RiskBound(T1=emp.T1, T2=emp.T2, T3=emp.T3, T4=2.0 * U, probability=1.0 - rho - delta)


def bound_optimal_gamma(*, n: int, p: int, epsilon: float, W: float, theta_norm: float,
                        rho: Optional[float] = 0.05, C: float = 0.0, kind: str = "quantile") -> float:
    """The gamma minimising ``T1 + T2`` of :func:`empirical_risk_bound`: ``sqrt(2 n K) / ||theta_star||``.

    ``K = W a (C + 2W) / epsilon`` with ``a = a_p(rho)`` (or ``p`` in
    expectation), so ``gamma* ~ sqrt(n / epsilon)``: larger for more data and
    for smaller budgets, as Algorithm 2's tables show.
    """
    n = check_int("n", n, minimum=1)
    theta_norm = check_positive("theta_norm", theta_norm)
    a = float(check_int("p", p, minimum=1)) if rho is None else a_p(rho, p, kind=kind)
    K = check_positive("W", W) * a * (_check_nonneg("C", C) + 2.0 * W) / check_positive("epsilon", epsilon)
    return math.sqrt(2.0 * n * K) / theta_norm


def population_optimal_gamma(*, n: int, p: int, epsilon: float, W: float, theta_norm: float, h: float = 0.5,
                             rho: float = 0.05, delta: float = 0.05, C: float = 0.0, kind: str = "quantile") -> float:
    """The gamma minimising the whole population bound of :func:`population_risk_bound`.

    The bound is a sum of convex functions of gamma (``gamma``, ``1/gamma``,
    ``1/sqrt(gamma)`` and a maximum of such), so it has one minimum; it is found
    numerically on the log scale.
    """
    from scipy.optimize import minimize_scalar

    def total(log_g: float) -> float:
        return population_risk_bound(n=n, p=p, epsilon=epsilon, gamma=math.exp(log_g), W=W, theta_norm=theta_norm,
                                     h=h, rho=rho, delta=delta, C=C, kind=kind).total

    res = minimize_scalar(total, bounds=(math.log(1e-8), math.log(1e14)), method="bounded",
                          options={"xatol": 1e-10})
    return float(math.exp(res.x))


def sample_complexity(alpha: float, *, p: int, epsilon: float, W: float, theta_norm: float, h: float = 0.5,
                      rho: float = 0.05, delta: float = 0.05, C: float = 0.0,
                      gamma: Union[str, float] = "optimal", kind: str = "quantile", n_max: int = 10 ** 15) -> int:
    """Corollary 12 (derived form): the smallest n with population bound at most ``alpha``.

    Parameters
    ----------
    alpha : float
        Target excess weighted hinge risk; must exceed ``T3 = W h / 4``, the
        Huber-to-hinge gap that no amount of data removes.
    gamma : "optimal" or float, default="optimal"
        "optimal" uses :func:`population_optimal_gamma` at each n (every term
        but T3 then vanishes as n grows, at rate ``n^(-1/4)`` or faster); a
        number keeps gamma fixed (then T2 does not shrink with n and the
        target may be unreachable). For a fixed gamma the bound decreases in n
        and in epsilon, so it does with the optimal gamma too, which makes the
        bisection exact.
    n_max : int, default=10**15
        Give up above this n.

    Raises
    ------
    ValueError
        If ``alpha <= W h / 4`` or no n up to ``n_max`` reaches it.
    """
    alpha = check_positive("alpha", alpha)
    t3 = check_positive("W", W) * check_positive("h", h) / 4.0
    if alpha <= t3:
        raise ValueError(f"alpha must exceed T3 = W h / 4 = {t3:.6g} (the Huber-to-hinge gap), got alpha={alpha!r}.")

    def bound(n: int) -> float:
        g = (population_optimal_gamma(n=n, p=p, epsilon=epsilon, W=W, theta_norm=theta_norm, h=h, rho=rho,
                                      delta=delta, C=C, kind=kind)
             if gamma == "optimal" else check_positive("gamma", gamma))
        return population_risk_bound(n=n, p=p, epsilon=epsilon, gamma=g, W=W, theta_norm=theta_norm, h=h,
                                     rho=rho, delta=delta, C=C, kind=kind).total

    if isinstance(gamma, str) and gamma != "optimal":
        raise ValueError(f"gamma must be 'optimal' or a positive number, got gamma={gamma!r}.")
    hi = 1
    while bound(hi) > alpha:
        hi *= 2
        if hi > n_max:
            raise ValueError(f"no n <= n_max={n_max} reaches alpha={alpha:g} with these settings.")
    lo = hi // 2  # bound(lo) > alpha (or lo = 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if bound(mid) <= alpha:
            hi = mid
        else:
            lo = mid
    return hi
