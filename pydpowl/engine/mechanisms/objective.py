"""Objective perturbation: Chaudhuri-Monteleoni-Sarwate (CMS) and Kifer-Smith-Thakurta (KST), with solver smoothing.

* CMS (2011, Algorithm 2; DPpack's ``EmpiricalRiskMinimizationDP.CMS``, behind
  ``svmDP`` and ``LogisticRegressionDP``): :func:`cms_calibration` gives the
  budget ``epsilon'`` of the linear term and the extra curvature ``Delta``;
  the linear term ``b`` has the same law as output noise with rate
  ``epsilon'/2``. :func:`release_cms` makes the release (and DPpack's output
  perturbation of the same class, through :mod:`.output`).
* Weighted objective perturbation (pydpowl's; DPWeightedERM and DPOWL with
  ``mechanism="objective"``): per-record losses ``w_i l(y_i z_i'theta)`` with
  ``0 <= w_i <= W`` and no weight sensitivity (C = 0);
  :func:`weighted_objective_calibration` (ridge ``max(gamma, W c / (e^{epsilon/2} - 1))``,
  linear-term budget ``epsilon - log(1 + W c / lambda)``, gradient sensitivity
  ``2 W L``) and :func:`release_weighted_objective`. The proof
  (docs/privacy_audit.md) bounds the Jacobian ratio by ``1 + W c / lambda``
  under replacement, half of CMS's ``log`` term.
* KST (2012; DPpack's ``EmpiricalRiskMinimizationDP.KST``, linear regression):
  :func:`kst_calibration`, :func:`sample_kst_noise` (an l2-Laplace term for
  ``delta = 0``, an isotropic Gaussian drawn as ``MASS::mvrnorm`` does for
  ``delta > 0``) and :func:`release_kst`.
* Solver smoothing (:func:`smoothing_share`, :func:`smoothing_rate`): the
  objective-perturbation proofs hold for the exact minimiser; the certified
  solver returns a point within ``r`` of it (``r = tol / mu`` unconstrained,
  ``2 tol / mu`` on KST's ball, with ``mu`` the public modulus of strong
  convexity of the solved objective: ``gamma / n + Delta`` for CMS,
  ``(gamma + Delta) / n`` for KST), which an extra output noise of rate
  ``epsilon_s / (2 r)`` covers (docs/dppack_family.md). It is drawn
  (:func:`sample_smoothing_noise`) from a generator derived from the stream's
  state without advancing it (:func:`~._common.derived_generator`), so an R
  stream makes exactly DPpack's draws and ends where DPpack's does; the sum is
  rounded to the release grid of the smoothing noise (:mod:`.rounding`).

Both releases take data already in DPpack's scaled space and draw, from one
generator, exactly what DPpack draws, in DPpack's order: the linear term of
the objective before the solve, the output noise after it. Two modes
(``reproduce_dppack``):

* ``False`` (default): every release has a proof for the answer the certified
  solver actually returns (the smoothing above, a share ``kappa`` of the budget).
* ``True``: DPpack 0.2.2's arithmetic and draws exactly (validation and
  replay). Its proofs assume the exact minimiser, which no optimiser returns,
  so :class:`~pydpowl.exceptions.PrivacyLeakWarning` is emitted by the caller.
  For ``LogisticRegressionDP`` DPpack's optimiser uses ``gamma = 1`` whatever
  ``gamma`` is (a stray ``gamma <- 1`` in its namespace); the caller passes
  ``optimizer_gamma=1.0`` to reproduce it.

A new variant (another calibration of the same perturbed objective) is added
here as a calibration function and a ``release_*`` function returning a
:class:`Release`, drawing its linear term with :mod:`.output` or
:mod:`.gaussian` and its smoothing noise with :func:`sample_smoothing_noise`.
See docs/dppack_family.md for the constants and the proofs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional, Tuple, Union

import numpy as np
from numpy.typing import NDArray

from ..._validation import check_epsilon, check_int, check_positive, check_probability
from ...exceptions import ConvergenceError
from ..losses import MarginLoss, loss_lipschitz
from ..problem import QuadraticProblem
from ..solver import DEFAULT_TOL, ball_error_radius, solve_least_squares, solve_weighted_erm
from ._common import derived_generator
from .gaussian import sample_isotropic_gaussian
from .output import release_output_perturbation, sample_output_noise
from .rounding import finite_release_grid, round_release

__all__ = [
    "CMSCalibration",
    "cms_calibration",
    "KSTCalibration",
    "kst_calibration",
    "kst_rounding_bound",
    "KST_ROUNDING_SHARE",
    "sample_kst_noise",
    "smoothing_share",
    "smoothing_rate",
    "solver_tolerance",
    "kst_tolerance",
    "TARGET_RADIUS",
    "TOL_FLOOR",
    "KAPPA_MIN",
    "KAPPA_FULL_N",
    "SMOOTHING_DOMAIN",
    "linear_term_shift",
    "objective_coupling_failure",
    "LINEAR_TERM_TAIL",
    "sample_smoothing_noise",
    "PERTURBATIONS",
    "Release",
    "check_perturbation",
    "release_cms",
    "release_kst",
    "JACOBIAN_SHARE",
    "WeightedObjectiveCalibration",
    "weighted_objective_calibration",
    "objective_ridge_floor",
    "loss_curvature",
    "weighted_objective_split",
    "release_weighted_objective",
]


@dataclass(frozen=True)
class CMSCalibration:
    """Public constants of objective perturbation (Chaudhuri, Monteleoni & Sarwate 2011, Algorithm 2).

    In DPpack's scaling the perturbed objective is

        J(theta) = (1/n) sum_i l(y_i z_i'theta) + gamma/(2n) ||theta||^2 + b'theta/n + (Delta/2) ||theta||^2,

    (Chaudhuri's Lambda is ``gamma / n``) and ``||b||`` is Gamma(d, rate), uniform direction.

    Attributes
    ----------
    epsilon : float
        Budget the calibration was computed for.
    epsilon_prime : float
        Budget left for the linear term after the curvature term.
    Delta : float
        Extra curvature (0 unless ``epsilon - log(1 + 2c/gamma + c^2/gamma^2) <= 0``).
    rate : float
        ``epsilon_prime / 2``: rate of the Gamma law of ``||b||`` (``inf`` for ``epsilon = inf``).
    """

    epsilon: float
    epsilon_prime: float
    Delta: float
    rate: float


def cms_calibration(*, epsilon: float, gamma: float, c: float, n: int) -> CMSCalibration:
    """Objective-perturbation constants in DPpack's arithmetic (``EmpiricalRiskMinimizationDP.CMS$fit``).

    ``epsilon' = epsilon - log(1 + 2c/gamma + c^2/gamma^2)``; if ``epsilon' > 0``
    then ``Delta = 0``, else ``Delta = c / (n (exp(epsilon/4) - 1)) - gamma/n``
    and ``epsilon' = epsilon/2``. The linear term's norm has rate ``epsilon'/2``.

    Parameters
    ----------
    epsilon : float
        Budget in (0, inf]; ``inf`` gives ``Delta = 0`` and no noise.
    gamma : float
        Regularisation constant in (0, inf) (DPpack's convention).
    c : float
        Bound on the loss curvature ``l''`` (1/(2h) for the Huber hinge, 1/4 for the logistic loss).
    n : int
        Number of rows (public).
    """
    eps = check_epsilon(epsilon)
    gamma = check_positive("gamma", gamma)
    c = check_positive("c", c)
    n = check_int("n", n, minimum=1)
    if eps == math.inf:
        return CMSCalibration(epsilon=eps, epsilon_prime=math.inf, Delta=0.0, rate=math.inf)
    # R: eps - log(1 + 2*c/gamma + c^2/gamma^2), with x^2 computed as x*x
    eps_prime = eps - math.log(1.0 + 2.0 * c / gamma + (c * c) / (gamma * gamma))
    if eps_prime > 0:
        delta_curv = 0.0
    else:
        delta_curv = c / (n * (math.exp(eps / 4.0) - 1.0)) - gamma / n
        eps_prime = eps / 2.0
    return CMSCalibration(epsilon=eps, epsilon_prime=eps_prime, Delta=delta_curv, rate=eps_prime / 2.0)


# ----------------------------------------------------------------------------- objective perturbation (KST)


@dataclass(frozen=True)
class KSTCalibration:
    """Public constants of Kifer, Smith & Thakurta's objective perturbation for linear regression.

    DPpack (``LinearRegressionDP``) scales rows to ``|x_j| <= 1`` (so ``||x|| <=
    sqrt(p)``), targets to ``|y| <= p`` and constrains ``||theta||^2 <= p``: then the
    per-record gradient is bounded by ``zeta = 2 p^(3/2)`` and the Hessian ``x x'``
    has rank one and eigenvalue at most ``lambda = p``. The perturbed objective is

        J(theta) = (1/n) sum_i (y_i - x_i'theta)^2 / 2 + (gamma + Delta)/(2n) ||theta||^2 + b'theta/n

    with ``Delta = 2 lambda / epsilon``.

    Attributes
    ----------
    epsilon, delta : float
    p : int
        Number of coefficients (intercept included).
    zeta, lam : float
        Gradient and Hessian bounds on the domain.
    Delta : float
        Extra ridge (0 for ``epsilon = inf``).
    rate : float
        ``delta = 0``: ``epsilon / (2 zeta)``, rate of the Gamma law of ``||b||``.
    variance : float
        ``delta > 0``: ``zeta^2 (8 log(2/delta) + 4 epsilon) / epsilon^2``, per-coordinate variance of ``b``.
    """

    epsilon: float
    delta: float
    p: int
    zeta: float
    lam: float
    Delta: float
    rate: float
    variance: float


def kst_calibration(*, epsilon: float, delta: float, p: int) -> KSTCalibration:
    """KST constants in DPpack's arithmetic (``LinearRegressionDP``, ``EmpiricalRiskMinimizationDP.KST$fit``).

    Parameters
    ----------
    epsilon : float
        Budget in (0, inf].
    delta : float
        In [0, 1); 0 gives pure epsilon-DP (l2-Laplace ``b``), > 0 gives
        (epsilon, delta)-DP (Gaussian ``b``). DPpack fails for ``epsilon = inf``
        with ``delta > 0`` (its covariance is NaN): refused here.
    p : int
        Number of coefficients, intercept included.
    """
    eps = check_epsilon(epsilon)
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.integer, np.floating)) \
            or not (0.0 <= float(delta) < 1.0):
        raise ValueError(f"delta must be in [0, 1), got delta={delta!r}.")
    delta = float(delta)
    p = check_int("p", p, minimum=1)
    if eps == math.inf and delta > 0:
        raise ValueError("epsilon=inf with delta > 0 has no noise law (DPpack's covariance is NaN and its fit "
                         "fails); use delta=0 for a non-private fit.")
    zeta = 2.0 * math.pow(p, 1.5)  # R: 2*p^(3/2)
    lam = float(p)
    Delta = 0.0 if eps == math.inf else 2.0 * lam / eps
    rate = eps / (2.0 * zeta)
    variance = math.nan
    if delta > 0:
        variance = (zeta * zeta * (8.0 * math.log(2.0 / delta) + 4.0 * eps)) / (eps * eps)
    return KSTCalibration(epsilon=eps, delta=delta, p=p, zeta=zeta, lam=lam, Delta=Delta, rate=rate,
                          variance=variance)


def sample_kst_noise(calibration: KSTCalibration, *, rng: Any) -> NDArray[np.float64]:
    """The linear term ``b`` of KST objective perturbation, with DPpack's draws.

    ``delta = 0``: ``rgamma(1, p, rate = epsilon/(2 zeta))`` then ``rnorm(p)``
    (drawn even for ``epsilon = inf``, as DPpack does, and then discarded: zeros).
    ``delta > 0``: :func:`sample_isotropic_gaussian`.
    """
    cal = calibration
    if cal.delta == 0:
        b = sample_output_noise(cal.p, cal.rate, rng=rng)
        if cal.epsilon == math.inf:
            return np.zeros(cal.p)
        return b
    return sample_isotropic_gaussian(cal.p, cal.variance, rng=rng)


#: the solver-error radius objective perturbation asks of Newton, ``tol / mu`` (scaled space; public)
TARGET_RADIUS = 2.0 ** -30
#: the smallest gradient norm asked of Newton, relative to the public gradient scale: rounding leaves the
#: certified gradient near 1e-16 of it (measured up to n = 1e6), far below this
TOL_FLOOR = 2.0 ** -46
#: the smallest budget share of the smoothing noise from ``KAPPA_FULL_N`` rows on (1/64; ``KAPPA_MIN n /
#: KAPPA_FULL_N`` below): with the tolerance's target its noise is then negligible next to the perturbation's,
#: which it is anyway at small n (where the share stays near DPpack's 0)
KAPPA_MIN = 2.0 ** -6
KAPPA_FULL_N = 2 ** 18


def solver_tolerance(*, tol: Optional[float], strong_convexity: float, gradient_scale: float) -> float:
    """The gradient norm objective perturbation certifies.

    ``tol`` if given, else ``max(mu TARGET_RADIUS, TOL_FLOOR G)``.

    With an absolute ``tol`` the certified radius ``r = tol / mu`` grows like
    ``n`` (``mu``, the public modulus, shrinks like ``1/n``) and so does the
    smoothing noise that covers it. Set from ``mu`` the target keeps ``r`` at
    ``TARGET_RADIUS`` until the rounding floor ``TOL_FLOOR G`` (``G`` a public
    bound on the objective's gradient scale: 1 for CMS's margin losses, ``zeta``
    for KST) takes over (from ``n = 2^16 gamma / G`` on, with ``mu = gamma / n``);
    Newton reaches it. Public: a function of public settings and ``n``.
    """
    mu = check_positive("strong_convexity", strong_convexity)
    g = check_positive("gradient_scale", gradient_scale)
    if tol is not None:
        return check_positive("tol", tol)
    return max(mu * TARGET_RADIUS, TOL_FLOOR * g)


def smoothing_share(*, n: int, tol: float, error_radius: float, strong_convexity: float,
                    gradient_sensitivity: float) -> float:
    """Share ``kappa`` of the budget given to the solver-smoothing noise.

    The objective-perturbation noise moves the minimiser by about
    ``gradient_sensitivity / (epsilon n mu)`` and the smoothing noise by about
    ``2 r / (kappa epsilon)`` (``r`` the certified error radius): the sum is
    smallest near ``kappa = sqrt(r n mu / gradient_sensitivity)``. That first
    term is a public worst case (``mu`` is the public modulus, far below the
    data's curvature, and ``r`` has a floor from rounding), so the share is kept
    at least ``KAPPA_MIN min(1, n / KAPPA_FULL_N)`` (1/64 from 262,144 rows) and at
    most 1/2. Public: it depends on ``n``, the solver tolerance and public constants only.
    """
    n = check_int("n", n, minimum=1)
    check_positive("tol", tol)
    r = check_positive("error_radius", error_radius)
    mu = check_positive("strong_convexity", strong_convexity)
    s = check_positive("gradient_sensitivity", gradient_sensitivity)
    return min(0.5, max(KAPPA_MIN * min(1.0, n / KAPPA_FULL_N), math.sqrt(r * n * mu / s)))


#: tail probability of the public bound on the linear term's norm (:func:`linear_term_shift`)
LINEAR_TERM_TAIL = 2.0 ** -60
#: the largest tail allowed for the direction's normal vector being short (:func:`_short_direction`)
_SHORT_TAIL = 2.0 ** -32


def _short_direction(d: int) -> Tuple[float, float]:
    """``(s0, P(||z|| < s0))`` for ``z ~ N(0, I_d)``: the largest ``s0 = 2^-k`` whose tail bound
    ``(s0^2 / 2)^(d/2) / Gamma(d/2 + 1)`` is at most 2^-32."""
    for k in range(1, 64):
        s0 = 2.0 ** -k
        tail = math.exp((d / 2.0) * math.log(s0 * s0 / 2.0) - math.lgamma(d / 2.0 + 1.0))
        if tail <= _SHORT_TAIL:
            return s0, tail
    raise AssertionError("unreachable: 2^-63 qualifies for every d >= 1")


def _gamma_tail_point(d: int, tail: float) -> float:
    """``t >= d`` with ``P(Gamma(d, 1) > t) <= tail`` by the Chernoff bound ``(e t / d)^d e^-t``."""
    t = d + 1.0
    while d * math.log(math.e * t / d) - t > math.log(tail):
        t += 1.0
    return t


def linear_term_shift(*, dim: int, modulus: float, rate: Optional[float] = None,
                      variance: Optional[float] = None) -> float:
    """Public bound on how far the computed linear term moves the minimiser from an exact draw's.

    The proofs hold for an exact linear term ``b``; the computed ``b~`` is within
    the sampler model's error of one (numpy's Generator; docs/privacy_audit.md):
    an l2-Laplace ``b`` (``rate``) within ``kappa u ||b|| + 2 sqrt(d) eta ||b|| /
    ||z|| + a / rate`` (radius ulps, the direction's normals, the small-radius
    term), with ``||b|| <= t / rate`` (``P(Gamma(d) > t) <= LINEAR_TERM_TAIL``)
    and ``||z|| >= s0`` (:func:`_short_direction`) outside tails; a Gaussian ``b`` (``variance``)
    within ``sqrt(d) sigma (eta + 26 u)`` (``|z_k| <= 13`` outside a tail). The
    minimiser of an objective with modulus ``mu`` moves by at most ``||b~ - b|| /
    (n mu)`` (``modulus = n mu``: ``gamma + n Delta`` for CMS, ``gamma + Delta``
    for KST, ball or not), so the smoothing noise covers it when added to the
    solver's radius; the tails (at most ``2^-60 + 2^-32``) are a coupling
    failure of the release (:func:`objective_coupling_failure`).
    """
    from .rounding import NORMAL_ABSOLUTE_ERROR, SAMPLER_RADIUS_ULPS, _radius_absolute_error

    d = check_int("dim", dim, minimum=1)
    m = check_positive("modulus", modulus)
    u = 2.0 ** -53
    if variance is not None:
        sigma = math.sqrt(check_positive("variance", variance))
        return math.sqrt(d) * sigma * (NORMAL_ABSOLUTE_ERROR + 26.0 * u) / m
    rate = check_positive("rate", rate)
    top = _gamma_tail_point(d, LINEAR_TERM_TAIL) / rate
    relative = (SAMPLER_RADIUS_ULPS + d + 4) * u
    if d > 1:
        relative += 2.0 * math.sqrt(d) * NORMAL_ABSOLUTE_ERROR / _short_direction(d)[0]
    return (relative * top + _radius_absolute_error(d) / rate) / m


def objective_coupling_failure(dim: int) -> float:
    """Probability outside :func:`linear_term_shift`'s bound: ``2^-60`` plus the short-direction tail (d > 1).

    An objective-perturbation release is ``(epsilon, delta)``-DP with ``delta``
    the smoothing noise's :func:`~.rounding.floating_point_delta` plus
    :func:`~.rounding.coupling_delta` ``(epsilon, objective_coupling_failure(d))``
    (at most 8.6e-10 at epsilon 1).
    """
    d = check_int("dim", dim, minimum=1)
    return LINEAR_TERM_TAIL + (_short_direction(d)[1] if d > 1 else 0.0)


def smoothing_rate(*, epsilon: float, error_radius: float) -> float:
    """Rate ``epsilon / (2 r)`` of the l2-Laplace noise covering a solver error of at most ``r``.

    For neighbours the two certified answers lie within ``r`` of their exact
    minimisers, so given the exact minimiser the answer has sensitivity ``2 r``.
    """
    eps = check_positive("epsilon", epsilon)
    r = check_positive("error_radius", error_radius)
    return eps / (2.0 * r)


#: domain tag of the generator the solver-smoothing noise is drawn from (:func:`sample_smoothing_noise`)
SMOOTHING_DOMAIN = "pydpowl/solver-smoothing/v1"


def sample_smoothing_noise(dim: int, *, epsilon: float, error_radius: float, rng: Any) -> NDArray[np.float64]:
    """The solver-smoothing noise of objective perturbation: rate :func:`smoothing_rate`, drawn from
    :func:`derived_generator` (domain :data:`SMOOTHING_DOMAIN`), so an R stream is not advanced.

    The one place this noise is drawn (CMS and KST alike: :func:`release_cms`, :func:`release_kst`).
    """
    rate = smoothing_rate(epsilon=epsilon, error_radius=error_radius)
    return sample_output_noise(dim, rate, rng=derived_generator(rng, domain=SMOOTHING_DOMAIN))


#: DPpack's perturbation methods
PERTURBATIONS = ("objective", "output")


@dataclass(frozen=True)
class Release:
    """One private fit in the scaled space. Only ``coef`` is a release; the rest is private or public as noted.

    Attributes
    ----------
    coef : ndarray of shape (d,)
        The released coefficients (scaled space).
    minimiser : ndarray of shape (d,)
        PRIVATE. The certified minimiser of the objective that was solved (perturbed
        for objective perturbation); ``coef = minimiser + noise``.
    noise : ndarray of shape (d,)
        PRIVATE. Output noise (output perturbation), smoothing noise (objective
        perturbation, ``reproduce_dppack=False``) or zeros.
    linear_term : ndarray of shape (d,) or None
        PRIVATE. The linear term ``b`` of objective perturbation.
    epsilon : float
        Total budget (public).
    epsilon_objective : float
        Budget of the perturbation proper (``epsilon`` minus the smoothing share).
    epsilon_smoothing : float
        Budget of the smoothing noise (0 when none).
    Delta : float
        Extra curvature of objective perturbation in DPpack's units (0 for output perturbation).
    epsilon_prime : float
        CMS only: budget of the linear term (nan otherwise).
    rate : float
        Gamma rate of the norm of the linear term (objective) or of the output noise (output);
        nan for KST with delta > 0.
    sensitivity : float
        Output perturbation: the l2 sensitivity used; objective: nan.
    error_radius : float
        Public bound on the distance from the returned point to the exact minimiser (nan when not used).
    n_iter : int
        Newton iterations.
    grid : float or None
        The release grid ``coef`` was rounded to (None: full precision, with
        ``reproduce_dppack`` or without noise).
    calibration : WeightedObjectiveCalibration or None
        Weighted objective perturbation only: its public constants.
    """

    coef: NDArray[np.float64]
    minimiser: NDArray[np.float64]
    noise: NDArray[np.float64]
    linear_term: Optional[NDArray[np.float64]]
    epsilon: float
    epsilon_objective: float
    epsilon_smoothing: float
    Delta: float
    epsilon_prime: float
    rate: float
    sensitivity: float
    error_radius: float
    n_iter: int
    grid: Optional[float] = None
    calibration: Optional["WeightedObjectiveCalibration"] = None

    @property
    def smoothing_scale(self) -> float:
        """``2 r / epsilon_smoothing``: the scale of the smoothing noise (nan when there is none)."""
        if not self.epsilon_smoothing > 0:
            return math.nan
        return 2.0 * self.error_radius / self.epsilon_smoothing


def check_perturbation(value: Any) -> str:
    """``"objective"`` or ``"output"``."""
    if not isinstance(value, str) or value not in PERTURBATIONS:
        raise ValueError(f"perturbation must be one of {{'objective', 'output'}}, got perturbation={value!r}.")
    return value


def _finite(coef: NDArray[np.float64], what: str) -> NDArray[np.float64]:
    if not np.all(np.isfinite(coef)):
        raise ValueError(f"the {what} overflowed (its scale is too large for double precision); "
                         "nothing was released.")
    return coef


def release_cms(Z: NDArray[np.float64], y: NDArray[np.float64], w: NDArray[np.float64], *, loss: MarginLoss,
                gamma: float, epsilon: float, perturbation: str, curvature: float, weights_upper_bound: float,
                tol: Optional[float], reproduce_dppack: bool, rng: Any, optimizer_gamma: Optional[float] = None,
                backend: str = "auto") -> Release:
    """Objective or output perturbation of weighted ERM with a margin loss (DPpack's CMS).

    Parameters
    ----------
    Z : ndarray of shape (n, d)
        Rows of norm at most 1 (DPpack's scaled space).
    y : ndarray of shape (n,)
        Labels in {-1, 1}.
    w : ndarray of shape (n,)
        Weights in [0, weights_upper_bound] (ones for objective perturbation).
    loss : MarginLoss
        With ``|l'| <= 1``; ``curvature`` bounds ``l''`` (DPpack's ``c``).
    gamma, epsilon : float
    perturbation : {"objective", "output"}
    curvature : float
        DPpack's ``c``: 1/(2h) for the Huber hinge, 1/4 for the logistic loss.
    weights_upper_bound : float
        Public ``W`` (1 for unweighted fits, as DPpack).
    tol : float or None
        Certified gradient norm of the solver. None: :func:`solver_tolerance`'s
        target for objective perturbation, ``DEFAULT_TOL`` for output
        perturbation and with ``reproduce_dppack``.
    reproduce_dppack : bool
        See the module docstring.
    rng : numpy.random.Generator or RRandom
    optimizer_gamma : float, optional
        The gamma of the objective actually minimised (default ``gamma``); only
        ``reproduce_dppack`` may set it (DPpack's ``LogisticRegressionDP`` uses 1).
    backend : {"auto", "numpy", "numba"}, default="auto"
        The solver's backend (:func:`pydpowl.engine.solver.solve_weighted_erm`).
    """
    n, d = Z.shape
    opt_gamma = gamma if optimizer_gamma is None else float(optimizer_gamma)
    if opt_gamma != gamma and not reproduce_dppack:
        raise ValueError("optimizer_gamma differs from gamma only to reproduce DPpack (reproduce_dppack=True).")
    if perturbation == "objective":
        if np.any(w != 1.0):
            raise ValueError("objective perturbation is for unweighted fits (DPpack refuses weights with it).")
        if reproduce_dppack or epsilon == math.inf:
            tol = DEFAULT_TOL if tol is None else tol
        else:  # the target from the public modulus gamma/n (<= the solved one)
            tol = solver_tolerance(tol=tol, strong_convexity=gamma / n, gradient_scale=1.0)
        if epsilon == math.inf:  # DPpack: no draws, no extra curvature
            result = solve_weighted_erm(Z, y, w, gamma=opt_gamma, loss=loss, tol=tol, backend=backend, objective=False)
            zeros = np.zeros(d)
            return Release(coef=result.x.copy(), minimiser=result.x, noise=zeros, linear_term=zeros,
                           epsilon=epsilon, epsilon_objective=epsilon, epsilon_smoothing=0.0, Delta=0.0,
                           epsilon_prime=math.inf, rate=math.inf, sensitivity=math.nan, error_radius=math.nan,
                           n_iter=result.nit)
        if reproduce_dppack:
            kappa = 0.0
        else:  # the share from the radius that the smoothing will cover, at the full budget's calibration (public)
            cal0 = cms_calibration(epsilon=epsilon, gamma=gamma, c=curvature, n=n)
            mu0 = gamma / n + cal0.Delta
            r0 = tol / mu0 + linear_term_shift(dim=d, modulus=n * mu0, rate=cal0.rate)
            kappa = smoothing_share(n=n, tol=tol, error_radius=r0, strong_convexity=mu0, gradient_sensitivity=2.0)
        eps_obj = epsilon * (1.0 - kappa)
        cal = cms_calibration(epsilon=eps_obj, gamma=gamma, c=curvature, n=n)
        # public modulus of strong convexity of the solved objective: gamma/n from the regulariser plus the
        # extra curvature Delta (public: a function of eps, c, gamma and n)
        # plus the linear term's sampler error carried through 1 / (n mu) (linear_term_shift)
        radius = math.nan if reproduce_dppack else \
            tol / (gamma / n + cal.Delta) + linear_term_shift(dim=d, modulus=gamma + n * cal.Delta, rate=cal.rate)
        b = sample_output_noise(d, cal.rate, rng=rng)
        result = solve_weighted_erm(Z, y, w, gamma=opt_gamma, loss=loss, tol=tol, extra_ridge=n * cal.Delta,
                                    linear=b, backend=backend, objective=False)
        if reproduce_dppack:
            noise, grid = np.zeros(d), None
            coef = _finite(result.x + noise, "objective perturbation")
        else:
            noise = sample_smoothing_noise(d, epsilon=epsilon * kappa, error_radius=radius, rng=rng)
            grid = _smoothing_grid(epsilon * kappa, radius)
            coef = _finite(round_release(result.x, noise, grid=grid), "objective perturbation")
        return Release(coef=coef, minimiser=result.x, noise=noise, linear_term=b, epsilon=epsilon,
                       epsilon_objective=eps_obj, epsilon_smoothing=epsilon - eps_obj, Delta=cal.Delta,
                       epsilon_prime=cal.epsilon_prime, rate=cal.rate, sensitivity=math.nan, error_radius=radius,
                       n_iter=result.nit, grid=grid)
    tol = DEFAULT_TOL if tol is None else tol
    if perturbation != "output":
        raise ValueError(f"perturbation must be one of {{'objective', 'output'}}, got perturbation={perturbation!r}.")
    # output perturbation: the engine's one release (Delta = (2W + 2 n tol)/gamma, rounded to the release grid;
    # DPpack's arithmetic with reproduce_dppack; noise drawn even at eps = Inf, as DPpack)
    out = release_output_perturbation(Z, y, w, epsilon=epsilon, gamma=gamma, weights_upper_bound=weights_upper_bound,
                                      loss=loss, tol=tol, reproduce_dppack=reproduce_dppack, rng=rng,
                                      backend=backend, optimizer_gamma=opt_gamma)
    radius = math.nan if reproduce_dppack else n * tol / gamma
    return Release(coef=out.coef, minimiser=out.nonprivate_coef, noise=out.noise, linear_term=None, epsilon=epsilon,
                   epsilon_objective=epsilon, epsilon_smoothing=0.0, Delta=0.0, epsilon_prime=math.nan,
                   rate=epsilon / out.sensitivity, sensitivity=out.sensitivity, error_radius=radius,
                   n_iter=out.n_iter, grid=out.grid)


def _smoothing_grid(epsilon_smoothing: float, error_radius: float) -> float:
    """The release grid under the smoothing noise (l2-Laplace of scale ``2 r / epsilon_s``, as output noise
    of sensitivity ``2 r``): the same floating-point-safe rounding as every release."""
    return finite_release_grid(sensitivity=2.0 * error_radius, epsilon=epsilon_smoothing)


def kst_tolerance(tol: Optional[float], *, n: int, p: int, gamma: float, epsilon: float,
                  reproduce_dppack: bool) -> float:
    """The KKT residual :func:`release_kst` certifies: ``tol`` if given, else :func:`solver_tolerance`'s target.

    ``DEFAULT_TOL`` with ``reproduce_dppack`` or ``epsilon = inf``. The gradient
    scale is ``zeta + mu_max p sqrt(p)``: the data term's bound and the
    regulariser's on the ball, ``mu_max = (gamma + 4 p / epsilon) / n`` (KST's
    ``Delta = 2 p / epsilon_1`` with ``epsilon_1 >= epsilon / 2``), whose rounding
    (about ``2^-52 mu p sqrt(p)``) then stays near 1/64 of the target.
    """
    if tol is not None:
        return check_positive("tol", tol)
    if reproduce_dppack or epsilon == math.inf:
        return DEFAULT_TOL
    zeta = 2.0 * math.pow(p, 1.5)
    mu_max = (gamma + 4.0 * p / epsilon) / n
    return solver_tolerance(tol=None, strong_convexity=gamma / n, gradient_scale=zeta + mu_max * p * math.sqrt(p))


#: the share of tol that the rounding of KST's KKT residual may take (:func:`kst_rounding_bound`); measured: fits
#: failed from about 0.2 of tol, none below 0.1
KST_ROUNDING_SHARE = 0.1


def kst_rounding_bound(*, n: int, p: int, gamma: float, epsilon: float) -> float:
    """About how much rounding the KKT residual of KST's objective carries: ``2^-52 mu p sqrt(p)``.

    KST adds the regulariser ``Delta = 2 p / epsilon`` (``lambda = p``), so the curvature
    ``mu = (gamma + Delta) / n`` grows as ``1/epsilon``; the residual sums terms of size ``mu ||theta||``
    on the ball ``||theta|| <= sqrt(p)``. A residual computed below ``tol`` certifies nothing once this
    reaches a share of ``tol``: :func:`release_kst` refuses from ``KST_ROUNDING_SHARE tol`` on, for
    every draw alike (before, whether such a fit was refused depended on the linear term's draw).
    Public quantities only.
    """
    mu = (gamma + 2.0 * p / epsilon) / n
    return float(np.finfo(np.float64).eps) * mu * p * math.sqrt(p)


def release_kst(Z: Union[NDArray[np.float64], QuadraticProblem], y: Optional[NDArray[np.float64]] = None, *,
                gamma: float, epsilon: float, delta: float, tol: Optional[float], reproduce_dppack: bool,
                rng: Any) -> Release:
    """Kifer, Smith & Thakurta's objective perturbation for linear regression (DPpack's KST).

    Minimises ``(1/n) sum (y_i - x_i'theta)^2/2 + (gamma + Delta)/(2n) ||theta||^2 + b'theta/n``
    over ``||theta||^2 <= p`` (``p`` columns of ``Z``, intercept included).

    Parameters
    ----------
    Z : ndarray of shape (n, p), or QuadraticProblem
        Rows with ``|x_ij| <= 1`` (DPpack's scaling by ``max(|lower|, |upper|)``),
        or their sufficient statistics with the targets (then ``y`` is not given).
    y : ndarray of shape (n,)
        Targets with ``|y_i| <= p`` (DPpack's scaling).
    gamma, epsilon : float
    delta : float
        0 for pure epsilon-DP (l2-Laplace ``b``), in (0, 1) for (epsilon, delta)-DP (Gaussian ``b``).
    tol : float or None
        Certified KKT residual of the solver. None: :func:`solver_tolerance`'s
        target (``DEFAULT_TOL`` with ``reproduce_dppack`` or ``epsilon = inf``).
    reproduce_dppack : bool
        See the module docstring. Without it the answer also gets the smoothing
        noise and is projected back onto the ball (post-processing).
    rng : numpy.random.Generator or RRandom
    """
    if isinstance(Z, QuadraticProblem):
        rows = Z
    elif y is None:
        raise ValueError("y (the targets) is required when Z holds the rows, not their QuadraticProblem.")
    else:
        rows = QuadraticProblem.from_rows(Z, y)
    n, p = rows.n, rows.d
    radius_ball = math.sqrt(p)
    tol = kst_tolerance(tol, n=n, p=p, gamma=gamma, epsilon=epsilon, reproduce_dppack=reproduce_dppack)
    if not reproduce_dppack and epsilon < math.inf:
        rounding = kst_rounding_bound(n=n, p=p, gamma=gamma, epsilon=epsilon)
        if rounding >= KST_ROUNDING_SHARE * tol:  # public: the same refusal for every draw
            raise ConvergenceError(f"solver's KKT residual carries a rounding error of about {rounding:.2g}, more "
                                   f"than {KST_ROUNDING_SHARE:g} of tol={tol!r}: a residual computed below tol "
                                   "would certify nothing; nothing was released.")
    if reproduce_dppack or epsilon == math.inf:
        kappa = 0.0
    else:
        cal0 = kst_calibration(epsilon=epsilon, delta=delta, p=p)
        mu0 = (gamma + cal0.Delta) / n  # the share from the radius at the full budget's calibration (public)
        shift0 = linear_term_shift(dim=p, modulus=n * mu0, rate=cal0.rate) if delta == 0 else \
            linear_term_shift(dim=p, modulus=n * mu0, variance=cal0.variance)
        r0 = ball_error_radius(tol, mu0, radius_ball, p + mu0) + shift0
        kappa = smoothing_share(n=n, tol=tol, error_radius=r0, strong_convexity=mu0,
                                gradient_sensitivity=2.0 * cal0.zeta)
    eps_obj = epsilon * (1.0 - kappa)
    cal = kst_calibration(epsilon=eps_obj, delta=delta, p=p)
    # public modulus of strong convexity of the solved objective: (gamma + Delta)/n, Delta = 2 lambda/eps public;
    # the KKT certificate on the ball places the answer within ball_error_radius of the minimiser
    # public bound on the Hessian of F: rows have |x_j| <= 1, so X'X/n <= p, plus the ridge
    curvature = p + (gamma + cal.Delta) / n
    err = math.nan
    if kappa > 0:  # plus the linear term's sampler error carried through 1 / (n mu) (linear_term_shift)
        err = ball_error_radius(tol, (gamma + cal.Delta) / n, radius_ball, curvature) + \
            (linear_term_shift(dim=p, modulus=gamma + cal.Delta, rate=cal.rate) if delta == 0 else
             linear_term_shift(dim=p, modulus=gamma + cal.Delta, variance=cal.variance))
    b = sample_kst_noise(cal, rng=rng)
    result = solve_least_squares(rows, gamma=gamma, extra_ridge=cal.Delta, linear=b, radius=radius_ball, tol=tol,
                                 curvature_bound=curvature)
    grid = None
    if kappa > 0:
        noise = sample_smoothing_noise(p, epsilon=epsilon * kappa, error_radius=err, rng=rng)
        grid = _smoothing_grid(epsilon * kappa, err)
        coef = round_release(result.x, noise, grid=grid) if np.all(np.isfinite(result.x + noise)) else result.x + noise
        norm = float(np.linalg.norm(coef))
        if norm > radius_ball:  # back onto the domain: post-processing, keeps |x'theta| <= p for tuning
            coef = coef * (radius_ball / norm)
    else:
        noise = np.zeros(p)
        coef = result.x.copy()
    coef = _finite(coef, "objective perturbation")
    rate = cal.rate if delta == 0 else math.nan
    return Release(coef=coef, minimiser=result.x, noise=noise, linear_term=b, epsilon=epsilon,
                   epsilon_objective=eps_obj, epsilon_smoothing=epsilon - eps_obj, Delta=cal.Delta,
                   epsilon_prime=math.nan, rate=rate, sensitivity=math.nan, error_radius=err, n_iter=result.nit,
                   grid=grid)


# ----------------------------------------------------------------------------- weighted objective perturbation

#: share of the budget the Jacobian term may take at most: lambda >= W c / (e^{share epsilon} - 1)
JACOBIAN_SHARE = 0.5


@dataclass(frozen=True)
class WeightedObjectiveCalibration:
    """Public constants of weighted objective perturbation.

    The mechanism minimises

        G(theta) = sum_i w_i l(y_i z_i'theta) + (lambda / 2) ||theta||^2 + b'theta

    (``F = G / n`` in the solver's units) over rows with ``||z_i|| <= 1``,
    weights in ``[0, W]`` that depend on their own record only, ``|l'| <= L``
    and ``0 <= l'' <= c``, with ``||b||`` ~ Gamma(d, ``rate``), uniform direction.

    Attributes
    ----------
    epsilon : float
        Budget of the exact minimiser.
    ridge : float
        ``lambda = max(gamma, W c / (e^{s epsilon} - 1))`` (DPpack's gamma units).
    extra_ridge : float
        ``lambda - gamma`` (0 when gamma already suffices).
    epsilon_jacobian : float
        ``log(1 + W c / lambda)``: what the change of the Hessian costs (at most ``s epsilon``).
    epsilon_linear : float
        ``epsilon - epsilon_jacobian``: the budget of the linear term.
    gradient_sensitivity : float
        ``2 W L``: the largest change of ``b_D(theta)`` when one record is replaced.
    rate : float
        ``epsilon_linear / (2 W L)``: Gamma rate of ``||b||`` (``inf`` for ``epsilon = inf``).
    """

    epsilon: float
    ridge: float
    extra_ridge: float
    epsilon_jacobian: float
    epsilon_linear: float
    gradient_sensitivity: float
    rate: float


def objective_ridge_floor(*, epsilon: float, weights_upper_bound: float, curvature: float,
                          jacobian_share: float = JACOBIAN_SHARE) -> float:
    """``W c / (e^{share epsilon} - 1)``: the smallest ridge that keeps the Jacobian term within ``share epsilon``.

    0 for ``epsilon = inf``.
    """
    eps = check_epsilon(epsilon)
    W = check_positive("weights_upper_bound", weights_upper_bound)
    c = check_positive("curvature", curvature)
    share = check_probability("jacobian_share", jacobian_share, low_open=True, high_open=True)
    if eps == math.inf:
        return 0.0
    x = share * eps
    return W * c / math.expm1(x) if x < 700.0 else W * c * math.exp(-x)  # no overflow for huge budgets


def weighted_objective_calibration(*, epsilon: float, gamma: float, weights_upper_bound: float, curvature: float,
                                   lipschitz: float = 1.0,
                                   jacobian_share: float = JACOBIAN_SHARE) -> WeightedObjectiveCalibration:
    """The ridge and the linear term's law of weighted objective perturbation (proof: docs/privacy_audit.md).

    Parameters
    ----------
    epsilon : float
        Budget of the exact minimiser in (0, inf]; ``inf``: no noise, ridge ``gamma``.
    gamma : float
        The analyst's ridge (DPpack's convention, ``F = ... + gamma/(2n) ||theta||^2``).
    weights_upper_bound : float
        Public W (every weight in [0, W]).
    curvature : float
        ``c`` with ``0 <= l'' <= c`` (1/(2h) for the Huber hinge, 1/4 for the logistic loss).
    lipschitz : float, default=1.0
        ``L`` with ``|l'| <= L``.
    jacobian_share : float, default=0.5
        ``s`` in (0, 1): the ridge is raised to ``W c / (e^{s epsilon} - 1)`` when
        gamma is smaller, so the Jacobian term costs at most ``s epsilon``.
    """
    eps = check_epsilon(epsilon)
    gamma = check_positive("gamma", gamma)
    W = check_positive("weights_upper_bound", weights_upper_bound)
    c = check_positive("curvature", curvature)
    lip = check_positive("lipschitz", lipschitz)
    floor = objective_ridge_floor(epsilon=eps, weights_upper_bound=W, curvature=c, jacobian_share=jacobian_share)
    sens = 2.0 * W * lip
    if eps == math.inf:
        return WeightedObjectiveCalibration(epsilon=eps, ridge=gamma, extra_ridge=0.0, epsilon_jacobian=0.0,
                                            epsilon_linear=math.inf, gradient_sensitivity=sens, rate=math.inf)
    ridge = max(gamma, floor)
    eps_jac = math.log1p(W * c / ridge)
    eps_lin = eps - eps_jac
    if not eps_lin > 0:  # cannot happen: ridge >= floor gives eps_jac <= share * eps < eps
        raise AssertionError(f"objective perturbation: no budget left for the linear term ({eps_lin!r}).")
    return WeightedObjectiveCalibration(epsilon=eps, ridge=ridge, extra_ridge=ridge - gamma,
                                        epsilon_jacobian=eps_jac, epsilon_linear=eps_lin, gradient_sensitivity=sens,
                                        rate=eps_lin / sens)


def weighted_objective_split(*, n: int, epsilon: float, gamma: float, weights_upper_bound: float, curvature: float,
                             lipschitz: float, tol: float, jacobian_share: float = JACOBIAN_SHARE
                             ) -> "tuple[float, WeightedObjectiveCalibration]":
    """``(kappa, calibration)``: the solver-smoothing share of a finite ``epsilon`` and the constants of the
    perturbation proper at ``(1 - kappa) epsilon`` (what :func:`release_weighted_objective` uses; public)."""
    # the smoothing share depends on n tol and the gradient sensitivity only (r mu = tol for any modulus mu)
    kappa = smoothing_share(n=n, tol=tol, error_radius=n * tol / gamma, strong_convexity=gamma / n,
                            gradient_sensitivity=2.0 * weights_upper_bound * lipschitz)
    cal = weighted_objective_calibration(epsilon=epsilon * (1.0 - kappa), gamma=gamma,
                                         weights_upper_bound=weights_upper_bound, curvature=curvature,
                                         lipschitz=lipschitz, jacobian_share=jacobian_share)
    return kappa, cal


def loss_curvature(loss: MarginLoss) -> float:
    """The loss's declared bound on ``l''`` (objective perturbation needs one)."""
    c = getattr(loss, "curvature_bound", None)
    if c is None or not (math.isfinite(float(c)) and float(c) > 0):
        raise ValueError(f"objective perturbation needs a bound on the loss's curvature l''; the loss "
                         f"{getattr(loss, 'name', loss)!r} declares curvature_bound={c!r} (declare a positive one, "
                         "or use output perturbation).")
    return float(c)


def release_weighted_objective(Z: NDArray[np.float64], y: NDArray[np.float64], w: NDArray[np.float64], *,
                               epsilon: float, gamma: float, weights_upper_bound: float, loss: MarginLoss,
                               tol: float, rng: Any, backend: str = "auto",
                               jacobian_share: float = JACOBIAN_SHARE) -> Release:
    """Weighted objective perturbation with the solver-smoothing composition, rounded to the release grid.

    The exact minimiser of ``G`` (:class:`WeightedObjectiveCalibration`) is
    released at ``epsilon_objective = (1 - kappa) epsilon``; the certified
    answer lies within ``r = n tol / lambda`` of it (``F = G / n`` is
    ``lambda / n``-strongly convex), which the smoothing noise of rate
    ``kappa epsilon / (2 r)`` covers (adaptive composition, as :func:`release_cms`);
    ``kappa`` = :func:`smoothing_share` with gradient sensitivity ``2 W L``.

    Parameters
    ----------
    Z, y, w : ndarray
        Rows of norm at most 1, labels in {-1, 1}, weights in [0, W], already
        checked (or built to satisfy it) by the caller. The weights must not
        depend on other records (weight sensitivity 0): known propensities, or
        anything released before.
    epsilon, gamma, weights_upper_bound : float
        Checked public settings (``epsilon`` may be inf: the exact minimiser at ridge gamma).
    loss : MarginLoss
        With a Lipschitz constant and a curvature bound (:func:`loss_curvature`).
    tol : float
        The solver's certified gradient norm (``F = G / n``).
    rng : numpy Generator or RRandom
        The linear term is drawn from it (``rgamma`` then ``rnorm`` with an R
        stream); the smoothing noise from a generator derived from it.
    backend : {"auto", "numpy", "numba"}
    jacobian_share : float, default=0.5
        See :func:`weighted_objective_calibration`.

    Returns
    -------
    Release
        ``Delta`` is the extra ridge in DPpack's units (``extra_ridge / n``),
        ``epsilon_prime`` the linear term's budget, ``calibration`` the constants.
    """
    n, d = Z.shape
    eps = check_epsilon(epsilon)
    W = check_positive("weights_upper_bound", weights_upper_bound)
    lip = loss_lipschitz(loss)
    c = loss_curvature(loss)
    tol = check_positive("tol", tol)
    if eps == math.inf:
        cal = weighted_objective_calibration(epsilon=eps, gamma=gamma, weights_upper_bound=W, curvature=c,
                                             lipschitz=lip)
        result = solve_weighted_erm(Z, y, w, gamma=gamma, loss=loss, tol=tol, backend=backend, objective=False)
        zeros = np.zeros(d)
        return Release(coef=result.x.copy(), minimiser=result.x, noise=zeros, linear_term=zeros, epsilon=eps,
                       epsilon_objective=eps, epsilon_smoothing=0.0, Delta=0.0, epsilon_prime=math.inf,
                       rate=math.inf, sensitivity=math.nan, error_radius=math.nan, n_iter=result.nit, grid=None,
                       calibration=cal)
    kappa, cal = weighted_objective_split(n=n, epsilon=eps, gamma=gamma, weights_upper_bound=W, curvature=c,
                                          lipschitz=lip, tol=tol, jacobian_share=jacobian_share)
    eps_obj = cal.epsilon
    radius = n * tol / cal.ridge  # F = G / n is (ridge / n)-strongly convex
    b = _finite(sample_output_noise(d, cal.rate, rng=rng), "linear term of objective perturbation")
    result = solve_weighted_erm(Z, y, w, gamma=gamma, loss=loss, tol=tol, extra_ridge=cal.extra_ridge, linear=b,
                                backend=backend, objective=False)
    eps_s = eps * kappa
    noise = sample_smoothing_noise(d, epsilon=eps_s, error_radius=radius, rng=rng)
    # the grid: 2^-10 of the larger noise scale, the smoothing noise's or the linear term's in the answer's space
    # (||b|| / lambda, scale 2 W L / (lambda epsilon_linear)); a grid coarser than the smoothing noise's only
    # lowers the floating-point delta (docs/privacy_audit.md), and it stays far above double precision
    grid = max(_smoothing_grid(eps_s, radius),
               finite_release_grid(sensitivity=cal.gradient_sensitivity / cal.ridge, epsilon=cal.epsilon_linear))
    coef = round_release(result.x, noise, grid=grid) if np.all(np.isfinite(result.x + noise)) else result.x + noise
    coef = _finite(coef, "objective perturbation")
    return Release(coef=coef, minimiser=result.x, noise=noise, linear_term=b, epsilon=eps, epsilon_objective=eps_obj,
                   epsilon_smoothing=eps_s, Delta=cal.extra_ridge / n, epsilon_prime=cal.epsilon_linear,
                   rate=cal.rate, sensitivity=math.nan, error_radius=radius, n_iter=result.nit, grid=grid,
                   calibration=cal)
